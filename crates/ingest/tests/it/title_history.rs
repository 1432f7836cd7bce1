//! The CCOD loader's price history (`title_price_history`): each title's distinct (Date
//! Proprietor Added, Price Paid) kept with the month of the first snapshot that showed it; the
//! same snapshot loaded twice adds nothing, a later snapshot with a changed price or date adds a
//! row, an older snapshot loaded late moves the first-seen month back, and malformed rows are
//! reported by file and line while the rest load.

use terrace_ingest::Dataset;
use terrace_ingest::formats::ccod_ocod::CCOD_HEADER;
use terrace_store::testing::TestDb;
use terrace_store::titles;

/// A CCOD row: title, price, date added, one proprietor, the rest blank.
fn row(title: &str, price: &str, added: &str) -> String {
    let mut f = vec![String::new(); 35];
    f[0] = title.into();
    f[1] = "Freehold".into();
    f[2] = "1 MARKET STREET, TAMBERLEY (TB1 1AA)".into();
    f[6] = "TB1 1AA".into();
    f[8] = price.into();
    f[9] = "ACME PROPERTY LIMITED".into();
    f[10] = "01234567".into();
    f[11] = "Limited Company or Public Limited Company".into();
    f[33] = added.into();
    f.iter()
        .map(|v| format!("\"{v}\""))
        .collect::<Vec<_>>()
        .join(",")
}

fn file(rows: &[String]) -> String {
    let mut s = format!("{CCOD_HEADER}\r\n");
    for r in rows {
        s.push_str(r);
        s.push_str("\r\n");
    }
    s.push_str(&format!("\"Row Count: {}\"\r\n", rows.len()));
    s
}

async fn history(db: &terrace_store::Db, title: &str) -> Vec<(String, i64, Option<String>)> {
    titles::price_history_of(db, &[title.to_string()])
        .await
        .unwrap()
        .into_iter()
        .map(|o| (o.date_added.to_string(), o.price_paid, o.first_seen_month))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ccod_snapshots_keep_each_distinct_price_once() {
    let t = TestDb::new().await;
    let jan = file(&[
        row("TB100", "250000", "01-03-2016"),
        row("TB200", "", "01-03-2016"),
        row("TB300", "400,000", "bad date"),
        row("TB400", "90000", "15-06-2018"),
    ]);
    let r = crate::load_text(&t.db, Dataset::Ccod, "CCOD_FULL_2024_01.csv", &jan).await;
    assert_eq!((r.counts.read, r.counts.rejected), (4, 1));
    assert_eq!(r.rejections[0].line, 4, "{:?}", r.rejections);
    assert!(r.rejections[0].file.ends_with("CCOD_FULL_2024_01.csv"));
    assert!(
        r.rejections[0].reason.contains("Date Proprietor Added"),
        "{}",
        r.rejections[0].reason
    );
    assert_eq!(
        history(&t.db, "TB100").await,
        [(
            "2016-03-01".to_string(),
            250_000,
            Some("2024-01".to_string())
        )]
    );
    // No price: nothing to pair, nothing kept.
    assert!(history(&t.db, "TB200").await.is_empty());
    assert!(history(&t.db, "TB300").await.is_empty());

    // The same snapshot again adds nothing.
    crate::load_text(&t.db, Dataset::Ccod, "CCOD_FULL_2024_01.csv", &jan).await;
    assert_eq!(history(&t.db, "TB100").await.len(), 1);
    assert_eq!(history(&t.db, "TB400").await.len(), 1);

    // A later snapshot: TB100 sold again (new date and price), TB400 unchanged.
    let jul = file(&[
        row("TB100", "310000", "20-05-2024"),
        row("TB400", "90000", "15-06-2018"),
    ]);
    crate::load_text(&t.db, Dataset::Ccod, "CCOD_FULL_2024_07.csv", &jul).await;
    assert_eq!(
        history(&t.db, "TB100").await,
        [
            (
                "2016-03-01".to_string(),
                250_000,
                Some("2024-01".to_string())
            ),
            (
                "2024-05-20".to_string(),
                310_000,
                Some("2024-07".to_string())
            ),
        ]
    );
    assert_eq!(
        history(&t.db, "TB400").await,
        [(
            "2018-06-15".to_string(),
            90_000,
            Some("2024-01".to_string())
        )]
    );
    // The titles table holds the latest snapshot only.
    let now = titles::titles_by_number(&t.db, &["TB100".to_string()])
        .await
        .unwrap();
    assert_eq!(now[0].price_paid, Some(310_000));
    // Only TB100 has two observations.
    assert_eq!(
        titles::titles_with_repeat_observations(&t.db)
            .await
            .unwrap(),
        ["TB100"]
    );

    // An older snapshot loaded late: TB400 was first seen earlier; nothing is added.
    let older = file(&[row("TB400", "90000", "15-06-2018")]);
    crate::load_text(&t.db, Dataset::Ccod, "CCOD_FULL_2023_07.csv", &older).await;
    assert_eq!(
        history(&t.db, "TB400").await,
        [(
            "2018-06-15".to_string(),
            90_000,
            Some("2023-07".to_string())
        )]
    );
    // An older snapshot of TB100 (its 2016 price) leaves the title as the newest says, counted
    // unchanged, and loading it again changes nothing.
    let old_tb100 = file(&[row("TB100", "250000", "01-03-2016")]);
    for _ in 0..2 {
        let r = crate::load_text(&t.db, Dataset::Ccod, "CCOD_FULL_2023_01.csv", &old_tb100).await;
        assert_eq!(
            (r.counts.unchanged, r.counts.updated),
            (1, 0),
            "{:?}",
            r.counts
        );
    }
    let now = titles::titles_by_number(&t.db, &["TB100".to_string()])
        .await
        .unwrap();
    assert_eq!(now[0].price_paid, Some(310_000));
}
