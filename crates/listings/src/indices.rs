//! The asking-price and rent indices built from the listing snapshots (`cargo xtask build`),
//! stored, and served from the store (`/v1/market/asking-index`, `/v1/market/rent-index`).
//!
//! Each listing is one observation of its channel's index: its first priced snapshot (the
//! asking price, or the asking rent per calendar month, when first seen), in the month of that
//! snapshot, with its property type, tenure, new-home flag and floor area as the hedonic
//! characteristics. The estimator is the market crate's hedonic time-dummy index and decision
//! rule (`terrace_analytics::build_index`): a geography with enough observations in every month
//! publishes its own smoothed estimate, a thin one its own deviation shrunk toward its parent
//! (district → postcode area → local authority → national). Monthly, 2022-01 = 100, with the
//! standard error and the 80% band.
//!
//! The rent index is checked at every build against the ONS Price Index of Private Rents of its
//! local authority (re-based to 2022-01 = 100): a month where the two differ by more than
//! [`PIPR_MARGIN_POINTS`] plus the half-width of the rent index's 80% band, or where the PIPR
//! has no figure to check against, is `withheld` with both figures. A district or postcode area
//! takes the verdict of its local authority; the national series is checked against the mean of
//! the authorities' PIPR weighted by their rent listings.

use crate::market::{Answer, NO_FEED, observation};
use chrono::{Datelike, NaiveDateTime};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use terrace_analytics::{
    Grain, IndexConfig, IndexGrid, IndexMethod, IndexSeries, Month, PropertyType, Sale, Tenure,
    build_index,
};
use terrace_store::listings::{self, ListingIndexRow, ListingRow};
use terrace_store::{Db, LookupError, StoreError, address};

/// The base month (level 100).
pub const BASE_MONTH: (i32, u32) = (2022, 1);
/// A rent month is withheld when it differs from the PIPR by more than this many index points
/// beyond the half-width of its own 80% band.
pub const PIPR_MARGIN_POINTS: f64 = 5.0;
/// The band's coverage and its normal quantile.
pub const INTERVAL_COVERAGE: f64 = 0.8;
const Z80: f64 = 1.281_551_565_544_600_4;
/// The provenance of the stored points.
pub const SOURCE: &str = "terrace_listing_indices";
/// The most points one answer carries (the `limit` parameter's maximum).
pub const LIMIT_MAX: usize = 600;

/// Which index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IndexKind {
    /// Asking prices of sale listings.
    Asking,
    /// Asking rents (per calendar month) of rental listings.
    Rent,
}

impl IndexKind {
    pub fn as_str(self) -> &'static str {
        match self {
            IndexKind::Asking => "asking",
            IndexKind::Rent => "rent",
        }
    }

    fn channel(self) -> &'static str {
        match self {
            IndexKind::Asking => "sale",
            IndexKind::Rent => "rent",
        }
    }
}

/// The hedonic property type of a feed's label.
pub(crate) fn property_type(label: Option<&str>) -> PropertyType {
    let l = label.unwrap_or_default().to_ascii_lowercase();
    let has = |w: &[&str]| w.iter().any(|x| l.contains(x));
    if has(&["flat", "apartment", "maisonette", "penthouse", "studio"]) {
        PropertyType::Flat
    } else if has(&["semi"]) {
        PropertyType::SemiDetached
    } else if has(&["terrace", "mews", "town house", "cluster"]) {
        PropertyType::Terraced
    } else if has(&["detached", "bungalow", "cottage", "barn"]) {
        PropertyType::Detached
    } else {
        PropertyType::Other
    }
}

fn tenure(t: Option<&str>) -> Tenure {
    match t {
        Some("freehold" | "share_of_freehold" | "commonhold" | "feudal") => Tenure::Freehold,
        Some("leasehold") => Tenure::Leasehold,
        _ => Tenure::Unknown,
    }
}

/// The outward code of a postcode and its postcode area (the leading letters).
pub fn district_and_area(postcode: &str) -> Option<(String, String)> {
    let district = postcode.split_whitespace().next()?.to_ascii_uppercase();
    let area: String = district
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect();
    (!area.is_empty()).then_some((district, area))
}

/// One listing as an observation of its index.
#[derive(Debug, Clone)]
struct Obs {
    district: String,
    area: String,
    lad: Option<String>,
    sale: Sale,
}

fn month_of(t: NaiveDateTime) -> Option<Month> {
    Month::new(t.year(), t.month())
}

/// The listings of a channel as observations: each at its first priced snapshot.
async fn observations(db: &Db, kind: IndexKind) -> Result<Vec<Obs>, StoreError> {
    let mut out = Vec::new();
    let mut after = String::new();
    loop {
        let page: Vec<ListingRow> = listings::listings_page(db, &after, 5_000).await?;
        let Some(last) = page.last() else { break };
        after = last.listing_id.clone();
        let page: Vec<ListingRow> = page
            .into_iter()
            .filter(|l| l.channel == kind.channel())
            .collect();
        let ids: Vec<String> = page.iter().map(|l| l.listing_id.clone()).collect();
        let mut first: HashMap<String, (NaiveDateTime, i64)> = HashMap::new();
        for s in listings::snapshots_of(db, &ids).await? {
            if let Some(p) = s.price.filter(|p| *p > 0) {
                first.entry(s.listing_id).or_insert((s.time, p));
            }
        }
        let mut pcs: Vec<String> = page.iter().filter_map(|l| l.postcode.clone()).collect();
        pcs.sort();
        pcs.dedup();
        let lads: HashMap<String, Option<String>> = address::postcodes_by_key(db, &pcs)
            .await?
            .into_iter()
            .map(|p| (p.postcode, p.lad_code))
            .collect();
        for l in page {
            let Some(&(time, price)) = first.get(&l.listing_id) else {
                continue;
            };
            let (Some(pc), Some(month)) = (l.postcode.as_deref(), month_of(time)) else {
                continue;
            };
            let Some((district, area)) = district_and_area(pc) else {
                continue;
            };
            out.push(Obs {
                district,
                area,
                lad: lads.get(pc).cloned().flatten(),
                sale: Sale {
                    property: None,
                    month,
                    day: time.day() as u8,
                    price,
                    property_type: property_type(l.property_type.as_deref()),
                    tenure: tenure(l.tenure.as_deref()),
                    new_build: l.new_home.unwrap_or(false),
                    floor_area_m2: l.floor_area_m2,
                },
            });
        }
    }
    Ok(out)
}

/// The geography with the most observations among `keys` (the first on a tie, keys sorted).
fn majority<'a>(keys: impl Iterator<Item = &'a str>) -> Option<String> {
    let mut n: BTreeMap<&str, usize> = BTreeMap::new();
    for k in keys {
        *n.entry(k).or_default() += 1;
    }
    let max = *n.values().max()?;
    n.into_iter()
        .find(|(_, c)| *c == max)
        .map(|(k, _)| k.to_string())
}

/// A built series with the key of the local authority whose PIPR checks it (`None` for national).
struct Built {
    key: String,
    lad: Option<String>,
    series: IndexSeries,
    parent: Option<String>,
    /// The geography's own listings per grid month.
    counts: Vec<usize>,
}

/// Listings per grid month.
fn counts_of(sales: &[Sale], grid: &IndexGrid) -> Vec<usize> {
    let mut n = vec![0usize; grid.len()];
    for s in sales {
        if let Some(i) = grid.position_of_month(s.month) {
            n[i] += 1;
        }
    }
    n
}

/// What one kind's build did.
#[derive(Debug, Clone, PartialEq)]
pub struct KindReport {
    pub kind: IndexKind,
    pub observations: usize,
    pub series: usize,
    pub points: usize,
    pub withheld: usize,
    /// Geographies that could not be estimated, with the reason.
    pub skipped: Vec<String>,
}

impl KindReport {
    /// One line for the build's progress.
    pub fn summary(&self) -> String {
        format!(
            "[derive] {} index: {} listings, {} series, {} points ({} withheld){}",
            self.kind.as_str(),
            self.observations,
            self.series,
            self.points,
            self.withheld,
            if self.skipped.is_empty() {
                String::new()
            } else {
                format!("; not estimated: {}", self.skipped.join("; "))
            }
        )
    }
}

fn grid_of(obs: &[Obs]) -> Option<IndexGrid> {
    let base = Month::new(BASE_MONTH.0, BASE_MONTH.1)?;
    let first = obs.iter().map(|o| o.sale.month).min()?.min(base);
    let last = obs.iter().map(|o| o.sale.month).max()?.max(base);
    IndexGrid::new(Grain::Month, first, last, base).ok()
}

/// The sales of the observations `keep` selects.
fn sales_of(obs: &[Obs], keep: impl Fn(&Obs) -> bool) -> Vec<Sale> {
    obs.iter()
        .filter(|o| keep(o))
        .map(|o| o.sale.clone())
        .collect()
}

/// Builds every geography's series of one kind, national first, each parent before its children.
fn build_series(obs: &[Obs], grid: &IndexGrid, skipped: &mut Vec<String>) -> Vec<Built> {
    let cfg = IndexConfig::default();
    let mut built: Vec<Built> = Vec::new();
    let all = sales_of(obs, |_| true);
    let national = match build_index("national", &all, grid, None, &cfg) {
        Ok(p) => p.series,
        Err(e) => {
            skipped.push(format!("national: {e}"));
            return built;
        }
    };
    built.push(Built {
        key: "national".into(),
        lad: None,
        series: national.clone(),
        parent: None,
        counts: counts_of(&all, grid),
    });
    let mut run =
        |key: String, lad: Option<String>, sales: Vec<Sale>, parent: (&str, &IndexSeries)| {
            match build_index(&key, &sales, grid, Some(parent), &cfg) {
                Ok(p) => Some(Built {
                    key,
                    lad,
                    parent: p.decision.parent,
                    series: p.series,
                    counts: counts_of(&sales, grid),
                }),
                Err(e) => {
                    skipped.push(format!("{key}: {e}"));
                    None
                }
            }
        };
    let lads: BTreeSet<&str> = obs.iter().filter_map(|o| o.lad.as_deref()).collect();
    let mut lad_series: HashMap<String, IndexSeries> = HashMap::new();
    for lad in lads {
        let sales = sales_of(obs, |o| o.lad.as_deref() == Some(lad));
        let key = format!("lad:{lad}");
        if let Some(b) = run(key, Some(lad.to_string()), sales, ("national", &national)) {
            lad_series.insert(lad.to_string(), b.series.clone());
            built.push(b);
        }
    }
    let areas: BTreeSet<&str> = obs.iter().map(|o| o.area.as_str()).collect();
    let mut area_series: HashMap<String, (Option<String>, IndexSeries)> = HashMap::new();
    for area in areas {
        let lad = majority(
            obs.iter()
                .filter(|o| o.area == area)
                .filter_map(|o| o.lad.as_deref()),
        );
        let (pkey, pseries) = match lad.as_ref().and_then(|l| lad_series.get(l).map(|s| (l, s))) {
            Some((l, s)) => (format!("lad:{l}"), s),
            None => ("national".to_string(), &national),
        };
        let sales = sales_of(obs, |o| o.area == area);
        if let Some(b) = run(
            format!("area:{area}"),
            lad.clone(),
            sales,
            (pkey.as_str(), pseries),
        ) {
            area_series.insert(area.to_string(), (lad, b.series.clone()));
            built.push(b);
        }
    }
    let districts: BTreeMap<&str, &str> = obs
        .iter()
        .map(|o| (o.district.as_str(), o.area.as_str()))
        .collect();
    for (district, area) in districts {
        let Some((lad, pseries)) = area_series.get(area) else {
            continue;
        };
        let sales = sales_of(obs, |o| o.district == district);
        let pkey = format!("area:{area}");
        if let Some(b) = run(
            format!("district:{district}"),
            lad.clone(),
            sales,
            (pkey.as_str(), pseries),
        ) {
            built.push(b);
        }
    }
    built
}

/// The PIPR of a local authority re-based to [`BASE_MONTH`] = 100, by `YYYY-MM`; empty when the
/// base month has no figure.
async fn pipr_levels(db: &Db, lad: &str) -> Result<HashMap<String, f64>, StoreError> {
    let rows = listings::pipr_of(db, lad).await?;
    let base_label = format!("{}-{:02}", BASE_MONTH.0, BASE_MONTH.1);
    let Some(base) = rows
        .iter()
        .find(|r| r.month == base_label)
        .and_then(|r| r.rent_index)
        .filter(|b| *b > 0.0)
    else {
        return Ok(HashMap::new());
    };
    Ok(rows
        .into_iter()
        .filter_map(|r| Some((r.month, r.rent_index? / base * 100.0)))
        .collect())
}

/// Whether a rent month passes the PIPR check: both figures, and a difference within
/// [`PIPR_MARGIN_POINTS`] plus the band's half-width.
pub fn passes_check(level: Option<f64>, se: Option<f64>, pipr: Option<f64>) -> bool {
    match (level, pipr) {
        (Some(l), Some(p)) => (l - p).abs() <= PIPR_MARGIN_POINTS + Z80 * se.unwrap_or(0.0),
        _ => false,
    }
}

fn rows_of(
    kind: IndexKind,
    b: &Built,
    pipr: Option<&HashMap<String, f64>>,
    now: NaiveDateTime,
) -> Vec<ListingIndexRow> {
    let shrunk = b.series.method == IndexMethod::ShrunkToParent;
    b.series
        .points
        .iter()
        .zip(&b.counts)
        .map(|(p, n)| {
            let month = p.period.start_month().to_string();
            let se = p.level_se();
            let band = |sign: f64| {
                p.log_level
                    .zip(p.log_se)
                    .map(|(l, s)| 100.0 * (l + sign * Z80 * s).exp())
            };
            let pipr_level = pipr.and_then(|m| m.get(&month).copied());
            let withheld = kind == IndexKind::Rent && !passes_check(p.level, se, pipr_level);
            ListingIndexRow {
                kind: kind.as_str().into(),
                area_key: b.key.clone(),
                month,
                level: p.level,
                se,
                lo: band(-1.0),
                hi: band(1.0),
                n: *n as i64,
                shrunk,
                filled: p.filled,
                status: if withheld { "withheld" } else { "published" }.into(),
                pipr_level,
                parent: b.parent.clone(),
                source: SOURCE.into(),
                updated_at: now,
            }
        })
        .collect()
}

/// Builds, checks and stores both indices, replacing what was stored.
pub async fn build(db: &Db, now: NaiveDateTime) -> Result<Vec<KindReport>, StoreError> {
    let mut reports = Vec::new();
    for kind in [IndexKind::Asking, IndexKind::Rent] {
        let obs = observations(db, kind).await?;
        let mut skipped = Vec::new();
        let built = match grid_of(&obs) {
            Some(grid) => build_series(&obs, &grid, &mut skipped),
            None => Vec::new(),
        };
        // The PIPR of every authority, and the national reference: the authorities' levels
        // weighted by their rent listings.
        let mut pipr: HashMap<String, HashMap<String, f64>> = HashMap::new();
        if kind == IndexKind::Rent {
            let mut weights: BTreeMap<String, f64> = BTreeMap::new();
            for o in &obs {
                if let Some(l) = &o.lad {
                    *weights.entry(l.clone()).or_default() += 1.0;
                }
            }
            let mut national: BTreeMap<String, (f64, f64)> = BTreeMap::new();
            for (lad, w) in &weights {
                let levels = pipr_levels(db, lad).await?;
                for (m, v) in &levels {
                    let e = national.entry(m.clone()).or_default();
                    e.0 += w * v;
                    e.1 += w;
                }
                pipr.insert(lad.clone(), levels);
            }
            pipr.insert(
                String::new(),
                national.into_iter().map(|(m, (s, w))| (m, s / w)).collect(),
            );
        }
        let mut rows = Vec::new();
        for b in &built {
            let reference = pipr.get(b.lad.as_deref().unwrap_or_default());
            rows.extend(rows_of(kind, b, reference, now));
        }
        let withheld = rows.iter().filter(|r| r.status == "withheld").count();
        let report = KindReport {
            kind,
            observations: obs.len(),
            series: built.len(),
            points: rows.len(),
            withheld,
            skipped,
        };
        listings::replace_index_points(db, kind.as_str(), rows).await?;
        reports.push(report);
    }
    Ok(reports)
}

// ---------------------------------------------------------------------------------------------
// Serving.

/// What `area_code` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IndexAreaType {
    /// A postcode district (an outward code such as XT1).
    District,
    /// A postcode area (its letters, such as XT).
    Area,
    /// A local authority (its GSS code, such as E06000046).
    Lad,
    /// The whole feed (no `area_code`).
    National,
}

/// A checked index request.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexRequest {
    pub kind: IndexKind,
    pub area_type: IndexAreaType,
    /// The canonical code (upper case); `None` for national.
    pub area_code: Option<String>,
    pub start: Option<Month>,
    pub end: Option<Month>,
    pub limit: usize,
}

impl IndexRequest {
    fn key(&self) -> String {
        match (self.area_type, &self.area_code) {
            (IndexAreaType::National, _) | (_, None) => "national".into(),
            (IndexAreaType::District, Some(c)) => format!("district:{c}"),
            (IndexAreaType::Area, Some(c)) => format!("area:{c}"),
            (IndexAreaType::Lad, Some(c)) => format!("lad:{c}"),
        }
    }
}

/// A month's publication status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PointStatus {
    Published,
    /// Rent only: the month disagrees with the ONS Price Index of Private Rents of its local
    /// authority by more than the stated margin, or the PIPR has no figure to check it against.
    /// Both figures are given; the month is a refusal, not an outage.
    Withheld,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ListingIndexPoint {
    /// `YYYY-MM`.
    pub period: String,
    /// 2022-01 = 100.
    pub level: Option<f64>,
    /// The level's standard error.
    pub se: Option<f64>,
    /// The 80% band.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// Listings first priced in the month in this area (the area's own observations).
    pub n: i64,
    /// The series is the area's own deviation shrunk toward its parent's (too thin to stand alone).
    pub shrunk: bool,
    /// The month had no own observation: its level is the smoother's.
    pub filled: bool,
    pub status: PointStatus,
    /// Rent only: the ONS Price Index of Private Rents of the area's local authority in the
    /// month, re-based to 2022-01 = 100 (null where the ONS has no figure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipr_level: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ListingIndex {
    pub status: Answer,
    /// Why there is no series (`not_available`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub index: IndexKind,
    pub area_type: IndexAreaType,
    pub area_code: Option<String>,
    /// `2022-01` (level 100).
    pub base_period: String,
    /// The band's coverage (0.8).
    pub interval_coverage: f64,
    /// What each point measures.
    pub basis: String,
    /// The geography the series was shrunk toward, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Rent only: the PIPR check's margin in index points (added to the band's half-width).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withheld_margin_points: Option<f64>,
    /// Oldest first; absent when `not_available` (never an empty series that reads as a quiet
    /// market).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub points: Option<Vec<ListingIndexPoint>>,
}

/// How many area keys a not-found answer names.
const NEAREST: usize = 5;

/// The stored keys nearest to `key` (same kind prefix; by edit distance, then alphabetically).
fn nearest(keys: &[String], key: &str) -> Vec<String> {
    let prefix = key.split(':').next().unwrap_or_default();
    let mut scored: Vec<(usize, &String)> = keys
        .iter()
        .filter(|k| k.split(':').next() == Some(prefix))
        .map(|k| (strsim::levenshtein(k, key), k))
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(NEAREST)
        .map(|(_, k)| k.clone())
        .collect()
}

fn point(r: ListingIndexRow) -> ListingIndexPoint {
    ListingIndexPoint {
        period: r.month,
        level: r.level.map(|v| (v * 100.0).round() / 100.0),
        se: r.se.map(|v| (v * 1000.0).round() / 1000.0),
        lo: r.lo.map(|v| (v * 100.0).round() / 100.0),
        hi: r.hi.map(|v| (v * 100.0).round() / 100.0),
        n: r.n,
        shrunk: r.shrunk,
        filled: r.filled,
        status: if r.status == "withheld" {
            PointStatus::Withheld
        } else {
            PointStatus::Published
        },
        pipr_level: r.pipr_level.map(|v| (v * 100.0).round() / 100.0),
    }
}

/// The stored series of one area; `not_available` without a listings feed or before the build;
/// an area with no series is `NotFound` naming the nearest areas that have one.
pub async fn index_series(db: &Db, q: &IndexRequest) -> Result<ListingIndex, LookupError> {
    let mut out = ListingIndex {
        status: Answer::NotAvailable,
        reason: None,
        index: q.kind,
        area_type: q.area_type,
        area_code: q.area_code.clone(),
        base_period: format!("{}-{:02}", BASE_MONTH.0, BASE_MONTH.1),
        interval_coverage: INTERVAL_COVERAGE,
        basis: match q.kind {
            IndexKind::Asking => "hedonic index of asking prices of sale listings, each listing at its first priced snapshot",
            IndexKind::Rent => "hedonic index of asking rents (per calendar month) of rental listings, each listing at its first priced snapshot",
        }
        .into(),
        parent: None,
        withheld_margin_points: (q.kind == IndexKind::Rent).then_some(PIPR_MARGIN_POINTS),
        points: None,
    };
    if observation(db).await?.is_none() {
        out.reason = Some(NO_FEED.into());
        return Ok(out);
    }
    let keys = listings::index_area_keys(db, q.kind.as_str()).await?;
    if keys.is_empty() {
        out.reason = Some(format!(
            "not_built: the {} index has not been built from the loaded feed (cargo xtask build), or the feed has no priced {} listings",
            q.kind.as_str(),
            q.kind.channel()
        ));
        return Ok(out);
    }
    let key = q.key();
    let rows = listings::index_points(db, q.kind.as_str(), &key).await?;
    if rows.is_empty() {
        let near = nearest(&keys, &key);
        return Err(LookupError::NotFound(if near.is_empty() {
            format!("{key} (no {} index for it)", q.kind.as_str())
        } else {
            format!(
                "{key} (no {} index for it; nearest: {})",
                q.kind.as_str(),
                near.join(", ")
            )
        }));
    }
    out.status = Answer::Ok;
    out.parent = rows.first().and_then(|r| r.parent.clone());
    let mut points: Vec<ListingIndexPoint> = rows
        .into_iter()
        .filter(|r| {
            let m = Month::parse(&r.month).ok();
            q.start.is_none_or(|s| m.is_some_and(|m| m >= s))
                && q.end.is_none_or(|e| m.is_some_and(|m| m <= e))
        })
        .map(point)
        .collect();
    let extra = points.len().saturating_sub(q.limit);
    points.drain(..extra);
    out.points = Some(points);
    Ok(out)
}
