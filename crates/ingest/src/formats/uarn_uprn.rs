//! A UARN to UPRN lookup: a CSV with a header naming a `uarn` column and a `uprn` column (any
//! other columns are ignored), one link per row.
//!
//! Rejections: a wrong column count, a UARN or UPRN that is not a positive integer of at most 12
//! digits.

use super::csvio::{Header, Opened, field};
use super::{Parsed, value};
use std::io;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UarnLink {
    pub uarn: i64,
    pub uprn: i64,
}

/// Whether a normalised header is a UARN to UPRN lookup.
pub fn is_header(names: &[String]) -> bool {
    names.iter().any(|n| n == "uarn") && names.iter().any(|n| n == "uprn")
}

pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<UarnLink>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names);
    let uarn = h.require(&source.file, &["uarn"])?;
    let uprn = h.require(&source.file, &["uprn"])?;
    let rows = source.rows(h.len(), move |f| {
        let a = field(f, Some(uarn)).unwrap_or_default();
        let u = field(f, Some(uprn)).unwrap_or_default();
        Ok(UarnLink {
            uarn: value::uprn(a).ok_or_else(|| format!("UARN {a:?} is not a positive integer"))?,
            uprn: value::uprn(u).ok_or_else(|| format!("UPRN {u:?} is not a positive integer"))?,
        })
    });
    Ok(Some(rows).into_iter().flatten())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    #[test]
    fn links() {
        let f = temp_file(b"UARN,UPRN\n10011934000,990000000020\nabc,1\n5,\n");
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(
            ok,
            vec![(
                2,
                UarnLink {
                    uarn: 10011934000,
                    uprn: 990000000020
                }
            )]
        );
        assert_eq!(bad.iter().map(|b| b.line).collect::<Vec<_>>(), vec![3, 4]);
    }
}
