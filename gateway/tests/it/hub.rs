//! The /hub management page in a real browser: headless Chromium (Debian's `chromium`) driven over
//! WebDriver (`chromedriver`) with fantoccini. Sign in, see the balance, create a key (shown once),
//! revoke it, and the revoked key gets 401 over HTTP.
//!
//! Skips with a message when chromedriver or chromium is not installed, unless
//! `TERRACE_REQUIRE_BROWSER=1` (set by `.ci/run`, which installs them), where it fails instead.
//! Without a browser the same flow is still checked over plain HTTP by
//! `the_hub_flow_works_over_plain_http`.

use crate::support::*;
use actix_web::{App, HttpServer};
use fantoccini::{ClientBuilder, Locator};
use serde_json::json;
use std::process::{Child, Command, Stdio};
use terrace_gateway::startup::app_config;
use terrace_oauth::{OAuthSettings, hash_password};

const EMAIL: &str = "hub@example.test";
const PASSWORD: &str = "a long hub password";

struct Served {
    base: String,
    app: TestApp,
    account: i64,
    handle: actix_web::dev::ServerHandle,
}

async fn serve() -> Served {
    let app = world().await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let state = app.state.clone().with_oauth(OAuthSettings::new(
        &base,
        b"hub-test-signing-key-thirty-two-bytes".to_vec(),
    ));
    let (account, _) = terrace_credits::create_account(
        app.db(),
        "Hub Holder",
        Some(EMAIL),
        Some(&hash_password(PASSWORD).unwrap()),
        50,
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    let server = HttpServer::new(move || App::new().configure(app_config(state.clone())))
        .workers(1)
        .disable_signals()
        .listen(listener)
        .unwrap()
        .run();
    let handle = server.handle();
    actix_web::rt::spawn(server);
    Served {
        base,
        app,
        account,
        handle,
    }
}

fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    })
}

struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn status_of(http: &reqwest::Client, base: &str, key: &str) -> u16 {
    http.get(format!("{base}/v1/account"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[actix_web::test]
async fn the_hub_works_in_a_real_browser() {
    let (Some(driver_bin), Some(chromium)) = (which("chromedriver"), which("chromium")) else {
        assert!(
            std::env::var("TERRACE_REQUIRE_BROWSER").is_err(),
            "TERRACE_REQUIRE_BROWSER is set but chromium/chromedriver are missing"
        );
        eprintln!(
            "SKIPPED the_hub_works_in_a_real_browser: install Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver) to run it"
        );
        return;
    };
    let s = serve().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _driver = Driver(
        Command::new(driver_bin)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts"),
    );
    let http = reqwest::Client::new();
    let webdriver = format!("http://127.0.0.1:{port}");
    for _ in 0..100 {
        if http.get(format!("{webdriver}/status")).send().await.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,1600"],
        }),
    );
    let c = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&webdriver)
        .await
        .expect("a WebDriver session");

    // Signed out, the hub sends you to sign in.
    c.goto(&format!("{}/hub", s.base)).await.unwrap();
    c.wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("sign-in"))
        .await
        .unwrap();
    assert!(
        c.current_url()
            .await
            .unwrap()
            .as_str()
            .ends_with("/hub/login")
    );
    c.wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("email"))
        .await
        .unwrap()
        .send_keys(EMAIL)
        .await
        .unwrap();
    c.wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("password"))
        .await
        .unwrap()
        .send_keys("wrong password")
        .await
        .unwrap();
    c.wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("sign-in"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let err = c
        .wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Css("p.error"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(err.contains("not right"), "{err}");
    c.wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("email"))
        .await
        .unwrap()
        .send_keys(EMAIL)
        .await
        .unwrap();
    c.wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("password"))
        .await
        .unwrap()
        .send_keys(PASSWORD)
        .await
        .unwrap();
    c.wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("sign-in"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();

    // The hub: balance, prices, keys.
    let shown = c
        .wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("balance"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(shown, "50");
    let prices = c
        .wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("prices"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(prices.contains("address_by_postcode"));

    // Create a key: shown once.
    c.wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("key-name"))
        .await
        .unwrap()
        .send_keys("browser")
        .await
        .unwrap();
    c.wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("create-key"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let key = c
        .wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("new-key-value"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(key.starts_with("trc_") && key.len() == 44, "{key}");
    assert_eq!(status_of(&http, &s.base, &key).await, 200);

    // A charged call shows in usage with its credits.
    let r = http
        .get(format!("{}/v1/address/postcode/XT11AB", s.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    c.goto(&format!("{}/hub", s.base)).await.unwrap();
    let source = c.source().await.unwrap();
    assert!(!source.contains(&key), "the key is shown only once");
    let usage = c
        .wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("usage"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(usage.contains("address_by_postcode"), "{usage}");
    assert_eq!(
        c.wait()
            .at_most(std::time::Duration::from_secs(20))
            .for_element(Locator::Id("balance"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        "48"
    );
    if let Ok(png) = c.screenshot().await {
        let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hub.png");
        let _ = std::fs::write(out, png);
    }

    // Revoke it: the key stops working at once.
    let prefix = &key[..10];
    let xpath = format!("//tr[td/code[starts-with(text(), '{prefix}')]]//button");
    c.wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::XPath(&xpath))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let notice = c
        .wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("notice"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(notice.contains("revoked"), "{notice}");
    assert_eq!(status_of(&http, &s.base, &key).await, 401);

    // Sign out.
    c.wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("sign-out"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    c.wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("sign-in"))
        .await
        .unwrap();
    assert!(
        c.current_url()
            .await
            .unwrap()
            .as_str()
            .ends_with("/hub/login")
    );
    c.close().await.unwrap();
    assert_eq!(balance(s.app.db(), s.account).await, 48);
    s.handle.stop(false).await;
}

/// The same flow over plain HTTP (runs everywhere): CSRF is enforced, the key is shown once,
/// revocation works.
#[actix_web::test]
async fn the_hub_flow_works_over_plain_http() {
    let s = serve().await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = http.get(format!("{}/hub", s.base)).send().await.unwrap();
    assert_eq!(r.status(), 303);
    let login = http
        .get(format!("{}/hub/login", s.base))
        .send()
        .await
        .unwrap();
    let csrf_cookie = login
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|v| v.starts_with("terrace_csrf="))
        .unwrap();
    assert!(csrf_cookie.contains("HttpOnly") && csrf_cookie.contains("SameSite=Lax"));
    let csrf = csrf_cookie
        .split(';')
        .next()
        .unwrap()
        .trim_start_matches("terrace_csrf=")
        .to_string();
    // Without the matching cookie the form is refused.
    let r = http
        .post(format!("{}/hub/login", s.base))
        .form(&[
            ("email", EMAIL),
            ("password", PASSWORD),
            ("csrf", csrf.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let r = http
        .post(format!("{}/hub/login", s.base))
        .header("cookie", format!("terrace_csrf={csrf}"))
        .form(&[
            ("email", EMAIL),
            ("password", PASSWORD),
            ("csrf", csrf.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let session = r
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|v| v.starts_with("terrace_session="))
        .unwrap();
    let cookie = session.split(';').next().unwrap().to_string();
    let page = http
        .get(format!("{}/hub", s.base))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("id=\"balance\">50<"), "{page}");
    let session_csrf = page
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap()
        .to_string();
    // A form without the session's CSRF token is refused.
    let r = http
        .post(format!("{}/hub/keys", s.base))
        .header("cookie", &cookie)
        .form(&[("name", "x"), ("csrf", "forged")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let created = http
        .post(format!("{}/hub/keys", s.base))
        .header("cookie", &cookie)
        .form(&[("name", "plain"), ("csrf", session_csrf.as_str())])
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let key = created
        .split("id=\"new-key-value\">")
        .nth(1)
        .and_then(|r| r.split('<').next())
        .unwrap()
        .to_string();
    assert_eq!(status_of(&http, &s.base, &key).await, 200);
    let keys = terrace_credits::list_keys(s.app.db(), s.account)
        .await
        .unwrap();
    let id = keys
        .iter()
        .find(|k| k.name.as_deref() == Some("plain"))
        .unwrap()
        .key_id;
    let revoked = http
        .post(format!("{}/hub/keys/{id}/revoke", s.base))
        .header("cookie", &cookie)
        .form(&[("csrf", session_csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    assert_eq!(status_of(&http, &s.base, &key).await, 401);
    s.handle.stop(false).await;
}
