//! `GET /v1/valuation/{uprn}/comps-adjustments`: the comparable ledger the latest vintage's
//! comparable estimator wrote for a property (one implementation: `terrace_analytics::avm`'s
//! comparables, stored by the build), with each line's time adjustment and the index that made
//! it, the floor-area and type adjustment, the interquartile-range fence, and the relisting
//! evidence its own sale listings show.

use schemars::JsonSchema;
use serde::Serialize;
use terrace_analytics::Month;
use terrace_core::Uprn;
use terrace_store::Db;
use terrace_store::listings;
use terrace_store::market as mk;
use terrace_store::valuation::{self as vs, ComparableRow};

use crate::ValuationError;
use crate::ops::{no_valuation, round};
use crate::relist::{ListingHistory, RELIST_WINDOW_MONTHS, RelistEvidence, classify};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CompsStatus {
    Ok,
    /// No comparable was found (the reason says why); not charged.
    NotAvailable,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TimeAdjustment {
    /// The index that carried the sale in time (`district:PO30`, else `national:UK`).
    pub geography: String,
    /// The index's method (`repeat_sales`, `hedonic`, `shrunk`, ...), as the market build
    /// published it.
    pub method: Option<String>,
    pub from_period: String,
    pub to_period: String,
    /// index(to_period) / index(from_period).
    pub factor: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SizeTypeAdjustment {
    /// exp(hedonic floor-area and type coefficients times the differences); 1 when none.
    pub factor: f64,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RelistingAdjustment {
    /// Whether the comparable's sale listings show a relist in the 12 months before its sale;
    /// null when its listings say nothing about the sale (not linked to a UPRN, no sale
    /// listing, or none seen in the window).
    pub relisted: Option<bool>,
    pub evidence: String,
    /// The penalty factor applied to the comparable (1: none applied): the vintage's measured
    /// `exp(median residual of not-relisted resales - median of relisted ones)`.
    pub factor: f64,
    pub applied: bool,
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FenceOutcome {
    Kept,
    /// Outside the interquartile-range fence: not in the median.
    Dropped,
    /// Fewer than four comparables: no fence was applied.
    NotFenced,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Comparable {
    pub line: i32,
    /// The comparable's UPRN when its sale is linked to one.
    pub uprn: Option<i64>,
    /// `YYYY-MM` of completion.
    pub sale_month: String,
    pub price: i64,
    /// `D`, `S`, `T`, `F` or `O`.
    pub property_type: String,
    pub floor_area_m2: Option<f64>,
    /// `same_building`, `same_street` or `nearest_same_type`.
    pub tier: String,
    /// Metres from the valued property (register coordinates, else postcode centroids), when
    /// both positions are known (always for `nearest_same_type`).
    pub distance_m: Option<f64>,
    pub time: TimeAdjustment,
    pub size_and_type: SizeTypeAdjustment,
    pub relisting: RelistingAdjustment,
    /// price x time factor x size-and-type factor x relisting factor (nearest £100), as the
    /// vintage's comparable estimator used it.
    pub adjusted_value: i64,
    pub fence: FenceOutcome,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Fence {
    pub lo: i64,
    pub hi: i64,
    pub rule: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CompsAdjustments {
    pub uprn: i64,
    pub status: CompsStatus,
    pub reason: Option<String>,
    pub model_version: String,
    /// The vintage month every comparable is carried to.
    pub as_of: String,
    /// The tier the ledger starts from: `same_building`, else `same_street`, else
    /// `nearest_same_type`; null without one.
    pub tier: Option<String>,
    pub tiers: &'static str,
    pub n_before_fence: usize,
    pub n_after_fence: usize,
    pub fence: Option<Fence>,
    /// The comparable estimator's value: the median of the kept adjusted values.
    pub comparables_value: Option<i64>,
    pub comparables: Vec<Comparable>,
}

const TIERS: &str = "same-building sales first, then same-street sales of the same property type, newest first, at most 12, completed in the 36 months to the vintage; when those give fewer than 6, the nearest sales of the same property type within 1,000 m completed in the 24 months to the vintage fill the ledger up to 6, nearest first (positions: the register's coordinates, else the postcode centroid)";
const FENCE_RULE: &str = "Tukey fence on the log adjusted values, [Q1 - 1.5 IQR, Q3 + 1.5 IQR], applied from 4 comparables; the comparable estimator needs 2 kept";

/// The comparable ledger of a UPRN from the latest vintage.
pub async fn comps_adjustments(db: &Db, uprn: Uprn) -> Result<CompsAdjustments, ValuationError> {
    let u = uprn.get();
    let Some(row) = vs::valuation(db, u).await? else {
        return Err(no_valuation(u));
    };
    let lines = vs::comparables_of(db, u).await?;
    let mut out = CompsAdjustments {
        uprn: u,
        status: CompsStatus::Ok,
        reason: None,
        model_version: row.model_version.clone(),
        as_of: row.as_of.clone(),
        tier: lines.first().map(|l| l.tier.clone()),
        tiers: TIERS,
        n_before_fence: lines.len(),
        n_after_fence: lines.iter().filter(|l| l.kept).count(),
        fence: lines
            .first()
            .and_then(|l| l.fence_lo.zip(l.fence_hi))
            .map(|(lo, hi)| Fence {
                lo: round(lo),
                hi: round(hi),
                rule: FENCE_RULE,
            }),
        comparables_value: row.estimate_comparables.map(round),
        comparables: Vec::with_capacity(lines.len()),
    };
    if lines.is_empty() {
        out.status = CompsStatus::NotAvailable;
        out.reason = Some(match (&row.value, &row.refusal) {
            (None, Some(r)) => format!("the latest vintage refused a value: {r}"),
            _ => "no same-building or same-street sale of the same type completed in the 36 months to the vintage, and no sale of the same type within 1,000 m in the 24 months to it (or no position on record)".to_string(),
        });
        return Ok(out);
    }
    let penalty = vintage_penalty(
        vs::latest_vintage(db)
            .await?
            .filter(|v| v.as_of == row.as_of && v.model_version == row.model_version)
            .as_ref()
            .map(|v| v.calibration_json.as_str()),
    );
    let mut methods: Vec<(String, Option<String>)> = Vec::new();
    for l in &lines {
        let method = match methods.iter().find(|(g, _)| *g == l.index_geography) {
            Some((_, m)) => m.clone(),
            None => {
                let m = mk::geography(db, &l.index_geography)
                    .await?
                    .and_then(|g| g.index_method);
                methods.push((l.index_geography.clone(), m.clone()));
                m
            }
        };
        let relisting = relisting(db, l, &penalty).await?;
        out.comparables.push(Comparable {
            line: l.line,
            uprn: l.comp_uprn,
            sale_month: l.sale_month.clone(),
            price: l.price,
            property_type: l.property_type.clone(),
            floor_area_m2: l.floor_area,
            tier: l.tier.clone(),
            distance_m: l.distance_m.map(f64::round),
            time: TimeAdjustment {
                geography: l.index_geography.clone(),
                method,
                from_period: l.sale_month.clone(),
                to_period: row.as_of.clone(),
                factor: (l.time_factor * 10_000.0).round() / 10_000.0,
            },
            size_and_type: SizeTypeAdjustment {
                factor: (l.size_factor * 10_000.0).round() / 10_000.0,
                detail: size_detail(l, row.floor_area, row.property_type.as_deref()),
            },
            // The stored adjusted price already carries the vintage's relisting factor.
            adjusted_value: round(l.adjusted),
            relisting,
            fence: match (l.fence_lo.is_some(), l.kept) {
                (false, _) => FenceOutcome::NotFenced,
                (true, true) => FenceOutcome::Kept,
                (true, false) => FenceOutcome::Dropped,
            },
        });
    }
    Ok(out)
}

fn size_detail(l: &ComparableRow, subject_area: Option<f64>, subject_type: Option<&str>) -> String {
    let area = match (subject_area, l.floor_area) {
        (Some(a), Some(b)) => format!("floor area {b} m2 to the subject's {a} m2"),
        _ => "no floor-area adjustment (a floor area is missing)".to_string(),
    };
    let kind = match subject_type {
        Some(t) if t != l.property_type => format!("type {} to {t}", l.property_type),
        _ => "same type".to_string(),
    };
    format!("{area}; {kind}; by the district hedonic model's coefficients")
}

/// The relisting penalty the latest vintage measured (from its stored calibration).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VintagePenalty {
    pub factor: Option<f64>,
    pub reason: String,
}

/// Reads the `relisting` block the build stores with the vintage's calibration.
pub(crate) fn vintage_penalty(calibration_json: Option<&str>) -> VintagePenalty {
    let v: Option<serde_json::Value> = calibration_json.and_then(|j| serde_json::from_str(j).ok());
    let r = v.as_ref().and_then(|v| v.get("relisting"));
    let reason = r
        .and_then(|r| r.get("reason"))
        .and_then(|x| x.as_str())
        .unwrap_or("no relisting penalty is applied: the vintage measured none (it was built before the penalty was measured)")
        .to_string();
    VintagePenalty {
        factor: r
            .and_then(|r| r.get("factor"))
            .and_then(serde_json::Value::as_f64)
            .filter(|_| {
                r.and_then(|r| r.get("applied"))
                    .and_then(serde_json::Value::as_bool)
                    == Some(true)
            }),
        reason,
    }
}

/// What the comparable's own sale listings show in the window before its sale, and the
/// vintage's penalty when they show a relist (the factor the build applied to its adjusted
/// price).
async fn relisting(
    db: &Db,
    l: &ComparableRow,
    penalty: &VintagePenalty,
) -> Result<RelistingAdjustment, ValuationError> {
    let out = |relisted: Option<bool>, evidence: String| {
        let applied = relisted == Some(true) && penalty.factor.is_some();
        RelistingAdjustment {
            relisted,
            evidence,
            factor: if applied {
                penalty.factor.unwrap_or(1.0)
            } else {
                1.0
            },
            applied,
            reason: if relisted == Some(true) || penalty.factor.is_none() {
                penalty.reason.clone()
            } else {
                "no relist shown, so no penalty".to_string()
            },
        }
    };
    let Some(cu) = l.comp_uprn else {
        return Ok(out(
            None,
            "the comparable's sale is not linked to a UPRN, so its listings cannot be read"
                .to_string(),
        ));
    };
    let Ok(month) = Month::parse(&l.sale_month) else {
        return Ok(out(None, "the sale month could not be read".to_string()));
    };
    let sale: Vec<_> = listings::listings_of_uprn(db, cu)
        .await?
        .into_iter()
        .filter(|x| x.channel == "sale")
        .collect();
    let ids: Vec<String> = sale.iter().map(|x| x.listing_id.clone()).collect();
    let snaps = listings::snapshots_of(db, &ids).await?;
    let histories: Vec<ListingHistory> = sale
        .iter()
        .map(|x| ListingHistory {
            first_seen: Some(x.first_seen),
            snapshots: snaps
                .iter()
                .filter(|s| s.listing_id == x.listing_id)
                .map(|s| (s.time, s.status.clone()))
                .collect(),
        })
        .collect();
    let ev = classify(&histories, month);
    let evidence = match &ev {
        RelistEvidence::OffAndOn(w, a) => format!(
            "taken off the market on {} and listed again on {}",
            w.date(),
            a.date()
        ),
        RelistEvidence::SeparateListings(n) => format!(
            "{n} separate sale listings first seen in the {RELIST_WINDOW_MONTHS} months before the sale"
        ),
        RelistEvidence::NoRelist => format!(
            "its sale listings show no relist in the {RELIST_WINDOW_MONTHS} months before the sale"
        ),
        RelistEvidence::NotListedInWindow => format!(
            "its sale listings were not seen in the {RELIST_WINDOW_MONTHS} months before the sale"
        ),
        RelistEvidence::NoListing => "no sale listing of the comparable is on record".to_string(),
    };
    Ok(out(ev.relisted(), evidence))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ledger applies the vintage's penalty only when the build measured one, and says why
    /// not otherwise.
    #[test]
    fn the_ledger_reads_the_vintages_relisting_penalty() {
        let measured = r#"{"relisting": {"applied": true, "factor": 1.0833, "reason": "measured on 40 and 300"}}"#;
        assert_eq!(
            vintage_penalty(Some(measured)),
            VintagePenalty {
                factor: Some(1.0833),
                reason: "measured on 40 and 300".to_string()
            }
        );
        let thin =
            r#"{"relisting": {"applied": false, "factor": 1.0, "reason": "needs 30, has 2"}}"#;
        assert_eq!(vintage_penalty(Some(thin)).factor, None);
        assert_eq!(vintage_penalty(Some(thin)).reason, "needs 30, has 2");
        assert_eq!(vintage_penalty(Some("{}")).factor, None);
        assert_eq!(vintage_penalty(None).factor, None);
    }
}
