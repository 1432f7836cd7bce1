//! The published index of one geography: its series (`index-series`), its forecast and the
//! time adjustment between two periods.

use schemars::JsonSchema;
use serde::Serialize;
use std::sync::Arc;
use terrace_analytics::Month;
use terrace_core::{GssCode, Postcode};
use terrace_store::Db;
use terrace_store::market::GeographyRow;

use crate::cache::{MarketCache, PublishedSeries, Snapshot};
use crate::{MarketError, Staleness, Violation, district_key, staleness};
use chrono::NaiveDate;

/// Which geography an index query names: a postcode district or a local authority.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexGeo {
    District(String),
    LocalAuthority(String),
}

impl IndexGeo {
    /// Exactly one of `district` (a full postcode is truncated; a borough name is refused) and
    /// `local_authority` (a GSS code).
    pub fn parse(district: Option<&str>, la: Option<&str>) -> Result<IndexGeo, Violation> {
        match (district, la) {
            (Some(d), None) => Postcode::parse_district(d)
                .map(IndexGeo::District)
                .map_err(|e| {
                    Violation::new(&["district"], "value_error", format!("Value error, {e}"))
                }),
            (None, Some(l)) => GssCode::parse(l)
                .map(|g| IndexGeo::LocalAuthority(g.to_string()))
                .map_err(|e| {
                    Violation::new(
                        &["local_authority"],
                        "value_error",
                        format!("Value error, {e}"),
                    )
                }),
            (Some(_), Some(_)) => Err(Violation::new(
                &[],
                "value_error",
                "Value error, give exactly one of district and local_authority, not both",
            )),
            (None, None) => Err(Violation::new(
                &["district"],
                "missing",
                "Field required: give exactly one of district and local_authority",
            )),
        }
    }

    fn key(&self) -> String {
        match self {
            IndexGeo::District(d) => district_key(d),
            IndexGeo::LocalAuthority(l) => format!("la:{l}"),
        }
    }

    fn code(&self) -> &str {
        match self {
            IndexGeo::District(d) | IndexGeo::LocalAuthority(d) => d,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            IndexGeo::District(_) => "postcode_district",
            IndexGeo::LocalAuthority(_) => "local_authority",
        }
    }
}

/// A period parameter: `YYYY-MM` or `YYYY-MM-DD`.
pub fn parse_month(loc: &[&str], v: &str) -> Result<Month, Violation> {
    Month::parse(v).map_err(|_| {
        Violation::new(
            loc,
            "value_error",
            format!("Value error, {v:?} is not a month: use YYYY-MM or YYYY-MM-DD"),
        )
        .with_input(v)
    })
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct IndexRow {
    /// `YYYY-MM`.
    pub period: String,
    /// Base period = 100. On estimated rows the smoothed level (`provenance.smoothing`), which
    /// every published change reads; on forecast rows the forecast.
    pub level: Option<f64>,
    /// The level's standard error (delta method: level times the log level's).
    pub se: Option<f64>,
    /// The interval at `provenance.interval_coverage`, on estimated and forecast rows.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// The estimator's own level before smoothing, on the same base; null where it had none
    /// (a filled period) and on forecast rows.
    pub raw_level: Option<f64>,
    /// True when the period had no own estimate (no sale, or too few) and its level was filled
    /// by the smoother: interpolated between its neighbours and, for a series shrunk toward its
    /// parent, carried by the parent's change.
    pub filled: bool,
    /// Forecast rows follow the last settled period; they cover the provisional months (whose
    /// sales are still being registered) and beyond.
    pub is_forecast: bool,
    /// Observations behind the level (pairs or sales); absent on forecast rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n: Option<i64>,
}

/// The months a forecast covers.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ForecastCovers {
    /// First and last forecast period (`YYYY-MM`).
    pub from: String,
    pub to: String,
    /// Forecast periods that are provisional months (held but still being registered), and
    /// those after `data_through` (no data at all yet).
    pub provisional_periods: usize,
    pub future_periods: usize,
}

fn covers(
    periods: &[&str],
    provisional_from: Option<&str>,
    data_through: Option<&str>,
) -> Option<ForecastCovers> {
    let (first, last) = (periods.first()?, periods.last()?);
    let through = data_through.map(ym);
    let future = periods
        .iter()
        .filter(|p| through.as_deref().is_none_or(|t| **p > t))
        .count();
    let pf = provisional_from.map(ym);
    let provisional = periods
        .iter()
        .filter(|p| pf.as_deref().is_some_and(|f| **p >= f))
        .count()
        - periods
            .iter()
            .filter(|p| pf.is_some() && through.as_deref().is_some_and(|t| **p > t))
            .count();
    Some(ForecastCovers {
        from: first.to_string(),
        to: last.to_string(),
        provisional_periods: provisional,
        future_periods: future,
    })
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct IndexProvenance {
    /// `repeat_sales`, `hedonic` or `shrunk_to_parent`.
    pub index_method: Option<String>,
    /// Why that method for this geography, with the counts and thresholds behind it.
    pub index_decision: Option<String>,
    /// The geography the series is shrunk toward, when it is.
    pub parent: Option<String>,
    pub base_period: Option<String>,
    pub grain: Option<String>,
    /// The latest period whose sales are fully registered.
    pub last_settled: Option<String>,
    pub provisional_from: Option<String>,
    pub data_through: Option<String>,
    pub n_pairs: Option<i64>,
    pub n_sales: Option<i64>,
    pub forecast_method: Option<String>,
    /// The coverage of the forecast interval (kept for existing callers; the same as
    /// `interval_coverage`).
    pub forecast_coverage: Option<String>,
    /// The coverage of every `lo`..`hi` of the series, estimated and forecast rows alike.
    pub interval_coverage: Option<String>,
    /// How the published levels are smoothed (METHODS.md section 6).
    pub smoothing: &'static str,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct IndexSeriesResult {
    pub country: &'static str,
    pub geography: String,
    /// `postcode_district` or `local_authority`.
    pub geography_type: &'static str,
    pub rows: Vec<IndexRow>,
    /// The months the forecast rows cover.
    pub forecast_covers: Option<ForecastCovers>,
    pub staleness: Staleness,
    pub provenance: IndexProvenance,
}

/// The current build's snapshot and the geography's published index (404 without one).
async fn load(
    db: &Db,
    cache: &MarketCache,
    geo: &IndexGeo,
) -> Result<(Arc<Snapshot>, Arc<PublishedSeries>), MarketError> {
    let snap = cache.snapshot(db).await?;
    let Some((published, _)) = snap.series(db, &geo.key()).await? else {
        return Err(MarketError::NotFound(format!(
            "a published index for {} {} (no registered sales there, or the market tables have not been built yet)",
            geo.kind().replace('_', " "),
            geo.code()
        )));
    };
    Ok((snap, published))
}

/// What `provenance.smoothing` says.
pub const SMOOTHING: &str = "local level: the estimator's monthly log levels smoothed by a Kalman smoother with a random-walk step estimated per geography by maximum likelihood (0.001 to 0.05 a month; 0.01 a month for a series of fewer than 24 estimated months) and a drift (a thin geography: its deviation from the parent's level, step 0.01 a month, no drift); se is the smoothed level's standard error";

fn provenance(
    g: &GeographyRow,
    provisional_from: Option<String>,
    data_through: Option<String>,
) -> IndexProvenance {
    IndexProvenance {
        index_method: g.index_method.clone(),
        index_decision: g.index_decision.clone(),
        parent: g
            .index_method
            .as_deref()
            .filter(|m| *m == "shrunk_to_parent")
            .and(g.parent.clone()),
        base_period: g.base_period.clone(),
        grain: g.grain.clone(),
        last_settled: g.last_settled.clone(),
        provisional_from,
        data_through,
        n_pairs: g.n_pairs,
        n_sales: g.n_sales,
        forecast_method: g.forecast_method.clone(),
        forecast_coverage: g.forecast_coverage.clone(),
        interval_coverage: g.forecast_coverage.clone(),
        smoothing: SMOOTHING,
        source: g.source.clone(),
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// `YYYY-MM` of a stored `YYYY-MM-01`.
fn ym(first_day: &str) -> String {
    first_day.get(..7).unwrap_or(first_day).to_string()
}

/// The published series of a geography, optionally cut to `[from, to]`, forecasts last.
pub async fn index_series(
    db: &Db,
    cache: &MarketCache,
    geo: &IndexGeo,
    from: Option<Month>,
    to: Option<Month>,
    today: NaiveDate,
) -> Result<IndexSeriesResult, MarketError> {
    let (snap, published) = load(db, cache, geo).await?;
    let (g, points) = (&published.geography, &published.points);
    let (pf, through) = (snap.provisional_from.clone(), snap.data_through.clone());
    let in_range = |p: &str| {
        from.is_none_or(|f| p >= f.to_string().as_str())
            && to.is_none_or(|t| p <= t.to_string().as_str())
    };
    let mut rows: Vec<IndexRow> = points
        .iter()
        .filter(|p| in_range(&p.period))
        .map(|p| IndexRow {
            period: p.period.clone(),
            level: p.level.map(round2),
            se: p.level.zip(p.log_se).map(|(l, se)| round2(l * se)),
            lo: p.lo.map(round2),
            hi: p.hi.map(round2),
            raw_level: p.raw_level.map(round2),
            filled: p.filled,
            is_forecast: p.is_forecast,
            n: p.n,
        })
        .collect();
    rows.sort_by_key(|r| r.is_forecast);
    let fc: Vec<&str> = points
        .iter()
        .filter(|p| p.is_forecast)
        .map(|p| p.period.as_str())
        .collect();
    Ok(IndexSeriesResult {
        country: "UK",
        geography: geo.code().to_string(),
        geography_type: geo.kind(),
        rows,
        forecast_covers: covers(&fc, pf.as_deref(), through.as_deref()),
        staleness: staleness(through.as_deref(), today),
        provenance: provenance(g, pf, through),
    })
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ForecastPoint {
    pub period: String,
    /// Steps after the anchor, 1 to 7.
    pub step: usize,
    pub level: f64,
    pub lo: f64,
    pub hi: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Anchor {
    pub period: String,
    pub level: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Forecast {
    pub country: &'static str,
    pub geography: String,
    pub geography_type: &'static str,
    /// The last settled index point: forecasts never anchor on a provisional period.
    pub anchor: Anchor,
    /// Seven periods after the anchor.
    pub forecast: Vec<ForecastPoint>,
    /// `damped_trend_log` (damped Holt trend on log levels) or `naive_drift_log`: the damped
    /// trend is published only when it beat naive drift on the national backtest.
    pub method: String,
    pub grain: String,
    /// The coverage of `lo`..`hi`.
    pub interval_coverage: String,
    pub horizon: usize,
    /// The months the forecast covers.
    pub covers: ForecastCovers,
    pub staleness: Staleness,
    pub provenance: IndexProvenance,
}

/// The published forecast of a geography's index.
pub async fn forecast(
    db: &Db,
    cache: &MarketCache,
    geo: &IndexGeo,
    today: NaiveDate,
) -> Result<Forecast, MarketError> {
    let (snap, published) = load(db, cache, geo).await?;
    let (g, points) = (&published.geography, &published.points);
    let (pf, through) = (snap.provisional_from.clone(), snap.data_through.clone());
    let (Some(settled), Some(method)) = (g.last_settled.clone(), g.forecast_method.clone()) else {
        return Err(MarketError::NotFound(format!(
            "a forecast for {} (too few settled periods)",
            geo.code()
        )));
    };
    let anchor_level = points
        .iter()
        .find(|p| !p.is_forecast && p.period == settled)
        .and_then(|p| p.level);
    let fc: Vec<ForecastPoint> = points
        .iter()
        .filter(|p| p.is_forecast)
        .enumerate()
        .filter_map(|(i, p)| {
            Some(ForecastPoint {
                period: p.period.clone(),
                step: i + 1,
                level: (p.level? * 100.0).round() / 100.0,
                lo: (p.lo? * 100.0).round() / 100.0,
                hi: (p.hi? * 100.0).round() / 100.0,
            })
        })
        .collect();
    let Some(anchor_level) = anchor_level.filter(|_| !fc.is_empty()) else {
        return Err(MarketError::NotFound(format!(
            "a forecast for {}",
            geo.code()
        )));
    };
    let periods: Vec<&str> = fc.iter().map(|f| f.period.as_str()).collect();
    let Some(covered) = covers(&periods, pf.as_deref(), through.as_deref()) else {
        return Err(MarketError::NotFound(format!(
            "a forecast for {}",
            geo.code()
        )));
    };
    Ok(Forecast {
        covers: covered,
        staleness: staleness(through.as_deref(), today),
        country: "UK",
        geography: geo.code().to_string(),
        geography_type: geo.kind(),
        anchor: Anchor {
            period: settled,
            level: (anchor_level * 100.0).round() / 100.0,
        },
        horizon: fc.len(),
        forecast: fc,
        method,
        grain: g.grain.clone().unwrap_or_default(),
        interval_coverage: g.forecast_coverage.clone().unwrap_or_default(),
        provenance: provenance(g, pf, through),
    })
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct IndexSource {
    /// The geography whose published series gave the levels (`district:EX1`).
    pub geography: String,
    pub index_method: Option<String>,
    pub index_decision: Option<String>,
    /// When the district is thin its series is shrunk toward this parent.
    pub parent: Option<String>,
    pub base_period: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TimeAdjustmentResult {
    pub country: &'static str,
    pub district: String,
    pub from_period: String,
    pub to_period: String,
    pub from_level: f64,
    pub to_level: f64,
    /// to_level / from_level: what a price at `from_period` is worth at `to_period`.
    pub multiplier: f64,
    /// Standard error of the multiplier (delta method, the two levels' errors taken as
    /// independent: an upper bound, since neighbouring smoothed levels are correlated).
    pub multiplier_se: Option<f64>,
    pub source: IndexSource,
    pub staleness: Staleness,
}

/// The multiplier carrying a price in a district from one period to another (`to` defaults to
/// the last settled period).
pub async fn time_adjustment(
    db: &Db,
    cache: &MarketCache,
    district: &str,
    from: Month,
    to: Option<Month>,
    today: NaiveDate,
) -> Result<TimeAdjustmentResult, MarketError> {
    let geo = IndexGeo::District(district.to_string());
    let (snap, published) = load(db, cache, &geo).await?;
    let (g, points) = (&published.geography, &published.points);
    let to_label = match to {
        Some(t) => t.to_string(),
        None => g.last_settled.clone().ok_or_else(|| {
            MarketError::NotFound(format!("a settled index period for {district}"))
        })?,
    };
    let level = |label: &str, field: &str| {
        points
            .iter()
            .find(|p| !p.is_forecast && p.period == label)
            .and_then(|p| Some((p.level?, p.log_se)))
            .ok_or_else(|| {
                let (first, last) = (
                    points.first().map(|p| p.period.clone()).unwrap_or_default(),
                    points.iter().rfind(|p| !p.is_forecast).map(|p| p.period.clone()).unwrap_or_default(),
                );
                MarketError::NotFound(format!(
                    "a `{field}` level for {label} in the index of {district} (it runs {first} to {last})"
                ))
            })
    };
    let from_label = from.to_string();
    let (from_level, from_se) = level(&from_label, "from")?;
    let (to_level, to_se) = level(&to_label, "to")?;
    let multiplier = to_level / from_level;
    let multiplier_se = from_se
        .zip(to_se)
        .map(|(a, b)| ((multiplier * (a * a + b * b).sqrt()) * 10_000.0).round() / 10_000.0);
    Ok(TimeAdjustmentResult {
        multiplier_se,
        staleness: staleness(snap.data_through.as_deref(), today),
        country: "UK",
        district: district.to_string(),
        multiplier: (multiplier * 10_000.0).round() / 10_000.0,
        from_period: from_label,
        to_period: to_label,
        from_level: (from_level * 100.0).round() / 100.0,
        to_level: (to_level * 100.0).round() / 100.0,
        source: IndexSource {
            geography: g.geography.clone(),
            index_method: g.index_method.clone(),
            index_decision: g.index_decision.clone(),
            parent: g
                .index_method
                .as_deref()
                .filter(|m| *m == "shrunk_to_parent")
                .and(g.parent.clone()),
            base_period: g.base_period.clone(),
        },
    })
}
