//! `cargo xtask bench market`: the market build and the market endpoints on synthetic sales.
//!
//! Generates `districts` postcode districts (in areas of 20) with `years` of sales drawn from
//! known true indices (`terrace_analytics::simulate_sales`), writes them in the Price Paid
//! format, loads them through the release loader, times `xtask build` (the market tables), then
//! measures `GET /v1/market/index-series` and `POST /v1/market/volume-series` with wrk at 64
//! connections. Prints the figures and writes `target/bench-market/results.json`; asserts
//! nothing.

use crate::bench::{API, Bench, bench_account, bench_env, bench_serve, run, write_script, wrk};
use anyhow::Context;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Instant;
use terrace_analytics::{self as an, Month, SplitMix64};

/// The district codes: areas `XA`, `XB`, ... of 20 districts each.
pub(crate) fn districts(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let area = format!(
                "{}{}",
                (b'A' + (i / 20 / 26 % 26) as u8) as char,
                (b'A' + (i / 20 % 26) as u8) as char
            );
            format!("{area}{}", i % 20 + 1)
        })
        .collect()
}

fn write_sales(
    path: &std::path::Path,
    codes: &[String],
    years: usize,
    per_month: f64,
) -> anyhow::Result<u64> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let months = years * 12;
    let first = Month::new(2026 - years as i32, 1).context("month")?;
    let mut draws = SplitMix64::new(11);
    let mut n = 0u64;
    for (d, code) in codes.iter().enumerate() {
        let truth =
            an::cyclical_log_index(months, months / 2, 0.004, 0.006, 90.0, 0.002, &mut draws);
        let mut spec = an::SimSpec::typical(first, truth, (per_month * 60.0) as usize, per_month);
        spec.key_offset = d as u64 * 1_000_000;
        // Sales registered after the last month are not in the file yet, as in a real one.
        spec.data_through = Some(first.add_months(months as i32 - 1));
        for s in an::simulate_sales(&spec, &mut draws) {
            n += 1;
            let sale = &s.sale;
            writeln!(
                out,
                "\"{{{n:08X}-0000-0000-0000-000000000000}}\",\"{}\",\"{}-{:02} 00:00\",\"{code} 1AA\",\"{}\",\"{}\",\"{}\",\"{}\",\"\",\"BENCH STREET\",\"\",\"BENCHTON\",\"BENCHTON\",\"BENCHSHIRE\",\"A\",\"A\"",
                sale.price,
                &sale.month.first_day()[..7],
                sale.day.clamp(1, 28),
                sale.property_type.code(),
                if sale.new_build { "Y" } else { "N" },
                sale.tenure.code(),
                sale.property.unwrap_or_default() % 1_000_000,
            )?;
        }
    }
    out.flush()?;
    Ok(n)
}

pub async fn market(n_districts: usize, years: usize, per_month: f64) -> anyhow::Result<()> {
    let Bench {
        dir,
        terrace,
        xtask,
    } = Bench::prepare("bench-market", false)?;
    let codes = districts(n_districts);
    eprintln!("simulating {n_districts} districts x {years} years at {per_month} sales a month");
    let t = Instant::now();
    let sales_file = dir.join("pp-bench.csv");
    let n_sales = write_sales(&sales_file, &codes, years, per_month)?;
    let gen_secs = t.elapsed().as_secs_f64();
    let data_dir = dir.join("data");
    let store = crate::bench::BenchStore::sqlite(&data_dir);
    let env = |c: &mut Command| bench_env(c, &store);
    eprintln!("loading {n_sales} sales through the Price Paid loader (SQLite)");
    let t = Instant::now();
    let mut load = Command::new(&xtask);
    load.args(["load", "price_paid"])
        .arg(&sales_file)
        .stdout(Stdio::null());
    env(&mut load);
    run(&mut load)?;
    let load_secs = t.elapsed().as_secs_f64();
    eprintln!("cargo xtask build (links, then the market tables)");
    let t = Instant::now();
    let mut build = Command::new(&xtask);
    build.arg("build").stdout(Stdio::null());
    env(&mut build);
    run(&mut build)?;
    let build_secs = t.elapsed().as_secs_f64();

    let key = bench_account(&terrace, &store)?;
    let _server = bench_serve(&terrace, &store)?;

    let series: Vec<String> = codes
        .iter()
        .map(|c| format!("/v1/market/index-series?district={c}"))
        .collect();
    let bodies: Vec<String> = codes
        .iter()
        .map(|c| serde_json::json!({"district": c, "start": "2016-01", "end": "2025-12", "metrics": ["txn_count", "median_price", "p25_price", "p75_price"]}).to_string())
        .collect();
    write_script(&dir.join("series.lua"), &key, "GET", &series, None)?;
    write_script(
        &dir.join("volume.lua"),
        &key,
        "POST",
        &bodies,
        Some("/v1/market/volume-series"),
    )?;
    let secs = 15;
    let figures = vec![
        wrk(
            "GET index-series (free)",
            &format!("http://{API}"),
            Some(&dir.join("series.lua")),
            secs,
        )?,
        wrk(
            "POST volume-series (free)",
            &format!("http://{API}"),
            Some(&dir.join("volume.lua")),
            secs,
        )?,
    ];
    eprintln!(
        "{n_districts} districts, {years} years, {n_sales} sales: generated in {gen_secs:.1} s, loaded in {load_secs:.1} s, `xtask build` in {build_secs:.1} s"
    );
    let results = serde_json::json!({
        "districts": n_districts, "years": years, "sales": n_sales,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "generate_seconds": gen_secs, "load_seconds": load_secs, "build_seconds": build_secs,
        "runs": figures,
    });
    let out = dir.join("results.json");
    std::fs::write(&out, serde_json::to_string_pretty(&results)?)?;
    eprintln!("results: {}", out.display());
    Ok(())
}
