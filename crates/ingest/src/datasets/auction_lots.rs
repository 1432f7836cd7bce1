//! The operator's auction lot feed (OF-S): lots keyed by house, date and lot number. A lot given
//! again replaces what the feed said of it; the UPRN the address matcher found and the re-offer
//! link stay while the address and postcode are unchanged (the derive step sets them).

use crate::formats::{Parsed, auction_lots as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::auctions::{self, LotRow};
use terrace_store::loads::RowCounts;

stored!(
    LotRow,
    String,
    |r| r.lot_key.clone(),
    auctions::lots_by_key,
    auctions::replace_lots
);

pub struct AuctionLots;

/// The address and postcode as the re-offer link compares them: upper case, letters and digits
/// only, single-spaced, with the postcode.
pub fn address_key(address: &str, postcode: Option<&str>) -> String {
    let norm = |s: &str| {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    ' '
                }
            })
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut a = norm(address);
    // A catalogue often repeats the postcode at the end of the address.
    if let Some(pc) = postcode {
        let p = norm(pc);
        if let Some(stripped) = a.strip_suffix(&p) {
            a = stripped.trim_end().to_string();
        }
    }
    format!("{a}|{}", postcode.map(norm).unwrap_or_default())
}

impl Load for AuctionLots {
    type Row = format::LotRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        merge(
            ctx.db,
            rows,
            counts,
            format::LotRow::key,
            |r, prev: Option<&LotRow>| {
                let key = address_key(&r.address, r.postcode.as_deref());
                let district = r
                    .postcode
                    .as_deref()
                    .and_then(|p| p.split(' ').next())
                    .map(str::to_string);
                // The feed's UPRN wins; a matcher's stays while the address is the same.
                let (uprn, match_method, match_score) = match (r.uprn, prev) {
                    (Some(u), _) => (Some(u), Some("feed".to_string()), None),
                    (None, Some(p))
                        if p.address_key == key && p.match_method.as_deref() != Some("feed") =>
                    {
                        (p.uprn, p.match_method.clone(), p.match_score)
                    }
                    (None, _) => (None, None, None),
                };
                let property_key = prev
                    .filter(|p| p.address_key == key && p.uprn == uprn)
                    .and_then(|p| p.property_key.clone());
                Change::Put(LotRow {
                    lot_key: r.key(),
                    auction_house: r.auction_house,
                    auction_date: r.auction_date,
                    lot_number: r.lot_number,
                    address: r.address,
                    postcode: r.postcode,
                    district,
                    lot_type: r.lot_type,
                    tenure: r.tenure,
                    lease_years_remaining: r.lease_years_remaining,
                    vacant: r.vacant,
                    rent_passing_pa: r.rent_passing_pa,
                    guide_low: r.guide_low,
                    guide_high: r.guide_high,
                    outcome: r.outcome,
                    hammer_price: r.hammer_price,
                    net_initial_yield_pct: r.net_initial_yield_pct,
                    source_url: r.source_url,
                    description: r.description,
                    uprn,
                    match_method,
                    match_score,
                    address_key: key,
                    property_key,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::address_key;

    #[test]
    fn address_keys_ignore_case_punctuation_and_a_trailing_postcode() {
        assert_eq!(
            address_key("12, High St., Tamberley XT1 1AA", Some("XT1 1AA")),
            address_key("12 HIGH ST TAMBERLEY", Some("XT1 1AA"))
        );
        assert_ne!(
            address_key("12 High St", Some("XT1 1AA")),
            address_key("12 High St", Some("XT1 1AB"))
        );
    }
}
