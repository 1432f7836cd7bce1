//! Bulk writes and the keyed-table operations every family module shares, on both backends.
//!
//! - `replace_rows!`: replace-by-key in chunks inside one transaction.
//! - `execute_all!`: one statement per item inside one transaction.
//! - `keyed_ops!`: for a table with a one-column key, the "fetch by keys", "replace rows by
//!   key" (and optionally "delete by keys") functions a loader needs; family modules declare
//!   them with one macro call instead of writing the chunked fetch and the delete+insert again.
//! - `matchable_ops!`: for a table the address matcher links to UPRNs, the unmatched pages and
//!   the batched match setter.
//!
//! Invariant: every write here runs in one transaction per call, with keys and rows in chunks of
//! [`CHUNK`]. diesel-async has no multi-row INSERT for SQLite, so the SQLite arm runs sync diesel
//! on the connection's blocking thread; the query tokens are written once and expanded per
//! backend.

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

/// For a table whose rows the address matcher links to UPRNs: the unlinked rows in key order
/// after `after` (keyset pages), and the setter of many rows' matches in one transaction. The
/// calling module has diesel's prelude and `diesel_async::RunQueryDsl` in scope.
#[macro_export]
macro_rules! matchable_ops {
    ($row:ty, $table:ident, $key:ident, $unmatched:ident, $set:ident) => {
        /// Rows with no UPRN yet, in key order after `after`, for address matching.
        pub async fn $unmatched(
            db: &$crate::db::Db,
            after: &str,
            limit: i64,
        ) -> $crate::db::StoreResult<Vec<$row>> {
            Ok($crate::with_conn!(db, |c| {
                $table::table
                    .filter($table::uprn.is_null())
                    .filter($table::$key.gt(after))
                    .order($table::$key)
                    .limit(limit)
                    .select(<$row>::as_select())
                    .load(c)
                    .await?
            }))
        }

        /// Sets the UPRN matches of many rows in one transaction: (key, UPRN, score), all
        /// matched by `method`. Returns how many rows changed.
        pub async fn $set(
            db: &$crate::db::Db,
            method: &str,
            matches: Vec<(String, i64, f64)>,
        ) -> $crate::db::StoreResult<usize> {
            if matches.is_empty() {
                return Ok(0);
            }
            let method = method.to_string();
            Ok($crate::execute_all!(db, matches, |m| {
                diesel::update($table::table.find(&m.0)).set((
                    $table::uprn.eq(Some(m.1)),
                    $table::match_method.eq(Some(&method)),
                    $table::match_score.eq(Some(m.2)),
                ))
            }))
        }
    };
}

/// For a table keyed by one column: `$get(db, keys)` (the stored rows whose key is in `keys`, any
/// order, read in chunks), `$replace(db, rows)` (writes `rows`, replacing stored rows with the
/// same key, in one transaction) and, when a sixth name is given, `$delete(db, keys)` (deletes
/// the rows whose key is in `keys`, returns how many existed). The calling module has diesel's
/// prelude and `diesel_async::RunQueryDsl` in scope.
///
/// `keyed_ops!(Row, table, key_column, KeyType, get, replace[, delete])`
#[macro_export]
macro_rules! keyed_ops {
    ($row:ty, $table:ident, $key:ident, $kty:ty, $get:ident, $replace:ident, $delete:ident) => {
        $crate::keyed_ops!($row, $table, $key, $kty, $get, $replace);

        /// Deletes the rows whose key is in `keys`; returns how many existed.
        pub async fn $delete(db: &$crate::db::Db, keys: &[$kty]) -> $crate::db::StoreResult<usize> {
            let mut n = 0;
            for k in keys.chunks($crate::bulk::CHUNK) {
                n += $crate::with_conn!(db, |c| {
                    diesel::delete($table::table.filter($table::$key.eq_any(k)))
                        .execute(c)
                        .await?
                });
            }
            Ok(n)
        }
    };
    ($row:ty, $table:ident, $key:ident, $kty:ty, $get:ident, $replace:ident) => {
        /// The stored rows whose key is in `keys` (any order).
        pub async fn $get(
            db: &$crate::db::Db,
            keys: &[$kty],
        ) -> $crate::db::StoreResult<Vec<$row>> {
            let mut out = Vec::with_capacity(keys.len());
            for k in keys.chunks($crate::bulk::CHUNK) {
                let part: Vec<$row> = $crate::with_conn!(db, |c| {
                    $table::table
                        .filter($table::$key.eq_any(k))
                        .select(<$row>::as_select())
                        .load(c)
                        .await?
                });
                out.extend(part);
            }
            Ok(out)
        }

        /// Writes `rows`, replacing any stored row with the same key, in one transaction.
        pub async fn $replace(
            db: &$crate::db::Db,
            rows: Vec<$row>,
        ) -> $crate::db::StoreResult<usize> {
            let keys: Vec<$kty> = rows.iter().map(|r| r.$key.clone()).collect();
            Ok($crate::replace_rows!(
                db,
                $table::table,
                $table::$key,
                keys,
                rows
            ))
        }
    };
}

/// Replaces every series of `$table` at once with `$rows` (each row carries its `$key`): the
/// series now in the table and those in `$rows` are deleted, then `$rows` written, in one
/// transaction, so a series the build no longer produces is removed. Rows written.
#[macro_export]
macro_rules! replace_series {
    ($db:expr, $table:ident, $key:ident, $rows:expr) => {{
        let rows = $rows;
        let mut keys: Vec<String> = $crate::with_conn!($db, |c| {
            $table::table
                .select($table::$key)
                .distinct()
                .load(c)
                .await?
        });
        keys.extend(rows.iter().map(|r| r.$key.clone()));
        keys.sort();
        keys.dedup();
        $crate::replace_rows!($db, $table::table, $table::$key, keys, rows)
    }};
}
