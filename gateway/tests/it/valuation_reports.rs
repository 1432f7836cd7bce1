//! The valuation reports on the fixture world: the comparable ledger (counts before and after the
//! fence, each line's factors and index), the full block (a back-series labelled `constructed`,
//! the rent and yield, the trust score's parts) and the long-held properties of an area
//! (ordering, filters, paging, charging, 404 and every validation rule).

use crate::support::*;
use crate::valuation::{all_valuations, fixture_world};
use serde_json::{Value, json};
use terrace_store::valuation::{self as vs, ValuationRow};

fn round100(v: f64) -> i64 {
    ((v / 100.0).round() * 100.0) as i64
}

#[actix_web::test]
async fn the_comparable_ledger_shows_each_adjustment_and_the_fence() {
    let w = fixture_world().await;
    let rows = all_valuations(&w).await;
    let (acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;
    // A property whose comparables were fenced (at least four of them).
    let subject = rows
        .iter()
        .filter(|r| r.n_comparables.unwrap_or(0) >= 4)
        .max_by_key(|r| {
            (
                r.n_comparables.unwrap_or(0) - r.n_comparables_fenced.unwrap_or(0),
                r.uprn,
            )
        })
        .expect("a property with four or more comparables");
    let lines = vs::comparables_of(w.db(), subject.uprn).await.unwrap();
    let r = send(
        &svc,
        get(
            &format!("/v1/valuation/{}/comps-adjustments", subject.uprn),
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["status"], "ok");
    assert_eq!(r.json["credits_charged"], 3);
    assert_eq!(balance(w.db(), acct).await, 97);
    let comps = r.json["comparables"].as_array().unwrap();
    assert_eq!(comps.len() as i64, subject.n_comparables.unwrap());
    assert_eq!(r.json["n_before_fence"], subject.n_comparables.unwrap());
    assert_eq!(
        r.json["n_after_fence"],
        subject.n_comparables_fenced.unwrap()
    );
    let kept = comps.iter().filter(|c| c["fence"] == "kept").count() as i64;
    let dropped = comps.iter().filter(|c| c["fence"] == "dropped").count() as i64;
    assert_eq!(kept, subject.n_comparables_fenced.unwrap());
    assert_eq!(kept + dropped, subject.n_comparables.unwrap());
    let fence = &r.json["fence"];
    let (lo, hi) = (fence["lo"].as_i64().unwrap(), fence["hi"].as_i64().unwrap());
    assert!(lo < hi, "{fence}");
    for c in comps {
        let adj = c["adjusted_value"].as_i64().unwrap();
        // A kept comparable lies inside the fence, a dropped one outside (to rounding).
        if c["fence"] == "kept" {
            assert!(adj >= lo - 100 && adj <= hi + 100, "{c}");
        } else {
            assert!(adj <= lo + 100 || adj >= hi - 100, "{c}");
        }
        // adjusted = price x time factor x size-and-type factor x relisting factor.
        let line = &lines[c["line"].as_i64().unwrap() as usize];
        let relist = c["relisting"]["factor"].as_f64().unwrap();
        let expect = line.price as f64 * line.time_factor * line.size_factor * relist;
        assert!((line.adjusted - expect).abs() < 1e-6 * expect, "{c}");
        assert_eq!(adj, round100(line.adjusted), "{c}");
        assert!((c["time"]["factor"].as_f64().unwrap() - line.time_factor).abs() < 1e-4);
        assert_eq!(c["time"]["to_period"], subject.as_of.as_str());
        assert_eq!(c["time"]["from_period"], line.sale_month.as_str());
        let geo = c["time"]["geography"].as_str().unwrap();
        assert!(
            geo.starts_with("district:") || geo == "national:UK",
            "{geo}"
        );
        assert!(c["time"]["method"].is_string(), "{c}");
        // The fixture world links too few relisted resales to measure a penalty: factor 1, and
        // the reason says how many it has against the minimum.
        assert_eq!(c["relisting"]["factor"], 1.0);
        assert_eq!(c["relisting"]["applied"], false);
        let why = c["relisting"]["reason"].as_str().unwrap();
        assert!(
            why.contains("no relisting penalty is applied") || why.contains("no relist shown"),
            "{why}"
        );
        assert!(
            ["same_building", "same_street", "nearest_same_type"]
                .contains(&c["tier"].as_str().unwrap()),
            "{c}"
        );
        assert_eq!(c["distance_m"], json!(line.distance_m.map(f64::round)));
    }
    assert_eq!(r.json["tier"], comps[0]["tier"]);
    assert_eq!(
        r.json["comparables_value"].as_i64(),
        subject.estimate_comparables.map(round100)
    );

    // A valued property with no comparable: not_available, free.
    let lonely = rows
        .iter()
        .find(|r| r.value.is_some() && r.n_comparables == Some(0))
        .expect("a valued property without comparables");
    let r = send(
        &svc,
        get(
            &format!("/v1/valuation/{}/comps-adjustments", lonely.uprn),
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        (
            r.json["status"].as_str(),
            r.json["credits_charged"].as_i64()
        ),
        (Some("not_available"), Some(0))
    );
    assert_eq!(r.json["n_before_fence"], 0);
    assert!(r.json["reason"].as_str().unwrap().len() > 10);
    // No row: 404, free; a bad UPRN: 422, free.
    let r = send(
        &svc,
        get("/v1/valuation/999999999999/comps-adjustments", &key),
    )
    .await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (404, Some(0))
    );
    check_422(
        &send(&svc, get("/v1/valuation/0/comps-adjustments", &key)).await,
        &["path", "uprn"],
        "greater_than_equal",
    );
    check_422(
        &send(&svc, get("/v1/valuation/abc/comps-adjustments", &key)).await,
        &["path", "uprn"],
        "int_parsing",
    );
    assert_eq!(balance(w.db(), acct).await, 97);
}

/// The nearest-same-type tier on the fixture world: a sale's position is its UPRN's register
/// coordinates, else its postcode's centroid; a property whose building and street give fewer
/// than six comparables takes the nearest sales of its type within 1 km completed in the 24
/// months to the vintage, nearest first, each with its distance, stored with the ledger and
/// served by comps-adjustments.
#[actix_web::test]
async fn the_nearest_same_type_tier_fills_the_ledger_by_distance() {
    use terrace_analytics::{Month, NEAREST_FILL, NEAREST_MAX_AGE_MONTHS, NEAREST_RADIUS_M};
    use terrace_valuation::inputs::{self, Inputs};
    let w = fixture_world().await;
    let inp = inputs::gather(w.db()).await.unwrap();
    let (mut from_register, mut from_postcode) = (0, 0);
    for s in &inp.sales {
        let Some(p) = s.position else { continue };
        match Inputs::uprn_of(s.property).and_then(|u| inp.positions.get(&u)) {
            Some(q) => {
                assert_eq!(*q, p);
                from_register += 1;
            }
            None => {
                assert!(inp.postcode_positions.values().any(|q| *q == p), "{s:?}");
                from_postcode += 1;
            }
        }
    }
    eprintln!(
        "positions: {from_register} sales from the register, {from_postcode} from postcode centroids, {} without",
        inp.sales.len() - from_register - from_postcode
    );
    assert!(from_register > 100, "{from_register}");
    // A sale no UPRN is linked to (loaded, not yet linked) sits at its postcode's centroid.
    load_text(
        w.db(),
        terrace_ingest::Dataset::PricePaid,
        "\"{0A1B2C3D-0000-4000-8000-000000000001}\",\"123457\",\"2025-09-12 00:00\",\"XT1 1AB\",\"T\",\"N\",\"F\",\"999\",\"\",\"NOWHERE LANE\",\"\",\"TAMBERLEY\",\"TAMBERLEY\",\"TAMBERLEY\",\"A\",\"A\"\n",
    )
    .await;
    let centroid = terrace_store::address::postcode(w.db(), "XT1 1AB")
        .await
        .unwrap()
        .and_then(|p| p.easting.zip(p.northing))
        .unwrap();
    let again = inputs::gather(w.db()).await.unwrap();
    let planted = again.sales.iter().find(|s| s.price == 123_457).unwrap();
    assert_eq!(Inputs::uprn_of(planted.property), None);
    assert_eq!(planted.position, Some(centroid));

    let rows = all_valuations(&w).await;
    let mut found: Option<(&ValuationRow, Vec<vs::ComparableRow>)> = None;
    let mut with_nearest = 0;
    for r in rows.iter().filter(|r| r.n_comparables.unwrap_or(0) > 0) {
        let lines = vs::comparables_of(w.db(), r.uprn).await.unwrap();
        let Some(first) = lines.iter().position(|l| l.tier == "nearest_same_type") else {
            continue;
        };
        with_nearest += 1;
        // Only to fill the ledger up to six, after the building and street tiers.
        assert!(lines.len() <= NEAREST_FILL, "{lines:?}");
        assert!(lines[..first].iter().all(|l| l.tier != "nearest_same_type"));
        assert!(lines[first..].iter().all(|l| l.tier == "nearest_same_type"));
        let as_of = Month::parse(&r.as_of).unwrap();
        let d: Vec<f64> = lines[first..]
            .iter()
            .map(|l| l.distance_m.unwrap())
            .collect();
        assert!(d.windows(2).all(|x| x[0] <= x[1]), "{d:?}");
        assert!(d.iter().all(|x| *x <= NEAREST_RADIUS_M), "{d:?}");
        for l in &lines[first..] {
            assert_eq!(Some(&l.property_type), r.property_type.as_ref(), "{l:?}");
            let m = Month::parse(&l.sale_month).unwrap();
            assert!(m >= as_of.add_months(-NEAREST_MAX_AGE_MONTHS) && m <= as_of);
            // The distance is the one between the register's coordinates.
            if let Some(cu) = l.comp_uprn
                && let (Some(a), Some(b)) = (inp.positions.get(&r.uprn), inp.positions.get(&cu))
            {
                let expect = (a.0 - b.0).hypot(a.1 - b.1);
                assert!((expect - l.distance_m.unwrap()).abs() < 0.01, "{l:?}");
            }
        }
        if found.is_none() {
            found = Some((r, lines));
        }
    }
    eprintln!("{with_nearest} valued properties have nearest-same-type comparables");
    let (subject, lines) = found.expect("a ledger with a nearest-same-type comparable");
    let (_acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;
    let r = send(
        &svc,
        get(
            &format!("/v1/valuation/{}/comps-adjustments", subject.uprn),
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let comps = r.json["comparables"].as_array().unwrap();
    assert_eq!(comps.len(), lines.len());
    for (c, l) in comps.iter().zip(&lines) {
        assert_eq!(c["tier"], l.tier.as_str());
        assert_eq!(c["distance_m"], json!(l.distance_m.map(f64::round)));
    }
    assert!(comps.iter().any(|c| c["tier"] == "nearest_same_type"));
    assert!(
        r.json["tiers"]
            .as_str()
            .unwrap()
            .contains("nearest sales of the same property type within 1,000 m")
    );
}

#[actix_web::test]
async fn the_full_block_has_a_constructed_back_series_rent_and_trust_parts() {
    let w = fixture_world().await;
    let rows = all_valuations(&w).await;
    let (acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;
    let subject = rows
        .iter()
        .find(|r| r.value.is_some() && r.floor_area.is_some() && r.estimate_anchor.is_some())
        .unwrap();
    let r = send(
        &svc,
        post_json("/v1/valuation/full", &key, &json!({"uprn": subject.uprn})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 8);
    assert_eq!(balance(w.db(), acct).await, 92);
    let value = r.json["estimate"]["value"].as_i64().unwrap();
    assert_eq!(value, round100(subject.value.unwrap()));
    // The back-series: constructed, monthly, ending at the reference month with the value.
    let bs = &r.json["back_series"];
    assert_eq!(bs["label"], "constructed", "{bs}");
    let points = bs["points"].as_array().unwrap();
    assert!(!points.is_empty() && points.len() <= 60, "{}", points.len());
    let last = points.last().unwrap();
    assert_eq!(last["month"], bs["reference_period"]);
    assert_eq!(last["value"].as_i64().unwrap(), value);
    let ref_level = last["index_level"].as_f64().unwrap();
    for p in points {
        let expect = subject.value.unwrap() * p["index_level"].as_f64().unwrap() / ref_level;
        assert_eq!(p["value"].as_i64().unwrap(), round100(expect), "{p}");
    }
    let months: Vec<&str> = points
        .iter()
        .map(|p| p["month"].as_str().unwrap())
        .collect();
    assert!(months.windows(2).all(|m| m[0] < m[1]));
    // Rent and yield: known, or not available with a reason.
    let rental = &r.json["rental"];
    match rental["estimate"]["monthly_rent_gbp"].as_i64() {
        Some(rent) => {
            let y = rental["gross_yield"]["gross_yield"].as_f64().unwrap();
            assert!(
                (y - (rent * 12) as f64 / value as f64).abs() < 1e-4,
                "{rental}"
            );
            assert_eq!(rental["gross_yield"]["value_basis"], "valuation_estimate");
        }
        None => {
            assert_eq!(rental["estimate"]["status"], "not_available", "{rental}");
            assert_eq!(rental["gross_yield"]["status"], "not_available");
            assert!(rental["gross_yield"]["reason"].as_str().unwrap().len() > 10);
        }
    }
    // Trust: four stated parts and their mean.
    let trust = &r.json["trust"];
    let parts = trust["parts"].as_array().unwrap();
    let names: Vec<&str> = parts.iter().map(|p| p["part"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "index_sample",
            "floor_area_provenance",
            "comparables",
            "measured_error"
        ]
    );
    for p in parts {
        let s = p["score"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&s), "{p}");
        assert!(p["rule"].as_str().unwrap().len() > 10);
    }
    assert_eq!(parts[1]["score"], 1.0, "the unit's own certificate");
    assert_eq!(
        parts[2]["measure"].as_f64().unwrap() as i64,
        subject.n_comparables_fenced.unwrap()
    );
    // Before any backtest no error is measured: the part says so and scores 0.
    assert!(parts[3]["measure"].is_null());
    assert_eq!(parts[3]["score"], 0.0);
    let mean: f64 = parts
        .iter()
        .map(|p| p["score"].as_f64().unwrap())
        .sum::<f64>()
        / 4.0;
    assert_eq!(
        trust["score"].as_i64().unwrap(),
        (mean * 100.0).round() as i64
    );

    // After a backtest the measured error is read from valuation_accuracy.
    terrace_valuation::backtest::backtest(w.db(), 3, chrono::Utc::now().naive_utc(), &mut |_| {})
        .await
        .unwrap();
    let r = send(
        &svc,
        post_json("/v1/valuation/full", &key, &json!({"uprn": subject.uprn})),
    )
    .await;
    let part = &r.json["trust"]["parts"][3];
    assert!(part["measure"].as_f64().unwrap() > 0.0, "{part}");
    assert!(part["evidence"].as_str().unwrap().contains("MdAPE"));

    // 404 and validation, free.
    let r = send(
        &svc,
        post_json(
            "/v1/valuation/full",
            &key,
            &json!({"uprn": 999999999999_i64}),
        ),
    )
    .await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (404, Some(0))
    );
    check_422(
        &send(&svc, post_json("/v1/valuation/full", &key, &json!({}))).await,
        &["body", "uprn"],
        "missing",
    );
    check_422(
        &send(
            &svc,
            post_json("/v1/valuation/full", &key, &json!({"uprn": 1, "x": 1})),
        )
        .await,
        &["body", "x"],
        "extra_forbidden",
    );
    assert_eq!(balance(w.db(), acct).await, 84);
}

fn district_of_best(rows: &[ValuationRow]) -> String {
    // The district with the most valued properties that have a last sale.
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for r in rows
        .iter()
        .filter(|r| r.value.is_some() && r.last_sale_price.is_some())
    {
        if let Some(d) = r.district.as_deref() {
            *counts.entry(d).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .max_by_key(|(d, n)| (*n, std::cmp::Reverse(*d)))
        .unwrap()
        .0
        .to_string()
}

fn uprns(items: &Value) -> Vec<i64> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["uprn"].as_i64().unwrap())
        .collect()
}

#[actix_web::test]
async fn long_held_orders_by_gain_filters_and_pages() {
    let w = fixture_world().await;
    let rows = all_valuations(&w).await;
    let district = district_of_best(&rows);
    let area_id = format!("district:{district}");
    let (acct, key) = account(w.db(), 10_000).await;
    let svc = service(w.state.clone()).await;
    let path = "/v1/equity/long-held";
    let all = send(
        &svc,
        post_json(
            path,
            &key,
            &json!({"area_id": area_id, "min_years_held": 0, "min_gain_pct": -100, "limit": 200}),
        ),
    )
    .await;
    assert_eq!(all.status, 200, "{}", all.json);
    assert_eq!(all.json["credits_charged"], 8);
    assert_eq!(balance(w.db(), acct).await, 9_992);
    let items = all.json["items"].as_array().unwrap();
    assert!(items.len() >= 3, "{}", all.json);
    // Every valued property of the district with a sale, ordered by gain (then UPRN).
    let want = rows
        .iter()
        .filter(|r| r.value.is_some() && r.last_sale_price.is_some())
        .filter(|r| r.district.as_deref() == Some(district.as_str()))
        .count();
    assert!(items.len() <= want.min(200));
    let key_of = |i: &Value| {
        (
            -((i["gain_pct"].as_f64().unwrap() * 10.0).round() as i64),
            i["uprn"].as_i64().unwrap(),
        )
    };
    assert!(items.windows(2).all(|p| key_of(&p[0]) < key_of(&p[1])));
    for i in items {
        let (v, p) = (
            i["value"].as_i64().unwrap(),
            i["last_sale_price"].as_i64().unwrap(),
        );
        assert_eq!(i["gain"].as_i64().unwrap(), v - p);
        assert_eq!(i["district"], district.as_str());
        assert!(i["years_held"].as_f64().unwrap() >= 0.0);
    }
    assert_eq!(all.json["as_of"], rows[0].as_of.as_str());

    // Paging with limit 2 walks the same list.
    let mut walked = Vec::new();
    let mut cursor: Option<String> = None;
    let mut walked_cursor: Option<String> = None;
    let mut calls = 0;
    loop {
        let mut body =
            json!({"area_id": area_id, "min_years_held": 0, "min_gain_pct": -100, "limit": 2});
        if let Some(c) = &cursor {
            body["cursor"] = json!(c);
        }
        let r = send(&svc, post_json(path, &key, &body)).await;
        assert_eq!(r.status, 200, "{}", r.json);
        calls += 1;
        walked.extend(uprns(&r.json["items"]));
        match r.json["next_cursor"].as_str() {
            Some(c) => {
                cursor = Some(c.to_string());
                walked_cursor.get_or_insert_with(|| c.to_string());
            }
            None => break,
        }
        if calls > 1000 {
            break;
        }
    }
    // A cursor is bound to its walk: the same token with other filters, or altered, names no page
    // of that walk (404, not charged).
    if let Some(c) = walked_cursor {
        let before = balance(w.db(), acct).await;
        let other = json!({"area_id": area_id, "min_years_held": 0, "min_gain_pct": -99, "limit": 2, "cursor": c});
        let r = send(&svc, post_json(path, &key, &other)).await;
        assert_eq!(r.status, 404, "{}", r.json);
        let mut forged = c.clone();
        let last = forged.pop().unwrap();
        forged.push(if last == '0' { '1' } else { '0' });
        let same = json!({"area_id": area_id, "min_years_held": 0, "min_gain_pct": -100, "limit": 2, "cursor": forged});
        let r = send(&svc, post_json(path, &key, &same)).await;
        assert_eq!(r.status, 404, "{}", r.json);
        // A blank area is a 422 whatever the cursor says: the cursor is read against the query
        // only once the area is known.
        let blank = json!({"area_id": " ", "min_years_held": 0, "min_gain_pct": -100, "limit": 2, "cursor": c});
        let r = send(&svc, post_json(path, &key, &blank)).await;
        assert_eq!(r.status, 422, "{}", r.json);
        assert_eq!(balance(w.db(), acct).await, before);
    }
    // The pages walk one ordered list with no repeat; the first page of 200 is its head.
    let head = uprns(&all.json["items"]);
    assert_eq!(walked[..head.len()], head[..]);
    let distinct: std::collections::HashSet<i64> = walked.iter().copied().collect();
    assert_eq!(distinct.len(), walked.len());
    assert!(walked.len() <= want, "{} of {want}", walked.len());
    assert!(head.len() == 200 || head.len() == walked.len());
    assert_eq!(balance(w.db(), acct).await, 9_992 - 8 * calls);
    let spent = 8 + 8 * calls;

    // The filters: a gain threshold and a holding period.
    let median_gain = items[items.len() / 2]["gain_pct"].as_f64().unwrap();
    let r = send(
        &svc,
        post_json(
            path,
            &key,
            &json!({"area_id": area_id, "min_years_held": 0, "min_gain_pct": median_gain, "limit": 200}),
        ),
    )
    .await;
    let got = r.json["items"].as_array().unwrap();
    assert!(!got.is_empty() && got.len() < items.len());
    assert!(
        got.iter()
            .all(|i| i["gain_pct"].as_f64().unwrap() >= median_gain)
    );
    let years: Vec<f64> = items
        .iter()
        .map(|i| i["years_held"].as_f64().unwrap())
        .collect();
    let mid = years.iter().cloned().fold(0.0_f64, f64::max) / 2.0;
    let r = send(
        &svc,
        post_json(
            path,
            &key,
            &json!({"area_id": area_id, "min_years_held": mid, "min_gain_pct": -100, "limit": 200}),
        ),
    )
    .await;
    let got = r.json["items"].as_array().unwrap();
    assert!(got.len() < items.len());
    assert!(
        got.iter()
            .all(|i| i["years_held"].as_f64().unwrap() >= mid - 0.05)
    );
    let spent = spent + 16;

    // An unknown area: 404, free.
    let r = send(
        &svc,
        post_json(path, &key, &json!({"area_id": "district:ZZ99"})),
    )
    .await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (404, Some(0)),
        "{}",
        r.json
    );
    // Validation, free.
    let bad = |body: Value| post_json(path, &key, &body);
    check_422(
        &send(&svc, bad(json!({}))).await,
        &["body", "area_id"],
        "missing",
    );
    check_422(
        &send(&svc, bad(json!({"area_id": " "}))).await,
        &["body", "area_id"],
        "value_error",
    );
    // An id of another kind, or of no kind, names no area values are kept for: 404, free.
    for area in ["lsoa:E01000001", "nonsense"] {
        let r = send(&svc, bad(json!({ "area_id": area }))).await;
        assert_eq!(
            (r.status, r.json["credits_charged"].as_i64()),
            (404, Some(0)),
            "{}",
            r.json
        );
    }
    check_422(
        &send(&svc, bad(json!({"area_id": ""}))).await,
        &["body", "area_id"],
        "string_too_short",
    );
    check_422(
        &send(&svc, bad(json!({"area_id": area_id, "min_years_held": -1}))).await,
        &["body", "min_years_held"],
        "value_error",
    );
    check_422(
        &send(
            &svc,
            bad(json!({"area_id": area_id, "min_years_held": 101})),
        )
        .await,
        &["body", "min_years_held"],
        "value_error",
    );
    check_422(
        &send(&svc, bad(json!({"area_id": area_id, "min_gain_pct": -101}))).await,
        &["body", "min_gain_pct"],
        "value_error",
    );
    check_422(
        &send(&svc, bad(json!({"area_id": area_id, "limit": 0}))).await,
        &["body", "limit"],
        "greater_than_equal",
    );
    check_422(
        &send(&svc, bad(json!({"area_id": area_id, "limit": 201}))).await,
        &["body", "limit"],
        "less_than_equal",
    );
    check_422(
        &send(&svc, bad(json!({"area_id": area_id, "cursor": "abc_def"}))).await,
        &["body", "cursor"],
        "value_error",
    );
    check_422(
        &send(&svc, bad(json!({"area_id": area_id, "cursor": "1"}))).await,
        &["body", "cursor"],
        "value_error",
    );
    check_422(
        &send(&svc, bad(json!({"area_id": area_id, "cursor": ""}))).await,
        &["body", "cursor"],
        "string_too_short",
    );
    check_422(
        &send(&svc, bad(json!({"area_id": area_id, "since": 1}))).await,
        &["body", "since"],
        "extra_forbidden",
    );
    assert_eq!(balance(w.db(), acct).await, 10_000 - spent);
    // 402 before any work.
    let (_, poor) = account(w.db(), 7).await;
    let r = send(&svc, post_json(path, &poor, &json!({"area_id": area_id}))).await;
    assert_eq!(r.status, 402, "{}", r.json);
    assert_eq!(r.json["credits_required"], 8);
}

#[actix_web::test]
async fn a_new_vintage_scores_the_previous_one_on_later_sales_as_live_vintage() {
    let w = fixture_world().await;
    let rows = all_valuations(&w).await;
    let before = vs::latest_vintage(w.db()).await.unwrap().unwrap();
    // A valued property with a postcode: it sells two months after the vintage.
    let mut subject = None;
    for r in rows
        .iter()
        .filter(|r| r.value.is_some() && r.property_type.is_some())
    {
        let a = terrace_store::address::address(w.db(), r.uprn)
            .await
            .unwrap();
        if let Some(pc) = a.and_then(|a| a.postcode) {
            subject = Some((r.clone(), pc));
            break;
        }
    }
    let (subject, postcode) = subject.unwrap();
    let month = terrace_analytics::Month::parse(&before.as_of)
        .unwrap()
        .add_months(2);
    let value = subject.value.unwrap();
    let price = (value * 1.25).round() as i64;
    let now = chrono::Utc::now().naive_utc();
    terrace_store::sales::replace_price_paid(
        w.db(),
        vec![terrace_store::sales::PricePaidRow {
            transaction_id: "{LIVE-VINTAGE-SALE}".into(),
            price,
            date: chrono::NaiveDate::from_ymd_opt(month.year(), month.month(), 15).unwrap(),
            postcode: Some(postcode),
            property_type: subject.property_type.clone().unwrap(),
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
            uprn: Some(subject.uprn),
            match_method: None,
            match_score: None,
            source: "test".into(),
            updated_at: now,
        }],
    )
    .await
    .unwrap();
    terrace_valuation::build::build(w.db(), now, &mut |_| {})
        .await
        .unwrap();
    let after = vs::latest_vintage(w.db()).await.unwrap().unwrap();
    assert_eq!(after.as_of, month.to_string());
    let live: Vec<vs::AccuracyRow> = vs::accuracy_rows(w.db(), None, None, None)
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.basis == "live_vintage")
        .collect();
    let all = live
        .iter()
        .find(|r| {
            r.month == month.to_string() && r.property_type == "all" && r.estimator == "model"
        })
        .expect("a live_vintage row for the month of the later sale");
    assert_eq!(all.n, 1);
    assert_eq!(all.asset_class, "Residential");
    let ape = 100.0 * (value - price as f64).abs() / price as f64;
    assert!((all.mdape - ape).abs() < 1e-6, "{} {ape}", all.mdape);
    assert!(
        all.accuracy_key.contains(&before.as_of),
        "{}",
        all.accuracy_key
    );
    let typed = subject.property_type.as_deref().unwrap();
    assert!(live.iter().any(|r| r.property_type == typed));
    // Rebuilding the same vintage scores nothing new and changes nothing.
    terrace_valuation::build::build(w.db(), now, &mut |_| {})
        .await
        .unwrap();
    let again: Vec<vs::AccuracyRow> = vs::accuracy_rows(w.db(), None, None, None)
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.basis == "live_vintage")
        .collect();
    assert_eq!(again, live);
}
