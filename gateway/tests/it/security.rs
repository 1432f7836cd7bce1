//! Security and resource limits (issue 13): the sign-in flood is bounded and throttled, slow
//! bodies are cut off, client metadata documents are never fetched from private addresses,
//! registration is limited, a revoked key cannot act through another gateway's cache, rate
//! limits are per account too, idempotent replays charge once, and the smaller fixes.

use crate::support::*;
use actix_web::cookie::Cookie;
use actix_web::test::TestRequest;
use actix_web::{App, HttpServer};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::time::{Duration, Instant};
use terrace_gateway::limits::Limits;
use terrace_gateway::startup::app_config;
use terrace_gateway::state::{AppState, RateLimit};

const CSRF: &str = "0123456789abcdef0123456789abcdef-csrf";

fn login(email: &str, password: &str, peer: [u8; 4]) -> TestRequest {
    TestRequest::post()
        .uri("/hub/login")
        .peer_addr(std::net::SocketAddr::from((peer, 40000)))
        .cookie(Cookie::new("terrace_csrf", CSRF))
        .set_form([("email", email), ("password", password), ("csrf", CSRF)])
}

/// The resident set size of this process, in MiB (Linux).
fn rss_mib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

#[actix_web::test]
async fn a_sign_in_flood_is_refused_by_the_bounded_hashing_pool() {
    let w = world().await;
    let state = w.state.clone().with_limits(Limits {
        hash_workers: 1,
        hash_queue: 2,
        hash_wait: Duration::from_millis(300),
        free_failures_source: 1_000,
        ..Limits::default()
    });
    let svc = service(state.clone()).await;
    let before = rss_mib();
    let attempts = (0..40).map(|i| {
        let svc = &svc;
        async move {
            let r = actix_web::test::call_service(
                svc,
                login(&format!("nobody{i}@example.test"), "wrong", [10, 0, 0, 1]).to_request(),
            )
            .await;
            (r.status().as_u16(), r.headers().contains_key("retry-after"))
        }
    });
    let replies = futures_util::future::join_all(attempts).await;
    let after = rss_mib();
    let busy = replies.iter().filter(|(s, _)| *s == 503).count();
    assert!(busy >= 30, "the queue refuses the flood: {replies:?}");
    assert!(
        replies
            .iter()
            .all(|(s, retry)| *s == 401 || (*s == 503 && *retry)),
        "{replies:?}"
    );
    assert_eq!(state.hash_pool.peak(), 1, "never more hashes than the pool");
    if let (Some(b), Some(a)) = (before, after) {
        eprintln!("sign-in flood: RSS {b} MiB -> {a} MiB, {busy}/40 refused with 503");
        assert!(a < b + 150, "memory stays bounded: {b} -> {a} MiB");
    }
}

#[actix_web::test]
async fn failed_sign_ins_back_off_per_account_on_the_hub_and_the_oauth_page() {
    let w = world().await;
    let state = w.state.clone().with_limits(Limits {
        free_failures_account: 2,
        free_failures_source: 4,
        ..Limits::default()
    });
    let svc = service(state).await;
    for _ in 0..3 {
        let r = send(&svc, login("victim@example.test", "guess", [10, 0, 0, 2])).await;
        assert_eq!(r.status, 401);
    }
    // The account backs off, whichever address tries next.
    let r = send(&svc, login("victim@example.test", "guess", [10, 0, 0, 3])).await;
    assert_eq!(r.status, 429);
    assert!(r.headers.contains_key("retry-after"));
    // The OAuth sign-in page shares the back-off.
    let reg = send(
        &svc,
        register(
            &json!({"redirect_uris": ["https://app.example/cb"]}),
            [10, 0, 0, 4],
        ),
    )
    .await;
    let client_id = reg.json["client_id"].as_str().unwrap().to_string();
    let r = send(
        &svc,
        TestRequest::post()
            .uri("/oauth/authorize")
            .peer_addr(std::net::SocketAddr::from(([10, 0, 0, 5], 40000)))
            .cookie(Cookie::new("terrace_csrf", CSRF))
            .set_form([
                ("response_type", "code"),
                ("client_id", client_id.as_str()),
                ("redirect_uri", "https://app.example/cb"),
                (
                    "code_challenge",
                    "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                ),
                ("code_challenge_method", "S256"),
                ("action", "signin"),
                ("csrf", CSRF),
                ("email", "victim@example.test"),
                ("password", "guess"),
            ]),
    )
    .await;
    assert_eq!(r.status, 429);
    // The source backs off too: after 4 free failures from one address (and one more that
    // starts the back-off), whatever the account.
    for i in 0..5 {
        let r = send(
            &svc,
            login(&format!("u{i}@example.test"), "x", [10, 0, 0, 9]),
        )
        .await;
        assert_eq!(r.status, 401);
    }
    let r = send(&svc, login("u9@example.test", "x", [10, 0, 0, 9])).await;
    assert_eq!(
        r.status, 429,
        "the source backs off after its free failures"
    );
}

/// The gateway on a loopback port; returns its base URL and handle.
async fn listen(state: AppState) -> (String, actix_web::dev::ServerHandle) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("127.0.0.1:{}", listener.local_addr().unwrap().port());
    let s = state.clone();
    let server = HttpServer::new(move || App::new().configure(app_config(s.clone())))
        .workers(1)
        .disable_signals()
        .client_request_timeout(Duration::from_secs(2))
        .listen(listener)
        .unwrap()
        .run();
    let handle = server.handle();
    actix_web::rt::spawn(server);
    (base, handle)
}

/// Sends `head` and the first `sent` bytes of a body, then waits; returns the status line the
/// server answered and how long it took.
fn slow_post(addr: &str, head: &str, sent: usize) -> (String, Duration) {
    let started = Instant::now();
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(&vec![b' '; sent]).unwrap();
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf).unwrap_or(0);
    let text = String::from_utf8_lossy(&buf[..n]).to_string();
    (
        text.lines().next().unwrap_or_default().to_string(),
        started.elapsed(),
    )
}

#[actix_web::test]
async fn a_slow_body_is_cut_off_and_no_body_is_read_before_authentication() {
    let w = world().await;
    let (_, key) = account(w.db(), 10).await;
    let state = w.state.clone().with_limits(Limits {
        body_deadline: Duration::from_secs(1),
        ..Limits::default()
    });
    let (addr, handle) = listen(state).await;
    let head = |auth: &str| {
        format!(
            "POST /v1/address/resolve HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n{auth}\r\n"
        )
    };
    let a = addr.clone();
    let key_header = format!("Authorization: Bearer {key}\r\n");
    let h = head(&key_header);
    let (status, took) = tokio::task::spawn_blocking(move || slow_post(&a, &h, 999_000))
        .await
        .unwrap();
    eprintln!("slow body: answered {status:?} after {took:?}");
    assert!(status.contains("408"), "{status}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    // Without a key the body is never read: 401 at once.
    let a = addr.clone();
    let h = head("");
    let (status, took) = tokio::task::spawn_blocking(move || slow_post(&a, &h, 10))
        .await
        .unwrap();
    assert!(status.contains("401"), "{status}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    handle.stop(false).await;
}

#[actix_web::test]
async fn client_metadata_documents_are_never_fetched_from_private_addresses() {
    let w = world().await;
    // A loopback listener that counts the connections it gets.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let svc = service(w.state.clone()).await;
    for target in [
        format!("https://127.0.0.1:{port}/x"),
        format!("https://localhost:{port}/x"),
        format!("https://[::1]:{port}/x"),
        "https://169.254.169.254/latest/meta-data".to_string(),
        format!("http://127.0.0.1:{port}/x"),
    ] {
        let uri = format!(
            "/oauth/authorize?response_type=code&client_id={}&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256",
            url_encode(&target)
        );
        let resp =
            actix_web::test::call_service(&svc, TestRequest::get().uri(&uri).to_request()).await;
        assert_eq!(resp.status(), 400, "{target}");
        let page = String::from_utf8_lossy(&actix_web::test::read_body(resp).await).to_string();
        assert!(!page.contains("Connection refused"), "{page}");
    }
    assert!(
        listener.accept().is_err(),
        "the loopback listener was never connected to"
    );
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn register(body: &Value, peer: [u8; 4]) -> TestRequest {
    TestRequest::post()
        .uri("/oauth/register")
        .peer_addr(std::net::SocketAddr::from((peer, 40000)))
        .set_json(body)
}

#[actix_web::test]
async fn registration_is_limited_in_size_count_rate_and_lifetime() {
    let w = world().await;
    let state = w.state.clone().with_limits(Limits {
        registrations_per_hour: 3,
        ..Limits::default()
    });
    let svc = service(state).await;
    let eleven: Vec<String> = (0..11)
        .map(|i| format!("https://app.example/cb{i}"))
        .collect();
    let r = send(
        &svc,
        register(&json!({"redirect_uris": eleven}), [10, 1, 0, 1]),
    )
    .await;
    assert_eq!(
        (r.status, r.json["error"].as_str()),
        (400, Some("invalid_redirect_uri"))
    );
    let long = format!("https://app.example/{}", "a".repeat(600));
    let r = send(
        &svc,
        register(&json!({"redirect_uris": [long]}), [10, 1, 0, 2]),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.json);
    let big =
        json!({"redirect_uris": ["https://app.example/cb"], "client_name": "x".repeat(20_000)});
    let r = send(&svc, register(&big, [10, 1, 0, 3])).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.json["error"]["code"], "payload_too_large");
    // Per source: 3 an hour.
    let ok = json!({"redirect_uris": ["https://app.example/cb"]});
    for _ in 0..3 {
        assert_eq!(send(&svc, register(&ok, [10, 1, 0, 4])).await.status, 201);
    }
    let r = send(&svc, register(&ok, [10, 1, 0, 4])).await;
    assert_eq!((r.status, r.json["limit"].as_str()), (429, Some("source")));
    assert!(r.headers.contains_key("retry-after"));
    // Another address may still register.
    let r = send(&svc, register(&ok, [10, 1, 0, 5])).await;
    assert_eq!(r.status, 201);
    let unused = r.json["client_id"].as_str().unwrap().to_string();
    // A day later, a client that never completed an authorization is gone.
    let reg: terrace_oauth::Registration = serde_json::from_value(ok.clone()).unwrap();
    let later = chrono::Utc::now() + chrono::Duration::hours(25);
    terrace_oauth::register_client(w.db(), reg, later)
        .await
        .unwrap();
    assert!(
        terrace_store::oauth::client(w.db(), &unused)
            .await
            .unwrap()
            .is_none()
    );
}

#[actix_web::test]
async fn a_key_revoked_on_one_gateway_cannot_act_on_another() {
    let w = world().await;
    let (acct, first) = account(w.db(), 10).await;
    let a = service(w.state.clone()).await;
    let other = state_for(w.db(), RateLimit::default()).await;
    let b = service(other).await;
    // A second key, made through gateway A.
    let made = send(
        &a,
        post_json("/v1/account/keys", &first, &json!({"name": "second"})),
    )
    .await;
    assert_eq!(made.status, 200, "{}", made.json);
    let second = made.json["api_key"].as_str().unwrap().to_string();
    let second_id = made.json["key_id"].as_i64().unwrap();
    // Gateway B caches the first key.
    assert_eq!(send(&b, get("/v1/account", &first)).await.status, 200);
    // The first key is revoked through gateway A, with the second key.
    let keys = terrace_credits::list_keys(w.db(), acct).await.unwrap();
    let first_id = keys.iter().find(|k| k.key_id != second_id).unwrap().key_id;
    let r = send(
        &a,
        TestRequest::delete()
            .uri(&format!("/v1/account/keys/{first_id}"))
            .insert_header(("Authorization", format!("Bearer {second}"))),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    // Through B's cache, the revoked key can neither create a key nor revoke one.
    let live_before = terrace_credits::list_keys(w.db(), acct).await.unwrap();
    let r = send(&b, post_json("/v1/account/keys", &first, &json!({}))).await;
    assert_eq!(r.status, 401, "{}", r.json);
    assert!(r.json.get("credits_remaining").is_none(), "{}", r.json);
    let r = send(
        &b,
        TestRequest::delete()
            .uri(&format!("/v1/account/keys/{second_id}"))
            .insert_header(("Authorization", format!("Bearer {first}"))),
    )
    .await;
    assert_eq!(r.status, 401, "{}", r.json);
    let live_after = terrace_credits::list_keys(w.db(), acct).await.unwrap();
    assert_eq!(live_before.len(), live_after.len(), "no key was created");
    assert!(
        live_after.iter().any(|k| k.key_id == second_id && k.active),
        "the second key is still live"
    );
}

#[actix_web::test]
async fn more_keys_do_not_buy_more_rate_and_keys_are_capped() {
    let w = world_with(RateLimit {
        per_second: 1,
        burst: 3,
        account_per_second: 1,
        account_burst: 4,
    })
    .await;
    let (acct, first) = account(w.db(), 100).await;
    let second = terrace_credits::create_key(w.db(), acct, None, chrono::Utc::now())
        .await
        .unwrap()
        .api_key;
    let svc = service(w.state.clone()).await;
    for _ in 0..3 {
        assert_eq!(send(&svc, get("/v1/account", &first)).await.status, 200);
    }
    let r = send(&svc, get("/v1/account", &first)).await;
    assert_eq!((r.status, r.json["limit"].as_str()), (429, Some("key")));
    assert_eq!(send(&svc, get("/v1/account", &second)).await.status, 200);
    let r = send(&svc, get("/v1/account", &second)).await;
    assert_eq!((r.status, r.json["limit"].as_str()), (429, Some("account")));
    assert!(r.headers.contains_key("retry-after"));
    assert!(r.json["detail"].as_str().unwrap().contains("account"));

    // The live-key cap.
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let cap = terrace_credits::MAX_LIVE_KEYS;
    for _ in 1..cap {
        let r = send(&svc, post_json("/v1/account/keys", &key, &json!({}))).await;
        assert_eq!(r.status, 200, "{}", r.json);
    }
    let r = send(&svc, post_json("/v1/account/keys", &key, &json!({}))).await;
    assert_eq!(r.status, 422, "{}", r.json);
    assert_eq!(r.json["detail"][0]["type"], "key_limit");
    let live = terrace_credits::list_keys(w.db(), acct).await.unwrap();
    assert_eq!(live.iter().filter(|k| k.active).count() as i64, cap);
}

#[actix_web::test]
async fn an_idempotent_repeat_returns_the_answer_and_charges_once() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let body = json!({"address": "2 High St, Exampleton"});
    let call = |b: &Value, k: &str| {
        post_json("/v1/address/resolve", &key, b).insert_header(("Idempotency-Key", k.to_string()))
    };
    let first = send(&svc, call(&body, "order-1")).await;
    assert_eq!(first.status, 200, "{}", first.json);
    assert_eq!(first.json["credits_charged"], 1);
    let again = send(&svc, call(&body, "order-1")).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.json, first.json, "the stored answer, as it was");
    assert_eq!(again.headers.get("idempotent-replayed").unwrap(), "true");
    assert_eq!(balance(w.db(), acct).await, 9, "charged once");
    // The same key for a different request is refused.
    let other = send(
        &svc,
        call(&json!({"address": "3 High St, Exampleton"}), "order-1"),
    )
    .await;
    assert_eq!(other.status, 422);
    assert_eq!(other.json["detail"][0]["type"], "idempotency_conflict");
    assert_eq!(balance(w.db(), acct).await, 9);
    // A malformed key is refused before anything runs.
    let bad = send(&svc, call(&body, "has space")).await;
    assert_eq!(bad.status, 422);
    assert_eq!(
        bad.json["detail"][0]["loc"],
        json!(["header", "Idempotency-Key"])
    );
    // The MCP surface takes the same key as an argument.
    let args = json!({"address": "2 High St, Exampleton", "idempotency_key": "tool-1"});
    let params = json!({"name": "address_resolve", "arguments": args});
    let one = crate::mcp::rpc(&svc, &key, "tools/call", params.clone()).await;
    let two = crate::mcp::rpc(&svc, &key, "tools/call", params).await;
    assert_eq!(
        one["result"]["structuredContent"], two["result"]["structuredContent"],
        "{one} {two}"
    );
    assert_eq!(
        balance(w.db(), acct).await,
        8,
        "one more charge for both tool calls"
    );
    let (usage, _) = terrace_credits::usage(w.db(), acct, 100, None)
        .await
        .unwrap();
    assert_eq!(usage.len(), 2);
}

#[actix_web::test]
async fn the_smaller_fixes_hold() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(
        w.state
            .clone()
            .with_metrics_token(Some("operator-secret-token")),
    )
    .await;

    // The scheme of Authorization is case-insensitive.
    let r = send(
        &svc,
        TestRequest::get()
            .uri("/v1/account")
            .insert_header(("Authorization", format!("BEARER {key}"))),
    )
    .await;
    assert_eq!(r.status, 200);

    // A body with a non-JSON media type is 415 and charges nothing.
    let r = send(
        &svc,
        TestRequest::post()
            .uri("/v1/address/resolve")
            .insert_header(("Authorization", format!("Bearer {key}")))
            .insert_header(("Content-Type", "text/plain"))
            .set_payload(r#"{"address": "2 High St, Exampleton"}"#),
    )
    .await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (415, Some(0))
    );
    assert_eq!(balance(w.db(), acct).await, 10);

    // A new key's answer is never cached.
    let r = send(&svc, post_json("/v1/account/keys", &key, &json!({}))).await;
    assert_eq!(r.headers.get("cache-control").unwrap(), "no-store");
    let new_key = r.json["api_key"].as_str().unwrap().to_string();
    let new_id = r.json["key_id"].as_i64().unwrap();

    // Revoking the key you call with succeeds, and says so.
    let r = send(
        &svc,
        TestRequest::delete()
            .uri(&format!("/v1/account/keys/{new_id}"))
            .insert_header(("Authorization", format!("Bearer {new_key}"))),
    )
    .await;
    assert_eq!(
        (r.status, r.json["revoked"].as_bool()),
        (200, Some(true)),
        "{}",
        r.json
    );
    // And a 401 never shows the balance.
    let r = send(&svc, get("/v1/account", &new_key)).await;
    assert_eq!(r.status, 401);
    assert!(r.json.get("credits_remaining").is_none(), "{}", r.json);

    // /metrics needs the operator token.
    let metrics = |auth: Option<&str>| {
        let mut t = TestRequest::get().uri("/metrics");
        if let Some(a) = auth {
            t = t.insert_header(("Authorization", format!("Bearer {a}")));
        }
        t
    };
    assert_eq!(send(&svc, metrics(None)).await.status, 401);
    assert_eq!(send(&svc, metrics(Some(&key))).await.status, 401);
    let resp =
        actix_web::test::call_service(&svc, metrics(Some("operator-secret-token")).to_request())
            .await;
    assert_eq!(resp.status(), 200);
    let off = service(w.state.clone()).await;
    assert_eq!(send(&off, metrics(None)).await.status, 404);

    // /mcp takes at most 1 MiB, and says so in JSON.
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"pad": "x".repeat(1_100_000)}});
    let r = send(&svc, crate::mcp::mcp_request(Some(&key), &big)).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.json["error"]["code"], "payload_too_large", "{}", r.json);

    // UPRNs are strictly decimal, with no sign and no run of leading zeros.
    for bad in [
        "+990000000015",
        "00000000000000000000990000000015",
        "%20990000000015",
    ] {
        let r = send(&svc, get(&format!("/v1/address/uprn/{bad}"), &key)).await;
        assert_eq!(r.status, 422, "{bad}: {}", r.json);
    }
    // Invalid UTF-8 in a query is refused, not decoded lossily.
    let r = send(&svc, get("/v1/address/autocomplete?q=%FF%FEhigh", &key)).await;
    assert_eq!(r.status, 422, "{}", r.json);
    assert_eq!(r.json["detail"][0]["loc"], json!(["query"]));
    assert_eq!(balance(w.db(), acct).await, 10, "no refusal was charged");
}

#[test]
fn the_openapi_document_declares_every_status_the_server_answers() {
    let doc = terrace_gateway::openapi::document();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for status in ["401", "405", "413", "422", "429", "500", "503"] {
                assert!(
                    op["responses"].get(status).is_some(),
                    "{method} {path} lacks {status}"
                );
            }
        }
    }
}
