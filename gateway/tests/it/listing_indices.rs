//! The asking-price index (free) and the rent index (1 credit, free when not available) served
//! from the indices `cargo xtask build` stores: `not_available` without a feed, points with n,
//! `shrunk` and the band, a rent month withheld when the PIPR cannot check it, a 404 naming the
//! nearest areas for an area without a series or a code of another form, and every 422.

use crate::listings_market::check_422;
use crate::support::*;
use terrace_ingest::Dataset;

/// Three sale listings (XT1 1AA) and three lettings (XT1 1AB) first listed in each month from
/// 2021-12 to 2022-05, prices rising 1% a month, as Real Time Data Feed requests.
fn feed() -> String {
    let mut out = String::new();
    for k in 0..6u32 {
        let (y, m) = if k == 0 { (2021, 12) } else { (2022, k) };
        for i in 0..3u32 {
            for (channel, branch, pc2, price) in [(1, 1101, "1AA", 250_000.0), (2, 2201, "1AB", 900.0)] {
                let p = (price * 1.01f64.powi(k as i32) * (1.0 + 0.02 * f64::from(i))).round();
                out.push_str(&format!(
                    r#"{{"received_at": "{y}-{m:02}-{:02}T09:00:00Z", "method": "sendpropertydetails", "network": {{"network_id": 71}}, "branch": {{"branch_id": {branch}, "channel": {channel}}}, "property": {{"agent_ref": "{branch}_{k}_{i}", "property_type": 3, "status": 1, "address": {{"house_name_number": "{}", "address_2": "High Street", "town": "Exampleton", "postcode_1": "XT1", "postcode_2": "{pc2}"}}, "price_information": {{"price": {p}}}, "details": {{"bedrooms": 3}}}}}}"#,
                    3 + i,
                    10 * k + i + 1
                ));
                out.push('\n');
            }
        }
    }
    out
}

#[actix_web::test]
async fn without_a_feed_both_are_not_available_and_free() {
    let w = world().await;
    let (acct, key) = account(w.db(), 5).await;
    let svc = service(w.state.clone()).await;
    for path in ["/v1/market/asking-index", "/v1/market/rent-index?area_type=district&area_code=XT1"] {
        let r = send(&svc, get(path, &key)).await;
        assert_eq!(r.status, 200, "{path}: {}", r.json);
        assert_eq!(r.json["status"], "not_available", "{}", r.json);
        assert!(r.json["reason"].as_str().unwrap().starts_with("no_listings_feed"));
        assert!(r.json["points"].is_null(), "no empty series");
        assert_eq!(r.json["credits_charged"], 0);
    }
    assert_eq!(balance(w.db(), acct).await, 5);
}

#[actix_web::test]
async fn built_indices_are_served_charged_and_checked() {
    let w = world().await;
    let r = load_text(w.db(), Dataset::ListingsRtdf, &feed()).await;
    assert_eq!(r.counts.rejected, 0);
    terrace_listings::indices::build(w.db(), chrono::Utc::now().naive_utc())
        .await
        .unwrap();
    let (acct, key) = account(w.db(), 5).await;
    let svc = service(w.state.clone()).await;

    let r = send(&svc, get("/v1/market/asking-index?area_type=district&area_code=xt1", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let d = &r.json;
    assert_eq!((d["status"].as_str(), d["area_code"].as_str()), (Some("ok"), Some("XT1")));
    assert_eq!(d["base_period"], "2022-01");
    let pts = d["points"].as_array().unwrap();
    assert_eq!(pts.len(), 6);
    assert_eq!(pts[1]["period"], "2022-01");
    assert!((pts[1]["level"].as_f64().unwrap() - 100.0).abs() < 0.01);
    assert!(pts.iter().all(|p| p["n"] == 3 && p["shrunk"] == true && p["status"] == "published"));
    assert!(pts.iter().all(|p| p["lo"].as_f64() <= p["level"].as_f64()));
    assert_eq!(r.json["credits_charged"], 0);

    // The rent index costs 1 credit; with no PIPR loaded no month can be checked: all withheld.
    let r = send(&svc, get("/v1/market/rent-index?area_type=national&start=2022-02&limit=2", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let pts = r.json["points"].as_array().unwrap();
    let periods: Vec<&str> = pts.iter().map(|p| p["period"].as_str().unwrap()).collect();
    assert_eq!(periods, vec!["2022-04", "2022-05"]);
    assert!(pts.iter().all(|p| p["status"] == "withheld" && p["level"].is_number()));
    assert_eq!(r.json["withheld_margin_points"], 5.0);
    assert_eq!(r.json["credits_charged"], 1);
    assert_eq!(balance(w.db(), acct).await, 4);

    // 404s, uncharged: an area without a series names the nearest; a code of another form
    // than its area_type's, or none where one is needed, names none.
    for (path, says) in [
        ("/v1/market/rent-index?area_type=district&area_code=XT2", "district:XT1"),
        ("/v1/market/asking-index?area_type=area&area_code=XU", "area:XT"),
        ("/v1/market/asking-index?area_type=district&area_code=E06000046", "outward code"),
        ("/v1/market/asking-index?area_type=lad&area_code=XT1", "GSS code"),
        ("/v1/market/asking-index?area_type=lad", "give area_code"),
        ("/v1/market/rent-index?area_code=XT1", "takes no area_code"),
    ] {
        let r = send(&svc, get(path, &key)).await;
        assert_eq!(r.status, 404, "{path}: {}", r.json);
        assert!(r.json.to_string().contains(says), "{path}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
    }
    assert_eq!(balance(w.db(), acct).await, 4);

    // Every validation rule is a 422, uncharged.
    let q = |s: &str| format!("/v1/market/rent-index?{s}");
    for (path, loc, kind) in [
        (q("area_type=district&area_code=%20"), vec!["query", "area_code"], "value_error"),
        (q("area_type=district&area_code=XXXXXXXXXXXXXXXXXXXXX"), vec!["query", "area_code"], "string_too_long"),
        (q("start=2022-13"), vec!["query", "start"], "value_error"),
        (q("end=01/2022"), vec!["query", "end"], "value_error"),
        (q("start=2022-05&end=2022-02"), vec!["query", "start"], "value_error"),
        (q("limit=0"), vec!["query", "limit"], "greater_than_equal"),
        (q("limit=601"), vec!["query", "limit"], "less_than_equal"),
        (q("area_type=county"), vec!["query", "area_type"], "value_error"),
    ] {
        let r = send(&svc, get(&path, &key)).await;
        check_422(&r, &loc, kind);
    }
    assert_eq!(balance(w.db(), acct).await, 4);
}
