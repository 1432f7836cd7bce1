//! Every validation rule of specification part 8 (and part 7's examples) for the address
//! endpoints: 422 with a FastAPI-compatible body, nothing charged.

use crate::support::*;
use serde_json::{Value, json};

/// One rule: the request, and the expected (loc, type) of its first error.
#[track_caller]
pub(crate) fn check_422(r: &Reply, loc: &[&str], kind: &str) {
    assert_eq!(r.status, 422, "{}", r.json);
    let detail = r.json["detail"].as_array().expect("detail is a list");
    let want: Vec<Value> = loc.iter().map(|s| json!(s)).collect();
    assert!(
        detail.iter().any(|d| d["loc"].as_array().unwrap()
            [..want.len().min(d["loc"].as_array().unwrap().len())]
            == want[..]
            && d["type"] == kind),
        "expected loc {loc:?} type {kind}, got {}",
        r.json
    );
    for d in detail {
        assert!(d["msg"].is_string() && d["type"].is_string() && d["loc"].is_array());
    }
    assert_eq!(r.json["credits_charged"], 0);
}

#[actix_web::test]
async fn autocomplete_rules() {
    let w = world().await;
    let (acct, key) = account(w.db(), 5).await;
    let svc = service(w.state.clone()).await;
    check_422(
        &send(&svc, get("/v1/address/autocomplete", &key)).await,
        &["query", "q"],
        "missing",
    );
    check_422(
        &send(&svc, get("/v1/address/autocomplete?q=", &key)).await,
        &["query", "q"],
        "string_too_short",
    );
    let long = "a".repeat(501);
    check_422(
        &send(
            &svc,
            get(&format!("/v1/address/autocomplete?q={long}"), &key),
        )
        .await,
        &["query", "q"],
        "string_too_long",
    );
    let ok500 = "a".repeat(500);
    assert_eq!(
        send(
            &svc,
            get(&format!("/v1/address/autocomplete?q={ok500}"), &key)
        )
        .await
        .status,
        200
    );
    check_422(
        &send(
            &svc,
            get("/v1/address/autocomplete?q=high&max_results=0", &key),
        )
        .await,
        &["query", "max_results"],
        "greater_than_equal",
    );
    check_422(
        &send(
            &svc,
            get("/v1/address/autocomplete?q=high&max_results=26", &key),
        )
        .await,
        &["query", "max_results"],
        "less_than_equal",
    );
    check_422(
        &send(
            &svc,
            get("/v1/address/autocomplete?q=high&max_results=ten", &key),
        )
        .await,
        &["query", "max_results"],
        "int_parsing",
    );
    check_422(
        &send(
            &svc,
            get("/v1/address/autocomplete?q=high&country=US", &key),
        )
        .await,
        &["query", "country"],
        "literal_error",
    );
    for ok in ["max_results=1", "max_results=25", "country=UK"] {
        assert_eq!(
            send(
                &svc,
                get(&format!("/v1/address/autocomplete?q=high&{ok}"), &key)
            )
            .await
            .status,
            200,
            "{ok}"
        );
    }
    // Several failures are all reported.
    let r = send(&svc, get("/v1/address/autocomplete?max_results=99", &key)).await;
    assert_eq!(r.json["detail"].as_array().unwrap().len(), 2, "{}", r.json);
    assert_eq!(balance(w.db(), acct).await, 5);
}

#[actix_web::test]
async fn uprn_and_postcode_path_rules() {
    let w = world().await;
    let (acct, key) = account(w.db(), 5).await;
    let svc = service(w.state.clone()).await;
    check_422(
        &send(&svc, get("/v1/address/uprn/abc", &key)).await,
        &["path", "uprn"],
        "int_parsing",
    );
    check_422(
        &send(&svc, get("/v1/address/uprn/12.5", &key)).await,
        &["path", "uprn"],
        "int_parsing",
    );
    check_422(
        &send(&svc, get("/v1/address/uprn/0", &key)).await,
        &["path", "uprn"],
        "greater_than_equal",
    );
    check_422(
        &send(&svc, get("/v1/address/uprn/-3", &key)).await,
        &["path", "uprn"],
        "greater_than_equal",
    );
    check_422(
        &send(&svc, get("/v1/address/uprn/1000000000000", &key)).await,
        &["path", "uprn"],
        "less_than_equal",
    );
    check_422(
        &send(&svc, get("/v1/address/postcode/NOTAPOSTCODE", &key)).await,
        &["path", "postcode"],
        "value_error",
    );
    check_422(
        &send(&svc, get("/v1/address/postcode/12345", &key)).await,
        &["path", "postcode"],
        "value_error",
    );
    assert_eq!(balance(w.db(), acct).await, 5);
}

#[actix_web::test]
async fn resolve_body_rules() {
    let w = world().await;
    let (acct, key) = account(w.db(), 5).await;
    let svc = service(w.state.clone()).await;
    let path = "/v1/address/resolve";
    check_422(
        &send(&svc, post_raw(path, &key, "{\"address\": ")).await,
        &["body"],
        "json_invalid",
    );
    check_422(
        &send(&svc, post_raw(path, &key, "")).await,
        &["body"],
        "missing",
    );
    check_422(
        &send(&svc, post_json(path, &key, &json!({}))).await,
        &["body", "address"],
        "missing",
    );
    check_422(
        &send(&svc, post_json(path, &key, &json!({"address": "   "}))).await,
        &["body", "address"],
        "missing",
    );
    check_422(
        &send(&svc, post_json(path, &key, &json!(["1 High St"]))).await,
        &["body"],
        "model_attributes_type",
    );
    check_422(
        &send(&svc, post_json(path, &key, &json!({"adress": "1 High St"}))).await,
        &["body", "adress"],
        "extra_forbidden",
    );
    check_422(
        &send(&svc, post_json(path, &key, &json!({"address": 12}))).await,
        &["body"],
        "type_error",
    );
    check_422(
        &send(
            &svc,
            post_json(path, &key, &json!({"address": "a".repeat(501)})),
        )
        .await,
        &["body", "address"],
        "string_too_long",
    );
    check_422(
        &send(
            &svc,
            post_json(
                path,
                &key,
                &json!({"address": "1 High St", "max_candidates": 0}),
            ),
        )
        .await,
        &["body", "max_candidates"],
        "range_error",
    );
    assert_eq!(balance(w.db(), acct).await, 5);
    let ok = send(
        &svc,
        post_json(path, &key, &json!({"paon": "1", "street": "High Street"})),
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.json);
}

#[actix_web::test]
async fn invalid_bodies_are_422_even_when_the_balance_is_empty_and_huge_bodies_are_json_413() {
    let w = world().await;
    let (_, key) = account(w.db(), 0).await;
    let svc = service(w.state.clone()).await;
    check_422(
        &send(&svc, post_json("/v1/address/resolve", &key, &json!({}))).await,
        &["body", "address"],
        "missing",
    );
    let r = send(
        &svc,
        post_json(
            "/v1/address/resolve",
            &key,
            &json!({"address": "1 High St"}),
        ),
    )
    .await;
    assert_eq!(r.status, 402, "valid input, no credits");
    let big = format!("{{\"address\": \"{}\"}}", "a".repeat(2 << 20));
    let r = send(
        &svc,
        actix_web::test::TestRequest::post()
            .uri("/v1/address/resolve")
            .insert_header(("Authorization", format!("Bearer {key}")))
            .insert_header(("Content-Type", "application/json"))
            .set_payload(big),
    )
    .await;
    assert_eq!(r.status, 413);
    assert_eq!(
        (
            r.json["error"]["code"].as_str(),
            r.json["credits_charged"].as_i64()
        ),
        (Some("payload_too_large"), Some(0))
    );
}
