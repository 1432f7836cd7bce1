//! The one address-linking step: rows that came without a UPRN (sales, council tax entries,
//! planning applications, company-owned titles, listings, auction lots, HMO licences) matched to the register
//! by the address matcher, keeping the score; only confident matches are linked, the rest stay
//! unlinked and are counted. Each kind of row says how it is paged, keyed, queried and written
//! ([`Matchable`]); [`link_unmatched`] does the rest.

use crate::BuildError;
use terrace_ingest::Progress;
use terrace_matcher::{AddressIndex, ResolveQuery, is_confident};
use terrace_store::{Db, StoreResult};
use terrace_store::{auctions, council_tax, listings, osm, planning, sales, titles};

/// How a row linked by the address matcher says it was matched.
pub const MATCHER: &str = "address_matcher";

/// Rows read per page by the link passes.
pub(crate) const PAGE: i64 = 5_000;

/// A kind of row the address matcher links to UPRNs.
pub trait Matchable {
    /// The stored row.
    type Row: Send + Sync;
    /// What the progress lines call these rows (`sales`, `council tax entries`).
    const WHAT: &'static str;
    /// Rows with no UPRN yet, in key order after `after`.
    fn unmatched(
        db: &Db,
        after: &str,
        limit: i64,
    ) -> impl Future<Output = StoreResult<Vec<Self::Row>>> + Send;
    /// Writes (key, UPRN, score) matches made by `method`; returns how many rows changed.
    fn set(
        db: &Db,
        method: &str,
        matches: Vec<(String, i64, f64)>,
    ) -> impl Future<Output = StoreResult<usize>> + Send;
    /// The row's key.
    fn key(row: &Self::Row) -> &str;
    /// The row's key and the matcher's query, or `None` for a row that cannot be asked (no
    /// address text): left unlinked without a query.
    fn query(row: Self::Row) -> Option<(String, ResolveQuery)>;
}

/// The top candidate of a query when it is a confident match: (UPRN, score).
pub(crate) fn confident_match(index: &AddressIndex, q: &ResolveQuery) -> Option<(i64, f64)> {
    let found = index.resolve(q, 2);
    found
        .first()
        .filter(|_| is_confident(&found))
        .map(|top| (top.uprn, top.score))
}

/// Runs the matcher over `(key, query)` pairs on every core (the index is read-only), keeping
/// the confident matches as `(key, UPRN, score)`. Returns the matches and how many missed.
fn match_all(
    index: &AddressIndex,
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

/// Links every unlinked row of `M` the matcher can link, page by page, with progress every 20
/// pages. Returns (linked, left unlinked). Running it again asks only the rows still unlinked.
pub async fn link_unmatched<M: Matchable>(
    db: &Db,
    index: &AddressIndex,
    progress: &mut Progress,
) -> Result<(usize, usize), BuildError> {
    let (mut linked, mut unlinked) = (0usize, 0usize);
    let mut after = String::new();
    let started = std::time::Instant::now();
    let mut pages = 0usize;
    loop {
        let page = M::unmatched(db, &after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = M::key(last).to_string();
        let n = page.len();
        let queries: Vec<(String, ResolveQuery)> = page.into_iter().filter_map(M::query).collect();
        unlinked += n - queries.len();
        let (matches, missed) = match_all(index, queries);
        unlinked += missed;
        linked += M::set(db, MATCHER, matches).await?;
        pages += 1;
        if pages.is_multiple_of(20) {
            let done = linked + unlinked;
            progress.say_line(&format!(
                "[derive] {} checked against the register: {done} ({:.0}/s)",
                M::WHAT,
                done as f64 / started.elapsed().as_secs_f64().max(1e-3)
            ));
        }
    }
    progress.say_line(&format!(
        "[derive] {} linked to a UPRN: {linked}; left unlinked: {unlinked}",
        M::WHAT
    ));
    Ok((linked, unlinked))
}

/// A query from free address text and a postcode.
fn text_query(address: String, postcode: Option<String>) -> ResolveQuery {
    ResolveQuery {
        address: Some(address),
        postcode,
        ..ResolveQuery::default()
    }
}

/// Price Paid sales, asked by their structured address.
pub struct Sales;

impl Matchable for Sales {
    type Row = sales::PricePaidRow;
    const WHAT: &'static str = "sales";
    fn unmatched(
        db: &Db,
        after: &str,
        limit: i64,
    ) -> impl Future<Output = StoreResult<Vec<Self::Row>>> + Send {
        sales::unmatched_price_paid(db, after, limit)
    }
    fn set(
        db: &Db,
        method: &str,
        m: Vec<(String, i64, f64)>,
    ) -> impl Future<Output = StoreResult<usize>> + Send {
        sales::set_price_paid_matches(db, method, m)
    }
    fn key(row: &Self::Row) -> &str {
        &row.transaction_id
    }
    fn query(s: Self::Row) -> Option<(String, ResolveQuery)> {
        let q = ResolveQuery {
            saon: s.saon,
            paon: s.paon,
            street: s.street,
            locality: s.locality,
            town: s.town,
            postcode: s.postcode,
            address: None,
        };
        Some((s.transaction_id, q))
    }
}

/// Council tax entries, asked by their address text and postcode.
pub struct CouncilTax;

impl Matchable for CouncilTax {
    type Row = council_tax::CouncilTaxRow;
    const WHAT: &'static str = "council tax entries";
    fn unmatched(
        db: &Db,
        after: &str,
        limit: i64,
    ) -> impl Future<Output = StoreResult<Vec<Self::Row>>> + Send {
        council_tax::unmatched_council_tax(db, after, limit)
    }
    fn set(
        db: &Db,
        method: &str,
        m: Vec<(String, i64, f64)>,
    ) -> impl Future<Output = StoreResult<usize>> + Send {
        council_tax::set_council_tax_matches(db, method, m)
    }
    fn key(row: &Self::Row) -> &str {
        &row.reference
    }
    fn query(e: Self::Row) -> Option<(String, ResolveQuery)> {
        Some((e.reference, text_query(e.address, e.postcode)))
    }
}

/// Planning applications, asked by their address text and postcode (none without a text).
pub struct Applications;

impl Matchable for Applications {
    type Row = planning::ApplicationRow;
    const WHAT: &'static str = "planning applications";
    fn unmatched(
        db: &Db,
        after: &str,
        limit: i64,
    ) -> impl Future<Output = StoreResult<Vec<Self::Row>>> + Send {
        planning::unmatched_applications(db, after, limit)
    }
    fn set(
        db: &Db,
        method: &str,
        m: Vec<(String, i64, f64)>,
    ) -> impl Future<Output = StoreResult<usize>> + Send {
        planning::set_application_matches(db, method, m)
    }
    fn key(row: &Self::Row) -> &str {
        &row.application_id
    }
    fn query(a: Self::Row) -> Option<(String, ResolveQuery)> {
        Some((a.application_id, text_query(a.address?, a.postcode)))
    }
}

/// The property address of a CCOD/OCOD title without its bracketed postcode
/// (`1 EXAMPLE STREET, MIDDLESBROUGH (TS1 2AB)` is `1 EXAMPLE STREET, MIDDLESBROUGH`).
fn title_address(address: &str) -> String {
    match address.rfind('(') {
        Some(i) if address.trim_end().ends_with(')') => address[..i].trim().to_string(),
        Some(_) | None => address.trim().to_string(),
    }
}

/// Company-owned titles (CCOD/OCOD), asked by their property address and postcode; a title with
/// several addresses (Multiple Address Indicator `Y`) is never linked to one UPRN.
pub struct Titles;

impl Matchable for Titles {
    type Row = titles::TitleRow;
    const WHAT: &'static str = "company-owned titles";
    fn unmatched(
        db: &Db,
        after: &str,
        limit: i64,
    ) -> impl Future<Output = StoreResult<Vec<Self::Row>>> + Send {
        titles::unmatched_titles(db, after, limit)
    }
    fn set(
        db: &Db,
        method: &str,
        m: Vec<(String, i64, f64)>,
    ) -> impl Future<Output = StoreResult<usize>> + Send {
        titles::set_title_matches(db, method, m)
    }
    fn key(row: &Self::Row) -> &str {
        &row.title_number
    }
    fn query(t: Self::Row) -> Option<(String, ResolveQuery)> {
        if t.multiple_address == Some(true) {
            return None;
        }
        let address = title_address(t.property_address.as_deref()?);
        Some((t.title_number, text_query(address, t.postcode)))
    }
}

/// Listings that came without a UPRN, asked by their address and postcode.
pub struct Listings;

impl Matchable for Listings {
    type Row = listings::ListingRow;
    const WHAT: &'static str = "listings";
    fn unmatched(
        db: &Db,
        after: &str,
        limit: i64,
    ) -> impl Future<Output = StoreResult<Vec<Self::Row>>> + Send {
        listings::unmatched_listings(db, after, limit)
    }
    fn set(
        db: &Db,
        method: &str,
        m: Vec<(String, i64, f64)>,
    ) -> impl Future<Output = StoreResult<usize>> + Send {
        listings::set_listing_matches(db, method, m)
    }
    fn key(row: &Self::Row) -> &str {
        &row.listing_id
    }
    fn query(l: Self::Row) -> Option<(String, ResolveQuery)> {
        Some((l.listing_id, text_query(l.address?, l.postcode)))
    }
}

/// Auction lots without a UPRN, asked by their address and postcode.
pub struct AuctionLots;

impl Matchable for AuctionLots {
    type Row = auctions::LotRow;
    const WHAT: &'static str = "auction lots";
    fn unmatched(
        db: &Db,
        after: &str,
        limit: i64,
    ) -> impl Future<Output = StoreResult<Vec<Self::Row>>> + Send {
        auctions::unmatched_lots(db, after, limit)
    }
    fn set(
        db: &Db,
        method: &str,
        m: Vec<(String, i64, f64)>,
    ) -> impl Future<Output = StoreResult<usize>> + Send {
        auctions::set_lot_matches(db, method, m)
    }
    fn key(row: &Self::Row) -> &str {
        &row.lot_key
    }
    fn query(l: Self::Row) -> Option<(String, ResolveQuery)> {
        Some((l.lot_key, text_query(l.address, l.postcode)))
    }
}

/// HMO licences without a UPRN, asked by their address and postcode.
pub struct HmoLicences;

impl Matchable for HmoLicences {
    type Row = osm::HmoLicenceRow;
    const WHAT: &'static str = "HMO licences";
    fn unmatched(
        db: &Db,
        after: &str,
        limit: i64,
    ) -> impl Future<Output = StoreResult<Vec<Self::Row>>> + Send {
        osm::unmatched_hmo(db, after, limit)
    }
    fn set(
        db: &Db,
        method: &str,
        m: Vec<(String, i64, f64)>,
    ) -> impl Future<Output = StoreResult<usize>> + Send {
        osm::set_hmo_matches(db, method, m)
    }
    fn key(row: &Self::Row) -> &str {
        &row.licence_key
    }
    fn query(l: Self::Row) -> Option<(String, ResolveQuery)> {
        Some((l.licence_key, text_query(l.address, l.postcode)))
    }
}

#[cfg(test)]
mod tests {
    use super::title_address;

    #[test]
    fn a_title_address_drops_its_bracketed_postcode() {
        assert_eq!(
            title_address("1 EXAMPLE STREET, MIDDLESBROUGH (TS1 2AB)"),
            "1 EXAMPLE STREET, MIDDLESBROUGH"
        );
        assert_eq!(title_address(" 2 High Street "), "2 High Street");
        assert_eq!(title_address("Unit (A) Park"), "Unit (A) Park");
    }
}
