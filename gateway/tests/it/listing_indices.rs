//! The asking-price index (free) and the rent index (1 credit, free when not available) served
//! from the indices `cargo xtask build` stores: `not_available` without a feed, points with n,
//! `shrunk` and the band, a rent month withheld when the PIPR cannot check it, a 404 naming the
//! nearest areas for an area without a series or a code of another form, and every 422.

use crate::support::*;
use terrace_ingest::Dataset;

/// Three sale listings (XT1 1AA) and three lettings (XT1 1AB) first listed in each month from
/// 2021-12 to 2022-05, prices rising 1% a month, as Real Time Data Feed requests.
fn feed() -> String {
    let mut out = String::new();
    for k in 0..6u32 {
        let (y, m) = if k == 0 { (2021, 12) } else { (2022, k) };
        for i in 0..3u32 {
            for (channel, branch, pc2, price) in
                [(1, 1101, "1AA", 250_000.0), (2, 2201, "1AB", 900.0)]
            {
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
    for path in [
        "/v1/market/asking-index",
        "/v1/market/rent-index?area_type=district&area_code=XT1",
    ] {
        let r = send(&svc, get(path, &key)).await;
        assert_eq!(r.status, 200, "{path}: {}", r.json);
        assert_eq!(r.json["status"], "not_available", "{}", r.json);
        assert!(
            r.json["reason"]
                .as_str()
                .unwrap()
                .starts_with("no_listings_feed")
        );
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

    let r = send(
        &svc,
        get(
            "/v1/market/asking-index?area_type=district&area_code=xt1",
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let d = &r.json;
    assert_eq!(
        (d["status"].as_str(), d["area_code"].as_str()),
        (Some("ok"), Some("XT1"))
    );
    assert_eq!(d["base_period"], "2022-01");
    let pts = d["points"].as_array().unwrap();
    assert_eq!(pts.len(), 6);
    assert_eq!(pts[1]["period"], "2022-01");
    assert!((pts[1]["level"].as_f64().unwrap() - 100.0).abs() < 0.01);
    assert!(
        pts.iter()
            .all(|p| p["n"] == 3 && p["shrunk"] == true && p["status"] == "published")
    );
    assert!(pts.iter().all(|p| p["lo"].as_f64() <= p["level"].as_f64()));
    assert_eq!(r.json["credits_charged"], 0);

    // The rent index costs 1 credit; with no PIPR loaded no month can be checked: all withheld.
    let r = send(
        &svc,
        get(
            "/v1/market/rent-index?area_type=national&start=2022-02&limit=2",
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let pts = r.json["points"].as_array().unwrap();
    let periods: Vec<&str> = pts.iter().map(|p| p["period"].as_str().unwrap()).collect();
    assert_eq!(periods, vec!["2022-04", "2022-05"]);
    assert!(
        pts.iter()
            .all(|p| p["status"] == "withheld" && p["level"].is_number())
    );
    assert_eq!(r.json["withheld_margin_points"], 5.0);
    assert_eq!(r.json["credits_charged"], 1);
    assert_eq!(balance(w.db(), acct).await, 4);

    // 404s, uncharged: an area without a series names the nearest; a code of another form
    // than its area_type's, or none where one is needed, names none.
    for (path, says) in [
        (
            "/v1/market/rent-index?area_type=district&area_code=XT2",
            "district:XT1",
        ),
        (
            "/v1/market/asking-index?area_type=area&area_code=XU",
            "area:XT",
        ),
        (
            "/v1/market/asking-index?area_type=district&area_code=E06000046",
            "outward code",
        ),
        (
            "/v1/market/asking-index?area_type=lad&area_code=XT1",
            "GSS code",
        ),
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
        (
            q("area_type=district&area_code=%20"),
            vec!["query", "area_code"],
            "value_error",
        ),
        (
            q("area_type=district&area_code=XXXXXXXXXXXXXXXXXXXXX"),
            vec!["query", "area_code"],
            "string_too_long",
        ),
        (q("start=2022-13"), vec!["query", "start"], "value_error"),
        (q("end=01/2022"), vec!["query", "end"], "value_error"),
        (
            q("start=2022-05&end=2022-02"),
            vec!["query", "start"],
            "value_error",
        ),
        (q("limit=0"), vec!["query", "limit"], "greater_than_equal"),
        (q("limit=601"), vec!["query", "limit"], "less_than_equal"),
        (
            q("area_type=county"),
            vec!["query", "area_type"],
            "value_error",
        ),
    ] {
        let r = send(&svc, get(&path, &key)).await;
        check_422(&r, &loc, kind);
    }
    assert_eq!(balance(w.db(), acct).await, 4);
}

/// Four sale listings in XT1 (JSON-lines feed): S-1 listed in January at £300,000 and cut in
/// February; S-2 listed in January, never cut, sold (registered) on 2024-05-01 at £195,000;
/// S-3 listed in January without a UPRN; S-4 listed in February, whose UPRN sold before it was
/// listed (no match). One letting.
const SUPPLY_FEED: &str = r#"{"listing_id":"S-1","channel":"sale","address":"1 High Street","postcode":"XT1 1AA","uprn":990000000101,"price":290000,"bedrooms":3,"agent":"Alpha","first_seen":"2024-01-10T09:00:00Z","snapshots":[{"time":"2024-01-10T09:00:00Z","price":300000,"status":"available"},{"time":"2024-02-15T09:00:00Z","price":290000,"status":"available"}]}
{"listing_id":"S-2","channel":"sale","address":"2 High Street","postcode":"XT1 1AA","uprn":990000000102,"price":200000,"bedrooms":2,"agent":"Alpha","first_seen":"2024-01-20T09:00:00Z","snapshots":[{"time":"2024-01-20T09:00:00Z","price":200000,"status":"available"},{"time":"2024-03-01T09:00:00Z","price":200000,"status":"sold_stc"}]}
{"listing_id":"S-3","channel":"sale","address":"3 High Street","postcode":"XT1 1AA","price":250000,"bedrooms":3,"agent":"Beta","first_seen":"2024-01-25T09:00:00Z","snapshots":[{"time":"2024-01-25T09:00:00Z","price":250000,"status":"available"}]}
{"listing_id":"S-4","channel":"sale","address":"4 High Street","postcode":"XT1 1AA","uprn":990000000104,"price":400000,"bedrooms":4,"agent":"Gamma","first_seen":"2024-02-03T09:00:00Z","snapshots":[{"time":"2024-02-03T09:00:00Z","price":400000,"status":"available"}]}
{"listing_id":"R-1","channel":"rent","address":"Flat 1, 5 High Street","postcode":"XT1 1AB","price":950,"bedrooms":1,"agent":"Beta","first_seen":"2024-01-05T09:00:00Z","snapshots":[{"time":"2024-01-05T09:00:00Z","price":950,"status":"available"}]}
"#;

fn registered(
    id: &str,
    uprn: i64,
    date: (i32, u32, u32),
    price: i64,
) -> terrace_store::sales::PricePaidRow {
    let day = chrono::NaiveDate::from_ymd_opt(date.0, date.1, date.2).unwrap();
    terrace_store::sales::PricePaidRow {
        transaction_id: id.into(),
        price,
        date: day,
        postcode: Some("XT1 1AA".into()),
        property_type: "S".into(),
        new_build: false,
        tenure: "F".into(),
        paon: None,
        saon: None,
        street: None,
        locality: None,
        town: None,
        district: None,
        county: None,
        ppd_category: "A".into(),
        uprn: Some(uprn),
        match_method: None,
        match_score: None,
        source: "test".into(),
        updated_at: day.and_hms_opt(0, 0, 0).unwrap(),
    }
}

#[actix_web::test]
async fn supply_counts_the_never_reduced_cohort_and_the_matched_subset() {
    let w = world().await;
    let (acct, key) = account(w.db(), 7).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/market/listings", &key)).await;
    assert_eq!(
        (r.status, r.json["status"].as_str()),
        (200, Some("not_available")),
        "{}",
        r.json
    );
    assert!(r.json["months"].is_null(), "no empty series");
    assert_eq!(r.json["credits_charged"], 0);

    let l = load_text(w.db(), Dataset::Listings, SUPPLY_FEED).await;
    assert_eq!(l.counts.rejected, 0);
    terrace_store::sales::replace_price_paid(
        w.db(),
        vec![
            registered("{T-2}", 990000000102, (2024, 5, 1), 195_000),
            registered("{T-4}", 990000000104, (2023, 12, 1), 380_000),
        ],
    )
    .await
    .unwrap();
    let r = send(
        &svc,
        get("/v1/market/listings?area_type=district&area_code=XT1", &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 2);
    assert_eq!(balance(w.db(), acct).await, 5);
    let months = r.json["months"].as_array().unwrap();
    assert_eq!(months.len(), 2, "{}", r.json);
    let (jan, feb) = (&months[0], &months[1]);
    assert_eq!(jan["period"], "2024-01");
    assert_eq!(jan["new_listings_n"], 3);
    assert_eq!(
        jan["listings_added_n"], 2,
        "S-1 was cut later: not in the never-reduced cohort"
    );
    assert_eq!(jan["listings_reduced_n"], 0);
    assert_eq!(jan["reduction_share"], 0.3333);
    assert_eq!(jan["price_median"], 250_000);
    assert_eq!(
        jan["sold_matched_n"], 1,
        "only S-2 sold after it was listed"
    );
    assert_eq!(jan["asking_to_sold_ratio"], 0.975);
    assert_eq!(jan["days_to_completion_median"], 102.0);
    assert_eq!(jan["agent_top3_share"], 1.0);
    assert_eq!(feb["new_listings_n"], 1);
    assert_eq!(feb["listings_added_n"], 1);
    assert_eq!(
        feb["listings_reduced_n"], 1,
        "S-1's cut is dated in February"
    );
    assert_eq!(
        feb["sold_matched_n"], 0,
        "a sale before the listing is no match"
    );
    assert!(feb["asking_to_sold_ratio"].is_null());

    let r = send(
        &svc,
        get(
            "/v1/market/listings?channel=rent&start=2024-01&end=2024-01",
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["months"][0]["price_median"], 950);
    assert!(
        r.json["months"][0].get("sold_matched_n").is_none(),
        "sale rows only"
    );

    for path in [
        "/v1/market/listings?area_type=district&area_code=E06000046",
        "/v1/market/listings?area_type=lad",
        "/v1/market/listings?area_code=XT1",
        "/v1/market/listings?area_type=district&area_code=XT9",
    ] {
        let r = send(&svc, get(path, &key)).await;
        assert_eq!(r.status, 404, "{path}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
    }
    let q = |s: &str| format!("/v1/market/listings?{s}");
    for (path, loc, kind) in [
        (
            q("area_type=district&area_code=%20%20"),
            vec!["query", "area_code"],
            "value_error",
        ),
        (
            q("start=2024-02&end=2024-01"),
            vec!["query", "start"],
            "value_error",
        ),
        (q("end=2024-1"), vec!["query", "end"], "value_error"),
        (
            q("channel=auction"),
            vec!["query", "channel"],
            "literal_error",
        ),
        (
            q("bedroom_band=5"),
            vec!["query", "bedroom_band"],
            "literal_error",
        ),
    ] {
        let r = send(&svc, get(&path, &key)).await;
        check_422(&r, &loc, kind);
    }
    assert_eq!(balance(w.db(), acct).await, 3);
}
