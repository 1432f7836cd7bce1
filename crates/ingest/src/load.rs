//! Loading a file: the dataset's parser, its merge chunk by chunk, row accounting, progress and
//! the load-run record. The datasets themselves are in [`crate::datasets`].

use crate::datasets::{Dataset, DatasetInfo};
pub use crate::formats::layers::Layer;
use crate::formats::{self, Parsed, Rejection};
pub use crate::merge::LoadCtx;
use chrono::Utc;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Instant;
use terrace_store::loads::{self, RowCounts};
use terrace_store::{Db, StoreError, meta};

/// Rows per chunk written in one transaction.
const CHUNK_ROWS: usize = 5_000;
/// Progress is reported every this many rows read.
const PROGRESS_EVERY: i64 = 100_000;

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("cannot read {file}: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    #[error("unknown dataset {0:?}; expected one of: {1}")]
    UnknownDataset(String, String),
    #[error("bad manifest {file}: {message}")]
    Manifest { file: String, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One dataset's loader: its parser and its merge into the store. A dataset module implements
/// it, and its row in [`crate::datasets::DATASETS`] names it.
pub trait Load: Sync + 'static {
    /// What the parser yields for one line.
    type Row: Send + 'static;
    /// Opens the file and parses it lazily, row by row.
    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send>;
    /// Merges one chunk of parsed rows into the store, counting each; returns whether the
    /// address register changed.
    fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

type LoadFut<'a> = Pin<Box<dyn Future<Output = Result<LoadReport, IngestError>> + Send + 'a>>;

/// A [`Load`] with its row type erased, as the table holds it.
pub trait Loader: Sync {
    fn load<'a>(
        &'a self,
        ctx: &'a LoadCtx<'a>,
        info: &'static DatasetInfo,
        path: &'a Path,
        progress: &'a mut Progress,
    ) -> LoadFut<'a>;
}

impl<D: Load> Loader for D {
    fn load<'a>(
        &'a self,
        ctx: &'a LoadCtx<'a>,
        info: &'static DatasetInfo,
        path: &'a Path,
        progress: &'a mut Progress,
    ) -> LoadFut<'a> {
        Box::pin(drive(self, ctx, info.name, path, progress))
    }
}

/// What one file's load did.
#[derive(Debug, Clone)]
pub struct LoadReport {
    pub dataset: String,
    pub file: String,
    pub counts: RowCounts,
    pub rejections: Vec<Rejection>,
    pub seconds: f64,
}

/// Where progress lines go.
pub struct Progress {
    sink: Box<dyn FnMut(&str) + Send>,
}

impl Progress {
    /// To standard error (the operator's terminal).
    pub fn stderr() -> Progress {
        Progress {
            sink: Box::new(|s| eprintln!("{s}")),
        }
    }

    /// To the tracing log (the gateway's first start).
    pub fn log() -> Progress {
        Progress {
            sink: Box::new(|s| tracing::info!("{s}")),
        }
    }

    pub fn quiet() -> Progress {
        Progress {
            sink: Box::new(|_| {}),
        }
    }

    fn say(&mut self, s: &str) {
        (self.sink)(s)
    }

    pub fn say_line(&mut self, s: &str) {
        (self.sink)(s)
    }
}

fn counts_line(ds: &str, file: &str, c: &RowCounts, secs: f64) -> String {
    let rate = if secs > 0.0 {
        c.read as f64 / secs
    } else {
        0.0
    };
    format!(
        "[{ds}] {file}: read {}, loaded {}, updated {}, deleted {}, rejected {}, unchanged {} ({:.0} rows/s)",
        c.read, c.loaded, c.updated, c.deleted, c.rejected, c.unchanged, rate
    )
}

/// Options of one load.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// Rows carry `fixture:` provenance (synthetic data).
    pub fixture: bool,
}

/// Loads one file of `dataset` into the store.
pub async fn load_file(
    db: &Db,
    dataset: Dataset,
    path: &Path,
    opts: LoadOptions,
    progress: &mut Progress,
) -> Result<LoadReport, IngestError> {
    let info = dataset.info()?;
    let src = if opts.fixture {
        format!("fixture:{}", info.source)
    } else {
        info.source.to_string()
    };
    let ctx = LoadCtx {
        db,
        source: &src,
        now: Utc::now().naive_utc(),
        notes: Default::default(),
        lads: Default::default(),
    };
    info.loader.load(&ctx, info, path, progress).await
}

/// Reads the parser's rows in chunks, applies each chunk, reports progress and rejections, and
/// records the run.
async fn drive<D: Load>(
    dataset: &D,
    ctx: &LoadCtx<'_>,
    name: &str,
    path: &Path,
    progress: &mut Progress,
) -> Result<LoadReport, IngestError> {
    let rows = dataset.read(path).map_err(|source| IngestError::Io {
        file: path.display().to_string(),
        source,
    })?;
    let started = Instant::now();
    let file = path.display().to_string();
    let run_id = loads::start_run(ctx.db, name, &file, ctx.now).await?;
    let mut counts = RowCounts::default();
    let mut rejections = Vec::new();
    let mut chunk = Vec::with_capacity(CHUNK_ROWS);
    let mut register_changed = false;
    let mut next_report = PROGRESS_EVERY;
    progress.say(&format!("[{}] loading {file}", name));
    for item in rows {
        counts.read += 1;
        match item {
            Ok((_line, row)) => chunk.push(row),
            Err(r) => {
                counts.rejected += 1;
                progress.say(&format!("[{}] rejected {r}", name));
                rejections.push(r);
            }
        }
        if chunk.len() >= CHUNK_ROWS {
            register_changed |= apply_chunk(
                dataset,
                ctx,
                std::mem::take(&mut chunk),
                &mut counts,
                run_id,
            )
            .await?;
            for n in ctx.take_notes() {
                progress.say(&format!("[{}] {file}: {n}", name));
            }
        }
        if counts.read >= next_report {
            next_report += PROGRESS_EVERY;
            progress.say(&counts_line(
                name,
                &file,
                &counts,
                started.elapsed().as_secs_f64(),
            ));
        }
    }
    if !chunk.is_empty() {
        register_changed |= apply_chunk(dataset, ctx, chunk, &mut counts, run_id).await?;
        for n in ctx.take_notes() {
            progress.say(&format!("[{}] {file}: {n}", name));
        }
    }
    let rej: Vec<(i64, String)> = rejections
        .iter()
        .map(|r| (r.line as i64, r.reason.clone()))
        .collect();
    loads::add_rejections(ctx.db, run_id, &rej).await?;
    loads::finish_run(ctx.db, run_id, &counts, Utc::now().naive_utc()).await?;
    if register_changed {
        meta::bump(
            ctx.db,
            meta::Key::AddressRegisterVersion,
            &format!("run-{run_id}"),
        )
        .await?;
    }
    let seconds = started.elapsed().as_secs_f64();
    progress.say(&counts_line(name, &file, &counts, seconds));
    Ok(LoadReport {
        dataset: name.into(),
        file,
        counts,
        rejections,
        seconds,
    })
}

/// Applies one chunk, and writes a new `data_version` as soon as the chunk changed rows (so the
/// chunks an interrupted load finished are seen by the servers' memos too). Returns whether the
/// chunk changed the address register.
async fn apply_chunk<D: Load>(
    dataset: &D,
    ctx: &LoadCtx<'_>,
    chunk: Vec<D::Row>,
    counts: &mut RowCounts,
    run_id: i64,
) -> Result<bool, IngestError> {
    let changed = |c: &RowCounts| c.loaded + c.updated + c.deleted;
    let before = changed(counts);
    let register_changed = dataset.apply(ctx, chunk, counts).await?;
    if changed(counts) > before {
        meta::bump(ctx.db, meta::Key::DataVersion, &format!("load-{run_id}")).await?;
    }
    Ok(register_changed)
}

/// `fixtures/manifest.json`: which files to load, in order.
#[derive(Debug, Deserialize)]
struct Manifest {
    files: Vec<ManifestFile>,
}

#[derive(Debug, Deserialize)]
struct ManifestFile {
    path: String,
    dataset: String,
}

/// Loads every file a manifest lists (the fixture world), in the table's load order. The derived
/// steps are the build crate's (`terrace_build::load_and_build` runs both).
pub async fn load_manifest(
    db: &Db,
    dir: &Path,
    progress: &mut Progress,
) -> Result<Vec<LoadReport>, IngestError> {
    let mpath = dir.join("manifest.json");
    let text = std::fs::read_to_string(&mpath).map_err(|source| IngestError::Io {
        file: mpath.display().to_string(),
        source,
    })?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| IngestError::Manifest {
        file: mpath.display().to_string(),
        message: e.to_string(),
    })?;
    let mut files: Vec<(&'static DatasetInfo, PathBuf)> = Vec::new();
    for f in &manifest.files {
        let path = dir.join(&f.path);
        // The manifest names datasets for people; the loader is known by code or by the file.
        let ds = DatasetInfo::find(&f.dataset)
            .or_else(|| formats::sniff(&path).and_then(DatasetInfo::find));
        match ds {
            Some(ds) => files.push((ds, path)),
            None => progress.say(&format!(
                "[manifest] {} ({}) is not a loadable dataset: skipped",
                f.path, f.dataset
            )),
        }
    }
    files.sort_by_key(|(d, _)| d.order);
    let mut reports = Vec::new();
    for (ds, path) in files {
        let opts = LoadOptions { fixture: true };
        reports.push(load_file(db, ds.dataset, &path, opts, progress).await?);
    }
    Ok(reports)
}
