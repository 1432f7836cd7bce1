//! The site family's cost operations (issue 41): the ONS spreadsheet read by series title when
//! its columns move, malformed cells reported with sheet and cell, every `not_available` path
//! (tender without a feed, an unloaded sector, a finer frequency than published, an empty
//! window, a region without a location-factor table or outside it, no benchmark, no estimate
//! without both area and rate), every validation rule's 422, the estimate on known values, the
//! operator feeds loaded, charging, and both operations on the fixture world.

use crate::support::{
    TestApp, account, balance, fixture_db, fixtures, get, load_text, send, service, state_for,
    world,
};
use crate::validation::check_422;
use rust_xlsxwriter::Workbook;
use serde_json::Value;
use terrace_ingest::{Dataset, Progress};

/// A workbook in the ONS layout: a cover sheet, then a table sheet with title rows, a header row
/// and monthly rows; `columns` are the header titles in the order written, `rows` the period
/// label and one cell per column (`None` blank, `Some(text)` written as a number when it parses).
fn workbook(columns: &[&str], rows: &[(&str, Vec<Option<&str>>)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut wb = Workbook::new();
    let cover = wb.add_worksheet().set_name("Cover sheet").unwrap();
    cover
        .write_string(0, 0, "Construction output price indices (test)")
        .unwrap();
    let t = wb.add_worksheet().set_name("Table_1").unwrap();
    t.write_string(0, 0, "Table 1: output price indices, 2015=100")
        .unwrap();
    t.write_string(2, 0, "Time period").unwrap();
    for (c, title) in columns.iter().enumerate() {
        t.write_string(2, c as u16 + 1, *title).unwrap();
    }
    for (i, (label, cells)) in rows.iter().enumerate() {
        let r = 3 + i as u32;
        t.write_string(r, 0, *label).unwrap();
        for (c, v) in cells.iter().enumerate() {
            match v.map(|s| (s, s.parse::<f64>())) {
                Some((_, Ok(n))) => {
                    t.write_number(r, c as u16 + 1, n).unwrap();
                }
                Some((s, Err(_))) => {
                    t.write_string(r, c as u16 + 1, s).unwrap();
                }
                None => {}
            }
        }
    }
    wb.save(dir.path().join("opi.xlsx")).unwrap();
    dir
}

async fn load_workbook(app: &TestApp, dir: &tempfile::TempDir) -> terrace_ingest::LoadReport {
    terrace_ingest::load_file(
        app.db(),
        Dataset::OnsConstructionPrices,
        &dir.path().join("opi.xlsx"),
        Default::default(),
        &mut Progress::quiet(),
    )
    .await
    .unwrap()
}

/// Twelve months of 2023 and six of 2024 for new housing (100..117) and all work (200..217).
fn months() -> Vec<(String, f64, f64)> {
    (0..18)
        .map(|i| {
            let (y, m) = if i < 12 {
                (2023, i + 1)
            } else {
                (2024, i - 11)
            };
            const M: [&str; 12] = [
                "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
            ];
            (
                format!("{y} {}", M[m - 1]),
                100.0 + i as f64,
                200.0 + i as f64,
            )
        })
        .collect()
}

#[actix_web::test]
async fn columns_are_found_by_title_when_they_move_and_bad_cells_are_reported() {
    // The same series written in two column orders, with an unrelated column between.
    let data = months();
    let as_text: Vec<(String, String, String)> = data
        .iter()
        .map(|(l, a, b)| (l.clone(), a.to_string(), b.to_string()))
        .collect();
    let first = workbook(
        &["New housing", "All work"],
        &as_text
            .iter()
            .map(|(l, a, b)| (l.as_str(), vec![Some(a.as_str()), Some(b.as_str())]))
            .collect::<Vec<_>>(),
    );
    let moved = workbook(
        &["All work (2015=100)", "Notes", "New housing [note 2]"],
        &as_text
            .iter()
            .map(|(l, a, b)| {
                (
                    l.as_str(),
                    vec![Some(b.as_str()), Some("x"), Some(a.as_str())],
                )
            })
            .collect::<Vec<_>>(),
    );
    let a = world().await;
    let b = world().await;
    let ra = load_workbook(&a, &first).await;
    let rb = load_workbook(&b, &moved).await;
    for r in [&ra, &rb] {
        assert_eq!(
            (r.counts.read, r.counts.loaded, r.counts.rejected),
            (36, 36, 0),
            "{:?}",
            r.rejections
        );
    }
    for app in [&a, &b] {
        let s = terrace_store::costs::series(app.db(), "output", "new_housing")
            .await
            .unwrap();
        assert_eq!(s.len(), 18);
        assert_eq!((s[0].period.as_str(), s[0].value), ("2023M01", 100.0));
        assert_eq!((s[17].period.as_str(), s[17].value), ("2024M06", 117.0));
        let all = terrace_store::costs::series(app.db(), "output", "all_work")
            .await
            .unwrap();
        assert_eq!(all[17].value, 217.0);
        assert_eq!(all[0].base_period.as_deref(), Some("2015"));
    }
    // Loading again changes nothing.
    let again = load_workbook(&b, &moved).await;
    assert_eq!(
        (
            again.counts.loaded,
            again.counts.updated,
            again.counts.unchanged
        ),
        (0, 0, 36)
    );

    // Malformed cells: a word, a negative value, an unreadable period with numbers in its row;
    // the no-value markers and a footnote row yield nothing.
    let bad = workbook(
        &["All work", "Private commercial"],
        &[
            ("2024 Jan", vec![Some("101.5"), Some("99.0")]),
            ("2024 Feb", vec![Some("n/a"), Some("[x]")]),
            ("2024 Mar", vec![Some("-3"), Some("..")]),
            ("Sometime", vec![Some("104"), None]),
            ("Source: ONS", vec![None, None]),
        ],
    );
    let c = world().await;
    let r = load_workbook(&c, &bad).await;
    assert_eq!(
        (r.counts.read, r.counts.loaded, r.counts.rejected),
        (5, 2, 3),
        "{:?}",
        r.rejections
    );
    let got: Vec<(u64, String)> = r
        .rejections
        .iter()
        .map(|j| (j.line, j.reason.clone()))
        .collect();
    assert_eq!(got[0].0, 5);
    assert!(
        got[0]
            .1
            .starts_with("(Table_1!B5) All work: value \"n/a\" is not a number"),
        "{got:?}"
    );
    assert_eq!(got[1].0, 6);
    assert!(got[1].1.starts_with("(Table_1!B6)"), "{got:?}");
    assert!(got[1].1.contains("not above zero"), "{got:?}");
    assert_eq!(got[2].0, 7);
    assert!(
        got[2].1.starts_with("(Table_1!A7) period \"Sometime\""),
        "{got:?}"
    );

    // A workbook with no known series is refused whole.
    let none = workbook(&["Something else"], &[("2024 Jan", vec![Some("1")])]);
    let err = terrace_ingest::load_file(
        c.db(),
        Dataset::OnsConstructionPrices,
        &none.path().join("opi.xlsx"),
        Default::default(),
        &mut Progress::quiet(),
    )
    .await;
    assert!(err.is_err());
}

/// A world with the two test series loaded (output: new housing and all work, 2023M01..2024M06).
async fn cost_world() -> TestApp {
    let app = world().await;
    let data = months();
    let as_text: Vec<(String, String, String)> = data
        .iter()
        .map(|(l, a, b)| (l.clone(), a.to_string(), b.to_string()))
        .collect();
    let wb = workbook(
        &["New housing", "All work"],
        &as_text
            .iter()
            .map(|(l, a, b)| (l.as_str(), vec![Some(a.as_str()), Some(b.as_str())]))
            .collect::<Vec<_>>(),
    );
    load_workbook(&app, &wb).await;
    app
}

#[actix_web::test]
async fn cost_index_series_windows_frequencies_and_not_available() {
    let app = cost_world().await;
    let (acct, key) = account(app.db(), 10).await;
    let svc = service(app.state.clone()).await;
    let go = |q: &str| get(&format!("/v1/site/cost-index?{q}"), &key);

    let r = send(&svc, go("basis=output&sector=new_housing")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 1);
    let s = &r.json["series"];
    assert_eq!(r.json["status"], "ok");
    assert_eq!(s["base_period"], "2015");
    assert_eq!(s["freq"], "monthly");
    assert_eq!(s["n_points"], 18);
    assert!(s["method"].as_str().unwrap().contains("mark-up"));
    assert!(
        s["publisher"]
            .as_str()
            .unwrap()
            .contains("Open Government Licence")
    );

    // Quarterly: means of whole quarters (2024Q3 is not published whole, so absent).
    let r = send(
        &svc,
        go("basis=output&sector=new_housing&freq=quarterly&from_period=2023Q4"),
    )
    .await;
    let pts: Vec<(String, f64)> = r.json["series"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["period"].as_str().unwrap().into(),
                p["value"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        pts,
        vec![
            ("2023Q4".to_string(), 110.0),
            ("2024Q1".to_string(), 113.0),
            ("2024Q2".to_string(), 116.0)
        ]
    );
    // Annual: 2023 whole (mean of 100..111), 2024 not.
    let r = send(&svc, go("basis=output&sector=new_housing&freq=annual")).await;
    assert_eq!(r.json["series"]["points"][0]["value"], 105.5);
    assert_eq!(r.json["series"]["n_points"], 1);
    // A month window in a default sector (all_work).
    let r = send(
        &svc,
        go("basis=output&from_period=2024M02&to_period=2024M03"),
    )
    .await;
    assert_eq!(r.json["sector"], "all_work");
    assert_eq!(r.json["series"]["first_period"], "2024M02");
    assert_eq!(r.json["series"]["last_period"], "2024M03");
    assert_eq!(balance(app.db(), acct).await, 6);

    // not_available, free: tender with no feed, an unloaded sector, an unloaded basis, an empty
    // window.
    for (q, why) in [
        ("basis=tender", "no tender price index is loaded"),
        (
            "basis=output&sector=infrastructure",
            "loaded: all_work, new_housing",
        ),
        ("basis=labour", "no labour series is loaded"),
        ("basis=deflator", "no deflator series is loaded"),
        ("basis=output&from_period=2030", "no monthly point"),
    ] {
        let r = send(&svc, go(q)).await;
        assert_eq!(r.status, 200, "{}", r.json);
        assert_eq!(r.json["status"], "not_available", "{q}");
        assert!(
            r.json["reason"].as_str().unwrap().contains(why),
            "{q}: {}",
            r.json
        );
        assert_eq!(r.json["credits_charged"], 0);
    }
    assert_eq!(balance(app.db(), acct).await, 6);
}

#[actix_web::test]
async fn a_finer_frequency_than_published_is_not_derived() {
    let app = world().await;
    let dir = tempfile::tempdir().unwrap();
    let mut wb = Workbook::new();
    let t = wb.add_worksheet().set_name("Table_2").unwrap();
    t.write_string(0, 0, "Time period").unwrap();
    t.write_string(0, 1, "Implied deflator: all work (2019=100)")
        .unwrap();
    for (i, q) in ["2024 Q1", "2024 Q2", "2024 Q3", "2024 Q4"]
        .iter()
        .enumerate()
    {
        t.write_string(1 + i as u32, 0, *q).unwrap();
        t.write_number(1 + i as u32, 1, 120.0 + i as f64).unwrap();
    }
    wb.save(dir.path().join("opi.xlsx")).unwrap();
    let r = load_workbook(&app, &dir).await;
    assert_eq!(r.counts.loaded, 4);
    let (_, key) = account(app.db(), 10).await;
    let svc = service(app.state.clone()).await;
    let r = send(
        &svc,
        get("/v1/site/cost-index?basis=deflator&freq=monthly", &key),
    )
    .await;
    assert_eq!(r.json["status"], "not_available");
    assert!(
        r.json["reason"]
            .as_str()
            .unwrap()
            .contains("published quarterly")
    );
    let r = send(
        &svc,
        get("/v1/site/cost-index?basis=deflator&freq=annual", &key),
    )
    .await;
    assert_eq!(r.json["series"]["points"][0]["value"], 121.5);
    assert_eq!(r.json["series"]["base_period"], "2019");
}

#[actix_web::test]
async fn build_cost_estimate_on_known_values_and_every_not_available() {
    let app = cost_world().await;
    let (acct, key) = account(app.db(), 20).await;
    let svc = service(app.state.clone()).await;
    let go = |q: &str| get(&format!("/v1/site/build-cost?{q}"), &key);

    // New housing: latest 2024M06 = 117; 2023M06 = 105; 2019M06 not loaded.
    // £2,000/m² at 2023Q1 (mean 101) over 250 m²: 2000 * 117/101 = 2316.83 per m².
    let r = send(
        &svc,
        go("sector=new_housing&gia_m2=250&rate_gbp_m2=2000&rate_period=2023Q1"),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 2);
    let i = &r.json["index"];
    assert_eq!(
        (i["basis"].as_str(), i["latest_period"].as_str()),
        (Some("output"), Some("2024M06"))
    );
    assert_eq!(i["one_year"]["from_period"], "2023M06");
    assert_eq!(i["one_year"]["change_pct"], 11.43);
    assert_eq!(i["five_year"]["status"], "not_available");
    assert_eq!(r.json["location_factor"]["factor"], 1.0);
    assert_eq!(r.json["on_costs"]["editorial"], true);
    let e = &r.json["estimate"];
    assert_eq!(e["status"], "ok");
    assert_eq!(e["index_at_rate_period"], 101.0);
    assert_eq!(e["index_factor"], 1.158416);
    assert_eq!(e["rebased_rate_gbp_m2"], 2316.83);
    let base = 2000.0 * 117.0 / 101.0 * 250.0;
    let round2 = |v: f64| (v * 100.0).round() / 100.0;
    assert_eq!(e["base_cost_gbp"].as_f64(), Some(round2(base)));
    assert_eq!(e["totals"]["low_gbp"].as_f64(), Some(round2(base * 1.25)));
    assert_eq!(e["totals"]["mid_gbp"].as_f64(), Some(round2(base * 1.34)));
    assert_eq!(e["totals"]["high_gbp"].as_f64(), Some(round2(base * 1.46)));
    assert_eq!(r.json["benchmark"]["status"], "not_available");
    assert!(
        r.json["benchmark"]["reason"]
            .as_str()
            .unwrap()
            .contains("no rate is invented")
    );

    // A region without a table: factor not_available, the estimate national and said so.
    let r = send(
        &svc,
        go("sector=new_housing&region=LONDON&gia_m2=100&rate_gbp_m2=1000"),
    )
    .await;
    assert_eq!(r.json["location_factor"]["status"], "not_available");
    assert!(
        r.json["location_factor"]["reason"]
            .as_str()
            .unwrap()
            .contains("no location-factor table")
    );
    assert_eq!(r.json["estimate"]["localised"], false);
    assert_eq!(r.json["estimate"]["base_cost_gbp"], 100_000.0);
    assert!(
        r.json["estimate"]["notes"]
            .to_string()
            .contains("not localised")
    );
    // No area or no rate: no estimate, the rest answered.
    for q in [
        "sector=new_housing",
        "sector=new_housing&gia_m2=100",
        "sector=new_housing&rate_gbp_m2=900",
    ] {
        let r = send(&svc, go(q)).await;
        assert_eq!(r.json["estimate"]["status"], "not_available", "{q}");
        assert!(
            r.json["estimate"]["reason"]
                .as_str()
                .unwrap()
                .contains("give both")
        );
        assert_eq!(r.json["index"]["status"], "ok");
    }
    // A rate period the index does not cover.
    let r = send(
        &svc,
        go("sector=new_housing&gia_m2=1&rate_gbp_m2=1&rate_period=2010Q1"),
    )
    .await;
    assert_eq!(r.json["estimate"]["status"], "not_available");
    assert!(
        r.json["estimate"]["reason"]
            .as_str()
            .unwrap()
            .contains("no value for rate_period 2010Q1")
    );
    assert_eq!(balance(app.db(), acct).await, 20 - 2 * 6);
    // A sector with no index: not_available throughout, and free.
    let r = send(&svc, go("sector=infrastructure&gia_m2=1&rate_gbp_m2=1")).await;
    assert_eq!(r.json["index"]["status"], "not_available");
    assert!(
        r.json["index"]["reason"]
            .as_str()
            .unwrap()
            .contains("loaded: all_work, new_housing")
    );
    assert_eq!(r.json["estimate"]["status"], "not_available");
    assert_eq!(r.json["credits_charged"], 0);

    // The operator feeds: a location factor table, a tender index and a benchmark.
    let f = load_text(
        app.db(),
        Dataset::CostLocationFactors,
        "region,factor,period\nLONDON,1.2,2024Q2\nWales,0.9,\n",
    )
    .await;
    assert_eq!(f.counts.loaded, 2);
    let r = send(
        &svc,
        go("sector=new_housing&region=LONDON&gia_m2=100&rate_gbp_m2=1000"),
    )
    .await;
    assert_eq!(r.json["location_factor"]["factor"], 1.2);
    assert_eq!(r.json["estimate"]["localised"], true);
    assert_eq!(r.json["estimate"]["base_cost_gbp"], 120_000.0);
    let r = send(&svc, go("sector=new_housing&region=SCOTLAND")).await;
    assert!(
        r.json["location_factor"]["reason"]
            .as_str()
            .unwrap()
            .contains("covers LONDON, WALES")
    );
    let b = load_text(
        app.db(),
        Dataset::TenderBenchmarks,
        "sector,period,rate_low_gbp_m2,rate_mid_gbp_m2,rate_high_gbp_m2\nnew_housing,2024Q2,1500,1800,2300\n",
    )
    .await;
    assert_eq!(b.counts.loaded, 1);
    let t = load_text(
        app.db(),
        Dataset::TenderPrices,
        "sector,period,value,base_period\nnew_housing,2024Q1,130,2015\nnew_housing,2024Q2,132.6,2015\n",
    )
    .await;
    assert_eq!(t.counts.loaded, 2);
    let r = send(
        &svc,
        go("sector=new_housing&gia_m2=10&rate_gbp_m2=1000&rate_period=2024Q1"),
    )
    .await;
    assert_eq!(r.json["benchmark"]["rate_mid_gbp_m2"], 1800.0);
    assert_eq!(r.json["index"]["basis"], "tender");
    assert_eq!(r.json["estimate"]["rebased_rate_gbp_m2"], 1020.0);
    let r = send(
        &svc,
        get("/v1/site/cost-index?basis=tender&sector=new_housing", &key),
    )
    .await;
    assert_eq!(r.json["status"], "ok");
    assert_eq!(r.json["series"]["freq"], "quarterly");
}

#[actix_web::test]
async fn every_validation_rule_is_a_free_422() {
    let app = cost_world().await;
    let (acct, key) = account(app.db(), 5).await;
    let svc = service(app.state.clone()).await;
    for (path, loc, kind) in [
        ("/v1/site/cost-index", vec!["query", "basis"], "missing"),
        (
            "/v1/site/cost-index?basis=bcis",
            vec!["query", "basis"],
            "literal_error",
        ),
        (
            "/v1/site/cost-index?basis=output&sector=housing",
            vec!["query", "sector"],
            "literal_error",
        ),
        (
            "/v1/site/cost-index?basis=output&freq=weekly",
            vec!["query", "freq"],
            "literal_error",
        ),
        (
            "/v1/site/cost-index?basis=output&from_period=2024M13",
            vec!["query", "from_period"],
            "value_error",
        ),
        (
            "/v1/site/cost-index?basis=output&to_period=24Q1",
            vec!["query", "to_period"],
            "value_error",
        ),
        (
            "/v1/site/cost-index?basis=output&from_period=2024Q2&to_period=2024M03",
            vec!["query", "to_period"],
            "value_error",
        ),
        ("/v1/site/build-cost", vec!["query", "sector"], "missing"),
        (
            "/v1/site/build-cost?sector=offices",
            vec!["query", "sector"],
            "literal_error",
        ),
        (
            "/v1/site/build-cost?sector=all_work&region=MARS",
            vec!["query", "region"],
            "literal_error",
        ),
        (
            "/v1/site/build-cost?sector=all_work&gia_m2=0",
            vec!["query", "gia_m2"],
            "greater_than_equal",
        ),
        (
            "/v1/site/build-cost?sector=all_work&gia_m2=20000000",
            vec!["query", "gia_m2"],
            "less_than_equal",
        ),
        (
            "/v1/site/build-cost?sector=all_work&rate_gbp_m2=0.5",
            vec!["query", "rate_gbp_m2"],
            "greater_than_equal",
        ),
        (
            "/v1/site/build-cost?sector=all_work&rate_gbp_m2=100001",
            vec!["query", "rate_gbp_m2"],
            "less_than_equal",
        ),
        (
            "/v1/site/build-cost?sector=all_work&gia_m2=ten",
            vec!["query", "gia_m2"],
            "float_parsing",
        ),
        (
            "/v1/site/build-cost?sector=all_work&rate_period=2024-01",
            vec!["query", "rate_period"],
            "value_error",
        ),
    ] {
        let r = send(&svc, get(path, &key)).await;
        check_422(&r, &loc, kind);
    }
    assert_eq!(balance(app.db(), acct).await, 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fixture_world_answers_both_operations() {
    let t = fixture_db().await;
    let state = state_for(&t.db, Default::default()).await;
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("manifest.json")).unwrap())
            .unwrap();
    let cases = &m["cost_cases"];
    let (_, key) = account(&t.db, 100).await;
    let svc = service(state).await;
    let r = send(&svc, get("/v1/site/cost-index?basis=output", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let s = &r.json["series"];
    assert_eq!(s["first_period"], cases["first_month"]);
    assert_eq!(s["last_period"], cases["last_month"]);
    assert_eq!(s["title"], "All work");
    assert!(s["source"].as_str().unwrap().starts_with("fixture:"));
    let last = s["points"].as_array().unwrap().last().unwrap()["value"].clone();
    assert_eq!(last, cases["all_work_latest"]);
    assert_eq!(r.json["sectors_loaded"].as_array().unwrap().len(), 10);
    for q in ["basis=deflator&freq=annual", "basis=labour&freq=quarterly"] {
        let r = send(&svc, get(&format!("/v1/site/cost-index?{q}"), &key)).await;
        assert_eq!(r.json["status"], "ok", "{q}: {}", r.json);
    }
    let r = send(&svc, get("/v1/site/cost-index?basis=tender", &key)).await;
    assert_eq!(r.json["status"], "not_available");
    let r = send(
        &svc,
        get(
            "/v1/site/build-cost?sector=private_commercial&gia_m2=1200&rate_gbp_m2=2500&rate_period=2021Q1",
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["index"]["five_year"]["status"], "ok");
    assert_eq!(r.json["estimate"]["status"], "ok");
    assert!(r.json["estimate"]["index_factor"].as_f64().unwrap() > 1.0);
    assert_eq!(r.json["benchmark"]["status"], "not_available");
}
