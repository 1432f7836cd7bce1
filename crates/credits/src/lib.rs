//! Accounts, API keys and the credit ledger.
//!
//! Architecture Invariant: an API key is shown once, at creation, and stored only as its SHA-256
//! hash. A call is charged at most once, only after it succeeded, by a conditional debit that can
//! never take the balance below zero (a lost race answers `InsufficientCredits`, charging nothing).
//!
//! `create_account` makes an account with an opening grant and a first key; `grant` adds a credit
//! pack; `create_key`, `list_keys` and `revoke_key` manage keys; `authenticate` turns a presented
//! key into a `Caller` (account, key id, balance); `charge` records a finished call directly, and
//! `LedgerWriter` (the path the gateway uses) records calls by group commit: a thread of its own
//! takes every debit waiting (up to 512) and runs them in arrival order in one transaction, each
//! caller waiting for its own commit. `balance` and `usage` read the account back. Errors are one
//! enum, `CreditsError`.
//!
//! An API key is `trc_` followed by 40 hex characters (160 random bits), stored as its SHA-256 hash
//! plus a 10-character prefix and the last 4 characters for masked display.
//!
//! # The ledger in detail
//!
//! ## Retention, and the pools
//!
//! **Ledger retention.** Every call writes a ledger row, which at the rates the service is built
//! for is billions of rows a month. Per-call rows are kept for the retention period
//! (`TERRACE_LEDGER_RETENTION_DAYS`, default `credits::DEFAULT_RETENTION_DAYS` = 90 days: the last
//! three months can be checked call by call in usage); after it, `roll_up_ledger` (run by every
//! server at start and hourly, and safe to run from several at once) moves them into
//! `ledger_daily`, one row per account, day, operation and surface with the number of calls and the
//! sum of their credits.
//! Each step (`store::accounts::roll_up_step`) is one short transaction: it reads the oldest 5,000
//! rows in id order, stops at the first row created on or after the cutoff, deletes the charge rows
//! before it with `DELETE ... RETURNING` (so only the rows this step deleted are summed: two
//! servers rolling up at once cannot count a row twice) and adds their counts and sums to their
//! days with an upsert.
//! Grants stay row by row (there are few). So `accounts.balance = SUM(ledger.credits) +
//! SUM(ledger_daily.credits)` holds before, during and after a roll-up
//! (`store::accounts::ledger_sum` sums both; `crates/credits/tests/ledger.rs` checks it), usage
//! lists the calls of the retention period, and older calls are counted in their day.
//! On PostgreSQL the ledger is range-partitioned by month on `created_at` (migration
//! `000053_ledger_partitions`): the primary key is `(id, created_at)` (ids still come from one
//! sequence, in arrival order), `ledger_account_idx` is declared on the parent so every month has
//! it, and each month is a partition named `ledger_yYYYYmMM` with a default partition,
//! `ledger_default`, for a row whose month has none yet. `roll_up_ledger` runs the maintenance
//! first: `terrace_ledger_partitions` makes the partitions of the current month and the two after
//! it, and of every month that has rows in the default partition, moving those rows into it (one
//! maker at a time, under an advisory lock), so the default stays empty while the maintenance runs
//! at least every two months. Then every month wholly past retention is rolled up at once, one
//! month per transaction (`terrace_ledger_roll_up_month`, called by
//! `store::accounts::roll_up_month`): under the partition's exclusive lock its charges are summed
//! into `ledger_daily` per account, day, operation and surface (the same sums the row-by-row step
//! makes), the partition is emptied with `TRUNCATE` and its grants are put back. The row-by-row
//! step then rolls what is left before the cutoff (the month the cutoff falls in, and the whole
//! ledger on SQLite, which has no partitions). The balance rule holds throughout, since each
//! month's sums and its emptying commit together. A month of 3,572,967 charge rows rolled up in 1.8
//! s this way (psql on the session-19 machine); the row-by-row step moves a page of 5,000 rows per
//! transaction. `terrace_debit_batch` inserts through the parent unchanged; its cost per batch is
//! the same (pgbench, 31 debits a batch: 0.51-0.59 ms partitioned, 0.53-0.56 ms before).
//! `store/tests/it/ledger.rs` checks the partitions, the move out of the default partition and the
//! month roll-up on PostgreSQL, and that the same calls do nothing on SQLite.
//!
//! SQLite connections are recycled with diesel-async's `RecyclingMethod::Fast` (no `SELECT 1` at
//! each checkout: the file is in-process); PostgreSQL connections keep `Verified`, which costs a
//! round trip per checkout. PostgreSQL's "terminating connection" error (a session the server
//! ended) now maps to `StoreError::Unavailable` (503), which is what lets the ledger writer hold
//! its connection across batches (step 7); switching the pool to `Fast` as well was not measured
//! and is left.
//!
//! ## A debit, step by step (step 7 of a charged call)
//!
//! **Charge.** The call hands its debit to the process's `credits::LedgerWriter` and waits for the
//! reply.
//!
//! The writer (a thread of its own with a small runtime and a connection of its own,
//! `Db::own_pool(1)`, so nothing else in the process delays a commit) takes every debit waiting
//! (up to 512) and runs them, in arrival order, in ONE transaction
//! (`store::accounts::debit_batch_on`). It holds its connection from batch to batch while they
//! succeed (no pool checkout, so on PostgreSQL no verifying `SELECT 1` per batch); after a
//! failed batch the connection goes back to the pool, which checks it before its next use, so a
//! connection the server ended costs that batch's callers a 503 (not charged) and the next batch
//! a fresh connection.
//! On SQLite (`BEGIN IMMEDIATE`, `COMMIT` and `ROLLBACK` themselves run as statements diesel
//! keeps prepared, `prepared_immediate_transaction`, where diesel's own transactions parse them
//! at every batch) every statement keeps its prepared form from batch to batch: one look-up per
//! distinct key (is it revoked?) and per distinct account (its balance; SQLite's write lock
//! covers them), since diesel prepares an `IN (...)` list afresh at every call, then, once
//! `decide` has walked the debits in order (a debit is charged when the running balance covers
//! it and its key is live), one `UPDATE accounts SET balance = balance - <total>` per account
//! charged and the ledger rows (`kind = 'charge'`, the operation id, `credits = -2`,
//! `balance_after`, the request id, surface `http`, the key id, the batch's time, whose text is
//! formatted once per batch: `RowTime`) in multi-row INSERTs of fixed sizes (64, 16, 4 and 1
//! rows), each a hand-written statement (`SqliteChargeRows<N>`: seven values a row bound by
//! reference to the batch's debits, `'charge'` written as a literal) whose query id is its row
//! count, so diesel keeps one prepared form per size, where a slice of any length is parsed
//! again at every batch (the idempotent charge on PostgreSQL, a batch of its one debit, inserts
//! an owned `ChargeRow` through diesel).
//! On PostgreSQL the batch is one statement in autocommit, `SELECT ... FROM
//! terrace_debit_batch(<arrays of the debits>)` (`DebitBatchCall`, a statement of fixed text
//! with a static query id, so diesel keeps it prepared on the writer's connection; through
//! `sql_query` it was parsed and described in a round trip of its own at every batch), a
//! PL/pgSQL function (migration `000042_debit_batch_function`) that locks the batch's accounts
//! `FOR UPDATE` in id order, reads the revoked keys, applies the same rule in the same order,
//! inserts the batch's ledger rows in one `INSERT ... SELECT FROM unnest(...)` and updates the
//! balances: one round trip and one commit per batch, where the statement-by-statement
//! transaction took six and set the writer's pace. Since migration `000050_debit_batch_set`
//! PostgreSQL's ledger has no foreign keys (each row ran two referential checks, more than the
//! row itself cost): the function writes a row only for an account it holds locked, and accounts
//! and keys are never deleted; `store::accounts::ledger_unowned` counts rows naming a missing
//! account or key, and the ledger tests assert it is 0. SQLite's ledger has had no foreign keys
//! either since `000052_ledger_rowid`, for the same reason, and no `AUTOINCREMENT` (a table
//! rebuild that kept every id): `sqlite_sequence` was a page every commit wrote, one WAL frame
//! in about seven, and a new row's id is now the largest id plus one, so ids still grow with
//! time and an id comes back only after every row above it was rolled up. The writer's SQLite
//! connection has a page cache of 8 MiB (`store::accounts::ready_ledger_writer`; the pool's is
//! 64 MiB, which the writer filled by allocating a page for each page the ledger grew by), and
//! its multi-row INSERT is `INSERT OR FAIL`, which with no foreign keys needs no statement
//! journal (the batch's transaction is rolled back on any error anyway). The ledger's only
//! secondary index is `ledger_account_idx` (account, id), which usage pages by; the index on
//! `key_id` was dropped in `000051_ledger_key_index` on both backends, since nothing reads the
//! ledger by key and keys are never deleted. The two implementations of the rule are held
//! together by `credits/tests/ledger.rs::one_batch_decides_each_debit_in_order` and the
//! concurrency tests, which run on both backends.
//! On SQLite, under concurrent load (the previous batch carried more than one call), a batch of
//! fewer than 16 debits waits 100 µs for more before it commits (`TERRACE_LEDGER_LINGER_US`, `0`
//! = no wait), so a batch's fixed cost is shared by more calls; the SQLite ledger rows are
//! written NULL-for-None (`treat_none_as_default_value = false`), so a batch is one multi-row
//! INSERT rather than one INSERT per row in a savepoint.
//! On SQLite a second thread (`terrace-checkpoint`) runs `PRAGMA wal_checkpoint(PASSIVE)` on its
//! own connection every 50 ms (`TERRACE_SQLITE_CHECKPOINT_MS`; `0` leaves checkpoints to
//! SQLite), so the log stays short and no commit of the writer's crosses `wal_autocheckpoint`
//! and runs a checkpoint inside the commit, which stalled every caller of that batch (measured
//! in `docs/BENCHMARKS.md`). Each commit's time and batch size are the
//! `terrace_ledger_commit_seconds` and `terrace_ledger_batch_size` histograms on `/metrics`; a
//! commit over 50 ms is logged at warn.
//! This is group commit: one commit (one fsync, one write lock) serves many calls, and each
//! caller still waits for its own commit, so nothing answered as charged is ever lost; if the
//! commit fails, every call of the batch is 503 and none is charged.
//! What a commit survives: on PostgreSQL, with the server's default `synchronous_commit = on`,
//! the commit returns once its WAL is flushed to disk, so it survives a crash of the server or
//! of the machine; on SQLite, `journal_mode = WAL` with `synchronous = NORMAL` (set on every
//! connection), the commit is in the WAL file when it returns, so it survives a crash of the
//! process, but the WAL is only synced to disk at checkpoints (every 50 ms with the checkpoint
//! thread), so a power cut or an OS crash can lose the commits since the last one.
//! A debit the running balance cannot cover writes nothing and its caller gets 402 with the
//! balance as it then is: this is how concurrent calls racing for the last credits end, some 200
//! and the rest 402, never a negative balance (the `CHECK (balance >= 0)` backs the rule).
//! A free call goes through the same debit with 0 credits, so it is logged in usage at 0.

mod writer;

pub use writer::LedgerWriter;

use chrono::{DateTime, NaiveDateTime, Utc};
use rand::RngCore;
use serde::Serialize;
use sha2::{Digest, Sha256};
use terrace_store::accounts::{self as q, Charge, DebitOutcome};
use terrace_store::{Db, StoreError};

pub use terrace_store::accounts::{ApiKeyRow, LedgerDailyRow, LedgerRow};

/// The prefix every Terrace API key starts with.
pub const KEY_PREFIX: &str = "trc_";

#[derive(Debug, thiserror::Error)]
pub enum CreditsError {
    #[error("missing, unknown or revoked API key")]
    Unauthenticated,
    #[error("insufficient credits: {required} required, {remaining} remaining")]
    InsufficientCredits { required: i64, remaining: i64 },
    #[error("no such account")]
    NoAccount,
    #[error("no such key")]
    NoKey,
    #[error("the account already holds {max} live API keys")]
    KeyLimit { max: i64 },
    #[error("invalid: {0}")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Who is calling: resolved from an API key (or, on /mcp, an OAuth token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub account_id: i64,
    pub key_id: Option<i64>,
    /// The balance when the caller was authenticated (for the early 402 check).
    pub balance: i64,
}

/// A key as created: the secret is only ever available here.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct NewKey {
    pub key_id: i64,
    pub api_key: String,
    pub masked: String,
    pub created_at: DateTime<Utc>,
}

/// A key as listed: masked.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct KeySummary {
    pub key_id: i64,
    pub name: Option<String>,
    pub masked: String,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub active: bool,
}

pub fn hash_key(key: &str) -> String {
    // Lower-case hex by table (the `hex` crate's encoder, through an iterator of chars, was
    // about 1.5% of a charged call's time in the workers; issue 20, session 16).
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(key.as_bytes());
    let mut out = String::with_capacity(digest.len() * 2);
    for b in digest {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

fn naive(t: DateTime<Utc>) -> NaiveDateTime {
    t.naive_utc()
}

fn utc(t: NaiveDateTime) -> DateTime<Utc> {
    t.and_utc()
}

fn mask(prefix: &str, last4: &str) -> String {
    format!("{prefix}…{last4}")
}

/// A fresh random key: `trc_` + 40 hex characters (160 bits).
fn generate_key() -> String {
    let mut bytes = [0u8; 20];
    rand::rng().fill_bytes(&mut bytes);
    format!("{KEY_PREFIX}{}", hex::encode(bytes))
}

/// Creates an account with an opening grant and a first API key.
pub async fn create_account(
    db: &Db,
    name: &str,
    email: Option<&str>,
    password_hash: Option<&str>,
    credits: i64,
    now: DateTime<Utc>,
) -> Result<(i64, NewKey), CreditsError> {
    if credits < 0 {
        return Err(CreditsError::Invalid("credits must not be negative".into()));
    }
    if name.trim().is_empty() {
        return Err(CreditsError::Invalid("name must not be empty".into()));
    }
    let id = q::create_account(db, name, email, password_hash, credits, naive(now)).await?;
    let key = create_key(db, id, Some("default"), now).await?;
    Ok((id, key))
}

/// Adds a credit pack; returns the new balance.
pub async fn grant(
    db: &Db,
    account_id: i64,
    credits: i64,
    now: DateTime<Utc>,
) -> Result<i64, CreditsError> {
    if credits <= 0 {
        return Err(CreditsError::Invalid(
            "a grant must be a positive number of credits".into(),
        ));
    }
    q::grant(db, account_id, credits, "cli", naive(now))
        .await?
        .ok_or(CreditsError::NoAccount)
}

pub async fn create_key(
    db: &Db,
    account_id: i64,
    name: Option<&str>,
    now: DateTime<Utc>,
) -> Result<NewKey, CreditsError> {
    let key = generate_key();
    let (prefix, last4) = shown_parts(&key);
    let row = q::insert_key(
        db,
        account_id,
        &hash_key(&key),
        prefix,
        last4,
        name,
        naive(now),
    )
    .await?;
    Ok(new_key(key, &row))
}

/// The parts of a key kept in clear for masked display: its first 10 characters and last 4.
fn shown_parts(key: &str) -> (&str, &str) {
    (&key[..KEY_PREFIX.len() + 6], &key[key.len() - 4..])
}

/// The answer that shows a key once, with its stored row.
fn new_key(api_key: String, row: &ApiKeyRow) -> NewKey {
    NewKey {
        key_id: row.id,
        masked: mask(&row.prefix, &row.last4),
        api_key,
        created_at: utc(row.created_at),
    }
}

/// The most live (unrevoked) API keys an account may hold at once.
pub const MAX_LIVE_KEYS: i64 = 20;

/// [`create_key`] on behalf of a caller: `by_key` (the API key the call came with; `None` for a
/// web session or an OAuth token) is re-checked as live in the same transaction as the insert,
/// and the account may hold at most [`MAX_LIVE_KEYS`] live keys.
pub async fn create_key_by(
    db: &Db,
    account_id: i64,
    by_key: Option<i64>,
    name: Option<&str>,
    now: DateTime<Utc>,
) -> Result<NewKey, CreditsError> {
    let key = generate_key();
    let (prefix, last4) = shown_parts(&key);
    let row = match q::insert_key_checked(
        db,
        account_id,
        by_key,
        MAX_LIVE_KEYS,
        &hash_key(&key),
        prefix,
        last4,
        name,
        naive(now),
    )
    .await?
    {
        q::KeyWrite::Done(row) => row,
        q::KeyWrite::CallerRevoked => return Err(CreditsError::Unauthenticated),
        q::KeyWrite::TooManyKeys => return Err(CreditsError::KeyLimit { max: MAX_LIVE_KEYS }),
        q::KeyWrite::NoKey => return Err(CreditsError::NoKey),
    };
    Ok(new_key(key, &row))
}

/// [`revoke_key`] on behalf of a caller: `by_key` is re-checked as live in the same transaction
/// (a key may revoke itself).
pub async fn revoke_key_by(
    db: &Db,
    account_id: i64,
    by_key: Option<i64>,
    key_id: i64,
    now: DateTime<Utc>,
) -> Result<(), CreditsError> {
    match q::revoke_key_checked(db, account_id, by_key, key_id, naive(now)).await? {
        q::KeyWrite::Done(()) => Ok(()),
        q::KeyWrite::CallerRevoked => Err(CreditsError::Unauthenticated),
        q::KeyWrite::NoKey | q::KeyWrite::TooManyKeys => Err(CreditsError::NoKey),
    }
}

pub async fn list_keys(db: &Db, account_id: i64) -> Result<Vec<KeySummary>, CreditsError> {
    Ok(q::list_keys(db, account_id)
        .await?
        .into_iter()
        .map(|k| KeySummary {
            key_id: k.id,
            name: k.name,
            masked: mask(&k.prefix, &k.last4),
            created_at: utc(k.created_at),
            revoked_at: k.revoked_at.map(utc),
            active: k.revoked_at.is_none(),
        })
        .collect())
}

pub async fn revoke_key(
    db: &Db,
    account_id: i64,
    key_id: i64,
    now: DateTime<Utc>,
) -> Result<(), CreditsError> {
    if q::revoke_key(db, account_id, key_id, naive(now)).await? {
        Ok(())
    } else {
        Err(CreditsError::NoKey)
    }
}

/// The hash a presented key is stored under, or None when it cannot be a Terrace key.
pub fn presented_hash(presented: &str) -> Option<String> {
    let presented = presented.trim();
    (presented.starts_with(KEY_PREFIX) && presented.len() <= 100).then(|| hash_key(presented))
}

/// Resolves a presented API key to its caller; revoked and unknown keys are refused.
pub async fn authenticate(db: &Db, presented: &str) -> Result<Caller, CreditsError> {
    let hash = presented_hash(presented).ok_or(CreditsError::Unauthenticated)?;
    authenticate_hash(db, &hash).await
}

/// [`authenticate`] for a key already hashed with [`presented_hash`].
pub async fn authenticate_hash(db: &Db, hash: &str) -> Result<Caller, CreditsError> {
    match q::key_auth(db, hash).await? {
        Some(k) if !k.revoked => Ok(Caller {
            account_id: k.account_id,
            key_id: Some(k.key_id),
            balance: k.balance,
        }),
        Some(_) | None => Err(CreditsError::Unauthenticated),
    }
}

/// Where a call came from, recorded in usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    Http,
    Mcp,
}

impl Surface {
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Http => "http",
            Surface::Mcp => "mcp",
        }
    }
}

/// Records a completed call and charges it; returns the balance after the charge.
pub async fn charge(
    db: &Db,
    caller: &Caller,
    operation: &str,
    credits: i64,
    request_id: &str,
    surface: Surface,
    now: DateTime<Utc>,
) -> Result<i64, CreditsError> {
    let c = Charge {
        account_id: caller.account_id,
        key_id: caller.key_id,
        operation,
        credits,
        request_id,
        surface: surface.as_str(),
    };
    match q::debit(db, &c, naive(now)).await? {
        DebitOutcome::Charged { balance } => Ok(balance),
        DebitOutcome::Insufficient { balance } => Err(CreditsError::InsufficientCredits {
            required: credits,
            remaining: balance,
        }),
        DebitOutcome::NoAccount => Err(CreditsError::NoAccount),
        DebitOutcome::Revoked => Err(CreditsError::Unauthenticated),
    }
}

/// How long per-call ledger rows are kept before they are rolled up per account, day,
/// operation and surface (`TERRACE_LEDGER_RETENTION_DAYS`): 90 days, so the last three months
/// can be checked call by call in usage, and older months by day.
pub const DEFAULT_RETENTION_DAYS: i64 = 90;

/// Months after the current one whose ledger partitions (PostgreSQL) the maintenance makes ahead
/// of time, so the default partition only catches rows when it has not run for that long.
const PARTITIONS_AHEAD: i32 = 2;

/// Rows a roll-up step reads and deletes in one transaction (kept short, so the group-commit
/// writer never waits long for the write lock).
const ROLLUP_PAGE: i64 = 5_000;

/// Rolls every charge row created more than `retention_days` days before `now` into the daily
/// table, a page per transaction (the balance always equals the ledger's sum, before, during and
/// after). Returns the rows rolled up. Safe to run from several processes at once.
pub async fn roll_up_ledger(
    db: &Db,
    now: DateTime<Utc>,
    retention_days: i64,
) -> Result<usize, CreditsError> {
    if retention_days < 1 {
        return Err(CreditsError::Invalid(
            "the ledger's retention is at least one day".into(),
        ));
    }
    let cutoff = naive(now - chrono::Duration::days(retention_days));
    let mut rolled = 0usize;
    // PostgreSQL: the months ahead get their partitions (and rows that went to the default
    // partition move to theirs), then every month wholly past retention is rolled up at once;
    // the row-by-row steps below roll the rest (SQLite's whole ledger).
    q::ledger_partitions(db, naive(now), PARTITIONS_AHEAD).await?;
    while let Some(n) = q::roll_up_month(db, cutoff).await? {
        rolled += usize::try_from(n).unwrap_or(0);
    }
    let mut after = 0i64;
    loop {
        let step = q::roll_up_step(db, after, cutoff, ROLLUP_PAGE).await?;
        rolled += step.rolled;
        if step.done || step.after == after {
            return Ok(rolled);
        }
        after = step.after;
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Balance {
    pub account_id: i64,
    pub name: String,
    pub balance: i64,
    pub created_at: DateTime<Utc>,
}

pub async fn balance(db: &Db, account_id: i64) -> Result<Balance, CreditsError> {
    let a = q::account(db, account_id)
        .await?
        .ok_or(CreditsError::NoAccount)?;
    Ok(Balance {
        account_id: a.id,
        name: a.name,
        balance: a.balance,
        created_at: utc(a.created_at),
    })
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct UsageRow {
    pub id: i64,
    pub operation: Option<String>,
    pub credits: i64,
    pub balance_after: i64,
    pub request_id: Option<String>,
    pub surface: String,
    pub time: DateTime<Utc>,
}

/// A page of usage, newest first, and the cursor of the next page.
pub async fn usage(
    db: &Db,
    account_id: i64,
    limit: i64,
    before: Option<i64>,
) -> Result<(Vec<UsageRow>, Option<i64>), CreditsError> {
    let rows = q::usage(db, account_id, limit + 1, before).await?;
    let more = rows.len() as i64 > limit;
    let rows: Vec<UsageRow> = rows
        .into_iter()
        .take(limit as usize)
        .map(|r| UsageRow {
            id: r.id,
            operation: r.operation,
            credits: -r.credits,
            balance_after: r.balance_after,
            request_id: r.request_id,
            surface: r.surface,
            time: utc(r.created_at),
        })
        .collect();
    let next = if more {
        rows.last().map(|r| r.id)
    } else {
        None
    };
    Ok((rows, next))
}

/// A stored answer of a call made with an idempotency key.
pub use terrace_store::accounts::IdempotentRow as StoredAnswer;

/// How long a stored answer can be replayed: 24 hours.
pub const IDEMPOTENCY_WINDOW_HOURS: i64 = 24;

/// The answer stored under the account's idempotency `key` within the window, if any.
pub async fn stored_answer(
    db: &Db,
    account_id: i64,
    key: &str,
    now: DateTime<Utc>,
) -> Result<Option<StoredAnswer>, CreditsError> {
    let since = now - chrono::Duration::hours(IDEMPOTENCY_WINDOW_HOURS);
    Ok(q::idempotent_answer(db, account_id, key, naive(since)).await?)
}

/// What charging an idempotent call did.
#[derive(Debug)]
pub enum IdempotentCharge {
    /// Charged; the balance after.
    Charged(i64),
    /// A concurrent call with the same key committed first; nothing charged; its answer.
    Replay(Box<StoredAnswer>),
}

/// [`charge`] with the answer stored under an idempotency key, in one transaction.
#[allow(clippy::too_many_arguments)]
pub async fn charge_idempotent(
    db: &Db,
    caller: &Caller,
    operation: &str,
    credits: i64,
    request_id: &str,
    surface: Surface,
    key: &str,
    request_hash: &str,
    body: &str,
    now: DateTime<Utc>,
) -> Result<IdempotentCharge, CreditsError> {
    let charge = q::OwnedCharge {
        account_id: caller.account_id,
        key_id: caller.key_id,
        operation: operation.to_string(),
        credits,
        request_id: request_id.to_string(),
        surface: surface.as_str().to_string(),
    };
    let row = StoredAnswer {
        account_id: caller.account_id,
        idem_key: key.to_string(),
        request_hash: request_hash.to_string(),
        operation: operation.to_string(),
        body: body.to_string(),
        credits_charged: credits,
        credits_remaining: 0,
        created_at: naive(now),
    };
    let expired = now - chrono::Duration::hours(IDEMPOTENCY_WINDOW_HOURS);
    match q::debit_idempotent(db, charge, row, naive(expired), naive(now)).await? {
        q::IdempotentOutcome::Charged { balance } => Ok(IdempotentCharge::Charged(balance)),
        q::IdempotentOutcome::Replay(r) => Ok(IdempotentCharge::Replay(r)),
        q::IdempotentOutcome::Refused(DebitOutcome::Charged { balance }) => {
            Ok(IdempotentCharge::Charged(balance))
        }
        q::IdempotentOutcome::Refused(DebitOutcome::Insufficient { balance }) => {
            Err(CreditsError::InsufficientCredits {
                required: credits,
                remaining: balance,
            })
        }
        q::IdempotentOutcome::Refused(DebitOutcome::NoAccount) => Err(CreditsError::NoAccount),
        q::IdempotentOutcome::Refused(DebitOutcome::Revoked) => Err(CreditsError::Unauthenticated),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_hash_is_the_lower_case_hex_of_its_sha256() {
        // The FIPS 180-2 test vector for "abc", and the same through the `hex` crate the stored
        // hashes of earlier releases were written with.
        assert_eq!(
            hash_key("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let key = "trc_00ff10ab";
        assert_eq!(hash_key(key), hex::encode(Sha256::digest(key.as_bytes())));
    }
}
