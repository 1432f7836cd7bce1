//! The MCP tool surface: every declared operation is a tool at its HTTP price, the committed
//! `tools/list` snapshot is what the code generates, and a tool call runs the same pipeline as the
//! HTTP call (validation, early 402, charge on the same ledger, nothing charged on failure),
//! recorded in usage with surface `mcp`.

use crate::support::*;
use actix_web::test as awtest;
use serde_json::{Value, json};
use terrace_gateway::input::fields;
use terrace_gateway::registry::{Price, operations};

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn committed_tools_list_matches_the_code() {
    let committed = std::fs::read_to_string(root().join("docs/mcp-tools.json")).unwrap_or_default();
    assert!(
        committed == terrace_gateway::mcp::tools_document_text(),
        "docs/mcp-tools.json is stale: run `cargo xtask openapi` and commit the result"
    );
}

#[test]
fn every_declared_operation_is_a_tool_with_its_price_and_limits() {
    let tools: Vec<Value> = terrace_gateway::mcp::tools()
        .into_iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    assert_eq!(tools.len(), operations().len());
    for op in operations() {
        let tool = tools
            .iter()
            .find(|t| t["name"] == op.id)
            .unwrap_or_else(|| panic!("{} is not a tool", op.id));
        let description = tool["description"].as_str().unwrap();
        assert!(
            description.contains(&op.price.sentence()),
            "{}: {description}",
            op.id
        );
        match op.price {
            Price::Free => assert!(description.contains("0 credits"), "{}", op.id),
            Price::PerCall(n) | Price::PerItem(n) => {
                assert!(
                    description.contains(&format!("Costs {n} credit")),
                    "{}",
                    op.id
                )
            }
        }
        assert_eq!(
            tool["annotations"]["readOnlyHint"],
            json!(op.read_only),
            "{}",
            op.id
        );
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object");
        // Each parameter's schema (type, limits, enum, default) is the HTTP parameter's.
        let params = fields(op.contract.params);
        for p in &params {
            let s = &schema["properties"][&p.name];
            assert!(s.is_object(), "{}: {} missing", op.id, p.name);
            for (k, v) in &p.schema {
                assert_eq!(&s[k], v, "{} {} {k}", op.id, p.name);
            }
            let required = schema["required"]
                .as_array()
                .is_some_and(|r| r.contains(&json!(p.name)));
            assert_eq!(required, p.required, "{} {}", op.id, p.name);
        }
        if op.contract.body.is_some() {
            assert!(tool["inputSchema"]["properties"].as_object().unwrap().len() >= params.len());
        }
        if tool.get("outputSchema").is_some() {
            assert!(tool["outputSchema"]["properties"]["credits_charged"].is_object());
        }
    }
    // The parameter limits are the declared ones.
    let auto = tools
        .iter()
        .find(|t| t["name"] == "address_autocomplete")
        .unwrap();
    let q = &auto["inputSchema"]["properties"];
    assert_eq!(
        (&q["q"]["minLength"], &q["q"]["maxLength"]),
        (&json!(1), &json!(500))
    );
    assert_eq!(
        (&q["max_results"]["minimum"], &q["max_results"]["maximum"]),
        (&json!(1), &json!(25))
    );
    assert_eq!(q["country"]["enum"], json!(["UK"]));
    // The body limits are the HTTP ones.
    let resolve = tools
        .iter()
        .find(|t| t["name"] == "address_resolve")
        .unwrap();
    assert_eq!(
        resolve["inputSchema"]["properties"]["address"]["maxLength"],
        500
    );
    assert_eq!(
        resolve["inputSchema"]["properties"]["max_candidates"]["maximum"],
        25
    );
    let batch = tools.iter().find(|t| t["name"] == "property_lease_batch");
    if let Some(batch) = batch {
        assert_eq!(batch["inputSchema"]["properties"]["uprns"]["maxItems"], 100);
        assert_eq!(batch["inputSchema"]["required"], json!(["uprns"]));
    }
    let revoke = tools
        .iter()
        .find(|t| t["name"] == "account_revoke_key")
        .unwrap();
    assert_eq!(revoke["annotations"]["readOnlyHint"], false);
    assert_eq!(revoke["annotations"]["destructiveHint"], true);
}

pub fn mcp_request(token: Option<&str>, body: &Value) -> awtest::TestRequest {
    let mut r = awtest::TestRequest::post()
        .uri("/mcp")
        .insert_header(("Host", "127.0.0.1"))
        .insert_header(("Accept", "application/json, text/event-stream"))
        .insert_header(("Content-Type", "application/json"))
        .set_payload(body.to_string());
    if body["method"] != "initialize" {
        r = r.insert_header(("MCP-Protocol-Version", "2025-06-18"));
    }
    if let Some(t) = token {
        r = r.insert_header(("Authorization", format!("Bearer {t}")));
    }
    r
}

/// The JSON-RPC reply in a JSON body or in the first `data:` line of an event stream.
pub async fn rpc<S, B>(svc: &S, token: &str, method: &str, params: Value) -> Value
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let resp = awtest::call_service(svc, mcp_request(Some(token), &body).to_request()).await;
    let status = resp.status().as_u16();
    let bytes = awtest::read_body(resp).await;
    let text = String::from_utf8_lossy(&bytes).to_string();
    assert_eq!(status, 200, "{method}: {text}");
    serde_json::from_str(&text).unwrap_or_else(|_| {
        let data = text
            .lines()
            .find_map(|l| l.strip_prefix("data:"))
            .unwrap_or_else(|| panic!("{method}: no JSON in {text}"));
        serde_json::from_str(data.trim()).unwrap()
    })
}

fn initialize_params() -> Value {
    json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}})
}

#[actix_web::test]
async fn without_a_token_mcp_answers_401_with_the_resource_metadata() {
    let app = world().await;
    let svc = service(app.state.clone()).await;
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params()});
    let r = send(&svc, mcp_request(None, &body)).await;
    assert_eq!(r.status, 401);
    let challenge = r.headers.get("WWW-Authenticate").unwrap().to_str().unwrap();
    assert!(
        challenge.starts_with("Bearer resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp\""),
        "{challenge}"
    );
    assert_eq!(r.json["credits_charged"], 0);
    let r = send(&svc, mcp_request(Some("not-a-token"), &body)).await;
    assert_eq!(r.status, 401);
    let challenge = r.headers.get("WWW-Authenticate").unwrap().to_str().unwrap();
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
}

#[actix_web::test]
async fn a_tool_call_is_charged_like_the_http_call_and_recorded_as_mcp() {
    let app = world().await;
    let (account, key) = account(app.db(), 10).await;
    let svc = service(app.state.clone()).await;

    let init = rpc(&svc, &key, "initialize", initialize_params()).await;
    assert_eq!(init["result"]["serverInfo"]["name"], "terrace");
    assert!(init["result"]["capabilities"]["tools"].is_object());

    let list = rpc(&svc, &key, "tools/list", json!({})).await;
    assert_eq!(
        list["result"]["tools"].as_array().unwrap().len(),
        operations().len()
    );

    let call = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "address_by_uprn", "arguments": {"uprn": 990000000012i64}}),
    )
    .await;
    let result = &call["result"];
    assert_ne!(result["isError"], true, "{call}");
    let out = &result["structuredContent"];
    assert_eq!(out["uprn"], 990000000012i64);
    assert_eq!(out["postcode"], "XT1 1AB");
    assert_eq!(out["credits_charged"], 1);
    assert_eq!(out["credits_remaining"], 9);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), *out);

    // The same answer over HTTP costs the same.
    let http = send(&svc, get("/v1/address/uprn/990000000012", &key)).await;
    assert_eq!(http.status, 200);
    assert_eq!(http.json["credits_charged"], out["credits_charged"]);
    assert_eq!(http.json["credits_remaining"], 8);
    assert_eq!(balance(app.db(), account).await, 8);
    assert_eq!(
        terrace_store::accounts::ledger_sum(app.db(), account)
            .await
            .unwrap(),
        8
    );

    // Usage names the surface of each call.
    let usage = send(&svc, get("/v1/account/usage", &key)).await;
    let rows = usage.json["data"].as_array().unwrap();
    let surfaces: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["operation"].as_str().unwrap(),
                r["surface"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        surfaces,
        vec![("address_by_uprn", "http"), ("address_by_uprn", "mcp")]
    );

    // A body operation with flattened arguments.
    let resolved = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "address_resolve", "arguments": {"address": "flat 2 10 high street exampleton", "max_candidates": 3}}),
    )
    .await;
    assert_eq!(
        resolved["result"]["structuredContent"]["candidates"][0]["uprn"], 990000000012i64,
        "{resolved}"
    );
    assert_eq!(
        resolved["result"]["structuredContent"]["credits_charged"],
        1
    );
    assert_eq!(balance(app.db(), account).await, 7);
}

#[actix_web::test]
async fn failed_tool_calls_carry_the_http_error_detail_and_cost_nothing() {
    let app = world().await;
    let (account, key) = account(app.db(), 1).await;
    let svc = service(app.state.clone()).await;

    // Validation: the same loc and type as the HTTP 422.
    let bad = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "address_autocomplete", "arguments": {"q": "", "max_results": 99}}),
    )
    .await;
    let r = &bad["result"];
    assert_eq!(r["isError"], true);
    let e = &r["structuredContent"];
    assert_eq!(e["error"]["code"], "validation_error");
    assert_eq!(e["credits_charged"], 0);
    assert_eq!(e["credits_remaining"], 1);
    let detail = e["detail"].as_array().unwrap();
    assert!(
        detail
            .iter()
            .any(|d| d["loc"] == json!(["query", "q"]) && d["type"] == "string_too_short")
    );
    assert!(
        detail
            .iter()
            .any(|d| d["loc"] == json!(["query", "max_results"]) && d["type"] == "less_than_equal")
    );

    // Unknown arguments are refused, not ignored.
    let extra = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "address_by_uprn", "arguments": {"uprn": 990000000012i64, "nope": 1}}),
    )
    .await;
    assert_eq!(
        extra["result"]["structuredContent"]["detail"][0]["type"],
        "extra_forbidden"
    );

    // Not found: 404's body, nothing charged.
    let missing = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "address_by_uprn", "arguments": {"uprn": 123456}}),
    )
    .await;
    assert_eq!(
        missing["result"]["structuredContent"]["error"]["code"],
        "not_found"
    );
    assert_eq!(missing["result"]["structuredContent"]["credits_charged"], 0);

    // Insufficient credits: refused before running, with the price.
    let poor = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "address_by_postcode", "arguments": {"postcode": "XT1 1AB"}}),
    )
    .await;
    let e = &poor["result"]["structuredContent"];
    assert_eq!(e["error"]["code"], "insufficient_credits");
    assert_eq!(e["credits_required"], 2);
    assert_eq!(e["credits_remaining"], 1);
    assert_eq!(e["retry"], "after_top_up");

    assert_eq!(balance(app.db(), account).await, 1);
    let usage = terrace_credits::usage(app.db(), account, 10, None)
        .await
        .unwrap()
        .0;
    assert!(usage.is_empty(), "failed calls are not recorded: {usage:?}");

    // An unknown tool is a protocol error.
    let unknown = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "nope", "arguments": {}}),
    )
    .await;
    assert!(unknown["error"].is_object(), "{unknown}");
}

#[actix_web::test]
async fn a_revoked_key_cannot_call_tools() {
    let app = world().await;
    let (account, key) = account(app.db(), 5).await;
    let svc = service(app.state.clone()).await;
    let keys = terrace_credits::list_keys(app.db(), account).await.unwrap();
    terrace_credits::revoke_key(app.db(), account, keys[0].key_id, chrono::Utc::now())
        .await
        .unwrap();
    app.state.keys.forget_key(keys[0].key_id);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let r = send(&svc, mcp_request(Some(&key), &body)).await;
    assert_eq!(r.status, 401);
}
