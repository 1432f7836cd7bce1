//! The HTTP surface: routes generated from the registry, and the charged-call pipeline.

use crate::error::{ApiError, FieldError};
use crate::pipeline;
use crate::registry::{Method, OpDecl, RawInput, operations};
use crate::state::AppState;
use crate::telemetry::record_call;
use actix_web::http::header;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, web};
use serde_json::{Value, json};
use std::time::Instant;
use terrace_credits::{self as credits, Caller, Surface};

/// Mounts every route on an actix app.
pub fn configure(cfg: &mut web::ServiceConfig) {
    // One resource per path, with a route per declared method and a JSON 405 for the others.
    let mut paths: Vec<&'static str> = operations().iter().map(|op| op.path).collect();
    paths.sort_unstable();
    paths.dedup();
    for path in paths {
        let ops: Vec<&'static OpDecl> = operations()
            .iter()
            .copied()
            .filter(|op| op.path == path)
            .collect();
        let allow = ops
            .iter()
            .map(|op| op.method.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let mut resource = web::resource(path);
        for op in ops {
            let route = match op.method {
                Method::Get => web::get(),
                Method::Post => web::post(),
                Method::Patch => web::patch(),
                Method::Delete => web::delete(),
            };
            resource = resource.route(route.to(
                move |req: HttpRequest, body: web::Payload, state: web::Data<AppState>| {
                    dispatch(op, req, body, state)
                },
            ));
        }
        resource = resource.default_service(web::to(move |req: HttpRequest| {
            let allow = allow.clone();
            async move { ApiError::MethodNotAllowed { allow }.response(None, &request_id(&req)) }
        }));
        cfg.service(resource);
    }
    cfg.route("/v1/pricing", web::get().to(pricing))
        .route("/healthz", web::get().to(healthz))
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
    let body = read_body(payload).await;
    let result = handle(op, &req, body, &state, &rid).await;
    let (resp, credits) = match result {
        Ok((mut map, charged, remaining)) => {
            map.insert("credits_charged".into(), json!(charged));
            map.insert("credits_remaining".into(), json!(remaining));
            let mut b = HttpResponse::Ok();
            b.insert_header(("x-request-id", rid.clone()));
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
            (b.json(Value::Object(map)), charged)
        }
        Err((e, remaining)) => {
            pipeline::log_failure(op, &rid, &e);
            (e.response(remaining, &rid), 0)
        }
    };
    let status = resp.status().as_u16();
    tracing::info!(request_id = %rid, operation = op.id, status, credits, "call");
    record_call(op.id, status, started.elapsed().as_secs_f64(), credits);
    resp
}

type Failure = (ApiError, Option<i64>);

/// The HTTP side of a call: authenticate the API key, read the query, path and body, then the
/// shared pipeline ([`pipeline::execute`]), keeping the key cache in step with the ledger.
async fn handle(
    op: &'static OpDecl,
    req: &HttpRequest,
    body: Result<web::Bytes, ApiError>,
    state: &AppState,
    rid: &str,
) -> Result<(serde_json::Map<String, Value>, i64, i64), Failure> {
    let (caller, key_hash) = authenticate(req, state, op.price.upfront())
        .await
        .map_err(|e| (e, None))?;
    let input = body.and_then(|body| parse_input(op, req, &body).map_err(ApiError::Validation));
    match pipeline::execute(op, state, caller, input, rid, Surface::Http).await {
        Ok(done) => {
            state.keys.set_balance(&key_hash, done.credits_remaining);
            Ok((done.body, done.credits_charged, done.credits_remaining))
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

/// `Authorization: Bearer <API key>`; anything else is 401. Returns the caller and the key's hash.
/// A cached caller is used when it is fresh and its balance covers `need`; otherwise the store.
async fn authenticate(
    req: &HttpRequest,
    state: &AppState,
    need: i64,
) -> Result<(Caller, String), ApiError> {
    let header = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok());
    let Some(key) = header.and_then(|h| {
        h.strip_prefix("Bearer ")
            .or_else(|| h.strip_prefix("bearer "))
            .map(str::trim)
    }) else {
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
    let query: Vec<(String, String)> =
        serde_urlencoded::from_str(req.query_string()).map_err(|e| {
            vec![FieldError::new(
                &["query"],
                "value_error",
                format!("Malformed query string: {e}"),
            )]
        })?;
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
    Ok(RawInput {
        params,
        body,
        refused,
    })
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

async fn metrics(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
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
