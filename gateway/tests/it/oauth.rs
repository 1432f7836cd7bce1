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
    let app = world().await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let mut settings = OAuthSettings::new(&base, b"test-signing-key-of-thirty-two-bytes".to_vec());
    settings.insecure_client_ids = true;
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
    let s = state.clone();
    let server = HttpServer::new(move || App::new().configure(app_config(s.clone())))
        .workers(1)
        .disable_signals()
        .listen(listener)
        .unwrap()
        .run();
    let handle = server.handle();
    actix_web::rt::spawn(server);
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
    let mut req = s
        .http
        .post(format!("{}/mcp", s.base))
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

    // The refresh token rotates; the old one, presented again, revokes the grant.
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
    let reused = client
        .exchange_refresh_token(&old)
        .request_async(&s.http)
        .await;
    assert_invalid_grant(reused);
    let after_reuse = client
        .exchange_refresh_token(&new_refresh)
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
