//! The error of a lookup by key that the family crates share: the keyed thing is not known, or
//! the store could not answer. A family that also refuses inputs (`Invalid`) has its own error.

use crate::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    /// What is not known, as the caller names it (`UPRN 100023336956`, `UARN 12345`).
    #[error("{0} not found")]
    NotFound(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}
