//! The operator's auction lot feed (OF-S): one row per lot per auction, as a CSV with a header
//! row or as JSON lines (one object per line). No open dataset of UK auction results exists, so
//! an operator supplies the lots of the auction houses they follow; docs/DATA.md defines the
//! fields. The file's first non-blank character decides: `{` is JSON lines, anything else CSV.
//!
//! Fields (CSV columns found by name in any spelling; JSON keys the same names; a JSON `null`
//! or a blank CSV field is absent):
//! - `auction_house` (required): the house's slug, lower-cased (`allsop`, `acuitus`);
//! - `auction_date` (required): `YYYY-MM-DD` (or `DD/MM/YYYY`);
//! - `lot_number` (required): as the catalogue prints it (`12`, `12A`);
//! - `address` (required), `postcode` (optional; `None` when malformed), `uprn` (optional);
//! - `lot_type` (required): `residential`, `commercial`, `land`, `ground_rent` or `mixed`;
//! - `tenure` (optional): `freehold`, `leasehold` or `unknown`; `lease_years_remaining`;
//! - `vacant` (optional): `true`/`false` (also `yes`/`no`, `vacant`/`let`); `rent_passing_pa`
//!   (whole pounds a year);
//! - the guide: `guide_price_low` and `guide_price_high` (whole pounds; a single figure is both
//!   equal, `£X+` is a low with no high), or `guide_price` as the catalogue prints it (`£250,000`,
//!   `£250,000+`, `£200,000 - £250,000`);
//! - `outcome` (required): `sold`, `unsold`, `withdrawn`, `sold_prior`, `sold_after`,
//!   `postponed` or `unknown` (spaces or dashes for underscores, any case);
//! - `hammer_price` (optional, whole pounds): the achieved price when the house disclosed it;
//!   absent on a sold lot means "not disclosed", never "unsold";
//! - `net_initial_yield_pct` (optional, 0 to 100, as published); `source_url` (optional, http(s));
//!   `description` (optional).
//!
//! Rejections (file and line): a line that is not JSON or not an object, a missing or invalid
//! required field, an unknown lot type, tenure or outcome, a negative or fractional price or
//! rent, a guide whose high is below its low, a hammer price on a lot that did not sell, a
//! yield outside 0-100, a URL that is not http(s), and (CSV) a wrong column count.

use super::Parsed;
use super::csvio::{Header, Opened, field};
use super::value::{self, decode};
use chrono::NaiveDate;
use serde_json::Value;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

/// The lot types, canonical spelling.
pub const LOT_TYPES: &[&str] = &["residential", "commercial", "land", "ground_rent", "mixed"];
/// The outcomes, canonical spelling.
pub const OUTCOMES: &[&str] = &[
    "sold",
    "unsold",
    "withdrawn",
    "sold_prior",
    "sold_after",
    "postponed",
    "unknown",
];
/// The outcomes that are a sale.
pub const SOLD: &[&str] = &["sold", "sold_prior", "sold_after"];
/// The tenures, canonical spelling.
pub const TENURES: &[&str] = &["freehold", "leasehold", "unknown"];

/// One lot of one auction.
#[derive(Debug, Clone, PartialEq)]
pub struct LotRow {
    pub auction_house: String,
    pub auction_date: NaiveDate,
    pub lot_number: String,
    pub address: String,
    pub postcode: Option<String>,
    pub uprn: Option<i64>,
    pub lot_type: String,
    pub tenure: Option<String>,
    pub lease_years_remaining: Option<i32>,
    pub vacant: Option<bool>,
    pub rent_passing_pa: Option<i64>,
    pub guide_low: Option<i64>,
    pub guide_high: Option<i64>,
    pub outcome: String,
    pub hammer_price: Option<i64>,
    pub net_initial_yield_pct: Option<f64>,
    pub source_url: Option<String>,
    pub description: Option<String>,
}

impl LotRow {
    /// The lot's key: house, date and lot number (`allsop|2024-03-14|12`).
    pub fn key(&self) -> String {
        format!(
            "{}|{}|{}",
            self.auction_house, self.auction_date, self.lot_number
        )
    }
}

/// Every field name the feed knows (normalised), with the aliases a catalogue export may use.
const NAMES: &[(&str, &[&str])] = &[
    ("auction_house", &["auction-house", "auctioneer", "house"]),
    ("auction_date", &["auction-date", "date"]),
    ("lot_number", &["lot-number", "lot", "lot-no"]),
    ("address", &["address", "street-address"]),
    ("postcode", &["postcode"]),
    ("uprn", &["uprn"]),
    ("lot_type", &["lot-type", "type"]),
    ("tenure", &["tenure"]),
    (
        "lease_years_remaining",
        &["lease-years-remaining", "unexpired-years"],
    ),
    ("vacant", &["vacant"]),
    (
        "rent_passing_pa",
        &["rent-passing-pa", "current-rent-pa", "rent-pa"],
    ),
    ("guide_price_low", &["guide-price-low", "guide-low"]),
    ("guide_price_high", &["guide-price-high", "guide-high"]),
    ("guide_price", &["guide-price", "guide"]),
    ("outcome", &["outcome", "status"]),
    ("hammer_price", &["hammer-price", "achieved-price"]),
    (
        "net_initial_yield_pct",
        &["net-initial-yield-pct", "net-initial-yield", "yield"],
    ),
    ("source_url", &["source-url", "lot-url", "url"]),
    ("description", &["description"]),
];

/// Opens a lot feed (CSV with a header, or JSON lines; see the module documentation).
pub fn read(path: &Path) -> io::Result<Box<dyn Iterator<Item = Parsed<LotRow>> + Send>> {
    let mut head = Vec::new();
    BufReader::new(File::open(path)?)
        .take(4096)
        .read_to_end(&mut head)?;
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head);
    if decode(head).trim_start().starts_with('{') {
        return Ok(Box::new(super::jsonl::JsonLines::open(path, json_line)?));
    }
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(Box::new(std::iter::empty()));
    };
    let h = Header::new(names);
    for required in ["auction_date", "lot_number", "address", "outcome"] {
        h.require(&source.file, aliases(required))?;
    }
    let idx: Vec<(&'static str, Option<usize>)> =
        NAMES.iter().map(|(n, a)| (*n, h.find(a))).collect();
    let rows = source.rows(h.len(), move |f| {
        let get = |name: &str| -> Result<Option<String>, String> {
            Ok(idx
                .iter()
                .find(|(n, _)| *n == name)
                .and_then(|(_, i)| value::text(field(f, *i))))
        };
        lot(&get)
    });
    Ok(Box::new(rows))
}

fn aliases(name: &str) -> &'static [&'static str] {
    NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(&[], |(_, a)| a)
}

fn json_line(text: &str) -> Result<LotRow, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
    let Value::Object(obj) = v else {
        return Err("expected a JSON object".into());
    };
    // Keys by normalised name, so `auctionHouse`-style spellings are not silently dropped.
    let by_name: HashMap<String, &Value> = obj
        .iter()
        .map(|(k, v)| (k.trim().to_ascii_lowercase().replace('_', "-"), v))
        .collect();
    let get = |name: &str| -> Result<Option<String>, String> {
        let found = aliases(name)
            .iter()
            .chain(std::iter::once(&name))
            .find_map(|a| by_name.get(&a.replace('_', "-")));
        match found {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(value::text(Some(s))),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(Value::Bool(b)) => Ok(Some(b.to_string())),
            Some(_) => Err(format!("{name} must be a string, number or boolean")),
        }
    };
    lot(&get)
}

type Get<'a> = dyn Fn(&str) -> Result<Option<String>, String> + 'a;

fn required(get: &Get<'_>, name: &str) -> Result<String, String> {
    get(name)?.ok_or_else(|| format!("missing {name}"))
}

/// A canonical enum value: lower case, spaces and dashes as underscores.
fn canon(v: &str) -> String {
    v.trim().to_ascii_lowercase().replace([' ', '-'], "_")
}

/// Whole pounds: digits with optional `£` and thousands commas; not negative, not fractional.
fn pounds(name: &str, v: &str) -> Result<i64, String> {
    let t: String = v
        .trim()
        .trim_start_matches('£')
        .chars()
        .filter(|c| *c != ',')
        .collect();
    match value::int(&t) {
        Some(p) if p >= 0 => Ok(p),
        _ => Err(format!("{name} {v:?} is not a whole number of pounds")),
    }
}

fn opt_pounds(get: &Get<'_>, name: &str) -> Result<Option<i64>, String> {
    get(name)?.map(|v| pounds(name, &v)).transpose()
}

/// A guide as catalogues print it: `£250,000`, `£250,000+`, `£200,000 - £250,000`.
fn guide_text(v: &str) -> Result<(i64, Option<i64>), String> {
    let t = v.trim();
    if let Some(low) = t.strip_suffix('+') {
        return Ok((pounds("guide_price", low)?, None));
    }
    let parts: Vec<&str> = t.split(['-', '–']).collect();
    match parts.as_slice() {
        [one] => {
            let p = pounds("guide_price", one)?;
            Ok((p, Some(p)))
        }
        [lo, hi] => Ok((pounds("guide_price", lo)?, Some(pounds("guide_price", hi)?))),
        _ => Err(format!("guide_price {v:?} is not a figure or a range")),
    }
}

fn bool_of(v: &str) -> Option<bool> {
    match canon(v).as_str() {
        "true" | "yes" | "y" | "1" | "vacant" => Some(true),
        "false" | "no" | "n" | "0" | "let" | "tenanted" => Some(false),
        _ => None,
    }
}

fn url_ok(u: &str) -> bool {
    let rest = u
        .strip_prefix("https://")
        .or_else(|| u.strip_prefix("http://"));
    rest.is_some_and(|r| {
        let host = r.split(['/', '?', '#']).next().unwrap_or_default();
        !host.is_empty() && host.contains('.') && !u.chars().any(char::is_whitespace)
    })
}

fn lot(get: &Get<'_>) -> Result<LotRow, String> {
    let auction_house = canon(&required(get, "auction_house")?);
    let raw_date = required(get, "auction_date")?;
    let auction_date =
        value::date(&raw_date).ok_or_else(|| format!("auction_date {raw_date:?} is not a date"))?;
    let lot_number = required(get, "lot_number")?;
    let address = required(get, "address")?;
    let lot_type = canon(&required(get, "lot_type")?);
    if !LOT_TYPES.contains(&lot_type.as_str()) {
        return Err(format!(
            "unknown lot_type {lot_type:?} (expected one of {})",
            LOT_TYPES.join(", ")
        ));
    }
    let tenure = get("tenure")?.map(|t| canon(&t));
    if let Some(t) = &tenure
        && !TENURES.contains(&t.as_str())
    {
        return Err(format!(
            "unknown tenure {t:?} (expected freehold, leasehold or unknown)"
        ));
    }
    let lease_years_remaining = get("lease_years_remaining")?
        .map(|v| {
            value::int(&v)
                .filter(|y| (0..=9999).contains(y))
                .map(|y| y as i32)
                .ok_or_else(|| {
                    format!("lease_years_remaining {v:?} is not a whole number of years")
                })
        })
        .transpose()?;
    let vacant = get("vacant")?
        .map(|v| bool_of(&v).ok_or_else(|| format!("vacant {v:?} is not true or false")))
        .transpose()?;
    let rent_passing_pa = opt_pounds(get, "rent_passing_pa")?;
    let (mut guide_low, mut guide_high) = (
        opt_pounds(get, "guide_price_low")?,
        opt_pounds(get, "guide_price_high")?,
    );
    if guide_low.is_none()
        && guide_high.is_none()
        && let Some(text) = get("guide_price")?
    {
        let (lo, hi) = guide_text(&text)?;
        guide_low = Some(lo);
        guide_high = hi;
    }
    if guide_low.is_none() && guide_high.is_some() {
        return Err("guide_price_high given without guide_price_low".into());
    }
    if let (Some(lo), Some(hi)) = (guide_low, guide_high)
        && hi < lo
    {
        return Err(format!(
            "guide_price_high {hi} is below guide_price_low {lo}"
        ));
    }
    let outcome = canon(&required(get, "outcome")?);
    if !OUTCOMES.contains(&outcome.as_str()) {
        return Err(format!(
            "unknown outcome {outcome:?} (expected one of {})",
            OUTCOMES.join(", ")
        ));
    }
    let hammer_price = opt_pounds(get, "hammer_price")?;
    if hammer_price.is_some() && !SOLD.contains(&outcome.as_str()) {
        return Err(format!(
            "hammer_price given for a lot whose outcome is {outcome}"
        ));
    }
    let net_initial_yield_pct = get("net_initial_yield_pct")?
        .map(|v| {
            value::float(v.trim().trim_end_matches('%'))
                .filter(|y| (0.0..=100.0).contains(y))
                .ok_or_else(|| format!("net_initial_yield_pct {v:?} is not a percentage 0-100"))
        })
        .transpose()?;
    let source_url = get("source_url")?;
    if let Some(u) = &source_url
        && !url_ok(u)
    {
        return Err(format!("source_url {u:?} is not an http(s) URL"));
    }
    Ok(LotRow {
        auction_house,
        auction_date,
        lot_number,
        address,
        postcode: value::postcode(get("postcode")?.as_deref()),
        uprn: get("uprn")?.and_then(|u| value::uprn(&u)),
        lot_type,
        tenure,
        lease_years_remaining,
        vacant,
        rent_passing_pa,
        guide_low,
        guide_high,
        outcome,
        hammer_price,
        net_initial_yield_pct,
        source_url,
        description: get("description")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    #[test]
    fn csv_rows_and_rejections() {
        let f = temp_file(
            "auction_house,auction_date,lot_number,address,postcode,lot_type,tenure,lease_years_remaining,vacant,rent_passing_pa,guide_price,outcome,hammer_price,net_initial_yield_pct,source_url\n\
Allsop,2024-03-14,12,\"1 High Street, Tamberley\",XT1 1AA,residential,freehold,,true,,\"£200,000 - £250,000\",sold,240000,,https://example.org/lot/12\n\
allsop,2024-03-14,13,2 High Street,XT1 1AB,commercial,leasehold,99,let,12000,£150000+,sold,,7.5,\n\
allsop,2024-03-14,14,3 High Street,XT1 1AB,castle,,,,,,sold,,,\n\
allsop,2024-03-14,15,4 High Street,XT1 1AB,residential,,,,,,unsold,100000,,\n\
allsop,2024-03-14,16,5 High Street,XT1 1AB,residential,,,,,\"£300,000 - £250,000\",sold,,,\n\
allsop,not-a-date,17,6 High Street,XT1 1AB,residential,,,,,,sold,,,\n\
short,row\n\
allsop,2024-03-14,18,7 High Street,XT1 1AB,land,,,,,,withdrawn,,,\n"
                .as_bytes(),
        );
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok.len(), 3, "{bad:?}");
        let a = &ok[0].1;
        assert_eq!(a.key(), "allsop|2024-03-14|12");
        assert_eq!((a.guide_low, a.guide_high), (Some(200_000), Some(250_000)));
        assert_eq!(a.hammer_price, Some(240_000));
        assert_eq!(a.postcode.as_deref(), Some("XT1 1AA"));
        let b = &ok[1].1;
        assert_eq!((b.guide_low, b.guide_high), (Some(150_000), None));
        assert_eq!(b.vacant, Some(false));
        assert_eq!(b.net_initial_yield_pct, Some(7.5));
        assert_eq!(b.hammer_price, None, "sold, price not disclosed");
        assert_eq!(ok[2].1.outcome, "withdrawn");
        let lines: Vec<u64> = bad.iter().map(|r| r.line).collect();
        assert_eq!(lines, vec![4, 5, 6, 7, 8]);
        assert!(bad[0].reason.contains("lot_type"));
        assert!(bad[1].reason.contains("hammer_price given"));
        assert!(bad[2].reason.contains("below"));
        assert!(bad[3].reason.contains("auction_date"));
        assert!(bad[4].reason.contains("columns"));
    }

    #[test]
    fn json_lines_rows_and_rejections() {
        let f = temp_file(
            br#"{"auction_house":"acuitus","auction_date":"2025-06-01","lot_number":3,"address":"9 Mill Lane","postcode":"XT2 3BD","lot_type":"commercial","guide_price_low":300000,"guide_price_high":300000,"outcome":"sold prior","hammer_price":310000,"net_initial_yield_pct":6.25,"vacant":false,"rent_passing_pa":21000}

not json
{"auction_house":"acuitus","auction_date":"2025-06-01","lot_number":"4","address":"10 Mill Lane","lot_type":"residential","outcome":"postponed","hammer_price":null}
{"auction_house":"acuitus","auction_date":"2025-06-01","lot_number":"5","lot_type":"residential","outcome":"sold"}
[1,2]
"#,
        );
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok.len(), 2, "{bad:?}");
        assert_eq!(ok[0].1.outcome, "sold_prior");
        assert_eq!(ok[0].1.lot_number, "3");
        assert_eq!(ok[0].1.guide_high, Some(300_000));
        assert_eq!(ok[1].0, 4);
        let lines: Vec<u64> = bad.iter().map(|r| r.line).collect();
        assert_eq!(lines, vec![3, 5, 6]);
        assert!(bad[1].reason.contains("missing address"));
    }
}
