//! The auctions family's functions over a template store (no HTTP): `not_available` without a
//! feed, the quarterly statistics' separate populations, and distressed properties (offered
//! repeatedly, never sold). The gateway's tests keep the contract on the fixture world.

use chrono::{NaiveDate, NaiveDateTime};
use terrace_auctions::{
    Answer, CoverageMemo, DistressedQuery, NO_FEED, StatsQuery, distressed, stats,
};
use terrace_store::auctions::{LotRow, replace_lots};
use terrace_store::testing::TestDb;

fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).expect("a date")
}

fn now() -> NaiveDateTime {
    day(2026, 1, 1).and_hms_opt(0, 0, 0).expect("a time")
}

/// A lot of the house `H` at `date`: guide `(low, high)`, `outcome`, hammer price, property key.
fn lot(
    n: u32,
    date: NaiveDate,
    guide: (Option<i64>, Option<i64>),
    outcome: &str,
    hammer: Option<i64>,
    property: &str,
) -> LotRow {
    LotRow {
        lot_key: format!("H|{date}|{n}"),
        auction_house: "H".into(),
        auction_date: date,
        lot_number: n.to_string(),
        address: format!("{property}, EXETER"),
        postcode: Some("EX1 1AA".into()),
        district: Some("EX1".into()),
        lot_type: "residential".into(),
        tenure: Some("freehold".into()),
        lease_years_remaining: None,
        vacant: Some(true),
        rent_passing_pa: None,
        guide_low: guide.0,
        guide_high: guide.1,
        outcome: outcome.into(),
        hammer_price: hammer,
        net_initial_yield_pct: None,
        source_url: None,
        description: None,
        uprn: None,
        match_method: None,
        match_score: None,
        address_key: property.to_ascii_uppercase(),
        property_key: Some(property.to_string()),
        source: "test".into(),
        updated_at: now(),
    }
}

fn stats_query() -> StatsQuery {
    StatsQuery {
        postcode_district: None,
        quarter_from: None,
        quarter_to: None,
        is_commercial: None,
        limit: 100,
    }
}

#[tokio::test]
async fn without_a_feed_every_answer_is_not_available() {
    let t = TestDb::new().await;
    let s = stats(&t.db, &CoverageMemo::default(), &stats_query())
        .await
        .unwrap();
    assert_eq!(s.status, Answer::NotAvailable);
    assert_eq!(s.reason.as_deref(), Some(NO_FEED));
    assert!(s.data.is_none());
    let d = distressed(
        &t.db,
        &DistressedQuery {
            postcode_district: None,
            min_offers: 2,
            limit: 10,
        },
    )
    .await
    .unwrap();
    assert_eq!(d.status, Answer::NotAvailable);
    assert!(d.data.is_none());
}

/// One quarter: a range guide sold with its price published, a guide sold with the price not
/// disclosed, an unsold lot and a withdrawn one. Guides and prices are separate populations,
/// each with its own n; a withdrawn lot was not offered.
#[tokio::test]
async fn stats_keep_guides_and_prices_apart() {
    let t = TestDb::new().await;
    let d = day(2025, 2, 12);
    replace_lots(
        &t.db,
        vec![
            lot(
                1,
                d,
                (Some(100_000), Some(120_000)),
                "sold",
                Some(130_000),
                "1 A ROAD",
            ),
            lot(2, d, (Some(200_000), None), "sold", None, "2 A ROAD"),
            lot(3, d, (Some(90_000), None), "unsold", None, "3 A ROAD"),
            lot(4, d, (Some(50_000), None), "withdrawn", None, "4 A ROAD"),
        ],
    )
    .await
    .unwrap();
    let s = stats(&t.db, &CoverageMemo::default(), &stats_query())
        .await
        .unwrap();
    assert_eq!(s.status, Answer::Ok);
    let rows = s.data.unwrap();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r.postcode_district, "EX1");
    assert_eq!(r.quarter_start, day(2025, 1, 1));
    assert_eq!((r.lots, r.offered, r.sold, r.withdrawn), (4, 3, 2, 1));
    assert_eq!(r.sale_rate.map(|x| (x * 1000.0).round()), Some(667.0));
    // Guides: 110,000 (the range's midpoint), 200,000, 90,000 and 50,000.
    assert_eq!(r.guide_gbp.n, 4);
    assert_eq!(r.guide_gbp.mean, Some(112_500.0));
    // Prices: the one published.
    assert_eq!(r.achieved_gbp.n, 1);
    assert_eq!(r.achieved_gbp.median, Some(130_000.0));
    assert_eq!(r.n_guide_and_achieved, 1);
    assert!(
        !r.comparable,
        "one lot with both figures is too few to compare"
    );
    assert_eq!(r.median_achieved_over_guide, None);
}

/// A property offered three times and never sold is distressed; one offered twice and sold
/// at the second is not; one offered once is not.
#[tokio::test]
async fn distressed_properties_were_offered_repeatedly_and_never_sold() {
    let t = TestDb::new().await;
    replace_lots(
        &t.db,
        vec![
            lot(
                1,
                day(2024, 3, 1),
                (Some(150_000), None),
                "unsold",
                None,
                "9 B ROAD",
            ),
            lot(
                2,
                day(2024, 9, 1),
                (Some(140_000), None),
                "unsold",
                None,
                "9 B ROAD",
            ),
            lot(
                3,
                day(2025, 3, 1),
                (Some(120_000), None),
                "withdrawn",
                None,
                "9 B ROAD",
            ),
            lot(
                4,
                day(2024, 3, 1),
                (Some(80_000), None),
                "unsold",
                None,
                "5 C ROAD",
            ),
            lot(
                5,
                day(2024, 9, 1),
                (Some(75_000), None),
                "sold",
                None,
                "5 C ROAD",
            ),
            lot(
                6,
                day(2025, 3, 1),
                (Some(60_000), None),
                "unsold",
                None,
                "7 D ROAD",
            ),
        ],
    )
    .await
    .unwrap();
    let d = distressed(
        &t.db,
        &DistressedQuery {
            postcode_district: Some("EX1".into()),
            min_offers: 2,
            limit: 10,
        },
    )
    .await
    .unwrap();
    let data = d.data.unwrap();
    assert_eq!(data.len(), 1);
    let p = &data[0];
    assert_eq!(p.property_id, "9 B ROAD");
    assert_eq!(p.offers_n, 3);
    assert_eq!(
        p.offers.iter().map(|o| o.auction_date).collect::<Vec<_>>(),
        vec![day(2024, 3, 1), day(2024, 9, 1), day(2025, 3, 1)]
    );
    // 120,000 over 150,000, minus 1.
    assert_eq!(p.guide_change_pct, Some(-20.0));
}
