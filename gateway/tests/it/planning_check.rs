//! `POST /v1/planning/check` on the fixture world: each requested check true, false or unknown
//! (never omitted), only those requested, the price, and each validation rule.

use crate::support::{Reply, account, balance, fixtures, post_json, send, service, state_for};
use serde_json::{Value, json};
use terrace_gateway::state::RateLimit;
use terrace_store::testing::TestDb;

fn find<'a>(r: &'a Reply, check: &str) -> &'a Value {
    r.json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == check)
        .unwrap_or_else(|| panic!("{check} omitted: {}", r.json))
}

fn check_422(r: &Reply, loc: &[&str], kind: &str) {
    assert_eq!(r.status, 422, "{}", r.json);
    let want: Vec<Value> = loc.iter().map(|s| json!(s)).collect();
    let detail = r.json["detail"].as_array().expect("detail is a list");
    assert!(
        detail
            .iter()
            .any(|d| d["loc"].as_array().unwrap()[..] == want[..] && d["type"] == kind),
        "expected loc {loc:?} type {kind}, got {}",
        r.json
    );
    assert_eq!(r.json["credits_charged"], 0);
}

const ALL: [&str; 15] = [
    "article_4",
    "brownfield",
    "ancient_woodland",
    "heritage_at_risk",
    "tpo",
    "aqma",
    "scheduled_monument",
    "sssi",
    "agricultural_land",
    "flood_risk",
    "green_belt",
    "listed_buildings",
    "aonb",
    "national_park",
    "conservation_area",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_requested_check_is_true_false_or_unknown_and_charged() {
    let t = crate::support::fixture_db().await;
    let (acct, key) = account(&t.db, 100).await;
    let svc = service(state_for(&t.db, RateLimit::default()).await).await;
    let at = |loc: Value, checks: &[&str]| {
        let mut body = loc;
        body["checks"] = json!(checks);
        post_json("/v1/planning/check", &key, &body)
    };

    // Inside the fixture's designations: true, with the feature that matched.
    for (lat, lon, check, reference) in [
        (50.585, -4.041, "conservation_area", "44000001"),
        (50.595, -4.039, "green_belt", "44000008"),
        (50.615, -4.038, "article_4", ""),
        (50.61935, -4.04721, "flood_risk", ""),
    ] {
        let r = send(&svc, at(json!({"lat": lat, "lon": lon}), &[check])).await;
        assert_eq!(r.status, 200, "{check}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 2);
        assert_eq!(
            r.json["checks"].as_array().unwrap().len(),
            1,
            "only those requested"
        );
        let c = find(&r, check);
        assert_eq!(c["status"], "checked", "{check}: {c}");
        assert_eq!(c["value"], true, "{check}: {c}");
        assert!(!c["matches"].as_array().unwrap().is_empty(), "{check}: {c}");
        if !reference.is_empty() {
            assert_eq!(c["matches"][0]["reference"], reference, "{check}: {c}");
        }
        assert_eq!(r.json["local_authority"], "E06009901");
    }

    // Every check at a postcode: Tamberley has a dataset of every check loaded, so each is
    // checked (true or false), none omitted (true, false and unknown of each check are pinned in
    // `every_check_is_true_false_and_unknown_somewhere`).
    let r = send(&svc, at(json!({"postcode": "XT1 1AB"}), &ALL)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["checks"].as_array().unwrap().len(), 15);
    for name in ALL {
        let c = find(&r, name);
        assert_eq!(c["status"], "checked", "{name}: {c}");
        assert!(!c["sources"].as_array().unwrap().is_empty(), "{name}: {c}");
    }

    // At sea: no local authority, so nothing can be said false.
    let r = send(
        &svc,
        at(json!({"lat": 50.0, "lon": -5.9}), &["conservation_area"]),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(find(&r, "conservation_area")["status"], "unknown");

    // A repeated name is answered once; a UPRN location works.
    let r = send(&svc, at(json!({"postcode": "xt11ab"}), &["tpo", "tpo"])).await;
    assert_eq!(r.json["checks"].as_array().unwrap().len(), 1);
    assert_eq!(balance(&t.db, acct).await, 100 - 2 * 7);

    // Unknown UPRN and postcode: 404, free.
    for loc in [
        json!({"uprn": 999999999999_i64}),
        json!({"postcode": "XT9 9ZZ"}),
    ] {
        let r = send(&svc, at(loc, &["tpo"])).await;
        assert_eq!(r.status, 404, "{}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
    }
    assert_eq!(balance(&t.db, acct).await, 100 - 2 * 7);
}

/// On the fixture world every one of the fifteen checks is true at a pinned UPRN, false at the
/// plain dwelling of Tamberley (every dataset loaded there) and unknown at the plain dwelling of
/// Wyvern Vale (none of the checks' datasets loaded there), with a reason and the datasets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_check_is_true_false_and_unknown_somewhere() {
    let t = crate::support::fixture_db().await;
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("manifest.json")).unwrap())
            .unwrap();
    let cases = &m["risk_cases"];
    let (_, key) = account(&t.db, 1000).await;
    let svc = service(state_for(&t.db, RateLimit::default()).await).await;
    let run = |uprn: &Value| {
        post_json(
            "/v1/planning/check",
            &key,
            &json!({"uprn": uprn, "checks": ALL}),
        )
    };
    let first = |k: &str| cases[k][0].clone();
    let true_at = [
        ("article_4", cases["article_4"].clone()),
        ("brownfield", cases["brownfield_and_tree"].clone()),
        ("tpo", cases["article_4"].clone()),
        ("conservation_area", first("conservation_and_listed")),
        ("listed_buildings", first("conservation_and_listed")),
        ("green_belt", first("green_belt")),
        ("flood_risk", first("flood_zone_3")),
        ("ancient_woodland", cases["designated"].clone()),
        ("heritage_at_risk", cases["designated"].clone()),
        ("aqma", cases["designated"].clone()),
        ("scheduled_monument", cases["designated"].clone()),
        ("sssi", cases["designated"].clone()),
        ("agricultural_land", cases["designated"].clone()),
        ("aonb", cases["designated"].clone()),
        ("national_park", cases["designated"].clone()),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for (check, uprn) in &true_at {
        let r = send(&svc, run(uprn)).await;
        assert_eq!(r.status, 200, "{}", r.json);
        let c = find(&r, check);
        assert_eq!(c["value"], true, "{check} at {uprn}: {c}");
        assert!(!c["matches"].as_array().unwrap().is_empty(), "{check}: {c}");
        seen.insert(*check);
    }
    assert_eq!(seen.len(), 15, "every check has a true case");
    let plain = cases["plain"].as_array().unwrap();
    let r = send(&svc, run(&plain[0])).await;
    assert_eq!(r.json["local_authority"], "E06009901");
    for name in ALL {
        let c = find(&r, name);
        assert_eq!(c["status"], "checked", "{name}: {c}");
        assert_eq!(c["value"], false, "{name}: {c}");
    }
    let r = send(&svc, run(&plain[1])).await;
    assert_eq!(r.json["local_authority"], "E06009902");
    for name in ALL {
        let c = find(&r, name);
        assert_eq!(c["status"], "unknown", "{name}: {c}");
        assert!(c["value"].is_null(), "{name}: {c}");
        assert!(
            c["reason"]
                .as_str()
                .is_some_and(|s| s.contains("E06009902")),
            "{name}: {c}"
        );
        assert!(
            !c["not_loaded"].as_array().unwrap().is_empty(),
            "{name}: {c}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planning_check_validation_rules() {
    let t = TestDb::new().await;
    let (acct, key) = account(&t.db, 10).await;
    let svc = service(state_for(&t.db, RateLimit::default()).await).await;
    let post = |body: Value| post_json("/v1/planning/check", &key, &body);

    // An unknown check name lists the valid ones.
    let r = send(
        &svc,
        post(json!({"postcode": "XT1 1AB", "checks": ["tpo", "bats"]})),
    )
    .await;
    check_422(&r, &["body", "checks", "1"], "literal_error");
    assert!(
        r.json.to_string().contains("conservation_area"),
        "{}",
        r.json
    );
    check_422(
        &send(&svc, post(json!({"postcode": "XT1 1AB", "checks": []}))).await,
        &["body", "checks"],
        "too_short",
    );
    check_422(
        &send(&svc, post(json!({"checks": ["tpo"]}))).await,
        &["body"],
        "value_error",
    );
    check_422(
        &send(
            &svc,
            post(json!({"postcode": "XT1 1AB", "uprn": 1, "checks": ["tpo"]})),
        )
        .await,
        &["body"],
        "value_error",
    );
    check_422(
        &send(&svc, post(json!({"lat": 50.6, "checks": ["tpo"]}))).await,
        &["body", "lon"],
        "missing",
    );
    check_422(
        &send(&svc, post(json!({"lon": -4.0, "checks": ["tpo"]}))).await,
        &["body", "lat"],
        "missing",
    );
    check_422(
        &send(
            &svc,
            post(json!({"lat": 95.0, "lon": -4.0, "checks": ["tpo"]})),
        )
        .await,
        &["body", "lat"],
        "value_error",
    );
    check_422(
        &send(
            &svc,
            post(json!({"lat": 50.0, "lon": 190.0, "checks": ["tpo"]})),
        )
        .await,
        &["body", "lon"],
        "value_error",
    );
    let r = send(
        &svc,
        post(json!({"postcode": "NOT A POSTCODE", "checks": ["tpo"]})),
    )
    .await;
    assert_eq!(r.status, 422, "{}", r.json);
    let r = send(
        &svc,
        post(json!({"postcode": "XT1 1AB", "checks": ["tpo"], "radius": 5})),
    )
    .await;
    assert_eq!(r.status, 422, "{}", r.json);
    assert_eq!(balance(&t.db, acct).await, 10);
}
