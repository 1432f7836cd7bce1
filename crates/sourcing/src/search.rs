//! `POST /v1/sourcing/search`: the parcels or units of an area matching a strategy (or explicit
//! filters), ranked by a score every row explains with its components.
//!
//! A unit passes a filter only where the feature it reads is known: an unknown value fails (a
//! home with no certificate is not "not band F"), and the answer counts the units left out that
//! way beside those that failed on a known value.

use crate::build::{Detail, years_since};
use crate::strategy::{self, Asset, Component, FilterKind, Setting, Settings, Strategy};
use crate::{SourcingCtx, SourcingError};
use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use terrace_core::Violation;
use terrace_core::cursor::CursorScope;
use terrace_store::features::{
    self as ss, FeatureFilter, FeatureRow, FeatureScope, ParcelCandidate, ParcelHit,
};
use terrace_store::memo::Memo;
use terrace_store::{StoreError, meta};

/// Where a search looks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// A local authority by GSS code.
    Lad(String),
    /// A postcode district (outward code).
    District(String),
    /// A WGS84 box: west, south, east, north.
    Bbox([f64; 4]),
    /// A WGS84 point and a radius in metres.
    Radius { lat: f64, lon: f64, radius_m: f64 },
}

/// What is searched: a strategy with overrides, or explicit filters for an asset.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchQuery {
    pub place: Place,
    /// `None`: explicit filters (`filters`) for `asset`.
    pub strategy: Option<String>,
    pub overrides: Map<String, Value>,
    pub asset: Asset,
    pub filters: Map<String, Value>,
    pub include_open_land: bool,
    pub limit: usize,
    pub cursor: Option<String>,
    /// Today, for days on the market.
    pub today: NaiveDate,
}

/// One component of a row's score.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ScoreComponent {
    pub name: &'static str,
    pub column: &'static str,
    /// The feature's value; null when unknown (the component then scores 0).
    pub value: Option<f64>,
    pub unit: &'static str,
    /// The value on the component's scale, 0 to 1.
    pub scaled: f64,
    pub weight: f64,
    /// `scaled x weight`: the components' contributions sum to the score.
    pub contribution: f64,
}

/// The owner of a unit where a company or overseas company freehold title links.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct UnitOwner {
    pub name: Option<String>,
    pub company_number: Option<String>,
    /// `ccod` (UK company) or `ocod` (overseas company).
    pub register: Option<String>,
    pub title_number: Option<String>,
    pub since: Option<NaiveDate>,
}

/// The facts of a unit the strategies read.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct UnitFacts {
    /// `residential`, `commercial`, `dual_use`, `other` or `unknown`.
    pub use_kind: String,
    pub property_type: Option<String>,
    pub tenure: Option<String>,
    /// The valuation vintage's value, pounds.
    pub value: Option<f64>,
    pub last_sale_price: Option<i64>,
    pub last_sale_date: Option<NaiveDate>,
    pub epc_band: Option<String>,
    pub epc_potential_band: Option<String>,
    pub lease_years_remaining: Option<f64>,
    /// Null: no company or overseas company freehold title links (individual owners are not in
    /// the bulk registers, so this is not "unowned").
    pub owner: Option<UnitOwner>,
    pub asking_price: Option<i64>,
    pub listed_on: Option<NaiveDate>,
    pub price_reductions: Option<i32>,
    pub agent: Option<String>,
    pub rent_pcm: Option<f64>,
    pub auction_offers: Option<i32>,
    pub auction_unsold: Option<i32>,
    pub building_uprn: i64,
    pub building_residential_units: i32,
    pub building_commercial_units: i32,
}

/// One row of a search: a unit or a parcel, with its score and the components behind it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SearchRow {
    pub asset: Asset,
    /// The unit's UPRN (units).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uprn: Option<i64>,
    /// The parcel's id (the INSPIRE id, as `GET /v1/sourcing/parcel` and `POST
    /// /v1/sourcing/owners` take it): the parcel itself, or the one the unit's point lies in.
    pub parcel_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    pub postcode: Option<String>,
    pub lad_code: Option<String>,
    /// The score, 0 to 1: the sum of the components' contributions.
    pub score: f64,
    pub score_components: Vec<ScoreComponent>,
    /// Units: what the strategies read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub facts: Option<UnitFacts>,
    /// Parcels: the plot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plot: Option<PlotFacts>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlotFacts {
    pub area_m2: f64,
    /// Null where no footprint data covers the authority (not measured), never 0 for unknown.
    pub built_coverage: Option<f64>,
    pub n_buildings: i32,
    pub residential_addresses: i32,
    pub commercial_addresses: i32,
    pub landuse_tier_a: Option<String>,
    pub landuse_tier_b: Option<String>,
    pub lat: Option<f64>,
    pub lon: Option<f64>,
}

/// How the area's rows fared.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct Funnel {
    /// Units of the area with features (units searched; null for parcels).
    pub units_in_area: Option<i64>,
    /// Rows the scan read in the area (after the coarse conditions pushed into it, so rows
    /// failing those are counted in neither `scanned` nor `failed_filters`).
    pub scanned: usize,
    pub matched: usize,
    /// Left out on a known value that failed a filter.
    pub failed_filters: usize,
    /// Left out because a feature a filter reads is not known for them.
    pub unknown_features: usize,
    /// Parcels left out as open land (parks, sports grounds, railways, farmland, utilities).
    pub open_land_excluded: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SearchAnswer {
    /// The strategy run, or `custom` for explicit filters.
    pub strategy: String,
    pub strategy_version: &'static str,
    pub asset: Asset,
    /// The filters in force after overrides (`null`: switched off).
    pub filters: Map<String, Value>,
    pub ranking: Vec<Component>,
    pub funnel: Funnel,
    /// Whether open land was left out, and how it is told.
    pub open_land: &'static str,
    /// The date the features describe (the valuation vintage's month), when any row was read.
    pub features_as_of: Option<NaiveDate>,
    pub data: Vec<SearchRow>,
    /// Pass as `cursor` with the same body for the next page; null on the last page.
    pub next_cursor: Option<String>,
    pub data_gaps: Vec<&'static str>,
}

const OPEN_LAND_EXCLUDED: &str = "excluded: parcels whose land use is recreation (parks, sports grounds), transport (railways, roads), agriculture, or utilities and infrastructure are left out; a parcel of unknown use is kept; pass include_open_land (or the override exclude_open_land: false) to keep them";
const OPEN_LAND_KEPT: &str = "kept: open land is included as asked";
const OPEN_LAND_UNITS: &str = "not applicable: units are searched, not parcels";

/// Whether a parcel's land use is open land.
pub fn is_open_land(tier_a: Option<&str>, tier_b: Option<&str>) -> bool {
    matches!(tier_a, Some("recreation" | "transport" | "agriculture"))
        || tier_b == Some("Utilities and infrastructure")
}

/// The strategy (or the explicit strategy made of the filters given) and its settings.
fn resolve(q: &SearchQuery) -> Result<(Strategy, Settings), SourcingError> {
    match &q.strategy {
        Some(id) => {
            let s = strategy::by_id(id).ok_or_else(|| {
                SourcingError::Invalid(vec![
                    Violation::new(
                        &["strategy"],
                        "value_error",
                        format!(
                            "Value error, strategy is one of {}",
                            strategy::ids().join(", ")
                        ),
                    )
                    .with_input(id.clone()),
                ])
            })?;
            let mut overrides = q.overrides.clone();
            if q.include_open_land && s.asset == Asset::Parcel {
                overrides.insert("exclude_open_land".into(), Value::Bool(false));
            }
            let set = strategy::settings(&s, &overrides).map_err(SourcingError::Invalid)?;
            Ok((s, set))
        }
        None => custom(q),
    }
}

/// Explicit filters: the filters of every strategy of the asset may be given; the ranking is
/// the components of the strategies whose filters were given, reweighted to sum to 1.
fn custom(q: &SearchQuery) -> Result<(Strategy, Settings), SourcingError> {
    let pool: Vec<Strategy> = strategy::all()
        .into_iter()
        .filter(|s| s.asset == q.asset)
        .collect();
    let mut errors = Vec::new();
    for k in q.filters.keys() {
        if !pool.iter().any(|s| s.filters.iter().any(|f| f.key == k)) {
            let mut keys: Vec<&str> = pool
                .iter()
                .flat_map(|s| s.filters.iter().map(|f| f.key))
                .collect();
            keys.sort_unstable();
            keys.dedup();
            errors.push(
                Violation::new(
                    &["filters", k],
                    "value_error",
                    format!(
                        "Value error, {k} is not a filter of the {} asset; its filters are {}",
                        match q.asset {
                            Asset::Parcel => "parcel",
                            Asset::Unit => "unit",
                        },
                        keys.join(", ")
                    ),
                )
                .with_input(k.clone()),
            );
        }
    }
    if q.filters.is_empty() {
        errors.push(Violation::new(
            &["filters"],
            "value_error",
            "Value error, give a strategy, or at least one filter",
        ));
    }
    if !errors.is_empty() {
        return Err(SourcingError::Invalid(errors));
    }
    let used: Vec<&Strategy> = pool
        .iter()
        .filter(|s| s.filters.iter().any(|f| q.filters.contains_key(f.key)))
        .collect();
    let mut filters = Vec::new();
    let mut ranking: Vec<Component> = Vec::new();
    let mut gaps = Vec::new();
    for s in &used {
        for f in &s.filters {
            if q.filters.contains_key(f.key) || (f.key == "exclude_open_land") {
                let mut f = f.clone();
                if f.key == "exclude_open_land" {
                    f.default = Value::Bool(!q.include_open_land);
                }
                if !filters
                    .iter()
                    .any(|x: &strategy::FilterSpec| x.key == f.key)
                {
                    filters.push(f);
                }
            }
        }
        ranking.extend(s.ranking.iter().cloned());
        gaps.extend(s.data_gaps.iter().copied());
    }
    let total: f64 = ranking.iter().map(|c| c.weight).sum();
    for c in &mut ranking {
        c.weight /= total.max(f64::EPSILON);
    }
    let s = Strategy::custom(q.asset, filters, ranking, gaps);
    let mut given = q.filters.clone();
    if q.asset == Asset::Parcel && !given.contains_key("exclude_open_land") {
        given.insert(
            "exclude_open_land".into(),
            Value::Bool(!q.include_open_land),
        );
    }
    // Explicit filters are only those given: the others stay off.
    let mut set = strategy::settings(&s, &given).map_err(|v| {
        SourcingError::Invalid(
            v.into_iter()
                .map(|mut x| {
                    x.path = x
                        .path
                        .into_iter()
                        .map(|p| {
                            if p == "strategy_overrides" {
                                "filters".into()
                            } else {
                                p
                            }
                        })
                        .collect();
                    x
                })
                .collect(),
        )
    })?;
    for (k, v) in &mut set.0 {
        if !given.contains_key(*k) {
            *v = Setting::Off;
        }
    }
    Ok((s, set))
}

fn band_index(b: &str) -> Option<f64> {
    let c = b.chars().next()?;
    ('A'..='G').contains(&c).then(|| (c as u8 - b'A') as f64)
}

/// A unit's value of a feature column (the same number for its filters and its components).
pub(crate) fn measure_unit(column: &str, r: &FeatureRow, today: NaiveDate) -> Option<f64> {
    match column {
        "owner.date_added" => r.owner_since.map(|d| years_since(d, r.as_of)),
        "valuation.gain_pct" => {
            let paid = r
                .owner_price_paid
                .or(r.last_sale_price)
                .filter(|p| *p > 0)? as f64;
            Some(((r.value? - paid) / paid * 1000.0).round() / 10.0)
        }
        "lease.years_remaining" => r.lease_years,
        "epc.current_band" => r
            .epc_band
            .as_deref()
            .and_then(band_index)
            .map(|i| (i - 4.0).max(0.0)),
        "epc.potential_band" => {
            let now = band_index(r.epc_band.as_deref()?)?;
            let pot = band_index(r.epc_potential_band.as_deref()?)?;
            Some((now - pot).max(0.0))
        }
        "auction.unsold_offers" => r.auction_unsold.map(f64::from),
        "auction.last_guide" => {
            let (g, v) = (r.last_guide? as f64, r.value?);
            (v > 0.0).then(|| ((v - g) / v * 1000.0).round() / 10.0)
        }
        "building.commercial_units" => Some(f64::from(r.building_commercial)),
        "building.residential_units" => Some(f64::from(r.building_residential)),
        "yield.gross_pct" => {
            let (rent, v) = (r.rent_pcm?, r.value?);
            (v > 0.0).then(|| (12.0 * rent / v * 1000.0).round() / 10.0)
        }
        "listing.reductions" => r.reductions.map(f64::from),
        "listing.reduction_pct" => {
            let (first, now) = (r.first_asking_price? as f64, r.asking_price? as f64);
            (first > 0.0).then(|| (((first - now) / first * 1000.0).round() / 10.0).max(0.0))
        }
        "listing.listed_on" => r.listed_on.map(|d| (today - d).num_days().max(0) as f64),
        _ => None,
    }
}

fn parcel_measure(column: &str, h: &ParcelHit) -> Option<f64> {
    plot_measure(column, h.stats.area_m2, h.stats.built_coverage)
}

/// A parcel's numeric features: the same for a candidate and for the parcel read whole.
fn plot_measure(column: &str, area_m2: f64, built_coverage: Option<f64>) -> Option<f64> {
    match column {
        "parcel.area_m2" => Some(area_m2),
        "parcel.built_coverage" => built_coverage,
        _ => None,
    }
}

pub(crate) enum Verdict {
    Pass,
    Fail,
    Unknown,
}

/// Whether a row passes the settings: `measure` gives the numeric features; `bands`, `switch`
/// the others.
fn verdict(
    s: &Strategy,
    set: &Settings,
    measure: &dyn Fn(&str) -> Option<f64>,
    other: &dyn Fn(&str, &Setting) -> Option<bool>,
) -> Verdict {
    let mut unknown = false;
    for spec in &s.filters {
        let setting = set.get(spec.key);
        if matches!(setting, Setting::Off) {
            continue;
        }
        let ok = match (spec.kind, setting) {
            (FilterKind::Min, Setting::Number(n)) => measure(spec.column).map(|v| v >= *n),
            (FilterKind::Max, Setting::Number(n)) => measure(spec.column).map(|v| v <= *n),
            (FilterKind::Bands | FilterKind::Switch, x) => other(spec.key, x),
            (FilterKind::Min | FilterKind::Max, _) => Some(true),
        };
        match ok {
            Some(true) => {}
            Some(false) => return Verdict::Fail,
            None => unknown = true,
        }
    }
    if unknown {
        Verdict::Unknown
    } else {
        Verdict::Pass
    }
}

/// Whether a unit passes a unit strategy's settings.
pub(crate) fn unit_verdict(
    s: &Strategy,
    set: &Settings,
    r: &FeatureRow,
    today: NaiveDate,
) -> Verdict {
    let other = |key: &str, setting: &Setting| -> Option<bool> {
        match (key, setting) {
            ("bands", Setting::Bands(b)) => r.epc_band.as_ref().map(|x| b.contains(x)),
            ("rented_only", Setting::Switch(true)) => Detail::of(r)
                .epc_tenure
                .map(|t| t.to_ascii_lowercase().contains("rent")),
            _ => Some(true),
        }
    };
    verdict(s, set, &|c| measure_unit(c, r, today), &other)
}

/// The score of a row and its components: each feature scaled onto 0..1 and weighted.
pub(crate) fn score(
    ranking: &[Component],
    measure: &dyn Fn(&str) -> Option<f64>,
) -> (f64, Vec<ScoreComponent>) {
    let comps: Vec<ScoreComponent> = ranking
        .iter()
        .map(|c| {
            let value = measure(c.column);
            let scaled = value.map_or(0.0, |v| strategy::scale(c, v));
            ScoreComponent {
                name: c.name,
                column: c.column,
                value,
                unit: c.unit,
                scaled: round4(scaled),
                weight: round4(c.weight),
                contribution: contribution(c, value),
            }
        })
        .collect();
    let score = round4(comps.iter().map(|c| c.contribution).sum());
    (score, comps)
}

/// A component's contribution to a score (rounded as the answer gives it).
fn contribution(c: &Component, value: Option<f64>) -> f64 {
    round4(value.map_or(0.0, |v| strategy::scale(c, v)) * c.weight)
}

/// The score alone, exactly as [`score`] gives it, without the components: a scan ranks every
/// row that passes and writes out only the page.
fn score_only(ranking: &[Component], measure: &dyn Fn(&str) -> Option<f64>) -> f64 {
    round4(
        ranking
            .iter()
            .map(|c| contribution(c, measure(c.column)))
            .sum(),
    )
}

/// The order of the rows: score descending, then the UPRN or INSPIRE id ascending (what the
/// cursor carries: the score times 10,000 negated, and the id).
fn rank_key(score: f64, id: i64) -> (i64, i64) {
    (-((score * 10_000.0).round() as i64), id)
}

fn round4(v: f64) -> f64 {
    (v * 10_000.0).round() / 10_000.0
}

/// The scan's scope and, for a radius, the circle to keep (BNG metres).
/// A circle in BNG metres: centre x, centre y, radius.
type Circle = (f64, f64, f64);

fn scope_of(p: &Place) -> Result<(FeatureScope, Option<Circle>), SourcingError> {
    let bad = |field: &str, msg: &str| {
        SourcingError::Invalid(vec![Violation::new(
            &[field],
            "value_error",
            format!("Value error, {msg}"),
        )])
    };
    Ok(match p {
        Place::Lad(l) => (FeatureScope::Lad(l.clone()), None),
        Place::District(d) => (FeatureScope::District(d.clone()), None),
        Place::Bbox([w, s, e, n]) => {
            let a = terrace_geo::bng_from_wgs84(*w, *s);
            let b = terrace_geo::bng_from_wgs84(*e, *n);
            let (Some((x0, y0)), Some((x1, y1))) = (a, b) else {
                return Err(bad("bbox", "bbox lies outside Great Britain's grid"));
            };
            (
                FeatureScope::Bbox(x0.min(x1), y0.min(y1), x0.max(x1), y0.max(y1)),
                None,
            )
        }
        Place::Radius { lat, lon, radius_m } => {
            let Some((x, y)) = terrace_geo::bng_from_wgs84(*lon, *lat) else {
                return Err(bad(
                    "location",
                    "location lies outside Great Britain's grid",
                ));
            };
            (
                FeatureScope::Bbox(x - radius_m, y - radius_m, x + radius_m, y + radius_m),
                Some((x, y, *radius_m)),
            )
        }
    })
}

/// The coarse conditions a unit strategy's settings allow the scan to apply (each implied by
/// the exact rule, so nothing the rule keeps is lost).
fn coarse(s: &Strategy, set: &Settings, today: NaiveDate) -> FeatureFilter {
    let mut f = FeatureFilter::default();
    for spec in &s.filters {
        let n = set.number(spec.key);
        match (spec.key, n) {
            ("min_years_owned", Some(_)) => f.owner_company = true,
            ("max_lease_years", Some(v)) => f.lease_years_max = Some(v),
            ("min_lease_years", Some(v)) => f.lease_years_min = Some(v),
            ("min_unsold_offers", Some(v)) => f.auction_unsold_min = Some(v.ceil() as i32),
            ("min_commercial_units", Some(v)) => f.building_commercial_min = Some(v.ceil() as i32),
            ("min_residential_units", Some(v)) => {
                f.building_residential_min = Some(v.ceil() as i32)
            }
            ("min_yield_pct", Some(_)) => f.rent_and_value = true,
            ("min_reductions", Some(v)) => {
                f.on_market = true;
                f.reductions_min = Some(v.ceil() as i32);
            }
            ("min_days_listed", Some(v)) => {
                f.on_market = true;
                f.listed_by = today.checked_sub_days(chrono::Days::new(v.floor() as u64));
            }
            _ => {}
        }
        if spec.key == "bands" {
            f.epc_bands = set.bands("bands").map(<[String]>::to_vec);
        }
    }
    f
}

fn unit_row(s: &Strategy, r: &FeatureRow, today: NaiveDate) -> SearchRow {
    let d = Detail::of(r);
    let (score, score_components) = score(&s.ranking, &|c| measure_unit(c, r, today));
    SearchRow {
        asset: Asset::Unit,
        uprn: Some(r.uprn),
        parcel_id: r.parcel_id.map(|p| p.to_string()),
        address: d.address.clone(),
        postcode: d.postcode.clone(),
        lad_code: r.lad_code.clone(),
        score,
        score_components,
        facts: Some(unit_facts(r, &d)),
        plot: None,
    }
}

/// The facts of a unit as shown in sourcing answers.
pub fn unit_facts(r: &FeatureRow, d: &Detail) -> UnitFacts {
    UnitFacts {
        use_kind: r.use_kind.clone(),
        property_type: d.property_type.clone(),
        tenure: r.tenure.clone(),
        value: r.value.map(f64::round),
        last_sale_price: r.last_sale_price,
        last_sale_date: d.last_sale_date,
        epc_band: r.epc_band.clone(),
        epc_potential_band: r.epc_potential_band.clone(),
        lease_years_remaining: r.lease_years,
        owner: r.owner_register.as_ref().map(|reg| UnitOwner {
            name: d.owner_name.clone(),
            company_number: r.owner_company_number.clone(),
            register: Some(reg.clone()),
            title_number: d.owner_title.clone(),
            since: r.owner_since,
        }),
        asking_price: r.asking_price,
        listed_on: r.listed_on,
        price_reductions: r.reductions,
        agent: d.agent.clone(),
        rent_pcm: r.rent_pcm,
        auction_offers: d.auction_offers,
        auction_unsold: r.auction_unsold,
        building_uprn: r.building_uprn,
        building_residential_units: r.building_residential,
        building_commercial_units: r.building_commercial,
    }
}

fn parcel_row(s: &Strategy, h: &ParcelHit) -> SearchRow {
    let (score, score_components) = score(&s.ranking, &|c| parcel_measure(c, h));
    let st = &h.stats;
    SearchRow {
        asset: Asset::Parcel,
        uprn: None,
        parcel_id: Some(st.inspire_id.to_string()),
        address: None,
        postcode: None,
        lad_code: st.lad_code.clone(),
        score,
        score_components,
        facts: None,
        plot: Some(PlotFacts {
            area_m2: (st.area_m2 * 100.0).round() / 100.0,
            built_coverage: st.built_coverage.map(round4),
            n_buildings: st.n_buildings,
            residential_addresses: st.address_count_residential,
            commercial_addresses: st.address_count_commercial,
            landuse_tier_a: st.landuse_tier_a.clone(),
            landuse_tier_b: st.landuse_tier_b.clone(),
            lat: h.lat,
            lon: h.lon,
        }),
    }
}

/// The cursor scope of a search: its strategy, settings and place.
fn cursor_scope(s: &Strategy, set: &Settings, place: &Place) -> CursorScope {
    CursorScope::new("sourcing_search", &(s.id, s.version, set.to_json(), place))
}

/// Sorts the ranked rows and keeps those after the cursor's key, at most `limit + 1` (one more
/// than the page, to know whether another follows).
fn page(
    passed: &mut Vec<((i64, i64), usize)>,
    after: Option<(i64, i64)>,
    limit: usize,
) -> Vec<((i64, i64), usize)> {
    if let Some(a) = after {
        passed.retain(|(k, _)| *k > a);
    }
    // The page and one more, in order, without sorting the rest (linear in the rows).
    let keep = limit.saturating_add(1);
    if passed.len() > keep {
        passed.select_nth_unstable(keep);
        passed.truncate(keep);
    }
    passed.sort_unstable();
    std::mem::take(passed)
}

fn key_of(row: &SearchRow) -> (i64, String) {
    let id = match row.asset {
        Asset::Unit => format!("{:020}", row.uprn.unwrap_or_default()),
        Asset::Parcel => format!(
            "{:020}",
            row.parcel_id
                .as_deref()
                .and_then(|p| p.parse::<i64>().ok())
                .unwrap_or_default()
        ),
    };
    (-((row.score * 10_000.0).round() as i64), id)
}

/// The rules of a query that need the strategies: a known strategy, valid overrides or filters.
pub fn validate(q: &SearchQuery) -> Result<(), Vec<Violation>> {
    match resolve(q) {
        Ok(_) => Ok(()),
        Err(SourcingError::Invalid(v)) => Err(v),
        Err(SourcingError::NotFound(_) | SourcingError::Store(_)) => Ok(()),
    }
}

/// A parcel as a scan reads it: its plot figures, whether it is open land (decided once, when the
/// scope is read) and, for a box scope, its point on the British National Grid. No text: an
/// authority's 200,000 parcels are some 8 MB.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Candidate {
    inspire_id: i64,
    area_m2: f64,
    built_coverage: Option<f64>,
    open_land: bool,
    bng: Option<(f64, f64)>,
}

impl Candidate {
    fn of(p: &ParcelCandidate) -> Candidate {
        Candidate {
            inspire_id: p.inspire_id,
            area_m2: p.area_m2,
            built_coverage: p.built_coverage,
            open_land: is_open_land(p.landuse_tier_a.as_deref(), p.landuse_tier_b.as_deref()),
            bng: p
                .point
                .and_then(|(la, lo)| terrace_geo::bng_from_wgs84(lo, la)),
        }
    }

    /// At least the floor, and at most the ceiling when one is set (an unmeasured parcel fails a
    /// ceiling).
    fn within(&self, min_area: f64, max_cov: Option<f64>) -> bool {
        self.area_m2 >= min_area
            && max_cov.is_none_or(|m| self.built_coverage.is_some_and(|c| c <= m))
    }
}

/// The parcels of recently searched scopes, by scope, kept until a load or a build changes rows
/// (`DataVersion`, read on every call: one small query, so an answer is never older than the
/// store): the read of `parcel_stats` is most of a search's time, and every search of a scope
/// (any strategy, floor or ceiling) shares one read.
pub struct CandidateMemo(Memo<String, Arc<Vec<Candidate>>>);

impl CandidateMemo {
    const WATCHED: &[meta::Key] = &[meta::Key::DataVersion, meta::Key::AddressRegisterVersion];
    /// Scopes kept at most (16 authorities of 200,000 parcels are some 130 MB).
    const MAX: usize = 16;
}

impl Default for CandidateMemo {
    fn default() -> Self {
        CandidateMemo(Memo::new(
            CandidateMemo::WATCHED,
            std::time::Duration::ZERO,
            CandidateMemo::MAX,
        ))
    }
}

/// The parcels of a scope, from the memo when it holds them.
async fn candidates(
    ctx: &SourcingCtx,
    scope: &FeatureScope,
) -> Result<Arc<Vec<Candidate>>, SourcingError> {
    let key = format!("{scope:?}");
    Ok(ctx
        .candidates
        .0
        .get_or_fill(&ctx.db, key, || async {
            let read = ss::parcel_candidates(&ctx.db, scope).await?;
            Ok::<_, StoreError>(Arc::new(read.iter().map(Candidate::of).collect()))
        })
        .await?)
}

/// Runs a search.
pub async fn search(ctx: &SourcingCtx, q: &SearchQuery) -> Result<SearchAnswer, SourcingError> {
    let (s, set) = resolve(q)?;
    let cursor = cursor_scope(&s, &set, &q.place);
    let after: Option<(i64, String)> = match cursor.decode_opt(q.cursor.as_deref()) {
        Ok(Some(parts)) => match parts.as_slice() {
            [a, b] => Some((a.parse().map_err(|_| bad_cursor())?, b.clone())),
            _ => return Err(bad_cursor()),
        },
        Ok(None) => None,
        Err(e) => return Err(e.into()),
    };
    if let Place::Lad(l) = &q.place {
        ctx.known_lad(l).await?;
    }
    let after: Option<(i64, i64)> = match after {
        Some((k, id)) => Some((k, id.parse().map_err(|_| bad_cursor())?)),
        None => None,
    };
    let (scope, circle) = scope_of(&q.place)?;
    let mut funnel = Funnel::default();
    let mut as_of = None;
    // Every row that passes is ranked by its key alone; only the page is written out.
    let mut passed: Vec<((i64, i64), usize)> = Vec::new();
    let mut rows: Vec<SearchRow> = match s.asset {
        Asset::Unit => {
            funnel.units_in_area = Some(ss::scope_counts(&ctx.db, &scope).await?.0);
            let feats = ss::features_in(&ctx.db, &scope, &coarse(&s, &set, q.today)).await?;
            for (i, r) in feats.iter().enumerate() {
                if let Some((x, y, rad)) = circle {
                    let (Some(rx), Some(ry)) = (r.x, r.y) else {
                        continue;
                    };
                    if (rx - x).hypot(ry - y) > rad {
                        continue;
                    }
                }
                funnel.scanned += 1;
                as_of = as_of.max(Some(r.as_of));
                match unit_verdict(&s, &set, r, q.today) {
                    Verdict::Pass => {
                        let sc = score_only(&s.ranking, &|c| measure_unit(c, r, q.today));
                        passed.push((rank_key(sc, r.uprn), i));
                    }
                    Verdict::Fail => funnel.failed_filters += 1,
                    Verdict::Unknown => funnel.unknown_features += 1,
                }
            }
            funnel.matched = passed.len();
            page(&mut passed, after, q.limit)
                .iter()
                .map(|&(_, i)| unit_row(&s, &feats[i], q.today))
                .collect()
        }
        Asset::Parcel => {
            let min_area = set.number("min_area_m2").unwrap_or(0.0);
            let max_cov = set.number("max_built_coverage");
            let exclude_open = set.switch("exclude_open_land");
            let cands = candidates(ctx, &scope).await?;
            for (i, h) in cands.iter().enumerate() {
                if !h.within(min_area, max_cov) {
                    continue;
                }
                if let Some((x, y, rad)) = circle {
                    let Some((px, py)) = h.bng else {
                        continue;
                    };
                    if (px - x).hypot(py - y) > rad {
                        continue;
                    }
                }
                funnel.scanned += 1;
                if exclude_open && h.open_land {
                    funnel.open_land_excluded += 1;
                    continue;
                }
                let other = |_: &str, _: &Setting| Some(true);
                let measure = |c: &str| plot_measure(c, h.area_m2, h.built_coverage);
                match verdict(&s, &set, &measure, &other) {
                    Verdict::Pass => {
                        let sc = score_only(&s.ranking, &measure);
                        passed.push((rank_key(sc, h.inspire_id), i));
                    }
                    Verdict::Fail => funnel.failed_filters += 1,
                    Verdict::Unknown => funnel.unknown_features += 1,
                }
            }
            funnel.matched = passed.len();
            let shown = page(&mut passed, after, q.limit);
            let ids: Vec<i64> = shown.iter().map(|&(_, i)| cands[i].inspire_id).collect();
            let whole: HashMap<i64, ParcelHit> = ss::parcels_by_ids(&ctx.db, &ids)
                .await?
                .into_iter()
                .map(|h| (h.stats.inspire_id, h))
                .collect();
            // A parcel a build removed between the two reads is left out of the page.
            ids.iter()
                .filter_map(|id| whole.get(id))
                .map(|h| parcel_row(&s, h))
                .collect()
        }
    };
    let mut next_cursor = None;
    if rows.len() > q.limit {
        rows.truncate(q.limit);
        next_cursor = rows.last().map(|r| {
            let (k, id) = key_of(r);
            cursor.encode(&[k.to_string(), id])
        });
    }
    let open_land = match (s.asset, set.switch("exclude_open_land")) {
        (Asset::Unit, _) => OPEN_LAND_UNITS,
        (Asset::Parcel, true) => OPEN_LAND_EXCLUDED,
        (Asset::Parcel, false) => OPEN_LAND_KEPT,
    };
    Ok(SearchAnswer {
        strategy: s.id.to_string(),
        strategy_version: s.version,
        asset: s.asset,
        filters: set.to_json(),
        ranking: s.ranking.clone(),
        funnel,
        open_land,
        features_as_of: as_of,
        data: rows,
        next_cursor,
        data_gaps: s.data_gaps.clone(),
    })
}

fn bad_cursor() -> SourcingError {
    SourcingError::Invalid(vec![Violation::new(
        &["cursor"],
        "value_error",
        "Value error, cursor must be the next_cursor of a previous answer, unchanged",
    )])
}
