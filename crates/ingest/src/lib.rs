//! Parsers of the real open-data formats and loaders into the store, with row accounting.
//!
//! Architecture Invariant: every input row is accounted for: `read = loaded + updated + deleted +
//! rejected + unchanged`, and every rejection names its file, line and reason. Loading the same
//! file twice leaves the same state (the second load reports its rows as unchanged).

pub mod addresses;
pub mod derive;
pub mod formats;
pub mod load;

pub use load::{Dataset, IngestError, Layer, LoadReport, Progress, load_file, load_manifest};
