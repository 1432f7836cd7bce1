//! Market operations (specification part 4.3): published indices, forecasts, time adjustment,
//! transaction volumes and rankings, read from the tables `cargo xtask build` derives.

use crate::error::ApiError;
use crate::input::{In, invalid, month_param};
use crate::registry::{Ctx, Json, NoBody, NoParams, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_analytics::Month;
use terrace_market as market;
use terrace_market::series::{IndexGeo, parse_month};
use terrace_market::{MarketError, Violation};
use validator::Validate;

const TAG: &str = "market";

/// The market family's operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[
    &FORECAST,
    &INDEX_SERIES,
    &RANKING,
    &TIME_ADJUSTMENT,
    &VOLUME_SERIES,
    &VOLUME_RANKING,
];

/// A market error of an input read from `at`.
fn market_error(at: In) -> impl Fn(MarketError) -> ApiError {
    move |e| match e {
        MarketError::NotFound(what) => ApiError::NotFound(what),
        MarketError::Invalid(vs) => invalid(at, vs),
        MarketError::Analytics(a) => ApiError::Internal(a.to_string()),
        MarketError::Store(s) => s.into(),
    }
}

/// Every violation found, or the value.
fn all<T>(found: Vec<Violation>, value: Option<T>) -> Result<T, ApiError> {
    match value {
        Some(v) if found.is_empty() => Ok(v),
        Some(_) | None => Err(invalid(In::Query, found)),
    }
}

/// The schema states the geography rule of the index operations: exactly one of `district` and
/// `local_authority` (the OpenAPI document gives them as one exploded object parameter).
fn one_index_geography(schema: &mut schemars::Schema) {
    terrace_core::patterns::exactly_one_of(schema, &[&["district"], &["local_authority"]]);
}

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = one_index_geography)]
pub struct IndexParams {
    /// A postcode district (outward code, EX1); a full postcode is truncated to its district. Exactly one of district and local_authority.
    #[schemars(regex(pattern = terrace_core::patterns::DISTRICT))]
    pub district: Option<String>,
    /// A local authority GSS code (E07000041). Exactly one of district and local_authority.
    #[schemars(regex(pattern = terrace_core::patterns::GSS_CODE))]
    pub local_authority: Option<String>,
    /// First period, YYYY-MM or YYYY-MM-DD; not after `to`
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub from: Option<String>,
    /// Last period, YYYY-MM or YYYY-MM-DD
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub to: Option<String>,
}

/// A checked index request: the geography and the periods.
pub struct IndexRequest {
    pub geo: IndexGeo,
    pub from: Option<Month>,
    pub to: Option<Month>,
}

pub struct IndexSeries;

impl Operation for IndexSeries {
    type Params = IndexParams;
    type Body = NoBody;
    type Input = IndexRequest;
    type Output = market::IndexSeriesResult;

    fn check(p: IndexParams, _: NoBody) -> Result<IndexRequest, ApiError> {
        let mut found = Vec::new();
        let geo = IndexGeo::parse(p.district.as_deref(), p.local_authority.as_deref())
            .map_err(|v| found.push(v))
            .ok();
        let from = month_param("from", p.from.as_deref(), &mut found);
        let to = month_param("to", p.to.as_deref(), &mut found);
        all(found, geo).map(|geo| IndexRequest { geo, from, to })
    }

    async fn run(ctx: &Ctx, r: IndexRequest) -> Result<market::IndexSeriesResult, ApiError> {
        let (db, cache) = (&ctx.state.db, &ctx.state.market);
        market::index_series(db, cache, &r.geo, r.from, r.to, ctx.now.date_naive())
            .await
            .map_err(market_error(In::Query))
    }
}

pub(crate) static INDEX_SERIES: OpDecl = OpDecl {
    id: "market_index_series",
    path: "/v1/market/index-series",
    summary: "The published house price index of a postcode district or local authority (free)",
    description: "Per-period index levels (base period = 100, stated), from registered sales: repeat-sales where the geography has enough pairs, hedonic otherwise, shrunk toward the parent geography (district to postcode area to the nation; local authority to the nation) when data is thin. The estimated rows stop at the last settled month (months from `provisional_from` on are still being registered and are never estimated from their incomplete counts); the forecast rows that follow (`is_forecast`) carry `lo` and `hi` at the stated coverage. `provenance` gives `index_method`, `index_decision` (which method and why, with the counts), the base period and the last settled period. Exactly one of `district` and `local_authority`. UK only.",
    ..OpDecl::of::<IndexSeries>(TAG)
};

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = one_index_geography)]
pub struct GeoParams {
    /// A postcode district (outward code, EX1); a full postcode is truncated to its district. Exactly one of district and local_authority.
    #[schemars(regex(pattern = terrace_core::patterns::DISTRICT))]
    pub district: Option<String>,
    /// A local authority GSS code (E07000041). Exactly one of district and local_authority.
    #[schemars(regex(pattern = terrace_core::patterns::GSS_CODE))]
    pub local_authority: Option<String>,
}

pub struct Forecast;

impl Operation for Forecast {
    type Params = GeoParams;
    type Body = NoBody;
    type Input = IndexGeo;
    type Output = market::Forecast;

    fn check(p: GeoParams, _: NoBody) -> Result<IndexGeo, ApiError> {
        IndexGeo::parse(p.district.as_deref(), p.local_authority.as_deref())
            .map_err(|v| invalid(In::Query, vec![v]))
    }

    async fn run(ctx: &Ctx, geo: IndexGeo) -> Result<market::Forecast, ApiError> {
        market::forecast(&ctx.state.db, &ctx.state.market, &geo, ctx.now.date_naive())
            .await
            .map_err(market_error(In::Query))
    }
}

pub(crate) static FORECAST: OpDecl = OpDecl {
    id: "market_forecast",
    path: "/v1/market/forecast",
    summary: "The published index forecast of a postcode district or local authority",
    description: "The last settled index point as the anchor (never a provisional period), then seven forecast periods, each with `lo` and `hi` at the stated `interval_coverage`, plus `method` and `grain`. The method is a damped trend on log index levels, published only when it beat naive drift on the rolling-origin backtest of the national series; otherwise naive drift. Exactly one of `district` and `local_authority`. UK only.",
    price: Price::PerCall(2),
    ..OpDecl::of::<Forecast>(TAG)
};

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeAdjustmentParams {
    /// A postcode district (outward code, EX1); a full postcode is truncated to its district
    #[schemars(regex(pattern = terrace_core::patterns::DISTRICT))]
    pub district: String,
    /// The period a price was agreed, YYYY-MM or YYYY-MM-DD
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub from: String,
    /// The period to carry it to, YYYY-MM or YYYY-MM-DD (default: the last settled period)
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub to: Option<String>,
}

/// A checked time adjustment: the district and the periods.
pub struct Adjustment {
    pub district: String,
    pub from: Month,
    pub to: Option<Month>,
}

pub struct TimeAdjustment;

impl Operation for TimeAdjustment {
    type Params = TimeAdjustmentParams;
    type Body = NoBody;
    type Input = Adjustment;
    type Output = market::TimeAdjustmentResult;

    fn check(p: TimeAdjustmentParams, _: NoBody) -> Result<Adjustment, ApiError> {
        // The first rule broken is reported, as before: the district, then the periods.
        let district = match IndexGeo::parse(Some(&p.district), None) {
            Ok(IndexGeo::District(d)) => d,
            Ok(IndexGeo::LocalAuthority(_)) => {
                return Err(ApiError::Internal(
                    "a district parsed as an authority".into(),
                ));
            }
            Err(v) => return Err(invalid(In::Query, vec![v])),
        };
        let from = parse_month(&["from"], &p.from).map_err(|v| invalid(In::Query, vec![v]))?;
        let to =
            p.to.as_deref()
                .map(|s| parse_month(&["to"], s).map_err(|v| invalid(In::Query, vec![v])))
                .transpose()?;
        Ok(Adjustment { district, from, to })
    }

    async fn run(ctx: &Ctx, a: Adjustment) -> Result<market::TimeAdjustmentResult, ApiError> {
        let (db, cache) = (&ctx.state.db, &ctx.state.market);
        market::time_adjustment(db, cache, &a.district, a.from, a.to, ctx.now.date_naive())
            .await
            .map_err(market_error(In::Query))
    }
}

pub(crate) static TIME_ADJUSTMENT: OpDecl = OpDecl {
    id: "market_time_adjustment",
    path: "/v1/market/time-adjustment",
    summary: "Carry a price from one period to another with a district's index",
    description: "For a postcode district: the from-period and to-period index levels, the multiplier (to over from) and the source index: its geography, method and decision, which for a thin district is a series shrunk toward its postcode area. `to` defaults to the last settled period; a provisional `to` is flagged. A period outside the series is 404 (the message gives the series' first and last periods). UK only.",
    price: Price::PerCall(1),
    ..OpDecl::of::<TimeAdjustment>(TAG)
};

/// A market body: the market crate's own, whose rules are the domain's (its `check`).
macro_rules! market_body {
    ($wrapper:ident($body:ty) -> $query:ty) => {
        #[derive(Debug, Deserialize)]
        #[serde(transparent)]
        pub struct $wrapper(pub $body);

        crate::registry::schema_as!($wrapper => $body);

        impl Validate for $wrapper {
            fn validate(&self) -> Result<(), validator::ValidationErrors> {
                Ok(())
            }
        }

        impl $wrapper {
            fn checked(&self) -> Result<$query, ApiError> {
                self.0.check().map_err(|vs| invalid(In::Body, vs))
            }
        }
    };
}

market_body!(VolumeSeriesBody(market::VolumeSeriesBody) -> market::volume::VolumeQuery);
market_body!(VolumeRankingBody(market::VolumeRankingBody) -> market::ranking::VolumeRankingQuery);
market_body!(RankingBody(market::RankingBody) -> market::ranking::RankingQuery);

pub struct VolumeSeries;

impl Operation for VolumeSeries {
    type Params = NoParams;
    type Body = Json<VolumeSeriesBody>;
    type Input = market::volume::VolumeQuery;
    type Output = market::VolumeSeriesResponse;

    fn check(_: NoParams, Json(b): Json<VolumeSeriesBody>) -> Result<Self::Input, ApiError> {
        b.checked()
    }

    async fn run(ctx: &Ctx, q: Self::Input) -> Result<market::VolumeSeriesResponse, ApiError> {
        market::volume_series(&ctx.state.db, &ctx.state.market, &q, ctx.now.date_naive())
            .await
            .map_err(market_error(In::Body))
    }
}

pub(crate) static VOLUME_SERIES: OpDecl = OpDecl {
    id: "market_volume_series",
    path: "/v1/market/volume-series",
    summary: "Monthly registered-sale volumes and prices for a district, area or county (free)",
    description: "Exactly one of `district` (a full postcode is truncated to its district; a borough name is 422), `area` and `county` (upper case); `metrics` from txn_count, txn_count_ppd_a, txn_count_ppd_b, txn_count_new_build, txn_count_uprn_matched, median_price, p25_price, p75_price, mean_price (default txn_count and median_price); `start` and `end` as YYYY-MM or YYYY-MM-DD (default the 24 months to the last month of data). `data.series` holds one array per metric aligned with `data.months`. Counts come from registered sales; prices cover category A only. Months from `provisional_from` on are incomplete (registration lags completion) and rise later. UK only.",
    ..OpDecl::of::<VolumeSeries>(TAG)
};

pub struct VolumeRanking;

impl Operation for VolumeRanking {
    type Params = NoParams;
    type Body = Json<VolumeRankingBody>;
    type Input = market::ranking::VolumeRankingQuery;
    type Output = market::ranking::Ranking;

    fn check(_: NoParams, Json(b): Json<VolumeRankingBody>) -> Result<Self::Input, ApiError> {
        b.checked()
    }

    async fn run(ctx: &Ctx, q: Self::Input) -> Result<market::ranking::Ranking, ApiError> {
        market::volume_ranking(&ctx.state.db, &q, ctx.now.date_naive())
            .await
            .map_err(market_error(In::Body))
    }
}

pub(crate) static VOLUME_RANKING: OpDecl = OpDecl {
    id: "market_volume_ranking",
    path: "/v1/market/volume-ranking",
    summary: "Postcode districts ranked by transaction volume or median price over a period",
    description: "Body (all optional): `metric` `txn_count` (registered sales of all categories; default) or `median_price` (category A sales); `start` and `end` (YYYY-MM or YYYY-MM-DD; default the twelve months to the last settled month); `order` `desc` (default) or `asc`; `limit` 1-100 (default 20); `area` to rank the districts of one postcode area; `min_n` to leave out districts with fewer sales. Each row has its rank, district, value and n. UK only.",
    price: Price::PerCall(2),
    ..OpDecl::of::<VolumeRanking>(TAG)
};

pub struct Ranking;

impl Operation for Ranking {
    type Params = NoParams;
    type Body = Json<RankingBody>;
    type Input = market::ranking::RankingQuery;
    type Output = market::ranking::Ranking;

    fn check(_: NoParams, Json(b): Json<RankingBody>) -> Result<Self::Input, ApiError> {
        b.checked()
    }

    async fn run(ctx: &Ctx, q: Self::Input) -> Result<market::ranking::Ranking, ApiError> {
        market::ranking(&ctx.state.db, &q, ctx.now.date_naive())
            .await
            .map_err(market_error(In::Body))
    }
}

pub(crate) static RANKING: OpDecl = OpDecl {
    id: "market_ranking",
    path: "/v1/market/ranking",
    summary: "Areas ranked on a market metric over a trailing window (free)",
    description: "Body (all optional): `metric` `turnover_rate` (default: registered sales in the window as a share of the residential stock in the address register, the stock that could have sold), `txn_count`, or `price_change` (the published index's change over the window); `level` `district` (default) or `local_authority`; `window_months` 1-60 (default 12) ending at `end` (YYYY-MM; default the last settled month); `order`; `limit` 1-500 (default 50); `min_n`. One row per area with its value, the n of sales behind it and the stock. UK only.",
    ..OpDecl::of::<Ranking>(TAG)
};
