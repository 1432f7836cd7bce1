//! `cargo xtask`: operator and developer tasks.
//!
//!   cargo xtask fixtures [--seed N] [--out DIR]   generate the synthetic fixture world
//!   cargo xtask load DATASET FILE...              load real files (progress + row accounting)
//!   cargo xtask build                             derive areas and link sales to UPRNs
//!   cargo xtask migrate                           apply migrations
//!   cargo xtask openapi [--check]                 write (or check) docs/openapi.json and docs/mcp-tools.json
//!   cargo xtask bench address [--addresses N]     benchmark the address endpoints
//!
//! The store is chosen as the service chooses it: DATABASE_URL, else TERRACE_DATA_DIR/terrace.sqlite3.

mod bench;

use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use terrace_ingest::{Dataset, Progress};

const USAGE: &str = "usage: cargo xtask <fixtures|load|build|migrate|openapi|bench> ...
  fixtures [--seed N] [--out DIR]      generate the synthetic fixture world into fixtures/
  load DATASET FILE...                 load files; DATASET is one of: addressbase, open_uprn, codepoint, onspd, boundaries, epc, price_paid
  build                                derive each address's area and link sales to UPRNs
  migrate                              apply pending migrations
  openapi [--check]                    write docs/openapi.json and docs/mcp-tools.json (or fail if they differ from the code)
  bench address [--addresses N]        benchmark the address endpoints on a generated register";

/// The documents generated from the operation declarations: the OpenAPI document and the MCP
/// `tools/list` snapshot beside it.
fn generated_docs() -> [(&'static str, String); 2] {
    [
        (
            "docs/openapi.json",
            terrace_gateway::openapi::document_text(),
        ),
        (
            "docs/mcp-tools.json",
            terrace_gateway::mcp::tools_document_text(),
        ),
    ]
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("bare-server") {
        let w: Vec<&str> = args.iter().map(String::as_str).collect();
        return match w.as_slice() {
            [_, addr, size] => match size
                .parse()
                .map_err(anyhow::Error::from)
                .and_then(|s| bench::bare_server(addr, s))
            {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e:#}");
                    ExitCode::FAILURE
                }
            },
            _ => ExitCode::from(2),
        };
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build();
    let rt = match rt {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn opt(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

async fn store() -> anyhow::Result<terrace_store::Db> {
    let config = terrace_gateway::config::Config::from_env().map_err(anyhow::Error::msg)?;
    terrace_gateway::startup::open_store(&config).await
}

async fn run(args: Vec<String>) -> anyhow::Result<()> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["fixtures", rest @ ..] => {
            let rest: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
            let mut cfg = terrace_fixturegen::Config::default();
            if let Some(seed) = opt(&rest, "--seed") {
                cfg.seed = seed.parse().context("--seed must be a number")?;
            }
            let out = opt(&rest, "--out")
                .map(PathBuf::from)
                .unwrap_or_else(|| root().join("fixtures"));
            let manifest = terrace_fixturegen::generate(&cfg, &out)?;
            println!("{}", serde_json::to_string_pretty(&manifest)?);
            Ok(())
        }
        ["load", dataset, files @ ..] if !files.is_empty() => {
            let ds = Dataset::parse(dataset)?;
            let db = store().await?;
            let mut progress = Progress::stderr();
            for f in files {
                let report = terrace_ingest::load_file(
                    &db,
                    ds,
                    Path::new(f),
                    Default::default(),
                    &mut progress,
                )
                .await?;
                println!(
                    "{}",
                    serde_json::json!({
                        "dataset": report.dataset, "file": report.file, "counts": report.counts,
                        "rejections": report.rejections.iter().map(|r| format!("{r}")).collect::<Vec<_>>(),
                        "seconds": report.seconds,
                    })
                );
            }
            Ok(())
        }
        ["build"] => {
            let db = store().await?;
            let mut progress = Progress::stderr();
            terrace_ingest::derive::derive_areas(&db, &mut progress).await?;
            terrace_ingest::derive::link_to_uprns(&db, &mut progress).await?;
            Ok(())
        }
        ["migrate"] => {
            store().await?;
            eprintln!("migrated");
            Ok(())
        }
        ["openapi"] => {
            for (file, text) in generated_docs() {
                let path = root().join(file);
                std::fs::write(&path, text)?;
                eprintln!("wrote {}", path.display());
            }
            Ok(())
        }
        ["openapi", "--check"] => {
            for (file, text) in generated_docs() {
                let committed = std::fs::read_to_string(root().join(file)).unwrap_or_default();
                if committed != text {
                    bail!("{file} differs from the code; run `cargo xtask openapi`");
                }
                eprintln!("{file} matches the code");
            }
            Ok(())
        }
        ["bench", "address", rest @ ..] => {
            let rest: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
            let n = opt(&rest, "--addresses")
                .map(|s| s.parse())
                .transpose()?
                .unwrap_or(1_000_000);
            bench::address(n).await
        }
        _ => {
            eprintln!("{USAGE}");
            bail!("unknown command")
        }
    }
}
