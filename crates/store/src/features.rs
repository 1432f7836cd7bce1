//! Sourcing features: the build's one row per addressable unit (`sourcing_features`), what the strategies
//! filter and rank on, and the batch reads that build gathers it with (per local authority, the
//! other families' rows of its addresses).
//!
//! Invariants: the table is written only by the sourcing build, which replaces a local
//! authority's rows whole, so running it twice changes nothing; a null is "not known", never 0.

use crate::db::{Db, StoreResult};
use crate::schema::{addresses, auction_lots, leases, listing_events, listings, sourcing_features};
use crate::{keyed_ops, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// One unit's features (docs/METHODS.md, "Sourcing").
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = sourcing_features)]
pub struct FeatureRow {
    pub uprn: i64,
    /// The parent UPRN where the unit has one, else its own.
    pub building_uprn: i64,
    pub lad_code: Option<String>,
    /// The postcode's outward code.
    pub district: Option<String>,
    /// BNG metres.
    pub x: Option<f64>,
    pub y: Option<f64>,
    /// The INSPIRE id of the parcel its point lies in.
    pub parcel_id: Option<i64>,
    /// `residential`, `commercial`, `dual_use`, `other` or `unknown` (from the address class).
    pub use_kind: String,
    /// Price Paid's tenure code of the valuation (`F`, `L`).
    pub tenure: Option<String>,
    /// The valuation vintage's value.
    pub value: Option<f64>,
    pub last_sale_price: Option<i64>,
    /// The newest domestic certificate's current and potential bands.
    pub epc_band: Option<String>,
    pub epc_potential_band: Option<String>,
    /// Years left on the longest registered lease at the build date.
    pub lease_years: Option<f64>,
    /// The first proprietor of a linked company or overseas company freehold title.
    pub owner_company_number: Option<String>,
    /// `ccod` or `ocod`.
    pub owner_register: Option<String>,
    /// The title's `Date Proprietor Added`.
    pub owner_since: Option<NaiveDate>,
    pub owner_price_paid: Option<i64>,
    /// The live sale listing's asking price now and when first seen.
    pub asking_price: Option<i64>,
    pub first_asking_price: Option<i64>,
    pub listed_on: Option<NaiveDate>,
    pub reductions: Option<i32>,
    /// The live rent listing's asking rent, pounds a month.
    pub rent_pcm: Option<f64>,
    /// Auction offers that did not sell (`unsold`, `withdrawn`).
    pub auction_unsold: Option<i32>,
    /// The newest lot's low guide.
    pub last_guide: Option<i64>,
    /// Units of the building (same `building_uprn`) by use.
    pub building_residential: i32,
    pub building_commercial: i32,
    /// What is only shown (the sourcing crate owns its shape).
    pub detail_json: String,
    /// The date the features describe (the valuation vintage's month end, else the build day).
    pub as_of: NaiveDate,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    FeatureRow,
    sourcing_features,
    uprn,
    i64,
    features_by_uprn,
    replace_features,
    delete_features
);

/// The stored features' UPRNs of one authority (None: units in no known authority).
pub async fn feature_uprns_in_lad(db: &Db, lad: Option<&str>) -> StoreResult<Vec<i64>> {
    Ok(with_conn!(db, |c| {
        let q = sourcing_features::table
            .select(sourcing_features::uprn)
            .into_boxed();
        let q = match lad {
            Some(l) => q.filter(sourcing_features::lad_code.eq(l.to_string())),
            None => q.filter(sourcing_features::lad_code.is_null()),
        };
        q.order(sourcing_features::uprn).load::<i64>(c).await?
    }))
}

/// The authorities with stored features.
pub async fn feature_lads(db: &Db) -> StoreResult<Vec<Option<String>>> {
    Ok(with_conn!(db, |c| {
        sourcing_features::table
            .select(sourcing_features::lad_code)
            .distinct()
            .load::<Option<String>>(c)
            .await?
    }))
}

/// The addresses of one authority, by UPRN.
pub async fn addresses_in_lad(db: &Db, lad: &str) -> StoreResult<Vec<crate::address::AddressRow>> {
    Ok(with_conn!(db, |c| {
        addresses::table
            .filter(addresses::lad_code.eq(lad))
            .order(addresses::uprn)
            .select(crate::address::AddressRow::as_select())
            .load(c)
            .await?
    }))
}

/// The distinct authorities of the register's addresses (None left out).
pub async fn address_lads(db: &Db) -> StoreResult<Vec<String>> {
    let v: Vec<Option<String>> = with_conn!(db, |c| {
        addresses::table
            .select(addresses::lad_code)
            .distinct()
            .load::<Option<String>>(c)
            .await?
    });
    let mut out: Vec<String> = v.into_iter().flatten().collect();
    out.sort();
    Ok(out)
}

/// The units whose parent is one of `parents`: (parent UPRN, address class).
pub async fn children_of(db: &Db, parents: &[i64]) -> StoreResult<Vec<(i64, Option<String>)>> {
    let mut out = Vec::new();
    for k in parents.chunks(crate::bulk::CHUNK) {
        let part: Vec<(Option<i64>, Option<String>)> = with_conn!(db, |c| {
            addresses::table
                .filter(addresses::parent_uprn.eq_any(k))
                .select((addresses::parent_uprn, addresses::class))
                .load(c)
                .await?
        });
        out.extend(part.into_iter().filter_map(|(p, c)| p.map(|p| (p, c))));
    }
    Ok(out)
}

/// The registered leases of `uprns` with a parsed term end: (UPRN, term end).
pub async fn lease_ends_of(db: &Db, uprns: &[i64]) -> StoreResult<Vec<(i64, NaiveDate)>> {
    let mut out = Vec::new();
    for k in uprns.chunks(crate::bulk::CHUNK) {
        let part: Vec<(Option<i64>, Option<NaiveDate>)> = with_conn!(db, |c| {
            leases::table
                .filter(leases::uprn.eq_any(k))
                .filter(leases::term_end.is_not_null())
                .select((leases::uprn, leases::term_end))
                .load(c)
                .await?
        });
        out.extend(part.into_iter().filter_map(|(u, e)| Some((u?, e?))));
    }
    Ok(out)
}

/// The listings matched to `uprns` (every channel), by listing id.
pub async fn listings_of_uprns(
    db: &Db,
    uprns: &[i64],
) -> StoreResult<Vec<crate::listings::ListingRow>> {
    let mut out = Vec::new();
    for k in uprns.chunks(crate::bulk::CHUNK) {
        let part: Vec<crate::listings::ListingRow> = with_conn!(db, |c| {
            listings::table
                .filter(listings::uprn.eq_any(k))
                .select(crate::listings::ListingRow::as_select())
                .load(c)
                .await?
        });
        out.extend(part);
    }
    out.sort_by(|a, b| a.listing_id.cmp(&b.listing_id));
    Ok(out)
}

/// The price events of `listing_ids`: (listing id, event type, price, previous price).
pub async fn price_events_of(
    db: &Db,
    listing_ids: &[String],
) -> StoreResult<Vec<(String, String, Option<i64>, Option<i64>)>> {
    let mut out = Vec::new();
    for k in listing_ids.chunks(crate::bulk::CHUNK) {
        let part: Vec<(String, String, Option<i64>, Option<i64>)> = with_conn!(db, |c| {
            listing_events::table
                .filter(listing_events::listing_id.eq_any(k))
                .order((listing_events::listing_id, listing_events::id))
                .select((
                    listing_events::listing_id,
                    listing_events::event_type,
                    listing_events::price,
                    listing_events::previous_price,
                ))
                .load(c)
                .await?
        });
        out.extend(part);
    }
    Ok(out)
}

/// The auction lots matched to `uprns`.
pub async fn lots_of_uprns(db: &Db, uprns: &[i64]) -> StoreResult<Vec<crate::auctions::LotRow>> {
    let mut out = Vec::new();
    for k in uprns.chunks(crate::bulk::CHUNK) {
        let part: Vec<crate::auctions::LotRow> = with_conn!(db, |c| {
            auction_lots::table
                .filter(auction_lots::uprn.eq_any(k))
                .select(crate::auctions::LotRow::as_select())
                .load(c)
                .await?
        });
        out.extend(part);
    }
    out.sort_by(|a, b| a.lot_key.cmp(&b.lot_key));
    Ok(out)
}

/// Where a search looks.
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureScope {
    Lad(String),
    District(String),
    /// BNG metres: min x, min y, max x, max y.
    Bbox(f64, f64, f64, f64),
}

/// The coarse conditions a strategy pushes into the scan (the exact rule is the sourcing
/// crate's, applied to the rows returned).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeatureFilter {
    pub owner_company: bool,
    pub owner_since_by: Option<NaiveDate>,
    pub lease_years_max: Option<f64>,
    pub lease_years_min: Option<f64>,
    pub epc_bands: Option<Vec<String>>,
    pub auction_unsold_min: Option<i32>,
    pub building_commercial_min: Option<i32>,
    pub building_residential_min: Option<i32>,
    pub rent_and_value: bool,
    pub reductions_min: Option<i32>,
    pub on_market: bool,
    pub listed_by: Option<NaiveDate>,
}

/// A boxed `sourcing_features` query kept to a scope's rows.
macro_rules! in_scope {
    ($q:expr, $scope:expr) => {
        match $scope {
            FeatureScope::Lad(l) => $q.filter(sourcing_features::lad_code.eq(l.clone())),
            FeatureScope::District(d) => $q.filter(sourcing_features::district.eq(d.clone())),
            FeatureScope::Bbox(x0, y0, x1, y1) => $q
                .filter(sourcing_features::x.ge(*x0))
                .filter(sourcing_features::x.le(*x1))
                .filter(sourcing_features::y.ge(*y0))
                .filter(sourcing_features::y.le(*y1)),
        }
    };
}

/// The features of a scope passing the filter's coarse conditions, by UPRN.
pub async fn features_in(
    db: &Db,
    scope: &FeatureScope,
    f: &FeatureFilter,
) -> StoreResult<Vec<FeatureRow>> {
    use sourcing_features as sf;
    Ok(with_conn!(db, |c| {
        let mut q = sf::table.select(FeatureRow::as_select()).into_boxed();
        q = in_scope!(q, scope);
        if f.owner_company {
            q = q.filter(sf::owner_register.is_not_null());
        }
        if let Some(d) = f.owner_since_by {
            q = q.filter(sf::owner_since.le(d));
        }
        if let Some(v) = f.lease_years_max {
            q = q.filter(sf::lease_years.le(v));
        }
        if let Some(v) = f.lease_years_min {
            q = q.filter(sf::lease_years.ge(v));
        }
        if let Some(b) = &f.epc_bands {
            q = q.filter(sf::epc_band.eq_any(b.clone()));
        }
        if let Some(n) = f.auction_unsold_min {
            q = q.filter(sf::auction_unsold.ge(n));
        }
        if let Some(n) = f.building_commercial_min {
            q = q.filter(sf::building_commercial.ge(n));
        }
        if let Some(n) = f.building_residential_min {
            q = q.filter(sf::building_residential.ge(n));
        }
        if f.rent_and_value {
            q = q
                .filter(sf::rent_pcm.is_not_null())
                .filter(sf::value.is_not_null());
        }
        if let Some(n) = f.reductions_min {
            q = q.filter(sf::reductions.ge(n));
        }
        if f.on_market {
            q = q.filter(sf::asking_price.is_not_null());
        }
        if let Some(d) = f.listed_by {
            q = q.filter(sf::listed_on.le(d));
        }
        q.order(sf::uprn).load(c).await?
    }))
}

/// The features of an area held by companies (a linked company or overseas freehold title).
pub async fn company_held_in(db: &Db, scope: &FeatureScope) -> StoreResult<Vec<FeatureRow>> {
    features_in(
        db,
        scope,
        &FeatureFilter {
            owner_company: true,
            ..FeatureFilter::default()
        },
    )
    .await
}

/// How many units of a scope have features, and how many of them have a linked company or
/// overseas company title.
pub async fn scope_counts(db: &Db, scope: &FeatureScope) -> StoreResult<(i64, i64)> {
    use sourcing_features as sf;
    let mut out = (0, 0);
    for owned in [false, true] {
        let n: i64 = with_conn!(db, |c| {
            let mut q = sf::table.count().into_boxed();
            q = in_scope!(q, scope);
            if owned {
                q = q.filter(sf::owner_register.is_not_null());
            }
            q.get_result(c).await?
        });
        if owned {
            out.1 = n;
        } else {
            out.0 = n;
        }
    }
    Ok(out)
}

/// A parcel of a search: its plot figures and a WGS84 point inside it.
#[derive(Debug, Clone, PartialEq)]
pub struct ParcelHit {
    pub stats: crate::land::ParcelStatsRow,
    pub lat: Option<f64>,
    pub lon: Option<f64>,
}

/// What a search filters and ranks a parcel on; the page's parcels are then read whole
/// ([`parcels_by_ids`]). `point` (WGS84 latitude, longitude) is read only for a box scope, whose
/// circle needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ParcelCandidate {
    pub inspire_id: i64,
    pub area_m2: f64,
    pub built_coverage: Option<f64>,
    pub landuse_tier_a: Option<String>,
    pub landuse_tier_b: Option<String>,
    pub point: Option<(f64, f64)>,
}

type CandidateCols = (i64, f64, Option<f64>, Option<String>, Option<String>);

/// Every parcel of a scope, by INSPIRE id: the few columns a search filters and ranks on, so
/// that a scan of an authority's 200,000 parcels reads no more (a search applies its floor and
/// ceiling itself, so that one read serves every search of the scope). A district's parcels are
/// those holding one of its units.
pub async fn parcel_candidates(db: &Db, scope: &FeatureScope) -> StoreResult<Vec<ParcelCandidate>> {
    use crate::schema::{land_parcels as lp, parcel_stats as ps};
    let cols = (
        ps::inspire_id,
        ps::area_m2,
        ps::built_coverage,
        ps::landuse_tier_a,
        ps::landuse_tier_b,
    );
    let of =
        |(inspire_id, area_m2, built_coverage, landuse_tier_a, landuse_tier_b): CandidateCols,
         point: Option<(f64, f64)>| ParcelCandidate {
            inspire_id,
            area_m2,
            built_coverage,
            landuse_tier_a,
            landuse_tier_b,
            point,
        };
    let mut out = Vec::new();
    match scope {
        FeatureScope::Bbox(x0, y0, x1, y1) => {
            let (x0, y0, x1, y1) = (*x0, *y0, *x1, *y1);
            let rows: Vec<(CandidateCols, Option<f64>, Option<f64>)> = with_conn!(db, |c| {
                ps::table
                    .inner_join(lp::table.on(lp::inspire_id.eq(ps::inspire_id)))
                    .filter(lp::max_x.ge(x0))
                    .filter(lp::min_x.le(x1))
                    .filter(lp::max_y.ge(y0))
                    .filter(lp::min_y.le(y1))
                    .select((cols, lp::lat, lp::lon))
                    .order(ps::inspire_id)
                    .load(c)
                    .await?
            });
            out.extend(rows.into_iter().map(|(r, lat, lon)| of(r, lat.zip(lon))));
        }
        FeatureScope::Lad(_) | FeatureScope::District(_) => {
            // An authority's parcels by its code; a district's by the parcels of its units.
            let chunks: Vec<Option<Vec<i64>>> = match scope {
                FeatureScope::District(d) => {
                    let d = d.clone();
                    let v: Vec<Option<i64>> = with_conn!(db, |c| {
                        sourcing_features::table
                            .filter(sourcing_features::district.eq(d.clone()))
                            .filter(sourcing_features::parcel_id.is_not_null())
                            .select(sourcing_features::parcel_id)
                            .distinct()
                            .load(c)
                            .await?
                    });
                    let ids: Vec<i64> = v.into_iter().flatten().collect();
                    ids.chunks(crate::bulk::CHUNK)
                        .map(|k| Some(k.to_vec()))
                        .collect()
                }
                FeatureScope::Lad(_) | FeatureScope::Bbox(..) => vec![None],
            };
            for chunk in chunks {
                let rows: Vec<CandidateCols> = with_conn!(db, |c| {
                    let q = ps::table.select(cols).into_boxed();
                    let q = match (&chunk, scope) {
                        (Some(ids), _) => q.filter(ps::inspire_id.eq_any(ids.clone())),
                        (None, FeatureScope::Lad(l)) => q.filter(ps::lad_code.eq(l.clone())),
                        (None, FeatureScope::District(_) | FeatureScope::Bbox(..)) => {
                            q.filter(ps::inspire_id.eq(-1))
                        }
                    };
                    q.order(ps::inspire_id).load(c).await?
                });
                out.extend(rows.into_iter().map(|r| of(r, None)));
            }
            out.sort_by_key(|h| h.inspire_id);
        }
    }
    Ok(out)
}

/// The parcels of these INSPIRE ids, whole, with a WGS84 point inside each, by INSPIRE id.
pub async fn parcels_by_ids(db: &Db, ids: &[i64]) -> StoreResult<Vec<ParcelHit>> {
    use crate::schema::{land_parcels as lp, parcel_stats as ps};
    let mut out = Vec::new();
    for k in ids.chunks(crate::bulk::CHUNK) {
        let k = k.to_vec();
        let rows: Vec<(crate::land::ParcelStatsRow, Option<f64>, Option<f64>)> =
            with_conn!(db, |c| {
                ps::table
                    .inner_join(lp::table.on(lp::inspire_id.eq(ps::inspire_id)))
                    .filter(ps::inspire_id.eq_any(k.clone()))
                    .select((crate::land::ParcelStatsRow::as_select(), lp::lat, lp::lon))
                    .load(c)
                    .await?
            });
        out.extend(
            rows.into_iter()
                .map(|(stats, lat, lon)| ParcelHit { stats, lat, lon }),
        );
    }
    out.sort_by_key(|h| h.stats.inspire_id);
    Ok(out)
}

/// The decision date and decision of every planning application naming one of `authorities`
/// (a GSS code or an organisation id), for an authority's decision record.
pub async fn decisions_of(
    db: &Db,
    authorities: &[String],
) -> StoreResult<Vec<(Option<NaiveDate>, Option<String>)>> {
    use crate::schema::planning_applications as pa;
    Ok(with_conn!(db, |c| {
        pa::table
            .filter(pa::authority.eq_any(authorities))
            .select((pa::decision_date, pa::decision))
            .load(c)
            .await?
    }))
}
