//! The areas family's functions over a test store (no HTTP): postcodes and area names written
//! to the store, then `resolve` and `reverse_geocode` read through the area index the gateway
//! uses. The gateway's tests keep the contract (status, price, shape); these keep the functions.

use super::*;
use chrono::{NaiveDate, NaiveDateTime};
use terrace_store::address::{self, PostcodeRow};
use terrace_store::areas::{self as store_areas, AreaNameRow};
use terrace_store::testing::{TestDb, postcode_row};

const LAD: &str = "E07000041";

fn now() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .expect("a date")
}

/// A postcode of Exeter at a position (no grid reference: the index converts the latitude and
/// longitude).
fn postcode(pc: &str, lat: f64, lon: f64) -> PostcodeRow {
    PostcodeRow {
        lat: Some(lat),
        lon: Some(lon),
        country_code: Some("E92000001".into()),
        ..postcode_row(pc, LAD)
    }
}

async fn world() -> (TestDb, AreasCtx) {
    let t = TestDb::new().await;
    address::replace_postcodes(
        &t.db,
        vec![
            postcode("EX1 1AA", 50.7236, -3.5275),
            postcode("EX1 2BB", 50.7255, -3.5191),
            postcode("EX2 4CC", 50.7155, -3.5344),
        ],
    )
    .await
    .expect("postcodes written");
    store_areas::replace_area_names(
        &t.db,
        vec![AreaNameRow {
            code: LAD.into(),
            kind: "lad".into(),
            name: "Exeter".into(),
            source: "test".into(),
            updated_at: now(),
        }],
    )
    .await
    .expect("names written");
    let ctx = AreasCtx::new(t.db.clone());
    (t, ctx)
}

async fn ask(ctx: &AreasCtx, q: &str) -> Result<AreaResolved, AreasError> {
    resolve(
        ctx,
        &AreaQuery {
            query: q.to_string(),
        },
    )
    .await
}

#[tokio::test]
async fn postcodes_districts_and_authorities_resolve_from_the_loaded_directory() {
    let (_t, ctx) = world().await;
    // A postcode in any form: the unit, with its authority among its parents.
    let r = ask(&ctx, "ex11aa").await.expect("a postcode");
    assert_eq!(
        (r.status, r.matched_as.as_str()),
        (ResolveStatus::Resolved, "postcode")
    );
    let a = r.area.expect("an area");
    assert_eq!((a.kind, a.area_id.code()), (AreaKind::Unit, "EX1 1AA"));
    assert!(
        a.parents
            .iter()
            .any(|p| p.kind == AreaKind::Lad && p.area_id.code() == LAD),
        "{:?}",
        a.parents
    );
    // The authority by GSS code and by name, named as loaded, at its postcodes' mean position.
    for (q, how) in [(LAD, "gss_code"), ("Exeter", "name")] {
        let r = ask(&ctx, q).await.expect("the authority");
        assert_eq!(r.matched_as, how, "{q}");
        let a = r.area.expect("an area");
        assert_eq!((a.kind, a.area_id.code()), (AreaKind::Lad, LAD), "{q}");
        assert_eq!(a.name.as_deref(), Some("Exeter"));
        let c = a.centroid.expect("a centroid");
        assert!(
            (c.lat - (50.7236 + 50.7255 + 50.7155) / 3.0).abs() < 1e-4,
            "{c:?}"
        );
    }
    // A district.
    let a = ask(&ctx, "EX1").await.expect("a district").area.unwrap();
    assert_eq!((a.kind, a.area_id.code()), (AreaKind::District, "EX1"));
    // A postcode that is not loaded is not found, never the nearest one.
    assert!(matches!(
        ask(&ctx, "EX9 9ZZ").await,
        Err(AreasError::NotFound(_))
    ));
}

#[tokio::test]
async fn a_point_reverse_geocodes_to_its_nearest_postcode_and_no_authority_without_boundaries() {
    let (_t, ctx) = world().await;
    // A few metres from EX1 2BB.
    let r = reverse_geocode(&ctx, 50.72552, -3.51905, AreaKind::Unit)
        .await
        .expect("a unit");
    assert_eq!(r.nearest_postcode.postcode, "EX1 2BB");
    assert!(r.nearest_postcode.distance_m < 10.0, "{r:?}");
    assert_eq!(r.area.area_id.code(), "EX1 2BB");
    // An authority is read from its boundary: with none loaded the answer says so, and never
    // guesses from the nearest postcode's authority.
    match reverse_geocode(&ctx, 50.72552, -3.51905, AreaKind::Lad).await {
        Err(AreasError::NotFound(why)) => {
            assert!(why.contains("no lad boundaries are loaded"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    // Outside Great Britain: not found.
    assert!(matches!(
        reverse_geocode(&ctx, 48.85, 2.35, AreaKind::Unit).await,
        Err(AreasError::NotFound(_))
    ));
}
