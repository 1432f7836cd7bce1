//! Valuation and equity operations (specification parts 4.4 and 4.8): the latest AVM vintage,
//! its comparable ledger, the transaction anchor, the full valuation block, the forward-measured
//! accuracy table, the equity batch and the long-held properties of an area.

use crate::error::ApiError;
use crate::input::{In, cursor_refused, invalid};
use crate::ops::address::UprnPath;
use crate::ops::listings_market::{listing_area, value_error};
use crate::ops::property::UprnBatch;
use crate::registry::{Ctx, Json, NoBody, NoParams, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_core::{AreaId, CursorError, Uprn, UprnEntry};
use terrace_valuation as valuation;
use validator::Validate;

const TAG: &str = "valuation";

/// The valuation and equity operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[
    &ACCURACY,
    &COMPS_ADJUSTMENTS,
    &TRANSACTION_ANCHOR,
    &ESTIMATE,
    &FULL,
    &EQUITY_ESTIMATE,
    &LONG_HELD,
];

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
    /// Only rows of this model version (e.g. `terrace-avm-6`)
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

pub struct CompsAdjustments;

impl Operation for CompsAdjustments {
    type Params = UprnPath;
    type Body = NoBody;
    type Input = Uprn;
    type Output = valuation::CompsAdjustments;

    fn check(p: UprnPath, _: NoBody) -> Result<Uprn, ApiError> {
        Ok(p.uprn)
    }

    async fn run(ctx: &Ctx, uprn: Uprn) -> Result<valuation::CompsAdjustments, ApiError> {
        Ok(valuation::comps_adjustments(&ctx.state.db, uprn).await?)
    }

    fn charged_items(out: &valuation::CompsAdjustments) -> Option<i64> {
        match out.status {
            valuation::CompsStatus::NotAvailable => Some(0),
            valuation::CompsStatus::Ok => None,
        }
    }
}

pub(crate) static COMPS_ADJUSTMENTS: OpDecl = OpDecl {
    id: "valuation_comps_adjustments",
    path: "/v1/valuation/{uprn}/comps-adjustments",
    summary: "The comparables behind the latest valuation, with an adjustment ledger per comparable",
    description: "The comparables the latest vintage's comparable estimator used for the UPRN: same-building sales first, then same-street sales of the same type, of the 36 months to the vintage, at most 12; when those give fewer than 6, the nearest sales of the same type within 1,000 m of the 24 months to the vintage fill the list up to 6 (`nearest_same_type`; positions are the register's coordinates, else the postcode centroid). `tier` says which tier the ledger starts from. Each line has its tier, its distance in metres when both positions are known, its sale (UPRN when linked, month, price, type, floor area), the time adjustment with the index used (geography, method, from and to periods, factor), the floor-area and type adjustment (hedonic coefficients), the relisting evidence its own sale listings show in the 12 months before its sale (no penalty is applied yet: factor 1, with the reason), its adjusted value and whether the interquartile-range fence kept or dropped it; with the counts before and after the fence, the fence itself and the comparables' value (median of the kept). `status: not_available` with the reason, not charged, when the vintage found no comparable. 404, not charged, when the vintage holds no row for the UPRN. UK only.",
    price: Price::PerCall(3),
    ..OpDecl::of::<CompsAdjustments>(TAG)
};

pub struct Full;

impl Operation for Full {
    type Params = NoParams;
    type Body = Json<UprnBody>;
    type Input = Uprn;
    type Output = valuation::FullValuation;

    fn check(_: NoParams, Json(b): Json<UprnBody>) -> Result<Uprn, ApiError> {
        Ok(b.uprn)
    }

    async fn run(ctx: &Ctx, uprn: Uprn) -> Result<valuation::FullValuation, ApiError> {
        Ok(valuation::full(&ctx.state.db, uprn, ctx.now).await?)
    }
}

pub(crate) static FULL: OpDecl = OpDecl {
    id: "valuation_full",
    path: "/v1/valuation/full",
    summary: "Full valuation block: estimate, constructed back-series, rent and yield, trust score",
    description: "The latest vintage's estimate (as `POST /v1/valuation/estimate`), a monthly back-series of up to 60 months labelled `constructed` (the value carried back by the district index, else the postcode area's, else the national one: not valuations made at the time), the rental estimate (the property's own live rental listing, else the district median asking rent for its bedroom band) and the gross yield on the estimate, each `not_available` with the reason when the rent evidence does not support one, and a trust score (0-100) made of four stated parts: the index's sample size, the floor area's provenance, the comparables kept after the fence and the forward-measured error for the property's asset class and type. 404, not charged, when no valuation is held, with why. A model estimate, not a professional valuation. UK only.",
    price: Price::PerCall(8),
    ..OpDecl::of::<Full>(TAG)
};

fn default_min_years() -> f64 {
    10.0
}

fn default_min_gain() -> f64 {
    50.0
}

fn default_long_held_limit() -> u32 {
    50
}

/// The long-held query.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LongHeldBody {
    /// An area id of kind district, sector, unit or lad: `district:PO30`, `sector:PO30 1`,
    /// `unit:PO30 1AA`, `lad:E06000046`
    #[validate(length(min = 1, max = 40))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub area_id: String,
    /// Only properties whose last sale is at least this many years before the vintage month
    #[serde(default = "default_min_years")]
    #[validate(range(min = 0.0, max = 100.0))]
    pub min_years_held: f64,
    /// Only properties whose value is at least this many per cent above the last sale price
    #[serde(default = "default_min_gain")]
    #[validate(range(min = -100.0, max = 10000.0))]
    pub min_gain_pct: f64,
    /// Items per page
    #[serde(default = "default_long_held_limit")]
    #[validate(range(min = 1, max = 200))]
    pub limit: u32,
    /// The `next_cursor` of the previous page, unchanged (one written for other filters names no
    /// page of this walk: 404)
    #[validate(length(min = 1, max = 504))]
    #[schemars(regex(pattern = terrace_core::cursor::PATTERN))]
    pub cursor: Option<String>,
}

pub struct LongHeld;

impl Operation for LongHeld {
    type Params = NoParams;
    type Body = Json<LongHeldBody>;
    type Input = (AreaId, valuation::LongHeldQuery);
    type Output = valuation::LongHeldPage;

    fn check(
        _: NoParams,
        Json(b): Json<LongHeldBody>,
    ) -> Result<(AreaId, valuation::LongHeldQuery), ApiError> {
        let mut violations = Vec::new();
        // Blank is a 422; an id of another kind or form names no area values are kept for: a
        // 404 saying which kinds are (the schema cannot state their forms; docs/API-DESIGN.md).
        let blank = terrace_core::patterns::is_blank(&b.area_id);
        let area = AreaId::parse(b.area_id.trim())
            .ok()
            .and_then(|id| listing_area(&id).map(|a| (id, a)));
        if blank {
            violations.push(value_error("area_id", "area_id is blank", &b.area_id));
        }
        // The cursor is read against the query only once the area is known; until then only
        // its form is checked (a malformed one is a 422 beside the other violations).
        let after = match (&area, b.cursor.as_deref()) {
            (_, None) => None,
            (None, Some(c)) => {
                if let Err(v) = terrace_core::cursor::check_form(c) {
                    violations.push(v);
                }
                None
            }
            (Some((id, _)), Some(c)) => {
                let scope =
                    valuation::cursor_scope(&id.to_string(), b.min_years_held, b.min_gain_pct);
                match scope.decode(c) {
                    Err(CursorError::Malformed(v)) => {
                        violations.push(v);
                        None
                    }
                    Err(e @ CursorError::NotThisQuery(_)) if violations.is_empty() => {
                        return Err(cursor_refused(In::Body, e));
                    }
                    Err(CursorError::NotThisQuery(_)) => None,
                    Ok(parts) => match valuation::key_of_cursor(&parts) {
                        Some(key) if violations.is_empty() => Some(key),
                        Some(_) => None,
                        None => {
                            return Err(ApiError::NotFound(format!(
                                "a page of equity_long_held at cursor {c:?}"
                            )));
                        }
                    },
                }
            }
        };
        match area {
            Some((id, area)) if violations.is_empty() => Ok((
                id.clone(),
                valuation::LongHeldQuery {
                    area_id: id.to_string(),
                    area,
                    min_years_held: b.min_years_held,
                    min_gain_pct: b.min_gain_pct,
                    limit: b.limit as usize,
                    after,
                },
            )),
            None if violations.is_empty() => Err(ApiError::NotFound(format!(
                "values for the area {:?} (they are kept by postcode and local authority: an area id of kind district, sector, unit or lad, such as district:PO30 or lad:E06000046)",
                b.area_id
            ))),
            _ => Err(invalid(In::Body, violations)),
        }
    }

    async fn run(
        ctx: &Ctx,
        (id, q): (AreaId, valuation::LongHeldQuery),
    ) -> Result<valuation::LongHeldPage, ApiError> {
        let index = ctx.state.areas.cache.current(&ctx.state.db).await?;
        if index.area(&id).is_none() {
            return Err(ApiError::NotFound(format!("area {id}")));
        }
        Ok(valuation::long_held(&ctx.state.db, &q).await?)
    }
}

pub(crate) static LONG_HELD: OpDecl = OpDecl {
    id: "equity_long_held",
    path: "/v1/equity/long-held",
    summary: "Long-held properties of an area with a large paper gain, ordered by gain",
    description: "Properties of an area (`area_id` of kind district, sector, unit or lad) whose last category A sale is at least `min_years_held` years (default 10) before the latest vintage month and whose latest value is at least `min_gain_pct` per cent (default 50) above that sale's price, ordered by gain in per cent (largest first, then UPRN), each with its value, last sale (price, date), years held and gain in pounds and per cent. The gain is nominal and not net of debt. Paged: `limit` (1-200, default 50) and `cursor` (the previous page's `next_cursor`). An unknown area, or an id of another kind, is a 404, not charged; with no vintage built the page is empty with `as_of: null`. UK only.",
    price: Price::PerCall(8),
    ..OpDecl::of::<LongHeld>(TAG)
};
