//! Exact credits: each priced call charges its price once; failures charge nothing; free calls
//! log 0; concurrent calls never overdraw. Runs on the backend the environment selects.

use crate::support::*;
use serde_json::json;
use terrace_gateway::state::RateLimit;

#[actix_web::test]
async fn a_priced_call_charges_its_price_once_and_says_so() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/address/uprn/990000000001", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        (
            r.json["credits_charged"].as_i64(),
            r.json["credits_remaining"].as_i64()
        ),
        (Some(1), Some(9))
    );
    let r = send(&svc, get("/v1/address/postcode/XT11AA", &key)).await;
    assert_eq!(
        (
            r.status,
            r.json["credits_charged"].as_i64(),
            r.json["credits_remaining"].as_i64()
        ),
        (200, Some(2), Some(7))
    );
    let r = send(
        &svc,
        post_json(
            "/v1/address/resolve",
            &key,
            &json!({"address": "2 High St, Exampleton"}),
        ),
    )
    .await;
    assert_eq!(
        (
            r.status,
            r.json["credits_charged"].as_i64(),
            r.json["credits_remaining"].as_i64()
        ),
        (200, Some(1), Some(6))
    );
    assert_eq!(balance(w.db(), acct).await, 6);
    assert_eq!(
        terrace_store::accounts::ledger_sum(w.db(), acct)
            .await
            .unwrap(),
        6
    );
}

#[actix_web::test]
async fn free_calls_log_zero_and_never_change_the_balance() {
    let w = world().await;
    let (acct, key) = account(w.db(), 5).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/address/autocomplete?q=high", &key)).await;
    assert_eq!(
        (
            r.status,
            r.json["credits_charged"].as_i64(),
            r.json["credits_remaining"].as_i64()
        ),
        (200, Some(0), Some(5))
    );
    let usage = send(&svc, get("/v1/account/usage", &key)).await;
    let rows = usage.json["data"].as_array().unwrap();
    assert_eq!(rows[0]["operation"], "address_autocomplete");
    assert_eq!(rows[0]["credits"], 0);
    assert_eq!(balance(w.db(), acct).await, 5);
}

#[actix_web::test]
async fn failed_calls_charge_nothing() {
    let w = world().await;
    let (acct, key) = account(w.db(), 3).await;
    let svc = service(w.state.clone()).await;
    // 422: invalid input.
    let r = send(&svc, get("/v1/address/uprn/abc", &key)).await;
    assert_eq!(
        (
            r.status,
            r.json["credits_charged"].as_i64(),
            r.json["credits_remaining"].as_i64()
        ),
        (422, Some(0), Some(3))
    );
    // 404: unknown UPRN and unknown postcode.
    let r = send(&svc, get("/v1/address/uprn/123456", &key)).await;
    assert_eq!(
        (
            r.status,
            r.json["credits_charged"].as_i64(),
            r.json["credits_remaining"].as_i64()
        ),
        (404, Some(0), Some(3))
    );
    let r = send(&svc, get("/v1/address/postcode/ZZ9%209ZZ", &key)).await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (404, Some(0))
    );
    // 401: unknown key.
    let r = send(&svc, get("/v1/address/uprn/990000000001", "trc_nope")).await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (401, Some(0))
    );
    assert!(
        r.json.get("credits_remaining").is_none(),
        "the caller is unknown"
    );
    // 402: the balance cannot cover the call.
    let r = send(&svc, get("/v1/address/postcode/XT1%201AA", &key)).await;
    assert_eq!(r.status, 200);
    let r = send(&svc, get("/v1/address/postcode/XT1%201AA", &key)).await;
    assert_eq!(r.status, 402, "{}", r.json);
    assert_eq!(
        (
            r.json["credits_required"].as_i64(),
            r.json["credits_remaining"].as_i64(),
            r.json["credits_charged"].as_i64()
        ),
        (Some(2), Some(1), Some(0))
    );
    assert_eq!(balance(w.db(), acct).await, 1);
    let (usage, _) = terrace_credits::usage(w.db(), acct, 100, None)
        .await
        .unwrap();
    assert_eq!(usage.len(), 1, "only the one successful call is in usage");
}

#[actix_web::test]
async fn an_unreachable_store_is_503_with_retry_after_and_charges_nothing() {
    let db = terrace_store::testing::unreachable_db().unwrap();
    let state = {
        let index = std::sync::Arc::new(terrace_address::IndexHandle::default());
        let address = terrace_address::AddressCtx {
            db: db.clone(),
            index,
        };
        terrace_gateway::state::AppState::new(
            db,
            std::sync::Arc::new(terrace_core::SystemClock),
            address,
            RateLimit::default(),
        )
    };
    let svc = service(state).await;
    let r = send(&svc, get("/v1/address/uprn/990000000001", "trc_0123456789")).await;
    assert_eq!(r.status, 503, "{}", r.json);
    assert_eq!(r.headers.get("retry-after").unwrap(), "5");
    assert_eq!(r.json["credits_charged"], 0);
    let h = send(&svc, actix_web::test::TestRequest::get().uri("/healthz")).await;
    assert_eq!(h.status, 503);
}

#[actix_web::test]
async fn concurrent_priced_calls_never_overdraw() {
    let w = world().await;
    // 25 credits afford exactly 12 postcode lookups at 2 credits.
    let (acct, key) = account(w.db(), 25).await;
    let svc = service(w.state.clone()).await;
    let calls = (0..40).map(|_| send(&svc, get("/v1/address/postcode/XT1%201AB", &key)));
    let replies = futures_util::future::join_all(calls).await;
    let ok = replies.iter().filter(|r| r.status == 200).count();
    let refused = replies.iter().filter(|r| r.status == 402).count();
    assert_eq!(
        (ok, refused),
        (12, 28),
        "statuses: {:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    for r in &replies {
        assert!(r.json["credits_remaining"].as_i64().unwrap() >= 0);
    }
    assert_eq!(balance(w.db(), acct).await, 1);
    let (usage, _) = terrace_credits::usage(w.db(), acct, 500, None)
        .await
        .unwrap();
    let charged: i64 = usage.iter().map(|u| u.credits).sum();
    assert_eq!(charged, 25 - 1, "the usage log sums to the balance change");
    assert_eq!(usage.len(), 12);
}

#[actix_web::test]
async fn the_rate_limit_answers_429_with_retry_after() {
    let w = world_with(RateLimit::per_key(1, 2)).await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    for _ in 0..2 {
        assert_eq!(
            send(&svc, get("/v1/address/uprn/990000000001", &key))
                .await
                .status,
            200
        );
    }
    let r = send(&svc, get("/v1/address/uprn/990000000001", &key)).await;
    assert_eq!(r.status, 429);
    assert!(r.headers.get("retry-after").is_some());
    assert_eq!(
        (
            r.json["credits_charged"].as_i64(),
            r.json["credits_remaining"].as_i64()
        ),
        (Some(0), Some(8))
    );
    assert_eq!(balance(w.db(), acct).await, 8);
}
