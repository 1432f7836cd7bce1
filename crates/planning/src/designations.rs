//! `POST /v1/planning/designations`: every loaded designation affecting a location or an area,
//! each with its dataset, reference, name, source and vintage, and the designation datasets not
//! loaded there (`not_loaded`, never omitted).
//!
//! The scope is exactly one of a point (`location`, `postcode`, `uprn`), a GeoJSON polygon
//! (`area_geojson`, at most [`MAX_VERTICES`] vertices and [`MAX_AREA_KM2`] km²) or a local
//! planning authority (`lpa_code`, its loaded planning.data.gov.uk boundary). `buffer_m` widens
//! the scope; `types` narrows the datasets. A dataset is loaded for the scope when it is loaded
//! for a local authority the scope touches; features are listed wherever they were loaded (a
//! match is a fact), and the list is cut at [`MAX_DESIGNATIONS`] with `truncated`.

use chrono::{NaiveDate, NaiveDateTime};
use geo::{Area, LineString, MultiPolygon, Polygon, Relate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use terrace_areas::AreasCtx;
use terrace_core::{AreaId, AreaKind, Postcode, Uprn, Violation};
use terrace_layers::{Designation, LayerCache, Scope};
use terrace_store::{Db, LookupError, address};

/// The designation datasets (planning.data.gov.uk names), in the order answers list them: the
/// datasets the planning.data loader reads.
pub const TYPES: [&str; 17] = terrace_core::sources::PLANNING_DATA_DATASETS;

/// The largest `buffer_m`.
pub const MAX_BUFFER_M: u32 = 1_000;
/// The most vertices an `area_geojson` may have, over all its rings.
pub const MAX_VERTICES: usize = 1_000;
/// The most polygons of a MultiPolygon, and the most rings of one polygon.
pub const MAX_PARTS: usize = 100;
/// The largest `area_geojson`, in square kilometres.
pub const MAX_AREA_KM2: f64 = 100.0;
/// The most designations one answer lists (`truncated` says when more matched).
pub const MAX_DESIGNATIONS: usize = 500;

/// A WGS84 position.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LatLon {
    /// Latitude, WGS84, -90 to 90
    #[schemars(range(min = -90.0, max = 90.0))]
    pub lat: f64,
    /// Longitude, WGS84, -180 to 180
    #[schemars(range(min = -180.0, max = 180.0))]
    pub lon: f64,
}

/// One linear ring: `[lon, lat]` positions, the first repeated as the last.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Ring(#[schemars(schema_with = "ring_schema")] pub Vec<[f64; 2]>);

/// A MultiPolygon's coordinates: 1 to 100 polygons, each 1 to 100 rings.
fn polygons_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let ring = g.subschema_for::<Ring>();
    schemars::json_schema!({
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_PARTS,
        "items": {"type": "array", "minItems": 1, "maxItems": MAX_PARTS, "items": ring}
    })
}

/// A ring's schema: 4 to 1,000 positions, each `[lon, lat]` with WGS84's ranges. That the
/// first position is repeated as the last, that the positions lie in Great Britain and the
/// limits over all rings cannot be stated in JSON Schema; [`area_bng`] checks them.
fn ring_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "minItems": 4,
        "maxItems": MAX_VERTICES,
        "items": {
            "type": "array",
            "minItems": 2,
            "maxItems": 2,
            "prefixItems": [
                {"type": "number", "minimum": -180.0, "maximum": 180.0},
                {"type": "number", "minimum": -90.0, "maximum": 90.0}
            ]
        }
    })
}

/// A GeoJSON Polygon or MultiPolygon in WGS84 (`[lon, lat]` positions), at most 1,000 vertices
/// over all rings and 100 km².
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum AreaGeoJson {
    Polygon {
        /// The exterior ring, then any holes.
        #[schemars(length(min = 1, max = 100))]
        coordinates: Vec<Ring>,
    },
    MultiPolygon {
        /// The polygons, each its exterior ring then any holes.
        #[schemars(schema_with = "polygons_schema")]
        coordinates: Vec<Vec<Ring>>,
    },
}

impl AreaGeoJson {
    fn polygons(&self) -> Vec<&Vec<Ring>> {
        match self {
            AreaGeoJson::Polygon { coordinates } => vec![coordinates],
            AreaGeoJson::MultiPolygon { coordinates } => coordinates.iter().collect(),
        }
    }
}

/// The schema of a designation type: one of [`TYPES`].
#[derive(JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)] // read by schemars only
enum DesignationType {
    ConservationArea,
    #[serde(rename = "article-4-direction-area")]
    Article4DirectionArea,
    ListedBuilding,
    ListedBuildingOutline,
    TreePreservationZone,
    Tree,
    BrownfieldLand,
    GreenBelt,
    ScheduledMonument,
    AncientWoodland,
    SiteOfSpecialScientificInterest,
    AreaOfOutstandingNaturalBeauty,
    NationalPark,
    AirQualityManagementArea,
    FloodRiskZone,
    HeritageAtRisk,
    AgriculturalLandClassification,
}

/// The body of `POST /v1/planning/designations`: exactly one of `location`, `postcode`, `uprn`,
/// `area_geojson` or `lpa_code`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = one_scope)]
pub struct DesignationsInput {
    /// A point, WGS84
    #[serde(default)]
    pub location: Option<LatLon>,
    /// A postcode (its directory position)
    #[serde(default)]
    pub postcode: Option<Postcode>,
    /// A property's UPRN (its position)
    #[serde(default)]
    pub uprn: Option<Uprn>,
    /// A GeoJSON Polygon or MultiPolygon in WGS84: at most 1,000 vertices over all rings and
    /// 100 km²
    #[serde(default)]
    pub area_geojson: Option<AreaGeoJson>,
    /// A local planning authority's GSS code (E60 or W43 and six digits), whose loaded boundary
    /// is the area
    #[serde(default)]
    #[schemars(regex(pattern = r"^([Ee]60|[Ww]43)[0-9]{6}$"))]
    pub lpa_code: Option<String>,
    /// Only these designation datasets (planning.data.gov.uk names); omitted or empty: all
    #[serde(default)]
    #[schemars(with = "Vec<DesignationType>")]
    pub types: Vec<String>,
    /// Widen the scope by this many metres, 0 to 1000 (default 0: features containing the point
    /// or overlapping the area; point features always within 15 m)
    #[serde(default)]
    #[schemars(range(min = 0, max = 1000))]
    pub buffer_m: i64,
}

/// The schema states the scope rule: exactly one of the five scopes.
fn one_scope(schema: &mut schemars::Schema) {
    terrace_core::patterns::exactly_one_of(
        schema,
        &[
            &["location"],
            &["postcode"],
            &["uprn"],
            &["area_geojson"],
            &["lpa_code"],
        ],
    );
}

fn range(path: &[&str], v: f64, lo: f64, hi: f64) -> Option<Violation> {
    let name = path.last().copied().unwrap_or_default();
    (!(lo..=hi).contains(&v)).then(|| {
        Violation::new(
            path,
            "value_error",
            format!("{name} must be between {lo} and {hi}"),
        )
        .with_input(v)
    })
}

impl DesignationsInput {
    /// Exactly one scope; a point in range; a valid, small enough polygon; a well-formed LPA
    /// code; known types; a buffer in range.
    pub fn violations(&self) -> Vec<Violation> {
        let mut v = Vec::new();
        let given = usize::from(self.location.is_some())
            + usize::from(self.postcode.is_some())
            + usize::from(self.uprn.is_some())
            + usize::from(self.area_geojson.is_some())
            + usize::from(self.lpa_code.is_some());
        if given != 1 {
            v.push(Violation::new(
                &[],
                "value_error",
                format!(
                    "give exactly one of location, postcode, uprn, area_geojson or lpa_code ({given} given)"
                ),
            ));
        }
        if let Some(p) = &self.location {
            v.extend(range(&["location", "lat"], p.lat, -90.0, 90.0));
            v.extend(range(&["location", "lon"], p.lon, -180.0, 180.0));
        }
        if let Some(a) = &self.area_geojson
            && let Err(msg) = area_bng(a)
        {
            v.push(Violation::new(&["area_geojson"], "value_error", msg));
        }
        if let Some(code) = &self.lpa_code
            && let Err(e) = AreaId::new(AreaKind::Lpa, code)
        {
            v.push(
                Violation::new(
                    &["lpa_code"],
                    "value_error",
                    format!("not a local planning authority code (E60 or W43 and six digits): {e}"),
                )
                .with_input(code.clone()),
            );
        }
        for (i, t) in self.types.iter().enumerate() {
            if !TYPES.contains(&t.as_str()) {
                let idx = i.to_string();
                v.push(
                    Violation::new(
                        &["types", &idx],
                        "literal_error",
                        format!(
                            "unknown designation type; the valid types are: {}",
                            TYPES.join(", ")
                        ),
                    )
                    .with_input(t.clone())
                    .with_ctx(serde_json::json!({ "expected": TYPES })),
                );
            }
        }
        if !(0..=i64::from(MAX_BUFFER_M)).contains(&self.buffer_m) {
            v.push(
                Violation::new(
                    &["buffer_m"],
                    "range_error",
                    format!("buffer_m must be between 0 and {MAX_BUFFER_M}"),
                )
                .with_input(self.buffer_m),
            );
        }
        v
    }
}

/// The polygon in BNG metres, or why it cannot be used: a ring not closed or too short, a
/// position outside WGS84's ranges or Great Britain, too many vertices, too large, or no area.
pub fn area_bng(a: &AreaGeoJson) -> Result<MultiPolygon<f64>, String> {
    let polygons = a.polygons();
    if polygons.is_empty() || polygons.len() > MAX_PARTS {
        return Err(format!("1 to {MAX_PARTS} polygons are allowed"));
    }
    if polygons.iter().any(|p| p.is_empty() || p.len() > MAX_PARTS) {
        return Err(format!(
            "each polygon has 1 to {MAX_PARTS} rings: its exterior, then any holes"
        ));
    }
    let vertices: usize = polygons
        .iter()
        .flat_map(|p| p.iter())
        .map(|r| r.0.len())
        .sum();
    if vertices > MAX_VERTICES {
        return Err(format!(
            "the polygon has {vertices} vertices; at most {MAX_VERTICES} are allowed"
        ));
    }
    let mut out = Vec::new();
    for rings in polygons {
        let mut bng = Vec::new();
        for ring in rings {
            let r = &ring.0;
            if r.len() < 4 || r.first() != r.last() {
                return Err(
                    "each ring needs at least 4 positions, the first repeated as the last".into(),
                );
            }
            let mut pts = Vec::with_capacity(r.len());
            for &[lon, lat] in r {
                if !(-180.0..=180.0).contains(&lon) || !(-90.0..=90.0).contains(&lat) {
                    return Err(format!(
                        "position [{lon}, {lat}] is not a WGS84 [lon, lat] pair"
                    ));
                }
                let p = terrace_geo::bng_from_wgs84(lon, lat)
                    .ok_or_else(|| format!("position [{lon}, {lat}] is outside Great Britain"))?;
                pts.push(p);
            }
            bng.push(LineString::from(pts));
        }
        let mut it = bng.into_iter();
        let Some(exterior) = it.next() else {
            return Err("a polygon needs an exterior ring".into());
        };
        out.push(Polygon::new(exterior, it.collect()));
    }
    let mp = MultiPolygon::new(out);
    let km2 = mp.unsigned_area() / 1e6;
    if km2 > MAX_AREA_KM2 {
        return Err(format!(
            "the polygon covers {km2:.1} km²; at most {MAX_AREA_KM2} km² is allowed"
        ));
    }
    if km2 <= 0.0 {
        return Err("the polygon has no area".into());
    }
    Ok(mp)
}

/// What the scope was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScopeKind {
    Location,
    Postcode,
    Uprn,
    AreaGeojson,
    LpaCode,
}

/// The scope as read.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ScopeInfo {
    pub kind: ScopeKind,
    /// The point read, British National Grid metres (null for an area).
    pub easting: Option<f64>,
    pub northing: Option<f64>,
    /// The area in square kilometres (null for a point).
    pub area_km2: Option<f64>,
    /// The local planning authority, for `lpa_code`.
    pub lpa_code: Option<String>,
    pub buffer_m: i64,
}

/// How the vintage was told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VintageBasis {
    /// The publisher's entry date.
    EntryDate,
    /// The publisher gives no date: the day it was loaded.
    Loaded,
}

/// One designation affecting the scope.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DesignationItem {
    #[serde(flatten)]
    pub feature: Designation,
    /// The entry date the publisher gives, else the day the row was loaded.
    pub vintage: NaiveDate,
    pub vintage_basis: VintageBasis,
}

/// A dataset loaded for one local authority of the scope.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LoadedFor {
    pub dataset: String,
    pub local_authority: String,
    pub source: String,
    /// The newest entry date among the dataset's features there.
    pub vintage: Option<NaiveDate>,
    pub loaded_at: NaiveDateTime,
}

/// A designation dataset not loaded for (part of) the scope: an absence there means nothing.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct NotLoaded {
    pub dataset: String,
    /// The local authorities of the scope it is not loaded for (empty when none is known).
    pub local_authorities: Vec<String>,
    pub reason: String,
}

/// The answer of `POST /v1/planning/designations`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DesignationsAnswer {
    pub scope: ScopeInfo,
    /// The local authorities the scope touches, whose coverage decides what was looked at.
    pub local_authorities: Vec<String>,
    /// The datasets consulted, in answer order.
    pub types: Vec<String>,
    /// The designations, by dataset then reference; at most 500.
    pub designations: Vec<DesignationItem>,
    /// How many matched (more than listed when `truncated`).
    pub total: usize,
    pub truncated: bool,
    /// Where each consulted dataset is loaded in the scope, with its vintage.
    pub loaded: Vec<LoadedFor>,
    /// The consulted datasets not loaded for some local authority of the scope; never omitted.
    pub not_loaded: Vec<NotLoaded>,
}

/// The local authority districts that share some of `area` (an edge in common is not enough).
async fn lads_touching(db: &Db, area: &MultiPolygon<f64>) -> Result<Vec<String>, LookupError> {
    let mut out = Vec::new();
    let Some(bbox) = terrace_geo::bbox(area) else {
        return Ok(out);
    };
    for b in terrace_store::planning::boundaries_meeting_box(db, "lad", bbox).await? {
        if let Ok(mp) = terrace_geo::multipolygon_from_wkb(&b.wkb)
            && let m = mp.relate(area)
            && m.is_intersects()
            && !m.is_touches()
        {
            out.push(b.code);
        }
    }
    Ok(out)
}

/// `POST /v1/planning/designations`.
pub async fn designations(
    db: &Db,
    layers: &LayerCache,
    areas: &AreasCtx,
    input: &DesignationsInput,
) -> Result<DesignationsAnswer, LookupError> {
    let buffer = input.buffer_m.clamp(0, i64::from(MAX_BUFFER_M));
    let mut scope = ScopeInfo {
        kind: ScopeKind::Location,
        easting: None,
        northing: None,
        area_km2: None,
        lpa_code: None,
        buffer_m: buffer,
    };
    let area: Option<MultiPolygon<f64>>;
    let point: Option<(f64, f64)>;
    let lads: Vec<String>;
    if let Some(a) = &input.area_geojson {
        let mp = area_bng(a).map_err(|e| LookupError::NotFound(format!("an area: {e}")))?;
        scope.kind = ScopeKind::AreaGeojson;
        lads = lads_touching(db, &mp).await?;
        area = Some(mp);
        point = None;
    } else if let Some(code) = &input.lpa_code {
        let id = AreaId::new(AreaKind::Lpa, code)
            .map_err(|_| LookupError::NotFound(format!("local planning authority {code}")))?;
        let row = address::boundaries_by_code(db, &[id.code().to_string()])
            .await?
            .into_iter()
            .find(|b| b.kind == "lpa")
            .ok_or_else(|| {
                LookupError::NotFound(format!(
                    "local planning authority {} (its planning.data.gov.uk boundary is not loaded)",
                    id.code()
                ))
            })?;
        let mp = terrace_geo::multipolygon_from_wkb(&row.wkb).map_err(|_| {
            LookupError::NotFound(format!(
                "a readable boundary of local planning authority {}",
                id.code()
            ))
        })?;
        scope.kind = ScopeKind::LpaCode;
        scope.lpa_code = Some(id.code().to_string());
        lads = lads_touching(db, &mp).await?;
        area = Some(mp);
        point = None;
    } else {
        let at = crate::locate(
            db,
            areas,
            input.uprn,
            input.postcode.as_ref(),
            input.location.map(|l| (l.lat, l.lon)),
        )
        .await?;
        scope.kind = if input.uprn.is_some() {
            ScopeKind::Uprn
        } else if input.postcode.is_some() {
            ScopeKind::Postcode
        } else {
            ScopeKind::Location
        };
        let (Some(x), Some(y)) = (at.x, at.y) else {
            return Err(LookupError::NotFound(
                "a position for the location (it has no coordinates)".into(),
            ));
        };
        lads = at.lad_code.into_iter().collect();
        area = None;
        point = Some((x, y));
    }
    if let Some(a) = &area {
        scope.area_km2 = Some((a.unsigned_area() / 1e4).round() / 100.0);
    }
    if let Some((x, y)) = point {
        scope.easting = Some(x);
        scope.northing = Some(y);
    }
    let types: Vec<String> = TYPES
        .iter()
        .filter(|t| input.types.is_empty() || input.types.iter().any(|x| x == *t))
        .map(|t| t.to_string())
        .collect();
    let layers = layers.current(db).await?;
    let q = match (&area, point) {
        (Some(a), _) => Scope::Area(a),
        (None, Some(p)) => Scope::Point(p),
        (None, None) => return Err(LookupError::NotFound("a location".into())),
    };
    let mut items = Vec::new();
    let mut loaded = Vec::new();
    let mut not_loaded = Vec::new();
    for t in &types {
        let mut found = layers.designations(t, q, buffer as f64);
        found.sort_by(|a, b| a.reference.cmp(&b.reference));
        items.extend(found.into_iter().map(|f| {
            let (vintage, vintage_basis) = match f.entry_date {
                Some(d) => (d, VintageBasis::EntryDate),
                None => (f.loaded_at.date(), VintageBasis::Loaded),
            };
            DesignationItem {
                feature: f,
                vintage,
                vintage_basis,
            }
        }));
        let mut missing = Vec::new();
        for lad in &lads {
            match layers.coverage_of(t, lad) {
                Some(c) => loaded.push(LoadedFor {
                    dataset: t.clone(),
                    local_authority: lad.clone(),
                    source: c.source,
                    vintage: c.vintage,
                    loaded_at: c.loaded_at,
                }),
                None => missing.push(lad.clone()),
            }
        }
        if lads.is_empty() {
            not_loaded.push(NotLoaded {
                dataset: t.clone(),
                local_authorities: Vec::new(),
                reason:
                    "no local authority boundary holds the location, so coverage cannot be told"
                        .into(),
            });
        } else if !missing.is_empty() {
            not_loaded.push(NotLoaded {
                dataset: t.clone(),
                reason: format!("{t} is not loaded for {}", missing.join(", ")),
                local_authorities: missing,
            });
        }
    }
    let total = items.len();
    items.truncate(MAX_DESIGNATIONS);
    Ok(DesignationsAnswer {
        scope,
        local_authorities: lads,
        types,
        truncated: total > items.len(),
        total,
        designations: items,
        loaded,
        not_loaded,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema's types (`DesignationType`) are exactly [`TYPES`], in the same order.
    #[test]
    fn the_schema_names_exactly_the_types() {
        let schema = serde_json::to_value(schemars::schema_for!(DesignationType)).unwrap();
        let names: Vec<&str> = schema["enum"]
            .as_array()
            .expect("a plain string enum")
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(names, TYPES);
    }

    fn square(lon: f64, lat: f64, d: f64) -> AreaGeoJson {
        AreaGeoJson::Polygon {
            coordinates: vec![Ring(vec![
                [lon, lat],
                [lon + d, lat],
                [lon + d, lat + d],
                [lon, lat + d],
                [lon, lat],
            ])],
        }
    }

    #[test]
    fn polygon_limits() {
        let small = area_bng(&square(-3.53, 50.72, 0.01)).unwrap();
        let km2 = small.unsigned_area() / 1e6;
        assert!((0.5..1.0).contains(&km2), "{km2}");
        let big = area_bng(&square(-3.9, 50.5, 0.2)).unwrap_err();
        assert!(big.contains("km²"), "{big}");
        let open = AreaGeoJson::Polygon {
            coordinates: vec![Ring(vec![
                [-3.53, 50.72],
                [-3.52, 50.72],
                [-3.52, 50.73],
                [-3.53, 50.73],
            ])],
        };
        assert!(area_bng(&open).unwrap_err().contains("first repeated"));
        let mut ring: Vec<[f64; 2]> = (0..1_001)
            .map(|i| [-3.53 + f64::from(i) * 1e-6, 50.72])
            .collect();
        ring.push(ring[0]);
        let many = AreaGeoJson::Polygon {
            coordinates: vec![Ring(ring)],
        };
        assert!(area_bng(&many).unwrap_err().contains("vertices"));
        assert!(
            area_bng(&square(10.0, 10.0, 0.01))
                .unwrap_err()
                .contains("outside Great Britain")
        );
        // At most 100 polygons, each of 1 to 100 rings (the schema's limits, enforced too).
        let ring = |i: usize| match square(-3.53 + i as f64 * 1e-3, 50.72, 1e-4) {
            AreaGeoJson::Polygon { mut coordinates } => coordinates.remove(0),
            AreaGeoJson::MultiPolygon { .. } => unreachable!(),
        };
        let parts = |n: usize| AreaGeoJson::MultiPolygon {
            coordinates: (0..n).map(|i| vec![ring(i)]).collect(),
        };
        assert!(area_bng(&parts(100)).is_ok());
        assert!(area_bng(&parts(101)).unwrap_err().contains("polygons"));
        let no_ring = AreaGeoJson::MultiPolygon {
            coordinates: vec![Vec::new()],
        };
        assert!(area_bng(&no_ring).unwrap_err().contains("rings"));
        let holes = AreaGeoJson::Polygon {
            coordinates: (0..101).map(ring).collect(),
        };
        assert!(area_bng(&holes).unwrap_err().contains("rings"));
    }
}
