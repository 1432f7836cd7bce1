use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("Input should be a valid integer, unable to parse string as an integer")]
    NotInteger,
    #[error("UPRN must be a positive integer of at most 12 digits")]
    UprnRange,
    #[error("GSS code must be a letter followed by eight digits, such as E07000041")]
    GssShape,
    #[error("UARN must be a positive integer of at most 12 digits")]
    UarnRange,
}

/// Unique Property Reference Number: a positive integer of at most 12 digits.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct Uprn(i64);

impl Uprn {
    pub const MAX: i64 = 999_999_999_999;

    pub fn new(v: i64) -> Result<Self, IdError> {
        if (1..=Self::MAX).contains(&v) {
            Ok(Uprn(v))
        } else {
            Err(IdError::UprnRange)
        }
    }

    pub fn parse(s: &str) -> Result<Self, IdError> {
        let v: i64 = s.trim().parse().map_err(|_| IdError::NotInteger)?;
        Self::new(v)
    }

    pub fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for Uprn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Unique Address Reference Number: the VOA's identifier of a rated property (hereditament) in
/// the non-domestic rating lists, a positive integer of at most 12 digits.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct Uarn(i64);

impl Uarn {
    pub const MAX: i64 = 999_999_999_999;

    pub fn new(v: i64) -> Result<Self, IdError> {
        if (1..=Self::MAX).contains(&v) {
            Ok(Uarn(v))
        } else {
            Err(IdError::UarnRange)
        }
    }

    pub fn parse(s: &str) -> Result<Self, IdError> {
        let v: i64 = s.trim().parse().map_err(|_| IdError::NotInteger)?;
        Self::new(v)
    }

    pub fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for Uarn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A GSS statistical code (E07000041, W06000015, S12000033, N09000003, E01012345, ...).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct GssCode(String);

impl GssCode {
    pub fn parse(s: &str) -> Result<Self, IdError> {
        let s = s.trim().to_ascii_uppercase();
        let b = s.as_bytes();
        if b.len() == 9 && b[0].is_ascii_uppercase() && b[1..].iter().all(u8::is_ascii_digit) {
            Ok(GssCode(s))
        } else {
            Err(IdError::GssShape)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The nation the code belongs to, from its first letter.
    pub fn nation(&self) -> Nation {
        match self.0.as_bytes()[0] {
            b'E' => Nation::England,
            b'W' => Nation::Wales,
            b'S' => Nation::Scotland,
            b'N' => Nation::NorthernIreland,
            _ => Nation::Other,
        }
    }
}

impl fmt::Display for GssCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Nation {
    England,
    Wales,
    Scotland,
    NorthernIreland,
    Other,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uprn_bounds() {
        assert_eq!(Uprn::parse("100040212345").unwrap().get(), 100040212345);
        assert_eq!(Uprn::parse("abc"), Err(IdError::NotInteger));
        assert_eq!(Uprn::parse("1.5"), Err(IdError::NotInteger));
        assert_eq!(Uprn::parse("0"), Err(IdError::UprnRange));
        assert_eq!(Uprn::parse("-4"), Err(IdError::UprnRange));
        assert_eq!(Uprn::parse("1000000000000"), Err(IdError::UprnRange));
    }

    #[test]
    fn uarn_bounds() {
        assert_eq!(Uarn::parse("10011934000").unwrap().get(), 10011934000);
        assert_eq!(Uarn::parse("x"), Err(IdError::NotInteger));
        assert_eq!(Uarn::parse("0"), Err(IdError::UarnRange));
        assert_eq!(Uarn::parse("1000000000000"), Err(IdError::UarnRange));
    }

    #[test]
    fn gss() {
        assert_eq!(GssCode::parse("e07000041").unwrap().as_str(), "E07000041");
        assert_eq!(GssCode::parse("E0700004").unwrap_err(), IdError::GssShape);
        assert_eq!(
            GssCode::parse("S12000033").unwrap().nation(),
            Nation::Scotland
        );
    }
}
