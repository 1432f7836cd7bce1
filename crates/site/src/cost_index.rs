//! `GET /v1/site/cost-index`: a construction cost series by basis, sector and frequency, with its
//! base period, method and source (docs/METHODS.md, "Construction cost series").

use crate::{Basis, Freq, Period, Sector, SiteCtx, SiteError, Status, method_of, publisher_of};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use terrace_store::costs;

/// What the caller asked.
#[derive(Debug, Clone)]
pub struct CostIndexQuery {
    pub basis: Basis,
    /// Default `all_work`.
    pub sector: Sector,
    /// Default: the series' own frequency.
    pub freq: Option<Freq>,
    pub from_period: Option<Period>,
    pub to_period: Option<Period>,
}

/// One point of a series.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Point {
    /// In the series' own format (`2024M01`, `2024Q1`, `2024`).
    pub period: String,
    pub value: f64,
}

/// A stored series as loaded: its points at its own frequency, and what it is.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub freq: Freq,
    pub points: Vec<(Period, f64)>,
    pub title: String,
    pub unit: String,
    pub base_period: Option<String>,
    pub source: String,
}

impl Loaded {
    /// The value at `p` at the series' own frequency or, for a coarser period, the mean of the
    /// series' points in it when every one is present; `None` otherwise.
    pub fn value_at(&self, p: Period) -> Option<f64> {
        if p.freq() == self.freq {
            return self.points.iter().find(|(q, _)| *q == p).map(|(_, v)| *v);
        }
        let agg = aggregate(&self.points, self.freq, p.freq()).ok()?;
        agg.into_iter().find(|(q, _)| *q == p).map(|(_, v)| v)
    }

    pub fn latest(&self) -> Option<(Period, f64)> {
        self.points.last().copied()
    }
}

/// Reads the stored series of `basis` and `sector`; `None` when nothing is loaded. When points of
/// several frequencies are stored, the finest is the series (the others are the publisher's own
/// aggregates of it).
pub async fn load(
    ctx: &SiteCtx,
    basis: Basis,
    sector: Sector,
) -> Result<Option<Loaded>, SiteError> {
    let rows = costs::series(&ctx.db, basis.as_str(), sector.as_str()).await?;
    let Some(freq) = rows.iter().filter_map(|r| Freq::parse(&r.freq)).min() else {
        return Ok(None);
    };
    let rows: Vec<_> = rows
        .into_iter()
        .filter(|r| r.freq == freq.as_str())
        .collect();
    let mut points: Vec<(Period, f64)> = rows
        .iter()
        .filter_map(|r| Period::parse(&r.period).map(|p| (p, r.value)))
        .collect();
    points.sort_by_key(|a| a.0);
    let Some(first) = rows.last() else {
        return Ok(None);
    };
    Ok(Some(Loaded {
        freq,
        points,
        title: first.series_title.clone(),
        unit: first.unit.clone(),
        base_period: first.base_period.clone(),
        source: first.source.clone(),
    }))
}

/// The means of `points` (at frequency `from`) over the periods of the coarser frequency `to`,
/// keeping only periods whose every sub-period is present. Finer than the series: `Err` with the
/// reason.
pub fn aggregate(
    points: &[(Period, f64)],
    from: Freq,
    to: Freq,
) -> Result<Vec<(Period, f64)>, String> {
    if to == from {
        return Ok(points.to_vec());
    }
    if to < from {
        return Err(format!(
            "the series is published {}; a {} series is not derived from it (no interpolation)",
            from.as_str(),
            to.as_str()
        ));
    }
    let need = (from.per_year() / to.per_year()) as usize;
    let mut groups: BTreeMap<Period, Vec<f64>> = BTreeMap::new();
    for (p, v) in points {
        groups
            .entry(Period::of(to, p.start()))
            .or_default()
            .push(*v);
    }
    Ok(groups
        .into_iter()
        .filter(|(_, vs)| vs.len() == need)
        .map(|(p, vs)| (p, round(vs.iter().sum::<f64>() / need as f64, 3)))
        .collect())
}

/// `v` rounded to `places` decimal places.
pub fn round(v: f64, places: i32) -> f64 {
    let k = 10f64.powi(places);
    (v * k).round() / k
}

/// The series answered.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Series {
    /// The series' title as published.
    pub title: String,
    /// `index` (base period = 100) or `gbp_per_week`.
    pub unit: String,
    /// The base period of an index (`2015` = 100); null for a series in pounds.
    pub base_period: Option<String>,
    /// The series' own frequency, as published.
    pub published_freq: Freq,
    /// The frequency answered.
    pub freq: Freq,
    /// How the answered points were formed from the published ones.
    pub aggregation: String,
    pub method: String,
    pub publisher: String,
    /// The provenance of the stored points.
    pub source: String,
    pub first_period: String,
    pub last_period: String,
    pub n_points: usize,
    /// Oldest first.
    pub points: Vec<Point>,
}

/// The answer of `GET /v1/site/cost-index`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CostIndex {
    /// `ok`, or `not_available` with the reason (no series, nothing in the window); a
    /// `not_available` answer is free.
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub basis: Basis,
    pub sector: Sector,
    /// The frequency asked (null: the series' own).
    pub freq: Option<Freq>,
    pub from_period: Option<String>,
    pub to_period: Option<String>,
    /// The sectors loaded for this basis.
    pub sectors_loaded: Vec<String>,
    pub series: Option<Series>,
    /// Geographic coverage: UK-wide series; regional factors are not part of a cost index.
    pub coverage: String,
    pub notes: Vec<String>,
}

/// The series of the query, or `not_available` with the reason.
pub async fn cost_index(ctx: &SiteCtx, q: CostIndexQuery) -> Result<CostIndex, SiteError> {
    let sectors_loaded = costs::sectors(&ctx.db, q.basis.as_str()).await?;
    let mut out = CostIndex {
        status: Status::NotAvailable,
        reason: None,
        basis: q.basis,
        sector: q.sector,
        freq: q.freq,
        from_period: q.from_period.map(|p| p.to_string()),
        to_period: q.to_period.map(|p| p.to_string()),
        sectors_loaded: sectors_loaded.clone(),
        series: None,
        coverage: "United Kingdom (one national series; no regional breakdown)".into(),
        notes: Vec::new(),
    };
    if q.basis == Basis::Output {
        out.notes.push("output price indices are input-cost proxies (materials, plant, labour plus a profit mark-up), not tender prices".into());
    }
    let Some(series) = load(ctx, q.basis, q.sector).await? else {
        out.reason = Some(if sectors_loaded.is_empty() {
            not_loaded(q.basis)
        } else {
            format!(
                "no {} series is loaded for the sector {}; loaded: {}",
                q.basis.as_str(),
                q.sector.as_str(),
                sectors_loaded.join(", ")
            )
        });
        return Ok(out);
    };
    let freq = q.freq.unwrap_or(series.freq);
    let points = match aggregate(&series.points, series.freq, freq) {
        Ok(p) => p,
        Err(why) => {
            out.reason = Some(why);
            return Ok(out);
        }
    };
    let from = q.from_period.map(Period::start);
    let to = q.to_period.map(Period::end);
    let covered = match (points.first(), points.last()) {
        (Some(a), Some(b)) => format!("{} to {}", a.0, b.0),
        _ => "nothing".into(),
    };
    let points: Vec<(Period, f64)> = points
        .into_iter()
        .filter(|(p, _)| from.is_none_or(|f| p.start() >= f) && to.is_none_or(|t| p.end() <= t))
        .collect();
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        out.reason = Some(format!(
            "no {} point of the series lies wholly in the window; it covers {covered}",
            freq.as_str()
        ));
        return Ok(out);
    };
    let aggregation = if freq == series.freq {
        "as published".to_string()
    } else {
        format!(
            "the mean of the published {} values of each {} period; periods not wholly published are left out",
            series.freq.as_str(),
            if freq == Freq::Quarterly {
                "quarter"
            } else {
                "year"
            }
        )
    };
    out.status = Status::Ok;
    out.series = Some(Series {
        title: series.title,
        unit: series.unit,
        base_period: series.base_period,
        published_freq: series.freq,
        freq,
        aggregation,
        method: method_of(q.basis).into(),
        publisher: publisher_of(q.basis).into(),
        source: series.source,
        first_period: first.0.to_string(),
        last_period: last.0.to_string(),
        n_points: points.len(),
        points: points
            .iter()
            .map(|(p, v)| Point {
                period: p.to_string(),
                value: *v,
            })
            .collect(),
    });
    Ok(out)
}

/// Why nothing of a basis is loaded.
pub fn not_loaded(basis: Basis) -> String {
    match basis {
        Basis::Tender => "no tender price index is loaded: no open source publishes one (BCIS is licensed); an operator loads its own as the tender price feed (docs/DATA.md)".into(),
        Basis::Output | Basis::Deflator | Basis::Labour => format!(
            "no {} series is loaded: load the ONS construction price spreadsheet (`cargo xtask load ons_construction_prices`)",
            basis.as_str()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn months(year: i32, vals: &[f64]) -> Vec<(Period, f64)> {
        vals.iter()
            .enumerate()
            .map(|(i, v)| (Period::Month(year, i as u32 + 1), *v))
            .collect()
    }

    #[test]
    fn quarters_and_years_are_means_of_whole_periods() {
        let pts = months(
            2024,
            &[100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0],
        );
        let q = aggregate(&pts, Freq::Monthly, Freq::Quarterly).unwrap();
        assert_eq!(
            q,
            vec![
                (Period::Quarter(2024, 1), 101.0),
                (Period::Quarter(2024, 2), 104.0)
            ]
        );
        assert_eq!(
            aggregate(&pts, Freq::Monthly, Freq::Annual).unwrap(),
            vec![]
        );
        let whole = months(2023, &[1.0; 12]);
        assert_eq!(
            aggregate(&whole, Freq::Monthly, Freq::Annual).unwrap(),
            vec![(Period::Year(2023), 1.0)]
        );
        let err = aggregate(&q, Freq::Quarterly, Freq::Monthly).unwrap_err();
        assert!(err.contains("published quarterly"), "{err}");
    }
}
