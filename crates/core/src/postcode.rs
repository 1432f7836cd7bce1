use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PostcodeError {
    #[error("not a UK postcode: expected an outward code and an inward code such as EX1 1AA")]
    Shape,
    #[error("not a UK postcode district: expected an outward code such as EX1 or SW1A")]
    DistrictShape,
}

/// A full UK postcode, stored in its canonical form: upper case, one space before the inward code.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(try_from = "String", into = "String")]
pub struct Postcode(String);

fn is_outward(o: &[u8]) -> bool {
    // A9, A99, AA9, AA99, A9A, AA9A
    let a = |c: &u8| c.is_ascii_uppercase();
    let d = |c: &u8| c.is_ascii_digit();
    let an = |c: &u8| c.is_ascii_uppercase() || c.is_ascii_digit();
    match o.len() {
        2 => a(&o[0]) && d(&o[1]),
        3 => a(&o[0]) && ((d(&o[1]) && an(&o[2])) || (a(&o[1]) && d(&o[2]))),
        4 => a(&o[0]) && a(&o[1]) && d(&o[2]) && an(&o[3]),
        _ => false,
    }
}

impl Postcode {
    /// Parses a postcode typed with or without its space, in any case.
    pub fn parse(s: &str) -> Result<Self, PostcodeError> {
        let compact: String = s
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let b = compact.as_bytes();
        if !(5..=7).contains(&b.len()) || !compact.is_ascii() {
            return Err(PostcodeError::Shape);
        }
        let (out, inw) = b.split_at(b.len() - 3);
        let inward_ok =
            inw[0].is_ascii_digit() && inw[1].is_ascii_uppercase() && inw[2].is_ascii_uppercase();
        if !(inward_ok && (is_outward(out) || out == b"GIR")) {
            return Err(PostcodeError::Shape);
        }
        Ok(Postcode(format!(
            "{} {}",
            &compact[..out.len()],
            &compact[out.len()..]
        )))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The postcode without its space: `EX11AA`.
    pub fn compact(&self) -> String {
        self.0.replace(' ', "")
    }

    /// The outward code (postcode district): `EX1`.
    pub fn outward(&self) -> &str {
        self.0.split(' ').next().unwrap_or_default()
    }

    pub fn inward(&self) -> &str {
        self.0.split(' ').nth(1).unwrap_or_default()
    }

    /// The postcode sector: `EX1 1`.
    pub fn sector(&self) -> String {
        format!("{} {}", self.outward(), &self.inward()[..1])
    }

    /// The postcode area: the leading letters of the outward code, `EX`.
    pub fn area(&self) -> &str {
        let o = self.outward();
        let n = o.bytes().take_while(u8::is_ascii_alphabetic).count();
        &o[..n]
    }

    /// Parses a postcode district (outward code) alone; a full postcode is truncated to its district.
    pub fn parse_district(s: &str) -> Result<String, PostcodeError> {
        if let Ok(p) = Postcode::parse(s) {
            return Ok(p.outward().to_string());
        }
        let compact: String = s
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| c.to_ascii_uppercase())
            .collect();
        if is_outward(compact.as_bytes()) {
            Ok(compact)
        } else {
            Err(PostcodeError::DistrictShape)
        }
    }
}

impl fmt::Display for Postcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Postcode {
    type Error = PostcodeError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Postcode::parse(&s)
    }
}

impl From<Postcode> for String {
    fn from(p: Postcode) -> String {
        p.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(input: &str, expect: Option<&str>) {
        assert_eq!(
            Postcode::parse(input).ok().as_ref().map(Postcode::as_str),
            expect,
            "{input}"
        );
    }

    #[test]
    fn shapes() {
        check("ex1 1aa", Some("EX1 1AA"));
        check("EX11AA", Some("EX1 1AA"));
        check(" sw1a  1aa ", Some("SW1A 1AA"));
        check("W1A 0AX", Some("W1A 0AX"));
        check("M1 1AE", Some("M1 1AE"));
        check("CR2 6XH", Some("CR2 6XH"));
        check("DN55 1PT", Some("DN55 1PT"));
        check("PO30 1AB", Some("PO30 1AB"));
        check("GIR 0AA", Some("GIR 0AA"));
        check("EX1", None);
        check("12345", None);
        check("EX1 AAA", None);
        check("EXX1 1AA", None);
        check("", None);
    }

    #[test]
    fn parts() {
        let p = Postcode::parse("sw1a1aa").unwrap();
        assert_eq!((p.outward(), p.inward(), p.area()), ("SW1A", "1AA", "SW"));
        assert_eq!(p.sector(), "SW1A 1");
        assert_eq!(p.compact(), "SW1A1AA");
        assert_eq!(Postcode::parse_district("ex4 6pl").unwrap(), "EX4");
        assert_eq!(Postcode::parse_district("po30").unwrap(), "PO30");
        assert!(Postcode::parse_district("Camden").is_err());
    }
}
