//! Sales as the index estimators read them, and the repeat-sale pairs formed from them.

use crate::period::{Grain, Month};

/// Price Paid property type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PropertyType {
    Detached,
    SemiDetached,
    Terraced,
    Flat,
    Other,
}

impl PropertyType {
    /// From the Price Paid code `D`, `S`, `T`, `F` or `O`.
    pub fn from_code(code: &str) -> Option<PropertyType> {
        match code {
            "D" => Some(PropertyType::Detached),
            "S" => Some(PropertyType::SemiDetached),
            "T" => Some(PropertyType::Terraced),
            "F" => Some(PropertyType::Flat),
            "O" => Some(PropertyType::Other),
            _ => None,
        }
    }

    /// The Price Paid code (`D`, `S`, `T`, `F` or `O`): the inverse of [`PropertyType::from_code`].
    pub fn code(self) -> &'static str {
        match self {
            PropertyType::Detached => "D",
            PropertyType::SemiDetached => "S",
            PropertyType::Terraced => "T",
            PropertyType::Flat => "F",
            PropertyType::Other => "O",
        }
    }
}

/// Price Paid duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tenure {
    Freehold,
    Leasehold,
    Unknown,
}

impl Tenure {
    /// From the Price Paid code `F`, `L` or `U`.
    pub fn from_code(code: &str) -> Option<Tenure> {
        match code {
            "F" => Some(Tenure::Freehold),
            "L" => Some(Tenure::Leasehold),
            "U" => Some(Tenure::Unknown),
            _ => None,
        }
    }

    /// The Price Paid code (`F`, `L` or `U`): the inverse of [`Tenure::from_code`].
    pub fn code(self) -> &'static str {
        match self {
            Tenure::Freehold => "F",
            Tenure::Leasehold => "L",
            Tenure::Unknown => "U",
        }
    }
}

/// One registered sale, as the estimators need it. The caller passes category A sales only
/// (standard price paid); category B transfers are not market sales.
#[derive(Debug, Clone, PartialEq)]
pub struct Sale {
    /// A key identifying the dwelling across sales (the UPRN, or a hash of the normalised
    /// address); `None` when the sale cannot be tied to a dwelling (it then serves the hedonic
    /// index only).
    pub property: Option<u64>,
    /// Month of completion (the Price Paid date of transfer).
    pub month: Month,
    /// Day of month of completion, 1..=31 (used only to find same-day duplicates).
    pub day: u8,
    /// Price in pounds.
    pub price: i64,
    pub property_type: PropertyType,
    pub tenure: Tenure,
    pub new_build: bool,
    /// Total floor area in square metres from a linked EPC, when known.
    pub floor_area_m2: Option<f64>,
}

/// A repeat-sale pair: two consecutive sales of one dwelling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    pub first_month: Month,
    pub first_price: i64,
    pub second_month: Month,
    pub second_price: i64,
}

/// Pair filters. Defaults are [`MIN_HOLD_MONTHS`] and [`MAX_ANNUAL_LOG_GROWTH`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairFilter {
    pub min_hold_months: i32,
    pub max_annual_log_growth: f64,
}

/// Pairs whose second sale completes fewer than this many months after the first are dropped
/// (quick resales are mostly refurbishments or non-market transfers).
pub const MIN_HOLD_MONTHS: i32 = 6;

/// Pairs are dropped when |ln(p2/p1)| / max(years held, 1) exceeds this (0.5 is +65% or -39% a
/// year): almost always a changed dwelling (extension, conversion) or a mistyped price.
pub const MAX_ANNUAL_LOG_GROWTH: f64 = 0.5;

impl Default for PairFilter {
    fn default() -> Self {
        PairFilter {
            min_hold_months: MIN_HOLD_MONTHS,
            max_annual_log_growth: MAX_ANNUAL_LOG_GROWTH,
        }
    }
}

/// How many pairs each filter removed; `used` is what the estimator receives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PairStats {
    /// Sales that carry a dwelling key.
    pub keyed_sales: usize,
    /// Consecutive pairs formed before filtering.
    pub formed: usize,
    /// Both sales on the same day (a duplicate record or a back-to-back transfer).
    pub dropped_same_day: usize,
    /// Held fewer than `min_hold_months`.
    pub dropped_short_hold: usize,
    /// The property type differs between the two sales (a conversion).
    pub dropped_type_change: usize,
    /// A non-positive price on either side.
    pub dropped_bad_price: usize,
    /// Annualised log growth beyond `max_annual_log_growth`.
    pub dropped_growth: usize,
    pub used: usize,
}

/// Forms consecutive repeat-sale pairs (1st-2nd, 2nd-3rd, ...) per dwelling key and applies the
/// filters. Sales without a key are ignored. The order of `sales` does not matter.
pub fn form_pairs(sales: &[Sale], filter: &PairFilter) -> (Vec<Pair>, PairStats) {
    let mut keyed: Vec<&Sale> = sales.iter().filter(|s| s.property.is_some()).collect();
    keyed.sort_by_key(|s| (s.property, s.month, s.day, s.price));
    let mut stats = PairStats {
        keyed_sales: keyed.len(),
        ..PairStats::default()
    };
    let mut pairs = Vec::new();
    for w in keyed.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a.property != b.property {
            continue;
        }
        stats.formed += 1;
        if a.month == b.month && a.day == b.day {
            stats.dropped_same_day += 1;
            continue;
        }
        let hold = b.month.months_since(a.month);
        if hold < filter.min_hold_months {
            stats.dropped_short_hold += 1;
            continue;
        }
        if a.property_type != b.property_type {
            stats.dropped_type_change += 1;
            continue;
        }
        if a.price <= 0 || b.price <= 0 {
            stats.dropped_bad_price += 1;
            continue;
        }
        let years = (f64::from(hold) / 12.0).max(1.0);
        let growth = (b.price as f64 / a.price as f64).ln() / years;
        if growth.abs() > filter.max_annual_log_growth {
            stats.dropped_growth += 1;
            continue;
        }
        stats.used += 1;
        pairs.push(Pair {
            first_month: a.month,
            first_price: a.price,
            second_month: b.month,
            second_price: b.price,
        });
    }
    (pairs, stats)
}

/// Number of periods of `grain` between the two sales of a pair.
pub(crate) fn pair_interval(pair: &Pair, grain: Grain) -> i32 {
    grain
        .period_of(pair.second_month)
        .since(grain.period_of(pair.first_month))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sale(p: u64, y: i32, m: u32, d: u8, price: i64) -> Sale {
        Sale {
            property: Some(p),
            month: Month::new(y, m).unwrap(),
            day: d,
            price,
            property_type: PropertyType::Terraced,
            tenure: Tenure::Freehold,
            new_build: false,
            floor_area_m2: None,
        }
    }

    #[test]
    fn pairs_are_consecutive_and_filtered() {
        let mut conv = sale(4, 2010, 1, 1, 100_000);
        conv.property_type = PropertyType::Flat;
        let sales = vec![
            sale(1, 2015, 6, 3, 200_000),
            sale(1, 2010, 1, 5, 150_000),
            sale(1, 2020, 1, 5, 260_000),
            sale(2, 2012, 3, 9, 90_000),
            sale(2, 2012, 3, 9, 90_000),
            sale(3, 2012, 3, 9, 90_000),
            sale(3, 2012, 5, 9, 95_000),
            conv,
            sale(4, 2014, 1, 1, 120_000),
            sale(5, 2010, 1, 1, 100_000),
            sale(5, 2011, 1, 1, 300_000),
            Sale {
                property: None,
                ..sale(6, 2011, 1, 1, 1)
            },
        ];
        let (pairs, st) = form_pairs(&sales, &PairFilter::default());
        assert_eq!(st.keyed_sales, 11);
        assert_eq!(st.formed, 6);
        assert_eq!(st.dropped_same_day, 1);
        assert_eq!(st.dropped_short_hold, 1);
        assert_eq!(st.dropped_type_change, 1);
        assert_eq!(st.dropped_growth, 1);
        assert_eq!(st.used, 2);
        assert_eq!(pairs[0].first_price, 150_000);
        assert_eq!(pairs[0].second_price, 200_000);
        assert_eq!(pairs[1].first_price, 200_000);
        assert_eq!(pairs[1].second_price, 260_000);
    }
}
