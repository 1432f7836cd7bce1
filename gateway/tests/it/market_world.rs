//! The market family on the fixture world, loaded as the first start loads it: every district,
//! the postcode area and both local authorities publish an index, and the published district
//! indices follow the world's own true index (`fixtures/truth/true_index.csv`) within a stated
//! tolerance on every settled month.

use crate::support::*;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use terrace_core::FixedClock;

/// district -> month (`YYYY-MM`) -> true level.
fn truth() -> HashMap<String, HashMap<String, f64>> {
    let text = std::fs::read_to_string(fixtures().join("truth/true_index.csv")).unwrap();
    let mut out: HashMap<String, HashMap<String, f64>> = HashMap::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        out.entry(f[0].to_string())
            .or_default()
            .insert(f[1].to_string(), f[2].parse().unwrap());
    }
    out
}

/// The tolerance on every district, every settled month: the root mean square of
/// ln(published / true) after removing its mean (the two series have different bases), ...
/// The fixture's districts hold 140 to 500 sales over eleven years (one to four a month), so
/// each follows its postcode area (own weight about 0.02); what remains is mostly the
/// district's own true deviation from the area, which so few sales cannot resolve. Measured at
/// commit time: 0.035 to 0.077 (before this change 10 districts had no index and the other six
/// erred by 0.19 to 0.25).
const SHAPE_TOLERANCE: f64 = 0.09;
/// ... and on the twelve-month change at the last settled month (what `price_change` reads):
/// measured at most 0.041 (before: up to 0.27).
const CHANGE_TOLERANCE: f64 = 0.05;

/// (shape error, published 12-month change, true 12-month change) of one published series.
fn error_against_truth(rows: &[Value], truth: &HashMap<String, f64>) -> (f64, f64, f64) {
    let settled: Vec<(String, f64)> = rows
        .iter()
        .filter(|r| r["is_forecast"] == false)
        .filter_map(|r| Some((r["period"].as_str()?.to_string(), r["level"].as_f64()?)))
        .collect();
    let d: Vec<f64> = settled
        .iter()
        .filter_map(|(p, l)| Some((l / truth.get(p)?).ln()))
        .collect();
    let mean = d.iter().sum::<f64>() / d.len() as f64;
    let shape = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / d.len() as f64).sqrt();
    let (last_p, last_l) = settled.last().unwrap().clone();
    let (y, m) = (
        last_p[..4].parse::<i32>().unwrap(),
        last_p[5..7].parse::<u32>().unwrap(),
    );
    let year_before = format!("{}-{m:02}", y - 1);
    let prev_l = settled
        .iter()
        .find(|(p, _)| *p == year_before)
        .map(|(_, l)| *l)
        .unwrap();
    let published = last_l / prev_l - 1.0;
    let true_change = truth[&last_p] / truth[&year_before] - 1.0;
    (shape, published, true_change)
}

#[actix_web::test]
async fn the_fixture_world_publishes_an_index_everywhere_and_follows_its_truth() {
    let w = crate::support::small_world_and_fixtures().await;
    let mut log = Vec::new();
    terrace_market::build::build(w.db(), chrono::Utc::now().naive_utc(), &mut |s| {
        log.push(s.to_string())
    })
    .await
    .unwrap();
    assert!(!log.iter().any(|l| l.contains("no index for")), "{log:#?}");
    let data_through =
        terrace_store::meta::get(w.db(), terrace_store::meta::Key::MarketDataThrough)
            .await
            .unwrap()
            .unwrap();
    // A clock one month after the data: fresh.
    let now = chrono::NaiveDate::parse_from_str(&data_through, "%Y-%m-%d")
        .unwrap()
        .and_hms_opt(12, 0, 0)
        .unwrap()
        .and_utc()
        + chrono::Duration::days(40);
    let state = state_with_clock(w.db(), Default::default(), Arc::new(FixedClock(now))).await;
    let svc = service(state).await;
    let (_, key) = account(w.db(), 1_000).await;
    let truth = truth();

    // Every district, the area and both local authorities publish an index, each saying its
    // method, its decision and its grain.
    let mut districts: Vec<&String> = truth.keys().collect();
    districts.sort_by_key(|d| (d.len(), (*d).clone()));
    let mut paths: Vec<String> = districts
        .iter()
        .map(|d| format!("/v1/market/index-series?district={d}"))
        .collect();
    for la in ["E06009901", "E06009902"] {
        paths.push(format!("/v1/market/index-series?local_authority={la}"));
    }
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for path in &paths {
        let r = send(&svc, get(path, &key)).await;
        assert_eq!(r.status, 200, "{path}: {}", r.json);
        let p = &r.json["provenance"];
        let method = p["index_method"].as_str().unwrap();
        assert!(
            p["index_decision"].as_str().unwrap().starts_with(method),
            "{path}: {p}"
        );
        assert_eq!(p["grain"], "month", "{path}");
        assert_eq!(r.json["staleness"]["stale"], false, "{path}: {}", r.json);
        let rows = r.json["rows"].as_array().unwrap();
        for row in rows.iter().filter(|r| r["is_forecast"] == false) {
            assert!(row["se"].is_number(), "{path}: {row}");
            assert!(row["lo"].as_f64() <= row["level"].as_f64(), "{path}: {row}");
            assert!(row["filled"].is_boolean(), "{path}: {row}");
        }
        if let Some(d) = path.strip_prefix("/v1/market/index-series?district=") {
            let (shape, published, true_change) = error_against_truth(rows, &truth[d]);
            report.push(format!(
                "{d}: {method}, shape error {shape:.4}, 12-month change {published:+.4} (true {true_change:+.4})"
            ));
            if shape > SHAPE_TOLERANCE || (published - true_change).abs() > CHANGE_TOLERANCE {
                failures.push(d.to_string());
            }
        }
    }
    println!("{}", report.join("\n"));
    assert!(failures.is_empty(), "{failures:?}\n{}", report.join("\n"));

    // The postcode area publishes an index too (the parent of every district).
    let area = terrace_store::market::geography(w.db(), "area:XT")
        .await
        .unwrap()
        .unwrap();
    assert!(area.index_method.is_some(), "{area:?}");

    // Forecasts say the months they cover.
    let r = send(&svc, get("/v1/market/forecast?district=XT3", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let fc = r.json["forecast"].as_array().unwrap();
    assert_eq!(r.json["covers"]["from"], fc[0]["period"]);
    assert_eq!(r.json["covers"]["to"], fc[fc.len() - 1]["period"]);
    assert_eq!(r.json["provenance"]["data_through"], data_through.as_str());
    assert_eq!(r.json["staleness"]["stale"], false, "{}", r.json);

    // The same world asked six years later says its data is stale, on every market answer.
    let later = now + chrono::Duration::days(6 * 365);
    let state = state_with_clock(w.db(), Default::default(), Arc::new(FixedClock(later))).await;
    let svc = service(state).await;
    for (method, path) in [
        ("GET", "/v1/market/index-series?district=XT1"),
        ("GET", "/v1/market/forecast?district=XT1"),
        (
            "GET",
            "/v1/market/time-adjustment?district=XT1&from=2018-01",
        ),
        ("POST", "/v1/market/volume-series"),
        ("POST", "/v1/market/volume-ranking"),
        ("POST", "/v1/market/ranking"),
    ] {
        let req = if method == "GET" {
            get(path, &key)
        } else {
            let body = if path.ends_with("volume-series") {
                serde_json::json!({"district": "XT1"})
            } else {
                serde_json::json!({})
            };
            post_json(path, &key, &body)
        };
        let r = send(&svc, req).await;
        assert_eq!(r.status, 200, "{path}: {}", r.json);
        let s = r
            .json
            .get("staleness")
            .unwrap_or_else(|| panic!("{path}: {}", r.json));
        assert_eq!(s["stale"], true, "{path}: {s}");
        assert_eq!(s["data_through"], data_through.as_str(), "{path}: {s}");
        assert!(
            s["note"].as_str().unwrap().contains("behind"),
            "{path}: {s}"
        );
    }
}
