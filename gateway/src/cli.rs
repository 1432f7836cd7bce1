//! The `terrace` command line: `serve` (the default), `accounts create`, `accounts grant`, `migrate`.

use crate::config::Config;
use crate::startup;
use serde_json::json;
use std::process::ExitCode;

const USAGE: &str = "usage:
  terrace [serve]                                   run the service (TERRACE_ADDR, TERRACE_DATA_DIR, DATABASE_URL)
  terrace accounts create --name NAME --credits N [--email EMAIL]
                                                    create an account; prints {\"account_id\", \"api_key\"};
                                                    with --email, reads the account holder's password
                                                    (for /hub and OAuth sign-in) from standard input
  terrace mcp --stdio                               serve the MCP tools on stdin/stdout as the
                                                    account of the API key in TERRACE_API_KEY: of
                                                    the running Terrace at TERRACE_URL (over HTTP),
                                                    or, without TERRACE_URL, of the local store
  terrace accounts grant ACCOUNT_ID N               add a credit pack of N credits
  terrace migrate                                   apply pending migrations and exit";

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

pub fn main(args: Vec<String>) -> ExitCode {
    if args.first().map(String::as_str) == Some("mcp") {
        crate::telemetry::init_logging_stderr();
    } else {
        crate::telemetry::init_logging();
    }
    let code = command(args);
    crate::telemetry::flush_logs();
    code
}

fn command(args: Vec<String>) -> ExitCode {
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("configuration error: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match words.as_slice() {
        [] | ["serve"] => {
            return match actix_web::rt::System::new().block_on(startup::serve(config)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e:#}");
                    ExitCode::FAILURE
                }
            };
        }
        ["migrate"] => rt.block_on(async {
            config.store.open().await?;
            println!("{}", json!({"migrated": true}));
            Ok(())
        }),
        ["accounts", "create", ..] => rt.block_on(create_account(&config, &args[2..])),
        ["mcp", "--stdio"] => rt.block_on(mcp_stdio(&config)),
        ["accounts", "grant", account, n] => rt.block_on(grant(&config, account, n)),
        ["help" | "--help" | "-h"] => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn create_account(config: &Config, args: &[String]) -> anyhow::Result<()> {
    let name =
        flag(args, "--name").ok_or_else(|| anyhow::anyhow!("--name is required\n{USAGE}"))?;
    let credits: i64 = flag(args, "--credits")
        .ok_or_else(|| anyhow::anyhow!("--credits is required\n{USAGE}"))?
        .parse()
        .map_err(|_| anyhow::anyhow!("--credits must be a whole number"))?;
    let email = flag(args, "--email").map(|e| e.trim().to_lowercase());
    let password_hash = match &email {
        None => None,
        Some(e) => {
            if !e.contains('@') {
                anyhow::bail!("--email must be an email address");
            }
            let password = read_password()?;
            Some(terrace_oauth::hash_password(&password).map_err(|e| anyhow::anyhow!(e))?)
        }
    };
    let db = config.store.open().await?;
    let (account_id, key) = terrace_credits::create_account(
        &db,
        &name,
        email.as_deref(),
        password_hash.as_deref(),
        credits,
        chrono::Utc::now(),
    )
    .await?;
    println!(
        "{}",
        json!({"account_id": account_id, "api_key": key.api_key})
    );
    Ok(())
}

async fn grant(config: &Config, account: &str, n: &str) -> anyhow::Result<()> {
    let account: i64 = account
        .parse()
        .map_err(|_| anyhow::anyhow!("ACCOUNT_ID must be a number"))?;
    let n: i64 = n
        .parse()
        .map_err(|_| anyhow::anyhow!("N must be a whole number"))?;
    let db = config.store.open().await?;
    let balance = terrace_credits::grant(&db, account, n, chrono::Utc::now()).await?;
    println!(
        "{}",
        json!({"account_id": account, "granted": n, "balance": balance})
    );
    Ok(())
}

/// The password from the first line of standard input (at least 10 characters).
fn read_password() -> anyhow::Result<String> {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let password = line.trim_end_matches(['\r', '\n']).to_string();
    if password.chars().count() < 10 {
        anyhow::bail!("the password (read from standard input) must be at least 10 characters");
    }
    Ok(password)
}

/// `terrace mcp --stdio`: the tool server on standard input and output, for a local agent.
/// Logs go to standard error, so standard output carries only the protocol. With `TERRACE_URL`,
/// the tools of the Terrace running there (over HTTP); without, of the store this process opens
/// (`TERRACE_DATA_DIR` or `DATABASE_URL`), named in the error when the key is not in it.
async fn mcp_stdio(config: &Config) -> anyhow::Result<()> {
    let key = std::env::var("TERRACE_API_KEY")
        .map_err(|_| anyhow::anyhow!("set TERRACE_API_KEY to the API key to act as"))?;
    if let Some(url) = std::env::var("TERRACE_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
    {
        return crate::mcp_proxy::serve(url.trim(), key.trim()).await;
    }
    let store = store_description(&config.store);
    let file = config.store.data_dir.join("terrace.sqlite3");
    if config.store.database_url.is_none() && !file.exists() {
        // Creating an empty store where a desktop host happens to start this command would only
        // make every key "unknown"; say what is missing instead.
        anyhow::bail!(
            "{store} does not exist, and this command does not create one. Set TERRACE_URL to the address of a running Terrace \
             (for example http://127.0.0.1:8080), or TERRACE_DATA_DIR (or DATABASE_URL) to the store it serves."
        );
    }
    let state = startup::prepare(config).await?;
    crate::mcp::serve_stdio(state, key.trim(), &store).await
}

/// The store a configuration opens, in words a person can act on: the SQLite file's absolute
/// path and where that came from, or the PostgreSQL server and database (no password).
pub fn store_description(store: &terrace_store::StoreConfig) -> String {
    match store
        .database_url
        .as_deref()
        .map(str::trim)
        .filter(|u| !u.is_empty())
    {
        Some(u) if u.starts_with("postgres://") || u.starts_with("postgresql://") => {
            let shown = url::Url::parse(u)
                .map(|p| format!("{}{}", p.host_str().unwrap_or(""), p.path()))
                .unwrap_or_default();
            format!("the PostgreSQL database {shown} (DATABASE_URL)")
        }
        Some(u) => format!("the store {u} (DATABASE_URL)"),
        None => {
            let file = store.data_dir.join("terrace.sqlite3");
            let abs = std::path::absolute(&file).unwrap_or(file);
            let origin = if std::env::var("TERRACE_DATA_DIR").is_ok_and(|v| !v.trim().is_empty()) {
                "TERRACE_DATA_DIR".to_string()
            } else {
                "TERRACE_DATA_DIR is unset, so ./data under the working directory".to_string()
            };
            format!("the SQLite store {} ({origin})", abs.display())
        }
    }
}
