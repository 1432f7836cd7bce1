//! An R-tree over points in BNG metres, for "what lies within this distance" and "which is the
//! nearest" questions.

use rstar::RTree;
use rstar::primitives::GeomWithData;

/// A spatial index over `((x, y), T)` pairs, coordinates in British National Grid metres.
/// Points with a non-finite coordinate are kept but never match.
#[derive(Debug, Clone)]
pub struct PointIndex<T> {
    tree: RTree<GeomWithData<[f64; 2], usize>>,
    items: Vec<((f64, f64), T)>,
}

impl<T> Default for PointIndex<T> {
    fn default() -> Self {
        Self {
            tree: RTree::new(),
            items: Vec::new(),
        }
    }
}

fn distance(a: (f64, f64), b: (f64, f64)) -> f64 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}

impl<T> PointIndex<T> {
    /// Builds the index in one go.
    pub fn build(items: Vec<((f64, f64), T)>) -> Self {
        let entries = items
            .iter()
            .enumerate()
            .filter(|(_, ((x, y), _))| x.is_finite() && y.is_finite())
            .map(|(slot, ((x, y), _))| GeomWithData::new([*x, *y], slot))
            .collect();
        Self {
            tree: RTree::bulk_load(entries),
            items,
        }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The values within `metres` of the point, nearest first (ties in insertion order), with
    /// their distance in metres.
    pub fn within_distance(&self, point: (f64, f64), metres: f64) -> Vec<(&T, f64)> {
        if metres.is_nan() || metres < 0.0 || !point.0.is_finite() || !point.1.is_finite() {
            return Vec::new();
        }
        let mut found: Vec<(usize, f64)> = self
            .tree
            .locate_within_distance([point.0, point.1], metres * metres)
            .filter_map(|e| {
                let (p, _) = self.items.get(e.data)?;
                Some((e.data, distance(*p, point)))
            })
            .collect();
        found.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        found
            .into_iter()
            .filter_map(|(slot, d)| self.items.get(slot).map(|(_, v)| (v, d)))
            .collect()
    }

    /// The values inside `area` or within `metres` of it, in insertion order, with their
    /// distance to it in metres (0 inside).
    pub fn in_area(&self, area: &geo::MultiPolygon<f64>, metres: f64) -> Vec<(&T, f64)> {
        use geo::{BoundingRect, Distance, Euclidean};
        let Some(rect) = area.bounding_rect() else {
            return Vec::new();
        };
        if metres.is_nan() || metres < 0.0 {
            return Vec::new();
        }
        let query = rstar::AABB::from_corners(
            [rect.min().x - metres, rect.min().y - metres],
            [rect.max().x + metres, rect.max().y + metres],
        );
        let mut found: Vec<(usize, f64)> = self
            .tree
            .locate_in_envelope(&query)
            .filter_map(|e| {
                let ((x, y), _) = self.items.get(e.data)?;
                let d = Euclidean.distance(&geo::Point::new(*x, *y), area);
                (d <= metres).then_some((e.data, d))
            })
            .collect();
        found.sort_by_key(|(slot, _)| *slot);
        found
            .into_iter()
            .filter_map(|(slot, d)| self.items.get(slot).map(|(_, v)| (v, d)))
            .collect()
    }

    /// The nearest value that satisfies `keep`, with its distance in metres.
    pub fn nearest_where(&self, point: (f64, f64), keep: impl Fn(&T) -> bool) -> Option<(&T, f64)> {
        if !point.0.is_finite() || !point.1.is_finite() {
            return None;
        }
        self.tree
            .nearest_neighbor_iter(&[point.0, point.1])
            .filter_map(|e| self.items.get(e.data))
            .find(|(_, v)| keep(v))
            .map(|(p, v)| (v, distance(*p, point)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_and_nearest() {
        let idx = PointIndex::build(vec![
            ((0.0, 0.0), "a"),
            ((10.0, 0.0), "b"),
            ((3.0, 4.0), "c"),
            ((f64::NAN, 1.0), "bad"),
        ]);
        let near: Vec<(&str, f64)> = idx
            .within_distance((0.0, 0.0), 5.0)
            .into_iter()
            .map(|(v, d)| (*v, d))
            .collect();
        assert_eq!(near, vec![("a", 0.0), ("c", 5.0)]);
        assert_eq!(idx.nearest_where((9.0, 0.0), |_| true), Some((&"b", 1.0)));
        assert_eq!(
            idx.nearest_where((9.0, 0.0), |v| *v != "b")
                .map(|(v, _)| *v),
            Some("c")
        );
        assert!(idx.within_distance((0.0, 0.0), -1.0).is_empty());
        assert!(
            PointIndex::<u8>::build(vec![])
                .nearest_where((0.0, 0.0), |_| true)
                .is_none()
        );
    }
}
