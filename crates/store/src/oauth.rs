//! OAuth 2.1 clients, authorization codes, grants and rotating refresh tokens, and web sessions.
//!
//! Secrets (codes, refresh tokens, session ids) arrive here already hashed; this module never sees
//! them in clear. Single use is enforced by conditional updates (`used_at IS NULL`), so two
//! concurrent redemptions of one code or one refresh token cannot both succeed.

use crate::db::{Db, StoreResult};
use crate::schema::{accounts, oauth_clients, oauth_codes, oauth_grants};
use crate::schema::{oauth_refresh_tokens, web_sessions};
use crate::with_conn;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = oauth_clients)]
pub struct ClientRow {
    pub client_id: String,
    pub client_name: Option<String>,
    /// A JSON array of the exact redirect URIs.
    pub redirect_uris: String,
    /// True for a client whose id is the URL of its metadata document (fetched, cached here).
    pub metadata_document: bool,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = oauth_codes)]
pub struct CodeRow {
    pub code_hash: String,
    pub client_id: String,
    pub account_id: i64,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub resource: String,
    pub scope: String,
    pub expires_at: NaiveDateTime,
    pub used_at: Option<NaiveDateTime>,
    pub grant_id: Option<i64>,
    pub created_at: NaiveDateTime,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = oauth_grants)]
pub struct GrantRow {
    pub id: i64,
    pub account_id: i64,
    pub client_id: String,
    pub resource: String,
    pub scope: String,
    pub created_at: NaiveDateTime,
    pub revoked_at: Option<NaiveDateTime>,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = web_sessions)]
pub struct SessionRow {
    pub id_hash: String,
    pub account_id: i64,
    pub csrf_token: String,
    pub created_at: NaiveDateTime,
    pub expires_at: NaiveDateTime,
}

/// Inserts or refreshes a client (a fetched metadata document replaces the cached one).
pub async fn upsert_client(db: &Db, row: &ClientRow) -> StoreResult<()> {
    with_conn!(db, |c| {
        diesel::insert_into(oauth_clients::table)
            .values(row)
            .on_conflict(oauth_clients::client_id)
            .do_update()
            .set((
                oauth_clients::client_name.eq(&row.client_name),
                oauth_clients::redirect_uris.eq(&row.redirect_uris),
                oauth_clients::updated_at.eq(row.updated_at),
            ))
            .execute(c)
            .await?
    });
    Ok(())
}

/// Deletes the clients registered before `before` that never completed an authorization (no
/// code was issued to them and no grant names them); returns how many.
pub async fn delete_unused_clients(db: &Db, before: NaiveDateTime) -> StoreResult<usize> {
    use diesel::dsl::{exists, not};
    Ok(with_conn!(db, |c| {
        diesel::delete(
            oauth_clients::table
                .filter(oauth_clients::created_at.lt(before))
                .filter(not(exists(
                    oauth_codes::table.filter(oauth_codes::client_id.eq(oauth_clients::client_id)),
                )))
                .filter(not(exists(
                    oauth_grants::table
                        .filter(oauth_grants::client_id.eq(oauth_clients::client_id)),
                ))),
        )
        .execute(c)
        .await?
    }))
}

pub async fn client(db: &Db, client_id: &str) -> StoreResult<Option<ClientRow>> {
    Ok(with_conn!(db, |c| {
        oauth_clients::table
            .find(client_id)
            .select(ClientRow::as_select())
            .first(c)
            .await
            .optional()?
    }))
}

pub async fn insert_code(db: &Db, row: &CodeRow) -> StoreResult<()> {
    with_conn!(db, |c| {
        diesel::insert_into(oauth_codes::table)
            .values(row)
            .execute(c)
            .await?
    });
    Ok(())
}

/// What presenting an authorization code found.
#[derive(Debug, Clone, PartialEq)]
pub enum TakenCode {
    /// First use: the code is now marked used.
    Fresh(CodeRow),
    /// The code was used before (its grant, if one was issued, should be revoked).
    Reused(CodeRow),
    Unknown,
}

/// Marks a code used, once: the first caller gets `Fresh`, every later one `Reused`.
pub async fn take_code(db: &Db, code_hash: &str, now: NaiveDateTime) -> StoreResult<TakenCode> {
    Ok(with_conn!(db, |c| {
        let taken: Option<CodeRow> = diesel::update(
            oauth_codes::table
                .filter(oauth_codes::code_hash.eq(code_hash))
                .filter(oauth_codes::used_at.is_null()),
        )
        .set(oauth_codes::used_at.eq(Some(now)))
        .returning(CodeRow::as_returning())
        .get_result(c)
        .await
        .optional()?;
        match taken {
            Some(row) => TakenCode::Fresh(row),
            None => {
                let old: Option<CodeRow> = oauth_codes::table
                    .find(code_hash)
                    .select(CodeRow::as_select())
                    .first(c)
                    .await
                    .optional()?;
                old.map_or(TakenCode::Unknown, TakenCode::Reused)
            }
        }
    }))
}

/// A new refresh token to store (already hashed).
#[derive(Debug, Clone)]
pub struct NewRefresh<'a> {
    pub token_hash: &'a str,
    pub expires_at: NaiveDateTime,
}

/// Creates the grant a redeemed code stands for, with its first refresh token, and links the code
/// to it (so a later reuse of the code can revoke it). One transaction; returns the grant id.
pub async fn create_grant(
    db: &Db,
    code: &CodeRow,
    refresh: &NewRefresh<'_>,
    now: NaiveDateTime,
) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| {
        c.transaction(async |c| {
            let id: i64 = diesel::insert_into(oauth_grants::table)
                .values((
                    oauth_grants::account_id.eq(code.account_id),
                    oauth_grants::client_id.eq(&code.client_id),
                    oauth_grants::resource.eq(&code.resource),
                    oauth_grants::scope.eq(&code.scope),
                    oauth_grants::created_at.eq(now),
                ))
                .returning(oauth_grants::id)
                .get_result(c)
                .await?;
            diesel::update(oauth_codes::table.find(&code.code_hash))
                .set(oauth_codes::grant_id.eq(Some(id)))
                .execute(c)
                .await?;
            diesel::insert_into(oauth_refresh_tokens::table)
                .values((
                    oauth_refresh_tokens::token_hash.eq(refresh.token_hash),
                    oauth_refresh_tokens::grant_id.eq(id),
                    oauth_refresh_tokens::expires_at.eq(refresh.expires_at),
                    oauth_refresh_tokens::created_at.eq(now),
                ))
                .execute(c)
                .await?;
            Ok::<_, diesel::result::Error>(id)
        })
        .await?
    }))
}

/// What presenting a refresh token found.
#[derive(Debug, Clone, PartialEq)]
pub enum Rotated {
    /// The old token is now used and the new one stored; the grant it continues.
    Rotated(GrantRow),
    /// The token was rotated moments ago (at the time given, within the grace window) and its
    /// successor is still unused: the caller lost a race with itself and is given the same
    /// successor again. Nothing changed.
    Replayed(GrantRow, NaiveDateTime),
    /// The token was used before: its grant has been revoked (refresh token reuse).
    Reused,
    /// Presented by a client other than the grant's: refused, and nothing changed (the token
    /// stays usable by its own client).
    WrongClient,
    /// Expired, or its grant revoked; nothing changed.
    Dead,
    Unknown,
}

/// How a refresh token is presented: by which client, the successor it rotates to (already
/// hashed), and since when a rotation counts as "moments ago".
#[derive(Debug, Clone)]
pub struct RefreshPresented<'a> {
    pub client_id: &'a str,
    pub old_hash: &'a str,
    pub new: NewRefresh<'a>,
    /// A token rotated at or after this instant, whose successor is `new` and still unused, is
    /// answered with [`Rotated::Replayed`] instead of counting as reuse.
    pub grace_since: NaiveDateTime,
}

/// Rotates a refresh token: marks it used (once) and stores the successor in the same grant, in
/// one transaction. A token of another client changes nothing; a used token presented again
/// within the grace window, whose successor is unused, is a replay; otherwise reuse revokes the
/// whole grant.
pub async fn rotate_refresh(
    db: &Db,
    p: &RefreshPresented<'_>,
    now: NaiveDateTime,
) -> StoreResult<Rotated> {
    Ok(with_conn!(db, |c| {
        c.transaction(async |c| {
            // Write first, a no-op on the presented token's row: the transaction takes the write
            // lock before it reads (SQLite: a read transaction that later writes while another
            // holds the lock fails at once with SQLITE_BUSY instead of waiting, which made one
            // of two parallel refreshes a 503; PostgreSQL: the row lock orders the two, and the
            // second then reads what the first committed).
            diesel::update(oauth_refresh_tokens::table.find(p.old_hash))
                .set(oauth_refresh_tokens::used_at.eq(oauth_refresh_tokens::used_at))
                .execute(c)
                .await?;
            let row: Option<(i64, NaiveDateTime, Option<NaiveDateTime>)> =
                oauth_refresh_tokens::table
                    .find(p.old_hash)
                    .select((
                        oauth_refresh_tokens::grant_id,
                        oauth_refresh_tokens::expires_at,
                        oauth_refresh_tokens::used_at,
                    ))
                    .first(c)
                    .await
                    .optional()?;
            let Some((grant_id, expires_at, _)) = row else {
                return Ok::<_, diesel::result::Error>(Rotated::Unknown);
            };
            let grant: GrantRow = oauth_grants::table
                .find(grant_id)
                .select(GrantRow::as_select())
                .first(c)
                .await?;
            if grant.client_id != p.client_id {
                return Ok(Rotated::WrongClient);
            }
            if grant.revoked_at.is_some() || expires_at <= now {
                return Ok(Rotated::Dead);
            }
            let marked = diesel::update(
                oauth_refresh_tokens::table
                    .filter(oauth_refresh_tokens::token_hash.eq(p.old_hash))
                    .filter(oauth_refresh_tokens::used_at.is_null()),
            )
            .set(oauth_refresh_tokens::used_at.eq(Some(now)))
            .execute(c)
            .await?;
            if marked == 0 {
                let used_at: Option<NaiveDateTime> = oauth_refresh_tokens::table
                    .find(p.old_hash)
                    .select(oauth_refresh_tokens::used_at)
                    .first(c)
                    .await?;
                let successor_unused: Option<Option<NaiveDateTime>> = oauth_refresh_tokens::table
                    .find(p.new.token_hash)
                    .filter(oauth_refresh_tokens::grant_id.eq(grant_id))
                    .select(oauth_refresh_tokens::used_at)
                    .first(c)
                    .await
                    .optional()?;
                if let (Some(at), Some(None)) = (used_at, successor_unused)
                    && at >= p.grace_since
                {
                    return Ok(Rotated::Replayed(grant, at));
                }
                diesel::update(
                    oauth_grants::table
                        .filter(oauth_grants::id.eq(grant_id))
                        .filter(oauth_grants::revoked_at.is_null()),
                )
                .set(oauth_grants::revoked_at.eq(Some(now)))
                .execute(c)
                .await?;
                return Ok(Rotated::Reused);
            }
            diesel::insert_into(oauth_refresh_tokens::table)
                .values((
                    oauth_refresh_tokens::token_hash.eq(p.new.token_hash),
                    oauth_refresh_tokens::grant_id.eq(grant_id),
                    oauth_refresh_tokens::expires_at.eq(p.new.expires_at),
                    oauth_refresh_tokens::created_at.eq(now),
                ))
                .execute(c)
                .await?;
            Ok(Rotated::Rotated(grant))
        })
        .await?
    }))
}

/// The grant a refresh token belongs to.
pub async fn grant_of_refresh(db: &Db, token_hash: &str) -> StoreResult<Option<i64>> {
    Ok(with_conn!(db, |c| {
        oauth_refresh_tokens::table
            .find(token_hash)
            .select(oauth_refresh_tokens::grant_id)
            .first(c)
            .await
            .optional()?
    }))
}

/// Revokes a grant (its refresh tokens and access tokens stop working); false if already revoked
/// or unknown.
pub async fn revoke_grant(db: &Db, grant_id: i64, now: NaiveDateTime) -> StoreResult<bool> {
    let n = with_conn!(db, |c| {
        diesel::update(
            oauth_grants::table
                .filter(oauth_grants::id.eq(grant_id))
                .filter(oauth_grants::revoked_at.is_null()),
        )
        .set(oauth_grants::revoked_at.eq(Some(now)))
        .execute(c)
        .await?
    });
    Ok(n == 1)
}

/// The live (unrevoked) grant with this id, with its account's balance.
pub async fn live_grant(db: &Db, grant_id: i64) -> StoreResult<Option<(GrantRow, i64)>> {
    Ok(with_conn!(db, |c| {
        oauth_grants::table
            .inner_join(accounts::table)
            .filter(oauth_grants::id.eq(grant_id))
            .filter(oauth_grants::revoked_at.is_null())
            .select((GrantRow::as_select(), accounts::balance))
            .first(c)
            .await
            .optional()?
    }))
}

/// An account's grants, newest first (for the hub).
pub async fn grants_of(db: &Db, account_id: i64) -> StoreResult<Vec<GrantRow>> {
    Ok(with_conn!(db, |c| {
        oauth_grants::table
            .filter(oauth_grants::account_id.eq(account_id))
            .order(oauth_grants::id.desc())
            .limit(100)
            .select(GrantRow::as_select())
            .load(c)
            .await?
    }))
}

pub async fn insert_session(db: &Db, row: &SessionRow) -> StoreResult<()> {
    with_conn!(db, |c| {
        diesel::insert_into(web_sessions::table)
            .values(row)
            .execute(c)
            .await?
    });
    Ok(())
}

/// The unexpired session with this id hash.
pub async fn session(
    db: &Db,
    id_hash: &str,
    now: NaiveDateTime,
) -> StoreResult<Option<SessionRow>> {
    Ok(with_conn!(db, |c| {
        web_sessions::table
            .find(id_hash)
            .filter(web_sessions::expires_at.gt(now))
            .select(SessionRow::as_select())
            .first(c)
            .await
            .optional()?
    }))
}

pub async fn delete_session(db: &Db, id_hash: &str) -> StoreResult<()> {
    with_conn!(db, |c| {
        diesel::delete(web_sessions::table.find(id_hash))
            .execute(c)
            .await?
    });
    Ok(())
}

/// Sets an account's password hash; false when there is no such account.
pub async fn set_password_hash(db: &Db, account_id: i64, hash: &str) -> StoreResult<bool> {
    let n = with_conn!(db, |c| {
        diesel::update(accounts::table.find(account_id))
            .set(accounts::password_hash.eq(Some(hash)))
            .execute(c)
            .await?
    });
    Ok(n == 1)
}
