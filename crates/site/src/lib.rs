//! The site family (specification part 4.4): construction cost series ([`cost_index`]) and
//! build-cost estimates ([`build_cost`]), read from the stored cost series (ONS output price
//! indices, the implied construction deflator, average weekly earnings in construction, and an
//! operator's tender price index), the operator's location factors and tender benchmarks.
//!
//! Invariants: plain functions over a context, no HTTP or MCP types; nothing is invented: a
//! series, factor or benchmark that is not loaded is `not_available` with the reason, never a
//! default number; the on-cost percentages are editorial constants and the answer says so;
//! periods are in the series' own format (`2024M01`, `2024Q1`, `2024`).

pub mod build_cost;
pub mod cost_index;
mod period;

pub use period::{Freq, PERIOD_PATTERN, Period};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use terrace_core::Violation;
use terrace_store::{Db, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    /// The input breaks a rule of the operation (located in the query).
    #[error("invalid input")]
    Invalid(Vec<Violation>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The family's context: the store.
#[derive(Clone)]
pub struct SiteCtx {
    pub db: Db,
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

/// Whether a block could be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    NotAvailable,
}

/// The publisher, licence and method of each basis (docs/DATA.md, docs/METHODS.md).
pub fn method_of(basis: Basis) -> &'static str {
    match basis {
        Basis::Tender => {
            "tender price index from the operator's feed (docs/DATA.md, \"Tender price feed\"), as supplied"
        }
        Basis::Output => {
            "ONS construction output price indices: input costs (materials from producer price indices, plant hire from the services producer price index, labour from average weekly earnings in construction) weighted by work type, plus a profit mark-up, as a proxy for output prices; not tender prices"
        }
        Basis::Deflator => {
            "the construction output implied deflator: output at current prices over output in chained volume measures, times 100"
        }
        Basis::Labour => {
            "average weekly earnings in construction (SIC 2007 section F), pounds per week, as ONS publishes them"
        }
    }
}

/// The source named for each basis.
pub fn publisher_of(basis: Basis) -> &'static str {
    match basis {
        Basis::Tender => "the operator's tender price feed",
        Basis::Output | Basis::Deflator | Basis::Labour => {
            "Office for National Statistics (Open Government Licence v3.0)"
        }
    }
}
