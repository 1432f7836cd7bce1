//! Features that are areas or points: GeoJSON geometries and WKT text (planning.data.gov.uk's
//! flattened files) to BNG shapes.
//!
//! A line (LineString, MultiLineString: a flood defence, say) is kept as an area of zero width:
//! each line becomes a polygon whose ring runs along it and back, so the distance from a point to
//! it is the distance to the line, and no point lies inside it except on the line itself.

use crate::{GeoError, bng_from_wgs84, geojson_geometry_to_bng};
use geo::{Coord, LineString, MultiPolygon, Polygon};

/// A feature's geometry in BNG metres.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// Polygons (or lines as zero-width polygons).
    Area(MultiPolygon<f64>),
    /// A point: easting, northing.
    Point(f64, f64),
}

fn to_bng(x: f64, y: f64, wgs84: bool) -> Result<Coord<f64>, GeoError> {
    if !x.is_finite() || !y.is_finite() {
        return Err(GeoError::Invalid(format!("bad position ({x}, {y})")));
    }
    if wgs84 {
        let (e, n) = bng_from_wgs84(x, y).ok_or(GeoError::OutsideExtent { x, y })?;
        Ok(Coord { x: e, y: n })
    } else {
        Ok(Coord { x, y })
    }
}

/// A line as a zero-width polygon: along the line and back.
fn line_polygon(points: Vec<Coord<f64>>) -> Result<Polygon<f64>, GeoError> {
    if points.len() < 2 {
        return Err(GeoError::Invalid(format!(
            "a line needs at least 2 positions, found {}",
            points.len()
        )));
    }
    let mut ring = points.clone();
    ring.extend(points.iter().rev().skip(1));
    Ok(Polygon::new(LineString::new(ring), Vec::new()))
}

/// Converts a GeoJSON geometry to a BNG shape: (Multi)Polygon and (Multi)LineString to an area,
/// Point to a point. With `crs_is_wgs84` positions are `[lon, lat]`, otherwise BNG metres.
pub fn geojson_shape_to_bng(
    geometry: &geojson::Geometry,
    crs_is_wgs84: bool,
) -> Result<Shape, GeoError> {
    use geojson::GeometryValue as G;
    let pos = |p: &geojson::Position| -> Result<Coord<f64>, GeoError> {
        match p.as_slice() {
            [x, y, ..] => to_bng(*x, *y, crs_is_wgs84),
            other => Err(GeoError::Invalid(format!("bad position {other:?}"))),
        }
    };
    let line = |ps: &Vec<geojson::Position>| -> Result<Polygon<f64>, GeoError> {
        line_polygon(ps.iter().map(pos).collect::<Result<Vec<_>, _>>()?)
    };
    match &geometry.value {
        G::Polygon { .. } | G::MultiPolygon { .. } => {
            geojson_geometry_to_bng(geometry, crs_is_wgs84).map(Shape::Area)
        }
        G::Point { coordinates } => {
            let c = pos(coordinates)?;
            Ok(Shape::Point(c.x, c.y))
        }
        G::LineString { coordinates } => {
            Ok(Shape::Area(MultiPolygon::new(vec![line(coordinates)?])))
        }
        G::MultiLineString { coordinates } => {
            if coordinates.is_empty() {
                return Err(GeoError::Invalid("MultiLineString has no lines".into()));
            }
            Ok(Shape::Area(MultiPolygon::new(
                coordinates.iter().map(line).collect::<Result<_, _>>()?,
            )))
        }
        other @ (G::MultiPoint { .. } | G::GeometryCollection { .. }) => {
            Err(GeoError::Unsupported(other.type_name().to_string()))
        }
    }
}

/// A tiny WKT reader: POINT, POLYGON, MULTIPOLYGON, LINESTRING, MULTILINESTRING (2D; a Z or M
/// ordinate is ignored), as planning.data.gov.uk writes them (WGS84 when `crs_is_wgs84`).
pub fn wkt_to_bng(text: &str, crs_is_wgs84: bool) -> Result<Shape, GeoError> {
    let t = text.trim();
    let open = t
        .find('(')
        .ok_or_else(|| GeoError::Invalid(format!("not WKT: {:.40}", t)))?;
    let tag: String = t[..open]
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_ascii_uppercase();
    let body = &t[open..];
    let tree = parse_parens(body)?;
    let coord = |s: &str| -> Result<Coord<f64>, GeoError> {
        let mut it = s.split_whitespace().map(str::parse::<f64>);
        match (it.next(), it.next()) {
            (Some(Ok(x)), Some(Ok(y))) => to_bng(x, y, crs_is_wgs84),
            _ => Err(GeoError::Invalid(format!("bad WKT position {s:?}"))),
        }
    };
    let coords = |n: &Node| -> Result<Vec<Coord<f64>>, GeoError> {
        match n {
            Node::Text(s) => s.split(',').map(coord).collect(),
            Node::List(_) => Err(GeoError::Invalid("WKT nesting too deep".into())),
        }
    };
    let ring = |n: &Node| -> Result<LineString<f64>, GeoError> {
        let mut c = coords(n)?;
        if c.len() < 3 {
            return Err(GeoError::Invalid(format!(
                "a ring needs at least 3 positions, found {}",
                c.len()
            )));
        }
        if c.first() != c.last()
            && let Some(first) = c.first().copied()
        {
            c.push(first);
        }
        Ok(LineString::new(c))
    };
    let polygon = |n: &Node| -> Result<Polygon<f64>, GeoError> {
        let rings = n.list()?;
        let (ext, ints) = rings
            .split_first()
            .ok_or_else(|| GeoError::Invalid("polygon has no rings".into()))?;
        Ok(Polygon::new(
            ring(ext)?,
            ints.iter().map(ring).collect::<Result<_, _>>()?,
        ))
    };
    match tag.as_str() {
        "POINT" => {
            let c = coords(tree.inner())?;
            match c.as_slice() {
                [p] => Ok(Shape::Point(p.x, p.y)),
                _ => Err(GeoError::Invalid("POINT needs one position".into())),
            }
        }
        "POLYGON" => Ok(Shape::Area(MultiPolygon::new(vec![polygon(&tree)?]))),
        "MULTIPOLYGON" => {
            let polys = tree
                .list()?
                .iter()
                .map(polygon)
                .collect::<Result<Vec<_>, _>>()?;
            if polys.is_empty() {
                return Err(GeoError::Invalid("MULTIPOLYGON has no polygons".into()));
            }
            Ok(Shape::Area(MultiPolygon::new(polys)))
        }
        "LINESTRING" => {
            let c = coords(tree.inner())?;
            Ok(Shape::Area(MultiPolygon::new(vec![line_polygon(c)?])))
        }
        "MULTILINESTRING" => {
            let lines = tree
                .list()?
                .iter()
                .map(|n| coords(n.inner()).and_then(line_polygon))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Shape::Area(MultiPolygon::new(lines)))
        }
        other => Err(GeoError::Unsupported(other.to_string())),
    }
}

/// A parenthesised WKT body: a list of children, or the text of an innermost group.
#[derive(Debug)]
enum Node {
    List(Vec<Node>),
    Text(String),
}

impl Node {
    /// The node itself when it is text, else its first child (or itself when it has none).
    fn inner(&self) -> &Node {
        match self {
            Node::Text(_) => self,
            Node::List(v) => v.first().unwrap_or(self),
        }
    }

    fn list(&self) -> Result<&[Node], GeoError> {
        match self {
            Node::List(v) => Ok(v),
            Node::Text(_) => Err(GeoError::Invalid("WKT nesting too shallow".into())),
        }
    }
}

/// Parses `( ... )` into nested nodes: a group holding groups is a list; a group of positions
/// is text wrapped in a one-element list, so every level reads the same way.
fn parse_parens(s: &str) -> Result<Node, GeoError> {
    let bytes = s.as_bytes();
    let mut stack: Vec<Vec<Node>> = Vec::new();
    let mut text = String::new();
    let mut root = None;
    for &b in bytes {
        match b {
            b'(' => {
                stack.push(Vec::new());
                text.clear();
            }
            b')' => {
                let mut children = stack
                    .pop()
                    .ok_or_else(|| GeoError::Invalid("unbalanced ')' in WKT".into()))?;
                if children.is_empty() {
                    children.push(Node::Text(std::mem::take(&mut text)));
                }
                text.clear();
                let node = Node::List(children);
                match stack.last_mut() {
                    Some(parent) => parent.push(node),
                    None => {
                        root = Some(node);
                        break;
                    }
                }
            }
            _ => {
                if !stack.is_empty() {
                    text.push(char::from(b));
                }
            }
        }
    }
    let root = root.ok_or_else(|| GeoError::Invalid("unbalanced '(' in WKT".into()))?;
    // A list whose only child is text is a group of positions: unwrap one level so that
    // POLYGON ((..),(..)) is a list of rings, each ring Text.
    Ok(flatten(root))
}

fn flatten(n: Node) -> Node {
    match n {
        Node::List(children) => {
            if let [Node::Text(_)] = children.as_slice() {
                let mut children = children;
                children.pop().unwrap_or(Node::Text(String::new()))
            } else {
                Node::List(children.into_iter().map(flatten).collect())
            }
        }
        t @ Node::Text(_) => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::{Area, Contains, Point};

    #[test]
    fn wkt_shapes_in_bng() {
        let sq =
            "MULTIPOLYGON (((0 0, 100 0, 100 100, 0 100, 0 0)), ((200 0,300 0,300 100,200 0)))";
        let Shape::Area(mp) = wkt_to_bng(sq, false).unwrap() else {
            panic!("area")
        };
        assert_eq!(mp.0.len(), 2);
        assert!(mp.contains(&Point::new(50.0, 50.0)));
        let holed =
            "POLYGON ((0 0, 100 0, 100 100, 0 100, 0 0), (40 40, 60 40, 60 60, 40 60, 40 40))";
        let Shape::Area(mp) = wkt_to_bng(holed, false).unwrap() else {
            panic!("area")
        };
        assert!(!mp.contains(&Point::new(50.0, 50.0)));
        assert!((mp.unsigned_area() - 9_600.0).abs() < 1e-6);
        assert_eq!(
            wkt_to_bng("POINT(10 20)", false).unwrap(),
            Shape::Point(10.0, 20.0)
        );
        assert_eq!(
            wkt_to_bng("POINT Z (10 20 3)", false).unwrap(),
            Shape::Point(10.0, 20.0)
        );
        let Shape::Area(line) = wkt_to_bng("LINESTRING (0 0, 10 0)", false).unwrap() else {
            panic!("line")
        };
        assert_eq!(line.unsigned_area(), 0.0);
        let Shape::Point(e, n) = wkt_to_bng("POINT(-0.104538 51.489006)", true).unwrap() else {
            panic!("point")
        };
        assert!((531_000.0..533_000.0).contains(&e) && (177_000.0..179_000.0).contains(&n));
        for bad in [
            "",
            "POLYGON",
            "POLYGON ((0 0, 1 1))",
            "POINT (a b)",
            "CURVE (0 0)",
            "POLYGON ((0 0, 1 0, 1 1)",
        ] {
            assert!(wkt_to_bng(bad, false).is_err(), "{bad}");
        }
    }
}
