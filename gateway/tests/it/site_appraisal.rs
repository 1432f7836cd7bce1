//! The site appraisal (issue 43, `GET /v1/site/appraisal`) on the fixture world: a site with a
//! rich picture (a parcel, sales, a certificate and a company title) with each block and each
//! signal's evidence checked against the store, a UPRN on no parcel (the auction re-offers and
//! their repeat failure), a parcel with nothing to say (`signal: none`), exactly one subject,
//! unknown ids free, charging and the 402.

use crate::support::*;
use serde_json::Value;
use terrace_core::Uprn;

const PATH: &str = "/v1/site/appraisal";
const PRICE: i64 = 8;

fn manifest() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join("manifest.json")).unwrap())
        .unwrap()
}

async fn fixture_app() -> (
    terrace_store::testing::TestDb,
    terrace_gateway::state::AppState,
) {
    let t = fixture_db().await;
    let state = state_for(&t.db, Default::default()).await;
    (t, state)
}

fn signals<'a>(r: &'a Value, kind: &str) -> Vec<&'a Value> {
    r["signals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["signal"] == kind)
        .collect()
}

/// The fixture world's UPRN with a parcel, a registered sale, a certificate and a company title
/// (read from the landlord company's titles and the title-to-parcel links).
async fn rich_site(db: &terrace_store::Db) -> (String, i64, i64) {
    let m = manifest();
    let titles = m["ownership_cases"]["landlord_titles"].as_array().unwrap();
    for t in titles {
        let t = t.as_str().unwrap();
        for link in terrace_store::land::parcels_of_title(db, t).await.unwrap() {
            let sales = terrace_store::sales::sales_for_uprn(db, link.uprn, 1)
                .await
                .unwrap();
            let certs = terrace_store::epc::certificates_for_uprn(db, link.uprn)
                .await
                .unwrap();
            if !sales.is_empty() && !certs.is_empty() {
                return (t.to_string(), link.uprn, link.inspire_id);
            }
        }
    }
    panic!("the fixture world has no company-owned site with a sale and a certificate");
}

async fn newest_band(state: &terrace_gateway::state::AppState, uprn: i64) -> Option<String> {
    let ctx = terrace_energy::EnergyCtx {
        db: state.db.clone(),
        areas: state.areas.clone(),
    };
    let a = terrace_energy::epc::certificates(&ctx, Uprn::new(uprn).unwrap())
        .await
        .unwrap();
    a.certificates.first().and_then(|c| c.current_band.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planted_site_has_its_rich_picture_and_each_signal_its_evidence() {
    let (t, state) = fixture_app().await;
    let db = t.db.clone();
    let (title, uprn, land_id) = rich_site(&db).await;
    let (acct, key) = account(&db, 100).await;
    let svc = service(state.clone()).await;
    let r = send(&svc, get(&format!("{PATH}?uprn={uprn}"), &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], PRICE);
    assert_eq!(balance(&db, acct).await, 100 - PRICE);
    assert_eq!(
        terrace_store::accounts::ledger_sum(&db, acct)
            .await
            .unwrap(),
        100 - PRICE
    );
    let a = &r.json;

    // The site: its parcel's figures as the land build wrote them.
    let stats = terrace_store::sourcing::stats_of(&db, &[land_id])
        .await
        .unwrap()
        .remove(0);
    assert_eq!(a["subject"]["uprn"], uprn);
    assert_eq!(a["subject"]["land_id"], land_id.to_string());
    assert_eq!(a["subject"]["point"], "address_point");
    let site = &a["site"];
    assert_eq!(site["status"], "ok", "{site}");
    assert_eq!(site["land_id"], land_id.to_string());
    assert_eq!(site["area_m2"], format!("{:.2}", stats.area_m2));
    assert_eq!(
        site["built_coverage_ratio"].as_str(),
        stats.built_coverage.map(|c| format!("{c:.4}")).as_deref()
    );
    assert_eq!(
        site["land_use"]["tier_a"].as_str(),
        stats.landuse_tier_a.as_deref()
    );
    assert_eq!(site["boundary"]["type"], "MultiPolygon");
    assert!(
        site["units"]
            .as_array()
            .unwrap()
            .contains(&Value::from(uprn)),
        "{site}"
    );

    // Valuation: the vintage's value and the last registered sale.
    let last = terrace_store::sales::sales_for_uprn(&db, uprn, 1)
        .await
        .unwrap()
        .remove(0);
    let unit = &a["valuation"]["units"][0];
    assert_eq!(unit["uprn"], uprn);
    assert_eq!(unit["last_sale"]["price_gbp"], last.price);
    assert_eq!(unit["last_sale"]["date"], last.date.to_string());
    let estimate = terrace_valuation::estimate(&db, Uprn::new(uprn).unwrap())
        .await
        .ok();
    assert_eq!(
        unit["value_gbp"].as_i64(),
        estimate.as_ref().map(|e| e.value)
    );

    // Ownership: the company title, with its company number.
    let own = &a["ownership"];
    assert_eq!(own["status"], "ok");
    let held = own["titles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["title_number"] == title)
        .unwrap_or_else(|| panic!("title {title} not in {own}"));
    let company = manifest()["ownership_cases"]["landlord_company"].clone();
    assert!(
        held["proprietors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["company_number"] == company),
        "{held}"
    );
    let corporate = signals(a, "corporate_owner");
    assert!(
        corporate
            .iter()
            .any(|s| s["evidence"]["title_number"] == title
                && s["evidence"]["company_number"] == company),
        "{}",
        a["signals"]
    );

    // Energy: the newest certificate's band, and MEES on it.
    let band = newest_band(&state, uprn).await;
    let e = &a["energy"]["units"][0];
    assert_eq!(a["energy"]["status"], "ok");
    assert_eq!(e["current_band"].as_str(), band.as_deref());
    let below = matches!(band.as_deref(), Some("F" | "G"));
    assert_eq!(e["mees"]["status"] == "below_minimum", below, "{e}");
    let mees = signals(a, "mees_unlettable");
    assert_eq!(mees.len(), usize::from(below), "{}", a["signals"]);
    if below {
        assert_eq!(mees[0]["evidence"]["band"].as_str(), band.as_deref());
    }

    // Under-built: exactly when the measured coverage is under 0.30, with the ratio.
    let under = signals(a, "under_built");
    match stats.built_coverage {
        Some(c) if c < 0.30 => {
            assert_eq!(under.len(), 1, "{}", a["signals"]);
            assert_eq!(
                under[0]["evidence"]["built_coverage_ratio"],
                format!("{c:.4}")
            );
            assert_eq!(under[0]["evidence"]["threshold"], "0.30");
        }
        _ => assert!(under.is_empty(), "{}", a["signals"]),
    }

    // Long held: exactly when the last sale is 15 years or more before the vintage month, with
    // the nominal gain of the value over the last price.
    let long = signals(a, "long_held");
    match &estimate {
        Some(e) => {
            let (y, m) = e.as_of.split_once('-').unwrap();
            let day =
                chrono::NaiveDate::from_ymd_opt(y.parse().unwrap(), m.parse().unwrap(), 1).unwrap();
            let years = (day - last.date).num_days() as f64 / 365.25;
            assert_eq!(long.len(), usize::from(years >= 15.0), "{}", a["signals"]);
            if let Some(s) = long.first() {
                assert_eq!(s["evidence"]["nominal_gain_gbp"], e.value - last.price);
                assert_eq!(s["evidence"]["last_sale_price_gbp"], last.price);
            }
        }
        None => assert!(long.is_empty()),
    }
    assert!(signals(a, "none").is_empty());

    // Designations are three-valued words, each flag with its status.
    let flags = a["designations"]["flags"].as_array().unwrap();
    assert!(flags.iter().any(|f| f["flag"] == "conservation_area"));
    assert!(flags.iter().all(|f| {
        matches!(
            f["status"].as_str(),
            Some("in_zone" | "checked_false" | "not_checked")
        )
    }));
    // Cost context: the sector index, never an invented rate.
    assert!(a["cost_context"]["index"].is_object());
    assert!(a["cost_context"].get("estimate").is_none());

    // The same parcel by land_id lists the UPRN among its units and the same title.
    let r = send(&svc, get(&format!("{PATH}?land_id={land_id}"), &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let b = &r.json;
    assert_eq!(b["subject"]["point"], "parcel_interior_point");
    assert!(b["subject"]["uprn"].is_null());
    assert!(
        b["ownership"]["titles"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["title_number"] == title)
    );
    assert_eq!(balance(&db, acct).await, 100 - 2 * PRICE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_uprn_on_no_parcel_is_appraised_and_its_repeat_auction_failure_shown() {
    let (t, state) = fixture_app().await;
    let db = t.db.clone();
    let m = manifest();
    let mut chosen = None;
    for u in m["auction_cases"]["distressed_uprns"].as_array().unwrap() {
        let u = u.as_i64().unwrap();
        if terrace_store::land::parcel_addresses_by_uprn(&db, &[u])
            .await
            .unwrap()
            .is_empty()
        {
            chosen = Some(u);
            break;
        }
    }
    let uprn = chosen.expect("a distressed UPRN on no parcel");
    let (_, key) = account(&db, 100).await;
    let svc = service(state).await;
    let r = send(&svc, get(&format!("{PATH}?uprn={uprn}"), &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], PRICE);
    let a = &r.json;
    assert_eq!(a["site"]["status"], "not_available");
    assert!(
        a["site"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("no_parcel"),
        "{}",
        a["site"]
    );
    assert!(a["subject"]["land_id"].is_null());
    assert!(a["site"]["built_coverage_ratio"].is_null());

    // The planted lots: offered three times, never sold; every offer of the property (linked
    // by UPRN or by address), oldest first.
    let matched = terrace_store::auctions::lots_where(
        &db,
        &terrace_store::auctions::LotFilter {
            uprn: Some(uprn),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let mut keys: Vec<String> = matched
        .into_iter()
        .map(|l| l.property_key.unwrap_or(l.lot_key))
        .collect();
    keys.dedup();
    assert_eq!(keys.len(), 1, "{keys:?}");
    let lots = terrace_store::auctions::lots_of_properties(&db, &keys)
        .await
        .unwrap();
    assert!(lots.len() >= 3);
    let props = a["auction_history"]["properties"].as_array().unwrap();
    assert_eq!(a["auction_history"]["status"], "ok");
    let p = props
        .iter()
        .find(|p| p["uprn"] == uprn)
        .unwrap_or_else(|| panic!("{props:?}"));
    assert_eq!(p["ever_sold"], false);
    assert_eq!(p["lots"].as_array().unwrap().len(), lots.len());
    assert_eq!(p["property_id"], keys[0]);

    // The signal's evidence: the offers and the last guide over the vintage's estimate.
    let s = signals(a, "repeat_auction_failure");
    assert_eq!(s.len(), 1, "{}", a["signals"]);
    let ev = &s[0]["evidence"];
    let offered = lots
        .iter()
        .filter(|l| {
            matches!(
                l.outcome.as_str(),
                "sold" | "unsold" | "sold_prior" | "sold_after"
            )
        })
        .count();
    assert_eq!(ev["offers"], offered);
    let last = lots.iter().rev().find(|l| l.guide_low.is_some()).unwrap();
    let guide = match last.guide_high {
        Some(h) => (last.guide_low.unwrap() + h) as f64 / 2.0,
        None => last.guide_low.unwrap() as f64,
    };
    assert_eq!(ev["last_guide_gbp"].as_f64(), Some(guide));
    match terrace_valuation::estimate(&db, Uprn::new(uprn).unwrap()).await {
        Ok(e) => {
            assert_eq!(ev["estimate_gbp"], e.value);
            let ratio = (guide / e.value as f64 * 1000.0).round() / 1000.0;
            assert_eq!(ev["guide_to_estimate"].as_f64(), Some(ratio));
        }
        Err(_) => assert!(ev["guide_to_estimate"].is_null()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_with_nothing_to_say_says_signal_none() {
    let (t, state) = fixture_app().await;
    let db = t.db.clone();
    let m = manifest();
    let unmeasured = m["land_cases"]["unmeasured_lad"].as_str().unwrap();
    let (acct, key) = account(&db, 1000).await;
    let svc = service(state.clone()).await;
    // A parcel of the unmeasured authority (coverage null: never under-built) whose units have
    // no company title, no auction lot, no F or G certificate and no sale 15 years old.
    let parcels = terrace_store::land::parcels_in_lad(&db, Some(unmeasured), 0, 100)
        .await
        .unwrap();
    let mut quiet = None;
    for p in parcels {
        let units: Vec<i64> = terrace_store::sourcing::units_on(&db, p.inspire_id, 100)
            .await
            .unwrap()
            .into_iter()
            .map(|(u, _)| u)
            .collect();
        if units.is_empty() {
            continue;
        }
        if !terrace_store::titles::titles_for_uprns(&db, &units)
            .await
            .unwrap()
            .is_empty()
        {
            continue;
        }
        let mut ok = true;
        for &u in &units {
            let lots = terrace_store::auctions::lots_where(
                &db,
                &terrace_store::auctions::LotFilter {
                    uprn: Some(u),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
            let band = newest_band(&state, u).await;
            let old_sale = terrace_store::sales::sales_for_uprn(&db, u, 1)
                .await
                .unwrap()
                .first()
                .is_some_and(|s| s.date < chrono::NaiveDate::from_ymd_opt(2013, 1, 1).unwrap());
            if !lots.is_empty() || matches!(band.as_deref(), Some("F" | "G")) || old_sale {
                ok = false;
                break;
            }
        }
        if ok {
            quiet = Some(p.inspire_id);
            break;
        }
    }
    let land_id = quiet.expect("a quiet parcel in the unmeasured authority");
    let r = send(&svc, get(&format!("{PATH}?land_id={land_id}"), &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let a = &r.json;
    assert_eq!(
        a["signals"],
        serde_json::json!([{"signal": "none"}]),
        "{}",
        a["signals"]
    );
    // Unmeasured coverage is null, never 0; no title is not_available with the reason.
    assert_eq!(a["site"]["status"], "ok");
    assert!(a["site"]["built_coverage_ratio"].is_null());
    assert_eq!(a["ownership"]["status"], "not_available");
    assert!(
        a["ownership"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("no_open_title_link")
    );
    assert_eq!(r.json["credits_charged"], PRICE);
    assert_eq!(balance(&db, acct).await, 1000 - PRICE);
}

#[tokio::test]
async fn exactly_one_subject_and_unknown_ids_cost_nothing() {
    let app = world().await;
    let (acct, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    for (q, loc, kind) in [
        ("", &["query", "uprn"][..], "missing"),
        (
            "?uprn=990000000001&land_id=60000001",
            &["query"][..],
            "value_error",
        ),
        ("?land_id=abc", &["query", "land_id"][..], "value_error"),
        ("?land_id=", &["query", "land_id"][..], "string_too_short"),
        ("?uprn=0", &["query", "uprn"][..], "greater_than_equal"),
    ] {
        let r = send(&svc, get(&format!("{PATH}{q}"), &key)).await;
        check_422(&r, loc, kind);
    }
    for q in ["?uprn=999999999999", "?land_id=1"] {
        let r = send(&svc, get(&format!("{PATH}{q}"), &key)).await;
        assert_eq!(
            (r.status, r.json["credits_charged"].as_i64()),
            (404, Some(0)),
            "{q}: {}",
            r.json
        );
    }
    assert_eq!(balance(app.db(), acct).await, 100);

    // An account that cannot afford the appraisal: 402 with the price, nothing charged.
    let (poor, poor_key) = account(app.db(), PRICE - 1).await;
    let r = send(&svc, get(&format!("{PATH}?uprn=990000000001"), &poor_key)).await;
    assert_eq!(r.status, 402, "{}", r.json);
    assert_eq!(r.json["credits_required"], PRICE);
    assert_eq!(balance(app.db(), poor).await, PRICE - 1);
}

#[tokio::test]
async fn a_bare_register_answers_with_every_block_said_not_available() {
    // The small world: an address and nothing else loaded. Every block but the designations
    // (not_checked) and the cost context says why it is empty; the signals say none.
    let app = world().await;
    let (acct, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    let r = send(&svc, get(&format!("{PATH}?uprn=990000000001"), &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let a = &r.json;
    for block in [
        "site",
        "valuation",
        "ownership",
        "energy",
        "auction_history",
        "designations",
        "cost_context",
    ] {
        assert_eq!(a[block]["status"], "not_available", "{block}: {}", a[block]);
        assert!(
            a[block]["reason"].as_str().is_some_and(|s| !s.is_empty()),
            "{block}"
        );
    }
    assert_eq!(a["planning_nearby"]["status"], "not_covered");
    assert_eq!(a["signals"], serde_json::json!([{"signal": "none"}]));
    // Nothing could be said: the call is free.
    assert_eq!(r.json["credits_charged"], 0, "{}", r.json);
    assert_eq!(balance(app.db(), acct).await, 100);
}
