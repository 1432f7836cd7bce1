//! An OpenStreetMap extract (`.osm.pbf`, ODbL: "© OpenStreetMap contributors"), read with the
//! `osmpbf` crate, for its buildings and rooftop solar panels.
//!
//! The rows are elements of two kinds:
//! - **buildings**: closed ways tagged `building=*` (any value but `no`), and `type=multipolygon`
//!   relations tagged `building=*` whose `outer` and `inner` members are each a closed way (a
//!   ring made of several ways is not read); with `height` (metres: `12`, `12.5`, `12 m`, `12m`;
//!   feet and anything else are refused, never converted), `building:levels` (a whole number from
//!   0 to 200), `roof:shape` and `roof:material` as tagged;
//! - **rooftop PV**: nodes, closed ways or unclosed ways tagged `generator:source=solar` with
//!   `location=roof`; each marks the smallest building of the extract containing its position
//!   (a node's position, a way's centroid). A building itself tagged so is its own mark.
//!
//! Geometry is read in three passes over the file (the tagged ways and relations; the untagged
//! ways a relation names; the nodes those ways use), keeping only the nodes needed, and returned
//! in BNG metres. The line of a row is the element's 1-based position in the file (nodes, ways,
//! then relations, as the file orders them); every rejection names the element (`way/123`).
//!
//! Rejections: a building mapped as a node (no outline), an unclosed building way, a way that
//! refers to a node missing from the extract, a multipolygon with an unclosed member or no outer
//! ring, a position outside the BNG transformation, an unreadable `height` or `building:levels`,
//! and a rooftop PV element standing in no building of the extract.

use super::{Parsed, Rejection};
use geo::{Area, Centroid, Contains, LineString, MultiPolygon, Point, Polygon};
use osmpbf::{Element, ElementReader, RelMemberType};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;
use std::path::Path;
use terrace_geo::PolygonIndex;

/// What an element is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OsmKind {
    Building,
    RooftopPv,
}

/// One building or rooftop PV element.
#[derive(Debug, Clone, PartialEq)]
pub struct OsmElement {
    /// `node/9`, `way/123` or `relation/5`.
    pub key: String,
    pub kind: OsmKind,
    /// The `building=*` value.
    pub building: Option<String>,
    /// A building's centroid, a PV element's position; BNG metres.
    pub point: (f64, f64),
    /// A building's outline (BNG metres); None for a PV element that is not a building.
    pub outline: Option<MultiPolygon<f64>>,
    pub height_m: Option<f64>,
    pub levels: Option<i32>,
    pub roof_shape: Option<String>,
    pub roof_material: Option<String>,
    /// On a building, the PV element marking it; on a PV element, the building it stands on.
    pub rooftop_pv: Option<String>,
}

/// Whether the first bytes of a file are an OSM PBF (a BlobHeader of type `OSMHeader`).
pub fn is_pbf(head: &[u8]) -> bool {
    head.len() > 16
        && head[4..head.len().min(24)]
            .windows(9)
            .any(|w| w == b"OSMHeader")
}

/// A height tag in metres: `12`, `12.5`, `12 m`, `12m`, `12 metres`; from 0 (exclusive) to 1,000.
pub fn parse_height(v: &str) -> Result<f64, String> {
    let t = v.trim();
    let lower = t.to_ascii_lowercase();
    if lower.contains('\'') || lower.contains('"') || lower.contains("ft") || lower.contains("feet")
    {
        return Err(format!("height {v:?} is in feet: only metres are read"));
    }
    let number = ["metres", "meters", "m"]
        .iter()
        .find_map(|u| lower.strip_suffix(u))
        .unwrap_or(&lower)
        .trim();
    let ok = !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && number.bytes().filter(|b| *b == b'.').count() <= 1;
    match number.parse::<f64>() {
        Ok(h) if ok && h > 0.0 && h <= 1_000.0 => Ok(h),
        Ok(_) | Err(_) => Err(format!(
            "height {v:?} is not a number of metres from 0 to 1,000"
        )),
    }
}

/// A `building:levels` tag: a whole number from 0 to 200.
pub fn parse_levels(v: &str) -> Result<i32, String> {
    let t = v.trim();
    match t.parse::<i32>() {
        Ok(n) if (0..=200).contains(&n) => Ok(n),
        Ok(_) | Err(_) => Err(format!(
            "building:levels {v:?} is not a whole number from 0 to 200"
        )),
    }
}

type Tags = BTreeMap<String, String>;

fn tags<'a>(it: impl Iterator<Item = (&'a str, &'a str)>) -> Tags {
    it.map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn is_building(t: &Tags) -> bool {
    t.get("building")
        .is_some_and(|b| !b.trim().is_empty() && !b.eq_ignore_ascii_case("no"))
}

fn is_rooftop_pv(t: &Tags) -> bool {
    let eq = |k: &str, v: &str| t.get(k).is_some_and(|x| x.trim().eq_ignore_ascii_case(v));
    eq("generator:source", "solar") && eq("location", "roof")
}

/// A tagged element kept from the first pass.
struct Kept {
    ordinal: u64,
    key: String,
    tags: Tags,
    shape: Shape,
}

enum Shape {
    /// A node's position, WGS84 (lon, lat).
    Node(f64, f64),
    Way(Vec<i64>),
    /// (outer ways, inner ways).
    Relation(Vec<i64>, Vec<i64>),
}

fn reader(path: &Path) -> io::Result<ElementReader<std::io::BufReader<std::fs::File>>> {
    ElementReader::from_path(path).map_err(|e| io::Error::other(format!("{}: {e}", path.display())))
}

fn pbf_error(path: &Path, e: osmpbf::Error) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: not a readable OSM PBF extract: {e}", path.display()),
    )
}

pub fn read(path: &Path) -> io::Result<std::vec::IntoIter<Parsed<OsmElement>>> {
    let file = path.display().to_string();
    // Pass 1: the tagged elements.
    let mut kept: Vec<Kept> = Vec::new();
    let mut ordinal = 0u64;
    reader(path)?
        .for_each(|e| {
            ordinal += 1;
            let (key, t, shape) = match e {
                Element::Node(n) => (
                    format!("node/{}", n.id()),
                    tags(n.tags()),
                    Shape::Node(n.lon(), n.lat()),
                ),
                Element::DenseNode(n) => (
                    format!("node/{}", n.id()),
                    tags(n.tags()),
                    Shape::Node(n.lon(), n.lat()),
                ),
                Element::Way(w) => (
                    format!("way/{}", w.id()),
                    tags(w.tags()),
                    Shape::Way(w.refs().collect()),
                ),
                Element::Relation(r) => {
                    let t = tags(r.tags());
                    let (mut outer, mut inner) = (Vec::new(), Vec::new());
                    for m in r.members() {
                        if m.member_type == RelMemberType::Way {
                            match m.role() {
                                Ok("inner") => inner.push(m.member_id),
                                Ok(_) | Err(_) => outer.push(m.member_id),
                            }
                        }
                    }
                    (
                        format!("relation/{}", r.id()),
                        t,
                        Shape::Relation(outer, inner),
                    )
                }
            };
            let multipolygon = matches!(shape, Shape::Relation(..))
                && t.get("type").is_some_and(|v| v == "multipolygon");
            let wanted = match shape {
                Shape::Relation(..) => multipolygon && is_building(&t),
                Shape::Node(..) | Shape::Way(..) => is_building(&t) || is_rooftop_pv(&t),
            };
            if wanted {
                kept.push(Kept {
                    ordinal,
                    key,
                    tags: t,
                    shape,
                });
            }
        })
        .map_err(|e| pbf_error(path, e))?;
    // Pass 2: the member ways of the relations kept.
    let members: HashSet<i64> = kept
        .iter()
        .flat_map(|k| match &k.shape {
            Shape::Relation(o, i) => o.iter().chain(i).copied().collect(),
            Shape::Node(..) | Shape::Way(..) => Vec::new(),
        })
        .collect();
    let mut ways: HashMap<i64, Vec<i64>> = HashMap::new();
    if !members.is_empty() {
        reader(path)?
            .for_each(|e| {
                if let Element::Way(w) = e
                    && members.contains(&w.id())
                {
                    ways.insert(w.id(), w.refs().collect());
                }
            })
            .map_err(|e| pbf_error(path, e))?;
    }
    // Pass 3: the nodes those ways use.
    let mut needed: HashSet<i64> = ways.values().flatten().copied().collect();
    for k in &kept {
        if let Shape::Way(refs) = &k.shape {
            needed.extend(refs.iter().copied());
        }
    }
    let mut nodes: HashMap<i64, (f64, f64)> = HashMap::new();
    if !needed.is_empty() {
        reader(path)?
            .for_each(|e| match e {
                Element::Node(n) if needed.contains(&n.id()) => {
                    nodes.insert(n.id(), (n.lon(), n.lat()));
                }
                Element::DenseNode(n) if needed.contains(&n.id()) => {
                    nodes.insert(n.id(), (n.lon(), n.lat()));
                }
                Element::Node(_)
                | Element::DenseNode(_)
                | Element::Way(_)
                | Element::Relation(_) => {}
            })
            .map_err(|e| pbf_error(path, e))?;
    }
    Ok(assemble(&file, kept, &ways, &nodes).into_iter())
}

/// A way's positions in BNG metres.
fn ring(refs: &[i64], nodes: &HashMap<i64, (f64, f64)>) -> Result<LineString<f64>, String> {
    let mut out = Vec::with_capacity(refs.len());
    for r in refs {
        let &(lon, lat) = nodes
            .get(r)
            .ok_or_else(|| format!("refers to node/{r}, which is not in the extract"))?;
        let (x, y) = terrace_geo::bng_from_wgs84(lon, lat)
            .ok_or_else(|| format!("node/{r} lies outside the BNG transformation"))?;
        out.push((x, y));
    }
    Ok(LineString::from(out))
}

fn closed(refs: &[i64]) -> bool {
    refs.len() >= 4 && refs.first() == refs.last()
}

fn outline(
    k: &Kept,
    ways: &HashMap<i64, Vec<i64>>,
    nodes: &HashMap<i64, (f64, f64)>,
) -> Result<Option<MultiPolygon<f64>>, String> {
    match &k.shape {
        Shape::Node(..) => Ok(None),
        Shape::Way(refs) if closed(refs) => Ok(Some(MultiPolygon(vec![Polygon::new(
            ring(refs, nodes)?,
            vec![],
        )]))),
        Shape::Way(_) => Ok(None),
        Shape::Relation(outer, inner) => {
            let member = |id: &i64| -> Result<LineString<f64>, String> {
                let refs = ways
                    .get(id)
                    .ok_or_else(|| format!("member way/{id} is not in the extract"))?;
                if !closed(refs) {
                    return Err(format!(
                        "member way/{id} is not a closed ring (rings made of several ways are not read)"
                    ));
                }
                ring(refs, nodes)
            };
            let mut polygons: Vec<(Polygon<f64>, Vec<LineString<f64>>)> = Vec::new();
            for o in outer {
                polygons.push((Polygon::new(member(o)?, vec![]), Vec::new()));
            }
            if polygons.is_empty() {
                return Err("multipolygon with no outer way".to_string());
            }
            for i in inner {
                let hole = member(i)?;
                let first = hole.0.first().copied().map(Point::from);
                if let Some(p) = polygons
                    .iter_mut()
                    .find(|(o, _)| first.is_some_and(|f| o.contains(&f)))
                {
                    p.1.push(hole);
                }
            }
            Ok(Some(MultiPolygon(
                polygons
                    .into_iter()
                    .map(|(o, holes)| Polygon::new(o.exterior().clone(), holes))
                    .collect(),
            )))
        }
    }
}

fn element(
    k: &Kept,
    ways: &HashMap<i64, Vec<i64>>,
    nodes: &HashMap<i64, (f64, f64)>,
) -> Result<OsmElement, String> {
    let building = is_building(&k.tags);
    let pv = is_rooftop_pv(&k.tags);
    let shape = outline(k, ways, nodes)?;
    let kind = if building {
        if shape.is_none() {
            return Err(match &k.shape {
                Shape::Node(..) => {
                    "a building mapped as a node has no outline to link to a footprint".to_string()
                }
                Shape::Way(_) | Shape::Relation(..) => "building outline is not closed".to_string(),
            });
        }
        OsmKind::Building
    } else {
        OsmKind::RooftopPv
    };
    let point = match (&shape, &k.shape) {
        (Some(mp), _) => mp
            .centroid()
            .map(|c| (c.x(), c.y()))
            .ok_or("outline has no centroid")?,
        (None, Shape::Node(lon, lat)) => terrace_geo::bng_from_wgs84(*lon, *lat)
            .ok_or("the node lies outside the BNG transformation")?,
        (None, Shape::Way(refs)) => ring(refs, nodes)?
            .centroid()
            .map(|c| (c.x(), c.y()))
            .ok_or("the way has no centroid")?,
        (None, Shape::Relation(..)) => return Err("multipolygon has no outline".to_string()),
    };
    let text = |tag: &str| {
        k.tags
            .get(tag)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let (height_m, levels) = if building {
        (
            text("height").map(|v| parse_height(&v)).transpose()?,
            text("building:levels")
                .map(|v| parse_levels(&v))
                .transpose()?,
        )
    } else {
        (None, None)
    };
    Ok(OsmElement {
        key: k.key.clone(),
        kind,
        building: if building { text("building") } else { None },
        point,
        outline: shape,
        height_m,
        levels,
        roof_shape: if building { text("roof:shape") } else { None },
        roof_material: if building {
            text("roof:material")
        } else {
            None
        },
        rooftop_pv: (building && pv).then(|| k.key.clone()),
    })
}

/// Builds each kept element, then marks the buildings the rooftop PV elements stand on.
fn assemble(
    file: &str,
    kept: Vec<Kept>,
    ways: &HashMap<i64, Vec<i64>>,
    nodes: &HashMap<i64, (f64, f64)>,
) -> Vec<Parsed<OsmElement>> {
    let reject = |k: &Kept, reason: String| Rejection {
        file: file.to_string(),
        line: k.ordinal,
        reason: format!("{}: {reason}", k.key),
    };
    let mut out: Vec<Parsed<OsmElement>> = kept
        .iter()
        .map(|k| {
            element(k, ways, nodes)
                .map(|e| (k.ordinal, e))
                .map_err(|r| reject(k, r))
        })
        .collect();
    // The buildings by outline, for the PV elements.
    let index = PolygonIndex::build(
        out.iter()
            .enumerate()
            .filter_map(|(i, p)| match p {
                Ok((_, e)) if e.kind == OsmKind::Building => e.outline.clone().map(|o| (o, i)),
                Ok(_) | Err(_) => None,
            })
            .collect(),
    );
    let area = |i: usize| match &out[i] {
        Ok((_, e)) => e
            .outline
            .as_ref()
            .map_or(f64::INFINITY, |o| o.unsigned_area()),
        Err(_) => f64::INFINITY,
    };
    let mut marks: Vec<(usize, usize)> = Vec::new();
    let mut unmarked: Vec<usize> = Vec::new();
    for (i, p) in out.iter().enumerate() {
        let Ok((_, e)) = p else { continue };
        if e.kind != OsmKind::RooftopPv {
            continue;
        }
        let holder = index
            .containing(e.point)
            .into_iter()
            .copied()
            .min_by(|&a, &b| area(a).total_cmp(&area(b)).then(a.cmp(&b)));
        match holder {
            Some(b) => marks.push((i, b)),
            None => unmarked.push(i),
        }
    }
    for (pv, b) in marks {
        let pv_key = match &out[pv] {
            Ok((_, e)) => e.key.clone(),
            Err(_) => continue,
        };
        let b_key = match &mut out[b] {
            Ok((_, e)) => {
                // One mark per building: the first PV element in key order.
                if e.rooftop_pv.as_ref().is_none_or(|m| *m > pv_key) {
                    e.rooftop_pv = Some(pv_key.clone());
                }
                e.key.clone()
            }
            Err(_) => continue,
        };
        if let Ok((_, e)) = &mut out[pv] {
            e.rooftop_pv = Some(b_key);
        }
    }
    for i in unmarked {
        let k = &kept[i];
        out[i] = Err(reject(
            k,
            "rooftop PV (generator:source=solar, location=roof) stands in no building of the extract"
                .to_string(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heights_in_metres_only() {
        for (v, h) in [
            ("12", 12.0),
            ("12 m", 12.0),
            ("12.5", 12.5),
            ("7m", 7.0),
            (" 9 metres", 9.0),
        ] {
            assert_eq!(parse_height(v), Ok(h), "{v}");
        }
        for v in [
            "40 ft", "12'6\"", "tall", "", "0", "-3", "1.2.3", "12,5", "2000",
        ] {
            let e = parse_height(v).unwrap_err();
            assert!(e.contains("height"), "{v}: {e}");
        }
        assert!(parse_height("40 ft").unwrap_err().contains("feet"));
        assert_eq!(parse_levels("3"), Ok(3));
        assert!(parse_levels("2.5").is_err());
        assert!(parse_levels("many").is_err());
    }
}
