//! The grant flows over the store: client registration, the checks of an authorization request,
//! single-use authorization codes, the code exchange, refresh token rotation and revocation.
//!
//! Each flow is a plain function of the store, the settings, the caller's input and `now` (from
//! the caller's clock); it answers a typed outcome and leaves the HTTP shape (status codes,
//! redirects, pages) to the gateway. The single-use rules themselves are conditional updates in
//! `terrace_store::oauth`: a code or refresh token presented twice revokes the grant behind it.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use terrace_store::oauth::{
    self as q, ClientRow, CodeRow, NewRefresh, RefreshPresented, Rotated, TakenCode,
};
use terrace_store::{Db, StoreError};

use crate::{
    ClientMetadata, OAuthSettings, SCOPE, hash_secret, issue_access_token, issue_access_token_with,
    pkce_matches, random_token, redirect_matches, successor_refresh, valid_challenge,
    valid_redirect_uri, verify_access_token,
};

/// Client names are cut to this many characters.
const NAME_CHARS: usize = 100;
/// A registration gives at most this many redirect URIs.
const MAX_REDIRECT_URIS: usize = 10;
/// The longest redirect URI a client may register (or a metadata document may list).
pub const MAX_REDIRECT_URI_CHARS: usize = 512;
/// How long a registered client that never completed an authorization is kept.
pub const UNUSED_CLIENT_HOURS: i64 = 24;

/// The client metadata of a dynamic registration (RFC 7591), as far as Terrace reads it.
#[derive(Debug, Deserialize)]
pub struct Registration {
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    #[serde(default)]
    pub client_name: Option<String>,
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
    #[serde(default)]
    pub grant_types: Option<Vec<String>>,
    #[serde(default)]
    pub response_types: Option<Vec<String>>,
}

/// A registered public client.
#[derive(Debug, Clone, PartialEq)]
pub struct Registered {
    pub client_id: String,
    pub client_name: Option<String>,
    pub redirect_uris: Vec<String>,
    pub issued_at: DateTime<Utc>,
}

/// Why a registration was refused (RFC 7591 §3.2.2), or that the store could not record it.
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    #[error("{error}: {description}")]
    Refused {
        error: &'static str,
        description: String,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn refused(error: &'static str, description: impl Into<String>) -> RegisterError {
    RegisterError::Refused {
        error,
        description: description.into(),
    }
}

/// Registers a public client (PKCE, no client secret): 1 to 10 safe redirect URIs, the
/// `authorization_code` and `refresh_token` grants only, response type `code` only.
pub async fn register_client(
    db: &Db,
    reg: Registration,
    now: DateTime<Utc>,
) -> Result<Registered, RegisterError> {
    if reg.redirect_uris.is_empty() || reg.redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(refused(
            "invalid_redirect_uri",
            "give 1 to 10 redirect_uris",
        ));
    }
    if reg
        .redirect_uris
        .iter()
        .any(|u| u.chars().count() > MAX_REDIRECT_URI_CHARS)
    {
        return Err(refused(
            "invalid_redirect_uri",
            format!("a redirect URI may have at most {MAX_REDIRECT_URI_CHARS} characters"),
        ));
    }
    let lists = [&reg.grant_types, &reg.response_types];
    if lists
        .iter()
        .any(|l| l.as_ref().is_some_and(|l| l.len() > 4))
    {
        return Err(refused(
            "invalid_client_metadata",
            "grant_types and response_types may list at most 4 values",
        ));
    }
    if let Some(bad) = reg.redirect_uris.iter().find(|u| !valid_redirect_uri(u)) {
        return Err(refused(
            "invalid_redirect_uri",
            format!(
                "{bad} is not allowed: use https, http on a loopback host (localhost, 127.0.0.1 or [::1], any port), or a private-use scheme such as com.example.app:/callback or cursor://host/path; no fragment"
            ),
        ));
    }
    match reg.token_endpoint_auth_method.as_deref() {
        None | Some("none") => {}
        Some(other) => {
            return Err(refused(
                "invalid_client_metadata",
                format!(
                    "token_endpoint_auth_method {other} is not supported: clients are public and use PKCE (\"none\")"
                ),
            ));
        }
    }
    // Grant and response types this server does not offer (VS Code also asks for the device
    // code grant) are left out of the registration rather than refused (RFC 7591 section 3.2.1
    // lets the server register different values); the answer lists what was registered. A
    // client that does not ask for the authorization code flow at all is refused.
    let grants_ok = reg
        .grant_types
        .as_ref()
        .is_none_or(|g| g.iter().any(|t| t == "authorization_code"));
    let responses_ok = reg
        .response_types
        .as_ref()
        .is_none_or(|r| r.iter().any(|t| t == "code"));
    if !grants_ok || !responses_ok {
        return Err(refused(
            "invalid_client_metadata",
            "the authorization_code grant (response type code) is required; it and refresh_token are the grants offered",
        ));
    }
    let client_name = reg
        .client_name
        .map(|n| n.trim().chars().take(NAME_CHARS).collect::<String>())
        .filter(|n| !n.is_empty());
    let client_id = format!("tc_{}", &hash_secret(&random_token())[..32]);
    let row = ClientRow {
        client_id: client_id.clone(),
        client_name: client_name.clone(),
        redirect_uris: serde_json::to_string(&reg.redirect_uris).unwrap_or_default(),
        metadata_document: false,
        created_at: now.naive_utc(),
        updated_at: now.naive_utc(),
    };
    q::upsert_client(db, &row).await?;
    // Clients registered long ago that never completed an authorization are dropped.
    q::delete_unused_clients(
        db,
        (now - chrono::Duration::hours(UNUSED_CLIENT_HOURS)).naive_utc(),
    )
    .await?;
    Ok(Registered {
        client_id,
        client_name,
        redirect_uris: reg.redirect_uris,
        issued_at: now,
    })
}

/// Records the client a fetched (and checked) client ID metadata document describes.
pub async fn accept_metadata_client(
    db: &Db,
    client_id: &str,
    doc: ClientMetadata,
    now: DateTime<Utc>,
) -> Result<ClientRow, StoreError> {
    let now = now.naive_utc();
    let row = ClientRow {
        client_id: client_id.to_string(),
        client_name: doc
            .client_name
            .map(|n| n.chars().take(NAME_CHARS).collect()),
        redirect_uris: serde_json::to_string(&doc.redirect_uris).unwrap_or_default(),
        metadata_document: true,
        created_at: now,
        updated_at: now,
    };
    q::upsert_client(db, &row).await?;
    Ok(row)
}

/// The redirect URIs a client registered.
pub fn redirect_uris(client: &ClientRow) -> Vec<String> {
    serde_json::from_str(&client.redirect_uris).unwrap_or_default()
}

/// The parameters of an authorization request (query on GET, form fields on POST).
#[derive(Debug, Default, Clone, Deserialize)]
pub struct AuthzParams {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    pub state: Option<String>,
    pub scope: Option<String>,
    pub resource: Option<String>,
}

/// A checked authorization request.
#[derive(Debug, Clone)]
pub struct ValidAuthz {
    pub client: ClientRow,
    pub redirect_uri: String,
    pub challenge: String,
    pub state: Option<String>,
}

/// Why an authorization request fails: shown on a page when the client or redirect URI cannot be
/// trusted (never redirect there), otherwise sent back to the client's redirect URI.
#[derive(Debug)]
pub enum AuthzError {
    Page(String),
    Redirect {
        redirect_uri: String,
        error: &'static str,
        description: String,
        state: Option<String>,
    },
    Unavailable(StoreError),
}

/// Checks an authorization request of a known client: the redirect URI one it registered (exact
/// string comparison: no prefix, no normalisation), response type `code`, PKCE with S256, the
/// one scope, and this server's MCP endpoint as the resource.
pub fn check_authorization(
    s: &OAuthSettings,
    client: ClientRow,
    p: &AuthzParams,
) -> Result<ValidAuthz, AuthzError> {
    let Some(redirect_uri) = p.redirect_uri.clone() else {
        return Err(AuthzError::Page("The request has no redirect_uri.".into()));
    };
    if !redirect_uris(&client)
        .iter()
        .any(|r| redirect_matches(r, &redirect_uri))
    {
        return Err(AuthzError::Page(
            "The redirect_uri is not one the client registered.".into(),
        ));
    }
    let fail = |error: &'static str, description: &str| AuthzError::Redirect {
        redirect_uri: redirect_uri.clone(),
        error,
        description: description.to_string(),
        state: p.state.clone(),
    };
    if p.response_type.as_deref() != Some("code") {
        return Err(fail(
            "unsupported_response_type",
            "only response_type=code is supported",
        ));
    }
    let Some(challenge) = p.code_challenge.clone() else {
        return Err(fail(
            "invalid_request",
            "PKCE is required: send code_challenge with code_challenge_method=S256",
        ));
    };
    if p.code_challenge_method.as_deref() != Some("S256") {
        return Err(fail(
            "invalid_request",
            "only code_challenge_method=S256 is supported (plain is refused)",
        ));
    }
    if !valid_challenge(&challenge) {
        return Err(fail(
            "invalid_request",
            "code_challenge must be the base64url SHA-256 of the verifier (43 characters)",
        ));
    }
    if let Some(scope) = &p.scope
        && !scope.split_whitespace().all(|sc| sc == SCOPE)
    {
        return Err(fail("invalid_scope", "the only scope is `terrace`"));
    }
    if let Some(resource) = &p.resource
        && *resource != s.resource()
    {
        return Err(fail(
            "invalid_target",
            "the resource must be this server's MCP endpoint",
        ));
    }
    Ok(ValidAuthz {
        client,
        redirect_uri,
        challenge,
        state: p.state.clone(),
    })
}

/// Issues a single-use authorization code for the account's consent to a checked request; the
/// store keeps only its hash, and it lives `code_ttl`.
pub async fn issue_code(
    db: &Db,
    s: &OAuthSettings,
    account_id: i64,
    valid: &ValidAuthz,
    now: DateTime<Utc>,
) -> Result<String, StoreError> {
    let code = random_token();
    let row = CodeRow {
        code_hash: hash_secret(&code),
        client_id: valid.client.client_id.clone(),
        account_id,
        redirect_uri: valid.redirect_uri.clone(),
        code_challenge: valid.challenge.clone(),
        resource: s.resource(),
        scope: SCOPE.to_string(),
        expires_at: (now + s.code_ttl).naive_utc(),
        used_at: None,
        grant_id: None,
        created_at: now.naive_utc(),
    };
    q::insert_code(db, &row).await?;
    Ok(code)
}

/// What the token endpoint hands out.
#[derive(Debug, Clone, PartialEq)]
pub struct Tokens {
    pub access_token: String,
    /// The access token's lifetime in seconds.
    pub expires_in: i64,
    pub refresh_token: String,
}

/// Why the token endpoint refuses (RFC 6749 §5.2), or cannot answer.
#[derive(Debug, thiserror::Error)]
pub enum GrantError {
    #[error("{error}: {description}")]
    Refused {
        error: &'static str,
        description: &'static str,
    },
    #[error("cannot sign an access token: {0}")]
    Signing(jsonwebtoken::errors::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn refuse(error: &'static str, description: &'static str) -> GrantError {
    GrantError::Refused { error, description }
}

/// A fresh refresh token and the row that records its hash.
fn new_refresh(s: &OAuthSettings, now: DateTime<Utc>) -> (String, String, chrono::NaiveDateTime) {
    let refresh = random_token();
    let hash = hash_secret(&refresh);
    (refresh, hash, (now + s.refresh_ttl).naive_utc())
}

fn tokens(
    s: &OAuthSettings,
    account_id: i64,
    grant_id: i64,
    client_id: &str,
    refresh_token: String,
    now: DateTime<Utc>,
) -> Result<Tokens, GrantError> {
    let (access_token, expires_in) =
        issue_access_token(s, account_id, grant_id, client_id, SCOPE, now)
            .map_err(GrantError::Signing)?;
    Ok(Tokens {
        access_token,
        expires_in,
        refresh_token,
    })
}

/// The authorization code grant: the code is taken once (a code presented twice revokes what
/// it was exchanged for, RFC 9700 §4.1), must be unexpired, issued to this client for this
/// redirect URI, and answered by the PKCE verifier; the exchange creates the grant and its
/// first refresh token.
pub async fn redeem_code(
    db: &Db,
    s: &OAuthSettings,
    client_id: &str,
    code: Option<&str>,
    redirect_uri: Option<&str>,
    code_verifier: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Tokens, GrantError> {
    let Some(code) = code else {
        return Err(refuse("invalid_request", "code is required"));
    };
    let row = match q::take_code(db, &hash_secret(code), now.naive_utc()).await? {
        TakenCode::Fresh(row) => row,
        TakenCode::Reused(row) => {
            if let Some(g) = row.grant_id {
                // Best effort: the refusal stands whether or not the revocation is recorded.
                let _ = q::revoke_grant(db, g, now.naive_utc()).await;
            }
            return Err(refuse(
                "invalid_grant",
                "the authorization code was already used",
            ));
        }
        TakenCode::Unknown => return Err(refuse("invalid_grant", "unknown authorization code")),
    };
    if row.expires_at <= now.naive_utc() {
        return Err(refuse(
            "invalid_grant",
            "the authorization code has expired",
        ));
    }
    if row.client_id != client_id {
        return Err(refuse(
            "invalid_grant",
            "the code was issued to another client",
        ));
    }
    if redirect_uri != Some(row.redirect_uri.as_str()) {
        return Err(refuse(
            "invalid_grant",
            "redirect_uri differs from the authorization request's",
        ));
    }
    let Some(verifier) = code_verifier else {
        return Err(refuse(
            "invalid_request",
            "code_verifier is required (PKCE)",
        ));
    };
    if !pkce_matches(verifier, &row.code_challenge) {
        return Err(refuse(
            "invalid_grant",
            "code_verifier does not match the code_challenge",
        ));
    }
    let (refresh, refresh_hash, expires_at) = new_refresh(s, now);
    let new = NewRefresh {
        token_hash: &refresh_hash,
        expires_at,
    };
    let grant_id = q::create_grant(db, &row, &new, now.naive_utc()).await?;
    tokens(s, row.account_id, grant_id, client_id, refresh, now)
}

/// RFC 8707 at the token endpoint: a `resource`, when sent with either grant, must be this
/// server's MCP endpoint (the only resource its tokens are for).
pub fn check_resource(s: &OAuthSettings, resource: Option<&str>) -> Result<(), GrantError> {
    match resource {
        Some(r) if r.trim_end_matches('/') != s.resource() => Err(refuse(
            "invalid_target",
            "the resource must be this server's MCP endpoint (the /mcp URL)",
        )),
        Some(_) | None => Ok(()),
    }
}

/// The refresh token grant. The token is rotated: the old one dies and its successor (derived
/// from it with the signing key) is handed out. Presented again within `refresh_grace` while the
/// successor is unused (two parallel refreshes of one client), it answers the same pair again;
/// later, or after the successor was used, it is reuse and revokes the grant. A token presented
/// by another client is refused and stays usable by its own.
pub async fn refresh(
    db: &Db,
    s: &OAuthSettings,
    client_id: &str,
    refresh_token: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Tokens, GrantError> {
    let Some(old) = refresh_token else {
        return Err(refuse("invalid_request", "refresh_token is required"));
    };
    let refresh = successor_refresh(s, old);
    let refresh_hash = hash_secret(&refresh);
    let presented = RefreshPresented {
        client_id,
        old_hash: &hash_secret(old),
        new: NewRefresh {
            token_hash: &refresh_hash,
            expires_at: (now + s.refresh_ttl).naive_utc(),
        },
        grace_since: (now - s.refresh_grace).naive_utc(),
    };
    // The access token of a rotation is signed with a jti derived from the new refresh token and
    // the rotation's time, so a replay within the grace window signs the very same token.
    let jti = hash_secret(&refresh)[..32].to_string();
    match q::rotate_refresh(db, &presented, now.naive_utc()).await? {
        Rotated::Rotated(grant) => {
            let rotated_at = DateTime::from_timestamp(now.timestamp(), 0).unwrap_or(now);
            tokens_with(s, &grant, refresh, (rotated_at, now), jti)
        }
        Rotated::Replayed(grant, at) => tokens_with(s, &grant, refresh, (at.and_utc(), now), jti),
        Rotated::WrongClient => Err(refuse(
            "invalid_grant",
            "the refresh token was issued to another client",
        )),
        Rotated::Reused => Err(refuse(
            "invalid_grant",
            "the refresh token was already used; the grant is revoked",
        )),
        Rotated::Dead => Err(refuse(
            "invalid_grant",
            "the refresh token has expired or was revoked",
        )),
        Rotated::Unknown => Err(refuse("invalid_grant", "unknown refresh token")),
    }
}

/// The pair a rotation hands out, signed as of the rotation `at` with `jti` (see [`refresh`]);
/// `expires_in` counts from `now`.
fn tokens_with(
    s: &OAuthSettings,
    grant: &q::GrantRow,
    refresh_token: String,
    (at, now): (DateTime<Utc>, DateTime<Utc>),
    jti: String,
) -> Result<Tokens, GrantError> {
    let (access_token, expires_in) = issue_access_token_with(
        s,
        grant.account_id,
        grant.id,
        &grant.client_id,
        SCOPE,
        at,
        jti,
    )
    .map_err(GrantError::Signing)?;
    let left = (at + s.access_ttl - now).num_seconds();
    Ok(Tokens {
        access_token,
        expires_in: left.clamp(0, expires_in),
        refresh_token,
    })
}

/// RFC 7009: revoking a refresh token or an access token revokes the grant behind it (its
/// refresh tokens and access tokens). An unknown token revokes nothing and is no error.
pub async fn revoke(
    db: &Db,
    s: &OAuthSettings,
    token: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let grant = if token.contains('.') {
        // An access token, expired or not: its signature must verify.
        let earlier = now - s.access_ttl;
        verify_access_token(s, token, earlier).ok().map(|c| c.gid)
    } else {
        q::grant_of_refresh(db, &hash_secret(token)).await?
    };
    if let Some(g) = grant {
        q::revoke_grant(db, g, now.naive_utc()).await?;
    }
    Ok(())
}

/// The account holder signs an application out (the hub): the grant is revoked only when it is
/// one of the account's own. Answers whether it was.
pub async fn withdraw_grant(
    db: &Db,
    account_id: i64,
    grant_id: i64,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let grants = q::grants_of(db, account_id).await?;
    if !grants.iter().any(|g| g.id == grant_id) {
        return Ok(false);
    }
    q::revoke_grant(db, grant_id, now.naive_utc()).await?;
    Ok(true)
}

/// Why a bearer access token does not admit its holder to the MCP resource.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error(transparent)]
    Token(#[from] crate::TokenError),
    /// The subject is not an account id.
    #[error("the token's subject is not an account")]
    Subject,
    /// The grant was revoked, or is another account's.
    #[error("the grant behind the token is revoked")]
    Revoked,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The account and grant an access token speaks for: its signature, issuer, audience and
/// expiry verify against `now`, and its grant is live and the account's own (revoking a grant
/// stops its access tokens at once).
pub async fn admit(
    db: &Db,
    s: &OAuthSettings,
    token: &str,
    now: DateTime<Utc>,
) -> Result<(i64, i64), AccessError> {
    let claims = verify_access_token(s, token, now)?;
    let account_id: i64 = claims.sub.parse().map_err(|_| AccessError::Subject)?;
    match q::live_grant(db, claims.gid).await? {
        Some((grant, _)) if grant.account_id == account_id => Ok((account_id, grant.id)),
        Some(_) | None => Err(AccessError::Revoked),
    }
}
