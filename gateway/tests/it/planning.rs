//! Planning history (specification parts 2.8, 3, 4.2 and 7): applications linked to the unit, to
//! its building, or within 25 m; not_covered (free); what needs consent never false when never
//! checked; the batch's order and charging.

use crate::support::*;
use serde_json::json;
use terrace_ingest::{Dataset, Progress};

/// The authorities official planning data covers (planning.data.gov.uk `organisation` layout).
const COVERAGE: &str = "\
entity,name,organisation,statistical-geography,start-date,end-date
9001,Exampleton,local-authority:EXA,E06009999,,
9002,Formerbury,local-authority:FOR,E06009997,2010-01-01,2020-04-01
";

/// Synthetic planning applications on the small world.
const APPLICATIONS: &str = "\
dataset,entity,reference,organisation,address-text,postcode,uprn,point,easting,northing,received-date,validated-date,decision-date,decision,appeal-decision,appeal-date,cil-liable,cil-amount,development-type,description
planning-application,1,24/0001/FUL,E06009999,\"Flat 1, 10 High Street\",XT1 1AB,990000000011,,,,2024-01-05,2024-01-10,2024-03-01,approved,,,yes,4200,householder,Replacement windows
planning-application,2,23/0100/FUL,E06009999,10 High Street,XT1 1AB,990000000010,,,,2023-02-01,2023-02-03,2023-05-01,refused,allowed,2023-12-01,no,,minor,Roof extension to the building
planning-application,3,22/0042/LBC,E06009999,\"2 High Street, Exampleton\",XT1 1AA,,,,,2022-06-01,,2022-08-01,approved,,,,,listed building consent,Internal alterations
planning-application,4,25/0007/FUL,E06009999,,,,,260210,80110,2025-01-02,,,,,,,,change of use,Shop to cafe (14 m from 63-65 Fore Street)
planning-application,5,25/0008/FUL,E06009999,,,,,260230,80120,2025-01-03,,2025-04-01,approved,,,,,minor,Signage (36 m away)
planning-application,6,25/0009/FUL,E06009999,,,,POINT(nowhere),,,2025-01-04,,,,,,,,minor,Unreadable point
";

async fn planning_world() -> TestApp {
    let w = world().await;
    load_text(
        w.db(),
        Dataset::Onspd,
        "pcd,laua,oseast1m,osnrth1m\nXT1 1AA,E06009999,260010,80010\nXT1 1AB,E06009999,260100,80010\nXT1 2AA,E06009999,260200,80100\nXT2 3BB,E06009999,261000,81000\nXT2 3BC,E06009999,261100,81000\nXT3 4CD,E06009998,265000,85000\n",
    )
    .await;
    let r = load_text(w.db(), Dataset::PlanningCoverage, COVERAGE).await;
    assert_eq!((r.counts.read, r.counts.loaded), (2, 2));
    let r = load_text(w.db(), Dataset::PlanningApplications, APPLICATIONS).await;
    assert_eq!(
        (r.counts.read, r.counts.loaded, r.counts.rejected),
        (6, 5, 1),
        "{:?}",
        r.rejections
    );
    assert_eq!(r.rejections[0].line, 7);
    let mut q = Progress::quiet();
    terrace_build::derive::derive_areas(w.db(), &mut q)
        .await
        .unwrap();
    terrace_build::derive::link_to_uprns(w.db(), &mut q)
        .await
        .unwrap();
    // Loading the same file again changes nothing.
    let r = load_text(w.db(), Dataset::PlanningApplications, APPLICATIONS).await;
    assert_eq!((r.counts.unchanged, r.counts.rejected), (5, 1));
    w
}

fn references(r: &Reply) -> Vec<String> {
    r.json["applications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["reference"].as_str().unwrap().to_string())
        .collect()
}

#[actix_web::test]
async fn unit_building_and_25m_fallback() {
    let w = planning_world().await;
    let (acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;

    // Linked to the unit by its own UPRN.
    let r = send(
        &svc,
        get("/v1/property/990000000011/planning-history", &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        (r.json["status"].as_str(), r.json["match_level"].as_str()),
        (Some("ok"), Some("unit"))
    );
    assert_eq!(references(&r), vec!["24/0001/FUL"]);
    let a = &r.json["applications"][0];
    assert_eq!(a["decision"], "approved");
    assert_eq!(a["received_date"], "2024-01-05");
    assert_eq!(a["validated_date"], "2024-01-10");
    assert_eq!(a["decision_date"], "2024-03-01");
    assert_eq!(a["cil"], json!({"liable": true, "amount_gbp": 4200.0}));
    assert!(a["appeal"].is_null());
    assert_eq!(a["development_type"], "householder");
    assert_eq!(a["uprn_match"]["method"], "application_uprn");
    assert_eq!(r.json["local_planning_authority"]["code"], "E06009999");
    assert_eq!(r.json["local_planning_authority"]["name"], "Exampleton");
    assert_eq!(r.json["official_planning_data"]["covered"], true);
    assert_eq!(r.json["credits_charged"], 2);

    // Flat 2 has nothing of its own: its building's application.
    let r = send(
        &svc,
        get("/v1/property/990000000012/planning-history", &key),
    )
    .await;
    assert_eq!(r.json["match_level"], "building", "{}", r.json);
    assert_eq!(references(&r), vec!["23/0100/FUL"]);
    let a = &r.json["applications"][0];
    assert_eq!(
        a["appeal"],
        json!({"decision": "allowed", "date": "2023-12-01"})
    );
    assert_eq!(a["cil"]["liable"], false);

    // Linked by the address matcher, with its score.
    let r = send(
        &svc,
        get("/v1/property/990000000002/planning-history", &key),
    )
    .await;
    assert_eq!(references(&r), vec!["22/0042/LBC"], "{}", r.json);
    let m = &r.json["applications"][0]["uprn_match"];
    assert_eq!(m["method"], "address_matcher");
    assert!(m["score"].as_f64().unwrap() >= 0.8);

    // Nothing linked: the application 14 m away is listed, the one 36 m away is not.
    let r = send(
        &svc,
        get("/v1/property/990000000020/planning-history", &key),
    )
    .await;
    assert_eq!(r.json["match_level"], "radius_25m", "{}", r.json);
    assert_eq!(references(&r), vec!["25/0007/FUL"]);
    let a = &r.json["applications"][0];
    assert_eq!(a["distance_m"], 14.1);
    assert!(a["uprn_match"].is_null());
    assert_eq!(r.json["radius_m"], 25.0);

    // Covered, and nothing linked or near: no_applications, charged.
    let r = send(
        &svc,
        get("/v1/property/990000000003/planning-history", &key),
    )
    .await;
    assert_eq!(
        (
            r.json["status"].as_str(),
            r.json["credits_charged"].as_i64()
        ),
        (Some("no_applications"), Some(2)),
        "{}",
        r.json
    );
    assert!(r.json["match_level"].is_null());
    assert_eq!(r.json["applications"], json!([]));
    assert_eq!(balance(w.db(), acct).await, 90);
}

#[actix_web::test]
async fn not_covered_is_free_and_consent_is_never_false_when_unchecked() {
    let w = planning_world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(
        &svc,
        get("/v1/property/990000000024/planning-history", &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["status"], "not_covered");
    assert_eq!(r.json["official_planning_data"]["covered"], false);
    assert!(r.json["reason"].as_str().unwrap().contains("E06009998"));
    assert_eq!(r.json["credits_charged"], 0);
    assert_eq!(balance(w.db(), acct).await, 10);

    // The designation layers are not read: every consent is not_checked with a reason.
    let r = send(
        &svc,
        get("/v1/property/990000000011/planning-history", &key),
    )
    .await;
    let c = &r.json["what_needs_consent"];
    assert_eq!(c["required"], json!([]));
    for item in c["items"].as_array().unwrap() {
        assert_eq!(item["required"], "not_checked", "{item}");
        assert!(item["reason"].is_string());
    }
    assert_eq!(
        c["not_checked"].as_array().unwrap().len(),
        c["items"].as_array().unwrap().len()
    );
    assert_eq!(c["flags"]["listed_building"]["value"], "not_checked");

    // Unknown UPRN: 404, free; malformed: 422.
    let r = send(
        &svc,
        get("/v1/property/990000009999/planning-history", &key),
    )
    .await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (404, Some(0))
    );
    let r = send(&svc, get("/v1/property/abc/planning-history", &key)).await;
    assert_eq!(r.status, 422);
    assert_eq!(balance(w.db(), acct).await, 8);
}

#[actix_web::test]
async fn coverage_not_loaded_is_not_checked_and_nothing_loaded_is_not_covered() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(
        &svc,
        get("/v1/property/990000000001/planning-history", &key),
    )
    .await;
    assert_eq!(r.json["status"], "not_covered", "{}", r.json);
    assert_eq!(r.json["official_planning_data"]["covered"], "not_checked");
    assert_eq!(r.json["credits_charged"], 0);
    assert_eq!(balance(w.db(), acct).await, 10);
}

#[actix_web::test]
async fn the_batch_answers_in_input_order_and_charges_ok_and_no_applications() {
    let w = planning_world().await;
    let (acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;
    let body = json!({"uprns": [990000000011i64, 990000009999i64, "990000000024", -5, 990000000003i64, "abc", 990000000020i64]});
    let r = send(
        &svc,
        post_json("/v1/property/planning-history/batch", &key, &body),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let outcomes: Vec<&str> = r.json["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        vec![
            "ok",
            "not_found",
            "not_covered",
            "error",
            "no_applications",
            "error",
            "ok"
        ]
    );
    assert_eq!(r.json["items"][2]["uprn"], "990000000024");
    assert_eq!(r.json["items"][6]["result"]["match_level"], "radius_25m");
    assert_eq!(r.json["answered"], 3);
    assert_eq!(r.json["credits_charged"], 6);
    // The same as the single calls.
    let mut singles = 0;
    for u in [
        "990000000011",
        "990000009999",
        "990000000024",
        "990000000003",
        "990000000020",
    ] {
        singles += send(
            &svc,
            get(&format!("/v1/property/{u}/planning-history"), &key),
        )
        .await
        .json["credits_charged"]
            .as_i64()
            .unwrap();
    }
    assert_eq!(singles, 6);
    assert_eq!(balance(w.db(), acct).await, 100 - 12);
}

#[actix_web::test]
async fn batch_validation() {
    let w = planning_world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let path = "/v1/property/planning-history/batch";
    let r = send(&svc, post_json(path, &key, &json!({"uprns": []}))).await;
    assert_eq!(
        (r.status, r.json["detail"][0]["type"].as_str()),
        (422, Some("too_short"))
    );
    let many: Vec<i64> = (1..=101).collect();
    let r = send(&svc, post_json(path, &key, &json!({"uprns": many}))).await;
    assert_eq!(
        (r.status, r.json["detail"][0]["type"].as_str()),
        (422, Some("too_long"))
    );
    let r = send(&svc, post_json(path, &key, &json!({"uprn": [1]}))).await;
    assert_eq!(r.status, 422);
    assert_eq!(
        send(&svc, post_raw(path, &key, "{\"uprns\": [1,"))
            .await
            .status,
        422
    );
    let hundred: Vec<i64> = (1..=100).collect();
    let r = send(&svc, post_json(path, &key, &json!({"uprns": hundred}))).await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (200, Some(0)),
        "100 unknown UPRNs: all not_found, free"
    );
    assert_eq!(balance(w.db(), acct).await, 10);
}
