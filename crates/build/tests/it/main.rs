//! The build crate's integration tests in one test binary: the derived steps over stores loaded
//! through the operator's loaders.

mod heights;
mod real_areas;
