//! Account management: balance, usage, API keys. All free and authenticated.

use crate::error::ApiError;
use crate::params::{In, Kind, Param};
use crate::registry::{Answer, Ctx, Input, Method, OpDecl, OpFuture, Price, schema_of};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use terrace_credits::{self as credits, Balance, KeySummary, NewKey, UsageRow};

pub static BALANCE: OpDecl = OpDecl {
    id: "account_balance",
    method: Method::Get,
    path: "/v1/account",
    tag: "account",
    summary: "The account and its credit balance",
    description: "The calling key's account: id, name and credit balance.",
    price: Price::Free,
    params: &[],
    body: None,
    body_required: false,
    response: schema_of::<Balance>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_balance,
};

fn run_balance<'a>(ctx: &'a Ctx, _input: Input) -> OpFuture<'a> {
    Box::pin(
        async move { Answer::of(&credits::balance(&ctx.state.db, ctx.caller.account_id).await?) },
    )
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct UsagePage {
    /// Calls, newest first: operation, credits charged, balance after, time, request id, surface.
    pub data: Vec<UsageRow>,
    /// Pass as `before` to get the next (older) page; null on the last page.
    pub next_before: Option<i64>,
}

pub static USAGE: OpDecl = OpDecl {
    id: "account_usage",
    method: Method::Get,
    path: "/v1/account/usage",
    tag: "account",
    summary: "The account's calls, newest first",
    description: "Every call of the account, newest first, with its operation, credits charged (free calls at 0), balance after, time and request id. Failed calls are not listed (they are not charged). Paginated with `limit` and the `before` cursor.",
    price: Price::Free,
    params: &[
        Param {
            name: "limit",
            location: In::Query,
            required: false,
            kind: Kind::Int {
                min: 1,
                max: 500,
                default: Some(50),
            },
            description: "Rows per page",
        },
        Param {
            name: "before",
            location: In::Query,
            required: false,
            kind: Kind::Int {
                min: 1,
                max: i64::MAX,
                default: None,
            },
            description: "Cursor: the `next_before` of the previous page",
        },
    ],
    body: None,
    body_required: false,
    response: schema_of::<UsagePage>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_usage,
};

fn run_usage<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let limit = input.params.int("limit").unwrap_or(50);
        let before = input.params.int("before");
        let (data, next_before) =
            credits::usage(&ctx.state.db, ctx.caller.account_id, limit, before).await?;
        Answer::of(&UsagePage { data, next_before })
    })
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewKeyBody {
    /// A label for the key, up to 100 characters.
    #[serde(default)]
    #[schemars(length(max = 100))]
    pub name: Option<String>,
}

pub static CREATE_KEY: OpDecl = OpDecl {
    id: "account_create_key",
    method: Method::Post,
    path: "/v1/account/keys",
    tag: "account",
    summary: "Create an API key (shown once)",
    description: "Creates a new API key on the account. The key itself is in this response only; store it now. Only its hash is kept.",
    price: Price::Free,
    params: &[],
    body: Some(schema_of::<NewKeyBody>),
    body_required: false,
    response: schema_of::<NewKey>,
    deprecated: None,
    read_only: false,
    check: Some(check_new_key),
    run: run_create_key,
};

fn check_new_key(input: &Input) -> Result<(), ApiError> {
    let body: NewKeyBody = input.body_as(false)?.unwrap_or_default();
    if body.name.as_ref().is_some_and(|n| n.chars().count() > 100) {
        return Err(ApiError::Validation(vec![crate::error::FieldError::new(
            &["body", "name"],
            "string_too_long",
            "String should have at most 100 characters",
        )]));
    }
    Ok(())
}

fn run_create_key<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let body: NewKeyBody = input.body_as(false)?.unwrap_or_default();
        let key = credits::create_key(
            &ctx.state.db,
            ctx.caller.account_id,
            body.name.as_deref(),
            ctx.now,
        )
        .await?;
        Answer::of(&key)
    })
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct KeyList {
    /// The account's keys, newest first, masked.
    pub keys: Vec<KeySummary>,
}

pub static LIST_KEYS: OpDecl = OpDecl {
    id: "account_list_keys",
    method: Method::Get,
    path: "/v1/account/keys",
    tag: "account",
    summary: "The account's API keys, masked",
    description: "Every key of the account, newest first, masked, with whether it is active.",
    price: Price::Free,
    params: &[],
    body: None,
    body_required: false,
    response: schema_of::<KeyList>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_list_keys,
};

fn run_list_keys<'a>(ctx: &'a Ctx, _input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let keys = credits::list_keys(&ctx.state.db, ctx.caller.account_id).await?;
        Answer::of(&KeyList { keys })
    })
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Revoked {
    pub key_id: i64,
    pub revoked: bool,
}

pub static REVOKE_KEY: OpDecl = OpDecl {
    id: "account_revoke_key",
    method: Method::Delete,
    path: "/v1/account/keys/{key_id}",
    tag: "account",
    summary: "Revoke an API key",
    description: "Revokes one of the account's keys; it stops working at once. Unknown or already revoked keys are 404.",
    price: Price::Free,
    params: &[Param {
        name: "key_id",
        location: In::Path,
        required: true,
        kind: Kind::Int {
            min: 1,
            max: i64::MAX,
            default: None,
        },
        description: "The key's id",
    }],
    body: None,
    body_required: false,
    response: schema_of::<Revoked>,
    deprecated: None,
    read_only: false,
    check: None,
    run: run_revoke_key,
};

fn run_revoke_key<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let key_id = input.params.int("key_id").unwrap_or(0);
        credits::revoke_key(&ctx.state.db, ctx.caller.account_id, key_id, ctx.now).await?;
        ctx.state.keys.forget_key(key_id);
        Answer::of(&Revoked {
            key_id,
            revoked: true,
        })
    })
}
