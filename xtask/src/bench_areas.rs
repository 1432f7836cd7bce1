//! `cargo xtask bench areas`: `POST /v1/areas/resolve` and `GET /v1/areas/reverse-geocode` on
//! the release build, over a generated register (AddressBase loader) and its area files
//! (Code-Point Open, the postcode directory, boundaries of every kind, names and codes, an Open
//! Names tile; `terrace_fixturegen::write_area_world`), after `xtask build` (areas, H3 cells).
//! Measured with wrk at 64 connections; figures printed and written to
//! target/bench-areas/results.json; nothing is asserted.

use crate::bench::{
    API, Bench, BenchStore, bench_account, bench_env, bench_serve, load_average, run,
    write_register, write_script, wrk,
};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// What `cargo xtask bench areas` measures.
#[derive(Debug, Clone)]
pub struct AreasBench {
    pub addresses: usize,
    pub secs: u64,
    /// PostgreSQL instead of the scratch SQLite store (the caller's `DATABASE_URL`).
    pub database_url: Option<String>,
    /// Keep the store of the previous run (same `--addresses`): nothing is loaded.
    pub reuse: bool,
}

/// Every `step`-th data row of a CSV file, split on commas (the area files quote nothing that
/// holds a comma in the columns read here).
fn rows(path: &Path, header: bool, step: usize) -> anyhow::Result<Vec<Vec<String>>> {
    let text = std::fs::read_to_string(path)?;
    Ok(text
        .lines()
        .skip(usize::from(header))
        .step_by(step.max(1))
        .map(|l| {
            l.split(',')
                .map(|f| f.trim_matches('"').to_string())
                .collect()
        })
        .collect())
}

pub async fn areas(opts: AreasBench) -> anyhow::Result<()> {
    let n = opts.addresses;
    let Bench {
        dir,
        terrace,
        xtask,
    } = Bench::prepare("bench-areas", opts.reuse)?;
    eprintln!("generating a register of {n} addresses and its area files");
    let t = Instant::now();
    let register = dir.join("register.csv");
    let world = dir.join("world");
    write_register(&register, n)?;
    let files =
        terrace_fixturegen::write_area_world(&terrace_fixturegen::Config::large(n), &world)?;
    let gen_secs = t.elapsed().as_secs_f64();

    let store = BenchStore {
        data_dir: dir.join("data"),
        database_url: opts.database_url.clone(),
        log: "warn".into(),
    };
    let backend = if store.database_url.is_some() {
        "PostgreSQL"
    } else {
        "SQLite"
    };
    let t = Instant::now();
    if opts.reuse {
        eprintln!("--reuse: the store of the previous run is kept, nothing loaded");
    } else {
        let mut loads = vec![("addressbase".to_string(), register.clone())];
        loads.extend(files.iter().cloned());
        for (dataset, path) in &loads {
            eprintln!("loading {} ({dataset})", path.display());
            let mut load = Command::new(&xtask);
            load.args(["load", dataset]).arg(path).stdout(Stdio::null());
            bench_env(&mut load, &store);
            run(&mut load)?;
        }
        let mut build = Command::new(&xtask);
        build.arg("build").stdout(Stdio::null());
        bench_env(&mut build, &store);
        run(&mut build)?;
    }
    let load_secs = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&register);
    let key = bench_account(&terrace, &store)?;
    let t = Instant::now();
    let _server = bench_serve(&terrace, &store)?;
    let start_secs = t.elapsed().as_secs_f64();

    // Queries of every kind: postcodes in several forms, sectors, districts, GSS codes and
    // area ids, area and place names, H3 cells, and a few typos.
    let onspd = rows(&world.join(terrace_fixturegen::ONSPD_FILE), true, 7)?;
    let col = |name: &str| {
        terrace_fixturegen::ONSPD_HEADER
            .split(',')
            .position(|c| c == name)
            .unwrap_or(0)
    };
    let (pcds, lat, lon) = (col("pcds"), col("lat"), col("long"));
    let mut queries: Vec<String> = Vec::new();
    let mut points: Vec<(f64, f64)> = Vec::new();
    for (i, r) in onspd.iter().enumerate() {
        let Some(pc) = r.get(pcds) else { continue };
        let (Some(la), Some(lo)) = (
            r.get(lat).and_then(|v| v.parse::<f64>().ok()),
            r.get(lon).and_then(|v| v.parse::<f64>().ok()),
        ) else {
            continue;
        };
        points.push((la, lo));
        let outward = pc.split(' ').next().unwrap_or_default();
        queries.push(match i % 4 {
            0 => pc.clone(),
            1 => pc.replace(' ', "").to_lowercase(),
            2 => pc[..pc.len() - 2].to_string(),
            _ => outward.to_string(),
        });
        if i % 3 == 0
            && let Some(cell) = terrace_build::derive::h3_cell(la, lo)
        {
            queries.push(format!("h3:{cell}"));
        }
    }
    for nc in std::fs::read_dir(world.join("names_codes"))? {
        for r in rows(&nc?.path(), true, 3)? {
            if let [code, name, ..] = r.as_slice() {
                queries.push(code.clone());
                queries.push(name.clone());
            }
        }
    }
    for r in rows(&world.join(terrace_fixturegen::OPEN_NAMES_FILE), false, 1)? {
        if r.get(6).is_some_and(|t| t == "populatedPlace") {
            let name = r[2].clone();
            let mut typo = name.clone();
            typo.insert(typo.len() / 2, 'x');
            queries.push(name);
            queries.push(typo);
        }
    }
    let bodies: Vec<String> = queries
        .iter()
        .map(|q| serde_json::json!({ "query": q }).to_string())
        .collect();
    let kinds = [
        "unit", "sector", "district", "lsoa", "msoa", "ward", "lad", "region", "h3", "place",
    ];
    let paths: Vec<String> = points
        .iter()
        .enumerate()
        .map(|(i, (la, lo))| {
            // A few metres off the postcode's point, as a caller's position would be.
            format!(
                "/v1/areas/reverse-geocode?lat={:.6}&lon={:.6}&type_id={}",
                la + 0.0001,
                lo - 0.0001,
                kinds[i % kinds.len()]
            )
        })
        .collect();
    write_script(
        &dir.join("resolve.lua"),
        &key,
        "POST",
        &bodies,
        Some("/v1/areas/resolve"),
    )?;
    write_script(&dir.join("reverse.lua"), &key, "GET", &paths, None)?;

    let secs = opts.secs;
    eprintln!(
        "\n{backend}; {} resolve queries, {} reverse-geocode points; wrk, 2 threads, 64 connections, {secs} s each; {} cores",
        bodies.len(),
        paths.len(),
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    );
    let api = format!("http://{API}");
    let mut figures = Vec::new();
    let mut loads = Vec::new();
    for (id, name, script) in [
        (
            "resolve",
            "POST areas/resolve (free)",
            dir.join("resolve.lua"),
        ),
        (
            "reverse",
            "GET areas/reverse-geocode (free)",
            dir.join("reverse.lua"),
        ),
    ] {
        let load = load_average();
        eprint!("[load {load}] ");
        loads.push(serde_json::json!({"route": id, "load_average": load}));
        figures.push(wrk(name, &api, Some(&script), secs)?);
    }
    eprintln!(
        "register {n}: generated in {gen_secs:.1} s, loaded and built in {load_secs:.1} s, service ready (indexes built) in {start_secs:.1} s"
    );
    let results = serde_json::json!({
        "addresses": n, "backend": backend,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "generate_seconds": gen_secs, "load_seconds": load_secs, "start_seconds": start_secs,
        "resolve_queries": bodies.len(), "reverse_points": paths.len(),
        "load_averages": loads, "runs": figures,
    });
    let out = dir.join("results.json");
    std::fs::write(&out, serde_json::to_string_pretty(&results)?)?;
    eprintln!("results: {}", out.display());
    Ok(())
}
