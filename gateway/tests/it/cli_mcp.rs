//! The `terrace` binary: `accounts create --email` reads the password from standard input and
//! stores only its argon2 hash, and `terrace mcp --stdio` serves the tools over standard input and
//! output as the account of `TERRACE_API_KEY`, charging the same ledger with surface `mcp`.
//! (The binary runs on an SQLite store in a temporary directory.)

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

fn terrace(dir: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_terrace"));
    c.env("TERRACE_DATA_DIR", dir)
        .env_remove("DATABASE_URL")
        .env("TERRACE_LOAD_FIXTURES", "0")
        .env("RUST_LOG", "warn");
    c
}

fn create(dir: &std::path::Path, email: &str, password: &str) -> std::process::Output {
    let mut child = terrace(dir)
        .args([
            "accounts",
            "create",
            "--name",
            "Cli",
            "--credits",
            "7",
            "--email",
            email,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{password}").unwrap();
    child.wait_with_output().unwrap()
}

#[tokio::test]
async fn accounts_create_with_email_and_mcp_over_stdio() {
    let dir = tempfile::tempdir().unwrap();

    let short = create(dir.path(), "short@example.test", "short");
    assert!(!short.status.success(), "a short password is refused");

    let out = create(dir.path(), "Cli@Example.test", "a long cli password");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let created: Value = serde_json::from_slice(&out.stdout).unwrap();
    let key = created["api_key"].as_str().unwrap().to_string();

    let db = terrace_store::Db::open(
        &terrace_store::Location::from_env_or(None, dir.path()).unwrap(),
        &terrace_store::DbOptions::default(),
    )
    .unwrap();
    let account = terrace_store::accounts::account_by_email(&db, "cli@example.test")
        .await
        .unwrap()
        .expect("the email is stored in lower case");
    let hash = account.password_hash.unwrap();
    assert!(hash.starts_with("$argon2id$"));
    assert!(terrace_oauth::verify_password("a long cli password", &hash));

    let mut child = terrace(dir.path())
        .args(["mcp", "--stdio"])
        .env("TERRACE_API_KEY", &key)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "stdio-test", "version": "1"}}}),
    );
    let init: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "terrace");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "account_balance", "arguments": {}}}),
    );
    let call: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let out = &call["result"]["structuredContent"];
    assert_eq!(out["balance"], 7, "{call}");
    assert_eq!(out["credits_charged"], 0);
    let _ = child.kill();
    let _ = child.wait();

    let usage = terrace_credits::usage(&db, account.id, 10, None)
        .await
        .unwrap()
        .0;
    assert_eq!(usage.len(), 1);
    assert_eq!(usage[0].surface, "mcp");
    assert_eq!(usage[0].operation.as_deref(), Some("account_balance"));
}

/// Runs `terrace mcp --stdio` in `cwd` with `env`, sends `messages` (one a line) and returns the
/// answers it wrote, its exit status and its standard error.
fn stdio_session(
    cwd: &std::path::Path,
    env: &[(&str, &str)],
    messages: &[Value],
    answers: usize,
) -> (Vec<Value>, Option<i32>, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_terrace"));
    c.current_dir(cwd)
        .env_remove("DATABASE_URL")
        .env_remove("TERRACE_DATA_DIR")
        .env_remove("TERRACE_URL")
        .env("TERRACE_LOAD_FIXTURES", "0")
        .env("RUST_LOG", "warn")
        .args(["mcp", "--stdio"]);
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut out = Vec::new();
    for m in messages {
        if writeln!(stdin, "{m}").is_err() {
            break;
        }
        if m.get("id").is_some() && out.len() < answers {
            match lines.next() {
                Some(Ok(l)) => out.push(serde_json::from_str(&l).unwrap()),
                Some(Err(_)) | None => break,
            }
        }
    }
    drop(stdin);
    let status = child.wait().unwrap();
    let mut err = String::new();
    use std::io::Read;
    let _ = child.stderr.take().unwrap().read_to_string(&mut err);
    (out, status.code(), err)
}

fn handshake() -> Vec<Value> {
    vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "desktop-host", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
}

#[actix_web::test]
async fn stdio_talks_to_a_running_terrace_when_terrace_url_is_set() {
    use actix_web::{App, HttpServer};
    let app = crate::support::world().await;
    let (account, key) = crate::support::account(app.db(), 10).await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let state = app.state.clone();
    let server = HttpServer::new(move || {
        App::new().configure(terrace_gateway::startup::app_config(state.clone()))
    })
    .workers(1)
    .disable_signals()
    .listen(listener)
    .unwrap()
    .run();
    let handle = server.handle();
    actix_web::rt::spawn(server);

    // A desktop host starts the command in some directory with no store in it.
    let cwd = tempfile::tempdir().unwrap();
    let dir = cwd.path().to_path_buf();
    let (b, k) = (base.clone(), key.clone());
    let (answers, _, err) = tokio::task::spawn_blocking(move || {
        let mut m = handshake();
        m.push(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}));
        m.push(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "address_by_uprn", "arguments": {"uprn": 990000000012i64}}}));
        m.push(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "address_by_uprn", "arguments": {"uprn": 123456}}}));
        stdio_session(&dir, &[("TERRACE_URL", &b), ("TERRACE_API_KEY", &k)], &m, 4)
    })
    .await
    .unwrap();
    assert_eq!(answers.len(), 4, "{err}");
    assert_eq!(answers[0]["result"]["serverInfo"]["name"], "terrace");
    assert!(answers[1]["result"]["tools"].as_array().unwrap().len() > 30);
    let out = &answers[2]["result"]["structuredContent"];
    assert_eq!(out["postcode"], "XT1 1AB", "{}", answers[2]);
    assert_eq!(out["credits_remaining"], 9);
    assert_eq!(answers[3]["result"]["isError"], true);
    assert!(
        answers[3]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("not found")
    );
    assert!(!cwd.path().join("data").exists(), "no store was created");
    let usage = terrace_credits::usage(app.db(), account, 10, None)
        .await
        .unwrap()
        .0;
    assert_eq!(usage[0].surface, "mcp");

    // A key the server does not know: the command says which server refused it.
    let dir = cwd.path().to_path_buf();
    let b = base.clone();
    let (_, code, err) = tokio::task::spawn_blocking(move || {
        stdio_session(
            &dir,
            &[
                ("TERRACE_URL", &b),
                (
                    "TERRACE_API_KEY",
                    "trc_0000000000000000000000000000000000000000",
                ),
            ],
            &handshake(),
            1,
        )
    })
    .await
    .unwrap();
    assert_ne!(code, Some(0));
    assert!(
        err.contains(&format!("not a key of the Terrace at TERRACE_URL={base}")),
        "{err}"
    );
    handle.stop(false).await;
}

#[test]
fn stdio_without_terrace_url_names_the_store_it_opened() {
    // No store where the host started it: said, and nothing is created.
    let cwd = tempfile::tempdir().unwrap();
    let (_, code, err) = stdio_session(
        cwd.path(),
        &[(
            "TERRACE_API_KEY",
            "trc_0000000000000000000000000000000000000000",
        )],
        &handshake(),
        1,
    );
    assert_ne!(code, Some(0));
    let expected = std::path::absolute(cwd.path().join("data/terrace.sqlite3")).unwrap();
    assert!(err.contains(&expected.display().to_string()), "{err}");
    assert!(err.contains("TERRACE_URL"), "{err}");
    assert!(!cwd.path().join("data/terrace.sqlite3").exists());

    // A store that does not hold the key: named, with the way out.
    let data = tempfile::tempdir().unwrap();
    let made = create(data.path(), "other@example.test", "a long cli password");
    assert!(made.status.success());
    let data_dir = data.path().display().to_string();
    let (_, code, err) = stdio_session(
        cwd.path(),
        &[
            ("TERRACE_DATA_DIR", &data_dir),
            (
                "TERRACE_API_KEY",
                "trc_0000000000000000000000000000000000000000",
            ),
        ],
        &handshake(),
        1,
    );
    assert_ne!(code, Some(0));
    assert!(err.contains("is not a key of the SQLite store"), "{err}");
    assert!(err.contains(&data_dir), "{err}");
}
