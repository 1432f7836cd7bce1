//! An in-memory address index and matcher: autocomplete, resolve (text or fields to UPRN
//! candidates with a similarity score), and noisy-query generation for accuracy tests.
//!
//! Architecture Invariant: this crate is pure. No database, no HTTP, no async; the service loads
//! [`AddressEntry`] rows, calls [`AddressIndex::build`] once, then shares the index read-only.
//!
//! Architecture Invariant: a query costs bounded work whatever the register size: candidates come
//! from the posting lists of the rarest words (capped), are filtered inside at most a dozen street
//! groups, and only those are scored. No query scans all entries.
//!
//! `autocomplete` is prefix-aware on the last word, typo-tolerant, deduplicated by text and
//! postcode-aware; `resolve` turns free text and/or structured fields into UPRN candidates with a
//! score in [0, 1], best first; `is_confident` says whether the top score is at least
//! `CONFIDENT_SCORE` and `CONFIDENT_MARGIN` ahead of the second, or, for a top candidate at the
//! query's own postcode (its [`Evidence`]) whose numbers agree, exactly or in another form, or
//! that is the only address of its street there carrying the query's house number, from lower
//! scores and margins (see [`is_confident`]). The
//! index groups entries into street groups (street + locality + town), keeps posting lists in
//! compact CSR arrays, stores its term dictionary in an `fst` map, and expands typos with its own
//! optimal-string-alignment automaton over that map. An accuracy test on a generated register
//! asserts precision and recall at the top candidate; a timing run on 1,000,000 addresses exists
//! as an ignored test.
//!
//! Candidates do not depend on a street group winning: the index also keeps number-word postings
//! (an address under each flat or house number it has, paired with each distinctive word of its
//! street, locality and building), so the address whose number and street or building are in the
//! query is a candidate with or without a postcode. That lookup is bounded too: at most three
//! words per query number, at most 64 addresses kept per word, chosen among at most 4,096.
//!
//! A number is written right before the name it numbers: among the candidates close to the best,
//! when one writes the query's word right after the query's number, the others carrying that
//! number with another word after it lose a little (`5 Birdall Terrace, Ferndale Road` is 5 on
//! Birdall Terrace, not 5 Ferndale Road at the same postcode).
//!
//! A resolve that finds no confident answer looks a second time with the long, rare words the
//! register knows (on at most 16 addresses) also reaching their one-edit neighbours, and keeps
//! the second look only when it is confident: a block the register spells two ways (`Colombus`
//! and `Columbus`) is found either way, and a query that is confident at once pays nothing more.
//!
//! The score is a similarity in [0, 1], not a probability; how often a top score is right is
//! measured on real addresses by `cargo xtask bench resolve --real DIR` (its calibration table),
//! and [`CONFIDENT_SCORE`] and [`CONFIDENT_MARGIN`] are set from it so that confident answers are
//! right at least 99.5% of the time on the Exeter task (docs/BENCHMARKS.md).

mod conflict;
mod fuzzy;
mod index;
mod matcher;
pub mod noise;
mod normalise;
mod query;

#[cfg(test)]
mod tests;

pub use conflict::Conflict;
use std::collections::HashSet;

pub use index::AddressIndex;

/// One address of the register.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct AddressEntry {
    pub uprn: i64,
    pub parent_uprn: Option<i64>,
    /// Secondary addressable object: `FLAT 2`, `UNIT 3`, `2`.
    pub saon: Option<String>,
    /// Primary addressable object: `10`, `63-65`, `ROSE COTTAGE`, `KINGS COURT 4`.
    pub paon: Option<String>,
    pub street: Option<String>,
    pub locality: Option<String>,
    pub town: Option<String>,
    /// Canonical `EX1 1AA` (upper case, one space) or `None`.
    pub postcode: Option<String>,
}

/// A trimmed, non-empty field.
pub(crate) fn nonempty(s: &Option<String>) -> Option<&str> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

fn starts_with_digit(s: &str) -> bool {
    s.trim_start()
        .as_bytes()
        .first()
        .is_some_and(u8::is_ascii_digit)
}

impl AddressEntry {
    /// The address on one line: `Flat 2, 10 High Street, Exeter, EX1 1AA` (title-case words,
    /// upper-case postcode, missing parts skipped; a house number joins its street).
    pub fn single_line(&self) -> String {
        let field = nonempty;
        let mut out = String::new();
        let sep = |out: &mut String, glue: &str| {
            if !out.is_empty() {
                out.push_str(glue);
            }
        };
        let (saon, paon, street) = (field(&self.saon), field(&self.paon), field(&self.street));
        if let Some(s) = saon {
            normalise::title_case(s, &mut out);
        }
        if let Some(p) = paon {
            // "2 Kings Court" rather than "2, Kings Court".
            let glue = if saon.is_some_and(starts_with_digit) && !starts_with_digit(p) {
                " "
            } else {
                ", "
            };
            sep(&mut out, glue);
            normalise::title_case(p, &mut out);
        }
        if let Some(s) = street {
            let glue = if paon.is_some_and(starts_with_digit) {
                " "
            } else {
                ", "
            };
            sep(&mut out, glue);
            normalise::title_case(s, &mut out);
        }
        for f in [field(&self.locality), field(&self.town)]
            .into_iter()
            .flatten()
        {
            sep(&mut out, ", ");
            normalise::title_case(f, &mut out);
        }
        if let Some(p) = field(&self.postcode) {
            sep(&mut out, ", ");
            out.push_str(&p.to_uppercase());
        }
        out
    }

    /// Rough length of [`AddressEntry::single_line`] without building it.
    fn approx_len(&self) -> usize {
        [
            &self.saon,
            &self.paon,
            &self.street,
            &self.locality,
            &self.town,
            &self.postcode,
        ]
        .iter()
        .map(|f| f.as_deref().map_or(0, |s| s.len() + 2))
        .sum()
    }
}

/// A resolve request: free text, structured fields, or both.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct ResolveQuery {
    pub address: Option<String>,
    pub saon: Option<String>,
    pub paon: Option<String>,
    pub street: Option<String>,
    pub locality: Option<String>,
    pub town: Option<String>,
    pub postcode: Option<String>,
}

/// An autocomplete suggestion.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Suggestion {
    /// Index into the index's entries ([`AddressIndex::entry`]).
    pub entry: u32,
    pub text: String,
    /// In [0, 1].
    pub score: f64,
}

/// A resolve candidate.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Candidate {
    pub entry: u32,
    pub uprn: i64,
    /// In [0, 1]; candidates come best first.
    pub score: f64,
    /// What the score was made of; given for the first candidate only.
    pub evidence: Option<Evidence>,
}

/// What a candidate's score was made of.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct Evidence {
    /// The (rarity-weighted) share of the query's words the address carries, in [0, 1].
    pub query_cover: f64,
    /// The share of the address' own words the query carries, in [0, 1].
    pub address_cover: f64,
    /// The query names a street type or qualifier the address' street lacks while it has another.
    pub street_type_conflict: bool,
    /// Agreement of the flat and house numbers in [0, 1]; `None` when neither side has any.
    pub numbers: Option<f64>,
    /// Agreement of the postcode in [0, 1] (1 the same); `None` when the query gives none.
    pub postcode: Option<f64>,
    /// The query's flat number is the address' own flat number, and the query adds a house
    /// number the address does not write (`Flat 4 Canon House, 32 Bedford Street` for `Flat 4,
    /// Canon House`): the same flat, its building named by number as well as by name.
    pub flat_agrees_house_added: bool,
    /// The query gives a house number and names no flat, the address is at the query's postcode,
    /// and no other address of its street there carries that number as a house or flat number
    /// (`46 Oxford Road` for `Flat A, 46 Oxford Road`, the only address of house 46 at its
    /// postcode; an address of another street does not count, one whose street is unknown does).
    pub only_number_at_postcode: bool,
    /// What in the query contradicts the address (another building name, floor, street
    /// qualifier or postcode, a number placed on another thing): caps confidence whatever the
    /// score ([`is_confident`]; `conflict.rs`).
    pub conflict: Option<Conflict>,
}

/// A top candidate at or above this score may be a confident match (see [`is_confident`]); chosen
/// with the margin on the real Exeter task, where it keeps precision above 99.5% (docs/BENCHMARKS.md).
pub const CONFIDENT_SCORE: f64 = 0.82;
/// How far a confident top candidate must be ahead of the second.
pub const CONFIDENT_MARGIN: f64 = 0.03;
/// Resolve candidates below this score are not returned.
const MIN_RESOLVE_SCORE: f32 = 0.15;

/// A top candidate at the query's own postcode whose flat and house numbers agree exactly may be
/// confident from this score ...
pub const CONFIDENT_SCORE_AGREEING: f64 = 0.65;
/// ... when this far ahead of the second (whether or not the query names another street type:
/// the postcode and the numbers say which street it is).
pub const CONFIDENT_MARGIN_AGREEING: f64 = 0.05;
/// Numbers that agree as another form of the same designation (`Flat 5, Priory View` for `5
/// Priory View`, `Flat 4, Canon House` for `Flat 4, Canon House 32`, `Flat C, 6` for `6C`) score
/// at least this; a number the address does not have, or a flat guessed among a house's unnumbered
/// flats, scores less and never makes an answer confident below [`CONFIDENT_SCORE`].
pub const NUMBERS_AGREE_IN_FORM: f64 = 0.85;
/// A top candidate at the query's own postcode whose numbers agree in form may be confident from
/// [`CONFIDENT_SCORE_AGREEING`] when this far ahead of the second.
pub const CONFIDENT_MARGIN_AGREEING_FORM: f64 = 0.15;
/// A house number answered with one of its flats, or a range of house numbers with one of them,
/// scores this; it may be confident at the query's own postcode only when the address is the
/// only one there carrying the number ([`Evidence::only_number_at_postcode`]).
pub const NUMBERS_AGREE_AS_PART: f64 = 0.75;

/// Rules a bench may switch off to measure what each one does (`cargo xtask bench resolve
/// --ablate`); the service never does. Bits: [`Conflict`] kinds by [`Conflict::bit`], and
/// [`ABLATE_FLAT_HOUSE_ADDED`], [`ABLATE_ONLY_NUMBER`] for the two rules of evidence that
/// accept a lower score.
static ABLATED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
/// [`Evidence::flat_agrees_house_added`] ignored by [`is_confident`].
pub const ABLATE_FLAT_HOUSE_ADDED: u32 = 1 << 8;
/// [`Evidence::only_number_at_postcode`] ignored by [`is_confident`].
pub const ABLATE_ONLY_NUMBER: u32 = 1 << 9;

/// Switch rules off for a measurement (see [`ABLATED`]); 0 restores them all.
#[doc(hidden)]
pub fn ablate(mask: u32) {
    ABLATED.store(mask, std::sync::atomic::Ordering::Relaxed);
}

fn ablated(bit: u32) -> bool {
    ABLATED.load(std::sync::atomic::Ordering::Relaxed) & bit != 0
}

/// Is the top candidate a confident match?
///
/// Either its score is at least [`CONFIDENT_SCORE`] and [`CONFIDENT_MARGIN`] ahead of the second,
/// or it is at the query's own postcode ([`Candidate::evidence`]) and
/// - its flat and house numbers agree exactly, from [`CONFIDENT_SCORE_AGREEING`] and
///   [`CONFIDENT_MARGIN_AGREEING`] ahead;
/// - they agree in another form (at least [`NUMBERS_AGREE_IN_FORM`], or the query's flat is the
///   address' flat and the query adds a house number the address does not write), from
///   [`CONFIDENT_SCORE_AGREEING`] and [`CONFIDENT_MARGIN_AGREEING_FORM`] ahead;
/// - the query names no flat and the address is the only one of its street at the postcode
///   carrying the query's house number, which it carries at least as a part ([`NUMBERS_AGREE_AS_PART`]: `46
///   Oxford Road` for `Flat A, 46 Oxford Road`), from [`CONFIDENT_SCORE_AGREEING`] and
///   [`CONFIDENT_MARGIN_AGREEING`] ahead: the postcode and the number pick it out.
///
/// With no number on either side there is no second rule: `Caretakers Flat, St Marys Point` or
/// `Annexe Rear of the Old Smithy` at the postcode of `St Marys Point` or `The Old Smithy` may be
/// its own dwelling, and only the words tell.
///
/// These rules are for the words a lodgement adds or words differently while its postcode and
/// numbers say the same (`The Annexe, 25 Prospect Park` for `25 Prospect Park` at its postcode).
/// They were chosen on one half of the Exeter task split by UPRN and checked on the other
/// (docs/BENCHMARKS.md, sessions 12 and 14); without a postcode only the first rule applies.
pub fn is_confident(candidates: &[Candidate]) -> bool {
    let Some(top) = candidates.first() else {
        return false;
    };
    if top
        .evidence
        .and_then(|ev| ev.conflict)
        .is_some_and(|c| !ablated(c.bit()))
    {
        return false;
    }
    let second = candidates.get(1).map_or(0.0, |c| c.score);
    let margin = top.score - second;
    if top.score >= CONFIDENT_SCORE && margin >= CONFIDENT_MARGIN {
        return true;
    }
    let Some(ev) = top.evidence.filter(|ev| ev.postcode == Some(1.0)) else {
        return false;
    };
    if top.score < CONFIDENT_SCORE_AGREEING {
        return false;
    }
    match ev.numbers {
        Some(n) if n >= 0.99 => margin >= CONFIDENT_MARGIN_AGREEING,
        Some(n)
            if n >= NUMBERS_AGREE_AS_PART
                && ev.only_number_at_postcode
                && !ablated(ABLATE_ONLY_NUMBER) =>
        {
            margin >= CONFIDENT_MARGIN_AGREEING
        }
        Some(n)
            if n >= NUMBERS_AGREE_IN_FORM
                || ev.flat_agrees_house_added && !ablated(ABLATE_FLAT_HOUSE_ADDED) =>
        {
            margin >= CONFIDENT_MARGIN_AGREEING_FORM
        }
        Some(_) | None => false,
    }
}

/// The query's address text, its structured fields joined as separate parts.
fn query_text(q: &ResolveQuery) -> String {
    [&q.address, &q.saon, &q.paon, &q.street, &q.locality]
        .into_iter()
        .filter_map(nonempty)
        .collect::<Vec<_>>()
        .join(", ")
}

impl AddressIndex {
    /// Suggestions for text being typed: prefix-aware on the last word, typo-tolerant, ranked,
    /// deduplicated by text, at most `max`. A (partial) postcode lists the addresses at it.
    pub fn autocomplete(&self, q: &str, max: usize) -> Vec<Suggestion> {
        if max == 0 {
            return Vec::new();
        }
        let mut pq = query::parse_text(q, true);
        if pq.is_empty() {
            return Vec::new();
        }
        if pq.only_postcode {
            let found = self.postcode_suggestions(&pq, max);
            if !found.is_empty() {
                return found;
            }
            pq = query::parse_text_with(q, true, false);
        }
        let plan = matcher::Plan::new(self, pq);
        let mut scored: Vec<(u32, usize, u32)> = plan
            .run()
            .into_iter()
            .map(|(s, e)| {
                (
                    (s * 10_000.0).round() as u32,
                    self.entries[e as usize].approx_len(),
                    e,
                )
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for (s, _, e) in scored {
            if s == 0 {
                break;
            }
            let text = self.entries[e as usize].single_line();
            if seen.insert(text.clone()) {
                out.push(Suggestion {
                    entry: e,
                    text,
                    score: f64::from(s) / 10_000.0,
                });
                if out.len() >= max {
                    break;
                }
            }
        }
        out
    }

    fn postcode_suggestions(&self, pq: &query::ParsedQuery, max: usize) -> Vec<Suggestion> {
        let (ranges, score) = if let Some(p) = pq.postcode.as_deref() {
            match self.postcodes.binary_search_by(|c| (**c).cmp(p)) {
                Ok(i) => (vec![(i as u32, i as u32 + 1)], 1.0),
                Err(_) => (Vec::new(), 1.0),
            }
        } else if let Some(prefix) = pq.pc_prefix.as_deref() {
            let typed = prefix.bytes().filter(|&b| b != b' ').count() as f64;
            (
                self.postcode_prefix_ranges(prefix),
                (0.5 + 0.4 * typed / 7.0).min(0.9),
            )
        } else {
            (Vec::new(), 0.0)
        };
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for (lo, hi) in ranges {
            for p in lo..hi {
                for &e in self.pc_entries.row(p as usize) {
                    if !self.has_text[e as usize] {
                        continue;
                    }
                    let text = self.entries[e as usize].single_line();
                    if seen.insert(text.clone()) {
                        out.push(Suggestion {
                            entry: e,
                            text,
                            score,
                        });
                        if out.len() >= max {
                            return out;
                        }
                    }
                }
            }
        }
        out
    }

    /// Candidates for free text and/or structured fields, best first, one per UPRN, at most `max`.
    pub fn resolve(&self, q: &ResolveQuery, max: usize) -> Vec<Candidate> {
        if max == 0 {
            return Vec::new();
        }
        let pq = query::parse_resolve(q);
        if pq.is_empty() {
            return Vec::new();
        }
        let text = query_text(q);
        let first = self.resolve_plan(matcher::Plan::new(self, pq.clone()), max, &text);
        if is_confident(&first) {
            return first;
        }
        // No confident answer: look again with the rare words' spelling neighbours, and keep
        // the second look only when it finds one.
        let second = self.resolve_plan(matcher::Plan::with_neighbours(self, pq, true), max, &text);
        if is_confident(&second) { second } else { first }
    }

    fn resolve_plan(&self, plan: matcher::Plan<'_>, max: usize, text: &str) -> Vec<Candidate> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for (s, e) in plan.run() {
            if s < MIN_RESOLVE_SCORE {
                break;
            }
            let uprn = self.entries[e as usize].uprn;
            if seen.insert(uprn) {
                out.push(Candidate {
                    entry: e,
                    uprn,
                    score: f64::from(s),
                    evidence: out.is_empty().then(|| {
                        let mut ev = plan.evidence(e);
                        ev.conflict = ev
                            .conflict
                            .or_else(|| conflict::text_conflict(text, &self.entries[e as usize]));
                        ev
                    }),
                });
                if out.len() >= max {
                    break;
                }
            }
        }
        out
    }
}
