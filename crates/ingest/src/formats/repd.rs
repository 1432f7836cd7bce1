//! The Renewable Energy Planning Database (Department for Energy Security and Net Zero): a header
//! CSV, one project per row, with British National Grid coordinates.
//!
//! Columns by name: `Ref ID` (required), `Site Name`, `Technology Type`, the installed capacity
//! (the first column whose name starts with `Installed Capacity`, MW), the development status
//! (`Development Status (short)`, else `Development Status`), `Operator (or Applicant)`,
//! `Planning Authority`, the record's last update (`Record Last Updated (dd/mm/yyyy)`), and
//! `X-coordinate` / `Y-coordinate` (required).
//!
//! Rejections: a wrong column count, a blank reference, coordinates that are missing, not numbers
//! or outside the grid, a capacity that is present but not a number.

use super::csvio::{Header, Opened, field};
use super::spatial::SpatialRow;
use super::substations::position;
use super::{Parsed, value};
use std::io;
use std::path::Path;
use terrace_geo::Shape;

/// The dataset name stored with each project.
pub const DATASET: &str = "repd";

fn starting(h: &Header, prefix: &str) -> Option<usize> {
    h.names.iter().position(|n| n.starts_with(prefix))
}

/// Opens a REPD CSV.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<SpatialRow>> + Send + use<>> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names);
    let id = h.require(&source.file, &["ref-id", "ref", "reference"])?;
    let x = h.require(&source.file, &["x-coordinate", "x", "easting"])?;
    let y = h.require(&source.file, &["y-coordinate", "y", "northing"])?;
    let name = h.find(&["site-name", "name"]);
    let tech = h.find(&["technology-type", "technology"]);
    let capacity = starting(&h, "installed-capacity");
    let status = h
        .find(&["development-status-(short)", "development-status-short"])
        .or_else(|| h.find(&["development-status", "status"]));
    let operator = h.find(&["operator-(or-applicant)", "operator"]);
    let updated = starting(&h, "record-last-updated");
    let names = h.names.clone();
    let used = [
        Some(id),
        Some(x),
        Some(y),
        name,
        tech,
        capacity,
        status,
        operator,
        updated,
    ];
    let rows = source.rows(h.len(), move |f| {
        let get = |i: Option<usize>| value::present(field(f, i));
        let reference = get(Some(id)).ok_or("blank Ref ID")?.to_string();
        let (e, n) = position(get(Some(x)), get(Some(y)), None, None)?;
        let value = match get(capacity) {
            Some(v) => Some(
                value::float(&v.replace(',', ""))
                    .ok_or_else(|| format!("installed capacity {v:?} is not a number"))?,
            ),
            None => None,
        };
        let attributes = names
            .iter()
            .enumerate()
            .filter(|(i, _)| !used.contains(&Some(*i)))
            .filter_map(|(i, k)| get(Some(i)).map(|v| (k.clone(), v.to_string())))
            .collect();
        Ok(SpatialRow {
            dataset: DATASET.to_string(),
            reference,
            name: get(name).map(str::to_string),
            category: get(tech).map(str::to_string),
            status: get(status).map(str::to_string),
            value,
            organisation: get(operator).map(str::to_string),
            entry_date: get(updated).and_then(value::date),
            shape: Shape::Point(e, n),
            attributes,
        })
    });
    Ok(Some(rows).into_iter().flatten())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    #[test]
    fn published_columns() {
        let f = temp_file(
            b"Old Ref ID,Ref ID,Record Last Updated (dd/mm/yyyy),Operator (or Applicant),Site Name,Technology Type,Installed Capacity (MWelec),Development Status,Development Status (short),X-coordinate,Y-coordinate\n\
N00053B,1,01/02/2024,Op Ltd,Exe Solar,Solar Photovoltaics,\"1,200.5\",Operational,Operational,292000,92500\n\
N00054B,2,01/02/2024,Op Ltd,No Capacity,Wind Onshore,,Application Submitted,Application Submitted,292000,92500\n\
N00055B,3,01/02/2024,Op Ltd,No Position,Wind Onshore,5,Operational,Operational,,\n\
N00056B,,01/02/2024,Op Ltd,No Ref,Wind Onshore,5,Operational,Operational,292000,92500\n",
        );
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok.len(), 2);
        let r = &ok[0].1;
        assert_eq!(
            (
                r.reference.as_str(),
                r.category.as_deref(),
                r.value,
                r.status.as_deref()
            ),
            (
                "1",
                Some("Solar Photovoltaics"),
                Some(1200.5),
                Some("Operational")
            )
        );
        assert_eq!(r.entry_date, chrono::NaiveDate::from_ymd_opt(2024, 2, 1));
        assert_eq!(r.shape, Shape::Point(292_000.0, 92_500.0));
        assert_eq!(ok[1].1.value, None);
        assert_eq!(bad.iter().map(|r| r.line).collect::<Vec<_>>(), vec![4, 5]);
    }
}
