//! `POST /v1/planning/applications`: for a location (`postcode`, or `lat` and `lon`), its local
//! planning authority (from planning.data.gov.uk's boundaries), that authority's planning-portal
//! URL (the operator's list) or null with the reason, whether official planning data covers the
//! local authority, and the loaded applications within `radius_m` of the point, newest first,
//! at most `limit` (a documented cap, `truncated` when more lie within the radius).
//!
//! Applications are `not_available` (with a reason), never an empty list, when official data does
//! not cover the authority or none of its applications is loaded.

use crate::{Application, OfficialCoverage, application_of, newest_first};
use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use terrace_areas::AreasCtx;
use terrace_core::{AreaId, AreaKind, Flag, Postcode, Violation};
use terrace_store::planning as pl;
use terrace_store::{Db, LookupError};

pub const DEFAULT_RADIUS_M: i64 = 250;
pub const MAX_RADIUS_M: i64 = 2_000;
pub const DEFAULT_LIMIT: i64 = 20;
pub const MAX_LIMIT: i64 = 100;

fn default_radius() -> i64 {
    DEFAULT_RADIUS_M
}

fn default_limit() -> i64 {
    DEFAULT_LIMIT
}

/// The body of `POST /v1/planning/applications`: `postcode`, or `lat` and `lon`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = one_location)]
pub struct ApplicationsInput {
    /// A postcode (its directory position)
    #[serde(default)]
    pub postcode: Option<Postcode>,
    /// Latitude, WGS84, -90 to 90 (with `lon`)
    #[serde(default)]
    #[schemars(range(min = -90.0, max = 90.0))]
    pub lat: Option<f64>,
    /// Longitude, WGS84, -180 to 180 (with `lat`)
    #[serde(default)]
    #[schemars(range(min = -180.0, max = 180.0))]
    pub lon: Option<f64>,
    /// Applications whose point lies within this many metres, 1 to 2000 (default 250)
    #[serde(default = "default_radius")]
    #[schemars(range(min = 1, max = 2000))]
    pub radius_m: i64,
    /// The most applications listed, newest first, 1 to 100 (default 20)
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: i64,
}

/// The schema states the location rule: exactly one of `postcode`, or `lat` with `lon`.
fn one_location(schema: &mut schemars::Schema) {
    terrace_core::patterns::exactly_one_of(schema, &[&["postcode"], &["lat", "lon"]]);
}

impl ApplicationsInput {
    /// Exactly one location; lat and lon together and in range; radius and limit in range.
    pub fn violations(&self) -> Vec<Violation> {
        let mut v = Vec::new();
        let point = self.lat.is_some() || self.lon.is_some();
        if usize::from(self.postcode.is_some()) + usize::from(point) != 1 {
            v.push(Violation::new(
                &[],
                "value_error",
                "give exactly one location: postcode, or lat and lon",
            ));
        }
        v.extend(terrace_core::patterns::lat_lon_violations(
            self.lat, self.lon,
        ));
        if !(1..=MAX_RADIUS_M).contains(&self.radius_m) {
            v.push(
                Violation::new(
                    &["radius_m"],
                    "range_error",
                    format!("radius_m must be between 1 and {MAX_RADIUS_M}"),
                )
                .with_input(self.radius_m),
            );
        }
        if !(1..=MAX_LIMIT).contains(&self.limit) {
            v.push(
                Violation::new(
                    &["limit"],
                    "range_error",
                    format!("limit must be between 1 and {MAX_LIMIT}"),
                )
                .with_input(self.limit),
            );
        }
        v
    }
}

/// The local planning authority holding the point.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlanningAuthority {
    /// Its GSS code (`E60`, `W43`).
    pub code: String,
    /// Its area id (`lpa:E60000001`).
    pub area_id: String,
    pub name: Option<String>,
}

/// The authority's planning portal, where the operator's list names one.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Portal {
    /// The URL of the authority's planning application search; null when not known.
    pub url: Option<String>,
    /// Why the URL is null.
    pub reason: Option<String>,
    /// The provenance of the list's row.
    pub source: Option<String>,
}

/// What the application search found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NearbyStatus {
    /// Applications are listed.
    Ok,
    /// The authority's applications are loaded and none lies within the radius.
    NoneNearby,
    /// Nothing can be said: official data does not cover the authority, or none of its
    /// applications is loaded (see `reason`).
    NotAvailable,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Nearby {
    pub status: NearbyStatus,
    pub reason: Option<String>,
    pub radius_m: i64,
    pub limit: i64,
    /// How many loaded applications lie within the radius (more than listed when `truncated`).
    pub total_within_radius: usize,
    pub truncated: bool,
    /// Newest first (by decision, else validated, else received date), each with its distance.
    pub items: Vec<Application>,
}

/// The answer of `POST /v1/planning/applications`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ApplicationsAnswer {
    /// The point read, British National Grid metres.
    pub easting: f64,
    pub northing: f64,
    /// The local authority district holding the point (official coverage is per district).
    pub local_authority: Option<String>,
    /// Null when no loaded planning authority boundary holds the point (`lpa_reason` says).
    pub local_planning_authority: Option<PlanningAuthority>,
    pub lpa_reason: Option<String>,
    pub portal: Portal,
    pub official_planning_data: OfficialCoverage,
    pub applications: Nearby,
    pub as_of: NaiveDate,
}

/// `POST /v1/planning/applications`, as of `today`.
pub async fn applications(
    db: &Db,
    areas: &AreasCtx,
    input: &ApplicationsInput,
    today: NaiveDate,
) -> Result<ApplicationsAnswer, LookupError> {
    let at = crate::locate(
        db,
        areas,
        None,
        input.postcode.as_ref(),
        input.lat.zip(input.lon),
    )
    .await?;
    let (Some(x), Some(y)) = (at.x, at.y) else {
        return Err(LookupError::NotFound(
            "a position for the postcode (it has no coordinates)".into(),
        ));
    };
    let index = areas.cache.current(db).await?;
    let lpa = index.code_at(AreaKind::Lpa, (x, y)).and_then(|code| {
        let id = AreaId::new(AreaKind::Lpa, code).ok()?;
        let name = index.area(&id).and_then(|a| a.name);
        Some(PlanningAuthority {
            code: code.to_string(),
            area_id: id.to_string(),
            name,
        })
    });
    let lpa_reason = lpa.is_none().then(|| {
        "no loaded local planning authority boundary (planning.data.gov.uk local-planning-authority) holds the point".to_string()
    });
    let portal = match &lpa {
        None => Portal {
            url: None,
            reason: Some("the local planning authority is not known here".into()),
            source: None,
        },
        Some(a) => match pl::portals_by_code(db, std::slice::from_ref(&a.code))
            .await?
            .into_iter()
            .next()
        {
            Some(p) => Portal {
                url: Some(p.portal_url),
                reason: None,
                source: Some(p.source),
            },
            None if pl::portal_count(db).await? == 0 => Portal {
                url: None,
                reason: Some("the list of planning-portal URLs is not loaded".into()),
                source: None,
            },
            None => Portal {
                url: None,
                reason: Some(format!(
                    "the planning-portal list has no URL for {}",
                    a.code
                )),
                source: None,
            },
        },
    };
    let lad = at.lad_code.clone();
    let (official, _) = crate::official_coverage(db, lad.as_ref(), today).await?;
    let radius = input.radius_m.clamp(1, MAX_RADIUS_M) as f64;
    let limit = input.limit.clamp(1, MAX_LIMIT) as usize;
    let mut nearby = Nearby {
        status: NearbyStatus::NotAvailable,
        reason: None,
        radius_m: radius as i64,
        limit: limit as i64,
        total_within_radius: 0,
        truncated: false,
        items: Vec::new(),
    };
    if official.covered == Flag::FALSE {
        nearby.reason = official.reason.clone();
    } else if official.applications_loaded == 0 {
        nearby.reason = Some(match &lad {
            Some(l) => format!("no planning application of {l} is loaded, so none can be listed"),
            None => "the local authority is not known and no application is loaded for it".into(),
        });
    } else {
        let mut items: Vec<Application> = pl::applications_in_square(db, x, y, radius)
            .await?
            .into_iter()
            .filter_map(|r| {
                let d = ((r.x? - x).powi(2) + (r.y? - y).powi(2)).sqrt();
                (d <= radius).then(|| application_of(r, "nearby", Some((d * 10.0).round() / 10.0)))
            })
            .collect();
        newest_first(&mut items);
        nearby.total_within_radius = items.len();
        nearby.truncated = items.len() > limit;
        items.truncate(limit);
        nearby.status = if items.is_empty() {
            NearbyStatus::NoneNearby
        } else {
            NearbyStatus::Ok
        };
        nearby.items = items;
    }
    Ok(ApplicationsAnswer {
        easting: x,
        northing: y,
        local_authority: lad,
        local_planning_authority: lpa,
        lpa_reason,
        portal,
        official_planning_data: official,
        applications: nearby,
        as_of: today,
    })
}
