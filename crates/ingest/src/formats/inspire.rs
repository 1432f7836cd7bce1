//! HM Land Registry INSPIRE Index Polygons, as published per local authority: one
//! `Land_Registry_Cadastral_Parcels.gml` holding a `wfs:FeatureCollection` of `wfs:member`s, each
//! an `LR:PREDEFINED` feature with an `LR:GEOMETRY` (`gml:Polygon` in EPSG:27700, an exterior
//! `gml:LinearRing` and any interior rings, each a `gml:posList` of "x y x y ..."),
//! `LR:INSPIREID` and `LR:VALIDFROM`.
//!
//! The file is streamed with `quick-xml` (one member in memory at a time), so a national file
//! never sits in memory whole. Elements are matched by local name, so a different namespace
//! prefix reads the same. Line numbers: [`Rejection::line`](super::Rejection::line) and each
//! row's `u64` are the 1-based line of the file where the member's `<wfs:member>` tag ends.
//!
//! A member is rejected with its line and reason when it has no INSPIRE id (or one that is not
//! a whole number), no polygon, a `posList` with an odd count or a non-number, a ring with fewer
//! than four positions or whose last position is not its first (an unclosed ring), a polygon of
//! zero area, or a `srsName` other than EPSG:27700. Malformed XML ends the stream with one
//! rejection, as nothing after it can be read.

use super::{Parsed, Rejection};
use chrono::NaiveDateTime;
use geo::{Area, Coord, LineString, MultiPolygon, Polygon};
use quick_xml::events::{BytesStart, Event};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// One INSPIRE index polygon.
#[derive(Debug, Clone, PartialEq)]
pub struct InspireRow {
    pub inspire_id: i64,
    /// The feature's `gml:id` (`PREDEFINED.fid-...`).
    pub gml_id: Option<String>,
    /// British National Grid metres (the published CRS).
    pub geometry: MultiPolygon<f64>,
    pub valid_from: Option<NaiveDateTime>,
}

/// A buffered reader that counts the newlines consumed, for line numbers.
struct LineCounter<R> {
    inner: R,
    lines: u64,
}

impl<R: BufRead> Read for LineCounter<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for LineCounter<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        if let Ok(buf) = self.inner.fill_buf() {
            let upto = amt.min(buf.len());
            self.lines += buf[..upto].iter().filter(|&&b| b == b'\n').count() as u64;
        }
        self.inner.consume(amt);
    }
}

/// Which text the parser is collecting.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Field {
    PosList,
    InspireId,
    ValidFrom,
}

/// One member as read so far.
#[derive(Debug, Default)]
struct Member {
    line: u64,
    gml_id: Option<String>,
    inspire_id: Option<String>,
    valid_from: Option<String>,
    /// Polygons: each a list of rings, each a posList's text and its dimension.
    polygons: Vec<Vec<(String, usize)>>,
    /// The first problem met (a foreign CRS).
    problem: Option<String>,
}

/// Opens an INSPIRE GML file; a file that does not begin like XML is an error.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<InspireRow>> + Send> {
    let mut inner = BufReader::with_capacity(256 * 1024, File::open(path)?);
    let head = inner.fill_buf()?;
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let first = head.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'<') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: not an XML document", path.display()),
        ));
    }
    let mut reader = quick_xml::Reader::from_reader(LineCounter { inner, lines: 0 });
    reader.config_mut().trim_text(true);
    Ok(Members {
        reader,
        file: path.display().to_string(),
        buf: Vec::new(),
        done: false,
    })
}

/// Whether this file looks like INSPIRE index polygons (for the sniffer).
pub fn is_inspire(head: &str) -> bool {
    head.trim_start().starts_with('<')
        && head.contains("FeatureCollection")
        && (head.contains("PREDEFINED") || head.contains("landregistry.gov.uk"))
}

struct Members {
    reader: quick_xml::Reader<LineCounter<BufReader<File>>>,
    file: String,
    buf: Vec<u8>,
    done: bool,
}

fn local(name: &[u8]) -> &[u8] {
    match name.iter().rposition(|&b| b == b':') {
        Some(i) => &name[i + 1..],
        None => name,
    }
}

fn attr(e: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| local(a.key.as_ref()) == name)
        .map(|a| String::from_utf8_lossy(&a.value).into_owned())
}

impl Members {
    fn reject(&self, line: u64, reason: String) -> Rejection {
        Rejection {
            file: self.file.clone(),
            line,
            reason,
        }
    }

    /// Reads events up to the end of the next member: Some(member), or None at the end.
    fn next_member(&mut self) -> Result<Option<Member>, Rejection> {
        let mut member: Option<Member> = None;
        let mut field: Option<Field> = None;
        let mut text = String::new();
        let mut dim = 2usize;
        loop {
            self.buf.clear();
            let ev = self
                .reader
                .read_event_into(&mut self.buf)
                .map_err(|e| {
                    let line = self.reader.get_ref().lines + 1;
                    Rejection {
                        file: self.file.clone(),
                        line,
                        reason: format!("malformed XML: {e}"),
                    }
                })?
                .into_owned();
            let line = self.reader.get_ref().lines + 1;
            if let Event::Start(e) | Event::Empty(e) = &ev {
                let name = e.name();
                match local(name.as_ref()) {
                    b"member" | b"featureMember" => {
                        member = Some(Member {
                            line,
                            ..Member::default()
                        })
                    }
                    b"PREDEFINED" => {
                        if let Some(m) = member.as_mut() {
                            m.gml_id = attr(e, b"id");
                        }
                    }
                    b"Polygon" => {
                        if let Some(m) = member.as_mut() {
                            if let Some(srs) = attr(e, b"srsName")
                                && !srs.ends_with("27700")
                            {
                                m.problem
                                    .get_or_insert(format!("srsName {srs} is not EPSG:27700"));
                            }
                            m.polygons.push(Vec::new());
                        }
                    }
                    b"posList" => {
                        dim = attr(e, b"srsDimension")
                            .and_then(|d| d.parse().ok())
                            .unwrap_or(2);
                        field = Some(Field::PosList);
                        text.clear();
                    }
                    b"INSPIREID" => {
                        field = Some(Field::InspireId);
                        text.clear();
                    }
                    b"VALIDFROM" => {
                        field = Some(Field::ValidFrom);
                        text.clear();
                    }
                    _ => {}
                }
                if matches!(ev, Event::Empty(_)) {
                    field = None;
                }
            } else if let Event::Text(t) = &ev {
                if field.is_some() {
                    text.push_str(&String::from_utf8_lossy(t));
                }
            } else if let Event::End(e) = &ev {
                let name = e.name();
                match (local(name.as_ref()), member.as_mut(), field) {
                    (b"posList", Some(m), Some(Field::PosList)) => {
                        if let Some(p) = m.polygons.last_mut() {
                            p.push((std::mem::take(&mut text), dim));
                        }
                        field = None;
                    }
                    (b"INSPIREID", Some(m), Some(Field::InspireId)) => {
                        m.inspire_id = Some(text.trim().to_string());
                        field = None;
                    }
                    (b"VALIDFROM", Some(m), Some(Field::ValidFrom)) => {
                        m.valid_from = Some(text.trim().to_string());
                        field = None;
                    }
                    (b"member" | b"featureMember", Some(_), _) => return Ok(member.take()),
                    _ => {}
                }
            } else if let Event::Eof = ev {
                return Ok(None);
            }
        }
    }
}

/// A posList's text as a closed ring of at least four positions.
fn ring(text: &str, dim: usize) -> Result<LineString<f64>, String> {
    let nums: Vec<f64> = text
        .split_ascii_whitespace()
        .map(|s| {
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("posList holds {s:?}, not a number"))
        })
        .collect::<Result<_, _>>()?;
    let dim = dim.max(2);
    if !nums.len().is_multiple_of(dim) {
        return Err(format!(
            "posList holds {} numbers, not a whole number of {dim}-D positions",
            nums.len()
        ));
    }
    let coords: Vec<Coord<f64>> = nums
        .chunks(dim)
        .map(|c| Coord { x: c[0], y: c[1] })
        .collect();
    if coords.len() < 4 {
        return Err(format!(
            "a ring needs at least 4 positions, found {}",
            coords.len()
        ));
    }
    if coords.first() != coords.last() {
        return Err("unclosed ring: its last position is not its first".into());
    }
    Ok(LineString::new(coords))
}

/// A valid-from timestamp (`2009-01-20T08:54:55.469Z`, or a bare date).
fn timestamp(s: &str) -> Option<NaiveDateTime> {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|d| d.naive_utc())
        .ok()
        .or_else(|| NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f").ok())
        .or_else(|| {
            chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
        })
}

fn to_row(m: Member) -> Result<InspireRow, String> {
    let id_text = m.inspire_id.ok_or("member has no INSPIREID")?;
    let inspire_id: i64 = id_text
        .parse()
        .ok()
        .filter(|v: &i64| *v > 0)
        .ok_or_else(|| format!("INSPIREID {id_text:?} is not a positive whole number"))?;
    let label = format!("INSPIREID {inspire_id}");
    if let Some(p) = m.problem {
        return Err(format!("{label}: {p}"));
    }
    if m.polygons.is_empty() {
        return Err(format!("{label}: member has no gml:Polygon"));
    }
    let mut polygons = Vec::with_capacity(m.polygons.len());
    for rings in m.polygons {
        let mut rings = rings
            .iter()
            .map(|(t, d)| ring(t, *d))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{label}: malformed polygon: {e}"))?;
        if rings.is_empty() {
            return Err(format!("{label}: malformed polygon: no exterior ring"));
        }
        let exterior = rings.remove(0);
        polygons.push(Polygon::new(exterior, rings));
    }
    let geometry = MultiPolygon::new(polygons);
    if geometry.unsigned_area() <= 0.0 {
        return Err(format!("{label}: malformed polygon: zero area"));
    }
    let valid_from = match m.valid_from.as_deref().filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => {
            Some(timestamp(s).ok_or_else(|| format!("{label}: VALIDFROM {s:?} unreadable"))?)
        }
    };
    Ok(InspireRow {
        inspire_id,
        gml_id: m.gml_id,
        geometry,
        valid_from,
    })
}

impl Iterator for Members {
    type Item = Parsed<InspireRow>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_member() {
            Ok(Some(m)) => {
                let line = m.line;
                Some(
                    to_row(m)
                        .map(|r| (line, r))
                        .map_err(|reason| self.reject(line, reason)),
                )
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(r) => {
                self.done = true;
                Some(Err(r))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    /// A member in the published layout.
    pub(crate) fn member(id: &str, rings: &[&str]) -> String {
        let mut g = String::from(
            "  <wfs:member>\n    <LR:PREDEFINED gml:id=\"PREDEFINED.fid-1\">\n      <LR:GEOMETRY>\n        <gml:Polygon gml:id=\"p\" srsName=\"urn:ogc:def:crs:EPSG::27700\">\n",
        );
        for (i, r) in rings.iter().enumerate() {
            let tag = if i == 0 { "exterior" } else { "interior" };
            g.push_str(&format!(
                "          <gml:{tag}><gml:LinearRing><gml:posList>{r}</gml:posList></gml:LinearRing></gml:{tag}>\n"
            ));
        }
        g.push_str(&format!(
            "        </gml:Polygon>\n      </LR:GEOMETRY>\n      <LR:INSPIREID>{id}</LR:INSPIREID>\n      <LR:LABEL>{id}</LR:LABEL>\n      <LR:NATIONALCADASTRALREFERENCE>{id}</LR:NATIONALCADASTRALREFERENCE>\n      <LR:VALIDFROM>2009-01-20T08:54:55.469Z</LR:VALIDFROM>\n      <LR:BEGINLIFESPANVERSION>2009-01-20T08:54:55.469Z</LR:BEGINLIFESPANVERSION>\n    </LR:PREDEFINED>\n  </wfs:member>\n"
        ));
        g
    }

    fn collection(members: &[String]) -> String {
        format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<wfs:FeatureCollection xmlns:wfs=\"http://www.opengis.net/wfs/2.0\" xmlns:gml=\"http://www.opengis.net/gml/3.2\" xmlns:LR=\"www.landregistry.gov.uk\" numberMatched=\"{}\" timeStamp=\"2025-11-02T00:00:00\">\n{}</wfs:FeatureCollection>\n",
            members.len(),
            members.concat()
        )
    }

    const SQUARE: &str = "0 0 100 0 100 100 0 100 0 0";
    const HOLE: &str = "10 10 20 10 20 20 10 20 10 10";

    #[test]
    fn reads_members_with_holes_and_rejects_the_malformed_with_their_lines() {
        let text = collection(&[
            member("15530929", &[SQUARE, HOLE]),
            member("2", &["0 0 10 0 10 10 0 10"]),
            member("3", &["0 0 10 0 10"]),
            member("x4", &[SQUARE]),
            member("5", &["0 0 10 0 10 ten 0 10 0 0"]),
            member("6", &["0 0 10 0 20 0 0 0"]),
            member("7", &[SQUARE]),
        ]);
        let f = temp_file(text.as_bytes());
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok.len(), 2, "{bad:?}");
        let (line, first) = &ok[0];
        assert_eq!(*line, 3, "the first member's tag is on line 3");
        assert_eq!(first.inspire_id, 15_530_929);
        assert_eq!(first.gml_id.as_deref(), Some("PREDEFINED.fid-1"));
        assert!((first.geometry.unsigned_area() - 9_900.0).abs() < 1e-9);
        assert_eq!(
            first.valid_from.unwrap().to_string(),
            "2009-01-20 08:54:55.469"
        );
        assert_eq!(ok[1].1.inspire_id, 7);
        let reasons: Vec<(u64, &str)> = bad.iter().map(|r| (r.line, r.reason.as_str())).collect();
        assert_eq!(bad.len(), 5);
        assert!(reasons[0].1.contains("unclosed ring"), "{reasons:?}");
        assert!(reasons[1].1.contains("whole number of 2-D"), "{reasons:?}");
        assert!(
            reasons[2].1.contains("not a positive whole number"),
            "{reasons:?}"
        );
        assert!(reasons[3].1.contains("not a number"), "{reasons:?}");
        assert!(reasons[4].1.contains("zero area"), "{reasons:?}");
        // each member is 14 lines (one ring) or 15 (two rings): lines follow the file
        assert_eq!(reasons[0].0, 3 + 15);
        assert_eq!(reasons[1].0, 3 + 15 + 14);
    }

    #[test]
    fn a_foreign_crs_and_broken_xml_are_rejections() {
        let m = member("9", &[SQUARE]).replace("EPSG::27700", "EPSG::4326");
        let text = collection(&[m, member("10", &[SQUARE])]);
        let f = temp_file(text.as_bytes());
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok.len(), 1);
        assert!(bad[0].reason.contains("not EPSG:27700"), "{bad:?}");

        let text = collection(&[member("11", &[SQUARE])]).replace("</LR:LABEL>", "</LR:LABLE>");
        let f = temp_file(text.as_bytes());
        let (ok, bad) = split(read(f.path()).unwrap());
        assert!(ok.is_empty());
        assert_eq!(bad.len(), 1);
        assert!(bad[0].reason.starts_with("malformed XML"), "{bad:?}");

        let f = temp_file(b"INSPIREID,geometry\n");
        assert!(read(f.path()).is_err());
    }
}
