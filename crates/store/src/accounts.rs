//! Accounts, API keys and the append-only ledger.
//!
//! Architecture Invariant: `accounts.balance` equals the sum of the account's ledger credits (the
//! per-call rows plus the daily roll-ups of the rows past retention), and never goes below zero:
//! every change to the balance is a conditional UPDATE plus its ledger INSERT in the same
//! transaction, and a roll-up deletes per-call rows and adds their sums to `ledger_daily` in one
//! transaction.

use crate::db::{Db, StoreError, StoreResult};
use crate::schema::{accounts, api_keys, idempotency_keys, ledger, ledger_daily};
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

/// A ledger row to insert. `None` is written as NULL, not left to the column's default
/// (`treat_none_as_default_value = false`): SQLite has no `DEFAULT` in a multi-row `VALUES`, so
/// with defaultable columns diesel inserts a batch one row at a time inside a savepoint, which
/// was a third of the ledger writer's time in the issue 20 profile (docs/BENCHMARKS.md); with
/// plain values a batch is one `INSERT` per [`crate::bulk::CHUNK`] rows on both backends.
#[derive(Insertable)]
#[diesel(table_name = ledger, treat_none_as_default_value = false)]
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

/// A charge's ledger row as PostgreSQL's idempotent charge writes it. Its values are owned so
/// that its INSERT has a `'static` query id, which is what lets diesel keep it prepared (a
/// borrowed row's INSERT is prepared afresh at every call).
#[derive(Insertable)]
#[diesel(table_name = ledger, treat_none_as_default_value = false)]
struct ChargeRow {
    account_id: i64,
    kind: &'static str,
    operation: String,
    credits: i64,
    balance_after: i64,
    request_id: String,
    surface: String,
    key_id: Option<i64>,
    created_at: RowTime,
}

/// A batch's time as its ledger rows bind it: on SQLite the text is formatted once per batch
/// and shared by every row (diesel formats a `NaiveDateTime` afresh for each row it binds, which
/// the issue 20 profile showed per ledger row), on PostgreSQL the time itself.
#[derive(Debug, Clone, diesel::expression::AsExpression)]
#[diesel(sql_type = diesel::sql_types::Timestamp)]
struct RowTime {
    at: NaiveDateTime,
    text: std::sync::Arc<str>,
}

impl RowTime {
    fn new(at: NaiveDateTime) -> RowTime {
        // diesel's own text form of a SQLite timestamp, so the rows read back the same.
        RowTime {
            at,
            text: at.format("%F %T%.f").to_string().into(),
        }
    }
}

impl diesel::serialize::ToSql<diesel::sql_types::Timestamp, diesel::sqlite::Sqlite> for RowTime {
    fn to_sql<'b>(
        &'b self,
        out: &mut diesel::serialize::Output<'b, '_, diesel::sqlite::Sqlite>,
    ) -> diesel::serialize::Result {
        out.set_value(&*self.text);
        Ok(diesel::serialize::IsNull::No)
    }
}

impl diesel::serialize::ToSql<diesel::sql_types::Timestamp, diesel::pg::Pg> for RowTime {
    fn to_sql<'b>(
        &'b self,
        out: &mut diesel::serialize::Output<'b, '_, diesel::pg::Pg>,
    ) -> diesel::serialize::Result {
        <NaiveDateTime as diesel::serialize::ToSql<diesel::sql_types::Timestamp, diesel::pg::Pg>>::to_sql(
            &self.at,
            &mut out.reborrow(),
        )
    }
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

/// The sum of the account's ledger credits, per-call rows and daily roll-ups (equals the
/// balance; used by tests and audits).
pub async fn ledger_sum(db: &Db, account_id: i64) -> StoreResult<i64> {
    use diesel::dsl::sql;
    use diesel::sql_types::BigInt;
    Ok(with_conn!(db, |c| {
        let calls: i64 = ledger::table
            .filter(ledger::account_id.eq(account_id))
            .select(sql::<BigInt>("CAST(COALESCE(SUM(credits), 0) AS BIGINT)"))
            .first(c)
            .await?;
        let days: i64 = ledger_daily::table
            .filter(ledger_daily::account_id.eq(account_id))
            .select(sql::<BigInt>("CAST(COALESCE(SUM(credits), 0) AS BIGINT)"))
            .first(c)
            .await?;
        calls + days
    }))
}

/// How many ledger rows name an account or a key that does not exist: always 0. SQLite's foreign
/// keys refuse such a row; PostgreSQL's ledger has none since migration `000050` (they cost two
/// referential checks a row), and there the debit function writes a row only for an account it
/// holds locked, and accounts and keys are never deleted. The tests check it after every batch.
pub async fn ledger_unowned(db: &Db) -> StoreResult<i64> {
    use diesel::dsl::sql;
    use diesel::sql_types::Bool;
    Ok(with_conn!(db, |c| {
        ledger::table
            .filter(sql::<Bool>(
                "NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = ledger.account_id) \
                 OR (ledger.key_id IS NOT NULL \
                     AND NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.id = ledger.key_id))",
            ))
            .count()
            .get_result(c)
            .await?
    }))
}

/// One account's calls of one operation on one surface on one day, rolled up.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = ledger_daily)]
pub struct LedgerDailyRow {
    pub account_id: i64,
    pub day: chrono::NaiveDate,
    pub operation: String,
    pub surface: String,
    pub calls: i64,
    pub credits: i64,
}

/// The account's rolled-up days, newest first.
pub async fn ledger_daily(db: &Db, account_id: i64) -> StoreResult<Vec<LedgerDailyRow>> {
    Ok(with_conn!(db, |c| {
        ledger_daily::table
            .filter(ledger_daily::account_id.eq(account_id))
            .order((
                ledger_daily::day.desc(),
                ledger_daily::operation,
                ledger_daily::surface,
            ))
            .select(LedgerDailyRow::as_select())
            .load(c)
            .await?
    }))
}

/// What one roll-up step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RollupStep {
    /// Per-call rows deleted and added to their day.
    pub rolled: usize,
    /// The id to continue after.
    pub after: i64,
    /// True when the step met a row at or after the cutoff (or the end of the ledger).
    pub done: bool,
}

/// Sums deleted charge rows per (account, day, operation, surface).
fn daily_sums(
    deleted: Vec<(i64, Option<String>, String, i64, NaiveDateTime)>,
) -> Vec<LedgerDailyRow> {
    let mut sums: std::collections::BTreeMap<(i64, chrono::NaiveDate, String, String), (i64, i64)> =
        std::collections::BTreeMap::new();
    for (account_id, operation, surface, credits, at) in deleted {
        let e = sums
            .entry((
                account_id,
                at.date(),
                operation.unwrap_or_default(),
                surface,
            ))
            .or_default();
        e.0 += 1;
        e.1 += credits;
    }
    sums.into_iter()
        .map(
            |((account_id, day, operation, surface), (calls, credits))| LedgerDailyRow {
                account_id,
                day,
                operation,
                surface,
                calls,
                credits,
            },
        )
        .collect()
}

/// The body of one roll-up step for the sync (SQLite) and async (PostgreSQL) connections, as in
/// [`debit_batch_body!`].
macro_rules! rollup_body {
    ($c:expr, $after:expr, $cutoff:expr, $page:expr, $run:ident, [$($aw:tt)*]) => {{
        let page: Vec<(i64, String, NaiveDateTime)> = $run::load(
            ledger::table
                .filter(ledger::id.gt($after))
                .order(ledger::id)
                .limit($page)
                .select((ledger::id, ledger::kind, ledger::created_at)),
            $c,
        )$($aw)*?;
        let mut step = RollupStep {
            rolled: 0,
            after: $after,
            done: (page.len() as i64) < $page,
        };
        let mut ids = Vec::new();
        for (id, kind, at) in &page {
            if *at >= $cutoff {
                step.done = true;
                break;
            }
            step.after = *id;
            if kind == "charge" {
                ids.push(*id);
            }
        }
        let mut deleted = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(crate::bulk::CHUNK) {
            // Only the rows this statement deleted are summed: a concurrent roll-up in another
            // process that deleted a row first gets nothing back for it.
            let rows: Vec<(i64, Option<String>, String, i64, NaiveDateTime)> = $run::load(
                diesel::delete(ledger::table.filter(ledger::id.eq_any(chunk))).returning((
                    ledger::account_id,
                    ledger::operation,
                    ledger::surface,
                    ledger::credits,
                    ledger::created_at,
                )),
                $c,
            )$($aw)*?;
            deleted.extend(rows);
        }
        step.rolled = deleted.len();
        for day in daily_sums(deleted) {
            $run::execute(
                diesel::insert_into(ledger_daily::table)
                    .values(&day)
                    .on_conflict((
                        ledger_daily::account_id,
                        ledger_daily::day,
                        ledger_daily::operation,
                        ledger_daily::surface,
                    ))
                    .do_update()
                    .set((
                        ledger_daily::calls.eq(ledger_daily::calls + day.calls),
                        ledger_daily::credits.eq(ledger_daily::credits + day.credits),
                    )),
                $c,
            )$($aw)*?;
        }
        step
    }};
}

/// One step of the ledger's retention: reads up to `page` rows in id order after `after`, and
/// rolls the charge rows created before `cutoff` into `ledger_daily` (deleting them and adding
/// their count and credits to their account's day, operation and surface) in ONE transaction, so
/// the sum of an account's ledger never changes. Grants are kept row by row. The step stops at
/// the first row created at or after the cutoff (rows are appended in time order).
pub async fn roll_up_step(
    db: &Db,
    after: i64,
    cutoff: NaiveDateTime,
    page: i64,
) -> StoreResult<RollupStep> {
    use crate::db::Conn;
    match db.conn().await? {
        Conn::Pg(mut c) => {
            use diesel_async::RunQueryDsl as AsyncRun;
            Ok(c.transaction(async |c| {
                let step = rollup_body!(c, after, cutoff, page, AsyncRun, [.await]);
                Ok::<_, diesel::result::Error>(step)
            })
            .await?)
        }
        Conn::Sqlite(mut c) => Ok(c
            .spawn_blocking(move |c| {
                use diesel::RunQueryDsl as SyncRun;
                c.immediate_transaction(|c| {
                    let step = rollup_body!(c, after, cutoff, page, SyncRun, []);
                    Ok::<_, diesel::result::Error>(step)
                })
            })
            .await?),
    }
}

/// A single nullable count read back from a PostgreSQL maintenance function.
#[derive(QueryableByName)]
struct MaintenanceCount {
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::BigInt>)]
    n: Option<i64>,
}

/// Runs one of the ledger's PostgreSQL maintenance functions (`query`, returning its count as
/// `n`): `None` on SQLite, which has no partitions (no connection is taken), else the count.
async fn ledger_maintenance<'q, Q>(db: &Db, query: Q) -> StoreResult<Option<Option<i64>>>
where
    Q: diesel_async::methods::LoadQuery<'q, diesel_async::AsyncPgConnection, MaintenanceCount>
        + Send
        + 'q,
{
    if db.backend() != crate::Backend::Postgres {
        return Ok(None);
    }
    let crate::db::Conn::Pg(mut c) = db.conn().await? else {
        return Ok(None);
    };
    let row: MaintenanceCount = diesel_async::RunQueryDsl::get_result(query, &mut *c).await?;
    Ok(Some(row.n))
}

/// PostgreSQL's ledger partitions (migration `000053_ledger_partitions`): a partition for every
/// month with rows in the default partition (moving them in) and for the month of `now` and the
/// `ahead` months after it. Returns the partitions made; SQLite has no partitions (0).
pub async fn ledger_partitions(db: &Db, now: NaiveDateTime, ahead: i32) -> StoreResult<i64> {
    let query = diesel::sql_query("SELECT terrace_ledger_partitions($1, $2)::BIGINT AS n")
        .bind::<diesel::sql_types::Timestamp, _>(now)
        .bind::<diesel::sql_types::Integer, _>(ahead);
    Ok(ledger_maintenance(db, query).await?.flatten().unwrap_or(0))
}

/// PostgreSQL: rolls up the oldest month partition wholly before `cutoff` that still holds
/// charges, in one transaction (its charges summed into `ledger_daily`, the partition emptied,
/// its grants kept). Returns the charges rolled, or `None` when no such month is left; SQLite
/// has no partitions (`None`), and [`roll_up_step`] rolls its rows.
pub async fn roll_up_month(db: &Db, cutoff: NaiveDateTime) -> StoreResult<Option<i64>> {
    let query = diesel::sql_query("SELECT terrace_ledger_roll_up_month($1) AS n")
        .bind::<diesel::sql_types::Timestamp, _>(cutoff);
    Ok(ledger_maintenance(db, query).await?.flatten())
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

/// What [`decide`] made of a batch.
struct Decided {
    /// Each debit's outcome, in the batch's order.
    outcomes: Vec<DebitOutcome>,
    /// The ledger rows to append: the debit's index in the batch and the balance after it.
    rows: Vec<(usize, i64)>,
    /// The credits to take from each account charged.
    taken: Vec<(i64, i64)>,
}

/// Decides a batch of debits in arrival order from the balances and revoked keys read at the
/// start of the transaction: the same rule a conditional `UPDATE ... WHERE balance >= credits`
/// applies one debit at a time.
fn decide(charges: &[OwnedCharge], balances: &[(i64, i64)], revoked: &[i64]) -> Decided {
    let mut balance: std::collections::HashMap<i64, i64> = balances.iter().copied().collect();
    let mut outcomes = Vec::with_capacity(charges.len());
    let mut rows = Vec::with_capacity(charges.len());
    for (i, ch) in charges.iter().enumerate() {
        let Some(bal) = balance.get_mut(&ch.account_id) else {
            outcomes.push(DebitOutcome::NoAccount);
            continue;
        };
        let key_revoked = ch.key_id.is_some_and(|k| revoked.contains(&k));
        outcomes.push(if *bal < ch.credits {
            DebitOutcome::Insufficient { balance: *bal }
        } else if key_revoked {
            DebitOutcome::Revoked
        } else {
            *bal -= ch.credits;
            rows.push((i, *bal));
            DebitOutcome::Charged { balance: *bal }
        });
    }
    let mut taken: Vec<(i64, i64)> = balances
        .iter()
        .map(|(id, before)| (*id, before - balance.get(id).copied().unwrap_or(*before)))
        .filter(|(_, t)| *t != 0)
        .collect();
    taken.sort_unstable();
    Decided {
        outcomes,
        rows,
        taken,
    }
}

/// The ledger rows of a decided batch ([`debit_batch_body!`]'s last step): `sqlite` writes them
/// through [`insert_rows_sqlite`] (the writer's batches and SQLite's idempotent charge);
/// `generic` inserts owned [`ChargeRow`]s one at a time through diesel, for PostgreSQL's
/// idempotent charge, whose batch is its one debit (PostgreSQL's batches run
/// [`debit_batch_pg`]).
macro_rules! ledger_rows_insert {
    (sqlite, $c:expr, $charges:expr, $rows:expr, $now:expr, $run:ident, [$($aw:tt)*]) => {{
        insert_rows_sqlite($c, $charges, $rows, &RowTime::new($now).text)?;
    }};
    (generic, $c:expr, $charges:expr, $rows:expr, $now:expr, $run:ident, [$($aw:tt)*]) => {{
        let created_at = RowTime::new($now);
        for &(i, balance_after) in $rows.iter() {
            let ch = &$charges[i];
            let row = ChargeRow {
                account_id: ch.account_id,
                kind: "charge",
                operation: ch.operation.clone(),
                credits: -ch.credits,
                balance_after,
                request_id: ch.request_id.clone(),
                surface: ch.surface.clone(),
                key_id: ch.key_id,
                created_at: created_at.clone(),
            };
            $run::execute(diesel::insert_into(ledger::table).values(&row), $c)$($aw)*?;
        }
    }};
}

/// The body of a batch of debits inside a transaction the caller holds: SQLite's batches, and the
/// idempotent charge on both backends (PostgreSQL's plain batches run [`debit_batch_pg`]),
/// expanded for the sync (SQLite) and async (PostgreSQL) connections: `$run` executes a query
/// (`diesel::RunQueryDsl` or `diesel_async::RunQueryDsl`), `$($aw)*` is `.await` or nothing, and
/// `$($lock)*` locks the accounts read (PostgreSQL's `FOR UPDATE`; an SQLite write transaction
/// holds the whole database already).
///
/// A fixed number of statements per batch, whatever its size: the revoked keys among the
/// batch's keys, the balances of its accounts, one UPDATE per account charged and the ledger
/// rows in multi-row INSERTs.
macro_rules! debit_batch_body {
    ($mode:ident, $c:expr, $charges:expr, $now:expr, $run:ident, [$($aw:tt)*], [$($lock:tt)*]) => {{
        let charges: &[OwnedCharge] = $charges;
        let mut account_ids: Vec<i64> = charges.iter().map(|ch| ch.account_id).collect();
        account_ids.sort_unstable();
        account_ids.dedup();
        let mut key_ids: Vec<i64> = charges.iter().filter_map(|ch| ch.key_id).collect();
        key_ids.sort_unstable();
        key_ids.dedup();
        // The key must still be live at commit time: a key revoked by any process stops
        // working at once, even where a gateway authenticated it from its cache.
        // One look-up per distinct key and account, not `IN (...)` lists: diesel prepares a
        // statement with a list afresh at every call, while these keep their prepared
        // statements (issue 20: the writer parsed its statements at every commit).
        let mut revoked: Vec<i64> = Vec::new();
        for &k in &key_ids {
            let found: Option<i64> = $run::get_result(
                api_keys::table
                    .filter(api_keys::id.eq(k))
                    .filter(api_keys::revoked_at.is_not_null())
                    .select(api_keys::id),
                $c,
            )$($aw)*
            .optional()?;
            revoked.extend(found);
        }
        let mut balances: Vec<(i64, i64)> = Vec::with_capacity(account_ids.len());
        for &a in &account_ids {
            let found: Option<i64> = $run::get_result(
                accounts::table
                    .find(a)
                    .select(accounts::balance)
                    $($lock)*,
                $c,
            )$($aw)*
            .optional()?;
            balances.extend(found.map(|b| (a, b)));
        }
        let Decided {
            outcomes,
            rows,
            taken,
        } = decide(charges, &balances, &revoked);
        for (id, total) in taken {
            // The CHECK (balance >= 0) backs the rule `decide` applied under the lock.
            $run::execute(AccountDebit { id, total }, $c)$($aw)*?;
        }
        ledger_rows_insert!($mode, $c, charges, &rows, $now, $run, [$($aw)*]);
        outcomes
    }};
}

/// `UPDATE accounts SET balance = balance - total WHERE id = id`, written by hand so that it
/// keeps one prepared statement per connection: diesel gives an `UpdateStatement` no static
/// query id, and SQLite's ledger writer parsed and planned this update at every batch (8.6% of
/// the writer's time in the issue 20 profile of session 19).
#[derive(Debug, Clone, Copy)]
struct AccountDebit {
    id: i64,
    total: i64,
}

/// [`AccountDebit`]'s query id.
struct AccountDebitId;

impl diesel::query_builder::QueryId for AccountDebit {
    type QueryId = AccountDebitId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<DB> diesel::query_builder::QueryFragment<DB> for AccountDebit
where
    DB: diesel::backend::Backend + diesel::sql_types::HasSqlType<diesel::sql_types::BigInt>,
    i64: diesel::serialize::ToSql<diesel::sql_types::BigInt, DB>,
{
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, DB>,
    ) -> diesel::QueryResult<()> {
        use diesel::sql_types::BigInt;
        out.push_sql("UPDATE accounts SET balance = balance - ");
        out.push_bind_param::<BigInt, _>(&self.total)?;
        out.push_sql(" WHERE id = ");
        out.push_bind_param::<BigInt, _>(&self.id)?;
        Ok(())
    }
}

impl<Conn> diesel::RunQueryDsl<Conn> for AccountDebit {}

/// A batch's charge rows as one SQLite INSERT of `N` rows, written by hand: each row binds its
/// seven values borrowed from the batch (no owned copy of its strings), `kind` is the literal
/// `'charge'`, and the statement keeps one prepared form per `N` (its query id). diesel's insert
/// of [`ChargeRow`] tuples walked nine generic columns per row and cloned three strings; the
/// rows were most of the writer's time in the issue 20 profile (session 16).
///
/// `OR FAIL`: a row that broke a constraint would stop the statement where it is instead of
/// undoing the statement's earlier rows, so SQLite keeps no statement journal of the pages the
/// statement changes (8% of the INSERT's time, session 17); the batch's transaction is rolled
/// back on any error anyway.
struct SqliteChargeRows<'a, const N: usize> {
    charges: &'a [OwnedCharge],
    rows: &'a [(usize, i64); N],
    at: &'a str,
}

/// [`SqliteChargeRows`]' query id: one per row count.
struct SqliteChargeRowsId<const N: usize>;

impl<const N: usize> diesel::query_builder::QueryId for SqliteChargeRows<'_, N> {
    type QueryId = SqliteChargeRowsId<N>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<const N: usize> diesel::query_builder::QueryFragment<diesel::sqlite::Sqlite>
    for SqliteChargeRows<'_, N>
{
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::sqlite::Sqlite>,
    ) -> diesel::QueryResult<()> {
        use diesel::sql_types::{BigInt, Nullable, Text};
        out.push_sql(
            "INSERT OR FAIL INTO ledger (account_id, kind, operation, credits, balance_after, \
             request_id, surface, key_id, created_at) VALUES ",
        );
        for (j, (i, balance_after)) in self.rows.iter().enumerate() {
            let ch = self.charges.get(*i).ok_or_else(|| {
                diesel::result::Error::QueryBuilderError("a charge row out of its batch".into())
            })?;
            out.push_sql(if j == 0 { "(" } else { ", (" });
            out.push_bind_param::<BigInt, _>(&ch.account_id)?;
            out.push_sql(", 'charge', ");
            out.push_bind_param::<Text, _>(ch.operation.as_str())?;
            out.push_sql(", -");
            out.push_bind_param::<BigInt, _>(&ch.credits)?;
            out.push_sql(", ");
            out.push_bind_param::<BigInt, _>(balance_after)?;
            out.push_sql(", ");
            out.push_bind_param::<Text, _>(ch.request_id.as_str())?;
            out.push_sql(", ");
            out.push_bind_param::<Text, _>(ch.surface.as_str())?;
            out.push_sql(", ");
            out.push_bind_param::<Nullable<BigInt>, _>(&ch.key_id)?;
            out.push_sql(", ");
            out.push_bind_param::<Text, _>(self.at)?;
            out.push_sql(")");
        }
        Ok(())
    }
}

impl<const N: usize> diesel::RunQueryDsl<diesel::SqliteConnection> for SqliteChargeRows<'_, N> {}

/// Appends a decided batch's charge rows (`rows`: the charge's index in `charges` and the balance
/// after it) in INSERTs of 64, 16, 4 and 1 rows, each prepared once per connection (a statement
/// of any other length would be parsed afresh at every batch). `at` is the batch's time in
/// diesel's SQLite text form ([`RowTime`]).
fn insert_rows_sqlite(
    c: &mut diesel::SqliteConnection,
    charges: &[OwnedCharge],
    rows: &[(usize, i64)],
    at: &str,
) -> diesel::QueryResult<()> {
    use diesel::RunQueryDsl as SyncRun;
    fn chunk<const N: usize>(
        c: &mut diesel::SqliteConnection,
        charges: &[OwnedCharge],
        rows: &[(usize, i64); N],
        at: &str,
    ) -> diesel::QueryResult<()> {
        SyncRun::execute(SqliteChargeRows { charges, rows, at }, c).map(|_| ())
    }
    let mut rest = rows;
    while !rest.is_empty() {
        rest = if let Some((head, tail)) = rest.split_first_chunk::<64>() {
            chunk(c, charges, head, at)?;
            tail
        } else if let Some((head, tail)) = rest.split_first_chunk::<16>() {
            chunk(c, charges, head, at)?;
            tail
        } else if let Some((head, tail)) = rest.split_first_chunk::<4>() {
            chunk(c, charges, head, at)?;
            tail
        } else if let Some((head, tail)) = rest.split_first_chunk::<1>() {
            chunk(c, charges, head, at)?;
            tail
        } else {
            break;
        };
    }
    Ok(())
}

/// Records many calls in ONE transaction (group commit), each debited exactly as [`debit`] does,
/// in order. Returns one outcome per charge; if the commit fails, none of them is charged.
pub async fn debit_batch(
    db: &Db,
    charges: Vec<OwnedCharge>,
    now: NaiveDateTime,
) -> StoreResult<Vec<DebitOutcome>> {
    debit_batch_on(&mut db.conn().await?, charges, now).await
}

/// [`debit_batch`] on a connection the caller holds from batch to batch (the ledger writer's):
/// no pool checkout per batch, so on PostgreSQL none of the pool's verifying `SELECT 1` round
/// trips, which were one more round trip per batch (issue 20, session 15).
pub async fn debit_batch_on(
    conn: &mut crate::db::Conn,
    charges: Vec<OwnedCharge>,
    now: NaiveDateTime,
) -> StoreResult<Vec<DebitOutcome>> {
    use crate::db::Conn;
    match conn {
        Conn::Pg(c) => debit_batch_pg(c, &charges, now).await,
        Conn::Sqlite(c) => {
            let out = c
                .spawn_blocking(move |c| {
                    use diesel::RunQueryDsl as SyncRun;
                    prepared_immediate_transaction(c, |c| {
                        Ok(debit_batch_body!(sqlite, c, &charges, now, SyncRun, [], []))
                    })
                })
                .await?;
            Ok(out)
        }
    }
}

/// Readies a connection for the ledger writer's batches. SQLite: a page cache of 8 MiB whatever
/// the pool's (`TERRACE_SQLITE_CACHE_KIB`); a larger one it filled by allocating a page for every
/// page the growing ledger added (the writer reads only the ledger's last pages, the accounts
/// and the keys; measured in issue 20, session 17, when the pool's was 64 MiB). PostgreSQL:
/// nothing.
pub async fn ready_ledger_writer(conn: &mut crate::db::Conn) -> StoreResult<()> {
    use diesel_async::SimpleAsyncConnection;
    match conn {
        crate::db::Conn::Pg(_) => Ok(()),
        crate::db::Conn::Sqlite(c) => {
            c.batch_execute("PRAGMA cache_size = -8192;").await?;
            Ok(())
        }
    }
}

/// An SQLite statement of fixed text that diesel keeps prepared for the connection's life (its
/// type is its query id). diesel's own transactions hand `BEGIN` and `COMMIT` to `sqlite3_exec`,
/// which parses them again at every transaction: about 1% of a charged call's CPU in the ledger
/// writer (issue 20, session 15).
macro_rules! sqlite_fixed_statement {
    ($name:ident, $sql:literal) => {
        #[derive(Debug, Clone, Copy, diesel::query_builder::QueryId)]
        struct $name;

        impl diesel::query_builder::QueryFragment<diesel::sqlite::Sqlite> for $name {
            fn walk_ast<'b>(
                &'b self,
                mut out: diesel::query_builder::AstPass<'_, 'b, diesel::sqlite::Sqlite>,
            ) -> diesel::QueryResult<()> {
                out.push_sql($sql);
                Ok(())
            }
        }

        impl diesel::RunQueryDsl<diesel::SqliteConnection> for $name {}
    };
}

sqlite_fixed_statement!(BeginImmediate, "BEGIN IMMEDIATE");
sqlite_fixed_statement!(Commit, "COMMIT");
sqlite_fixed_statement!(Rollback, "ROLLBACK");

/// `body` in an immediate transaction run by prepared statements: committed when it returns
/// `Ok`, rolled back when it (or the commit) fails. A transaction left open by an earlier failure
/// (a rollback that failed too) is rolled back before this one begins, so one failure never
/// wedges the writer's connection. Public for the store's tests only.
#[doc(hidden)]
pub fn prepared_immediate_transaction<T>(
    c: &mut diesel::SqliteConnection,
    body: impl FnOnce(&mut diesel::SqliteConnection) -> diesel::QueryResult<T>,
) -> diesel::QueryResult<T> {
    use diesel::RunQueryDsl as SyncRun;
    if SyncRun::execute(BeginImmediate, c).is_err() {
        let _ = SyncRun::execute(Rollback, c);
        SyncRun::execute(BeginImmediate, c)?;
    }
    let done = body(c).and_then(|out| SyncRun::execute(Commit, c).map(|_| out));
    if done.is_err() {
        let _ = SyncRun::execute(Rollback, c);
    }
    done
}

/// One row of `terrace_debit_batch` (migrations `000042_debit_batch_function`, set-based since
/// `000050_debit_batch_set`).
#[derive(QueryableByName)]
struct PgOutcome {
    #[diesel(sql_type = diesel::sql_types::Integer)]
    o_ord: i32,
    #[diesel(sql_type = diesel::sql_types::Text)]
    o_outcome: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::BigInt>)]
    o_balance: Option<i64>,
}

/// The call of `terrace_debit_batch` as a statement of fixed text with a static query id, so
/// diesel keeps it prepared for the connection's life. Through `sql_query` it was prepared afresh
/// at every batch: a Parse/Describe round trip (and an implicit transaction) before the Bind/Execute
/// one, which doubled the round trips of the writer's batch (issue 20, session 16). Its texts are
/// borrowed from the batch.
#[derive(Debug)]
struct DebitBatchCall<'a> {
    accounts: Vec<i64>,
    keys: Vec<Option<i64>>,
    credits: Vec<i64>,
    operations: Vec<&'a str>,
    requests: Vec<&'a str>,
    surfaces: Vec<&'a str>,
    at: NaiveDateTime,
}

/// [`DebitBatchCall`]'s query id (the call borrows, so it cannot be its own).
struct DebitBatchCallId;

impl diesel::query_builder::QueryId for DebitBatchCall<'_> {
    type QueryId = DebitBatchCallId;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl diesel::query_builder::QueryFragment<diesel::pg::Pg> for DebitBatchCall<'_> {
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> diesel::QueryResult<()> {
        use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamp};
        out.push_sql("SELECT o_ord, o_outcome, o_balance FROM terrace_debit_batch(");
        out.push_bind_param::<Array<BigInt>, _>(&self.accounts)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Nullable<BigInt>>, _>(&self.keys)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<BigInt>, _>(&self.credits)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.operations)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.requests)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.surfaces)?;
        out.push_sql(", ");
        out.push_bind_param::<Timestamp, _>(&self.at)?;
        out.push_sql(")");
        Ok(())
    }
}

impl diesel::query_builder::Query for DebitBatchCall<'_> {
    type SqlType = diesel::sql_types::Untyped;
}

/// PostgreSQL's batch: the whole batch is one call of the `terrace_debit_batch` function, in
/// autocommit, so it costs one round trip and one commit (where the statement-by-statement body
/// cost six round trips: begin, revoked keys, balances, update, insert, commit, which set the
/// writer's pace). The function applies [`decide`]'s rule; `one_batch_decides_each_debit_in_order`
/// and the concurrency tests run on both backends to hold the two to the same answers.
async fn debit_batch_pg(
    c: &mut diesel_async::AsyncPgConnection,
    charges: &[OwnedCharge],
    now: NaiveDateTime,
) -> StoreResult<Vec<DebitOutcome>> {
    let call = DebitBatchCall {
        accounts: charges.iter().map(|ch| ch.account_id).collect(),
        keys: charges.iter().map(|ch| ch.key_id).collect(),
        credits: charges.iter().map(|ch| ch.credits).collect(),
        operations: charges.iter().map(|ch| ch.operation.as_str()).collect(),
        requests: charges.iter().map(|ch| ch.request_id.as_str()).collect(),
        surfaces: charges.iter().map(|ch| ch.surface.as_str()).collect(),
        at: now,
    };
    let rows: Vec<PgOutcome> = diesel_async::RunQueryDsl::load(call, c).await?;
    let mut out = vec![DebitOutcome::NoAccount; charges.len()];
    for r in rows {
        let slot = usize::try_from(r.o_ord - 1)
            .ok()
            .and_then(|i| out.get_mut(i))
            .ok_or_else(|| {
                StoreError::Setup(format!("debit batch row {} out of range", r.o_ord))
            })?;
        *slot = match (r.o_outcome.as_str(), r.o_balance) {
            ("charged", Some(balance)) => DebitOutcome::Charged { balance },
            ("insufficient", Some(balance)) => DebitOutcome::Insufficient { balance },
            ("revoked", _) => DebitOutcome::Revoked,
            ("no_account", _) => DebitOutcome::NoAccount,
            (other, b) => {
                return Err(StoreError::Setup(format!(
                    "debit batch outcome {other:?} with balance {b:?}"
                )));
            }
        };
    }
    Ok(out)
}

/// What creating a key on behalf of a calling key did.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyWrite<T> {
    Done(T),
    /// The calling key was revoked (possibly by another process): nothing was written.
    CallerRevoked,
    /// The account already has the most live keys allowed: nothing was written.
    TooManyKeys,
    /// (Revoke) the account has no such live key.
    NoKey,
}

/// Checks, inside a write transaction, that the calling key is still live, and locks its row so
/// a concurrent revocation waits for this write (PostgreSQL) or is ordered by the write lock
/// (SQLite). `None` (a web session or an OAuth token) has no key to check.
macro_rules! caller_live {
    ($c:expr, $account:expr, $by_key:expr) => {{
        match $by_key {
            None => true,
            Some(k) => {
                diesel::update(
                    api_keys::table
                        .filter(api_keys::id.eq(k))
                        .filter(api_keys::account_id.eq($account))
                        .filter(api_keys::revoked_at.is_null()),
                )
                .set(api_keys::revoked_at.eq(None::<NaiveDateTime>))
                .execute($c)
                .await?
                    == 1
            }
        }
    }};
}

/// [`insert_key`] on behalf of `by_key`, in one transaction: the calling key must still be live
/// and the account must have fewer than `max_live` live keys.
#[allow(clippy::too_many_arguments)]
pub async fn insert_key_checked(
    db: &Db,
    account_id: i64,
    by_key: Option<i64>,
    max_live: i64,
    key_hash: &str,
    prefix: &str,
    last4: &str,
    name: Option<&str>,
    now: NaiveDateTime,
) -> StoreResult<KeyWrite<ApiKeyRow>> {
    Ok(with_conn!(db, |c| {
        c.transaction(async |c| {
            // Serialises key creation per account (the count below cannot race), and writes
            // before any read, so the transaction takes SQLite's write lock first (a read
            // transaction that later writes fails at once with "database is locked" when
            // another writer went first, instead of waiting).
            diesel::update(accounts::table.find(account_id))
                .set(accounts::id.eq(account_id))
                .execute(c)
                .await?;
            if !caller_live!(c, account_id, by_key) {
                return Ok(KeyWrite::CallerRevoked);
            }
            let live: i64 = api_keys::table
                .filter(api_keys::account_id.eq(account_id))
                .filter(api_keys::revoked_at.is_null())
                .count()
                .get_result(c)
                .await?;
            if live >= max_live {
                return Ok(KeyWrite::TooManyKeys);
            }
            let row = diesel::insert_into(api_keys::table)
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
                .await?;
            Ok::<_, diesel::result::Error>(KeyWrite::Done(row))
        })
        .await?
    }))
}

/// [`revoke_key`] on behalf of `by_key`, in one transaction: the calling key must still be live
/// (it may revoke itself).
pub async fn revoke_key_checked(
    db: &Db,
    account_id: i64,
    by_key: Option<i64>,
    key_id: i64,
    now: NaiveDateTime,
) -> StoreResult<KeyWrite<()>> {
    Ok(with_conn!(db, |c| {
        c.transaction(async |c| {
            // Write first (see `insert_key_checked`): the write lock before the caller's check.
            diesel::update(accounts::table.find(account_id))
                .set(accounts::id.eq(account_id))
                .execute(c)
                .await?;
            if !caller_live!(c, account_id, by_key) {
                return Ok(KeyWrite::CallerRevoked);
            }
            let n = diesel::update(
                api_keys::table
                    .filter(api_keys::id.eq(key_id))
                    .filter(api_keys::account_id.eq(account_id))
                    .filter(api_keys::revoked_at.is_null()),
            )
            .set(api_keys::revoked_at.eq(Some(now)))
            .execute(c)
            .await?;
            Ok::<_, diesel::result::Error>(if n == 1 {
                KeyWrite::Done(())
            } else {
                KeyWrite::NoKey
            })
        })
        .await?
    }))
}

/// The stored answer of a call made with an idempotency key.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = idempotency_keys)]
pub struct IdempotentRow {
    pub account_id: i64,
    pub idem_key: String,
    /// The SHA-256 of what the call asked (operation, parameters and body).
    pub request_hash: String,
    pub operation: String,
    /// The answer's JSON object, without the credit fields.
    pub body: String,
    pub credits_charged: i64,
    pub credits_remaining: i64,
    pub created_at: NaiveDateTime,
}

/// The stored answer under the account's `key`, if it was stored after `since`.
pub async fn idempotent_answer(
    db: &Db,
    account_id: i64,
    key: &str,
    since: NaiveDateTime,
) -> StoreResult<Option<IdempotentRow>> {
    Ok(with_conn!(db, |c| {
        idempotency_keys::table
            .filter(idempotency_keys::account_id.eq(account_id))
            .filter(idempotency_keys::idem_key.eq(key))
            .filter(idempotency_keys::created_at.gt(since))
            .select(IdempotentRow::as_select())
            .first(c)
            .await
            .optional()?
    }))
}

/// What an idempotent debit did.
#[derive(Debug, Clone, PartialEq)]
pub enum IdempotentOutcome {
    /// Charged and stored, as one transaction.
    Charged { balance: i64 },
    /// Another call under the same key committed first: nothing was charged; its answer.
    Replay(Box<IdempotentRow>),
    /// The debit was refused as [`debit`] refuses it; nothing was written.
    Refused(DebitOutcome),
}

/// [`debit`] and the call's stored answer in ONE transaction (not through the group-commit
/// writer), so a charged call sent with an idempotency key is either charged and answerable
/// again, or neither. `row.credits_remaining` is filled in with the balance after the debit.
/// The account's stored answers older than `expired_before` are deleted on the way.
pub async fn debit_idempotent(
    db: &Db,
    charge: OwnedCharge,
    mut row: IdempotentRow,
    expired_before: NaiveDateTime,
    now: NaiveDateTime,
) -> StoreResult<IdempotentOutcome> {
    use crate::db::Conn;
    let account = charge.account_id;
    let key = row.idem_key.clone();
    let outcome: Result<DebitOutcome, diesel::result::Error> = match db.conn().await? {
        Conn::Pg(mut c) => {
            use diesel_async::RunQueryDsl as AsyncRun;
            c.transaction(async |c| {
                AsyncRun::execute(
                    diesel::delete(
                        idempotency_keys::table
                            .filter(idempotency_keys::account_id.eq(account))
                            .filter(idempotency_keys::created_at.le(expired_before)),
                    ),
                    c,
                )
                .await?;
                let out = debit_batch_body!(generic, c, std::slice::from_ref(&charge), now, AsyncRun, [.await], [.for_update()])
                    .pop()
                    .unwrap_or(DebitOutcome::NoAccount);
                if let DebitOutcome::Charged { balance } = out {
                    row.credits_remaining = balance;
                    let n = AsyncRun::execute(
                        diesel::insert_into(idempotency_keys::table)
                            .values(&row)
                            .on_conflict_do_nothing(),
                        c,
                    )
                    .await?;
                    if n == 0 {
                        return Err(diesel::result::Error::RollbackTransaction);
                    }
                }
                Ok(out)
            })
            .await
        }
        Conn::Sqlite(mut c) => {
            c.spawn_blocking(move |c| {
                use diesel::RunQueryDsl as SyncRun;
                c.immediate_transaction(|c| {
                    SyncRun::execute(
                        diesel::delete(
                            idempotency_keys::table
                                .filter(idempotency_keys::account_id.eq(account))
                                .filter(idempotency_keys::created_at.le(expired_before)),
                        ),
                        c,
                    )?;
                    let out = debit_batch_body!(
                        sqlite,
                        c,
                        std::slice::from_ref(&charge),
                        now,
                        SyncRun,
                        [],
                        []
                    )
                    .pop()
                    .unwrap_or(DebitOutcome::NoAccount);
                    if let DebitOutcome::Charged { balance } = out {
                        row.credits_remaining = balance;
                        let n = SyncRun::execute(
                            diesel::insert_into(idempotency_keys::table)
                                .values(&row)
                                .on_conflict_do_nothing(),
                            c,
                        )?;
                        if n == 0 {
                            return Err(diesel::result::Error::RollbackTransaction);
                        }
                    }
                    Ok(out)
                })
            })
            .await
        }
    };
    match outcome {
        Ok(DebitOutcome::Charged { balance }) => Ok(IdempotentOutcome::Charged { balance }),
        Ok(other) => Ok(IdempotentOutcome::Refused(other)),
        Err(diesel::result::Error::RollbackTransaction) => {
            match idempotent_answer(db, account, &key, expired_before).await? {
                Some(r) => Ok(IdempotentOutcome::Replay(Box::new(r))),
                None => Err(crate::StoreError::Conflict(
                    "an idempotency key was taken and then expired".into(),
                )),
            }
        }
        Err(e) => Err(e.into()),
    }
}
