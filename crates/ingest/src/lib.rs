//! Parsers of the real open-data formats and loaders into the store, with row accounting.
//!
//! - [`datasets`]: one module per dataset (its parser's use and its merge into the store) and the
//!   one table, [`DATASETS`], that names each once (name, aliases, source, load order,
//!   confidence).
//! - [`formats`]: the parsers, one per file format.
//! - [`merge`]: the one "key, fetch existing, map, replace" merge with row accounting.
//! - [`load`]: a file through its dataset, chunk by chunk, with progress; the manifest loader.
//! - [`derive`]: the derived steps after loading (areas, UPRN links, the market build), run by
//!   [`derive::derive_all`].
//!
//! Architecture Invariant: every input row is accounted for: `read = loaded + updated + deleted +
//! rejected + unchanged`, and every rejection names its file, line and reason. Loading the same
//! file twice leaves the same state (the second load reports its rows as unchanged).

pub mod addresses;
pub mod datasets;
pub mod derive;
pub mod formats;
pub mod load;
pub mod merge;

pub use datasets::{DATASETS, Dataset, DatasetInfo, confidence_of};
pub use load::{
    IngestError, Layer, Load, LoadOptions, LoadReport, Loader, Progress, load_file, load_manifest,
};
