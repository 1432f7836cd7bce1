//! The Terrace gateway: the only crate that knows HTTP.
//!
//! It wires routes (generated from the operation registry), validation, authentication, the
//! ledger around each call, error mapping, the OpenAPI document and its docs page, and metrics.
//! Domain logic lives in the domain crates.
//!
//! The modules: `registry.rs` defines the `Operation` trait (typed `Params`, `Body`, `Input`,
//! `Output`; `check` turns the typed parameters and body into the input and runs the domain's own
//! rules before any credit check, `run` receives that input, `charged_items` counts a batch's
//! answered items by matching its outcome enum), `OpDecl` (`..OpDecl::of::<O>(TAG)` supplies the
//! defaults, so a declaration names only what differs), `Price`, `Ctx` and `Answer`, and generates
//! the price list. `input.rs` reads a call's raw query, path and body into those types (parameters
//! against the JSON Schema schemars derives from the `#[validate]` attributes and then `validator`;
//! bodies by serde and then `validator`), each failure a FastAPI-shaped `FieldError`; a domain
//! `Violation` is located in the body, query or path here and nowhere else. `ops/` declares the
//! operations, one module per family, each exporting its `OPS`; `ops::all()` concatenates them.
//!
//! `pipeline.rs` is the charged call both surfaces share (`execute`: rate limit, typed input, the
//! operation's check, early 402, run, debit) and `log_failure`; `http.rs` mounts the routes,
//! authenticates API keys and calls the pipeline; `mcp.rs` generates the tools from the
//! declarations and serves them with rmcp over streamable HTTP at `/mcp` and over stdio
//! (`mcp_schema.rs` rewrites the tool schemas for strict validators, `mcp_compact.rs` gives batch
//! results their compact form and size budget, `mcp_proxy.rs` forwards `terrace mcp --stdio` to a
//! running Terrace at `TERRACE_URL`); `error.rs` is the one place errors become HTTP responses; `openapi.rs` builds the OpenAPI 3.1 document.
//! `oauth/routes.rs` is the authorization server's HTTP side (the rules and flows are
//! `terrace-oauth`'s); `web.rs` holds what the pages share (escaping, the page frame, sessions,
//! CSRF, `store_error_page`); `hub.rs` is the `/hub` page. `startup.rs` opens the store, loads the
//! fixture world into an empty store and builds the address index; `state.rs` holds `AppState`; `limits.rs` holds the resource limits that keep abusive traffic
//! from exhausting the service (see `docs/API-DESIGN.md`, "Limits");
//! `config.rs` reads the environment; `cli.rs` is the `terrace` command; `telemetry.rs` sets up
//! JSON logs and Prometheus metrics.

pub mod cli;
pub mod config;
pub mod error;
pub mod http;
pub mod hub;
pub mod input;
pub mod limits;
pub mod mcp;
pub mod mcp_compact;
pub mod mcp_proxy;
pub mod mcp_schema;
pub mod oauth;
pub mod openapi;
pub mod ops;
pub mod pipeline;
pub mod registry;
pub mod router;
pub mod startup;
pub mod state;
pub mod telemetry;
pub mod web;
