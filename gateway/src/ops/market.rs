//! Market operations (specification part 4.3): published indices, forecasts, time adjustment,
//! transaction volumes and rankings, read from the tables `cargo xtask build` derives.

use crate::error::{ApiError, FieldError};
use crate::params::{In, Kind, Param};
use crate::registry::{Answer, Ctx, Input, Method, OpDecl, OpFuture, Price, schema_of};
use terrace_market as market;
use terrace_market::series::{IndexGeo, parse_month};
use terrace_market::{MarketError, Violation};

impl From<Violation> for FieldError {
    fn from(v: Violation) -> Self {
        let loc: Vec<&str> = v.loc.iter().map(String::as_str).collect();
        FieldError::new(&loc, v.kind, v.msg)
    }
}

fn invalid(vs: Vec<Violation>) -> ApiError {
    ApiError::Validation(vs.into_iter().map(FieldError::from).collect())
}

impl From<MarketError> for ApiError {
    fn from(e: MarketError) -> Self {
        match e {
            MarketError::NotFound(what) => ApiError::NotFound(what),
            MarketError::Invalid(vs) => invalid(vs),
            MarketError::Analytics(a) => ApiError::Internal(a.to_string()),
            MarketError::Store(s) => s.into(),
        }
    }
}

const DISTRICT: Param = Param {
    name: "district",
    location: In::Query,
    required: false,
    kind: Kind::Str { min: 2, max: 8 },
    description: "A postcode district (outward code, EX1); a full postcode is truncated to its district. Exactly one of district and local_authority.",
};

const LOCAL_AUTHORITY: Param = Param {
    name: "local_authority",
    location: In::Query,
    required: false,
    kind: Kind::Str { min: 9, max: 9 },
    description: "A local authority GSS code (E07000041). Exactly one of district and local_authority.",
};

const FROM: Param = Param {
    name: "from",
    location: In::Query,
    required: false,
    kind: Kind::Str { min: 7, max: 10 },
    description: "First period, YYYY-MM or YYYY-MM-DD",
};

const TO: Param = Param {
    name: "to",
    location: In::Query,
    required: false,
    kind: Kind::Str { min: 7, max: 10 },
    description: "Last period, YYYY-MM or YYYY-MM-DD",
};

fn geo(input: &Input) -> Result<IndexGeo, ApiError> {
    IndexGeo::parse(
        input.params.str("district"),
        input.params.str("local_authority"),
    )
    .map_err(|v| invalid(vec![v]))
}

fn month(input: &Input, name: &str) -> Result<Option<terrace_analytics::Month>, ApiError> {
    input
        .params
        .str(name)
        .map(|s| parse_month(&["query", name], s).map_err(|v| invalid(vec![v])))
        .transpose()
}

fn check_index(input: &Input) -> Result<(), ApiError> {
    let mut errors = Vec::new();
    if let Err(e) = geo(input) {
        errors.push(e);
    }
    for m in ["from", "to"] {
        if let Err(e) = month(input, m) {
            errors.push(e);
        }
    }
    match errors.into_iter().reduce(|a, b| match (a, b) {
        (ApiError::Validation(mut x), ApiError::Validation(y)) => {
            x.extend(y);
            ApiError::Validation(x)
        }
        (a, _) => a,
    }) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

pub static INDEX_SERIES: OpDecl = OpDecl {
    id: "market_index_series",
    method: Method::Get,
    path: "/v1/market/index-series",
    tag: "market",
    summary: "The published house price index of a postcode district or local authority (free)",
    description: "Per-period index levels (base period = 100, stated), from registered sales: repeat-sales where the geography has enough pairs, hedonic otherwise, shrunk toward the parent geography (district to postcode area to the nation; local authority to the nation) when data is thin. The estimated rows stop at the last settled month (months from `provisional_from` on are still being registered and are never estimated from their incomplete counts); the forecast rows that follow (`is_forecast`) carry `lo` and `hi` at the stated coverage. `provenance` gives `index_method`, `index_decision` (which method and why, with the counts), the base period and the last settled period. Exactly one of `district` and `local_authority`. UK only.",
    price: Price::Free,
    params: &[DISTRICT, LOCAL_AUTHORITY, FROM, TO],
    body: None,
    body_required: false,
    response: schema_of::<market::IndexSeriesResult>,
    deprecated: None,
    read_only: true,
    check: Some(check_index),
    run: run_index_series,
};

fn run_index_series<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let g = geo(&input)?;
        Answer::of(
            &market::index_series(
                &ctx.state.db,
                &ctx.state.market,
                &g,
                month(&input, "from")?,
                month(&input, "to")?,
                ctx.now.date_naive(),
            )
            .await?,
        )
    })
}

fn check_geo(input: &Input) -> Result<(), ApiError> {
    geo(input).map(|_| ())
}

pub static FORECAST: OpDecl = OpDecl {
    id: "market_forecast",
    method: Method::Get,
    path: "/v1/market/forecast",
    tag: "market",
    summary: "The published index forecast of a postcode district or local authority",
    description: "The last settled index point as the anchor (never a provisional period), then seven forecast periods, each with `lo` and `hi` at the stated `interval_coverage`, plus `method` and `grain`. The method is a damped trend on log index levels, published only when it beat naive drift on the rolling-origin backtest of the national series; otherwise naive drift. Exactly one of `district` and `local_authority`. UK only.",
    price: Price::PerCall(2),
    params: &[DISTRICT, LOCAL_AUTHORITY],
    body: None,
    body_required: false,
    response: schema_of::<market::Forecast>,
    deprecated: None,
    read_only: true,
    check: Some(check_geo),
    run: run_forecast,
};

fn run_forecast<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let g = geo(&input)?;
        Answer::of(
            &market::forecast(&ctx.state.db, &ctx.state.market, &g, ctx.now.date_naive()).await?,
        )
    })
}

const TA_DISTRICT: Param = Param {
    name: "district",
    location: In::Query,
    required: true,
    kind: Kind::Str { min: 2, max: 8 },
    description: "A postcode district (outward code, EX1); a full postcode is truncated to its district",
};

const TA_FROM: Param = Param {
    name: "from",
    location: In::Query,
    required: true,
    kind: Kind::Str { min: 7, max: 10 },
    description: "The period a price was agreed, YYYY-MM or YYYY-MM-DD",
};

const TA_TO: Param = Param {
    name: "to",
    location: In::Query,
    required: false,
    kind: Kind::Str { min: 7, max: 10 },
    description: "The period to carry it to, YYYY-MM or YYYY-MM-DD (default: the last settled period)",
};

fn check_time_adjustment(input: &Input) -> Result<(), ApiError> {
    geo(input)?;
    month(input, "from")?;
    month(input, "to")?;
    Ok(())
}

pub static TIME_ADJUSTMENT: OpDecl = OpDecl {
    id: "market_time_adjustment",
    method: Method::Get,
    path: "/v1/market/time-adjustment",
    tag: "market",
    summary: "Carry a price from one period to another with a district's index",
    description: "For a postcode district: the from-period and to-period index levels, the multiplier (to over from) and the source index: its geography, method and decision, which for a thin district is a series shrunk toward its postcode area. `to` defaults to the last settled period; the series stops before `provisional_from`, so a provisional or later `to` is 422, like any period outside the series. Levels are the published smoothed levels; `multiplier_se` is the multiplier's standard error. UK only.",
    price: Price::PerCall(1),
    params: &[TA_DISTRICT, TA_FROM, TA_TO],
    body: None,
    body_required: false,
    response: schema_of::<market::TimeAdjustmentResult>,
    deprecated: None,
    read_only: true,
    check: Some(check_time_adjustment),
    run: run_time_adjustment,
};

fn run_time_adjustment<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let IndexGeo::District(d) = geo(&input)? else {
            return Err(ApiError::Internal(
                "time adjustment takes a district".into(),
            ));
        };
        let from = month(&input, "from")?
            .ok_or_else(|| ApiError::Internal("`from` was not checked".into()))?;
        Answer::of(
            &market::time_adjustment(
                &ctx.state.db,
                &ctx.state.market,
                &d,
                from,
                month(&input, "to")?,
                ctx.now.date_naive(),
            )
            .await?,
        )
    })
}

fn body<T: serde::de::DeserializeOwned>(input: &Input) -> Result<T, ApiError> {
    input.body_as(true)?.ok_or_else(|| {
        ApiError::Validation(vec![FieldError::new(
            &["body"],
            "missing",
            "Field required",
        )])
    })
}

/// A request body whose `check` turns it into the query its domain function takes.
trait CheckedBody: serde::de::DeserializeOwned {
    type Query;
    fn checked(&self) -> Result<Self::Query, Vec<Violation>>;
}

macro_rules! checked_body {
    ($($body:ty => $query:ty),* $(,)?) => {
        $(impl CheckedBody for $body {
            type Query = $query;
            fn checked(&self) -> Result<$query, Vec<Violation>> {
                self.check()
            }
        })*
    };
}

checked_body!(
    market::VolumeSeriesBody => market::volume::VolumeQuery,
    market::VolumeRankingBody => market::ranking::VolumeRankingQuery,
    market::RankingBody => market::ranking::RankingQuery,
);

/// The body parsed and checked: 422 with every violation otherwise.
fn checked<B: CheckedBody>(input: &Input) -> Result<B::Query, ApiError> {
    body::<B>(input)?.checked().map_err(invalid)
}

fn check_body<B: CheckedBody>(input: &Input) -> Result<(), ApiError> {
    checked::<B>(input).map(|_| ())
}

pub static VOLUME_SERIES: OpDecl = OpDecl {
    id: "market_volume_series",
    method: Method::Post,
    path: "/v1/market/volume-series",
    tag: "market",
    summary: "Monthly registered-sale volumes and prices for a district, area or county (free)",
    description: "Exactly one of `district` (a full postcode is truncated to its district; a borough name is 422), `area` and `county` (upper case); `metrics` from txn_count, txn_count_ppd_a, txn_count_ppd_b, txn_count_new_build, txn_count_uprn_matched, median_price, p25_price, p75_price, mean_price (default txn_count and median_price); `start` and `end` as YYYY-MM or YYYY-MM-DD (default the 24 months to the last month of data). `data.series` holds one array per metric aligned with `data.months`. Counts come from registered sales; prices cover category A only. Months from `provisional_from` on are incomplete (registration lags completion) and rise later. UK only.",
    price: Price::Free,
    params: &[],
    body: Some(schema_of::<market::VolumeSeriesBody>),
    body_required: true,
    response: schema_of::<market::VolumeSeriesResponse>,
    deprecated: None,
    read_only: true,
    check: Some(check_body::<market::VolumeSeriesBody>),
    run: run_volume,
};

fn run_volume<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let q = checked::<market::VolumeSeriesBody>(&input)?;
        Answer::of(
            &market::volume_series(&ctx.state.db, &ctx.state.market, &q, ctx.now.date_naive())
                .await?,
        )
    })
}

pub static VOLUME_RANKING: OpDecl = OpDecl {
    id: "market_volume_ranking",
    method: Method::Post,
    path: "/v1/market/volume-ranking",
    tag: "market",
    summary: "Postcode districts ranked by transaction volume or median price over a period",
    description: "Body (all optional): `metric` `txn_count` (registered sales of all categories; default) or `median_price` (category A sales); `start` and `end` (YYYY-MM or YYYY-MM-DD; default the twelve months to the last settled month); `order` `desc` (default) or `asc`; `limit` 1-100 (default 20); `area` to rank the districts of one postcode area; `min_n` to leave out districts with fewer sales. Each row has its rank, district, value and n. UK only.",
    price: Price::PerCall(2),
    params: &[],
    body: Some(schema_of::<market::VolumeRankingBody>),
    body_required: true,
    response: schema_of::<market::ranking::Ranking>,
    deprecated: None,
    read_only: true,
    check: Some(check_body::<market::VolumeRankingBody>),
    run: run_volume_ranking,
};

fn run_volume_ranking<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let q = checked::<market::VolumeRankingBody>(&input)?;
        Answer::of(&market::volume_ranking(&ctx.state.db, &q, ctx.now.date_naive()).await?)
    })
}

pub static RANKING: OpDecl = OpDecl {
    id: "market_ranking",
    method: Method::Post,
    path: "/v1/market/ranking",
    tag: "market",
    summary: "Areas ranked on a market metric over a trailing window (free)",
    description: "Body (all optional): `metric` `turnover_rate` (default: registered sales in the window as a share of the residential stock in the address register, the stock that could have sold), `txn_count`, or `price_change` (the published index's change over the window); `level` `district` (default) or `local_authority`; `window_months` 1-60 (default 12) ending at `end` (YYYY-MM; default the last settled month); `order`; `limit` 1-500 (default 50); `min_n`. One row per area with its value, the n of sales behind it and the stock. UK only.",
    price: Price::Free,
    params: &[],
    body: Some(schema_of::<market::RankingBody>),
    body_required: true,
    response: schema_of::<market::ranking::Ranking>,
    deprecated: None,
    read_only: true,
    check: Some(check_body::<market::RankingBody>),
    run: run_ranking,
};

fn run_ranking<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let q = checked::<market::RankingBody>(&input)?;
        Answer::of(&market::ranking(&ctx.state.db, &q, ctx.now.date_naive()).await?)
    })
}
