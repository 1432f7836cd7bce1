//! The planning family: the planning history of a property (specification part 2.8): the
//! applications linked to the unit, else to its building, else lying within 25 m of its point;
//! the local planning authority; whether official planning data covers it; and what needs
//! consent, computed from the three-valued designation flags that the spatial layers
//! (`terrace-layers`) evaluate; and the planning checks at a location (`check`: only those
//! requested, each true, false or unknown with a reason).
//!
//! Architecture Invariant: plain functions over the store, no HTTP or MCP types;
//! `what_needs_consent` is a pure function of the flags, and a flag that was not checked never
//! becomes "no consent needed". Errors are the store's shared `LookupError` (`NotFound`, `Store`).

pub mod applications;
pub mod check;
pub mod designations;

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::{Flag, Uprn, UprnEntry};
use terrace_store::Db;
use terrace_store::address::{self, AddressRow};
use terrace_store::planning::{self as pl, ApplicationRow};

use terrace_store::LookupError;

/// The planning fallback radius (specification part 8): applications within this distance of
/// the property's point are listed when none is linked to the unit or its building.
pub const RADIUS_M: f64 = 25.0;

/// How an application was tied to the UPRN.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ApplicationMatch {
    /// `application_uprn` (the application carries the UPRN) or `address_matcher`.
    pub method: Option<String>,
    /// 1 for the application's own UPRN; the matcher's similarity in [0, 1] otherwise.
    pub score: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Appeal {
    /// The appeal decision or status, as published.
    pub decision: Option<String>,
    pub date: Option<NaiveDate>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Cil {
    /// Whether the development is liable for the Community Infrastructure Levy; null when the
    /// application does not say.
    pub liable: Option<bool>,
    /// The CIL liability in pounds, when published.
    pub amount_gbp: Option<f64>,
}

/// One planning application (specification part 2.8, planning history item).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Application {
    pub reference: String,
    /// The authority as the publisher names it (a GSS code or an organisation identifier).
    pub authority: Option<String>,
    pub address: Option<String>,
    pub description: Option<String>,
    pub development_type: Option<String>,
    pub decision: Option<String>,
    pub received_date: Option<NaiveDate>,
    pub validated_date: Option<NaiveDate>,
    pub decision_date: Option<NaiveDate>,
    /// Null when no appeal is recorded.
    pub appeal: Option<Appeal>,
    pub cil: Cil,
    /// `unit` (linked to this UPRN), `building` (linked to its parent UPRN), `radius_25m`
    /// (not linked; its point lies within 25 m of the property's point) or `nearby` (the
    /// applications near a location, `POST /v1/planning/applications`).
    pub match_level: &'static str,
    /// Metres from the property's point (for `radius_25m`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance_m: Option<f64>,
    /// How the application was linked to a UPRN (null for `radius_25m`).
    pub uprn_match: Option<ApplicationMatch>,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Authority {
    /// The GSS code of the local authority district, which is the local planning authority here
    /// (national park authorities are not modelled).
    pub code: String,
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OfficialCoverage {
    /// Whether official planning data (planning.data.gov.uk) covers the authority: true, false,
    /// or `not_checked` when the coverage list is not loaded or the authority is unknown.
    pub covered: Flag,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The coverage list's provenance.
    pub source: Option<String>,
    /// How many applications of the authority are loaded.
    pub applications_loaded: i64,
}

/// One designation flag with its provenance: true, false or `not_checked` with a reason.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DesignationFlag {
    pub value: Flag,
    /// The dataset the flag was read from (null when not checked).
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl DesignationFlag {
    pub fn not_checked(reason: &str) -> Self {
        DesignationFlag {
            value: Flag::NOT_CHECKED,
            source: None,
            reason: Some(reason.to_string()),
        }
    }

    pub fn known(value: bool, source: &str) -> Self {
        DesignationFlag {
            value: Flag::Known(value),
            source: Some(source.to_string()),
            reason: None,
        }
    }
}

/// The designation flags "what needs consent" is computed from.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DesignationFlags {
    pub conservation_area: DesignationFlag,
    pub listed_building: DesignationFlag,
    pub article_4_direction: DesignationFlag,
    pub tree_preservation_order: DesignationFlag,
    pub scheduled_monument: DesignationFlag,
}

impl DesignationFlags {
    /// Every flag `not_checked` with `reason`.
    pub fn not_checked(reason: &str) -> Self {
        let f = || DesignationFlag::not_checked(reason);
        DesignationFlags {
            conservation_area: f(),
            listed_building: f(),
            article_4_direction: f(),
            tree_preservation_order: f(),
            scheduled_monument: f(),
        }
    }
}

/// One consent the designations may require.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ConsentItem {
    /// `listed_building_consent`, `planning_permission_for_permitted_development`,
    /// `conservation_area_restrictions`, `tree_works_consent`, `conservation_area_tree_notice`,
    /// `scheduled_monument_consent`.
    pub consent: &'static str,
    /// Whether it applies: true, false, or `not_checked` when its designation was never checked.
    pub required: Flag,
    /// The designation flag it follows.
    pub because_of: &'static str,
    pub what: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WhatNeedsConsent {
    pub items: Vec<ConsentItem>,
    /// Consents that apply (their designation is true).
    pub required: Vec<&'static str>,
    /// Consents whose designation was never checked: nothing is known about them.
    pub not_checked: Vec<&'static str>,
    pub flags: DesignationFlags,
    pub note: &'static str,
}

const CONSENT_NOTE: &str = "Derived from the designation flags only; permitted development rights, listed building curtilage and the works themselves decide in each case. A not_checked consent is unknown, not absent.";

/// What needs consent, from the three-valued designation flags: a pure function, so a consent
/// is true only when its designation is true, false only when it is false, and `not_checked`
/// otherwise.
pub fn what_needs_consent(flags: &DesignationFlags) -> WhatNeedsConsent {
    let item = |consent, f: &DesignationFlag, because_of, what| ConsentItem {
        consent,
        required: f.value,
        because_of,
        what,
        reason: f.reason.clone(),
    };
    let items = vec![
        item(
            "listed_building_consent",
            &flags.listed_building,
            "listed_building",
            "Works to demolish, alter or extend a listed building in any way that affects its character, inside or out.",
        ),
        item(
            "planning_permission_for_permitted_development",
            &flags.article_4_direction,
            "article_4_direction",
            "An Article 4 direction withdraws permitted development rights: works they would allow need planning permission.",
        ),
        item(
            "conservation_area_restrictions",
            &flags.conservation_area,
            "conservation_area",
            "Relevant demolition needs planning permission, and permitted development is narrower (cladding, side and roof extensions, dishes).",
        ),
        item(
            "tree_works_consent",
            &flags.tree_preservation_order,
            "tree_preservation_order",
            "Cutting down, topping, lopping or uprooting a protected tree needs the authority's consent.",
        ),
        item(
            "conservation_area_tree_notice",
            &flags.conservation_area,
            "conservation_area",
            "Six weeks' notice to the authority before works to a tree in a conservation area.",
        ),
        item(
            "scheduled_monument_consent",
            &flags.scheduled_monument,
            "scheduled_monument",
            "Works affecting a scheduled monument need consent from the Secretary of State.",
        ),
    ];
    let pick = |want: Flag| {
        items
            .iter()
            .filter(|i| i.required == want)
            .map(|i| i.consent)
            .collect::<Vec<_>>()
    };
    WhatNeedsConsent {
        required: pick(Flag::TRUE),
        not_checked: pick(Flag::NOT_CHECKED),
        items,
        flags: flags.clone(),
        note: CONSENT_NOTE,
    }
}

/// The designation flags of a property. The designation layers are built elsewhere; until they
/// are wired in here, every flag is `not_checked` with that reason, never false.
pub async fn designation_flags(
    db: &Db,
    layers: &terrace_layers::LayerCache,
    address: &AddressRow,
) -> Result<DesignationFlags, LookupError> {
    let layers = layers.current(db).await?;
    let report = terrace_layers::report_from(&layers, address);
    let flag = |name: &str| {
        let check = [
            &report.heritage,
            &report.planning,
            &report.environmental_designations,
        ]
        .into_iter()
        .find_map(|group| group.get(name));
        match check {
            Some(c) => DesignationFlag {
                value: c.value,
                source: c.sources.first().map(|s| s.source.clone()),
                reason: c.reason.clone(),
            },
            None => DesignationFlag::not_checked(&format!("the risk report has no {name} flag")),
        }
    };
    Ok(DesignationFlags {
        conservation_area: flag("conservation_area"),
        listed_building: flag("listed_building"),
        article_4_direction: flag("article_4_direction"),
        tree_preservation_order: flag("tree_preservation"),
        scheduled_monument: flag("scheduled_monument"),
    })
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlanningHistory {
    pub uprn: i64,
    pub country: &'static str,
    /// `ok`: applications are listed; `no_applications`: official data covers the authority and
    /// none is linked to the unit or its building or lies within 25 m; `not_covered`: official
    /// planning data does not cover the authority, or none of its applications is loaded (see
    /// `reason`; not charged).
    pub status: PlanningStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub local_planning_authority: Option<Authority>,
    pub official_planning_data: OfficialCoverage,
    /// The level the listed applications were found at: `unit`, `building` or `radius_25m`
    /// (null when none).
    pub match_level: Option<&'static str>,
    /// Newest first (by decision, else validated, else received date).
    pub applications: Vec<Application>,
    pub what_needs_consent: WhatNeedsConsent,
    pub radius_m: f64,
    pub as_of: NaiveDate,
}

pub(crate) fn application_of(
    r: ApplicationRow,
    level: &'static str,
    distance_m: Option<f64>,
) -> Application {
    let appeal = (r.appeal_decision.is_some() || r.appeal_date.is_some()).then(|| Appeal {
        decision: r.appeal_decision.clone(),
        date: r.appeal_date,
    });
    Application {
        reference: r.reference,
        authority: r.authority,
        address: r.address,
        description: r.description,
        development_type: r.development_type,
        decision: r.decision,
        received_date: r.received_date,
        validated_date: r.validated_date,
        decision_date: r.decision_date,
        appeal,
        cil: Cil {
            liable: r.cil_liable,
            amount_gbp: r.cil_amount,
        },
        match_level: level,
        distance_m,
        uprn_match: (level != "radius_25m" && level != "nearby").then_some(ApplicationMatch {
            method: r.match_method,
            score: r.match_score,
        }),
        source: r.source,
    }
}

/// The applications of the unit, else its building, else within 25 m of its point.
async fn applications_of(
    db: &Db,
    a: &AddressRow,
) -> Result<(Option<&'static str>, Vec<Application>), LookupError> {
    let unit = pl::applications_for_uprn(db, a.uprn).await?;
    if !unit.is_empty() {
        let apps = unit
            .into_iter()
            .map(|r| application_of(r, "unit", None))
            .collect();
        return Ok((Some("unit"), apps));
    }
    if let Some(parent) = a.parent_uprn {
        let building = pl::applications_for_uprn(db, parent).await?;
        if !building.is_empty() {
            let apps = building
                .into_iter()
                .map(|r| application_of(r, "building", None))
                .collect();
            return Ok((Some("building"), apps));
        }
    }
    if let (Some(x), Some(y)) = (a.x, a.y) {
        let near: Vec<Application> = pl::applications_in_square(db, x, y, RADIUS_M)
            .await?
            .into_iter()
            .filter_map(|r| {
                let d = ((r.x? - x).powi(2) + (r.y? - y).powi(2)).sqrt();
                (d <= RADIUS_M)
                    .then(|| application_of(r, "radius_25m", Some((d * 10.0).round() / 10.0)))
            })
            .collect();
        if !near.is_empty() {
            return Ok((Some("radius_25m"), near));
        }
    }
    Ok((None, Vec::new()))
}

pub(crate) fn newest_first(apps: &mut [Application]) {
    apps.sort_by(|p, q| {
        let key = |a: &Application| a.decision_date.or(a.validated_date).or(a.received_date);
        key(q)
            .cmp(&key(p))
            .then_with(|| p.reference.cmp(&q.reference))
    });
}

/// The location as the layers read it: a point and a local authority, from a UPRN (its
/// authority, else its postcode's), a postcode (its directory position and authority) or a WGS84
/// `(lat, lon)` (the loaded authority boundary holding it). An unknown UPRN or postcode, or a
/// point outside Great Britain, is `NotFound`.
pub(crate) async fn locate(
    db: &Db,
    areas: &terrace_areas::AreasCtx,
    uprn: Option<Uprn>,
    postcode: Option<&terrace_core::Postcode>,
    lat_lon: Option<(f64, f64)>,
) -> Result<AddressRow, LookupError> {
    if let Some(uprn) = uprn {
        let mut a = address::address(db, uprn.get())
            .await?
            .ok_or_else(|| LookupError::NotFound(format!("UPRN {uprn}")))?;
        a.lad_code = lad_of(db, &a).await?;
        return Ok(a);
    }
    if let Some(pc) = postcode {
        let p = address::postcode(db, pc.as_str())
            .await?
            .ok_or_else(|| LookupError::NotFound(format!("postcode {pc}")))?;
        return Ok(AddressRow {
            x: p.easting,
            y: p.northing,
            lad_code: p.lad_code,
            postcode: Some(p.postcode),
            ..AddressRow::default()
        });
    }
    let (lat, lon) = lat_lon.unwrap_or((f64::NAN, f64::NAN));
    let point = terrace_geo::bng_from_wgs84(lon, lat).ok_or_else(|| {
        LookupError::NotFound(format!("a location in Great Britain at ({lat}, {lon})"))
    })?;
    let index = areas.cache.current(db).await?;
    Ok(AddressRow {
        x: Some(point.0),
        y: Some(point.1),
        lad_code: index
            .code_at(terrace_core::AreaKind::Lad, point)
            .map(str::to_string),
        ..AddressRow::default()
    })
}

/// The local authority district of an address: its own, else its postcode's.
pub(crate) async fn lad_of(db: &Db, a: &AddressRow) -> Result<Option<String>, LookupError> {
    Ok(match (&a.lad_code, &a.postcode) {
        (Some(l), _) => Some(l.clone()),
        (None, Some(pc)) => address::postcode(db, pc).await?.and_then(|p| p.lad_code),
        (None, None) => None,
    })
}

/// Whether official planning data covers the local authority `lad` on `today` (coverage that
/// ended before today is not coverage), with the coverage row and the authority's applications
/// loaded; the reason when not covered or not known.
pub(crate) async fn official_coverage(
    db: &Db,
    lad: Option<&String>,
    today: NaiveDate,
) -> Result<(OfficialCoverage, Option<pl::CoverageRow>), LookupError> {
    let listed = pl::coverage_count(db).await? > 0;
    let row = match lad {
        Some(l) => pl::coverage_by_code(db, std::slice::from_ref(l))
            .await?
            .into_iter()
            .next(),
        None => None,
    };
    let mut names: Vec<String> = lad.into_iter().cloned().collect();
    if let Some(r) = &row {
        names.extend(r.organisation.iter().cloned());
        names.extend(r.organisation_entity.iter().cloned());
    }
    let loaded = if names.is_empty() {
        0
    } else {
        pl::application_count_for(db, &names).await?
    };
    let (covered, reason) = match (lad, listed, &row) {
        (None, _, _) => (
            Flag::NOT_CHECKED,
            Some("the local authority is not known".to_string()),
        ),
        (Some(_), false, _) => (
            Flag::NOT_CHECKED,
            Some("the list of authorities official planning data covers is not loaded".to_string()),
        ),
        (Some(l), true, None) => (
            Flag::FALSE,
            Some(format!("official planning data does not cover {l}")),
        ),
        (Some(l), true, Some(r)) => {
            let started = r.start_date.is_none_or(|d| d <= today);
            let ended = r.end_date.is_some_and(|d| d <= today);
            if started && !ended {
                (Flag::TRUE, None)
            } else {
                (
                    Flag::FALSE,
                    Some(format!(
                        "official planning data does not cover {l} on {today}"
                    )),
                )
            }
        }
    };
    let official = OfficialCoverage {
        covered,
        reason,
        source: row.as_ref().map(|r| r.source.clone()),
        applications_loaded: loaded,
    };
    Ok((official, row))
}

/// The planning history of a UPRN, as of `today` (coverage that ended before today is not
/// coverage).
pub async fn planning_history(
    db: &Db,
    layers: &terrace_layers::LayerCache,
    uprn: Uprn,
    today: NaiveDate,
) -> Result<PlanningHistory, LookupError> {
    let Some(address) = address::address(db, uprn.get()).await? else {
        return Err(LookupError::NotFound(format!("UPRN {uprn}")));
    };
    let lad = lad_of(db, &address).await?;
    let (mut official, row) = official_coverage(db, lad.as_ref(), today).await?;
    if lad.is_none() {
        official.reason = Some("the property's local authority is not known".to_string());
    }
    let covered = official.covered;
    let coverage_reason = official.reason.clone();
    let loaded = official.applications_loaded;
    let flags = designation_flags(db, layers, &address).await?;
    let authority = lad.as_ref().map(|code| Authority {
        code: code.clone(),
        name: row.as_ref().and_then(|r| r.name.clone()),
    });
    let mut out = PlanningHistory {
        uprn: uprn.get(),
        country: "UK",
        status: PlanningStatus::NotCovered,
        reason: None,
        local_planning_authority: authority,
        official_planning_data: official,
        match_level: None,
        applications: Vec::new(),
        what_needs_consent: what_needs_consent(&flags),
        radius_m: RADIUS_M,
        as_of: today,
    };
    if covered == Flag::FALSE {
        out.reason = coverage_reason;
        return Ok(out);
    }
    if loaded == 0 {
        out.reason = Some(match lad {
            Some(l) => format!("no planning application of {l} is loaded, so none can be listed"),
            None => {
                "the property's local authority is not known and no application is loaded for it"
                    .into()
            }
        });
        return Ok(out);
    }
    let (level, mut apps) = applications_of(db, &address).await?;
    newest_first(&mut apps);
    out.status = if apps.is_empty() {
        PlanningStatus::NoApplications
    } else {
        PlanningStatus::Ok
    };
    out.match_level = level;
    out.applications = apps;
    Ok(out)
}

/// What a planning history found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanningStatus {
    Ok,
    NoApplications,
    NotCovered,
}

/// The outcome of one item of a planning-history batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanningOutcome {
    Ok,
    NoApplications,
    NotCovered,
    NotFound,
    Error,
}

impl From<PlanningStatus> for PlanningOutcome {
    fn from(s: PlanningStatus) -> Self {
        match s {
            PlanningStatus::Ok => PlanningOutcome::Ok,
            PlanningStatus::NoApplications => PlanningOutcome::NoApplications,
            PlanningStatus::NotCovered => PlanningOutcome::NotCovered,
        }
    }
}

/// One item of a planning-history batch, in input order.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlanningBatchItem {
    /// The UPRN as given.
    pub uprn: serde_json::Value,
    pub outcome: PlanningOutcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<PlanningHistory>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlanningBatch {
    pub items: Vec<PlanningBatchItem>,
    /// Items with outcome `ok` or `no_applications`: the batch is charged for these only.
    pub answered: usize,
}

/// Answers each UPRN as the single call would; one item's failure never fails the batch.
pub async fn planning_history_batch(
    db: &Db,
    layers: &terrace_layers::LayerCache,
    uprns: &[UprnEntry],
    today: NaiveDate,
) -> Result<PlanningBatch, LookupError> {
    let mut items = Vec::with_capacity(uprns.len());
    for UprnEntry { given, uprn } in uprns {
        let item = match uprn {
            None => PlanningBatchItem {
                uprn: given.clone(),
                outcome: PlanningOutcome::Error,
                result: None,
                error: Some("not a UPRN: a positive integer of at most 12 digits".into()),
            },
            Some(u) => match planning_history(db, layers, *u, today).await {
                Ok(r) => PlanningBatchItem {
                    uprn: given.clone(),
                    outcome: r.status.into(),
                    result: Some(r),
                    error: None,
                },
                Err(LookupError::NotFound(_)) => PlanningBatchItem {
                    uprn: given.clone(),
                    outcome: PlanningOutcome::NotFound,
                    result: None,
                    error: None,
                },
                Err(LookupError::Store(e)) => PlanningBatchItem {
                    uprn: given.clone(),
                    outcome: PlanningOutcome::Error,
                    result: None,
                    error: Some(format!("the store could not answer: {e}")),
                },
            },
        };
        items.push(item);
    }
    let answered = items
        .iter()
        .filter(|i| {
            matches!(
                i.outcome,
                PlanningOutcome::Ok | PlanningOutcome::NoApplications
            )
        })
        .count();
    Ok(PlanningBatch { items, answered })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consent_follows_the_three_valued_flags() {
        let none = what_needs_consent(&DesignationFlags::not_checked("not loaded"));
        assert!(none.required.is_empty());
        assert_eq!(none.not_checked.len(), none.items.len());
        assert!(
            none.items
                .iter()
                .all(|i| i.required == Flag::NOT_CHECKED
                    && i.reason.as_deref() == Some("not loaded")),
            "never false when never checked"
        );
        let mut flags = DesignationFlags::not_checked("not loaded");
        flags.listed_building = DesignationFlag::known(true, "historic_england");
        flags.conservation_area = DesignationFlag::known(false, "planning_data");
        let c = what_needs_consent(&flags);
        assert_eq!(c.required, vec!["listed_building_consent"]);
        let ca: Vec<Flag> = c
            .items
            .iter()
            .filter(|i| i.because_of == "conservation_area")
            .map(|i| i.required)
            .collect();
        assert_eq!(ca, vec![Flag::FALSE, Flag::FALSE]);
        assert_eq!(
            c.not_checked,
            vec![
                "planning_permission_for_permitted_development",
                "tree_works_consent",
                "scheduled_monument_consent"
            ]
        );
    }
}

terrace_core::status_text!(PlanningStatus, PlanningOutcome);
