//! changes-since: events after a cursor (an event id), paged, each seen once; an empty page with
//! coverage; malformed cursors are 422, unknown ones 404, and both cost nothing.

use crate::support::*;
use serde_json::json;
use terrace_ingest::Dataset;

/// L-1: listed, cut, under offer (3 events); L-2: listed (1 event); L-3 listed then raised (2).
const FEED: &str = r#"{"listing_id":"L-1","channel":"sale","address":"1 High Street","postcode":"XT1 1AA","uprn":990000000001,"price":300000,"bedrooms":3,"first_seen":"2026-01-05T10:00:00Z","snapshots":[{"time":"2026-01-05T10:00:00Z","price":300000,"status":"available"},{"time":"2026-02-05T10:00:00Z","price":290000,"status":"available"},{"time":"2026-03-05T10:00:00Z","price":290000,"status":"under_offer"}]}
{"listing_id":"L-2","channel":"rent","postcode":"XT1 1AB","price":900,"bedrooms":1,"first_seen":"2026-01-06T10:00:00Z","snapshots":[{"time":"2026-01-06T10:00:00Z","price":900,"status":"available"}]}
{"listing_id":"L-3","channel":"sale","postcode":"XT2 3BC","uprn":990000000022,"price":200000,"first_seen":"2026-01-07T10:00:00Z","snapshots":[{"time":"2026-01-07T10:00:00Z","price":200000,"status":"available"},{"time":"2026-04-07T10:00:00Z","price":210000,"status":"available"}]}
"#;

#[actix_web::test]
async fn pages_follow_the_cursor_and_see_every_event_once() {
    let w = world().await;
    let r = load_text(w.db(), Dataset::Listings, FEED).await;
    assert_eq!(r.counts.loaded, 3, "{:?}", r.rejections);
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let mut cursor = json!("0");
    let mut seen = Vec::new();
    let mut calls = 0;
    loop {
        let r = send(
            &svc,
            post_json(
                "/v1/property/changes-since",
                &key,
                &json!({"cursor": cursor, "limit": 4}),
            ),
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.json);
        assert_eq!(r.json["credits_charged"], 1);
        calls += 1;
        let events = r.json["events"].as_array().unwrap().clone();
        assert!(events.len() <= 4);
        for e in &events {
            seen.push((
                e["listing_id"].as_str().unwrap().to_string(),
                e["event_type"].as_str().unwrap().to_string(),
            ));
        }
        let next = r.json["next_cursor"].clone();
        if events.is_empty() {
            assert_eq!(next, cursor, "an empty page keeps the cursor");
            assert_eq!(r.json["has_more"], false);
            let cov = &r.json["coverage"];
            assert_eq!(cov["event_types"].as_array().unwrap().len(), 4);
            assert_eq!(cov["not_yet_fed"].as_array().unwrap().len(), 5);
            assert_eq!(cov["not_observed"], json!(["withdrawal"]));
            break;
        }
        assert_eq!(next, events.last().unwrap()["event_id"]);
        cursor = next;
    }
    let mut kinds: Vec<(&str, &str)> = seen.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    kinds.sort();
    assert_eq!(
        kinds,
        vec![
            ("L-1", "new_listing"),
            ("L-1", "price_reduction"),
            ("L-1", "status_change"),
            ("L-2", "new_listing"),
            ("L-3", "new_listing"),
            ("L-3", "price_increase"),
        ]
    );
    assert_eq!(seen.len(), 6, "{seen:?}");
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 6, "no event twice");
    assert_eq!(calls, 3, "4 + 2 + the empty page");
    assert_eq!(balance(w.db(), acct).await, 7);

    // An integer cursor is accepted too; the event carries the listing's UPRN and prices.
    let r = send(
        &svc,
        post_json(
            "/v1/property/changes-since",
            &key,
            &json!({"cursor": 0, "limit": 1000}),
        ),
    )
    .await;
    let cut = r.json["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event_type"] == "price_reduction")
        .cloned()
        .unwrap();
    assert_eq!(
        (
            cut["uprn"].as_i64(),
            cut["price"].as_i64(),
            cut["previous_price"].as_i64(),
            cut["channel"].as_str()
        ),
        (Some(990000000001), Some(290000), Some(300000), Some("sale"))
    );
    // No body field at all reads from the start with the default page.
    let r = send(
        &svc,
        post_json("/v1/property/changes-since", &key, &json!({})),
    )
    .await;
    assert_eq!(r.json["events"].as_array().unwrap().len(), 6, "{}", r.json);
}

#[actix_web::test]
async fn bad_cursors_and_limits_are_422_and_free() {
    let w = world().await;
    load_text(w.db(), Dataset::Listings, FEED).await;
    let (acct, key) = account(w.db(), 5).await;
    let svc = service(w.state.clone()).await;
    for (body, field, kind) in [
        (
            json!({"cursor": "2026-01-01T00:00:00Z"}),
            "cursor",
            "value_error",
        ),
        (json!({"cursor": "-1"}), "cursor", "value_error"),
        (json!({"cursor": -1}), "cursor", "value_error"),
        (json!({"cursor": 1.5}), "cursor", "value_error"),
        (
            json!({"cursor": "0", "limit": 0}),
            "limit",
            "greater_than_equal",
        ),
        (
            json!({"cursor": "0", "limit": 1001}),
            "limit",
            "less_than_equal",
        ),
        (
            json!({"cursor": "0", "limit": "ten"}),
            "limit",
            "int_parsing",
        ),
        (
            json!({"cursor": "0", "since": "yesterday"}),
            "since",
            "extra_forbidden",
        ),
    ] {
        let r = send(&svc, post_json("/v1/property/changes-since", &key, &body)).await;
        assert_eq!(r.status, 422, "{body}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
        assert_eq!(
            r.json["detail"][0]["loc"],
            json!(["body", field]),
            "{body}: {}",
            r.json
        );
        assert_eq!(r.json["detail"][0]["type"], kind, "{body}");
    }
    // A well-formed cursor that names no event of the log is 404, free.
    for cursor in [json!("9999"), json!(9999), json!(9999.0)] {
        let body = json!({ "cursor": cursor });
        let r = send(&svc, post_json("/v1/property/changes-since", &key, &body)).await;
        assert_eq!(r.status, 404, "{body}: {}", r.json);
        assert_eq!(r.json["error"]["code"], "not_found");
        assert_eq!(r.json["credits_charged"], 0);
    }
    assert_eq!(balance(w.db(), acct).await, 5);
    // A malformed cursor is 422 even with no credits left.
    let (_, broke) = account(w.db(), 0).await;
    let r = send(
        &svc,
        post_json(
            "/v1/property/changes-since",
            &broke,
            &json!({"cursor": "yesterday"}),
        ),
    )
    .await;
    assert_eq!(r.status, 422);
    // An empty log: an empty page from the start, charged like any page.
    let empty = world().await;
    let (acct2, key2) = account(empty.db(), 5).await;
    let svc2 = service(empty.state.clone()).await;
    let r = send(
        &svc2,
        post_json("/v1/property/changes-since", &key2, &json!({"cursor": "0"})),
    )
    .await;
    assert_eq!(
        (
            r.status,
            r.json["events"].clone(),
            r.json["next_cursor"].clone()
        ),
        (200, json!([]), json!("0"))
    );
    assert_eq!(balance(empty.db(), acct2).await, 4);
}
