//! The contract: the committed OpenAPI document is the one the code generates; every declared
//! price matches the specification's fixed prices; every operation carries `x-credits`.

use std::collections::HashMap;
use terrace_gateway::registry::{Price, operations};

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn committed_openapi_matches_the_code() {
    let committed = std::fs::read_to_string(root().join("docs/openapi.json")).unwrap_or_default();
    let generated = terrace_gateway::openapi::document_text();
    assert!(
        committed == generated,
        "docs/openapi.json is stale: run `cargo xtask openapi` and commit the result"
    );
}

/// (method, path) -> price column ("0", "3", "unpriced").
fn spec_prices() -> HashMap<(String, String), String> {
    // The specification beside the project when present; else the project's copy of its columns.
    let shared = root().join("../shared/spec/endpoints.tsv");
    let copy = root().join("gateway/tests/data/endpoint_prices.tsv");
    let text = std::fs::read_to_string(&shared)
        .or_else(|_| std::fs::read_to_string(&copy))
        .expect("endpoint prices");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            ((f[0].to_string(), f[1].to_string()), f[2].to_string())
        })
        .collect()
}

#[test]
fn the_price_copy_matches_the_specification_when_present() {
    let shared = root().join("../shared/spec/endpoints.tsv");
    let Ok(text) = std::fs::read_to_string(&shared) else {
        eprintln!("../shared/spec/endpoints.tsv absent: using the project's copy");
        return;
    };
    let want: Vec<String> = text
        .lines()
        .map(|l| l.split('\t').take(3).collect::<Vec<_>>().join("\t"))
        .collect();
    let copy =
        std::fs::read_to_string(root().join("gateway/tests/data/endpoint_prices.tsv")).unwrap();
    assert_eq!(
        copy.lines().collect::<Vec<_>>(),
        want,
        "refresh gateway/tests/data/endpoint_prices.tsv"
    );
}

#[test]
fn declared_prices_match_the_specification() {
    let spec = spec_prices();
    let mut checked = 0;
    for op in operations() {
        let key = (op.method.as_str().to_string(), op.path.to_string());
        let Some(price) = spec.get(&key) else {
            // Operations the specification does not list (account management) are free.
            assert_eq!(
                op.price,
                Price::Free,
                "{} is not in the specification and must be free",
                op.id
            );
            continue;
        };
        if price != "unpriced" {
            let fixed: i64 = price.parse().unwrap();
            assert_eq!(
                op.price.credits(),
                fixed,
                "{} {}",
                op.method.as_str(),
                op.path
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 4,
        "the four address operations are priced by the specification"
    );
}

#[test]
fn the_address_operations_are_declared_with_their_prices() {
    let want = [
        ("GET", "/v1/address/autocomplete", 0),
        ("POST", "/v1/address/resolve", 1),
        ("GET", "/v1/address/uprn/{uprn}", 1),
        ("GET", "/v1/address/postcode/{postcode}", 2),
    ];
    let doc = terrace_gateway::openapi::document();
    for (m, p, credits) in want {
        let op = &doc["paths"][p][m.to_lowercase()];
        assert_eq!(op["x-credits"], credits, "{m} {p}");
    }
}

#[test]
fn every_operation_has_integer_x_credits_and_schemas() {
    let doc = terrace_gateway::openapi::document();
    let mut ids = std::collections::HashSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            assert!(op["x-credits"].is_i64(), "{method} {path}");
            assert!(op["responses"]["200"]["content"]["application/json"]["schema"].is_object());
            assert!(op["responses"]["422"].is_object());
            assert!(
                ids.insert(op["operationId"].as_str().unwrap().to_string()),
                "unique operation ids"
            );
        }
    }
    let resolve = &doc["paths"]["/v1/address/resolve"]["post"]["requestBody"];
    assert_eq!(resolve["required"], true);
    let schemas = &doc["components"]["schemas"];
    assert!(
        schemas["ResolveInput"]["properties"]["saon"].is_object(),
        "the resolve body is documented"
    );
}
