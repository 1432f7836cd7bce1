//! The gateway's integration tests, one module per area, in ONE test binary: CI links the
//! gateway and its dependencies once instead of once per file. Run one area with
//! `cargo test -p terrace-gateway --test it market::`. A new area is a module here, not a new
//! file beside `it/` (the tidy test refuses a second test target).

mod support;

mod address;
mod areas;
mod auctions;
mod auth;
mod buildings;
mod catalogue;
mod changes;
mod charging;
mod cli_mcp;
mod commercial;
mod commercial_index;
mod commercial_market;
mod comps;
mod contract;
mod council_tax;
mod energy;
mod fixture_world;
mod hub;
mod instances;
mod land;
mod lease;
mod listing_indices;
mod listings_demand;
mod listings_market;
mod market;
mod market_files;
mod market_world;
mod mcp;
mod mcp_client;
mod oauth;
mod ownership;
mod planning;
mod planning_check;
mod planning_lookups;
mod property;
mod property_record;
mod reconcile;
mod recovery;
mod rental;
mod report;
mod retrofit;
mod risk;
mod saved_searches;
mod security;
mod site;
mod site_appraisal;
mod sourcing;
mod sourcing_live;
mod sourcing_parcel;
mod stock;
mod surface;
mod validation;
mod valuation;
mod valuation_reports;
