//! Several service instances on one store (issue 46, "past one machine"): each instance has its
//! own connection pool, caches, ledger writer and rate limiters, and they share only the
//! database. What must hold across them: a balance is spent exactly once, a key revoked on one is
//! refused on the other at once, and a grant made on one is seen by the other. (OAuth tokens
//! across instances: `oauth::a_token_from_one_instance_works_on_another`.)

use crate::support::*;
use terrace_gateway::state::AppState;
use terrace_store::Db;

/// Another instance on the same store: a new pool to the same database.
async fn second_instance(w: &TestApp) -> AppState {
    let db = Db::open(&w.t.location, &Default::default()).unwrap();
    state_for(&db, Default::default()).await
}

#[actix_web::test]
async fn forty_calls_over_two_instances_spend_seven_credits_exactly() {
    let w = world().await;
    let (acct, key) = account(w.db(), 7).await;
    let b = second_instance(&w).await;
    let (svc_a, svc_b) = (service(w.state.clone()).await, service(b).await);
    let calls = (0..40).map(|i| {
        let req = get("/v1/address/uprn/990000000001", &key);
        let (svc_a, svc_b) = (&svc_a, &svc_b);
        async move {
            if i % 2 == 0 {
                send(svc_a, req).await
            } else {
                send(svc_b, req).await
            }
        }
    });
    let replies = futures_util::future::join_all(calls).await;
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    let ok = statuses.iter().filter(|s| **s == 200).count();
    let refused = statuses.iter().filter(|s| **s == 402).count();
    assert_eq!((ok, refused), (7, 33), "{statuses:?}");
    for r in &replies {
        let left = r.json["credits_remaining"].as_i64().unwrap();
        assert!((0..=7).contains(&left), "{}", r.json);
    }
    assert_eq!(balance(w.db(), acct).await, 0);
    let (usage, _) = terrace_credits::usage(w.db(), acct, 100, None)
        .await
        .unwrap();
    assert_eq!(usage.iter().map(|u| u.credits).sum::<i64>(), 7);
}

#[actix_web::test]
async fn a_key_revoked_on_one_instance_is_refused_on_the_other_at_once() {
    let w = world().await;
    let (acct, key) = account(w.db(), 20).await;
    let b = second_instance(&w).await;
    let (svc_a, svc_b) = (service(w.state.clone()).await, service(b).await);
    // B has the key in its cache.
    let r = send(&svc_b, get("/v1/address/uprn/990000000001", &key)).await;
    assert_eq!(r.status, 200);
    // A second key of the account revokes the first through instance A.
    let other = terrace_credits::create_key(w.db(), acct, Some("second"), chrono::Utc::now())
        .await
        .unwrap()
        .api_key;
    let keys = terrace_credits::list_keys(w.db(), acct).await.unwrap();
    let first = keys
        .iter()
        .find(|k| k.name.as_deref() != Some("second"))
        .unwrap()
        .key_id;
    let r = send(
        &svc_a,
        actix_web::test::TestRequest::delete()
            .uri(&format!("/v1/account/keys/{first}"))
            .insert_header(("authorization", format!("Bearer {other}"))),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    // On B, priced and free calls are refused at once, and nothing is charged.
    let r = send(&svc_b, get("/v1/address/uprn/990000000001", &key)).await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (401, Some(0))
    );
    let r = send(&svc_b, get("/v1/address/autocomplete?q=high", &key)).await;
    assert_eq!(r.status, 401);
    assert_eq!(balance(w.db(), acct).await, 19);
    // A grant on A is seen by B before it would answer 402.
    let (acct2, key2) = account(w.db(), 1).await;
    assert_eq!(
        send(&svc_b, get("/v1/address/uprn/990000000001", &key2))
            .await
            .status,
        200
    );
    terrace_credits::grant(w.db(), acct2, 4, chrono::Utc::now())
        .await
        .unwrap();
    let r = send(&svc_b, get("/v1/address/postcode/XT11AA", &key2)).await;
    assert_eq!(
        (r.status, r.json["credits_remaining"].as_i64()),
        (200, Some(2)),
        "{}",
        r.json
    );
}
