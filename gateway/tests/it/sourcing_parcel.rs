//! The sourcing parcel operations (`GET /v1/sourcing/parcel`, `GET /v1/sourcing/land-assembly`,
//! `POST /v1/sourcing/owners`) on the fixture world's planted cluster of adjacent parcels
//! (`land_cases.cluster`: a subject and a neighbour held by one company, a neighbour held by
//! another, three neighbours with no linked title, one 0.3 m away, one 4.8 m away): every id
//! form, the exactly-one rule, unknown ids, tolerance, ring, same owner, the combined counts,
//! owners resolved and unresolved, and charging.

use crate::support::{Reply, account, balance, check_422, fixtures, get, post_json, send, service};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use terrace_gateway::state::RateLimit;

fn cluster() -> Value {
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("manifest.json")).unwrap())
            .unwrap();
    let c = m["land_cases"]["cluster"].clone();
    assert!(c["subject"].as_i64().unwrap() > 0, "the cluster is planted");
    c
}

fn id(c: &Value, k: &str) -> String {
    c[k].as_i64().unwrap().to_string()
}

/// A 422 whose detail has an entry at `loc`, whatever its type, and nothing charged.
fn refused_at(r: &Reply, loc: &[&str]) {
    assert_eq!(r.status, 422, "{}", r.json);
    let want: Vec<Value> = loc.iter().map(|s| json!(s)).collect();
    assert!(
        r.json["detail"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["loc"].as_array().unwrap()[..] == want[..]),
        "expected loc {loc:?}: {}",
        r.json
    );
    assert_eq!(r.json["credits_charged"], 0);
}

fn neighbour_ids(r: &Reply) -> BTreeSet<String> {
    r.json["neighbours"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["parcel_id"].as_str().unwrap().to_string())
        .collect()
}

fn set(ids: &[String]) -> BTreeSet<String> {
    ids.iter().cloned().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_id_form_finds_the_planted_parcel_in_full() {
    let t = crate::support::fixture_db().await;
    let c = cluster();
    let (acct, key) = account(&t.db, 100).await;
    let svc = service(crate::support::state_for(&t.db, RateLimit::default()).await).await;
    let subject = id(&c, "subject");
    let title = c["subject_title"].as_str().unwrap();
    let forms = [
        format!("parcel_id={subject}"),
        format!("inspire_id={subject}"),
        format!("uprn={}", c["subject_uprn"]),
        format!("title_number={}", title.to_lowercase()),
    ];
    for (i, q) in forms.iter().enumerate() {
        let r = send(&svc, get(&format!("/v1/sourcing/parcel?{q}"), &key)).await;
        assert_eq!(r.status, 200, "{q}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 2);
        assert_eq!(balance(&t.db, acct).await, 100 - 2 * (i as i64 + 1));
        let p = &r.json;
        assert_eq!(p["ids"]["parcel_id"], subject.as_str(), "{q}");
        assert_eq!(p["ids"]["inspire_id"], c["subject"]);
        assert_eq!(p["ids"]["title_numbers"], json!([title]));
        assert_eq!(
            p["resolved_from"]["by"],
            ["parcel_id", "inspire_id", "uprn", "title_number"][i]
        );
        if i == 0 {
            // The owner: the company, its number and its Companies House status.
            let rp = &p["registered_proprietor"];
            assert_eq!(rp["status"], "linked");
            let prop = &rp["titles"][0]["proprietors"][0];
            assert_eq!(prop["company_number"], c["owner_company"]);
            assert_eq!(prop["name"], c["owner_name"]);
            assert_eq!(prop["company"]["status"], "Active");
            assert_eq!(rp["titles"][0]["linked_via_uprn"], c["subject_uprn"]);
            // The house stands on it; a building too, measured.
            let units: Vec<i64> = p["units"]["units"]
                .as_array()
                .unwrap()
                .iter()
                .map(|u| u["uprn"].as_i64().unwrap())
                .collect();
            assert!(units.contains(&c["subject_uprn"].as_i64().unwrap()));
            assert_eq!(p["units"]["count"].as_i64().unwrap(), units.len() as i64);
            let area: f64 = p["area_m2"].as_str().unwrap().parse().unwrap();
            assert!((area - c["areas_m2"][0].as_f64().unwrap()).abs() < 0.05);
            assert_eq!(p["land_use"]["tier_a"], "residential");
            assert!(
                p["land_use"]["method"]
                    .as_str()
                    .unwrap()
                    .contains("AddressBase")
            );
            assert_eq!(p["plot_utilisation"]["measured"], true);
            let building = c["subject_building"].as_str().unwrap();
            if !building.is_empty() {
                assert_eq!(p["ids"]["os_building_ids"], json!([building]));
                let cov: f64 = p["plot_utilisation"]["built_coverage_ratio"]
                    .as_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!(cov > 0.0 && cov < 1.0, "{cov}");
            }
            // Every flag three-valued, and listed once in the summary.
            let flags = p["constraints"]["flags"].as_object().unwrap();
            assert!(flags.len() >= 15, "{}", flags.len());
            for (name, f) in flags {
                let s = f["status"].as_str().unwrap();
                assert!(
                    ["in_zone", "checked_false", "not_checked"].contains(&s),
                    "{name}: {s}"
                );
                if s == "not_checked" {
                    assert!(f["reason"].is_string(), "{name}");
                }
            }
            let listed = ["in_zone", "checked_false", "not_checked"]
                .iter()
                .map(|k| p["constraints"][k].as_array().unwrap().len())
                .sum::<usize>();
            assert_eq!(listed, flags.len());
            assert_eq!(p["restrictive_covenants"]["status"], "not_available");
            assert_eq!(p["boundary"]["type"], "MultiPolygon");
            let lon = p["boundary"]["coordinates"][0][0][0][0].as_f64().unwrap();
            assert!((-8.0..2.0).contains(&lon), "WGS84: {lon}");
            assert!(p["link_coverage"]["titles_on_parcel"].as_i64().unwrap() >= 3);
        }
    }

    // A neighbour with no linked title: not_available with the reason, nobody named.
    let r = send(
        &svc,
        get(
            &format!("/v1/sourcing/parcel?parcel_id={}", id(&c, "corner_left")),
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let rp = &r.json["registered_proprietor"];
    assert_eq!(rp["status"], "not_available");
    assert_eq!(rp["reason"], "no_open_title_link");
    assert_eq!(rp["titles"], json!([]));
    assert_eq!(r.json["units"]["count"], 0);
    assert_eq!(r.json["ids"]["title_numbers"], json!([]));
    // Measured and empty: coverage 0 is a measurement here, not a gap.
    assert_eq!(r.json["plot_utilisation"]["built_coverage_ratio"], "0.0000");
    assert_eq!(balance(&t.db, acct).await, 100 - 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parcel_refusals_are_422_and_unknown_ids_404_and_free() {
    let t = crate::support::fixture_db().await;
    let c = cluster();
    let (acct, key) = account(&t.db, 100).await;
    let svc = service(crate::support::state_for(&t.db, RateLimit::default()).await).await;
    let subject = id(&c, "subject");
    for path in ["/v1/sourcing/parcel", "/v1/sourcing/land-assembly"] {
        // None, and two at once: the rule names the four.
        for q in [
            String::new(),
            format!("parcel_id={subject}&inspire_id={subject}"),
            format!("uprn={}&title_number=XT1", c["subject_uprn"]),
        ] {
            let r = send(&svc, get(&format!("{path}?{q}"), &key)).await;
            check_422(&r, &["query"], "value_error");
            let msg = r.json["detail"][0]["msg"].as_str().unwrap();
            for f in ["uprn", "parcel_id", "inspire_id", "title_number"] {
                assert!(msg.contains(f), "{msg}");
            }
        }
        for (q, field) in [
            ("parcel_id=12ab", "parcel_id"),
            ("title_number=not-a-title", "title_number"),
            ("inspire_id=0", "inspire_id"),
            ("uprn=0", "uprn"),
        ] {
            let r = send(&svc, get(&format!("{path}?{q}"), &key)).await;
            refused_at(&r, &["query", field]);
        }
        // Unknown ids: 404, free.
        for q in [
            "parcel_id=1".to_string(),
            "inspire_id=999999999".to_string(),
            "uprn=999999999".to_string(),
            "title_number=XT999999".to_string(),
        ] {
            let r = send(&svc, get(&format!("{path}?{q}"), &key)).await;
            assert_eq!(
                (r.status, r.json["credits_charged"].as_i64()),
                (404, Some(0)),
                "{path}?{q}: {}",
                r.json
            );
        }
    }
    let a = "/v1/sourcing/land-assembly";
    for (q, field) in [
        ("tolerance_m=50.5", "tolerance_m"),
        ("tolerance_m=-1", "tolerance_m"),
        ("ring_m=501", "ring_m"),
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("same_owner_only=maybe", "same_owner_only"),
    ] {
        let r = send(&svc, get(&format!("{a}?parcel_id={subject}&{q}"), &key)).await;
        refused_at(&r, &["query", field]);
    }
    assert_eq!(balance(&t.db, acct).await, 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn land_assembly_on_the_planted_cluster() {
    let t = crate::support::fixture_db().await;
    let c = cluster();
    let (acct, key) = account(&t.db, 100).await;
    let svc = service(crate::support::state_for(&t.db, RateLimit::default()).await).await;
    let subject = id(&c, "subject");
    let [same, other, left, gap, right, far] = [
        "same_owner",
        "other_owner",
        "corner_left",
        "gap",
        "corner_right",
        "far",
    ]
    .map(|k| id(&c, k));
    let call = |q: String| {
        let svc = &svc;
        let key = &key;
        async move {
            let r = send(svc, get(&format!("/v1/sourcing/land-assembly?{q}"), key)).await;
            assert_eq!(r.status, 200, "{q}: {}", r.json);
            r
        }
    };

    // The default tolerance (0.5 m): the five touching or 0.3 m away; not the far one.
    let r = call(format!("parcel_id={subject}")).await;
    assert_eq!(r.json["credits_charged"], 4);
    assert_eq!(
        neighbour_ids(&r),
        set(&[
            same.clone(),
            other.clone(),
            left.clone(),
            gap.clone(),
            right.clone()
        ])
    );
    assert_eq!(r.json["subject"]["parcel_id"], subject.as_str());
    let gap_row = r.json["neighbours"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["parcel_id"] == gap.as_str())
        .unwrap()
        .clone();
    assert_eq!(gap_row["gap_m"], "0.30");
    assert_eq!(gap_row["relation"], "adjacent");
    // Nearest first: the 0.3 m neighbour is the last.
    assert_eq!(r.json["neighbours"][4]["parcel_id"], gap.as_str());
    let comb = &r.json["combined"];
    assert_eq!(comb["parcels"], 6);
    assert_eq!(comb["distinct_owners"], 2);
    let names: BTreeSet<String> = comb["owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["company_number"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        set(&[
            c["owner_company"].as_str().unwrap().to_string(),
            c["other_company"].as_str().unwrap().to_string()
        ])
    );
    assert_eq!(comb["neighbours_sharing_subject_proprietor"], 1);
    assert_eq!(comb["neighbours_with_no_linked_owner"], 3);
    assert_eq!(comb["parcels_with_no_linked_owner"], 3);
    assert!(
        comb["no_linked_owner_note"]
            .as_str()
            .unwrap()
            .contains("NOT ownerless")
    );
    let areas: f64 = c["areas_m2"].as_array().unwrap()[..6]
        .iter()
        .map(|a| a.as_f64().unwrap())
        .sum();
    let total: f64 = comb["total_area_m2"].as_str().unwrap().parse().unwrap();
    assert!((total - areas).abs() < 0.1, "{total} {areas}");
    let ha: f64 = comb["total_area_ha"].as_str().unwrap().parse().unwrap();
    assert!((ha - areas / 10_000.0).abs() < 0.0001);
    // The neighbours with no linked owner are counted, never named.
    for n in r.json["neighbours"].as_array().unwrap() {
        let p = n["parcel_id"].as_str().unwrap();
        let rp = &n["registered_proprietor"];
        if [&left, &gap, &right].iter().any(|x| x.as_str() == p) {
            assert_eq!(rp["status"], "not_available", "{p}");
            assert_eq!(rp["reason"], "no_open_title_link");
            assert_eq!(rp["titles"], json!([]));
            assert_eq!(n["shares_subject_proprietor"], false);
        } else {
            assert_eq!(rp["status"], "linked", "{p}");
            assert_eq!(n["shares_subject_proprietor"], p == same.as_str());
        }
        for k in ["in_zone", "checked_false", "not_checked"] {
            assert!(n["constraints"][k].is_array());
        }
    }
    assert!(comb["constraints_in_zone"].is_array() && comb["constraints_not_checked"].is_array());

    // A tolerance of 0.1 m: the 0.3 m neighbour drops out; corners touch.
    let r = call(format!("parcel_id={subject}&tolerance_m=0.1")).await;
    assert_eq!(
        neighbour_ids(&r),
        set(&[same.clone(), other.clone(), left.clone(), right.clone()])
    );

    // The ring: 4 m does not reach the far parcel (4.8 m), 5 m does.
    let r = call(format!("inspire_id={subject}&ring_m=4")).await;
    assert!(!neighbour_ids(&r).contains(&far));
    let r = call(format!("inspire_id={subject}&ring_m=5")).await;
    assert!(neighbour_ids(&r).contains(&far));
    assert_eq!(r.json["neighbours_found"], 6);
    let far_row = r.json["neighbours"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["parcel_id"] == far.as_str())
        .unwrap()
        .clone();
    assert_eq!(far_row["relation"], "ring");
    assert_eq!(far_row["gap_m"], "4.80");
    assert_eq!(r.json["combined"]["parcels"], 7);

    // Same owner only: the one neighbour of the subject's company.
    let r = call(format!(
        "title_number={}&same_owner_only=true",
        c["subject_title"].as_str().unwrap()
    ))
    .await;
    assert_eq!(neighbour_ids(&r), set(std::slice::from_ref(&same)));
    assert_eq!(r.json["combined"]["distinct_owners"], 1);
    assert_eq!(
        r.json["combined"]["neighbours_sharing_subject_proprietor"],
        1
    );

    // The limit: nearest first, the rest counted.
    let r = call(format!("uprn={}&limit=2", c["subject_uprn"])).await;
    assert_eq!(r.json["neighbours"].as_array().unwrap().len(), 2);
    assert_eq!(
        (
            r.json["neighbours_found"].as_i64(),
            r.json["truncated"].as_bool()
        ),
        (Some(5), Some(true))
    );
    assert_eq!(r.json["combined"]["parcels"], 3);

    // From the far parcel's side, with no ring, the subject is not adjacent.
    let r = call(format!("parcel_id={far}")).await;
    assert!(!neighbour_ids(&r).contains(&subject));
    assert_eq!(
        r.json["subject"]["registered_proprietor"]["status"],
        "not_available"
    );
    assert_eq!(
        r.json["combined"]["parcels_with_no_linked_owner"],
        r.json["combined"]["parcels"]
    );

    assert_eq!(balance(&t.db, acct).await, 100 - 4 * 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owners_name_companies_count_the_unresolved_and_skip_unknown_ids() {
    let t = crate::support::fixture_db().await;
    let c = cluster();
    let (acct, key) = account(&t.db, 100).await;
    let svc = service(crate::support::state_for(&t.db, RateLimit::default()).await).await;
    let path = "/v1/sourcing/owners";
    let ids = [
        id(&c, "subject"),
        id(&c, "other_owner"),
        id(&c, "corner_left"),
        "1".to_string(),
    ];
    let r = send(&svc, post_json(path, &key, &json!({"parcel_ids": ids}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let items = r.json["items"].as_array().unwrap();
    let statuses: Vec<&str> = items
        .iter()
        .map(|i| i["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["resolved", "resolved", "unresolved", "not_found"]
    );
    let o = &items[0]["owners"][0];
    assert_eq!(o["company_number"], c["owner_company"]);
    assert_eq!(o["name"], c["owner_name"]);
    assert_eq!(o["company_status"], "Active");
    assert_eq!(o["title_numbers"], json!([c["subject_title"]]));
    assert_eq!(o["tenures"], json!(["Freehold"]));
    assert_eq!(o["registers"], json!(["ccod"]));
    assert!(!o["address"].as_array().unwrap().is_empty());
    assert_eq!(items[1]["owners"][0]["company_number"], c["other_company"]);
    // The unresolved parcel says why and names nobody.
    assert_eq!(items[2]["owners"], json!([]));
    assert!(items[2]["reason"].as_str().unwrap().contains("never named"));
    assert_eq!(items[3]["parcel_id"], "1");
    let s = &r.json["summary"];
    assert_eq!(
        (
            s["parcels_asked"].as_i64(),
            s["resolved"].as_i64(),
            s["unresolved"].as_i64(),
            s["not_found"].as_i64(),
            s["distinct_owners"].as_i64()
        ),
        (Some(4), Some(2), Some(1), Some(1), Some(2))
    );
    assert_eq!(s["share_resolved"], "0.667");
    // Charged per resolved parcel: unresolved and not_found items are free.
    assert_eq!(r.json["credits_charged"], 2);
    assert_eq!(balance(&t.db, acct).await, 98);

    // Nothing resolved: free.
    let body = json!({"parcel_ids": [id(&c, "gap"), "2"], "asset": "land"});
    let r = send(&svc, post_json(path, &key, &body)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 0);
    assert_eq!(r.json["summary"]["share_resolved"], "0.000");
    assert_eq!(balance(&t.db, acct).await, 98);

    // Refusals: 422, free.
    let r = send(&svc, post_json(path, &key, &json!({"parcel_ids": []}))).await;
    refused_at(&r, &["body", "parcel_ids"]);
    let many: Vec<String> = (1..=101).map(|i| i.to_string()).collect();
    let r = send(&svc, post_json(path, &key, &json!({"parcel_ids": many}))).await;
    refused_at(&r, &["body", "parcel_ids"]);
    let subject = id(&c, "subject");
    let r = send(
        &svc,
        post_json(
            path,
            &key,
            &json!({"parcel_ids": [subject, format!("0{subject}")]}),
        ),
    )
    .await;
    check_422(&r, &["body", "parcel_ids", "1"], "value_error");
    let r = send(&svc, post_json(path, &key, &json!({"parcel_ids": ["x1"]}))).await;
    check_422(&r, &["body", "parcel_ids", "0"], "value_error");
    let r = send(
        &svc,
        post_json(path, &key, &json!({"parcel_ids": ["1"], "asset": "units"})),
    )
    .await;
    assert_eq!(r.status, 422, "{}", r.json);
    let r = send(
        &svc,
        post_json(path, &key, &json!({"parcel_ids": ["1"], "owner": "x"})),
    )
    .await;
    check_422(&r, &["body", "owner"], "extra_forbidden");
    let r = send(&svc, post_json(path, &key, &json!({}))).await;
    check_422(&r, &["body", "parcel_ids"], "missing");
    assert_eq!(balance(&t.db, acct).await, 98);
}
