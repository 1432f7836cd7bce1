//! Per-test isolated databases, each a copy of a migrated template.
//!
//! Running every migration for every test cost more than most tests do (about 0.6 s of DDL per
//! test on PostgreSQL), so each backend keeps a migrated template, named by a hash of its
//! migration set (folder names and SQL), and every test gets a copy of it:
//!
//! - SQLite (no `TERRACE_TEST_DATABASE_URL`): the template is `terrace-template-<hash>.sqlite3`
//!   in the temp dir. A process that finds none migrates a scratch file under a unique name,
//!   writes it out whole with `VACUUM INTO` and renames the result into place, so processes that
//!   race each end with a complete file and whichever rename lands last wins (the files are
//!   identical). Each test copies the template to a file of its own, removed with its `-wal` and
//!   `-shm` files when the `TestDb` drops.
//! - PostgreSQL (`TERRACE_TEST_DATABASE_URL=postgres://.../<db>`): the template is the database
//!   `<db>_template_<hash>`, built under a PostgreSQL advisory lock (migrated under a scratch name
//!   and renamed, so nobody sees a half-migrated template). Each test runs
//!   `CREATE DATABASE <db>_t<pid>_<n>_<nanos> TEMPLATE <db>_template_<hash>` and connects to it
//!   with that name as its `application_name`. On drop the database goes `WITH (FORCE)` on a
//!   background thread, because PostgreSQL 15 checkpoints in every `DROP DATABASE` (about a
//!   second here) and concurrent drops share their checkpoints; what a process leaves behind
//!   when it exits is dropped by the next test process that starts on the same database.
//!
//! When the migration folders cannot be read (a test binary run away from its source tree),
//! every test database is migrated from scratch instead, as before templates.
//!
//! Many tests start from the same loaded data (the fixture world, loaded through the real
//! loaders), which costs far more than migrating. [`TestDb::prepared`] loads such data once per
//! test process under a key, into a copy of the migrated template, and keeps the result as a
//! second template that each such test copies the same way: on SQLite the file
//! `terrace-t<pid>-prepared-<key>.sqlite3` (written with `VACUUM INTO`; a later process removes
//! the files of processes that are gone), on PostgreSQL the database `<db>_t<pid>_p_<key>` (left
//! for the next process's clean-up of gone processes' databases, like any test database). The
//! tests that check loading itself (loading, loading twice) still load for themselves.

use crate::db::{Db, DbOptions, Location, StoreError};
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

pub const TEST_DB_ENV: &str = "TERRACE_TEST_DATABASE_URL";

pub struct TestDb {
    pub db: Db,
    pub location: Location,
    /// The database name on PostgreSQL (also the connections' `application_name`); the file
    /// stem on SQLite.
    pub name: String,
    cleanup: Cleanup,
}

enum Cleanup {
    Sqlite(PathBuf),
    PgDatabase {
        admin_url: String,
        database: String,
    },
    /// A PostgreSQL database kept as a prepared template for the rest of the process.
    Kept,
}

/// Where a test database's copy comes from.
#[derive(Clone)]
enum Source {
    /// The migrated template of the backend (or a fresh migration without one).
    Migrated,
    /// A prepared SQLite file.
    SqliteFile(PathBuf),
    /// A prepared PostgreSQL database.
    PgDatabase(String),
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

/// A hash of one migration set (`migrations/sqlite` or `migrations/postgres`): every folder's
/// name and its `up.sql` and `down.sql`, in name order. `None` when the folders cannot be read.
fn migrations_hash(set: &str) -> Option<u64> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("migrations")
        .join(set);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    // SipHash with fixed keys: the same input gives the same name in every process of a build.
    let mut h = std::hash::DefaultHasher::new();
    set.hash(&mut h);
    for dir in &dirs {
        dir.file_name()?.to_string_lossy().hash(&mut h);
        for file in ["up.sql", "down.sql"] {
            std::fs::read_to_string(dir.join(file))
                .unwrap_or_default()
                .hash(&mut h);
        }
    }
    (!dirs.is_empty()).then(|| h.finish())
}

/// Runs the future `make` gives on a thread of its own with a small runtime, so it can be waited
/// for from inside any runtime (a current-thread runtime must not block on a future of its own).
/// The future is made on that thread, so it need not be `Send` (the loaders' are not).
fn on_own_runtime<M, F>(make: M) -> F::Output
where
    M: FnOnce() -> F + Send + 'static,
    F: std::future::Future,
    F::Output: Send + 'static,
{
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("test runtime")
            .block_on(make())
    })
    .join()
    .expect("test database thread panicked")
}

/// Runs one statement of the test set-up; a failure is a broken test environment.
async fn exec(c: &mut AsyncPgConnection, sql: &str) {
    c.batch_execute(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

impl TestDb {
    /// A fresh, migrated, empty database on the backend the environment selects.
    pub async fn new() -> TestDb {
        Self::with_options(DbOptions::default()).await
    }

    pub async fn with_options(opts: DbOptions) -> TestDb {
        Self::copy_of(&Source::Migrated, opts).await
    }

    /// A copy of a database on which `prepare` ran once in this process under `key` (the first
    /// caller runs it, on a thread of its own; the others wait for it). `key` names what
    /// `prepare` loads, so one key must always mean the same preparation; it is part of a file
    /// or database name, so keep it to `[a-z0-9_]`.
    pub async fn prepared<F, Fut>(key: &'static str, prepare: F) -> TestDb
    where
        F: FnOnce(Db) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + 'static,
    {
        use std::collections::HashMap;
        use std::sync::{Arc, Mutex};
        type Cell = Arc<OnceLock<Source>>;
        static PREPARED: OnceLock<Mutex<HashMap<&'static str, Cell>>> = OnceLock::new();
        assert!(
            key.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "a prepared database's key is [a-z0-9_]: {key}"
        );
        let cell = PREPARED
            .get_or_init(Default::default)
            .lock()
            .expect("the prepared databases' registry")
            .entry(key)
            .or_default()
            .clone();
        let source = cell
            .get_or_init(|| on_own_runtime(move || build_prepared(key, prepare)))
            .clone();
        Self::copy_of(&source, DbOptions::default()).await
    }

    async fn copy_of(source: &Source, opts: DbOptions) -> TestDb {
        let name = unique_name();
        let (location, cleanup, migrated) = match test_pg_url() {
            Some(admin_url) => {
                let pg = PgTarget::parse(&admin_url);
                let database = format!("{}_{name}", pg.base);
                let template = match source {
                    Source::PgDatabase(prepared) => Some(prepared.clone()),
                    Source::Migrated | Source::SqliteFile(_) => pg_template(&admin_url),
                };
                let mut c = AsyncPgConnection::establish(&admin_url)
                    .await
                    .unwrap_or_else(|e| panic!("cannot connect to {TEST_DB_ENV}={admin_url}: {e}"));
                let sql = match &template {
                    Some(t) => format!("CREATE DATABASE \"{database}\" TEMPLATE \"{t}\""),
                    None => format!("CREATE DATABASE \"{database}\""),
                };
                exec(&mut c, &sql).await;
                let url = pg.url_for(&database, &database);
                (
                    Location::Postgres(url),
                    Cleanup::PgDatabase {
                        admin_url,
                        database: database.clone(),
                    },
                    template.is_some(),
                )
            }
            None => {
                let path = std::env::temp_dir().join(format!("terrace-{name}.sqlite3"));
                let template = match source {
                    Source::SqliteFile(prepared) => Some(prepared.as_path()),
                    Source::Migrated | Source::PgDatabase(_) => sqlite_template(),
                };
                let migrated = match template {
                    Some(t) => {
                        std::fs::copy(t, &path).unwrap_or_else(|e| {
                            panic!("copy {} to {}: {e}", t.display(), path.display())
                        });
                        true
                    }
                    None => false,
                };
                (
                    Location::Sqlite(path.clone()),
                    Cleanup::Sqlite(path),
                    migrated,
                )
            }
        };
        let db = Db::open(&location, &opts).expect("open test db");
        if !migrated {
            db.migrate().await.expect("migrate test db");
        }
        let name = match &cleanup {
            Cleanup::PgDatabase { database, .. } => database.clone(),
            Cleanup::Sqlite(_) | Cleanup::Kept => name,
        };
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
            Cleanup::Sqlite(path) => remove_sqlite(path),
            Cleanup::PgDatabase {
                admin_url,
                database,
            } => pg_dropper(admin_url.clone(), database.clone()),
            Cleanup::Kept => {}
        }
    }
}

/// Runs `prepare` on a fresh copy of the migrated template and keeps the result as the source of
/// the copies made under `key`.
async fn build_prepared<F, Fut>(key: &'static str, prepare: F) -> Source
where
    F: FnOnce(Db) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut t = TestDb::new().await;
    prepare(t.db.clone()).await;
    match &t.location {
        Location::Sqlite(_) => {
            remove_gone_prepared_files();
            let out = std::env::temp_dir().join(format!(
                "terrace-t{}-prepared-{key}.sqlite3",
                std::process::id()
            ));
            remove_sqlite(&out);
            vacuum_into(&t.db, &out)
                .await
                .unwrap_or_else(|e| panic!("writing the prepared database {key}: {e}"));
            Source::SqliteFile(out)
        }
        Location::Postgres(_) => {
            let Cleanup::PgDatabase {
                admin_url,
                database,
            } = std::mem::replace(&mut t.cleanup, Cleanup::Kept)
            else {
                unreachable!("a PostgreSQL test database is dropped when done")
            };
            t.db.close();
            let pg = PgTarget::parse(&admin_url);
            let kept = format!("{}_t{}_p_{key}", pg.base, std::process::id());
            let mut c = AsyncPgConnection::establish(&admin_url)
                .await
                .unwrap_or_else(|e| panic!("cannot connect to {TEST_DB_ENV}={admin_url}: {e}"));
            exec(
                &mut c,
                &format!("DROP DATABASE IF EXISTS \"{kept}\" WITH (FORCE)"),
            )
            .await;
            // The closed pool's backends may still be ending: WITH (FORCE) is not available on
            // RENAME, so wait for them as CREATE DATABASE ... TEMPLATE would.
            rename_when_idle(&mut c, &database, &kept).await;
            Source::PgDatabase(kept)
        }
    }
}

/// Renames a database once no session is connected to it (a pool's backends end a moment after
/// the pool closes).
async fn rename_when_idle(c: &mut AsyncPgConnection, from: &str, to: &str) {
    let sql = format!("ALTER DATABASE \"{from}\" RENAME TO \"{to}\"");
    for _ in 0..100 {
        if c.batch_execute(&sql).await.is_ok() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    exec(c, &sql).await;
}

/// Removes the prepared SQLite files of test processes that are gone.
fn remove_gone_prepared_files() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("terrace-t") else {
            continue;
        };
        let Some((pid, tail)) = rest.split_once('-') else {
            continue;
        };
        if tail.starts_with("prepared-") && process_gone(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn remove_sqlite(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.to_path_buf().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

/// Writes an SQLite store out whole as one self-contained file (no WAL beside it) that tests
/// can copy as it is.
async fn vacuum_into(db: &Db, out: &Path) -> Result<(), StoreError> {
    let into = out.to_string_lossy().replace('\'', "''");
    match db.conn().await? {
        crate::db::Conn::Sqlite(mut c) => {
            c.batch_execute(&format!("VACUUM INTO '{into}'")).await?;
            Ok(())
        }
        crate::db::Conn::Pg(_) => unreachable!("an SQLite location opens SQLite"),
    }
}

/// Whether `pid` (digits) names a process that is gone: false when it is not a pid, or where
/// `/proc` does not tell which processes live.
fn process_gone(pid: &str) -> bool {
    let proc_root = Path::new("/proc");
    !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && proc_root.join("self").exists()
        && !proc_root.join(pid).exists()
}

/// The process's SQLite template (made on first use), or `None` without migration folders.
fn sqlite_template() -> Option<&'static Path> {
    static TEMPLATE: OnceLock<Option<PathBuf>> = OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            let hash = migrations_hash("sqlite")?;
            let path = std::env::temp_dir().join(format!("terrace-template-{hash:016x}.sqlite3"));
            if !path.exists() {
                build_sqlite_template(&path);
            }
            Some(path)
        })
        .as_deref()
}

fn build_sqlite_template(path: &Path) {
    let scratch = path.with_extension(format!("{}.building", unique_name()));
    let out = path.with_extension(format!("{}.tmp", unique_name()));
    let (s, o) = (scratch.clone(), out.clone());
    let built = on_own_runtime(move || async move {
        let db = Db::open(&Location::Sqlite(s), &DbOptions::default())?;
        db.migrate().await?;
        vacuum_into(&db, &o).await?;
        db.close();
        Ok::<(), StoreError>(())
    });
    remove_sqlite(&scratch);
    built.unwrap_or_else(|e| panic!("building the SQLite test template: {e}"));
    std::fs::rename(&out, path).unwrap_or_else(|e| {
        panic!(
            "renaming the test template {} to {}: {e}",
            out.display(),
            path.display()
        )
    });
}

/// The pieces of `TERRACE_TEST_DATABASE_URL` needed to name and reach other databases.
struct PgTarget {
    /// Everything before the database name (`postgres://user@host:port`).
    prefix: String,
    /// The query string, without its `?`.
    query: String,
    /// The database name, reduced to `[a-z0-9_]` and at most 24 characters, used as the prefix
    /// of the template's and the tests' database names.
    base: String,
}

impl PgTarget {
    fn parse(url: &str) -> PgTarget {
        let (head, query) = url.split_once('?').unwrap_or((url, ""));
        let authority_start = head.find("://").map(|i| i + 3).unwrap_or(0);
        let (prefix, db) = match head[authority_start..].find('/') {
            Some(i) => (
                &head[..authority_start + i],
                &head[authority_start + i + 1..],
            ),
            None => (head, ""),
        };
        let mut base: String = db
            .chars()
            .map(|c| match c.to_ascii_lowercase() {
                c @ ('a'..='z' | '0'..='9' | '_') => c,
                _ => '_',
            })
            .take(24)
            .collect();
        if base.is_empty() {
            base = "terrace".into();
        }
        PgTarget {
            prefix: prefix.to_string(),
            query: query.to_string(),
            base,
        }
    }

    fn url_for(&self, database: &str, application_name: &str) -> String {
        let mut query = self.query.clone();
        if !application_name.is_empty() {
            if !query.is_empty() {
                query.push('&');
            }
            query.push_str(&format!("application_name={application_name}"));
        }
        let sep = if query.is_empty() { "" } else { "?" };
        format!("{}/{database}{sep}{query}", self.prefix)
    }
}

/// The name of this process's PostgreSQL template database (made on first use, race-free across
/// processes), or `None` without migration folders.
fn pg_template(admin_url: &str) -> Option<String> {
    static TEMPLATE: OnceLock<Option<String>> = OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            let hash = migrations_hash("postgres")?;
            let admin_url = admin_url.to_string();
            Some(on_own_runtime(move || async move {
                ensure_pg_template(&admin_url, hash).await
            }))
        })
        .clone()
}

async fn ensure_pg_template(admin_url: &str, hash: u64) -> String {
    let pg = PgTarget::parse(admin_url);
    let template = format!("{}_template_{hash:016x}", pg.base);
    let scratch = format!("{}_template_build", pg.base);
    let mut c = AsyncPgConnection::establish(admin_url)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {TEST_DB_ENV}={admin_url}: {e}"));
    // Advisory locks are per database, which is the scope of the template's name too.
    exec(&mut c, &format!("SELECT pg_advisory_lock({})", hash as i64)).await;
    if !pg_database_exists(&mut c, &template).await {
        let drop_scratch = format!("DROP DATABASE IF EXISTS \"{scratch}\" WITH (FORCE)");
        exec(&mut c, &drop_scratch).await;
        exec(&mut c, &format!("CREATE DATABASE \"{scratch}\"")).await;
        let db = Db::open(
            &Location::Postgres(pg.url_for(&scratch, "")),
            &DbOptions::default(),
        )
        .expect("open the template database");
        db.migrate()
            .await
            .unwrap_or_else(|e| panic!("migrating the test template {scratch}: {e}"));
        db.close();
        let rename = format!("ALTER DATABASE \"{scratch}\" RENAME TO \"{template}\"");
        exec(&mut c, &rename).await;
    }
    exec(
        &mut c,
        &format!("SELECT pg_advisory_unlock({})", hash as i64),
    )
    .await;
    drop_leftovers(&mut c, &pg.base, admin_url).await;
    template
}

async fn pg_database_exists(c: &mut AsyncPgConnection, name: &str) -> bool {
    database_names(c, name)
        .await
        .iter()
        .any(|n| n.as_str() == name)
}

/// Database names starting with `prefix` (compared literally).
async fn database_names(c: &mut AsyncPgConnection, prefix: &str) -> Vec<String> {
    use diesel::QueryableByName;
    use diesel::sql_types::Text;
    use diesel_async::RunQueryDsl;
    #[derive(QueryableByName)]
    struct Name {
        #[diesel(sql_type = Text)]
        datname: String,
    }
    let rows: Vec<Name> = diesel::sql_query(
        "SELECT datname::text AS datname FROM pg_database WHERE starts_with(datname::text, $1)",
    )
    .bind::<Text, _>(prefix)
    .load(c)
    .await
    .unwrap_or_default();
    rows.into_iter().map(|r| r.datname).collect()
}

/// Drops the test databases of processes that are gone (a test process exits without waiting for
/// its last background drops). Only where `/proc` tells which processes live. The drops go to
/// this process's dropper thread, beside its tests: one after another here, a test binary's
/// first test waited for every database the binary before it left (on PostgreSQL 15 each drop
/// is a checkpoint; 231 of them took 7 minutes of the suite; docs/BENCHMARKS.md, "Build and CI
/// time").
async fn drop_leftovers(c: &mut AsyncPgConnection, base: &str, admin_url: &str) {
    let prefix = format!("{base}_t");
    for name in database_names(c, &prefix).await {
        let pid = name[prefix.len()..].split('_').next().unwrap_or("");
        if process_gone(pid) {
            pg_dropper(admin_url.to_string(), name);
        }
    }
}

/// Hands a test database to the process's dropper thread, which drops whatever has queued up,
/// a few at a time, each on its own connection (their checkpoints overlap).
fn pg_dropper(admin_url: String, database: String) {
    static QUEUE: OnceLock<std::sync::Mutex<mpsc::Sender<(String, String)>>> = OnceLock::new();
    let queue = QUEUE.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<(String, String)>();
        std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            while let Ok(first) = rx.recv() {
                let mut batch = vec![first];
                while batch.len() < 8
                    && let Ok(more) = rx.try_recv()
                {
                    batch.push(more);
                }
                rt.block_on(futures_util::future::join_all(batch.into_iter().map(
                    |(url, db)| async move {
                        if let Ok(mut c) = AsyncPgConnection::establish(&url).await {
                            let _ = c
                                .batch_execute(&format!(
                                    "DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"
                                ))
                                .await;
                        }
                    },
                )));
            }
        });
        std::sync::Mutex::new(tx)
    });
    if let Ok(tx) = queue.lock() {
        let _ = tx.send((admin_url, database));
    }
}

/// A postcode directory row for tests: the postcode in local authority `lad`, with no position,
/// no other geography and source `test` (set what a test needs with struct update syntax).
pub fn postcode_row(postcode: &str, lad: &str) -> crate::address::PostcodeRow {
    crate::address::PostcodeRow {
        postcode: postcode.into(),
        easting: None,
        northing: None,
        lat: None,
        lon: None,
        lad_code: Some(lad.into()),
        lsoa_code: None,
        country_code: None,
        quality: None,
        terminated: false,
        source: "test".into(),
        updated_at: chrono::NaiveDate::from_ymd_opt(2026, 1, 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .unwrap_or_default(),
        ward_code: None,
        msoa_code: None,
        county_code: None,
        region_code: None,
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
