//! Statistical geography for the fixture: LSOA and ward rectangles tiling each authority, fitted
//! to where the postcodes are, and the postcode products (Code-Point Open, ONSPD) that use them.
//! Each ward column is also an MSOA (`E02099xxx`, named like ONS MSOAs: "Tamberley 001", holding
//! the LSOAs "Tamberley 001A", "Tamberley 001B"); one region (Wessex, `E12009901`) and the
//! country (England, `E92000001`) cover the authorities.

use crate::world::{LadPlan, Plan};
use crate::world::{PostcodeInfo, RectE8, e8, fmt_e8, lonlat, snap_edge};

#[derive(Debug, Clone)]
pub struct Cell {
    pub lat_min: i64,
    pub lat_max: i64,
    pub code: String,
    pub name: String,
}

#[derive(Debug, Clone)]
pub struct Column {
    pub lon_min: i64,
    pub lon_max: i64,
    pub ward_code: String,
    pub ward_name: String,
    pub msoa_code: String,
    pub msoa_name: String,
    pub cells: Vec<Cell>,
}

#[derive(Debug, Clone)]
pub struct LadTiles {
    pub code: &'static str,
    pub name: &'static str,
    pub rect: RectE8,
    pub columns: Vec<Column>,
}

/// Authorities split into columns (wards) and each column into rows (LSOAs).
#[derive(Debug, Clone)]
pub struct Tiling {
    pub lads: Vec<LadTiles>,
}

/// The fixture's region (a synthetic code: real regions are E12000001 to E12000009).
pub const REGION_CODE: &str = "E12009901";
pub const REGION_NAME: &str = "Wessex";
pub const COUNTRY_CODE: &str = "E92000001";
pub const COUNTRY_NAME: &str = "England";

/// Ward names follow the authority's name ("Tamberley Abbey").
const WARD_NAMES: &[&str] = &[
    "Abbey",
    "Castle",
    "Priory",
    "Riverside",
    "Hillside",
    "Moorland",
    "Westgate",
    "Eastgate",
    "Orchard",
    "Heath",
    "Downs",
    "Marsh",
];

/// A synthetic GSS code: E01099001.., continuing into E01100000.. for very large worlds
/// (real LSOA and ward codes stop far below both).
fn gss(prefix: &str, n: usize) -> String {
    format!("{prefix}{:06}", 99_000 + n)
}

/// Target households per LSOA (real LSOAs have 400-1,200).
const PER_LSOA: f64 = 650.0;

/// Weighted cut points along one axis, snapped to the edge grid and kept strictly inside.
fn cuts(mut pts: Vec<(f64, usize)>, parts: usize, lo: i64, hi: i64) -> Vec<i64> {
    pts.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
    let total: usize = pts.iter().map(|p| p.1).sum();
    let mut out = Vec::new();
    if parts <= 1 || pts.len() < 2 {
        return out;
    }
    let mut cum = 0usize;
    let mut j = 1usize;
    for i in 0..pts.len() - 1 {
        cum += pts[i].1;
        while j < parts && cum * parts >= total * j {
            // Cut in the first gap wide enough that a point rounded to six decimals (the ONSPD)
            // stays on its side.
            let Some(k) = (i..pts.len() - 1).find(|&k| pts[k + 1].0 - pts[k].0 > 4e-6) else {
                return out;
            };
            let mid = (pts[k].0 + pts[k + 1].0) / 2.0;
            let edge = snap_edge(mid);
            let prev = out.last().copied().unwrap_or(lo);
            if edge > prev + 10 && edge < hi - 10 {
                out.push(edge);
            }
            j += 1;
        }
    }
    out
}

impl Tiling {
    /// `postcodes` are the live postcodes with their centroid lon/lat.
    pub fn build(plan: &Plan, postcodes: &[(PostcodeInfo, f64, f64)]) -> Tiling {
        let mut lsoa_no = 0usize;
        let mut ward_no = 0usize;
        let mut lads = Vec::new();
        for (li, lad) in plan.lads.iter().enumerate() {
            let LadPlan {
                code, name, rect, ..
            } = lad.clone();
            let pts: Vec<(f64, f64, usize)> = postcodes
                .iter()
                .filter(|(p, _, _)| p.lad == li)
                .map(|(p, lon, lat)| (*lon, *lat, p.count))
                .collect();
            let households: usize = pts.iter().map(|p| p.2).sum();
            let k = ((households as f64 / PER_LSOA).round() as usize).max(1);
            // Degrees of longitude are about 0.63 of a degree of latitude here.
            let aspect = (e8(rect.lon_max) - e8(rect.lon_min)) * 0.63
                / (e8(rect.lat_max) - e8(rect.lat_min));
            let cols = ((k as f64 * aspect).sqrt().round() as usize).clamp(1, k);
            let col_cuts = cuts(
                pts.iter().map(|p| (p.0, p.2)).collect(),
                cols,
                rect.lon_min,
                rect.lon_max,
            );
            let mut bounds = vec![rect.lon_min];
            bounds.extend(&col_cuts);
            bounds.push(rect.lon_max);
            let ncols = bounds.len() - 1;
            let rows_per_col = crate::world::split_total(k, &vec![1.0; ncols]);
            let mut columns = Vec::new();
            for c in 0..ncols {
                let (lo, hi) = (bounds[c], bounds[c + 1]);
                let in_col: Vec<(f64, usize)> = pts
                    .iter()
                    .filter(|p| p.0 > e8(lo) && p.0 < e8(hi))
                    .map(|p| (p.1, p.2))
                    .collect();
                let row_cuts = cuts(in_col, rows_per_col[c].max(1), rect.lat_min, rect.lat_max);
                let mut rb = vec![rect.lat_min];
                rb.extend(&row_cuts);
                rb.push(rect.lat_max);
                ward_no += 1;
                let mut cells = Vec::new();
                for r in 0..rb.len() - 1 {
                    lsoa_no += 1;
                    let letter = (b'A' + (r % 26) as u8) as char;
                    cells.push(Cell {
                        lat_min: rb[r],
                        lat_max: rb[r + 1],
                        code: gss("E01", lsoa_no),
                        name: format!("{name} {:03}{letter}", c + 1),
                    });
                }
                columns.push(Column {
                    lon_min: lo,
                    lon_max: hi,
                    ward_code: gss("E05", ward_no),
                    ward_name: format!("{name} {}", WARD_NAMES[(ward_no - 1) % WARD_NAMES.len()]),
                    msoa_code: gss("E02", ward_no),
                    msoa_name: format!("{name} {:03}", c + 1),
                    cells,
                });
            }
            lads.push(LadTiles {
                code,
                name,
                rect,
                columns,
            });
        }
        Tiling { lads }
    }

    /// (authority, column, cell) containing a point, if any.
    pub fn locate(&self, lon: f64, lat: f64) -> Option<(usize, usize, usize)> {
        for (li, lad) in self.lads.iter().enumerate() {
            if !lad.rect.contains(lon, lat) {
                continue;
            }
            for (ci, col) in lad.columns.iter().enumerate() {
                if lon > e8(col.lon_min) && lon < e8(col.lon_max) {
                    for (ri, cell) in col.cells.iter().enumerate() {
                        if lat > e8(cell.lat_min) && lat < e8(cell.lat_max) {
                            return Some((li, ci, ri));
                        }
                    }
                }
            }
        }
        None
    }

    pub fn lsoa_count(&self) -> usize {
        self.lads
            .iter()
            .flat_map(|l| &l.columns)
            .map(|c| c.cells.len())
            .sum()
    }

    pub fn ward_count(&self) -> usize {
        self.lads.iter().map(|l| l.columns.len()).sum()
    }

    pub fn lad_geojson(&self) -> String {
        let feats: Vec<String> = self
            .lads
            .iter()
            .map(|l| {
                feature(
                    &format!(r#""LAD23CD":"{}","LAD23NM":"{}""#, l.code, l.name),
                    l.rect.lon_min,
                    l.rect.lon_max,
                    l.rect.lat_min,
                    l.rect.lat_max,
                )
            })
            .collect();
        collection(&feats)
    }

    /// The ward columns as ONS ward boundaries (`WD23CD`, `WD23NM`).
    pub fn ward_geojson(&self) -> String {
        self.column_geojson(|c| format!(r#""WD23CD":"{}","WD23NM":"{}""#, c.ward_code, c.ward_name))
    }

    /// The same columns as MSOA boundaries (`MSOA21CD`, `MSOA21NM`).
    pub fn msoa_geojson(&self) -> String {
        self.column_geojson(|c| {
            format!(
                r#""MSOA21CD":"{}","MSOA21NM":"{}""#,
                c.msoa_code, c.msoa_name
            )
        })
    }

    fn column_geojson(&self, props: impl Fn(&Column) -> String) -> String {
        let mut feats = Vec::new();
        for l in &self.lads {
            for c in &l.columns {
                feats.push(feature(
                    &props(c),
                    c.lon_min,
                    c.lon_max,
                    l.rect.lat_min,
                    l.rect.lat_max,
                ));
            }
        }
        collection(&feats)
    }

    /// The rectangle holding every authority.
    pub fn extent(&self) -> (i64, i64, i64, i64) {
        let f = |g: fn(&RectE8) -> i64, min: bool| {
            let it = self.lads.iter().map(|l| g(&l.rect));
            if min { it.min() } else { it.max() }.unwrap_or_default()
        };
        (
            f(|r| r.lon_min, true),
            f(|r| r.lon_max, false),
            f(|r| r.lat_min, true),
            f(|r| r.lat_max, false),
        )
    }

    /// One feature covering every authority, with `props`.
    pub fn cover_geojson(&self, props: &str) -> String {
        let (x0, x1, y0, y1) = self.extent();
        collection(&[feature(props, x0, x1, y0, y1)])
    }

    pub fn lsoa_geojson(&self) -> String {
        let mut feats = Vec::new();
        for l in &self.lads {
            for c in &l.columns {
                for cell in &c.cells {
                    feats.push(feature(
                        &format!(r#""LSOA21CD":"{}","LSOA21NM":"{}""#, cell.code, cell.name),
                        c.lon_min,
                        c.lon_max,
                        cell.lat_min,
                        cell.lat_max,
                    ));
                }
            }
        }
        collection(&feats)
    }
}

fn feature(props: &str, x0: i64, x1: i64, y0: i64, y1: i64) -> String {
    let p = |x: i64, y: i64| format!("[{},{}]", fmt_e8(x), fmt_e8(y));
    // Exterior ring counter-clockwise (RFC 7946): SW, SE, NE, NW, SW.
    format!(
        r#"{{"type":"Feature","properties":{{{props}}},"geometry":{{"type":"Polygon","coordinates":[[{},{},{},{},{}]]}}}}"#,
        p(x0, y0),
        p(x1, y0),
        p(x1, y1),
        p(x0, y1),
        p(x0, y0)
    )
}

fn collection(features: &[String]) -> String {
    format!(
        "{{\"type\":\"FeatureCollection\",\"features\":[\n{}\n]}}\n",
        features.join(",\n")
    )
}

/// A postcode's centroid in lon/lat, rounded as published.
pub fn centroid_lonlat(p: &PostcodeInfo) -> Option<(f64, f64)> {
    let (x, y) = p.centroid();
    lonlat(x.round(), y.round())
}

/// The ONSPD 7-character form: outward code padded to four characters ("XT1 1AA", "XT101AA").
pub fn pcd7(postcode: &str) -> String {
    let (out, inw) = postcode.split_once(' ').unwrap_or((postcode, ""));
    format!("{out:<4}{inw}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcd_forms() {
        assert_eq!(pcd7("XT1 1AA"), "XT1 1AA");
        assert_eq!(pcd7("XT10 1AA"), "XT101AA");
        assert_eq!(pcd7("M1 1AE"), "M1  1AE");
    }

    #[test]
    fn weighted_cuts_split_evenly() {
        let pts: Vec<(f64, usize)> = (0..100).map(|i| (-4.0 + f64::from(i) * 0.001, 1)).collect();
        let c = cuts(pts, 4, snap_edge(-4.01), snap_edge(-3.8));
        assert_eq!(c.len(), 3);
        assert!(c.windows(2).all(|w| w[0] < w[1]));
        assert!(c.iter().all(|v| v.rem_euclid(10) == 5));
    }
}
