//! Group commit for the ledger: concurrent calls' debits are written together in one transaction.
//!
//! Every call still waits for its own commit, so nothing charged is ever lost, and each debit is the
//! same conditional update as a single one, so the balance can never go negative. One writer task
//! per process removes write-lock contention on SQLite and the hot-row wait on PostgreSQL.

use crate::{Caller, CreditsError, Surface};
use chrono::{DateTime, Utc};
use terrace_store::accounts::{DebitOutcome, OwnedCharge, debit_batch};
use terrace_store::{Db, StoreError};
use tokio::sync::{mpsc, oneshot};

/// The most debits one transaction carries.
const MAX_BATCH: usize = 512;

type Reply = Result<DebitOutcome, (bool, String)>;
type Job = (OwnedCharge, DateTime<Utc>, oneshot::Sender<Reply>);

/// The writer loop: take every debit waiting (up to [`MAX_BATCH`]), commit them together, reply.
async fn run(db: Db, mut rx: mpsc::Receiver<Job>) {
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        // The batch's time is its newest call's time.
        let now = batch
            .iter()
            .map(|(_, t, _)| *t)
            .max()
            .unwrap_or_else(Utc::now);
        let (charges, replies): (Vec<OwnedCharge>, Vec<oneshot::Sender<Reply>>) =
            batch.into_iter().map(|(c, _, r)| (c, r)).unzip();
        match debit_batch(&db, charges, now.naive_utc()).await {
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
}

/// A handle to the process's ledger writer; cheap to clone.
#[derive(Clone, Debug)]
pub struct LedgerWriter {
    tx: mpsc::Sender<Job>,
}

impl LedgerWriter {
    /// Starts the writer on a thread of its own (with its own small runtime), so no other work
    /// of the process delays a commit; it stops when the last handle is dropped.
    pub fn spawn(db: Db) -> LedgerWriter {
        let (tx, rx) = mpsc::channel::<Job>(8192);
        match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => {
                let spawned = std::thread::Builder::new()
                    .name("terrace-ledger".into())
                    .spawn(move || runtime.block_on(run(db, rx)));
                if let Err(e) = spawned {
                    tracing::error!(error = %e, "cannot start the ledger writer thread");
                }
            }
            // Without a runtime of its own the writer runs on the caller's.
            Err(_) => {
                tokio::spawn(run(db, rx));
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
