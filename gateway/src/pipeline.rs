//! The charged call, shared by every surface (HTTP routes, the MCP tool server, `terrace mcp
//! --stdio`): rate limit, validation result, the operation's own check, the early 402, the run,
//! and the ledger charge.
//!
//! Architecture Invariant: HTTP and MCP call [`execute`] with the same declaration, and the
//! operation's own `check` turns either surface's [`RawInput`] into the same typed input, so a
//! tool call costs what the HTTP call costs, on the same ledger, and a failure on either surface
//! charges nothing. Each surface authenticates its own way, builds the [`RawInput`] from its own
//! wire form, and maps [`ApiError`] to its own error form with a match that names every variant.

use crate::error::{ApiError, FieldError};
use crate::registry::{Ctx, OpDecl, RawInput};
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

/// Runs one call of `op` for an authenticated `caller`. `input` is the surface's raw input, or
/// the failure it met reading it (reported as 422 before any credit check).
pub async fn execute(
    op: &'static OpDecl,
    state: &AppState,
    caller: Caller,
    input: Result<RawInput, ApiError>,
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
    let input = input
        .and_then(|raw| (op.contract.check)(op, raw))
        .map_err(fail)?;
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
    let answer = (op.contract.run)(&ctx, input).await.map_err(fail)?;
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

/// Logs a failed call where an operator must see it: internal errors and an unavailable store.
/// Both surfaces call it, so a failure is logged the same way whichever surface met it.
pub fn log_failure(op: &OpDecl, request_id: &str, error: &ApiError) {
    match error {
        ApiError::Internal(detail) => {
            tracing::error!(request_id, operation = op.id, %detail, "internal error")
        }
        ApiError::Unavailable(detail) => {
            tracing::warn!(request_id, operation = op.id, %detail, "store unavailable")
        }
        ApiError::Validation(_)
        | ApiError::Unauthenticated(_)
        | ApiError::InsufficientCredits { .. }
        | ApiError::NotFound(_)
        | ApiError::PayloadTooLarge { .. }
        | ApiError::MethodNotAllowed { .. }
        | ApiError::RateLimited { .. } => {}
    }
}

/// Turns a JSON object of named arguments (an MCP tool call) into the operation's [`RawInput`],
/// read by the same parameter and body types as the HTTP query, path and body.
///
/// Arguments named like a parameter are parameters; for an operation with a body, the other
/// arguments form the body object (or the single argument `body`, when the tool schema could not
/// flatten the body); for one without, they are refused as `extra_forbidden`.
pub fn input_from_arguments(op: &OpDecl, args: &Map<String, Value>) -> RawInput {
    let names: Vec<String> = crate::input::fields(op.contract.params)
        .into_iter()
        .map(|f| f.name)
        .collect();
    let mut errors = Vec::new();
    let mut params = Vec::new();
    let mut body = Map::new();
    let mut whole_body: Option<Value> = None;
    for (name, value) in args {
        if names.contains(name) {
            params.push((name.clone(), value.clone()));
        } else if op.contract.body.is_some() {
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
    let body = match (op.contract.body, whole_body) {
        (None, _) => None,
        (Some(_), Some(b)) => Some(b),
        (Some(_), None) if body.is_empty() => None,
        (Some(_), None) => Some(Value::Object(body)),
    };
    RawInput {
        params,
        body,
        refused: errors,
    }
}
