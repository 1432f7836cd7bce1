//! The market family end to end: simulated sales from a known true index are written in the
//! Price Paid format, loaded by the real loader, built into the derived tables, and read back
//! through the endpoints.

use crate::support::*;
use serde_json::{Value, json};
use terrace_analytics::{self as an, Draws, Month, SplitMix64};
use terrace_ingest::Dataset;

const FIRST: (i32, u32) = (2013, 1);
const MONTHS: usize = 144; // 2013-01 .. 2024-12
const BASE: usize = 24; // 2015-01

struct Market {
    true_log: Vec<f64>,
    /// Sales per (district, month) as written.
    counts: std::collections::HashMap<(&'static str, String), i64>,
    csv: String,
}

/// XT1 well sampled (60 sales a month), XT2 thin (2 a month); registrations after 2024-12 are
/// not yet published, so the last months undercount.
fn simulate() -> Market {
    let first = Month::new(FIRST.0, FIRST.1).unwrap();
    let mut draws = SplitMix64::new(7);
    let true_log = an::cyclical_log_index(MONTHS, BASE, 0.004, 0.006, 60.0, 0.002, &mut draws);
    let through = first.add_months(MONTHS as i32 - 1);
    let mut csv = String::new();
    let mut counts = std::collections::HashMap::new();
    let mut n = 0u64;
    for (district, postcode, dwellings, rate, offset) in [
        ("XT1", "XT1 1AA", 3_000, 60.0, 0u64),
        ("XT2", "XT2 3BC", 300, 2.0, 100_000u64),
    ] {
        let mut spec = an::SimSpec::typical(first, true_log.clone(), dwellings, rate);
        spec.key_offset = offset;
        spec.data_through = Some(through);
        for s in an::simulate_sales(&spec, &mut draws) {
            n += 1;
            let sale = &s.sale;
            let date = format!(
                "{}-{:02} 00:00",
                sale.month.first_day().get(..7).unwrap(),
                sale.day.min(28)
            );
            let cat = if draws.uniform() < 0.03 { "B" } else { "A" };
            csv.push_str(&format!(
                "\"{{00000000-0000-0000-0000-{n:012}}}\",\"{}\",\"{date}\",\"{postcode}\",\"{}\",\"{}\",\"{}\",\"{}\",\"\",\"MARKET STREET\",\"\",\"EXAMPLETON\",\"EXAMPLETON\",\"EXAMPLESHIRE\",\"{cat}\",\"A\"\n",
                sale.price,
                sale.property_type.code(),
                if sale.new_build { "Y" } else { "N" },
                sale.tenure.code(),
                sale.property.unwrap(),
            ));
            *counts
                .entry((district, sale.month.first_day()))
                .or_insert(0) += 1;
        }
    }
    Market {
        true_log,
        counts,
        csv,
    }
}

async fn market_world() -> (TestApp, Market) {
    let w = world().await;
    let m = simulate();
    let r = load_text(w.db(), Dataset::PricePaid, &m.csv).await;
    assert_eq!(r.counts.rejected, 0, "{:?}", r.rejections);
    let report = terrace_market::build::build(w.db(), chrono::Utc::now().naive_utc(), &mut |_| {})
        .await
        .unwrap();
    assert!(report.indices >= 4, "{report:?}");
    (w, m)
}

#[actix_web::test]
async fn indices_recover_the_true_index_and_say_how_they_were_made() {
    let (w, m) = market_world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/market/index-series?district=XT1", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 0);
    let p = &r.json["provenance"];
    assert_eq!(p["base_period"], "2015-01");
    let method = p["index_method"].as_str().unwrap();
    assert!(method == "repeat_sales" || method == "hedonic", "{p}");
    assert!(p["index_decision"].as_str().unwrap().starts_with(method));
    let pf = p["provisional_from"]
        .as_str()
        .expect("the last months are provisional");
    let settled = p["last_settled"].as_str().unwrap();
    assert!(settled < &pf[..7], "{settled} settled before {pf}");
    // Settled levels within 5 % (log RMSE) of the true index.
    let rows = r.json["rows"].as_array().unwrap();
    assert_eq!(
        rows.iter().rfind(|r| r["is_forecast"] == false).unwrap()["period"],
        settled,
        "the series stops at the last settled month"
    );
    let first = Month::new(FIRST.0, FIRST.1).unwrap();
    let mut sq = 0.0;
    let mut k = 0;
    for row in rows.iter().filter(|r| r["is_forecast"] == false) {
        let month = Month::parse(row["period"].as_str().unwrap()).unwrap();
        let t = m.true_log[month.months_since(first) as usize];
        let got = (row["level"].as_f64().unwrap() / 100.0).ln();
        sq += (got - t).powi(2);
        k += 1;
    }
    let rmse = (sq / k as f64).sqrt();
    assert!(k > 100 && rmse < 0.05, "rmse {rmse} over {k} months");
    let base = rows.iter().find(|r| r["period"] == "2015-01").unwrap();
    assert_eq!(base["level"], 100.0);
    // Forecast rows come last, seven of them, with widening bands.
    let fc: Vec<&Value> = rows.iter().filter(|r| r["is_forecast"] == true).collect();
    assert_eq!(fc.len(), 7);
    let width = |r: &Value| r["hi"].as_f64().unwrap() - r["lo"].as_f64().unwrap();
    assert!(width(fc[6]) > width(fc[0]));

    // The thin district is shrunk toward its postcode area, and says so.
    let r = send(
        &svc,
        get("/v1/market/index-series?district=XT2%203BC", &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["geography"], "XT2", "a full postcode is truncated");
    assert_eq!(r.json["provenance"]["index_method"], "shrunk_to_parent");
    assert_eq!(r.json["provenance"]["parent"], "area:XT");

    // Forecast: anchored on the last settled period, seven steps, 80 % bands.
    let r = send(&svc, get("/v1/market/forecast?district=XT1", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 2);
    assert_eq!(r.json["anchor"]["period"], settled);
    assert_eq!(r.json["horizon"], 7);
    assert_eq!(r.json["forecast"].as_array().unwrap().len(), 7);
    assert_eq!(r.json["interval_coverage"], "80%");
    assert_eq!(r.json["grain"], "month");
    let f0 = &r.json["forecast"][0];
    assert!(f0["lo"].as_f64() < f0["level"].as_f64() && f0["level"].as_f64() < f0["hi"].as_f64());
    let m0 = Month::parse(f0["period"].as_str().unwrap()).unwrap();
    assert_eq!(m0, Month::parse(settled).unwrap().add_months(1));

    // Time adjustment: the ratio of the two levels the series shows.
    let r = send(
        &svc,
        get(
            "/v1/market/time-adjustment?district=XT1&from=2016-03&to=2020-06-15",
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let level = |p: &str| {
        rows.iter()
            .find(|r| r["period"] == p && r["is_forecast"] == false)
            .unwrap()["level"]
            .as_f64()
            .unwrap()
    };
    let want = level("2020-06") / level("2016-03");
    assert!(
        (r.json["multiplier"].as_f64().unwrap() - want).abs() < 0.001,
        "{} vs {want}",
        r.json
    );
    assert_eq!(r.json["source"]["geography"], "district:XT1");
    let r = send(
        &svc,
        get("/v1/market/time-adjustment?district=XT2&from=2016-03", &key),
    )
    .await;
    assert_eq!(r.json["to_period"], settled, "{}", r.json);
    assert_eq!(r.json["source"]["parent"], "area:XT");
    assert_eq!(balance(w.db(), acct).await, 10 - 2 - 1 - 1);

    // Refusals: free, 422 or 404.
    for (path, status) in [
        ("/v1/market/index-series", 422),
        (
            "/v1/market/index-series?district=XT1&local_authority=E06000046",
            422,
        ),
        ("/v1/market/index-series?district=Tamberley", 422),
        ("/v1/market/index-series?local_authority=E0600004X", 422),
        ("/v1/market/index-series?district=XT1&from=2016-13", 422),
        ("/v1/market/index-series?district=ZZ9", 404),
        ("/v1/market/time-adjustment?district=XT1&from=1990-01", 404),
        ("/v1/market/time-adjustment?district=XT1", 422),
        ("/v1/market/forecast?district=ZZ9", 404),
    ] {
        let r = send(&svc, get(path, &key)).await;
        assert_eq!(r.status, status, "{path}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
    }
    assert_eq!(balance(w.db(), acct).await, 6);
}

#[actix_web::test]
async fn volume_series_follows_every_rule_of_the_body() {
    let (w, m) = market_world().await;
    let (_, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let post = |b: Value| post_json("/v1/market/volume-series", &key, &b);
    let r = send(&svc, post(json!({"district": "XT1 1AA", "start": "2020-01", "end": "2020-12-31", "metrics": ["txn_count", "txn_count_ppd_a", "txn_count_ppd_b", "median_price"]}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["country"], "UK");
    assert_eq!(r.json["query"], json!({"district": "XT1 1AA"}));
    assert_eq!(r.json["credits_charged"], 0);
    let d = &r.json["data"];
    assert_eq!(
        (
            d["grain"].as_str(),
            d["geography"].as_str(),
            d["n_months"].as_i64(),
            d["n_districts"].as_i64()
        ),
        (Some("district"), Some("XT1"), Some(12), Some(1))
    );
    let months: Vec<&str> = d["months"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(months.first(), Some(&"2020-01-01"));
    let counts = d["series"]["txn_count"].as_array().unwrap();
    let mut total = 0;
    for (i, month) in months.iter().enumerate() {
        let want = m
            .counts
            .get(&("XT1", month.to_string()))
            .copied()
            .unwrap_or(0);
        assert_eq!(counts[i].as_i64(), Some(want), "{month}");
        let (a, b) = (
            d["series"]["txn_count_ppd_a"][i].as_i64().unwrap(),
            d["series"]["txn_count_ppd_b"][i].as_i64().unwrap(),
        );
        assert_eq!(a + b, want);
        total += want;
    }
    assert_eq!(d["total_transactions"].as_i64(), Some(total));
    assert!(d["series"]["median_price"][0].as_f64().unwrap() > 0.0);
    assert_eq!(d["data_through"], "2024-12-01");
    assert!(
        d["provisional_from"].as_str().unwrap() > "2024-01-01",
        "{d}"
    );
    assert_eq!(d["cached"], false);
    // The same question again is answered from memory, with the same data.
    let first_body = json!({"district": "XT1 1AA", "start": "2020-01", "end": "2020-12-31", "metrics": ["txn_count", "txn_count_ppd_a", "txn_count_ppd_b", "median_price"]});
    let again = send(&svc, post(first_body.clone())).await;
    assert_eq!(again.json["data"]["cached"], true);
    assert_eq!(again.json["data"]["series"], d["series"]);
    assert_eq!(again.json["data"]["months"], d["months"]);
    // A build drops what the server holds: one more January 2020 sale shows at once.
    let extra = "\"{00000000-0000-0000-0000-999999999999}\",\"250000\",\"2020-01-15 00:00\",\"XT1 1AA\",\"T\",\"N\",\"F\",\"999\",\"\",\"MARKET STREET\",\"\",\"EXAMPLETON\",\"EXAMPLETON\",\"EXAMPLESHIRE\",\"A\",\"A\"\n";
    let r2 = load_text(w.db(), Dataset::PricePaid, extra).await;
    assert_eq!(r2.counts.rejected, 0, "{:?}", r2.rejections);
    terrace_market::build::build(w.db(), chrono::Utc::now().naive_utc(), &mut |_| {})
        .await
        .unwrap();
    let rebuilt = send(&svc, post(first_body)).await;
    assert_eq!(rebuilt.json["data"]["cached"], false);
    assert_eq!(
        rebuilt.json["data"]["series"]["txn_count"][0].as_i64(),
        counts[0].as_i64().map(|n| n + 1),
        "{}",
        rebuilt.json
    );
    // Default metrics and window; an area; a county.
    let r = send(&svc, post(json!({"area": "XT"}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        r.json["data"]["metrics"],
        json!(["txn_count", "median_price"])
    );
    assert_eq!(r.json["data"]["n_months"], 24);
    assert_eq!(r.json["data"]["n_districts"], 2);
    let r = send(
        &svc,
        post(json!({"county": "EXAMPLESHIRE", "start": "2024-06", "end": "2025-03"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let c = r.json["data"]["series"]["txn_count"]
        .as_array()
        .unwrap()
        .clone();
    assert!(c[0].as_i64().unwrap() > 0);
    assert!(
        c[9].is_null(),
        "a month after data_through is null, not zero: {c:?}"
    );
    // Every rule of the body.
    for (body, loc) in [
        (json!({}), json!(["body", "district"])),
        (json!({"district": "XT1", "area": "XT"}), json!(["body"])),
        (
            json!({"district": "Tamberley"}),
            json!(["body", "district"]),
        ),
        (json!({"county": "Exampleshire"}), json!(["body", "county"])),
        (json!({"area": "X1"}), json!(["body", "area"])),
        (
            json!({"district": "XT1", "metrics": ["txn_count", "rent"]}),
            json!(["body", "metrics", "1"]),
        ),
        (
            json!({"district": "XT1", "metrics": []}),
            json!(["body", "metrics"]),
        ),
        (
            json!({"district": "XT1", "start": "2020/01"}),
            json!(["body", "start"]),
        ),
        (
            json!({"district": "XT1", "end": "2020-02-30"}),
            json!(["body", "end"]),
        ),
        (
            json!({"district": "XT1", "start": "2021-01", "end": "2020-01"}),
            json!(["body", "start"]),
        ),
        (
            json!({"district": "XT1", "borough": "x"}),
            json!(["body", "borough"]),
        ),
    ] {
        let r = send(&svc, post(body.clone())).await;
        assert_eq!(r.status, 422, "{body}: {}", r.json);
        assert_eq!(r.json["detail"][0]["loc"], loc, "{body}: {}", r.json);
    }
    let r = send(&svc, post(json!({"district": "ZZ9"}))).await;
    assert_eq!(r.status, 404);
}

#[actix_web::test]
async fn rankings_name_their_n_and_stock() {
    let (w, _) = market_world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(
        &svc,
        post_json(
            "/v1/market/volume-ranking",
            &key,
            &json!({"start": "2020-01", "end": "2020-12"}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 2);
    let rows = r.json["rows"].as_array().unwrap();
    assert_eq!(rows[0]["geography"], "XT1");
    assert_eq!(rows[0]["rank"], 1);
    assert!(rows[0]["n"].as_i64() > rows[1]["n"].as_i64());
    let r = send(
        &svc,
        post_json(
            "/v1/market/volume-ranking",
            &key,
            &json!({"metric": "median_price", "order": "asc", "limit": 1}),
        ),
    )
    .await;
    assert_eq!(r.json["rows"].as_array().unwrap().len(), 1, "{}", r.json);
    // Turnover needs the stock: the small world's register has residential addresses in XT1.
    let r = send(&svc, post_json("/v1/market/ranking", &key, &json!({}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 0);
    assert_eq!(r.json["metric"], "turnover_rate");
    for row in r.json["rows"].as_array().unwrap() {
        let (n, stock) = (row["n"].as_f64().unwrap(), row["stock"].as_f64().unwrap());
        assert!(
            (row["value"].as_f64().unwrap() - n / stock).abs() < 1e-5,
            "{row}"
        );
    }
    let r = send(
        &svc,
        post_json(
            "/v1/market/ranking",
            &key,
            &json!({"metric": "price_change", "window_months": 24}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(!r.json["rows"].as_array().unwrap().is_empty());
    for (body, loc) in [
        (json!({"metric": "vibes"}), "metric"),
        (json!({"window_months": 0}), "window_months"),
        (json!({"window_months": 61}), "window_months"),
        (json!({"level": "ward"}), "level"),
        (json!({"end": "2020"}), "end"),
    ] {
        let r = send(&svc, post_json("/v1/market/ranking", &key, &body)).await;
        assert_eq!(r.status, 422, "{body}");
        assert_eq!(r.json["detail"][0]["loc"], json!(["body", loc]));
    }
    assert_eq!(balance(w.db(), acct).await, 6);
}

/// The UK HPI comparison: a reference file in the official format for the local authority the
/// simulated sales lie in, drawn from the same true index, correlates with our series.
#[actix_web::test]
async fn uk_hpi_comparison_runs_on_the_loaded_reference() {
    let w = world().await;
    // The sales' postcodes lie in a local authority the postcode directory names.
    load_text(
        w.db(),
        Dataset::Onspd,
        "pcd,pcds,dointr,doterm,laua,lsoa21,ctry,oseast1m,osnrth1m,lat,long\nXT1 1AA,XT1 1AA,199801,,E06009901,,E92000001,260010,80010,,\nXT2 3BC,XT2 3BC,199801,,E06009901,,E92000001,261100,81000,,\n",
    )
    .await;
    let (_, m) = {
        let m = simulate();
        let r = load_text(w.db(), Dataset::PricePaid, &m.csv).await;
        assert_eq!(r.counts.rejected, 0);
        (0, m)
    };
    terrace_market::build::build(w.db(), chrono::Utc::now().naive_utc(), &mut |_| {})
        .await
        .unwrap();
    let first = Month::new(FIRST.0, FIRST.1).unwrap();
    let mut hpi = String::from("Date,RegionName,AreaCode,AveragePrice,Index,SalesVolume\n");
    for (k, t) in m.true_log.iter().enumerate() {
        let month = first.add_months(k as i32);
        hpi.push_str(&format!(
            "01/{:02}/{},Tamberley,E06009901,,{:.1},\n",
            month.month(),
            month.year(),
            100.0 * t.exp()
        ));
    }
    let r = load_text(w.db(), Dataset::UkHpi, &hpi).await;
    assert_eq!(r.counts.loaded, MONTHS as i64, "{:?}", r.rejections);
    let rows = terrace_market::validate::compare_with_hpi(w.db())
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let c = &rows[0];
    assert!(c.months > 100, "{c:?}");
    let corr = c.corr_monthly_changes.unwrap();
    // Monthly changes of a 60-sales-a-month series are mostly estimation noise against a smooth
    // truth, so the correlation is positive but low; annual changes stay within 10 points.
    assert!(corr > 0.0, "monthly changes correlate: {c:?}");
    let (gap, _) = c.max_annual_gap_pp.clone().unwrap();
    assert!(gap < 10.0, "{c:?}");
    assert!(terrace_market::validate::table(&rows).contains("E06009901"));
}
