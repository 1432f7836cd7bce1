//! `POST /v1/planning/check`: the fifteen planning checks of specification part 4.9 at one
//! location, only those requested, each `true`/`false` with the features that matched, or
//! `unknown` with the reason; never omitted.
//!
//! The checks are the spatial layers' flags (`terrace_layers::report_from`) read at the
//! location's point with its local authority's coverage: a check is `false` only where one of its
//! datasets is loaded for that authority. `agricultural_land` is true where a classification
//! polygon of an agricultural grade (1 to 5) holds the point.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use terrace_areas::AreasCtx;
use terrace_core::{Flag, Postcode, Uprn, Violation};
use terrace_layers::{Check, LayerCache, Match, SourceRef};
use terrace_store::{Db, LookupError};

/// The checks, in the order of the specification.
pub const CHECKS: [&str; 15] = [
    "article_4",
    "brownfield",
    "ancient_woodland",
    "heritage_at_risk",
    "tpo",
    "aqma",
    "scheduled_monument",
    "sssi",
    "agricultural_land",
    "flood_risk",
    "green_belt",
    "listed_buildings",
    "aonb",
    "national_park",
    "conservation_area",
];

/// The body of `POST /v1/planning/check`: one location (`uprn`, `postcode`, or `lat` and
/// `lon`) and the checks wanted.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = one_location)]
pub struct CheckInput {
    /// The property's UPRN
    #[serde(default)]
    pub uprn: Option<Uprn>,
    /// A postcode (its directory position)
    #[serde(default)]
    pub postcode: Option<Postcode>,
    /// Latitude, WGS84 (with `lon`)
    #[serde(default)]
    #[schemars(range(min = -90.0, max = 90.0))]
    pub lat: Option<f64>,
    /// Longitude, WGS84 (with `lat`)
    #[serde(default)]
    #[schemars(range(min = -180.0, max = 180.0))]
    pub lon: Option<f64>,
    /// The checks wanted, any of article_4, brownfield, ancient_woodland, heritage_at_risk,
    /// tpo, aqma, scheduled_monument, sssi, agricultural_land, flood_risk, green_belt,
    /// listed_buildings, aonb, national_park, conservation_area
    #[schemars(with = "Vec<CheckName>", length(min = 1))]
    pub checks: Vec<String>,
}

/// The schema states the location rule: exactly one of `uprn`, `postcode`, or `lat` with `lon`.
fn one_location(schema: &mut schemars::Schema) {
    terrace_core::patterns::exactly_one_of(schema, &[&["uprn"], &["postcode"], &["lat", "lon"]]);
}

/// The schema of a check's name: one of [`CHECKS`] (the body keeps names as text, so that an
/// unknown one is reported with the list of valid ones).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // read by schemars only
enum CheckName {
    #[serde(rename = "article_4")]
    Article4,
    Brownfield,
    AncientWoodland,
    HeritageAtRisk,
    Tpo,
    Aqma,
    ScheduledMonument,
    Sssi,
    AgriculturalLand,
    FloodRisk,
    GreenBelt,
    ListedBuildings,
    Aonb,
    NationalPark,
    ConservationArea,
}

impl CheckInput {
    /// Exactly one location; lat and lon together and in range; at least one check, each known.
    pub fn violations(&self) -> Vec<Violation> {
        let mut v = Vec::new();
        let point = self.lat.is_some() || self.lon.is_some();
        let given = usize::from(self.uprn.is_some())
            + usize::from(self.postcode.is_some())
            + usize::from(point);
        if given != 1 {
            v.push(Violation::new(
                &[],
                "value_error",
                "give exactly one location: uprn, postcode, or lat and lon",
            ));
        }
        v.extend(terrace_core::patterns::lat_lon_violations(
            self.lat, self.lon,
        ));
        if self.checks.is_empty() {
            v.push(Violation::new(
                &["checks"],
                "too_short",
                format!("name at least one check of: {}", CHECKS.join(", ")),
            ));
        }
        for (i, c) in self.checks.iter().enumerate() {
            if !CHECKS.contains(&c.as_str()) {
                let idx = i.to_string();
                v.push(
                    Violation::new(
                        &["checks", &idx],
                        "literal_error",
                        format!("unknown check; the valid checks are: {}", CHECKS.join(", ")),
                    )
                    .with_input(c.clone())
                    .with_ctx(serde_json::json!({ "expected": CHECKS })),
                );
            }
        }
        v
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// The check was read: `value` is true or false.
    Checked,
    /// The check could not be read: `reason` says why.
    Unknown,
}

/// One requested check.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CheckResult {
    pub check: String,
    pub status: CheckStatus,
    /// `true` or `false` when checked; null when unknown.
    pub value: Option<bool>,
    /// Why the check is unknown.
    pub reason: Option<String>,
    /// The features that matched (empty when false or unknown).
    pub matches: Vec<Match>,
    /// The datasets read, loaded for the location's local authority, with vintage.
    pub sources: Vec<SourceRef>,
    /// The check's datasets that are not loaded for the location's local authority.
    pub not_loaded: Vec<String>,
}

/// The answer of `POST /v1/planning/check`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CheckAnswer {
    /// The local authority whose coverage decided what could be checked.
    pub local_authority: Option<String>,
    /// The point read, British National Grid metres.
    pub easting: Option<f64>,
    pub northing: Option<f64>,
    /// The requested checks, in the order asked (a repeated name once).
    pub checks: Vec<CheckResult>,
}

fn from_check(name: &str, c: &Check) -> CheckResult {
    let (status, value) = match c.value {
        Flag::Known(b) => (CheckStatus::Checked, Some(b)),
        Flag::NotChecked(_) => (CheckStatus::Unknown, None),
    };
    CheckResult {
        check: name.to_string(),
        status,
        value,
        reason: c.reason.clone(),
        matches: c.matches.clone(),
        sources: c.sources.clone(),
        not_loaded: c.not_loaded.clone(),
    }
}

fn unknown(name: &str, reason: String, not_loaded: Vec<String>) -> CheckResult {
    CheckResult {
        check: name.to_string(),
        status: CheckStatus::Unknown,
        value: None,
        reason: Some(reason),
        matches: Vec::new(),
        sources: Vec::new(),
        not_loaded,
    }
}

/// Flood risk: true in flood zone 2 or 3, false where both zone flags are false.
fn flood(report: &terrace_layers::RiskReport) -> CheckResult {
    let f = &report.flood.flags;
    let (Some(z3), Some(z2)) = (f.get("in_flood_zone_3"), f.get("in_flood_zone_2")) else {
        return unknown(
            "flood_risk",
            "the flood zone layers are not defined".into(),
            Vec::new(),
        );
    };
    let mut r = from_check("flood_risk", z3);
    match (z3.value, z2.value) {
        (Flag::Known(true), _) | (_, Flag::Known(true)) => {
            r.status = CheckStatus::Checked;
            r.value = Some(true);
            r.reason = None;
            r.matches = z3.matches.iter().chain(&z2.matches).cloned().collect();
        }
        (Flag::Known(false), Flag::Known(false)) => {}
        (Flag::NotChecked(_), Flag::Known(false) | Flag::NotChecked(_))
        | (Flag::Known(false), Flag::NotChecked(_)) => {
            r.status = CheckStatus::Unknown;
            r.value = None;
            r.reason = z3.reason.clone().or_else(|| z2.reason.clone());
        }
    }
    r
}

/// `POST /v1/planning/check`.
pub async fn check(
    db: &Db,
    layers: &LayerCache,
    areas: &AreasCtx,
    input: &CheckInput,
) -> Result<CheckAnswer, LookupError> {
    let point = input.lat.zip(input.lon);
    let at = crate::locate(db, areas, input.uprn, input.postcode.as_ref(), point).await?;
    let layers = layers.current(db).await?;
    let report = terrace_layers::report_from(&layers, &at);
    let flag = |group: &std::collections::BTreeMap<String, Check>, name: &str, key: &str| {
        group
            .get(key)
            .map(|c| from_check(name, c))
            .unwrap_or_else(|| unknown(name, format!("the layers have no {key} flag"), Vec::new()))
    };
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for name in &input.checks {
        if !seen.insert(name.as_str()) {
            continue;
        }
        let n = name.as_str();
        let r = match n {
            "article_4" => flag(&report.planning, n, "article_4_direction"),
            "brownfield" => flag(&report.planning, n, "brownfield_land"),
            "tpo" => flag(&report.planning, n, "tree_preservation"),
            "ancient_woodland" => flag(&report.environmental_designations, n, "ancient_woodland"),
            "aqma" => flag(
                &report.environmental_designations,
                n,
                "air_quality_management_area",
            ),
            "sssi" => flag(
                &report.environmental_designations,
                n,
                "site_of_special_scientific_interest",
            ),
            "green_belt" => flag(&report.environmental_designations, n, "green_belt"),
            "aonb" => flag(
                &report.environmental_designations,
                n,
                "area_of_outstanding_natural_beauty",
            ),
            "national_park" => flag(&report.environmental_designations, n, "national_park"),
            "heritage_at_risk" => flag(&report.heritage, n, "heritage_at_risk"),
            "scheduled_monument" => flag(&report.heritage, n, "scheduled_monument"),
            "listed_buildings" => flag(&report.heritage, n, "listed_building"),
            "conservation_area" => flag(&report.heritage, n, "conservation_area"),
            "flood_risk" => flood(&report),
            "agricultural_land" => from_check(n, &terrace_layers::agricultural_land(&layers, &at)),
            other => unknown(other, "not a known check".into(), Vec::new()),
        };
        out.push(r);
    }
    Ok(CheckAnswer {
        local_authority: report.local_authority.clone(),
        easting: report.easting,
        northing: report.northing,
        checks: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema's check names (`CheckName`) are exactly [`CHECKS`], in the same order.
    #[test]
    fn the_schema_names_exactly_the_checks() {
        let schema = serde_json::to_value(schemars::schema_for!(CheckName)).unwrap();
        let names: Vec<&str> = schema["enum"]
            .as_array()
            .expect("a plain string enum")
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(names, CHECKS);
    }
}
