//! Live listings (`POST /v1/sourcing/live-listings`): the current listings of up to ten postcode
//! districts from the listings feed, each enriched from the other families.
//!
//! A listing is current when it is live on the feed's latest sighting (`as_of`), as the listings
//! market defines live (`terrace_listings::market::live_runs`). Each row carries: asking against
//! the latest valuation vintage's value of its UPRN (ratio and difference; sale listings only),
//! price per square metre where a floor area is stated (the listing's, else the newest domestic
//! certificate's total floor area, `floor_area_source` says which), gross yields on two bases
//! with their n, lease years left (the registered lease, else the listing's statement), the
//! certificate's band, potential band and the minimum standard for letting, the designation
//! flags of the property's point (three-valued, from the spatial layers), days listed, agent, and
//! a one-line `signals` summary (`none` when nothing stands out). Nothing is invented: each
//! missing figure is `not_available` with the reason. Rows are in listing-id order, paged by the
//! shared keyset cursor.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use terrace_core::{CursorScope, Flag, Unavailable, Uprn, Violation};
use terrace_energy::mees::{Mees, band_index, mees};
use terrace_listings::market::{Answer, NO_FEED, live_runs, observation};
use terrace_store::listings::{self, ListingArea, ListingRow, SnapshotRow};
use terrace_store::{LookupError, address, epc, valuation};

use crate::{SourcingCtx, SourcingError};

/// The most districts one call takes.
pub const MAX_DISTRICTS: usize = 10;
/// The fewest current listings behind a district median used in a yield.
pub const MIN_MEDIAN_N: usize = 5;
/// Asking at least this far under (or over) the valuation is a signal.
pub const VALUATION_SIGNAL: f64 = 0.10;
/// A gross yield at or above this is a signal.
pub const YIELD_SIGNAL: f64 = 0.07;
/// Fewer lease years than this is a signal.
pub const LEASE_SIGNAL_YEARS: f64 = 90.0;
/// Listed this many days or more is a signal.
pub const STALE_DAYS: i64 = 90;

const SCOPE: &str = "sourcing_live_listings";

/// The listing channel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LiveChannel {
    #[default]
    Sale,
    Rent,
}

impl LiveChannel {
    pub fn as_str(self) -> &'static str {
        match self {
            LiveChannel::Sale => "sale",
            LiveChannel::Rent => "rent",
        }
    }
}

/// A checked request.
#[derive(Debug, Clone, Serialize)]
pub struct LiveQuery {
    /// Districts, canonical (upper case), deduplicated, in the order given.
    pub districts: Vec<String>,
    pub channel: LiveChannel,
    #[serde(skip)]
    pub limit: usize,
    /// The listing id after which the page starts.
    #[serde(skip)]
    pub after: Option<String>,
}

impl LiveQuery {
    /// Checks the districts (each a postcode district; a full postcode is truncated) and builds
    /// the query; every bad district is reported.
    pub fn new(
        districts: &[String],
        channel: LiveChannel,
        limit: usize,
    ) -> Result<LiveQuery, Vec<Violation>> {
        let mut found = Vec::new();
        let mut out: Vec<String> = Vec::new();
        for (i, d) in districts.iter().enumerate() {
            match terrace_core::Postcode::parse_district(d) {
                Ok(p) => {
                    if !out.contains(&p) {
                        out.push(p);
                    }
                }
                Err(_) => found.push(
                    Violation::new(
                        &["districts", &i.to_string()],
                        "value_error",
                        "Value error, not a UK postcode district: expected an outward code such as EX1 or SW1A",
                    )
                    .with_input(d.clone()),
                ),
            }
        }
        if found.is_empty() {
            Ok(LiveQuery {
                districts: out,
                channel,
                limit,
                after: None,
            })
        } else {
            Err(found)
        }
    }

    /// The cursor scope: the operation and every filter but the cursor and the limit.
    pub fn scope(&self) -> CursorScope {
        CursorScope::new(SCOPE, self)
    }
}

/// A figure or why there is none (the commercial report's block shape).
pub use terrace_commercial::Block as Known;

fn na<T>(reason: impl Into<String>) -> Known<T> {
    Known::NotAvailable(Unavailable::new(reason))
}

/// Asking against the valuation.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AgainstValuation {
    /// The vintage's value of the UPRN, pounds.
    pub value_gbp: i64,
    /// `model_version|YYYY-MM`.
    pub vintage: String,
    /// Asking price over value, to four decimals.
    pub ratio: f64,
    /// Asking price minus value, pounds (negative: asking under the valuation).
    pub difference_gbp: i64,
}

/// Price per square metre.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PerM2 {
    /// Pounds per square metre (asking price, or monthly asking rent on a rent listing).
    pub value: f64,
    pub floor_area_m2: f64,
    /// `listing` (the feed states it) or `epc` (the newest domestic certificate's total floor
    /// area).
    pub floor_area_source: &'static str,
}

/// A gross yield on one basis.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct YieldFigure {
    /// Annual rent over price or value, to four decimals, before any cost.
    pub gross_yield: f64,
    /// Monthly rent used, pounds.
    pub rent_pcm: i64,
    /// Price or value used, pounds.
    pub price_gbp: i64,
    /// The listings behind the district median in it (null when no median is used).
    pub n: Option<usize>,
    pub basis: String,
}

/// Lease years left.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LeaseYears {
    pub years_remaining: f64,
    /// `registered_lease` (HM Land Registry's registered leases, at `as_of`) or `listing` (the
    /// feed's statement).
    pub source: &'static str,
}

/// The energy certificate and the retrofit gap.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct EnergyFigure {
    pub current_band: Option<String>,
    pub potential_band: Option<String>,
    /// Bands between current and potential (0: none to gain); null when either is missing.
    pub retrofit_gap_bands: Option<i32>,
    pub lodgement_date: Option<NaiveDate>,
    pub mees: Mees,
}

/// One current listing, enriched.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LiveRow {
    pub listing_id: String,
    pub channel: LiveChannel,
    pub district: String,
    pub address: Option<String>,
    pub postcode: Option<String>,
    pub uprn: Option<i64>,
    /// `feed` or `address_matcher`.
    pub uprn_method: Option<String>,
    /// Asking price (sale) or asking rent per calendar month (rent), pounds.
    pub asking_gbp: Option<i64>,
    pub bedrooms: Option<i32>,
    pub property_type: Option<String>,
    pub tenure: Option<String>,
    /// The listing's last status (`available`, `under_offer`, ...).
    pub status: Option<String>,
    pub first_seen: NaiveDate,
    /// Days from first sighting to `as_of`.
    pub days_listed: i64,
    pub agent: Option<String>,
    pub against_valuation: Known<AgainstValuation>,
    pub price_per_m2: Known<PerM2>,
    /// 12 x the district's median asking rent for the bedroom band / asking price (sale), or
    /// 12 x the asking rent / the district's median asking price for the band (rent).
    pub gross_yield_asking: Known<YieldFigure>,
    /// 12 x the rent (the district's median asking rent for the band on a sale listing, the
    /// asking rent on a rent listing) / the valuation.
    pub gross_yield_avm: Known<YieldFigure>,
    pub lease: Known<LeaseYears>,
    pub energy: Known<EnergyFigure>,
    /// Designation and hazard flags of the property's point, `group.flag` -> true, false or
    /// `not_checked`.
    pub designations: Known<BTreeMap<String, Flag>>,
    /// One line: what stands out, `none` when nothing does.
    pub signals: String,
    /// The signals one by one (empty when `signals` is `none`).
    pub signal_list: Vec<String>,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LiveListings {
    /// `ok`, or `not_available` with no listings feed loaded.
    pub status: Answer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub districts: Vec<String>,
    pub channel: LiveChannel,
    /// The feed's latest sighting: listings live on this day are current.
    pub as_of: Option<NaiveDate>,
    /// The valuation vintage the valuation figures read (null when none is built).
    pub valuation_vintage: Option<String>,
    pub data: Vec<LiveRow>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    pub notes: Vec<&'static str>,
}

impl LiveListings {
    pub fn answered(&self) -> bool {
        self.status == Answer::Ok
    }
}

const NOTES: [&str; 4] = [
    "Asking prices and rents are the feed's, not achieved prices; a valuation is the latest vintage's automated estimate, not a survey.",
    "gross_yield_asking divides a district median of different properties' current listings (same bedroom band, at least 5) by this listing's figure; gross_yield_avm divides by this property's own valuation. Gross: before voids, management, maintenance, ground rent and service charge.",
    "Designation flags are true, false or not_checked (no dataset of the flag loaded for the property's local authority, or no position).",
    "MEES: a privately rented property in England and Wales rated F or G cannot lawfully be let without a registered exemption.",
];

fn band_key(bedrooms: Option<i32>) -> Option<i32> {
    bedrooms.filter(|b| *b >= 0).map(|b| b.min(4))
}

fn median(mut v: Vec<i64>) -> Option<i64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    })
}

fn r4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

fn band_label(b: i32) -> String {
    match b {
        0 => "studio".into(),
        4 => "4_plus".into(),
        b => b.to_string(),
    }
}

/// The current listings of the districts, enriched, one page.
pub async fn live_listings(
    ctx: &SourcingCtx,
    q: &LiveQuery,
) -> Result<LiveListings, SourcingError> {
    let db = &ctx.db;
    let mut answer = LiveListings {
        status: Answer::NotAvailable,
        reason: Some(NO_FEED.into()),
        districts: q.districts.clone(),
        channel: q.channel,
        as_of: None,
        valuation_vintage: None,
        data: Vec::new(),
        next_cursor: None,
        notes: NOTES.to_vec(),
    };
    let Some((_, last)) = observation(db).await? else {
        return Ok(answer);
    };
    let as_of = last.date();
    answer.status = Answer::Ok;
    answer.reason = None;
    answer.as_of = Some(as_of);

    // Every current listing of the districts, both channels (the other channel gives the
    // medians of the yields).
    let mut current: Vec<(String, ListingRow)> = Vec::new();
    for d in &q.districts {
        let rows = listings::listings_in_area(db, &ListingArea::PostcodePrefix(d.clone())).await?;
        let ids: Vec<String> = rows.iter().map(|r| r.listing_id.clone()).collect();
        let mut snaps: HashMap<String, Vec<SnapshotRow>> = HashMap::new();
        for s in listings::snapshots_of(db, &ids).await? {
            snaps.entry(s.listing_id.clone()).or_default().push(s);
        }
        for r in rows {
            let own = snaps.get(&r.listing_id).map_or(&[][..], Vec::as_slice);
            let live = live_runs(&r, own, as_of)
                .iter()
                .any(|(from, to, _)| *from <= as_of && as_of <= *to);
            if live {
                current.push((d.clone(), r));
            }
        }
    }
    // District medians by (district, channel, band).
    let mut prices: BTreeMap<(String, String, i32), Vec<i64>> = BTreeMap::new();
    for (d, r) in &current {
        if let (Some(b), Some(p)) = (band_key(r.bedrooms), r.price.filter(|p| *p > 0)) {
            prices
                .entry((d.clone(), r.channel.clone(), b))
                .or_default()
                .push(p);
        }
    }
    let medians: BTreeMap<(String, String, i32), (i64, usize)> = prices
        .into_iter()
        .filter_map(|(k, v)| {
            let n = v.len();
            Some((k, (median(v)?, n)))
        })
        .collect();

    // The page: this channel, by listing id, after the cursor.
    let mut page: Vec<(String, ListingRow)> = current
        .into_iter()
        .filter(|(_, r)| r.channel == q.channel.as_str())
        .filter(|(_, r)| q.after.as_ref().is_none_or(|a| r.listing_id > *a))
        .collect();
    page.sort_by(|a, b| a.1.listing_id.cmp(&b.1.listing_id));
    page.dedup_by(|a, b| a.1.listing_id == b.1.listing_id);
    let more = page.len() > q.limit;
    page.truncate(q.limit);

    // The valuations of the page's UPRNs in the latest vintage.
    let vintage = valuation::latest_vintage(db).await?;
    let uprns: Vec<i64> = page
        .iter()
        .filter_map(|(_, r)| r.uprn)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut values: HashMap<i64, Result<f64, String>> = HashMap::new();
    if let Some(v) = &vintage {
        answer.valuation_vintage = Some(v.vintage_key.clone());
        for row in valuation::valuations_of(db, &uprns).await? {
            if row.as_of == v.as_of && row.model_version == v.model_version {
                let value = match (row.value.filter(|x| *x > 0.0), row.refusal) {
                    (Some(x), _) => Ok(x),
                    (None, Some(why)) => Err(format!("the valuation refused this property: {why}")),
                    (None, None) => Err("the valuation gives this property no value".into()),
                };
                values.insert(row.uprn, value);
            }
        }
    }
    let layers = ctx.layers.current(db).await?;

    for (district, r) in page {
        let asking = r.price.filter(|p| *p > 0);
        let value: Result<f64, String> = match (r.uprn, &vintage) {
            (None, _) => Err("the listing is not matched to a UPRN".into()),
            (Some(_), None) => {
                Err("no valuation vintage is built (cargo xtask build values the register)".into())
            }
            (Some(u), Some(_)) => values.get(&u).cloned().unwrap_or_else(|| {
                Err("the latest valuation vintage does not value this UPRN".into())
            }),
        };
        let vintage_key = answer.valuation_vintage.clone().unwrap_or_default();
        let against_valuation = match (q.channel, asking, &value) {
            (LiveChannel::Rent, _, _) => {
                na("a rent listing's asking rent is not compared with a capital value")
            }
            (LiveChannel::Sale, None, _) => na("the listing states no asking price"),
            (LiveChannel::Sale, Some(_), Err(why)) => na(why.clone()),
            (LiveChannel::Sale, Some(a), Ok(v)) => Known::Available(AgainstValuation {
                value_gbp: v.round() as i64,
                vintage: vintage_key.clone(),
                ratio: r4(a as f64 / v),
                difference_gbp: a - v.round() as i64,
            }),
        };
        // The newest domestic certificate of the UPRN.
        let cert = match r.uprn {
            Some(u) => epc::epc_for_uprn(db, u).await?.into_iter().next(),
            None => None,
        };
        let (area, area_source) = match (
            r.floor_area_m2.filter(|a| *a > 0.0),
            cert.as_ref()
                .and_then(|c| c.total_floor_area)
                .filter(|a| *a > 0.0),
        ) {
            (Some(a), _) => (Some(a), "listing"),
            (None, Some(a)) => (Some(a), "epc"),
            (None, None) => (None, ""),
        };
        let price_per_m2 = match (asking, area) {
            (None, _) => na("the listing states no asking figure"),
            (Some(_), None) => na(
                "no floor area is stated: the listing gives none and no domestic certificate of the UPRN states one",
            ),
            (Some(a), Some(m2)) => Known::Available(PerM2 {
                value: (a as f64 / m2 * 100.0).round() / 100.0,
                floor_area_m2: m2,
                floor_area_source: area_source,
            }),
        };
        let band = band_key(r.bedrooms);
        let other = match q.channel {
            LiveChannel::Sale => "rent",
            LiveChannel::Rent => "sale",
        };
        let district_median = band.and_then(|b| {
            medians
                .get(&(district.clone(), other.to_string(), b))
                .copied()
        });
        let median_basis = |b: i32, n: usize| {
            format!(
                "median of the {n} current {other} listings in {district} with bedroom band {}",
                band_label(b)
            )
        };
        let gross_yield_asking = match (asking, band, district_median) {
            (None, _, _) => na("the listing states no asking figure"),
            (_, None, _) => na("the listing states no bedrooms, so it has no bedroom band"),
            (Some(_), Some(b), None) => na(format!(
                "no current {other} listing in {district} with bedroom band {}",
                band_label(b)
            )),
            (Some(_), Some(b), Some((_, n))) if n < MIN_MEDIAN_N => na(format!(
                "only {n} current {other} listings in {district} with bedroom band {}, fewer than {MIN_MEDIAN_N}",
                band_label(b)
            )),
            (Some(a), Some(b), Some((m, n))) => {
                let (rent, price) = match q.channel {
                    LiveChannel::Sale => (m, a),
                    LiveChannel::Rent => (a, m),
                };
                Known::Available(YieldFigure {
                    gross_yield: r4(12.0 * rent as f64 / price as f64),
                    rent_pcm: rent,
                    price_gbp: price,
                    n: Some(n),
                    basis: median_basis(b, n),
                })
            }
        };
        let gross_yield_avm = {
            let rent = match q.channel {
                LiveChannel::Rent => asking
                    .map(|a| (a, None, "the listing's asking rent".to_string()))
                    .ok_or_else(|| "the listing states no asking rent".to_string()),
                LiveChannel::Sale => match (band, district_median) {
                    (None, _) => {
                        Err("the listing states no bedrooms, so it has no bedroom band".into())
                    }
                    (Some(b), None) => Err(format!(
                        "no current rent listing in {district} with bedroom band {}",
                        band_label(b)
                    )),
                    (Some(b), Some((_, n))) if n < MIN_MEDIAN_N => Err(format!(
                        "only {n} current rent listings in {district} with bedroom band {}, fewer than {MIN_MEDIAN_N}",
                        band_label(b)
                    )),
                    (Some(b), Some((m, n))) => Ok((m, Some(n), median_basis(b, n))),
                },
            };
            match (&rent, &value) {
                (Err(why), _) | (_, Err(why)) => na(why.clone()),
                (Ok((rent, n, basis)), Ok(v)) => Known::Available(YieldFigure {
                    gross_yield: r4(12.0 * *rent as f64 / v),
                    rent_pcm: *rent,
                    price_gbp: v.round() as i64,
                    n: *n,
                    basis: format!("{basis} over the property's valuation ({vintage_key})"),
                }),
            }
        };
        let lease = lease_of(db, &r, as_of).await?;
        let energy = match (&cert, r.uprn) {
            (_, None) => na("the listing is not matched to a UPRN"),
            (None, Some(_)) => na("no domestic energy certificate is lodged for this UPRN"),
            (Some(c), Some(_)) => {
                let gap = match (
                    c.current_rating.as_deref().and_then(band_index),
                    c.potential_rating.as_deref().and_then(band_index),
                ) {
                    (Some(cur), Some(pot)) => Some((cur - pot).max(0)),
                    _ => None,
                };
                Known::Available(EnergyFigure {
                    current_band: c.current_rating.clone(),
                    potential_band: c.potential_rating.clone(),
                    retrofit_gap_bands: gap,
                    lodgement_date: c.lodgement_date,
                    mees: mees(c.current_rating.as_deref(), None),
                })
            }
        };
        let designations = match r.uprn {
            None => na("the listing is not matched to a UPRN, so it has no point to check"),
            Some(u) => match address::address(db, u).await? {
                None => na("the UPRN is not in the address register"),
                Some(a) => {
                    let rep = terrace_layers::report_from(&layers, &a);
                    let mut flags = BTreeMap::new();
                    for (group, checks) in [
                        ("flood", &rep.flood.flags),
                        ("heritage", &rep.heritage),
                        (
                            "environmental_designations",
                            &rep.environmental_designations,
                        ),
                        ("planning", &rep.planning),
                    ] {
                        for (name, c) in checks {
                            flags.insert(format!("{group}.{name}"), c.value);
                        }
                    }
                    Known::Available(flags)
                }
            },
        };
        let days_listed = (as_of - r.first_seen.date()).num_days().max(0);
        let signal_list = signals(
            &against_valuation,
            &energy,
            &lease,
            &gross_yield_asking,
            &designations,
            days_listed,
        );
        let signals = if signal_list.is_empty() {
            "none".to_string()
        } else {
            signal_list.join("; ")
        };
        answer.data.push(LiveRow {
            listing_id: r.listing_id.clone(),
            channel: q.channel,
            district,
            address: r.address.clone(),
            postcode: r.postcode.clone(),
            uprn: r.uprn,
            uprn_method: r.uprn_method.clone(),
            asking_gbp: asking,
            bedrooms: r.bedrooms,
            property_type: r.property_type.clone(),
            tenure: r.tenure.clone(),
            status: r.last_status.clone(),
            first_seen: r.first_seen.date(),
            days_listed,
            agent: r.agent.clone(),
            against_valuation,
            price_per_m2,
            gross_yield_asking,
            gross_yield_avm,
            lease,
            energy,
            designations,
            signals,
            signal_list,
        });
    }
    if more {
        answer.next_cursor = answer
            .data
            .last()
            .map(|l| q.scope().encode(&[l.listing_id.as_str()]));
    }
    Ok(answer)
}

async fn lease_of(
    db: &terrace_store::Db,
    r: &ListingRow,
    as_of: NaiveDate,
) -> Result<Known<LeaseYears>, SourcingError> {
    if let Some(u) = r.uprn.and_then(|u| Uprn::new(u).ok()) {
        match terrace_ownership::lease(db, u, as_of).await {
            Ok(l) => {
                if let Some(y) = l.lease.and_then(|x| x.unexpired_years) {
                    return Ok(Known::Available(LeaseYears {
                        years_remaining: y,
                        source: "registered_lease",
                    }));
                }
            }
            Err(LookupError::NotFound(_)) => {}
            Err(LookupError::Store(e)) => return Err(e.into()),
        }
    }
    if let Some(y) = r.unexpired_years {
        return Ok(Known::Available(LeaseYears {
            years_remaining: f64::from(y),
            source: "listing",
        }));
    }
    Ok(match r.tenure.as_deref() {
        Some("freehold") => {
            na("freehold, as the listing states, and no registered lease is linked")
        }
        _ => na("no registered lease is linked to the UPRN and the listing states no lease term"),
    })
}

fn signals(
    against: &Known<AgainstValuation>,
    energy: &Known<EnergyFigure>,
    lease: &Known<LeaseYears>,
    gross: &Known<YieldFigure>,
    designations: &Known<BTreeMap<String, Flag>>,
    days_listed: i64,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Known::Available(a) = against {
        let pct = ((a.ratio - 1.0) * 100.0).round();
        if a.ratio <= 1.0 - VALUATION_SIGNAL {
            out.push(format!("asking {}% under valuation", -pct));
        } else if a.ratio >= 1.0 + VALUATION_SIGNAL {
            out.push(format!("asking {pct}% over valuation"));
        }
    }
    if let Known::Available(e) = energy
        && e.mees.lawful_to_let_without_exemption == Some(false)
    {
        out.push(format!(
            "EPC {} (MEES-unlettable)",
            e.current_band.as_deref().unwrap_or("F/G")
        ));
    }
    if let Known::Available(l) = lease
        && l.years_remaining < LEASE_SIGNAL_YEARS
    {
        out.push(format!("{:.0} years on lease", l.years_remaining.floor()));
    }
    if let Known::Available(g) = gross
        && g.gross_yield >= YIELD_SIGNAL
    {
        out.push(format!(
            "gross yield {:.1}% on asking",
            g.gross_yield * 100.0
        ));
    }
    if let Known::Available(d) = designations {
        let hits: Vec<&str> = d
            .iter()
            .filter(|(_, f)| **f == Flag::TRUE)
            .map(|(k, _)| k.as_str())
            .collect();
        if !hits.is_empty() {
            out.push(hits.join(", "));
        }
    }
    if days_listed >= STALE_DAYS {
        out.push(format!("listed {days_listed} days"));
    }
    out
}
