//! The listings family: what the listings feed says about a property and its market.
//!
//! `changes` reads the append-only listing change log after a caller-held cursor
//! (`changes_since`); `rental` is the rental estimate (the property's own live rental listing,
//! else the district's median asking rent for its bedroom band, with a gross yield); `lha` is the
//! Local Housing Allowance block (the housing-benefit cap of the broad rental market area);
//! `indices` builds, checks against the ONS private rents index, stores and serves the asking-price
//! and rent indices from the listing snapshots; `supply`, `demand`, `yields` and `facts` compute
//! the monthly supply statistics, supply and demand (live stock, flow, months of inventory), the
//! gross yields on two bases and the market facts at call time.
//!
//! Architecture Invariant: plain functions over the store, no HTTP or MCP types; an asking rent
//! is never presented as a market rent and the LHA is never presented as either: each block
//! names its basis, and a block without data is `not_available` with a reason, never a guess.
//! Errors are the store's shared `LookupError` (`NotFound`, `Store`).

pub mod changes;
pub mod demand;
pub mod facts;
pub mod indices;
pub mod lha;
pub mod market;
pub mod rental;
pub mod supply;
pub mod yields;

pub use changes::{ChangesPage, PageRequest, changes_since};
pub use lha::{HousingBenefitCap, housing_benefit_cap};
pub use rental::{RentalEstimate, rental_estimate};

use terrace_core::{AreaId, AreaKind};
use terrace_store::listings::ListingArea;

/// The listing area of an area id, for the kinds listings (and the values kept beside them) are
/// kept by: a postcode unit, sector or district (a prefix), or a local authority; `None` for
/// every other kind.
pub fn listing_area(id: &AreaId) -> Option<ListingArea> {
    match id.kind() {
        AreaKind::Unit | AreaKind::Sector | AreaKind::District => {
            Some(ListingArea::PostcodePrefix(id.code().to_string()))
        }
        AreaKind::Lad => Some(ListingArea::LocalAuthority(id.code().to_string())),
        AreaKind::Area
        | AreaKind::Lsoa
        | AreaKind::Msoa
        | AreaKind::Ward
        | AreaKind::County
        | AreaKind::Region
        | AreaKind::Country
        | AreaKind::Bua
        | AreaKind::Lpa
        | AreaKind::H3
        | AreaKind::Place => None,
    }
}
