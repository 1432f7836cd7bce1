//! A real third-party MCP client against the gateway: the MCP Python SDK (pinned in
//! `.ci/requirements.txt`, installed by `.ci/run` into `target/ci-venv`) runs
//! `gateway/tests/python/mcp_client.py` against the fixture world served on loopback with no
//! public URL configured: every tool with valid and invalid arguments, every result validated
//! against its declared schema (JSON Schema 2020-12), the OAuth flow with each common host's
//! registration body at `localhost` and at `127.0.0.1`, and a refresh race.
//!
//! Skipped with a message when the venv is absent, unless `TERRACE_REQUIRE_PYTHON=1` (set by
//! `.ci/run`), where its absence fails.

use crate::support::*;
use actix_web::{App, HttpServer};
use serde_json::{Value, json};
use std::path::PathBuf;
use terrace_oauth::{OAuthSettings, hash_password};

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The venv's Python, or `None` (and why) when the test must be skipped.
fn python() -> Option<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let py = target.join("ci-venv/bin/python");
    if py.exists() {
        return Some(py);
    }
    let required = std::env::var("TERRACE_REQUIRE_PYTHON").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "TERRACE_REQUIRE_PYTHON=1 but {} is missing: run `python3 -m venv target/ci-venv && target/ci-venv/bin/pip install -r .ci/requirements.txt`",
        py.display()
    );
    eprintln!(
        "SKIPPED: the MCP Python SDK is not installed ({} is missing; .ci/run installs it)",
        py.display()
    );
    None
}

const EMAIL: &str = "sdk-holder@example.test";
const PASSWORD: &str = "a long sdk password";

#[actix_web::test]
async fn the_mcp_python_sdk_drives_every_tool_and_signs_in_like_the_common_hosts() {
    let Some(python) = python() else {
        return;
    };
    let t = crate::support::fixture_db().await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut settings = OAuthSettings::new(
        &format!("http://127.0.0.1:{port}"),
        b"sdk-test-signing-key-of-32-bytes!".to_vec(),
    );
    // As `terrace serve` with no TERRACE_PUBLIC_URL: issuer and resource follow the host typed.
    settings.derive_from_host = true;
    let state = state_for(&t.db, Default::default())
        .await
        .with_oauth(settings);
    terrace_credits::create_account(
        &t.db,
        "sdk holder",
        Some(EMAIL),
        Some(&hash_password(PASSWORD).unwrap()),
        1_000_000,
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    let (_, key) = account(&t.db, 1_000_000).await;
    let s = state.clone();
    let server = HttpServer::new(move || {
        App::new().configure(terrace_gateway::startup::app_config(s.clone()))
    })
    .workers(2)
    .disable_signals()
    .listen(listener)
    .unwrap()
    .run();
    let handle = server.handle();
    actix_web::rt::spawn(server);

    let hundred: Vec<i64> = terrace_store::address::addresses_page(&t.db, 0, 100)
        .await
        .unwrap()
        .iter()
        .map(|a| a.uprn)
        .collect();
    assert_eq!(hundred.len(), 100);
    // A flat with a registered lease, EPC and sales in the fixture world; a rated shop (UARN).
    let uprn = 990000000008i64;
    let few = json!([uprn, 990000000001i64, "not-a-uprn"]);
    let by_uprn = json!({"uprn": uprn});
    let valid = json!({
        "account_balance": {},
        "account_usage": {"limit": 5},
        "account_create_key": {"name": "sdk"},
        "account_list_keys": {},
        "account_revoke_key": {"key_id": 0},
        "address_autocomplete": {"q": "6 Market Str"},
        "address_resolve": {"address": "Flat 1, 6 Market Street, Tamberley XT1 1AB"},
        "address_by_uprn": by_uprn,
        "address_by_postcode": {"postcode": "XT1 1AB"},
        "property_changes_since": {},
        "market_index_series": {"district": "XT1"},
        "market_forecast": {"district": "XT1"},
        "market_time_adjustment": {"district": "XT1", "from": "2018-01"},
        "market_volume_series": {"district": "XT1"},
        "market_volume_ranking": {},
        "market_ranking": {},
        "transactions_by_uprn": by_uprn,
        "property_history": by_uprn,
        "property_flood_risk": by_uprn,
        "property_lease": by_uprn,
        "property_lease_batch": {"uprns": few},
        "property_risk": by_uprn,
        "property_risk_batch": {"uprns": few},
        "property_council_tax": by_uprn,
        "property_retrofit": by_uprn,
        "property_record": by_uprn,
        "property_summary": by_uprn,
        "property_comps": by_uprn,
        "property_reconcile": by_uprn,
        "property_rental_estimate": by_uprn,
        "property_planning_history": by_uprn,
        "property_planning_history_batch": {"uprns": few},
        "property_commercial": {"uprn": 990000000001i64},
        "property_commercial_by_uarn": {"uarn": 30000000},
        "property_report": by_uprn,
    });
    let mut valid = valid;
    valid["area_resolve"] = json!({"query": "XT1"});
    valid["area_coverage"] = json!({"area": "Tamberley"});
    valid["catalogue_areas"] = json!({"kind": "district", "limit": 5});
    valid["catalogue_directory"] = json!({"district": "XT1", "kind": "streets", "limit": 5});
    valid["catalogue_record"] = json!({"kind": "postcode", "identifier": "XT1 1AB"});
    valid["area_reverse_geocode"] = json!({"lat": 50.616897, "lon": -4.042462, "type_id": "lad"});
    valid["planning_check"] = json!({"uprn": uprn, "checks": ["conservation_area", "green_belt"]});
    valid["planning_designations"] = json!({"uprn": uprn, "buffer_m": 50});
    valid["planning_applications"] = json!({"postcode": "XT1 1AB", "radius_m": 500, "limit": 5});
    valid["listings_history"] = by_uprn.clone();
    valid["market_listing_stock"] = json!({"area_type": "district", "area_code": "XT1"});
    valid["market_agents"] = json!({"area_id": "district:XT1"});
    valid["market_asking_index"] = json!({"area_type": "national", "start": "2022-01"});
    valid["market_rent_index"] = json!({"area_type": "national", "limit": 12});
    valid["market_listings"] =
        json!({"area_type": "district", "area_code": "XT1", "channel": "sale"});
    valid["market_supply_demand"] =
        json!({"area_type": "district", "area_code": "XT1", "channel": "sale"});
    valid["market_yields"] = json!({"area_type": "district", "area_code": "XT1"});
    valid["market_facts"] = json!({"postcode": "XT1"});
    valid["valuation_estimate"] = by_uprn.clone();
    valid["valuation_transaction_anchor"] = by_uprn.clone();
    valid["valuation_accuracy"] = json!({});
    valid["equity_estimate"] = json!({"uprns": few});
    valid["valuation_comps_adjustments"] = by_uprn.clone();
    valid["valuation_full"] = by_uprn.clone();
    valid["equity_long_held"] = json!({"area_id": "district:XT1", "limit": 5});
    valid["buildings_mixed_use"] = json!({"area_id": "lad:E06009901", "limit": 5});
    valid["buildings_physical"] = json!({"uprns": few});
    valid["area_stock_profile"] = json!({"area_id": "lad:E06009901"});
    valid["h3_density"] = json!({"area_id": "lad:E06009901", "limit": 5});
    valid["land_plot_utilisation"] = json!({"area_id": "lad:E06009901", "max_built_coverage": 0.2});
    valid["ownership_by_title"] = json!({"title_number": "XT100001"});
    valid["ownership_by_company"] = json!({"company_number": "09900001", "limit": 5});
    valid["ownership_proprietor"] = json!({"company_number": "09900001"});
    valid["market_commercial_rent_index"] = json!({});
    valid["market_commercial_market"] = json!({"lad_code": "E06009901"});
    valid["sourcing_commercial"] = json!({"lad_code": "E06009901", "limit": 5});
    valid["energy_epc"] = by_uprn.clone();
    valid["energy_profile"] = json!({"area_id": "lad:E06009901"});
    valid["energy_retrofit_candidates"] = json!({"area_id": "lad:E06009901", "limit": 5});
    valid["energy_solar_potential"] = json!({"uprns": few});
    valid["auctions_lots"] = json!({"limit": 5});
    valid["auctions_stats"] = json!({"postcode_district": "XT1"});
    valid["auctions_comps"] = json!({"postcode_district": "XT1", "limit": 5});
    valid["auctions_discount"] = json!({"postcode_district": "XT1"});
    valid["auctions_distressed"] = json!({"limit": 5});
    valid["saved_searches_create"] =
        json!({"name": "sdk search", "operation": "auctions_lots", "parameters": {"limit": 5}});
    valid["saved_searches_list"] = json!({"limit": 5});
    // An id no search has: a 404 tool error, not a refusal of the arguments.
    valid["saved_searches_update"] = json!({"search_id": "ss_none", "name": "renamed"});
    valid["saved_searches_delete"] = json!({"search_id": "ss_none"});
    valid["saved_searches_run"] = json!({"search_id": "ss_none"});
    valid["site_cost_index"] = json!({"basis": "output", "freq": "quarterly"});
    valid["market_area_report"] = json!({"lad_code": "E06009901", "postcode_district": "XT1"});
    valid["market_commercial_index"] = json!({});
    valid["site_appraisal"] = by_uprn.clone();
    valid["sourcing_land_assembly"] = json!({"title_number": "XT100001"});
    valid["sourcing_live_listings"] = json!({"districts": ["XT1"], "limit": 5});
    valid["sourcing_offmarket_owners"] = json!({"lad_code": "E06009901", "limit": 5});
    valid["sourcing_owners"] = json!({"parcel_ids": ["60000001"]});
    valid["sourcing_parcel"] = json!({"title_number": "XT100001"});
    valid["sourcing_search"] =
        json!({"lad_code": "E06009901", "strategy": "mees_unlettable", "limit": 5});
    valid["sourcing_strategies"] = json!({"area": "E06009901"});
    valid["site_build_cost"] = json!({"sector": "new_housing", "gia_m2": 500, "rate_gbp_m2": 2000, "rate_period": "2024Q1"});
    let hosts: Vec<Value> = crate::oauth::host_registrations()
        .into_iter()
        .map(|(name, body)| json!([name, body]))
        .collect();
    let config = json!({
        "base": format!("http://127.0.0.1:{port}"),
        "port": port,
        "api_key": key,
        "email": EMAIL,
        "password": PASSWORD,
        "valid": valid,
        "hundred_uprns": hundred,
        "budget_chars": terrace_gateway::mcp_compact::RESULT_BUDGET_CHARS,
        "hosts": hosts,
    });
    let dir = tempfile::tempdir().unwrap();
    let config_path = dir.path().join("config.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let script = root().join("gateway/tests/python/mcp_client.py");
    let out = tokio::process::Command::new(&python)
        .arg(&script)
        .arg(&config_path)
        .output()
        .await
        .unwrap();
    handle.stop(false).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The whole report goes to a file (CI shows only the tail of a failure, so the assertion
    // messages below carry the short list of failures and the end of the script's stderr).
    let report_path = python
        .parent()
        .and_then(|bin| bin.parent())
        .and_then(|venv| venv.parent())
        .map(|target| target.join("mcp_client_report.json"));
    if let Some(path) = &report_path {
        let _ = std::fs::write(path, format!("{stdout}\n--- stderr ---\n{stderr}"));
    }
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| {
        panic!(
            "the script printed no report (exit {:?}); stderr ends:\n{}\nstdout ends:\n{}",
            out.status.code(),
            tail(&stderr, 4000),
            tail(&stdout, 2000)
        )
    });
    assert!(
        out.status.success() && report["failures"].as_array().is_some_and(Vec::is_empty),
        "the MCP Python SDK run failed (exit {:?}); failures: {:#}\nstderr ends:\n{}\n(whole report: {:?})",
        out.status.code(),
        report["failures"],
        tail(&stderr, 3000),
        report_path
    );
    assert_eq!(
        report["tools_listed"],
        terrace_gateway::registry::operations().len()
    );
    assert_eq!(
        report["oauth"].as_object().unwrap().len(),
        8,
        "four hosts at two host names: {:#}",
        report["oauth"]
    );
    assert_eq!(
        report["refresh_race"]["same_pair"], true,
        "refresh race: {:#}",
        report["refresh_race"]
    );
}

/// The last `n` bytes of `s` (at a character boundary).
fn tail(s: &str, n: usize) -> &str {
    let mut start = s.len().saturating_sub(n);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}
