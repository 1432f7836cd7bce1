//! The rental estimate: the property's own live rental listing, else the district's median asking
//! rent for its bedroom band with the p25-p75 band and n; a gross yield with its basis; and the
//! housing-benefit cap block, which is not a market rent.

use chrono::{DateTime, Months, Utc};
use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::{Postcode, Unavailable, Uprn};
use terrace_store::Db;
use terrace_store::{address, listings, sales};

use crate::PropertyError;

/// Fewer comparable listings than this and no district figure is given.
pub const MIN_SAMPLE: usize = 5;
/// How far back a listing counts as current evidence.
pub const WINDOW_MONTHS: u32 = 12;

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RentFigure {
    /// Asking rent per calendar month, pounds.
    pub monthly_rent_gbp: i64,
    /// `own_listing` or `district_median`.
    pub basis: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listing_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p25_gbp: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p75_gbp: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub district: Option<String>,
    pub bedrooms: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct GrossYield {
    /// Annual rent over the value, before voids, management, maintenance, ground rent and
    /// service charge.
    pub gross_yield: f64,
    /// What the value is: `live_sale_listing_asking_price` or `last_registered_sale_price`.
    pub value_basis: &'static str,
    pub value_gbp: i64,
    /// The date of the sale when the value is a registered sale (not indexed to today).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_date: Option<chrono::NaiveDate>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Maybe<T> {
    Known(T),
    NotAvailable(Unavailable),
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RentalEstimate {
    pub uprn: i64,
    pub country: &'static str,
    pub estimate: Maybe<RentFigure>,
    pub gross_yield: Maybe<GrossYield>,
    /// The Local Housing Allowance for the broad rental market area, including the shared-room
    /// rate: a cap on housing benefit, not a market rent.
    pub housing_benefit_cap: Maybe<crate::lha::HousingBenefitCap>,
    pub as_of: chrono::NaiveDate,
    pub notes: Vec<&'static str>,
}

fn percentile(sorted: &[i64], q: f64) -> i64 {
    // Nearest-rank on the sorted sample.
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// The rental estimate of a UPRN; `beds` overrides the bedrooms the listings record.
pub async fn rental_estimate(
    db: &Db,
    uprn: Uprn,
    beds: Option<i32>,
    now: DateTime<Utc>,
) -> Result<RentalEstimate, PropertyError> {
    let a = address::address(db, uprn.get())
        .await?
        .ok_or_else(|| PropertyError::NotFound(format!("UPRN {uprn}")))?;
    let since = now
        .naive_utc()
        .checked_sub_months(Months::new(WINDOW_MONTHS))
        .unwrap_or(now.naive_utc());
    let live = |l: &listings::ListingRow| {
        l.last_seen.is_some_and(|t| t >= since)
            && l.last_status
                .as_deref()
                .is_none_or(|s| s == "available" || s == "under_offer")
    };
    let rents = listings::listings_for_uprn(db, uprn.get(), "rent").await?;
    let sales = listings::listings_for_uprn(db, uprn.get(), "sale").await?;
    let bedrooms = beds.or_else(|| rents.iter().chain(sales.iter()).find_map(|l| l.bedrooms));
    let estimate = if let Some(own) = rents.iter().find(|l| live(l) && l.price.is_some()) {
        Maybe::Known(RentFigure {
            monthly_rent_gbp: own.price.unwrap_or_default(),
            basis: "own_listing",
            listing_id: Some(own.listing_id.clone()),
            p25_gbp: None,
            p75_gbp: None,
            n: None,
            district: None,
            bedrooms: own.bedrooms.or(bedrooms),
        })
    } else {
        match (
            a.postcode.as_deref().and_then(|p| Postcode::parse(p).ok()),
            bedrooms,
        ) {
            (None, _) => Maybe::NotAvailable(Unavailable::new(
                "the property has no postcode, so no district sample",
            )),
            (_, None) => Maybe::NotAvailable(Unavailable::new(
                "the number of bedrooms is unknown: pass `beds`",
            )),
            (Some(pc), Some(b)) => {
                let mut rents: Vec<i64> =
                    listings::district_listings(db, pc.outward(), "rent", b, since)
                        .await?
                        .into_iter()
                        .filter_map(|l| l.price)
                        .collect();
                rents.sort_unstable();
                if rents.len() < MIN_SAMPLE {
                    Maybe::NotAvailable(Unavailable::new(format!(
                        "only {} {}-bedroom rental listing(s) in {} in the last {WINDOW_MONTHS} months; at least {MIN_SAMPLE} are needed",
                        rents.len(),
                        b,
                        pc.outward()
                    )))
                } else {
                    Maybe::Known(RentFigure {
                        monthly_rent_gbp: percentile(&rents, 0.5),
                        basis: "district_median",
                        listing_id: None,
                        p25_gbp: Some(percentile(&rents, 0.25)),
                        p75_gbp: Some(percentile(&rents, 0.75)),
                        n: Some(rents.len()),
                        district: Some(pc.outward().to_string()),
                        bedrooms: Some(b),
                    })
                }
            }
        }
    };
    let value = match sales.iter().find(|l| live(l) && l.price.is_some()) {
        Some(l) => Some((
            "live_sale_listing_asking_price",
            l.price.unwrap_or_default(),
            None,
        )),
        None => sales::sales_for_uprn(db, uprn.get(), 1)
            .await?
            .into_iter()
            .next()
            .map(|s| ("last_registered_sale_price", s.price, Some(s.date))),
    };
    let gross_yield = match (&estimate, value) {
        (Maybe::Known(r), Some((basis, v, date))) if v > 0 => Maybe::Known(GrossYield {
            gross_yield: ((r.monthly_rent_gbp * 12) as f64 / v as f64 * 10_000.0).round()
                / 10_000.0,
            value_basis: basis,
            value_gbp: v,
            value_date: date,
        }),
        (Maybe::NotAvailable(_), _) => {
            Maybe::NotAvailable(Unavailable::new("no rent figure to compute a yield from"))
        }
        (Maybe::Known(_), _) => Maybe::NotAvailable(Unavailable::new(
            "no value for the property: no live sale listing and no registered sale",
        )),
    };
    let postcode = a.postcode.as_deref().and_then(|p| Postcode::parse(p).ok());
    let housing_benefit_cap =
        match crate::lha::housing_benefit_cap(db, postcode.as_ref(), bedrooms, now.date_naive())
            .await?
        {
            Ok(cap) => Maybe::Known(cap),
            Err(why) => Maybe::NotAvailable(why),
        };
    Ok(RentalEstimate {
        uprn: uprn.get(),
        country: "UK",
        estimate,
        gross_yield,
        housing_benefit_cap,
        as_of: now.date_naive(),
        notes: vec![
            "Asking rents, not achieved rents.",
            "Gross yield is before voids, management, maintenance, ground rent and service charge.",
            "A value from a registered sale is its price on that date, not indexed to today.",
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v = [800, 850, 900, 950, 1000];
        assert_eq!(
            (
                percentile(&v, 0.25),
                percentile(&v, 0.5),
                percentile(&v, 0.75)
            ),
            (850, 900, 950)
        );
    }
}
