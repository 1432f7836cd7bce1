//! Loads the real open-data samples in ../shared/data (Exeter and the Isle of Wight) through the
//! loaders, on the backend the environment selects. Skipped, with a note, when the folder is
//! absent. Row accounting must cover every input row; loading a file twice changes nothing.

use std::path::PathBuf;
use terrace_ingest::{Dataset, LoadReport, Progress, load_file};
use terrace_store::address::{self, register_counts};
use terrace_store::loads::RowCounts;
use terrace_store::testing::TestDb;

fn shared() -> Option<PathBuf> {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data"));
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("../shared/data is absent: real-sample loader tests skipped");
        None
    }
}

#[track_caller]
fn accounts_for_every_row(r: &LoadReport) {
    let c = &r.counts;
    assert_eq!(
        c.read,
        c.loaded + c.updated + c.deleted + c.rejected + c.unchanged,
        "{}: {c:?}",
        r.file
    );
    assert_eq!(c.rejected as usize, r.rejections.len());
}

async fn load(db: &terrace_store::Db, ds: Dataset, path: PathBuf) -> LoadReport {
    let r = load_file(db, ds, &path, Default::default(), &mut Progress::quiet())
        .await
        .unwrap();
    accounts_for_every_row(&r);
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exeter_samples_load_and_join() {
    let Some(data) = shared() else { return };
    let t = TestDb::new().await;
    let db = &t.db;
    let b = load(
        db,
        Dataset::Boundaries,
        data.join("boundaries/martinjc_statistical_eng_lsoa_by_lad_E07000041.geojson"),
    )
    .await;
    assert_eq!((b.counts.read, b.counts.loaded), (74, 74));
    let lad = load(
        db,
        Dataset::Boundaries,
        data.join("boundaries/lad19_exeter_E07000041.geojson"),
    )
    .await;
    assert_eq!(lad.counts.loaded, 2);
    let cp = load(
        db,
        Dataset::CodePoint,
        data.join("postcodes/codepoint_open_2024.1.0_ex.csv"),
    )
    .await;
    assert_eq!(
        (cp.counts.read, cp.counts.loaded, cp.counts.rejected),
        (22_718, 22_718, 0)
    );
    let nspd = load(
        db,
        Dataset::Onspd,
        data.join("postcodes/nspd_nov2025_via_qlacref_E07000041_E06000046_SW19.csv"),
    )
    .await;
    assert_eq!(nspd.counts.read, 14_836);
    let u = load(
        db,
        Dataset::OpenUprn,
        data.join("exeter/uprn_latlon_exeter_42861rows.csv"),
    )
    .await;
    assert_eq!((u.counts.read, u.counts.loaded), (42_861, 42_861));
    let epc = load(
        db,
        Dataset::Epc,
        data.join("exeter/epc_domestic_exeter_E07000041_api_format_4092rows.csv"),
    )
    .await;
    assert_eq!((epc.counts.read, epc.counts.rejected), (4_092, 0));
    let counts = register_counts(db).await.unwrap();
    assert_eq!(counts.epc_certificates, epc.counts.loaded);
    // EPC certificates give address text to the UPRNs they name; positions come from Open UPRN.
    let page = address::addresses_page(db, 0, 100_000).await.unwrap();
    let with_text = page
        .iter()
        .filter(|a| a.street.is_some() && a.address_source.as_deref() == Some("epc_domestic"))
        .count();
    let with_both = page
        .iter()
        .filter(|a| a.street.is_some() && a.x.is_some())
        .count();
    assert!(with_text > 3_000, "{with_text} addresses got EPC text");
    assert!(
        with_both > 2_000,
        "{with_both} have text and a position (2,626 of the 3,693 EPC UPRNs have coordinates)"
    );
    // A second load of the same file changes nothing.
    let again = load(
        db,
        Dataset::Epc,
        data.join("exeter/epc_domestic_exeter_E07000041_api_format_4092rows.csv"),
    )
    .await;
    assert_eq!(
        again.counts,
        RowCounts {
            read: 4_092,
            unchanged: 4_092,
            ..Default::default()
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn isle_of_wight_price_paid_monthly_files_are_idempotent() {
    let Some(data) = shared() else { return };
    let t = TestDb::new().await;
    let db = &t.db;
    let mut files: Vec<PathBuf> = std::fs::read_dir(data.join("isle_of_wight/ppd_monthly"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut total = RowCounts::default();
    for f in &files {
        let r = load(db, Dataset::PricePaid, f.clone()).await;
        total.read += r.counts.read;
        total.loaded += r.counts.loaded;
        total.updated += r.counts.updated;
        total.deleted += r.counts.deleted;
        total.unchanged += r.counts.unchanged;
        total.rejected += r.counts.rejected;
    }
    assert_eq!(total.read, 4_386);
    assert_eq!(total.rejected, 0);
    // May and June 2026 are byte-identical: the second of them changes nothing.
    let june = files.iter().find(|f| f.ends_with("June_2026.csv")).unwrap();
    let again = load(db, Dataset::PricePaid, june.clone()).await;
    assert_eq!(
        again.counts.loaded + again.counts.updated + again.counts.deleted,
        0,
        "{:?}",
        again.counts
    );
    let n = register_counts(db).await.unwrap().price_paid;
    assert_eq!(n, total.loaded - total.deleted, "stored = loaded - deleted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_national_file_head_loads() {
    let Some(data) = shared() else { return };
    let t = TestDb::new().await;
    let r = load(
        &t.db,
        Dataset::PricePaid,
        data.join("format_refs/pp-complete_first_10297_rows_1995.csv"),
    )
    .await;
    assert_eq!((r.counts.read, r.counts.rejected), (10_298, 0));
    assert_eq!(
        register_counts(&t.db).await.unwrap().price_paid,
        r.counts.loaded
    );
}

/// planning.data.gov.uk's flattened listed-building outlines for Southwark: every row loads,
/// a second load changes nothing, and with no Southwark boundary loaded no coverage is recorded
/// (so the risk report answers not_checked there, never false).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planning_data_sample_loads_and_records_no_unfounded_coverage() {
    let Some(data) = shared() else { return };
    let t = TestDb::new().await;
    let db = &t.db;
    let path =
        data.join("planning/planning_data_listed-building-outline_flattened_southwark_952rows.csv");
    let r = load(db, Dataset::PlanningData, path.clone()).await;
    assert_eq!(
        (r.counts.read, r.counts.loaded, r.counts.rejected),
        (952, 952, 0)
    );
    assert_eq!(
        terrace_store::spatial::feature_count(db).await.unwrap(),
        952
    );
    assert!(
        terrace_store::spatial::all_coverage(db)
            .await
            .unwrap()
            .is_empty()
    );
    let again = load(db, Dataset::PlanningData, path).await;
    assert_eq!(again.counts.unchanged, 952, "{:?}", again.counts);
}
