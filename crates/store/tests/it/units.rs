//! The store's own unit tests, moved out of the library so that `cargo test` builds no second
//! copy of it (the store's `[lib] test = false`: its test build was the test build's last and
//! longest unit, issue 39 section 6).

mod accounts {

    use diesel::connection::SimpleConnection;
    use diesel::{Connection, RunQueryDsl, SqliteConnection};
    use terrace_store::accounts::prepared_immediate_transaction;

    fn rows(c: &mut SqliteConnection) -> i64 {
        diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
            "(SELECT COUNT(*) FROM t)",
        ))
        .get_result(c)
        .unwrap_or(-1)
    }

    fn insert(c: &mut SqliteConnection) -> diesel::QueryResult<usize> {
        diesel::sql_query("INSERT INTO t (v) VALUES (1)").execute(c)
    }

    /// Committed on `Ok`, rolled back on an error, and a transaction left open before it (a
    /// failed rollback) does not stop the next one.
    #[test]
    fn the_prepared_transaction_commits_rolls_back_and_recovers() {
        let mut c = SqliteConnection::establish(":memory:").unwrap();
        c.batch_execute("CREATE TABLE t (v INTEGER NOT NULL)")
            .unwrap();
        prepared_immediate_transaction(&mut c, insert).unwrap();
        assert_eq!(rows(&mut c), 1);
        let failed = prepared_immediate_transaction(&mut c, |c| {
            insert(c)?;
            Err::<(), _>(diesel::result::Error::RollbackTransaction)
        });
        assert!(failed.is_err());
        assert_eq!(rows(&mut c), 1, "the failed body's row was rolled back");
        // A transaction somebody left open: the next one still begins, and commits.
        c.batch_execute("BEGIN; INSERT INTO t (v) VALUES (2);")
            .unwrap();
        prepared_immediate_transaction(&mut c, insert).unwrap();
        assert_eq!(
            rows(&mut c),
            2,
            "the open transaction was rolled back, this one kept"
        );
        // The statements are reused from diesel's cache, batch after batch.
        for _ in 0..3 {
            prepared_immediate_transaction(&mut c, insert).unwrap();
        }
        assert_eq!(rows(&mut c), 5);
    }
}

mod db {

    /// The bundled SQLite is built with the query planner stability guarantee (`.cargo/config.toml`,
    /// `LIBSQLITE3_FLAGS`): without it every `LIMIT ?` query is parsed and planned again at each
    /// call (docs/BENCHMARKS.md, issue 20, session 18).
    #[test]
    fn the_bundled_sqlite_keeps_plans_whatever_the_bound_values() {
        use diesel::Connection;
        use diesel::RunQueryDsl;
        #[derive(diesel::QueryableByName)]
        struct Opt {
            #[diesel(sql_type = diesel::sql_types::Text)]
            compile_options: String,
        }
        let mut c = diesel::SqliteConnection::establish(":memory:").unwrap();
        let opts: Vec<Opt> = diesel::sql_query("PRAGMA compile_options")
            .load(&mut c)
            .unwrap();
        assert!(
            opts.iter().any(|o| o.compile_options == "ENABLE_QPSG"),
            "compiled without ENABLE_QPSG: {:?}",
            opts.iter().map(|o| &o.compile_options).collect::<Vec<_>>()
        );
    }
}

mod memo {

    use std::sync::atomic::Ordering;
    use std::time::Duration;
    use terrace_store::StoreError;
    use terrace_store::memo::Memo;
    use terrace_store::meta::{self, Key};
    use terrace_store::testing::TestDb;

    const KEYS: &[Key] = &[Key::DataVersion, Key::AddressRegisterVersion];

    async fn answer(n: &std::sync::atomic::AtomicUsize) -> Result<usize, StoreError> {
        Ok(n.fetch_add(1, Ordering::SeqCst))
    }

    #[tokio::test]
    async fn an_answer_is_kept_until_a_watched_version_changes() {
        let t = TestDb::new().await;
        let fills = std::sync::atomic::AtomicUsize::new(0);
        let memo: Memo<i64, usize> = Memo::new(KEYS, Duration::ZERO, 100);
        let first = memo.get_or_fill(&t.db, 1, || answer(&fills)).await.unwrap();
        let again = memo.get_or_fill(&t.db, 1, || answer(&fills)).await.unwrap();
        assert_eq!(
            (first, again),
            (0, 0),
            "the second call is served from memory"
        );
        meta::bump(&t.db, Key::DataVersion, "test").await.unwrap();
        let after = memo.get_or_fill(&t.db, 1, || answer(&fills)).await.unwrap();
        assert_eq!(after, 1, "a changed data version empties the memo");
        meta::set(&t.db, Key::AddressRegisterVersion, "v2")
            .await
            .unwrap();
        let after = memo.get_or_fill(&t.db, 1, || answer(&fills)).await.unwrap();
        assert_eq!(after, 2, "so does a changed address register");
    }

    #[tokio::test]
    async fn versions_are_read_at_most_once_per_period() {
        let t = TestDb::new().await;
        let fills = std::sync::atomic::AtomicUsize::new(0);
        let memo: Memo<i64, usize> = Memo::new(KEYS, Duration::from_secs(3600), 100);
        memo.get_or_fill(&t.db, 1, || answer(&fills)).await.unwrap();
        meta::bump(&t.db, Key::DataVersion, "test").await.unwrap();
        let held = memo.get_or_fill(&t.db, 1, || answer(&fills)).await.unwrap();
        assert_eq!(held, 0, "within the period the change is not yet seen");
    }

    #[tokio::test]
    async fn a_fill_that_straddles_a_change_is_not_kept() {
        let t = TestDb::new().await;
        let memo: Memo<i64, &str> = Memo::new(KEYS, Duration::ZERO, 100);
        memo.get_or_fill(&t.db, 2, || async { Ok::<_, StoreError>("warm") })
            .await
            .unwrap();
        // The fill reads the old rows; the load commits and the memo sees it before the fill ends.
        let got = memo
            .get_or_fill(&t.db, 1, || async {
                meta::bump(&t.db, Key::DataVersion, "test").await?;
                memo.check(&t.db).await?;
                Ok::<_, StoreError>("old")
            })
            .await
            .unwrap();
        assert_eq!(got, "old", "the call itself gets what it read");
        let next = memo
            .get_or_fill(&t.db, 1, || async { Ok::<_, StoreError>("new") })
            .await
            .unwrap();
        assert_eq!(next, "new", "but the old answer was not kept");
    }
}

mod meta {

    use terrace_store::meta::Key;

    #[test]
    fn keys_are_distinct_and_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for k in Key::ALL {
            assert!(seen.insert(k.as_str()), "{k} spelled twice");
        }
    }
}

mod commercial_stock {
    use terrace_store::rating::{self, StockQuery, StockRow};
    use terrace_store::testing::TestDb;

    fn row(uarn: i64, lad: &str, sector: &str, rv: Option<i64>) -> StockRow {
        StockRow {
            uarn,
            lad_code: lad.into(),
            sector: sector.into(),
            list_year: 2026,
            rateable_value: rv,
            updated_at: chrono::NaiveDate::from_ymd_opt(2026, 4, 1)
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .unwrap(),
        }
    }

    #[tokio::test]
    async fn a_page_is_one_authoritys_matching_uarns_in_order_and_a_rebuild_replaces_it() {
        let t = TestDb::new().await;
        assert_eq!(rating::stock_list_year(&t.db).await.unwrap(), None);
        let rows = vec![
            row(5, "E1", "RETAIL", Some(50)),
            row(1, "E1", "OFFICE", Some(10)),
            row(3, "E1", "RETAIL", None),
            row(2, "E2", "RETAIL", Some(20)),
            row(4, "E1", "RETAIL", Some(40)),
            row(6, "E1", "RETAIL", Some(60)),
        ];
        assert_eq!(rating::replace_stock(&t.db, rows).await.unwrap(), 6);
        assert_eq!(rating::stock_list_year(&t.db).await.unwrap(), Some(2026));
        let q = |sector: Option<&str>, after: i64, lo: Option<i64>, hi: Option<i64>| StockQuery {
            lad_code: "E1".into(),
            sector: sector.map(str::to_string),
            after,
            min_rateable_value: lo,
            max_rateable_value: hi,
        };
        let page = |q: StockQuery, n: i64| {
            let db = t.db.clone();
            async move { rating::stock_page(&db, &q, n).await.unwrap() }
        };
        assert_eq!(
            page(q(None, i64::MIN, None, None), 10).await,
            vec![1, 3, 4, 5, 6]
        );
        assert_eq!(
            page(q(Some("RETAIL"), i64::MIN, None, None), 2).await,
            vec![3, 4]
        );
        assert_eq!(page(q(Some("RETAIL"), 4, None, None), 10).await, vec![5, 6]);
        // A bound leaves out the entry with no rateable value.
        assert_eq!(
            page(q(None, i64::MIN, Some(10), Some(50)), 10).await,
            vec![1, 4, 5]
        );
        assert_eq!(
            page(q(Some("HOTEL"), i64::MIN, None, None), 10).await,
            Vec::<i64>::new()
        );
        // A rebuild that no longer places E2 removes its rows.
        rating::replace_stock(&t.db, vec![row(7, "E1", "OFFICE", Some(70))])
            .await
            .unwrap();
        assert_eq!(page(q(None, i64::MIN, None, None), 10).await, vec![7]);
        let e2 = StockQuery {
            lad_code: "E2".into(),
            ..q(None, i64::MIN, None, None)
        };
        assert_eq!(page(e2, 10).await, Vec::<i64>::new());
    }
}
