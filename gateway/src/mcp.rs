//! The MCP tool surface: one tool per declared operation, served over streamable HTTP at `/mcp`
//! (rmcp with rmcp-actix-web, OAuth access tokens or API keys) and over stdio by
//! `terrace mcp --stdio` (an API key from the environment).
//!
//! Architecture Invariant: tools are generated from `ops::all()`: name = `OpDecl.id`, input schema
//! from the same parameter and body types as the HTTP validation, the price in
//! the description, `readOnlyHint` from `OpDecl.read_only`. A call goes through
//! [`pipeline::execute`], the same function as the HTTP route, charged with surface `mcp`.

use crate::error::ApiError;
use crate::pipeline;
use crate::registry::{OpDecl, operations};
use crate::state::AppState;
use crate::telemetry::record_call;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use terrace_credits::{self as credits, Caller, Surface};

/// Who an MCP request acts for, established before the request reaches the tool server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// An API key, by its SHA-256 hash (stdio, or a key sent to /mcp).
    ApiKey(String),
    /// An OAuth access token's account and the grant it was issued under.
    OAuth { account_id: i64, grant_id: i64 },
}

/// One generated tool and how its arguments map back to the operation's input.
struct ToolSpec {
    op: &'static OpDecl,
    tool: Tool,
    /// True when the body could not be flattened into the tool's arguments and is passed whole
    /// as the `body` argument.
    nested_body: bool,
}

fn specs() -> &'static [ToolSpec] {
    static SPECS: OnceLock<Vec<ToolSpec>> = OnceLock::new();
    SPECS.get_or_init(|| operations().iter().copied().map(spec_for).collect())
}

/// Every tool, in the order of the declarations.
pub fn tools() -> Vec<Tool> {
    specs().iter().map(|s| s.tool.clone()).collect()
}

/// Whether `op`'s body is passed as one `body` argument rather than flattened.
pub fn body_is_nested(op: &OpDecl) -> bool {
    specs()
        .iter()
        .find(|s| s.op.id == op.id)
        .is_some_and(|s| s.nested_body)
}

/// The `tools/list` answer as committed to `docs/mcp-tools.json` (pretty, trailing newline).
pub fn tools_document_text() -> String {
    let doc = json!({ "tools": tools() });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// A self-contained JSON Schema of a schemars type: subschemas inlined, anything recursive kept
/// under `$defs`.
fn standalone(f: crate::registry::SchemaFn) -> Map<String, Value> {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.definitions_path = "/$defs".into();
    });
    let mut g = settings.into_generator();
    let schema = f(&mut g);
    let mut obj = match schema.to_value() {
        Value::Object(m) => m,
        other @ (Value::Null
        | Value::Bool(_)
        | Value::Number(_)
        | Value::String(_)
        | Value::Array(_)) => Map::from_iter([("allOf".to_string(), json!([other]))]),
    };
    let defs = g.take_definitions(true);
    if !defs.is_empty() {
        obj.insert("$defs".into(), Value::Object(defs.into_iter().collect()));
    }
    obj.remove("$schema");
    obj
}

fn is_plain_object(schema: &Map<String, Value>) -> bool {
    schema.get("type") == Some(&json!("object"))
        && schema.get("properties").is_some_and(Value::is_object)
        && !schema.contains_key("$defs")
        && !schema.contains_key("allOf")
        && !schema.contains_key("oneOf")
        && !schema.contains_key("anyOf")
}

fn spec_for(op: &'static OpDecl) -> ToolSpec {
    let mut properties = Map::new();
    let mut required: Vec<Value> = Vec::new();
    for p in crate::input::fields(op.contract.params) {
        let mut s = p.schema;
        if let Some(d) = p.description {
            s.insert("description".into(), json!(d));
        }
        properties.insert(p.name.clone(), Value::Object(s));
        if p.required {
            required.push(json!(p.name));
        }
    }
    let mut nested_body = false;
    if let Some(body) = op.contract.body {
        let schema = standalone(body);
        let props = schema.get("properties").and_then(Value::as_object);
        let collides = props.is_some_and(|m| m.keys().any(|k| properties.contains_key(k)));
        if is_plain_object(&schema) && !collides {
            for (k, v) in props.into_iter().flatten() {
                properties.insert(k.clone(), v.clone());
            }
            if op.contract.body_required {
                for r in schema
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    required.push(r.clone());
                }
            }
        } else {
            nested_body = true;
            properties.insert("body".into(), Value::Object(schema));
            if op.contract.body_required {
                required.push(json!("body"));
            }
        }
    }
    let mut input = Map::new();
    input.insert("type".into(), json!("object"));
    input.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        input.insert("required".into(), Value::Array(required));
    }
    input.insert("additionalProperties".into(), json!(false));

    let description = format!(
        "{}. {} {}",
        op.summary.trim_end_matches('.'),
        op.description,
        op.price.sentence()
    );
    let annotations = ToolAnnotations::with_title(op.summary)
        .read_only(op.read_only)
        .destructive(!op.read_only && op.method == crate::registry::Method::Delete)
        .idempotent(op.read_only)
        .open_world(false);
    let mut tool = Tool::new(op.id, description, Arc::new(input))
        .with_title(op.summary)
        .with_annotations(annotations);
    if let Some(out) = output_schema(op) {
        tool = tool.with_raw_output_schema(Arc::new(out));
    }
    ToolSpec {
        op,
        tool,
        nested_body,
    }
}

/// The structured output: the operation's response object plus the two credit fields.
fn output_schema(op: &OpDecl) -> Option<JsonObject> {
    let mut schema = standalone(op.contract.response);
    if schema.get("type") != Some(&json!("object")) {
        return None;
    }
    let props = schema
        .entry("properties")
        .or_insert_with(|| json!({}))
        .as_object_mut()?;
    props.insert(
        "credits_charged".into(),
        json!({"type": "integer", "description": "Credits charged for this call; 0 for free calls"}),
    );
    props.insert(
        "credits_remaining".into(),
        json!({"type": "integer", "description": "The balance after the call"}),
    );
    let req = schema.entry("required").or_insert_with(|| json!([]));
    if let Some(a) = req.as_array_mut() {
        a.push(json!("credits_charged"));
        a.push(json!("credits_remaining"));
    }
    Some(schema)
}

/// The MCP form of a failed call: a tool result with `isError`, carrying the same JSON body as
/// the HTTP error (detail, error code and message, `credits_charged: 0`, `credits_remaining`
/// when the caller is known, `credits_required` on insufficient credits, the request id), plus
/// whether retrying can help.
pub fn tool_error(e: &ApiError, remaining: Option<i64>, request_id: &str) -> CallToolResult {
    let mut body = e.body();
    body.insert("credits_charged".into(), json!(0));
    let (remaining, retry): (Option<i64>, &str) = match e {
        ApiError::InsufficientCredits { remaining, .. } => (Some(*remaining), "after_top_up"),
        ApiError::Validation(_) => (remaining, "after_fixing_arguments"),
        ApiError::Unauthenticated(_) => (None, "after_signing_in"),
        ApiError::NotFound(_) => (remaining, "no"),
        ApiError::MethodNotAllowed { .. } | ApiError::PayloadTooLarge { .. } => (remaining, "no"),
        ApiError::RateLimited { .. } | ApiError::Unavailable(_) => (remaining, "later"),
        ApiError::Internal(_) => (remaining, "later"),
    };
    if let Some(r) = remaining {
        body.insert("credits_remaining".into(), json!(r));
    }
    if let ApiError::RateLimited { retry_after_secs } = e {
        body.insert("retry_after_secs".into(), json!(retry_after_secs));
    }
    body.insert("retry".into(), json!(retry));
    body.insert("request_id".into(), json!(request_id));
    let text = serde_json::to_string(&Value::Object(body.clone())).unwrap_or_default();
    let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
    r.structured_content = Some(Value::Object(body));
    r
}

/// The MCP form of a successful call: structured content (the answer with `credits_charged` and
/// `credits_remaining`) and the same JSON as text for clients that read text only.
fn tool_success(done: pipeline::Charged) -> CallToolResult {
    let mut body = done.body;
    body.insert("credits_charged".into(), json!(done.credits_charged));
    body.insert("credits_remaining".into(), json!(done.credits_remaining));
    let value = Value::Object(body);
    let text = serde_json::to_string(&value).unwrap_or_default();
    let mut r = CallToolResult::structured(value);
    r.content = vec![ContentBlock::text(text)];
    r
}

/// The tool server. Over HTTP the principal comes with each request (set by the /mcp token
/// check); over stdio it is fixed at start.
#[derive(Clone)]
pub struct TerraceMcp {
    pub state: AppState,
    pub fixed: Option<Principal>,
}

impl TerraceMcp {
    fn principal(&self, context: &RequestContext<RoleServer>) -> Option<Principal> {
        if let Some(p) = &self.fixed {
            return Some(p.clone());
        }
        rmcp_actix_web::transport::on_request_extensions(&context.extensions)
            .and_then(|ext| ext.get::<Principal>())
            .cloned()
    }

    /// The caller with its balance as it is now.
    async fn caller(&self, principal: Option<Principal>) -> Result<Caller, ApiError> {
        match principal {
            None => Err(ApiError::Unauthenticated(
                "Sign in with OAuth (or send an API key) to call tools",
            )),
            Some(Principal::ApiKey(hash)) => Ok(credits::authenticate_hash(&self.state.db, &hash)
                .await
                .inspect(|c| self.state.keys.put(&hash, c))?),
            Some(Principal::OAuth { account_id, .. }) => {
                let b = credits::balance(&self.state.db, account_id).await?;
                Ok(Caller {
                    account_id,
                    key_id: None,
                    balance: b.balance,
                })
            }
        }
    }

    /// One tool call through the shared pipeline.
    pub async fn call(
        &self,
        name: &str,
        args: Option<JsonObject>,
        principal: Option<Principal>,
    ) -> Result<CallToolResult, McpError> {
        let Some(spec) = specs().iter().find(|s| s.op.id == name) else {
            return Err(McpError::invalid_params(
                format!("unknown tool: {name}"),
                None,
            ));
        };
        let op = spec.op;
        let started = Instant::now();
        let rid = uuid::Uuid::new_v4().to_string();
        let outcome = match self.caller(principal).await {
            Err(e) => Err(pipeline::Failure::before_caller(e)),
            Ok(caller) => {
                let input = Ok(pipeline::input_from_arguments(
                    op,
                    &args.unwrap_or_default(),
                ));
                pipeline::execute(op, &self.state, caller, input, &rid, Surface::Mcp).await
            }
        };
        let (result, status, credits) = match outcome {
            Ok(done) => {
                let c = done.credits_charged;
                (tool_success(done), 200, c)
            }
            Err(f) => {
                pipeline::log_failure(op, &rid, &f.error);
                let status = f.error.status().as_u16();
                (tool_error(&f.error, f.remaining, &rid), status, 0)
            }
        };
        tracing::info!(request_id = %rid, operation = op.id, surface = "mcp", status, credits, "call");
        record_call(op.id, status, started.elapsed().as_secs_f64(), credits);
        Ok(result)
    }
}

impl ServerHandler for TerraceMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("terrace", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Terrace: UK property and address data keyed by UPRN. Every tool states its price \
                 in credits; results carry credits_charged and credits_remaining; a failed call \
                 costs nothing. Resolve an address to a UPRN first (address_resolve), then ask \
                 about the property.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        specs()
            .iter()
            .find(|s| s.op.id == name)
            .map(|s| s.tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let principal = self.principal(&context);
        self.call(&request.name, request.arguments, principal)
            .await
            .map(CallToolResponse::from)
    }
}

/// Why a request to /mcp was refused before reaching the tool server.
enum Refusal {
    /// No bearer token: the client should discover the authorization server.
    NoToken,
    /// A token or key that is malformed, expired, for another audience, or revoked.
    InvalidToken(&'static str),
    /// The store could not be asked.
    Unavailable(String),
}

/// Establishes who a /mcp request acts for: an OAuth access token (a JWT for this resource whose
/// grant is still live) or an API key.
async fn authorize(req: &actix_web::HttpRequest, state: &AppState) -> Result<Principal, Refusal> {
    let header = req
        .headers()
        .get(actix_web::http::header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok());
    let Some(token) = header.and_then(|h| {
        h.strip_prefix("Bearer ")
            .or_else(|| h.strip_prefix("bearer "))
            .map(str::trim)
    }) else {
        return Err(Refusal::NoToken);
    };
    if token.starts_with(credits::KEY_PREFIX) {
        let hash = credits::presented_hash(token)
            .ok_or(Refusal::InvalidToken("Unknown or revoked API key"))?;
        return match credits::authenticate_hash(&state.db, &hash).await {
            Ok(caller) => {
                state.keys.put(&hash, &caller);
                Ok(Principal::ApiKey(hash))
            }
            Err(credits::CreditsError::Store(e)) => Err(Refusal::Unavailable(e.to_string())),
            Err(
                credits::CreditsError::Unauthenticated
                | credits::CreditsError::NoAccount
                | credits::CreditsError::NoKey
                | credits::CreditsError::InsufficientCredits { .. }
                | credits::CreditsError::Invalid(_),
            ) => Err(Refusal::InvalidToken("Unknown or revoked API key")),
        };
    }
    match terrace_oauth::admit(&state.db, &state.oauth, token, state.clock.now()).await {
        Ok((account_id, grant_id)) => Ok(Principal::OAuth {
            account_id,
            grant_id,
        }),
        Err(terrace_oauth::AccessError::Token(e)) => Err(Refusal::InvalidToken(match e {
            terrace_oauth::TokenError::Invalid => "Invalid access token",
            terrace_oauth::TokenError::WrongAudience => "The access token is not for this resource",
            terrace_oauth::TokenError::Expired => "The access token has expired",
        })),
        Err(terrace_oauth::AccessError::Subject) => {
            Err(Refusal::InvalidToken("Invalid access token"))
        }
        Err(terrace_oauth::AccessError::Revoked) => {
            Err(Refusal::InvalidToken("The access token has been revoked"))
        }
        Err(terrace_oauth::AccessError::Store(e)) => Err(Refusal::Unavailable(e.to_string())),
    }
}

/// The 401 (or 503) answer of /mcp: the JSON error body of the HTTP surface, with
/// `WWW-Authenticate: Bearer resource_metadata="..."` pointing at the RFC 9728 metadata.
fn refusal_response(state: &AppState, refusal: Refusal) -> actix_web::HttpResponse {
    let rid = uuid::Uuid::new_v4().to_string();
    let metadata = state.oauth.resource_metadata_url();
    let (error, challenge) = match refusal {
        Refusal::NoToken => (
            ApiError::Unauthenticated(
                "Sign in with OAuth: see the resource_metadata in WWW-Authenticate",
            ),
            format!(
                "Bearer resource_metadata=\"{metadata}\", scope=\"{}\"",
                terrace_oauth::SCOPE
            ),
        ),
        Refusal::InvalidToken(why) => (
            ApiError::Unauthenticated(why),
            format!(
                "Bearer resource_metadata=\"{metadata}\", error=\"invalid_token\", error_description=\"{why}\""
            ),
        ),
        Refusal::Unavailable(detail) => {
            tracing::warn!(request_id = %rid, %detail, "store unavailable");
            return ApiError::Unavailable(detail).response(None, &rid);
        }
    };
    let mut resp = error.response(None, &rid);
    if let Ok(v) = actix_web::http::header::HeaderValue::from_str(&challenge) {
        resp.headers_mut()
            .insert(actix_web::http::header::WWW_AUTHENTICATE, v);
    }
    resp
}

/// The /mcp scope: rmcp's streamable HTTP transport (stateless, JSON responses, the public host
/// allowed), behind the token check.
pub fn http_service(state: &AppState) -> impl actix_web::dev::HttpServiceFactory + use<> {
    use actix_web::dev::{ServiceRequest, ServiceResponse};
    use actix_web::middleware::Next;
    use rmcp_actix_web::transport::{LocalSessionManager, StreamableHttpService};

    let for_factory = state.clone();
    let service = StreamableHttpService::builder()
        .service_factory(Arc::new(move || {
            Ok(TerraceMcp {
                state: for_factory.clone(),
                fixed: None,
            })
        }))
        .session_manager(Arc::new(LocalSessionManager::default()))
        .stateful_mode(false)
        .json_response(true)
        .allowed_hosts(state.oauth.allowed_hosts())
        .on_request_fn(|req, ext| {
            use actix_web::HttpMessage;
            if let Some(p) = req.extensions().get::<Principal>() {
                ext.insert(p.clone());
            }
        })
        .build();
    let for_check = state.clone();
    service
        .scope_with_path("/mcp")
        .wrap(actix_web::middleware::from_fn(
            move |req: ServiceRequest, next: Next<actix_web::body::BoxBody>| {
                let state = for_check.clone();
                async move {
                    match authorize(req.request(), &state).await {
                        Ok(p) => {
                            use actix_web::HttpMessage;
                            req.extensions_mut().insert(p);
                            next.call(req).await
                        }
                        Err(r) => {
                            Ok::<ServiceResponse<actix_web::body::BoxBody>, actix_web::Error>(
                                req.into_response(
                                    refusal_response(&state, r).map_into_boxed_body(),
                                ),
                            )
                        }
                    }
                }
            },
        ))
}

/// `terrace mcp --stdio`: serves the tools on standard input and output for a local agent, as
/// the account of the API key in `TERRACE_API_KEY`.
pub async fn serve_stdio(state: AppState, api_key: &str) -> anyhow::Result<()> {
    use rmcp::ServiceExt;
    let hash = credits::presented_hash(api_key)
        .ok_or_else(|| anyhow::anyhow!("TERRACE_API_KEY is not a Terrace API key"))?;
    credits::authenticate_hash(&state.db, &hash)
        .await
        .map_err(|e| anyhow::anyhow!("TERRACE_API_KEY: {e}"))?;
    let server = TerraceMcp {
        state,
        fixed: Some(Principal::ApiKey(hash)),
    };
    let running = server
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await
        .map_err(|e| anyhow::anyhow!("MCP handshake failed: {e}"))?;
    running.waiting().await?;
    Ok(())
}
