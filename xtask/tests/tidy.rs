//! Tidy: the house rules no compiler checks, read from the tree as text (std only, so this binary
//! links in a moment).
//!
//! - `docs/ARCHITECTURE.md` gives every crate exactly one `### \`<path>\`` heading, names every
//!   store module exactly once in the store's section, and has no paragraph twice (merge damage).
//! - The SQLite and PostgreSQL migration trees have the same folders, each with `up.sql` and
//!   `down.sql`.
//! - The pages (`gateway/src/hub.rs`, `gateway/src/web.rs`, `gateway/src/oauth/`) never turn a
//!   store error into a 503 with a catch-all (`Err(_) =>`, `_ =>`, `|_|`): unavailability is 503,
//!   any other store fault is a 500, so each site matches the error.
//! - Each crate has at most one integration-test target (one binary to link).
//! - Every committed insta snapshot is referenced by a test, and no pending snapshot
//!   (`.snap.new`, `.pending-snap`) lies in the tree.
//!
//! "Every declared operation is served" is checked by the gateway's contract tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn sorted_dir(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// The workspace's crates as paths from the root: `crates/*` with a manifest, `gateway`, `xtask`.
fn crates() -> Vec<String> {
    let mut out: Vec<String> = sorted_dir(&root().join("crates"))
        .into_iter()
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| format!("crates/{}", name(&p)))
        .collect();
    out.push("gateway".into());
    out.push("xtask".into());
    out
}

/// The `### \`x\`` headings of the architecture map, as the code span they start with.
fn headings(doc: &str) -> Vec<String> {
    doc.lines()
        .filter_map(|l| l.strip_prefix("### `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect()
}

/// The map stays a map (issue 39): at most 200 lines, none over 400 characters; detail belongs in
/// the crates' `//!` documentation and in BENCHMARKS.md.
#[test]
fn architecture_is_a_short_map() {
    let doc = read("docs/ARCHITECTURE.md");
    let lines = doc.lines().count();
    assert!(
        lines <= 200,
        "docs/ARCHITECTURE.md has {lines} lines (at most 200)"
    );
    let long: Vec<String> = doc
        .lines()
        .enumerate()
        .filter(|(_, l)| l.chars().count() > 400)
        .map(|(i, l)| format!("line {}: {} characters", i + 1, l.chars().count()))
        .collect();
    assert!(
        long.is_empty(),
        "docs/ARCHITECTURE.md:\n{}",
        long.join("\n")
    );
}

#[test]
fn architecture_has_one_heading_per_crate() {
    let doc = read("docs/ARCHITECTURE.md");
    let heads = headings(&doc);
    let mut problems = Vec::new();
    for c in crates() {
        let n = heads.iter().filter(|h| **h == c).count();
        if n != 1 {
            problems.push(format!(
                "`{c}` has {n} `### \\`{c}\\`` headings (want exactly 1)"
            ));
        }
    }
    for h in &heads {
        if !root().join(h).exists() {
            problems.push(format!("heading `{h}` names nothing in the tree"));
        }
    }
    assert!(
        problems.is_empty(),
        "docs/ARCHITECTURE.md:\n{}",
        problems.join("\n")
    );
}

/// The text of the section under `### \`<path>\`` up to the next heading.
fn section<'a>(doc: &'a str, path: &str) -> &'a str {
    let head = format!("### `{path}`");
    let start = doc
        .find(&head)
        .unwrap_or_else(|| panic!("docs/ARCHITECTURE.md has no {head} section"));
    let body = &doc[start + head.len()..];
    let end = body.find("\n#").map(|i| i + 1).unwrap_or(body.len());
    &body[..end]
}

#[test]
fn architecture_names_each_store_module_once() {
    let doc = read("docs/ARCHITECTURE.md");
    let store = section(&doc, "crates/store");
    let src = root().join("crates/store/src");
    let mut problems = Vec::new();
    for p in sorted_dir(&src) {
        let n = name(&p);
        // A module is a file `x.rs` or a folder `x/` (unless `x.rs` stands for it).
        let spellings: Vec<String> = if p.is_dir() {
            if src.join(format!("{n}.rs")).exists() {
                continue;
            }
            vec![format!("`{n}/`"), format!("`src/{n}/`")]
        } else if n.ends_with(".rs") && n != "lib.rs" {
            vec![format!("`{n}`"), format!("`src/{n}`")]
        } else {
            continue;
        };
        let count: usize = spellings.iter().map(|s| store.matches(s).count()).sum();
        if count != 1 {
            problems.push(format!(
                "{} is named {count} times in the store section (want exactly 1)",
                spellings[0]
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "docs/ARCHITECTURE.md, `crates/store` section:\n{}",
        problems.join("\n")
    );
}

#[test]
fn architecture_has_no_paragraph_twice() {
    let doc = read("docs/ARCHITECTURE.md");
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut problems = Vec::new();
    for (i, line) in doc.lines().enumerate() {
        let l = line.trim();
        // Long prose lines only: tables, headings and short list items repeat legitimately.
        if l.len() < 80 || l.starts_with('|') || l.starts_with('#') {
            continue;
        }
        let key: String = l.chars().take(80).collect();
        if let Some(first) = seen.insert(key, i + 1) {
            problems.push(format!(
                "line {} starts like line {first}: {}...",
                i + 1,
                &l[..l.char_indices().nth(60).map(|(i, _)| i).unwrap_or(l.len())]
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "docs/ARCHITECTURE.md repeats itself (merge damage?):\n{}",
        problems.join("\n")
    );
}

#[test]
fn migration_trees_are_parallel() {
    let base = root().join("crates/store/migrations");
    let folders = |set: &str| -> Vec<String> {
        sorted_dir(&base.join(set))
            .into_iter()
            .filter(|p| p.is_dir())
            .map(|p| name(&p))
            .collect()
    };
    let (sqlite, postgres) = (folders("sqlite"), folders("postgres"));
    assert_eq!(
        sqlite, postgres,
        "crates/store/migrations/sqlite and /postgres must have the same folders"
    );
    for set in ["sqlite", "postgres"] {
        for f in &sqlite {
            for file in ["up.sql", "down.sql"] {
                assert!(
                    base.join(set).join(f).join(file).is_file(),
                    "migrations/{set}/{f}/{file} is missing"
                );
            }
        }
    }
}

/// Every `.rs` file under `rel` (a file or a folder).
fn rust_files(rel: &str) -> Vec<PathBuf> {
    let p = root().join(rel);
    if p.is_file() {
        return vec![p];
    }
    if !p.is_dir() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for e in sorted_dir(&p) {
        if e.is_dir() {
            out.extend(rust_files(
                &e.strip_prefix(root()).unwrap().to_string_lossy(),
            ));
        } else if name(&e).ends_with(".rs") {
            out.push(e);
        }
    }
    out
}

#[test]
fn pages_never_turn_a_store_error_into_503_with_a_catch_all() {
    let mut problems = Vec::new();
    for rel in [
        "gateway/src/hub.rs",
        "gateway/src/web.rs",
        "gateway/src/oauth",
    ] {
        for file in rust_files(rel) {
            let text = std::fs::read_to_string(&file).unwrap();
            for pattern in ["Err(_) =>", "_ =>", "|_|"] {
                for (at, _) in text.match_indices(pattern) {
                    // `_ =>` also matches inside `Err(_) =>`; that one is reported once.
                    if pattern == "_ =>" && text[..at].ends_with("Err(") {
                        continue;
                    }
                    // The arm or closure body: up to the end of its line, or of the next when
                    // the pattern ends its line.
                    let rest = &text[at + pattern.len()..];
                    let mut lines = rest.splitn(3, '\n');
                    let first = lines.next().unwrap_or("");
                    let body = if first.trim().is_empty() || first.trim_end().ends_with('{') {
                        format!("{first}{}", lines.next().unwrap_or(""))
                    } else {
                        first.to_string()
                    };
                    if body.to_lowercase().contains("unavailable") {
                        let line = text[..at].matches('\n').count() + 1;
                        problems.push(format!(
                            "{}:{line}: `{pattern}{}`",
                            file.strip_prefix(root()).unwrap().display(),
                            body.trim_end()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "a catch-all turns every error into 503 (match the store error: Unavailable is 503, \
         the rest 500):\n{}",
        problems.join("\n")
    );
}

#[test]
fn each_crate_has_at_most_one_integration_test_binary() {
    let mut problems = Vec::new();
    for c in crates() {
        let tests = root().join(&c).join("tests");
        if !tests.is_dir() {
            continue;
        }
        let targets: Vec<String> = sorted_dir(&tests)
            .into_iter()
            .filter(|p| (p.is_file() && name(p).ends_with(".rs")) || p.join("main.rs").is_file())
            .map(|p| name(&p))
            .collect();
        if targets.len() > 1 {
            problems.push(format!(
                "{c}/tests has {} test targets {targets:?}: make them modules of one \
                 (`tests/it/main.rs`)",
                targets.len()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every file under the workspace's crates, skipping `target` and hidden folders.
fn tree_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for p in sorted_dir(dir) {
        let n = name(&p);
        if n.starts_with('.') || n == "target" {
            continue;
        }
        if p.is_dir() {
            tree_files(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn every_snapshot_is_referenced_and_none_is_pending() {
    let mut files = Vec::new();
    for c in crates() {
        tree_files(&root().join(c), &mut files);
    }
    let mut problems = Vec::new();
    for f in &files {
        let n = name(f);
        if n.ends_with(".snap.new") || n.ends_with(".pending-snap") {
            problems.push(format!(
                "{}: a pending snapshot: review it (accept or reject) and remove it",
                f.strip_prefix(root()).unwrap().display()
            ));
            continue;
        }
        let Some(stem) = n.strip_suffix(".snap") else {
            continue;
        };
        // `<module path>__<name>.snap` in a `snapshots` folder beside the test's source.
        let snapshot = stem.rsplit("__").next().unwrap_or(stem);
        let dir = f.parent().and_then(Path::parent).unwrap();
        let literal = format!("\"{snapshot}\"");
        let used = rust_files(&dir.strip_prefix(root()).unwrap().to_string_lossy())
            .iter()
            .any(|r| std::fs::read_to_string(r).unwrap().contains(&literal));
        if !used {
            problems.push(format!(
                "{}: no test asserts a snapshot named {literal}: delete it",
                f.strip_prefix(root()).unwrap().display()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
