//! The ingest integration tests in one test binary (one link), one module per area.

mod areas;
mod data_version;
mod energy;
mod listing_indices;
mod listings;
mod osm;
mod real_samples;
mod title_history;

/// Loads `text` as a file named `name` of `dataset`, as an operator's load would.
async fn load_text(
    db: &terrace_store::Db,
    dataset: terrace_ingest::Dataset,
    name: &str,
    text: &str,
) -> terrace_ingest::LoadReport {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    terrace_ingest::load_file(
        db,
        dataset,
        &p,
        Default::default(),
        &mut terrace_ingest::Progress::quiet(),
    )
    .await
    .unwrap()
}
