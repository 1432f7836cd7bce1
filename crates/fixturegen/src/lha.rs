//! Local Housing Allowance fixtures: weekly rates for two synthetic broad rental market areas
//! over two years, and the lookup placing the fixture's postcode districts, one sector and some
//! postcode units in them. Deterministic (no random draws), so the other files do not change.
//!
//! The awkward cases: district `SPLIT_DISTRICT` lies in both BRMAs at district level, with unit
//! entries for only some of its postcodes (the rest cannot be placed and must say so); the last
//! district is given by its sector rather than as a district; one BRMA has no 2026 rate for four
//! bedrooms, so its 2025 rate stays in force.

use crate::out::{Eol, FileStat, LineFile};
use serde::Serialize;
use std::io;
use std::path::Path;

pub const RATES_FILE: &str = "lha/lha_rates_fixture.csv";
pub const LOOKUP_FILE: &str = "lha/brma_lookup_fixture.csv";
pub const RATES_HEADER: &str = "BRMA,BRMA Code,Category,Weekly Rate,Valid From";
pub const LOOKUP_HEADER: &str = "Postcode,BRMA,BRMA Code";

/// The district split between the two BRMAs.
pub const SPLIT_DISTRICT: &str = "XT8";
/// The postcodes of the split district that the lookup places (in the first BRMA).
pub const SPLIT_UNITS: [&str; 4] = ["XT8 1AA", "XT8 1AB", "XT8 1AD", "XT8 1AE"];

const BRMAS: [(&str, &str); 2] = [
    ("Tamberley (fixture)", "FX-BRMA-01"),
    ("Wyvern Vale (fixture)", "FX-BRMA-02"),
];
const CATEGORIES: [&str; 5] = [
    "Shared accommodation",
    "1 bedroom",
    "2 bedrooms",
    "3 bedrooms",
    "4 bedrooms",
];
/// Weekly rates in pence by BRMA and category, for April 2025; April 2026 adds 3.5 %.
const RATES_2025: [[i64; 5]; 2] = [
    [9_205, 13_808, 17_260, 20_712, 27_616],
    [8_630, 12_658, 15_534, 18_986, 24_164],
];

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LhaCases {
    pub note: String,
    /// The BRMA names, first covering the lower-numbered districts.
    pub brmas: Vec<String>,
    pub split_district: String,
    /// Postcodes of the split district the lookup places in the first BRMA.
    pub split_units: Vec<String>,
    /// A sector given at sector level (its district has no district-level entry).
    pub sector_level: String,
    /// Valid-from dates of the two rate years.
    pub rate_years: Vec<String>,
}

fn gbp(pence: i64) -> String {
    format!("£{}.{:02}", pence / 100, pence % 100)
}

/// Writes the rates and the lookup for `districts` (the first half in the first BRMA).
pub fn write(out_dir: &Path, districts: &[String]) -> io::Result<(FileStat, FileStat, LhaCases)> {
    let mut rates = LineFile::create(out_dir, RATES_FILE, Eol::Lf)?;
    rates.header(RATES_HEADER)?;
    for (b, (name, code)) in BRMAS.iter().enumerate() {
        for (c, cat) in CATEGORIES.iter().enumerate() {
            let base = RATES_2025[b][c];
            rates.row_minimal(&[*name, *code, *cat, &gbp(base), "2025-04-01"])?;
            if b == 1 && c == 4 {
                continue; // no 2026 rate: the 2025 one stays in force
            }
            let uprated = (base * 1_035 + 500) / 1_000;
            rates.row_minimal(&[*name, *code, *cat, &gbp(uprated), "2026-04-01"])?;
        }
    }
    let mut lookup = LineFile::create(out_dir, LOOKUP_FILE, Eol::Lf)?;
    lookup.header(LOOKUP_HEADER)?;
    let half = districts.len().div_ceil(2);
    let last = districts.len().saturating_sub(1);
    let mut sector_level = String::new();
    for (i, d) in districts.iter().enumerate() {
        let (name, code) = BRMAS[usize::from(i >= half)];
        if d == SPLIT_DISTRICT {
            for (n, c) in BRMAS {
                lookup.row_minimal(&[d.as_str(), n, c])?;
            }
            for u in SPLIT_UNITS {
                lookup.row_minimal(&[u, BRMAS[0].0, BRMAS[0].1])?;
            }
        } else if i == last {
            sector_level = format!("{d} 1");
            lookup.row_minimal(&[sector_level.as_str(), name, code])?;
        } else {
            lookup.row_minimal(&[d.as_str(), name, code])?;
        }
    }
    let cases = LhaCases {
        note: "Synthetic LHA rates and BRMA lookup (fixture): the split district's other postcodes have no finer entry, so their housing-benefit cap is not_available.".into(),
        brmas: BRMAS.iter().map(|(n, _)| n.to_string()).collect(),
        split_district: SPLIT_DISTRICT.into(),
        split_units: SPLIT_UNITS.iter().map(|s| s.to_string()).collect(),
        sector_level,
        rate_years: vec!["2025-04-01".into(), "2026-04-01".into()],
    };
    Ok((rates.finish()?, lookup.finish()?, cases))
}
