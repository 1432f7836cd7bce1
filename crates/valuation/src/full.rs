//! `POST /v1/valuation/full`: the latest vintage's estimate with a monthly back-series (the
//! value carried back by the published index: constructed, not observed), the rental estimate
//! and the gross yield on the value where rent evidence supports one, and a trust score made of
//! stated parts.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Serialize;
use terrace_analytics::Month;
use terrace_core::{Unavailable, Uprn};
use terrace_listings::rental::{self, Maybe, RentFigure};
use terrace_store::valuation::{self as vs, ValuationRow};
use terrace_store::{Db, LookupError, market as mk};

use crate::ValuationError;
use crate::ops::{Estimate, estimate_of, round, valued_row};

/// The back-series covers at most this many months up to the vintage month.
pub const BACK_SERIES_MONTHS: i32 = 60;
/// An index backed by this many sales scores 1 on the `index_sample` part.
pub const TRUST_INDEX_SALES: f64 = 500.0;
/// This many comparables kept after the fence score 1 on the `comparables` part.
pub const TRUST_COMPARABLES: f64 = 6.0;
/// A measured MdAPE of this many per cent (or more) scores 0 on the `measured_error` part.
pub const TRUST_MDAPE_ZERO: f64 = 25.0;

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BackPoint {
    /// `YYYY-MM`.
    pub month: String,
    /// The value carried back to the month, pounds (nearest 100).
    pub value: i64,
    pub index_level: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BackSeries {
    /// Always `constructed`: these are not valuations made in those months.
    pub label: &'static str,
    /// The index that carries the value (`district:PO30`, else `area:PO`, else `national:UK`).
    pub geography: String,
    pub method: Option<String>,
    /// The index month the value is pinned to (the vintage month, or the index's last settled
    /// month when it ends earlier).
    pub reference_period: String,
    pub basis: &'static str,
    pub points: Vec<BackPoint>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct YieldOnValue {
    /// Annual asking rent over the estimate: gross, before voids, management, maintenance,
    /// ground rent and service charge.
    pub gross_yield: f64,
    pub annual_rent_gbp: i64,
    pub value_gbp: i64,
    /// `valuation_estimate`.
    pub value_basis: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RentalBlock {
    pub estimate: Maybe<RentFigure>,
    pub gross_yield: Maybe<YieldOnValue>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TrustPart {
    /// `index_sample`, `floor_area_provenance`, `comparables` or `measured_error`.
    pub part: &'static str,
    /// What was read (null when nothing was on record).
    pub measure: Option<f64>,
    pub evidence: String,
    /// 0 to 1.
    pub score: f64,
    pub rule: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Trust {
    /// 0 to 100: the mean of the parts' scores times 100.
    pub score: i64,
    pub parts: Vec<TrustPart>,
    pub rule: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FullValuation {
    pub estimate: Estimate,
    pub back_series: Maybe<BackSeries>,
    pub rental: RentalBlock,
    pub trust: Trust,
}

/// The index geographies of a postcode district, finest first.
pub(crate) fn index_keys(district: Option<&str>) -> Vec<String> {
    let mut keys = Vec::new();
    if let Some(d) = district {
        keys.push(format!("district:{d}"));
        let area: String = d.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        if !area.is_empty() {
            keys.push(format!("area:{area}"));
        }
    }
    keys.push("national:UK".to_string());
    keys
}

/// A published index: its geography row and settled points (`YYYY-MM`, level), in order.
type Settled = (String, mk::GeographyRow, Vec<(String, f64)>);

/// The finest published index of the district with a settled point at or before `month`.
async fn settled_index(
    db: &Db,
    district: Option<&str>,
    month: &str,
) -> Result<Option<Settled>, ValuationError> {
    for key in index_keys(district) {
        let Some(geo) = mk::geography(db, &key).await? else {
            continue;
        };
        let points: Vec<(String, f64)> = mk::index_points(db, &key)
            .await?
            .into_iter()
            .filter(|p| !p.is_forecast)
            .filter(|p| {
                geo.last_settled
                    .as_deref()
                    .is_none_or(|ls| p.period.as_str() <= ls)
            })
            .filter_map(|p| Some((p.period, p.level.filter(|l| *l > 0.0)?)))
            .collect();
        if points.iter().any(|(p, _)| p.as_str() <= month) {
            return Ok(Some((key, geo, points)));
        }
    }
    Ok(None)
}

fn back_series(row: &ValuationRow, value: f64, index: Option<&Settled>) -> Maybe<BackSeries> {
    let Some((key, geo, points)) = index else {
        return Maybe::NotAvailable(Unavailable::new(
            "no published index (district, area or national) has a settled month at or before the vintage",
        ));
    };
    let Some((ref_period, ref_level)) = points
        .iter()
        .rev()
        .find(|(p, _)| p.as_str() <= row.as_of.as_str())
    else {
        return Maybe::NotAvailable(Unavailable::new("the index has no settled month"));
    };
    let first = Month::parse(ref_period)
        .map(|m| m.add_months(-(BACK_SERIES_MONTHS - 1)).to_string())
        .unwrap_or_default();
    Maybe::Known(BackSeries {
        label: "constructed",
        geography: key.clone(),
        method: geo.index_method.clone(),
        reference_period: ref_period.clone(),
        basis: "the vintage's value carried back month by month by the index (value x level(month) / level(reference)): what the property would have been worth had it moved with its index, not a valuation made at the time",
        points: points
            .iter()
            .filter(|(p, _)| p.as_str() >= first.as_str() && p <= ref_period)
            .map(|(p, l)| BackPoint {
                month: p.clone(),
                value: round(value * l / ref_level),
                index_level: *l,
            })
            .collect(),
    })
}

async fn rental_block(
    db: &Db,
    uprn: Uprn,
    value: i64,
    now: DateTime<Utc>,
) -> Result<RentalBlock, ValuationError> {
    let estimate = match rental::rental_estimate(db, uprn, None, now).await {
        Ok(r) => r.estimate,
        Err(LookupError::NotFound(_)) => Maybe::NotAvailable(Unavailable::new(
            "the UPRN is not in the address register: no postcode for a district rent sample",
        )),
        Err(LookupError::Store(e)) => return Err(e.into()),
    };
    let gross_yield = match &estimate {
        Maybe::Known(r) if value > 0 => {
            let annual = r.monthly_rent_gbp * 12;
            Maybe::Known(YieldOnValue {
                gross_yield: (annual as f64 / value as f64 * 10_000.0).round() / 10_000.0,
                annual_rent_gbp: annual,
                value_gbp: value,
                value_basis: "valuation_estimate",
            })
        }
        Maybe::Known(_) => Maybe::NotAvailable(Unavailable::new("the value is not positive")),
        Maybe::NotAvailable(u) => Maybe::NotAvailable(Unavailable::new(format!(
            "no rent evidence to compute a yield from: {}",
            u.reason
        ))),
    };
    Ok(RentalBlock {
        estimate,
        gross_yield,
    })
}

fn clamp01(x: f64) -> f64 {
    (x.clamp(0.0, 1.0) * 1000.0).round() / 1000.0
}

async fn trust(
    db: &Db,
    row: &ValuationRow,
    index: Option<&Settled>,
) -> Result<Trust, ValuationError> {
    let mut parts = Vec::new();
    let n_sales = index.and_then(|(_, g, _)| g.n_sales);
    parts.push(TrustPart {
        part: "index_sample",
        measure: n_sales.map(|n| n as f64),
        evidence: match index {
            Some((k, _, _)) => format!(
                "{} sales behind the {k} index that carries values in time",
                n_sales.map_or("an unstated number of".to_string(), |n| n.to_string())
            ),
            None => "no published index".to_string(),
        },
        score: clamp01(n_sales.unwrap_or(0) as f64 / TRUST_INDEX_SALES),
        rule: "sales behind the index / 500, at most 1; 0 without an index or a count",
    });
    parts.push(TrustPart {
        part: "floor_area_provenance",
        measure: row.floor_area,
        evidence: match (row.floor_area, row.floor_area_source.as_deref()) {
            (Some(a), Some("epc_unit")) => {
                format!("{a} m2 from the unit's own energy certificate")
            }
            (Some(a), _) => format!("{a} m2 of unstated provenance"),
            (None, _) => "no floor area on record".to_string(),
        },
        score: if row.floor_area_source.as_deref() == Some("epc_unit") {
            1.0
        } else {
            0.0
        },
        rule: "1 for the unit's own energy certificate, 0 without a floor area",
    });
    let kept = row.n_comparables_fenced.unwrap_or(0);
    parts.push(TrustPart {
        part: "comparables",
        measure: Some(kept as f64),
        evidence: format!(
            "{kept} comparables kept after the fence ({} before)",
            row.n_comparables.unwrap_or(0)
        ),
        score: clamp01(kept as f64 / TRUST_COMPARABLES),
        rule: "comparables kept after the interquartile-range fence / 6, at most 1",
    });
    let rows = vs::accuracy_rows(db, Some("Residential"), Some(&row.model_version), None).await?;
    let of_type = |t: &str| {
        rows.iter()
            .rev()
            .find(|r| r.estimator == "model" && r.property_type == t)
    };
    let measured = row
        .property_type
        .as_deref()
        .and_then(of_type)
        .or_else(|| of_type("all"));
    parts.push(TrustPart {
        part: "measured_error",
        measure: measured.map(|r| r.mdape),
        evidence: match measured {
            Some(r) => format!(
                "MdAPE {:.1}% on {} Residential {} sales of {} ({})",
                r.mdape,
                r.n,
                if r.property_type == "all" {
                    "(all types)".to_string()
                } else {
                    format!("type {}", r.property_type)
                },
                r.month,
                r.basis
            ),
            None => "no forward-measured accuracy row for this model and asset class yet".to_string(),
        },
        score: measured.map_or(0.0, |r| clamp01(1.0 - r.mdape / TRUST_MDAPE_ZERO)),
        rule: "1 - MdAPE / 25% of the latest accuracy row (Residential, the property's type, else all types), at least 0; 0 when none is measured",
    });
    let mean = parts.iter().map(|p| p.score).sum::<f64>() / parts.len() as f64;
    Ok(Trust {
        score: (mean * 100.0).round() as i64,
        parts,
        rule: "the mean of the four parts' scores times 100; a part with nothing on record scores 0",
    })
}

/// The full valuation block of a UPRN from the latest vintage.
pub async fn full(
    db: &Db,
    uprn: Uprn,
    now: DateTime<Utc>,
) -> Result<FullValuation, ValuationError> {
    let (row, value) = valued_row(db, uprn.get()).await?;
    let estimate = estimate_of(&row, value);
    let index = settled_index(db, row.district.as_deref(), &row.as_of).await?;
    Ok(FullValuation {
        back_series: back_series(&row, value, index.as_ref()),
        rental: rental_block(db, uprn, estimate.value, now).await?,
        trust: trust(db, &row, index.as_ref()).await?,
        estimate,
    })
}

/// The latest vintage's value of a property carried back to a past month by the published index,
/// as the back-series carries it: constructed, not a valuation made at the time.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CarriedValue {
    /// The value at `month`, pounds (nearest 100).
    pub value: i64,
    /// `YYYY-MM`.
    pub month: String,
    /// The vintage's own value and month.
    pub vintage_value: i64,
    pub vintage: String,
    pub model_version: String,
    /// The index that carries the value (`district:PO30`, else `area:PO`, else `national:UK`).
    pub geography: String,
    /// The index month the vintage value is pinned to, and the levels at both months.
    pub reference_period: String,
    pub index_level_reference: f64,
    pub index_level_month: f64,
    /// Always `constructed`.
    pub label: &'static str,
}

/// Carries the latest vintage's values back to past months, reading each index once.
#[derive(Default)]
pub struct Carrier {
    indices: std::collections::HashMap<Option<String>, Option<Settled>>,
}

impl Carrier {
    /// The value of `uprn` at `month` (`YYYY-MM`), or why there is none: no valuation in the
    /// latest vintage, no published index, or a month the index does not hold (before its first
    /// settled month, or after the vintage's reference month: the vintage is not carried forward).
    pub async fn value_at(
        &mut self,
        db: &Db,
        uprn: i64,
        month: &str,
    ) -> Result<Result<CarriedValue, Unavailable>, ValuationError> {
        let Some(row) = vs::valuation(db, uprn).await? else {
            return Ok(Err(Unavailable::new(
                "no valuation of this UPRN in the latest vintage",
            )));
        };
        let Some(value) = row.value else {
            return Ok(Err(Unavailable::new(format!(
                "the latest vintage refused a valuation ({})",
                row.refusal.as_deref().unwrap_or("refused")
            ))));
        };
        if !self.indices.contains_key(&row.district) {
            let idx = settled_index(db, row.district.as_deref(), &row.as_of).await?;
            self.indices.insert(row.district.clone(), idx);
        }
        let Some(Some((key, _, points))) = self.indices.get(&row.district) else {
            return Ok(Err(Unavailable::new(
                "no published index (district, area or national) to carry the value back",
            )));
        };
        let Some((ref_period, ref_level)) = points
            .iter()
            .rev()
            .find(|(p, _)| p.as_str() <= row.as_of.as_str())
        else {
            return Ok(Err(Unavailable::new("the index has no settled month")));
        };
        if month > ref_period.as_str() {
            return Ok(Err(Unavailable::new(format!(
                "{month} is after the index month {ref_period} the vintage is pinned to: values are carried back, never forward"
            ))));
        }
        let Some((_, level)) = points.iter().find(|(p, _)| p == month) else {
            return Ok(Err(Unavailable::new(format!(
                "the {key} index has no settled level for {month}"
            ))));
        };
        Ok(Ok(CarriedValue {
            value: round(value * level / ref_level),
            month: month.to_string(),
            vintage_value: round(value),
            vintage: row.as_of.clone(),
            model_version: row.model_version.clone(),
            geography: key.clone(),
            reference_period: ref_period.clone(),
            index_level_reference: *ref_level,
            index_level_month: *level,
            label: "constructed",
        }))
    }
}
