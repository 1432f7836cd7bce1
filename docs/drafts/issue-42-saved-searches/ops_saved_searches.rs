//! Saved searches (specification part 4.7): an account's named declaration of one searchable
//! operation and its parameters, validated when saved against that operation's own typed input,
//! and replayed by `run` at exactly that operation's price.
//!
//! They live in the gateway, not in a family crate: a saved search only stores and replays a
//! declaration of the gateway's own registry (its operation ids, its typed inputs, its charging),
//! which no domain crate knows (docs/ARCHITECTURE.md, "Saved searches").

use crate::error::{ApiError, FieldError};
use crate::input::{In, invalid};
use crate::registry::{Ctx, Json, Method, NoBody, NoParams, OpDecl, Operation, Price};
use chrono::{DateTime, NaiveDateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use terrace_core::Violation;
use terrace_core::cursor::{CursorError, CursorScope};
use terrace_store::StoreError;
use terrace_store::saved_searches::{self as st, SavedSearchRow};
use validator::Validate;

const TAG: &str = "saved_searches";

/// The saved-search operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[&CREATE, &LIST, &UPDATE, &DELETE, &RUN];

/// The operations a search may store: those that take an area or districts and filters and
/// return rows, with the field holding the rows and the field that keys a row (for "new since
/// the last run").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Searchable {
    /// `POST /v1/equity/long-held`
    EquityLongHeld,
    /// `POST /v1/land/plot-utilisation`
    LandPlotUtilisation,
    /// `GET /v1/market/listings`
    MarketListings,
    /// `GET /v1/auctions/lots`
    AuctionsLots,
}

impl Searchable {
    pub const ALL: [Searchable; 4] = [
        Searchable::EquityLongHeld,
        Searchable::LandPlotUtilisation,
        Searchable::MarketListings,
        Searchable::AuctionsLots,
    ];

    /// (operation id, rows field, row key field).
    pub fn shape(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Searchable::EquityLongHeld => ("equity_long_held", "items", "uprn"),
            Searchable::LandPlotUtilisation => ("land_plot_utilisation", "parcels", "inspire_id"),
            Searchable::MarketListings => ("market_listings", "months", "month"),
            Searchable::AuctionsLots => ("auctions_lots", "data", "lot_id"),
        }
    }

    pub fn id(self) -> &'static str {
        self.shape().0
    }

    fn parse(id: &str) -> Option<Searchable> {
        Searchable::ALL.into_iter().find(|s| s.id() == id)
    }

    /// The stored operation's declaration.
    pub fn decl(self) -> Result<&'static OpDecl, ApiError> {
        crate::ops::all()
            .iter()
            .copied()
            .find(|op| op.id == self.id())
            .ok_or_else(|| ApiError::Internal(format!("no operation {}", self.id())))
    }
}

/// The most a run can cost: the dearest searchable operation's price (a test keeps it true).
pub const RUN_AT_MOST: i64 = 8;

/// Checks `parameters` against the stored operation's own typed input, exactly as a direct call
/// is checked (`pipeline::input_from_arguments`, then the operation's contract check): each
/// failure is reported at `["body", "parameters", <field>]`.
fn validate(op: Searchable, parameters: &Map<String, Value>) -> Result<(), ApiError> {
    let decl = op.decl()?;
    let raw = crate::pipeline::input_from_arguments(decl, parameters);
    match (decl.contract.check)(decl, raw) {
        Ok(_) => Ok(()),
        Err(ApiError::Validation(errors)) => Err(ApiError::Validation(
            errors.into_iter().map(relocate).collect(),
        )),
        Err(e) => Err(e),
    }
}

/// A stored operation's failure located inside the saved search's `parameters`.
fn relocate(mut e: FieldError) -> FieldError {
    let rest: Vec<Value> = e
        .loc
        .iter()
        .skip_while(|l| {
            matches!(l.as_str(), Some("query" | "body" | "path" | "arguments"))
        })
        .cloned()
        .collect();
    let mut loc = vec![json!("body"), json!("parameters")];
    loc.extend(rest);
    e.loc = loc;
    e
}

fn name_taken(name: &str) -> ApiError {
    invalid(
        In::Body,
        vec![
            Violation::new(
                &["name"],
                "value_error",
                format!("Value error, the account already has a saved search named {name:?}"),
            )
            .with_input(name.to_string()),
        ],
    )
}

fn blank_name(name: &str) -> ApiError {
    invalid(
        In::Body,
        vec![
            Violation::new(&["name"], "value_error", "Value error, name is blank")
                .with_input(name.to_string()),
        ],
    )
}

fn not_found(id: &str) -> ApiError {
    ApiError::NotFound(format!("saved search {id:?}"))
}

/// A random search id: 16 random bytes, hex (never sequential, never guessable).
fn new_id() -> String {
    format!("ss_{}", &terrace_oauth::random_token())
}

/// A saved search as answered.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SavedSearch {
    pub search_id: String,
    pub name: String,
    pub operation: Searchable,
    /// The stored operation's parameters, as saved.
    pub parameters: Map<String, Value>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Null until the first run.
    pub last_run_at: Option<DateTime<Utc>>,
}

fn utc(t: NaiveDateTime) -> DateTime<Utc> {
    DateTime::from_naive_utc_and_offset(t, Utc)
}

fn answer(r: SavedSearchRow) -> Result<SavedSearch, ApiError> {
    let operation = Searchable::parse(&r.operation)
        .ok_or_else(|| ApiError::Internal(format!("a saved search of operation {}", r.operation)))?;
    let parameters = match serde_json::from_str(&r.parameters) {
        Ok(Value::Object(m)) => m,
        _ => return Err(ApiError::Internal("saved parameters are not an object".into())),
    };
    Ok(SavedSearch {
        search_id: r.search_id,
        name: r.name,
        operation,
        parameters,
        created_at: utc(r.created_at),
        updated_at: utc(r.updated_at),
        last_run_at: r.last_run_at.map(utc),
    })
}

fn trimmed_name(name: &str) -> Result<String, ApiError> {
    let n = name.trim();
    if n.is_empty() {
        return Err(blank_name(name));
    }
    Ok(n.to_string())
}

// ---------------------------------------------------------------------------------------------
// Create.

/// The body of `POST /v1/saved-searches`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateBody {
    /// A name unique on the account (1-100 characters)
    #[validate(length(min = 1, max = 100))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub name: String,
    /// The searchable operation to store
    pub operation: Searchable,
    /// The stored operation's parameters (its query parameters or body fields, by name), checked
    /// now as a direct call of it would be
    #[serde(default)]
    pub parameters: Map<String, Value>,
}

pub struct CreateOp;

impl Operation for CreateOp {
    type Params = NoParams;
    type Body = Json<CreateBody>;
    type Input = CreateBody;
    type Output = SavedSearch;

    fn check(_: NoParams, Json(b): Json<CreateBody>) -> Result<CreateBody, ApiError> {
        let name = trimmed_name(&b.name)?;
        validate(b.operation, &b.parameters)?;
        Ok(CreateBody { name, ..b })
    }

    async fn run(ctx: &Ctx, b: CreateBody) -> Result<SavedSearch, ApiError> {
        let now = ctx.now.naive_utc();
        let row = SavedSearchRow {
            search_id: new_id(),
            account_id: ctx.caller.account_id,
            name: b.name.clone(),
            operation: b.operation.id().to_string(),
            parameters: Value::Object(b.parameters).to_string(),
            created_at: now,
            updated_at: now,
            last_run_at: None,
            last_run_keys: None,
        };
        match st::insert(&ctx.state.db, row.clone()).await {
            Ok(()) => answer(row),
            Err(StoreError::Conflict(_)) => Err(name_taken(&b.name)),
            Err(e) => Err(e.into()),
        }
    }
}

pub(crate) static CREATE: OpDecl = OpDecl {
    id: "saved_searches_create",
    path: "/v1/saved-searches",
    summary: "Save a named search",
    description: "Saves `{name, operation, parameters}` on the account: `operation` is one of the searchable operations (`equity_long_held`, `land_plot_utilisation`, `market_listings`, `auctions_lots`), `parameters` its query parameters or body fields by name, checked now against that operation's own typed input exactly as a direct call would be (a failure is 422 at `[\"body\", \"parameters\", <field>]`, and an area the operation does not know is its own 404). Names are unique on the account (a second search of the same name is 422 at `name`). The id is random. Writes take `Idempotency-Key`.",
    read_only: false,
    ..OpDecl::of::<CreateOp>(TAG)
};

// ---------------------------------------------------------------------------------------------
// List.

fn default_limit() -> i64 {
    50
}

/// The query of `GET /v1/saved-searches`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// Searches per page (default 50)
    #[serde(default = "default_limit")]
    #[validate(range(min = 1, max = 200))]
    pub limit: i64,
    /// The `next_cursor` of the previous page, unchanged; absent for the first page
    #[validate(length(min = 1, max = 504))]
    #[schemars(regex(pattern = terrace_core::cursor::PATTERN))]
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SavedSearchList {
    /// Newest first.
    pub data: Vec<SavedSearch>,
    pub next_cursor: Option<String>,
}

pub struct ListOp;

impl Operation for ListOp {
    type Params = ListParams;
    type Body = NoBody;
    type Input = ListParams;
    type Output = SavedSearchList;

    fn check(p: ListParams, _: NoBody) -> Result<ListParams, ApiError> {
        Ok(p)
    }

    async fn run(ctx: &Ctx, p: ListParams) -> Result<SavedSearchList, ApiError> {
        let account = ctx.caller.account_id;
        // The cursor is bound to the account: another account's cursor names no page.
        let scope = CursorScope::new("saved_searches_list", &account);
        let after = match scope.decode_opt(p.cursor.as_deref()) {
            Ok(None) => None,
            Ok(Some(parts)) => match parts.as_slice() {
                [t, id] => match NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S%.f") {
                    Ok(t) => Some((t, id.clone())),
                    Err(_) => return Err(ApiError::NotFound("a page at this cursor".into())),
                },
                _ => return Err(ApiError::NotFound("a page at this cursor".into())),
            },
            Err(CursorError::Malformed(v)) => return Err(invalid(In::Query, vec![v])),
            Err(CursorError::NotThisQuery(s)) => return Err(ApiError::NotFound(s)),
        };
        let rows = st::page(&ctx.state.db, account, after, p.limit + 1).await?;
        let page = terrace_core::cursor::Page::from_overfetch(
            rows,
            p.limit as usize,
            &scope,
            |r: &SavedSearchRow| {
                vec![
                    r.created_at.format("%Y-%m-%dT%H:%M:%S%.f").to_string(),
                    r.search_id.clone(),
                ]
            },
        );
        Ok(SavedSearchList {
            data: page
                .data
                .into_iter()
                .map(answer)
                .collect::<Result<_, _>>()?,
            next_cursor: page.next_cursor,
        })
    }
}

pub(crate) static LIST: OpDecl = OpDecl {
    id: "saved_searches_list",
    path: "/v1/saved-searches",
    summary: "The account's saved searches, newest first",
    description: "Every saved search of the account, newest first (ties by id), paged by `limit` and `cursor` (the previous page's `next_cursor`; a cursor is bound to the account).",
    ..OpDecl::of::<ListOp>(TAG)
};

// ---------------------------------------------------------------------------------------------
// Update and delete.

/// The search id in the path.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchPath {
    /// The saved search's id
    #[validate(length(min = 1, max = 100))]
    pub search_id: String,
}

/// The body of `PATCH /v1/saved-searches/{search_id}`: at least one field.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateBody {
    /// A new name, unique on the account
    #[validate(length(min = 1, max = 100))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub name: Option<String>,
    /// New parameters for the stored operation, replacing the old ones whole, checked again
    pub parameters: Option<Map<String, Value>>,
}

pub struct UpdateOp;

impl Operation for UpdateOp {
    type Params = SearchPath;
    type Body = Json<UpdateBody>;
    type Input = (String, UpdateBody);
    type Output = SavedSearch;

    fn check(p: SearchPath, Json(b): Json<UpdateBody>) -> Result<(String, UpdateBody), ApiError> {
        if b.name.is_none() && b.parameters.is_none() {
            return Err(invalid(
                In::Body,
                vec![Violation::new(
                    &["name"],
                    "missing",
                    "Field required: give a new name, new parameters, or both",
                )],
            ));
        }
        let name = b.name.as_deref().map(trimmed_name).transpose()?;
        Ok((p.search_id, UpdateBody { name, ..b }))
    }

    async fn run(ctx: &Ctx, (id, b): (String, UpdateBody)) -> Result<SavedSearch, ApiError> {
        let (db, account) = (&ctx.state.db, ctx.caller.account_id);
        let Some(row) = st::get(db, account, &id).await? else {
            return Err(not_found(&id));
        };
        // New parameters are checked against the stored operation, as at save time.
        if let Some(p) = &b.parameters {
            let op = Searchable::parse(&row.operation)
                .ok_or_else(|| ApiError::Internal("unknown stored operation".into()))?;
            validate(op, p)?;
        }
        let parameters = b.parameters.map(|p| Value::Object(p).to_string());
        let changed = match st::update(db, account, &id, b.name.clone(), parameters, ctx.now.naive_utc()).await {
            Ok(n) => n,
            Err(StoreError::Conflict(_)) => {
                return Err(name_taken(b.name.as_deref().unwrap_or_default()));
            }
            Err(e) => return Err(e.into()),
        };
        // Deleted between the read and the write: the delete won.
        if changed == 0 {
            return Err(not_found(&id));
        }
        match st::get(db, account, &id).await? {
            Some(r) => answer(r),
            None => Err(not_found(&id)),
        }
    }
}

pub(crate) static UPDATE: OpDecl = OpDecl {
    id: "saved_searches_update",
    method: Method::Patch,
    path: "/v1/saved-searches/{search_id}",
    summary: "Rename a saved search or replace its parameters",
    description: "Renames the search (`name`, unique on the account) and/or replaces its parameters whole (`parameters`, checked again against the stored operation's typed input; new parameters forget the last run's rows, so the next run's rows are all new). Another account's search, or one deleted, is 404. Writes take `Idempotency-Key`.",
    read_only: false,
    ..OpDecl::of::<UpdateOp>(TAG)
};

#[derive(Debug, Serialize, JsonSchema)]
pub struct Deleted {
    pub search_id: String,
    pub deleted: bool,
}

pub struct DeleteOp;

impl Operation for DeleteOp {
    type Params = SearchPath;
    type Body = NoBody;
    type Input = String;
    type Output = Deleted;

    fn check(p: SearchPath, _: NoBody) -> Result<String, ApiError> {
        Ok(p.search_id)
    }

    async fn run(ctx: &Ctx, id: String) -> Result<Deleted, ApiError> {
        match st::delete(&ctx.state.db, ctx.caller.account_id, &id).await? {
            0 => Err(not_found(&id)),
            _ => Ok(Deleted {
                search_id: id,
                deleted: true,
            }),
        }
    }
}

pub(crate) static DELETE: OpDecl = OpDecl {
    id: "saved_searches_delete",
    method: Method::Delete,
    path: "/v1/saved-searches/{search_id}",
    summary: "Delete a saved search (irreversible)",
    description: "Deletes the search for good; a second delete, or another account's search, is 404.",
    read_only: false,
    ..OpDecl::of::<DeleteOp>(TAG)
};

// ---------------------------------------------------------------------------------------------
// Run.

#[derive(Debug, Serialize, JsonSchema)]
pub struct NewSinceLastRun {
    /// True on the first run (or the first after new parameters): every row is new.
    pub first_run: bool,
    /// The keys (the rows' `key_field`) of the rows this run returned that the last did not.
    pub keys: Vec<String>,
    pub n: usize,
    /// The field of each row that keys it.
    pub key_field: &'static str,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RunAnswer {
    pub search_id: String,
    pub name: String,
    pub operation: Searchable,
    /// This run's time.
    pub run_at: DateTime<Utc>,
    /// The previous run's time; null on the first.
    pub last_run_at: Option<DateTime<Utc>>,
    /// The stored operation's answer, exactly as a direct call returns it (without its credit
    /// fields: this call's are at the top level).
    pub result: Value,
    /// Which rows of `result` are new since the last run; null when the answer has no rows
    /// (`not_available` without a feed, say).
    pub new_since_last_run: Option<NewSinceLastRun>,
    /// What this run cost: the stored operation's price for this answer.
    pub credits_of_stored_operation: i64,
}

pub struct RunOp;

fn row_key(v: &Value, field: &str) -> Option<String> {
    match v.get(field)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl Operation for RunOp {
    type Params = SearchPath;
    type Body = NoBody;
    type Input = String;
    type Output = RunAnswer;

    fn check(p: SearchPath, _: NoBody) -> Result<String, ApiError> {
        Ok(p.search_id)
    }

    async fn run(ctx: &Ctx, id: String) -> Result<RunAnswer, ApiError> {
        let (db, account) = (&ctx.state.db, ctx.caller.account_id);
        let Some(row) = st::get(db, account, &id).await? else {
            return Err(not_found(&id));
        };
        let saved = answer(row.clone())?;
        let decl = saved.operation.decl()?;
        // The stored operation, as a direct call runs it: its own check of the saved
        // parameters, its early 402 at its own price, its run, and its price for the answer.
        let raw = crate::pipeline::input_from_arguments(decl, &saved.parameters);
        let input = (decl.contract.check)(decl, raw)?;
        let upfront = decl.price.upfront();
        if ctx.caller.balance < upfront {
            return Err(ApiError::InsufficientCredits {
                required: upfront,
                remaining: ctx.caller.balance,
            });
        }
        let inner = (decl.contract.run)(ctx, input).await?;
        let credits = inner.credits(decl.price);
        let result: Value = serde_json::from_str(&inner.body)
            .map_err(|e| ApiError::Internal(format!("reading the stored operation's answer: {e}")))?;
        let (_, rows_field, key_field) = saved.operation.shape();
        let keys: Option<Vec<String>> = result.get(rows_field).and_then(Value::as_array).map(|rows| {
            rows.iter().filter_map(|r| row_key(r, key_field)).collect()
        });
        let before: Option<Vec<String>> = row
            .last_run_keys
            .as_deref()
            .and_then(|k| serde_json::from_str(k).ok());
        let new_since_last_run = keys.as_ref().map(|keys| {
            let fresh: Vec<String> = match &before {
                Some(b) => keys.iter().filter(|k| !b.contains(k)).cloned().collect(),
                None => keys.clone(),
            };
            NewSinceLastRun {
                first_run: before.is_none(),
                n: fresh.len(),
                keys: fresh,
                key_field,
            }
        });
        if let Some(keys) = &keys {
            let text = serde_json::to_string(keys)
                .map_err(|e| ApiError::Internal(format!("writing run keys: {e}")))?;
            st::record_run(db, account, &id, ctx.now.naive_utc(), text).await?;
        }
        Ok(RunAnswer {
            search_id: saved.search_id,
            name: saved.name,
            operation: saved.operation,
            run_at: ctx.now,
            last_run_at: saved.last_run_at,
            result,
            new_since_last_run,
            credits_of_stored_operation: credits,
        })
    }

    fn charged_items(output: &RunAnswer) -> Option<i64> {
        Some(output.credits_of_stored_operation)
    }
}

pub(crate) static RUN: OpDecl = OpDecl {
    id: "saved_searches_run",
    method: Method::Post,
    path: "/v1/saved-searches/{search_id}/run",
    summary: "Run a saved search now and return its rows",
    description: "Runs the stored operation with the saved parameters exactly as a direct call would (its own check, its early 402 at its own price, its run) and charges exactly what that call would charge: the price of the stored operation (0 for auction lots, 6 for plot utilisation, 8 for equity long-held, and what the stored operation charges for the answer it gives, e.g. nothing for a `not_available` listings answer); a failure costs nothing. Returns the stored operation's answer in `result`, `last_run_at` (the previous run) and `new_since_last_run`: the keys of the rows not returned by the previous run (all rows on the first run). Another account's search is 404. Writes take `Idempotency-Key`.",
    price: Price::OfStoredOperation { at_most: RUN_AT_MOST },
    read_only: false,
    ..OpDecl::of::<RunOp>(TAG)
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_at_most_is_the_dearest_searchable_price() {
        let most = Searchable::ALL
            .iter()
            .map(|s| s.decl().unwrap().price.credits())
            .max()
            .unwrap();
        assert_eq!(most, RUN_AT_MOST);
    }
}
