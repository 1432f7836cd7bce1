//! `POST /v1/energy/solar-potential`: for each UPRN, what the loaded data holds about its roof
//! and its solar panels: the footprint of the building its address point stands in (OS Open Map
//! Local), that building's height where a source gives one, the roof as the newest domestic
//! certificate describes it, panels present from the certificates (`PHOTO_SUPPLY`, a
//! non-domestic certificate's renewable sources) and solar water heating.
//!
//! Roof shape and material, rooftop PV and (after LIDAR and the footprint file) a height come
//! from the OpenStreetMap buildings linked to the footprint (`roof:shape`, `roof:material`,
//! `generator:source=solar` with `location=roof`, `height`; ODbL, "© OpenStreetMap
//! contributors"); mapped PV is present, unmapped PV is not absent.
//!
//! Invariants: every fact has its source and confidence, or is `not_available` with the reason;
//! a potential yield is never given without a documented model whose inputs
//! (roof area, pitch and orientation from a LIDAR surface, a stated yield per kWp) are loaded:
//! none is, so the yield is `not_available` with that reason.

use crate::{EnergyCtx, EnergyError};
use geo::Contains;
use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::{Fact, UprnEntry};
use terrace_store::epc::{self, EpcRow};
use terrace_store::{address, land, lidar, osm};

/// What the data holds about one property's roof and panels.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SolarFacts {
    pub uprn: i64,
    /// The OS id of the building footprint the address point stands in.
    pub building_id: Option<String>,
    /// The footprint area of that building in square metres (the roof's plan area, shared by
    /// every unit of the building).
    pub roof_footprint_m2: Fact<f64>,
    /// The building's height in metres, where a loaded source gives one.
    pub height_m: Fact<f64>,
    pub roof_shape: Fact<String>,
    pub roof_material: Fact<String>,
    /// The roof as the newest domestic certificate describes it (`ROOF_DESCRIPTION`).
    pub roof_description: Fact<String>,
    /// Whether photovoltaic panels are present.
    pub panels_present: Fact<bool>,
    /// `PHOTO_SUPPLY`: per cent of the roof area with photovoltaic panels.
    pub photo_supply_pct: Fact<f64>,
    pub solar_water_heating: Fact<bool>,
    /// A modelled annual yield, kWh.
    pub potential_yield_kwh: Fact<f64>,
}

/// The outcome of one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SolarOutcome {
    /// Something is held (a footprint or a certificate): charged.
    Ok,
    /// The UPRN is known and nothing about its roof or panels is loaded: free.
    NoData,
    NotFound,
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SolarItem {
    /// The UPRN as given.
    pub uprn: serde_json::Value,
    pub outcome: SolarOutcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<SolarFacts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SolarBatch {
    pub items: Vec<SolarItem>,
    /// Items with an `ok` outcome: the call is charged for these only.
    pub answered: usize,
}

const YIELD_REASON: &str = "no documented yield model has its inputs: roof pitch and orientation need a LIDAR surface model, which is not loaded";
const SHAPE_REASON: &str = "no loaded source records roof shape (it needs an OpenStreetMap extract or a LIDAR surface model)";
const MATERIAL_REASON: &str = "no loaded source records roof material (it needs an OpenStreetMap extract or a building-attributes feed)";
const OSM_ATTRIBUTION: &str = "© OpenStreetMap contributors, ODbL";

/// The first OpenStreetMap building linked to the footprint with a value of the tag, else why.
fn osm_fact<T>(
    rows: &[(osm::OsmFootprintLinkRow, osm::OsmBuildingRow)],
    loaded: bool,
    get: impl Fn(&osm::OsmBuildingRow) -> Option<T>,
    tag: &str,
    without: &str,
) -> Fact<T> {
    rows.iter()
        .find_map(|(l, r)| {
            get(r).map(|v| {
                Fact::ok(
                    v,
                    &r.source,
                    format!(
                        "{tag} tag of OpenStreetMap {} ({} of footprint {}); {OSM_ATTRIBUTION}",
                        r.osm_key, l.method, l.building_id
                    ),
                )
            })
        })
        .unwrap_or_else(|| match (loaded, rows.is_empty()) {
            (false, _) => Fact::not_available(without),
            (true, true) => Fact::not_available(
                "no OpenStreetMap building of the loaded extract is linked to the footprint",
            ),
            (true, false) => Fact::not_available(format!(
                "the OpenStreetMap buildings linked to the footprint have no {tag} tag"
            )),
        })
}

/// Panels present from a non-domestic certificate's `RENEWABLE_SOURCES`, where it says.
fn non_domestic_pv(c: &EpcRow) -> Option<bool> {
    let fields: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&c.fields_json).ok()?;
    let text = fields
        .get("renewable-sources")?
        .as_str()?
        .to_ascii_lowercase();
    (text.contains("photovoltaic") || text.contains(" pv") || text.starts_with("pv"))
        .then_some(true)
}

async fn facts(ctx: &EnergyCtx, uprn: i64) -> Result<Option<(SolarFacts, bool)>, EnergyError> {
    let addr = address::address(&ctx.db, uprn).await?;
    let mut certs = epc::certificates_for_uprn(&ctx.db, uprn).await?;
    if addr.is_none() && certs.is_empty() {
        return Ok(None);
    }
    crate::epc::newest_first(&mut certs);
    // The footprint the address point stands in.
    let mut footprint = None;
    if let Some((x, y)) = addr.as_ref().and_then(|a| a.x.zip(a.y)) {
        let p = geo::Point::new(x, y);
        for f in land::footprints_at(&ctx.db, x, y).await? {
            if let Ok(mp) = terrace_geo::multipolygon_from_wkb(&f.wkb)
                && mp.contains(&p)
            {
                footprint = Some(f);
                break;
            }
        }
    }
    let lad = addr.as_ref().and_then(|a| a.lad_code.clone());
    let footprints_loaded = match &lad {
        Some(l) => land::authority_has_footprints(&ctx.db, l).await?,
        None => false,
    };
    // The LIDAR build's height first, then the footprint file's (docs/METHODS.md).
    let lidar_row = match &footprint {
        Some(f) => lidar::heights_by_id(&ctx.db, std::slice::from_ref(&f.building_id))
            .await?
            .into_iter()
            .next(),
        None => None,
    };
    let osm_rows = match &footprint {
        Some(f) => osm::osm_of_footprint(&ctx.db, &f.building_id).await?,
        None => Vec::new(),
    };
    let osm_loaded = !osm_rows.is_empty() || osm::osm_loaded(&ctx.db).await?;
    let osm_height = osm_fact(&osm_rows, osm_loaded, |r| r.height_m, "height", "");
    let (roof_footprint_m2, height_m, building_id) = match &footprint {
        Some(f) => (
            Fact::ok(
                f.area_m2,
                &f.source,
                "footprint area of the building the address point stands in".into(),
            ),
            match (
                lidar_row
                    .as_ref()
                    .and_then(|l| l.height_m.zip(l.source.clone())),
                f.height_m,
            ) {
                (Some((h, src)), _) => Fact::ok(
                    (h * 100.0).round() / 100.0,
                    &src,
                    "median of DSM - DTM over the cells centred inside the footprint (Environment Agency LIDAR composite)".into(),
                ),
                (None, Some(h)) => {
                    Fact::ok(h, &f.source, "height given with the footprint".into())
                }
                (None, None) if osm_height.value.is_some() => osm_height,
                (None, None) => Fact::not_available(
                    lidar_row.and_then(|l| l.note).unwrap_or_else(|| {
                        if osm_loaded {
                            format!(
                                "the footprint source gives no height, no LIDAR surface is loaded, and {}",
                                osm_height.note
                            )
                        } else {
                            "the footprint source gives no height, and no LIDAR surface or OpenStreetMap extract is loaded".into()
                        }
                    }),
                ),
            },
            Some(f.building_id.clone()),
        ),
        None => {
            let why = if footprints_loaded {
                "the address point stands in no loaded building footprint"
            } else {
                "no building footprint is loaded for the property's local authority"
            };
            (Fact::not_available(why), Fact::not_available(why), None)
        }
    };
    let domestic = certs.iter().find(|c| c.kind == "domestic");
    let non_domestic_pv = certs
        .iter()
        .filter(|c| c.kind != "domestic")
        .find_map(|c| non_domestic_pv(c).map(|v| (v, c)));
    let no_cert = "no domestic energy certificate is lodged for the UPRN in the loaded registers";
    let roof_description = match domestic {
        Some(c) => {
            let elements =
                epc::epc_elements_by_key(&ctx.db, std::slice::from_ref(&c.lmk_key)).await?;
            match elements.into_iter().next().and_then(|e| e.roof_description) {
                Some(d) => Fact::ok(
                    d,
                    &c.source,
                    format!("ROOF_DESCRIPTION of certificate {}", c.lmk_key),
                ),
                None => Fact::not_available("the newest domestic certificate describes no roof"),
            }
        }
        None => Fact::not_available(no_cert),
    };
    let photo_supply_pct = match domestic.and_then(|c| c.photo_supply.map(|p| (p, c))) {
        Some((p, c)) => Fact::ok(
            p,
            &c.source,
            format!("PHOTO_SUPPLY of certificate {}", c.lmk_key),
        ),
        None => Fact::not_available(if domestic.is_some() {
            "the newest domestic certificate does not state PHOTO_SUPPLY"
        } else {
            no_cert
        }),
    };
    let osm_pv = osm_rows.iter().find_map(|(l, r)| {
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
    });
    let panels_present = match osm_pv {
        Some(f) => f,
        None => match (&photo_supply_pct.value, domestic, non_domestic_pv) {
            (Some(p), Some(c), _) => Fact::ok(
                *p > 0.0,
                &c.source,
                format!(
                    "PHOTO_SUPPLY {p}% of roof area on certificate {}",
                    c.lmk_key
                ),
            ),
            (_, _, Some((v, c))) => Fact::ok(
                v,
                &c.source,
                format!("RENEWABLE_SOURCES of {} certificate {}", c.kind, c.lmk_key),
            ),
            _ if osm_loaded => Fact::not_available(
                "no loaded certificate states photovoltaic panels, and none is mapped on an OpenStreetMap building linked to the footprint (unmapped is not absent)",
            ),
            _ => Fact::not_available(
                "no loaded certificate states photovoltaic panels, and no OpenStreetMap extract is loaded",
            ),
        },
    };
    let solar_water_heating = match domestic
        .and_then(|c| c.solar_water_heating.as_deref().map(|f| (f, c)))
    {
        Some((f, c)) => match f.trim().to_ascii_uppercase().as_str() {
            "Y" | "YES" | "TRUE" => Fact::ok(
                true,
                &c.source,
                format!("SOLAR_WATER_HEATING_FLAG of certificate {}", c.lmk_key),
            ),
            "N" | "NO" | "FALSE" => Fact::ok(
                false,
                &c.source,
                format!("SOLAR_WATER_HEATING_FLAG of certificate {}", c.lmk_key),
            ),
            _ => Fact::not_available(format!("SOLAR_WATER_HEATING_FLAG {f:?} is neither Y nor N")),
        },
        None => Fact::not_available(if domestic.is_some() {
            "the newest domestic certificate does not state SOLAR_WATER_HEATING_FLAG"
        } else {
            no_cert
        }),
    };
    let held = footprint.is_some() || !certs.is_empty();
    Ok(Some((
        SolarFacts {
            uprn,
            building_id,
            roof_footprint_m2,
            height_m,
            roof_shape: osm_fact(
                &osm_rows,
                osm_loaded,
                |r| r.roof_shape.clone(),
                "roof:shape",
                SHAPE_REASON,
            ),
            roof_material: osm_fact(
                &osm_rows,
                osm_loaded,
                |r| r.roof_material.clone(),
                "roof:material",
                MATERIAL_REASON,
            ),
            roof_description,
            panels_present,
            photo_supply_pct,
            solar_water_heating,
            potential_yield_kwh: Fact::not_available(YIELD_REASON),
        },
        held,
    )))
}

/// Answers each UPRN; one item's failure never fails the batch.
pub async fn solar_potential(ctx: &EnergyCtx, uprns: &[UprnEntry]) -> SolarBatch {
    let mut items = Vec::with_capacity(uprns.len());
    for UprnEntry { given, uprn } in uprns {
        let item = |outcome, result, error| SolarItem {
            uprn: given.clone(),
            outcome,
            result,
            error,
        };
        items.push(match uprn {
            None => item(
                SolarOutcome::Error,
                None,
                Some("not a UPRN: a positive integer of at most 12 digits".to_string()),
            ),
            Some(u) => match facts(ctx, u.get()).await {
                Ok(None) => item(SolarOutcome::NotFound, None, None),
                Ok(Some((f, true))) => item(SolarOutcome::Ok, Some(f), None),
                Ok(Some((f, false))) => item(SolarOutcome::NoData, Some(f), None),
                Err(e) => item(SolarOutcome::Error, None, Some(e.to_string())),
            },
        });
    }
    let answered = items
        .iter()
        .filter(|i| i.outcome == SolarOutcome::Ok)
        .count();
    SolarBatch { items, answered }
}
