//! OS Open UPRN: `UPRN,X_COORDINATE,Y_COORDINATE,LATITUDE,LONGITUDE`.
//!
//! Also reads files with only `UPRN,latitude,longitude` (or only the BNG columns): the missing
//! pair is computed with the OSTN15 transformation.
//! Rejections: wrong column count, a UPRN that is not a positive integer, a coordinate that is
//! not a number, no usable coordinate pair, or a point outside the transformation's extent.

use super::csvio::{Header, Opened, field};
use super::{Parsed, value};
use std::io;
use std::path::Path;

/// One UPRN with its position in BNG metres and WGS84 degrees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UprnRow {
    pub uprn: i64,
    /// Easting, BNG metres.
    pub x: f64,
    /// Northing, BNG metres.
    pub y: f64,
    pub lat: f64,
    pub lon: f64,
}

#[derive(Debug, Clone, Copy)]
struct Columns {
    uprn: usize,
    x: Option<usize>,
    y: Option<usize>,
    lat: Option<usize>,
    lon: Option<usize>,
}

/// Opens an Open UPRN CSV; the header must have UPRN and either X/Y or latitude/longitude.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<UprnRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let names = source.header()?.unwrap_or_default();
    let header = Header::new(names);
    let width = header.len();
    let cols = if width == 0 {
        None // an empty file: no rows
    } else {
        let c = Columns {
            uprn: header.require(&source.file, &["uprn"])?,
            x: header.find(&["x-coordinate", "x", "easting"]),
            y: header.find(&["y-coordinate", "y", "northing"]),
            lat: header.find(&["latitude", "lat"]),
            lon: header.find(&["longitude", "long", "lon"]),
        };
        let has_bng = c.x.is_some() && c.y.is_some();
        let has_wgs = c.lat.is_some() && c.lon.is_some();
        if !has_bng && !has_wgs {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: header has neither X_COORDINATE/Y_COORDINATE nor LATITUDE/LONGITUDE",
                    source.file
                ),
            ));
        }
        Some(c)
    };
    Ok(source.rows(width, move |fields| match cols {
        Some(c) => parse_row(fields, c),
        None => Err("no header".into()),
    }))
}

/// A coordinate: `None` when blank, an error when present but not a number.
pub(crate) fn coordinate(
    fields: &[String],
    idx: Option<usize>,
    what: &str,
) -> Result<Option<f64>, String> {
    match value::present(field(fields, idx)) {
        None => Ok(None),
        Some(v) => value::float(v)
            .map(Some)
            .ok_or_else(|| format!("bad {what} {v:?}")),
    }
}

/// Completes a position from whichever pair is present: `(x, y, lat, lon)`.
pub(crate) fn complete(
    bng: Option<(f64, f64)>,
    wgs: Option<(f64, f64)>,
) -> Result<Option<(f64, f64, f64, f64)>, String> {
    match (bng, wgs) {
        (Some((x, y)), Some((lat, lon))) => Ok(Some((x, y, lat, lon))),
        (Some((x, y)), None) => terrace_geo::wgs84_from_bng(x, y)
            .map(|(lon, lat)| Some((x, y, lat, lon)))
            .ok_or_else(|| {
                format!("easting/northing ({x}, {y}) outside the British National Grid")
            }),
        (None, Some((lat, lon))) => terrace_geo::bng_from_wgs84(lon, lat)
            .map(|(x, y)| Some((x, y, lat, lon)))
            .ok_or_else(|| {
                format!("latitude/longitude ({lat}, {lon}) outside the British National Grid")
            }),
        (None, None) => Ok(None),
    }
}

fn parse_row(fields: &[String], c: Columns) -> Result<UprnRow, String> {
    let raw = field(fields, Some(c.uprn)).ok_or("missing UPRN")?;
    let uprn = value::uprn(raw).ok_or_else(|| format!("bad UPRN {raw:?}"))?;
    let pair = |a: Option<f64>, b: Option<f64>| a.zip(b);
    let bng = pair(
        coordinate(fields, c.x, "X_COORDINATE")?,
        coordinate(fields, c.y, "Y_COORDINATE")?,
    );
    let wgs = pair(
        coordinate(fields, c.lat, "latitude")?,
        coordinate(fields, c.lon, "longitude")?,
    );
    let (x, y, lat, lon) = complete(bng, wgs)?.ok_or("no coordinates")?;
    Ok(UprnRow {
        uprn,
        x,
        y,
        lat,
        lon,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{sample, split, temp_file};

    fn parse(content: &str) -> (Vec<(u64, UprnRow)>, Vec<super::super::Rejection>) {
        let f = temp_file(content.as_bytes());
        split(read(f.path()).expect("opens"))
    }

    #[test]
    fn full_layout() {
        let (ok, bad) = parse(
            "UPRN,X_COORDINATE,Y_COORDINATE,LATITUDE,LONGITUDE\n\
             100040232705,292500.00,92800.00,50.7315313,-3.5157008\n\
             abc,1,2,3,4\n\
             5,,,,\n\
             6,x,1,50.7,-3.5\n",
        );
        assert_eq!(ok.len(), 1);
        assert_eq!(
            ok[0].1,
            UprnRow {
                uprn: 100_040_232_705,
                x: 292_500.0,
                y: 92_800.0,
                lat: 50.731_531_3,
                lon: -3.515_700_8
            }
        );
        let reasons: Vec<_> = bad.iter().map(|b| (b.line, b.reason.as_str())).collect();
        assert_eq!(
            reasons,
            vec![
                (3, "bad UPRN \"abc\""),
                (4, "no coordinates"),
                (5, "bad X_COORDINATE \"x\"")
            ]
        );
    }

    #[test]
    fn latlon_only_and_bng_only() {
        let (ok, bad) =
            parse("UPRN,latitude,longitude\n10023122757,50.7273383,-3.5209814\n7,48.85,2.35\n");
        assert_eq!(ok.len(), 1);
        let r = ok[0].1;
        // Exeter city centre: about 292,100 E, 92,600 N
        assert!(
            (r.x - 292_100.0).abs() < 1_000.0 && (r.y - 92_600.0).abs() < 1_000.0,
            "{r:?}"
        );
        assert_eq!((bad[0].line, bad[0].reason.contains("outside")), (3, true));

        let (ok, _) = parse("UPRN,X_COORDINATE,Y_COORDINATE\n9,292000,92500\n");
        assert!(
            (ok[0].1.lat - 50.72).abs() < 0.02 && (ok[0].1.lon + 3.53).abs() < 0.02,
            "{:?}",
            ok[0].1
        );
    }

    #[test]
    fn header_checks() {
        let f = temp_file(b"UPRN,foo\n1,2\n");
        assert_eq!(
            read(f.path()).err().map(|e| e.kind()),
            Some(io::ErrorKind::InvalidData)
        );
        let f = temp_file(b"ID,latitude,longitude\n1,2,3\n");
        assert_eq!(
            read(f.path()).err().map(|e| e.kind()),
            Some(io::ErrorKind::InvalidData)
        );
    }

    #[test]
    fn real_exeter_sample() {
        let Some(p) = sample("exeter/uprn_latlon_exeter_42861rows.csv") else {
            return;
        };
        let (ok, bad) = split(read(&p).expect("opens"));
        println!(
            "open_uprn {}: read {} ok {} rejected {}",
            p.display(),
            ok.len() + bad.len(),
            ok.len(),
            bad.len()
        );
        assert_eq!((ok.len(), bad.len()), (42_861, 0));
        let (line, first) = ok[0];
        assert_eq!(
            (line, first.uprn, first.lat, first.lon),
            (2, 10_023_122_757, 50.727_338_3, -3.520_981_4)
        );
        let (line, last) = ok[42_860];
        assert_eq!((line, last.uprn), (42_862, 100_040_241_746));
        // every point lies in and around Exeter
        assert!(
            ok.iter().all(|(_, r)| (280_000.0..305_000.0).contains(&r.x)
                && (80_000.0..105_000.0).contains(&r.y))
        );
    }
}
