//! The areas family on the fixture world: resolve of each kind of id and name (typos,
//! ambiguity, unknown names), reverse geocoding on and off land, and each validation rule.

use crate::support::{Reply, account, get, post_json, send, service, state_for};
use serde_json::{Value, json};
use std::path::PathBuf;
use terrace_gateway::state::RateLimit;
use terrace_ingest::{Dataset, Progress};
use terrace_store::testing::TestDb;

fn fixtures() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures"))
}

/// A ward that shares its name with the fixture's local authority Tamberley (E06009901), in the
/// ONS boundary format (`WD23CD`, `WD23NM`), inside that authority.
const TAMBERLEY_WARD: &str = r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"WD23CD":"E05099001","WD23NM":"Tamberley"},"geometry":{"type":"Polygon","coordinates":[[[-4.05,50.60],[-4.03,50.60],[-4.03,50.625],[-4.05,50.625],[-4.05,50.60]]]}}]}"#;

async fn world() -> (TestDb, terrace_gateway::state::AppState) {
    let t = TestDb::new().await;
    terrace_ingest::load_manifest(&t.db, &fixtures(), &mut Progress::quiet())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wards.geojson");
    std::fs::write(&path, TAMBERLEY_WARD).unwrap();
    let report = terrace_ingest::load_file(
        &t.db,
        Dataset::Boundaries,
        &path,
        Default::default(),
        &mut Progress::quiet(),
    )
    .await
    .unwrap();
    assert_eq!(report.counts.rejected, 0);
    let state = state_for(&t.db, RateLimit::default()).await;
    (t, state)
}

fn ids(parents: &Value) -> Vec<String> {
    parents
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["area_id"].as_str().unwrap().to_string())
        .collect()
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_reads_every_kind_of_id_and_name() {
    let (t, state) = world().await;
    let (_, key) = account(&t.db, 10).await;
    let svc = service(state).await;
    let resolve = |q: &str| post_json("/v1/areas/resolve", &key, &json!({ "query": q }));

    // A local authority by area id and by bare GSS code: named, centred, its country a parent.
    for q in ["lad:E06009901", "e06009901"] {
        let r = send(&svc, resolve(q)).await;
        assert_eq!(r.status, 200, "{q}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
        let a = &r.json["area"];
        assert_eq!(a["area_id"], "lad:E06009901");
        assert_eq!(a["analytics_area_id"], "lad:E06009901");
        assert_eq!(a["kind"], "lad");
        assert_eq!(a["name"], "Tamberley");
        let lat = a["centroid"]["lat"].as_f64().unwrap();
        assert!((50.568..50.638).contains(&lat), "{lat}");
        // The fixture world loads planning.data's local planning authorities, which the area
        // kinds rank coarser than a local authority: Tamberley's LPA holds it.
        assert_eq!(ids(&a["parents"]), ["lpa:E60009901", "country:E92000001"]);
    }

    // A postcode in any form: its sector, district, area, LSOA, ward and authority, and the
    // district answers for its analytics.
    let r = send(&svc, resolve("xt11ab")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let a = &r.json["area"];
    assert_eq!(r.json["matched_as"], "postcode");
    assert_eq!(a["area_id"], "unit:XT1 1AB");
    assert_eq!(a["analytics_area_id"], "district:XT1");
    assert!((a["centroid"]["lat"].as_f64().unwrap() - 50.616897).abs() < 1e-4);
    let p = ids(&a["parents"]);
    for want in [
        "sector:XT1 1",
        "district:XT1",
        "area:XT",
        "lsoa:E01099002",
        "ward:E05099001",
        "lad:E06009901",
        "country:E92000001",
    ] {
        assert!(p.contains(&want.to_string()), "{want} not in {p:?}");
    }
    assert_eq!(p[0], "sector:XT1 1", "finest first: {p:?}");

    // Sector, district and postcode area, each from the loaded postcodes.
    for (q, id, how) in [
        ("XT1 1", "sector:XT1 1", "sector"),
        ("xt1", "district:XT1", "district"),
        ("XT11", "district:XT11", "district"),
        ("XT", "area:XT", "postcode_area"),
    ] {
        let r = send(&svc, resolve(q)).await;
        assert_eq!(r.status, 200, "{q}: {}", r.json);
        assert_eq!(r.json["area"]["area_id"], id, "{q}");
        assert_eq!(r.json["matched_as"], how, "{q}");
        assert!(r.json["area"]["centroid"]["lat"].is_f64(), "{q}");
    }
    let r = send(&svc, resolve("XT1 1")).await;
    assert_eq!(r.json["area"]["analytics_area_id"], "district:XT1");
    assert!(ids(&r.json["area"]["parents"]).contains(&"lad:E06009901".to_string()));

    // A ward answers for analytics with its local authority.
    let r = send(&svc, resolve("ward:E05099001")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["area"]["analytics_area_id"], "lad:E06009901");

    // An LSOA by name.
    let r = send(&svc, resolve("tamberley 001b")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["area"]["area_id"], "lsoa:E01099002");
    assert_eq!(r.json["area"]["analytics_area_id"], "lad:E06009901");

    // A name, a typo of it, and an H3 cell (the H3 reference vector; no centroid computed).
    let r = send(&svc, resolve("Wyvern Vale")).await;
    assert_eq!(r.json["area"]["area_id"], "lad:E06009902");
    assert_eq!(r.json["matched_as"], "name");
    let r = send(&svc, resolve("Wyvern Vael")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["area"]["area_id"], "lad:E06009902");
    assert_eq!(r.json["matched_as"], "name_typo");
    let r = send(&svc, resolve("881F1D4887FFFFF")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["area"]["area_id"], "h3:881f1d4887fffff");
    // Its centre (from the H3 library) is near the reference point it was made from.
    let c = &r.json["area"]["centroid"];
    assert!((c["lat"].as_f64().unwrap() - 52.516262).abs() < 0.01, "{c}");
    assert!((c["lon"].as_f64().unwrap() - 13.377704).abs() < 0.01, "{c}");

    // Two places called Tamberley: each listed with its parents.
    for q in ["Tamberley", "tamberly"] {
        let r = send(&svc, resolve(q)).await;
        assert_eq!(r.status, 200, "{q}: {}", r.json);
        assert_eq!(r.json["status"], "ambiguous");
        assert!(r.json["area"].is_null());
        let c = r.json["candidates"].as_array().unwrap();
        let got: Vec<&str> = c.iter().map(|a| a["area_id"].as_str().unwrap()).collect();
        assert_eq!(got, ["lad:E06009901", "ward:E05099001"], "{q}");
        assert!(ids(&c[1]["parents"]).contains(&"lad:E06009901".to_string()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_unknowns_are_404_with_the_nearest_names_and_bad_ids_422() {
    let (t, state) = world().await;
    let (acct, key) = account(&t.db, 10).await;
    let svc = service(state).await;
    let resolve = |q: Value| post_json("/v1/areas/resolve", &key, &q);

    let r = send(&svc, resolve(json!({"query": "Wyvernshire Dale"}))).await;
    assert_eq!(r.status, 404, "{}", r.json);
    let msg = r.json.to_string();
    assert!(
        msg.contains("nearest matches") && msg.contains("Wyvern Vale (lad:E06009902)"),
        "{msg}"
    );
    assert_eq!(r.json["credits_charged"], 0);
    for q in ["XT9 9ZZ", "lad:E06000001", "E06000001", "ZZ9", "ZZ9 9"] {
        let r = send(&svc, resolve(json!({ "query": q }))).await;
        assert_eq!(r.status, 404, "{q}: {}", r.json);
    }

    // One request per rule.
    check_422(
        &send(&svc, resolve(json!({"query": "  "}))).await,
        &["body", "query"],
        "string_too_short",
    );
    check_422(
        &send(&svc, resolve(json!({"query": "lad:E01099001"}))).await,
        &["body", "query"],
        "value_error",
    );
    check_422(
        &send(&svc, resolve(json!({"query": "h3:89195da49bfffff"}))).await,
        &["body", "query"],
        "value_error",
    );
    let r = send(&svc, resolve(json!({}))).await;
    assert_eq!(r.status, 422, "{}", r.json);
    let r = send(&svc, resolve(json!({"query": "XT1", "extra": 1}))).await;
    assert_eq!(r.status, 422, "{}", r.json);
    assert_eq!(crate::support::balance(&t.db, acct).await, 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reverse_geocode_on_land_at_sea_and_abroad() {
    let (t, state) = world().await;
    let (acct, key) = account(&t.db, 10).await;
    let svc = service(state).await;
    let at = |lat: f64, lon: f64, kind: &str| {
        get(
            &format!("/v1/areas/reverse-geocode?lat={lat}&lon={lon}&type_id={kind}"),
            &key,
        )
    };

    // XT1 1AB's own point: each kind of area containing it, and the postcode itself nearest.
    for (kind, id) in [
        ("unit", "unit:XT1 1AB"),
        ("sector", "sector:XT1 1"),
        ("district", "district:XT1"),
        ("area", "area:XT"),
        ("lsoa", "lsoa:E01099002"),
        ("ward", "ward:E05099001"),
        ("lad", "lad:E06009901"),
    ] {
        let r = send(&svc, at(50.616897, -4.042462, kind)).await;
        assert_eq!(r.status, 200, "{kind}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
        assert_eq!(r.json["area"]["area_id"], id, "{kind}");
        assert_eq!(r.json["nearest_postcode"]["postcode"], "XT1 1AB");
        assert!(r.json["nearest_postcode"]["distance_m"].as_f64().unwrap() < 5.0);
    }
    // In Wyvern Vale, the other authority.
    let r = send(&svc, at(50.60, -3.93, "lad")).await;
    if r.status == 200 {
        assert_eq!(r.json["area"]["area_id"], "lad:E06009902");
    } else {
        // No fixture postcode within 2 km of that point: at sea as far as the directory knows.
        assert_eq!(r.status, 404, "{}", r.json);
    }

    // At sea off Cornwall, in Paris, and a kind with no loaded boundaries: clear 404s.
    for (lat, lon, kind) in [
        (50.0, -5.9, "lad"),
        (48.8566, 2.3522, "unit"),
        (50.616897, -4.042462, "region"),
    ] {
        let r = send(&svc, at(lat, lon, kind)).await;
        assert_eq!(r.status, 404, "({lat}, {lon}) {kind}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
    }

    // One request per rule.
    check_422(
        &send(&svc, at(91.0, -4.0, "lad")).await,
        &["query", "lat"],
        "less_than_equal",
    );
    check_422(
        &send(&svc, at(50.6, -181.0, "lad")).await,
        &["query", "lon"],
        "greater_than_equal",
    );
    check_422(
        &send(&svc, at(50.6, -4.0, "parish")).await,
        &["query", "type_id"],
        "value_error",
    );
    // The resolution-8 H3 cell holding XT1 1AB's point: its centre is within a cell's reach
    // (edge about 0.46 km) of the point, and resolving its id gives the same centre.
    let r = send(&svc, at(50.616897, -4.042462, "h3")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let id = r.json["area"]["area_id"].as_str().unwrap().to_string();
    assert!(id.starts_with("h3:88"), "{id}");
    let (clat, clon) = (
        r.json["area"]["centroid"]["lat"].as_f64().unwrap(),
        r.json["area"]["centroid"]["lon"].as_f64().unwrap(),
    );
    let dy = (clat - 50.616897) * 111_320.0;
    let dx = (clon + 4.042462) * 111_320.0 * 50.616897_f64.to_radians().cos();
    assert!((dx * dx + dy * dy).sqrt() < 600.0, "centre {clat},{clon}");
    let back = send(
        &svc,
        post_json("/v1/areas/resolve", &key, &json!({ "query": id })),
    )
    .await;
    assert_eq!(back.status, 200, "{}", back.json);
    assert_eq!(back.json["area"]["centroid"], r.json["area"]["centroid"]);
    let r = send(
        &svc,
        get("/v1/areas/reverse-geocode?lat=50.6&lon=-4.0", &key),
    )
    .await;
    assert_eq!(r.status, 422, "{}", r.json);
    assert_eq!(crate::support::balance(&t.db, acct).await, 10);
}
