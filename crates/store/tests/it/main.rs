//! The store integration tests in one test binary (one link), one module per area.

mod ledger;
mod migrations;
mod oauth;
mod units;

/// The rows `sql` returns on the test store, whichever backend it is on.
pub async fn load_sql<T>(db: &terrace_store::Db, sql: &str) -> Vec<T>
where
    T: diesel::QueryableByName<diesel::pg::Pg>
        + diesel::QueryableByName<diesel::sqlite::Sqlite>
        + Send
        + 'static,
{
    use diesel_async::RunQueryDsl;
    use terrace_store::with_conn;
    (async {
        Ok::<_, terrace_store::StoreError>(with_conn!(db, |c| diesel::sql_query(sql)
            .load(c)
            .await?))
    })
    .await
    .unwrap()
}
