//! Candidate gathering and field-aware scoring, shared by autocomplete and resolve.
//!
//! A query costs a bounded amount of work whatever the size of the register:
//! 1. each word is expanded to term ids (exact, abbreviation reading, prefix range when still
//!    being typed, and edit-distance neighbours from the term fst);
//! 2. street groups are gathered from the posting list of the rarest word (and of the second
//!    rarest if the first found no group carrying every word), at most [`GROUP_SCAN_CAP`];
//! 3. the best [`GROUP_TOP`] groups are opened and their addresses filtered by house number and
//!    building-name words, plus the addresses carrying the rarest building-name word, those
//!    carrying a query number with one of the query's rarest words (the number-word postings,
//!    whichever group won) and those at the postcode;
//! 4. each candidate is scored in [0, 1] from word coverage (rarity weighted, exact over fuzzy),
//!    the address' own coverage, number agreement and postcode agreement. Words the query adds
//!    to an address it fully covers are forgiven in part when they name a street or place at the
//!    address' own postcode, or a place when the register gives the address none; a street type
//!    the address' street lacks while it has another (`Avenue` for `Close`) costs;
//! 5. among the candidates close to the best, when one writes the query's word right after the
//!    query's number (`5 Birdall Terrace, Ferndale Road`: `BIRDALL` after 5), those carrying that
//!    number with another word after it (`5 Ferndale Road`) lose a little: a number is written
//!    right before the name it numbers.
//!
//! Two query words the register writes as one (`Corn Mill` for `Cornmill`) are joined before
//! matching, and the index carries every two adjacent words of a field joined (`CORNMILL` for
//! `Corn Mill`) as terms that match but never count in an address' own coverage.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use fst::{IntoStreamer, Streamer};

use crate::Evidence;
use crate::fuzzy::{MAX_FUZZY_LEN, Osa, osa_distance};
use crate::index::{AddressIndex, Field, NO_GROUP, NO_NEXT_WORD, TERM_MASK, field_of};
use crate::normalise::{self, NumSpec};
use crate::query::{ParsedQuery, QNum, QWord};

/// Words beyond this many are ignored (the HTTP layer limits query length anyway).
pub(crate) const MAX_WORDS: usize = 12;
/// Street groups fully scored per driver word.
const GROUP_SCAN_CAP: usize = 4000;
/// Groups of the rarest word checked (cheaply) for the second rarest word.
const FILTER_SCAN_CAP: usize = 60_000;
/// ... when the driver is a word still being typed, or only one or two letters of it.
const GROUP_SCAN_CAP_PREFIX: usize = 1500;
const GROUP_SCAN_CAP_SHORT: usize = 400;
/// Street groups opened to look at their addresses.
const GROUP_TOP: usize = 12;
/// Addresses looked at per opened group, and kept per group.
const GROUP_ENTRY_SCAN: usize = 4096;
const GROUP_ENTRY_KEEP: usize = 192;
/// A building-name word is used to gather addresses directly when it is at most this common,
/// and at most this many of its addresses are kept.
const ENTRY_DRIVER_CAP: usize = 20_000;
const ENTRY_DRIVER_KEEP: usize = 400;
/// Number-word candidates: the rarest words tried per query number, the addresses kept per
/// word, and at most how many of a too-common word's addresses are ranked to choose them.
const NUMWORD_WORDS: usize = 3;
const NUMWORD_KEEP: usize = 64;
const NUMWORD_SCAN: usize = 4096;
/// A prefix range wider than this many terms is not looked up under a number.
const NUMWORD_RANGE_CAP: u32 = 16;
/// Groups scoring below this share of the best group are not opened.
const GROUP_KEEP_RATIO: f32 = 0.6;
/// Addresses taken from one postcode.
const POSTCODE_CAP: usize = 512;
/// Edit-distance neighbours taken per word.
const FUZZY_CAP: usize = 64;
const FUZZY_PREFIX_CAP: usize = 256;

const Q_EXACT: f32 = 1.0;
const Q_ALT: f32 = 0.9;
const Q_PREFIX: f32 = 0.9;
const Q_FUZZY1: f32 = 0.8;
const Q_FUZZY2: f32 = 0.7;
/// One edit in a word of at least this many letters (`Colombus`, `Sadler`) is about as likely a
/// spelling of the register's word as an abbreviation is.
const FUZZY1_LONG: usize = 6;
const Q_FUZZY1_LONG: f32 = 0.9;
/// A known word on at most this many addresses also reaches its one-edit neighbours.
const RARE_KNOWN_DF: usize = 16;
/// ... at a quality below a typo of an unknown word: the register's own spelling may be another
/// street (`Wonford` and `Wynford`).
const Q_FUZZY_KNOWN: f32 = 0.6;
const Q_FUZZY_PREFIX: f32 = 0.7;
/// A known word's singular for its plural, or the other way round ...
const Q_NUMBER_FORM: f32 = 0.8;
/// ... when that form is on at most this many addresses and is no street type or flat word
/// (`GARDEN` for `GARDENS` would open every garden's street for little).
const NUMBER_FORM_CAP: u64 = 256;
/// The weight of postcode agreement beside the text (4) and the numbers (3).
const POSTCODE_WEIGHT: f32 = 2.0;
/// How much a query word found only among the streets and places at an address' postcode counts.
const PC_WORD_QUALITY: f32 = 0.7;
/// ... a town or locality word, for an address the register gives none.
const MISSING_PLACE_QUALITY: f32 = 0.6;
/// The share of the text score that depends on how much of the address' own words the query
/// covers (the rest is how much of the query the address covers).
const ECOV_SHARE: f32 = 0.45;
/// A street type or qualifier the address' street does not carry while it carries another.
const STREET_TYPE_CONFLICT: f32 = 0.75;
/// What a candidate close to the best loses when it writes another word after the query's number
/// than the query and another candidate do (see [`Plan::prefer_named_after_number`]), how close
/// it must be, and among how many.
const NEXT_WORD_PENALTY: f32 = 0.04;
const NEXT_WORD_WINDOW: f32 = 0.1;
const NEXT_WORD_TOP: usize = 32;
/// Weight of a word that matches nothing in the register.
const UNMATCHED_WEIGHT: f32 = 3.0;
const IGNORABLE_WEIGHT: f32 = 0.3;
/// Least weight of a town, locality or postcode district word.
const PLACE_WEIGHT: f32 = 2.5;

/// A fast hasher for `u32` keys (street group ids).
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type IdMap<V> = HashMap<u32, V, BuildHasherDefault<IdHasher>>;

/// How one query word matches terms.
struct WordPlan {
    /// Term-id ranges with their match quality (exact, alternative reading, prefix).
    ranges: Vec<(u32, u32, f32)>,
    /// Single fuzzy neighbours, sorted by term id.
    points: Vec<(u32, f32)>,
    weight: f32,
    group_df: usize,
    entry_df: usize,
    /// Being typed and only one or two letters long: matches too much to drive the search.
    short_prefix: bool,
    /// Best read as a town, locality or postcode district name.
    place: bool,
    /// A street type (`ROAD`, `CLOSE`).
    street_type: bool,
    /// A qualifier of a street name (`NORTH`, `LOWER`).
    qualifier: bool,
}

impl WordPlan {
    #[inline]
    fn quality(&self, t: u32) -> f32 {
        let mut q = 0.0f32;
        for &(lo, hi, rq) in &self.ranges {
            if lo <= t && t < hi && rq > q {
                q = rq;
            }
        }
        if !self.points.is_empty()
            && let Ok(i) = self.points.binary_search_by_key(&t, |p| p.0)
        {
            q = q.max(self.points[i].1);
        }
        q
    }

    fn slices<'a>(&'a self, post: &'a crate::index::Csr) -> impl Iterator<Item = &'a [u32]> + 'a {
        self.ranges
            .iter()
            .map(move |&(lo, hi, _)| post.rows(lo, hi))
            .chain(self.points.iter().map(move |&(t, _)| post.rows(t, t + 1)))
    }
}

/// Per street group: the best quality with which it matches each query word, and how much of
/// the group's own words the query covers (the street always; locality and town only when the
/// query names them, so `Lynton` prefers Lynton over East Lynton but may omit the town).
#[derive(Clone, Copy)]
struct GroupMatch {
    m: [f32; MAX_WORDS],
    core_matched: f32,
    core_total: f32,
    /// The group names a town or locality.
    has_place: bool,
    /// The group's street carries a street type.
    has_street_type: bool,
    /// The group's street carries a qualifier (`NORTH`, `LOWER`).
    has_qualifier: bool,
}

const NO_MATCH: GroupMatch = GroupMatch {
    m: [0.0; MAX_WORDS],
    core_matched: 0.0,
    core_total: 0.0,
    has_place: false,
    has_street_type: false,
    has_qualifier: false,
};

pub(crate) struct Plan<'a> {
    idx: &'a AddressIndex,
    pub q: ParsedQuery,
    words: Vec<WordPlan>,
    total_weight: f32,
    pc_id: Option<u32>,
    /// The query names a flat (a flat number, or words such as `FLAT`, `GROUND FLOOR`).
    flat_named: bool,
}

impl<'a> Plan<'a> {
    pub(crate) fn new(idx: &'a AddressIndex, q: ParsedQuery) -> Plan<'a> {
        Plan::with_neighbours(idx, q, false)
    }

    /// A plan whose long, rare words the register knows also reach their one-edit neighbours
    /// (see [`RARE_KNOWN_DF`]): a second look for a query the first plan found no confident
    /// answer to, since the neighbour search costs about ten times the rest of a query.
    pub(crate) fn with_neighbours(
        idx: &'a AddressIndex,
        mut q: ParsedQuery,
        known_neighbours: bool,
    ) -> Plan<'a> {
        join_compounds(idx, &mut q.words);
        q.words.truncate(MAX_WORDS);
        let words: Vec<WordPlan> = q
            .words
            .iter()
            .map(|w| expand(idx, w, known_neighbours))
            .collect();
        let total_weight = words.iter().map(|w| w.weight).sum();
        let pc_id = q.postcode.as_deref().and_then(|p| {
            idx.postcodes
                .binary_search_by(|c| (**c).cmp(p))
                .ok()
                .map(|i| i as u32)
        });
        let flat_named = q.saon.is_some()
            || q.words.iter().any(|w| {
                normalise::is_flat_marker(&w.text) || normalise::is_position_word(&w.text)
            });
        Plan {
            idx,
            q,
            words,
            total_weight,
            pc_id,
            flat_named,
        }
    }

    fn match_group(&self, g: u32) -> GroupMatch {
        let idx = self.idx;
        let mut gm = NO_MATCH;
        // Matched and total weight of the street, locality and town words.
        let mut matched = [0.0f32; 3];
        let mut total = [0.0f32; 3];
        let row = idx.group_terms.row(g as usize);
        let mut joined: Vec<(u32, f32)> = Vec::new();
        for &t in row {
            let term = t & TERM_MASK;
            let mut best = 0.0f32;
            for (i, w) in self.words.iter().enumerate() {
                let q = w.quality(term);
                if q > gm.m[i] {
                    gm.m[i] = q;
                }
                best = best.max(q);
            }
            let f = field_of(t) as usize;
            if f == Field::Joined as usize && best > 0.0 {
                joined.push((term, best));
            }
            if f == Field::Town as usize || f == Field::Locality as usize {
                gm.has_place = true;
            } else if f == Field::Street as usize {
                let word = idx.terms.get(term);
                gm.has_street_type |= normalise::is_street_type(word);
                gm.has_qualifier |= normalise::is_qualifier(word);
            }
            if f <= Field::Town as usize {
                let cw = idx.core_weight(t);
                total[f] += cw;
                matched[f] += cw * best;
            }
        }
        if !joined.is_empty() {
            for &t in row {
                let f = field_of(t) as usize;
                if f <= Field::Town as usize {
                    let extra = self.joined_extra(t & TERM_MASK, &joined);
                    matched[f] += idx.core_weight(t) * extra;
                }
            }
        }
        for f in 0..3 {
            if f == Field::Street as usize || matched[f] > 0.0 {
                gm.core_total += total[f];
                gm.core_matched += matched[f];
            }
        }
        gm
    }

    /// How well a word of a field is covered through a matched joined term it is part of: the
    /// query wrote `Ashleigh` for the register's `Ash Leigh` (or `Corn Mill` for a register that
    /// also knows `Cornmill`), and both halves count as said.
    fn joined_part_quality(&self, term: u32, joined: &[(u32, f32)]) -> f32 {
        let word = self.idx.terms.get(term);
        joined
            .iter()
            .filter(|&&(j, _)| {
                let j = self.idx.terms.get(j);
                j.len() > word.len() && (j.starts_with(word) || j.ends_with(word))
            })
            .map(|&(_, q)| q)
            .fold(0.0f32, f32::max)
    }

    /// What a matched joined term adds to a word's own match (0 when nothing).
    fn joined_extra(&self, term: u32, joined: &[(u32, f32)]) -> f32 {
        let via = self.joined_part_quality(term, joined);
        if via == 0.0 {
            return 0.0;
        }
        let direct = self
            .words
            .iter()
            .map(|w| w.quality(term))
            .fold(0.0f32, f32::max);
        (via - direct).max(0.0)
    }

    fn group_score(&self, gm: &GroupMatch) -> f32 {
        self.words
            .iter()
            .enumerate()
            .map(|(i, w)| w.weight * gm.m[i])
            .sum()
    }

    fn group_has_word(&self, g: u32, i: usize) -> bool {
        let w = &self.words[i];
        self.idx
            .group_terms
            .row(g as usize)
            .iter()
            .any(|&t| w.quality(t & TERM_MASK) > 0.0)
    }

    /// Does the group match every word that matches any group at all?
    fn group_is_full(&self, gm: &GroupMatch) -> bool {
        self.words
            .iter()
            .enumerate()
            .all(|(i, w)| w.group_df == 0 || gm.m[i] > 0.0)
    }

    fn num_compatible(&self, e: usize) -> bool {
        let [es, ep] = self.idx.nums[e];
        [self.q.saon, self.q.paon]
            .into_iter()
            .flatten()
            .any(|qn| num_sim(qn, es) > 0.0 || num_sim(qn, ep) > 0.0)
    }

    /// How many of `words` the address' own (building) terms match.
    fn own_match_count(&self, e: usize, words: &[usize]) -> usize {
        let own = self.idx.own.row(e);
        words
            .iter()
            .filter(|&&i| {
                own.iter()
                    .any(|&t| self.words[i].quality(t & TERM_MASK) > 0.0)
            })
            .count()
    }

    fn own_matches_any(&self, e: usize, words: &[usize]) -> bool {
        self.idx.own.row(e).iter().any(|&t| {
            let term = t & TERM_MASK;
            words.iter().any(|&i| self.words[i].quality(term) > 0.0)
        })
    }

    /// Gathers candidate entries (deduplicated) and the group matches computed on the way.
    fn gather(&self) -> (Vec<u32>, IdMap<GroupMatch>) {
        let idx = self.idx;
        let mut cache: IdMap<GroupMatch> = IdMap::default();
        let mut out: Vec<u32> = Vec::new();

        // Street groups from the rarest words.
        // A word still being typed with one or two letters drives only when nothing else can.
        let short = |i: usize| self.words[i].short_prefix;
        let mut drivers: Vec<usize> = (0..self.words.len())
            .filter(|&i| self.words[i].group_df > 0 && !short(i))
            .collect();
        let entry_words = (0..self.words.len()).any(|i| self.words[i].entry_df > 0 && !short(i));
        if drivers.is_empty() && !entry_words {
            drivers = (0..self.words.len())
                .filter(|&i| self.words[i].group_df > 0)
                .collect();
        }
        drivers.sort_by_key(|&i| self.words[i].group_df);
        let mut scored: Vec<(f32, u32)> = Vec::new();
        let mut full_found = false;
        // While scanning the rarest word's groups, only those also carrying the second rarest
        // are scored at once; the others only if no group turns out to carry every word.
        let second = drivers.get(1).copied();
        let mut deferred: Vec<u32> = Vec::new();
        for (k, &d) in drivers.iter().enumerate() {
            if k >= 2 || (k == 1 && full_found) {
                break;
            }
            let filter = if k == 0 { second } else { None };
            let mut budget = if self.words[d].short_prefix {
                GROUP_SCAN_CAP_SHORT
            } else if self.q.words[d].unfinished {
                GROUP_SCAN_CAP_PREFIX
            } else {
                GROUP_SCAN_CAP
            };
            let mut filter_left = FILTER_SCAN_CAP;
            cache.reserve(budget.min(self.words[d].group_df));
            'scan: for slice in self.words[d].slices(&idx.group_post) {
                for &g in slice {
                    if budget == 0 || filter_left == 0 {
                        break 'scan;
                    }
                    if cache.contains_key(&g) {
                        continue;
                    }
                    if let Some(s) = filter {
                        filter_left -= 1;
                        if !self.group_has_word(g, s) {
                            deferred.push(g);
                            continue;
                        }
                    }
                    budget -= 1;
                    let gm = self.match_group(g);
                    full_found |= self.group_is_full(&gm);
                    scored.push((self.group_score(&gm), g));
                    cache.insert(g, gm);
                }
            }
            if !full_found {
                deferred.truncate(budget);
                for g in deferred.drain(..) {
                    if let std::collections::hash_map::Entry::Vacant(v) = cache.entry(g) {
                        let gm = self.match_group(g);
                        full_found |= self.group_is_full(&gm);
                        scored.push((self.group_score(&gm), g));
                        v.insert(gm);
                    }
                }
            }
        }
        if scored.len() > GROUP_TOP {
            scored.select_nth_unstable_by(GROUP_TOP - 1, |a, b| {
                b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
            });
            scored.truncate(GROUP_TOP);
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let best = scored.first().map_or(0.0, |s| s.0);
        let has_nums = self.q.has_numbers();
        let mut leftover: Vec<usize> = Vec::with_capacity(self.words.len());
        // Does the clearly best group hold an address with every word the group lacks?
        let clear_best = scored.len() == 1 || scored.get(1).is_some_and(|s| s.0 < best * 0.95);
        let mut best_explained = false;
        for (rank, &(s, g)) in scored.iter().enumerate() {
            if s < best * GROUP_KEEP_RATIO {
                break;
            }
            let gm = cache[&g];
            leftover.clear();
            leftover.extend(
                (0..self.words.len()).filter(|&i| gm.m[i] == 0.0 && self.words[i].entry_df > 0),
            );
            let (a, b) = (
                idx.group_start[g as usize] as usize,
                idx.group_start[g as usize + 1] as usize,
            );
            let filtered = has_nums || !leftover.is_empty();
            if !filtered && b - a <= 48 {
                out.extend(a as u32..b as u32);
                continue;
            }
            if rank == 0 && clear_best && !leftover.is_empty() {
                best_explained = (a..b.min(a + GROUP_ENTRY_SCAN))
                    .any(|e| self.own_match_count(e, &leftover) == leftover.len());
            }
            let mut kept = 0;
            for e in a..b.min(a + GROUP_ENTRY_SCAN) {
                let keep = if filtered {
                    (has_nums && self.num_compatible(e))
                        || (!leftover.is_empty() && self.own_matches_any(e, &leftover))
                } else {
                    true
                };
                if keep {
                    out.push(e as u32);
                    kept += 1;
                    if kept >= GROUP_ENTRY_KEEP || (!filtered && kept >= 48) {
                        break;
                    }
                }
            }
            if kept == 0 {
                out.extend(a as u32..(a + 8).min(b) as u32);
            }
        }

        // Building-name words the best street group does not explain (`Rose Cottage, Exeter`):
        // addresses carrying the rarest of them and (all but one of) the others.
        let best_gm = scored.first().map(|&(_, g)| cache[&g]);
        let unexplained: Vec<usize> = (0..self.words.len())
            .filter(|&i| self.words[i].entry_df > 0 && best_gm.is_none_or(|gm| gm.m[i] == 0.0))
            .collect();
        if !best_explained
            && let Some(&d) = unexplained.iter().min_by_key(|&&i| self.words[i].entry_df)
            && self.words[d].entry_df <= ENTRY_DRIVER_CAP
        {
            let others: Vec<usize> = unexplained.iter().copied().filter(|&i| i != d).collect();
            let need = others.len().saturating_sub(1);
            let mut kept = 0;
            'entries: for slice in self.words[d].slices(&idx.entry_post) {
                for &e in slice {
                    if need == 0 || self.own_match_count(e as usize, &others) >= need {
                        out.push(e);
                        kept += 1;
                        if kept >= ENTRY_DRIVER_KEEP {
                            break 'entries;
                        }
                    }
                }
            }
        }

        // Addresses carrying a number of the query with one of its words, whichever street
        // group won: the right address is a candidate whenever its number and its street,
        // locality or building are in the query.
        self.number_word_candidates(&mut out);

        // Addresses at the postcode.
        if let Some(p) = self.pc_id {
            let row = idx.pc_entries.row(p as usize);
            out.extend_from_slice(&row[..row.len().min(POSTCODE_CAP)]);
        }

        out.sort_unstable();
        out.dedup();
        out.retain(|&e| idx.has_text[e as usize]);
        (out, cache)
    }

    /// The number-word posting slices of word `i` under number key `k`.
    fn num_word_slices(&self, i: usize, k: u32) -> Vec<&'a [u32]> {
        let idx = self.idx;
        let w = &self.words[i];
        let mut out = Vec::new();
        for &(lo, hi, _) in &w.ranges {
            if hi - lo > NUMWORD_RANGE_CAP {
                continue;
            }
            for t in lo..hi {
                let r = idx.num_word_entries(t, k);
                if !r.is_empty() {
                    out.push(r);
                }
            }
        }
        for &(t, _) in &w.points {
            let r = idx.num_word_entries(t, k);
            if !r.is_empty() {
                out.push(r);
            }
        }
        out
    }

    /// Weight of the query words an address' street group or own words carry (a quick rank).
    fn quick_cover(&self, e: u32) -> f32 {
        let idx = self.idx;
        let g = idx.group[e as usize];
        let group_terms: &[u32] = if g == NO_GROUP {
            &[]
        } else {
            idx.group_terms.row(g as usize)
        };
        self.words
            .iter()
            .map(|w| {
                let hit = group_terms
                    .iter()
                    .chain(idx.own.row(e as usize))
                    .any(|&t| w.quality(t & TERM_MASK) > 0.0);
                if hit { w.weight } else { 0.0 }
            })
            .sum()
    }

    fn number_word_candidates(&self, out: &mut Vec<u32>) {
        let mut keys: Vec<u32> = [self.q.saon, self.q.paon]
            .into_iter()
            .flatten()
            .filter(|n| !n.prefix)
            .flat_map(|n| crate::index::num_key_of(n.spec))
            .flatten()
            .collect();
        keys.sort_unstable();
        keys.dedup();
        for k in keys {
            let mut per_word: Vec<(usize, usize, Vec<&[u32]>)> = (0..self.words.len())
                .filter(|&i| !self.words[i].short_prefix)
                .map(|i| {
                    let slices = self.num_word_slices(i, k);
                    (slices.iter().map(|s| s.len()).sum::<usize>(), i, slices)
                })
                .filter(|w| w.0 > 0)
                .collect();
            per_word.sort_by_key(|w| (w.0, w.1));
            for (df, _, slices) in per_word.into_iter().take(NUMWORD_WORDS) {
                if df <= NUMWORD_KEEP {
                    for sl in slices {
                        out.extend_from_slice(sl);
                    }
                    continue;
                }
                let mut ranked: Vec<(f32, u32)> = slices
                    .iter()
                    .flat_map(|sl| sl.iter())
                    .take(NUMWORD_SCAN)
                    .map(|&e| (self.quick_cover(e), e))
                    .collect();
                ranked.select_nth_unstable_by(NUMWORD_KEEP - 1, |a, b| {
                    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
                });
                out.extend(ranked[..NUMWORD_KEEP].iter().map(|&(_, e)| e));
            }
        }
    }

    /// Scores every gathered candidate; best first.
    pub(crate) fn run(&self) -> Vec<(f32, u32)> {
        let (cands, mut cache) = self.gather();
        let mut scored: Vec<(f32, u32)> = Vec::with_capacity(cands.len());
        for e in cands {
            let g = self.idx.group[e as usize];
            let gm = if g == NO_GROUP {
                NO_MATCH
            } else {
                *cache.entry(g).or_insert_with(|| self.match_group(g))
            };
            scored.push((self.score(e as usize, &gm), e));
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        self.prefer_named_after_number(&mut scored);
        scored
    }

    /// A number is written right before the name it numbers: `5 Birdall Terrace, Ferndale Road` is
    /// 5 on Birdall Terrace, not 5 Ferndale Road, and `2 The Courtyard St Annes Well Mews` is flat
    /// 2 of The Courtyard, not `2 The Old Bakery St Annes Well Mews`. When a candidate close to
    /// the best writes the query's word right after the query's number, the others close to the
    /// best that carry that number with another word after it lose [`NEXT_WORD_PENALTY`]. The
    /// score of a candidate that agrees is left as it is.
    fn prefer_named_after_number(&self, scored: &mut [(f32, u32)]) {
        let q = &self.q;
        // The query's words as the index numbers them; a word no address writes after a number
        // gets an id no address has.
        let said: Vec<(QNum, u32)> = [(q.saon, &q.saon_next), (q.paon, &q.paon_next)]
            .into_iter()
            .filter_map(|(n, w)| {
                let w = w.as_deref()?;
                let id = self.idx.next_word_ids.get(w).copied();
                Some((n?, id.unwrap_or(NO_NEXT_WORD - 1)))
            })
            .collect();
        let Some(&(best, _)) = scored.first() else {
            return;
        };
        if said.is_empty() {
            return;
        }
        let near = scored
            .iter()
            .take(NEXT_WORD_TOP)
            .take_while(|c| c.0 >= best - NEXT_WORD_WINDOW)
            .count();
        // Per candidate: does it write the query's word after the query's number, or another?
        let verdicts: Vec<Option<bool>> = scored[..near]
            .iter()
            .map(|c| {
                let e = c.1 as usize;
                let nums = self.idx.nums[e];
                let next = self.idx.next_words[e];
                let mut verdict = None;
                for &(n, w) in &said {
                    for k in 0..2 {
                        if num_sim(n, nums[k]) >= 0.99 {
                            let same = next[k] == w;
                            verdict = Some(verdict.unwrap_or(false) || same);
                        }
                    }
                }
                verdict
            })
            .collect();
        if !verdicts.contains(&Some(true)) {
            return;
        }
        for (c, v) in scored[..near].iter_mut().zip(verdicts) {
            if v == Some(false) {
                c.0 = (c.0 - NEXT_WORD_PENALTY).max(0.0);
            }
        }
        scored[..near].sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    }

    /// The similarity of one address to the query, in [0, 1].
    fn score(&self, e: usize, gm: &GroupMatch) -> f32 {
        self.score_parts(e, gm).0
    }

    /// What the score of one address was made of (for the confidence of a top candidate).
    pub(crate) fn evidence(&self, e: u32) -> Evidence {
        let g = self.idx.group[e as usize];
        let gm = if g == NO_GROUP {
            NO_MATCH
        } else {
            self.match_group(g)
        };
        let e = e as usize;
        let mut ev = self.score_parts(e, &gm).1;
        let q = &self.q;
        let [es, ep] = self.idx.nums[e];
        ev.flat_agrees_house_added =
            q.paon.is_some() && !ep.is_some() && q.saon.is_some_and(|s| num_sim(s, es) >= 0.99);
        ev.only_number_at_postcode = q.saon.is_none()
            && !self.flat_named
            && q.paon.is_some_and(|p| self.only_carrier_at_postcode(e, p));
        // The address' own postcode is another than the query's.
        if ev.postcode.is_some_and(|p| p < 1.0) && self.idx.entries[e].postcode.is_some() {
            ev.conflict = Some(crate::Conflict::Postcode);
        }
        ev
    }

    /// Is address `e` at the query's postcode, and does no other address of its street there
    /// carry house number `p` as its house or flat number (in any form, `46A` and `46-48`
    /// included)? An address on another street (`2 Kingsgate, Pennsylvania Road` beside `Flat C,
    /// 2 Devonshire Place`) does not count; an address whose street is unknown counts, and when
    /// `e`'s street is unknown every carrier counts.
    fn only_carrier_at_postcode(&self, e: usize, p: QNum) -> bool {
        let idx = self.idx;
        let Some(pc) = self.pc_id.filter(|&pc| pc == idx.entry_pc[e]) else {
            return false;
        };
        let row = idx.pc_entries.row(pc as usize);
        if row.len() > POSTCODE_CAP {
            return false;
        }
        let uprn = idx.entries[e].uprn;
        let street = self.street_terms(e);
        row.iter().all(|&o| {
            let o = o as usize;
            idx.entries[o].uprn == uprn
                || idx.nums[o].iter().all(|&n| num_sim(p, n) == 0.0)
                || (!street.is_empty() && {
                    let other = self.street_terms(o);
                    !other.is_empty() && other != street
                })
        })
    }

    /// The terms of the street of address `e`'s street group, sorted (none without a group).
    fn street_terms(&self, e: usize) -> Vec<u32> {
        let g = self.idx.group[e];
        if g == NO_GROUP {
            return Vec::new();
        }
        let mut out: Vec<u32> = self
            .idx
            .group_terms
            .row(g as usize)
            .iter()
            .filter(|&&t| field_of(t) == Field::Street as u32)
            .map(|&t| t & TERM_MASK)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The similarity of one address to the query and what it was made of.
    fn score_parts(&self, e: usize, gm: &GroupMatch) -> (f32, Evidence) {
        let mut ev = Evidence::default();
        let idx = self.idx;
        let q = &self.q;
        let mut m = gm.m;
        let mut own_total = 0.0f32;
        let mut own_matched = 0.0f32;
        let own = idx.own.row(e);
        let mut joined: Vec<(u32, f32)> = Vec::new();
        for &t in own {
            let term = t & TERM_MASK;
            let is_joined = field_of(t) == Field::Joined as u32;
            let cw = if is_joined { 0.0 } else { idx.core_weight(t) };
            own_total += cw;
            let mut best = 0.0f32;
            for (i, w) in self.words.iter().enumerate() {
                let qq = w.quality(term);
                if qq > m[i] {
                    m[i] = qq;
                }
                best = best.max(qq);
            }
            if is_joined && best > 0.0 {
                joined.push((term, best));
            }
            own_matched += cw * best;
        }
        // A query word matching two of the address' words joined (`Ashleigh` for `Ash Leigh`)
        // says both.
        if !joined.is_empty() {
            for &t in own {
                if field_of(t) != Field::Joined as u32 {
                    own_matched += idx.core_weight(t) * self.joined_extra(t & TERM_MASK, &joined);
                }
            }
        }

        let mut total = 0.0f32;
        let mut wsum = 0.0f32;
        if !self.words.is_empty() {
            let covered: f32 = self
                .words
                .iter()
                .enumerate()
                .map(|(i, w)| w.weight * m[i])
                .sum();
            let core_total = gm.core_total + own_total;
            let ecov = if core_total > 0.0 {
                ((gm.core_matched + own_matched) / core_total).min(1.0)
            } else {
                1.0
            };
            // The query says all the address says, and more: words of the streets and places
            // at the address' own postcode are not held against it (`Flat 17 Barbican Court,
            // Exe Street` for a register that writes only `Flat 17, Barbican Court`).
            let pc = idx.entry_pc[e];
            let mut covered = covered;
            if ecov >= 0.999 && pc != u32::MAX {
                let terms = idx.pc_terms.row(pc as usize);
                for (i, w) in self.words.iter().enumerate() {
                    if m[i] == 0.0 {
                        let best = terms.iter().map(|&t| w.quality(t)).fold(0.0f32, f32::max);
                        covered += w.weight * best * PC_WORD_QUALITY;
                    }
                }
            }
            // A register that gives no town or locality for the address (as EPC lodgements
            // often do) says nothing against the place the query names.
            if !gm.has_place {
                for (i, w) in self.words.iter().enumerate() {
                    if m[i] == 0.0 && w.place {
                        covered += w.weight * MISSING_PLACE_QUALITY;
                    }
                }
            }
            let qcov = (covered / self.total_weight.max(1e-6)).min(1.0);
            // `Broadparks Avenue` is not `Broadparks Close`.
            // ... nor `Princes Street East` `Princes Street North`.
            let type_conflict = self.words.iter().enumerate().any(|(i, w)| {
                m[i] == 0.0
                    && ((w.street_type && gm.has_street_type) || (w.qualifier && gm.has_qualifier))
            });
            ev.query_cover = f64::from(qcov);
            ev.address_cover = f64::from(ecov);
            ev.street_type_conflict = type_conflict;
            let mut text = qcov * (1.0 - ECOV_SHARE + ECOV_SHARE * ecov);
            if type_conflict {
                text *= STREET_TYPE_CONFLICT;
            }
            total += 4.0 * text;
            wsum += 4.0;
        }
        let [es, ep] = idx.nums[e];
        // Does the query name the address' building (most of its own words)?
        let building_named = own_total > 0.0 && own_matched >= 0.5 * own_total;
        let mut num = designator_score(q.saon, q.paon, es, ep, building_named);
        // `Ground Floor Flat, 21 Park Road` or `Flat 1, 92 Fore Street` for a register that
        // writes the flat as a lettered house number (`21A`, `92A`) and no flat; a letter flat
        // (`Flat C, 15`) says which letter, and another one disagrees.
        if q.saon.is_some()
            && !es.is_some()
            && let Some(p) = q.paon
            && crate::nonempty(&idx.entries[e].saon).is_some()
        {
            num = num.map(|n| n.max(num_sim(p, ep) * HOUSE_ONLY));
        }
        let letter_flat = q.saon.is_some_and(|f| f.spec.lo == 0 && f.spec.suffix != 0);
        if self.flat_named
            && !letter_flat
            && !es.is_some()
            && let Some(p) = q.paon
            && lettered_house(p.spec, ep)
        {
            num = num.map(|n| n.max(LETTERED_HOUSE));
        }
        ev.numbers = num.map(f64::from);
        if let Some(s) = num {
            total += 3.0 * s;
            wsum += 3.0;
        }
        if let Some(qp) = q.postcode.as_deref() {
            let sim = self.postcode_sim(e, qp);
            ev.postcode = Some(f64::from(sim));
            total += POSTCODE_WEIGHT * sim;
            wsum += POSTCODE_WEIGHT;
        } else if let Some(prefix) = q.pc_prefix.as_deref() {
            let ok = idx.entries[e]
                .postcode
                .as_deref()
                .is_some_and(|p| postcode_starts(p, prefix));
            total += 0.8 * f32::from(u8::from(ok));
            wsum += 0.8;
        }
        if wsum == 0.0 {
            return (0.0, ev);
        }
        let mut s = total / wsum;
        if q.has_numbers() {
            s *= 0.5 + 0.5 * num.unwrap_or(0.0);
        }
        (s.clamp(0.0, 1.0), ev)
    }

    fn postcode_sim(&self, e: usize, qp: &str) -> f32 {
        let idx = self.idx;
        if self.pc_id.is_some() && self.pc_id == Some(idx.entry_pc[e]) {
            return 1.0;
        }
        let Some(ep) = idx.entries[e].postcode.as_deref() else {
            return 0.3;
        };
        if ep == qp {
            return 1.0;
        }
        let (eo, ei) = ep.split_once(' ').unwrap_or((ep, ""));
        let (qo, qi) = qp.split_once(' ').unwrap_or((qp, ""));
        if eo == qo {
            if ei.as_bytes().first() == qi.as_bytes().first() {
                0.6
            } else {
                0.4
            }
        } else {
            let area = |o: &str| o.bytes().take_while(u8::is_ascii_alphabetic).count();
            if eo[..area(eo)] == qo[..area(qo)] {
                0.15
            } else {
                0.0
            }
        }
    }
}

/// Two adjacent query words the register writes as one (`CORN MILL` for `CORNMILL`) become that
/// one word. (The other way round, `CORNMILL` for `CORN MILL`, the index's joined terms match.)
fn join_compounds(idx: &AddressIndex, words: &mut Vec<QWord>) {
    let mut i = 0;
    while i + 1 < words.len() {
        let (a, b) = (&words[i], &words[i + 1]);
        let letters =
            |w: &QWord| w.text.len() >= 2 && w.text.bytes().all(|c| c.is_ascii_alphabetic());
        if letters(a) && letters(b) && !a.unfinished && a.text.len() + b.text.len() >= 6 {
            let joined = format!("{}{}", a.text, b.text);
            if idx.terms.find(&joined).is_some_and(|t| idx.is_written(t)) {
                let raw = format!("{}{}", a.raw, b.raw);
                let unfinished = b.unfinished;
                words[i] = QWord {
                    text: joined,
                    raw,
                    alt: None,
                    unfinished,
                };
                words.remove(i + 1);
            }
        }
        i += 1;
    }
}

/// Does a canonical postcode start with a typed prefix (`EX1 1` with its space, or `EX11` compact)?
pub(crate) fn postcode_starts(canonical: &str, prefix: &str) -> bool {
    if prefix.contains(' ') {
        return canonical.starts_with(prefix);
    }
    let mut it = canonical.bytes().filter(|&b| b != b' ');
    prefix.bytes().all(|p| it.next() == Some(p))
}

fn expand(idx: &AddressIndex, w: &QWord, known_neighbours: bool) -> WordPlan {
    let mut ranges: Vec<(u32, u32, f32)> = Vec::new();
    let mut points: Vec<(u32, f32)> = Vec::new();
    if let Some(t) = idx.terms.find(&w.text) {
        ranges.push((t, t + 1, Q_EXACT));
    }
    if let Some(a) = w.alt
        && let Some(t) = idx.terms.find(a)
    {
        ranges.push((t, t + 1, Q_ALT));
    }
    // A known word's singular or plural the register also writes (`Sand Grove` beside
    // `Sands Grove`, `Fairfield Mansions` for `Fairfield Mansion`): the fuzzy search below
    // only runs for words the register does not know.
    if !w.unfinished
        && w.text.len() >= 4
        && !ranges.is_empty()
        && w.text.bytes().all(|b| b.is_ascii_alphabetic())
    {
        let other = match w.text.strip_suffix('S') {
            Some(singular) => singular.to_string(),
            None => format!("{}S", w.text),
        };
        if let Some(t) = idx.terms.find(&other)
            && idx.is_written(t)
            && idx.freq_cum[t as usize + 1] - idx.freq_cum[t as usize] <= NUMBER_FORM_CAP
            && !normalise::is_street_type(&other)
            && !normalise::is_flat_marker(&other)
        {
            ranges.push((t, t + 1, Q_NUMBER_FORM));
        }
    }
    if w.unfinished {
        for p in [w.raw.as_str(), w.text.as_str()] {
            let (lo, hi) = idx.terms.prefix_range(p);
            if hi > lo && !ranges.iter().any(|r| r.0 == lo && r.1 == hi) {
                ranges.push((lo, hi, Q_PREFIX));
            }
        }
    }
    // Edit-distance neighbours for a word the register does not know as it stands, and, one
    // edit away, for a long word it knows on only a few addresses (`Colombus` written on five
    // flats of a block the rest of whose register says `Columbus`).
    let known = !ranges.is_empty();
    let len = w.text.len();
    let rare_known = known_neighbours
        && known
        && len >= FUZZY1_LONG
        && ranges.first().is_some_and(|r| {
            r.2 == Q_EXACT && idx.entry_post.rows(r.0, r.1).len() <= RARE_KNOWN_DF
        });
    if (!known || rare_known) && (4..=MAX_FUZZY_LEN).contains(&len) {
        let d = if rare_known {
            1
        } else if len >= 8 {
            2
        } else {
            1
        };
        let mut stream = idx
            .fst
            .search(Osa::new(w.text.as_bytes(), d, false))
            .into_stream();
        while let Some((k, v)) = stream.next() {
            if k == w.text.as_bytes() {
                continue;
            }
            let q = if rare_known {
                Q_FUZZY_KNOWN
            } else if osa_distance(k, w.text.as_bytes()) <= 1 {
                if len >= FUZZY1_LONG {
                    Q_FUZZY1_LONG
                } else {
                    Q_FUZZY1
                }
            } else {
                Q_FUZZY2
            };
            points.push((v as u32, q));
            if points.len() >= FUZZY_CAP {
                break;
            }
        }
    }
    let rlen = w.raw.len();
    if !known && w.unfinished && (4..=MAX_FUZZY_LEN).contains(&rlen) {
        let d = if rlen >= 8 { 2 } else { 1 };
        let mut stream = idx
            .fst
            .search(Osa::new(w.raw.as_bytes(), d, true))
            .into_stream();
        let mut n = 0;
        while let Some((_, v)) = stream.next() {
            points.push((v as u32, Q_FUZZY_PREFIX));
            n += 1;
            if n >= FUZZY_PREFIX_CAP {
                break;
            }
        }
    }
    points.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
    points.dedup_by_key(|p| p.0);

    // The word's weight is that of its best reading.
    let best_range = ranges.iter().copied().max_by(|a, b| a.2.total_cmp(&b.2));
    let best_point = points.iter().copied().max_by(|a, b| {
        a.1.total_cmp(&b.1)
            .then(idx.term_weight[a.0 as usize].total_cmp(&idx.term_weight[b.0 as usize]))
    });
    let (weight, best_term) = match (best_range, best_point) {
        (Some(r), Some(p)) if p.1 > r.2 => (idx.term_weight[p.0 as usize], Some(p.0)),
        (Some(r), _) => (idx.range_weight(r.0, r.1), (r.1 == r.0 + 1).then_some(r.0)),
        (None, Some(p)) => (idx.term_weight[p.0 as usize], Some(p.0)),
        (None, None) if normalise::is_ignorable(&w.text) => (IGNORABLE_WEIGHT, None),
        (None, None) => (UNMATCHED_WEIGHT, None),
    };
    // A place name the address lacks is strong evidence against it, however common the place.
    let place = best_term.is_some_and(|t| idx.is_place(t));
    let weight = if place {
        weight.max(PLACE_WEIGHT)
    } else {
        weight
    };
    let short_prefix = w.unfinished && w.raw.len() <= 2 && best_term.is_none();
    let mut plan = WordPlan {
        ranges,
        points,
        weight,
        group_df: 0,
        entry_df: 0,
        short_prefix,
        place,
        street_type: normalise::is_street_type(&w.text),
        qualifier: normalise::is_qualifier(&w.text),
    };
    plan.group_df = plan.slices(&idx.group_post).map(<[u32]>::len).sum();
    plan.entry_df = plan.slices(&idx.entry_post).map(<[u32]>::len).sum();
    plan
}

/// How well a query number matches an address number, in [0, 1].
pub(crate) fn num_sim(q: QNum, e: NumSpec) -> f32 {
    if !e.is_some() {
        return 0.0;
    }
    let s = q.spec;
    if s == e {
        return 1.0;
    }
    let q_single = s.lo == s.hi;
    let e_single = e.lo == e.hi;
    if q_single && !e_single && (e.lo..=e.hi).contains(&s.lo) && s.suffix == 0 {
        return 0.85;
    }
    if !q_single && e_single && (s.lo..=s.hi).contains(&e.lo) {
        return 0.75;
    }
    if s.lo == e.lo && s.hi == e.hi {
        return if s.suffix == 0 || e.suffix == 0 {
            0.55
        } else {
            0.2
        };
    }
    if q.prefix && q_single && s.suffix == 0 && s.lo > 0 {
        let mut n = e.lo;
        while n > s.lo {
            n /= 10;
        }
        if n == s.lo {
            return 0.8;
        }
    }
    0.0
}

/// A query's flat and house numbers against a flat of that house named without a number (`Flat
/// 2, 67 Magdalen Street` for `Ground Floor Flat, 67 Magdalen Street`): the building agrees and
/// the flat is not contradicted, as much as a flat number agreeing in a building the query does
/// not number (`Flat 2, Magdalen Bridge Court`). The house itself (`67 Magdalen Street`) stays
/// at 0.6: it is not the flat.
const HOUSE_ONLY: f32 = 0.8;

/// A query naming a flat in house `N` against a register that writes `NA` and no flat.
const LETTERED_HOUSE: f32 = 0.8;

/// Is `e` the plain house number `q` with a letter (`21` and `21A`)?
fn lettered_house(q: NumSpec, e: NumSpec) -> bool {
    e.is_some() && q.lo == q.hi && q.suffix == 0 && e.lo == q.lo && e.hi == e.lo && e.suffix != 0
}

/// A letter flat of a plain house number (`Flat C` of `6`) written as one number (`6C`).
fn letter_of_house(flat: NumSpec, house: NumSpec) -> Option<NumSpec> {
    (flat.is_some()
        && flat.lo == 0
        && flat.suffix != 0
        && house.is_some()
        && house.lo == house.hi
        && house.suffix == 0)
        .then_some(NumSpec::single(house.lo, flat.suffix))
}

/// Agreement of the query's flat and house numbers with an address'; `None` when neither has any.
///
/// A flat query prefers the flat over its building, a building query the building over its flats,
/// and a number that disagrees scores 0. A house number read as a flat's number counts less when
/// the query does not name the flat's building (`33 Farm Hill` is not `Flat 33, Iveagh Court,
/// Farm Hill`).
pub(crate) fn designator_score(
    qs: Option<QNum>,
    qp: Option<QNum>,
    es: NumSpec,
    ep: NumSpec,
    building_named: bool,
) -> Option<f32> {
    let (hs, hp) = (es.is_some(), ep.is_some());
    let s = match (qs, qp) {
        (None, None) => {
            if !hs && !hp {
                return None;
            }
            if hs { 0.5 } else { 0.75 }
        }
        (None, Some(p)) => {
            if hs && letter_of_house(es, ep) == Some(p.spec) {
                // `6C Colleton Crescent` for `Flat C, 6 Colleton Crescent`.
                0.95
            } else if hp {
                let a = num_sim(p, ep);
                if hs { a * 0.75 } else { a }
            } else if hs {
                // `3 Clifton Court` for `Flat 3, Clifton Court`.
                num_sim(p, es) * if building_named { 0.95 } else { 0.8 }
            } else {
                0.3
            }
        }
        (Some(s), Some(p)) => {
            if hs && hp {
                let (a, b) = (num_sim(s, es), num_sim(p, ep));
                0.5 * a.min(b) + 0.25 * (a + b)
            } else if hp && s.spec.suffix != 0 && s.spec.lo == p.spec.lo && s.spec == ep {
                // `11C 11 Sivell Place` for `11C Sivell Place`.
                0.95
            } else if hp && letter_of_house(s.spec, p.spec) == Some(ep) {
                // `Flat C, 6 Colleton Crescent` for `6C Colleton Crescent`.
                0.95
            } else if hp {
                num_sim(p, ep) * 0.6
            } else if hs {
                num_sim(s, es).max(num_sim(p, es) * 0.8) * 0.8
            } else {
                0.2
            }
        }
        (Some(s), None) => {
            if hs {
                let a = num_sim(s, es);
                if hp { a * 0.85 } else { a }
            } else if hp {
                // `Flat 3, Clifton Court` for `3 Clifton Court`: a numbered unit of a named
                // block is written either way.
                num_sim(s, ep) * 0.9
            } else {
                0.3
            }
        }
    };
    Some(s)
}
