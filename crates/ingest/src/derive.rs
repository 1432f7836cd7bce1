//! The derived steps after loading: each address's local authority and LSOA, its
//! resolution-8 H3 cell, the UPRN links
//! the address matcher makes, the market tables and the valuation vintage. [`derive_all`] runs them all; it is called
//! by `cargo xtask build` and by the manifest loader (which the embedded default's first start
//! runs).

use crate::load::{IngestError, Progress};
use std::collections::HashMap;
use terrace_geo::PolygonIndex;
use terrace_matcher::{ResolveQuery, is_confident};
use terrace_store::{Db, planning, rating, titles};
use terrace_store::{
    address::{self, AddressRow},
    council_tax, meta, sales,
};

/// A derived step a later family adds: it runs after the UPRN links, before the market build.
pub type Step =
    for<'a> fn(
        &'a Db,
        &'a mut Progress,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<(), IngestError>> + Send + 'a>>;

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
];

/// Builds the asking-price and rent indices from the listing snapshots, the rent index checked
/// against the ONS private rents index (`terrace_listings::indices`).
pub async fn listing_indices(db: &Db, progress: &mut Progress) -> Result<(), IngestError> {
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
) -> Result<terrace_land::build::BuildReport, IngestError> {
    let mut say = |s: &str| progress.say_line(s);
    Ok(terrace_land::build::build(db, chrono::Utc::now().naive_utc(), &mut say).await?)
}

/// Matches listings that came without a UPRN to the register with the address matcher from their
/// address and postcode, keeping the score (`uprn_method` `address_matcher`); only confident
/// matches are linked.
pub async fn link_listings(db: &Db, progress: &mut Progress) -> Result<(), IngestError> {
    use terrace_store::listings;
    let first = listings::unmatched_listings(db, "", 1).await?;
    if first.is_empty() {
        return Ok(());
    }
    let index = terrace_address::build_index(db).await?;
    if index.is_empty() {
        return Ok(());
    }
    let (mut linked, mut unlinked) = (0usize, 0usize);
    let mut after = String::new();
    loop {
        let page = listings::unmatched_listings(db, &after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.listing_id.clone();
        let queries: Vec<(String, ResolveQuery)> = page
            .into_iter()
            .filter_map(|l| {
                let q = ResolveQuery {
                    address: Some(l.address?),
                    postcode: l.postcode,
                    ..ResolveQuery::default()
                };
                Some((l.listing_id, q))
            })
            .collect();
        let (matches, missed) = match_all(&index, queries);
        unlinked += missed;
        linked += listings::set_listing_matches(db, MATCHER, matches).await?;
    }
    progress.say_line(&format!(
        "[derive] listings linked to a UPRN: {linked}; left unlinked: {unlinked}"
    ));
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
) -> Result<AuctionLinks, IngestError> {
    use terrace_store::auctions;
    let mut out = AuctionLinks::default();
    if auctions::lot_count(db).await? == 0 {
        return Ok(out);
    }
    let index = terrace_address::build_index(db).await?;
    if !index.is_empty() {
        let mut after = String::new();
        loop {
            let page = auctions::unmatched_lots(db, &after, PAGE).await?;
            let Some(last) = page.last() else { break };
            after = last.lot_key.clone();
            let queries: Vec<(String, ResolveQuery)> = page
                .into_iter()
                .map(|l| {
                    let q = ResolveQuery {
                        address: Some(l.address),
                        postcode: l.postcode,
                        ..ResolveQuery::default()
                    };
                    (l.lot_key, q)
                })
                .collect();
            let (matches, _) = match_all(&index, queries);
            out.matched += auctions::set_lot_matches(db, MATCHER, matches).await?;
        }
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
pub async fn derive_all(db: &Db, progress: &mut Progress) -> Result<Derived, IngestError> {
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
    crate::catalogue::derive_catalogue(db, progress).await?;
    Ok(Derived { market, valuation })
}

async fn polygon_index(db: &Db, kind: &str) -> Result<PolygonIndex<String>, IngestError> {
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
pub async fn derive_areas(db: &Db, progress: &mut Progress) -> Result<usize, IngestError> {
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
pub async fn derive_h3(db: &Db, progress: &mut Progress) -> Result<usize, IngestError> {
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

/// How a row linked by the address matcher says it was matched.
pub const MATCHER: &str = "address_matcher";

/// The top candidate of a query when it is a confident match: (UPRN, score).
fn confident_match(index: &terrace_matcher::AddressIndex, q: &ResolveQuery) -> Option<(i64, f64)> {
    let found = index.resolve(q, 2);
    found
        .first()
        .filter(|_| is_confident(&found))
        .map(|top| (top.uprn, top.score))
}

/// Rows read per page by the link passes.
const PAGE: i64 = 5_000;

/// Runs the matcher over `(key, query)` pairs on every core (the index is read-only), keeping
/// the confident matches as `(key, UPRN, score)`. Returns the matches and how many missed.
fn match_all(
    index: &terrace_matcher::AddressIndex,
    queries: Vec<(String, ResolveQuery)>,
) -> (Vec<(String, i64, f64)>, usize) {
    let n = queries.len();
    let matches: Vec<(String, i64, f64)> = terrace_core::map_on_cores(&queries, |(key, q)| {
        confident_match(index, q).map(|(uprn, score)| (key.clone(), uprn, score))
    })
    .into_iter()
    .flatten()
    .collect();
    let missed = n - matches.len();
    (matches, missed)
}

/// Links what the address matcher can link, with one index build: Price Paid sales and council
/// tax entries.
pub async fn link_to_uprns(db: &Db, progress: &mut Progress) -> Result<(), IngestError> {
    let index = terrace_address::build_index(db).await?;
    if index.is_empty() {
        progress.say_line(
            "[derive] no address register loaded: sales, council tax entries, planning applications and rated properties are left unlinked",
        );
        return Ok(());
    }
    let linked = link_price_paid_with(db, &index, progress).await?.0
        + link_council_tax_with(db, &index, progress).await?.0
        + link_applications_with(db, &index, progress).await?.0
        + link_uarns_with(db, &index, progress).await?.0
        + link_titles_with(db, &index, progress).await?.0;
    if linked > 0 {
        meta::bump(db, meta::Key::DataVersion, "link").await?;
    }
    Ok(())
}

/// The property address of a CCOD/OCOD title without its bracketed postcode
/// (`1 EXAMPLE STREET, MIDDLESBROUGH (TS1 2AB)` is `1 EXAMPLE STREET, MIDDLESBROUGH`).
fn title_address(address: &str) -> String {
    match address.rfind('(') {
        Some(i) if address.trim_end().ends_with(')') => address[..i].trim().to_string(),
        Some(_) | None => address.trim().to_string(),
    }
}

/// Matches company-owned titles (CCOD/OCOD) with no UPRN to the register with the address
/// matcher from their property address and postcode, keeping the score; only confident matches
/// are linked, and a title with several addresses (Multiple Address Indicator `Y`) is never
/// linked to one UPRN. Returns (linked, left unlinked).
pub async fn link_titles_with(
    db: &Db,
    index: &terrace_matcher::AddressIndex,
    progress: &mut Progress,
) -> Result<(usize, usize), IngestError> {
    let (mut linked, mut unlinked) = (0usize, 0usize);
    let mut after = String::new();
    loop {
        let page = titles::unmatched_titles(db, &after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.title_number.clone();
        let n = page.len();
        let queries: Vec<(String, ResolveQuery)> = page
            .into_iter()
            .filter(|t| t.multiple_address != Some(true))
            .filter_map(|t| {
                let q = ResolveQuery {
                    address: Some(title_address(t.property_address.as_deref()?)),
                    postcode: t.postcode,
                    ..ResolveQuery::default()
                };
                Some((t.title_number, q))
            })
            .collect();
        unlinked += n - queries.len();
        let (matches, missed) = match_all(index, queries);
        unlinked += missed;
        linked += titles::set_title_matches(db, MATCHER, matches).await?;
    }
    progress.say_line(&format!(
        "[derive] company-owned titles linked to a UPRN: {linked}; left unlinked: {unlinked}"
    ));
    Ok((linked, unlinked))
}

/// Matches planning applications with no UPRN to the register with the address matcher from
/// their address text and postcode, keeping the score; only confident matches are linked.
/// Returns (linked, left unlinked).
pub async fn link_applications_with(
    db: &Db,
    index: &terrace_matcher::AddressIndex,
    progress: &mut Progress,
) -> Result<(usize, usize), IngestError> {
    let (mut linked, mut unlinked) = (0usize, 0usize);
    let mut after = String::new();
    loop {
        let page = planning::unmatched_applications(db, &after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.application_id.clone();
        let n = page.len();
        let queries: Vec<(String, ResolveQuery)> = page
            .into_iter()
            .filter_map(|a| {
                let q = ResolveQuery {
                    address: Some(a.address?),
                    postcode: a.postcode,
                    ..ResolveQuery::default()
                };
                Some((a.application_id, q))
            })
            .collect();
        // Applications without an address text are left unlinked without a query.
        unlinked += n - queries.len();
        let (matches, missed) = match_all(index, queries);
        unlinked += missed;
        linked += planning::set_application_matches(db, MATCHER, matches).await?;
    }
    progress.say_line(&format!(
        "[derive] planning applications linked to a UPRN: {linked}; left unlinked: {unlinked}"
    ));
    Ok((linked, unlinked))
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
) -> Result<(usize, usize), IngestError> {
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
            let q = ResolveQuery {
                address: Some(e.address.clone()),
                postcode: e.postcode.clone(),
                ..ResolveQuery::default()
            };
            match confident_match(index, &q) {
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

/// Matches council tax entries with no UPRN to the register with the address matcher from their
/// address text and postcode, keeping the score; only confident matches are linked.
/// Returns (linked, left unlinked).
pub async fn link_council_tax_with(
    db: &Db,
    index: &terrace_matcher::AddressIndex,
    progress: &mut Progress,
) -> Result<(usize, usize), IngestError> {
    let (mut linked, mut unlinked) = (0usize, 0usize);
    let mut after = String::new();
    loop {
        let page = council_tax::unmatched_council_tax(db, &after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.reference.clone();
        let queries: Vec<(String, ResolveQuery)> = page
            .into_iter()
            .map(|e| {
                let q = ResolveQuery {
                    address: Some(e.address),
                    postcode: e.postcode,
                    ..ResolveQuery::default()
                };
                (e.reference, q)
            })
            .collect();
        let (matches, missed) = match_all(index, queries);
        unlinked += missed;
        linked += council_tax::set_council_tax_matches(db, MATCHER, matches).await?;
    }
    progress.say_line(&format!(
        "[derive] council tax entries linked to a UPRN: {linked}; left unlinked: {unlinked}"
    ));
    Ok((linked, unlinked))
}

/// Matches Price Paid sales with no UPRN to the register with the address matcher, keeping the
/// score; only confident matches are linked. Returns (linked, left unlinked).
pub async fn link_price_paid(
    db: &Db,
    progress: &mut Progress,
) -> Result<(usize, usize), IngestError> {
    let index = terrace_address::build_index(db).await?;
    let (linked, unlinked) = link_price_paid_with(db, &index, progress).await?;
    if linked > 0 {
        meta::bump(db, meta::Key::DataVersion, "link-price-paid").await?;
    }
    Ok((linked, unlinked))
}

async fn link_price_paid_with(
    db: &Db,
    index: &terrace_matcher::AddressIndex,
    progress: &mut Progress,
) -> Result<(usize, usize), IngestError> {
    let (mut linked, mut unlinked) = (0usize, 0usize);
    let mut after = String::new();
    let started = std::time::Instant::now();
    loop {
        let page = sales::unmatched_price_paid(db, &after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.transaction_id.clone();
        let queries: Vec<(String, ResolveQuery)> = page
            .into_iter()
            .map(|s| {
                let q = ResolveQuery {
                    saon: s.saon,
                    paon: s.paon,
                    street: s.street,
                    locality: s.locality,
                    town: s.town,
                    postcode: s.postcode,
                    address: None,
                };
                (s.transaction_id, q)
            })
            .collect();
        let (matches, missed) = match_all(index, queries);
        unlinked += missed;
        linked += sales::set_price_paid_matches(db, MATCHER, matches).await?;
        let done = linked + unlinked;
        if done % (PAGE as usize * 20) == 0 {
            progress.say_line(&format!(
                "[derive] sales checked against the register: {done} ({:.0}/s)",
                done as f64 / started.elapsed().as_secs_f64().max(1e-3)
            ));
        }
    }
    progress.say_line(&format!(
        "[derive] sales linked to a UPRN: {linked}; left unlinked: {unlinked}"
    ));
    Ok((linked, unlinked))
}
