//! Sourcing operations (specification parts 2.8 and 4.4): strategies, search, parcels, land
//! assembly, owners, off-market owners, live listings, the site appraisal and the area report.
//! One submodule per group of operations; the family's context and error mapping live here.

use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::registry::{Ctx, OpDecl};
use terrace_sourcing::{SourcingCtx, SourcingError};

mod appraisal;
mod live;
mod parcel;
mod report;
mod search;

pub(crate) const TAG: &str = "sourcing";

/// The sourcing family's operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[
    &report::AREA_REPORT,
    &appraisal::SITE_APPRAISAL,
    &parcel::LAND_ASSEMBLY,
    &live::LIVE_LISTINGS,
    &search::OFFMARKET_OWNERS,
    &parcel::OWNERS,
    &parcel::PARCEL,
    &search::SEARCH,
    &search::STRATEGIES,
];

pub(crate) fn sourcing_ctx(ctx: &Ctx) -> SourcingCtx {
    SourcingCtx {
        db: ctx.state.db.clone(),
        areas: ctx.state.areas.clone(),
        layers: ctx.state.layers.clone(),
        candidates: ctx.state.sourcing_candidates.clone(),
    }
}

/// A domain error as an API error; `at` says where the input of an `Invalid` was read.
pub(crate) fn sourcing_error(e: SourcingError, at: In) -> ApiError {
    match e {
        SourcingError::NotFound(what) => ApiError::NotFound(what),
        SourcingError::Invalid(v) => invalid(at, v),
        SourcingError::Store(s) => s.into(),
    }
}
