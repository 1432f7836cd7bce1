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
                                                    account of the API key in TERRACE_API_KEY
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
/// Logs go to standard error, so standard output carries only the protocol.
async fn mcp_stdio(config: &Config) -> anyhow::Result<()> {
    let key = std::env::var("TERRACE_API_KEY")
        .map_err(|_| anyhow::anyhow!("set TERRACE_API_KEY to the API key to act as"))?;
    let state = startup::prepare(config).await?;
    crate::mcp::serve_stdio(state, key.trim()).await
}
