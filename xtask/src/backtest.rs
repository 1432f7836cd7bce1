//! `cargo xtask backtest avm [--months N] [--simulated | --realistic] [FILES]`: the valuation model replayed
//! month by month (terrace_valuation::backtest), on the configured store, on Price Paid files
//! loaded into a fresh SQLite store, or on the simulated market (typical, or realistic: type
//! trends, a larger new-build premium and a heavier tail of sale noise).

use anyhow::Context;
use std::path::Path;
use terrace_ingest::{Dataset, Progress};
use terrace_valuation::backtest;

pub async fn avm(rest: &[&str]) -> anyhow::Result<()> {
    let mut months = 12;
    let mut simulated = false;
    let mut realistic = false;
    let mut price_paid_only = false;
    let mut files = Vec::new();
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        match *a {
            "--months" => {
                months = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .context("--months takes a number")?;
            }
            "--simulated" => simulated = true,
            "--realistic" => realistic = true,
            "--price-paid-only" => price_paid_only = true,
            f => files.push(f.to_string()),
        }
    }
    if simulated || realistic {
        let mut market = if realistic {
            backtest::realistic_market(21, 6000, 110.0, 96)
        } else {
            backtest::simulated_market(21, 6000, 110.0, 96)
        };
        if price_paid_only {
            market.as_price_paid_only();
        }
        let last = market
            .sales
            .iter()
            .map(|s| s.month)
            .max()
            .context("no sales")?;
        let last = last.add_months(-1);
        let first = last.add_months(1 - months);
        let valued = backtest::replay(&market.sales, first, last);
        print!("{}", backtest::render(&backtest::table(&valued)));
        println!();
        print!(
            "{}",
            backtest::render_oracle(
                &backtest::oracle(&market, first, last, false),
                &backtest::oracle(&market, first, last, true)
            )
        );
        return Ok(());
    }
    let db = if files.is_empty() {
        super::store().await?
    } else {
        let dir = std::env::temp_dir().join(format!("terrace-backtest-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let config = terrace_store::StoreConfig {
            database_url: Some(format!(
                "sqlite://{}",
                dir.join("backtest.sqlite3").display()
            )),
            data_dir: dir.clone(),
            pool_size: 4,
        };
        let db = config.open().await?;
        let mut progress = Progress::stderr();
        for f in &files {
            let r = terrace_ingest::load_file(
                &db,
                Dataset::PricePaid,
                Path::new(f),
                Default::default(),
                &mut progress,
            )
            .await?;
            eprintln!(
                "[backtest] {f}: {} read, {} loaded, {} rejected",
                r.counts.read, r.counts.loaded, r.counts.rejected
            );
        }
        db
    };
    let report = backtest::backtest(&db, months, chrono::Utc::now().naive_utc(), &mut |s| {
        println!("{s}")
    })
    .await?;
    eprintln!(
        "[backtest] {} vintages, {} sales valued, {} accuracy rows written (basis replayed_vintage)",
        report.vintages, report.valued, report.rows_written
    );
    Ok(())
}
