//! Small value parsers shared by the dataset modules.

use chrono::NaiveDate;
use terrace_core::Postcode;

/// Decodes bytes as UTF-8, or as Latin-1 when they are not valid UTF-8.
pub(crate) fn decode(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

/// Placeholders the publishers use for "no value" (compared case-insensitively, trimmed).
const MISSING: &[&str] = &[
    "", "NO DATA!", "NODATA!", "NO DATA", "INVALID!", "N/A", "NULL", "NAN",
];

/// The trimmed value, or `None` for a blank or a "no value" placeholder.
pub(crate) fn present(v: Option<&str>) -> Option<&str> {
    let v = v?.trim();
    (!MISSING.iter().any(|m| m.eq_ignore_ascii_case(v))).then_some(v)
}

/// Like [`present`], owned.
pub(crate) fn text(v: Option<&str>) -> Option<String> {
    present(v).map(str::to_string)
}

/// The canonical postcode, or `None` when blank or malformed.
pub(crate) fn postcode(v: Option<&str>) -> Option<String> {
    present(v)
        .and_then(|p| Postcode::parse(p).ok())
        .map(String::from)
}

/// A date given as `YYYY-MM-DD`, optionally followed by a time (`2024-08-31 11:24:09`,
/// `2002-11-19 00:00`, `2024-08-31T11:24:09Z`), or as `DD/MM/YYYY`.
pub(crate) fn date(v: &str) -> Option<NaiveDate> {
    let v = v.trim();
    let (day, time) = match v.find([' ', 'T']) {
        Some(i) => (&v[..i], &v[i + 1..]),
        None => (v, ""),
    };
    let time_ok = time
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, ':' | '.' | 'Z' | '+' | '-'));
    if !time_ok {
        return None;
    }
    NaiveDate::parse_from_str(day, "%Y-%m-%d")
        .or_else(|_| NaiveDate::parse_from_str(day, "%d/%m/%Y"))
        .ok()
}

/// A finite decimal number.
pub(crate) fn float(v: &str) -> Option<f64> {
    v.trim().parse::<f64>().ok().filter(|f| f.is_finite())
}

/// An integer, also accepting an integral decimal such as `71.0` (as spreadsheet exports write them).
pub(crate) fn int(v: &str) -> Option<i64> {
    let v = v.trim();
    if let Ok(i) = v.parse::<i64>() {
        return Some(i);
    }
    let (whole, frac) = v.split_once('.')?;
    if frac.is_empty() || !frac.bytes().all(|b| b == b'0') {
        return None;
    }
    whole.parse::<i64>().ok()
}

/// A UPRN: a positive integer of at most 12 digits (`100041141774`, also `100041141774.0`).
pub(crate) fn uprn(v: &str) -> Option<i64> {
    let v = v.trim();
    let digits = v.strip_suffix(".0").unwrap_or(v);
    if digits.is_empty() || digits.len() > 12 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<i64>().ok().filter(|&u| u > 0)
}

/// A 128-bit FNV-1a hash as 32 hex digits: stable across Rust versions and platforms
/// (unlike `std`'s `DefaultHasher`), so keys derived from it are stable between loads.
pub(crate) fn stable_hash(parts: &[&str]) -> String {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let mut h = OFFSET;
    for (i, part) in parts.iter().enumerate() {
        // a separator that cannot appear in the text keeps ("ab","c") and ("a","bc") apart
        let sep: &[u8] = if i == 0 { b"" } else { b"\x1f" };
        for &b in sep.iter().chain(part.as_bytes()) {
            h ^= u128::from(b);
            h = h.wrapping_mul(PRIME);
        }
    }
    format!("{h:032x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        let d = NaiveDate::from_ymd_opt(2002, 11, 19);
        for s in [
            "2002-11-19",
            "2002-11-19 00:00",
            "2002-11-19T00:00:00Z",
            "19/11/2002",
            " 2002-11-19 ",
        ] {
            assert_eq!(date(s), d, "{s}");
        }
        for s in ["2002-13-01", "", "yesterday", "2002-11-19 noon", "20021119"] {
            assert_eq!(date(s), None, "{s}");
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(int("71"), Some(71));
        assert_eq!(int("71.0"), Some(71));
        assert_eq!(int("71.5"), None);
        assert_eq!(int("x"), None);
        assert_eq!(float(" 33.5 "), Some(33.5));
        assert_eq!(float("NaN"), None);
        assert_eq!(uprn("100041141774"), Some(100_041_141_774));
        assert_eq!(uprn("100041141774.0"), Some(100_041_141_774));
        for bad in ["", "0", "-5", "12a", "1e5", "1234567890123"] {
            assert_eq!(uprn(bad), None, "{bad}");
        }
    }

    #[test]
    fn placeholders() {
        for v in ["", "  ", "NO DATA!", "INVALID!", "n/a", "nan"] {
            assert_eq!(present(Some(v)), None, "{v}");
        }
        assert_eq!(present(Some(" Flat ")), Some("Flat"));
        assert_eq!(postcode(Some("ex42lr")), Some("EX4 2LR".to_string()));
        assert_eq!(postcode(Some("not one")), None);
    }

    #[test]
    fn hash_is_stable() {
        assert_eq!(stable_hash(&[]), "6c62272e07bb014262b821756295c58d");
        assert_ne!(stable_hash(&["ab", "c"]), stable_hash(&["a", "bc"]));
        assert_eq!(stable_hash(&["a", "b"]), stable_hash(&["a", "b"]));
    }
}
