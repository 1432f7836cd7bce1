//! The fixture world's OpenStreetMap extract (`osm/fixture.osm.pbf`, written with
//! [`crate::osm_pbf`]) and the operator's HMO licence register feed
//! (`buildings/hmo_licences.csv`), both over the land plots' buildings.
//!
//! The extract maps, over the buildings the building-attributes feed leaves out (the odd ones),
//! the first twelve as closed ways 0.2 m inside their footprints, with `building:levels`,
//! `roof:shape`, `roof:material` and a `height` in metres on some; the fifth's height is in feet
//! (refused with its element and reason); the seventh is a multipolygon relation around an
//! untagged outer way. A rooftop PV node stands on the first (the sample) and a small PV way on
//! the third.
//!
//! The HMO feed licenses the first five of those houses (the OSM sample first, so one property
//! has every source): two with their UPRN, three by address and postcode only (for the address
//! matcher), then a row with more households than occupants (refused).

use crate::osm_pbf::{self, MemberType, Node, Relation, Way, tags};
use crate::out::{FileStat, write_whole};
use std::io;
use std::path::Path;

pub const OSM_FILE: &str = "osm/fixture.osm.pbf";
pub const HMO_FILE: &str = "buildings/hmo_licences.csv";
const HMO_HEADER: &str = "licence_number,authority,address,postcode,uprn,storeys,max_occupants,households,licence_start,licence_end";

/// A building the extract and the feed may describe: its UPRN, centre (BNG), half side, and
/// address (text, postcode) and authority.
pub struct Building {
    pub uprn: u64,
    pub x: f64,
    pub y: f64,
    pub half: f64,
    pub address: String,
    pub postcode: String,
    pub lad_code: String,
}

/// What the OSM and HMO tests pin.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct OsmCases {
    pub file: String,
    /// Building and rooftop PV elements in the extract (the rows a load reads).
    pub elements: u64,
    /// The sample building: its UPRN, element, tags and the PV node on it.
    pub sample_uprn: u64,
    pub sample_element: String,
    pub sample_levels: i32,
    pub sample_height_m: f64,
    pub sample_roof_shape: String,
    pub sample_roof_material: String,
    pub sample_pv_element: String,
    /// The building a PV way stands on.
    pub pv_way_uprn: u64,
    pub pv_way_element: String,
    /// The multipolygon relation's building.
    pub relation_uprn: u64,
    pub relation_element: String,
    /// The building whose height is in feet: its element, line and reason.
    pub bad_height_element: String,
    pub bad_height_line: u64,
    pub bad_height_reason: String,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct HmoCases {
    pub file: String,
    /// Rows written, the malformed one included.
    pub rows: usize,
    /// A licence with its UPRN, and one left to the address matcher.
    pub given_uprn: u64,
    pub matched_uprn: u64,
    pub max_occupants: i32,
    pub households: i32,
    pub bad_line: u64,
    pub bad_reason: String,
}

fn lonlat(x: f64, y: f64) -> io::Result<(f64, f64)> {
    crate::world::lonlat(x, y).ok_or_else(|| io::Error::other("lonlat"))
}

/// Writes the extract over `buildings` (the odd ones of the attributes feed's order).
pub fn write_osm(out_dir: &Path, buildings: &[&Building]) -> io::Result<(FileStat, OsmCases)> {
    let mut cases = OsmCases {
        file: OSM_FILE.into(),
        ..OsmCases::default()
    };
    let mut tagged_nodes: Vec<Node> = Vec::new();
    let mut nodes: Vec<Node> = Vec::new();
    let mut ways: Vec<Way> = Vec::new();
    let mut relations: Vec<Relation> = Vec::new();
    let mut next_node = 1_000_001i64;
    let mut ring =
        |nodes: &mut Vec<Node>, x0: f64, y0: f64, x1: f64, y1: f64| -> io::Result<Vec<i64>> {
            let mut refs = Vec::new();
            for (x, y) in [(x0, y0), (x1, y0), (x1, y1), (x0, y1)] {
                let (lon, lat) = lonlat(x, y)?;
                nodes.push(Node {
                    id: next_node,
                    lon,
                    lat,
                    tags: Vec::new(),
                });
                refs.push(next_node);
                next_node += 1;
            }
            refs.push(refs[0]);
            Ok(refs)
        };
    let shapes = ["gabled", "hipped", "flat"];
    let materials = ["slate", "roof_tiles", "concrete"];
    let mut bad_way_index = None;
    for (k, b) in buildings.iter().take(12).enumerate() {
        let inset = b.half - 0.2;
        let refs = ring(
            &mut nodes,
            b.x - inset,
            b.y - inset,
            b.x + inset,
            b.y + inset,
        )?;
        let levels = 1 + (k % 3) as i32;
        let mut t = vec![
            ("building", "house".to_string()),
            ("building:levels", levels.to_string()),
        ];
        if k % 2 == 0 {
            t.push(("roof:shape", shapes[k % 3].to_string()));
            t.push(("roof:material", materials[k % 3].to_string()));
        }
        let height = 3.0 * f64::from(levels) + 1.5;
        match k {
            0 => t.push(("height", format!("{height} m"))),
            4 => t.push(("height", "40 ft".to_string())),
            _ if k % 3 == 0 => t.push(("height", format!("{height}"))),
            _ => {}
        }
        let pairs: Vec<(&str, &str)> = t.iter().map(|(a, v)| (*a, v.as_str())).collect();
        let id = 2_000_001 + k as i64;
        if k == 6 {
            // A multipolygon relation around an untagged outer way.
            ways.push(Way {
                id,
                refs,
                tags: Vec::new(),
            });
            let mut rt = tags(&[("type", "multipolygon")]);
            rt.extend(tags(&pairs));
            let rid = 3_000_001;
            relations.push(Relation {
                id: rid,
                members: vec![(MemberType::Way, id, "outer".to_string())],
                tags: rt,
            });
            cases.relation_uprn = b.uprn;
            cases.relation_element = format!("relation/{rid}");
            cases.elements += 1;
            continue;
        }
        ways.push(Way {
            id,
            refs,
            tags: tags(&pairs),
        });
        cases.elements += 1;
        if k == 4 {
            bad_way_index = Some(ways.len() - 1);
            cases.bad_height_element = format!("way/{id}");
            cases.bad_height_reason = "height \"40 ft\" is in feet: only metres are read".into();
        }
        if k == 0 {
            cases.sample_uprn = b.uprn;
            cases.sample_element = format!("way/{id}");
            cases.sample_levels = levels;
            cases.sample_height_m = height;
            cases.sample_roof_shape = shapes[0].into();
            cases.sample_roof_material = materials[0].into();
            let (lon, lat) = lonlat(b.x + 1.0, b.y + 1.0)?;
            let pv = 900_001;
            tagged_nodes.push(Node {
                id: pv,
                lon,
                lat,
                tags: tags(&[
                    ("power", "generator"),
                    ("generator:source", "solar"),
                    ("generator:method", "photovoltaic"),
                    ("location", "roof"),
                ]),
            });
            cases.sample_pv_element = format!("node/{pv}");
            cases.elements += 1;
        }
        if k == 2 {
            // A small PV array mapped as a closed way on the roof.
            let refs = ring(&mut nodes, b.x - 2.0, b.y - 2.0, b.x - 0.5, b.y - 1.0)?;
            let pid = 2_100_001;
            ways.push(Way {
                id: pid,
                refs,
                tags: tags(&[
                    ("power", "generator"),
                    ("generator:source", "solar"),
                    ("location", "roof"),
                ]),
            });
            cases.pv_way_uprn = b.uprn;
            cases.pv_way_element = format!("way/{pid}");
            cases.elements += 1;
        }
    }
    // The reader numbers elements in file order: tagged nodes, dense nodes, ways, relations.
    if let Some(i) = bad_way_index {
        cases.bad_height_line = (tagged_nodes.len() + nodes.len() + i + 1) as u64;
    }
    let mut all_nodes = tagged_nodes;
    all_nodes.extend(nodes);
    let bytes = osm_pbf::encode(&all_nodes, &ways, &relations)?;
    let path = out_dir.join(OSM_FILE);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, &bytes)?;
    Ok((
        FileStat {
            rel: OSM_FILE.into(),
            rows: cases.elements,
            bytes: bytes.len() as u64,
        },
        cases,
    ))
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Writes the HMO feed over the first five of `buildings` (the OSM sample first).
pub fn write_hmo(out_dir: &Path, buildings: &[&Building]) -> io::Result<(FileStat, HmoCases)> {
    let mut text = format!("{HMO_HEADER}\n");
    let mut cases = HmoCases {
        file: HMO_FILE.into(),
        ..HmoCases::default()
    };
    for (k, b) in buildings.iter().take(5).enumerate() {
        let with_uprn = k < 2;
        let occupants = 5 + k as i32;
        let households = 4 + k as i32;
        let _ = std::fmt::Write::write_fmt(
            &mut text,
            format_args!(
                "HMO/{:04},{},{},{},{},{},{occupants},{households},2024-0{}-01,2029-0{}-01\n",
                101 + k,
                b.lad_code,
                csv_field(&b.address),
                b.postcode,
                if with_uprn {
                    b.uprn.to_string()
                } else {
                    String::new()
                },
                2 + k % 2,
                1 + k,
                1 + k,
            ),
        );
        cases.rows += 1;
        if k == 0 {
            cases.given_uprn = b.uprn;
            cases.max_occupants = occupants;
            cases.households = households;
        }
        if k == 2 {
            cases.matched_uprn = b.uprn;
        }
    }
    if let Some(b) = buildings.get(5) {
        text.push_str(&format!(
            "HMO/0999,{},{},{},,2,3,4,2024-01-01,2029-01-01\n",
            b.lad_code,
            csv_field(&b.address),
            b.postcode
        ));
        cases.rows += 1;
        cases.bad_line = cases.rows as u64 + 1;
        cases.bad_reason = "households 4 is more than max_occupants 3".into();
    }
    let bytes = write_whole(out_dir, HMO_FILE, &text)?;
    Ok((
        FileStat {
            rel: HMO_FILE.into(),
            rows: cases.rows as u64,
            bytes,
        },
        cases,
    ))
}
