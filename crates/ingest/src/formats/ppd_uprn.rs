//! HM Land Registry's Price Paid transaction-to-UPRN lookup: two columns, the transaction's
//! unique identifier and the UPRN it was matched to.
//!
//! A header row (any names) is optional: a first line whose second field is not a number is a
//! header. Identifiers may carry braces; they are stored without them, upper case.
//! Rejections: wrong column count, a blank identifier, a UPRN that is not a positive integer.

use super::csvio::Opened;
use super::{Parsed, value};
use std::io;
use std::path::Path;

/// One link from a Price Paid transaction to a UPRN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRow {
    pub transaction_id: String,
    pub uprn: i64,
}

pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<LinkRow>> + Send> {
    let opened = Opened::open(path)?;
    let first = String::from_utf8_lossy(opened.first_line()).to_string();
    let second = first
        .split(',')
        .nth(1)
        .map(|f| f.trim().trim_matches('"').to_string());
    let has_header = second.is_some_and(|f| !f.is_empty() && value::uprn(&f).is_none());
    let mut source = opened.into_source();
    if has_header {
        source.header()?;
    }
    Ok(source.rows(2, |fields| {
        let id = fields[0]
            .trim()
            .trim_matches(|c| c == '{' || c == '}')
            .to_ascii_uppercase();
        if id.is_empty() {
            return Err("blank transaction identifier".into());
        }
        let uprn = value::uprn(&fields[1])
            .ok_or_else(|| format!("UPRN {:?} is not a positive integer", fields[1]))?;
        Ok(LinkRow {
            transaction_id: id,
            uprn,
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    #[test]
    fn with_and_without_header() {
        let f =
            temp_file(b"transaction_unique_identifier,uprn\n{AB-1},100040212345\nab-2,x\nab-3\n");
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(
            ok,
            vec![(
                2,
                LinkRow {
                    transaction_id: "AB-1".into(),
                    uprn: 100040212345
                }
            )]
        );
        let lines: Vec<u64> = bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![3, 4]);
        let f = temp_file(b"\"{CD-1}\",\"5\"\n");
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!((ok.len(), bad.len()), (1, 0));
        assert_eq!(ok[0].1.transaction_id, "CD-1");
    }
}
