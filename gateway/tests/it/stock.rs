//! The OS Open Map Local buildings GeoPackage (a GeoPackage written here table by table, with
//! malformed geometries: row accounting, file:fid rejections, idempotence) and the stock profile
//! (`GET /v1/buildings/stock-profile/{area_id}`, issue 18): unit counts, the mixed-use share,
//! median footprint and height with their n, solar penetration from planted certificates, the
//! `not_available` paths, every validation rule and the charging fields, each figure checked
//! against values worked out by hand from the planted rows.

use crate::support::{TestApp, account, balance, get, load_text, send, service, world};
use crate::validation::check_422;
use serde_json::{Value, json};
use terrace_fixturegen::land::{GpkgBuilding, gpkg_blob, os_buildings_gpkg_sql, rect, wkb_polygon};
use terrace_ingest::{Dataset, LoadReport, Progress};

/// Authority A (E06000099) holds the small world's Exampleton addresses, B (E06000098) Otherbury.
const LADS: &str = r#"{"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"LAD23CD":"E06000099","LAD23NM":"Exampleshire"},"geometry":{"type":"Polygon","coordinates":[[[259000,79000],[262000,79000],[262000,82000],[259000,82000],[259000,79000]]]}},
{"type":"Feature","properties":{"LAD23CD":"E06000098","LAD23NM":"Otherbury"},"geometry":{"type":"Polygon","coordinates":[[[264000,84000],[266000,84000],[266000,86000],[264000,86000],[264000,84000]]]}}
]}"#;

const BNG: i32 = 27_700;

fn blob(x0: f64, y0: f64, x1: f64, y1: f64) -> Option<Vec<u8>> {
    Some(gpkg_blob(BNG, &wkb_polygon(&[rect(x0, y0, x1, y1)]), true))
}

fn row(
    fid: i64,
    id: &str,
    code: i32,
    height: Option<&str>,
    geometry: Option<Vec<u8>>,
) -> GpkgBuilding {
    GpkgBuilding {
        fid,
        id: Some(id.to_string()),
        feature_code: Some(code),
        height: height.map(str::to_string),
        geometry,
    }
}

/// Six good rows (five in A, one in B) and ten malformed ones, each named in `REJECTED`.
fn gpkg_rows() -> Vec<GpkgBuilding> {
    let mut unclosed = rect(260_600.0, 80_600.0, 260_610.0, 80_610.0);
    unclosed.pop();
    let mut point = vec![1u8];
    point.extend(1u32.to_le_bytes());
    point.extend(260_000.0f64.to_le_bytes());
    point.extend(80_000.0f64.to_le_bytes());
    let mut not_gp = blob(0.0, 0.0, 1.0, 1.0).unwrap();
    not_gp[0] = b'X';
    let mut empty = blob(0.0, 0.0, 1.0, 1.0).unwrap();
    empty[3] |= 0b0001_0000;
    let mut truncated = blob(0.0, 0.0, 1.0, 1.0).unwrap();
    truncated.truncate(truncated.len() - 20);
    vec![
        // 100 m², 6.5 m
        row(
            1,
            "G1",
            15_014,
            Some("6.5"),
            blob(260_000.0, 80_000.0, 260_010.0, 80_010.0),
        ),
        // a glasshouse: loaded, left out of the stock profile's buildings
        row(
            2,
            "G2",
            15_016,
            None,
            blob(260_050.0, 80_050.0, 260_070.0, 80_070.0),
        ),
        // 40 m², 12 m
        row(
            3,
            "G3",
            15_014,
            Some("12"),
            blob(260_200.0, 80_200.0, 260_205.0, 80_208.0),
        ),
        // 300 m², no height
        row(
            4,
            "G4",
            15_019,
            None,
            blob(260_300.0, 80_300.0, 260_330.0, 80_310.0),
        ),
        // 16 m², 3 m, with a big-endian header
        row(
            5,
            "G5",
            15_014,
            Some("3"),
            Some(gpkg_blob(
                BNG,
                &wkb_polygon(&[rect(260_400.0, 80_400.0, 260_404.0, 80_404.0)]),
                false,
            )),
        ),
        GpkgBuilding {
            fid: 6,
            id: None,
            feature_code: Some(15_014),
            height: None,
            geometry: blob(260_500.0, 80_500.0, 260_510.0, 80_510.0),
        },
        row(7, "G7", 15_014, None, None),
        row(
            8,
            "G8",
            15_014,
            None,
            Some(gpkg_blob(BNG, &wkb_polygon(&[unclosed]), true)),
        ),
        row(9, "G9", 15_014, None, Some(gpkg_blob(BNG, &point, true))),
        row(10, "G10", 15_014, None, Some(not_gp)),
        row(
            11,
            "G11",
            15_014,
            None,
            Some(gpkg_blob(
                4_326,
                &wkb_polygon(&[rect(0.0, 0.0, 1.0, 1.0)]),
                true,
            )),
        ),
        row(
            12,
            "G12",
            15_099,
            None,
            blob(260_700.0, 80_700.0, 260_710.0, 80_710.0),
        ),
        row(
            13,
            "G13",
            15_014,
            Some("tall"),
            blob(260_800.0, 80_800.0, 260_810.0, 80_810.0),
        ),
        row(14, "G14", 15_014, None, Some(empty)),
        row(15, "G15", 15_014, None, Some(truncated)),
        // 64 m² in authority B
        row(
            16,
            "G16",
            15_014,
            None,
            blob(265_000.0, 85_000.0, 265_008.0, 85_008.0),
        ),
    ]
}

/// (fid, words the rejection's reason must hold).
const REJECTED: [(u64, &[&str]); 10] = [
    (6, &["no id"]),
    (7, &["G7", "no geometry"]),
    (8, &["G8", "unclosed ring"]),
    (9, &["G9", "Point"]),
    (10, &["G10", "GP magic"]),
    (11, &["G11", "srs_id 4326"]),
    (12, &["G12", "not a building code"]),
    (13, &["G13", "height"]),
    (14, &["G14", "empty geometry"]),
    (15, &["G15", "bad WKB"]),
];

async fn load_gpkg(app: &TestApp, script: &str) -> Result<LoadReport, terrace_ingest::IngestError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("opmplc_gb.gpkg");
    terrace_store::gpkg::create_sqlite_file(&path, script).unwrap();
    terrace_ingest::load_file(
        app.db(),
        Dataset::OsBuildings,
        &path,
        Default::default(),
        &mut Progress::quiet(),
    )
    .await
}

/// The small world with the two authorities and the GeoPackage's buildings (no land build).
async fn gpkg_world() -> (TestApp, LoadReport) {
    let app = world().await;
    load_text(app.db(), Dataset::Boundaries, LADS).await;
    terrace_build::derive::derive_areas(app.db(), &mut Progress::quiet())
        .await
        .unwrap();
    let report = load_gpkg(&app, &os_buildings_gpkg_sql(&gpkg_rows(), true))
        .await
        .unwrap();
    (app, report)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_geopackage_loader_reads_the_building_layer_rejects_each_malformed_row_and_reloads_to_no_change()
 {
    let (app, first) = gpkg_world().await;
    let c = &first.counts;
    assert_eq!(
        (c.read, c.loaded, c.rejected),
        (16, 6, 10),
        "{:?}",
        first.rejections
    );
    assert_eq!(
        c.read,
        c.loaded + c.updated + c.unchanged + c.deleted + c.rejected
    );
    let lines: Vec<u64> = first.rejections.iter().map(|r| r.line).collect();
    assert_eq!(lines, REJECTED.iter().map(|(l, _)| *l).collect::<Vec<_>>());
    for (r, (_, words)) in first.rejections.iter().zip(REJECTED) {
        assert!(r.file.ends_with("opmplc_gb.gpkg"), "{r}");
        for w in words {
            assert!(r.reason.contains(w), "{r} should say {w}");
        }
    }
    let stored = terrace_store::land::footprints_by_id(
        app.db(),
        &["G1".to_string(), "G5".to_string(), "G16".to_string()],
    )
    .await
    .unwrap();
    let by = |id: &str| stored.iter().find(|f| f.building_id == id).unwrap();
    assert_eq!(by("G1").height_m, Some(6.5));
    assert_eq!(by("G1").feature_code, Some(15_014));
    assert!((by("G1").area_m2 - 100.0).abs() < 1e-9);
    assert_eq!(by("G1").lad_code.as_deref(), Some("E06000099"));
    assert!((by("G5").area_m2 - 16.0).abs() < 1e-9, "big-endian header");
    assert_eq!(by("G16").lad_code.as_deref(), Some("E06000098"));
    assert_eq!(by("G16").height_m, None);

    let again = load_gpkg(&app, &os_buildings_gpkg_sql(&gpkg_rows(), true))
        .await
        .unwrap();
    assert_eq!(
        (
            again.counts.read,
            again.counts.loaded,
            again.counts.updated,
            again.counts.unchanged,
            again.counts.rejected
        ),
        (16, 0, 0, 6, 10)
    );

    // A file with no height column loads the same footprints with their heights gone: updated.
    let third = load_gpkg(&app, &os_buildings_gpkg_sql(&gpkg_rows(), false))
        .await
        .unwrap();
    assert_eq!(
        (third.counts.updated, third.counts.unchanged),
        (3, 3),
        "{:?}",
        third.counts
    );

    // A GeoPackage without a building layer, and a file that is no GeoPackage, are errors of
    // the file.
    let mut script = os_buildings_gpkg_sql(&gpkg_rows(), false);
    script.push_str("DELETE FROM gpkg_geometry_columns WHERE table_name = 'building';\nDELETE FROM gpkg_contents WHERE table_name = 'building';\n");
    let err = load_gpkg(&app, &script).await.unwrap_err().to_string();
    assert!(err.contains("no features layer \"building\""), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stock_profile_medians_come_from_the_geopackage_footprints_and_solar_is_not_available_without_certificates()
 {
    let (app, _) = gpkg_world().await;
    let (acct, key) = account(app.db(), 0).await;
    let svc = service(app.state.clone()).await;
    let r = send(&svc, get("/v1/buildings/stock-profile/lad:E06000099", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 0);
    assert_eq!(r.json["credits_remaining"], 0);
    // Footprints in A without the glasshouse: 16, 40, 100, 300 m²; heights 3, 6.5, 12 m.
    let f = &r.json["median_footprint_m2"];
    assert_eq!(
        (f["status"].as_str(), f["value"].as_str(), f["n"].as_i64()),
        (Some("ok"), Some("70.00"), Some(4))
    );
    let h = &r.json["median_height_m"];
    assert_eq!(
        (h["status"].as_str(), h["value"].as_str(), h["n"].as_i64()),
        (Some("ok"), Some("6.50"), Some(3))
    );
    let s = &r.json["solar_penetration"];
    assert_eq!(s["status"], "not_available");
    assert!(
        s["reason"].as_str().unwrap().contains("PHOTO_SUPPLY"),
        "{s}"
    );
    for k in ["percent", "share", "count", "denominator"] {
        assert_eq!(s[k], Value::Null, "{k}: never 0 for not known");
    }

    // B: one footprint without a height.
    let r = send(&svc, get("/v1/buildings/stock-profile/lad:E06000098", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["median_footprint_m2"]["value"], "64.00");
    assert_eq!(r.json["median_footprint_m2"]["n"], 1);
    let h = &r.json["median_height_m"];
    assert_eq!(
        (h["status"].as_str(), h["value"].as_str(), h["n"].as_i64()),
        (Some("not_available"), None, Some(0))
    );
    assert!(
        h["reason"]
            .as_str()
            .unwrap()
            .contains("none of the 1 building footprints"),
        "{h}"
    );
    assert_eq!(balance(app.db(), acct).await, 0);
}

/// Energy certificates for the solar share: UPRN 1's newest states 30% (an older one 0), 2's
/// 0, 12's newest 0 (an older 40), 3's is blank, 13's not a number, and 24 (in B) states 50.
const EPC: &str = "LMK_KEY,UPRN,ADDRESS1,POSTCODE,LODGEMENT_DATE,INSPECTION_DATE,PHOTO_SUPPLY
K1,990000000001,1 HIGH STREET,XT1 1AA,2015-03-01,2015-03-01,0
K2,990000000001,1 HIGH STREET,XT1 1AA,2023-05-01,2023-05-01,30
K3,990000000002,2 HIGH STREET,XT1 1AA,2022-01-10,2022-01-10,0.0
K4,990000000012,FLAT 2 10 HIGH STREET,XT1 1AB,2016-01-10,2016-01-10,40
K5,990000000012,FLAT 2 10 HIGH STREET,XT1 1AB,2024-01-10,2024-01-10,0
K6,990000000003,3 HIGH STREET,XT1 1AA,2021-01-10,2021-01-10,
K7,990000000013,FLAT 3 10 HIGH STREET,XT1 1AB,2021-01-10,2021-01-10,NO DATA!
K8,990000000024,12 STATION ROAD,XT3 4CD,2021-01-10,2021-01-10,50
";

/// A shop under the block of flats (parent 10): that building becomes mixed use.
const SHOP: &str = "UPRN,PARENT_UPRN,CLASS,SAO_START_NUMBER,SAO_START_SUFFIX,SAO_END_NUMBER,SAO_END_SUFFIX,SAO_TEXT,PAO_START_NUMBER,PAO_START_SUFFIX,PAO_END_NUMBER,PAO_END_SUFFIX,PAO_TEXT,STREET_DESCRIPTION,LOCALITY,TOWN_NAME,POSTCODE_LOCATOR,X_COORDINATE,Y_COORDINATE,LATITUDE,LONGITUDE
990000000014,990000000010,CR08,,,,,SHOP,10,,,,,HIGH STREET,,EXAMPLETON,XT1 1AB,260100,80010,,
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stock_profile_counts_units_mixed_use_and_solar_with_their_denominators() {
    let app = world().await;
    let db = app.db();
    load_text(db, Dataset::AddressBase, SHOP).await;
    load_text(db, Dataset::Boundaries, LADS).await;
    terrace_build::derive::derive_areas(db, &mut Progress::quiet())
        .await
        .unwrap();
    let epc = load_text(db, Dataset::Epc, EPC).await;
    assert_eq!(epc.counts.rejected, 0, "{:?}", epc.rejections);
    // Two buildings from GeoJSON with a height on one (the GeoJSON input reads `height`).
    let geojson = r#"{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::27700"}},"features":[
{"type":"Feature","properties":{"id":"B1","feature_code":15014,"height":9.5},"geometry":{"type":"Polygon","coordinates":[[[260000,80000],[260040,80000],[260040,80020],[260000,80020],[260000,80000]]]}},
{"type":"Feature","properties":{"id":"B2","feature_code":15026},"geometry":{"type":"Polygon","coordinates":[[[260195,80095],[260205,80095],[260205,80105],[260195,80105],[260195,80095]]]}}
]}"#;
    let b = load_text(db, Dataset::OsBuildings, geojson).await;
    assert_eq!((b.counts.loaded, b.counts.rejected), (2, 0));
    let (acct, key) = account(db, 7).await;
    let svc = service(app.state.clone()).await;

    let r = send(&svc, get("/v1/buildings/stock-profile/lad:E06000099", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["area_id"], "lad:E06000099");
    assert_eq!(
        (
            r.json["credits_charged"].as_i64(),
            r.json["credits_remaining"].as_i64()
        ),
        (Some(0), Some(7))
    );
    // Exampleton: houses 1-3, the shell 10 with flats 11-13 and the shop 14, the shop 20, Rose
    // Cottage 21, 21 and 12 Station Road.
    assert_eq!(
        r.json["units"],
        json!({"addresses": 12, "units": 11, "residential": 9, "commercial": 2, "dual_use": 0,
               "other": 0, "unclassified": 0, "parent_shells": 1})
    );
    // Buildings: 1, 2, 3, 10 (four units), 20, 21, 22, 23; building 10 is mixed: 1 of 8.
    assert_eq!(
        r.json["buildings"],
        json!({"addressed": 8, "multi_unit": 1, "with_residential_or_commercial": 8})
    );
    let m = &r.json["mixed_use_share"];
    assert_eq!(
        (
            m["status"].as_str(),
            m["count"].as_i64(),
            m["denominator"].as_i64(),
            m["percent"].as_i64(),
            m["share"].as_str()
        ),
        (Some("ok"), Some(1), Some(8), Some(13), Some("0.1250")),
        "12.5% is a whole 13%: {m}"
    );
    assert!(m["basis"].is_string());
    // The HMO share: no register is loaded.
    let hmo = &r.json["hmo_share"];
    assert_eq!(hmo["status"], "not_available");
    assert!(
        hmo["reason"]
            .as_str()
            .unwrap()
            .contains("HMO licence register"),
        "{hmo}"
    );
    assert_eq!(
        (
            hmo["count"].clone(),
            hmo["denominator"].clone(),
            hmo["percent"].clone()
        ),
        (Value::Null, Value::Null, Value::Null)
    );
    // Solar: stated by the newest certificates of 1 (30), 2 (0.0) and 12 (0); 3 is blank and 13
    // not a number, 24 lies in B.
    let s = &r.json["solar_penetration"];
    assert_eq!(
        (
            s["status"].as_str(),
            s["count"].as_i64(),
            s["denominator"].as_i64(),
            s["percent"].as_i64(),
            s["share"].as_str()
        ),
        (Some("ok"), Some(1), Some(3), Some(33), Some("0.3333")),
        "{s}"
    );
    // Footprints 800 and 100 m²: the median of two is their mean; one height.
    assert_eq!(r.json["median_footprint_m2"]["value"], "450.00");
    assert_eq!(r.json["median_footprint_m2"]["n"], 2);
    assert_eq!(r.json["median_height_m"]["value"], "9.50");
    assert_eq!(r.json["median_height_m"]["n"], 1);

    // Otherbury: one house, no footprint; its certificate states 50%.
    let r = send(&svc, get("/v1/buildings/stock-profile/lad:E06000098", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["units"]["residential"], 1);
    let m = &r.json["mixed_use_share"];
    assert_eq!(
        (
            m["status"].as_str(),
            m["count"].as_i64(),
            m["denominator"].as_i64(),
            m["percent"].as_i64()
        ),
        (Some("ok"), Some(0), Some(1), Some(0)),
        "a measured 0"
    );
    let s = &r.json["solar_penetration"];
    assert_eq!(
        (
            s["count"].as_i64(),
            s["denominator"].as_i64(),
            s["percent"].as_i64()
        ),
        (Some(1), Some(1), Some(100))
    );
    for k in ["median_footprint_m2", "median_height_m"] {
        let f = &r.json[k];
        assert_eq!(
            (f["status"].as_str(), f["value"].clone(), f["n"].as_i64()),
            (Some("not_available"), Value::Null, Some(0)),
            "{k}"
        );
        assert!(
            f["reason"]
                .as_str()
                .unwrap()
                .contains("no OS Open Map Local building footprint is loaded in lad:E06000098"),
            "{f}"
        );
    }
    assert_eq!(balance(db, acct).await, 7);
    assert_eq!(
        terrace_store::accounts::ledger_sum(db, acct).await.unwrap(),
        7
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stock_profile_validation_is_422_unknown_areas_404_and_nothing_is_charged() {
    let (app, _) = gpkg_world().await;
    let (acct, key) = account(app.db(), 3).await;
    let svc = service(app.state.clone()).await;
    check_422(
        &send(&svc, get("/v1/buildings/stock-profile/%20%20", &key)).await,
        &["path", "area_id"],
        "value_error",
    );
    let long = format!("/v1/buildings/stock-profile/lad:{}", "E".repeat(37));
    check_422(
        &send(&svc, get(&long, &key)).await,
        &["path", "area_id"],
        "string_too_long",
    );
    for area in [
        "lad:E06000097",
        "nowhere",
        "district:XT1",
        "lsoa:E01000001",
        "lad:E01000001",
    ] {
        let r = send(
            &svc,
            get(&format!("/v1/buildings/stock-profile/{area}"), &key),
        )
        .await;
        assert_eq!(
            (r.status, r.json["credits_charged"].as_i64()),
            (404, Some(0)),
            "{area}: {}",
            r.json
        );
        assert_eq!(r.json["credits_remaining"], 3);
    }
    let r = send(&svc, get("/v1/buildings/stock-profile/district:XT1", &key)).await;
    let msg = r.json["detail"].as_str().unwrap();
    assert!(
        msg.contains("lad:") && msg.contains("lsoa:"),
        "the 404 lists the kinds answered: {msg}"
    );
    // A key is needed, free or not.
    let r = send(
        &svc,
        actix_web::test::TestRequest::get().uri("/v1/buildings/stock-profile/lad:E06000099"),
    )
    .await;
    assert_eq!(r.status, 401);
    assert_eq!(balance(app.db(), acct).await, 3);
}
