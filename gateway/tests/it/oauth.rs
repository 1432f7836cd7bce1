//! OAuth 2.1 for /mcp, played by a real client library (the `oauth2` crate) against the gateway
//! listening on loopback: discovery, dynamic registration, client ID metadata documents,
//! authorize with PKCE S256 (through the sign-in and consent pages), token, MCP calls charged to
//! the same account as its API keys, refresh rotation, revocation, and every refusal.

use crate::support::*;
use actix_web::{App, HttpResponse, HttpServer, web};
use oauth2::basic::{BasicClient, BasicErrorResponseType};
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, CsrfToken, PkceCodeChallenge, PkceCodeVerifier,
    RedirectUrl, RefreshToken, RequestTokenError, RevocationUrl, Scope, TokenResponse, TokenUrl,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use terrace_gateway::startup::app_config;
use terrace_gateway::state::AppState;
use terrace_oauth::{OAuthSettings, hash_password, issue_access_token};

const EMAIL: &str = "holder@example.test";
const PASSWORD: &str = "correct horse battery";
const REDIRECT: &str = "http://127.0.0.1:9/callback";

struct Server {
    base: String,
    state: AppState,
    app: TestApp,
    account: i64,
    key: String,
    http: reqwest::Client,
    handle: actix_web::dev::ServerHandle,
}

impl Drop for Server {
    fn drop(&mut self) {
        let h = self.handle.clone();
        actix_web::rt::spawn(async move { h.stop(false).await });
    }
}

/// The gateway on a loopback port, with an account holder who can sign in, 50 credits, and an
/// API key.
async fn start() -> Server {
    start_with(false).await
}

/// [`start`]; with `derive_from_host`, as a service with no public URL configured (issuer and
/// resource follow the loopback host of each request).
async fn start_with(derive_from_host: bool) -> Server {
    let app = world().await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = base_of(&listener);
    let mut settings = OAuthSettings::new(&base, b"test-signing-key-of-thirty-two-bytes".to_vec());
    settings.insecure_client_ids = true;
    settings.derive_from_host = derive_from_host;
    let state = app.state.clone().with_oauth(settings);
    let (account, key) = terrace_credits::create_account(
        app.db(),
        "holder",
        Some(EMAIL),
        Some(&hash_password(PASSWORD).unwrap()),
        50,
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    let handle = serve(&state, listener);
    Server {
        base,
        state,
        app,
        account,
        key: key.api_key,
        http: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        handle,
    }
}

fn base_of(listener: &std::net::TcpListener) -> String {
    format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port())
}

/// Serves `state` on `listener` with one worker, in the background.
fn serve(state: &AppState, listener: std::net::TcpListener) -> actix_web::dev::ServerHandle {
    let s = state.clone();
    let server = HttpServer::new(move || App::new().configure(app_config(s.clone())))
        .workers(1)
        .disable_signals()
        .listen(listener)
        .unwrap()
        .run();
    let handle = server.handle();
    actix_web::rt::spawn(server);
    handle
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The hidden fields of the page's form.
fn hidden_fields(html: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for part in html.split("<input type=\"hidden\" name=\"").skip(1) {
        let (name, rest) = part.split_once('"').unwrap();
        let value = rest
            .split_once("value=\"")
            .and_then(|(_, v)| v.split_once('"'))
            .map(|(v, _)| v)
            .unwrap_or_default();
        out.push((unescape(name), unescape(value)));
    }
    out
}

/// A browser's cookie jar, by hand.
#[derive(Default)]
struct Jar(HashMap<String, String>);

impl Jar {
    fn take(&mut self, resp: &reqwest::Response) {
        for v in resp.headers().get_all("set-cookie") {
            let v = v.to_str().unwrap();
            let pair = v.split(';').next().unwrap();
            let (k, val) = pair.split_once('=').unwrap();
            self.0.insert(k.to_string(), val.to_string());
        }
    }
    fn header(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Plays the account holder in a browser: opens the authorization URL, signs in, and answers the
/// consent page with `decision`. Returns the final redirect's Location.
async fn sign_in_and_consent(s: &Server, auth_url: &str, decision: &str) -> String {
    let mut jar = Jar::default();
    let page = s.http.get(auth_url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    jar.take(&page);
    let html = page.text().await.unwrap();
    assert!(html.contains("Sign in to Terrace"), "{html}");
    let mut form = hidden_fields(&html);
    form.push(("email".into(), EMAIL.into()));
    form.push(("password".into(), PASSWORD.into()));
    let consent = s
        .http
        .post(format!("{}/oauth/authorize", s.base))
        .header("cookie", jar.header())
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(consent.status(), 200);
    jar.take(&consent);
    let html = consent.text().await.unwrap();
    assert!(html.contains("to use Terrace?"), "{html}");
    assert!(html.contains("spend your credits"));
    let mut form = hidden_fields(&html);
    form.push(("action".into(), decision.into()));
    let done = s
        .http
        .post(format!("{}/oauth/authorize", s.base))
        .header("cookie", jar.header())
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), 303);
    done.headers()["location"].to_str().unwrap().to_string()
}

fn query_of(location: &str) -> HashMap<String, String> {
    url::Url::parse(location)
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// Dynamic client registration (RFC 7591); returns the client id.
async fn register(s: &Server, redirect: &str) -> String {
    let meta: Value = s
        .http
        .get(format!("{}/.well-known/oauth-authorization-server", s.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let reply = s
        .http
        .post(meta["registration_endpoint"].as_str().unwrap())
        .json(&json!({
            "client_name": "Test agent",
            "redirect_uris": [redirect],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 201);
    let body: Value = reply.json().await.unwrap();
    assert_eq!(body["token_endpoint_auth_method"], "none");
    body["client_id"].as_str().unwrap().to_string()
}

macro_rules! client {
    ($s:expr, $client_id:expr, $redirect:expr) => {
        BasicClient::new(ClientId::new($client_id.to_string()))
            .set_auth_uri(AuthUrl::new(format!("{}/oauth/authorize", $s.base)).unwrap())
            .set_token_uri(TokenUrl::new(format!("{}/oauth/token", $s.base)).unwrap())
            .set_revocation_url(RevocationUrl::new(format!("{}/oauth/revoke", $s.base)).unwrap())
            .set_redirect_uri(RedirectUrl::new($redirect.to_string()).unwrap())
    };
}

/// Runs authorize (with PKCE S256) through the pages; returns the code and the verifier.
async fn authorize(s: &Server, client_id: &str, redirect: &str) -> (String, PkceCodeVerifier) {
    let client = client!(s, client_id, redirect);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let resource = format!("{}/mcp", s.base);
    let (url, csrf) = client
        .authorize_url(CsrfToken::new_random)
        .add_scope(Scope::new("terrace".into()))
        .add_extra_param("resource", resource)
        .set_pkce_challenge(challenge)
        .url();
    let location = sign_in_and_consent(s, url.as_str(), "allow").await;
    assert!(location.starts_with(redirect), "{location}");
    let q = query_of(&location);
    assert_eq!(q["state"], *csrf.secret(), "state round-trips");
    assert_eq!(q["iss"], s.base);
    (q["code"].clone(), verifier)
}

/// One JSON-RPC call to /mcp with a bearer token; the HTTP status and the JSON reply.
async fn mcp(s: &Server, token: &str, method: &str, params: Value) -> (u16, Value) {
    mcp_at(&s.http, &s.base, token, method, params).await
}

/// [`mcp`] against the service at `base`.
async fn mcp_at(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    method: &str,
    params: Value,
) -> (u16, Value) {
    let mut req = http
        .post(format!("{base}/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    if method != "initialize" {
        req = req.header("mcp-protocol-version", "2025-06-18");
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    let v = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .find_map(|l| l.strip_prefix("data:"))
            .and_then(|d| serde_json::from_str(d.trim()).ok())
            .unwrap_or(Value::Null)
    });
    (status, v)
}

async fn http_balance(s: &Server) -> (i64, i64) {
    let v: Value = s
        .http
        .get(format!("{}/v1/account", s.base))
        .bearer_auth(&s.key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    (
        v["account_id"].as_i64().unwrap(),
        v["balance"].as_i64().unwrap(),
    )
}

#[actix_web::test]
async fn an_mcp_client_signs_in_with_oauth_and_spends_the_same_balance() {
    let s = start().await;

    // Discovery from the 401.
    let first = s
        .http
        .post(format!("{}/mcp", s.base))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 401);
    let challenge = first.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_string();
    let metadata_url = challenge
        .split("resource_metadata=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap();
    let prm: Value = s
        .http
        .get(metadata_url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(prm["resource"], format!("{}/mcp", s.base));
    let issuer = prm["authorization_servers"][0].as_str().unwrap();
    let asm: Value = s
        .http
        .get(format!("{issuer}/.well-known/oauth-authorization-server"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(asm["issuer"], issuer);
    assert_eq!(asm["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(asm["token_endpoint"], format!("{}/oauth/token", s.base));

    let client_id = register(&s, REDIRECT).await;
    let (code, verifier) = authorize(&s, &client_id, REDIRECT).await;
    let client = client!(s, client_id, REDIRECT);
    let token = client
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier)
        .request_async(&s.http)
        .await
        .unwrap();
    let access = token.access_token().secret().clone();
    assert!(token.refresh_token().is_some());
    assert_eq!(token.expires_in().unwrap().as_secs(), 900);

    let (before_account, before) = http_balance(&s).await;
    assert_eq!((before_account, before), (s.account, 50));

    let (status, init) = mcp(
        &s,
        &access,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "oauth2-test", "version": "1"}}),
    )
    .await;
    assert_eq!(status, 200, "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "terrace");
    let (_, list) = mcp(&s, &access, "tools/list", json!({})).await;
    let tools = list["result"]["tools"].as_array().unwrap();
    let by_postcode = tools
        .iter()
        .find(|t| t["name"] == "address_by_postcode")
        .unwrap();
    assert!(
        by_postcode["description"]
            .as_str()
            .unwrap()
            .contains("Costs 2 credits")
    );

    let (_, call) = mcp(
        &s,
        &access,
        "tools/call",
        json!({"name": "address_by_postcode", "arguments": {"postcode": "xt11ab"}}),
    )
    .await;
    let out = &call["result"]["structuredContent"];
    assert_ne!(call["result"]["isError"], true, "{call}");
    assert_eq!(out["credits_charged"], 2);
    assert_eq!(out["credits_remaining"], 48);

    // The API key sees the same account, down by the same price.
    let (after_account, after) = http_balance(&s).await;
    assert_eq!(after_account, s.account);
    assert_eq!(after, before - 2);
    let usage = terrace_credits::usage(s.app.db(), s.account, 10, None)
        .await
        .unwrap()
        .0;
    let ops: Vec<(Option<&str>, &str, i64)> = usage
        .iter()
        .map(|u| (u.operation.as_deref(), u.surface.as_str(), u.credits))
        .collect();
    assert_eq!(
        ops,
        vec![
            (Some("account_balance"), "http", 0),
            (Some("address_by_postcode"), "mcp", 2),
            (Some("account_balance"), "http", 0),
        ]
    );

    // The refresh token rotates; once its successor has been used, the old one presented again
    // is reuse and revokes the grant.
    let old = token.refresh_token().unwrap().clone();
    let renewed = client
        .exchange_refresh_token(&old)
        .request_async(&s.http)
        .await
        .unwrap();
    let new_refresh = renewed.refresh_token().unwrap().clone();
    assert_ne!(new_refresh.secret(), old.secret());
    let (status, _) = mcp(&s, renewed.access_token().secret(), "tools/list", json!({})).await;
    assert_eq!(status, 200);
    let renewed_again = client
        .exchange_refresh_token(&new_refresh)
        .request_async(&s.http)
        .await
        .unwrap();
    let reused = client
        .exchange_refresh_token(&old)
        .request_async(&s.http)
        .await;
    assert_invalid_grant(reused);
    let after_reuse = client
        .exchange_refresh_token(renewed_again.refresh_token().unwrap())
        .request_async(&s.http)
        .await;
    assert_invalid_grant(after_reuse);
    let (status, _) = mcp(&s, renewed.access_token().secret(), "tools/list", json!({})).await;
    assert_eq!(status, 401, "the grant's access tokens stop at once");
}

fn error_of<T: std::fmt::Debug>(
    r: Result<
        T,
        RequestTokenError<
            oauth2::HttpClientError<oauth2::reqwest::Error>,
            oauth2::StandardErrorResponse<BasicErrorResponseType>,
        >,
    >,
) -> BasicErrorResponseType {
    match r {
        Err(RequestTokenError::ServerResponse(e)) => e.error().clone(),
        other => panic!("expected an OAuth error response, got {other:?}"),
    }
}

fn assert_invalid_grant<T: std::fmt::Debug>(
    r: Result<
        T,
        RequestTokenError<
            oauth2::HttpClientError<oauth2::reqwest::Error>,
            oauth2::StandardErrorResponse<BasicErrorResponseType>,
        >,
    >,
) {
    assert_eq!(error_of(r), BasicErrorResponseType::InvalidGrant);
}

#[actix_web::test]
async fn the_token_endpoint_refuses_bad_pkce_reused_codes_and_wrong_redirects() {
    let s = start().await;
    let client_id = register(&s, REDIRECT).await;
    let client = client!(s, client_id, REDIRECT);

    // Missing verifier.
    let (code, _) = authorize(&s, &client_id, REDIRECT).await;
    let r = client
        .exchange_code(AuthorizationCode::new(code))
        .request_async(&s.http)
        .await;
    assert_eq!(error_of(r), BasicErrorResponseType::InvalidRequest);

    // Wrong verifier.
    let (code, _) = authorize(&s, &client_id, REDIRECT).await;
    let (_, other) = PkceCodeChallenge::new_random_sha256();
    let r = client
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(other)
        .request_async(&s.http)
        .await;
    assert_invalid_grant(r);

    // Wrong redirect URI at the token endpoint.
    let (code, verifier) = authorize(&s, &client_id, REDIRECT).await;
    let elsewhere = client!(s, client_id, "http://127.0.0.1:9/other");
    let r = elsewhere
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier)
        .request_async(&s.http)
        .await;
    assert_invalid_grant(r);

    // A code works once; used again it fails and revokes what it gave.
    let (code, verifier) = authorize(&s, &client_id, REDIRECT).await;
    let verifier_again = PkceCodeVerifier::new(verifier.secret().clone());
    let token = client
        .exchange_code(AuthorizationCode::new(code.clone()))
        .set_pkce_verifier(verifier)
        .request_async(&s.http)
        .await
        .unwrap();
    let (status, _) = mcp(&s, token.access_token().secret(), "tools/list", json!({})).await;
    assert_eq!(status, 200);
    let r = client
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier_again)
        .request_async(&s.http)
        .await;
    assert_invalid_grant(r);
    let (status, _) = mcp(&s, token.access_token().secret(), "tools/list", json!({})).await;
    assert_eq!(status, 401);

    // Nothing was charged by any of this.
    assert_eq!(balance(s.app.db(), s.account).await, 50);
}

#[actix_web::test]
async fn the_authorize_step_refuses_plain_pkce_and_unregistered_redirects() {
    let s = start().await;
    let client_id = register(&s, REDIRECT).await;
    let base = format!(
        "{}/oauth/authorize?response_type=code&client_id={client_id}&state=xyz&redirect_uri={}",
        s.base,
        url::form_urlencoded::byte_serialize(REDIRECT.as_bytes()).collect::<String>()
    );
    let verifier = "a".repeat(43);
    for extra in [
        format!("&code_challenge={verifier}&code_challenge_method=plain"),
        format!("&code_challenge={verifier}"),
        String::new(),
    ] {
        let r = s.http.get(format!("{base}{extra}")).send().await.unwrap();
        assert_eq!(r.status(), 303, "{extra}");
        let q = query_of(r.headers()["location"].to_str().unwrap());
        assert_eq!(q["error"], "invalid_request", "{extra}");
        assert_eq!(q["state"], "xyz");
    }
    // An unregistered redirect URI is never redirected to.
    let r = s
        .http
        .get(format!(
            "{}/oauth/authorize?response_type=code&client_id={client_id}&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fevil&code_challenge={}&code_challenge_method=S256",
            s.base,
            "b".repeat(43)
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(r.headers().get("location").is_none());
    // Registration refuses unsafe redirect URIs.
    let r = s
        .http
        .post(format!("{}/oauth/register", s.base))
        .json(&json!({"redirect_uris": ["http://evil.example/cb"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
}

#[actix_web::test]
async fn expired_wrong_audience_and_revoked_tokens_get_401() {
    let s = start().await;
    let client_id = register(&s, REDIRECT).await;
    let client = client!(s, client_id, REDIRECT);
    let (code, verifier) = authorize(&s, &client_id, REDIRECT).await;
    let token = client
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier)
        .request_async(&s.http)
        .await
        .unwrap();
    let claims = terrace_oauth::verify_access_token(
        &s.state.oauth,
        token.access_token().secret(),
        chrono::Utc::now(),
    )
    .unwrap();

    // Expired: the same grant, signed an hour ago.
    let (expired, _) = issue_access_token(
        &s.state.oauth,
        s.account,
        claims.gid,
        &client_id,
        "terrace",
        chrono::Utc::now() - chrono::Duration::hours(1),
    )
    .unwrap();
    let (status, _) = mcp(&s, &expired, "tools/list", json!({})).await;
    assert_eq!(status, 401);

    // Another audience: the same key and grant, for another resource.
    let other = OAuthSettings::new("http://elsewhere.test", s.state.oauth.signing_key.clone());
    let (foreign, _) = issue_access_token(
        &other,
        s.account,
        claims.gid,
        &client_id,
        "terrace",
        chrono::Utc::now(),
    )
    .unwrap();
    let resp = s
        .http
        .post(format!("{}/mcp", s.base))
        .bearer_auth(&foreign)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert!(
        resp.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("invalid_token")
    );

    // Revoking the refresh token (RFC 7009) ends the grant: refresh and access both stop.
    // (The oauth2 crate refuses an http revocation URL, so the request is sent by hand.)
    let refresh: RefreshToken = token.refresh_token().unwrap().clone();
    let revoked = s
        .http
        .post(format!("{}/oauth/revoke", s.base))
        .form(&[
            ("token", refresh.secret().as_str()),
            ("token_type_hint", "refresh_token"),
            ("client_id", client_id.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    assert_invalid_grant(
        client
            .exchange_refresh_token(&refresh)
            .request_async(&s.http)
            .await,
    );
    let (status, _) = mcp(&s, token.access_token().secret(), "tools/list", json!({})).await;
    assert_eq!(status, 401);
}

#[actix_web::test]
async fn a_client_id_metadata_document_is_fetched_and_honoured() {
    let s = start().await;
    // The client's metadata document, served by a local server.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let doc_url = format!(
        "http://127.0.0.1:{}/client.json",
        listener.local_addr().unwrap().port()
    );
    let doc = json!({
        "client_id": doc_url,
        "client_name": "Metadata Agent",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
    });
    let served = doc.clone();
    let server = HttpServer::new(move || {
        let d = served.clone();
        App::new().route(
            "/client.json",
            web::get().to(move || {
                let d = d.clone();
                async move { HttpResponse::Ok().json(d) }
            }),
        )
    })
    .workers(1)
    .disable_signals()
    .listen(listener)
    .unwrap()
    .run();
    let handle = server.handle();
    actix_web::rt::spawn(server);

    let client = client!(s, doc_url, REDIRECT);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, _) = client
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge)
        .url();
    let page = s
        .http
        .get(url.as_str())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("Metadata Agent"), "{page}");
    let location = sign_in_and_consent(&s, url.as_str(), "allow").await;
    let code = query_of(&location)["code"].clone();
    let token = client
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier)
        .request_async(&s.http)
        .await
        .unwrap();
    let (status, _) = mcp(&s, token.access_token().secret(), "tools/list", json!({})).await;
    assert_eq!(status, 200);

    // A redirect URI the document does not list is refused.
    let (challenge, _) = PkceCodeChallenge::new_random_sha256();
    let (url, _) = client!(s, doc_url, "http://127.0.0.1:9/not-listed")
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge)
        .url();
    let r = s.http.get(url.as_str()).send().await.unwrap();
    assert_eq!(r.status(), 400);
    handle.stop(false).await;
}

#[actix_web::test]
async fn denying_consent_returns_access_denied_with_the_state() {
    let s = start().await;
    let client_id = register(&s, REDIRECT).await;
    let (challenge, _) = PkceCodeChallenge::new_random_sha256();
    let (url, csrf) = client!(s, client_id, REDIRECT)
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge)
        .url();
    let location = sign_in_and_consent(&s, url.as_str(), "deny").await;
    let q = query_of(&location);
    assert_eq!(q["error"], "access_denied");
    assert_eq!(q["state"], *csrf.secret());
    assert!(!q.contains_key("code"));
}

/// The registration bodies the common MCP hosts send (as they send them: their own names,
/// redirect URIs and grant types), each followed by a full sign-in with its first redirect URI.
pub fn host_registrations() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Claude (claude.ai and Claude Desktop)",
            json!({
                "client_name": "Claude",
                "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
                "scope": "terrace",
            }),
        ),
        (
            "Cursor",
            json!({
                "client_name": "Cursor",
                "redirect_uris": [
                    "cursor://anysphere.cursor-mcp/oauth/callback",
                    "cursor://anysphere.cursor-retrieval/oauth/callback",
                    "http://localhost:6798/oauth/callback",
                ],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            }),
        ),
        (
            "Visual Studio Code",
            json!({
                "client_name": "Visual Studio Code",
                "client_uri": "https://code.visualstudio.com/",
                "redirect_uris": [
                    "http://127.0.0.1/",
                    "http://127.0.0.1:33418/",
                    "https://vscode.dev/redirect",
                    "https://insiders.vscode.dev/redirect",
                ],
                "grant_types": [
                    "authorization_code",
                    "refresh_token",
                    "urn:ietf:params:oauth:grant-type:device_code",
                ],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            }),
        ),
        (
            "MCP Inspector",
            json!({
                "client_name": "MCP Inspector",
                "client_uri": "https://github.com/modelcontextprotocol/inspector",
                "redirect_uris": ["http://localhost:6274/oauth/callback"],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            }),
        ),
    ]
}

#[actix_web::test]
async fn the_common_hosts_register_and_sign_in_with_their_own_bodies() {
    let s = start().await;
    for (host, body) in host_registrations() {
        let reply = s
            .http
            .post(format!("{}/oauth/register", s.base))
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = reply.status().as_u16();
        let registered: Value = reply.json().await.unwrap();
        assert_eq!(status, 201, "{host}: {registered}");
        assert_eq!(registered["redirect_uris"], body["redirect_uris"], "{host}");
        // Only the grants offered are registered (VS Code's device code grant is left out).
        assert_eq!(
            registered["grant_types"],
            json!(["authorization_code", "refresh_token"])
        );
        let client_id = registered["client_id"].as_str().unwrap().to_string();
        // VS Code signs in on whatever loopback port is free (RFC 8252 section 7.3).
        let redirect = match body["redirect_uris"][0].as_str().unwrap() {
            "http://127.0.0.1/" => "http://127.0.0.1:53682/".to_string(),
            other => other.to_string(),
        };
        let (code, verifier) = authorize(&s, &client_id, &redirect).await;
        let token = client!(s, client_id, redirect)
            .exchange_code(AuthorizationCode::new(code))
            .set_pkce_verifier(verifier)
            .request_async(&s.http)
            .await
            .unwrap_or_else(|e| panic!("{host}: {e:?}"));
        let (status, list) = mcp(&s, token.access_token().secret(), "tools/list", json!({})).await;
        assert_eq!(status, 200, "{host}: {list}");
    }
    // The hub lists the applications by the names they registered.
    let names: Vec<Option<String>> = {
        let grants = terrace_store::oauth::grants_of(s.app.db(), s.account)
            .await
            .unwrap();
        let mut out = Vec::new();
        for g in grants {
            out.push(
                terrace_store::oauth::client(s.app.db(), &g.client_id)
                    .await
                    .unwrap()
                    .and_then(|c| c.client_name),
            );
        }
        out
    };
    assert!(names.contains(&Some("Cursor".to_string())), "{names:?}");

    // A registration whose redirect URI is refused says which one and what is allowed.
    let r = s
        .http
        .post(format!("{}/oauth/register", s.base))
        .json(&json!({"redirect_uris": ["cursor://anysphere.cursor-mcp/oauth/callback", "http://evil.example/cb"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"], "invalid_redirect_uri");
    let why = e["error_description"].as_str().unwrap();
    assert!(
        why.starts_with("http://evil.example/cb is not allowed"),
        "{why}"
    );
    assert!(why.contains("private-use scheme"), "{why}");
    // A client that does not ask for the authorization code flow is refused.
    let r = s
        .http
        .post(format!("{}/oauth/register", s.base))
        .json(&json!({"redirect_uris": [REDIRECT], "grant_types": ["client_credentials"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
}

/// Signs in (register, authorize, exchange) and returns the client id and the token response.
async fn signed_in(
    s: &Server,
) -> (
    String,
    oauth2::StandardTokenResponse<oauth2::EmptyExtraTokenFields, oauth2::basic::BasicTokenType>,
) {
    let client_id = register(s, REDIRECT).await;
    let (code, verifier) = authorize(s, &client_id, REDIRECT).await;
    let token = client!(s, client_id, REDIRECT)
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier)
        .request_async(&s.http)
        .await
        .unwrap();
    (client_id, token)
}

/// A raw refresh request: status and JSON answer.
async fn refresh_raw(
    s: &Server,
    client_id: &str,
    refresh: &str,
    extra: &[(&str, &str)],
) -> (u16, Value) {
    let mut form = vec![
        ("grant_type", "refresh_token"),
        ("client_id", client_id),
        ("refresh_token", refresh),
    ];
    form.extend_from_slice(extra);
    let r = s
        .http
        .post(format!("{}/oauth/token", s.base))
        .form(&form)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

#[actix_web::test]
async fn parallel_refreshes_get_the_same_pair_and_a_wrong_client_burns_nothing() {
    let s = start().await;
    let (client_id, token) = signed_in(&s).await;
    let refresh = token.refresh_token().unwrap().secret().clone();

    // Another client presenting the token is refused, and the token still works for its own.
    let other = register(&s, REDIRECT).await;
    let (status, e) = refresh_raw(&s, &other, &refresh, &[]).await;
    assert_eq!(
        (status, e["error"].as_str()),
        (400, Some("invalid_grant")),
        "{e}"
    );

    // Two refreshes at once (a host's two windows): both succeed with the same new pair.
    let (a, b) = tokio::join!(
        refresh_raw(&s, &client_id, &refresh, &[]),
        refresh_raw(&s, &client_id, &refresh, &[])
    );
    assert_eq!((a.0, b.0), (200, 200), "{a:?} {b:?}");
    assert_eq!(a.1["refresh_token"], b.1["refresh_token"]);
    assert_eq!(a.1["access_token"], b.1["access_token"]);
    assert_ne!(a.1["refresh_token"], json!(refresh));
    let access = a.1["access_token"].as_str().unwrap();
    let (status, _) = mcp(&s, access, "tools/list", json!({})).await;
    assert_eq!(status, 200, "the winner's token is alive");

    // The new refresh token works; after that the old one is reuse and revokes the grant.
    let next = a.1["refresh_token"].as_str().unwrap().to_string();
    let (status, third) = refresh_raw(&s, &client_id, &next, &[]).await;
    assert_eq!(status, 200, "{third}");
    let (status, e) = refresh_raw(&s, &client_id, &refresh, &[]).await;
    assert_eq!((status, e["error"].as_str()), (400, Some("invalid_grant")));
    let (status, _) = mcp(
        &s,
        third["access_token"].as_str().unwrap(),
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(status, 401, "reuse revoked the grant");

    // RFC 8707 at the token endpoint: a resource other than /mcp is invalid_target.
    let (client_id, token) = signed_in(&s).await;
    let refresh = token.refresh_token().unwrap().secret().clone();
    let (status, e) = refresh_raw(
        &s,
        &client_id,
        &refresh,
        &[("resource", "https://elsewhere.test/mcp")],
    )
    .await;
    assert_eq!(
        (status, e["error"].as_str()),
        (400, Some("invalid_target")),
        "{e}"
    );
    let resource = format!("{}/mcp", s.base);
    let (status, e) = refresh_raw(&s, &client_id, &refresh, &[("resource", &resource)]).await;
    assert_eq!(status, 200, "{e}");
}

#[actix_web::test]
async fn localhost_and_127_0_0_1_both_sign_in_without_a_public_url() {
    let mut s = start_with(true).await;
    let port = s.base.rsplit(':').next().unwrap().to_string();
    for host in ["localhost", "127.0.0.1"] {
        let base = format!("http://{host}:{port}");
        let first = s
            .http
            .post(format!("{base}/mcp"))
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
            .send()
            .await
            .unwrap();
        assert_eq!(first.status(), 401);
        let challenge = first.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            challenge.contains(&format!(
                "resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
            )),
            "{challenge}"
        );
        let prm: Value = s
            .http
            .get(format!("{base}/.well-known/oauth-protected-resource/mcp"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(prm["resource"], format!("{base}/mcp"));
        assert_eq!(prm["authorization_servers"], json!([base]));
        // The whole flow at this host: its issuer in the redirect, its audience in the token.
        s.base = base.clone();
        let (_, token) = signed_in(&s).await;
        let (status, list) = mcp(&s, token.access_token().secret(), "tools/list", json!({})).await;
        assert_eq!(status, 200, "{host}: {list}");
        let claims = terrace_oauth::verify_access_token(
            &s.state.oauth.for_host(Some(&format!("{host}:{port}"))),
            token.access_token().secret(),
            chrono::Utc::now(),
        )
        .unwrap();
        assert_eq!(claims.aud, format!("{base}/mcp"));
    }
}

/// Issue 46: a second service instance on the same store, sharing the signing key and public
/// URL (as instances behind one address are configured), accepts the first one's tokens and
/// refreshes them, and charges the same account.
#[actix_web::test]
async fn a_token_from_one_instance_works_on_another() {
    let s = start().await;
    let (client_id, token) = signed_in(&s).await;
    let access = token.access_token().secret().clone();
    // Instance B: its own pool, caches and ledger writer; the same database and OAuth settings.
    let db_b = terrace_store::Db::open(&s.app.t.location, &Default::default()).unwrap();
    let state_b = state_for(&db_b, Default::default())
        .await
        .with_oauth((*s.state.oauth).clone());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base_b = base_of(&listener);
    let handle = serve(&state_b, listener);
    let (_, before) = http_balance(&s).await;
    let (status, v) = mcp_at(
        &s.http,
        &base_b,
        &access,
        "tools/call",
        json!({"name": "address_by_postcode", "arguments": {"postcode": "xt11ab"}}),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_ne!(v["result"]["isError"], true, "{v}");
    assert_eq!(v["result"]["structuredContent"]["credits_charged"], 2);
    let (_, after) = http_balance(&s).await;
    assert_eq!(after, before - 2, "B charged the account A signed in");
    // A refresh token A issued is rotated by B, and A accepts the new access token.
    let refresh = token.refresh_token().unwrap().secret().clone();
    let r = s
        .http
        .post(format!("{base_b}/oauth/token"))
        .form(&[
            ("grant_type", "refresh_token"),
            ("client_id", client_id.as_str()),
            ("refresh_token", refresh.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let pair: Value = r.json().await.unwrap();
    let (status, v) = mcp(
        &s,
        pair["access_token"].as_str().unwrap(),
        "tools/call",
        json!({"name": "address_by_postcode", "arguments": {"postcode": "xt11ab"}}),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_ne!(v["result"]["isError"], true, "{v}");
    handle.stop(false).await;
}
