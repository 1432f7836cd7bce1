//! The change feed (`POST /v1/property/changes-since`): listing events after a cursor.

use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::registry::{Ctx, Json, NoParams, OpDecl, Operation, Price};
use serde_json::Value;
use terrace_listings::{self as listings, PageRequest};

const TAG: &str = "property";

/// The schema of a cursor: a string of digits or a non-negative integer.
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // read by schemars only
enum CursorSchema {
    Digits(#[schemars(regex(pattern = r"^[0-9]{1,18}$"))] String),
    Id(#[schemars(range(min = 0))] i64),
}

/// The body of changes-since.
// Both fields are read by the listings crate's `PageRequest::read` (a cursor may be written as
// digits or an integer, and every broken rule is reported at its field); the schema documents
// the same rules.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema, validator::Validate)]
#[serde(deny_unknown_fields)]
pub struct ChangesSince {
    /// The id of the last event already seen (`next_cursor` of the previous page), as a string
    /// of digits or an integer; `"0"`, `0` or absent reads from the start of the log. Not a
    /// timestamp. An id that is not in the log is refused with 422.
    #[schemars(with = "Option<CursorSchema>")]
    #[serde(default)]
    pub cursor: Option<Value>,
    /// How many events at most (1 to 1000, default 100).
    #[schemars(with = "Option<i64>", range(min = 1, max = 1000))]
    #[serde(default)]
    pub limit: Option<Value>,
}

pub struct ChangesSinceOp;

impl Operation for ChangesSinceOp {
    type Params = NoParams;
    type Body = Json<ChangesSince>;
    type Input = PageRequest;
    type Output = listings::ChangesPage;

    fn check(_: NoParams, Json(body): Json<ChangesSince>) -> Result<PageRequest, ApiError> {
        PageRequest::read(body.cursor.as_ref(), body.limit.as_ref())
            .map_err(|v| invalid(In::Body, v))
    }

    async fn run(ctx: &Ctx, page: PageRequest) -> Result<listings::ChangesPage, ApiError> {
        listings::changes_since(&ctx.state.db, page)
            .await?
            .map_err(|unknown| {
                ApiError::NotFound(format!(
                    "change log event {} (the cursor: pass 0 or a `next_cursor`)",
                    unknown.0
                ))
            })
    }
}

pub(crate) static CHANGES_SINCE: OpDecl = OpDecl {
    id: "property_changes_since",
    path: "/v1/property/changes-since",
    summary: "Listing events after a cursor (the change feed)",
    description: "Events of the append-only change log after `cursor` (an event id, not a timestamp), oldest first: new listing, price reduction, price increase, status change, each with the listing's UPRN, postcode, channel, price and status before and after; `next_cursor` to pass next time and `has_more`. An empty page is a valid answer: read it with `coverage`, whose `event_types` are what the log records, `not_observed` what it cannot see (withdrawals) and `not_yet_fed` the five change kinds with no feed yet. A malformed cursor is 422 before any charge; a well-formed cursor that is not an event id of the log is 404 (`not_found`) and not charged. One price per page, empty or not. UK only.",
    price: Price::PerCall(1),
    ..OpDecl::of::<ChangesSinceOp>(TAG)
};
