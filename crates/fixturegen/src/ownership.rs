//! HM Land Registry's company-owned titles (CCOD, OCOD) and Companies House basic company data
//! for the fixture world, written as the addresses stream past.
//!
//! Deterministic from the register order alone (no PRNG stream), so every other fixture file is
//! byte-identical with or without these. The companies are invented (numbers 099000xx, SC99xxxx,
//! OC99xxxx, OE0001xx, ranges Companies House has not reached or uses for nothing here).
//! Commercial units and one dwelling in 40 get a company-owned title; a few titles describe land
//! no address matches (they do not link), one covers several addresses, a few commercial units
//! are held by overseas companies (OCOD), one company is dissolved, one company's number is not in
//! the Companies House file, and CCOD writes the main landlord's number without its leading zero
//! on every other title (as the published files often do).

use crate::out::{Eol, FileStat, LineFile};
use crate::tenure::council_address;
use crate::world::AddressRecord;
use chrono::NaiveDate;
use serde::Serialize;
use std::io;
use std::path::Path;

pub const CCOD_FILE: &str = "ownership/CCOD_FULL_2026_06.csv";
/// An earlier CCOD snapshot: the commercial titles whose price and date the later one changed.
pub const CCOD_EARLIER_FILE: &str = "ownership/CCOD_FULL_2025_06.csv";
pub const OCOD_FILE: &str = "ownership/OCOD_FULL_2026_06.csv";
pub const COMPANIES_FILE: &str = "ownership/BasicCompanyData-2026-06-01-part1_1.csv";

pub const CCOD_HEADER: &str = "Title Number,Tenure,Property Address,District,County,Region,Postcode,Multiple Address Indicator,Price Paid,Proprietor Name (1),Company Registration No. (1),Proprietorship Category (1),Proprietor (1) Address (1),Proprietor (1) Address (2),Proprietor (1) Address (3),Proprietor Name (2),Company Registration No. (2),Proprietorship Category (2),Proprietor (2) Address (1),Proprietor (2) Address (2),Proprietor (2) Address (3),Proprietor Name (3),Company Registration No. (3),Proprietorship Category (3),Proprietor (3) Address (1),Proprietor (3) Address (2),Proprietor (3) Address (3),Proprietor Name (4),Company Registration No. (4),Proprietorship Category (4),Proprietor (4) Address (1),Proprietor (4) Address (2),Proprietor (4) Address (3),Date Proprietor Added,Additional Proprietor Indicator";
pub const COMPANIES_HEADER: &str = "CompanyName, CompanyNumber,RegAddress.CareOf,RegAddress.POBox,RegAddress.AddressLine1, RegAddress.AddressLine2,RegAddress.PostTown,RegAddress.County,RegAddress.Country,RegAddress.PostCode,CompanyCategory,CompanyStatus,CountryOfOrigin,DissolutionDate,IncorporationDate,Accounts.AccountRefDay,Accounts.AccountRefMonth,Accounts.NextDueDate,Accounts.LastMadeUpDate,Accounts.AccountCategory,Returns.NextDueDate,Returns.LastMadeUpDate,Mortgages.NumMortCharges,Mortgages.NumMortOutstanding,Mortgages.NumMortPartSatisfied,Mortgages.NumMortSatisfied,SICCode.SicText_1,SICCode.SicText_2,SICCode.SicText_3,SICCode.SicText_4,LimitedPartnerships.NumGenPartners,LimitedPartnerships.NumLimPartners,URI,PreviousName_1.CONDATE, PreviousName_1.CompanyName, PreviousName_2.CONDATE, PreviousName_2.CompanyName,PreviousName_3.CONDATE, PreviousName_3.CompanyName,PreviousName_4.CONDATE, PreviousName_4.CompanyName,PreviousName_5.CONDATE, PreviousName_5.CompanyName,PreviousName_6.CONDATE, PreviousName_6.CompanyName,PreviousName_7.CONDATE, PreviousName_7.CompanyName,PreviousName_8.CONDATE, PreviousName_8.CompanyName,PreviousName_9.CONDATE, PreviousName_9.CompanyName,PreviousName_10.CONDATE, PreviousName_10.CompanyName,ConfStmtNextDueDate, ConfStmtLastMadeUpDate";

/// The OCOD header: CCOD's with `Country Incorporated (n)` after each `Proprietorship Category (n)`.
pub fn ocod_header() -> String {
    CCOD_HEADER
        .split(',')
        .flat_map(|n| {
            let extra = n
                .strip_prefix("Proprietorship Category ")
                .map(|k| format!("Country Incorporated {k}"));
            std::iter::once(n.to_string()).chain(extra)
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// An invented company: (number, name, category, status, dissolved, incorporated, country,
/// SIC, charges total/outstanding, in the Companies House file).
struct Co {
    number: &'static str,
    name: &'static str,
    category: &'static str,
    status: &'static str,
    dissolved: &'static str,
    incorporated: &'static str,
    origin: &'static str,
    sic: &'static str,
    charges: (u32, u32),
    in_file: bool,
}

const LANDLORD: usize = 0;
const TAMBER: usize = 1;
const OLD_MILL: usize = 2;
const NORTHERN: usize = 3;
const RIVERSIDE: usize = 4;
const TAMBER_S: usize = 5;
const VANISHED: usize = 6;
const HARBOUR: usize = 7;
const ASHGROVE: usize = 8;
const BRAMBLE: usize = 9;

const COMPANIES: [Co; 10] = [
    Co {
        number: "09900001",
        name: "WESSEX HOLDINGS LIMITED",
        category: "Private Limited Company",
        status: "Active",
        dissolved: "",
        incorporated: "14/03/2009",
        origin: "United Kingdom",
        sic: "68209 - Other letting and operating of own or leased real estate",
        charges: (6, 2),
        in_file: true,
    },
    Co {
        number: "09900002",
        name: "TAMBER PROPERTY LTD",
        category: "Private Limited Company",
        status: "Active",
        dissolved: "",
        incorporated: "02/11/2015",
        origin: "United Kingdom",
        sic: "68100 - Buying and selling of own real estate",
        charges: (1, 1),
        in_file: true,
    },
    Co {
        number: "09900003",
        name: "OLD MILL DEVELOPMENTS LIMITED",
        category: "Private Limited Company",
        status: "Dissolved",
        dissolved: "31/05/2023",
        incorporated: "20/06/2004",
        origin: "United Kingdom",
        sic: "41100 - Development of building projects",
        charges: (3, 0),
        in_file: true,
    },
    Co {
        number: "SC990004",
        name: "NORTHERN LIGHT ESTATES LIMITED",
        category: "Private Limited Company",
        status: "Active",
        dissolved: "",
        incorporated: "09/09/2012",
        origin: "United Kingdom",
        sic: "68209 - Other letting and operating of own or leased real estate",
        charges: (0, 0),
        in_file: true,
    },
    Co {
        number: "OC990005",
        name: "RIVERSIDE LAND LLP",
        category: "Limited Liability Partnership",
        status: "Active",
        dissolved: "",
        incorporated: "01/04/2018",
        origin: "United Kingdom",
        sic: "",
        charges: (2, 2),
        in_file: true,
    },
    Co {
        number: "09900006",
        name: "TAMBER PROPERTIES LTD",
        category: "Private Limited Company",
        status: "Liquidation",
        dissolved: "",
        incorporated: "12/12/2012",
        origin: "United Kingdom",
        sic: "68320 - Management of real estate on a fee or contract basis",
        charges: (4, 1),
        in_file: true,
    },
    Co {
        number: "09900099",
        name: "VANISHED TRADING LIMITED",
        category: "",
        status: "",
        dissolved: "",
        incorporated: "",
        origin: "",
        sic: "",
        charges: (0, 0),
        in_file: false,
    },
    Co {
        number: "OE000101",
        name: "HARBOUR HOLDINGS S.A.",
        category: "Registered Overseas Entity",
        status: "Registered",
        dissolved: "",
        incorporated: "05/08/2022",
        origin: "Jersey",
        sic: "",
        charges: (0, 0),
        in_file: true,
    },
    Co {
        number: "09900010",
        name: "ASHGROVE LAND LIMITED",
        category: "Private Limited Company",
        status: "Active",
        dissolved: "",
        incorporated: "11/01/2016",
        origin: "United Kingdom",
        sic: "41100 - Development of building projects",
        charges: (2, 1),
        in_file: true,
    },
    Co {
        number: "09900011",
        name: "BRAMBLE ESTATES LIMITED",
        category: "Private Limited Company",
        status: "Active",
        dissolved: "",
        incorporated: "23/07/2019",
        origin: "United Kingdom",
        sic: "68209 - Other letting and operating of own or leased real estate",
        charges: (0, 0),
        in_file: true,
    },
];

/// The owner of the `k`th ordinary CCOD title.
const CYCLE: [usize; 8] = [
    LANDLORD, TAMBER, LANDLORD, OLD_MILL, NORTHERN, LANDLORD, RIVERSIDE, VANISHED,
];

/// What the ownership tests rely on.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OwnershipCases {
    pub note: String,
    /// A company with several titles, and those titles.
    pub landlord_company: String,
    pub landlord_titles: Vec<String>,
    /// A dissolved company and its titles.
    pub dissolved_company: String,
    pub dissolved_titles: Vec<String>,
    /// An OCOD title held by a registered overseas entity (its number is in the Companies House
    /// file) and one held by a company whose number is a foreign registry's.
    pub overseas_entity_title: String,
    pub overseas_foreign_title: String,
    pub overseas_foreign_number: String,
    /// A CCOD company whose number is not in the Companies House file.
    pub unfiled_company: String,
    /// Titles whose property address no register address matches.
    pub unlinked_titles: Vec<String>,
    /// A title covering several addresses (never linked to one UPRN).
    pub multiple_address_title: String,
    /// Titles written from one register address each: (title, UPRN).
    pub addressed_titles: Vec<(String, u64)>,
    /// A well-formed title number that is in neither file.
    pub unknown_title: String,
    /// Commercial titles in both CCOD snapshots: the earlier one shows the previous sale (four
    /// years before, at the planted commercial level's price), the later one the sale since.
    pub snapshot_titles: Vec<String>,
}

pub struct Ownership {
    ccod: LineFile,
    ccod_earlier: LineFile,
    ocod: LineFile,
    next_title: u64,
    seen: u64,
    k: usize,
    ocod_done: usize,
    unlinked_done: usize,
    multiple_done: bool,
    last_block: Option<(String, String, String, String)>,
    region: String,
    pub cases: OwnershipCases,
    /// The later sale of each snapshot title: (UPRN, Date Proprietor Added, Price Paid).
    snapshot_sales: Vec<(u64, NaiveDate, u64)>,
}

fn date_dashes(i: u64) -> String {
    format!(
        "{:02}-{:02}-{}",
        1 + i % 28,
        1 + (i / 28) % 12,
        2005 + i % 20
    )
}

/// What the earlier CCOD snapshot shows of the `n`th title, written in the later one with
/// `price` and a Date Proprietor Added from 2018 on: the previous sale, four years before, at
/// the price the planted commercial level gives ([`crate::commercial_level`]).
fn earlier_sale(n: u64, price: u64) -> Option<(String, u64, NaiveDate)> {
    let (day, month, year) = (1 + n % 28, 1 + (n / 28) % 12, 2005 + n % 20);
    if year < 2018 {
        return None;
    }
    let date = |y: u64| {
        NaiveDate::from_ymd_opt(
            i32::try_from(y).ok()?,
            u32::try_from(month).ok()?,
            u32::try_from(day).ok()?,
        )
    };
    let (later, earlier) = (date(year)?, date(year - 4)?);
    let p = price as f64 * crate::commercial_level(earlier) / crate::commercial_level(later);
    Some((
        format!("{day:02}-{month:02}-{}", year - 4),
        ((p / 250.0).round() * 250.0) as u64,
        later,
    ))
}

fn date_slashes(i: u64) -> String {
    format!(
        "{:02}/{:02}/{}",
        1 + i % 28,
        1 + (i / 28) % 12,
        2012 + i % 12
    )
}

impl Ownership {
    pub fn create(out_dir: &Path, region: &str) -> io::Result<Ownership> {
        let mut ccod = LineFile::create(out_dir, CCOD_FILE, Eol::CrLf)?;
        ccod.header(&quoted_header(CCOD_HEADER))?;
        let mut ccod_earlier = LineFile::create(out_dir, CCOD_EARLIER_FILE, Eol::CrLf)?;
        ccod_earlier.header(&quoted_header(CCOD_HEADER))?;
        let mut ocod = LineFile::create(out_dir, OCOD_FILE, Eol::CrLf)?;
        ocod.header(&quoted_header(&ocod_header()))?;
        Ok(Ownership {
            ccod,
            ccod_earlier,
            ocod,
            next_title: 100_001,
            seen: 0,
            k: 0,
            ocod_done: 0,
            unlinked_done: 0,
            multiple_done: false,
            last_block: None,
            region: region.to_ascii_uppercase(),
            snapshot_sales: Vec::new(),
            cases: OwnershipCases {
                note: "Company-owned titles of the fixture world: landlord_titles are the titles \
                       of landlord_company (several, its number written without the leading zero \
                       on every other CCOD row); dissolved_company is Dissolved at Companies \
                       House; overseas titles are in OCOD; unfiled_company is in CCOD but not in \
                       the Companies House file; unlinked_titles and multiple_address_title do not \
                       link to a UPRN; addressed_titles each name one register address; \
                       unknown_title is in neither file; snapshot_titles are commercial titles \
                       also in the earlier CCOD snapshot (2025-06) with their previous price and \
                       date."
                    .into(),
                landlord_company: COMPANIES[LANDLORD].number.into(),
                dissolved_company: COMPANIES[OLD_MILL].number.into(),
                unfiled_company: COMPANIES[VANISHED].number.into(),
                overseas_foreign_number: "5512345".into(),
                unknown_title: "XT999999".into(),
                ..OwnershipCases::default()
            },
        })
    }

    fn title_number(&mut self) -> String {
        let t = format!("XT{}", self.next_title);
        self.next_title += 1;
        t
    }

    /// Takes the next register record (in register order); `district` is the authority's name
    /// in upper case.
    pub fn address(&mut self, r: &AddressRecord, district: &str) -> io::Result<()> {
        self.seen += 1;
        let commercial = r.class.starts_with('C');
        let landlord_dwelling = r.dwelling.is_some() && self.seen.is_multiple_of(40);
        let property = format!("{} ({})", council_address(r), r.postcode);
        if commercial && self.seen > 200 && self.ocod_done < 4 {
            self.ocod_done += 1;
            return self.ocod_title(r, &property, district);
        }
        if commercial || landlord_dwelling {
            let owner = if landlord_dwelling {
                LANDLORD
            } else {
                let o = CYCLE[self.k % CYCLE.len()];
                self.k += 1;
                o
            };
            let title = self.title_number();
            let tenure = if landlord_dwelling && r.class == "RD06" {
                "Leasehold"
            } else {
                "Freehold"
            };
            let second = self.next_title.is_multiple_of(7).then_some(TAMBER_S);
            let price = if self.next_title.is_multiple_of(3) {
                format!("{}", 150_000 + (self.next_title % 50) * 5_000)
            } else {
                String::new()
            };
            self.ccod_row(
                &title,
                tenure,
                &property,
                district,
                &r.postcode,
                "N",
                &price,
                owner,
                second,
            )?;
            let earlier = price
                .parse::<u64>()
                .ok()
                .filter(|_| commercial)
                .and_then(|p| earlier_sale(self.next_title, p));
            if let Some((date, before, later)) = earlier {
                if let Ok(p) = price.parse::<u64>() {
                    self.snapshot_sales.push((r.uprn, later, p));
                }
                let f = self.ccod_fields(
                    &title,
                    tenure,
                    &property,
                    district,
                    &r.postcode,
                    "N",
                    &before.to_string(),
                    owner,
                    second,
                    date,
                );
                self.ccod_earlier.row_quoted(&f)?;
                self.cases.snapshot_titles.push(title.clone());
            }
            self.cases.addressed_titles.push((title.clone(), r.uprn));
            self.record(owner, &title);
            if let Some(s) = second {
                self.record(s, &title);
            }
        }
        // Land no address matches, once per few hundred addresses, and one title over a
        // block of several numbers.
        if self.seen % 300 == 150 && self.unlinked_done < 3 {
            self.unlinked_done += 1;
            let title = self.title_number();
            let property = format!(
                "LAND ADJOINING THE ALLOTMENTS, {}, {} ({})",
                r.street, r.town, r.postcode
            );
            self.ccod_row(
                &title,
                "Freehold",
                &property,
                district,
                &r.postcode,
                "N",
                "",
                RIVERSIDE,
                None,
            )?;
            self.cases.unlinked_titles.push(title.clone());
            self.record(RIVERSIDE, &title);
        }
        if let (Some(n), None) = (r.pao_start_number, &r.pao_text) {
            let block = (
                r.street.clone(),
                r.town.clone(),
                r.postcode.clone(),
                n.to_string(),
            );
            if !self.multiple_done
                && self.seen > 500
                && self
                    .last_block
                    .as_ref()
                    .is_some_and(|b| b.0 == block.0 && b.2 == block.2 && b.3 != block.3)
            {
                self.multiple_done = true;
                let prev = self.last_block.clone().unwrap_or_default();
                let title = self.title_number();
                let property = format!(
                    "{} AND {} {}, {} ({})",
                    prev.3, block.3, r.street, r.town, r.postcode
                );
                self.ccod_row(
                    &title,
                    "Freehold",
                    &property,
                    district,
                    &r.postcode,
                    "Y",
                    "",
                    LANDLORD,
                    None,
                )?;
                self.cases.multiple_address_title = title.clone();
                self.record(LANDLORD, &title);
            }
            self.last_block = Some(block);
        }
        Ok(())
    }

    /// The titles of the land cluster's three houses (subject, same owner, other owner): the
    /// first two held by one company, the third by another, written after the register's own.
    /// Returns ((owner's number, name), other's number, the three title numbers).
    pub fn cluster_titles(
        &mut self,
        houses: &[(AddressRecord, String); 3],
    ) -> io::Result<((&'static str, &'static str), &'static str, [String; 3])> {
        let mut titles: [String; 3] = Default::default();
        for (i, (r, district)) in houses.iter().enumerate() {
            let owner = if i < 2 { ASHGROVE } else { BRAMBLE };
            let title = self.title_number();
            let property = format!("{} ({})", council_address(r), r.postcode);
            self.ccod_row(
                &title,
                "Freehold",
                &property,
                district,
                &r.postcode,
                "N",
                "",
                owner,
                None,
            )?;
            self.cases.addressed_titles.push((title.clone(), r.uprn));
            titles[i] = title;
        }
        Ok((
            (COMPANIES[ASHGROVE].number, COMPANIES[ASHGROVE].name),
            COMPANIES[BRAMBLE].number,
            titles,
        ))
    }

    /// The later sale of the unit's snapshot title, when it has one: (Date Proprietor Added,
    /// Price Paid).
    pub fn snapshot_sale(&self, uprn: u64) -> Option<(NaiveDate, u64)> {
        self.snapshot_sales
            .iter()
            .find(|(u, _, _)| *u == uprn)
            .map(|(_, d, p)| (*d, *p))
    }

    fn record(&mut self, owner: usize, title: &str) {
        match owner {
            LANDLORD => self.cases.landlord_titles.push(title.into()),
            OLD_MILL => self.cases.dissolved_titles.push(title.into()),
            _ => {}
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn ccod_row(
        &mut self,
        title: &str,
        tenure: &str,
        property: &str,
        district: &str,
        postcode: &str,
        multiple: &str,
        price: &str,
        owner: usize,
        second: Option<usize>,
    ) -> io::Result<()> {
        let date = date_dashes(self.next_title);
        let f = self.ccod_fields(
            title, tenure, property, district, postcode, multiple, price, owner, second, date,
        );
        self.ccod.row_quoted(&f)
    }

    /// A CCOD row's fields.
    #[allow(clippy::too_many_arguments)]
    fn ccod_fields(
        &self,
        title: &str,
        tenure: &str,
        property: &str,
        district: &str,
        postcode: &str,
        multiple: &str,
        price: &str,
        owner: usize,
        second: Option<usize>,
        date: String,
    ) -> Vec<String> {
        let n = self.next_title;
        let mut f: Vec<String> = vec![
            title.into(),
            tenure.into(),
            property.into(),
            district.into(),
            district.into(),
            self.region.clone(),
            postcode.into(),
            multiple.into(),
            price.into(),
        ];
        for slot in [Some(owner), second, None, None] {
            match slot {
                Some(o) => {
                    let c = &COMPANIES[o];
                    // the landlord's number without its leading zero on every other row
                    let number = if o == LANDLORD && n % 2 == 1 {
                        c.number.trim_start_matches('0').to_string()
                    } else {
                        c.number.to_string()
                    };
                    let category = if c.category == "Limited Liability Partnership" {
                        "Limited Liability Partnership"
                    } else {
                        "Limited Company or Public Limited Company"
                    };
                    f.extend([
                        c.name.to_string(),
                        number,
                        category.to_string(),
                        format!("{} HIGH STREET, TAMBERLEY XT1 1AA", 1 + o),
                        String::new(),
                        String::new(),
                    ]);
                }
                None => f.extend(std::iter::repeat_n(String::new(), 6)),
            }
        }
        f.push(date);
        f.push(if n.is_multiple_of(11) { "Y" } else { "N" }.into());
        f
    }

    fn ocod_title(&mut self, r: &AddressRecord, property: &str, district: &str) -> io::Result<()> {
        let title = self.title_number();
        let n = self.next_title;
        let (name, number, country) = if self.ocod_done % 2 == 1 {
            (COMPANIES[HARBOUR].name, "OE101", "Jersey")
        } else {
            ("ATLANTIC REALTY INC.", "5512345", "Delaware")
        };
        let mut f: Vec<String> = vec![
            title.clone(),
            "Freehold".into(),
            property.into(),
            district.into(),
            district.into(),
            self.region.clone(),
            r.postcode.clone(),
            "N".into(),
            String::new(),
            name.into(),
            number.into(),
            "Overseas Company".into(),
            country.into(),
            "PO BOX 1, ST HELIER".into(),
            String::new(),
            String::new(),
        ];
        for _ in 0..3 {
            f.extend(std::iter::repeat_n(String::new(), 7));
        }
        f.push(date_slashes(n));
        f.push("N".into());
        self.ocod.row_quoted(&f)?;
        self.cases.addressed_titles.push((title.clone(), r.uprn));
        if number.starts_with("OE") {
            if self.cases.overseas_entity_title.is_empty() {
                self.cases.overseas_entity_title = title;
            }
        } else if self.cases.overseas_foreign_title.is_empty() {
            self.cases.overseas_foreign_title = title;
        }
        Ok(())
    }

    /// Writes the trailers and the Companies House file: (CCOD, OCOD, companies, cases).
    pub fn finish(
        mut self,
        out_dir: &Path,
    ) -> io::Result<(FileStat, FileStat, FileStat, FileStat, OwnershipCases)> {
        let trailer = |f: &mut LineFile| -> io::Result<()> {
            let n = f.rows;
            f.raw_row(&format!("\"Row Count: {n}\""))?;
            f.rows -= 1;
            Ok(())
        };
        trailer(&mut self.ccod)?;
        trailer(&mut self.ccod_earlier)?;
        trailer(&mut self.ocod)?;
        let ccod = self.ccod.finish()?;
        let ccod_earlier = self.ccod_earlier.finish()?;
        let ocod = self.ocod.finish()?;
        let mut ch = LineFile::create(out_dir, COMPANIES_FILE, Eol::CrLf)?;
        ch.header(&quoted_header(COMPANIES_HEADER))?;
        for c in COMPANIES.iter().filter(|c| c.in_file) {
            let mut f: Vec<String> = vec![
                c.name.into(),
                c.number.into(),
                String::new(),
                String::new(),
                "UNIT 4 WESSEX BUSINESS PARK".into(),
                "MILL LANE".into(),
                "TAMBERLEY".into(),
                String::new(),
                "ENGLAND".into(),
                "XT1 1AA".into(),
                c.category.into(),
                c.status.into(),
                c.origin.into(),
                c.dissolved.into(),
                c.incorporated.into(),
                "31".into(),
                "3".into(),
                "31/12/2026".into(),
                "31/03/2025".into(),
                "MICRO ENTITY".into(),
                String::new(),
                String::new(),
                c.charges.0.to_string(),
                c.charges.1.to_string(),
                "0".into(),
                (c.charges.0 - c.charges.1).to_string(),
                c.sic.into(),
                String::new(),
                String::new(),
                String::new(),
                "0".into(),
                "0".into(),
                format!("http://business.data.gov.uk/id/company/{}", c.number),
            ];
            f.extend(std::iter::repeat_n(String::new(), 20));
            f.push("01/07/2026".into());
            f.push("01/07/2025".into());
            ch.row_quoted(&f)?;
        }
        let ch = ch.finish()?;
        Ok((ccod, ccod_earlier, ocod, ch, self.cases))
    }
}

fn quoted_header(h: &str) -> String {
    h.split(',')
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(",")
}
