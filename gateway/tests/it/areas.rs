//! The areas family on the fixture world: resolve of each kind of id and name (typos,
//! ambiguity, unknown names), reverse geocoding on and off land for each kind loaded, the H3
//! derived step, each validation rule; and the real Exeter samples (boundaries, Code-Point Open,
//! the postcode directory) when ../shared/data is present.

use crate::support::{
    Reply, account, fixtures, get, manifest, onspd, post_json, send, service, state_for,
};
use serde_json::{Value, json};
use std::path::PathBuf;
use terrace_gateway::state::RateLimit;
use terrace_ingest::{Dataset, Progress};
use terrace_store::testing::TestDb;

/// The first data row of a fixture names-and-codes file: (code, name).
fn first_name(file: &str) -> (String, String) {
    let text = std::fs::read_to_string(fixtures().join("names_codes").join(file)).unwrap();
    let row: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
    (row[0].to_string(), row[1].to_string())
}

async fn world() -> (TestDb, terrace_gateway::state::AppState) {
    let t = crate::support::fixture_db().await;
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
    let m = manifest();

    // A local authority by area id and by bare GSS code: named, centred, its region and country
    // parents.
    for q in ["lad:E06009901", "e06009901"] {
        let r = send(&svc, resolve(q)).await;
        assert_eq!(r.status, 200, "{q}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
        let a = &r.json["area"];
        assert_eq!(a["area_id"], "lad:E06009901");
        assert_eq!(a["analytics_area_id"], "lad:E06009901");
        assert_eq!(a["kind"], "lad");
        assert_eq!(a["name"], "Tamberley");
        assert!(a["place_type"].is_null() && a["address_count"].is_null());
        let lat = a["centroid"]["lat"].as_f64().unwrap();
        assert!((50.568..50.638).contains(&lat), "{lat}");
        assert_eq!(
            ids(&a["parents"]),
            ["region:E12009901", "country:E92000001"]
        );
        assert_eq!(a["parents"][0]["name"], "Wessex");
        assert_eq!(a["parents"][1]["name"], "England");
    }

    // A postcode in any form: its sector, district, area, LSOA, MSOA, ward, authority, region
    // and country (the directory's codes), and the district answers for its analytics.
    let r = send(&svc, resolve("xt11ab")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let a = &r.json["area"];
    assert_eq!(r.json["matched_as"], "postcode");
    assert_eq!(a["area_id"], "unit:XT1 1AB");
    assert_eq!(a["analytics_area_id"], "district:XT1");
    assert!((a["centroid"]["lat"].as_f64().unwrap() - 50.616897).abs() < 1e-4);
    let ward = onspd("XT1 1AB", "osward");
    let msoa = onspd("XT1 1AB", "msoa21");
    assert_eq!(
        ids(&a["parents"]),
        [
            "sector:XT1 1".to_string(),
            "district:XT1".into(),
            "area:XT".into(),
            "lsoa:E01099002".into(),
            format!("msoa:{msoa}"),
            format!("ward:{ward}"),
            "lad:E06009901".into(),
            "region:E12009901".into(),
            "country:E92000001".into(),
        ]
    );

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

    // Ward, MSOA, LSOA, region and country, by id, bare code and name (the names and codes):
    // the finer ones answer for analytics with their local authority.
    let (ward_code, ward_name) = first_name("WD23_names_and_codes.csv");
    let (msoa_code, msoa_name) = first_name("MSOA21_names_and_codes.csv");
    for (q, id, analytics, how) in [
        (
            format!("ward:{ward_code}"),
            format!("ward:{ward_code}"),
            "lad:E06009901",
            "area_id",
        ),
        (
            ward_name.to_lowercase(),
            format!("ward:{ward_code}"),
            "lad:E06009901",
            "name",
        ),
        (
            msoa_code.clone(),
            format!("msoa:{msoa_code}"),
            "lad:E06009901",
            "gss_code",
        ),
        (
            msoa_name.clone(),
            format!("msoa:{msoa_code}"),
            "lad:E06009901",
            "name",
        ),
        (
            "tamberley 001b".into(),
            "lsoa:E01099002".into(),
            "lad:E06009901",
            "name",
        ),
        (
            "Wessex".into(),
            "region:E12009901".into(),
            "region:E12009901",
            "name",
        ),
        (
            "E12009901".into(),
            "region:E12009901".into(),
            "region:E12009901",
            "gss_code",
        ),
        (
            "england".into(),
            "country:E92000001".into(),
            "country:E92000001",
            "name",
        ),
    ] {
        let r = send(&svc, resolve(&q)).await;
        assert_eq!(r.status, 200, "{q}: {}", r.json);
        let a = &r.json["area"];
        assert_eq!(a["area_id"], id.as_str(), "{q}");
        assert_eq!(a["analytics_area_id"], analytics, "{q}");
        assert_eq!(r.json["matched_as"], how, "{q}");
        assert!(a["centroid"]["lat"].is_f64(), "{q}");
        let p = ids(&a["parents"]);
        if id == "country:E92000001" {
            assert!(p.is_empty(), "{p:?}");
        } else {
            assert_eq!(
                p.last().map(String::as_str),
                Some("country:E92000001"),
                "{q}"
            );
        }
    }
    let r = send(&svc, resolve(&format!("ward:{ward_code}"))).await;
    assert_eq!(r.json["area"]["name"], ward_name.as_str());
    assert_eq!(
        ids(&r.json["area"]["parents"]),
        ["lad:E06009901", "region:E12009901", "country:E92000001"]
    );

    // A place by its OS id: a town, its local type, its authority answering for analytics.
    let town = &m["area_cases"]["town"];
    let r = send(&svc, resolve(town[0].as_str().unwrap())).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let a = &r.json["area"];
    assert_eq!(a["kind"], "place");
    assert_eq!(a["place_type"], "Town");
    assert_eq!(a["name"], town[1]);
    assert_eq!(a["analytics_area_id"], town[2]);
    let p = ids(&a["parents"]);
    assert!(p.contains(&town[2].as_str().unwrap().to_string()), "{p:?}");
    assert_eq!(p.last().map(String::as_str), Some("country:E92000001"));

    // A name, a typo of it, and an H3 cell (the H3 reference vector's).
    let r = send(&svc, resolve("Wyvern Vale")).await;
    assert_eq!(r.json["area"]["area_id"], "lad:E06009902");
    assert_eq!(r.json["matched_as"], "name");
    let r = send(&svc, resolve("Wyvern Vael")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["area"]["area_id"], "lad:E06009902");
    assert_eq!(r.json["matched_as"], "name_typo");
    // The resolution-8 cell of the H3 reference implementation's cellToLatLng vector (the
    // centre of 8928342e20fffff, uber/h3 tests/cli/cellToLatLng.txt): centred near it, and no
    // loaded address in it (null, not 0).
    let cell = terrace_build::derive::h3_cell(37.5012466151, -122.5003039349).unwrap();
    let r = send(&svc, resolve(&cell.to_uppercase())).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["matched_as"], "h3");
    assert_eq!(r.json["area"]["area_id"], format!("h3:{cell}"));
    let c = &r.json["area"]["centroid"];
    assert!((c["lat"].as_f64().unwrap() - 37.5012).abs() < 0.01, "{c}");
    assert!(r.json["area"]["address_count"].is_null());

    // Two places share a name: each listed with its parents; a typo of it too.
    let shared = m["area_cases"]["ambiguous_place"].as_str().unwrap();
    let want: Vec<&str> = m["area_cases"]["ambiguous_place_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mut typo = shared.to_string();
    typo.pop();
    for q in [shared, typo.as_str()] {
        let r = send(&svc, resolve(q)).await;
        assert_eq!(r.status, 200, "{q}: {}", r.json);
        assert_eq!(r.json["status"], "ambiguous", "{q}");
        assert!(r.json["area"].is_null());
        let c = r.json["candidates"].as_array().unwrap();
        let got: Vec<&str> = c.iter().map(|a| a["area_id"].as_str().unwrap()).collect();
        assert_eq!(got, want, "{q}");
        for a in c {
            assert_eq!(a["kind"], "place");
            assert!(
                ids(&a["parents"]).iter().any(|p| p.starts_with("lad:")),
                "{a}"
            );
        }
    }
    // The authority and the town called Tamberley.
    let r = send(&svc, resolve("Tamberley")).await;
    assert_eq!(r.json["status"], "ambiguous", "{}", r.json);
    let got: Vec<&str> = r.json["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["kind"].as_str().unwrap())
        .collect();
    assert_eq!(got, ["lad", "place"]);
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
    // The fixture's name not found: the nearest names include the place it resembles.
    let m = manifest();
    let r = send(
        &svc,
        resolve(json!({"query": m["area_cases"]["not_found"]})),
    )
    .await;
    assert_eq!(r.status, 404, "{}", r.json);
    let msg = r.json.to_string();
    let shared = m["area_cases"]["ambiguous_place"].as_str().unwrap();
    assert!(msg.contains(&format!("{shared} (Village, place:")), "{msg}");
    for q in [
        "XT9 9ZZ",
        "lad:E06000001",
        "E06000001",
        "ZZ9",
        "ZZ9 9",
        "place:osgb4000000000000001",
        "osgb4000000000000001",
        "msoa:E02000001",
    ] {
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
    check_422(
        &send(&svc, resolve(json!({"query": "place:4000000074559543"}))).await,
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
    let msoa = format!("msoa:{}", onspd("XT1 1AB", "msoa21"));
    let ward = format!("ward:{}", onspd("XT1 1AB", "osward"));
    for (kind, id) in [
        ("unit", "unit:XT1 1AB"),
        ("sector", "sector:XT1 1"),
        ("district", "district:XT1"),
        ("area", "area:XT"),
        ("lsoa", "lsoa:E01099002"),
        ("msoa", msoa.as_str()),
        ("ward", ward.as_str()),
        ("lad", "lad:E06009901"),
        ("region", "region:E12009901"),
        ("country", "country:E92000001"),
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

    // The nearest populated place: within 5 km, with its local authority.
    let r = send(&svc, at(50.616897, -4.042462, "place")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["area"]["kind"], "place");
    assert!(r.json["area"]["place_type"].is_string());
    assert_eq!(r.json["area"]["analytics_area_id"], "lad:E06009901");

    // At sea off Cornwall, in Paris, and a kind with no loaded boundaries (the fixture's
    // authorities are unitary: no county): clear 404s, for every kind.
    for kind in [
        "unit", "lad", "ward", "msoa", "region", "country", "h3", "place",
    ] {
        for (lat, lon) in [(50.0, -5.9), (48.8566, 2.3522)] {
            let r = send(&svc, at(lat, lon, kind)).await;
            assert_eq!(r.status, 404, "({lat}, {lon}) {kind}: {}", r.json);
        }
    }
    for (lat, lon, kind) in [
        (50.0, -5.9, "lad"),
        (48.8566, 2.3522, "unit"),
        (50.616897, -4.042462, "county"),
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
    // The derived step put XT1 1AB's addresses (and their neighbours') in the cell.
    let n = r.json["area"]["address_count"].as_u64().unwrap();
    assert!(n >= 1, "{}", r.json);
    assert_eq!(back.json["area"]["address_count"], n);
    let r = send(
        &svc,
        get("/v1/areas/reverse-geocode?lat=50.6&lon=-4.0", &key),
    )
    .await;
    assert_eq!(r.status, 422, "{}", r.json);
    assert_eq!(crate::support::balance(&t.db, acct).await, 10);
}

/// The H3 derived step on the fixture world: every address with a position has its
/// resolution-8 cell (the one `h3o` computes from its latitude and longitude), a second run
/// changes nothing, and the counts per cell add up to the register.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_address_has_its_h3_cell_once() {
    let t = crate::support::fixture_db().await;
    let page = terrace_store::address::addresses_page(&t.db, 0, 100_000)
        .await
        .unwrap();
    let located: Vec<_> = page.iter().filter(|a| a.lat.is_some()).collect();
    assert!(located.len() > 5_000, "{}", located.len());
    let uprns: Vec<i64> = located.iter().map(|a| a.uprn).collect();
    let cells = terrace_store::areas::address_h3_by_uprn(&t.db, &uprns)
        .await
        .unwrap();
    assert_eq!(cells.len(), located.len());
    let by_uprn: std::collections::HashMap<i64, &str> =
        cells.iter().map(|c| (c.uprn, c.cell.as_str())).collect();
    for a in &located {
        let want = terrace_build::derive::h3_cell(a.lat.unwrap(), a.lon.unwrap()).unwrap();
        assert_eq!(by_uprn[&a.uprn], want, "{}", a.uprn);
        assert!(want.starts_with("88"), "{want}");
    }
    let counts = terrace_store::areas::h3_counts(&t.db).await.unwrap();
    assert_eq!(
        counts.iter().map(|(_, n)| n).sum::<i64>(),
        located.len() as i64
    );
    assert!(counts.iter().all(|(_, n)| *n > 0));
    let again = terrace_build::derive::derive_h3(&t.db, &mut Progress::quiet())
        .await
        .unwrap();
    assert_eq!(again, 0, "a second run changes nothing");
}

/// The real samples: Exeter's ward, LSOA and authority boundaries, Code-Point Open and the
/// postcode directory, with the ward names and codes in ONS's layout; resolve by name and
/// reverse geocoding on land and at sea.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_exeter_areas_resolve_and_reverse_geocode() {
    let data = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data"));
    if !data.is_dir() {
        eprintln!("../shared/data is absent: real area samples skipped");
        return;
    }
    let t = TestDb::new().await;
    let dir = tempfile::tempdir().unwrap();
    let names = dir.path().join("WD_NC.csv");
    std::fs::write(&names, "WD19CD,WD19NM\nE05003491,Alphington\n").unwrap();
    // An ONS built-up area around the city centre, in the 2022 file's property names.
    let bua = dir.path().join("BUA22_boundaries.geojson");
    std::fs::write(
        &bua,
        r#"{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::27700"}},"features":[{"type":"Feature","properties":{"BUA22CD":"E63011018","BUA22NM":"Exeter","LAD22CD":"E07000041"},"geometry":{"type":"Polygon","coordinates":[[[291000,91500],[293500,91500],[293500,94000],[291000,94000],[291000,91500]]]}}]}"#,
    )
    .unwrap();
    for (ds, path) in [
        (
            Dataset::Boundaries,
            data.join("boundaries/lad19_exeter_E07000041.geojson"),
        ),
        (
            Dataset::Boundaries,
            data.join("boundaries/martinjc_electoral_eng_wards_by_lad_E07000041.geojson"),
        ),
        (
            Dataset::Boundaries,
            data.join("boundaries/martinjc_statistical_eng_lsoa_by_lad_E07000041.geojson"),
        ),
        (
            Dataset::CodePoint,
            data.join("postcodes/codepoint_open_2024.1.0_ex.csv"),
        ),
        (
            Dataset::Onspd,
            data.join("postcodes/nspd_nov2025_via_qlacref_E07000041_E06000046_SW19.csv"),
        ),
        (Dataset::NamesCodes, names),
        (Dataset::Boundaries, bua),
    ] {
        let r =
            terrace_ingest::load_file(&t.db, ds, &path, Default::default(), &mut Progress::quiet())
                .await
                .unwrap();
        let c = &r.counts;
        assert_eq!(
            c.read,
            c.loaded + c.updated + c.deleted + c.rejected + c.unchanged
        );
        assert_eq!(c.rejected, 0, "{}", r.file);
    }
    let state = state_for(&t.db, RateLimit::default()).await;
    let (_, key) = account(&t.db, 10).await;
    let svc = service(state).await;

    let r = send(
        &svc,
        post_json("/v1/areas/resolve", &key, &json!({"query": "alphington"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let a = &r.json["area"];
    assert_eq!(a["area_id"], "ward:E05003491");
    assert_eq!(a["analytics_area_id"], "lad:E07000041");
    assert_eq!(ids(&a["parents"]), ["lad:E07000041", "country:E92000001"]);

    // EX1 1AA (BNG 292269, 92680): its ward, LSOA and authority; at sea in Lyme Bay, nothing.
    let (lon, lat) = terrace_geo::wgs84_from_bng(292_269.0, 92_680.0).unwrap();
    for (kind, prefix) in [
        ("ward", "ward:E05"),
        ("lsoa", "lsoa:E01"),
        ("lad", "lad:E07000041"),
        ("bua", "bua:E63011018"),
    ] {
        let r = send(
            &svc,
            get(
                &format!("/v1/areas/reverse-geocode?lat={lat}&lon={lon}&type_id={kind}"),
                &key,
            ),
        )
        .await;
        assert_eq!(r.status, 200, "{kind}: {}", r.json);
        assert!(
            r.json["area"]["area_id"]
                .as_str()
                .unwrap()
                .starts_with(prefix),
            "{}",
            r.json
        );
        // Code-Point Open's position of EX1 1AA (kept over the directory's) is a few metres off.
        assert!(
            r.json["nearest_postcode"]["distance_m"].as_f64().unwrap() < 100.0,
            "{}",
            r.json
        );
        if kind != "lad" {
            assert!(ids(&r.json["area"]["parents"]).contains(&"lad:E07000041".to_string()));
        }
    }
    let r = send(
        &svc,
        post_json(
            "/v1/areas/resolve",
            &key,
            &json!({"query": "bua:E63011018"}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["area"]["name"], "Exeter", "{}", r.json);
    assert_eq!(r.json["area"]["kind"], "bua", "{}", r.json);
    for kind in ["ward", "lsoa", "lad", "unit", "bua"] {
        let r = send(
            &svc,
            get(
                &format!("/v1/areas/reverse-geocode?lat=50.45&lon=-3.25&type_id={kind}"),
                &key,
            ),
        )
        .await;
        assert_eq!(r.status, 404, "{kind}: {}", r.json);
    }
}
