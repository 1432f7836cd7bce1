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
            Price::OfStoredOperation { at_most } => assert!(
                description.contains("the price of the stored operation")
                    && description.contains(&format!("at most {at_most} credit")),
                "{}",
                op.id
            ),
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
            let mut declared = Value::Object(p.schema.clone());
            terrace_gateway::mcp_schema::strict(&mut declared);
            for (k, v) in declared.as_object().unwrap() {
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
    // A nullable argument's limits are on its non-null branch (strict schemas: no type arrays).
    let branch = |s: &Value| s.get("anyOf").map_or(s.clone(), |a| a[0].clone());
    assert_eq!(
        branch(&resolve["inputSchema"]["properties"]["address"])["maxLength"],
        500
    );
    assert_eq!(
        branch(&resolve["inputSchema"]["properties"]["max_candidates"])["maximum"],
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

/// The JSON error body of a failed tool call (its second text block).
pub fn error_body(reply: &Value) -> Value {
    let r = &reply["result"];
    assert_eq!(r["isError"], true, "{reply}");
    assert!(r.get("structuredContent").is_none(), "{reply}");
    serde_json::from_str(r["content"][1]["text"].as_str().unwrap()).unwrap()
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
    // No structured content: it would not match the tool's output schema, and a client that
    // validates (the TypeScript SDK, the Inspector) would show a schema failure instead.
    assert!(r.get("structuredContent").is_none(), "{r}");
    let message = r["content"][0]["text"].as_str().unwrap();
    assert!(
        message.contains("- q: String should have at least 1 character"),
        "{message}"
    );
    assert!(message.contains("Fix the arguments"), "{message}");
    assert!(
        message.contains("Nothing was charged; the balance is 1 credits"),
        "{message}"
    );
    assert!(!message.contains("query"), "no HTTP wording: {message}");
    let e = error_body(&bad);
    assert_eq!(e["error"]["code"], "validation_error");
    assert_eq!(e["credits_charged"], 0);
    assert_eq!(e["credits_remaining"], 1);
    let detail = e["detail"].as_array().unwrap();
    assert!(
        detail
            .iter()
            .any(|d| d["loc"] == json!(["arguments", "q"]) && d["type"] == "string_too_short")
    );
    assert!(
        detail
            .iter()
            .any(|d| d["loc"] == json!(["arguments", "max_results"])
                && d["type"] == "less_than_equal")
    );

    // Unknown arguments are refused, not ignored.
    let extra = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "address_by_uprn", "arguments": {"uprn": 990000000012i64, "nope": 1}}),
    )
    .await;
    assert_eq!(error_body(&extra)["detail"][0]["type"], "extra_forbidden");

    // Not found: 404's body, nothing charged.
    let missing = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "address_by_uprn", "arguments": {"uprn": 123456}}),
    )
    .await;
    assert_eq!(error_body(&missing)["error"]["code"], "not_found");
    assert_eq!(error_body(&missing)["credits_charged"], 0);
    assert_eq!(error_body(&missing)["retry"], "no");

    // Insufficient credits: refused before running, with the price.
    let poor = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "address_by_postcode", "arguments": {"postcode": "XT1 1AB"}}),
    )
    .await;
    let e = error_body(&poor);
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

#[test]
fn tool_schemas_are_clean_for_strict_validators() {
    // Type arrays, bare `true` sub-schemas, non-standard formats and untyped properties are what
    // the Inspector's strict mode (and Ajv's) report; none is left in any tool's schemas.
    for tool in terrace_gateway::mcp::tools() {
        let t = serde_json::to_value(&tool).unwrap();
        for k in ["inputSchema", "outputSchema"] {
            if let Some(schema) = t.get(k) {
                let found = terrace_gateway::mcp_schema::lint(schema, k == "inputSchema");
                assert!(found.is_empty(), "{} {k}: {found:?}", tool.name);
            }
        }
        // Tool text names tools, not HTTP paths.
        let text = format!("{} {}", t["description"], t["title"]);
        assert!(!text.contains("/v1/"), "{}: {text}", tool.name);
    }
    let tools: Vec<Value> = terrace_gateway::mcp::tools()
        .into_iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    let history = tools
        .iter()
        .find(|t| t["name"] == "property_history")
        .unwrap();
    assert!(
        history["description"]
            .as_str()
            .unwrap()
            .contains("`transactions_by_uprn` tool"),
        "{history}"
    );
    let changes = tools
        .iter()
        .find(|t| t["name"] == "property_changes_since")
        .unwrap();
    assert_eq!(
        changes["inputSchema"]["properties"]["limit"]["anyOf"][0]["type"],
        "integer"
    );
}

#[actix_web::test]
async fn tools_whose_arguments_are_all_optional_accept_empty_arguments() {
    let app = world().await;
    let (_, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    for name in [
        "market_ranking",
        "market_volume_ranking",
        "market_volume_series",
        "property_changes_since",
    ] {
        let reply = rpc(
            &svc,
            &key,
            "tools/call",
            json!({"name": name, "arguments": {}}),
        )
        .await;
        let r = &reply["result"];
        if r["isError"] == true {
            // The small world has no market tables: not found is an answer, and so is a domain
            // rule about a real argument (the volume series needs one of its areas); a missing
            // `body`, an argument the tool does not have, is not.
            let e = error_body(&reply);
            for d in e["detail"].as_array().into_iter().flatten() {
                assert_ne!(d["loc"], json!(["arguments"]), "{name}: {e}");
                assert_ne!(d["loc"][1], "body", "{name}: {e}");
            }
        }
    }
    let feed = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "property_changes_since", "arguments": {}}),
    )
    .await;
    assert_ne!(feed["result"]["isError"], true, "{feed}");
    // A required field of a flattened body is reported by its argument name.
    let resolve = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "property_lease_batch", "arguments": {}}),
    )
    .await;
    let e = error_body(&resolve);
    assert_eq!(e["detail"][0]["loc"], json!(["arguments", "uprns"]), "{e}");
}

#[actix_web::test]
async fn batch_tools_answer_compactly_unless_detail_is_asked_for() {
    let app = world().await;
    let (account, key) = account(app.db(), 1000).await;
    let svc = service(app.state.clone()).await;
    let uprns = json!(["990000000001", "990000000012", "not-a-uprn"]);
    let compact = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "property_planning_history_batch", "arguments": {"uprns": uprns}}),
    )
    .await;
    let out = &compact["result"]["structuredContent"];
    assert_ne!(compact["result"]["isError"], true, "{compact}");
    assert_eq!(out["detail"], false);
    let items = out["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    for item in items {
        assert!(item.get("result").is_none(), "{item}");
    }
    assert!(items[0]["summary"]["status"].is_string(), "{}", items[0]);
    assert_eq!(items[2]["outcome"], "error");
    let charged = out["credits_charged"].as_i64().unwrap();

    let full = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "property_planning_history_batch", "arguments": {"uprns": uprns, "detail": true}}),
    )
    .await;
    let out = &full["result"]["structuredContent"];
    assert_eq!(out["detail"], true);
    assert!(out["items"][0]["result"]["status"].is_string(), "{out}");
    assert_eq!(
        out["credits_charged"].as_i64().unwrap(),
        charged,
        "same price"
    );

    // The HTTP answer is unchanged.
    let http = send(
        &svc,
        post_json(
            "/v1/property/planning-history/batch",
            &key,
            &json!({"uprns": uprns}),
        ),
    )
    .await;
    if http.status == 200 {
        assert!(http.json["items"][0].get("summary").is_none());
        assert!(http.json.get("detail").is_none());
    }

    let bad = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "property_planning_history_batch", "arguments": {"uprns": uprns, "detail": "yes"}}),
    )
    .await;
    assert_eq!(
        error_body(&bad)["detail"][0]["loc"],
        json!(["arguments", "detail"])
    );
    let _ = account;
}

#[actix_web::test]
async fn an_oauth_caller_gets_no_key_management_tools() {
    use terrace_gateway::mcp::{KEY_MANAGEMENT_TOOLS, Principal, TerraceMcp, tools_for};
    let app = world().await;
    let (account, _) = account(app.db(), 10).await;
    let oauth = Principal::OAuth {
        account_id: account,
        grant_id: 1,
    };
    let names: Vec<String> = tools_for(Some(&oauth))
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    for k in KEY_MANAGEMENT_TOOLS {
        assert!(operations().iter().any(|o| o.id == *k), "{k} is a tool");
        assert!(!names.contains(&k.to_string()), "{k}");
    }
    assert!(names.contains(&"account_list_keys".to_string()));
    assert_eq!(tools_for(None).len(), operations().len());
    let server = TerraceMcp {
        state: app.state.clone(),
        fixed: None,
    };
    let r = server
        .call("account_create_key", Some(Default::default()), Some(oauth))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    let text = serde_json::to_value(&r).unwrap().to_string();
    assert!(text.contains("on the hub"), "{text}");
    assert!(!text.contains("trc_"), "no key was made: {text}");
    let keys = terrace_credits::list_keys(app.db(), account).await.unwrap();
    assert_eq!(keys.len(), 1, "only the account's first key");
}

#[actix_web::test]
async fn a_browser_page_of_another_origin_is_refused() {
    let app = world().await;
    let (_, key) = account(app.db(), 10).await;
    let svc = service(app.state.clone()).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let evil = send(
        &svc,
        mcp_request(Some(&key), &body).insert_header(("Origin", "https://evil.example")),
    )
    .await;
    assert_eq!(evil.status, 403);
    assert_eq!(evil.json["error"]["code"], "forbidden_origin");
    let local = send(
        &svc,
        mcp_request(Some(&key), &body).insert_header(("Origin", "http://localhost:6274")),
    )
    .await;
    assert_eq!(local.status, 200);
}
