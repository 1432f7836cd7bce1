//! `POST /v1/planning/designations` and `POST /v1/planning/applications` on the fixture world
//! (each scope form, `not_loaded`, the local planning authority, portal URLs with and without,
//! nearby applications), each validation rule, and the loaders of the new datasets (row
//! accounting, idempotence, the real planning.data sample).

use crate::support::{
    Reply, account, balance, fixtures, manifest, post_json, send, service, state_for,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use terrace_gateway::state::RateLimit;
use terrace_ingest::{Dataset, Progress};
use terrace_store::Db;
use terrace_store::testing::TestDb;

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

/// A UPRN's postcode and WGS84 position.
async fn where_is(db: &Db, uprn: &Value) -> (String, f64, f64) {
    let a = terrace_store::address::address(db, uprn.as_i64().unwrap())
        .await
        .unwrap()
        .unwrap();
    let (lon, lat) = terrace_geo::wgs84_from_bng(a.x.unwrap(), a.y.unwrap()).unwrap();
    (a.postcode.unwrap(), lat, lon)
}

fn datasets(r: &Reply) -> Vec<String> {
    let mut v: Vec<String> = r.json["designations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["dataset"].as_str().unwrap().to_string())
        .collect();
    v.dedup();
    v
}

/// The datasets the fixture places around the `designated` UPRN.
const AROUND_DESIGNATED: [&str; 10] = [
    "listed-building",
    "scheduled-monument",
    "ancient-woodland",
    "site-of-special-scientific-interest",
    "area-of-outstanding-natural-beauty",
    "national-park",
    "air-quality-management-area",
    "flood-risk-zone",
    "heritage-at-risk",
    "agricultural-land-classification",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn designations_by_each_scope_with_not_loaded() {
    let t = crate::support::fixture_db().await;
    let m = manifest();
    let cases = &m["risk_cases"];
    let (acct, key) = account(&t.db, 100).await;
    let svc = service(state_for(&t.db, RateLimit::default()).await).await;
    let post = |body: Value| post_json("/v1/planning/designations", &key, &body);
    let designated = &cases["designated"];
    let (_, lat, lon) = where_is(&t.db, designated).await;

    // By UPRN: every dataset placed around it, each with source and vintage; all loaded.
    let r = send(&svc, post(json!({"uprn": designated}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 3);
    assert_eq!(r.json["scope"]["kind"], "uprn");
    assert_eq!(r.json["local_authorities"], json!(["E06009901"]));
    let found = datasets(&r);
    for d in AROUND_DESIGNATED {
        assert!(found.contains(&d.to_string()), "{d} missing: {found:?}");
    }
    for d in r.json["designations"].as_array().unwrap() {
        assert!(d["source"].as_str().unwrap().starts_with("fixture:"), "{d}");
        assert!(d["vintage"].is_string(), "{d}");
        assert_eq!(d["vintage_basis"], "entry_date", "{d}");
        assert!(d["reference"].is_string(), "{d}");
    }
    let alc = r.json["designations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["dataset"] == "agricultural-land-classification")
        .unwrap();
    assert_eq!(alc["category"], "3");
    assert_eq!(r.json["not_loaded"], json!([]), "every type is loaded here");
    assert_eq!(r.json["loaded"].as_array().unwrap().len(), 17);
    assert_eq!(r.json["truncated"], false);

    // By location, with a types filter: only those datasets.
    let r = send(
        &svc,
        post(
            json!({"location": {"lat": lat, "lon": lon}, "types": ["national-park", "green-belt"]}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["scope"]["kind"], "location");
    assert_eq!(r.json["types"], json!(["green-belt", "national-park"]));
    assert_eq!(datasets(&r), vec!["national-park"]);

    // By a polygon around it: the features overlapping it.
    let d = 0.001;
    let ring = json!([
        [lon - d, lat - d],
        [lon + d, lat - d],
        [lon + d, lat + d],
        [lon - d, lat + d],
        [lon - d, lat - d]
    ]);
    let r = send(
        &svc,
        post(json!({"area_geojson": {"type": "Polygon", "coordinates": [ring]}})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["scope"]["kind"], "area_geojson");
    assert!(r.json["scope"]["area_km2"].as_f64().unwrap() > 0.0);
    let found = datasets(&r);
    for d in AROUND_DESIGNATED {
        assert!(found.contains(&d.to_string()), "{d} missing: {found:?}");
    }
    let r = send(
        &svc,
        post(json!({"area_geojson": {"type": "MultiPolygon", "coordinates": [[ring]]}, "types": ["listed-building"]})),
    )
    .await;
    assert_eq!(datasets(&r), vec!["listed-building"], "{}", r.json);

    // By LPA: every loaded designation of Tamberley's planning authority, and none of the
    // neighbouring authority's coverage.
    let r = send(&svc, post(json!({"lpa_code": "E60009901"}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["scope"]["lpa_code"], "E60009901");
    assert_eq!(r.json["local_authorities"], json!(["E06009901"]));
    let found = datasets(&r);
    for d in AROUND_DESIGNATED
        .iter()
        .chain(&["conservation-area", "green-belt", "tree"])
    {
        assert!(found.contains(&d.to_string()), "{d} missing: {found:?}");
    }
    assert_eq!(r.json["not_loaded"], json!([]));

    // Wyvern Vale: nothing loaded for it, so every type is listed as not loaded, none omitted.
    let r = send(&svc, post(json!({"lpa_code": "e60009902"}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["local_authorities"], json!(["E06009902"]));
    let nl = r.json["not_loaded"].as_array().unwrap();
    assert_eq!(nl.len(), 17, "{}", r.json);
    assert!(
        nl.iter()
            .all(|n| n["local_authorities"] == json!(["E06009902"])
                && n["reason"].as_str().is_some_and(|s| !s.is_empty()))
    );

    // By postcode, at the plain dwelling of each authority: nothing matches; Tamberley has
    // every type loaded (an answer), Wyvern Vale none (not_loaded, never an empty "none").
    let plain = cases["plain"].as_array().unwrap();
    let (pc0, _, _) = where_is(&t.db, &plain[0]).await;
    let r = send(&svc, post(json!({"uprn": plain[0]}))).await;
    assert_eq!(r.json["designations"], json!([]), "{}", r.json);
    assert_eq!(r.json["not_loaded"], json!([]));
    let r = send(&svc, post(json!({"postcode": pc0}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["scope"]["kind"], "postcode");
    assert_eq!(r.json["not_loaded"], json!([]));
    let r = send(&svc, post(json!({"uprn": plain[1], "buffer_m": 50}))).await;
    assert_eq!(r.json["designations"], json!([]), "{}", r.json);
    assert_eq!(r.json["scope"]["buffer_m"], 50);
    assert_eq!(r.json["not_loaded"].as_array().unwrap().len(), 17);

    // At sea: no authority, so every type is not loaded with that reason.
    let r = send(&svc, post(json!({"location": {"lat": 50.0, "lon": -5.9}}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["not_loaded"].as_array().unwrap().len(), 17);

    // An LPA whose boundary is not loaded, and an unknown UPRN: 404, free.
    let before = balance(&t.db, acct).await;
    for body in [
        json!({"lpa_code": "E60000001"}),
        json!({"uprn": 999999999999_i64}),
    ] {
        let r = send(&svc, post(body)).await;
        assert_eq!(r.status, 404, "{}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
    }
    assert_eq!(balance(&t.db, acct).await, before);
    assert_eq!(before, 100 - 3 * 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn designations_validation_rules() {
    let t = TestDb::new().await;
    let (acct, key) = account(&t.db, 10).await;
    let svc = service(state_for(&t.db, RateLimit::default()).await).await;
    let post = |body: Value| post_json("/v1/planning/designations", &key, &body);
    // None of the scope fields, and two of them.
    check_422(&send(&svc, post(json!({}))).await, &["body"], "value_error");
    check_422(
        &send(
            &svc,
            post(json!({"postcode": "XT1 1AB", "uprn": 990000000001_i64})),
        )
        .await,
        &["body"],
        "value_error",
    );
    check_422(
        &send(
            &svc,
            post(json!({"lpa_code": "E60009901", "location": {"lat": 50.6, "lon": -4.0}})),
        )
        .await,
        &["body"],
        "value_error",
    );
    // Bad lat and lon.
    check_422(
        &send(&svc, post(json!({"location": {"lat": 95.0, "lon": -4.0}}))).await,
        &["body", "location", "lat"],
        "value_error",
    );
    check_422(
        &send(
            &svc,
            post(json!({"location": {"lat": 50.0, "lon": -190.0}})),
        )
        .await,
        &["body", "location", "lon"],
        "value_error",
    );
    // A polygon too large (about 14 x 22 km), with too many vertices, or not closed.
    let big = json!([
        [-4.1, 50.5],
        [-3.9, 50.5],
        [-3.9, 50.7],
        [-4.1, 50.7],
        [-4.1, 50.5]
    ]);
    check_422(
        &send(
            &svc,
            post(json!({"area_geojson": {"type": "Polygon", "coordinates": [big]}})),
        )
        .await,
        &["body", "area_geojson"],
        "value_error",
    );
    let mut ring: Vec<Value> = (0..1_200)
        .map(|i| json!([-4.0 + f64::from(i) * 1e-5, 50.6 + f64::from(i % 2) * 1e-4]))
        .collect();
    ring.push(ring[0].clone());
    check_422(
        &send(
            &svc,
            post(json!({"area_geojson": {"type": "MultiPolygon", "coordinates": [[ring]]}})),
        )
        .await,
        &["body", "area_geojson"],
        "value_error",
    );
    let open = json!([[-4.0, 50.6], [-3.99, 50.6], [-3.99, 50.61], [-4.0, 50.61]]);
    check_422(
        &send(
            &svc,
            post(json!({"area_geojson": {"type": "Polygon", "coordinates": [open]}})),
        )
        .await,
        &["body", "area_geojson"],
        "value_error",
    );
    // Not a polygon at all: refused by the body's shape.
    let r = send(
        &svc,
        post(json!({"area_geojson": {"type": "Point", "coordinates": [-4.0, 50.6]}})),
    )
    .await;
    assert_eq!(r.status, 422, "{}", r.json);
    // Buffer out of range.
    check_422(
        &send(&svc, post(json!({"postcode": "XT1 1AB", "buffer_m": 1001}))).await,
        &["body", "buffer_m"],
        "range_error",
    );
    check_422(
        &send(&svc, post(json!({"postcode": "XT1 1AB", "buffer_m": -1}))).await,
        &["body", "buffer_m"],
        "range_error",
    );
    // An unknown type lists the valid ones.
    let r = send(
        &svc,
        post(json!({"postcode": "XT1 1AB", "types": ["green-belt", "bats"]})),
    )
    .await;
    check_422(&r, &["body", "types", "1"], "literal_error");
    assert!(
        r.json.to_string().contains("ancient-woodland"),
        "{}",
        r.json
    );
    // A malformed LPA code.
    check_422(
        &send(&svc, post(json!({"lpa_code": "E07000001"}))).await,
        &["body", "lpa_code"],
        "value_error",
    );
    assert_eq!(balance(&t.db, acct).await, 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn applications_lpa_portal_and_nearby() {
    let t = crate::support::fixture_db().await;
    let m = manifest();
    let (acct, key) = account(&t.db, 100).await;
    let svc = service(state_for(&t.db, RateLimit::default()).await).await;
    let post = |body: Value| post_json("/v1/planning/applications", &key, &body);

    // Tamberley: covered, its LPA has a portal URL, and an application lies within 25 m of this
    // dwelling.
    let unit = &m["planning_cases"]["radius_uprns"][0];
    let (pc, lat, lon) = where_is(&t.db, unit).await;
    let r = send(&svc, post(json!({"lat": lat, "lon": lon, "radius_m": 30}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 2);
    assert_eq!(r.json["local_authority"], "E06009901");
    assert_eq!(r.json["local_planning_authority"]["code"], "E60009901");
    assert_eq!(
        r.json["local_planning_authority"]["area_id"],
        "lpa:E60009901"
    );
    assert_eq!(r.json["local_planning_authority"]["name"], "Tamberley LPA");
    assert_eq!(
        r.json["portal"]["url"],
        "https://planning.tamberley.example/online-applications/"
    );
    assert!(r.json["portal"]["reason"].is_null());
    assert_eq!(r.json["official_planning_data"]["covered"], true);
    let a = &r.json["applications"];
    assert_eq!(a["status"], "ok", "{}", r.json);
    let items = a["items"].as_array().unwrap();
    assert!(!items.is_empty());
    assert!(
        items
            .iter()
            .all(|i| i["distance_m"].as_f64().unwrap() <= 30.0 && i["match_level"] == "nearby")
    );
    // Newest first, capped by limit with truncated saying so.
    let r = send(
        &svc,
        post(json!({"postcode": pc, "radius_m": 2000, "limit": 3})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let a = &r.json["applications"];
    let items = a["items"].as_array().unwrap();
    let total = a["total_within_radius"].as_u64().unwrap();
    assert!(total > 3, "{}", r.json);
    assert_eq!(items.len(), 3);
    assert_eq!(a["truncated"], true);
    let date = |i: &Value| {
        ["decision_date", "validated_date", "received_date"]
            .iter()
            .find_map(|k| i[*k].as_str().map(str::to_string))
    };
    assert!(items.windows(2).all(|w| date(&w[0]) >= date(&w[1])), "{a}");

    // Wyvern Vale: its LPA is known but has no portal URL; official data does not cover it,
    // so applications are not available (not an empty list).
    let plain = &m["risk_cases"]["plain"][1];
    let (pc2, _, _) = where_is(&t.db, plain).await;
    let r = send(&svc, post(json!({"postcode": pc2}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["local_planning_authority"]["code"], "E60009902");
    assert!(r.json["portal"]["url"].is_null());
    assert!(
        r.json["portal"]["reason"]
            .as_str()
            .unwrap()
            .contains("E60009902"),
        "{}",
        r.json
    );
    assert_eq!(r.json["official_planning_data"]["covered"], false);
    assert_eq!(r.json["applications"]["status"], "not_available");
    assert!(r.json["applications"]["reason"].is_string());

    // At sea: no authority, no LPA; said, not guessed.
    let r = send(&svc, post(json!({"lat": 50.0, "lon": -5.9}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(r.json["local_planning_authority"].is_null());
    assert!(r.json["lpa_reason"].is_string());
    assert!(r.json["portal"]["url"].is_null());
    assert_eq!(r.json["applications"]["status"], "not_available");

    // Unknown postcode: 404, free.
    let r = send(&svc, post(json!({"postcode": "XT9 9ZZ"}))).await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert_eq!(balance(&t.db, acct).await, 100 - 2 * 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn applications_validation_rules() {
    let t = TestDb::new().await;
    let (acct, key) = account(&t.db, 10).await;
    let svc = service(state_for(&t.db, RateLimit::default()).await).await;
    let post = |body: Value| post_json("/v1/planning/applications", &key, &body);
    check_422(&send(&svc, post(json!({}))).await, &["body"], "value_error");
    check_422(
        &send(
            &svc,
            post(json!({"postcode": "XT1 1AB", "lat": 50.6, "lon": -4.0})),
        )
        .await,
        &["body"],
        "value_error",
    );
    check_422(
        &send(&svc, post(json!({"lat": 50.6}))).await,
        &["body", "lon"],
        "missing",
    );
    check_422(
        &send(&svc, post(json!({"lat": 95.0, "lon": -4.0}))).await,
        &["body", "lat"],
        "value_error",
    );
    check_422(
        &send(&svc, post(json!({"lat": 50.0, "lon": 200.0}))).await,
        &["body", "lon"],
        "value_error",
    );
    check_422(
        &send(&svc, post(json!({"postcode": "XT1 1AB", "radius_m": 0}))).await,
        &["body", "radius_m"],
        "range_error",
    );
    check_422(
        &send(&svc, post(json!({"postcode": "XT1 1AB", "radius_m": 2001}))).await,
        &["body", "radius_m"],
        "range_error",
    );
    check_422(
        &send(&svc, post(json!({"postcode": "XT1 1AB", "limit": 101}))).await,
        &["body", "limit"],
        "range_error",
    );
    let r = send(&svc, post(json!({"postcode": "XT1 1AB", "radius": 5}))).await;
    assert_eq!(r.status, 422, "{}", r.json);
    assert_eq!(balance(&t.db, acct).await, 10);
}

async fn load_twice(db: &Db, ds: Dataset, path: &Path) -> [terrace_store::loads::RowCounts; 2] {
    let mut out = Vec::new();
    for _ in 0..2 {
        let r = terrace_ingest::load_file(db, ds, path, Default::default(), &mut Progress::quiet())
            .await
            .unwrap();
        let c = &r.counts;
        assert_eq!(
            c.read,
            c.loaded + c.updated + c.deleted + c.rejected + c.unchanged,
            "every row accounted for: {c:?}"
        );
        out.push(c.clone());
    }
    [out[0].clone(), out[1].clone()]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lpa_boundaries_and_portals_load_every_row_once() {
    let t = TestDb::new().await;
    let [first, second] = load_twice(
        &t.db,
        Dataset::LpaBoundaries,
        &fixtures().join("planning/local-planning-authority.csv"),
    )
    .await;
    assert_eq!((first.read, first.loaded, first.rejected), (2, 2, 0));
    assert_eq!((second.loaded, second.updated, second.unchanged), (0, 0, 2));
    let b = terrace_store::address::boundaries_of_kind(&t.db, "lpa")
        .await
        .unwrap();
    let codes: Vec<&str> = b.iter().map(|b| b.code.as_str()).collect();
    assert_eq!(codes, vec!["E60009901", "E60009902"]);

    let [first, second] = load_twice(
        &t.db,
        Dataset::PlanningPortals,
        &fixtures().join("planning/planning_portals.csv"),
    )
    .await;
    assert_eq!((first.read, first.loaded, first.rejected), (2, 1, 1));
    assert_eq!(
        (second.loaded, second.rejected, second.unchanged),
        (0, 1, 1)
    );
    let rows = terrace_store::planning::portals_by_code(&t.db, &["E60009901".to_string()])
        .await
        .unwrap();
    assert_eq!(
        rows[0].portal_url,
        "https://planning.tamberley.example/online-applications/"
    );

    // The new planning.data files: every row loaded once, the second load unchanged.
    for f in [
        "national-park.csv",
        "agricultural-land-classification.csv",
        "listed-building.csv",
    ] {
        let [first, second] = load_twice(
            &t.db,
            Dataset::PlanningData,
            &fixtures().join("planning").join(f),
        )
        .await;
        assert_eq!((first.loaded, first.rejected), (first.read, 0), "{f}");
        assert_eq!(second.unchanged, second.read, "{f}");
    }
}

/// The real planning.data.gov.uk sample loads through the operator's loader with every row
/// accounted for (skipped when the shared samples are absent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_listed_building_outlines_load_with_every_row_accounted() {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/planning/planning_data_listed-building-outline_flattened_southwark_952rows.csv"
    ));
    if !p.exists() {
        println!("note: real sample {} is absent; skipping", p.display());
        return;
    }
    let t = TestDb::new().await;
    let [first, second] = load_twice(&t.db, Dataset::PlanningData, &p).await;
    assert_eq!(first.read, 952);
    assert_eq!(first.loaded + first.rejected, 952);
    assert_eq!(first.rejected, 0);
    assert_eq!(second.unchanged, 952);
}
