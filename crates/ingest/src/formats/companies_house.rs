//! Companies House basic company data (`BasicCompanyDataAsOneFile-YYYY-MM-01.csv` or its parts):
//! 55 quoted columns, some header names starting with a space (` CompanyNumber`), which the
//! header lookup trims. Dates are `DD/MM/YYYY`.
//!
//! Columns used, by name: `CompanyName`, `CompanyNumber` (both required in the header),
//! `RegAddress.CareOf`, `RegAddress.POBox`, `RegAddress.AddressLine1`, `RegAddress.AddressLine2`,
//! `RegAddress.PostTown`, `RegAddress.County`, `RegAddress.Country`, `RegAddress.PostCode`,
//! `CompanyCategory`, `CompanyStatus`, `CountryOfOrigin`, `DissolutionDate`, `IncorporationDate`,
//! `Mortgages.NumMortCharges`, `Mortgages.NumMortOutstanding`, `Mortgages.NumMortPartSatisfied`,
//! `Mortgages.NumMortSatisfied`, `SICCode.SicText_1..4`, `URI`.
//!
//! Rejections: a wrong column count; a blank company number or name; a date or charges count
//! that is given but not readable.

use super::csvio::{Header, Opened, field};
use super::{Parsed, value};
use chrono::NaiveDate;
use std::io;
use std::path::Path;
use terrace_core::registers::normalise_company_number;

/// One company.
#[derive(Debug, Clone, PartialEq)]
pub struct CompanyLine {
    pub company_number: String,
    pub name: String,
    pub category: Option<String>,
    pub status: Option<String>,
    pub country_of_origin: Option<String>,
    pub incorporation_date: Option<NaiveDate>,
    pub dissolution_date: Option<NaiveDate>,
    pub care_of: Option<String>,
    pub po_box: Option<String>,
    pub line_1: Option<String>,
    pub line_2: Option<String>,
    pub post_town: Option<String>,
    pub county: Option<String>,
    pub country: Option<String>,
    pub postcode: Option<String>,
    pub sic: [Option<String>; 4],
    /// Charges: total, outstanding, part satisfied, satisfied.
    pub charges: [Option<i32>; 4],
    pub uri: Option<String>,
}

const NUMBER: &[&str] = &["companynumber"];
const NAME: &[&str] = &["companyname"];

/// Whether a header (normalised names) is Companies House's.
pub fn is_header(names: &[String]) -> bool {
    let has = |n: &str| names.iter().any(|x| x == n);
    has("companynumber") && has("companyname") && has("companystatus")
}

#[derive(Debug, Clone)]
struct Columns {
    number: Option<usize>,
    name: Option<usize>,
    rest: Vec<Option<usize>>,
}

const REST: [&str; 21] = [
    "companycategory",
    "companystatus",
    "countryoforigin",
    "incorporationdate",
    "dissolutiondate",
    "regaddress.careof",
    "regaddress.pobox",
    "regaddress.addressline1",
    "regaddress.addressline2",
    "regaddress.posttown",
    "regaddress.county",
    "regaddress.country",
    "regaddress.postcode",
    "siccode.sictext-1",
    "siccode.sictext-2",
    "siccode.sictext-3",
    "siccode.sictext-4",
    "mortgages.nummortcharges",
    "mortgages.nummortoutstanding",
    "mortgages.nummortpartsatisfied",
    "mortgages.nummortsatisfied",
];

/// Opens a basic company data CSV.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<CompanyLine>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let names = source.header()?.unwrap_or_default();
    let header = Header::new(names);
    if !header.names.is_empty() {
        header.require(&source.file, NUMBER)?;
        header.require(&source.file, NAME)?;
    }
    let mut rest: Vec<Option<usize>> = REST.iter().map(|n| header.find(&[n])).collect();
    rest.push(header.find(&["uri"]));
    let cols = Columns {
        number: header.find(NUMBER),
        name: header.find(NAME),
        rest,
    };
    Ok(source.rows(header.len(), move |fields| parse_row(fields, &cols)))
}

fn parse_row(fields: &[String], c: &Columns) -> Result<CompanyLine, String> {
    let col = |i: usize| c.rest.get(i).copied().flatten();
    let text = |i: usize| value::text(field(fields, col(i)));
    let number_raw = field(fields, c.number).ok_or("blank CompanyNumber")?;
    let company_number =
        normalise_company_number(number_raw, false).ok_or("blank CompanyNumber")?;
    let name = field(fields, c.name)
        .ok_or("blank CompanyName")?
        .to_string();
    let date = |i: usize, what: &str| match field(fields, col(i)) {
        None => Ok(None),
        Some(v) => NaiveDate::parse_from_str(v, "%d/%m/%Y")
            .map(Some)
            .map_err(|_| format!("{what} {v:?} is not a DD/MM/YYYY date")),
    };
    let count = |i: usize| -> Result<Option<i32>, String> {
        match field(fields, col(i)) {
            None => Ok(None),
            Some(v) => value::int(v)
                .and_then(|n| i32::try_from(n).ok())
                .filter(|n| *n >= 0)
                .map(Some)
                .ok_or_else(|| format!("{} {v:?} is not a count", REST[i])),
        }
    };
    Ok(CompanyLine {
        company_number,
        name,
        category: text(0),
        status: text(1),
        country_of_origin: text(2),
        incorporation_date: date(3, "IncorporationDate")?,
        dissolution_date: date(4, "DissolutionDate")?,
        care_of: text(5),
        po_box: text(6),
        line_1: text(7),
        line_2: text(8),
        post_town: text(9),
        county: text(10),
        country: text(11),
        postcode: text(12),
        sic: [text(13), text(14), text(15), text(16)],
        charges: [count(17)?, count(18)?, count(19)?, count(20)?],
        uri: value::text(field(fields, col(21))),
    })
}

/// The header as Companies House publishes it (55 columns, some names with a leading space).
pub const HEADER: &str = "CompanyName, CompanyNumber,RegAddress.CareOf,RegAddress.POBox,RegAddress.AddressLine1, RegAddress.AddressLine2,RegAddress.PostTown,RegAddress.County,RegAddress.Country,RegAddress.PostCode,CompanyCategory,CompanyStatus,CountryOfOrigin,DissolutionDate,IncorporationDate,Accounts.AccountRefDay,Accounts.AccountRefMonth,Accounts.NextDueDate,Accounts.LastMadeUpDate,Accounts.AccountCategory,Returns.NextDueDate,Returns.LastMadeUpDate,Mortgages.NumMortCharges,Mortgages.NumMortOutstanding,Mortgages.NumMortPartSatisfied,Mortgages.NumMortSatisfied,SICCode.SicText_1,SICCode.SicText_2,SICCode.SicText_3,SICCode.SicText_4,LimitedPartnerships.NumGenPartners,LimitedPartnerships.NumLimPartners,URI,PreviousName_1.CONDATE, PreviousName_1.CompanyName, PreviousName_2.CONDATE, PreviousName_2.CompanyName,PreviousName_3.CONDATE, PreviousName_3.CompanyName,PreviousName_4.CONDATE, PreviousName_4.CompanyName,PreviousName_5.CONDATE, PreviousName_5.CompanyName,PreviousName_6.CONDATE, PreviousName_6.CompanyName,PreviousName_7.CONDATE, PreviousName_7.CompanyName,PreviousName_8.CONDATE, PreviousName_8.CompanyName,PreviousName_9.CONDATE, PreviousName_9.CompanyName,PreviousName_10.CONDATE, PreviousName_10.CompanyName,ConfStmtNextDueDate, ConfStmtLastMadeUpDate";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::csvio::parse_line;
    use crate::formats::testutil::{split, temp_file};

    /// The published sample row, with its ten previous names blank.
    const SAMPLE: &str = "\"!OBAC UK LIMITED\",\"07687209\",\"\",\"\",\"UNIT 9   BERRY COURT FARM BRAMLEY ROAD\",\"LITTLE LONDON\",\"TADLEY\",\"HAMPSHIRE\",\"\",\"RG26 5AT\",\"Private Limited Company\",\"Active\",\"United Kingdom\",\"\",\"29/06/2011\",\"29\",\"12\",\"29/09/2022\",\"31/12/2020\",\"TOTAL EXEMPTION FULL\",\"27/07/2017\",\"29/06/2016\",\"1\",\"0\",\"0\",\"1\",\"70229 - Management consultancy activities other than financial management\",\"\",\"\",\"\",\"0\",\"0\",\"http://business.data.gov.uk/id/company/07687209\",\"15/07/2011\",\"!OBAC FITTINGS LIMITED\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"13/07/2022\",\"29/06/2021\"";

    #[test]
    fn reads_the_published_layout() {
        assert_eq!(parse_line(HEADER.as_bytes()).len(), 55);
        assert_eq!(parse_line(SAMPLE.as_bytes()).len(), 55);
        let dissolved = SAMPLE.replace("\"07687209\"", "\"123\"").replace(
            "\"Active\",\"United Kingdom\",\"\"",
            "\"Dissolved\",\"United Kingdom\",\"01/02/2024\"",
        );
        let bad_date = SAMPLE.replace("29/06/2011", "2011-06-29");
        let blank = SAMPLE.replace("\"07687209\"", "\"\"");
        let content =
            format!("{HEADER}\n{SAMPLE}\n{dissolved}\n{bad_date}\n{blank}\n\"X\",\"1\"\n");
        let f = temp_file(content.as_bytes());
        let (ok, bad) = split(read(f.path()).expect("opens"));
        assert_eq!(ok.len(), 2);
        let c = &ok[0].1;
        assert_eq!(c.company_number, "07687209");
        assert_eq!(c.name, "!OBAC UK LIMITED");
        assert_eq!(c.status.as_deref(), Some("Active"));
        assert_eq!(c.incorporation_date, NaiveDate::from_ymd_opt(2011, 6, 29));
        assert_eq!(c.postcode.as_deref(), Some("RG26 5AT"));
        assert_eq!(c.line_2.as_deref(), Some("LITTLE LONDON"));
        assert_eq!(c.charges, [Some(1), Some(0), Some(0), Some(1)]);
        assert!(c.sic[0].as_deref().is_some_and(|s| s.starts_with("70229")));
        assert_eq!(c.sic[1], None);
        let d = &ok[1].1;
        assert_eq!(d.company_number, "00000123");
        assert_eq!(d.status.as_deref(), Some("Dissolved"));
        assert_eq!(d.dissolution_date, NaiveDate::from_ymd_opt(2024, 2, 1));
        let reasons: Vec<(u64, &str)> = bad.iter().map(|b| (b.line, b.reason.as_str())).collect();
        assert_eq!(reasons.len(), 3);
        assert_eq!(reasons[0].0, 4);
        assert!(reasons[0].1.contains("IncorporationDate"));
        assert_eq!(reasons[1], (5, "blank CompanyNumber"));
        assert_eq!(reasons[2], (6, "expected 55 columns, found 2"));
    }
}
