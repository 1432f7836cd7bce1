//! Saved searches (issue 42): save-time validation against each stored operation's own input,
//! names unique per account, random ids, cross-account 404, a run charged exactly what the
//! direct call charges (balances before and after, HTTP and MCP), new-since-last-run, and
//! concurrent PATCH and DELETE leaving one consistent state.

use crate::mcp::rpc;
use crate::support::*;
use actix_web::test::TestRequest;
use serde_json::{Value, json};
use terrace_ingest::Dataset;

const LOTS: &str = "auction_house,auction_date,lot_number,address,postcode,lot_type,guide_price,outcome,hammer_price
allsop,2024-02-14,1,\"2 High Street, Exampleton\",XT1 1AA,residential,£200000,sold,210000
allsop,2024-02-14,2,\"3 High Street, Exampleton\",XT1 1AA,residential,£150000,unsold,
";
const MORE: &str = "auction_house,auction_date,lot_number,address,postcode,lot_type,guide_price,outcome,hammer_price
savills,2024-06-20,9,\"1 High Street, Exampleton\",XT1 1AA,residential,£180000,sold,
";

fn patch(path: &str, key: &str, body: &Value) -> TestRequest {
    TestRequest::patch()
        .uri(path)
        .insert_header(("Authorization", format!("Bearer {key}")))
        .set_json(body)
}

fn delete(path: &str, key: &str) -> TestRequest {
    TestRequest::delete()
        .uri(path)
        .insert_header(("Authorization", format!("Bearer {key}")))
}

#[actix_web::test]
async fn parameters_are_checked_at_save_time_against_each_operations_input() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    for (body, loc, kind) in [
        (json!({"name": "a", "operation": "auctions_lots", "parameters": {"limit": 0}}), &["body", "parameters", "limit"][..], "greater_than_equal"),
        (json!({"name": "a", "operation": "auctions_lots", "parameters": {"date_from": "2024-13-01"}}), &["body", "parameters", "date_from"], "value_error"),
        (json!({"name": "a", "operation": "auctions_lots", "parameters": {"colour": "red"}}), &["body", "parameters", "colour"], "extra_forbidden"),
        (json!({"name": "a", "operation": "equity_long_held", "parameters": {}}), &["body", "parameters", "area_id"], "missing"),
        (json!({"name": "a", "operation": "land_plot_utilisation", "parameters": {"area_id": "lad:E06009901", "max_built_coverage": 2}}), &["body", "parameters", "max_built_coverage"], "range_error"),
        (json!({"name": "a", "operation": "market_listings", "parameters": {"area_type": "galaxy"}}), &["body", "parameters", "area_type"], "literal_error"),
        (json!({"name": "a", "operation": "address_by_uprn", "parameters": {}}), &["body", "operation"], "literal_error"),
        (json!({"name": " ", "operation": "auctions_lots"}), &["body", "name"], "value_error"),
    ] {
        let r = send(&svc, post_json("/v1/saved-searches", &key, &body)).await;
        assert_eq!(r.status, 422, "{body}: {}", r.json);
        check_422(&r, loc, kind);
    }
    let r = send(&svc, get("/v1/saved-searches", &key)).await;
    assert_eq!(r.json["data"], json!([]), "nothing was saved");
    assert_eq!(balance(w.db(), acct).await, 10);
}

#[actix_web::test]
async fn names_are_unique_ids_random_and_other_accounts_get_404() {
    let w = world().await;
    let (_, a) = account(w.db(), 10).await;
    let (_, b) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let body = json!({"name": "XT1 sold", "operation": "auctions_lots", "parameters": {"postcode_district": "XT1", "sold_only": true}});
    let one = send(&svc, post_json("/v1/saved-searches", &a, &body)).await;
    assert_eq!(one.status, 200, "{}", one.json);
    assert_eq!(one.json["credits_charged"], 0);
    assert_eq!(one.json["parameters"], body["parameters"]);
    let id = one.json["search_id"].as_str().unwrap().to_string();
    let again = send(&svc, post_json("/v1/saved-searches", &a, &body)).await;
    check_422(&again, &["body", "name"], "value_error");
    // The same name on another account is fine; ids are random, not sequential.
    let other = send(&svc, post_json("/v1/saved-searches", &b, &body)).await;
    assert_eq!(other.status, 200);
    let id_b = other.json["search_id"].as_str().unwrap().to_string();
    assert_ne!(id, id_b);
    assert!(id.len() >= 40 && id.starts_with("ss_"), "{id}");
    // Another account's id is 404, never 403, on every operation.
    for r in [
        send(&svc, patch(&format!("/v1/saved-searches/{id}"), &b, &json!({"name": "mine"}))).await,
        send(&svc, post_json(&format!("/v1/saved-searches/{id}/run"), &b, &json!({}))).await,
        send(&svc, delete(&format!("/v1/saved-searches/{id}"), &b)).await,
    ] {
        assert_eq!((r.status, r.json["credits_charged"].clone()), (404, json!(0)), "{}", r.json);
    }
    let list = send(&svc, get("/v1/saved-searches", &b)).await;
    let ids: Vec<&str> = list.json["data"].as_array().unwrap().iter().map(|s| s["search_id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![id_b.as_str()]);
    // Rename, then newest first with a cursor.
    let r = send(&svc, patch(&format!("/v1/saved-searches/{id}"), &a, &json!({"name": "renamed"}))).await;
    assert_eq!((r.status, r.json["name"].clone()), (200, json!("renamed")), "{}", r.json);
    let r = send(&svc, patch(&format!("/v1/saved-searches/{id}"), &a, &json!({"parameters": {"limit": 0}}))).await;
    check_422(&r, &["body", "parameters", "limit"], "greater_than_equal");
    let second = json!({"name": "all", "operation": "auctions_lots", "parameters": {}});
    let s2 = send(&svc, post_json("/v1/saved-searches", &a, &second)).await;
    let page = send(&svc, get("/v1/saved-searches?limit=1", &a)).await;
    assert_eq!(page.json["data"][0]["search_id"], s2.json["search_id"]);
    let c = page.json["next_cursor"].as_str().unwrap();
    let page2 = send(&svc, get(&format!("/v1/saved-searches?limit=1&cursor={c}"), &a)).await;
    assert_eq!(page2.json["data"][0]["search_id"], json!(id));
    assert_eq!(page2.json["next_cursor"], Value::Null);
    // B's walk cannot use A's cursor.
    let r = send(&svc, get(&format!("/v1/saved-searches?limit=1&cursor={c}"), &b)).await;
    assert_eq!(r.status, 404);
    // Delete is irreversible; a second delete is 404.
    let r = send(&svc, delete(&format!("/v1/saved-searches/{id}"), &a)).await;
    assert_eq!((r.status, r.json["deleted"].clone()), (200, json!(true)));
    let r = send(&svc, delete(&format!("/v1/saved-searches/{id}"), &a)).await;
    assert_eq!(r.status, 404);
}

#[actix_web::test]
async fn a_run_returns_the_rows_and_says_which_are_new_since_the_last_run() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let body = json!({"name": "lots", "operation": "auctions_lots", "parameters": {"postcode_district": "XT1"}});
    let s = send(&svc, post_json("/v1/saved-searches", &key, &body)).await;
    let id = s.json["search_id"].as_str().unwrap().to_string();
    let run = format!("/v1/saved-searches/{id}/run");
    // Without a feed: the operation's own not_available answer, not an empty list.
    let r = send(&svc, post_json(&run, &key, &json!({}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["result"]["status"], "not_available");
    assert_eq!(r.json["new_since_last_run"], Value::Null);
    load_text(w.db(), Dataset::AuctionLots, LOTS).await;
    let r = send(&svc, post_json(&run, &key, &json!({}))).await;
    assert_eq!(r.json["result"]["data"].as_array().unwrap().len(), 2);
    let new = &r.json["new_since_last_run"];
    assert_eq!((new["first_run"].clone(), new["n"].clone()), (json!(true), json!(2)), "{new}");
    let first_at = r.json["run_at"].clone();
    let r = send(&svc, post_json(&run, &key, &json!({}))).await;
    assert_eq!((r.json["new_since_last_run"]["n"].clone(), r.json["new_since_last_run"]["first_run"].clone()), (json!(0), json!(false)));
    assert_eq!(r.json["last_run_at"], first_at);
    load_text(w.db(), Dataset::AuctionLots, MORE).await;
    let r = send(&svc, post_json(&run, &key, &json!({}))).await;
    assert_eq!(r.json["new_since_last_run"]["keys"], json!(["savills|2024-06-20|9"]));
    assert_eq!(r.json["result"]["data"].as_array().unwrap().len(), 3);
    // The listing says when it last ran. Free operation, free run.
    let list = send(&svc, get("/v1/saved-searches", &key)).await;
    assert_eq!(list.json["data"][0]["last_run_at"], r.json["run_at"]);
    assert_eq!(balance(w.db(), acct).await, 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_charges_exactly_the_direct_call_on_http_and_mcp() {
    let t = fixture_db().await;
    let state = state_for(&t.db, Default::default()).await;
    let (acct, key) = account(&t.db, 100).await;
    let svc = service(state).await;
    let m: Value = serde_json::from_str(&std::fs::read_to_string(fixtures().join("manifest.json")).unwrap()).unwrap();
    let lad = m["world"]["local_authorities"][0]["code"].as_str().unwrap();
    let params = json!({"area_id": format!("lad:{lad}"), "limit": 5});
    let direct = send(&svc, post_json("/v1/land/plot-utilisation", &key, &params)).await;
    assert_eq!(direct.status, 200, "{}", direct.json);
    let price = direct.json["credits_charged"].as_i64().unwrap();
    assert_eq!(price, 6);
    assert_eq!(balance(&t.db, acct).await, 100 - price);
    let s = send(&svc, post_json("/v1/saved-searches", &key, &json!({"name": "plots", "operation": "land_plot_utilisation", "parameters": params}))).await;
    assert_eq!(s.status, 200, "{}", s.json);
    let id = s.json["search_id"].as_str().unwrap().to_string();
    let r = send(&svc, post_json(&format!("/v1/saved-searches/{id}/run"), &key, &json!({}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], price);
    assert_eq!(r.json["credits_remaining"], 100 - 2 * price);
    assert_eq!(balance(&t.db, acct).await, 100 - 2 * price);
    assert_eq!(r.json["result"]["parcels"], direct.json["parcels"]);
    // The same run as an MCP tool costs the same.
    let call = rpc(&svc, &key, "tools/call", json!({"name": "saved_searches_run", "arguments": {"search_id": id}})).await;
    let out = &call["result"]["structuredContent"];
    assert_eq!(out["credits_charged"], price, "{call}");
    assert_eq!(balance(&t.db, acct).await, 100 - 3 * price);
    assert_eq!(terrace_store::accounts::ledger_sum(&t.db, acct).await.unwrap(), 100 - 3 * price);
    // An account that cannot afford the stored operation gets 402 and pays nothing.
    let (poor, poor_key) = account(&t.db, 5).await;
    let s = send(&svc, post_json("/v1/saved-searches", &poor_key, &json!({"name": "plots", "operation": "land_plot_utilisation", "parameters": params}))).await;
    let pid = s.json["search_id"].as_str().unwrap().to_string();
    let r = send(&svc, post_json(&format!("/v1/saved-searches/{pid}/run"), &poor_key, &json!({}))).await;
    assert_eq!((r.status, r.json["credits_charged"].clone()), (402, json!(0)), "{}", r.json);
    assert_eq!(balance(&t.db, poor).await, 5);
}

#[actix_web::test]
async fn concurrent_patch_and_delete_leave_one_consistent_state() {
    let w = world().await;
    let (_, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    for i in 0..5 {
        let body = json!({"name": format!("s{i}"), "operation": "auctions_lots", "parameters": {}});
        let s = send(&svc, post_json("/v1/saved-searches", &key, &body)).await;
        let id = s.json["search_id"].as_str().unwrap().to_string();
        let path = format!("/v1/saved-searches/{id}");
        let (p, d) = futures::join!(
            send(&svc, patch(&path, &key, &json!({"name": format!("renamed{i}"), "parameters": {"sold_only": true}}))),
            send(&svc, delete(&path, &key)),
        );
        assert_eq!(d.status, 200, "{}", d.json);
        assert!(matches!(p.status, 200 | 404), "{}", p.json);
        let list = send(&svc, get("/v1/saved-searches", &key)).await;
        assert!(
            !list.json["data"].as_array().unwrap().iter().any(|s| s["search_id"] == json!(id)),
            "the delete stands: {}",
            list.json
        );
        let r = send(&svc, post_json(&format!("{path}/run"), &key, &json!({}))).await;
        assert_eq!(r.status, 404);
    }
}
