//! An R-tree over multipolygons in BNG metres, for "which boundary is this point in" questions.

use geo::{BoundingRect, Distance, Euclidean, Intersects, MultiPolygon, Point};
use rstar::{AABB, RTree, RTreeObject};

/// One R-tree entry: the bounding box of `items[slot]`.
#[derive(Debug, Clone)]
struct Slot {
    envelope: AABB<[f64; 2]>,
    slot: usize,
}

impl RTreeObject for Slot {
    type Envelope = AABB<[f64; 2]>;
    fn envelope(&self) -> Self::Envelope {
        self.envelope
    }
}

/// A spatial index over `(MultiPolygon, T)` pairs, coordinates in British National Grid metres.
///
/// Lookups first take the candidates whose bounding box intersects the query (R-tree),
/// then test the exact geometry.
/// Empty multipolygons (no bounding box) are kept but never match.
#[derive(Debug, Clone)]
pub struct PolygonIndex<T> {
    tree: RTree<Slot>,
    items: Vec<(MultiPolygon<f64>, T)>,
}

impl<T> Default for PolygonIndex<T> {
    fn default() -> Self {
        Self {
            tree: RTree::new(),
            items: Vec::new(),
        }
    }
}

fn envelope_of(mp: &MultiPolygon<f64>) -> Option<AABB<[f64; 2]>> {
    mp.bounding_rect()
        .map(|r| AABB::from_corners([r.min().x, r.min().y], [r.max().x, r.max().y]))
}

impl<T> PolygonIndex<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds the index in one go (bulk loading gives a better tree than repeated inserts).
    pub fn build(items: Vec<(MultiPolygon<f64>, T)>) -> Self {
        let slots = items
            .iter()
            .enumerate()
            .filter_map(|(slot, (mp, _))| envelope_of(mp).map(|envelope| Slot { envelope, slot }))
            .collect();
        Self {
            tree: RTree::bulk_load(slots),
            items,
        }
    }

    pub fn insert(&mut self, geometry: MultiPolygon<f64>, value: T) {
        let slot = self.items.len();
        if let Some(envelope) = envelope_of(&geometry) {
            self.tree.insert(Slot { envelope, slot });
        }
        self.items.push((geometry, value));
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Every entry in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = &(MultiPolygon<f64>, T)> {
        self.items.iter()
    }

    /// The values whose polygon contains the point, boundary included
    /// (a point on an edge shared by two polygons matches both), in insertion order.
    pub fn containing(&self, point: impl Into<Point<f64>>) -> Vec<&T> {
        let p: Point<f64> = point.into();
        let query = AABB::from_point([p.x(), p.y()]);
        self.matching(&query, |mp| mp.intersects(&p))
    }

    /// The values whose polygon lies within `metres` of the point (0 if the point is inside),
    /// in insertion order.
    pub fn within_distance(&self, point: impl Into<Point<f64>>, metres: f64) -> Vec<&T> {
        let p: Point<f64> = point.into();
        if metres.is_nan() || metres < 0.0 {
            return Vec::new();
        }
        let query = AABB::from_corners(
            [p.x() - metres, p.y() - metres],
            [p.x() + metres, p.y() + metres],
        );
        self.matching(&query, |mp| Euclidean.distance(mp, &p) <= metres)
    }

    /// The values whose polygon intersects `area` or lies within `metres` of it, in insertion
    /// order.
    pub fn near_area(&self, area: &MultiPolygon<f64>, metres: f64) -> Vec<&T> {
        let Some(rect) = area.bounding_rect() else {
            return Vec::new();
        };
        if metres.is_nan() || metres < 0.0 {
            return Vec::new();
        }
        let query = AABB::from_corners(
            [rect.min().x - metres, rect.min().y - metres],
            [rect.max().x + metres, rect.max().y + metres],
        );
        self.matching(&query, |mp| {
            mp.intersects(area) || (metres > 0.0 && Euclidean.distance(mp, area) <= metres)
        })
    }

    fn matching(
        &self,
        query: &AABB<[f64; 2]>,
        exact: impl Fn(&MultiPolygon<f64>) -> bool,
    ) -> Vec<&T> {
        let mut slots: Vec<usize> = self
            .tree
            .locate_in_envelope_intersecting(query)
            .map(|s| s.slot)
            .filter(|&slot| self.items.get(slot).is_some_and(|(mp, _)| exact(mp)))
            .collect();
        slots.sort_unstable();
        slots
            .into_iter()
            .filter_map(|slot| self.items.get(slot).map(|(_, v)| v))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::{LineString, Polygon};

    fn square(x0: f64, y0: f64, size: f64) -> MultiPolygon<f64> {
        MultiPolygon::new(vec![Polygon::new(
            LineString::from(vec![
                (x0, y0),
                (x0 + size, y0),
                (x0 + size, y0 + size),
                (x0, y0 + size),
                (x0, y0),
            ]),
            vec![],
        )])
    }

    /// A 100 m square with a 20 m square hole in its middle.
    fn donut() -> MultiPolygon<f64> {
        let outer = LineString::from(vec![(0.0, 0.0), (100.0, 0.0), (100.0, 100.0), (0.0, 100.0)]);
        let hole = LineString::from(vec![(40.0, 40.0), (60.0, 40.0), (60.0, 60.0), (40.0, 60.0)]);
        MultiPolygon::new(vec![Polygon::new(outer, vec![hole])])
    }

    fn index() -> PolygonIndex<&'static str> {
        PolygonIndex::build(vec![
            (square(0.0, 0.0, 100.0), "a"),
            (square(100.0, 0.0, 100.0), "b"),
            (square(1_000.0, 1_000.0, 10.0), "far"),
            (MultiPolygon::new(vec![]), "empty"),
        ])
    }

    #[test]
    fn containing_points() {
        let idx = index();
        assert_eq!(idx.len(), 4);
        assert_eq!(idx.containing((50.0, 50.0)), vec![&"a"]);
        assert_eq!(idx.containing((150.0, 50.0)), vec![&"b"]);
        assert_eq!(idx.containing((100.0, 50.0)), vec![&"a", &"b"]); // shared edge
        assert!(idx.containing((500.0, 500.0)).is_empty());
        assert!(idx.containing((-1.0, 50.0)).is_empty());
    }

    #[test]
    fn holes_are_outside() {
        let mut idx = PolygonIndex::new();
        idx.insert(donut(), 1);
        assert_eq!(idx.containing((10.0, 10.0)), vec![&1]);
        assert!(idx.containing((50.0, 50.0)).is_empty());
        // the hole's centre is 10 m from the ring
        assert!(idx.within_distance((50.0, 50.0), 9.0).is_empty());
        assert_eq!(idx.within_distance((50.0, 50.0), 10.0), vec![&1]);
    }

    #[test]
    fn within_distance_points() {
        let idx = index();
        assert_eq!(idx.within_distance((50.0, 50.0), 0.0), vec![&"a"]);
        assert_eq!(
            idx.within_distance((250.0, 50.0), 49.0),
            Vec::<&&str>::new()
        );
        assert_eq!(idx.within_distance((250.0, 50.0), 50.0), vec![&"b"]);
        assert_eq!(idx.within_distance((250.0, 50.0), 150.0), vec![&"a", &"b"]);
        // diagonal: (1010+30, 1010+40) is 50 m from the corner, but inside the 50 m box test
        assert_eq!(
            idx.within_distance((1_040.0, 1_050.0), 49.9),
            Vec::<&&str>::new()
        );
        assert_eq!(idx.within_distance((1_040.0, 1_050.0), 50.0), vec![&"far"]);
        assert!(idx.within_distance((50.0, 50.0), -1.0).is_empty());
        assert!(idx.within_distance((50.0, 50.0), f64::NAN).is_empty());
    }

    #[test]
    fn insert_after_build() {
        let mut idx = index();
        idx.insert(square(40.0, 40.0, 20.0), "inner");
        assert_eq!(idx.containing((50.0, 50.0)), vec![&"a", &"inner"]);
        assert_eq!(idx.iter().count(), 5);
    }
}
