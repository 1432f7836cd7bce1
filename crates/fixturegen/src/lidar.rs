//! The fixture world's LIDAR composite: two DSM/DTM GeoTIFF tile pairs (float32, 1 m cells,
//! EPSG:27700, GDAL_NODATA -9999, Deflate) side by side, named as the Environment Agency names its
//! composite tiles, in `lidar/`. The boundary between them runs through the sample house's
//! footprint (its cells come from both tiles); every footprint wholly inside the tiles stands at a
//! planted height over a terraced ground surface, and two of the sample's roof cells hold nodata
//! in the DSM. The tiles are 200 m square, not the published 5 km, to keep the world small.

use crate::land::Footprint;
use serde::Serialize;
use std::io;
use std::path::Path;
use terrace_geo::geotiff::{Grid, write_tile};

/// The directory of tiles, as the manifest names it.
pub const LIDAR_DIR: &str = "lidar";
/// A tile's side, metres (1 m cells).
const SIDE: u32 = 200;
const NODATA: f32 = -9999.0;

/// What the LIDAR tests pin.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LidarCases {
    pub dir: String,
    /// Tile pairs written (each a DSM and a DTM file).
    pub pairs: usize,
    /// The tiles' common edge (x, BNG metres), through the sample's footprint.
    pub boundary_x: f64,
    /// The sample house's building, across the boundary, and its planted height (metres).
    pub boundary_building: String,
    pub boundary_height_m: f64,
    /// Roof cells of the sample holding nodata.
    pub boundary_nodata_cells: usize,
    /// Every footprint wholly inside the tiles with its planted height.
    pub planted: Vec<(String, f64)>,
    /// Footprints the tiles do not cover at all, and one house standing in one.
    pub uncovered: usize,
    pub uncovered_building: String,
    pub uncovered_uprn: u64,
    /// The sample house (its point stands in the boundary building).
    pub boundary_uprn: u64,
    /// Footprints only partly inside the tiles (no height).
    pub partly_covered: Vec<String>,
    /// The composite's survey year.
    pub survey_year: i32,
}

/// The planted height of the n-th footprint inside the tiles (the sample's is 7.25 m).
fn planted(n: usize) -> f64 {
    4.5 + 0.75 * (n % 9) as f64
}

/// The ground: terraces of 0.5 m every 25 m eastward, 50 m above datum.
fn ground(x: f64) -> f32 {
    50.0 + 0.5 * (x / 25.0).floor().rem_euclid(8.0) as f32
}

fn bbox(ring: &[(f64, f64)]) -> [f64; 4] {
    ring.iter().fold(
        [
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ],
        |b, (x, y)| [b[0].min(*x), b[1].min(*y), b[2].max(*x), b[3].max(*y)],
    )
}

/// The grid reference of a point at 100 m (`SX547761`): the 100 km square's letters, then three
/// digits each of easting and northing.
fn grid_ref(x: f64, y: f64) -> String {
    let (e, n) = (
        (x / 100_000.0).floor() as i64,
        (y / 100_000.0).floor() as i64,
    );
    // The 500 km square (S for the south-west of Great Britain), then the 100 km one.
    let major = ["S", "T", "N", "O", "H", "J"];
    let m = major[(((n / 5) * 2 + e / 5) as usize).min(5)];
    let letters = b"ABCDEFGHJKLMNOPQRSTUVWXYZ";
    let (ce, cn) = (e % 5, n % 5);
    let minor = letters[((4 - cn) * 5 + ce) as usize] as char;
    format!(
        "{m}{minor}{:03}{:03}",
        ((x % 100_000.0) / 100.0).floor() as i64,
        ((y % 100_000.0) / 100.0).floor() as i64
    )
}

/// Writes the tiles around `sample` (the index of the sample's footprint in `footprints`); returns
/// the directory's stat (its files' bytes, one row per pair) and the cases.
pub fn write(
    out_dir: &Path,
    footprints: &[Footprint],
    sample: usize,
) -> io::Result<(crate::out::FileStat, LidarCases)> {
    let dir = out_dir.join(LIDAR_DIR);
    std::fs::create_dir_all(&dir)?;
    let mut cases = LidarCases {
        dir: LIDAR_DIR.into(),
        survey_year: 2022,
        ..LidarCases::default()
    };
    let Some((sid, _, sring)) = footprints.get(sample) else {
        return Ok((
            crate::out::FileStat {
                rel: LIDAR_DIR.into(),
                rows: 0,
                bytes: 0,
            },
            cases,
        ));
    };
    let sb = bbox(sring);
    let bx = ((sb[0] + sb[2]) / 2.0).round();
    let by = ((sb[1] + sb[3]) / 2.0).round();
    let half = f64::from(SIDE) / 2.0;
    let (west, east, south, north) = (
        bx - f64::from(SIDE),
        bx + f64::from(SIDE),
        by - half,
        by + half,
    );
    cases.boundary_x = bx;
    cases.boundary_building = sid.clone();
    // Heights: the sample's first, then the others inside in file order.
    let mut roofs: Vec<([f64; 4], f64)> = Vec::new();
    let mut n = 1;
    for (i, (id, _, ring)) in footprints.iter().enumerate() {
        let b = bbox(ring);
        let inside = b[0] >= west && b[2] <= east && b[1] >= south && b[3] <= north;
        let touches = b[0] < east && b[2] > west && b[1] < north && b[3] > south;
        if i == sample {
            cases.boundary_height_m = 7.25;
            roofs.push((b, 7.25));
            cases.planted.push((id.clone(), 7.25));
        } else if inside {
            let h = planted(n);
            n += 1;
            roofs.push((b, h));
            cases.planted.push((id.clone(), h));
        } else if touches {
            cases.partly_covered.push(id.clone());
        } else {
            if cases.uncovered_building.is_empty() {
                cases.uncovered_building = id.clone();
            }
            cases.uncovered += 1;
        }
    }
    let mut bytes = 0u64;
    for (k, x0) in [west, bx].into_iter().enumerate() {
        let grid = Grid {
            west: x0,
            north,
            cell_x: 1.0,
            cell_y: 1.0,
            width: SIDE,
            height: SIDE,
        };
        let mut dtm = Vec::with_capacity((SIDE * SIDE) as usize);
        let mut dsm = Vec::with_capacity((SIDE * SIDE) as usize);
        for r in 0..SIDE {
            let cy = north - (f64::from(r) + 0.5);
            for c in 0..SIDE {
                let cx = x0 + f64::from(c) + 0.5;
                let g = ground(cx);
                // Roofs overhang their footprint by half a cell, so every cell centred inside
                // carries the planted height whatever the edge rule.
                let roof = roofs.iter().find(|(b, _)| {
                    cx > b[0] - 0.5 && cx < b[2] + 0.5 && cy > b[1] - 0.5 && cy < b[3] + 0.5
                });
                dtm.push(g);
                dsm.push(roof.map_or(g, |(_, h)| g + *h as f32));
            }
        }
        // Two roof cells of the sample, in the western tile, hold nodata.
        if k == 0 {
            let r = (north - (sb[1] + sb[3]) / 2.0).floor() as usize;
            for c in [(bx - 1.0 - x0) as usize, (bx - 2.0 - x0) as usize] {
                dsm[r * SIDE as usize + c] = NODATA;
            }
            cases.boundary_nodata_cells = 2;
        }
        let name = grid_ref(x0, south);
        for (kind, cells) in [("DSM", &dsm), ("DTM", &dtm)] {
            let path = dir.join(format!("LIDAR-Composite_{kind}_1m_2022_{name}.tif"));
            write_tile(&path, &grid, Some(NODATA), cells).map_err(io::Error::other)?;
            bytes += std::fs::metadata(&path)?.len();
        }
        cases.pairs += 1;
    }
    Ok((
        crate::out::FileStat {
            rel: LIDAR_DIR.into(),
            rows: cases.pairs as u64,
            bytes,
        },
        cases,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_references_name_the_100_km_square() {
        assert_eq!(grid_ref(254_000.0, 76_000.0), "SX540760");
        assert_eq!(grid_ref(465_000.0, 170_000.0), "SU650700");
        assert_eq!(grid_ref(530_000.0, 180_000.0), "TQ300800");
    }
}
