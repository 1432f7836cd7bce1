//! A small OpenStreetMap PBF encoder (the `.osm.pbf` format readers such as `osmpbf` read), for
//! the fixture world's extract and for tests. It writes what the format needs and no more:
//!
//! - the file is a sequence of blobs, each a 4-byte big-endian length, a `BlobHeader`
//!   (`type` 1, `datasize` 3) and a `Blob` (`raw_size` 2, `zlib_data` 3, zlib by `flate2`);
//! - the first blob is an `OSMHeader` (`HeaderBlock`: `bbox` 1 in nanodegrees, the
//!   `required_features` 4 `OsmSchema-V0.6` and `DenseNodes`, `writingprogram` 16);
//! - then `OSMData` blobs (`PrimitiveBlock`: `stringtable` 1 whose entry 0 is empty, one
//!   `primitivegroup` 2, `granularity` 17 of 100 nanodegrees): untagged nodes as `DenseNodes`
//!   (ids, latitudes and longitudes delta-coded, `keys_vals` 10 with a 0 after each node),
//!   tagged nodes as plain `Node`s, `Way`s with `refs` 8 delta-coded, and `Relation`s with
//!   `roles_sid` 8, `memids` 9 delta-coded and `types` 10; one block each for nodes, ways and
//!   relations, in that order, as sorted extracts are.
//!
//! Protobuf as written: varints, `sint` fields zigzag-coded, repeated numbers packed. The output
//! is a pure function of the elements given (positions rounded to 1e-7 degrees).

use flate2::Compression;
use flate2::write::ZlibEncoder;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// A node: WGS84 degrees.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub id: i64,
    pub lon: f64,
    pub lat: f64,
    pub tags: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Way {
    pub id: i64,
    pub refs: Vec<i64>,
    pub tags: Vec<(String, String)>,
}

/// The kind of a relation member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberType {
    Node = 0,
    Way = 1,
    Relation = 2,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Relation {
    pub id: i64,
    /// (type, id, role).
    pub members: Vec<(MemberType, i64, String)>,
    pub tags: Vec<(String, String)>,
}

/// Tags from `(key, value)` pairs.
pub fn tags(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A protobuf message being written.
#[derive(Default)]
struct Msg(Vec<u8>);

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

impl Msg {
    fn key(&mut self, field: u32, wire: u8) {
        varint(&mut self.0, (u64::from(field) << 3) | u64::from(wire));
    }
    fn uint(&mut self, field: u32, v: u64) {
        self.key(field, 0);
        varint(&mut self.0, v);
    }
    /// `int32`/`int64`: two's complement as a varint.
    fn int(&mut self, field: u32, v: i64) {
        self.uint(field, v as u64);
    }
    fn sint(&mut self, field: u32, v: i64) {
        self.uint(field, zigzag(v));
    }
    fn bytes(&mut self, field: u32, b: &[u8]) {
        self.key(field, 2);
        varint(&mut self.0, b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn packed(&mut self, field: u32, values: impl IntoIterator<Item = u64>) {
        let mut body = Vec::new();
        for v in values {
            varint(&mut body, v);
        }
        self.bytes(field, &body);
    }
    fn packed_sint(&mut self, field: u32, values: impl IntoIterator<Item = i64>) {
        self.packed(field, values.into_iter().map(zigzag));
    }
}

/// Delta coding: each value minus the one before it.
fn deltas(values: impl IntoIterator<Item = i64>) -> Vec<i64> {
    let mut prev = 0i64;
    values
        .into_iter()
        .map(|v| {
            let d = v - prev;
            prev = v;
            d
        })
        .collect()
}

/// Degrees in units of 100 nanodegrees (the granularity written).
fn units(deg: f64) -> i64 {
    (deg * 1e7).round() as i64
}

/// A block's string table: index 0 is the empty string, the rest in first-use order.
#[derive(Default)]
struct Strings {
    index: BTreeMap<String, u64>,
    list: Vec<String>,
}

impl Strings {
    fn id(&mut self, s: &str) -> u64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        self.list.push(s.to_string());
        let i = self.list.len() as u64;
        self.index.insert(s.to_string(), i);
        i
    }

    fn table(&self) -> Vec<u8> {
        let mut t = Msg::default();
        t.bytes(1, b"");
        for s in &self.list {
            t.bytes(1, s.as_bytes());
        }
        t.0
    }
}

fn zlib(raw: &[u8]) -> io::Result<Vec<u8>> {
    let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
    z.write_all(raw)?;
    z.finish()
}

/// One blob: length, header, blob.
fn blob(out: &mut Vec<u8>, kind: &str, raw: &[u8]) -> io::Result<()> {
    let mut b = Msg::default();
    b.int(2, raw.len() as i64);
    b.bytes(3, &zlib(raw)?);
    let mut h = Msg::default();
    h.bytes(1, kind.as_bytes());
    h.int(3, b.0.len() as i64);
    let len = u32::try_from(h.0.len()).map_err(io::Error::other)?;
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&h.0);
    out.extend_from_slice(&b.0);
    Ok(())
}

/// A `PrimitiveBlock` holding one group.
fn block(strings: &Strings, group: &Msg) -> Vec<u8> {
    let mut m = Msg::default();
    m.bytes(1, &strings.table());
    m.bytes(2, &group.0);
    m.int(17, 100);
    m.0
}

fn keys_vals(strings: &mut Strings, tags: &[(String, String)]) -> (Vec<u64>, Vec<u64>) {
    tags.iter()
        .map(|(k, v)| (strings.id(k), strings.id(v)))
        .unzip()
}

/// Encodes an extract of `nodes`, `ways` and `relations` (each in id order as given).
pub fn encode(nodes: &[Node], ways: &[Way], relations: &[Relation]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    // The header, with the nodes' bounding box.
    let mut header = Msg::default();
    if !nodes.is_empty() {
        let fold = |f: fn(f64, f64) -> f64, init: f64, get: fn(&Node) -> f64| {
            nodes.iter().map(get).fold(init, f)
        };
        let nano = |deg: f64| units(deg) * 100;
        let mut bbox = Msg::default();
        bbox.sint(1, nano(fold(f64::min, f64::INFINITY, |n| n.lon)));
        bbox.sint(2, nano(fold(f64::max, f64::NEG_INFINITY, |n| n.lon)));
        bbox.sint(3, nano(fold(f64::max, f64::NEG_INFINITY, |n| n.lat)));
        bbox.sint(4, nano(fold(f64::min, f64::INFINITY, |n| n.lat)));
        header.bytes(1, &bbox.0);
    }
    header.bytes(4, b"OsmSchema-V0.6");
    header.bytes(4, b"DenseNodes");
    header.bytes(16, b"terrace-fixturegen");
    blob(&mut out, "OSMHeader", &header.0)?;

    if !nodes.is_empty() {
        let mut strings = Strings::default();
        let mut group = Msg::default();
        let (tagged, dense): (Vec<&Node>, Vec<&Node>) =
            nodes.iter().partition(|n| !n.tags.is_empty());
        for n in tagged {
            let (k, v) = keys_vals(&mut strings, &n.tags);
            let mut m = Msg::default();
            m.sint(1, n.id);
            m.packed(2, k);
            m.packed(3, v);
            m.sint(8, units(n.lat));
            m.sint(9, units(n.lon));
            group.bytes(1, &m.0);
        }
        if !dense.is_empty() {
            let mut d = Msg::default();
            d.packed_sint(1, deltas(dense.iter().map(|n| n.id)));
            d.packed_sint(8, deltas(dense.iter().map(|n| units(n.lat))));
            d.packed_sint(9, deltas(dense.iter().map(|n| units(n.lon))));
            // Untagged: one 0 per node.
            d.packed(10, dense.iter().map(|_| 0u64));
            group.bytes(2, &d.0);
        }
        blob(&mut out, "OSMData", &block(&strings, &group))?;
    }
    if !ways.is_empty() {
        let mut strings = Strings::default();
        let mut group = Msg::default();
        for w in ways {
            let (k, v) = keys_vals(&mut strings, &w.tags);
            let mut m = Msg::default();
            m.int(1, w.id);
            m.packed(2, k);
            m.packed(3, v);
            m.packed_sint(8, deltas(w.refs.iter().copied()));
            group.bytes(3, &m.0);
        }
        blob(&mut out, "OSMData", &block(&strings, &group))?;
    }
    if !relations.is_empty() {
        let mut strings = Strings::default();
        let mut group = Msg::default();
        for r in relations {
            let (k, v) = keys_vals(&mut strings, &r.tags);
            let roles: Vec<u64> = r.members.iter().map(|m| strings.id(&m.2)).collect();
            let mut m = Msg::default();
            m.int(1, r.id);
            m.packed(2, k);
            m.packed(3, v);
            m.packed(8, roles);
            m.packed_sint(9, deltas(r.members.iter().map(|x| x.1)));
            m.packed(10, r.members.iter().map(|x| x.0 as u64));
            group.bytes(4, &m.0);
        }
        blob(&mut out, "OSMData", &block(&strings, &group))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_zigzag() {
        let mut v = Vec::new();
        varint(&mut v, 300);
        assert_eq!(v, vec![0xAC, 0x02]);
        assert_eq!(zigzag(0), 0);
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
        assert_eq!(zigzag(-2), 3);
        assert_eq!(deltas([5, 7, 4]), vec![5, 2, -3]);
    }
}
