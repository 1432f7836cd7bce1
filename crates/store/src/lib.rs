//! The data store: one codebase over SQLite (embedded default) and PostgreSQL.
//!
//! Architecture Invariant: only this crate knows the diesel schema; other crates call its query
//! functions. Every query body is written once and expanded per backend by `with_conn!`; tables
//! keyed by one column declare their fetch/replace/delete with `keyed_ops!` (see [`bulk`]).
//!
//! One module per family, each with its row types beside its queries:
//! - [`address`]: the address register (addresses, postcodes, boundaries) and its counts;
//! - [`epc`]: energy performance certificates;
//! - [`sales`]: Price Paid transactions and their UPRN links;
//! - [`leases`]: registered leases;
//! - [`council_tax`]: the council tax valuation list;
//! - [`listings`]: the listings feed, its snapshots and the change log;
//! - [`lha`]: Local Housing Allowance rates and BRMA areas;
//! - [`planning`]: planning applications and the coverage list;
//! - [`rating`]: the VOA non-domestic rating lists and UARN links;
//! - [`spatial`]: the spatial risk layers and their coverage;
//! - [`market`]: the derived market tables and the UK HPI reference;
//! - [`accounts`], [`oauth`]: accounts, keys, the credit ledger, OAuth clients and grants;
//! - [`loads`]: load accounting; [`meta`]: the typed key-value facts.
//!
//! Infrastructure: [`db`] (backends, pools, `with_conn!`), [`bulk`] (the shared bulk macros),
//! [`schema`] (diesel tables), [`testing`] (per-test databases).

pub mod accounts;
pub mod address;
pub mod bulk;
pub mod council_tax;
pub mod db;
pub mod epc;
pub mod leases;
pub mod lha;
pub mod listings;
pub mod loads;
pub mod market;
pub mod meta;
pub mod oauth;
pub mod planning;
pub mod rating;
pub mod sales;
pub mod schema;
pub mod spatial;
pub mod testing;

pub use db::{Backend, Db, DbOptions, Location, StoreError, StoreResult};
