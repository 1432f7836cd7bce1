//! HM Land Registry's company-owned titles: CCOD (UK companies) and OCOD (overseas companies),
//! full files and change-only updates, into `titles` and their proprietor slots, and each
//! title's (Date Proprietor Added, Price Paid) into `title_price_history`, which keeps what a
//! later snapshot overwrites (a snapshot loaded again adds nothing).

use crate::formats::Parsed;
use crate::formats::ccod_ocod::{self as format, ChangeKind, Register, TitleLine};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::collections::HashMap;
use std::path::Path;
use terrace_core::registers::{Proprietor, name_key};
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;
use terrace_store::titles::{self, PriceObservationRow, ProprietorRow, TitleRow};

stored!(
    TitleRow,
    String,
    |r| r.title_number.clone(),
    titles::titles_by_number,
    titles::replace_titles,
    titles::delete_titles
);

/// The CCOD or OCOD loader (which one is the register its files must be).
pub struct Titles(pub Register);

impl Load for Titles {
    type Row = TitleLine;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path, self.0)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        let register = self.0.as_str();
        let deleted: Vec<String> = rows
            .iter()
            .filter(|r| r.change == ChangeKind::Delete)
            .map(|r| r.title_number.clone())
            .collect();
        let observations: Vec<PriceObservationRow> = rows
            .iter()
            .filter(|r| r.change == ChangeKind::Put)
            .filter_map(|r| {
                let (date, price) = (r.date_added?, r.price_paid?);
                Some(PriceObservationRow {
                    obs_key: titles::price_observation_key(&r.title_number, date, price),
                    title_number: r.title_number.clone(),
                    register: register.to_string(),
                    date_added: date,
                    price_paid: price,
                    first_seen_month: r.file_month.clone(),
                    tenure: r.tenure.clone(),
                    proprietorship_category: r.proprietors.first().and_then(|p| p.category.clone()),
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            })
            .collect();
        if !observations.is_empty() {
            titles::record_price_observations(ctx.db, observations).await?;
        }
        let mut slots: HashMap<String, Vec<Proprietor>> = HashMap::new();
        let written = merge(
            ctx.db,
            rows,
            counts,
            |r| r.title_number.clone(),
            |r, prev: Option<&TitleRow>| {
                if r.change == ChangeKind::Delete {
                    return Change::Delete;
                }
                // A snapshot older than the one stored leaves the title as the newer one says
                // (counted unchanged; its price and date are kept in the history above), so
                // snapshots loaded in any order, or again, end in the newest.
                if let Some(p) = prev.filter(
                    |p| matches!((&r.file_month, &p.file_month), (Some(a), Some(b)) if a < b),
                ) {
                    return Change::Put(p.clone());
                }
                // An earlier address match stands while the address is unchanged.
                let same_addr = prev.is_some_and(|p| {
                    p.property_address == r.property_address && p.postcode == r.postcode
                });
                let (uprn, match_method, match_score) = match prev.filter(|_| same_addr) {
                    Some(p) => (p.uprn, p.match_method.clone(), p.match_score),
                    None => (None, None, None),
                };
                let proprietors_json =
                    serde_json::to_string(&r.proprietors).unwrap_or_else(|_| "[]".into());
                slots.insert(r.title_number.clone(), r.proprietors);
                Change::Put(TitleRow {
                    title_number: r.title_number,
                    register: register.to_string(),
                    tenure: r.tenure,
                    property_address: r.property_address,
                    district: r.district,
                    county: r.county,
                    region: r.region,
                    postcode: r.postcode,
                    multiple_address: r.multiple_address,
                    price_paid: r.price_paid,
                    date_added: r.date_added,
                    additional_proprietor: r.additional_proprietor,
                    proprietors_json,
                    file_month: r.file_month,
                    uprn,
                    match_method,
                    match_score,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        if !deleted.is_empty() {
            titles::replace_proprietors_of(ctx.db, deleted, Vec::new()).await?;
        }
        let mut rows = Vec::new();
        for t in &written.put {
            for (i, p) in slots.remove(t).unwrap_or_default().into_iter().enumerate() {
                let position = i32::try_from(i + 1).unwrap_or(i32::MAX);
                rows.push(ProprietorRow {
                    id: format!("{t}/{position}"),
                    title_number: t.clone(),
                    position,
                    name_key: name_key(&p.name),
                    name: p.name,
                    company_number: p.company_number,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                });
            }
        }
        if !written.put.is_empty() {
            titles::replace_proprietors_of(ctx.db, written.put, rows).await?;
        }
        Ok(false)
    }
}
