//! Valuation and equity operations (specification parts 4.4 and 4.8): the latest AVM vintage,
//! the transaction anchor, the forward-measured accuracy table and the equity batch.

use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::ops::address::UprnPath;
use crate::ops::property::UprnBatch;
use crate::registry::{Ctx, Json, NoBody, NoParams, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_core::{Uprn, UprnEntry};
use terrace_valuation as valuation;
use validator::Validate;

const TAG: &str = "valuation";

/// The valuation and equity operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[&ACCURACY, &TRANSACTION_ANCHOR, &ESTIMATE, &EQUITY_ESTIMATE];

/// A property named in the body.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UprnBody {
    /// Unique Property Reference Number
    pub uprn: Uprn,
}

pub struct Estimate;

impl Operation for Estimate {
    type Params = NoParams;
    type Body = Json<UprnBody>;
    type Input = Uprn;
    type Output = valuation::Estimate;

    fn check(_: NoParams, Json(b): Json<UprnBody>) -> Result<Uprn, ApiError> {
        Ok(b.uprn)
    }

    async fn run(ctx: &Ctx, uprn: Uprn) -> Result<valuation::Estimate, ApiError> {
        Ok(valuation::estimate(&ctx.state.db, uprn).await?)
    }
}

pub(crate) static ESTIMATE: OpDecl = OpDecl {
    id: "valuation_estimate",
    path: "/v1/valuation/estimate",
    summary: "Point value and range of a property from the latest valuation vintage",
    description: "The latest vintage's value of the UPRN (nearest £100) with its interval and the interval's nominal coverage (80%, measured on held-out sales of the vintage's calibration year, per evidence class), `model_version`, `as_of` (the vintage month), the blend's weight of each estimator (index-anchored last sale, same-building and same-street comparables, hedonic model) and a short evidence list with the floor area's provenance. 404, not charged, when no valuation is held, with why (`no floor area on record and no comparable basis`, `the model was not fitted on this property type`, no sale and no certificate). A model estimate, not a professional valuation. UK only.",
    price: Price::PerCall(5),
    ..OpDecl::of::<Estimate>(TAG)
};

pub struct TransactionAnchor;

impl Operation for TransactionAnchor {
    type Params = UprnPath;
    type Body = NoBody;
    type Input = Uprn;
    type Output = valuation::TransactionAnchor;

    fn check(p: UprnPath, _: NoBody) -> Result<Uprn, ApiError> {
        Ok(p.uprn)
    }

    async fn run(ctx: &Ctx, uprn: Uprn) -> Result<valuation::TransactionAnchor, ApiError> {
        Ok(valuation::transaction_anchor(&ctx.state.db, uprn).await?)
    }

    fn charged_items(out: &valuation::TransactionAnchor) -> Option<i64> {
        match out.status {
            valuation::AnchorStatus::NotAvailable => Some(0),
            valuation::AnchorStatus::Ok => None,
        }
    }
}

pub(crate) static TRANSACTION_ANCHOR: OpDecl = OpDecl {
    id: "valuation_transaction_anchor",
    path: "/v1/valuation/{uprn}/transaction-anchor",
    summary: "The property's own last sale carried to today by the district index",
    description: "The last category A registered sale linked to the UPRN (price, date, category, transaction id), the index factor from its month to the index's last settled month with the index's geography (`district:`, else `area:`, else `national:UK`) and method, and the anchored value (sale times factor, nearest £100). `status: not_available` with the reason, not charged, when no sale is linked or only category B sales are (say which), or no published index covers the sale month. UK only.",
    price: Price::PerCall(2),
    ..OpDecl::of::<TransactionAnchor>(TAG)
};

/// The accuracy table's filters.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccuracyParams {
    /// Only rows of this asset class
    pub asset_class: Option<valuation::AssetClass>,
    /// Only rows of this model version (e.g. `terrace-avm-1`)
    #[validate(length(min = 1, max = 64))]
    pub model_version: Option<String>,
    /// Only months from this one on, as `YYYY-MM`
    #[validate(length(min = 7, max = 7))]
    #[schemars(regex(pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])$"))]
    pub since: Option<String>,
}

pub struct Accuracy;

impl Operation for Accuracy {
    type Params = AccuracyParams;
    type Body = NoBody;
    type Input = valuation::AccuracyQuery;
    type Output = valuation::AccuracyTable;

    fn check(p: AccuracyParams, _: NoBody) -> Result<valuation::AccuracyQuery, ApiError> {
        let q = valuation::AccuracyQuery {
            asset_class: p.asset_class,
            model_version: p.model_version,
            since: p.since,
        };
        let v = q.violations();
        if v.is_empty() {
            Ok(q)
        } else {
            Err(invalid(In::Query, v))
        }
    }

    async fn run(
        ctx: &Ctx,
        q: valuation::AccuracyQuery,
    ) -> Result<valuation::AccuracyTable, ApiError> {
        Ok(valuation::accuracy(&ctx.state.db, &q).await?)
    }
}

pub(crate) static ACCURACY: OpDecl = OpDecl {
    id: "valuation_accuracy",
    path: "/v1/valuation/accuracy",
    summary: "Forward-measured valuation error (free)",
    description: "Rows per month, asset class, property type (`D`, `S`, `T`, `F`, `all`, and `all_resales` for properties with a previous sale), model version, basis (`replayed_vintage` from `cargo xtask backtest avm`, `live_vintage` from published vintages) and estimator (`model`, and the baselines `index_anchored_last_sale` and `district_median` measured on the same sales) with MdAPE, PPE10, PPE20 and n: each sale compared with the value a vintage made before it, from sales registered by then. `status: no_rows_yet` with the metric definitions while the table is empty: an empty table, not a zero error. Filters: `asset_class` (Residential, Commercial, Mixed-Use), `model_version`, `since` (`YYYY-MM`).",
    ..OpDecl::of::<Accuracy>(TAG)
};

pub struct EquityEstimate;

impl Operation for EquityEstimate {
    type Params = NoParams;
    type Body = Json<UprnBatch>;
    type Input = Vec<UprnEntry>;
    type Output = valuation::EquityBatch;

    fn check(_: NoParams, Json(b): Json<UprnBatch>) -> Result<Vec<UprnEntry>, ApiError> {
        Ok(b.uprns)
    }

    async fn run(ctx: &Ctx, uprns: Vec<UprnEntry>) -> Result<valuation::EquityBatch, ApiError> {
        Ok(valuation::equity_estimate(&ctx.state.db, &uprns).await?)
    }
}

pub(crate) static EQUITY_ESTIMATE: OpDecl = OpDecl {
    id: "equity_estimate",
    path: "/v1/equity/estimate",
    summary: "Latest valuation against the last recorded sale, for up to 100 properties (free)",
    description: "For each UPRN, in input order, with an outcome per item: `ok` with the latest vintage's value, the last category A sale (price and date), the gain in pounds and per cent and the years held to the vintage month; `no_valuation` when the vintage holds no value (the reason says why), `no_sale` when no sale is on record, `error` for an entry that is not a UPRN. One item's failure never fails the call. Free. UK only.",
    ..OpDecl::of::<EquityEstimate>(TAG)
};
