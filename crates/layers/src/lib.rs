//! The spatial layers: designations, flood, coal, heritage, substations and renewable projects,
//! held in memory as R-trees, and the risk report evaluated over them (specification part 2.8):
//! flood, coal, heritage, environmental designations, planning constraints and infrastructure,
//! every flag three-valued, and the risk batch.
//!
//! A flag is `true` when a loaded feature of one of its datasets matches the property's point
//! (a polygon contains it, or a point feature lies within [`POINT_RADIUS_M`]); `false` only when
//! at least one of its datasets is loaded for the property's local authority and nothing
//! matches; `not_checked` otherwise (no dataset loaded for the area, no position, no known
//! authority). Each flag names the datasets it consulted, with their source and vintage, and the
//! datasets of the flag that are not loaded for the area.
//!
//! The spatial work runs on in-memory indices ([`Layers`]) built from the store and cached in a
//! [`LayerCache`], rebuilt when a load changes a layer (`spatial_layers_version` in `meta`).
//! [`report_from`] is the one flag evaluation: the risk report, the record's risk, designation
//! and infrastructure tiers, and planning's designation flags all read it.
//!
//! Architecture Invariant: plain functions over the store, no HTTP or MCP types; `false` is only
//! ever said where a dataset of the flag is loaded for the property's local authority. Errors
//! are the store's shared `LookupError` (`NotFound`, `Store`).

use chrono::{NaiveDate, NaiveDateTime};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};
use terrace_core::{Flag, Uprn, UprnEntry};
use terrace_geo::{PointIndex, PolygonIndex};
use terrace_store::Db;
use terrace_store::spatial;
use terrace_store::{address, meta};

use terrace_store::LookupError;

/// A point feature (a protected tree, a listed building's point) matches a property within this
/// many metres of the property's point.
pub const POINT_RADIUS_M: f64 = 15.0;
/// A flood defence "near" the property lies within this many metres.
pub const DEFENCE_RADIUS_M: f64 = 250.0;

/// One loaded feature, as the indices hold it.
#[derive(Debug, Clone)]
struct Feature {
    dataset: String,
    reference: Option<String>,
    name: Option<String>,
    category: Option<String>,
    status: Option<String>,
    value: Option<f64>,
    organisation: Option<String>,
    source: String,
    entry_date: Option<NaiveDate>,
    loaded_at: NaiveDateTime,
}

/// Where a dataset was loaded for one local authority.
#[derive(Debug, Clone)]
struct Covered {
    vintage: Option<NaiveDate>,
    source: String,
    loaded_at: NaiveDateTime,
}

/// The spatial layers in memory: per dataset, an R-tree of its polygons and one of its points,
/// and which dataset is loaded for which local authority.
#[derive(Debug, Default)]
pub struct Layers {
    features: Vec<Feature>,
    areas: HashMap<String, PolygonIndex<usize>>,
    points: HashMap<String, PointIndex<usize>>,
    coverage: HashMap<(String, String), Covered>,
    /// Features whose stored geometry could not be decoded (never matched).
    pub unreadable: usize,
}

impl Layers {
    /// Reads every feature and coverage row from the store and builds the indices.
    /// Features that have ended (planning.data.gov.uk `end-date`) are left out.
    pub async fn build(db: &Db) -> Result<Layers, LookupError> {
        let mut layers = Layers::default();
        let mut areas: BTreeMap<String, Vec<(geo::MultiPolygon<f64>, usize)>> = BTreeMap::new();
        let mut points: BTreeMap<String, Vec<PointSlot>> = BTreeMap::new();
        let mut after = String::new();
        loop {
            let page = spatial::features_page(db, &after, 5_000).await?;
            let Some(last) = page.last() else { break };
            after = last.id.clone();
            for r in page {
                if r.status.as_deref() == Some("ended") {
                    continue;
                }
                let slot = layers.features.len();
                match (&r.wkb, r.x, r.y) {
                    (Some(wkb), _, _) => match terrace_geo::multipolygon_from_wkb(wkb) {
                        Ok(mp) => areas.entry(r.dataset.clone()).or_default().push((mp, slot)),
                        Err(_) => {
                            layers.unreadable += 1;
                            continue;
                        }
                    },
                    (None, Some(x), Some(y)) => points
                        .entry(r.dataset.clone())
                        .or_default()
                        .push(((x, y), slot)),
                    (None, _, _) => {
                        layers.unreadable += 1;
                        continue;
                    }
                }
                layers.features.push(Feature {
                    dataset: r.dataset,
                    reference: r.reference,
                    name: r.name,
                    category: r.category,
                    status: r.status,
                    value: r.value,
                    organisation: r.organisation,
                    source: r.source,
                    entry_date: r.entry_date,
                    loaded_at: r.updated_at,
                });
            }
        }
        layers.areas = areas
            .into_iter()
            .map(|(d, items)| (d, PolygonIndex::build(items)))
            .collect();
        layers.points = points
            .into_iter()
            .map(|(d, items)| (d, PointIndex::build(items)))
            .collect();
        layers.coverage = spatial::all_coverage(db)
            .await?
            .into_iter()
            .map(|c| {
                (
                    (c.dataset, c.lad_code),
                    Covered {
                        vintage: c.vintage,
                        source: c.source,
                        loaded_at: c.updated_at,
                    },
                )
            })
            .collect();
        Ok(layers)
    }

    /// The features of `dataset` matching the point: polygons within `radius` (0: containing),
    /// points within `max(radius, POINT_RADIUS_M)`; with the distance for points and radii.
    fn matches(&self, dataset: &str, p: (f64, f64), radius: f64) -> Vec<(usize, Option<f64>)> {
        let mut out: Vec<(usize, Option<f64>)> = Vec::new();
        if let Some(idx) = self.areas.get(dataset) {
            let found = if radius > 0.0 {
                idx.within_distance(p, radius)
            } else {
                idx.containing(p)
            };
            out.extend(found.into_iter().map(|s| (*s, None)));
        }
        if let Some(idx) = self.points.get(dataset) {
            out.extend(
                idx.within_distance(p, radius.max(POINT_RADIUS_M))
                    .into_iter()
                    .map(|(s, d)| (*s, Some(round1(d)))),
            );
        }
        out
    }

    fn covered(&self, dataset: &str, lad: &str) -> Option<&Covered> {
        self.coverage.get(&(dataset.to_string(), lad.to_string()))
    }

    /// Where `dataset` is loaded for local authority `lad`: its source, vintage and load time.
    pub fn coverage_of(&self, dataset: &str, lad: &str) -> Option<SourceRef> {
        self.covered(dataset, lad).map(|c| SourceRef {
            dataset: dataset.to_string(),
            source: c.source.clone(),
            vintage: c.vintage,
            loaded_at: c.loaded_at,
        })
    }

    /// The live features of `dataset` affecting `scope`: at a point, polygons containing it (or
    /// within `buffer_m`) and point features within `max(buffer_m, POINT_RADIUS_M)`; over an
    /// area, polygons and points inside it or within `buffer_m` of it. In index order.
    pub fn designations(&self, dataset: &str, scope: Scope<'_>, buffer_m: f64) -> Vec<Designation> {
        let mut slots: Vec<(usize, Option<f64>)> = Vec::new();
        match scope {
            Scope::Point(p) => slots = self.matches(dataset, p, buffer_m),
            Scope::Area(area) => {
                if let Some(idx) = self.areas.get(dataset) {
                    slots.extend(
                        idx.near_area(area, buffer_m)
                            .into_iter()
                            .map(|s| (*s, None)),
                    );
                }
                if let Some(idx) = self.points.get(dataset) {
                    slots.extend(
                        idx.in_area(area, buffer_m)
                            .into_iter()
                            .map(|(s, d)| (*s, (d > 0.0).then(|| round1(d)))),
                    );
                }
            }
        }
        slots
            .into_iter()
            .filter_map(|(slot, distance_m)| {
                let f = self.features.get(slot)?;
                Some(Designation {
                    dataset: f.dataset.clone(),
                    reference: f.reference.clone(),
                    name: f.name.clone(),
                    category: f.category.clone(),
                    organisation: f.organisation.clone(),
                    distance_m,
                    source: f.source.clone(),
                    entry_date: f.entry_date,
                    loaded_at: f.loaded_at,
                })
            })
            .collect()
    }
}

/// Where a designation query looks: a point (BNG metres) or an area.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    Point((f64, f64)),
    Area(&'a geo::MultiPolygon<f64>),
}

/// One loaded feature affecting a location or an area.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Designation {
    /// The dataset (`conservation-area`, `green-belt`, ...).
    pub dataset: String,
    /// The publisher's identifier of the entry (planning.data.gov.uk's `entity`).
    pub reference: Option<String>,
    pub name: Option<String>,
    /// A grade, flood zone or classification where the dataset has one.
    pub category: Option<String>,
    /// The publishing organisation, as the publisher identifies it.
    pub organisation: Option<String>,
    /// Metres from the location (point features, and features found within the buffer); null
    /// when the feature contains or overlaps it.
    pub distance_m: Option<f64>,
    /// The provenance of the loaded row.
    pub source: String,
    /// The publisher's entry date, when it gives one.
    pub entry_date: Option<NaiveDate>,
    /// When the row was last loaded.
    pub loaded_at: NaiveDateTime,
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// Layers with the `spatial_layers_version` they were built at.
type Versioned = (Option<String>, Arc<Layers>);

/// A point feature's position and its slot in `Layers::features`.
type PointSlot = ((f64, f64), usize);

/// The layers as last built, rebuilt when `spatial_layers_version` changes. Cheap to clone
/// (shared); one per process.
#[derive(Debug, Clone, Default)]
pub struct LayerCache {
    inner: Arc<RwLock<Option<Versioned>>>,
}

impl LayerCache {
    /// The current layers (one `meta` read; a rebuild when a load changed them).
    pub async fn current(&self, db: &Db) -> Result<Arc<Layers>, LookupError> {
        let version = meta::get(db, meta::Key::SpatialLayersVersion).await?;
        if let Ok(guard) = self.inner.read()
            && let Some((v, layers)) = guard.as_ref()
            && *v == version
        {
            return Ok(layers.clone());
        }
        let layers = Arc::new(Layers::build(db).await?);
        if let Ok(mut guard) = self.inner.write() {
            *guard = Some((version, layers.clone()));
        }
        Ok(layers)
    }
}

/// A dataset a flag consulted: loaded for the property's local authority.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SourceRef {
    /// The dataset (`conservation-area`, `ea-flood-zones`, ...).
    pub dataset: String,
    /// The provenance of the loaded rows (`planning_data_gov_uk`, `fixture:ea_flood_zones`, ...).
    pub source: String,
    /// The newest publisher's date among the dataset's features in the area, when it has one.
    pub vintage: Option<NaiveDate>,
    /// When the dataset was last loaded for the area.
    pub loaded_at: NaiveDateTime,
}

/// A feature that matched.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Match {
    pub dataset: String,
    pub reference: Option<String>,
    pub name: Option<String>,
    /// Flood zone, risk band, grade, ... where the dataset has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Metres from the property's point, for point features and distance rules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance_m: Option<f64>,
    pub source: String,
}

/// One three-valued flag with what it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Check {
    /// `true`, `false` or `"not_checked"`.
    pub value: Flag,
    /// Why the flag is not_checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The rule: what counts as a match.
    pub rule: String,
    /// The datasets consulted (loaded for the property's local authority), with vintage.
    pub sources: Vec<SourceRef>,
    /// The flag's datasets that are not loaded for the property's local authority.
    pub not_loaded: Vec<String>,
    pub matches: Vec<Match>,
}

/// How a flag is decided.
struct FlagDef {
    name: &'static str,
    datasets: &'static [&'static str],
    /// Only features of these categories count (None: all).
    categories: Option<&'static [&'static str]>,
    /// 0: a polygon contains the point (or a point feature within POINT_RADIUS_M); else within
    /// this many metres.
    radius: f64,
}

const fn def(name: &'static str, datasets: &'static [&'static str]) -> FlagDef {
    FlagDef {
        name,
        datasets,
        categories: None,
        radius: 0.0,
    }
}

const FLOOD_ZONES: &[&str] = &["ea-flood-zones", "flood-risk-zone"];
const FLOOD: &[FlagDef] = &[
    FlagDef {
        name: "in_flood_zone_3",
        datasets: FLOOD_ZONES,
        categories: Some(&["FZ3"]),
        radius: 0.0,
    },
    FlagDef {
        name: "in_flood_zone_2",
        datasets: FLOOD_ZONES,
        categories: Some(&["FZ2"]),
        radius: 0.0,
    },
    def("historic_flooding", &["ea-historic-flood-map"]),
    FlagDef {
        name: "flood_defence_within_250m",
        datasets: &["ea-spatial-flood-defences"],
        categories: None,
        radius: DEFENCE_RADIUS_M,
    },
    def(
        "rivers_and_sea_risk_area",
        &["ea-risk-of-flooding-rivers-sea"],
    ),
    def(
        "surface_water_risk_area",
        &["ea-risk-of-flooding-surface-water"],
    ),
];
const COAL: &[FlagDef] = &[def(
    "development_high_risk_area",
    &["coal-development-high-risk-area"],
)];
const HERITAGE: &[FlagDef] = &[
    def(
        "listed_building",
        &["listed-building-outline", "listed-building"],
    ),
    def("conservation_area", &["conservation-area"]),
    def("scheduled_monument", &["scheduled-monument"]),
    def("heritage_at_risk", &["heritage-at-risk"]),
];
const ENVIRONMENTAL: &[FlagDef] = &[
    def("green_belt", &["green-belt"]),
    def(
        "site_of_special_scientific_interest",
        &["site-of-special-scientific-interest"],
    ),
    def(
        "area_of_outstanding_natural_beauty",
        &["area-of-outstanding-natural-beauty"],
    ),
    def("national_park", &["national-park"]),
    def("ancient_woodland", &["ancient-woodland"]),
    def(
        "air_quality_management_area",
        &["air-quality-management-area"],
    ),
];
/// Agricultural land: a classification polygon of an agricultural grade (1 to 5) contains the
/// point; `non_agricultural` and `urban` land, or no polygon, is false where the dataset is
/// loaded. Not part of the risk report's groups: the planning check reads it alone.
const AGRICULTURAL_LAND: FlagDef = FlagDef {
    name: "agricultural_land",
    datasets: &["agricultural-land-classification"],
    categories: Some(&["1", "2", "3", "3a", "3b", "4", "5"]),
    radius: 0.0,
};

/// The agricultural land flag at an address's point, three-valued like every other flag.
pub fn agricultural_land(layers: &Layers, a: &address::AddressRow) -> Check {
    let at = At {
        point: a.x.zip(a.y),
        lad: a.lad_code.as_deref(),
    };
    check(layers, &AGRICULTURAL_LAND, at)
}

const PLANNING: &[FlagDef] = &[
    def("article_4_direction", &["article-4-direction-area"]),
    def("tree_preservation", &["tree-preservation-zone", "tree"]),
    def("brownfield_land", &["brownfield-land"]),
];

/// Where the property is, for the spatial checks.
#[derive(Debug, Clone, Copy)]
struct At<'a> {
    point: Option<(f64, f64)>,
    lad: Option<&'a str>,
}

fn rule_text(d: &FlagDef) -> String {
    let what = if d.radius > 0.0 {
        format!(
            "a feature lies within {} m of the property's point",
            d.radius
        )
    } else {
        format!(
            "a polygon contains the property's point, or a point feature lies within {POINT_RADIUS_M} m"
        )
    };
    match d.categories {
        Some(c) => format!("{what} ({} only)", c.join(", ")),
        None => what,
    }
}

fn check(layers: &Layers, d: &FlagDef, at: At<'_>) -> Check {
    let mut c = Check {
        value: Flag::NOT_CHECKED,
        reason: None,
        rule: rule_text(d),
        sources: Vec::new(),
        not_loaded: Vec::new(),
        matches: Vec::new(),
    };
    let Some(p) = at.point else {
        c.reason = Some("the property has no coordinates, so no spatial check was made".into());
        c.not_loaded = d.datasets.iter().map(|s| s.to_string()).collect();
        return c;
    };
    for ds in d.datasets {
        match at.lad.and_then(|lad| layers.covered(ds, lad)) {
            Some(cov) => c.sources.push(SourceRef {
                dataset: ds.to_string(),
                source: cov.source.clone(),
                vintage: cov.vintage,
                loaded_at: cov.loaded_at,
            }),
            None => c.not_loaded.push(ds.to_string()),
        }
        for (slot, distance_m) in layers.matches(ds, p, d.radius) {
            let Some(f) = layers.features.get(slot) else {
                continue;
            };
            if let Some(cats) = d.categories
                && !f.category.as_deref().is_some_and(|x| cats.contains(&x))
            {
                continue;
            }
            c.matches.push(Match {
                dataset: f.dataset.clone(),
                reference: f.reference.clone(),
                name: f.name.clone(),
                category: f.category.clone(),
                distance_m,
                source: f.source.clone(),
            });
        }
    }
    // A match is a fact wherever its dataset is loaded; "nothing matches" is only an answer
    // where a dataset of the flag is loaded for the property's authority.
    c.value = if !c.matches.is_empty() {
        Flag::TRUE
    } else if !c.sources.is_empty() {
        Flag::FALSE
    } else {
        c.reason = Some(match at.lad {
            Some(lad) => format!(
                "{} not loaded for local authority {lad}",
                d.datasets.join(" / ")
            ),
            None => {
                "the property's local authority is not known, so coverage cannot be told".into()
            }
        });
        Flag::NOT_CHECKED
    };
    c
}

fn group(layers: &Layers, defs: &[FlagDef], at: At<'_>) -> BTreeMap<String, Check> {
    defs.iter()
        .map(|d| (d.name.to_string(), check(layers, d, at)))
        .collect()
}

/// The flood group: the flags, the planning flood zone they imply, and the highest risk bands.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FloodGroup {
    /// `"3"`, `"2"`, `"1"` (checked and in neither zone 2 nor 3) or `"not_checked"`.
    pub zone: String,
    /// The highest band (`high`, `medium`, `low`, `very_low`) of the rivers-and-sea risk areas
    /// containing the point; null when none does or the layer is not checked.
    pub rivers_and_sea_band: Option<String>,
    /// The same for surface water.
    pub surface_water_band: Option<String>,
    #[serde(flatten)]
    pub flags: BTreeMap<String, Check>,
}

/// A nearest feature (substation, renewable project), or not_checked.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Nearest {
    /// `ok` or `not_checked` (the dataset is not loaded for the property's authority, or the
    /// property has no position), or `none_loaded` when the area is covered but holds none.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub name: Option<String>,
    pub reference: Option<String>,
    pub distance_m: Option<f64>,
    /// A substation's published headroom (MVA); a renewable project's installed capacity (MW).
    /// Null when the publisher gives none (never zero).
    pub value: Option<f64>,
    /// What `value` is.
    pub value_unit: &'static str,
    /// A substation's voltage; a project's technology.
    pub category: Option<String>,
    /// A project's development status.
    pub status_detail: Option<String>,
    /// The network operator, or the project's operator or applicant.
    pub operator: Option<String>,
    pub sources: Vec<SourceRef>,
}

fn nearest(layers: &Layers, dataset: &str, unit: &'static str, at: At<'_>) -> Nearest {
    let mut n = Nearest {
        status: "not_checked",
        reason: None,
        name: None,
        reference: None,
        distance_m: None,
        value: None,
        value_unit: unit,
        category: None,
        status_detail: None,
        operator: None,
        sources: Vec::new(),
    };
    let (Some(p), Some(lad)) = (at.point, at.lad) else {
        n.reason = Some("the property has no coordinates or no known local authority".into());
        return n;
    };
    let Some(cov) = layers.covered(dataset, lad) else {
        n.reason = Some(format!("{dataset} not loaded for local authority {lad}"));
        return n;
    };
    n.sources.push(SourceRef {
        dataset: dataset.to_string(),
        source: cov.source.clone(),
        vintage: cov.vintage,
        loaded_at: cov.loaded_at,
    });
    let found = layers
        .points
        .get(dataset)
        .and_then(|idx| idx.nearest_where(p, |_| true))
        .and_then(|(slot, d)| layers.features.get(*slot).map(|f| (f, d)));
    match found {
        Some((f, d)) => {
            n.status = "ok";
            n.name = f.name.clone();
            n.reference = f.reference.clone();
            n.distance_m = Some(round1(d));
            n.value = f.value;
            n.category = f.category.clone();
            n.status_detail = f.status.clone();
            n.operator = f.organisation.clone();
        }
        None => {
            n.status = "none_loaded";
            n.reason = Some(format!("{dataset} holds no feature"));
        }
    }
    n
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Infrastructure {
    /// The nearest electricity substation, with its published headroom.
    pub substation: Nearest,
    /// The nearest project of the Renewable Energy Planning Database.
    pub renewable_project: Nearest,
}

/// What is true and what was never checked, as `group.flag` names.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RiskSummary {
    pub true_flags: Vec<String>,
    pub false_flags: Vec<String>,
    pub not_checked: Vec<String>,
    /// Datasets not loaded for the property's local authority, so never checked here.
    pub datasets_not_loaded: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RiskReport {
    pub uprn: i64,
    pub country: &'static str,
    /// The local authority whose coverage decides what was checked.
    pub local_authority: Option<String>,
    pub easting: Option<f64>,
    pub northing: Option<f64>,
    pub flood: FloodGroup,
    pub coal: BTreeMap<String, Check>,
    pub heritage: BTreeMap<String, Check>,
    pub environmental_designations: BTreeMap<String, Check>,
    pub planning: BTreeMap<String, Check>,
    pub infrastructure: Infrastructure,
    pub summary: RiskSummary,
    pub notes: Vec<&'static str>,
}

const NOTES: &[&str] = &[
    "Flags are true, false or not_checked: false means a dataset of the flag is loaded for this local authority and no feature matches; not_checked means none is loaded here (or the property has no position).",
    "Each flag lists the datasets it consulted with their source and vintage, and those not loaded for this area.",
    "Flood zones are the planning flood zones (rivers and sea, ignoring defences); risk bands are the Environment Agency's likelihood bands. Neither is an insurance assessment.",
];

fn band_rank(b: &str) -> u8 {
    match b {
        "high" => 4,
        "medium" => 3,
        "low" => 2,
        "very_low" => 1,
        _ => 0,
    }
}

fn highest_band(c: &Check) -> Option<String> {
    c.matches
        .iter()
        .filter_map(|m| m.category.clone())
        .max_by_key(|b| band_rank(b))
}

/// The risk report of one property from the given layers.
pub fn report_from(layers: &Layers, a: &address::AddressRow) -> RiskReport {
    let at = At {
        point: a.x.zip(a.y),
        lad: a.lad_code.as_deref(),
    };
    let flags = group(layers, FLOOD, at);
    let zone = match (
        flags.get("in_flood_zone_3").map(|c| c.value),
        flags.get("in_flood_zone_2").map(|c| c.value),
    ) {
        (Some(Flag::Known(true)), _) => "3",
        (_, Some(Flag::Known(true))) => "2",
        (Some(Flag::Known(false)), Some(Flag::Known(false))) => "1",
        _ => "not_checked",
    };
    let flood = FloodGroup {
        zone: zone.to_string(),
        rivers_and_sea_band: flags.get("rivers_and_sea_risk_area").and_then(highest_band),
        surface_water_band: flags.get("surface_water_risk_area").and_then(highest_band),
        flags,
    };
    let coal = group(layers, COAL, at);
    let heritage = group(layers, HERITAGE, at);
    let environmental_designations = group(layers, ENVIRONMENTAL, at);
    let planning = group(layers, PLANNING, at);
    let infrastructure = Infrastructure {
        substation: nearest(layers, "substations", "MVA headroom", at),
        renewable_project: nearest(layers, "repd", "MW installed capacity", at),
    };
    let mut summary = RiskSummary {
        true_flags: Vec::new(),
        false_flags: Vec::new(),
        not_checked: Vec::new(),
        datasets_not_loaded: Vec::new(),
    };
    for (gname, g) in [
        ("flood", &flood.flags),
        ("coal", &coal),
        ("heritage", &heritage),
        ("environmental_designations", &environmental_designations),
        ("planning", &planning),
    ] {
        for (name, c) in g {
            let key = format!("{gname}.{name}");
            match c.value {
                Flag::Known(true) => summary.true_flags.push(key),
                Flag::Known(false) => summary.false_flags.push(key),
                Flag::NotChecked(_) => summary.not_checked.push(key),
            }
            summary
                .datasets_not_loaded
                .extend(c.not_loaded.iter().cloned());
        }
    }
    for (name, n) in [
        ("infrastructure.substation", &infrastructure.substation),
        (
            "infrastructure.renewable_project",
            &infrastructure.renewable_project,
        ),
    ] {
        if n.status == "not_checked" {
            summary.not_checked.push(name.to_string());
        }
    }
    for (ds, n) in [
        ("substations", &infrastructure.substation),
        ("repd", &infrastructure.renewable_project),
    ] {
        if n.status == "not_checked" {
            summary.datasets_not_loaded.push(ds.to_string());
        }
    }
    summary.datasets_not_loaded.sort();
    summary.datasets_not_loaded.dedup();
    RiskReport {
        uprn: a.uprn,
        country: "UK",
        local_authority: a.lad_code.clone(),
        easting: a.x,
        northing: a.y,
        flood,
        coal,
        heritage,
        environmental_designations,
        planning,
        infrastructure,
        summary,
        notes: NOTES.to_vec(),
    }
}

/// The risk report of a UPRN.
pub async fn risk(db: &Db, cache: &LayerCache, uprn: Uprn) -> Result<RiskReport, LookupError> {
    let a = address::address(db, uprn.get())
        .await?
        .ok_or_else(|| LookupError::NotFound(format!("UPRN {uprn}")))?;
    let layers = cache.current(db).await?;
    Ok(report_from(&layers, &a))
}

/// The outcome of one item of a risk batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RiskOutcome {
    Ok,
    NotFound,
    Error,
}

/// One item of a risk batch, in input order.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RiskBatchItem {
    /// The UPRN as given.
    pub uprn: serde_json::Value,
    pub outcome: RiskOutcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<RiskReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RiskBatch {
    pub items: Vec<RiskBatchItem>,
    /// Items with a result (`ok`): the batch is charged for these only.
    pub answered: usize,
}

/// Answers each UPRN as the single call would; one item's failure never fails the batch.
pub async fn risk_batch(
    db: &Db,
    cache: &LayerCache,
    uprns: &[UprnEntry],
) -> Result<RiskBatch, LookupError> {
    let layers = cache.current(db).await?;
    let mut items = Vec::with_capacity(uprns.len());
    for UprnEntry { given, uprn } in uprns {
        let item = |outcome, result, error| RiskBatchItem {
            uprn: given.clone(),
            outcome,
            result,
            error,
        };
        items.push(match uprn {
            None => item(
                RiskOutcome::Error,
                None,
                Some("not a UPRN: a positive integer of at most 12 digits".to_string()),
            ),
            Some(u) => match address::address(db, u.get()).await {
                Ok(Some(a)) => item(RiskOutcome::Ok, Some(report_from(&layers, &a)), None),
                Ok(None) => item(RiskOutcome::NotFound, None, None),
                Err(e) => item(
                    RiskOutcome::Error,
                    None,
                    Some(format!("the store could not answer: {e}")),
                ),
            },
        });
    }
    let answered = items
        .iter()
        .filter(|i| matches!(i.outcome, RiskOutcome::Ok))
        .count();
    Ok(RiskBatch { items, answered })
}

terrace_core::status_text!(RiskOutcome);
