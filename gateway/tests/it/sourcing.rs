//! Sourcing (issue 43) on the fixture world: the strategies as data and their readiness per
//! authority, the search (each strategy returns the units the family tables plant for it and
//! not those planted against it, computed here from the raw tables rather than from the
//! sourcing build), overrides and unknown keys, explicit filters, paging stable under inserts,
//! the off-market owners (companies only, individuals counted never named), the area report,
//! and charging with every refusal free.

use crate::support::{
    TestApp, account, balance, fixture_db, get, post_json, send, service, state_for,
};
use crate::validation::check_422;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use terrace_gateway::state::RateLimit;
use terrace_store::scope::AreaScope;

const LAD: &str = "E06009901";
const OTHER_LAD: &str = "E06009902";

async fn app() -> TestApp {
    let t = fixture_db().await;
    let state = state_for(&t.db, RateLimit::default()).await;
    TestApp { t, state }
}

/// Every row of a search, following the cursor.
async fn all_rows<S, B>(svc: &S, key: &str, body: Value) -> (Vec<Value>, Value)
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let mut rows = Vec::new();
    let mut body = body;
    let mut first = Value::Null;
    loop {
        let r = send(svc, post_json("/v1/sourcing/search", key, &body)).await;
        assert_eq!(r.status, 200, "{}", r.json);
        rows.extend(r.json["data"].as_array().unwrap().iter().cloned());
        if first.is_null() {
            first = r.json.clone();
        }
        match r.json["next_cursor"].as_str() {
            Some(c) => body["cursor"] = json!(c),
            None => break,
        }
    }
    (rows, first)
}

fn uprns(rows: &[Value]) -> BTreeSet<i64> {
    rows.iter().map(|r| r["uprn"].as_i64().unwrap()).collect()
}

/// Every row's score is the sum of its components' contributions, and each contribution is its
/// scaled value times its weight.
fn scores_explained(rows: &[Value]) {
    for r in rows {
        let comps = r["score_components"].as_array().unwrap();
        let sum: f64 = comps
            .iter()
            .map(|c| {
                let (s, w, k) = (
                    c["scaled"].as_f64().unwrap(),
                    c["weight"].as_f64().unwrap(),
                    c["contribution"].as_f64().unwrap(),
                );
                assert!((0.0..=1.0).contains(&s), "{c}");
                assert!((s * w - k).abs() < 1e-3, "{c}");
                k
            })
            .sum();
        assert!((sum - r["score"].as_f64().unwrap()).abs() < 1e-3, "{r}");
    }
    // Ranked by score, highest first.
    let scores: Vec<f64> = rows.iter().map(|r| r["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
}

/// The vintage month's first day: the date the features describe.
async fn as_of(db: &terrace_store::Db) -> chrono::NaiveDate {
    let v = terrace_store::valuation::latest_vintage(db)
        .await
        .unwrap()
        .expect("the fixture world builds a vintage");
    chrono::NaiveDate::parse_from_str(&format!("{}-01", v.as_of), "%Y-%m-%d").unwrap()
}

async fn lad_uprns(db: &terrace_store::Db, lad: &str) -> Vec<i64> {
    terrace_store::features::addresses_in_lad(db, lad)
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.uprn)
        .collect()
}

#[actix_web::test]
async fn strategies_are_data_with_readiness_per_authority_and_free() {
    let app = app().await;
    let (acct, key) = account(app.db(), 10).await;
    let svc = service(app.state.clone()).await;
    let r = send(&svc, get("/v1/sourcing/strategies", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 0);
    let all = r.json["strategies"].as_array().unwrap();
    assert!(all.len() >= 8);
    for s in all {
        assert!(s["thesis"].as_str().unwrap().len() > 20);
        assert!(s["version"].is_string());
        assert!(!s["data_gaps"].as_array().unwrap().is_empty());
        for f in s["filters"].as_array().unwrap() {
            assert!(f["key"].is_string() && f["unit"].is_string() && f.get("default").is_some());
        }
        let w: f64 = s["ranking"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["weight"].as_f64().unwrap())
            .sum();
        assert!((w - 1.0).abs() < 1e-9);
        assert!(s.get("data_ready").is_none(), "no area, no verdict");
    }
    let r = send(
        &svc,
        get(&format!("/v1/sourcing/strategies?area={LAD}"), &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["area"], format!("lad:{LAD}"));
    for s in r.json["strategies"].as_array().unwrap() {
        let d = &s["data_ready"];
        let status = d["status"].as_str().unwrap();
        assert!(
            ["ready", "partial", "not_ready"].contains(&status),
            "{}: {d}",
            s["id"]
        );
        // The verdict follows the needs' shares.
        let shares: Vec<Option<f64>> = d["needs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["share"].as_f64())
            .collect();
        let least = shares.iter().map(|s| s.unwrap_or(0.0)).fold(1.0, f64::min);
        match status {
            "ready" => assert!(least >= 0.5, "{d}"),
            "partial" => assert!(least > 0.0 && least < 0.5, "{d}"),
            _ => assert!(shares.iter().any(|s| s.unwrap_or(0.0) <= 0.0), "{d}"),
        }
    }
    // The energy certificates of the fixture world cover the first authority.
    let mees = r.json["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "mees_unlettable")
        .unwrap();
    assert_ne!(mees["data_ready"]["status"], "not_ready", "{mees}");
    // Refusals, free.
    let r = send(&svc, get("/v1/sourcing/strategies?area=E06999999", &key)).await;
    assert_eq!(r.status, 404, "{}", r.json);
    let r = send(&svc, get("/v1/sourcing/strategies?area=Tamberley", &key)).await;
    check_422(&r, &["query", "area"], "value_error");
    assert_eq!(balance(app.db(), acct).await, 10);
}

#[actix_web::test]
async fn mees_strategy_returns_the_f_and_g_homes_of_the_authority_and_not_the_others() {
    let app = app().await;
    let (acct, key) = account(app.db(), 1_000).await;
    let svc = service(app.state.clone()).await;
    // What the certificates plant, read from the certificates themselves.
    let scope =
        AreaScope::of(&terrace_core::AreaId::new(terrace_core::AreaKind::Lad, LAD).unwrap())
            .unwrap();
    let certs = terrace_store::epc::scope_newest_certificates(app.db(), &scope)
        .await
        .unwrap();
    let want: BTreeSet<i64> = certs
        .iter()
        .filter(|c| matches!(c.current_rating.as_deref(), Some("F" | "G")))
        .map(|c| c.uprn)
        .collect();
    let against: BTreeSet<i64> = certs
        .iter()
        .filter(|c| matches!(c.current_rating.as_deref(), Some("A" | "B" | "C" | "D")))
        .map(|c| c.uprn)
        .collect();
    assert!(!want.is_empty() && !against.is_empty());
    let before = balance(app.db(), acct).await;
    let (rows, first) = all_rows(
        &svc,
        &key,
        json!({"lad_code": LAD, "strategy": "mees_unlettable", "limit": 7}),
    )
    .await;
    assert_eq!(uprns(&rows), want);
    assert!(uprns(&rows).is_disjoint(&against));
    scores_explained(&rows);
    for r in &rows {
        assert!(["F", "G"].contains(&r["facts"]["epc_band"].as_str().unwrap()));
        assert_eq!(r["asset"], "unit");
    }
    assert_eq!(first["strategy"], "mees_unlettable");
    assert_eq!(
        first["open_land"].as_str().unwrap().split(':').next(),
        Some("not applicable")
    );
    assert_eq!(first["credits_charged"], 5);
    let pages = rows.len().div_ceil(7) as i64;
    assert_eq!(before - balance(app.db(), acct).await, 5 * pages);

    // An override: band D instead; null switches the band filter off.
    let (rows, first) = all_rows(
        &svc,
        &key,
        json!({"lad_code": LAD, "strategy": "mees_unlettable", "strategy_overrides": {"bands": ["d"]}, "limit": 500}),
    )
    .await;
    assert_eq!(first["filters"]["bands"], json!(["D"]));
    let want_d: BTreeSet<i64> = certs
        .iter()
        .filter(|c| c.current_rating.as_deref() == Some("D"))
        .map(|c| c.uprn)
        .collect();
    assert_eq!(uprns(&rows), want_d);
    let (rows, first) = all_rows(
        &svc,
        &key,
        json!({"lad_code": LAD, "strategy": "mees_unlettable", "strategy_overrides": {"bands": null}, "limit": 500}),
    )
    .await;
    assert_eq!(first["filters"]["bands"], Value::Null);
    assert!(uprns(&rows).is_superset(&want) && uprns(&rows).is_superset(&want_d));
}

#[actix_web::test]
async fn short_leases_and_long_held_company_freeholds_match_the_registers() {
    let app = app().await;
    let (_, key) = account(app.db(), 1_000).await;
    let svc = service(app.state.clone()).await;
    let day = as_of(app.db()).await;
    let in_lad: BTreeSet<i64> = lad_uprns(app.db(), LAD).await.into_iter().collect();
    // Leases: the longest registered lease of each unit, years left at the vintage month.
    let mut longest: std::collections::BTreeMap<i64, chrono::NaiveDate> = Default::default();
    for (_, uprn, _, end) in terrace_store::valuation::lease_terms_page(app.db(), "", 1_000_000)
        .await
        .unwrap()
    {
        let e = longest.entry(uprn).or_insert(end);
        *e = (*e).max(end);
    }
    let years = |end: chrono::NaiveDate| (end - day).num_days() as f64 / 365.25;
    let want: BTreeSet<i64> = longest
        .iter()
        .filter(|(u, e)| in_lad.contains(u) && (0.0..=85.05).contains(&years(**e)))
        .map(|(u, _)| *u)
        .collect();
    let against: BTreeSet<i64> = longest
        .iter()
        .filter(|(u, e)| in_lad.contains(u) && years(**e) > 86.0)
        .map(|(u, _)| *u)
        .collect();
    assert!(!want.is_empty(), "the fixture world plants short leases");
    let (rows, _) = all_rows(
        &svc,
        &key,
        json!({"lad_code": LAD, "strategy": "short_leases", "limit": 500}),
    )
    .await;
    assert_eq!(uprns(&rows), want);
    assert!(uprns(&rows).is_disjoint(&against));
    scores_explained(&rows);
    // Under 80 years scores the cliff component in full.
    for r in &rows {
        let y = r["facts"]["lease_years_remaining"].as_f64().unwrap();
        let cliff = r["score_components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "under_80_years")
            .unwrap();
        assert_eq!(cliff["scaled"].as_f64().unwrap() == 1.0, y < 79.5, "{r}");
    }

    // Company freeholds held 15 years or more, from the titles themselves.
    let uprns_lad: Vec<i64> = in_lad.iter().copied().collect();
    let titles = terrace_store::titles::titles_for_uprns(app.db(), &uprns_lad)
        .await
        .unwrap();
    let freehold = |t: &&terrace_store::titles::TitleRow| {
        t.tenure.as_deref() == Some("Freehold") && t.uprn.is_some()
    };
    let held = |t: &terrace_store::titles::TitleRow| {
        t.date_added.map(|d| (day - d).num_days() as f64 / 365.25)
    };
    let long: BTreeSet<i64> = titles
        .iter()
        .filter(freehold)
        .filter(|t| held(t).is_some_and(|y| y >= 15.05))
        .filter_map(|t| t.uprn)
        .collect();
    let recent: BTreeSet<i64> = titles
        .iter()
        .filter(freehold)
        .filter(|t| held(t).is_some_and(|y| y < 14.9))
        .filter_map(|t| t.uprn)
        .collect();
    assert!(
        !long.is_empty() && !recent.is_empty(),
        "the fixture world plants both"
    );
    let (rows, _) = all_rows(
        &svc,
        &key,
        json!({"lad_code": LAD, "strategy": "long_held_company_freeholds", "limit": 500}),
    )
    .await;
    let got = uprns(&rows);
    assert!(got.is_superset(&long), "{got:?} {long:?}");
    assert!(got.is_disjoint(&recent.difference(&long).copied().collect()));
    for r in &rows {
        let o = &r["facts"]["owner"];
        assert!(o["register"] == "ccod" || o["register"] == "ocod", "{r}");
        assert!(o["name"].is_string());
    }
}

#[actix_web::test]
async fn stalled_lots_and_mixed_use_buildings_match_their_families() {
    let app = app().await;
    let (_, key) = account(app.db(), 1_000).await;
    let svc = service(app.state.clone()).await;
    let mut want = BTreeSet::new();
    let mut sold_only = BTreeSet::new();
    for lad in [LAD, OTHER_LAD] {
        let in_lad = lad_uprns(app.db(), lad).await;
        let lots = terrace_store::features::lots_of_uprns(app.db(), &in_lad)
            .await
            .unwrap();
        for l in &lots {
            if matches!(l.outcome.as_str(), "unsold" | "withdrawn") {
                want.insert((lad, l.uprn.unwrap()));
            }
        }
        for l in &lots {
            if !want.contains(&(lad, l.uprn.unwrap())) {
                sold_only.insert((lad, l.uprn.unwrap()));
            }
        }
    }
    assert!(!want.is_empty(), "the fixture world plants unsold lots");
    let mut got = BTreeSet::new();
    for lad in [LAD, OTHER_LAD] {
        let (rows, _) = all_rows(
            &svc,
            &key,
            json!({"lad_code": lad, "strategy": "stalled_auction_lots", "limit": 500}),
        )
        .await;
        scores_explained(&rows);
        got.extend(uprns(&rows).into_iter().map(|u| (lad, u)));
    }
    assert_eq!(got, want);
    assert!(got.is_disjoint(&sold_only));

    // Mixed use: units whose building holds a residential and a commercial unit, by class.
    let addrs = terrace_store::features::addresses_in_lad(app.db(), LAD)
        .await
        .unwrap();
    let mut uses: std::collections::BTreeMap<i64, (bool, bool)> = Default::default();
    for a in &addrs {
        if let Some(p) = a.parent_uprn {
            let e = uses.entry(p).or_default();
            let c = a.class.as_deref().unwrap_or("");
            e.0 |= c.starts_with('R') || c.starts_with('X');
            e.1 |= c.starts_with('C') || c.starts_with('X');
        }
    }
    let want: BTreeSet<i64> = addrs
        .iter()
        .filter(|a| {
            let b = a.parent_uprn.unwrap_or(a.uprn);
            uses.get(&b).is_some_and(|(r, c)| *r && *c)
        })
        .map(|a| a.uprn)
        .collect();
    assert!(
        !want.is_empty(),
        "the fixture world plants mixed-use buildings"
    );
    let (rows, _) = all_rows(
        &svc,
        &key,
        json!({"lad_code": LAD, "strategy": "mixed_use_conversions", "limit": 500}),
    )
    .await;
    assert_eq!(uprns(&rows), want);
}

#[actix_web::test]
async fn parcels_exclude_open_land_and_explicit_filters_rank_by_their_strategies() {
    let app = app().await;
    let (_, key) = account(app.db(), 1_000).await;
    let svc = service(app.state.clone()).await;
    // The fixture world's plots are small: a smaller floor finds the unbuilt ones.
    let (rows, first) = all_rows(
        &svc,
        &key,
        json!({"lad_code": LAD, "strategy": "under_built_plots",
               "strategy_overrides": {"min_area_m2": 100}, "limit": 500}),
    )
    .await;
    assert!(first["open_land"].as_str().unwrap().starts_with("excluded"));
    assert!(!rows.is_empty());
    scores_explained(&rows);
    for r in &rows {
        assert_eq!(r["asset"], "parcel");
        let cov = r["plot"]["built_coverage"].as_f64().expect("measured only");
        assert!(cov <= 0.25);
        assert!(r["plot"]["area_m2"].as_f64().unwrap() >= 100.0);
        assert!(r["parcel_id"].is_string());
    }
    // Units through explicit filters: the filters of the unit strategies by key.
    let (rows, first) = all_rows(
        &svc,
        &key,
        json!({"lad_code": LAD, "asset": "unit", "filters": {"bands": ["F", "G"], "max_lease_years": 999}, "limit": 500}),
    )
    .await;
    assert_eq!(first["strategy"], "custom");
    let names: BTreeSet<&str> = first["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains("band_gap") && names.contains("shortness"));
    for r in &rows {
        assert!(["F", "G"].contains(&r["facts"]["epc_band"].as_str().unwrap()));
        assert!(r["facts"]["lease_years_remaining"].is_number());
    }
    scores_explained(&rows);
}

/// At its defaults (400 m2 floor, 25% coverage ceiling) the under-built plots strategy finds
/// exactly the fixture world's large plots, each a 576 m2 plot with a 36 m2 shed.
#[actix_web::test]
async fn under_built_plots_at_their_defaults_find_the_planted_large_plots() {
    let app = app().await;
    let (_, key) = account(app.db(), 1_000).await;
    let svc = service(app.state.clone()).await;
    let m = crate::support::manifest();
    let lc = &m["land_cases"];
    let want: BTreeSet<String> = lc["large_plots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap().to_string())
        .collect();
    assert!(!want.is_empty(), "the fixture world plants large plots");
    let (rows, first) = all_rows(
        &svc,
        &key,
        json!({"lad_code": lc["measured_lad"], "strategy": "under_built_plots"}),
    )
    .await;
    let got: BTreeSet<String> = rows
        .iter()
        .map(|r| r["parcel_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, want, "{first}");
    let area = lc["large_plot_area_m2"].as_f64().unwrap();
    for r in &rows {
        assert!(
            (r["plot"]["area_m2"].as_f64().unwrap() - area).abs() < 1.0,
            "{r}"
        );
        assert!(r["plot"]["built_coverage"].as_f64().unwrap() <= 0.25, "{r}");
    }
    scores_explained(&rows);
}

#[actix_web::test]
async fn search_refusals_are_free_and_say_where() {
    let app = app().await;
    let (acct, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    let s = |b: Value| post_json("/v1/sourcing/search", &key, &b);
    let r = send(&svc, s(json!({"lad_code": LAD, "strategy": "short_leases", "strategy_overrides": {"max_yield": 3}}))).await;
    check_422(
        &r,
        &["body", "strategy_overrides", "max_yield"],
        "value_error",
    );
    let r = send(&svc, s(json!({"lad_code": LAD, "strategy": "short_leases", "strategy_overrides": {"max_lease_years": "long"}}))).await;
    check_422(
        &r,
        &["body", "strategy_overrides", "max_lease_years"],
        "value_error",
    );
    let r = send(&svc, s(json!({"lad_code": LAD, "strategy": "no_such"}))).await;
    check_422(&r, &["body", "strategy"], "value_error");
    let r = send(&svc, s(json!({"strategy": "short_leases"}))).await;
    assert_eq!(r.status, 422, "{}", r.json);
    let r = send(
        &svc,
        s(json!({"lad_code": LAD, "postcode_district": "XT1", "strategy": "short_leases"})),
    )
    .await;
    assert_eq!(r.status, 422, "{}", r.json);
    let r = send(&svc, s(json!({"lad_code": LAD}))).await;
    check_422(&r, &["body", "strategy"], "value_error");
    let r = send(
        &svc,
        s(json!({"lad_code": LAD, "filters": {"bands": ["F"], "min_area_m2": 3}})),
    )
    .await;
    check_422(&r, &["body", "filters", "min_area_m2"], "value_error");
    let r = send(
        &svc,
        s(json!({"bbox": [1.0, 50.0, 0.5, 50.1], "strategy": "short_leases"})),
    )
    .await;
    check_422(&r, &["body", "bbox"], "value_error");
    let r = send(
        &svc,
        s(json!({"lad_code": LAD, "strategy": "short_leases", "cursor": "nope"})),
    )
    .await;
    check_422(&r, &["body", "cursor"], "value_error");
    let r = send(
        &svc,
        s(json!({"lad_code": LAD, "strategy": "short_leases", "colour": "red"})),
    )
    .await;
    assert_eq!(r.status, 422, "{}", r.json);
    let r = send(
        &svc,
        s(json!({"lad_code": "E06999999", "strategy": "short_leases"})),
    )
    .await;
    assert_eq!(r.status, 404, "{}", r.json);
    // A cursor of another query names no page of this one.
    let r = send(
        &svc,
        s(json!({"lad_code": LAD, "strategy": "mees_unlettable", "limit": 1})),
    )
    .await;
    let c = r.json["next_cursor"].as_str().unwrap().to_string();
    let r = send(
        &svc,
        s(json!({"lad_code": LAD, "strategy": "short_leases", "cursor": c})),
    )
    .await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert_eq!(balance(app.db(), acct).await, 100 - 5);
}

#[actix_web::test]
async fn paging_is_stable_under_inserts() {
    let app = app().await;
    let (_, key) = account(app.db(), 1_000).await;
    let svc = service(app.state.clone()).await;
    let body = json!({"lad_code": LAD, "strategy": "mees_unlettable", "limit": 2});
    let (whole, _) = all_rows(&svc, &key, body.clone()).await;
    assert!(whole.len() > 3);
    let r = send(&svc, post_json("/v1/sourcing/search", &key, &body)).await;
    let first: Vec<i64> = r.json["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["uprn"].as_i64().unwrap())
        .collect();
    // A new G-rated unit ranking above everything lands before the cursor: the walk neither
    // repeats nor skips the rows it had not reached.
    let mut planted =
        terrace_store::features::features_by_uprn(app.db(), &[whole[0]["uprn"].as_i64().unwrap()])
            .await
            .unwrap()
            .remove(0);
    planted.uprn = 1;
    planted.epc_band = Some("G".into());
    planted.epc_potential_band = Some("A".into());
    terrace_store::features::replace_features(app.db(), vec![planted])
        .await
        .unwrap();
    let mut rest = Vec::new();
    let mut b = body.clone();
    b["cursor"] = r.json["next_cursor"].clone();
    let (more, _) = all_rows(&svc, &key, b).await;
    rest.extend(more.iter().map(|x| x["uprn"].as_i64().unwrap()));
    let mut walked = first.clone();
    walked.extend(rest);
    let want: Vec<i64> = whole.iter().map(|x| x["uprn"].as_i64().unwrap()).collect();
    assert_eq!(walked, want);
}

#[actix_web::test]
async fn offmarket_owners_are_companies_ranked_with_individuals_counted_not_named() {
    let app = app().await;
    let (acct, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    let r = send(
        &svc,
        post_json(
            "/v1/sourcing/offmarket-owners",
            &key,
            &json!({"lad_code": LAD, "limit": 500}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 6);
    // The company titles linked to the authority's units, grouped by company number.
    let in_lad = lad_uprns(app.db(), LAD).await;
    let titles = terrace_store::titles::titles_for_uprns(app.db(), &in_lad)
        .await
        .unwrap();
    let owned: BTreeSet<i64> = titles
        .iter()
        .filter(|t| t.tenure.as_deref() == Some("Freehold"))
        .filter_map(|t| t.uprn)
        .collect();
    let scope = &r.json["scope"];
    assert_eq!(
        scope["units_itemised"].as_i64().unwrap(),
        owned.len() as i64
    );
    assert_eq!(
        scope["units_in_area"].as_i64().unwrap(),
        in_lad.len() as i64
    );
    assert_eq!(
        scope["not_itemised"].as_i64().unwrap(),
        (in_lad.len() - owned.len()) as i64
    );
    let owners = r.json["data"].as_array().unwrap();
    assert!(!owners.is_empty());
    let units: i64 = owners.iter().map(|o| o["units"].as_i64().unwrap()).sum();
    assert_eq!(units, owned.len() as i64);
    scores_explained(owners);
    for o in owners {
        assert!(["ccod", "ocod"].contains(&o["register"].as_str().unwrap()));
        assert!(!o["signals"].as_array().unwrap().is_empty());
        for u in o["sample_units"].as_array().unwrap() {
            assert!(owned.contains(&u["uprn"].as_i64().unwrap()));
        }
    }
    assert_eq!(r.json["national_portfolio"]["status"], "not_available");
    // min_units and a strategy narrow the holdings.
    let r2 = send(
        &svc,
        post_json(
            "/v1/sourcing/offmarket-owners",
            &key,
            &json!({"lad_code": LAD, "min_units": 2, "limit": 500}),
        ),
    )
    .await;
    assert!(
        r2.json["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["units"].as_i64().unwrap() >= 2)
    );
    let r3 = send(
        &svc,
        post_json(
            "/v1/sourcing/offmarket-owners",
            &key,
            &json!({"lad_code": LAD, "strategy": "long_held_company_freeholds", "limit": 500}),
        ),
    )
    .await;
    assert_eq!(r3.status, 200, "{}", r3.json);
    let held: i64 = r3.json["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["units"].as_i64().unwrap())
        .sum();
    assert!(held <= units);
    for o in r3.json["data"].as_array().unwrap() {
        assert!(o["longest_years_held"].as_f64().unwrap() >= 15.0, "{o}");
    }
    // Refusals, free.
    let before = balance(app.db(), acct).await;
    let p = |b: Value| post_json("/v1/sourcing/offmarket-owners", &key, &b);
    let r = send(
        &svc,
        p(json!({"lad_code": LAD, "postcode_district": "XT1"})),
    )
    .await;
    assert_eq!(r.status, 422, "{}", r.json);
    let r = send(
        &svc,
        p(json!({"lad_code": LAD, "strategy": "under_built_plots"})),
    )
    .await;
    check_422(&r, &["body", "strategy"], "value_error");
    let r = send(
        &svc,
        p(json!({"lad_code": LAD, "strategy_overrides": {"bands": ["F"]}})),
    )
    .await;
    check_422(&r, &["body", "strategy_overrides"], "value_error");
    let r = send(&svc, p(json!({"postcode_district": "ZZ99"}))).await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert_eq!(balance(app.db(), acct).await, before);
}

#[actix_web::test]
async fn area_report_keeps_its_two_scopes_apart() {
    let app = app().await;
    let (acct, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    let r = send(
        &svc,
        get(
            &format!("/v1/market/area-report?lad_code={LAD}&postcode_district=XT1"),
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 8);
    assert_eq!(r.json["scopes"]["authority"], format!("lad:{LAD}"));
    assert_eq!(r.json["scopes"]["district"], "XT1");
    assert!(
        r.json["scopes"]["note"]
            .as_str()
            .unwrap()
            .contains("NOT INTERCHANGEABLE")
    );
    let ready = r.json["sourcing_readiness"].as_array().expect("readiness");
    assert!(ready.len() >= 8);
    assert!(r.json["commercial_market"]["rent_index"].is_object());
    let p = &r.json["planning_decisions"];
    assert!(p["applications"].as_i64().unwrap() > 0, "{p}");
    for y in p["years"].as_array().unwrap() {
        let (a, f, o) = (
            y["approved"].as_i64().unwrap(),
            y["refused"].as_i64().unwrap(),
            y["other"].as_i64().unwrap(),
        );
        assert_eq!(a + f + o, y["decided"].as_i64().unwrap());
    }
    assert!(
        r.json["listing_stock"]["sale"].is_object(),
        "{}",
        r.json["listing_stock"]
    );
    // Only the authority: the district half says why it is missing.
    let r = send(
        &svc,
        get(&format!("/v1/market/area-report?lad_code={LAD}"), &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["listing_stock"]["status"], "not_available");
    assert!(
        r.json["sections_degraded"]
            .as_array()
            .unwrap()
            .contains(&json!("listing_stock"))
    );
    // Only the district.
    let r = send(
        &svc,
        get("/v1/market/area-report?postcode_district=XT1", &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    for s in [
        "sourcing_readiness",
        "commercial_market",
        "planning_decisions",
    ] {
        assert_eq!(r.json[s]["status"], "not_available", "{s}");
        assert!(
            r.json["sections_degraded"]
                .as_array()
                .unwrap()
                .contains(&json!(s))
        );
    }
    let spent = 100 - balance(app.db(), acct).await;
    assert_eq!(spent, 24);
    // Refusals, free.
    let r = send(&svc, get("/v1/market/area-report", &key)).await;
    assert_eq!(r.status, 422, "{}", r.json);
    let r = send(&svc, get("/v1/market/area-report?lad_code=E06999999", &key)).await;
    assert_eq!(r.status, 404, "{}", r.json);
    let r = send(
        &svc,
        get("/v1/market/area-report?postcode_district=ZZ99", &key),
    )
    .await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert_eq!(balance(app.db(), acct).await, 100 - 24);
}

#[actix_web::test]
async fn high_yield_lets_and_distress_signals_match_the_listings_feed() {
    let app = app().await;
    let (_, key) = account(app.db(), 1_000).await;
    let svc = service(app.state.clone()).await;
    for lad in [LAD, OTHER_LAD] {
        let in_lad = lad_uprns(app.db(), lad).await;
        let listings: Vec<_> = terrace_store::features::listings_of_uprns(app.db(), &in_lad)
            .await
            .unwrap()
            .into_iter()
            .filter(|l| l.removed_at.is_none())
            .collect();
        let values: std::collections::BTreeMap<i64, f64> =
            terrace_store::valuation::valuations_of(app.db(), &in_lad)
                .await
                .unwrap()
                .into_iter()
                .filter_map(|v| Some((v.uprn, v.value?)))
                .collect();
        // Gross yield: 12 x the live rent listing's asking rent over the valuation.
        let yields: std::collections::BTreeMap<i64, f64> = listings
            .iter()
            .filter(|l| l.channel == "rent")
            .filter_map(|l| {
                let u = l.uprn?;
                Some((u, 12.0 * l.price? as f64 / values.get(&u)? * 100.0))
            })
            .collect();
        let want: BTreeSet<i64> = yields
            .iter()
            .filter(|(_, y)| **y >= 7.05)
            .map(|(u, _)| *u)
            .collect();
        let against: BTreeSet<i64> = yields
            .iter()
            .filter(|(_, y)| **y < 6.95)
            .map(|(u, _)| *u)
            .collect();
        let (rows, _) = all_rows(
            &svc,
            &key,
            json!({"lad_code": lad, "strategy": "high_yield_lets", "limit": 500}),
        )
        .await;
        assert!(uprns(&rows).is_superset(&want), "{lad}");
        assert!(uprns(&rows).is_disjoint(&against), "{lad}");
        scores_explained(&rows);

        // Distress: the newest live sale listing of a unit with a price reduction in the log.
        let sale: Vec<_> = listings.iter().filter(|l| l.channel == "sale").collect();
        let ids: Vec<String> = sale.iter().map(|l| l.listing_id.clone()).collect();
        let reduced: BTreeSet<String> = terrace_store::listings::events_of(app.db(), &ids)
            .await
            .unwrap()
            .into_iter()
            .filter(|e| e.event_type == "price_reduction")
            .map(|e| e.listing_id)
            .collect();
        let mut newest: std::collections::BTreeMap<i64, &terrace_store::listings::ListingRow> =
            Default::default();
        for l in &sale {
            let e = newest.entry(l.uprn.unwrap()).or_insert(l);
            if e.first_seen <= l.first_seen {
                *e = l;
            }
        }
        let want: BTreeSet<i64> = newest
            .iter()
            .filter(|(_, l)| reduced.contains(&l.listing_id))
            .map(|(u, _)| *u)
            .collect();
        let against: BTreeSet<i64> = newest
            .iter()
            .filter(|(_, l)| !reduced.contains(&l.listing_id))
            .map(|(u, _)| *u)
            .collect();
        assert!(!want.is_empty() && !against.is_empty(), "{lad}");
        let (rows, _) = all_rows(
            &svc,
            &key,
            json!({"lad_code": lad, "strategy": "distress_signals", "limit": 500}),
        )
        .await;
        assert_eq!(uprns(&rows), want, "{lad}");
        scores_explained(&rows);
    }
}
