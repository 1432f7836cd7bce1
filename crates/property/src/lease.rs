//! The lease result (specification part 2.5) and the lease batch.

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::Uprn;
use terrace_store::Db;
use terrace_store::{
    address,
    leases::{self, LeaseRow},
};

use crate::PropertyError;

/// Under this many unexpired years a lease is short (`is_short_lease`).
pub const SHORT_LEASE_YEARS: f64 = 80.0;
/// Under this many unexpired years the second flag is set (`is_under_60_years`).
pub const VERY_SHORT_LEASE_YEARS: f64 = 60.0;

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Term {
    /// The term as registered.
    pub text: Option<String>,
    pub years: Option<i32>,
    /// Days taken off the term ("999 years less 3 days").
    pub less_days: Option<i32>,
    pub start: Option<NaiveDate>,
    /// The last day of the term.
    pub end: Option<NaiveDate>,
    /// Why the term could not be read; the term is then never guessed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Lease {
    /// HM Land Registry's unique identifier of the registered lease.
    pub unique_id: String,
    pub term: Term,
    /// Years left at the time of the call (null when the term could not be read).
    pub unexpired_years: Option<f64>,
    /// True when under 80 years are left (null when unknown).
    pub is_short_lease: Option<bool>,
    /// True when under 60 years are left (null when unknown).
    pub is_under_60_years: Option<bool>,
    /// Whether the lease restricts assignment or subletting (alienation clause), as registered.
    pub alienation_clause: Option<bool>,
    /// The premium paid for the lease in pounds, as registered.
    pub price_paid: Option<i64>,
    pub date_of_lease: Option<NaiveDate>,
    pub register_property_description: Option<String>,
    pub associated_property_description: Option<String>,
    pub tenure: Option<String>,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LeaseResult {
    pub uprn: i64,
    pub country: &'static str,
    /// `ok`: a registered lease is linked to the UPRN; `no_lease`: none is (see `reason`).
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The most recently dated registered lease of the property.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<Lease>,
    /// How many registered leases are linked to the UPRN (older ones included).
    pub registered_leases: usize,
    pub enfranchisement_note: &'static str,
    pub valuation_note: &'static str,
    /// The day unexpired years were computed for.
    pub as_of: NaiveDate,
}

const ENFRANCHISEMENT_NOTE: &str = "Qualifying leaseholders may have statutory rights to extend the lease or buy the freehold; the premium depends on the unexpired term and is a matter for specialist advice. Nothing here is a valuation of those rights.";
const VALUATION_NOTE: &str = "Short leases (under 80 years) usually cost more to extend and many lenders restrict lending on them, more so under 60 years; the flags state the remaining term only and are not a valuation adjustment.";

/// Years from `today` to the term's end, to two decimals (negative when expired).
pub(crate) fn years_between(today: NaiveDate, end: NaiveDate) -> f64 {
    let days = (end - today).num_days() as f64;
    let years = days / 365.2425;
    (years * 100.0).round() / 100.0
}

/// Whether fewer than `years` calendar years are left: decided on dates, never on the rounded
/// figure, so a lease ending one day short of 80 years is short.
fn under(today: NaiveDate, end: NaiveDate, years: f64) -> bool {
    let months = chrono::Months::new((years as u32) * 12);
    today
        .checked_add_months(months)
        .is_none_or(|limit| end < limit)
}

fn lease_of(r: LeaseRow, today: NaiveDate) -> Lease {
    let unexpired = r.term_end.map(|end| years_between(today, end));
    Lease {
        unique_id: r.unique_id,
        term: Term {
            text: r.term_text,
            years: r.term_years,
            less_days: r.term_less_days,
            start: r.term_start,
            end: r.term_end,
            problem: r.term_problem,
        },
        unexpired_years: unexpired,
        is_short_lease: r.term_end.map(|end| under(today, end, SHORT_LEASE_YEARS)),
        is_under_60_years: r
            .term_end
            .map(|end| under(today, end, VERY_SHORT_LEASE_YEARS)),
        alienation_clause: r.alienation_clause,
        price_paid: r.price_paid,
        date_of_lease: r.date_of_lease,
        register_property_description: r.register_description,
        associated_property_description: r.associated_description,
        tenure: r.tenure,
        source: r.source,
    }
}

/// The lease result of a UPRN, with unexpired years computed for `today` (the injected clock).
pub async fn lease(db: &Db, uprn: Uprn, today: NaiveDate) -> Result<LeaseResult, PropertyError> {
    let rows = leases::leases_for_uprn(db, uprn.get()).await?;
    if rows.is_empty() && address::address(db, uprn.get()).await?.is_none() {
        return Err(PropertyError::NotFound(format!("UPRN {uprn}")));
    }
    let registered_leases = rows.len();
    let (status, reason, lease) = match rows.into_iter().next() {
        Some(r) => ("ok", None, Some(lease_of(r, today))),
        None => {
            let reason = if leases::lease_count(db).await? == 0 {
                "HM Land Registry's registered leases are not loaded, so no lease can be linked"
            } else {
                "HM Land Registry's registered leases hold no lease linked to this UPRN (a freehold, or a lease not linked to a UPRN)"
            };
            ("no_lease", Some(reason.to_string()), None)
        }
    };
    Ok(LeaseResult {
        uprn: uprn.get(),
        country: "UK",
        status,
        reason,
        lease,
        registered_leases,
        enfranchisement_note: ENFRANCHISEMENT_NOTE,
        valuation_note: VALUATION_NOTE,
        as_of: today,
    })
}

/// One item of a lease batch, in input order.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LeaseBatchItem {
    /// The UPRN as given.
    pub uprn: serde_json::Value,
    /// `ok`, `no_lease`, `not_found` or `error`.
    pub outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<LeaseResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LeaseBatch {
    pub items: Vec<LeaseBatchItem>,
    /// Items with a result (`ok` or `no_lease`): the batch is charged for these only.
    pub answered: usize,
}

/// A UPRN as a batch item gives it: an integer or a string of digits; anything else is `None`.
pub(crate) fn batch_uprn(given: &serde_json::Value) -> Option<Uprn> {
    match given {
        serde_json::Value::Number(n) => n.as_i64().and_then(|v| Uprn::new(v).ok()),
        serde_json::Value::String(s) => Uprn::parse(s).ok(),
        serde_json::Value::Null
        | serde_json::Value::Bool(_)
        | serde_json::Value::Array(_)
        | serde_json::Value::Object(_) => None,
    }
}

/// Answers each UPRN as the single call would; one item's failure never fails the batch.
pub async fn lease_batch(
    db: &Db,
    uprns: &[serde_json::Value],
    today: NaiveDate,
) -> Result<LeaseBatch, PropertyError> {
    let mut items = Vec::with_capacity(uprns.len());
    for given in uprns {
        let item = match batch_uprn(given) {
            None => LeaseBatchItem {
                uprn: given.clone(),
                outcome: "error",
                result: None,
                error: Some("not a UPRN: a positive integer of at most 12 digits".into()),
            },
            Some(u) => match lease(db, u, today).await {
                Ok(r) => LeaseBatchItem {
                    uprn: given.clone(),
                    outcome: r.status,
                    result: Some(r),
                    error: None,
                },
                Err(PropertyError::NotFound(_)) => LeaseBatchItem {
                    uprn: given.clone(),
                    outcome: "not_found",
                    result: None,
                    error: None,
                },
                Err(PropertyError::Store(e)) => LeaseBatchItem {
                    uprn: given.clone(),
                    outcome: "error",
                    result: None,
                    error: Some(format!("the store could not answer: {e}")),
                },
            },
        };
        items.push(item);
    }
    let answered = items.iter().filter(|i| i.result.is_some()).count();
    Ok(LeaseBatch { items, answered })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unexpired_years_and_flags_at_the_thresholds() {
        let today = NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
        let end_in = |years: i32| NaiveDate::from_ymd_opt(2026 + years, 11, 21).unwrap();
        let day = chrono::Duration::days(1);
        assert_eq!(years_between(today, end_in(80)), 80.0);
        assert!(
            !under(today, end_in(80), SHORT_LEASE_YEARS),
            "exactly 80 years left is not short"
        );
        assert!(
            under(today, end_in(80) - day, SHORT_LEASE_YEARS),
            "one day less is short"
        );
        assert!(!under(today, end_in(60), VERY_SHORT_LEASE_YEARS));
        assert!(under(today, end_in(60) - day, VERY_SHORT_LEASE_YEARS));
        assert!(
            under(today, today - day, VERY_SHORT_LEASE_YEARS),
            "an expired lease is short"
        );
        assert_eq!(years_between(today, today), 0.0);
    }
}
