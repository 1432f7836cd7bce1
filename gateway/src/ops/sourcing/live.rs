//! `POST /v1/sourcing/live-listings`: the current listings of up to ten postcode districts,
//! enriched (`terrace_sourcing::live`).

use super::{TAG, sourcing_ctx, sourcing_error};
use crate::error::ApiError;
use crate::input::{In, cursor_refused, invalid};
use crate::registry::{Ctx, Json, NoParams, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_sourcing::live::{self, LiveChannel, LiveListings, LiveQuery};
use validator::Validate;

fn default_limit() -> i64 {
    50
}

/// The body of `POST /v1/sourcing/live-listings`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LiveBody {
    /// Postcode districts (outward codes such as EX1 or SW1A; a full postcode is truncated to
    /// its district), 1 to 10
    #[validate(length(min = 1, max = 10))]
    #[schemars(extend("items" = {"type": "string", "pattern": terrace_core::patterns::DISTRICT}))]
    pub districts: Vec<String>,
    /// `sale` (default) or `rent`
    #[serde(default)]
    pub channel: LiveChannel,
    /// Rows per page (default 50)
    #[serde(default = "default_limit")]
    #[validate(range(min = 1, max = 200))]
    pub limit: i64,
    /// The `next_cursor` of the previous page of the same query
    #[validate(length(min = 1, max = 504))]
    #[schemars(regex(pattern = terrace_core::cursor::PATTERN))]
    pub cursor: Option<String>,
}

pub struct LiveOp;

impl Operation for LiveOp {
    type Params = NoParams;
    type Body = Json<LiveBody>;
    type Input = LiveQuery;
    type Output = LiveListings;

    fn check(_: NoParams, Json(b): Json<LiveBody>) -> Result<LiveQuery, ApiError> {
        let mut q = LiveQuery::new(
            &b.districts,
            b.channel,
            usize::try_from(b.limit).unwrap_or(1),
        )
        .map_err(|v| invalid(In::Body, v))?;
        let key = q
            .scope()
            .decode_opt(b.cursor.as_deref())
            .map_err(|e| cursor_refused(In::Body, e))?;
        if let Some(k) = key {
            q.after = Some(
                k.into_iter()
                    .next()
                    .ok_or_else(|| ApiError::NotFound("a page at this cursor".into()))?,
            );
        }
        Ok(q)
    }

    async fn run(ctx: &Ctx, q: LiveQuery) -> Result<LiveListings, ApiError> {
        live::live_listings(&sourcing_ctx(ctx), &q)
            .await
            .map_err(|e| sourcing_error(e, In::Body))
    }

    fn charged_items(out: &LiveListings) -> Option<i64> {
        (!out.answered()).then_some(0)
    }
}

pub(crate) static LIVE_LISTINGS: OpDecl = OpDecl {
    id: "sourcing_live_listings",
    path: "/v1/sourcing/live-listings",
    summary: "Current listings of postcode districts, enriched for sourcing",
    description: "The current listings (live on the feed's latest sighting, `as_of`) of 1 to 10 postcode `districts` on a `channel` (`sale` by default, or `rent`), in listing-id order, `limit` rows a page (pass `next_cursor` as `cursor` with the same body). Each row: asking against the latest valuation vintage's value of its UPRN (ratio and difference; sale listings), price per square metre where a floor area is stated (`floor_area_source`: the listing's, else the newest domestic certificate's), gross yield on two bases with their n (`gross_yield_asking`: the district's median current asking rent for the bedroom band x 12 over the asking price, or the asking rent over the district's median asking price on a rent listing; `gross_yield_avm`: over the property's valuation), lease years left (registered lease, else the listing's statement), the certificate's band, potential band and MEES standing, designation and hazard flags of the property's point (true, false or `not_checked`), days listed, agent, and a one-line `signals` summary (`none` when nothing stands out). A missing figure is `not_available` with the reason, never 0. An invalid district is a 422 naming it. With no listings feed loaded, `not_available` (`no_listings_feed`), free.",
    price: Price::PerCall(5),
    ..OpDecl::of::<LiveOp>(TAG)
};
