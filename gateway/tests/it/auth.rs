//! Authentication and key management.

use crate::support::*;
use actix_web::test::TestRequest;
use serde_json::json;

#[actix_web::test]
async fn missing_or_unknown_keys_are_401_with_www_authenticate() {
    let w = world().await;
    let svc = service(w.state.clone()).await;
    let r = send(
        &svc,
        TestRequest::get().uri("/v1/address/autocomplete?q=high"),
    )
    .await;
    assert_eq!(r.status, 401);
    assert!(
        r.headers
            .get("www-authenticate")
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("Bearer")
    );
    assert_eq!(r.json["error"]["code"], "unauthenticated");
    let r = send(
        &svc,
        get(
            "/v1/account",
            "trc_0000000000000000000000000000000000000000",
        ),
    )
    .await;
    assert_eq!(r.status, 401);
    let r = send(
        &svc,
        TestRequest::get()
            .uri("/v1/account")
            .insert_header(("Authorization", "Basic abc")),
    )
    .await;
    assert_eq!(r.status, 401);
}

#[actix_web::test]
async fn revoking_a_key_makes_the_next_call_401() {
    let w = world().await;
    let (_, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let created = send(
        &svc,
        post_json("/v1/account/keys", &key, &json!({"name": "laptop"})),
    )
    .await;
    assert_eq!(created.status, 200, "{}", created.json);
    let second = created.json["api_key"].as_str().unwrap().to_string();
    let id = created.json["key_id"].as_i64().unwrap();
    assert_eq!(send(&svc, get("/v1/account", &second)).await.status, 200);
    let listed = send(&svc, get("/v1/account/keys", &key)).await;
    let keys = listed.json["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 2);
    assert!(
        !listed.json.to_string().contains(&second),
        "listing never shows a key"
    );
    let del = send(
        &svc,
        TestRequest::delete()
            .uri(&format!("/v1/account/keys/{id}"))
            .insert_header(("Authorization", format!("Bearer {key}"))),
    )
    .await;
    assert_eq!(del.status, 200, "{}", del.json);
    let r = send(&svc, get("/v1/account", &second)).await;
    assert_eq!(r.status, 401);
    let again = send(
        &svc,
        TestRequest::delete()
            .uri(&format!("/v1/account/keys/{id}"))
            .insert_header(("Authorization", format!("Bearer {key}"))),
    )
    .await;
    assert_eq!(again.status, 404);
}

#[actix_web::test]
async fn account_and_usage_are_paginated_newest_first() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    for u in ["990000000001", "990000000002", "990000000003"] {
        assert_eq!(
            send(&svc, get(&format!("/v1/address/uprn/{u}"), &key))
                .await
                .status,
            200
        );
    }
    let a = send(&svc, get("/v1/account", &key)).await;
    assert_eq!(
        (a.json["account_id"].as_i64(), a.json["balance"].as_i64()),
        (Some(acct), Some(7))
    );
    let p1 = send(&svc, get("/v1/account/usage?limit=2", &key)).await;
    let rows = p1.json["data"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["operation"], "account_balance");
    assert!(rows[0]["request_id"].is_string() && rows[0]["time"].is_string());
    let next = p1.json["next_before"].as_i64().unwrap();
    let p2 = send(
        &svc,
        get(&format!("/v1/account/usage?limit=2&before={next}"), &key),
    )
    .await;
    let rows2 = p2.json["data"].as_array().unwrap();
    assert_eq!(rows2.len(), 2);
    assert!(rows2[0]["id"].as_i64() < rows[1]["id"].as_i64());
    assert_eq!(rows2[0]["credits"], 1);
    let bad = send(&svc, get("/v1/account/usage?limit=0", &key)).await;
    assert_eq!(bad.status, 422);
}

#[actix_web::test]
async fn the_price_list_openapi_and_docs_need_no_key() {
    let w = world().await;
    let svc = service(w.state.clone()).await;
    let p = send(&svc, TestRequest::get().uri("/v1/pricing")).await;
    assert_eq!(p.status, 200);
    let ops = p.json["operations"].as_array().unwrap();
    let resolve = ops
        .iter()
        .find(|o| o["path"] == "/v1/address/resolve")
        .unwrap();
    assert_eq!(resolve["credits"], 1);
    let o = send(&svc, TestRequest::get().uri("/openapi.json")).await;
    assert_eq!(o.json["openapi"], "3.1.0");
    assert_eq!(o.json["info"]["version"], "0.1.0");
    let resp =
        actix_web::test::call_service(&svc, TestRequest::get().uri("/docs/").to_request()).await;
    assert_eq!(resp.status().as_u16(), 200);
    let html = actix_web::test::read_body(resp).await;
    assert!(
        String::from_utf8_lossy(&html).contains("swagger"),
        "the docs page is Swagger UI served locally"
    );
    // /metrics is the operator's: off without a configured token (see security.rs).
    let m =
        actix_web::test::call_service(&svc, TestRequest::get().uri("/metrics").to_request()).await;
    assert_eq!(m.status().as_u16(), 404);
    let h = send(&svc, TestRequest::get().uri("/healthz")).await;
    assert_eq!(h.json["status"], "ok");
    let nf = send(&svc, TestRequest::get().uri("/v1/nope")).await;
    assert_eq!(
        (nf.status, nf.json["credits_charged"].as_i64()),
        (404, Some(0))
    );
    // Operations are mounted in one scope per family (`/v1/address`): a path the family does
    // not hold, and the family's own prefix, are the same JSON 404, not a bare one.
    for path in [
        "/v1/address/nope",
        "/v1/address",
        "/v1/address/",
        "/v1/address/uprn/1/extra",
    ] {
        let nf = send(&svc, TestRequest::get().uri(path)).await;
        assert_eq!(
            (
                nf.status,
                nf.json["error"]["code"].as_str(),
                nf.json["credits_charged"].as_i64()
            ),
            (404, Some("not_found"), Some(0)),
            "{path}: {}",
            nf.json
        );
    }
}

#[actix_web::test]
async fn a_key_revoked_by_another_process_stops_working_at_once() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    // The first call caches the key in this gateway.
    assert_eq!(
        send(&svc, get("/v1/address/uprn/990000000001", &key))
            .await
            .status,
        200
    );
    // Another process (an operator, another gateway) revokes it in the store directly.
    let keys = terrace_credits::list_keys(w.db(), acct).await.unwrap();
    terrace_credits::revoke_key(w.db(), acct, keys[0].key_id, chrono::Utc::now())
        .await
        .unwrap();
    let r = send(&svc, get("/v1/address/uprn/990000000001", &key)).await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (401, Some(0))
    );
    let r = send(&svc, get("/v1/address/autocomplete?q=high", &key)).await;
    assert_eq!(r.status, 401, "free calls too");
    assert_eq!(
        balance(w.db(), acct).await,
        9,
        "only the call before the revocation was charged"
    );
}

#[actix_web::test]
async fn a_grant_made_elsewhere_is_seen_before_answering_402() {
    let w = world().await;
    let (acct, key) = account(w.db(), 1).await;
    let svc = service(w.state.clone()).await;
    assert_eq!(
        send(&svc, get("/v1/address/uprn/990000000001", &key))
            .await
            .status,
        200
    );
    terrace_credits::grant(w.db(), acct, 5, chrono::Utc::now())
        .await
        .unwrap();
    let r = send(&svc, get("/v1/address/postcode/XT11AA", &key)).await;
    assert_eq!(
        (r.status, r.json["credits_remaining"].as_i64()),
        (200, Some(3)),
        "{}",
        r.json
    );
}

#[actix_web::test]
async fn a_wrong_method_is_a_json_405() {
    let w = world().await;
    let (_, key) = account(w.db(), 1).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/address/resolve", &key)).await;
    assert_eq!(r.status, 405, "{}", r.json);
    assert_eq!(
        (
            r.json["error"]["code"].as_str(),
            r.json["credits_charged"].as_i64()
        ),
        (Some("method_not_allowed"), Some(0))
    );
    assert_eq!(r.headers.get("allow").unwrap(), "POST");
}
