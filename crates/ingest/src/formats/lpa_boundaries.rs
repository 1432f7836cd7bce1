//! planning.data.gov.uk's `local-planning-authority` dataset, in its flattened CSV form: one row per
//! authority, `reference` its GSS code (`E60`, `W43`), `name`, `geometry` a WKT polygon or
//! multipolygon in WGS84, and the platform's other columns (`entity`, `entry-date`, `end-date`,
//! `organisation-entity`, `point`, `prefix`, `typology`, ...), found by name and ignored.
//! Rows become boundaries of kind `lpa` (the area id `lpa:E60000001`), which find the local
//! planning authority of a point.
//!
//! A header without `reference` or `geometry` is an `InvalidData` error.
//! Rejections: a wrong column count, a blank or malformed code, a blank or unreadable geometry,
//! a point where a polygon is needed, and an entry with an `end-date` (the authority no longer
//! exists in that shape; the current entry is another row).

use super::boundaries::BoundaryRow;
use super::csvio::{Header, Opened, field};
use super::{Parsed, value};
use std::io;
use std::path::Path;
use terrace_core::{AreaId, AreaKind};
use terrace_geo::Shape;

pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<BoundaryRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names);
    let code = h.require(&source.file, &["reference"])?;
    let geometry = h.require(&source.file, &["geometry"])?;
    let name = h.find(&["name"]);
    let end = h.find(&["end-date"]);
    let rows = source.rows(h.len(), move |f| {
        let raw = field(f, Some(code)).ok_or("blank reference")?;
        let id = AreaId::new(AreaKind::Lpa, raw).map_err(|e| {
            format!("reference {raw:?} is not a local planning authority code: {e}")
        })?;
        if let Some(e) = value::present(field(f, end)) {
            return Err(format!("the entry ended on {e}"));
        }
        let wkt = field(f, Some(geometry)).ok_or("blank geometry")?;
        let geometry = match terrace_geo::wkt_to_bng(wkt, true) {
            Ok(Shape::Area(mp)) if terrace_geo::bbox(&mp).is_some() => mp,
            Ok(Shape::Area(_)) => return Err("the geometry is empty".into()),
            Ok(Shape::Point(..)) => return Err("the geometry is a point, not a polygon".into()),
            Err(e) => return Err(format!("geometry: {e}")),
        };
        Ok(BoundaryRow {
            kind: "lpa".into(),
            code: id.code().to_string(),
            name: value::text(field(f, name)),
            geometry,
        })
    });
    Ok(Some(rows).into_iter().flatten())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    #[test]
    fn rows_and_rejections() {
        let f = temp_file(
            b"dataset,end-date,entity,entry-date,geometry,name,organisation-entity,point,prefix,reference,start-date,typology\n\
local-planning-authority,,1,2024-01-01,\"MULTIPOLYGON (((-3.54 50.72,-3.52 50.72,-3.52 50.73,-3.54 50.72)))\",Exeter LPA,16,,local-planning-authority,E60000123,,geography\n\
local-planning-authority,,2,,\"POLYGON ((-3.54 50.72,-3.52 50.72,-3.52 50.73,-3.54 50.72))\",Bad code,16,,local-planning-authority,E06000001,,geography\n\
local-planning-authority,2020-01-01,3,,\"POLYGON ((-3.54 50.72,-3.52 50.72,-3.52 50.73,-3.54 50.72))\",Ended,16,,local-planning-authority,E60000124,,geography\n\
local-planning-authority,,4,,POINT(-3.53 50.725),Point,16,,local-planning-authority,E60000125,,geography\n\
local-planning-authority,,5,,,No geometry,16,,local-planning-authority,E60000126,,geography\n\
local-planning-authority,,6,,\"POLYGON ((x))\",Unreadable,16,,local-planning-authority,w43000001,,geography\n",
        );
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok.len(), 1, "{bad:?}");
        assert_eq!(ok[0].1.code, "E60000123");
        assert_eq!(ok[0].1.kind, "lpa");
        assert_eq!(ok[0].1.name.as_deref(), Some("Exeter LPA"));
        let [x0, _, x1, _] = terrace_geo::bbox(&ok[0].1.geometry).unwrap();
        assert!((290_000.0..300_000.0).contains(&x0) && x1 > x0, "{x0} {x1}");
        let lines: Vec<u64> = bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![3, 4, 5, 6, 7]);
        assert!(bad[1].reason.contains("ended"));
        assert!(bad[2].reason.contains("point"));
        let f = temp_file(b"name,reference\nx,E60000001\n");
        assert!(read(f.path()).is_err(), "no geometry column");
    }
}
