//! The land family: HM Land Registry's INSPIRE index polygons with the buildings and addresses
//! standing on them. [`plot_utilisation`] answers `POST /v1/land/plot-utilisation` from the
//! figures the land build ([`build`]) writes per parcel; [`classify`] is the land use of a parcel;
//! [`density`] answers the H3 density, [`stock`] an area's stock profile and [`mixed_use`] its
//! buildings holding both residential and commercial units; [`heights`] is the build step of
//! building heights and volumes from the LIDAR composite, which [`physical`] answers.
//!
//! Invariants: plain functions over a context, no HTTP or MCP types; decimals are text; a parcel
//! whose built coverage is not measured (no footprint data for its local authority) has a null
//! ratio, and is left out, never counted as empty, when a ceiling is set.

pub mod build;
pub mod classify;
pub mod density;
pub mod footprints;
pub mod heights;
pub mod mixed_use;
pub mod osm;
pub mod physical;
pub mod stock;

use schemars::JsonSchema;
use serde::Serialize;
use terrace_areas::AreasCtx;
use terrace_core::{AreaId, Violation};
use terrace_store::land::{self, ParcelStatsRow, PlotFilter, PlotScope};
use terrace_store::scope::{AREA_KINDS, AreaScope};
use terrace_store::{Db, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum LandError {
    /// The area is not loaded.
    #[error("{0}")]
    NotFound(String),
    /// The input breaks a rule of the operation.
    #[error("invalid input")]
    Invalid(Vec<Violation>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The family's context: the store and the areas (to know which area ids are loaded).
#[derive(Clone)]
pub struct LandCtx {
    pub db: Db,
    pub areas: AreasCtx,
}

/// What plot utilisation is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotQuery {
    pub area_id: AreaId,
    pub min_area_m2: f64,
    pub max_built_coverage: Option<f64>,
    pub limit: i64,
}

/// One parcel (specification part 2.6).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ParcelUse {
    /// The parcel's INSPIRE id (HM Land Registry index polygon).
    pub land_id: String,
    /// Plot area in square metres, a decimal as text (2 places).
    pub area_m2: String,
    /// Built footprint over plot area, a decimal as text (4 places); null where no footprint data
    /// covers the parcel's local authority.
    pub built_coverage_ratio: Option<String>,
    /// Terrace's land-use tier A (`residential`, `commercial`, `mixed`, `community`, `transport`,
    /// `recreation`, `agriculture`); null where nothing on the parcel supports a class.
    pub landuse_tier_a: Option<String>,
    /// The National Land Use Database order (`Residential`, `Retail`, ...); null for mixed use
    /// or where nothing supports a class.
    pub landuse_tier_b: Option<String>,
    /// The NLUD order code (`U070`, ...); null as tier B.
    pub nlud_code: Option<String>,
    /// OS Open Map Local buildings standing on the parcel.
    pub n_buildings: i32,
    /// Addresses whose point lies inside one of those buildings.
    pub n_units_via_buildings: i32,
    /// The buildings' footprint inside the parcel, square metres as text (2 places); null where
    /// not measured.
    pub total_buildings_footprint_m2: Option<String>,
    pub address_count_residential: i32,
    pub address_count_commercial: i32,
}

/// How much of the area's parcels have a measured built coverage.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlotCoverage {
    /// INSPIRE parcels loaded in the area.
    pub parcels_in_area: i64,
    /// Of those, parcels whose built coverage is measured.
    pub parcels_measured: i64,
    /// `parcels_measured` over `parcels_in_area`, a decimal as text; null when no parcel is loaded.
    pub measured_share: Option<String>,
}

/// The answer of plot utilisation.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlotUtilisation {
    pub area_id: AreaId,
    pub min_area_m2: f64,
    pub max_built_coverage: Option<f64>,
    /// Largest first.
    pub parcels: Vec<ParcelUse>,
    /// The number of parcels listed.
    pub count: usize,
    pub coverage: PlotCoverage,
    /// What the coverage means for this answer.
    pub coverage_note: String,
}

fn decimal(v: f64, places: usize) -> String {
    format!("{v:.places$}")
}

fn parcel_use(r: ParcelStatsRow) -> ParcelUse {
    ParcelUse {
        land_id: r.inspire_id.to_string(),
        area_m2: decimal(r.area_m2, 2),
        built_coverage_ratio: r.built_coverage.map(|v| decimal(v, 4)),
        landuse_tier_a: r.landuse_tier_a,
        landuse_tier_b: r.landuse_tier_b,
        nlud_code: r.nlud_code,
        n_buildings: r.n_buildings,
        n_units_via_buildings: r.n_units_via_buildings,
        total_buildings_footprint_m2: r.footprint_m2.map(|v| decimal(v, 2)),
        address_count_residential: r.address_count_residential,
        address_count_commercial: r.address_count_commercial,
    }
}

/// The parcel scope of an area id, or the violation that says which kinds are answered: the
/// parcel figures (plot utilisation, H3 density, stock profile) are kept by local authority and
/// LSOA, so the one mapping ([`AreaScope::of`]) is narrowed to those two kinds.
pub fn scope_of(id: &AreaId) -> Result<PlotScope, Violation> {
    match AreaScope::of(id) {
        Some(AreaScope::Lad(code)) => Ok(PlotScope::Lad(code)),
        Some(AreaScope::Lsoa(code)) => Ok(PlotScope::Lsoa(code)),
        Some(
            AreaScope::Msoa(_)
            | AreaScope::Ward(_)
            | AreaScope::County(_)
            | AreaScope::Region(_)
            | AreaScope::Country(_)
            | AreaScope::Unit(_)
            | AreaScope::Sector(_)
            | AreaScope::District(_)
            | AreaScope::H3(_),
        )
        | None => Err(Violation::new(
            &["area_id"],
            "value_error",
            "land figures are answered for a local authority (lad:) or an LSOA (lsoa:)",
        )
        .with_input(id.to_string())),
    }
}

/// The addresses an area id names (the one mapping, [`AreaScope::of`]), for the operations that
/// read addresses rather than parcels (mixed-use buildings), or the violation that says which
/// kinds are answered.
pub fn area_scope(id: &AreaId) -> Result<AreaScope, Violation> {
    AreaScope::of(id).ok_or_else(|| {
        Violation::new(
            &["area_id"],
            "value_error",
            format!("building figures are answered for {AREA_KINDS}"),
        )
        .with_input(id.to_string())
    })
}

/// Not found unless the area is loaded (the areas family's index knows it).
pub(crate) async fn require_loaded(ctx: &LandCtx, id: &AreaId) -> Result<(), LandError> {
    let index = ctx.areas.cache.current(&ctx.db).await?;
    match index.area(id) {
        Some(_) => Ok(()),
        None => Err(LandError::NotFound(format!("area {id} is not loaded"))),
    }
}

/// `POST /v1/land/plot-utilisation`: the area's parcels of at least `min_area_m2`, largest
/// first, with their built coverage and land use; with `max_built_coverage`, only parcels whose
/// measured coverage is at most the ceiling (unmeasured parcels are excluded, and the note says
/// how many are measured).
pub async fn plot_utilisation(ctx: &LandCtx, q: PlotQuery) -> Result<PlotUtilisation, LandError> {
    let scope = scope_of(&q.area_id).map_err(|v| LandError::Invalid(vec![v]))?;
    require_loaded(ctx, &q.area_id).await?;
    let (n, measured) = land::plot_scope_counts(&ctx.db, &scope).await?;
    let rows = land::plot_parcels(
        &ctx.db,
        &PlotFilter {
            scope,
            min_area_m2: q.min_area_m2,
            max_built_coverage: q.max_built_coverage,
            limit: q.limit,
        },
    )
    .await?;
    let parcels: Vec<ParcelUse> = rows.into_iter().map(parcel_use).collect();
    let share = (n > 0).then(|| measured as f64 / n as f64);
    let coverage_note = match (n, q.max_built_coverage) {
        (0, _) => format!(
            "no INSPIRE index polygons are loaded for {}: nothing to list",
            q.area_id
        ),
        (_, Some(_)) => format!(
            "built coverage is measured on {measured} of {n} parcels ({:.1}%) in {}: the ceiling keeps only measured parcels, so the {} unmeasured ones are excluded rather than counted as empty",
            share.unwrap_or(0.0) * 100.0,
            q.area_id,
            n - measured
        ),
        (_, None) => format!(
            "built coverage is measured on {measured} of {n} parcels ({:.1}%) in {}: an unmeasured parcel has a null built_coverage_ratio, not 0",
            share.unwrap_or(0.0) * 100.0,
            q.area_id
        ),
    };
    Ok(PlotUtilisation {
        area_id: q.area_id,
        min_area_m2: q.min_area_m2,
        max_built_coverage: q.max_built_coverage,
        count: parcels.len(),
        parcels,
        coverage: PlotCoverage {
            parcels_in_area: n,
            parcels_measured: measured,
            measured_share: share.map(|s| decimal(s, 4)),
        },
        coverage_note,
    })
}
