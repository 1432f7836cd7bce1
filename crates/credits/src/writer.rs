//! Group commit for the ledger: concurrent calls' debits are written together in one transaction.
//!
//! Every call still waits for its own commit, so nothing charged is ever lost, and each debit is the
//! same conditional update as a single one, so the balance can never go negative. One writer task
//! per process removes write-lock contention on SQLite and the hot-row wait on PostgreSQL.

use crate::{Caller, CreditsError, Surface};
use chrono::{DateTime, Utc};
use std::time::Duration;
use terrace_store::accounts::{DebitOutcome, OwnedCharge, debit_batch_on, ready_ledger_writer};
use terrace_store::db::Conn;
use terrace_store::{Backend, Db, StoreError};
use tokio::sync::{mpsc, oneshot};

/// The most debits one transaction carries.
const MAX_BATCH: usize = 512;

/// A commit slower than this is logged (and every commit's time is the
/// `terrace_ledger_commit_seconds` histogram on /metrics).
const SLOW_COMMIT: Duration = Duration::from_millis(50);

type Reply = Result<DebitOutcome, (bool, String)>;
type Job = (OwnedCharge, DateTime<Utc>, oneshot::Sender<Reply>);

/// The writer loop: take every debit waiting (up to [`MAX_BATCH`]), commit them together, reply.
///
/// `own`: `db` is the writer's own pool, whose connections nothing else uses, so each is readied
/// for the batches once ([`ready_ledger_writer`]); otherwise they are the shared pool's, used as
/// they are.
async fn run(db: Db, own: bool, mut rx: mpsc::Receiver<Job>) {
    let linger = linger().filter(|_| db.backend() == Backend::Sqlite);
    let mut last_size = 0;
    // The writer's connection, held from batch to batch while they succeed; after a failure it
    // goes back to the pool, which checks it before its next use.
    let mut held: Option<Conn> = None;
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        drain(&mut rx, &mut batch);
        // Under concurrent load (the last batch carried more than one call) a small batch waits
        // a moment for more: a batch's fixed cost (the transaction, its statements, the log
        // write) is most of a small batch's, and the callers are waiting anyway.
        if let Some(wait) = linger
            && last_size > 1
            && batch.len() < LINGER_BELOW
        {
            std::thread::sleep(wait);
            drain(&mut rx, &mut batch);
        }
        last_size = batch.len();
        // The batch's time is its newest call's time.
        let now = batch
            .iter()
            .map(|(_, t, _)| *t)
            .max()
            .unwrap_or_else(Utc::now);
        let (charges, replies): (Vec<OwnedCharge>, Vec<oneshot::Sender<Reply>>) =
            batch.into_iter().map(|(c, _, r)| (c, r)).unzip();
        let size = charges.len();
        let started = std::time::Instant::now();
        let result = match held.take() {
            Some(conn) => Ok(conn),
            None => match db.conn().await {
                Ok(mut conn) if own => ready_ledger_writer(&mut conn).await.map(|()| conn),
                other => other,
            },
        };
        let result = match result {
            Ok(mut conn) => {
                let out = debit_batch_on(&mut conn, charges, now.naive_utc()).await;
                if out.is_ok() {
                    held = Some(conn);
                }
                out
            }
            Err(e) => Err(e),
        };
        let took = started.elapsed();
        metrics::histogram!("terrace_ledger_commit_seconds").record(took.as_secs_f64());
        metrics::histogram!("terrace_ledger_batch_size").record(size as f64);
        if took >= SLOW_COMMIT {
            tracing::warn!(
                batch = size,
                ms = took.as_millis() as u64,
                "slow ledger commit: every call of the batch waited for it"
            );
        }
        answer(replies, result);
    }
}

/// Moves every debit waiting into `batch`, up to [`MAX_BATCH`].
fn drain(rx: &mut mpsc::Receiver<Job>, batch: &mut Vec<Job>) {
    while batch.len() < MAX_BATCH {
        match rx.try_recv() {
            Ok(next) => batch.push(next),
            Err(_) => break,
        }
    }
}

/// A batch smaller than this waits [`LINGER`] for more, under concurrent load (SQLite).
const LINGER_BELOW: usize = 16;

/// How long a small batch waits for more calls (SQLite), unless `TERRACE_LEDGER_LINGER_US` says
/// otherwise (`0`: no wait). Measured in docs/BENCHMARKS.md (issue 20): at 64 connections the
/// batches averaged 9.5 calls and the writer's fixed cost per batch set its share of the CPU.
const LINGER: Duration = Duration::from_micros(100);

fn linger() -> Option<Duration> {
    env_duration("TERRACE_LEDGER_LINGER_US", LINGER, Duration::from_micros)
}

/// A duration from the environment variable `name`, in the unit `of` reads: the default when
/// unset or not a number (logged), none for `0`.
fn env_duration(name: &str, default: Duration, of: fn(u64) -> Duration) -> Option<Duration> {
    match std::env::var(name) {
        Err(_) => Some(default),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(0) => None,
            Ok(n) => Some(of(n)),
            Err(_) => {
                tracing::warn!(value = %v, variable = name, "not a number: the default is used");
                Some(default)
            }
        },
    }
}

/// Tells each caller of a batch what became of its debit.
fn answer(replies: Vec<oneshot::Sender<Reply>>, result: Result<Vec<DebitOutcome>, StoreError>) {
    match result {
        Ok(outcomes) => {
            for (reply, outcome) in replies.into_iter().zip(outcomes) {
                let _ = reply.send(Ok(outcome));
            }
        }
        Err(e) => {
            let unavailable = matches!(e, StoreError::Unavailable(_));
            let msg = e.to_string();
            for reply in replies {
                let _ = reply.send(Err((unavailable, msg.clone())));
            }
        }
    }
}

/// How often the checkpoint thread copies the write-ahead log into the database, unless
/// `TERRACE_SQLITE_CHECKPOINT_MS` says otherwise. Every 50 ms rather than 200: the same work in
/// smaller pieces, which the workers wait behind for less (the UPRN lookup's p99 7-9 ms against
/// 11-13 ms at 200 and 46 ms at 1,000, at the same rate; issue 20, session 17).
const CHECKPOINT_EVERY: Duration = Duration::from_millis(50);

/// `TERRACE_SQLITE_CHECKPOINT_MS`: milliseconds between checkpoints (default 50); `0` leaves
/// checkpoints to SQLite (the commit that crosses `wal_autocheckpoint` runs one, as before the
/// checkpoint thread; kept to measure the difference).
fn checkpoint_every() -> Option<Duration> {
    env_duration(
        "TERRACE_SQLITE_CHECKPOINT_MS",
        CHECKPOINT_EVERY,
        Duration::from_millis,
    )
}

/// Clears the flag the checkpoint thread watches when the writer stops.
struct StopOnDrop(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(false, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The SQLite checkpoint loop: every `every` (default [`CHECKPOINT_EVERY`]), a passive checkpoint
/// on `db`, a connection of its own, which copies committed pages into the database file beside
/// the writer (it takes no lock the writer needs), so the log stays short and the writer's
/// commits never reach the automatic checkpoint's threshold. Stops when the writer stops.
fn checkpoints(db: Db, every: Duration, running: &std::sync::atomic::AtomicBool) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    while running.load(std::sync::atomic::Ordering::Relaxed) {
        std::thread::sleep(every);
        let started = std::time::Instant::now();
        match runtime.block_on(db.checkpoint()) {
            Ok(_) => metrics::histogram!("terrace_checkpoint_seconds")
                .record(started.elapsed().as_secs_f64()),
            Err(e) => tracing::debug!(error = %e, "checkpoint skipped"),
        }
    }
    db.close();
}

/// A handle to the process's ledger writer; cheap to clone.
#[derive(Clone, Debug)]
pub struct LedgerWriter {
    tx: mpsc::Sender<Job>,
}

impl LedgerWriter {
    /// Starts the writer on a thread of its own (with its own small runtime), so no other work
    /// of the process delays a commit; it stops when the last handle is dropped.
    ///
    /// The writer has a connection of its own ([`Db::own_pool`]). On SQLite a second thread keeps
    /// the write-ahead log short ([`checkpoints`]), so no commit of the writer's ever runs a
    /// checkpoint itself: an automatic checkpoint runs inside the commit that crosses the log's
    /// threshold and every call of that batch waits for it (measured: a stall of every caller
    /// for the time it takes to copy and sync the log).
    pub fn spawn(db: Db) -> LedgerWriter {
        let (tx, rx) = mpsc::channel::<Job>(8192);
        let running = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let checkpoint = checkpoint_every()
            .filter(|_| db.backend() == Backend::Sqlite)
            .and_then(|every| Some((every, db.own_pool(1).ok()?)));
        if let Some((every, db)) = checkpoint {
            let running = running.clone();
            let spawned = std::thread::Builder::new()
                .name("terrace-checkpoint".into())
                .spawn(move || checkpoints(db, every, &running));
            if let Err(e) = spawned {
                tracing::error!(error = %e, "cannot start the checkpoint thread");
            }
        }
        let stop = StopOnDrop(running);
        let (db, own) = match db.own_pool(1) {
            Ok(own) => (own, true),
            Err(_) => (db, false),
        };
        match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => {
                let spawned = std::thread::Builder::new()
                    .name("terrace-ledger".into())
                    .spawn(move || {
                        runtime.block_on(run(db, own, rx));
                        drop(stop);
                    });
                if let Err(e) = spawned {
                    tracing::error!(error = %e, "cannot start the ledger writer thread");
                }
            }
            // Without a runtime of its own the writer runs on the caller's.
            Err(_) => {
                tokio::spawn(async move {
                    run(db, own, rx).await;
                    drop(stop);
                });
            }
        }
        LedgerWriter { tx }
    }

    /// Records a completed call and charges it; returns the balance after the charge.
    pub async fn charge(
        &self,
        caller: &Caller,
        operation: &str,
        credits: i64,
        request_id: &str,
        surface: Surface,
        now: DateTime<Utc>,
    ) -> Result<i64, CreditsError> {
        let (reply, wait) = oneshot::channel();
        let charge = OwnedCharge {
            account_id: caller.account_id,
            key_id: caller.key_id,
            operation: operation.to_string(),
            credits,
            request_id: request_id.to_string(),
            surface: surface.as_str().to_string(),
        };
        let gone =
            || CreditsError::Store(StoreError::Unavailable("the ledger writer stopped".into()));
        self.tx
            .send((charge, now, reply))
            .await
            .map_err(|_| gone())?;
        match wait.await.map_err(|_| gone())? {
            Ok(DebitOutcome::Charged { balance }) => Ok(balance),
            Ok(DebitOutcome::Insufficient { balance }) => Err(CreditsError::InsufficientCredits {
                required: credits,
                remaining: balance,
            }),
            Ok(DebitOutcome::NoAccount) => Err(CreditsError::NoAccount),
            Ok(DebitOutcome::Revoked) => Err(CreditsError::Unauthenticated),
            Err((true, m)) => Err(CreditsError::Store(StoreError::Unavailable(m))),
            Err((false, m)) => Err(CreditsError::Store(StoreError::Setup(m))),
        }
    }
}
