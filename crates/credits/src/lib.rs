//! Accounts, API keys and the credit ledger.
//!
//! Architecture Invariant: an API key is shown once, at creation, and stored only as its SHA-256
//! hash. A call is charged at most once, only after it succeeded, by a conditional debit that can
//! never take the balance below zero (a lost race answers `InsufficientCredits`, charging nothing).

mod writer;

pub use writer::LedgerWriter;

use chrono::{DateTime, NaiveDateTime, Utc};
use rand::RngCore;
use serde::Serialize;
use sha2::{Digest, Sha256};
use terrace_store::accounts::{self as q, Charge, DebitOutcome};
use terrace_store::{Db, StoreError};

pub use terrace_store::accounts::{ApiKeyRow, LedgerRow};

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
    hex::encode(Sha256::digest(key.as_bytes()))
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
    let prefix = &key[..KEY_PREFIX.len() + 6];
    let last4 = &key[key.len() - 4..];
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
    Ok(NewKey {
        key_id: row.id,
        masked: mask(&row.prefix, &row.last4),
        api_key: key,
        created_at: utc(row.created_at),
    })
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
