//! `GET /v1/site/build-cost`: a sector's cost index with its 1- and 5-year movement, the regional
//! location factor, the editorial on-cost percentages and, given a floor area and a rate, an
//! estimate carried to the latest period (docs/METHODS.md, "Build-cost estimate").

use crate::cost_index::{Loaded, load, not_loaded, round};
use crate::{Basis, Freq, Period, Region, Sector, SiteCtx, SiteError, Status, method_of};
use schemars::JsonSchema;
use serde::Serialize;
use terrace_store::costs;

/// What the caller asked.
#[derive(Debug, Clone)]
pub struct BuildCostQuery {
    pub sector: Sector,
    pub region: Region,
    pub gia_m2: Option<f64>,
    pub rate_gbp_m2: Option<f64>,
    pub rate_period: Option<Period>,
}

/// One on-cost, as a percentage of the localised base cost at three levels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct OnCost {
    pub name: &'static str,
    pub low_pct: f64,
    pub mid_pct: f64,
    pub high_pct: f64,
}

/// The editorial on-cost percentages: Terrace's own round figures for a typical UK new-build
/// project (docs/METHODS.md), not a measurement.
pub const ON_COSTS: [OnCost; 4] = [
    OnCost {
        name: "preliminaries",
        low_pct: 10.0,
        mid_pct: 13.0,
        high_pct: 16.0,
    },
    OnCost {
        name: "contingency",
        low_pct: 3.0,
        mid_pct: 5.0,
        high_pct: 10.0,
    },
    OnCost {
        name: "overheads_and_profit",
        low_pct: 4.0,
        mid_pct: 6.0,
        high_pct: 8.0,
    },
    OnCost {
        name: "professional_fees",
        low_pct: 8.0,
        mid_pct: 10.0,
        high_pct: 12.0,
    },
];

/// The on-cost block.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OnCosts {
    /// Always true: these are editorial constants, not data.
    pub editorial: bool,
    pub note: String,
    pub items: Vec<OnCost>,
    pub total_low_pct: f64,
    pub total_mid_pct: f64,
    pub total_high_pct: f64,
}

fn on_costs() -> OnCosts {
    let sum = |f: fn(&OnCost) -> f64| round(ON_COSTS.iter().map(f).sum(), 2);
    OnCosts {
        editorial: true,
        note: "editorial constants set by Terrace for a typical UK new-build project (docs/METHODS.md), each a percentage of the localised base cost, added together; not measured from any dataset".into(),
        items: ON_COSTS.to_vec(),
        total_low_pct: sum(|c| c.low_pct),
        total_mid_pct: sum(|c| c.mid_pct),
        total_high_pct: sum(|c| c.high_pct),
    }
}

/// A movement of the index over a span.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Movement {
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub from_period: String,
    pub from_value: Option<f64>,
    /// Percentage change from `from_period` to the latest period, two places.
    pub change_pct: Option<f64>,
}

/// The sector's index block.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct IndexBlock {
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `tender` when an operator's tender index is loaded for the sector, else `output`.
    pub basis: Basis,
    pub title: Option<String>,
    pub base_period: Option<String>,
    pub freq: Option<Freq>,
    pub method: String,
    pub source: Option<String>,
    pub latest_period: Option<String>,
    pub latest_value: Option<f64>,
    pub one_year: Option<Movement>,
    pub five_year: Option<Movement>,
}

/// The regional location factor block.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LocationFactor {
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub region: Region,
    /// The region's cost level over the national (national = 1).
    pub factor: Option<f64>,
    pub period: Option<String>,
    pub source: Option<String>,
    /// The regions the loaded table covers.
    pub regions_loaded: Vec<String>,
}

/// Totals at the three on-cost levels, in pounds.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Totals {
    pub low_gbp: f64,
    pub mid_gbp: f64,
    pub high_gbp: f64,
}

/// The estimate block.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Estimate {
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub gia_m2: Option<f64>,
    pub rate_gbp_m2: Option<f64>,
    /// The period the rate is priced at (default: the latest period of the index).
    pub rate_period: Option<String>,
    pub index_at_rate_period: Option<f64>,
    pub latest_period: Option<String>,
    pub index_latest: Option<f64>,
    /// Latest index over the index at the rate's period.
    pub index_factor: Option<f64>,
    /// The rate carried to the latest period.
    pub rebased_rate_gbp_m2: Option<f64>,
    /// Whether the regional location factor was applied (false: national rate, with the reason
    /// in `notes`).
    pub localised: bool,
    pub location_factor: Option<f64>,
    pub localised_rate_gbp_m2: Option<f64>,
    /// Localised rate times the floor area, before on-costs.
    pub base_cost_gbp: Option<f64>,
    pub totals: Option<Totals>,
    pub notes: Vec<String>,
}

/// The tender benchmark block.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Benchmark {
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub period: Option<String>,
    pub rate_low_gbp_m2: Option<f64>,
    pub rate_mid_gbp_m2: Option<f64>,
    pub rate_high_gbp_m2: Option<f64>,
    pub source: Option<String>,
}

/// The answer of `GET /v1/site/build-cost`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BuildCost {
    pub sector: Sector,
    pub region: Region,
    pub index: IndexBlock,
    pub location_factor: LocationFactor,
    pub on_costs: OnCosts,
    pub estimate: Estimate,
    pub benchmark: Benchmark,
}

impl BuildCost {
    /// Whether anything was answered from data: a sector index is loaded.
    pub fn answered(&self) -> bool {
        self.index.status == Status::Ok
    }
}

fn movement(s: &Loaded, latest: (Period, f64), years: u32) -> Movement {
    let from = latest.0.back(years * s.freq.per_year());
    match s.value_at(from) {
        Some(v) if v > 0.0 => Movement {
            status: Status::Ok,
            reason: None,
            from_period: from.to_string(),
            from_value: Some(v),
            change_pct: Some(round((latest.1 / v - 1.0) * 100.0, 2)),
        },
        Some(_) | None => Movement {
            status: Status::NotAvailable,
            reason: Some(format!("the series has no value for {from}")),
            from_period: from.to_string(),
            from_value: None,
            change_pct: None,
        },
    }
}

async fn location_factor(ctx: &SiteCtx, region: Region) -> Result<LocationFactor, SiteError> {
    let rows = costs::location_factors(&ctx.db).await?;
    let regions_loaded: Vec<String> = rows.iter().map(|r| r.region.clone()).collect();
    let mut out = LocationFactor {
        status: Status::NotAvailable,
        reason: None,
        region,
        factor: None,
        period: None,
        source: None,
        regions_loaded,
    };
    if region == Region::National {
        out.status = Status::Ok;
        out.factor = Some(1.0);
        out.reason = None;
        out.source =
            Some("definition: the national series is the base of every location factor".into());
        return Ok(out);
    }
    match rows.into_iter().find(|r| r.region == region.as_str()) {
        Some(r) => {
            out.status = Status::Ok;
            out.factor = Some(r.factor);
            out.period = r.period;
            out.source = Some(r.source);
        }
        None if out.regions_loaded.is_empty() => {
            out.reason = Some("no location-factor table is loaded: no open source publishes regional construction cost factors (BCIS is licensed); an operator loads its own (docs/DATA.md, \"Location factor feed\")".into());
        }
        None => {
            out.reason = Some(format!(
                "the loaded location-factor table has no factor for {}; it covers {}",
                region.as_str(),
                out.regions_loaded.join(", ")
            ));
        }
    }
    Ok(out)
}

async fn benchmark(ctx: &SiteCtx, sector: Sector) -> Result<Benchmark, SiteError> {
    let rows = costs::benchmarks(&ctx.db, sector.as_str()).await?;
    Ok(match rows.into_iter().last() {
        Some(r) => Benchmark {
            status: Status::Ok,
            reason: None,
            period: Some(r.period),
            rate_low_gbp_m2: Some(r.rate_low),
            rate_mid_gbp_m2: Some(r.rate_mid),
            rate_high_gbp_m2: Some(r.rate_high),
            source: Some(r.source),
        },
        None => Benchmark {
            status: Status::NotAvailable,
            reason: Some(format!(
                "no tender benchmark per square metre is loaded for {}: no open source publishes one (BCIS is licensed) and no rate is invented; an operator loads its own (docs/DATA.md, \"Tender benchmark feed\")",
                sector.as_str()
            )),
            period: None,
            rate_low_gbp_m2: None,
            rate_mid_gbp_m2: None,
            rate_high_gbp_m2: None,
            source: None,
        },
    })
}

/// The estimate's arithmetic (docs/METHODS.md): the rate carried through the index from its
/// period to the latest, times the location factor (when there is one), times the floor area,
/// then totals at each on-cost level.
#[allow(clippy::too_many_arguments)]
pub fn estimate(
    gia_m2: f64,
    rate_gbp_m2: f64,
    rate_period: Period,
    index_at_rate: f64,
    latest: (Period, f64),
    factor: Option<f64>,
    on: &OnCosts,
) -> Estimate {
    let index_factor = latest.1 / index_at_rate;
    let rebased = rate_gbp_m2 * index_factor;
    let localised_rate = rebased * factor.unwrap_or(1.0);
    let base = localised_rate * gia_m2;
    let total = |pct: f64| round(base * (1.0 + pct / 100.0), 2);
    Estimate {
        status: Status::Ok,
        reason: None,
        gia_m2: Some(gia_m2),
        rate_gbp_m2: Some(rate_gbp_m2),
        rate_period: Some(rate_period.to_string()),
        index_at_rate_period: Some(index_at_rate),
        latest_period: Some(latest.0.to_string()),
        index_latest: Some(latest.1),
        index_factor: Some(round(index_factor, 6)),
        rebased_rate_gbp_m2: Some(round(rebased, 2)),
        localised: factor.is_some(),
        location_factor: factor,
        localised_rate_gbp_m2: Some(round(localised_rate, 2)),
        base_cost_gbp: Some(round(base, 2)),
        totals: Some(Totals {
            low_gbp: total(on.total_low_pct),
            mid_gbp: total(on.total_mid_pct),
            high_gbp: total(on.total_high_pct),
        }),
        notes: Vec::new(),
    }
}

fn no_estimate(q: &BuildCostQuery, reason: String) -> Estimate {
    Estimate {
        status: Status::NotAvailable,
        reason: Some(reason),
        gia_m2: q.gia_m2,
        rate_gbp_m2: q.rate_gbp_m2,
        rate_period: q.rate_period.map(|p| p.to_string()),
        index_at_rate_period: None,
        latest_period: None,
        index_latest: None,
        index_factor: None,
        rebased_rate_gbp_m2: None,
        localised: false,
        location_factor: None,
        localised_rate_gbp_m2: None,
        base_cost_gbp: None,
        totals: None,
        notes: Vec::new(),
    }
}

/// The build-cost answer for the query.
pub async fn build_cost(ctx: &SiteCtx, q: BuildCostQuery) -> Result<BuildCost, SiteError> {
    let (basis, series) = match load(ctx, Basis::Tender, q.sector).await? {
        Some(s) => (Basis::Tender, Some(s)),
        None => (Basis::Output, load(ctx, Basis::Output, q.sector).await?),
    };
    let mut index = IndexBlock {
        status: Status::NotAvailable,
        reason: None,
        basis,
        title: None,
        base_period: None,
        freq: None,
        method: method_of(basis).into(),
        source: None,
        latest_period: None,
        latest_value: None,
        one_year: None,
        five_year: None,
    };
    let latest = series.as_ref().and_then(Loaded::latest);
    match (&series, latest) {
        (Some(s), Some(l)) => {
            index.status = Status::Ok;
            index.title = Some(s.title.clone());
            index.base_period = s.base_period.clone();
            index.freq = Some(s.freq);
            index.source = Some(s.source.clone());
            index.latest_period = Some(l.0.to_string());
            index.latest_value = Some(l.1);
            index.one_year = Some(movement(s, l, 1));
            index.five_year = Some(movement(s, l, 5));
        }
        _ => {
            let any = costs::sectors(&ctx.db, Basis::Output.as_str()).await?;
            index.reason = Some(if any.is_empty() {
                not_loaded(Basis::Output)
            } else {
                format!(
                    "no cost index is loaded for the sector {}; loaded: {}",
                    q.sector.as_str(),
                    any.join(", ")
                )
            });
        }
    }
    let location = location_factor(ctx, q.region).await?;
    let on = on_costs();
    let estimate = match (&series, latest, q.gia_m2, q.rate_gbp_m2) {
        (_, _, None, _) | (_, _, _, None) => no_estimate(
            &q,
            "give both gia_m2 and rate_gbp_m2 (with rate_period, the period the rate is priced at; default the latest) for an estimate".into(),
        ),
        (None, _, _, _) | (_, None, _, _) => no_estimate(
            &q,
            format!("no cost index to carry the rate through: {}", index.reason.clone().unwrap_or_default()),
        ),
        (Some(s), Some(l), Some(gia), Some(rate)) => {
            let at = q.rate_period.unwrap_or(l.0);
            match s.value_at(at) {
                None => no_estimate(
                    &q,
                    format!(
                        "the index has no value for rate_period {at} (it covers {} to {} {}; a quarter or year needs every month published)",
                        s.points.first().map(|p| p.0.to_string()).unwrap_or_default(),
                        l.0,
                        s.freq.as_str()
                    ),
                ),
                Some(v) if v <= 0.0 => no_estimate(&q, format!("the index at {at} is not positive")),
                Some(v) => {
                    let mut e = estimate(gia, rate, at, v, l, location.factor, &on);
                    if q.rate_period.is_none() {
                        e.notes.push("no rate_period given: the rate is taken as priced at the latest period (index factor 1)".into());
                    }
                    if let Some(why) = &location.reason {
                        e.notes.push(format!("not localised: {why}; the total is at the national level"));
                    }
                    e
                }
            }
        }
    };
    let benchmark = benchmark(ctx, q.sector).await?;
    Ok(BuildCost {
        sector: q.sector,
        region: q.region,
        index,
        location_factor: location,
        on_costs: on,
        estimate,
        benchmark,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_carries_localises_and_adds_on_costs() {
        let on = on_costs();
        assert_eq!(
            (on.total_low_pct, on.total_mid_pct, on.total_high_pct),
            (25.0, 34.0, 46.0)
        );
        // £2,000/m² priced in 2020Q1 at index 100; latest 2024M06 at 125; London 1.1; 500 m².
        let e = estimate(
            500.0,
            2000.0,
            Period::Quarter(2020, 1),
            100.0,
            (Period::Month(2024, 6), 125.0),
            Some(1.1),
            &on,
        );
        assert_eq!(e.index_factor, Some(1.25));
        assert_eq!(e.rebased_rate_gbp_m2, Some(2500.0));
        assert_eq!(e.localised_rate_gbp_m2, Some(2750.0));
        assert_eq!(e.base_cost_gbp, Some(1_375_000.0));
        let t = e.totals.unwrap();
        assert_eq!(
            (t.low_gbp, t.mid_gbp, t.high_gbp),
            (1_718_750.0, 1_842_500.0, 2_007_500.0)
        );
        assert!(e.localised);
        let national = estimate(
            10.0,
            1000.0,
            Period::Month(2024, 6),
            125.0,
            (Period::Month(2024, 6), 125.0),
            None,
            &on,
        );
        assert!(!national.localised);
        assert_eq!(national.base_cost_gbp, Some(10_000.0));
    }
}
