//! The operation registry: every operation declared once.
//!
//! Architecture Invariant: routes, the OpenAPI document, the public price list (and the MCP tool
//! list) are generated from [`OPERATIONS`]; no price literal appears anywhere else.

use crate::error::{ApiError, FieldError};
use crate::state::AppState;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use terrace_credits::Caller;
use validator::Validate;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Patch,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

/// How an operation is priced, in credits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Price {
    Free,
    /// A fixed price per successful call.
    PerCall(i64),
    /// A batch: the unit price per answered item (never more than the single calls).
    PerItem(i64),
    /// A saved search's run: exactly what the stored operation charges for the answer it gives
    /// (its own price rule), never more than `at_most`, the dearest searchable operation's price.
    OfStoredOperation {
        at_most: i64,
    },
}

impl Price {
    /// The `x-credits` figure: the price per call, or per answered item for a batch.
    pub fn credits(self) -> i64 {
        match self {
            Price::Free => 0,
            Price::PerCall(n) | Price::PerItem(n) => n,
            Price::OfStoredOperation { at_most } => at_most,
        }
    }

    pub fn rule(self) -> &'static str {
        match self {
            Price::Free => "free",
            Price::PerCall(_) => "per_call",
            Price::PerItem(_) => "per_answered_item",
            Price::OfStoredOperation { .. } => "price_of_stored_operation",
        }
    }

    /// The price as a sentence, for descriptions (OpenAPI and MCP tools).
    pub fn sentence(self) -> String {
        let plural = |n: i64| if n == 1 { "" } else { "s" };
        match self {
            Price::Free => "Free (0 credits).".to_string(),
            Price::PerCall(n) => format!("Costs {n} credit{} per successful call.", plural(n)),
            Price::PerItem(n) => format!("Costs {n} credit{} per answered item.", plural(n)),
            Price::OfStoredOperation { at_most } => format!(
                "Costs the price of the stored operation: exactly what a direct call of it with the saved parameters would charge for the answer it gives (at most {at_most} credit{}).",
                plural(at_most)
            ),
        }
    }

    /// The most a call can cost before it runs (for the early 402): a batch's minimum is one item.
    /// A saved search's run asks nothing up front here: it applies the stored operation's own
    /// early 402 once it knows which operation that is.
    pub fn upfront(self) -> i64 {
        match self {
            Price::Free | Price::PerCall(_) | Price::PerItem(_) => self.credits(),
            Price::OfStoredOperation { .. } => 0,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Deprecation {
    /// The path of the operation that replaces this one.
    pub successor: &'static str,
    /// HTTP-date after which the operation may be removed.
    pub sunset: &'static str,
}

pub type SchemaFn = fn(&mut SchemaGenerator) -> Schema;
pub type OpFuture<'a> = Pin<Box<dyn Future<Output = Result<Answer, ApiError>> + Send + 'a>>;
/// A checked input, typed by its operation and passed on unchanged to its `run`.
pub type Checked = Box<dyn Any + Send>;
pub type CheckFn = fn(&OpDecl, RawInput) -> Result<Checked, ApiError>;
pub type RunFn = for<'a> fn(&'a Ctx, Checked) -> OpFuture<'a>;

/// One operation: its typed input and what it does with it.
///
/// `Params` are the path and query parameters (path parameters are the fields named in the
/// path template), `Body` the JSON body ([`NoBody`], [`Json`] or [`Optional`]). Both derive
/// `Deserialize`, `validator::Validate` and `schemars::JsonSchema`, so the limits written once as
/// `#[validate(...)]` attributes give the validation, the OpenAPI parameters and body, and the MCP
/// input schema. [`Operation::check`] turns them into the operation's `Input` (domain types, with
/// the domain's own rules applied) before any credit check; [`Operation::run`] receives it.
pub trait Operation: 'static {
    type Params: DeserializeOwned + Validate + JsonSchema + Send + 'static;
    type Body: Body;
    type Input: Send + 'static;
    type Output: Serialize + JsonSchema + Send;

    /// The domain's rules over the validated input; a failure is 422 and costs nothing.
    fn check(params: Self::Params, body: Self::Body) -> Result<Self::Input, ApiError>;

    fn run(
        ctx: &Ctx,
        input: Self::Input,
    ) -> impl Future<Output = Result<Self::Output, ApiError>> + Send;

    /// The output's JSON text when the operation already holds it (an answer kept as text, like
    /// the address lookups' cached records): it is then copied once instead of serialised.
    fn output_text(_output: &Self::Output) -> Option<&str> {
        None
    }

    /// For a batch, the items to charge; for a per-call operation, `Some(0)` when this answer is
    /// not charged. `None`: the price as declared.
    fn charged_items(_output: &Self::Output) -> Option<i64> {
        None
    }

    /// A write the answer leaves for after its charge commits (a saved search's run record): it
    /// happens only for a call that was charged, so a call refused at commit changes nothing.
    fn after_commit(_output: &Self::Output) -> Option<AfterCommit> {
        None
    }
}

/// A write done after the call's charge commits, given the service's state.
pub type AfterCommit =
    Box<dyn FnOnce(AppState) -> Pin<Box<dyn Future<Output = Result<(), ApiError>> + Send>> + Send>;

/// No parameters.
#[derive(Debug, Default, serde::Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// What an operation takes as its body.
pub trait Body: Sized + Send + 'static {
    /// The body's schema; `None` when the operation takes no body.
    const SCHEMA: Option<SchemaFn>;
    /// Whether a missing body is 422.
    const REQUIRED: bool;
    /// The body from the request's JSON (`None`: no body sent).
    fn from_json(body: Option<Value>) -> Result<Self, Vec<FieldError>>;
}

/// No body (anything sent is ignored, as before).
pub struct NoBody;

impl Body for NoBody {
    const SCHEMA: Option<SchemaFn> = None;
    const REQUIRED: bool = false;
    fn from_json(_: Option<Value>) -> Result<Self, Vec<FieldError>> {
        Ok(NoBody)
    }
}

/// A required JSON body.
pub struct Json<T>(pub T);

impl<T: DeserializeOwned + Validate + JsonSchema + Send + 'static> Body for Json<T> {
    const SCHEMA: Option<SchemaFn> = Some(schema_of::<T>);
    const REQUIRED: bool = true;
    fn from_json(body: Option<Value>) -> Result<Self, Vec<FieldError>> {
        match body {
            None => Err(vec![FieldError::new(
                &["body"],
                "missing",
                "Field required",
            )]),
            Some(v) => crate::input::body(v).map(Json),
        }
    }
}

/// An optional JSON body: its default when absent.
pub struct Optional<T>(pub T);

impl<T: DeserializeOwned + Validate + JsonSchema + Default + Send + 'static> Body for Optional<T> {
    const SCHEMA: Option<SchemaFn> = Some(schema_of::<T>);
    const REQUIRED: bool = false;
    fn from_json(body: Option<Value>) -> Result<Self, Vec<FieldError>> {
        match body {
            None => Ok(Optional(T::default())),
            Some(v) => crate::input::body(v).map(Optional),
        }
    }
}

/// Gives a transparent wrapper the schema of the type it wraps (same name, same `$ref`).
macro_rules! schema_as {
    ($wrapper:ty => $inner:ty) => {
        impl schemars::JsonSchema for $wrapper {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                <$inner as schemars::JsonSchema>::schema_name()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
                g.subschema_for::<$inner>()
            }
        }
    };
}
pub(crate) use schema_as;

/// One operation's contract, with its types erased so declarations fit in one list.
#[derive(Clone, Copy)]
pub struct Contract {
    pub params: SchemaFn,
    pub body: Option<SchemaFn>,
    /// Whether the body is required (422 when absent).
    pub body_required: bool,
    pub response: SchemaFn,
    pub check: CheckFn,
    pub run: RunFn,
}

impl Contract {
    pub const fn of<O: Operation>() -> Contract {
        Contract {
            params: schema_of::<O::Params>,
            body: <O::Body as Body>::SCHEMA,
            body_required: <O::Body as Body>::REQUIRED,
            response: schema_of::<O::Output>,
            check: check_erased::<O>,
            run: run_erased::<O>,
        }
    }
}

fn check_erased<O: Operation>(op: &OpDecl, raw: RawInput) -> Result<Checked, ApiError> {
    let locate = |name: &str| {
        if op.in_path(name) {
            crate::input::In::Path
        } else {
            crate::input::In::Query
        }
    };
    let mut errors = raw.refused;
    let params = crate::input::params::<O::Params>(&raw.params, &locate)
        .map_err(|e| errors.extend(e))
        .ok();
    // A body the surface could not read (not JSON) is already reported.
    let unreadable = errors.iter().any(|e| e.loc.first() == Some(&json!("body")));
    let body = if unreadable {
        None
    } else {
        <O::Body as Body>::from_json(raw.body)
            .map_err(|e| errors.extend(e))
            .ok()
    };
    let (Some(params), Some(body)) = (params, body) else {
        return Err(ApiError::Validation(errors));
    };
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    let input = O::check(params, body)?;
    Ok(Box::new(input))
}

fn run_erased<O: Operation>(ctx: &Ctx, input: Checked) -> OpFuture<'_> {
    Box::pin(async move {
        let input = input
            .downcast::<O::Input>()
            .map_err(|_| ApiError::Internal("an input checked for another operation".into()))?;
        let output = O::run(ctx, *input).await?;
        let mut answer = match O::output_text(&output) {
            Some(text) => Answer::of_text(text),
            None => Answer::of(&output)?,
        };
        answer.charged_items = O::charged_items(&output);
        answer.after_commit = O::after_commit(&output);
        Ok(answer)
    })
}

/// One operation, declared once. Declarations name what differs from [`OpDecl::of`].
pub struct OpDecl {
    /// Stable id, also the MCP tool name (snake_case).
    pub id: &'static str,
    pub method: Method,
    /// The path template; its `{name}` segments are the path parameters.
    pub path: &'static str,
    pub tag: &'static str,
    pub summary: &'static str,
    pub description: &'static str,
    pub price: Price,
    pub deprecated: Option<Deprecation>,
    /// False for operations that change state (key management, saved searches).
    pub read_only: bool,
    pub contract: Contract,
}

impl OpDecl {
    /// The defaults for operation `O` of family `tag`: GET without a body and POST with one,
    /// free, read-only, not deprecated. Id, path, summary and description are always given.
    pub const fn of<O: Operation>(tag: &'static str) -> OpDecl {
        let contract = Contract::of::<O>();
        OpDecl {
            id: "",
            method: if contract.body.is_some() {
                Method::Post
            } else {
                Method::Get
            },
            path: "",
            tag,
            summary: "",
            description: "",
            price: Price::Free,
            deprecated: None,
            read_only: true,
            contract,
        }
    }

    /// Whether calls take an idempotency key: charged operations and those that change state.
    pub fn takes_idempotency_key(&self) -> bool {
        self.price != Price::Free || !self.read_only
    }

    /// Whether `name` is a path parameter (a `{name}` segment of the path template).
    pub fn in_path(&self, name: &str) -> bool {
        self.path
            .split('/')
            .any(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) == Some(name))
    }
}

/// What running operations see.
pub struct Ctx {
    pub state: AppState,
    pub caller: Caller,
    pub request_id: String,
    pub now: chrono::DateTime<chrono::Utc>,
}

/// A call's input as a surface received it, before any check: path and query parameters by
/// name (HTTP: their text; MCP: the argument as given) and the JSON body if one was sent.
#[derive(Debug, Default)]
pub struct RawInput {
    pub params: Vec<(String, Value)>,
    pub body: Option<Value>,
    /// What the surface already refused (an MCP argument no parameter or body takes), reported
    /// first, with whatever else the check finds.
    pub refused: Vec<FieldError>,
    /// The call's idempotency key, when it sent one and the operation takes one.
    pub idempotency: Option<crate::pipeline::Idempotency>,
}

/// Room for `,"credits_charged":N,"credits_remaining":N` after an answer's text.
const CREDIT_FIELDS_ROOM: usize = 80;

/// What an operation answers: a JSON object, serialised once (its text, compact), and for
/// batches the number of items to charge. A per-call operation whose answer is not charged
/// (planning history `not_covered`) sets `charged_items` to `Some(0)`.
///
/// The answer is kept as text, not as a `serde_json::Map`: the HTTP surface appends the credit
/// fields to the text, so an answer is serialised once per call instead of into a map and then
/// from the map (measured in docs/BENCHMARKS.md, issue 20).
pub struct Answer {
    pub body: String,
    pub charged_items: Option<i64>,
    /// What to write once the charge has committed ([`Operation::after_commit`]).
    pub after_commit: Option<AfterCommit>,
}

impl Answer {
    pub fn of<T: Serialize>(v: &T) -> Result<Answer, ApiError> {
        let text = serde_json::to_string(v)
            .map_err(|e| ApiError::Internal(format!("serialising the answer: {e}")))?;
        // An output that is not an object (none is, today) is answered as `{"data": ...}`.
        let body = if text.starts_with('{') {
            text
        } else {
            format!("{{\"data\":{text}}}")
        };
        Ok(Answer {
            body,
            charged_items: None,
            after_commit: None,
        })
    }

    /// An answer from its JSON text (an object, as [`Answer::of`] would write it), copied once
    /// into a string with room for the credit fields the HTTP surface appends.
    pub fn of_text(text: &str) -> Answer {
        let body = if text.starts_with('{') {
            let mut body = String::with_capacity(text.len() + CREDIT_FIELDS_ROOM);
            body.push_str(text);
            body
        } else {
            format!("{{\"data\":{text}}}")
        };
        Answer {
            body,
            charged_items: None,
            after_commit: None,
        }
    }

    /// The credits this answer costs under `price`.
    pub fn credits(&self, price: Price) -> i64 {
        match price {
            Price::Free => 0,
            Price::PerCall(n) => n * self.charged_items.map_or(1, |c| c.min(1)),
            Price::PerItem(n) => n * self.charged_items.unwrap_or(0),
            // The run states the stored operation's charge for its answer in `charged_items`.
            Price::OfStoredOperation { at_most } => self.charged_items.unwrap_or(0).min(at_most),
        }
    }
}

pub fn schema_of<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

/// Every declared operation, in the order of the specification.
pub fn operations() -> &'static [&'static OpDecl] {
    crate::ops::all()
}

/// The public price list, generated from the declarations.
pub fn price_list() -> Value {
    let ops: Vec<Value> = operations()
        .iter()
        .map(|op| {
            json!({
                "operation_id": op.id,
                "method": op.method.as_str(),
                "path": op.path,
                "credits": op.price.credits(),
                "price_rule": op.price.rule(),
                "deprecated": op.deprecated.is_some(),
                "summary": op.summary,
            })
        })
        .collect();
    json!({
        "unit": "credits",
        "notes": "A failed call costs nothing. A batch costs its unit price per answered item, never more than the single calls. Free calls need a key and appear in usage at 0.",
        "operations": ops,
    })
}
