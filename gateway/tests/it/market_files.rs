//! The market build on files as users bring them: a short file whose last month is still
//! filling, a district with one outlier month, and the Isle of Wight's real monthly Price Paid
//! update files (when `../shared/data` exists).

use crate::support::*;
use serde_json::json;
use std::path::PathBuf;
use terrace_analytics::{self as an, Draws, Month, SplitMix64};
use terrace_ingest::{Dataset, Progress};

/// Simulated sales of one district from `true_log`, as Price Paid rows; `shape` may drop a
/// sale (false) or change its price.
fn price_paid(
    first: Month,
    true_log: &[f64],
    rate: f64,
    seed: u64,
    mut shape: impl FnMut(Month, &mut i64, &mut SplitMix64) -> bool,
) -> String {
    let mut draws = SplitMix64::new(seed);
    let mut spec = an::SimSpec::typical(first, true_log.to_vec(), 3_000, rate);
    spec.data_through = None;
    let mut csv = String::new();
    for (n, s) in an::simulate_sales(&spec, &mut draws).iter().enumerate() {
        let sale = &s.sale;
        let mut price = sale.price;
        if !shape(sale.month, &mut price, &mut draws) {
            continue;
        }
        let date = format!(
            "{}-{:02} 00:00",
            sale.month.first_day().get(..7).unwrap(),
            sale.day.min(28)
        );
        csv.push_str(&format!(
            "\"{{00000000-0000-0000-0000-{n:012}}}\",\"{price}\",\"{date}\",\"XT1 1AA\",\"{}\",\"N\",\"F\",\"{}\",\"\",\"MARKET STREET\",\"\",\"EXAMPLETON\",\"EXAMPLETON\",\"EXAMPLESHIRE\",\"A\",\"A\"\n",
            sale.property_type.code(),
            sale.property.unwrap(),
        ));
    }
    csv
}

#[actix_web::test]
async fn a_short_file_flags_its_thin_last_month_provisional() {
    let w = world().await;
    let first = Month::new(2019, 1).unwrap();
    let last = first.add_months(11);
    let true_log: Vec<f64> = (0..12).map(|t| 0.003 * t as f64).collect();
    // Twelve months of about 150 sales; only a quarter of December's are registered yet.
    let csv = price_paid(first, &true_log, 150.0, 11, |m, _, d| {
        m != last || d.uniform() < 0.25
    });
    let r = load_text(w.db(), Dataset::PricePaid, &csv).await;
    assert_eq!(r.counts.rejected, 0, "{:?}", r.rejections);
    let report = terrace_market::build::build(w.db(), chrono::Utc::now().naive_utc(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(report.data_through.as_deref(), Some("2019-12-01"));
    assert_eq!(
        report.provisional_from.as_deref(),
        Some("2019-12-01"),
        "{report:?}"
    );
    let g = terrace_store::market::geography(w.db(), "district:XT1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(g.last_settled.as_deref(), Some("2019-11"), "{g:?}");
}

/// The stated tolerance of `price_change` against the true index's change over the window, for
/// a district of 60 sales a month with one month's prices 10 % low.
const PRICE_CHANGE_TOLERANCE: f64 = 0.03;

#[actix_web::test]
async fn one_outlier_month_does_not_drive_the_published_price_change() {
    let w = world().await;
    let first = Month::new(2015, 1).unwrap();
    let months = 72;
    let mut draws = SplitMix64::new(5);
    let true_log = an::cyclical_log_index(months, 0, 0.004, 0.003, 48.0, 0.001, &mut draws);
    let end = first.add_months(months as i32 - 1);
    // The month before the twelve-month window starts: its prices sit 10 % low.
    let outlier = end.add_months(-12);
    let csv = price_paid(first, &true_log, 60.0, 21, |m, price, _| {
        if m == outlier {
            *price = (*price as f64 * 0.9).round() as i64;
        }
        true
    });
    let r = load_text(w.db(), Dataset::PricePaid, &csv).await;
    assert_eq!(r.counts.rejected, 0, "{:?}", r.rejections);
    terrace_market::build::build(w.db(), chrono::Utc::now().naive_utc(), &mut |_| {})
        .await
        .unwrap();
    let svc = service(w.state.clone()).await;
    let (_, key) = account(w.db(), 100).await;
    let r = send(
        &svc,
        post_json(
            "/v1/market/ranking",
            &key,
            &json!({"metric": "price_change", "end": end.to_string()}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let row = &r.json["rows"][0];
    assert_eq!(row["geography"], "XT1", "{}", r.json);
    let got = row["value"].as_f64().unwrap();
    let k = months - 1;
    let want = (true_log[k] - true_log[k - 12]).exp() - 1.0;
    assert!(
        (got - want).abs() < PRICE_CHANGE_TOLERANCE,
        "price_change {got} vs true {want}"
    );
    assert!(row["se"].as_f64().unwrap() > 0.0, "{row}");
    // The estimator's own level in the outlier month still shows the dip, and says so.
    let r = send(
        &svc,
        get(
            &format!("/v1/market/index-series?district=XT1&from={outlier}&to={outlier}"),
            &key,
        ),
    )
    .await;
    let row = &r.json["rows"][0];
    assert!(
        row["raw_level"].as_f64().unwrap() < row["level"].as_f64().unwrap(),
        "{row}"
    );
}

fn shared() -> Option<PathBuf> {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data"));
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("../shared/data is absent: the Isle of Wight market test is skipped");
        None
    }
}

#[actix_web::test]
async fn the_isle_of_wight_monthly_files_find_their_provisional_months_and_publish() {
    let Some(data) = shared() else { return };
    let w = world().await;
    terrace_ingest::load_file(
        w.db(),
        Dataset::Onspd,
        &data.join("postcodes/nspd_nov2025_via_qlacref_E07000041_E06000046_SW19.csv"),
        Default::default(),
        &mut Progress::quiet(),
    )
    .await
    .unwrap();
    // The sixteen monthly files, oldest first (their names are Month_Year.csv).
    let month_no = |name: &str| {
        let (m, y) = name.trim_end_matches(".csv").split_once('_').unwrap();
        let m = [
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ]
        .iter()
        .position(|x| *x == m)
        .unwrap();
        y.parse::<usize>().unwrap() * 12 + m
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(data.join("isle_of_wight/ppd_monthly"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort_by_key(|p| month_no(p.file_name().unwrap().to_str().unwrap()));
    assert_eq!(files.len(), 16);
    for f in &files {
        terrace_ingest::load_file(
            w.db(),
            Dataset::PricePaid,
            f,
            Default::default(),
            &mut Progress::quiet(),
        )
        .await
        .unwrap();
    }
    let mut log = Vec::new();
    let report = terrace_market::build::build(w.db(), chrono::Utc::now().naive_utc(), &mut |s| {
        log.push(s.to_string())
    })
    .await
    .unwrap();
    println!("{}", log.join("\n"));
    // The last files' completion months are still filling: the build finds them.
    let pf = report.provisional_from.clone().expect("provisional months");
    let through = report.data_through.clone().unwrap();
    assert!(
        pf.as_str() >= "2026-02-01" && pf <= through,
        "provisional from {pf}, data through {through}"
    );
    // The island's local authority publishes an index, stopping before provisional_from.
    let now = chrono::DateTime::parse_from_rfc3339("2026-08-15T12:00:00Z")
        .unwrap()
        .to_utc();
    let state = state_with_clock(
        w.db(),
        Default::default(),
        std::sync::Arc::new(terrace_core::FixedClock(now)),
    )
    .await;
    let svc = service(state).await;
    let (_, key) = account(w.db(), 100).await;
    let r = send(
        &svc,
        get("/v1/market/index-series?local_authority=E06000046", &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let p = &r.json["provenance"];
    println!("{}", serde_json::to_string_pretty(p).unwrap());
    assert!(p["index_method"].is_string(), "{p}");
    assert_eq!(
        r.json["staleness"]["stale"], false,
        "{}",
        r.json["staleness"]
    );
    let rows = r.json["rows"].as_array().unwrap();
    let settled = rows.iter().rfind(|r| r["is_forecast"] == false).unwrap();
    assert!(settled["period"].as_str().unwrap() < &pf[..7], "{settled}");
    let recent: Vec<String> = rows
        .iter()
        .filter(|r| r["period"].as_str().unwrap() >= "2025-01")
        .map(|r| {
            format!(
                "{} {} {} filled={} forecast={}",
                r["period"], r["level"], r["se"], r["filled"], r["is_forecast"]
            )
        })
        .collect();
    println!("{}", recent.join("\n"));
    // Every district of the island publishes too.
    for d in [
        "PO30", "PO31", "PO32", "PO33", "PO34", "PO35", "PO36", "PO37", "PO38", "PO39", "PO40",
        "PO41",
    ] {
        let r = send(
            &svc,
            get(&format!("/v1/market/index-series?district={d}"), &key),
        )
        .await;
        assert_eq!(r.status, 200, "{d}: {}", r.json);
    }
}
