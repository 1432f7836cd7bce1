//! The management hub at `/hub`: a server-rendered page where an account holder signs in (email
//! and password) and sees the balance, recent usage with the credits of each call, the price list
//! and their API keys (create: shown once; revoke), and the applications signed in with OAuth.
//!
//! Every state-changing form carries the session's CSRF token; the session is a secure cookie
//! (see `web.rs`). The pages need no JavaScript.

use crate::registry::operations;
use crate::state::AppState;
use crate::web::{self, esc, hidden};
use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, web as aw};
use serde::Deserialize;
use terrace_credits::{self as credits, NewKey};
use terrace_store::oauth::SessionRow;

pub fn configure(cfg: &mut aw::ServiceConfig) {
    cfg.route("/hub", aw::get().to(hub))
        .route("/hub/login", aw::get().to(login_page))
        .route("/hub/login", aw::post().to(login))
        .route("/hub/logout", aw::post().to(logout))
        .route("/hub/keys", aw::post().to(create_key))
        .route("/hub/keys/{key_id}/revoke", aw::post().to(revoke_key))
        .route("/hub/apps/{grant_id}/revoke", aw::post().to(revoke_app));
}

fn see_other(to: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, to.to_string()))
        .finish()
}

fn login_form(csrf: &str, error: Option<&str>, status: StatusCode) -> HttpResponse {
    let err = error
        .map(|e| format!("<p class=\"error\" role=\"alert\">{}</p>", esc(e)))
        .unwrap_or_default();
    let body = format!(
        "<section class=\"narrow\"><h2>Sign in to your Terrace hub</h2>{err}\
         <form method=\"post\" action=\"/hub/login\">{}\
         <label for=\"email\">Email</label><input id=\"email\" type=\"email\" name=\"email\" autocomplete=\"username\" required autofocus>\
         <label for=\"password\">Password</label><input id=\"password\" type=\"password\" name=\"password\" autocomplete=\"current-password\" required>\
         <p><button type=\"submit\" id=\"sign-in\">Sign in</button></p></form></section>",
        hidden("csrf", csrf)
    );
    web::page(HttpResponse::build(status), "Sign in", "", &body)
}

async fn login_page(req: HttpRequest, state: aw::Data<AppState>) -> HttpResponse {
    if web::current_session(&req, &state).await.is_some() {
        return see_other("/hub");
    }
    let (csrf, cookie) = web::login_csrf(&req, &state);
    let mut resp = login_form(&csrf, None, StatusCode::OK);
    if let Some(c) = cookie {
        let _ = resp.add_cookie(&c);
    }
    resp
}

#[derive(Debug, Deserialize)]
struct LoginForm {
    email: String,
    password: String,
    csrf: String,
}

async fn login(
    req: HttpRequest,
    state: aw::Data<AppState>,
    form: aw::Form<LoginForm>,
) -> HttpResponse {
    if !web::login_csrf_ok(&req, &form.csrf) {
        return web::error_page(
            StatusCode::FORBIDDEN,
            "Form expired",
            "The sign-in form expired or came from another site; reload the page and try again.",
        );
    }
    match web::sign_in(&req, &state, &form.email, &form.password).await {
        Err(e) => web::sign_in_error_page(&e),
        Ok(None) => login_form(
            &form.csrf,
            Some("The email or password is not right."),
            StatusCode::UNAUTHORIZED,
        ),
        Ok(Some(account_id)) => match web::start_session(&state, account_id).await {
            Err(e) => web::store_error_page(&e),
            Ok((_, cookie)) => {
                let mut resp = see_other("/hub");
                let _ = resp.add_cookie(&cookie);
                resp
            }
        },
    }
}

#[derive(Debug, Deserialize)]
struct CsrfForm {
    csrf: String,
    #[serde(default)]
    name: Option<String>,
}

/// The session of a state-changing request whose form carries the session's CSRF token.
async fn checked_session(
    req: &HttpRequest,
    state: &AppState,
    csrf: &str,
) -> Result<SessionRow, HttpResponse> {
    let Some(session) = web::current_session(req, state).await else {
        return Err(see_other("/hub/login"));
    };
    if !web::same(&session.csrf_token, csrf) {
        return Err(web::error_page(
            StatusCode::FORBIDDEN,
            "Form expired",
            "The form expired or came from another site; reload the hub and try again.",
        ));
    }
    Ok(session)
}

async fn logout(
    req: HttpRequest,
    state: aw::Data<AppState>,
    form: aw::Form<CsrfForm>,
) -> HttpResponse {
    if let Err(resp) = checked_session(&req, &state, &form.csrf).await {
        return resp;
    }
    let cookie = web::end_session(&req, &state).await;
    let mut resp = see_other("/hub/login");
    let _ = resp.add_cookie(&cookie);
    resp
}

async fn create_key(
    req: HttpRequest,
    state: aw::Data<AppState>,
    form: aw::Form<CsrfForm>,
) -> HttpResponse {
    let session = match checked_session(&req, &state, &form.csrf).await {
        Ok(s) => s,
        Err(resp) => return resp,
    };
    let name = form
        .name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| n.chars().take(100).collect::<String>());
    match credits::create_key_by(
        &state.db,
        session.account_id,
        None,
        name.as_deref(),
        state.clock.now(),
    )
    .await
    {
        // The key is shown in this response only: not in a URL, not stored in clear.
        Ok(key) => render(&state, &session, Some(&key), None).await,
        Err(credits::CreditsError::KeyLimit { max }) => {
            let notice = format!("This account already holds {max} live keys; revoke one first.");
            render(&state, &session, None, Some(&notice)).await
        }
        Err(e) => web::credits_error_page(&e),
    }
}

async fn revoke_key(
    req: HttpRequest,
    state: aw::Data<AppState>,
    path: aw::Path<i64>,
    form: aw::Form<CsrfForm>,
) -> HttpResponse {
    let session = match checked_session(&req, &state, &form.csrf).await {
        Ok(s) => s,
        Err(resp) => return resp,
    };
    let key_id = path.into_inner();
    let notice =
        match credits::revoke_key(&state.db, session.account_id, key_id, state.clock.now()).await {
            Ok(()) => {
                state.keys.forget_key(key_id);
                format!("Key {key_id} is revoked; it stops working at once.")
            }
            Err(credits::CreditsError::NoKey) => {
                format!("Key {key_id} is not an active key of this account.")
            }
            Err(e) => return web::credits_error_page(&e),
        };
    render(&state, &session, None, Some(&notice)).await
}

async fn revoke_app(
    req: HttpRequest,
    state: aw::Data<AppState>,
    path: aw::Path<i64>,
    form: aw::Form<CsrfForm>,
) -> HttpResponse {
    let session = match checked_session(&req, &state, &form.csrf).await {
        Ok(s) => s,
        Err(resp) => return resp,
    };
    let grant_id = path.into_inner();
    let notice = match terrace_oauth::withdraw_grant(
        &state.db,
        session.account_id,
        grant_id,
        state.clock.now(),
    )
    .await
    {
        Ok(true) => "The application is signed out; its tokens stop working at once.".to_string(),
        Ok(false) => "No such application on this account.".to_string(),
        Err(e) => return web::store_error_page(&e),
    };
    render(&state, &session, None, Some(&notice)).await
}

async fn hub(req: HttpRequest, state: aw::Data<AppState>) -> HttpResponse {
    match web::current_session(&req, &state).await {
        None => see_other("/hub/login"),
        Some(session) => render(&state, &session, None, None).await,
    }
}

/// The hub page for the session's account.
async fn render(
    state: &AppState,
    session: &SessionRow,
    new_key: Option<&NewKey>,
    notice: Option<&str>,
) -> HttpResponse {
    let account = session.account_id;
    let read = async {
        Ok::<_, credits::CreditsError>((
            credits::balance(&state.db, account).await?,
            credits::usage(&state.db, account, 25, None).await?.0,
            credits::list_keys(&state.db, account).await?,
            terrace_store::oauth::grants_of(&state.db, account).await?,
        ))
    };
    let (balance, usage, keys, grants) = match read.await {
        Ok(r) => r,
        Err(e) => return web::credits_error_page(&e),
    };
    let csrf = hidden("csrf", &session.csrf_token);
    let mut html = String::new();
    if let Some(n) = notice {
        html.push_str(&format!(
            "<section class=\"notice\" role=\"status\" id=\"notice\">{}</section>",
            esc(n)
        ));
    }
    if let Some(k) = new_key {
        html.push_str(&format!(
            "<section class=\"notice\" id=\"new-key\"><h2>Your new API key</h2>\
             <p>Copy it now: it is shown only this once, and Terrace keeps only its hash.</p>\
             <code class=\"key\" id=\"new-key-value\">{}</code>\
             <p class=\"mute\">Send it as <code>Authorization: Bearer &lt;key&gt;</code>.</p></section>",
            esc(&k.api_key)
        ));
    }
    html.push_str(&format!(
        "<section><h2>Balance</h2><p><span class=\"big\" id=\"balance\">{}</span> credits</p>\
         <p class=\"mute\">Account {} · {}</p></section>",
        balance.balance,
        balance.account_id,
        esc(&balance.name)
    ));

    // API keys.
    html.push_str("<section><h2>API keys</h2><table id=\"keys\"><thead><tr><th>Key</th><th>Name</th><th>Created</th><th>Status</th><th></th></tr></thead><tbody>");
    for k in &keys {
        let action = if k.active {
            format!(
                "<form method=\"post\" action=\"/hub/keys/{}/revoke\">{csrf}<button type=\"submit\" class=\"danger\" id=\"revoke-{}\">Revoke</button></form>",
                k.key_id, k.key_id
            )
        } else {
            String::new()
        };
        let status = match k.revoked_at {
            Some(t) => format!("revoked {}", t.format("%Y-%m-%d %H:%M")),
            None => "active".into(),
        };
        html.push_str(&format!(
            "<tr data-key-id=\"{}\"><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"status\">{}</td><td>{action}</td></tr>",
            k.key_id,
            esc(&k.masked),
            esc(k.name.as_deref().unwrap_or("")),
            k.created_at.format("%Y-%m-%d %H:%M"),
            esc(&status)
        ));
    }
    html.push_str(&format!(
        "</tbody></table><form method=\"post\" action=\"/hub/keys\" class=\"row\">{csrf}\
         <div><label for=\"key-name\">New key name</label><input id=\"key-name\" type=\"text\" name=\"name\" maxlength=\"100\" placeholder=\"e.g. production\"></div>\
         <button type=\"submit\" id=\"create-key\">Create key</button></form></section>"
    ));

    // Applications signed in with OAuth, by the name they registered (the client id below it).
    let live: Vec<_> = grants.iter().filter(|g| g.revoked_at.is_none()).collect();
    if !live.is_empty() {
        html.push_str("<section><h2>Applications signed in</h2><table id=\"apps\"><thead><tr><th>Application</th><th>Since</th><th></th></tr></thead><tbody>");
        for g in live {
            let name = match terrace_store::oauth::client(&state.db, &g.client_id).await {
                Ok(c) => c.and_then(|c| c.client_name),
                Err(e) => return web::store_error_page(&e),
            };
            html.push_str(&format!(
                "<tr><td><strong class=\"app-name\">{}</strong><br><code class=\"mute\">{}</code></td><td>{}</td><td><form method=\"post\" action=\"/hub/apps/{}/revoke\">{csrf}<button type=\"submit\" class=\"danger\">Sign out</button></form></td></tr>",
                esc(name.as_deref().unwrap_or("Unnamed application")),
                esc(&g.client_id),
                g.created_at.format("%Y-%m-%d %H:%M"),
                g.id
            ));
        }
        html.push_str("</tbody></table></section>");
    }

    // Recent usage.
    html.push_str("<section><h2>Recent usage</h2>");
    if usage.is_empty() {
        html.push_str("<p class=\"mute\">No calls yet.</p>");
    } else {
        html.push_str("<table id=\"usage\"><thead><tr><th>Time (UTC)</th><th>Operation</th><th>Via</th><th class=\"n\">Credits</th><th class=\"n\">Balance after</th></tr></thead><tbody>");
        for u in &usage {
            html.push_str(&format!(
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                u.time.format("%Y-%m-%d %H:%M:%S"),
                esc(u.operation.as_deref().unwrap_or("")),
                esc(&u.surface),
                u.credits,
                u.balance_after
            ));
        }
        html.push_str("</tbody></table>");
    }
    html.push_str("</section>");

    // Prices.
    html.push_str("<section><h2>Prices</h2><p class=\"mute\">A failed call costs nothing. The same prices apply over HTTP and MCP.</p><table id=\"prices\"><thead><tr><th>Operation</th><th>HTTP</th><th class=\"n\">Credits</th></tr></thead><tbody>");
    for op in operations() {
        let rule = match op.price {
            crate::registry::Price::Free => "free".to_string(),
            crate::registry::Price::PerCall(n) => n.to_string(),
            crate::registry::Price::PerItem(n) => format!("{n} per answered item"),
            crate::registry::Price::OfStoredOperation { at_most } => {
                format!("the stored operation's price (at most {at_most})")
            }
        };
        html.push_str(&format!(
            "<tr><td><code>{}</code><br><span class=\"mute\">{}</span></td><td><code>{} {}</code></td><td class=\"n\">{}</td></tr>",
            esc(op.id),
            esc(op.summary),
            op.method.as_str(),
            esc(op.path),
            esc(&rule)
        ));
    }
    html.push_str("</tbody></table></section>");

    let header_html = format!(
        "<form method=\"post\" action=\"/hub/logout\">{csrf}<button type=\"submit\" id=\"sign-out\">Sign out</button></form>"
    );
    web::page(HttpResponse::Ok(), "Hub", &header_html, &html)
}
