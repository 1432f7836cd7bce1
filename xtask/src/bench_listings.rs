//! `cargo xtask bench listings`: the listings loader, the listing indices' build and `GET
//! /v1/market/asking-index`, over a generated feed of `--listings N` (default 500,000) listings in
//! the project's JSON-lines format, each seen weekly 5 to 15 times (about 5,000,000 snapshots),
//! sales and lets in 200 postcode districts from 2022 to mid-2026, asking prices drawn from a known
//! monthly trend with reductions and status changes. Every listing carries its UPRN, so the build
//! spends nothing on the address matcher and its time is the indices'. Measured: the load (listings
//! and snapshots per second), `xtask build` (the asking and rent indices; its own report line says
//! how many series and points), and the asking index with wrk at 64 connections (p50, p99) over
//! district, postcode area and national series. Figures are printed and written to
//! target/bench-listings/results.json; nothing is asserted.

use crate::bench::{
    Bench, BenchStore, SizedBench, bench_account, bench_serve, measure_route, unit, xtask_build,
    xtask_load,
};
use std::io::Write;
use std::path::Path;
use std::time::Instant;
use terrace_analytics::SplitMix64;

const DISTRICTS: usize = 200;
/// The first Monday of 2022 and the weeks after it in which a listing may first appear.
const FIRST_WEEK: (i32, u32, u32) = (2022, 1, 3);
const WEEKS: u64 = 230;
const TYPES: [(&str, f64); 4] = [
    ("Flat", 0.8),
    ("Terraced house", 0.95),
    ("Semi-detached house", 1.05),
    ("Detached house", 1.35),
];

/// A standard normal draw (Box-Muller).
fn normal(r: &mut SplitMix64) -> f64 {
    let (a, b) = (unit(r).max(1e-12), unit(r));
    (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
}

/// Writes the feed; returns (listings, snapshots).
fn write_feed(path: &Path, n: usize, codes: &[String]) -> anyhow::Result<(u64, u64)> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut r = SplitMix64::new(17);
    let start = chrono::NaiveDate::from_ymd_opt(FIRST_WEEK.0, FIRST_WEEK.1, FIRST_WEEK.2)
        .ok_or_else(|| anyhow::anyhow!("first week"))?;
    let base: Vec<f64> = (0..codes.len())
        .map(|d| 150_000.0 + 300_000.0 * (d as f64 / codes.len() as f64))
        .collect();
    let mut snapshots = 0u64;
    let mut line = String::with_capacity(2048);
    for i in 0..n {
        let d = (r.next_u64() % codes.len() as u64) as usize;
        let (ptype, factor) = TYPES[(r.next_u64() % TYPES.len() as u64) as usize];
        let rent = unit(&mut r) < 0.3;
        let week = r.next_u64() % WEEKS;
        let first = start + chrono::Days::new(7 * week);
        // The known trend: 0.3% a month from January 2022.
        let level = (0.003 * week as f64 * 12.0 / 52.0).exp();
        let value = base[d] * level * factor * (0.15 * normal(&mut r)).exp();
        let mut price = if rent {
            ((value * 0.045 / 12.0 / 25.0).round() * 25.0).max(400.0) as i64
        } else {
            ((value / 1_000.0).round() * 1_000.0) as i64
        };
        let bedrooms = 1 + r.next_u64() % 5;
        let seen = 5 + r.next_u64() % 11;
        line.clear();
        line.push_str(&format!(
            "{{\"listing_id\":\"BL{i:08}\",\"channel\":\"{}\",\"address\":\"{} BENCH STREET, BENCHTON\",\"postcode\":\"{} {}AA\",\"uprn\":{},\"price\":{price},\"bedrooms\":{bedrooms},\"property_type\":\"{ptype}\",\"agent\":\"Agent {}\",\"first_seen\":\"{first}T09:00:00Z\",\"snapshots\":[",
            if rent { "rent" } else { "sale" },
            1 + i % 400,
            codes[d],
            1 + i % 9,
            970_000_000_001u64 + i as u64,
            r.next_u64() % 60,
        ));
        let mut status = "available";
        for k in 0..seen {
            let day = first + chrono::Days::new(7 * k);
            if k > 0 {
                let u = unit(&mut r);
                if u < 0.12 {
                    price = (price as f64 * 0.97) as i64 / 25 * 25;
                } else if u < 0.16 && k + 2 >= seen {
                    status = if rent { "let_agreed" } else { "under_offer" };
                }
            }
            if k > 0 {
                line.push(',');
            }
            line.push_str(&format!(
                "{{\"time\":\"{day}T06:00:00Z\",\"price\":{price},\"status\":\"{status}\"}}"
            ));
            snapshots += 1;
        }
        line.push_str("]}\n");
        out.write_all(line.as_bytes())?;
    }
    out.flush()?;
    Ok((n as u64, snapshots))
}

pub async fn listings(opts: SizedBench) -> anyhow::Result<()> {
    let n = opts.size;
    let with_wrk = crate::bench::require_wrk().is_ok();
    let Bench {
        dir,
        terrace,
        xtask,
    } = Bench::prepare_with("bench-listings", false, with_wrk)?;
    let codes = crate::bench_market::districts(DISTRICTS);
    eprintln!("generating {n} listings in {DISTRICTS} districts, seen weekly");
    let t = Instant::now();
    let feed = dir.join("listings_feed.jsonl");
    let (listings, snapshots) = write_feed(&feed, n, &codes)?;
    let gen_secs = t.elapsed().as_secs_f64();
    let store = BenchStore::scratch(&dir, &opts);
    let backend = store.backend();
    eprintln!("loading {listings} listings, {snapshots} snapshots (listings)");
    let (load_secs, report) = xtask_load(&xtask, &store, "listings", &feed)?;
    eprintln!("xtask build (the listing indices)");
    let (build_secs, log) = xtask_build(&xtask, &store)?;
    let index_lines: Vec<String> = log
        .lines()
        .filter(|l| l.contains(" index: "))
        .map(str::to_string)
        .collect();
    eprintln!(
        "{backend}; {listings} listings, {snapshots} snapshots generated in {gen_secs:.1} s; loaded in {load_secs:.1} s ({:.0} snapshots/s, {:.0} listings/s); xtask build {build_secs:.1} s\n  {}",
        snapshots as f64 / load_secs.max(1e-9),
        listings as f64 / load_secs.max(1e-9),
        index_lines.join("\n  ")
    );
    let mut figures = Vec::new();
    let mut load_averages = Vec::new();
    if with_wrk {
        let key = bench_account(&terrace, &store)?;
        let _server = bench_serve(&terrace, &store)?;
        let mut paths: Vec<String> = codes
            .iter()
            .step_by(3)
            .map(|c| format!("/v1/market/asking-index?area_type=district&area_code={c}"))
            .collect();
        let areas: std::collections::BTreeSet<String> = codes
            .iter()
            .map(|c| {
                c.trim_end_matches(|ch: char| ch.is_ascii_digit())
                    .to_string()
            })
            .collect();
        paths.extend(
            areas
                .iter()
                .map(|a| format!("/v1/market/asking-index?area_type=area&area_code={a}")),
        );
        paths.push("/v1/market/asking-index?area_type=national&start=2024-01".into());
        let (f, load) = measure_route(
            &dir,
            &key,
            "GET",
            &paths,
            None,
            "GET market/asking-index",
            opts.secs,
        )?;
        figures.push(f);
        load_averages.push(load);
    } else {
        eprintln!("wrk is not installed: the asking-index run is skipped");
    }
    let results = serde_json::json!({
        "listings": listings, "snapshots": snapshots, "backend": backend,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "generate_seconds": gen_secs, "load_seconds": load_secs,
        "snapshots_per_second": snapshots as f64 / load_secs.max(1e-9),
        "load_report": report, "build_seconds": build_secs, "index_lines": index_lines,
        "load_averages": load_averages, "runs": figures,
    });
    let out = dir.join("results.json");
    std::fs::write(&out, serde_json::to_string_pretty(&results)?)?;
    eprintln!("results: {}", out.display());
    Ok(())
}
