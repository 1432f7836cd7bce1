//! The OAuth 2.1 domain of the MCP surface: the gateway is both the authorization server and the
//! resource server of `/mcp`, and this crate holds its rules, with no HTTP in them.
//!
//! `lib.rs` holds the protocol rules (settings, PKCE S256, HS256 JWT access tokens, argon2id
//! passwords, secret hashing, redirect URI and client ID metadata document rules); `flows.rs`
//! the grant flows over the store (client registration, the authorization request's checks,
//! single-use codes, the code exchange, refresh token rotation, revocation). The gateway keeps
//! the HTTP routes, the sign-in and consent pages and the outbound fetch of metadata documents.
//!
//! Access tokens are HS256 JWTs signed with the configured key: the only party that verifies
//! them is the gateway itself (AS = RS), so a shared secret is enough, and every instance behind
//! a load balancer is given the same `TERRACE_OAUTH_SIGNING_KEY`.
//!
//! Architecture Invariant: secrets (codes, refresh tokens, session ids) are stored only as their
//! SHA-256; a code is redeemed at most once and a refresh token rotated at most once, and a
//! second presentation revokes the grant behind it; time is a parameter (`now` from the caller's
//! clock), never read from the wall clock. No actix-web, rmcp or diesel here.

pub mod flows;

pub use flows::{
    AccessError, AuthzError, AuthzParams, GrantError, RegisterError, Registered, Registration,
    Tokens, ValidAuthz, accept_metadata_client, admit, check_authorization, check_resource,
    issue_code, redeem_code, refresh, register_client, revoke, withdraw_grant,
};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Duration, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The scope a token carries: call the tools of the account, spending its credits.
pub const SCOPE: &str = "terrace";

/// OAuth settings of a running gateway.
#[derive(Clone)]
pub struct OAuthSettings {
    /// The public base URL, without a trailing slash (`https://api.example.com`).
    pub public_url: String,
    /// The HS256 signing key.
    pub signing_key: Vec<u8>,
    pub access_ttl: Duration,
    pub code_ttl: Duration,
    pub refresh_ttl: Duration,
    pub session_ttl: Duration,
    /// Accept `http://` client ID metadata document URLs on loopback hosts (tests and local
    /// development only; `TERRACE_OAUTH_INSECURE_CLIENT_IDS=1`).
    pub insecure_client_ids: bool,
    /// No public URL was configured: a request to a loopback host (`localhost`, `127.0.0.1`,
    /// `[::1]`, any port) is answered with that host as the issuer and resource base, so a
    /// client that typed `localhost` sees `http://localhost:PORT/mcp` (see [`Self::for_host`]).
    pub derive_from_host: bool,
    /// How long a rotated refresh token, presented again, answers with the same new pair
    /// instead of counting as reuse (two parallel refreshes of one client).
    pub refresh_grace: Duration,
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("public_url", &self.public_url)
            .field("signing_key", &"<redacted>")
            .finish_non_exhaustive()
    }
}

impl OAuthSettings {
    pub fn new(public_url: &str, signing_key: Vec<u8>) -> OAuthSettings {
        OAuthSettings {
            public_url: public_url.trim_end_matches('/').to_string(),
            signing_key,
            access_ttl: Duration::minutes(15),
            code_ttl: Duration::seconds(60),
            refresh_ttl: Duration::days(30),
            session_ttl: Duration::hours(12),
            insecure_client_ids: false,
            derive_from_host: false,
            refresh_grace: Duration::seconds(30),
        }
    }

    /// The settings a request to `host` (its `Host` header) is answered with: these, or, when
    /// no public URL was configured and the host is loopback, the same with `http://HOST` as the
    /// public URL. Any other host gets the configured (or default) public URL.
    pub fn for_host(&self, host: Option<&str>) -> std::borrow::Cow<'_, OAuthSettings> {
        match host.filter(|h| self.derive_from_host && is_loopback_authority(h)) {
            Some(h) => {
                let mut s = self.clone();
                s.public_url = format!("http://{}", h.to_ascii_lowercase());
                std::borrow::Cow::Owned(s)
            }
            None => std::borrow::Cow::Borrowed(self),
        }
    }

    /// Whether a browser `Origin` may call `/mcp` (the MCP transport's DNS-rebinding rule): a
    /// loopback origin, or the origin of the public URL.
    pub fn allowed_origin(&self, origin: &str) -> bool {
        let Ok(u) = url::Url::parse(origin) else {
            return false;
        };
        if !matches!(u.scheme(), "http" | "https") {
            return false;
        }
        if u.host_str().is_some_and(is_loopback_host) {
            return true;
        }
        url::Url::parse(&self.public_url).is_ok_and(|p| p.origin() == u.origin())
    }

    /// The issuer identifier (RFC 8414): the public base URL.
    pub fn issuer(&self) -> String {
        self.public_url.clone()
    }

    /// The protected resource (RFC 8707 / RFC 9728): the MCP endpoint.
    pub fn resource(&self) -> String {
        format!("{}/mcp", self.public_url)
    }

    /// Where the protected-resource metadata of `/mcp` is served.
    pub fn resource_metadata_url(&self) -> String {
        format!(
            "{}/.well-known/oauth-protected-resource/mcp",
            self.public_url
        )
    }

    /// Cookies are `Secure` when the service is served over https.
    pub fn secure_cookies(&self) -> bool {
        self.public_url.starts_with("https://")
    }

    /// The host names the MCP transport accepts (`Host` header): the public host and loopback.
    pub fn allowed_hosts(&self) -> Vec<String> {
        let mut hosts = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
        if let Ok(u) = url::Url::parse(&self.public_url)
            && let Some(h) = u.host_str()
        {
            hosts.push(h.to_string());
            if let Some(p) = u.port() {
                hosts.push(format!("{h}:{p}"));
            }
        }
        hosts
    }
}

/// Whether a host name (as `url` writes it: IPv6 in brackets) is loopback.
pub fn is_loopback_host(host: &str) -> bool {
    matches!(
        host.to_ascii_lowercase().as_str(),
        "localhost" | "127.0.0.1" | "[::1]" | "::1"
    )
}

/// Whether a `Host` header value (`host` or `host:port`) names a loopback host.
pub fn is_loopback_authority(authority: &str) -> bool {
    let host = match authority.rsplit_once(':') {
        Some((h, port)) if !h.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => authority,
    };
    is_loopback_host(host)
}

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut k = [0u8; BLOCK];
    if key.len() > BLOCK {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(k.map(|b| b ^ 0x36));
    inner.update(message);
    let mut outer = Sha256::new();
    outer.update(k.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// The refresh token that replaces `old` when it is rotated: derived from it with the signing
/// key, so a rotated token presented again within the grace window can be answered with the
/// same new token although the store keeps only hashes.
pub fn successor_refresh(s: &OAuthSettings, old: &str) -> String {
    URL_SAFE_NO_PAD.encode(hmac_sha256(
        &s.signing_key,
        format!("terrace refresh successor\n{old}").as_bytes(),
    ))
}

/// A fresh random secret: 32 bytes, URL-safe base64 (43 characters).
pub fn random_token() -> String {
    let mut b = [0u8; 32];
    rand::rng().fill_bytes(&mut b);
    URL_SAFE_NO_PAD.encode(b)
}

/// How secrets are stored: the hex SHA-256 of the secret.
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// The S256 code challenge of a PKCE verifier (RFC 7636 §4.2).
pub fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// A PKCE verifier is 43-128 characters of `[A-Za-z0-9-._~]` (RFC 7636 §4.1).
pub fn valid_verifier(v: &str) -> bool {
    (43..=128).contains(&v.len())
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// An S256 challenge is the 43-character base64url encoding of a SHA-256 digest.
pub fn valid_challenge(c: &str) -> bool {
    c.len() == 43
        && c.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether `verifier` answers `challenge` (compared in constant time).
pub fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    valid_verifier(verifier) && constant_eq(s256(verifier).as_bytes(), challenge.as_bytes())
}

fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The claims of an access token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessClaims {
    pub iss: String,
    /// The account id, as a string.
    pub sub: String,
    /// The MCP resource (RFC 8707).
    pub aud: String,
    pub exp: i64,
    pub iat: i64,
    pub client_id: String,
    pub scope: String,
    /// The grant the token was issued under; revoking it stops the token at once.
    pub gid: i64,
    pub jti: String,
}

/// Why an access token was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenError {
    #[error("the token is malformed or its signature does not verify")]
    Invalid,
    #[error("the token is for another audience or issuer")]
    WrongAudience,
    #[error("the token has expired")]
    Expired,
}

/// Signs an access token for `account_id` under grant `grant_id`; returns it and its lifetime.
pub fn issue_access_token(
    s: &OAuthSettings,
    account_id: i64,
    grant_id: i64,
    client_id: &str,
    scope: &str,
    now: DateTime<Utc>,
) -> Result<(String, i64), jsonwebtoken::errors::Error> {
    let jti = uuid::Uuid::new_v4().to_string();
    issue_access_token_with(s, account_id, grant_id, client_id, scope, now, jti)
}

/// [`issue_access_token`] with a given `jti`: the same inputs sign the same token (HS256 is
/// deterministic), which is how a refresh replayed within the grace window gets the same pair.
pub fn issue_access_token_with(
    s: &OAuthSettings,
    account_id: i64,
    grant_id: i64,
    client_id: &str,
    scope: &str,
    now: DateTime<Utc>,
    jti: String,
) -> Result<(String, i64), jsonwebtoken::errors::Error> {
    let claims = AccessClaims {
        iss: s.issuer(),
        sub: account_id.to_string(),
        aud: s.resource(),
        exp: (now + s.access_ttl).timestamp(),
        iat: now.timestamp(),
        client_id: client_id.to_string(),
        scope: scope.to_string(),
        gid: grant_id,
        jti,
    };
    let token = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(&s.signing_key),
    )?;
    Ok((token, s.access_ttl.num_seconds()))
}

/// Verifies an access token's signature, issuer, audience and expiry (against `now`, from the
/// injected clock).
pub fn verify_access_token(
    s: &OAuthSettings,
    token: &str,
    now: DateTime<Utc>,
) -> Result<AccessClaims, TokenError> {
    let mut v = Validation::new(Algorithm::HS256);
    v.validate_exp = false;
    v.validate_aud = false;
    v.leeway = 0;
    v.set_required_spec_claims(&["exp", "aud", "iss", "sub"]);
    let data =
        jsonwebtoken::decode::<AccessClaims>(token, &DecodingKey::from_secret(&s.signing_key), &v)
            .map_err(|_| TokenError::Invalid)?;
    let c = data.claims;
    if c.aud != s.resource() || c.iss != s.issuer() {
        return Err(TokenError::WrongAudience);
    }
    if c.exp <= now.timestamp() {
        return Err(TokenError::Expired);
    }
    Ok(c)
}

/// Hashes a password with argon2id (PHC string, random 16-byte salt).
pub fn hash_password(password: &str) -> Result<String, String> {
    use argon2::PasswordHasher;
    let mut salt = [0u8; 16];
    rand::rng().fill_bytes(&mut salt);
    argon2::Argon2::default()
        .hash_password_with_salt(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

/// Whether `password` matches the stored PHC hash.
pub fn verify_password(password: &str, phc: &str) -> bool {
    use argon2::PasswordVerifier;
    argon2::Argon2::default()
        .verify_password(password.as_bytes(), phc)
        .is_ok()
}

/// Schemes a redirect URI may never use: they run code, read local files, or are not a place
/// to send an authorization code.
const REFUSED_SCHEMES: &[&str] = &[
    "javascript",
    "data",
    "file",
    "vbscript",
    "about",
    "blob",
    "filesystem",
    "ftp",
    "ws",
    "wss",
    "mailto",
    "tel",
    "sms",
];

/// A redirect URI a client may register (RFC 8252 for native apps): absolute, no fragment, and
/// https; or http on a loopback host, any port or none (section 7.3: the port is chosen at
/// authorization time); or a private-use scheme (section 7.1: `com.example.app:/cb`,
/// `cursor://anysphere.cursor-mcp/oauth/callback`, `vscode://...`), any scheme but the web's own
/// and the ones in [`REFUSED_SCHEMES`].
pub fn valid_redirect_uri(uri: &str) -> bool {
    let Ok(u) = url::Url::parse(uri) else {
        return false;
    };
    if u.fragment().is_some() {
        return false;
    }
    match u.scheme() {
        "https" => u.host_str().is_some(),
        "http" => u.host_str().is_some_and(is_loopback_host),
        other => !REFUSED_SCHEMES.contains(&other),
    }
}

/// Whether the `redirect_uri` of an authorization request is the `registered` one: the same
/// string, or, for an http loopback URI, the same but for the port (RFC 8252 section 7.3: a
/// native app listens on whatever port is free when the user signs in).
pub fn redirect_matches(registered: &str, presented: &str) -> bool {
    if registered == presented {
        return true;
    }
    let (Ok(r), Ok(p)) = (url::Url::parse(registered), url::Url::parse(presented)) else {
        return false;
    };
    r.scheme() == "http"
        && p.scheme() == "http"
        && r.host_str().is_some_and(is_loopback_host)
        && r.host_str() == p.host_str()
        && r.path() == p.path()
        && r.query() == p.query()
        && r.username() == p.username()
        && r.password() == p.password()
        && p.fragment().is_none()
}

/// Whether a client id is the URL of a client ID metadata document.
pub fn is_metadata_url(client_id: &str) -> bool {
    client_id.starts_with("https://") || client_id.starts_with("http://")
}

/// Whether a metadata document URL may be fetched: https with a path, or (in insecure mode)
/// http on loopback.
pub fn fetchable_metadata_url(s: &OAuthSettings, client_id: &str) -> bool {
    let Ok(u) = url::Url::parse(client_id) else {
        return false;
    };
    if u.fragment().is_some() || u.username() != "" || u.password().is_some() {
        return false;
    }
    match u.scheme() {
        "https" => u.host_str().is_some() && u.path() != "/",
        "http" => s.insecure_client_ids && matches!(u.host_str(), Some("localhost" | "127.0.0.1")),
        _ => false,
    }
}

/// The parts of a client ID metadata document Terrace uses.
#[derive(Debug, Clone, Deserialize)]
pub struct ClientMetadata {
    pub client_id: String,
    #[serde(default)]
    pub client_name: Option<String>,
    pub redirect_uris: Vec<String>,
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
}

/// Checks a fetched metadata document against the URL it came from.
pub fn check_metadata(url: &str, doc: &ClientMetadata) -> Result<(), String> {
    if doc.client_id != url {
        return Err("the document's client_id is not the URL it was fetched from".into());
    }
    if doc.redirect_uris.is_empty()
        || doc.redirect_uris.len() > 10
        || doc
            .redirect_uris
            .iter()
            .any(|u| u.chars().count() > flows::MAX_REDIRECT_URI_CHARS || !valid_redirect_uri(u))
    {
        return Err("the document's redirect_uris are missing or invalid".into());
    }
    match doc.token_endpoint_auth_method.as_deref() {
        None | Some("none") => Ok(()),
        Some(other) => Err(format!(
            "token_endpoint_auth_method {other} is not supported (public clients only)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> OAuthSettings {
        OAuthSettings::new(
            "https://api.example.test/",
            b"0123456789abcdef0123456789abcdef".to_vec(),
        )
    }

    #[test]
    fn pkce_s256_matches_rfc7636_appendix_b() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(
            s256(verifier),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert!(pkce_matches(
            verifier,
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        ));
        assert!(!pkce_matches(
            "short",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        ));
    }

    #[test]
    fn tokens_verify_only_for_their_audience_and_lifetime() {
        let s = settings();
        let now = Utc::now();
        let (t, ttl) = issue_access_token(&s, 7, 3, "c", SCOPE, now).unwrap();
        assert_eq!(ttl, 900);
        let c = verify_access_token(&s, &t, now).unwrap();
        assert_eq!((c.sub.as_str(), c.gid), ("7", 3));
        assert_eq!(c.aud, "https://api.example.test/mcp");
        assert_eq!(
            verify_access_token(&s, &t, now + Duration::minutes(16)),
            Err(TokenError::Expired)
        );
        let other = OAuthSettings::new("https://other.test", s.signing_key.clone());
        assert_eq!(
            verify_access_token(&other, &t, now),
            Err(TokenError::WrongAudience)
        );
        let wrong_key = OAuthSettings::new("https://api.example.test", b"x".repeat(32));
        assert_eq!(
            verify_access_token(&wrong_key, &t, now),
            Err(TokenError::Invalid)
        );
    }

    #[test]
    fn passwords_hash_and_verify() {
        let h = hash_password("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &h));
        assert!(!verify_password("wrong", &h));
    }

    #[test]
    fn redirect_uris_must_be_exact_safe_urls() {
        assert!(valid_redirect_uri("https://app.example/cb"));
        assert!(valid_redirect_uri("http://127.0.0.1:3000/cb"));
        assert!(!valid_redirect_uri("http://app.example/cb"));
        assert!(!valid_redirect_uri("https://app.example/cb#frag"));
        assert!(!valid_redirect_uri("javascript:alert(1)"));
    }

    #[test]
    fn native_app_redirects_follow_rfc_8252() {
        // Private-use schemes, with or without a dot (Cursor's has none).
        assert!(valid_redirect_uri(
            "cursor://anysphere.cursor-mcp/oauth/callback"
        ));
        assert!(valid_redirect_uri("com.example.app:/oauth2redirect"));
        assert!(valid_redirect_uri("vscode://vscode.mcp/callback"));
        for bad in [
            "data:text/html,x",
            "file:///etc/passwd",
            "ws://127.0.0.1/cb",
            "http://localhost.example/cb",
            "cursor://x/cb#f",
        ] {
            assert!(!valid_redirect_uri(bad), "{bad}");
        }
        // Loopback, any port; the port may differ at authorization time, nothing else may.
        assert!(valid_redirect_uri("http://127.0.0.1/"));
        assert!(valid_redirect_uri("http://[::1]:8123/cb"));
        assert!(valid_redirect_uri("http://localhost:6274/oauth/callback"));
        assert!(redirect_matches(
            "http://127.0.0.1/",
            "http://127.0.0.1:53682/"
        ));
        assert!(redirect_matches(
            "http://localhost:6274/oauth/callback",
            "http://localhost:9999/oauth/callback"
        ));
        assert!(!redirect_matches(
            "http://127.0.0.1:1/cb",
            "http://localhost:1/cb"
        ));
        assert!(!redirect_matches(
            "http://127.0.0.1/cb",
            "http://127.0.0.1/cb2"
        ));
        assert!(!redirect_matches(
            "https://app.example/cb",
            "https://app.example:444/cb"
        ));
    }

    #[test]
    fn settings_follow_a_loopback_host_only_without_a_public_url() {
        let mut s = settings();
        assert_eq!(
            s.for_host(Some("localhost:8080")).resource(),
            "https://api.example.test/mcp"
        );
        s.derive_from_host = true;
        assert_eq!(
            s.for_host(Some("localhost:8080")).resource(),
            "http://localhost:8080/mcp"
        );
        assert_eq!(
            s.for_host(Some("127.0.0.1:9")).issuer(),
            "http://127.0.0.1:9"
        );
        assert_eq!(s.for_host(Some("[::1]:9")).issuer(), "http://[::1]:9");
        assert_eq!(
            s.for_host(Some("evil.example:8080")).issuer(),
            "https://api.example.test"
        );
        assert!(s.allowed_origin("http://localhost:6274"));
        assert!(s.allowed_origin("https://api.example.test"));
        assert!(!s.allowed_origin("https://evil.example"));
        assert!(!s.allowed_origin("null"));
    }

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        assert_eq!(
            hex::encode(hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
