//! The charged call, shared by every surface (HTTP routes, the MCP tool server, `terrace mcp
//! --stdio`): rate limit, validation result, the operation's own check, the early 402, the run,
//! and the ledger charge.
//!
//! Architecture Invariant: HTTP and MCP call [`execute`] with the same typed input and the same
//! declaration, so a tool call costs what the HTTP call costs, on the same ledger, and a failure
//! on either surface charges nothing. Each surface authenticates its own way, builds the
//! [`Input`] from its own wire form, and maps [`ApiError`] to its own error form with a match that
//! names every variant.

use crate::error::{ApiError, FieldError};
use crate::registry::{Ctx, Input, OpDecl};
use crate::state::AppState;
use serde_json::{Map, Value};
use terrace_credits::{Caller, Surface};

/// A successful call: the operation's JSON object and what it cost.
#[derive(Debug)]
pub struct Charged {
    pub body: Map<String, Value>,
    pub credits_charged: i64,
    pub credits_remaining: i64,
}

/// A failed call: the error, the caller's balance when known, and whether the ledger refused the
/// debit at commit time (so a surface that caches callers must forget this one).
#[derive(Debug)]
pub struct Failure {
    pub error: ApiError,
    pub remaining: Option<i64>,
    pub refused_at_commit: bool,
}

impl Failure {
    pub fn before_caller(error: ApiError) -> Failure {
        Failure {
            error,
            remaining: None,
            refused_at_commit: false,
        }
    }
}

/// The key the per-caller rate limiter counts under: the API key, or for an OAuth caller (no
/// key) the account, as a negative number so the two never collide.
fn rate_key(caller: &Caller) -> i64 {
    caller.key_id.unwrap_or(-caller.account_id)
}

/// Runs one call of `op` for an authenticated `caller`. `input` is the surface's validated input,
/// or the validation failures it found (reported as 422 before any credit check).
pub async fn execute(
    op: &'static OpDecl,
    state: &AppState,
    caller: Caller,
    input: Result<Input, ApiError>,
    request_id: &str,
    surface: Surface,
) -> Result<Charged, Failure> {
    let bal = Some(caller.balance);
    let fail = |error: ApiError| Failure {
        error,
        remaining: bal,
        refused_at_commit: false,
    };
    state
        .check_rate(rate_key(&caller))
        .map_err(|retry_after_secs| fail(ApiError::RateLimited { retry_after_secs }))?;
    let input = input.map_err(fail)?;
    if let Some(check) = op.check {
        check(&input).map_err(fail)?;
    }
    let upfront = op.price.upfront();
    if caller.balance < upfront {
        return Err(fail(ApiError::InsufficientCredits {
            required: upfront,
            remaining: caller.balance,
        }));
    }
    let now = state.clock.now();
    let ctx = Ctx {
        state: state.clone(),
        caller,
        request_id: request_id.to_string(),
        now,
    };
    let answer = (op.run)(&ctx, input).await.map_err(fail)?;
    let credits = answer.credits(op.price);
    let remaining = state
        .ledger
        .charge(&ctx.caller, op.id, credits, request_id, surface, now)
        .await
        .map_err(|e| Failure {
            error: ApiError::from(e),
            remaining: bal,
            refused_at_commit: true,
        })?;
    Ok(Charged {
        body: answer.body,
        credits_charged: credits,
        credits_remaining: remaining,
    })
}

/// Turns a JSON object of named arguments (an MCP tool call) into the operation's [`Input`],
/// validated by the same declared parameter kinds as the HTTP query and path.
///
/// Arguments named like a declared parameter are parameters; for an operation with a body, the
/// other arguments form the body object (or the single argument `body`, when the tool schema
/// could not flatten the body); for one without, they are refused as `extra_forbidden`.
pub fn input_from_arguments(op: &OpDecl, args: &Map<String, Value>) -> Result<Input, ApiError> {
    let mut errors = Vec::new();
    let mut raw_params: Vec<(String, String)> = Vec::new();
    let mut path_params: Vec<(String, String)> = Vec::new();
    let mut body = Map::new();
    let mut whole_body: Option<Value> = None;
    for (name, value) in args {
        if let Some(p) = op.params.iter().find(|p| p.name == name) {
            let loc = [p.location.as_str(), p.name];
            let text = match value {
                Value::Null => continue,
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Array(_) | Value::Object(_) => {
                    errors.push(
                        FieldError::new(&loc, "type_error", "Input should be a scalar value")
                            .with_input(value.clone()),
                    );
                    continue;
                }
            };
            match p.location {
                crate::params::In::Path => path_params.push((name.clone(), text)),
                crate::params::In::Query => raw_params.push((name.clone(), text)),
            }
        } else if op.body.is_some() {
            if name == "body" && crate::mcp::body_is_nested(op) {
                whole_body = Some(value.clone());
            } else {
                body.insert(name.clone(), value.clone());
            }
        } else {
            errors.push(
                FieldError::new(
                    &["arguments", name],
                    "extra_forbidden",
                    "Extra inputs are not permitted",
                )
                .with_input(value.clone()),
            );
        }
    }
    let path = |name: &str| {
        path_params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let raw = crate::params::Raw {
        path: &path,
        query: &raw_params,
    };
    let params = match crate::params::validate(op.params, &raw) {
        Ok(v) => Some(v),
        Err(e) => {
            errors.extend(e);
            None
        }
    };
    let body = match (op.body, whole_body) {
        (None, _) => None,
        (Some(_), Some(b)) => Some(b),
        (Some(_), None) if body.is_empty() => None,
        (Some(_), None) => Some(Value::Object(body)),
    };
    match params {
        Some(params) if errors.is_empty() => Ok(Input { params, body }),
        Some(_) | None => Err(ApiError::Validation(errors)),
    }
}
