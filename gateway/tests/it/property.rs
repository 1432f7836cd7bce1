//! Property operations: registered sales on both routes (one deprecated), and the deprecated
//! flood-risk placeholder.

use crate::support::*;
use terrace_ingest::{Dataset, Progress};

/// Synthetic sales in the Price Paid 16-column format, and HM Land Registry's lookup for one.
const SALES: &str = "\
\"{00000000-0000-0000-0000-000000000001}\",\"150000\",\"2015-03-02 00:00\",\"XT1 1AA\",\"T\",\"N\",\"F\",\"2\",\"\",\"HIGH STREET\",\"\",\"EXAMPLETON\",\"EXAMPLETON\",\"EXAMPLESHIRE\",\"A\",\"A\"
\"{00000000-0000-0000-0000-000000000002}\",\"210000\",\"2021-07-15 00:00\",\"XT1 1AA\",\"T\",\"N\",\"F\",\"2\",\"\",\"HIGH STREET\",\"\",\"EXAMPLETON\",\"EXAMPLETON\",\"EXAMPLESHIRE\",\"A\",\"A\"
\"{00000000-0000-0000-0000-000000000003}\",\"99000\",\"2001-01-10 00:00\",\"XT1 1AA\",\"T\",\"Y\",\"F\",\"2\",\"\",\"HIGH STREET\",\"\",\"EXAMPLETON\",\"EXAMPLETON\",\"EXAMPLESHIRE\",\"B\",\"A\"
\"{00000000-0000-0000-0000-000000000004}\",\"180000\",\"2019-05-01 00:00\",\"XT9 9ZZ\",\"T\",\"N\",\"F\",\"THE OLD FORGE\",\"\",\"NOWHERE LANE\",\"\",\"FARAWAY\",\"FARAWAY\",\"FARSHIRE\",\"A\",\"A\"
";
const LOOKUP: &str =
    "transaction_unique_identifier,uprn\n{00000000-0000-0000-0000-000000000004},990000000003\n";

async fn world_with_sales() -> TestApp {
    let w = world().await;
    let dir = tempfile::tempdir().unwrap();
    let pp = dir.path().join("pp.csv");
    std::fs::write(&pp, SALES).unwrap();
    let lk = dir.path().join("lookup.csv");
    std::fs::write(&lk, LOOKUP).unwrap();
    let mut q = Progress::quiet();
    terrace_ingest::load_file(w.db(), Dataset::PricePaid, &pp, Default::default(), &mut q)
        .await
        .unwrap();
    terrace_build::derive::link_price_paid(w.db(), &mut q)
        .await
        .unwrap();
    let r = terrace_ingest::load_file(w.db(), Dataset::PpdUprn, &lk, Default::default(), &mut q)
        .await
        .unwrap();
    assert_eq!((r.counts.read, r.counts.loaded), (1, 1));
    w
}

#[actix_web::test]
async fn sales_are_listed_newest_first_with_how_they_were_matched() {
    let w = world_with_sales().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/transactions/uprn/990000000002", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        (
            r.json["credits_charged"].as_i64(),
            r.json["credits_remaining"].as_i64()
        ),
        (Some(2), Some(8))
    );
    let sales = r.json["sales"].as_array().unwrap();
    let dates: Vec<&str> = sales.iter().map(|s| s["date"].as_str().unwrap()).collect();
    assert_eq!(dates, vec!["2021-07-15", "2015-03-02", "2001-01-10"]);
    assert_eq!(sales[0]["price"], 210000);
    assert_eq!(sales[0]["tenure_label"], "freehold");
    assert_eq!(sales[2]["new_build"], true);
    assert_eq!(sales[2]["ppd_category"], "B");
    assert_eq!(sales[0]["uprn_match"]["method"], "address_matcher");
    assert!(sales[0]["uprn_match"]["score"].as_f64().unwrap() >= 0.8);
    // The sale HM Land Registry linked itself (its address would not have matched).
    let r = send(&svc, get("/v1/transactions/uprn/990000000003", &key)).await;
    let sales = r.json["sales"].as_array().unwrap();
    assert_eq!(sales.len(), 1, "{}", r.json);
    assert_eq!(
        (
            sales[0]["uprn_match"]["method"].as_str(),
            sales[0]["uprn_match"]["score"].as_f64()
        ),
        (Some("hmlr_uprn_lookup"), Some(1.0))
    );
    // A known UPRN with no sales is an empty list; an unknown one is 404 and free.
    let r = send(&svc, get("/v1/transactions/uprn/990000000021", &key)).await;
    assert_eq!((r.status, r.json["count"].as_i64()), (200, Some(0)));
    let r = send(&svc, get("/v1/transactions/uprn/990000009999", &key)).await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (404, Some(0))
    );
    assert_eq!(balance(w.db(), acct).await, 4);
}

#[actix_web::test]
async fn the_limit_is_validated_and_honoured() {
    let w = world_with_sales().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    for bad in ["0", "501", "ten", "-1"] {
        let r = send(
            &svc,
            get(
                &format!("/v1/transactions/uprn/990000000002?limit={bad}"),
                &key,
            ),
        )
        .await;
        assert_eq!(r.status, 422, "limit={bad}");
        assert_eq!(
            r.json["detail"][0]["loc"],
            serde_json::json!(["query", "limit"])
        );
        let r = send(
            &svc,
            get(
                &format!("/v1/property/990000000002/history?limit={bad}"),
                &key,
            ),
        )
        .await;
        assert_eq!(r.status, 422, "history limit={bad}");
    }
    let r = send(
        &svc,
        get("/v1/transactions/uprn/990000000002?limit=1", &key),
    )
    .await;
    assert_eq!(r.json["sales"].as_array().unwrap().len(), 1);
    assert_eq!(r.json["sales"][0]["date"], "2021-07-15");
    let r = send(
        &svc,
        get("/v1/transactions/uprn/990000000002?limit=500", &key),
    )
    .await;
    assert_eq!(r.json["count"], 3);
    assert_eq!(
        balance(w.db(), acct).await,
        6,
        "two answered calls, the 422s free"
    );
}

#[actix_web::test]
async fn the_deprecated_history_route_answers_the_same_with_deprecation_headers() {
    let w = world_with_sales().await;
    let (_, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let new = send(&svc, get("/v1/transactions/uprn/990000000002", &key)).await;
    let old = send(
        &svc,
        get(
            "/v1/property/990000000002/history?max_drilldowns=not-a-number",
            &key,
        ),
    )
    .await;
    assert_eq!(
        old.status, 200,
        "max_drilldowns is accepted and ignored: {}",
        old.json
    );
    assert_eq!(old.json["sales"], new.json["sales"]);
    assert_eq!(old.json["credits_charged"], new.json["credits_charged"]);
    assert_eq!(old.headers.get("deprecation").unwrap(), "true");
    assert!(old.headers.get("sunset").is_some());
    assert_eq!(
        old.headers.get("link").unwrap(),
        "</v1/transactions/uprn/990000000002>; rel=\"successor-version\""
    );
    assert!(new.headers.get("deprecation").is_none());
    let doc = terrace_gateway::openapi::document();
    assert_eq!(
        doc["paths"]["/v1/property/{uprn}/history"]["get"]["deprecated"],
        true
    );
    assert_eq!(
        doc["paths"]["/v1/property/{uprn}/flood-risk"]["get"]["deprecated"],
        true
    );
    assert!(
        doc["paths"]["/v1/transactions/uprn/{uprn}"]["get"]
            .get("deprecated")
            .is_none()
    );
}

#[actix_web::test]
async fn flood_risk_is_a_free_unknown_placeholder() {
    let w = world().await;
    let (acct, key) = account(w.db(), 1).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/property/990000000001/flood-risk", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["risk_level"], "UNKNOWN");
    assert_eq!(r.json["credits_charged"], 0);
    assert_eq!(
        r.headers.get("link").unwrap(),
        "</v1/property/990000000001/risk>; rel=\"successor-version\""
    );
    assert_eq!(
        send(&svc, get("/v1/property/990000009999/flood-risk", &key))
            .await
            .status,
        404
    );
    assert_eq!(
        send(&svc, get("/v1/property/abc/flood-risk", &key))
            .await
            .status,
        422
    );
    assert_eq!(balance(w.db(), acct).await, 1);
}
