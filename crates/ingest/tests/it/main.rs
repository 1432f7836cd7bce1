//! The ingest integration tests in one test binary (one link), one module per area.

mod areas;
mod data_version;
mod listing_indices;
mod listings;
mod real_samples;
