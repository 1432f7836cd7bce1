//! Behaviour tests on a small hand-built register, accuracy on a generated one, and an ignored
//! timing run on 1,000,000 generated addresses.

mod synth;

use std::sync::OnceLock;
use std::time::Instant;

use synth::uprn::*;

use crate::noise::{self, SplitMix64};
use crate::{AddressEntry, AddressIndex, Candidate, ResolveQuery, is_confident};

fn small() -> &'static AddressIndex {
    static INDEX: OnceLock<AddressIndex> = OnceLock::new();
    INDEX.get_or_init(|| AddressIndex::build(synth::small_register()))
}

fn text(q: &str) -> ResolveQuery {
    ResolveQuery {
        address: Some(q.to_string()),
        ..Default::default()
    }
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

// ---------------------------------------------------------------- single line

#[track_caller]
fn check_line(saon: &str, paon: &str, street: &str, town: &str, pc: &str, expect: &str) {
    let o = |v: &str| (!v.is_empty()).then(|| v.to_string());
    let e = AddressEntry {
        saon: o(saon),
        paon: o(paon),
        street: o(street),
        town: o(town),
        postcode: o(pc),
        ..Default::default()
    };
    assert_eq!(e.single_line(), expect);
}

#[test]
fn single_line() {
    check_line(
        "FLAT 2",
        "10",
        "HIGH STREET",
        "EXETER",
        "EX1 1AA",
        "Flat 2, 10 High Street, Exeter, EX1 1AA",
    );
    check_line(
        "",
        "ROSE COTTAGE",
        "MILL LANE",
        "EXETER",
        "",
        "Rose Cottage, Mill Lane, Exeter",
    );
    check_line(
        "2",
        "KINGS COURT",
        "QUEEN STREET",
        "",
        "ex4 3aa",
        "2 Kings Court, Queen Street, EX4 3AA",
    );
    check_line("", "63-65", "HIGH STREET", "", "", "63-65 High Street");
    check_line("", "10A", "", "EXETER", "", "10A, Exeter");
    check_line("", "", "", "", "", "");
}

// ---------------------------------------------------------------- lookups

#[test]
fn lookups() {
    let idx = small();
    assert_eq!(idx.len(), synth::small_register().len());
    assert!(!idx.is_empty());
    assert_eq!(
        idx.by_uprn(FLAT_10 + 2).and_then(|e| e.saon.as_deref()),
        Some("FLAT 2")
    );
    assert_eq!(idx.by_uprn(NO_TEXT).map(|e| e.uprn), Some(NO_TEXT));
    assert!(idx.by_uprn(-1).is_none());
    for i in 0..idx.len() as u32 {
        assert_eq!(
            idx.by_uprn(idx.entry(i).uprn).map(|e| e.uprn),
            Some(idx.entry(i).uprn)
        );
    }
}

#[track_caller]
fn check_postcode(pc: &str, expect: &[i64]) {
    let got: Vec<i64> = small()
        .by_postcode(pc)
        .into_iter()
        .map(|i| small().entry(i).uprn)
        .collect();
    assert_eq!(got, expect, "{pc}");
}

#[test]
fn by_postcode_natural_order() {
    check_postcode("EX1 1AA", &[1001, 1002, 1003, 1004, 1005]);
    let flats: Vec<i64> = (1..=6).map(|f| FLAT_10 + f).collect();
    let mut expect = vec![1006, 1007, 1008, 1009, BUILDING_10];
    expect.extend(flats);
    expect.extend([1012, 1021]);
    check_postcode("EX1 1AB", &expect);
    check_postcode(
        "EX4 3AA",
        &[
            KINGS_COURT,
            KINGS_APT + 1,
            KINGS_APT + 2,
            KINGS_APT + 3,
            KINGS_APT + 4,
        ],
    );
    check_postcode("ex11ab", &expect);
    check_postcode("ZZ9 9ZZ", &[]);
    // The address without text is listed at its postcode but never suggested.
    assert!(
        small()
            .by_postcode("EX17 4AA")
            .iter()
            .any(|&i| small().entry(i).uprn == NO_TEXT)
    );
}

// ---------------------------------------------------------------- autocomplete

enum Ac<'a> {
    /// The first suggestion's text.
    First(&'a str),
    /// These texts, in order, at the top.
    Top(&'a [&'a str]),
    /// Every suggestion contains this text.
    All(&'a str),
    /// This many suggestions exactly.
    Count(usize),
    Empty,
}

#[track_caller]
fn check_ac(q: &str, max: usize, expect: Ac) {
    let got = small().autocomplete(q, max);
    let texts: Vec<&str> = got.iter().map(|s| s.text.as_str()).collect();
    assert!(got.len() <= max, "{q}: {texts:?}");
    for s in &got {
        assert!((0.0..=1.0).contains(&s.score), "{q}: score {}", s.score);
        assert_eq!(small().entry(s.entry).single_line(), s.text);
        assert_ne!(small().entry(s.entry).uprn, NO_TEXT);
    }
    let mut dedup = texts.clone();
    dedup.sort_unstable();
    dedup.dedup();
    assert_eq!(dedup.len(), texts.len(), "{q}: duplicates in {texts:?}");
    for w in got.windows(2) {
        assert!(w[0].score >= w[1].score, "{q}: not ranked {texts:?}");
    }
    match expect {
        Ac::First(t) => assert_eq!(texts.first().copied(), Some(t), "{q}: {texts:?}"),
        Ac::Top(ts) => assert_eq!(&texts[..ts.len().min(texts.len())], ts, "{q}: {texts:?}"),
        Ac::All(t) => {
            assert!(!texts.is_empty(), "{q}");
            assert!(texts.iter().all(|x| x.contains(t)), "{q}: {texts:?}");
        }
        Ac::Count(n) => assert_eq!(texts.len(), n, "{q}: {texts:?}"),
        Ac::Empty => assert!(texts.is_empty(), "{q}: {texts:?}"),
    }
}

#[test]
fn autocomplete_words() {
    check_ac(
        "10 high street exeter",
        5,
        Ac::First("10 High Street, Exeter, EX1 1AB"),
    );
    check_ac(
        "10 HIGH ST, EXETER",
        5,
        Ac::First("10 High Street, Exeter, EX1 1AB"),
    );
    check_ac(
        "10 high st exe",
        5,
        Ac::First("10 High Street, Exeter, EX1 1AB"),
    );
    check_ac(
        "10 high stre",
        2,
        Ac::Top(&[
            "10 High Street, Exeter, EX1 1AB",
            "10 High Street, Crediton, EX17 2AA",
        ]),
    );
    check_ac(
        "rose cot",
        5,
        Ac::First("Rose Cottage, Mill Lane, Heavitree, Exeter, EX2 4AB"),
    );
    check_ac(
        "rose",
        5,
        Ac::First("Rose Cottage, Mill Lane, Heavitree, Exeter, EX2 4AB"),
    );
    check_ac(
        "ivy h",
        5,
        Ac::First("Ivy House, Mill Lane, Heavitree, Exeter, EX2 4AB"),
    );
    check_ac(
        "kings co",
        5,
        Ac::First("Kings Court, Queen Street, Exeter, EX4 3AA"),
    );
    check_ac(
        "apartment 3 kings",
        5,
        Ac::First("Apartment 3, Kings Court, Queen Street, Exeter, EX4 3AA"),
    );
    check_ac(
        "3 st davids hill",
        5,
        Ac::First("3 St Davids Hill, Exeter, EX4 4AA"),
    );
    check_ac(
        "3 saint davids",
        5,
        Ac::First("3 St Davids Hill, Exeter, EX4 4AA"),
    );
    check_ac(
        "flat 2 10 high st exeter",
        5,
        Ac::First("Flat 2, 10 High Street, Exeter, EX1 1AB"),
    );
    check_ac(
        "2/10 high st",
        5,
        Ac::First("Flat 2, 10 High Street, Exeter, EX1 1AB"),
    );
    check_ac("station rd cred", 3, Ac::All("Station Road, Crediton"));
    check_ac(
        "church road",
        10,
        Ac::Top(&[
            "2 Church Road, Exeter, EX2 5AA",
            "4 Church Road, Exeter, EX2 5AA",
            "6 Church Road, Exeter, EX2 5AA",
        ]),
    );
    check_ac(
        "2 church ro",
        5,
        Ac::First("2 Church Road, Exeter, EX2 5AA"),
    );
    // The house number decides among the street's houses; a number being typed is a prefix.
    check_ac(
        "12 high street exeter",
        5,
        Ac::First("12 High Street, Exeter, EX1 1AB"),
    );
    check_ac(
        "high street crediton 1",
        3,
        Ac::First("1 High Street, Crediton, EX17 2AA"),
    );
}

#[test]
fn autocomplete_typos() {
    check_ac(
        "10 hihg street exeter",
        5,
        Ac::First("10 High Street, Exeter, EX1 1AB"),
    );
    check_ac(
        "10 high steet exeter",
        5,
        Ac::First("10 High Street, Exeter, EX1 1AB"),
    );
    check_ac(
        "10 high street exter",
        5,
        Ac::First("10 High Street, Exeter, EX1 1AB"),
    );
    check_ac(
        "rose cottgae",
        5,
        Ac::First("Rose Cottage, Mill Lane, Heavitree, Exeter, EX2 4AB"),
    );
    check_ac("3 stat", 5, Ac::First("3 Station Road, Crediton, EX17 3AA"));
    check_ac(
        "2 station road crediotn",
        5,
        Ac::First("2 Station Road, Crediton, EX17 3AA"),
    );
    check_ac(
        "2 staton r",
        5,
        Ac::First("2 Station Road, Crediton, EX17 3AA"),
    );
    check_ac("heavitre", 5, Ac::All("Heavitree"));
}

#[test]
fn autocomplete_postcodes() {
    let at_1aa = [
        "1 High Street, Exeter, EX1 1AA",
        "2 High Street, Exeter, EX1 1AA",
        "3 High Street, Exeter, EX1 1AA",
    ];
    check_ac("EX1 1AA", 3, Ac::Top(&at_1aa));
    check_ac("ex11aa", 3, Ac::Top(&at_1aa));
    check_ac("ex1 1aa", 3, Ac::Top(&at_1aa));
    check_ac("ex1 1", 50, Ac::All("EX1 1A"));
    check_ac("ex1 1", 50, Ac::Count(19));
    check_ac("ex11", 5, Ac::All("EX1 1A"));
    check_ac("EX17", 50, Ac::All("EX17"));
    check_ac(
        "ex4 3",
        10,
        Ac::First("Kings Court, Queen Street, Exeter, EX4 3AA"),
    );
    check_ac("zz9 9zz", 10, Ac::Empty);
    // A postcode after the street narrows to that postcode.
    check_ac("high street ex17", 3, Ac::All("Crediton"));
}

#[test]
fn autocomplete_limits() {
    check_ac("", 10, Ac::Empty);
    check_ac("   ", 10, Ac::Empty);
    check_ac(" , / ", 10, Ac::Empty);
    check_ac("high street", 0, Ac::Empty);
    check_ac("high street", 3, Ac::Count(3));
    check_ac("high street", 7, Ac::Count(7));
    // Two register records with the same text are suggested once.
    check_ac("1 orchard close", 10, Ac::Count(1));
    check_ac("qqqqqq zzzzzz", 10, Ac::Empty);
}

// ---------------------------------------------------------------- resolve

#[derive(Clone, Copy)]
enum Res {
    /// Top candidate, confident.
    Sure(i64),
    /// Top candidate, whether or not confident.
    Top(i64),
    /// Top candidate, not confident.
    Unsure(i64),
    /// No confident answer and this UPRN is not on top.
    NotTop(i64),
    Empty,
}

#[track_caller]
fn check_res(q: ResolveQuery, expect: Res) -> Vec<Candidate> {
    let got = small().resolve(&q, 5);
    let shown: Vec<String> = got
        .iter()
        .map(|c| format!("{}:{:.3}", c.uprn, c.score))
        .collect();
    assert!(got.len() <= 5);
    for c in &got {
        assert!((0.0..=1.0).contains(&c.score), "{q:?}: {shown:?}");
        assert_eq!(small().entry(c.entry).uprn, c.uprn);
    }
    for w in got.windows(2) {
        assert!(w[0].score >= w[1].score, "{q:?}: {shown:?}");
    }
    let mut uprns: Vec<i64> = got.iter().map(|c| c.uprn).collect();
    uprns.sort_unstable();
    uprns.dedup();
    assert_eq!(uprns.len(), got.len(), "{q:?}: duplicate UPRNs {shown:?}");
    let top = got.first().map(|c| c.uprn);
    let sure = is_confident(&got);
    match expect {
        Res::Sure(u) => assert!(
            top == Some(u) && sure,
            "{q:?}: want confident {u}, got {shown:?}"
        ),
        Res::Top(u) => assert_eq!(top, Some(u), "{q:?}: {shown:?}"),
        Res::Unsure(u) => assert!(
            top == Some(u) && !sure,
            "{q:?}: want unsure {u}, got {shown:?}"
        ),
        Res::NotTop(u) => assert!(top != Some(u) && !sure, "{q:?}: {shown:?}"),
        Res::Empty => assert!(got.is_empty(), "{q:?}: {shown:?}"),
    }
    got
}

#[track_caller]
fn check_text(q: &str, expect: Res) -> Vec<Candidate> {
    check_res(text(q), expect)
}

#[test]
fn resolve_free_text() {
    check_text("10 High Street, Exeter, EX1 1AB", Res::Sure(BUILDING_10));
    check_text("10 high st exeter", Res::Sure(BUILDING_10));
    check_text("7 High Street, Exeter", Res::Sure(HIGH_EX + 7));
    check_text("7 High Street, Crediton", Res::Sure(HIGH_CRED + 7));
    check_text("7 High Street EX17 2AA", Res::Sure(HIGH_CRED + 7));
    check_text("Rose Cottage, Mill Lane, Exeter", Res::Sure(ROSE_COTTAGE));
    check_text("Rose Cottage, Exeter", Res::Sure(ROSE_COTTAGE));
    check_text("ivy house ex2 4ab", Res::Sure(IVY_HOUSE));
    check_text("3 St Davids Hill, Exeter", Res::Sure(ST_DAVIDS + 3));
    check_text(
        "3 St. David's Hill, Exeter EX4 4AA",
        Res::Sure(ST_DAVIDS + 3),
    );
    check_text("3 Saint Davids Hill", Res::Sure(ST_DAVIDS + 3));
    check_text("4 Church Rd Exeter", Res::Sure(CHURCH_RD + 4));
    check_text("EX4 4AA, 5 St Davids Hill", Res::Sure(ST_DAVIDS + 5));
    check_text("Exeter, 5 St Davids Hill", Res::Sure(ST_DAVIDS + 5));
    check_text(
        "2 Station Road, Crediton, Devon, UK",
        Res::Sure(STATION_RD_CRED + 2),
    );
    // Vague queries are not confident.
    check_text("High Street, Exeter", Res::NotTop(BUILDING_10 + 1000));
    check_text("EX1 1AB", Res::NotTop(-1));
    check_text("10 High Street", Res::NotTop(-1));
}

#[test]
fn resolve_typos() {
    check_text("10 Hihg Street, Exeter", Res::Sure(BUILDING_10));
    check_text("10 High Stret, Exter", Res::Sure(BUILDING_10));
    check_text("Rose Cotage, Mill Lane", Res::Sure(ROSE_COTTAGE));
    check_text("2 Staton Road, Crediton", Res::Sure(STATION_RD_CRED + 2));
    check_text("4 Church Raod Exeter", Res::Sure(CHURCH_RD + 4));
}

#[test]
fn resolve_numbers_must_agree() {
    check_text("12 High St, Exeter", Res::Sure(HIGH_EX + 12));
    check_text("21 High St, Exeter", Res::Sure(HIGH_EX + 21));
    // No 13 or 31: nothing confident, and never a house with another number on top.
    let got = check_text("13 High St, Exeter", Res::NotTop(HIGH_EX + 31));
    assert!(got.first().is_none_or(|c| c.score < 0.6), "{got:?}");
    // 12 is at EX1 1AB: the address is found on top, but the postcode written (EX1 1AA, where
    // there is no 12) contradicts it, so it is not confident (issue 45).
    let got = check_text("12 High St, Exeter, EX1 1AA", Res::Top(HIGH_EX + 12));
    assert!(got[0].score > 0.8);
    assert!(!is_confident(&got), "{got:?}");
    assert_eq!(
        got[0].evidence.and_then(|e| e.conflict),
        Some(crate::Conflict::Postcode)
    );
    // A range answers for either end, below an exact number.
    let range = check_text("63 High Street, Exeter", Res::Top(RANGE_63_65));
    let exact = check_text("12 High Street, Exeter", Res::Top(HIGH_EX + 12));
    assert!(range[0].score < exact[0].score, "{range:?} {exact:?}");
    check_text("65 High St Exeter", Res::Top(RANGE_63_65));
    check_text("63-65 High St Exeter", Res::Sure(RANGE_63_65));
    let got = check_text("7 Mill Lane, Exeter", Res::Sure(MILL + 7));
    assert_eq!(got.get(1).map(|c| c.uprn), Some(MILL_7_9), "{got:?}");
    check_text("9 Mill Lane, Exeter", Res::Top(MILL_7_9));
}

#[test]
fn resolve_flats_and_buildings() {
    for q in [
        "Flat 2, 10 High Street, Exeter",
        "Flat 2 10 High St Exeter EX1 1AB",
        "2/10 High Street, Exeter",
        "Apartment 2 10 High Street Exeter",
        "Apt 2, 10 High St, Exeter",
        "2 , 10 High St, Exeter",
        "flat 2 10 high st exeter ex1 1ab",
    ] {
        check_text(q, Res::Sure(FLAT_10 + 2));
    }
    // The building itself over its flats, and flats never mistaken for each other.
    let got = check_text("10 High Street, Exeter, EX1 1AB", Res::Sure(BUILDING_10));
    assert!(got[1..].iter().all(|c| c.score < got[0].score - 0.05));
    check_text("Flat 9, 10 High Street, Exeter", Res::NotTop(FLAT_10 + 9));
    check_text(
        "Apartment 3, Kings Court, Queen Street, Exeter",
        Res::Sure(KINGS_APT + 3),
    );
    check_text("Flat 3 Kings Court Exeter", Res::Sure(KINGS_APT + 3));
    check_text("3 Kings Court, Exeter", Res::Sure(KINGS_APT + 3));
    check_text("Kings Court, Queen Street, Exeter", Res::Sure(KINGS_COURT));
    check_text("Kings Ct, Queen St", Res::Sure(KINGS_COURT));
}

#[test]
fn resolve_wrong_or_missing_postcode() {
    check_text("10 High Street, Exeter, EX17 2AA", Res::Top(BUILDING_10));
    check_text("10 High Street, Exeter, EX4 4AA", Res::Top(BUILDING_10));
    check_text("3 High Street, Crediton, EX1 1AA", Res::Top(HIGH_CRED + 3));
    check_text(
        "Rose Cottage, Mill Lane, Exeter, EX1 1AA",
        Res::Top(ROSE_COTTAGE),
    );
    check_text("10 High Street Crediton", Res::Sure(HIGH_CRED + 10));
    check_text(
        "Flat 2, 10 High Street, Exeter, ZZ9 9ZZ",
        Res::Top(FLAT_10 + 2),
    );
}

#[test]
fn resolve_structured() {
    let q = |saon: &str, paon: &str, street: &str, town: &str, pc: &str| {
        let o = |v: &str| (!v.is_empty()).then(|| v.to_string());
        ResolveQuery {
            saon: o(saon),
            paon: o(paon),
            street: o(street),
            town: o(town),
            postcode: o(pc),
            ..Default::default()
        }
    };
    check_res(
        q("Flat 3", "10", "High St", "Exeter", ""),
        Res::Sure(FLAT_10 + 3),
    );
    check_res(
        q("3", "10", "High Street", "", "EX1 1AB"),
        Res::Sure(FLAT_10 + 3),
    );
    check_res(
        q("", "10", "High Street", "", "EX17 2AA"),
        Res::Sure(HIGH_CRED + 10),
    );
    check_res(
        q("", "10", "High Street", "", "ex172aa"),
        Res::Sure(HIGH_CRED + 10),
    );
    check_res(
        q("", "ROSE COTTAGE", "", "EXETER", ""),
        Res::Sure(ROSE_COTTAGE),
    );
    check_res(
        q(
            "APARTMENT 2",
            "KINGS COURT",
            "QUEEN STREET",
            "EXETER",
            "EX4 3AA",
        ),
        Res::Sure(KINGS_APT + 2),
    );
    check_res(
        q("", "5", "ST DAVIDS HILL", "EXETER", "EX4 4AA"),
        Res::Sure(ST_DAVIDS + 5),
    );
    // Free text and fields together.
    let both = ResolveQuery {
        address: s("Flat 4, 10 High Street"),
        town: s("Exeter"),
        ..Default::default()
    };
    check_res(both, Res::Sure(FLAT_10 + 4));
    check_res(
        ResolveQuery {
            postcode: s("EX2 5AA"),
            paon: s("6"),
            ..Default::default()
        },
        Res::Sure(CHURCH_RD + 6),
    );
}

#[test]
fn resolve_limits() {
    check_text("", Res::Empty);
    check_text("   ", Res::Empty);
    check_text(",,", Res::Empty);
    check_res(ResolveQuery::default(), Res::Empty);
    assert!(
        small()
            .resolve(&text("10 High Street Exeter"), 0)
            .is_empty()
    );
    for max in [1, 2, 3, 7] {
        assert!(small().resolve(&text("High Street"), max).len() <= max);
    }
    assert_eq!(small().resolve(&text("High Street"), 7).len(), 7);
    // Duplicate register records with their own UPRNs tie: returned both, not confident.
    check_text("1 Orchard Close, Crediton", Res::Unsure(TWIN_A));
    let got = small().resolve(&text("1 Orchard Close, Crediton"), 5);
    let top2: Vec<i64> = got.iter().take(2).map(|c| c.uprn).collect();
    assert!(top2.contains(&TWIN_A) && top2.contains(&TWIN_B), "{got:?}");
    assert!(!is_confident(&got));
    // Same UPRN twice in the register: one candidate.
    let mut entries = synth::small_register();
    let mut again = entries[0].clone();
    again.postcode = None;
    entries.push(again.clone());
    let idx = AddressIndex::build(entries);
    let got = idx.resolve(&text(&again.single_line()), 5);
    assert_eq!(
        got.iter().filter(|c| c.uprn == again.uprn).count(),
        1,
        "{got:?}"
    );
    // The address without text is never resolved.
    assert!(
        small()
            .resolve(&text("EX17 4AA"), 10)
            .iter()
            .all(|c| c.uprn != NO_TEXT)
    );
}

#[test]
fn empty_index_and_sharing() {
    fn shared<T: Send + Sync>(_: &T) {}
    let idx = AddressIndex::build(Vec::new());
    shared(&idx);
    assert!(idx.is_empty());
    assert!(idx.autocomplete("10 high st", 10).is_empty());
    assert!(idx.autocomplete("EX1 1AA", 10).is_empty());
    assert!(
        idx.resolve(&text("10 High Street, Exeter, EX1 1AA"), 10)
            .is_empty()
    );
    assert!(idx.by_postcode("EX1 1AA").is_empty());
    assert!(idx.by_uprn(1).is_none());
    // Addresses without any text are kept for lookup only.
    let idx = AddressIndex::build(vec![AddressEntry {
        uprn: 5,
        postcode: s("EX1 1AA"),
        ..Default::default()
    }]);
    assert_eq!(idx.by_uprn(5).map(|e| e.uprn), Some(5));
    assert!(idx.autocomplete("EX1 1AA", 10).is_empty());
    assert!(idx.resolve(&text("EX1 1AA"), 10).is_empty());
}

#[track_caller]
fn check_confident(scores: &[f64], expect: bool) {
    let c: Vec<Candidate> = scores
        .iter()
        .enumerate()
        .map(|(i, &s)| Candidate {
            entry: i as u32,
            uprn: i as i64,
            score: s,
            evidence: None,
        })
        .collect();
    assert_eq!(is_confident(&c), expect, "{scores:?}");
}

#[test]
fn confidence() {
    check_confident(&[], false);
    check_confident(&[0.95], true);
    check_confident(&[0.5], false);
    check_confident(&[0.95, 0.94], false);
    check_confident(&[0.95, 0.7], true);
    check_confident(&[crate::CONFIDENT_SCORE, 0.0], true);
}

// ---------------------------------------------------------------- noise and accuracy

#[test]
fn noise_is_deterministic_and_labelled() {
    let reg = synth::generated_register(2000, 7);
    let a = noise::noisy_queries(&reg, 90, 42);
    let b = noise::noisy_queries(&reg, 90, 42);
    let c = noise::noisy_queries(&reg, 90, 43);
    let show = |v: &[noise::NoisyQuery]| {
        v.iter()
            .map(|q| format!("{:?}{}{}", q.query, q.expected_uprn, q.kind))
            .collect::<Vec<_>>()
    };
    assert_eq!(show(&a), show(&b));
    assert_ne!(show(&a), show(&c));
    assert_eq!(a.len(), 90);
    for kind in noise::KINDS {
        assert!(a.iter().any(|q| q.kind == *kind), "{kind} missing");
    }
    for q in &a {
        assert!(reg.iter().any(|e| e.uprn == q.expected_uprn));
    }
    assert!(noise::noisy_queries(&[], 10, 1).is_empty());
}

#[test]
fn accuracy_on_noisy_queries() {
    let reg = synth::generated_register(6000, 11);
    let idx = AddressIndex::build(reg.clone());
    let queries = noise::noisy_queries(&reg, 1800, 2024);
    let acc = noise::measure(&idx, &queries);
    println!(
        "n={} confident={} correct_top={} correct_confident={} precision={:.4} recall={:.4}",
        acc.n,
        acc.answered_confident,
        acc.correct_top,
        acc.correct_confident,
        acc.precision,
        acc.recall
    );
    for (kind, n, ok) in &acc.by_kind {
        println!("  {kind:<28} {ok:>4}/{n:<4}");
    }
    assert!(acc.n >= 500);
    assert!(acc.precision >= 0.95, "{acc:?}");
    assert!(acc.recall >= 0.85, "{acc:?}");
}

// ---------------------------------------------------------------- timing (not asserted)

/// Resident set size of this process in MB (Linux), 0 elsewhere.
fn rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|kb| kb.parse::<f64>().ok())
            })
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

#[test]
#[ignore = "timing run on 1,000,000 addresses: cargo test --release -p terrace-matcher -- --ignored --nocapture"]
fn timing_one_million() {
    let t = Instant::now();
    let reg = synth::generated_register(1_000_000, 1);
    println!("generated {} entries in {:.2?}", reg.len(), t.elapsed());
    let queries = noise::noisy_queries(&reg[..200_000], 2000, 5);
    let rss_before = rss_mb();
    let t = Instant::now();
    let idx = AddressIndex::build(reg);
    println!(
        "build: {:.2?}; resident memory {rss_before:.0} MB with the entries, {:.0} MB with the index",
        t.elapsed(),
        rss_mb()
    );

    let mut rng = SplitMix64::new(9);
    let mut typed: Vec<String> = Vec::new();
    for q in queries.iter().take(1000) {
        let line = q.query.address.clone().unwrap_or_else(|| {
            idx.by_uprn(q.expected_uprn)
                .map(AddressEntry::single_line)
                .unwrap_or_default()
        });
        let cut = 3 + rng.below(line.len().saturating_sub(3).max(1));
        typed.push(line.chars().take(cut).collect());
    }
    let mut times = Vec::new();
    let t = Instant::now();
    for q in &typed {
        let s = Instant::now();
        std::hint::black_box(idx.autocomplete(q, 10));
        times.push(s.elapsed().as_secs_f64() * 1e3);
    }
    let total = t.elapsed();
    println!(
        "autocomplete: {} queries in {:.2?}: mean {:.3} ms, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        typed.len(),
        total,
        total.as_secs_f64() * 1e3 / typed.len() as f64,
        percentile(&mut times, 0.5),
        percentile(&mut times, 0.99),
        percentile(&mut times, 1.0)
    );

    let mut times = Vec::new();
    let t = Instant::now();
    for q in &queries {
        let s = Instant::now();
        std::hint::black_box(idx.resolve(&q.query, 5));
        times.push(s.elapsed().as_secs_f64() * 1e3);
    }
    let total = t.elapsed();
    println!(
        "resolve: {} queries in {:.2?}: mean {:.3} ms ({:.0}/s on one core), p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        queries.len(),
        total,
        total.as_secs_f64() * 1e3 / queries.len() as f64,
        queries.len() as f64 / total.as_secs_f64(),
        percentile(&mut times, 0.5),
        percentile(&mut times, 0.99),
        percentile(&mut times, 1.0)
    );
    let mut slow: Vec<(f64, String)> = Vec::new();
    for q in &typed {
        let s = Instant::now();
        std::hint::black_box(idx.autocomplete(q, 10));
        slow.push((
            s.elapsed().as_secs_f64() * 1e3,
            format!("autocomplete {q:?}"),
        ));
    }
    for q in &queries {
        let s = Instant::now();
        let got = idx.resolve(&q.query, 5);
        slow.push((
            s.elapsed().as_secs_f64() * 1e3,
            format!("resolve {:?}", q.query),
        ));
        if std::env::var_os("SHOW_MISSES").is_some()
            && got.first().is_none_or(|c| c.uprn != q.expected_uprn)
        {
            println!("miss [{}] {:?}", q.kind, q.query);
            println!(
                "   want {}",
                idx.by_uprn(q.expected_uprn)
                    .map(AddressEntry::single_line)
                    .unwrap_or_default()
            );
            for c in &got {
                println!("   got {:.3} {}", c.score, idx.entry(c.entry).single_line());
            }
        }
    }
    // The slowest queries, each timed again (best of 5) to tell real cost from preemption.
    let n_typed = typed.len();
    let mut order: Vec<usize> = (0..slow.len()).collect();
    order.sort_by(|&a, &b| slow[b].0.total_cmp(&slow[a].0));
    for &i in order.iter().take(8) {
        let best = (0..5)
            .map(|_| {
                let s = Instant::now();
                if i < n_typed {
                    std::hint::black_box(idx.autocomplete(&typed[i], 10));
                } else {
                    std::hint::black_box(idx.resolve(&queries[i - n_typed].query, 5));
                }
                s.elapsed().as_secs_f64() * 1e3
            })
            .fold(f64::MAX, f64::min);
        println!(
            "slow {:.3} ms (best of 5: {best:.3} ms) {}",
            slow[i].0, slow[i].1
        );
    }
    let acc = noise::measure(&idx, &queries);
    println!(
        "accuracy at 1M: precision {:.4} recall {:.4} ({} queries)",
        acc.precision, acc.recall, acc.n
    );
    for (kind, n, ok) in &acc.by_kind {
        println!("  {kind:<28} {ok:>4}/{n:<4}");
    }
}

#[test]
#[ignore = "profiling aid: perf record -D 5000 on this test"]
fn profile_queries() {
    let idx = AddressIndex::build(synth::generated_register(1_000_000, 1));
    let qs: Vec<String> = std::env::var("PROFILE_QUERIES")
        .unwrap_or_else(|_| "12 S|Greenacres, Gr|2, 8 W|flat 1 26 s".to_string())
        .split('|')
        .map(str::to_string)
        .collect();
    let t = Instant::now();
    for _ in 0..2000 {
        for q in &qs {
            std::hint::black_box(idx.autocomplete(q, 10));
        }
    }
    println!(
        "{:.3} ms per query",
        t.elapsed().as_secs_f64() * 1e3 / (2000 * qs.len()) as f64
    );
}

/// A word the register knows on a few addresses only (`Colombus`, written on two flats of a block
/// the register otherwise spells `Columbus`) still reaches its one-edit neighbour when the first
/// look finds no confident answer; the flats spelled as asked still win.
#[test]
fn resolve_spelling_variant_of_a_known_word() {
    let entry = |uprn: i64, paon: &str| AddressEntry {
        uprn,
        paon: s(paon),
        street: s("THURSBY WALK"),
        town: s("EXETER"),
        postcode: s("EX4 8FN"),
        ..Default::default()
    };
    let mut register: Vec<AddressEntry> = (1..=12)
        .filter(|n| ![5, 7].contains(n))
        .map(|n| entry(100 + n, &format!("{n} COLUMBUS HOUSE")))
        .collect();
    register.push(entry(105, "5 COLOMBUS HOUSE"));
    register.push(entry(107, "7 COLOMBUS HOUSE"));
    register.extend((1..=12).map(|n| entry(200 + n, &format!("{n} RALEIGH HOUSE"))));
    let index = AddressIndex::build(register);
    for (q, want) in [
        ("4 Colombus House, Thursby Walk", 104),
        ("5 Colombus House, Thursby Walk", 105),
        ("9 Columbus House, Thursby Walk", 109),
        ("4 Raleigh House, Thursby Walk", 204),
    ] {
        let got = index.resolve(&text(q), 5);
        assert!(
            got.first().is_some_and(|c| c.uprn == want) && is_confident(&got),
            "{q}: want confident {want}, got {got:?}"
        );
    }
}

/// A lodgement that adds a name to an address (`The Annexe, 25 Prospect Park`) scores below
/// `CONFIDENT_SCORE`; at the address' own postcode, with its number, well ahead of the next, it
/// is confident, while without the postcode, or at the wrong number, it is not.
#[test]
fn resolve_agreeing_postcode_and_numbers_are_confident_lower() {
    let entry = |uprn: i64, paon: &str, street: &str, pc: &str| AddressEntry {
        uprn,
        paon: s(paon),
        street: s(street),
        postcode: s(pc),
        ..Default::default()
    };
    let mut register: Vec<AddressEntry> = (1..=40)
        .map(|n| entry(100 + n, &n.to_string(), "PROSPECT PARK", "EX4 6JH"))
        .collect();
    register.extend((1..=40).map(|n| entry(200 + n, &n.to_string(), "PARK VIEW", "EX4 1JA")));
    register.extend((1..=40).map(|n| entry(300 + n, &n.to_string(), "ANNEXE ROAD", "EX2 4PL")));
    let index = AddressIndex::build(register);
    let ask = |q: &str, pc: Option<&str>| ask_in(&index, q, pc);
    let got = ask("The Annexe, 25 Prospect Park", Some("EX4 6JH"));
    let top = &got[0];
    assert_eq!(top.uprn, 125, "{got:?}");
    assert!(
        (crate::CONFIDENT_SCORE_AGREEING..crate::CONFIDENT_SCORE).contains(&top.score),
        "the case the rule is for: {got:?}"
    );
    assert!(is_confident(&got), "{got:?}");
    // Without the postcode, the same text is not confident.
    let got = ask("The Annexe, 25 Prospect Park", None);
    assert!(!is_confident(&got), "{got:?}");
    // At the postcode but at a number the register does not have there.
    let got = ask("The Annexe, 45 Prospect Park", Some("EX4 6JH"));
    assert!(!is_confident(&got), "{got:?}");
}

/// A street the register writes as two words (`Ash Leigh`) asked as one (`Ashleigh`), and one the
/// query splits (`Corn Mill`) where the register also knows the joined spelling: the halves count
/// as said, so the address' own coverage is whole and the answer confident.
#[test]
fn resolve_joined_words_cover_both_halves() {
    let entry = |uprn: i64, paon: String, street: &str| AddressEntry {
        uprn,
        paon: Some(paon),
        street: s(street),
        locality: s("ALPHINGTON"),
        ..Default::default()
    };
    let mut register: Vec<AddressEntry> = (1..=50)
        .map(|n| entry(100 + n, n.to_string(), "ASH LEIGH"))
        .collect();
    register.extend((1..=50).map(|n| entry(200 + n, n.to_string(), "CORN MILL CRESCENT")));
    register.push(entry(300, "1".into(), "CORNMILL LANE"));
    register.extend((1..=50).map(|n| entry(400 + n, n.to_string(), "CHURCH ROAD")));
    let index = AddressIndex::build(register);
    for (q, want) in [
        ("44 Ashleigh, Alphington", 144),
        ("44 Ash Leigh, Alphington", 144),
        ("48 Corn Mill Crescent", 248),
        ("8 Cornmill Crescent, Alphington", 208),
    ] {
        let got = index.resolve(&text(q), 5);
        assert!(
            got.first()
                .is_some_and(|c| c.uprn == want && c.score >= 0.9)
                && is_confident(&got),
            "{q}: want confident {want} at 0.9 or more, got {got:?}"
        );
    }
}

/// A letter flat is written three ways: `Flat C, 6 Colleton Crescent`, `6C Colleton Crescent` and
/// `Flat 6/C`; each finds the others (and not flat 6A or 6B).
#[test]
fn resolve_letter_flats_written_as_suffixes() {
    let entry = |uprn: i64, saon: Option<&str>, paon: &str, street: &str| AddressEntry {
        uprn,
        saon: saon.map(str::to_string),
        paon: s(paon),
        street: s(street),
        town: s("EXETER"),
        ..Default::default()
    };
    let mut register: Vec<AddressEntry> = ["A", "B", "C", "D"]
        .iter()
        .enumerate()
        .map(|(i, l)| entry(100 + i as i64, None, &format!("6{l}"), "COLLETON CRESCENT"))
        .collect();
    register.extend((1..=20).map(|n| entry(200 + n, None, &n.to_string(), "COLLETON CRESCENT")));
    register.extend(["A", "B", "C"].iter().enumerate().map(|(i, l)| {
        entry(
            300 + i as i64,
            Some(&format!("FLAT {l}")),
            "2",
            "HEAVITREE PARK",
        )
    }));
    register.extend((1..=20).map(|n| entry(400 + n, None, &n.to_string(), "HEAVITREE PARK")));
    register.extend((1..=3).map(|n| {
        entry(
            500 + n,
            Some(&format!("FLAT 1/{}", (b'A' + n as u8 - 1) as char)),
            "ST SIDWELLS",
            "KING WILLIAM STREET",
        )
    }));
    let index = AddressIndex::build(register);
    for (q, want) in [
        ("Flat C, 6, Colleton Crescent, Exeter", 102),
        ("Flat D, 6 Colleton Crescent, Exeter", 103),
        ("2B Heavitree Park, Exeter", 301),
        ("Flat 1b, St. Sidwells, King William Street", 502),
        ("Flat 1/C St Sidwells, King William Street", 503),
    ] {
        let got = index.resolve(&text(q), 5);
        assert!(
            got.first().is_some_and(|c| c.uprn == want) && is_confident(&got),
            "{q}: want confident {want}, got {got:?}"
        );
    }
}

/// A street the register knows in the singular and the plural (`Sand Grove`, `Sands Grove`):
/// a number only the other one has is still found; the exact spelling still wins where both
/// have the number. A flat number that repeats its house number (`11C 11 Sivell Place`) is the
/// flat (`11C`), not any letter of 11.
#[test]
fn resolve_plural_variant_and_repeated_house_number() {
    let entry = |uprn: i64, paon: String, street: &str| AddressEntry {
        uprn,
        paon: Some(paon),
        street: s(street),
        town: s("EXETER"),
        ..Default::default()
    };
    let mut register: Vec<AddressEntry> = (1..=4)
        .map(|n| entry(100 + n, n.to_string(), "SAND GROVE"))
        .collect();
    register.extend((1..=9).map(|n| entry(200 + n, n.to_string(), "SANDS GROVE")));
    register.extend(
        ["A", "B", "C"]
            .iter()
            .enumerate()
            .map(|(i, l)| entry(300 + i as i64, format!("11{l}"), "SIVELL PLACE")),
    );
    let index = AddressIndex::build(register);
    for (q, want) in [
        ("7 Sand Grove, Exeter", 207),
        ("3 Sand Grove, Exeter", 103),
        ("3 Sands Grove, Exeter", 203),
        ("11C 11 Sivell Place, Exeter", 302),
    ] {
        let got = index.resolve(&text(q), 5);
        assert!(
            got.first().is_some_and(|c| c.uprn == want),
            "{q}: want {want} on top, got {got:?}"
        );
    }
}

/// `Flat 2, 67 Magdalen Street` where the register knows number 67 only by its positional flats
/// and a flat 2 only in an unnumbered block of the same street at another postcode: the building
/// the query numbers, at its postcode, wins over a flat number in a building it does not name.
#[test]
fn resolve_house_number_outweighs_a_flat_number_elsewhere() {
    let entry = |uprn: i64, saon: &str, paon: &str, pc: &str| AddressEntry {
        uprn,
        saon: s(saon),
        paon: s(paon),
        street: s("MAGDALEN STREET"),
        town: s("EXETER"),
        postcode: s(pc),
        ..Default::default()
    };
    let mut register = vec![
        entry(1, "GROUND FLOOR FLAT", "67", "EX2 4HN"),
        entry(2, "TOP FLOOR FLAT", "67", "EX2 4HN"),
    ];
    register.extend((1..=8).map(|n| {
        entry(
            10 + n,
            &format!("FLAT {n}"),
            "MAGDALEN BRIDGE COURT",
            "EX2 4HS",
        )
    }));
    register.extend((60..=80).filter(|&n| n != 67).map(|n| AddressEntry {
        uprn: 100 + n,
        paon: Some(n.to_string()),
        street: s("MAGDALEN STREET"),
        town: s("EXETER"),
        ..Default::default()
    }));
    let index = AddressIndex::build(register);
    let got = index.resolve(&text("Flat 2, 67 Magdalen Street, Exeter, EX2 4HN"), 5);
    assert!(
        got.first().is_some_and(|c| c.uprn == 1 || c.uprn == 2),
        "want a flat of 67 on top, got {got:?}"
    );
}

/// A flat of house 92 (`Flat 1, 92 Fore Street`) where the register writes only `92A` and no
/// flat: the lettered house is the answer, not a flat 1 in a building the query does not name;
/// a letter flat (`Flat C, 92`) does not take another letter (`92A`) that way.
#[test]
fn resolve_flat_of_a_house_written_as_a_lettered_number() {
    let entry = |uprn: i64, saon: Option<String>, paon: String| AddressEntry {
        uprn,
        saon,
        paon: Some(paon),
        street: s("FORE STREET"),
        town: s("EXETER"),
        ..Default::default()
    };
    let mut register: Vec<AddressEntry> = (80..=100)
        .filter(|&n| n != 92)
        .map(|n| entry(n, None, n.to_string()))
        .collect();
    register.push(entry(920, None, "92A".into()));
    register
        .extend((1..=6).map(|n| entry(500 + n, Some(format!("FLAT {n}")), "SOUTHLANDS".into())));
    let index = AddressIndex::build(register);
    let got = index.resolve(&text("Flat 1, 92 Fore Street, Exeter"), 5);
    assert!(
        got.first().is_some_and(|c| c.uprn == 920),
        "want 92A on top, got {got:?}"
    );
    let lettered = |q: &str| {
        index
            .resolve(&text(q), 5)
            .iter()
            .find(|c| c.uprn == 920)
            .map_or(0.0, |c| c.score)
    };
    assert!(
        lettered("Flat C, 92 Fore Street, Exeter") < lettered("Flat 1, 92 Fore Street, Exeter"),
        "a letter flat names its letter"
    );
}

/// An address of a register built by hand (an empty SAON or street is none).
fn street_entry(uprn: i64, saon: &str, paon: &str, street: &str, pc: &str) -> AddressEntry {
    let some = |v: &str| (!v.is_empty()).then(|| v.to_string());
    AddressEntry {
        uprn,
        saon: some(saon),
        paon: s(paon),
        street: some(street),
        postcode: s(pc),
        ..Default::default()
    }
}

/// At the query's own postcode, numbers that agree exactly (from 0.65) or in another form (`Flat
/// 5, Priory View` for `5 Priory View`) are confident below `CONFIDENT_SCORE`; without the
/// postcode, with a flat number the address does not have, or with no number on either side
/// (`Annexe, The Headland`), they are not.
#[test]
fn resolve_agreeing_postcode_with_numbers_in_form_is_confident() {
    let entry = street_entry;
    let mut register: Vec<AddressEntry> = (1..=20)
        .map(|n| entry(100 + n, "", &n.to_string(), "PRIORY VIEW", "EX4 8EA"))
        .collect();
    register.extend((1..=20).map(|n| entry(200 + n, "", &n.to_string(), "BEACON LANE", "EX4 8GF")));
    register
        .extend((1..=20).map(|n| entry(300 + n, "", &n.to_string(), "WOODWATER LANE", "EX2 5JY")));
    register.push(entry(400, "", "THE HEADLAND", "WOODWATER LANE", "EX2 5NS"));
    register.push(entry(401, "FLAT 1", "7", "RICHMOND ROAD", "EX4 4JA"));
    register.push(entry(402, "BASEMENT FLAT", "7", "RICHMOND ROAD", "EX4 4JA"));
    let index = AddressIndex::build(register);
    let ask = |q: &str, pc: Option<&str>| ask_in(&index, q, pc);
    let below = |got: &[Candidate]| {
        (crate::CONFIDENT_SCORE_AGREEING..crate::CONFIDENT_SCORE).contains(&got[0].score)
    };
    // Numbers that agree exactly: from a lower score than before, and also when the query names
    // another street type (the postcode and the number say which street it is).
    for q in [
        "5 Priory View, Heavitree Exeter",
        "5 Priory View, Beacon Close",
    ] {
        let got = ask(q, Some("EX4 8EA"));
        assert_eq!(got[0].uprn, 105, "{got:?}");
        assert!(got[0].score < 0.70, "the case the rule is for: {got:?}");
        assert!(is_confident(&got), "{q}: {got:?}");
        assert!(!is_confident(&ask(q, None)), "{q}");
    }
    let got = ask("Flat 5, Priory View, Beacon", Some("EX4 8EA"));
    assert_eq!(got[0].uprn, 105, "{got:?}");
    assert!(below(&got), "the case the rule is for: {got:?}");
    assert!(is_confident(&got), "{got:?}");
    let got = ask("Flat 5, Priory View, Beacon", None);
    assert!(!is_confident(&got), "{got:?}");

    // No number on either side: an annexe or a caretaker's flat of a named house may be another
    // dwelling, so the postcode alone does not make it confident.
    let got = ask("Annexe, The Headland, Woodwater", Some("EX2 5NS"));
    assert_eq!(got[0].uprn, 400, "{got:?}");
    assert!(got[0].score < crate::CONFIDENT_SCORE, "{got:?}");
    assert!(!is_confident(&got), "{got:?}");

    // Flat 2 of a house whose register has flat 1 and an unnumbered flat: a guess, not confident.
    let got = ask("Flat 2, 7 Richmond Road", Some("EX4 4JA"));
    assert!(!is_confident(&got), "{got:?}");
}

/// A number is written right before the name it numbers: `5 Birdall Terrace, Ferndale Road` at a
/// postcode holding both streets is 5 Birdall Terrace (a terrace off the road), not 5 Ferndale
/// Road (and `8 Ferndale Road, Birdall Terrace` is 8 Ferndale Road). A candidate that writes the
/// query's word after the number keeps its score; the near ones carrying the number with another
/// word after it lose a little.
#[test]
fn resolve_prefers_the_name_written_after_the_number() {
    // Houses 1 to 12 of a terrace and of the road it is off, at one postcode.
    let register = [(100, "BIRDALL TERRACE"), (200, "FERNDALE ROAD")]
        .into_iter()
        .flat_map(|(base, street)| {
            (1..=12).map(move |n| street_entry(base + n, "", &n.to_string(), street, "EX2 9DS"))
        })
        .collect();
    let index = AddressIndex::build(register);
    let ask = |q: &str, pc: &str| {
        index.resolve(
            &ResolveQuery {
                address: s(q),
                postcode: s(pc),
                ..Default::default()
            },
            5,
        )
    };
    let got = ask("5 Birdall Terrace, Ferndale Road", "EX2 9DS");
    assert_eq!(got[0].uprn, 105, "{got:?}");
    assert!(is_confident(&got), "{got:?}");
    let got = ask("8 Ferndale Road, Birdall Terrace", "EX2 9DS");
    assert_eq!(got[0].uprn, 208, "{got:?}");
}

/// Resolves free text against `index`, with the postcode when given (the top five).
fn ask_in(index: &AddressIndex, q: &str, pc: Option<&str>) -> Vec<Candidate> {
    index.resolve(
        &ResolveQuery {
            address: s(q),
            postcode: pc.map(str::to_string),
            ..Default::default()
        },
        5,
    )
}

/// The case a rule of evidence is for: the top candidate is `uprn`, scores below
/// `CONFIDENT_SCORE` and is confident all the same. Returns its evidence.
fn confident_by_evidence(got: &[Candidate], uprn: i64) -> crate::Evidence {
    assert_eq!(got[0].uprn, uprn, "{got:?}");
    assert!(
        got[0].score < crate::CONFIDENT_SCORE,
        "the case the rule is for: {got:?}"
    );
    assert!(is_confident(got), "{got:?}");
    got[0].evidence.expect("the top candidate's evidence")
}

/// A flat query that adds the house number of a building the register names only by its name
/// (`Flat 4 Canon House, 32 Bedford Street` for `Flat 4, Canon House`) agrees on the flat: at the
/// query's own postcode and far ahead of the second, it is confident below `CONFIDENT_SCORE`;
/// without the postcode, or when the flat number is not the address' own, it is not.
#[test]
fn resolve_flat_with_a_house_number_the_register_does_not_write() {
    let mut register: Vec<AddressEntry> = (1..=8)
        .map(|n| street_entry(100 + n, &format!("FLAT {n}"), "CANON HOUSE", "", "EX1 1GL"))
        .collect();
    register.extend(
        (20..=40).map(|n| street_entry(200 + n, "", &n.to_string(), "BEDFORD STREET", "EX1 1LL")),
    );
    let index = AddressIndex::build(register);
    let ask = |q: &str, pc: Option<&str>| ask_in(&index, q, pc);
    let ev = confident_by_evidence(
        &ask("Flat 4 Canon House, 32, Bedford Street", Some("EX1 1GL")),
        104,
    );
    assert!(ev.flat_agrees_house_added, "{ev:?}");
    let got = ask("Flat 4 Canon House, 32, Bedford Street", None);
    assert!(!is_confident(&got), "{got:?}");
    // Flat 9 is no flat of the register: the building agrees, the flat does not.
    let got = ask("Flat 9 Canon House, 32, Bedford Street", Some("EX1 1GL"));
    assert!(!is_confident(&got), "{got:?}");
}

/// A house number that names no flat, answered with the only address of its street at the
/// query's postcode carrying that number (`46 Oxford Road` for `Flat A, 46 Oxford Road`; a `46
/// Kingsgate` at the same postcode is on another street), is confident below `CONFIDENT_SCORE`;
/// when another flat of the house is at the postcode (`48` has flats A and B), or without the
/// postcode, it is a guess and is not.
#[test]
fn resolve_house_number_for_the_only_flat_of_the_house_at_the_postcode() {
    let mut register: Vec<AddressEntry> = (30..=60)
        .filter(|n| ![46, 48].contains(n))
        .map(|n| street_entry(100 + n, "", &n.to_string(), "OXFORD ROAD", "EX4 6QX"))
        .collect();
    register.push(street_entry(246, "FLAT A", "46", "OXFORD ROAD", "EX4 6QX"));
    register.push(street_entry(248, "FLAT A", "48", "OXFORD ROAD", "EX4 6QX"));
    register.push(street_entry(249, "FLAT B", "48", "OXFORD ROAD", "EX4 6QX"));
    register.push(street_entry(250, "", "46", "KINGSGATE", "EX4 6QX"));
    register.extend(
        (1..=20).map(|n| street_entry(300 + n, "", &n.to_string(), "OXFORD STREET", "EX2 9AG")),
    );
    let index = AddressIndex::build(register);
    let ask = |q: &str, pc: Option<&str>| ask_in(&index, q, pc);
    let ev = confident_by_evidence(&ask("46, Oxford Road", Some("EX4 6QX")), 246);
    assert!(ev.only_number_at_postcode, "{ev:?}");
    assert!(!is_confident(&ask("46, Oxford Road", None)));
    let got = ask("48, Oxford Road", Some("EX4 6QX"));
    assert!([248, 249].contains(&got[0].uprn), "{got:?}");
    assert!(!is_confident(&got), "{got:?}");
    // A flat the register does not have (`Flat C, 46`) names a flat: no rule for it.
    let got = ask("Flat C, 46 Oxford Road", Some("EX4 6QX"));
    assert!(!is_confident(&got), "{got:?}");
}

/// Issue 45: the register lacks the asked address but holds a sibling of it; the sibling may be
/// the top candidate, never a confident one. Returns the top candidate's conflict.
fn sibling_conflict(
    register: Vec<AddressEntry>,
    q: &str,
    pc: Option<&str>,
    sibling: i64,
) -> Option<crate::Conflict> {
    let index = AddressIndex::build(register);
    let got = ask_in(&index, q, pc);
    assert_eq!(got[0].uprn, sibling, "{got:?}");
    assert!(!is_confident(&got), "{got:?}");
    got[0].evidence.and_then(|ev| ev.conflict)
}

/// A few neighbours so that the sibling is not alone at its postcode.
fn with_neighbours(mut v: Vec<AddressEntry>, street: &str, pc: &str) -> Vec<AddressEntry> {
    v.extend((30..36).map(|n| street_entry(900 + n, "", &n.to_string(), street, pc)));
    v
}

/// A street the query writes that the address' street contradicts: a name word the query's
/// street lacks (`ASH`), or a street the address does not write at all (`WHIPTON`).
#[test]
fn resolve_conflicting_street_name_is_not_confident() {
    let reg = with_neighbours(
        vec![
            street_entry(1, "", "7", "ASH FARM CLOSE", "EX1 1AA"),
            street_entry(2, "", "100", "BARTON ROAD", "EX2 9DD"),
        ],
        "ASH FARM CLOSE",
        "EX1 1AA",
    );
    let c = sibling_conflict(reg.clone(), "7, Farm Close", None, 1);
    assert_eq!(c, Some(crate::Conflict::StreetName));
    let c = sibling_conflict(reg, "100, Whipton Barton Road", None, 2);
    assert_eq!(c, Some(crate::Conflict::StreetName));
}

/// Session 29, on the sibling split of seed 7: a street type inside the address' street's name
/// is a name word (`VICTORIA PARK ROAD`: `PARK`), and `MEADOW`, `HEATH` and the like are street
/// types, so `43, Victoria Road, Topsham` is not `43 Victoria Park Road` and `6 Rews Meadow` is
/// not `6 Rews Park Drive`.
#[test]
fn a_street_type_inside_a_street_name_is_a_name_word() {
    let reg = with_neighbours(
        vec![
            street_entry(1, "", "43", "VICTORIA PARK ROAD", "EX2 4PB"),
            street_entry(2, "", "6", "REWS PARK DRIVE", "EX1 3QN"),
        ],
        "VICTORIA PARK ROAD",
        "EX2 4PB",
    );
    let c = sibling_conflict(reg.clone(), "43, Victoria Road, Topsham", None, 1);
    assert_eq!(c, Some(crate::Conflict::StreetName));
    let c = sibling_conflict(reg, "6 Rews Meadow", None, 2);
    assert_eq!(c, Some(crate::Conflict::StreetName));
    // The street's own type is still its type: `VICTORIA PARK` for `VICTORIA PARK ROAD` and
    // `REWS PARK DRIVE` written in full agree.
    let e = street_entry(1, "", "43", "VICTORIA PARK ROAD", "EX2 4PB");
    assert_eq!(
        crate::conflict::text_conflict("43 Victoria Park Road", &e),
        None
    );
    let e = street_entry(2, "", "6", "REWS PARK DRIVE", "EX1 3QN");
    assert_eq!(
        crate::conflict::text_conflict("6, Rews Park Drive, Exeter", &e),
        None
    );
}

/// What is not a street conflict: a compound written apart, a plural, `SAINT` for `ST`, a
/// street kept as the town, and a street the query adds where the address names a building.
#[test]
fn street_names_that_agree_are_no_conflict() {
    let e = |paon: &str, street: &str, town: Option<&str>| AddressEntry {
        town: town.map(str::to_string),
        ..street_entry(1, "", paon, street, "EX1 1AA")
    };
    let none = |q: &str, a: &AddressEntry| {
        assert_eq!(crate::conflict::text_conflict(q, a), None, "{q}");
    };
    none(
        "34, Cornmill Crescent",
        &e("34", "CORN MILL CRESCENT", None),
    );
    none("10 Corn Mill Crescent", &e("10", "CORNMILL CRESCENT", None));
    none("7 Sand Grove", &e("7", "SANDS GROVE", None));
    none("5 Saint James Road", &e("5", "ST JAMES ROAD", None));
    none(
        "2, Kingsgate, Pennsylvania Road",
        &e("2", "KINGSGATE", Some("PENNSYLVANIA ROAD")),
    );
    none(
        "25 Richmond Court, St. Davids Hill",
        &e("25", "RICHMOND COURT", Some("EXETER")),
    );
}

#[test]
fn resolve_conflicting_building_name_is_not_confident() {
    let reg = with_neighbours(
        vec![
            street_entry(1, "", "2 ROWAN MEWS", "MILL ROAD", "EX1 1AA"),
            street_entry(2, "FLAT 18", "ASH HOUSE", "MILL ROAD", "EX1 1AA"),
        ],
        "MILL ROAD",
        "EX1 1AA",
    );
    let c = sibling_conflict(
        reg.clone(),
        "Flat 2 Rowan Court, Mill Road",
        Some("EX1 1AA"),
        1,
    );
    assert_eq!(c, Some(crate::Conflict::BuildingName));
    let c = sibling_conflict(reg, "Flat 18 Oak House, Mill Road", Some("EX1 1AA"), 2);
    assert_eq!(c, Some(crate::Conflict::BuildingName));
}

#[test]
fn resolve_conflicting_floor_is_not_confident() {
    let reg = with_neighbours(
        vec![street_entry(
            1,
            "SECOND FLOOR FLAT",
            "9A",
            "HIGH STREET",
            "EX1 1AA",
        )],
        "HIGH STREET",
        "EX1 1AA",
    );
    let c = sibling_conflict(reg, "First Floor Flat, 9a High Street", Some("EX1 1AA"), 1);
    assert_eq!(c, Some(crate::Conflict::Floor));
}

#[test]
fn resolve_conflicting_street_qualifier_is_not_confident() {
    let reg = with_neighbours(
        vec![
            street_entry(1, "", "24", "WEST PARK ROAD", "EX1 1AA"),
            street_entry(2, "", "8", "UPPER HILL RISE", "EX1 1AA"),
        ],
        "WEST PARK ROAD",
        "EX1 1AA",
    );
    let c = sibling_conflict(reg.clone(), "24 East Park Road", Some("EX1 1AA"), 1);
    assert_eq!(c, Some(crate::Conflict::StreetQualifier));
    let c = sibling_conflict(reg, "8 Hill Rise", Some("EX1 1AA"), 2);
    assert_eq!(c, Some(crate::Conflict::StreetQualifier));
}

#[test]
fn resolve_number_on_another_thing_is_not_confident() {
    let reg = with_neighbours(
        vec![
            street_entry(1, "", "8", "VALE WALK", "EX1 1AA"),
            street_entry(2, "FLAT 8", "REGENT HOUSE", "KINGS STREET", "EX1 1AB"),
            street_entry(3, "FLAT 9", "REGENT HOUSE", "KINGS STREET", "EX1 1AB"),
        ],
        "VALE WALK",
        "EX1 1AA",
    );
    let c = sibling_conflict(reg.clone(), "8 Cedar House, Vale Walk", Some("EX1 1AA"), 1);
    assert_eq!(c, Some(crate::Conflict::NumberPlacement));
    let c = sibling_conflict(reg, "8 Kings Street", Some("EX1 1AB"), 2);
    assert_eq!(c, Some(crate::Conflict::NumberPlacement));
    // The other way round: a plain house number answered by a building numbered so, and a flat
    // of a named building answered by the house of that number.
    let reg = with_neighbours(
        vec![
            street_entry(1, "", "3 SWAN COURT", "OLD MILL CLOSE", "EX2 4DD"),
            street_entry(2, "", "4", "FAIRPARK ROAD", "EX2 4HL"),
        ],
        "OLD MILL CLOSE",
        "EX2 4DD",
    );
    let c = sibling_conflict(reg.clone(), "3, Old Mill Close", Some("EX2 4DD"), 1);
    assert_eq!(c, Some(crate::Conflict::NumberPlacement));
    // The same building kept as a house number on a street named for it, the real street as
    // the locality (as registers built from certificate address lines keep it).
    let lines = with_neighbours(
        vec![AddressEntry {
            locality: Some("OLD MILL CLOSE".into()),
            ..street_entry(1, "", "3", "SWAN COURT", "EX2 4DD")
        }],
        "OLD MILL CLOSE",
        "EX2 4DD",
    );
    let c = sibling_conflict(lines, "3, Old Mill Close", Some("EX2 4DD"), 1);
    assert_eq!(c, Some(crate::Conflict::NumberPlacement));
    let c = sibling_conflict(
        reg,
        "Flat 4 Ernsborough Court, Fairpark Road",
        Some("EX2 4HL"),
        2,
    );
    assert_eq!(c, Some(crate::Conflict::NumberPlacement));
}

#[test]
fn resolve_other_postcode_is_not_confident() {
    let reg = with_neighbours(
        vec![street_entry(1, "", "12", "CEDAR ROAD", "EX1 1AA")],
        "CEDAR ROAD",
        "EX1 1AA",
    );
    // The next postcode of the sector: the score stays high, confident without the rule.
    let c = sibling_conflict(reg.clone(), "12 Cedar Road", Some("EX1 1AB"), 1);
    assert_eq!(c, Some(crate::Conflict::Postcode));
    // The same address at its own postcode stays confident.
    let index = AddressIndex::build(reg);
    assert!(is_confident(&ask_in(
        &index,
        "12 Cedar Road",
        Some("EX1 1AA")
    )));
}

/// The conflict rules leave agreeing descriptions alone.
#[test]
fn resolve_agreeing_descriptions_are_no_conflict() {
    let reg = with_neighbours(
        vec![
            street_entry(1, "FLAT 2", "ROWAN COURT", "MILL ROAD", "EX1 1AA"),
            street_entry(2, "FIRST FLOOR FLAT", "9A", "MILL ROAD", "EX1 1AA"),
            street_entry(3, "", "24", "EAST PARK ROAD", "EX1 1AA"),
        ],
        "MILL ROAD",
        "EX1 1AA",
    );
    let index = AddressIndex::build(reg);
    for (q, uprn) in [
        ("Flat 2, Rowan Court, Mill Road", 1),
        ("1st Floor Flat 9A Mill Road", 2),
        ("24, East Park Road", 3),
    ] {
        let got = ask_in(&index, q, Some("EX1 1AA"));
        assert_eq!(got[0].uprn, uprn, "{got:?}");
        assert_eq!(got[0].evidence.and_then(|e| e.conflict), None, "{q}");
    }
}
