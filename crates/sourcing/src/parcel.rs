//! One parcel in full (`GET /v1/sourcing/parcel`), and what the land assembly and the owners
//! look-up share with it: the four ways of naming a parcel ([`ParcelRef`]), the company-owned
//! titles linked to parcels ([`linked_titles`]) and a parcel's constraint flags
//! ([`parcel_constraints`]).
//!
//! A parcel is an HM Land Registry INSPIRE index polygon; its key in the store is its INSPIRE id,
//! so `parcel_id` (that id as text, as search and plot utilisation return it) and `inspire_id`
//! name the same parcel. The INSPIRE polygons carry no owner and no title number: a title is
//! linked only where a company-owned title (CCOD/OCOD) was matched to a UPRN whose point lies in
//! the parcel, so a parcel with no linked title says why rather than naming nobody.

use crate::{SourcingCtx, SourcingError};
use geo::{Distance, Euclidean, InteriorPoint, MultiPolygon};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use terrace_core::{Flag, Unavailable, Violation};
use terrace_layers::{Check, Layers, Match, SourceRef};
use terrace_ownership::titles::{ProprietorRecord, Register};
use terrace_store::Db;
use terrace_store::address::AddressRow;
use terrace_store::land::{self, ParcelRow, ParcelStatsRow};
use terrace_store::sourcing;

/// How a parcel is named: exactly one of the four.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParcelRef {
    /// The parcel id search and plot utilisation return (the INSPIRE id as text).
    ParcelId(i64),
    /// HM Land Registry's INSPIRE id (the same number).
    InspireId(i64),
    /// A UPRN: the parcel its point lies in.
    Uprn(i64),
    /// A title number (upper case): the parcel(s) its linked company title lies on.
    TitleNumber(String),
}

const ONE_RULE: &str =
    "Value error, give exactly one of uprn, parcel_id, inspire_id and title_number";
const PARCEL_ID_RULE: &str = "a parcel id is the parcel's INSPIRE id as text: 1 to 18 digits";
const TITLE_RULE: &str =
    "a title number is up to three letters then one to seven digits, such as DN123456 or TGL12345";

/// A parcel id as text: 1 to 18 digits, above 0.
pub fn parse_parcel_id(s: &str) -> Option<i64> {
    let t = s.trim();
    if t.is_empty() || t.len() > 18 || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse::<i64>().ok().filter(|v| *v > 0)
}

impl ParcelRef {
    /// The one id given, or the violations (located at the query's fields).
    pub fn from_ids(
        uprn: Option<i64>,
        parcel_id: Option<&str>,
        inspire_id: Option<i64>,
        title_number: Option<&str>,
    ) -> Result<ParcelRef, Vec<Violation>> {
        let given = usize::from(uprn.is_some())
            + usize::from(parcel_id.is_some())
            + usize::from(inspire_id.is_some())
            + usize::from(title_number.is_some());
        if given != 1 {
            return Err(vec![Violation::new(&[], "value_error", ONE_RULE)]);
        }
        if let Some(u) = uprn {
            return Ok(ParcelRef::Uprn(u));
        }
        if let Some(i) = inspire_id {
            return Ok(ParcelRef::InspireId(i));
        }
        if let Some(p) = parcel_id {
            return parse_parcel_id(p).map(ParcelRef::ParcelId).ok_or_else(|| {
                vec![Violation::new(&["parcel_id"], "value_error", PARCEL_ID_RULE).with_input(p)]
            });
        }
        let t = title_number.unwrap_or_default();
        terrace_ownership::parse_title_number(t)
            .map(ParcelRef::TitleNumber)
            .ok_or_else(|| {
                vec![Violation::new(&["title_number"], "value_error", TITLE_RULE).with_input(t)]
            })
    }
}

/// Which id found the parcel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResolvedBy {
    ParcelId,
    InspireId,
    Uprn,
    TitleNumber,
}

/// How the parcel was found from the id given.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Resolution {
    pub by: ResolvedBy,
    /// The id as given (normalised: a title number in upper case).
    pub value: String,
    /// A title linked to several parcels is answered with the first by id; these are the
    /// others (parcel ids).
    pub other_parcels: Vec<String>,
}

/// A parcel found from its id.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub row: ParcelRow,
    pub resolution: Resolution,
}

async fn parcel_row(db: &Db, id: i64) -> Result<Option<ParcelRow>, SourcingError> {
    Ok(land::parcels_by_id(db, &[id]).await?.into_iter().next())
}

/// Finds the parcel an id names; not found (404) when none does.
pub async fn resolve(db: &Db, r: &ParcelRef) -> Result<Resolved, SourcingError> {
    let (row, by, value, others) = match r {
        ParcelRef::ParcelId(id) | ParcelRef::InspireId(id) => {
            let by = if matches!(r, ParcelRef::ParcelId(_)) {
                ResolvedBy::ParcelId
            } else {
                ResolvedBy::InspireId
            };
            let row = parcel_row(db, *id).await?.ok_or_else(|| {
                SourcingError::NotFound(format!(
                    "parcel {id} among the loaded INSPIRE index polygons"
                ))
            })?;
            (row, by, id.to_string(), Vec::new())
        }
        ParcelRef::Uprn(u) => {
            let link = land::parcel_addresses_by_uprn(db, &[*u])
                .await?
                .into_iter()
                .next()
                .ok_or_else(|| {
                    SourcingError::NotFound(format!(
                        "a loaded parcel holding the point of UPRN {u} (the UPRN is not loaded, has no position, or lies in no loaded INSPIRE polygon); the parcel"
                    ))
                })?;
            let row = parcel_row(db, link.inspire_id).await?.ok_or_else(|| {
                SourcingError::NotFound(format!("parcel {} of UPRN {u}", link.inspire_id))
            })?;
            (row, ResolvedBy::Uprn, u.to_string(), Vec::new())
        }
        ParcelRef::TitleNumber(t) => {
            let links = land::parcels_of_title(db, t).await?;
            let mut ids: Vec<i64> = links.iter().map(|l| l.inspire_id).collect();
            ids.sort_unstable();
            ids.dedup();
            let Some(first) = ids.first().copied() else {
                return Err(SourcingError::NotFound(format!(
                    "a parcel linked to title {t}: only company-owned titles (CCOD/OCOD) matched to a UPRN whose point lies in a loaded parcel are linked, and titles owned by private individuals are not published in bulk; the parcel"
                )));
            };
            let row = parcel_row(db, first)
                .await?
                .ok_or_else(|| SourcingError::NotFound(format!("parcel {first} of title {t}")))?;
            let others = ids.iter().skip(1).map(|i| i.to_string()).collect();
            (row, ResolvedBy::TitleNumber, t.clone(), others)
        }
    };
    Ok(Resolved {
        row,
        resolution: Resolution {
            by,
            value,
            other_parcels: others,
        },
    })
}

/// A parcel's polygon (BNG metres), or None when its stored WKB does not decode.
pub fn geometry(row: &ParcelRow) -> Option<MultiPolygon<f64>> {
    terrace_geo::multipolygon_from_wkb(&row.wkb).ok()
}

/// A point inside the parcel (BNG metres): the polygon's interior point, else the stored WGS84
/// interior point converted.
pub fn interior_point(row: &ParcelRow, mp: Option<&MultiPolygon<f64>>) -> Option<(f64, f64)> {
    mp.and_then(|m| m.interior_point())
        .map(|p| (p.x(), p.y()))
        .or_else(|| {
            row.lon
                .zip(row.lat)
                .and_then(|(lon, lat)| terrace_geo::bng_from_wgs84(lon, lat))
        })
}

/// The distance in metres between two parcels' boundaries (0 when they meet or overlap).
pub fn gap_m(a: &MultiPolygon<f64>, b: &MultiPolygon<f64>) -> f64 {
    Euclidean.distance(a, b)
}

// ---------------------------------------------------------------------------------------------
// Constraints

/// A constraint flag's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConstraintStatus {
    /// A loaded feature of the flag's datasets matches.
    InZone,
    /// A dataset of the flag is loaded for the parcel's local authority and nothing matches.
    CheckedFalse,
    /// No dataset of the flag is loaded for the authority (or the parcel has no position or no
    /// known authority): never checked, not false.
    NotChecked,
}

/// One constraint flag of a parcel.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Constraint {
    pub status: ConstraintStatus,
    /// Why the flag is not_checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What counts as a match.
    pub rule: String,
    pub matches: Vec<Match>,
    /// The datasets consulted (loaded for the authority), with their vintage.
    pub sources: Vec<SourceRef>,
    /// The flag's datasets not loaded for the authority.
    pub not_loaded: Vec<String>,
}

/// Where the flags were read.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct EvaluatedAt {
    pub easting: f64,
    pub northing: f64,
}

/// Every constraint flag of a parcel, three-valued.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Constraints {
    /// The local authority whose coverage decides what was checked.
    pub local_authority: Option<String>,
    /// The parcel's interior point (BNG metres); null when the parcel has no position.
    pub evaluated_at: Option<EvaluatedAt>,
    /// Flags by `group.flag` (`flood.in_flood_zone_3`, `heritage.conservation_area`, ...).
    pub flags: BTreeMap<String, Constraint>,
    /// The flags in zone, checked false and not checked, by name.
    pub in_zone: Vec<String>,
    pub checked_false: Vec<String>,
    pub not_checked: Vec<String>,
    pub method: &'static str,
}

const CONSTRAINT_METHOD: &str = "The spatial layers' flags (the risk report's flood, coal, heritage, environmental and planning groups) read at the parcel's interior point and its local authority's coverage: in_zone where a loaded feature matches that point, checked_false only where a dataset of the flag is loaded for the authority and nothing matches, not_checked otherwise. A designation covering only part of the parcel away from that point is not seen.";

fn constraint(c: &Check) -> Constraint {
    Constraint {
        status: match c.value {
            Flag::Known(true) => ConstraintStatus::InZone,
            Flag::Known(false) => ConstraintStatus::CheckedFalse,
            Flag::NotChecked(_) => ConstraintStatus::NotChecked,
        },
        reason: c.reason.clone(),
        rule: c.rule.clone(),
        matches: c.matches.clone(),
        sources: c.sources.clone(),
        not_loaded: c.not_loaded.clone(),
    }
}

/// The constraint flags of a parcel from the given layers (`mp` its decoded polygon).
pub fn constraints_from(
    layers: &Layers,
    row: &ParcelRow,
    mp: Option<&MultiPolygon<f64>>,
) -> Constraints {
    let point = interior_point(row, mp);
    let at = AddressRow {
        x: point.map(|p| p.0),
        y: point.map(|p| p.1),
        lad_code: row.lad_code.clone(),
        ..AddressRow::default()
    };
    let report = terrace_layers::report_from(layers, &at);
    let mut flags = BTreeMap::new();
    for (group, checks) in [
        ("flood", &report.flood.flags),
        ("coal", &report.coal),
        ("heritage", &report.heritage),
        (
            "environmental_designations",
            &report.environmental_designations,
        ),
        ("planning", &report.planning),
    ] {
        for (name, c) in checks {
            flags.insert(format!("{group}.{name}"), constraint(c));
        }
    }
    let pick = |s: ConstraintStatus| -> Vec<String> {
        flags
            .iter()
            .filter(|(_, c)| c.status == s)
            .map(|(k, _)| k.clone())
            .collect()
    };
    Constraints {
        local_authority: row.lad_code.clone(),
        evaluated_at: point.map(|(easting, northing)| EvaluatedAt { easting, northing }),
        in_zone: pick(ConstraintStatus::InZone),
        checked_false: pick(ConstraintStatus::CheckedFalse),
        not_checked: pick(ConstraintStatus::NotChecked),
        flags,
        method: CONSTRAINT_METHOD,
    }
}

/// The constraint flags of a parcel (the spatial layers as currently loaded).
pub async fn parcel_constraints(
    ctx: &SourcingCtx,
    row: &ParcelRow,
) -> Result<Constraints, SourcingError> {
    let layers = ctx.layers.current(&ctx.db).await?;
    Ok(constraints_from(&layers, row, geometry(row).as_ref()))
}

// ---------------------------------------------------------------------------------------------
// Titles and owners

/// A company-owned title linked to a parcel.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LinkedTitle {
    pub title_number: String,
    pub register: Register,
    /// `Freehold` or `Leasehold`.
    pub tenure: Option<String>,
    pub property_address: Option<String>,
    /// True when the title has proprietors the bulk file does not show (private individuals or
    /// charities alongside the companies): they are not named.
    pub additional_proprietor_indicator: Option<bool>,
    pub proprietors: Vec<ProprietorRecord>,
    /// The UPRN through which the title was linked (its address matched, its point in the
    /// parcel), and the link's score (match score times the in-parcel score).
    pub linked_via_uprn: i64,
    pub link_score: f64,
}

/// The company-owned titles linked to each of these parcels (parcels with none are absent).
pub async fn linked_titles(
    db: &Db,
    ids: &[i64],
) -> Result<BTreeMap<i64, Vec<LinkedTitle>>, SourcingError> {
    let links = sourcing::titles_on(db, ids).await?;
    let uprns: Vec<i64> = links
        .iter()
        .map(|l| l.uprn)
        .collect::<BTreeSet<i64>>()
        .into_iter()
        .collect();
    let records = terrace_ownership::titles::titles_for_uprns(db, &uprns).await?;
    let by_number: BTreeMap<&str, &terrace_ownership::titles::TitleRecord> = records
        .iter()
        .map(|r| (r.title_number.as_str(), r))
        .collect();
    let mut out: BTreeMap<i64, Vec<LinkedTitle>> = BTreeMap::new();
    for l in &links {
        let Some(t) = by_number.get(l.title_number.as_str()) else {
            continue;
        };
        out.entry(l.inspire_id).or_default().push(LinkedTitle {
            title_number: t.title_number.clone(),
            register: t.register,
            tenure: t.tenure.clone(),
            property_address: t.property_address.clone(),
            additional_proprietor_indicator: t.additional_proprietor_indicator,
            proprietors: t.proprietors.clone(),
            linked_via_uprn: l.uprn,
            link_score: l.score,
        });
    }
    Ok(out)
}

/// A proprietor's identity for counting distinct owners: its company number, else its name
/// normalised.
pub fn owner_key(p: &terrace_core::registers::Proprietor) -> String {
    match &p.company_number {
        Some(n) => format!("company:{n}"),
        None => format!("name:{}", terrace_ownership::name_key(&p.name)),
    }
}

/// The owner keys of a parcel's linked titles.
pub fn owner_keys(titles: &[LinkedTitle]) -> BTreeSet<String> {
    titles
        .iter()
        .flat_map(|t| t.proprietors.iter().map(|p| owner_key(&p.proprietor)))
        .collect()
}

/// Whether a parcel's registered proprietor is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProprietorStatus {
    /// A company-owned title is linked: its proprietors are listed.
    Linked,
    /// No company-owned title is linked (see `reason`).
    NotAvailable,
}

/// The registered proprietor of a parcel where a company title links.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ParcelProprietor {
    pub status: ProprietorStatus,
    /// `no_open_title_link` when no company-owned title is linked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    pub titles: Vec<LinkedTitle>,
    pub note: &'static str,
}

/// The reason a parcel has no linked proprietor.
pub const NO_OPEN_TITLE_LINK: &str = "no_open_title_link";

const PROPRIETOR_NOTE: &str = "Proprietors come from HM Land Registry's bulk registers of company-owned titles (CCOD, OCOD), linked to the parcel where a title's address matched a UPRN whose point lies in it. A parcel with no linked title is not ownerless: titles owned by private individuals are not published in bulk (naming one needs a paid per-title purchase, not made here), and the address link is partial.";

/// The proprietor block of a parcel's linked titles.
pub fn proprietor_of(titles: Vec<LinkedTitle>) -> ParcelProprietor {
    ParcelProprietor {
        status: if titles.is_empty() {
            ProprietorStatus::NotAvailable
        } else {
            ProprietorStatus::Linked
        },
        reason: titles.is_empty().then_some(NO_OPEN_TITLE_LINK),
        titles,
        note: PROPRIETOR_NOTE,
    }
}

// ---------------------------------------------------------------------------------------------
// The parcel lookup

/// A parcel's land use (Terrace's tiers).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LandUse {
    /// `residential`, `commercial`, `mixed`, `community`, `transport`, `recreation`,
    /// `agriculture`; null where nothing on the parcel supports a class or the land build has
    /// not run.
    pub tier_a: Option<String>,
    /// The National Land Use Database order; null for mixed use or where nothing supports one.
    pub tier_b: Option<String>,
    pub nlud_code: Option<String>,
    pub method: &'static str,
}

const LAND_USE_METHOD: &str = "Terrace's tiers from the AddressBase classes of the addresses whose point lies in the parcel, else the OS Open Map Local feature codes of the buildings on it (docs/METHODS.md, Land use of a parcel); nothing is guessed where neither supports a class.";

/// The land use of a parcel from its plot figures.
pub fn land_use(stats: Option<&ParcelStatsRow>) -> LandUse {
    LandUse {
        tier_a: stats.and_then(|s| s.landuse_tier_a.clone()),
        tier_b: stats.and_then(|s| s.landuse_tier_b.clone()),
        nlud_code: stats.and_then(|s| s.nlud_code.clone()),
        method: LAND_USE_METHOD,
    }
}

/// The identifiers of a parcel.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ParcelIdentifiers {
    /// The parcel id search and plot utilisation return (`land_id`): the INSPIRE id as text.
    pub parcel_id: String,
    /// HM Land Registry's INSPIRE id: the same parcel.
    pub inspire_id: i64,
    /// The GML feature id of the polygon, as published.
    pub gml_id: Option<String>,
    /// Company-owned titles linked to the parcel (the INSPIRE polygons carry no title number).
    pub title_numbers: Vec<String>,
    /// OS Open Map Local ids of the buildings standing on it.
    pub os_building_ids: Vec<String>,
}

/// One address standing on the parcel.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Unit {
    pub uprn: i64,
    /// The AddressBase class (`RD04`, `CR07`, ...).
    pub class: Option<String>,
}

/// The units standing on the parcel: addresses whose point lies in it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Units {
    pub count: i64,
    /// In UPRN order, at most 500.
    pub units: Vec<Unit>,
    pub truncated: bool,
}

/// How many units are listed at most.
pub const UNITS_LISTED: i64 = 500;

/// The parcel's plot utilisation.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlotFigures {
    /// Built footprint over parcel area, 4 places as text: a ground-plane measure that says
    /// nothing about storeys; null where no footprint data covers the authority (never 0 for
    /// unmeasured).
    pub built_coverage_ratio: Option<String>,
    /// The buildings' footprint inside the parcel, m² as text; null where not measured.
    pub total_buildings_footprint_m2: Option<String>,
    /// Null where the land build has not run for the parcel.
    pub n_buildings: Option<i32>,
    pub n_units_via_buildings: Option<i32>,
    pub address_count_residential: Option<i32>,
    pub address_count_commercial: Option<i32>,
    pub measured: bool,
}

/// The land links' coverage in the parcel's local authority.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AuthorityLinkCoverage {
    pub local_authority: String,
    pub parcels: i64,
    pub parcels_with_address: i64,
    pub addresses: i64,
    pub addresses_in_parcel: i64,
    /// Company-owned titles of the authority's addresses linked to a UPRN.
    pub titles_linked: i64,
    /// Of those, titles whose address lies in a parcel.
    pub titles_on_parcel: i64,
    /// `titles_on_parcel / titles_linked`, 3 places as text; null when none is linked.
    pub titles_on_parcel_share: Option<String>,
}

/// One parcel in full (specification part 2.8, sourcing parcel).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ParcelRecord {
    pub resolved_from: Resolution,
    pub ids: ParcelIdentifiers,
    pub local_authority: Option<String>,
    /// Planar area in m², 2 places as text.
    pub area_m2: String,
    /// In hectares, 4 places as text.
    pub area_ha: String,
    pub land_use: LandUse,
    pub registered_proprietor: ParcelProprietor,
    pub units: Units,
    pub plot_utilisation: PlotFigures,
    pub constraints: Constraints,
    /// Restrictive covenants are held per title in the register, and the title-to-parcel link
    /// is partial.
    pub restrictive_covenants: Unavailable,
    /// The boundary as a GeoJSON MultiPolygon in WGS84 (longitude, latitude); null when the
    /// stored polygon cannot be read.
    pub boundary: Option<serde_json::Value>,
    /// The land links' coverage in the parcel's authority; null when none is known or built.
    pub link_coverage: Option<AuthorityLinkCoverage>,
    pub source: String,
}

const COVENANTS: &str = "restrictive covenants are held per title in the register (the charges and property registers), which is not published in bulk; the title-to-parcel link is partial, so none is read here";

pub(crate) fn decimal(v: f64, places: usize) -> String {
    format!("{v:.places$}")
}

/// The parcel's boundary as a GeoJSON MultiPolygon in WGS84.
pub fn boundary_wgs84(mp: &MultiPolygon<f64>) -> Option<serde_json::Value> {
    let mut polys = Vec::new();
    for p in mp {
        let mut rings = Vec::new();
        for ring in std::iter::once(p.exterior()).chain(p.interiors()) {
            let mut coords = Vec::new();
            for c in ring.coords() {
                let (lon, lat) = terrace_geo::wgs84_from_bng(c.x, c.y)?;
                coords.push(serde_json::json!([
                    (lon * 1e7).round() / 1e7,
                    (lat * 1e7).round() / 1e7
                ]));
            }
            rings.push(serde_json::Value::Array(coords));
        }
        polys.push(serde_json::Value::Array(rings));
    }
    Some(serde_json::json!({"type": "MultiPolygon", "coordinates": polys}))
}

async fn link_coverage(
    db: &Db,
    lad: Option<&str>,
) -> Result<Option<AuthorityLinkCoverage>, SourcingError> {
    let Some(lad) = lad else {
        return Ok(None);
    };
    let row = land::land_coverage_by_lad(db, &[lad.to_string()])
        .await?
        .into_iter()
        .next();
    Ok(row.map(|r| AuthorityLinkCoverage {
        titles_on_parcel_share: (r.titles_linked > 0)
            .then(|| decimal(r.titles_on_parcel as f64 / r.titles_linked as f64, 3)),
        local_authority: r.lad_code,
        parcels: r.parcels,
        parcels_with_address: r.parcels_with_address,
        addresses: r.addresses,
        addresses_in_parcel: r.addresses_in_parcel,
        titles_linked: r.titles_linked,
        titles_on_parcel: r.titles_on_parcel,
    }))
}

/// `GET /v1/sourcing/parcel`: one parcel in full.
pub async fn parcel(ctx: &SourcingCtx, r: &ParcelRef) -> Result<ParcelRecord, SourcingError> {
    let db = &ctx.db;
    let Resolved { row, resolution } = resolve(db, r).await?;
    let id = row.inspire_id;
    let mp = geometry(&row);
    let stats = sourcing::stats_of(db, &[id]).await?.into_iter().next();
    let titles = linked_titles(db, &[id])
        .await?
        .remove(&id)
        .unwrap_or_default();
    let buildings = sourcing::buildings_on(db, id).await?;
    let count = sourcing::unit_count(db, id).await?;
    let units = sourcing::units_on(db, id, UNITS_LISTED).await?;
    let layers = ctx.layers.current(db).await?;
    let constraints = constraints_from(&layers, &row, mp.as_ref());
    let mut title_numbers: Vec<String> = titles.iter().map(|t| t.title_number.clone()).collect();
    title_numbers.dedup();
    let plot = PlotFigures {
        built_coverage_ratio: stats
            .as_ref()
            .and_then(|s| s.built_coverage)
            .map(|v| decimal(v, 4)),
        total_buildings_footprint_m2: stats
            .as_ref()
            .and_then(|s| s.footprint_m2)
            .map(|v| decimal(v, 2)),
        n_buildings: stats.as_ref().map(|s| s.n_buildings),
        n_units_via_buildings: stats.as_ref().map(|s| s.n_units_via_buildings),
        address_count_residential: stats.as_ref().map(|s| s.address_count_residential),
        address_count_commercial: stats.as_ref().map(|s| s.address_count_commercial),
        measured: stats.as_ref().is_some_and(|s| s.built_coverage.is_some()),
    };
    Ok(ParcelRecord {
        resolved_from: resolution,
        ids: ParcelIdentifiers {
            parcel_id: id.to_string(),
            inspire_id: id,
            gml_id: row.gml_id.clone(),
            title_numbers,
            os_building_ids: buildings,
        },
        local_authority: row.lad_code.clone(),
        area_m2: decimal(row.area_m2, 2),
        area_ha: decimal(row.area_m2 / 10_000.0, 4),
        land_use: land_use(stats.as_ref()),
        registered_proprietor: proprietor_of(titles),
        units: Units {
            count,
            truncated: count > units.len() as i64,
            units: units
                .into_iter()
                .map(|(uprn, class)| Unit { uprn, class })
                .collect(),
        },
        plot_utilisation: plot,
        constraints,
        restrictive_covenants: Unavailable::new(COVENANTS),
        boundary: mp.as_ref().and_then(boundary_wgs84),
        link_coverage: link_coverage(db, row.lad_code.as_deref()).await?,
        source: row.source.clone(),
    })
}
