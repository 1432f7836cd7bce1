//! The property record (specification part 2.3) and the summary.
//!
//! The record is grouped into tiers; a field the loaded data cannot support is omitted (never
//! zero), and every field present has `<field>_source` and `<field>_confidence` in the
//! provenance tier. Confidence is a stated rule per source (docs/DATA.md), times the match score
//! where a row was tied to the UPRN by the address matcher.

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value, json};
use terrace_core::Uprn;
use terrace_store::Db;
use terrace_store::{
    address::{self, AddressRow},
    council_tax, epc, leases, sales,
};

use crate::PropertyError;
use terrace_layers::{Check, LayerCache, RiskReport};

/// The tiers of the record, in order.
pub const TIERS: [&str; 10] = [
    "identity",
    "property",
    "energy",
    "building",
    "land",
    "risk",
    "designations",
    "infrastructure",
    "ownership",
    "provenance",
];

/// Confidence by source, before any match score: the dataset table's (docs/DATA.md); a flag
/// that was never checked carries none.
fn base_confidence(source: &str) -> f64 {
    if source.trim_start_matches("fixture:") == NOT_LOADED {
        return 0.0;
    }
    terrace_core::sources::confidence_of(source)
        .unwrap_or(terrace_core::sources::DEFAULT_CONFIDENCE)
}

#[derive(Default)]
struct Builder {
    tiers: Map<String, Value>,
    provenance: Map<String, Value>,
}

impl Builder {
    fn put(
        &mut self,
        tier: &str,
        field: &str,
        value: Option<Value>,
        source: &str,
        match_score: Option<f64>,
    ) {
        let Some(value) = value.filter(|v| !v.is_null()) else {
            return;
        };
        let t = self
            .tiers
            .entry(tier.to_string())
            .or_insert_with(|| json!({}));
        if let Some(obj) = t.as_object_mut() {
            obj.insert(field.to_string(), value);
        }
        let confidence =
            (base_confidence(source) * match_score.unwrap_or(1.0) * 1000.0).round() / 1000.0;
        self.provenance
            .insert(format!("{field}_source"), json!(source));
        self.provenance
            .insert(format!("{field}_confidence"), json!(confidence));
    }
}

/// The full record: tiers as objects of present fields, and the provenance tier.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PropertyRecord {
    pub uprn: i64,
    pub country: &'static str,
    /// Tiers with at least one field: identity, property, energy, building, land, risk,
    /// designations, infrastructure, ownership; null fields are omitted, as are empty tiers.
    #[serde(flatten)]
    pub tiers: Map<String, Value>,
    /// `<field>_source` and `<field>_confidence` (0 to 1) for every field present.
    pub provenance: Map<String, Value>,
    /// Tiers with no loaded data yet (e.g. risk before the risk datasets are loaded).
    pub tiers_without_data: Vec<&'static str>,
}

fn s(v: &Option<String>) -> Option<Value> {
    v.as_ref().map(|x| json!(x))
}

async fn address_or_404(db: &Db, uprn: Uprn) -> Result<AddressRow, PropertyError> {
    address::address(db, uprn.get())
        .await?
        .ok_or_else(|| PropertyError::NotFound(format!("UPRN {uprn}")))
}

/// The provenance of a flag no loaded dataset could answer.
const NOT_LOADED: &str = "not_loaded";

/// The provenance of a spatial answer: the sources of the matches, else of the datasets
/// consulted, `+`-joined; `not_loaded` when none.
fn check_source(c: &Check) -> String {
    let mut s: Vec<&str> = c.matches.iter().map(|m| m.source.as_str()).collect();
    if s.is_empty() {
        s = c.sources.iter().map(|r| r.source.as_str()).collect();
    }
    s.sort_unstable();
    s.dedup();
    if s.is_empty() {
        NOT_LOADED.to_string()
    } else {
        s.join("+")
    }
}

/// The record's risk, designations and infrastructure tiers, from the risk report.
/// The certificate's publisher columns the energy tier reads as numbers or text, as
/// (record field, column in `fields_json`): the running costs, consumption, emissions, the
/// dwelling's glazing, rooms and lighting, each element's environmental efficiency, and the
/// certificate's own address and references. The element and solar fields are typed columns
/// (below).
const CERTIFICATE_COLUMNS: [(&str, &str); 45] = [
    (
        "energy_consumption_current_kwh_m2",
        "energy-consumption-current",
    ),
    (
        "energy_consumption_potential_kwh_m2",
        "energy-consumption-potential",
    ),
    ("environment_impact_current", "environment-impact-current"),
    (
        "environment_impact_potential",
        "environment-impact-potential",
    ),
    ("co2_emissions_current_tonnes", "co2-emissions-current"),
    ("co2_emissions_potential_tonnes", "co2-emissions-potential"),
    (
        "co2_emissions_current_kg_m2",
        "co2-emiss-curr-per-floor-area",
    ),
    ("lighting_cost_current", "lighting-cost-current"),
    ("lighting_cost_potential", "lighting-cost-potential"),
    ("heating_cost_current", "heating-cost-current"),
    ("heating_cost_potential", "heating-cost-potential"),
    ("hot_water_cost_current", "hot-water-cost-current"),
    ("hot_water_cost_potential", "hot-water-cost-potential"),
    ("energy_tariff", "energy-tariff"),
    ("mains_gas_flag", "mains-gas-flag"),
    ("multi_glaze_proportion_pct", "multi-glaze-proportion"),
    ("glazed_type", "glazed-type"),
    ("glazed_area", "glazed-area"),
    ("extension_count", "extension-count"),
    ("number_heated_rooms", "number-heated-rooms"),
    ("number_open_fireplaces", "number-open-fireplaces"),
    ("wind_turbine_count", "wind-turbine-count"),
    ("floor_height_m", "floor-height"),
    ("epc_transaction_type", "transaction-type"),
    ("walls_environmental_efficiency", "walls-env-eff"),
    ("roof_environmental_efficiency", "roof-env-eff"),
    ("windows_environmental_efficiency", "windows-env-eff"),
    ("floor_environmental_efficiency", "floor-env-eff"),
    ("main_heating_environmental_efficiency", "mainheat-env-eff"),
    (
        "main_heating_controls_environmental_efficiency",
        "mainheatc-env-eff",
    ),
    ("hot_water_environmental_efficiency", "hot-water-env-eff"),
    ("lighting_environmental_efficiency", "lighting-env-eff"),
    ("secondary_heating_energy_efficiency", "sheating-energy-eff"),
    (
        "secondary_heating_environmental_efficiency",
        "sheating-env-eff",
    ),
    ("main_heating_controls_code", "main-heating-controls"),
    ("heat_loss_corridor", "heat-loss-corridor"),
    ("unheated_corridor_length_m", "unheated-corridor-length"),
    (
        "fixed_lighting_outlets_count",
        "fixed-lighting-outlets-count",
    ),
    (
        "low_energy_fixed_light_count",
        "low-energy-fixed-light-count",
    ),
    ("epc_building_reference_number", "building-reference-number"),
    ("epc_lodgement_datetime", "lodgement-datetime"),
    ("epc_address", "address"),
    ("epc_posttown", "posttown"),
    ("epc_local_authority_label", "local-authority-label"),
    ("epc_constituency_label", "constituency-label"),
];

/// The energy tier's detail from the newest certificate: its typed columns, its building
/// elements, its publisher columns, and its recommendations (count and indicative costs as
/// lodged). Placeholders (`NO DATA!`, `N/A`) are left out, never shown as values.
async fn put_certificate_detail(
    b: &mut Builder,
    db: &Db,
    c: &epc::EpcRow,
) -> Result<(), PropertyError> {
    let src = c.source.as_str();
    let s = |v: &Option<String>| v.as_ref().map(|x| json!(x));
    b.put(
        "energy",
        "epc_certificate_key",
        Some(json!(c.lmk_key)),
        src,
        None,
    );
    b.put(
        "energy",
        "epc_inspection_date",
        c.inspection_date.map(|d| json!(d)),
        src,
        None,
    );
    b.put("energy", "epc_tenure", s(&c.tenure), src, None);
    b.put("energy", "epc_uprn_source", s(&c.uprn_source), src, None);
    b.put(
        "energy",
        "photo_supply_pct",
        c.photo_supply.map(|v| json!(v)),
        src,
        None,
    );
    b.put(
        "energy",
        "solar_water_heating",
        s(&c.solar_water_heating),
        src,
        None,
    );
    b.put(
        "energy",
        "construction_age_band",
        s(&c.construction_age_band),
        src,
        None,
    );
    b.put("energy", "floor_level", s(&c.floor_level), src, None);
    let fields: Map<String, Value> = serde_json::from_str(&c.fields_json).unwrap_or_default();
    for (name, column) in CERTIFICATE_COLUMNS {
        let v = fields
            .get(column)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !is_placeholder(v))
            .map(|v| v.parse::<f64>().map_or_else(|_| json!(v), |n| json!(n)));
        b.put("energy", name, v, src, None);
    }
    if let Some(e) = epc::epc_elements_by_key(db, std::slice::from_ref(&c.lmk_key))
        .await?
        .into_iter()
        .next()
    {
        let src = e.source.as_str();
        for (name, v) in [
            ("walls_description", &e.walls_description),
            ("walls_energy_efficiency", &e.walls_energy_eff),
            ("roof_description", &e.roof_description),
            ("roof_energy_efficiency", &e.roof_energy_eff),
            ("windows_description", &e.windows_description),
            ("windows_energy_efficiency", &e.windows_energy_eff),
            ("floor_description", &e.floor_description),
            ("floor_energy_efficiency", &e.floor_energy_eff),
            ("main_heating_description", &e.mainheat_description),
            ("main_heating_energy_efficiency", &e.mainheat_energy_eff),
            ("main_heating_controls", &e.mainheatcont_description),
            (
                "main_heating_controls_energy_efficiency",
                &e.mainheatc_energy_eff,
            ),
            ("hot_water_description", &e.hotwater_description),
            ("hot_water_energy_efficiency", &e.hot_water_energy_eff),
            ("lighting_description", &e.lighting_description),
            ("lighting_energy_efficiency", &e.lighting_energy_eff),
            ("secondary_heating", &e.secondheat_description),
            ("mechanical_ventilation", &e.mechanical_ventilation),
            ("flat_top_storey", &e.flat_top_storey),
        ] {
            b.put(
                "energy",
                name,
                s(v).filter(|_| v.as_deref().is_some_and(|t| !is_placeholder(t))),
                src,
                None,
            );
        }
        b.put(
            "energy",
            "low_energy_lighting_pct",
            e.low_energy_lighting.map(|v| json!(v)),
            src,
            None,
        );
        b.put(
            "energy",
            "flat_storey_count",
            e.flat_storey_count.map(|v| json!(v)),
            src,
            None,
        );
    }
    let recs = epc::recommendations_of(db, std::slice::from_ref(&c.lmk_key)).await?;
    if let Some(first) = recs.first() {
        let src = first.source.clone();
        b.put(
            "energy",
            "epc_recommendations_count",
            Some(json!(recs.len())),
            &src,
            None,
        );
        let measures: Vec<Value> = recs
            .iter()
            .map(|r| json!({"item": r.item, "summary": r.summary, "indicative_cost": r.indicative_cost}))
            .collect();
        b.put(
            "energy",
            "epc_recommended_measures",
            Some(Value::Array(measures)),
            &src,
            None,
        );
    }
    Ok(())
}

/// The statistical geographies of the address's postcode, as the postcode directory gives them
/// (the authority and LSOA above are the address point's own).
async fn put_geographies(b: &mut Builder, db: &Db, postcode: &str) -> Result<(), PropertyError> {
    let Some(pc) = address::postcode(db, postcode).await? else {
        return Ok(());
    };
    // The row's source lists every file that wrote it (`ons_postcode_directory+os_codepoint_open`):
    // these codes are the directory's when it is one of them.
    let directory = terrace_core::sources::ONS_POSTCODE_DIRECTORY.id;
    let src = match (
        pc.source.contains(directory),
        pc.source.starts_with("fixture:"),
    ) {
        (true, true) => format!("fixture:{directory}"),
        (true, false) => directory.to_string(),
        (false, _) => pc.source.clone(),
    };
    let src = src.as_str();
    for (name, v) in [
        ("ward", &pc.ward_code),
        ("msoa", &pc.msoa_code),
        ("county", &pc.county_code),
        ("region", &pc.region_code),
        ("country_code", &pc.country_code),
    ] {
        b.put("identity", name, s(v), src, None);
    }
    b.put(
        "identity",
        "postcode_position_quality",
        pc.quality.map(|q| json!(q)),
        src,
        None,
    );
    Ok(())
}

/// The land tier: the parcel holding the address point (INSPIRE index polygon) and the land
/// build's figures for it; the link's share (a point on a shared boundary) scales confidence.
async fn put_parcel(b: &mut Builder, db: &Db, uprn: i64) -> Result<(), PropertyError> {
    let Some(link) = terrace_store::land::parcel_addresses_by_uprn(db, &[uprn])
        .await?
        .into_iter()
        .min_by(|x, y| {
            // The largest share; on a shared boundary, the lowest INSPIRE id (any backend alike).
            y.score
                .total_cmp(&x.score)
                .then(x.inspire_id.cmp(&y.inspire_id))
        })
    else {
        return Ok(());
    };
    let Some(hit) = terrace_store::features::parcels_by_ids(db, &[link.inspire_id])
        .await?
        .into_iter()
        .next()
    else {
        return Ok(());
    };
    let p = hit.stats;
    let (src, score) = (p.source.as_str(), Some(link.score));
    let fields = [
        ("parcel_inspire_id", Some(json!(p.inspire_id))),
        ("parcel_area_m2", Some(json!(p.area_m2))),
        ("parcel_buildings", Some(json!(p.n_buildings))),
        ("parcel_footprint_m2", p.footprint_m2.map(|v| json!(v))),
        ("parcel_built_coverage", p.built_coverage.map(|v| json!(v))),
        (
            "parcel_residential_addresses",
            Some(json!(p.address_count_residential)),
        ),
        (
            "parcel_commercial_addresses",
            Some(json!(p.address_count_commercial)),
        ),
        ("parcel_land_use", s(&p.landuse_tier_a)),
        ("parcel_land_use_detail", s(&p.landuse_tier_b)),
        ("parcel_nlud_code", s(&p.nlud_code)),
    ];
    for (name, v) in fields {
        b.put("land", name, v, src, score);
    }
    Ok(())
}

/// The ownership tier's registered title: the newest-added company-owned title linked to the
/// UPRN, its price paid and date as registered, and its first proprietor (a company).
async fn put_title(b: &mut Builder, db: &Db, uprn: i64) -> Result<(), PropertyError> {
    let titles = terrace_ownership::titles::titles_for_uprns(db, &[uprn]).await?;
    let Some(t) = titles.iter().max_by_key(|t| t.date_proprietor_added) else {
        return Ok(());
    };
    let src = t.source.as_str();
    let score = t
        .uprns
        .iter()
        .find(|l| l.uprn == uprn)
        .and_then(|l| l.score);
    let first = t.proprietors.first();
    let company = first.and_then(|p| p.company.as_ref());
    let fields = [
        ("titles_linked", Some(json!(titles.len()))),
        ("title_number", Some(json!(t.title_number))),
        ("title_tenure", s(&t.tenure)),
        ("title_price_paid", t.price_paid.map(|v| json!(v))),
        (
            "title_date_proprietor_added",
            t.date_proprietor_added.map(|d| json!(d)),
        ),
        (
            "registered_proprietor",
            first.map(|p| json!(p.proprietor.name)),
        ),
        (
            "proprietor_company_number",
            first.and_then(|p| p.proprietor.company_number.as_ref().map(|n| json!(n))),
        ),
        (
            "proprietor_category",
            first.and_then(|p| p.proprietor.category.as_ref().map(|n| json!(n))),
        ),
    ];
    for (name, v) in fields {
        b.put("ownership", name, v, src, score);
    }
    if let Some(c) = company {
        b.put(
            "ownership",
            "proprietor_company_status",
            s(&c.status),
            &c.source,
            score,
        );
    }
    Ok(())
}

/// A physical fact, when the data holds it (a `not_available` fact is omitted, as every null).
fn put_fact<T: Serialize>(b: &mut Builder, field: &str, f: &terrace_core::Fact<T>) {
    if let (Some(v), Some(src)) = (&f.value, &f.source) {
        b.put("building", field, serde_json::to_value(v).ok(), src, None);
    }
}

/// The building tier from the physical facts of the property's building.
fn put_physical(b: &mut Builder, p: &terrace_land::physical::PhysicalFacts) {
    if let (Some(id), Some(src)) = (&p.building_id, &p.footprint_area_m2.source) {
        b.put("building", "footprint_id", Some(json!(id)), src, None);
    }
    put_fact(b, "footprint_area_m2", &p.footprint_area_m2);
    put_fact(b, "height_m", &p.height_m);
    put_fact(b, "height_survey_year", &p.height_survey_year);
    put_fact(b, "volume_m3", &p.volume_m3);
    put_fact(b, "floors", &p.floors);
    put_fact(b, "roof_shape", &p.roof_shape);
    put_fact(b, "roof_material", &p.roof_material);
    put_fact(b, "solar_panels_present", &p.solar_panels_present);
    put_fact(b, "basement", &p.basement);
    put_fact(b, "green_roof", &p.green_roof);
    put_fact(b, "construction_material", &p.construction_material);
    let m = &p.unit_mix;
    put_fact(b, "hmo_licensed", &m.hmo_licensed);
    put_fact(b, "hmo_max_occupants", &m.hmo_max_occupants);
    put_fact(b, "hmo_households", &m.hmo_households);
    put_fact(b, "hmo_storeys", &m.hmo_storeys);
    let src = terrace_land::physical::UNIT_MIX_SOURCE;
    if m.units > 0 {
        for (field, v) in [
            ("unit_mix_units", m.units),
            ("unit_mix_residential", m.residential.units),
            ("unit_mix_commercial", m.commercial.units),
            ("unit_mix_other", m.other),
            ("unit_mix_residential_by_class", m.residential.address_class),
            (
                "unit_mix_residential_on_council_tax_list",
                m.residential.council_tax_list,
            ),
            ("unit_mix_commercial_by_class", m.commercial.address_class),
            (
                "unit_mix_commercial_on_rating_list",
                m.commercial.rating_list,
            ),
        ] {
            b.put("building", field, Some(json!(v)), src, None);
        }
    }
}

/// A publisher's "no value" placeholder.
fn is_placeholder(v: &str) -> bool {
    [
        "", "NO DATA!", "NODATA!", "NO DATA", "INVALID!", "N/A", "NULL", "NAN",
    ]
    .iter()
    .any(|m| m.eq_ignore_ascii_case(v.trim()))
}

fn put_risk(b: &mut Builder, r: &RiskReport) {
    let flag = |c: &Check| serde_json::to_value(c.value).ok();
    for (name, c) in &r.flood.flags {
        b.put("risk", name, flag(c), &check_source(c), None);
    }
    let zone_src = ["in_flood_zone_3", "in_flood_zone_2"]
        .iter()
        .filter_map(|k| r.flood.flags.get(*k))
        .map(check_source)
        .max_by_key(|s| s != NOT_LOADED)
        .unwrap_or_else(|| NOT_LOADED.to_string());
    b.put(
        "risk",
        "flood_zone",
        Some(json!(r.flood.zone)),
        &zone_src,
        None,
    );
    if let Some(c) = r.flood.flags.get("rivers_and_sea_risk_area") {
        let band = r.flood.rivers_and_sea_band.as_ref().map(|v| json!(v));
        b.put("risk", "rivers_and_sea_band", band, &check_source(c), None);
    }
    if let Some(c) = r.flood.flags.get("surface_water_risk_area") {
        let band = r.flood.surface_water_band.as_ref().map(|v| json!(v));
        b.put("risk", "surface_water_band", band, &check_source(c), None);
    }
    for (name, c) in &r.coal {
        b.put(
            "risk",
            &format!("coal_{name}"),
            flag(c),
            &check_source(c),
            None,
        );
    }
    for g in [&r.heritage, &r.environmental_designations, &r.planning] {
        for (name, c) in g {
            b.put("designations", name, flag(c), &check_source(c), None);
        }
    }
    for (prefix, n, value_name) in [
        (
            "nearest_substation",
            &r.infrastructure.substation,
            "headroom_mva",
        ),
        (
            "nearest_renewable_project",
            &r.infrastructure.renewable_project,
            "capacity_mw",
        ),
    ] {
        let src = n
            .sources
            .first()
            .map_or(NOT_LOADED.to_string(), |s| s.source.clone());
        b.put(
            "infrastructure",
            &format!("{prefix}_status"),
            Some(json!(n.status)),
            &src,
            None,
        );
        if n.status != "ok" {
            continue;
        }
        b.put(
            "infrastructure",
            &format!("{prefix}_name"),
            s(&n.name),
            &src,
            None,
        );
        b.put(
            "infrastructure",
            &format!("{prefix}_distance_m"),
            n.distance_m.map(|v| json!(v)),
            &src,
            None,
        );
        b.put(
            "infrastructure",
            &format!("{prefix}_{value_name}"),
            n.value.map(|v| json!(v)),
            &src,
            None,
        );
        b.put(
            "infrastructure",
            &format!("{prefix}_category"),
            s(&n.category),
            &src,
            None,
        );
        b.put(
            "infrastructure",
            &format!("{prefix}_development_status"),
            s(&n.status_detail),
            &src,
            None,
        );
    }
}

/// The property record of a UPRN, assembled from every loaded source.
pub async fn record(
    db: &Db,
    layers: &LayerCache,
    uprn: Uprn,
    today: NaiveDate,
) -> Result<PropertyRecord, PropertyError> {
    let a = address_or_404(db, uprn).await?;
    let mut b = Builder::default();
    let asrc = a.address_source.clone().unwrap_or_else(|| "unknown".into());
    let psrc = a
        .position_source
        .clone()
        .unwrap_or_else(|| "unknown".into());
    let line = address_line(&a);
    b.put("identity", "uprn", Some(json!(a.uprn)), &asrc, None);
    b.put(
        "identity",
        "parent_uprn",
        a.parent_uprn.map(|p| json!(p)),
        &asrc,
        None,
    );
    b.put("identity", "address", line.map(|l| json!(l)), &asrc, None);
    b.put("identity", "postcode", s(&a.postcode), &asrc, None);
    b.put("identity", "classification", s(&a.class), &asrc, None);
    b.put("identity", "latitude", a.lat.map(|v| json!(v)), &psrc, None);
    b.put(
        "identity",
        "longitude",
        a.lon.map(|v| json!(v)),
        &psrc,
        None,
    );
    b.put("identity", "easting", a.x.map(|v| json!(v)), &psrc, None);
    b.put("identity", "northing", a.y.map(|v| json!(v)), &psrc, None);
    let area_src = "derived:ons_boundaries_or_postcode_directory";
    b.put(
        "identity",
        "local_authority",
        s(&a.lad_code),
        area_src,
        None,
    );
    b.put("identity", "lsoa", s(&a.lsoa_code), area_src, None);
    if let Some(pc) = a.postcode.as_deref() {
        put_geographies(&mut b, db, pc).await?;
    }

    // Energy and physical attributes from the newest certificate.
    let certs = epc::epc_for_uprn(db, uprn.get()).await?;
    if let Some(c) = certs.first() {
        let src = c.source.as_str();
        b.put(
            "energy",
            "current_energy_rating",
            s(&c.current_rating),
            src,
            None,
        );
        b.put(
            "energy",
            "current_energy_efficiency",
            c.current_efficiency.map(|v| json!(v)),
            src,
            None,
        );
        b.put(
            "energy",
            "potential_energy_rating",
            s(&c.potential_rating),
            src,
            None,
        );
        b.put(
            "energy",
            "potential_energy_efficiency",
            c.potential_efficiency.map(|v| json!(v)),
            src,
            None,
        );
        b.put("energy", "main_fuel", s(&c.main_fuel), src, None);
        b.put(
            "energy",
            "epc_lodgement_date",
            c.lodgement_date.map(|d| json!(d)),
            src,
            None,
        );
        b.put(
            "energy",
            "epc_certificates_held",
            Some(json!(certs.len())),
            src,
            None,
        );
        put_certificate_detail(&mut b, db, c).await?;
        b.put("property", "property_type", s(&c.property_type), src, None);
        b.put("property", "built_form", s(&c.built_form), src, None);
        b.put(
            "property",
            "floor_area_m2",
            c.total_floor_area.map(|v| json!(v)),
            src,
            None,
        );
        b.put(
            "property",
            "habitable_rooms",
            c.habitable_rooms.map(|v| json!(v)),
            src,
            None,
        );
    }

    // Sales.
    let sales = sales::sales_for_uprn(db, uprn.get(), 500).await?;
    if let Some(last) = sales.first() {
        let src = last.source.as_str();
        let score = last.match_score;
        b.put(
            "property",
            "last_sale_price",
            Some(json!(last.price)),
            src,
            score,
        );
        b.put(
            "property",
            "last_sale_date",
            Some(json!(last.date)),
            src,
            score,
        );
        b.put(
            "property",
            "tenure",
            Some(json!(match last.tenure.as_str() {
                "F" => "freehold",
                "L" => "leasehold",
                _ => "unknown",
            })),
            src,
            score,
        );
        b.put(
            "property",
            "registered_sales",
            Some(json!(sales.len())),
            src,
            score,
        );
        if let Some(first) = sales.iter().find(|s| s.new_build) {
            b.put(
                "property",
                "new_build_sale_date",
                Some(json!(first.date)),
                src,
                first.match_score,
            );
        }
    }

    // Council tax.
    if let Some(ct) = council_tax::council_tax_for_uprn(db, uprn.get())
        .await?
        .into_iter()
        .next()
    {
        b.put(
            "property",
            "council_tax_band",
            Some(json!(ct.band)),
            &ct.source,
            ct.match_score,
        );
    }

    // Building: the parent and its units.
    let building_uprn = a.parent_uprn.unwrap_or(a.uprn);
    let units = address::children_of(db, building_uprn).await?;
    if !units.is_empty() {
        b.put(
            "building",
            "building_uprn",
            Some(json!(building_uprn)),
            &asrc,
            None,
        );
        b.put(
            "building",
            "units_in_building",
            Some(json!(units.len())),
            &asrc,
            None,
        );
    }

    // Building: what the land family's physical facts hold (footprint, LIDAR or OSM height,
    // floors, roof, solar, the unit mix and the HMO register), each with its own source.
    if let Some(p) = terrace_land::physical::building_facts(db, uprn.get()).await? {
        put_physical(&mut b, &p);
    }

    // Land: the cadastral parcel the address point lies in, and what the land build measured.
    put_parcel(&mut b, db, uprn.get()).await?;

    // Ownership: a company-owned title linked to the UPRN (individuals are never named: the
    // open registers list companies only).
    put_title(&mut b, db, uprn.get()).await?;

    // Ownership: the registered lease.
    if let Some(l) = leases::leases_for_uprn(db, uprn.get())
        .await?
        .into_iter()
        .next()
    {
        let src = l.source.as_str();
        b.put("ownership", "lease_term", s(&l.term_text), src, None);
        b.put(
            "ownership",
            "lease_term_end",
            l.term_end.map(|d| json!(d)),
            src,
            None,
        );
        if let Some(end) = l.term_end {
            let years = terrace_ownership::years_between(today, end);
            b.put(
                "ownership",
                "lease_unexpired_years",
                Some(json!(years)),
                src,
                None,
            );
        }
        b.put(
            "ownership",
            "lease_date",
            l.date_of_lease.map(|d| json!(d)),
            src,
            None,
        );
    }

    // Risk, designations and infrastructure: the risk report's own functions.
    let risk = terrace_layers::report_from(&*layers.current(db).await?, &a);
    put_risk(&mut b, &risk);

    let tiers_without_data: Vec<&'static str> = TIERS
        .iter()
        .copied()
        .filter(|t| *t != "provenance" && !b.tiers.contains_key(*t))
        .collect();
    Ok(PropertyRecord {
        uprn: uprn.get(),
        country: "UK",
        tiers: b.tiers,
        provenance: b.provenance,
        tiers_without_data,
    })
}

/// The one-line address, exactly as the address endpoints write it.
pub(crate) fn address_line(a: &AddressRow) -> Option<String> {
    if a.saon.is_none() && a.paon.is_none() && a.street.is_none() {
        return None;
    }
    let entry = terrace_matcher::AddressEntry {
        uprn: a.uprn,
        parent_uprn: a.parent_uprn,
        saon: a.saon.clone(),
        paon: a.paon.clone(),
        street: a.street.clone(),
        locality: a.locality.clone(),
        town: a.town.clone(),
        postcode: a.postcode.clone(),
    };
    Some(entry.single_line())
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct UnitRef {
    pub uprn: i64,
    pub address: Option<String>,
    pub classification: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Summary {
    pub uprn: i64,
    pub country: &'static str,
    pub address: Option<String>,
    /// What the property is, in words, from its classification (e.g. "flat", "terraced house").
    pub kind: Option<&'static str>,
    pub classification: Option<String>,
    /// The building this unit belongs to, when it is a unit of one.
    pub parent_uprn: Option<i64>,
    /// The units of the building (this property's siblings, or its own units when it is the
    /// building), at most 200.
    pub building_units: Vec<UnitRef>,
    /// Headline attributes: a subset of the record with their provenance.
    pub headline: Map<String, Value>,
    pub headline_provenance: Map<String, Value>,
}

fn kind_of(class: Option<&str>) -> Option<&'static str> {
    let c = class?;
    Some(match c {
        "RD02" => "detached house",
        "RD03" => "semi-detached house",
        "RD04" => "terraced house",
        "RD06" => "flat",
        "PP" => "building of separate units",
        _ if c.starts_with("RD") => "residential dwelling",
        _ if c.starts_with("CR") => "retail unit",
        _ if c.starts_with("CO") => "office",
        _ if c.starts_with('C') => "commercial unit",
        _ => "other",
    })
}

/// What the property is, what building it belongs to, and its headline attributes.
pub async fn summary(
    db: &Db,
    layers: &LayerCache,
    uprn: Uprn,
    today: NaiveDate,
) -> Result<Summary, PropertyError> {
    let rec = record(db, layers, uprn, today).await?;
    let a = address_or_404(db, uprn).await?;
    let building = a.parent_uprn.unwrap_or(a.uprn);
    let units = address::children_of(db, building).await?;
    let building_units = units
        .iter()
        .take(200)
        .map(|u| UnitRef {
            uprn: u.uprn,
            address: address_line(u),
            classification: u.class.clone(),
        })
        .collect();
    const HEADLINE: [(&str, &str); 8] = [
        ("property", "property_type"),
        ("property", "floor_area_m2"),
        ("property", "habitable_rooms"),
        ("property", "tenure"),
        ("property", "last_sale_price"),
        ("property", "last_sale_date"),
        ("property", "council_tax_band"),
        ("energy", "current_energy_rating"),
    ];
    let mut headline = Map::new();
    let mut headline_provenance = Map::new();
    for (tier, field) in HEADLINE {
        if let Some(v) = rec.tiers.get(tier).and_then(|t| t.get(field)) {
            headline.insert(field.to_string(), v.clone());
            for suffix in ["_source", "_confidence"] {
                let k = format!("{field}{suffix}");
                if let Some(p) = rec.provenance.get(&k) {
                    headline_provenance.insert(k, p.clone());
                }
            }
        }
    }
    Ok(Summary {
        uprn: uprn.get(),
        country: "UK",
        address: address_line(&a),
        kind: kind_of(a.class.as_deref()),
        classification: a.class.clone(),
        parent_uprn: a.parent_uprn,
        building_units,
        headline,
        headline_provenance,
    })
}
