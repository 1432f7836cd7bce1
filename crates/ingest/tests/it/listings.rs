//! The listings feed: snapshots merged append-only, and the change log (new listing, price
//! reduction, price increase, status change) appended once per event, in event-id order.

use terrace_ingest::Dataset;
use terrace_store::listings;
use terrace_store::testing::TestDb;

const FEED_1: &str = r#"{"listing_id":"S-1","channel":"sale","address":"2 High Street, Exampleton","postcode":"XT1 1AA","uprn":990000000002,"price":250000,"bedrooms":3,"first_seen":"2026-09-05","snapshots":[{"time":"2026-09-05T08:00:00Z","price":250000,"status":"available"},{"time":"2026-10-01T08:00:00Z","price":240000,"status":"available"}]}
{"listing_id":"R-1","channel":"rent","address":"Flat 1, 10 High Street","postcode":"XT1 1AB","price":950,"bedrooms":1,"first_seen":"2026-09-10T10:00:00Z","snapshots":[{"time":"2026-09-10T10:00:00Z","price":950,"status":"available"}]}
{"listing_id":"BAD","channel":"swap","first_seen":"2026-09-10","snapshots":[]}
"#;
/// A later line for S-1 with only its newest snapshots.
const FEED_2: &str = r#"{"listing_id":"S-1","channel":"sale","postcode":"XT1 1AA","uprn":990000000002,"price":245000,"first_seen":"2026-09-05","snapshots":[{"time":"2026-11-01T08:00:00Z","price":245000,"status":"available"},{"time":"2026-11-15T08:00:00Z","price":245000,"status":"sold_stc"}]}
"#;

async fn load(db: &terrace_store::Db, text: &str) -> terrace_ingest::LoadReport {
    crate::load_text(db, Dataset::Listings, "feed.jsonl", text).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feed_writes_the_change_log_once() {
    let t = TestDb::new().await;
    let r = load(&t.db, FEED_1).await;
    assert_eq!(
        (r.counts.read, r.counts.loaded, r.counts.rejected),
        (3, 2, 1)
    );
    assert_eq!(r.rejections[0].line, 3);
    let kinds = |events: &[listings::EventRow]| {
        events
            .iter()
            .map(|e| (e.listing_id.clone(), e.event_type.clone()))
            .collect::<Vec<_>>()
    };
    let log = listings::events_after(&t.db, 0, 100).await.unwrap();
    assert_eq!(
        kinds(&log),
        vec![
            ("S-1".into(), "new_listing".into()),
            ("R-1".into(), "new_listing".into()),
            ("S-1".into(), "price_reduction".into()),
        ]
    );
    assert_eq!(
        (log[2].price, log[2].previous_price),
        (Some(240000), Some(250000))
    );
    // The same file again appends nothing.
    let again = load(&t.db, FEED_1).await;
    assert_eq!(again.counts.unchanged, 2);
    assert_eq!(
        listings::events_after(&t.db, 0, 100).await.unwrap().len(),
        3
    );
    // A later line with new snapshots appends only what is new, after the cursor.
    let cursor = log.last().unwrap().id;
    load(&t.db, FEED_2).await;
    let new = listings::events_after(&t.db, cursor, 100).await.unwrap();
    assert_eq!(
        kinds(&new),
        vec![
            ("S-1".into(), "price_increase".into()),
            ("S-1".into(), "status_change".into())
        ]
    );
    assert_eq!(
        (new[1].status.as_deref(), new[1].previous_status.as_deref()),
        (Some("sold_stc"), Some("available"))
    );
    assert!(new[0].id > cursor && new[1].id > new[0].id);
    // The listing keeps every snapshot and its latest state.
    let l = listings::listings_by_id(&t.db, &["S-1".to_string()])
        .await
        .unwrap()
        .remove(0);
    assert_eq!(
        (l.price, l.last_status.as_deref()),
        (Some(245000), Some("sold_stc"))
    );
    assert_eq!(
        listings::snapshots_of(&t.db, &["S-1".to_string()])
            .await
            .unwrap()
            .len(),
        4
    );
    assert_eq!(
        listings::events_after(&t.db, new[1].id, 10)
            .await
            .unwrap()
            .len(),
        0,
        "an empty page after the last event"
    );
}
