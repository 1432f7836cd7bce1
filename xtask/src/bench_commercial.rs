//! `cargo xtask bench commercial`: a national rating list of `--hereditaments N` (default
//! 2,000,000) generated in the VOA's list-entries layout, one file per list (2010, 2017, 2023,
//! 2026), over 300 local authorities whose postcodes a generated ONS Postcode Directory places,
//! with Price Paid sales of category B, type O (two or three each for a tenth of the
//! hereditaments) for the commercial capital index. Measured: each list's load (entries per
//! second), `xtask build` (its `commercial rent index` and `commercial capital index` lines: the
//! build reads every entry of every list once and writes each series), the rent index of a local
//! authority, the capital index, and `POST /v1/sourcing/commercial` with wrk at 64 connections
//! (p50, p99), and the national rent index one call at a time (one built series read). Figures are printed and written to
//! target/bench-commercial/results.json; nothing is asserted.

use crate::bench::{
    Bench, BenchStore, SizedBench, bench_account, bench_serve, measure_route, timed_get, unit,
    xtask_build, xtask_load,
};
use std::io::Write;
use std::path::Path;
use std::time::Instant;
use terrace_analytics::SplitMix64;

/// Local authorities of the generated nation.
const LADS: usize = 300;
/// Postcode districts per authority, and postcodes per district.
const DISTRICTS: usize = 20;
const UNITS: usize = 50;
/// (description code, text, share of the stock in per mille).
const CODES: [(&str, &str, u64); 8] = [
    ("CS", "SHOP AND PREMISES", 330),
    ("CO", "OFFICES AND PREMISES", 200),
    ("IF", "FACTORY AND PREMISES", 120),
    ("CW", "WAREHOUSE AND PREMISES", 150),
    ("CR", "RESTAURANT AND PREMISES", 60),
    ("CL", "PUBLIC HOUSE AND PREMISES", 40),
    ("CH", "HOTEL AND PREMISES", 30),
    ("MH", "SURGERY AND PREMISES", 70),
];
const LISTS: [i32; 4] = [2010, 2017, 2023, 2026];

fn lad_code(i: usize) -> String {
    format!("E0{}", 7_000_001 + i)
}

/// The postcode area of authority `i`: two letters of its own.
fn area(i: usize) -> String {
    let a = (b'A' + (i / 26) as u8) as char;
    let b = (b'A' + (i % 26) as u8) as char;
    format!("{a}{b}")
}

fn postcode(lad: usize, district: usize, unit: usize) -> String {
    let l1 = (b'A' + (unit % 26) as u8) as char;
    let l2 = (b'A' + (unit / 26 % 26) as u8) as char;
    format!("{}{} {}{l1}{l2}", area(lad), district + 1, unit % 10)
}

/// The ONS Postcode Directory of the generated nation (the columns the loader reads by name).
fn write_onspd(path: &Path) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(out, "pcds,oslaua,ctry,rgn,doterm")?;
    for lad in 0..LADS {
        for d in 0..DISTRICTS {
            for u in 0..UNITS {
                writeln!(
                    out,
                    "{},{},E92000001,E12000009,",
                    postcode(lad, d, u),
                    lad_code(lad)
                )?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// One hereditament: where it is and what it is.
struct Hereditament {
    uarn: i64,
    lad: usize,
    postcode: String,
    street: String,
    number: u64,
    code: usize,
    rv_2010: f64,
    from_2010: bool,
}

fn hereditament(r: &mut SplitMix64, i: usize) -> Hereditament {
    let lad = i % LADS;
    let (d, u) = (r.below(DISTRICTS), r.below(UNITS));
    let pick = r.next_u64() % 1000;
    let mut acc = 0;
    let code = CODES
        .iter()
        .position(|c| {
            acc += c.2;
            pick < acc
        })
        .unwrap_or(0);
    // A lognormal rateable value about £12,000.
    let z = (0..12).map(|_| unit(r)).sum::<f64>() - 6.0;
    Hereditament {
        uarn: 1_000_000 + i as i64 * 3,
        lad,
        postcode: postcode(lad, d, u),
        street: format!("BENCH {} ROAD", (d * UNITS + u) % 400),
        number: 1 + r.next_u64() % 300,
        code,
        rv_2010: (12_000.0 * (0.9 * z).exp()).clamp(500.0, 5_000_000.0),
        from_2010: unit(r) < 0.85,
    }
}

/// Writes the four lists and the category B sales; returns the entries written per list.
fn write_world(dir: &Path, n: usize) -> anyhow::Result<Vec<(i32, std::path::PathBuf, usize)>> {
    let mut files = Vec::new();
    let mut writers = Vec::new();
    for year in LISTS {
        let path = dir.join(format!("list_entries_{year}.txt"));
        writers.push(std::io::BufWriter::new(std::fs::File::create(&path)?));
        files.push((year, path, 0usize));
    }
    let mut sales = std::io::BufWriter::new(std::fs::File::create(dir.join("pp-b.csv"))?);
    let mut r = SplitMix64::new(7);
    let start =
        chrono::NaiveDate::from_ymd_opt(2014, 1, 1).ok_or_else(|| anyhow::anyhow!("start date"))?;
    for i in 0..n {
        let h = hereditament(&mut r, i);
        let (code, text, _) = CODES[h.code];
        let address = format!("{} {}, BENCHTOWN", h.number, h.street);
        let mut rv = h.rv_2010;
        for (k, year) in LISTS.iter().enumerate() {
            if k > 0 {
                rv *= 0.95 + 0.25 * unit(&mut r);
            }
            if k == 0 && !h.from_2010 {
                continue;
            }
            let rounded = ((rv / 50.0).round() * 50.0) as u64;
            let eff = format!("01-APR-{year}");
            let ba = format!("{:04}", 1000 + h.lad);
            let fields: [String; 30] = [
                (i + 1).to_string(),
                ba,
                String::new(),
                format!("{:011}", h.uarn),
                code.to_string(),
                text.to_string(),
                h.uarn.to_string(),
                address.clone(),
                String::new(),
                h.number.to_string(),
                h.street.clone(),
                "BENCHTOWN".into(),
                String::new(),
                String::new(),
                h.postcode.clone(),
                eff.clone(),
                String::new(),
                rounded.to_string(),
                String::new(),
                format!("{}", 9_000_000 + i),
                eff.clone(),
                "249G".into(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                eff,
                String::new(),
                String::new(),
                String::new(),
            ];
            writeln!(writers[k], "{}", fields.join("*"))?;
            files[k].2 += 1;
        }
        // A tenth sold two or three times from 2014, the price following the rateable value.
        if i % 10 == 0 {
            let times = 2 + (r.next_u64() % 2) as usize;
            let mut day = (r.next_u64() % 900) as i64;
            for s in 0..times {
                let date = start + chrono::Duration::days(day);
                let years = day as f64 / 365.25;
                let price = h.rv_2010 * 14.0 * (1.0 + 0.02 * years) * (0.9 + 0.2 * unit(&mut r));
                writeln!(
                    sales,
                    "\"{{B{i:09}-{s}}}\",\"{}\",\"{} 00:00\",\"{}\",\"O\",\"N\",\"F\",\"{}\",\"\",\"{}\",\"\",\"BENCHTOWN\",\"BENCH\",\"BENCHSHIRE\",\"B\",\"A\"",
                    (price / 1000.0).round() as i64 * 1000,
                    date.format("%Y-%m-%d"),
                    h.postcode,
                    h.number,
                    h.street,
                )?;
                day += 400 + (r.next_u64() % 1200) as i64;
            }
        }
    }
    for w in &mut writers {
        w.flush()?;
    }
    sales.flush()?;
    Ok(files)
}

pub async fn commercial(opts: SizedBench) -> anyhow::Result<()> {
    let n = opts.size;
    let with_wrk = crate::bench::require_wrk().is_ok();
    let Bench {
        dir,
        terrace,
        xtask,
    } = Bench::prepare_with("bench-commercial", false, with_wrk)?;
    eprintln!("generating {n} hereditaments over {LADS} authorities, four lists and their sales");
    let t = Instant::now();
    let onspd = dir.join("onspd.csv");
    write_onspd(&onspd)?;
    let lists = write_world(&dir, n)?;
    let gen_secs = t.elapsed().as_secs_f64();
    let store = BenchStore::scratch(&dir, &opts);
    let backend = store.backend();
    xtask_load(&xtask, &store, "onspd", &onspd)?;
    let mut list_loads = Vec::new();
    for (year, path, entries) in &lists {
        eprintln!("loading the {year} list ({entries} entries)");
        let (secs, report) = xtask_load(&xtask, &store, "voa_rating_list", path)?;
        eprintln!(
            "  {secs:.1} s, {:.0} entries/s",
            *entries as f64 / secs.max(1e-9)
        );
        list_loads.push(
            serde_json::json!({"list": year, "entries": entries, "seconds": secs,
            "entries_per_second": *entries as f64 / secs.max(1e-9), "report": report}),
        );
    }
    let (sales_secs, sales_report) =
        xtask_load(&xtask, &store, "price_paid", &dir.join("pp-b.csv"))?;
    eprintln!(
        "xtask build (the commercial rent and capital indices among the other derived steps)"
    );
    let (build_secs, log) = xtask_build(&xtask, &store)?;
    let line = log
        .lines()
        .filter(|l| l.contains("commercial capital index") || l.contains("commercial rent index"))
        .collect::<Vec<_>>()
        .join("\n  ");
    eprintln!(
        "{backend}; generated in {gen_secs:.1} s; sales loaded in {sales_secs:.1} s; xtask build {build_secs:.1} s\n  {line}"
    );
    let mut figures = Vec::new();
    let mut loads = Vec::new();
    let mut national = Vec::new();
    if with_wrk {
        let key = bench_account(&terrace, &store)?;
        let _server = bench_serve(&terrace, &store)?;
        let some: Vec<String> = (0..LADS).step_by(7).map(lad_code).collect();
        let bodies: Vec<String> = some
            .iter()
            .flat_map(|lad| {
                [
                    serde_json::json!({"lad_code": lad, "limit": 50}),
                    serde_json::json!({"lad_code": lad, "sector": "OFFICE", "limit": 50}),
                    serde_json::json!({"lad_code": lad, "min_rateable_value": 20000, "limit": 100}),
                ]
            })
            .map(|b| b.to_string())
            .collect();
        let routes: [(&str, Vec<String>, Option<&str>, &str); 3] = [
            (
                "POST",
                bodies,
                Some("/v1/sourcing/commercial"),
                "POST sourcing/commercial",
            ),
            (
                "GET",
                some.iter()
                    .map(|l| format!("/v1/market/commercial-rent-index?area={l}"))
                    .collect(),
                None,
                "GET market/commercial-rent-index (an authority)",
            ),
            (
                "GET",
                some.iter()
                    .map(|l| format!("/v1/market/commercial-index?area={l}"))
                    .chain(["/v1/market/commercial-index".to_string()])
                    .collect(),
                None,
                "GET market/commercial-index",
            ),
        ];
        for (method, items, path, name) in routes {
            let (f, load) = measure_route(&dir, &key, method, &items, path, name, opts.secs)?;
            figures.push(f);
            loads.push(load);
        }
        for sector in ["ALL", "OFFICE", "RETAIL"] {
            let secs = timed_get(
                &key,
                &format!("/v1/market/commercial-rent-index?sector={sector}"),
            )?;
            eprintln!("national rent index, {sector}: {secs:.2} s");
            national.push(serde_json::json!({"sector": sector, "seconds": secs}));
        }
    } else {
        eprintln!("wrk is not installed: the HTTP runs are skipped");
    }
    let results = serde_json::json!({
        "hereditaments": n, "authorities": LADS, "backend": backend,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "generate_seconds": gen_secs, "list_loads": list_loads,
        "sales_load_seconds": sales_secs, "sales_report": sales_report,
        "build_seconds": build_secs, "index_build_lines": line,
        "load_averages": loads, "runs": figures, "national_rent_index": national,
    });
    let out = dir.join("results.json");
    std::fs::write(&out, serde_json::to_string_pretty(&results)?)?;
    eprintln!("results: {}", out.display());
    Ok(())
}
