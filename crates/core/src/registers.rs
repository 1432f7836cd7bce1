//! The identifiers of the ownership registers (HM Land Registry's CCOD and OCOD, Companies
//! House), parsed once, and one proprietor as the registers list it: declared here, below the
//! loaders that read the registers and the ownership family that answers from them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One proprietor as the register lists it (also the stored `proprietors_json` item).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Proprietor {
    pub name: String,
    /// As Companies House writes it (eight characters, leading zeros restored); an overseas
    /// company's own registry number as given.
    pub company_number: Option<String>,
    /// `Proprietorship Category`, e.g. `Limited Company or Public Limited Company`.
    pub category: Option<String>,
    /// Where an overseas company was incorporated (OCOD only).
    pub country_incorporated: Option<String>,
    /// The proprietor's address for service, as registered (up to three lines).
    pub address: Vec<String>,
}

/// A title number as HM Land Registry writes it: up to three letters (the registration district's
/// prefix, `DN`, `TGL`, `WSX`) then one to seven digits (`DN123456`, `TGL12345`, `123456`), any
/// case on input, upper case once parsed.
pub fn parse_title_number(s: &str) -> Option<String> {
    let t = s.trim().to_ascii_uppercase();
    let letters = t.bytes().take_while(u8::is_ascii_uppercase).count();
    let digits = &t[letters..];
    let ok = letters <= 3
        && (1..=7).contains(&digits.len())
        && digits.bytes().all(|b| b.is_ascii_digit());
    ok.then_some(t)
}

/// A company number as Companies House writes it (eight characters), or `None` for a blank.
///
/// Spaces are removed and letters upper-cased. A purely numeric number is left-padded with zeros
/// to eight digits (`1234567` is `01234567`); a number with a two-letter prefix (`SC`, `OC`, `NI`,
/// `OE`, ...) keeps the prefix and pads its digits to six (`SC12345` is `SC012345`). The bulk
/// registers often drop the leading zeros, so without this a title would not join its company.
/// `foreign` marks a number from OCOD: an overseas company's number is its own country's registry
/// number, which is kept as given (upper case, spaces removed) unless it is an `OE` number of the
/// UK Register of Overseas Entities.
pub fn normalise_company_number(raw: &str, foreign: bool) -> Option<String> {
    let n: String = raw
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_uppercase();
    if n.is_empty() {
        return None;
    }
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let prefix: String = n.chars().take_while(char::is_ascii_uppercase).collect();
    let digits = &n[prefix.len()..];
    if foreign && prefix != "OE" {
        return Some(n);
    }
    if prefix.is_empty() && all_digits(digits) && digits.len() <= 8 {
        return Some(format!("{digits:0>8}"));
    }
    if prefix.len() == 2 && all_digits(digits) && digits.len() <= 6 {
        return Some(format!("{prefix}{digits:0>6}"));
    }
    Some(n)
}

/// A proprietor's name normalised for look-up: upper case, `&` as `AND`, punctuation dropped,
/// a leading `THE` dropped, and the legal-form words in one spelling (`LIMITED` is `LTD`,
/// `PUBLIC LIMITED COMPANY` is `PLC`, `LIMITED LIABILITY PARTNERSHIP` is `LLP`, `COMPANY` is
/// `CO`), single spaces.
pub fn name_key(name: &str) -> String {
    let cleaned: String = name
        .to_uppercase()
        .replace('&', " AND ")
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    let mut out: Vec<&str> = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let rest = &words[i..];
        let (word, used) = match rest {
            ["PUBLIC", "LIMITED", "COMPANY", ..] => ("PLC", 3),
            ["LIMITED", "LIABILITY", "PARTNERSHIP", ..] => ("LLP", 3),
            ["LIMITED", ..] => ("LTD", 1),
            ["COMPANY", ..] => ("CO", 1),
            [w, ..] => (*w, 1),
            [] => break,
        };
        if !(i == 0 && word == "THE" && words.len() > 1) {
            out.push(word);
        }
        i += used;
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_numbers() {
        for (s, want) in [
            ("DN123456", Some("DN123456")),
            (" tgl12345 ", Some("TGL12345")),
            ("123456", Some("123456")),
            ("WSX1", Some("WSX1")),
            ("ABCD123", None),
            ("DN", None),
            ("DN12345678", None),
            ("DN-123", None),
            ("", None),
        ] {
            assert_eq!(parse_title_number(s).as_deref(), want, "{s}");
        }
    }

    #[test]
    fn company_numbers() {
        for (s, foreign, want) in [
            ("1234567", false, Some("01234567")),
            ("01234567", false, Some("01234567")),
            ("SC12345", false, Some("SC012345")),
            ("sc 012345", false, Some("SC012345")),
            ("OC301234", false, Some("OC301234")),
            ("NI5", false, Some("NI000005")),
            ("OE12", true, Some("OE000012")),
            ("12345", true, Some("12345")),
            ("C 1234-X", true, Some("C1234-X")),
            ("IP12345R", false, Some("IP12345R")),
            ("  ", false, None),
        ] {
            assert_eq!(normalise_company_number(s, foreign).as_deref(), want, "{s}");
        }
    }

    #[test]
    fn name_keys() {
        assert_eq!(name_key("The Acme Holdings Limited"), "ACME HOLDINGS LTD");
        assert_eq!(name_key("ACME HOLDINGS LTD."), "ACME HOLDINGS LTD");
        assert_eq!(
            name_key("Smith & Jones Public Limited Company"),
            "SMITH AND JONES PLC"
        );
        assert_eq!(name_key("  Brick (UK)  LLP "), "BRICK UK LLP");
        assert_eq!(name_key("THE"), "THE");
    }
}
