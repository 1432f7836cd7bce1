//! `GET /v1/buildings/stock-profile/{area_id}`: an area's building stock from the register, the
//! footprints and the energy certificates: unit counts by AddressBase class, the mixed-use share
//! of its addressed buildings, median footprint and height with their n, solar penetration where
//! certificates state it, and the HMO share where a register is loaded (none is). Methods in docs/METHODS.md ("Stock profile").
//!
//! Invariants: every share carries its count and denominator, or is `not_available` with the
//! reason and null figures, never 0 for "not known"; medians are medians (one tower does not
//! move them), with the number of buildings behind them.

use crate::{LandCtx, LandError, decimal, scope_of};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use terrace_core::AreaId;
use terrace_store::land::{self, StockUnit};

pub use terrace_core::FigureStatus;

/// The area's addresses by AddressBase class (first letter).
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct UnitCounts {
    /// Every address of the area, parent shells included.
    pub addresses: i64,
    /// Addresses that are units: every address but parent shells.
    pub units: i64,
    /// Class `R…`.
    pub residential: i64,
    /// Class `C…`.
    pub commercial: i64,
    /// Class `X…` (dual use: one address both residential and commercial).
    pub dual_use: i64,
    /// Any other class (land, objects of interest, military, other).
    pub other: i64,
    /// Units with no class (a position without an AddressBase record).
    pub unclassified: i64,
    /// Class `P…`: the building records whose units point to them (not units).
    pub parent_shells: i64,
}

/// The addressed buildings: units grouped by their parent UPRN (a unit with none is a building
/// of its own).
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct BuildingCounts {
    /// Buildings holding at least one of the area's units.
    pub addressed: i64,
    /// Of those, buildings holding two units or more.
    pub multi_unit: i64,
    /// Of those, buildings holding a residential, commercial or dual-use unit (the mixed-use
    /// share's denominator).
    pub with_residential_or_commercial: i64,
}

/// A share with its count and denominator.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Share {
    pub status: FigureStatus,
    /// Whole percentage (half up); null when not available.
    pub percent: Option<i64>,
    /// `count` over `denominator`, a decimal as text (4 places); null when not available.
    pub share: Option<String>,
    /// The numerator; null when not available.
    pub count: Option<i64>,
    /// The denominator; null when not available.
    pub denominator: Option<i64>,
    /// What is counted over what.
    pub basis: String,
    /// Why the share is not available.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Share {
    fn of(count: i64, denominator: i64, basis: &str, empty_reason: String) -> Share {
        if denominator <= 0 {
            return Share::not_available(basis, empty_reason);
        }
        Share {
            status: FigureStatus::Ok,
            percent: Some(whole_percent(count, denominator)),
            share: Some(decimal(count as f64 / denominator as f64, 4)),
            count: Some(count),
            denominator: Some(denominator),
            basis: basis.to_string(),
            reason: None,
        }
    }

    fn not_available(basis: &str, reason: String) -> Share {
        Share {
            status: FigureStatus::NotAvailable,
            percent: None,
            share: None,
            count: None,
            denominator: None,
            basis: basis.to_string(),
            reason: Some(reason),
        }
    }
}

/// A median with the number of values behind it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Median {
    pub status: FigureStatus,
    /// The median, a decimal as text (2 places); null when not available.
    pub value: Option<String>,
    /// The buildings the median is taken over (0 when not available).
    pub n: i64,
    /// What the median is taken over.
    pub basis: String,
    /// Why the median is not available.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Median {
    fn of(mut values: Vec<f64>, basis: &str, empty_reason: String) -> Median {
        values.retain(|v| v.is_finite());
        match median(&mut values) {
            Some(m) => Median {
                status: FigureStatus::Ok,
                value: Some(decimal(m, 2)),
                n: values.len() as i64,
                basis: basis.to_string(),
                reason: None,
            },
            None => Median {
                status: FigureStatus::NotAvailable,
                value: None,
                n: 0,
                basis: basis.to_string(),
                reason: Some(empty_reason),
            },
        }
    }
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StockProfile {
    pub area_id: AreaId,
    pub units: UnitCounts,
    pub buildings: BuildingCounts,
    /// Houses in multiple occupation over residential units: only where an HMO licence register
    /// is loaded (none is yet), else `not_available`.
    pub hmo_share: Share,
    /// Buildings holding both residential and commercial units (or a dual-use unit) over
    /// buildings holding either.
    pub mixed_use_share: Share,
    /// Median height of the area's building footprints that carry one.
    pub median_height_m: Median,
    /// Median footprint area of the area's buildings (OS Open Map Local, glasshouses left out).
    pub median_footprint_m2: Median,
    /// Addresses whose newest energy certificate reports photovoltaic panels (EPC
    /// `PHOTO_SUPPLY` above 0) over addresses whose newest certificate states it; `not_available`
    /// where none does.
    pub solar_penetration: Share,
}

/// `round(100 * count / denominator)`, halves up, in integers.
pub fn whole_percent(count: i64, denominator: i64) -> i64 {
    (200 * count + denominator) / (2 * denominator)
}

/// The median of `values` (the mean of the two middle values when their number is even).
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

/// What one address is, by its AddressBase class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Residential,
    Commercial,
    DualUse,
    ParentShell,
    Other,
    Unclassified,
}

pub fn kind(class: Option<&str>) -> Kind {
    match class.map(str::trim).and_then(|c| c.as_bytes().first()) {
        None => Kind::Unclassified,
        Some(b'R') => Kind::Residential,
        Some(b'C') => Kind::Commercial,
        Some(b'X') => Kind::DualUse,
        Some(b'P') => Kind::ParentShell,
        Some(_) => Kind::Other,
    }
}

/// The building a unit stands in: its parent UPRN, or itself when it has none.
pub(crate) fn building_of(uprn: i64, parent: Option<i64>) -> i64 {
    parent.unwrap_or(uprn)
}

/// The unit counts and the addressed buildings' counts, with the mixed-use numerator.
pub fn count_units(rows: &[StockUnit]) -> (UnitCounts, BuildingCounts, i64) {
    #[derive(Default)]
    struct Building {
        units: i64,
        residential: bool,
        commercial: bool,
        dual_use: bool,
    }
    let mut u = UnitCounts::default();
    let mut buildings: BTreeMap<i64, Building> = BTreeMap::new();
    for (uprn, parent, class) in rows {
        u.addresses += 1;
        let k = kind(class.as_deref());
        match k {
            Kind::ParentShell => {
                u.parent_shells += 1;
                continue;
            }
            Kind::Residential => u.residential += 1,
            Kind::Commercial => u.commercial += 1,
            Kind::DualUse => u.dual_use += 1,
            Kind::Other => u.other += 1,
            Kind::Unclassified => u.unclassified += 1,
        }
        u.units += 1;
        let b = buildings.entry(building_of(*uprn, *parent)).or_default();
        b.units += 1;
        b.residential |= k == Kind::Residential;
        b.commercial |= k == Kind::Commercial;
        b.dual_use |= k == Kind::DualUse;
    }
    let mut counts = BuildingCounts::default();
    let mut mixed = 0;
    for b in buildings.values() {
        counts.addressed += 1;
        if b.units >= 2 {
            counts.multi_unit += 1;
        }
        if b.residential || b.commercial || b.dual_use {
            counts.with_residential_or_commercial += 1;
        }
        if (b.residential && b.commercial) || b.dual_use {
            mixed += 1;
        }
    }
    (u, counts, mixed)
}

const HMO_BASIS: &str = "licensed houses in multiple occupation over residential units";
const MIXED_BASIS: &str = "addressed buildings holding both residential (R) and commercial (C) units, or a dual-use (X) unit, over addressed buildings holding any of these";
const HEIGHT_BASIS: &str = "building footprints in the area carrying a height (metres)";
const FOOTPRINT_BASIS: &str =
    "OS Open Map Local building footprints in the area, glasshouses left out (square metres)";
const SOLAR_BASIS: &str = "addresses whose newest energy certificate states a photovoltaic share of roof area (EPC PHOTO_SUPPLY) above 0, over addresses whose newest certificate states one";

/// The stock profile of a local authority or an LSOA.
pub async fn stock_profile(ctx: &LandCtx, area_id: AreaId) -> Result<StockProfile, LandError> {
    let scope = scope_of(&area_id).map_err(|v| LandError::Invalid(vec![v]))?;
    crate::require_loaded(ctx, &area_id).await?;
    let rows = land::scope_units(&ctx.db, &scope).await?;
    let (units, buildings, mixed) = count_units(&rows);
    drop(rows);
    let footprints = land::scope_footprints(&ctx.db, &scope).await?;
    let no_footprints = format!(
        "no OS Open Map Local building footprint is loaded in {area_id} (in an LSOA, on one of its INSPIRE parcels): the area's buildings are not measured"
    );
    let median_footprint_m2 = Median::of(
        footprints.iter().map(|(a, _)| *a).collect(),
        FOOTPRINT_BASIS,
        no_footprints.clone(),
    );
    let (pv_stated, with_pv) = land::scope_photo_supply(&ctx.db, &scope).await?;
    let heights: Vec<f64> = footprints.iter().filter_map(|(_, h)| *h).collect();
    let height_reason = if footprints.is_empty() {
        no_footprints
    } else {
        format!(
            "none of the {} building footprints loaded in {area_id} carries a height: OS Open Map Local publishes none, and no height source (LIDAR, OS Building Height Attribute) is loaded",
            footprints.len()
        )
    };
    Ok(StockProfile {
        hmo_share: Share::not_available(
            HMO_BASIS,
            "no HMO licence register is loaded: local authorities publish their registers each in its own format, and EPC property types do not identify HMOs".to_string(),
        ),
        mixed_use_share: Share::of(
            mixed,
            buildings.with_residential_or_commercial,
            MIXED_BASIS,
            format!("no residential, commercial or dual-use address is loaded in {area_id}"),
        ),
        median_height_m: Median::of(heights, HEIGHT_BASIS, height_reason),
        median_footprint_m2,
        solar_penetration: Share::of(
            with_pv,
            pv_stated,
            SOLAR_BASIS,
            format!(
                "no energy certificate of an address in {area_id} states PHOTO_SUPPLY (the EPC register is not loaded there, or its certificates leave it blank), and no other rooftop solar source is loaded: solar penetration is not known"
            ),
        ),
        area_id,
        units,
        buildings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_whole_percentages() {
        assert_eq!(median(&mut []), None);
        assert_eq!(median(&mut [3.0]), Some(3.0));
        assert_eq!(median(&mut [9.0, 1.0, 4.0]), Some(4.0));
        assert_eq!(median(&mut [1.0, 100.0, 2.0, 4.0]), Some(3.0));
        assert_eq!(whole_percent(1, 8), 13); // 12.5 rounds up
        assert_eq!(whole_percent(1, 3), 33);
        assert_eq!(whole_percent(2, 3), 67);
        assert_eq!(whole_percent(0, 5), 0);
        assert_eq!(whole_percent(5, 5), 100);
    }

    #[test]
    fn buildings_group_units_by_parent() {
        let rows: Vec<StockUnit> = vec![
            (1, None, Some("PP".into())),
            (2, Some(1), Some("RD06".into())),
            (3, Some(1), Some("CR08".into())),
            (4, None, Some("RD03".into())),
            (5, None, Some("X".into())),
            (6, None, None),
            (7, Some(9), Some("RD06".into())),
            (8, Some(9), Some("RD06".into())),
            (10, None, Some("LP".into())),
        ];
        let (u, b, mixed) = count_units(&rows);
        assert_eq!((u.addresses, u.units, u.parent_shells), (9, 8, 1), "{u:?}");
        assert_eq!(
            (
                u.residential,
                u.commercial,
                u.dual_use,
                u.other,
                u.unclassified
            ),
            (4, 1, 1, 1, 1)
        );
        // buildings: 1 (flat + shop), 4, 5, 6, 9 (two flats), 10
        assert_eq!((b.addressed, b.multi_unit), (6, 2));
        assert_eq!(b.with_residential_or_commercial, 4);
        assert_eq!(mixed, 2);
    }
}
