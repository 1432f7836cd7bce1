//! Same-building comparables, with missing attributes backfilled from sibling records.

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};
use terrace_core::Uprn;
use terrace_store::Db;
use terrace_store::{
    address::{self, AddressRow},
    epc, sales,
};

use crate::PropertyError;

/// An attribute of a unit: measured for the unit itself, or backfilled from a sibling.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Attr {
    pub value: Value,
    pub source: String,
    /// The sibling UPRN the value was copied from; absent when it is the unit's own record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backfilled_from: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LastSale {
    pub price: i64,
    pub date: NaiveDate,
    pub transaction_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CompUnit {
    pub uprn: i64,
    pub address: Option<String>,
    pub floor_area_m2: Option<Attr>,
    pub habitable_rooms: Option<Attr>,
    pub property_type: Option<Attr>,
    pub energy_rating: Option<Attr>,
    pub last_sale: Option<LastSale>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Comps {
    pub uprn: i64,
    pub country: &'static str,
    /// The building the comparables share (the subject's parent); null when it has none.
    pub building_uprn: Option<i64>,
    pub subject: CompUnit,
    /// The other units of the building, in UPRN order.
    pub comparables: Vec<CompUnit>,
    pub max_backfills: u32,
    /// How many missing attributes were filled from siblings (at most `max_backfills`).
    pub backfills_used: u32,
    pub notes: Vec<&'static str>,
}

fn line(a: &AddressRow) -> Option<String> {
    crate::record::address_line(a)
}

async fn unit(db: &Db, a: &AddressRow) -> Result<CompUnit, PropertyError> {
    let certs = epc::epc_for_uprn(db, a.uprn).await?;
    let sale = sales::sales_for_uprn(db, a.uprn, 1)
        .await?
        .into_iter()
        .next();
    let own = |v: Option<Value>, src: &str| {
        v.map(|value| Attr {
            value,
            source: src.to_string(),
            backfilled_from: None,
        })
    };
    let c = certs.first();
    let src = c.map(|c| c.source.clone()).unwrap_or_default();
    Ok(CompUnit {
        uprn: a.uprn,
        address: line(a),
        floor_area_m2: own(c.and_then(|c| c.total_floor_area).map(|v| json!(v)), &src),
        habitable_rooms: own(c.and_then(|c| c.habitable_rooms).map(|v| json!(v)), &src),
        property_type: own(
            c.and_then(|c| c.property_type.clone()).map(|v| json!(v)),
            &src,
        ),
        energy_rating: own(
            c.and_then(|c| c.current_rating.clone()).map(|v| json!(v)),
            &src,
        ),
        last_sale: sale.map(|s| LastSale {
            price: s.price,
            date: s.date,
            transaction_id: s.transaction_id,
        }),
    })
}

/// The number in a SAON ("FLAT 12" -> 12), to find the nearest sibling.
fn unit_number(a: &AddressRow) -> Option<i64> {
    a.saon
        .as_deref()?
        .split(|c: char| !c.is_ascii_digit())
        .find(|p| !p.is_empty())?
        .parse()
        .ok()
}

/// Same-building comparables of a unit. Missing floor area, rooms and property type are filled
/// from the nearest sibling that has them (by flat number, then UPRN), at most `max_backfills`
/// values in all, the subject first; each filled value names its sibling. The energy rating is
/// never backfilled (it is a property of the unit itself).
pub async fn comps(db: &Db, uprn: Uprn, max_backfills: u32) -> Result<Comps, PropertyError> {
    let a = address::address(db, uprn.get())
        .await?
        .ok_or_else(|| PropertyError::NotFound(format!("UPRN {uprn}")))?;
    let building = a.parent_uprn;
    let siblings: Vec<AddressRow> = match building {
        Some(b) => address::children_of(db, b)
            .await?
            .into_iter()
            .filter(|s| s.uprn != a.uprn)
            .collect(),
        None => Vec::new(),
    };
    let mut subject = unit(db, &a).await?;
    let mut comparables = Vec::with_capacity(siblings.len());
    for s in &siblings {
        comparables.push(unit(db, s).await?);
    }
    let mut used = 0u32;
    // Donors in order of nearness to a unit: by flat number, then by UPRN.
    let all: Vec<(i64, Option<i64>)> = std::iter::once(&a)
        .chain(siblings.iter())
        .map(|r| (r.uprn, unit_number(r)))
        .collect();
    let nearness = |from: (i64, Option<i64>), to: (i64, Option<i64>)| match (from.1, to.1) {
        (Some(x), Some(y)) => ((x - y).abs(), (from.0 - to.0).abs()),
        _ => (i64::MAX, (from.0 - to.0).abs()),
    };
    let snapshot: Vec<CompUnit> = std::iter::once(subject.clone())
        .chain(comparables.iter().cloned())
        .collect();
    let fill = |target: &mut CompUnit, me: (i64, Option<i64>), used: &mut u32| {
        let mut donors: Vec<&CompUnit> =
            snapshot.iter().filter(|u| u.uprn != target.uprn).collect();
        donors.sort_by_key(|d| {
            let them = all
                .iter()
                .find(|x| x.0 == d.uprn)
                .copied()
                .unwrap_or((d.uprn, None));
            nearness(me, them)
        });
        type Get = fn(&CompUnit) -> &Option<Attr>;
        type Set = fn(&mut CompUnit) -> &mut Option<Attr>;
        let slots: [(Get, Set); 3] = [
            (|u| &u.floor_area_m2, |u| &mut u.floor_area_m2),
            (|u| &u.habitable_rooms, |u| &mut u.habitable_rooms),
            (|u| &u.property_type, |u| &mut u.property_type),
        ];
        for (get, set) in slots {
            if *used >= max_backfills || get(target).is_some() {
                continue;
            }
            let found = donors.iter().find_map(|d| {
                get(d)
                    .as_ref()
                    .filter(|x| x.backfilled_from.is_none())
                    .map(|x| (d.uprn, x.clone()))
            });
            if let Some((from, attr)) = found {
                *set(target) = Some(Attr {
                    backfilled_from: Some(from),
                    ..attr
                });
                *used += 1;
            }
        }
    };
    let me = all[0];
    fill(&mut subject, me, &mut used);
    for (i, c) in comparables.iter_mut().enumerate() {
        fill(c, all[i + 1], &mut used);
    }
    Ok(Comps {
        uprn: uprn.get(),
        country: "UK",
        building_uprn: building,
        subject,
        comparables,
        max_backfills,
        backfills_used: used,
        notes: vec![
            "Comparables are the other units of the same building (same parent UPRN).",
            "A backfilled value is a sibling's recorded value, not a measurement of this unit; it names the sibling.",
            "Energy ratings are never backfilled.",
        ],
    })
}
