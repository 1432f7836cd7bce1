//! Labelled noisy queries generated deterministically from a register, and accuracy measurement.

use std::collections::HashMap;

use crate::normalise;
use crate::{AddressEntry, AddressIndex, ResolveQuery, is_confident};

/// A query with the UPRN it should resolve to.
#[derive(Debug, Clone)]
pub struct NoisyQuery {
    pub query: ResolveQuery,
    pub expected_uprn: i64,
    pub kind: &'static str,
}

/// The kinds of noise, generated in turn.
pub const KINDS: &[&str] = &[
    "exact",
    "typo",
    "no_postcode",
    "wrong_postcode",
    "flat_format",
    "abbreviation",
    "reordered",
    "structured",
    "lower_case_no_punctuation",
];

pub use terrace_core::SplitMix64;

fn field(s: &Option<String>) -> Option<&str> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

fn title(s: &str) -> String {
    let mut out = String::new();
    normalise::title_case(s, &mut out);
    out
}

/// The displayable parts of an address, title-cased.
#[derive(Clone, Default)]
struct Parts {
    saon: Option<String>,
    paon: Option<String>,
    street: Option<String>,
    locality: Option<String>,
    town: Option<String>,
    postcode: Option<String>,
}

impl Parts {
    fn of(e: &AddressEntry) -> Parts {
        Parts {
            saon: field(&e.saon).map(title),
            paon: field(&e.paon).map(title),
            street: field(&e.street).map(title),
            locality: field(&e.locality).map(title),
            town: field(&e.town).map(title),
            postcode: field(&e.postcode).map(str::to_string),
        }
    }

    /// The first line: flat, building and street (`Flat 2, 10 High Street`).
    fn first_line(&self, flat_style: usize) -> String {
        let mut out = String::new();
        let numeric = |s: &Option<String>| {
            s.as_deref()
                .is_some_and(|s| s.as_bytes().first().is_some_and(u8::is_ascii_digit))
        };
        if let Some(s) = &self.saon {
            let flat_num = normalise::parse_designator(s);
            match (
                flat_style,
                flat_num.num,
                flat_num.words.is_empty() && numeric(&self.paon),
            ) {
                (1, Some(n), true) => out.push_str(&format!("{}/", show_num(n))),
                (2, Some(n), true) => out.push_str(&format!("Apartment {} ", show_num(n))),
                (3, Some(n), true) => out.push_str(&format!("{}, ", show_num(n))),
                _ => {
                    out.push_str(s);
                    out.push_str(", ");
                }
            }
        }
        if let Some(p) = &self.paon {
            out.push_str(p);
            out.push_str(if numeric(&self.paon) { " " } else { ", " });
        }
        if let Some(s) = &self.street {
            out.push_str(s);
        }
        out.trim_end_matches([',', ' ']).to_string()
    }

    fn line(&self, flat_style: usize, postcode: bool) -> String {
        let mut parts = vec![self.first_line(flat_style)];
        parts.extend(self.locality.clone());
        parts.extend(self.town.clone());
        if postcode {
            parts.extend(self.postcode.clone());
        }
        parts.retain(|p| !p.is_empty());
        parts.join(", ")
    }
}

fn show_num(n: normalise::NumSpec) -> String {
    let mut s = if n.lo == 0 && n.suffix != 0 {
        String::new()
    } else {
        n.lo.to_string()
    };
    if n.hi != n.lo {
        s.push_str(&format!("-{}", n.hi));
    }
    if n.suffix != 0 {
        s.push(n.suffix as char);
    }
    s
}

/// One random edit (substitution, deletion, insertion or transposition) after the first letter.
fn typo(word: &str, rng: &mut SplitMix64) -> String {
    let mut c: Vec<char> = word.chars().collect();
    let letter = |rng: &mut SplitMix64| (b'a' + rng.below(26) as u8) as char;
    let pos = 1 + rng.below(c.len() - 1);
    loop {
        let mut d = c.clone();
        match rng.below(4) {
            0 => d[pos] = letter(rng),
            1 => {
                d.remove(pos);
            }
            2 => d.insert(pos, letter(rng)),
            _ if pos + 1 < d.len() => d.swap(pos, pos + 1),
            _ => d.swap(pos - 1, pos),
        }
        let a: String = d.iter().collect();
        if !a.eq_ignore_ascii_case(word) {
            c = d;
            break;
        }
    }
    c.into_iter().collect()
}

/// Replaces the `k`-th word of at least four letters in `s` by a typo; `None` if there is none.
fn typo_in(s: &str, rng: &mut SplitMix64) -> Option<String> {
    let words: Vec<&str> = s.split(' ').collect();
    let long: Vec<usize> = (0..words.len())
        .filter(|&i| words[i].len() >= 4 && words[i].chars().all(char::is_alphabetic))
        .collect();
    if long.is_empty() {
        return None;
    }
    let pick = long[rng.below(long.len())];
    let mut out: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    out[pick] = typo(words[pick], rng);
    Some(out.join(" "))
}

fn abbreviated(street: &str) -> Option<String> {
    let mut changed = false;
    let words: Vec<String> = street
        .split(' ')
        .map(|w| match normalise::abbreviate(&w.to_uppercase()) {
            Some(a) => {
                changed = true;
                a.to_string()
            }
            None => w.to_string(),
        })
        .collect();
    changed.then(|| words.join(" "))
}

fn has_flat_number(e: &AddressEntry) -> bool {
    let Some(s) = field(&e.saon) else {
        return false;
    };
    let d = normalise::parse_designator(s);
    d.num.is_some()
        && d.words.is_empty()
        && field(&e.paon).is_some_and(|p| p.as_bytes()[0].is_ascii_digit())
}

fn text(s: String) -> ResolveQuery {
    ResolveQuery {
        address: Some(s),
        ..Default::default()
    }
}

/// Builds a query of one kind for an entry, or `None` if the entry does not suit the kind.
fn make(
    kind: &'static str,
    e: &AddressEntry,
    postcodes: &[&str],
    rng: &mut SplitMix64,
) -> Option<ResolveQuery> {
    let p = Parts::of(e);
    let with_pc = p.postcode.is_some();
    match kind {
        "exact" => Some(text(e.single_line())),
        "typo" => {
            let mut t = p.clone();
            if rng.chance(50) || t.town.is_none() {
                t.street = Some(typo_in(t.street.as_deref()?, rng)?);
            } else {
                t.town = Some(typo_in(t.town.as_deref()?, rng)?);
            }
            Some(text(t.line(0, rng.chance(50))))
        }
        "no_postcode" => with_pc.then(|| text(p.line(0, false))),
        "wrong_postcode" => {
            let own = p.postcode.as_deref()?;
            if postcodes.len() < 2 {
                return None;
            }
            let mut other = postcodes[rng.below(postcodes.len())];
            while other == own {
                other = postcodes[rng.below(postcodes.len())];
            }
            let mut t = p.clone();
            t.postcode = Some(other.to_string());
            Some(text(t.line(0, true)))
        }
        "flat_format" => {
            if !has_flat_number(e) {
                return None;
            }
            Some(text(p.line(1 + rng.below(3), rng.chance(50))))
        }
        "abbreviation" => {
            let mut t = p.clone();
            t.street = Some(abbreviated(t.street.as_deref()?)?);
            Some(text(t.line(0, rng.chance(50))))
        }
        "reordered" => {
            let first = p.first_line(0);
            let mut parts: Vec<String> = Vec::new();
            if with_pc && rng.chance(50) {
                parts.extend(p.postcode.clone());
                parts.push(first);
                parts.extend(p.locality.clone());
                parts.extend(p.town.clone());
            } else {
                parts.extend(p.town.clone());
                parts.extend(p.locality.clone());
                parts.push(first);
                parts.extend(p.postcode.clone());
            }
            parts.retain(|s| !s.is_empty());
            Some(text(parts.join(", ")))
        }
        "structured" => Some(ResolveQuery {
            address: None,
            saon: p.saon.clone(),
            paon: p.paon.clone(),
            street: p.street.clone(),
            locality: p.locality.clone().filter(|_| rng.chance(50)),
            town: p.town.clone(),
            postcode: p.postcode.clone().filter(|_| rng.chance(70)),
        }),
        "lower_case_no_punctuation" => {
            let s: String = e
                .single_line()
                .to_lowercase()
                .chars()
                .map(|c| {
                    if c.is_alphanumeric() || c == ' ' {
                        c
                    } else {
                        ' '
                    }
                })
                .collect();
            Some(text(s.split_whitespace().collect::<Vec<_>>().join(" ")))
        }
        _ => None,
    }
}

/// `n` noisy queries drawn from `entries`, the kinds in turn, deterministic for a seed.
/// Entries without text, and entries whose text is shared with another entry, are not used.
pub fn noisy_queries(entries: &[AddressEntry], n: usize, seed: u64) -> Vec<NoisyQuery> {
    let mut rng = SplitMix64::new(seed);
    let mut counts: HashMap<String, u32> = HashMap::new();
    let lines: Vec<String> = entries.iter().map(AddressEntry::single_line).collect();
    for l in &lines {
        *counts.entry(l.clone()).or_insert(0) += 1;
    }
    let usable: Vec<usize> = (0..entries.len())
        .filter(|&i| {
            let e = &entries[i];
            counts[&lines[i]] == 1
                && (field(&e.street).is_some() || field(&e.paon).is_some())
                && (field(&e.town).is_some() || field(&e.postcode).is_some())
        })
        .collect();
    drop(counts);
    let mut postcodes: Vec<&str> = entries.iter().filter_map(|e| field(&e.postcode)).collect();
    postcodes.sort_unstable();
    postcodes.dedup();
    let mut out = Vec::with_capacity(n);
    if usable.is_empty() {
        return out;
    }
    for k in 0..n {
        let kind = KINDS[k % KINDS.len()];
        let mut made = None;
        for _ in 0..200 {
            let e = &entries[usable[rng.below(usable.len())]];
            if let Some(q) = make(kind, e, &postcodes, &mut rng) {
                made = Some((q, e.uprn, kind));
                break;
            }
        }
        let (query, expected_uprn, kind) = made.unwrap_or_else(|| {
            let e = &entries[usable[rng.below(usable.len())]];
            (text(e.single_line()), e.uprn, "exact")
        });
        out.push(NoisyQuery {
            query,
            expected_uprn,
            kind,
        });
    }
    out
}

/// Precision and recall at the top candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Accuracy {
    pub n: usize,
    /// Queries whose candidates were confident ([`is_confident`]).
    pub answered_confident: usize,
    /// Queries whose top candidate had the expected UPRN.
    pub correct_top: usize,
    /// Confident queries whose top candidate had the expected UPRN.
    pub correct_confident: usize,
    /// correct_confident / answered_confident (1 when nothing was confident).
    pub precision: f64,
    /// correct_top / n.
    pub recall: f64,
    /// Per kind: (kind, queries, correct top).
    pub by_kind: Vec<(&'static str, usize, usize)>,
}

/// Resolves every query and measures precision and recall at the top candidate.
pub fn measure(index: &AddressIndex, queries: &[NoisyQuery]) -> Accuracy {
    let mut acc = Accuracy {
        n: queries.len(),
        answered_confident: 0,
        correct_top: 0,
        correct_confident: 0,
        precision: 1.0,
        recall: 0.0,
        by_kind: Vec::new(),
    };
    for q in queries {
        let cands = index.resolve(&q.query, 5);
        let correct = cands.first().is_some_and(|c| c.uprn == q.expected_uprn);
        let confident = is_confident(&cands);
        acc.correct_top += usize::from(correct);
        acc.answered_confident += usize::from(confident);
        acc.correct_confident += usize::from(correct && confident);
        let slot = match acc.by_kind.iter().position(|k| k.0 == q.kind) {
            Some(i) => i,
            None => {
                acc.by_kind.push((q.kind, 0, 0));
                acc.by_kind.len() - 1
            }
        };
        acc.by_kind[slot].1 += 1;
        acc.by_kind[slot].2 += usize::from(correct);
    }
    if acc.answered_confident > 0 {
        acc.precision = acc.correct_confident as f64 / acc.answered_confident as f64;
    }
    if acc.n > 0 {
        acc.recall = acc.correct_top as f64 / acc.n as f64;
    }
    acc
}
