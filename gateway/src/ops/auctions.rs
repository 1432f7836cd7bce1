//! Auction operations (specification part 4.6, all GET, all free): lots, quarterly statistics,
//! comparables against the valuation, the discount to valuation and distressed properties, from
//! the operator's auction lot feed. Without a feed each answers 200 `not_available` with the
//! reason.

use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::ops::listings_market::value_error;
use crate::registry::{Ctx, NoBody, OpDecl, Operation};
use chrono::{Datelike, NaiveDate};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_auctions as au;
use terrace_auctions::LotType;
use terrace_core::Violation;
use validator::Validate;

const TAG: &str = "auctions";

/// The auctions family's operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[&COMPS, &DISCOUNT, &DISTRESSED, &LOTS, &STATS];

use terrace_core::patterns::{DATE, QUARTER_START};

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

fn ordered(
    from: (&str, Option<NaiveDate>),
    to: (&str, Option<NaiveDate>),
    found: &mut Vec<Violation>,
) {
    if let (Some(a), Some(b)) = (from.1, to.1)
        && a > b
    {
        found.push(value_error(
            to.0,
            &format!("{} must not be before {}", to.0, from.0),
            &b.to_string(),
        ));
    }
}

fn district(given: Option<&str>, found: &mut Vec<Violation>) -> Option<String> {
    let s = given?;
    match terrace_core::Postcode::parse_district(s) {
        Ok(d) => Some(d),
        Err(_) => {
            found.push(value_error(
                "postcode_district",
                "a postcode district is an outward code such as XT1",
                s,
            ));
            None
        }
    }
}

fn done<T>(found: Vec<Violation>, v: T) -> Result<T, ApiError> {
    if found.is_empty() {
        Ok(v)
    } else {
        Err(invalid(In::Query, found))
    }
}

fn default_lots_limit() -> usize {
    50
}

/// The query of `GET /v1/auctions/lots`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LotsParams {
    /// Lots per page (default 50)
    #[serde(default = "default_lots_limit")]
    #[validate(range(min = 1, max = 500))]
    pub limit: usize,
    /// The `next_cursor` of the previous page, unchanged; absent for the first page
    #[validate(length(min = 1, max = 504))]
    #[schemars(regex(pattern = terrace_core::cursor::PATTERN))]
    pub cursor: Option<String>,
    /// Auctions on or after this day, YYYY-MM-DD
    #[schemars(regex(pattern = DATE), extend("format" = "date"))]
    pub date_from: Option<String>,
    /// Auctions on or before this day, YYYY-MM-DD, not before `date_from`
    #[schemars(regex(pattern = DATE), extend("format" = "date"))]
    pub date_to: Option<String>,
    /// Only lots sold at, before or after the auction (default false)
    #[serde(default)]
    pub sold_only: bool,
    /// Only this auction house's lots: its slug as `meta.coverage` names it (`allsop`)
    #[validate(length(min = 1, max = 60))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub auctioneer: Option<String>,
    /// Only lots whose hammer price was published (default false)
    #[serde(default)]
    pub with_achieved_price: bool,
    /// Only lots with a quoted net initial yield (default false)
    #[serde(default)]
    pub with_yield: bool,
    /// Only lots in this postcode district (outward code, XT1)
    #[validate(length(max = 20))]
    #[schemars(regex(pattern = terrace_core::patterns::DISTRICT))]
    pub postcode_district: Option<String>,
}

pub struct LotsOp;

impl Operation for LotsOp {
    type Params = LotsParams;
    type Body = NoBody;
    type Input = au::LotsQuery;
    type Output = au::LotsAnswer;

    fn check(p: LotsParams, _: NoBody) -> Result<au::LotsQuery, ApiError> {
        let mut found = Vec::new();
        let date_from = day("date_from", p.date_from.as_deref(), &mut found);
        let date_to = day("date_to", p.date_to.as_deref(), &mut found);
        ordered(("date_from", date_from), ("date_to", date_to), &mut found);
        let postcode_district = district(p.postcode_district.as_deref(), &mut found);
        let auctioneer = p
            .auctioneer
            .as_deref()
            .map(|a| a.trim().to_ascii_lowercase().replace([' ', '-'], "_"));
        if auctioneer.as_deref() == Some("") {
            found.push(value_error("auctioneer", "auctioneer is blank", ""));
        }
        let filters = au::LotFilters {
            date_from,
            date_to,
            sold_only: p.sold_only,
            auctioneer,
            with_achieved_price: p.with_achieved_price,
            with_yield: p.with_yield,
            postcode_district,
        };
        let filters = done(found, filters)?;
        let after = au::lots_after(&filters, p.cursor.as_deref())?;
        Ok(au::LotsQuery {
            filters,
            limit: p.limit,
            after,
        })
    }

    async fn run(ctx: &Ctx, q: au::LotsQuery) -> Result<au::LotsAnswer, ApiError> {
        Ok(au::lots(&ctx.state.db, &ctx.state.auction_coverage, &q).await?)
    }
}

pub(crate) static LOTS: OpDecl = OpDecl {
    id: "auctions_lots",
    path: "/v1/auctions/lots",
    summary: "Auction lots: guide, outcome, published hammer price and quoted yield",
    description: "Lots of the operator's auction lot feed, newest auction first (ties by lot id), filtered by auction day (`date_from`, `date_to`), `auctioneer` (house slug), `postcode_district`, `sold_only`, `with_achieved_price` and `with_yield`, paged by `cursor` (`next_cursor` of the previous page). Each lot gives its house, date and number, address, postcode and UPRN with how it was matched (`feed`, `address_matcher` with its score, or `unmatched`: kept, never dropped), lot type, tenure, vacancy, rent passing, the guide (`single`, `range` or `at_least`: an indication, never a price), the outcome (sold, unsold, withdrawn, sold_prior, sold_after, postponed, unknown), the hammer price where the house published it (`achieved_price_status` `not_disclosed` on a sold lot without one: not unsold), the net initial yield as quoted, the source URL, and `property_id` shared by every offer of the same property across auctions. `meta.coverage` lists the houses the feed covers and the period each covers: other houses and periods are not covered. No open dataset of auction results exists: without a feed the answer is `status: not_available` with the reason.",
    ..OpDecl::of::<LotsOp>(TAG)
};

fn default_stats_limit() -> usize {
    100
}

/// The query of `GET /v1/auctions/stats`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatsParams {
    /// Only this postcode district (outward code, XT1); every district when absent
    #[validate(length(max = 20))]
    #[schemars(regex(pattern = terrace_core::patterns::DISTRICT))]
    pub postcode_district: Option<String>,
    /// First quarter: the first day of a quarter, YYYY-MM-DD (2024-01-01, 2024-04-01, ...)
    #[schemars(regex(pattern = QUARTER_START), extend("format" = "date"))]
    pub quarter_from: Option<String>,
    /// Last quarter: the first day of a quarter, not before `quarter_from`
    #[schemars(regex(pattern = QUARTER_START), extend("format" = "date"))]
    pub quarter_to: Option<String>,
    /// `true`: commercial and mixed lots only; `false`: residential, land and ground rent only;
    /// absent: all
    pub is_commercial: Option<bool>,
    /// Rows (quarter x district), newest quarter first (default 100)
    #[serde(default = "default_stats_limit")]
    #[validate(range(min = 1, max = 1000))]
    pub limit: usize,
}

fn quarter(field: &str, given: Option<&str>, found: &mut Vec<Violation>) -> Option<NaiveDate> {
    let d = day(field, given, found)?;
    if d.day() != 1 || d.month0() % 3 != 0 {
        found.push(value_error(
            field,
            "a quarter is given by its first day (YYYY-01-01, YYYY-04-01, YYYY-07-01 or YYYY-10-01)",
            &d.to_string(),
        ));
        return None;
    }
    Some(d)
}

pub struct StatsOp;

impl Operation for StatsOp {
    type Params = StatsParams;
    type Body = NoBody;
    type Input = au::StatsQuery;
    type Output = au::StatsAnswer;

    fn check(p: StatsParams, _: NoBody) -> Result<au::StatsQuery, ApiError> {
        let mut found = Vec::new();
        let quarter_from = quarter("quarter_from", p.quarter_from.as_deref(), &mut found);
        let quarter_to = quarter("quarter_to", p.quarter_to.as_deref(), &mut found);
        ordered(
            ("quarter_from", quarter_from),
            ("quarter_to", quarter_to),
            &mut found,
        );
        let postcode_district = district(p.postcode_district.as_deref(), &mut found);
        done(
            found,
            au::StatsQuery {
                postcode_district,
                quarter_from,
                quarter_to,
                is_commercial: p.is_commercial,
                limit: p.limit,
            },
        )
    }

    async fn run(ctx: &Ctx, q: au::StatsQuery) -> Result<au::StatsAnswer, ApiError> {
        Ok(au::stats(&ctx.state.db, &ctx.state.auction_coverage, &q).await?)
    }
}

pub(crate) static STATS: OpDecl = OpDecl {
    id: "auctions_stats",
    path: "/v1/auctions/stats",
    summary: "Quarterly auction statistics per postcode district",
    description: "One row per quarter and postcode district (newest quarter first, at most `limit`; `left_off` counts the rest), optionally one `postcode_district`, quarters `quarter_from`..`quarter_to` (first days of quarters) and `is_commercial`: lots catalogued, offered (not withdrawn, postponed or of unknown outcome), sold (at, before or after the sale), withdrawn, postponed, `sale_rate` = sold / offered, and three populations each with its own `n`, mean and median: `guide_gbp` (every lot with a guide; the midpoint of a range), `achieved_gbp` (published hammer prices only) and `net_initial_yield_pct` (as quoted). Guide and achieved are DIFFERENT POPULATIONS: `comparable` says when the lots with both are enough (at least 3, and 80% of the lots with a price) to compare them, and only then is `median_achieved_over_guide` given. Without a feed the answer is `status: not_available` with the reason.",
    ..OpDecl::of::<StatsOp>(TAG)
};

fn default_comps_limit() -> usize {
    20
}

fn one_comps_subject(schema: &mut schemars::Schema) {
    terrace_core::patterns::exactly_one_of(schema, &[&["uprn"], &["postcode_district"]]);
}

/// The query of `GET /v1/auctions/comps`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = one_comps_subject)]
pub struct CompsParams {
    /// The subject property: comparables come from its postcode district. Exactly one of uprn
    /// and postcode_district.
    #[validate(range(min = 1, max = 999_999_999_999_i64))]
    pub uprn: Option<i64>,
    /// A postcode district (outward code, XT1). Exactly one of uprn and postcode_district.
    #[validate(length(max = 20))]
    #[schemars(regex(pattern = terrace_core::patterns::DISTRICT))]
    pub postcode_district: Option<String>,
    /// The lot type of the comparables (default `residential`)
    pub lot_type: Option<LotType>,
    /// Auctions on or after this day, YYYY-MM-DD
    #[schemars(regex(pattern = DATE), extend("format" = "date"))]
    pub date_from: Option<String>,
    /// Auctions on or before this day, YYYY-MM-DD
    #[schemars(regex(pattern = DATE), extend("format" = "date"))]
    pub date_to: Option<String>,
    /// Comparables, newest first (default 20)
    #[serde(default = "default_comps_limit")]
    #[validate(range(min = 1, max = 100))]
    pub limit: usize,
}

pub struct CompsOp;

impl Operation for CompsOp {
    type Params = CompsParams;
    type Body = NoBody;
    type Input = au::CompsQuery;
    type Output = au::CompsAnswer;

    fn check(p: CompsParams, _: NoBody) -> Result<au::CompsQuery, ApiError> {
        let mut found = Vec::new();
        let date_from = day("date_from", p.date_from.as_deref(), &mut found);
        let date_to = day("date_to", p.date_to.as_deref(), &mut found);
        ordered(("date_from", date_from), ("date_to", date_to), &mut found);
        let subject = match (p.uprn, p.postcode_district.as_deref()) {
            (Some(u), None) => Some(au::CompsSubject::Uprn(u)),
            (None, Some(_)) => {
                district(p.postcode_district.as_deref(), &mut found).map(au::CompsSubject::District)
            }
            (None, None) => {
                found.push(Violation::new(
                    &["uprn"],
                    "missing",
                    "Field required: give exactly one of uprn and postcode_district",
                ));
                None
            }
            (Some(_), Some(_)) => {
                found.push(Violation::new(
                    &[],
                    "value_error",
                    "Value error, give exactly one of uprn and postcode_district, not both",
                ));
                None
            }
        };
        let q = subject.map(|subject| au::CompsQuery {
            subject,
            lot_type: p.lot_type.unwrap_or(LotType::Residential),
            date_from,
            date_to,
            limit: p.limit,
        });
        match (done(found, ())?, q) {
            ((), Some(q)) => Ok(q),
            ((), None) => Err(invalid(In::Query, vec![])),
        }
    }

    async fn run(ctx: &Ctx, q: au::CompsQuery) -> Result<au::CompsAnswer, ApiError> {
        Ok(au::comps(&ctx.state.db, &q).await?)
    }
}

pub(crate) static COMPS: OpDecl = OpDecl {
    id: "auctions_comps",
    path: "/v1/auctions/comps",
    summary: "Comparable auction lots on achieved prices, each against the valuation",
    description: "Sold lots with a published hammer price in the subject's postcode district (the district of `uprn` in the address register, or `postcode_district`), of `lot_type` (default residential), newest first (at most `limit`), each with the service's valuation of the lot's property at the auction month and `achieved_over_valuation`. Only the latest valuation vintage is stored: it is carried back to the auction month by the published house price index (district, else postcode area, else national) as the full valuation's back-series does (value x level(auction month) / level(vintage month)): a constructed value, said so in `valuation_basis`. A lot with no UPRN match or no valuation gives `valuation_at_auction` `not_available` with the reason. A UPRN not in the register is a 404. Without a feed the answer is `status: not_available` with the reason.",
    ..OpDecl::of::<CompsOp>(TAG)
};

/// The query of `GET /v1/auctions/discount`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiscountParams {
    /// Only this postcode district (outward code, XT1); the whole feed when absent
    #[validate(length(max = 20))]
    #[schemars(regex(pattern = terrace_core::patterns::DISTRICT))]
    pub postcode_district: Option<String>,
    /// Auctions on or after this day, YYYY-MM-DD
    #[schemars(regex(pattern = DATE), extend("format" = "date"))]
    pub date_from: Option<String>,
    /// Auctions on or before this day, YYYY-MM-DD
    #[schemars(regex(pattern = DATE), extend("format" = "date"))]
    pub date_to: Option<String>,
    /// Only lots of this type (all when absent)
    pub lot_type: Option<LotType>,
}

pub struct DiscountOp;

impl Operation for DiscountOp {
    type Params = DiscountParams;
    type Body = NoBody;
    type Input = au::DiscountQuery;
    type Output = au::DiscountAnswer;

    fn check(p: DiscountParams, _: NoBody) -> Result<au::DiscountQuery, ApiError> {
        let mut found = Vec::new();
        let date_from = day("date_from", p.date_from.as_deref(), &mut found);
        let date_to = day("date_to", p.date_to.as_deref(), &mut found);
        ordered(("date_from", date_from), ("date_to", date_to), &mut found);
        let postcode_district = district(p.postcode_district.as_deref(), &mut found);
        done(
            found,
            au::DiscountQuery {
                postcode_district,
                date_from,
                date_to,
                lot_type: p.lot_type,
            },
        )
    }

    async fn run(ctx: &Ctx, q: au::DiscountQuery) -> Result<au::DiscountAnswer, ApiError> {
        Ok(au::discount(&ctx.state.db, &q).await?)
    }
}

pub(crate) static DISCOUNT: OpDecl = OpDecl {
    id: "auctions_discount",
    path: "/v1/auctions/discount",
    summary: "How far below valuation auctions clear",
    description: "Over the sold lots of the area (`postcode_district`, or the whole feed), period (`date_from`, `date_to`) and `lot_type` that have both a published hammer price and a valuation at the auction month: `n`, the median of achieved / valuation, `median_discount_pct` = (median - 1) x 100 (negative below valuation), the quartiles and the interquartile range; `excluded` counts the sold lots left out (price not disclosed, no UPRN match, no valuation). The valuation is the latest vintage carried back to the auction month by the published index, as the full valuation's back-series does (`valuation_basis`). With no lot carrying both, `n` is 0 and the figures null (never 0). Without a feed the answer is `status: not_available` with the reason.",
    ..OpDecl::of::<DiscountOp>(TAG)
};

fn default_min_offers() -> usize {
    2
}

/// The query of `GET /v1/auctions/distressed`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DistressedParams {
    /// Only properties with a lot in this postcode district (outward code, XT1); the whole feed
    /// when absent
    #[validate(length(max = 20))]
    #[schemars(regex(pattern = terrace_core::patterns::DISTRICT))]
    pub postcode_district: Option<String>,
    /// At least this many offers (default 2)
    #[serde(default = "default_min_offers")]
    #[validate(range(min = 2, max = 20))]
    pub min_offers: usize,
    /// Properties listed (default 50)
    #[serde(default = "default_lots_limit")]
    #[validate(range(min = 1, max = 500))]
    pub limit: usize,
}

pub struct DistressedOp;

impl Operation for DistressedOp {
    type Params = DistressedParams;
    type Body = NoBody;
    type Input = au::DistressedQuery;
    type Output = au::DistressedAnswer;

    fn check(p: DistressedParams, _: NoBody) -> Result<au::DistressedQuery, ApiError> {
        let mut found = Vec::new();
        let postcode_district = district(p.postcode_district.as_deref(), &mut found);
        done(
            found,
            au::DistressedQuery {
                postcode_district,
                min_offers: p.min_offers,
                limit: p.limit,
            },
        )
    }

    async fn run(ctx: &Ctx, q: au::DistressedQuery) -> Result<au::DistressedAnswer, ApiError> {
        Ok(au::distressed(&ctx.state.db, &q).await?)
    }
}

pub(crate) static DISTRESSED: OpDecl = OpDecl {
    id: "auctions_distressed",
    path: "/v1/auctions/distressed",
    summary: "Properties offered repeatedly at auction and never sold",
    description: "Properties (the lots sharing a UPRN, or the same normalised address and postcode) offered at least `min_offers` times in the feed and never sold at, before or after any auction, with each offer's house, date, guide (not a price) and outcome, the change between the first and last guide, and `receivership_text` (a lot description names receivers, administrators or mortgagees in possession: a text heuristic). Most offers first (at most `limit`; `left_off` counts the rest). Without a feed the answer is `status: not_available` with the reason.",
    ..OpDecl::of::<DistressedOp>(TAG)
};
