//! Leases (specification part 2.5): term read from the register, unexpired years at call time
//! with the clock pinned, the 80- and 60-year flags, no_lease, and the batch's order and charging.

use crate::support::*;
use chrono::TimeZone;
use serde_json::json;
use std::sync::Arc;
use terrace_core::FixedClock;
use terrace_gateway::state::RateLimit;
use terrace_ingest::Dataset;

/// Synthetic registered leases (HM Land Registry column names) on the small world's flats.
const LEASES: &str = "\
Unique Identifier,Tenure,Register Property Description,County,Region,Associated Property Description ID,Associated Property Description,OS UPRN,Price Paid,Reg Order,Date of Lease,Term,Alienation Clause Indicator
L-LONG,Leasehold,\"Flat 1, 10 High Street\",EXAMPLESHIRE,SOUTH WEST,A1,\"Flat 1, 10 High Street\",990000000011,95000,1,24-06-1985,999 years from 24 June 1985,N
L-SHORT,Leasehold,\"Flat 2, 10 High Street\",EXAMPLESHIRE,SOUTH WEST,A2,\"Flat 2, 10 High Street\",990000000012,,1,01-11-1946,\"160 years from 1 November 1946\",Y
L-VERYSHORT,Leasehold,\"Flat 3, 10 High Street\",EXAMPLESHIRE,SOUTH WEST,A3,\"Flat 3, 10 High Street\",990000000013,,1,25-03-1957,125 years from 25 March 1957,Y
L-ODD,Leasehold,\"10 High Street\",EXAMPLESHIRE,SOUTH WEST,A4,\"10 High Street\",990000000010,,1,,for the life of the tenant,
";

async fn lease_world() -> TestApp {
    let w = world().await;
    let r = load_text(w.db(), Dataset::Leases, LEASES).await;
    assert_eq!(
        (r.counts.read, r.counts.loaded, r.counts.rejected),
        (4, 4, 0),
        "{:?}",
        r.counts
    );
    // The clock is pinned: 21 November 2026.
    let clock = Arc::new(FixedClock(
        chrono::Utc
            .with_ymd_and_hms(2026, 11, 21, 12, 0, 0)
            .unwrap(),
    ));
    let state = state_with_clock(w.db(), RateLimit::default(), clock).await;
    TestApp { t: w.t, state }
}

#[actix_web::test]
async fn unexpired_years_and_the_short_lease_flags_use_the_pinned_clock() {
    let w = lease_world().await;
    let (acct, key) = account(w.db(), 20).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/property/990000000011/lease", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["status"], "ok");
    let l = &r.json["lease"];
    assert_eq!(l["term"]["years"], 999);
    assert_eq!(l["term"]["start"], "1985-06-24");
    assert_eq!(
        (
            l["is_short_lease"].as_bool(),
            l["is_under_60_years"].as_bool()
        ),
        (Some(false), Some(false))
    );
    assert_eq!(l["alienation_clause"], false);
    assert_eq!(l["price_paid"], 95000);
    assert_eq!(r.json["as_of"], "2026-11-21");
    assert_eq!(r.json["credits_charged"], 2);
    // 160 years from 1 November 1946 ends 31 October 2106: 80 years less three weeks from the pinned day.
    let r = send(&svc, get("/v1/property/990000000012/lease", &key)).await;
    let l = &r.json["lease"];
    assert_eq!(
        (
            l["is_short_lease"].as_bool(),
            l["is_under_60_years"].as_bool()
        ),
        (Some(true), Some(false)),
        "{}",
        r.json
    );
    let y = l["unexpired_years"].as_f64().unwrap();
    assert!((79.9..80.0).contains(&y), "{y}");
    // 125 years from 25 March 1957: about 55 years left.
    let r = send(&svc, get("/v1/property/990000000013/lease", &key)).await;
    let l = &r.json["lease"];
    assert_eq!(
        (
            l["is_short_lease"].as_bool(),
            l["is_under_60_years"].as_bool()
        ),
        (Some(true), Some(true))
    );
    // A term that cannot be read is reported, never guessed.
    let r = send(&svc, get("/v1/property/990000000010/lease", &key)).await;
    let l = &r.json["lease"];
    assert!(l["term"]["problem"].is_string(), "{}", r.json);
    assert!(l["unexpired_years"].is_null() && l["is_short_lease"].is_null());
    assert_eq!(balance(w.db(), acct).await, 12);
}

#[actix_web::test]
async fn no_lease_and_not_found() {
    let w = lease_world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/property/990000000001/lease", &key)).await;
    assert_eq!(
        (r.status, r.json["status"].as_str()),
        (200, Some("no_lease")),
        "{}",
        r.json
    );
    assert!(r.json["reason"].is_string());
    assert!(r.json.get("lease").is_none());
    assert_eq!(
        r.json["credits_charged"], 2,
        "a no_lease answer is an answer"
    );
    let r = send(&svc, get("/v1/property/990000009999/lease", &key)).await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (404, Some(0))
    );
    assert_eq!(
        send(&svc, get("/v1/property/x/lease", &key)).await.status,
        422
    );
    assert_eq!(balance(w.db(), acct).await, 8);
}

#[actix_web::test]
async fn the_batch_answers_in_input_order_and_charges_only_answered_items() {
    let w = lease_world().await;
    let (acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;
    let body = json!({"uprns": [990000000013i64, 990000009999i64, "990000000011", -5, 990000000001i64, "abc"]});
    let r = send(&svc, post_json("/v1/property/lease/batch", &key, &body)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let outcomes: Vec<&str> = r.json["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        vec!["ok", "not_found", "ok", "error", "no_lease", "error"]
    );
    assert_eq!(
        r.json["items"][2]["uprn"], "990000000011",
        "each item echoes the UPRN as given"
    );
    assert_eq!(r.json["answered"], 3);
    // The batch costs the sum of its answered singles: three at 2 credits.
    assert_eq!(r.json["credits_charged"], 6);
    let mut singles = 0;
    for u in [
        "990000000013",
        "990000009999",
        "990000000011",
        "990000000001",
    ] {
        singles += send(&svc, get(&format!("/v1/property/{u}/lease"), &key))
            .await
            .json["credits_charged"]
            .as_i64()
            .unwrap();
    }
    assert_eq!(singles, 6);
    assert_eq!(balance(w.db(), acct).await, 100 - 12);
}

#[actix_web::test]
async fn batch_validation() {
    let w = lease_world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let path = "/v1/property/lease/batch";
    let r = send(&svc, post_json(path, &key, &json!({"uprns": []}))).await;
    assert_eq!(
        (r.status, r.json["detail"][0]["type"].as_str()),
        (422, Some("too_short"))
    );
    let many: Vec<i64> = (1..=101).collect();
    let r = send(&svc, post_json(path, &key, &json!({"uprns": many}))).await;
    assert_eq!(
        (r.status, r.json["detail"][0]["type"].as_str()),
        (422, Some("too_long"))
    );
    let hundred: Vec<i64> = (1..=100).collect();
    let r = send(&svc, post_json(path, &key, &json!({"uprns": hundred}))).await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (200, Some(0)),
        "100 unknown UPRNs: all not_found, free"
    );
    assert_eq!(
        send(&svc, post_json(path, &key, &json!({}))).await.status,
        422
    );
    assert_eq!(
        send(&svc, post_raw(path, &key, "{\"uprns\": [1,"))
            .await
            .status,
        422
    );
    assert_eq!(balance(w.db(), acct).await, 10);
}
