//! `cargo xtask bench land`: the INSPIRE loader, the land build and `POST
//! /v1/land/plot-utilisation`, over a generated world: `--parcels N` (default 2,000,000) square
//! 20 m parcels on a grid in four local authorities, written as HM Land Registry's GML (streamed,
//! never held in memory), a building on every second parcel (OS Open Map Local GeoJSON) and an
//! address on every third (AddressBase). Measured: the GML load (polygons per second, and the
//! loading process's peak memory, its `VmHWM` from `/proc/self/status`, which `xtask load`
//! reports), the link build (`xtask build`), and plot utilisation with wrk at 64 connections
//! (p50, p99). Figures are printed and written to target/bench-land/results.json; nothing is
//! asserted. Without wrk the HTTP run is skipped and said so. `cargo xtask bench sourcing` runs
//! the same world (`--parcels`, default 800,000: 200,000 per authority) and measures the parcel
//! search at 64 connections and the area report of each whole authority instead
//! (target/bench-sourcing/results.json).

use crate::bench::{
    Bench, BenchStore, SizedBench, bench_account, bench_serve, measure_route, xtask_build,
    xtask_load,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;
use terrace_fixturegen::land::{INSPIRE_FOOTER, inspire_header, inspire_member, rect};

/// The generated authorities: four quadrants of the grid.
const LADS: [&str; 4] = ["E06009901", "E06009902", "E06009903", "E06009904"];
const SIDE: f64 = 20.0;
const X0: f64 = 400_000.0;
const Y0: f64 = 100_000.0;

struct Files {
    lads: PathBuf,
    register: PathBuf,
    gml: PathBuf,
    buildings: PathBuf,
}

/// Writes the bench world, streaming every file.
fn write_world(dir: &Path, n: usize) -> anyhow::Result<Files> {
    let cols = (n as f64).sqrt().ceil().max(1.0) as usize;
    let rows = n.div_ceil(cols);
    let (w, h) = (cols as f64 * SIDE, rows as f64 * SIDE);
    let files = Files {
        lads: dir.join("lads.geojson"),
        register: dir.join("register.csv"),
        gml: dir.join("Land_Registry_Cadastral_Parcels.gml"),
        buildings: dir.join("buildings.geojson"),
    };
    let quads = [
        (X0, Y0, X0 + w / 2.0, Y0 + h / 2.0),
        (X0 + w / 2.0, Y0, X0 + w, Y0 + h / 2.0),
        (X0, Y0 + h / 2.0, X0 + w / 2.0, Y0 + h),
        (X0 + w / 2.0, Y0 + h / 2.0, X0 + w, Y0 + h),
    ];
    let features: Vec<String> = quads
        .iter()
        .zip(LADS)
        .map(|((a, b, c, d), code)| {
            format!(
                "{{\"type\":\"Feature\",\"properties\":{{\"LAD23CD\":\"{code}\",\"LAD23NM\":\"Bench {code}\"}},\"geometry\":{{\"type\":\"Polygon\",\"coordinates\":[[[{a},{b}],[{c},{b}],[{c},{d}],[{a},{d}],[{a},{b}]]]}}}}"
            )
        })
        .collect();
    std::fs::write(
        &files.lads,
        format!(
            "{{\"type\":\"FeatureCollection\",\"features\":[\n{}\n]}}\n",
            features.join(",\n")
        ),
    )?;
    let mut gml = std::io::BufWriter::new(std::fs::File::create(&files.gml)?);
    let mut reg = std::io::BufWriter::new(std::fs::File::create(&files.register)?);
    let mut bld = std::io::BufWriter::new(std::fs::File::create(&files.buildings)?);
    gml.write_all(inspire_header(n).as_bytes())?;
    writeln!(
        reg,
        "UPRN,PARENT_UPRN,CLASS,SAO_START_NUMBER,SAO_START_SUFFIX,SAO_END_NUMBER,SAO_END_SUFFIX,SAO_TEXT,PAO_START_NUMBER,PAO_START_SUFFIX,PAO_END_NUMBER,PAO_END_SUFFIX,PAO_TEXT,STREET_DESCRIPTION,LOCALITY,TOWN_NAME,POSTCODE_LOCATOR,X_COORDINATE,Y_COORDINATE,LATITUDE,LONGITUDE"
    )?;
    bld.write_all(b"{\"type\":\"FeatureCollection\",\"crs\":{\"type\":\"name\",\"properties\":{\"name\":\"urn:ogc:def:crs:EPSG::27700\"}},\"features\":[\n")?;
    let mut member = String::with_capacity(1024);
    let mut first_building = true;
    for i in 0..n {
        let (x, y) = (X0 + (i % cols) as f64 * SIDE, Y0 + (i / cols) as f64 * SIDE);
        member.clear();
        inspire_member(&mut member, 1 + i as i64, &[rect(x, y, x + SIDE, y + SIDE)]);
        gml.write_all(member.as_bytes())?;
        let (cx, cy) = (x + SIDE / 2.0, y + SIDE / 2.0);
        if i % 2 == 0 {
            writeln!(
                bld,
                "{}{{\"type\":\"Feature\",\"properties\":{{\"id\":\"osgb{i}\",\"feature_code\":15014}},\"geometry\":{{\"type\":\"Polygon\",\"coordinates\":[[[{},{}],[{},{}],[{},{}],[{},{}],[{},{}]]]}}}}",
                if first_building { "" } else { "," },
                cx - 4.0,
                cy - 4.0,
                cx + 4.0,
                cy - 4.0,
                cx + 4.0,
                cy + 4.0,
                cx - 4.0,
                cy + 4.0,
                cx - 4.0,
                cy - 4.0
            )?;
            first_building = false;
        }
        if i % 3 == 0 {
            writeln!(
                reg,
                "{},,RD04,,,,,,{},,,,,BENCH STREET,,BENCHTON,XT1 1AA,{cx:.2},{cy:.2},,",
                990_000_000_001u64 + i as u64,
                1 + i % 500
            )?;
        }
    }
    gml.write_all(INSPIRE_FOOTER.as_bytes())?;
    bld.write_all(b"]}\n")?;
    gml.flush()?;
    reg.flush()?;
    bld.flush()?;
    Ok(files)
}

/// Which routes a run of the land world measures.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Routes {
    /// `cargo xtask bench land`: plot utilisation.
    Land,
    /// `cargo xtask bench sourcing`: the parcel search (`under_built_plots`, overrides and
    /// explicit filters) at 64 connections over each authority's parcels, and the area report of
    /// a whole authority, timed one call at a time.
    Sourcing,
}

pub async fn land(opts: SizedBench, routes: Routes) -> anyhow::Result<()> {
    let n = opts.size;
    let with_wrk = crate::bench::require_wrk().is_ok();
    let name = match routes {
        Routes::Land => "bench-land",
        Routes::Sourcing => "bench-sourcing",
    };
    let Bench {
        dir,
        terrace,
        xtask,
    } = Bench::prepare_with(name, false, with_wrk)?;
    eprintln!("generating {n} parcels (GML), their buildings and addresses");
    let t = Instant::now();
    let files = write_world(&dir, n)?;
    let gen_secs = t.elapsed().as_secs_f64();
    let gml_bytes = std::fs::metadata(&files.gml)?.len();
    let store = BenchStore::scratch(&dir, &opts);
    let backend = store.backend();
    let load = |dataset: &str, path: &Path| {
        eprintln!("loading {} ({dataset})", path.display());
        xtask_load(&xtask, &store, dataset, path)
    };
    load("boundaries", &files.lads)?;
    load("addressbase", &files.register)?;
    let (gml_secs, report) = load("inspire", &files.gml)?;
    let peak_kb = report["peak_memory_kb"].as_u64();
    load("os_buildings", &files.buildings)?;
    let (build_secs, _) = xtask_build(&xtask, &store)?;
    eprintln!(
        "{backend}; {n} parcels ({:.0} MB of GML) generated in {gen_secs:.1} s; loaded in {gml_secs:.1} s ({:.0} polygons/s), peak memory of the load {} MB; xtask build (the land links and the rest) {build_secs:.1} s",
        gml_bytes as f64 / 1e6,
        n as f64 / gml_secs.max(1e-9),
        peak_kb.map_or("unknown".into(), |k| format!("{:.0}", k as f64 / 1024.0))
    );
    let mut figures = Vec::new();
    let mut loads = Vec::new();
    let mut report_seconds = Vec::new();
    if with_wrk && routes == Routes::Sourcing {
        let key = bench_account(&terrace, &store)?;
        let _server = bench_serve(&terrace, &store)?;
        let bodies: Vec<String> = LADS
            .iter()
            .flat_map(|lad| {
                [
                    serde_json::json!({"lad_code": lad, "strategy": "under_built_plots",
                        "strategy_overrides": {"min_area_m2": 100}}),
                    serde_json::json!({"lad_code": lad, "strategy": "under_built_plots",
                        "strategy_overrides": {"min_area_m2": 300, "max_built_coverage": 0.1}, "limit": 500}),
                    serde_json::json!({"lad_code": lad, "asset": "parcel",
                        "filters": {"max_built_coverage": 0.5}}),
                ]
            })
            .map(|b| b.to_string())
            .collect();
        let (f, load) = measure_route(
            &dir,
            &key,
            "POST",
            &bodies,
            Some("/v1/sourcing/search"),
            "POST sourcing/search",
            opts.secs,
        )?;
        figures.push(f);
        loads.push(load);
        for lad in LADS {
            report_seconds.push(crate::bench::timed_get(
                &key,
                &format!("/v1/market/area-report?lad_code={lad}&postcode_district=XT1"),
            )?);
        }
        eprintln!("area report of a whole authority: {report_seconds:?} s");
    } else if with_wrk {
        let key = bench_account(&terrace, &store)?;
        let _server = bench_serve(&terrace, &store)?;
        let bodies: Vec<String> = LADS
            .iter()
            .flat_map(|lad| {
                [
                    serde_json::json!({"area_id": format!("lad:{lad}")}),
                    serde_json::json!({"area_id": format!("lad:{lad}"), "max_built_coverage": 0.2}),
                    serde_json::json!({"area_id": format!("lad:{lad}"), "min_area_m2": 100, "limit": 500}),
                ]
            })
            .map(|b| b.to_string())
            .collect();
        let (f, load) = measure_route(
            &dir,
            &key,
            "POST",
            &bodies,
            Some("/v1/land/plot-utilisation"),
            "POST land/plot-utilisation",
            opts.secs,
        )?;
        figures.push(f);
        loads.push(load);
    } else {
        eprintln!("wrk is not installed: the HTTP runs are skipped");
    }
    let results = serde_json::json!({
        "parcels": n, "backend": backend, "gml_bytes": gml_bytes,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "generate_seconds": gen_secs, "gml_load_seconds": gml_secs,
        "polygons_per_second": n as f64 / gml_secs.max(1e-9),
        "load_peak_memory_kb": peak_kb, "load_report": report,
        "build_seconds": build_secs, "load_averages": loads, "runs": figures,
        "area_report_seconds": report_seconds,
    });
    let out = dir.join("results.json");
    std::fs::write(&out, serde_json::to_string_pretty(&results)?)?;
    eprintln!("results: {}", out.display());
    Ok(())
}
