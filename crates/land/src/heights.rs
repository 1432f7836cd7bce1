//! Building heights and volumes from the Environment Agency's LIDAR composite (a derived step of
//! `cargo xtask build`): for each footprint, over the 1 m cells whose centres lie inside it (the
//! crossing-number rule, so a centre on a shared edge belongs to exactly one of two neighbours),
//! height = the median of DSM − DTM over the cells with a measurement in both models, volume =
//! Σ max(DSM − DTM, 0) × cell area; cells holding nodata in either model are skipped. Methods in
//! docs/METHODS.md ("Building height and volume").
//!
//! Streaming: the tiles are read one pair at a time, column by column (west to east, then south to
//! north); the footprints are read a strip at a time (those whose western edge lies in the
//! column). A footprint touching several tiles keeps its cell values until every tile it touches
//! has been read, then its median is taken: exact, never an average of tile medians. A footprint
//! whose box is not wholly inside the loaded tiles gets no height (part of it is unmeasured), and
//! says so; so does one no tile touches.
//!
//! Invariants: a footprint is computed once per tile set (its `lidar_built` is the set's digest),
//! so a second build reads no tile and writes nothing; a tile is only read when a footprint still
//! to compute touches it; tiles overlapping others are left out with a note.

use std::collections::BTreeMap;
use terrace_geo::geotiff::{self, Grid};
use terrace_store::lidar::{self, FootprintShape, LidarHeight, LidarTileRow};
use terrace_store::{Db, StoreError};

/// Bumped when the method changes, so every footprint is computed again.
const METHOD_VERSION: &str = "median-ndsm-v1";
/// Footprints written per transaction.
const WRITE_CHUNK: usize = 5_000;
/// Positions closer than this (metres) are the same edge.
const EPS: f64 = 1e-6;

pub const NO_TILE: &str = "no loaded LIDAR tile covers the footprint";

/// What the step did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct HeightsReport {
    pub tiles: usize,
    /// Tile pairs read (only those touching a footprint still to compute).
    pub tiles_read: usize,
    /// Footprints computed this run, and of those with a height.
    pub computed: usize,
    pub with_height: usize,
    /// Footprints no tile touches, marked this run.
    pub uncovered: usize,
    /// Tiles left out (overlapping, or unreadable), with the reason.
    pub notes: Vec<String>,
}

impl HeightsReport {
    pub fn summary(&self) -> String {
        format!(
            "[building heights] {} tile pairs, {} read; {} footprints computed, {} with a height; {} covered by no tile",
            self.tiles, self.tiles_read, self.computed, self.with_height, self.uncovered
        )
    }
}

/// The cells of `grid` whose centres lie inside `mp` (even-odd over every ring, half-open at the
/// crossings), as (column, row).
pub fn cells_inside(mp: &geo::MultiPolygon<f64>, grid: &Grid, mut f: impl FnMut(usize, usize)) {
    use geo::BoundingRect;
    let Some(b) = mp.bounding_rect() else {
        return;
    };
    let (w, h) = (grid.width as i64, grid.height as i64);
    let r_lo = (((grid.north - b.max().y) / grid.cell_y - 0.5).floor() as i64).max(0);
    let r_hi = (((grid.north - b.min().y) / grid.cell_y - 0.5).ceil() as i64).min(h - 1);
    let mut xs: Vec<f64> = Vec::new();
    for r in r_lo..=r_hi {
        let y = grid.north - (r as f64 + 0.5) * grid.cell_y;
        xs.clear();
        for p in &mp.0 {
            for ring in std::iter::once(p.exterior()).chain(p.interiors()) {
                for l in ring.lines() {
                    let (a, c) = (l.start, l.end);
                    if (a.y > y) != (c.y > y) {
                        xs.push(a.x + (y - a.y) * (c.x - a.x) / (c.y - a.y));
                    }
                }
            }
        }
        xs.sort_by(f64::total_cmp);
        for pair in xs.chunks_exact(2) {
            let i_lo = (((pair[0] - grid.west) / grid.cell_x - 0.5).ceil() as i64).max(0);
            let i_hi = (((pair[1] - grid.west) / grid.cell_x - 0.5).ceil() as i64).min(w);
            for i in i_lo..i_hi {
                f(i as usize, r as usize);
            }
        }
    }
}

/// The median of values (the mean of the middle two for an even count); None when empty.
pub fn median(values: &mut [f32]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f32::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        f64::from(values[n / 2])
    } else {
        (f64::from(values[n / 2 - 1]) + f64::from(values[n / 2])) / 2.0
    })
}

/// One footprint's cells so far.
#[derive(Debug, Default)]
pub struct Partial {
    /// DSM − DTM of each valid cell.
    pub values: Vec<f32>,
    pub volume: f64,
    /// Cells centred inside, valid or not.
    pub centred: u32,
    /// Valid cells per survey year.
    pub years: BTreeMap<i32, u32>,
    /// Why a tile it touches could not be read.
    pub failed: Option<String>,
}

impl Partial {
    /// Adds the cells of one tile pair.
    pub fn add(
        &mut self,
        mp: &geo::MultiPolygon<f64>,
        grid: &Grid,
        dsm: &[f32],
        dtm: &[f32],
        nodata: (f32, f32),
        year: i32,
    ) {
        let area = grid.cell_area();
        let width = grid.width as usize;
        let mut valid = 0u32;
        cells_inside(mp, grid, |i, r| {
            self.centred += 1;
            let k = r * width + i;
            let (s, t) = (dsm[k], dtm[k]);
            if s == nodata.0 || t == nodata.1 || !s.is_finite() || !t.is_finite() {
                return;
            }
            let d = f64::from(s) - f64::from(t);
            self.values.push(d as f32);
            self.volume += d.max(0.0) * area;
            valid += 1;
        });
        if valid > 0 {
            *self.years.entry(year).or_default() += valid;
        }
    }

    /// The footprint's LIDAR columns (`built` is the tile set's digest).
    pub fn finish(mut self, building_id: String, source: &str, built: &str) -> LidarHeight {
        let mut row = LidarHeight {
            building_id,
            height_m: None,
            volume_m3: None,
            cells: Some(self.values.len() as i32),
            survey_year: None,
            source: None,
            note: None,
            built: Some(built.to_string()),
        };
        if let Some(why) = self.failed {
            row.cells = None;
            row.note = Some(why);
            return row;
        }
        let Some(m) = median(&mut self.values) else {
            row.note = Some(if self.centred == 0 {
                "no 1 m cell centre lies inside the footprint (it is smaller than a cell)".into()
            } else {
                format!(
                    "none of the {} cells centred inside the footprint has a measurement in both the DSM and the DTM (nodata)",
                    self.centred
                )
            });
            return row;
        };
        row.height_m = Some(m);
        row.volume_m3 = Some(self.volume);
        // The year of most valid cells; ties go to the later survey.
        row.survey_year = self
            .years
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(b.0)))
            .map(|(y, _)| *y);
        row.source = Some(source.to_string());
        if self.centred as usize > self.values.len() {
            row.note = Some(format!(
                "{} of {} cells centred inside held nodata and were skipped",
                self.centred as usize - self.values.len(),
                self.centred
            ));
        }
        row
    }
}

/// The digest of a tile set (FNV-1a, 64 bits, hex), with the method's version.
fn digest(tiles: &[&LidarTileRow]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |s: &str| {
        for b in s.bytes().chain(std::iter::once(0u8)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(METHOD_VERSION);
    for t in tiles {
        eat(&format!(
            "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
            t.tile_key,
            t.tile,
            t.dsm_path,
            t.dtm_path,
            t.min_x,
            t.min_y,
            t.max_x,
            t.max_y,
            t.cell_x,
            t.cell_y,
            t.width,
            t.height,
            t.dsm_nodata,
            t.dtm_nodata,
            t.survey_year,
            t.dsm_bytes,
            t.dtm_bytes,
            t.dsm_modified,
            t.dtm_modified,
            t.source
        ));
    }
    format!("{h:016x}")
}

/// The tiles usable together: grouped in columns by western edge, each column's tiles ending at or
/// before the next column starts and not overlapping one another; the rest are left out.
fn columns(tiles: &[LidarTileRow], notes: &mut Vec<String>) -> Vec<Vec<LidarTileRow>> {
    let mut by_west: BTreeMap<i64, Vec<LidarTileRow>> = BTreeMap::new();
    for t in tiles {
        by_west
            .entry((t.min_x * 1000.0).round() as i64)
            .or_default()
            .push(t.clone());
    }
    let starts: Vec<f64> = by_west.keys().map(|k| *k as f64 / 1000.0).collect();
    let mut out = Vec::new();
    for (k, (_, mut col)) in by_west.into_iter().enumerate() {
        col.sort_by(|a, b| {
            a.min_y
                .total_cmp(&b.min_y)
                .then(a.tile_key.cmp(&b.tile_key))
        });
        let next = starts.get(k + 1).copied().unwrap_or(f64::INFINITY);
        let mut kept: Vec<LidarTileRow> = Vec::new();
        for t in col {
            let overlaps_next = t.max_x > next + EPS;
            let overlaps_below = kept.last().is_some_and(|p| t.min_y < p.max_y - EPS);
            if overlaps_next || overlaps_below {
                notes.push(format!(
                    "tile {} ({}) overlaps another tile and is left out",
                    t.tile, t.tile_key
                ));
            } else {
                kept.push(t);
            }
        }
        if !kept.is_empty() {
            out.push(kept);
        }
    }
    out
}

fn touches(t: &LidarTileRow, f: &FootprintShape) -> bool {
    t.min_x < f.max_x && t.max_x > f.min_x && t.min_y < f.max_y && t.max_y > f.min_y
}

fn overlap(t: &LidarTileRow, f: &FootprintShape) -> f64 {
    let w = t.max_x.min(f.max_x) - t.min_x.max(f.min_x);
    let h = t.max_y.min(f.max_y) - t.min_y.max(f.min_y);
    w.max(0.0) * h.max(0.0)
}

/// A footprint being computed: its outline, its cells so far and the tiles still to read.
struct Open {
    id: String,
    mp: geo::MultiPolygon<f64>,
    partial: Partial,
    remaining: usize,
}

/// Computes the height and volume of every footprint not yet computed against the loaded tile set;
/// `say` receives a line per column of tiles and the summary.
pub async fn build(
    db: &Db,
    say: &mut (dyn FnMut(&str) + Send),
) -> Result<HeightsReport, StoreError> {
    let all = lidar::all_tiles(db).await?;
    let mut report = HeightsReport {
        tiles: all.len(),
        ..HeightsReport::default()
    };
    if all.is_empty() {
        let cleared = lidar::clear_heights(db).await?;
        if cleared > 0 {
            say(&format!(
                "[building heights] no LIDAR tile is loaded: {cleared} footprints' heights cleared"
            ));
        }
        return Ok(report);
    }
    let cols = columns(&all, &mut report.notes);
    let kept: Vec<&LidarTileRow> = cols.iter().flatten().collect();
    let digest = digest(&kept);
    let widest = lidar::widest_footprint(db).await?;
    // Tiles by (column, index in column), each with the footprints waiting for it.
    let mut waiting: Vec<Vec<Vec<usize>>> =
        cols.iter().map(|c| vec![Vec::new(); c.len()]).collect();
    let mut open: Vec<Option<Open>> = Vec::new();
    let mut done: Vec<LidarHeight> = Vec::new();
    for (k, column) in cols.iter().enumerate() {
        let lo = if k == 0 {
            column[0].min_x - widest - 1.0
        } else {
            column[0].min_x
        };
        let hi = cols.get(k + 1).map_or_else(
            || column.iter().map(|t| t.max_x).fold(lo, f64::max),
            |c| c[0].min_x,
        );
        for f in lidar::pending_in_strip(db, &digest, lo, hi).await? {
            let mut touching: Vec<(usize, usize)> = Vec::new();
            let mut covered = 0.0;
            for (ck, col) in cols.iter().enumerate().skip(k) {
                if col[0].min_x >= f.max_x {
                    break;
                }
                for (ti, t) in col.iter().enumerate() {
                    if touches(t, &f) {
                        touching.push((ck, ti));
                        covered += overlap(t, &f);
                    }
                }
            }
            let box_area = (f.max_x - f.min_x) * (f.max_y - f.min_y);
            let note = if touching.is_empty() {
                Some(NO_TILE.to_string())
            } else if covered < box_area * (1.0 - 1e-9) - EPS {
                Some(format!(
                    "the footprint extends beyond the loaded LIDAR tiles ({:.0}% of its box is covered), so part of it is unmeasured",
                    100.0 * covered / box_area.max(EPS)
                ))
            } else {
                None
            };
            let mp = match terrace_geo::multipolygon_from_wkb(&f.wkb) {
                Ok(mp) => mp,
                Err(e) => {
                    done.push(
                        Partial {
                            failed: Some(format!("the footprint's outline is unreadable: {e}")),
                            ..Partial::default()
                        }
                        .finish(f.building_id, "", &digest),
                    );
                    continue;
                }
            };
            if let Some(n) = note {
                done.push(
                    Partial {
                        failed: Some(n),
                        ..Partial::default()
                    }
                    .finish(f.building_id, "", &digest),
                );
                continue;
            }
            let slot = open.len();
            for (ck, ti) in &touching {
                waiting[*ck][*ti].push(slot);
            }
            open.push(Some(Open {
                id: f.building_id,
                mp,
                partial: Partial::default(),
                remaining: touching.len(),
            }));
        }
        for (ti, t) in column.iter().enumerate() {
            let slots = std::mem::take(&mut waiting[k][ti]);
            if slots.is_empty() {
                continue;
            }
            report.tiles_read += 1;
            let cells = read_pair(t);
            for slot in slots {
                let Some(o) = open[slot].as_mut() else {
                    continue;
                };
                match &cells {
                    Ok((grid, dsm, dtm)) => o.partial.add(
                        &o.mp,
                        grid,
                        dsm,
                        dtm,
                        (t.dsm_nodata as f32, t.dtm_nodata as f32),
                        t.survey_year,
                    ),
                    Err(why) => o.partial.failed = Some(why.clone()),
                }
                o.remaining -= 1;
                if o.remaining == 0
                    && let Some(o) = open[slot].take()
                {
                    done.push(o.partial.finish(o.id, &t.source, &digest));
                }
            }
            if let Err(why) = &cells {
                report.notes.push(why.clone());
            }
            if done.len() >= WRITE_CHUNK {
                write(db, &mut done, &mut report).await?;
            }
        }
        write(db, &mut done, &mut report).await?;
    }
    report.uncovered = lidar::mark_uncovered(db, &digest, NO_TILE).await?;
    for n in &report.notes {
        say(&format!("[building heights] {n}"));
    }
    say(&report.summary());
    Ok(report)
}

async fn write(
    db: &Db,
    done: &mut Vec<LidarHeight>,
    report: &mut HeightsReport,
) -> Result<(), StoreError> {
    if done.is_empty() {
        return Ok(());
    }
    let rows = std::mem::take(done);
    report.computed += rows.len();
    report.with_height += rows.iter().filter(|r| r.height_m.is_some()).count();
    lidar::set_heights(db, rows).await?;
    Ok(())
}

type Cells = (Grid, Vec<f32>, Vec<f32>);

/// Reads a registered pair whole, checking both files still hold the registered grid.
fn read_pair(t: &LidarTileRow) -> Result<Cells, String> {
    let read = |p: &str| {
        geotiff::read_tile(std::path::Path::new(p))
            .map_err(|e| format!("LIDAR tile {p} could not be read: {e}"))
    };
    let (hs, dsm) = read(&t.dsm_path)?;
    let (ht, dtm) = read(&t.dtm_path)?;
    let g = hs.grid;
    let same = |a: f64, b: f64| (a - b).abs() < 1e-3;
    if hs.grid != ht.grid
        || g.width as i32 != t.width
        || g.height as i32 != t.height
        || !same(g.west, t.min_x)
        || !same(g.north, t.max_y)
    {
        return Err(format!(
            "LIDAR tile {} changed since it was loaded (load the directory again)",
            t.tile
        ));
    }
    Ok((g, dsm, dtm))
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::{LineString, MultiPolygon, Polygon};

    fn rect(x0: f64, y0: f64, x1: f64, y1: f64) -> MultiPolygon<f64> {
        MultiPolygon(vec![Polygon::new(
            LineString::from(vec![(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]),
            vec![],
        )])
    }

    fn grid(west: f64, north: f64, w: u32, h: u32) -> Grid {
        Grid {
            west,
            north,
            cell_x: 1.0,
            cell_y: 1.0,
            width: w,
            height: h,
        }
    }

    #[test]
    fn cells_are_those_centred_inside_and_a_shared_edge_is_counted_once() {
        let g = grid(100.0, 220.0, 20, 20);
        let mut n = 0;
        cells_inside(&rect(103.2, 205.0, 108.7, 210.0), &g, |_, _| n += 1);
        // Centres x = 103.5..108.5 (6), y = 205.5..209.5 (5).
        assert_eq!(n, 30);
        // Two footprints sharing the edge x = 110.5 (on cell centres): 3 + 2 columns, never 6.
        let (mut a, mut b) = (0, 0);
        cells_inside(&rect(108.0, 205.0, 110.5, 206.0), &g, |_, _| a += 1);
        cells_inside(&rect(110.5, 205.0, 112.0, 206.0), &g, |_, _| b += 1);
        assert_eq!(a + b, 4);
        // An L-shape with a hole-free notch: 8 x 8 less a 4 x 4 corner.
        let l = MultiPolygon(vec![Polygon::new(
            LineString::from(vec![
                (100.0, 200.0),
                (108.0, 200.0),
                (108.0, 204.0),
                (104.0, 204.0),
                (104.0, 208.0),
                (100.0, 208.0),
                (100.0, 200.0),
            ]),
            vec![],
        )]);
        let mut n = 0;
        cells_inside(&l, &g, |_, _| n += 1);
        assert_eq!(n, 48);
    }

    #[test]
    fn the_median_of_a_planted_building_is_its_height() {
        let g = grid(0.0, 30.0, 30, 30);
        let mut dtm = vec![0f32; 900];
        let mut dsm = vec![0f32; 900];
        for r in 0..30 {
            for c in 0..30 {
                let k = r * 30 + c;
                dtm[k] = 40.0 + 0.1 * r as f32 + 0.05 * c as f32;
                let inside = (10..20).contains(&c) && (10..20).contains(&r);
                // A chimney on one cell and a noisy edge cell do not move the median.
                let h = match (inside, r, c) {
                    (true, 12, 12) => 14.0,
                    (true, 10, 10) => 2.0,
                    (true, _, _) => 7.25,
                    (false, _, _) => 0.0,
                };
                dsm[k] = dtm[k] + h;
            }
        }
        // Two nodata cells inside (one in each model) are skipped.
        dsm[15 * 30 + 15] = -9999.0;
        dtm[16 * 30 + 16] = -9999.0;
        let mut p = Partial::default();
        p.add(
            &rect(10.0, 10.0, 20.0, 20.0),
            &g,
            &dsm,
            &dtm,
            (-9999.0, -9999.0),
            2022,
        );
        let row = p.finish("b".into(), "ea_lidar_composite_2022", "d");
        assert_eq!(row.cells, Some(98));
        assert!((row.height_m.unwrap() - 7.25).abs() < 1e-3, "{row:?}");
        let volume = 96.0 * 7.25 + 14.0 + 2.0;
        assert!((row.volume_m3.unwrap() - volume).abs() < 1e-2, "{row:?}");
        assert_eq!(row.survey_year, Some(2022));
        assert!(row.note.unwrap().contains("2 of 100 cells"));
    }

    #[test]
    fn a_footprint_of_nodata_cells_has_no_height_and_says_why() {
        let g = grid(0.0, 10.0, 10, 10);
        let dsm = vec![-9999f32; 100];
        let dtm = vec![1f32; 100];
        let mut p = Partial::default();
        p.add(
            &rect(2.0, 2.0, 5.0, 5.0),
            &g,
            &dsm,
            &dtm,
            (-9999.0, -9999.0),
            2022,
        );
        let row = p.finish("b".into(), "s", "d");
        assert_eq!(row.height_m, None);
        assert_eq!(row.source, None);
        assert!(row.note.unwrap().contains("none of the 9 cells"));
    }

    #[test]
    fn a_footprint_split_across_two_tiles_has_the_median_of_all_its_cells() {
        // West tile: 3 m over 6 columns of the footprint; east tile: 9 m over 4. The median of
        // all cells is 3, where an average of the two tiles' medians would be 6.
        let west = grid(0.0, 10.0, 10, 10);
        let east = grid(10.0, 10.0, 10, 10);
        let fp = rect(4.0, 2.0, 14.0, 6.0);
        let dtm = vec![5f32; 100];
        let dsm_w: Vec<f32> = vec![8.0; 100];
        let dsm_e: Vec<f32> = vec![14.0; 100];
        let mut p = Partial::default();
        p.add(&fp, &west, &dsm_w, &dtm, (-9999.0, -9999.0), 2022);
        p.add(&fp, &east, &dsm_e, &dtm, (-9999.0, -9999.0), 2020);
        let row = p.finish("b".into(), "s", "d");
        assert_eq!(row.cells, Some(40));
        assert_eq!(row.height_m, Some(3.0));
        assert_eq!(row.volume_m3, Some(24.0 * 3.0 + 16.0 * 9.0));
        assert_eq!(row.survey_year, Some(2022));
    }
}
