//! Building heights from LIDAR DSM/DTM tiles, end to end: tiles written as GeoTIFFs with planted
//! buildings, loaded through the `lidar_composite` loader beside malformed files (each rejected
//! with its file and reason while the rest loads), footprints through the OS buildings loader,
//! then the land build's height step: the planted heights within 1 mm, a footprint across the
//! tiles' common edge with the median of all its cells, nodata cells skipped, no height outside
//! the tiles or half outside them, and a second load and build that change nothing.

use std::path::Path;
use terrace_geo::geotiff::{Grid, write_tile};
use terrace_ingest::{Dataset, LoadReport, Progress, load_file};
use terrace_land::heights::{self, NO_TILE};
use terrace_store::lidar;
use terrace_store::testing::TestDb;

const NODATA: f32 = -9999.0;
const X0: f64 = 465_000.0;
const Y0: f64 = 170_000.0;

/// Footprints as (id, [x0, y0, x1, y1]) in metres from (X0, Y0).
const A: [f64; 4] = [5.0, 5.0, 12.0, 10.0];
const B: [f64; 4] = [15.0, 2.0, 27.0, 8.0];
const C: [f64; 4] = [1000.0, 1000.0, 1010.0, 1010.0];
const D: [f64; 4] = [35.0, 10.0, 45.0, 15.0];
const E: [f64; 4] = [2.0, 15.0, 4.0, 18.0];
const F: [f64; 4] = [30.0, 3.0, 33.0, 6.0];

fn feature(id: &str, r: [f64; 4]) -> String {
    let [a, b, c, d] = [X0 + r[0], Y0 + r[1], X0 + r[2], Y0 + r[3]];
    format!(
        r#"{{"type":"Feature","properties":{{"id":"{id}","feature_code":15014}},"geometry":{{"type":"Polygon","coordinates":[[[{a},{b}],[{c},{b}],[{c},{d}],[{a},{d}],[{a},{b}]]]}}}}"#
    )
}

fn collection(features: &[String]) -> String {
    format!(
        r#"{{"type":"FeatureCollection","crs":{{"type":"name","properties":{{"name":"urn:ogc:def:crs:EPSG::27700"}}}},"features":[{}]}}"#,
        features.join(",")
    )
}

fn inside(r: [f64; 4], x: f64, y: f64) -> bool {
    x > r[0] && x < r[2] && y > r[1] && y < r[3]
}

/// Writes a 20 x 20 m pair with its west edge at X0 + `dx`: ground sloping east, A at 6 m, B at
/// 4 m in the west tile and 10 m in the east one, two of A's cells and all of E's nodata in the
/// DSM.
fn write_pair(dir: &Path, dx: f64, name: &str) {
    let grid = Grid {
        west: X0 + dx,
        north: Y0 + 20.0,
        cell_x: 1.0,
        cell_y: 1.0,
        width: 20,
        height: 20,
    };
    let (mut dsm, mut dtm) = (Vec::new(), Vec::new());
    for r in 0..20 {
        for c in 0..20 {
            let (x, y) = (dx + c as f64 + 0.5, 20.0 - r as f64 - 0.5);
            let ground = 30.0 + 0.01 * (dx as f32 + c as f32);
            let h = if inside(A, x, y) {
                6.0
            } else if inside(B, x, y) {
                if dx == 0.0 { 4.0 } else { 10.0 }
            } else {
                0.0
            };
            dtm.push(ground);
            dsm.push(
                if inside(E, x, y) || (inside(A, x, y) && y == 7.5 && x < 7.0) {
                    NODATA
                } else {
                    ground + h
                },
            );
        }
    }
    write_tile(
        &dir.join(format!("LIDAR-Composite_DSM_1m_2022_{name}.tif")),
        &grid,
        Some(NODATA),
        &dsm,
    )
    .unwrap();
    write_tile(
        &dir.join(format!("LIDAR-Composite_DTM_1m_2022_{name}.tif")),
        &grid,
        None,
        &dtm,
    )
    .unwrap();
}

fn small(dir: &Path, file: &str, width: u32) {
    let grid = Grid {
        west: 400_000.0,
        north: 100_000.0,
        cell_x: 1.0,
        cell_y: 1.0,
        width,
        height: width,
    };
    let cells = vec![1.0f32; (width * width) as usize];
    write_tile(&dir.join(file), &grid, Some(NODATA), &cells).unwrap();
}

/// The malformed files: not a TIFF, no georeference, a mismatched pair, a lone DSM, a name with
/// neither DSM nor DTM.
fn write_malformed(dir: &Path) {
    std::fs::write(dir.join("bad_DSM_SU000001.tif"), b"hello, not a tiff").unwrap();
    small(dir, "bad_DTM_SU000001.tif", 4);
    {
        let f = std::fs::File::create(dir.join("nogeo_DSM_SU000002.tif")).unwrap();
        let mut enc = tiff::encoder::TiffEncoder::new(std::io::BufWriter::new(f)).unwrap();
        enc.write_image::<tiff::encoder::colortype::Gray32Float>(4, 4, &[1.0f32; 16])
            .unwrap();
    }
    small(dir, "nogeo_DTM_SU000002.tif", 4);
    small(dir, "mis_DSM_SU000003.tif", 4);
    small(dir, "mis_DTM_SU000003.tif", 3);
    small(dir, "lone_DSM_SU000004.tif", 4);
    small(dir, "hillshade_SU000005.tif", 4);
}

async fn load(db: &terrace_store::Db, ds: Dataset, path: &Path) -> LoadReport {
    let r = load_file(db, ds, path, Default::default(), &mut Progress::quiet())
        .await
        .unwrap();
    let c = &r.counts;
    assert_eq!(
        c.read,
        c.loaded + c.updated + c.deleted + c.rejected + c.unchanged,
        "{c:?}"
    );
    r
}

async fn height(db: &terrace_store::Db, id: &str) -> lidar::LidarHeight {
    lidar::heights_by_id(db, &[id.to_string()])
        .await
        .unwrap()
        .remove(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heights_from_tiles_are_exact_across_a_boundary_skip_nodata_and_build_once() {
    let t = TestDb::new().await;
    let db = &t.db;
    let tmp = tempfile::tempdir().unwrap();
    let tiles = tmp.path().join("lidar");
    std::fs::create_dir_all(&tiles).unwrap();
    write_pair(&tiles, 0.0, "SU650700");
    write_pair(&tiles, 20.0, "SU650701");
    write_malformed(&tiles);

    let r = load(db, Dataset::LidarComposite, &tiles).await;
    assert_eq!(
        (r.counts.read, r.counts.loaded, r.counts.rejected),
        (7, 2, 5),
        "{:#?}",
        r.rejections
    );
    let why = |file: &str| {
        r.rejections
            .iter()
            .find(|j| j.file.ends_with(file))
            .unwrap_or_else(|| panic!("{file} not rejected: {:#?}", r.rejections))
            .reason
            .clone()
    };
    assert!(why("bad_DSM_SU000001.tif").contains("not a TIFF"));
    assert!(why("nogeo_DSM_SU000002.tif").contains("ModelPixelScale"));
    assert!(why("mis_DSM_SU000003.tif").contains("mismatched pair"));
    assert!(why("lone_DSM_SU000004.tif").contains("no DTM tile pairs"));
    assert!(why("hillshade_SU000005.tif").contains("neither DSM nor DTM"));
    for j in &r.rejections {
        let name = Path::new(&j.file).file_name().unwrap().to_str().unwrap();
        assert!(
            j.reason.starts_with(name),
            "the reason names the file: {j:?}"
        );
        assert!(j.line >= 1);
    }
    let stored = lidar::all_tiles(db).await.unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0].tile, "SU650700");
    assert_eq!(
        (stored[0].min_x, stored[0].max_x, stored[0].survey_year),
        (X0, X0 + 20.0, 2022)
    );

    let fp = tmp.path().join("buildings.geojson");
    std::fs::write(
        &fp,
        collection(&[
            feature("A", A),
            feature("B", B),
            feature("C", C),
            feature("D", D),
            feature("E", E),
        ]),
    )
    .unwrap();
    assert_eq!(load(db, Dataset::OsBuildings, &fp).await.counts.loaded, 5);

    let report = heights::build(db, &mut |_| {}).await.unwrap();
    assert_eq!(
        (report.computed, report.with_height, report.tiles_read),
        (4, 2, 2),
        "{report:?}"
    );
    assert_eq!(report.uncovered, 1, "C is covered by no tile");

    // A: 7 x 5 cells at 6 m, two of them nodata in the DSM.
    let a = height(db, "A").await;
    assert!((a.height_m.unwrap() - 6.0).abs() < 1e-3, "{a:?}");
    assert_eq!(a.cells, Some(33));
    assert!((a.volume_m3.unwrap() - 33.0 * 6.0).abs() < 1e-2, "{a:?}");
    assert_eq!(a.survey_year, Some(2022));
    assert_eq!(a.source.as_deref(), Some("ea_lidar_composite_2022"));
    assert!(a.note.unwrap().contains("2 of 35 cells"));
    // B: 30 cells at 4 m in the west tile, 42 at 10 m in the east: the median of all 72 is 10
    // (the mean of the two tiles' medians would be 7).
    let b = height(db, "B").await;
    assert_eq!(b.cells, Some(72));
    assert!((b.height_m.unwrap() - 10.0).abs() < 1e-3, "{b:?}");
    assert!((b.volume_m3.unwrap() - (30.0 * 4.0 + 42.0 * 10.0)).abs() < 1e-2);
    let c = height(db, "C").await;
    assert_eq!((c.height_m, c.note.as_deref()), (None, Some(NO_TILE)));
    let d = height(db, "D").await;
    assert_eq!(d.height_m, None);
    assert!(
        d.note
            .unwrap()
            .contains("extends beyond the loaded LIDAR tiles")
    );
    let e = height(db, "E").await;
    assert_eq!((e.height_m, e.volume_m3, e.source), (None, None, None));
    assert!(
        e.note.unwrap().contains("none of the 6 cells"),
        "nodata only"
    );

    // A second build reads no tile and writes nothing; the orchestrated step neither.
    let again = heights::build(db, &mut |_| {}).await.unwrap();
    assert_eq!(
        (again.computed, again.tiles_read, again.uncovered),
        (0, 0, 0),
        "{again:?}"
    );
    let (_, step) = terrace_build::derive::FAMILY_STEPS
        .iter()
        .find(|(name, _)| *name == "building heights")
        .unwrap();
    step(db, &mut Progress::quiet()).await.unwrap();
    assert_eq!(height(db, "B").await, b);
    // Loading the same directory again changes nothing.
    let r2 = load(db, Dataset::LidarComposite, &tiles).await;
    assert_eq!(
        (
            r2.counts.unchanged,
            r2.counts.loaded,
            r2.counts.updated,
            r2.counts.rejected
        ),
        (2, 0, 0, 5)
    );
    assert_eq!(heights::build(db, &mut |_| {}).await.unwrap().computed, 0);

    // A new footprint is computed alone, reading only the tile it stands on.
    let fp2 = tmp.path().join("more.geojson");
    std::fs::write(&fp2, collection(&[feature("F", F)])).unwrap();
    load(db, Dataset::OsBuildings, &fp2).await;
    let more = heights::build(db, &mut |_| {}).await.unwrap();
    assert_eq!((more.computed, more.tiles_read), (1, 1), "{more:?}");
    let f = height(db, "F").await;
    assert!(f.height_m.unwrap().abs() < 1e-3, "bare ground: {f:?}");
    assert_eq!(height(db, "A").await.built, a.built);
}
