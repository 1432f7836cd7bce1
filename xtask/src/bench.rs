//! `cargo xtask bench address`: the release build on a generated register, measured with wrk at
//! 64 connections beside a bare actix route returning a fixed JSON of the same size.
//! Figures are printed and written to target/bench-address/results.json; nothing is asserted.

use anyhow::{Context, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use terrace_matcher::{AddressEntry, noise};

pub(crate) const API: &str = "127.0.0.1:18080";
const BARE: &str = "127.0.0.1:18081";

pub(crate) struct Killed(pub(crate) Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(crate) fn run(cmd: &mut Command) -> anyhow::Result<String> {
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("{cmd:?}"))?;
    if !out.status.success() {
        bail!("{cmd:?} failed with {}", out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).to_string())
}

fn curl(args: &[&str]) -> Option<String> {
    let out = Command::new("curl")
        .args(["-s", "--max-time", "5"])
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).to_string())
}

pub(crate) fn wait_ready(url: &str, limit: Duration) -> anyhow::Result<()> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if curl(&["-f", url]).is_some() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    bail!("{url} not ready after {limit:?}")
}

fn lua_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A wrk script choosing a random request from a list.
/// With `post_to`, each item is a JSON body posted to that path; else each item is a path.
///
/// Every request is formatted once, in each wrk thread's `init`, and `request` only picks one:
/// formatting a request in Lua for every call cost wrk 13.4 µs a request (measured in
/// docs/BENCHMARKS.md, issue 20), CPU taken from the service on the same two cores, which the
/// bare route (measured without a script) does not pay.
pub(crate) fn write_script(
    path: &Path,
    key: &str,
    method: &str,
    items: &[String],
    post_to: Option<&str>,
) -> anyhow::Result<()> {
    let mut f = std::fs::File::create(path)?;
    writeln!(f, "local items = {{")?;
    for i in items {
        writeln!(f, "  {},", lua_string(i))?;
    }
    writeln!(f, "}}")?;
    writeln!(f, "local requests = {{}}")?;
    writeln!(f, "local count = 0")?;
    writeln!(f, "init = function(args)")?;
    writeln!(f, "  math.randomseed(42)")?;
    writeln!(f, "  for i, it in ipairs(items) do")?;
    let headers = format!(
        "{{[\"Authorization\"] = \"Bearer {key}\", [\"Content-Type\"] = \"application/json\"}}"
    );
    if let Some(to) = post_to {
        writeln!(
            f,
            "    requests[i] = wrk.format(\"{method}\", \"{to}\", {headers}, it)"
        )?;
    } else {
        writeln!(
            f,
            "    requests[i] = wrk.format(\"{method}\", it, {headers}, nil)"
        )?;
    }
    writeln!(f, "  end")?;
    writeln!(f, "  count = #requests")?;
    writeln!(f, "end")?;
    writeln!(f, "request = function()")?;
    writeln!(f, "  return requests[math.random(count)]")?;
    writeln!(f, "end")?;
    Ok(())
}

#[derive(Debug, serde::Serialize)]
pub(crate) struct Figures {
    pub(crate) name: String,
    pub(crate) requests_per_sec: f64,
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
    /// All requests wrk completed, and those answered with another status than 2xx or 3xx.
    requests: u64,
    non_2xx: u64,
}

fn ms(s: &str) -> f64 {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len()));
    let v: f64 = num.parse().unwrap_or(f64::NAN);
    match unit {
        "us" => v / 1000.0,
        "ms" => v,
        "s" => v * 1000.0,
        "m" => v * 60_000.0,
        _ => f64::NAN,
    }
}

/// The benches measure with Debian's `wrk`: fail at once, saying how to get it, when it is
/// missing (not after minutes of loading).
pub(crate) fn require_wrk() -> anyhow::Result<()> {
    match Command::new("wrk")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(_) => Ok(()),
        Err(_) => {
            bail!("wrk is not installed: `apt-get install -y wrk` (Debian's package)")
        }
    }
}

/// One route of a bench: writes its wrk script (one request a call, chosen at random from
/// `items`: bodies when `path` is given, else paths), notes the load average, measures it on
/// the bench service, and returns the figures with the load beside them.
pub(crate) fn measure_route(
    dir: &Path,
    key: &str,
    method: &str,
    items: &[String],
    path: Option<&str>,
    name: &str,
    secs: u64,
) -> anyhow::Result<(Figures, serde_json::Value)> {
    let script = dir.join(format!(
        "{}.lua",
        name.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    ));
    write_script(&script, key, method, items, path)?;
    let load = load_average();
    eprint!("[load {load}] ");
    let figures = wrk(name, &format!("http://{API}"), Some(&script), secs)?;
    Ok((
        figures,
        serde_json::json!({"route": name, "load_average": load}),
    ))
}

/// A uniform draw in `[0, 1)` from the top 53 bits of the benches' generator.
pub(crate) fn unit(r: &mut terrace_analytics::SplitMix64) -> f64 {
    (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Times one GET on the bench service, answered in full, one call at a time; a failure is an
/// error.
pub(crate) fn timed_get(key: &str, path: &str) -> anyhow::Result<f64> {
    let t = std::time::Instant::now();
    let ok = Command::new("curl")
        .args([
            "-fsS",
            "-o",
            "/dev/null",
            "-H",
            &format!("Authorization: Bearer {key}"),
            &format!("http://{API}{path}"),
        ])
        .status()?
        .success();
    anyhow::ensure!(ok, "GET {path} failed");
    Ok(t.elapsed().as_secs_f64())
}

pub(crate) fn wrk(
    name: &str,
    url: &str,
    script: Option<&Path>,
    secs: u64,
) -> anyhow::Result<Figures> {
    let mut cmd = Command::new("wrk");
    cmd.args(["-t2", "-c64", &format!("-d{secs}s"), "--latency"]);
    if let Some(s) = script {
        cmd.arg("-s").arg(s);
    }
    cmd.arg(url);
    let out = run(&mut cmd)?;
    let mut f = Figures {
        name: name.into(),
        requests_per_sec: 0.0,
        p50_ms: f64::NAN,
        p99_ms: f64::NAN,
        requests: 0,
        non_2xx: 0,
    };
    for line in out.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        match t.as_slice() {
            ["Requests/sec:", v] => f.requests_per_sec = v.parse().unwrap_or(0.0),
            ["50%", v] => f.p50_ms = ms(v),
            ["99%", v] => f.p99_ms = ms(v),
            ["Non-2xx", "or", "3xx", "responses:", v] => f.non_2xx = v.parse().unwrap_or(0),
            [n, "requests", "in", ..] => f.requests = n.parse().unwrap_or(0),
            _ => {}
        }
    }
    eprintln!(
        "{name:<28} {:>10.0} req/s   p50 {:>7.2} ms   p99 {:>7.2} ms   non-2xx {} ({:.1}%)",
        f.requests_per_sec,
        f.p50_ms,
        f.p99_ms,
        f.non_2xx,
        100.0 * f.non_2xx as f64 / f.requests.max(1) as f64
    );
    // A route answering errors measures the error path, not the route: say so where it is read.
    if f.non_2xx * 100 > f.requests {
        eprintln!(
            "  warning: more than 1% of {name}'s answers were not 2xx; check the server's log (a rate limit, a missing key) before quoting these figures"
        );
    }
    Ok(f)
}

pub(crate) fn write_register(path: &Path, n: usize) -> anyhow::Result<Vec<AddressEntry>> {
    let cfg = terrace_fixturegen::Config::large(n);
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(
        w,
        "UPRN,PARENT_UPRN,CLASS,SAO_START_NUMBER,SAO_START_SUFFIX,SAO_END_NUMBER,SAO_END_SUFFIX,SAO_TEXT,PAO_START_NUMBER,PAO_START_SUFFIX,PAO_END_NUMBER,PAO_END_SUFFIX,PAO_TEXT,STREET_DESCRIPTION,LOCALITY,TOWN_NAME,POSTCODE_LOCATOR,X_COORDINATE,Y_COORDINATE,LATITUDE,LONGITUDE"
    )?;
    let opt = |v: Option<u32>| v.map(|x| x.to_string()).unwrap_or_default();
    let ch = |v: Option<char>| v.map(|x| x.to_string()).unwrap_or_default();
    let q = |s: &str| {
        if s.contains(',') || s.contains('"') {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut sample = Vec::new();
    for (i, r) in terrace_fixturegen::register(&cfg)?.enumerate() {
        writeln!(
            w,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.2},{:.2},{:.7},{:.7}",
            r.uprn,
            r.parent_uprn.map(|p| p.to_string()).unwrap_or_default(),
            r.class,
            opt(r.sao_start_number),
            ch(r.sao_start_suffix),
            opt(r.sao_end_number),
            ch(r.sao_end_suffix),
            q(r.sao_text.as_deref().unwrap_or_default()),
            opt(r.pao_start_number),
            ch(r.pao_start_suffix),
            opt(r.pao_end_number),
            ch(r.pao_end_suffix),
            q(r.pao_text.as_deref().unwrap_or_default()),
            q(&r.street),
            q(r.locality.as_deref().unwrap_or_default()),
            q(&r.town),
            r.postcode,
            r.x,
            r.y,
            r.lat,
            r.lon
        )?;
        if i % 97 == 0 && sample.len() < 20_000 {
            let num = |s: Option<u32>, e: Option<u32>, t: &Option<String>| {
                let n = match (s, e) {
                    (Some(a), Some(b)) => Some(format!("{a}-{b}")),
                    (Some(a), None) => Some(a.to_string()),
                    _ => None,
                };
                match (t, n) {
                    (Some(t), Some(n)) => Some(format!("{t} {n}")),
                    (Some(t), None) => Some(t.clone()),
                    (None, n) => n,
                }
            };
            sample.push(AddressEntry {
                uprn: r.uprn as i64,
                parent_uprn: r.parent_uprn.map(|p| p as i64),
                saon: num(r.sao_start_number, r.sao_end_number, &r.sao_text),
                paon: num(r.pao_start_number, r.pao_end_number, &r.pao_text),
                street: Some(r.street.clone()),
                locality: r.locality.clone(),
                town: Some(r.town.clone()),
                postcode: Some(r.postcode.clone()),
            });
        }
    }
    w.flush()?;
    Ok(sample)
}

/// Where a bench's store lives and how the service logs while it is measured.
#[derive(Debug, Clone)]
pub(crate) struct BenchStore {
    /// The scratch directory of the embedded SQLite store.
    pub data_dir: PathBuf,
    /// A PostgreSQL URL (the caller's `DATABASE_URL`), else the SQLite store in `data_dir`.
    pub database_url: Option<String>,
    /// `RUST_LOG` of the service under load (the service's own default is `info`).
    pub log: String,
}

impl BenchStore {
    /// The bench's own SQLite store in `data_dir`, logging at warn.
    pub(crate) fn sqlite(data_dir: &Path) -> BenchStore {
        BenchStore {
            data_dir: data_dir.to_path_buf(),
            database_url: None,
            log: "warn".into(),
        }
    }
}

/// What the sized benches (`land`, `listings`, `valuation`) are given: how much to generate
/// (`--parcels`, `--listings`, `--addresses`), seconds of wrk per route, and the PostgreSQL store
/// to run on (a `postgres://` `DATABASE_URL`), else their own SQLite store.
#[derive(Debug, Clone)]
pub struct SizedBench {
    pub size: usize,
    pub secs: u64,
    pub database_url: Option<String>,
}

impl BenchStore {
    /// A sized bench's store: PostgreSQL when it was given one, else SQLite in `dir/data`;
    /// the service logs at warn.
    pub(crate) fn scratch(dir: &Path, opts: &SizedBench) -> BenchStore {
        BenchStore {
            data_dir: dir.join("data"),
            database_url: opts.database_url.clone(),
            log: "warn".into(),
        }
    }

    /// The backend's name, for the printed figures.
    pub(crate) fn backend(&self) -> &'static str {
        if self.database_url.is_some() {
            "PostgreSQL"
        } else {
            "SQLite"
        }
    }
}

/// `xtask load DATASET PATH` on the bench store: its seconds and its report (the last line).
pub(crate) fn xtask_load(
    xtask: &Path,
    store: &BenchStore,
    dataset: &str,
    path: &Path,
) -> anyhow::Result<(f64, serde_json::Value)> {
    let t = std::time::Instant::now();
    let mut c = Command::new(xtask);
    c.args(["load", dataset]).arg(path);
    bench_env(&mut c, store);
    let out = run(&mut c)?;
    let secs = t.elapsed().as_secs_f64();
    Ok((
        secs,
        serde_json::from_str(out.lines().last().unwrap_or("{}"))?,
    ))
}

/// `xtask build` on the bench store: its seconds and what it printed on stderr (the steps'
/// report lines), or the error with that output when it fails.
pub(crate) fn xtask_build(xtask: &Path, store: &BenchStore) -> anyhow::Result<(f64, String)> {
    let t = std::time::Instant::now();
    let mut build = Command::new(xtask);
    build
        .arg("build")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    bench_env(&mut build, store);
    let out = build.output()?;
    let secs = t.elapsed().as_secs_f64();
    let log = String::from_utf8_lossy(&out.stderr).to_string();
    if !out.status.success() {
        anyhow::bail!("xtask build failed:\n{log}");
    }
    Ok((secs, log))
}

/// Points a command at the bench's store, without fixtures or rate limits.
pub(crate) fn bench_env(c: &mut Command, store: &BenchStore) {
    c.env("TERRACE_DATA_DIR", &store.data_dir)
        .env("TERRACE_LOAD_FIXTURES", "0")
        .env("TERRACE_ADDR", API)
        .env("TERRACE_RATE_LIMIT", "10000000")
        .env("TERRACE_RATE_BURST", "10000000")
        .env("TERRACE_ACCOUNT_RATE_LIMIT", "10000000")
        .env("TERRACE_ACCOUNT_RATE_BURST", "10000000")
        .env("RUST_LOG", &store.log);
    match &store.database_url {
        Some(url) => c.env("DATABASE_URL", url),
        None => c.env_remove("DATABASE_URL"),
    };
}

/// Creates a bench account with the release `terrace` binary and returns its API key.
pub(crate) fn bench_account(terrace: &Path, store: &BenchStore) -> anyhow::Result<String> {
    let mut create = Command::new(terrace);
    create.args([
        "accounts",
        "create",
        "--name",
        "bench",
        "--credits",
        "1000000000",
    ]);
    bench_env(&mut create, store);
    let created: serde_json::Value = serde_json::from_str(run(&mut create)?.trim())?;
    Ok(created["api_key"].as_str().context("api_key")?.to_string())
}

/// Starts the release service on the bench store and waits until it answers.
pub(crate) fn bench_serve(terrace: &Path, store: &BenchStore) -> anyhow::Result<Killed> {
    let mut serve = Command::new(terrace);
    serve.stdout(Stdio::null());
    bench_env(&mut serve, store);
    let server = Killed(serve.spawn()?);
    wait_ready(&format!("http://{API}/healthz"), Duration::from_secs(600))?;
    Ok(server)
}

/// A bench's scratch directory under `target/` (emptied, with `data/` for the store) and the
/// release binaries it runs, built first.
pub(crate) struct Bench {
    pub dir: PathBuf,
    pub terrace: PathBuf,
    pub xtask: PathBuf,
}

impl Bench {
    /// Checks for wrk (before minutes of work), empties `target/<name>` (unless `keep`) and
    /// builds the release `terrace` and `xtask`.
    pub(crate) fn prepare(name: &str, keep: bool) -> anyhow::Result<Bench> {
        Bench::prepare_with(name, keep, true)
    }

    /// As [`Bench::prepare`], requiring wrk only when `wrk` says so.
    pub(crate) fn prepare_with(name: &str, keep: bool, wrk: bool) -> anyhow::Result<Bench> {
        if wrk {
            require_wrk()?;
        }
        let root = crate::root();
        let dir = root.join("target").join(name);
        if !keep {
            let _ = std::fs::remove_dir_all(&dir);
        }
        std::fs::create_dir_all(dir.join("data"))?;
        // `TERRACE_BENCH_BIN_DIR`: measure the `terrace` and `xtask` binaries kept there (an
        // earlier build, for a before-and-after comparison in one sitting) instead of building.
        let bins = match std::env::var_os("TERRACE_BENCH_BIN_DIR") {
            Some(d) => PathBuf::from(d),
            None => {
                eprintln!("building the release binaries");
                run(Command::new("cargo").current_dir(&root).args([
                    "build",
                    "--release",
                    "--quiet",
                    "-p",
                    "terrace-gateway",
                    "-p",
                    "xtask",
                ]))?;
                root.join("target/release")
            }
        };
        Ok(Bench {
            dir,
            terrace: bins.join("terrace"),
            xtask: bins.join("xtask"),
        })
    }
}

/// What `cargo xtask bench address` measures and against which store.
#[derive(Debug, Clone)]
pub struct AddressBench {
    /// Addresses in the generated register.
    pub addresses: usize,
    /// Seconds of wrk per route.
    pub secs: u64,
    /// The routes to measure (`bare`, `bare-script`, `uprn`, `postcode`, `council`, `sales`, `auto`,
    /// `resolve`);
    /// empty: all.
    pub only: Vec<String>,
    /// `RUST_LOG` of the service under load.
    pub log: String,
    /// PostgreSQL instead of the scratch SQLite store (the caller's `DATABASE_URL`).
    pub database_url: Option<String>,
    /// Times the routes are measured in turn (default 1): each round's UPRN / bare ratio is
    /// printed, and `uprn_vs_bare` is their median.
    pub rounds: usize,
    /// Keep the store of the previous run (same `--addresses`): the register is generated again
    /// for its sample but not loaded (a PostgreSQL load of a large register takes minutes).
    pub reuse: bool,
    /// Seconds of unrecorded wrk on each route before the first round (`--warmup`, default 2;
    /// 0: none), so that no round measures the one-off filling of the answer caches.
    pub warmup: u64,
}

/// The 1-, 5- and 15-minute load averages, for the record beside each figure.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

pub async fn address(opts: AddressBench) -> anyhow::Result<()> {
    let n = opts.addresses;
    let Bench {
        dir,
        terrace,
        xtask,
    } = Bench::prepare("bench-address", opts.reuse)?;

    eprintln!("generating a register of {n} addresses");
    let t = Instant::now();
    let register = dir.join("register.csv");
    let sample = write_register(&register, n)?;
    let gen_secs = t.elapsed().as_secs_f64();

    let store = BenchStore {
        data_dir: dir.join("data"),
        database_url: opts.database_url.clone(),
        log: opts.log.clone(),
    };
    let backend = if store.database_url.is_some() {
        "PostgreSQL"
    } else {
        "SQLite"
    };
    let env = |c: &mut Command| bench_env(c, &store);
    eprintln!("loading it through the AddressBase loader ({backend})");
    let t = Instant::now();
    if opts.reuse {
        eprintln!("--reuse: the store of the previous run is kept, nothing loaded");
    } else {
        let mut load = Command::new(&xtask);
        load.args(["load", "addressbase"])
            .arg(&register)
            .stdout(Stdio::null());
        env(&mut load);
        run(&mut load)?;
    }
    let load_secs = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&register);

    let key = bench_account(&terrace, &store)?;

    let t = Instant::now();
    let _server = bench_serve(&terrace, &store)?;
    let start_secs = t.elapsed().as_secs_f64();

    // The bare route answers a fixed JSON the size of a real UPRN answer.
    let one = curl(&[
        "-H",
        &format!("Authorization: Bearer {key}"),
        &format!("http://{API}/v1/address/uprn/{}", sample[0].uprn),
    ])
    .context("sample UPRN call")?;
    let mut bare = Command::new(&xtask);
    bare.args(["bare-server", BARE, &one.len().to_string()])
        .stdout(Stdio::null());
    let _bare = Killed(bare.spawn()?);
    wait_ready(&format!("http://{BARE}/bare"), Duration::from_secs(30))?;

    // A wrk script of one GET per sampled UPRN, the UPRN at the end of `prefix`.
    let per_uprn = |file: &str, prefix: &str| {
        let paths: Vec<String> = sample
            .iter()
            .map(|e| format!("{prefix}{}", e.uprn))
            .collect();
        write_script(&dir.join(file), &key, "GET", &paths, None)
    };
    let mut postcodes: Vec<String> = sample
        .iter()
        .filter_map(|e| e.postcode.as_deref())
        .map(|p| format!("/v1/address/postcode/{}", p.replace(' ', "")))
        .collect();
    postcodes.sort_unstable();
    postcodes.dedup();
    let queries = noise::noisy_queries(&sample, 2_000, 7);
    let auto_paths: Vec<String> = queries
        .iter()
        .filter_map(|q| q.query.address.clone())
        .map(|a| {
            let cut: String = a.chars().take(a.chars().count() * 2 / 3).collect();
            format!(
                "/v1/address/autocomplete?q={}",
                cut.replace(' ', "%20")
                    .replace(',', "%2C")
                    .replace('/', "%2F")
                    .replace('&', "%26")
                    .replace('#', "%23")
            )
        })
        .collect();
    let bodies: Vec<String> = queries.iter().map(|q| serde_json::json!({
        "address": q.query.address, "saon": q.query.saon, "paon": q.query.paon, "street": q.query.street,
        "locality": q.query.locality, "town": q.query.town, "postcode": q.query.postcode,
    }).to_string()).collect();
    per_uprn("uprn.lua", "/v1/address/uprn/")?;
    // The bare route driven by the same client as the UPRN lookup: the same wrk script (a random
    // pick among the sample's requests, formatted once), the same headers, paths of the same
    // length. wrk's per-request Lua call costs CPU on the same two cores, which the scriptless
    // bare run does not pay; both ratios are printed (issue 20, session 16).
    per_uprn("bare.lua", "/bare?address/uprn/")?;
    // A free keyed call on the same UPRNs, the issue's own example of one (issue 20: free keyed
    // calls at least as fast as charged ones). Both answer from memory after a UPRN's first call:
    // the council tax lookup from its `CouncilTaxMemo`, the UPRN lookup from the record cache.
    per_uprn("council.lua", "/v1/property/council-tax/")?;
    // A charged call that reads the store at every call, on the same UPRNs: the property's
    // registered sales (two point reads: the sales linked to the UPRN, then the address when
    // there are none, as here, so that an unknown UPRN is a 404).
    per_uprn("sales.lua", "/v1/transactions/uprn/")?;
    write_script(&dir.join("postcode.lua"), &key, "GET", &postcodes, None)?;
    write_script(&dir.join("auto.lua"), &key, "GET", &auto_paths, None)?;
    write_script(
        &dir.join("resolve.lua"),
        &key,
        "POST",
        &bodies,
        Some("/v1/address/resolve"),
    )?;

    let secs = opts.secs;
    eprintln!(
        "\n{backend}, RUST_LOG={}; wrk, 2 threads, 64 connections, {secs} s each; {} cores",
        opts.log,
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    );
    let bare_url = format!("http://{BARE}/bare");
    let api = format!("http://{API}");
    let bare_base = format!("http://{BARE}");
    let routes: [(&str, &str, &str, Option<PathBuf>); 8] = [
        ("bare", "bare actix route", &bare_url, None),
        (
            "bare-script",
            "bare route, same wrk script",
            &bare_base,
            Some(dir.join("bare.lua")),
        ),
        (
            "uprn",
            "GET /v1/address/uprn (1 cr)",
            &api,
            Some(dir.join("uprn.lua")),
        ),
        (
            "postcode",
            "GET address/postcode (2 cr)",
            &api,
            Some(dir.join("postcode.lua")),
        ),
        (
            "council",
            "GET council-tax (free)",
            &api,
            Some(dir.join("council.lua")),
        ),
        (
            "sales",
            "GET transactions (2 cr)",
            &api,
            Some(dir.join("sales.lua")),
        ),
        (
            "auto",
            "GET autocomplete (free)",
            &api,
            Some(dir.join("auto.lua")),
        ),
        (
            "resolve",
            "POST resolve (1 cr)",
            &api,
            Some(dir.join("resolve.lua")),
        ),
    ];
    let chosen = |id: &str| opts.only.is_empty() || opts.only.iter().any(|o| o == id);
    if opts.warmup > 0 {
        eprintln!("warm-up, {} s a route, not recorded", opts.warmup);
        for (id, name, url, script) in &routes {
            if chosen(id) && !id.starts_with("bare") {
                wrk(name, url, script.as_deref(), opts.warmup)?;
            }
        }
    }
    let mut figures = Vec::new();
    let mut loads = Vec::new();
    for round in 1..=opts.rounds {
        if opts.rounds > 1 {
            eprintln!("round {round} of {}", opts.rounds);
        }
        for (id, name, url, script) in &routes {
            if !chosen(id) {
                continue;
            }
            let load = load_average();
            eprint!("[load {load}] ");
            loads.push(serde_json::json!({"round": round, "route": id, "load_average": load}));
            figures.push((round, *id, wrk(name, url, script.as_deref(), secs)?));
        }
    }
    let rate = |round: usize, id: &str| {
        figures
            .iter()
            .find(|(r, i, _)| *r == round && *i == id)
            .map(|(_, _, f)| f.requests_per_sec)
    };
    // A route's rate over another's of the same round, each round's and their median (the bare
    // route alone varies by a tenth between runs on a shared machine).
    let ratio_of = |id: &str, to: &str| -> Vec<f64> {
        (1..=opts.rounds)
            .filter_map(|round| Some(rate(round, id)? / rate(round, to)?.max(1.0)))
            .collect()
    };
    let ratio_to = |bare: &str, what: &str| -> (Option<f64>, Vec<f64>) {
        let rounds = ratio_of("uprn", bare);
        let median = terrace_analytics::median(&rounds);
        if let Some(r) = median {
            let listed = rounds
                .iter()
                .map(|r| format!("{r:.3}"))
                .collect::<Vec<_>>()
                .join(", ");
            let of = if rounds.len() > 1 {
                format!(", the median of {listed}")
            } else {
                String::new()
            };
            eprintln!("UPRN lookup at {:.0}% of {what} ({r:.3}{of})", r * 100.0);
        }
        (median, rounds)
    };
    eprintln!();
    let (ratio, ratio_rounds) = ratio_to("bare", "the bare route's throughput");
    let (same_client, same_client_rounds) = ratio_to(
        "bare-script",
        "the bare route driven by the same wrk script",
    );
    // The other targets, per round: the postcode lookup within 20% of the UPRN lookup,
    // a free keyed call (council tax) at least as fast as the charged one.
    let mut beside = serde_json::Map::new();
    for (id, what) in [
        ("postcode", "postcode lookup"),
        ("council", "council tax (free)"),
    ] {
        let rounds = ratio_of(id, "uprn");
        if !rounds.is_empty() {
            let listed = rounds
                .iter()
                .map(|r| format!("{:.0}%", r * 100.0))
                .collect::<Vec<_>>()
                .join(", ");
            eprintln!("{what} at {listed} of the UPRN lookup's throughput, by round");
            beside.insert(format!("{id}_vs_uprn_rounds"), serde_json::json!(rounds));
        }
    }
    let uprn_p99: Vec<f64> = figures
        .iter()
        .filter(|(_, id, _)| *id == "uprn")
        .map(|(_, _, f)| f.p99_ms)
        .collect();
    if !uprn_p99.is_empty() {
        let listed = uprn_p99
            .iter()
            .map(|p| format!("{p:.2}"))
            .collect::<Vec<_>>()
            .join(", ");
        eprintln!("UPRN lookup p99 by round: {listed} ms");
    }
    eprintln!(
        "register {n}: generated in {gen_secs:.1} s, loaded in {load_secs:.1} s, service ready (index built) in {start_secs:.1} s"
    );
    let results = serde_json::json!({
        "addresses": n, "backend": backend, "log": opts.log,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "generate_seconds": gen_secs, "load_seconds": load_secs, "start_seconds": start_secs,
        "rounds": opts.rounds, "uprn_vs_bare": ratio, "uprn_vs_bare_rounds": ratio_rounds,
        "uprn_vs_bare_same_script": same_client,
        "uprn_vs_bare_same_script_rounds": same_client_rounds, "load_averages": loads,
        "warmup_seconds": opts.warmup, "beside_uprn": beside,
        "runs": figures.iter().map(|(round, _, f)| serde_json::json!({"round": round, "figures": f})).collect::<Vec<_>>(),
    });
    let out = dir.join("results.json");
    std::fs::write(&out, serde_json::to_string_pretty(&results)?)?;
    eprintln!("results: {}", out.display());
    Ok(())
}

/// A bare actix server: one route answering a fixed JSON object of `size` bytes.
pub fn bare_server(addr: &str, size: usize) -> anyhow::Result<()> {
    let filler = "x".repeat(size.saturating_sub(16).max(1));
    let body = format!("{{\"filler\":\"{filler}\"}}");
    actix_web::rt::System::new().block_on(async move {
        actix_web::HttpServer::new(move || {
            let body = body.clone();
            actix_web::App::new().route(
                "/bare",
                actix_web::web::get().to(move || {
                    let body = body.clone();
                    async move {
                        actix_web::HttpResponse::Ok()
                            .content_type("application/json")
                            .body(body)
                    }
                }),
            )
        })
        .bind(addr)?
        .run()
        .await
    })?;
    Ok(())
}
