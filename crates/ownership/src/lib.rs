//! The ownership family: what HM Land Registry's title data says about a property.
//!
//! Today that is the registered lease (`lease`, `lease_batch`: the term as registered, the
//! unexpired years from the day the caller passes, and the 80- and 60-year flags decided on
//! dates, not on the rounded figure). The registered proprietors of titles (CCOD/OCOD) join it
//! when they are loaded; the commercial report and the property record read leases from here.
//!
//! Architecture Invariant: plain functions over the store, no HTTP or MCP types; time is a
//! parameter (`today`), never read from the wall clock. Errors are the store's shared
//! `LookupError` (`NotFound`, `Store`).

pub mod lease;

pub use lease::{LeaseBatch, LeaseResult, lease, lease_batch, years_between};
