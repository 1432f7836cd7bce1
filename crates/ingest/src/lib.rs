//! Parsers of the real open-data formats and loaders into the store, with row accounting.
//!
//! - [`datasets`]: one module per dataset (its parser's use and its merge into the store) and the
//!   one table, [`DATASETS`], that names each once (name, aliases, source, load order,
//!   confidence).
//! - [`formats`]: the parsers, one per file format.
//! - [`merge`]: the one "key, fetch existing, map, replace" merge with row accounting.
//! - [`load`]: a file through its dataset, chunk by chunk, with progress; the manifest loader.
//! - The derived steps after loading (areas, UPRN links, the families' builds) are not here: they
//!   are the `terrace-build` crate's, above the families. This crate depends on no family.
//!
//! Architecture Invariant: every input row is accounted for: `read = loaded + updated + deleted +
//! rejected + unchanged`, and every rejection names its file, line and reason. Loading the same
//! file twice leaves the same state (the second load reports its rows as unchanged).
//!
//! CSV is read by a hand-written RFC 4180 reader (`formats/csvio.rs`) that reports each record's
//! own physical line, reads non-UTF-8 text as Latin-1 field by field, and finds header columns by
//! name in any spelling (`UPPER_SNAKE`, `lower_snake`, `lower-kebab`, `Title Case`).
//! `formats::sniff` names the dataset a file holds from its first line. `addresses.rs` splits
//! free-text address lines into SAON, PAON, street, locality and town.
//!
//! Architecture Invariant: the parsers only parse; they never touch the store, and each yields
//! exactly one item per data row, `Ok((line, row))` or `Err(Rejection)`, so a bad row never stops a
//! file. Rows that load but carry a problem worth knowing (a lease term that cannot be read) are
//! reported as notes with the record's identifier.
//!
//! Architecture Invariant: every loaded row carries its source; rows loaded from the fixture world
//! say `fixture:` followed by the dataset's source (`fixture:os_addressbase_plus`, ...).

pub mod addresses;
pub mod datasets;
pub mod formats;
pub mod load;
pub mod merge;

pub use datasets::{DATASETS, Dataset, DatasetInfo};
pub use load::{
    IngestError, Layer, Load, LoadOptions, LoadReport, Loader, Progress, load_file, load_manifest,
};
