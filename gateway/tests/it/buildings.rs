//! The buildings operations of issue 40. Mixed-use buildings (`POST /v1/buildings/mixed-use`) on
//! the small world with a shop planted under the block of flats, council tax entries and a
//! rating list: each side counted with its evidence, the newest list only, the ranking and its
//! pages, other kinds of area, every validation rule and the charging; and on the fixture world,
//! against the buildings worked out from its address register file.

use crate::support::{
    TestApp, account, balance, fixtures, load_text, post_json, send, service,
    small_world_and_fixtures, world,
};
use crate::validation::check_422;
use serde_json::{Value, json};
use terrace_ingest::{Dataset, Progress};

/// Authority A (E06000099) holds the small world's Exampleton addresses, B (E06000098) Otherbury.
const LADS: &str = r#"{"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"LAD23CD":"E06000099","LAD23NM":"Exampleshire"},"geometry":{"type":"Polygon","coordinates":[[[259000,79000],[262000,79000],[262000,82000],[259000,82000],[259000,79000]]]}},
{"type":"Feature","properties":{"LAD23CD":"E06000098","LAD23NM":"Otherbury"},"geometry":{"type":"Polygon","coordinates":[[[264000,84000],[266000,84000],[266000,86000],[264000,86000],[264000,84000]]]}}
]}"#;

/// A shop under the block of flats (parent 10): that building is mixed by the register's classes.
const SHOP: &str = "UPRN,PARENT_UPRN,CLASS,SAO_START_NUMBER,SAO_START_SUFFIX,SAO_END_NUMBER,SAO_END_SUFFIX,SAO_TEXT,PAO_START_NUMBER,PAO_START_SUFFIX,PAO_END_NUMBER,PAO_END_SUFFIX,PAO_TEXT,STREET_DESCRIPTION,LOCALITY,TOWN_NAME,POSTCODE_LOCATOR,X_COORDINATE,Y_COORDINATE,LATITUDE,LONGITUDE
990000000014,990000000010,CR08,,,,,SHOP,10,,,,,HIGH STREET,,EXAMPLETON,XT1 1AB,260100,80010,,
";

/// Two of the flats, and the flat over the Fore Street shop (the shop's own UPRN: residential
/// evidence for a commercially classed address).
const COUNCIL_TAX: &str = "billing_authority,reference,address,postcode,band,uprn
E06000099,CT11,\"FLAT 1, 10 HIGH STREET, EXAMPLETON\",XT1 1AB,A,990000000011
E06000099,CT12,\"FLAT 2, 10 HIGH STREET, EXAMPLETON\",XT1 1AB,A,990000000012
E06000099,CT20,\"63-65 FORE STREET, EXAMPLETON\",XT1 2AA,C,990000000020
";

/// One list entry in the published `*`-separated layout.
fn entry(uarn: i64, desc: &str, address: &str, postcode: &str, eff: &str) -> String {
    format!(
        "1*1105*0*BA{uarn}*CS*{desc}*{uarn}*{address}*ACME LTD*1*HIGH STREET*EXAMPLETON**EXAMPLESHIRE*{postcode}*{eff}**9000**A{uarn}*{eff}*249G*****{eff}*\n"
    )
}

/// 50001 (1 High Street, a house) is on the 2017 and 2026 lists; 50002 (2 High Street) only on
/// the 2017 list, so the newest list holds no hereditament of it.
fn lists() -> String {
    let mut s = String::new();
    for eff in ["01-APR-2017", "01-APR-2026"] {
        s.push_str(&entry(
            50001,
            "SHOP AND PREMISES",
            "1, HIGH STREET, EXAMPLETON",
            "XT1 1AA",
            eff,
        ));
    }
    s.push_str(&entry(
        50002,
        "OFFICES AND PREMISES",
        "2, HIGH STREET, EXAMPLETON",
        "XT1 1AA",
        "01-APR-2017",
    ));
    s
}

async fn mixed_world() -> TestApp {
    let app = world().await;
    let db = app.db();
    load_text(db, Dataset::AddressBase, SHOP).await;
    load_text(db, Dataset::Boundaries, LADS).await;
    terrace_build::derive::derive_areas(db, &mut Progress::quiet())
        .await
        .unwrap();
    let r = load_text(db, Dataset::CouncilTax, COUNCIL_TAX).await;
    assert_eq!(
        (r.counts.loaded, r.counts.rejected),
        (3, 0),
        "{:?}",
        r.rejections
    );
    let r = load_text(db, Dataset::VoaRatingList, &lists()).await;
    assert_eq!(
        (r.counts.loaded, r.counts.rejected),
        (3, 0),
        "{:?}",
        r.rejections
    );
    let r = load_text(
        db,
        Dataset::UarnUprn,
        "uarn,uprn\n50001,990000000001\n50002,990000000002\n50003,990000000003\n",
    )
    .await;
    assert_eq!(r.counts.loaded, 3);
    app
}

const URL: &str = "/v1/buildings/mixed-use";

fn ids(r: &Value) -> Vec<i64> {
    r["buildings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["building_uprn"].as_i64().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_use_counts_each_side_with_its_evidence_pages_and_charges_six() {
    let app = mixed_world().await;
    let (acct, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    let r = send(
        &svc,
        post_json(URL, &key, &json!({"area_id": "lad:E06000099"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        (
            r.json["credits_charged"].as_i64(),
            r.json["credits_remaining"].as_i64()
        ),
        (Some(6), Some(94))
    );
    // The block (four units) first, then the house on the rating list and the shop with its
    // flat on the council tax list (one unit each), by UPRN. The house whose hereditament is on
    // the 2017 list only, and the house linked to no list entry, are not mixed.
    assert_eq!(ids(&r.json), vec![990000000010, 990000000001, 990000000020]);
    assert_eq!(
        (r.json["total"].as_i64(), r.json["count"].as_i64()),
        (Some(3), Some(3))
    );
    assert_eq!(r.json["buildings_in_area"], 8);
    assert_eq!(r.json["next_cursor"], Value::Null);
    let block = &r.json["buildings"][0];
    assert_eq!(block["parent_shell"], true);
    assert_eq!(block["address"], "10, HIGH STREET, EXAMPLETON");
    assert_eq!(block["units"], 4);
    assert_eq!(
        block["residential"],
        json!({"units": 3, "address_class": 3, "council_tax_list": 2, "rating_list": 0})
    );
    assert_eq!(
        block["commercial"],
        json!({"units": 1, "address_class": 1, "council_tax_list": 0, "rating_list": 0})
    );
    let units = block["unit_list"].as_array().unwrap();
    assert_eq!(units.len(), 4);
    assert_eq!(units[0]["uprn"], 990000000011_i64);
    assert_eq!(
        units[0]["residential_evidence"],
        json!(["address_class", "council_tax_list"])
    );
    assert_eq!(units[0]["council_tax_band"], "A");
    assert_eq!(units[3]["uprn"], 990000000014_i64);
    assert_eq!(units[3]["commercial_evidence"], json!(["address_class"]));
    assert_eq!(units[3]["residential_evidence"], json!([]));

    let house = &r.json["buildings"][1];
    assert_eq!(house["parent_shell"], false);
    assert_eq!(
        house["commercial"],
        json!({"units": 1, "address_class": 0, "council_tax_list": 0, "rating_list": 1})
    );
    let unit = &house["unit_list"][0];
    assert_eq!(unit["rating_uarn"], 50001);
    assert_eq!(unit["rating_description"], "SHOP AND PREMISES");
    assert_eq!(unit["commercial_evidence"], json!(["rating_list"]));

    let shop = &r.json["buildings"][2];
    assert_eq!(
        shop["residential"],
        json!({"units": 1, "address_class": 0, "council_tax_list": 1, "rating_list": 0})
    );
    assert_eq!(shop["unit_list"][0]["council_tax_band"], "C");

    let sources = r.json["evidence_sources"].as_array().unwrap();
    let by = |e: &str| sources.iter().find(|s| s["evidence"] == e).unwrap().clone();
    assert_eq!(by("address_class")["units"], 11);
    assert_eq!(by("council_tax_list")["units"], 3);
    assert_eq!(
        (
            by("rating_list")["units"].as_i64(),
            by("rating_list")["list_year"].as_i64()
        ),
        (Some(1), Some(2026))
    );
    for s in sources {
        assert_eq!(s["status"], "ok", "{s}");
    }

    // Thresholds: two residential units only in the block; two commercial units nowhere.
    let r = send(
        &svc,
        post_json(
            URL,
            &key,
            &json!({"area_id": "lad:E06000099", "min_residential": 2}),
        ),
    )
    .await;
    assert_eq!(ids(&r.json), vec![990000000010]);
    let r = send(
        &svc,
        post_json(
            URL,
            &key,
            &json!({"area_id": "lad:E06000099", "min_commercial": 2}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!((ids(&r.json), r.json["total"].as_i64()), (vec![], Some(0)));

    // Pages of one, each charged; the cursor is bound to its filters.
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    let mut first_cursor = None;
    for _ in 0..3 {
        let mut body = json!({"area_id": "lad:E06000099", "limit": 1});
        if !cursor.is_null() {
            body["cursor"] = cursor.clone();
        }
        let r = send(&svc, post_json(URL, &key, &body)).await;
        assert_eq!(r.status, 200, "{}", r.json);
        seen.extend(ids(&r.json));
        cursor = r.json["next_cursor"].clone();
        first_cursor.get_or_insert(cursor.clone());
    }
    assert_eq!(seen, vec![990000000010, 990000000001, 990000000020]);
    assert_eq!(cursor, Value::Null, "the last page has no cursor");
    let r = send(
        &svc,
        post_json(
            URL,
            &key,
            &json!({"area_id": "lad:E06000099", "min_residential": 2, "cursor": first_cursor.unwrap()}),
        ),
    )
    .await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (404, Some(0)),
        "{}",
        r.json
    );

    // Authority B: one house, no list holds it; nothing is mixed and the lists say so.
    let r = send(
        &svc,
        post_json(URL, &key, &json!({"area_id": "lad:E06000098"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["total"], 0);
    let sources = r.json["evidence_sources"].as_array().unwrap();
    assert_eq!(sources[1]["status"], "not_available");
    assert!(
        sources[1]["reason"]
            .as_str()
            .unwrap()
            .contains("council tax")
    );
    assert_eq!(sources[2]["status"], "not_available");
    // 1 + 2 + 3 pages + authority B = 7 calls of 6.
    assert_eq!(balance(app.db(), acct).await, 100 - 7 * 6);
    assert_eq!(
        terrace_store::accounts::ledger_sum(app.db(), acct)
            .await
            .unwrap(),
        100 - 7 * 6
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_use_refuses_each_invalid_body_without_charging() {
    let app = mixed_world().await;
    let (acct, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    for (body, loc, kind) in [
        (
            json!({"area_id": " "}),
            vec!["body", "area_id"],
            "value_error",
        ),
        (
            json!({"area_id": ""}),
            vec!["body", "area_id"],
            "string_too_short",
        ),
        (
            json!({"area_id": "lad:E06000099", "min_residential": 0}),
            vec!["body", "min_residential"],
            "greater_than_equal",
        ),
        (
            json!({"area_id": "lad:E06000099", "min_commercial": 0}),
            vec!["body", "min_commercial"],
            "greater_than_equal",
        ),
        (
            json!({"area_id": "lad:E06000099", "min_commercial": 10001}),
            vec!["body", "min_commercial"],
            "less_than_equal",
        ),
        (
            json!({"area_id": "lad:E06000099", "limit": 0}),
            vec!["body", "limit"],
            "greater_than_equal",
        ),
        (
            json!({"area_id": "lad:E06000099", "limit": 201}),
            vec!["body", "limit"],
            "less_than_equal",
        ),
        (
            json!({"area_id": "lad:E06000099", "cursor": "abc"}),
            vec!["body", "cursor"],
            "value_error",
        ),
    ] {
        let r = send(&svc, post_json(URL, &key, &body)).await;
        check_422(&r, &loc, kind);
    }
    for body in [
        json!({"area_id": "lad:E06000099", "colour": "red"}),
        json!({"area_id": "lad:E06000099", "limit": "ten"}),
        json!({}),
    ] {
        let r = send(&svc, post_json(URL, &key, &body)).await;
        assert_eq!(
            (r.status, r.json["credits_charged"].as_i64()),
            (422, Some(0)),
            "{body}: {}",
            r.json
        );
    }
    for area in ["lad:E06000097", "area:XT", "bua:E63000001", "nonsense"] {
        let r = send(&svc, post_json(URL, &key, &json!({"area_id": area}))).await;
        assert_eq!(
            (r.status, r.json["credits_charged"].as_i64()),
            (404, Some(0)),
            "{area}: {}",
            r.json
        );
    }
    // 402: an account that cannot afford the call.
    let (poor, poor_key) = account(app.db(), 5).await;
    let r = send(
        &svc,
        post_json(URL, &poor_key, &json!({"area_id": "lad:E06000099"})),
    )
    .await;
    assert_eq!(r.status, 402, "{}", r.json);
    assert_eq!(balance(app.db(), poor).await, 5);
    assert_eq!(balance(app.db(), acct).await, 100);
}

/// The fixture world, as the embedded default serves it: every building mixed by the address
/// register's classes (worked out here from its CSV) is listed, and any other listed building
/// is mixed by a list's evidence.
#[actix_web::test]
async fn the_fixture_world_lists_its_mixed_use_buildings() {
    let app = small_world_and_fixtures().await;
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("manifest.json")).unwrap())
            .unwrap();
    let lads: Vec<String> = m["world"]["local_authorities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["code"].as_str().unwrap().to_string())
        .collect();
    let csv = std::fs::read_to_string(fixtures().join("addressbase/addressbase_plus_fixture.csv"))
        .unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let (uprn_at, parent_at, class_at) = (col("UPRN"), col("PARENT_UPRN"), col("CLASS"));
    let mut buildings = std::collections::BTreeMap::<i64, std::collections::BTreeSet<char>>::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let class = f[class_at].chars().next().unwrap();
        if class != 'P' {
            let key = if f[parent_at].is_empty() {
                f[uprn_at]
            } else {
                f[parent_at]
            };
            buildings
                .entry(key.parse().unwrap())
                .or_default()
                .insert(class);
        }
    }
    let by_class: std::collections::BTreeSet<i64> = buildings
        .iter()
        .filter(|(_, s)| (s.contains(&'R') && s.contains(&'C')) || s.contains(&'X'))
        .map(|(b, _)| *b)
        .collect();
    assert_eq!(
        by_class.len(),
        10,
        "the fixture world's mixed buildings by class"
    );

    let (_, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    let mut listed = std::collections::BTreeSet::new();
    let mut all = Vec::new();
    for lad in &lads {
        let r = send(
            &svc,
            post_json(
                URL,
                &key,
                &json!({"area_id": format!("lad:{lad}"), "limit": 200}),
            ),
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.json);
        assert_eq!(r.json["total"].as_i64(), Some(ids(&r.json).len() as i64));
        listed.extend(ids(&r.json));
        all.extend(r.json["buildings"].as_array().unwrap().iter().cloned());
    }
    assert!(listed.is_superset(&by_class), "{listed:?} ⊇ {by_class:?}");
    // A postcode district answers the buildings of its addresses, a subset of the authorities'.
    let r = send(
        &svc,
        post_json(URL, &key, &json!({"area_id": "district:XT1"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(
        ids(&r.json).iter().all(|b| listed.contains(b)),
        "{}",
        r.json
    );
    for b in &all {
        let id = b["building_uprn"].as_i64().unwrap();
        assert!(b["residential"]["units"].as_i64().unwrap() >= 1);
        assert!(b["commercial"]["units"].as_i64().unwrap() >= 1);
        if !by_class.contains(&id) {
            let listed_evidence = b["unit_list"]
                .as_array()
                .unwrap()
                .iter()
                .any(|u| u["council_tax_band"].is_string() || u["rating_uarn"].is_i64());
            assert!(listed_evidence, "{b}");
        }
    }
    let sources = r.json["evidence_sources"].as_array().unwrap();
    for s in sources {
        assert_eq!(s["status"], "ok", "the fixture world loads every list: {s}");
    }

    // Physical facts of the sample plot's address: its 8 m square footprint, linked by the
    // derive step the manifest loader runs.
    let sample = m["land_cases"]["sample_uprn"].as_i64().unwrap();
    let r = send(&svc, post_json(PHYSICAL, &key, &json!({"uprns": [sample]}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 3);
    let f = &r.json["items"][0]["result"];
    assert_eq!(f["footprint_area_m2"]["value"], 64.0, "{f}");
    assert_eq!(f["footprint_geojson"]["status"], "ok");
    assert!(f["unit_mix"]["units"].as_i64().unwrap() >= 1);
    // The fixture's building-attributes feed holds the sample house.
    assert_eq!(
        f["floors"]["value"], m["land_cases"]["sample_floors"],
        "{f}"
    );
    assert_eq!(
        f["roof_shape"]["value"],
        m["land_cases"]["sample_roof_shape"]
    );
    assert!(
        terrace_store::buildings::address_footprint_count(app.db())
            .await
            .unwrap()
            >= m["land_cases"]["parcels_with_building"].as_i64().unwrap()
    );
}

/// Footprints over the small world: B1 (40 x 20 m, 9.5 m high) holds houses 1-3; B10 (10 x 10 m)
/// the block of flats and its shop; B10S, a 4 x 4 m annexe inside B10, overlaps the block's
/// point (the smaller one wins); B99 stands empty. Otherbury has none.
const FOOTPRINTS: &str = r#"{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::27700"}},"features":[
{"type":"Feature","properties":{"id":"B1","feature_code":15014,"height":9.5},"geometry":{"type":"Polygon","coordinates":[[[260000,80000],[260040,80000],[260040,80020],[260000,80020],[260000,80000]]]}},
{"type":"Feature","properties":{"id":"B10","feature_code":15014},"geometry":{"type":"Polygon","coordinates":[[[260095,80005],[260105,80005],[260105,80015],[260095,80015],[260095,80005]]]}},
{"type":"Feature","properties":{"id":"B10S","feature_code":15014},"geometry":{"type":"Polygon","coordinates":[[[260098,80008],[260102,80008],[260102,80012],[260098,80012],[260098,80008]]]}},
{"type":"Feature","properties":{"id":"B99","feature_code":15014},"geometry":{"type":"Polygon","coordinates":[[[260500,80500],[260510,80500],[260510,80510],[260500,80510],[260500,80500]]]}}
]}"#;

async fn physical_world() -> TestApp {
    let app = mixed_world().await;
    let r = load_text(app.db(), Dataset::OsBuildings, FOOTPRINTS).await;
    assert_eq!(
        (r.counts.loaded, r.counts.rejected),
        (4, 0),
        "{:?}",
        r.rejections
    );
    let now = chrono::NaiveDate::from_ymd_opt(2026, 11, 28)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap();
    let report = terrace_land::footprints::link_addresses(app.db(), now, &mut |_| {})
        .await
        .unwrap();
    // Exampleton's 12 addresses with a position (the shell and the shop included): houses 1-3
    // in B1, the shell, flats and shop (one point) in B10S.
    assert_eq!((report.addresses, report.linked), (12, 8), "{report:?}");
    app
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_address_point_is_linked_to_the_smallest_footprint_holding_it_and_relinking_changes_nothing()
 {
    let app = physical_world().await;
    let db = app.db();
    let uprns: Vec<i64> = vec![
        990000000001,
        990000000003,
        990000000011,
        990000000020,
        990000000024,
    ];
    let links = terrace_store::buildings::address_footprints_of(db, &uprns)
        .await
        .unwrap();
    let got: Vec<(i64, &str, f64)> = links
        .iter()
        .map(|l| (l.uprn, l.building_id.as_str(), l.score))
        .collect();
    assert_eq!(
        got,
        vec![
            (990000000001, "B1", 1.0),
            (990000000003, "B1", 1.0),
            (990000000011, "B10S", 0.5),
        ]
    );
    assert_eq!(links[0].method, "point_in_footprint");
    let before = terrace_store::buildings::address_footprint_count(db)
        .await
        .unwrap();
    let now = chrono::NaiveDate::from_ymd_opt(2026, 11, 29)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap();
    let again = terrace_land::footprints::link_addresses(db, now, &mut |_| {})
        .await
        .unwrap();
    assert_eq!((again.linked, again.pruned), (8, 0));
    assert_eq!(
        terrace_store::buildings::address_footprint_count(db)
            .await
            .unwrap(),
        before
    );
    // The same step runs in the derive orchestration.
    let (_, step) = terrace_build::derive::FAMILY_STEPS
        .iter()
        .find(|(name, _)| *name == "address footprints")
        .unwrap();
    step(db, &mut Progress::quiet()).await.unwrap();
    assert_eq!(
        terrace_store::buildings::address_footprint_count(db)
            .await
            .unwrap(),
        before
    );
}

const PHYSICAL: &str = "/v1/buildings/physical";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn physical_answers_each_fact_with_its_source_or_the_reason_and_charges_per_answered_item() {
    let app = physical_world().await;
    let (acct, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    let body = json!({"uprns": [990000000001_i64, "990000000011", 990000000024_i64, 999999999999_i64, "abc"]});
    let r = send(&svc, post_json(PHYSICAL, &key, &body)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let items = r.json["items"].as_array().unwrap();
    let outcomes: Vec<&str> = items
        .iter()
        .map(|i| i["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, vec!["ok", "ok", "ok", "not_found", "error"]);
    assert_eq!(r.json["answered"], 3);
    assert_eq!(
        (
            r.json["credits_charged"].as_i64(),
            r.json["credits_remaining"].as_i64()
        ),
        (Some(9), Some(91))
    );

    let house = &items[0]["result"];
    assert_eq!(house["building_id"], "B1");
    assert_eq!(house["footprint_area_m2"]["status"], "ok");
    assert_eq!(house["footprint_area_m2"]["value"], 800.0);
    assert!(house["footprint_area_m2"]["source"].is_string());
    assert!(house["footprint_area_m2"]["confidence"].is_number());
    assert_eq!(house["height_m"]["value"], 9.5);
    assert_eq!(house["height_survey_year"]["status"], "not_available");
    let g = &house["footprint_geojson"]["value"];
    assert_eq!(g["type"], "MultiPolygon");
    let ring = g["coordinates"][0][0].as_array().unwrap();
    assert_eq!(ring.len(), 5, "a rectangle stays four corners closed: {g}");
    let (lon, lat) = terrace_geo::wgs84_from_bng(260000.0, 80000.0).unwrap();
    let near = |c: &Value| {
        (c[0].as_f64().unwrap() - lon).abs() < 1e-6 && (c[1].as_f64().unwrap() - lat).abs() < 1e-6
    };
    assert!(ring.iter().any(near), "{g}");
    for k in [
        "volume_m3",
        "floors",
        "roof_shape",
        "roof_material",
        "solar_panels_present",
        "basement",
        "green_roof",
        "construction_material",
    ] {
        let f = &house[k];
        assert_eq!(f["status"], "not_available", "{k}: {f}");
        assert_eq!(f["value"], Value::Null, "{k}");
        assert!(!f["note"].as_str().unwrap().is_empty(), "{k}");
    }
    assert!(
        house["floors"]["note"]
            .as_str()
            .unwrap()
            .contains("never estimated from height"),
        "{}",
        house["floors"]
    );
    assert_eq!(
        house["unit_mix"]["residential"]["units"], 1,
        "{}",
        house["unit_mix"]
    );
    assert_eq!(house["unit_mix"]["commercial"]["rating_list"], 1);

    let flat = &items[1]["result"];
    assert_eq!(items[1]["uprn"], "990000000011");
    assert_eq!(flat["building_id"], "B10S");
    assert_eq!(flat["height_m"]["status"], "not_available");
    let mix = &flat["unit_mix"];
    assert_eq!(mix["building_uprn"], 990000000010_i64);
    assert_eq!(
        (
            mix["units"].as_i64(),
            mix["residential"]["units"].as_i64(),
            mix["commercial"]["units"].as_i64(),
            mix["other"].as_i64()
        ),
        (Some(4), Some(3), Some(1), Some(0))
    );

    let far = &items[2]["result"];
    assert_eq!(far["building_id"], Value::Null);
    assert_eq!(far["footprint_area_m2"]["status"], "not_available");
    assert!(
        far["footprint_area_m2"]["note"]
            .as_str()
            .unwrap()
            .contains("no building footprint is loaded"),
        "{}",
        far["footprint_area_m2"]
    );
    assert!(items[4]["error"].is_string());

    // Nothing answered: nothing charged.
    let r = send(
        &svc,
        post_json(PHYSICAL, &key, &json!({"uprns": [999999999999_i64]})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 0);

    // Every validation rule: 422, nothing charged.
    let hundred_and_one: Vec<i64> = (1..=101).collect();
    for (body, loc, kind) in [
        (json!({"uprns": []}), vec!["body", "uprns"], "too_short"),
        (
            json!({"uprns": hundred_and_one}),
            vec!["body", "uprns"],
            "too_long",
        ),
    ] {
        let r = send(&svc, post_json(PHYSICAL, &key, &body)).await;
        check_422(&r, &loc, kind);
    }
    for body in [
        json!({}),
        json!({"uprns": 1}),
        json!({"uprns": [1], "x": 1}),
    ] {
        let r = send(&svc, post_json(PHYSICAL, &key, &body)).await;
        assert_eq!(
            (r.status, r.json["credits_charged"].as_i64()),
            (422, Some(0)),
            "{body}: {}",
            r.json
        );
    }
    // 402: a balance below one item's price.
    let (poor, poor_key) = account(app.db(), 2).await;
    let r = send(
        &svc,
        post_json(PHYSICAL, &poor_key, &json!({"uprns": [990000000001_i64]})),
    )
    .await;
    assert_eq!(r.status, 402, "{}", r.json);
    assert_eq!(balance(app.db(), poor).await, 2);
    assert_eq!(balance(app.db(), acct).await, 91);
    assert_eq!(
        terrace_store::accounts::ledger_sum(app.db(), acct)
            .await
            .unwrap(),
        91
    );
}

/// The building-attributes feed: house 1's own row, the block's row (read by its flats), and
/// four malformed rows.
const ATTRIBUTES: &str =
    "uprn,floors,basement,green_roof,construction_material,roof_shape,roof_material,solar_panels
990000000001,2,Y,N,Brick,gabled,slate,Y
990000000010,5,,Y,Concrete,flat,,
990000000002,two,,,,,,
990000000003,,perhaps,,,,,
abc,1,,,,,,
990000000013,,,,,,,
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_building_attributes_feed_loads_rejects_each_malformed_row_and_answers_the_facts() {
    let app = physical_world().await;
    let first = load_text(app.db(), Dataset::BuildingAttributes, ATTRIBUTES).await;
    let c = &first.counts;
    assert_eq!(
        (c.read, c.loaded, c.rejected),
        (6, 2, 4),
        "{:?}",
        first.rejections
    );
    assert_eq!(
        c.read,
        c.loaded + c.updated + c.unchanged + c.deleted + c.rejected
    );
    let lines: Vec<u64> = first.rejections.iter().map(|r| r.line).collect();
    assert_eq!(lines, vec![4, 5, 6, 7]);
    for (r, word) in first
        .rejections
        .iter()
        .zip(["floors", "basement", "UPRN", "no attribute"])
    {
        assert!(r.reason.contains(word), "{r}");
        assert!(r.file.ends_with("data.csv"), "{r}");
    }
    let again = load_text(app.db(), Dataset::BuildingAttributes, ATTRIBUTES).await;
    assert_eq!(
        (
            again.counts.loaded,
            again.counts.updated,
            again.counts.unchanged
        ),
        (0, 0, 2)
    );

    let (_, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    let body = json!({"uprns": [990000000001_i64, 990000000012_i64, 990000000002_i64]});
    let r = send(&svc, post_json(PHYSICAL, &key, &body)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let house = &r.json["items"][0]["result"];
    assert_eq!(house["floors"]["value"], 2);
    assert_eq!(house["floors"]["source"], "operator_building_attributes");
    assert_eq!(house["floors"]["confidence"], 0.8);
    assert_eq!(house["basement"]["value"], true);
    assert_eq!(house["green_roof"]["value"], false);
    assert_eq!(house["construction_material"]["value"], "Brick");
    assert_eq!(house["roof_shape"]["value"], "gabled");
    assert_eq!(house["roof_material"]["value"], "slate");
    assert_eq!(house["solar_panels_present"]["value"], true);
    // A flat reads its building's row; what the row leaves blank is not recorded.
    let flat = &r.json["items"][1]["result"];
    assert_eq!(flat["floors"]["value"], 5);
    assert_eq!(flat["green_roof"]["value"], true);
    assert_eq!(flat["basement"]["status"], "not_available");
    assert!(
        flat["basement"]["note"]
            .as_str()
            .unwrap()
            .contains("does not record it"),
        "{}",
        flat["basement"]
    );
    // A house the feed holds no row for.
    let other = &r.json["items"][2]["result"];
    assert_eq!(other["floors"]["status"], "not_available");
    assert!(
        other["floors"]["note"]
            .as_str()
            .unwrap()
            .contains("holds no row"),
        "{}",
        other["floors"]
    );
}

/// The fixture world's LIDAR tiles (loaded by the first start like any dataset): the sample
/// house's building, across the two tiles' common edge with two nodata roof cells, answers its
/// planted height (to the centimetre), volume and survey year with the composite as source; a
/// house whose building no tile covers answers `not_available` saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn physical_answers_the_planted_lidar_height_across_a_tile_edge_on_the_fixture_world() {
    let t = crate::support::fixture_db().await;
    let state = crate::support::state_for(&t.db, Default::default()).await;
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("manifest.json")).unwrap())
            .unwrap();
    let lidar = &m["land_cases"]["lidar"];
    let (_, key) = account(&t.db, 100).await;
    let svc = service(state).await;
    let body = json!({"uprns": [lidar["boundary_uprn"], lidar["uncovered_uprn"]]});
    let r = send(&svc, post_json(PHYSICAL, &key, &body)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let house = &r.json["items"][0]["result"];
    assert_eq!(house["building_id"], lidar["boundary_building"]);
    let h = &house["height_m"];
    assert_eq!(h["status"], "ok", "{h}");
    let planted = lidar["boundary_height_m"].as_f64().unwrap();
    assert!(
        (h["value"].as_f64().unwrap() - planted).abs() <= 0.01,
        "{h}"
    );
    assert_eq!(h["source"], "fixture:ea_lidar_composite_2022");
    assert!(h["confidence"].as_f64().unwrap() > 0.5);
    assert!(
        h["note"].as_str().unwrap().contains("2 of"),
        "nodata skipped: {h}"
    );
    let year = &house["height_survey_year"];
    assert_eq!(
        (year["status"].as_str(), year["value"].as_i64()),
        (Some("ok"), Some(2022))
    );
    assert_eq!(year["source"], "fixture:ea_lidar_composite_2022");
    let v = &house["volume_m3"];
    assert_eq!(v["status"], "ok", "{v}");
    let cells: f64 = h["note"]
        .as_str()
        .unwrap()
        .split("over the ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(
        cells >= 50.0,
        "an 8 x 8 m footprint less its nodata cells: {cells}"
    );
    assert!(
        (v["value"].as_f64().unwrap() - planted * cells).abs() <= 0.5,
        "{v}"
    );

    let far = &r.json["items"][1]["result"];
    assert_eq!(far["building_id"], lidar["uncovered_building"]);
    // No LIDAR tile covers it; the fixture's OpenStreetMap extract maps a height on it, which
    // is answered with its source (and no survey year, no volume: those are LIDAR's).
    let h = &far["height_m"];
    assert_eq!(h["status"], "ok", "{h}");
    assert!(h["source"].as_str().unwrap().ends_with("osm"), "{h}");
    assert!(h["note"].as_str().unwrap().contains("OpenStreetMap"), "{h}");
    for k in ["volume_m3", "height_survey_year"] {
        assert_eq!(far[k]["status"], "not_available", "{k}: {}", far[k]);
        assert!(
            far[k]["note"]
                .as_str()
                .unwrap()
                .contains("no loaded LIDAR tile covers the footprint"),
            "{k}: {}",
            far[k]
        );
    }
}

/// Square ring nodes (ids from `first`) between two BNG corners.
fn osm_ring(
    first: i64,
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
) -> Vec<terrace_fixturegen::osm_pbf::Node> {
    [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
        .iter()
        .enumerate()
        .map(|(i, (x, y))| {
            let (lon, lat) = terrace_geo::wgs84_from_bng(*x, *y).unwrap();
            terrace_fixturegen::osm_pbf::Node {
                id: first + i as i64,
                lon,
                lat,
                tags: Vec::new(),
            }
        })
        .collect()
}

/// An extract over the physical world: way/1 inside B1 (levels, roof, a height) with a rooftop
/// PV node; way/2 over the block B10 (its centroid in B10S, the smaller) with a height only.
fn physical_extract() -> Vec<u8> {
    use terrace_fixturegen::osm_pbf::{Node, Way, encode, tags};
    let a = osm_ring(10, 260000.5, 80000.5, 260039.5, 80019.5);
    let b = osm_ring(20, 260095.5, 80005.5, 260104.5, 80014.5);
    let (lon, lat) = terrace_geo::wgs84_from_bng(260030.0, 80015.0).unwrap();
    let mut nodes = vec![Node {
        id: 900,
        lon,
        lat,
        tags: tags(&[("generator:source", "solar"), ("location", "roof")]),
    }];
    nodes.extend(a.iter().cloned());
    nodes.extend(b.iter().cloned());
    let refs = |r: &[Node]| {
        let mut v: Vec<i64> = r.iter().map(|n| n.id).collect();
        v.push(v[0]);
        v
    };
    let ways = vec![
        Way {
            id: 1,
            refs: refs(&a),
            tags: tags(&[
                ("building", "terrace"),
                ("building:levels", "3"),
                ("roof:shape", "hipped"),
                ("roof:material", "slate"),
                ("height", "11 m"),
            ]),
        },
        Way {
            id: 2,
            refs: refs(&b),
            tags: tags(&[("building", "apartments"), ("height", "14.5")]),
        },
    ];
    encode(&nodes, &ways, &[]).unwrap()
}

const HMO: &str = "licence_number,authority,address,postcode,uprn,storeys,max_occupants,households,licence_start,licence_end
HMO/1,E06000099,\"1 High Street, Exampleton\",XT1 1AA,990000000001,3,6,5,2024-01-01,2029-01-01
HMO/3,E06000099,\"3 High Street, Exampleton\",XT1 1AA,,2,4,,2023-01-01,2028-01-01
HMO/9,E06000099,\"9 High Street, Exampleton\",XT1 1AA,,2,3,4,,
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn osm_buildings_link_to_footprints_and_physical_answers_osm_levels_roof_solar_and_the_hmo_register()
 {
    let app = physical_world().await;
    let db = app.db();
    let (_, key) = account(db, 100).await;
    let svc = service(app.state.clone()).await;
    let body = json!({"uprns": [990000000001_i64, 990000000011_i64, 990000000002_i64]});
    // Before any extract or register: not available, saying so.
    let r = send(&svc, post_json(PHYSICAL, &key, &body)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let house = &r.json["items"][0]["result"];
    assert_eq!(house["unit_mix"]["hmo_licensed"]["status"], "not_available");
    assert!(
        house["unit_mix"]["hmo_licensed"]["note"]
            .as_str()
            .unwrap()
            .contains("no HMO licence register is loaded")
    );
    assert!(
        house["roof_shape"]["note"]
            .as_str()
            .unwrap()
            .contains("OpenStreetMap"),
        "{}",
        house["roof_shape"]
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("extract.osm.pbf");
    std::fs::write(&path, physical_extract()).unwrap();
    let load = terrace_ingest::load_file(
        db,
        Dataset::OsmBuildings,
        &path,
        Default::default(),
        &mut Progress::quiet(),
    )
    .await
    .unwrap();
    assert_eq!(
        (load.counts.read, load.counts.loaded, load.counts.rejected),
        (3, 3, 0),
        "{:?}",
        load.rejections
    );
    let (_, step) = terrace_build::derive::FAMILY_STEPS
        .iter()
        .find(|(name, _)| *name == "OSM building links")
        .unwrap();
    step(db, &mut Progress::quiet()).await.unwrap();
    let links = terrace_store::osm::all_osm_links(db).await.unwrap();
    let got: Vec<(&str, &str, &str)> = links
        .iter()
        .map(|l| {
            (
                l.osm_key.as_str(),
                l.building_id.as_str(),
                l.method.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("way/1", "B1", "centroid_in_footprint"),
            ("way/2", "B10S", "centroid_in_footprint"),
        ]
    );
    // A second build changes nothing.
    let now = chrono::NaiveDate::from_ymd_opt(2026, 12, 1)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap();
    let again = terrace_land::osm::link(db, now, &mut |_| {}).await.unwrap();
    assert_eq!((again.linked, again.changed), (2, false));

    let r = load_text(db, Dataset::HmoLicences, HMO).await;
    assert_eq!(
        (r.counts.loaded, r.counts.rejected),
        (2, 1),
        "{:?}",
        r.rejections
    );
    terrace_build::derive::link_to_uprns(db, &mut Progress::quiet())
        .await
        .unwrap();
    let hmo3 = terrace_store::osm::hmo_by_key(db, &["E06000099|HMO/3".to_string()])
        .await
        .unwrap();
    assert_eq!(hmo3[0].uprn, Some(990000000003), "{hmo3:?}");
    assert_eq!(hmo3[0].match_method.as_deref(), Some("address_matcher"));

    let r = send(&svc, post_json(PHYSICAL, &key, &body)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let house = &r.json["items"][0]["result"];
    for (k, v) in [
        ("floors", json!(3)),
        ("roof_shape", json!("hipped")),
        ("roof_material", json!("slate")),
        ("solar_panels_present", json!(true)),
    ] {
        let f = &house[k];
        assert_eq!((&f["status"], &f["value"]), (&json!("ok"), &v), "{k}: {f}");
        assert_eq!(f["source"], "osm", "{k}");
        assert_eq!(f["confidence"], 0.6, "{k}");
        assert!(
            f["note"]
                .as_str()
                .unwrap()
                .contains("© OpenStreetMap contributors"),
            "{k}: {f}"
        );
    }
    assert!(
        house["solar_panels_present"]["note"]
            .as_str()
            .unwrap()
            .contains("node/900")
    );
    // The footprint file's height stays ahead of OSM's.
    assert_eq!(house["height_m"]["value"], 9.5);
    let mix = &house["unit_mix"];
    assert_eq!(
        (
            &mix["hmo_licensed"]["value"],
            &mix["hmo_licensed"]["source"]
        ),
        (&json!(true), &json!("operator_hmo_licences"))
    );
    assert_eq!(mix["hmo_max_occupants"]["value"], 6);
    assert_eq!(mix["hmo_households"]["value"], 5);
    assert_eq!(mix["hmo_storeys"]["value"], 3);
    assert!(
        mix["hmo_licensed"]["note"]
            .as_str()
            .unwrap()
            .contains("HMO/1")
    );
    // The flat's building (B10S) has OSM's height, with no survey year; no levels are tagged.
    let flat = &r.json["items"][1]["result"];
    assert_eq!(flat["height_m"]["value"], 14.5, "{}", flat["height_m"]);
    assert_eq!(flat["height_m"]["source"], "osm");
    assert_eq!(flat["height_survey_year"]["status"], "not_available");
    assert!(
        flat["height_survey_year"]["note"]
            .as_str()
            .unwrap()
            .contains("no survey year")
    );
    assert_eq!(flat["floors"]["status"], "not_available");
    assert!(
        flat["floors"]["note"]
            .as_str()
            .unwrap()
            .contains("no building:levels tag"),
        "{}",
        flat["floors"]
    );
    // House 2 in the register's authority holds no licence: false, with the register as source.
    let other = &r.json["items"][2]["result"]["unit_mix"];
    assert_eq!(
        (
            &other["hmo_licensed"]["status"],
            &other["hmo_licensed"]["value"]
        ),
        (&json!("ok"), &json!(false))
    );
    assert_eq!(other["hmo_max_occupants"]["status"], "not_available");

    // Solar potential reads the same OSM buildings.
    let r = send(
        &svc,
        post_json(
            "/v1/energy/solar-potential",
            &key,
            &json!({"uprns": [990000000001_i64]}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let s = &r.json["items"][0]["result"];
    assert_eq!(s["roof_shape"]["value"], "hipped", "{s}");
    assert_eq!(s["roof_material"]["source"], "osm");
    assert_eq!(s["panels_present"]["value"], true);
    assert_eq!(s["panels_present"]["source"], "osm");
}
