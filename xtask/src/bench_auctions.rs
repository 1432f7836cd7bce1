//! `cargo xtask bench auctions`: the auction lot feed's load and derive step (UPRN matching and
//! re-offer links) and `GET /v1/auctions/lots` and `GET /v1/auctions/stats` at 64 connections,
//! over `--lots N` (default 500,000) generated lots in the feed's CSV layout (docs/DATA.md),
//! offering addresses of a generated register (its sample, so properties are re-offered) with a
//! tenth of land plots whose address no register holds (left unmatched). Measured: the load (lots
//! per second), `xtask build` (its `auction lots` line gives lots, properties and the UPRN
//! links; the match rate is linked / lots), and the two routes with wrk (p50, p99). Figures are
//! printed and written to target/bench-auctions/results.json; nothing is asserted.

use crate::bench::{
    Bench, BenchStore, SizedBench, bench_account, bench_serve, measure_route, unit, write_register,
    xtask_build, xtask_load,
};
use std::io::Write;
use std::path::Path;
use std::time::Instant;
use terrace_analytics::SplitMix64;

const HOUSES: [&str; 6] = [
    "allsop",
    "savills",
    "acuitus",
    "barnettross",
    "pugh",
    "clive_emson",
];
const OUTCOMES: [&str; 11] = [
    "sold",
    "sold",
    "sold",
    "sold",
    "sold",
    "unsold",
    "unsold",
    "withdrawn",
    "sold_prior",
    "sold_after",
    "postponed",
];

fn quoted(s: &str) -> String {
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Writes the feed; returns (lots, districts).
fn write_feed(
    path: &Path,
    n: usize,
    sample: &[terrace_matcher::AddressEntry],
) -> anyhow::Result<Vec<String>> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(
        out,
        "auction_house,auction_date,lot_number,address,postcode,lot_type,tenure,vacant,rent_passing_pa,guide_price_low,guide_price_high,outcome,hammer_price,net_initial_yield_pct,source_url"
    )?;
    let mut r = SplitMix64::new(42);
    let start = chrono::NaiveDate::from_ymd_opt(2015, 1, 14)
        .ok_or_else(|| anyhow::anyhow!("start date"))?;
    let mut districts = std::collections::BTreeSet::new();
    for i in 0..n {
        let a = &sample[(r.next_u64() % sample.len() as u64) as usize];
        let postcode = a.postcode.clone().unwrap_or_default();
        if let Some(d) = postcode.split(' ').next() {
            districts.insert(d.to_string());
        }
        let address = if unit(&mut r) < 0.1 {
            format!("Land at Bench Field plot {i}")
        } else {
            let mut parts = Vec::new();
            if let Some(s) = &a.saon {
                parts.push(s.clone());
            }
            let street = a.street.clone().unwrap_or_default();
            match &a.paon {
                Some(p) => parts.push(format!("{p} {street}")),
                None => parts.push(street),
            }
            if let Some(t) = &a.town {
                parts.push(t.clone());
            }
            parts.join(", ")
        };
        let house = HOUSES[i % HOUSES.len()];
        // One sale a fortnight per house over eleven years.
        let sale = (i / HOUSES.len() / 60) as u64 % 290;
        let date = start + chrono::Days::new(14 * sale);
        let commercial = unit(&mut r) < 0.15;
        let value = 120_000.0 + 400_000.0 * unit(&mut r);
        let low = ((value * 0.8 / 5_000.0).round() * 5_000.0) as i64;
        let high = if unit(&mut r) < 0.5 {
            Some(low + 20_000)
        } else {
            None
        };
        let outcome = OUTCOMES[(r.next_u64() % OUTCOMES.len() as u64) as usize];
        let sold = matches!(outcome, "sold" | "sold_prior" | "sold_after");
        let hammer =
            (sold && unit(&mut r) < 0.7).then(|| (low as f64 * (1.0 + 0.3 * unit(&mut r))) as i64);
        let rent = commercial.then_some((value * 0.07) as i64);
        let niy = commercial.then(|| (700.0 / (1.0 + unit(&mut r))).round() / 100.0);
        writeln!(
            out,
            "{house},{date},{},{},{postcode},{},{},{},{},{low},{},{outcome},{},{},https://auctions.example.org/{house}/{date}/{}",
            i % 1000 + 1 + 1000 * (i / (HOUSES.len() * 60 * 290)),
            quoted(&address),
            if commercial {
                "commercial"
            } else {
                "residential"
            },
            if commercial { "leasehold" } else { "freehold" },
            !commercial,
            rent.map(|x| x.to_string()).unwrap_or_default(),
            high.map(|x| x.to_string()).unwrap_or_default(),
            hammer.map(|x| x.to_string()).unwrap_or_default(),
            niy.map(|x| x.to_string()).unwrap_or_default(),
            i,
        )?;
    }
    out.flush()?;
    Ok(districts.into_iter().collect())
}

pub async fn auctions(opts: SizedBench) -> anyhow::Result<()> {
    let n = opts.size;
    let with_wrk = crate::bench::require_wrk().is_ok();
    let Bench {
        dir,
        terrace,
        xtask,
    } = Bench::prepare_with("bench-auctions", false, with_wrk)?;
    let addresses = (n / 2).clamp(20_000, 500_000);
    eprintln!("generating a register of {addresses} addresses and {n} lots");
    let t = Instant::now();
    let register = dir.join("addressbase.csv");
    let sample = write_register(&register, addresses)?;
    let feed = dir.join("auction_lots.csv");
    let districts = write_feed(&feed, n, &sample)?;
    let gen_secs = t.elapsed().as_secs_f64();
    let store = BenchStore::scratch(&dir, &opts);
    let backend = store.backend();
    eprintln!("loading the register");
    xtask_load(&xtask, &store, "addressbase", &register)?;
    eprintln!("loading {n} lots (auction_lots)");
    let (load_secs, report) = xtask_load(&xtask, &store, "auction_lots", &feed)?;
    eprintln!("xtask build (the auction lot links among the other derived steps)");
    let (build_secs, log) = xtask_build(&xtask, &store)?;
    let line = log
        .lines()
        .find(|l| l.contains("[derive] auction lots:"))
        .unwrap_or_default()
        .to_string();
    // "auction lots: N (P properties); linked to a UPRN in this run: L; ..."
    let linked: f64 = line
        .split("linked to a UPRN in this run: ")
        .nth(1)
        .and_then(|s| s.split(';').next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0.0);
    let match_rate = linked / n.max(1) as f64;
    eprintln!(
        "{backend}; {n} lots generated in {gen_secs:.1} s; loaded in {load_secs:.1} s ({:.0} lots/s); xtask build {build_secs:.1} s; match rate {:.1}% (a tenth are land plots no register holds)\n  {line}",
        n as f64 / load_secs.max(1e-9),
        100.0 * match_rate
    );
    let mut figures = Vec::new();
    let mut load_averages = Vec::new();
    if with_wrk {
        let key = bench_account(&terrace, &store)?;
        let _server = bench_serve(&terrace, &store)?;
        let mut lots: Vec<String> = districts
            .iter()
            .step_by(2)
            .map(|d| format!("/v1/auctions/lots?postcode_district={d}&limit=50"))
            .collect();
        lots.push("/v1/auctions/lots?limit=50".into());
        lots.push("/v1/auctions/lots?sold_only=true&with_achieved_price=true&limit=50".into());
        lots.push(
            "/v1/auctions/lots?auctioneer=allsop&date_from=2020-01-01&date_to=2020-12-31".into(),
        );
        let (f, load) = measure_route(
            &dir,
            &key,
            "GET",
            &lots,
            None,
            "GET auctions/lots",
            opts.secs,
        )?;
        figures.push(f);
        load_averages.push(load);
        let stats: Vec<String> = districts
            .iter()
            .map(|d| format!("/v1/auctions/stats?postcode_district={d}&quarter_from=2022-01-01"))
            .collect();
        let (f, load) = measure_route(
            &dir,
            &key,
            "GET",
            &stats,
            None,
            "GET auctions/stats",
            opts.secs,
        )?;
        figures.push(f);
        load_averages.push(load);
    } else {
        eprintln!("wrk is not installed: the HTTP runs are skipped");
    }
    let results = serde_json::json!({
        "lots": n, "addresses": addresses, "districts": districts.len(), "backend": backend,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "generate_seconds": gen_secs, "load_seconds": load_secs,
        "lots_per_second": n as f64 / load_secs.max(1e-9),
        "load_report": report, "build_seconds": build_secs, "auction_line": line,
        "match_rate": match_rate, "load_averages": load_averages, "runs": figures,
    });
    let out = dir.join("results.json");
    std::fs::write(&out, serde_json::to_string_pretty(&results)?)?;
    eprintln!("results: {}", out.display());
    Ok(())
}
