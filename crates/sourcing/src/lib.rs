//! The sourcing family (specification parts 2.8 and 4.4): finding opportunities across every
//! family. It composes land, ownership, valuation, listings, commercial, energy, auctions, layers,
//! planning and areas, as `property` composes the record; the site appraisal and the area report
//! live here too, since they compose several families (the market crate stays below them).
//!
//! Invariants: plain functions over a context, no HTTP or MCP types; every rank is explained by
//! its components; absence is an answer (`signal: none`, `not_available` with the reason), never
//! a zero; an individual owner is counted, never named.

pub mod appraisal;
pub mod assembly;
pub mod build;
pub mod live;
pub mod offmarket;
pub mod owners;
pub mod parcel;
pub mod report;
pub mod search;
pub mod strategy;

use terrace_areas::AreasCtx;
use terrace_core::Violation;
use terrace_layers::LayerCache;
use terrace_store::LookupError;
use terrace_store::{Db, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum SourcingError {
    /// What was asked for is not loaded, as the caller names it (`parcel 123`, `UPRN 1`).
    #[error("{0} not found")]
    NotFound(String),
    /// The input breaks a rule of the operation.
    #[error("invalid input")]
    Invalid(Vec<Violation>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<terrace_core::cursor::CursorError> for SourcingError {
    fn from(e: terrace_core::cursor::CursorError) -> SourcingError {
        match e {
            terrace_core::cursor::CursorError::Malformed(v) => SourcingError::Invalid(vec![v]),
            terrace_core::cursor::CursorError::NotThisQuery(what) => SourcingError::NotFound(what),
        }
    }
}

impl From<LookupError> for SourcingError {
    fn from(e: LookupError) -> SourcingError {
        match e {
            LookupError::NotFound(what) => SourcingError::NotFound(what),
            LookupError::Store(s) => SourcingError::Store(s),
        }
    }
}

/// The family's context: the store, the areas, the spatial layers (designation flags) and the
/// parcel candidates of recent searches.
#[derive(Clone)]
pub struct SourcingCtx {
    pub db: Db,
    pub areas: AreasCtx,
    pub layers: LayerCache,
    pub candidates: std::sync::Arc<search::CandidateMemo>,
}

impl SourcingCtx {
    /// The local authority of a GSS code, as the areas index knows it; a code it does not hold
    /// is `NotFound` (`local authority E06000999`).
    pub async fn known_lad(&self, code: &str) -> Result<terrace_core::AreaId, SourcingError> {
        let missing = || SourcingError::NotFound(format!("local authority {code}"));
        let id =
            terrace_core::AreaId::new(terrace_core::AreaKind::Lad, code).map_err(|_| missing())?;
        let index = self.areas.cache.current(&self.db).await?;
        if index.area(&id).is_none() {
            return Err(missing());
        }
        Ok(id)
    }
}
