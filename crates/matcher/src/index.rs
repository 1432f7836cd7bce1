//! Building the index: street groups, interned terms, posting lists and the postcode table.
//!
//! Layout (all compact `Vec<u32>` in CSR form, so 1,000,000 addresses cost tens of MB beyond the
//! entries themselves):
//! - entries are re-ordered so that each *street group* (street + locality + town) is one
//!   contiguous run, in natural order (house number, then name, then flat number);
//! - street, locality, town and postcode-district words are indexed once per street group,
//!   SAON/PAON words (building names) once per entry;
//! - terms are numbered in sorted order, so every prefix is a contiguous range of term ids and
//!   the postings of a whole prefix are one contiguous slice.

use std::collections::HashMap;

use crate::AddressEntry;
use crate::normalise::{self, NumSpec};

/// Which field a term came from; stored in the top bits of a tagged term id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Field {
    Street = 0,
    Locality = 1,
    Town = 2,
    Outward = 3,
    Saon = 4,
    Paon = 5,
    /// Two adjacent words written as one (`CORN MILL` -> `CORNMILL`): matched like any word,
    /// never counted in an address' own coverage.
    Joined = 6,
}

/// Two adjacent words of a field joined, when both are words of letters and the whole is long
/// enough to be a plausible compound (`CORN MILL`, `ASH LEIGH`, `PINN COURT`).
pub(crate) fn joined_pairs(words: &[String]) -> impl Iterator<Item = String> + '_ {
    words.windows(2).filter_map(|w| {
        let ok = |x: &str| x.len() >= 2 && x.bytes().all(|b| b.is_ascii_alphabetic());
        (ok(&w[0]) && ok(&w[1]) && w[0].len() + w[1].len() >= 6)
            .then(|| format!("{}{}", w[0], w[1]))
    })
}

pub(crate) const FIELD_SHIFT: u32 = 28;
pub(crate) const TERM_MASK: u32 = (1 << FIELD_SHIFT) - 1;
pub(crate) const NO_GROUP: u32 = u32::MAX;

pub(crate) fn tag(field: Field, term: u32) -> u32 {
    ((field as u32) << FIELD_SHIFT) | term
}

pub(crate) fn field_of(tagged: u32) -> u32 {
    tagged >> FIELD_SHIFT
}

/// Sorted, deduplicated term strings stored back to back.
#[derive(Default)]
pub(crate) struct Terms {
    text: String,
    off: Vec<u32>,
}

impl Terms {
    pub(crate) fn len(&self) -> usize {
        self.off.len().saturating_sub(1)
    }

    pub(crate) fn get(&self, id: u32) -> &str {
        let (a, b) = (
            self.off[id as usize] as usize,
            self.off[id as usize + 1] as usize,
        );
        &self.text[a..b]
    }

    /// The first term id not less than `s`.
    fn lower_bound(&self, s: &str) -> u32 {
        let (mut lo, mut hi) = (0usize, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.get(mid as u32) < s {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo as u32
    }

    pub(crate) fn find(&self, s: &str) -> Option<u32> {
        let i = self.lower_bound(s);
        ((i as usize) < self.len() && self.get(i) == s).then_some(i)
    }

    /// The contiguous range of term ids starting with `p`.
    pub(crate) fn prefix_range(&self, p: &str) -> (u32, u32) {
        let lo = self.lower_bound(p);
        let (mut a, mut b) = (lo as usize, self.len());
        while a < b {
            let mid = (a + b) / 2;
            if self.get(mid as u32).starts_with(p) {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        (lo, a as u32)
    }
}

/// A compressed-sparse-row list of lists.
#[derive(Default)]
pub(crate) struct Csr {
    pub off: Vec<u32>,
    pub val: Vec<u32>,
}

impl Csr {
    pub(crate) fn row(&self, i: usize) -> &[u32] {
        &self.val[self.off[i] as usize..self.off[i + 1] as usize]
    }

    /// All values of rows `lo..hi` (one contiguous slice).
    pub(crate) fn rows(&self, lo: u32, hi: u32) -> &[u32] {
        &self.val[self.off[lo as usize] as usize..self.off[hi as usize] as usize]
    }

    /// Builds rows from (row, value) pairs; values are sorted and deduplicated within a row.
    fn from_pairs(rows: usize, mut pairs: Vec<(u32, u32)>) -> Csr {
        pairs.sort_unstable();
        pairs.dedup();
        let mut off = vec![0u32; rows + 1];
        for &(r, _) in &pairs {
            off[r as usize + 1] += 1;
        }
        for i in 0..rows {
            off[i + 1] += off[i];
        }
        Csr {
            off,
            val: pairs.into_iter().map(|(_, v)| v).collect(),
        }
    }

    /// Builds rows from per-row lists already in order.
    fn from_lists(lists: impl Iterator<Item = Vec<u32>>) -> Csr {
        let mut c = Csr {
            off: vec![0],
            val: Vec::new(),
        };
        for l in lists {
            c.val.extend_from_slice(&l);
            c.off.push(c.val.len() as u32);
        }
        c
    }
}

/// An address index; see the crate documentation.
pub struct AddressIndex {
    pub(crate) entries: Vec<AddressEntry>,
    /// Per entry: does it have any address text (it may be suggested or resolved)?
    pub(crate) has_text: Vec<bool>,
    /// Per entry: [SAON number, PAON number].
    pub(crate) nums: Vec<[NumSpec; 2]>,
    /// Per entry: its street group or [`NO_GROUP`].
    pub(crate) group: Vec<u32>,
    /// Per entry: its own tagged terms (SAON and PAON words).
    pub(crate) own: Csr,
    /// Per entry: its postcode id or `u32::MAX`.
    pub(crate) entry_pc: Vec<u32>,
    /// Per street group: the first entry (and one past the last, at `group_start[g + 1]`).
    pub(crate) group_start: Vec<u32>,
    /// Per street group: its tagged terms (street, locality, town, postcode districts).
    pub(crate) group_terms: Csr,
    pub(crate) terms: Terms,
    pub(crate) fst: fst::Map<Vec<u8>>,
    /// Per term: weight from how many addresses carry it (rare terms weigh more).
    pub(crate) term_weight: Vec<f32>,
    /// Per term: its weight in an address' own coverage (street types count half).
    pub(crate) term_core_weight: Vec<f32>,
    /// Per term: bit `1 << field` for every field it occurs in.
    pub(crate) term_fields: Vec<u8>,
    /// Cumulative address frequency over term ids (for the weight of a prefix range).
    pub(crate) freq_cum: Vec<u64>,
    /// Per term: street groups carrying it.
    pub(crate) group_post: Csr,
    /// Per term: entries carrying it in SAON/PAON.
    pub(crate) entry_post: Csr,
    /// Number-word keys (`term << 32 | number key`, sorted) and per key the entries whose flat or
    /// house number has that key and whose street, locality or building carries that term.
    pub(crate) nw_keys: Vec<u64>,
    pub(crate) nw_post: Csr,
    /// Canonical postcodes, sorted; per postcode the entries at it in natural order.
    pub(crate) postcodes: Vec<Box<str>>,
    pub(crate) pc_entries: Csr,
    /// Per postcode: the street, locality and town terms of the addresses at it (sorted).
    pub(crate) pc_terms: Csr,
    /// (UPRN, entry) sorted by UPRN, first entry per UPRN.
    pub(crate) uprns: Vec<(i64, u32)>,
    /// Addresses with text.
    pub(crate) n_text: usize,
    /// Per entry: the word it writes right after its flat number and after its house number
    /// ([`entry_next_words`]), as ids into `next_word_ids`, or [`NO_NEXT_WORD`].
    pub(crate) next_words: Vec<[u32; 2]>,
    /// The words written right after a number anywhere in the register, numbered.
    pub(crate) next_word_ids: HashMap<String, u32>,
}

/// No word after the number (or no such number).
pub(crate) const NO_NEXT_WORD: u32 = u32::MAX;

/// The word an address writes right after its flat number and after its house number (`THE`
/// skipped; none when a number or nothing follows, or there is no such number): `Flat 2, The
/// Courtyard` gives `COURTYARD` after 2, `5 Birdall Terrace` `BIRDALL` after 5.
fn entry_next_words(e: &AddressEntry) -> [Option<String>; 2] {
    let mut toks = Vec::new();
    let mut at = [None, None];
    for (k, f) in [&e.saon, &e.paon, &e.street].into_iter().enumerate() {
        let Some(text) = crate::nonempty(f) else {
            continue;
        };
        let lexed = normalise::lex(text);
        if k < 2 {
            at[k] = lexed
                .iter()
                .position(|t| normalise::parse_num(&t.text).is_some())
                .map(|p| p + toks.len());
        }
        toks.extend(lexed);
    }
    let folded = normalise::fold_tokens(&toks);
    at.map(|i| i.and_then(|i| crate::query::next_word(&toks, &folded, i)))
}

struct Interner {
    ids: HashMap<String, u32>,
    strings: Vec<String>,
}

impl Interner {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.ids.insert(s.to_string(), i);
        self.strings.push(s.to_string());
        i
    }
}

fn text_of(s: &Option<String>) -> &str {
    s.as_deref().map(str::trim).unwrap_or("")
}

/// The natural sort key of a designator: number first (none last), then the text.
fn designator_key(n: NumSpec, none_first: bool) -> (u8, u32, u32, u8) {
    if n.is_some() {
        (1, n.lo, n.hi, n.suffix)
    } else if none_first {
        (0, 0, 0, 0)
    } else {
        (2, 0, 0, 0)
    }
}

impl AddressIndex {
    /// Builds the index. Entries are re-ordered (street group, then natural order); use
    /// [`AddressIndex::entry`] with the ids this index returns.
    pub fn build(entries: Vec<AddressEntry>) -> AddressIndex {
        let n = entries.len();
        let mut interner = Interner {
            ids: HashMap::new(),
            strings: Vec::new(),
        };

        // Street groups by their exact (street, locality, town) text.
        let mut group_ids: HashMap<(&str, &str, &str), u32> = HashMap::new();
        let mut group_keys: Vec<(&str, &str, &str)> = Vec::new();
        let mut prov_group = vec![NO_GROUP; n];
        let mut has_text = vec![false; n];
        let mut nums = vec![[NumSpec::NONE; 2]; n];
        let mut own_lists: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, e) in entries.iter().enumerate() {
            let key = (text_of(&e.street), text_of(&e.locality), text_of(&e.town));
            let saon = text_of(&e.saon);
            let paon = text_of(&e.paon);
            has_text[i] = !(key.0.is_empty()
                && key.1.is_empty()
                && key.2.is_empty()
                && saon.is_empty()
                && paon.is_empty());
            if !(key.0.is_empty() && key.1.is_empty() && key.2.is_empty()) {
                let next = group_keys.len() as u32;
                prov_group[i] = *group_ids.entry(key).or_insert_with(|| {
                    group_keys.push(key);
                    next
                });
            }
            for (text, field, slot) in [(saon, Field::Saon, 0), (paon, Field::Paon, 1)] {
                if text.is_empty() {
                    continue;
                }
                let d = normalise::parse_designator(text);
                nums[i][slot] = d.num.unwrap_or(NumSpec::NONE);
                for w in &d.words {
                    own_lists[i].push(tag(field, interner.id(w)));
                }
                for j in joined_pairs(&d.words) {
                    own_lists[i].push(tag(Field::Joined, interner.id(&j)));
                }
            }
        }

        // Group words (provisional term ids).
        let mut prov_group_terms: Vec<Vec<u32>> = Vec::with_capacity(group_keys.len());
        for &(street, locality, town) in &group_keys {
            let mut ts = Vec::new();
            for (text, field) in [
                (street, Field::Street),
                (locality, Field::Locality),
                (town, Field::Town),
            ] {
                let words: Vec<String> = normalise::fold_tokens(&normalise::lex(text))
                    .into_iter()
                    .map(|(w, _)| w)
                    .collect();
                for w in &words {
                    ts.push(tag(field, interner.id(w)));
                }
                for j in joined_pairs(&words) {
                    ts.push(tag(Field::Joined, interner.id(&j)));
                }
            }
            prov_group_terms.push(ts);
        }
        // Postcode districts per group.
        for (i, e) in entries.iter().enumerate() {
            if prov_group[i] != NO_GROUP
                && let Some(pc) = e.postcode.as_deref()
                && let Some(out) = pc.split_whitespace().next()
                && pc.contains(' ')
            {
                let t = tag(Field::Outward, interner.id(&out.to_ascii_uppercase()));
                let list = &mut prov_group_terms[prov_group[i] as usize];
                if !list.contains(&t) {
                    list.push(t);
                }
            }
        }

        // Order: groups by (town, locality, street); entries by group then natural order.
        let mut group_order: Vec<u32> = (0..group_keys.len() as u32).collect();
        group_order.sort_by(|&a, &b| {
            let (ka, kb) = (group_keys[a as usize], group_keys[b as usize]);
            (ka.2, ka.1, ka.0).cmp(&(kb.2, kb.1, kb.0))
        });
        let mut group_rank = vec![0u32; group_keys.len()];
        for (r, &g) in group_order.iter().enumerate() {
            group_rank[g as usize] = r as u32;
        }
        let mut perm: Vec<u32> = (0..n as u32).collect();
        perm.sort_by(|&a, &b| {
            let key = |i: u32| {
                let i = i as usize;
                let g = prov_group[i];
                let rank = if g == NO_GROUP {
                    u32::MAX
                } else {
                    group_rank[g as usize]
                };
                (
                    rank,
                    designator_key(nums[i][1], false),
                    text_of(&entries[i].paon),
                    designator_key(nums[i][0], true),
                    text_of(&entries[i].saon),
                    entries[i].uprn,
                )
            };
            key(a).cmp(&key(b))
        });
        drop(group_ids);
        let group_keys_len = group_keys.len();
        drop(group_keys);

        let mut old = entries;
        let entries: Vec<AddressEntry> = perm
            .iter()
            .map(|&i| std::mem::take(&mut old[i as usize]))
            .collect();
        drop(old);
        let has_text: Vec<bool> = perm.iter().map(|&i| has_text[i as usize]).collect();
        let nums: Vec<[NumSpec; 2]> = perm.iter().map(|&i| nums[i as usize]).collect();
        let group: Vec<u32> = perm
            .iter()
            .map(|&i| {
                let g = prov_group[i as usize];
                if g == NO_GROUP {
                    NO_GROUP
                } else {
                    group_rank[g as usize]
                }
            })
            .collect();
        let mut own_lists: Vec<Vec<u32>> = perm
            .iter()
            .map(|&i| std::mem::take(&mut own_lists[i as usize]))
            .collect();

        // Final term ids in sorted order.
        let mut sorted: Vec<u32> = (0..interner.strings.len() as u32).collect();
        sorted.sort_unstable_by(|&a, &b| {
            interner.strings[a as usize].cmp(&interner.strings[b as usize])
        });
        let mut remap = vec![0u32; sorted.len()];
        let mut terms = Terms {
            text: String::new(),
            off: vec![0],
        };
        for (new, &old_id) in sorted.iter().enumerate() {
            remap[old_id as usize] = new as u32;
            terms.text.push_str(&interner.strings[old_id as usize]);
            terms.off.push(terms.text.len() as u32);
        }
        drop(interner);
        let retag = |t: u32| (t & !TERM_MASK) | remap[(t & TERM_MASK) as usize];
        let n_terms = terms.len();

        for l in &mut own_lists {
            for t in l.iter_mut() {
                *t = retag(*t);
            }
            l.sort_unstable();
            l.dedup();
        }
        let own = Csr::from_lists(own_lists.into_iter());
        let mut group_term_lists: Vec<Vec<u32>> = vec![Vec::new(); group_keys_len];
        for (g, l) in prov_group_terms.into_iter().enumerate() {
            let mut l: Vec<u32> = l.into_iter().map(retag).collect();
            l.sort_unstable();
            l.dedup();
            group_term_lists[group_rank[g] as usize] = l;
        }
        let group_terms = Csr::from_lists(group_term_lists.into_iter());

        let mut group_start = vec![0u32; group_keys_len + 1];
        for &g in &group {
            if g != NO_GROUP {
                group_start[g as usize + 1] += 1;
            }
        }
        for g in 0..group_keys_len {
            group_start[g + 1] += group_start[g];
        }

        // Postings.
        let mut pairs = Vec::with_capacity(group_terms.val.len());
        for g in 0..group_keys_len {
            for &t in group_terms.row(g) {
                pairs.push((t & TERM_MASK, g as u32));
            }
        }
        let group_post = Csr::from_pairs(n_terms, pairs);
        let mut pairs = Vec::with_capacity(own.val.len());
        for e in 0..n {
            for &t in own.row(e) {
                pairs.push((t & TERM_MASK, e as u32));
            }
        }
        let entry_post = Csr::from_pairs(n_terms, pairs);

        // Number-word postings: an address under each of its numbers with each of its
        // distinctive words (street types, ignorable and flat words only when it has no other).
        let distinctive: Vec<bool> = (0..n_terms as u32)
            .map(|t| {
                let w = terms.get(t);
                !(normalise::is_street_type(w)
                    || normalise::is_ignorable(w)
                    || normalise::is_flat_marker(w)
                    || normalise::is_position_word(w))
            })
            .collect();
        let mut nw_pairs: Vec<(u64, u32)> = Vec::new();
        let mut words: Vec<u32> = Vec::new();
        for e in 0..n {
            let keys = num_keys(nums[e]);
            if keys.is_empty() {
                continue;
            }
            words.clear();
            words.extend(own.row(e).iter().map(|&t| t & TERM_MASK));
            if group[e] != NO_GROUP {
                words.extend(
                    group_terms
                        .row(group[e] as usize)
                        .iter()
                        .filter(|&&t| {
                            field_of(t) == Field::Street as u32
                                || field_of(t) == Field::Locality as u32
                                || field_of(t) == Field::Joined as u32
                        })
                        .map(|&t| t & TERM_MASK),
                );
            }
            words.sort_unstable();
            words.dedup();
            if words.iter().any(|&t| distinctive[t as usize]) {
                words.retain(|&t| distinctive[t as usize]);
            }
            for &t in &words {
                for k in keys.iter().flatten() {
                    nw_pairs.push(((u64::from(t) << 32) | u64::from(*k), e as u32));
                }
            }
        }
        nw_pairs.sort_unstable();
        nw_pairs.dedup();
        let mut nw_keys: Vec<u64> = Vec::new();
        let mut nw_off: Vec<u32> = vec![0];
        let mut nw_val: Vec<u32> = Vec::with_capacity(nw_pairs.len());
        for (k, e) in nw_pairs {
            if nw_keys.last() != Some(&k) {
                if !nw_keys.is_empty() {
                    nw_off.push(nw_val.len() as u32);
                }
                nw_keys.push(k);
            }
            nw_val.push(e);
        }
        if !nw_keys.is_empty() {
            nw_off.push(nw_val.len() as u32);
        }
        let nw_post = Csr {
            off: nw_off,
            val: nw_val,
        };

        // Term weights from address frequency.
        let n_text = has_text.iter().filter(|&&h| h).count();
        let mut freq = vec![0u64; n_terms];
        for (t, f) in freq.iter_mut().enumerate() {
            let groups = group_post.row(t);
            *f = groups
                .iter()
                .map(|&g| u64::from(group_start[g as usize + 1] - group_start[g as usize]))
                .sum::<u64>()
                + entry_post.row(t).len() as u64;
        }
        let mut freq_cum = vec![0u64; n_terms + 1];
        for t in 0..n_terms {
            freq_cum[t + 1] = freq_cum[t] + freq[t];
        }
        let term_weight: Vec<f32> = freq.iter().map(|&f| weight_for(n_text, f)).collect();
        let term_core_weight: Vec<f32> = (0..n_terms)
            .map(|t| {
                let w = term_weight[t];
                if normalise::is_street_type(terms.get(t as u32)) {
                    w * 0.5
                } else {
                    w
                }
            })
            .collect();
        let mut term_fields = vec![0u8; n_terms];
        for &t in group_terms.val.iter().chain(&own.val) {
            term_fields[(t & TERM_MASK) as usize] |= 1 << field_of(t);
        }

        // Postcodes.
        let mut codes: Vec<&str> = entries
            .iter()
            .filter_map(|e| {
                e.postcode
                    .as_deref()
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
            })
            .collect();
        codes.sort_unstable();
        codes.dedup();
        let postcodes: Vec<Box<str>> = codes.iter().map(|&c| Box::from(c)).collect();
        drop(codes);
        let entry_pc: Vec<u32> = entries
            .iter()
            .map(|e| {
                e.postcode
                    .as_deref()
                    .map(str::trim)
                    .and_then(|p| postcodes.binary_search_by(|c| (**c).cmp(p)).ok())
                    .map_or(u32::MAX, |i| i as u32)
            })
            .collect();
        let mut by_pc: Vec<u32> = (0..n as u32)
            .filter(|&i| entry_pc[i as usize] != u32::MAX)
            .collect();
        by_pc.sort_by(|&a, &b| {
            let ka = (
                entry_pc[a as usize],
                text_of(&entries[a as usize].street),
                a,
            );
            let kb = (
                entry_pc[b as usize],
                text_of(&entries[b as usize].street),
                b,
            );
            ka.cmp(&kb)
        });
        let mut pc_off = vec![0u32; postcodes.len() + 1];
        for &e in &by_pc {
            pc_off[entry_pc[e as usize] as usize + 1] += 1;
        }
        for i in 0..postcodes.len() {
            pc_off[i + 1] += pc_off[i];
        }
        let pc_entries = Csr {
            off: pc_off,
            val: by_pc,
        };
        let pc_terms = Csr::from_lists((0..postcodes.len()).map(|p| {
            let mut ts: Vec<u32> = Vec::new();
            let mut last_group = NO_GROUP;
            for &e in pc_entries.row(p) {
                let g = group[e as usize];
                if g != NO_GROUP && g != last_group {
                    last_group = g;
                    ts.extend(group_terms.row(g as usize).iter().filter_map(|&t| {
                        (field_of(t) != Field::Outward as u32).then_some(t & TERM_MASK)
                    }));
                }
            }
            ts.sort_unstable();
            ts.dedup();
            ts
        }));

        let mut uprns: Vec<(i64, u32)> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.uprn, i as u32))
            .collect();
        uprns.sort_unstable();
        uprns.dedup_by_key(|p| p.0);

        let fst = fst::Map::from_iter((0..n_terms as u32).map(|t| (terms.get(t), u64::from(t))))
            .unwrap_or_default();

        let mut next_word_ids: HashMap<String, u32> = HashMap::new();
        let next_words: Vec<[u32; 2]> = entries
            .iter()
            .map(|e| {
                entry_next_words(e).map(|w| {
                    w.map_or(NO_NEXT_WORD, |w| {
                        let id = next_word_ids.len() as u32;
                        *next_word_ids.entry(w).or_insert(id)
                    })
                })
            })
            .collect();

        AddressIndex {
            entries,
            has_text,
            nums,
            group,
            own,
            entry_pc,
            group_start,
            group_terms,
            terms,
            fst,
            term_weight,
            term_core_weight,
            term_fields,
            freq_cum,
            group_post,
            entry_post,
            nw_keys,
            nw_post,
            postcodes,
            pc_entries,
            pc_terms,
            uprns,
            n_text,
            next_words,
            next_word_ids,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entry(&self, i: u32) -> &AddressEntry {
        &self.entries[i as usize]
    }

    /// All entries, in the index's order (the ids it returns index this slice).
    pub fn entries(&self) -> &[AddressEntry] {
        &self.entries
    }

    pub fn by_uprn(&self, uprn: i64) -> Option<&AddressEntry> {
        self.uprns
            .binary_search_by_key(&uprn, |p| p.0)
            .ok()
            .map(|i| &self.entries[self.uprns[i].1 as usize])
    }

    /// Every entry at a canonical postcode (`EX1 1AA`), by street, then house number, then flat
    /// number. Postcodes in other forms are canonicalised first.
    pub fn by_postcode(&self, postcode: &str) -> Vec<u32> {
        let exact = self
            .postcodes
            .binary_search_by(|c| (**c).cmp(postcode))
            .ok();
        let found = exact.or_else(|| {
            let compact: String = postcode
                .chars()
                .filter(|c| !c.is_whitespace())
                .map(|c| c.to_ascii_uppercase())
                .collect();
            let canon = normalise::canonical_postcode(&compact)?;
            self.postcodes
                .binary_search_by(|c| (**c).cmp(canon.as_str()))
                .ok()
        });
        found
            .map(|i| self.pc_entries.row(i).to_vec())
            .unwrap_or_default()
    }

    /// Postcode ids whose canonical form starts with what was typed, compactly (`EX11`, `EX1 1`).
    /// Several readings of a compact prefix are tried (`EX11` is district EX11 or sector EX1 1).
    pub(crate) fn postcode_prefix_ranges(&self, compact: &str) -> Vec<(u32, u32)> {
        let b = compact.as_bytes();
        let mut prefixes = vec![compact.to_string()];
        let splits = if compact.contains(' ') {
            0
        } else {
            4.min(b.len())
        };
        for k in 2..=splits {
            let (out, inw) = b.split_at(k);
            if normalise::is_outward(out)
                && (inw.is_empty() || normalise::is_inward_prefix(inw) || normalise::is_inward(inw))
            {
                prefixes.push(format!("{} {}", &compact[..k], &compact[k..]));
            }
        }
        let mut out: Vec<(u32, u32)> = Vec::new();
        for p in prefixes {
            let lo = self.postcodes.partition_point(|c| &**c < p.as_str());
            let hi = lo + self.postcodes[lo..].partition_point(|c| c.starts_with(p.as_str()));
            if hi > lo
                && !out
                    .iter()
                    .any(|&(a, b)| a as usize <= lo && hi <= b as usize)
            {
                out.push((lo as u32, hi as u32));
            }
        }
        out.sort_unstable();
        out
    }

    /// Weight of a term for an address' own coverage: street types count half.
    #[inline]
    pub(crate) fn core_weight(&self, tagged: u32) -> f32 {
        self.term_core_weight[(tagged & TERM_MASK) as usize]
    }

    /// Is the term a word of some address as written (not only two of its words joined)?
    pub(crate) fn is_written(&self, t: u32) -> bool {
        self.term_fields[t as usize] & !(1u8 << Field::Joined as u32) != 0
    }

    /// Is the term a town, locality or postcode district name somewhere?
    pub(crate) fn is_place(&self, t: u32) -> bool {
        const PLACE: u8 =
            1 << Field::Town as u32 | 1 << Field::Locality as u32 | 1 << Field::Outward as u32;
        self.term_fields[t as usize] & PLACE != 0
    }

    /// Weight of a whole range of terms (a prefix or a single term).
    pub(crate) fn range_weight(&self, lo: u32, hi: u32) -> f32 {
        weight_for(
            self.n_text,
            self.freq_cum[hi as usize] - self.freq_cum[lo as usize],
        )
    }
}

/// A letter flat (`FLAT A`) is keyed apart from the numbers.
const LETTER_KEY: u32 = 1 << 31;

/// The keys a number is found under: its first and last number (a letter flat by its letter).
pub(crate) fn num_key_of(n: NumSpec) -> [Option<u32>; 2] {
    if !n.is_some() {
        [None, None]
    } else if n.lo == 0 && n.suffix != 0 {
        [Some(LETTER_KEY | u32::from(n.suffix)), None]
    } else {
        [Some(n.lo), (n.hi != n.lo).then_some(n.hi)]
    }
}

/// The number keys of an address (flat and house numbers together: a query may read one as the
/// other).
fn num_keys(n: [NumSpec; 2]) -> Vec<Option<u32>> {
    let mut k: Vec<Option<u32>> = num_key_of(n[0])
        .into_iter()
        .chain(num_key_of(n[1]))
        .filter(Option::is_some)
        .collect();
    k.sort_unstable();
    k.dedup();
    k
}

impl AddressIndex {
    /// The entries under a number-word key.
    pub(crate) fn num_word_entries(&self, term: u32, key: u32) -> &[u32] {
        match self
            .nw_keys
            .binary_search(&((u64::from(term) << 32) | u64::from(key)))
        {
            Ok(i) => self.nw_post.row(i),
            Err(_) => &[],
        }
    }
}

/// Inverse-frequency weight, between about 0.5 (every address) and 12 (one in millions).
pub(crate) fn weight_for(n: usize, freq: u64) -> f32 {
    let n = n.max(1) as f64;
    ((1.0 + n / (freq as f64 + 1.0)).ln() as f32).clamp(0.5, 12.0)
}
