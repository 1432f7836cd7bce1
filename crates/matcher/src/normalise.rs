//! Text normalisation shared by the index and the query parser.
//!
//! Everything is upper-cased, apostrophes vanish (`DAVID'S` -> `DAVIDS`), every other
//! non-alphanumeric character separates tokens, and abbreviations are folded to one canonical
//! (long) form so that `RD` and `ROAD` become the same term on both sides.

/// What separated a token from the one before it (the strongest separator wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Sep {
    Start,
    Space,
    Dash,
    Slash,
    Comma,
}

/// A raw token: upper-case alphanumeric text and the separator before it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Lex {
    pub text: String,
    pub sep: Sep,
}

/// Splits text into upper-case alphanumeric tokens, remembering separators.
pub(crate) fn lex(s: &str) -> Vec<Lex> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut sep = Sep::Start;
    let mut pending = Sep::Start;
    for c in s.chars() {
        if c.is_alphanumeric() {
            if cur.is_empty() {
                sep = pending;
            }
            cur.extend(c.to_uppercase());
        } else if c == '\'' || c == '\u{2019}' || c == '`' {
            // Apostrophes join: DAVID'S -> DAVIDS.
        } else {
            if !cur.is_empty() {
                out.push(Lex {
                    text: std::mem::take(&mut cur),
                    sep,
                });
                pending = Sep::Space;
            }
            let this = match c {
                ',' | ';' | '\n' => Sep::Comma,
                '/' | '\\' => Sep::Slash,
                '-' | '\u{2013}' | '\u{2014}' => Sep::Dash,
                _ => Sep::Space,
            };
            if out.is_empty() {
                pending = Sep::Start;
            } else if this > pending {
                pending = this;
            }
        }
    }
    if !cur.is_empty() {
        out.push(Lex { text: cur, sep });
    }
    out
}

/// Abbreviations and their canonical long forms. `ST` is handled separately (STREET or SAINT).
const ABBREVIATIONS: &[(&str, &str)] = &[
    ("1ST", "FIRST"),
    ("2ND", "SECOND"),
    ("3RD", "THIRD"),
    ("4TH", "FOURTH"),
    ("APPT", "APARTMENT"),
    ("APT", "APARTMENT"),
    ("APTS", "APARTMENTS"),
    ("AV", "AVENUE"),
    ("AVE", "AVENUE"),
    ("AVN", "AVENUE"),
    ("BLDG", "BUILDING"),
    ("BLDGS", "BUILDINGS"),
    ("BLVD", "BOULEVARD"),
    ("BSMT", "BASEMENT"),
    ("BVD", "BOULEVARD"),
    ("CHYD", "CHURCHYARD"),
    ("CL", "CLOSE"),
    ("CLS", "CLOSE"),
    ("CNR", "CORNER"),
    ("COTT", "COTTAGE"),
    ("COTTS", "COTTAGES"),
    ("CRES", "CRESCENT"),
    ("CRESC", "CRESCENT"),
    ("CRS", "CRESCENT"),
    ("CRT", "COURT"),
    ("CT", "COURT"),
    ("CTGE", "COTTAGE"),
    ("DR", "DRIVE"),
    ("DRV", "DRIVE"),
    ("EST", "ESTATE"),
    ("FLR", "FLOOR"),
    ("FLT", "FLAT"),
    ("FM", "FARM"),
    ("GDN", "GARDEN"),
    ("GDNS", "GARDENS"),
    ("GND", "GROUND"),
    ("GR", "GROVE"),
    ("GRD", "GROUND"),
    ("GRN", "GREEN"),
    ("GRO", "GROVE"),
    ("GRV", "GROVE"),
    ("GT", "GREAT"),
    ("HL", "HILL"),
    ("HO", "HOUSE"),
    ("HSE", "HOUSE"),
    ("LN", "LANE"),
    ("LWR", "LOWER"),
    ("MT", "MOUNT"),
    ("MWS", "MEWS"),
    ("PDE", "PARADE"),
    ("PK", "PARK"),
    ("PL", "PLACE"),
    ("RD", "ROAD"),
    ("SQ", "SQUARE"),
    ("STR", "STREET"),
    ("TCE", "TERRACE"),
    ("TER", "TERRACE"),
    ("TERR", "TERRACE"),
    ("UPR", "UPPER"),
    ("VW", "VIEW"),
    ("WK", "WALK"),
    ("WY", "WAY"),
];

/// The canonical form of a (non-`ST`) word.
pub(crate) fn fold(word: &str) -> &str {
    match ABBREVIATIONS.binary_search_by(|(a, _)| (*a).cmp(word)) {
        Ok(i) => ABBREVIATIONS[i].1,
        Err(_) => word,
    }
}

/// The abbreviated form of a canonical word, if there is a common one (for the noise generator).
pub(crate) fn abbreviate(word: &str) -> Option<&'static str> {
    const SHORT: &[(&str, &str)] = &[
        ("ROAD", "Rd"),
        ("STREET", "St"),
        ("AVENUE", "Ave"),
        ("LANE", "Ln"),
        ("CLOSE", "Cl"),
        ("COURT", "Ct"),
        ("CRESCENT", "Cres"),
        ("DRIVE", "Dr"),
        ("GARDENS", "Gdns"),
        ("PLACE", "Pl"),
        ("SQUARE", "Sq"),
        ("TERRACE", "Ter"),
        ("GREEN", "Grn"),
        ("PARK", "Pk"),
        ("GROVE", "Gro"),
        ("SAINT", "St"),
    ];
    SHORT.iter().find(|(w, _)| *w == word).map(|(_, s)| *s)
}

/// Words that introduce a secondary (flat-like) number: `FLAT 2`, `APARTMENT 2`, `UNIT 3`.
pub(crate) fn is_flat_marker(word: &str) -> bool {
    matches!(
        word,
        "FLAT" | "APARTMENT" | "UNIT" | "STUDIO" | "MAISONETTE" | "ROOM" | "SUITE" | "FLATS"
    )
}

/// Words that name a flat by its position (`TOP FLAT`, `GROUND FLOOR FLAT`): a `FLAT` after one
/// of them is part of the name, not a marker before a flat number.
pub(crate) fn is_position_word(word: &str) -> bool {
    matches!(
        word,
        "TOP"
            | "BASEMENT"
            | "GROUND"
            | "FLOOR"
            | "FIRST"
            | "SECOND"
            | "THIRD"
            | "FOURTH"
            | "GARDEN"
            | "UPPER"
            | "LOWER"
            | "MIDDLE"
            | "REAR"
            | "FRONT"
    )
}

/// Words that tell apart streets of one name (`PRINCES STREET NORTH`, `LOWER SUMMERLANDS`).
pub(crate) fn is_qualifier(word: &str) -> bool {
    matches!(
        word,
        "NORTH"
            | "SOUTH"
            | "EAST"
            | "WEST"
            | "UPPER"
            | "LOWER"
            | "HIGHER"
            | "GREAT"
            | "LITTLE"
            | "OLD"
            | "NEW"
    )
}

/// Street-type words: matched like any other word but carry less weight in an address' own coverage.
pub(crate) fn is_street_type(word: &str) -> bool {
    matches!(
        word,
        "STREET"
            | "ROAD"
            | "AVENUE"
            | "LANE"
            | "CLOSE"
            | "COURT"
            | "CRESCENT"
            | "DRIVE"
            | "GARDENS"
            | "PLACE"
            | "SQUARE"
            | "TERRACE"
            | "GREEN"
            | "PARK"
            | "PARADE"
            | "GROVE"
            | "HILL"
            | "WAY"
            | "WALK"
            | "MEWS"
            | "VIEW"
            | "ROW"
    )
}

/// Words that often appear in typed addresses but never in the register (country, counties).
/// They cost little when unmatched.
pub(crate) fn is_ignorable(word: &str) -> bool {
    matches!(
        word,
        "UK" | "GB"
            | "UNITED"
            | "KINGDOM"
            | "ENGLAND"
            | "WALES"
            | "SCOTLAND"
            | "DEVON"
            | "CORNWALL"
            | "SOMERSET"
            | "DORSET"
            | "KENT"
            | "ESSEX"
            | "SURREY"
            | "YORKSHIRE"
            | "LANCASHIRE"
            | "HAMPSHIRE"
            | "COUNTY"
            | "SHIRE"
            | "THE"
            | "OF"
            | "AND"
    )
}

/// A house or flat number: `10`, `10A`, `63-65`, or a lone letter (`FLAT A` is number 0, suffix A).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct NumSpec {
    pub lo: u32,
    pub hi: u32,
    pub suffix: u8,
}

impl NumSpec {
    pub const NONE: NumSpec = NumSpec {
        lo: u32::MAX,
        hi: u32::MAX,
        suffix: 0,
    };

    pub fn is_some(self) -> bool {
        self.lo != u32::MAX
    }

    pub fn single(n: u32, suffix: u8) -> NumSpec {
        NumSpec {
            lo: n,
            hi: n,
            suffix,
        }
    }
}

/// Parses `10`, `10A`, `2B` (at most one trailing letter); anything else is not a number token.
pub(crate) fn parse_num(t: &str) -> Option<NumSpec> {
    let b = t.as_bytes();
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let n: u32 = t[..digits].parse().ok()?;
    match &b[digits..] {
        [] => Some(NumSpec::single(n, 0)),
        [l] if l.is_ascii_uppercase() => Some(NumSpec::single(n, *l)),
        _ => None,
    }
}

fn is_single_letter(t: &str) -> bool {
    t.len() == 1 && t.as_bytes()[0].is_ascii_uppercase()
}

/// Folds the words of one field or segment, deciding `ST` by position:
/// SAINT when a word follows and it starts a name (after nothing, a number, or a comma), else STREET.
/// Returns (canonical, alternative) per token; numbers pass through unchanged.
pub(crate) fn fold_tokens(toks: &[Lex]) -> Vec<(String, Option<&'static str>)> {
    let mut out = Vec::with_capacity(toks.len());
    for (i, t) in toks.iter().enumerate() {
        if t.text == "ST" {
            let next_is_word = toks
                .get(i + 1)
                .is_some_and(|n| n.sep != Sep::Comma && !n.text.as_bytes()[0].is_ascii_digit());
            let starts_name = i == 0
                || t.sep == Sep::Comma
                || toks[i - 1].text.as_bytes()[0].is_ascii_digit()
                || is_flat_marker(fold(&toks[i - 1].text));
            if next_is_word && starts_name {
                out.push(("SAINT".to_string(), Some("STREET")));
            } else {
                out.push(("STREET".to_string(), Some("SAINT")));
            }
        } else {
            out.push((fold(&t.text).to_string(), None));
        }
    }
    out
}

/// A parsed secondary or primary addressable object: its words and its number.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Designator {
    pub words: Vec<String>,
    pub num: Option<NumSpec>,
}

/// Parses a SAON or PAON field: `FLAT 2`, `63-65`, `ROSE COTTAGE`, `KINGS COURT 4`, `FLAT A`.
pub(crate) fn parse_designator(s: &str) -> Designator {
    let toks = lex(s);
    let folded = fold_tokens(&toks);
    let mut d = Designator::default();
    let mut i = 0;
    while i < toks.len() {
        let w = &folded[i].0;
        if let Some(n) = parse_num(&toks[i].text) {
            let mut spec = n;
            if let Some(next) = toks.get(i + 1)
                && next.sep == Sep::Dash
                && let Some(m) = parse_num(&next.text)
                && m.lo >= n.lo
            {
                spec = NumSpec {
                    lo: n.lo,
                    hi: m.lo,
                    suffix: 0,
                };
                i += 1;
            } else if spec.suffix == 0
                && let Some(next) = toks.get(i + 1)
                && next.sep == Sep::Slash
                && is_single_letter(&next.text)
            {
                // `FLAT 1/B`: flat 1B.
                spec.suffix = next.text.as_bytes()[0];
                i += 1;
            }
            if d.num.is_none() {
                d.num = Some(spec);
            }
        } else if is_flat_marker(w)
            && let Some(next) = toks.get(i + 1)
            && (parse_num(&next.text).is_some() || is_single_letter(&next.text))
        {
            // The marker is implied by the number itself; the number is read next.
            if is_single_letter(&next.text) {
                if d.num.is_none() {
                    d.num = Some(NumSpec::single(0, next.text.as_bytes()[0]));
                }
                i += 1;
            }
        } else {
            d.words.push(w.clone());
        }
        i += 1;
    }
    d
}

/// Outward code shapes: A9, A99, AA9, AA99, A9A, AA9A.
pub(crate) fn is_outward(o: &[u8]) -> bool {
    let a = |c: u8| c.is_ascii_uppercase();
    let d = |c: u8| c.is_ascii_digit();
    let an = |c: u8| c.is_ascii_uppercase() || c.is_ascii_digit();
    match *o {
        [x, y] => a(x) && d(y),
        [x, y, z] => a(x) && ((d(y) && an(z)) || (a(y) && d(z))),
        [w, x, y, z] => a(w) && a(x) && d(y) && an(z),
        _ => false,
    }
}

/// Inward code shape: 9AA.
pub(crate) fn is_inward(i: &[u8]) -> bool {
    matches!(*i, [d, x, y] if d.is_ascii_digit() && x.is_ascii_uppercase() && y.is_ascii_uppercase())
}

/// A prefix of an inward code: 9 or 9A.
pub(crate) fn is_inward_prefix(i: &[u8]) -> bool {
    match *i {
        [d] => d.is_ascii_digit(),
        [d, x] => d.is_ascii_digit() && x.is_ascii_uppercase(),
        _ => false,
    }
}

/// Canonical postcode from a compact upper-case string, if it is one.
pub(crate) fn canonical_postcode(compact: &str) -> Option<String> {
    terrace_core::Postcode::parse(compact)
        .ok()
        .map(|p| p.as_str().to_string())
}

/// Title-cases an upper- or mixed-case field: `HIGH STREET` -> `High Street`, `10A` stays `10A`.
pub(crate) fn title_case(s: &str, out: &mut String) {
    let mut prev_alpha = false;
    let mut prev_apostrophe = false;
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_alphabetic() {
            // DAVID'S -> David's; O'BRIEN -> O'Brien.
            let lower_after_apostrophe = prev_apostrophe
                && (c == 'S' || c == 's')
                && chars.get(i + 1).is_none_or(|n| !n.is_alphanumeric());
            if prev_alpha || lower_after_apostrophe {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
            }
            prev_alpha = true;
            prev_apostrophe = false;
        } else {
            out.push(c);
            prev_apostrophe = c == '\'' || c == '\u{2019}';
            prev_alpha = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check_lex(input: &str, expect: &str) {
        let got: Vec<String> = lex(input)
            .into_iter()
            .map(|l| format!("{:?}:{}", l.sep, l.text))
            .collect();
        assert_eq!(got.join(" "), expect, "{input}");
    }

    #[test]
    fn lexing() {
        check_lex(
            "Flat 2, 10 High St.",
            "Start:FLAT Space:2 Comma:10 Space:HIGH Space:ST",
        );
        check_lex(
            "2/10 st david's hill",
            "Start:2 Slash:10 Space:ST Space:DAVIDS Space:HILL",
        );
        check_lex(" 63-65 ", "Start:63 Dash:65");
        check_lex(", ,", "");
    }

    #[track_caller]
    fn check_fold(input: &str, expect: &str) {
        let got: Vec<String> = fold_tokens(&lex(input))
            .into_iter()
            .map(|(w, _)| w)
            .collect();
        assert_eq!(got.join(" "), expect, "{input}");
    }

    #[test]
    fn folding() {
        check_fold("High St", "HIGH STREET");
        check_fold("St Davids Hill", "SAINT DAVIDS HILL");
        check_fold("10 St Davids Hill", "10 SAINT DAVIDS HILL");
        check_fold("10 High St Exeter", "10 HIGH STREET EXETER");
        check_fold("Church Rd, St", "CHURCH ROAD STREET");
        check_fold("Apt 2 Kings Ct", "APARTMENT 2 KINGS COURT");
        check_fold("Rose Gdns", "ROSE GARDENS");
    }

    #[track_caller]
    fn check_designator(input: &str, words: &str, num: Option<(u32, u32, char)>) {
        let d = parse_designator(input);
        assert_eq!(d.words.join(" "), words, "{input}");
        let want = num.map(|(lo, hi, s)| NumSpec {
            lo,
            hi,
            suffix: if s == ' ' { 0 } else { s as u8 },
        });
        assert_eq!(d.num, want, "{input}");
    }

    #[test]
    fn designators() {
        check_designator("FLAT 2", "", Some((2, 2, ' ')));
        check_designator("Flat 2A", "", Some((2, 2, 'A')));
        check_designator("63-65", "", Some((63, 65, ' ')));
        check_designator("ROSE COTTAGE", "ROSE COTTAGE", None);
        check_designator("KINGS COURT 4", "KINGS COURT", Some((4, 4, ' ')));
        check_designator("FLAT A", "", Some((0, 0, 'A')));
        check_designator("GROUND FLOOR FLAT", "GROUND FLOOR FLAT", None);
        check_designator("UNIT 3", "", Some((3, 3, ' ')));
        check_designator("FLAT 1/B", "", Some((1, 1, 'B')));
        check_designator("Flat 3/A", "", Some((3, 3, 'A')));
    }

    #[test]
    fn abbreviation_table_is_sorted() {
        assert!(ABBREVIATIONS.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[track_caller]
    fn check_title(input: &str, expect: &str) {
        let mut s = String::new();
        title_case(input, &mut s);
        assert_eq!(s, expect);
    }

    #[test]
    fn title_casing() {
        check_title("HIGH STREET", "High Street");
        check_title("10A", "10A");
        check_title("ST DAVID'S HILL", "St David's Hill");
        check_title("O'BRIEN HOUSE", "O'Brien House");
        check_title("63-65", "63-65");
        check_title("STOKE-ON-TRENT", "Stoke-On-Trent");
    }
}
