//! The commercial capital index's pair sources and shrinkage, on whichever backend the tests
//! run (`TERRACE_TEST_DATABASE_URL` for PostgreSQL, else SQLite):
//! - pairs from Price Paid category B, from a title's successive CCOD observations and from a
//!   sold auction lot, each counted under its source, with the same transfer counted once;
//! - a thin authority series moves toward the national series, a thick one barely.

use chrono::{NaiveDate, NaiveDateTime};
use terrace_commercial::capital_index::{self, METHOD_REPEAT_SALES, METHOD_SHRUNK, PairSource};
use terrace_commercial::sector::{AreaScope, Sector};
use terrace_commercial::{Block, CapitalIndex};
use terrace_store::address;
use terrace_store::auctions::{self, LotRow};
use terrace_store::rating::{self, RatingEntryRow, UarnLinkRow};
use terrace_store::sales::{self, PricePaidRow};
use terrace_store::testing::{TestDb, postcode_row};
use terrace_store::titles::{self, PriceObservationRow, TitleRow};

fn now() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 12, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .expect("now")
}

fn d(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("date")
}

/// A category B sale of type O: by UPRN when given, else by postcode and PAON.
fn sale(id: &str, uprn: Option<i64>, pc: &str, paon: &str, date: &str, price: i64) -> PricePaidRow {
    PricePaidRow {
        transaction_id: id.into(),
        price,
        date: d(date),
        postcode: Some(pc.into()),
        property_type: "O".into(),
        new_build: false,
        tenure: "F".into(),
        paon: Some(paon.into()),
        saon: None,
        street: Some("MARKET STREET".into()),
        locality: None,
        town: None,
        district: None,
        county: None,
        ppd_category: "B".into(),
        uprn,
        match_method: uprn.map(|_| "test".into()),
        match_score: None,
        source: "test".into(),
        updated_at: now(),
    }
}

/// UPRN `uprn` rated as an office (UARN 1000 + UPRN).
fn rated(uprn: i64) -> (UarnLinkRow, RatingEntryRow) {
    let uarn = 1000 + uprn;
    (
        UarnLinkRow {
            uarn,
            uprn,
            match_method: "test".into(),
            match_score: None,
            source: "test".into(),
            updated_at: now(),
        },
        RatingEntryRow {
            entry_key: format!("2026|{uarn}"),
            list_year: 2026,
            uarn,
            billing_authority: None,
            ba_reference: None,
            description_code: Some("CO".into()),
            description_text: Some("OFFICES AND PREMISES".into()),
            scat_code: None,
            firm_name: None,
            address: format!("{uprn} MARKET STREET"),
            postcode: Some("AA1 1AA".into()),
            rateable_value: Some(10_000),
            effective_date: d("2026-04-01"),
            source: "test".into(),
            updated_at: now(),
        },
    )
}

fn title(number: &str, uprn: i64, tenure: &str) -> TitleRow {
    TitleRow {
        title_number: number.into(),
        register: "ccod".into(),
        tenure: Some(tenure.into()),
        property_address: Some(format!("{uprn} MARKET STREET")),
        district: None,
        county: None,
        region: None,
        postcode: Some("AA1 1AA".into()),
        multiple_address: Some(false),
        price_paid: None,
        date_added: None,
        additional_proprietor: Some(false),
        proprietors_json: "[]".into(),
        file_month: Some("2024-07".into()),
        uprn: Some(uprn),
        match_method: Some("test".into()),
        match_score: None,
        source: "test".into(),
        updated_at: now(),
    }
}

fn obs(number: &str, date: &str, price: i64, month: &str) -> PriceObservationRow {
    PriceObservationRow {
        obs_key: titles::price_observation_key(number, d(date), price),
        title_number: number.into(),
        register: "ccod".into(),
        date_added: d(date),
        price_paid: price,
        first_seen_month: Some(month.into()),
        tenure: Some("Freehold".into()),
        proprietorship_category: None,
        source: "test".into(),
        updated_at: now(),
    }
}

fn lot(n: u32, uprn: Option<i64>, date: &str, outcome: &str, price: Option<i64>) -> LotRow {
    LotRow {
        lot_key: format!("house|{date}|{n}"),
        auction_house: "house".into(),
        auction_date: d(date),
        lot_number: n.to_string(),
        address: "MARKET STREET".into(),
        postcode: Some("AA1 1AA".into()),
        district: Some("AA1".into()),
        lot_type: "commercial".into(),
        tenure: Some("freehold".into()),
        lease_years_remaining: None,
        vacant: None,
        rent_passing_pa: None,
        guide_low: None,
        guide_high: None,
        outcome: outcome.into(),
        hammer_price: price,
        net_initial_yield_pct: None,
        source_url: None,
        description: None,
        uprn,
        match_method: uprn.map(|_| "feed".into()),
        match_score: None,
        address_key: format!("lot{n}"),
        property_key: None,
        source: "test".into(),
        updated_at: now(),
    }
}

fn counts(ix: &CapitalIndex) -> Vec<(String, i64)> {
    ix.provenance
        .pairs_by_source
        .iter()
        .map(|c| (c.source.clone(), c.pairs))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairs_come_from_price_paid_ccod_snapshots_and_auction_results() {
    let t = TestDb::new().await;
    let db = &t.db;
    address::replace_postcodes(db, vec![postcode_row("AA1 1AA", "E06000001")])
        .await
        .unwrap();
    let (links, entries): (Vec<_>, Vec<_>) = [1, 2, 3].map(rated).into_iter().unzip();
    rating::replace_links(db, links).await.unwrap();
    rating::replace_entries(db, entries).await.unwrap();
    // UPRN 1: three category B sales (two Price Paid pairs), the last the completion of a lot.
    sales::replace_price_paid(
        db,
        vec![
            sale("{A}", Some(1), "AA1 1AA", "1", "2015-01-10", 100_000),
            sale("{B}", Some(1), "AA1 1AA", "1", "2018-01-10", 120_000),
            sale("{C}", Some(1), "AA1 1AA", "1", "2019-10-15", 130_000),
        ],
    )
    .await
    .unwrap();
    titles::replace_titles(
        db,
        vec![
            // The same two transfers as the first Price Paid pair: counted once, as Price Paid.
            title("T1", 1, "Freehold"),
            // A CCOD pair of a rated property.
            title("T2", 2, "Freehold"),
            // One observation: the previous observation of a lot.
            title("T4", 3, "Freehold"),
            // Not rated: no pair.
            title("T9", 99, "Freehold"),
        ],
    )
    .await
    .unwrap();
    let added = titles::record_price_observations(
        db,
        vec![
            obs("T1", "2015-01-12", 100_000, "2016-01"),
            obs("T1", "2018-01-08", 120_000, "2018-07"),
            obs("T2", "2010-05-01", 200_000, "2016-01"),
            obs("T2", "2019-06-01", 260_000, "2019-07"),
            obs("T4", "2016-02-01", 250_000, "2016-07"),
            obs("T9", "2012-02-01", 50_000, "2016-01"),
            obs("T9", "2017-02-01", 60_000, "2017-07"),
        ],
    )
    .await
    .unwrap();
    assert_eq!(added, 7);
    auctions::replace_lots(
        db,
        vec![
            // Sold, paired with T4's observation.
            lot(1, Some(3), "2021-03-01", "sold", Some(300_000)),
            // Sold and completed as Price Paid {C}: the Price Paid pair counts it.
            lot(2, Some(1), "2019-09-01", "sold", Some(130_000)),
            // Unsold, undisclosed, unlinked: nothing.
            lot(3, Some(2), "2020-03-01", "unsold", None),
            lot(4, Some(2), "2020-06-01", "sold", None),
            lot(5, None, "2020-06-01", "sold", Some(1)),
        ],
    )
    .await
    .unwrap();

    let r = capital_index::build(db, now()).await.unwrap();
    assert_eq!(r.sales, 3);
    assert_eq!(r.pairs, 4, "{r:?}");
    assert_eq!(
        r.pairs_by_source,
        [
            (PairSource::PricePaid, 2),
            (PairSource::CcodSnapshots, 1),
            (PairSource::AuctionResults, 1),
        ]
    );
    assert_eq!(r.duplicates_dropped, 2, "{r:?}");
    assert!(
        r.summary().contains("hmlr_ccod_snapshots 1"),
        "{}",
        r.summary()
    );

    // Too few pairs for a series, and the answer still says where its pairs come from.
    let ix = capital_index::capital_index(db, AreaScope::national(), Sector::All, None, None)
        .await
        .unwrap();
    assert!(matches!(ix.series, Block::NotAvailable(_)));
    assert_eq!(
        counts(&ix),
        [
            ("hmlr_price_paid_category_b_other".to_string(), 2),
            ("hmlr_ccod_snapshots".to_string(), 1),
            ("auction_results".to_string(), 1),
        ]
    );
    assert_eq!(
        ix.provenance.pair_sources,
        [
            "hmlr_price_paid_category_b_other",
            "hmlr_ccod_snapshots",
            "auction_results"
        ]
    );
    assert_eq!(ix.provenance.method, METHOD_REPEAT_SALES);
    // Every pair is of a rated office.
    let office =
        capital_index::capital_index(db, AreaScope::national(), Sector::Office, None, None)
            .await
            .unwrap();
    assert_eq!(counts(&office), counts(&ix));

    // Building again changes nothing.
    let again = capital_index::build(db, now()).await.unwrap();
    assert_eq!(again, r);
}

/// A deterministic uniform draw in [-1, 1).
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    fn below(&mut self, n: u32) -> u32 {
        (((self.next() + 1.0) / 2.0) * f64::from(n)).floor() as u32 % n
    }
}

/// The first day of the `q`th quarter from 2014Q1, plus 14 days.
fn quarter_date(q: u32) -> String {
    format!("{}-{:02}-15", 2014 + q / 4, 3 * (q % 4) + 1)
}

const THICK: &str = "E06000010";
const THIN: &str = "E06000020";
/// Quarterly log growth: national and thick authority, and the thin authority's own.
const GROWTH: f64 = 0.02;
const THIN_GROWTH: f64 = 0.05;

fn local(code: &str) -> AreaScope {
    AreaScope {
        kind: "local_authority",
        lad_code: Some(code.into()),
        name: None,
    }
}

fn levels(ix: &CapitalIndex) -> Vec<(String, f64, Option<f64>)> {
    match &ix.series {
        Block::Available(s) => s
            .points
            .iter()
            .filter_map(|p| Some((p.quarter.clone(), p.index?, p.own_weight)))
            .collect(),
        Block::NotAvailable(u) => panic!("not available: {u:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thin_authority_moves_toward_national_and_a_thick_one_barely() {
    let t = TestDb::new().await;
    let db = &t.db;
    address::replace_postcodes(
        db,
        vec![
            postcode_row("TK1 1AA", THICK),
            postcode_row("TN1 1AA", THIN),
        ],
    )
    .await
    .unwrap();
    let mut rng = Draw(7);
    let mut rows = Vec::new();
    // The thick authority: 800 properties sold twice between 2014Q1 and 2020Q4 on the national
    // path, with little noise.
    for i in 0..800u32 {
        let q1 = rng.below(24);
        let q2 = q1 + 2 + rng.below(26 - q1);
        for (k, q) in [q1, q2].into_iter().enumerate() {
            let price = 100_000.0 * (GROWTH * f64::from(q) + 0.02 * rng.next()).exp();
            rows.push(sale(
                &format!("{{K{i}-{k}}}"),
                None,
                "TK1 1AA",
                &i.to_string(),
                &quarter_date(q),
                price.round() as i64,
            ));
        }
    }
    // The thin authority: 12 properties bought in 2014Q1 and sold in 2018, three a quarter, on a
    // steeper path of its own, with much noise.
    for i in 0..12u32 {
        let q2 = 16 + i / 3;
        for (k, q) in [0, q2].into_iter().enumerate() {
            let price = 100_000.0 * (THIN_GROWTH * f64::from(q) + 0.25 * rng.next()).exp();
            rows.push(sale(
                &format!("{{N{i}-{k}}}"),
                None,
                "TN1 1AA",
                &i.to_string(),
                &quarter_date(q),
                price.round() as i64,
            ));
        }
    }
    sales::replace_price_paid(db, rows).await.unwrap();
    let r = capital_index::build(db, now()).await.unwrap();
    assert_eq!(r.pairs_by_source, [(PairSource::PricePaid, 812)], "{r:?}");

    let national = capital_index::capital_index(db, AreaScope::national(), Sector::All, None, None)
        .await
        .unwrap();
    assert_eq!(national.provenance.method, METHOD_REPEAT_SALES);
    let thick = capital_index::capital_index(db, local(THICK), Sector::All, None, None)
        .await
        .unwrap();
    let thin = capital_index::capital_index(db, local(THIN), Sector::All, None, None)
        .await
        .unwrap();
    assert_eq!(thick.provenance.method, METHOD_SHRUNK);
    assert_eq!(thin.provenance.method, METHOD_SHRUNK);
    assert!(
        thin.provenance
            .method_detail
            .contains("shrunk toward the national")
    );

    // The thick authority keeps its own levels: within 2% of its planted path everywhere, and
    // its own estimate carries most of the weight.
    let thick_levels = levels(&thick);
    assert!(thick_levels.len() > 20, "{thick_levels:?}");
    for (q, level, _) in &thick_levels {
        let n = quarters_since_2014(q);
        let err = (level / 100.0).ln() - GROWTH * f64::from(n);
        assert!(err.abs() < 0.02, "{q}: {level} ({err})");
    }
    let mean_weight = |v: &[(String, f64, Option<f64>)]| {
        v.iter().filter_map(|(_, _, w)| *w).sum::<f64>() / v.len() as f64
    };
    let thick_w = mean_weight(&thick_levels);

    // The thin authority's 2018 levels are pulled from its own steep path toward national.
    let thin_levels = levels(&thin);
    assert_eq!(
        thin_levels
            .iter()
            .map(|(q, _, _)| q.as_str())
            .collect::<Vec<_>>(),
        ["2014Q1", "2018Q1", "2018Q2", "2018Q3", "2018Q4"],
        "{thin_levels:?}"
    );
    let thin_w = mean_weight(&thin_levels[1..]);
    assert!(thin_w < thick_w, "thin {thin_w}, thick {thick_w}");
    for (q, level, _) in &thin_levels[1..] {
        let n = f64::from(quarters_since_2014(q));
        let own_path = THIN_GROWTH * n;
        let national_path = GROWTH * n;
        let l = (level / 100.0).ln();
        assert!(
            l < own_path - 0.25 * (own_path - national_path),
            "{q}: {level} not pulled toward national ({own_path} own, {national_path} national)"
        );
        assert!(l > national_path - 0.1, "{q}: {level} below national");
    }
}

fn quarters_since_2014(q: &str) -> u32 {
    let (y, n) = capital_index::parse_quarter(q).expect("quarter");
    u32::try_from(y - 2014).expect("after 2014") * 4 + (n - 1)
}
