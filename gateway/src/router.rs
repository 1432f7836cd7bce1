//! The operations' paths, matched by their segments.
//!
//! actix matched a request against each of a family scope's resources in turn, each dynamic one by
//! a regex with captures, after every app-level route registered before the scopes: 6.7% of the
//! workers' CPU in a charged call in the issue 20 profile (session 17). Here a request's path is
//! split once, its family (the segment after `/v1`) picks the few paths that can match, and each
//! is compared segment by segment, a `{name}` segment taking any non-empty text, as actix's
//! `{name}` (`[^/]+`) did.

use crate::registry::OpDecl;
use std::collections::HashMap;

/// One segment of a declared path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Segment {
    Fixed(&'static str),
    Param(&'static str),
}

/// A declared path (relative to `/v1`), with the operation for each of its methods, in the
/// registry's order (the order `Allow` lists them in, as before).
pub struct Route {
    path: &'static str,
    segments: Vec<Segment>,
    ops: Vec<&'static OpDecl>,
    /// The methods the path answers, as an `Allow` header lists them.
    pub allow: String,
}

impl Route {
    /// The operation for `method`, if the path declares one.
    pub fn op(&self, method: &str) -> Option<&'static OpDecl> {
        self.ops
            .iter()
            .copied()
            .find(|op| op.method.as_str() == method)
    }
}

/// What a path is: a declared path with its parameters (name, text), or none.
pub struct Matched<'r, 'p> {
    pub route: &'r Route,
    pub params: Vec<(&'static str, &'p str)>,
}

/// Every operation's path, by family.
pub struct Router {
    families: HashMap<&'static str, Vec<Route>>,
}

impl Router {
    /// The router of `ops`, whose paths all begin with `/v1/`.
    pub fn new(ops: &[&'static OpDecl]) -> Router {
        let mut families: HashMap<&'static str, Vec<Route>> = HashMap::new();
        for op in ops {
            let Some(relative) = op.path.strip_prefix("/v1/") else {
                continue;
            };
            let segments: Vec<Segment> = relative
                .split('/')
                .map(
                    |s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                        Some(name) => Segment::Param(name),
                        None => Segment::Fixed(s),
                    },
                )
                .collect();
            let Some(Segment::Fixed(family)) = segments.first().copied() else {
                continue;
            };
            let routes = families.entry(family).or_default();
            match routes.iter_mut().find(|r| r.segments == segments) {
                Some(route) => route.ops.push(op),
                None => routes.push(Route {
                    path: op.path,
                    segments,
                    ops: vec![op],
                    allow: String::new(),
                }),
            }
        }
        for routes in families.values_mut() {
            routes.sort_by_key(|r| r.path);
        }
        for route in families.values_mut().flatten() {
            route.allow = route
                .ops
                .iter()
                .map(|op| op.method.as_str())
                .collect::<Vec<_>>()
                .join(", ");
        }
        Router { families }
    }

    /// The declared path `path` (relative to `/v1`, so `/address/uprn/1`) is, if any: the first
    /// that matches in the order of the paths' text, the order actix tried them in (so a fixed
    /// segment is tried before a parameter at the same place, `{` sorting after letters).
    pub fn find<'r, 'p>(&'r self, path: &'p str) -> Option<Matched<'r, 'p>> {
        let given: Vec<&'p str> = path.strip_prefix('/')?.split('/').collect();
        let routes = self.families.get(*given.first()?)?;
        'route: for route in routes.iter().filter(|r| r.segments.len() == given.len()) {
            let mut params = Vec::new();
            for (segment, &text) in route.segments.iter().zip(&given) {
                match segment {
                    Segment::Fixed(s) if *s == text => {}
                    Segment::Param(name) if !text.is_empty() => params.push((*name, text)),
                    Segment::Fixed(_) | Segment::Param(_) => continue 'route,
                }
            }
            return Some(Matched { route, params });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::operations;

    fn router() -> Router {
        Router::new(operations())
    }

    #[test]
    fn every_declared_path_is_found_as_itself_with_its_parameters() {
        let r = router();
        for op in operations() {
            let given: String = op
                .path
                .split('/')
                .map(|s| {
                    if s.starts_with('{') {
                        "given".to_string()
                    } else {
                        s.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("/");
            let m = r
                .find(&given[3..])
                .unwrap_or_else(|| panic!("{} not found", op.path));
            let op_found = m.route.op(op.method.as_str()).expect("its method");
            assert_eq!(op_found.path, op.path, "{given}");
            let expected: Vec<&str> = op
                .path
                .split('/')
                .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
                .collect();
            let names: Vec<&str> = m.params.iter().map(|(n, _)| *n).collect();
            assert_eq!(names, expected, "{}", op.path);
            assert!(m.params.iter().all(|(_, v)| *v == "given"));
        }
    }

    #[test]
    fn empty_segments_trailing_slashes_and_unknown_families_are_not_found() {
        let r = router();
        assert!(r.find("/address/uprn/1").is_some());
        assert!(r.find("/address/uprn/").is_none());
        assert!(r.find("/address/uprn/1/").is_none());
        assert!(r.find("/address/uprn").is_none());
        assert!(r.find("/address/uprn//").is_none());
        assert!(r.find("/nothing/uprn/1").is_none());
        assert!(r.find("").is_none());
        assert!(r.find("/").is_none());
        assert!(r.find("address/uprn/1").is_none());
    }

    #[test]
    fn a_path_lists_its_methods_and_answers_only_those() {
        let r = router();
        let m = r.find("/address/uprn/1").expect("declared");
        assert_eq!(m.route.allow, "GET");
        assert!(m.route.op("POST").is_none());
        assert!(m.route.op("HEAD").is_none());
    }
}
