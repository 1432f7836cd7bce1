//! The store integration tests in one test binary (one link), one module per area.

mod ledger;
mod migrations;
mod oauth;
