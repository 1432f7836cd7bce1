use diesel::QueryableByName;
use diesel::sql_types::Text;
use terrace_store::Backend;
use terrace_store::testing::TestDb;

#[derive(QueryableByName, Debug)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

async fn table_names(t: &TestDb) -> Vec<String> {
    let sql = match t.db.backend() {
        Backend::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'table' \
                            AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__diesel%' ORDER BY name"
        }
        Backend::Postgres => {
            "SELECT table_name AS name FROM information_schema.tables \
                              WHERE table_schema = current_schema() \
                              AND table_name NOT LIKE '__diesel%' ORDER BY table_name"
        }
    };
    let rows: Vec<Name> = crate::load_sql(&t.db, sql).await;
    rows.into_iter().map(|r| r.name).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn migrations_apply_and_revert_cleanly() {
    let t = TestDb::new().await;
    let tables = table_names(&t).await;
    for want in [
        "accounts",
        "api_keys",
        "ledger",
        "addresses",
        "price_paid",
        "load_runs",
    ] {
        assert!(
            tables.iter().any(|n| n == want),
            "{want} missing from {tables:?}"
        );
    }
    t.db.revert_all().await.unwrap();
    assert_eq!(table_names(&t).await, Vec::<String>::new());
    t.db.migrate().await.unwrap();
    assert_eq!(table_names(&t).await, tables);
}

/// Every foreign key column has an index whose first column it is (both migration sets).
#[test]
fn every_foreign_key_is_indexed() {
    for dir in ["migrations/sqlite", "migrations/postgres"] {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        for entry in std::fs::read_dir(&root).unwrap() {
            let sql = std::fs::read_to_string(entry.unwrap().path().join("up.sql")).unwrap();
            let mut table = String::new();
            for line in sql.lines() {
                let l = line.trim();
                if let Some(rest) = l.strip_prefix("CREATE TABLE ") {
                    table = rest.split_whitespace().next().unwrap().to_string();
                }
                if l.contains(" REFERENCES ") {
                    let col = l.split_whitespace().next().unwrap();
                    let wanted = format!("ON {table} ({col}");
                    // A composite primary key that starts with the column indexes it too.
                    let start = sql.find(&format!("CREATE TABLE {table} (")).unwrap();
                    let body = &sql[start..start + sql[start..].find("\n);").unwrap()];
                    let pk_first = body.contains(&format!("PRIMARY KEY ({col},"));
                    assert!(
                        sql.contains(&wanted) || pk_first,
                        "{dir}: {table}.{col} has no index ({wanted})"
                    );
                }
            }
        }
    }
}

/// Every table and column of `schema.rs` is created by both migration sets (schema drift check).
#[test]
fn schema_matches_migrations() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let schema = std::fs::read_to_string(root.join("src/schema.rs")).unwrap();
    let mut tables: Vec<(String, Vec<String>)> = Vec::new();
    let mut in_table = false;
    for line in schema.lines() {
        let l = line.trim();
        if let Some(name) = l.strip_suffix(") {").and_then(|x| x.split(" (").next())
            && !l.starts_with("diesel::")
            && !l.contains("->")
        {
            tables.push((name.to_string(), Vec::new()));
            in_table = true;
            continue;
        }
        if in_table && l == "}" {
            in_table = false;
        }
        if in_table && let Some((col, _)) = l.split_once(" ->") {
            tables.last_mut().unwrap().1.push(col.trim().to_string());
        }
    }
    assert!(tables.len() >= 11, "{tables:?}");
    for dir in ["migrations/sqlite", "migrations/postgres"] {
        let mut sql = String::new();
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            sql.push_str(&std::fs::read_to_string(entry.unwrap().path().join("up.sql")).unwrap());
        }
        for (table, cols) in &tables {
            let start = sql
                .find(&format!("CREATE TABLE {table} ("))
                .unwrap_or_else(|| panic!("{dir}: no table {table}"));
            let body = &sql[start..start + sql[start..].find("\n);").unwrap()];
            for c in cols {
                let added = format!("ALTER TABLE {table} ADD COLUMN {c} ");
                assert!(
                    body.lines()
                        .any(|l| l.trim_start().starts_with(&format!("{c} ")))
                        || sql.lines().any(|l| l.trim_start().starts_with(&added)),
                    "{dir}: {table}.{c} missing"
                );
            }
            // Table constraints (composite keys, UNIQUE) are not columns.
            let constraint = |l: &str| {
                let l = l.trim_start();
                ["PRIMARY KEY (", "UNIQUE (", "FOREIGN KEY", "CHECK ("]
                    .iter()
                    .any(|k| l.starts_with(k))
            };
            let declared = body
                .lines()
                .skip(1)
                .filter(|l| !l.trim().is_empty() && !constraint(l))
                .count()
                + sql
                    .lines()
                    .filter(|l| {
                        l.trim_start()
                            .starts_with(&format!("ALTER TABLE {table} ADD COLUMN "))
                    })
                    .count();
            assert_eq!(
                declared,
                cols.len(),
                "{dir}: {table} has columns schema.rs lacks"
            );
        }
    }
}

/// A table's columns: name -> (type, not null), the type in one spelling for both backends.
type Columns = std::collections::BTreeMap<String, (String, bool)>;
type Tables = std::collections::BTreeMap<String, Columns>;

/// One spelling per column type: `INTEGER PRIMARY KEY AUTOINCREMENT` (SQLite's 64-bit rowid)
/// and `BIGINT GENERATED ... AS IDENTITY` are both `bigint`; `DOUBLE` and `DOUBLE PRECISION` are
/// `double`; `BLOB` and `BYTEA` are `bytes`; PostgreSQL's `timestamp without time zone` is
/// `timestamp`.
fn normalise_type(raw: &str, rowid: bool) -> String {
    let t = raw.trim().to_ascii_lowercase();
    let t = match t.as_str() {
        "integer" if rowid => "bigint",
        "double" | "double precision" | "real" => "double",
        "blob" | "bytea" => "bytes",
        "timestamp without time zone" => "timestamp",
        "bool" => "boolean",
        "int" | "int4" => "integer",
        "int8" => "bigint",
        other => other,
    };
    t.to_string()
}

/// The migration folders of one tree (`sqlite` or `postgres`), sorted.
fn migration_folders(tree: &str) -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("migrations")
        .join(tree);
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// The tables and columns one `up.sql` creates (`CREATE TABLE name (` ... `\n);`).
fn parse_tables(sql: &str) -> Tables {
    let mut out = Tables::new();
    let mut rest = sql;
    while let Some(start) = rest.find("CREATE TABLE ") {
        let after = &rest[start + "CREATE TABLE ".len()..];
        let name = after.split_whitespace().next().unwrap().to_string();
        // Not a definition: a partition (`CREATE TABLE x PARTITION OF ...`) or a table a
        // function makes by name at run time (`format('CREATE TABLE %I ...')`).
        let defined = name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && after[name.len()..].trim_start().starts_with('(');
        if !defined {
            rest = after;
            continue;
        }
        // `\n);`, or `\n) PARTITION BY ...;` for a partitioned table.
        let end = after
            .find("\n)")
            .expect("a CREATE TABLE ends with a line that starts with `)`");
        let body = &after[after.find('(').unwrap() + 1..end];
        let mut cols = Columns::new();
        for line in body.lines() {
            let l = line
                .split("--")
                .next()
                .unwrap()
                .trim()
                .trim_end_matches(',');
            let constraint = ["PRIMARY KEY (", "UNIQUE (", "FOREIGN KEY", "CHECK ("]
                .iter()
                .any(|k| l.starts_with(k));
            if l.is_empty() || constraint {
                continue;
            }
            let (col, def) = column(l);
            cols.insert(col, def);
        }
        // Columns a composite primary key names are not null too.
        if let Some(pk) = body.find("PRIMARY KEY (") {
            let list = &body[pk + "PRIMARY KEY (".len()..];
            for c in list[..list.find(')').unwrap()].split(',') {
                if let Some(col) = cols.get_mut(c.trim()) {
                    col.1 = true;
                }
            }
        }
        out.insert(name, cols);
        rest = &after[end..];
    }
    // Columns added later: `ALTER TABLE name ADD COLUMN col TYPE ...;`, one statement a line.
    for line in sql.lines() {
        let l = line
            .split("--")
            .next()
            .unwrap()
            .trim()
            .trim_end_matches(';');
        let Some(after) = l.strip_prefix("ALTER TABLE ") else {
            continue;
        };
        let Some((name, def)) = after.split_once(" ADD COLUMN ") else {
            continue;
        };
        let (col, def) = column(def);
        out.entry(name.trim().to_string())
            .or_default()
            .insert(col, def);
    }
    out
}

/// One column definition (`name TYPE [constraints]`): its name, normalised type and nullability.
fn column(l: &str) -> (String, (String, bool)) {
    const STOP: [&str; 9] = [
        "NOT",
        "NULL",
        "PRIMARY",
        "REFERENCES",
        "UNIQUE",
        "CHECK",
        "DEFAULT",
        "GENERATED",
        "COLLATE",
    ];
    let mut words = l.split_whitespace();
    let col = words.next().unwrap().to_string();
    let ty: Vec<&str> = words.take_while(|w| !STOP.contains(w)).collect();
    let upper = l.to_ascii_uppercase();
    // `INTEGER PRIMARY KEY`, with or without AUTOINCREMENT, is the table's 64-bit rowid.
    let rowid = upper.contains("AUTOINCREMENT")
        || (ty.len() == 1
            && ty[0].eq_ignore_ascii_case("INTEGER")
            && upper.contains("PRIMARY KEY"));
    let not_null = upper.contains("NOT NULL") || upper.contains("PRIMARY KEY");
    (col, (normalise_type(&ty.join(" "), rowid), not_null))
}

fn parse_tree(tree: &str) -> Vec<(String, Tables)> {
    migration_folders(tree)
        .into_iter()
        .map(|dir| {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            let sql = std::fs::read_to_string(dir.join("up.sql")).unwrap();
            for f in ["up.sql", "down.sql"] {
                assert!(dir.join(f).is_file(), "{tree}/{name} has no {f}");
            }
            (name, parse_tables(&sql))
        })
        .collect()
}

/// The tables a whole tree ends with: each folder's tables, and the columns later folders add.
fn merged(tree: &[(String, Tables)]) -> Tables {
    let mut out = Tables::new();
    for (_, tables) in tree {
        for (name, cols) in tables {
            out.entry(name.clone()).or_default().extend(cols.clone());
        }
    }
    out
}

/// The SQLite and PostgreSQL migration trees stay parallel: the same folders, and each folder
/// creates the same tables with the same columns (same types after normalising the spellings,
/// same nullability). A table an SQLite folder creates again (SQLite changes a table's key or
/// constraints by rebuilding it) has the columns PostgreSQL's tree has for it by then.
#[test]
fn migration_trees_are_parallel() {
    let sqlite = parse_tree("sqlite");
    let postgres = parse_tree("postgres");
    let names = |t: &[(String, Tables)]| t.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&sqlite), names(&postgres), "migration folders differ");
    assert!(sqlite.len() >= 11, "{:?}", names(&sqlite));
    for (i, ((folder, s), (_, p))) in sqlite.iter().zip(&postgres).enumerate() {
        let earlier = merged(&postgres[..i]);
        let earlier_sqlite = merged(&sqlite[..i]);
        let (rebuilt, created): (Tables, Tables) = s
            .clone()
            .into_iter()
            .partition(|(table, _)| earlier.contains_key(table) && !p.contains_key(table));
        let (pg_rebuilt, pg_created): (Tables, Tables) = p
            .clone()
            .into_iter()
            .partition(|(table, _)| earlier_sqlite.contains_key(table) && !s.contains_key(table));
        assert_eq!(
            created.keys().collect::<Vec<_>>(),
            pg_created.keys().collect::<Vec<_>>(),
            "{folder}: the trees create different tables"
        );
        for (table, cols) in &created {
            assert_eq!(
                cols, &p[table],
                "{folder}: {table} differs (sqlite, postgres)"
            );
        }
        for (table, cols) in &rebuilt {
            assert_eq!(
                cols, &earlier[table],
                "{folder}: SQLite's rebuilt {table} differs from PostgreSQL's"
            );
        }
        // PostgreSQL rebuilds a table too, where it changes its key or partitions it.
        for (table, cols) in &pg_rebuilt {
            assert_eq!(
                cols, &earlier_sqlite[table],
                "{folder}: PostgreSQL's rebuilt {table} differs from SQLite's"
            );
        }
    }
}

#[derive(QueryableByName, Debug)]
struct ColumnInfo {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = Text)]
    column_name: String,
    #[diesel(sql_type = Text)]
    data_type: String,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    not_null: bool,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    rowid: bool,
}

/// The tables and columns of a migrated database, as the database itself reports them.
async fn introspect(db: &terrace_store::Db) -> Tables {
    let sql = match db.backend() {
        Backend::Sqlite => {
            "SELECT m.name AS table_name, c.name AS column_name, c.type AS data_type, \
             (c.\"notnull\" = 1 OR c.pk > 0) AS not_null, \
             (c.pk = 1 AND upper(c.type) = 'INTEGER' AND \
              (SELECT count(*) FROM pragma_table_info(m.name) k WHERE k.pk > 0) = 1) AS rowid \
             FROM sqlite_master m, pragma_table_info(m.name) c \
             WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' \
             AND m.name NOT LIKE '__diesel%'"
        }
        Backend::Postgres => {
            "SELECT table_name::text AS table_name, column_name::text AS column_name, \
             data_type::text AS data_type, is_nullable = 'NO' AS not_null, false AS rowid \
             FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name NOT LIKE '__diesel%' \
             AND table_name NOT IN (SELECT c.relname FROM pg_inherits i \
                                    JOIN pg_class c ON c.oid = i.inhrelid)"
        }
    };
    let rows: Vec<ColumnInfo> = crate::load_sql(db, sql).await;
    let mut out = Tables::new();
    for r in rows {
        out.entry(r.table_name).or_default().insert(
            r.column_name,
            (normalise_type(&r.data_type, r.rowid), r.not_null),
        );
    }
    out
}

/// A freshly migrated SQLite database has the tables and columns both trees declare; with
/// `TERRACE_TEST_DATABASE_URL` set, a freshly migrated PostgreSQL schema has the same ones too.
#[tokio::test(flavor = "multi_thread")]
async fn migrated_backends_have_the_same_columns() {
    let path = std::env::temp_dir().join(format!(
        "terrace-parallel-{}-{}.sqlite3",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let sqlite = terrace_store::Db::open(
        &terrace_store::Location::Sqlite(path.clone()),
        &terrace_store::DbOptions::default(),
    )
    .unwrap();
    sqlite.migrate().await.unwrap();
    let live_sqlite = introspect(&sqlite).await;
    sqlite.close();
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.clone().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
    assert_eq!(
        live_sqlite,
        merged(&parse_tree("sqlite")),
        "SQLite's own view differs from the parsed sqlite tree"
    );
    assert_eq!(
        live_sqlite,
        merged(&parse_tree("postgres")),
        "migrated SQLite differs from the parsed postgres tree"
    );
    if terrace_store::testing::test_pg_url().is_some() {
        let t = TestDb::new().await;
        assert_eq!(t.db.backend(), Backend::Postgres);
        assert_eq!(
            introspect(&t.db).await,
            live_sqlite,
            "migrated PostgreSQL differs from migrated SQLite"
        );
    }
}
