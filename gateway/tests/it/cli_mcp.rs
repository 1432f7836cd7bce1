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
