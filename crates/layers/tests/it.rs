//! The layers family over a template store (no HTTP): a flag is true where a loaded feature
//! matches, false only where a dataset of the flag is loaded for the property's local authority
//! and nothing matches, and not_checked otherwise; the cache follows `spatial_layers_version`.

use chrono::{NaiveDate, NaiveDateTime};
use geo::{MultiPolygon, polygon};
use terrace_core::{Flag, Uprn};
use terrace_layers::{LayerCache, risk};
use terrace_store::address::{self, AddressRow};
use terrace_store::meta;
use terrace_store::spatial::{CoverageRow, FeatureRow, replace_coverage, replace_features};
use terrace_store::testing::TestDb;

fn now() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .expect("a time")
}

fn place(uprn: i64, at: Option<(f64, f64)>, lad: &str) -> AddressRow {
    AddressRow {
        uprn,
        parent_uprn: None,
        class: Some("RD04".into()),
        saon: None,
        paon: Some(uprn.to_string()),
        street: Some("RIVER LANE".into()),
        locality: None,
        town: Some("TAMBERLEY".into()),
        postcode: Some("TB1 1AA".into()),
        x: at.map(|p| p.0),
        y: at.map(|p| p.1),
        lat: None,
        lon: None,
        lad_code: Some(lad.into()),
        lsoa_code: None,
        address_source: Some("test".into()),
        position_source: Some("test".into()),
        updated_at: now(),
    }
}

/// A square polygon feature of `dataset` with `category`, from (x0, y0), `side` metres.
fn square(
    dataset: &str,
    reference: &str,
    category: &str,
    x0: f64,
    y0: f64,
    side: f64,
) -> FeatureRow {
    let p = polygon![
        (x: x0, y: y0),
        (x: x0 + side, y: y0),
        (x: x0 + side, y: y0 + side),
        (x: x0, y: y0 + side),
        (x: x0, y: y0),
    ];
    FeatureRow {
        id: format!("{dataset}:{reference}"),
        dataset: dataset.into(),
        reference: Some(reference.into()),
        name: Some(format!("{dataset} {reference}")),
        category: Some(category.into()),
        status: None,
        value: None,
        organisation: None,
        entry_date: None,
        wkb: Some(terrace_geo::multipolygon_to_wkb(&MultiPolygon(vec![p]))),
        x: None,
        y: None,
        min_x: x0,
        min_y: y0,
        max_x: x0 + side,
        max_y: y0 + side,
        attributes_json: "{}".into(),
        source: "test".into(),
        updated_at: now(),
    }
}

fn covered(dataset: &str, lad: &str) -> CoverageRow {
    CoverageRow {
        id: CoverageRow::key(dataset, lad),
        dataset: dataset.into(),
        lad_code: lad.into(),
        vintage: None,
        source: "test".into(),
        updated_at: now(),
    }
}

fn uprn(n: i64) -> Uprn {
    Uprn::new(n).expect("a UPRN")
}

#[tokio::test]
async fn flags_are_three_valued_by_coverage() {
    let t = TestDb::new().await;
    address::replace_addresses(
        &t.db,
        vec![
            place(11, Some((1050.0, 1050.0)), "E06000001"),
            place(12, Some((5000.0, 5000.0)), "E06000001"),
            place(13, Some((5000.0, 5000.0)), "E06000002"),
            place(14, None, "E06000001"),
        ],
    )
    .await
    .unwrap();
    replace_features(
        &t.db,
        vec![square(
            "ea-flood-zones",
            "fz3-1",
            "FZ3",
            1000.0,
            1000.0,
            100.0,
        )],
    )
    .await
    .unwrap();
    replace_coverage(&t.db, vec![covered("ea-flood-zones", "E06000001")])
        .await
        .unwrap();
    meta::bump(&t.db, meta::Key::SpatialLayersVersion, "test")
        .await
        .unwrap();
    let cache = LayerCache::default();

    let inside = risk(&t.db, &cache, uprn(11)).await.unwrap();
    assert_eq!(inside.flood.zone, "3");
    let fz3 = &inside.flood.flags["in_flood_zone_3"];
    assert_eq!(fz3.value, Flag::Known(true));
    assert_eq!(fz3.matches[0].reference.as_deref(), Some("fz3-1"));
    assert_eq!(fz3.sources[0].dataset, "ea-flood-zones");
    assert!(fz3.not_loaded.contains(&"flood-risk-zone".to_string()));
    // Nothing heritage is loaded anywhere: not_checked, never false.
    assert!(matches!(
        inside.heritage["conservation_area"].value,
        Flag::NotChecked(_)
    ));

    let outside = risk(&t.db, &cache, uprn(12)).await.unwrap();
    assert_eq!(outside.flood.zone, "1");
    assert_eq!(
        outside.flood.flags["in_flood_zone_3"].value,
        Flag::Known(false)
    );

    // Outside the polygon in an authority the layer is not loaded for: not checked, never
    // false (a matching feature is true wherever it is loaded: see the crate's text).
    let elsewhere = risk(&t.db, &cache, uprn(13)).await.unwrap();
    assert_eq!(elsewhere.flood.zone, "not_checked");
    assert!(matches!(
        elsewhere.flood.flags["in_flood_zone_3"].value,
        Flag::NotChecked(_)
    ));

    let nowhere = risk(&t.db, &cache, uprn(14)).await.unwrap();
    assert!(matches!(
        nowhere.flood.flags["in_flood_zone_3"].value,
        Flag::NotChecked(_)
    ));
    assert!(nowhere.flood.flags["in_flood_zone_3"].reason.is_some());

    assert!(matches!(
        risk(&t.db, &cache, uprn(99)).await,
        Err(terrace_store::LookupError::NotFound(_))
    ));
}

/// The cache holds the layers until a load bumps the version.
#[tokio::test]
async fn the_cache_follows_the_layers_version() {
    let t = TestDb::new().await;
    address::replace_addresses(&t.db, vec![place(21, Some((50.0, 50.0)), "E06000001")])
        .await
        .unwrap();
    replace_coverage(&t.db, vec![covered("conservation-area", "E06000001")])
        .await
        .unwrap();
    meta::bump(&t.db, meta::Key::SpatialLayersVersion, "test")
        .await
        .unwrap();
    let cache = LayerCache::default();
    let before = risk(&t.db, &cache, uprn(21)).await.unwrap();
    assert_eq!(
        before.heritage["conservation_area"].value,
        Flag::Known(false)
    );
    replace_features(
        &t.db,
        vec![square(
            "conservation-area",
            "ca-1",
            "conservation-area",
            0.0,
            0.0,
            100.0,
        )],
    )
    .await
    .unwrap();
    let held = risk(&t.db, &cache, uprn(21)).await.unwrap();
    assert_eq!(held.heritage["conservation_area"].value, Flag::Known(false));
    meta::bump(&t.db, meta::Key::SpatialLayersVersion, "test")
        .await
        .unwrap();
    let after = risk(&t.db, &cache, uprn(21)).await.unwrap();
    assert_eq!(after.heritage["conservation_area"].value, Flag::Known(true));
}
