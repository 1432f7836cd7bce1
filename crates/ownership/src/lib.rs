//! The ownership family: what HM Land Registry's title data says about a property and its owners.
//!
//! The registered lease (`lease`, `lease_batch`: the term as registered, the unexpired years from
//! the day the caller passes, and the 80- and 60-year flags decided on dates, not on the rounded
//! figure); the registered proprietors of company-owned titles (`titles`: CCOD and OCOD, with the
//! companies' Companies House records) by title, by company and by proprietor name; and the
//! identifiers of those registers (`ids`: title numbers, company numbers, proprietor name keys).
//! The commercial report and the property record read leases from here.
//!
//! Architecture Invariant: plain functions over the store, no HTTP or MCP types; time is a
//! parameter (`today`), never read from the wall clock. Errors are the store's shared
//! `LookupError` (`NotFound`, `Store`).

pub mod ids;
pub mod lease;
pub mod titles;

pub use ids::{edit_distance, name_key, normalise_company_number, parse_title_number};
pub use lease::{LeaseBatch, LeaseResult, lease, lease_batch, years_between};
pub use titles::Proprietor;
