//! The sourcing build: one row of features per addressable unit (`sourcing_features`), gathered
//! per local authority from the families' stored rows, so a search or an owners' ranking is one
//! scan of an area. Runs after the valuation vintage (it reads the values); replaces each
//! authority's rows whole, so a second run changes nothing but the stamps.

use chrono::{Datelike, NaiveDate, NaiveDateTime};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use terrace_core::Postcode;
use terrace_core::registers::Proprietor;
use terrace_land::stock::{Kind, kind};
use terrace_store::address::AddressRow;
use terrace_store::features::{self as ss, FeatureRow};
use terrace_store::{Db, StoreError, epc, land, titles, valuation as vs};

/// The provenance of every feature row.
pub const SOURCE: &str = "derived:sourcing_build";

/// What is only shown beside a unit (the `detail_json` column).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Detail {
    pub address: Option<String>,
    pub postcode: Option<String>,
    pub class: Option<String>,
    pub property_type: Option<String>,
    pub last_sale_date: Option<NaiveDate>,
    pub epc_tenure: Option<String>,
    pub epc_lodged: Option<NaiveDate>,
    pub owner_name: Option<String>,
    pub owner_title: Option<String>,
    pub owner_tenure: Option<String>,
    pub sale_listing_id: Option<String>,
    pub agent: Option<String>,
    pub auction_offers: Option<i32>,
    pub last_auction_date: Option<NaiveDate>,
    pub last_auction_outcome: Option<String>,
}

impl Detail {
    pub fn of(row: &FeatureRow) -> Detail {
        serde_json::from_str(&row.detail_json).unwrap_or_default()
    }
}

/// What one run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BuildReport {
    pub authorities: usize,
    pub units: usize,
    pub with_value: usize,
    pub with_owner: usize,
    pub removed: usize,
}

impl BuildReport {
    pub fn summary(&self) -> String {
        format!(
            "sourcing features: {} units in {} authorities ({} valued, {} with a linked company title), {} stale rows removed",
            self.units, self.authorities, self.with_value, self.with_owner, self.removed
        )
    }
}

/// The use of a unit by its address class.
pub fn use_kind(class: Option<&str>) -> &'static str {
    match kind(class) {
        Kind::Residential => "residential",
        Kind::Commercial => "commercial",
        Kind::DualUse => "dual_use",
        Kind::ParentShell | Kind::Other => "other",
        Kind::Unclassified => "unknown",
    }
}

/// The date the features describe: the first day of the valuation vintage's month, else today.
async fn as_of(db: &Db, now: NaiveDateTime) -> Result<NaiveDate, StoreError> {
    let v = vs::latest_vintage(db).await?;
    Ok(v.and_then(|v| {
        let (y, m) = v.as_of.split_once('-')?;
        NaiveDate::from_ymd_opt(y.parse().ok()?, m.parse().ok()?, 1)
    })
    .unwrap_or(now.date()))
}

fn years_between(from: NaiveDate, to: NaiveDate) -> f64 {
    (to - from).num_days() as f64 / 365.25
}

/// Runs the build over every authority of the register.
pub async fn build(
    db: &Db,
    now: NaiveDateTime,
    say: &mut dyn FnMut(&str),
) -> Result<BuildReport, StoreError> {
    let day = as_of(db, now).await?;
    let mut report = BuildReport::default();
    let lads = ss::address_lads(db).await?;
    for lad in &lads {
        let rows = authority(db, lad, day, now).await?;
        report.authorities += 1;
        report.units += rows.len();
        report.with_value += rows.iter().filter(|r| r.value.is_some()).count();
        report.with_owner += rows.iter().filter(|r| r.owner_register.is_some()).count();
        let mut keep: Vec<i64> = rows.iter().map(|r| r.uprn).collect();
        keep.sort_unstable();
        let stale: Vec<i64> = ss::feature_uprns_in_lad(db, Some(lad))
            .await?
            .into_iter()
            .filter(|u| keep.binary_search(u).is_err())
            .collect();
        report.removed += ss::delete_features(db, &stale).await?;
        for chunk in rows.chunks(2_000) {
            ss::replace_features(db, chunk.to_vec()).await?;
        }
    }
    // Rows of authorities no longer in the register (or of units in none).
    for l in ss::feature_lads(db).await? {
        if l.as_ref().is_none_or(|l| lads.binary_search(l).is_err()) {
            let gone = ss::feature_uprns_in_lad(db, l.as_deref()).await?;
            report.removed += ss::delete_features(db, &gone).await?;
        }
    }
    say(&report.summary());
    Ok(report)
}

/// The feature rows of one authority's addresses.
async fn authority(
    db: &Db,
    lad: &str,
    day: NaiveDate,
    now: NaiveDateTime,
) -> Result<Vec<FeatureRow>, StoreError> {
    let addrs: Vec<AddressRow> = ss::addresses_in_lad(db, lad).await?;
    let uprns: Vec<i64> = addrs.iter().map(|a| a.uprn).collect();
    // Buildings: every unit's building, and the uses of the units in each.
    let mut buildings: Vec<i64> = addrs
        .iter()
        .map(|a| a.parent_uprn.unwrap_or(a.uprn))
        .collect();
    buildings.sort_unstable();
    buildings.dedup();
    let mut uses: HashMap<i64, (i32, i32)> = HashMap::new();
    for (parent, class) in ss::children_of(db, &buildings).await? {
        count_use(uses.entry(parent).or_default(), class.as_deref());
    }
    let parcels: HashMap<i64, i64> = land::parcel_addresses_by_uprn(db, &uprns)
        .await?
        .into_iter()
        .map(|p| (p.uprn, p.inspire_id))
        .collect();
    let values: HashMap<i64, vs::ValuationRow> = vs::valuations_of(db, &uprns)
        .await?
        .into_iter()
        .map(|v| (v.uprn, v))
        .collect();
    let scope = terrace_store::scope::AreaScope::of(
        &terrace_core::AreaId::new(terrace_core::AreaKind::Lad, lad)
            .map_err(|e| StoreError::Setup(format!("authority code {lad}: {e}")))?,
    );
    let certs: HashMap<i64, epc::NewestCertRow> = match scope {
        Some(s) => epc::scope_newest_certificates(db, &s)
            .await?
            .into_iter()
            .map(|c| (c.uprn, c))
            .collect(),
        None => HashMap::new(),
    };
    let mut leases: HashMap<i64, NaiveDate> = HashMap::new();
    for (u, end) in ss::lease_ends_of(db, &uprns).await? {
        let e = leases.entry(u).or_insert(end);
        *e = (*e).max(end);
    }
    let owners = owners_of(db, &uprns).await?;
    let listings = listings_of(db, &uprns).await?;
    let auctions = auctions_of(db, &uprns).await?;
    let mut out = Vec::with_capacity(addrs.len());
    for a in &addrs {
        let building = a.parent_uprn.unwrap_or(a.uprn);
        let (res, com) = match uses.get(&building) {
            Some(c) => *c,
            None => {
                let mut c = (0, 0);
                count_use(&mut c, a.class.as_deref());
                c
            }
        };
        let v = values.get(&a.uprn);
        let cert = certs.get(&a.uprn);
        let owner = owners.get(&a.uprn);
        let sale = listings.get(&a.uprn).and_then(|l| l.sale.as_ref());
        let rent = listings.get(&a.uprn).and_then(|l| l.rent_pcm);
        let lots = auctions.get(&a.uprn);
        let detail = Detail {
            address: terrace_areas::catalogue::address_line(a),
            postcode: a.postcode.clone(),
            class: a.class.clone(),
            property_type: v.and_then(|v| v.property_type.clone()),
            last_sale_date: v.and_then(|v| v.last_sale_date),
            epc_tenure: cert.and_then(|c| c.tenure.clone()),
            epc_lodged: cert.and_then(|c| c.lodgement_date),
            owner_name: owner.map(|o| o.name.clone()),
            owner_title: owner.map(|o| o.title.clone()),
            owner_tenure: owner.and_then(|o| o.tenure.clone()),
            sale_listing_id: sale.map(|s| s.listing_id.clone()),
            agent: sale.and_then(|s| s.agent.clone()),
            auction_offers: lots.map(|l| l.offers),
            last_auction_date: lots.map(|l| l.last_date),
            last_auction_outcome: lots.map(|l| l.last_outcome.clone()),
        };
        out.push(FeatureRow {
            uprn: a.uprn,
            building_uprn: building,
            lad_code: a.lad_code.clone(),
            district: a
                .postcode
                .as_deref()
                .and_then(|p| Postcode::parse(p).ok())
                .map(|p| p.outward().to_string()),
            x: a.x,
            y: a.y,
            parcel_id: parcels.get(&a.uprn).copied(),
            use_kind: use_kind(a.class.as_deref()).to_string(),
            tenure: v.and_then(|v| v.tenure.clone()),
            value: v.and_then(|v| v.value),
            last_sale_price: v.and_then(|v| v.last_sale_price),
            epc_band: cert.and_then(|c| band(c.current_rating.as_deref())),
            epc_potential_band: cert.and_then(|c| band(c.potential_rating.as_deref())),
            lease_years: leases
                .get(&a.uprn)
                .map(|end| (years_between(day, *end) * 10.0).round() / 10.0),
            owner_company_number: owner.and_then(|o| o.company_number.clone()),
            owner_register: owner.map(|o| o.register.clone()),
            owner_since: owner.and_then(|o| o.since),
            owner_price_paid: owner.and_then(|o| o.price_paid),
            asking_price: sale.and_then(|s| s.price),
            first_asking_price: sale.and_then(|s| s.first_price),
            listed_on: sale.map(|s| s.listed_on),
            reductions: sale.map(|s| s.reductions),
            rent_pcm: rent,
            auction_unsold: lots.map(|l| l.unsold),
            last_guide: lots.and_then(|l| l.last_guide),
            building_residential: res,
            building_commercial: com,
            detail_json: serde_json::to_string(&detail).unwrap_or_else(|_| "{}".into()),
            as_of: day,
            source: SOURCE.into(),
            updated_at: now,
        });
    }
    Ok(out)
}

fn count_use(c: &mut (i32, i32), class: Option<&str>) {
    match kind(class) {
        Kind::Residential => c.0 += 1,
        Kind::Commercial => c.1 += 1,
        Kind::DualUse => {
            c.0 += 1;
            c.1 += 1;
        }
        Kind::ParentShell | Kind::Other | Kind::Unclassified => {}
    }
}

/// An energy band letter (`A`..`G`), upper case.
fn band(s: Option<&str>) -> Option<String> {
    let b = s?.trim().to_ascii_uppercase();
    (b.len() == 1 && ("A"..="G").contains(&b.as_str())).then_some(b)
}

/// The company owner of a unit: the first proprietor of its linked freehold title (the newest
/// added when several link).
struct Owner {
    name: String,
    company_number: Option<String>,
    register: String,
    title: String,
    tenure: Option<String>,
    since: Option<NaiveDate>,
    price_paid: Option<i64>,
}

async fn owners_of(db: &Db, uprns: &[i64]) -> Result<HashMap<i64, Owner>, StoreError> {
    let mut out: HashMap<i64, Owner> = HashMap::new();
    let mut rows = titles::titles_for_uprns(db, uprns).await?;
    rows.sort_by(|a, b| a.title_number.cmp(&b.title_number));
    for t in rows {
        let Some(u) = t.uprn else { continue };
        if !t
            .tenure
            .as_deref()
            .is_some_and(|x| x.eq_ignore_ascii_case("freehold"))
        {
            continue;
        }
        let props: Vec<Proprietor> = serde_json::from_str(&t.proprietors_json).unwrap_or_default();
        let Some(p) = props.into_iter().next() else {
            continue;
        };
        let newer = out
            .get(&u)
            .is_none_or(|o| t.date_added.is_some() && o.since < t.date_added);
        if newer {
            out.insert(
                u,
                Owner {
                    name: p.name,
                    company_number: p.company_number,
                    register: t.register.clone(),
                    title: t.title_number.clone(),
                    tenure: t.tenure.clone(),
                    since: t.date_added,
                    price_paid: t.price_paid,
                },
            );
        }
    }
    Ok(out)
}

struct SaleListing {
    listing_id: String,
    seen: NaiveDateTime,
    price: Option<i64>,
    first_price: Option<i64>,
    listed_on: NaiveDate,
    reductions: i32,
    agent: Option<String>,
}

#[derive(Default)]
struct UnitListings {
    sale: Option<SaleListing>,
    rent_pcm: Option<f64>,
}

/// The live sale listing (the newest first seen) and live rent listing of each unit, with the
/// sale listing's price reductions from the change log.
async fn listings_of(db: &Db, uprns: &[i64]) -> Result<HashMap<i64, UnitListings>, StoreError> {
    let rows = ss::listings_of_uprns(db, uprns).await?;
    let live: Vec<_> = rows
        .into_iter()
        .filter(|l| l.removed_at.is_none())
        .collect();
    let ids: Vec<String> = live
        .iter()
        .filter(|l| l.channel == "sale")
        .map(|l| l.listing_id.clone())
        .collect();
    let mut events: BTreeMap<String, (i32, Option<i64>)> = BTreeMap::new();
    for (id, kind, price, previous) in ss::price_events_of(db, &ids).await? {
        let e = events.entry(id).or_default();
        if kind == "price_reduction" {
            e.0 += 1;
        }
        // The first asking price: the earliest event's previous price, else its price.
        if e.1.is_none() {
            e.1 = previous.or(price);
        }
    }
    let mut out: HashMap<i64, UnitListings> = HashMap::new();
    for l in live {
        let Some(u) = l.uprn else { continue };
        let entry = out.entry(u).or_default();
        match l.channel.as_str() {
            "sale" => {
                let newer = entry.sale.as_ref().is_none_or(|s| s.seen <= l.first_seen);
                if newer {
                    let (reductions, first) =
                        events.get(&l.listing_id).copied().unwrap_or((0, None));
                    entry.sale = Some(SaleListing {
                        listing_id: l.listing_id.clone(),
                        seen: l.first_seen,
                        price: l.price,
                        first_price: first.or(l.price),
                        listed_on: l.first_seen.date(),
                        reductions,
                        agent: l.agent.clone(),
                    });
                }
            }
            "rent" => {
                if let Some(p) = l.price.filter(|p| *p > 0) {
                    entry.rent_pcm = Some(p as f64);
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

struct UnitLots {
    offers: i32,
    unsold: i32,
    last_guide: Option<i64>,
    last_date: NaiveDate,
    last_outcome: String,
}

/// Each unit's auction offers: how many, how many did not sell, and the newest lot.
async fn auctions_of(db: &Db, uprns: &[i64]) -> Result<HashMap<i64, UnitLots>, StoreError> {
    let mut out: HashMap<i64, UnitLots> = HashMap::new();
    for lot in ss::lots_of_uprns(db, uprns).await? {
        let Some(u) = lot.uprn else { continue };
        let unsold = i32::from(matches!(lot.outcome.as_str(), "unsold" | "withdrawn"));
        match out.get_mut(&u) {
            Some(e) => {
                e.offers += 1;
                e.unsold += unsold;
                if lot.auction_date >= e.last_date {
                    e.last_date = lot.auction_date;
                    e.last_guide = lot.guide_low;
                    e.last_outcome = lot.outcome.clone();
                }
            }
            None => {
                out.insert(
                    u,
                    UnitLots {
                        offers: 1,
                        unsold,
                        last_guide: lot.guide_low,
                        last_date: lot.auction_date,
                        last_outcome: lot.outcome.clone(),
                    },
                );
            }
        }
    }
    Ok(out)
}

/// Years from `date` to `day` (for years owned), one decimal.
pub fn years_since(date: NaiveDate, day: NaiveDate) -> f64 {
    ((years_between(date, day)) * 10.0).round() / 10.0
}

/// The first day of the month `day` falls in (for display of `as_of`).
pub fn month_of(day: NaiveDate) -> String {
    format!("{:04}-{:02}", day.year(), day.month())
}
