//! `POST /v1/buildings/physical`: for each UPRN, the building its address point stands in (the
//! address-to-footprint link of the derive step) and what the loaded data holds about it: its
//! footprint area and outline (WGS84 GeoJSON, simplified at 0.5 m), its height, survey year and
//! volume from the LIDAR build (`heights`), else the footprint file's height, floors only where a source records them, roof, solar panels, and the unit mix of
//! the addressed building (its units by class and list, as the mixed-use buildings count them).
//! Methods in docs/METHODS.md ("Physical building facts").
//!
//! Invariants: every fact has its source and confidence, or is `not_available` with the reason;
//! floors are never estimated from height, and volume is never a height times an area; basement,
//! green roof and construction material have no open source.

use crate::LandCtx;
use crate::mixed_use::{Side, group_buildings};
use crate::stock::building_of;
use geo::Simplify;
use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::{Fact, UprnEntry};
use terrace_store::{Db, StoreError, address, buildings, epc, land, lidar, osm};

/// The tolerance of the simplified outline, metres.
pub const SIMPLIFY_M: f64 = 0.5;

/// The units of the addressed building.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct UnitMix {
    /// The parent UPRN the units share, or the UPRN itself when it has none.
    pub building_uprn: i64,
    /// Units of the building (parent shells are not units).
    pub units: i64,
    /// Units with residential evidence: class `R…`/`X…`, or on the council tax list.
    pub residential: Side,
    /// Units with commercial evidence: class `C…`/`X…`, or on the newest rating list.
    pub commercial: Side,
    /// Units with neither.
    pub other: i64,
    pub basis: &'static str,
    /// Whether a licence of the loaded HMO licence register names the property or its building
    /// (evidence of residential units let to several households); false only where the register
    /// of the property's authority is loaded.
    pub hmo_licensed: Fact<bool>,
    /// The licence's maximum number of occupants.
    pub hmo_max_occupants: Fact<i64>,
    /// The licence's maximum number of households.
    pub hmo_households: Fact<i64>,
    /// The storeys the licence records.
    pub hmo_storeys: Fact<i64>,
}

/// The HMO licence facts of a property.
struct Hmo {
    licensed: Fact<bool>,
    max_occupants: Fact<i64>,
    households: Fact<i64>,
    storeys: Fact<i64>,
}

const HMO_NOT_LOADED: &str = "no HMO licence register is loaded (an operator feed: docs/DATA.md)";

/// The newest licence naming the property (else its building), or why there is none.
async fn hmo(db: &Db, uprn: i64, building_uprn: i64, lad: Option<&str>) -> Result<Hmo, StoreError> {
    let rows = osm::hmo_of_uprns(db, &[uprn, building_uprn]).await?;
    let row = rows
        .iter()
        .find(|r| r.uprn == Some(uprn))
        .or_else(|| rows.first());
    let Some(r) = row else {
        let covered = match lad {
            Some(l) => osm::hmo_source_of_authority(db, l).await?,
            None => None,
        };
        let (licensed, why) = match (covered, osm::hmo_loaded(db).await?) {
            (Some(src), _) => (
                Fact::ok(
                    false,
                    &src,
                    format!(
                        "no licence of the loaded register of {} names the property or its building",
                        lad.unwrap_or_default()
                    ),
                ),
                "the property holds no HMO licence in the loaded register".to_string(),
            ),
            (None, true) => {
                let why =
                    "the loaded HMO licence register does not cover the property's local authority"
                        .to_string();
                (Fact::not_available(why.clone()), why)
            }
            (None, false) => (
                Fact::not_available(HMO_NOT_LOADED),
                HMO_NOT_LOADED.to_string(),
            ),
        };
        return Ok(Hmo {
            licensed,
            max_occupants: Fact::not_available(why.clone()),
            households: Fact::not_available(why.clone()),
            storeys: Fact::not_available(why),
        });
    };
    let linked = match (r.match_method.as_deref(), r.match_score) {
        (Some("address_matcher"), Some(score)) => {
            format!(
                "UPRN {} found by the address matcher (score {score:.3})",
                r.uprn.unwrap_or_default()
            )
        }
        (_, _) => format!("UPRN {} given by the feed", r.uprn.unwrap_or_default()),
    };
    let basis = format!(
        "HMO licence {} of {} ({} to {}), {linked}",
        r.licence_number,
        r.authority,
        r.licence_start
            .map_or("start not stated".to_string(), |d| d.to_string()),
        r.licence_end
            .map_or("end not stated".to_string(), |d| d.to_string()),
    );
    let count = |v: Option<i32>, what: &str| match v {
        Some(n) => Fact::ok(i64::from(n), &r.source, format!("{what} of {basis}")),
        None => Fact::not_available(format!("{basis} does not state its {what}")),
    };
    Ok(Hmo {
        licensed: Fact::ok(true, &r.source, basis.clone()),
        max_occupants: count(r.max_occupants, "maximum occupants"),
        households: count(r.households, "maximum households"),
        storeys: count(r.storeys, "storeys"),
    })
}

/// What the data holds about one property's building.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PhysicalFacts {
    pub uprn: i64,
    /// The OS id of the footprint the address point stands in (null: none).
    pub building_id: Option<String>,
    /// Planar area of the footprint, square metres.
    pub footprint_area_m2: Fact<f64>,
    /// The footprint outline, a GeoJSON MultiPolygon in WGS84, simplified at 0.5 m.
    pub footprint_geojson: Fact<serde_json::Value>,
    /// Height above ground, metres.
    pub height_m: Fact<f64>,
    /// The year the height was surveyed.
    pub height_survey_year: Fact<i32>,
    /// Volume above ground, cubic metres (measured from a surface model, never height × area).
    pub volume_m3: Fact<f64>,
    /// Floors above ground, only where a source records them (never estimated from height).
    pub floors: Fact<i64>,
    pub roof_shape: Fact<String>,
    pub roof_material: Fact<String>,
    /// Whether photovoltaic panels are present.
    pub solar_panels_present: Fact<bool>,
    pub basement: Fact<bool>,
    pub green_roof: Fact<bool>,
    pub construction_material: Fact<String>,
    pub unit_mix: UnitMix,
}

/// The outcome of one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PhysicalOutcome {
    /// The UPRN is in the register: answered with what is held (charged).
    Ok,
    /// No address has the UPRN (free).
    NotFound,
    /// The entry is not a UPRN, or the item failed (free).
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PhysicalItem {
    /// The UPRN as given.
    pub uprn: serde_json::Value,
    pub outcome: PhysicalOutcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<PhysicalFacts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PhysicalBatch {
    pub items: Vec<PhysicalItem>,
    /// Items with an `ok` outcome: the call is charged for these only.
    pub answered: usize,
}

/// The provenance of the unit mix (counted from the address register, the council tax list and
/// the rating lists as loaded).
pub const UNIT_MIX_SOURCE: &str = "derived:unit_evidence";
pub const UNIT_MIX_BASIS: &str = "The addressed building's units (by parent UPRN; parent shells are not units). Residential: address class R or X, or on the council tax list; commercial: class C or X, or a hereditament of the newest loaded rating list; a unit can be both.";
const FLOORS_REASON: &str = "no loaded source records the number of floors (an OpenStreetMap extract's building:levels, or a building-attributes feed); floors are never estimated from height";
const VOLUME_REASON: &str = "volume is measured from a LIDAR surface model inside the footprint, never estimated as height times area";
const ROOF_SHAPE_REASON: &str = "no loaded source records roof shape (an OpenStreetMap extract's roof:shape, or a building-attributes feed)";
const ROOF_MATERIAL_REASON: &str = "no loaded source records roof material (an OpenStreetMap extract's roof:material, or a building-attributes feed)";
const BASEMENT_REASON: &str = "no open source records basements: it needs a licensed building-attributes feed, none is loaded";
const GREEN_ROOF_REASON: &str = "no open source records green roofs: it needs a licensed building-attributes feed, none is loaded";
const MATERIAL_REASON: &str = "no open source records construction material: it needs a licensed building-attributes feed, none is loaded";

/// A GeoJSON MultiPolygon in WGS84 of a BNG multipolygon, simplified at [`SIMPLIFY_M`];
/// coordinates to 7 decimals (about 1 cm). None if a vertex is outside the transformation.
pub fn outline_geojson(mp: &geo::MultiPolygon<f64>) -> Option<serde_json::Value> {
    let simple = mp.simplify(SIMPLIFY_M);
    let ring = |r: &geo::LineString<f64>| -> Option<Vec<[f64; 2]>> {
        r.coords()
            .map(|c| {
                terrace_geo::wgs84_from_bng(c.x, c.y)
                    .map(|(lon, lat)| [(lon * 1e7).round() / 1e7, (lat * 1e7).round() / 1e7])
            })
            .collect()
    };
    let mut polygons = Vec::new();
    for p in simple.0.iter() {
        let mut rings = vec![ring(p.exterior())?];
        for i in p.interiors() {
            rings.push(ring(i)?);
        }
        polygons.push(rings);
    }
    Some(serde_json::json!({"type": "MultiPolygon", "coordinates": polygons}))
}

fn unit_mix(rows: &[buildings::UnitEvidenceRow], building_uprn: i64, hmo: Hmo) -> UnitMix {
    let (all, _) = group_buildings(rows);
    match all.into_iter().find(|b| b.building_uprn == building_uprn) {
        Some(b) => {
            let other = b
                .unit_list
                .iter()
                .filter(|u| u.residential_evidence.is_empty() && u.commercial_evidence.is_empty())
                .count() as i64;
            UnitMix {
                building_uprn,
                units: b.units,
                residential: b.residential,
                commercial: b.commercial,
                other,
                basis: UNIT_MIX_BASIS,
                hmo_licensed: hmo.licensed,
                hmo_max_occupants: hmo.max_occupants,
                hmo_households: hmo.households,
                hmo_storeys: hmo.storeys,
            }
        }
        // The UPRN is a parent shell with no unit loaded.
        None => UnitMix {
            building_uprn,
            units: 0,
            residential: Side::default(),
            commercial: Side::default(),
            other: 0,
            basis: UNIT_MIX_BASIS,
            hmo_licensed: hmo.licensed,
            hmo_max_occupants: hmo.max_occupants,
            hmo_households: hmo.households,
            hmo_storeys: hmo.storeys,
        },
    }
}

/// What the loaded data holds about one property's building (None: no address has the UPRN);
/// the property record's building tier reads it too.
pub async fn building_facts(db: &Db, uprn: i64) -> Result<Option<PhysicalFacts>, StoreError> {
    let Some(addr) = address::address(db, uprn).await? else {
        return Ok(None);
    };
    let building_uprn = match crate::stock::kind(addr.class.as_deref()) {
        crate::stock::Kind::ParentShell => uprn,
        crate::stock::Kind::Residential
        | crate::stock::Kind::Commercial
        | crate::stock::Kind::DualUse
        | crate::stock::Kind::Other
        | crate::stock::Kind::Unclassified => building_of(uprn, addr.parent_uprn),
    };
    let rows = buildings::building_unit_evidence(db, &[building_uprn]).await?;
    let hmo = hmo(db, uprn, building_uprn, addr.lad_code.as_deref()).await?;
    let unit_mix = unit_mix(&rows, building_uprn, hmo);
    // The footprint: the UPRN's own link, else its building record's.
    let links = buildings::address_footprints_of(db, &[uprn, building_uprn]).await?;
    let link = links
        .iter()
        .find(|l| l.uprn == uprn)
        .or_else(|| links.iter().find(|l| l.uprn == building_uprn));
    let footprint = match link {
        Some(l) => land::footprints_by_id(db, std::slice::from_ref(&l.building_id))
            .await?
            .into_iter()
            .next(),
        None => None,
    };
    let no_footprint = if addr.x.is_none() {
        "the address has no position, so no footprint can be found for it".to_string()
    } else {
        match &addr.lad_code {
            Some(l) if land::authority_has_footprints(db, l).await? => {
                "the address point stands in no loaded building footprint".to_string()
            }
            Some(_) | None => {
                "no building footprint is loaded for the property's local authority".to_string()
            }
        }
    };
    let osm = Osm::read(db, footprint.as_ref()).await?;
    let (
        building_id,
        footprint_area_m2,
        footprint_geojson,
        height_m,
        height_survey_year,
        volume_m3,
    ) = match &footprint {
        Some(f) => {
            let linked = format!(
                "footprint {} containing the address point ({})",
                f.building_id,
                link.map(|l| l.method.as_str()).unwrap_or_default()
            );
            let outline = terrace_geo::multipolygon_from_wkb(&f.wkb)
                .ok()
                .and_then(|mp| outline_geojson(&mp));
            let (height, year, volume) = height_facts(db, f, &linked, &osm).await?;
            (
                Some(f.building_id.clone()),
                Fact::ok(f.area_m2, &f.source, format!("planar area of {linked}")),
                match outline {
                    Some(g) => Fact::ok(
                        g,
                        &f.source,
                        format!("outline of {linked}, WGS84, simplified at {SIMPLIFY_M} m"),
                    ),
                    None => Fact::not_available(
                        "the outline lies outside the BNG to WGS84 transformation",
                    ),
                },
                height,
                year,
                volume,
            )
        }
        None => (
            None,
            Fact::not_available(no_footprint.clone()),
            Fact::not_available(no_footprint.clone()),
            Fact::not_available(no_footprint.clone()),
            Fact::not_available(no_footprint.clone()),
            Fact::not_available(no_footprint.clone()),
        ),
    };
    let attrs = Attributes::read(db, uprn, building_uprn).await?;
    let solar_panels_present = match osm.solar() {
        Some(f) => f,
        None => match solar(db, uprn, &osm).await? {
            f if f.status == terrace_core::FigureStatus::Ok => f,
            f => attrs.fact(|a| a.solar_panels, "solar_panels").unwrap_or(f),
        },
    };
    Ok(Some(PhysicalFacts {
        uprn,
        building_id,
        footprint_area_m2,
        footprint_geojson,
        height_m,
        height_survey_year,
        volume_m3,
        floors: attrs.or_osm(
            attrs.fact(|a| a.floors.map(i64::from), "floors"),
            &osm,
            osm.fact(|r| r.levels.map(i64::from), "building:levels"),
            "building:levels",
            FLOORS_REASON,
        ),
        roof_shape: attrs.or_osm(
            attrs.fact(|a| a.roof_shape.clone(), "roof_shape"),
            &osm,
            osm.fact(|r| r.roof_shape.clone(), "roof:shape"),
            "roof:shape",
            ROOF_SHAPE_REASON,
        ),
        roof_material: attrs.or_osm(
            attrs.fact(|a| a.roof_material.clone(), "roof_material"),
            &osm,
            osm.fact(|r| r.roof_material.clone(), "roof:material"),
            "roof:material",
            ROOF_MATERIAL_REASON,
        ),
        solar_panels_present,
        basement: attrs
            .fact(|a| a.basement, "basement")
            .unwrap_or_else(|| attrs.not_available(BASEMENT_REASON)),
        green_roof: attrs
            .fact(|a| a.green_roof, "green_roof")
            .unwrap_or_else(|| attrs.not_available(GREEN_ROOF_REASON)),
        construction_material: attrs
            .fact(|a| a.construction_material.clone(), "construction_material")
            .unwrap_or_else(|| attrs.not_available(MATERIAL_REASON)),
        unit_mix,
    }))
}

fn round_to(v: f64, places: i32) -> f64 {
    let k = 10f64.powi(places);
    (v * k).round() / k
}

/// Height, survey year and volume of a footprint: the LIDAR build's where it measured one; else
/// the footprint file's height (second to LIDAR, with no survey year or volume); else why not.
async fn height_facts(
    db: &Db,
    f: &land::FootprintRow,
    linked: &str,
    osm: &Osm,
) -> Result<(Fact<f64>, Fact<i32>, Fact<f64>), StoreError> {
    let row = lidar::heights_by_id(db, std::slice::from_ref(&f.building_id))
        .await?
        .into_iter()
        .next();
    if let Some(r) = &row
        && let (Some(h), Some(v), Some(src)) = (r.height_m, r.volume_m3, r.source.as_deref())
    {
        let cells = r.cells.unwrap_or(0);
        let skipped = r
            .note
            .as_deref()
            .map(|n| format!("; {n}"))
            .unwrap_or_default();
        let height = Fact::ok(
            round_to(h, 2),
            src,
            format!(
                "median of DSM - DTM over the {cells} 1 m cells centred inside {linked}, from the Environment Agency LIDAR composite{skipped}"
            ),
        );
        let year = match r.survey_year {
            Some(y) => Fact::ok(
                y,
                src,
                "survey year of the LIDAR tiles holding most of the footprint's cells (the composite's 2022 unless the operator gives a tile's year)".to_string(),
            ),
            None => Fact::not_available("the LIDAR tiles state no survey year"),
        };
        let volume = Fact::ok(
            round_to(v, 1),
            src,
            format!("sum of max(DSM - DTM, 0) x cell area over the same {cells} cells"),
        );
        return Ok((height, year, volume));
    }
    let why_lidar = match row.as_ref().and_then(|r| r.note.clone()) {
        Some(n) => n,
        None if lidar::tiles_loaded(db).await? => {
            "the building heights have not been built since the LIDAR tiles were loaded (cargo xtask build)".to_string()
        }
        None => "no LIDAR surface model (DSM and DTM) is loaded".to_string(),
    };
    let volume = Fact::not_available(format!("{why_lidar}; {VOLUME_REASON}"));
    if f.height_m.is_none()
        && let Some(h) = osm.fact(|r| r.height_m, "height")
    {
        let year = Fact::not_available(format!(
            "an OpenStreetMap height tag carries no survey year, and there is no LIDAR height: {why_lidar}"
        ));
        return Ok((h, year, volume));
    }
    Ok(match f.height_m {
        Some(h) => (
            Fact::ok(
                h,
                &f.source,
                format!("height given with {linked} (no LIDAR height: {why_lidar})"),
            ),
            Fact::not_available(format!(
                "the footprint file gives its height without a survey year, and there is no LIDAR height: {why_lidar}"
            )),
            volume,
        ),
        None => {
            let why = format!(
                "{why_lidar}; the footprint source gives no height; {}",
                osm.why("height")
            );
            (
                Fact::not_available(why.clone()),
                Fact::not_available(why),
                volume,
            )
        }
    })
}

/// The building-attributes feed's row for the UPRN (else for its building record), and whether
/// the feed is loaded at all.
struct Attributes {
    row: Option<buildings::BuildingAttributesRow>,
    loaded: bool,
}

impl Attributes {
    async fn read(db: &Db, uprn: i64, building_uprn: i64) -> Result<Attributes, StoreError> {
        let rows = buildings::attributes_by_uprn(db, &[uprn, building_uprn]).await?;
        let row = rows
            .iter()
            .find(|r| r.uprn == uprn)
            .or_else(|| rows.iter().find(|r| r.uprn == building_uprn))
            .cloned();
        let loaded = row.is_some() || buildings::attributes_loaded(db).await?;
        Ok(Attributes { row, loaded })
    }

    /// The feed's value of a column, when its row records one.
    fn fact<T>(
        &self,
        get: impl Fn(&buildings::BuildingAttributesRow) -> Option<T>,
        column: &str,
    ) -> Option<Fact<T>> {
        let r = self.row.as_ref()?;
        let v = get(r)?;
        Some(Fact::ok(
            v,
            &r.source,
            format!(
                "{column} of UPRN {} in the building-attributes feed",
                r.uprn
            ),
        ))
    }

    /// Why there is no value: the feed holds nothing for the property, or no feed is loaded.
    fn not_available<T>(&self, without_feed: &str) -> Fact<T> {
        Fact::not_available(self.reason(without_feed))
    }

    fn reason(&self, without_feed: &str) -> String {
        match (&self.row, self.loaded) {
            (Some(r), _) => format!(
                "the building-attributes feed does not record it for UPRN {}",
                r.uprn
            ),
            (None, true) => {
                "the building-attributes feed holds no row for this property or its building"
                    .to_string()
            }
            (None, false) => without_feed.to_string(),
        }
    }

    /// The feed's value, else the OpenStreetMap tag's, else why neither.
    fn or_osm<T>(
        &self,
        feed: Option<Fact<T>>,
        osm: &Osm,
        tag: Option<Fact<T>>,
        tag_name: &str,
        without: &str,
    ) -> Fact<T> {
        feed.or(tag).unwrap_or_else(|| {
            if osm.loaded {
                Fact::not_available(format!(
                    "{}; {}",
                    osm.why(tag_name),
                    self.reason("no building-attributes feed is loaded")
                ))
            } else {
                self.not_available(without)
            }
        })
    }
}

/// The OpenStreetMap buildings linked to the property's footprint (best overlap first), and
/// whether an extract is loaded at all.
struct Osm {
    rows: Vec<(osm::OsmFootprintLinkRow, osm::OsmBuildingRow)>,
    loaded: bool,
    footprint: Option<String>,
}

/// The attribution every OpenStreetMap fact carries (ODbL).
pub const OSM_ATTRIBUTION: &str = "© OpenStreetMap contributors, ODbL";

impl Osm {
    async fn read(db: &Db, footprint: Option<&land::FootprintRow>) -> Result<Osm, StoreError> {
        let rows = match footprint {
            Some(f) => osm::osm_of_footprint(db, &f.building_id).await?,
            None => Vec::new(),
        };
        let loaded = !rows.is_empty() || osm::osm_loaded(db).await?;
        Ok(Osm {
            rows,
            loaded,
            footprint: footprint.map(|f| f.building_id.clone()),
        })
    }

    /// The first linked building's value of a tag.
    fn fact<T>(
        &self,
        get: impl Fn(&osm::OsmBuildingRow) -> Option<T>,
        tag: &str,
    ) -> Option<Fact<T>> {
        self.rows.iter().find_map(|(l, r)| {
            get(r).map(|v| {
                Fact::ok(
                    v,
                    &r.source,
                    format!(
                        "{tag} tag of OpenStreetMap {} ({} of footprint {}, {:.0}% of its outline inside); {OSM_ATTRIBUTION}",
                        r.osm_key,
                        l.method,
                        l.building_id,
                        l.overlap_share * 100.0
                    ),
                )
            })
        })
    }

    /// Rooftop PV mapped on a linked building.
    fn solar(&self) -> Option<Fact<bool>> {
        self.rows.iter().find_map(|(l, r)| {
            r.rooftop_pv.as_ref().map(|pv| {
                Fact::ok(
                    true,
                    &r.source,
                    format!(
                        "rooftop PV {pv} (generator:source=solar, location=roof) on OpenStreetMap {} ({} of footprint {}); {OSM_ATTRIBUTION}",
                        r.osm_key, l.method, l.building_id
                    ),
                )
            })
        })
    }

    /// Why no rooftop PV is known from OpenStreetMap (mapping is incomplete: never "none").
    fn why_solar(&self) -> String {
        if self.loaded && !self.rows.is_empty() {
            "no rooftop PV is mapped on the OpenStreetMap buildings linked to the footprint (unmapped is not absent)".to_string()
        } else {
            self.why("rooftop PV")
        }
    }

    /// Why no linked OpenStreetMap building gives a tag.
    fn why(&self, tag: &str) -> String {
        match (&self.footprint, self.loaded, self.rows.is_empty()) {
            (_, false, _) => "no OpenStreetMap extract is loaded".to_string(),
            (None, true, _) => {
                "without a footprint no OpenStreetMap building can be linked to the property"
                    .to_string()
            }
            (Some(f), true, true) => {
                format!(
                    "no OpenStreetMap building of the loaded extract is linked to footprint {f}"
                )
            }
            (Some(f), true, false) => {
                format!("the OpenStreetMap buildings linked to footprint {f} have no {tag} tag")
            }
        }
    }
}

/// Panels present from the newest domestic certificate's `PHOTO_SUPPLY` (per cent of roof area;
/// 0 is none).
async fn solar(db: &Db, uprn: i64, osm: &Osm) -> Result<Fact<bool>, StoreError> {
    let certs = epc::epc_for_uprn(db, uprn).await?;
    let newest = certs.iter().max_by(|a, b| {
        a.lodgement_date
            .is_some()
            .cmp(&b.lodgement_date.is_some())
            .then(a.lodgement_date.cmp(&b.lodgement_date))
            .then(a.lmk_key.cmp(&b.lmk_key))
    });
    Ok(match newest {
        Some(c) => match c.photo_supply {
            Some(p) => Fact::ok(
                p > 0.0,
                &c.source,
                format!(
                    "PHOTO_SUPPLY {p}% of roof area on the newest domestic certificate {}",
                    c.lmk_key
                ),
            ),
            None => Fact::not_available(format!(
                "the newest domestic certificate does not state PHOTO_SUPPLY; {}",
                osm.why_solar()
            )),
        },
        None => Fact::not_available(format!(
            "no domestic energy certificate is lodged for the UPRN in the loaded registers; {}",
            osm.why_solar()
        )),
    })
}

/// Answers each UPRN; one item's failure never fails the batch.
pub async fn physical(ctx: &LandCtx, uprns: &[UprnEntry]) -> PhysicalBatch {
    let mut items = Vec::with_capacity(uprns.len());
    for UprnEntry { given, uprn } in uprns {
        let item = |outcome, result, error| PhysicalItem {
            uprn: given.clone(),
            outcome,
            result,
            error,
        };
        items.push(match uprn {
            None => item(
                PhysicalOutcome::Error,
                None,
                Some("not a UPRN: a positive integer of at most 12 digits".to_string()),
            ),
            Some(u) => match building_facts(&ctx.db, u.get()).await {
                Ok(None) => item(PhysicalOutcome::NotFound, None, None),
                Ok(Some(f)) => item(PhysicalOutcome::Ok, Some(f), None),
                Err(e) => item(PhysicalOutcome::Error, None, Some(e.to_string())),
            },
        });
    }
    let answered = items
        .iter()
        .filter(|i| i.outcome == PhysicalOutcome::Ok)
        .count();
    PhysicalBatch { items, answered }
}
