//! Per-test isolated databases.
//!
//! With `TERRACE_TEST_DATABASE_URL=postgres://...` each test gets a fresh schema in that database
//! (its connections use it through `search_path`); otherwise a fresh SQLite file in the temp dir.
//! Both are migrated, and removed when the `TestDb` drops.

use crate::db::{Db, DbOptions, Location, StoreError};
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

pub const TEST_DB_ENV: &str = "TERRACE_TEST_DATABASE_URL";

pub struct TestDb {
    pub db: Db,
    pub location: Location,
    /// The schema name on PostgreSQL (also the connections' `application_name`).
    pub name: String,
    cleanup: Cleanup,
}

enum Cleanup {
    Sqlite(PathBuf),
    PgSchema { admin_url: String, schema: String },
}

fn unique_name() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "t{}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        nanos
    )
}

/// The PostgreSQL URL tests should use, if any.
pub fn test_pg_url() -> Option<String> {
    std::env::var(TEST_DB_ENV)
        .ok()
        .filter(|s| !s.trim().is_empty())
}

impl TestDb {
    /// A fresh, migrated, empty database on the backend the environment selects.
    pub async fn new() -> TestDb {
        Self::with_options(DbOptions::default()).await
    }

    pub async fn with_options(opts: DbOptions) -> TestDb {
        let name = unique_name();
        let (location, cleanup) = match test_pg_url() {
            Some(admin_url) => {
                let mut c = AsyncPgConnection::establish(&admin_url)
                    .await
                    .unwrap_or_else(|e| panic!("cannot connect to {TEST_DB_ENV}={admin_url}: {e}"));
                c.batch_execute(&format!("CREATE SCHEMA {name}"))
                    .await
                    .expect("create schema");
                let sep = if admin_url.contains('?') { '&' } else { '?' };
                let url = format!(
                    "{admin_url}{sep}options=-csearch_path%3D{name}&application_name={name}"
                );
                (
                    Location::Postgres(url),
                    Cleanup::PgSchema {
                        admin_url,
                        schema: name.clone(),
                    },
                )
            }
            None => {
                let path = std::env::temp_dir().join(format!("terrace-{name}.sqlite3"));
                (Location::Sqlite(path.clone()), Cleanup::Sqlite(path))
            }
        };
        let db = Db::open(&location, &opts).expect("open test db");
        db.migrate().await.expect("migrate test db");
        TestDb {
            db,
            location,
            name,
            cleanup,
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        self.db.close();
        match &self.cleanup {
            Cleanup::Sqlite(path) => {
                for suffix in ["", "-wal", "-shm"] {
                    let mut p = path.clone().into_os_string();
                    p.push(suffix);
                    let _ = std::fs::remove_file(p);
                }
            }
            Cleanup::PgSchema { admin_url, schema } => {
                let (url, sql) = (
                    admin_url.clone(),
                    format!("DROP SCHEMA IF EXISTS {schema} CASCADE"),
                );
                // Drop runs outside any runtime guarantee, so use a short-lived one on a thread.
                let _ = std::thread::spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build();
                    if let Ok(rt) = rt {
                        rt.block_on(async {
                            if let Ok(mut c) = AsyncPgConnection::establish(&url).await {
                                let _ = c.batch_execute(&sql).await;
                            }
                        });
                    }
                })
                .join();
            }
        }
    }
}

/// A handle to a store that cannot be reached, for testing unavailability paths.
pub fn unreachable_db() -> Result<Db, StoreError> {
    let opts = DbOptions {
        max_connections: 2,
        wait_timeout: std::time::Duration::from_millis(300),
    };
    match test_pg_url() {
        Some(_) => Db::open(
            &Location::Postgres("postgres://nobody@127.0.0.1:1/none".into()),
            &opts,
        ),
        None => Db::open(
            &Location::Sqlite(PathBuf::from(
                "/proc/terrace-no-such-dir/unreachable.sqlite3",
            )),
            &opts,
        ),
    }
}
