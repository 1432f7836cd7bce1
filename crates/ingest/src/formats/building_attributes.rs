//! The building-attributes operator feed (OF-L: a licensed building-attributes product, such as
//! a building-level survey dataset, exported by the operator): a CSV with a header, columns found
//! by name (case and `_`/`-` ignored), one row per addressed property:
//! - `uprn` (required): the property;
//! - `floors`: storeys above ground, a whole number from 0 to 200;
//! - `basement`, `green_roof`, `solar_panels`: `Y`/`N` (also `yes`/`no`, `true`/`false`, `1`/`0`);
//! - `construction_material`, `roof_shape`, `roof_material`: text as the product writes it.
//!
//! A blank (or a "no value" placeholder) is "not recorded". The header needs `uprn` and at least
//! one attribute column, else the file is an `InvalidData` error.
//!
//! Rejections: a wrong column count, a UPRN that is not a positive integer of at most 12 digits,
//! floors that are not a whole number from 0 to 200, a flag that is not yes or no, a row that
//! records no attribute.

use super::csvio::{Header, Opened, field};
use super::{Parsed, value};
use std::io;
use std::path::Path;

/// One property's attributes, each None when not recorded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BuildingAttributes {
    pub uprn: i64,
    pub floors: Option<i32>,
    pub basement: Option<bool>,
    pub green_roof: Option<bool>,
    pub construction_material: Option<String>,
    pub roof_shape: Option<String>,
    pub roof_material: Option<String>,
    pub solar_panels: Option<bool>,
}

const ATTRIBUTES: [&str; 7] = [
    "floors",
    "basement",
    "green-roof",
    "construction-material",
    "roof-shape",
    "roof-material",
    "solar-panels",
];

/// Whether a normalised header is a building-attributes feed.
pub fn is_header(names: &[String]) -> bool {
    names.iter().any(|n| n == "uprn") && names.iter().any(|n| ATTRIBUTES.contains(&n.as_str()))
}

fn flag(name: &str, v: Option<&str>) -> Result<Option<bool>, String> {
    let Some(v) = value::present(v) else {
        return Ok(None);
    };
    match v.to_ascii_lowercase().as_str() {
        "y" | "yes" | "true" | "1" => Ok(Some(true)),
        "n" | "no" | "false" | "0" => Ok(Some(false)),
        _ => Err(format!("{name} {v:?} is neither yes nor no")),
    }
}

pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<BuildingAttributes>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(None.into_iter().flatten());
    };
    if !is_header(&names) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: a building-attributes feed needs a uprn column and at least one of floors, basement, green_roof, construction_material, roof_shape, roof_material, solar_panels",
                source.file
            ),
        ));
    }
    let h = Header::new(names);
    let uprn = h.require(&source.file, &["uprn"])?;
    let [floors, basement, green, material, shape, roof, solar] = ATTRIBUTES.map(|a| h.find(&[a]));
    let rows = source.rows(h.len(), move |f| {
        let u = field(f, Some(uprn)).unwrap_or_default();
        let floors = match value::present(field(f, floors)) {
            None => None,
            Some(v) => Some(
                value::int(v)
                    .filter(|n| (0..=200).contains(n))
                    .ok_or_else(|| format!("floors {v:?} is not a whole number from 0 to 200"))?
                    as i32,
            ),
        };
        let row = BuildingAttributes {
            uprn: value::uprn(u).ok_or_else(|| format!("UPRN {u:?} is not a positive integer"))?,
            floors,
            basement: flag("basement", field(f, basement))?,
            green_roof: flag("green_roof", field(f, green))?,
            construction_material: value::text(field(f, material)),
            roof_shape: value::text(field(f, shape)),
            roof_material: value::text(field(f, roof)),
            solar_panels: flag("solar_panels", field(f, solar))?,
        };
        if row
            == (BuildingAttributes {
                uprn: row.uprn,
                ..Default::default()
            })
        {
            return Err(format!("UPRN {} records no attribute", row.uprn));
        }
        Ok(row)
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
            b"UPRN,Floors,Basement,Green_Roof,Construction_Material,Roof_Shape,Roof_Material,Solar_Panels\n\
              990000000001,3,Y,n,Brick,gabled,slate,yes\n\
              990000000002,,,,,,,\n\
              990000000003,2.5,,,,,,\n\
              990000000004,2,maybe,,,,,\n\
              abc,2,,,,,,\n\
              990000000005,,,,,flat,,\n\
              990000000006,1,N\n",
        );
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(
            ok,
            vec![
                (
                    2,
                    BuildingAttributes {
                        uprn: 990000000001,
                        floors: Some(3),
                        basement: Some(true),
                        green_roof: Some(false),
                        construction_material: Some("Brick".into()),
                        roof_shape: Some("gabled".into()),
                        roof_material: Some("slate".into()),
                        solar_panels: Some(true),
                    }
                ),
                (
                    7,
                    BuildingAttributes {
                        uprn: 990000000005,
                        roof_shape: Some("flat".into()),
                        ..Default::default()
                    }
                ),
            ]
        );
        let lines: Vec<u64> = bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![3, 4, 5, 6, 8]);
        assert!(
            bad[0].reason.contains("records no attribute"),
            "{:?}",
            bad[0]
        );
        assert!(bad[1].reason.contains("floors"));
        assert!(bad[2].reason.contains("basement"));
        assert!(bad[3].reason.contains("UPRN"));
        let no_attributes = temp_file(b"uprn,colour\n1,red\n");
        assert!(read(no_attributes.path()).is_err());
    }
}
