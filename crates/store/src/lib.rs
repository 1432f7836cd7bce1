//! The data store: one codebase over SQLite (embedded default) and PostgreSQL.
//!
//! Architecture Invariant: only this crate knows the diesel schema; other crates call its query
//! functions. Every query body is written once and expanded per backend by `with_conn!`.

pub mod accounts;
pub mod bulk;
pub mod db;
pub mod loads;
pub mod market;
pub mod oauth;
pub mod planning;
pub mod rating;
pub mod register;
pub mod schema;
pub mod spatial;
pub mod testing;

pub use db::{Backend, Db, DbOptions, Location, StoreConfig, StoreError, StoreResult};
