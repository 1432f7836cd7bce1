//! The address family's functions over a template store (no HTTP): lookups by UPRN and by
//! postcode, resolve and autocomplete from the in-memory index, and the index and the record
//! cache following the register when a load bumps its version. The gateway's tests keep the
//! contract (status, price, shape); these keep the functions.

use chrono::{NaiveDate, NaiveDateTime};
use std::sync::Arc;
use terrace_address::{
    AddressCtx, AddressError, IndexHandle, NO_REGISTER, ResolveInput, autocomplete, by_postcode,
    by_uprn, resolve,
};
use terrace_core::{Postcode, Uprn};
use terrace_store::address::{self, AddressRow, PostcodeRow};
use terrace_store::meta;
use terrace_store::testing::{TestDb, postcode_row};

fn now() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .expect("a date")
}

fn row(uprn: i64, saon: Option<&str>, paon: &str, street: &str, pc: &str) -> AddressRow {
    AddressRow {
        uprn,
        parent_uprn: None,
        class: Some(if saon.is_some() { "RD06" } else { "RD04" }.into()),
        saon: saon.map(str::to_string),
        paon: Some(paon.into()),
        street: Some(street.into()),
        locality: None,
        town: Some("EXETER".into()),
        postcode: Some(pc.into()),
        x: Some(292_000.0),
        y: Some(92_500.0),
        lat: Some(50.72),
        lon: Some(-3.53),
        lad_code: Some("E07000041".into()),
        lsoa_code: None,
        address_source: Some("test".into()),
        position_source: Some("test".into()),
        updated_at: now(),
    }
}

fn postcode(pc: &str) -> PostcodeRow {
    PostcodeRow {
        easting: Some(292_000.0),
        northing: Some(92_500.0),
        lat: Some(50.72),
        lon: Some(-3.53),
        country_code: Some("E92000001".into()),
        quality: Some(1),
        updated_at: now(),
        ..postcode_row(pc, "E07000041")
    }
}

/// A small register: a terrace on one street, flats 2 and 10 in number 4, and a postcode the
/// directory knows that holds no address.
async fn world() -> (TestDb, AddressCtx) {
    let t = TestDb::new().await;
    let rows = vec![
        row(1001, None, "10", "HIGH STREET", "EX1 1AA"),
        row(1002, None, "2", "HIGH STREET", "EX1 1AA"),
        row(1003, Some("FLAT 10"), "4", "HIGH STREET", "EX1 1AA"),
        row(1004, Some("FLAT 2"), "4", "HIGH STREET", "EX1 1AA"),
        row(1005, None, "7", "MILL LANE", "EX2 4BB"),
    ];
    address::replace_addresses(&t.db, rows)
        .await
        .expect("addresses");
    address::replace_postcodes(&t.db, vec![postcode("EX1 1AA"), postcode("EX4 9ZZ")])
        .await
        .expect("postcodes");
    meta::bump(&t.db, meta::Key::AddressRegisterVersion, "test")
        .await
        .expect("bump");
    let ctx = AddressCtx {
        db: t.db.clone(),
        index: Arc::new(IndexHandle::default()),
    };
    assert!(ctx.index.refresh(&t.db).await.expect("refresh"));
    (t, ctx)
}

fn pc(s: &str) -> Postcode {
    Postcode::parse(s).expect("a postcode")
}

#[tokio::test]
async fn by_uprn_reads_the_record_and_says_not_found() {
    let (_t, ctx) = world().await;
    let r: serde_json::Value = serde_json::from_str(
        by_uprn(&ctx, Uprn::new(1004).unwrap())
            .await
            .unwrap()
            .text(),
    )
    .unwrap();
    assert_eq!(r["uprn"], 1004);
    assert_eq!(r["saon"], "FLAT 2");
    assert_eq!(r["address"], "Flat 2, 4 High Street, Exeter, EX1 1AA");
    assert_eq!(r["local_authority"], "E07000041");
    match by_uprn(&ctx, Uprn::new(999).unwrap()).await {
        Err(AddressError::NotFound(what)) => assert_eq!(what, "UPRN 999"),
        other => panic!(
            "expected not found, got {:?}",
            other.map(|t| t.text().to_string())
        ),
    }
}

#[tokio::test]
async fn by_postcode_orders_numbers_naturally_and_tells_an_empty_postcode_from_an_unknown_one() {
    let (_t, ctx) = world().await;
    let r: serde_json::Value =
        serde_json::from_str(by_postcode(&ctx, &pc("ex11aa")).await.unwrap().text()).unwrap();
    let uprns: Vec<i64> = r["data"]["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["uprn"].as_i64().unwrap())
        .collect();
    // 2, then the flats of 4 (flat 2 before flat 10), then 10: numbers, not text.
    assert_eq!(uprns, vec![1002, 1004, 1003, 1001]);
    let empty: serde_json::Value =
        serde_json::from_str(by_postcode(&ctx, &pc("EX4 9ZZ")).await.unwrap().text()).unwrap();
    assert_eq!(empty["data"]["matches"].as_array().unwrap().len(), 0);
    assert!(matches!(
        by_postcode(&ctx, &pc("EX9 9XX")).await,
        Err(AddressError::NotFound(w)) if w == "postcode EX9 9XX"
    ));
}

#[tokio::test]
async fn resolve_finds_the_flat_and_autocomplete_completes_the_street() {
    let (_t, ctx) = world().await;
    let input = ResolveInput {
        address: Some("Flat 10, 4 High St, Exeter EX1 1AA".into()),
        ..ResolveInput::default()
    };
    let r = resolve(&ctx, &input).await.unwrap();
    assert_eq!(r.candidates[0].record.uprn, 1003);
    assert!(r.confident, "an exact flat with its postcode is confident");
    let a = autocomplete(&ctx, "7 mill", 5);
    assert_eq!(
        a.results.first().map(|s| s.postcode.clone()),
        Some(Some("EX2 4BB".into()))
    );
}

#[tokio::test]
async fn an_empty_register_is_not_found_for_resolve_and_postcodes() {
    let t = TestDb::new().await;
    let ctx = AddressCtx {
        db: t.db.clone(),
        index: Arc::new(IndexHandle::default()),
    };
    ctx.index.refresh(&t.db).await.unwrap();
    let input = ResolveInput {
        address: Some("10 High Street".into()),
        ..ResolveInput::default()
    };
    assert!(
        matches!(resolve(&ctx, &input).await, Err(AddressError::NotFound(w)) if w == NO_REGISTER)
    );
    assert!(matches!(
        by_postcode(&ctx, &pc("EX1 1AA")).await,
        Err(AddressError::NotFound(w)) if w == NO_REGISTER
    ));
}

/// A record read once is held; a load that changes it and bumps the register version is seen
/// after the next refresh (the cache is emptied with the index swap), not before.
#[tokio::test]
async fn the_record_cache_follows_the_register_version() {
    let (t, ctx) = world().await;
    let uprn = Uprn::new(1005).unwrap();
    assert!(
        by_uprn(&ctx, uprn)
            .await
            .unwrap()
            .text()
            .contains("MILL LANE")
    );
    address::replace_addresses(&t.db, vec![row(1005, None, "7", "MILLER LANE", "EX2 4BB")])
        .await
        .unwrap();
    assert!(
        by_uprn(&ctx, uprn)
            .await
            .unwrap()
            .text()
            .contains("\"MILL LANE\""),
        "held until the version changes"
    );
    assert!(
        !ctx.index.refresh(&t.db).await.unwrap(),
        "no bump, no rebuild"
    );
    meta::bump(&t.db, meta::Key::AddressRegisterVersion, "test")
        .await
        .unwrap();
    assert!(ctx.index.refresh(&t.db).await.unwrap());
    assert!(
        by_uprn(&ctx, uprn)
            .await
            .unwrap()
            .text()
            .contains("MILLER LANE")
    );
}
