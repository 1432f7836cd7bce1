//! Each address's local authority and LSOA from the real Exeter boundaries and Open UPRN
//! positions in ../shared/data (skipped, with a note, when the folder is absent).

use std::path::PathBuf;
use terrace_ingest::{Dataset, Progress, load_file};
use terrace_store::address;
use terrace_store::testing::TestDb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exeter_addresses_take_their_authority_and_lsoa_from_the_boundaries() {
    let data = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data"));
    if !data.is_dir() {
        eprintln!("../shared/data is absent: the real-boundary build test is skipped");
        return;
    }
    let t = TestDb::new().await;
    let db = &t.db;
    for (ds, file) in [
        (
            Dataset::Boundaries,
            "boundaries/martinjc_statistical_eng_lsoa_by_lad_E07000041.geojson",
        ),
        (
            Dataset::Boundaries,
            "boundaries/lad19_exeter_E07000041.geojson",
        ),
        (Dataset::OpenUprn, "exeter/uprn_latlon_exeter_42861rows.csv"),
    ] {
        let r = load_file(
            db,
            ds,
            &data.join(file),
            Default::default(),
            &mut Progress::quiet(),
        )
        .await
        .unwrap();
        assert_eq!(r.counts.rejected, 0, "{file}: {:?}", r.rejections);
    }
    let changed = terrace_build::derive::derive_areas(db, &mut Progress::quiet())
        .await
        .unwrap();
    assert!(changed > 40_000, "{changed} addresses got areas");
    let page = address::addresses_page(db, 0, 100_000).await.unwrap();
    let inside = page
        .iter()
        .filter(|a| a.lad_code.as_deref() == Some("E07000041"))
        .count();
    assert!(inside > 40_000, "{inside} of {} in Exeter", page.len());
    assert!(
        page.iter()
            .filter(|a| a.lad_code.is_some())
            .all(|a| a.lsoa_code.as_deref().is_some_and(|c| c.starts_with("E01"))),
        "every address in Exeter has an Exeter LSOA"
    );
    // A second run changes nothing.
    let again = terrace_build::derive::derive_areas(db, &mut Progress::quiet())
        .await
        .unwrap();
    assert_eq!(again, 0);
}
