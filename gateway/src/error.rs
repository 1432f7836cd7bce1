//! The one place errors become HTTP responses.
//!
//! Architecture Invariant: every error body is a JSON object with `credits_charged` (always 0: a
//! failed call is never charged) and, when the caller is known, `credits_remaining`. Matches over
//! domain errors are exhaustive (no `_` arm), so a new variant must be given a status here.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use serde::Serialize;
use serde_json::{Value, json};
use terrace_address::AddressError;
use terrace_credits::CreditsError;
use terrace_store::{LookupError, StoreError};

/// One validation failure, in FastAPI's shape.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FieldError {
    /// Where: `["query", "q"]`, `["path", "uprn"]`, `["body", "address"]`, `["body"]`.
    pub loc: Vec<Value>,
    pub msg: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// The offending input, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Box<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ctx: Option<Box<Value>>,
}

impl FieldError {
    pub fn new(loc: &[&str], kind: &str, msg: impl Into<String>) -> Self {
        FieldError {
            loc: loc
                .iter()
                .map(|s| Value::String((*s).to_string()))
                .collect(),
            msg: msg.into(),
            kind: kind.to_string(),
            input: None,
            ctx: None,
        }
    }

    pub fn with_input(mut self, input: impl Into<Value>) -> Self {
        self.input = Some(Box::new(input.into()));
        self
    }

    pub fn with_ctx(mut self, ctx: Value) -> Self {
        self.ctx = Some(Box::new(ctx));
        self
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    #[error("missing, unknown or revoked API key")]
    Unauthenticated(&'static str),
    #[error("insufficient credits")]
    InsufficientCredits { required: i64, remaining: i64 },
    #[error("{0} not found")]
    NotFound(String),
    #[error("method not allowed")]
    MethodNotAllowed { allow: String },
    #[error("request body too large")]
    PayloadTooLarge { limit: usize },
    #[error("rate limit exceeded")]
    RateLimited {
        retry_after_secs: u64,
        /// Which limit: `key`, `account`, `source` (per address) or `sign_in` (back-off).
        limit: &'static str,
    },
    #[error("unsupported media type")]
    UnsupportedMediaType,
    #[error("the request body did not arrive in time")]
    RequestTimeout { limit_secs: u64 },
    #[error("too many requests in progress")]
    Busy { retry_after_secs: u64 },
    #[error("the data store is unavailable")]
    Unavailable(String),
    #[error("internal error")]
    Internal(String),
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            ApiError::InsufficientCredits { .. } => StatusCode::PAYMENT_REQUIRED,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::RequestTimeout { .. } => StatusCode::REQUEST_TIMEOUT,
            ApiError::Busy { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Validation(_) => "validation_error",
            ApiError::Unauthenticated(_) => "unauthenticated",
            ApiError::InsufficientCredits { .. } => "insufficient_credits",
            ApiError::NotFound(_) => "not_found",
            ApiError::MethodNotAllowed { .. } => "method_not_allowed",
            ApiError::PayloadTooLarge { .. } => "payload_too_large",
            ApiError::RateLimited { .. } => "rate_limited",
            ApiError::UnsupportedMediaType => "unsupported_media_type",
            ApiError::RequestTimeout { .. } => "request_timeout",
            ApiError::Busy { .. } => "busy",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::Internal(_) => "internal_error",
        }
    }

    /// The message safe to show the caller (internal detail goes to the log only).
    /// The seconds a caller should wait before trying again, when the error says so (a rate
    /// limit, or a full queue).
    pub fn retry_after_secs(&self) -> Option<u64> {
        if let ApiError::RateLimited {
            retry_after_secs, ..
        }
        | ApiError::Busy { retry_after_secs } = self
        {
            Some(*retry_after_secs)
        } else {
            None
        }
    }

    pub fn public_message(&self) -> String {
        match self {
            ApiError::Validation(_) => "Request validation failed".into(),
            ApiError::Unauthenticated(why) => (*why).to_string(),
            ApiError::InsufficientCredits {
                required,
                remaining,
            } => format!(
                "This call costs {required} credits and the balance is {remaining}; buy a credit pack to continue"
            ),
            ApiError::NotFound(what) => format!("{what} not found"),
            ApiError::MethodNotAllowed { allow } => {
                format!("This path answers {allow} only")
            }
            ApiError::PayloadTooLarge { limit } => {
                format!("The request body is larger than {limit} bytes")
            }
            ApiError::RateLimited {
                retry_after_secs,
                limit,
            } => {
                let whose = match *limit {
                    "key" => "this API key's rate limit",
                    "account" => "the account's rate limit (shared by all its keys)",
                    "source" => "the rate limit of your address",
                    _ => "the sign-in back-off after failed attempts",
                };
                format!("Too many requests: {whose} is reached; retry after {retry_after_secs} s")
            }
            ApiError::UnsupportedMediaType => {
                "Send the body as JSON with `Content-Type: application/json`".into()
            }
            ApiError::RequestTimeout { limit_secs } => {
                format!("The request body did not arrive within {limit_secs} s")
            }
            ApiError::Busy { retry_after_secs } => {
                format!("The service is busy; retry after {retry_after_secs} s")
            }
            ApiError::Unavailable(_) => {
                "The data store is temporarily unavailable; retry shortly".into()
            }
            ApiError::Internal(_) => {
                "Internal error; the request id identifies it in our logs".into()
            }
        }
    }

    /// The JSON body (without credit fields).
    pub fn body(&self) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        match self {
            ApiError::Validation(errors) => {
                m.insert("detail".into(), json!(errors));
            }
            ApiError::Unauthenticated(_)
            | ApiError::NotFound(_)
            | ApiError::PayloadTooLarge { .. }
            | ApiError::MethodNotAllowed { .. }
            | ApiError::UnsupportedMediaType
            | ApiError::RequestTimeout { .. }
            | ApiError::Busy { .. }
            | ApiError::Unavailable(_)
            | ApiError::Internal(_) => {
                m.insert("detail".into(), json!(self.public_message()));
            }
            ApiError::RateLimited { limit, .. } => {
                m.insert("detail".into(), json!(self.public_message()));
                m.insert("limit".into(), json!(limit));
            }
            ApiError::InsufficientCredits { required, .. } => {
                m.insert("detail".into(), json!(self.public_message()));
                m.insert("credits_required".into(), json!(required));
            }
        }
        m.insert(
            "error".into(),
            json!({"code": self.code(), "message": self.public_message()}),
        );
        m
    }

    /// The full HTTP response; `remaining` is the caller's balance when the caller is known.
    pub fn response(&self, remaining: Option<i64>, request_id: &str) -> HttpResponse {
        let mut body = self.body();
        body.insert("credits_charged".into(), json!(0));
        let remaining = match self {
            ApiError::InsufficientCredits { remaining, .. } => Some(*remaining),
            // A refused key learns nothing about the account.
            ApiError::Unauthenticated(_) => None,
            ApiError::Validation(_)
            | ApiError::UnsupportedMediaType
            | ApiError::RequestTimeout { .. }
            | ApiError::Busy { .. }
            | ApiError::NotFound(_)
            | ApiError::PayloadTooLarge { .. }
            | ApiError::MethodNotAllowed { .. }
            | ApiError::RateLimited { .. }
            | ApiError::Unavailable(_)
            | ApiError::Internal(_) => remaining,
        };
        if let Some(r) = remaining {
            body.insert("credits_remaining".into(), json!(r));
        }
        body.insert("request_id".into(), json!(request_id));
        let mut resp = HttpResponse::build(self.status());
        match self {
            ApiError::Unauthenticated(_) => {
                resp.insert_header((
                    "WWW-Authenticate",
                    "Bearer realm=\"terrace\", error=\"invalid_token\"",
                ));
            }
            ApiError::RateLimited {
                retry_after_secs, ..
            }
            | ApiError::Busy { retry_after_secs } => {
                resp.insert_header(("Retry-After", retry_after_secs.to_string()));
            }
            ApiError::Unavailable(_) => {
                resp.insert_header(("Retry-After", "5"));
            }
            ApiError::MethodNotAllowed { allow } => {
                resp.insert_header(("Allow", allow.clone()));
            }
            ApiError::Validation(_)
            | ApiError::InsufficientCredits { .. }
            | ApiError::NotFound(_)
            | ApiError::PayloadTooLarge { .. }
            | ApiError::UnsupportedMediaType
            | ApiError::RequestTimeout { .. }
            | ApiError::Internal(_) => {}
        }
        resp.insert_header(("x-request-id", request_id.to_string()))
            .json(Value::Object(body))
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(m) => ApiError::Unavailable(m),
            StoreError::NotFound => ApiError::NotFound("record".into()),
            StoreError::Conflict(m) => ApiError::Internal(format!("conflict: {m}")),
            StoreError::Internal(e) => ApiError::Internal(e.to_string()),
            StoreError::Setup(m) => ApiError::Internal(m),
        }
    }
}

impl From<CreditsError> for ApiError {
    fn from(e: CreditsError) -> Self {
        match e {
            CreditsError::Unauthenticated => {
                ApiError::Unauthenticated("Missing, unknown or revoked API key")
            }
            CreditsError::InsufficientCredits {
                required,
                remaining,
            } => ApiError::InsufficientCredits {
                required,
                remaining,
            },
            CreditsError::NoAccount => {
                ApiError::Unauthenticated("The key's account no longer exists")
            }
            CreditsError::NoKey => ApiError::NotFound("API key".into()),
            CreditsError::KeyLimit { max } => ApiError::Validation(vec![FieldError::new(
                &["body"],
                "key_limit",
                format!(
                    "The account already holds {max} live API keys, the most allowed; revoke one first"
                ),
            )]),
            CreditsError::Invalid(m) => {
                ApiError::Validation(vec![FieldError::new(&["body"], "value_error", m)])
            }
            CreditsError::Store(s) => s.into(),
        }
    }
}

impl From<AddressError> for ApiError {
    fn from(e: AddressError) -> Self {
        match e {
            AddressError::NotFound(what) => ApiError::NotFound(what),
            AddressError::Store(s) => s.into(),
            AddressError::Encode(e) => ApiError::Internal(e.to_string()),
        }
    }
}

impl From<terrace_areas::AreasError> for ApiError {
    fn from(e: terrace_areas::AreasError) -> Self {
        match e {
            terrace_areas::AreasError::NotFound(what) => ApiError::NotFound(what),
            terrace_areas::AreasError::Invalid(v) => {
                crate::input::invalid(crate::input::In::Query, v)
            }
            terrace_areas::AreasError::Store(s) => s.into(),
        }
    }
}

impl From<terrace_land::LandError> for ApiError {
    fn from(e: terrace_land::LandError) -> Self {
        match e {
            terrace_land::LandError::NotFound(what) => ApiError::NotFound(what),
            terrace_land::LandError::Invalid(v) => crate::input::invalid(crate::input::In::Body, v),
            terrace_land::LandError::Store(s) => s.into(),
        }
    }
}

impl From<terrace_energy::EnergyError> for ApiError {
    fn from(e: terrace_energy::EnergyError) -> Self {
        match e {
            terrace_energy::EnergyError::NotFound(what) => ApiError::NotFound(what),
            terrace_energy::EnergyError::Invalid(v) => {
                crate::input::invalid(crate::input::In::Body, v)
            }
            terrace_energy::EnergyError::Store(s) => s.into(),
        }
    }
}

impl From<terrace_auctions::AuctionsError> for ApiError {
    fn from(e: terrace_auctions::AuctionsError) -> Self {
        match e {
            terrace_auctions::AuctionsError::NotFound(what) => ApiError::NotFound(what),
            terrace_auctions::AuctionsError::Invalid(v) => {
                crate::input::invalid(crate::input::In::Query, v)
            }
            terrace_auctions::AuctionsError::Store(s) => s.into(),
        }
    }
}

impl From<terrace_valuation::ValuationError> for ApiError {
    fn from(e: terrace_valuation::ValuationError) -> Self {
        match e {
            terrace_valuation::ValuationError::NotFound(what) => ApiError::NotFound(what),
            terrace_valuation::ValuationError::Invalid(v) => {
                crate::input::invalid(crate::input::In::Query, v)
            }
            terrace_valuation::ValuationError::Store(s) => s.into(),
        }
    }
}

impl From<LookupError> for ApiError {
    fn from(e: LookupError) -> Self {
        match e {
            LookupError::NotFound(what) => ApiError::NotFound(what),
            LookupError::Store(s) => s.into(),
        }
    }
}
