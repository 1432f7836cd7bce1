//! The declared operations, one module per resource family.

pub mod account;
pub mod address;
pub mod changes;
pub mod market;
pub mod property;

use crate::registry::OpDecl;

/// Every operation, in the order of the specification; the management operations last.
pub static ALL: &[&OpDecl] = &[
    &address::AUTOCOMPLETE,
    &address::RESOLVE,
    &address::BY_UPRN,
    &address::BY_POSTCODE,
    &property::RECORD,
    &property::RECONCILE,
    &property::SUMMARY,
    &property::HISTORY,
    &property::COMPS,
    &property::FLOOD_RISK,
    &property::COUNCIL_TAX,
    &property::LEASE,
    &property::LEASE_BATCH,
    &changes::CHANGES_SINCE,
    &property::PLANNING_HISTORY,
    &property::PLANNING_HISTORY_BATCH,
    &property::COMMERCIAL,
    &property::COMMERCIAL_BY_UARN,
    &property::RISK,
    &property::RISK_BATCH,
    &property::RENTAL_ESTIMATE,
    &property::REPORT,
    &property::RETROFIT,
    &property::TRANSACTIONS,
    &market::FORECAST,
    &market::INDEX_SERIES,
    &market::RANKING,
    &market::TIME_ADJUSTMENT,
    &market::VOLUME_SERIES,
    &market::VOLUME_RANKING,
    &account::BALANCE,
    &account::USAGE,
    &account::CREATE_KEY,
    &account::LIST_KEYS,
    &account::REVOKE_KEY,
];
