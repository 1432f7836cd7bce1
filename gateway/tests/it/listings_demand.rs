//! The last three operations of the listings market (issue 17): supply and demand (3 credits),
//! gross yields (2 credits) and market facts (free), from feeds loaded by the real loaders and
//! registered sales and valuations planted in the store. Every expected figure is worked out by
//! hand from the planted rows in the comments beside it. Also: `not_available` (uncharged)
//! without a feed, 404s naming the nearest area, and every validation rule.

use crate::support::*;
use chrono::NaiveDate;
use serde_json::{Value, json};
use terrace_ingest::{Dataset, Progress};
use terrace_store::sales::PricePaidRow;
use terrace_store::valuation::{ValuationRow, VintageRow};

fn day(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
}

/// A registered sale (Price Paid) planted in the store.
fn sale(
    id: &str,
    postcode: &str,
    date: &str,
    price: i64,
    kind: &str,
    cat: &str,
    uprn: Option<i64>,
) -> PricePaidRow {
    let d = day(date);
    PricePaidRow {
        transaction_id: format!("{{{id}}}"),
        price,
        date: d,
        postcode: Some(postcode.into()),
        property_type: kind.into(),
        new_build: false,
        tenure: "F".into(),
        paon: None,
        saon: None,
        street: None,
        locality: None,
        town: None,
        district: None,
        county: None,
        ppd_category: cat.into(),
        uprn,
        match_method: None,
        match_score: None,
        source: "test".into(),
        updated_at: d.and_hms_opt(0, 0, 0).unwrap(),
    }
}

/// One Real Time Data Feed `sendpropertydetails` request for a listing of branch 71/1101
/// (sale) or 72/2201 (rent) at `house`, High Street, `pc`.
#[allow(clippy::too_many_arguments)]
fn send_rtdf(
    at: &str,
    channel: u8,
    agent_ref: &str,
    status: u8,
    price: i64,
    house: &str,
    pc: &str,
    new_home: Option<bool>,
) -> String {
    let (network, branch) = if channel == 1 { (71, 1101) } else { (72, 2201) };
    let new_home = new_home.map_or(String::new(), |b| format!(r#""new_home": {b}, "#));
    format!(
        r#"{{"received_at": "{at}T09:00:00Z", "method": "sendpropertydetails", "network": {{"network_id": {network}}}, "branch": {{"branch_id": {branch}, "channel": {channel}}}, "property": {{"agent_ref": "{agent_ref}", "property_type": 3, "status": {status}, {new_home}"address": {{"house_name_number": "{house}", "address_2": "High Street", "town": "Exampleton", "postcode_1": "XT1", "postcode_2": "{pc}"}}, "price_information": {{"price": {price}}}, "details": {{"bedrooms": 3}}}}}}"#
    )
}

/// The supply-and-demand feed, XT1, sale listings of branch 71/1101:
/// - A (1 High Street): listed 2026-01-05 at £300,000 (not a new home), cut to £290,000 on
///   2026-02-02, removed (sold by us) on 2026-03-10: live 2026-01-05 to 2026-03-09.
/// - B (2 High Street): listed 2026-01-20 at £250,000, a new home, available throughout.
/// - C (3 High Street): listed 2026-02-10 at £200,000 (new home not stated), under offer from
///   2026-03-01.
/// - D (Flat 1, 10 High Street): listed 2026-03-05 at £150,000, a new home, cut to £145,000 on
///   2026-04-06, the feed's latest sighting.
///
/// And one letting R (Flat 2, 10 High Street), 2026-01-12 at £900 a month.
fn demand_feed() -> String {
    [
        send_rtdf("2026-01-05", 1, "1101_A", 1, 300_000, "1", "1AA", Some(false)),
        send_rtdf("2026-01-12", 2, "2201_R", 1, 900, "Flat 2, 10", "1AB", None),
        send_rtdf("2026-01-20", 1, "1101_B", 1, 250_000, "2", "1AA", Some(true)),
        send_rtdf("2026-02-02", 1, "1101_A", 1, 290_000, "1", "1AA", Some(false)),
        send_rtdf("2026-02-10", 1, "1101_C", 1, 200_000, "3", "1AA", None),
        send_rtdf("2026-03-01", 1, "1101_C", 4, 200_000, "3", "1AA", None),
        send_rtdf("2026-03-05", 1, "1101_D", 1, 150_000, "Flat 1, 10", "1AB", Some(true)),
        r#"{"received_at": "2026-03-10T09:00:00Z", "method": "removeproperty", "network": {"network_id": 71}, "branch": {"branch_id": 1101, "channel": 1}, "property": {"agent_ref": "1101_A", "removal_reason": 7}}"#.to_string(),
        send_rtdf("2026-04-06", 1, "1101_D", 1, 145_000, "Flat 1, 10", "1AB", Some(true)),
    ]
    .join("\n")
        + "\n"
}

#[actix_web::test]
async fn without_a_feed_the_three_are_not_available_and_free() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let mut replies = Vec::new();
    for path in [
        "/v1/market/supply-demand?area_type=district&area_code=XT1",
        "/v1/market/supply-demand",
        "/v1/market/yields?area_type=district&area_code=XT1&bedroom_band=2",
    ] {
        replies.push((path, send(&svc, get(path, &key)).await));
    }
    replies.push((
        "facts",
        send(
            &svc,
            post_json("/v1/market/facts", &key, &json!({"postcode": "XT1 1AA"})),
        )
        .await,
    ));
    for (path, r) in &replies {
        assert_eq!(r.status, 200, "{path}: {}", r.json);
        assert_eq!(r.json["status"], "not_available", "{path}");
        assert!(
            r.json["reason"]
                .as_str()
                .unwrap()
                .starts_with("no_listings_feed"),
            "{path}: {}",
            r.json
        );
        assert_eq!(r.json["credits_charged"], 0, "{path}");
        for field in ["months", "stock", "metrics", "metrics_with_no_data"] {
            assert!(r.json.get(field).is_none(), "{path}: no empty {field}");
        }
    }
    assert_eq!(replies[3].1.json["geography"], "district:XT1");
    assert_eq!(balance(w.db(), acct).await, 10);
}

#[actix_web::test]
async fn supply_demand_reads_live_stock_the_flow_and_months_of_inventory() {
    let w = world().await;
    let r = load_text(w.db(), Dataset::ListingsRtdf, &demand_feed()).await;
    assert_eq!(r.counts.rejected, 0, "{:?}", r.rejections);
    terrace_build::derive::link_listings(w.db(), &mut Progress::quiet())
        .await
        .unwrap();
    // Registered sales: XT1 category A on 2026-01-15 (1) and in February (2); a category B
    // sale in XT1 and a category A sale in XT2 in March, the latest sale loaded.
    terrace_store::sales::replace_price_paid(
        w.db(),
        vec![
            sale("J1", "XT1 1AA", "2026-01-15", 240_000, "S", "A", None),
            sale("F1", "XT1 1AB", "2026-02-03", 180_000, "F", "A", None),
            sale(
                "F2",
                "XT1 2AA",
                "2026-02-20",
                320_000,
                "T",
                "A",
                Some(990000000020),
            ),
            sale("M1", "XT1 1AA", "2026-03-12", 500_000, "S", "B", None),
            sale("M2", "XT2 3BC", "2026-03-25", 210_000, "T", "A", None),
        ],
    )
    .await
    .unwrap();
    let (acct, key) = account(w.db(), 20).await;
    let svc = service(w.state.clone()).await;

    let r = send(
        &svc,
        get(
            "/v1/market/supply-demand?area_type=district&area_code=xt1",
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 3);
    assert_eq!(r.json["credits_remaining"], 17);
    assert_eq!(balance(w.db(), acct).await, 17);
    assert_eq!(
        terrace_store::accounts::ledger_sum(w.db(), acct)
            .await
            .unwrap(),
        17
    );
    let d = &r.json;
    assert_eq!(
        (d["status"].as_str(), d["area"].as_str()),
        (Some("ok"), Some("district:XT1"))
    );
    assert_eq!(d["observed_since"], "2026-01-05");
    assert_eq!(d["sales_known_through"], "2026-03-25");
    // Live on 2026-04-06: B (available, 76 days), C (under offer, 55 days), D (available, 32
    // days); A was removed on 2026-03-10. New homes: B and D; C does not say.
    assert_eq!(
        d["stock"],
        json!({"as_of": "2026-04-06", "live_n": 3, "available_n": 2, "median_days_on_market": 55.0, "new_homes_n": 2, "new_home_unknown_n": 1})
    );
    let months = d["months"].as_array().unwrap();
    let periods: Vec<&str> = months
        .iter()
        .map(|m| m["period"].as_str().unwrap())
        .collect();
    assert_eq!(periods, ["2026-01", "2026-02", "2026-03", "2026-04"]);
    let row = |i: usize, f: &str| months[i][f].clone();
    // The flow of /v1/market/listings: January's cohort A and B, A cut in February.
    assert_eq!(
        (row(0, "new_listings_n"), row(0, "listings_added_n")),
        (json!(2), json!(1))
    );
    assert_eq!(row(1, "listings_reduced_n"), 1);
    assert_eq!(row(3, "listings_reduced_n"), 1, "D's cut on 2026-04-06");
    // Stock at each month's end: Jan 31 A, B; Feb 28 A, B, C; Mar 31 B, C, D; April read on
    // the latest sighting, B, C, D.
    let stock: Vec<Value> = (0..4).map(|i| row(i, "stock_end_n")).collect();
    assert_eq!(stock, [json!(2), json!(3), json!(3), json!(3)]);
    // Sales: 1 in January, 2 in February, none of category A in XT1 in March (the category B
    // sale and the XT2 sale do not count), April after the latest loaded sale: unknown.
    let sold: Vec<Value> = (0..4).map(|i| row(i, "registered_sales_n")).collect();
    assert_eq!(sold, [json!(1), json!(2), json!(0), Value::Null]);
    let moi: Vec<Value> = (0..4).map(|i| row(i, "months_of_inventory")).collect();
    assert_eq!(moi, [json!(2.0), json!(1.5), Value::Null, Value::Null]);
    assert!(d["sales_basis"].as_str().unwrap().contains("Price Paid"));

    // The letting: live since 12 January; no registered lettings, so no months of inventory.
    let r = send(
        &svc,
        get(
            "/v1/market/supply-demand?area_type=district&area_code=XT1&channel=rent",
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["stock"]["live_n"], 1);
    assert_eq!(r.json["stock"]["median_days_on_market"], 84.0);
    assert!(
        r.json["sales_basis"]
            .as_str()
            .unwrap()
            .contains("not lettings")
    );
    assert!(
        r.json["months"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["registered_sales_n"].is_null() && m["months_of_inventory"].is_null())
    );
    // A bedroom band has no registered sales either (Price Paid records no bedrooms).
    let r = send(
        &svc,
        get("/v1/market/supply-demand?area_type=district&area_code=XT1&bedroom_band=3&start=2026-02&end=2026-02", &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(r.json["sales_basis"].as_str().unwrap().contains("bedrooms"));
    assert_eq!(r.json["months"].as_array().unwrap().len(), 1);
    assert_eq!(r.json["months"][0]["registered_sales_n"], Value::Null);
    assert_eq!(r.json["months"][0]["stock_end_n"], 3);
    assert_eq!(balance(w.db(), acct).await, 11);

    // 404s, free: an unknown district names the nearest with listings; codes of another form.
    for (path, says) in [
        (
            "/v1/market/supply-demand?area_type=district&area_code=XT9",
            "nearest: district:XT1",
        ),
        (
            "/v1/market/supply-demand?area_type=district&area_code=E06000046",
            "outward code",
        ),
        ("/v1/market/supply-demand?area_type=lad", "give area_code"),
        (
            "/v1/market/supply-demand?area_code=XT1",
            "national takes no area_code",
        ),
    ] {
        let r = send(&svc, get(path, &key)).await;
        assert_eq!(r.status, 404, "{path}: {}", r.json);
        assert!(r.json.to_string().contains(says), "{path}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
    }
    // 402: an account with 1 credit cannot pay 3; its 422s come first and are free.
    let (poor, key) = account(w.db(), 1).await;
    let r = send(&svc, get("/v1/market/supply-demand", &key)).await;
    assert_eq!(r.status, 402, "{}", r.json);
    assert_eq!(r.json["credits_required"], 3);
    // Every validation rule: 422 before the balance is looked at, free.
    let q = |s: &str| format!("/v1/market/supply-demand?{s}");
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
        (q("start=2026-13"), vec!["query", "start"], "value_error"),
        (q("end=2026/01"), vec!["query", "end"], "value_error"),
        (
            q("start=2026-03&end=2026-01"),
            vec!["query", "start"],
            "value_error",
        ),
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
        (
            q("area_type=county"),
            vec!["query", "area_type"],
            "value_error",
        ),
    ] {
        let r = send(&svc, get(&path, &key)).await;
        check_422(&r, &loc, kind);
    }
    assert_eq!(balance(w.db(), acct).await, 11);
    assert_eq!(balance(w.db(), poor).await, 1);
}

/// A JSON-lines listing: `uprn` given by the feed.
#[allow(clippy::too_many_arguments)]
fn jsonl(
    id: &str,
    channel: &str,
    uprn: Option<i64>,
    beds: i32,
    kind: &str,
    first: &str,
    price: i64,
    later: &[(&str, i64, &str)],
) -> String {
    let mut snaps =
        vec![json!({"time": format!("{first}T09:00:00Z"), "price": price, "status": "available"})];
    for (t, p, s) in later {
        snaps.push(json!({"time": format!("{t}T09:00:00Z"), "price": p, "status": s}));
    }
    json!({
        "listing_id": id, "channel": channel, "address": format!("{id} High Street"),
        "postcode": "XT1 1AA", "uprn": uprn, "price": price, "bedrooms": beds,
        "property_type": kind, "agent": "Alpha", "first_seen": format!("{first}T09:00:00Z"),
        "snapshots": snaps,
    })
    .to_string()
}

const U: i64 = 990000000500;

/// January 2024 in XT1: rent listings R1-R5 (2 bedrooms, flats, UPRNs U+1..U+5) at £1,000 to
/// £1,400 a month and R6 (3 bedrooms, U+6) at £2,000; sale listings S1-S5 (2 bedrooms,
/// semi-detached) at £200,000 to £280,000, S1 sold STC after 30 days and S2 under offer after 10.
/// February: four rent listings and six sale listings (thin for rent). March: nothing.
fn yields_feed() -> String {
    let mut lines = Vec::new();
    for i in 1..=5i64 {
        lines.push(jsonl(
            &format!("R{i}"),
            "rent",
            Some(U + i),
            2,
            "Flat",
            "2024-01-10",
            900 + 100 * i,
            &[],
        ));
        let later: &[(&str, i64, &str)] = match i {
            1 => &[("2024-02-09", 200_000, "sold_stc")],
            2 => &[("2024-01-22", 220_000, "under_offer")],
            _ => &[],
        };
        let first = if i == 2 { "2024-01-12" } else { "2024-01-10" };
        lines.push(jsonl(
            &format!("S{i}"),
            "sale",
            Some(U + 10 + i),
            2,
            "Semi-detached house",
            first,
            180_000 + 20_000 * i,
            later,
        ));
    }
    lines.push(jsonl(
        "R6",
        "rent",
        Some(U + 6),
        3,
        "Flat",
        "2024-01-15",
        2_000,
        &[],
    ));
    for i in 1..=4i64 {
        lines.push(jsonl(
            &format!("FR{i}"),
            "rent",
            None,
            2,
            "Flat",
            "2024-02-10",
            1_000,
            &[],
        ));
    }
    for i in 1..=6i64 {
        lines.push(jsonl(
            &format!("FS{i}"),
            "sale",
            None,
            2,
            "Flat",
            "2024-02-10",
            300_000,
            &[],
        ));
    }
    lines.join("\n") + "\n"
}

fn valued(uprn: i64, value: f64) -> ValuationRow {
    ValuationRow {
        uprn,
        model_version: "test-1".into(),
        as_of: "2024-01".into(),
        district: Some("XT1".into()),
        property_type: Some("F".into()),
        tenure: None,
        floor_area: None,
        floor_area_source: None,
        value: Some(value),
        lo: None,
        hi: None,
        coverage: None,
        evidence_class: None,
        weight_anchor: None,
        weight_comparables: None,
        weight_hedonic: None,
        estimate_anchor: None,
        estimate_comparables: None,
        estimate_hedonic: None,
        n_comparables: None,
        n_comparables_fenced: None,
        n_hedonic: None,
        hedonic_pooled: None,
        last_sale_price: None,
        last_sale_date: None,
        refusal: None,
        source: "test".into(),
        updated_at: day("2024-02-01").and_hms_opt(0, 0, 0).unwrap(),
    }
}

async fn plant_vintage(db: &terrace_store::Db) {
    // 12 x rent / value: R1 12,000/240,000 = 0.05; R2 13,200/264,000 = 0.05; R3 14,400/240,000
    // = 0.06; R4 15,600/260,000 = 0.06; R5 16,800/300,000 = 0.056; R6 24,000/200,000 = 0.12.
    let rows = vec![
        valued(U + 1, 240_000.0),
        valued(U + 2, 264_000.0),
        valued(U + 3, 240_000.0),
        valued(U + 4, 260_000.0),
        valued(U + 5, 300_000.0),
        valued(U + 6, 200_000.0),
    ];
    let vintage = VintageRow {
        vintage_key: "test-1|2024-01".into(),
        model_version: "test-1".into(),
        as_of: "2024-01".into(),
        n_valued: 6,
        n_refused: 0,
        n_calibration: 0,
        calibration_coverage: None,
        calibration_json: "{}".into(),
        built_at: day("2024-02-01").and_hms_opt(0, 0, 0).unwrap(),
        source: "test".into(),
        updated_at: day("2024-02-01").and_hms_opt(0, 0, 0).unwrap(),
    };
    terrace_store::valuation::replace_vintage(db, rows, vec![], vintage)
        .await
        .unwrap();
}

#[actix_web::test]
async fn yields_on_both_bases_with_the_thin_months_null() {
    let w = world().await;
    let r = load_text(w.db(), Dataset::Listings, &yields_feed()).await;
    assert_eq!(r.counts.rejected, 0, "{:?}", r.rejections);
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;

    // Before any valuation vintage: the valuation basis is null with the reason.
    let r = send(
        &svc,
        get("/v1/market/yields?area_type=district&area_code=XT1", &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 2);
    assert_eq!(r.json["min_listings"], 5);
    assert_eq!(r.json["valuation_vintage"], Value::Null);
    assert!(
        r.json["avm_reason"]
            .as_str()
            .unwrap()
            .contains("no valuation vintage")
    );
    let jan = &r.json["months"][0];
    assert_eq!(jan["period"], "2024-01");
    // Six rents (1,000..1,400 and 2,000): median 1,250; five prices: median 240,000;
    // 12 x 1,250 / 240,000 = 0.0625.
    assert_eq!(
        (jan["rent_n"].as_i64(), jan["rent_median_pcm"].as_i64()),
        (Some(6), Some(1_250))
    );
    assert_eq!(
        (jan["sale_n"].as_i64(), jan["sale_median"].as_i64()),
        (Some(5), Some(240_000))
    );
    assert_eq!(jan["gross_yield_asking"], 0.0625);
    assert_eq!(jan["gross_yield_avm_median"], Value::Null);
    assert_eq!(jan["gross_yield_avm_n"], Value::Null);
    // February: four rents, too thin.
    let feb = &r.json["months"][1];
    assert_eq!(
        (feb["rent_n"].as_i64(), feb["sale_n"].as_i64()),
        (Some(4), Some(6))
    );
    assert_eq!(feb["gross_yield_asking"], Value::Null);
    assert_eq!(r.json["months"].as_array().unwrap().len(), 2);

    plant_vintage(w.db()).await;
    let r = send(
        &svc,
        get("/v1/market/yields?area_type=district&area_code=XT1", &key),
    )
    .await;
    assert_eq!(r.json["valuation_vintage"], "test-1|2024-01");
    assert!(r.json.get("avm_reason").is_none());
    let jan = &r.json["months"][0];
    // The six valued rents: 0.05, 0.05, 0.056, 0.06, 0.06, 0.12: median (0.056 + 0.06) / 2.
    assert_eq!(jan["gross_yield_avm_n"], 6);
    assert_eq!(jan["gross_yield_avm_median"], 0.058);
    // February's rent listings have no UPRN: none valued, so null.
    assert_eq!(r.json["months"][1]["gross_yield_avm_n"], 0);
    assert_eq!(r.json["months"][1]["gross_yield_avm_median"], Value::Null);

    // Two bedrooms: R1-R5 (median 1,200) and S1-S5: 12 x 1,200 / 240,000 = 0.06; valued
    // 0.05, 0.05, 0.056, 0.06, 0.06: median 0.056.
    let r = send(
        &svc,
        get(
            "/v1/market/yields?area_type=district&area_code=XT1&bedroom_band=2&end=2024-01",
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let months = r.json["months"].as_array().unwrap();
    assert_eq!(months.len(), 1);
    assert_eq!(months[0]["gross_yield_asking"], 0.06);
    assert_eq!(months[0]["gross_yield_avm_median"], 0.056);
    assert_eq!(months[0]["gross_yield_avm_n"], 5);
    // Three bedrooms: one rent listing, no sale: both null, never 0.
    let r = send(&svc, get("/v1/market/yields?bedroom_band=3", &key)).await;
    let m = &r.json["months"][0];
    assert_eq!(
        (m["rent_n"].as_i64(), m["sale_n"].as_i64()),
        (Some(1), Some(0))
    );
    assert_eq!(
        (
            m["gross_yield_asking"].clone(),
            m["gross_yield_avm_median"].clone()
        ),
        (Value::Null, Value::Null)
    );
    // `months` keeps the latest.
    let r = send(&svc, get("/v1/market/yields?months=1", &key)).await;
    let periods: Vec<&str> = r.json["months"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["period"].as_str().unwrap())
        .collect();
    assert_eq!(periods, ["2024-02"]);
    assert_eq!(balance(w.db(), acct).await, 0);
    assert_eq!(
        terrace_store::accounts::ledger_sum(w.db(), acct)
            .await
            .unwrap(),
        0
    );

    let (_, key) = account(w.db(), 10).await;
    let r = send(
        &svc,
        get("/v1/market/yields?area_type=district&area_code=XT7", &key),
    )
    .await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert!(
        r.json.to_string().contains("nearest: district:XT1"),
        "{}",
        r.json
    );
    let q = |s: &str| format!("/v1/market/yields?{s}");
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
        (q("start=24-01"), vec!["query", "start"], "value_error"),
        (q("months=0"), vec!["query", "months"], "greater_than_equal"),
        (q("months=121"), vec!["query", "months"], "less_than_equal"),
        (q("months=two"), vec!["query", "months"], "int_parsing"),
        (
            q("bedroom_band=six"),
            vec!["query", "bedroom_band"],
            "literal_error",
        ),
        (
            q("area_type=sector"),
            vec!["query", "area_type"],
            "value_error",
        ),
    ] {
        let r = send(&svc, get(&path, &key)).await;
        check_422(&r, &loc, kind);
    }
}

fn metric<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == name)
        .unwrap_or_else(|| panic!("no {name}: {r}"))
}

#[actix_web::test]
async fn facts_give_each_metric_its_basis_and_n_and_name_the_missing() {
    let w = world().await;
    let r = load_text(w.db(), Dataset::Listings, &yields_feed()).await;
    assert_eq!(r.counts.rejected, 0);
    // January 2024 in XT1: three category A sales matched to a UPRN (U+1, a 2-bedroom listing's,
    // at £100,000; U+6, a 3-bedroom flat's, at £300,000 (type F); U+99, never listed, at
    // £200,000), one not matched (£999,000) and one category B. February: one in XT2.
    terrace_store::sales::replace_price_paid(
        w.db(),
        vec![
            sale(
                "A1",
                "XT1 1AA",
                "2024-01-05",
                100_000,
                "S",
                "A",
                Some(U + 1),
            ),
            sale(
                "A2",
                "XT1 1AA",
                "2024-01-06",
                300_000,
                "F",
                "A",
                Some(U + 6),
            ),
            sale(
                "A3",
                "XT1 1AB",
                "2024-01-07",
                200_000,
                "S",
                "A",
                Some(U + 99),
            ),
            sale("A4", "XT1 2AA", "2024-01-08", 999_000, "S", "A", None),
            sale("B1", "XT1 1AA", "2024-01-09", 50_000, "S", "B", Some(U + 2)),
            sale(
                "X1",
                "XT2 3BC",
                "2024-02-01",
                400_000,
                "S",
                "A",
                Some(U + 3),
            ),
        ],
    )
    .await
    .unwrap();
    let (acct, key) = account(w.db(), 5).await;
    let svc = service(w.state.clone()).await;
    let facts = |body: Value| post_json("/v1/market/facts", &key, &body);

    let r = send(
        &svc,
        facts(json!({"postcode": "xt1 1aa", "start": "2024-01", "end": "2024-01"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let d = &r.json;
    assert_eq!(d["credits_charged"], 0);
    assert_eq!(
        (d["status"].as_str(), d["geography"].as_str()),
        (Some("ok"), Some("district:XT1"))
    );
    assert_eq!(d["period"], json!({"start": "2024-01", "end": "2024-01"}));
    let m = |name: &str| {
        let x = metric(d, name);
        (
            x["value"].as_f64().unwrap(),
            x["basis"].as_str().unwrap().to_string(),
            x["n"].as_i64().unwrap(),
        )
    };
    assert_eq!(m("price_asking"), (240_000.0, "asking".into(), 5));
    assert_eq!(m("rent_asking"), (1_250.0, "asking".into(), 6));
    assert_eq!(m("gross_yield_asking"), (0.0625, "asking".into(), 5));
    // S1: 2024-01-10 to sold STC 2024-02-09, 30 days; S2: 2024-01-12 to under offer 2024-01-22,
    // 10 days: median 20.
    assert_eq!(m("days_on_market"), (20.0, "asking".into(), 2));
    // Sold: 100,000, 300,000, 200,000 (the UPRN-matched sample): median 200,000, n 3, against
    // 4 category A sales registered.
    assert_eq!(m("price_sold"), (200_000.0, "sold".into(), 3));
    assert_eq!(d["registered_sales_n"], 4);
    assert!(
        d["count_basis"]
            .as_str()
            .unwrap()
            .contains("UPRN-matched sample")
    );
    assert_eq!(d["metrics_with_no_data"], json!([]));

    // Two bedrooms: the sold sample keeps U+1 alone (the only sale whose UPRN's listing has 2
    // bedrooms); the registry's count cannot be given by bedrooms.
    let r = send(&svc, facts(json!({"postcode": "XT1", "bedroom_band": "2", "start": "2024-01", "end": "2024-01-31"}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(metric(&r.json, "price_sold")["value"], 100_000.0);
    assert_eq!(metric(&r.json, "price_sold")["n"], 1);
    assert_eq!(metric(&r.json, "rent_asking")["value"], 1_200.0);
    assert_eq!(r.json["registered_sales_n"], Value::Null);
    // Flats in January: every rent listing (1,250, n 6) and the one type F sale; no sale
    // listing is a flat, so asking price, yield and days on market have no data, by name.
    let r = send(&svc, facts(json!({"postcode": "XT1", "property_type": "flat", "start": "2024-01", "end": "2024-01"}))).await;
    assert_eq!(metric(&r.json, "rent_asking")["n"], 6);
    assert_eq!(metric(&r.json, "price_sold")["value"], 300_000.0);
    assert_eq!(r.json["registered_sales_n"], 1);
    assert_eq!(
        r.json["metrics_with_no_data"],
        json!(["price_asking", "gross_yield_asking", "days_on_market"])
    );
    // A period without anything: every metric named, none given as 0.
    let r = send(
        &svc,
        facts(json!({"postcode": "XT1", "start": "2023-01", "end": "2023-06"})),
    )
    .await;
    assert_eq!(r.json["metrics"], json!([]));
    assert_eq!(r.json["metrics_with_no_data"].as_array().unwrap().len(), 5);
    assert_eq!(r.json["registered_sales_n"], 0);
    // The default period: the twelve months to the feed's latest sighting (2024-02).
    let r = send(&svc, facts(json!({"postcode": "XT1"}))).await;
    assert_eq!(
        r.json["period"],
        json!({"start": "2023-03", "end": "2024-02"})
    );
    assert_eq!(metric(&r.json, "price_asking")["n"], 11);

    // 404s, free: a district nothing places (naming the nearest), a local authority name with
    // no names loaded, a GSS code nothing places.
    for (body, says) in [
        (json!({"postcode": "XT8"}), "nearest: district:XT1"),
        (json!({"lad_code": "Tamberley"}), "give its GSS code"),
        (json!({"lad_code": "E06009999"}), "lad:E06009999"),
    ] {
        let r = send(&svc, facts(body.clone())).await;
        assert_eq!(r.status, 404, "{body}: {}", r.json);
        assert!(r.json.to_string().contains(says), "{body}: {}", r.json);
    }
    // Every validation rule.
    let r = send(&svc, test_post_empty(&key)).await;
    check_422(&r, &["body"], "missing");
    for (body, loc, kind) in [
        (json!({}), vec!["body", "postcode"], "missing"),
        (
            json!({"postcode": "XT1", "lad_code": "E06009901"}),
            vec!["body"],
            "value_error",
        ),
        (
            json!({"postcode": "Tamberley"}),
            vec!["body", "postcode"],
            "value_error",
        ),
        (
            json!({"postcode": "XT1 1AAAAAAAAAAAAAAAAAAA"}),
            vec!["body", "postcode"],
            "string_too_long",
        ),
        (
            json!({"lad_code": "  "}),
            vec!["body", "lad_code"],
            "value_error",
        ),
        (
            json!({"lad_code": ""}),
            vec!["body", "lad_code"],
            "string_too_short",
        ),
        (
            json!({"postcode": "XT1", "lsoa": "E01000001"}),
            vec!["body", "lsoa"],
            "extra_forbidden",
        ),
        (
            json!({"postcode": "XT1", "property_type": "bungalow"}),
            vec!["body"],
            "type_error",
        ),
        (
            json!({"postcode": "XT1", "bedroom_band": "9"}),
            vec!["body"],
            "type_error",
        ),
        (
            json!({"postcode": "XT1", "start": "2024-13"}),
            vec!["body", "start"],
            "value_error",
        ),
        (
            json!({"postcode": "XT1", "start": "2024-03", "end": "2024-01"}),
            vec!["body", "start"],
            "value_error",
        ),
        (json!({"postcode": 12}), vec!["body"], "type_error"),
    ] {
        let r = send(&svc, facts(body.clone())).await;
        assert_eq!(r.status, 422, "{body}: {}", r.json);
        check_422(&r, &loc, kind);
    }
    assert_eq!(balance(w.db(), acct).await, 5, "facts are free");
    assert_eq!(
        terrace_store::accounts::ledger_sum(w.db(), acct)
            .await
            .unwrap(),
        5
    );
}

fn test_post_empty(key: &str) -> actix_web::test::TestRequest {
    actix_web::test::TestRequest::post()
        .uri("/v1/market/facts")
        .insert_header(("Authorization", format!("Bearer {key}")))
}

fn fixture_file(path: &str) -> String {
    std::fs::read_to_string(crate::support::fixtures().join(path)).unwrap()
}

/// Category A sales of a postcode district by completion month, read straight from the fixture's
/// Price Paid file (record status A and C add or replace a transaction, D deletes it; rows that
/// are not 16 fields with a whole price and a calendar date are the expected rejections).
fn fixture_sales_by_month(district: &str) -> std::collections::BTreeMap<String, i64> {
    let mut held: std::collections::HashMap<String, (String, String, String)> = Default::default();
    for line in fixture_file("price_paid/pp-fixture.csv").lines() {
        let f: Vec<&str> = line.trim().trim_matches('"').split("\",\"").collect();
        if f.len() != 16 || f[1].parse::<i64>().is_err() {
            continue;
        }
        let Ok(d) = NaiveDate::parse_from_str(f[2].get(..10).unwrap_or(""), "%Y-%m-%d") else {
            continue;
        };
        match f[15] {
            "D" => {
                held.remove(f[0]);
            }
            _ => {
                held.insert(
                    f[0].into(),
                    (d.format("%Y-%m").to_string(), f[3].into(), f[14].into()),
                );
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    for (month, postcode, cat) in held.into_values() {
        if cat == "A" && postcode.split(' ').next() == Some(district) {
            *out.entry(month).or_default() += 1;
        }
    }
    out
}

/// The first month of the report-builder export (loaded too): months from it on are not
/// compared with the main file alone.
fn report_builder_first_month() -> String {
    fixture_file("price_paid/pp-report-builder-fixture.csv")
        .split("\",\"")
        .filter_map(|f| NaiveDate::parse_from_str(f.trim_matches('"'), "%Y-%m-%d").ok())
        .min()
        .unwrap()
        .format("%Y-%m")
        .to_string()
}

#[actix_web::test]
async fn on_the_fixture_world_the_three_answer_from_its_feeds_and_sales() {
    let w = crate::valuation::fixture_world().await;
    let (_, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;
    let expected = fixture_sales_by_month("XT1");
    let cutoff = report_builder_first_month();

    let r = send(
        &svc,
        get(
            "/v1/market/supply-demand?area_type=district&area_code=XT1",
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["status"], "ok");
    assert!(
        r.json["stock"]["live_n"].as_i64().unwrap() > 0,
        "{}",
        r.json["stock"]
    );
    let mut compared = 0;
    let mut with_inventory = 0;
    for m in r.json["months"].as_array().unwrap() {
        let period = m["period"].as_str().unwrap();
        let Some(n) = m["registered_sales_n"].as_i64() else {
            continue;
        };
        if *period < *cutoff.as_str() {
            assert_eq!(n, expected.get(period).copied().unwrap_or(0), "{period}");
            compared += 1;
        }
        if let (Some(s), Some(moi)) = (m["stock_end_n"].as_i64(), m["months_of_inventory"].as_f64())
        {
            assert!(
                (moi - (s as f64 / n as f64 * 100.0).round() / 100.0).abs() < 1e-9,
                "{m}"
            );
            with_inventory += 1;
        }
    }
    assert!(compared >= 12, "only {compared} months compared");
    assert!(
        with_inventory >= 12,
        "only {with_inventory} months with months of inventory"
    );

    // Yields: the asking basis is 12 x the medians shown, null where thin; the valuation basis
    // reads the vintage the derived steps built.
    let r = send(&svc, get("/v1/market/yields", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(r.json["valuation_vintage"].is_string(), "{}", r.json);
    let months = r.json["months"].as_array().unwrap();
    let mut asking = 0;
    for m in months {
        let (rn, sn) = (m["rent_n"].as_i64().unwrap(), m["sale_n"].as_i64().unwrap());
        match m["gross_yield_asking"].as_f64() {
            Some(y) => {
                assert!(rn >= 5 && sn >= 5, "{m}");
                let want = 12.0 * m["rent_median_pcm"].as_f64().unwrap()
                    / m["sale_median"].as_f64().unwrap();
                assert!((y - want).abs() < 2e-4, "{m}");
                assert!((0.01..0.2).contains(&y), "{m}");
                asking += 1;
            }
            None => assert!(rn < 5 || sn < 5, "{m}"),
        }
        if m["gross_yield_avm_median"].is_number() {
            assert!(m["gross_yield_avm_n"].as_i64().unwrap() >= 5, "{m}");
        }
    }
    assert!(asking >= 12, "{asking} months with an asking yield");
    assert!(
        months
            .iter()
            .any(|m| m["gross_yield_avm_median"].is_number()),
        "{}",
        r.json
    );

    // Facts by local authority name (the loaded boundaries name it) and by district, the latter's
    // registry count against the fixture file.
    let r = send(
        &svc,
        post_json("/v1/market/facts", &key, &json!({"lad_code": "tamberley"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        (
            r.json["geography"].as_str(),
            r.json["geography_name"].as_str()
        ),
        (Some("lad:E06009901"), Some("Tamberley"))
    );
    let r = send(
        &svc,
        post_json(
            "/v1/market/facts",
            &key,
            &json!({"postcode": "XT1 1BB", "start": "2022-01", "end": "2024-12"}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let want: i64 = expected
        .range("2022-01".to_string()..="2024-12".to_string())
        .map(|(_, n)| n)
        .sum();
    assert!(*"2024-12" < *cutoff.as_str());
    assert_eq!(r.json["registered_sales_n"], want);
    let sold = metric(&r.json, "price_sold");
    assert_eq!(sold["basis"], "sold");
    assert!(sold["n"].as_i64().unwrap() <= want && sold["n"].as_i64().unwrap() > 0);
    assert_eq!(metric(&r.json, "price_asking")["basis"], "asking");
    assert_eq!(r.json["credits_charged"], 0);
}
