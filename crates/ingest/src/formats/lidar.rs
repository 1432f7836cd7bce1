//! The Environment Agency's LIDAR Composite DSM and DTM (1 m, 5 km tiles, GeoTIFF float32 in
//! British National Grid), from a directory of tile files: one row per DSM/DTM pair.
//!
//! **Layout.** Every `.tif`/`.tiff` file under the directory (subdirectories included, in path
//! order) whose name holds the token `DSM` or `DTM` (any case, between `_`, `-`, `.` or spaces:
//! `LIDAR-Composite_DSM_1m_2022_SU6570.tif`, `SU65nw_DTM_1m.tif`). A pair is the two files whose
//! names are equal once that token is replaced (so `dsm/x_DSM_SU6570.tif` and
//! `dtm/x_DTM_SU6570.tif` pair whatever their folders); the tile's name is the last token.
//! Each pair's cells are not read here (the land build streams them, a tile at a time); its
//! header is: both files must carry the georeference (ModelPixelScale and ModelTiepoint, read by
//! `terrace_geo::geotiff`) on the same grid. Other files are not read, except `survey_years.csv`
//! at the top of the directory (header `tile,survey_year`), the operator's per-tile survey year;
//! a tile it does not name has the composite's year, 2022.
//!
//! A row's "line" is the 1-based position of its DSM file (else its DTM file) among the tile
//! files in path order. Rejections, each naming the file: a name with neither token or both, a
//! file that is not a TIFF or has no georeference, a DSM with no DTM (or the reverse), two files
//! for one side of a pair, and a pair whose grids differ. A malformed `survey_years.csv` fails the
//! load as a whole.

use super::{Parsed, Rejection};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use terrace_geo::geotiff::{self, Grid, TileHeader};

/// The composite's survey year, where the operator gives none per tile.
pub const COMPOSITE_YEAR: i32 = 2022;
/// The operator's per-tile survey years, at the top of the tile directory.
pub const YEARS_FILE: &str = "survey_years.csv";

/// One DSM/DTM pair.
#[derive(Debug, Clone, PartialEq)]
pub struct TileRow {
    /// The file name (lower case) with its `DSM`/`DTM` token replaced by `*`.
    pub tile_key: String,
    pub tile: String,
    pub dsm: PathBuf,
    pub dtm: PathBuf,
    pub grid: Grid,
    pub dsm_nodata: f32,
    pub dtm_nodata: f32,
    pub survey_year: i32,
    /// (size in bytes, modification time in seconds since 1970) of the DSM and DTM files.
    pub dsm_stat: (i64, i64),
    pub dtm_stat: (i64, i64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Dsm,
    Dtm,
}

/// Whether a token looks like an OS grid reference (`su6570`, `su65nw`, `su67`).
fn is_grid_ref(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() >= 4
        && b[..2].iter().all(u8::is_ascii_alphabetic)
        && b[2..4].iter().all(u8::is_ascii_digit)
        && (b[4..].iter().all(u8::is_ascii_digit)
            || (b.len() == 6 && b[4..].iter().all(u8::is_ascii_alphabetic)))
}

/// (side, pair key, tile name) of a file name, or why it has none. The tile's name is the last
/// token that looks like an OS grid reference, else the last token.
fn classify(stem: &str) -> Result<(Side, String, String), String> {
    let lower = stem.to_ascii_lowercase();
    let mut found: Vec<(Side, usize, usize)> = Vec::new();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for (i, ch) in lower
        .char_indices()
        .chain(std::iter::once((lower.len(), '_')))
    {
        if matches!(ch, '_' | '-' | '.' | ' ') {
            match &lower[start..i] {
                "dsm" => found.push((Side::Dsm, start, i)),
                "dtm" => found.push((Side::Dtm, start, i)),
                "" => {}
                _ => spans.push((start, i)),
            }
            start = i + ch.len_utf8();
        }
    }
    match found.as_slice() {
        [(side, a, b)] => {
            let key = format!("{}*{}", &lower[..*a], &lower[*b..]);
            let tile = spans
                .iter()
                .rev()
                .find(|(a, b)| is_grid_ref(&lower[*a..*b]))
                .or(spans.last())
                .and_then(|(a, b)| stem.get(*a..*b))
                .map_or_else(|| key.clone(), str::to_string);
            Ok((*side, key, tile))
        }
        [] => Err("the file name holds neither DSM nor DTM, so it pairs with no tile".into()),
        _ => Err("the file name holds more than one DSM/DTM token".into()),
    }
}

/// Every tile file under `dir`, by path.
fn tile_files(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<io::Result<_>>()?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            tile_files(&p, out)?;
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("tif") || e.eq_ignore_ascii_case("tiff"))
        {
            out.push(p);
        }
    }
    Ok(())
}

/// The operator's per-tile survey years (`tile,survey_year`), if the file is there.
fn survey_years(dir: &Path) -> io::Result<BTreeMap<String, i32>> {
    let path = dir.join(YEARS_FILE);
    let mut years = BTreeMap::new();
    if !path.exists() {
        return Ok(years);
    }
    let bad = |line: usize, why: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}:{line}: {why}", path.display()),
        )
    };
    let text = std::fs::read_to_string(&path)?;
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, h)) if h.trim().eq_ignore_ascii_case("tile,survey_year") => {}
        _ => return Err(bad(1, "the header must be tile,survey_year".into())),
    }
    for (i, l) in lines {
        if l.trim().is_empty() {
            continue;
        }
        let (tile, year) = l
            .split_once(',')
            .ok_or_else(|| bad(i + 1, format!("{l:?} is not tile,survey_year")))?;
        let year: i32 = year
            .trim()
            .parse()
            .ok()
            .filter(|y| (1990..=2100).contains(y))
            .ok_or_else(|| bad(i + 1, format!("survey year {year:?} is not a year")))?;
        years.insert(tile.trim().to_ascii_lowercase(), year);
    }
    Ok(years)
}

fn stat(p: &Path) -> (i64, i64) {
    std::fs::metadata(p)
        .map(|m| {
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs() as i64);
            (m.len() as i64, modified)
        })
        .unwrap_or((0, 0))
}

/// Whether two headers describe the same grid (to a millimetre).
fn same_grid(a: &Grid, b: &Grid) -> bool {
    let near = |x: f64, y: f64| (x - y).abs() < 1e-3;
    a.width == b.width
        && a.height == b.height
        && near(a.west, b.west)
        && near(a.north, b.north)
        && near(a.cell_x, b.cell_x)
        && near(a.cell_y, b.cell_y)
}

fn describe(g: &Grid) -> String {
    format!(
        "{} x {} cells of {} x {} m from ({}, {})",
        g.width, g.height, g.cell_x, g.cell_y, g.west, g.north
    )
}

/// Reads a directory of DSM and DTM tiles into pairs (headers only).
pub fn read(dir: &Path) -> io::Result<impl Iterator<Item = Parsed<TileRow>> + Send + use<>> {
    if !dir.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}: a directory of LIDAR DSM and DTM tiles is expected",
                dir.display()
            ),
        ));
    }
    let years = survey_years(dir)?;
    let mut files = Vec::new();
    tile_files(dir, &mut files)?;
    let mut out: Vec<Parsed<TileRow>> = Vec::new();
    let rel = |p: &Path| p.strip_prefix(dir).unwrap_or(p).display().to_string();
    let reject = |p: &Path, line: usize, why: String| Rejection {
        file: p.display().to_string(),
        line: line as u64,
        reason: format!("{}: {why}", rel(p)),
    };
    // key -> (tile name, DSM files, DTM files), each file with its line.
    type Sides = (String, Vec<(usize, PathBuf)>, Vec<(usize, PathBuf)>);
    let mut pairs: BTreeMap<String, Sides> = BTreeMap::new();
    for (i, p) in files.iter().enumerate() {
        let line = i + 1;
        let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        match classify(stem) {
            Ok((side, key, tile)) => {
                let e = pairs.entry(key).or_insert_with(|| (tile, vec![], vec![]));
                match side {
                    Side::Dsm => e.1.push((line, p.clone())),
                    Side::Dtm => e.2.push((line, p.clone())),
                }
            }
            Err(why) => out.push(Err(reject(p, line, why))),
        }
    }
    for (key, (tile, dsms, dtms)) in pairs {
        let (dsm, dtm) = match (dsms.as_slice(), dtms.as_slice()) {
            ([dsm], [dtm]) => (dsm.clone(), dtm.clone()),
            ([(l, p)], []) => {
                out.push(Err(reject(
                    p,
                    *l,
                    "no DTM tile pairs this DSM (the same name with DTM for DSM)".into(),
                )));
                continue;
            }
            ([], [(l, p)]) => {
                out.push(Err(reject(
                    p,
                    *l,
                    "no DSM tile pairs this DTM (the same name with DSM for DTM)".into(),
                )));
                continue;
            }
            (a, b) => {
                for (l, p) in a.iter().chain(b) {
                    out.push(Err(reject(
                        p,
                        *l,
                        format!(
                            "{} DSM and {} DTM files share the tile key {key:?}: one of each expected",
                            a.len(),
                            b.len()
                        ),
                    )));
                }
                continue;
            }
        };
        let header = |(l, p): &(usize, PathBuf)| -> Result<TileHeader, Rejection> {
            geotiff::read_header(p).map_err(|e| reject(p, *l, e.0))
        };
        let (h_dsm, h_dtm) = match (header(&dsm), header(&dtm)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => {
                out.push(Err(e));
                continue;
            }
        };
        if !same_grid(&h_dsm.grid, &h_dtm.grid) {
            out.push(Err(reject(
                &dsm.1,
                dsm.0,
                format!(
                    "mismatched pair: the DSM is {} but the DTM {} is {}",
                    describe(&h_dsm.grid),
                    rel(&dtm.1),
                    describe(&h_dtm.grid)
                ),
            )));
            continue;
        }
        let survey_year = years
            .get(&tile.to_ascii_lowercase())
            .copied()
            .unwrap_or(COMPOSITE_YEAR);
        out.push(Ok((
            dsm.0 as u64,
            TileRow {
                tile_key: key,
                tile,
                dsm_stat: stat(&dsm.1),
                dtm_stat: stat(&dtm.1),
                dsm: std::fs::canonicalize(&dsm.1).unwrap_or(dsm.1),
                dtm: std::fs::canonicalize(&dtm.1).unwrap_or(dtm.1),
                grid: h_dsm.grid,
                dsm_nodata: h_dsm.nodata,
                dtm_nodata: h_dtm.nodata,
                survey_year,
            },
        )));
    }
    // In file order, as every reader yields.
    out.sort_by_key(|r| match r {
        Ok((l, _)) => *l,
        Err(r) => r.line,
    });
    Ok(out.into_iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_pair_on_everything_but_the_dsm_dtm_token() {
        let (s, k, t) = classify("LIDAR-Composite_DSM_1m_2022_SU6570").unwrap();
        assert_eq!(s, Side::Dsm);
        assert_eq!(t, "SU6570");
        let (s2, k2, _) = classify("lidar-composite_dtm_1m_2022_SU6570").unwrap();
        assert_eq!((s2, k2), (Side::Dtm, k.clone()));
        assert_eq!(k, "lidar-composite_*_1m_2022_su6570");
        let (_, _, t) = classify("SU65nw_DTM_1m").unwrap();
        assert_eq!(t, "SU65nw");
        assert!(classify("SU6570_hillshade").is_err());
        assert!(classify("DSM_DTM_SU6570").is_err());
        // DSMx is not the token.
        assert!(classify("DSMx_SU6570").is_err());
    }
}
