//! The construction cost series' vocabulary, shared by the loaders that read the publishers'
//! files (`terrace-ingest`) and the site family that answers from them: what a series measures
//! ([`Basis`]), the work type ([`Sector`]), the region of a location factor ([`Region`]), and
//! periods in the series' own format ([`Period`]: a month `2024M01`, a quarter `2024Q1`, a year
//! `2024`).

use chrono::{Datelike, NaiveDate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The pattern of a period (years 1900 to 2099), as the OpenAPI schema states it.
pub const PERIOD_PATTERN: &str = "^(19|20)[0-9]{2}(M(0[1-9]|1[0-2])|Q[1-4])?$";

/// A series' frequency.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Freq {
    Monthly,
    Quarterly,
    Annual,
}

impl Freq {
    pub fn as_str(self) -> &'static str {
        match self {
            Freq::Monthly => "monthly",
            Freq::Quarterly => "quarterly",
            Freq::Annual => "annual",
        }
    }

    pub fn parse(s: &str) -> Option<Freq> {
        [Freq::Monthly, Freq::Quarterly, Freq::Annual]
            .into_iter()
            .find(|f| f.as_str() == s)
    }

    /// Periods of this frequency in a year.
    pub fn per_year(self) -> u32 {
        match self {
            Freq::Monthly => 12,
            Freq::Quarterly => 4,
            Freq::Annual => 1,
        }
    }
}

/// A month, quarter or year.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Period {
    Month(i32, u32),
    Quarter(i32, u32),
    Year(i32),
}

impl Period {
    /// Parses `2024M01`, `2024Q1` or `2024` (years 1900 to 2099; see [`PERIOD_PATTERN`]).
    pub fn parse(s: &str) -> Option<Period> {
        let b = s.as_bytes();
        if b.len() < 4 || !b[..4].iter().all(u8::is_ascii_digit) {
            return None;
        }
        let year: i32 = s[..4].parse().ok()?;
        if !(1900..=2099).contains(&year) {
            return None;
        }
        let rest = &s[4..];
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit());
        if rest.is_empty() {
            Some(Period::Year(year))
        } else if let Some(m) = rest.strip_prefix('M') {
            let month: u32 = m.parse().ok()?;
            (m.len() == 2 && digits(m) && (1..=12).contains(&month))
                .then_some(Period::Month(year, month))
        } else if let Some(q) = rest.strip_prefix('Q') {
            let quarter: u32 = q.parse().ok()?;
            (q.len() == 1 && digits(q) && (1..=4).contains(&quarter))
                .then_some(Period::Quarter(year, quarter))
        } else {
            None
        }
    }

    pub fn freq(self) -> Freq {
        match self {
            Period::Month(..) => Freq::Monthly,
            Period::Quarter(..) => Freq::Quarterly,
            Period::Year(_) => Freq::Annual,
        }
    }

    pub fn year(self) -> i32 {
        match self {
            Period::Month(y, _) | Period::Quarter(y, _) | Period::Year(y) => y,
        }
    }

    /// The first day the period covers.
    pub fn start(self) -> NaiveDate {
        let (y, m) = match self {
            Period::Month(y, m) => (y, m),
            Period::Quarter(y, q) => (y, 3 * q - 2),
            Period::Year(y) => (y, 1),
        };
        NaiveDate::from_ymd_opt(y, m, 1).unwrap_or(NaiveDate::MIN)
    }

    /// The last day the period covers.
    pub fn end(self) -> NaiveDate {
        let next = match self {
            Period::Month(y, 12) | Period::Quarter(y, 4) | Period::Year(y) => {
                NaiveDate::from_ymd_opt(y + 1, 1, 1)
            }
            Period::Month(y, m) => NaiveDate::from_ymd_opt(y, m + 1, 1),
            Period::Quarter(y, q) => NaiveDate::from_ymd_opt(y, 3 * q + 1, 1),
        };
        next.and_then(|d| d.pred_opt()).unwrap_or(NaiveDate::MAX)
    }

    /// The period of frequency `freq` that contains the date.
    pub fn of(freq: Freq, d: NaiveDate) -> Period {
        match freq {
            Freq::Monthly => Period::Month(d.year(), d.month()),
            Freq::Quarterly => Period::Quarter(d.year(), (d.month() - 1) / 3 + 1),
            Freq::Annual => Period::Year(d.year()),
        }
    }

    /// The period `n` periods of the same frequency earlier.
    pub fn back(self, n: u32) -> Period {
        let per = self.freq().per_year() as i64;
        let idx = self.year() as i64 * per
            + match self {
                Period::Month(_, m) => m as i64 - 1,
                Period::Quarter(_, q) => q as i64 - 1,
                Period::Year(_) => 0,
            }
            - n as i64;
        let year = idx.div_euclid(per) as i32;
        let within = idx.rem_euclid(per) as u32 + 1;
        match self {
            Period::Month(..) => Period::Month(year, within),
            Period::Quarter(..) => Period::Quarter(year, within),
            Period::Year(_) => Period::Year(year),
        }
    }
}

impl fmt::Display for Period {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Period::Month(y, m) => write!(f, "{y}M{m:02}"),
            Period::Quarter(y, q) => write!(f, "{y}Q{q}"),
            Period::Year(y) => write!(f, "{y}"),
        }
    }
}

/// What a cost series measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    // Tender price indices (what contractors bid): an operator's feed, no open source.
    Tender,
    // ONS construction output price indices (input costs plus a mark-up, 2015 = 100).
    Output,
    // The construction output implied deflator (current prices over chained volume).
    Deflator,
    // Average weekly earnings in construction.
    Labour,
}

impl Basis {
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Tender => "tender",
            Basis::Output => "output",
            Basis::Deflator => "deflator",
            Basis::Labour => "labour",
        }
    }

    pub fn parse(s: &str) -> Option<Basis> {
        [Basis::Tender, Basis::Output, Basis::Deflator, Basis::Labour]
            .into_iter()
            .find(|b| b.as_str() == s)
    }
}

/// The ONS work types (the construction output price indices' series).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Sector {
    // New work: housing (public and private).
    NewHousing,
    // New work: infrastructure.
    Infrastructure,
    // New work: public non-housing.
    PublicNonHousing,
    // New work: private industrial.
    PrivateIndustrial,
    // New work: private commercial.
    PrivateCommercial,
    // All new work.
    AllNewWork,
    // Repair and maintenance: housing.
    HousingRepair,
    // Repair and maintenance: non-housing.
    NonHousingRepair,
    // All repair and maintenance.
    AllRepair,
    // All work (all construction).
    AllWork,
}

/// Every sector, in the order ONS lists the work types.
pub const SECTORS: [Sector; 10] = [
    Sector::NewHousing,
    Sector::Infrastructure,
    Sector::PublicNonHousing,
    Sector::PrivateIndustrial,
    Sector::PrivateCommercial,
    Sector::AllNewWork,
    Sector::HousingRepair,
    Sector::NonHousingRepair,
    Sector::AllRepair,
    Sector::AllWork,
];

impl Sector {
    pub fn as_str(self) -> &'static str {
        match self {
            Sector::NewHousing => "new_housing",
            Sector::Infrastructure => "infrastructure",
            Sector::PublicNonHousing => "public_non_housing",
            Sector::PrivateIndustrial => "private_industrial",
            Sector::PrivateCommercial => "private_commercial",
            Sector::AllNewWork => "all_new_work",
            Sector::HousingRepair => "housing_repair",
            Sector::NonHousingRepair => "non_housing_repair",
            Sector::AllRepair => "all_repair",
            Sector::AllWork => "all_work",
        }
    }

    pub fn parse(s: &str) -> Option<Sector> {
        SECTORS.into_iter().find(|x| x.as_str() == s)
    }
}

/// A region of a location-factor table (the UK's ITL1 regions); `national` is the UK-wide series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Region {
    National,
    NorthEast,
    NorthWest,
    YorkshireAndTheHumber,
    EastMidlands,
    WestMidlands,
    EastOfEngland,
    London,
    SouthEast,
    SouthWest,
    Wales,
    Scotland,
    NorthernIreland,
}

/// Every region.
pub const REGIONS: [Region; 13] = [
    Region::National,
    Region::NorthEast,
    Region::NorthWest,
    Region::YorkshireAndTheHumber,
    Region::EastMidlands,
    Region::WestMidlands,
    Region::EastOfEngland,
    Region::London,
    Region::SouthEast,
    Region::SouthWest,
    Region::Wales,
    Region::Scotland,
    Region::NorthernIreland,
];

impl Region {
    pub fn as_str(self) -> &'static str {
        match self {
            Region::National => "NATIONAL",
            Region::NorthEast => "NORTH_EAST",
            Region::NorthWest => "NORTH_WEST",
            Region::YorkshireAndTheHumber => "YORKSHIRE_AND_THE_HUMBER",
            Region::EastMidlands => "EAST_MIDLANDS",
            Region::WestMidlands => "WEST_MIDLANDS",
            Region::EastOfEngland => "EAST_OF_ENGLAND",
            Region::London => "LONDON",
            Region::SouthEast => "SOUTH_EAST",
            Region::SouthWest => "SOUTH_WEST",
            Region::Wales => "WALES",
            Region::Scotland => "SCOTLAND",
            Region::NorthernIreland => "NORTHERN_IRELAND",
        }
    }

    /// A region by its name (any case; spaces, `-` and `_` alike).
    pub fn parse(s: &str) -> Option<Region> {
        let norm: String = s
            .trim()
            .chars()
            .map(|c| match c {
                ' ' | '-' => '_',
                c => c.to_ascii_uppercase(),
            })
            .collect();
        REGIONS.into_iter().find(|r| r.as_str() == norm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_forms_and_nothing_else() {
        assert_eq!(Period::parse("2014M01"), Some(Period::Month(2014, 1)));
        assert_eq!(Period::parse("2014Q4"), Some(Period::Quarter(2014, 4)));
        assert_eq!(Period::parse("2014"), Some(Period::Year(2014)));
        for bad in [
            "2014M1", "2014M13", "2014M00", "2014Q0", "2014Q5", "2014Q11", "14", "1899", "2100",
            "2014-01", " 2014", "2014m01", "2014M+1", "2014Q+", "",
        ] {
            assert_eq!(Period::parse(bad), None, "{bad}");
        }
        for p in ["2014M01", "2014Q4", "2014", "1900M12"] {
            assert_eq!(Period::parse(p).map(|x| x.to_string()).as_deref(), Some(p));
        }
    }

    #[test]
    fn spans_and_steps() {
        let q = Period::Quarter(2024, 4);
        assert_eq!(q.start(), NaiveDate::from_ymd_opt(2024, 10, 1).unwrap());
        assert_eq!(q.end(), NaiveDate::from_ymd_opt(2024, 12, 31).unwrap());
        assert_eq!(
            Period::Month(2024, 2).end(),
            NaiveDate::from_ymd_opt(2024, 2, 29).unwrap()
        );
        assert_eq!(Period::Month(2024, 3).back(12), Period::Month(2023, 3));
        assert_eq!(Period::Month(2024, 1).back(1), Period::Month(2023, 12));
        assert_eq!(Period::Month(2024, 1).back(60), Period::Month(2019, 1));
        assert_eq!(Period::Quarter(2024, 1).back(4), Period::Quarter(2023, 1));
        assert_eq!(Period::Year(2024).back(5), Period::Year(2019));
        let d = NaiveDate::from_ymd_opt(2024, 8, 15).unwrap();
        assert_eq!(Period::of(Freq::Quarterly, d), Period::Quarter(2024, 3));
    }
}
