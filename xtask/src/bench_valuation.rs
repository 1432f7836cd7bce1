//! `cargo xtask bench valuation`: the valuation vintage build and `POST /v1/valuation/estimate`
//! over a generated register of `--addresses N` (default 1,000,000) with the energy certificates
//! and Price Paid history of its dwellings (`terrace_fixturegen::sales_world`, the fixture world's
//! own draws), loaded by the release loaders. Measured: each load, `xtask build` in all, the
//! vintage step within it (the seconds its own report line states), and the estimate with wrk at
//! 64 connections (p50, p99) on UPRNs of the register. Figures are printed and written to
//! target/bench-valuation/results.json; nothing is asserted.

use crate::bench::{
    Bench, BenchStore, SizedBench, bench_account, bench_serve, measure_route, xtask_build,
    xtask_load,
};
use std::time::Instant;

/// The seconds the valuation step's own report line states ("... in 12.3s").
fn vintage_seconds(build_log: &str) -> Option<f64> {
    build_log
        .lines()
        .filter(|l| l.contains("[valuation] vintage"))
        .filter_map(|l| l.rsplit(" in ").next())
        .filter_map(|t| t.trim().trim_end_matches('s').parse().ok())
        .next_back()
}

pub async fn valuation(opts: SizedBench) -> anyhow::Result<()> {
    let n = opts.size;
    let with_wrk = crate::bench::require_wrk().is_ok();
    let Bench {
        dir,
        terrace,
        xtask,
    } = Bench::prepare_with("bench-valuation", false, with_wrk)?;
    eprintln!("generating a register of {n} addresses with its certificates and sales");
    let t = Instant::now();
    let cfg = terrace_fixturegen::Config {
        malformed_rows: false,
        ..terrace_fixturegen::Config::large(n)
    };
    let world = terrace_fixturegen::sales_world(&cfg, &dir)?;
    let gen_secs = t.elapsed().as_secs_f64();
    let store = BenchStore::scratch(&dir, &opts);
    let backend = store.backend();
    let mut loads = Vec::new();
    for (dataset, stat) in [
        ("addressbase", &world.register),
        ("epc", &world.certificates),
        ("price_paid", &world.sales),
    ] {
        let path = dir.join(&stat.rel);
        eprintln!("loading {} ({dataset}, {} rows)", path.display(), stat.rows);
        let (secs, report) = xtask_load(&xtask, &store, dataset, &path)?;
        eprintln!(
            "  {} rows in {secs:.1} s ({:.0} rows/s)",
            stat.rows,
            stat.rows as f64 / secs.max(1e-9)
        );
        loads.push(serde_json::json!({
            "dataset": dataset, "rows": stat.rows, "seconds": secs, "counts": report["counts"],
        }));
    }
    eprintln!("xtask build (links, market, valuation vintage)");
    let (build_secs, log) = xtask_build(&xtask, &store)?;
    let vintage_line = log
        .lines()
        .rfind(|l| l.contains("[valuation] vintage"))
        .unwrap_or("(no vintage line)")
        .to_string();
    let vintage_secs = vintage_seconds(&log);
    eprintln!(
        "{backend}; {n} addresses ({} dwellings), {} certificates, {} sales generated in {gen_secs:.1} s; xtask build {build_secs:.1} s, of which the vintage {}\n  {vintage_line}",
        world.dwellings,
        world.certificates.rows,
        world.sales.rows,
        vintage_secs.map_or("(not stated)".into(), |s| format!("{s:.1} s"))
    );
    let mut figures = Vec::new();
    let mut load_averages = Vec::new();
    if with_wrk {
        let key = bench_account(&terrace, &store)?;
        let _server = bench_serve(&terrace, &store)?;
        let bodies: Vec<String> = world
            .sample
            .iter()
            .map(|u| serde_json::json!({ "uprn": u }).to_string())
            .collect();
        let (f, load) = measure_route(
            &dir,
            &key,
            "POST",
            &bodies,
            Some("/v1/valuation/estimate"),
            "POST valuation/estimate",
            opts.secs,
        )?;
        figures.push(f);
        load_averages.push(load);
    } else {
        eprintln!("wrk is not installed: the estimate run is skipped");
    }
    let results = serde_json::json!({
        "addresses": n, "dwellings": world.dwellings, "backend": backend,
        "certificates": world.certificates.rows, "sales": world.sales.rows,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "generate_seconds": gen_secs, "loads": loads, "build_seconds": build_secs,
        "vintage_seconds": vintage_secs, "vintage_line": vintage_line,
        "load_averages": load_averages, "runs": figures,
    });
    let out = dir.join("results.json");
    std::fs::write(&out, serde_json::to_string_pretty(&results)?)?;
    eprintln!("results: {}", out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::vintage_seconds;

    #[test]
    fn reads_the_vintage_line_seconds() {
        let log = "[market] x\n[valuation] vintage 2026-06 (avm-1): 10 valued, 1 refused of 11 UPRNs; 5 calibration sales, interval coverage 80.0% in 12.5s\n";
        assert_eq!(vintage_seconds(log), Some(12.5));
        assert_eq!(
            vintage_seconds("[valuation] no category A sales loaded"),
            None
        );
    }
}
