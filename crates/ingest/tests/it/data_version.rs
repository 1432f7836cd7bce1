//! `data_version`: a load that changes rows writes a new one (the servers' memos watch it); a
//! load that changes nothing, such as the same file again, leaves it as it was.

use terrace_ingest::Dataset;
use terrace_store::meta::{self, Key};
use terrace_store::testing::TestDb;

const LIST: &str = "\
billing_authority,reference,address,postcode,band
E06009999,CT-0001,\"2, High Street, Exampleton\",XT1 1AA,C
";

async fn load(db: &terrace_store::Db, text: &str) -> terrace_ingest::LoadReport {
    crate::load_text(db, Dataset::CouncilTax, "list.csv", text).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_load_that_changes_rows_writes_a_new_data_version_and_a_repeat_does_not() {
    let t = TestDb::new().await;
    assert_eq!(meta::get(&t.db, Key::DataVersion).await.unwrap(), None);
    assert_eq!(load(&t.db, LIST).await.counts.loaded, 1);
    let first = meta::get(&t.db, Key::DataVersion).await.unwrap();
    assert!(first.is_some(), "a load that wrote a row marks it");
    assert_eq!(load(&t.db, LIST).await.counts.unchanged, 1);
    assert_eq!(
        meta::get(&t.db, Key::DataVersion).await.unwrap(),
        first,
        "the same file again changes nothing, the version included"
    );
    let changed = LIST.replace(",C\n", ",D\n");
    assert_eq!(load(&t.db, &changed).await.counts.updated, 1);
    let after = meta::get(&t.db, Key::DataVersion).await.unwrap();
    assert!(
        after.is_some() && after != first,
        "an update marks it again"
    );
}
