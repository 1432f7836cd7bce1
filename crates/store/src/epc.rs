//! Energy Performance Certificates (domestic), keyed by the register's `lmk_key`.
//!
//! Invariants: one row per certificate; `fields_json` keeps the publisher's other columns; a
//! certificate's `uprn` is the publisher's own (no matching is done here).

use crate::db::{Db, StoreResult};
use crate::schema::epc_certificates;
use crate::{keyed_ops, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = epc_certificates)]
pub struct EpcRow {
    pub lmk_key: String,
    pub uprn: Option<i64>,
    pub address: Option<String>,
    pub postcode: Option<String>,
    pub current_rating: Option<String>,
    pub potential_rating: Option<String>,
    pub current_efficiency: Option<i32>,
    pub potential_efficiency: Option<i32>,
    pub property_type: Option<String>,
    pub built_form: Option<String>,
    pub total_floor_area: Option<f64>,
    pub habitable_rooms: Option<i32>,
    pub lodgement_date: Option<NaiveDate>,
    pub inspection_date: Option<NaiveDate>,
    pub tenure: Option<String>,
    pub main_fuel: Option<String>,
    pub local_authority: Option<String>,
    pub fields_json: String,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    EpcRow,
    epc_certificates,
    lmk_key,
    String,
    epc_by_key,
    replace_epc,
    delete_epc
);
/// The energy certificates of a UPRN, newest lodgement first.
pub async fn epc_for_uprn(db: &Db, uprn: i64) -> StoreResult<Vec<EpcRow>> {
    Ok(with_conn!(db, |c| {
        epc_certificates::table
            .filter(epc_certificates::uprn.eq(uprn))
            .order((
                epc_certificates::lodgement_date.desc(),
                epc_certificates::lmk_key.desc(),
            ))
            .select(EpcRow::as_select())
            .load(c)
            .await?
    }))
}
