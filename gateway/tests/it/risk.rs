//! The risk report (specification part 2.8) and its batch (parts 4.2 and 7): every flag is
//! true, false or not_checked, from layers loaded through the real loaders; a dataset that is not
//! loaded for the property's local authority answers not_checked, never false.

use crate::support::*;
use serde_json::{Value, json};
use terrace_ingest::{Dataset, Layer, Progress};

/// Two local authorities in BNG: Tamberley west of easting 262,000, Wyvern Vale east of it.
fn lads() -> String {
    let sq = |x0: f64, x1: f64| {
        format!("[[[{x0},70000],[{x1},70000],[{x1},90000],[{x0},90000],[{x0},70000]]]")
    };
    format!(
        r#"{{"type":"FeatureCollection","crs":{{"type":"name","properties":{{"name":"urn:ogc:def:crs:EPSG::27700"}}}},"features":[
{{"type":"Feature","properties":{{"LAD23CD":"E06009901","LAD23NM":"Tamberley"}},"geometry":{{"type":"Polygon","coordinates":{}}}}},
{{"type":"Feature","properties":{{"LAD23CD":"E06009902","LAD23NM":"Wyvern Vale"}},"geometry":{{"type":"Polygon","coordinates":{}}}}}
]}}"#,
        sq(250000.0, 262000.0),
        sq(262000.0, 275000.0)
    )
}

fn wgs(x: f64, y: f64) -> String {
    let (lon, lat) = terrace_geo::wgs84_from_bng(x, y).unwrap();
    format!("{lon:.7} {lat:.7}")
}

/// A square in WKT (WGS84) centred on (x, y) with half-side h metres.
fn wkt_square(x: f64, y: f64, h: f64) -> String {
    let c = [
        (x - h, y - h),
        (x + h, y - h),
        (x + h, y + h),
        (x - h, y + h),
        (x - h, y - h),
    ];
    let pts: Vec<String> = c.iter().map(|(a, b)| wgs(*a, *b)).collect();
    format!("\"MULTIPOLYGON ((({})))\"", pts.join(","))
}

fn bng_square(x: f64, y: f64, h: f64) -> String {
    format!(
        "[[[{},{}],[{},{}],[{},{}],[{},{}],[{},{}]]]",
        x - h,
        y - h,
        x + h,
        y - h,
        x + h,
        y + h,
        x - h,
        y + h,
        x - h,
        y - h
    )
}

/// The small world with boundaries, areas derived, and: conservation areas (planning.data CSV)
/// in Tamberley only, flood zones (EA GeoJSON) in Tamberley only, a substation.
async fn risk_world() -> TestApp {
    let w = world().await;
    let r = load_text(w.db(), Dataset::Boundaries, &lads()).await;
    assert_eq!(r.counts.loaded, 2, "{:?}", r.rejections);
    terrace_build::derive::derive_areas(w.db(), &mut Progress::quiet())
        .await
        .unwrap();
    // 990000000001 is at (260010, 80010): the area (259985-260015) holds it, not 002 at 260020.
    let csv = format!(
        "dataset,end-date,entity,entry-date,geometry,name,organisation-entity,point,prefix,reference\n\
         conservation-area,,44000001,2025-03-01,{},Old Town,600001,,conservation-area,CA1\n\
         conservation-area,,44000002,2024-01-01,\"POLYGON ((nonsense))\",Broken,600001,,conservation-area,CA2\n\
         conservation-area,,44000003,2025-05-02,{},Mill Lane,600001,,conservation-area,CA3\n",
        wkt_square(260000.0, 80010.0, 15.0),
        wkt_square(259000.0, 79000.0, 50.0),
    );
    let r = load_text(w.db(), Dataset::PlanningData, &csv).await;
    assert_eq!(
        (r.counts.read, r.counts.loaded, r.counts.rejected),
        (3, 2, 1),
        "{:?}",
        r.rejections
    );
    assert_eq!(r.rejections[0].line, 3);
    // Flood zone 3 and 2 around 990000000021 at (261000, 81000), Tamberley.
    let fz = format!(
        r#"{{"type":"FeatureCollection","crs":{{"type":"name","properties":{{"name":"EPSG:27700"}}}},"features":[
{{"type":"Feature","properties":{{"fid":1,"flood_zone":"FZ3"}},"geometry":{{"type":"Polygon","coordinates":{}}}}},
{{"type":"Feature","properties":{{"fid":2,"flood_zone":"FZ2"}},"geometry":{{"type":"Polygon","coordinates":{}}}}},
{{"type":"Feature","properties":{{"fid":3,"flood_zone":"FZ1"}},"geometry":{{"type":"Polygon","coordinates":{}}}}}
]}}"#,
        bng_square(261000.0, 81000.0, 40.0),
        bng_square(261000.0, 81000.0, 150.0),
        bng_square(260500.0, 80500.0, 10.0),
    );
    let r = load_text(w.db(), Dataset::Layer(Layer::FloodZones), &fz).await;
    assert_eq!(
        (r.counts.read, r.counts.loaded, r.counts.rejected),
        (3, 2, 1),
        "{:?}",
        r.rejections
    );
    let subs = "substation_id,substation_name,easting,northing,demand_headroom_mva\n\
                S1,Dean Primary,261000,81300,12.5\n\
                S2,Far Primary,264000,84000,\n";
    let r = load_text(w.db(), Dataset::Substations, subs).await;
    assert_eq!((r.counts.loaded, r.counts.rejected), (2, 0));
    w
}

fn flag<'a>(j: &'a Value, group: &str, name: &str) -> &'a Value {
    &j[group][name]["value"]
}

#[actix_web::test]
async fn flags_are_true_false_or_not_checked_by_coverage() {
    let w = risk_world().await;
    let (acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;

    let r = send(&svc, get("/v1/property/990000000001/risk", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 3);
    assert_eq!(r.json["local_authority"], "E06009901");
    let ca = &r.json["heritage"]["conservation_area"];
    assert_eq!(ca["value"], true, "{ca}");
    assert_eq!(ca["matches"][0]["name"], "Old Town");
    assert_eq!(ca["sources"][0]["dataset"], "conservation-area");
    assert_eq!(ca["sources"][0]["source"], "planning_data_gov_uk");
    assert_eq!(
        ca["sources"][0]["vintage"], "2025-05-02",
        "newest entry date in the area"
    );
    // Never loaded anywhere: not_checked, with the reason.
    assert_eq!(
        flag(&r.json, "planning", "article_4_direction"),
        "not_checked"
    );
    assert!(
        r.json["planning"]["article_4_direction"]["reason"]
            .as_str()
            .unwrap()
            .contains("not loaded for local authority E06009901")
    );
    assert!(
        r.json["summary"]["true_flags"]
            .as_array()
            .unwrap()
            .contains(&json!("heritage.conservation_area"))
    );
    assert!(
        r.json["summary"]["not_checked"]
            .as_array()
            .unwrap()
            .contains(&json!("planning.article_4_direction"))
    );

    // Same authority, loaded, nothing matches: false.
    let r = send(&svc, get("/v1/property/990000000002/risk", &key)).await;
    assert_eq!(flag(&r.json, "heritage", "conservation_area"), false);
    assert_eq!(
        r.json["flood"]["zone"], "1",
        "both zones checked, neither holds it"
    );
    assert_eq!(flag(&r.json, "flood", "in_flood_zone_3"), false);

    // The other authority has no conservation areas or flood zones loaded: not_checked, never
    // false, although both datasets are loaded elsewhere.
    let r = send(&svc, get("/v1/property/990000000024/risk", &key)).await;
    assert_eq!(r.json["local_authority"], "E06009902");
    assert_eq!(
        flag(&r.json, "heritage", "conservation_area"),
        "not_checked"
    );
    assert_eq!(flag(&r.json, "flood", "in_flood_zone_3"), "not_checked");
    assert_eq!(r.json["flood"]["zone"], "not_checked");
    assert_eq!(
        r.json["heritage"]["conservation_area"]["not_loaded"],
        json!(["conservation-area"])
    );
    assert!(
        r.json["summary"]["datasets_not_loaded"]
            .as_array()
            .unwrap()
            .contains(&json!("conservation-area"))
    );

    // Flood zone 3 (and 2): zone "3".
    let r = send(&svc, get("/v1/property/990000000021/risk", &key)).await;
    assert_eq!(r.json["flood"]["zone"], "3");
    assert_eq!(flag(&r.json, "flood", "in_flood_zone_3"), true);
    assert_eq!(flag(&r.json, "flood", "in_flood_zone_2"), true);
    assert_eq!(
        r.json["flood"]["in_flood_zone_3"]["sources"][0]["source"],
        "ea_flood_zones"
    );
    // Infrastructure: the nearest substation, 300 m away, with its headroom.
    let s = &r.json["infrastructure"]["substation"];
    assert_eq!(s["status"], "ok", "{s}");
    assert_eq!(s["name"], "Dean Primary");
    assert_eq!(s["distance_m"], 300.0);
    assert_eq!(s["value"], 12.5);
    // No renewable projects loaded: not_checked.
    assert_eq!(
        r.json["infrastructure"]["renewable_project"]["status"],
        "not_checked"
    );

    // Unknown UPRN: 404, not charged; malformed: 422.
    let before = balance(w.db(), acct).await;
    let r = send(&svc, get("/v1/property/990000009999/risk", &key)).await;
    assert_eq!(r.status, 404);
    let r = send(&svc, get("/v1/property/abc/risk", &key)).await;
    assert_eq!(r.status, 422);
    assert_eq!(balance(w.db(), acct).await, before);
}

#[actix_web::test]
async fn a_layer_loaded_later_is_seen_without_a_restart() {
    let w = risk_world().await;
    let (_, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/property/990000000024/risk", &key)).await;
    assert_eq!(
        flag(&r.json, "heritage", "conservation_area"),
        "not_checked"
    );
    // Wyvern Vale's conservation areas arrive (one area, away from the property).
    let csv = format!(
        "dataset,entity,geometry,name\nconservation-area,44000010,{},Far Green\n",
        wkt_square(266000.0, 86000.0, 50.0)
    );
    load_text(w.db(), Dataset::PlanningData, &csv).await;
    let r = send(&svc, get("/v1/property/990000000024/risk", &key)).await;
    assert_eq!(flag(&r.json, "heritage", "conservation_area"), false);
    // Loading the same file again changes nothing.
    let again = load_text(w.db(), Dataset::PlanningData, &csv).await;
    assert_eq!((again.counts.unchanged, again.counts.loaded), (1, 0));
}

#[actix_web::test]
async fn the_batch_answers_in_input_order_and_charges_answered_items() {
    let w = risk_world().await;
    let (acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;
    let body = json!({"uprns": [990000000001i64, "990000000024", 990000009999i64, "abc", 990000000001i64, -5]});
    let r = send(&svc, post_json("/v1/property/risk/batch", &key, &body)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let items = r.json["items"].as_array().unwrap();
    let outcomes: Vec<&str> = items
        .iter()
        .map(|i| i["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["ok", "ok", "not_found", "error", "ok", "error"]);
    assert_eq!(items[1]["uprn"], "990000000024", "the UPRN as given");
    assert_eq!(
        items[0]["result"]["heritage"]["conservation_area"]["value"],
        true
    );
    assert_eq!(
        items[1]["result"]["heritage"]["conservation_area"]["value"],
        "not_checked"
    );
    // Three answered items (the duplicate counts, as its single call would), three credits each:
    // exactly the single calls, never more.
    assert_eq!(r.json["answered"], 3);
    assert_eq!(r.json["credits_charged"], 9);
    assert_eq!(balance(w.db(), acct).await, 91);
    let single = send(&svc, get("/v1/property/990000000001/risk", &key)).await;
    assert_eq!(single.json["credits_charged"], 3);
    assert_eq!(items[0]["result"]["heritage"], single.json["heritage"]);

    // 422 and nothing charged: over 100, empty, malformed, unknown field.
    let before = balance(w.db(), acct).await;
    let many: Vec<i64> = (0..101).map(|i| 990000000001 + i).collect();
    for body in [
        json!({"uprns": many}),
        json!({"uprns": []}),
        json!({"uprns": "990000000001"}),
        json!({"uprn": [990000000001i64]}),
    ] {
        let r = send(&svc, post_json("/v1/property/risk/batch", &key, &body)).await;
        assert_eq!(r.status, 422, "{body} {}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
    }
    let r = send(&svc, post_raw("/v1/property/risk/batch", &key, "{not json")).await;
    assert_eq!(r.status, 422);
    assert_eq!(balance(w.db(), acct).await, before);
    // Exactly 100 is accepted.
    let hundred: Vec<i64> = (0..100).map(|i| 990000000001 + i).collect();
    let r = send(
        &svc,
        post_json("/v1/property/risk/batch", &key, &json!({"uprns": hundred})),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["items"].as_array().unwrap().len(), 100);
}

#[actix_web::test]
async fn the_record_fills_risk_designations_and_infrastructure_with_provenance() {
    let w = risk_world().await;
    let (_, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/property/990000000021", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let j = &r.json;
    assert_eq!(j["risk"]["flood_zone"], "3");
    assert_eq!(j["risk"]["in_flood_zone_3"], true);
    assert_eq!(j["designations"]["conservation_area"], false);
    assert_eq!(j["designations"]["article_4_direction"], "not_checked");
    assert_eq!(j["infrastructure"]["nearest_substation_distance_m"], 300.0);
    assert_eq!(j["infrastructure"]["nearest_substation_headroom_mva"], 12.5);
    let prov = &j["provenance"];
    assert_eq!(prov["in_flood_zone_3_source"], "ea_flood_zones");
    assert_eq!(prov["conservation_area_source"], "planning_data_gov_uk");
    assert_eq!(prov["article_4_direction_source"], "not_loaded");
    assert_eq!(prov["article_4_direction_confidence"], 0.0);
    assert_eq!(
        prov["nearest_substation_headroom_mva_source"],
        "dno_substation_headroom"
    );
    for tier in ["risk", "designations", "infrastructure"] {
        for (field, _) in j[tier].as_object().unwrap() {
            assert!(prov[format!("{field}_source")].is_string(), "{field}");
            assert!(prov[format!("{field}_confidence")].is_number(), "{field}");
        }
    }
    // A property in the other authority: the flood zone is not_checked in the record too.
    let r = send(&svc, get("/v1/property/990000000024", &key)).await;
    assert_eq!(r.json["risk"]["flood_zone"], "not_checked");
    assert_eq!(r.json["designations"]["conservation_area"], "not_checked");
}
