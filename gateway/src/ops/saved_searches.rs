//! Saved searches (specification part 4.7): an account's named declaration of one searchable
//! operation and its parameters, checked when saved against that operation's own typed input,
//! and replayed by `run` at exactly that operation's price.
//!
//! They live in the gateway, not in a family crate: a saved search only stores and replays a
//! declaration of the gateway's own registry (its operation ids, its typed inputs, its charging),
//! which no domain crate knows (docs/ARCHITECTURE.md, `gateway`). The rows are in
//! `terrace_store::saved_searches`.

use crate::error::{ApiError, FieldError};
use crate::input::{In, cursor_refused, invalid};
use crate::registry::{AfterCommit, Ctx, Json, Method, NoBody, OpDecl, Operation, Price};
use chrono::{DateTime, NaiveDateTime, SubsecRound, Utc};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value, json};
use terrace_core::Violation;
use terrace_core::cursor::{CursorScope, Page};
use terrace_store::StoreError;
use terrace_store::saved_searches::{self as st, SavedSearchRow};
use validator::Validate;

const TAG: &str = "saved_searches";

/// The saved-search operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[&CREATE, &LIST, &UPDATE, &DELETE, &RUN];

/// The operations a search may store: those that take an area (or an authority, or districts)
/// and filters and return rows.
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
    /// `POST /v1/sourcing/commercial`
    SourcingCommercial,
    /// `POST /v1/energy/retrofit-candidates`
    EnergyRetrofitCandidates,
    /// `POST /v1/buildings/mixed-use`
    BuildingsMixedUse,
    /// `POST /v1/sourcing/search`
    SourcingSearch,
    /// `POST /v1/sourcing/live-listings`
    SourcingLiveListings,
}

impl Searchable {
    pub const ALL: [Searchable; 9] = [
        Searchable::EquityLongHeld,
        Searchable::LandPlotUtilisation,
        Searchable::MarketListings,
        Searchable::AuctionsLots,
        Searchable::SourcingCommercial,
        Searchable::EnergyRetrofitCandidates,
        Searchable::BuildingsMixedUse,
        Searchable::SourcingSearch,
        Searchable::SourcingLiveListings,
    ];

    /// (operation id, the answer's field holding the rows, the row's field that keys it).
    pub fn shape(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Searchable::EquityLongHeld => ("equity_long_held", "items", "uprn"),
            Searchable::LandPlotUtilisation => ("land_plot_utilisation", "parcels", "land_id"),
            Searchable::MarketListings => ("market_listings", "months", "period"),
            Searchable::AuctionsLots => ("auctions_lots", "data", "lot_id"),
            Searchable::SourcingCommercial => ("sourcing_commercial", "data", "uarn"),
            Searchable::EnergyRetrofitCandidates => {
                ("energy_retrofit_candidates", "candidates", "uprn")
            }
            Searchable::BuildingsMixedUse => ("buildings_mixed_use", "buildings", "building_uprn"),
            Searchable::SourcingSearch => ("sourcing_search", "data", "uprn"),
            Searchable::SourcingLiveListings => ("sourcing_live_listings", "data", "listing_id"),
        }
    }

    /// The row field that keys a row of this answer: `shape`'s, but a sourcing search of
    /// parcels keys its rows by `parcel_id` (a parcel row has no UPRN).
    fn key_field(self, result: &Value) -> &'static str {
        if self == Searchable::SourcingSearch && result.get("asset") == Some(&json!("parcel")) {
            "parcel_id"
        } else {
            self.shape().2
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

/// Where a stored operation's parameters are, in a saved search's body.
const PARAMETERS: [&str; 2] = ["body", "parameters"];

/// The JSON types a property's schema allows (its `type`, its branches' types, an enum's).
fn types_of(s: &Value) -> Vec<String> {
    let mut out: Vec<String> = match &s["type"] {
        Value::String(t) => vec![t.clone()],
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_) => Vec::new(),
    };
    for k in ["anyOf", "oneOf"] {
        for b in s[k].as_array().into_iter().flatten() {
            out.extend(types_of(b));
        }
    }
    for v in s["enum"].as_array().into_iter().flatten() {
        out.push(json_type(v).to_string());
    }
    out
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A stored query operation's parameters are JSON values, not query-string text: each must be of
/// the JSON type its schema states (the query surface reads `"5"` as 5 and null as absent; a
/// saved search's body is JSON and is held to its schema).
fn type_errors(decl: &OpDecl, parameters: &Map<String, Value>) -> Vec<FieldError> {
    if decl.contract.body.is_some() {
        return Vec::new();
    }
    let settings = SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true);
    let mut g = settings.into_generator();
    let schema = (decl.contract.params)(&mut g).to_value();
    let mut errors = Vec::new();
    for (name, v) in parameters {
        let Some(s) = schema["properties"].get(name) else {
            continue;
        };
        let allowed = types_of(s);
        let got = json_type(v);
        let fits = |t: &String| t == got || (t == "number" && got == "integer");
        if allowed.is_empty() || allowed.iter().any(fits) {
            continue;
        }
        let (kind, what) = match allowed.iter().find(|t| *t != "null").map(String::as_str) {
            Some("integer") => ("int_type", "a valid integer"),
            Some("number") => ("float_type", "a valid number"),
            Some("boolean") => ("bool_type", "a valid boolean"),
            _ => ("string_type", "a valid string"),
        };
        let mut loc = PARAMETERS.to_vec();
        loc.push(name);
        errors.push(
            FieldError::new(&loc, kind, format!("Input should be {what}")).with_input(v.clone()),
        );
    }
    errors
}

/// Checks `parameters` against the stored operation's own typed input, exactly as a direct call
/// is checked (`pipeline::input_from_arguments`, then the operation's contract check), and gives
/// that input; each failure is reported at `["body", "parameters", <field>]`. An area the
/// operation does not know is that operation's own 404.
fn checked(
    decl: &'static OpDecl,
    parameters: &Map<String, Value>,
) -> Result<crate::registry::Checked, ApiError> {
    let mut refused = type_errors(decl, parameters);
    // The idempotency key is the call's, never a stored parameter.
    if let Some(v) = parameters.get(crate::pipeline::IDEMPOTENCY_ARGUMENT) {
        let mut loc = PARAMETERS.to_vec();
        loc.push(crate::pipeline::IDEMPOTENCY_ARGUMENT);
        refused.push(
            FieldError::new(&loc, "extra_forbidden", "Extra inputs are not permitted")
                .with_input(v.clone()),
        );
    }
    if !refused.is_empty() {
        return Err(ApiError::Validation(refused));
    }
    let raw = crate::pipeline::input_from_arguments(decl, parameters);
    (decl.contract.check)(decl, raw).map_err(|e| {
        if let ApiError::Validation(errors) = e {
            ApiError::Validation(errors.into_iter().map(relocate).collect())
        } else {
            e
        }
    })
}

/// A number written with a decimal point but no fraction (`15.0`) is the integer it is, as in
/// every body (docs/API-DESIGN.md): stored as that integer, so the query surface's reading of it
/// agrees.
fn integral(parameters: &mut Map<String, Value>) {
    for v in parameters.values_mut() {
        if let Value::Number(n) = v
            && !(n.is_i64() || n.is_u64())
            && let Some(f) = n.as_f64()
            && f.fract() == 0.0
            && f.abs() < 9.0e15
        {
            *v = json!(f as i64);
        }
    }
}

fn validate(op: Searchable, parameters: &Map<String, Value>) -> Result<(), ApiError> {
    checked(op.decl()?, parameters).map(|_| ())
}

/// A stored operation's failure, located inside the saved search's `parameters`.
fn relocate(mut e: FieldError) -> FieldError {
    let surface = e
        .loc
        .first()
        .and_then(Value::as_str)
        .is_some_and(|l| matches!(l, "query" | "body" | "path" | "arguments"));
    let mut loc: Vec<Value> = PARAMETERS.iter().map(|l| json!(l)).collect();
    loc.extend(e.loc.iter().skip(usize::from(surface)).cloned());
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

/// A name with something but spaces in it (the schema's `NON_BLANK` pattern), trimmed.
fn name_of(given: &str) -> Result<String, ApiError> {
    if terrace_core::patterns::is_blank(given) {
        return Err(invalid(
            In::Body,
            vec![
                Violation::new(&["name"], "value_error", "Value error, name is blank")
                    .with_input(given.to_string()),
            ],
        ));
    }
    Ok(given.trim().to_string())
}

fn not_found(id: &str) -> ApiError {
    ApiError::NotFound(format!("saved search {id:?}"))
}

/// A random search id: 32 random bytes, URL-safe base64 (never sequential, never guessable).
fn new_id() -> String {
    format!("ss_{}", terrace_oauth::random_token())
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
    /// The last run; null until the first.
    pub last_run_at: Option<DateTime<Utc>>,
}

fn utc(t: NaiveDateTime) -> DateTime<Utc> {
    DateTime::from_naive_utc_and_offset(t, Utc)
}

/// Now, to the microsecond (what PostgreSQL keeps), so an answer and a later read agree.
fn stamp(ctx: &Ctx) -> NaiveDateTime {
    ctx.now.naive_utc().trunc_subsecs(6)
}

fn answer(r: SavedSearchRow) -> Result<SavedSearch, ApiError> {
    let operation = Searchable::parse(&r.operation).ok_or_else(|| {
        ApiError::Internal(format!("a saved search of operation {}", r.operation))
    })?;
    let parameters = match serde_json::from_str(&r.parameters) {
        Ok(Value::Object(m)) => m,
        Ok(_) | Err(_) => {
            return Err(ApiError::Internal(
                "saved parameters are not a JSON object".into(),
            ));
        }
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

/// A present field's value: null is refused (a field is given or left out).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

// ---------------------------------------------------------------------------------------------
// Create.

/// The schema states which parameters each operation takes: one branch per searchable operation,
/// its `parameters` that operation's own parameters (a query operation's) or body (a body
/// operation's), with every limit they state.
fn one_branch_per_operation(schema: &mut schemars::Schema) {
    let settings = SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true);
    let mut g = settings.into_generator();
    let branches: Vec<Value> = Searchable::ALL
        .iter()
        .filter_map(|s| s.decl().ok().map(|d| (s.id(), d)))
        .map(|(id, d)| {
            let own = match d.contract.body {
                Some(body) => body(&mut g),
                None => (d.contract.params)(&mut g),
            };
            let mut own = own.to_value();
            if let Some(m) = own.as_object_mut() {
                for k in ["$schema", "title", "description"] {
                    m.remove(k);
                }
            }
            json!({"properties": {"operation": {"const": id}, "parameters": own}})
        })
        .collect();
    schema.insert("oneOf".into(), Value::Array(branches));
}

/// The body of `POST /v1/saved-searches`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = one_branch_per_operation)]
pub struct CreateBody {
    /// A name unique on the account (1-100 characters, not blank)
    #[validate(length(min = 1, max = 100))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub name: String,
    /// The searchable operation to store
    pub operation: Searchable,
    /// The stored operation's parameters by name (its query parameters, or its body's fields),
    /// checked now as a direct call of it would be; `{}` for none
    pub parameters: Map<String, Value>,
}

pub struct CreateOp;

impl Operation for CreateOp {
    type Params = crate::registry::NoParams;
    type Body = Json<CreateBody>;
    type Input = CreateBody;
    type Output = SavedSearch;

    fn check(
        _: crate::registry::NoParams,
        Json(mut b): Json<CreateBody>,
    ) -> Result<CreateBody, ApiError> {
        let name = name_of(&b.name);
        integral(&mut b.parameters);
        let checked = validate(b.operation, &b.parameters);
        let name = match (name, checked) {
            (Ok(n), Ok(())) => n,
            (Err(ApiError::Validation(mut a)), Err(ApiError::Validation(b))) => {
                a.extend(b);
                return Err(ApiError::Validation(a));
            }
            (Err(e), _) | (Ok(_), Err(e)) => return Err(e),
        };
        Ok(CreateBody { name, ..b })
    }

    async fn run(ctx: &Ctx, b: CreateBody) -> Result<SavedSearch, ApiError> {
        let now = stamp(ctx);
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
    description: "Saves `{name, operation, parameters}` on the account. `operation` is one of the searchable operations (`equity_long_held`, `land_plot_utilisation`, `market_listings`, `auctions_lots`, `sourcing_commercial`, `energy_retrofit_candidates`); `parameters` are its query parameters or body fields by name, as JSON values of the types its schema states, checked now against that operation's own typed input exactly as a direct call would be: a failure is 422 at `[\"body\", \"parameters\", <field>]`, and an area the operation does not know is its own 404. Names are unique on the account (a second search of the same name is 422 at `name`); the id is random. Writes take `Idempotency-Key`.",
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
    /// Newest first (ties by id, descending).
    pub data: Vec<SavedSearch>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

const STAMP: &str = "%Y-%m-%dT%H:%M:%S%.6f";

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
        // The cursor is bound to the account: another account's cursor names no page of this one.
        let scope = CursorScope::new("saved_searches_list", &account);
        let after = match scope
            .decode_opt(p.cursor.as_deref())
            .map_err(|e| cursor_refused(In::Query, e))?
        {
            None => None,
            Some(parts) => match parts.as_slice() {
                [t, id] => Some((
                    NaiveDateTime::parse_from_str(t, STAMP)
                        .map_err(|_| ApiError::NotFound("a page at this cursor".into()))?,
                    id.clone(),
                )),
                _ => return Err(ApiError::NotFound("a page at this cursor".into())),
            },
        };
        let rows = st::page(&ctx.state.db, account, after, p.limit + 1).await?;
        let page = Page::from_overfetch(rows, p.limit as usize, &scope, |r: &SavedSearchRow| {
            vec![r.created_at.format(STAMP).to_string(), r.search_id.clone()]
        });
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
    description: "Every saved search of the account, newest first (ties by id), paged by `limit` and `cursor` (the previous page's `next_cursor`; a cursor is bound to the account, and another's is a 404).",
    ..OpDecl::of::<ListOp>(TAG)
};

// ---------------------------------------------------------------------------------------------
// Update and delete.

/// The search id in the path.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchPath {
    /// The saved search's id (as `search_id` in the answer of its creation)
    #[validate(length(min = 1, max = 100))]
    pub search_id: String,
}

/// The body of `PATCH /v1/saved-searches/{search_id}`: a new name, new parameters, or both.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("minProperties" = 1))]
pub struct UpdateBody {
    /// A new name, unique on the account (1-100 characters, not blank)
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String")]
    #[validate(length(min = 1, max = 100))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub name: Option<String>,
    /// New parameters for the stored operation, replacing the old ones whole, checked again as
    /// at save time (the run's new rows then count from scratch)
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Map<String, Value>")]
    pub parameters: Option<Map<String, Value>>,
}

pub struct UpdateOp;

impl Operation for UpdateOp {
    type Params = SearchPath;
    type Body = Json<UpdateBody>;
    type Input = (String, UpdateBody);
    type Output = SavedSearch;

    fn check(
        p: SearchPath,
        Json(mut b): Json<UpdateBody>,
    ) -> Result<(String, UpdateBody), ApiError> {
        if let Some(p) = b.parameters.as_mut() {
            integral(p);
        }
        if b.name.is_none() && b.parameters.is_none() {
            return Err(invalid(
                In::Body,
                vec![Violation::new(
                    &[],
                    "missing",
                    "Field required: give a new name, new parameters, or both",
                )],
            ));
        }
        let name = b.name.as_deref().map(name_of).transpose()?;
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
                .ok_or_else(|| ApiError::Internal("an unknown stored operation".into()))?;
            validate(op, p)?;
        }
        let parameters = b.parameters.map(|p| Value::Object(p).to_string());
        let changed =
            match st::update(db, account, &id, b.name.clone(), parameters, stamp(ctx)).await {
                Ok(n) => n,
                Err(StoreError::Conflict(_)) => {
                    return Err(name_taken(b.name.as_deref().unwrap_or_default()));
                }
                Err(e) => return Err(e.into()),
            };
        // Deleted between the read and the write: the delete stands.
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
    description: "Renames the search (`name`, unique on the account) and/or replaces its parameters whole (`parameters`, checked again against the stored operation's typed input as at save time; new parameters forget the last run's rows, so the next run's rows are all new). At least one of the two. Another account's search, or one deleted, is 404. Writes take `Idempotency-Key`.",
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
    description: "Deletes the search for good; a second delete, or another account's search, is 404. Writes take `Idempotency-Key`.",
    read_only: false,
    ..OpDecl::of::<DeleteOp>(TAG)
};

// ---------------------------------------------------------------------------------------------
// Run.

#[derive(Debug, Serialize, JsonSchema)]
pub struct NewSinceLastRun {
    /// The field of `result` holding the rows.
    pub rows_field: &'static str,
    /// The field of each row that keys it (a sourcing search: `uprn` for units, `parcel_id` for
    /// parcels).
    pub key_field: &'static str,
    /// True when no earlier run (since the parameters were last set) returned rows: every row
    /// is new.
    pub first_run: bool,
    /// The keys of this run's rows that the last run with rows did not return, in row order.
    pub keys: Vec<String>,
    pub n: usize,
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
    /// The stored operation's answer, exactly as a direct call returns it, without its credit
    /// fields (this call's are at the top level).
    pub result: Value,
    /// Which rows of `result` are new since the last run; null when the answer has no rows
    /// (`not_available` without a feed, say).
    pub new_since_last_run: Option<NewSinceLastRun>,
    /// What this run cost: the stored operation's price for this answer (as `credits_charged`).
    pub credits_of_stored_operation: i64,
    /// The run's record, written once the charge commits.
    #[serde(skip)]
    record: Option<RunRecord>,
}

/// What a run records on its search: when it ran and its rows' keys, for the parameters it ran.
#[derive(Debug, Clone)]
struct RunRecord {
    account: i64,
    search_id: String,
    parameters: String,
    at: NaiveDateTime,
    keys: Option<String>,
}

fn row_key(v: &Value, field: &str) -> Option<String> {
    match v.get(field)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_) => None,
    }
}

pub struct RunOp;

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
        let parameters = row.parameters.clone();
        let before: Option<Vec<String>> = row
            .last_run_keys
            .as_deref()
            .and_then(|k| serde_json::from_str(k).ok());
        let saved = answer(row)?;
        let decl = saved.operation.decl()?;
        // The stored operation as a direct call runs it: its own check of the saved parameters,
        // its early 402 at its own price, its run, and its price for the answer it gives.
        let input = checked(decl, &saved.parameters)?;
        let upfront = decl.price.upfront();
        if ctx.caller.balance < upfront {
            return Err(ApiError::InsufficientCredits {
                required: upfront,
                remaining: ctx.caller.balance,
            });
        }
        let inner = (decl.contract.run)(ctx, input).await?;
        let credits = inner.credits(decl.price);
        let result: Value = serde_json::from_str(&inner.body).map_err(|e| {
            ApiError::Internal(format!("reading the stored operation's answer: {e}"))
        })?;
        let (_, rows_field, _) = saved.operation.shape();
        let key_field = saved.operation.key_field(&result);
        let keys: Option<Vec<String>> = result
            .get(rows_field)
            .and_then(Value::as_array)
            .map(|rows| rows.iter().filter_map(|r| row_key(r, key_field)).collect());
        let new_since_last_run = keys.as_ref().map(|keys| {
            let fresh: Vec<String> = match &before {
                Some(b) => keys.iter().filter(|k| !b.contains(k)).cloned().collect(),
                None => keys.clone(),
            };
            NewSinceLastRun {
                rows_field,
                key_field,
                first_run: before.is_none(),
                n: fresh.len(),
                keys: fresh,
            }
        });
        let text = keys
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| ApiError::Internal(format!("writing the run's keys: {e}")))?;
        let now = stamp(ctx);
        Ok(RunAnswer {
            search_id: saved.search_id,
            name: saved.name,
            operation: saved.operation,
            run_at: utc(now),
            last_run_at: saved.last_run_at,
            result,
            new_since_last_run,
            credits_of_stored_operation: credits,
            record: Some(RunRecord {
                account,
                search_id: id,
                parameters,
                at: now,
                keys: text,
            }),
        })
    }

    fn charged_items(output: &RunAnswer) -> Option<i64> {
        Some(output.credits_of_stored_operation)
    }

    /// The run is recorded only once it is charged (a run refused at commit leaves the search's
    /// last run as it was), and only on the parameters it ran: a search changed or deleted since
    /// it was read keeps the change (the run has answered, and is charged, either way).
    fn after_commit(output: &RunAnswer) -> Option<AfterCommit> {
        let r = output.record.clone()?;
        Some(Box::new(move |state: crate::state::AppState| {
            Box::pin(async move {
                st::record_run(
                    &state.db,
                    r.account,
                    &r.search_id,
                    &r.parameters,
                    r.at,
                    r.keys,
                )
                .await?;
                Ok(())
            })
        }))
    }
}

pub(crate) static RUN: OpDecl = OpDecl {
    id: "saved_searches_run",
    method: Method::Post,
    path: "/v1/saved-searches/{search_id}/run",
    summary: "Run a saved search now and return its rows",
    description: "Runs the stored operation with the saved parameters exactly as a direct call would (its own check, its early 402 at its own price, its run) and charges exactly what that direct call would charge for the answer it gives: auction lots are free, market listings 2 credits (nothing for a `not_available` answer without a listings feed), commercial sourcing 5, plot utilisation and retrofit candidates 6, long-held equity 8; a failure costs nothing. Returns the stored operation's answer in `result` (its first page: a stored `cursor` is stored like any parameter), `last_run_at` (the previous run) and `new_since_last_run`: the keys of this run's rows that the last run did not return (all of them on the first run, or the first after new parameters). Another account's search is 404. Writes take `Idempotency-Key`.",
    price: Price::OfStoredOperation {
        at_most: RUN_AT_MOST,
    },
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

    #[test]
    fn every_searchable_operation_is_declared_and_priced_per_call_or_free() {
        for s in Searchable::ALL {
            let d = s.decl().unwrap();
            assert!(
                matches!(d.price, Price::Free | Price::PerCall(_)),
                "{}: a run charges the stored operation's own rule",
                d.id
            );
        }
    }
}
