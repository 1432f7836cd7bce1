//! The MCP tool surface: one tool per declared operation, served over streamable HTTP at `/mcp`
//! (rmcp with rmcp-actix-web, OAuth access tokens or API keys) and over stdio by
//! `terrace mcp --stdio` (an API key from the environment).
//!
//! Architecture Invariant: tools are generated from `ops::all()`: name = `OpDecl.id`, input schema
//! from the same parameter and body types as the HTTP validation, the price in
//! the description, `readOnlyHint` from `OpDecl.read_only`. A call goes through
//! [`pipeline::execute`], the same function as the HTTP route, charged with surface `mcp`.
//!
//! What differs from HTTP is only the form, for the clients and models that read it: schemas are
//! strict JSON Schema ([`crate::mcp_schema`]); a failed call is `isError` with the message and
//! what to do next as text and no `structuredContent` (so a client that validates results
//! against `outputSchema` shows the error rather than a schema failure); validation locations
//! name the tool's arguments; batch tools answer compactly unless `detail` is asked for
//! ([`crate::mcp_compact`]); and an OAuth caller is not given the key-management tools.

use crate::error::{ApiError, FieldError};
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

/// Tools an application signed in with OAuth is not given: an API key created through a grant
/// would land in the model's context and outlive the grant, so keys are made and revoked on the
/// hub (or with an API key), never through an OAuth grant. See docs/API-DESIGN.md.
pub const KEY_MANAGEMENT_TOOLS: &[&str] = &["account_create_key", "account_revoke_key"];

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

/// The tools a principal may call: every tool, but for an OAuth caller the key-management ones.
pub fn tools_for(principal: Option<&Principal>) -> Vec<Tool> {
    specs()
        .iter()
        .filter(|s| allowed(s.op, principal))
        .map(|s| s.tool.clone())
        .collect()
}

fn allowed(op: &OpDecl, principal: Option<&Principal>) -> bool {
    !(matches!(principal, Some(Principal::OAuth { .. })) && KEY_MANAGEMENT_TOOLS.contains(&op.id))
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
        let mut schema = standalone(body);
        // A rule across a body's fields (`oneOf`, `anyOf`, `allOf` or `not` beside its properties: exactly
        // one location, at least one address field) is not carried into the tool's arguments:
        // the hosts' tool APIs refuse those keywords at the top of an input schema. The tool's
        // description states the rule, and the server enforces it with a tool error.
        if schema.get("type") == Some(&json!("object")) && schema.contains_key("properties") {
            for k in ["oneOf", "anyOf", "not", "allOf"] {
                schema.remove(k);
            }
        }
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
    let compact = crate::mcp_compact::is_batch(op);
    if compact {
        properties.insert(
            crate::mcp_compact::DETAIL_ARG.into(),
            crate::mcp_compact::detail_schema(),
        );
    }
    if op.takes_idempotency_key() {
        properties.insert(
            pipeline::IDEMPOTENCY_ARGUMENT.into(),
            json!({
                "type": "string",
                "minLength": 1,
                "maxLength": pipeline::IDEMPOTENCY_KEY_MAX,
                "pattern": "^[!-~]+$",
                "description": "Optional. A key of your choosing (a UUID): a repeat of the call with the same key within 24 hours returns the first answer and charges nothing; the same key with different arguments is refused.",
            }),
        );
    }
    let mut input = Map::new();
    input.insert("type".into(), json!("object"));
    input.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        input.insert("required".into(), Value::Array(required));
    }
    input.insert("additionalProperties".into(), json!(false));
    let mut input = Value::Object(input);
    crate::mcp_schema::strict(&mut input);
    let input = match input {
        Value::Object(m) => m,
        other @ (Value::Null
        | Value::Bool(_)
        | Value::Number(_)
        | Value::String(_)
        | Value::Array(_)) => Map::from_iter([("allOf".to_string(), json!([other]))]),
    };

    let summary = without_paths(op.summary);
    let mut description = format!(
        "{}. {} {}",
        summary.trim_end_matches('.'),
        without_paths(op.description),
        op.price.sentence()
    );
    if compact {
        description.push(' ');
        description.push_str(crate::mcp_compact::DESCRIPTION);
    }
    let annotations = ToolAnnotations::with_title(summary.clone())
        .read_only(op.read_only)
        .destructive(!op.read_only && op.method == crate::registry::Method::Delete)
        .idempotent(op.read_only)
        .open_world(false);
    let mut tool = Tool::new(op.id, description, Arc::new(input))
        .with_title(summary.clone())
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

/// An operation's summary or description as a tool's: an HTTP path of another operation
/// (`/v1/transactions/uprn/{uprn}`, with or without its method) becomes that tool's name, so a
/// deprecated tool points at its successor tool rather than at a URL.
pub fn without_paths(text: &str) -> String {
    let mut ops: Vec<&OpDecl> = operations().to_vec();
    ops.sort_by_key(|o| std::cmp::Reverse(o.path.len()));
    let mut out = text.to_string();
    for o in ops {
        if !out.contains(o.path) {
            continue;
        }
        let tool = format!("the `{}` tool", o.id);
        out = out
            .replace(&format!("{} {}", o.method.as_str(), o.path), &tool)
            .replace(o.path, &tool);
    }
    out
}

/// The structured output: the operation's response object plus the two credit fields (for a
/// batch, with the compact item form allowed), as strict JSON Schema.
fn output_schema(op: &OpDecl) -> Option<JsonObject> {
    let mut schema = output_schema_raw(op)?;
    if crate::mcp_compact::is_batch(op) {
        crate::mcp_compact::widen_output_schema(&mut schema);
    }
    let mut v = Value::Object(schema);
    crate::mcp_schema::strict(&mut v);
    match v {
        Value::Object(m) => Some(m),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_) => {
            None
        }
    }
}

fn output_schema_raw(op: &OpDecl) -> Option<JsonObject> {
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

/// Validation locations as a tool's caller knows them: the HTTP `["query", "q"]`, `["path",
/// "uprn"]` and `["body", "address"]` are all the tool's arguments (`["arguments", "q"]`); a
/// body passed whole stays under its `body` argument.
fn argument_locations(op: &OpDecl, errors: &[FieldError]) -> Vec<FieldError> {
    let nested = body_is_nested(op);
    errors
        .iter()
        .map(|e| {
            let mut e = e.clone();
            let head = e.loc.first().and_then(Value::as_str).map(str::to_string);
            match head.as_deref() {
                Some("query" | "path") => e.loc[0] = json!("arguments"),
                Some("body") if nested => e.loc.insert(0, json!("arguments")),
                Some("body") => e.loc[0] = json!("arguments"),
                Some(_) | None => {}
            }
            e
        })
        .collect()
}

/// What the caller (a person or a model) should do next, as a sentence.
fn retry_sentence(retry: &str, retry_after: Option<u64>) -> String {
    match (retry, retry_after) {
        ("after_fixing_arguments", _) => "Fix the arguments and call again.".into(),
        ("after_top_up", _) => "Add credits (a credit pack on the account) and call again.".into(),
        ("after_signing_in", _) => {
            "Sign in again (or configure a valid API key), then call again.".into()
        }
        ("later", Some(secs)) => format!("Call again in {secs} s."),
        ("later", None) => "Call again shortly.".into(),
        _ => "Calling again with the same arguments will give the same answer.".into(),
    }
}

/// The MCP form of a failed call: a tool result with `isError: true` and no `structuredContent`
/// (a client validating results against the tool's `outputSchema` would otherwise turn the
/// error into a schema failure). The first text block is the message with what to do next and
/// the credits; the second is the JSON error body (the HTTP one, with validation locations
/// naming the tool's arguments, `credits_charged: 0`, `credits_remaining` when the caller is
/// known, `credits_required` on insufficient credits, `retry`, `retry_after_secs` when rate
/// limited, and the request id).
pub fn tool_error(
    op: &OpDecl,
    e: &ApiError,
    remaining: Option<i64>,
    request_id: &str,
) -> CallToolResult {
    let mcp_error;
    let e = match e {
        ApiError::Validation(errors) => {
            mcp_error = ApiError::Validation(argument_locations(op, errors));
            &mcp_error
        }
        ApiError::Unauthenticated(_)
        | ApiError::InsufficientCredits { .. }
        | ApiError::NotFound(_)
        | ApiError::MethodNotAllowed { .. }
        | ApiError::PayloadTooLarge { .. }
        | ApiError::RateLimited { .. }
        | ApiError::UnsupportedMediaType
        | ApiError::RequestTimeout { .. }
        | ApiError::Busy { .. }
        | ApiError::Unavailable(_)
        | ApiError::Internal(_) => e,
    };
    let mut body = e.body();
    body.insert("credits_charged".into(), json!(0));
    let (remaining, retry): (Option<i64>, &str) = match e {
        ApiError::InsufficientCredits { remaining, .. } => (Some(*remaining), "after_top_up"),
        ApiError::Validation(_) => (remaining, "after_fixing_arguments"),
        ApiError::Unauthenticated(_) => (None, "after_signing_in"),
        ApiError::NotFound(_) => (remaining, "no"),
        ApiError::MethodNotAllowed { .. }
        | ApiError::PayloadTooLarge { .. }
        | ApiError::UnsupportedMediaType => (remaining, "no"),
        ApiError::RateLimited { .. }
        | ApiError::Unavailable(_)
        | ApiError::Busy { .. }
        | ApiError::RequestTimeout { .. } => (remaining, "later"),
        ApiError::Internal(_) => (remaining, "later"),
    };
    if let Some(r) = remaining {
        body.insert("credits_remaining".into(), json!(r));
    }
    let retry_after = e.retry_after_secs();
    if let Some(secs) = retry_after {
        body.insert("retry_after_secs".into(), json!(secs));
    }
    body.insert("retry".into(), json!(retry));
    body.insert("request_id".into(), json!(request_id));

    let mut message = match e {
        ApiError::Validation(errors) => {
            let lines: Vec<String> = errors
                .iter()
                .map(|f| {
                    let at: Vec<String> = f
                        .loc
                        .iter()
                        .skip(1)
                        .map(|l| match l {
                            Value::String(s) => s.clone(),
                            other @ (Value::Null
                            | Value::Bool(_)
                            | Value::Number(_)
                            | Value::Array(_)
                            | Value::Object(_)) => other.to_string(),
                        })
                        .collect();
                    let at = if at.is_empty() {
                        "arguments".to_string()
                    } else {
                        at.join(".")
                    };
                    format!("- {at}: {}", f.msg)
                })
                .collect();
            format!(
                "{}: the arguments are not valid.\n{}",
                op.id,
                lines.join("\n")
            )
        }
        ApiError::Unauthenticated(_)
        | ApiError::InsufficientCredits { .. }
        | ApiError::NotFound(_)
        | ApiError::MethodNotAllowed { .. }
        | ApiError::PayloadTooLarge { .. }
        | ApiError::RateLimited { .. }
        | ApiError::UnsupportedMediaType
        | ApiError::RequestTimeout { .. }
        | ApiError::Busy { .. }
        | ApiError::Unavailable(_)
        | ApiError::Internal(_) => format!("{}: {}.", op.id, e.public_message()),
    };
    message.push('\n');
    message.push_str(&retry_sentence(retry, retry_after));
    message.push_str(" Nothing was charged");
    match remaining {
        Some(r) => message.push_str(&format!("; the balance is {r} credits.")),
        None => message.push('.'),
    }
    let text = serde_json::to_string(&Value::Object(body)).unwrap_or_default();
    CallToolResult::error(vec![ContentBlock::text(message), ContentBlock::text(text)])
}

/// A refusal that is not an operation's failure (a tool the caller may not use), in the same
/// form as [`tool_error`].
fn tool_refusal(op: &OpDecl, message: &str, request_id: &str) -> CallToolResult {
    let body = json!({
        "detail": message,
        "error": {"code": "not_available", "message": message},
        "credits_charged": 0,
        "retry": "no",
        "request_id": request_id,
    });
    CallToolResult::error(vec![
        ContentBlock::text(format!("{}: {message} Nothing was charged.", op.id)),
        ContentBlock::text(body.to_string()),
    ])
}

/// The MCP form of a successful call: structured content (the answer with `credits_charged` and
/// `credits_remaining`) and the same JSON as text for clients that read text only.
fn tool_success(op: &OpDecl, done: pipeline::Charged, detail: bool) -> CallToolResult {
    let mut body = match serde_json::from_str::<Value>(&done.body) {
        Ok(Value::Object(map)) => map,
        Ok(_) | Err(_) => serde_json::Map::new(),
    };
    if crate::mcp_compact::is_batch(op) {
        crate::mcp_compact::shape(op, &mut body, detail);
    }
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
        if !allowed(op, principal.as_ref()) {
            return Ok(tool_refusal(
                op,
                "API keys are not managed by applications signed in with OAuth: create and revoke keys on the hub (/hub), where a new key is shown only to you.",
                &rid,
            ));
        }
        let mut args = args.unwrap_or_default();
        let detail = match crate::mcp_compact::take_detail(op, &mut args) {
            Ok(d) => d,
            Err(e) => return Ok(tool_error(op, &e, None, &rid)),
        };
        let outcome = match self.caller(principal).await {
            Err(e) => Err(pipeline::Failure::before_caller(e)),
            Ok(caller) => {
                let input = Ok(pipeline::input_from_arguments(op, &args));
                pipeline::execute(op, &self.state, caller, input, &rid, Surface::Mcp).await
            }
        };
        let (result, status, credits) = match outcome {
            Ok(done) => {
                let c = done.credits_charged;
                (tool_success(op, done, detail), 200, c)
            }
            Err(f) => {
                pipeline::log_failure(op, &rid, &f.error);
                let status = f.error.status().as_u16();
                (tool_error(op, &f.error, f.remaining, &rid), status, 0)
            }
        };
        crate::telemetry::log_call(
            tracing::enabled!(tracing::Level::INFO),
            &rid,
            op.id,
            Some("mcp"),
            status,
            credits,
        );
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
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let principal = self.principal(&context);
        Ok(ListToolsResult::with_all_items(tools_for(
            principal.as_ref(),
        )))
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
    /// A browser page of another site (its `Origin`) calling /mcp: refused against DNS
    /// rebinding, as the MCP transport asks.
    Origin,
}

/// Establishes who a /mcp request acts for: an OAuth access token (a JWT for this resource whose
/// grant is still live) or an API key.
async fn authorize(req: &actix_web::HttpRequest, state: &AppState) -> Result<Principal, Refusal> {
    if let Some(origin) = req.headers().get(actix_web::http::header::ORIGIN)
        && !origin.to_str().is_ok_and(|o| state.oauth.allowed_origin(o))
    {
        return Err(Refusal::Origin);
    }
    let Some(token) = crate::http::bearer_token(req) else {
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
                | credits::CreditsError::KeyLimit { .. }
                | credits::CreditsError::Invalid(_),
            ) => Err(Refusal::InvalidToken("Unknown or revoked API key")),
        };
    }
    let settings = crate::oauth::routes::request_settings(req, state);
    match terrace_oauth::admit(&state.db, &settings, token, state.clock.now()).await {
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
fn refusal_response(
    req: &actix_web::HttpRequest,
    state: &AppState,
    refusal: Refusal,
) -> actix_web::HttpResponse {
    let rid = uuid::Uuid::new_v4().to_string();
    let metadata = crate::oauth::routes::request_settings(req, state).resource_metadata_url();
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
        Refusal::Origin => {
            let message = "Requests from this Origin are not accepted: /mcp answers browser pages of loopback origins and of the public URL only";
            return actix_web::HttpResponse::Forbidden().json(json!({
                "credits_charged": 0,
                "detail": message,
                "error": {"code": "forbidden_origin", "message": message},
                "request_id": rid,
            }));
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
        .max_request_body_bytes(crate::http::MAX_BODY)
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
                            next.call(req).await.map(crate::http::json_errors)
                        }
                        Err(r) => {
                            let resp = refusal_response(req.request(), &state, r);
                            Ok::<ServiceResponse<actix_web::body::BoxBody>, actix_web::Error>(
                                req.into_response(resp.map_into_boxed_body()),
                            )
                        }
                    }
                }
            },
        ))
}

/// `terrace mcp --stdio`: serves the tools on standard input and output for a local agent, as
/// the account of the API key in `TERRACE_API_KEY`.
///
/// `store` names the store `state` was opened on: a key unknown there is reported with it, since
/// the usual cause is a host starting this command where it opens another (an empty) store.
pub async fn serve_stdio(state: AppState, api_key: &str, store: &str) -> anyhow::Result<()> {
    use rmcp::ServiceExt;
    let hash = credits::presented_hash(api_key).ok_or_else(|| {
        anyhow::anyhow!("TERRACE_API_KEY is not a Terrace API key (trc_ and 40 hex characters)")
    })?;
    match credits::authenticate_hash(&state.db, &hash).await {
        Ok(_) => {}
        Err(credits::CreditsError::Store(e)) => {
            anyhow::bail!("cannot read {store}: {e}")
        }
        Err(
            credits::CreditsError::Unauthenticated
            | credits::CreditsError::NoAccount
            | credits::CreditsError::NoKey
            | credits::CreditsError::InsufficientCredits { .. }
            | credits::CreditsError::KeyLimit { .. }
            | credits::CreditsError::Invalid(_),
        ) => anyhow::bail!(
            "TERRACE_API_KEY is not a key of {store}, which this command opened (unknown or revoked key). \
             To use a running Terrace, set TERRACE_URL to its address (for example http://127.0.0.1:8080); \
             to use its store directly, set TERRACE_DATA_DIR (or DATABASE_URL) to the one it serves."
        ),
    }
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
