//! The operator's auction lot feed (CSV with a header, docs/DATA.md "Auction lots"): four
//! auction houses, each holding a sale every two months over several years, offering register
//! dwellings (residential lots), a few units as commercial investments (let, rent passing, a net
//! initial yield quoted), and land plots whose address is in no register (unmatched lots).
//!
//! Drawn only from its own PRNG stream (`Rng::derive(seed ^ AUCTIONS_SEED_XOR, ..)`) after every
//! other file is written, so the other fixture files are byte-identical with or without it.
//!
//! Guaranteed cases (the manifest's `auction_cases`): re-offered properties (offered two or three
//! times, the last offer sold), distressed properties (offered three times, never sold, one
//! "by order of LPA receivers"), sold lots whose price was not disclosed, withdrawals, sold-prior
//! lots and commercial lots with a yield; and one rated commercial unit resold at auction
//! (its UPRN given by the feed), a year after the sale its company-owned title shows, at the
//! price the planted commercial level gives (`crate::commercial_level`): a pair of the
//! commercial capital index's `auction_results` source.

use crate::out::{Eol, FileStat, LineFile};
use crate::rng::Rng;
use chrono::{Datelike, Months, NaiveDate};
use serde::Serialize;
use std::io;
use std::path::Path;

pub const AUCTIONS_FILE: &str = "auctions/auction_lots.csv";

/// Mixed into the seed for this stream, keeping it apart from every existing one.
const AUCTIONS_SEED_XOR: u64 = 0xA0C7_1075_F1E5_D054;

pub const HEADER: &str = "auction_house,auction_date,lot_number,address,postcode,uprn,lot_type,tenure,lease_years_remaining,vacant,rent_passing_pa,guide_price_low,guide_price_high,outcome,hammer_price,net_initial_yield_pct,source_url,description";

/// (slug, first auction, lots per sale, commercial share).
const HOUSES: [(&str, (i32, u32), usize, f64); 4] = [
    ("allsop", (2019, 2), 5, 0.1),
    ("savills", (2020, 3), 4, 0.1),
    ("acuitus", (2021, 1), 3, 0.8),
    ("barnettross", (2022, 5), 3, 0.0),
];

const REOFFERED: usize = 6;
const DISTRESSED: usize = 4;
const LAND_PLOTS: usize = 5;

/// A register dwelling a lot can offer.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub uprn: u64,
    pub address: String,
    pub postcode: String,
    pub district: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AuctionCases {
    pub note: String,
    /// UPRNs offered at two or three auctions, the last offer sold.
    pub reoffered_uprns: Vec<u64>,
    /// UPRNs offered at three auctions and never sold.
    pub distressed_uprns: Vec<u64>,
    /// Lots (house|date|lot) sold with no price disclosed.
    pub undisclosed_sold_lots: Vec<String>,
    /// Land lots whose address is in no register (left unmatched).
    pub unmatched_lots: Vec<String>,
    pub houses: Vec<String>,
    /// The rated commercial unit resold at auction (house|date|lot), paired by the commercial
    /// capital index with its title's last sale.
    pub commercial_resale_lots: Vec<String>,
}

/// A rated commercial unit whose company-owned title shows its last sale, with no Price Paid
/// sale from a week before that to the auction: offered and sold at auction a year later.
#[derive(Debug, Clone)]
pub struct CommercialResale {
    pub uprn: u64,
    pub address: String,
    pub postcode: String,
    /// The title's Date Proprietor Added and Price Paid.
    pub previous: NaiveDate,
    pub previous_price: u64,
}

struct Lot {
    house: &'static str,
    date: NaiveDate,
    number: usize,
    address: String,
    postcode: String,
    lot_type: &'static str,
    tenure: &'static str,
    lease_years: Option<u32>,
    vacant: Option<bool>,
    rent: Option<i64>,
    guide: (i64, Option<i64>),
    outcome: &'static str,
    hammer: Option<i64>,
    yield_pct: Option<f64>,
    description: String,
    /// The UPRN the feed gives (blank: left to the address matcher).
    uprn: Option<u64>,
}

/// A guide below the value, as auction houses set them: a single figure, `£X+` or a range.
fn guide_of(rng: &mut Rng, value: f64) -> (i64, Option<i64>) {
    let low = round_to(value * rng.range_f64(0.7, 0.85), 5_000.0).max(5_000);
    match rng.below(3) {
        0 => (low, Some(low)),
        1 => (low, None),
        _ => (low, Some(low + round_to(value * 0.1, 5_000.0).max(5_000))),
    }
}

fn round_to(x: f64, step: f64) -> i64 {
    ((x / step).round() * step) as i64
}

/// The sale dates of a house: every two months from its first, to `end`.
fn sale_dates(first: (i32, u32), end: NaiveDate) -> Vec<NaiveDate> {
    let mut out = Vec::new();
    let Some(mut d) = NaiveDate::from_ymd_opt(first.0, first.1, 14) else {
        return out;
    };
    while d <= end {
        out.push(d);
        d = d + Months::new(2);
    }
    out
}

/// The auction of a [`CommercialResale`]: the 21st of the month a year after the title's sale.
pub fn resale_date(previous: NaiveDate) -> NaiveDate {
    let a_year_on = previous + Months::new(12);
    a_year_on.with_day(21).unwrap_or(a_year_on)
}

/// Writes the feed. `value_at(district, date)` is the district's typical value at a date.
pub fn write(
    out_dir: &Path,
    seed: u64,
    mut pool: Vec<Candidate>,
    end: NaiveDate,
    value_at: &dyn Fn(usize, NaiveDate) -> f64,
    resale: Option<CommercialResale>,
) -> io::Result<(FileStat, AuctionCases)> {
    let mut rng = Rng::derive(seed ^ AUCTIONS_SEED_XOR, "auctions", 0);
    rng.shuffle(&mut pool);
    let mut next = 0usize;
    let mut take = || {
        let c = pool.get(next).cloned();
        next += 1;
        c
    };
    let mut lots: Vec<Lot> = Vec::new();
    let mut cases = AuctionCases {
        note: "Auction lots over register dwellings: re-offered and distressed properties, undisclosed prices, withdrawals, sold-prior and commercial lots".into(),
        houses: HOUSES.iter().map(|h| h.0.to_string()).collect(),
        ..AuctionCases::default()
    };
    for (house, first, per_sale, commercial_share) in HOUSES {
        for date in sale_dates(first, end) {
            for _ in 0..per_sale {
                let Some(c) = take() else { break };
                let value = value_at(c.district, date);
                let commercial = rng.chance(commercial_share);
                let guide = guide_of(&mut rng, value);
                let outcome = *rng.pick(&[
                    "sold",
                    "sold",
                    "sold",
                    "sold",
                    "sold",
                    "unsold",
                    "unsold",
                    "withdrawn",
                    "sold_prior",
                    "sold_after",
                    "postponed",
                ]);
                let sold = matches!(outcome, "sold" | "sold_prior" | "sold_after");
                let price = round_to(guide.0 as f64 * rng.range_f64(1.0, 1.3), 500.0);
                // about a third of sales keep their price undisclosed
                let hammer = (sold && rng.chance(0.7)).then_some(price);
                let (rent, yield_pct, vacant) = if commercial {
                    let rent = round_to(value * rng.range_f64(0.06, 0.09), 250.0);
                    let basis = hammer.unwrap_or(guide.0) as f64;
                    let y = (rent as f64 / (basis * 1.068) * 1000.0).round() / 10.0;
                    (Some(rent), rng.chance(0.8).then_some(y), Some(false))
                } else {
                    (None, None, Some(rng.chance(0.8)))
                };
                let leasehold = commercial || rng.chance(0.2);
                lots.push(Lot {
                    house,
                    date,
                    number: 0,
                    address: c.address.clone(),
                    postcode: c.postcode.clone(),
                    lot_type: if commercial {
                        "commercial"
                    } else {
                        "residential"
                    },
                    tenure: if leasehold { "leasehold" } else { "freehold" },
                    lease_years: leasehold.then(|| rng.range_usize(40, 125) as u32),
                    vacant,
                    rent,
                    guide,
                    outcome,
                    hammer,
                    yield_pct,
                    description: if commercial {
                        "Let commercial investment".into()
                    } else {
                        "Residential property for improvement".into()
                    },
                    uprn: None,
                });
            }
        }
    }
    // Re-offers: offered unsold (or withdrawn), then sold at a later sale of another house.
    for i in 0..REOFFERED {
        let Some(c) = take() else { break };
        let offers = 2 + i % 2;
        let start =
            NaiveDate::from_ymd_opt(2021 + (i as i32 % 3), 3 + (i as u32 % 6), 14).unwrap_or(end);
        for k in 0..offers {
            let date = start + Months::new(4 * k as u32);
            let value = value_at(c.district, date);
            let guide = guide_of(&mut rng, value);
            let last = k + 1 == offers;
            let outcome = if last {
                "sold"
            } else if k == 0 && i % 3 == 0 {
                "withdrawn"
            } else {
                "unsold"
            };
            let hammer = last.then(|| round_to(guide.0 as f64 * rng.range_f64(1.0, 1.15), 500.0));
            lots.push(Lot {
                house: HOUSES[(i + k) % 2].0,
                date,
                number: 0,
                // a later catalogue writes the address in capitals
                address: if k == 1 {
                    c.address.to_uppercase()
                } else {
                    c.address.clone()
                },
                postcode: c.postcode.clone(),
                lot_type: "residential",
                tenure: "freehold",
                lease_years: None,
                vacant: Some(true),
                rent: None,
                guide,
                outcome,
                hammer,
                yield_pct: None,
                description: "Re-offered residential lot".into(),
                uprn: None,
            });
        }
        cases.reoffered_uprns.push(c.uprn);
    }
    // Distressed: offered three times and never sold.
    for i in 0..DISTRESSED {
        let Some(c) = take() else { break };
        let start =
            NaiveDate::from_ymd_opt(2022 + (i as i32 % 3), 2 + (i as u32 % 8), 14).unwrap_or(end);
        for k in 0..3 {
            let date = start + Months::new(3 * k as u32);
            let value = value_at(c.district, date);
            let guide = guide_of(&mut rng, value * (1.0 - 0.1 * k as f64));
            lots.push(Lot {
                house: HOUSES[(i + k) % 4].0,
                date,
                number: 0,
                address: c.address.clone(),
                postcode: c.postcode.clone(),
                lot_type: "residential",
                tenure: "freehold",
                lease_years: None,
                vacant: Some(true),
                rent: None,
                guide,
                outcome: if k == 2 && i == 0 {
                    "withdrawn"
                } else {
                    "unsold"
                },
                hammer: None,
                yield_pct: None,
                description: if i == 0 {
                    "By order of LPA Receivers: residential property requiring repair".into()
                } else {
                    "Residential property requiring repair".into()
                },
                uprn: None,
            });
        }
        cases.distressed_uprns.push(c.uprn);
    }
    // Land plots with an address no register holds.
    for i in 0..LAND_PLOTS {
        let Some(c) = take() else { break };
        let date = NaiveDate::from_ymd_opt(2023 + (i as i32 % 3), 4 + i as u32, 14).unwrap_or(end);
        let guide = (round_to(20_000.0 + 10_000.0 * i as f64, 5_000.0), None);
        lots.push(Lot {
            house: "allsop",
            date,
            number: 0,
            address: format!("Land at Kestrel Fields plot {}", i + 1),
            postcode: c.postcode.clone(),
            lot_type: "land",
            tenure: "freehold",
            lease_years: None,
            vacant: Some(true),
            rent: None,
            guide,
            outcome: if i % 2 == 0 { "sold" } else { "unsold" },
            hammer: None,
            yield_pct: None,
            description: "Parcel of land with no planning consent".into(),
            uprn: None,
        });
    }
    // The rated unit resold a year after its title's last sale, at a sale of its own (the 21st:
    // no other lot shares it), with no draw from the stream.
    let mut resale_key = None;
    if let Some(r) = resale {
        let date = resale_date(r.previous);
        if date <= end {
            let price = r.previous_price as f64 * crate::commercial_level(date)
                / crate::commercial_level(r.previous);
            let hammer = round_to(price, 500.0);
            let rent = round_to(price * 0.07, 250.0);
            resale_key = Some(("acuitus", date));
            lots.push(Lot {
                house: "acuitus",
                date,
                number: 0,
                address: r.address,
                postcode: r.postcode,
                lot_type: "commercial",
                tenure: "freehold",
                lease_years: None,
                vacant: Some(false),
                rent: Some(rent),
                guide: (round_to(price * 0.85, 5_000.0), None),
                outcome: "sold",
                hammer: Some(hammer),
                yield_pct: Some((rent as f64 / (hammer as f64 * 1.068) * 1000.0).round() / 10.0),
                description: "Let commercial investment: a rated unit resold".into(),
                uprn: Some(r.uprn),
            });
        }
    }
    // Lot numbers per sale, in a stable order.
    lots.sort_by(|a, b| (a.date, a.house, &a.address).cmp(&(b.date, b.house, &b.address)));
    let mut counter: Vec<((&str, NaiveDate), usize)> = Vec::new();
    for l in &mut lots {
        let k = (l.house, l.date);
        match counter.iter_mut().find(|(c, _)| *c == k) {
            Some((_, n)) => {
                *n += 1;
                l.number = *n;
            }
            None => {
                counter.push((k, 1));
                l.number = 1;
            }
        }
    }
    let mut f = LineFile::create(out_dir, AUCTIONS_FILE, Eol::Lf)?;
    f.header(HEADER)?;
    let opt = |v: Option<i64>| v.map(|x| x.to_string()).unwrap_or_default();
    for l in &lots {
        let key = format!("{}|{}|{}", l.house, l.date, l.number);
        if matches!(l.outcome, "sold" | "sold_prior" | "sold_after") && l.hammer.is_none() {
            cases.undisclosed_sold_lots.push(key.clone());
        }
        if resale_key == Some((l.house, l.date)) {
            cases.commercial_resale_lots.push(key.clone());
        }
        if l.lot_type == "land" {
            cases.unmatched_lots.push(key);
        }
        f.row_minimal(&[
            l.house.to_string(),
            l.date.to_string(),
            l.number.to_string(),
            l.address.clone(),
            l.postcode.clone(),
            l.uprn.map(|u| u.to_string()).unwrap_or_default(),
            l.lot_type.to_string(),
            l.tenure.to_string(),
            l.lease_years.map(|y| y.to_string()).unwrap_or_default(),
            l.vacant.map(|v| v.to_string()).unwrap_or_default(),
            opt(l.rent),
            l.guide.0.to_string(),
            opt(l.guide.1),
            l.outcome.to_string(),
            opt(l.hammer),
            l.yield_pct.map(|y| format!("{y:.1}")).unwrap_or_default(),
            format!(
                "https://auctions.example.org/{}/{}/lot-{}",
                l.house,
                l.date.format("%Y-%m-%d"),
                l.number
            ),
            l.description.clone(),
        ])?;
    }
    Ok((f.finish()?, cases))
}
