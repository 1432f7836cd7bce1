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

/// A successful call: the operation's JSON object (its compact text) and what it cost.
#[derive(Debug)]
pub struct Charged {
    pub body: String,
    pub credits_charged: i64,
    pub credits_remaining: i64,
    /// True when this is the stored answer of an earlier call with the same idempotency key
    /// (nothing was charged now; the credit fields are the earlier call's).
    pub replayed: bool,
}

/// A call's idempotency key (HTTP `Idempotency-Key` header, MCP `idempotency_key` argument) and
/// the hash of what the call asked, to tell a repeat from a different request under the same key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Idempotency {
    pub key: String,
    pub request_hash: String,
}

/// The most characters an idempotency key may have.
pub const IDEMPOTENCY_KEY_MAX: usize = 255;

/// An idempotency key is 1 to 255 visible ASCII characters (a UUID is typical).
pub fn valid_idempotency_key(key: &str) -> bool {
    (1..=IDEMPOTENCY_KEY_MAX).contains(&key.len())
        && key.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// The refusal of a malformed idempotency key, located where the surface received it.
pub fn bad_idempotency_key(loc: &[&str], given: &str) -> FieldError {
    FieldError::new(
        loc,
        "value_error",
        format!("An idempotency key is 1 to {IDEMPOTENCY_KEY_MAX} visible ASCII characters"),
    )
    .with_input(given.chars().take(300).collect::<String>())
}

/// The location of the idempotency key on each surface.
fn idempotency_loc(surface: Surface) -> &'static [&'static str] {
    match surface {
        Surface::Http => &["header", "Idempotency-Key"],
        Surface::Mcp => &["arguments", "idempotency_key"],
    }
}

/// The stored answer for a repeated idempotency key: the answer itself when the request is the
/// same, 422 when the key was used for a different request.
fn replay(
    stored: &terrace_credits::StoredAnswer,
    idem: &Idempotency,
    surface: Surface,
) -> Result<Charged, ApiError> {
    if stored.request_hash != idem.request_hash {
        return Err(ApiError::Validation(vec![
            FieldError::new(
                idempotency_loc(surface),
                "idempotency_conflict",
                "This idempotency key was used within the last 24 hours for a different request; use a new key for a new request",
            )
            .with_input(idem.key.clone()),
        ]));
    }
    if !matches!(
        serde_json::from_str::<Value>(&stored.body),
        Ok(Value::Object(_))
    ) {
        return Err(ApiError::Internal(
            "a stored idempotent answer is not a JSON object".into(),
        ));
    }
    Ok(Charged {
        body: stored.body.clone(),
        credits_charged: stored.credits_charged,
        credits_remaining: stored.credits_remaining,
        replayed: true,
    })
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
        .check_rate(rate_key(&caller), caller.account_id)
        .map_err(|(retry_after_secs, scope)| {
            fail(ApiError::RateLimited {
                retry_after_secs,
                limit: scope.as_str(),
            })
        })?;
    let idem = input
        .as_ref()
        .ok()
        .and_then(|raw| raw.idempotency.clone())
        .filter(|_| op.takes_idempotency_key());
    let input = input
        .and_then(|raw| (op.contract.check)(op, raw))
        .map_err(fail)?;
    // A repeated idempotency key: the stored answer, charging nothing (one store read, only
    // for calls that carry a key).
    if let Some(idem) = &idem {
        let stored = terrace_credits::stored_answer(
            &state.db,
            caller.account_id,
            &idem.key,
            state.clock.now(),
        )
        .await
        .map_err(|e| fail(e.into()))?;
        if let Some(stored) = stored {
            return replay(&stored, idem, surface).map_err(fail);
        }
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
    let mut answer = (op.contract.run)(&ctx, input).await.map_err(fail)?;
    let credits = answer.credits(op.price);
    let at_commit = |e: terrace_credits::CreditsError| Failure {
        error: ApiError::from(e),
        remaining: bal,
        refused_at_commit: true,
    };
    let charged = match &idem {
        None => {
            state
                .ledger
                .charge(&ctx.caller, op.id, credits, request_id, surface, now)
                .await
        }
        Some(idem) => {
            match terrace_credits::charge_idempotent(
                &state.db,
                &ctx.caller,
                op.id,
                credits,
                request_id,
                surface,
                &idem.key,
                &idem.request_hash,
                &answer.body,
                now,
            )
            .await
            {
                Ok(terrace_credits::IdempotentCharge::Charged(b)) => Ok(b),
                // A concurrent call with the same key committed first: its answer.
                Ok(terrace_credits::IdempotentCharge::Replay(stored)) => {
                    return replay(&stored, idem, surface).map_err(fail);
                }
                Err(e) => Err(e),
            }
        }
    };
    let remaining = match charged {
        Ok(b) => b,
        // A free write re-checked the key in its own transaction, so it acted while the key
        // was live; if the key is revoked by now (it revoked itself, or another process did it
        // just after), the call is still recorded, at 0 credits, and answered as the success
        // it was.
        Err(terrace_credits::CreditsError::Unauthenticated) if credits == 0 && !op.read_only => {
            let keyless = Caller {
                key_id: None,
                ..ctx.caller.clone()
            };
            state
                .ledger
                .charge(&keyless, op.id, 0, request_id, surface, now)
                .await
                .map_err(at_commit)?
        }
        Err(e) => return Err(at_commit(e)),
    };
    // The answer's own write, now that the call is charged; the caller has the answer whatever
    // it meets, so a failure is logged, not answered.
    if let Some(write) = answer.after_commit.take()
        && let Err(e) = write(state.clone()).await
    {
        log_failure(op, request_id, &e);
    }
    Ok(Charged {
        body: answer.body,
        credits_charged: credits,
        credits_remaining: remaining,
        replayed: false,
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
        | ApiError::RateLimited { .. }
        | ApiError::UnsupportedMediaType
        | ApiError::RequestTimeout { .. }
        | ApiError::Busy { .. } => {}
    }
}

/// The MCP argument that carries an idempotency key (the HTTP `Idempotency-Key` header).
pub const IDEMPOTENCY_ARGUMENT: &str = "idempotency_key";

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
    let mut idempotency = None;
    for (name, value) in args {
        if name == IDEMPOTENCY_ARGUMENT && op.takes_idempotency_key() {
            match value.as_str().filter(|k| valid_idempotency_key(k)) {
                Some(k) => {
                    let mut asked = args.clone();
                    asked.remove(IDEMPOTENCY_ARGUMENT);
                    let text = format!("{}\n{}", op.id, Value::Object(asked));
                    idempotency = Some(Idempotency {
                        key: k.to_string(),
                        request_hash: terrace_oauth::hash_secret(&text),
                    });
                }
                None => errors.push(
                    bad_idempotency_key(&["arguments", IDEMPOTENCY_ARGUMENT], "")
                        .with_input(value.clone()),
                ),
            }
        } else if names.contains(name) {
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
    // A flattened body is the object of the other arguments, `{}` when there are none: a tool
    // whose arguments are all optional is called with `{}`, which is an empty body, not a
    // missing one (each required field is then reported by its own name).
    let body = match (op.contract.body, whole_body) {
        (None, _) => None,
        (Some(_), Some(b)) => Some(b),
        (Some(_), None) if body.is_empty() && crate::mcp::body_is_nested(op) => None,
        (Some(_), None) => Some(Value::Object(body)),
    };
    RawInput {
        params,
        body,
        refused: errors,
        idempotency,
    }
}
