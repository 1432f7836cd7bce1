//! `cargo xtask bench resolve --real DIR`: the address matcher on real addresses.
//!
//! The task is built from real files, the way issue 19 describes it:
//! - every EPC certificate file in DIR (bulk `certificates.csv` or the search API's CSV, any
//!   column subset with `ADDRESS`/`ADDRESS1..3` and `UPRN`) gives lodgements: address texts per UPRN;
//! - a UPRN's postcode is its certificates' postcode when one carries it, else the Code-Point Open
//!   postcode nearest its OS Open UPRN coordinate (within 150 m), when DIR holds an Open UPRN file
//!   and a Code-Point file is found (`--postcodes FILE`, default every Code-Point file in
//!   `DIR/../postcodes`); a UPRN with neither has no postcode on either side;
//! - the register is one lodgement per UPRN (the first in file order), written as an EPC file and
//!   loaded with the EPC loader into the store `cargo xtask` opens (DATABASE_URL, else a fresh
//!   SQLite store under `target/bench-resolve`), then read back into the index as the service does;
//! - the queries are the other lodgements of the same UPRNs whose text differs (ignoring case and
//!   spacing), each once with its postcode and once without; plus `--held-out N` (300) UPRNs
//!   chosen by hash and left out of the register, whose confident answers are false positives;
//! - the register's own texts are asked back without a postcode (the self-query miss rate), and
//!   the positional flats among them (`Top Flat`, `Ground Floor Flat`, ...) with and without.
//!
//! Figures are printed, with those of the task's two halves by a hash of the UPRN (a rule chosen
//! on one half is checked on the other), and written to `target/bench-resolve/results.json`;
//! nothing is asserted.
//! Throughput is the matcher's own, in this process, on one thread; build with `--release` for
//! representative timings. With `--http`, the service itself is then measured on the same task:
//! the `terrace` binary (built in release, or `TERRACE_BENCH_BIN_DIR`'s, as `bench address` does)
//! serves the store the bench loaded, and wrk posts the task's queries to
//! `POST /v1/address/resolve`, with and without their postcodes (`--secs` each, default 15).

use anyhow::{Context, bail};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;
use terrace_ingest::{Dataset, Progress};
use terrace_matcher::{AddressIndex, Candidate, ResolveQuery, is_confident};

use crate::bench::{Bench, BenchStore, Figures, bench_account, bench_serve, measure_route};

/// One certificate's address.
struct Lodgement {
    text: String,
    postcode: Option<String>,
}

/// How a query differs from the register's text of its UPRN.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    /// Only in punctuation, case or spacing (`41, Grecian Way` / `41 Grecian Way`).
    Punctuation,
    /// In the numbers or unit letters.
    Numbers,
    /// In the words.
    Wording,
}

struct Query {
    uprn: i64,
    text: String,
    postcode: Option<String>,
    kind: Kind,
}

fn words_upper(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_uppercase)
        .collect()
}

fn kind_of(register: &str, query: &str) -> Kind {
    let (a, b) = (words_upper(register), words_upper(query));
    if a == b {
        return Kind::Punctuation;
    }
    let nums = |v: &[String]| {
        let mut n: Vec<String> = v
            .iter()
            .filter(|w| w.chars().any(|c| c.is_ascii_digit()) || w.len() == 1)
            .cloned()
            .collect();
        n.sort();
        n
    };
    if nums(&a) != nums(&b) {
        Kind::Numbers
    } else {
        Kind::Wording
    }
}

fn same_text(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_uppercase()
    };
    norm(a) == norm(b)
}

/// Flats named by their position rather than a number.
fn is_positional_flat(text: &str) -> bool {
    let w = words_upper(text).join(" ");
    const POS: &[&str] = &[
        "TOP FLAT",
        "BASEMENT FLAT",
        "GROUND FLOOR FLAT",
        "FIRST FLOOR FLAT",
        "SECOND FLOOR FLAT",
        "THIRD FLOOR FLAT",
        "LOWER GROUND FLOOR FLAT",
        "GARDEN FLAT",
        "UPPER FLAT",
        "LOWER FLAT",
        "GROUND FLAT",
        "FIRST FLAT",
        "SECOND FLAT",
    ];
    POS.iter()
        .any(|p| w.starts_with(p) || w.contains(&format!(" {p} ")) || w.ends_with(&format!(" {p}")))
}

/// Words that say nothing of which building or street a text names.
const GENERIC: &[&str] = &[
    "FLAT",
    "FLATS",
    "APARTMENT",
    "APT",
    "UNIT",
    "MAISONETTE",
    "STUDIO",
    "ROOM",
    "THE",
    "OF",
    "AND",
    "FLOOR",
    "GROUND",
    "FIRST",
    "SECOND",
    "THIRD",
    "TOP",
    "BASEMENT",
    "LOWER",
    "UPPER",
    "ROAD",
    "STREET",
    "LANE",
    "AVENUE",
    "CLOSE",
    "DRIVE",
    "WAY",
    "HILL",
    "CRESCENT",
    "PLACE",
    "TERRACE",
    "GARDENS",
    "SQUARE",
    "WALK",
    "RISE",
    "GROVE",
    "PARK",
    "HOUSE",
    "COURT",
    "EXETER",
    "DEVON",
    "EAST",
    "WEST",
    "NORTH",
    "SOUTH",
    "GREAT",
    "LITTLE",
    "ST",
    "SAINT",
];

/// What makes two register texts siblings (issue 45): the numbers and the naming words of a
/// text, and for a flat the naming words alone (its building).
fn sibling_keys(text: &str) -> Vec<String> {
    let ws = words_upper(text);
    let nums: Vec<&String> = ws
        .iter()
        .filter(|w| w.bytes().any(|b| b.is_ascii_digit()))
        .collect();
    let mut stems: Vec<&String> = ws
        .iter()
        .filter(|w| !w.bytes().any(|b| b.is_ascii_digit()) && w.len() > 1)
        .filter(|w| !GENERIC.contains(&w.as_str()))
        .collect();
    stems.sort();
    stems.dedup();
    let mut keys = Vec::new();
    for n in &nums {
        for st in &stems {
            keys.push(format!("{n}|{st}"));
        }
    }
    let flat = ws
        .iter()
        .any(|w| ["FLAT", "APARTMENT", "APT", "UNIT"].contains(&w.as_str()));
    if flat && !stems.is_empty() {
        let joined: Vec<&str> = stems.iter().map(|s| s.as_str()).collect();
        keys.push(format!("building|{}", joined.join(" ")));
    }
    keys
}

/// Which half of the task (0 or 1) a UPRN is in: the parity of its hash. A rule chosen on one
/// half is checked on the other.
fn half_of(uprn: i64) -> usize {
    (mix(uprn as u64) & 1) as usize
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn csv_field(s: &str) -> String {
    if s.contains(',') || s.contains('"') || s.contains('\n') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub struct Options {
    pub dir: PathBuf,
    pub postcodes: Option<PathBuf>,
    pub held_out: usize,
    pub seed: u64,
    /// Matcher rules switched off for this run (`terrace_matcher::ablate`'s mask).
    pub ablate: u32,
    /// Also print the confident figures with the rules added one at a time (`--steps`).
    pub steps: bool,
    /// Writes every query not answered confidently and correctly here (tab-separated).
    pub dump: Option<PathBuf>,
    /// Also measure `POST /v1/address/resolve` over HTTP, this many seconds of wrk per mode.
    pub http_secs: Option<u64>,
}

/// Files in `dir` whose first line names `dataset`.
fn files_of(dir: &Path, dataset: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && terrace_ingest::formats::sniff(p) == Some(dataset))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The UPRNs in order of first appearance, and per UPRN its lodgements in file order.
type Lodgements = (Vec<i64>, HashMap<i64, Vec<Lodgement>>);

fn read_lodgements(dir: &Path) -> anyhow::Result<Lodgements> {
    let files = files_of(dir, "epc");
    if files.is_empty() {
        bail!("no EPC certificate file in {}", dir.display());
    }
    let mut order = Vec::new();
    let mut by: HashMap<i64, Vec<Lodgement>> = HashMap::new();
    for f in &files {
        eprintln!("reading {}", f.display());
        for row in
            terrace_ingest::formats::epc::read(f, terrace_ingest::formats::epc::Kind::Domestic)?
        {
            let Ok((_, r)) = row else { continue };
            let (Some(uprn), Some(text)) = (r.uprn, r.address.clone()) else {
                continue;
            };
            if text.trim().is_empty() {
                continue;
            }
            let list = by.entry(uprn).or_insert_with(|| {
                order.push(uprn);
                Vec::new()
            });
            list.push(Lodgement {
                text,
                postcode: r.postcode,
            });
        }
    }
    Ok((order, by))
}

/// Per UPRN, the nearest postcode within 150 m of its Open UPRN point.
fn nearest_postcodes(opts: &Options) -> anyhow::Result<HashMap<i64, String>> {
    let uprn_files = files_of(&opts.dir, "open_uprn");
    let pc_files = match &opts.postcodes {
        Some(p) => vec![p.clone()],
        None => files_of(&opts.dir.join("../postcodes"), "codepoint"),
    };
    let mut out = HashMap::new();
    if uprn_files.is_empty() || pc_files.is_empty() {
        eprintln!("no Open UPRN or Code-Point file: postcodes only from the certificates");
        return Ok(out);
    }
    let mut points = Vec::new();
    for f in &pc_files {
        eprintln!("reading {}", f.display());
        for row in terrace_ingest::formats::codepoint::read(f)? {
            if let Ok((_, r)) = row
                && let (Some(e), Some(n)) = (r.easting, r.northing)
            {
                points.push(((e, n), r.postcode.clone()));
            }
        }
    }
    let index = terrace_geo::PointIndex::build(points);
    for f in &uprn_files {
        eprintln!("reading {}", f.display());
        for row in terrace_ingest::formats::open_uprn::read(f)? {
            if let Ok((_, r)) = row
                && let Some((pc, d)) = index.nearest_where((r.x, r.y), |_| true)
                && d <= 150.0
            {
                out.insert(r.uprn, pc.clone());
            }
        }
    }
    Ok(out)
}

#[derive(Default, serde::Serialize)]
struct Tally {
    n: usize,
    top1: usize,
    at5: usize,
    at50: usize,
    confident: usize,
    confident_correct: usize,
}

impl Tally {
    fn add(&mut self, uprn: i64, found: &[Candidate]) {
        self.n += 1;
        let pos = found.iter().position(|c| c.uprn == uprn);
        self.top1 += usize::from(pos == Some(0));
        self.at5 += usize::from(pos.is_some_and(|p| p < 5));
        self.at50 += usize::from(pos.is_some());
        let top5 = &found[..found.len().min(5)];
        if is_confident(top5) {
            self.confident += 1;
            self.confident_correct += usize::from(pos == Some(0));
        }
    }
}

fn pct(a: usize, b: usize) -> f64 {
    if b == 0 {
        f64::NAN
    } else {
        100.0 * a as f64 / b as f64
    }
}

fn query_of(text: &str, postcode: Option<&String>) -> ResolveQuery {
    ResolveQuery {
        address: Some(text.to_string()),
        postcode: postcode.cloned(),
        ..Default::default()
    }
}

#[derive(serde::Serialize)]
struct ModeFigures {
    postcode: bool,
    queries: usize,
    with_postcode: usize,
    top1_pct: f64,
    recall_at_5_pct: f64,
    recall_at_50_pct: f64,
    precision_confident_pct: f64,
    confident_correct_pct: f64,
    held_out: usize,
    held_out_confident_pct: f64,
    held_out_confident: usize,
    sibling_held_out: usize,
    sibling_confident: usize,
    confident_wrong: usize,
    by_kind: Vec<(Kind, Tally)>,
    /// The task split in two by a hash of the UPRN ([`half_of`]): the queries, and the held-out
    /// UPRNs with how many were answered confidently.
    halves: [(Tally, usize, usize); 2],
    resolves_per_sec: f64,
    p50_us: f64,
    p99_us: f64,
}

/// The first candidate's evidence as tab-separated columns (query cover, address cover, street
/// type conflict, numbers, postcode, -1 for none; flat agreeing with a house number added, only
/// carrier of the number at the postcode).
fn evidence_cols(found: &[Candidate]) -> String {
    let ev = found.first().and_then(|c| c.evidence).unwrap_or_default();
    format!(
        "{:.4}\t{:.4}\t{}\t{:.4}\t{:.4}\t{}\t{}",
        ev.query_cover,
        ev.address_cover,
        u8::from(ev.street_type_conflict),
        ev.numbers.unwrap_or(-1.0),
        ev.postcode.unwrap_or(-1.0),
        u8::from(ev.flat_agrees_house_added),
        u8::from(ev.only_number_at_postcode)
    )
}

/// The confident figures of one mode under the rules as ablated now: confident and correct,
/// confident, queries, held-out confident (random, sibling).
fn confident_counts(
    index: &AddressIndex,
    queries: &[Query],
    held: &[Query],
    sib: &[Query],
    with_pc: bool,
) -> [usize; 5] {
    let pc = |q: &Query| if with_pc { q.postcode.clone() } else { None };
    let mut out = [0, 0, queries.len(), 0, 0];
    for q in queries {
        let found = index.resolve(&query_of(&q.text, pc(q).as_ref()), 5);
        if is_confident(&found) {
            out[1] += 1;
            out[0] += usize::from(found[0].uprn == q.uprn);
        }
    }
    for (slot, list) in [(3, held), (4, sib)] {
        for q in list {
            let found = index.resolve(&query_of(&q.text, pc(q).as_ref()), 5);
            out[slot] += usize::from(is_confident(&found));
        }
    }
    out
}

/// `--steps`: the rules of issue 45 added one at a time, then each rule of evidence removed.
fn print_steps(index: &AddressIndex, queries: &[Query], held: &[Query], sib: &[Query], base: u32) {
    use terrace_matcher::{ABLATE_FLAT_HOUSE_ADDED, ABLATE_ONLY_NUMBER, Conflict};
    let order = [
        Conflict::BuildingName,
        Conflict::Floor,
        Conflict::StreetQualifier,
        Conflict::NumberPlacement,
        Conflict::Postcode,
        Conflict::StreetName,
    ];
    let all: u32 = order.iter().map(|c| c.bit()).sum();
    let mut steps: Vec<(String, u32)> = vec![("no conflict rule (before)".into(), all)];
    let mut mask = all;
    for c in order {
        mask &= !c.bit();
        steps.push((format!("+ {c:?}"), mask));
    }
    steps.push((
        "all, without flat_house_added".into(),
        ABLATE_FLAT_HOUSE_ADDED,
    ));
    steps.push(("all, without only_number".into(), ABLATE_ONLY_NUMBER));
    steps.push((
        "no conflict rule, without either rule of evidence".into(),
        all | ABLATE_FLAT_HOUSE_ADDED | ABLATE_ONLY_NUMBER,
    ));
    println!(
        "\nrules step by step: with postcode | without postcode; each: confident and correct, confident and wrong, precision, missing confident random / sibling"
    );
    println!("| step | with postcode | without postcode |");
    println!("|---|---|---|");
    for (name, m) in steps {
        terrace_matcher::ablate(m | base);
        let cell = |with_pc: bool| {
            let [cc, conf, n, h, sb] = confident_counts(index, queries, held, sib, with_pc);
            format!(
                "{:.2}% ({cc}), {} wrong, {:.2}%, {:.2}% / {:.2}% ({h} / {sb})",
                pct(cc, n),
                conf - cc,
                pct(cc, conf),
                pct(h, held.len()),
                pct(sb, sib.len())
            )
        };
        println!("| {name} | {} | {} |", cell(true), cell(false));
    }
    terrace_matcher::ablate(base);
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn run_mode(
    index: &AddressIndex,
    queries: &[Query],
    (held, sib): (&[Query], &[Query]),
    with_pc: bool,
    calib: &mut [(usize, usize); 10],
    dump: &mut Vec<String>,
    features: &mut Vec<String>,
) -> ModeFigures {
    let mut all = Tally::default();
    let mut kinds: HashMap<Kind, Tally> = HashMap::new();
    let mut halves: [(Tally, usize, usize); 2] = Default::default();
    for q in queries {
        let pc = if with_pc { q.postcode.as_ref() } else { None };
        let found = index.resolve(&query_of(&q.text, pc), 50);
        all.add(q.uprn, &found);
        halves[half_of(q.uprn)].0.add(q.uprn, &found);
        kinds.entry(q.kind).or_default().add(q.uprn, &found);
        features.push(format!(
            "{}\t{}\t{:.4}\t{:.4}\t{:?}\t{}\t{}",
            u8::from(with_pc),
            u8::from(found.first().is_some_and(|c| c.uprn == q.uprn)),
            found.first().map_or(0.0, |c| c.score),
            found.get(1).map_or(0.0, |c| c.score),
            q.kind,
            evidence_cols(&found),
            q.uprn,
        ));
        let top5 = &found[..found.len().min(5)];
        let good = is_confident(top5) && found.first().is_some_and(|c| c.uprn == q.uprn);
        if !good {
            let line = |c: Option<&Candidate>| {
                c.map_or("-".to_string(), |c| {
                    format!(
                        "{} {:.3} {}",
                        c.uprn,
                        c.score,
                        index.entry(c.entry).single_line()
                    )
                })
            };
            let right = found.iter().position(|c| c.uprn == q.uprn);
            dump.push(format!(
                "{}\t{:?}\t{}\t{}\trank={}\tconf={}\t{}\t{}\t{}",
                if with_pc { "pc" } else { "nopc" },
                q.kind,
                q.text,
                q.postcode.as_deref().unwrap_or("-"),
                right.map_or("-".into(), |r| r.to_string()),
                is_confident(top5),
                index.by_uprn(q.uprn).map_or("-".into(), |e| format!(
                    "{} {}",
                    q.uprn,
                    e.single_line()
                )),
                line(found.first()),
                line(found.get(1)),
            ));
        }
        if let Some(top) = found.first() {
            let bin = ((top.score * 10.0) as usize).min(9);
            calib[bin].0 += 1;
            calib[bin].1 += usize::from(top.uprn == q.uprn);
        }
    }
    let mut held_conf = 0;
    for q in held {
        let pc = if with_pc { q.postcode.as_ref() } else { None };
        let found = index.resolve(&query_of(&q.text, pc), 5);
        features.push(format!(
            "{}\t0\t{:.4}\t{:.4}\theld\t{}\t{}",
            u8::from(with_pc),
            found.first().map_or(0.0, |c| c.score),
            found.get(1).map_or(0.0, |c| c.score),
            evidence_cols(&found),
            q.uprn,
        ));
        held_conf += usize::from(is_confident(&found));
        let h = &mut halves[half_of(q.uprn)];
        h.1 += 1;
        h.2 += usize::from(is_confident(&found));
        if is_confident(&found) {
            dump.push(format!(
                "{}\theld_out\t{}\t{}\t{}",
                if with_pc { "pc" } else { "nopc" },
                q.text,
                q.postcode.as_deref().unwrap_or("-"),
                found.first().map_or("-".into(), |c| format!(
                    "{} {:.3} {}",
                    c.uprn,
                    c.score,
                    index.entry(c.entry).single_line()
                ))
            ));
        }
    }
    let mut sib_conf = 0;
    for q in sib {
        let pc = if with_pc { q.postcode.as_ref() } else { None };
        let found = index.resolve(&query_of(&q.text, pc), 5);
        if is_confident(&found) {
            sib_conf += 1;
            dump.push(format!(
                "{}\tsibling_out\t{}\t{}\t{}\t{:?}",
                if with_pc { "pc" } else { "nopc" },
                q.text,
                q.postcode.as_deref().unwrap_or("-"),
                found.first().map_or("-".into(), |c| format!(
                    "{} {:.3} {}",
                    c.uprn,
                    c.score,
                    index.entry(c.entry).single_line()
                )),
                found.first().and_then(|c| c.evidence),
            ));
        }
    }
    // Timing: the API's default of 5 candidates, one thread.
    let mut lat = Vec::with_capacity(queries.len());
    let t = Instant::now();
    for q in queries {
        let pc = if with_pc { q.postcode.as_ref() } else { None };
        let rq = query_of(&q.text, pc);
        let t1 = Instant::now();
        let found = index.resolve(&rq, 5);
        lat.push(t1.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(found);
    }
    let secs = t.elapsed().as_secs_f64();
    let mut by_kind: Vec<(Kind, Tally)> = kinds.into_iter().collect();
    by_kind.sort_by_key(|(k, _)| *k as u8);
    ModeFigures {
        postcode: with_pc,
        queries: all.n,
        with_postcode: if with_pc {
            queries.iter().filter(|q| q.postcode.is_some()).count()
        } else {
            0
        },
        top1_pct: pct(all.top1, all.n),
        recall_at_5_pct: pct(all.at5, all.n),
        recall_at_50_pct: pct(all.at50, all.n),
        precision_confident_pct: pct(all.confident_correct, all.confident),
        confident_correct_pct: pct(all.confident_correct, all.n),
        held_out: held.len(),
        held_out_confident_pct: pct(held_conf, held.len()),
        held_out_confident: held_conf,
        sibling_held_out: sib.len(),
        sibling_confident: sib_conf,
        confident_wrong: all.confident - all.confident_correct,
        by_kind,
        halves,
        resolves_per_sec: queries.len() as f64 / secs.max(1e-9),
        p50_us: percentile(&mut lat, 0.5),
        p99_us: percentile(&mut lat, 0.99),
    }
}

/// `POST /v1/address/resolve` over HTTP on the store the bench loaded: the service's binary
/// serving it, wrk posting the task's queries with their postcodes, then without.
fn measure_http(
    bench: &Bench,
    database_url: Option<String>,
    queries: &[Query],
    secs: u64,
) -> anyhow::Result<Vec<(Figures, serde_json::Value)>> {
    let store = BenchStore {
        data_dir: bench.dir.join("data"),
        database_url,
        log: "warn".into(),
    };
    let key = bench_account(&bench.terrace, &store)?;
    let _server = bench_serve(&bench.terrace, &store)?;
    let mut out = Vec::new();
    for with_pc in [true, false] {
        let bodies: Vec<String> = queries
            .iter()
            .map(|q| {
                let pc = if with_pc { q.postcode.as_deref() } else { None };
                serde_json::json!({"address": q.text, "postcode": pc}).to_string()
            })
            .collect();
        let name = if with_pc {
            "POST resolve, postcode"
        } else {
            "POST resolve, no postcode"
        };
        out.push(measure_route(
            &bench.dir,
            &key,
            "POST",
            &bodies,
            Some("/v1/address/resolve"),
            name,
            secs,
        )?);
    }
    Ok(out)
}

pub async fn resolve_real(opts: Options) -> anyhow::Result<()> {
    let dir = crate::root().join("target").join("bench-resolve");
    // Over HTTP: wrk and the service's binaries are checked (or built) before minutes of work.
    let bench = match opts.http_secs {
        Some(_) => Some(Bench::prepare("bench-resolve", false)?),
        None => {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("data"))?;
            None
        }
    };

    let (order, lodgements) = read_lodgements(&opts.dir)?;
    let near = nearest_postcodes(&opts)?;
    let postcode_of = |uprn: i64| -> Option<String> {
        lodgements[&uprn]
            .iter()
            .find_map(|l| l.postcode.clone())
            .or_else(|| near.get(&uprn).cloned())
    };

    // Held-out UPRNs: the lowest hashes.
    let mut hashed: Vec<(u64, i64)> = order
        .iter()
        .map(|&u| (mix(u as u64 ^ opts.seed), u))
        .collect();
    hashed.sort_unstable();
    let held_set: HashSet<i64> = hashed.iter().take(opts.held_out).map(|&(_, u)| u).collect();
    // The sibling split: UPRNs whose register text shares a number and a naming word with
    // another UPRN's (another flat of the same house, the same number on another street of the
    // same stem or in another building of the street), or, for a flat, all its naming words (the
    // same building), that other UPRN staying in the register; drawn by another hash.
    let mut buckets: HashMap<String, Vec<i64>> = HashMap::new();
    for &u in &order {
        for k in sibling_keys(&lodgements[&u][0].text) {
            buckets.entry(k).or_default().push(u);
        }
    }
    let mut by_sib: Vec<(u64, i64)> = order
        .iter()
        .filter(|u| !held_set.contains(u))
        .map(|&u| (mix(u as u64 ^ opts.seed ^ 0x5155_0045), u))
        .collect();
    by_sib.sort_unstable();
    let mut sib_set: HashSet<i64> = HashSet::new();
    for &(_, u) in &by_sib {
        if sib_set.len() >= opts.held_out {
            break;
        }
        let has_sibling = sibling_keys(&lodgements[&u][0].text).iter().any(|k| {
            buckets[k]
                .iter()
                .any(|v| *v != u && !held_set.contains(v) && !sib_set.contains(v))
        });
        if has_sibling {
            sib_set.insert(u);
        }
    }

    let mut register: Vec<(i64, String, Option<String>)> = Vec::new();
    let mut queries = Vec::new();
    let mut held = Vec::new();
    let mut sib = Vec::new();
    for &uprn in &order {
        let list = &lodgements[&uprn];
        let pc = postcode_of(uprn);
        if held_set.contains(&uprn) || sib_set.contains(&uprn) {
            let to = if held_set.contains(&uprn) {
                &mut held
            } else {
                &mut sib
            };
            to.push(Query {
                uprn,
                text: list[0].text.clone(),
                postcode: pc,
                kind: Kind::Wording,
            });
            continue;
        }
        let reg = list[0].text.clone();
        let mut seen: Vec<&str> = vec![reg.as_str()];
        for l in &list[1..] {
            if seen.iter().any(|s| same_text(s, &l.text)) {
                continue;
            }
            seen.push(&l.text);
            queries.push(Query {
                uprn,
                text: l.text.clone(),
                postcode: pc.clone(),
                kind: kind_of(&reg, &l.text),
            });
        }
        register.push((uprn, reg, pc));
    }
    let kinds = |k: Kind| queries.iter().filter(|q| q.kind == k).count();
    eprintln!(
        "task: register {} UPRNs ({} with a postcode), {} queries ({} punctuation, {} wording, {} numbers), {} held out at random, {} with a sibling; seed {}, ablated {:#x}",
        register.len(),
        register.iter().filter(|r| r.2.is_some()).count(),
        queries.len(),
        kinds(Kind::Punctuation),
        kinds(Kind::Wording),
        kinds(Kind::Numbers),
        held.len(),
        sib.len(),
        opts.seed,
        opts.ablate
    );
    terrace_matcher::ablate(opts.ablate);

    // The register, as an EPC file through the EPC loader.
    let file = dir.join("register_epc.csv");
    {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&file)?);
        writeln!(w, "LMK_KEY,ADDRESS,POSTCODE,UPRN")?;
        for (uprn, text, pc) in &register {
            writeln!(
                w,
                "bench-{uprn},{},{},{uprn}",
                csv_field(text),
                pc.as_deref().unwrap_or("")
            )?;
        }
        w.flush()?;
    }
    let mut config = terrace_store::StoreConfig::from_env().map_err(anyhow::Error::msg)?;
    if config.database_url.is_none() {
        config.data_dir = dir.join("data");
    }
    let backend = if config.database_url.is_some() {
        "postgres"
    } else {
        "sqlite"
    };
    let db = config.open().await?;
    eprintln!("loading the register with the EPC loader ({backend})");
    let t = Instant::now();
    let report = terrace_ingest::load_file(
        &db,
        Dataset::parse("epc")?,
        &file,
        Default::default(),
        &mut Progress::quiet(),
    )
    .await?;
    eprintln!(
        "loaded in {:.1} s: {:?}",
        t.elapsed().as_secs_f64(),
        report.counts
    );
    let t = Instant::now();
    let index = terrace_address::build_index(&db).await?;
    eprintln!(
        "index of {} addresses built in {:.1} s",
        index.len(),
        t.elapsed().as_secs_f64()
    );
    if index.len() != register.len() {
        eprintln!(
            "warning: the store holds {} addresses, the task's register {}: use an empty store",
            index.len(),
            register.len()
        );
    }

    let mut calib = [(0usize, 0usize); 10];
    let mut dump = Vec::new();
    let mut features = Vec::new();
    let modes = [
        run_mode(
            &index,
            &queries,
            (&held, &sib),
            true,
            &mut calib,
            &mut dump,
            &mut features,
        ),
        run_mode(
            &index,
            &queries,
            (&held, &sib),
            false,
            &mut calib,
            &mut dump,
            &mut features,
        ),
    ];

    if opts.steps {
        print_steps(&index, &queries, &held, &sib, opts.ablate);
    }

    // The register's own texts, without a postcode; positional flats with and without.
    let mut self_miss = 0usize;
    let mut flats = 0usize;
    let mut flat_stats = [(0.0f64, 0usize); 2];
    for (uprn, text, pc) in &register {
        let found = index.resolve(&query_of(text, None), 5);
        let own_line = index.by_uprn(*uprn).map(|e| e.single_line());
        let hit = found.first().is_some_and(|c| {
            c.uprn == *uprn || Some(index.entry(c.entry).single_line()) == own_line
        });
        self_miss += usize::from(!hit);
        if !hit {
            dump.push(format!(
                "self\t{text}\t{}\t{}",
                own_line.as_deref().unwrap_or("-"),
                found.first().map_or("-".into(), |c| format!(
                    "{} {:.3} {}",
                    c.uprn,
                    c.score,
                    index.entry(c.entry).single_line()
                ))
            ));
        }
        if is_positional_flat(text) {
            flats += 1;
            for (k, pc) in [(0, None), (1, pc.as_ref())] {
                let found = index.resolve(&query_of(text, pc), 5);
                let score = found
                    .iter()
                    .find(|c| c.uprn == *uprn)
                    .map_or(0.0, |c| c.score);
                flat_stats[k].0 += score;
                if k == 0 {
                    dump.push(format!(
                        "flat\t{text}\t{score:.3}\t{}",
                        found.first().map_or("-".into(), |c| format!(
                            "{} {:.3} {}",
                            c.uprn,
                            c.score,
                            index.entry(c.entry).single_line()
                        ))
                    ));
                }
                flat_stats[k].1 += usize::from(
                    is_confident(&found) && found.first().is_some_and(|c| c.uprn == *uprn),
                );
            }
        }
    }

    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!(
        "\nreal-address resolve, {} ({backend} store, {profile} build)",
        opts.dir.display()
    );
    println!(
        "register {} UPRNs, {} queries, {} held out\n",
        register.len(),
        queries.len(),
        held.len()
    );
    println!("| | with postcode | without postcode |");
    println!("|---|---|---|");
    let row = |name: &str, f: &dyn Fn(&ModeFigures) -> String| {
        println!("| {name} | {} | {} |", f(&modes[0]), f(&modes[1]));
    };
    row("top-1 correct, no threshold", &|m| {
        format!("{:.1}%", m.top1_pct)
    });
    row("candidate recall at 5", &|m| {
        format!("{:.1}%", m.recall_at_5_pct)
    });
    row("candidate recall at 50", &|m| {
        format!("{:.1}%", m.recall_at_50_pct)
    });
    row("precision when confident", &|m| {
        format!("{:.2}%", m.precision_confident_pct)
    });
    row("confident and correct (recall)", &|m| {
        format!("{:.1}%", m.confident_correct_pct)
    });
    row("confident on held-out (false positives)", &|m| {
        format!("{:.1}%", m.held_out_confident_pct)
    });
    row(
        "missing answered confidently: random / sibling split",
        &|m| {
            format!(
                "{:.2}% ({} of {}) / {:.2}% ({} of {})",
                m.held_out_confident_pct,
                m.held_out_confident,
                m.held_out,
                pct(m.sibling_confident, m.sibling_held_out),
                m.sibling_confident,
                m.sibling_held_out
            )
        },
    );
    row("confident and wrong (queries)", &|m| {
        m.confident_wrong.to_string()
    });
    for k in [Kind::Punctuation, Kind::Wording, Kind::Numbers] {
        row(&format!("{k:?}: top-1 / confident and correct"), &|m| {
            m.by_kind
                .iter()
                .find(|(kk, _)| *kk == k)
                .map_or("-".into(), |(_, t)| {
                    format!(
                        "{:.1}% / {:.1}% (n={})",
                        pct(t.top1, t.n),
                        pct(t.confident_correct, t.n),
                        t.n
                    )
                })
        });
    }
    row("matcher throughput, one thread", &|m| {
        format!(
            "{:.0}/s (p50 {:.0} µs, p99 {:.0} µs)",
            m.resolves_per_sec, m.p50_us, m.p99_us
        )
    });
    println!(
        "\nthe two halves of the task by UPRN hash (A / B): confident and correct, confident and wrong, held-out confident"
    );
    for m in &modes {
        let half = |(t, n, c): &(Tally, usize, usize)| {
            format!(
                "{} of {} ({:.2}%), {} wrong, {c} of {n}",
                t.confident_correct,
                t.n,
                pct(t.confident_correct, t.n),
                t.confident - t.confident_correct
            )
        };
        println!(
            "  {}: A {}; B {}",
            if m.postcode {
                "with postcode"
            } else {
                "without postcode"
            },
            half(&m.halves[0]),
            half(&m.halves[1])
        );
    }
    let self_miss_pct = pct(self_miss, register.len());
    println!(
        "\nself-query miss rate (own register text, no postcode): {self_miss_pct:.2}% ({self_miss} of {})",
        register.len()
    );
    let flat_mean = |k: usize| flat_stats[k].0 / flats.max(1) as f64;
    println!(
        "positional flats ({flats}): mean own score {:.3} without postcode, {:.3} with; confident and correct {:.1}% / {:.1}%",
        flat_mean(0),
        flat_mean(1),
        pct(flat_stats[0].1, flats),
        pct(flat_stats[1].1, flats)
    );
    println!("\ncalibration (top candidate, both modes): score bin, answers, share correct");
    for (i, (n, ok)) in calib.iter().enumerate() {
        if *n > 0 {
            println!(
                "  {:.1}-{:.1}  {:>6}  {:>6.2}%",
                i as f64 / 10.0,
                (i + 1) as f64 / 10.0,
                n,
                pct(*ok, *n)
            );
        }
    }
    // The service holds the store from here on.
    db.close();
    let http = match (&bench, opts.http_secs) {
        (Some(b), Some(secs)) => {
            let figures = measure_http(b, config.database_url.clone(), &queries, secs)?;
            println!(
                "\nPOST /v1/address/resolve over HTTP ({}; wrk, 2 threads, 64 connections, {secs} s each)",
                b.terrace.display()
            );
            for (f, _) in &figures {
                println!(
                    "  {}: {:.0}/s (p50 {:.2} ms, p99 {:.2} ms)",
                    f.name, f.requests_per_sec, f.p50_ms, f.p99_ms
                );
            }
            figures
        }
        _ => Vec::new(),
    };
    let results = serde_json::json!({
        "dir": opts.dir, "backend": backend, "profile": profile,
        "register": register.len(), "queries": queries.len(), "held_out": held.len(),
        "modes": modes, "self_query_miss_pct": self_miss_pct,
        "positional_flats": {"n": flats, "mean_score_no_postcode": flat_mean(0), "mean_score_postcode": flat_mean(1),
            "confident_correct_no_postcode_pct": pct(flat_stats[0].1, flats),
            "confident_correct_postcode_pct": pct(flat_stats[1].1, flats)},
        "calibration": calib, "http": http,
    });
    if let Some(path) = &opts.dump {
        std::fs::write(path, dump.join("\n"))?;
        std::fs::write(path.with_extension("features"), features.join("\n"))?;
        eprintln!("misses: {}", path.display());
    }
    let out = dir.join("results.json");
    std::fs::write(&out, serde_json::to_string_pretty(&results)?)
        .with_context(|| out.display().to_string())?;
    eprintln!("results: {}", out.display());
    Ok(())
}
