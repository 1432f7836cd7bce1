//! The ONS Price Index of Private Rents for the fixture world's local authorities, in the ONS
//! layout (UTF-8 with a byte-order mark, `Mon-YYYY` periods, `[x]` where not published, CRLF),
//! from the same true values the fixture listings' rents are drawn from: a district's typical
//! rent is 5% a year of its typical value (`base_price[d]` × the true index level / 100), and an
//! authority's rent is the mean over its districts. Index January 2023 = 100. The per-bedroom
//! and per-type columns are written as `[x]` (the loader does not keep them).

use crate::index::{FIRST_YEAR, TrueIndex};
use crate::out::{Eol, FileStat, LineFile};
use std::io;
use std::path::Path;

pub const PIPR_FILE: &str = "listings/ons_pipr_private_rents.csv";

/// The first month written (January 2021).
const FIRST_MONTH: usize = ((2021 - FIRST_YEAR) * 12) as usize;
/// The ONS reference month (January 2023 = 100).
const REFERENCE_MONTH: usize = ((2023 - FIRST_YEAR) * 12) as usize;

const HEADER: &str = "\u{feff}Time period,Area code,Area name,Region or country name,Index,Monthly change,Annual change,Rental price,Index one bed,Monthly change one bed,Annual change one bed,Rental price one bed,Index two bed,Monthly change two bed,Annual change two bed,Rental price two bed,Index three bed,Monthly change three bed,Annual change three bed,Rental price three bed,Index four or more bed,Monthly change four or more bed,Annual change four or more bed,Rental price four or more bed,Index detached,Monthly change detached,Annual change detached,Rental price detached,Index semidetached,Monthly change semidetached,Annual change semidetached,Rental price semidetached,Index terraced,Monthly change terraced,Annual change terraced,Rental price terraced,Index flat maisonette,Monthly change flat maisonette,Annual change flat maisonette,Rental price flat maisonette";

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn period(m: usize) -> String {
    format!("{}-{}", MONTHS[m % 12], FIRST_YEAR as usize + m / 12)
}

fn change(now: f64, then: Option<f64>) -> String {
    then.map_or("[x]".into(), |t| format!("{:.1}", (now / t - 1.0) * 100.0))
}

/// Writes one row per authority and month from January 2021 to the index's last month.
/// `lads` is (code, name, the districts in it).
pub fn write(
    out_dir: &Path,
    lads: &[(&str, &str, Vec<usize>)],
    base_price: &[f64],
    index: &TrueIndex,
) -> io::Result<FileStat> {
    let mut f = LineFile::create(out_dir, PIPR_FILE, Eol::CrLf)?;
    f.header(HEADER)?;
    let others = vec!["[x]"; 32].join(",");
    for (code, name, districts) in lads {
        if districts.is_empty() {
            continue;
        }
        let rent = |m: usize| {
            districts
                .iter()
                .map(|d| base_price[*d] * index.levels[*d][m] / 100.0 * 0.05 / 12.0)
                .sum::<f64>()
                / districts.len() as f64
        };
        let reference = rent(REFERENCE_MONTH.min(index.months - 1));
        let level = |m: usize| (rent(m) / reference * 1000.0).round() / 10.0;
        for m in FIRST_MONTH..index.months {
            let l = level(m);
            let previous = (m > FIRST_MONTH).then(|| level(m - 1));
            let year_ago = (m >= FIRST_MONTH + 12).then(|| level(m - 12));
            f.raw_row(&format!(
                "{},{code},{name},Fixture Region,{l:.1},{},{},{:.0},{others}",
                period(m),
                change(l, previous),
                change(l, year_ago),
                rent(m).round()
            ))?;
        }
    }
    f.finish()
}
