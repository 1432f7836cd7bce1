//! Valuation and equity on the fixture world, loaded as the first start loads it (the valuation
//! vintage is built by the same derived steps): estimates with their range and weights, every
//! refusal as a 404 that costs nothing, the transaction anchor against the published index,
//! `no_rows_yet` before the first backtest and rows after it, the equity batch's item outcomes,
//! each validation rule, and charging.

use crate::support::*;
use chrono::NaiveDate;
use serde_json::json;
use terrace_store::valuation::{self as vs, ValuationRow};

pub(crate) async fn fixture_world() -> TestApp {
    crate::support::small_world_and_fixtures().await
}

pub(crate) async fn all_valuations(w: &TestApp) -> Vec<ValuationRow> {
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let page = vs::valuations_page(w.db(), after, 5000).await.unwrap();
        let Some(last) = page.last() else { break };
        after = last.uprn;
        out.extend(page);
    }
    out
}

/// Gives a UPRN that neither the vintage nor the register holds (so it has no position: the
/// nearest-same-type tier cannot place it) a certificate with a type but no floor area, in a
/// district with no sales and a postcode the directory does not hold, and rebuilds the vintage:
/// it is refused for want of a floor area and of any comparable basis.
async fn plant_refusal(w: &TestApp) -> i64 {
    let held: std::collections::HashSet<i64> =
        all_valuations(w).await.iter().map(|r| r.uprn).collect();
    let page = terrace_store::address::addresses_page(w.db(), 0, 100_000)
        .await
        .unwrap();
    let uprn = page.iter().map(|a| a.uprn).max().unwrap() + 1;
    assert!(!held.contains(&uprn));
    let now = chrono::Utc::now().naive_utc();
    terrace_store::epc::replace_epc(
        w.db(),
        vec![terrace_store::epc::EpcRow {
            lmk_key: "LMK-NO-AREA".into(),
            uprn: Some(uprn),
            address: None,
            postcode: Some("XT99 9ZZ".into()),
            current_rating: None,
            potential_rating: None,
            current_efficiency: None,
            potential_efficiency: None,
            property_type: Some("House".into()),
            built_form: Some("Detached".into()),
            total_floor_area: None,
            habitable_rooms: None,
            lodgement_date: None,
            inspection_date: None,
            tenure: None,
            main_fuel: None,
            local_authority: None,
            fields_json: "{}".into(),
            source: "test".into(),
            updated_at: now,
            kind: "domestic".into(),
            uprn_source: None,
            solar_water_heating: None,
            construction_age_band: None,
            floor_level: None,
            photo_supply: None,
            asset_rating: None,
        }],
    )
    .await
    .unwrap();
    terrace_valuation::build::build(w.db(), now, &mut |_| {})
        .await
        .unwrap();
    uprn
}

#[actix_web::test]
async fn the_fixture_world_is_valued_with_ranges_weights_and_refusals() {
    let w = fixture_world().await;
    let planted = plant_refusal(&w).await;
    let rows = all_valuations(&w).await;
    let valued: Vec<&ValuationRow> = rows.iter().filter(|r| r.value.is_some()).collect();
    let refused: Vec<&ValuationRow> = rows.iter().filter(|r| r.refusal.is_some()).collect();
    assert!(valued.len() > 500, "{} valued", valued.len());
    assert!(!refused.is_empty());
    // A refusal never carries a number.
    for r in &refused {
        assert!(
            r.value.is_none() && r.lo.is_none() && r.hi.is_none(),
            "{r:?}"
        );
    }
    let vintage = vs::latest_vintage(w.db()).await.unwrap().unwrap();
    assert_eq!(vintage.n_valued as usize, valued.len());
    assert_eq!(vintage.n_refused as usize, refused.len());
    // The interval's coverage on the calibration sales is about its nominal 80%.
    let cov = vintage.calibration_coverage.unwrap();
    assert!((0.7..=0.9).contains(&cov), "{cov}");

    let (acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;
    // A valued property with a previous sale.
    let subject = valued
        .iter()
        .find(|r| r.estimate_anchor.is_some() && r.lo.is_some())
        .unwrap();
    let r = send(
        &svc,
        post_json(
            "/v1/valuation/estimate",
            &key,
            &json!({"uprn": subject.uprn}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 5);
    assert_eq!(balance(w.db(), acct).await, 95);
    assert_eq!(
        terrace_store::accounts::ledger_sum(w.db(), acct)
            .await
            .unwrap(),
        95
    );
    let v = r.json["value"].as_i64().unwrap();
    let (lo, hi) = (
        r.json["range"]["lo"].as_i64().unwrap(),
        r.json["range"]["hi"].as_i64().unwrap(),
    );
    assert!(lo < v && v < hi, "{}", r.json);
    assert_eq!(v, ((subject.value.unwrap() / 100.0).round() * 100.0) as i64);
    assert_eq!(r.json["range"]["coverage"], 0.8);
    assert_eq!(r.json["model_version"], terrace_valuation::MODEL_VERSION);
    assert_eq!(r.json["as_of"], vintage.as_of.as_str());
    let wsum: f64 = ["transaction_anchor", "comparables", "hedonic"]
        .iter()
        .map(|k| r.json["weights"][k].as_f64().unwrap())
        .sum();
    assert!((wsum - 1.0).abs() < 1e-9, "{}", r.json);
    assert!(
        r.json["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "transaction_anchor")
    );

    // Refused: 404 with why, free.
    let no_area = refused.iter().find(|r| r.uprn == planted).unwrap();
    assert!(
        no_area
            .refusal
            .as_deref()
            .unwrap()
            .starts_with("no floor area on record and no comparable basis")
    );
    let r = send(
        &svc,
        post_json(
            "/v1/valuation/estimate",
            &key,
            &json!({"uprn": no_area.uprn}),
        ),
    )
    .await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 0);
    let msg = r.json.to_string();
    assert!(
        msg.contains(no_area.refusal.as_deref().unwrap()),
        "{msg} / {:?}",
        no_area.refusal
    );
    // No row at all (a commercial unit of the register with no sale or certificate).
    let r = send(
        &svc,
        post_json(
            "/v1/valuation/estimate",
            &key,
            &json!({"uprn": 999999999999_i64}),
        ),
    )
    .await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (404, Some(0))
    );
    assert_eq!(balance(w.db(), acct).await, 95);

    // The equity batch: ok, no_valuation, error; free.
    let r = send(
        &svc,
        post_json(
            "/v1/equity/estimate",
            &key,
            &json!({"uprns": [subject.uprn, no_area.uprn, "abc", 999999999999_i64]}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 0);
    let items = r.json["items"].as_array().unwrap();
    let outcomes: Vec<&str> = items
        .iter()
        .map(|i| i["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["ok", "no_valuation", "error", "no_valuation"]);
    assert_eq!(r.json["answered"], 1);
    let e = &items[0]["result"];
    let price = subject.last_sale_price.unwrap();
    assert_eq!(e["last_sale_price"], price);
    assert_eq!(e["gain"].as_i64().unwrap(), v - price);
    assert_eq!(
        e["last_sale_date"],
        subject.last_sale_date.unwrap().to_string()
    );
    assert!(e["years_held"].as_f64().unwrap() >= 0.0);
    assert!(items[1]["reason"].as_str().unwrap().len() > 10);
    assert_eq!(balance(w.db(), acct).await, 95);
}

#[actix_web::test]
async fn the_transaction_anchor_reads_the_published_index() {
    let w = fixture_world().await;
    let rows = all_valuations(&w).await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let sold = rows.iter().find(|r| r.last_sale_price.is_some()).unwrap();
    let r = send(
        &svc,
        get(
            &format!("/v1/valuation/{}/transaction-anchor", sold.uprn),
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["status"], "ok");
    assert_eq!(r.json["credits_charged"], 2);
    assert_eq!(r.json["last_sale"]["price"], sold.last_sale_price.unwrap());
    assert_eq!(r.json["last_sale"]["category"], "A");
    let ix = &r.json["index"];
    let f = ix["factor"].as_f64().unwrap();
    assert!(
        (f - ix["to_level"].as_f64().unwrap() / ix["from_level"].as_f64().unwrap()).abs() < 1e-9
    );
    assert!(ix["geography"].as_str().unwrap().starts_with("district:"));
    // The factor is the published index's own ratio.
    let points = terrace_store::market::index_points(w.db(), ix["geography"].as_str().unwrap())
        .await
        .unwrap();
    let level = |p: &str| {
        points
            .iter()
            .find(|x| x.period == p && !x.is_forecast)
            .unwrap()
            .level
            .unwrap()
    };
    assert_eq!(
        ix["from_level"].as_f64().unwrap(),
        level(ix["from_period"].as_str().unwrap())
    );
    let expect = (sold.last_sale_price.unwrap() as f64 * f / 100.0).round() as i64 * 100;
    assert_eq!(r.json["anchored_value"], expect);
    assert_eq!(balance(w.db(), acct).await, 8);

    // No sale: not_available with the reason, free.
    let unsold = rows.iter().find(|r| r.last_sale_price.is_none()).unwrap();
    let r = send(
        &svc,
        get(
            &format!("/v1/valuation/{}/transaction-anchor", unsold.uprn),
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        (
            r.json["status"].as_str(),
            r.json["credits_charged"].as_i64()
        ),
        (Some("not_available"), Some(0))
    );
    assert!(
        r.json["reason"]
            .as_str()
            .unwrap()
            .contains("no registered sale")
    );

    // Only a category B sale: not_available, saying so.
    let now = chrono::Utc::now().naive_utc();
    terrace_store::sales::replace_price_paid(
        w.db(),
        vec![terrace_store::sales::PricePaidRow {
            transaction_id: "{B-ONLY}".into(),
            price: 150_000,
            date: NaiveDate::from_ymd_opt(2024, 3, 1).unwrap(),
            postcode: None,
            property_type: "F".into(),
            new_build: false,
            tenure: "L".into(),
            paon: None,
            saon: None,
            street: None,
            locality: None,
            town: None,
            district: None,
            county: None,
            ppd_category: "B".into(),
            uprn: Some(unsold.uprn),
            match_method: None,
            match_score: None,
            source: "test".into(),
            updated_at: now,
        }],
    )
    .await
    .unwrap();
    let r = send(
        &svc,
        get(
            &format!("/v1/valuation/{}/transaction-anchor", unsold.uprn),
            &key,
        ),
    )
    .await;
    assert_eq!(r.json["status"], "not_available");
    assert!(r.json["reason"].as_str().unwrap().contains("category B"));
    assert_eq!(r.json["credits_charged"], 0);
    assert_eq!(balance(w.db(), acct).await, 8);

    // The path's UPRN is validated.
    check_422(
        &send(&svc, get("/v1/valuation/0/transaction-anchor", &key)).await,
        &["path", "uprn"],
        "greater_than_equal",
    );
}

#[actix_web::test]
async fn accuracy_is_no_rows_yet_until_a_backtest_writes_rows() {
    let w = fixture_world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/valuation/accuracy", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["status"], "no_rows_yet");
    assert_eq!(r.json["rows"], json!([]));
    assert!(r.json["definitions"].as_array().unwrap().len() >= 4);
    assert_eq!(r.json["credits_charged"], 0);

    let report = terrace_valuation::backtest::backtest(
        w.db(),
        3,
        chrono::Utc::now().naive_utc(),
        &mut |_| {},
    )
    .await
    .unwrap();
    assert!(report.rows_written > 0 && report.valued > 0, "{report:?}");
    // The fixture world's table (`--nocapture` shows it; METHODS quotes it).
    eprintln!("{}", report.table);
    let r = send(
        &svc,
        get("/v1/valuation/accuracy?asset_class=Residential", &key),
    )
    .await;
    assert_eq!(r.json["status"], "ok", "{}", r.json);
    let rows = r.json["rows"].as_array().unwrap();
    for e in ["model", "index_anchored_last_sale", "district_median"] {
        assert!(rows.iter().any(|x| x["estimator"] == e), "{e}");
    }
    assert!(rows.iter().all(|x| x["basis"] == "replayed_vintage"));
    let last = rows
        .iter()
        .map(|x| x["month"].as_str().unwrap())
        .max()
        .unwrap();
    let r = send(
        &svc,
        get(&format!("/v1/valuation/accuracy?since={last}"), &key),
    )
    .await;
    assert!(
        r.json["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["month"] == last)
    );
    let r = send(
        &svc,
        get("/v1/valuation/accuracy?asset_class=Commercial", &key),
    )
    .await;
    assert_eq!(r.json["status"], "no_rows_yet");
    let r = send(
        &svc,
        get("/v1/valuation/accuracy?model_version=gbm-h3-v4", &key),
    )
    .await;
    assert_eq!(r.json["status"], "no_rows_yet");

    // Validation.
    check_422(
        &send(&svc, get("/v1/valuation/accuracy?since=2024-13", &key)).await,
        &["query", "since"],
        "value_error",
    );
    check_422(
        &send(&svc, get("/v1/valuation/accuracy?since=2024", &key)).await,
        &["query", "since"],
        "string_too_short",
    );
    check_422(
        &send(&svc, get("/v1/valuation/accuracy?asset_class=Land", &key)).await,
        &["query", "asset_class"],
        "literal_error",
    );
    assert_eq!(balance(w.db(), acct).await, 10);
}

#[actix_web::test]
async fn validation_and_payment_rules() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let path = "/v1/valuation/estimate";
    check_422(
        &send(&svc, post_json(path, &key, &json!({}))).await,
        &["body", "uprn"],
        "missing",
    );
    check_422(
        &send(&svc, post_json(path, &key, &json!({"uprn": 0}))).await,
        &["body"],
        "type_error",
    );
    check_422(
        &send(&svc, post_json(path, &key, &json!({"uprn": 1, "upnr": 2}))).await,
        &["body", "upnr"],
        "extra_forbidden",
    );
    // Nothing is valued in a world without sales: 404, free.
    let r = send(
        &svc,
        post_json(path, &key, &json!({"uprn": 990000000001_i64})),
    )
    .await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (404, Some(0))
    );
    let eq = "/v1/equity/estimate";
    let r = send(&svc, post_json(eq, &key, &json!({"uprns": []}))).await;
    assert_eq!(
        (r.status, r.json["detail"][0]["type"].as_str()),
        (422, Some("too_short"))
    );
    let many: Vec<i64> = (1..=101).collect();
    let r = send(&svc, post_json(eq, &key, &json!({"uprns": many}))).await;
    assert_eq!(
        (r.status, r.json["detail"][0]["type"].as_str()),
        (422, Some("too_long"))
    );
    assert_eq!(balance(w.db(), acct).await, 10);
    // An account that cannot afford an estimate gets 402 before any work.
    let (_, poor) = account(w.db(), 4).await;
    let r = send(
        &svc,
        post_json(path, &poor, &json!({"uprn": 990000000001_i64})),
    )
    .await;
    assert_eq!(r.status, 402, "{}", r.json);
    assert_eq!(r.json["credits_required"], 5);
}
