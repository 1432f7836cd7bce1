//! Parsing free text and structured fields into words, house/flat numbers and a postcode.

use crate::normalise::{self, Lex, NumSpec, Sep};
use crate::{ResolveQuery, nonempty};

/// A query word, folded (`RD` -> `ROAD`), with the raw text for prefix matching.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QWord {
    pub text: String,
    pub raw: String,
    /// The other reading of an ambiguous abbreviation (`ST`: SAINT or STREET).
    pub alt: Option<&'static str>,
    /// The last word of an autocomplete query still being typed.
    pub unfinished: bool,
}

/// A house or flat number from the query; `prefix` when its digits are still being typed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct QNum {
    pub spec: NumSpec,
    pub prefix: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ParsedQuery {
    pub words: Vec<QWord>,
    pub saon: Option<QNum>,
    pub paon: Option<QNum>,
    /// A full postcode, canonical.
    pub postcode: Option<String>,
    /// A partial postcode, compact upper case (`EX1`, `EX11`), when no full one was given.
    pub pc_prefix: Option<String>,
    /// The text was nothing but a (full or partial) postcode.
    pub only_postcode: bool,
    /// The word written right after the flat and the house number (`THE` skipped), when it is a
    /// word: the name that number belongs to (`5 Birdall Terrace, Ferndale Road`: `BIRDALL`).
    pub saon_next: Option<String>,
    pub paon_next: Option<String>,
}

impl ParsedQuery {
    pub(crate) fn has_numbers(&self) -> bool {
        self.saon.is_some() || self.paon.is_some()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.words.is_empty()
            && !self.has_numbers()
            && self.postcode.is_none()
            && self.pc_prefix.is_none()
    }
}

#[derive(Debug, Clone)]
struct RawNum {
    spec: NumSpec,
    flat: bool,
    prefix: bool,
    /// The word right after the number ([`ParsedQuery::paon_next`]).
    next: Option<String>,
}

/// The word after token `i` of `toks` (`THE` skipped), when it is a word and not a number.
pub(crate) fn next_word(
    toks: &[Lex],
    folded: &[(String, Option<&'static str>)],
    i: usize,
) -> Option<String> {
    let mut j = i + 1;
    if folded.get(j).is_some_and(|w| w.0 == "THE") {
        j += 1;
    }
    let t = toks.get(j)?;
    (normalise::parse_num(&t.text).is_none() && t.text.len() > 1).then(|| folded[j].0.clone())
}

fn is_letter(t: &str) -> bool {
    t.len() == 1 && t.as_bytes()[0].is_ascii_uppercase()
}

/// Finds a full postcode in the tokens (one compact token, or outward + inward), last first.
fn take_postcode(toks: &[Lex], used: &mut [bool]) -> Option<String> {
    for i in (0..toks.len()).rev() {
        let t = toks[i].text.as_bytes();
        if (5..=7).contains(&t.len())
            && t[0].is_ascii_uppercase()
            && let Some(p) = normalise::canonical_postcode(&toks[i].text)
        {
            used[i] = true;
            return Some(p);
        }
        if i + 1 < toks.len()
            && normalise::is_outward(t)
            && normalise::is_inward(toks[i + 1].text.as_bytes())
            && let Some(p) =
                normalise::canonical_postcode(&format!("{}{}", toks[i].text, toks[i + 1].text))
        {
            used[i] = true;
            used[i + 1] = true;
            return Some(p);
        }
    }
    None
}

/// Parses free text. `typing` marks an autocomplete query whose last token may be unfinished.
pub(crate) fn parse_text(text: &str, typing: bool) -> ParsedQuery {
    parse_text_with(text, typing, true)
}

/// As [`parse_text`]; without `allow_only_postcode` a text that merely looks like a partial
/// postcode (`A1`) is read as words.
pub(crate) fn parse_text_with(text: &str, typing: bool, allow_only_postcode: bool) -> ParsedQuery {
    let toks = normalise::lex(text);
    let mut q = ParsedQuery::default();
    if toks.is_empty() {
        return q;
    }
    let unfinished = typing && text.chars().last().is_some_and(char::is_alphanumeric);
    let mut used = vec![false; toks.len()];
    q.postcode = take_postcode(&toks, &mut used);
    let last = toks.len() - 1;

    // A partial postcode: the whole query (`EX1`, `EX1 1`, `ex11a`), or trailing `EX1 1`.
    if q.postcode.is_none() {
        let compact: String = toks.iter().map(|t| t.text.as_str()).collect();
        if allow_only_postcode && toks.len() <= 2 && is_postcode_prefix(&compact) {
            // Keep a typed space: `EX1 1` is sector EX1 1, while `EX11` may also be district EX11.
            let typed = if toks.len() == 2 && normalise::is_outward(toks[0].text.as_bytes()) {
                format!("{} {}", toks[0].text, toks[1].text)
            } else {
                compact
            };
            q.pc_prefix = Some(typed);
            q.only_postcode = true;
            return q;
        }
        if typing
            && toks.len() >= 2
            && normalise::is_inward_prefix(toks[last].text.as_bytes())
            && normalise::is_outward(toks[last - 1].text.as_bytes())
        {
            q.pc_prefix = Some(format!("{} {}", toks[last - 1].text, toks[last].text));
            used[last] = true;
        } else if typing && normalise::is_outward(toks[last].text.as_bytes()) {
            q.pc_prefix = Some(toks[last].text.clone());
        }
    } else if used.iter().all(|&u| u) {
        q.only_postcode = true;
        return q;
    }

    let rest: Vec<Lex> = toks
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(t, _)| t.clone())
        .collect();
    let rest_last_unfinished = unfinished && !used[last];
    let folded = normalise::fold_tokens(&rest);
    let mut nums: Vec<RawNum> = Vec::new();
    let mut flat_next = false;
    let mut i = 0;
    while i < rest.len() {
        let is_last = i + 1 == rest.len();
        if let Some(n) = normalise::parse_num(&rest[i].text) {
            let mut spec = n;
            let mut consumed_last = is_last;
            if let Some(next) = rest.get(i + 1)
                && next.sep == Sep::Dash
                && let Some(m) = normalise::parse_num(&next.text)
                && m.lo >= n.lo
            {
                spec = NumSpec {
                    lo: n.lo,
                    hi: m.lo,
                    suffix: 0,
                };
                i += 1;
                consumed_last = i + 1 == rest.len();
            } else if spec.suffix == 0
                && let Some(next) = rest.get(i + 1)
                && next.sep == Sep::Slash
                && is_letter(&next.text)
            {
                // `Flat 6/A`: flat 6A.
                spec.suffix = next.text.as_bytes()[0];
                i += 1;
                consumed_last = i + 1 == rest.len();
            }
            let slash_next = rest
                .get(i + 1)
                .is_some_and(|nx| nx.sep == Sep::Slash && normalise::parse_num(&nx.text).is_some());
            nums.push(RawNum {
                spec,
                flat: flat_next || slash_next,
                prefix: consumed_last && rest_last_unfinished && spec.suffix == 0,
                next: next_word(&rest, &folded, i),
            });
            flat_next = false;
        } else if is_letter(&rest[i].text)
            && (i == 0 || rest[i].sep == Sep::Comma)
            && rest.get(i + 1).is_some_and(|nx| {
                nx.sep != Sep::Dash && normalise::parse_num(&nx.text).is_some_and(|n| n.suffix == 0)
            })
        {
            // `B/2 Foo Road`, `B, 2 Foo Road`: flat B of number 2.
            nums.push(RawNum {
                spec: NumSpec::single(0, rest[i].text.as_bytes()[0]),
                flat: true,
                prefix: false,
                next: None,
            });
        } else if normalise::is_flat_marker(&folded[i].0)
            // "Top Flat 12 Mount Street", "Flat, 12 Mount Street": 12 is the house.
            && !(i > 0 && normalise::is_position_word(&folded[i - 1].0))
            && rest.get(i + 1).is_some_and(|nx| {
                nx.sep != Sep::Comma
                    && (normalise::parse_num(&nx.text).is_some() || is_letter(&nx.text))
            })
        {
            let nx = &rest[i + 1].text;
            if is_letter(nx) {
                nums.push(RawNum {
                    spec: NumSpec::single(0, nx.as_bytes()[0]),
                    flat: true,
                    prefix: false,
                    next: next_word(&rest, &folded, i + 1),
                });
                i += 1;
            } else {
                flat_next = true;
            }
        } else {
            q.words.push(QWord {
                text: folded[i].0.clone(),
                raw: rest[i].text.clone(),
                alt: folded[i].1,
                unfinished: is_last && rest_last_unfinished,
            });
        }
        i += 1;
    }
    assign_numbers(&mut q, &nums);
    dedup_words(&mut q.words);
    q
}

fn assign_numbers(q: &mut ParsedQuery, nums: &[RawNum]) {
    let as_q = |r: &RawNum| QNum {
        spec: r.spec,
        prefix: r.prefix,
    };
    let (saon, paon) = if let Some(f) = nums.iter().position(|n| n.flat) {
        (
            Some(&nums[f]),
            nums[f + 1..]
                .iter()
                .find(|n| !n.flat)
                .or_else(|| nums.iter().find(|n| !n.flat)),
        )
    } else if nums.len() >= 2 {
        (Some(&nums[0]), Some(&nums[1]))
    } else {
        (None, nums.first())
    };
    q.saon = saon.map(as_q);
    q.paon = paon.map(as_q);
    q.saon_next = saon.and_then(|n| n.next.clone());
    q.paon_next = paon.and_then(|n| n.next.clone());
}

fn dedup_words(words: &mut Vec<QWord>) {
    let mut seen: Vec<String> = Vec::new();
    words.retain(|w| {
        if seen.contains(&w.text) {
            false
        } else {
            seen.push(w.text.clone());
            true
        }
    });
}

/// Does this compact text start a postcode (it has an outward code's letters and a digit)?
pub(crate) fn is_postcode_prefix(compact: &str) -> bool {
    let b = compact.as_bytes();
    if b.len() < 2 || b.len() > 7 {
        return false;
    }
    if normalise::is_outward(b) {
        return true;
    }
    (2..=4.min(b.len())).any(|k| {
        let (o, i) = b.split_at(k);
        normalise::is_outward(o)
            && (normalise::is_inward_prefix(i) || normalise::is_inward(i) || i.is_empty())
    })
}

fn words_of(text: &str, q: &mut ParsedQuery) {
    let toks = normalise::lex(text);
    for (t, (w, alt)) in toks.iter().zip(normalise::fold_tokens(&toks)) {
        q.words.push(QWord {
            text: w,
            raw: t.text.clone(),
            alt,
            unfinished: false,
        });
    }
}

/// Parses a resolve query: free text and structured fields (fields win for numbers and postcode).
pub(crate) fn parse_resolve(rq: &ResolveQuery) -> ParsedQuery {
    let mut q = match rq.address.as_deref() {
        Some(a) => parse_text(a, false),
        None => ParsedQuery::default(),
    };
    q.only_postcode = false;
    let field = nonempty;
    if let Some(s) = field(&rq.saon) {
        let d = normalise::parse_designator(s);
        if let Some(n) = d.num {
            q.saon = Some(QNum {
                spec: n,
                prefix: false,
            });
            q.saon_next = None;
        }
        for w in d.words {
            q.words.push(QWord {
                raw: w.clone(),
                text: w,
                alt: None,
                unfinished: false,
            });
        }
    }
    if let Some(s) = field(&rq.paon) {
        let d = normalise::parse_designator(s);
        if let Some(n) = d.num {
            q.paon = Some(QNum {
                spec: n,
                prefix: false,
            });
            q.paon_next = None;
        } else if q.saon.is_none()
            && rq.saon.is_none()
            && let Some(p) = q.paon.take()
        {
            // Free text gave one number and the fields say the building is named.
            q.saon = Some(p);
            q.saon_next = q.paon_next.take();
        }
        for w in d.words {
            q.words.push(QWord {
                raw: w.clone(),
                text: w,
                alt: None,
                unfinished: false,
            });
        }
    }
    for s in [field(&rq.street), field(&rq.locality), field(&rq.town)]
        .into_iter()
        .flatten()
    {
        words_of(s, &mut q);
    }
    if let Some(p) = field(&rq.postcode) {
        let compact: String = p
            .chars()
            .filter(|c| c.is_alphanumeric())
            .map(|c| c.to_ascii_uppercase())
            .collect();
        if let Some(c) = normalise::canonical_postcode(&compact) {
            q.postcode = Some(c);
            q.pc_prefix = None;
        } else if q.postcode.is_none() {
            // A partial postcode (`EX1`, `EX1 1`): its district is matched as a word.
            let outward = match p.split_whitespace().next() {
                Some(o) if p.trim().contains(' ') => o.to_ascii_uppercase(),
                _ => compact,
            };
            if normalise::is_outward(outward.as_bytes()) {
                q.words.push(QWord {
                    raw: outward.clone(),
                    text: outward,
                    alt: None,
                    unfinished: false,
                });
            }
        }
    }
    if q.postcode.is_none() && q.pc_prefix.is_some() {
        // A bare outward code in free text is matched as a word.
        q.pc_prefix = None;
    }
    dedup_words(&mut q.words);
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(q: &ParsedQuery) -> String {
        let num = |n: &Option<QNum>| match n {
            None => "-".to_string(),
            Some(n) => {
                let mut s = if n.spec.lo == n.spec.hi {
                    n.spec.lo.to_string()
                } else {
                    format!("{}-{}", n.spec.lo, n.spec.hi)
                };
                if n.spec.suffix != 0 {
                    s.push(n.spec.suffix as char);
                }
                if n.prefix {
                    s.push('*');
                }
                s
            }
        };
        let words: Vec<String> = q
            .words
            .iter()
            .map(|w| {
                if w.unfinished {
                    format!("{}*", w.text)
                } else {
                    w.text.clone()
                }
            })
            .collect();
        format!(
            "saon={} paon={} words=[{}] pc={} prefix={}{}",
            num(&q.saon),
            num(&q.paon),
            words.join(" "),
            q.postcode.as_deref().unwrap_or("-"),
            q.pc_prefix.as_deref().unwrap_or("-"),
            if q.only_postcode { " only" } else { "" }
        )
    }

    #[track_caller]
    fn check(input: &str, typing: bool, expect: &str) {
        assert_eq!(show(&parse_text(input, typing)), expect, "{input}");
    }

    #[test]
    fn free_text() {
        check(
            "Flat 2, 10 High St, Exeter, EX1 1AA",
            false,
            "saon=2 paon=10 words=[HIGH STREET EXETER] pc=EX1 1AA prefix=-",
        );
        check(
            "2/10 High Street",
            false,
            "saon=2 paon=10 words=[HIGH STREET] pc=- prefix=-",
        );
        check(
            "Apartment 2 10 High St",
            false,
            "saon=2 paon=10 words=[HIGH STREET] pc=- prefix=-",
        );
        check(
            "2 , 10 High St",
            false,
            "saon=2 paon=10 words=[HIGH STREET] pc=- prefix=-",
        );
        check(
            "63-65 High St",
            false,
            "saon=- paon=63-65 words=[HIGH STREET] pc=- prefix=-",
        );
        check(
            "Flat 2A Kings Ct",
            false,
            "saon=2A paon=- words=[KINGS COURT] pc=- prefix=-",
        );
        check(
            "ex11aa 10 high st",
            false,
            "saon=- paon=10 words=[HIGH STREET] pc=EX1 1AA prefix=-",
        );
        check(
            "EX1 1AA",
            false,
            "saon=- paon=- words=[] pc=EX1 1AA prefix=- only",
        );
        check(
            "ex1 1",
            true,
            "saon=- paon=- words=[] pc=- prefix=EX1 1 only",
        );
        check("ex11", true, "saon=- paon=- words=[] pc=- prefix=EX11 only");
        check(
            "10 high st ex1 1",
            true,
            "saon=- paon=10 words=[HIGH STREET EX1] pc=- prefix=EX1 1",
        );
        check("10 hig", true, "saon=- paon=10 words=[HIG*] pc=- prefix=-");
        check("1", true, "saon=- paon=1* words=[] pc=- prefix=-");
        check(
            "10 St Davids Hill",
            false,
            "saon=- paon=10 words=[SAINT DAVIDS HILL] pc=- prefix=-",
        );
        check("   ", false, "saon=- paon=- words=[] pc=- prefix=-");
        check(
            "flat a rose house",
            false,
            "saon=0A paon=- words=[ROSE HOUSE] pc=- prefix=-",
        );
        check(
            "Top Flat, 12 Mount Street",
            false,
            "saon=- paon=12 words=[TOP FLAT MOUNT STREET] pc=- prefix=-",
        );
        check(
            "Ground Floor Flat 12 Mount St",
            false,
            "saon=- paon=12 words=[GROUND FLOOR FLAT MOUNT STREET] pc=- prefix=-",
        );
        check(
            "13 Trinity Apartments, 3 Roman Walk",
            false,
            "saon=13 paon=3 words=[TRINITY APARTMENTS ROMAN WALK] pc=- prefix=-",
        );
        check(
            "Flat 6/A Royston Court",
            false,
            "saon=6A paon=- words=[ROYSTON COURT] pc=- prefix=-",
        );
        check(
            "B/2 Foo Road",
            false,
            "saon=0B paon=2 words=[FOO ROAD] pc=- prefix=-",
        );
        check(
            "b, 2 foo road",
            false,
            "saon=0B paon=2 words=[FOO ROAD] pc=- prefix=-",
        );
    }

    #[track_caller]
    fn check_resolve(rq: ResolveQuery, expect: &str) {
        assert_eq!(show(&parse_resolve(&rq)), expect, "{rq:?}");
    }

    #[test]
    fn structured() {
        let s = |v: &str| Some(v.to_string());
        check_resolve(
            ResolveQuery {
                saon: s("Flat 2"),
                paon: s("10"),
                street: s("High St"),
                town: s("Exeter"),
                postcode: s("ex11aa"),
                ..Default::default()
            },
            "saon=2 paon=10 words=[HIGH STREET EXETER] pc=EX1 1AA prefix=-",
        );
        check_resolve(
            ResolveQuery {
                address: s("4 Kings Court"),
                paon: s("Kings Court"),
                ..Default::default()
            },
            "saon=4 paon=- words=[KINGS COURT] pc=- prefix=-",
        );
        check_resolve(
            ResolveQuery {
                street: s("High Street"),
                postcode: s("EX1"),
                ..Default::default()
            },
            "saon=- paon=- words=[HIGH STREET EX1] pc=- prefix=-",
        );
        check_resolve(
            ResolveQuery {
                street: s("High Street"),
                postcode: s("ex1 1"),
                ..Default::default()
            },
            "saon=- paon=- words=[HIGH STREET EX1] pc=- prefix=-",
        );
    }
}
