//! The derived build: what the service computes from the loaded datasets before it serves.
//!
//! `terrace-ingest` reads publisher formats and loads them; this crate, above the families,
//! runs their build steps in order ([`derive::derive_all`]): each address's areas and H3 cell,
//! the UPRN links the address matcher makes (one generic step, [`link`]), the families' steps
//! ([`derive::FAMILY_STEPS`]), the market build, the valuation vintage, then the catalogue
//! ([`catalogue`]). The first start of the embedded default and `cargo xtask build` call it
//! ([`load_and_build`] for a manifest such as the fixture world).
//!
//! Architecture Invariant: every step can run again: a second run over the same store changes
//! nothing and bumps no version. A new family adds its step as one line of
//! [`derive::FAMILY_STEPS`] (its logic lives in the family crate).

pub mod catalogue;
pub mod derive;
pub mod link;

pub use terrace_ingest::Progress;

use std::path::Path;
use terrace_ingest::{IngestError, LoadReport};
use terrace_store::{Db, StoreError};

/// Why a build step stopped.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Ingest(#[from] IngestError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Market(#[from] terrace_market::MarketError),
    #[error(transparent)]
    Valuation(#[from] terrace_valuation::ValuationError),
}

/// Loads every file a manifest lists ([`terrace_ingest::load_manifest`]), then runs every derived
/// step ([`derive::derive_all`]): what the embedded default's first start does with the fixture
/// world.
pub async fn load_and_build(
    db: &Db,
    dir: &Path,
    progress: &mut Progress,
) -> Result<Vec<LoadReport>, BuildError> {
    let reports = terrace_ingest::load_manifest(db, dir, progress).await?;
    derive::derive_all(db, progress).await?;
    Ok(reports)
}
