//! The sourcing strategies as data (`GET /v1/sourcing/strategies`): each preset's thesis, its
//! filters (every key overridable, with its default and unit), its ranking components with
//! weights and scales, the feature columns it reads, the gaps that limit it and its version;
//! with an authority, whether the authority's data is ready for it, read from the coverage
//! register (`terrace_areas::coverage`). The methods are written down in docs/METHODS.md.
//!
//! A score is the weighted sum of its components, each a value mapped onto 0..1 by its scale
//! (linear between `lo` and `hi`, clamped), so every rank is explained by the components shown
//! beside it; a component whose input is unknown scores 0 and says so.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use terrace_areas::coverage::{CoverageRegister, LoadStatus};
use terrace_core::Violation;

/// The version of the presets: it changes whenever a default, weight or scale changes.
pub const VERSION: &str = "2026-11-29.1";

/// What a strategy's rows are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Asset {
    /// Land parcels (HM Land Registry INSPIRE index polygons).
    Parcel,
    /// Addressable units (UPRNs).
    Unit,
}

/// What kind of value a filter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FilterKind {
    /// A number: rows below it fail.
    Min,
    /// A number: rows above it fail.
    Max,
    /// A list of energy bands (`A`..`G`): rows outside it fail.
    Bands,
    /// `true` or `false`.
    Switch,
}

/// One overridable filter of a strategy.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FilterSpec {
    /// The key to pass in `strategy_overrides`.
    pub key: &'static str,
    pub kind: FilterKind,
    /// The default value; `null` means the filter is off unless set.
    pub default: Value,
    /// The unit of the value (`m2`, `share`, `years`, `pct`, `count`, `days`, `band`, `bool`).
    pub unit: &'static str,
    /// The feature column it reads.
    pub column: &'static str,
    pub description: &'static str,
}

/// One component of a strategy's score.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Component {
    pub name: &'static str,
    /// Its weight in the score (the weights of a strategy sum to 1).
    pub weight: f64,
    /// The feature column it reads.
    pub column: &'static str,
    /// The value scoring 0 and the value scoring 1 (linear between, clamped; `lo > hi` means
    /// smaller is better).
    pub lo: f64,
    pub hi: f64,
    pub unit: &'static str,
    pub description: &'static str,
}

/// What the coverage register must show in an authority for a strategy to be ready there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// A field of the record (`energy_rating`, `last_sale`, ...) with a share of addresses.
    Field(&'static str),
    /// The land links: parcels with a measured built coverage.
    LandMeasured,
    /// The title-to-parcel link of company titles.
    TitleLink,
    /// The registered leases linked to addresses.
    LeaseLink,
    /// The listings feed's sweep of addresses.
    ListingSweep,
    /// A dataset loaded (by its `cargo xtask load` name).
    Dataset(&'static str),
}

impl Need {
    fn name(self) -> String {
        match self {
            Need::Field(f) => format!("field:{f}"),
            Need::LandMeasured => "land:measured_coverage".into(),
            Need::TitleLink => "land:title_to_parcel".into(),
            Need::LeaseLink => "link:leases".into(),
            Need::ListingSweep => "link:listings".into(),
            Need::Dataset(d) => format!("dataset:{d}"),
        }
    }
}

/// One strategy preset (specification part 2.8).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Strategy {
    pub id: &'static str,
    pub name: &'static str,
    pub version: &'static str,
    pub asset: Asset,
    pub thesis: &'static str,
    pub filters: Vec<FilterSpec>,
    pub ranking: Vec<Component>,
    /// The feature columns it reads (the sourcing build's `sourcing_features`, or
    /// `parcel_stats` for parcels).
    pub columns: Vec<&'static str>,
    /// What limits it, as a user should read it.
    pub data_gaps: Vec<&'static str>,
    /// The coverage the verdict in `data_ready` reads.
    pub needs: Vec<String>,
    /// With `area`: whether the authority's data is ready for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_ready: Option<DataReady>,
    #[serde(skip)]
    need_list: Vec<Need>,
}

/// A verdict on an authority's data for a strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Readiness {
    /// Every need covers at least half the authority's addresses (or parcels).
    Ready,
    /// Every need is loaded, one covering less than half.
    Partial,
    /// A need is not loaded in the authority, or covers nothing.
    NotReady,
    /// The authority has no coverage register row, so nothing can be told.
    Unknown,
}

/// The share behind one need.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct NeedShare {
    pub need: String,
    /// Null when not loaded.
    pub share: Option<f64>,
    pub loaded: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DataReady {
    pub status: Readiness,
    /// The smallest share among the needs: the coverage share behind the verdict.
    pub coverage_share: Option<f64>,
    pub needs: Vec<NeedShare>,
    /// Why, when not ready or unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The share at or above which a need counts as covering the authority.
pub const READY_SHARE: f64 = 0.5;

fn f(
    key: &'static str,
    kind: FilterKind,
    default: Value,
    unit: &'static str,
    column: &'static str,
    description: &'static str,
) -> FilterSpec {
    FilterSpec {
        key,
        kind,
        default,
        unit,
        column,
        description,
    }
}

fn c(
    name: &'static str,
    weight: f64,
    column: &'static str,
    (lo, hi): (f64, f64),
    unit: &'static str,
    description: &'static str,
) -> Component {
    Component {
        name,
        weight,
        column,
        lo,
        hi,
        unit,
        description,
    }
}

struct Preset {
    id: &'static str,
    name: &'static str,
    asset: Asset,
    thesis: &'static str,
    filters: Vec<FilterSpec>,
    ranking: Vec<Component>,
    data_gaps: Vec<&'static str>,
    needs: Vec<Need>,
}

impl Preset {
    fn strategy(self) -> Strategy {
        let mut columns: Vec<&'static str> = self
            .filters
            .iter()
            .map(|x| x.column)
            .chain(self.ranking.iter().map(|x| x.column))
            .collect();
        columns.sort_unstable();
        columns.dedup();
        Strategy {
            id: self.id,
            name: self.name,
            version: VERSION,
            asset: self.asset,
            thesis: self.thesis,
            filters: self.filters,
            ranking: self.ranking,
            columns,
            data_gaps: self.data_gaps,
            needs: self.needs.iter().map(|n| n.name()).collect(),
            data_ready: None,
            need_list: self.needs,
        }
    }
}

impl Strategy {
    /// The strategy explicit filters make (`custom`): the filters given, and the components of
    /// the presets they belong to.
    pub(crate) fn custom(
        asset: Asset,
        filters: Vec<FilterSpec>,
        ranking: Vec<Component>,
        data_gaps: Vec<&'static str>,
    ) -> Strategy {
        Preset {
            id: "custom",
            name: "Explicit filters",
            asset,
            thesis: "The filters given, ranked by the components of the strategies they belong to.",
            filters,
            ranking,
            data_gaps,
            needs: Vec::new(),
        }
        .strategy()
    }
}

/// Every strategy, in a fixed order.
pub fn all() -> Vec<Strategy> {
    use FilterKind::{Bands, Max, Min, Switch};
    use serde_json::json;
    vec![
        Preset {
            id: "under_built_plots",
            name: "Under-built plots",
            asset: Asset::Parcel,
            thesis: "Large plots carrying little building are the classic infill and redevelopment lead: the land value is in the ground, not in what stands on it.",
            filters: vec![
                f("min_area_m2", Min, json!(400.0), "m2", "parcel.area_m2", "Smallest plot area"),
                f("max_built_coverage", Max, json!(0.25), "share", "parcel.built_coverage", "Largest built footprint as a share of the plot (plots whose coverage is not measured fail it)"),
                f("exclude_open_land", Switch, json!(true), "bool", "parcel.landuse_tier_a", "Leave out open land: parcels whose land use is recreation (parks, sports grounds), transport (railways, roads), agriculture, or utilities and infrastructure; a parcel of unknown use is kept"),
            ],
            ranking: vec![
                c("plot_size", 0.5, "parcel.area_m2", (400.0, 5000.0), "m2", "Larger plots rank higher, up to 5,000 m2"),
                c("unbuilt_share", 0.5, "parcel.built_coverage", (0.25, 0.0), "share", "Less of the plot built on ranks higher"),
            ],
            data_gaps: vec![
                "Built coverage is measured only where building footprints are loaded for the authority; elsewhere a plot cannot pass the coverage ceiling.",
                "Plot coverage is a ground-plane measure: it says nothing about storeys.",
                "Planning constraints and permissions are not filters here: read them per parcel with /v1/sourcing/parcel.",
            ],
            needs: vec![Need::LandMeasured],
        },
        Preset {
            id: "long_held_company_freeholds",
            name: "Long-held company freeholds",
            asset: Asset::Unit,
            thesis: "A company that has held a freehold for many years carries a large paper gain and may be ready to sell off-market, especially when the building no longer suits it.",
            filters: vec![
                f("min_years_owned", Min, json!(15.0), "years", "owner.date_added", "Fewest years since the company was registered as proprietor"),
                f("min_gain_pct", Min, Value::Null, "pct", "valuation.gain_pct", "Smallest paper gain of the valuation over the price the company paid (off by default)"),
            ],
            ranking: vec![
                c("years_owned", 0.6, "owner.date_added", (15.0, 40.0), "years", "Longer held ranks higher, up to 40 years"),
                c("paper_gain", 0.4, "valuation.gain_pct", (0.0, 300.0), "pct", "A larger gain of the valuation over the price paid ranks higher, up to 300%"),
            ],
            data_gaps: vec![
                "Company and overseas company titles only (CCOD, OCOD): individually owned titles are not in the bulk registers.",
                "A title is linked to a unit only where its address matched; the title's price paid is often blank.",
                "Freehold titles only: a company's leasehold interest is not counted here.",
            ],
            needs: vec![Need::Dataset("ccod"), Need::Field("last_sale")],
        },
        Preset {
            id: "short_leases",
            name: "Short leases",
            asset: Asset::Unit,
            thesis: "Flats on short leases sell at a discount and are hard to mortgage; a buyer who can extend the lease captures the difference.",
            filters: vec![
                f("max_lease_years", Max, json!(85.0), "years", "lease.years_remaining", "Most years left on the registered lease"),
                f("min_lease_years", Min, json!(0.0), "years", "lease.years_remaining", "Fewest years left (leave out leases already expired)"),
            ],
            ranking: vec![
                c("shortness", 0.7, "lease.years_remaining", (85.0, 40.0), "years", "Fewer years left ranks higher, down to 40"),
                c("under_80_years", 0.3, "lease.years_remaining", (80.5, 79.5), "years", "Under 80 years, where the premium for an extension includes marriage value"),
            ],
            data_gaps: vec![
                "Registered leases only (HM Land Registry's registered leases dataset), linked to a unit where its address matched.",
                "The term is read from the register's text; a term it could not read is left out.",
            ],
            needs: vec![Need::LeaseLink],
        },
        Preset {
            id: "mees_unlettable",
            name: "MEES-unlettable lets",
            asset: Asset::Unit,
            thesis: "A rented home rated below E may not be let under the Minimum Energy Efficiency Standard: its landlord must improve it or sell, and the certificate shows how far it could go.",
            filters: vec![
                f("bands", Bands, json!(["F", "G"]), "band", "epc.current_band", "The current energy bands to find"),
                f("rented_only", Switch, json!(false), "bool", "epc.tenure", "Only certificates lodged for a rented home"),
            ],
            ranking: vec![
                c("band_gap", 0.6, "epc.current_band", (0.0, 2.0), "bands", "Bands below E: F scores half, G in full"),
                c("improvement_potential", 0.4, "epc.potential_band", (0.0, 4.0), "bands", "Bands the certificate's recommendations could gain, up to four"),
            ],
            data_gaps: vec![
                "Only homes with a lodged certificate; the newest certificate is read and may be years old.",
                "Exemptions registered under MEES are not loaded.",
            ],
            needs: vec![Need::Field("energy_rating")],
        },
        Preset {
            id: "stalled_auction_lots",
            name: "Stalled auction lots",
            asset: Asset::Unit,
            thesis: "A lot offered at auction and not sold is a motivated seller whose price expectations have met the market: an approach after the room is often welcome.",
            filters: vec![
                f("min_unsold_offers", Min, json!(1.0), "count", "auction.unsold_offers", "Fewest auction offers that did not sell"),
            ],
            ranking: vec![
                c("failed_offers", 0.7, "auction.unsold_offers", (1.0, 3.0), "count", "More failed offers rank higher, up to three"),
                c("guide_under_value", 0.3, "auction.last_guide", (0.0, 30.0), "pct", "A last guide further under the valuation ranks higher, up to 30% under"),
            ],
            data_gaps: vec![
                "Only lots in the operator's auction lot feed, matched to a unit; without the feed the strategy finds nothing.",
                "A lot whose outcome is unknown is not counted as unsold.",
            ],
            needs: vec![Need::Dataset("auction_lots")],
        },
        Preset {
            id: "mixed_use_conversions",
            name: "Mixed-use conversions",
            asset: Asset::Unit,
            thesis: "Buildings holding both shops or offices and homes are candidates for conversion of the commercial part, often under permitted development rights.",
            filters: vec![
                f("min_commercial_units", Min, json!(1.0), "count", "building.commercial_units", "Fewest commercial units in the building"),
                f("min_residential_units", Min, json!(1.0), "count", "building.residential_units", "Fewest residential units in the building"),
            ],
            ranking: vec![
                c("commercial_units", 0.6, "building.commercial_units", (1.0, 4.0), "count", "More commercial units to convert rank higher, up to four"),
                c("building_size", 0.4, "building.residential_units", (1.0, 8.0), "count", "Larger buildings rank higher, up to eight homes"),
            ],
            data_gaps: vec![
                "Units are grouped into buildings by their parent UPRN; a building whose units have no parent is not seen as one.",
                "Permitted development rights and Article 4 directions are not filters here: read them per parcel.",
            ],
            needs: vec![Need::Field("property_type")],
        },
        Preset {
            id: "high_yield_lets",
            name: "High-yield lets",
            asset: Asset::Unit,
            thesis: "Homes whose advertised rent is high against their value return more gross income per pound invested.",
            filters: vec![
                f("min_yield_pct", Min, json!(7.0), "pct", "yield.gross_pct", "Smallest gross yield: 12 times the asking rent over the valuation"),
            ],
            ranking: vec![
                c("gross_yield", 1.0, "yield.gross_pct", (5.0, 12.0), "pct", "A higher gross yield ranks higher, up to 12%"),
            ],
            data_gaps: vec![
                "Only units with a rent listing in the listings feed matched to them and a valuation; gross yield is before voids, management, maintenance, ground rent and service charge.",
            ],
            needs: vec![Need::ListingSweep, Need::Field("last_sale")],
        },
        Preset {
            id: "distress_signals",
            name: "Distress signals",
            asset: Asset::Unit,
            thesis: "A home on the market with repeated price cuts, or a long time listed, or a failed auction, has a seller under pressure.",
            filters: vec![
                f("min_reductions", Min, json!(1.0), "count", "listing.reductions", "Fewest price reductions of the live sale listing"),
                f("min_days_listed", Min, Value::Null, "days", "listing.listed_on", "Fewest days on the market (off by default)"),
            ],
            ranking: vec![
                c("reductions", 0.4, "listing.reductions", (1.0, 4.0), "count", "More reductions rank higher, up to four"),
                c("reduction_depth", 0.3, "listing.reduction_pct", (0.0, 20.0), "pct", "A deeper cut from the first asking price ranks higher, up to 20%"),
                c("days_listed", 0.3, "listing.listed_on", (30.0, 365.0), "days", "Longer on the market ranks higher, up to a year"),
            ],
            data_gaps: vec![
                "Only live sale listings in the listings feed, matched to a unit; the feed was first swept on the date its coverage says.",
                "Repossessions, probate and insolvency notices are not loaded.",
            ],
            needs: vec![Need::ListingSweep],
        },
    ]
    .into_iter()
    .map(Preset::strategy)
    .collect()
}

/// The strategy of an id.
pub fn by_id(id: &str) -> Option<Strategy> {
    all().into_iter().find(|s| s.id == id)
}

/// The ids, for error messages and the schema.
pub fn ids() -> Vec<&'static str> {
    all().into_iter().map(|s| s.id).collect()
}

/// A filter's value after overrides: a number, a list of bands, a switch, or off.
#[derive(Debug, Clone, PartialEq)]
pub enum Setting {
    Off,
    Number(f64),
    Bands(Vec<String>),
    Switch(bool),
}

/// The filters of a strategy after the caller's overrides, by key.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings(pub Vec<(&'static str, Setting)>);

impl Settings {
    pub fn get(&self, key: &str) -> &Setting {
        self.0
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
            .unwrap_or(&Setting::Off)
    }

    pub fn number(&self, key: &str) -> Option<f64> {
        match self.get(key) {
            Setting::Number(n) => Some(*n),
            Setting::Off | Setting::Bands(_) | Setting::Switch(_) => None,
        }
    }

    pub fn switch(&self, key: &str) -> bool {
        matches!(self.get(key), Setting::Switch(true))
    }

    pub fn bands(&self, key: &str) -> Option<&[String]> {
        match self.get(key) {
            Setting::Bands(b) => Some(b),
            Setting::Off | Setting::Number(_) | Setting::Switch(_) => None,
        }
    }

    /// The settings as JSON (echoed in the answer).
    pub fn to_json(&self) -> Map<String, Value> {
        self.0
            .iter()
            .map(|(k, v)| {
                let j = match v {
                    Setting::Off => Value::Null,
                    Setting::Number(n) => serde_json::json!(n),
                    Setting::Bands(b) => serde_json::json!(b),
                    Setting::Switch(s) => Value::Bool(*s),
                };
                ((*k).to_string(), j)
            })
            .collect()
    }
}

fn setting(spec: &FilterSpec, v: &Value) -> Result<Setting, String> {
    if v.is_null() {
        return Ok(Setting::Off);
    }
    match spec.kind {
        FilterKind::Min | FilterKind::Max => match v.as_f64() {
            Some(n) if n.is_finite() && (0.0..=1.0e9).contains(&n) => Ok(Setting::Number(n)),
            _ => Err(format!(
                "{} is a number from 0 to 1e9 in {}, or null to switch it off",
                spec.key, spec.unit
            )),
        },
        FilterKind::Switch => v
            .as_bool()
            .map(Setting::Switch)
            .ok_or_else(|| format!("{} is true or false, or null", spec.key)),
        FilterKind::Bands => {
            let err = || {
                format!(
                    "{} is a list of 1 to 7 energy bands A to G, or null",
                    spec.key
                )
            };
            let list = v.as_array().ok_or_else(err)?;
            if list.is_empty() || list.len() > 7 {
                return Err(err());
            }
            let mut bands = Vec::new();
            for b in list {
                let s = b.as_str().ok_or_else(err)?.trim().to_ascii_uppercase();
                if s.len() != 1 || !("A"..="G").contains(&s.as_str()) {
                    return Err(err());
                }
                if !bands.contains(&s) {
                    bands.push(s);
                }
            }
            bands.sort();
            Ok(Setting::Bands(bands))
        }
    }
}

/// The strategy's filters with `overrides` applied: an unknown key, or a value of the wrong
/// kind, is a violation located at `strategy_overrides.<key>`; `null` switches a filter off.
pub fn settings(s: &Strategy, overrides: &Map<String, Value>) -> Result<Settings, Vec<Violation>> {
    let mut errors = Vec::new();
    for k in overrides.keys() {
        if !s.filters.iter().any(|x| x.key == k) {
            let keys: Vec<&str> = s.filters.iter().map(|x| x.key).collect();
            errors.push(
                Violation::new(
                    &["strategy_overrides", k],
                    "value_error",
                    format!(
                        "Value error, {k} is not a filter of {}; its filters are {}",
                        s.id,
                        keys.join(", ")
                    ),
                )
                .with_input(k.clone()),
            );
        }
    }
    let mut out = Vec::new();
    for spec in &s.filters {
        let v = overrides.get(spec.key).unwrap_or(&spec.default);
        match setting(spec, v) {
            Ok(x) => out.push((spec.key, x)),
            Err(msg) => errors.push(
                Violation::new(
                    &["strategy_overrides", spec.key],
                    "value_error",
                    format!("Value error, {msg}"),
                )
                .with_input(v.to_string()),
            ),
        }
    }
    if errors.is_empty() {
        Ok(Settings(out))
    } else {
        Err(errors)
    }
}

/// A component's score of a value: linear from `lo` (0) to `hi` (1), clamped.
pub fn scale(comp: &Component, v: f64) -> f64 {
    if (comp.hi - comp.lo).abs() < f64::EPSILON {
        return if v >= comp.hi { 1.0 } else { 0.0 };
    }
    ((v - comp.lo) / (comp.hi - comp.lo)).clamp(0.0, 1.0)
}

fn need_share(reg: &CoverageRegister, need: Need) -> NeedShare {
    let (share, loaded) = match need {
        Need::Field(name) => reg
            .fields
            .iter()
            .find(|x| x.field == name)
            .map(|x| (x.share, x.status == LoadStatus::Loaded))
            .unwrap_or((None, false)),
        Need::LandMeasured => reg
            .land
            .as_ref()
            .map(|l| (l.measured_share, l.status == LoadStatus::Loaded))
            .unwrap_or((None, false)),
        Need::TitleLink => reg
            .land
            .as_ref()
            .map(|l| (l.title_share, l.status == LoadStatus::Loaded))
            .unwrap_or((None, false)),
        Need::LeaseLink => (
            reg.lease_link.share,
            reg.lease_link.status == LoadStatus::Loaded,
        ),
        Need::ListingSweep => (
            reg.listing_sweep.share,
            reg.listing_sweep.status == LoadStatus::Loaded,
        ),
        Need::Dataset(name) => {
            let loaded = reg
                .datasets
                .iter()
                .any(|d| d.dataset == name && d.status == LoadStatus::Loaded);
            (loaded.then_some(1.0), loaded)
        }
    };
    NeedShare {
        need: need.name(),
        share: if loaded { share } else { None },
        loaded,
    }
}

/// The verdict on an authority's register for a strategy; `None` register: `unknown`.
pub fn data_ready(s: &Strategy, reg: Option<&CoverageRegister>) -> DataReady {
    let Some(reg) = reg else {
        return DataReady {
            status: Readiness::Unknown,
            coverage_share: None,
            needs: Vec::new(),
            reason: Some(
                "the authority has no coverage register row (nothing of it was loaded when the register was last built)"
                    .into(),
            ),
        };
    };
    let needs: Vec<NeedShare> = s.need_list.iter().map(|n| need_share(reg, *n)).collect();
    let least = needs
        .iter()
        .map(|n| n.share.unwrap_or(0.0))
        .fold(f64::INFINITY, f64::min);
    let coverage_share = needs.iter().all(|n| n.share.is_some()).then_some(least);
    let missing: Vec<&str> = needs
        .iter()
        .filter(|n| !n.loaded || n.share.unwrap_or(0.0) <= 0.0)
        .map(|n| n.need.as_str())
        .collect();
    let (status, reason) = if !missing.is_empty() {
        (
            Readiness::NotReady,
            Some(format!(
                "not loaded or covering nothing in the authority: {}",
                missing.join(", ")
            )),
        )
    } else if least < READY_SHARE {
        (
            Readiness::Partial,
            Some(format!(
                "loaded, but the thinnest need covers {:.0}% of the authority (ready from {:.0}%)",
                least * 100.0,
                READY_SHARE * 100.0
            )),
        )
    } else {
        (Readiness::Ready, None)
    };
    DataReady {
        status,
        coverage_share,
        needs,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn eight_strategies_with_weights_summing_to_one_and_known_filter_columns() {
        let all = all();
        assert!(all.len() >= 8);
        for s in &all {
            let w: f64 = s.ranking.iter().map(|c| c.weight).sum();
            assert!((w - 1.0).abs() < 1e-9, "{} weights sum to {w}", s.id);
            assert!(!s.filters.is_empty() && !s.data_gaps.is_empty());
            assert!(s.columns.len() >= s.ranking.len().min(1));
            // Every default is a valid setting of its own filter.
            assert!(settings(s, &Map::new()).is_ok(), "{}", s.id);
        }
        let mut ids = ids();
        ids.dedup();
        assert_eq!(ids.len(), all.len());
    }

    #[test]
    fn overrides_replace_defaults_null_switches_off_and_unknown_keys_are_refused() {
        let s = by_id("short_leases").expect("preset");
        let mut o = Map::new();
        o.insert("max_lease_years".into(), json!(70));
        o.insert("min_lease_years".into(), Value::Null);
        let set = settings(&s, &o).expect("valid");
        assert_eq!(set.number("max_lease_years"), Some(70.0));
        assert_eq!(set.get("min_lease_years"), &Setting::Off);
        o.insert("max_yield".into(), json!(3));
        o.insert("max_lease_years".into(), json!("long"));
        let errs = settings(&s, &o).expect_err("refused");
        assert_eq!(errs.len(), 2);
        let m = by_id("mees_unlettable").expect("preset");
        let mut o = Map::new();
        o.insert("bands".into(), json!(["g", "F", "G"]));
        assert_eq!(
            settings(&m, &o).expect("valid").bands("bands"),
            Some(&["F".to_string(), "G".to_string()][..])
        );
        o.insert("bands".into(), json!(["H"]));
        assert!(settings(&m, &o).is_err());
    }

    #[test]
    fn scales_are_linear_clamped_and_may_run_downwards() {
        let s = by_id("short_leases").expect("preset");
        let shortness = &s.ranking[0];
        assert_eq!(scale(shortness, 85.0), 0.0);
        assert_eq!(scale(shortness, 40.0), 1.0);
        assert!((scale(shortness, 62.5) - 0.5).abs() < 1e-9);
        assert_eq!(scale(shortness, 10.0), 1.0);
        let cliff = &s.ranking[1];
        assert_eq!(scale(cliff, 79.0), 1.0);
        assert_eq!(scale(cliff, 81.0), 0.0);
    }

    #[test]
    fn an_authority_without_a_register_row_is_unknown() {
        let s = by_id("under_built_plots").expect("preset");
        let d = data_ready(&s, None);
        assert_eq!(d.status, Readiness::Unknown);
        assert!(d.reason.is_some());
    }
}

/// `GET /v1/sourcing/strategies`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StrategiesAnswer {
    pub version: &'static str,
    /// The authority `data_ready` was judged for (`lad:<GSS code>`), when one was given.
    pub area: Option<String>,
    /// The share at or above which a need counts as covering the authority.
    pub ready_share: f64,
    pub strategies: Vec<Strategy>,
    pub note: &'static str,
}

/// Every strategy; with `lad` (a local authority's GSS code), each with its `data_ready`.
pub async fn strategies(
    ctx: &crate::SourcingCtx,
    lad: Option<&str>,
) -> Result<StrategiesAnswer, crate::SourcingError> {
    let mut all = all();
    let mut area = None;
    if let Some(code) = lad {
        let id = ctx.known_lad(code).await?;
        let reg = match terrace_areas::coverage::coverage(&ctx.areas, &id.to_string()).await {
            Ok(r) => Some(r),
            Err(terrace_areas::AreasError::NotFound(_)) => None,
            Err(terrace_areas::AreasError::Invalid(v)) => {
                return Err(crate::SourcingError::Invalid(v));
            }
            Err(terrace_areas::AreasError::Store(e)) => return Err(e.into()),
        };
        for s in &mut all {
            s.data_ready = Some(data_ready(s, reg.as_ref()));
        }
        area = Some(id.to_string());
    }
    Ok(StrategiesAnswer {
        version: VERSION,
        area,
        ready_share: READY_SHARE,
        strategies: all,
        note: "Each strategy's filters can be overridden in POST /v1/sourcing/search (`strategy_overrides`: a value replaces the default, null switches the filter off, an unknown key is refused). A score is the sum of its components' contributions, each a feature mapped linearly onto 0..1 between the component's lo and hi and multiplied by its weight. data_ready reads the coverage register of the authority (GET /v1/areas/coverage).",
    })
}
