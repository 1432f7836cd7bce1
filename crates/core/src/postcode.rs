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
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Postcode(String);

impl schemars::JsonSchema for Postcode {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Postcode".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A full UK postcode, in any case, with or without its space (EX1 1AA, ex11aa).",
            "pattern": crate::patterns::POSTCODE,
            "examples": ["EX1 1AA"],
        })
    }
}

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
    /// Parses a postcode typed with or without its space, in any case: spaces (U+0020) may stand
    /// before it, after it and between the outward and inward codes, nowhere else. Exactly the
    /// strings [`crate::patterns::POSTCODE`] matches.
    pub fn parse(s: &str) -> Result<Self, PostcodeError> {
        let t = s.trim_matches(' ');
        if !t.is_ascii() || t.len() < 5 {
            return Err(PostcodeError::Shape);
        }
        let (out, inw) = t.split_at(t.len() - 3);
        let out = out.trim_end_matches(' ').to_ascii_uppercase();
        let inw = inw.to_ascii_uppercase();
        let (o, i) = (out.as_bytes(), inw.as_bytes());
        let inward_ok =
            i[0].is_ascii_digit() && i[1].is_ascii_uppercase() && i[2].is_ascii_uppercase();
        if !(inward_ok && (is_outward(o) || o == b"GIR")) {
            return Err(PostcodeError::Shape);
        }
        Ok(Postcode(format!("{out} {inw}")))
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

    /// Parses a postcode district (outward code) alone; a full postcode is truncated to its
    /// district. Spaces may stand around it; exactly the strings [`crate::patterns::DISTRICT`]
    /// matches.
    pub fn parse_district(s: &str) -> Result<String, PostcodeError> {
        if let Ok(p) = Postcode::parse(s) {
            return Ok(p.outward().to_string());
        }
        let t = s.trim_matches(' ').to_ascii_uppercase();
        if is_outward(t.as_bytes()) {
            Ok(t)
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
