//! The site family (specification part 4.4): construction cost series ([`cost_index`]) and
//! build-cost estimates ([`build_cost`]), read from the stored cost series (ONS output price
//! indices, the implied construction deflator, average weekly earnings in construction, and an
//! operator's tender price index), the operator's location factors and tender benchmarks.
//!
//! Invariants: plain functions over a context, no HTTP or MCP types; nothing is invented: a
//! series, factor or benchmark that is not loaded is `not_available` with the reason, never a
//! default number; the on-cost percentages are editorial constants and the answer says so;
//! periods are in the series' own format (`2024M01`, `2024Q1`, `2024`).

pub mod build_cost;
pub mod cost_index;
pub use terrace_core::costs::{Basis, Freq, PERIOD_PATTERN, Period, Region, Sector};

use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::Violation;
use terrace_store::{Db, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    /// The input breaks a rule of the operation (located in the query).
    #[error("invalid input")]
    Invalid(Vec<Violation>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The family's context: the store.
#[derive(Clone)]
pub struct SiteCtx {
    pub db: Db,
}

/// Whether a block could be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    NotAvailable,
}

/// The publisher, licence and method of each basis (docs/DATA.md, docs/METHODS.md).
pub fn method_of(basis: Basis) -> &'static str {
    match basis {
        Basis::Tender => {
            "tender price index from the operator's feed (docs/DATA.md, \"Tender price feed\"), as supplied"
        }
        Basis::Output => {
            "ONS construction output price indices: input costs (materials from producer price indices, plant hire from the services producer price index, labour from average weekly earnings in construction) weighted by work type, plus a profit mark-up, as a proxy for output prices; not tender prices"
        }
        Basis::Deflator => {
            "the construction output implied deflator: output at current prices over output in chained volume measures, times 100"
        }
        Basis::Labour => {
            "average weekly earnings in construction (SIC 2007 section F), pounds per week, as ONS publishes them"
        }
    }
}

/// The source named for each basis.
pub fn publisher_of(basis: Basis) -> &'static str {
    match basis {
        Basis::Tender => "the operator's tender price feed",
        Basis::Output | Basis::Deflator | Basis::Labour => {
            "Office for National Statistics (Open Government Licence v3.0)"
        }
    }
}
