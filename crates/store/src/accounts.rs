//! Accounts, API keys and the append-only ledger.
//!
//! Architecture Invariant: `accounts.balance` equals the sum of the account's ledger credits, and
//! never goes below zero: every change to the balance is one conditional UPDATE plus one ledger
//! INSERT in the same transaction.

use crate::db::{Db, StoreResult};
use crate::schema::{accounts, api_keys, ledger};
use crate::with_conn;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = accounts)]
pub struct AccountRow {
    pub id: i64,
    pub name: String,
    pub email: Option<String>,
    pub password_hash: Option<String>,
    pub balance: i64,
    pub created_at: NaiveDateTime,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = api_keys)]
pub struct ApiKeyRow {
    pub id: i64,
    pub account_id: i64,
    pub key_hash: String,
    pub prefix: String,
    pub last4: String,
    pub name: Option<String>,
    pub created_at: NaiveDateTime,
    pub revoked_at: Option<NaiveDateTime>,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = ledger)]
pub struct LedgerRow {
    pub id: i64,
    pub account_id: i64,
    pub kind: String,
    pub operation: Option<String>,
    pub credits: i64,
    pub balance_after: i64,
    pub request_id: Option<String>,
    pub surface: String,
    pub key_id: Option<i64>,
    pub created_at: NaiveDateTime,
}

/// What an API key authenticates as.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyAuth {
    pub key_id: i64,
    pub account_id: i64,
    pub balance: i64,
    pub revoked: bool,
}

/// One call to record in the ledger.
#[derive(Debug, Clone)]
pub struct Charge<'a> {
    pub account_id: i64,
    pub key_id: Option<i64>,
    pub operation: &'a str,
    pub credits: i64,
    pub request_id: &'a str,
    pub surface: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebitOutcome {
    /// Charged (possibly 0 credits); the balance after the charge.
    Charged { balance: i64 },
    /// The balance could not cover the charge; nothing was written.
    Insufficient { balance: i64 },
    /// The account does not exist.
    NoAccount,
    /// The key the call came in with was revoked (possibly by another process); nothing written.
    Revoked,
}

#[derive(Insertable)]
#[diesel(table_name = ledger)]
struct NewLedger<'a> {
    account_id: i64,
    kind: &'a str,
    operation: Option<&'a str>,
    credits: i64,
    balance_after: i64,
    request_id: Option<&'a str>,
    surface: &'a str,
    key_id: Option<i64>,
    created_at: NaiveDateTime,
}

/// Creates an account with a zero balance and, if `credits > 0`, a first grant.
pub async fn create_account(
    db: &Db,
    name: &str,
    email: Option<&str>,
    password_hash: Option<&str>,
    credits: i64,
    now: NaiveDateTime,
) -> StoreResult<i64> {
    let id: i64 = with_conn!(db, |c| {
        c.transaction(async |c| {
            let id: i64 = diesel::insert_into(accounts::table)
                .values((
                    accounts::name.eq(name),
                    accounts::email.eq(email),
                    accounts::password_hash.eq(password_hash),
                    accounts::balance.eq(credits),
                    accounts::created_at.eq(now),
                ))
                .returning(accounts::id)
                .get_result(c)
                .await?;
            if credits > 0 {
                diesel::insert_into(ledger::table)
                    .values(NewLedger {
                        account_id: id,
                        kind: "grant",
                        operation: Some("signup"),
                        credits,
                        balance_after: credits,
                        request_id: None,
                        surface: "cli",
                        key_id: None,
                        created_at: now,
                    })
                    .execute(c)
                    .await?;
            }
            Ok::<_, diesel::result::Error>(id)
        })
        .await?
    });
    Ok(id)
}

/// Adds a credit pack; returns the new balance, or None when the account does not exist.
pub async fn grant(
    db: &Db,
    account_id: i64,
    credits: i64,
    surface: &str,
    now: NaiveDateTime,
) -> StoreResult<Option<i64>> {
    Ok(with_conn!(db, |c| {
        c.transaction(async |c| {
            let bal: Option<i64> = diesel::update(accounts::table.find(account_id))
                .set(accounts::balance.eq(accounts::balance + credits))
                .returning(accounts::balance)
                .get_result(c)
                .await
                .optional()?;
            if let Some(b) = bal {
                diesel::insert_into(ledger::table)
                    .values(NewLedger {
                        account_id,
                        kind: "grant",
                        operation: Some("credit_pack"),
                        credits,
                        balance_after: b,
                        request_id: None,
                        surface,
                        key_id: None,
                        created_at: now,
                    })
                    .execute(c)
                    .await?;
            }
            Ok::<_, diesel::result::Error>(bal)
        })
        .await?
    }))
}

/// Records a call: debits `credits` if the balance covers it and the key is live (one
/// conditional UPDATE) and appends the usage row, in one transaction. A free call (0 credits) is
/// recorded at 0. The same debit as one item of [`debit_batch`].
pub async fn debit(db: &Db, charge: &Charge<'_>, now: NaiveDateTime) -> StoreResult<DebitOutcome> {
    let owned = OwnedCharge {
        account_id: charge.account_id,
        key_id: charge.key_id,
        operation: charge.operation.to_string(),
        credits: charge.credits,
        request_id: charge.request_id.to_string(),
        surface: charge.surface.to_string(),
    };
    let outcomes = debit_batch(db, vec![owned], now).await?;
    Ok(outcomes
        .into_iter()
        .next()
        .unwrap_or(DebitOutcome::NoAccount))
}

pub async fn account(db: &Db, account_id: i64) -> StoreResult<Option<AccountRow>> {
    Ok(with_conn!(db, |c| {
        accounts::table
            .find(account_id)
            .select(AccountRow::as_select())
            .first(c)
            .await
            .optional()?
    }))
}

pub async fn account_by_email(db: &Db, email: &str) -> StoreResult<Option<AccountRow>> {
    Ok(with_conn!(db, |c| {
        accounts::table
            .filter(accounts::email.eq(email))
            .select(AccountRow::as_select())
            .first(c)
            .await
            .optional()?
    }))
}

pub async fn insert_key(
    db: &Db,
    account_id: i64,
    key_hash: &str,
    prefix: &str,
    last4: &str,
    name: Option<&str>,
    now: NaiveDateTime,
) -> StoreResult<ApiKeyRow> {
    Ok(with_conn!(db, |c| {
        diesel::insert_into(api_keys::table)
            .values((
                api_keys::account_id.eq(account_id),
                api_keys::key_hash.eq(key_hash),
                api_keys::prefix.eq(prefix),
                api_keys::last4.eq(last4),
                api_keys::name.eq(name),
                api_keys::created_at.eq(now),
            ))
            .returning(ApiKeyRow::as_returning())
            .get_result(c)
            .await?
    }))
}

/// The account's current balance.
pub async fn balance_of(db: &Db, account_id: i64) -> StoreResult<Option<i64>> {
    Ok(with_conn!(db, |c| {
        accounts::table
            .find(account_id)
            .select(accounts::balance)
            .first(c)
            .await
            .optional()?
    }))
}

/// Looks a key up by its hash, with its account's balance, in one query.
pub async fn key_auth(db: &Db, key_hash: &str) -> StoreResult<Option<KeyAuth>> {
    let row: Option<(i64, i64, Option<NaiveDateTime>, i64)> = with_conn!(db, |c| {
        api_keys::table
            .inner_join(accounts::table)
            .filter(api_keys::key_hash.eq(key_hash))
            .select((
                api_keys::id,
                api_keys::account_id,
                api_keys::revoked_at,
                accounts::balance,
            ))
            .first(c)
            .await
            .optional()?
    });
    Ok(
        row.map(|(key_id, account_id, revoked_at, balance)| KeyAuth {
            key_id,
            account_id,
            balance,
            revoked: revoked_at.is_some(),
        }),
    )
}

pub async fn list_keys(db: &Db, account_id: i64) -> StoreResult<Vec<ApiKeyRow>> {
    Ok(with_conn!(db, |c| {
        api_keys::table
            .filter(api_keys::account_id.eq(account_id))
            .order(api_keys::id.desc())
            .select(ApiKeyRow::as_select())
            .load(c)
            .await?
    }))
}

/// Revokes a key of the account; false when the account has no such live key.
pub async fn revoke_key(
    db: &Db,
    account_id: i64,
    key_id: i64,
    now: NaiveDateTime,
) -> StoreResult<bool> {
    let n = with_conn!(db, |c| {
        diesel::update(
            api_keys::table
                .filter(api_keys::id.eq(key_id))
                .filter(api_keys::account_id.eq(account_id))
                .filter(api_keys::revoked_at.is_null()),
        )
        .set(api_keys::revoked_at.eq(Some(now)))
        .execute(c)
        .await?
    });
    Ok(n == 1)
}

/// The account's calls, newest first; `before` is the id of the last row of the previous page.
pub async fn usage(
    db: &Db,
    account_id: i64,
    limit: i64,
    before: Option<i64>,
) -> StoreResult<Vec<LedgerRow>> {
    Ok(with_conn!(db, |c| {
        let mut q = ledger::table
            .filter(ledger::account_id.eq(account_id))
            .filter(ledger::kind.eq("charge"))
            .order(ledger::id.desc())
            .limit(limit)
            .select(LedgerRow::as_select())
            .into_boxed();
        if let Some(b) = before {
            q = q.filter(ledger::id.lt(b));
        }
        q.load(c).await?
    }))
}

/// The sum of the account's ledger credits (equals the balance; used by tests and audits).
pub async fn ledger_sum(db: &Db, account_id: i64) -> StoreResult<i64> {
    use diesel::dsl::sql;
    use diesel::sql_types::BigInt;
    Ok(with_conn!(db, |c| {
        ledger::table
            .filter(ledger::account_id.eq(account_id))
            .select(sql::<BigInt>("CAST(COALESCE(SUM(credits), 0) AS BIGINT)"))
            .first(c)
            .await?
    }))
}

/// One call to record, owned (for the group-commit writer).
#[derive(Debug, Clone)]
pub struct OwnedCharge {
    pub account_id: i64,
    pub key_id: Option<i64>,
    pub operation: String,
    pub credits: i64,
    pub request_id: String,
    pub surface: String,
}

/// The body of one debit, expanded for the sync (SQLite) and async (PostgreSQL) connections:
/// `$run` executes a query (`diesel::RunQueryDsl` or `diesel_async::RunQueryDsl`) and `$($aw)*` is
/// `.await` or nothing.
macro_rules! debit_one {
    ($c:expr, $ch:expr, $now:expr, $run:ident, [$($aw:tt)*]) => {{
        let ch: &OwnedCharge = $ch;
        // The key must still be live at commit time: a key revoked by any process stops
        // working at once, even where a gateway authenticated it from its cache.
        let revoked_key = diesel::dsl::exists(
            api_keys::table
                .filter(api_keys::id.nullable().eq(ch.key_id))
                .filter(api_keys::revoked_at.is_not_null()),
        );
        let updated: Option<i64> = $run::get_result(
            diesel::update(
                accounts::table
                    .filter(accounts::id.eq(ch.account_id))
                    .filter(accounts::balance.ge(ch.credits))
                    .filter(diesel::dsl::not(revoked_key)),
            )
            .set(accounts::balance.eq(accounts::balance - ch.credits))
            .returning(accounts::balance),
            $c,
        )$($aw)*
        .optional()?;
        match updated {
            None => {
                let bal: Option<i64> =
                    $run::first(accounts::table.find(ch.account_id).select(accounts::balance), $c)$($aw)*
                        .optional()?;
                match bal {
                    Some(balance) if balance >= ch.credits => DebitOutcome::Revoked,
                    Some(balance) => DebitOutcome::Insufficient { balance },
                    None => DebitOutcome::NoAccount,
                }
            }
            Some(balance) => {
                $run::execute(
                    diesel::insert_into(ledger::table).values(NewLedger {
                        account_id: ch.account_id,
                        kind: "charge",
                        operation: Some(&ch.operation),
                        credits: -ch.credits,
                        balance_after: balance,
                        request_id: Some(&ch.request_id),
                        surface: &ch.surface,
                        key_id: ch.key_id,
                        created_at: $now,
                    }),
                    $c,
                )$($aw)*?;
                DebitOutcome::Charged { balance }
            }
        }
    }};
}

/// Records many calls in ONE transaction (group commit), each debited exactly as [`debit`] does,
/// in order. Returns one outcome per charge; if the commit fails, none of them is charged.
pub async fn debit_batch(
    db: &Db,
    charges: Vec<OwnedCharge>,
    now: NaiveDateTime,
) -> StoreResult<Vec<DebitOutcome>> {
    use crate::db::Conn;
    match db.conn().await? {
        Conn::Pg(mut c) => {
            use diesel_async::RunQueryDsl as AsyncRun;
            let out = c
                .transaction(async |c| {
                    let mut out = Vec::with_capacity(charges.len());
                    for ch in &charges {
                        out.push(debit_one!(c, ch, now, AsyncRun, [.await]));
                    }
                    Ok::<_, diesel::result::Error>(out)
                })
                .await?;
            Ok(out)
        }
        Conn::Sqlite(mut c) => {
            let out = c
                .spawn_blocking(move |c| {
                    use diesel::RunQueryDsl as SyncRun;
                    c.immediate_transaction(|c| {
                        let mut out = Vec::with_capacity(charges.len());
                        for ch in &charges {
                            out.push(debit_one!(c, ch, now, SyncRun, []));
                        }
                        Ok::<_, diesel::result::Error>(out)
                    })
                })
                .await?;
            Ok(out)
        }
    }
}
