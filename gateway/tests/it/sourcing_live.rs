//! `POST /v1/sourcing/live-listings`: the enrichment of the fixture world's current listings
//! checked against the store's own figures (valuation, floor area, certificate, district
//! medians), paging, charging, the no-feed answer and every validation rule.

use crate::support::*;
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};

const PATH: &str = "/v1/sourcing/live-listings";

#[actix_web::test]
async fn without_a_feed_live_listings_are_not_available_and_free() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, post_json(PATH, &key, &json!({"districts": ["XT1"]}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["status"], "not_available");
    assert!(
        r.json["reason"]
            .as_str()
            .unwrap()
            .starts_with("no_listings_feed")
    );
    assert_eq!(r.json["data"], json!([]));
    assert_eq!(r.json["credits_charged"], 0);
    assert_eq!(balance(w.db(), acct).await, 10);
}

#[actix_web::test]
async fn live_listings_validation() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let eleven: Vec<String> = (1..=11).map(|i| format!("XT{i}")).collect();
    for (body, loc, kind) in [
        (
            json!({"districts": []}),
            vec!["body", "districts"],
            "too_short",
        ),
        (
            json!({"districts": eleven}),
            vec!["body", "districts"],
            "too_long",
        ),
        (
            json!({"districts": ["XT1", "NOT A DISTRICT"]}),
            vec!["body", "districts", "1"],
            "value_error",
        ),
        (
            json!({"districts": ["XT1"], "limit": 0}),
            vec!["body", "limit"],
            "greater_than_equal",
        ),
        (
            json!({"districts": ["XT1"], "limit": 201}),
            vec!["body", "limit"],
            "less_than_equal",
        ),
    ] {
        let r = send(&svc, post_json(PATH, &key, &body)).await;
        check_422(&r, &loc, kind);
    }
    for body in [
        json!({"districts": ["XT1"], "colour": "red"}),
        json!({"districts": ["XT1"], "channel": "auction"}),
        json!({}),
        json!({"districts": ["XT1"], "cursor": "not a cursor"}),
    ] {
        let r = send(&svc, post_json(PATH, &key, &body)).await;
        assert_eq!(r.status, 422, "{body}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
    }
    assert_eq!(balance(w.db(), acct).await, 10);
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[actix_web::test]
async fn live_listings_are_enriched_and_paged() {
    let w = small_world_and_fixtures().await;
    let db = w.db();
    let (acct, key) = account(db, 200).await;
    let svc = service(w.state.clone()).await;

    // The districts with listings in the fixture feed.
    let all = terrace_store::listings::listings_in_area(
        db,
        &terrace_store::listings::ListingArea::National,
    )
    .await
    .unwrap();
    let districts: Vec<String> = all
        .iter()
        .filter_map(|l| l.postcode.as_deref()?.split(' ').next().map(str::to_string))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .take(10)
        .collect();
    assert!(!districts.is_empty());
    let listing_of: HashMap<&str, &terrace_store::listings::ListingRow> =
        all.iter().map(|l| (l.listing_id.as_str(), l)).collect();

    // Every page of sale listings, 7 at a time.
    let mut rows: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut body = json!({"districts": districts, "limit": 7});
        if let Some(c) = &cursor {
            body["cursor"] = json!(c);
        }
        let before = balance(db, acct).await;
        let r = send(&svc, post_json(PATH, &key, &body)).await;
        assert_eq!(r.status, 200, "{}", r.json);
        assert_eq!(r.json["status"], "ok");
        assert_eq!(r.json["credits_charged"], 5);
        assert_eq!(balance(db, acct).await, before - 5);
        let data = r.json["data"].as_array().unwrap();
        assert!(data.len() <= 7);
        rows.extend(data.iter().cloned());
        pages += 1;
        match r.json["next_cursor"].as_str() {
            Some(c) => {
                assert_eq!(data.len(), 7);
                cursor = Some(c.to_string());
            }
            None => break,
        }
        assert!(pages < 100);
    }
    assert_eq!(
        terrace_store::accounts::ledger_sum(db, acct).await.unwrap(),
        balance(db, acct).await
    );
    assert!(rows.len() > 7, "{} rows", rows.len());
    // Listing-id order, no repeats across pages.
    let ids: Vec<&str> = rows
        .iter()
        .map(|r| r["listing_id"].as_str().unwrap())
        .collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(ids, sorted);

    let vintage = terrace_store::valuation::latest_vintage(db)
        .await
        .unwrap()
        .unwrap();
    let (mut valued, mut per_m2, mut certs, mut yields, mut flags) = (0, 0, 0, 0, 0);
    for row in &rows {
        let id = row["listing_id"].as_str().unwrap();
        let l = listing_of[id];
        assert_eq!(row["channel"], "sale");
        assert_eq!(l.channel, "sale");
        assert!(districts.contains(&row["district"].as_str().unwrap().to_string()));
        assert_eq!(row["asking_gbp"].as_i64(), l.price);
        assert_eq!(row["agent"].as_str(), l.agent.as_deref());
        let asking = l.price.unwrap_or(0) as f64;
        // Asking against the vintage's value of the UPRN.
        let av = &row["against_valuation"];
        if av["status"] == "not_available" {
            assert!(av["reason"].as_str().is_some());
        } else {
            valued += 1;
            let v = terrace_store::valuation::valuations_of(db, &[l.uprn.unwrap()])
                .await
                .unwrap()
                .into_iter()
                .find(|v| v.as_of == vintage.as_of && v.model_version == vintage.model_version)
                .unwrap()
                .value
                .unwrap();
            assert_eq!(av["value_gbp"].as_i64().unwrap(), v.round() as i64);
            assert!(
                close(av["ratio"].as_f64().unwrap(), asking / v, 1e-4),
                "{av}"
            );
            assert_eq!(
                av["difference_gbp"].as_i64().unwrap(),
                l.price.unwrap() - v.round() as i64
            );
        }
        // Price per square metre, from the stated floor area.
        let cert = match l.uprn {
            Some(u) => terrace_store::epc::epc_for_uprn(db, u)
                .await
                .unwrap()
                .into_iter()
                .next(),
            None => None,
        };
        let pm = &row["price_per_m2"];
        if pm["status"] != "not_available" {
            per_m2 += 1;
            let area = match pm["floor_area_source"].as_str().unwrap() {
                "listing" => l.floor_area_m2.unwrap(),
                "epc" => {
                    assert!(l.floor_area_m2.is_none());
                    cert.as_ref().unwrap().total_floor_area.unwrap()
                }
                other => panic!("{other}"),
            };
            assert!(close(pm["floor_area_m2"].as_f64().unwrap(), area, 1e-9));
            assert!(close(pm["value"].as_f64().unwrap(), asking / area, 0.01));
        }
        // The certificate and the letting standard.
        let e = &row["energy"];
        if e["status"] != "not_available" {
            certs += 1;
            let c = cert.as_ref().unwrap();
            assert_eq!(e["current_band"].as_str(), c.current_rating.as_deref());
            assert_eq!(e["potential_band"].as_str(), c.potential_rating.as_deref());
            let unlettable = matches!(c.current_rating.as_deref(), Some("F" | "G"));
            assert_eq!(
                e["mees"]["lawful_to_let_without_exemption"] == json!(false),
                unlettable
            );
            assert_eq!(
                row["signals"].as_str().unwrap().contains("MEES-unlettable"),
                unlettable
            );
        } else {
            assert!(cert.is_none() || l.uprn.is_none());
        }
        // Yields: twelve months of rent over the price, with the median's n.
        let y = &row["gross_yield_asking"];
        if y["status"] != "not_available" {
            yields += 1;
            assert!(y["n"].as_i64().unwrap() >= 5);
            assert_eq!(y["price_gbp"].as_i64(), l.price);
            let expect = 12.0 * y["rent_pcm"].as_f64().unwrap() / asking;
            assert!(close(y["gross_yield"].as_f64().unwrap(), expect, 1e-4));
        }
        let ya = &row["gross_yield_avm"];
        if ya["status"] != "not_available" {
            assert_eq!(
                ya["price_gbp"].as_i64().unwrap(),
                av["value_gbp"].as_i64().unwrap()
            );
        }
        if row["designations"]["status"] != "not_available" {
            flags += 1;
            for (_, f) in row["designations"].as_object().unwrap() {
                assert!(f.is_boolean() || f == "not_checked", "{f}");
            }
        }
        // One line of signals, `none` exactly when there is none.
        let list = row["signal_list"].as_array().unwrap();
        assert_eq!(row["signals"] == "none", list.is_empty(), "{row}");
        assert!(row["days_listed"].as_i64().unwrap() >= 0);
    }
    assert!(
        valued > 0 && per_m2 > 0 && certs > 0 && flags > 0,
        "{valued} {per_m2} {certs} {flags}"
    );
    let _ = yields;

    // Rent listings: a rent is never compared with a capital value.
    let r = send(
        &svc,
        post_json(
            PATH,
            &key,
            &json!({"districts": districts, "channel": "rent", "limit": 200}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    for row in r.json["data"].as_array().unwrap() {
        assert_eq!(row["channel"], "rent");
        assert_eq!(row["against_valuation"]["status"], "not_available");
    }

    // A cursor of another query is refused (404), free.
    let before = balance(db, acct).await;
    let first = send(
        &svc,
        post_json(PATH, &key, &json!({"districts": districts, "limit": 1})),
    )
    .await;
    let c = first.json["next_cursor"].as_str().unwrap().to_string();
    let after_first = balance(db, acct).await;
    assert_eq!(after_first, before - 5);
    let r = send(
        &svc,
        post_json(
            PATH,
            &key,
            &json!({"districts": districts, "channel": "rent", "cursor": c}),
        ),
    )
    .await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert_eq!(balance(db, acct).await, after_first);
}
