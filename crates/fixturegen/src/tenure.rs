//! HM Land Registry registered leases and a council tax valuation list for the register's
//! dwellings, written as the addresses stream past.
//!
//! Both draw only from their own PRNG streams (`Rng::derive(seed ^ TENURE_SEED_XOR, ..)`), so the
//! other fixture files are byte-identical with or without them.
//!
//! Lease terms are chosen so each case stays in its band for any "today" from the generator's
//! end date (2026-06-30) to the end of 2027:
//! - long: 999 years (>= 900 years unexpired);
//! - ordinary: 125 years from 2004-2025 (100-125 years unexpired);
//! - short: 99 years from 1990-2003 (ends 2088-2102: 60-80 years unexpired);
//! - very short: 99 years from 1935-1960 or 80 years from 1975-1993 (under 60 years unexpired,
//!   none yet expired);
//! - unreadable: free text the term parser cannot read.

use crate::epc::title;
use crate::out::{Eol, FileStat, LineFile};
use crate::rng::Rng;
use crate::world::{AddressRecord, PropertyType};
use chrono::{Datelike, Days, Months, NaiveDate};
use serde::Serialize;
use std::io;
use std::path::Path;

pub const LEASES_FILE: &str = "leases/leases_fixture.csv";
pub const COUNCIL_TAX_FILE: &str = "council_tax/council_tax_fixture.csv";
pub const LEASES_HEADER: &str = "Unique Identifier,Tenure,Register Property Description,County,Region,Associated Property Description ID,Associated Property Description,OS UPRN,Price Paid,Reg Order,Date of Lease,Term,Alienation Clause Indicator";
pub const COUNCIL_TAX_HEADER: &str = "billing_authority,reference,address,postcode,band";

/// Mixed into the seed for these streams, keeping them apart from every existing one.
const TENURE_SEED_XOR: u64 = 0x7E4A_5E5C_0C7A_0001;

/// Leases (0-based, in file order) whose term is written as text nobody can read.
const UNREADABLE_AT: [u64; 4] = [7, 113, 301, 509];
const UNREADABLE_TERMS: [&str; 4] = [
    "for the life of the tenant",
    "see lease",
    "99 years from the date of the lease",
    "determinable on the death of the lessee",
];
/// Residential postcodes (0-based, in register order) with no council tax entry at all.
const UNLISTED_AT: [u64; 3] = [11, 83, 157];
/// Residential postcodes that get an extra entry the matcher cannot link (not in `UNLISTED_AT`).
const ANNEXE_AT: u64 = 23;
const STORE_AT: u64 = 97;
/// The caretaker's flat goes in the first block of flats at or after this residential postcode.
const CARETAKER_FROM: u64 = 60;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeaseEnd {
    pub uprn: u64,
    /// Last day of the term (`start + years - less days - 1 day`).
    pub term_end: String,
}

/// Leases of each kind, by UPRN (only leases whose `OS UPRN` is filled in).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LeaseCases {
    pub note: String,
    /// 999-year terms: 900+ years unexpired.
    pub long: Vec<u64>,
    /// 60-80 years unexpired from 2026-06-30 to 2027-12-31.
    pub short: Vec<LeaseEnd>,
    /// Under 60 years unexpired (not yet expired) from 2026-06-30 to 2027-12-31.
    pub very_short: Vec<LeaseEnd>,
    /// Term text the parser cannot read.
    pub unreadable: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnlinkedEntry {
    pub reference: String,
    pub postcode: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CouncilTaxCases {
    pub note: String,
    /// Entries for no register address (an annexe, a store, a caretaker's flat).
    pub unlinked_entries: Vec<UnlinkedEntry>,
    /// Dwellings at postcodes with no entry in the list at all.
    pub unlisted_uprns: Vec<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Long,
    Ordinary,
    Short,
    VeryShort,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Quarter days and other usual term starts: (month, day).
const TERM_STARTS: [(u32, u32); 6] = [(1, 1), (3, 25), (6, 24), (9, 29), (12, 25), (4, 1)];

fn long_date(d: NaiveDate) -> String {
    format!("{} {} {}", d.day(), MONTHS[d.month0() as usize], d.year())
}

fn dotted_date(d: NaiveDate) -> String {
    format!("{}.{}.{}", d.day(), d.month(), d.year())
}

fn ymd(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap_or_default()
}

/// Last day of a term of `years` less `less` days from `start` (as the leases parser reads it).
fn term_end(start: NaiveDate, years: u32, less: u32) -> NaiveDate {
    let mut a = start
        .checked_add_months(Months::new(years * 12))
        .unwrap_or(NaiveDate::MAX);
    if start.month() == 2 && start.day() == 29 && a.day() == 28 {
        a = a.succ_opt().unwrap_or(a);
    }
    a.checked_sub_days(Days::new(u64::from(less) + 1))
        .unwrap_or(a)
}

fn ordinal(n: i32) -> String {
    match n {
        0 => "ground".into(),
        1 => "first".into(),
        2 => "second".into(),
        3 => "third".into(),
        4 => "fourth".into(),
        5 => "fifth".into(),
        n => format!("{n}th"),
    }
}

/// A council list's address: "FLAT 2, 10 HIGH STREET, TAMBERLEY" (no postcode).
pub(crate) fn council_address(r: &AddressRecord) -> String {
    let mut parts = Vec::new();
    let sao = r.sao_label();
    if !sao.is_empty() {
        parts.push(sao);
    }
    let pao = r.pao_label();
    match (r.pao_text.is_some(), r.pao_start_number.is_some()) {
        (false, true) => parts.push(format!("{pao} {}", r.street)),
        _ => {
            if !pao.is_empty() {
                parts.push(pao);
            }
            parts.push(r.street.clone());
        }
    }
    if let Some(l) = &r.locality {
        parts.push(l.clone());
    }
    parts.push(r.town.clone());
    parts.join(", ")
}

pub struct Tenure {
    leases: LineFile,
    ct: LineFile,
    lrng: Rng,
    crng: Rng,
    end: NaiveDate,
    lease_count: u64,
    next_ref: u64,
    postcode: String,
    postcode_index: Option<u64>,
    unlisted: bool,
    caretaker_done: bool,
    pub lease_cases: LeaseCases,
    pub ct_cases: CouncilTaxCases,
}

impl Tenure {
    pub fn create(out_dir: &Path, seed: u64, end: NaiveDate) -> io::Result<Tenure> {
        let mut leases = LineFile::create(out_dir, LEASES_FILE, Eol::Lf)?;
        leases.header(LEASES_HEADER)?;
        let mut ct = LineFile::create(out_dir, COUNCIL_TAX_FILE, Eol::Lf)?;
        ct.header(COUNCIL_TAX_HEADER)?;
        let mut crng = Rng::derive(seed ^ TENURE_SEED_XOR, "council_tax", 0);
        let next_ref = 10_000_000 + crng.below(5_000_000);
        Ok(Tenure {
            leases,
            ct,
            lrng: Rng::derive(seed ^ TENURE_SEED_XOR, "leases", 0),
            crng,
            end,
            lease_count: 0,
            next_ref,
            postcode: String::new(),
            postcode_index: None,
            unlisted: false,
            caretaker_done: false,
            lease_cases: LeaseCases {
                note: "UPRNs of leases by unexpired term, for any date from 2026-06-30 to \
                       2027-12-31: long >= 900 years, short 60-80 years, very_short under 60 \
                       years (term_end is the last day of the term); unreadable: a term text \
                       that cannot be read. Listed only where OS UPRN is filled in."
                    .into(),
                ..LeaseCases::default()
            },
            ct_cases: CouncilTaxCases {
                note: "unlinked_entries describe no register address; unlisted_uprns are \
                       dwellings at postcodes with no council tax entry at all."
                    .into(),
                ..CouncilTaxCases::default()
            },
        })
    }

    /// Takes the next register record (in register order); `county` is the authority's name in
    /// upper case.
    pub fn address(&mut self, r: &AddressRecord, county: &str) -> io::Result<()> {
        let Some(dw) = &r.dwelling else {
            return Ok(());
        };
        self.council_tax(r, dw.property_type, dw.floor_area_m2)?;
        if r.class == "RD06" {
            self.lease(r, dw.built_year, dw.floor_level.unwrap_or(0), county)?;
        }
        Ok(())
    }

    fn reference(&mut self) -> String {
        self.next_ref += 1 + self.crng.below(3);
        format!("CT{}", self.next_ref)
    }

    fn council_tax(&mut self, r: &AddressRecord, ptype: PropertyType, area: f64) -> io::Result<()> {
        if r.postcode != self.postcode {
            self.postcode.clone_from(&r.postcode);
            let i = self.postcode_index.map_or(0, |i| i + 1);
            self.postcode_index = Some(i);
            self.unlisted = UNLISTED_AT.contains(&i);
            let extra = if i == ANNEXE_AT {
                Some("ANNEXE REAR OF THE OLD SMITHY")
            } else if i == STORE_AT {
                Some("STORE ADJ VILLAGE HALL")
            } else {
                None
            };
            if let Some(what) = extra {
                let address = format!("{what}, {}, {}", r.street, r.town);
                self.extra_entry(r, &address, "A")?;
            }
        }
        let i = self.postcode_index.unwrap_or(0);
        if !self.caretaker_done && i >= CARETAKER_FROM && !self.unlisted && r.class == "RD06" {
            self.caretaker_done = true;
            let block = match (&r.pao_text, r.pao_start_number) {
                (Some(_), _) => format!("{}, {}", r.pao_label(), r.street),
                (None, _) => format!("{} {}", r.pao_label(), r.street),
            };
            let address = format!("CARETAKERS FLAT, {block}, {}", r.town);
            self.extra_entry(r, &address, "A")?;
        }
        if self.unlisted {
            self.ct_cases.unlisted_uprns.push(r.uprn);
            return Ok(());
        }
        // Bands by dwelling type, nudged by size: flats A-C, terraced B-D, semis C-E,
        // detached D-G.
        let (lo, hi, small, large) = match ptype {
            PropertyType::Flat => (0u8, 2u8, 50.0, 75.0),
            PropertyType::Terraced => (1, 3, 75.0, 100.0),
            PropertyType::SemiDetached => (2, 4, 85.0, 115.0),
            PropertyType::Detached => (3, 6, 110.0, 150.0),
        };
        let mut b = i64::from(lo) + 1;
        if area < small {
            b -= 1;
        }
        if area > large {
            b += 1;
        }
        if ptype == PropertyType::Detached && area > 190.0 {
            b += 1;
        }
        b += self.crng.range_i64(-1, 1) * i64::from(self.crng.chance(0.25));
        let b = b.clamp(i64::from(lo), i64::from(hi)) as u8;
        let band = char::from(b'A' + b).to_string();
        let reference = self.reference();
        self.ct.row_minimal(&[
            r.lad_code,
            &reference,
            &council_address(r),
            &r.postcode,
            &band,
        ])
    }

    fn extra_entry(&mut self, r: &AddressRecord, address: &str, band: &str) -> io::Result<()> {
        let reference = self.reference();
        self.ct
            .row_minimal(&[r.lad_code, &reference, address, &r.postcode, band])?;
        self.ct_cases.unlinked_entries.push(UnlinkedEntry {
            reference,
            postcode: r.postcode.clone(),
        });
        Ok(())
    }

    fn lease(&mut self, r: &AddressRecord, built: i32, floor: i32, county: &str) -> io::Result<()> {
        let rng = &mut self.lrng;
        let unreadable = UNREADABLE_AT
            .iter()
            .position(|&k| k == self.lease_count)
            .map(|i| UNREADABLE_TERMS[i]);
        // Most flats are registered leaseholds; the rest have no registered lease here.
        if unreadable.is_none() && !rng.chance(0.92) {
            return Ok(());
        }
        self.lease_count += 1;
        let end_year = self.end.year();
        let mut date_of_lease: Option<NaiveDate>;
        let term_text: String;
        let mut kind = None;
        let mut last_day = None;
        if let Some(text) = unreadable {
            let y = rng.range_i64(i64::from(built.max(1970)), i64::from(end_year - 1)) as i32;
            let d = ymd(y, 1, 1) + Days::new(rng.below(360));
            // "from the date of the lease" with no date of lease given cannot be read
            date_of_lease = (!text.contains("date of the lease")).then_some(d);
            term_text = text.to_string();
        } else {
            let mut weights = [0.22, 0.43, 0.0, 0.0];
            if built <= 2003 {
                weights[2] = 0.2;
            }
            if built <= 1993 {
                weights[3] = 0.15;
            }
            let k =
                [Kind::Long, Kind::Ordinary, Kind::Short, Kind::VeryShort][rng.weighted(&weights)];
            let (years, y0, y1) = match k {
                Kind::Long => (999u32, built.max(1960).min(end_year - 1), end_year - 1),
                Kind::Ordinary => (125, built.max(2004).min(end_year - 1), end_year - 1),
                Kind::Short => (99, built.max(1990), 2003),
                Kind::VeryShort => {
                    if rng.chance(0.5) && built <= 1960 {
                        (99, built.max(1935), 1960)
                    } else {
                        (80, built.max(1975), 1993)
                    }
                }
            };
            let y = rng.range_i64(i64::from(y0), i64::from(y1.max(y0))) as i32;
            let (m, d) = *rng.pick(&TERM_STARTS);
            let mut start = ymd(y, m, d);
            let mut lease_date = start + Days::new(rng.below(400));
            if lease_date > self.end {
                lease_date = self.end - Days::new(rng.below(60));
            }
            let less = if rng.chance(0.15) { 3 } else { 0 };
            let form = rng.below(5);
            let text = match form {
                0 if less == 0 => {
                    format!("{years} years from and including {}", dotted_date(start))
                }
                1 if less == 0 => {
                    let end = term_end(start, years, 0);
                    format!("from {} to {}", long_date(start), long_date(end))
                }
                2 if less == 0 && k == Kind::Long => {
                    start = lease_date;
                    format!("{years} years from the date of the lease")
                }
                3 if less == 0 => format!("from {} for {years} years", long_date(start)),
                _ if less > 0 => {
                    format!("{years} years less {less} days from {}", long_date(start))
                }
                _ => format!("{years} years from {}", long_date(start)),
            };
            date_of_lease = Some(lease_date);
            term_text = text;
            kind = Some(k);
            last_day = Some(term_end(start, years, less));
        }
        // A few leases have no date of lease recorded (not those that run from it).
        if date_of_lease.is_some() && !term_text.contains("date of the lease") && rng.chance(0.03) {
            date_of_lease = None;
        }
        let with_uprn = unreadable.is_some() || !rng.chance(0.1);
        let price = if rng.chance(0.35) {
            let p = 45_000.0 + rng.f64() * 260_000.0;
            ((p / 250.0).round() * 250.0) as u64
        } else {
            0
        };
        let alienation = if rng.chance(0.7) { "Y" } else { "N" };
        let id = format!("{:016X}{:08X}", rng.next_u64(), rng.next_u64() >> 32);
        let line1 = match (&r.pao_text, r.pao_start_number) {
            (Some(_), _) => format!("{}, {}", title(&r.pao_label()), title(&r.street)),
            (None, _) => format!("{} {}", r.pao_label(), title(&r.street)),
        };
        let register = format!(
            "{}, {line1}, {} ({})",
            title(&r.sao_label()),
            title(&r.town),
            r.postcode
        );
        let associated = format!("{} on the {} floor", title(&r.sao_label()), ordinal(floor));
        let fields = [
            id,
            "Leasehold".to_string(),
            register,
            county.to_string(),
            "SOUTH WEST".to_string(),
            "1".to_string(),
            associated,
            if with_uprn {
                r.uprn.to_string()
            } else {
                String::new()
            },
            if price > 0 {
                price.to_string()
            } else {
                String::new()
            },
            "1".to_string(),
            date_of_lease
                .map(|d| d.format("%d-%m-%Y").to_string())
                .unwrap_or_default(),
            term_text,
            alienation.to_string(),
        ];
        self.leases.row_minimal(&fields)?;
        if !with_uprn {
            return Ok(());
        }
        let c = &mut self.lease_cases;
        match (kind, last_day) {
            (None, _) => c.unreadable.push(r.uprn),
            (Some(Kind::Long), _) => c.long.push(r.uprn),
            (Some(Kind::Short), Some(e)) => c.short.push(LeaseEnd {
                uprn: r.uprn,
                term_end: e.format("%Y-%m-%d").to_string(),
            }),
            (Some(Kind::VeryShort), Some(e)) => c.very_short.push(LeaseEnd {
                uprn: r.uprn,
                term_end: e.format("%Y-%m-%d").to_string(),
            }),
            _ => {}
        }
        Ok(())
    }

    pub fn finish(self) -> io::Result<(FileStat, FileStat, LeaseCases, CouncilTaxCases)> {
        Ok((
            self.leases.finish()?,
            self.ct.finish()?,
            self.lease_cases,
            self.ct_cases,
        ))
    }
}
