//! The analytics integration tests in one test binary (one link), one module per area.

mod forecast;
mod provisional;
mod recovery;
