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
