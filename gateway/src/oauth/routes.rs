//! The OAuth endpoints: metadata (RFC 9728, RFC 8414), dynamic client registration (RFC 7591),
//! client ID metadata documents, the authorize step with its sign-in and consent pages, the token
//! endpoint (authorization code with PKCE S256, rotating refresh tokens) and revocation (RFC 7009).

use crate::state::AppState;
use crate::web::{self, esc, hidden};
use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, web as aw};
use serde::Deserialize;
use serde_json::{Value, json};
use terrace_oauth::{
    AuthzError, AuthzParams, ClientMetadata, GrantError, RegisterError, Registration, SCOPE,
    Tokens, ValidAuthz, check_metadata, fetchable_metadata_url, is_metadata_url,
};
use terrace_store::StoreError;
use terrace_store::oauth::{self as q, ClientRow};

pub fn configure(cfg: &mut aw::ServiceConfig) {
    cfg.route(
        "/.well-known/oauth-protected-resource",
        aw::get().to(protected_resource),
    )
    .route(
        "/.well-known/oauth-protected-resource/mcp",
        aw::get().to(protected_resource),
    )
    .route(
        "/.well-known/oauth-authorization-server",
        aw::get().to(authorization_server),
    )
    .route("/oauth/register", aw::post().to(register))
    .route("/oauth/authorize", aw::get().to(authorize_get))
    .route("/oauth/authorize", aw::post().to(authorize_post))
    .route("/oauth/token", aw::post().to(token))
    .route("/oauth/revoke", aw::post().to(revoke));
}

/// The OAuth settings a request is answered with: the configured ones, or, with no public URL
/// configured, the same based at the loopback host the request was sent to (`Host`), so a
/// client that typed `localhost` and one that typed `127.0.0.1` each see their own URLs.
pub fn request_settings<'a>(
    req: &HttpRequest,
    state: &'a AppState,
) -> std::borrow::Cow<'a, terrace_oauth::OAuthSettings> {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    state.oauth.for_host(host.as_deref())
}

fn json_no_store(status: StatusCode, v: Value) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::PRAGMA, "no-cache"))
        .json(v)
}

/// RFC 9728: where the MCP resource's authorization server is.
async fn protected_resource(req: HttpRequest, state: aw::Data<AppState>) -> HttpResponse {
    let s = request_settings(&req, &state);
    HttpResponse::Ok().json(json!({
        "resource": s.resource(),
        "authorization_servers": [s.issuer()],
        "scopes_supported": [SCOPE],
        "bearer_methods_supported": ["header"],
        "resource_name": "Terrace MCP tool server",
        "resource_documentation": format!("{}/docs/", s.public_url),
    }))
}

/// RFC 8414: the authorization server's endpoints and what it supports.
async fn authorization_server(req: HttpRequest, state: aw::Data<AppState>) -> HttpResponse {
    let s = request_settings(&req, &state);
    let base = &s.public_url;
    HttpResponse::Ok().json(json!({
        "issuer": s.issuer(),
        "authorization_endpoint": format!("{base}/oauth/authorize"),
        "token_endpoint": format!("{base}/oauth/token"),
        "registration_endpoint": format!("{base}/oauth/register"),
        "revocation_endpoint": format!("{base}/oauth/revoke"),
        "scopes_supported": [SCOPE],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": true,
    }))
}

fn register_error(code: &str, description: &str) -> HttpResponse {
    json_no_store(
        StatusCode::BAD_REQUEST,
        json!({"error": code, "error_description": description}),
    )
}

/// The largest registration request accepted.
const MAX_REGISTRATION_BODY: usize = 16 * 1024;

/// The JSON answer of a limit on the OAuth endpoints: 413, 408, 415, 429 or 503, as the
/// gateway's error body, never plain text.
fn limit_response(req: &HttpRequest, e: crate::error::ApiError) -> HttpResponse {
    let rid = uuid::Uuid::new_v4().to_string();
    let _ = req;
    let mut resp = e.response(None, &rid);
    resp.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    resp
}

/// A form or JSON body of an OAuth endpoint, read under the gateway's body limits.
async fn oauth_body(
    req: &HttpRequest,
    state: &AppState,
    payload: aw::Payload,
    max: usize,
) -> Result<aw::Bytes, HttpResponse> {
    let body = crate::http::read_limited(req, payload, state)
        .await
        .map_err(|e| limit_response(req, e))?;
    if body.len() > max {
        return Err(limit_response(
            req,
            crate::error::ApiError::PayloadTooLarge { limit: max },
        ));
    }
    Ok(body)
}

/// RFC 7591 dynamic client registration, for public clients (PKCE, no client secret). Limited
/// per source address (registrations per hour) and in size (16 KiB; at most 10 redirect URIs of
/// at most 512 characters); a client that never completes an authorization expires after 24 h.
async fn register(
    req: HttpRequest,
    state: aw::Data<AppState>,
    payload: aw::Payload,
) -> HttpResponse {
    if let Err(
        crate::limits::Refused::Throttled { retry_after_secs }
        | crate::limits::Refused::Busy { retry_after_secs },
    ) = state.registrations.hit(req.peer_addr().map(|a| a.ip()))
    {
        return limit_response(
            &req,
            crate::error::ApiError::RateLimited {
                retry_after_secs,
                limit: "source",
            },
        );
    }
    let body = match oauth_body(&req, &state, payload, MAX_REGISTRATION_BODY).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    if !crate::http::json_content_type(&req) {
        return limit_response(&req, crate::error::ApiError::UnsupportedMediaType);
    }
    let Ok(reg) = serde_json::from_slice::<Registration>(&body) else {
        return register_error(
            "invalid_client_metadata",
            "the body must be a JSON object of client metadata",
        );
    };
    let registered = match terrace_oauth::register_client(&state.db, reg, state.clock.now()).await {
        Ok(r) => r,
        Err(RegisterError::Refused { error, description }) => {
            return register_error(error, &description);
        }
        Err(RegisterError::Store(e)) => return store_failure(&e),
    };
    json_no_store(
        StatusCode::CREATED,
        json!({
            "client_id": registered.client_id,
            "client_id_issued_at": registered.issued_at.timestamp(),
            "client_name": registered.client_name,
            "redirect_uris": registered.redirect_uris,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "scope": SCOPE,
        }),
    )
}

/// The authorization request's parameters as the hidden fields of the sign-in and consent forms.
fn hidden_fields(p: &AuthzParams) -> String {
    let fields = [
        ("response_type", &p.response_type),
        ("client_id", &p.client_id),
        ("redirect_uri", &p.redirect_uri),
        ("code_challenge", &p.code_challenge),
        ("code_challenge_method", &p.code_challenge_method),
        ("state", &p.state),
        ("scope", &p.scope),
        ("resource", &p.resource),
    ];
    fields
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| hidden(k, v)))
        .collect()
}

/// Finds a client: a registered one, or a client ID metadata document fetched from its URL.
async fn find_client(state: &AppState, client_id: &str) -> Result<Option<ClientRow>, AuthzError> {
    if !is_metadata_url(client_id) {
        return q::client(&state.db, client_id)
            .await
            .map_err(AuthzError::Unavailable);
    }
    if !fetchable_metadata_url(&state.oauth, client_id) {
        return Err(AuthzError::Page(
            "The client id is a URL that cannot be a client metadata document (https with a path is required)".into(),
        ));
    }
    let bytes = match state.metadata_docs.get(client_id) {
        Some(cached) => cached,
        None => {
            let fetched = fetch_metadata(state, client_id).await;
            state.metadata_docs.put(client_id, fetched.clone());
            fetched
        }
    }
    .map_err(AuthzError::Page)?;
    let fetched = serde_json::from_slice::<ClientMetadata>(&bytes)
        .map_err(|_| {
            "the client metadata document is not a valid client metadata document".to_string()
        })
        .and_then(|doc| check_metadata(client_id, &doc).map(|()| doc))
        .map_err(AuthzError::Page)?;
    let row =
        terrace_oauth::accept_metadata_client(&state.db, client_id, fetched, state.clock.now())
            .await
            .map_err(AuthzError::Unavailable)?;
    Ok(Some(row))
}

/// The largest client metadata document fetched.
const MAX_METADATA_DOCUMENT: usize = 64 * 1024;

/// Fetches a client ID metadata document: https only, from public addresses only (a host that
/// resolves to loopback, private, link-local or unique-local addresses is refused before any
/// connection, on the first request and on each of at most 3 redirects), in 5 s, at most
/// 64 KiB. What the target answered is never shown (the error says only what went wrong).
/// With `TERRACE_OAUTH_INSECURE_CLIENT_IDS=1`, `http://` loopback URLs are fetched too (tests).
async fn fetch_metadata(state: &AppState, url: &str) -> Result<Vec<u8>, String> {
    let parsed = url::Url::parse(url).map_err(|_| "the client id is not a URL".to_string())?;
    let insecure_loopback = state.oauth.insecure_client_ids && parsed.scheme() == "http";
    let literal_private = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => !crate::limits::is_public(ip.into()),
        Some(url::Host::Ipv6(ip)) => !crate::limits::is_public(ip.into()),
        Some(url::Host::Domain(_)) | None => false,
    };
    if literal_private && !insecure_loopback {
        return Err("the client metadata document's host is not a public address".into());
    }
    let client = if insecure_loopback {
        &state.insecure_http_client
    } else {
        &state.http_client
    };
    let resp = client
        .get(url)
        .header(header::ACCEPT.as_str(), "application/json")
        .send()
        .await
        .map_err(|e| {
            tracing::info!(url, error = %e, "client metadata document: fetch failed");
            "the client metadata document could not be fetched from a public https address"
                .to_string()
        })?;
    if !resp.status().is_success() {
        return Err(format!(
            "the client metadata document's URL answered HTTP {}",
            resp.status().as_u16()
        ));
    }
    if resp
        .content_length()
        .is_some_and(|n| n > MAX_METADATA_DOCUMENT as u64)
    {
        return Err("the client metadata document is larger than 64 KiB".into());
    }
    let mut body = Vec::new();
    let mut resp = resp;
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|_| "the client metadata document could not be read".to_string())?
    {
        if body.len() + chunk.len() > MAX_METADATA_DOCUMENT {
            return Err("the client metadata document is larger than 64 KiB".into());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

async fn check_request(
    state: &AppState,
    s: &terrace_oauth::OAuthSettings,
    p: &AuthzParams,
) -> Result<ValidAuthz, AuthzError> {
    let Some(client_id) = p.client_id.as_deref().filter(|c| !c.is_empty()) else {
        return Err(AuthzError::Page("The request has no client_id.".into()));
    };
    let Some(client) = find_client(state, client_id).await? else {
        return Err(AuthzError::Page(format!("Unknown client: {client_id}")));
    };
    terrace_oauth::check_authorization(s, client, p)
}

fn redirect_to(redirect_uri: &str, pairs: &[(&str, &str)]) -> HttpResponse {
    let Ok(mut u) = url::Url::parse(redirect_uri) else {
        return web::error_page(
            StatusCode::BAD_REQUEST,
            "Cannot return to the application",
            "The redirect URI is not a URL.",
        );
    };
    {
        let mut q = u.query_pairs_mut();
        for (k, v) in pairs {
            q.append_pair(k, v);
        }
    }
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, u.to_string()))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}

fn authz_error_response(s: &terrace_oauth::OAuthSettings, e: AuthzError) -> HttpResponse {
    match e {
        AuthzError::Page(message) => web::error_page(
            StatusCode::BAD_REQUEST,
            "This sign-in request cannot be completed",
            &message,
        ),
        AuthzError::Unavailable(e) => web::store_error_page(&e),
        AuthzError::Redirect {
            redirect_uri,
            error,
            description,
            state: st,
        } => {
            let iss = s.issuer();
            let mut pairs = vec![
                ("error", error),
                ("error_description", description.as_str()),
                ("iss", iss.as_str()),
            ];
            if let Some(s) = st.as_deref() {
                pairs.push(("state", s));
            }
            redirect_to(&redirect_uri, &pairs)
        }
    }
}

fn client_label(client: &ClientRow) -> String {
    match (&client.client_name, client.metadata_document) {
        (Some(n), true) => format!("{n} ({})", client.client_id),
        (Some(n), false) => n.clone(),
        (None, _) => client.client_id.clone(),
    }
}

fn sign_in_page(
    p: &AuthzParams,
    client: &ClientRow,
    csrf: &str,
    error: Option<&str>,
    status: StatusCode,
) -> HttpResponse {
    let err = error
        .map(|e| format!("<p class=\"error\" role=\"alert\">{}</p>", esc(e)))
        .unwrap_or_default();
    let body = format!(
        "<section class=\"narrow\"><h2>Sign in to Terrace</h2>\
         <p><strong>{}</strong> wants to use your Terrace account.</p>{err}\
         <form method=\"post\" action=\"/oauth/authorize\">{}{}{}\
         <label for=\"email\">Email</label><input id=\"email\" type=\"email\" name=\"email\" autocomplete=\"username\" required autofocus>\
         <label for=\"password\">Password</label><input id=\"password\" type=\"password\" name=\"password\" autocomplete=\"current-password\" required>\
         <p><button type=\"submit\" id=\"sign-in\">Sign in</button></p></form></section>",
        esc(&client_label(client)),
        hidden_fields(p),
        hidden("csrf", csrf),
        hidden("action", "signin"),
    );
    web::page(HttpResponse::build(status), "Sign in", "", &body)
}

fn consent_page(p: &AuthzParams, client: &ClientRow, csrf: &str, email: &str) -> HttpResponse {
    let body = format!(
        "<section class=\"narrow\"><h2>Allow {} to use Terrace?</h2>\
         <p class=\"mute\">Signed in as {}</p>\
         <p>If you allow it, this application may:</p>\
         <ul class=\"scopes\"><li>call every Terrace tool (address, property and account tools) as you;</li>\
         <li>spend your credits at the listed price of each tool;</li>\
         <li>see your balance, usage and the list of your API keys (it cannot create or revoke keys: that is done on the hub).</li></ul>\
         <p class=\"mute\">It will be sent back to <code>{}</code>. You can withdraw this at any time from the hub.</p>\
         <form method=\"post\" action=\"/oauth/authorize\">{}{}\
         <p class=\"row\"><button type=\"submit\" name=\"action\" value=\"allow\" id=\"allow\">Allow</button>\
         <button type=\"submit\" name=\"action\" value=\"deny\" class=\"secondary\" id=\"deny\">Deny</button></p></form></section>",
        esc(&client_label(client)),
        esc(email),
        esc(p.redirect_uri.as_deref().unwrap_or_default()),
        hidden_fields(p),
        hidden("csrf", csrf),
    );
    web::page(HttpResponse::Ok(), "Allow access", "", &body)
}

async fn account_email(state: &AppState, account_id: i64) -> String {
    terrace_store::accounts::account(&state.db, account_id)
        .await
        .ok()
        .flatten()
        .and_then(|a| a.email.or(Some(a.name)))
        .unwrap_or_default()
}

async fn authorize_get(
    req: HttpRequest,
    state: aw::Data<AppState>,
    query: aw::Query<AuthzParams>,
) -> HttpResponse {
    let p = query.into_inner();
    let s = request_settings(&req, &state);
    let valid = match check_request(&state, &s, &p).await {
        Ok(v) => v,
        Err(e) => return authz_error_response(&s, e),
    };
    if let Some(session) = web::current_session(&req, &state).await {
        let email = account_email(&state, session.account_id).await;
        return consent_page(&p, &valid.client, &session.csrf_token, &email);
    }
    let (csrf, cookie) = web::login_csrf(&req, &state);
    let mut resp = sign_in_page(&p, &valid.client, &csrf, None, StatusCode::OK);
    if let Some(c) = cookie {
        let _ = resp.add_cookie(&c);
    }
    resp
}

#[derive(Debug, Deserialize)]
struct AuthzForm {
    #[serde(flatten)]
    params: AuthzParams,
    action: Option<String>,
    csrf: Option<String>,
    email: Option<String>,
    password: Option<String>,
}

async fn authorize_post(
    req: HttpRequest,
    state: aw::Data<AppState>,
    form: aw::Form<AuthzForm>,
) -> HttpResponse {
    let form = form.into_inner();
    let p = form.params.clone();
    let s = request_settings(&req, &state);
    let valid = match check_request(&state, &s, &p).await {
        Ok(v) => v,
        Err(e) => return authz_error_response(&s, e),
    };
    let csrf = form.csrf.unwrap_or_default();
    match form.action.as_deref() {
        Some("signin") => {
            if !web::login_csrf_ok(&req, &csrf) {
                return web::error_page(
                    StatusCode::FORBIDDEN,
                    "Form expired",
                    "The sign-in form expired or came from another site; go back to the application and start again.",
                );
            }
            let email = form.email.unwrap_or_default();
            let password = form.password.unwrap_or_default();
            let account = match web::sign_in(&req, &state, &email, &password).await {
                Ok(a) => a,
                Err(e) => return web::sign_in_error_page(&e),
            };
            let Some(account_id) = account else {
                return sign_in_page(
                    &p,
                    &valid.client,
                    &csrf,
                    Some("The email or password is not right."),
                    StatusCode::UNAUTHORIZED,
                );
            };
            let (session, cookie) = match web::start_session(&state, account_id).await {
                Ok(s) => s,
                Err(e) => return authz_error_response(&s, AuthzError::Unavailable(e)),
            };
            let mut resp = consent_page(&p, &valid.client, &session.csrf_token, &email);
            let _ = resp.add_cookie(&cookie);
            resp
        }
        Some(decision @ ("allow" | "deny")) => {
            let Some(session) = web::current_session(&req, &state).await else {
                return web::error_page(
                    StatusCode::FORBIDDEN,
                    "Signed out",
                    "Your session ended; go back to the application and start again.",
                );
            };
            if !web::same(&session.csrf_token, &csrf) {
                return web::error_page(
                    StatusCode::FORBIDDEN,
                    "Form expired",
                    "The consent form expired or came from another site.",
                );
            }
            let iss = s.issuer();
            if decision == "deny" {
                let mut pairs = vec![
                    ("error", "access_denied"),
                    ("error_description", "the account holder denied access"),
                    ("iss", iss.as_str()),
                ];
                if let Some(s) = valid.state.as_deref() {
                    pairs.push(("state", s));
                }
                return redirect_to(&valid.redirect_uri, &pairs);
            }
            let code = match terrace_oauth::issue_code(
                &state.db,
                &s,
                session.account_id,
                &valid,
                state.clock.now(),
            )
            .await
            {
                Ok(c) => c,
                Err(e) => return authz_error_response(&s, AuthzError::Unavailable(e)),
            };
            let mut pairs = vec![("code", code.as_str()), ("iss", iss.as_str())];
            if let Some(s) = valid.state.as_deref() {
                pairs.push(("state", s));
            }
            redirect_to(&valid.redirect_uri, &pairs)
        }
        Some(_) | None => web::error_page(
            StatusCode::BAD_REQUEST,
            "Unknown action",
            "The form was not one this page sends.",
        ),
    }
}

#[derive(Debug, Default, Deserialize)]
struct TokenForm {
    grant_type: Option<String>,
    code: Option<String>,
    redirect_uri: Option<String>,
    client_id: Option<String>,
    code_verifier: Option<String>,
    refresh_token: Option<String>,
    token: Option<String>,
    /// RFC 8707: the resource the tokens are for (must be the /mcp URL when sent).
    resource: Option<String>,
}

fn token_error(code: &str, description: &str) -> HttpResponse {
    let status = if code == "invalid_client" {
        StatusCode::UNAUTHORIZED
    } else {
        StatusCode::BAD_REQUEST
    };
    json_no_store(
        status,
        json!({"error": code, "error_description": description}),
    )
}

/// The client id from the form, or from HTTP Basic authentication (a public client's id with an
/// empty secret).
fn client_id_of(req: &HttpRequest, form: &TokenForm) -> Option<String> {
    use base64::Engine as _;
    if let Some(c) = form.client_id.clone().filter(|c| !c.is_empty()) {
        return Some(c);
    }
    let basic = req
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(basic.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let id = text.split(':').next()?;
    url::form_urlencoded::parse(format!("x={id}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
}

/// The largest token or revocation request accepted.
const MAX_TOKEN_BODY: usize = 16 * 1024;

async fn token(req: HttpRequest, state: aw::Data<AppState>, payload: aw::Payload) -> HttpResponse {
    let body = match oauth_body(&req, &state, payload, MAX_TOKEN_BODY).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    let form: TokenForm = match serde_urlencoded::from_bytes(&body) {
        Ok(f) => f,
        Err(_) => {
            return token_error(
                "invalid_request",
                "the body must be application/x-www-form-urlencoded",
            );
        }
    };
    let Some(client_id) = client_id_of(&req, &form) else {
        return token_error("invalid_client", "client_id is required");
    };
    let s = request_settings(&req, &state);
    if let Err(e) = terrace_oauth::check_resource(&s, form.resource.as_deref()) {
        return token_response(Err(e));
    }
    match form.grant_type.as_deref() {
        Some("authorization_code") => token_response(
            terrace_oauth::redeem_code(
                &state.db,
                &s,
                &client_id,
                form.code.as_deref(),
                form.redirect_uri.as_deref(),
                form.code_verifier.as_deref(),
                state.clock.now(),
            )
            .await,
        ),
        Some("refresh_token") => token_response(
            terrace_oauth::refresh(
                &state.db,
                &s,
                &client_id,
                form.refresh_token.as_deref(),
                state.clock.now(),
            )
            .await,
        ),
        Some(_) | None => token_error(
            "unsupported_grant_type",
            "grant_type must be authorization_code or refresh_token",
        ),
    }
}

/// The token endpoint's answer to a grant flow.
fn token_response(outcome: Result<Tokens, GrantError>) -> HttpResponse {
    match outcome {
        Ok(t) => json_no_store(
            StatusCode::OK,
            json!({
                "access_token": t.access_token,
                "token_type": "Bearer",
                "expires_in": t.expires_in,
                "refresh_token": t.refresh_token,
                "scope": SCOPE,
            }),
        ),
        Err(GrantError::Refused { error, description }) => token_error(error, description),
        Err(GrantError::Signing(e)) => {
            tracing::error!(error = %e, "cannot sign an access token");
            json_no_store(
                StatusCode::INTERNAL_SERVER_ERROR,
                json!({"error": "server_error"}),
            )
        }
        Err(GrantError::Store(e)) => store_failure(&e),
    }
}

/// A store failure on a JSON endpoint: 503 `temporarily_unavailable` when the store cannot be
/// reached (try again), 500 `server_error` (logged) for any other fault.
fn store_failure(e: &StoreError) -> HttpResponse {
    match e {
        StoreError::Unavailable(detail) => {
            tracing::warn!(error = %detail, "oauth: the store is unavailable");
            json_no_store(
                StatusCode::SERVICE_UNAVAILABLE,
                json!({"error": "temporarily_unavailable"}),
            )
        }
        StoreError::NotFound
        | StoreError::Conflict(_)
        | StoreError::Internal(_)
        | StoreError::Setup(_) => {
            tracing::error!(error = %e, "oauth: store error");
            json_no_store(
                StatusCode::INTERNAL_SERVER_ERROR,
                json!({"error": "server_error"}),
            )
        }
    }
}

/// RFC 7009: revoking a refresh token or an access token revokes the grant behind it (its
/// refresh tokens and access tokens). Unknown tokens are answered 200 too.
async fn revoke(req: HttpRequest, state: aw::Data<AppState>, payload: aw::Payload) -> HttpResponse {
    let body = match oauth_body(&req, &state, payload, MAX_TOKEN_BODY).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    let form: TokenForm = serde_urlencoded::from_bytes(&body).unwrap_or_default();
    let Some(token) = form.token.filter(|t| !t.is_empty()) else {
        return token_error("invalid_request", "token is required");
    };
    let s = request_settings(&req, &state);
    if let Err(e) = terrace_oauth::revoke(&state.db, &s, &token, state.clock.now()).await {
        return store_failure(&e);
    }
    json_no_store(StatusCode::OK, json!({}))
}
