use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel_async::RunQueryDsl;
use terrace_store::testing::TestDb;
use terrace_store::{Backend, with_conn};

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
    let db = &t.db;
    let rows: Vec<Name> = (async {
        Ok::<_, terrace_store::StoreError>(with_conn!(db, |c| diesel::sql_query(sql)
            .load(c)
            .await?))
    })
    .await
    .unwrap();
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
                assert!(
                    body.lines()
                        .any(|l| l.trim_start().starts_with(&format!("{c} "))),
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
                .count();
            assert_eq!(
                declared,
                cols.len(),
                "{dir}: {table} has columns schema.rs lacks"
            );
        }
    }
}
