//! Energy Performance Certificates (domestic, non-domestic and display), keyed by the register's
//! certificate key (`LMK_KEY`, or `CERTIFICATE_NUMBER` in the newer register), with a domestic
//! certificate's building elements (`epc_elements`) and every certificate's recommendations
//! (`epc_recommendations`), and the energy family's reads over an area.
//!
//! Invariants: one row per certificate; `fields_json` keeps the publisher's other columns, and
//! the fields the families read are typed columns; a certificate's `uprn` is the publisher's own
//! (no matching is done here); a recommendation is kept whether or not its certificate is loaded
//! (the files load in either order) and is read through its certificate.

use crate::db::{Db, StoreResult};
use crate::schema::{epc_certificates, epc_elements, epc_recommendations};
use crate::scope::AreaScope;
use crate::scope::placeholder;
use crate::{keyed_ops, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = epc_certificates)]
pub struct EpcRow {
    pub lmk_key: String,
    pub uprn: Option<i64>,
    pub address: Option<String>,
    pub postcode: Option<String>,
    pub current_rating: Option<String>,
    pub potential_rating: Option<String>,
    pub current_efficiency: Option<i32>,
    pub potential_efficiency: Option<i32>,
    pub property_type: Option<String>,
    pub built_form: Option<String>,
    pub total_floor_area: Option<f64>,
    pub habitable_rooms: Option<i32>,
    pub lodgement_date: Option<NaiveDate>,
    pub inspection_date: Option<NaiveDate>,
    pub tenure: Option<String>,
    pub main_fuel: Option<String>,
    pub local_authority: Option<String>,
    pub fields_json: String,
    pub source: String,
    pub updated_at: NaiveDateTime,
    /// `domestic`, `non_domestic` or `display`.
    pub kind: String,
    /// How the publisher matched the UPRN (`UPRN_SOURCE`: "Energy Assessor", "Address Matched").
    pub uprn_source: Option<String>,
    /// `SOLAR_WATER_HEATING_FLAG` as written (Y/N).
    pub solar_water_heating: Option<String>,
    pub construction_age_band: Option<String>,
    /// `FLOOR_LEVEL` of a flat as written.
    pub floor_level: Option<String>,
    /// `PHOTO_SUPPLY`: the share of roof area with photovoltaic panels, per cent.
    pub photo_supply: Option<f64>,
    /// A non-domestic certificate's asset rating, or a display certificate's operational rating
    /// (lower is better; not the domestic SAP scale).
    pub asset_rating: Option<i32>,
}

/// The building elements a domestic certificate describes, each with its energy efficiency word.
#[derive(Debug, Clone, PartialEq, Default, Queryable, Selectable, Insertable)]
#[diesel(table_name = epc_elements)]
pub struct EpcElementsRow {
    pub lmk_key: String,
    pub walls_description: Option<String>,
    pub walls_energy_eff: Option<String>,
    pub roof_description: Option<String>,
    pub roof_energy_eff: Option<String>,
    pub windows_description: Option<String>,
    pub windows_energy_eff: Option<String>,
    pub floor_description: Option<String>,
    pub floor_energy_eff: Option<String>,
    pub mainheat_description: Option<String>,
    pub mainheat_energy_eff: Option<String>,
    pub mainheatcont_description: Option<String>,
    pub mainheatc_energy_eff: Option<String>,
    pub hotwater_description: Option<String>,
    pub hot_water_energy_eff: Option<String>,
    pub lighting_description: Option<String>,
    pub lighting_energy_eff: Option<String>,
    pub secondheat_description: Option<String>,
    pub mechanical_ventilation: Option<String>,
    pub flat_top_storey: Option<String>,
    pub low_energy_lighting: Option<i32>,
    pub flat_storey_count: Option<i32>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// One recommendation of a certificate, as lodged.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = epc_recommendations)]
pub struct EpcRecommendationRow {
    /// `{lmk_key}/{item}`.
    pub rec_key: String,
    pub lmk_key: String,
    /// `IMPROVEMENT_ITEM` (domestic) or `RECOMMENDATION_ITEM` (non-domestic): the order.
    pub item: i32,
    /// `IMPROVEMENT_SUMMARY_TEXT`, or a non-domestic `RECOMMENDATION`.
    pub summary: Option<String>,
    pub description: Option<String>,
    /// `IMPROVEMENT_ID`, or a non-domestic `RECOMMENDATION_CODE`.
    pub improvement_id: Option<String>,
    pub improvement_id_text: Option<String>,
    /// `INDICATIVE_COST` as written ("£4,000 - £6,000"): the assessor's band, not a quote.
    pub indicative_cost: Option<String>,
    pub payback_type: Option<String>,
    pub co2_impact: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    EpcElementsRow,
    epc_elements,
    lmk_key,
    String,
    epc_elements_by_key,
    replace_epc_elements,
    delete_epc_elements
);
keyed_ops!(
    EpcRecommendationRow,
    epc_recommendations,
    rec_key,
    String,
    epc_recommendations_by_key,
    replace_epc_recommendations
);

/// The recommendations of these certificates, by certificate then item.
pub async fn recommendations_of(
    db: &Db,
    lmk_keys: &[String],
) -> StoreResult<Vec<EpcRecommendationRow>> {
    let mut out = Vec::new();
    for chunk in lmk_keys.chunks(crate::bulk::CHUNK) {
        let rows: Vec<EpcRecommendationRow> = with_conn!(db, |c| {
            epc_recommendations::table
                .filter(epc_recommendations::lmk_key.eq_any(chunk))
                .order((epc_recommendations::lmk_key, epc_recommendations::item))
                .select(EpcRecommendationRow::as_select())
                .load(c)
                .await?
        });
        out.extend(rows);
    }
    Ok(out)
}

/// Whether any certificate is loaded for a local authority (by the certificate's own
/// `LOCAL_AUTHORITY` code, or through an address of the authority).
pub async fn authority_has_certificates(db: &Db, lad: &str) -> StoreResult<bool> {
    let own: Option<String> = with_conn!(db, |c| {
        epc_certificates::table
            .filter(epc_certificates::local_authority.eq(lad))
            .select(epc_certificates::lmk_key)
            .first(c)
            .await
            .optional()?
    });
    if own.is_some() {
        return Ok(true);
    }
    let linked: Option<String> = with_conn!(db, |c| {
        epc_certificates::table
            .inner_join(
                crate::schema::addresses::table.on(crate::schema::addresses::uprn
                    .nullable()
                    .eq(epc_certificates::uprn)),
            )
            .filter(crate::schema::addresses::lad_code.eq(lad))
            .select(epc_certificates::lmk_key)
            .first(c)
            .await
            .optional()?
    });
    Ok(linked.is_some())
}

keyed_ops!(
    EpcRow,
    epc_certificates,
    lmk_key,
    String,
    epc_by_key,
    replace_epc,
    delete_epc
);
/// The domestic energy certificates of a UPRN, newest lodgement first.
pub async fn epc_for_uprn(db: &Db, uprn: i64) -> StoreResult<Vec<EpcRow>> {
    Ok(with_conn!(db, |c| {
        epc_certificates::table
            .filter(epc_certificates::uprn.eq(uprn))
            .filter(epc_certificates::kind.eq("domestic"))
            .order((
                epc_certificates::lodgement_date.desc(),
                epc_certificates::lmk_key.desc(),
            ))
            .select(EpcRow::as_select())
            .load(c)
            .await?
    }))
}

#[derive(Debug, Clone, PartialEq, QueryableByName)]
struct CountRow {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

/// The addresses of the scope.
pub async fn scope_address_count(db: &Db, scope: &AreaScope) -> StoreResult<i64> {
    let (cond, value) = scope.condition(placeholder(db));
    let sql = format!("SELECT CAST(COUNT(*) AS BIGINT) AS n FROM addresses a WHERE {cond}");
    let row: CountRow = with_conn!(db, |c| {
        diesel::sql_query(sql.as_str())
            .bind::<diesel::sql_types::Text, _>(value.as_str())
            .get_result(c)
            .await?
    });
    Ok(row.n)
}

/// The newest domestic certificate of an address, with the heating it records.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct NewestCertRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub lmk_key: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub uprn: i64,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    pub current_rating: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    pub potential_rating: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Integer>)]
    pub current_efficiency: Option<i32>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Integer>)]
    pub potential_efficiency: Option<i32>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    pub main_fuel: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Double>)]
    pub photo_supply: Option<f64>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    pub solar_water_heating: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    pub tenure: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Date>)]
    pub lodgement_date: Option<NaiveDate>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    pub mainheat_description: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub source: String,
    /// The address's local authority.
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    pub lad_code: Option<String>,
}

/// The newest domestic certificate of each address of the scope (the latest lodged; an undated
/// one last, the key breaking ties), as a subquery `t` with `rn = 1` marking the newest.
fn newest_sql(cond: &str) -> String {
    format!(
        "SELECT e.lmk_key, e.uprn, e.current_rating, e.potential_rating, e.current_efficiency, \
                e.potential_efficiency, e.main_fuel, e.photo_supply, e.solar_water_heating, \
                e.tenure, e.lodgement_date, el.mainheat_description, e.source, a.lad_code, \
                ROW_NUMBER() OVER (PARTITION BY e.uprn ORDER BY \
                    CASE WHEN e.lodgement_date IS NULL THEN 1 ELSE 0 END, \
                    e.lodgement_date DESC, e.lmk_key DESC) AS rn \
         FROM epc_certificates e \
         INNER JOIN addresses a ON a.uprn = e.uprn \
         LEFT JOIN epc_elements el ON el.lmk_key = e.lmk_key \
         WHERE e.kind = 'domestic' AND {cond}"
    )
}

const NEWEST_COLUMNS: &str = "lmk_key, uprn, current_rating, potential_rating, current_efficiency, \
     potential_efficiency, main_fuel, photo_supply, solar_water_heating, tenure, lodgement_date, \
     mainheat_description, source, lad_code";

/// The newest domestic certificate of every address of the scope that has one.
pub async fn scope_newest_certificates(
    db: &Db,
    scope: &AreaScope,
) -> StoreResult<Vec<NewestCertRow>> {
    let (cond, value) = scope.condition(placeholder(db));
    let sql = format!(
        "SELECT {NEWEST_COLUMNS} FROM ({}) t WHERE rn = 1 ORDER BY uprn",
        newest_sql(&cond)
    );
    Ok(with_conn!(db, |c| {
        diesel::sql_query(sql.as_str())
            .bind::<diesel::sql_types::Text, _>(value.as_str())
            .load(c)
            .await?
    }))
}

/// The filter and page of retrofit candidates.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrofitFilter {
    pub scope: AreaScope,
    /// Current bands kept (upper-case letters A-G).
    pub bands: Vec<char>,
    /// A condition on `main_fuel` (None: every fuel). A constant of the caller's closed list,
    /// never input text.
    pub fuel_condition: Option<&'static str>,
    /// The last (headroom, potential efficiency, UPRN) of the previous page.
    pub after: Option<(i32, i32, i64)>,
    pub limit: i64,
}

/// The newest domestic certificates of the scope in the filter's bands with both efficiencies,
/// ranked by headroom (potential minus current efficiency) descending, then potential efficiency
/// descending, then UPRN ascending, after the keyset.
pub async fn retrofit_candidates(db: &Db, f: &RetrofitFilter) -> StoreResult<Vec<NewestCertRow>> {
    let (cond, value) = f.scope.condition(placeholder(db));
    let bands: Vec<String> = f
        .bands
        .iter()
        .filter(|b| ('A'..='G').contains(b))
        .map(|b| format!("'{b}'"))
        .collect();
    let mut filters = vec![
        "rn = 1".to_string(),
        "current_efficiency IS NOT NULL".to_string(),
        "potential_efficiency IS NOT NULL".to_string(),
        format!(
            "UPPER(TRIM(current_rating)) IN ({})",
            if bands.is_empty() {
                "''".to_string()
            } else {
                bands.join(", ")
            }
        ),
    ];
    if let Some(cond) = f.fuel_condition {
        filters.push(format!("({cond})"));
    }
    if let Some((h, p, u)) = f.after {
        filters.push(format!(
            "((potential_efficiency - current_efficiency) < {h} \
              OR ((potential_efficiency - current_efficiency) = {h} AND potential_efficiency < {p}) \
              OR ((potential_efficiency - current_efficiency) = {h} AND potential_efficiency = {p} \
                  AND uprn > {u}))"
        ));
    }
    let sql = format!(
        "SELECT {NEWEST_COLUMNS} FROM ({}) t WHERE {} \
         ORDER BY (potential_efficiency - current_efficiency) DESC, potential_efficiency DESC, uprn \
         LIMIT {}",
        newest_sql(&cond),
        filters.join(" AND "),
        f.limit.max(0)
    );
    Ok(with_conn!(db, |c| {
        diesel::sql_query(sql.as_str())
            .bind::<diesel::sql_types::Text, _>(value.as_str())
            .load(c)
            .await?
    }))
}

/// Every certificate of a UPRN, of any kind (domestic, non-domestic, display), in key order (the
/// caller orders by lodgement: undated certificates sort differently on the two backends).
pub async fn certificates_for_uprn(db: &Db, uprn: i64) -> StoreResult<Vec<EpcRow>> {
    Ok(with_conn!(db, |c| {
        epc_certificates::table
            .filter(epc_certificates::uprn.eq(uprn))
            .order(epc_certificates::lmk_key)
            .select(EpcRow::as_select())
            .load(c)
            .await?
    }))
}

/// Whether any recommendation is loaded (so an empty list means none was lodged, not unknown).
pub async fn recommendations_loaded(db: &Db) -> StoreResult<bool> {
    let any: Option<String> = with_conn!(db, |c| {
        epc_recommendations::table
            .select(epc_recommendations::rec_key)
            .first(c)
            .await
            .optional()?
    });
    Ok(any.is_some())
}
