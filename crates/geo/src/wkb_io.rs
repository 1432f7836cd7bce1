//! Multipolygons to and from Well-Known Binary.
//!
//! Writing uses the `wkb` crate. Reading validates with `wkb::reader` and then decodes the
//! coordinates here: the `wkb` reader exposes coordinates only through the `geo-traits` traits,
//! which are not a dependency of this workspace.

use crate::GeoError;
use geo::{Coord, LineString, MultiPolygon, Polygon};

/// Encodes a multipolygon as little-endian ISO WKB (XY).
pub fn multipolygon_to_wkb(mp: &MultiPolygon<f64>) -> Vec<u8> {
    let mut out = Vec::with_capacity(wkb::writer::multi_polygon_wkb_size(mp));
    // Writing to a Vec only fails if a count exceeds u32::MAX, which no in-memory geometry reaches.
    wkb::writer::write_multi_polygon(&mut out, mp, &wkb::writer::WriteOptions::default())
        .expect("a multipolygon with fewer than 2^32 parts always encodes");
    out
}

/// Decodes WKB (ISO or EWKB, any byte order) holding a Polygon or MultiPolygon.
///
/// A Polygon becomes a one-polygon MultiPolygon; Z and M ordinates are dropped.
pub fn multipolygon_from_wkb(bytes: &[u8]) -> Result<MultiPolygon<f64>, GeoError> {
    decode(bytes, false)
}

/// As [`multipolygon_from_wkb`], for WKB from outside (a loader's file): a ring with fewer than
/// four positions, a ring whose last position is not its first, or a position that is not finite
/// is [`GeoError::Invalid`] (`geo` would close an open ring silently).
pub fn multipolygon_from_wkb_strict(bytes: &[u8]) -> Result<MultiPolygon<f64>, GeoError> {
    decode(bytes, true)
}

fn decode(bytes: &[u8], strict: bool) -> Result<MultiPolygon<f64>, GeoError> {
    let parsed = wkb::reader::read_wkb(bytes).map_err(|e| GeoError::Wkb(e.to_string()))?;
    let kind = parsed.geometry_type();
    if kind != wkb::reader::GeometryType::Polygon && kind != wkb::reader::GeometryType::MultiPolygon
    {
        return Err(GeoError::Unsupported(format!("{kind:?}")));
    }
    let mut cur = Cursor {
        buf: bytes,
        pos: 0,
        strict,
    };
    let header = cur.header()?;
    let mp = match header.kind {
        POLYGON => MultiPolygon::new(vec![cur.polygon_body(&header)?]),
        MULTIPOLYGON => {
            let n = cur.u32(header.little)?;
            let mut polygons = Vec::new();
            for _ in 0..n {
                let inner = cur.header()?;
                if inner.kind != POLYGON {
                    return Err(GeoError::Wkb(format!(
                        "a MultiPolygon member has type {}",
                        inner.kind
                    )));
                }
                polygons.push(cur.polygon_body(&inner)?);
            }
            MultiPolygon::new(polygons)
        }
        other => return Err(GeoError::Unsupported(format!("WKB type {other}"))),
    };
    Ok(mp)
}

const POLYGON: u32 = 3;
const MULTIPOLYGON: u32 = 6;
const EWKB_Z: u32 = 0x8000_0000;
const EWKB_M: u32 = 0x4000_0000;
const EWKB_SRID: u32 = 0x2000_0000;

struct Header {
    little: bool,
    kind: u32,
    ordinates: usize,
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Refuse open, short and non-finite rings.
    strict: bool,
}

impl Cursor<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], GeoError> {
        let end = self.pos.checked_add(N).filter(|&end| end <= self.buf.len());
        let slice = end
            .and_then(|end| self.buf.get(self.pos..end))
            .ok_or_else(|| GeoError::Wkb("unexpected end of data".into()))?;
        let mut out = [0u8; N];
        out.copy_from_slice(slice);
        self.pos += N;
        Ok(out)
    }

    fn u32(&mut self, little: bool) -> Result<u32, GeoError> {
        let b = self.take::<4>()?;
        Ok(if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    }

    fn f64(&mut self, little: bool) -> Result<f64, GeoError> {
        let b = self.take::<8>()?;
        Ok(if little {
            f64::from_le_bytes(b)
        } else {
            f64::from_be_bytes(b)
        })
    }

    fn header(&mut self) -> Result<Header, GeoError> {
        let [order] = self.take::<1>()?;
        let little = match order {
            0 => false,
            1 => true,
            other => return Err(GeoError::Wkb(format!("bad byte order {other}"))),
        };
        let code = self.u32(little)?;
        if code & EWKB_SRID != 0 {
            self.u32(little)?;
        }
        let (z, m) = (code & EWKB_Z != 0, code & EWKB_M != 0);
        let iso = code & 0x0FFF_FFFF;
        let (kind, iso_dims) = (iso % 1000, iso / 1000);
        let extra = match (iso_dims, z, m) {
            (0, false, false) => 0,
            (1 | 2, _, _) | (0, true, false) | (0, false, true) => 1,
            (3, _, _) | (0, true, true) => 2,
            _ => return Err(GeoError::Wkb(format!("bad geometry type code {code:#x}"))),
        };
        Ok(Header {
            little,
            kind,
            ordinates: 2 + extra,
        })
    }

    fn polygon_body(&mut self, h: &Header) -> Result<Polygon<f64>, GeoError> {
        let rings = self.u32(h.little)?;
        let mut out = Vec::new();
        for _ in 0..rings {
            let points = self.u32(h.little)?;
            // each point takes at least 16 bytes; refuse counts the buffer cannot hold
            let remaining = self.buf.len().saturating_sub(self.pos);
            if (points as usize).saturating_mul(8 * h.ordinates) > remaining {
                return Err(GeoError::Wkb("ring is longer than the data".into()));
            }
            let mut coords = Vec::with_capacity(points as usize);
            for _ in 0..points {
                let x = self.f64(h.little)?;
                let y = self.f64(h.little)?;
                for _ in 2..h.ordinates {
                    self.f64(h.little)?;
                }
                coords.push(Coord { x, y });
            }
            if self.strict {
                if coords.len() < 4 {
                    return Err(GeoError::Invalid(format!(
                        "a ring has {} positions (at least 4)",
                        coords.len()
                    )));
                }
                if coords.iter().any(|c| !c.x.is_finite() || !c.y.is_finite()) {
                    return Err(GeoError::Invalid(
                        "a position is not a finite number".into(),
                    ));
                }
                if coords.first() != coords.last() {
                    return Err(GeoError::Invalid("unclosed ring".into()));
                }
            }
            out.push(LineString::new(coords));
        }
        let mut rings = out.into_iter();
        let exterior = rings.next().unwrap_or_else(|| LineString::new(vec![]));
        Ok(Polygon::new(exterior, rings.collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> MultiPolygon<f64> {
        let outer = LineString::from(vec![
            (291_000.0, 92_000.0),
            (293_000.5, 92_000.0),
            (293_000.5, 93_000.25),
            (291_000.0, 92_000.0),
        ]);
        let hole = LineString::from(vec![
            (292_000.0, 92_200.0),
            (292_100.0, 92_200.0),
            (292_100.0, 92_300.0),
            (292_000.0, 92_200.0),
        ]);
        let second = LineString::from(vec![(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 0.0)]);
        MultiPolygon::new(vec![
            Polygon::new(outer, vec![hole]),
            Polygon::new(second, vec![]),
        ])
    }

    #[test]
    fn round_trip() {
        let mp = sample();
        let bytes = multipolygon_to_wkb(&mp);
        assert_eq!(bytes[0], 1, "little endian");
        assert_eq!(
            u32::from_le_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]),
            6
        );
        assert_eq!(multipolygon_from_wkb(&bytes), Ok(mp));
        let empty = MultiPolygon::new(vec![]);
        assert_eq!(
            multipolygon_from_wkb(&multipolygon_to_wkb(&empty)),
            Ok(empty)
        );
    }

    #[test]
    fn big_endian_polygon() {
        // A big-endian Polygon (type 3) with one ring of 4 points.
        let mut b = vec![0u8];
        b.extend(3u32.to_be_bytes());
        b.extend(1u32.to_be_bytes());
        b.extend(4u32.to_be_bytes());
        for (x, y) in [(0.0f64, 0.0f64), (2.0, 0.0), (2.0, 2.0), (0.0, 0.0)] {
            b.extend(x.to_be_bytes());
            b.extend(y.to_be_bytes());
        }
        let mp = multipolygon_from_wkb(&b).expect("decodes");
        assert_eq!(mp.0.len(), 1);
        assert_eq!(mp.0[0].exterior().0[2], Coord { x: 2.0, y: 2.0 });
    }

    #[test]
    fn strict_decoding_refuses_open_and_short_rings() {
        let ring = |pts: &[(f64, f64)]| {
            let mut b = vec![1u8];
            b.extend(3u32.to_le_bytes());
            b.extend(1u32.to_le_bytes());
            b.extend((pts.len() as u32).to_le_bytes());
            for (x, y) in pts {
                b.extend(x.to_le_bytes());
                b.extend(y.to_le_bytes());
            }
            b
        };
        let open = ring(&[(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (0.0, 2.0)]);
        assert!(multipolygon_from_wkb(&open).is_ok(), "geo closes it");
        assert_eq!(
            multipolygon_from_wkb_strict(&open),
            Err(GeoError::Invalid("unclosed ring".into()))
        );
        let short = ring(&[(0.0, 0.0), (2.0, 0.0), (0.0, 0.0)]);
        assert!(matches!(
            multipolygon_from_wkb_strict(&short),
            Err(GeoError::Invalid(_))
        ));
        let closed = ring(&[(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (0.0, 0.0)]);
        assert!(multipolygon_from_wkb_strict(&closed).is_ok());
    }

    #[test]
    fn errors() {
        assert!(matches!(multipolygon_from_wkb(&[]), Err(GeoError::Wkb(_))));
        let bytes = multipolygon_to_wkb(&sample());
        assert!(matches!(
            multipolygon_from_wkb(&bytes[..bytes.len() - 3]),
            Err(GeoError::Wkb(_))
        ));
        // a WKB point
        let mut point = vec![1u8];
        point.extend(1u32.to_le_bytes());
        point.extend(1.0f64.to_le_bytes());
        point.extend(2.0f64.to_le_bytes());
        assert!(matches!(
            multipolygon_from_wkb(&point),
            Err(GeoError::Unsupported(_))
        ));
    }
}
