//! ONS "names and codes" CSVs (the Open Geography Portal's lists of one geography's GSS codes
//! and names, e.g. `LAD23CD,LAD23NM,LAD23NMW,ObjectId` or `WD23CD,WD23NM`).
//!
//! The header is read generically: a code column is `<stem><yy>CD` and its name column
//! `<stem><yy>NM` (any case, any two-digit vintage), with `<stem>` one of `LSOA`, `MSOA`, `WD`,
//! `LAD`, `LTLA`, `CTY`, `CTYUA`, `UTLA`, `RGN`, `CTRY`, `BUA`, `LPA`. A lookup file carrying
//! several pairs (`WD23CD,WD23NM,LAD23CD,LAD23NM`) is read by its finest pair. The Welsh name
//! (`...NMW`) and other columns are ignored.
//!
//! The kind of each row comes from its code's GSS entity prefix (`E05` is a ward), which must be
//! one the column allows (a `CTYUA` column holds counties and unitary authorities, which are
//! local authority districts). Rejections: a wrong column count, a blank code or name, a code
//! that is not a GSS code, and a code of a kind the column does not hold.

use super::Parsed;
use super::csvio::{Opened, field};
use std::io;
use std::path::Path;
use terrace_core::{AreaKind, GssCode};

/// One named GSS code.
#[derive(Debug, Clone, PartialEq)]
pub struct AreaNameRow {
    pub kind: AreaKind,
    pub code: String,
    pub name: String,
}

/// The column stems, finest first, with the kinds their codes may be.
const STEMS: &[(&str, &[AreaKind])] = &[
    ("lsoa", &[AreaKind::Lsoa]),
    ("msoa", &[AreaKind::Msoa]),
    ("wd", &[AreaKind::Ward]),
    ("bua", &[AreaKind::Bua]),
    ("lad", &[AreaKind::Lad]),
    ("ltla", &[AreaKind::Lad]),
    ("lpa", &[AreaKind::Lpa]),
    ("ctyua", &[AreaKind::County, AreaKind::Lad]),
    ("utla", &[AreaKind::County, AreaKind::Lad]),
    ("cty", &[AreaKind::County]),
    ("rgn", &[AreaKind::Region]),
    ("ctry", &[AreaKind::Country]),
];

/// `(stem index, vintage)` of a normalised code column name (`wd23cd` is `wd`, 23).
fn code_column(name: &str) -> Option<(usize, String)> {
    let stem_yy = name.strip_suffix("cd")?;
    let (stem, yy) = stem_yy.split_at(stem_yy.len().checked_sub(2)?);
    if !yy.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let i = STEMS.iter().position(|(s, _)| *s == stem)?;
    Some((i, yy.to_string()))
}

/// Whether a normalised header is a names-and-codes header (a code column with its name column).
pub fn is_header(names: &[String]) -> bool {
    columns(names).is_some()
}

/// (code column, name column, allowed kinds) of the finest pair in a header.
fn columns(names: &[String]) -> Option<(usize, usize, &'static [AreaKind])> {
    names
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            let (stem, yy) = code_column(n)?;
            let nm = format!("{}{yy}nm", STEMS[stem].0);
            let j = names.iter().position(|m| *m == nm)?;
            Some((stem, i, j))
        })
        .min()
        .map(|(stem, i, j)| (i, j, STEMS[stem].1))
}

/// Opens a names-and-codes CSV; a header without a code and name pair is an `InvalidData` error.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<AreaNameRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let names = source.header()?.unwrap_or_default();
    let (code, name, kinds) = columns(&names).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: header has no ONS code and name columns (e.g. LAD23CD, LAD23NM)",
                source.file
            ),
        )
    })?;
    Ok(source.rows(names.len(), move |f| {
        let raw = field(f, Some(code)).ok_or("blank code")?;
        let gss = GssCode::parse(raw).map_err(|_| format!("{raw:?} is not a GSS code"))?;
        let kind = AreaKind::of_gss(&gss)
            .filter(|k| kinds.contains(k))
            .ok_or_else(|| {
                let want: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
                format!("{gss} is not a {} code", want.join(" or "))
            })?;
        let name = field(f, Some(name)).ok_or_else(|| format!("{gss}: blank name"))?;
        Ok(AreaNameRow {
            kind,
            code: gss.as_str().to_string(),
            name: name.to_string(),
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    #[test]
    fn any_geography_and_vintage_with_rejections() {
        for (content, kind) in [
            (
                "\u{feff}LAD23CD,LAD23NM,LAD23NMW,ObjectId\nE07000041,Exeter,,1\nW06000001,Isle of Anglesey,Ynys Môn,2\n",
                AreaKind::Lad,
            ),
            (
                "WD24CD,WD24NM\nE05003491,Alphington\nS13002516,Annandale East\n",
                AreaKind::Ward,
            ),
            (
                "msoa21cd,msoa21nm\nE02004156,Exeter 001\nW02000001,x\n",
                AreaKind::Msoa,
            ),
            (
                "RGN22CD,RGN22NM\nE12000009,South West\nE12000007,London\n",
                AreaKind::Region,
            ),
            (
                "CTRY22CD,CTRY22NM\nE92000001,England\nW92000004,Wales\n",
                AreaKind::Country,
            ),
        ] {
            let f = temp_file(content.as_bytes());
            let (ok, bad) = split(read(f.path()).unwrap());
            assert!(bad.is_empty(), "{bad:?}");
            assert_eq!(ok.len(), 2);
            assert!(ok.iter().all(|(_, r)| r.kind == kind), "{content}");
            assert_eq!(ok[0].0, 2);
        }
        // A lookup file is read by its finest pair; a county-and-unitary file holds both kinds.
        let f =
            temp_file(b"WD23CD,WD23NM,LAD23CD,LAD23NM\nE05003491,Alphington,E07000041,Exeter\n");
        let (ok, _) = split(read(f.path()).unwrap());
        assert_eq!(
            (ok[0].1.kind, ok[0].1.name.as_str()),
            (AreaKind::Ward, "Alphington")
        );
        let f = temp_file(
            b"CTYUA23CD,CTYUA23NM\nE10000008,Devon\nE06000046,Isle of Wight\n,Blank\nE05003491,Ward\nX1,Bad\nE10000009,\nE10000010,Two,Extra\n",
        );
        let (ok, bad) = split(read(f.path()).unwrap());
        let kinds: Vec<AreaKind> = ok.iter().map(|(_, r)| r.kind).collect();
        assert_eq!(kinds, [AreaKind::County, AreaKind::Lad]);
        let reasons: Vec<(u64, &str)> = bad.iter().map(|r| (r.line, r.reason.as_str())).collect();
        assert_eq!(reasons.len(), 5, "{reasons:?}");
        assert_eq!(reasons[0], (4, "blank code"));
        assert!(
            reasons[1].1.contains("not a county or lad code"),
            "{reasons:?}"
        );
        assert!(reasons[2].1.contains("not a GSS code"), "{reasons:?}");
        assert!(reasons[3].1.contains("blank name"), "{reasons:?}");
        assert!(reasons[4].1.contains("columns"), "{reasons:?}");
    }

    #[test]
    fn a_header_without_a_pair_is_refused() {
        for content in [
            "LAD23CD,NAME\nE07000041,Exeter\n",
            "PAR23CD,PAR23NM\nE04000001,x\n",
        ] {
            let f = temp_file(content.as_bytes());
            assert_eq!(
                read(f.path()).err().map(|e| e.kind()),
                Some(io::ErrorKind::InvalidData),
                "{content}"
            );
        }
    }
}
