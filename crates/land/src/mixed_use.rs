//! `POST /v1/buildings/mixed-use`: the buildings of an area holding both residential and
//! commercial units, each side counted with its evidence. Units are grouped into buildings as in
//! the stock profile (by parent UPRN; a unit with none is a building of its own; parent shells
//! are not units). A unit is residential when the address register classes it `R…` or `X…`
//! (dual use) or the council tax list holds it; commercial when the register classes it `C…` or
//! `X…` or the newest loaded rating list holds a hereditament linked to it. One unit can be
//! evidence for both sides (a dual-use address, or a shop with its flat on both lists).
//! Methods in docs/METHODS.md ("Mixed-use buildings").
//!
//! Invariants: a side's count is the units with evidence for it, each unit listed with what the
//! evidence is; a list with no unit of the area is `not_available` in `evidence_sources`, never
//! read as "no such units"; pages by the shared keyset cursor.

use crate::stock::{FigureStatus, Kind, building_of, kind};
use crate::{LandCtx, LandError, area_scope, require_loaded};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use terrace_core::AreaId;
use terrace_core::Violation;
use terrace_core::cursor::{CursorScope, Page};
use terrace_store::buildings::{self, UnitEvidenceRow};

/// What is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct MixedUseQuery {
    pub area_id: AreaId,
    /// Fewest residential units a building listed holds (at least 1).
    pub min_residential: i64,
    /// Fewest commercial units a building listed holds (at least 1).
    pub min_commercial: i64,
    pub limit: usize,
    /// The key of the last building of the previous page (decoded cursor).
    pub after: Option<Vec<String>>,
}

/// The filters a cursor is bound to (everything but `cursor` and `limit`).
#[derive(Serialize)]
struct CursorFilters<'a> {
    area_id: &'a str,
    min_residential: i64,
    min_commercial: i64,
}

/// The cursor scope of a query (its id and every filter but `cursor` and `limit`).
pub fn cursor_scope(area_id: &AreaId, min_residential: i64, min_commercial: i64) -> CursorScope {
    CursorScope::new(
        "buildings_mixed_use",
        &CursorFilters {
            area_id: &area_id.to_string(),
            min_residential,
            min_commercial,
        },
    )
}

/// A kind of evidence for a unit's use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// The address register's class (`R…`, `C…`, or `X…` dual use).
    AddressClass,
    /// A band on the council tax list (residential).
    CouncilTaxList,
    /// A hereditament on the newest loaded VOA rating list linked to the UPRN (commercial).
    RatingList,
}

/// The units with evidence for one side, by kind of evidence (a unit may have several).
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct Side {
    /// Units with any evidence for this side.
    pub units: i64,
    /// Of those, units the address register classes so.
    pub address_class: i64,
    /// Units on the council tax list (residential side; 0 on the commercial side).
    pub council_tax_list: i64,
    /// Units on the newest rating list (commercial side; 0 on the residential side).
    pub rating_list: i64,
}

/// One unit of a building and what it is evidence of.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Unit {
    pub uprn: i64,
    /// The address register's class as loaded.
    pub class: Option<String>,
    /// One line: secondary and primary addressable objects, street, town.
    pub address: Option<String>,
    pub postcode: Option<String>,
    /// The evidence that the unit is residential (empty: none).
    pub residential_evidence: Vec<Evidence>,
    /// The evidence that the unit is commercial (empty: none).
    pub commercial_evidence: Vec<Evidence>,
    /// Its council tax band, when the list holds it.
    pub council_tax_band: Option<String>,
    /// The hereditament's UARN on the newest rating list, when one is linked.
    pub rating_uarn: Option<i64>,
    /// That hereditament's description as the VOA writes it.
    pub rating_description: Option<String>,
}

/// One mixed-use building.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MixedUseBuilding {
    /// The parent UPRN the units share, or the one unit's own UPRN.
    pub building_uprn: i64,
    /// Whether `building_uprn` is a parent shell record of the area (class `P…`).
    pub parent_shell: bool,
    /// The shell's address, else the first unit's primary object, street and town.
    pub address: Option<String>,
    pub postcode: Option<String>,
    /// Units of the building (parent shells are not units).
    pub units: i64,
    pub residential: Side,
    pub commercial: Side,
    /// Every unit, in UPRN order, with its evidence.
    pub unit_list: Vec<Unit>,
}

/// Whether one source of evidence holds any unit of the area.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct EvidenceSource {
    pub evidence: Evidence,
    pub status: FigureStatus,
    /// Units of the area with this evidence (either side).
    pub units: i64,
    /// The rating list year read (the newest loaded), for the rating list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_year: Option<i32>,
    /// Why the source adds nothing here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MixedUseBuildings {
    pub area_id: AreaId,
    pub min_residential: i64,
    pub min_commercial: i64,
    /// The page, in ranking order.
    pub buildings: Vec<MixedUseBuilding>,
    /// Buildings on this page.
    pub count: usize,
    /// Buildings of the area passing the filters, over every page.
    pub total: i64,
    /// Addressed buildings of the area (holding at least one unit).
    pub buildings_in_area: i64,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    pub ranking: &'static str,
    pub basis: &'static str,
    /// What each source of evidence holds in the area.
    pub evidence_sources: Vec<EvidenceSource>,
}

pub const RANKING: &str =
    "Most units first (residential, commercial and other), then building UPRN ascending.";
pub const BASIS: &str = "Units grouped into buildings by parent UPRN (a unit without one is its own building; parent shells are not units). Residential: address class R or X, or a band on the council tax list. Commercial: address class C or X, or a hereditament on the newest loaded rating list linked to the UPRN. A building is listed when at least min_residential units are residential and at least min_commercial are commercial.";

fn line(parts: &[Option<&str>]) -> Option<String> {
    let kept: Vec<&str> = parts
        .iter()
        .flatten()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect();
    (!kept.is_empty()).then(|| kept.join(", "))
}

fn unit_of(r: &UnitEvidenceRow, k: Kind) -> Unit {
    let mut residential_evidence = Vec::new();
    let mut commercial_evidence = Vec::new();
    match k {
        Kind::Residential => residential_evidence.push(Evidence::AddressClass),
        Kind::Commercial => commercial_evidence.push(Evidence::AddressClass),
        Kind::DualUse => {
            residential_evidence.push(Evidence::AddressClass);
            commercial_evidence.push(Evidence::AddressClass);
        }
        Kind::ParentShell | Kind::Other | Kind::Unclassified => {}
    }
    if r.council_tax_band.is_some() {
        residential_evidence.push(Evidence::CouncilTaxList);
    }
    if r.rating_uarn.is_some() {
        commercial_evidence.push(Evidence::RatingList);
    }
    Unit {
        uprn: r.uprn,
        class: r.class.clone(),
        address: line(&[
            r.saon.as_deref(),
            r.paon.as_deref(),
            r.street.as_deref(),
            r.town.as_deref(),
        ]),
        postcode: r.postcode.clone(),
        residential_evidence,
        commercial_evidence,
        council_tax_band: r.council_tax_band.clone(),
        rating_uarn: r.rating_uarn,
        rating_description: r.rating_description.clone(),
    }
}

fn side(units: &[Unit], of: impl Fn(&Unit) -> &Vec<Evidence>) -> Side {
    let mut s = Side::default();
    for u in units {
        let e = of(u);
        s.units += i64::from(!e.is_empty());
        s.address_class += i64::from(e.contains(&Evidence::AddressClass));
        s.council_tax_list += i64::from(e.contains(&Evidence::CouncilTaxList));
        s.rating_list += i64::from(e.contains(&Evidence::RatingList));
    }
    s
}

/// Every building of the rows holding a unit, in building UPRN order, and the evidence sources.
pub fn group_buildings(rows: &[UnitEvidenceRow]) -> (Vec<MixedUseBuilding>, Vec<EvidenceSource>) {
    let mut shells: BTreeMap<i64, &UnitEvidenceRow> = BTreeMap::new();
    let mut units: BTreeMap<i64, Vec<Unit>> = BTreeMap::new();
    let (mut by_class, mut by_tax, mut by_rating) = (0, 0, 0);
    let mut list_year = None;
    for r in rows {
        let k = kind(r.class.as_deref());
        if k == Kind::ParentShell {
            shells.insert(r.uprn, r);
            continue;
        }
        let u = unit_of(r, k);
        by_class += i64::from(matches!(
            k,
            Kind::Residential | Kind::Commercial | Kind::DualUse
        ));
        by_tax += i64::from(r.council_tax_band.is_some());
        by_rating += i64::from(r.rating_uarn.is_some());
        list_year = list_year.max(r.rating_list_year);
        units
            .entry(building_of(r.uprn, r.parent_uprn))
            .or_default()
            .push(u);
    }
    let buildings = units
        .into_iter()
        .map(|(building_uprn, list)| {
            let shell = shells.get(&building_uprn);
            let first = list.first();
            let (address, postcode) = match (shell, first) {
                (Some(s), _) => (
                    line(&[
                        s.saon.as_deref(),
                        s.paon.as_deref(),
                        s.street.as_deref(),
                        s.town.as_deref(),
                    ]),
                    s.postcode.clone(),
                ),
                (None, Some(u)) if list.len() == 1 => (u.address.clone(), u.postcode.clone()),
                (None, _) => {
                    let r = rows.iter().find(|r| Some(r.uprn) == first.map(|u| u.uprn));
                    (
                        r.and_then(|r| {
                            line(&[r.paon.as_deref(), r.street.as_deref(), r.town.as_deref()])
                        }),
                        first.and_then(|u| u.postcode.clone()),
                    )
                }
            };
            MixedUseBuilding {
                building_uprn,
                parent_shell: shell.is_some(),
                address,
                postcode,
                units: list.len() as i64,
                residential: side(&list, |u| &u.residential_evidence),
                commercial: side(&list, |u| &u.commercial_evidence),
                unit_list: list,
            }
        })
        .collect();
    let source = |evidence, units: i64, year: Option<i32>, reason: &str| EvidenceSource {
        evidence,
        status: if units > 0 {
            FigureStatus::Ok
        } else {
            FigureStatus::NotAvailable
        },
        units,
        list_year: year,
        reason: (units == 0).then(|| reason.to_string()),
    };
    let sources = vec![
        source(
            Evidence::AddressClass,
            by_class,
            None,
            "no address of the area carries a residential, commercial or dual-use class: the address register's classes (AddressBase) are not loaded here",
        ),
        source(
            Evidence::CouncilTaxList,
            by_tax,
            None,
            "no address of the area is matched to the council tax list: the list is not loaded for its billing authority, or its entries are not matched to UPRNs",
        ),
        source(
            Evidence::RatingList,
            by_rating,
            list_year,
            "no address of the area is linked to a hereditament of the newest rating list loaded: the rating list or the UARN to UPRN links are not loaded here",
        ),
    ];
    (buildings, sources)
}

fn key_of(b: &MixedUseBuilding) -> Vec<String> {
    vec![b.units.to_string(), b.building_uprn.to_string()]
}

/// (units, building UPRN) of a cursor's key.
fn after_of(key: &[String]) -> Option<(i64, i64)> {
    match key {
        [n, u] => Some((n.parse().ok()?, u.parse().ok()?)),
        _ => None,
    }
}

/// The mixed-use buildings of an area.
pub async fn mixed_use(ctx: &LandCtx, q: MixedUseQuery) -> Result<MixedUseBuildings, LandError> {
    let scope = area_scope(&q.area_id).map_err(|v| LandError::Invalid(vec![v]))?;
    let after = match &q.after {
        None => None,
        Some(key) => Some(after_of(key).ok_or_else(|| {
            LandError::Invalid(vec![Violation::new(
                &["cursor"],
                "value_error",
                "Value error, cursor is not a key of this operation",
            )])
        })?),
    };
    require_loaded(ctx, &q.area_id).await?;
    let rows = buildings::scope_unit_evidence(&ctx.db, &scope).await?;
    let (all, evidence_sources) = group_buildings(&rows);
    drop(rows);
    let buildings_in_area = all.len() as i64;
    let mut kept: Vec<MixedUseBuilding> = all
        .into_iter()
        .filter(|b| {
            b.residential.units >= q.min_residential && b.commercial.units >= q.min_commercial
        })
        .collect();
    let total = kept.len() as i64;
    kept.sort_by(|a, b| {
        b.units
            .cmp(&a.units)
            .then(a.building_uprn.cmp(&b.building_uprn))
    });
    let page: Vec<MixedUseBuilding> = kept
        .into_iter()
        .filter(|b| match after {
            None => true,
            Some((n, u)) => b.units < n || (b.units == n && b.building_uprn > u),
        })
        .take(q.limit + 1)
        .collect();
    let cursor = cursor_scope(&q.area_id, q.min_residential, q.min_commercial);
    let page = Page::from_overfetch(page, q.limit, &cursor, key_of);
    Ok(MixedUseBuildings {
        area_id: q.area_id,
        min_residential: q.min_residential,
        min_commercial: q.min_commercial,
        count: page.data.len(),
        buildings: page.data,
        total,
        buildings_in_area,
        next_cursor: page.next_cursor,
        ranking: RANKING,
        basis: BASIS,
        evidence_sources,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(
        uprn: i64,
        parent: Option<i64>,
        class: &str,
        band: Option<&str>,
        uarn: Option<i64>,
    ) -> UnitEvidenceRow {
        UnitEvidenceRow {
            uprn,
            parent_uprn: parent,
            class: (!class.is_empty()).then(|| class.to_string()),
            saon: None,
            paon: Some(uprn.to_string()),
            street: Some("HIGH STREET".into()),
            town: Some("EXAMPLETON".into()),
            postcode: Some("XT1 1AA".into()),
            council_tax_band: band.map(str::to_string),
            rating_uarn: uarn,
            rating_description: uarn.map(|_| "SHOP AND PREMISES".to_string()),
            rating_list_year: uarn.map(|_| 2026),
        }
    }

    #[test]
    fn sides_count_units_with_evidence_from_each_source() {
        let rows = vec![
            row(1, None, "PP", None, None),
            row(2, Some(1), "RD06", Some("B"), None),
            row(3, Some(1), "RD06", None, None),
            row(4, Some(1), "CR08", None, Some(77)),
            // A house on the rating list too (a shop with a flat, one UPRN).
            row(5, None, "RD04", Some("C"), Some(78)),
            // An unclassified unit on the council tax list, under a classed shop.
            row(6, None, "CO01", None, None),
            row(7, Some(6), "", Some("A"), None),
            // A dual-use address.
            row(8, None, "X", None, None),
            row(9, None, "RD03", None, None),
        ];
        let (b, sources) = group_buildings(&rows);
        let ids: Vec<i64> = b.iter().map(|b| b.building_uprn).collect();
        assert_eq!(ids, vec![1, 5, 6, 8, 9]);
        let one = &b[0];
        assert!(one.parent_shell);
        assert_eq!(one.units, 3);
        assert_eq!(
            one.residential,
            Side {
                units: 2,
                address_class: 2,
                council_tax_list: 1,
                rating_list: 0
            }
        );
        assert_eq!(
            one.commercial,
            Side {
                units: 1,
                address_class: 1,
                council_tax_list: 0,
                rating_list: 1
            }
        );
        assert_eq!(
            one.unit_list[2].commercial_evidence,
            vec![Evidence::AddressClass, Evidence::RatingList]
        );
        assert_eq!((b[1].residential.units, b[1].commercial.units), (1, 1));
        assert_eq!(
            b[1].commercial.rating_list, 1,
            "the house's hereditament is commercial evidence"
        );
        assert_eq!((b[2].residential.units, b[2].commercial.units), (1, 1));
        assert_eq!(b[2].residential.council_tax_list, 1);
        assert_eq!((b[3].residential.units, b[3].commercial.units), (1, 1));
        assert_eq!((b[4].residential.units, b[4].commercial.units), (1, 0));
        assert_eq!(
            sources.iter().map(|s| s.units).collect::<Vec<_>>(),
            vec![7, 3, 2]
        );
        assert_eq!(sources[2].list_year, Some(2026));
    }

    #[test]
    fn a_source_holding_nothing_is_not_available() {
        let (_, sources) = group_buildings(&[row(9, None, "RD03", None, None)]);
        assert_eq!(sources[0].status, FigureStatus::Ok);
        for s in &sources[1..] {
            assert_eq!(s.status, FigureStatus::NotAvailable);
            assert_eq!(s.units, 0);
            assert!(s.reason.is_some());
        }
    }

    #[test]
    fn cursor_keys_read_back() {
        assert_eq!(after_of(&["4".into(), "10".into()]), Some((4, 10)));
        assert_eq!(after_of(&["x".into(), "10".into()]), None);
        assert_eq!(after_of(&["4".into()]), None);
    }
}
