//! The VOA council tax valuation list: one row per entry, with its band and its UPRN match.
//!
//! Invariants: an entry's key is the VOA `reference`; its `uprn`, `match_method` and
//! `match_score` are set only by the address matcher (`set_council_tax_matches`).

use crate::db::{Db, StoreResult};
use crate::schema::council_tax;
use crate::{keyed_ops, with_conn};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// One entry of the council tax valuation list.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = council_tax)]
pub struct CouncilTaxRow {
    pub reference: String,
    pub billing_authority: Option<String>,
    pub address: String,
    pub postcode: Option<String>,
    pub band: String,
    pub uprn: Option<i64>,
    pub match_method: Option<String>,
    pub match_score: Option<f64>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    CouncilTaxRow,
    council_tax,
    reference,
    String,
    council_tax_by_ref,
    replace_council_tax,
    delete_council_tax
);

/// The council tax entries linked to a UPRN.
pub async fn council_tax_for_uprn(db: &Db, uprn: i64) -> StoreResult<Vec<CouncilTaxRow>> {
    Ok(with_conn!(db, |c| {
        council_tax::table
            .filter(council_tax::uprn.eq(uprn))
            .order(council_tax::reference)
            .select(CouncilTaxRow::as_select())
            .load(c)
            .await?
    }))
}

/// The council tax entries at a postcode that no UPRN is linked to.
pub async fn unlinked_council_tax_at(db: &Db, postcode: &str) -> StoreResult<Vec<CouncilTaxRow>> {
    Ok(with_conn!(db, |c| {
        council_tax::table
            .filter(council_tax::postcode.eq(postcode))
            .filter(council_tax::uprn.is_null())
            .order(council_tax::reference)
            .select(CouncilTaxRow::as_select())
            .load(c)
            .await?
    }))
}

/// How many council tax entries are loaded (0 means the list is not loaded).
pub async fn council_tax_count(db: &Db) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| council_tax::table
        .count()
        .get_result(c)
        .await?))
}

crate::matchable_ops!(
    CouncilTaxRow,
    council_tax,
    reference,
    unmatched_council_tax,
    set_council_tax_matches
);
