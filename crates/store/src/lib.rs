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
//! - [`costs`]: construction cost series, location factors and tender benchmarks;
//! - [`rating`]: the VOA non-domestic rating lists and UARN links;
//! - [`spatial`]: the spatial risk layers and their coverage;
//! - [`market`]: the derived market tables and the UK HPI reference;
//! - [`valuation`]: the valuation vintage, the vintages built and the accuracy rows;
//! - [`catalogue`]: the coverage register, the market area directory and the district directories;
//! - [`accounts`], [`oauth`]: accounts, keys, the credit ledger, OAuth clients and grants;
//! - [`saved_searches`]: saved searches (an account's stored declarations of searchable operations);
//! - [`loads`]: load accounting; [`meta`]: the typed key-value facts.
//!
//! - [`gpkg`]: reading a GeoPackage file (an SQLite file that is not the store) for a loader;
//!
//! Infrastructure: [`db`] (backends, pools, `with_conn!`), [`bulk`] (the shared bulk macros),
//! [`schema`] (diesel tables), `testing` (per-test databases; only with the `testing` feature, which
//! the workspace's tests enable).
//!
//! Two backends. `Db` is a hand-written enum over two deadpool pools from diesel-async (diesel's
//! `MultiConnection` derive does not support async connections), picked by `Location::from_env_or`:
//! a `postgres://` `DATABASE_URL` selects PostgreSQL, `sqlite://PATH` an SQLite file, and none the
//! file `<TERRACE_DATA_DIR>/terrace.sqlite3`. `with_conn!(db, |c| body)` expands `body` once per
//! backend, so every query is type-checked against both; sums are cast to `BIGINT`, and nothing
//! relies on `percentile_cont` (PostgreSQL only) or a case-insensitive `LIKE` (SQLite only). Bulk
//! writes go through `replace_rows!` (delete the keys and insert the rows in statements of 500, in
//! one transaction). SQLite connections run each query inline on the calling thread and are set up
//! with WAL, `synchronous = NORMAL` (a commit survives a process crash; the last commits can be
//! lost in a power cut), a 10 s busy timeout and a 64 MiB autocheckpoint. Migrations are SQL
//! folders embedded per backend with the same names, differing only in column types; the
//! `migrations` tests keep the trees parallel and check every foreign key has an index.
//!
//! Architecture Invariant: an account's balance equals the sum of its ledger credits and is never
//! negative: every change is one conditional `UPDATE accounts ... RETURNING balance` plus one
//! `INSERT INTO ledger` in the same transaction, and `accounts.balance` carries `CHECK (balance >=
//! 0)` in both schemas.

pub mod accounts;
pub mod address;
pub mod areas;
pub mod auctions;
pub mod buildings;
pub mod bulk;
pub mod capital;
pub mod catalogue;
pub mod companies;
pub mod costs;
pub mod council_tax;
pub mod db;
pub mod epc;
pub mod features;
pub mod gpkg;
pub mod land;
pub mod leases;
pub mod lha;
pub mod lidar;
pub mod listings;
pub mod loads;
mod lookup;
pub mod market;
pub mod memo;
pub mod meta;
pub mod oauth;
pub mod osm;
pub mod planning;
pub mod rating;
pub mod sales;
pub mod saved_searches;
pub mod schema;
pub mod scope;
pub mod sourcing;
pub mod spatial;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod titles;
pub mod valuation;

pub use db::{Backend, Db, DbOptions, Location, StoreConfig, StoreError, StoreResult};
pub use lookup::LookupError;
