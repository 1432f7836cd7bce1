//! The registered proprietors of company-owned titles (HM Land Registry's CCOD and OCOD) and the
//! companies behind them (Companies House basic company data): by title, by company number and
//! by proprietor name.
//!
//! What the open registers cannot say is said, not guessed: a title that is not in CCOD or OCOD
//! is not found with the reason (private individuals and charities are not published in bulk);
//! a proprietor's company is `null` where its number is not in the loaded Companies House file;
//! the title's parcel is `not_available` until the INSPIRE index polygons are linked; a name
//! look-up is a candidate set, never a portfolio.

use crate::ids::{edit_distance, name_key};
use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use terrace_core::{CursorScope, Unavailable};
use terrace_store::companies::{self, CompanyRow};
use terrace_store::titles::{self, TitleRow};
use terrace_store::{Db, LookupError};

pub use terrace_core::registers::Proprietor;

/// Which bulk register a title is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Register {
    /// UK companies that own property in England and Wales.
    Ccod,
    /// Overseas companies that own property in England and Wales.
    Ocod,
}

/// Charges registered against a company (counts only; no balances are published).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Charges {
    pub total: Option<i32>,
    pub outstanding: Option<i32>,
    pub part_satisfied: Option<i32>,
    pub satisfied: Option<i32>,
}

/// A company's Companies House record.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Company {
    pub company_number: String,
    pub name: String,
    /// `Active`, `Dissolved`, `Liquidation`, `In Administration`, ... as Companies House writes it.
    pub status: Option<String>,
    pub category: Option<String>,
    pub country_of_origin: Option<String>,
    pub incorporation_date: Option<NaiveDate>,
    pub dissolution_date: Option<NaiveDate>,
    /// The registered office address lines (care of, PO box, lines, town, county, country).
    pub registered_address: Vec<String>,
    pub postcode: Option<String>,
    /// Up to four SIC codes with their descriptions (`68209 - Other letting ...`).
    pub sic_codes: Vec<String>,
    pub charges: Charges,
    pub source: String,
}

/// A proprietor with its company record where one is loaded.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ProprietorRecord {
    #[serde(flatten)]
    pub proprietor: Proprietor,
    /// The Companies House record of `company_number`; null when the number is not in the loaded
    /// Companies House file (an overseas registry number, a body that is not a company, or the
    /// file not loaded).
    pub company: Option<Company>,
}

/// A UPRN a title's property address was linked to, and how.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct UprnLink {
    pub uprn: i64,
    /// `address_matcher`: the register's property address and postcode run through the address
    /// matcher (only confident matches are kept).
    pub method: String,
    /// The matcher's score (0 to 1).
    pub score: Option<f64>,
}

/// How many titles the address link covers, so an answer that depends on it says how far.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LinkCoverage {
    pub titles_loaded: i64,
    pub titles_linked_to_uprn: i64,
    /// `titles_linked_to_uprn / titles_loaded` to three decimals, as text; null when no title is
    /// loaded.
    pub linked_share: Option<String>,
    pub note: &'static str,
}

const LINK_NOTE: &str = "Titles are linked to UPRNs by running the register's property address and postcode through the address matcher; titles with several addresses (Multiple Address Indicator Y) are never linked to one UPRN, and a title that does not link has an empty uprns list.";

/// One company-owned title (specification part 4.9, ownership by title).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TitleRecord {
    pub title_number: String,
    pub register: Register,
    /// `Freehold` or `Leasehold`.
    pub tenure: Option<String>,
    pub property_address: Option<String>,
    pub district: Option<String>,
    pub county: Option<String>,
    pub region: Option<String>,
    pub postcode: Option<String>,
    /// True when the title covers several addresses.
    pub multiple_address: Option<bool>,
    /// The price paid in pounds, where the register gives one.
    pub price_paid: Option<i64>,
    pub date_proprietor_added: Option<NaiveDate>,
    /// True when the title has proprietors the bulk file does not show (private individuals or
    /// charities alongside the companies).
    pub additional_proprietor_indicator: Option<bool>,
    pub proprietors: Vec<ProprietorRecord>,
    /// The UPRNs the property address links to (empty when it does not link).
    pub uprns: Vec<UprnLink>,
    /// The title's parcel: not available until the INSPIRE index polygons are loaded and linked.
    pub parcel: Unavailable,
    /// The month of the register file the title was read from (`2025-09`), when its name says.
    pub file_month: Option<String>,
    pub source: String,
}

const PARCEL_REASON: &str = "title-to-parcel links are not built: HM Land Registry's INSPIRE index polygons carry no title number, and the link through the title's UPRN and the parcel containing it is not loaded in this build";

fn company_of(r: CompanyRow) -> Company {
    let registered_address = [
        r.address_care_of,
        r.address_po_box,
        r.address_line_1,
        r.address_line_2,
        r.post_town,
        r.address_county,
        r.address_country,
    ]
    .into_iter()
    .flatten()
    .collect();
    Company {
        company_number: r.company_number,
        name: r.name,
        status: r.status,
        category: r.category,
        country_of_origin: r.country_of_origin,
        incorporation_date: r.incorporation_date,
        dissolution_date: r.dissolution_date,
        registered_address,
        postcode: r.postcode,
        sic_codes: [r.sic_1, r.sic_2, r.sic_3, r.sic_4]
            .into_iter()
            .flatten()
            .collect(),
        charges: Charges {
            total: r.charges_total,
            outstanding: r.charges_outstanding,
            part_satisfied: r.charges_part_satisfied,
            satisfied: r.charges_satisfied,
        },
        source: r.source,
    }
}

/// The companies of these numbers that are loaded, by number.
async fn companies_by_number(
    db: &Db,
    numbers: BTreeSet<String>,
) -> Result<HashMap<String, Company>, LookupError> {
    let numbers: Vec<String> = numbers.into_iter().collect();
    Ok(companies::companies_by_number(db, &numbers)
        .await?
        .into_iter()
        .map(|r| (r.company_number.clone(), company_of(r)))
        .collect())
}

fn proprietors_of(t: &TitleRow) -> Vec<Proprietor> {
    serde_json::from_str(&t.proprietors_json).unwrap_or_default()
}

/// The records of stored titles, with their proprietors' companies read in one query.
async fn records(db: &Db, rows: Vec<TitleRow>) -> Result<Vec<TitleRecord>, LookupError> {
    let parsed: Vec<(TitleRow, Vec<Proprietor>)> = rows
        .into_iter()
        .map(|t| {
            let p = proprietors_of(&t);
            (t, p)
        })
        .collect();
    let numbers: BTreeSet<String> = parsed
        .iter()
        .flat_map(|(_, ps)| ps.iter().filter_map(|p| p.company_number.clone()))
        .collect();
    let known = companies_by_number(db, numbers).await?;
    Ok(parsed
        .into_iter()
        .map(|(t, ps)| {
            let proprietors = ps
                .into_iter()
                .map(|p| ProprietorRecord {
                    company: p
                        .company_number
                        .as_ref()
                        .and_then(|n| known.get(n))
                        .cloned(),
                    proprietor: p,
                })
                .collect();
            let uprns = t
                .uprn
                .map(|uprn| UprnLink {
                    uprn,
                    method: t.match_method.clone().unwrap_or_default(),
                    score: t.match_score,
                })
                .into_iter()
                .collect();
            TitleRecord {
                register: if t.register == "ocod" {
                    Register::Ocod
                } else {
                    Register::Ccod
                },
                title_number: t.title_number,
                tenure: t.tenure,
                property_address: t.property_address,
                district: t.district,
                county: t.county,
                region: t.region,
                postcode: t.postcode,
                multiple_address: t.multiple_address,
                price_paid: t.price_paid,
                date_proprietor_added: t.date_added,
                additional_proprietor_indicator: t.additional_proprietor,
                proprietors,
                uprns,
                parcel: Unavailable::new(PARCEL_REASON),
                file_month: t.file_month,
                source: t.source,
            }
        })
        .collect())
}

/// The company-owned titles linked to any of these UPRNs (by UPRN, then title number), with
/// their proprietors' companies.
pub async fn titles_for_uprns(db: &Db, uprns: &[i64]) -> Result<Vec<TitleRecord>, LookupError> {
    let rows = titles::titles_for_uprns(db, uprns).await?;
    records(db, rows).await
}

/// The address link's coverage over every loaded title.
pub async fn link_coverage(db: &Db) -> Result<LinkCoverage, LookupError> {
    let (loaded, linked) = titles::title_link_counts(db).await?;
    Ok(LinkCoverage {
        titles_loaded: loaded,
        titles_linked_to_uprn: linked,
        linked_share: (loaded > 0).then(|| format!("{:.3}", linked as f64 / loaded as f64)),
        note: LINK_NOTE,
    })
}

/// A title with the address link's coverage.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TitleAnswer {
    #[serde(flatten)]
    pub title: TitleRecord,
    pub uprn_link_coverage: LinkCoverage,
}

/// The registered proprietors of a company-owned title. `title_number` is parsed (upper case).
pub async fn by_title(db: &Db, title_number: &str) -> Result<TitleAnswer, LookupError> {
    let rows = titles::titles_by_number(db, &[title_number.to_string()]).await?;
    let Some(title) = records(db, rows).await?.into_iter().next() else {
        return Err(LookupError::NotFound(format!(
            "title {title_number} in HM Land Registry's company-owned titles (CCOD/OCOD): titles owned by private individuals or charities are not published in bulk, so this is a gap in the open register rather than a failed look-up; the title"
        )));
    };
    Ok(TitleAnswer {
        title,
        uprn_link_coverage: link_coverage(db).await?,
    })
}

/// How many titles a page of a company's titles holds by default, and at most.
pub const PAGE_DEFAULT: i64 = 50;
pub const PAGE_MAX: i64 = 500;

/// A page of the titles a company holds.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CompanyTitles {
    pub company_number: String,
    /// The Companies House record; null when the number is not in the loaded file.
    pub company: Option<Company>,
    /// How many distinct titles name the company in any proprietor slot.
    pub total_titles: i64,
    pub titles: Vec<TitleRecord>,
    /// The title number to pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    pub coverage_note: &'static str,
    pub uprn_link_coverage: LinkCoverage,
}

const COMPANY_NOTE: &str = "Titles in England and Wales that HM Land Registry's CCOD and OCOD files list with this company number, as of each title's file month; titles a company holds jointly with private individuals are listed, those held only in another name are not.";

/// The titles held by a company (by its normalised number), in title number order after
/// `cursor`. Not found when neither a title nor a Companies House record names the number.
pub async fn by_company(
    db: &Db,
    company_number: &str,
    cursor: Option<&str>,
    limit: i64,
    scope: &CursorScope,
) -> Result<CompanyTitles, LookupError> {
    let limit = limit.clamp(1, PAGE_MAX);
    let total = titles::title_count(db, titles::Holder::Company(company_number)).await?;
    let company = companies_by_number(db, BTreeSet::from([company_number.to_string()]))
        .await?
        .remove(company_number);
    if total == 0 && company.is_none() {
        return Err(LookupError::NotFound(format!(
            "company number {company_number} in the loaded CCOD, OCOD and Companies House files; the company"
        )));
    }
    let mut numbers = titles::titles_of(
        db,
        titles::Holder::Company(company_number),
        cursor.unwrap_or(""),
        limit + 1,
    )
    .await?;
    let more = numbers.len() > usize::try_from(limit).unwrap_or(usize::MAX);
    numbers.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    let mut rows = titles::titles_by_number(db, &numbers).await?;
    rows.sort_by(|a, b| a.title_number.cmp(&b.title_number));
    let titles = records(db, rows).await?;
    Ok(CompanyTitles {
        company_number: company_number.to_string(),
        company,
        total_titles: total,
        next_cursor: if more {
            titles
                .last()
                .map(|t| scope.encode(&[t.title_number.as_str()]))
        } else {
            None
        },
        titles,
        coverage_note: COMPANY_NOTE,
        uprn_link_coverage: link_coverage(db).await?,
    })
}

/// How a proprietor look-up matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    /// By company number: exact.
    CompanyNumber,
    /// The normalised name equals the register's.
    ExactName,
    /// One registered name within the typo tolerance.
    NearName,
    /// Several registered names within the typo tolerance: no proprietor is chosen.
    Candidates,
}

/// A registered name close to the one asked for.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Candidate {
    /// The name as normalised for look-up (`ACME HOLDINGS LTD`).
    pub name_key: String,
    /// Edits between the asked name and this one (normalised).
    pub distance: usize,
    pub titles: i64,
}

/// A title in a proprietor's holding.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TitleBrief {
    pub title_number: String,
    pub register: Register,
    pub tenure: Option<String>,
    pub property_address: Option<String>,
    pub district: Option<String>,
    pub price_paid: Option<i64>,
    pub date_proprietor_added: Option<NaiveDate>,
}

/// Titles held in one local authority district (as the register names it).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AreaHeld {
    pub district: String,
    pub titles: i64,
}

/// What the register shows for one proprietor.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ProprietorHolding {
    /// The name as the register writes it (the first slot found).
    pub name: String,
    /// The company numbers the register gives with this proprietor.
    pub company_numbers: Vec<String>,
    /// The Companies House records of those numbers that are loaded.
    pub companies: Vec<Company>,
    /// Distinct titles held: the holding count.
    pub n_distinct_titles: i64,
    /// The titles, in title number order (at most 500; `truncated` says when more are held).
    pub titles: Vec<TitleBrief>,
    pub truncated: bool,
    /// The sum of the listed titles' prices paid where the register gives one, in pounds; null
    /// when none gives one.
    pub total_price_paid: Option<i64>,
    /// How many of the listed titles give a price paid (the sum's denominator).
    pub titles_with_price_paid: i64,
    /// The districts the listed titles lie in, most titles first.
    pub areas_held: Vec<AreaHeld>,
    /// Directors and persons with significant control are not in the loaded files.
    pub directors_and_pscs: Unavailable,
}

/// The answer to `GET /v1/ownership/proprietor`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ProprietorAnswer {
    /// The name or company number asked for.
    pub query: String,
    #[serde(rename = "match")]
    pub match_kind: MatchKind,
    /// The proprietor's holding; null when several names are candidates.
    pub proprietor: Option<ProprietorHolding>,
    /// The registered names within the typo tolerance, closest first (empty for a company
    /// number).
    pub candidates: Vec<Candidate>,
    pub note: &'static str,
}

const NAME_NOTE: &str = "A name look-up is a candidate set, not a portfolio: company names repeat across unrelated bodies and the register spells them as registered. A company number is the exact look-up.";
const NUMBER_NOTE: &str = "Exact look-up by company number over HM Land Registry's CCOD and OCOD files (England and Wales).";

/// Titles listed per proprietor holding at most.
const HOLDING_MAX: usize = 500;
/// Candidate names read per look-up at most.
const CANDIDATES_READ: i64 = 5_000;

/// Whose holding: a company number's, or a name key's.
enum Holder {
    Number(String),
    NameKey(String),
}

async fn holding(db: &Db, name: String, holder: Holder) -> Result<ProprietorHolding, LookupError> {
    let cap = HOLDING_MAX as i64 + 1;
    let (key_titles, n_distinct_titles, numbers): (Vec<String>, i64, Vec<String>) = match &holder {
        Holder::Number(n) => (
            titles::titles_of(db, titles::Holder::Company(n), "", cap).await?,
            titles::title_count(db, titles::Holder::Company(n)).await?,
            vec![n.clone()],
        ),
        Holder::NameKey(k) => {
            let numbers: BTreeSet<String> =
                titles::proprietors_with_name_key(db, k, CANDIDATES_READ)
                    .await?
                    .into_iter()
                    .filter_map(|p| p.company_number)
                    .collect();
            (
                titles::titles_of(db, titles::Holder::NameKey(k), "", cap).await?,
                titles::title_count(db, titles::Holder::NameKey(k)).await?,
                numbers.into_iter().collect(),
            )
        }
    };
    let truncated = key_titles.len() > HOLDING_MAX;
    let wanted: Vec<String> = key_titles.into_iter().take(HOLDING_MAX).collect();
    let mut rows = titles::titles_by_number(db, &wanted).await?;
    rows.sort_by(|a, b| a.title_number.cmp(&b.title_number));
    let mut areas: BTreeMap<String, i64> = BTreeMap::new();
    let (mut total, mut priced) = (0i64, 0i64);
    let briefs: Vec<TitleBrief> = rows
        .into_iter()
        .map(|t| {
            if let Some(d) = &t.district {
                *areas.entry(d.clone()).or_default() += 1;
            }
            if let Some(p) = t.price_paid {
                total += p;
                priced += 1;
            }
            TitleBrief {
                register: if t.register == "ocod" {
                    Register::Ocod
                } else {
                    Register::Ccod
                },
                title_number: t.title_number,
                tenure: t.tenure,
                property_address: t.property_address,
                district: t.district,
                price_paid: t.price_paid,
                date_proprietor_added: t.date_added,
            }
        })
        .collect();
    let mut areas_held: Vec<AreaHeld> = areas
        .into_iter()
        .map(|(district, titles)| AreaHeld { district, titles })
        .collect();
    areas_held.sort_by(|a, b| b.titles.cmp(&a.titles).then(a.district.cmp(&b.district)));
    let known = companies_by_number(db, numbers.iter().cloned().collect()).await?;
    let companies = numbers
        .iter()
        .filter_map(|n| known.get(n).cloned())
        .collect();
    Ok(ProprietorHolding {
        name,
        company_numbers: numbers,
        companies,
        n_distinct_titles,
        titles: briefs,
        truncated,
        total_price_paid: (priced > 0).then_some(total),
        titles_with_price_paid: priced,
        areas_held,
        directors_and_pscs: Unavailable::new(
            "directors and persons with significant control are not in the loaded files (Companies House basic company data has neither)",
        ),
    })
}

/// What the register shows for the proprietor with this (normalised) company number.
pub async fn proprietor_by_number(db: &Db, number: &str) -> Result<ProprietorAnswer, LookupError> {
    let first = titles::titles_of(db, titles::Holder::Company(number), "", 1).await?;
    let company = companies_by_number(db, BTreeSet::from([number.to_string()]))
        .await?
        .remove(number);
    let name = match (first.first(), &company) {
        (Some(t), _) => {
            let rows = titles::titles_by_number(db, std::slice::from_ref(t)).await?;
            rows.iter()
                .flat_map(proprietors_of)
                .find(|p| p.company_number.as_deref() == Some(number))
                .map(|p| p.name)
                .or_else(|| company.as_ref().map(|c| c.name.clone()))
                .unwrap_or_default()
        }
        (None, Some(c)) => c.name.clone(),
        (None, None) => {
            return Err(LookupError::NotFound(format!(
                "company number {number} in the loaded CCOD, OCOD and Companies House files; the proprietor"
            )));
        }
    };
    Ok(ProprietorAnswer {
        query: number.to_string(),
        match_kind: MatchKind::CompanyNumber,
        proprietor: Some(holding(db, name, Holder::Number(number.to_string())).await?),
        candidates: Vec::new(),
        note: NUMBER_NOTE,
    })
}

/// The most edits a name of `len` characters may be from a registered one: one per five
/// characters, at least one and at most three.
fn tolerance(len: usize) -> usize {
    (len / 5).clamp(1, 3)
}

/// The next string after every string starting with `prefix` (for an index range).
fn prefix_end(prefix: &str) -> String {
    let mut s = prefix.to_string();
    s.push(char::MAX);
    s
}

/// What the register shows for a proprietor by name: the exact normalised name, else the one
/// registered name within the typo tolerance, else the candidates. Candidates share the name's
/// first two characters (the look-up reads an index range, so its work is bounded).
pub async fn proprietor_by_name(db: &Db, name: &str) -> Result<ProprietorAnswer, LookupError> {
    let key = name_key(name);
    let count = titles::title_count(db, titles::Holder::NameKey(&key)).await?;
    if count > 0 {
        let shown = titles::proprietors_with_name_key(db, &key, 1)
            .await?
            .into_iter()
            .next()
            .map_or_else(|| key.clone(), |p| p.name);
        return Ok(ProprietorAnswer {
            query: name.to_string(),
            match_kind: MatchKind::ExactName,
            proprietor: Some(holding(db, shown, Holder::NameKey(key.clone())).await?),
            candidates: Vec::new(),
            note: NAME_NOTE,
        });
    }
    let prefix: String = key.chars().take(2).collect();
    let max = tolerance(key.chars().count());
    let keys =
        titles::name_keys_between(db, &prefix, &prefix_end(&prefix), CANDIDATES_READ).await?;
    let mut candidates = Vec::new();
    for k in keys {
        if let Some(distance) = edit_distance(&key, &k, max) {
            let titles = titles::title_count(db, titles::Holder::NameKey(&k)).await?;
            candidates.push(Candidate {
                name_key: k,
                distance,
                titles,
            });
        }
    }
    candidates.sort_by(|a, b| {
        a.distance
            .cmp(&b.distance)
            .then(b.titles.cmp(&a.titles))
            .then(a.name_key.cmp(&b.name_key))
    });
    candidates.truncate(20);
    match candidates.as_slice() {
        [] => Err(LookupError::NotFound(format!(
            "a proprietor named {name:?} (or within {max} edits of it) in the loaded CCOD and OCOD files; the proprietor"
        ))),
        [one] => {
            let shown = titles::proprietors_with_name_key(db, &one.name_key, 1)
                .await?
                .into_iter()
                .next()
                .map_or_else(|| one.name_key.clone(), |p| p.name);
            Ok(ProprietorAnswer {
                query: name.to_string(),
                match_kind: MatchKind::NearName,
                proprietor: Some(holding(db, shown, Holder::NameKey(one.name_key.clone())).await?),
                candidates,
                note: NAME_NOTE,
            })
        }
        [_, _, ..] => Ok(ProprietorAnswer {
            query: name.to_string(),
            match_kind: MatchKind::Candidates,
            proprietor: None,
            candidates,
            note: NAME_NOTE,
        }),
    }
}

/// The forms a company number asked for may take: as Companies House writes it, then (when
/// different) as an overseas registry number is kept.
fn number_forms(raw: &str) -> Vec<String> {
    let mut forms: Vec<String> = Vec::new();
    for f in [
        crate::ids::normalise_company_number(raw, false),
        crate::ids::normalise_company_number(raw, true),
    ]
    .into_iter()
    .flatten()
    {
        if !forms.contains(&f) {
            forms.push(f);
        }
    }
    forms
}

/// The cursor scope of a walk through a company's titles: the number as the caller wrote it
/// (`terrace_core::cursor`); the key is the last title number listed.
pub fn company_cursor_scope(raw: &str) -> CursorScope {
    CursorScope::new("ownership_by_company", raw.trim())
}

/// [`by_company`] for a number as the caller wrote it: its Companies House form first, then its
/// form as an overseas registry number when that differs and the first names nothing. `cursor`
/// is the title number a decoded cursor names.
pub async fn company(
    db: &Db,
    raw: &str,
    cursor: Option<&str>,
    limit: i64,
) -> Result<CompanyTitles, LookupError> {
    let mut last = LookupError::NotFound(format!("company number {raw}"));
    let scope = company_cursor_scope(raw);
    for n in number_forms(raw) {
        match by_company(db, &n, cursor, limit, &scope).await {
            Err(LookupError::NotFound(what)) => last = LookupError::NotFound(what),
            other => return other,
        }
    }
    Err(last)
}

/// [`proprietor_by_number`] for a number as the caller wrote it (see [`company`]).
pub async fn proprietor_by_company_number(
    db: &Db,
    raw: &str,
) -> Result<ProprietorAnswer, LookupError> {
    let mut last = LookupError::NotFound(format!("company number {raw}"));
    for n in number_forms(raw) {
        match proprietor_by_number(db, &n).await {
            Err(LookupError::NotFound(what)) => last = LookupError::NotFound(what),
            other => return other,
        }
    }
    Err(last)
}
