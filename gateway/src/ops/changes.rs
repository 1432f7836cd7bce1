//! The change feed (`POST /v1/property/changes-since`): listing events after a cursor.

use crate::error::{ApiError, FieldError};
use crate::registry::{Ctx, Json, NoParams, OpDecl, Operation, Price};
use serde_json::{Value, json};
use terrace_listings as listings;

const TAG: &str = "property";

/// The most events one page may carry, and the default.
pub const PAGE_MAX: i64 = 1_000;
pub const PAGE_DEFAULT: i64 = 100;

/// The body of changes-since.
// Both fields take an integer or a string of digits, so their rules are the cursor's own
// (`parse`), not `#[validate]` attributes; the schema documents them.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema, validator::Validate)]
#[serde(deny_unknown_fields)]
pub struct ChangesSince {
    /// The id of the last event already seen (`next_cursor` of the previous page), as a string
    /// of digits or an integer; `"0"`, `0` or absent reads from the start of the log. Not a
    /// timestamp. An id that is not in the log is refused with 422.
    #[schemars(with = "Option<String>", regex(pattern = r"^[0-9]{1,18}$"))]
    #[serde(default)]
    pub cursor: Option<Value>,
    /// How many events at most (1 to 1000, default 100).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default)]
    pub limit: Option<Value>,
}

/// A checked page request: after `cursor`, at most `limit` events.
pub struct PageRequest {
    pub cursor: i64,
    pub limit: i64,
}

/// The cursor and page size of a body.
fn parse(body: &ChangesSince) -> Result<PageRequest, ApiError> {
    let mut errors = Vec::new();
    let cursor = match &body.cursor {
        None | Some(Value::Null) => Some(0),
        Some(Value::Number(n)) => n.as_i64().filter(|v| *v >= 0),
        Some(Value::String(s)) if (1..=18).contains(&s.len()) => s
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse().ok())
            .flatten(),
        Some(_) => None,
    };
    if cursor.is_none() {
        errors.push(
            FieldError::new(
                &["body", "cursor"],
                "value_error",
                "Value error, the cursor is an event id (digits) from a previous page's next_cursor",
            )
            .with_input(body.cursor.clone().unwrap_or(Value::Null)),
        );
    }
    let limit = match &body.limit {
        None | Some(Value::Null) => Some(PAGE_DEFAULT),
        Some(Value::Number(n)) => n.as_i64(),
        Some(_) => None,
    };
    match limit {
        None => errors.push(
            FieldError::new(
                &["body", "limit"],
                "int_parsing",
                "Input should be a valid integer",
            )
            .with_input(body.limit.clone().unwrap_or(Value::Null)),
        ),
        Some(n) if n < 1 => errors.push(
            FieldError::new(
                &["body", "limit"],
                "greater_than_equal",
                "Input should be greater than or equal to 1",
            )
            .with_input(n)
            .with_ctx(json!({"ge": 1})),
        ),
        Some(n) if n > PAGE_MAX => errors.push(
            FieldError::new(
                &["body", "limit"],
                "less_than_equal",
                format!("Input should be less than or equal to {PAGE_MAX}"),
            )
            .with_input(n)
            .with_ctx(json!({"le": PAGE_MAX})),
        ),
        Some(_) => {}
    }
    match (cursor, limit) {
        (Some(cursor), Some(limit)) if errors.is_empty() => Ok(PageRequest { cursor, limit }),
        _ => Err(ApiError::Validation(errors)),
    }
}

pub struct ChangesSinceOp;

impl Operation for ChangesSinceOp {
    type Params = NoParams;
    type Body = Json<ChangesSince>;
    type Input = PageRequest;
    type Output = listings::ChangesPage;

    fn check(_: NoParams, Json(body): Json<ChangesSince>) -> Result<PageRequest, ApiError> {
        parse(&body)
    }

    async fn run(ctx: &Ctx, page: PageRequest) -> Result<listings::ChangesPage, ApiError> {
        match listings::changes_since(&ctx.state.db, page.cursor, page.limit).await? {
            Ok(page) => Ok(page),
            Err(listings::changes::UnknownCursor(c)) => Err(ApiError::Validation(vec![
                FieldError::new(
                    &["body", "cursor"],
                    "value_error",
                    "Value error, the cursor is not an event id of the change log",
                )
                .with_input(c.to_string()),
            ])),
        }
    }
}

pub(crate) static CHANGES_SINCE: OpDecl = OpDecl {
    id: "property_changes_since",
    path: "/v1/property/changes-since",
    summary: "Listing events after a cursor (the change feed)",
    description: "Events of the append-only change log after `cursor` (an event id, not a timestamp), oldest first: new listing, price reduction, price increase, status change, each with the listing's UPRN, postcode, channel, price and status before and after; `next_cursor` to pass next time and `has_more`. An empty page is a valid answer: read it with `coverage`, whose `event_types` are what the log records, `not_observed` what it cannot see (withdrawals) and `not_yet_fed` the five change kinds with no feed yet. A malformed cursor is 422 before any charge; a well-formed cursor that is not an event id of the log is 422 and not charged. One price per page, empty or not. UK only.",
    price: Price::PerCall(1),
    ..OpDecl::of::<ChangesSinceOp>(TAG)
};
