//! The energy family (specification part 4.8): every energy certificate of a UPRN with its
//! recommendations ([`epc`]), an area's energy profile ([`profile`]), the retrofit candidates of
//! an area ([`retrofit`]), the solar facts of a property ([`solar`]), and the minimum energy
//! efficiency standard for lettings ([`mees`]), which the property family reads from here.
//!
//! Invariants: plain functions over a context, no HTTP or MCP types; nothing is estimated: a
//! figure no loaded certificate states is `not_available` with the reason, never 0; "no
//! certificate for this UPRN" (`not_found`) is told apart from "no certificate loaded for its
//! authority" (`not_available`); every answer names the register it is read from.

pub mod epc;
pub mod mees;
pub mod profile;
pub mod retrofit;
pub mod solar;

use terrace_areas::AreasCtx;
use terrace_core::{AreaId, Violation};
use terrace_store::scope::{AREA_KINDS, AreaScope};
use terrace_store::{Db, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum EnergyError {
    /// The UPRN or the area is not known.
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
pub struct EnergyCtx {
    pub db: Db,
    pub areas: AreasCtx,
}

pub use terrace_core::FigureStatus;

/// The addresses an area id names (the one mapping, `terrace_store::scope`), or the violation
/// that says which kinds are answered: every kind the areas family resolves but a postcode area,
/// a built-up area, a planning authority and a place.
pub fn scope_of(id: &AreaId) -> Result<AreaScope, Violation> {
    AreaScope::of(id).ok_or_else(|| {
        Violation::new(
            &["area_id"],
            "value_error",
            format!("energy figures are answered for {AREA_KINDS}"),
        )
        .with_input(id.to_string())
    })
}

/// Not found unless the area is loaded (the areas family's index knows it).
pub(crate) async fn require_loaded(ctx: &EnergyCtx, id: &AreaId) -> Result<(), EnergyError> {
    let index = ctx.areas.cache.current(&ctx.db).await?;
    match index.area(id) {
        Some(_) => Ok(()),
        None => Err(EnergyError::NotFound(format!("area {id} is not loaded"))),
    }
}

/// Whole percentage, half up; None over nothing.
pub(crate) fn whole_percent(count: i64, of: i64) -> Option<i64> {
    (of > 0).then(|| (count * 200 + of) / (2 * of))
}

/// A band letter A-G, upper case, or None.
pub(crate) fn band_letter(b: Option<&str>) -> Option<char> {
    let b = b?.trim();
    let mut chars = b.chars();
    let c = chars.next()?.to_ascii_uppercase();
    (chars.next().is_none() && ('A'..='G').contains(&c)).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_and_bands() {
        assert_eq!(whole_percent(1, 3), Some(33));
        assert_eq!(whole_percent(1, 2), Some(50));
        assert_eq!(whole_percent(1, 8), Some(13));
        assert_eq!(whole_percent(0, 0), None);
        assert_eq!(band_letter(Some(" e ")), Some('E'));
        assert_eq!(band_letter(Some("H")), None);
        assert_eq!(band_letter(Some("A+")), None);
        assert_eq!(band_letter(None), None);
    }

    #[test]
    fn scopes() {
        let id = AreaId::parse("district:XT1").unwrap();
        assert_eq!(scope_of(&id), Ok(AreaScope::District("XT1".into())));
        let id = AreaId::parse("lad:E06009901").unwrap();
        assert_eq!(scope_of(&id), Ok(AreaScope::Lad("E06009901".into())));
        let id = AreaId::parse("area:XT").unwrap();
        assert!(scope_of(&id).is_err());
    }
}
