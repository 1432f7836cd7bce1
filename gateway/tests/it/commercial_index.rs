//! The commercial capital index (`GET /v1/market/commercial-index`): the fixture world's planted
//! commercial repeat sales recovered within a tolerance, the quarter and series gates, the
//! national, sector and authority scopes, the refused local-by-sector series, the free
//! `not_available` answer and every validation rule; the same series in the commercial market;
//! the pairs' sources (Price Paid category B, the two CCOD snapshots, the resold auction lot)
//! counted in the provenance, and the authority series shrunk toward national.

use crate::support::*;
use chrono::NaiveDate;
use serde_json::Value;
use terrace_ingest::Dataset;

/// The middle day of a quarter `YYYYQn`.
fn mid(q: &str) -> NaiveDate {
    let (y, n) = terrace_commercial::capital_index::parse_quarter(q).unwrap();
    NaiveDate::from_ymd_opt(y, 3 * n - 1, 15).unwrap()
}

fn points(r: &Value) -> Vec<Value> {
    r["series"]["points"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[actix_web::test]
async fn the_planted_commercial_index_is_recovered() {
    let w = small_world_and_fixtures().await;
    let (acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;

    let r = send(&svc, get("/v1/market/commercial-index", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 2);
    assert_eq!(balance(w.db(), acct).await, 98);
    assert_eq!(r.json["area"]["kind"], "national");
    assert_eq!(r.json["sector"], "ALL");
    assert_eq!(r.json["frequency"], "quarterly");
    assert_eq!(r.json["provenance"]["method"], "repeat_sales");
    // Every source has pairs in the fixture world, and the counts say so.
    assert_eq!(
        r.json["provenance"]["pair_sources"],
        serde_json::json!([
            "hmlr_price_paid_category_b_other",
            "hmlr_ccod_snapshots",
            "auction_results"
        ])
    );
    let by_source: Vec<(String, i64)> = r.json["provenance"]["pairs_by_source"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["source"].as_str().unwrap().to_string(),
                c["pairs"].as_i64().unwrap(),
            )
        })
        .collect();
    let sources: Vec<&str> = by_source.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        sources,
        [
            "hmlr_price_paid_category_b_other",
            "hmlr_ccod_snapshots",
            "auction_results"
        ],
        "{by_source:?}"
    );
    assert!(by_source.iter().all(|(_, n)| *n > 0), "{by_source:?}");
    let series = &r.json["series"];
    let n_series = series["n_pairs"].as_i64().unwrap();
    assert!(n_series >= 10, "{series}");
    let base = series["base_quarter"].as_str().unwrap().to_string();
    // Category B starts in October 2013: no pair reaches 1995Q1, and the answer says so.
    assert!(base.as_str() >= "2013Q4", "{base}");
    assert!(series["base_note"].as_str().unwrap().contains("1995Q1"));
    let pts = points(&r.json);
    assert!(pts.len() > 20, "{}", pts.len());
    let mut published = 0;
    let mut err_sum = 0.0;
    for p in &pts {
        let n = p["n_pairs"].as_i64().unwrap();
        match p["index"].as_f64() {
            // Never a level from fewer than 3 pairs.
            None => assert!(p["reason"].as_str().is_some(), "{p}"),
            Some(level) => {
                assert!(n >= 3, "{p}");
                let q = p["quarter"].as_str().unwrap();
                let truth = terrace_fixturegen::commercial_level(mid(q))
                    / terrace_fixturegen::commercial_level(mid(&base));
                err_sum += ((level / 100.0).ln() - truth.ln()).abs();
                published += 1;
            }
        }
    }
    // Some quarters are thin and withheld; most of the span is published.
    assert!(published >= 10, "{published} published of {}", pts.len());
    let mean_err = err_sum / f64::from(published);
    assert!(mean_err < 0.10, "mean absolute log error {mean_err}");
    assert!(
        pts.iter().any(|p| p["index"].is_null()),
        "no quarter is gated"
    );
    // The direction: the planted index rose about 30% from 2013 to the end of 2019.
    let level_of = |q: &str| {
        pts.iter()
            .find(|p| p["quarter"] == q)
            .and_then(|p| p["index"].as_f64())
    };
    let late: Vec<f64> = ["2019Q1", "2019Q2", "2019Q3", "2019Q4"]
        .iter()
        .filter_map(|q| level_of(q))
        .collect();
    assert!(!late.is_empty(), "2019 withheld throughout");
    assert!(late.iter().all(|l| *l > 105.0), "{late:?}");

    // The quarters shown.
    let r = send(
        &svc,
        get("/v1/market/commercial-index?start=2016Q1&end=2016Q4", &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let shown: Vec<String> = points(&r.json)
        .iter()
        .map(|p| p["quarter"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(shown, ["2016Q1", "2016Q2", "2016Q3", "2016Q4"]);

    // A local authority with ALL sectors, by name, and by code.
    let r = send(
        &svc,
        get("/v1/market/commercial-index?area=tamberley", &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["area"]["lad_code"], "E06009901");
    let local_n = match r.json["series"]["n_pairs"].as_i64() {
        Some(n) => {
            // Shrunk toward the national series, each quarter with its own estimate's weight.
            assert_eq!(
                r.json["provenance"]["method"],
                "repeat_sales_shrunk_toward_national"
            );
            assert!(
                points(&r.json)
                    .iter()
                    .filter(|p| p["index"].is_number())
                    .all(|p| p["own_weight"]
                        .as_f64()
                        .is_some_and(|w| (0.0..=1.0).contains(&w))),
                "{}",
                r.json
            );
            n
        }
        None => {
            // Withheld: not_available with its n, and free.
            assert_eq!(r.json["series"]["status"], "not_available");
            assert!(
                r.json["series"]["reason"]
                    .as_str()
                    .unwrap()
                    .contains("pairs")
            );
            assert_eq!(r.json["credits_charged"], 0);
            0
        }
    };
    assert!(local_n < n_series);

    // National by sector: the fixture's units are offices and shops.
    let mut sector_n = 0;
    for s in ["OFFICE", "RETAIL"] {
        let r = send(
            &svc,
            get(&format!("/v1/market/commercial-index?sector={s}"), &key),
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.json);
        assert_eq!(r.json["sector"], s);
        match r.json["series"]["n_pairs"].as_i64() {
            Some(n) => {
                assert_eq!(r.json["credits_charged"], 2);
                // National by sector is not shrunk.
                assert_eq!(r.json["provenance"]["method"], "repeat_sales");
                sector_n += n;
            }
            None => assert_eq!(r.json["credits_charged"], 0),
        }
    }
    // Unlinked sales count in ALL only.
    assert!(sector_n <= n_series);
    // A sector with no repeat sales at all.
    let r = send(&svc, get("/v1/market/commercial-index?sector=HOTEL", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["series"]["status"], "not_available");
    assert!(
        r.json["series"]["reason"]
            .as_str()
            .unwrap()
            .contains("HOTEL")
    );
    assert_eq!(r.json["credits_charged"], 0);

    // The commercial market carries the same series.
    let r = send(
        &svc,
        get(
            "/v1/market/commercial-market?lad_code=E06009901&sector=OFFICE",
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let ci = &r.json["capital_index"];
    if ci["status"] != "not_available" {
        assert_eq!(ci["area"]["kind"], "national");
        assert_eq!(ci["sector"], "OFFICE");
        assert!(ci["series"]["n_pairs"].as_i64().unwrap() >= 10);
    }
}

#[actix_web::test]
async fn commercial_index_refusals_and_not_available() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;

    // Nothing loaded: not_available with the reason, free.
    let r = send(&svc, get("/v1/market/commercial-index", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["series"]["status"], "not_available");
    assert!(
        r.json["series"]["reason"]
            .as_str()
            .unwrap()
            .contains("no repeat sales")
    );
    assert_eq!(r.json["credits_charged"], 0);
    assert_eq!(balance(w.db(), acct).await, 10);

    for (path, loc) in [
        // No local-by-sector series.
        (
            "/v1/market/commercial-index?area=E06009901&sector=OFFICE",
            vec!["query", "sector"],
        ),
        (
            "/v1/market/commercial-index?start=2015-01",
            vec!["query", "start"],
        ),
        (
            "/v1/market/commercial-index?end=2015Q5",
            vec!["query", "end"],
        ),
        (
            "/v1/market/commercial-index?start=2016Q1&end=2015Q4",
            vec!["query", "end"],
        ),
        (
            "/v1/market/commercial-index?area=%20",
            vec!["query", "area"],
        ),
    ] {
        let r = send(&svc, get(path, &key)).await;
        check_422(&r, &loc, "value_error");
    }
    let r = send(&svc, get("/v1/market/commercial-index?sector=SHOPS", &key)).await;
    assert_eq!(r.status, 422, "{}", r.json);
    // An unknown authority is a 404 naming what was asked for, free.
    let r = send(&svc, get("/v1/market/commercial-index?area=Nowhere", &key)).await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert_eq!(balance(w.db(), acct).await, 10);
}

/// Price Paid rows in the published layout.
fn ppd_row(id: u32, price: i64, date: &str, paon: &str, cat: &str) -> String {
    format!(
        "\"{{0000{id:04}-0000-4000-8000-000000000000}}\",\"{price}\",\"{date} 00:00\",\"XT9 9ZZ\",\"O\",\"N\",\"F\",\"{paon}\",\"\",\"TRADE PARK\",\"\",\"EXAMPLETON\",\"EXAMPLETON\",\"EXAMPLESHIRE\",\"{cat}\",\"A\"\n"
    )
}

#[actix_web::test]
async fn a_thin_series_is_withheld_with_its_n() {
    let w = world().await;
    let (_, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    // Four units sold twice (keyed by address: no UPRN links), and a category A "O" pair that
    // is not a commercial transfer.
    let mut text = String::new();
    for u in 0..4u32 {
        text.push_str(&ppd_row(
            2 * u,
            200_000,
            "2015-03-01",
            &format!("UNIT {u}"),
            "B",
        ));
        text.push_str(&ppd_row(
            2 * u + 1,
            240_000,
            "2018-06-01",
            &format!("UNIT {u}"),
            "B",
        ));
    }
    text.push_str(&ppd_row(50, 100_000, "2015-03-01", "UNIT 9", "A"));
    text.push_str(&ppd_row(51, 120_000, "2018-06-01", "UNIT 9", "A"));
    let rep = load_text(w.db(), Dataset::PricePaid, &text).await;
    assert_eq!(rep.counts.rejected, 0, "{:?}", rep.rejections);
    let built = terrace_commercial::capital_index::build(w.db(), chrono::Utc::now().naive_utc())
        .await
        .unwrap();
    assert_eq!(built.sales, 8);
    assert_eq!(built.pairs, 4);
    assert_eq!(built.series_published, 0);
    let r = send(&svc, get("/v1/market/commercial-index", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["series"]["status"], "not_available");
    let why = r.json["series"]["reason"].as_str().unwrap();
    assert!(why.contains("4 repeat-sale pairs"), "{why}");
    // The withheld series still says where its pairs come from.
    assert_eq!(
        r.json["provenance"]["pairs_by_source"],
        serde_json::json!([{"source": "hmlr_price_paid_category_b_other", "pairs": 4}])
    );
    assert_eq!(r.json["credits_charged"], 0);
}
