//! The minimum energy efficiency standard (MEES) for letting domestic property in England and
//! Wales: a privately rented property rated F or G cannot lawfully be let without a registered
//! exemption (the Energy Efficiency (Private Rented Property) (England and Wales) Regulations
//! 2015). Read by the retrofit candidates here and by the property family's retrofit answer.

use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::Nation;

/// Where a property stands against the minimum energy efficiency standard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MeesStatus {
    /// Rated F or G.
    BelowMinimum,
    /// Rated A to E.
    MeetsMinimum,
    /// Outside England and Wales.
    NotCovered,
    /// No band on the certificate.
    Unknown,
}

terrace_core::status_text!(MeesStatus);

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Mees {
    /// `below_minimum` (F or G), `meets_minimum` (A to E), `not_covered` (outside England and
    /// Wales) or `unknown` (no band on the certificate).
    pub status: MeesStatus,
    pub minimum_band: &'static str,
    /// False for F or G: such a property cannot lawfully be let without a registered exemption.
    /// Null when not covered or unknown.
    pub lawful_to_let_without_exemption: Option<bool>,
    pub note: &'static str,
}

/// The band's place from A (0) to G (6).
pub fn band_index(b: &str) -> Option<i32> {
    match b.trim().to_ascii_uppercase().as_str() {
        "A" => Some(0),
        "B" => Some(1),
        "C" => Some(2),
        "D" => Some(3),
        "E" => Some(4),
        "F" => Some(5),
        "G" => Some(6),
        _ => None,
    }
}

pub const MEES_NOTE: &str = "Under the minimum energy efficiency standard, a privately rented property in England and Wales rated F or G cannot lawfully be let without a registered exemption. This is a legal bar on letting, not a valuation adjustment.";

/// The standard applied to a certificate's current band in a nation (None: the nation is not
/// known, and England and Wales are assumed, as the register covers only them).
pub fn mees(band: Option<&str>, nation: Option<Nation>) -> Mees {
    let covered = !matches!(nation, Some(Nation::Scotland | Nation::NorthernIreland));
    let idx = band.and_then(band_index);
    let (status, lawful) = match (covered, idx) {
        (false, _) => (MeesStatus::NotCovered, None),
        (true, None) => (MeesStatus::Unknown, None),
        (true, Some(i)) if i >= 5 => (MeesStatus::BelowMinimum, Some(false)),
        (true, Some(_)) => (MeesStatus::MeetsMinimum, Some(true)),
    };
    Mees {
        status,
        minimum_band: "E",
        lawful_to_let_without_exemption: lawful,
        note: MEES_NOTE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mees_bands() {
        assert_eq!(
            mees(Some("F"), Some(Nation::England)).status,
            "below_minimum"
        );
        assert_eq!(
            mees(Some("G"), None).lawful_to_let_without_exemption,
            Some(false)
        );
        assert_eq!(mees(Some("E"), Some(Nation::Wales)).status, "meets_minimum");
        assert_eq!(
            mees(Some("F"), Some(Nation::Scotland)).status,
            "not_covered"
        );
        assert_eq!(mees(None, Some(Nation::England)).status, "unknown");
        assert_eq!(band_index("g"), Some(6));
        assert_eq!(band_index("H"), None);
    }
}
