//! Market facts (`POST /v1/market/facts`): price, rent, yield and days on market for a
//! geography (a postcode district, or a local authority) and an asset class (property type,
//! bedroom band) over a period of months, each metric with its basis (`asking`: from the
//! listings feed; `sold`: from registered sales) and its n.
//!
//! - `price_asking`, `rent_asking`: the median first asking price (rent per calendar month) of
//!   the sale (rent) listings first priced in the period.
//! - `gross_yield_asking`: `12 x rent_asking / price_asking`, when each has at least
//!   [`crate::yields::MIN_LISTINGS`] listings; its n is the smaller of the two.
//! - `days_on_market`: the median days from a sale listing's first priced snapshot to its first
//!   agreed one (under offer, sold STC, reserved), over the period's sale listings that reached
//!   one.
//! - `price_sold`: the median price of the category A sales registered in the geography that
//!   completed in the period and are matched to a UPRN. Its n is a UPRN-matched sample (the
//!   property type is Price Paid's; the bedroom band is the matched UPRN's listings'), never a
//!   count of sales: `registered_sales_n` gives the registry's own count where it can.
//!
//! A metric with no data is named in `metrics_with_no_data`, never given as 0.

use crate::demand::{area_listings, known, month_end, month_start};
use crate::market::{Answer, BedroomBand, NO_FEED, observation};
use crate::supply::{listed, month_label};
use crate::yields::MIN_LISTINGS;
use chrono::{Datelike, NaiveDate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use terrace_analytics::{PropertyType, quantile};
use terrace_store::listings::{ListingArea, ListingRow};
use terrace_store::{Db, LookupError, catalogue, sales};

/// An asset class's property type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AssetType {
    Detached,
    SemiDetached,
    Terraced,
    Flat,
}

impl AssetType {
    fn matches(self, t: PropertyType) -> bool {
        matches!(
            (self, t),
            (AssetType::Detached, PropertyType::Detached)
                | (AssetType::SemiDetached, PropertyType::SemiDetached)
                | (AssetType::Terraced, PropertyType::Terraced)
                | (AssetType::Flat, PropertyType::Flat)
        )
    }
}

/// The geography of a facts request, as given.
#[derive(Debug, Clone, PartialEq)]
pub enum FactsGeography {
    /// A postcode district (outward code, upper case).
    District(String),
    /// A local authority: its GSS code (upper case) or its name.
    LocalAuthority(String),
}

/// A checked facts request.
#[derive(Debug, Clone)]
pub struct FactsRequest {
    pub geography: FactsGeography,
    pub property_type: Option<AssetType>,
    pub bedroom_band: Option<BedroomBand>,
    /// First and last month, `YYYY-MM`.
    pub start: Option<String>,
    pub end: Option<String>,
}

/// Where a figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The listings feed: asking prices and rents, as advertised.
    Asking,
    /// HM Land Registry Price Paid: registered sale prices.
    Sold,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Metric {
    /// `price_asking`, `price_sold`, `rent_asking`, `gross_yield_asking` or `days_on_market`.
    pub metric: &'static str,
    pub value: f64,
    /// `gbp`, `gbp_pcm`, `ratio` or `days`.
    pub unit: &'static str,
    pub basis: Basis,
    /// The observations behind the value.
    pub n: i64,
    pub definition: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FactsPeriod {
    /// `YYYY-MM`.
    pub start: String,
    pub end: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MarketFacts {
    pub status: Answer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `district:XT1` or `lad:E06009901`.
    pub geography: String,
    /// The local authority's name, when the geography is one and its name is loaded.
    pub geography_name: Option<String>,
    pub property_type: Option<AssetType>,
    pub bedroom_band: Option<BedroomBand>,
    /// The months read (default: the twelve to the feed's latest sighting); absent when no feed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<FactsPeriod>,
    /// The metrics with data; absent when no feed is loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Vec<Metric>>,
    /// The metrics without data for this geography, class and period, by name (never a 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics_with_no_data: Option<Vec<&'static str>>,
    /// Category A sales registered in the geography, type and period, matched to a UPRN or
    /// not: the registry's own count beside `price_sold`'s UPRN-matched n. Null with a bedroom
    /// band (Price Paid records no bedrooms).
    pub registered_sales_n: Option<i64>,
    /// What `price_sold`'s n is.
    pub count_basis: &'static str,
    pub notes: Vec<&'static str>,
}

const COUNT_BASIS: &str = "price_sold's n counts only the registered sales matched to a UPRN (and, with a bedroom band, whose UPRN's listings state the bedrooms): a UPRN-matched sample that runs short of the registry, so do not use it for sales counts; registered_sales_n is the registry's count where it can be given.";

const NOTES: [&str; 2] = [
    "Asking figures come from the listings feed (each listing at its first priced snapshot, in its month); sold figures from HM Land Registry Price Paid, category A sales by completion month.",
    "Gross yield is before voids, management, maintenance, ground rent and service charge, and divides the median asking rent by the median asking price of different properties.",
];

const AGREED: [&str; 4] = ["under_offer", "sold_stc", "sold_stcm", "reserved"];

fn med(v: &[f64]) -> Option<f64> {
    quantile(v, 0.5)
}

/// The listing area and label of the geography; a local authority given by name is looked up
/// among the loaded local authority boundaries (a `NotFound` names the nearest names).
async fn resolve(
    db: &Db,
    g: &FactsGeography,
) -> Result<(ListingArea, String, Option<String>), LookupError> {
    match g {
        FactsGeography::District(d) => Ok((
            ListingArea::PostcodePrefix(d.clone()),
            format!("district:{d}"),
            None,
        )),
        FactsGeography::LocalAuthority(given) => {
            let lads = catalogue::lad_boundaries(db).await?;
            let code = given.trim().to_ascii_uppercase();
            if let Some(l) = lads.iter().find(|l| l.code == code) {
                return Ok((
                    ListingArea::LocalAuthority(l.code.clone()),
                    format!("lad:{}", l.code),
                    l.name.clone(),
                ));
            }
            let is_code = code.len() == 9
                && code.as_bytes()[0].is_ascii_uppercase()
                && code.as_bytes()[1..].iter().all(u8::is_ascii_digit);
            if is_code {
                return Ok((
                    ListingArea::LocalAuthority(code.clone()),
                    format!("lad:{code}"),
                    None,
                ));
            }
            let key = given.trim().to_lowercase();
            if let Some(l) = lads
                .iter()
                .find(|l| l.name.as_deref().is_some_and(|n| n.to_lowercase() == key))
            {
                return Ok((
                    ListingArea::LocalAuthority(l.code.clone()),
                    format!("lad:{}", l.code),
                    l.name.clone(),
                ));
            }
            let mut scored: Vec<(usize, String)> = lads
                .iter()
                .filter_map(|l| {
                    let n = l.name.as_deref()?;
                    Some((
                        strsim::levenshtein(&n.to_lowercase(), &key),
                        format!("{n} ({})", l.code),
                    ))
                })
                .collect();
            scored.sort();
            let near: Vec<String> = scored.into_iter().take(5).map(|(_, n)| n).collect();
            Err(LookupError::NotFound(if near.is_empty() {
                format!(
                    "a local authority named {given:?} (no local authority names are loaded; give its GSS code)"
                )
            } else {
                format!(
                    "a local authority named {given:?} (nearest: {})",
                    near.join(", ")
                )
            }))
        }
    }
}

fn label(d: NaiveDate) -> String {
    format!("{:04}-{:02}", d.year(), d.month())
}

/// The facts of a geography and asset class over a period. `NotFound` (naming the nearest)
/// for a geography nothing places there.
pub async fn market_facts(db: &Db, req: &FactsRequest) -> Result<MarketFacts, LookupError> {
    let (area, geography, geography_name) = resolve(db, &req.geography).await?;
    known(db, &area, &geography).await?;
    let mut out = MarketFacts {
        status: Answer::NotAvailable,
        reason: Some(NO_FEED.into()),
        geography,
        geography_name,
        property_type: req.property_type,
        bedroom_band: req.bedroom_band,
        period: None,
        metrics: None,
        metrics_with_no_data: None,
        registered_sales_n: None,
        count_basis: COUNT_BASIS,
        notes: NOTES.to_vec(),
    };
    let Some((_, until)) = observation(db).await? else {
        return Ok(out);
    };
    let end = req.end.clone().unwrap_or_else(|| label(until.date()));
    let start = req.start.clone().unwrap_or_else(|| {
        month_start(&end)
            .and_then(|d| d.checked_sub_months(chrono::Months::new(11)))
            .map_or_else(|| end.clone(), label)
    });
    let in_period = |m: &String| *m >= start && *m <= end;
    let of_type = |label: Option<&str>| {
        req.property_type
            .is_none_or(|t| t.matches(crate::indices::property_type(label)))
    };

    let (all_rows, snaps) = area_listings(db, &area, None, None).await?;
    let rows: Vec<&ListingRow> = all_rows
        .iter()
        .filter(|l| req.bedroom_band.is_none_or(|b| b.contains(l.bedrooms)))
        .filter(|l| of_type(l.property_type.as_deref()))
        .collect();
    let (mut sale, mut rent, mut dom) = (Vec::new(), Vec::new(), Vec::new());
    for r in rows {
        let own = snaps.get(&r.listing_id).map_or(&[][..], Vec::as_slice);
        let Some((l, _)) = listed(r, own) else {
            continue;
        };
        if !in_period(&month_label(l.first.0)) {
            continue;
        }
        match r.channel.as_str() {
            "sale" => {
                sale.push(l.first.1 as f64);
                if let Some(s) = own.iter().find(|s| {
                    s.time.date() >= l.first.0
                        && AGREED.contains(&s.status.as_deref().unwrap_or(""))
                }) {
                    dom.push((s.time.date() - l.first.0).num_days() as f64);
                }
            }
            "rent" => rent.push(l.first.1 as f64),
            _ => {}
        }
    }

    // Registered sales: the UPRN-matched sample, and the registry's count.
    let bedrooms: HashMap<i64, i32> = all_rows
        .iter()
        .filter_map(|l| Some((l.uprn?, l.bedrooms?)))
        .collect();
    let (from, to) = (
        month_start(&start).unwrap_or(NaiveDate::MIN),
        month_end(&end).unwrap_or(NaiveDate::MAX),
    );
    let registered: Vec<sales::AreaSale> = sales::category_a_sales_in_area(db, &area, from, to)
        .await?
        .into_iter()
        .filter(|s| {
            req.property_type.is_none_or(|t| {
                PropertyType::from_code(&s.property_type).is_some_and(|p| t.matches(p))
            })
        })
        .collect();
    out.registered_sales_n = req
        .bedroom_band
        .is_none()
        .then_some(registered.len() as i64);
    let sold: Vec<f64> = registered
        .iter()
        .filter(|s| {
            s.uprn.is_some_and(|u| {
                req.bedroom_band
                    .is_none_or(|b| b.contains(bedrooms.get(&u).copied()))
            })
        })
        .map(|s| s.price as f64)
        .collect();

    let mut metrics = Vec::new();
    let mut missing = Vec::new();
    let mut put = |m: Option<Metric>, name: &'static str| match m {
        Some(m) => metrics.push(m),
        None => missing.push(name),
    };
    let price_asking = med(&sale);
    put(
        price_asking.map(|v| Metric {
            metric: "price_asking",
            value: v.round(),
            unit: "gbp",
            basis: Basis::Asking,
            n: sale.len() as i64,
            definition: "median first asking price of the sale listings first priced in the period",
        }),
        "price_asking",
    );
    put(
        med(&sold).map(|v| Metric {
            metric: "price_sold",
            value: v.round(),
            unit: "gbp",
            basis: Basis::Sold,
            n: sold.len() as i64,
            definition: "median price of the category A sales registered in the geography, completed in the period and matched to a UPRN (a sample: see count_basis)",
        }),
        "price_sold",
    );
    let rent_asking = med(&rent);
    put(
        rent_asking.map(|v| Metric {
            metric: "rent_asking",
            value: v.round(),
            unit: "gbp_pcm",
            basis: Basis::Asking,
            n: rent.len() as i64,
            definition: "median first asking rent (per calendar month) of the rent listings first priced in the period",
        }),
        "rent_asking",
    );
    let gross = match (rent_asking, price_asking) {
        (Some(r), Some(p))
            if rent.len() >= MIN_LISTINGS && sale.len() >= MIN_LISTINGS && p > 0.0 =>
        {
            Some(Metric {
                metric: "gross_yield_asking",
                value: (12.0 * r / p * 10_000.0).round() / 10_000.0,
                unit: "ratio",
                basis: Basis::Asking,
                n: rent.len().min(sale.len()) as i64,
                definition: "12 x rent_asking / price_asking, given when each has at least 5 listings; n is the smaller of the two",
            })
        }
        _ => None,
    };
    put(gross, "gross_yield_asking");
    put(
        med(&dom).map(|v| Metric {
            metric: "days_on_market",
            value: (v * 10.0).round() / 10.0,
            unit: "days",
            basis: Basis::Asking,
            n: dom.len() as i64,
            definition: "median days from a sale listing's first priced snapshot to its first under-offer, sold-STC or reserved one, over the period's sale listings that reached one",
        }),
        "days_on_market",
    );
    out.status = Answer::Ok;
    out.reason = None;
    out.period = Some(FactsPeriod { start, end });
    out.metrics = Some(metrics);
    out.metrics_with_no_data = Some(missing);
    Ok(out)
}
