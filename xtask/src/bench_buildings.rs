//! `cargo xtask bench buildings`: building heights from LIDAR tiles and `POST
//! /v1/buildings/physical`, over a generated world: `--footprints N` (default 1,000,000) 8 x 8 m
//! footprints on a 12 m grid (so some cross the 5 km tile edges), written as OS Open Map Local
//! GeoJSON, and the Environment Agency composite's DSM/DTM tiles under them (5 km, 1 m cells,
//! float32 GeoTIFF, Deflate; the ground in 0.5 m terraces, each roof at a planted height), one
//! authority's boundary, and an address at the centre of each of the first 100,000 footprints.
//! Measured: the height build alone (`xtask build heights`: footprints per second, and that
//! process's peak memory, its `VmHWM`), the full `xtask build` after it (whose height step then
//! reads no tile), and `POST /v1/buildings/physical` with wrk at 64 connections (p50, p99), one
//! and ten UPRNs a call. Figures are printed and written to target/bench-buildings/results.json;
//! nothing is asserted. Without wrk the HTTP run is skipped and said so.

use crate::bench::{
    Bench, BenchStore, SizedBench, bench_account, bench_env, bench_serve, measure_route,
    xtask_build, xtask_load,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use terrace_geo::geotiff::{Grid, write_tile};

const LAD: &str = "E06009901";
/// Footprint pitch and side, metres.
const PITCH: f64 = 12.0;
const SIDE: f64 = 8.0;
/// The footprint's offset inside its pitch square.
const INSET: f64 = 2.0;
/// The publisher's tile: 5 km of 1 m cells.
const TILE: u32 = 5_000;
const X0: f64 = 400_000.0;
const Y0: f64 = 100_000.0;
/// Addresses written (the first footprints'), for the physical calls.
const ADDRESSES: usize = 100_000;
const NODATA: f32 = -9999.0;

struct Files {
    lads: PathBuf,
    register: PathBuf,
    buildings: PathBuf,
    tiles: PathBuf,
    tile_pairs: usize,
    tile_bytes: u64,
}

/// The planted height of footprint `i`.
fn roof(i: usize) -> f32 {
    3.0 + (i % 10) as f32
}

fn write_world(dir: &Path, n: usize) -> anyhow::Result<Files> {
    let cols = (n as f64).sqrt().ceil().max(1.0) as usize;
    let rows = n.div_ceil(cols);
    let (w, h) = (cols as f64 * PITCH, rows as f64 * PITCH);
    let mut files = Files {
        lads: dir.join("lads.geojson"),
        register: dir.join("register.csv"),
        buildings: dir.join("buildings.geojson"),
        tiles: dir.join("lidar"),
        tile_pairs: 0,
        tile_bytes: 0,
    };
    std::fs::write(
        &files.lads,
        format!(
            "{{\"type\":\"FeatureCollection\",\"features\":[{{\"type\":\"Feature\",\"properties\":{{\"LAD23CD\":\"{LAD}\",\"LAD23NM\":\"Bench\"}},\"geometry\":{{\"type\":\"Polygon\",\"coordinates\":[[[{a},{b}],[{c},{b}],[{c},{d}],[{a},{d}],[{a},{b}]]]}}}}]}}\n",
            a = X0 - 10.0,
            b = Y0 - 10.0,
            c = X0 + w + 10.0,
            d = Y0 + h + 10.0
        ),
    )?;
    let mut reg = std::io::BufWriter::new(std::fs::File::create(&files.register)?);
    let mut bld = std::io::BufWriter::new(std::fs::File::create(&files.buildings)?);
    writeln!(
        reg,
        "UPRN,PARENT_UPRN,CLASS,SAO_START_NUMBER,SAO_START_SUFFIX,SAO_END_NUMBER,SAO_END_SUFFIX,SAO_TEXT,PAO_START_NUMBER,PAO_START_SUFFIX,PAO_END_NUMBER,PAO_END_SUFFIX,PAO_TEXT,STREET_DESCRIPTION,LOCALITY,TOWN_NAME,POSTCODE_LOCATOR,X_COORDINATE,Y_COORDINATE,LATITUDE,LONGITUDE"
    )?;
    bld.write_all(b"{\"type\":\"FeatureCollection\",\"crs\":{\"type\":\"name\",\"properties\":{\"name\":\"urn:ogc:def:crs:EPSG::27700\"}},\"features\":[\n")?;
    for i in 0..n {
        let x = X0 + (i % cols) as f64 * PITCH + INSET;
        let y = Y0 + (i / cols) as f64 * PITCH + INSET;
        let (x1, y1) = (x + SIDE, y + SIDE);
        writeln!(
            bld,
            "{}{{\"type\":\"Feature\",\"properties\":{{\"id\":\"osgb{i}\",\"feature_code\":15014}},\"geometry\":{{\"type\":\"Polygon\",\"coordinates\":[[[{x},{y}],[{x1},{y}],[{x1},{y1}],[{x},{y1}],[{x},{y}]]]}}}}",
            if i == 0 { "" } else { "," },
        )?;
        if i < ADDRESSES {
            writeln!(
                reg,
                "{},,RD04,,,,,,{},,,,,BENCH STREET,,BENCHTON,XT1 1AA,{:.2},{:.2},,",
                990_000_000_001u64 + i as u64,
                1 + i % 500,
                x + SIDE / 2.0,
                y + SIDE / 2.0
            )?;
        }
    }
    bld.write_all(b"]}\n")?;
    reg.flush()?;
    bld.flush()?;
    drop((reg, bld));
    // The tiles, one pair at a time (never more than one pair in memory).
    std::fs::create_dir_all(&files.tiles)?;
    let side = f64::from(TILE);
    let (tx, ty) = ((w / side).ceil() as u32, (h / side).ceil() as u32);
    let cells = (TILE * TILE) as usize;
    for j in 0..ty {
        for i in 0..tx {
            let west = X0 + f64::from(i) * side;
            let north = Y0 + f64::from(j + 1) * side;
            let grid = Grid {
                west,
                north,
                cell_x: 1.0,
                cell_y: 1.0,
                width: TILE,
                height: TILE,
            };
            let mut dtm = Vec::with_capacity(cells);
            let mut dsm = Vec::with_capacity(cells);
            for r in 0..TILE {
                let cy = north - (f64::from(r) + 0.5);
                let (gy, vy) = (((cy - Y0) / PITCH).floor(), (cy - Y0).rem_euclid(PITCH));
                for c in 0..TILE {
                    let cx = west + f64::from(c) + 0.5;
                    let ground = 50.0 + 0.5 * ((cx / 25.0).floor() as i64).rem_euclid(8) as f32;
                    let (gx, vx) = (((cx - X0) / PITCH).floor(), (cx - X0).rem_euclid(PITCH));
                    let k = gy as i64 * cols as i64 + gx as i64;
                    let on_roof = gx >= 0.0
                        && (gx as usize) < cols
                        && gy >= 0.0
                        && k >= 0
                        && (k as usize) < n
                        && vx > INSET
                        && vx < INSET + SIDE
                        && vy > INSET
                        && vy < INSET + SIDE;
                    dtm.push(ground);
                    // One cell in 997 holds nodata in the DSM, as a survey gap would.
                    let gap = (r as usize * TILE as usize + c as usize).is_multiple_of(997);
                    dsm.push(match (gap, on_roof) {
                        (true, _) => NODATA,
                        (false, true) => ground + roof(k as usize),
                        (false, false) => ground,
                    });
                }
            }
            let name = format!(
                "SV{:02}{:02}",
                (west as i64 / 1000) % 100,
                (north as i64 / 1000 - 5) % 100
            );
            for (kind, data) in [("DSM", &dsm), ("DTM", &dtm)] {
                let p = files
                    .tiles
                    .join(format!("LIDAR-Composite_{kind}_1m_2022_{name}.tif"));
                write_tile(&p, &grid, Some(NODATA), data).map_err(anyhow::Error::msg)?;
                files.tile_bytes += std::fs::metadata(&p)?.len();
            }
            files.tile_pairs += 1;
            eprintln!("tile {name} written ({}/{})", files.tile_pairs, tx * ty);
        }
    }
    Ok(files)
}

/// `xtask build heights` on the bench store: its JSON report.
fn build_heights(xtask: &Path, store: &BenchStore) -> anyhow::Result<serde_json::Value> {
    let mut c = Command::new(xtask);
    c.args(["build", "heights"]).stderr(Stdio::inherit());
    bench_env(&mut c, store);
    let out = c.output()?;
    anyhow::ensure!(out.status.success(), "xtask build heights failed");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    Ok(serde_json::from_str(text.lines().last().unwrap_or("{}"))?)
}

pub async fn buildings(opts: SizedBench) -> anyhow::Result<()> {
    let n = opts.size;
    let with_wrk = crate::bench::require_wrk().is_ok();
    let Bench {
        dir,
        terrace,
        xtask,
    } = Bench::prepare_with("bench-buildings", false, with_wrk)?;
    eprintln!("generating {n} footprints and the LIDAR tiles under them");
    let t = Instant::now();
    let files = write_world(&dir, n)?;
    let gen_secs = t.elapsed().as_secs_f64();
    let store = BenchStore::scratch(&dir, &opts);
    let backend = store.backend();
    let load = |dataset: &str, path: &Path| {
        eprintln!("loading {} ({dataset})", path.display());
        xtask_load(&xtask, &store, dataset, path)
    };
    load("boundaries", &files.lads)?;
    load("addressbase", &files.register)?;
    let (footprint_secs, _) = load("os_buildings", &files.buildings)?;
    let (tile_secs, tile_report) = load("lidar_composite", &files.tiles)?;
    let heights = build_heights(&xtask, &store)?;
    let secs = heights["seconds"].as_f64().unwrap_or(f64::NAN);
    let computed = heights["computed"].as_f64().unwrap_or(0.0);
    let peak_kb = heights["peak_memory_kb"].as_u64();
    let (build_secs, _) = xtask_build(&xtask, &store)?;
    eprintln!(
        "{backend}; {n} footprints over {} tile pairs ({:.0} MB) generated in {gen_secs:.1} s; footprints loaded in {footprint_secs:.1} s, tiles registered in {tile_secs:.1} s; heights of {computed} footprints in {secs:.1} s ({:.0} footprints/s), peak memory {} MB; xtask build after it {build_secs:.1} s",
        files.tile_pairs,
        files.tile_bytes as f64 / 1e6,
        computed / secs.max(1e-9),
        peak_kb.map_or("unknown".into(), |k| format!("{:.0}", k as f64 / 1024.0))
    );
    let mut figures = Vec::new();
    let mut loads = Vec::new();
    if with_wrk {
        let key = bench_account(&terrace, &store)?;
        let _server = bench_serve(&terrace, &store)?;
        let uprn = |i: usize| 990_000_000_001u64 + (i * 7_919 % ADDRESSES.min(n)) as u64;
        for per_call in [1usize, 10] {
            let bodies: Vec<String> = (0..1_000)
                .map(|b| {
                    let u: Vec<u64> = (0..per_call).map(|k| uprn(b * per_call + k)).collect();
                    serde_json::json!({ "uprns": u }).to_string()
                })
                .collect();
            let (f, l) = measure_route(
                &dir,
                &key,
                "POST",
                &bodies,
                Some("/v1/buildings/physical"),
                &format!("POST buildings/physical ({per_call} a call)"),
                opts.secs,
            )?;
            figures.push(f);
            loads.push(l);
        }
    } else {
        eprintln!("wrk is not installed: the HTTP runs are skipped");
    }
    let results = serde_json::json!({
        "footprints": n, "backend": backend, "tile_pairs": files.tile_pairs,
        "tile_bytes": files.tile_bytes,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "generate_seconds": gen_secs, "footprint_load_seconds": footprint_secs,
        "tile_load_seconds": tile_secs, "tile_load_report": tile_report,
        "heights": heights,
        "footprints_per_second": computed / secs.max(1e-9),
        "heights_peak_memory_kb": peak_kb,
        "build_seconds": build_secs, "load_averages": loads, "runs": figures,
    });
    let out = dir.join("results.json");
    std::fs::write(&out, serde_json::to_string_pretty(&results)?)?;
    eprintln!("results: {}", out.display());
    Ok(())
}
