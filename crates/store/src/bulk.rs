//! Bulk writes: replace-by-key in chunks inside one transaction per call, on both backends.
//!
//! diesel-async has no multi-row INSERT for SQLite, so the SQLite arm runs sync diesel on the
//! connection's blocking thread; the query tokens are written once and expanded per backend.

/// Rows per INSERT statement (kept under both backends' bind-parameter limits).
pub const CHUNK: usize = 500;

/// `replace_rows!(db, table, key_column, keys: Vec<K>, rows: Vec<R>)`: in one transaction,
/// deletes the rows whose key is in `keys` and inserts `rows`. Returns rows inserted.
#[macro_export]
macro_rules! replace_rows {
    ($db:expr, $table:path, $key:path, $keys:expr, $rows:expr) => {{
        let keys = $keys;
        let rows = $rows;
        match $db.conn().await? {
            $crate::db::Conn::Pg(mut c) => {
                use diesel::prelude::{ExpressionMethods, QueryDsl};
                use diesel_async::AsyncConnection;
                c.transaction(async |c| {
                    for k in keys.chunks($crate::bulk::CHUNK) {
                        diesel_async::RunQueryDsl::execute(
                            diesel::delete($table.filter($key.eq_any(k))),
                            c,
                        )
                        .await?;
                    }
                    let mut n = 0usize;
                    for r in rows.chunks($crate::bulk::CHUNK) {
                        n += diesel_async::RunQueryDsl::execute(
                            diesel::insert_into($table).values(r),
                            c,
                        )
                        .await?;
                    }
                    Ok::<usize, diesel::result::Error>(n)
                })
                .await?
            }
            $crate::db::Conn::Sqlite(mut c) => {
                c.spawn_blocking(move |c| {
                    use diesel::prelude::{Connection, ExpressionMethods, QueryDsl};
                    c.transaction(|c| {
                        for k in keys.chunks($crate::bulk::CHUNK) {
                            diesel::RunQueryDsl::execute(
                                diesel::delete($table.filter($key.eq_any(k))),
                                c,
                            )?;
                        }
                        let mut n = 0usize;
                        for r in rows.chunks($crate::bulk::CHUNK) {
                            n += diesel::RunQueryDsl::execute(
                                diesel::insert_into($table).values(r),
                                c,
                            )?;
                        }
                        Ok::<usize, diesel::result::Error>(n)
                    })
                })
                .await?
            }
        }
    }};
}

/// `execute_all!(db, items: Vec<T>, |item| statement)`: in one transaction, builds and executes
/// one statement per item (`item` is a `&T`), on both backends. Returns the rows affected.
#[macro_export]
macro_rules! execute_all {
    ($db:expr, $items:expr, |$item:ident| $stmt:expr) => {{
        let items = $items;
        match $db.conn().await? {
            $crate::db::Conn::Pg(mut c) => {
                use diesel_async::AsyncConnection;
                c.transaction(async |c| {
                    let mut n = 0usize;
                    for $item in &items {
                        n += diesel_async::RunQueryDsl::execute($stmt, c).await?;
                    }
                    Ok::<usize, diesel::result::Error>(n)
                })
                .await?
            }
            $crate::db::Conn::Sqlite(mut c) => {
                c.spawn_blocking(move |c| {
                    use diesel::Connection;
                    c.transaction(|c| {
                        let mut n = 0usize;
                        for $item in &items {
                            n += diesel::RunQueryDsl::execute($stmt, c)?;
                        }
                        Ok::<usize, diesel::result::Error>(n)
                    })
                })
                .await?
            }
        }
    }};
}
