//! Whether a sale's own sale listings show a relist in the months before it: one rule for the
//! build (which measures the relisting penalty on registered sales) and for the comparable
//! ledger (which shows each comparable's evidence).

use chrono::{NaiveDate, NaiveDateTime};
use terrace_analytics::Month;

/// A relist counts when it happened in this many months before the sale month.
pub const RELIST_WINDOW_MONTHS: i32 = 12;

/// One sale listing of a dwelling: when it was first seen, and its snapshots (time, status).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListingHistory {
    pub first_seen: Option<NaiveDateTime>,
    pub snapshots: Vec<(NaiveDateTime, Option<String>)>,
}

/// What a dwelling's sale listings show in the window before one of its sales.
#[derive(Debug, Clone, PartialEq)]
pub enum RelistEvidence {
    /// A `withdrawn` or `removed` snapshot followed by an `available` one.
    OffAndOn(NaiveDateTime, NaiveDateTime),
    /// Two or more separate sale listings first seen in the window.
    SeparateListings(usize),
    /// Listed (a listing first seen or a snapshot in the window), no relist.
    NoRelist,
    /// Sale listings are on record, none in the window.
    NotListedInWindow,
    /// No sale listing of the dwelling is on record.
    NoListing,
}

impl RelistEvidence {
    /// Relisted or not, for the penalty's measurement and its application; `None` when the
    /// listings say nothing about this sale.
    pub fn relisted(&self) -> Option<bool> {
        match self {
            RelistEvidence::OffAndOn(..) | RelistEvidence::SeparateListings(_) => Some(true),
            RelistEvidence::NoRelist => Some(false),
            RelistEvidence::NotListedInWindow | RelistEvidence::NoListing => None,
        }
    }
}

pub fn month_start(m: Month) -> Option<NaiveDateTime> {
    NaiveDate::from_ymd_opt(m.year(), m.month(), 1)?.and_hms_opt(0, 0, 0)
}

/// The evidence of `listings` (a dwelling's sale listings) for its sale completed in `sale`.
pub fn classify(listings: &[ListingHistory], sale: Month) -> RelistEvidence {
    if listings.is_empty() {
        return RelistEvidence::NoListing;
    }
    let (Some(from), Some(to)) = (
        month_start(sale.add_months(-RELIST_WINDOW_MONTHS)),
        month_start(sale.add_months(1)),
    ) else {
        return RelistEvidence::NotListedInWindow;
    };
    let inside = |t: &NaiveDateTime| *t >= from && *t < to;
    let mut snaps: Vec<&(NaiveDateTime, Option<String>)> = listings
        .iter()
        .flat_map(|l| l.snapshots.iter())
        .filter(|s| inside(&s.0))
        .collect();
    snaps.sort_by_key(|s| s.0);
    let listed_in_window = listings
        .iter()
        .filter(|l| l.first_seen.as_ref().is_some_and(inside))
        .count();
    let mut off: Option<NaiveDateTime> = None;
    for (t, status) in snaps.iter().map(|s| (s.0, s.1.as_deref())) {
        match status {
            Some("withdrawn" | "removed") => off = off.or(Some(t)),
            Some("available") => {
                if let Some(w) = off {
                    return RelistEvidence::OffAndOn(w, t);
                }
            }
            _ => {}
        }
    }
    if listed_in_window >= 2 {
        RelistEvidence::SeparateListings(listed_in_window)
    } else if listed_in_window == 1 || !snaps.is_empty() {
        RelistEvidence::NoRelist
    } else {
        RelistEvidence::NotListedInWindow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(y: i32, m: u32, d: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap()
    }

    #[test]
    fn relists_are_read_in_the_year_before_the_sale() {
        let sale = Month::new(2024, 6).unwrap();
        let snap = |t, s: &str| (t, Some(s.to_string()));
        let off_on = ListingHistory {
            first_seen: Some(at(2023, 9, 1)),
            snapshots: vec![
                snap(at(2023, 9, 1), "available"),
                snap(at(2023, 12, 1), "withdrawn"),
                snap(at(2024, 2, 1), "available"),
            ],
        };
        assert_eq!(
            classify(std::slice::from_ref(&off_on), sale),
            RelistEvidence::OffAndOn(at(2023, 12, 1), at(2024, 2, 1))
        );
        let plain = ListingHistory {
            first_seen: Some(at(2024, 1, 5)),
            snapshots: vec![snap(at(2024, 1, 5), "available")],
        };
        assert_eq!(
            classify(std::slice::from_ref(&plain), sale).relisted(),
            Some(false)
        );
        let two = [
            plain.clone(),
            ListingHistory {
                first_seen: Some(at(2024, 3, 1)),
                snapshots: vec![],
            },
        ];
        assert_eq!(classify(&two, sale), RelistEvidence::SeparateListings(2));
        // A relist two years before the sale is not this sale's.
        assert_eq!(
            classify(&[off_on], Month::new(2026, 6).unwrap()).relisted(),
            None
        );
        assert_eq!(classify(&[], sale), RelistEvidence::NoListing);
    }
}
