//! The operation registry: every operation declared once.
//!
//! Architecture Invariant: routes, the OpenAPI document, the public price list (and the MCP tool
//! list) are generated from [`OPERATIONS`]; no price literal appears anywhere else.

use crate::error::{ApiError, FieldError};
use crate::params::{Param, Values};
use crate::state::AppState;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::future::Future;
use std::pin::Pin;
use terrace_credits::Caller;

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
}

impl Price {
    /// The `x-credits` figure: the price per call, or per answered item for a batch.
    pub fn credits(self) -> i64 {
        match self {
            Price::Free => 0,
            Price::PerCall(n) | Price::PerItem(n) => n,
        }
    }

    pub fn rule(self) -> &'static str {
        match self {
            Price::Free => "free",
            Price::PerCall(_) => "per_call",
            Price::PerItem(_) => "per_answered_item",
        }
    }

    /// The price as a sentence, for descriptions (OpenAPI and MCP tools).
    pub fn sentence(self) -> String {
        let plural = |n: i64| if n == 1 { "" } else { "s" };
        match self {
            Price::Free => "Free (0 credits).".to_string(),
            Price::PerCall(n) => format!("Costs {n} credit{} per successful call.", plural(n)),
            Price::PerItem(n) => format!("Costs {n} credit{} per answered item.", plural(n)),
        }
    }

    /// The most a call can cost before it runs (for the early 402): a batch's minimum is one item.
    pub fn upfront(self) -> i64 {
        self.credits()
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
pub type RunFn = for<'a> fn(&'a Ctx, Input) -> OpFuture<'a>;
/// Checks a call's input beyond its declared parameters (typically the body), before any credit
/// check or work, so invalid input is always 422.
pub type CheckFn = fn(&Input) -> Result<(), ApiError>;

/// One operation, declared once.
pub struct OpDecl {
    /// Stable id, also the MCP tool name (snake_case).
    pub id: &'static str,
    pub method: Method,
    pub path: &'static str,
    pub tag: &'static str,
    pub summary: &'static str,
    pub description: &'static str,
    pub price: Price,
    pub params: &'static [Param],
    pub body: Option<SchemaFn>,
    /// Whether the body is required (422 when absent).
    pub body_required: bool,
    pub response: SchemaFn,
    pub deprecated: Option<Deprecation>,
    /// False for operations that change state (key management, saved searches).
    pub read_only: bool,
    pub check: Option<CheckFn>,
    pub run: RunFn,
}

/// What a running operation sees.
pub struct Ctx {
    pub state: AppState,
    pub caller: Caller,
    pub request_id: String,
    pub now: chrono::DateTime<chrono::Utc>,
}

/// Validated input of one call.
pub struct Input {
    pub params: Values,
    pub body: Option<Value>,
}

impl Input {
    /// Deserialises the JSON body into the operation's typed body, mapping serde's complaints to
    /// validation errors located in the body.
    pub fn body_as<T: DeserializeOwned>(&self, required: bool) -> Result<Option<T>, ApiError> {
        match &self.body {
            None if required => Err(ApiError::Validation(vec![FieldError::new(
                &["body"],
                "missing",
                "Field required",
            )])),
            None => Ok(None),
            // serde would read a struct from an array positionally; a body must be an object.
            Some(v) if !v.is_object() => Err(ApiError::Validation(vec![serde_error("", v)])),
            Some(v) => serde_json::from_value(v.clone())
                .map(Some)
                .map_err(|e| ApiError::Validation(vec![serde_error(&e.to_string(), v)])),
        }
    }
}

fn serde_error(msg: &str, body: &Value) -> FieldError {
    let between = |s: &str| s.split('`').nth(1).map(str::to_string);
    if msg.starts_with("unknown field") {
        let f = between(msg).unwrap_or_default();
        FieldError::new(
            &["body", &f],
            "extra_forbidden",
            "Extra inputs are not permitted",
        )
    } else if msg.starts_with("missing field") {
        let f = between(msg).unwrap_or_default();
        FieldError::new(&["body", &f], "missing", "Field required")
    } else if !body.is_object() {
        FieldError::new(
            &["body"],
            "model_attributes_type",
            "Input should be a valid dictionary or object to extract fields from",
        )
        .with_input(body.clone())
    } else {
        FieldError::new(
            &["body"],
            "type_error",
            format!("Input has the wrong type: {msg}"),
        )
    }
}

/// What an operation answers: a JSON object, and for batches the number of items to charge.
/// A per-call operation whose answer is not charged (planning history `not_covered`) sets
/// `charged_items` to `Some(0)`.
pub struct Answer {
    pub body: Map<String, Value>,
    pub charged_items: Option<i64>,
}

impl Answer {
    pub fn of<T: Serialize>(v: &T) -> Result<Answer, ApiError> {
        match serde_json::to_value(v) {
            Ok(Value::Object(body)) => Ok(Answer {
                body,
                charged_items: None,
            }),
            Ok(other) => Ok(Answer {
                body: Map::from_iter([("data".into(), other)]),
                charged_items: None,
            }),
            Err(e) => Err(ApiError::Internal(format!("serialising the answer: {e}"))),
        }
    }

    /// The credits this answer costs under `price`.
    pub fn credits(&self, price: Price) -> i64 {
        match price {
            Price::Free => 0,
            Price::PerCall(n) => n * self.charged_items.map_or(1, |c| c.min(1)),
            Price::PerItem(n) => n * self.charged_items.unwrap_or(0),
        }
    }
}

pub fn schema_of<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

/// Every declared operation, in the order of the specification.
pub fn operations() -> &'static [&'static OpDecl] {
    crate::ops::ALL
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
