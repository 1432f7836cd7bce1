//! Commercial operations (specification parts 4.3 and 4.4): the rent index from the rating
//! lists, the commercial market of an authority and commercial sourcing. The rating lists live
//! in `terrace-commercial`.

use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::registry::{Ctx, Json, NoBody, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_commercial::{self as commercial, AreaScope, Sector, SourcingQuery};
use terrace_core::{CursorError, Violation};
use validator::Validate;

const TAG: &str = "commercial";

/// The commercial family's operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[
    &COMMERCIAL_INDEX,
    &COMMERCIAL_MARKET,
    &COMMERCIAL_RENT_INDEX,
    &SOURCING_COMMERCIAL,
];

/// A list year parameter: one of the four lists.
fn list_year(field: &str, v: Option<i32>, found: &mut Vec<Violation>) -> Option<i32> {
    let y = v?;
    if commercial::LISTS.contains(&y) {
        Some(y)
    } else {
        found.push(
            Violation::new(
                &[field],
                "value_error",
                format!("Value error, {field} is a rating list year: 2010, 2017, 2023 or 2026"),
            )
            .with_input(y),
        );
        None
    }
}

fn blank(field: &str, v: &str) -> Violation {
    Violation::new(
        &[field],
        "value_error",
        format!("Value error, {field} is blank"),
    )
    .with_input(v.to_string())
}

/// The area of an answer: national, or the local authority `area` names (404 naming the nearest
/// when no authority has that name).
async fn area_of(ctx: &Ctx, area: Option<&str>) -> Result<AreaScope, ApiError> {
    Ok(match area {
        None => AreaScope::national(),
        Some(a) => commercial::resolve_authority(&ctx.state.db, a).await?,
    })
}

/// The query of `GET /v1/market/commercial-rent-index`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RentIndexParams {
    /// The sector (from the VOA primary description code; default ALL)
    #[serde(default)]
    pub sector: Sector,
    /// A local authority: its GSS code (E07000041) or its name; national when absent
    #[validate(length(min = 1, max = 100))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub area: Option<String>,
    /// The first list shown (2010, 2017, 2023 or 2026); the base stays the 2010 list
    #[schemars(extend("enum" = commercial::LISTS))]
    pub start: Option<i32>,
    /// The last list shown (2010, 2017, 2023 or 2026); not before `start`
    #[schemars(extend("enum" = commercial::LISTS))]
    pub end: Option<i32>,
}

pub struct RentIndexReq {
    sector: Sector,
    area: Option<String>,
    start: Option<i32>,
    end: Option<i32>,
}

pub struct RentIndexOp;

impl Operation for RentIndexOp {
    type Params = RentIndexParams;
    type Body = NoBody;
    type Input = RentIndexReq;
    type Output = commercial::RentIndex;

    fn check(p: RentIndexParams, _: NoBody) -> Result<RentIndexReq, ApiError> {
        let mut found = Vec::new();
        if let Some(a) = &p.area
            && terrace_core::patterns::is_blank(a)
        {
            found.push(blank("area", a));
        }
        let start = list_year("start", p.start, &mut found);
        let end = list_year("end", p.end, &mut found);
        if let (Some(s), Some(e)) = (start, end)
            && s > e
        {
            found.push(
                Violation::new(&["end"], "value_error", "Value error, end is before start")
                    .with_input(e),
            );
        }
        if !found.is_empty() {
            return Err(invalid(In::Query, found));
        }
        Ok(RentIndexReq {
            sector: p.sector,
            area: p.area,
            start,
            end,
        })
    }

    async fn run(ctx: &Ctx, r: RentIndexReq) -> Result<commercial::RentIndex, ApiError> {
        let area = area_of(ctx, r.area.as_deref()).await?;
        Ok(commercial::rent_index(&ctx.state.db, area, r.sector, r.start, r.end).await?)
    }
}

pub(crate) static COMMERCIAL_RENT_INDEX: OpDecl = OpDecl {
    id: "market_commercial_rent_index",
    path: "/v1/market/commercial-rent-index",
    summary: "Commercial rent index from the four rating lists",
    description: "A rent index from the VOA rating lists: four points, the 2010, 2017, 2023 and 2026 lists at their antecedent valuation dates (2008-04-01, 2015-04-01, 2021-04-01, 2024-04-01), 2010 list = 100, chained over the hereditaments (UARNs) of the sector in both consecutive lists: each point gives `link_ratio` (geometric mean of their value ratios) and `n_constant` (how many), with the entries and median rateable value of the list. A link of fewer than 5 hereditaments is not published and the chain stops there, with the reason. `basis` says what the values are: open-market rent assessments at the valuation dates, not rents paid and not capital values. `sector` from the VOA description code (default ALL); `area` a local authority's GSS code or name (national when absent; an unknown name is a 404 naming the nearest); `start` and `end` choose the lists shown. The rating lists are under the VOA's restricted licence (`licence`).",
    price: Price::PerCall(2),
    ..OpDecl::of::<RentIndexOp>(TAG)
};

/// A quarter parameter `YYYYQn`.
fn quarter(field: &str, v: Option<String>, found: &mut Vec<Violation>) -> Option<String> {
    let q = v?;
    if commercial::capital_index::parse_quarter(&q).is_some() {
        Some(q)
    } else {
        found.push(
            Violation::new(
                &[field],
                "value_error",
                format!("Value error, {field} is a quarter written YYYYQn, such as 2015Q3"),
            )
            .with_input(q),
        );
        None
    }
}

/// The query of `GET /v1/market/commercial-index`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CapitalIndexParams {
    /// A local authority: its GSS code (E07000041) or its name; national when absent. A local
    /// authority has an ALL-sector series only: with a sector other than ALL it is refused.
    #[validate(length(min = 1, max = 100))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub area: Option<String>,
    /// The sector (from the VOA primary description code of the rating-list entry linked to the
    /// property; default ALL). Sector series are national only.
    #[serde(default)]
    pub sector: Sector,
    /// The first quarter shown, `YYYYQn`
    #[schemars(regex(pattern = r"^[1-9][0-9]{3}Q[1-4]$"))]
    pub start: Option<String>,
    /// The last quarter shown, `YYYYQn`; not before `start`
    #[schemars(regex(pattern = r"^[1-9][0-9]{3}Q[1-4]$"))]
    pub end: Option<String>,
}

pub struct CapitalIndexReq {
    sector: Sector,
    area: Option<String>,
    start: Option<String>,
    end: Option<String>,
}

pub struct CapitalIndexOp;

impl Operation for CapitalIndexOp {
    type Params = CapitalIndexParams;
    type Body = NoBody;
    type Input = CapitalIndexReq;
    type Output = commercial::CapitalIndex;

    fn check(p: CapitalIndexParams, _: NoBody) -> Result<CapitalIndexReq, ApiError> {
        let mut found = Vec::new();
        if let Some(a) = &p.area
            && terrace_core::patterns::is_blank(a)
        {
            found.push(blank("area", a));
        }
        if p.area.is_some() && p.sector != Sector::All {
            found.push(
                Violation::new(
                    &["sector"],
                    "value_error",
                    "Value error, there is no local-by-sector capital series: a local authority has a series of ALL sectors only (omit sector, or omit area for the national series of the sector)",
                )
                .with_input(serde_json::to_value(p.sector).unwrap_or_default()),
            );
        }
        let start = quarter("start", p.start, &mut found);
        let end = quarter("end", p.end, &mut found);
        if let (Some(s), Some(e)) = (&start, &end)
            && s > e
        {
            found.push(
                Violation::new(&["end"], "value_error", "Value error, end is before start")
                    .with_input(e.clone()),
            );
        }
        if !found.is_empty() {
            return Err(invalid(In::Query, found));
        }
        Ok(CapitalIndexReq {
            sector: p.sector,
            area: p.area,
            start,
            end,
        })
    }

    async fn run(ctx: &Ctx, r: CapitalIndexReq) -> Result<commercial::CapitalIndex, ApiError> {
        let area = area_of(ctx, r.area.as_deref()).await?;
        Ok(commercial::capital_index(
            &ctx.state.db,
            area,
            r.sector,
            r.start.as_deref(),
            r.end.as_deref(),
        )
        .await?)
    }

    fn charged_items(out: &commercial::CapitalIndex) -> Option<i64> {
        (!out.answered()).then_some(0)
    }
}

pub(crate) static COMMERCIAL_INDEX: OpDecl = OpDecl {
    id: "market_commercial_index",
    path: "/v1/market/commercial-index",
    summary: "Repeat-sales commercial capital index, quarterly",
    description: "A repeat-sales CAPITAL index of commercial property, quarterly, 1995Q1 = 100: national ALL (no `area`), national by `sector`, or a local authority (`area` as GSS code or name) with ALL sectors. There is no local-by-sector series: `area` with a `sector` other than ALL is a 422 that says so. The pairs are the same non-residential property sold twice in HM Land Registry Price Paid (category B, property type O), keyed by UPRN (else the normalised address), with the sector of the rating-list entry linked to the UPRN (unlinked sales count in ALL only). Each quarter has `n_pairs` (pairs with either sale in it); a quarter with fewer than 3 is withheld with the reason, and a series of fewer than 10 pairs is `not_available` with its n. Category B starts in October 2013, so pairs rarely reach 1995Q1: `series.base_quarter` names the quarter actually at 100. `provenance.method` is `repeat_sales` (nothing is shrunk). With no pairs loaded, `not_available` with the reason, free. `start` and `end` (`YYYYQn`) choose the quarters shown.",
    price: Price::PerCall(2),
    ..OpDecl::of::<CapitalIndexOp>(TAG)
};

/// The schema states the geography rule: exactly one of `area` and `lad_code`.
fn one_market_geography(schema: &mut schemars::Schema) {
    terrace_core::patterns::exactly_one_of(schema, &[&["area"], &["lad_code"]]);
}

/// The query of `GET /v1/market/commercial-market`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = one_market_geography)]
pub struct MarketParams {
    /// The sector (default ALL)
    #[serde(default)]
    pub sector: Sector,
    /// A local authority's GSS code or name. Exactly one of area and lad_code.
    #[validate(length(min = 1, max = 100))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub area: Option<String>,
    /// A local authority GSS code (E07000041). Exactly one of area and lad_code.
    #[schemars(regex(pattern = terrace_core::patterns::GSS_CODE))]
    pub lad_code: Option<String>,
}

pub struct MarketReq {
    sector: Sector,
    area: String,
}

pub struct MarketOp;

fn gss(field: &str, v: &str) -> Result<String, Violation> {
    terrace_core::GssCode::parse(v)
        .map(|c| c.to_string())
        .map_err(|_| {
            Violation::new(
                &[field],
                "value_error",
                format!("Value error, {field} is a GSS code such as E07000041"),
            )
            .with_input(v.to_string())
        })
}

impl Operation for MarketOp {
    type Params = MarketParams;
    type Body = NoBody;
    type Input = MarketReq;
    type Output = commercial::CommercialMarket;

    fn check(p: MarketParams, _: NoBody) -> Result<MarketReq, ApiError> {
        let area = match (p.area, p.lad_code) {
            (Some(a), None) if terrace_core::patterns::is_blank(&a) => Err(blank("area", &a)),
            (Some(a), None) => Ok(a),
            (None, Some(l)) => gss("lad_code", &l),
            (Some(_), Some(_)) | (None, None) => Err(Violation::new(
                &[],
                "value_error",
                "Value error, give exactly one of area and lad_code",
            )),
        }
        .map_err(|v| invalid(In::Query, vec![v]))?;
        Ok(MarketReq {
            sector: p.sector,
            area,
        })
    }

    async fn run(ctx: &Ctx, r: MarketReq) -> Result<commercial::CommercialMarket, ApiError> {
        let area = area_of(ctx, Some(&r.area)).await?;
        Ok(commercial::commercial_market(&ctx.state.db, area, r.sector).await?)
    }
}

pub(crate) static COMMERCIAL_MARKET: OpDecl = OpDecl {
    id: "market_commercial_market",
    path: "/v1/market/commercial-market",
    summary: "The commercial market of a sector in a local authority",
    description: "For a sector and a local authority (`area` as GSS code or name, or `lad_code`): the rent index of the rating lists (as `/v1/market/commercial-rent-index`), the commercial capital index (the authority's ALL-sector series for ALL, the national series of the sector otherwise, as `/v1/market/commercial-index`; `not_available` with the reason where none is published), and the rated stock of the authority for the sector in the newest loaded list: count, valued entries, total and median rateable value (median per square metre of measured floor area where summary valuations are loaded). THE TWO INDICES ARE NOT COMPARABLE (`comparability`): never put them on one axis. Exactly one of `area` and `lad_code`; an unknown authority name is a 404 naming the nearest.",
    price: Price::PerCall(3),
    ..OpDecl::of::<MarketOp>(TAG)
};

fn default_limit() -> i64 {
    50
}

/// The body of `POST /v1/sourcing/commercial`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourcingBody {
    /// The local authority's GSS code (E07000041)
    #[schemars(regex(pattern = terrace_core::patterns::GSS_CODE))]
    pub lad_code: String,
    /// The sector (default ALL)
    #[serde(default)]
    pub sector: Sector,
    /// The least rateable value (pounds a year) in the newest list
    #[validate(range(min = 0, max = 10_000_000_000_i64))]
    pub min_rateable_value: Option<i64>,
    /// The greatest rateable value (pounds a year) in the newest list; not below the least
    #[validate(range(min = 0, max = 10_000_000_000_i64))]
    pub max_rateable_value: Option<i64>,
    /// Rows per page (default 50)
    #[serde(default = "default_limit")]
    #[validate(range(min = 1, max = 200))]
    pub limit: i64,
    /// The `next_cursor` of the previous page of the same query
    #[validate(length(min = 1, max = 504))]
    #[schemars(regex(pattern = terrace_core::cursor::PATTERN))]
    pub cursor: Option<String>,
}

pub struct SourcingOp;

impl Operation for SourcingOp {
    type Params = crate::registry::NoParams;
    type Body = Json<SourcingBody>;
    type Input = SourcingQuery;
    type Output = commercial::SourcingAnswer;

    fn check(
        _: crate::registry::NoParams,
        Json(b): Json<SourcingBody>,
    ) -> Result<SourcingQuery, ApiError> {
        let mut found = Vec::new();
        let lad_code = gss("lad_code", &b.lad_code).map_err(|v| found.push(v)).ok();
        if let (Some(lo), Some(hi)) = (b.min_rateable_value, b.max_rateable_value)
            && lo > hi
        {
            found.push(
                Violation::new(
                    &["max_rateable_value"],
                    "value_error",
                    "Value error, max_rateable_value is below min_rateable_value",
                )
                .with_input(hi),
            );
        }
        let (Some(lad_code), true) = (lad_code, found.is_empty()) else {
            return Err(invalid(In::Body, found));
        };
        let mut q = SourcingQuery {
            lad_code,
            sector: b.sector,
            min_rateable_value: b.min_rateable_value,
            max_rateable_value: b.max_rateable_value,
            limit: usize::try_from(b.limit).unwrap_or(1),
            after: None,
        };
        let key = commercial::sourcing_scope(&q)
            .decode_opt(b.cursor.as_deref())
            .map_err(|e| match e {
                CursorError::Malformed(v) => invalid(In::Body, vec![v]),
                CursorError::NotThisQuery(what) => ApiError::NotFound(what),
            })?;
        if let Some(k) = key {
            q.after = Some(
                k.first()
                    .and_then(|s| s.parse::<i64>().ok())
                    .ok_or_else(|| ApiError::NotFound("a page at this cursor".into()))?,
            );
        }
        Ok(q)
    }

    async fn run(ctx: &Ctx, q: SourcingQuery) -> Result<commercial::SourcingAnswer, ApiError> {
        let area = commercial::resolve_authority(&ctx.state.db, &q.lad_code).await?;
        Ok(commercial::sourcing(&ctx.state.db, area, &q).await?)
    }
}

pub(crate) static SOURCING_COMMERCIAL: OpDecl = OpDecl {
    id: "sourcing_commercial",
    path: "/v1/sourcing/commercial",
    summary: "Rated commercial stock of a local authority",
    description: "The rated stock of a local authority (`lad_code`) in the newest loaded rating list, filtered by `sector` and rateable value bounds, in UARN order, `limit` rows a page (pass `next_cursor` as `cursor` with the same filters). Each row has the hereditament, its rateable value in every loaded list with the lists' valuation dates, the UPRN it links to, the freeholder where a company-owned freehold title (CCOD/OCOD) links to that UPRN (else why not), and `not_available` blocks with reasons for floor area (summary valuations), auction history and income-basis value (no yield is assumed). A rateable value is an assessed annual rent, not a rent paid or a price. The rating lists are under the VOA's restricted licence (`licence`).",
    price: Price::PerCall(5),
    ..OpDecl::of::<SourcingOp>(TAG)
};
