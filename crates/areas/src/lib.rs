//! The areas family: what an area id names, resolving a name or a code to an area id with its
//! centroid and parents (`resolve`), and the area of a given kind containing a point
//! (`reverse_geocode`), over the postcode directory and the loaded boundaries.
//!
//! The grammar of area ids is `terrace_core::AreaId` (`lad:E09000024`, `district:SW19`,
//! `h3:88195da49bfffff`, `place:osgb4000000074559543`). Postcode kinds (unit, sector, district,
//! area) are answered from the postcode directory: a sector, district or area exists when a live
//! postcode of it is loaded, and its centroid is the mean of its postcodes' positions.
//!
//! GSS kinds (LSOA, MSOA, ward, local authority, county, region, country, built-up area,
//! planning authority) exist when a boundary, an ONS names-and-codes row or a live postcode of the
//! directory names the code. The name is the names-and-codes file's, else the boundary's; the
//! centroid is the boundary polygon's, else the mean of the directory's postcodes in the area
//! (null when neither is loaded); the parents are the coarser boundaries containing the area's
//! interior point, then, for kinds no boundary answers, the area the directory gives most of its
//! postcodes (a ward's MSOA, local authority, county, region and country), then the country of
//! the code's nation.
//!
//! Places are OS Open Names populated places (`place:` + the OS id): the kind `place` with the
//! gazetteer's local type (City, Town, Village, Hamlet, Suburban Area, Other Settlement), the
//! gazetteer's point as centroid, and as parents the local authority, county, region and country
//! containing the point (boundaries first, else the nearest postcode's directory codes within
//! 2 km). A place answers for analytics with its local authority.
//!
//! H3 cells (resolution 8) come from the `h3o` crate: a cell's centre, the number of addresses
//! the derived step put in it (`address_h3`; null when none), and the cell holding a point for
//! reverse geocoding.
//!
//! `analytics_area_id` is the geography whose aggregates answer for an area: a unit and a sector
//! answer with their district (the market's finest grain), an LSOA, MSOA, ward or place with its
//! local authority, every other kind with itself.
//!
//! Names are matched case- and punctuation-insensitively against the names of every GSS area
//! and place; a name that matches exactly one area resolves, one that matches several is
//! `ambiguous` and lists each with its parents; a name within a small edit distance of exactly
//! one known name resolves as a typo; otherwise the answer is `NotFound` naming the nearest known
//! names.
//!
//! The work runs on an in-memory [`AreaIndex`] held by an [`AreaCache`], rebuilt when a load
//! changes the register (`meta::Key::AddressRegisterVersion`).
//!
//! Architecture Invariant: plain functions over the store, no HTTP or MCP types; nothing is
//! guessed: a point with no loaded boundary of the kind containing it is `NotFound`, never the
//! nearest polygon (a place, being a point, is the nearest populated place within
//! [`NEAREST_PLACE_MAX_M`]).

pub mod catalogue;
pub mod coverage;

use geo::{Centroid, InteriorPoint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use terrace_core::{AreaId, AreaKind, GssCode, Nation, Postcode, Violation};
use terrace_geo::{PointIndex, PolygonIndex};
use terrace_store::areas::PlaceRow;
use terrace_store::{Db, StoreError, areas as store, meta};

/// The nearest postcode of a point on land lies within this many metres; farther is "at sea or
/// outside the loaded postcode directory".
pub const NEAREST_POSTCODE_MAX_M: f64 = 2_000.0;

/// Reverse geocoding to a place answers the nearest populated place within this many metres.
pub const NEAREST_PLACE_MAX_M: f64 = 5_000.0;

/// How many nearest names a not-found answer lists.
pub const SUGGESTIONS: usize = 5;

#[derive(Debug, thiserror::Error)]
pub enum AreasError {
    /// Nothing of that name or code is loaded; the message names the nearest matches if any.
    #[error("{0}")]
    NotFound(String),
    /// The input breaks a rule of the operation.
    #[error("invalid input")]
    Invalid(Vec<Violation>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The operations' context: the store and the cached index.
#[derive(Clone)]
pub struct AreasCtx {
    pub db: Db,
    pub cache: AreaCache,
}

impl AreasCtx {
    pub fn new(db: Db) -> AreasCtx {
        AreasCtx {
            db,
            cache: AreaCache::default(),
        }
    }
}

/// An index with the register version it was built from, and when that version was last read.
type Versioned = (Option<String>, Arc<AreaIndex>, Instant);

/// The register version is read again at most this often: a load in another process shows
/// within a second, and a busy service does not pay a store read per call for it.
const VERSION_RECHECK: Duration = Duration::from_secs(1);

/// The in-memory area index, rebuilt when the register version changes.
#[derive(Clone, Default)]
pub struct AreaCache {
    inner: Arc<RwLock<Option<Versioned>>>,
}

impl AreaCache {
    /// The current index: the one held when its version was read less than a second ago, else
    /// one `meta` read, and a rebuild when a load changed the register.
    pub async fn current(&self, db: &Db) -> Result<Arc<AreaIndex>, StoreError> {
        if let Ok(guard) = self.inner.read()
            && let Some((_, index, checked)) = guard.as_ref()
            && checked.elapsed() < VERSION_RECHECK
        {
            return Ok(index.clone());
        }
        let version = meta::get(db, meta::Key::AddressRegisterVersion).await?;
        if let Ok(mut guard) = self.inner.write()
            && let Some((v, index, checked)) = guard.as_mut()
            && *v == version
        {
            *checked = Instant::now();
            return Ok(index.clone());
        }
        let index = Arc::new(AreaIndex::build(db).await?);
        if let Ok(mut guard) = self.inner.write() {
            *guard = Some((version, index.clone(), Instant::now()));
        }
        Ok(index)
    }
}

/// A WGS84 position.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct LatLon {
    pub lat: f64,
    pub lon: f64,
}

/// A parent of an area.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Parent {
    pub area_id: AreaId,
    pub kind: AreaKind,
    /// The name, where the publisher gives one (postcode kinds have none).
    pub name: Option<String>,
}

/// One resolved area.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Area {
    pub area_id: AreaId,
    /// The geography whose aggregates answer for this area (itself, or its district or local
    /// authority).
    pub analytics_area_id: AreaId,
    pub kind: AreaKind,
    pub name: Option<String>,
    /// The centroid; null for an area with no position.
    pub centroid: Option<LatLon>,
    /// The hierarchy of parents, finest first.
    pub parents: Vec<Parent>,
    /// For a place: OS Open Names' local type (`City`, `Town`, `Village`, `Hamlet`,
    /// `Suburban Area`, `Other Settlement`); null for other kinds.
    pub place_type: Option<String>,
    /// For an H3 cell: the number of loaded addresses in the cell; null for other kinds, and for
    /// a cell holding no loaded address.
    pub address_count: Option<u64>,
}

/// The body of `POST /v1/areas/resolve`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AreaQuery {
    /// A name or a code: an area id (`lad:E09000024`), a postcode in any form, a sector
    /// (`SW19 1`), a district (`SW19`), an area (`SW`), a GSS code, a local authority, ward or
    /// other area name, a place name (OS Open Names), an OS Open Names id, or an H3 cell.
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub query: String,
}

impl AreaQuery {
    /// The rules of the body: a query with some text, and an area id whose kind is known must
    /// have a valid code.
    pub fn violations(&self) -> Vec<Violation> {
        if terrace_core::patterns::is_blank(&self.query) {
            return vec![
                Violation::new(&["query"], "string_too_short", "query must not be empty")
                    .with_input(self.query.clone()),
            ];
        }
        let q = self.query.trim();
        if let Some((kind, _)) = q.split_once(':')
            && AreaKind::from_prefix(kind).is_some()
            && let Err(e) = AreaId::parse(q)
        {
            return vec![
                Violation::new(&["query"], "value_error", e.to_string()).with_input(q.to_string()),
            ];
        }
        Vec::new()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResolveStatus {
    /// One area: `area` holds it.
    Resolved,
    /// Several areas share the name: `candidates` lists each with its parents.
    Ambiguous,
}

/// The answer of `POST /v1/areas/resolve`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AreaResolved {
    pub status: ResolveStatus,
    /// The area, when `status` is `resolved`.
    pub area: Option<Area>,
    /// How the query was read: `area_id`, `postcode`, `sector`, `district`, `postcode_area`,
    /// `gss_code`, `h3`, `os_id`, `name` or `name_typo`.
    pub matched_as: String,
    /// The areas sharing the name, when `status` is `ambiguous` (empty otherwise).
    pub candidates: Vec<Area>,
}

/// The nearest live postcode of a point.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct NearestPostcode {
    pub postcode: String,
    /// Straight-line distance from the point to the postcode's position, in metres.
    pub distance_m: f64,
}

/// The answer of `GET /v1/areas/reverse-geocode`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ReverseGeocoded {
    pub area: Area,
    pub nearest_postcode: NearestPostcode,
}

/// The kinds the postcode directory gives each postcode, finest first.
const DIR_KINDS: [AreaKind; 7] = [
    AreaKind::Lsoa,
    AreaKind::Msoa,
    AreaKind::Ward,
    AreaKind::Lad,
    AreaKind::County,
    AreaKind::Region,
    AreaKind::Country,
];

/// No area of the kind.
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone)]
struct Pc {
    postcode: String,
    lat: f64,
    lon: f64,
    /// Index in `gss` of the postcode's area of each of [`DIR_KINDS`], or [`NONE`].
    areas: [u32; 7],
}

#[derive(Debug, Clone, Default)]
struct Group {
    sum_lat: f64,
    sum_lon: f64,
    n: f64,
    lads: BTreeMap<String, usize>,
    countries: BTreeMap<String, usize>,
}

/// One area named by a GSS code.
#[derive(Debug, Clone)]
struct Gss {
    id: AreaId,
    name: Option<String>,
    /// The boundary's centroid, when a boundary is loaded.
    boundary_centroid: Option<LatLon>,
    /// A BNG point inside the boundary, for the parents.
    inside: Option<(f64, f64)>,
    /// Sums of the directory's live postcodes in the area.
    sum_lat: f64,
    sum_lon: f64,
    n: f64,
    /// Coarser areas of the directory's postcodes in this one: (gss index, postcodes).
    dir_parents: Vec<(u32, u32)>,
}

/// One populated place.
#[derive(Debug, Clone)]
struct Place {
    id: AreaId,
    name: String,
    local_type: String,
    centroid: Option<LatLon>,
    point: (f64, f64),
    /// The nearest live postcode within [`NEAREST_POSTCODE_MAX_M`].
    postcode: Option<usize>,
}

/// What a name names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Named {
    Gss(u32),
    Place(u32),
}

/// Postcodes, GSS areas, boundaries, places and H3 counts in memory.
pub struct AreaIndex {
    postcodes: Vec<Pc>,
    by_postcode: HashMap<String, usize>,
    points: PointIndex<usize>,
    groups: HashMap<AreaId, Group>,
    gss: Vec<Gss>,
    by_code: HashMap<String, u32>,
    polys: BTreeMap<AreaKind, PolygonIndex<u32>>,
    places: Vec<Place>,
    by_place: HashMap<String, u32>,
    place_points: PointIndex<u32>,
    names: BTreeMap<String, Vec<Named>>,
    h3: HashMap<String, u64>,
}

fn normalise(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for w in s
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&w.to_lowercase());
    }
    out
}

/// The finer-to-coarser order of the kinds, for parents.
fn rank(kind: AreaKind) -> u8 {
    match kind {
        AreaKind::Unit => 0,
        AreaKind::Sector => 1,
        AreaKind::District => 2,
        AreaKind::Area => 3,
        AreaKind::H3 => 4,
        AreaKind::Lsoa => 5,
        AreaKind::Msoa => 6,
        AreaKind::Ward => 7,
        AreaKind::Place => 8,
        AreaKind::Bua => 9,
        AreaKind::Lad => 10,
        AreaKind::Lpa => 11,
        AreaKind::County => 12,
        AreaKind::Region => 13,
        AreaKind::Country => 14,
    }
}

/// The country code of a GSS code's nation.
fn country_of(code: &str) -> Option<&'static str> {
    match GssCode::parse(code).ok()?.nation() {
        Nation::England => Some("E92000001"),
        Nation::Wales => Some("W92000004"),
        Nation::Scotland => Some("S92000003"),
        Nation::NorthernIreland => Some("N92000002"),
        Nation::Other => None,
    }
}

fn most_common(m: &BTreeMap<String, usize>) -> Option<&str> {
    m.iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(k, _)| k.as_str())
}

fn latlon_of_bng(x: f64, y: f64) -> Option<LatLon> {
    terrace_geo::wgs84_from_bng(x, y).map(|(lon, lat)| LatLon { lat, lon })
}

/// The GSS areas while the index is built: interned by code.
#[derive(Default)]
struct GssTable {
    gss: Vec<Gss>,
    by_code: HashMap<String, u32>,
}

impl GssTable {
    /// The index of the area of `kind` with `code`, added when new; `None` for a code that is
    /// not one of the kind.
    fn intern(&mut self, kind: AreaKind, code: &str) -> Option<u32> {
        if let Some(&i) = self.by_code.get(code) {
            return (self.gss[i as usize].id.kind() == kind).then_some(i);
        }
        let id = AreaId::new(kind, code).ok()?;
        let i = u32::try_from(self.gss.len()).ok()?;
        self.by_code.insert(id.code().to_string(), i);
        self.gss.push(Gss {
            id,
            name: None,
            boundary_centroid: None,
            inside: None,
            sum_lat: 0.0,
            sum_lon: 0.0,
            n: 0.0,
            dir_parents: Vec::new(),
        });
        Some(i)
    }
}

impl AreaIndex {
    /// Reads the live postcodes, every boundary, the names and codes, the places and the H3
    /// cell counts from the store.
    pub async fn build(db: &Db) -> Result<AreaIndex, StoreError> {
        let mut table = GssTable::default();
        let mut postcodes = Vec::new();
        let mut bng = Vec::new();
        let mut after = String::new();
        loop {
            let page = store::postcodes_page(db, &after, 50_000).await?;
            let Some(last) = page.last() else { break };
            after = last.postcode.clone();
            for r in page {
                let (Some(lat), Some(lon)) = (r.lat, r.lon) else {
                    continue;
                };
                let point = match (r.easting, r.northing) {
                    (Some(e), Some(n)) => Some((e, n)),
                    (None, Some(_)) | (Some(_), None) | (None, None) => {
                        terrace_geo::bng_from_wgs84(lon, lat)
                    }
                };
                if let Some(p) = point {
                    bng.push((p, postcodes.len()));
                }
                let codes = [
                    &r.lsoa_code,
                    &r.msoa_code,
                    &r.ward_code,
                    &r.lad_code,
                    &r.county_code,
                    &r.region_code,
                    &r.country_code,
                ];
                let mut areas = [NONE; 7];
                for (k, code) in codes.iter().enumerate() {
                    if let Some(c) = code {
                        areas[k] = table.intern(DIR_KINDS[k], c).unwrap_or(NONE);
                    }
                }
                for (k, &i) in areas.iter().enumerate() {
                    if i == NONE {
                        continue;
                    }
                    let g = &mut table.gss[i as usize];
                    g.sum_lat += lat;
                    g.sum_lon += lon;
                    g.n += 1.0;
                    for &j in areas.iter().skip(k + 1).filter(|&&j| j != NONE) {
                        match g.dir_parents.iter_mut().find(|(p, _)| *p == j) {
                            Some(e) => e.1 += 1,
                            None => g.dir_parents.push((j, 1)),
                        }
                    }
                }
                postcodes.push(Pc {
                    postcode: r.postcode,
                    lat,
                    lon,
                    areas,
                });
            }
        }
        let mut groups: HashMap<AreaId, Group> = HashMap::new();
        let mut by_postcode = HashMap::with_capacity(postcodes.len());
        for (i, p) in postcodes.iter().enumerate() {
            by_postcode.insert(p.postcode.clone(), i);
            let Ok(unit) = AreaId::new(AreaKind::Unit, &p.postcode) else {
                continue;
            };
            let code = |k: usize| {
                (p.areas[k] != NONE).then(|| table.gss[p.areas[k] as usize].id.code().to_string())
            };
            let (lad, country) = (code(3), code(6));
            for g in unit.postcode_parents() {
                let e = groups.entry(g).or_default();
                e.sum_lat += p.lat;
                e.sum_lon += p.lon;
                e.n += 1.0;
                if let Some(l) = &lad {
                    *e.lads.entry(l.clone()).or_default() += 1;
                }
                if let Some(c) = &country {
                    *e.countries.entry(c.clone()).or_default() += 1;
                }
            }
        }
        let points = PointIndex::build(bng);

        let mut items: BTreeMap<AreaKind, Vec<_>> = BTreeMap::new();
        let mut after = String::new();
        loop {
            let page = store::boundaries_page(db, &after, 2_000).await?;
            let Some(last) = page.last() else { break };
            after = last.code.clone();
            for r in page {
                let Some(kind) = AreaKind::from_prefix(&r.kind) else {
                    continue;
                };
                let Some(i) = table.intern(kind, &r.code) else {
                    continue;
                };
                let Ok(mp) = terrace_geo::multipolygon_from_wkb(&r.wkb) else {
                    continue;
                };
                let g = &mut table.gss[i as usize];
                g.boundary_centroid = mp.centroid().and_then(|c| latlon_of_bng(c.x(), c.y()));
                g.inside = mp.interior_point().map(|p| (p.x(), p.y()));
                if g.name.is_none() {
                    g.name = r.name;
                }
                items.entry(kind).or_default().push((mp, i));
            }
        }
        // The ONS names and codes name every kind, over a boundary's own name.
        let mut after = String::new();
        loop {
            let page = store::area_names_page(db, &after, 10_000).await?;
            let Some(last) = page.last() else { break };
            after = last.code.clone();
            for r in page {
                let Some(kind) = AreaKind::from_prefix(&r.kind) else {
                    continue;
                };
                if let Some(i) = table.intern(kind, &r.code) {
                    table.gss[i as usize].name = Some(r.name);
                }
            }
        }
        let polys = items
            .into_iter()
            .map(|(k, v)| (k, PolygonIndex::build(v)))
            .collect();

        let mut names: BTreeMap<String, Vec<Named>> = BTreeMap::new();
        for (i, g) in table.gss.iter().enumerate() {
            if let (Some(n), Ok(i)) = (&g.name, u32::try_from(i)) {
                names.entry(normalise(n)).or_default().push(Named::Gss(i));
            }
        }

        let mut places = Vec::new();
        let mut by_place = HashMap::new();
        let mut place_points = Vec::new();
        let mut after = String::new();
        loop {
            let page = store::places_page(db, &after, 10_000).await?;
            let Some(last) = page.last() else { break };
            after = last.id.clone();
            for r in page {
                let PlaceRow {
                    id,
                    name,
                    name_alt,
                    local_type,
                    x,
                    y,
                    ..
                } = r;
                let (Ok(id), Ok(i)) = (
                    AreaId::new(AreaKind::Place, &id),
                    u32::try_from(places.len()),
                ) else {
                    continue;
                };
                for n in std::iter::once(&name).chain(name_alt.as_ref()) {
                    let key = normalise(n);
                    let e = names.entry(key).or_default();
                    if !e.contains(&Named::Place(i)) {
                        e.push(Named::Place(i));
                    }
                }
                let postcode = points
                    .nearest_where((x, y), |_| true)
                    .filter(|(_, d)| *d <= NEAREST_POSTCODE_MAX_M)
                    .map(|(&p, _)| p);
                by_place.insert(id.code().to_string(), i);
                place_points.push(((x, y), i));
                places.push(Place {
                    id,
                    name,
                    local_type,
                    centroid: latlon_of_bng(x, y),
                    point: (x, y),
                    postcode,
                });
            }
        }
        let h3 = store::h3_counts(db)
            .await?
            .into_iter()
            .map(|(cell, n)| (cell, u64::try_from(n).unwrap_or(0)))
            .collect();
        Ok(AreaIndex {
            postcodes,
            by_postcode,
            points,
            groups,
            gss: table.gss,
            by_code: table.by_code,
            polys,
            places,
            by_place,
            place_points: PointIndex::build(place_points),
            names,
            h3,
        })
    }

    fn gss_parent(&self, i: u32) -> Parent {
        let g = &self.gss[i as usize];
        Parent {
            area_id: g.id.clone(),
            kind: g.id.kind(),
            name: g.name.clone(),
        }
    }

    fn parent(&self, kind: AreaKind, code: &str) -> Option<Parent> {
        match self.by_code.get(code) {
            Some(&i) if self.gss[i as usize].id.kind() == kind => Some(self.gss_parent(i)),
            Some(_) => None,
            None => {
                let id = AreaId::new(kind, code).ok()?;
                Some(Parent {
                    name: None,
                    kind,
                    area_id: id,
                })
            }
        }
    }

    /// The boundaries of kinds coarser than `kind` containing a BNG point, finest first (built-up
    /// areas and planning authorities excepted).
    fn containing(&self, point: (f64, f64), coarser_than: AreaKind) -> Vec<Parent> {
        let mut out: Vec<(u8, Parent)> = Vec::new();
        for (&k, idx) in &self.polys {
            // Built-up areas and planning authorities overlap the statistical hierarchy (a
            // national park's authority spans several districts): never parents.
            if rank(k) <= rank(coarser_than) || matches!(k, AreaKind::Bua | AreaKind::Lpa) {
                continue;
            }
            for &i in idx.containing(point) {
                out.push((rank(k), self.gss_parent(i)));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.area_id.cmp(&b.1.area_id)));
        out.into_iter().map(|(_, p)| p).collect()
    }

    /// Adds the parents of the directory's areas `areas` (of [`DIR_KINDS`]) coarser than `kind`
    /// that the list lacks.
    fn add_directory(&self, parents: &mut Vec<Parent>, areas: &[u32; 7], kind: AreaKind) {
        for (k, &i) in areas.iter().enumerate() {
            if i == NONE || rank(DIR_KINDS[k]) <= rank(kind) {
                continue;
            }
            if !parents.iter().any(|p| p.kind == DIR_KINDS[k]) {
                parents.push(self.gss_parent(i));
            }
        }
    }

    /// Adds the parents a list lacks: a local authority's country from its code.
    fn complete(&self, parents: &mut Vec<Parent>, lad: Option<&str>, country: Option<&str>) {
        let has = |ps: &Vec<Parent>, k: AreaKind| ps.iter().any(|p| p.kind == k);
        if let Some(l) = lad
            && !has(parents, AreaKind::Lad)
            && let Some(p) = self.parent(AreaKind::Lad, l)
        {
            parents.push(p);
        }
        let lad = lad.or_else(|| {
            parents
                .iter()
                .find(|p| p.kind == AreaKind::Lad)
                .map(|p| p.area_id.code())
        });
        let country = country.or_else(|| lad.and_then(country_of));
        if let Some(c) = country
            && !has(parents, AreaKind::Country)
            && let Some(p) = self.parent(AreaKind::Country, c)
        {
            parents.push(p);
        }
        parents.sort_by_key(|p| rank(p.kind));
    }

    fn analytics(&self, id: &AreaId, parents: &[Parent]) -> AreaId {
        let up = |k: AreaKind| {
            parents
                .iter()
                .find(|p| p.kind == k)
                .map(|p| p.area_id.clone())
                .unwrap_or_else(|| id.clone())
        };
        match id.kind() {
            AreaKind::Unit | AreaKind::Sector => up(AreaKind::District),
            AreaKind::Lsoa | AreaKind::Msoa | AreaKind::Ward | AreaKind::Place => up(AreaKind::Lad),
            AreaKind::District
            | AreaKind::Area
            | AreaKind::Lad
            | AreaKind::County
            | AreaKind::Region
            | AreaKind::Country
            | AreaKind::Bua
            | AreaKind::Lpa
            | AreaKind::H3 => id.clone(),
        }
    }

    fn finish(
        &self,
        id: AreaId,
        name: Option<String>,
        centroid: Option<LatLon>,
        parents: Vec<Parent>,
    ) -> Area {
        Area {
            analytics_area_id: self.analytics(&id, &parents),
            kind: id.kind(),
            area_id: id,
            name,
            centroid,
            parents,
            place_type: None,
            address_count: None,
        }
    }

    /// The code of the loaded boundary of `kind` containing a BNG point (the lowest code when
    /// several overlap).
    pub fn code_at(&self, kind: AreaKind, point: (f64, f64)) -> Option<&str> {
        let idx = self.polys.get(&kind)?;
        idx.containing(point)
            .into_iter()
            .map(|&i| self.gss[i as usize].id.code())
            .min()
    }

    /// The area an id names, if it is loaded.
    pub fn area(&self, id: &AreaId) -> Option<Area> {
        match id.kind() {
            AreaKind::Unit => {
                let p = &self.postcodes[*self.by_postcode.get(id.code())?];
                let mut parents: Vec<Parent> = id
                    .postcode_parents()
                    .into_iter()
                    .map(|a| Parent {
                        kind: a.kind(),
                        area_id: a,
                        name: None,
                    })
                    .collect();
                self.add_directory(&mut parents, &p.areas, AreaKind::Unit);
                if let Some(pt) = terrace_geo::bng_from_wgs84(p.lon, p.lat) {
                    for x in self.containing(pt, AreaKind::H3) {
                        if !parents.iter().any(|q| q.kind == x.kind) {
                            parents.push(x);
                        }
                    }
                }
                self.complete(&mut parents, None, None);
                let centroid = Some(LatLon {
                    lat: p.lat,
                    lon: p.lon,
                });
                Some(self.finish(id.clone(), None, centroid, parents))
            }
            AreaKind::Sector | AreaKind::District | AreaKind::Area => {
                let g = self.groups.get(id)?;
                let mut parents: Vec<Parent> = id
                    .postcode_parents()
                    .into_iter()
                    .map(|a| Parent {
                        kind: a.kind(),
                        area_id: a,
                        name: None,
                    })
                    .collect();
                // A postcode district or area can straddle authorities: the parent is the one
                // holding most of its postcodes.
                self.complete(
                    &mut parents,
                    most_common(&g.lads),
                    most_common(&g.countries),
                );
                let centroid = Some(LatLon {
                    lat: g.sum_lat / g.n,
                    lon: g.sum_lon / g.n,
                });
                Some(self.finish(id.clone(), None, centroid, parents))
            }
            AreaKind::H3 => {
                // The cell's centre, from the H3 library (the id was checked on parsing).
                let cell: h3o::CellIndex = id.code().parse().ok()?;
                let c = h3o::LatLng::from(cell);
                let centroid = Some(LatLon {
                    lat: c.lat(),
                    lon: c.lng(),
                });
                let mut parents = terrace_geo::bng_from_wgs84(c.lng(), c.lat())
                    .map(|pt| self.containing(pt, AreaKind::Place))
                    .unwrap_or_default();
                self.complete(&mut parents, None, None);
                let mut area = self.finish(id.clone(), None, centroid, parents);
                area.address_count = self.h3.get(id.code()).copied();
                Some(area)
            }
            AreaKind::Place => {
                let &i = self.by_place.get(id.code())?;
                Some(self.place_area(i))
            }
            AreaKind::Lsoa
            | AreaKind::Msoa
            | AreaKind::Ward
            | AreaKind::Lad
            | AreaKind::County
            | AreaKind::Region
            | AreaKind::Country
            | AreaKind::Bua
            | AreaKind::Lpa => {
                let &i = self.by_code.get(id.code())?;
                if self.gss[i as usize].id.kind() != id.kind() {
                    return None;
                }
                Some(self.gss_area(i))
            }
        }
    }

    fn gss_area(&self, i: u32) -> Area {
        let g = &self.gss[i as usize];
        let kind = g.id.kind();
        let mut parents = g
            .inside
            .map(|p| self.containing(p, kind))
            .unwrap_or_default();
        // The directory's most common coarser area of each kind no boundary gave.
        let mut best: BTreeMap<AreaKind, (u32, u32)> = BTreeMap::new();
        for &(j, n) in &g.dir_parents {
            let k = self.gss[j as usize].id.kind();
            let e = best.entry(k).or_insert((j, n));
            if n > e.1 || (n == e.1 && self.gss[j as usize].id < self.gss[e.0 as usize].id) {
                *e = (j, n);
            }
        }
        for (k, (j, _)) in best {
            if rank(k) > rank(kind) && !parents.iter().any(|p| p.kind == k) {
                parents.push(self.gss_parent(j));
            }
        }
        if kind != AreaKind::Country {
            self.complete(&mut parents, None, country_of(g.id.code()));
        }
        parents.sort_by_key(|p| rank(p.kind));
        let centroid = g.boundary_centroid.or_else(|| {
            (g.n > 0.0).then(|| LatLon {
                lat: g.sum_lat / g.n,
                lon: g.sum_lon / g.n,
            })
        });
        self.finish(g.id.clone(), g.name.clone(), centroid, parents)
    }

    fn place_area(&self, i: u32) -> Area {
        let p = &self.places[i as usize];
        let mut parents = self.containing(p.point, AreaKind::Place);
        if let Some(pc) = p.postcode {
            self.add_directory(&mut parents, &self.postcodes[pc].areas, AreaKind::Place);
        }
        self.complete(&mut parents, None, None);
        let mut area = self.finish(p.id.clone(), Some(p.name.clone()), p.centroid, parents);
        area.place_type = Some(p.local_type.clone());
        area
    }

    fn named_area(&self, n: Named) -> Area {
        match n {
            Named::Gss(i) => self.gss_area(i),
            Named::Place(i) => self.place_area(i),
        }
    }

    /// The known names nearest a query, best first.
    fn nearest_names(&self, q: &str) -> Vec<(f64, &str)> {
        let mut scored: Vec<(f64, &str)> = self
            .names
            .keys()
            .map(|n| (strsim::normalized_levenshtein(q, n), n.as_str()))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        scored.truncate(SUGGESTIONS);
        scored
    }

    fn display_names(&self, key: &str) -> Vec<String> {
        self.names
            .get(key)
            .into_iter()
            .flatten()
            .map(|&n| match n {
                Named::Gss(i) => {
                    let g = &self.gss[i as usize];
                    format!("{} ({})", g.name.as_deref().unwrap_or(key), g.id)
                }
                Named::Place(i) => {
                    let p = &self.places[i as usize];
                    format!("{} ({}, {})", p.name, p.local_type, p.id)
                }
            })
            .collect()
    }

    fn by_name(&self, key: &str, matched_as: &str) -> Option<AreaResolved> {
        let hits = self.names.get(key)?;
        let mut areas: Vec<Area> = hits.iter().map(|&n| self.named_area(n)).collect();
        areas.sort_by(|a, b| {
            rank(b.kind)
                .cmp(&rank(a.kind))
                .then(a.area_id.cmp(&b.area_id))
        });
        Some(if areas.len() == 1 {
            AreaResolved {
                status: ResolveStatus::Resolved,
                area: areas.pop(),
                matched_as: matched_as.into(),
                candidates: Vec::new(),
            }
        } else {
            AreaResolved {
                status: ResolveStatus::Ambiguous,
                area: None,
                matched_as: matched_as.into(),
                candidates: areas,
            }
        })
    }

    /// Resolves a query (see [`AreaQuery::query`]).
    pub fn resolve(&self, query: &str) -> Result<AreaResolved, AreasError> {
        let q = query.trim();
        let one = |area: Option<Area>, how: &str, what: String| match area {
            Some(a) => Ok(AreaResolved {
                status: ResolveStatus::Resolved,
                area: Some(a),
                matched_as: how.into(),
                candidates: Vec::new(),
            }),
            None => Err(AreasError::NotFound(what)),
        };
        if let Some((kind, _)) = q.split_once(':')
            && AreaKind::from_prefix(kind).is_some()
        {
            let id = AreaId::parse(q).map_err(|e| {
                AreasError::Invalid(vec![Violation::new(
                    &["query"],
                    "value_error",
                    e.to_string(),
                )])
            })?;
            return one(self.area(&id), "area_id", format!("area {id}"));
        }
        if let Ok(gss) = GssCode::parse(q) {
            let area = self.by_code.get(gss.as_str()).map(|&i| self.gss_area(i));
            return one(area, "gss_code", format!("area with GSS code {gss}"));
        }
        if let Ok(place) = AreaId::new(AreaKind::Place, q) {
            return one(self.area(&place), "os_id", format!("place {place}"));
        }
        if let Ok(pc) = Postcode::parse(q) {
            let id = AreaId::new(AreaKind::Unit, pc.as_str()).map_err(|e| {
                AreasError::Invalid(vec![Violation::new(
                    &["query"],
                    "value_error",
                    e.to_string(),
                )])
            })?;
            return one(self.area(&id), "postcode", format!("postcode {pc}"));
        }
        let compact_len = q.chars().filter(|c| !c.is_whitespace()).count();
        let district = AreaId::new(AreaKind::District, q).ok();
        let sector = AreaId::new(AreaKind::Sector, q).ok();
        // `EX11` is district EX11 or sector `EX1 1`: a space, or a district that is not loaded,
        // reads it as a sector.
        if let Some(d) = &district
            && !q.contains(' ')
            && self.groups.contains_key(d)
        {
            return one(self.area(d), "district", String::new());
        }
        if let Some(s) = &sector {
            return one(self.area(s), "sector", format!("postcode sector {s}"));
        }
        if let Some(d) = &district {
            return one(self.area(d), "district", format!("postcode district {d}"));
        }
        if (1..=2).contains(&compact_len)
            && let Ok(a) = AreaId::new(AreaKind::Area, q)
            && self.groups.contains_key(&a)
        {
            return one(self.area(&a), "postcode_area", String::new());
        }
        if let Ok(h) = AreaId::new(AreaKind::H3, q) {
            return one(self.area(&h), "h3", String::new());
        }
        let key = normalise(q);
        if key.is_empty() {
            return Err(AreasError::NotFound(format!("area {q:?}")));
        }
        if let Some(r) = self.by_name(&key, "name") {
            return Ok(r);
        }
        // Typo tolerance: one known name within a small edit distance.
        let allowed = match key.chars().count() {
            0..=3 => 0,
            4..=7 => 1,
            _ => 2,
        };
        let len = key.chars().count();
        let close: Vec<&String> = self
            .names
            .keys()
            .filter(|n| n.len().abs_diff(len) <= allowed + 2)
            .filter(|n| strsim::levenshtein(&key, n) <= allowed)
            .collect();
        if let [only] = close.as_slice()
            && let Some(r) = self.by_name(only, "name_typo")
        {
            return Ok(r);
        }
        let nearest: Vec<String> = self
            .nearest_names(&key)
            .into_iter()
            .flat_map(|(_, n)| self.display_names(n))
            .take(SUGGESTIONS)
            .collect();
        let mut what = format!("area {q:?}");
        if !nearest.is_empty() {
            what.push_str(&format!(" (nearest matches: {})", nearest.join("; ")));
        }
        Err(AreasError::NotFound(what))
    }

    /// The area of `kind` containing a WGS84 point, with the nearest live postcode.
    pub fn reverse_geocode(
        &self,
        lat: f64,
        lon: f64,
        kind: AreaKind,
    ) -> Result<ReverseGeocoded, AreasError> {
        let outside = || {
            AreasError::NotFound(format!(
                "a {kind} at ({lat}, {lon}) (the point is outside Great Britain)"
            ))
        };
        let point = terrace_geo::bng_from_wgs84(lon, lat).ok_or_else(outside)?;
        if !(0.0..=700_000.0).contains(&point.0) || !(0.0..=1_300_000.0).contains(&point.1) {
            return Err(outside());
        }
        let (&i, d) = self
            .points
            .nearest_where(point, |_| true)
            .filter(|(_, d)| *d <= NEAREST_POSTCODE_MAX_M)
            .ok_or_else(|| {
                AreasError::NotFound(format!(
                    "a {kind} at ({lat}, {lon}) (no postcode within {NEAREST_POSTCODE_MAX_M} m: at sea or outside the loaded postcode directory)"
                ))
            })?;
        let pc = &self.postcodes[i];
        let nearest = NearestPostcode {
            postcode: pc.postcode.clone(),
            distance_m: (d * 10.0).round() / 10.0,
        };
        let area = match kind {
            AreaKind::Unit | AreaKind::Sector | AreaKind::District | AreaKind::Area => {
                let unit = AreaId::new(AreaKind::Unit, &pc.postcode)
                    .map_err(|_| AreasError::NotFound(format!("postcode {}", pc.postcode)))?;
                let id = if kind == AreaKind::Unit {
                    unit
                } else {
                    unit.postcode_parents()
                        .into_iter()
                        .find(|a| a.kind() == kind)
                        .ok_or_else(|| {
                            AreasError::NotFound(format!("a {kind} of {}", pc.postcode))
                        })?
                };
                self.area(&id)
                    .ok_or_else(|| AreasError::NotFound(format!("area {id}")))?
            }
            AreaKind::H3 => {
                let cell = h3o::LatLng::new(lat, lon)
                    .map_err(|_| outside())?
                    .to_cell(h3o::Resolution::Eight);
                let id = AreaId::new(AreaKind::H3, &cell.to_string())
                    .map_err(|_| AreasError::NotFound(format!("h3 cell {cell}")))?;
                self.area(&id)
                    .ok_or_else(|| AreasError::NotFound(format!("area {id}")))?
            }
            AreaKind::Place => {
                let (&p, _) = self
                    .place_points
                    .nearest_where(point, |_| true)
                    .filter(|(_, d)| *d <= NEAREST_PLACE_MAX_M)
                    .ok_or_else(|| {
                        AreasError::NotFound(format!(
                            "a place near ({lat}, {lon}) (no loaded populated place within {NEAREST_PLACE_MAX_M} m)"
                        ))
                    })?;
                self.place_area(p)
            }
            AreaKind::Lsoa
            | AreaKind::Msoa
            | AreaKind::Ward
            | AreaKind::Lad
            | AreaKind::County
            | AreaKind::Region
            | AreaKind::Country
            | AreaKind::Bua
            | AreaKind::Lpa => {
                let idx = self.polys.get(&kind).ok_or_else(|| {
                    AreasError::NotFound(format!(
                        "a {kind} containing ({lat}, {lon}) (no {kind} boundaries are loaded)"
                    ))
                })?;
                let &b = idx
                    .containing(point)
                    .into_iter()
                    .min_by_key(|&&b| &self.gss[b as usize].id)
                    .ok_or_else(|| {
                        AreasError::NotFound(format!(
                            "a {kind} containing ({lat}, {lon}) (no loaded {kind} boundary contains the point)"
                        ))
                    })?;
                self.gss_area(b)
            }
        };
        Ok(ReverseGeocoded {
            area,
            nearest_postcode: nearest,
        })
    }
}

/// `POST /v1/areas/resolve`.
pub async fn resolve(ctx: &AreasCtx, input: &AreaQuery) -> Result<AreaResolved, AreasError> {
    let index = ctx.cache.current(&ctx.db).await?;
    index.resolve(&input.query)
}

/// `GET /v1/areas/reverse-geocode`.
pub async fn reverse_geocode(
    ctx: &AreasCtx,
    lat: f64,
    lon: f64,
    kind: AreaKind,
) -> Result<ReverseGeocoded, AreasError> {
    let index = ctx.cache.current(&ctx.db).await?;
    index.reverse_geocode(lat, lon, kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test vectors of the H3 reference implementation's own CLI tests (github.com/uber/h3,
    /// `tests/cli/latLngToCell.txt`: `latLngToCell --lat 20 --lng 123 -r 2` is
    /// `824b9ffffffffff`; `tests/cli/cellToLatLng.txt`: the centre of `8928342e20fffff` is
    /// POINT(-122.5003039349 37.5012466151)). The resolution-8 cell of that centre is the
    /// resolution-9 cell's parent, and parses as an `h3:` area id.
    #[test]
    fn h3_cells_match_the_reference_vectors() {
        let cell = h3o::LatLng::new(20.0, 123.0)
            .unwrap()
            .to_cell(h3o::Resolution::Two);
        assert_eq!(cell.to_string(), "824b9ffffffffff");

        let res9: h3o::CellIndex = "8928342e20fffff".parse().unwrap();
        let c = h3o::LatLng::from(res9);
        assert!((c.lat() - 37.501_246_615_1).abs() < 1e-9, "{}", c.lat());
        assert!((c.lng() + 122.500_303_934_9).abs() < 1e-9, "{}", c.lng());
        let ll = h3o::LatLng::new(37.501_246_615_1, -122.500_303_934_9).unwrap();
        assert_eq!(ll.to_cell(h3o::Resolution::Nine), res9);
        let res8 = ll.to_cell(h3o::Resolution::Eight);
        assert_eq!(Some(res8), res9.parent(h3o::Resolution::Eight));
        let id = AreaId::new(AreaKind::H3, &res8.to_string()).unwrap();
        assert_eq!(id.to_string(), format!("h3:{res8}"));
    }
}

#[cfg(test)]
mod tests_store;
