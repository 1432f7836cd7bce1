//! HM Land Registry Price Paid: sales, with their changes (C) and deletions (D).

use super::ppd_uprn::LOOKUP_METHOD;
use crate::formats::{Parsed, price_paid as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::collections::HashMap;
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;
use terrace_store::sales;
use terrace_store::sales::PricePaidRow;

stored!(
    PricePaidRow,
    String,
    |r| r.transaction_id.clone(),
    sales::price_paid_by_id,
    sales::replace_price_paid,
    sales::delete_price_paid
);

pub struct PricePaid;

impl Load for PricePaid {
    type Row = format::PricePaidRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        let keys: Vec<String> = rows.iter().map(|r| r.transaction_id.clone()).collect();
        let links: HashMap<String, i64> = sales::ppd_links_by_id(ctx.db, &keys)
            .await?
            .into_iter()
            .map(|l| (l.transaction_id, l.uprn))
            .collect();
        merge(
            ctx.db,
            rows,
            counts,
            |r| r.transaction_id.clone(),
            |r, prev: Option<&PricePaidRow>| {
                if r.record_status == "D" {
                    return Change::Delete;
                }
                // Keep an earlier UPRN match while the address it was made on is unchanged.
                let same_addr = prev.is_some_and(|p| {
                    p.postcode == r.postcode
                        && p.paon == r.paon
                        && p.saon == r.saon
                        && p.street == r.street
                });
                // HM Land Registry's own link wins over the address matcher.
                let (uprn, match_method, match_score) =
                    match (links.get(&r.transaction_id), prev.filter(|_| same_addr)) {
                        (Some(u), _) => (Some(*u), Some(LOOKUP_METHOD.to_string()), Some(1.0)),
                        (None, Some(p)) => (p.uprn, p.match_method.clone(), p.match_score),
                        (None, None) => (None, None, None),
                    };
                Change::Put(PricePaidRow {
                    transaction_id: r.transaction_id,
                    price: r.price,
                    date: r.date,
                    postcode: r.postcode,
                    property_type: r.property_type,
                    new_build: r.new_build,
                    tenure: r.tenure,
                    paon: r.paon,
                    saon: r.saon,
                    street: r.street,
                    locality: r.locality,
                    town: r.town,
                    district: r.district,
                    county: r.county,
                    ppd_category: r.ppd_category,
                    uprn,
                    match_method,
                    match_score,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
