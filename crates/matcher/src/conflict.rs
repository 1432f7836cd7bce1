//! Conflict evidence (issue 45): words of the query that contradict the top candidate, not only
//! words it lacks. A conflict caps confidence whatever the score ([`crate::is_confident`]): the
//! answer is still returned and ranked as before, but never as confident.
//!
//! The rules read the query's text and the candidate's fields as words (upper case, apostrophes
//! and full stops dropped, commas kept as separators), so they are independent of the scoring:
//! - [`Conflict::BuildingName`]: both name a building (`ROWAN COURT`, `OAK HOUSE`: one or more
//!   words before a building noun not followed by a street type) and no name agrees;
//! - [`Conflict::Floor`]: both describe the flat's floor and the descriptions differ (`FIRST
//!   FLOOR` / `SECOND FLOOR`; `TOP` conflicts only with ground, lower ground and basement);
//! - [`Conflict::StreetQualifier`]: a word qualified on one side (`EAST PARK`, `UPPER HILL`) is
//!   qualified otherwise, or not at all, on the other (`WEST PARK`, `HILL`);
//! - [`Conflict::NumberPlacement`]: the query's number belongs to a named building (`8 CEDAR
//!   HOUSE, VALE WALK`) and the candidate is that number on the street, naming no building; or
//!   the query's plain house number (`8 KINGS STREET`) is the candidate's flat number in a block
//!   named without a number (`FLAT 8, REGENT HOUSE, KINGS STREET`);
//! - [`Conflict::Postcode`] (set in `matcher.rs`): the query gives a postcode and the
//!   candidate's own postcode is another;
//! - [`Conflict::StreetName`]: the query writes a street (name words before a street type:
//!   `FARM CLOSE`, `WHIPTON BARTON ROAD`) and either the address' street, a typed street, is
//!   written nowhere in the address (its town included) for any street of the query (`100
//!   BARTON ROAD` for `WHIPTON BARTON ROAD`), or a street of the query sharing a name word with
//!   the address' street lacks one of its name words (`ASH FARM CLOSE` for `FARM CLOSE`). Words
//!   agree spelled as compounds (`CORN MILL`, `CORNMILL`), in the plural, `SAINT` for `ST`, with
//!   two letters swapped or one slip (five letters, or four with the first kept); qualifiers,
//!   street types and single letters are left to the other rules, but a street type before the
//!   address' street's last word names it (`PARK` in `VICTORIA PARK ROAD`, so `VICTORIA ROAD`
//!   lacks it).

use crate::AddressEntry;

/// Why the top candidate contradicts the query ([`crate::Evidence::conflict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Conflict {
    BuildingName,
    Floor,
    StreetQualifier,
    NumberPlacement,
    Postcode,
    StreetName,
}

impl Conflict {
    /// Its bit in [`crate::ablate`]'s mask.
    pub fn bit(self) -> u32 {
        1 << self as u32
    }

    /// Parses a name as serialised (`building_name`, ...).
    pub fn parse(s: &str) -> Option<Conflict> {
        Some(match s {
            "building_name" => Conflict::BuildingName,
            "floor" => Conflict::Floor,
            "street_qualifier" => Conflict::StreetQualifier,
            "number_placement" => Conflict::NumberPlacement,
            "postcode" => Conflict::Postcode,
            "street_name" => Conflict::StreetName,
            _ => return None,
        })
    }
}

/// Nouns that name a building (or a block) when written after its name.
const BUILDING_NOUNS: &[&str] = &[
    "HOUSE",
    "COURT",
    "MEWS",
    "LODGE",
    "HALL",
    "MANSION",
    "MANSIONS",
    "BUILDINGS",
    "CHAMBERS",
    "APARTMENTS",
    "TOWER",
    "COTTAGE",
    "COTTAGES",
    "VILLAS",
    "WHARF",
    "POINT",
];

/// Street types: a building noun followed by one is part of a street name (`COURT ROAD`).
const STREET_TYPES: &[&str] = &[
    "ROAD", "STREET", "LANE", "AVENUE", "CLOSE", "DRIVE", "WAY", "HILL", "CRESCENT", "PLACE",
    "TERRACE", "GARDENS", "SQUARE", "WALK", "RISE", "GROVE", "PARK", "ROW", "VIEW", "GREEN", "RD",
    "ST", "LN", "AVE", "CL", "DR", "MEADOW", "MEADOWS", "HEATH", "VALE", "CHASE", "CROFT",
    "ORCHARD", "FIELDS", "PARADE", "QUAY",
];

/// Words that qualify a street or place name (`EAST PARK ROAD`, `UPPER HILL RISE`).
const QUALIFIERS: &[&str] = &[
    "EAST", "WEST", "NORTH", "SOUTH", "UPPER", "LOWER", "GREAT", "LITTLE",
];

/// Words that name a flat, not a place.
const FLAT_WORDS: &[&str] = &[
    "FLAT",
    "FLATS",
    "APARTMENT",
    "APT",
    "UNIT",
    "MAISONETTE",
    "STUDIO",
    "ROOM",
    "SUITE",
    "BEDSIT",
];

/// Words that, after `UPPER`/`LOWER`, make it a floor descriptor rather than a qualifier.
const FLOOR_AFTER: &[&str] = &["GROUND", "FLOOR", "FLAT", "MAISONETTE", "FLOORS"];

fn has(list: &[&str], w: &str) -> bool {
    list.contains(&w)
}

fn is_number(w: &str) -> bool {
    w.bytes().any(|b| b.is_ascii_digit())
}

/// Comma-separated segments of words, upper case, `'` and `.` dropped.
fn segments(text: &str) -> Vec<Vec<String>> {
    text.split([',', ';', '\n'])
        .map(|seg| {
            seg.chars()
                .filter(|c| *c != '\'' && *c != '.' && *c != '’')
                .collect::<String>()
                .to_uppercase()
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect::<Vec<String>>()
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// The words of a text as one list (segments joined).
fn words(segs: &[Vec<String>]) -> Vec<&str> {
    segs.iter().flatten().map(String::as_str).collect()
}

/// The building names written in the text (`ROWAN COURT`), each with the number written right
/// before it, if any (`8 CEDAR HOUSE`).
fn buildings(segs: &[Vec<String>]) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for seg in segs {
        for (j, w) in seg.iter().enumerate() {
            if !has(BUILDING_NOUNS, w) || j == 0 {
                continue;
            }
            if seg.get(j + 1).is_some_and(|n| has(STREET_TYPES, n)) {
                continue;
            }
            let mut k = j;
            while k > 0 {
                let p = seg[k - 1].as_str();
                if is_number(p) || has(FLAT_WORDS, p) || p == "THE" && k - 1 == 0 {
                    break;
                }
                k -= 1;
            }
            // A single letter before a noun is a flat letter (`FLAT B HOUSE` is not a name).
            let name: Vec<&str> = seg[k..j]
                .iter()
                .map(String::as_str)
                .filter(|w| *w != "THE")
                .collect();
            if name.is_empty() || name.len() == 1 && name[0].len() == 1 {
                continue;
            }
            let before = (k > 0 && is_number(&seg[k - 1])).then(|| seg[k - 1].clone());
            out.push((format!("{} {}", name.join(" "), w), before));
        }
    }
    out
}

fn edit_distance_at_most_one(a: &str, b: &str) -> bool {
    let (a, b) = if a.len() <= b.len() {
        (a.as_bytes(), b.as_bytes())
    } else {
        (b.as_bytes(), a.as_bytes())
    };
    if b.len() - a.len() > 1 {
        return false;
    }
    let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    if a.len() == b.len() {
        a[p..].iter().zip(&b[p..]).filter(|(x, y)| x != y).count() <= 1
    } else {
        a[p..] == b[p + 1..]
    }
}

/// Do two building names agree (the same words, spacing aside, or one typing slip apart)?
fn same_building(a: &str, b: &str) -> bool {
    let (ca, cb) = (a.replace(' ', ""), b.replace(' ', ""));
    ca == cb || ca.len() >= 8 && edit_distance_at_most_one(&ca, &cb)
}

/// The floor a text describes: 0 basement, 1 lower ground, 2 ground, 3.. first and up, 100 top.
fn floor(ws: &[&str]) -> Option<u32> {
    for (i, w) in ws.iter().enumerate() {
        let next = ws.get(i + 1).copied().unwrap_or("");
        let prev = if i > 0 { ws[i - 1] } else { "" };
        let floorish = matches!(next, "FLOOR" | "FLAT" | "MAISONETTE" | "FLOORS");
        let n = match *w {
            "BASEMENT" => Some(0),
            "GROUND" if prev == "LOWER" => Some(1),
            // `GROUND AND FIRST FLOOR`: more than one floor, no single description.
            "GROUND" | "FIRST" | "1ST" if next == "AND" => return None,
            "GROUND" if floorish => Some(2),
            "FIRST" | "1ST" if floorish => Some(3),
            "SECOND" | "2ND" if floorish => Some(4),
            "THIRD" | "3RD" if floorish => Some(5),
            "FOURTH" | "4TH" if floorish => Some(6),
            "FIFTH" | "5TH" if floorish => Some(7),
            "TOP" if floorish => Some(100),
            _ => None,
        };
        if n.is_some() {
            return n;
        }
    }
    None
}

fn floors_conflict(a: u32, b: u32) -> bool {
    if a == b {
        return false;
    }
    // `TOP` is any floor above the ground.
    if a == 100 || b == 100 {
        return a.min(b) <= 2;
    }
    true
}

/// For each qualified word on side `a` (`EAST PARK`: `PARK` qualified by `EAST`), the qualifiers
/// of the same word on side `b`, when `b` writes that word; a difference is a conflict.
fn qualifiers_conflict(a: &[&str], b: &[&str]) -> bool {
    let quals_before = |ws: &[&str], i: usize| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut k = i;
        while k > 0 && has(QUALIFIERS, ws[k - 1]) {
            out.push(ws[k - 1].to_string());
            k -= 1;
        }
        out.sort();
        out
    };
    for (i, w) in a.iter().enumerate() {
        if !has(QUALIFIERS, w) {
            continue;
        }
        let Some(next) = a.get(i + 1) else { continue };
        if has(FLOOR_AFTER, next) || has(QUALIFIERS, next) {
            continue;
        }
        let after = a.get(i + 2).copied().unwrap_or("");
        if (has(STREET_TYPES, next) || has(BUILDING_NOUNS, next)) && !has(STREET_TYPES, after)
            || is_number(next)
        {
            // The qualifier is the name itself (`NORTH ROAD`, `WEST HOUSE`); in `UPPER HILL
            // RISE` it qualifies `HILL`.
            continue;
        }
        let qa = quals_before(a, i + 1);
        let positions: Vec<usize> = (0..b.len()).filter(|&j| b[j] == *next).collect();
        if positions.is_empty() {
            continue;
        }
        if positions.iter().all(|&j| quals_before(b, j) != qa) {
            return true;
        }
    }
    false
}

fn entry_segments(e: &AddressEntry) -> Vec<Vec<String>> {
    let mut segs = Vec::new();
    if let Some(v) = crate::nonempty(&e.saon) {
        segs.extend(segments(v));
    }
    let paon = crate::nonempty(&e.paon).map(segments).unwrap_or_default();
    let street = crate::nonempty(&e.street).map(segments).unwrap_or_default();
    match (paon.as_slice(), street.as_slice()) {
        // A house number alone before the street is written with it, as a person writes it
        // (`3` and `SWAN COURT` read `3 SWAN COURT`): a register that keeps a building's name
        // as the street still shows whose number it is.
        ([p], [first, rest @ ..]) if p.len() == 1 && is_number(&p[0]) => {
            segs.push(p.iter().chain(first).cloned().collect());
            segs.extend(rest.iter().cloned());
        }
        _ => {
            segs.extend(paon);
            segs.extend(street);
        }
    }
    if let Some(v) = crate::nonempty(&e.locality) {
        segs.extend(segments(v));
    }
    segs
}

/// The numbers in a text (`9A`), upper case, postcode halves (`EX4`, `6QX`) left out.
fn numbers(ws: &[&str]) -> Vec<String> {
    let postcode_half = |w: &str| {
        let b = w.as_bytes();
        b[0].is_ascii_alphabetic()
            || b.len() == 3 && b[1].is_ascii_alphabetic() && b[2].is_ascii_alphabetic()
    };
    ws.iter()
        .filter(|w| is_number(w) && !postcode_half(w))
        .map(|w| w.to_string())
        .collect()
}

/// None of the words of a building's name (its noun aside) is among `ws`.
fn named_nowhere(name: &str, ws: &[&str]) -> bool {
    let mut parts = name.split(' ');
    parts.next_back();
    parts.all(|w| !ws.contains(&w))
}

/// The name words of the streets a text writes: the words before each street type back to a
/// number, a flat word or the segment's start (`7, FARM CLOSE`: `FARM`), `THE`, qualifiers and
/// single letters left out. A building noun before the type (`COURT ROAD`) is a name word.
fn street_names(segs: &[Vec<String>]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for seg in segs {
        for (j, w) in seg.iter().enumerate() {
            if j == 0 || !has(STREET_TYPES, w) {
                continue;
            }
            let mut k = j;
            while k > 0 {
                let p = seg[k - 1].as_str();
                if is_number(p) || has(FLAT_WORDS, p) || has(STREET_TYPES, p) {
                    break;
                }
                k -= 1;
            }
            let name: Vec<String> = seg[k..j]
                .iter()
                .filter(|w| w.len() > 1 && *w != "THE" && !has(QUALIFIERS, w))
                .cloned()
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

/// Does `w` appear among `ws` (joined: `joined`), allowing `SAINT` for `ST`, a plural `S`, one
/// typing slip in a word of five letters or more, and a word written inside a compound of the
/// other side (`CORN MILL` and `CORNMILL`)?
fn written(w: &str, ws: &[&str], joined: &str) -> bool {
    fn saint(a: &str) -> &str {
        if a == "SAINT" { "ST" } else { a }
    }
    let plural = |a: &str, b: &str| a.len() == b.len() + 1 && a.ends_with('S') && a.starts_with(b);
    // Two neighbouring letters swapped (`HIHG` for `HIGH`).
    let swapped = |a: &str, b: &str| {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() || a.len() < 3 {
            return false;
        }
        let diff: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
        diff.len() == 2
            && diff[1] == diff[0] + 1
            && a[diff[0]] == b[diff[1]]
            && a[diff[1]] == b[diff[0]]
    };
    // One slip in a word of five letters or more, or of four with the first letter kept (`HILL`
    // and `MILL` stay apart).
    let slip = |a: &str, b: &str| {
        let long = a.len() >= 5 && b.len() >= 5;
        let four = a.len() >= 4 && b.len() >= 4 && a.as_bytes()[0] == b.as_bytes()[0];
        (long || four) && edit_distance_at_most_one(a, b)
    };
    ws.iter().any(|v| {
        saint(v) == saint(w) || plural(v, w) || plural(w, v) || swapped(w, v) || slip(w, v)
    }) || w.len() >= 4 && joined.contains(w)
}

/// The query's street and the address' disagree on a name word (see the module's doc): the
/// address' street is a street (it has a street type) and no street the query writes is
/// written in the address, or a street of the query that shares a name word with the address'
/// street lacks one of that street's name words.
fn street_names_conflict(qs: &[Vec<String>], qw: &[&str], e: &AddressEntry, ew: &[&str]) -> bool {
    let Some(street) = crate::nonempty(&e.street) else {
        return false;
    };
    let q_names = street_names(qs);
    if q_names.is_empty() {
        return false;
    }
    let e_words: Vec<String> = segments(street).into_iter().flatten().collect();
    let e_typed = e_words.iter().any(|w| has(STREET_TYPES, w));
    // A street type before the street's last word is a name word (`VICTORIA PARK ROAD`: `PARK`
    // names it, `ROAD` is its type).
    let last = e_words.len().saturating_sub(1);
    let e_name: Vec<&str> = e_words
        .iter()
        .enumerate()
        .filter(|(i, w)| {
            w.len() > 1
                && *w != "THE"
                && !has(QUALIFIERS, w)
                && (*i < last || !has(STREET_TYPES, w))
                && !is_number(w)
        })
        .map(|(_, w)| w.as_str())
        .collect();
    if e_name.is_empty() {
        return false;
    }
    // The address' words, its town too (a register built from certificate lines may keep the
    // street there: `2, KINGSGATE` on `PENNSYLVANIA ROAD`).
    let town: Vec<String> = crate::nonempty(&e.town)
        .map(|t| segments(t).into_iter().flatten().collect())
        .unwrap_or_default();
    let everywhere: Vec<&str> = ew
        .iter()
        .copied()
        .chain(town.iter().map(String::as_str))
        .collect();
    let e_joined: String = everywhere.concat();
    let q_joined: String = qw.concat();
    let agrees = |n: &Vec<String>| n.iter().all(|w| written(w, &everywhere, &e_joined));
    if e_typed && !q_names.iter().any(agrees) {
        return true;
    }
    q_names.iter().any(|n| {
        let shares = n.iter().any(|w| e_name.contains(&w.as_str()));
        shares && e_name.iter().any(|w| !written(w, qw, &q_joined))
    })
}

/// The conflict between a query's text and an address, if any (see the module's doc).
pub(crate) fn text_conflict(query: &str, e: &AddressEntry) -> Option<Conflict> {
    let qs = segments(query);
    let es = entry_segments(e);
    let qw = words(&qs);
    let ew = words(&es);
    let qb = buildings(&qs);
    let eb = buildings(&es);
    if !qb.is_empty()
        && !eb.is_empty()
        && !qb
            .iter()
            .any(|(a, _)| eb.iter().any(|(b, _)| same_building(a, b)))
    {
        return Some(Conflict::BuildingName);
    }
    if let (Some(a), Some(b)) = (floor(&qw), floor(&ew))
        && floors_conflict(a, b)
    {
        return Some(Conflict::Floor);
    }
    if qualifiers_conflict(&qw, &ew) || qualifiers_conflict(&ew, &qw) {
        return Some(Conflict::StreetQualifier);
    }
    if street_names_conflict(&qs, &qw, e, &ew) {
        return Some(Conflict::StreetName);
    }
    let q_flat = qw.iter().any(|w| has(FLAT_WORDS, w)) || floor(&qw).is_some();
    if !q_flat && eb.is_empty() && crate::nonempty(&e.saon).is_none() {
        // `8 CEDAR HOUSE, VALE WALK` answered by `8 VALE WALK`.
        let paon = crate::nonempty(&e.paon).unwrap_or("");
        // A building whose name words the address writes nowhere (`8 FAIRFIELD MANSIONS` is
        // not in conflict with `8 FAIRFIELD MANSION`, read without a building noun).
        if qb.iter().any(|(name, n)| {
            n.as_deref().is_some_and(|n| n.eq_ignore_ascii_case(paon)) && named_nowhere(name, &ew)
        }) {
            return Some(Conflict::NumberPlacement);
        }
    }
    if q_flat && eb.is_empty() && crate::nonempty(&e.saon).is_none() {
        // `FLAT 4 ERNSBOROUGH COURT, FAIRPARK ROAD` answered by `4 FAIRPARK ROAD`: a flat of a
        // building the address does not name at all, its number the address' house number.
        let paon = crate::nonempty(&e.paon).unwrap_or("");
        if qb.iter().any(|(name, _)| named_nowhere(name, &ew))
            && numbers(&qw).iter().any(|n| n.eq_ignore_ascii_case(paon))
        {
            return Some(Conflict::NumberPlacement);
        }
    }
    if !q_flat && qb.is_empty() {
        // `3 OLD MILL CLOSE` answered by `3 SWAN COURT, OLD MILL CLOSE`: the number is the
        // building's, a building the query does not name.
        let qn = numbers(&qw);
        if eb
            .iter()
            .any(|(name, n)| n.as_ref().is_some_and(|n| qn.contains(n)) && named_nowhere(name, &qw))
        {
            return Some(Conflict::NumberPlacement);
        }
    }
    if !q_flat && qb.is_empty() {
        // `8 KINGS STREET` answered by `FLAT 8, REGENT HOUSE, KINGS STREET`.
        let saon = crate::nonempty(&e.saon).map(segments).unwrap_or_default();
        let paon = crate::nonempty(&e.paon).unwrap_or("");
        let sn = numbers(&words(&saon));
        let qn = numbers(&qw);
        if !paon.is_empty()
            && !paon.bytes().any(|b| b.is_ascii_digit())
            && !eb.is_empty()
            && qn.len() == 1
            && sn.len() == 1
            && qn[0] == sn[0]
        {
            return Some(Conflict::NumberPlacement);
        }
    }
    None
}
