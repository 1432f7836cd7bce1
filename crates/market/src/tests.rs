//! The market family's functions over a test store (no HTTP): Price Paid rows simulated from a
//! known true index are written to the store, the market build runs, and the volume series and
//! the published index are read back through the same functions the gateway calls. The
//! gateway's tests keep the contract (status, price, shape); these keep the functions.

use crate::MarketError;
use crate::build::build;
use crate::cache::MarketCache;
use crate::series::{IndexGeo, index_series};
use crate::volume::{VolumeQuery, volume_series};
use chrono::{NaiveDate, NaiveDateTime};
use std::collections::BTreeMap;
use terrace_analytics::{Month, SimSpec, SplitMix64, cyclical_log_index, simulate_sales};
use terrace_store::address::{self, PostcodeRow};
use terrace_store::sales::{self, PricePaidRow};
use terrace_store::testing::{TestDb, postcode_row};

const LAD: &str = "E06000099";
const UNITS: [&str; 4] = ["ZZ1 1AA", "ZZ1 2AB", "ZZ1 3AD", "ZZ1 4AE"];

fn now() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2024, 6, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .expect("a date")
}

fn postcode(pc: &str) -> PostcodeRow {
    PostcodeRow {
        country_code: Some("E92000001".into()),
        ..postcode_row(pc, LAD)
    }
}

/// One simulated district (ten years from 2013, about 45 sales a month over 2,500 dwellings,
/// every sale registered) written as Price Paid rows; returns the true level per month (base
/// the first month = 100) and the sales per completion month.
async fn plant(db: &terrace_store::Db) -> (BTreeMap<Month, f64>, BTreeMap<Month, i64>) {
    let first = Month::new(2013, 1).expect("a month");
    let mut draws = SplitMix64::new(41);
    let truth = cyclical_log_index(120, 0, 0.004, 0.006, 60.0, 0.0, &mut draws);
    let spec = SimSpec::typical(first, truth.clone(), 2_500, 45.0);
    let sims = simulate_sales(&spec, &mut draws);
    let mut per_month: BTreeMap<Month, i64> = BTreeMap::new();
    let rows: Vec<PricePaidRow> = sims
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let key = s.sale.property.expect("a simulated dwelling");
            *per_month.entry(s.sale.month).or_default() += 1;
            let first_day = NaiveDate::parse_from_str(&s.sale.month.first_day(), "%Y-%m-%d")
                .expect("a month's first day");
            PricePaidRow {
                transaction_id: format!("{{SIM-{i:08}}}"),
                price: s.sale.price,
                date: first_day + chrono::Days::new(u64::from(s.sale.day.clamp(1, 28)) - 1),
                postcode: Some(UNITS[(key % 4) as usize].into()),
                property_type: s.sale.property_type.code().into(),
                new_build: s.sale.new_build,
                tenure: s.sale.tenure.code().into(),
                paon: Some(key.to_string()),
                saon: None,
                street: Some("SIMULATED STREET".into()),
                locality: None,
                town: Some("TESTTOWN".into()),
                district: Some("TESTSHIRE".into()),
                county: Some("TESTSHIRE".into()),
                ppd_category: "A".into(),
                uprn: None,
                match_method: None,
                match_score: None,
                source: "test".into(),
                updated_at: now(),
            }
        })
        .collect();
    sales::replace_price_paid(db, rows)
        .await
        .expect("sales written");
    address::replace_postcodes(db, UNITS.iter().map(|p| postcode(p)).collect())
        .await
        .expect("postcodes written");
    let levels = truth
        .iter()
        .enumerate()
        .map(|(k, l)| (first.add_months(k as i32), 100.0 * l.exp()))
        .collect();
    (levels, per_month)
}

#[tokio::test]
async fn a_simulated_districts_volumes_are_its_sales_and_its_index_follows_the_truth() {
    let t = TestDb::new().await;
    let db = &t.db;
    let (truth, per_month) = plant(db).await;
    build(db, now(), &mut |_| {})
        .await
        .expect("the market build");
    let cache = MarketCache::default();
    let today = now().date();

    // Every month's transaction count is the number of sales completed in it.
    let (first, last) = (
        *per_month.keys().next().expect("sales"),
        *per_month.keys().last().expect("sales"),
    );
    let q = VolumeQuery {
        grain: "district",
        geography: "ZZ1".into(),
        given: ("district".into(), "ZZ1".into()),
        metrics: vec!["txn_count".into()],
        start: Some(first),
        end: Some(last),
    };
    let v = volume_series(db, &cache, &q, today).await.expect("volumes");
    let counts: Vec<i64> = v.data.series["txn_count"]
        .as_array()
        .expect("a count series")
        .iter()
        .map(|c| c.as_i64().unwrap_or(0))
        .collect();
    let want: Vec<i64> = v
        .data
        .months
        .iter()
        .map(|m| {
            let m = Month::parse(&m[..7]).expect("a month");
            per_month.get(&m).copied().unwrap_or(0)
        })
        .collect();
    assert_eq!(counts, want);
    assert_eq!(v.data.total_transactions, per_month.values().sum::<i64>());

    // The district and its authority publish an index; the district's settled levels follow
    // the true path's shape: the root mean square of ln(published / true) about its mean (the
    // bases differ) is within 0.02 (45 sales a month of 10% noise; measured 0.0095 for the
    // district when written; a series that missed the cycle errs by about 0.1).
    for geo in [
        IndexGeo::District("ZZ1".into()),
        IndexGeo::LocalAuthority(LAD.into()),
    ] {
        let s = index_series(db, &cache, &geo, None, None, today)
            .await
            .expect("a published index");
        let d: Vec<f64> = s
            .rows
            .iter()
            .filter(|r| !r.is_forecast)
            .filter_map(|r| {
                let m = Month::parse(&r.period).ok()?;
                Some((r.level? / truth.get(&m)?).ln())
            })
            .collect();
        assert!(d.len() >= 100, "{} settled months", d.len());
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        let shape = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / d.len() as f64).sqrt();
        assert!(shape < 0.02, "{geo:?}: shape error {shape:.4}");
    }

    // A district with no sales has no index: not found, never a made-up series.
    let none = index_series(
        db,
        &cache,
        &IndexGeo::District("ZZ9".into()),
        None,
        None,
        today,
    )
    .await;
    assert!(matches!(none, Err(MarketError::NotFound(_))), "{none:?}");
}
