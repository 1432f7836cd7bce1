//! Account management: balance, usage, API keys. All free and authenticated.

use crate::error::ApiError;
use crate::registry::{Ctx, Method, NoBody, NoParams, OpDecl, Operation, Optional};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use terrace_credits::{self as credits, Balance, KeySummary, NewKey, UsageRow};
use validator::Validate;

const TAG: &str = "account";

/// The account operations (not in the specification's families; listed last).
pub static OPS: &[&OpDecl] = &[&BALANCE, &USAGE, &CREATE_KEY, &LIST_KEYS, &REVOKE_KEY];

pub struct AccountBalance;

impl Operation for AccountBalance {
    type Params = NoParams;
    type Body = NoBody;
    type Input = ();
    type Output = Balance;

    fn check(_: NoParams, _: NoBody) -> Result<(), ApiError> {
        Ok(())
    }

    async fn run(ctx: &Ctx, _: ()) -> Result<Balance, ApiError> {
        Ok(credits::balance(&ctx.state.db, ctx.caller.account_id).await?)
    }
}

pub(crate) static BALANCE: OpDecl = OpDecl {
    id: "account_balance",
    path: "/v1/account",
    summary: "The account and its credit balance",
    description: "The calling key's account: id, name and credit balance.",
    ..OpDecl::of::<AccountBalance>(TAG)
};

#[derive(Debug, Serialize, JsonSchema)]
pub struct UsagePage {
    /// Calls, newest first: operation, credits charged, balance after, time, request id, surface.
    pub data: Vec<UsageRow>,
    /// Pass as `before` to get the next (older) page; null on the last page.
    pub next_before: Option<i64>,
}

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageParams {
    /// Rows per page
    #[serde(default = "default_rows")]
    #[validate(range(min = 1, max = 500))]
    pub limit: i64,
    /// Cursor: the `next_before` of the previous page
    #[validate(range(min = 1, max = i64::MAX))]
    pub before: Option<i64>,
}

fn default_rows() -> i64 {
    50
}

pub struct Usage;

impl Operation for Usage {
    type Params = UsageParams;
    type Body = NoBody;
    type Input = UsageParams;
    type Output = UsagePage;

    fn check(p: UsageParams, _: NoBody) -> Result<UsageParams, ApiError> {
        Ok(p)
    }

    async fn run(ctx: &Ctx, p: UsageParams) -> Result<UsagePage, ApiError> {
        let (data, next_before) =
            credits::usage(&ctx.state.db, ctx.caller.account_id, p.limit, p.before).await?;
        Ok(UsagePage { data, next_before })
    }
}

pub(crate) static USAGE: OpDecl = OpDecl {
    id: "account_usage",
    path: "/v1/account/usage",
    summary: "The account's calls, newest first",
    description: "Every call of the account, newest first, with its operation, credits charged (free calls at 0), balance after, time and request id. Failed calls are not listed (they are not charged). Paginated with `limit` and the `before` cursor.",
    ..OpDecl::of::<Usage>(TAG)
};

#[derive(Debug, Default, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewKeyBody {
    /// A label for the key, up to 100 characters.
    #[serde(default)]
    #[validate(length(max = 100))]
    pub name: Option<String>,
}

pub struct CreateKey;

impl Operation for CreateKey {
    type Params = NoParams;
    type Body = Optional<NewKeyBody>;
    type Input = NewKeyBody;
    type Output = NewKey;

    fn check(_: NoParams, Optional(body): Optional<NewKeyBody>) -> Result<NewKeyBody, ApiError> {
        Ok(body)
    }

    async fn run(ctx: &Ctx, body: NewKeyBody) -> Result<NewKey, ApiError> {
        let (db, account) = (&ctx.state.db, ctx.caller.account_id);
        // The calling key is re-checked in the insert's transaction (another gateway may have
        // revoked it while this one still has it cached), and the account's live keys capped.
        let by = ctx.caller.key_id;
        Ok(credits::create_key_by(db, account, by, body.name.as_deref(), ctx.now).await?)
    }
}

pub(crate) static CREATE_KEY: OpDecl = OpDecl {
    id: "account_create_key",
    path: "/v1/account/keys",
    summary: "Create an API key (shown once)",
    description: "Creates a new API key on the account. The key itself is in this response only; store it now. Only its hash is kept. An account holds at most 20 live keys (422 `key_limit` beyond).",
    read_only: false,
    ..OpDecl::of::<CreateKey>(TAG)
};

#[derive(Debug, Serialize, JsonSchema)]
pub struct KeyList {
    /// The account's keys, newest first, masked.
    pub keys: Vec<KeySummary>,
}

pub struct ListKeys;

impl Operation for ListKeys {
    type Params = NoParams;
    type Body = NoBody;
    type Input = ();
    type Output = KeyList;

    fn check(_: NoParams, _: NoBody) -> Result<(), ApiError> {
        Ok(())
    }

    async fn run(ctx: &Ctx, _: ()) -> Result<KeyList, ApiError> {
        let keys = credits::list_keys(&ctx.state.db, ctx.caller.account_id).await?;
        Ok(KeyList { keys })
    }
}

pub(crate) static LIST_KEYS: OpDecl = OpDecl {
    id: "account_list_keys",
    path: "/v1/account/keys",
    summary: "The account's API keys, masked",
    description: "Every key of the account, newest first, masked, with whether it is active.",
    ..OpDecl::of::<ListKeys>(TAG)
};

#[derive(Debug, Serialize, JsonSchema)]
pub struct Revoked {
    pub key_id: i64,
    pub revoked: bool,
}

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyPath {
    /// The key's id
    #[validate(range(min = 1, max = i64::MAX))]
    pub key_id: i64,
}

pub struct RevokeKey;

impl Operation for RevokeKey {
    type Params = KeyPath;
    type Body = NoBody;
    type Input = i64;
    type Output = Revoked;

    fn check(p: KeyPath, _: NoBody) -> Result<i64, ApiError> {
        Ok(p.key_id)
    }

    async fn run(ctx: &Ctx, key_id: i64) -> Result<Revoked, ApiError> {
        let (db, account, by) = (&ctx.state.db, ctx.caller.account_id, ctx.caller.key_id);
        credits::revoke_key_by(db, account, by, key_id, ctx.now).await?;
        ctx.state.keys.forget_key(key_id);
        Ok(Revoked {
            key_id,
            revoked: true,
        })
    }
}

pub(crate) static REVOKE_KEY: OpDecl = OpDecl {
    id: "account_revoke_key",
    method: Method::Delete,
    path: "/v1/account/keys/{key_id}",
    summary: "Revoke an API key",
    description: "Revokes one of the account's keys; it stops working at once. A key may revoke itself (answered 200). Unknown or already revoked keys are 404.",
    read_only: false,
    ..OpDecl::of::<RevokeKey>(TAG)
};
