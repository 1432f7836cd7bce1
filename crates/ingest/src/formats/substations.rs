//! Electricity substations with their headroom, as the distribution network operators publish
//! them (network capacity / heat-map extracts): a header CSV, one substation per row.
//!
//! Columns by name (the first present wins):
//! - identifier: `substation_id`, `site_id`, `substation_number`, `asset_id`, `id`, `reference`;
//!   when absent, a stable hash of the name and position;
//! - name: `substation_name`, `substation`, `site_name`, `name`;
//! - position: `easting`/`northing` (also `x`/`y`, `x_coordinate`/`y_coordinate`, BNG metres),
//!   else `latitude`/`longitude` (`lat`/`lon`/`long`), WGS84; one pair is required;
//! - headroom in MVA (or MW): `demand_headroom_mva`, `demand_headroom`, `headroom_mva`,
//!   `headroom_mw`, `headroom`, `available_headroom_mva`, `generation_headroom_mw`; a blank stays
//!   unknown (never zero);
//! - `voltage`, `voltage_kv` (category); operator: `dno`, `network_operator`, `licence_area`.
//!
//! Rejections: a wrong column count, no name and no identifier, no usable position, a position
//! outside the British National Grid, a headroom that is present but not a number.

use super::csvio::{Header, Opened, field};
use super::spatial::SpatialRow;
use super::{Parsed, value};
use std::io;
use std::path::Path;
use terrace_geo::Shape;

/// The dataset name stored with each substation.
pub const DATASET: &str = "substations";

const ID: &[&str] = &[
    "substation-id",
    "site-id",
    "substation-number",
    "asset-id",
    "id",
    "reference",
];
const NAME: &[&str] = &["substation-name", "substation", "site-name", "name"];
const EAST: &[&str] = &["easting", "x", "x-coordinate", "grid-ref-easting"];
const NORTH: &[&str] = &["northing", "y", "y-coordinate", "grid-ref-northing"];
const LAT: &[&str] = &["latitude", "lat"];
const LON: &[&str] = &["longitude", "lon", "long", "lng"];
const HEADROOM: &[&str] = &[
    "demand-headroom-mva",
    "demand-headroom",
    "headroom-mva",
    "headroom-mw",
    "headroom",
    "available-headroom-mva",
    "generation-headroom-mw",
];
const VOLTAGE: &[&str] = &["voltage", "voltage-kv", "primary-voltage"];
const OPERATOR: &[&str] = &["dno", "network-operator", "licence-area"];

/// A BNG position from an easting/northing pair, else a latitude/longitude pair.
pub(crate) fn position(
    e: Option<&str>,
    n: Option<&str>,
    lat: Option<&str>,
    lon: Option<&str>,
) -> Result<(f64, f64), String> {
    if let (Some(e), Some(n)) = (e, n) {
        let (x, y) = (
            value::float(e).ok_or_else(|| format!("easting {e:?} is not a number"))?,
            value::float(n).ok_or_else(|| format!("northing {n:?} is not a number"))?,
        );
        if !(0.0..=700_000.0).contains(&x) || !(0.0..=1_300_000.0).contains(&y) {
            return Err(format!("({x}, {y}) is outside the British National Grid"));
        }
        return Ok((x, y));
    }
    if let (Some(a), Some(o)) = (lat, lon) {
        let (a, o) = (
            value::float(a).ok_or_else(|| format!("latitude {a:?} is not a number"))?,
            value::float(o).ok_or_else(|| format!("longitude {o:?} is not a number"))?,
        );
        return terrace_geo::bng_from_wgs84(o, a)
            .ok_or_else(|| format!("({a}, {o}) is outside the British National Grid"));
    }
    Err("no position (easting/northing or latitude/longitude)".into())
}

/// Opens a substation CSV (see the module documentation for the columns).
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<SpatialRow>> + Send + use<>> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names);
    let (id, name) = (h.find(ID), h.find(NAME));
    if id.is_none() && name.is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: header has no substation name or identifier column",
                source.file
            ),
        ));
    }
    let (e, n, lat, lon) = (h.find(EAST), h.find(NORTH), h.find(LAT), h.find(LON));
    if (e.is_none() || n.is_none()) && (lat.is_none() || lon.is_none()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: header has no easting/northing or latitude/longitude columns",
                source.file
            ),
        ));
    }
    let (headroom, voltage, operator) = (h.find(HEADROOM), h.find(VOLTAGE), h.find(OPERATOR));
    let names = h.names.clone();
    let used: Vec<Option<usize>> = vec![id, name, e, n, lat, lon, headroom, voltage, operator];
    let rows = source.rows(h.len(), move |f| {
        let get = |i: Option<usize>| value::present(field(f, i));
        let nm = get(name).map(str::to_string);
        let (x, y) = position(get(e), get(n), get(lat), get(lon))?;
        let reference = match get(id) {
            Some(i) => i.to_string(),
            None => {
                let nm = nm.as_deref().ok_or("no substation name or identifier")?;
                format!(
                    "h{}",
                    value::stable_hash(&[nm, &format!("{x:.0}"), &format!("{y:.0}")])
                )
            }
        };
        let value = match get(headroom) {
            Some(v) => {
                Some(value::float(v).ok_or_else(|| format!("headroom {v:?} is not a number"))?)
            }
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
            name: nm,
            category: get(voltage).map(str::to_string),
            status: None,
            value,
            organisation: get(operator).map(str::to_string),
            entry_date: None,
            shape: Shape::Point(x, y),
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
    fn positions_headroom_and_rejections() {
        let f = temp_file(
            b"Substation Name,Substation ID,Latitude,Longitude,Demand Headroom MVA,Voltage kV\n\
Exe Primary,S1,50.72,-3.53,12.5,33\n\
Blank Headroom,S2,50.72,-3.53,,11\n\
Bad Headroom,S3,50.72,-3.53,lots,11\n\
Nowhere,S4,,,1,11\n\
Madrid,S5,40.4,-3.7,1,11\n",
        );
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[0].1.value, Some(12.5));
        assert_eq!(
            ok[1].1.value, None,
            "a blank headroom is unknown, never zero"
        );
        assert_eq!(ok[0].1.category.as_deref(), Some("33"));
        let Shape::Point(x, y) = ok[0].1.shape else {
            panic!("point")
        };
        assert!((290_000.0..295_000.0).contains(&x) && (90_000.0..95_000.0).contains(&y));
        assert_eq!(
            bad.iter().map(|r| r.line).collect::<Vec<_>>(),
            vec![4, 5, 6]
        );
    }
}
