//! The valuation and equity operations: plain functions over the store.

use chrono::{Datelike, NaiveDate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use terrace_core::{Uprn, UprnEntry, Violation};
use terrace_store::Db;
use terrace_store::valuation::{self as vs, ValuationRow};
use terrace_store::{market as mk, sales};

use crate::ValuationError;

/// Values are published to the nearest this many pounds.
pub const ROUND_TO: f64 = 100.0;

pub(crate) fn round(v: f64) -> i64 {
    ((v / ROUND_TO).round() * ROUND_TO) as i64
}

/// The interval of an estimate.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ValueRange {
    pub lo: Option<i64>,
    pub hi: Option<i64>,
    /// The nominal share of sales the interval should hold (0.8); null without an interval.
    pub coverage: Option<f64>,
    /// How the interval was made and measured.
    pub basis: String,
}

/// The blend's weight of each estimator (0 where it had no estimate; they sum to 1).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Weights {
    pub transaction_anchor: f64,
    pub comparables: f64,
    pub hedonic: f64,
}

/// One estimator's contribution.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Evidence {
    /// `transaction_anchor`, `comparables`, `hedonic` or `floor_area`.
    pub kind: &'static str,
    /// The estimator's own value (pounds), when it had one.
    pub value: Option<i64>,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Estimate {
    pub uprn: i64,
    pub model_version: String,
    /// The vintage month (`YYYY-MM`): the value is as of this month.
    pub as_of: String,
    /// Point value in pounds (nearest 100).
    pub value: i64,
    pub range: ValueRange,
    pub weights: Weights,
    /// `with_previous_sale`, `comparables` or `hedonic_only`: the interval is measured per class.
    pub evidence_class: Option<String>,
    pub evidence: Vec<Evidence>,
    pub property_type: Option<String>,
    pub floor_area_m2: Option<f64>,
    /// `epc_unit`: the unit's own energy certificate; null when none is on record.
    pub floor_area_source: Option<String>,
    pub note: &'static str,
}

/// The estimate of one property from the latest vintage; `NotFound` with why when none is held.
pub async fn estimate(db: &Db, uprn: Uprn) -> Result<Estimate, ValuationError> {
    let u = uprn.get();
    let (row, value) = valued_row(db, u).await?;
    Ok(estimate_of(&row, value))
}

/// The 404 of a UPRN the latest vintage holds no row for.
pub(crate) fn no_valuation(u: i64) -> ValuationError {
    ValuationError::NotFound(format!(
        "a valuation of UPRN {u} (the latest vintage holds no row for it: it has no registered sale and no energy certificate)"
    ))
}

/// The latest vintage's row of a UPRN and its value; `NotFound` with why when there is none.
pub(crate) async fn valued_row(db: &Db, u: i64) -> Result<(ValuationRow, f64), ValuationError> {
    let Some(row) = vs::valuation(db, u).await? else {
        return Err(no_valuation(u));
    };
    let Some(value) = row.value else {
        return Err(ValuationError::NotFound(format!(
            "a valuation of UPRN {u} ({})",
            row.refusal.as_deref().unwrap_or("refused")
        )));
    };
    Ok((row, value))
}

/// The first day of a vintage month (`YYYY-MM`).
pub(crate) fn month_day(as_of: &str) -> Option<NaiveDate> {
    terrace_analytics::Month::parse(as_of)
        .ok()
        .and_then(|m| NaiveDate::from_ymd_opt(m.year(), m.month(), 1))
}

/// Years from `date` to `day`, unrounded (0 when `date` is later).
pub(crate) fn years_between(date: NaiveDate, day: NaiveDate) -> f64 {
    (day - date).num_days().max(0) as f64 / 365.25
}

/// The gain of `value` over `price` in per cent, to one decimal.
pub(crate) fn gain_pct(value: i64, price: i64) -> f64 {
    ((value - price) as f64 / price as f64 * 1000.0).round() / 10.0
}

pub(crate) fn estimate_of(row: &ValuationRow, value: f64) -> Estimate {
    let mut evidence = Vec::new();
    if let Some(a) = row.estimate_anchor {
        evidence.push(Evidence {
            kind: "transaction_anchor",
            value: Some(round(a)),
            detail: match (row.last_sale_price, row.last_sale_date) {
                (Some(p), Some(d)) => format!(
                    "last registered sale £{p} on {d}, carried to {} by the {} district index (the dwelling's earlier sales, if any, filtered in by the repeat-sale variances), plus the vintage's resale correction (type and tenure trends, a new build's lost premium, the hold, the sale's price over the model, its postcode sector's and street's own trends where the repeat sales show them; in the vintage's calibration)",
                    row.as_of,
                    row.district.as_deref().unwrap_or("national")
                ),
                _ => "the last registered sale carried by the district index".to_string(),
            },
        });
    }
    if let Some(c) = row.estimate_comparables {
        evidence.push(Evidence {
            kind: "comparables",
            value: Some(round(c)),
            detail: format!(
                "median of {} same-building or same-street sales of the last 36 months, or nearest same-type sales within 1 km of the last 24 ({} before the interquartile-range fence), each carried by the index and adjusted for floor area and type",
                row.n_comparables_fenced.unwrap_or(0),
                row.n_comparables.unwrap_or(0)
            ),
        });
    }
    if let Some(h) = row.estimate_hedonic {
        evidence.push(Evidence {
            kind: "hedonic",
            value: Some(round(h)),
            detail: format!(
                "hedonic model fitted on {} sales {}{}",
                row.n_hedonic.unwrap_or(0),
                if row.hedonic_pooled == Some(true) {
                    "pooled over every district (the district is too thin for its own fit), with a district effect"
                } else {
                    "of the district"
                },
                if row.floor_area.is_none() {
                    "; without a floor area on record it predicts the dwelling's type, tenure and street at its type's mean floor area, and is weighed only beside the dwelling's own sales or comparables"
                } else {
                    ""
                }
            ),
        });
    }
    evidence.push(Evidence {
        kind: "floor_area",
        value: None,
        detail: match row.floor_area {
            Some(a) => format!("{a} m2 from the unit's own energy certificate"),
            None if row.estimate_hedonic.is_some() => {
                "no floor area on record: the hedonic estimate is its type's mean floor area's"
                    .to_string()
            }
            None => "no floor area on record: the hedonic model was not used".to_string(),
        },
    });
    Estimate {
        uprn: row.uprn,
        model_version: row.model_version.clone(),
        as_of: row.as_of.clone(),
        value: round(value),
        range: ValueRange {
            lo: row.lo.map(round),
            hi: row.hi.map(round),
            coverage: row.coverage,
            basis: if row.lo.is_some() {
                "split conformal: the 80th percentile of absolute log errors of the vintage's calibration sales (valued with evidence registered a year before they sold) in this evidence class; GET /v1/valuation/accuracy has the forward-measured error".to_string()
            } else {
                "no interval: the vintage measured no calibration errors".to_string()
            },
        },
        weights: Weights {
            transaction_anchor: row.weight_anchor.unwrap_or(0.0),
            comparables: row.weight_comparables.unwrap_or(0.0),
            hedonic: row.weight_hedonic.unwrap_or(0.0),
        },
        evidence_class: row.evidence_class.clone(),
        evidence,
        property_type: row.property_type.clone(),
        floor_area_m2: row.floor_area,
        floor_area_source: row.floor_area_source.clone(),
        note: "Model estimate, not a professional valuation",
    }
}

/// The outcome of a transaction anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnchorStatus {
    Ok,
    NotAvailable,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AnchorSale {
    pub price: i64,
    pub date: NaiveDate,
    /// Price Paid category: `A` (standard price paid).
    pub category: String,
    pub transaction_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AnchorIndex {
    /// The index used (`district:PO30`, else its area, else `national:UK`).
    pub geography: String,
    /// The index's method (`repeat_sales`, `hedonic`, `shrunk`, ...).
    pub method: Option<String>,
    pub from_period: String,
    pub to_period: String,
    pub from_level: f64,
    pub to_level: f64,
    /// to_level / from_level.
    pub factor: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TransactionAnchor {
    pub uprn: i64,
    pub status: AnchorStatus,
    /// Why there is no anchor (`status: not_available`).
    pub reason: Option<String>,
    pub last_sale: Option<AnchorSale>,
    pub index: Option<AnchorIndex>,
    /// The last sale times the index factor, pounds (nearest 100).
    pub anchored_value: Option<i64>,
    /// The index's last settled month, the "today" of the anchor.
    pub as_of: Option<String>,
}

/// The property's last category A sale carried to the index's last settled month.
pub async fn transaction_anchor(db: &Db, uprn: Uprn) -> Result<TransactionAnchor, ValuationError> {
    let u = uprn.get();
    let all = sales::sales_for_uprn(db, u, 1000).await?;
    let mut out = TransactionAnchor {
        uprn: u,
        status: AnchorStatus::NotAvailable,
        reason: None,
        last_sale: None,
        index: None,
        anchored_value: None,
        as_of: None,
    };
    let Some(s) = all.iter().find(|s| s.ppd_category == "A") else {
        out.reason = Some(if all.is_empty() {
            "no registered sale is linked to this UPRN".to_string()
        } else {
            format!(
                "only category B sales are linked to this UPRN ({} of them: repossessions, buy-to-let or non-market transfers), which are not market prices",
                all.len()
            )
        });
        return Ok(out);
    };
    out.last_sale = Some(AnchorSale {
        price: s.price,
        date: s.date,
        category: s.ppd_category.clone(),
        transaction_id: s.transaction_id.clone(),
    });
    let mut keys = vec!["national:UK".to_string()];
    if let Some(pc) = s
        .postcode
        .as_deref()
        .and_then(|p| terrace_core::Postcode::parse(p).ok())
    {
        keys.insert(0, format!("area:{}", pc.area()));
        keys.insert(0, format!("district:{}", pc.outward()));
    }
    let month = format!("{:04}-{:02}", s.date.year(), s.date.month());
    for key in keys {
        let Some(geo) = mk::geography(db, &key).await? else {
            continue;
        };
        let points: Vec<_> = mk::index_points(db, &key)
            .await?
            .into_iter()
            .filter(|p| !p.is_forecast && p.level.is_some())
            .collect();
        let (Some(from), Some(to)) = (
            points.iter().find(|p| p.period == month),
            points.iter().rev().find(|p| {
                geo.last_settled
                    .as_deref()
                    .is_none_or(|ls| p.period.as_str() <= ls)
            }),
        ) else {
            continue;
        };
        let (fl, tl) = (from.level.unwrap_or(1.0), to.level.unwrap_or(1.0));
        out.index = Some(AnchorIndex {
            geography: key.clone(),
            method: geo.index_method.clone(),
            from_period: from.period.clone(),
            to_period: to.period.clone(),
            from_level: fl,
            to_level: tl,
            factor: tl / fl,
        });
        out.anchored_value = Some(round(s.price as f64 * tl / fl));
        out.as_of = Some(to.period.clone());
        out.status = AnchorStatus::Ok;
        return Ok(out);
    }
    out.reason = Some(format!(
        "no published index covers the sale month {month} for the property's district, area or the nation"
    ));
    Ok(out)
}

/// Asset classes of the accuracy table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum AssetClass {
    Residential,
    Commercial,
    #[serde(rename = "Mixed-Use")]
    MixedUse,
}

impl AssetClass {
    pub fn as_str(self) -> &'static str {
        match self {
            AssetClass::Residential => "Residential",
            AssetClass::Commercial => "Commercial",
            AssetClass::MixedUse => "Mixed-Use",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AccuracyStatus {
    Ok,
    NoRowsYet,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AccuracyRowOut {
    /// The month the valued properties sold (`YYYY-MM`).
    pub month: String,
    pub asset_class: String,
    /// `D`, `S`, `T`, `F` or `all`.
    pub property_type: String,
    pub model_version: String,
    /// `replayed_vintage` (a backtest) or `live_vintage` (a published vintage).
    pub basis: String,
    /// `model`, or a baseline: `index_anchored_last_sale`, `district_median`.
    pub estimator: String,
    pub n: i64,
    pub mdape: f64,
    pub ppe10: f64,
    pub ppe20: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Definition {
    pub metric: &'static str,
    pub definition: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AccuracyTable {
    pub status: AccuracyStatus,
    pub rows: Vec<AccuracyRowOut>,
    pub definitions: Vec<Definition>,
}

/// The metric definitions, on every accuracy answer.
pub fn definitions() -> Vec<Definition> {
    vec![
        Definition {
            metric: "mdape",
            definition: "median absolute percentage error: the median over sales of |value - price| / price, in per cent, where value is what the vintage before the sale estimated",
        },
        Definition {
            metric: "ppe10",
            definition: "per cent of sales whose price lies within 10% of the value (|value - price| / price <= 0.10)",
        },
        Definition {
            metric: "ppe20",
            definition: "per cent of sales whose price lies within 20% of the value",
        },
        Definition {
            metric: "n",
            definition: "sales compared: category A sales of properties the vintage valued, completed in the month",
        },
        Definition {
            metric: "no_rows_yet",
            definition: "no vintage has been compared with later sales yet: an empty table, not a zero error",
        },
    ]
}

/// The accuracy query.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AccuracyQuery {
    pub asset_class: Option<AssetClass>,
    pub model_version: Option<String>,
    /// `YYYY-MM`.
    pub since: Option<String>,
}

impl AccuracyQuery {
    /// `since` must be `YYYY-MM`.
    pub fn violations(&self) -> Vec<Violation> {
        match self.since.as_deref() {
            Some(s) if terrace_analytics::Month::parse(s).is_err() || s.len() != 7 => {
                vec![
                    Violation::new(
                        &["since"],
                        "value_error",
                        "since must be a month as YYYY-MM",
                    )
                    .with_input(s),
                ]
            }
            _ => Vec::new(),
        }
    }
}

pub async fn accuracy(db: &Db, q: &AccuracyQuery) -> Result<AccuracyTable, ValuationError> {
    let v = q.violations();
    if !v.is_empty() {
        return Err(ValuationError::Invalid(v));
    }
    let rows = vs::accuracy_rows(
        db,
        q.asset_class.map(AssetClass::as_str),
        q.model_version.as_deref(),
        q.since.as_deref(),
    )
    .await?;
    Ok(AccuracyTable {
        status: if rows.is_empty() {
            AccuracyStatus::NoRowsYet
        } else {
            AccuracyStatus::Ok
        },
        rows: rows
            .into_iter()
            .map(|r| AccuracyRowOut {
                month: r.month,
                asset_class: r.asset_class,
                property_type: r.property_type,
                model_version: r.model_version,
                basis: r.basis,
                estimator: r.estimator,
                n: r.n,
                mdape: r.mdape,
                ppe10: r.ppe10,
                ppe20: r.ppe20,
            })
            .collect(),
        definitions: definitions(),
    })
}

/// An equity item's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EquityOutcome {
    Ok,
    /// The latest vintage holds no value for the property (the reason says why).
    NoValuation,
    /// Valued, but no category A sale is on record to measure a gain from.
    NoSale,
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Equity {
    pub value: i64,
    pub as_of: String,
    pub model_version: String,
    pub last_sale_price: i64,
    pub last_sale_date: NaiveDate,
    pub gain: i64,
    pub gain_pct: f64,
    /// Years from the last sale to the vintage month's first day.
    pub years_held: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct EquityItem {
    /// The entry as given.
    pub uprn: serde_json::Value,
    pub outcome: EquityOutcome,
    pub result: Option<Equity>,
    /// Why there is no result.
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct EquityBatch {
    pub items: Vec<EquityItem>,
    /// Items with a result (`ok`).
    pub answered: usize,
}

/// Each property's latest valuation against its last category A sale.
pub async fn equity_estimate(db: &Db, uprns: &[UprnEntry]) -> Result<EquityBatch, ValuationError> {
    let ids: Vec<i64> = uprns
        .iter()
        .filter_map(|e| e.uprn.map(|u| u.get()))
        .collect();
    let rows: std::collections::HashMap<i64, ValuationRow> = vs::valuations_of(db, &ids)
        .await?
        .into_iter()
        .map(|r| (r.uprn, r))
        .collect();
    let mut items = Vec::with_capacity(uprns.len());
    for UprnEntry { given, uprn } in uprns {
        let item = |outcome, result, reason: Option<String>| EquityItem {
            uprn: given.clone(),
            outcome,
            result,
            reason,
        };
        let Some(u) = uprn else {
            items.push(item(
                EquityOutcome::Error,
                None,
                Some("not a UPRN: a positive integer of at most 12 digits".into()),
            ));
            continue;
        };
        let Some(row) = rows.get(&u.get()) else {
            items.push(item(
                EquityOutcome::NoValuation,
                None,
                Some("the latest vintage holds no row for this UPRN (no registered sale and no energy certificate)".into()),
            ));
            continue;
        };
        let Some(value) = row.value else {
            items.push(item(
                EquityOutcome::NoValuation,
                None,
                Some(row.refusal.clone().unwrap_or_else(|| "refused".into())),
            ));
            continue;
        };
        let (Some(price), Some(date)) = (row.last_sale_price, row.last_sale_date) else {
            items.push(item(
                EquityOutcome::NoSale,
                None,
                Some("no category A sale of this property is on record".into()),
            ));
            continue;
        };
        let as_of_day = month_day(&row.as_of).unwrap_or(date);
        let v = round(value);
        items.push(item(
            EquityOutcome::Ok,
            Some(Equity {
                value: v,
                as_of: row.as_of.clone(),
                model_version: row.model_version.clone(),
                last_sale_price: price,
                last_sale_date: date,
                gain: v - price,
                gain_pct: gain_pct(v, price),
                years_held: (years_between(date, as_of_day) * 10.0).round() / 10.0,
            }),
            None,
        ));
    }
    let answered = items
        .iter()
        .filter(|i| matches!(i.outcome, EquityOutcome::Ok))
        .count();
    Ok(EquityBatch { items, answered })
}
