//! Site operations (specification part 4.4): construction cost series and build-cost estimates.

use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::registry::{Ctx, NoBody, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_core::Violation;
use terrace_site::build_cost::{BuildCost, BuildCostQuery};
use terrace_site::cost_index::{CostIndex, CostIndexQuery};
use terrace_site::{
    Basis, Freq, PERIOD_PATTERN, Period, Region, Sector, SiteCtx, SiteError, Status,
};
use validator::Validate;

const TAG: &str = "site";

/// The site family's operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[&BUILD_COST, &COST_INDEX];

fn site_ctx(ctx: &Ctx) -> SiteCtx {
    SiteCtx {
        db: ctx.state.db.clone(),
    }
}

fn site_error(e: SiteError) -> ApiError {
    match e {
        SiteError::Invalid(v) => invalid(In::Query, v),
        SiteError::Store(s) => s.into(),
    }
}

/// A period parameter, or the violation that says its forms.
fn period(field: &str, raw: &Option<String>) -> Result<Option<Period>, Violation> {
    match raw {
        None => Ok(None),
        Some(s) => Period::parse(s).map(Some).ok_or_else(|| {
            Violation::new(
                &[field],
                "value_error",
                format!(
                    "Value error, {field} is a month (2024M01), a quarter (2024Q1) or a year (2024), 1900 to 2099"
                ),
            )
            .with_input(s.clone())
        }),
    }
}

fn all_work() -> Sector {
    Sector::AllWork
}

/// The query of `GET /v1/site/cost-index`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CostIndexParams {
    /// `tender` (tender price index: the operator's feed), `output` (ONS output price indices),
    /// `deflator` (construction output implied deflator) or `labour` (average weekly earnings in
    /// construction)
    pub basis: Basis,
    /// The work type (default all_work)
    #[serde(default = "all_work")]
    pub sector: Sector,
    /// monthly, quarterly or annual (default: the series' own); coarser periods are means of
    /// wholly published finer ones, finer ones are never derived
    pub freq: Option<Freq>,
    /// First period of the window, inclusive: a month (2014M01), quarter (2014Q1) or year (2014)
    #[schemars(regex(pattern = PERIOD_PATTERN))]
    pub from_period: Option<String>,
    /// Last period of the window, inclusive, in the same forms; not before from_period
    #[schemars(regex(pattern = PERIOD_PATTERN))]
    pub to_period: Option<String>,
}

pub struct CostIndexOp;

impl Operation for CostIndexOp {
    type Params = CostIndexParams;
    type Body = NoBody;
    type Input = CostIndexQuery;
    type Output = CostIndex;

    fn check(p: CostIndexParams, _: NoBody) -> Result<CostIndexQuery, ApiError> {
        let from = period("from_period", &p.from_period);
        let to = period("to_period", &p.to_period);
        let (from, to) = match (from, to) {
            (Ok(f), Ok(t)) => (f, t),
            (f, t) => {
                let v = [f.err(), t.err()].into_iter().flatten().collect();
                return Err(invalid(In::Query, v));
            }
        };
        if let (Some(f), Some(t)) = (from, to)
            && f.start() > t.end()
        {
            return Err(invalid(
                In::Query,
                vec![
                    Violation::new(
                        &["to_period"],
                        "value_error",
                        "Value error, to_period is before from_period",
                    )
                    .with_input(t.to_string()),
                ],
            ));
        }
        Ok(CostIndexQuery {
            basis: p.basis,
            sector: p.sector,
            freq: p.freq,
            from_period: from,
            to_period: to,
        })
    }

    async fn run(ctx: &Ctx, q: CostIndexQuery) -> Result<CostIndex, ApiError> {
        terrace_site::cost_index::cost_index(&site_ctx(ctx), q)
            .await
            .map_err(site_error)
    }

    /// Nothing is charged when no series can be given.
    fn charged_items(out: &CostIndex) -> Option<i64> {
        match out.status {
            Status::Ok => None,
            Status::NotAvailable => Some(0),
        }
    }
}

pub(crate) static COST_INDEX: OpDecl = OpDecl {
    id: "site_cost_index",
    path: "/v1/site/cost-index",
    summary: "A construction cost series by basis, sector and frequency",
    description: "A UK construction cost series with its base period, method, publisher and source: `output` is the ONS construction output price indices (monthly, 2015 = 100, by work type; input costs plus a profit mark-up as a proxy for output prices, not tender prices), `deflator` the construction output implied deflator, `labour` average weekly earnings in construction (pounds per week), `tender` a tender price index, answered only when the operator has loaded one (no open source publishes it). `sector` is the ONS work type (default all_work); `freq` monthly, quarterly or annual (default the series' own: a coarser period is the mean of the wholly published finer ones; a finer one is never derived); `from_period` and `to_period` bound an inclusive window in the series' own format (2014M01, 2014Q1, 2014). `status` is `not_available` with the reason when the basis or sector is not loaded, the frequency is finer than published, or no point lies in the window; such an answer is free.",
    price: Price::PerCall(1),
    ..OpDecl::of::<CostIndexOp>(TAG)
};

fn national() -> Region {
    Region::National
}

/// The query of `GET /v1/site/build-cost`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildCostParams {
    /// The work type whose index carries the rate
    pub sector: Sector,
    /// The region of the location factor (default NATIONAL, factor 1)
    #[serde(default = "national")]
    pub region: Region,
    /// Gross internal area in square metres (with rate_gbp_m2, for an estimate)
    #[validate(range(min = 1.0, max = 10_000_000.0))]
    pub gia_m2: Option<f64>,
    /// Your base rate in pounds per square metre of gross internal area (BCIS or in-house)
    #[validate(range(min = 1.0, max = 100_000.0))]
    pub rate_gbp_m2: Option<f64>,
    /// The period the rate is priced at, in the series' own format (2024Q1, 2024M01, 2024);
    /// default the index's latest period
    #[schemars(regex(pattern = PERIOD_PATTERN))]
    pub rate_period: Option<String>,
}

pub struct BuildCostOp;

impl Operation for BuildCostOp {
    type Params = BuildCostParams;
    type Body = NoBody;
    type Input = BuildCostQuery;
    type Output = BuildCost;

    fn check(p: BuildCostParams, _: NoBody) -> Result<BuildCostQuery, ApiError> {
        let mut v = Vec::new();
        for (name, x) in [("gia_m2", p.gia_m2), ("rate_gbp_m2", p.rate_gbp_m2)] {
            if x.is_some_and(|x| !x.is_finite()) {
                v.push(Violation::new(
                    &[name],
                    "value_error",
                    format!("Value error, {name} is a finite number"),
                ));
            }
        }
        let rate_period = period("rate_period", &p.rate_period).unwrap_or_else(|e| {
            v.push(e);
            None
        });
        if !v.is_empty() {
            return Err(invalid(In::Query, v));
        }
        Ok(BuildCostQuery {
            sector: p.sector,
            region: p.region,
            gia_m2: p.gia_m2,
            rate_gbp_m2: p.rate_gbp_m2,
            rate_period,
        })
    }

    async fn run(ctx: &Ctx, q: BuildCostQuery) -> Result<BuildCost, ApiError> {
        terrace_site::build_cost::build_cost(&site_ctx(ctx), q)
            .await
            .map_err(site_error)
    }

    /// Nothing is charged when no index of the sector is loaded.
    fn charged_items(out: &BuildCost) -> Option<i64> {
        (!out.answered()).then_some(0)
    }
}

pub(crate) static BUILD_COST: OpDecl = OpDecl {
    id: "site_build_cost",
    path: "/v1/site/build-cost",
    summary: "A sector's cost index movement, location factor, on-costs and a build-cost estimate",
    description: "For a work type: its cost index (the operator's tender price index when loaded, else the ONS output price index) with the latest value and the 1- and 5-year movement; the regional location factor (NATIONAL is 1 by definition; any other region is `not_available` until the operator loads a location-factor table, since no open source publishes one); the on-cost percentages (preliminaries, contingency, overheads and profit, professional fees at low, mid and high), which are editorial constants and say so; and, given `gia_m2` and `rate_gbp_m2` (with `rate_period`, the period the rate is priced at, default the latest), an estimate: the rate carried through the index to the latest period, localised, multiplied by the area, with totals at the three on-cost levels (docs/METHODS.md). The benchmark rate per square metre is `not_available` until a tender benchmark is loaded: no rate is invented. An answer with no index for the sector is free.",
    price: Price::PerCall(2),
    ..OpDecl::of::<BuildCostOp>(TAG)
};
