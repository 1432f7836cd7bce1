//! The ledger's months (migration `000053_ledger_partitions`): on PostgreSQL each month is a
//! partition, rows that went to the default partition move to their month's when it is made,
//! and a month wholly past retention is rolled up at once with its grants kept. SQLite has no
//! partitions: there the same calls make nothing and roll nothing, and the row-by-row roll-up
//! (crates/credits/tests/ledger.rs) does the work.

use chrono::{NaiveDate, NaiveDateTime};
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text};
use terrace_store::Backend;
use terrace_store::accounts::{self, OwnedCharge};
use terrace_store::testing::TestDb;

fn at(y: i32, m: u32, d: u32) -> NaiveDateTime {
    NaiveDate::from_ymd_opt(y, m, d)
        .unwrap()
        .and_hms_opt(9, 30, 0)
        .unwrap()
}

fn charge(account_id: i64, operation: &str, credits: i64, n: usize) -> OwnedCharge {
    OwnedCharge {
        account_id,
        key_id: None,
        operation: operation.into(),
        credits,
        request_id: format!("r{n}"),
        surface: "http".into(),
    }
}

#[derive(QueryableByName, Debug, PartialEq)]
struct PartRows {
    #[diesel(sql_type = Text)]
    part: String,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// PostgreSQL: the rows of each partition of the ledger by kind, partitions in name order.
async fn partition_rows(t: &TestDb) -> Vec<(String, String, i64)> {
    let sql = "SELECT tableoid::regclass::text AS part, kind, count(*) AS n FROM ledger \
               GROUP BY 1, 2 ORDER BY 1, 2";
    let rows: Vec<PartRows> = crate::load_sql(&t.db, sql).await;
    rows.into_iter().map(|r| (r.part, r.kind, r.n)).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_month_is_a_partition_and_a_month_past_retention_rolls_up_at_once() {
    let t = TestDb::new().await;
    let db = &t.db;
    let id = accounts::create_account(db, "months", None, None, 100, at(2025, 1, 15))
        .await
        .unwrap();
    let mut n = 0;
    for (when, calls) in [
        (at(2025, 1, 20), 3),
        (at(2025, 2, 10), 2),
        (at(2025, 3, 5), 1),
    ] {
        let batch = (0..calls)
            .map(|_| {
                n += 1;
                charge(id, "address_by_uprn", 2, n)
            })
            .collect();
        accounts::debit_batch(db, batch, when).await.unwrap();
    }
    accounts::grant(db, id, 10, "cli", at(2025, 2, 11))
        .await
        .unwrap();
    let balance = 100 - 12 + 10;
    assert_eq!(accounts::balance_of(db, id).await.unwrap(), Some(balance));

    let pg = db.backend() == Backend::Postgres;
    if pg {
        // The migration made this month's partitions and the next two; 2025's rows went to
        // the default partition.
        assert!(
            partition_rows(&t)
                .await
                .iter()
                .all(|(part, _, _)| part == "ledger_default"),
            "{:?}",
            partition_rows(&t).await
        );
    }
    // The maintenance: the months in the default partition, March and the two after it.
    let made = accounts::ledger_partitions(db, at(2025, 3, 10), 2)
        .await
        .unwrap();
    assert_eq!(made, if pg { 5 } else { 0 });
    // Again: nothing more to make.
    assert_eq!(
        accounts::ledger_partitions(db, at(2025, 3, 10), 2)
            .await
            .unwrap(),
        0
    );
    if pg {
        assert_eq!(
            partition_rows(&t).await,
            vec![
                ("ledger_y2025m01".into(), "charge".into(), 3),
                ("ledger_y2025m01".into(), "grant".into(), 1),
                ("ledger_y2025m02".into(), "charge".into(), 2),
                ("ledger_y2025m02".into(), "grant".into(), 1),
                ("ledger_y2025m03".into(), "charge".into(), 1),
            ],
            "every row in its month's partition, none left in the default"
        );
    }

    // Retention up to 1 March: January and February are wholly past it, March is not.
    let cutoff = at(2025, 3, 1).date().and_hms_opt(0, 0, 0).unwrap();
    let mut rolled = Vec::new();
    while let Some(n) = accounts::roll_up_month(db, cutoff).await.unwrap() {
        rolled.push(n);
    }
    assert_eq!(rolled, if pg { vec![3, 2] } else { vec![] });
    assert_eq!(accounts::ledger_sum(db, id).await.unwrap(), balance);
    if pg {
        assert_eq!(
            partition_rows(&t).await,
            vec![
                ("ledger_y2025m01".into(), "grant".into(), 1),
                ("ledger_y2025m02".into(), "grant".into(), 1),
                ("ledger_y2025m03".into(), "charge".into(), 1),
            ],
            "the charges rolled up, the grants kept, March untouched"
        );
        let days: Vec<_> = accounts::ledger_daily(db, id)
            .await
            .unwrap()
            .into_iter()
            .map(|d| (d.day, d.operation, d.surface, d.calls, d.credits))
            .collect();
        assert_eq!(
            days,
            vec![
                (
                    at(2025, 2, 10).date(),
                    "address_by_uprn".into(),
                    "http".into(),
                    2,
                    -4
                ),
                (
                    at(2025, 1, 20).date(),
                    "address_by_uprn".into(),
                    "http".into(),
                    3,
                    -6
                ),
            ]
        );
    }
}
