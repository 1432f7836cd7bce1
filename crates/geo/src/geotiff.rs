//! Single-band GeoTIFF rasters in British National Grid metres (the Environment Agency's LIDAR
//! composite DSM and DTM tiles), read and written with the `tiff` crate.
//!
//! The georeference is read from the GeoTIFF tags ModelPixelScale (33550: the cell size in x and
//! y) and ModelTiepoint (33922: one tie point, raster (I, J) to model (X, Y)), with
//! GTRasterTypeGeoKey (1025) in the GeoKeyDirectory (34735) shifting a `PixelIsPoint` raster by
//! half a cell; a ProjectedCSTypeGeoKey (3072) other than 27700 (or user-defined, 32767) is
//! refused. The nodata value is the GDAL_NODATA tag (42113, ASCII) or -9999. Rows run north to
//! south, columns west to east; a raster without both tags, rotated (more than one tie point) or
//! with a non-positive cell size is refused with the reason. Cells are 32- or 64-bit floats, or
//! 16/32-bit integers, returned as `f32`.
//!
//! Invariant: one raster is read whole and no more; the caller reads one tile at a time.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;
use tiff::decoder::{Decoder, DecodingResult};
use tiff::tags::Tag;

/// The nodata value when the file states none (the Environment Agency's).
pub const DEFAULT_NODATA: f32 = -9999.0;

/// A north-up raster grid in BNG metres.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grid {
    /// The western edge of the first column.
    pub west: f64,
    /// The northern edge of the first row.
    pub north: f64,
    /// Cell width and height, metres.
    pub cell_x: f64,
    pub cell_y: f64,
    pub width: u32,
    pub height: u32,
}

impl Grid {
    pub fn east(&self) -> f64 {
        self.west + self.cell_x * f64::from(self.width)
    }

    pub fn south(&self) -> f64 {
        self.north - self.cell_y * f64::from(self.height)
    }

    /// The area of one cell, square metres.
    pub fn cell_area(&self) -> f64 {
        self.cell_x * self.cell_y
    }
}

/// What a tile's header says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TileHeader {
    pub grid: Grid,
    /// Cells equal to this hold no measurement.
    pub nodata: f32,
    /// Whether the file states its nodata value (GDAL_NODATA); otherwise -9999 is assumed.
    pub nodata_stated: bool,
}

/// Why a file is not a usable raster tile.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct GeoTiffError(pub String);

fn err(s: impl Into<String>) -> GeoTiffError {
    GeoTiffError(s.into())
}

fn open(path: &Path) -> Result<Decoder<BufReader<File>>, GeoTiffError> {
    let f = File::open(path).map_err(|e| err(format!("cannot open: {e}")))?;
    Decoder::new(BufReader::new(f)).map_err(|e| err(format!("not a TIFF file: {e}")))
}

fn header_of(d: &mut Decoder<BufReader<File>>) -> Result<TileHeader, GeoTiffError> {
    let (width, height) = d
        .dimensions()
        .map_err(|e| err(format!("no image dimensions: {e}")))?;
    let scale = d
        .find_tag(Tag::ModelPixelScaleTag)
        .map_err(|e| err(format!("unreadable ModelPixelScale tag: {e}")))?
        .ok_or_else(|| err("no georeference: the ModelPixelScale tag (33550) is missing"))?
        .into_f64_vec()
        .map_err(|e| err(format!("ModelPixelScale is not a list of numbers: {e}")))?;
    let tie = d
        .find_tag(Tag::ModelTiepointTag)
        .map_err(|e| err(format!("unreadable ModelTiepoint tag: {e}")))?
        .ok_or_else(|| err("no georeference: the ModelTiepoint tag (33922) is missing"))?
        .into_f64_vec()
        .map_err(|e| err(format!("ModelTiepoint is not a list of numbers: {e}")))?;
    if scale.len() < 2 {
        return Err(err("ModelPixelScale holds fewer than two values"));
    }
    if tie.len() != 6 {
        return Err(err(format!(
            "ModelTiepoint holds {} values: one tie point (6 values) expected; warped rasters are not read",
            tie.len()
        )));
    }
    let (cell_x, cell_y) = (scale[0], scale[1]);
    if !(cell_x.is_finite() && cell_y.is_finite() && cell_x > 0.0 && cell_y > 0.0) {
        return Err(err(format!(
            "cell size {cell_x} x {cell_y} is not positive: a north-up raster expected"
        )));
    }
    let mut west = tie[3] - tie[0] * cell_x;
    let mut north = tie[4] + tie[1] * cell_y;
    if !(west.is_finite() && north.is_finite()) {
        return Err(err("the tie point is not a finite position"));
    }
    if let Some(keys) = d
        .find_tag(Tag::GeoKeyDirectoryTag)
        .ok()
        .flatten()
        .and_then(|v| v.into_u16_vec().ok())
    {
        // Header (4 shorts), then (key, location, count, value) per key.
        for k in keys.get(4..).unwrap_or_default().chunks_exact(4) {
            match (k[0], k[1], k[3]) {
                (1025, 0, 2) => {
                    // PixelIsPoint: the tie point is a cell's centre.
                    west -= cell_x / 2.0;
                    north += cell_y / 2.0;
                }
                (3072, 0, code) if code != 27_700 && code != 32_767 => {
                    return Err(err(format!(
                        "projected in EPSG:{code}; British National Grid (EPSG:27700) expected"
                    )));
                }
                _ => {}
            }
        }
    }
    let stated = d
        .find_tag(Tag::GdalNodata)
        .ok()
        .flatten()
        .and_then(|v| v.into_string().ok());
    let (nodata, nodata_stated) = match stated {
        Some(s) => {
            let t = s.trim_matches(|c: char| c == '\0' || c.is_whitespace());
            let v = t
                .parse::<f32>()
                .map_err(|_| err(format!("GDAL_NODATA {t:?} is not a number")))?;
            (v, true)
        }
        None => (DEFAULT_NODATA, false),
    };
    Ok(TileHeader {
        grid: Grid {
            west,
            north,
            cell_x,
            cell_y,
            width,
            height,
        },
        nodata,
        nodata_stated,
    })
}

/// Reads a tile's header (no cells): its grid and nodata value.
pub fn read_header(path: &Path) -> Result<TileHeader, GeoTiffError> {
    header_of(&mut open(path)?)
}

/// Reads a tile whole: its header and its cells, row by row from the north-west corner.
pub fn read_tile(path: &Path) -> Result<(TileHeader, Vec<f32>), GeoTiffError> {
    let mut d = open(path)?;
    let header = header_of(&mut d)?;
    let cells: Vec<f32> = match d
        .read_image()
        .map_err(|e| err(format!("cannot decode the cells: {e}")))?
    {
        DecodingResult::F32(v) => v,
        DecodingResult::F64(v) => v.into_iter().map(|x| x as f32).collect(),
        DecodingResult::I16(v) => v.into_iter().map(f32::from).collect(),
        DecodingResult::U16(v) => v.into_iter().map(f32::from).collect(),
        DecodingResult::I32(v) => v.into_iter().map(|x| x as f32).collect(),
        DecodingResult::U8(_)
        | DecodingResult::U32(_)
        | DecodingResult::U64(_)
        | DecodingResult::I8(_)
        | DecodingResult::I64(_)
        | DecodingResult::F16(_) => {
            return Err(err(
                "the cells are not float or 16/32-bit integer samples: a float32 elevation raster expected",
            ));
        }
    };
    let expected = header.grid.width as usize * header.grid.height as usize;
    if cells.len() != expected {
        return Err(err(format!(
            "{} samples for a {} x {} raster: one band expected",
            cells.len(),
            header.grid.width,
            header.grid.height
        )));
    }
    Ok((header, cells))
}

/// Writes a float32 GeoTIFF tile (Deflate-compressed) on `grid` in EPSG:27700, `PixelIsArea`,
/// with GDAL_NODATA when `nodata` is given; `cells` row by row from the north-west corner.
pub fn write_tile(
    path: &Path,
    grid: &Grid,
    nodata: Option<f32>,
    cells: &[f32],
) -> Result<(), GeoTiffError> {
    use tiff::encoder::{Compression, DeflateLevel, TiffEncoder, colortype};
    let e = |x: tiff::TiffError| err(format!("cannot write {}: {x}", path.display()));
    let f = File::create(path).map_err(|x| err(format!("cannot create: {x}")))?;
    let mut enc = TiffEncoder::new(BufWriter::new(f))
        .map_err(e)?
        .with_compression(Compression::Deflate(DeflateLevel::Fast));
    let mut img = enc
        .new_image::<colortype::Gray32Float>(grid.width, grid.height)
        .map_err(e)?;
    let dir = img.encoder();
    dir.write_tag(
        Tag::ModelPixelScaleTag,
        &[grid.cell_x, grid.cell_y, 0.0][..],
    )
    .map_err(e)?;
    dir.write_tag(
        Tag::ModelTiepointTag,
        &[0.0, 0.0, 0.0, grid.west, grid.north, 0.0][..],
    )
    .map_err(e)?;
    // GeoKeyDirectory 1.1.0: projected model, PixelIsArea, EPSG:27700.
    let keys: [u16; 16] = [1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, 27_700];
    dir.write_tag(Tag::GeoKeyDirectoryTag, &keys[..])
        .map_err(e)?;
    if let Some(n) = nodata {
        dir.write_tag(Tag::GdalNodata, format!("{n}").as_str())
            .map_err(e)?;
    }
    img.write_data(cells).map_err(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Grid {
        Grid {
            west: 465_000.0,
            north: 170_010.0,
            cell_x: 1.0,
            cell_y: 1.0,
            width: 8,
            height: 10,
        }
    }

    #[test]
    fn a_written_tile_reads_back_with_its_grid_and_nodata() {
        let dir = std::env::temp_dir().join(format!("terrace-geotiff-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t_DSM_SU6570.tif");
        let cells: Vec<f32> = (0..80).map(|i| i as f32 * 0.25).collect();
        write_tile(&p, &grid(), Some(-3.5), &cells).unwrap();
        let (h, back) = read_tile(&p).unwrap();
        assert_eq!(h.grid, grid());
        assert_eq!(h.nodata, -3.5);
        assert!(h.nodata_stated);
        assert_eq!(back, cells);
        assert_eq!(h.grid.east(), 465_008.0);
        assert_eq!(h.grid.south(), 170_000.0);
        write_tile(&p, &grid(), None, &cells).unwrap();
        let h = read_header(&p).unwrap();
        assert_eq!((h.nodata, h.nodata_stated), (DEFAULT_NODATA, false));
        std::fs::write(&p, b"not a tiff at all").unwrap();
        assert!(read_header(&p).unwrap_err().0.contains("not a TIFF"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
