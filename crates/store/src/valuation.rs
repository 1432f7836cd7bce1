//! The valuation tables `cargo xtask build` derives: the latest vintage of valuations (one row
//! per UPRN considered, valued or refused), the vintages built, and the forward-measured
//! accuracy rows `cargo xtask backtest avm` (and each live vintage) writes.
//!
//! Invariant: a row of `valuations` with a `refusal` has no `value`, `lo` or `hi`; accuracy rows
//! are only written from valuations compared with prices paid later (never zero-filled).

use crate::db::{Db, StoreResult};
use crate::listings::ListingArea;
use crate::schema::{
    addresses, epc_certificates, valuation_accuracy, valuation_comparables, valuation_vintages,
    valuations,
};
use crate::{replace_rows, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = valuations)]
pub struct ValuationRow {
    pub uprn: i64,
    pub model_version: String,
    /// The vintage month, `YYYY-MM`.
    pub as_of: String,
    /// The postcode district whose index carries the sales (`EX1`).
    pub district: Option<String>,
    /// Price Paid code `D`, `S`, `T`, `F` or `O`.
    pub property_type: Option<String>,
    /// Price Paid code `F`, `L` or `U`.
    pub tenure: Option<String>,
    pub floor_area: Option<f64>,
    /// `epc_unit` when the unit's own certificate gives it.
    pub floor_area_source: Option<String>,
    pub value: Option<f64>,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// The nominal coverage of `lo`..`hi` (0.8).
    pub coverage: Option<f64>,
    pub evidence_class: Option<String>,
    pub weight_anchor: Option<f64>,
    pub weight_comparables: Option<f64>,
    pub weight_hedonic: Option<f64>,
    pub estimate_anchor: Option<f64>,
    pub estimate_comparables: Option<f64>,
    pub estimate_hedonic: Option<f64>,
    pub n_comparables: Option<i64>,
    pub n_comparables_fenced: Option<i64>,
    pub n_hedonic: Option<i64>,
    pub hedonic_pooled: Option<bool>,
    pub last_sale_price: Option<i64>,
    pub last_sale_date: Option<NaiveDate>,
    pub refusal: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = valuation_vintages)]
pub struct VintageRow {
    /// `model_version|as_of`.
    pub vintage_key: String,
    pub model_version: String,
    pub as_of: String,
    pub n_valued: i64,
    pub n_refused: i64,
    pub n_calibration: i64,
    pub calibration_coverage: Option<f64>,
    /// Weights per availability pattern, interval half-widths per evidence class, per-estimator
    /// mean squared errors.
    pub calibration_json: String,
    pub built_at: NaiveDateTime,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = valuation_accuracy)]
pub struct AccuracyRow {
    /// `basis|model_version|month|asset_class|property_type|estimator`.
    pub accuracy_key: String,
    /// `replayed_vintage` or `live_vintage`.
    pub basis: String,
    pub model_version: String,
    /// `YYYY-MM`: the month the valued properties sold.
    pub month: String,
    pub asset_class: String,
    pub property_type: String,
    /// `model`, `index_anchored_last_sale` or `district_median`.
    pub estimator: String,
    pub n: i64,
    pub mdape: f64,
    pub ppe10: f64,
    pub ppe20: f64,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// What the valuation build reads of an energy certificate.
/// One comparable of a UPRN's comparable ledger, as the vintage's build considered it.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = valuation_comparables)]
pub struct ComparableRow {
    /// The valued UPRN.
    pub uprn: i64,
    /// The comparable's place in the ledger (0 first: same building, newest first).
    pub line: i32,
    /// The comparable's UPRN when its sale is linked to one.
    pub comp_uprn: Option<i64>,
    /// `YYYY-MM`.
    pub sale_month: String,
    pub price: i64,
    /// Price Paid type code (`D`, `S`, `T`, `F`, `O`).
    pub property_type: String,
    pub floor_area: Option<f64>,
    /// `same_building`, `same_street` or `nearest_same_type`.
    pub tier: String,
    /// The index that carried it in time (`district:PO30`, `national:UK`).
    pub index_geography: String,
    pub time_factor: f64,
    pub size_factor: f64,
    pub adjusted: f64,
    /// False when the interquartile-range fence dropped it.
    pub kept: bool,
    /// The fence (adjusted pounds), when one was applied.
    pub fence_lo: Option<f64>,
    pub fence_hi: Option<f64>,
    pub source: String,
    pub updated_at: NaiveDateTime,
    /// Metres between the comparable and the valued property, when both positions are known.
    pub distance_m: Option<f64>,
}

/// A certificate's facts the valuation model reads.
#[derive(Debug, Clone, PartialEq)]
pub struct EpcAttrRow {
    pub lmk_key: String,
    pub uprn: Option<i64>,
    pub postcode: Option<String>,
    pub property_type: Option<String>,
    pub built_form: Option<String>,
    pub total_floor_area: Option<f64>,
    pub lodgement_date: Option<NaiveDate>,
    /// `CONSTRUCTION_AGE_BAND` as written (the typed column).
    pub construction_age_band: Option<String>,
}

type EpcAttrTuple = (
    String,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<f64>,
    Option<NaiveDate>,
    Option<String>,
);

/// A page of certificates with a UPRN in key order after `after`, for the build.
pub async fn epc_page(db: &Db, after: &str, limit: i64) -> StoreResult<Vec<EpcAttrRow>> {
    let rows: Vec<EpcAttrTuple> = with_conn!(db, |c| {
        epc_certificates::table
            .filter(epc_certificates::lmk_key.gt(after))
            .filter(epc_certificates::uprn.is_not_null())
            .filter(epc_certificates::kind.eq("domestic"))
            .order(epc_certificates::lmk_key)
            .limit(limit)
            .select((
                epc_certificates::lmk_key,
                epc_certificates::uprn,
                epc_certificates::postcode,
                epc_certificates::property_type,
                epc_certificates::built_form,
                epc_certificates::total_floor_area,
                epc_certificates::lodgement_date,
                epc_certificates::construction_age_band,
            ))
            .load(c)
            .await?
    });
    Ok(rows
        .into_iter()
        .map(|r| EpcAttrRow {
            lmk_key: r.0,
            uprn: r.1,
            postcode: r.2,
            property_type: r.3,
            built_form: r.4,
            total_floor_area: r.5,
            lodgement_date: r.6,
            construction_age_band: r.7,
        })
        .collect())
}

type LeaseTermTuple = (String, Option<i64>, Option<NaiveDate>, Option<NaiveDate>);

/// A page of registered leases with a UPRN and a parsed term end, in key order after
/// `after`: (unique id, UPRN, date of lease, term end).
pub async fn lease_terms_page(
    db: &Db,
    after: &str,
    limit: i64,
) -> StoreResult<Vec<(String, i64, Option<NaiveDate>, NaiveDate)>> {
    use crate::schema::leases;
    let rows: Vec<LeaseTermTuple> = with_conn!(db, |c| {
        leases::table
            .filter(leases::unique_id.gt(after))
            .filter(leases::uprn.is_not_null())
            .filter(leases::term_end.is_not_null())
            .order(leases::unique_id)
            .limit(limit)
            .select((
                leases::unique_id,
                leases::uprn,
                leases::date_of_lease,
                leases::term_end,
            ))
            .load(c)
            .await?
    });
    Ok(rows
        .into_iter()
        .filter_map(|(id, u, d, e)| Some((id, u?, d, e?)))
        .collect())
}

/// Replaces the held vintage with `rows` (in one transaction) and records the vintage.
pub async fn replace_vintage(
    db: &Db,
    rows: Vec<ValuationRow>,
    comparables: Vec<ComparableRow>,
    vintage: VintageRow,
) -> StoreResult<()> {
    replace_vintage_rows(db, rows).await?;
    replace_comparables(db, comparables).await?;
    let key = vec![vintage.vintage_key.clone()];
    replace_rows!(
        db,
        valuation_vintages::table,
        valuation_vintages::vintage_key,
        key,
        [vintage]
    );
    Ok(())
}

/// Replaces every row of `valuations` with `rows`, in one transaction.
pub async fn replace_vintage_rows(db: &Db, rows: Vec<ValuationRow>) -> StoreResult<()> {
    let mut keys: Vec<i64> = with_conn!(db, |c| {
        valuations::table
            .select(valuations::uprn)
            .load::<i64>(c)
            .await?
    });
    keys.extend(rows.iter().map(|r| r.uprn));
    keys.sort_unstable();
    keys.dedup();
    replace_rows!(db, valuations::table, valuations::uprn, keys, rows);
    Ok(())
}

pub async fn valuation(db: &Db, uprn: i64) -> StoreResult<Option<ValuationRow>> {
    Ok(with_conn!(db, |c| {
        valuations::table
            .find(uprn)
            .select(ValuationRow::as_select())
            .first(c)
            .await
            .optional()?
    }))
}

/// The valuations of many UPRNs (those held).
pub async fn valuations_of(db: &Db, uprns: &[i64]) -> StoreResult<Vec<ValuationRow>> {
    let mut out = Vec::new();
    for k in uprns.chunks(crate::bulk::CHUNK) {
        let page: Vec<ValuationRow> = with_conn!(db, |c| {
            valuations::table
                .filter(valuations::uprn.eq_any(k))
                .select(ValuationRow::as_select())
                .load(c)
                .await?
        });
        out.extend(page);
    }
    Ok(out)
}

/// The latest vintage built (by as_of, then build time).
pub async fn latest_vintage(db: &Db) -> StoreResult<Option<VintageRow>> {
    Ok(with_conn!(db, |c| {
        valuation_vintages::table
            .order((
                valuation_vintages::as_of.desc(),
                valuation_vintages::built_at.desc(),
            ))
            .select(VintageRow::as_select())
            .first(c)
            .await
            .optional()?
    }))
}

/// Replaces the accuracy rows of one basis and model version with `rows`.
pub async fn replace_accuracy(
    db: &Db,
    basis: &str,
    model_version: &str,
    rows: Vec<AccuracyRow>,
) -> StoreResult<usize> {
    let mut keys: Vec<String> = with_conn!(db, |c| {
        valuation_accuracy::table
            .filter(valuation_accuracy::basis.eq(basis))
            .filter(valuation_accuracy::model_version.eq(model_version))
            .select(valuation_accuracy::accuracy_key)
            .load::<String>(c)
            .await?
    });
    keys.extend(rows.iter().map(|r| r.accuracy_key.clone()));
    keys.sort();
    keys.dedup();
    let n = replace_rows!(
        db,
        valuation_accuracy::table,
        valuation_accuracy::accuracy_key,
        keys,
        rows
    );
    Ok(n)
}

/// Accuracy rows, optionally filtered, by month then asset class, type and estimator.
/// Writes `rows`, replacing only the rows with the same keys (live vintages accumulate).
pub async fn upsert_accuracy(db: &Db, rows: Vec<AccuracyRow>) -> StoreResult<usize> {
    let keys: Vec<String> = rows.iter().map(|r| r.accuracy_key.clone()).collect();
    let n = replace_rows!(
        db,
        valuation_accuracy::table,
        valuation_accuracy::accuracy_key,
        keys,
        rows
    );
    Ok(n)
}

pub async fn accuracy_rows(
    db: &Db,
    asset_class: Option<&str>,
    model_version: Option<&str>,
    since: Option<&str>,
) -> StoreResult<Vec<AccuracyRow>> {
    Ok(with_conn!(db, |c| {
        let mut q = valuation_accuracy::table.into_boxed();
        if let Some(a) = asset_class {
            q = q.filter(valuation_accuracy::asset_class.eq(a));
        }
        if let Some(m) = model_version {
            q = q.filter(valuation_accuracy::model_version.eq(m));
        }
        if let Some(s) = since {
            q = q.filter(valuation_accuracy::month.ge(s));
        }
        q.order((
            valuation_accuracy::month,
            valuation_accuracy::asset_class,
            valuation_accuracy::property_type,
            valuation_accuracy::model_version,
            valuation_accuracy::basis,
            valuation_accuracy::estimator,
        ))
        .select(AccuracyRow::as_select())
        .load(c)
        .await?
    }))
}

/// A page of the held valuations in UPRN order after `after`.
pub async fn valuations_page(db: &Db, after: i64, limit: i64) -> StoreResult<Vec<ValuationRow>> {
    Ok(with_conn!(db, |c| {
        valuations::table
            .filter(valuations::uprn.gt(after))
            .order(valuations::uprn)
            .limit(limit)
            .select(ValuationRow::as_select())
            .load(c)
            .await?
    }))
}

/// Replaces the whole comparable ledger with `rows` (the latest vintage's).
pub async fn replace_comparables(db: &Db, rows: Vec<ComparableRow>) -> StoreResult<()> {
    let mut keys: Vec<i64> = with_conn!(db, |c| {
        valuation_comparables::table
            .select(valuation_comparables::uprn)
            .distinct()
            .load::<i64>(c)
            .await?
    });
    keys.extend(rows.iter().map(|r| r.uprn));
    keys.sort_unstable();
    keys.dedup();
    replace_rows!(
        db,
        valuation_comparables::table,
        valuation_comparables::uprn,
        keys,
        rows
    );
    Ok(())
}

/// The comparable ledger of one UPRN, in ledger order.
pub async fn comparables_of(db: &Db, uprn: i64) -> StoreResult<Vec<ComparableRow>> {
    Ok(with_conn!(db, |c| {
        valuation_comparables::table
            .filter(valuation_comparables::uprn.eq(uprn))
            .order(valuation_comparables::line)
            .select(ComparableRow::as_select())
            .load(c)
            .await?
    }))
}

/// The valued rows (a value and a last sale completed on or before `sold_by`) of the UPRNs of
/// the register that lie in `area` (a postcode prefix or a local authority), by UPRN.
pub async fn valued_sales_in_area(
    db: &Db,
    area: &ListingArea,
    sold_by: NaiveDate,
) -> StoreResult<Vec<ValuationRow>> {
    let uprns: Vec<i64> = match area {
        ListingArea::National => with_conn!(db, |c| {
            addresses::table
                .select(addresses::uprn)
                .load::<i64>(c)
                .await?
        }),
        ListingArea::PostcodePrefix(p) => {
            let pattern = ListingArea::pattern(p);
            with_conn!(db, |c| {
                addresses::table
                    .filter(addresses::postcode.like(&pattern))
                    .select(addresses::uprn)
                    .load::<i64>(c)
                    .await?
            })
        }
        ListingArea::LocalAuthority(code) => with_conn!(db, |c| {
            addresses::table
                .filter(addresses::lad_code.eq(code))
                .select(addresses::uprn)
                .load::<i64>(c)
                .await?
        }),
    };
    let mut out = Vec::new();
    for k in uprns.chunks(crate::bulk::CHUNK) {
        let page: Vec<ValuationRow> = with_conn!(db, |c| {
            valuations::table
                .filter(valuations::uprn.eq_any(k))
                .filter(valuations::value.is_not_null())
                .filter(valuations::last_sale_date.le(sold_by))
                .select(ValuationRow::as_select())
                .load(c)
                .await?
        });
        out.extend(page);
    }
    out.sort_by_key(|r| r.uprn);
    Ok(out)
}
