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

/// A reference number: a positive integer of at most 12 digits, range-checked wherever it is
/// made, deserialisation included.
macro_rules! reference_number {
    ($(#[$doc:meta])* $name:ident, $range_error:expr, $example:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(transparent)]
        pub struct $name(i64);

        impl $name {
            pub const MAX: i64 = 999_999_999_999;

            pub fn new(v: i64) -> Result<Self, IdError> {
                if (1..=Self::MAX).contains(&v) {
                    Ok($name(v))
                } else {
                    Err($range_error)
                }
            }

            /// Decimal digits, optionally after a minus sign: no plus sign, no spaces, and no
            /// more than 12 digits (leading zeros count).
            pub fn parse(s: &str) -> Result<Self, IdError> {
                let digits = s.strip_prefix('-').unwrap_or(s);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(IdError::NotInteger);
                }
                if digits.len() > 12 {
                    return Err($range_error);
                }
                let v: i64 = s.parse().map_err(|_| IdError::NotInteger)?;
                Self::new(v)
            }

            pub fn get(self) -> i64 {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $name::new(i64::deserialize(d)?).map_err(serde::de::Error::custom)
            }
        }

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

                        fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "type": "integer",
                    "minimum": 1,
                    "maximum": $name::MAX,
                    "examples": [$example],
                })
            }
        }
    };
}

reference_number!(
    /// Unique Property Reference Number: a positive integer of at most 12 digits.
    Uprn,
    IdError::UprnRange,
    100040212345i64
);

reference_number!(
    /// Unique Address Reference Number: the VOA's identifier of a rated property (hereditament)
    /// in the non-domestic rating lists, a positive integer of at most 12 digits.
    Uarn,
    IdError::UarnRange,
    10011934000i64
);

/// One entry of a batch of UPRNs, as given: a valid UPRN, or the value that is not one (answered
/// as an `error` item, never failing the batch). Deserialising never fails.
#[derive(Debug, Clone, PartialEq)]
pub struct UprnEntry {
    /// The entry exactly as given (echoed in the answer).
    pub given: serde_json::Value,
    /// The UPRN it names, if it is one.
    pub uprn: Option<Uprn>,
}

impl<'de> Deserialize<'de> for UprnEntry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let given = serde_json::Value::deserialize(d)?;
        let uprn = match &given {
            serde_json::Value::Number(n) => n.as_i64().and_then(|v| Uprn::new(v).ok()),
            serde_json::Value::String(s) => Uprn::parse(s).ok(),
            serde_json::Value::Null
            | serde_json::Value::Bool(_)
            | serde_json::Value::Array(_)
            | serde_json::Value::Object(_) => None,
        };
        Ok(UprnEntry { given, uprn })
    }
}

impl Serialize for UprnEntry {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.given.serialize(s)
    }
}

impl schemars::JsonSchema for UprnEntry {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "UprnEntry".into()
    }

    fn inline_schema() -> bool {
        true
    }

    /// Any JSON value: a UPRN (a positive integer of at most 12 digits, or its digits as a
    /// string) is looked up; anything else is answered as an `error` item, never refused.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A UPRN (a positive integer of at most 12 digits, or those digits as a string); any other value is answered as an `error` item that echoes it and costs nothing.",
            "examples": [100040212345i64],
        })
    }
}

/// A GSS statistical code (E07000041, W06000015, S12000033, N09000003, E01012345, ...).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct GssCode(String);

impl GssCode {
    /// A letter and eight digits, in any case, with spaces around it allowed: exactly the strings
    /// [`crate::patterns::GSS_CODE`] matches.
    pub fn parse(s: &str) -> Result<Self, IdError> {
        let s = s.trim_matches(' ').to_ascii_uppercase();
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
    fn ranges_are_checked_when_deserialised() {
        assert_eq!(serde_json::from_str::<Uprn>("12").unwrap().get(), 12);
        assert!(serde_json::from_str::<Uprn>("0").is_err());
        assert!(serde_json::from_str::<Uprn>("1000000000000").is_err());
        assert!(serde_json::from_str::<Uarn>("-1").is_err());
        let e: Vec<UprnEntry> = serde_json::from_str(r#"[5, "6", -1, "x"]"#).unwrap();
        let ok: Vec<Option<i64>> = e.iter().map(|e| e.uprn.map(Uprn::get)).collect();
        assert_eq!(ok, vec![Some(5), Some(6), None, None]);
        assert_eq!(e[1].given, serde_json::json!("6"));
    }

    #[test]
    fn uprn_bounds() {
        assert_eq!(Uprn::parse("100040212345").unwrap().get(), 100040212345);
        assert_eq!(Uprn::parse("abc"), Err(IdError::NotInteger));
        assert_eq!(Uprn::parse("1.5"), Err(IdError::NotInteger));
        assert_eq!(Uprn::parse("0"), Err(IdError::UprnRange));
        assert_eq!(Uprn::parse("-4"), Err(IdError::UprnRange));
        assert_eq!(Uprn::parse("1000000000000"), Err(IdError::UprnRange));
        assert_eq!(Uprn::parse("+990000000015"), Err(IdError::NotInteger));
        assert_eq!(Uprn::parse(" 12"), Err(IdError::NotInteger));
        assert_eq!(
            Uprn::parse("00000000000000000000990000000015"),
            Err(IdError::UprnRange)
        );
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
