//! The HTTP surface: routes generated from the registry, and the charged-call pipeline.

use crate::error::{ApiError, FieldError};
use crate::pipeline;
use crate::registry::{OpDecl, RawInput, operations};
use crate::router::Router;
use crate::state::AppState;
use crate::telemetry::record_call;
use actix_web::http::header;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, web};
use serde_json::{Value, json};
use std::time::Instant;
use terrace_credits::{self as credits, Caller, Surface};

/// Mounts every route on an actix app.
///
/// The operations are one scope, `/v1`, whose requests [`Router`] matches (a plain-text prefix
/// for actix, then the path's segments against its family's few paths): a path no operation
/// declares is the JSON 404, a method it does not declare the JSON 405 with `Allow`. Register
/// it first, so the hot paths are not tried against every other route before it.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/v1")
            .route("/pricing", web::get().to(pricing))
            .default_service(actix_web::dev::fn_service(operation)),
    );
    cfg.route("/healthz", web::get().to(healthz))
        .route("/metrics", web::get().to(metrics))
        .route("/openapi.json", web::get().to(openapi))
        .route("/", web::get().to(root))
        .service(
            utoipa_swagger_ui::SwaggerUi::new("/docs/{_:.*}")
                .config(utoipa_swagger_ui::Config::new(["/openapi.json"]).try_it_out_enabled(true)),
        )
        .route(
            "/docs",
            web::get().to(|| async {
                HttpResponse::PermanentRedirect()
                    .insert_header((header::LOCATION, "/docs/"))
                    .finish()
            }),
        );
}

/// Every operation's path, built once from the registry.
static ROUTER: std::sync::LazyLock<Router> = std::sync::LazyLock::new(|| Router::new(operations()));

/// A request under `/v1` (other than `/v1/pricing`): its operation's call, with the path's
/// parameters in `match_info` as actix's own routes put them; else the JSON 404 or 405.
async fn operation(
    mut sreq: actix_web::dev::ServiceRequest,
) -> Result<actix_web::dev::ServiceResponse, actix_web::Error> {
    use actix_web::FromRequest;
    // The operation and its parameters (owned: `match_info` takes them below), or why not: no
    // declared path (404), or the path's methods (405).
    let routed = match ROUTER.find(sreq.match_info().unprocessed()) {
        None => Err(None),
        Some(m) => match m.route.op(sreq.method().as_str()) {
            None => Err(Some(m.route.allow.clone())),
            Some(op) => Ok((
                op,
                m.params
                    .iter()
                    .map(|(name, value)| (*name, (*value).to_string()))
                    .collect::<Vec<_>>(),
            )),
        },
    };
    let (op, params) = match routed {
        Ok(found) => found,
        Err(allow) => {
            let (req, _) = sreq.into_parts();
            let resp = match allow {
                None => not_found(req.clone()).await,
                Some(allow) => {
                    ApiError::MethodNotAllowed { allow }.response(None, &request_id(&req))
                }
            };
            return Ok(actix_web::dev::ServiceResponse::new(req, resp));
        }
    };
    for (name, value) in params {
        sreq.match_info_mut().add_static(name, value);
    }
    let (req, mut payload) = sreq.into_parts();
    // Without the app's state (an app built without it, as in some tests) the answer is the
    // extractor's 500, as a route's handler would give.
    let extracted = match web::Payload::from_request(&req, &mut payload).await {
        Ok(body) => web::Data::<AppState>::extract(&req)
            .await
            .map(|state| (body, state)),
        Err(e) => Err(e),
    };
    let resp = match extracted {
        Ok((body, state)) => dispatch(op, req.clone(), body, state).await,
        Err(e) => e.error_response(),
    };
    Ok(actix_web::dev::ServiceResponse::new(req, resp))
}

/// The JSON answer for unknown paths and methods.
pub async fn not_found(req: HttpRequest) -> HttpResponse {
    ApiError::NotFound(format!("route {} {}", req.method(), req.path()))
        .response(None, &request_id(&req))
}

fn request_id(req: &HttpRequest) -> String {
    if let Some(id) = req.extensions().get::<tracing_actix_web::RequestId>() {
        return id.to_string();
    }
    uuid::Uuid::new_v4().to_string()
}

/// The charged call: authenticate, rate-limit, validate, refuse early with 402, run, charge.
async fn dispatch(
    op: &'static OpDecl,
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    let started = Instant::now();
    let rid = request_id(&req);
    let result = handle(op, &req, payload, &state, &rid).await;
    let (resp, credits) = match result {
        Ok(done) => {
            let charged = done.credits_charged;
            let body = with_credits(done.body, charged, done.credits_remaining);
            let mut b = HttpResponse::Ok();
            b.insert_header(("x-request-id", rid.clone()))
                // Answers are the caller's own (a new key among them): never cached.
                .insert_header((header::CACHE_CONTROL, "no-store"));
            if done.replayed {
                b.insert_header(("Idempotent-Replayed", "true"));
            }
            if let Some(d) = op.deprecated {
                b.insert_header(("Deprecation", "true"))
                    .insert_header(("Sunset", d.sunset))
                    .insert_header((
                        "Link",
                        format!(
                            "<{}>; rel=\"successor-version\"",
                            successor(d.successor, &req)
                        ),
                    ));
            }
            // A replay charged nothing now.
            let charged_now = if done.replayed { 0 } else { charged };
            (
                b.content_type(header::ContentType::json()).body(body),
                charged_now,
            )
        }
        Err((e, remaining)) => {
            pipeline::log_failure(op, &rid, &e);
            (e.response(remaining, &rid), 0)
        }
    };
    let status = resp.status().as_u16();
    crate::telemetry::log_call(
        tracing::enabled!(tracing::Level::INFO),
        &rid,
        op.id,
        None,
        status,
        credits,
    );
    record_call(op.id, status, started.elapsed().as_secs_f64(), credits);
    resp
}

/// An answer's JSON object text with `credits_charged` and `credits_remaining` appended as its
/// last members (where the map the answer used to be built in put them).
fn with_credits(mut body: String, charged: i64, remaining: i64) -> String {
    use std::fmt::Write;
    let closed = body.pop();
    debug_assert_eq!(closed, Some('}'), "an answer is a JSON object");
    if !body.ends_with('{') {
        body.push(',');
    }
    let _ = write!(
        body,
        "\"credits_charged\":{charged},\"credits_remaining\":{remaining}}}"
    );
    body
}

type Failure = (ApiError, Option<i64>);

/// The HTTP side of a call: authenticate the API key (before reading any body), read the query,
/// path and body, then the shared pipeline ([`pipeline::execute`]), keeping the key cache in
/// step with the ledger.
async fn handle(
    op: &'static OpDecl,
    req: &HttpRequest,
    payload: web::Payload,
    state: &AppState,
    rid: &str,
) -> Result<pipeline::Charged, Failure> {
    let (caller, key_hash) = authenticate(req, state, op.price.upfront())
        .await
        .map_err(|e| (e, None))?;
    let input = read_input(op, req, payload, state).await;
    match pipeline::execute(op, state, caller, input, rid, Surface::Http).await {
        Ok(done) => {
            if !done.replayed {
                state.keys.set_balance(&key_hash, done.credits_remaining);
            }
            Ok(done)
        }
        Err(f) => {
            if f.refused_at_commit {
                // A key refused at commit (revoked elsewhere) must not stay cached.
                state.keys.forget(&key_hash);
            }
            Err((f.error, f.remaining))
        }
    }
}

/// The successor's path with this request's path parameters filled in.
fn successor(template: &str, req: &HttpRequest) -> String {
    let mut out = template.to_string();
    for (name, value) in req.match_info().iter() {
        out = out.replace(&format!("{{{name}}}"), value);
    }
    out
}

/// The largest request body accepted.
pub const MAX_BODY: usize = 1 << 20;

/// The call's input: the body (for an operation that takes one) read under the limits, its media
/// type checked, then [`parse_input`].
async fn read_input(
    op: &OpDecl,
    req: &HttpRequest,
    payload: web::Payload,
    state: &AppState,
) -> Result<RawInput, ApiError> {
    let body = match op.contract.body {
        None => web::Bytes::new(),
        Some(_) => {
            let body = read_limited(req, payload, state).await?;
            if !body.iter().all(u8::is_ascii_whitespace) && !json_content_type(req) {
                return Err(ApiError::UnsupportedMediaType);
            }
            body
        }
    };
    parse_input(op, req, &body).map_err(ApiError::Validation)
}

/// Whether the request's `Content-Type` is JSON (`application/json`, `application/*+json`), or
/// absent.
pub fn json_content_type(req: &HttpRequest) -> bool {
    let Some(ct) = req.headers().get(header::CONTENT_TYPE) else {
        return true;
    };
    let Ok(ct) = ct.to_str() else {
        return false;
    };
    let essence = ct
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// Reads a request body under the limits: at most [`MAX_BODY`] bytes (413, refused at once when
/// `Content-Length` says so), within the body deadline (408), and only while fewer than the cap
/// of bodies are being read at once (503 with `Retry-After`).
pub async fn read_limited(
    req: &HttpRequest,
    payload: web::Payload,
    state: &AppState,
) -> Result<web::Bytes, ApiError> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared == Some(0) {
        return Ok(web::Bytes::new());
    }
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(ApiError::PayloadTooLarge { limit: MAX_BODY });
    }
    let Some(_slot) = state.body_reads.try_slot() else {
        return Err(ApiError::Busy {
            retry_after_secs: 1,
        });
    };
    let deadline = state.limits.body_deadline;
    tokio::time::timeout(deadline, read_body(payload))
        .await
        .unwrap_or(Err(ApiError::RequestTimeout {
            limit_secs: deadline.as_secs().max(1),
        }))
}

/// Reads the body up to [`MAX_BODY`]; larger bodies are a JSON 413 like every other error.
async fn read_body(mut payload: web::Payload) -> Result<web::Bytes, ApiError> {
    use futures_util::StreamExt;
    let mut buf = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| {
            ApiError::Validation(vec![FieldError::new(
                &["body"],
                "value_error",
                format!("Unreadable body: {e}"),
            )])
        })?;
        if buf.len() + chunk.len() > MAX_BODY {
            return Err(ApiError::PayloadTooLarge { limit: MAX_BODY });
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf.freeze())
}

/// The token of `Authorization: Bearer <token>`; the scheme is case-insensitive (RFC 9110
/// §11.1), and the token is trimmed.
pub fn bearer_token(req: &HttpRequest) -> Option<&str> {
    let h = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = h.trim_start().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// `Authorization: Bearer <API key>`; anything else is 401. Returns the caller and the key's hash.
/// A cached caller is used when it is fresh and its balance covers `need`; otherwise the store.
async fn authenticate(
    req: &HttpRequest,
    state: &AppState,
    need: i64,
) -> Result<(Caller, String), ApiError> {
    let Some(key) = bearer_token(req) else {
        return Err(ApiError::Unauthenticated(
            "Send your API key as `Authorization: Bearer <API key>`",
        ));
    };
    let hash = credits::presented_hash(key)
        .ok_or(ApiError::from(credits::CreditsError::Unauthenticated))?;
    if let Some(caller) = state.keys.get(&hash, need) {
        return Ok((caller, hash));
    }
    let caller = credits::authenticate_hash(&state.db, &hash).await?;
    state.keys.put(&hash, &caller);
    Ok((caller, hash))
}

/// The call's raw input: path and query parameters as text, and the JSON body if the operation
/// takes one (a body that is not JSON is refused here, and reported with any parameter failure).
pub fn parse_input(
    op: &OpDecl,
    req: &HttpRequest,
    body: &[u8],
) -> Result<RawInput, Vec<FieldError>> {
    let query = parse_query(req.query_string())?;
    let mut params: Vec<(String, Value)> = query
        .into_iter()
        .filter(|(k, _)| !op.in_path(k))
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    params.extend(
        req.match_info()
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string()))),
    );
    let (body, refused) = match op.contract.body {
        None => (None, Vec::new()),
        Some(_) => match parse_body(body) {
            Ok(b) => (b, Vec::new()),
            Err(e) => (None, e),
        },
    };
    let mut refused = refused;
    let idempotency = match req.headers().get(IDEMPOTENCY_HEADER) {
        Some(v) if op.takes_idempotency_key() => match v.to_str() {
            Ok(k) if pipeline::valid_idempotency_key(k) => {
                // What the call asks: the operation, its path and query, and the body (as JSON
                // values, so spacing and key order do not make a different request).
                let asked = format!(
                    "{}\n{}\n{}\n{}",
                    op.id,
                    req.path(),
                    req.query_string(),
                    body.as_ref().map(Value::to_string).unwrap_or_default()
                );
                Some(pipeline::Idempotency {
                    key: k.to_string(),
                    request_hash: terrace_oauth::hash_secret(&asked),
                })
            }
            Ok(k) => {
                refused.push(pipeline::bad_idempotency_key(
                    &["header", IDEMPOTENCY_HEADER],
                    k,
                ));
                None
            }
            Err(_) => {
                refused.push(pipeline::bad_idempotency_key(
                    &["header", IDEMPOTENCY_HEADER],
                    "",
                ));
                None
            }
        },
        Some(_) | None => None,
    };
    Ok(RawInput {
        params,
        body,
        refused,
        idempotency,
    })
}

/// The header that carries an idempotency key.
pub const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";

/// A query string's name-value pairs (`+` is a space, `%XX` a byte), refused when a name or value
/// does not decode to UTF-8 (never decoded lossily) or a `%` is not followed by two hex digits.
pub fn parse_query(qs: &str) -> Result<Vec<(String, String)>, Vec<FieldError>> {
    let refuse = |what: &str| {
        vec![FieldError::new(
            &["query"],
            "value_error",
            format!("Malformed query string: {what}"),
        )]
    };
    let decode = |s: &str| -> Result<String, Vec<FieldError>> {
        let bytes = s.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'+' => out.push(b' '),
                b'%' => {
                    let hex = bytes
                        .get(i + 1..i + 3)
                        .and_then(|h| std::str::from_utf8(h).ok())
                        .and_then(|h| u8::from_str_radix(h, 16).ok());
                    let Some(b) = hex else {
                        return Err(refuse("a % must be followed by two hex digits"));
                    };
                    out.push(b);
                    i += 2;
                }
                b => out.push(b),
            }
            i += 1;
        }
        String::from_utf8(out).map_err(|_| refuse("it is not UTF-8 once decoded"))
    };
    qs.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            Ok((decode(k)?, decode(v)?))
        })
        .collect()
}

fn parse_body(body: &[u8]) -> Result<Option<Value>, Vec<FieldError>> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(body).map(Some).map_err(|e| {
        let pos = body_offset(body, e.line(), e.column());
        vec![FieldError {
            loc: vec![json!("body"), json!(pos)],
            msg: "JSON decode error".into(),
            kind: "json_invalid".into(),
            input: Some(Box::new(json!({}))),
            ctx: Some(Box::new(json!({"error": e.to_string()}))),
        }]
    })
}

/// serde_json reports line and column; FastAPI reports a byte offset.
fn body_offset(body: &[u8], line: usize, column: usize) -> usize {
    let mut offset = 0;
    for (i, l) in body.split(|b| *b == b'\n').enumerate() {
        if i + 1 == line {
            return offset + column.saturating_sub(1);
        }
        offset += l.len() + 1;
    }
    offset
}

async fn pricing() -> HttpResponse {
    HttpResponse::Ok().json(crate::registry::price_list())
}

async fn openapi(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().json(state.openapi.as_ref())
}

async fn healthz(state: web::Data<AppState>) -> HttpResponse {
    match state.db.ping().await {
        Ok(()) => HttpResponse::Ok().json(json!({
            "status": "ok",
            "store": format!("{:?}", state.db.backend()).to_lowercase(),
            "addresses_indexed": state.address.index.current().len(),
        })),
        Err(e) => HttpResponse::ServiceUnavailable()
            .insert_header(("Retry-After", "5"))
            .json(json!({"status": "unavailable", "detail": e.to_string()})),
    }
}

/// The Prometheus metrics, for the operator only: `Authorization: Bearer <TERRACE_METRICS_TOKEN>`.
/// Without a configured token the route does not exist (404).
async fn metrics(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let Some(token) = state.metrics_token.as_deref() else {
        return not_found(req).await;
    };
    if !bearer_token(&req).is_some_and(|t| crate::web::same(t, token)) {
        return ApiError::Unauthenticated(
            "Send the operator token as `Authorization: Bearer <token>`",
        )
        .response(None, &request_id(&req));
    }
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(state.metrics.render())
}

async fn root() -> HttpResponse {
    HttpResponse::Ok().json(json!({
        "service": "Terrace",
        "version": env!("CARGO_PKG_VERSION"),
        "docs": "/docs/",
        "openapi": "/openapi.json",
        "pricing": "/v1/pricing",
    }))
}

/// Gives an error response that is not JSON (a transport's or an extractor's plain-text 4xx or
/// 5xx) the JSON error body of every other error, with the same status; JSON and HTML answers,
/// successes and redirects pass unchanged.
pub fn json_errors(
    res: actix_web::dev::ServiceResponse<actix_web::body::BoxBody>,
) -> actix_web::dev::ServiceResponse<actix_web::body::BoxBody> {
    let status = res.status();
    let typed = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.contains("json") || ct.starts_with("text/html"));
    if !(status.is_client_error() || status.is_server_error()) || typed {
        return res;
    }
    let rid = request_id(res.request());
    let error = error_for_status(status);
    res.map_body(|head, _| {
        let fresh = error.response(None, &rid);
        for (k, v) in fresh.headers() {
            head.headers.insert(k.clone(), v.clone());
        }
        fresh.into_body()
    })
}

/// The error a bare status stands for, in the JSON error shape.
pub fn error_for_status(status: actix_web::http::StatusCode) -> ApiError {
    use actix_web::http::StatusCode as S;
    match status {
        S::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge { limit: MAX_BODY },
        S::UNSUPPORTED_MEDIA_TYPE => ApiError::UnsupportedMediaType,
        S::UNAUTHORIZED => ApiError::Unauthenticated("Missing, unknown or revoked credentials"),
        S::NOT_FOUND => ApiError::NotFound("route".into()),
        S::METHOD_NOT_ALLOWED => ApiError::MethodNotAllowed {
            allow: "the documented methods".into(),
        },
        S::REQUEST_TIMEOUT => ApiError::RequestTimeout { limit_secs: 10 },
        S::TOO_MANY_REQUESTS => ApiError::RateLimited {
            retry_after_secs: 1,
            limit: "source",
        },
        S::SERVICE_UNAVAILABLE => ApiError::Busy {
            retry_after_secs: 1,
        },
        s if s.is_server_error() => ApiError::Internal(format!("status {s}")),
        s => ApiError::Validation(vec![FieldError::new(
            &["request"],
            "value_error",
            format!("The request was refused ({s})"),
        )]),
    }
}
