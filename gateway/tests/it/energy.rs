//! The energy family (issue 40) on the small world with planted certificates (keyed by the newer
//! register's `CERTIFICATE_NUMBER`), recommendations, a non-domestic certificate and a
//! footprint: every certificate newest first with its recommendations joined, `not_available`
//! (nothing loaded for the authority) against `not_found` (loaded, none lodged), the profile's
//! figures worked out by hand, the retrofit ranking and its pages, every validation rule, and
//! the charging of each operation (the solar batch per answered item). And the fixture world's
//! energy registers answered through the same operations.

use crate::support::{
    TestApp, account, balance, fixtures, get, load_text, post_json, send, service,
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

/// Domestic certificates in the newer register's layout. Headroom (potential - current):
/// 012 F 35->77 (42), 001 F 30->72 (42, an older E certificate too), 003 G 10->52 (42),
/// 002 E 45->70 (25), 011 D (not in the default bands), 013 E with no potential (never ranked).
const CERTS: &str = "\
CERTIFICATE_NUMBER,ADDRESS1,POSTCODE,CURRENT_ENERGY_RATING,POTENTIAL_ENERGY_RATING,CURRENT_ENERGY_EFFICIENCY,POTENTIAL_ENERGY_EFFICIENCY,LODGEMENT_DATE,MAIN_FUEL,TENURE,MAINHEAT_DESCRIPTION,WALLS_DESCRIPTION,ROOF_DESCRIPTION,PHOTO_SUPPLY,SOLAR_WATER_HEATING_FLAG,UPRN,UPRN_SOURCE,LOCAL_AUTHORITY
C-001-OLD,1 High Street,XT1 1AA,E,C,50,75,2012-05-01,mains gas (not community),Owner-occupied,\"Boiler and radiators, mains gas\",Cavity wall,\"Pitched, 200 mm loft insulation\",0,N,990000000001,Address Matched,E06000099
C-001,1 High Street,XT1 1AA,F,C,30,72,2024-03-09,mains gas (not community),Rented (private),\"Boiler and radiators, mains gas\",\"Solid brick, as built, no insulation (assumed)\",\"Pitched, 100 mm loft insulation\",25,N,990000000001,Energy Assessor,E06000099
C-002,2 High Street,XT1 1AA,E,C,45,70,2023-01-01,electricity (not community),Owner-occupied,\"Air source heat pump, radiators, electric\",Cavity wall,\"Pitched, 270 mm loft insulation\",0,Y,990000000002,Energy Assessor,E06000099
C-003,3 High Street,XT1 1AA,G,E,10,52,2022-01-01,mains gas (not community),Rented (social),\"Boiler and radiators, mains gas\",Solid brick,\"Pitched, no insulation\",,,990000000003,Energy Assessor,E06000099
C-011,Flat 1,XT1 1AB,D,C,60,80,2021-01-01,mains gas (not community),Owner-occupied,\"Boiler and radiators, mains gas\",Cavity wall,(another dwelling above),0,N,990000000011,Energy Assessor,E06000099
C-012,Flat 2,XT1 1AB,F,C,35,77,2020-01-01,electricity (not community),Rented (private),Electric storage heaters,Cavity wall,(another dwelling above),0,N,990000000012,Energy Assessor,E06000099
C-013,Flat 3,XT1 1AB,E,,48,,2020-01-01,electricity (not community),,Electric storage heaters,,,,,990000000013,Address Matched,E06000099
";

const RECS: &str = "\
CERTIFICATE_NUMBER,IMPROVEMENT_ITEM,IMPROVEMENT_SUMMARY_TEXT,IMPROVEMENT_DESCR_TEXT,IMPROVEMENT_ID,IMPROVEMENT_ID_TEXT,INDICATIVE_COST
C-001,2,Internal or external wall insulation,Solid wall insulation,7,,\"£4,000 - £14,000\"
C-001,1,Increase loft insulation to 270 mm,,5,,£100 - £350
C-003,1,Floor insulation,,W1,,\"£800 - £1,200\"
";

const NON_DOMESTIC: &str = "\
LMK_KEY,ADDRESS1,POSTCODE,ASSET_RATING,ASSET_RATING_BAND,PROPERTY_TYPE,LODGEMENT_DATE,MAIN_HEATING_FUEL,RENEWABLE_SOURCES,FLOOR_AREA,UPRN,UPRN_SOURCE,LOCAL_AUTHORITY
ND-020,63-65 Fore Street,XT1 2AA,128,F,A1/A2 Retail and Financial/Professional services,2020-03-04,Natural Gas,Photovoltaic panels,350,990000000020,Address Matched,E06000099
";

const FOOTPRINT: &str = r#"{"type":"FeatureCollection","name":"building","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::27700"}},"features":[
{"type":"Feature","properties":{"id":"osgb9000000000000001","feature_code":15014},"geometry":{"type":"Polygon","coordinates":[[[260005,80005],[260015,80005],[260015,80015],[260005,80015],[260005,80005]]]}}
]}"#;

async fn energy_world() -> TestApp {
    let app = world().await;
    load_text(app.db(), Dataset::Boundaries, LADS).await;
    terrace_build::derive::derive_areas(app.db(), &mut Progress::quiet())
        .await
        .unwrap();
    app
}

async fn plant(app: &TestApp) {
    let r = load_text(app.db(), Dataset::Epc, CERTS).await;
    assert_eq!(
        (r.counts.loaded, r.counts.rejected),
        (7, 0),
        "{:?}",
        r.rejections
    );
    let r = load_text(app.db(), Dataset::EpcRecommendations, RECS).await;
    assert_eq!(r.counts.loaded, 3);
    let r = load_text(app.db(), Dataset::EpcNonDomestic, NON_DOMESTIC).await;
    assert_eq!(r.counts.loaded, 1);
}

#[actix_web::test]
async fn epc_not_available_not_found_and_recommendations_joined() {
    let app = energy_world().await;
    let (acct, key) = account(app.db(), 10).await;
    let svc = service(app.state.clone()).await;
    // Nothing loaded for the authority: not_available, free.
    let r = send(&svc, get("/v1/energy/epc/990000000021", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["status"], "not_available");
    assert_eq!(r.json["local_authority"], "E06000099");
    assert_eq!(r.json["certificates"], json!([]));
    assert_eq!(r.json["credits_charged"], 0);
    // A UPRN nobody knows is a 404.
    let r = send(&svc, get("/v1/energy/epc/990000000999", &key)).await;
    assert_eq!(r.status, 404, "{}", r.json);

    plant(&app).await;
    let svc = service(app.state.clone()).await;
    // Loaded for the authority, none lodged for it: not_found.
    let r = send(&svc, get("/v1/energy/epc/990000000021", &key)).await;
    assert_eq!(
        (r.status, r.json["status"].as_str()),
        (200, Some("not_found")),
        "{}",
        r.json
    );
    // Otherbury has none: not_available still.
    let r = send(&svc, get("/v1/energy/epc/990000000024", &key)).await;
    assert_eq!(r.json["status"], "not_available", "{}", r.json);

    let r = send(&svc, get("/v1/energy/epc/990000000001", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["status"], "ok");
    assert_eq!(r.json["count"], 2);
    let certs = r.json["certificates"].as_array().unwrap();
    // newest first, the register's own keys
    assert_eq!(
        certs
            .iter()
            .map(|c| c["certificate_key"].as_str().unwrap())
            .collect::<Vec<_>>(),
        vec!["C-001", "C-001-OLD"]
    );
    let c = &certs[0];
    assert_eq!(c["kind"], "domestic");
    assert_eq!(c["uprn_source"], "Energy Assessor");
    assert_eq!(certs[1]["uprn_source"], "Address Matched");
    assert_eq!(c["photo_supply_pct"], 25.0);
    assert_eq!(
        c["elements"]["walls"]["description"],
        "Solid brick, as built, no insulation (assumed)"
    );
    assert_eq!(c["recommendations_status"], "ok");
    let recs: Vec<(i64, &str, &str)> = c["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["item"].as_i64().unwrap(),
                r["summary"].as_str().unwrap(),
                r["indicative_cost"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        recs,
        vec![
            (1, "Increase loft insulation to 270 mm", "£100 - £350"),
            (
                2,
                "Internal or external wall insulation",
                "£4,000 - £14,000"
            ),
        ]
    );
    // The older certificate has none lodged (recommendations are loaded).
    assert_eq!(certs[1]["recommendations_status"], "none_lodged");
    assert_eq!(certs[1]["recommendations"], json!([]));
    assert_eq!(r.json["credits_charged"], 0);

    // A non-domestic certificate, with its own rating.
    let r = send(&svc, get("/v1/energy/epc/990000000020", &key)).await;
    let c = &r.json["certificates"][0];
    assert_eq!(
        (
            c["kind"].as_str(),
            c["current_band"].as_str(),
            c["asset_rating"].as_i64()
        ),
        (Some("non_domestic"), Some("F"), Some(128)),
        "{}",
        r.json
    );
    assert_eq!(c["elements"], Value::Null);
    assert_eq!(balance(app.db(), acct).await, 10);
}

#[actix_web::test]
async fn the_profile_counts_what_the_certificates_state() {
    let app = energy_world().await;
    plant(&app).await;
    let (_, key) = account(app.db(), 10).await;
    let svc = service(app.state.clone()).await;
    let r = send(&svc, get("/v1/energy/profile/lad:E06000099", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    // Eleven Exampleton addresses; six hold a domestic certificate (the newest of each read).
    assert_eq!(r.json["addresses"], 11);
    assert_eq!(r.json["with_certificate"], 6);
    assert_eq!(r.json["coverage_pct"], 55);
    let bands: Vec<(String, i64)> = r.json["band_mix"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["value"].as_str().unwrap().to_string(),
                e["count"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        bands,
        vec![
            ("D".into(), 1),
            ("E".into(), 2),
            ("F".into(), 2),
            ("G".into(), 1)
        ]
    );
    assert_eq!(r.json["fuel_mix"]["entries"][0]["value"], "electricity");
    assert_eq!(r.json["fuel_mix"]["entries"][0]["count"], 3);
    assert_eq!(r.json["fuel_mix"]["n"], 6);
    // one heat pump of six heating descriptions
    assert_eq!(
        (
            r.json["heat_pump"]["count"].as_i64(),
            r.json["heat_pump"]["n"].as_i64(),
            r.json["heat_pump"]["pct"].as_i64()
        ),
        (Some(1), Some(6), Some(17))
    );
    // PHOTO_SUPPLY stated on four newest certificates, above 0 on one (C-001)
    assert_eq!(
        (
            r.json["solar_pv"]["count"].as_i64(),
            r.json["solar_pv"]["n"].as_i64(),
            r.json["solar_pv"]["coverage_pct"].as_i64()
        ),
        (Some(1), Some(4), Some(36))
    );
    assert_eq!(r.json["solar_water_heating"]["count"], 1);
    assert!(
        r.json["caveat"]
            .as_str()
            .unwrap()
            .contains("over-represent")
    );
    assert_eq!(r.json["credits_charged"], 0);
    // A postcode district of the same addresses; Otherbury has none: not available, never 0.
    let r = send(&svc, get("/v1/energy/profile/lad:E06000098", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["band_mix"]["status"], "not_available");
    assert_eq!(r.json["solar_pv"]["count"], Value::Null);
    // Unknown and unanswered areas.
    for path in [
        "/v1/energy/profile/lad:E06000097",
        "/v1/energy/profile/area:XT",
        "/v1/energy/profile/nonsense",
    ] {
        let r = send(&svc, get(path, &key)).await;
        assert_eq!(r.status, 404, "{path}: {}", r.json);
    }
    let r = send(&svc, get("/v1/energy/profile/%20", &key)).await;
    assert_eq!(r.status, 422, "{}", r.json);
}

#[actix_web::test]
async fn retrofit_candidates_rank_page_and_charge() {
    let app = energy_world().await;
    plant(&app).await;
    let (acct, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    let url = "/v1/energy/retrofit-candidates";
    let r = send(
        &svc,
        post_json(url, &key, &json!({"area_id": "lad:E06000099", "limit": 2})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let uprns = |j: &Value| -> Vec<i64> {
        j["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["uprn"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(uprns(&r.json), vec![990000000012, 990000000001]);
    assert_eq!(r.json["bands"], json!(["E", "F", "G"]));
    let first = &r.json["candidates"][1];
    assert_eq!(first["headroom"], 42);
    assert_eq!(first["mees"]["status"], "below_minimum");
    assert_eq!(first["lodged_tenure"], "rented_private");
    assert_eq!(first["measures"][0]["indicative_cost"], "£100 - £350");
    assert_eq!(r.json["credits_charged"], 6);
    let cursor = r.json["next_cursor"].as_str().unwrap().to_string();
    let r = send(
        &svc,
        post_json(
            url,
            &key,
            &json!({"area_id": "lad:E06000099", "limit": 2, "cursor": cursor}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(uprns(&r.json), vec![990000000003, 990000000002]);
    assert_eq!(r.json["next_cursor"], Value::Null);
    assert_eq!(r.json["candidates"][1]["mees"]["status"], "meets_minimum");
    // The cursor is bound to its filters.
    let r = send(
        &svc,
        post_json(
            url,
            &key,
            &json!({"area_id": "lad:E06000099", "limit": 2, "bands": ["F"], "cursor": cursor}),
        ),
    )
    .await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (404, Some(0)),
        "{}",
        r.json
    );
    // By fuel.
    let r = send(
        &svc,
        post_json(
            url,
            &key,
            &json!({"area_id": "lad:E06000099", "fuel": "mains_gas"}),
        ),
    )
    .await;
    assert_eq!(uprns(&r.json), vec![990000000001, 990000000003]);
    let r = send(
        &svc,
        post_json(
            url,
            &key,
            &json!({"area_id": "lad:E06000099", "bands": ["d", "G", "D"]}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(uprns(&r.json), vec![990000000003, 990000000011]);
    // A band given twice, in either case, counts once.
    assert_eq!(r.json["bands"], json!(["D", "G"]));
    assert_eq!(balance(app.db(), acct).await, 100 - 4 * 6);

    // Every validation rule: 422 with the body, nothing charged.
    for (body, loc, kind) in [
        (
            json!({"area_id": " "}),
            vec!["body", "area_id"],
            "value_error",
        ),
        (
            json!({"area_id": "lad:E06000099", "bands": ["H"]}),
            vec!["body", "bands", "0"],
            "value_error",
        ),
        (
            json!({"area_id": "lad:E06000099", "bands": ["E", " F"]}),
            vec!["body", "bands", "1"],
            "value_error",
        ),
        (
            json!({"area_id": "lad:E06000099", "bands": []}),
            vec!["body", "bands"],
            "too_short",
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
        let r = send(&svc, post_json(url, &key, &body)).await;
        check_422(&r, &loc, kind);
    }
    for body in [
        json!({"area_id": "lad:E06000099", "fuel": "coal"}),
        json!({"area_id": "lad:E06000099", "colour": "red"}),
        json!({}),
    ] {
        let r = send(&svc, post_json(url, &key, &body)).await;
        assert_eq!(
            (r.status, r.json["credits_charged"].as_i64()),
            (422, Some(0)),
            "{body}: {}",
            r.json
        );
    }
    for area in ["lad:E06000097", "area:XT", "bua:E63000001"] {
        let r = send(&svc, post_json(url, &key, &json!({"area_id": area}))).await;
        assert_eq!(
            (r.status, r.json["credits_charged"].as_i64()),
            (404, Some(0)),
            "{area}: {}",
            r.json
        );
    }
    assert_eq!(balance(app.db(), acct).await, 100 - 4 * 6);
}

#[actix_web::test]
async fn solar_potential_is_charged_per_answered_item() {
    let app = energy_world().await;
    plant(&app).await;
    let r = load_text(app.db(), Dataset::OsBuildings, FOOTPRINT).await;
    assert_eq!(r.counts.loaded, 1, "{:?}", r.rejections);
    let (acct, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    let url = "/v1/energy/solar-potential";
    let r = send(
        &svc,
        post_json(url, &key, &json!({"uprns": [990000000001u64, "990000000020", 990000000021u64, 990000000999u64, "abc"]})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let outcomes: Vec<&str> = r.json["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, vec!["ok", "ok", "no_data", "not_found", "error"]);
    let a = &r.json["items"][0]["result"];
    assert_eq!(a["building_id"], "osgb9000000000000001");
    assert_eq!(a["roof_footprint_m2"]["value"], 100.0);
    assert_eq!(
        a["roof_footprint_m2"]["source"],
        "os_open_map_local_buildings"
    );
    assert_eq!(
        (
            a["panels_present"]["value"].as_bool(),
            a["photo_supply_pct"]["value"].as_f64()
        ),
        (Some(true), Some(25.0))
    );
    assert_eq!(a["panels_present"]["source"], "epc_domestic");
    assert_eq!(
        a["roof_description"]["value"],
        "Pitched, 100 mm loft insulation"
    );
    assert_eq!(a["solar_water_heating"]["value"], false);
    for f in ["roof_shape", "roof_material", "potential_yield_kwh"] {
        assert_eq!(a[f]["status"], "not_available", "{f}");
        assert_eq!(a[f]["value"], Value::Null, "{f}");
    }
    assert_eq!(a["height_m"]["status"], "not_available");
    // the shop: panels from its non-domestic certificate's renewable sources
    let b = &r.json["items"][1]["result"];
    assert_eq!(
        (
            b["panels_present"]["value"].as_bool(),
            b["panels_present"]["source"].as_str()
        ),
        (Some(true), Some("epc_non_domestic"))
    );
    assert_eq!(r.json["answered"], 2);
    assert_eq!(r.json["credits_charged"], 8);
    assert_eq!(balance(app.db(), acct).await, 92);
    let r = send(&svc, post_json(url, &key, &json!({"uprns": []}))).await;
    check_422(&r, &["body", "uprns"], "too_short");
    let many: Vec<u64> = (0..101).map(|i| 990000000001 + i).collect();
    let r = send(&svc, post_json(url, &key, &json!({"uprns": many}))).await;
    check_422(&r, &["body", "uprns"], "too_long");
    // nothing answered: nothing charged
    let r = send(
        &svc,
        post_json(url, &key, &json!({"uprns": [990000000999u64]})),
    )
    .await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (200, Some(0)),
        "{}",
        r.json
    );
    assert_eq!(balance(app.db(), acct).await, 92);
}

/// The fixture world's energy registers, as the embedded default serves them.
#[actix_web::test]
async fn the_fixture_world_answers_every_energy_operation() {
    let app = small_world_and_fixtures().await;
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("manifest.json")).unwrap())
            .unwrap();
    let cases = &m["energy_cases"];
    let (_, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    let with_recs = &cases["certificate_with_recommendations"];
    let (lmk, uprn, n) = (
        with_recs[0].as_str().unwrap(),
        with_recs[1].as_u64().unwrap(),
        with_recs[2].as_u64().unwrap(),
    );
    let r = send(&svc, get(&format!("/v1/energy/epc/{uprn}"), &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let c = r.json["certificates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["certificate_key"] == lmk)
        .unwrap_or_else(|| panic!("{lmk} in {}", r.json));
    assert_eq!(c["recommendations"].as_array().unwrap().len() as u64, n);
    let nd = &cases["non_domestic"];
    let r = send(&svc, get(&format!("/v1/energy/epc/{}", nd[0]), &key)).await;
    assert!(
        r.json["certificates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["certificate_key"] == nd[1]
                && c["kind"] == "non_domestic"
                && c["current_band"] == nd[2]),
        "{}",
        r.json
    );
    let dec = &cases["display"];
    let r = send(&svc, get(&format!("/v1/energy/epc/{}", dec[0]), &key)).await;
    assert!(
        r.json["certificates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["certificate_key"] == dec[1] && c["kind"] == "display"),
        "{}",
        r.json
    );
    let lad = m["world"]["local_authorities"][0]["code"].as_str().unwrap();
    let r = send(&svc, get(&format!("/v1/energy/profile/lad:{lad}"), &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["band_mix"]["status"], "ok");
    assert!(r.json["heat_pump"]["n"].as_i64().unwrap() > 0);
    // Other kinds of area the areas family resolves: a postcode district, an MSOA.
    let r = send(&svc, get("/v1/energy/profile/district:XT1", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(
        r.json["with_certificate"].as_i64().unwrap() > 0,
        "{}",
        r.json
    );
    let r = send(
        &svc,
        post_json(
            "/v1/energy/retrofit-candidates",
            &key,
            &json!({"area_id": format!("lad:{lad}"), "limit": 5}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let list = r.json["candidates"].as_array().unwrap();
    assert_eq!(list.len(), 5);
    let keys: Vec<(i64, i64)> = list
        .iter()
        .map(|c| {
            (
                c["headroom"].as_i64().unwrap(),
                c["potential_efficiency"].as_i64().unwrap(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(keys, sorted, "headroom then potential, descending");
    assert!(
        list.iter()
            .any(|c| !c["measures"].as_array().unwrap().is_empty()),
        "{}",
        r.json
    );
    let r = send(
        &svc,
        post_json(
            "/v1/energy/solar-potential",
            &key,
            &json!({"uprns": [uprn]}),
        ),
    )
    .await;
    assert_eq!(
        (r.status, r.json["answered"].as_i64()),
        (200, Some(1)),
        "{}",
        r.json
    );
}
