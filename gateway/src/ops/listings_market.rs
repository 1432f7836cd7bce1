//! The listings market (issue 17): the asking-price and rent indices, a property's listing
//! history, live stock by day, the monthly supply statistics, supply and demand, gross yields,
//! market facts and the agents of an area, read from the snapshots the listings loaders keep.
//! Without a listings feed each answers `not_available` with the reason (the free ones with 200,
//! the priced ones uncharged).

use crate::error::ApiError;
use crate::input::{In, invalid, month_param};
use crate::registry::{Ctx, Json, NoBody, NoParams, OpDecl, Operation, Price};
use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_core::{AreaId, AreaKind, Uprn, Violation};
use terrace_listings::demand::{self, SupplyDemand};
use terrace_listings::facts::{self, AssetType, FactsGeography, FactsRequest, MarketFacts};
use terrace_listings::indices::{self, IndexAreaType, IndexKind, IndexRequest, ListingIndex};
use terrace_listings::market::{
    self, AgentsResult, Answer, BedroomBand, Channel, ListingHistory, ListingStock, StockRequest,
};
use terrace_listings::supply::{self, SupplyRequest, SupplySeries};
use terrace_listings::yields::{self, Yields, YieldsRequest};
use terrace_store::listings::ListingArea;
use validator::Validate;

/// The listings market's operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[
    &ASKING_INDEX,
    &LISTING_STOCK,
    &SUPPLY,
    &RENT_INDEX,
    &SUPPLY_DEMAND,
    &YIELDS,
    &FACTS,
    &AGENTS,
    &HISTORY,
];

pub(crate) use crate::input::value_error;

pub(crate) use terrace_listings::listing_area;

// ---------------------------------------------------------------------------------------------

/// What `area_code` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AreaType {
    /// A postcode district (`area_code` an outward code such as XT1).
    District,
    /// A local authority (`area_code` its GSS code, E06000046).
    Lad,
    /// Every listing (no `area_code`).
    National,
}

fn national() -> AreaType {
    AreaType::National
}

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StockParams {
    /// `district`, `lad` or `national` (the default)
    #[serde(default = "national")]
    pub area_type: AreaType,
    /// The district's outward code or the local authority's GSS code; absent for `national`
    #[validate(length(min = 1, max = 20))]
    pub area_code: Option<String>,
    /// Only `sale` or only `rent` listings (both when absent)
    pub channel: Option<Channel>,
    /// Only listings with this many bedrooms: `studio`, `1`, `2`, `3` or `4_plus`
    pub bedroom_band: Option<BedroomBand>,
    /// First day, YYYY-MM-DD (default: when observation began)
    #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub start: Option<String>,
    /// Last day, YYYY-MM-DD, not before `start` (default: the feed's latest sighting)
    #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub end: Option<String>,
}

fn day(field: &str, given: Option<&str>, found: &mut Vec<Violation>) -> Option<NaiveDate> {
    let s = given?;
    match NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        Ok(d) if s.len() == 10 => Some(d),
        _ => {
            found.push(value_error(field, "a day is YYYY-MM-DD", s));
            None
        }
    }
}

pub struct ListingStockOp;

impl Operation for ListingStockOp {
    type Params = StockParams;
    type Body = NoBody;
    type Input = StockRequest;
    type Output = ListingStock;

    fn check(p: StockParams, _: NoBody) -> Result<StockRequest, ApiError> {
        let mut found = Vec::new();
        let code = p.area_code.as_deref().map(str::trim);
        let area = match (p.area_type, code) {
            (AreaType::National, None) => Some((ListingArea::National, "national".to_string())),
            (AreaType::National, Some(c)) => {
                found.push(value_error(
                    "area_code",
                    "area_code is not given with area_type national",
                    c,
                ));
                None
            }
            (AreaType::District | AreaType::Lad, None) => {
                found.push(
                    Violation::new(
                        &["area_code"],
                        "missing",
                        "Field required: area_code names the district or local authority",
                    )
                    .with_input(serde_json::Value::Null),
                );
                None
            }
            (AreaType::District, Some(c)) => match AreaId::new(AreaKind::District, c) {
                Ok(id) => Some((
                    ListingArea::PostcodePrefix(id.code().to_string()),
                    id.to_string(),
                )),
                Err(_) => {
                    found.push(value_error(
                        "area_code",
                        "a postcode district is an outward code such as XT1 or EX1",
                        c,
                    ));
                    None
                }
            },
            (AreaType::Lad, Some(c)) => match AreaId::new(AreaKind::Lad, c) {
                Ok(id) => Some((
                    ListingArea::LocalAuthority(id.code().to_string()),
                    id.to_string(),
                )),
                Err(_) => {
                    found.push(value_error(
                        "area_code",
                        "a local authority is its GSS code, such as E06000046",
                        c,
                    ));
                    None
                }
            },
        };
        let start = day("start", p.start.as_deref(), &mut found);
        let end = day("end", p.end.as_deref(), &mut found);
        if let (Some(s), Some(e)) = (start, end)
            && s > e
        {
            found.push(value_error(
                "start",
                "start is not after end",
                p.start.as_deref().unwrap_or_default(),
            ));
        }
        match area {
            Some((area, area_label)) if found.is_empty() => Ok(StockRequest {
                area,
                area_label,
                channel: p.channel,
                bedroom_band: p.bedroom_band,
                start,
                end,
            }),
            _ => Err(invalid(In::Query, found)),
        }
    }

    async fn run(ctx: &Ctx, r: StockRequest) -> Result<ListingStock, ApiError> {
        Ok(market::listing_stock(&ctx.state.db, &r).await?)
    }
}

pub(crate) static LISTING_STOCK: OpDecl = OpDecl {
    id: "market_listing_stock",
    path: "/v1/market/listing-stock",
    summary: "Live listings by day in an area (free)",
    description: "One point a day: the listings live on the market (any status but withdrawn or removed) and, of those, the ones available, for `area_type` `district` or `lad` with `area_code`, or `national`; optionally one `channel` (`sale`, `rent`) and one `bedroom_band`, between `start` and `end` (YYYY-MM-DD). Observed forwards only from the first snapshot any feed gave (`observed_since`): the portals keep no exit dates, so a short series is expected and the past is not reconstructed. Without a listings feed the answer is `status: not_available` with the reason and no points. An unknown area is a 404.",
    ..OpDecl::of::<ListingStockOp>("market")
};

// ---------------------------------------------------------------------------------------------

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentsParams {
    /// An area id: `district:XT1`, `sector:XT1 2`, `unit:XT1 2AB` or `lad:E06000046`
    #[validate(length(min = 1, max = 40))]
    pub area_id: String,
}

/// A checked agents request.
pub struct AgentsInput {
    area: ListingArea,
    id: String,
}

pub struct AgentsOp;

impl Operation for AgentsOp {
    type Params = AgentsParams;
    type Body = NoBody;
    type Input = AgentsInput;
    type Output = AgentsResult;

    fn check(p: AgentsParams, _: NoBody) -> Result<AgentsInput, ApiError> {
        AreaId::parse(p.area_id.trim())
            .ok()
            .and_then(|id| listing_area(&id).map(|area| AgentsInput { area, id: id.to_string() }))
            .ok_or_else(|| {
                invalid(
                    In::Path,
                    vec![value_error(
                        "area_id",
                        "listings are kept by postcode and local authority: an area id of kind district, sector, unit or lad, such as district:XT1 or lad:E06000046",
                        &p.area_id,
                    )],
                )
            })
    }

    async fn run(ctx: &Ctx, i: AgentsInput) -> Result<AgentsResult, ApiError> {
        Ok(market::agents(&ctx.state.db, &i.area, &i.id).await?)
    }
}

pub(crate) static AGENTS: OpDecl = OpDecl {
    id: "market_agents",
    path: "/v1/market/agents/{area_id}",
    summary: "Agents of an area ranked by listing count (free)",
    description: "The agents with listings in the area (an area id of kind district, sector, unit or lad) in the twelve months to the feed's latest sighting, ranked by listing count, each with its sale and letting counts, the median latest asking price of its sales and asking rent (per calendar month) of its lettings, and its share of the area's listings. BLM files and the Real Time Data Feed name the branch, not the agent: their listings are grouped as `branch <id>`. Without a listings feed the answer is `status: not_available` with the reason. An unknown area is a 404.",
    ..OpDecl::of::<AgentsOp>("market")
};

// ---------------------------------------------------------------------------------------------

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryPath {
    /// Unique Property Reference Number
    pub uprn: Uprn,
}

pub struct HistoryOp;

impl Operation for HistoryOp {
    type Params = HistoryPath;
    type Body = NoBody;
    type Input = Uprn;
    type Output = ListingHistory;

    fn check(p: HistoryPath, _: NoBody) -> Result<Uprn, ApiError> {
        Ok(p.uprn)
    }

    async fn run(ctx: &Ctx, uprn: Uprn) -> Result<ListingHistory, ApiError> {
        Ok(market::history(&ctx.state.db, uprn.get()).await?)
    }

    /// Nothing is charged when no listings feed is loaded.
    fn charged_items(out: &ListingHistory) -> Option<i64> {
        match out.status {
            Answer::Ok => None,
            Answer::NotAvailable => Some(0),
        }
    }
}

pub(crate) static HISTORY: OpDecl = OpDecl {
    id: "listings_history",
    path: "/v1/listings/history/{uprn}",
    summary: "Every listing snapshot of a property",
    description: "Every listing of the property (sale and letting, from every loaded feed) with its agent, branch, floor area, tenure and unexpired years, coordinates, new-home flag, first and last sighting, removal and its reason, and how its UPRN was found (`feed` or `address_matcher` with the score); a `price_trajectory` where two or more snapshots carry a price; and every snapshot, newest first. `observed_since` is when the feed's first snapshot was taken: nothing earlier was observed. A property never listed since then has empty lists. Without a listings feed the answer is `status: not_available` with the reason and is not charged. A UPRN neither in the register nor in any listing is a 404.",
    price: Price::PerCall(3),
    ..OpDecl::of::<HistoryOp>("property")
};

// ---------------------------------------------------------------------------------------------
// The asking-price and rent indices.

fn index_national() -> IndexAreaType {
    IndexAreaType::National
}

fn index_limit() -> usize {
    indices::LIMIT_MAX
}

/// The parameters of both listings indices.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IndexParams {
    /// `district`, `area`, `lad` or `national` (the default)
    #[serde(default = "index_national")]
    pub area_type: IndexAreaType,
    /// The district's outward code (XT1), the postcode area's letters (XT) or the local
    /// authority's GSS code (E06000046); not given for `national`. A code of another form than
    /// its `area_type`'s, or none where one is needed, names no series and is a 404 saying the
    /// form expected
    #[validate(length(min = 1, max = 20))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub area_code: Option<String>,
    /// First month, YYYY-MM (or a day of it, YYYY-MM-DD); default the series' first
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub start: Option<String>,
    /// Last month, same formats, not before `start`; default the series' last
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub end: Option<String>,
    /// At most this many points, the latest (1 to 600; default 600)
    #[serde(default = "index_limit")]
    #[validate(range(min = 1, max = 600))]
    pub limit: usize,
}

/// A first and a last month, each optional.
type Months = (
    Option<terrace_analytics::Month>,
    Option<terrace_analytics::Month>,
);

/// The checks the area-and-months operations share: `area_code` not blank, `start` and `end`
/// months, the first not after the last; every violation found is reported (422).
fn area_and_months(
    area_code: Option<&str>,
    start: Option<&str>,
    end: Option<&str>,
) -> Result<Months, ApiError> {
    let mut found = Vec::new();
    if let Some(c) = area_code.filter(|c| terrace_core::patterns::is_blank(c)) {
        found.push(value_error("area_code", "area_code is not blank", c));
    }
    let first = month_param("start", start, &mut found);
    let last = month_param("end", end, &mut found);
    if let (Some(s), Some(e)) = (first, last)
        && s > e
    {
        found.push(value_error(
            "start",
            "start is not after end",
            start.unwrap_or_default(),
        ));
    }
    if found.is_empty() {
        Ok((first, last))
    } else {
        Err(invalid(In::Query, found))
    }
}

/// The checked request; a well-formed query whose code is of another form than its
/// `area_type`'s (or absent where one is needed, or given for national) names no series: 404.
fn check_index(kind: IndexKind, p: IndexParams) -> Result<IndexRequest, ApiError> {
    let code = p.area_code.as_deref().map(str::trim);
    let (start, end) =
        area_and_months(p.area_code.as_deref(), p.start.as_deref(), p.end.as_deref())?;
    let expected = match p.area_type {
        IndexAreaType::District => (AreaKind::District, "an outward code such as XT1 or EX1"),
        IndexAreaType::Area => (
            AreaKind::Area,
            "the letters of a postcode area such as XT or EX",
        ),
        IndexAreaType::Lad => (
            AreaKind::Lad,
            "a local authority GSS code such as E06000046",
        ),
        IndexAreaType::National => {
            return match code {
                None => Ok(IndexRequest {
                    kind,
                    area_type: p.area_type,
                    area_code: None,
                    start,
                    end,
                    limit: p.limit,
                }),
                Some(c) => Err(ApiError::NotFound(format!(
                    "a national {} index for area_code {c:?} (area_type national takes no area_code; give area_type district, area or lad with it)",
                    kind.as_str()
                ))),
            };
        }
    };
    let (area_kind, form) = expected;
    match code.map(|c| (c, AreaId::new(area_kind, c))) {
        Some((_, Ok(id))) => Ok(IndexRequest {
            kind,
            area_type: p.area_type,
            area_code: Some(id.code().to_string()),
            start,
            end,
            limit: p.limit,
        }),
        Some((c, Err(_))) => Err(ApiError::NotFound(format!(
            "a {} index for area_code {c:?} (for this area_type the code is {form})",
            kind.as_str()
        ))),
        None => Err(ApiError::NotFound(format!(
            "a {} index without area_code (for this area_type give area_code, {form})",
            kind.as_str()
        ))),
    }
}

async fn run_index(ctx: &Ctx, r: IndexRequest) -> Result<ListingIndex, ApiError> {
    Ok(indices::index_series(&ctx.state.db, &r).await?)
}

pub struct AskingIndexOp;

impl Operation for AskingIndexOp {
    type Params = IndexParams;
    type Body = NoBody;
    type Input = IndexRequest;
    type Output = ListingIndex;

    fn check(p: IndexParams, _: NoBody) -> Result<IndexRequest, ApiError> {
        check_index(IndexKind::Asking, p)
    }

    async fn run(ctx: &Ctx, r: IndexRequest) -> Result<ListingIndex, ApiError> {
        run_index(ctx, r).await
    }
}

/// What both index operations' descriptions say.
macro_rules! index_common {
    () => {
        "Monthly, 2022-01 = 100, each point with its standard error (`se`), its 80% band (`lo`, `hi`), its `n` (listings first priced in the month in the area) and `shrunk` (the area is too thin to stand alone, so its own deviation is shrunk toward its parent: district, then postcode area, then local authority, then national; `parent` names it). Built by `cargo xtask build` from the listing snapshots (each listing once, at its first priced snapshot; a hedonic time-dummy regression on property type, tenure, new-home and floor area) and served from the store. `area_type` `district`, `area` or `lad` with `area_code`, or `national`; `start`/`end` months (YYYY-MM), `limit` the latest points. An area with no series is a 404 naming the nearest that have one. Without a listings feed the answer is `status: not_available` with the reason and no points"
    };
}

pub(crate) static ASKING_INDEX: OpDecl = OpDecl {
    id: "market_asking_index",
    path: "/v1/market/asking-index",
    summary: "Hedonic asking-price index from listings (free)",
    description: concat!(
        "Asking prices of sale listings, not sold prices. ",
        index_common!(),
        "."
    ),
    ..OpDecl::of::<AskingIndexOp>("market")
};

pub struct RentIndexOp;

impl Operation for RentIndexOp {
    type Params = IndexParams;
    type Body = NoBody;
    type Input = IndexRequest;
    type Output = ListingIndex;

    fn check(p: IndexParams, _: NoBody) -> Result<IndexRequest, ApiError> {
        check_index(IndexKind::Rent, p)
    }

    async fn run(ctx: &Ctx, r: IndexRequest) -> Result<ListingIndex, ApiError> {
        run_index(ctx, r).await
    }

    /// Nothing is charged when no index can be given.
    fn charged_items(out: &ListingIndex) -> Option<i64> {
        match out.status {
            Answer::Ok => None,
            Answer::NotAvailable => Some(0),
        }
    }
}

pub(crate) static RENT_INDEX: OpDecl = OpDecl {
    id: "market_rent_index",
    path: "/v1/market/rent-index",
    summary: "Hedonic asking-rent index from lettings, checked against the ONS private rents index",
    description: concat!(
        "Asking rents (per calendar month) of rental listings, not agreed rents. ",
        index_common!(),
        " (and not charged). Checked at every build against the ONS Price Index of Private Rents of the area's local authority, re-based to 2022-01 = 100 (`pipr_level`): a month where the two differ by more than `withheld_margin_points` (5) plus the half-width of the month's 80% band, or where the ONS has no figure to check against, is `status: withheld` with both figures: a missing recent month is a refusal, not an outage."
    ),
    price: Price::PerCall(1),
    ..OpDecl::of::<RentIndexOp>("market")
};

// ---------------------------------------------------------------------------------------------
// Monthly supply statistics.

fn sale() -> Channel {
    Channel::Sale
}

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SupplyParams {
    /// `district`, `lad` or `national` (the default)
    #[serde(default = "national")]
    pub area_type: AreaType,
    /// The district's outward code (XT1) or the local authority's GSS code (E06000046); not
    /// given for `national`. A code of another form than its `area_type`'s, or none where one is
    /// needed, names no area and is a 404 saying the form expected
    #[validate(length(min = 1, max = 20))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub area_code: Option<String>,
    /// `sale` (the default) or `rent`
    #[serde(default = "sale")]
    pub channel: Channel,
    /// Only listings with this many bedrooms: `studio`, `1`, `2`, `3` or `4_plus`
    pub bedroom_band: Option<BedroomBand>,
    /// First month, YYYY-MM (or a day of it, YYYY-MM-DD)
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub start: Option<String>,
    /// Last month, same formats, not before `start`
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub end: Option<String>,
}

/// The listing area an `area_type` and `area_code` name, or the 404 message of a well-formed
/// code of another form (or none where one is needed, or one given for national).
fn area_of(t: AreaType, code: Option<&str>) -> Result<(ListingArea, String), ApiError> {
    let (kind, form) = match (t, code) {
        (AreaType::National, None) => return Ok((ListingArea::National, "national".into())),
        (AreaType::National, Some(c)) => {
            return Err(ApiError::NotFound(format!(
                "area_code {c:?} with area_type national (national takes no area_code)"
            )));
        }
        (AreaType::District, _) => (AreaKind::District, "an outward code such as XT1 or EX1"),
        (AreaType::Lad, _) => (
            AreaKind::Lad,
            "a local authority GSS code such as E06000046",
        ),
    };
    let Some(c) = code else {
        return Err(ApiError::NotFound(format!(
            "an area without area_code (for this area_type give area_code, {form})"
        )));
    };
    let id = AreaId::new(kind, c).map_err(|_| {
        ApiError::NotFound(format!(
            "area_code {c:?} (for this area_type the code is {form})"
        ))
    })?;
    Ok((
        listing_area(&id).unwrap_or(ListingArea::National),
        id.to_string(),
    ))
}

/// The checked supply (and supply-and-demand) request: 422 for a blank code or bad months, 404
/// for a code of another form than its `area_type`'s.
fn check_supply(p: SupplyParams) -> Result<SupplyRequest, ApiError> {
    let (start, end) =
        area_and_months(p.area_code.as_deref(), p.start.as_deref(), p.end.as_deref())?;
    let (area, area_label) = area_of(p.area_type, p.area_code.as_deref().map(str::trim))?;
    Ok(SupplyRequest {
        area,
        area_label,
        channel: p.channel,
        bedroom_band: p.bedroom_band,
        start: start.map(|m| m.to_string()),
        end: end.map(|m| m.to_string()),
    })
}

pub struct SupplyOp;

impl Operation for SupplyOp {
    type Params = SupplyParams;
    type Body = NoBody;
    type Input = SupplyRequest;
    type Output = SupplySeries;

    fn check(p: SupplyParams, _: NoBody) -> Result<SupplyRequest, ApiError> {
        check_supply(p)
    }

    async fn run(ctx: &Ctx, r: SupplyRequest) -> Result<SupplySeries, ApiError> {
        Ok(supply::supply_series(&ctx.state.db, &r).await?)
    }

    /// Nothing is charged when no listings feed is loaded.
    fn charged_items(out: &SupplySeries) -> Option<i64> {
        match out.status {
            Answer::Ok => None,
            Answer::NotAvailable => Some(0),
        }
    }
}

pub(crate) static SUPPLY: OpDecl = OpDecl {
    id: "market_listings",
    path: "/v1/market/listings",
    summary: "Monthly supply statistics of an area's listings",
    description: "One row per month for `area_type` `district` or `lad` with `area_code`, or `national`, one `channel` (`sale`, the default, or `rent`) and optionally one `bedroom_band`, between `start` and `end` months. A listing counts in the month of its first priced snapshot (its cohort): `new_listings_n`; `listings_added_n`, the never-reduced cohort (no later snapshot priced lower); `listings_reduced_n`, price cuts dated in the month whatever the cohort; `reduction_share`, the share of the cohort cut since; the quartiles of the cohort's first asking price (rent per calendar month on rent rows), the median per square metre where a floor area is stated (with its n), the new-home share, and agent concentration (HHI on percent shares, 0 to 10,000, and the top three's share). On sale rows, `asking_to_sold_ratio` (registered price over the last asking price) and `days_to_completion_median` are medians over `sold_matched_n` listings of the cohort whose UPRN sold after the first sighting and within 365 days: a match-rate-limited subset, never to be divided by `listings_added_n`. Without a listings feed the answer is `status: not_available` with the reason, no months, and is not charged. An area nothing places there is a 404, as is a code of another form than its `area_type`'s.",
    price: Price::PerCall(2),
    ..OpDecl::of::<SupplyOp>("market")
};

// ---------------------------------------------------------------------------------------------
// Supply and demand.

pub struct SupplyDemandOp;

impl Operation for SupplyDemandOp {
    type Params = SupplyParams;
    type Body = NoBody;
    type Input = SupplyRequest;
    type Output = SupplyDemand;

    fn check(p: SupplyParams, _: NoBody) -> Result<SupplyRequest, ApiError> {
        check_supply(p)
    }

    async fn run(ctx: &Ctx, r: SupplyRequest) -> Result<SupplyDemand, ApiError> {
        Ok(demand::supply_demand(&ctx.state.db, &r).await?)
    }

    /// Nothing is charged when no listings feed is loaded.
    fn charged_items(out: &SupplyDemand) -> Option<i64> {
        match out.status {
            Answer::Ok => None,
            Answer::NotAvailable => Some(0),
        }
    }
}

pub(crate) static SUPPLY_DEMAND: OpDecl = OpDecl {
    id: "market_supply_demand",
    path: "/v1/market/supply-demand",
    summary: "Live listing stock and the monthly flow of an area, with months of inventory",
    description: "For `area_type` `district` or `lad` with `area_code`, or `national`, one `channel` (`sale`, the default, or `rent`) and optionally one `bedroom_band`: `stock`, the listings live on the feed's latest sighting (`as_of`) with how many are available, their median age on the market in days and how many are new homes; and `months`, one row per month between `start` and `end` with the fields of `/v1/market/listings` (listings added, the never-reduced cohort, and reduced, reduction share, asking quartiles, new-home share, agent concentration, asking-to-sold and days to completion on the registry-matched subset), the stock live at the month's end (`stock_end_n`), the category A sales registered in the area that completed in the month (`registered_sales_n`) and `months_of_inventory` = stock / sales. Sales are known only on sale rows without a bedroom band (Price Paid records no bedrooms and no lettings) and up to the latest loaded sale (`sales_known_through`); elsewhere they are null, with the reason in `sales_basis`, never 0. Stock is observed forwards only from `observed_since`. Without a listings feed the answer is `status: not_available` with the reason, no stock and no months, and is not charged. An area nothing places there is a 404 naming the nearest; a code of another form than its `area_type`'s is a 404 stating the form expected.",
    price: Price::PerCall(3),
    ..OpDecl::of::<SupplyDemandOp>("market")
};

// ---------------------------------------------------------------------------------------------
// Gross yields.

fn yield_months() -> usize {
    yields::MONTHS_MAX
}

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct YieldsParams {
    /// `district`, `lad` or `national` (the default)
    #[serde(default = "national")]
    pub area_type: AreaType,
    /// The district's outward code (XT1) or the local authority's GSS code (E06000046); not
    /// given for `national`. A code of another form than its `area_type`'s, or none where one is
    /// needed, names no area and is a 404 saying the form expected
    #[validate(length(min = 1, max = 20))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub area_code: Option<String>,
    /// Only listings with this many bedrooms: `studio`, `1`, `2`, `3` or `4_plus` (all when
    /// absent)
    pub bedroom_band: Option<BedroomBand>,
    /// First month, YYYY-MM (or a day of it, YYYY-MM-DD)
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub start: Option<String>,
    /// Last month, same formats, not before `start`
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub end: Option<String>,
    /// At most this many months, the latest (1 to 120; default 120)
    #[serde(default = "yield_months")]
    #[validate(range(min = 1, max = 120))]
    pub months: usize,
}

pub struct YieldsOp;

impl Operation for YieldsOp {
    type Params = YieldsParams;
    type Body = NoBody;
    type Input = YieldsRequest;
    type Output = Yields;

    fn check(p: YieldsParams, _: NoBody) -> Result<YieldsRequest, ApiError> {
        let (start, end) =
            area_and_months(p.area_code.as_deref(), p.start.as_deref(), p.end.as_deref())?;
        let (area, area_label) = area_of(p.area_type, p.area_code.as_deref().map(str::trim))?;
        Ok(YieldsRequest {
            area,
            area_label,
            bedroom_band: p.bedroom_band,
            start: start.map(|m| m.to_string()),
            end: end.map(|m| m.to_string()),
            months: p.months,
        })
    }

    async fn run(ctx: &Ctx, r: YieldsRequest) -> Result<Yields, ApiError> {
        Ok(yields::yields(&ctx.state.db, &r).await?)
    }

    /// Nothing is charged when no listings feed is loaded.
    fn charged_items(out: &Yields) -> Option<i64> {
        match out.status {
            Answer::Ok => None,
            Answer::NotAvailable => Some(0),
        }
    }
}

pub(crate) static YIELDS: OpDecl = OpDecl {
    id: "market_yields",
    path: "/v1/market/yields",
    summary: "Gross yields of an area and bedroom band by month, on asking and valuation bases",
    description: "One row per month for `area_type` `district` or `lad` with `area_code`, or `national`, and optionally one `bedroom_band`, between `start` and `end` (at most the latest `months`). A listing counts in the month of its first priced snapshot. `gross_yield_asking` = 12 x the median asking rent (per calendar month) of the month's rent listings / the median asking price of its sale listings in the same area and band (different properties); `gross_yield_avm_median` = the median, over the month's rent listings matched to a UPRN valued in the latest valuation vintage, of 12 x rent / that valuation, with `gross_yield_avm_n` (null, with `avm_reason`, until a vintage is built). A yield is null where its month is too thin: fewer than `min_listings` (5) listings on either side. Gross: before voids, management, maintenance, ground rent and service charge; asking, not achieved, rents and prices. Without a listings feed the answer is `status: not_available` with the reason and no months, and is not charged. An area nothing places there is a 404 naming the nearest; a code of another form than its `area_type`'s is a 404 stating the form expected.",
    price: Price::PerCall(2),
    ..OpDecl::of::<YieldsOp>("market")
};

// ---------------------------------------------------------------------------------------------
// Market facts.

/// The schema states the geography rule: exactly one of `postcode` and `lad_code`.
fn one_facts_geography(schema: &mut schemars::Schema) {
    terrace_core::patterns::exactly_one_of(schema, &[&["postcode"], &["lad_code"]]);
}

/// The body of market facts: one geography, an optional asset class and period.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = one_facts_geography)]
pub struct FactsBody {
    /// A postcode district (outward code, XT1) or a full postcode, which is read as its district
    /// (the facts have no sector or unit grain). Exactly one of postcode and lad_code.
    #[validate(length(max = 20))]
    #[schemars(regex(pattern = terrace_core::patterns::DISTRICT))]
    pub postcode: Option<String>,
    /// A local authority: its GSS code (E06000046) or its name (Isle of Wight), as the loaded
    /// boundaries name it; an unknown name is a 404 naming the nearest. Exactly one of postcode
    /// and lad_code.
    #[validate(length(min = 1, max = 100))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub lad_code: Option<String>,
    /// The asset class's property type: `detached`, `semi_detached`, `terraced` or `flat` (all
    /// when absent)
    pub property_type: Option<AssetType>,
    /// The asset class's bedrooms: `studio`, `1`, `2`, `3` or `4_plus` (all when absent)
    pub bedroom_band: Option<BedroomBand>,
    /// First month, YYYY-MM (or a day of it, YYYY-MM-DD); default eleven months before `end`
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub start: Option<String>,
    /// Last month, same formats, not before `start`; default the month of the feed's latest
    /// sighting
    #[schemars(regex(pattern = terrace_core::patterns::MONTH))]
    pub end: Option<String>,
}

pub struct FactsOp;

impl Operation for FactsOp {
    type Params = NoParams;
    type Body = Json<FactsBody>;
    type Input = FactsRequest;
    type Output = MarketFacts;

    fn check(_: NoParams, Json(b): Json<FactsBody>) -> Result<FactsRequest, ApiError> {
        let mut found = Vec::new();
        let geography = match (&b.postcode, &b.lad_code) {
            (None, None) => {
                found.push(Violation::new(
                    &["postcode"],
                    "missing",
                    "Field required: give exactly one of postcode and lad_code",
                ));
                None
            }
            (Some(_), Some(_)) => {
                found.push(Violation::new(
                    &[],
                    "value_error",
                    "Value error, give exactly one of postcode and lad_code, not both",
                ));
                None
            }
            (Some(p), None) => match terrace_core::Postcode::parse_district(p) {
                Ok(d) => Some(FactsGeography::District(d)),
                Err(_) => {
                    found.push(value_error(
                        "postcode",
                        "a postcode district (an outward code such as XT1) or a full postcode; the facts have no sector, unit, LSOA or ward grain",
                        p,
                    ));
                    None
                }
            },
            (None, Some(l)) => {
                if terrace_core::patterns::is_blank(l) {
                    found.push(value_error("lad_code", "lad_code is not blank", l));
                    None
                } else {
                    Some(FactsGeography::LocalAuthority(l.trim().to_string()))
                }
            }
        };
        let mut month = |field: &str, given: Option<&str>| month_param(field, given, &mut found);
        let start = month("start", b.start.as_deref());
        let end = month("end", b.end.as_deref());
        if let (Some(s), Some(e)) = (start, end)
            && s > e
        {
            found.push(value_error(
                "start",
                "start is not after end",
                b.start.as_deref().unwrap_or_default(),
            ));
        }
        match geography {
            Some(geography) if found.is_empty() => Ok(FactsRequest {
                geography,
                property_type: b.property_type,
                bedroom_band: b.bedroom_band,
                start: start.map(|m| m.to_string()),
                end: end.map(|m| m.to_string()),
            }),
            _ => Err(invalid(In::Body, found)),
        }
    }

    async fn run(ctx: &Ctx, r: FactsRequest) -> Result<MarketFacts, ApiError> {
        Ok(facts::market_facts(&ctx.state.db, &r).await?)
    }
}

pub(crate) static FACTS: OpDecl = OpDecl {
    id: "market_facts",
    path: "/v1/market/facts",
    summary: "Price, rent, yield and days on market for a geography and asset class (free)",
    description: "Exactly one geography: `postcode` (a district, or a full postcode read as its district) or `lad_code` (a local authority's GSS code or name); an asset class (`property_type`, `bedroom_band`) and a period (`start`, `end` months; default the twelve months to the feed's latest sighting). Each metric carries its `basis` (`asking`: the listings feed; `sold`: registered Price Paid sales), its `n`, unit and definition: `price_asking`, `price_sold`, `rent_asking` (per calendar month), `gross_yield_asking` (12 x rent / price, each side at least 5 listings) and `days_on_market` (first sighting to first under-offer or sold-STC snapshot). A metric without data is named in `metrics_with_no_data`, never given as 0. `price_sold`'s n counts only sales matched to a UPRN: a sample that runs short of the registry (`count_basis`, `registered_sales_n`), not a count of sales. Without a listings feed the answer is `status: not_available` with the reason and no metrics. A district or local authority nothing places there is a 404 naming the nearest.",
    ..OpDecl::of::<FactsOp>("market")
};
