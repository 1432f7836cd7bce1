//! The derived steps after loading: each address's local authority and LSOA, its
//! resolution-8 H3 cell, the UPRN links the address matcher makes, the families' steps, the
//! market tables and the valuation vintage. [`derive_all`] runs them all; it is called by
//! `cargo xtask build` and by [`crate::load_and_build`] (which the embedded default's first
//! start runs).

use crate::BuildError;
use crate::link::{self, MATCHER, link_unmatched};
use std::collections::HashMap;
use terrace_geo::PolygonIndex;
use terrace_ingest::Progress;
use terrace_store::address::{self, AddressRow};
use terrace_store::{Db, meta, rating};

/// A derived step a later family adds: it runs after the UPRN links, before the market build.
pub type Step =
    for<'a> fn(
        &'a Db,
        &'a mut Progress,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<(), BuildError>> + Send + 'a>>;

/// The derived steps families add (one line each), in order.
pub const FAMILY_STEPS: &[(&str, Step)] = &[
    ("listing UPRN links", |db, p| Box::pin(link_listings(db, p))),
    ("auction lot links", |db, p| {
        Box::pin(async move { link_auction_lots(db, p).await.map(|_| ()) })
    }),
    ("listing indices", |db, p| Box::pin(listing_indices(db, p))),
    ("land links", |db, p| {
        Box::pin(async move { link_land(db, p).await.map(|_| ()) })
    }),
    ("address footprints", |db, p| {
        Box::pin(async move {
            Ok(terrace_land::footprints::link_addresses(
                db,
                chrono::Utc::now().naive_utc(),
                &mut |s| p.say_line(s),
            )
            .await
            .map(|_| ())?)
        })
    }),
    ("OSM building links", |db, p| {
        Box::pin(async move {
            terrace_land::osm::link(db, chrono::Utc::now().naive_utc(), &mut |s| p.say_line(s))
                .await?;
            Ok(())
        })
    }),
    ("building heights", |db, p| {
        Box::pin(async move {
            terrace_land::heights::build(db, &mut |s| p.say_line(s)).await?;
            Ok(())
        })
    }),
    ("commercial rent index", |db, p| {
        Box::pin(async move {
            let r =
                terrace_commercial::rent_index::build(db, chrono::Utc::now().naive_utc()).await?;
            p.say_line(&r.summary());
            Ok(())
        })
    }),
    ("commercial capital index", |db, p| {
        Box::pin(async move {
            let r = terrace_commercial::capital_index::build(db, chrono::Utc::now().naive_utc())
                .await?;
            p.say_line(&r.summary());
            Ok(())
        })
    }),
];

/// Builds the asking-price and rent indices from the listing snapshots, the rent index checked
/// against the ONS private rents index (`terrace_listings::indices`).
pub async fn listing_indices(db: &Db, progress: &mut Progress) -> Result<(), BuildError> {
    let now = chrono::Utc::now().naive_utc();
    for r in terrace_listings::indices::build(db, now).await? {
        progress.say_line(&r.summary());
    }
    Ok(())
}

/// The land build: buildings, addresses and company-owned titles to INSPIRE parcels, the plot
/// figures and the links' coverage per local authority (`terrace_land::build`).
pub async fn link_land(
    db: &Db,
    progress: &mut Progress,
) -> Result<terrace_land::build::BuildReport, BuildError> {
    let mut say = |s: &str| progress.say_line(s);
    Ok(terrace_land::build::build(db, chrono::Utc::now().naive_utc(), &mut say).await?)
}

/// Matches listings that came without a UPRN to the register with the address matcher from their
/// address and postcode, keeping the score (`uprn_method` `address_matcher`); only confident
/// matches are linked.
pub async fn link_listings(db: &Db, progress: &mut Progress) -> Result<(), BuildError> {
    use terrace_store::listings;
    let first = listings::unmatched_listings(db, "", 1).await?;
    if first.is_empty() {
        return Ok(());
    }
    let index = terrace_address::build_index(db).await?;
    if index.is_empty() {
        return Ok(());
    }
    let (linked, _) = link_unmatched::<link::Listings>(db, &index, progress).await?;
    if linked > 0 {
        meta::bump(db, meta::Key::DataVersion, "link-listings").await?;
    }
    Ok(())
}

/// What [`link_auction_lots`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AuctionLinks {
    /// Lots the address matcher linked to a UPRN in this run.
    pub matched: usize,
    /// Lots left without a UPRN (kept, and said so in every answer).
    pub unmatched: usize,
    /// Lots stored, and properties they are offers of (re-offers share one).
    pub lots: usize,
    pub properties: usize,
    /// Lots whose property key changed in this run.
    pub relinked: usize,
}

/// The auction lots' derived step: matches lots without a UPRN to the register with the address
/// matcher from their address and postcode (only confident matches, score kept; the rest stay
/// unmatched), then links the offers of one property across auctions: two lots are the same
/// property when they share a UPRN or their normalised address and postcode (so an unmatched
/// re-offer still joins its matched earlier offer). Each group's key is its smallest lot key.
/// Running it twice changes nothing.
pub async fn link_auction_lots(
    db: &Db,
    progress: &mut Progress,
) -> Result<AuctionLinks, BuildError> {
    use terrace_store::auctions;
    let mut out = AuctionLinks::default();
    if !auctions::any_lot(db).await? {
        return Ok(out);
    }
    let index = terrace_address::build_index(db).await?;
    if !index.is_empty() {
        out.matched = link_unmatched::<link::AuctionLots>(db, &index, progress)
            .await?
            .0;
    }
    // Re-offers: union the lots sharing a UPRN or an address key.
    let mut rows: Vec<auctions::LinkRow> = Vec::new();
    let mut after = String::new();
    loop {
        let page = auctions::link_rows(db, &after, 50_000).await?;
        let Some(last) = page.last() else { break };
        after = last.0.clone();
        rows.extend(page);
    }
    out.lots = rows.len();
    out.unmatched = rows.iter().filter(|r| r.1.is_none()).count();
    let mut parent: Vec<usize> = (0..rows.len()).collect();
    fn find(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    let mut by_uprn: HashMap<i64, usize> = HashMap::new();
    let mut by_addr: HashMap<&str, usize> = HashMap::new();
    for (i, r) in rows.iter().enumerate() {
        let join = |j: usize, p: &mut Vec<usize>| {
            let (a, b) = (find(p, i), find(p, j));
            // rows are in key order: the smaller index keeps the root, so the root is the
            // group's smallest lot key
            if a != b {
                let (lo, hi) = if a < b { (a, b) } else { (b, a) };
                p[hi] = lo;
            }
        };
        if let Some(u) = r.1 {
            match by_uprn.get(&u) {
                Some(&j) => join(j, &mut parent),
                None => {
                    by_uprn.insert(u, i);
                }
            }
        }
        match by_addr.get(r.2.as_str()) {
            Some(&j) => join(j, &mut parent),
            None => {
                by_addr.insert(r.2.as_str(), i);
            }
        }
    }
    let mut writes = Vec::new();
    let mut roots = std::collections::HashSet::new();
    for i in 0..rows.len() {
        let root = find(&mut parent, i);
        roots.insert(root);
        let key = &rows[root].0;
        if rows[i].3.as_deref() != Some(key.as_str()) {
            writes.push((rows[i].0.clone(), key.clone()));
        }
    }
    out.properties = roots.len();
    out.relinked = writes.len();
    for chunk in writes.chunks(5_000) {
        auctions::set_property_keys(db, chunk.to_vec()).await?;
    }
    progress.say_line(&format!(
        "[derive] auction lots: {} ({} properties); linked to a UPRN in this run: {}; left without a UPRN: {}; re-offer links changed: {}",
        out.lots, out.properties, out.matched, out.unmatched, out.relinked
    ));
    if out.matched + out.relinked > 0 {
        meta::bump(db, meta::Key::DataVersion, "link-auction-lots").await?;
    }
    Ok(out)
}

/// What [`derive_all`] did that its callers report.
#[derive(Debug)]
pub struct Derived {
    /// The market build's report (its national backtest is printed by `cargo xtask build`).
    pub market: terrace_market::build::BuildReport,
    /// The valuation vintage's report.
    pub valuation: terrace_valuation::build::BuildReport,
}

/// Runs every derived step, in order: areas, H3 cells, UPRN links, the families' steps, the
/// market build, then the catalogue (coverage register and market area directory, which read the
/// market tables).
pub async fn derive_all(db: &Db, progress: &mut Progress) -> Result<Derived, BuildError> {
    derive_areas(db, progress).await?;
    derive_h3(db, progress).await?;
    link_to_uprns(db, progress).await?;
    for (_name, step) in FAMILY_STEPS {
        step(db, progress).await?;
    }
    let market = terrace_market::build::build(db, chrono::Utc::now().naive_utc(), &mut |s| {
        progress.say_line(s)
    })
    .await?;
    // The valuation vintage reads the district indices the market build just wrote.
    let valuation = terrace_valuation::build::build(db, chrono::Utc::now().naive_utc(), &mut |s| {
        progress.say_line(s)
    })
    .await?;
    // The sourcing features read the vintage's values.
    terrace_sourcing::build::build(db, chrono::Utc::now().naive_utc(), &mut |s| {
        progress.say_line(s)
    })
    .await?;
    crate::catalogue::derive_catalogue(db, progress).await?;
    // The derived tables changed: answers kept in memory (`memo::Memo`) are dropped.
    meta::bump(db, meta::Key::DataVersion, "derive").await?;
    Ok(Derived { market, valuation })
}

async fn polygon_index(db: &Db, kind: &str) -> Result<PolygonIndex<String>, BuildError> {
    let mut items = Vec::new();
    for b in address::boundaries_of_kind(db, kind).await? {
        if let Ok(mp) = terrace_geo::multipolygon_from_wkb(&b.wkb) {
            items.push((mp, b.code));
        }
    }
    Ok(PolygonIndex::build(items))
}

/// Sets `lad_code` and `lsoa_code` of every address from the boundaries its point falls in, or,
/// without a point or a containing boundary, from its postcode in the postcode directory.
/// Returns how many addresses changed.
pub async fn derive_areas(db: &Db, progress: &mut Progress) -> Result<usize, BuildError> {
    let lads = polygon_index(db, "lad").await?;
    let lsoas = polygon_index(db, "lsoa").await?;
    let mut changed = 0usize;
    let mut after = 0i64;
    loop {
        let page = address::addresses_page(db, after, 10_000).await?;
        let Some(last) = page.last() else { break };
        after = last.uprn;
        let mut pcs: Vec<String> = page.iter().filter_map(|a| a.postcode.clone()).collect();
        pcs.sort();
        pcs.dedup();
        let by_pc: HashMap<String, address::PostcodeRow> = address::postcodes_by_key(db, &pcs)
            .await?
            .into_iter()
            .map(|p| (p.postcode.clone(), p))
            .collect();
        let mut writes: Vec<AddressRow> = Vec::new();
        for a in page {
            let point = a.x.zip(a.y);
            let from_poly = |idx: &PolygonIndex<String>| {
                point.and_then(|(x, y)| idx.containing((x, y)).first().map(|s| (*s).clone()))
            };
            let pc = a.postcode.as_ref().and_then(|p| by_pc.get(p));
            let lad = from_poly(&lads).or_else(|| pc.and_then(|p| p.lad_code.clone()));
            let lsoa = from_poly(&lsoas).or_else(|| pc.and_then(|p| p.lsoa_code.clone()));
            if lad != a.lad_code || lsoa != a.lsoa_code {
                writes.push(AddressRow {
                    lad_code: lad,
                    lsoa_code: lsoa,
                    ..a
                });
            }
        }
        changed += writes.len();
        address::replace_addresses(db, writes).await?;
    }
    if changed > 0 {
        meta::bump(db, meta::Key::AddressRegisterVersion, "areas").await?;
    }
    progress.say_line(&format!("[derive] areas set on {changed} addresses"));
    Ok(changed)
}

/// The provenance of the derived H3 cells: computed from the address's position with the `h3o`
/// crate (the H3 reference algorithm) at resolution 8.
pub const H3_SOURCE: &str = "derived:h3o_resolution_8";

/// The resolution-8 H3 cell of a WGS84 position, as 15 lower-case hex digits.
pub fn h3_cell(lat: f64, lon: f64) -> Option<String> {
    let ll = h3o::LatLng::new(lat, lon).ok()?;
    Some(ll.to_cell(h3o::Resolution::Eight).to_string())
}

/// Stores the resolution-8 H3 cell of every address with a position (`address_h3`), and drops
/// the cells of addresses that lost their position or left the register. Running it twice
/// changes nothing. Returns how many cells were written or removed.
pub async fn derive_h3(db: &Db, progress: &mut Progress) -> Result<usize, BuildError> {
    use terrace_store::areas::{self, AddressH3Row};
    let now = chrono::Utc::now().naive_utc();
    let mut changed = 0usize;
    let mut after = 0i64;
    loop {
        let page = address::addresses_page(db, after, 10_000).await?;
        let Some(last) = page.last() else { break };
        after = last.uprn;
        let uprns: Vec<i64> = page.iter().map(|a| a.uprn).collect();
        let stored: HashMap<i64, String> = areas::address_h3_by_uprn(db, &uprns)
            .await?
            .into_iter()
            .map(|r| (r.uprn, r.cell))
            .collect();
        let mut writes = Vec::new();
        let mut gone = Vec::new();
        for a in page {
            let position = match (a.lat, a.lon, a.x, a.y) {
                (Some(lat), Some(lon), _, _) => Some((lat, lon)),
                (_, _, Some(x), Some(y)) => {
                    terrace_geo::wgs84_from_bng(x, y).map(|(lon, lat)| (lat, lon))
                }
                _ => None,
            };
            let cell = position.and_then(|(lat, lon)| h3_cell(lat, lon));
            match (cell, stored.get(&a.uprn)) {
                (Some(c), Some(s)) if c == *s => {}
                (Some(cell), _) => writes.push(AddressH3Row {
                    uprn: a.uprn,
                    cell,
                    source: H3_SOURCE.to_string(),
                    updated_at: now,
                }),
                (None, Some(_)) => gone.push(a.uprn),
                (None, None) => {}
            }
        }
        changed += writes.len() + gone.len();
        areas::replace_address_h3(db, writes).await?;
        areas::delete_address_h3(db, &gone).await?;
    }
    // Cells of UPRNs no longer in the register.
    let mut after = 0i64;
    loop {
        let page = areas::h3_uprns_page(db, after, 10_000).await?;
        let Some(&last) = page.last() else { break };
        after = last;
        let present: std::collections::HashSet<i64> = address::addresses_by_uprn(db, &page)
            .await?
            .into_iter()
            .map(|a| a.uprn)
            .collect();
        let gone: Vec<i64> = page.into_iter().filter(|u| !present.contains(u)).collect();
        changed += gone.len();
        areas::delete_address_h3(db, &gone).await?;
    }
    if changed > 0 {
        meta::bump(db, meta::Key::AddressRegisterVersion, "h3").await?;
    }
    progress.say_line(&format!("[derive] H3 cells set on {changed} addresses"));
    Ok(changed)
}

/// Links what the address matcher can link, with one index build: Price Paid sales, council tax
/// entries, planning applications, rated properties, company titles and HMO licences.
pub async fn link_to_uprns(db: &Db, progress: &mut Progress) -> Result<(), BuildError> {
    let index = terrace_address::build_index(db).await?;
    if index.is_empty() {
        progress.say_line(
            "[derive] no address register loaded: sales, council tax entries, planning applications and rated properties are left unlinked",
        );
        return Ok(());
    }
    let linked = link_unmatched::<link::Sales>(db, &index, progress).await?.0
        + link_unmatched::<link::CouncilTax>(db, &index, progress)
            .await?
            .0
        + link_unmatched::<link::Applications>(db, &index, progress)
            .await?
            .0
        + link_uarns_with(db, &index, progress).await?.0
        + link_unmatched::<link::Titles>(db, &index, progress)
            .await?
            .0
        + link_unmatched::<link::HmoLicences>(db, &index, progress)
            .await?
            .0;
    if linked > 0 {
        meta::bump(db, meta::Key::DataVersion, "link").await?;
    }
    Ok(())
}

/// The provenance of a UARN link the address matcher made.
pub const MATCHER_SOURCE: &str = "terrace_address_matcher";

/// Links every UARN of the rating lists that no lookup links, with the address matcher on its
/// newest entry's address and postcode, keeping the score; only confident matches are linked.
/// Returns (linked, left unlinked).
pub async fn link_uarns_with(
    db: &Db,
    index: &terrace_matcher::AddressIndex,
    progress: &mut Progress,
) -> Result<(usize, usize), BuildError> {
    let (mut linked, mut unlinked) = (0usize, 0usize);
    let mut after = 0i64;
    let now = chrono::Utc::now().naive_utc();
    loop {
        let page = rating::unlinked_entries(db, after, 5_000).await?;
        let Some(last) = page.last() else { break };
        after = last.uarn;
        let mut writes = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        // newest list first within each UARN: the first entry seen is the newest
        for e in page {
            if !seen.insert(e.uarn) {
                continue;
            }
            let q = terrace_matcher::ResolveQuery {
                address: Some(e.address.clone()),
                postcode: e.postcode.clone(),
                ..terrace_matcher::ResolveQuery::default()
            };
            match link::confident_match(index, &q) {
                Some((uprn, score)) => {
                    writes.push(rating::UarnLinkRow {
                        uarn: e.uarn,
                        uprn,
                        match_method: MATCHER.to_string(),
                        match_score: Some(score),
                        source: MATCHER_SOURCE.to_string(),
                        updated_at: now,
                    });
                    linked += 1;
                }
                None => unlinked += 1,
            }
        }
        rating::replace_links(db, writes).await?;
    }
    progress.say_line(&format!(
        "[derive] rated properties (UARNs) linked to a UPRN by address: {linked}; left unlinked: {unlinked}"
    ));
    Ok((linked, unlinked))
}

/// Matches Price Paid sales with no UPRN to the register with the address matcher, keeping the
/// score; only confident matches are linked. Returns (linked, left unlinked).
pub async fn link_price_paid(
    db: &Db,
    progress: &mut Progress,
) -> Result<(usize, usize), BuildError> {
    let index = terrace_address::build_index(db).await?;
    let (linked, unlinked) = link_unmatched::<link::Sales>(db, &index, progress).await?;
    if linked > 0 {
        meta::bump(db, meta::Key::DataVersion, "link-price-paid").await?;
    }
    Ok((linked, unlinked))
}
