//! A feed of sale and rental listings (JSON lines) for the register's dwellings, observed from
//! 2026-09-05 to 2026-11-15.
//!
//! Drawn only from its own PRNG stream (`Rng::derive(seed ^ LISTINGS_SEED_XOR, ..)`) after every
//! other file is written, so the other fixture files are byte-identical with or without it.
//!
//! Asking prices follow the Price Paid model at the district's latest index level (see
//! [`crate::ppd::PRICE_MODEL`]) with a small asking premium, rounded to £5,000; monthly rents are
//! about 5% a year of that value, £600-£2,000, rounded to £25. Guaranteed cases (listed in the
//! manifest's `listing_cases`): three districts with at least six two-bedroom lets each, and a
//! few lets of dwellings whose latest EPC is rated F or G.

use crate::epc::{API_COLUMNS, Certificate, title};
use crate::out::{Eol, FileStat, LineFile};
use crate::rng::{Rng, det_exp, det_pow};
use crate::world::{AddressRecord, Dwelling, PropertyType};
use chrono::{Days, NaiveDate, NaiveDateTime, NaiveTime};
use serde::Serialize;
use std::io;
use std::path::Path;

pub const LISTINGS_FILE: &str = "listings/listings_feed.jsonl";

/// Mixed into the seed for this stream, keeping it apart from every existing one.
const LISTINGS_SEED_XOR: u64 = 0x4C15_7E16_05EE_D002;

const LISTINGS: usize = 400;
const SALE_SHARE: f64 = 0.6;
/// Districts given at least six two-bedroom lets, and how many each.
const TWO_BED_DISTRICTS: usize = 3;
const TWO_BED_LETS: usize = 7;
const F_OR_G_LETS: usize = 4;

const AGENTS: [&str; 8] = [
    "Harrow & Pike",
    "Moorcroft Estates",
    "Tamber Lettings",
    "Willow Lane Property",
    "Castleford Homes",
    "Brightwater Agents",
    "Oakridge Residential",
    "Fenwick & Lowe",
];

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ListingCases {
    pub note: String,
    /// Listings whose asking price falls at least once between snapshots.
    pub price_reductions: Vec<String>,
    /// Districts with at least six two-bedroom rental listings.
    pub rent_districts_with_6_two_bed: Vec<String>,
    /// UPRNs of rental listings whose latest EPC (by lodgement date) is rated F or G.
    pub f_or_g_lets: Vec<u64>,
}

/// A dwelling that could be listed.
#[derive(Debug, Clone)]
struct Candidate {
    uprn: u64,
    address: String,
    postcode: String,
    district: usize,
    ptype: PropertyType,
    bungalow: bool,
    area: f64,
    bedrooms: u32,
    /// Current energy rating of the latest certificate.
    rating: Option<String>,
}

#[derive(Serialize)]
struct Snapshot {
    time: String,
    price: u64,
    status: &'static str,
}

#[derive(Serialize)]
struct Listing {
    listing_id: String,
    channel: &'static str,
    address: String,
    postcode: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uprn: Option<u64>,
    price: u64,
    bedrooms: u32,
    property_type: &'static str,
    agent: &'static str,
    first_seen: String,
    snapshots: Vec<Snapshot>,
}

fn bedrooms(d: &Dwelling) -> u32 {
    let rooms = u32::from(d.habitable_rooms);
    let (living, lo, hi) = match d.property_type {
        PropertyType::Flat => (1, 1, 3),
        PropertyType::Terraced => (2, 2, 4),
        PropertyType::SemiDetached => (2, 2, 4),
        PropertyType::Detached if d.bungalow => (1, 2, 3),
        PropertyType::Detached => (2, 3, 5),
    };
    rooms.saturating_sub(living).clamp(lo, hi)
}

fn type_label(ptype: PropertyType, bungalow: bool) -> &'static str {
    match ptype {
        PropertyType::Flat => "Flat",
        PropertyType::Terraced => "Terraced house",
        PropertyType::SemiDetached => "Semi-detached house",
        PropertyType::Detached if bungalow => "Detached bungalow",
        PropertyType::Detached => "Detached house",
    }
}

/// "Flat 2, 10 High Street, Tamberley".
pub(crate) fn listing_address(r: &AddressRecord) -> String {
    let mut parts = Vec::new();
    let sao = r.sao_label();
    if !sao.is_empty() {
        parts.push(title(&sao));
    }
    let pao = title(&r.pao_label());
    if r.pao_text.is_none() && r.pao_start_number.is_some() {
        parts.push(format!("{pao} {}", title(&r.street)));
    } else {
        if !pao.is_empty() {
            parts.push(pao);
        }
        parts.push(title(&r.street));
    }
    parts.push(title(&r.town));
    parts.join(", ")
}

fn stamp(t: NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub struct Listings {
    candidates: Vec<Candidate>,
    rating_col: usize,
    lodged_col: usize,
}

impl Default for Listings {
    fn default() -> Self {
        let col = |name: &str| API_COLUMNS.iter().position(|c| *c == name).unwrap_or(0);
        Listings {
            candidates: Vec::new(),
            rating_col: col("current-energy-rating"),
            lodged_col: col("lodgement-date"),
        }
    }
}

impl Listings {
    /// The dwellings an auction lot can offer, in register order.
    pub fn auction_candidates(&self) -> Vec<crate::auctions::Candidate> {
        self.candidates
            .iter()
            .map(|c| crate::auctions::Candidate {
                uprn: c.uprn,
                address: c.address.clone(),
                postcode: c.postcode.clone(),
                district: c.district,
            })
            .collect()
    }

    /// Takes a register dwelling in district `district` and its certificates' fields.
    pub fn dwelling(
        &mut self,
        r: &AddressRecord,
        d: &Dwelling,
        district: usize,
        certs: &[Certificate],
    ) {
        let rating = certs
            .iter()
            .max_by(|a, b| a.fields[self.lodged_col].cmp(&b.fields[self.lodged_col]))
            .map(|c| c.fields[self.rating_col].clone());
        self.candidates.push(Candidate {
            uprn: r.uprn,
            address: listing_address(r),
            postcode: r.postcode.clone(),
            district,
            ptype: d.property_type,
            bungalow: d.bungalow,
            area: d.floor_area_m2,
            bedrooms: bedrooms(d),
            rating,
        });
    }

    /// Writes the feed. `value_level[d]` is base price times the latest index level / 100.
    pub fn write(
        self,
        out_dir: &Path,
        seed: u64,
        codes: &[String],
        value_level: &[f64],
    ) -> io::Result<(FileStat, ListingCases)> {
        let mut rng = Rng::derive(seed ^ LISTINGS_SEED_XOR, "listings", 0);
        let mut pool = self.candidates;
        rng.shuffle(&mut pool);
        let mut used = vec![false; pool.len()];
        // (candidate, is_rent, forced uprn)
        let mut chosen: Vec<(usize, bool, bool)> = Vec::new();

        // Districts with the most two-bedroom dwellings get the guaranteed lets.
        let mut two_bed: Vec<(usize, usize)> = (0..codes.len())
            .map(|d| {
                let n = pool
                    .iter()
                    .filter(|c| c.district == d && c.bedrooms == 2)
                    .count();
                (d, n)
            })
            .collect();
        two_bed.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        for &(d, _) in two_bed.iter().take(TWO_BED_DISTRICTS) {
            let mut n = 0;
            for (i, c) in pool.iter().enumerate() {
                if n == TWO_BED_LETS {
                    break;
                }
                if !used[i] && c.district == d && c.bedrooms == 2 {
                    used[i] = true;
                    chosen.push((i, true, false));
                    n += 1;
                }
            }
        }
        let mut n = 0;
        for (i, c) in pool.iter().enumerate() {
            if n == F_OR_G_LETS {
                break;
            }
            if !used[i] && matches!(c.rating.as_deref(), Some("F" | "G")) {
                used[i] = true;
                chosen.push((i, true, true));
                n += 1;
            }
        }
        let rents = (LISTINGS as f64 * (1.0 - SALE_SHARE)).round() as usize;
        let mut rent_left = rents.saturating_sub(chosen.len());
        let mut sale_left = LISTINGS - rents;
        for i in 0..pool.len() {
            if rent_left + sale_left == 0 {
                break;
            }
            if used[i] {
                continue;
            }
            // Rentals lean to flats and terraces.
            let c = &pool[i];
            let rent_p = match c.ptype {
                PropertyType::Flat => 0.6,
                PropertyType::Terraced => 0.45,
                PropertyType::SemiDetached | PropertyType::Detached => 0.25,
            };
            let rent = if rent_left == 0 {
                false
            } else if sale_left == 0 {
                true
            } else {
                rng.chance(rent_p)
            };
            used[i] = true;
            chosen.push((i, rent, false));
            if rent {
                rent_left -= 1;
            } else {
                sale_left -= 1;
            }
        }

        let start = NaiveDate::from_ymd_opt(2026, 9, 5).unwrap_or_default();
        let last = NaiveDate::from_ymd_opt(2026, 11, 15)
            .unwrap_or_default()
            .and_time(NaiveTime::from_hms_opt(23, 59, 0).unwrap_or_default());
        let mut next_id = 40_000_000 + rng.below(9_000_000);
        let mut listings = Vec::with_capacity(chosen.len());
        for &(i, rent, forced_uprn) in &chosen {
            let c = &pool[i];
            next_id += 1 + rng.below(40);
            let type_factor = match c.ptype {
                PropertyType::Detached => 1.15,
                PropertyType::SemiDetached => 1.0,
                PropertyType::Terraced => 0.92,
                PropertyType::Flat => 0.85,
            };
            let e = rng.normal();
            let value = value_level[c.district]
                * type_factor
                * det_pow(c.area / 90.0, 0.75)
                * det_exp(0.12 * e)
                * 1.03;
            let mut price = if rent {
                let poor = matches!(c.rating.as_deref(), Some("F" | "G"));
                let pcm = value * 0.05 / 12.0 * if poor { 0.92 } else { 1.0 };
                ((pcm / 25.0).round() * 25.0).clamp(600.0, 2_000.0) as u64
            } else {
                (((value / 5_000.0).round() * 5_000.0) as u64).max(50_000)
            };
            let day = rng.below(62);
            let mut t = (start + Days::new(day))
                .and_time(NaiveTime::from_hms_opt(0, 0, 0).unwrap_or_default())
                + chrono::Duration::minutes(8 * 60 + rng.below(12 * 60) as i64);
            let first_seen = stamp(t);
            let mut snaps = vec![Snapshot {
                time: first_seen.clone(),
                price,
                status: "available",
            }];
            let count = 1 + rng.below(5) as usize;
            let mut status = "available";
            while snaps.len() < count {
                t = (t.date() + Days::new(3 + rng.below(14)))
                    .and_time(NaiveTime::from_hms_opt(0, 0, 0).unwrap_or_default())
                    + chrono::Duration::minutes(7 * 60 + rng.below(14 * 60) as i64);
                if t > last {
                    break;
                }
                let u = rng.f64();
                let step = |p: u64, down: bool, rng: &mut Rng| -> u64 {
                    if rent {
                        let d = 25 * (1 + rng.below(4));
                        if down {
                            p.saturating_sub(d).max(575)
                        } else {
                            p + d
                        }
                    } else {
                        let d = ((p as f64 * (0.02 + 0.05 * rng.f64())) / 5_000.0).round() as u64;
                        let d = 5_000 * d.max(1);
                        if down {
                            p.saturating_sub(d).max(45_000)
                        } else {
                            p + d
                        }
                    }
                };
                match status {
                    "available" => {
                        if u < 0.35 {
                            price = step(price, true, &mut rng);
                        } else if u < 0.40 {
                            price = step(price, false, &mut rng);
                        } else if u < 0.72 {
                            status = "under_offer";
                        } else if u < 0.80 {
                            status = if rent { "let_agreed" } else { "sold_stc" };
                        } else if u < 0.84 {
                            status = "withdrawn";
                        }
                    }
                    "under_offer" => {
                        if u < 0.6 {
                            status = if rent { "let_agreed" } else { "sold_stc" };
                        } else if u < 0.8 {
                            status = "available";
                            if rng.chance(0.5) {
                                price = step(price, true, &mut rng);
                            }
                        }
                    }
                    _ => break,
                }
                snaps.push(Snapshot {
                    time: stamp(t),
                    price,
                    status,
                });
            }
            let with_uprn = forced_uprn || rng.chance(0.85);
            listings.push((
                c.district,
                Listing {
                    listing_id: format!("XTL{next_id}"),
                    channel: if rent { "rent" } else { "sale" },
                    address: c.address.clone(),
                    postcode: c.postcode.clone(),
                    uprn: with_uprn.then_some(c.uprn),
                    price: snaps[0].price,
                    bedrooms: c.bedrooms,
                    property_type: type_label(c.ptype, c.bungalow),
                    agent: AGENTS[rng.below(AGENTS.len() as u64) as usize],
                    first_seen,
                    snapshots: snaps,
                },
                c.rating.clone(),
            ));
        }
        // An append-only feed: in order of first sighting.
        listings.sort_by(|a, b| {
            (a.1.first_seen.as_str(), a.1.listing_id.as_str())
                .cmp(&(b.1.first_seen.as_str(), b.1.listing_id.as_str()))
        });

        let mut cases = ListingCases {
            note: "price_reductions: listings whose price falls between snapshots; \
                   rent_districts_with_6_two_bed: districts with at least six two-bedroom \
                   rental listings; f_or_g_lets: UPRNs of rental listings whose latest EPC \
                   (by lodgement date) is rated F or G."
                .into(),
            ..ListingCases::default()
        };
        let mut two_bed_lets = vec![0usize; codes.len()];
        let mut f = LineFile::create(out_dir, LISTINGS_FILE, Eol::Lf)?;
        for (d, l, rating) in &listings {
            if l.snapshots.windows(2).any(|w| w[1].price < w[0].price) {
                cases.price_reductions.push(l.listing_id.clone());
            }
            if l.channel == "rent" {
                if l.bedrooms == 2 {
                    two_bed_lets[*d] += 1;
                }
                if let (Some(u), Some("F" | "G")) = (l.uprn, rating.as_deref()) {
                    cases.f_or_g_lets.push(u);
                }
            }
            f.raw_row(&serde_json::to_string(l).map_err(io::Error::other)?)?;
        }
        cases.rent_districts_with_6_two_bed = codes
            .iter()
            .zip(&two_bed_lets)
            .filter(|(_, n)| **n >= 6)
            .map(|(c, _)| c.clone())
            .collect();
        cases.f_or_g_lets.sort_unstable();
        Ok((f.finish()?, cases))
    }
}

/// The Real Time Data Feed history: weekly sweeps from this Monday.
pub const RTDF_FILE: &str = "listings/rtdf_history.jsonl";
/// Two consecutive weekly BLM files of one branch.
pub const BLM_FILES: [&str; 2] = [
    "listings/blm/branch_3301_2026-11-09.blm",
    "listings/blm/branch_3301_2026-11-16.blm",
];
/// From November 2021, so an index based at January 2022 has its base month observed.
const HISTORY_START: (i32, u32, u32) = (2021, 11, 1);
const HISTORY_WEEKS: u64 = 264;
const HISTORY_LISTINGS: usize = 1_500;
const HISTORY_SEED_XOR: u64 = 0x4C15_7E16_0A15_7001;
/// RTDF branches: (network, branch, channel 1 sales / 2 lettings).
const RTDF_BRANCHES: [(u32, u32, u8); 7] = [
    (71, 1101, 1),
    (71, 1102, 1),
    (72, 1201, 1),
    (73, 1301, 1),
    (71, 2101, 2),
    (72, 2201, 2),
    (73, 2301, 2),
];

/// The Rightmove type code of a dwelling.
fn type_code(ptype: PropertyType, bungalow: bool) -> u32 {
    match ptype {
        PropertyType::Flat => 8,
        PropertyType::Terraced => 1,
        PropertyType::SemiDetached => 3,
        PropertyType::Detached if bungalow => 12,
        PropertyType::Detached => 4,
    }
}

fn type_factor(ptype: PropertyType) -> f64 {
    match ptype {
        PropertyType::Detached => 1.15,
        PropertyType::SemiDetached => 1.0,
        PropertyType::Terraced => 0.92,
        PropertyType::Flat => 0.85,
    }
}

/// "Flat 2, 10" / "High Street": the house name or number line and the street line.
fn split_address(a: &str) -> (String, String, String) {
    let parts: Vec<&str> = a.split(", ").collect();
    let town = parts.last().copied().unwrap_or_default().to_string();
    let head = &parts[..parts.len().saturating_sub(1)];
    match head {
        [] => (String::new(), String::new(), town),
        [one] => match one.split_once(' ') {
            Some((n, street)) if n.chars().next().is_some_and(|c| c.is_ascii_digit()) => {
                (n.to_string(), street.to_string(), town)
            }
            _ => (one.to_string(), String::new(), town),
        },
        [first, rest @ ..] => (first.to_string(), rest.join(", "), town),
    }
}

fn rtdf_stamp(t: NaiveDateTime) -> String {
    t.format("%d-%m-%Y %H:%M:%S").to_string()
}

impl Listings {
    /// Writes the industry-format history: the Real Time Data Feed requests of 1,500 listings
    /// over 264 weekly sweeps from 2021-11-01 (sales and lettings, reductions, offers, sales,
    /// withdrawals and relists, removals with their reasons, seven branches of three networks),
    /// and two weekly BLM files of one branch. Asking prices are drawn from the same true values
    /// as the sales: `base_price[d]` × the true index level of the month first listed / 100 ×
    /// the dwelling's type and size × a lognormal spread × the asking premium. No UPRN is
    /// written: the address matcher links them.
    pub fn write_history(
        &self,
        out_dir: &Path,
        seed: u64,
        base_price: &[f64],
        index: &crate::index::TrueIndex,
    ) -> io::Result<Vec<FileStat>> {
        let mut rng = Rng::derive(seed ^ HISTORY_SEED_XOR, "listing-history", 0);
        let mut pool: Vec<&Candidate> = self.candidates.iter().collect();
        rng.shuffle(&mut pool);
        let start = NaiveDate::from_ymd_opt(HISTORY_START.0, HISTORY_START.1, HISTORY_START.2)
            .unwrap_or_default();
        let sweep = |w: u64, minutes: u64| {
            (start + Days::new(7 * w))
                .and_time(NaiveTime::from_hms_opt(6, 0, 0).unwrap_or_default())
                + chrono::Duration::minutes(minutes as i64)
        };
        // (time, agent_ref, request)
        let mut lines: Vec<(NaiveDateTime, String, serde_json::Value)> = Vec::new();
        for (k, c) in pool.iter().take(HISTORY_LISTINGS).enumerate() {
            let rent_p = match c.ptype {
                PropertyType::Flat => 0.55,
                PropertyType::Terraced => 0.4,
                PropertyType::SemiDetached | PropertyType::Detached => 0.2,
            };
            let rent = rng.chance(rent_p);
            let branches: Vec<&(u32, u32, u8)> = RTDF_BRANCHES
                .iter()
                .filter(|b| b.2 == if rent { 2 } else { 1 })
                .collect();
            let &&(network, branch, channel) = &branches[rng.below(branches.len() as u64) as usize];
            let agent_ref = format!("{branch}_H{k:05}");
            let w0 = rng.below(HISTORY_WEEKS - 1);
            let listed = start + Days::new(7 * w0);
            let e = rng.normal();
            let value = base_price[c.district] * index.level(c.district, listed) / 100.0
                * type_factor(c.ptype)
                * det_pow(c.area / 90.0, 0.75)
                * det_exp(0.12 * e)
                * 1.03;
            let mut price = if rent {
                ((value * 0.05 / 12.0 / 25.0).round() * 25.0).clamp(500.0, 2_500.0) as u64
            } else {
                (((value / 5_000.0).round() * 5_000.0) as u64).max(50_000)
            };
            let weekly_rent = rent && rng.chance(0.1);
            let flat = c.ptype == PropertyType::Flat;
            let area_given = rng.chance(0.7);
            let new_home = rng.chance(0.05);
            let unexpired = if flat {
                Some(60 + rng.below(940))
            } else {
                None
            };
            let (house, street, town) = split_address(&c.address);
            let (pc1, pc2) = c.postcode.split_once(' ').unwrap_or((&c.postcode, ""));
            let send = |t: NaiveDateTime, price: u64, status: u8| {
                let mut prices = serde_json::json!({
                    "price": if weekly_rent { (price * 12 + 26) / 52 } else { price },
                });
                if rent {
                    prices["rent_frequency"] = serde_json::json!(if weekly_rent { 52 } else { 12 });
                } else {
                    prices["tenure_type"] = serde_json::json!(if flat { 2 } else { 1 });
                    if let Some(y) = unexpired {
                        prices["tenure_unexpired_years"] = serde_json::json!(y);
                    }
                }
                let mut details = serde_json::json!({"bedrooms": c.bedrooms});
                if area_given {
                    details["internal_area"] = serde_json::json!((c.area * 10.0).round() / 10.0);
                    details["internal_area_unit"] = serde_json::json!(2);
                }
                serde_json::json!({
                    "received_at": stamp(t),
                    "method": "sendpropertydetails",
                    "network": {"network_id": network},
                    "branch": {"branch_id": branch, "channel": channel},
                    "property": {
                        "agent_ref": agent_ref,
                        "property_type": type_code(c.ptype, c.bungalow),
                        "status": status,
                        "new_home": new_home,
                        "update_date": rtdf_stamp(t),
                        "address": {
                            "house_name_number": house,
                            "address_2": street,
                            "town": town,
                            "postcode_1": pc1,
                            "postcode_2": pc2,
                        },
                        "price_information": prices,
                        "details": details,
                    }
                })
            };
            let remove = |t: NaiveDateTime, reason: u8| {
                serde_json::json!({
                    "received_at": stamp(t),
                    "method": "removeproperty",
                    "network": {"network_id": network},
                    "branch": {"branch_id": branch, "channel": channel},
                    "property": {"agent_ref": agent_ref, "removal_reason": reason},
                })
            };
            let mut w = w0;
            let mut t = sweep(w, rng.below(600));
            lines.push((t, agent_ref.clone(), send(t, price, 1)));
            // 1 available, 4 under offer, 2 sold STC, 6 let agreed
            let mut status = 1u8;
            loop {
                w += 1 + rng.below(2);
                if w >= HISTORY_WEEKS {
                    break;
                }
                t = sweep(w, rng.below(600));
                let u = rng.f64();
                match status {
                    1 => {
                        if u < 0.12 {
                            let cut = if rent {
                                25 * (1 + rng.below(4))
                            } else {
                                5_000
                                    * (((price as f64) * (0.02 + 0.04 * rng.f64()) / 5_000.0)
                                        .round() as u64)
                                        .max(1)
                            };
                            price = price
                                .saturating_sub(cut)
                                .max(if rent { 450 } else { 45_000 });
                            lines.push((t, agent_ref.clone(), send(t, price, 1)));
                        } else if u < 0.24 {
                            status = if rent { 6 } else { 4 };
                            lines.push((t, agent_ref.clone(), send(t, price, status)));
                        } else if u < 0.27 {
                            // withdrawn, perhaps relisted lower some weeks later
                            lines.push((t, agent_ref.clone(), remove(t, 9)));
                            if !rng.chance(0.5) {
                                break;
                            }
                            w += 3 + rng.below(8);
                            if w >= HISTORY_WEEKS {
                                break;
                            }
                            t = sweep(w, rng.below(600));
                            price = if rent {
                                price.saturating_sub(50).max(450)
                            } else {
                                price.saturating_sub(10_000).max(45_000)
                            };
                            lines.push((t, agent_ref.clone(), send(t, price, 1)));
                        }
                    }
                    4 => {
                        if u < 0.4 {
                            status = 2;
                            lines.push((t, agent_ref.clone(), send(t, price, status)));
                        } else if u < 0.55 {
                            status = 1;
                            lines.push((t, agent_ref.clone(), send(t, price, status)));
                        }
                    }
                    2 => {
                        if u < 0.3 {
                            let reason = if rng.chance(0.9) { 7 } else { 8 };
                            lines.push((t, agent_ref.clone(), remove(t, reason)));
                            break;
                        }
                    }
                    _ => {
                        if u < 0.5 {
                            lines.push((t, agent_ref.clone(), remove(t, 12)));
                            break;
                        }
                    }
                }
            }
        }
        lines.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        let mut f = LineFile::create(out_dir, RTDF_FILE, Eol::Lf)?;
        for (_, _, v) in &lines {
            f.raw_row(&serde_json::to_string(v).map_err(io::Error::other)?)?;
        }
        let mut stats = vec![f.finish()?];

        // One branch's full BLM feed, two weeks running: the second cuts three prices, drops
        // two listings and adds two.
        let columns = "AGENT_REF^ADDRESS_1^ADDRESS_2^ADDRESS_3^ADDRESS_4^TOWN^POSTCODE1^POSTCODE2^FEATURE1^SUMMARY^DESCRIPTION^BRANCH_ID^STATUS_ID^BEDROOMS^PRICE^PRICE_QUALIFIER^PROP_SUB_ID^CREATE_DATE^UPDATE_DATE^DISPLAY_ADDRESS^PUBLISHED_FLAG^LET_RENT_FREQUENCY^TRANS_TYPE_ID^NEW_HOME_FLAG^~";
        let chosen: Vec<&Candidate> = pool
            .iter()
            .skip(HISTORY_LISTINGS)
            .take(26)
            .copied()
            .collect();
        let level_end =
            |d: usize| base_price[d] * index.level(d, start + Days::new(7 * HISTORY_WEEKS)) / 100.0;
        let prices: Vec<u64> = chosen
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let v = level_end(c.district)
                    * type_factor(c.ptype)
                    * det_pow(c.area / 90.0, 0.75)
                    * 1.03;
                if i % 3 == 2 {
                    ((v * 0.05 / 12.0 / 25.0).round() * 25.0).clamp(500.0, 2_500.0) as u64
                } else {
                    (((v / 5_000.0).round() * 5_000.0) as u64).max(50_000)
                }
            })
            .collect();
        for (week, rel) in BLM_FILES.iter().enumerate() {
            let generated = sweep(HISTORY_WEEKS - 2 + week as u64, 120);
            let mut text = format!(
                "#HEADER#\nVersion : 3\nEOF : '^'\nEOR : '~'\nProperty Count : {}\nGenerated Date : {}\n\n#DEFINITION#\n{columns}\n\n#DATA#\n",
                24,
                generated.format("%d-%b-%Y %H:%M")
            );
            let mut rows = 0u64;
            for (i, c) in chosen.iter().enumerate() {
                // the first week lists 0..24, the second 2..26
                if (week == 0 && i >= 24) || (week == 1 && i < 2) {
                    continue;
                }
                let let_ = i % 3 == 2;
                let mut p = prices[i];
                if week == 1 && (5..8).contains(&i) {
                    p = if let_ { p - 50 } else { p - 5_000 };
                }
                let (house, street, town) = split_address(&c.address);
                let (pc1, pc2) = c.postcode.split_once(' ').unwrap_or((&c.postcode, ""));
                let status = if i % 7 == 3 {
                    if let_ { 5 } else { 1 }
                } else {
                    0
                };
                let fields = [
                    format!("3301_B{i:03}"),
                    house.clone(),
                    street.clone(),
                    String::new(),
                    String::new(),
                    town.clone(),
                    pc1.to_string(),
                    pc2.to_string(),
                    "Gas central heating".into(),
                    format!("A {}-bedroom home", c.bedrooms),
                    format!("A {}-bedroom home in {town}.", c.bedrooms),
                    "3301".into(),
                    status.to_string(),
                    c.bedrooms.to_string(),
                    p.to_string(),
                    "0".into(),
                    type_code(c.ptype, c.bungalow).to_string(),
                    "2026-10-01 09:00:00".into(),
                    generated.format("%Y-%m-%d %H:%M:%S").to_string(),
                    format!("{street}, {town}"),
                    "1".into(),
                    if let_ { "1".into() } else { String::new() },
                    if let_ { "2".into() } else { "1".into() },
                    "N".into(),
                ];
                text.push_str(&fields.join("^"));
                text.push_str("^~\n");
                rows += 1;
            }
            text.push_str("#END#\n");
            let path = out_dir.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, text.as_bytes())?;
            stats.push(FileStat {
                rel: (*rel).to_string(),
                rows,
                bytes: text.len() as u64,
            });
        }
        Ok(stats)
    }
}
