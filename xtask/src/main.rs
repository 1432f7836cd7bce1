//! `cargo xtask`: operator and developer tasks.
//!
//!   cargo xtask fixtures [--seed N] [--out DIR]   generate the synthetic fixture world
//!   cargo xtask load DATASET FILE...              load real files (progress + row accounting)
//!   cargo xtask load --list                       the datasets (from terrace_ingest::DATASETS)
//!   cargo xtask build                             derive areas, link sales to UPRNs, build the market tables
//!   cargo xtask build heights                     the building heights step alone (JSON report)
//!   cargo xtask validate index                    compare local authority indices with the loaded UK HPI
//!   cargo xtask migrate                           apply migrations
//!   cargo xtask openapi [--check]                 write (or check) docs/openapi.json and docs/mcp-tools.json
//!   cargo xtask bench address [--addresses N] [--secs S] [--only bare,bare-script,uprn,...] [--rounds N] [--log LEVEL] [--reuse] [--warmup S]
//!                                                 benchmark the address endpoints (PostgreSQL when
//!                                                 DATABASE_URL names one)
//!   cargo xtask bench market [--districts N] [--years Y] [--per-month R]   benchmark the market build and endpoints
//!   cargo xtask bench areas [--addresses N] [--secs S] [--reuse]   benchmark areas resolve and reverse-geocode
//!   cargo xtask bench land [--parcels N] [--secs S]   benchmark the INSPIRE load, the land build and plot utilisation
//!   cargo xtask bench buildings [--footprints N] [--secs S]   benchmark building heights from LIDAR tiles and buildings/physical
//!   cargo xtask bench sourcing [--parcels N] [--secs S]   benchmark the parcel search and the area report over the land world
//!   cargo xtask bench listings [--listings N] [--secs S]   benchmark the listings load, the listing indices and the asking index
//!   cargo xtask bench auctions [--lots N] [--secs S]   benchmark the auction lot load, its UPRN links and auctions lots and stats
//!   cargo xtask bench commercial [--hereditaments N] [--secs S]   benchmark the rating lists' load, the capital index build, the indices and commercial sourcing
//!   cargo xtask bench valuation [--addresses N] [--secs S]   benchmark the valuation vintage build and the estimate
//!   cargo xtask bench resolve --real DIR [--postcodes FILE] [--held-out N] [--http [--secs S]]
//!                                                 the matcher on real addresses (and the service
//!                                                 over HTTP with `--http`)
//!
//! The store is chosen as the service chooses it: DATABASE_URL, else TERRACE_DATA_DIR/terrace.sqlite3.

mod backtest;
mod bench;
mod bench_areas;
mod bench_auctions;
mod bench_buildings;
mod bench_commercial;
mod bench_land;
mod bench_listings;
mod bench_market;
mod bench_resolve;
mod bench_valuation;

use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use terrace_ingest::{Dataset, Progress};

const USAGE: &str = "usage: cargo xtask <fixtures|load|build|backtest|validate|migrate|openapi|bench> ...
  fixtures [--seed N] [--out DIR]      generate the synthetic fixture world into fixtures/
  load DATASET FILE...                 load files; DATASET is a name or alias `cargo xtask load --list` lists
  load --list                          list the datasets (name, provenance source, aliases)
  build                                derive each address's area, link sales to UPRNs, build the market indices and volumes, then the valuation vintage
  build heights                        the building heights step alone, as a JSON line (the buildings bench times it)
  backtest avm [--months N] [--simulated | --realistic] [FILES]
                                       replay the valuation model month by month (only sales registered by each vintage)
                                       beside two baselines; writes the accuracy rows. FILES: Price Paid files loaded into
                                       a fresh SQLite store; --simulated: the simulated market; --realistic: the simulated
                                       market with type trends, a 12% new-build premium and heavier-tailed sale noise;
                                       else the configured store
  validate index                       compare the local authority indices with the loaded UK HPI (correlation, largest annual gap)
  migrate                              apply pending migrations
  openapi [--check]                    write docs/openapi.json and docs/mcp-tools.json (or fail if they differ from the code)
  bench address [--addresses N] [--secs S] [--only bare,bare-script,uprn,postcode,council,sales,auto,resolve] [--rounds N] [--log LEVEL] [--reuse] [--warmup S]
                                       benchmark the address endpoints on a generated register
                                       (on PostgreSQL when DATABASE_URL names one)
  bench market [--districts N] [--years Y] [--per-month R]
                                       time the market build and the market endpoints on synthetic sales
  bench areas [--addresses N] [--secs S] [--reuse]
                                       benchmark areas resolve and reverse-geocode on a generated register
  bench land [--parcels N] [--secs S]
                                       time the INSPIRE load (polygons/s, peak memory), the land build
                                       and plot utilisation on generated parcels
  bench buildings [--footprints N] [--secs S]
                                       time building heights from generated LIDAR tiles (footprints/s,
                                       peak memory) and buildings/physical at 64 connections
  bench sourcing [--parcels N] [--secs S]
                                       the same world: the parcel search at 64 connections and the
                                       area report of a whole authority
  bench auctions [--lots N] [--secs S]
                                       benchmark the auction lot load (rows/s, match rate) and auctions lots and stats
  bench commercial [--hereditaments N] [--secs S]
                                       a national rating list (four lists) and category B sales: the
                                       loads, the capital index build, the indices, commercial sourcing
  bench listings [--listings N] [--secs S]
                                       time the listings load (snapshots/s), the listing indices' build
                                       and the asking index on a generated feed
  bench valuation [--addresses N] [--secs S]
                                       time the valuation vintage build on a generated register with its
                                       certificates and sales, and the estimate
  bench resolve --real DIR [--postcodes FILE] [--held-out N] [--seed S] [--ablate RULES] [--steps] [--dump FILE] [--http [--secs S]]
                                       resolve accuracy and speed on a labelled task built from real EPC files;
                                       --http: also POST /v1/address/resolve to the release service with wrk";

/// A sized bench's options: its size (`flag`, else `default`), its seconds per route (`--secs`,
/// default 15) and the PostgreSQL store it runs on (a `postgres://` `DATABASE_URL`, else its own
/// SQLite store).
fn sized_bench(rest: &[&str], flag: &str, default: usize) -> anyhow::Result<bench::SizedBench> {
    let rest: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
    let size = opt(&rest, flag)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(default);
    let secs = opt(&rest, "--secs")
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(15);
    let database_url = std::env::var("DATABASE_URL")
        .ok()
        .filter(|u| u.starts_with("postgres://") || u.starts_with("postgresql://"));
    Ok(bench::SizedBench {
        size,
        secs,
        database_url,
    })
}

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

/// The same allocator as the `terrace` binary (see gateway/src/main.rs).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

/// This process's peak resident memory (`VmHWM` in /proc/self/status), in kB, where Linux says.
fn peak_memory_kb() -> Option<u64> {
    std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

async fn store() -> anyhow::Result<terrace_store::Db> {
    let config = terrace_store::StoreConfig::from_env().map_err(anyhow::Error::msg)?;
    Ok(config.open().await?)
}

/// The datasets `load` accepts: one line each, from the dataset table.
fn dataset_list() -> String {
    terrace_ingest::DATASETS
        .iter()
        .map(|d| {
            format!(
                "  {:<24} {:<44} aliases: {}",
                d.name,
                d.source,
                d.aliases.join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
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
                        "peak_memory_kb": peak_memory_kb(),
                    })
                );
            }
            Ok(())
        }
        ["load"] | ["load", "--list"] => {
            println!("{}", dataset_list());
            Ok(())
        }
        ["build", "heights"] => {
            // The building heights step alone (`cargo xtask bench buildings` times it).
            let db = store().await?;
            let t = std::time::Instant::now();
            let r = terrace_land::heights::build(&db, &mut |s| eprintln!("{s}")).await?;
            println!(
                "{}",
                serde_json::json!({
                    "tiles": r.tiles, "tiles_read": r.tiles_read, "computed": r.computed,
                    "with_height": r.with_height, "uncovered": r.uncovered, "notes": r.notes,
                    "seconds": t.elapsed().as_secs_f64(), "peak_memory_kb": peak_memory_kb(),
                })
            );
            Ok(())
        }
        ["build"] => {
            let db = store().await?;
            let derived = terrace_build::derive::derive_all(&db, &mut Progress::stderr()).await?;
            if let Some(table) = derived.market.backtest {
                eprintln!("[market] national backtest (log index, rolling origin):\n{table}");
            }
            Ok(())
        }
        ["validate", "index"] => {
            let db = store().await?;
            let rows = terrace_market::validate::compare_with_hpi(&db).await?;
            print!("{}", terrace_market::validate::table(&rows));
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
        ["backtest", "avm", rest @ ..] => backtest::avm(rest).await,
        ["bench", "market", rest @ ..] => {
            let flag = |name: &str, default: f64| -> anyhow::Result<f64> {
                match rest.iter().position(|a| *a == name) {
                    Some(i) => rest
                        .get(i + 1)
                        .and_then(|v| v.parse().ok())
                        .with_context(|| format!("{name} takes a number")),
                    None => Ok(default),
                }
            };
            bench_market::market(
                flag("--districts", 3000.0)? as usize,
                flag("--years", 30.0)? as usize,
                flag("--per-month", 28.0)?,
            )
            .await
        }
        ["bench", "address", rest @ ..] => {
            let rest: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
            let n = opt(&rest, "--addresses")
                .map(|s| s.parse())
                .transpose()?
                .unwrap_or(1_000_000);
            let secs = opt(&rest, "--secs")
                .map(|s| s.parse())
                .transpose()?
                .unwrap_or(15);
            let only = opt(&rest, "--only")
                .map(|s| s.split(',').map(str::to_string).collect())
                .unwrap_or_default();
            let rounds: usize = opt(&rest, "--rounds")
                .map(|s| s.parse())
                .transpose()?
                .unwrap_or(1);
            anyhow::ensure!(rounds >= 1, "--rounds must be at least 1");
            let database_url = std::env::var("DATABASE_URL")
                .ok()
                .filter(|u| u.starts_with("postgres://") || u.starts_with("postgresql://"));
            bench::address(bench::AddressBench {
                addresses: n,
                secs,
                only,
                rounds,
                log: opt(&rest, "--log").unwrap_or_else(|| "info".into()),
                database_url,
                reuse: rest.iter().any(|a| a == "--reuse"),
                warmup: opt(&rest, "--warmup")
                    .map(|s| s.parse())
                    .transpose()?
                    .unwrap_or(2),
            })
            .await
        }
        ["bench", "areas", rest @ ..] => {
            let rest: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
            let n = opt(&rest, "--addresses")
                .map(|s| s.parse())
                .transpose()?
                .unwrap_or(1_000_000);
            let secs = opt(&rest, "--secs")
                .map(|s| s.parse())
                .transpose()?
                .unwrap_or(15);
            let database_url = std::env::var("DATABASE_URL")
                .ok()
                .filter(|u| u.starts_with("postgres://") || u.starts_with("postgresql://"));
            bench_areas::areas(bench_areas::AreasBench {
                addresses: n,
                secs,
                database_url,
                reuse: rest.iter().any(|a| a == "--reuse"),
            })
            .await
        }
        ["bench", "land", rest @ ..] => {
            bench_land::land(
                sized_bench(rest, "--parcels", 2_000_000)?,
                bench_land::Routes::Land,
            )
            .await
        }
        ["bench", "buildings", rest @ ..] => {
            bench_buildings::buildings(sized_bench(rest, "--footprints", 1_000_000)?).await
        }
        ["bench", "sourcing", rest @ ..] => {
            bench_land::land(
                sized_bench(rest, "--parcels", 800_000)?,
                bench_land::Routes::Sourcing,
            )
            .await
        }
        ["bench", "commercial", rest @ ..] => {
            bench_commercial::commercial(sized_bench(rest, "--hereditaments", 2_000_000)?).await
        }
        ["bench", "auctions", rest @ ..] => {
            bench_auctions::auctions(sized_bench(rest, "--lots", 500_000)?).await
        }
        ["bench", "listings", rest @ ..] => {
            bench_listings::listings(sized_bench(rest, "--listings", 500_000)?).await
        }
        ["bench", "valuation", rest @ ..] => {
            bench_valuation::valuation(sized_bench(rest, "--addresses", 1_000_000)?).await
        }
        ["bench", "resolve", rest @ ..] => {
            let rest: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
            let dir = opt(&rest, "--real").context("bench resolve needs --real DIR")?;
            bench_resolve::resolve_real(bench_resolve::Options {
                dir: PathBuf::from(dir),
                postcodes: opt(&rest, "--postcodes").map(PathBuf::from),
                held_out: opt(&rest, "--held-out")
                    .map(|s| s.parse())
                    .transpose()?
                    .unwrap_or(300),
                seed: opt(&rest, "--seed")
                    .map(|s| s.parse())
                    .transpose()?
                    .unwrap_or(19),
                ablate: opt(&rest, "--ablate")
                    .map(|s| ablate_mask(&s))
                    .transpose()?
                    .unwrap_or(0),
                steps: rest.iter().any(|a| a == "--steps"),
                dump: opt(&rest, "--dump").map(PathBuf::from),
                http_secs: rest
                    .iter()
                    .any(|a| a == "--http")
                    .then(|| opt(&rest, "--secs").map(|s| s.parse()).transpose())
                    .transpose()?
                    .map(|s| s.unwrap_or(15)),
            })
            .await
        }
        _ => {
            eprintln!("{USAGE}");
            bail!("unknown command")
        }
    }
}

/// `--ablate building_name,floor,...`: the matcher rules a `bench resolve` run switches off
/// (conflict kinds by name, `conflicts` for all of them, `flat_house_added`, `only_number`).
fn ablate_mask(list: &str) -> anyhow::Result<u32> {
    let mut mask = 0;
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        mask |= match name {
            "conflicts" => 0xff,
            "flat_house_added" => terrace_matcher::ABLATE_FLAT_HOUSE_ADDED,
            "only_number" => terrace_matcher::ABLATE_ONLY_NUMBER,
            other => terrace_matcher::Conflict::parse(other)
                .with_context(|| format!("--ablate: unknown rule {other}"))?
                .bit(),
        };
    }
    Ok(mask)
}
