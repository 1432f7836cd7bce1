//! A small edit-distance automaton for `fst`: optimal string alignment (Levenshtein plus adjacent
//! transpositions), as a whole-key matcher or as a prefix matcher for an unfinished word.
//!
//! The state is one dynamic-programming row (and the row before, for transpositions) in fixed
//! arrays, so running it over the term dictionary allocates nothing.

use fst::Automaton;

/// The longest word matched fuzzily; longer words only match exactly.
pub(crate) const MAX_FUZZY_LEN: usize = 24;
const ROW: usize = MAX_FUZZY_LEN + 1;

pub(crate) struct Osa<'q> {
    q: &'q [u8],
    d: u8,
    prefix: bool,
}

impl<'q> Osa<'q> {
    /// Matches keys within `d` edits of `q` (or, with `prefix`, keys with such a prefix).
    /// `q` must be at most [`MAX_FUZZY_LEN`] bytes.
    pub(crate) fn new(q: &'q [u8], d: u8, prefix: bool) -> Self {
        debug_assert!(q.len() <= MAX_FUZZY_LEN);
        Osa { q, d, prefix }
    }
}

#[derive(Clone)]
pub(crate) struct OsaState {
    cur: [u8; ROW],
    prev: [u8; ROW],
    last: u8,
    depth: u8,
    matched: bool,
}

impl Automaton for Osa<'_> {
    type State = OsaState;

    fn start(&self) -> OsaState {
        let cap = self.d + 1;
        let mut cur = [cap; ROW];
        for (i, c) in cur.iter_mut().enumerate().take(self.q.len() + 1) {
            *c = (i as u8).min(cap);
        }
        OsaState {
            cur,
            prev: [cap; ROW],
            last: 0,
            depth: 0,
            matched: self.prefix && self.q.len() <= self.d as usize,
        }
    }

    fn is_match(&self, s: &OsaState) -> bool {
        s.matched || s.cur[self.q.len()] <= self.d
    }

    fn can_match(&self, s: &OsaState) -> bool {
        if s.matched {
            return true;
        }
        let m = self.q.len();
        let min_cur = s.cur[..=m].iter().copied().min().unwrap_or(u8::MAX);
        let min_prev = s.prev[..=m].iter().copied().min().unwrap_or(u8::MAX);
        min_cur <= self.d || (s.depth > 0 && min_prev < self.d)
    }

    fn will_always_match(&self, s: &OsaState) -> bool {
        s.matched
    }

    fn accept(&self, s: &OsaState, b: u8) -> OsaState {
        let cap = self.d + 1;
        let q = self.q;
        let m = q.len();
        let mut next = [cap; ROW];
        next[0] = s.cur[0].saturating_add(1).min(cap);
        for i in 1..=m {
            let cost = u8::from(q[i - 1] != b);
            let mut v = (s.cur[i] + 1).min(next[i - 1] + 1).min(s.cur[i - 1] + cost);
            if i > 1 && s.depth > 0 && q[i - 1] == s.last && q[i - 2] == b {
                v = v.min(s.prev[i - 2] + 1);
            }
            next[i] = v.min(cap);
        }
        OsaState {
            matched: s.matched || (self.prefix && next[m] <= self.d),
            prev: s.cur,
            cur: next,
            last: b,
            depth: s.depth.saturating_add(1),
        }
    }
}

/// Optimal string alignment distance between two byte strings (small inputs only).
pub(crate) fn osa_distance(a: &[u8], b: &[u8]) -> usize {
    let n = b.len();
    let mut prev2 = vec![0usize; n + 1];
    let mut prev: Vec<usize> = (0..=n).collect();
    let mut cur = vec![0usize; n + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=n {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(prev2[j - 2] + 1);
            }
            cur[j] = v;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[n]
}

#[cfg(test)]
mod tests {
    use super::*;
    use fst::{IntoStreamer, Streamer};

    fn run(words: &[&str], q: &str, d: u8, prefix: bool) -> Vec<String> {
        let mut sorted: Vec<&str> = words.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let set = fst::Set::from_iter(sorted).unwrap();
        let mut stream = set.search(Osa::new(q.as_bytes(), d, prefix)).into_stream();
        let mut out = Vec::new();
        while let Some(k) = stream.next() {
            out.push(String::from_utf8(k.to_vec()).unwrap());
        }
        out
    }

    #[track_caller]
    fn check(q: &str, d: u8, prefix: bool, expect: &[&str]) {
        let words = [
            "HIGH",
            "HIHG",
            "HIGHER",
            "HIGHFIELD",
            "THIGH",
            "HUGH",
            "HIG",
            "STREET",
            "STRETE",
            "STATION",
            "EXETER",
            "EXTER",
            "CREDITON",
        ];
        assert_eq!(
            run(&words, q, d, prefix),
            expect,
            "{q} d={d} prefix={prefix}"
        );
    }

    #[test]
    fn whole_words() {
        check("HIGH", 1, false, &["HIG", "HIGH", "HIHG", "HUGH", "THIGH"]);
        check("STRET", 1, false, &["STREET", "STRETE"]);
        check("EXETRE", 1, false, &["EXETER"]);
        check("EXETRE", 2, false, &["EXETER", "EXTER"]);
        check("CREDITNO", 1, false, &["CREDITON"]);
    }

    #[test]
    fn prefixes() {
        check("HIGH", 0, true, &["HIGH", "HIGHER", "HIGHFIELD"]);
        check("HIHGF", 1, true, &["HIGHFIELD", "HIHG"]);
        check("STAT", 1, true, &["STATION"]);
    }

    #[test]
    fn distances() {
        assert_eq!(osa_distance(b"HIGH", b"HIHG"), 1);
        assert_eq!(osa_distance(b"HIGH", b"HUGH"), 1);
        assert_eq!(osa_distance(b"EXETER", b"EXTER"), 1);
        assert_eq!(osa_distance(b"ABC", b"CBA"), 2);
        assert_eq!(osa_distance(b"", b"AB"), 2);
    }
}
