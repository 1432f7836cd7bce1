//! `POST /v1/market/volume-series`: monthly registered-sale volumes and category A price
//! statistics for one postcode district, postcode area or county (specification 2.7 and 4.3).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashMap;
use terrace_analytics::Month;
use terrace_core::Postcode;
use terrace_store::Db;
use terrace_store::market as mk;

use crate::cache::MarketCache;
use crate::series::parse_month;
use crate::{MarketError, Staleness, Violation, staleness};
use chrono::NaiveDate;

/// The metrics a volume series can carry.
pub const METRICS: [&str; 9] = [
    "txn_count",
    "txn_count_ppd_a",
    "txn_count_ppd_b",
    "txn_count_new_build",
    "txn_count_uprn_matched",
    "median_price",
    "p25_price",
    "p75_price",
    "mean_price",
];
/// The metrics as the schema states them (the names of [`METRICS`]; the body keeps strings so
/// that an unknown one is reported at its index).
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VolumeMetric {
    TxnCount,
    TxnCountPpdA,
    TxnCountPpdB,
    TxnCountNewBuild,
    TxnCountUprnMatched,
    MedianPrice,
    P25Price,
    P75Price,
    MeanPrice,
}

pub const DEFAULT_METRICS: [&str; 2] = ["txn_count", "median_price"];
/// Without `start`, the series covers this many months up to the data's last month.
pub const DEFAULT_MONTHS: i32 = 24;

/// The body of volume-series: exactly one of `district`, `area`, `county`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = one_geography)]
pub struct VolumeSeriesBody {
    /// A postcode district (outward code, `EX1`); a full postcode is truncated to its district;
    /// a borough or town name is refused.
    #[schemars(regex(pattern = terrace_core::patterns::DISTRICT))]
    pub district: Option<String>,
    /// A postcode area (`EX`).
    #[schemars(regex(pattern = terrace_core::patterns::POSTCODE_AREA))]
    pub area: Option<String>,
    /// A county as Price Paid writes it, upper case (`DEVON`).
    #[schemars(regex(pattern = terrace_core::patterns::COUNTY))]
    pub county: Option<String>,
    /// Any of txn_count, txn_count_ppd_a, txn_count_ppd_b, txn_count_new_build,
    /// txn_count_uprn_matched, median_price, p25_price, p75_price, mean_price; default
    /// txn_count and median_price.
    #[schemars(with = "Option<Vec<VolumeMetric>>", length(min = 1))]
    pub metrics: Option<Vec<String>>,
    /// First month, `YYYY-MM` or `YYYY-MM-DD` (default: 23 months before `end`); not after `end`.
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub start: Option<String>,
    /// Last month, same formats (default: the last month of data).
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub end: Option<String>,
}

/// The schema states the geography rule: exactly one of `district`, `area` and `county`.
fn one_geography(schema: &mut schemars::Schema) {
    terrace_core::patterns::exactly_one_of(schema, &[&["district"], &["area"], &["county"]]);
}

/// The checked query.
#[derive(Debug, Clone, PartialEq)]
pub struct VolumeQuery {
    /// `district`, `area` or `county`.
    pub grain: &'static str,
    /// Canonical: `EX1`, `EX`, `DEVON`.
    pub geography: String,
    /// The geography as given.
    pub given: (String, String),
    pub metrics: Vec<String>,
    pub start: Option<Month>,
    pub end: Option<Month>,
}

impl VolumeSeriesBody {
    /// The body's rules: exactly one geography, known metrics, month formats, start <= end.
    pub fn check(&self) -> Result<VolumeQuery, Vec<Violation>> {
        let mut v = Vec::new();
        let given: Vec<(&str, &String)> = [
            ("district", &self.district),
            ("area", &self.area),
            ("county", &self.county),
        ]
        .into_iter()
        .filter_map(|(k, x)| x.as_ref().map(|x| (k, x)))
        .collect();
        let mut geo = None;
        match given.as_slice() {
            [] => v.push(Violation::new(
                &["district"],
                "missing",
                "Field required: give exactly one of district, area and county",
            )),
            [(kind, value)] => match *kind {
                "district" => match Postcode::parse_district(value) {
                    Ok(d) => geo = Some(("district", d)),
                    Err(_) => v.push(Violation::new(
                        &["district"],
                        "value_error",
                        format!("Value error, {value:?} is not a postcode district (an outward code such as EX1, or a full postcode); borough and town names are not districts"),
                    )),
                },
                "area" => {
                    let a = value.trim_matches(' ').to_ascii_uppercase();
                    if (1..=2).contains(&a.len()) && a.bytes().all(|b| b.is_ascii_alphabetic()) {
                        geo = Some(("area", a));
                    } else {
                        v.push(Violation::new(
                            &["area"],
                            "value_error",
                            format!("Value error, {value:?} is not a postcode area (one or two letters, such as EX or B)"),
                        ));
                    }
                }
                _ => {
                    let c = value.trim_matches(' ');
                    if c.is_empty() || c != c.to_ascii_uppercase() {
                        v.push(Violation::new(
                            &["county"],
                            "value_error",
                            format!("Value error, {value:?}: a county is its name in upper case, as Price Paid writes it (DEVON)"),
                        ));
                    } else {
                        geo = Some(("county", c.to_string()));
                    }
                }
            },
            _ => v.push(Violation::new(
                &[],
                "value_error",
                format!(
                    "Value error, give exactly one of district, area and county, not {}",
                    given.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(" and ")
                ),
            )),
        }
        let metrics = match &self.metrics {
            None => DEFAULT_METRICS.iter().map(|s| s.to_string()).collect(),
            Some(m) if m.is_empty() => {
                v.push(Violation::new(
                    &["metrics"],
                    "too_short",
                    "List should have at least 1 item",
                ));
                Vec::new()
            }
            Some(m) => {
                for (i, x) in m.iter().enumerate() {
                    if !METRICS.contains(&x.as_str()) {
                        v.push(Violation::new(
                            &["metrics", &i.to_string()],
                            "literal_error",
                            format!("Input should be one of {}", METRICS.join(", ")),
                        ));
                    }
                }
                let mut out: Vec<String> = Vec::new();
                for x in m {
                    if !out.contains(x) {
                        out.push(x.clone());
                    }
                }
                out
            }
        };
        let month = |field: &str, s: &Option<String>, v: &mut Vec<Violation>| {
            s.as_deref().and_then(|s| match parse_month(&[field], s) {
                Ok(m) => Some(m),
                Err(e) => {
                    v.push(e);
                    None
                }
            })
        };
        let start = month("start", &self.start, &mut v);
        let end = month("end", &self.end, &mut v);
        if let (Some(s), Some(e)) = (start, end)
            && s > e
        {
            v.push(Violation::new(
                &["start"],
                "value_error",
                format!("Value error, start {s} is after end {e}"),
            ));
        }
        match geo {
            Some((grain, geography)) if v.is_empty() => Ok(VolumeQuery {
                grain,
                geography,
                given: given
                    .first()
                    .map(|(k, x)| (k.to_string(), x.to_string()))
                    .unwrap_or_default(),
                metrics,
                start,
                end,
            }),
            _ => Err(v),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct VolumeData {
    /// `district`, `area` or `county`.
    pub grain: &'static str,
    pub geography: String,
    pub metrics: Vec<String>,
    /// Month starts (`YYYY-MM-DD`), oldest first.
    pub months: Vec<String>,
    /// One array per metric, aligned index for index with `months`; null where the month has
    /// no data (after `data_through`, before the first sale, or a price in a month with no
    /// category A sale).
    pub series: Map<String, Value>,
    pub n_districts: i64,
    pub n_months: usize,
    /// Registered sales (all categories) over the months returned.
    pub total_transactions: i64,
    /// The latest month held (`YYYY-MM-DD`).
    pub data_through: Option<String>,
    pub last_ingested_at: Option<String>,
    /// The first month whose counts are still incomplete (registration lags completion).
    pub provisional_from: Option<String>,
    /// Whether the geography's volumes came from the server's memory (`true`: read from the
    /// store earlier in the same build) rather than from the store for this call. The figures
    /// are the same either way: a new build drops what the server holds.
    pub cached: bool,
    /// Time the server spent on the answer, in milliseconds.
    pub time_ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct VolumeSeriesResponse {
    pub country: &'static str,
    /// The geography as given.
    pub query: Map<String, Value>,
    pub data: VolumeData,
    pub staleness: Staleness,
}

fn first_day(m: Month) -> String {
    m.first_day()
}

/// The series of a checked query.
pub async fn volume_series(
    db: &Db,
    cache: &MarketCache,
    q: &VolumeQuery,
    today: NaiveDate,
) -> Result<VolumeSeriesResponse, MarketError> {
    let started = std::time::Instant::now();
    let key = format!("{}:{}", q.grain, q.geography);
    let snap = cache.snapshot(db).await?;
    let (published, cached) = snap.volumes(db, &key).await?.ok_or_else(|| {
        MarketError::NotFound(format!(
            "{} {} (no registered sales there, or the market tables have not been built yet)",
            q.grain, q.geography
        ))
    })?;
    let geo = &published.geography;
    let through = snap.data_through.clone();
    let through_month = through.as_deref().and_then(|s| Month::parse(s).ok());
    let end = q.end.or(through_month).ok_or_else(|| {
        MarketError::NotFound("market data (the market tables have not been built yet)".into())
    })?;
    let start = q
        .start
        .unwrap_or_else(|| end.add_months(1 - DEFAULT_MONTHS));
    let (from, to) = (first_day(start), first_day(end));
    let rows: Vec<&mk::VolumeRow> = published
        .rows
        .iter()
        .filter(|r| r.month >= from && r.month <= to)
        .collect();
    let by_month: HashMap<&str, &mk::VolumeRow> =
        rows.iter().map(|r| (r.month.as_str(), *r)).collect();
    // Months before the geography's first sale are not "no sales": the register does not
    // reach back that far for it; counts there are null, as after data_through.
    let first_with_data = published.rows.first().map(|r| r.month.clone());
    let mut months = Vec::new();
    let mut m = start;
    while m <= end {
        months.push(first_day(m));
        m = m.add_months(1);
    }
    let mut series = Map::new();
    let mut total = 0i64;
    for r in &rows {
        total += r.txn_count;
    }
    for metric in &q.metrics {
        let values: Vec<Value> = months
            .iter()
            .map(|month| {
                let covered = first_with_data
                    .as_deref()
                    .is_some_and(|f| month.as_str() >= f)
                    && through.as_deref().is_some_and(|t| month.as_str() <= t);
                let row = by_month.get(month.as_str());
                let count = |f: fn(&mk::VolumeRow) -> i64| {
                    if covered {
                        Value::from(row.map_or(0, |r| f(r)))
                    } else {
                        Value::Null
                    }
                };
                let price = |f: fn(&mk::VolumeRow) -> Option<f64>| {
                    row.and_then(|r| f(r))
                        .map_or(Value::Null, |p| Value::from(p.round()))
                };
                match metric.as_str() {
                    "txn_count" => count(|r| r.txn_count),
                    "txn_count_ppd_a" => count(|r| r.txn_count_ppd_a),
                    "txn_count_ppd_b" => count(|r| r.txn_count_ppd_b),
                    "txn_count_new_build" => count(|r| r.txn_count_new_build),
                    "txn_count_uprn_matched" => count(|r| r.txn_count_uprn_matched),
                    "median_price" => price(|r| r.median_price),
                    "p25_price" => price(|r| r.p25_price),
                    "p75_price" => price(|r| r.p75_price),
                    "mean_price" => price(|r| r.mean_price),
                    _ => Value::Null,
                }
            })
            .collect();
        series.insert(metric.clone(), Value::Array(values));
    }
    let mut query = Map::new();
    query.insert(q.given.0.clone(), Value::from(q.given.1.clone()));
    Ok(VolumeSeriesResponse {
        country: "UK",
        query,
        staleness: staleness(through.as_deref(), today),
        data: VolumeData {
            grain: q.grain,
            geography: q.geography.clone(),
            metrics: q.metrics.clone(),
            n_months: months.len(),
            months,
            series,
            n_districts: geo.n_districts.unwrap_or(0),
            total_transactions: total,
            data_through: through,
            last_ingested_at: snap.last_ingested_at.clone(),
            provisional_from: snap.provisional_from.clone(),
            cached,
            time_ms: (started.elapsed().as_secs_f64() * 1e5).round() / 100.0,
        },
    })
}

#[cfg(test)]
mod schema_tests {
    use super::*;

    #[test]
    fn the_schema_names_every_metric() {
        let schema = serde_json::to_value(schemars::schema_for!(VolumeMetric)).unwrap();
        let named: Vec<&str> = schema["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(named, METRICS);
    }
}
