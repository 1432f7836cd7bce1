//! Land (issue 18): the INSPIRE GML and OS buildings loaders on files written in the published
//! layouts (a malformed member, idempotence), the land build's links (building to parcel,
//! address to parcel, title to parcel, with their coverage), and plot utilisation: decimals as
//! text, the ceiling rule (unmeasured parcels excluded), charging, every validation rule and the
//! 404.

use crate::support::{
    Reply, TestApp, account, balance, get, load_text, post_json, send, service, world,
};
use crate::validation::check_422;
use serde_json::{Value, json};
use terrace_fixturegen::land::{
    INSPIRE_FOOTER, inspire_header, inspire_member, os_buildings_geojson, rect,
};
use terrace_ingest::{Dataset, Progress};

/// Two authorities in BNG metres: A holds the small world's Exampleton addresses, B its
/// Otherbury one.
const LADS: &str = r#"{"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"LAD23CD":"E06000099","LAD23NM":"Exampleshire"},"geometry":{"type":"Polygon","coordinates":[[[259000,79000],[262000,79000],[262000,82000],[259000,82000],[259000,79000]]]}},
{"type":"Feature","properties":{"LAD23CD":"E06000098","LAD23NM":"Otherbury"},"geometry":{"type":"Polygon","coordinates":[[[264000,84000],[266000,84000],[266000,86000],[264000,86000],[264000,84000]]]}}
]}"#;

/// The parcels: 101 (2,000 m², three houses under one building), 102 (10,000 m², empty), 103
/// (400 m², a shop under a retail building), 104 (800 m² less a 50 m² hole, a block of flats, no
/// building), 105 in authority B (no footprints loaded there), 106 with an unclosed ring.
fn gml() -> String {
    let mut g = inspire_header(6);
    inspire_member(
        &mut g,
        101,
        &[rect(259_990.0, 79_990.0, 260_040.0, 80_030.0)],
    );
    inspire_member(
        &mut g,
        102,
        &[rect(260_300.0, 80_300.0, 260_400.0, 80_400.0)],
    );
    inspire_member(
        &mut g,
        103,
        &[rect(260_190.0, 80_090.0, 260_210.0, 80_110.0)],
    );
    inspire_member(
        &mut g,
        104,
        &[
            rect(260_090.0, 79_990.0, 260_110.0, 80_030.0),
            rect(260_095.0, 80_020.0, 260_105.0, 80_025.0),
        ],
    );
    inspire_member(
        &mut g,
        105,
        &[rect(264_900.0, 84_900.0, 265_100.0, 85_100.0)],
    );
    let mut open = rect(261_000.0, 81_000.0, 261_010.0, 81_010.0);
    open.pop();
    inspire_member(&mut g, 106, &[open]);
    g.push_str(INSPIRE_FOOTER);
    g
}

fn buildings() -> String {
    os_buildings_geojson(&[
        (
            "B1".into(),
            15_014,
            rect(260_000.0, 80_000.0, 260_040.0, 80_020.0),
        ),
        (
            "B2".into(),
            15_026,
            rect(260_195.0, 80_095.0, 260_205.0, 80_105.0),
        ),
        (
            "B3".into(),
            15_099,
            rect(260_500.0, 80_500.0, 260_510.0, 80_510.0),
        ),
    ])
}

/// The small world with the two authorities, parcels and buildings loaded and the land built.
async fn land_world() -> TestApp {
    let app = world().await;
    let db = app.db();
    load_text(db, Dataset::Boundaries, LADS).await;
    terrace_build::derive::derive_areas(db, &mut Progress::quiet())
        .await
        .unwrap();
    terrace_build::derive::derive_h3(db, &mut Progress::quiet())
        .await
        .unwrap();
    load_text(db, Dataset::Inspire, &gml()).await;
    load_text(db, Dataset::OsBuildings, &buildings()).await;
    terrace_build::derive::link_land(db, &mut Progress::quiet())
        .await
        .unwrap();
    app
}

fn land_ids(r: &Reply) -> Vec<&str> {
    r.json["parcels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["land_id"].as_str().unwrap())
        .collect()
}

fn parcel<'a>(r: &'a Reply, id: &str) -> &'a Value {
    r.json["parcels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["land_id"] == id)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loaders_account_for_every_member_and_load_twice_to_no_change() {
    let app = world().await;
    let db = app.db();
    load_text(db, Dataset::Boundaries, LADS).await;
    let first = load_text(db, Dataset::Inspire, &gml()).await;
    assert_eq!(first.counts.read, 6);
    assert_eq!(first.counts.loaded, 5);
    assert_eq!(first.counts.rejected, 1);
    let r = &first.rejections[0];
    assert!(
        r.reason.contains("INSPIREID 106") && r.reason.contains("unclosed ring"),
        "{r}"
    );
    // header (2 lines) + five one-ring members of 14 lines, one with two rings (15): 106's
    // member starts on line 2 + 14 * 4 + 15 + 1.
    assert_eq!(r.line, 2 + 14 * 4 + 15 + 1);
    let again = load_text(db, Dataset::Inspire, &gml()).await;
    assert_eq!((again.counts.loaded, again.counts.unchanged), (0, 5));

    let parcels = terrace_store::land::parcels_by_id(db, &[101, 104, 105])
        .await
        .unwrap();
    let by_id = |id: i64| parcels.iter().find(|p| p.inspire_id == id).unwrap();
    assert!(
        (by_id(104).area_m2 - 750.0).abs() < 1e-6,
        "the hole is not land"
    );
    assert_eq!(by_id(101).lad_code.as_deref(), Some("E06000099"));
    assert_eq!(by_id(105).lad_code.as_deref(), Some("E06000098"));
    let (lat, lon) = (by_id(101).lat.unwrap(), by_id(101).lon.unwrap());
    assert!(
        (49.0..56.0).contains(&lat) && (-8.0..2.0).contains(&lon),
        "{lat} {lon}"
    );

    let b = load_text(db, Dataset::OsBuildings, &buildings()).await;
    assert_eq!(
        (b.counts.read, b.counts.loaded, b.counts.rejected),
        (3, 2, 1)
    );
    assert!(b.rejections[0].reason.contains("not a building code"));
    let b2 = load_text(db, Dataset::OsBuildings, &buildings()).await;
    assert_eq!(b2.counts.unchanged, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_build_links_buildings_addresses_and_titles_with_their_coverage() {
    let app = land_world().await;
    let db = app.db();
    let links = terrace_store::land::parcel_addresses_by_uprn(
        db,
        &[
            990000000001,
            990000000011,
            990000000020,
            990000000021,
            990000000024,
        ],
    )
    .await
    .unwrap();
    let parcel_of = |u: i64| links.iter().find(|l| l.uprn == u).map(|l| l.inspire_id);
    assert_eq!(parcel_of(990000000001), Some(101));
    assert_eq!(parcel_of(990000000011), Some(104));
    assert_eq!(parcel_of(990000000020), Some(103));
    assert_eq!(
        parcel_of(990000000021),
        None,
        "Rose Cottage lies in no loaded parcel"
    );
    assert_eq!(parcel_of(990000000024), Some(105));
    assert!(
        links
            .iter()
            .all(|l| l.method == "point_in_polygon" && l.score == 1.0)
    );

    // A company-owned title linked to a UPRN on parcel 103, one to a UPRN on no parcel.
    let now = chrono::Utc::now().naive_utc();
    let title = |n: &str, uprn: i64| terrace_store::titles::TitleRow {
        title_number: n.into(),
        register: "ccod".into(),
        tenure: Some("Freehold".into()),
        property_address: None,
        district: None,
        county: None,
        region: None,
        postcode: None,
        multiple_address: Some(false),
        price_paid: None,
        date_added: None,
        additional_proprietor: None,
        proprietors_json: "[]".into(),
        file_month: None,
        uprn: Some(uprn),
        match_method: Some("address_matcher".into()),
        match_score: Some(0.9),
        source: "test".into(),
        updated_at: now,
    };
    terrace_store::titles::replace_titles(
        db,
        vec![title("XT1", 990000000020), title("XT2", 990000000021)],
    )
    .await
    .unwrap();
    let report = terrace_build::derive::link_land(db, &mut Progress::quiet())
        .await
        .unwrap();
    assert_eq!((report.titles_linked, report.titles_on_parcel), (2, 1));
    let on = terrace_store::land::parcels_of_title(db, "XT1")
        .await
        .unwrap();
    assert_eq!(on.len(), 1);
    assert_eq!((on[0].inspire_id, on[0].uprn), (103, 990000000020));
    assert!((on[0].score - 0.9).abs() < 1e-9);
    assert!(
        terrace_store::land::parcels_of_title(db, "XT2")
            .await
            .unwrap()
            .is_empty()
    );

    let cov = terrace_store::land::all_land_coverage(db).await.unwrap();
    let a = cov.iter().find(|c| c.lad_code == "E06000099").unwrap();
    assert_eq!((a.parcels, a.parcels_measured), (4, 4));
    assert_eq!((a.buildings, a.buildings_on_parcel), (2, 2));
    assert_eq!(
        a.addresses_in_parcel, 8,
        "houses 1-3, shell 10, flats 11-13, shop 20"
    );
    assert_eq!((a.titles_linked, a.titles_on_parcel), (2, 1));
    let b = cov.iter().find(|c| c.lad_code == "E06000098").unwrap();
    assert_eq!((b.parcels, b.parcels_measured, b.buildings), (1, 0, 0));

    // Building the links again changes nothing.
    let before = terrace_store::land::parcels_of_title(db, "XT1")
        .await
        .unwrap();
    terrace_build::derive::link_land(db, &mut Progress::quiet())
        .await
        .unwrap();
    let after = terrace_store::land::parcels_of_title(db, "XT1")
        .await
        .unwrap();
    assert_eq!(before.len(), after.len());
    assert_eq!(before[0].id, after[0].id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plot_utilisation_lists_decimals_as_text_and_applies_the_ceiling_to_measured_parcels() {
    let app = land_world().await;
    let (acct, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    let path = "/v1/land/plot-utilisation";

    let r = send(
        &svc,
        post_json(path, &key, &json!({"area_id": "lad:E06000099"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 6);
    assert_eq!(balance(app.db(), acct).await, 94);
    assert_eq!(
        land_ids(&r),
        vec!["102", "101", "104", "103"],
        "largest first"
    );
    assert_eq!(r.json["count"], 4);
    assert_eq!(r.json["min_area_m2"], 0.0);
    assert_eq!(r.json["max_built_coverage"], Value::Null);
    let houses = parcel(&r, "101");
    assert_eq!(houses["area_m2"], "2000.00");
    assert_eq!(houses["built_coverage_ratio"], "0.4000");
    assert_eq!(houses["total_buildings_footprint_m2"], "800.00");
    assert_eq!(houses["n_buildings"], 1);
    assert_eq!(houses["n_units_via_buildings"], 3);
    assert_eq!(houses["address_count_residential"], 3);
    assert_eq!(houses["address_count_commercial"], 0);
    assert_eq!(houses["landuse_tier_a"], "residential");
    assert_eq!(houses["landuse_tier_b"], "Residential");
    assert_eq!(houses["nlud_code"], "U070");
    let empty = parcel(&r, "102");
    assert_eq!(
        empty["built_coverage_ratio"], "0.0000",
        "measured and empty"
    );
    assert_eq!(
        empty["landuse_tier_a"],
        Value::Null,
        "nothing supports a class"
    );
    let shop = parcel(&r, "103");
    assert_eq!(shop["built_coverage_ratio"], "0.2500");
    assert_eq!(
        (shop["landuse_tier_a"].as_str(), shop["nlud_code"].as_str()),
        (Some("commercial"), Some("U090"))
    );
    assert_eq!(parcel(&r, "104")["area_m2"], "750.00");
    assert_eq!(r.json["coverage"]["measured_share"], "1.0000");

    // The ceiling: 101 (0.4) is over it; 102, 104 and 103 are kept.
    let r = send(
        &svc,
        post_json(
            path,
            &key,
            &json!({"area_id": "lad:E06000099", "max_built_coverage": 0.3, "min_area_m2": 500}),
        ),
    )
    .await;
    assert_eq!(land_ids(&r), vec!["102", "104"]);

    // Authority B has no footprints: its parcel is listed with a null ratio, and excluded (not
    // counted as empty) under a ceiling.
    let r = send(
        &svc,
        post_json(path, &key, &json!({"area_id": "lad:E06000098"})),
    )
    .await;
    assert_eq!(land_ids(&r), vec!["105"]);
    assert_eq!(parcel(&r, "105")["built_coverage_ratio"], Value::Null);
    assert_eq!(
        parcel(&r, "105")["total_buildings_footprint_m2"],
        Value::Null
    );
    let r = send(
        &svc,
        post_json(
            path,
            &key,
            &json!({"area_id": "lad:E06000098", "max_built_coverage": 0.9, "limit": 5}),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(land_ids(&r).is_empty());
    assert_eq!(r.json["coverage"]["parcels_in_area"], 1);
    assert_eq!(r.json["coverage"]["parcels_measured"], 0);
    assert!(
        r.json["coverage_note"]
            .as_str()
            .unwrap()
            .contains("excluded rather than counted as empty")
    );
    assert_eq!(r.json["credits_charged"], 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plot_utilisation_validation_is_422_and_an_unknown_area_404_both_free() {
    let app = land_world().await;
    let (acct, key) = account(app.db(), 100).await;
    let svc = service(app.state.clone()).await;
    let path = "/v1/land/plot-utilisation";
    let cases = [
        (json!({}), vec!["body", "area_id"], "missing"),
        (
            json!({"area_id": "  "}),
            vec!["body", "area_id"],
            "value_error",
        ),
        (
            json!({"area_id": "lad:E06000099", "min_area_m2": -1}),
            vec!["body", "min_area_m2"],
            "value_error",
        ),
        (
            json!({"area_id": "lad:E06000099", "max_built_coverage": 1.5}),
            vec!["body", "max_built_coverage"],
            "value_error",
        ),
        (
            json!({"area_id": "lad:E06000099", "max_built_coverage": -0.1}),
            vec!["body", "max_built_coverage"],
            "value_error",
        ),
        (
            json!({"area_id": "lad:E06000099", "limit": 0}),
            vec!["body", "limit"],
            "greater_than_equal",
        ),
        (
            json!({"area_id": "lad:E06000099", "limit": 1001}),
            vec!["body", "limit"],
            "less_than_equal",
        ),
        (
            json!({"area_id": "lad:E06000099", "colour": "red"}),
            vec!["body", "colour"],
            "extra_forbidden",
        ),
    ];
    for (body, loc, kind) in cases {
        let r = send(&svc, post_json(path, &key, &body)).await;
        check_422(&r, &loc, kind);
    }
    let r = send(
        &svc,
        post_json(path, &key, &json!({"area_id": "lad:E06000097"})),
    )
    .await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 0);
    // Not a local authority or an LSOA: no land figures are kept for it (404, free).
    for area in ["nowhere", "district:XT1"] {
        let r = send(&svc, post_json(path, &key, &json!({ "area_id": area }))).await;
        assert_eq!(
            (r.status, r.json["credits_charged"].as_i64()),
            (404, Some(0)),
            "{}",
            r.json
        );
    }
    assert_eq!(balance(app.db(), acct).await, 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fixture_world_links_titles_to_parcels_and_reports_its_coverage() {
    let t = terrace_store::testing::TestDb::new().await;
    let dir = crate::support::fixtures();
    terrace_build::load_and_build(&t.db, &dir, &mut Progress::quiet())
        .await
        .unwrap();
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let cases = &m["land_cases"];
    let measured = cases["measured_lad"].as_str().unwrap();
    let unmeasured = cases["unmeasured_lad"].as_str().unwrap();
    let cov = terrace_store::land::all_land_coverage(&t.db).await.unwrap();
    let a = cov.iter().find(|c| c.lad_code == measured).unwrap();
    let b = cov.iter().find(|c| c.lad_code == unmeasured).unwrap();
    let parcels = cases["parcels"].as_i64().unwrap();
    assert_eq!(a.parcels + b.parcels, parcels);
    assert_eq!((a.parcels_measured, b.parcels_measured), (a.parcels, 0));
    assert_eq!(
        a.buildings_on_parcel,
        cases["parcels_with_building"].as_i64().unwrap()
    );
    assert!(
        a.addresses_in_parcel >= a.parcels,
        "every plot holds its address"
    );
    // The title-to-parcel link, measured: titles linked to a UPRN whose address is on a plot.
    let titles = a.titles_linked + b.titles_linked;
    let on = a.titles_on_parcel + b.titles_on_parcel;
    assert!(titles > 0 && on > 0 && on <= titles, "{titles} {on}");
    println!(
        "fixture world: {on} of {titles} company-owned titles linked to a UPRN lie on a parcel ({:.1}%)",
        100.0 * on as f64 / titles as f64
    );

    // The coverage register reports the land links per authority.
    let areas = terrace_areas::AreasCtx::new(t.db.clone());
    let reg = terrace_areas::coverage::coverage(&areas, measured)
        .await
        .unwrap();
    let land = reg.land.expect("land links are in the register");
    assert_eq!(land.parcels, a.parcels);
    assert_eq!(land.measured_share, Some(1.0));
    assert_eq!(land.titles_on_parcel, a.titles_on_parcel);

    // Plot utilisation there: the sample house's plot is measured and built on; a ceiling of 0
    // keeps only the empty plots, which are measured at 0.
    let (_, key) = account(&t.db, 100).await;
    let svc = service(crate::support::state_for(&t.db, Default::default()).await).await;
    let path = "/v1/land/plot-utilisation";
    let body = json!({"area_id": format!("lad:{measured}"), "limit": 1000});
    let r = send(&svc, post_json(path, &key, &body)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let sample = cases["sample_land_id"].as_i64().unwrap().to_string();
    let p = parcel(&r, &sample);
    assert!(p["n_buildings"].as_i64().unwrap() >= 1);
    assert!(
        p["built_coverage_ratio"]
            .as_str()
            .unwrap()
            .parse::<f64>()
            .unwrap()
            > 0.0
    );
    let body =
        json!({"area_id": format!("lad:{measured}"), "max_built_coverage": 0, "limit": 1000});
    let r = send(&svc, post_json(path, &key, &body)).await;
    for p in r.json["parcels"].as_array().unwrap() {
        assert_eq!(p["built_coverage_ratio"], "0.0000");
        assert_eq!(p["n_buildings"], 0);
    }
    assert!(
        r.json["count"].as_i64().unwrap() >= 1,
        "the plots without a footprint: {}",
        cases["parcels_without_footprint"]
    );
    let body = json!({"area_id": format!("lad:{unmeasured}"), "max_built_coverage": 1});
    let r = send(&svc, post_json(path, &key, &body)).await;
    assert_eq!(
        r.json["count"], 0,
        "unmeasured parcels are excluded under a ceiling"
    );

    // The stock profile of both authorities against the fixture files read here: the register's
    // classes and parents (AddressBase CSV: no field is quoted), the footprints (GeoJSON).
    let csv =
        std::fs::read_to_string(dir.join("addressbase/addressbase_plus_fixture.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let (uprn_at, parent_at, class_at) = (col("UPRN"), col("PARENT_UPRN"), col("CLASS"));
    let mut classes = std::collections::BTreeMap::<char, i64>::new();
    let mut buildings =
        std::collections::BTreeMap::<String, std::collections::BTreeSet<char>>::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let class = f[class_at].chars().next().unwrap();
        *classes.entry(class).or_default() += 1;
        if class != 'P' {
            let key = if f[parent_at].is_empty() {
                f[uprn_at]
            } else {
                f[parent_at]
            };
            buildings.entry(key.to_string()).or_default().insert(class);
        }
    }
    let mixed = buildings
        .values()
        .filter(|s| (s.contains(&'R') && s.contains(&'C')) || s.contains(&'X'))
        .count() as i64;
    let with_rc = buildings
        .values()
        .filter(|s| s.iter().any(|c| "RCX".contains(*c)))
        .count() as i64;
    assert!(mixed > 0, "the fixture world has mixed-use buildings");
    let mut sums = std::collections::BTreeMap::<&str, i64>::new();
    let (mut mixed_count, mut mixed_denominator) = (0, 0);
    for lad in [measured, unmeasured] {
        let r = send(
            &svc,
            get(&format!("/v1/buildings/stock-profile/lad:{lad}"), &key),
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
        for k in ["residential", "commercial", "dual_use", "parent_shells"] {
            *sums.entry(k).or_default() += r.json["units"][k].as_i64().unwrap();
        }
        mixed_count += r.json["mixed_use_share"]["count"].as_i64().unwrap();
        mixed_denominator += r.json["mixed_use_share"]["denominator"].as_i64().unwrap();
        assert_eq!(r.json["hmo_share"]["status"], "not_available");
        if lad == measured {
            // Every fixture footprint is an 8 m square, all in the measured authority.
            let n = cases["parcels_with_building"].as_i64().unwrap();
            let f = &r.json["median_footprint_m2"];
            assert_eq!(
                (f["value"].as_str(), f["n"].as_i64()),
                (Some("64.00"), Some(n)),
                "{f}"
            );
            // OS Open Map Local has no height: the median is of the LIDAR heights planted
            // under the footprints the fixture tiles cover.
            let mut planted: Vec<f64> = cases["lidar"]["planted"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p[1].as_f64().unwrap())
                .collect();
            planted.sort_by(f64::total_cmp);
            let k = planted.len();
            let median = if k % 2 == 1 {
                planted[k / 2]
            } else {
                (planted[k / 2 - 1] + planted[k / 2]) / 2.0
            };
            let h = &r.json["median_height_m"];
            assert_eq!(h["n"].as_i64(), Some(k as i64), "{h}");
            let got: f64 = h["value"].as_str().unwrap().parse().unwrap();
            assert!((got - median).abs() <= 0.006, "{h} against {median}");
        } else {
            assert_eq!(r.json["median_footprint_m2"]["status"], "not_available");
        }
    }
    let count = |c: char| classes.get(&c).copied().unwrap_or(0);
    assert_eq!(sums["residential"], count('R'));
    assert_eq!(sums["commercial"], count('C'));
    assert_eq!(sums["dual_use"], count('X'));
    assert_eq!(sums["parent_shells"], count('P'));
    assert_eq!((mixed_count, mixed_denominator), (mixed, with_rc));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h3_density_counts_addresses_by_class_per_cell_pages_and_is_free() {
    let app = land_world().await;
    let (acct, key) = account(app.db(), 10).await;
    let svc = service(app.state.clone()).await;
    let r = send(&svc, get("/v1/h3/density/lad:E06000099", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 0);
    assert_eq!(r.json["resolution"], 8);
    let cells = r.json["cells"].as_array().unwrap().clone();
    let sum = |k: &str| cells.iter().map(|c| c[k].as_i64().unwrap()).sum::<i64>();
    assert_eq!(
        sum("addresses"),
        11,
        "Exampleton's addresses, all with a cell"
    );
    assert_eq!(
        (sum("residential"), sum("commercial"), sum("other")),
        (9, 1, 1)
    );
    // No sale is linked in this world: the sales are null, with the reason, never 0.
    assert_eq!(r.json["period"], Value::Null);
    assert!(
        cells
            .iter()
            .all(|c| c["sales"].is_null() && c["sales_value"].is_null())
    );
    assert!(r.json["sales_reason"].is_string());
    assert_eq!(r.json["next_cursor"], Value::Null);

    // Pages of one cell give the same cells in the same order.
    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    let mut first_cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/h3/density/lad:E06000099?limit=1&cursor={c}"),
            None => "/v1/h3/density/lad:E06000099?limit=1".to_string(),
        };
        let r = send(&svc, get(&path, &key)).await;
        assert_eq!(r.status, 200, "{}", r.json);
        paged.extend(r.json["cells"].as_array().unwrap().iter().cloned());
        match r.json["next_cursor"].as_str() {
            Some(c) => {
                first_cursor.get_or_insert_with(|| c.to_string());
                cursor = Some(c.to_string());
            }
            None => break,
        }
    }
    assert_eq!(paged, cells);

    for (path, loc, kind) in [
        ("/v1/h3/density/%20", vec!["path", "area_id"], "value_error"),
        (
            "/v1/h3/density/lad:E06000099?months=0",
            vec!["query", "months"],
            "greater_than_equal",
        ),
        (
            "/v1/h3/density/lad:E06000099?limit=1001",
            vec!["query", "limit"],
            "less_than_equal",
        ),
        (
            "/v1/h3/density/lad:E06000099?cursor=%20%20%20%20%20%20%20%20%20%20%20%20%20%20%20",
            vec!["query", "cursor"],
            "value_error",
        ),
        (
            "/v1/h3/density/lad:E06000099?cursor=zzzzzzzzzzzzzzz",
            vec!["query", "cursor"],
            "value_error",
        ),
    ] {
        let r = send(&svc, get(path, &key)).await;
        check_422(&r, &loc, kind);
    }
    // A cursor is bound to its walk: the same token for another period names no page (404).
    let c = first_cursor.expect("the walk had a second page");
    for path in [
        "/v1/h3/density/lad:E06000097".to_string(),
        "/v1/h3/density/nowhere".to_string(),
        "/v1/h3/density/district:XT1".to_string(),
        format!("/v1/h3/density/lad:E06000099?limit=1&months=6&cursor={c}"),
    ] {
        let r = send(&svc, get(&path, &key)).await;
        assert_eq!(r.status, 404, "{path}: {}", r.json);
    }
    assert_eq!(balance(app.db(), acct).await, 10);
}
