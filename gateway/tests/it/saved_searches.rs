//! Saved searches (issue 42): save-time validation against each stored operation's own input,
//! names unique per account, random ids, cross-account 404, newest first on the shared cursor, a
//! second delete 404, a run charged exactly what the direct call charges (balances before and
//! after, over HTTP and over MCP, for every searchable operation), new-since-last-run, and
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

const SAVE: &str = "/v1/saved-searches";

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

fn id_of(r: &Reply) -> String {
    assert_eq!(r.status, 200, "{}", r.json);
    r.json["search_id"].as_str().unwrap().to_string()
}

#[actix_web::test]
async fn parameters_are_checked_at_save_time_against_each_operations_input() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let save = |operation: &str, parameters: Value| json!({"name": "a", "operation": operation, "parameters": parameters});
    let cases = [
        // A query operation's parameters: its limits, its own check, its names, JSON types.
        (
            save("auctions_lots", json!({"limit": 0})),
            vec!["body", "parameters", "limit"],
            "greater_than_equal",
        ),
        (
            save("auctions_lots", json!({"date_from": "2024-13-01"})),
            vec!["body", "parameters", "date_from"],
            "value_error",
        ),
        (
            save("auctions_lots", json!({"colour": "red"})),
            vec!["body", "parameters", "colour"],
            "extra_forbidden",
        ),
        (
            save("auctions_lots", json!({"limit": "5"})),
            vec!["body", "parameters", "limit"],
            "int_type",
        ),
        (
            save("auctions_lots", json!({"sold_only": "true"})),
            vec!["body", "parameters", "sold_only"],
            "bool_type",
        ),
        (
            save("auctions_lots", json!({"limit": null})),
            vec!["body", "parameters", "limit"],
            "int_type",
        ),
        (
            save("market_listings", json!({"area_type": "galaxy"})),
            vec!["body", "parameters", "area_type"],
            "value_error",
        ),
        // A body operation's fields: required, ranges, its own check.
        (
            save("equity_long_held", json!({})),
            vec!["body", "parameters", "area_id"],
            "missing",
        ),
        (
            save(
                "land_plot_utilisation",
                json!({"area_id": "lad:E06009901", "max_built_coverage": 2}),
            ),
            vec!["body", "parameters", "max_built_coverage"],
            "value_error",
        ),
        (
            save(
                "energy_retrofit_candidates",
                json!({"area_id": "lad:E06009901", "bands": ["Z"]}),
            ),
            vec!["body", "parameters", "bands", "0"],
            "value_error",
        ),
        (
            save(
                "sourcing_commercial",
                json!({"lad_code": "E06009901", "min_rateable_value": 9, "max_rateable_value": 1}),
            ),
            vec!["body", "parameters", "max_rateable_value"],
            "value_error",
        ),
        (
            save("auctions_lots", json!({"idempotency_key": "k"})),
            vec!["body", "parameters", "idempotency_key"],
            "extra_forbidden",
        ),
        // The saved search's own fields.
        (
            save("address_by_uprn", json!({})),
            vec!["body"],
            "type_error",
        ),
        (
            json!({"name": " ", "operation": "auctions_lots", "parameters": {}}),
            vec!["body", "name"],
            "value_error",
        ),
        (
            json!({"name": "a", "operation": "auctions_lots"}),
            vec!["body", "parameters"],
            "missing",
        ),
    ];
    for (body, loc, kind) in cases {
        let r = send(&svc, post_json(SAVE, &key, &body)).await;
        assert_eq!(r.status, 422, "{body}: {}", r.json);
        check_422(&r, &loc, kind);
    }
    // An area the stored operation does not know is its own 404, at save time.
    let r = send(
        &svc,
        post_json(
            SAVE,
            &key,
            &save("land_plot_utilisation", json!({"area_id": "nowhere"})),
        ),
    )
    .await;
    assert_eq!(
        (r.status, r.json["credits_charged"].clone()),
        (404, json!(0)),
        "{}",
        r.json
    );
    let r = send(&svc, get(SAVE, &key)).await;
    assert_eq!(r.json["data"], json!([]), "nothing was saved");
    assert_eq!(balance(w.db(), acct).await, 10);
}

#[actix_web::test]
async fn names_are_unique_ids_random_other_accounts_get_404_and_a_second_delete_is_404() {
    let w = world().await;
    let (_, a) = account(w.db(), 10).await;
    let (_, b) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let body = json!({"name": "XT1 sold", "operation": "auctions_lots", "parameters": {"postcode_district": "XT1", "sold_only": true}});
    let one = send(&svc, post_json(SAVE, &a, &body)).await;
    let id = id_of(&one);
    assert_eq!(one.json["credits_charged"], 0);
    assert_eq!(one.json["parameters"], body["parameters"]);
    assert_eq!(one.json["last_run_at"], Value::Null);
    let again = send(
        &svc,
        post_json(
            SAVE,
            &a,
            &json!({"name": " XT1 sold ", "operation": "auctions_lots", "parameters": {}}),
        ),
    )
    .await;
    check_422(&again, &["body", "name"], "value_error");
    // The same name on another account is fine; ids are random, not sequential.
    let other = send(&svc, post_json(SAVE, &b, &body)).await;
    let id_b = id_of(&other);
    assert_ne!(id, id_b);
    assert!(id.len() > 40 && id.starts_with("ss_"), "{id}");
    // Another account's id is 404, never 403, on every operation, and changes nothing.
    for r in [
        send(
            &svc,
            patch(&format!("{SAVE}/{id}"), &b, &json!({"name": "mine"})),
        )
        .await,
        send(&svc, post_json(&format!("{SAVE}/{id}/run"), &b, &json!({}))).await,
        send(&svc, delete(&format!("{SAVE}/{id}"), &b)).await,
    ] {
        assert_eq!(
            (r.status, r.json["credits_charged"].clone()),
            (404, json!(0)),
            "{}",
            r.json
        );
    }
    let list = send(&svc, get(SAVE, &b)).await;
    let ids: Vec<&str> = list.json["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["search_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![id_b.as_str()]);
    let list = send(&svc, get(SAVE, &a)).await;
    assert_eq!(list.json["data"][0]["name"], "XT1 sold");
    // Rename; new parameters are checked again; an empty patch is 422.
    let r = send(
        &svc,
        patch(&format!("{SAVE}/{id}"), &a, &json!({"name": "renamed"})),
    )
    .await;
    assert_eq!(
        (r.status, r.json["name"].clone()),
        (200, json!("renamed")),
        "{}",
        r.json
    );
    assert_eq!(r.json["parameters"], body["parameters"]);
    let r = send(
        &svc,
        patch(
            &format!("{SAVE}/{id}"),
            &a,
            &json!({"parameters": {"limit": 0}}),
        ),
    )
    .await;
    check_422(&r, &["body", "parameters", "limit"], "greater_than_equal");
    let r = send(&svc, patch(&format!("{SAVE}/{id}"), &a, &json!({}))).await;
    check_422(&r, &["body"], "missing");
    let r = send(
        &svc,
        patch(&format!("{SAVE}/{id}"), &a, &json!({"name": null})),
    )
    .await;
    check_422(&r, &["body"], "type_error");
    let r = send(
        &svc,
        patch(
            &format!("{SAVE}/{id}"),
            &a,
            &json!({"parameters": {"with_yield": true}}),
        ),
    )
    .await;
    assert_eq!(
        r.json["parameters"],
        json!({"with_yield": true}),
        "{}",
        r.json
    );
    // Delete is irreversible; a second delete is 404, and so is a run or a patch.
    let r = send(&svc, delete(&format!("{SAVE}/{id}"), &a)).await;
    assert_eq!(
        (r.status, r.json["deleted"].clone()),
        (200, json!(true)),
        "{}",
        r.json
    );
    for r in [
        send(&svc, delete(&format!("{SAVE}/{id}"), &a)).await,
        send(&svc, post_json(&format!("{SAVE}/{id}/run"), &a, &json!({}))).await,
        send(
            &svc,
            patch(&format!("{SAVE}/{id}"), &a, &json!({"name": "back"})),
        )
        .await,
    ] {
        assert_eq!(
            (r.status, r.json["credits_charged"].clone()),
            (404, json!(0)),
            "{}",
            r.json
        );
    }
    // The name is free again.
    let r = send(&svc, post_json(SAVE, &a, &body)).await;
    assert_eq!(r.status, 200, "{}", r.json);
}

#[actix_web::test]
async fn the_list_is_newest_first_on_the_shared_cursor_bound_to_the_account() {
    let w = world().await;
    let (_, a) = account(w.db(), 10).await;
    let (_, b) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let mut made = Vec::new();
    for i in 0..5 {
        let body = json!({"name": format!("s{i}"), "operation": "auctions_lots", "parameters": {}});
        made.push(id_of(&send(&svc, post_json(SAVE, &a, &body)).await));
    }
    made.reverse();
    let mut seen = Vec::new();
    let mut url = format!("{SAVE}?limit=2");
    let mut first_cursor = None;
    loop {
        let r = send(&svc, get(&url, &a)).await;
        assert_eq!(r.status, 200, "{}", r.json);
        for s in r.json["data"].as_array().unwrap() {
            seen.push(s["search_id"].as_str().unwrap().to_string());
        }
        match r.json["next_cursor"].as_str() {
            Some(c) => {
                first_cursor.get_or_insert(c.to_string());
                url = format!("{SAVE}?limit=2&cursor={c}");
            }
            None => break,
        }
    }
    assert_eq!(seen, made, "newest first, each once");
    let c = first_cursor.unwrap();
    // Another account cannot walk this account's list; a malformed cursor is 422.
    let r = send(&svc, get(&format!("{SAVE}?limit=2&cursor={c}"), &b)).await;
    assert_eq!(r.status, 404, "{}", r.json);
    let r = send(&svc, get(&format!("{SAVE}?cursor=nonsense"), &a)).await;
    check_422(&r, &["query", "cursor"], "value_error");
    let r = send(&svc, get(&format!("{SAVE}?limit=0"), &a)).await;
    check_422(&r, &["query", "limit"], "greater_than_equal");
}

#[actix_web::test]
async fn a_run_returns_the_rows_and_says_which_are_new_since_the_last_run() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let body = json!({"name": "lots", "operation": "auctions_lots", "parameters": {"postcode_district": "XT1"}});
    let id = id_of(&send(&svc, post_json(SAVE, &key, &body)).await);
    let run = format!("{SAVE}/{id}/run");
    // Without a feed: the operation's own not_available answer, with no rows to compare.
    let r = send(&svc, post_json(&run, &key, &json!({}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["result"]["status"], "not_available");
    assert_eq!(r.json["new_since_last_run"], Value::Null);
    assert_eq!(r.json["last_run_at"], Value::Null);
    load_text(w.db(), Dataset::AuctionLots, LOTS).await;
    let r = send(&svc, post_json(&run, &key, &json!({}))).await;
    assert_eq!(
        r.json["result"]["data"].as_array().unwrap().len(),
        2,
        "{}",
        r.json
    );
    let new = &r.json["new_since_last_run"];
    assert_eq!(
        (
            new["first_run"].clone(),
            new["n"].clone(),
            new["key_field"].clone()
        ),
        (json!(true), json!(2), json!("lot_id")),
        "{new}"
    );
    let first_at = r.json["run_at"].clone();
    let r = send(&svc, post_json(&run, &key, &json!({}))).await;
    let new = &r.json["new_since_last_run"];
    assert_eq!(
        (new["n"].clone(), new["first_run"].clone()),
        (json!(0), json!(false)),
        "{new}"
    );
    assert_eq!(r.json["last_run_at"], first_at);
    load_text(w.db(), Dataset::AuctionLots, MORE).await;
    let r = send(&svc, post_json(&run, &key, &json!({}))).await;
    assert_eq!(
        r.json["new_since_last_run"]["keys"],
        json!(["savills|2024-06-20|9"]),
        "{}",
        r.json
    );
    assert_eq!(r.json["result"]["data"].as_array().unwrap().len(), 3);
    // The listing says when it last ran.
    let list = send(&svc, get(SAVE, &key)).await;
    assert_eq!(list.json["data"][0]["last_run_at"], r.json["run_at"]);
    // New parameters: the next run's rows are all new again.
    let r = send(
        &svc,
        patch(
            &format!("{SAVE}/{id}"),
            &key,
            &json!({"parameters": {"postcode_district": "XT1", "sold_only": true}}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let r = send(&svc, post_json(&run, &key, &json!({}))).await;
    let new = &r.json["new_since_last_run"];
    assert_eq!(
        (new["first_run"].clone(), new["n"].clone()),
        (json!(true), json!(2)),
        "{new}"
    );
    // Auction lots are free, so are their runs.
    assert_eq!(r.json["credits_charged"], 0);
    assert_eq!(balance(w.db(), acct).await, 10);
}

/// For each searchable operation: a direct call, then a run of the same parameters over HTTP and
/// over MCP, each charging exactly the direct call's credits.
#[actix_web::test]
async fn a_run_charges_exactly_the_direct_call_on_http_and_mcp() {
    let t = fixture_db().await;
    let state = state_for(&t.db, Default::default()).await;
    let (acct, key) = account(&t.db, 1000).await;
    let svc = service(state).await;
    let lad = "E06009901";
    // A district with listings in the fixture feed, for live listings.
    let listed = terrace_store::listings::listings_in_area(
        &t.db,
        &terrace_store::listings::ListingArea::National,
    )
    .await
    .unwrap();
    let live_district = listed
        .iter()
        .find_map(|l| l.postcode.as_deref()?.split(' ').next().map(str::to_string))
        .expect("the fixture world has listings");
    let cases = [
        (
            "land_plot_utilisation",
            "POST",
            "/v1/land/plot-utilisation",
            json!({"area_id": format!("lad:{lad}"), "limit": 5}),
            6,
        ),
        (
            "energy_retrofit_candidates",
            "POST",
            "/v1/energy/retrofit-candidates",
            json!({"area_id": format!("lad:{lad}"), "limit": 5}),
            6,
        ),
        (
            "sourcing_commercial",
            "POST",
            "/v1/sourcing/commercial",
            json!({"lad_code": lad, "limit": 5}),
            5,
        ),
        (
            "equity_long_held",
            "POST",
            "/v1/equity/long-held",
            json!({"area_id": format!("lad:{lad}"), "limit": 5}),
            8,
        ),
        (
            "market_listings",
            "GET",
            "/v1/market/listings",
            json!({"area_type": "lad", "area_code": lad}),
            -1,
        ),
        (
            "auctions_lots",
            "GET",
            "/v1/auctions/lots",
            json!({"limit": 5, "sold_only": true}),
            0,
        ),
        (
            "buildings_mixed_use",
            "POST",
            "/v1/buildings/mixed-use",
            json!({"area_id": format!("lad:{lad}"), "limit": 5}),
            6,
        ),
        (
            "sourcing_search",
            "POST",
            "/v1/sourcing/search",
            json!({"lad_code": lad, "strategy": "under_built_plots", "limit": 5}),
            5,
        ),
        (
            "sourcing_search",
            "POST",
            "/v1/sourcing/search",
            json!({"lad_code": lad, "strategy": "short_leases", "limit": 5}),
            5,
        ),
        (
            "sourcing_live_listings",
            "POST",
            "/v1/sourcing/live-listings",
            json!({"districts": [live_district], "limit": 5}),
            -1,
        ),
    ];
    let mut expected = 1000;
    let mut keyed_rows = 0;
    for (i, (op, method, path, params, price)) in cases.into_iter().enumerate() {
        let direct = if method == "POST" {
            send(&svc, post_json(path, &key, &params)).await
        } else {
            let q: Vec<String> = params
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().map_or(v.to_string(), String::from)))
                .collect();
            send(&svc, get(&format!("{path}?{}", q.join("&")), &key)).await
        };
        assert_eq!(direct.status, 200, "{op}: {}", direct.json);
        let charged = direct.json["credits_charged"].as_i64().unwrap();
        if price >= 0 {
            assert_eq!(charged, price, "{op}");
        }
        expected -= charged;
        assert_eq!(balance(&t.db, acct).await, expected, "{op}");
        let s = send(
            &svc,
            post_json(
                SAVE,
                &key,
                &json!({"name": format!("{op} {i}"), "operation": op, "parameters": params}),
            ),
        )
        .await;
        let id = id_of(&s);
        let r = send(
            &svc,
            post_json(&format!("{SAVE}/{id}/run"), &key, &json!({})),
        )
        .await;
        assert_eq!(r.status, 200, "{op}: {}", r.json);
        expected -= charged;
        assert_eq!(
            (
                r.json["credits_charged"].as_i64(),
                r.json["credits_remaining"].as_i64()
            ),
            (Some(charged), Some(expected)),
            "{op}"
        );
        assert_eq!(r.json["credits_of_stored_operation"], charged);
        if op == "sourcing_search" {
            // Units are keyed by UPRN, parcels by parcel id: every row of a first run is new.
            let key_field = match r.json["result"]["asset"].as_str() {
                Some("parcel") => "parcel_id",
                _ => "uprn",
            };
            let new = &r.json["new_since_last_run"];
            let rows = r.json["result"]["data"].as_array().unwrap();
            assert_eq!(
                (new["key_field"].as_str(), new["n"].as_u64()),
                (Some(key_field), Some(rows.len() as u64)),
                "{op} {i}: {new}"
            );
            if let Some(row) = rows.first() {
                assert_eq!(new["keys"][0], row[key_field].to_string().trim_matches('"'));
                keyed_rows += rows.len();
            }
        }
        assert_eq!(balance(&t.db, acct).await, expected, "{op}");
        let mut want = direct.json.clone();
        let got = &r.json["result"];
        for k in ["credits_charged", "credits_remaining"] {
            want.as_object_mut().unwrap().remove(k);
        }
        assert_eq!(
            got, &want,
            "{op}: the run answers what the direct call answered"
        );
        // The same run as an MCP tool costs the same.
        let call = rpc(
            &svc,
            &key,
            "tools/call",
            json!({"name": "saved_searches_run", "arguments": {"search_id": id}}),
        )
        .await;
        let out = &call["result"]["structuredContent"];
        expected -= charged;
        assert_eq!(
            (
                out["credits_charged"].as_i64(),
                out["credits_remaining"].as_i64()
            ),
            (Some(charged), Some(expected)),
            "{op}: {call}"
        );
        assert_eq!(balance(&t.db, acct).await, expected, "{op}");
    }
    assert!(
        expected < 1000 - 2 * (6 + 6 + 5 + 8),
        "the priced operations were charged"
    );
    assert!(
        keyed_rows > 0,
        "a sourcing search returned rows keyed by their field"
    );
    assert_eq!(
        terrace_store::accounts::ledger_sum(&t.db, acct)
            .await
            .unwrap(),
        expected
    );
    // Saving, listing, renaming and deleting over MCP are free tools too.
    let call = rpc(&svc, &key, "tools/call", json!({"name": "saved_searches_create", "arguments": {"name": "by mcp", "operation": "auctions_lots", "parameters": {"limit": 0}}})).await;
    let e = crate::mcp::error_body(&call);
    assert_eq!(
        e["detail"][0]["loc"],
        json!(["arguments", "parameters", "limit"]),
        "{e}"
    );
    let call = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "saved_searches_list", "arguments": {"limit": 1}}),
    )
    .await;
    let out = &call["result"]["structuredContent"];
    assert_eq!(out["credits_charged"], 0, "{call}");
    let id = out["data"][0]["search_id"].as_str().unwrap().to_string();
    let call = rpc(
        &svc,
        &key,
        "tools/call",
        json!({"name": "saved_searches_delete", "arguments": {"search_id": id}}),
    )
    .await;
    assert_eq!(
        call["result"]["structuredContent"]["deleted"], true,
        "{call}"
    );
    assert_eq!(balance(&t.db, acct).await, expected);

    // An account that cannot afford the stored operation gets 402 and pays nothing.
    let (poor, poor_key) = account(&t.db, 5).await;
    let params = json!({"area_id": format!("lad:{lad}"), "limit": 5});
    let s = send(
        &svc,
        post_json(
            SAVE,
            &poor_key,
            &json!({"name": "plots", "operation": "land_plot_utilisation", "parameters": params}),
        ),
    )
    .await;
    let pid = id_of(&s);
    let r = send(
        &svc,
        post_json(&format!("{SAVE}/{pid}/run"), &poor_key, &json!({})),
    )
    .await;
    assert_eq!(
        (
            r.status,
            r.json["credits_charged"].clone(),
            r.json["credits_required"].clone()
        ),
        (402, json!(0), json!(6)),
        "{}",
        r.json
    );
    assert_eq!(balance(&t.db, poor).await, 5);
    let list = send(&svc, get(SAVE, &poor_key)).await;
    assert_eq!(
        list.json["data"][0]["last_run_at"],
        Value::Null,
        "a refused run is not a run"
    );
}

#[actix_web::test]
async fn a_repeated_idempotency_key_replays_the_run_and_charges_once() {
    let w = world().await;
    let (_, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let save = post_json(
        SAVE,
        &key,
        &json!({"name": "once", "operation": "auctions_lots", "parameters": {}}),
    )
    .insert_header(("Idempotency-Key", "save-1"));
    let first = send(&svc, save).await;
    let again = send(
        &svc,
        post_json(
            SAVE,
            &key,
            &json!({"name": "once", "operation": "auctions_lots", "parameters": {}}),
        )
        .insert_header(("Idempotency-Key", "save-1")),
    )
    .await;
    assert_eq!((first.status, again.status), (200, 200), "{}", again.json);
    assert_eq!(
        first.json["search_id"], again.json["search_id"],
        "the same answer, one search"
    );
    let list = send(&svc, get(SAVE, &key)).await;
    assert_eq!(list.json["data"].as_array().unwrap().len(), 1);
}

#[actix_web::test]
async fn concurrent_patch_and_delete_leave_one_consistent_state() {
    let w = world().await;
    let (_, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    for i in 0..6 {
        let body = json!({"name": format!("s{i}"), "operation": "auctions_lots", "parameters": {}});
        let id = id_of(&send(&svc, post_json(SAVE, &key, &body)).await);
        let path = format!("{SAVE}/{id}");
        let change = json!({"name": format!("renamed{i}"), "parameters": {"sold_only": true}});
        let (p, d) = if i % 2 == 0 {
            tokio::join!(
                send(&svc, patch(&path, &key, &change)),
                send(&svc, delete(&path, &key))
            )
        } else {
            let (d, p) = tokio::join!(
                send(&svc, delete(&path, &key)),
                send(&svc, patch(&path, &key, &change))
            );
            (p, d)
        };
        // The delete always stands; the patch either came first (200) or found nothing (404).
        assert_eq!(d.status, 200, "{}", d.json);
        assert!(matches!(p.status, 200 | 404), "{}", p.json);
        let list = send(&svc, get(SAVE, &key)).await;
        assert!(
            !list.json["data"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["search_id"] == json!(id)),
            "the delete stands: {}",
            list.json
        );
        let r = send(&svc, post_json(&format!("{path}/run"), &key, &json!({}))).await;
        assert_eq!(r.status, 404);
    }
    // Two renames to one name at once: exactly one wins, the other is 422 at `name`.
    let ids: Vec<String> = futures_util::future::join_all((0..2).map(|i| {
        let svc = &svc;
        let key = &key;
        async move {
            let body =
                json!({"name": format!("t{i}"), "operation": "auctions_lots", "parameters": {}});
            id_of(&send(svc, post_json(SAVE, key, &body)).await)
        }
    }))
    .await;
    let (x, y) = tokio::join!(
        send(
            &svc,
            patch(
                &format!("{SAVE}/{}", ids[0]),
                &key,
                &json!({"name": "same"})
            )
        ),
        send(
            &svc,
            patch(
                &format!("{SAVE}/{}", ids[1]),
                &key,
                &json!({"name": "same"})
            )
        ),
    );
    let mut statuses = [x.status, y.status];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 422], "{} {}", x.json, y.json);
    let list = send(&svc, get(SAVE, &key)).await;
    let names: Vec<&str> = list.json["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names.iter().filter(|n| **n == "same").count(),
        1,
        "{names:?}"
    );
}
