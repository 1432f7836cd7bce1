//! Registered owners of parcels (`POST /v1/sourcing/owners`): for each parcel id (as a sourcing
//! search returns it), the company, public body and overseas proprietors of the company-owned
//! titles linked to it (HM Land Registry's CCOD and OCOD), or `unresolved` with the reason.
//!
//! Individually owned titles are not in the bulk registers: a parcel with no linked company
//! title is unresolved, counted and never named (naming an individual needs a paid per-title
//! purchase this does not make). An unknown parcel id is a `not_found` item, not a failed batch.

use crate::parcel::{self, LinkedTitle, owner_key, parse_parcel_id};
use crate::{SourcingCtx, SourcingError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use terrace_core::Violation;
use terrace_ownership::titles::Register;
use terrace_store::land;

/// Parcel ids in one request at most.
pub const PARCELS_MAX: usize = 100;

/// What is owned: the land of the parcel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Asset {
    /// The proprietors of the company-owned titles linked to the parcel through the addresses
    /// standing on it (freehold and leasehold titles, each with its tenure).
    #[default]
    Land,
}

/// What the owners look-up is asked (the gateway's body, its limits checked there).
#[derive(Debug, Clone, PartialEq)]
pub struct OwnersQuery {
    /// Parcel ids as text (INSPIRE ids), 1 to 100, distinct.
    pub parcel_ids: Vec<String>,
    pub asset: Asset,
}

impl OwnersQuery {
    /// Every broken rule: the count, a malformed id, a repeated id (located in the body).
    pub fn violations(&self) -> Vec<Violation> {
        let mut v = Vec::new();
        if self.parcel_ids.is_empty() || self.parcel_ids.len() > PARCELS_MAX {
            v.push(
                Violation::new(
                    &["parcel_ids"],
                    if self.parcel_ids.is_empty() {
                        "too_short"
                    } else {
                        "too_long"
                    },
                    format!("give 1 to {PARCELS_MAX} parcel ids"),
                )
                .with_input(self.parcel_ids.len()),
            );
        }
        let mut seen = BTreeSet::new();
        for (i, p) in self.parcel_ids.iter().enumerate() {
            let at = i.to_string();
            match parse_parcel_id(p) {
                None => v.push(
                    Violation::new(
                        &["parcel_ids", at.as_str()],
                        "value_error",
                        "a parcel id is the parcel's INSPIRE id as text: 1 to 18 digits",
                    )
                    .with_input(p.as_str()),
                ),
                Some(id) => {
                    if !seen.insert(id) {
                        v.push(
                            Violation::new(
                                &["parcel_ids", at.as_str()],
                                "value_error",
                                "each parcel id once: this one is repeated",
                            )
                            .with_input(p.as_str()),
                        );
                    }
                }
            }
        }
        v
    }
}

/// One owner of a parcel.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Owner {
    /// As the register writes it.
    pub name: String,
    pub company_number: Option<String>,
    /// The register's proprietorship category (`Limited Company or Public Limited Company`,
    /// `Local Authority`, `Overseas Company`, ...).
    pub registration: Option<String>,
    /// Where an overseas proprietor was incorporated (OCOD).
    pub country_incorporated: Option<String>,
    /// The address for service, as registered.
    pub address: Vec<String>,
    /// The Companies House status where the number is in the loaded file.
    pub company_status: Option<String>,
    /// `ccod` or `ocod` for each of the titles below, in order.
    pub registers: Vec<Register>,
    pub title_numbers: Vec<String>,
    /// The tenure of each of those titles, in order (`Freehold`, `Leasehold`; null where the
    /// register gives none).
    pub tenures: Vec<Option<String>>,
}

/// The outcome of one parcel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OwnersStatus {
    /// Linked company-owned titles name the owners.
    Resolved,
    /// No company-owned title is linked (see `reason`): counted, not named.
    Unresolved,
    /// No loaded parcel has this id.
    NotFound,
}

/// One parcel's owners.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OwnersItem {
    /// As given.
    pub parcel_id: String,
    pub status: OwnersStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub owners: Vec<Owner>,
    /// True when a linked title has proprietors the bulk file does not show (private
    /// individuals or charities alongside the companies): they are not named.
    pub additional_proprietors_not_shown: bool,
}

/// The batch in figures.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OwnersSummary {
    pub parcels_asked: usize,
    pub resolved: usize,
    /// Parcels found with no company-owned title linked (individually owned, or not linked).
    pub unresolved: usize,
    pub not_found: usize,
    /// Distinct owners across the resolved parcels (by company number, else normalised name).
    pub distinct_owners: usize,
    /// `resolved / (resolved + unresolved)`, 3 places as text; null when no parcel was found.
    pub share_resolved: Option<String>,
}

/// The answer of the owners look-up.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OwnersAnswer {
    pub asset: Asset,
    /// In the order asked.
    pub items: Vec<OwnersItem>,
    pub summary: OwnersSummary,
    pub note: &'static str,
}

impl OwnersAnswer {
    /// The items charged: the resolved ones (an unresolved or not_found item says only why
    /// nothing is known, and is free).
    pub fn charged(&self) -> i64 {
        self.summary.resolved as i64
    }
}

const UNRESOLVED: &str = "no company-owned title is linked to this parcel: titles owned by private individuals are not in HM Land Registry's bulk registers (CCOD/OCOD), so they are counted here and never named (naming one needs a paid per-title purchase, which this does not make); a company title whose address did not match is not linked either";
const NOTE: &str = "Owners come from HM Land Registry's bulk registers of company-owned titles (CCOD for UK companies and public bodies, OCOD for overseas entities), linked to parcels through the addresses standing on them. Unresolved parcels are a gap in the free register, not a failed look-up.";

fn owners_of(titles: &[LinkedTitle]) -> Vec<Owner> {
    let mut by_key: BTreeMap<String, Owner> = BTreeMap::new();
    for t in titles {
        for p in &t.proprietors {
            let o = by_key
                .entry(owner_key(&p.proprietor))
                .or_insert_with(|| Owner {
                    name: p.proprietor.name.clone(),
                    company_number: p.proprietor.company_number.clone(),
                    registration: p.proprietor.category.clone(),
                    country_incorporated: p.proprietor.country_incorporated.clone(),
                    address: p.proprietor.address.clone(),
                    company_status: p.company.as_ref().and_then(|c| c.status.clone()),
                    registers: Vec::new(),
                    title_numbers: Vec::new(),
                    tenures: Vec::new(),
                });
            if !o.title_numbers.contains(&t.title_number) {
                o.registers.push(t.register);
                o.title_numbers.push(t.title_number.clone());
                o.tenures.push(t.tenure.clone());
            }
        }
    }
    by_key.into_values().collect()
}

/// `POST /v1/sourcing/owners`. The query's rules ([`OwnersQuery::violations`]) are checked first.
pub async fn owners(ctx: &SourcingCtx, body: &OwnersQuery) -> Result<OwnersAnswer, SourcingError> {
    let v = body.violations();
    if !v.is_empty() {
        return Err(SourcingError::Invalid(v));
    }
    let db = &ctx.db;
    let ids: Vec<i64> = body
        .parcel_ids
        .iter()
        .filter_map(|p| parse_parcel_id(p))
        .collect();
    let known: BTreeSet<i64> = land::parcels_by_id(db, &ids)
        .await?
        .into_iter()
        .map(|r| r.inspire_id)
        .collect();
    let present: Vec<i64> = known.iter().copied().collect();
    let mut titles = parcel::linked_titles(db, &present).await?;
    let mut items = Vec::with_capacity(body.parcel_ids.len());
    let mut distinct = BTreeSet::new();
    let (mut resolved, mut unresolved, mut not_found) = (0usize, 0usize, 0usize);
    for raw in &body.parcel_ids {
        let id = parse_parcel_id(raw).filter(|i| known.contains(i));
        let Some(id) = id else {
            not_found += 1;
            items.push(OwnersItem {
                parcel_id: raw.clone(),
                status: OwnersStatus::NotFound,
                reason: Some("no loaded INSPIRE index polygon has this id".into()),
                owners: Vec::new(),
                additional_proprietors_not_shown: false,
            });
            continue;
        };
        let t = titles.remove(&id).unwrap_or_default();
        if t.is_empty() {
            unresolved += 1;
            items.push(OwnersItem {
                parcel_id: raw.clone(),
                status: OwnersStatus::Unresolved,
                reason: Some(UNRESOLVED.into()),
                owners: Vec::new(),
                additional_proprietors_not_shown: false,
            });
            continue;
        }
        resolved += 1;
        distinct.extend(parcel::owner_keys(&t));
        items.push(OwnersItem {
            parcel_id: raw.clone(),
            status: OwnersStatus::Resolved,
            reason: None,
            additional_proprietors_not_shown: t
                .iter()
                .any(|x| x.additional_proprietor_indicator == Some(true)),
            owners: owners_of(&t),
        });
    }
    let found = resolved + unresolved;
    Ok(OwnersAnswer {
        asset: body.asset,
        items,
        summary: OwnersSummary {
            parcels_asked: body.parcel_ids.len(),
            resolved,
            unresolved,
            not_found,
            distinct_owners: distinct.len(),
            share_resolved: (found > 0).then(|| parcel::decimal(resolved as f64 / found as f64, 3)),
        },
        note: NOTE,
    })
}
