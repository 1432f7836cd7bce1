//! The one mapping of an area id to the addresses it names, shared by every family that reads
//! addresses over an area (energy, buildings): [`AreaScope::of`] answers every kind the areas
//! family resolves whose addresses the store can name, and [`AreaScope::condition`] is its SQL
//! condition on `addresses a`.
//!
//! Invariant: one mapping; a family that answers fewer kinds narrows this one, never writes its
//! own.

use crate::db::Db;
use terrace_core::{AreaId, AreaKind};

/// The kinds [`AreaScope::of`] answers, in words, for the families' messages.
pub const AREA_KINDS: &str = "a local authority (lad:), an LSOA (lsoa:), an MSOA (msoa:), a ward (ward:), a county (county:), a region (region:), a country (country:), a postcode district (district:), sector (sector:) or unit (unit:), or an H3 resolution-8 cell (h3:)";

/// The addresses an area-wide read looks at: an area id's kind and code, as the areas family
/// resolves them. The postcode-directory kinds (MSOA, ward, county, region, country) go through
/// each address's postcode; postcode units, sectors and districts through its postcode text; an
/// H3 cell through the addresses' cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AreaScope {
    Lad(String),
    Lsoa(String),
    Msoa(String),
    Ward(String),
    County(String),
    Region(String),
    Country(String),
    /// A full postcode, canonical (`SW19 1AA`).
    Unit(String),
    /// A postcode sector (`SW19 1`).
    Sector(String),
    /// A postcode district (`SW19`).
    District(String),
    /// An H3 resolution-8 cell, as stored.
    H3(String),
}

impl AreaScope {
    /// The addresses an area id names; None for a postcode area, a built-up area, a planning
    /// authority and a place, which have no address list here.
    pub fn of(id: &AreaId) -> Option<AreaScope> {
        let code = id.code().to_string();
        match id.kind() {
            AreaKind::Lad => Some(AreaScope::Lad(code)),
            AreaKind::Lsoa => Some(AreaScope::Lsoa(code)),
            AreaKind::Msoa => Some(AreaScope::Msoa(code)),
            AreaKind::Ward => Some(AreaScope::Ward(code)),
            AreaKind::County => Some(AreaScope::County(code)),
            AreaKind::Region => Some(AreaScope::Region(code)),
            AreaKind::Country => Some(AreaScope::Country(code)),
            AreaKind::Unit => Some(AreaScope::Unit(code)),
            AreaKind::Sector => Some(AreaScope::Sector(code)),
            AreaKind::District => Some(AreaScope::District(code)),
            AreaKind::H3 => Some(AreaScope::H3(code)),
            AreaKind::Area | AreaKind::Bua | AreaKind::Lpa | AreaKind::Place => None,
        }
    }

    /// The condition on `addresses a` and the one value it binds.
    pub(crate) fn condition(&self, placeholder: &str) -> (String, String) {
        let via_postcodes = |col: &str, code: &str| {
            (
                format!(
                    "a.postcode IN (SELECT p.postcode FROM postcodes p WHERE p.{col} = {placeholder})"
                ),
                code.to_string(),
            )
        };
        match self {
            AreaScope::Lad(c) => (format!("a.lad_code = {placeholder}"), c.clone()),
            AreaScope::Lsoa(c) => (format!("a.lsoa_code = {placeholder}"), c.clone()),
            AreaScope::Msoa(c) => via_postcodes("msoa_code", c),
            AreaScope::Ward(c) => via_postcodes("ward_code", c),
            AreaScope::County(c) => via_postcodes("county_code", c),
            AreaScope::Region(c) => via_postcodes("region_code", c),
            AreaScope::Country(c) => via_postcodes("country_code", c),
            AreaScope::Unit(c) => (format!("a.postcode = {placeholder}"), c.clone()),
            // An inward code is a digit and two letters: the sector is followed by two
            // characters, the district by a space and three.
            AreaScope::Sector(c) => (format!("a.postcode LIKE {placeholder}"), format!("{c}__")),
            AreaScope::District(c) => {
                (format!("a.postcode LIKE {placeholder}"), format!("{c} ___"))
            }
            AreaScope::H3(c) => (
                format!("a.uprn IN (SELECT h.uprn FROM address_h3 h WHERE h.cell = {placeholder})"),
                c.clone(),
            ),
        }
    }
}

pub(crate) fn placeholder(db: &Db) -> &'static str {
    match db.backend() {
        crate::db::Backend::Sqlite => "?",
        crate::db::Backend::Postgres => "$1",
    }
}
