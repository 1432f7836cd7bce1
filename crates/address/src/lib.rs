//! The address resource family: autocomplete, resolve, lookup by UPRN and by postcode.
//!
//! Architecture Invariant: plain functions over a context (store handle and in-memory index);
//! no HTTP or MCP types. The UPRN and postcode lookups read the store directly; autocomplete and
//! resolve read the index, which is built from the store and rebuilt when the register changes.
//!
//! `autocomplete`, `resolve`, `by_uprn` and `by_postcode` run over an `AddressCtx` (the `Db` and an
//! `IndexHandle`) and return `AddressRecord`, `Resolved`, `Autocomplete` and `PostcodeResult`, with
//! errors in `AddressError` (`NotFound`, `Invalid`, `Store`). `IndexHandle` holds the current
//! `AddressIndex` behind an `Arc` and rebuilds it from the store when the register version in
//! `meta` changes; `build_index` reads the register in pages of 50,000 and builds on a blocking
//! thread. The body of resolve, `ResolveInput`, lives here with its own rules (`violations()`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, RwLock};
pub use terrace_core::memo::AsJson;
use terrace_core::memo::Shards;
use terrace_core::{Postcode, Uprn, Violation};
use terrace_matcher::{AddressEntry, AddressIndex, ResolveQuery};
use terrace_store::address::{self, AddressRow};
use terrace_store::meta;
use terrace_store::{Db, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum AddressError {
    #[error("{0} not found")]
    NotFound(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An answer that could not be written as JSON (not expected for these types).
    #[error("writing the answer as JSON: {0}")]
    Encode(#[from] serde_json::Error),
}

/// The in-memory address index, swapped whole when the register changes, and the lookups
/// served from memory beside it (dropped with it).
pub struct IndexHandle {
    inner: RwLock<(Option<String>, Arc<AddressIndex>)>,
    records: RecordCache,
}

impl Default for IndexHandle {
    fn default() -> Self {
        IndexHandle {
            inner: RwLock::new((None, Arc::new(AddressIndex::build(Vec::new())))),
            records: RecordCache::default(),
        }
    }
}

/// Address records and postcode answers read from the store, kept for the register version
/// they were read under.
///
/// The register is reference data that changes only when a loader runs, and every loader that
/// changes it bumps `address_register_version`; the refresher that rebuilds the index when that
/// version changes (every 30 s) empties this cache in the same step. So an answer from memory is
/// the store's answer, at most one refresh period late, exactly like autocomplete and resolve.
/// The store stays the source of truth: a miss reads it. Bounded: when a map is full it is
/// emptied and refilled by the calls that follow.
///
/// Each answer is kept as its JSON text ([`AsJson`]), so a call served from memory copies the
/// text instead of cloning the record and serialising it again (measured in docs/BENCHMARKS.md,
/// issue 20); a UPRN's record is kept beside its text for resolve's candidates ([`HeldRecord`]).
#[derive(Default)]
struct RecordCache {
    by_uprn: Shards<i64, HeldRecord>,
    by_postcode: Shards<String, AsJson<PostcodeResult>>,
}

/// A UPRN's record as the cache holds it: its text for the lookup by UPRN, and the record itself
/// for resolve, whose candidates sit inside resolve's own answer. One store read fills both.
#[derive(Clone)]
struct HeldRecord {
    record: Arc<AddressRecord>,
    text: AsJson<AddressRecord>,
}

impl RecordCache {
    /// Records kept at most (about 400 bytes each, and as much again for the text).
    const MAX_RECORDS: usize = 200_000;
    /// Postcode answers kept at most (a postcode holds about 15 addresses).
    const MAX_POSTCODES: usize = 20_000;

    /// Holds the record of `row` (its text and the record) and returns it.
    fn hold(&self, row: &AddressRow) -> Result<HeldRecord, AddressError> {
        let record = record_of(row);
        let held = HeldRecord {
            text: AsJson::new(&record)?,
            record: Arc::new(record),
        };
        self.by_uprn
            .put(RecordCache::MAX_RECORDS, row.uprn, held.clone());
        Ok(held)
    }

    fn clear(&self) {
        self.by_uprn.clear();
        self.by_postcode.clear();
    }
}

impl IndexHandle {
    pub fn current(&self) -> Arc<AddressIndex> {
        match self.inner.read() {
            Ok(g) => g.1.clone(),
            Err(poisoned) => poisoned.into_inner().1.clone(),
        }
    }

    /// Rebuilds the index from the store if the register version changed since the last build.
    /// Returns true when it rebuilt.
    pub async fn refresh(&self, db: &Db) -> Result<bool, StoreError> {
        let version = meta::get(db, meta::Key::AddressRegisterVersion).await?;
        let built = self.inner.read().map(|g| g.0.clone()).unwrap_or(None);
        if built.is_some() && built == version {
            return Ok(false);
        }
        let index = build_index(db).await?;
        if let Ok(mut g) = self.inner.write() {
            *g = (version, Arc::new(index));
        }
        // Emptied after the swap: a record read while the new index was building may predate
        // the load that bumped the version.
        self.records.clear();
        Ok(true)
    }
}

fn entry_of(r: &AddressRow) -> AddressEntry {
    AddressEntry {
        uprn: r.uprn,
        parent_uprn: r.parent_uprn,
        saon: r.saon.clone(),
        paon: r.paon.clone(),
        street: r.street.clone(),
        locality: r.locality.clone(),
        town: r.town.clone(),
        postcode: r.postcode.clone(),
    }
}

/// Reads the whole register from the store, page by page, into a fresh index.
pub async fn build_index(db: &Db) -> Result<AddressIndex, StoreError> {
    let mut entries = Vec::new();
    let mut after = 0i64;
    loop {
        let page = address::addresses_page(db, after, 50_000).await?;
        let Some(last) = page.last() else { break };
        after = last.uprn;
        entries.extend(page.iter().filter(|r| has_text(r)).map(entry_of));
    }
    Ok(
        tokio::task::spawn_blocking(move || AddressIndex::build(entries))
            .await
            .unwrap_or_else(|_| AddressIndex::build(Vec::new())),
    )
}

fn has_text(r: &AddressRow) -> bool {
    r.saon.is_some() || r.paon.is_some() || r.street.is_some()
}

/// What the domain functions need.
#[derive(Clone)]
pub struct AddressCtx {
    pub db: Db,
    pub index: Arc<IndexHandle>,
}

/// The canonical address record keyed by UPRN (also the shape of a resolve candidate).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AddressRecord {
    pub uprn: i64,
    /// The UPRN of the building this unit belongs to (flats, units), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_uprn: Option<i64>,
    /// The address on one line, as a person would write it.
    pub address: Option<String>,
    pub saon: Option<String>,
    pub paon: Option<String>,
    pub street: Option<String>,
    pub locality: Option<String>,
    pub town: Option<String>,
    pub postcode: Option<String>,
    /// AddressBase classification code (RD04 terraced house, RD06 flat, CR01 shop, ...), when loaded.
    pub classification: Option<String>,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    /// British National Grid easting and northing in metres.
    pub easting: Option<f64>,
    pub northing: Option<f64>,
    /// Local authority district GSS code.
    pub local_authority: Option<String>,
    pub lsoa: Option<String>,
    /// Which dataset gave the address text and which the position.
    pub address_source: Option<String>,
    pub position_source: Option<String>,
    pub country: &'static str,
}

fn record_of(r: &AddressRow) -> AddressRecord {
    let entry = entry_of(r);
    AddressRecord {
        uprn: r.uprn,
        parent_uprn: r.parent_uprn,
        address: has_text(r).then(|| entry.single_line()),
        saon: r.saon.clone(),
        paon: r.paon.clone(),
        street: r.street.clone(),
        locality: r.locality.clone(),
        town: r.town.clone(),
        postcode: r.postcode.clone(),
        classification: r.class.clone(),
        latitude: r.lat,
        longitude: r.lon,
        easting: r.x,
        northing: r.y,
        local_authority: r.lad_code.clone(),
        lsoa: r.lsoa_code.clone(),
        address_source: r.address_source.clone(),
        position_source: r.position_source.clone(),
        country: "UK",
    }
}

/// One autocomplete suggestion: no UPRN (use resolve to key it).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Suggestion {
    pub text: String,
    pub postcode: Option<String>,
    pub score: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Autocomplete {
    pub query: String,
    pub country: &'static str,
    pub results: Vec<Suggestion>,
}

pub fn autocomplete(ctx: &AddressCtx, q: &str, max_results: usize) -> Autocomplete {
    let index = ctx.index.current();
    let results = index
        .autocomplete(q, max_results)
        .into_iter()
        .map(|s| Suggestion {
            postcode: index.entry(s.entry).postcode.clone(),
            text: s.text,
            score: round3(s.score),
        })
        .collect();
    Autocomplete {
        query: q.to_string(),
        country: "UK",
        results,
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The body of POST /v1/address/resolve: free text, structured fields, or both.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = resolve_input_rules)]
pub struct ResolveInput {
    /// The address as free text, e.g. "Flat 2, 10 High St, Exeter EX1 1AA".
    #[serde(default)]
    #[schemars(length(max = 500))]
    pub address: Option<String>,
    /// Secondary addressable object: flat or unit ("Flat 2").
    #[serde(default)]
    #[schemars(length(max = 500))]
    pub saon: Option<String>,
    /// Primary addressable object: house number, range or building name ("10", "63-65", "Rose Cottage").
    #[serde(default)]
    #[schemars(length(max = 500))]
    pub paon: Option<String>,
    #[serde(default)]
    #[schemars(length(max = 500))]
    pub street: Option<String>,
    #[serde(default)]
    #[schemars(length(max = 500))]
    pub locality: Option<String>,
    #[serde(default)]
    #[schemars(length(max = 500))]
    pub town: Option<String>,
    /// With or without the space, any case; a wrong postcode lowers scores but does not stop a match.
    #[serde(default)]
    #[schemars(length(max = 500))]
    pub postcode: Option<String>,
    /// How many candidates to return, 1-25 (default 5).
    #[serde(default)]
    #[schemars(range(min = 1, max = 25))]
    pub max_candidates: Option<u32>,
}

pub const RESOLVE_FIELD_MAX: usize = 500;

/// The text fields of a resolve body, of which at least one must be present and not blank.
const RESOLVE_TEXT_FIELDS: [&str; 7] = [
    "address", "saon", "paon", "street", "locality", "town", "postcode",
];

/// The schema states the body's cross-field rule: at least one non-blank text field.
fn resolve_input_rules(schema: &mut schemars::Schema) {
    terrace_core::patterns::any_non_blank(schema, &RESOLVE_TEXT_FIELDS);
}

impl ResolveInput {
    /// The body's own rules: at least one non-blank field, each at most 500 characters,
    /// max_candidates 1-25.
    pub fn violations(&self) -> Vec<Violation> {
        let mut v = Vec::new();
        let fields: [(&'static str, &Option<String>); 7] = [
            ("address", &self.address),
            ("saon", &self.saon),
            ("paon", &self.paon),
            ("street", &self.street),
            ("locality", &self.locality),
            ("town", &self.town),
            ("postcode", &self.postcode),
        ];
        for (name, f) in fields {
            if f.as_ref()
                .is_some_and(|s| s.chars().count() > RESOLVE_FIELD_MAX)
            {
                v.push(Violation::new(
                    &[name],
                    "string_too_long",
                    "String should have at most 500 characters",
                ));
            }
        }
        if fields
            .iter()
            .all(|(_, f)| f.as_deref().is_none_or(terrace_core::patterns::is_blank))
        {
            v.push(Violation::new(
                &["address"],
                "missing",
                "Give the address as text or at least one structured field",
            ));
        }
        if let Some(m) = self.max_candidates
            && !(1..=25).contains(&m)
        {
            v.push(Violation::new(
                &["max_candidates"],
                "range_error",
                "Input should be between 1 and 25",
            ));
        }
        v
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Candidate {
    /// Similarity to the query in [0, 1].
    pub score: f64,
    #[serde(flatten)]
    pub record: AddressRecord,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Resolved {
    /// True when the best candidate is a confident match; false means "nothing confident":
    /// treat the candidates as suggestions.
    pub confident: bool,
    /// The score a top candidate needs to be confident (with a lead of 0.03 over the second).
    /// A top candidate at the query's own postcode whose house and flat numbers agree exactly
    /// with the query's is confident from 0.70 with a lead of 0.10 (docs/DATA.md, the matcher).
    pub confidence_threshold: f64,
    pub candidates: Vec<Candidate>,
}

/// What `resolve` and `by_postcode` answer when no address register is loaded at all: a 404
/// that says so (and, being an error, is not charged) rather than an empty list that looks like
/// "no such address".
pub const NO_REGISTER: &str =
    "an address register (none is loaded yet, so there is nothing to match against)";

pub async fn resolve(ctx: &AddressCtx, input: &ResolveInput) -> Result<Resolved, AddressError> {
    let index = ctx.index.current();
    if index.is_empty() {
        return Err(AddressError::NotFound(NO_REGISTER.into()));
    }
    let q = ResolveQuery {
        address: input.address.clone(),
        saon: input.saon.clone(),
        paon: input.paon.clone(),
        street: input.street.clone(),
        locality: input.locality.clone(),
        town: input.town.clone(),
        postcode: input.postcode.clone(),
    };
    let max = input.max_candidates.unwrap_or(5) as usize;
    let found = index.resolve(&q, max);
    let confident = terrace_matcher::is_confident(&found);
    // The candidates' records from memory, the store read only for those not held (one query
    // for all of them): a store query per resolve was most of its cost over HTTP on PostgreSQL.
    let cache = &ctx.index.records;
    let mut records: Vec<(i64, Arc<AddressRecord>)> = Vec::with_capacity(found.len());
    let mut missing: Vec<i64> = Vec::new();
    for c in &found {
        match cache.by_uprn.get_with(&c.uprn, |held| held.record.clone()) {
            Some(record) => records.push((c.uprn, record)),
            None => missing.push(c.uprn),
        }
    }
    if !missing.is_empty() {
        for row in address::addresses_by_uprn(&ctx.db, &missing).await? {
            records.push((row.uprn, cache.hold(&row)?.record));
        }
    }
    let candidates = found
        .iter()
        .filter_map(|c| {
            records
                .iter()
                .find(|(uprn, _)| *uprn == c.uprn)
                .map(|(_, r)| Candidate {
                    score: round3(c.score),
                    record: AddressRecord::clone(r),
                })
        })
        .collect();
    Ok(Resolved {
        confident,
        confidence_threshold: terrace_matcher::CONFIDENT_SCORE,
        candidates,
    })
}

/// The address record of a UPRN, as its JSON text (see [`RecordCache`]).
pub async fn by_uprn(ctx: &AddressCtx, uprn: Uprn) -> Result<AsJson<AddressRecord>, AddressError> {
    let cache = &ctx.index.records;
    if let Some(text) = cache
        .by_uprn
        .get_with(&uprn.get(), |held| held.text.clone())
    {
        return Ok(text);
    }
    match address::address(&ctx.db, uprn.get()).await? {
        Some(r) => Ok(cache.hold(&r)?.text),
        None => Err(AddressError::NotFound(format!("UPRN {uprn}"))),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PostcodeData {
    pub matches: Vec<AddressRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PostcodeResult {
    pub postcode: String,
    pub country: &'static str,
    pub data: PostcodeData,
}

/// Every address at the postcode; unknown postcodes (no addresses and not in the postcode
/// directory) are not found.
/// (The answer as its JSON text, see [`RecordCache`].)
pub async fn by_postcode(
    ctx: &AddressCtx,
    pc: &Postcode,
) -> Result<AsJson<PostcodeResult>, AddressError> {
    if ctx.index.current().is_empty() {
        return Err(AddressError::NotFound(NO_REGISTER.into()));
    }
    let cache = &ctx.index.records;
    if let Some(r) = cache.by_postcode.get_with(pc.as_str(), AsJson::clone) {
        return Ok(r);
    }
    let result = AsJson::new(&postcode_from_store(ctx, pc).await?)?;
    cache.by_postcode.put(
        RecordCache::MAX_POSTCODES,
        pc.as_str().to_string(),
        result.clone(),
    );
    Ok(result)
}

async fn postcode_from_store(
    ctx: &AddressCtx,
    pc: &Postcode,
) -> Result<PostcodeResult, AddressError> {
    let rows = address::addresses_at_postcode(&ctx.db, pc.as_str()).await?;
    if rows.is_empty() && address::postcode(&ctx.db, pc.as_str()).await?.is_none() {
        return Err(AddressError::NotFound(format!("postcode {pc}")));
    }
    let mut matches: Vec<AddressRecord> = rows.iter().map(record_of).collect();
    matches.sort_by_key(natural_key);
    Ok(PostcodeResult {
        postcode: pc.to_string(),
        country: "UK",
        data: PostcodeData { matches },
    })
}

/// Street, then house number, then flat number, numerically where they are numbers.
fn natural_key(a: &AddressRecord) -> (String, u64, String, u64, String, i64) {
    fn num(s: &Option<String>) -> u64 {
        s.as_deref()
            .and_then(|s| {
                s.split(|c: char| !c.is_ascii_digit())
                    .find(|p| !p.is_empty())
            })
            .and_then(|d| d.parse().ok())
            .unwrap_or(u64::MAX)
    }
    (
        a.street.clone().unwrap_or_default(),
        num(&a.paon),
        a.paon.clone().unwrap_or_default(),
        // The building itself (no SAON) before its units.
        if a.saon.is_none() { 0 } else { num(&a.saon) },
        a.saon.clone().unwrap_or_default(),
        a.uprn,
    )
}
