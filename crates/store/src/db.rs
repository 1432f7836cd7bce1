//! The `Db` handle: one enum over a PostgreSQL pool and an SQLite pool.
//!
//! Query bodies are written once and expanded per backend by [`with_conn!`](crate::with_conn).

use diesel::SqliteConnection;
use diesel_async::pooled_connection::deadpool::{Object, Pool, PoolError};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An SQLite connection used through diesel-async, running each query inline on the calling
/// thread (see [`Inline`]).
pub type SqliteConn = SyncConnectionWrapper<SqliteConnection, Inline>;

/// Runs SQLite work on the calling thread instead of a blocking-pool thread.
///
/// SQLite calls are in-process and short (point reads take tens of microseconds), so handing each
/// one to another thread costs more than it saves: measured, two thread hops per query were about
/// 30% of the service's CPU. Long work (bulk loads, the index build) is batched by its callers; the
/// ledger writer runs on its own thread. Futures complete at once, so an SQLite transaction never
/// yields mid-way and cannot interleave with another on a single-threaded runtime.
#[derive(Debug, Clone, Copy, Default)]
pub struct Inline;

impl diesel_async::sync_connection_wrapper::SpawnBlocking for Inline {
    fn spawn_blocking<'a, R>(
        &mut self,
        task: impl FnOnce() -> R + Send + 'static,
    ) -> futures_util::future::BoxFuture<
        'a,
        Result<R, Box<dyn std::error::Error + Send + Sync + 'static>>,
    >
    where
        R: Send + 'static,
    {
        Box::pin(std::future::ready(Ok(task())))
    }

    fn get_runtime() -> Self {
        Inline
    }
}

const PG_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");
const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");

/// Which backend a [`Db`] runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A pooled database handle; cheap to clone.
#[derive(Clone)]
pub enum Db {
    Pg(Pool<AsyncPgConnection>, std::sync::Arc<str>),
    Sqlite(Pool<SqliteConn>, std::sync::Arc<Path>),
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Db({:?})", self.backend())
    }
}

/// A connection checked out of the pool (short-lived, so its size does not matter).
#[allow(clippy::large_enum_variant)]
pub enum Conn {
    Pg(Object<AsyncPgConnection>),
    Sqlite(Object<SqliteConn>),
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store cannot be reached (connection refused, pool timeout, connection lost).
    #[error("the data store is unavailable: {0}")]
    Unavailable(String),
    #[error("not found")]
    NotFound,
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("database error: {0}")]
    Internal(#[source] diesel::result::Error),
    #[error("store setup failed: {0}")]
    Setup(String),
}

impl From<diesel::result::Error> for StoreError {
    // diesel's error enum is foreign and non-exhaustive: everything unnamed is an internal fault.
    #[allow(clippy::wildcard_enum_match_arm)]
    fn from(e: diesel::result::Error) -> Self {
        use diesel::result::{DatabaseErrorKind as K, Error as E};
        match e {
            E::NotFound => StoreError::NotFound,
            E::DatabaseError(K::ClosedConnection | K::UnableToSendCommand, info) => {
                StoreError::Unavailable(info.message().to_string())
            }
            E::DatabaseError(K::UniqueViolation, info) => {
                StoreError::Conflict(info.message().to_string())
            }
            // SQLite reports a lock held past the busy timeout as "database is locked".
            E::DatabaseError(_, ref info) if info.message().contains("database is locked") => {
                StoreError::Unavailable(info.message().to_string())
            }
            // PostgreSQL ended the session (`pg_terminate_backend`, a restart, a failover):
            // "terminating connection due to administrator command" and its kin (SQLSTATE
            // 57P01-57P03). The statement did not run; the store is unavailable, not broken. A
            // connection held across calls (the ledger writer's) meets it on its next use.
            E::DatabaseError(_, ref info)
                if info.message().starts_with("terminating connection") =>
            {
                StoreError::Unavailable(info.message().to_string())
            }
            other => StoreError::Internal(other),
        }
    }
}

impl From<PoolError> for StoreError {
    fn from(e: PoolError) -> Self {
        StoreError::Unavailable(e.to_string())
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Run `$body` with `$conn` bound to a `&mut` connection of whichever backend `$db` is.
/// The body is expanded once per backend, so every diesel query in it is type-checked for both.
#[macro_export]
macro_rules! with_conn {
    ($db:expr, |$conn:ident| $body:expr) => {{
        match $db.conn().await? {
            $crate::db::Conn::Pg(mut __c) => {
                let $conn: &mut ::diesel_async::AsyncPgConnection = &mut *__c;
                $body
            }
            $crate::db::Conn::Sqlite(mut __c) => {
                let $conn: &mut $crate::db::SqliteConn = &mut *__c;
                $body
            }
        }
    }};
}

/// Options for opening a store.
#[derive(Debug, Clone)]
pub struct DbOptions {
    pub max_connections: usize,
    /// How long a caller waits for a pooled connection before the store counts as unavailable.
    pub wait_timeout: Duration,
}

impl Default for DbOptions {
    fn default() -> Self {
        DbOptions {
            max_connections: 16,
            wait_timeout: Duration::from_secs(5),
        }
    }
}

/// Where the store lives: a PostgreSQL URL, or an SQLite file.
#[derive(Debug, Clone)]
pub enum Location {
    Postgres(String),
    Sqlite(PathBuf),
}

impl Location {
    /// `DATABASE_URL` when given (postgres:// or sqlite://path), else `<data_dir>/terrace.sqlite3`.
    pub fn from_env_or(database_url: Option<&str>, data_dir: &Path) -> Result<Self, StoreError> {
        match database_url.map(str::trim).filter(|s| !s.is_empty()) {
            Some(u) if u.starts_with("postgres://") || u.starts_with("postgresql://") => {
                Ok(Location::Postgres(u.to_string()))
            }
            Some(u) if u.starts_with("sqlite://") => {
                Ok(Location::Sqlite(PathBuf::from(&u["sqlite://".len()..])))
            }
            Some(u) => Err(StoreError::Setup(format!(
                "DATABASE_URL must start with postgres:// or sqlite:// (got {u:?})"
            ))),
            None => Ok(Location::Sqlite(data_dir.join("terrace.sqlite3"))),
        }
    }
}

/// Where and how the service and `cargo xtask` open the store, from the environment.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// `DATABASE_URL`: `postgres://...` for PostgreSQL; unset for the embedded SQLite store.
    pub database_url: Option<String>,
    /// `TERRACE_DATA_DIR`, default `./data`: where the embedded SQLite store lives.
    pub data_dir: PathBuf,
    /// `TERRACE_DB_POOL`, default 16.
    pub pool_size: usize,
}

impl StoreConfig {
    /// Reads `DATABASE_URL`, `TERRACE_DATA_DIR` and `TERRACE_DB_POOL`.
    pub fn from_env() -> Result<Self, String> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let pool_size = match env("TERRACE_DB_POOL") {
            None => 16,
            Some(v) => v
                .trim()
                .parse()
                .map_err(|_| format!("TERRACE_DB_POOL={v:?} is not a number"))?,
        };
        Ok(StoreConfig {
            database_url: env("DATABASE_URL"),
            data_dir: env("TERRACE_DATA_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| "./data".into()),
            pool_size,
        })
    }

    /// Opens the store and applies pending migrations.
    pub async fn open(&self) -> StoreResult<Db> {
        let location = Location::from_env_or(self.database_url.as_deref(), &self.data_dir)?;
        let opts = DbOptions {
            max_connections: self.pool_size,
            ..DbOptions::default()
        };
        let db = Db::open(&location, &opts)?;
        db.migrate().await?;
        Ok(db)
    }
}

/// The page cache of each pooled SQLite connection, in KiB: `TERRACE_SQLITE_CACHE_KIB`, else
/// [`SQLITE_CACHE_KIB`].
fn sqlite_cache_kib() -> u32 {
    static KIB: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *KIB.get_or_init(|| {
        std::env::var("TERRACE_SQLITE_CACHE_KIB")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .filter(|&k| k > 0)
            .unwrap_or(SQLITE_CACHE_KIB)
    })
}

/// The default page cache of a pooled SQLite connection, in KiB (8 MiB). Small on purpose: a
/// read transaction that starts after another connection's commit empties the cache, walking its
/// whole page hash, and under charged load the ledger writer commits thousands of times a second;
/// 64 MiB made a store-reading call 27% slower than 8 MiB did, and a 1,000,000-row load took the
/// same 7.4 s with either (docs/BENCHMARKS.md, issue 20, session 18).
const SQLITE_CACHE_KIB: u32 = 8_192;

fn sqlite_setup(url: &str) -> diesel::ConnectionResult<SqliteConn> {
    use diesel::Connection;
    use diesel::connection::SimpleConnection;
    let mut c = SqliteConnection::establish(url)?;
    c.batch_execute(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 10000; \
         PRAGMA foreign_keys = ON; PRAGMA cache_size = -{}; PRAGMA temp_store = MEMORY; \
         PRAGMA wal_autocheckpoint = 16384;",
        sqlite_cache_kib()
    ))
    .map_err(|e| diesel::ConnectionError::BadConnection(e.to_string()))?;
    Ok(SyncConnectionWrapper::with_runtime(c, Inline))
}

impl Db {
    /// Opens a pool. Nothing is connected until the first use; call [`Db::migrate`] next.
    pub fn open(location: &Location, opts: &DbOptions) -> StoreResult<Db> {
        match location {
            Location::Postgres(url) => {
                // Verified recycling (a `SELECT 1` at each checkout) stays on PostgreSQL: with
                // `Fast`, the first query on a connection the server terminated failed with
                // PostgreSQL's "terminating connection" error, which maps to 500, not 503
                // (`recovery::dropped_connections_recover_without_a_restart`). Next step: map that
                // error to `Unavailable` and recycle with `Fast` (one round trip less per query).
                let mgr = AsyncDieselConnectionManager::<AsyncPgConnection>::new(url.clone());
                let pool = Pool::builder(mgr)
                    .max_size(opts.max_connections)
                    .wait_timeout(Some(opts.wait_timeout))
                    .create_timeout(Some(opts.wait_timeout))
                    .runtime(deadpool_runtime())
                    .build()
                    .map_err(|e| StoreError::Setup(e.to_string()))?;
                Ok(Db::Pg(pool, url.as_str().into()))
            }
            Location::Sqlite(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    // A missing directory that cannot be made shows up as unavailability on use.
                    let _ = std::fs::create_dir_all(dir);
                }
                let mut cfg = ManagerConfig::<SqliteConn>::default();
                // In-process: nothing to verify with a query at each checkout.
                cfg.recycling_method = RecyclingMethod::Fast;
                cfg.custom_setup = Box::new(|url| {
                    let url = url.to_string();
                    Box::pin(async move { sqlite_setup(&url) })
                });
                let mgr = AsyncDieselConnectionManager::<SqliteConn>::new_with_config(
                    path.to_string_lossy().to_string(),
                    cfg,
                );
                let pool = Pool::builder(mgr)
                    .max_size(opts.max_connections)
                    .wait_timeout(Some(opts.wait_timeout))
                    .create_timeout(Some(opts.wait_timeout))
                    .runtime(deadpool_runtime())
                    .build()
                    .map_err(|e| StoreError::Setup(e.to_string()))?;
                Ok(Db::Sqlite(pool, path.as_path().into()))
            }
        }
    }

    /// A handle of its own on the same store, with at most `connections` connections, for a task
    /// that should keep its connections warm and never wait behind the shared pool (the ledger
    /// writer: on SQLite its page cache then stays valid between batches, since it is the
    /// process's only steady writer, where a connection taken from the shared pool's queue had
    /// usually missed the writer's commits and re-read its pages).
    pub fn own_pool(&self, connections: usize) -> StoreResult<Db> {
        let opts = DbOptions {
            max_connections: connections.max(1),
            ..DbOptions::default()
        };
        match self {
            Db::Pg(_, url) => Db::open(&Location::Postgres(url.to_string()), &opts),
            Db::Sqlite(_, path) => Db::open(&Location::Sqlite(path.to_path_buf()), &opts),
        }
    }

    pub fn backend(&self) -> Backend {
        match self {
            Db::Pg(..) => Backend::Postgres,
            Db::Sqlite(..) => Backend::Sqlite,
        }
    }

    /// Checks a connection out of the pool; failure means the store is unavailable.
    pub async fn conn(&self) -> StoreResult<Conn> {
        match self {
            Db::Pg(p, _) => Ok(Conn::Pg(p.get().await?)),
            Db::Sqlite(p, _) => Ok(Conn::Sqlite(p.get().await?)),
        }
    }

    /// Applies every pending embedded migration of this backend.
    pub async fn migrate(&self) -> StoreResult<()> {
        self.migrations(false).await
    }

    /// Reverts every migration of this backend (used by the migration test).
    pub async fn revert_all(&self) -> StoreResult<()> {
        self.migrations(true).await
    }

    async fn migrations(&self, revert: bool) -> StoreResult<()> {
        fn run<B: diesel::backend::Backend>(
            h: &mut impl MigrationHarness<B>,
            m: EmbeddedMigrations,
            revert: bool,
        ) -> Result<(), String> {
            let r = if revert {
                h.revert_all_migrations(m).map(|_| ())
            } else {
                h.run_pending_migrations(m).map(|_| ())
            };
            r.map_err(|e| e.to_string())
        }
        match self {
            // PostgreSQL migrations run on their own connection and runtime on a separate thread,
            // so they work from any runtime flavour (the harness is synchronous).
            Db::Pg(_, url) => {
                let url = url.to_string();
                let joined = std::thread::spawn(move || {
                    use diesel::Connection;
                    use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
                    let mut c =
                        <AsyncConnectionWrapper<AsyncPgConnection> as Connection>::establish(&url)
                            .map_err(|e| format!("connecting for migrations: {e}"))?;
                    run(&mut c, PG_MIGRATIONS, revert)
                })
                .join();
                match joined {
                    Ok(Ok(())) => Ok(()),
                    Ok(Err(e)) if e.contains("connecting") => Err(StoreError::Unavailable(e)),
                    Ok(Err(e)) => Err(StoreError::Setup(e)),
                    Err(_) => Err(StoreError::Setup("migration thread panicked".into())),
                }
            }
            Db::Sqlite(p, _) => {
                let mut c = p.get().await?;
                c.spawn_blocking(move |c| {
                    run(c, SQLITE_MIGRATIONS, revert)
                        .map_err(|e| diesel::result::Error::QueryBuilderError(e.into()))
                })
                .await
                .map_err(|e| StoreError::Setup(e.to_string()))
            }
        }
    }

    /// SQLite: copies what the write-ahead log holds into the database file without waiting for
    /// (or stopping) anyone (`PRAGMA wal_checkpoint(PASSIVE)`). PostgreSQL: nothing to do.
    pub async fn checkpoint(&self) -> StoreResult<()> {
        if let Conn::Sqlite(mut c) = self.conn().await? {
            c.batch_execute("PRAGMA wal_checkpoint(PASSIVE)").await?;
        }
        Ok(())
    }

    /// A cheap round trip, for health checks.
    pub async fn ping(&self) -> StoreResult<()> {
        match self.conn().await? {
            Conn::Pg(mut c) => c.batch_execute("SELECT 1").await?,
            Conn::Sqlite(mut c) => c.batch_execute("SELECT 1").await?,
        }
        Ok(())
    }

    /// Closes the pool: open connections are dropped and new checkouts fail.
    pub fn close(&self) {
        match self {
            Db::Pg(p, _) => p.close(),
            Db::Sqlite(p, _) => p.close(),
        }
    }
}

fn deadpool_runtime() -> deadpool::Runtime {
    deadpool::Runtime::Tokio1
}

#[allow(dead_code)]
fn _assert_conn_traits() {
    fn is_async<C: AsyncConnection>() {}
    is_async::<AsyncPgConnection>();
    is_async::<SqliteConn>();
}
