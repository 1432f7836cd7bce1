//! `cargo xtask build` for the market family: monthly volumes per geography and the published
//! house price index per geography (with its decision and forecast), from the loaded registered
//! sales, the postcode directory and the address register. The maths is `terrace-analytics`;
//! this module only gathers the inputs and writes the derived tables.
//!
//! Geographies: `national:UK`; postcode areas (`area:EX`, parent national); postcode districts
//! (`district:EX1`, parent their area); local authorities (`la:E07000041`, parent national, from
//! the postcode directory's `lad_code` of the sale's postcode); counties as Price Paid writes them
//! (`county:DEVON`, volumes only).

use chrono::{Datelike, NaiveDateTime};
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use terrace_analytics as an;
use terrace_core::Postcode;
use terrace_store::Db;
use terrace_store::market::{self as mk, GeographyRow, IndexPointRow, VolumeRow};
use terrace_store::{address, meta};

use crate::MarketError;

/// The provenance of every derived market row.
pub const SOURCE: &str = "derived:hmlr_price_paid";
/// The base period of every published index (100 = January 2015, as the UK HPI).
pub const BASE_MONTH: (i32, u32) = (2015, 1);
/// The coverage of every published interval (`lo`, `hi`), estimated and forecast rows alike.
pub const FORECAST_COVERAGE: &str = "80%";
/// An answer whose `data_through` lies more than this many months before the clock's month
/// says it is stale.
pub const STALE_AFTER_MONTHS: i32 = 3;

// The build's `meta` stamps (typed keys; `terrace_store::meta` spells them).
pub const META_DATA_THROUGH: meta::Key = meta::Key::MarketDataThrough;
pub const META_PROVISIONAL_FROM: meta::Key = meta::Key::MarketProvisionalFrom;
pub const META_LAST_INGESTED_AT: meta::Key = meta::Key::MarketLastIngestedAt;
pub const META_BUILT_AT: meta::Key = meta::Key::MarketBuiltAt;
pub const META_BACKTEST: meta::Key = meta::Key::MarketBacktest;
/// Changes with every build (written last): servers drop their cached tables when it does.
pub const META_BUILD_ID: meta::Key = meta::Key::MarketBuildId;

/// What a build did, for the operator.
#[derive(Debug, Clone, Default)]
pub struct BuildReport {
    pub sales_read: usize,
    pub geographies: usize,
    pub indices: usize,
    pub volume_rows: usize,
    pub data_through: Option<String>,
    pub provisional_from: Option<String>,
    pub forecast_method: Option<&'static str>,
    /// The national backtest table (horizons 1..7, the method beside naive drift).
    pub backtest: Option<String>,
}

#[derive(Default)]
struct Acc {
    count: i64,
    a: i64,
    b: i64,
    new_build: i64,
    matched: i64,
    prices_a: Vec<i64>,
}

/// Geography keys interned to indices, with their kind and parent.
#[derive(Default)]
struct Geos {
    keys: Vec<String>,
    kinds: Vec<&'static str>,
    parents: Vec<Option<usize>>,
    /// kind -> code -> index (looked up by `&str`: no allocation once a code is known).
    by_kind: HashMap<&'static str, HashMap<String, usize>>,
}

impl Geos {
    fn id(&mut self, kind: &'static str, code: &str, parent: Option<usize>) -> usize {
        if let Some(i) = self.by_kind.get(kind).and_then(|m| m.get(code)) {
            return *i;
        }
        let i = self.keys.len();
        self.keys.push(format!("{kind}:{code}"));
        self.kinds.push(kind);
        self.parents.push(parent);
        self.by_kind
            .entry(kind)
            .or_default()
            .insert(code.to_string(), i);
        i
    }
}

fn month_of(d: chrono::NaiveDate) -> Option<an::Month> {
    an::Month::new(d.year(), d.month())
}

/// The dwelling a sale is of: its UPRN, else its normalised address (postcode, SAON, PAON and
/// street, trimmed and upper-cased), hashed without allocating.
fn dwelling_key(s: &mk::MarketSaleRow) -> u64 {
    let mut h = DefaultHasher::new();
    match s.uprn {
        Some(u) => ("uprn", u).hash(&mut h),
        None => {
            "addr".hash(&mut h);
            for v in [&s.postcode, &s.saon, &s.paon, &s.street] {
                for b in v.as_deref().unwrap_or("").trim().bytes() {
                    h.write_u8(b.to_ascii_uppercase());
                }
                h.write_u8(0xff);
            }
        }
    }
    h.finish()
}

/// Sales read per page by the build.
const SALES_PAGE: i64 = 50_000;

/// Stamps a new build id (nanoseconds since the epoch: two builds never share one).
async fn set_build_id(db: &Db) -> Result<(), MarketError> {
    let id = chrono::Utc::now()
        .timestamp_nanos_opt()
        .unwrap_or_default()
        .to_string();
    meta::set(db, META_BUILD_ID, &id).await?;
    Ok(())
}

/// Every category A sale once; each geography below the nation keeps the positions of its sales
/// (four bytes each instead of a copy per geography); the nation's are all of them.
struct SalesByGeo {
    all: Vec<an::Sale>,
    members: HashMap<usize, Vec<u32>>,
    national: usize,
}

impl SalesByGeo {
    fn push(&mut self, sale: an::Sale, below_nation: impl Iterator<Item = usize>) {
        let position = self.all.len() as u32;
        self.all.push(sale);
        for g in below_nation {
            self.members.entry(g).or_default().push(position);
        }
    }

    /// The sales of geography `g`: borrowed for the nation, gathered for the others.
    fn of(&self, g: usize) -> Cow<'_, [an::Sale]> {
        if g == self.national {
            return Cow::Borrowed(&self.all);
        }
        Cow::Owned(self.members.get(&g).map_or_else(Vec::new, |ix| {
            ix.iter().map(|i| self.all[*i as usize].clone()).collect()
        }))
    }
}

/// Builds the indices of `ids` (one rank: their parents are in `published`) on every core, in
/// the order of `ids`.
fn build_rank(
    ids: &[usize],
    geos: &Geos,
    sales: &SalesByGeo,
    published: &HashMap<usize, an::PublishedIndex>,
    grid: &an::IndexGrid,
    cfg: &an::IndexConfig,
) -> Vec<(usize, Result<an::PublishedIndex, an::AnalyticsError>)> {
    terrace_core::map_on_cores(ids, |g| {
        let g = *g;
        let parent = geos.parents[g].and_then(|p| {
            published
                .get(&p)
                .map(|pi| (geos.keys[p].as_str(), &pi.series))
        });
        (
            g,
            an::build_index(&geos.keys[g], &sales.of(g), grid, parent, cfg),
        )
    })
}

/// Builds the market tables from what is loaded; `now` stamps the rows.
pub async fn build(
    db: &Db,
    now: NaiveDateTime,
    say: &mut dyn FnMut(&str),
) -> Result<BuildReport, MarketError> {
    let started = std::time::Instant::now();
    // Postcode -> local authority, from the postcode directory.
    let mut lad_of: HashMap<String, String> = HashMap::new();
    let mut after = String::new();
    loop {
        let page = mk::postcodes_page(db, &after, 50_000).await?;
        let Some(last) = page.last() else { break };
        after = last.postcode.clone();
        for p in page {
            if let Some(l) = p.lad_code {
                lad_of.insert(p.postcode, l);
            }
        }
    }

    let mut geos = Geos::default();
    let national = geos.id("national", "UK", None);
    let mut volumes: HashMap<(usize, i32), Acc> = HashMap::new();
    let mut sales = SalesByGeo {
        all: Vec::new(),
        members: HashMap::new(),
        national,
    };
    let mut report = BuildReport::default();
    let mut last_ingested: Option<NaiveDateTime> = None;
    // The districts each area, county and the nation has sales in.
    let mut districts_in: HashMap<usize, std::collections::BTreeSet<usize>> = HashMap::new();
    // Area, district and local authority of each postcode as written, worked out once.
    let mut postcode_geos: HashMap<String, [Option<usize>; 3]> = HashMap::new();
    // The next page is read (on another thread) while this one is counted.
    let fetch = |after: String| {
        let db = db.clone();
        tokio::spawn(async move { mk::sales_page(&db, &after, SALES_PAGE).await })
    };
    let mut next = fetch(String::new());
    loop {
        let page = match next.await {
            Ok(page) => page?,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        };
        let Some(last) = page.last() else { break };
        next = fetch(last.transaction_id.clone());
        for s in page {
            report.sales_read += 1;
            last_ingested = last_ingested.max(Some(s.updated_at));
            let Some(month) = month_of(s.date) else {
                continue;
            };
            // [national, area, district, local authority]
            let mut at = [Some(national), None, None, None];
            if let Some(raw) = s.postcode.as_deref() {
                let found = match postcode_geos.get(raw) {
                    Some(f) => *f,
                    None => {
                        let f = match Postcode::parse(raw) {
                            Ok(pc) => {
                                let area = geos.id("area", pc.area(), Some(national));
                                [
                                    Some(area),
                                    Some(geos.id("district", pc.outward(), Some(area))),
                                    lad_of
                                        .get(pc.as_str())
                                        .map(|l| geos.id("la", l, Some(national))),
                                ]
                            }
                            Err(_) => [None; 3],
                        };
                        postcode_geos.insert(raw.to_string(), f);
                        f
                    }
                };
                at[1..].copy_from_slice(&found);
            }
            let county = s.county.as_deref().map(str::trim).unwrap_or_default();
            let county_id = (!county.is_empty()).then(|| {
                if county.bytes().any(|b| b.is_ascii_lowercase()) {
                    geos.id("county", &county.to_ascii_uppercase(), None)
                } else {
                    geos.id("county", county, None)
                }
            });
            let category_a = s.ppd_category == "A";
            if let Some(d) = at[2] {
                for g in [Some(national), at[1], county_id].into_iter().flatten() {
                    districts_in.entry(g).or_default().insert(d);
                }
            }
            for g in at.into_iter().flatten().chain(county_id) {
                let acc = volumes.entry((g, month.ordinal())).or_default();
                acc.count += 1;
                if category_a {
                    acc.a += 1;
                    acc.prices_a.push(s.price);
                } else {
                    acc.b += 1;
                }
                acc.new_build += i64::from(s.new_build);
                acc.matched += i64::from(s.uprn.is_some());
            }
            if !category_a {
                continue;
            }
            let (Some(property_type), Some(tenure)) = (
                an::PropertyType::from_code(&s.property_type),
                an::Tenure::from_code(&s.tenure),
            ) else {
                continue;
            };
            let sale = an::Sale {
                property: Some(dwelling_key(&s)),
                month,
                day: s.date.day() as u8,
                price: s.price,
                property_type,
                tenure,
                new_build: s.new_build,
                floor_area_m2: None,
            };
            sales.push(sale, at[1..].iter().flatten().copied());
        }
        if report.sales_read % 1_000_000 < SALES_PAGE as usize {
            say(&format!("[market] {} sales read", report.sales_read));
        }
    }
    say(&format!("[market] {} sales read", report.sales_read));

    // Residential stock per district and local authority, from the register.
    let mut stock: HashMap<String, i64> = HashMap::new();
    let mut after = 0i64;
    loop {
        let page = address::addresses_page(db, after, 50_000).await?;
        let Some(last) = page.last() else { break };
        after = last.uprn;
        for a in page {
            let residential = a
                .class
                .as_deref()
                .is_some_and(|c| c.starts_with("RD") || c.starts_with("RH"));
            if !residential {
                continue;
            }
            if let Some(pc) = a.postcode.as_deref().and_then(|p| Postcode::parse(p).ok()) {
                *stock
                    .entry(format!("district:{}", pc.outward()))
                    .or_default() += 1;
            }
            if let Some(l) = &a.lad_code {
                *stock.entry(format!("la:{l}")).or_default() += 1;
            }
        }
    }

    let months: Vec<i32> = volumes.keys().map(|(_, m)| *m).collect();
    let (Some(first), Some(through)) = (months.iter().min(), months.iter().max()) else {
        mk::replace_market(db, Vec::new(), Vec::new(), Vec::new()).await?;
        for k in [META_DATA_THROUGH, META_PROVISIONAL_FROM, META_BACKTEST] {
            meta::set(db, k, "").await?;
        }
        set_build_id(db).await?;
        say("[market] no registered sales loaded: the market tables are empty");
        return Ok(report);
    };
    let first = an::Month::from_ordinal(*first);
    let through = an::Month::from_ordinal(*through);
    let base = an::Month::new(BASE_MONTH.0, BASE_MONTH.1)
        .filter(|b| *b >= first && *b <= through)
        .unwrap_or(first);
    // Registration lags completion: the national counts say where they turn incomplete.
    let national_counts: Vec<(an::Month, u64)> = (0..=through.months_since(first))
        .map(|k| {
            let m = first.add_months(k);
            let n = volumes.get(&(national, m.ordinal())).map_or(0, |a| a.count);
            (m, n as u64)
        })
        .collect();
    let provisional_from = an::provisional_from_counts(&national_counts, through);
    // The published series stop at the last settled month: provisional months are covered by
    // the forecast, never estimated from their incomplete counts.
    let settled_end = provisional_from
        .map(|p| p.add_months(-1))
        .filter(|e| *e >= base)
        .unwrap_or(through);
    let grid = an::IndexGrid::new(an::Grain::Month, first, settled_end, base)?;

    // Indices: national, then areas and local authorities, then districts.
    let cfg = an::IndexConfig::default();
    let mut published: HashMap<usize, an::PublishedIndex> = HashMap::new();
    // Each rank's parents are built by the rank before it, so a rank's geographies are
    // independent and are built on every core.
    let rank = |k: &str| match k {
        "national" => 0,
        "area" | "la" => 1,
        "district" => 2,
        _ => 3,
    };
    for level in 0..3 {
        let mut ids: Vec<usize> = (0..geos.keys.len())
            .filter(|i| rank(geos.kinds[*i]) == level)
            .collect();
        ids.sort_by(|a, b| geos.keys[*a].cmp(&geos.keys[*b]));
        let built = build_rank(&ids, &geos, &sales, &published, &grid, &cfg);
        for (g, result) in built {
            match result {
                Ok(pi) => {
                    published.insert(g, pi);
                }
                Err(e) => say(&format!("[market] no index for {}: {e}", geos.keys[g])),
            }
        }
    }

    // The forecast method ships only if it beats naive drift on the national backtest.
    let mut method = an::ForecastMethod::NaiveDrift;
    if let Some(pi) = published.get(&national) {
        let settled = an::last_settled(&pi.series, provisional_from);
        let logs: Vec<f64> = pi
            .series
            .points
            .iter()
            .take_while(|p| settled.is_some_and(|s| p.period <= s))
            .filter_map(|p| p.log_level)
            .collect();
        match an::backtest(
            &logs,
            an::ForecastMethod::DampedTrend,
            &an::BacktestConfig::default(),
        ) {
            Ok(bt) => {
                if bt.ships() {
                    method = an::ForecastMethod::DampedTrend;
                }
                report.backtest = Some(bt.table());
            }
            Err(e) => say(&format!("[market] no backtest: {e}")),
        }
    }
    report.forecast_method = Some(method.as_str());

    let mut geo_rows = Vec::new();
    let mut points = Vec::new();
    for (g, key) in geos.keys.iter().enumerate() {
        let mut row = GeographyRow {
            geography: key.clone(),
            geo_kind: geos.kinds[g].to_string(),
            parent: geos.parents[g].map(|p| geos.keys[p].clone()),
            residential_stock: stock.get(key).copied(),
            n_districts: match geos.kinds[g] {
                "district" => Some(1),
                "la" => None,
                _ => Some(districts_in.get(&g).map_or(0, |d| d.len() as i64)),
            },
            grain: None,
            base_period: None,
            index_method: None,
            index_decision: None,
            n_pairs: None,
            n_sales: None,
            last_settled: None,
            forecast_method: None,
            forecast_coverage: None,
            source: SOURCE.to_string(),
            updated_at: now,
        };
        if let Some(pi) = published.get(&g) {
            report.indices += 1;
            row.grain = Some(pi.series.grid.grain.as_str().to_string());
            row.base_period = Some(pi.series.grid.base.label());
            row.index_method = Some(pi.decision.method.as_str().to_string());
            row.index_decision = Some(pi.decision.reason.clone());
            row.n_pairs = Some(pi.decision.n_pairs as i64);
            row.n_sales = Some(pi.decision.n_sales as i64);
            row.last_settled = an::last_settled(&pi.series, provisional_from).map(|p| p.label());
            row.forecast_coverage = Some(FORECAST_COVERAGE.to_string());
            for p in &pi.series.points {
                let band = |z: f64| {
                    p.log_level
                        .zip(p.log_se)
                        .map(|(l, se)| 100.0 * (l + z * se).exp())
                };
                points.push(IndexPointRow {
                    geography: key.clone(),
                    period: p.period.label(),
                    level: p.level,
                    log_se: p.log_se,
                    lo: band(-an::Z80),
                    hi: band(an::Z80),
                    n: Some(p.n as i64),
                    is_forecast: false,
                    raw_level: p.raw_log_level.map(|l| 100.0 * l.exp()),
                    filled: p.filled,
                });
            }
            if let Ok(f) = an::forecast_index(&pi.series, provisional_from, method) {
                row.forecast_method = Some(f.method.as_str().to_string());
                // The anchor's own uncertainty (the smoothed level's standard error) adds to
                // every step's forecast error.
                let anchor_se = pi
                    .series
                    .point(f.anchor)
                    .and_then(|p| p.log_se)
                    .unwrap_or(0.0);
                // Forecast periods inside the grid (the provisional months) sit beside the
                // provisional estimate: `is_forecast` is part of the key.
                for (period, step) in f.points {
                    let se = (step.log_se * step.log_se + anchor_se * anchor_se).sqrt();
                    points.push(IndexPointRow {
                        geography: key.clone(),
                        period: period.label(),
                        level: Some(step.level),
                        log_se: Some(se),
                        lo: Some(100.0 * (step.log_level - an::Z80 * se).exp()),
                        hi: Some(100.0 * (step.log_level + an::Z80 * se).exp()),
                        n: None,
                        is_forecast: true,
                        raw_level: None,
                        filled: false,
                    });
                }
            }
        }
        geo_rows.push(row);
    }

    let mut volume_rows = Vec::with_capacity(volumes.len());
    for ((g, m), acc) in volumes {
        let summary = an::price_summary(&acc.prices_a);
        volume_rows.push(VolumeRow {
            geography: geos.keys[g].clone(),
            month: an::Month::from_ordinal(m).first_day(),
            txn_count: acc.count,
            txn_count_ppd_a: acc.a,
            txn_count_ppd_b: acc.b,
            txn_count_new_build: acc.new_build,
            txn_count_uprn_matched: acc.matched,
            median_price: summary.map(|s| s.median),
            p25_price: summary.map(|s| s.p25),
            p75_price: summary.map(|s| s.p75),
            mean_price: summary.map(|s| s.mean),
        });
    }
    volume_rows.sort_by(|a, b| (&a.geography, &a.month).cmp(&(&b.geography, &b.month)));

    report.geographies = geo_rows.len();
    report.volume_rows = volume_rows.len();
    report.data_through = Some(through.first_day());
    report.provisional_from = provisional_from.map(|m| m.first_day());
    mk::replace_market(db, geo_rows, points, volume_rows).await?;
    meta::set(db, META_DATA_THROUGH, &through.first_day()).await?;
    meta::set(
        db,
        META_PROVISIONAL_FROM,
        &provisional_from.map(|m| m.first_day()).unwrap_or_default(),
    )
    .await?;
    if let Some(t) = last_ingested {
        meta::set(
            db,
            META_LAST_INGESTED_AT,
            &format!("{}Z", t.format("%Y-%m-%dT%H:%M:%S")),
        )
        .await?;
    }
    meta::set(
        db,
        META_BUILT_AT,
        &format!("{}Z", now.format("%Y-%m-%dT%H:%M:%S")),
    )
    .await?;
    meta::set(
        db,
        META_BACKTEST,
        report.backtest.as_deref().unwrap_or_default(),
    )
    .await?;
    set_build_id(db).await?;
    say(&format!(
        "[market] built {} geographies, {} indices, {} volume rows from {} sales in {:.1}s; data through {}, provisional from {}; forecast method {}",
        report.geographies,
        report.indices,
        report.volume_rows,
        report.sales_read,
        started.elapsed().as_secs_f64(),
        through.first_day(),
        report.provisional_from.as_deref().unwrap_or("none"),
        method.as_str()
    ));
    Ok(report)
}
