//! The Terrace gateway: the only crate that knows HTTP.
//!
//! It wires routes (generated from the operation registry), validation, authentication, the
//! ledger around each call, error mapping, the OpenAPI document and its docs page, and metrics.
//! Domain logic lives in the domain crates.

pub mod cli;
pub mod config;
pub mod error;
pub mod http;
pub mod hub;
pub mod input;
pub mod mcp;
pub mod oauth;
pub mod openapi;
pub mod ops;
pub mod pipeline;
pub mod registry;
pub mod startup;
pub mod state;
pub mod telemetry;
pub mod web;
