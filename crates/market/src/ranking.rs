//! Rankings: postcode districts by transaction volume or median price over a period
//! (`volume-ranking`), and areas by a market metric over a trailing window (`ranking`).

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use terrace_analytics::{self as an, Month};
use terrace_core::Postcode;
use terrace_store::Db;
use terrace_store::market as mk;
use terrace_store::meta;

use crate::build::{META_DATA_THROUGH, META_PROVISIONAL_FROM};
use crate::series::parse_month;
use crate::{MarketError, Staleness, Violation, staleness};

fn last_day(m: Month) -> NaiveDate {
    m.add_months(1)
        .first_day()
        .parse::<NaiveDate>()
        .ok()
        .and_then(|d| d.pred_opt())
        .unwrap_or_default()
}

async fn meta_month(db: &Db, key: meta::Key) -> Result<Option<Month>, MarketError> {
    Ok(meta::get(db, key)
        .await?
        .and_then(|s| Month::parse(&s).ok()))
}

/// The body of volume-ranking.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VolumeRankingBody {
    /// `txn_count` (registered sales, all categories; default) or `median_price` (category A).
    #[schemars(extend("enum" = ["txn_count", "median_price", null]))]
    pub metric: Option<String>,
    /// First month, `YYYY-MM` or `YYYY-MM-DD` (default: 11 months before `end`); not after `end`.
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub start: Option<String>,
    /// Last month (default: the last settled month, before `provisional_from`).
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub end: Option<String>,
    /// `desc` (default, highest first) or `asc`.
    #[schemars(extend("enum" = ["desc", "asc", null]))]
    pub order: Option<String>,
    /// Rows to return, 1 to 100 (default 20).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<i64>,
    /// Only districts of this postcode area (`EX`).
    #[schemars(regex(pattern = terrace_core::patterns::POSTCODE_AREA))]
    pub area: Option<String>,
    /// Leave out districts with fewer sales than this in the period (default 1; for
    /// `median_price`, category A sales).
    #[schemars(range(min = 1))]
    pub min_n: Option<i64>,
}

fn one_of(
    loc: &[&str],
    v: &Option<String>,
    allowed: &[&str],
    default: &str,
    out: &mut Vec<Violation>,
) -> String {
    match v {
        None => default.to_string(),
        Some(x) if allowed.contains(&x.as_str()) => x.clone(),
        Some(_) => {
            out.push(Violation::new(
                loc,
                "literal_error",
                format!("Input should be one of {}", allowed.join(", ")),
            ));
            default.to_string()
        }
    }
}

fn in_range(
    loc: &[&str],
    v: Option<i64>,
    min: i64,
    max: i64,
    default: i64,
    out: &mut Vec<Violation>,
) -> i64 {
    match v {
        None => default,
        Some(n) if n < min => {
            out.push(Violation::new(
                loc,
                "greater_than_equal",
                format!("Input should be greater than or equal to {min}"),
            ));
            default
        }
        Some(n) if n > max => {
            out.push(Violation::new(
                loc,
                "less_than_equal",
                format!("Input should be less than or equal to {max}"),
            ));
            default
        }
        Some(n) => n,
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct VolumeRankingQuery {
    pub metric: String,
    pub start: Option<Month>,
    pub end: Option<Month>,
    pub desc: bool,
    pub limit: i64,
    pub area: Option<String>,
    pub min_n: i64,
}

impl VolumeRankingBody {
    pub fn check(&self) -> Result<VolumeRankingQuery, Vec<Violation>> {
        let mut v = Vec::new();
        let metric = one_of(
            &["metric"],
            &self.metric,
            &["txn_count", "median_price"],
            "txn_count",
            &mut v,
        );
        let order = one_of(&["order"], &self.order, &["desc", "asc"], "desc", &mut v);
        let limit = in_range(&["limit"], self.limit, 1, 100, 20, &mut v);
        let min_n = in_range(&["min_n"], self.min_n, 1, i64::MAX, 1, &mut v);
        let mut month = |f: &str, s: &Option<String>| {
            s.as_deref()
                .and_then(|s| parse_month(&[f], s).map_err(|e| v.push(e)).ok())
        };
        let start = month("start", &self.start);
        let end = month("end", &self.end);
        let area = self
            .area
            .as_deref()
            .map(|a| a.trim_matches(' ').to_ascii_uppercase());
        if let Some(a) = &area
            && !((1..=2).contains(&a.len()) && a.bytes().all(|b| b.is_ascii_alphabetic()))
        {
            v.push(Violation::new(
                &["area"],
                "value_error",
                "Value error, a postcode area is one or two letters (EX, B)",
            ));
        }
        if let (Some(s), Some(e)) = (start, end)
            && s > e
        {
            v.push(Violation::new(
                &["start"],
                "value_error",
                format!("Value error, start {s} is after end {e}"),
            ));
        }
        if v.is_empty() {
            Ok(VolumeRankingQuery {
                metric,
                start,
                end,
                desc: order == "desc",
                limit,
                area,
                min_n,
            })
        } else {
            Err(v)
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RankRow {
    pub rank: usize,
    /// The district (`EX1`) or local authority GSS code.
    pub geography: String,
    /// The metric's value; `turnover_rate` and `price_change` as fractions (0.031 = 3.1 %).
    pub value: f64,
    /// Registered sales behind the value (category A for prices).
    pub n: i64,
    /// Residential addresses in the register (the stock that could have sold), where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stock: Option<i64>,
    /// `price_change` only: its standard error, from the two smoothed levels' errors taken as
    /// independent (an upper bound).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub se: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Ranking {
    pub country: &'static str,
    pub metric: String,
    /// `district` or `local_authority`.
    pub level: String,
    /// First and last month of the period (`YYYY-MM`).
    pub from: String,
    pub to: String,
    pub rows: Vec<RankRow>,
    /// Geographies with data that met the filters, before `limit`.
    pub n_ranked: usize,
    /// The first month whose counts are still incomplete (`YYYY-MM-DD`, its first day, as in
    /// every market answer).
    pub provisional_from: Option<String>,
    pub staleness: Staleness,
    pub notes: Vec<&'static str>,
}

/// The default last month: the month before `provisional_from`, else the data's last month.
async fn settled_end(db: &Db) -> Result<Month, MarketError> {
    let pf = meta_month(db, META_PROVISIONAL_FROM).await?;
    let through = meta_month(db, META_DATA_THROUGH).await?;
    pf.map(|m| m.add_months(-1)).or(through).ok_or_else(|| {
        MarketError::NotFound("market data (the market tables have not been built yet)".into())
    })
}

fn finish(mut rows: Vec<RankRow>, desc: bool, limit: i64) -> (Vec<RankRow>, usize) {
    rows.sort_by(|a, b| {
        let o = a.value.total_cmp(&b.value);
        (if desc { o.reverse() } else { o }).then_with(|| a.geography.cmp(&b.geography))
    });
    let n = rows.len();
    rows.truncate(limit as usize);
    for (i, r) in rows.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    (rows, n)
}

/// Postcode districts ranked by volume or median price over a period.
pub async fn volume_ranking(
    db: &Db,
    q: &VolumeRankingQuery,
    today: NaiveDate,
) -> Result<Ranking, MarketError> {
    let end = match q.end {
        Some(e) => e,
        None => settled_end(db).await?,
    };
    let start = q.start.unwrap_or_else(|| end.add_months(-11));
    let in_area = |d: &str| {
        q.area.as_deref().is_none_or(|a| {
            let letters: String = d.chars().take_while(char::is_ascii_alphabetic).collect();
            letters == a
        })
    };
    let rows: Vec<RankRow> = if q.metric == "median_price" {
        let from = start.first_day().parse::<NaiveDate>().unwrap_or_default();
        let mut by: HashMap<String, Vec<f64>> = HashMap::new();
        for (pc, price) in mk::category_a_prices(db, from, last_day(end)).await? {
            if let Some(p) = pc.as_deref().and_then(|p| Postcode::parse(p).ok()) {
                by.entry(p.outward().to_string())
                    .or_default()
                    .push(price as f64);
            }
        }
        by.into_iter()
            .filter(|(d, v)| in_area(d) && v.len() as i64 >= q.min_n)
            .filter_map(|(d, v)| {
                Some(RankRow {
                    rank: 0,
                    value: an::median(&v)?.round(),
                    n: v.len() as i64,
                    geography: d,
                    stock: None,
                    se: None,
                })
            })
            .collect()
    } else {
        let mut by: HashMap<String, i64> = HashMap::new();
        for r in
            mk::volumes_with_prefix(db, "district:", &start.first_day(), &end.first_day()).await?
        {
            *by.entry(r.geography.trim_start_matches("district:").to_string())
                .or_default() += r.txn_count;
        }
        by.into_iter()
            .filter(|(d, n)| in_area(d) && *n >= q.min_n)
            .map(|(d, n)| RankRow {
                rank: 0,
                value: n as f64,
                n,
                geography: d,
                stock: None,
                se: None,
            })
            .collect()
    };
    let (rows, n_ranked) = finish(rows, q.desc, q.limit);
    Ok(Ranking {
        country: "UK",
        metric: q.metric.clone(),
        level: "district".into(),
        from: start.to_string(),
        to: end.to_string(),
        rows,
        n_ranked,
        provisional_from: meta_month(db, META_PROVISIONAL_FROM)
            .await?
            .map(|m| m.first_day()),
        staleness: staleness(
            meta_month(db, META_DATA_THROUGH)
                .await?
                .map(|m| m.first_day())
                .as_deref(),
            today,
        ),
        notes: vec![
            "Counts are registered sales of all categories; median prices cover category A sales only.",
            "Months from provisional_from on are still being registered and undercount.",
        ],
    })
}

/// The body of ranking.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RankingBody {
    /// `turnover_rate` (default: registered sales in the window over the residential stock in
    /// the address register), `txn_count`, or `price_change` (the published index's change
    /// over the window, as a fraction).
    #[schemars(extend("enum" = ["turnover_rate", "txn_count", "price_change", null]))]
    pub metric: Option<String>,
    /// `district` (default) or `local_authority`.
    #[schemars(extend("enum" = ["district", "local_authority", null]))]
    pub level: Option<String>,
    /// The trailing window in months, 1 to 60 (default 12).
    #[schemars(range(min = 1, max = 60))]
    pub window_months: Option<i64>,
    /// The window's last month, `YYYY-MM` or a date of it (default: the last settled month).
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub end: Option<String>,
    /// `desc` (default) or `asc`.
    #[schemars(extend("enum" = ["desc", "asc", null]))]
    pub order: Option<String>,
    /// Rows to return, 1 to 500 (default 50).
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<i64>,
    /// Leave out areas with fewer sales than this in the window (default 1).
    #[schemars(range(min = 1))]
    pub min_n: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RankingQuery {
    pub metric: String,
    pub level: String,
    pub window: i64,
    pub end: Option<Month>,
    pub desc: bool,
    pub limit: i64,
    pub min_n: i64,
}

impl RankingBody {
    pub fn check(&self) -> Result<RankingQuery, Vec<Violation>> {
        let mut v = Vec::new();
        let metric = one_of(
            &["metric"],
            &self.metric,
            &["turnover_rate", "txn_count", "price_change"],
            "turnover_rate",
            &mut v,
        );
        let level = one_of(
            &["level"],
            &self.level,
            &["district", "local_authority"],
            "district",
            &mut v,
        );
        let order = one_of(&["order"], &self.order, &["desc", "asc"], "desc", &mut v);
        let window = in_range(&["window_months"], self.window_months, 1, 60, 12, &mut v);
        let limit = in_range(&["limit"], self.limit, 1, 500, 50, &mut v);
        let min_n = in_range(&["min_n"], self.min_n, 1, i64::MAX, 1, &mut v);
        let end = self
            .end
            .as_deref()
            .and_then(|s| parse_month(&["end"], s).map_err(|e| v.push(e)).ok());
        if v.is_empty() {
            Ok(RankingQuery {
                metric,
                level,
                window,
                end,
                desc: order == "desc",
                limit,
                min_n,
            })
        } else {
            Err(v)
        }
    }
}

/// Areas ranked on a market metric over a trailing window.
pub async fn ranking(db: &Db, q: &RankingQuery, today: NaiveDate) -> Result<Ranking, MarketError> {
    let end = match q.end {
        Some(e) => e,
        None => settled_end(db).await?,
    };
    let start = end.add_months(1 - q.window as i32);
    let (kind, prefix) = if q.level == "district" {
        ("district", "district:")
    } else {
        ("la", "la:")
    };
    let mut sales: HashMap<String, i64> = HashMap::new();
    for r in mk::volumes_with_prefix(db, prefix, &start.first_day(), &end.first_day()).await? {
        *sales.entry(r.geography).or_default() += r.txn_count;
    }
    let mut rows = Vec::new();
    for g in mk::geographies_of_kind(db, kind).await? {
        let n = sales.get(&g.geography).copied().unwrap_or(0);
        if n < q.min_n {
            continue;
        }
        let code = g.geography.trim_start_matches(prefix).to_string();
        let mut se = None;
        let value = match q.metric.as_str() {
            "txn_count" => Some(n as f64),
            "turnover_rate" => g
                .residential_stock
                .and_then(|s| an::turnover_rate(n as u64, s as u64))
                .map(|t| (t * 1e6).round() / 1e6),
            _ => {
                let points = mk::index_points(db, &g.geography).await?;
                let level = |m: Month| {
                    let label = m.to_string();
                    points
                        .iter()
                        .find(|p| !p.is_forecast && p.period == label)
                        .and_then(|p| Some((p.level?, p.log_se)))
                };
                match (level(start.add_months(-1)), level(end)) {
                    (Some((a, sa)), Some((b, sb))) if a > 0.0 => {
                        se = sa
                            .zip(sb)
                            .map(|(x, y)| ((b / a * (x * x + y * y).sqrt()) * 1e6).round() / 1e6);
                        Some(((b / a - 1.0) * 1e6).round() / 1e6)
                    }
                    _ => None,
                }
            }
        };
        if let Some(value) = value {
            rows.push(RankRow {
                rank: 0,
                geography: code,
                value,
                n,
                stock: g.residential_stock,
                se,
            });
        }
    }
    let (rows, n_ranked) = finish(rows, q.desc, q.limit);
    Ok(Ranking {
        country: "UK",
        metric: q.metric.clone(),
        level: q.level.clone(),
        from: start.to_string(),
        to: end.to_string(),
        rows,
        n_ranked,
        provisional_from: meta_month(db, META_PROVISIONAL_FROM)
            .await?
            .map(|m| m.first_day()),
        staleness: staleness(
            meta_month(db, META_DATA_THROUGH)
                .await?
                .map(|m| m.first_day())
                .as_deref(),
            today,
        ),
        notes: vec![
            "turnover_rate: registered sales (all categories) in the window over the residential addresses in the register (classes RD and RH); an area with no stock known is left out.",
            "price_change: the published (smoothed) index level at the window's last month over the level the month before it starts, minus one; se is its standard error.",
            "Months from provisional_from on are still being registered and undercount.",
        ],
    })
}
