//! The OpenStreetMap extract through its loader (a PBF written by the fixture generator's
//! encoder): buildings with their tags, rooftop PV marking the building it stands on, each
//! unreadable element rejected with its id and reason, and a second load changing nothing; and
//! the HMO licence register feed's malformed rows.

use crate::load_text;
use terrace_fixturegen::osm_pbf::{self, MemberType, Node, Relation, Way, tags};
use terrace_ingest::{Dataset, LoadReport, Progress, load_file};
use terrace_store::osm;
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

/// Square ring nodes (ids from `first`) of half side `h` around a BNG point.
fn square(first: i64, x: f64, y: f64, h: f64) -> Vec<Node> {
    [
        (x - h, y - h),
        (x + h, y - h),
        (x + h, y + h),
        (x - h, y + h),
    ]
    .iter()
    .enumerate()
    .map(|(i, (px, py))| {
        let (lon, lat) = terrace_geo::wgs84_from_bng(*px, *py).unwrap();
        Node {
            id: first + i as i64,
            lon,
            lat,
            tags: Vec::new(),
        }
    })
    .collect()
}

fn closed(nodes: &[Node]) -> Vec<i64> {
    let mut r: Vec<i64> = nodes.iter().map(|n| n.id).collect();
    r.push(r[0]);
    r
}

fn point(id: i64, x: f64, y: f64, t: &[(&str, &str)]) -> Node {
    let (lon, lat) = terrace_geo::wgs84_from_bng(x, y).unwrap();
    Node {
        id,
        lon,
        lat,
        tags: tags(t),
    }
}

const PV: [(&str, &str); 3] = [
    ("power", "generator"),
    ("generator:source", "solar"),
    ("location", "roof"),
];

/// The extract: six buildings (one a multipolygon with a hole), two PV elements on buildings,
/// and five elements that cannot be read.
fn extract() -> Vec<u8> {
    let a = square(10, 260000.0, 80000.0, 6.0);
    let b = square(20, 260100.0, 80000.0, 5.0);
    let c = square(30, 260200.0, 80000.0, 5.0);
    let d = square(40, 260300.0, 80000.0, 5.0);
    let e = square(50, 260400.0, 80000.0, 8.0);
    let pv_way = square(60, 260402.0, 80002.0, 1.0);
    let outer = square(70, 260500.0, 80000.0, 10.0);
    let inner = square(80, 260500.0, 80000.0, 3.0);
    let mut nodes = vec![
        point(900, 260001.0, 80001.0, &PV),
        point(901, 261000.0, 81000.0, &PV),
        point(950, 260600.0, 80000.0, &[("building", "yes")]),
    ];
    for s in [&a, &b, &c, &d, &e, &pv_way, &outer, &inner] {
        nodes.extend(s.iter().cloned());
    }
    let mut unclosed = closed(&d);
    unclosed.pop();
    let ways = vec![
        Way {
            id: 1,
            refs: closed(&a),
            tags: tags(&[
                ("building", "house"),
                ("building:levels", "2"),
                ("roof:shape", "gabled"),
                ("roof:material", "slate"),
                ("height", "12 m"),
            ]),
        },
        Way {
            id: 2,
            refs: closed(&b),
            tags: tags(&[("building", "yes"), ("height", "40 ft")]),
        },
        Way {
            id: 3,
            refs: closed(&c),
            tags: tags(&[("building", "yes"), ("building:levels", "2.5")]),
        },
        Way {
            id: 4,
            refs: unclosed,
            tags: tags(&[("building", "yes")]),
        },
        Way {
            id: 5,
            refs: closed(&e),
            tags: tags(&[("building", "commercial"), ("height", "7.5")]),
        },
        Way {
            id: 6,
            refs: closed(&pv_way),
            tags: tags(&PV),
        },
        Way {
            id: 8,
            refs: closed(&outer),
            tags: Vec::new(),
        },
        Way {
            id: 9,
            refs: closed(&inner),
            tags: Vec::new(),
        },
        Way {
            id: 10,
            refs: vec![10, 11, 12, 999_999, 10],
            tags: tags(&[("building", "no")]),
        },
    ];
    let relations = vec![Relation {
        id: 7,
        members: vec![
            (MemberType::Way, 8, "outer".to_string()),
            (MemberType::Way, 9, "inner".to_string()),
        ],
        tags: tags(&[
            ("type", "multipolygon"),
            ("building", "apartments"),
            ("building:levels", "4"),
        ]),
    }];
    osm_pbf::encode(&nodes, &ways, &relations).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extract_loads_its_buildings_and_rooftop_pv_rejects_what_it_cannot_read_and_loads_twice_alike()
 {
    let t = TestDb::new().await;
    let db = &t.db;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("extract.osm.pbf");
    std::fs::write(&path, extract()).unwrap();
    assert_eq!(terrace_ingest::formats::sniff(&path), Some("osm_buildings"));
    let load = || async {
        load_file(
            db,
            Dataset::OsmBuildings,
            &path,
            Default::default(),
            &mut Progress::quiet(),
        )
        .await
        .unwrap()
    };
    let first = load().await;
    accounted(&first);
    // Rows: 2 PV nodes, the building node, ways 1-6, the relation (way 10 is building=no).
    let c = &first.counts;
    assert_eq!(
        (c.read, c.loaded, c.rejected),
        (10, 5, 5),
        "{:?}",
        first.rejections
    );
    let reasons: Vec<String> = first.rejections.iter().map(|r| r.reason.clone()).collect();
    for (element, word) in [
        ("node/901", "stands in no building"),
        ("node/950", "as a node"),
        ("way/2", "feet"),
        ("way/3", "building:levels"),
        ("way/4", "not closed"),
    ] {
        assert!(
            reasons
                .iter()
                .any(|r| r.starts_with(element) && r.contains(word)),
            "{element} {word}: {reasons:?}"
        );
    }
    // Each rejection's line is the element's position in the file: way/2 follows the 3 tagged
    // nodes, the 32 ring nodes and way/1.
    let way2 = first
        .rejections
        .iter()
        .find(|r| r.reason.starts_with("way/2"))
        .unwrap();
    assert_eq!(way2.line, 3 + 32 + 2);
    assert!(way2.file.ends_with("extract.osm.pbf"));

    let keys: Vec<String> = ["way/1", "way/5", "way/6", "node/900", "relation/7"]
        .map(String::from)
        .to_vec();
    let mut rows = osm::osm_by_key(db, &keys).await.unwrap();
    rows.sort_by(|a, b| a.osm_key.cmp(&b.osm_key));
    let by = |k: &str| rows.iter().find(|r| r.osm_key == k).unwrap();
    let w1 = by("way/1");
    assert_eq!(w1.kind, osm::KIND_BUILDING);
    assert_eq!(w1.source, "osm");
    assert_eq!(
        (
            w1.height_m,
            w1.levels,
            w1.roof_shape.as_deref(),
            w1.roof_material.as_deref()
        ),
        (Some(12.0), Some(2), Some("gabled"), Some("slate"))
    );
    assert_eq!(w1.rooftop_pv.as_deref(), Some("node/900"));
    assert!(
        (w1.x - 260000.0).abs() < 0.5 && (w1.y - 80000.0).abs() < 0.5,
        "{w1:?}"
    );
    assert!((w1.area_m2.unwrap() - 144.0).abs() < 1.0);
    assert_eq!(by("node/900").rooftop_pv.as_deref(), Some("way/1"));
    assert_eq!(by("node/900").kind, osm::KIND_ROOFTOP_PV);
    assert_eq!(by("way/5").rooftop_pv.as_deref(), Some("way/6"));
    assert_eq!(by("way/5").height_m, Some(7.5));
    assert_eq!(by("way/5").levels, None);
    let rel = by("relation/7");
    assert_eq!(
        (rel.levels, rel.building.as_deref()),
        (Some(4), Some("apartments"))
    );
    // 20 x 20 m less the 6 x 6 m hole.
    assert!((rel.area_m2.unwrap() - 364.0).abs() < 2.0, "{rel:?}");

    let again = load().await;
    accounted(&again);
    let c = &again.counts;
    assert_eq!((c.loaded, c.updated, c.unchanged, c.rejected), (0, 0, 5, 5));
    assert!(osm::osm_loaded(db).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_is_not_an_extract_fails_as_a_whole() {
    let t = TestDb::new().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.osm.pbf");
    std::fs::write(&path, b"\0\0\0\x0dnot a pbf at all").unwrap();
    let r = load_file(
        &t.db,
        Dataset::OsmBuildings,
        &path,
        Default::default(),
        &mut Progress::quiet(),
    )
    .await;
    assert!(r.is_err());
}

const HMO: &str = "licence_number,authority,address,postcode,uprn,storeys,max_occupants,households,licence_start,licence_end\n\
HMO/1,E06009901,\"1 High Street, Exampleton\",XT1 1AB,990000000001,3,6,5,2024-01-01,2029-01-01\n\
HMO/2,E06009901,2 High Street,XT1 1AB,,2,5,,2023-06-01,\n\
HMO/3,E06009901,3 High Street,XT1 1AB,,2,3,4,,\n\
HMO/4,Exampleton,4 High Street,XT1 1AB,,,,,,\n\
HMO/5,E06009901,5 High Street,XT1 1AB,,,,,2025-01-01,2024-01-01\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hmo_feed_rejects_each_malformed_row_and_loads_twice_alike() {
    let t = TestDb::new().await;
    let db = &t.db;
    let first = load_text(db, Dataset::HmoLicences, "hmo.csv", HMO).await;
    accounted(&first);
    assert_eq!((first.counts.loaded, first.counts.rejected), (2, 3));
    let lines: Vec<u64> = first.rejections.iter().map(|r| r.line).collect();
    assert_eq!(lines, vec![4, 5, 6]);
    for (r, word) in first.rejections.iter().zip(["households", "GSS", "before"]) {
        assert!(r.reason.contains(word), "{r}");
    }
    let rows = osm::hmo_by_key(db, &["E06009901|HMO/1".to_string()])
        .await
        .unwrap();
    assert_eq!(rows[0].uprn, Some(990000000001));
    assert_eq!(rows[0].match_method.as_deref(), Some("feed"));
    assert_eq!(
        (rows[0].max_occupants, rows[0].households),
        (Some(6), Some(5))
    );
    assert_eq!(osm::unmatched_hmo(db, "", 10).await.unwrap().len(), 1);
    let again = load_text(db, Dataset::HmoLicences, "hmo.csv", HMO).await;
    assert_eq!(
        (
            again.counts.loaded,
            again.counts.updated,
            again.counts.unchanged
        ),
        (0, 0, 2)
    );
}
