//! The areas datasets through their loaders, on the backend the environment selects: the ONS
//! names and codes, OS Open Names, the ONS boundaries of every kind (the real ward and LSOA
//! samples of ../shared/data when present) and the H3 derived step: every row accounted for,
//! each rejection with its line and reason, and a second load changing nothing.

use std::path::{Path, PathBuf};
use terrace_ingest::{Dataset, LoadReport, Progress, load_file};
use terrace_store::areas;
use terrace_store::loads::RowCounts;
use terrace_store::testing::TestDb;

#[track_caller]
fn accounted(r: &LoadReport) {
    let c = &r.counts;
    assert_eq!(
        c.read,
        c.loaded + c.updated + c.deleted + c.rejected + c.unchanged,
        "{}: {c:?}",
        r.file
    );
    assert_eq!(c.rejected as usize, r.rejections.len());
}

async fn load(db: &terrace_store::Db, ds: Dataset, path: &Path) -> LoadReport {
    let r = load_file(db, ds, path, Default::default(), &mut Progress::quiet())
        .await
        .unwrap();
    accounted(&r);
    r
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn unchanged(read: i64) -> RowCounts {
    RowCounts {
        read,
        unchanged: read,
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_and_codes_load_every_kind_once() {
    let t = TestDb::new().await;
    let db = &t.db;
    let dir = tempfile::tempdir().unwrap();
    let wards = write(
        dir.path(),
        "WD23_NC.csv",
        "\u{feff}WD23CD,WD23NM,WD23NMW,ObjectId\r\nE05003491,Alphington,,1\r\nE05003492,Duryard and St James,,2\r\nE01019968,Not a ward,,3\r\n,Blank,,4\r\n",
    );
    let r = load(db, Dataset::NamesCodes, &wards).await;
    assert_eq!(
        (r.counts.read, r.counts.loaded, r.counts.rejected),
        (4, 2, 2)
    );
    let lines: Vec<u64> = r.rejections.iter().map(|x| x.line).collect();
    assert_eq!(lines, [4, 5]);
    assert!(
        r.rejections[0].reason.contains("not a ward code"),
        "{:?}",
        r.rejections
    );
    let again = load(db, Dataset::NamesCodes, &wards).await;
    assert_eq!(
        again.counts,
        RowCounts {
            read: 4,
            rejected: 2,
            unchanged: 2,
            ..Default::default()
        }
    );
    // A renamed area is updated; the other kinds load beside it.
    let renamed = write(
        dir.path(),
        "WD24_NC.csv",
        "WD24CD,WD24NM\nE05003491,Alphington Village\n",
    );
    assert_eq!(
        load(db, Dataset::NamesCodes, &renamed).await.counts.updated,
        1
    );
    for (name, text) in [
        (
            "RGN.csv",
            "RGN22CD,RGN22NM,ObjectId\nE12000009,South West,1\n",
        ),
        ("CTRY.csv", "CTRY22CD,CTRY22NM\nE92000001,England\n"),
        ("MSOA.csv", "MSOA21CD,MSOA21NM\nE02004156,Exeter 001\n"),
        ("CTY.csv", "CTY23CD,CTY23NM\nE10000008,Devon\n"),
    ] {
        let r = load(db, Dataset::NamesCodes, &write(dir.path(), name, text)).await;
        assert_eq!(r.counts.loaded, 1, "{name}");
    }
    let stored = areas::area_names_page(db, "", 100).await.unwrap();
    let got: Vec<(&str, &str, &str)> = stored
        .iter()
        .map(|r| (r.code.as_str(), r.kind.as_str(), r.name.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("E02004156", "msoa", "Exeter 001"),
            ("E05003491", "ward", "Alphington Village"),
            ("E05003492", "ward", "Duryard and St James"),
            ("E10000008", "county", "Devon"),
            ("E12000009", "region", "South West"),
            ("E92000001", "country", "England"),
        ]
    );
    assert!(stored.iter().all(|r| r.source == "ons_names_codes"));
}

/// One Open Names entry in OS's 34-column layout.
fn entry(id: &str, name: &str, kind: &str, local: &str, x: u32, y: u32) -> String {
    format!(
        "{id},http://data.ordnancesurvey.co.uk/id/{id},{name},,,,{kind},{local},{x},{y},1000,25000,,,,,EX2,,,,,,,,Devon,,,South West,,England,,,,\r\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_names_keeps_the_populated_places_and_counts_the_rest() {
    let t = TestDb::new().await;
    let db = &t.db;
    let dir = tempfile::tempdir().unwrap();
    let tile = [
        entry(
            "osgb4000000074000001",
            "Alphington",
            "populatedPlace",
            "Suburban Area",
            291_300,
            90_000,
        ),
        entry(
            "osgb4000000074000002",
            "Fore Street",
            "transportNetwork",
            "Named Road",
            291_000,
            90_100,
        ),
        entry(
            "osgb4000000074000003",
            "EX2",
            "other",
            "Postcode",
            291_000,
            90_100,
        ),
        entry(
            "osgb4000000074000004",
            "Ide",
            "populatedPlace",
            "Village",
            289_700,
            90_500,
        ),
        "osgb4000000074000005,short\r\n".to_string(),
        entry(
            "osgb4000000074000006",
            "Nowhere",
            "populatedPlace",
            "Hamlet",
            800_000,
            1,
        ),
    ]
    .concat();
    let path = write(dir.path(), "SX99.csv", &tile);
    let r = load(db, Dataset::OpenNames, &path).await;
    assert_eq!(
        r.counts,
        RowCounts {
            read: 6,
            loaded: 2,
            rejected: 2,
            unchanged: 2,
            ..Default::default()
        }
    );
    assert_eq!(
        r.rejections.iter().map(|x| x.line).collect::<Vec<_>>(),
        [5, 6]
    );
    let places = areas::places_page(db, "", 10).await.unwrap();
    let got: Vec<(&str, &str, f64)> = places
        .iter()
        .map(|p| (p.name.as_str(), p.local_type.as_str(), p.x))
        .collect();
    assert_eq!(
        got,
        [
            ("Alphington", "Suburban Area", 291_300.0),
            ("Ide", "Village", 289_700.0)
        ]
    );
    assert_eq!(places[0].county_unitary.as_deref(), Some("Devon"));
    assert_eq!(places[0].source, "os_open_names");
    let again = load(db, Dataset::OpenNames, &path).await;
    assert_eq!(
        again.counts,
        RowCounts {
            read: 6,
            rejected: 2,
            unchanged: 4,
            ..Default::default()
        }
    );
    // An entry that stops being a populated place is deleted.
    let later = write(
        dir.path(),
        "SX99b.csv",
        &entry(
            "osgb4000000074000004",
            "Ide",
            "landform",
            "Hill",
            289_700,
            90_500,
        ),
    );
    assert_eq!(load(db, Dataset::OpenNames, &later).await.counts.deleted, 1);
    assert_eq!(areas::places_page(db, "", 10).await.unwrap().len(), 1);
}

const SQUARE: &str = "[[[-3.54,50.72],[-3.52,50.72],[-3.52,50.73],[-3.54,50.73],[-3.54,50.72]]]";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boundaries_of_every_kind_load_once() {
    let t = TestDb::new().await;
    let db = &t.db;
    let dir = tempfile::tempdir().unwrap();
    let features: Vec<String> = [
        ("MSOA21CD", "MSOA21NM", "E02004156", "Exeter 001"),
        ("WD23CD", "WD23NM", "E05003491", "Alphington"),
        ("CTY23CD", "CTY23NM", "E10000008", "Devon"),
        ("RGN22CD", "RGN22NM", "E12000009", "South West"),
        ("CTRY22CD", "CTRY22NM", "E92000001", "England"),
    ]
    .iter()
    .map(|(cd, nm, code, name)| {
        format!(
            r#"{{"type":"Feature","properties":{{"{cd}":"{code}","{nm}":"{name}"}},"geometry":{{"type":"Polygon","coordinates":{SQUARE}}}}}"#
        )
    })
    .chain([r#"{"type":"Feature","properties":{"PAR23CD":"E04000001"},"geometry":null}"#.to_string()])
    .collect();
    let path = write(
        dir.path(),
        "kinds.geojson",
        &format!(
            r#"{{"type":"FeatureCollection","features":[{}]}}"#,
            features.join(",")
        ),
    );
    let r = load(db, Dataset::Boundaries, &path).await;
    assert_eq!(
        (r.counts.read, r.counts.loaded, r.counts.rejected),
        (6, 5, 1)
    );
    assert_eq!(r.rejections[0].line, 6);
    let kinds: Vec<String> = areas::boundaries_page(db, "", 10)
        .await
        .unwrap()
        .into_iter()
        .map(|b| b.kind)
        .collect();
    assert_eq!(kinds, ["msoa", "ward", "county", "region", "country"]);
    let again = load(db, Dataset::Boundaries, &path).await;
    assert_eq!(
        again.counts,
        RowCounts {
            read: 6,
            rejected: 1,
            unchanged: 5,
            ..Default::default()
        }
    );
}

/// The real ward and LSOA boundaries of Exeter, the Isle of Wight and Merton: every feature
/// loads, and a second load changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_ward_and_lsoa_samples_load_with_every_row_accounted_for() {
    let data = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data"));
    if !data.is_dir() {
        eprintln!("../shared/data is absent: real boundary samples skipped");
        return;
    }
    let t = TestDb::new().await;
    let db = &t.db;
    let mut total = 0;
    for (lad, wards, lsoas) in [
        ("E07000041", 18, 74),
        ("E06000046", 39, 89),
        ("E09000024", 20, 124),
    ] {
        for (file, n) in [
            (
                format!("boundaries/martinjc_electoral_eng_wards_by_lad_{lad}.geojson"),
                wards,
            ),
            (
                format!("boundaries/martinjc_statistical_eng_lsoa_by_lad_{lad}.geojson"),
                lsoas,
            ),
        ] {
            let path = data.join(&file);
            let r = load(db, Dataset::Boundaries, &path).await;
            assert_eq!(
                (r.counts.read, r.counts.loaded, r.counts.rejected),
                (n, n, 0),
                "{file}"
            );
            let again = load(db, Dataset::Boundaries, &path).await;
            assert_eq!(again.counts, unchanged(n), "{file}");
            total += n;
        }
    }
    let mut stored = 0;
    let mut after = String::new();
    loop {
        let page = areas::boundaries_page(db, &after, 100).await.unwrap();
        let Some(last) = page.last() else { break };
        after = last.code.clone();
        stored += page.len() as i64;
    }
    assert_eq!(stored, total);
}
