//! Server-rendered pages (the OAuth sign-in and consent pages, the /hub management page):
//! HTML escaping, the page frame, browser sessions and CSRF.
//!
//! Sessions are random 256-bit ids in an `HttpOnly`, `SameSite=Lax` cookie (`Secure` when the
//! public URL is https), stored only as their SHA-256 hash in `web_sessions`, each with its own
//! CSRF token that every state-changing form carries. Forms shown before sign-in use a
//! double-submit CSRF cookie. No JavaScript anywhere.

use crate::state::AppState;
use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};
use terrace_oauth::{hash_secret, random_token};
use terrace_store::oauth::{self as q, SessionRow};

pub const SESSION_COOKIE: &str = "terrace_session";
pub const CSRF_COOKIE: &str = "terrace_csrf";

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
:root{--ink:#1d2a33;--mute:#5d6b75;--line:#d9e0e5;--bg:#f5f7f8;--card:#fff;--accent:#1f6f5c;--warn:#9b2c2c}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:var(--ink);background:var(--bg)}
header{background:var(--accent);color:#fff;padding:.8rem 1.5rem;display:flex;justify-content:space-between;align-items:center}
header a,header button{color:#fff}header h1{font-size:1.15rem;margin:0}
main{max-width:60rem;margin:1.5rem auto;padding:0 1rem}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem 1.25rem;margin-bottom:1.25rem}
h2{font-size:1.05rem;margin:.2rem 0 .8rem}table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}th{color:var(--mute);font-weight:600;font-size:.85rem}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
label{display:block;margin:.6rem 0 .2rem;font-weight:600}
input[type=email],input[type=password],input[type=text]{width:100%;padding:.5rem;border:1px solid var(--line);border-radius:6px;font:inherit}
button{white-space:nowrap;font:inherit;padding:.45rem 1rem;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer}
button.secondary{background:#fff;color:var(--accent)}button.danger{background:#fff;border-color:var(--warn);color:var(--warn)}
header button{background:transparent;border-color:#fff}
.narrow{max-width:26rem;margin:3rem auto}.big{font-size:2rem;font-weight:700}.mute{color:var(--mute)}
.error{background:#fdecec;border:1px solid #f3b5b5;color:var(--warn);padding:.6rem .8rem;border-radius:6px}
.notice{background:#e9f6f1;border:1px solid #a7d9c7;padding:.8rem;border-radius:6px}
code.key{display:block;font-size:1.05rem;padding:.6rem;background:#fff;border:1px dashed var(--accent);word-break:break-all;margin:.4rem 0}
.row{display:flex;gap:.6rem;align-items:end;flex-wrap:wrap}.row>*{flex:1}.row>button{flex:0}
ul.scopes{padding-left:1.2rem}
";

/// A whole page: the frame, the styles, and headers that keep it out of frames and caches.
pub fn page(
    mut b: HttpResponseBuilder,
    title: &str,
    header_html: &str,
    body: &str,
) -> HttpResponse {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{} · Terrace</title><style>{STYLE}</style></head>\
         <body><header><h1>Terrace</h1>{header_html}</header><main>{body}</main></body></html>",
        esc(title)
    );
    b.insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header(("X-Frame-Options", "DENY"))
        .insert_header(("Referrer-Policy", "no-referrer"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .insert_header((
            "Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
        ))
        .body(html)
}

/// A hidden form field.
pub fn hidden(name: &str, value: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"{}\" value=\"{}\">",
        esc(name),
        esc(value)
    )
}

fn cookie<'a>(state: &AppState, name: &'a str, value: String, max_age_secs: i64) -> Cookie<'a> {
    Cookie::build(name, value)
        .path("/")
        .http_only(true)
        .secure(state.oauth.secure_cookies())
        .same_site(SameSite::Lax)
        .max_age(actix_web::cookie::time::Duration::seconds(max_age_secs))
        .finish()
}

/// The signed-in session of this browser, if any.
pub async fn current_session(req: &HttpRequest, state: &AppState) -> Option<SessionRow> {
    let id = req.cookie(SESSION_COOKIE)?.value().to_string();
    q::session(&state.db, &hash_secret(&id), state.clock.now().naive_utc())
        .await
        .ok()
        .flatten()
}

/// Starts a session for `account_id`; returns the session and the cookie that carries it.
pub async fn start_session(
    state: &AppState,
    account_id: i64,
) -> Result<(SessionRow, Cookie<'static>), terrace_store::StoreError> {
    let id = random_token();
    let now = state.clock.now();
    let row = SessionRow {
        id_hash: hash_secret(&id),
        account_id,
        csrf_token: random_token(),
        created_at: now.naive_utc(),
        expires_at: (now + state.oauth.session_ttl).naive_utc(),
    };
    q::insert_session(&state.db, &row).await?;
    let c = cookie(
        state,
        SESSION_COOKIE,
        id,
        state.oauth.session_ttl.num_seconds(),
    );
    Ok((row, c))
}

/// Ends this browser's session; returns the cookie that clears it.
pub async fn end_session(req: &HttpRequest, state: &AppState) -> Cookie<'static> {
    if let Some(c) = req.cookie(SESSION_COOKIE) {
        let _ = q::delete_session(&state.db, &hash_secret(c.value())).await;
    }
    cookie(state, SESSION_COOKIE, String::new(), 0)
}

/// The double-submit CSRF token for a form shown before sign-in: the browser's existing one, or
/// a new one with the cookie to set.
pub fn login_csrf(req: &HttpRequest, state: &AppState) -> (String, Option<Cookie<'static>>) {
    match req.cookie(CSRF_COOKIE) {
        Some(c) if c.value().len() >= 32 => (c.value().to_string(), None),
        Some(_) | None => {
            let t = random_token();
            (t.clone(), Some(cookie(state, CSRF_COOKIE, t, 3600)))
        }
    }
}

/// Whether a pre-sign-in form's token matches its cookie.
pub fn login_csrf_ok(req: &HttpRequest, submitted: &str) -> bool {
    req.cookie(CSRF_COOKIE)
        .is_some_and(|c| c.value().len() >= 32 && same(c.value(), submitted))
}

/// Constant-time string comparison.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Checks an email and password; the account id when they match. Unknown emails cost the same
/// argon2 work as wrong passwords, so timing does not reveal which emails exist.
pub async fn check_password(
    state: &AppState,
    email: &str,
    password: &str,
) -> Result<Option<i64>, terrace_store::StoreError> {
    let email = email.trim().to_lowercase();
    let account = terrace_store::accounts::account_by_email(&state.db, &email).await?;
    let stored = account.as_ref().and_then(|a| a.password_hash.clone());
    let password = password.to_string();
    let ok = tokio::task::spawn_blocking(move || match stored {
        Some(h) => terrace_oauth::verify_password(&password, &h),
        None => {
            // The same work as a real check, against a hash nobody's password matches.
            let _ = terrace_oauth::hash_password(&password);
            false
        }
    })
    .await
    .unwrap_or(false);
    Ok(if ok { account.map(|a| a.id) } else { None })
}

/// Why a sign-in attempt was not checked.
#[derive(Debug)]
pub enum SignInError {
    Store(terrace_store::StoreError),
    /// Throttled (429) or the hashing pool is full (503); the page says when to retry.
    Refused(crate::limits::Refused),
}

/// Checks an email and password under the limits: the account's and the source address's
/// back-off after failed attempts (429), and the bounded hashing pool (503 when its queue is
/// full or the wait runs out). A failure counts toward both back-offs; a success clears the
/// account's.
pub async fn sign_in(
    req: &HttpRequest,
    state: &AppState,
    email: &str,
    password: &str,
) -> Result<Option<i64>, SignInError> {
    let source = req.peer_addr().map(|a| a.ip());
    state
        .sign_in
        .check(email, source)
        .map_err(SignInError::Refused)?;
    let _slot = state.hash_pool.slot().await.map_err(SignInError::Refused)?;
    let account = check_password(state, email, password)
        .await
        .map_err(SignInError::Store)?;
    match account {
        Some(_) => state.sign_in.succeeded(email),
        None => state.sign_in.failed(email, source),
    }
    Ok(account)
}

/// The page for a sign-in attempt that was not checked.
pub fn sign_in_error_page(e: &SignInError) -> HttpResponse {
    use crate::limits::Refused;
    let (status, secs, title, message) = match e {
        SignInError::Store(s) => return store_error_page(s),
        SignInError::Refused(Refused::Throttled { retry_after_secs }) => (
            actix_web::http::StatusCode::TOO_MANY_REQUESTS,
            *retry_after_secs,
            "Too many attempts",
            format!("Too many failed sign-ins; wait {retry_after_secs} s and try again."),
        ),
        SignInError::Refused(Refused::Busy { retry_after_secs }) => (
            actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
            *retry_after_secs,
            "Busy",
            format!("Sign-in is busy right now; try again in {retry_after_secs} s."),
        ),
    };
    let mut resp = error_page(status, title, &message);
    if let Ok(v) = header::HeaderValue::from_str(&secs.to_string()) {
        resp.headers_mut().insert(header::RETRY_AFTER, v);
    }
    resp
}

/// A plain error page.
pub fn error_page(status: actix_web::http::StatusCode, title: &str, message: &str) -> HttpResponse {
    page(
        HttpResponse::build(status),
        title,
        "",
        &format!(
            "<section class=\"narrow\"><h2>{}</h2><p class=\"error\">{}</p></section>",
            esc(title),
            esc(message)
        ),
    )
}

/// The page for a store failure, matched so that only unavailability is a 503 ("try again
/// shortly"); any other store fault is a 500, logged at error level.
pub fn store_error_page(e: &terrace_store::StoreError) -> HttpResponse {
    use terrace_store::StoreError as E;
    match e {
        E::Unavailable(detail) => {
            tracing::warn!(error = %detail, "page: the store is unavailable");
            error_page(
                actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
                "Temporarily unavailable",
                "The service cannot be reached right now; try again shortly.",
            )
        }
        E::NotFound | E::Conflict(_) | E::Internal(_) | E::Setup(_) => {
            tracing::error!(error = %e, "page: store error");
            error_page(
                actix_web::http::StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong",
                "The request failed on our side; it has been logged.",
            )
        }
    }
}

/// The page for a failed credits call: a store failure as [`store_error_page`]; the other
/// variants cannot come from the pages' own account and keys, so they are internal faults.
pub fn credits_error_page(e: &terrace_credits::CreditsError) -> HttpResponse {
    use terrace_credits::CreditsError as E;
    match e {
        E::Store(s) => store_error_page(s),
        E::Unauthenticated
        | E::InsufficientCredits { .. }
        | E::NoAccount
        | E::NoKey
        | E::KeyLimit { .. }
        | E::Invalid(_) => {
            tracing::error!(error = %e, "page: credits error");
            error_page(
                actix_web::http::StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong",
                "The request failed on our side; it has been logged.",
            )
        }
    }
}
