//! The known true house price index per postcode district, from which fixture prices are drawn.
//!
//! Level 100 is January 2015 in every district (as in the UK HPI). Each district follows a
//! national shape (boom to 2007, fall in 2008-09, recovery, 2020-22 rise, 2023 dip) with its own
//! sensitivity and a slowly wandering local drift, plus month-to-month noise.

use crate::rng::{Rng, det_exp, det_ln};
use chrono::{Datelike, NaiveDate};

/// The first month of the index (Price Paid starts in January 1995).
pub const FIRST_YEAR: i32 = 1995;

/// Approximate annual national growth, in percent, 1995 onwards.
const NATIONAL_GROWTH: &[f64] = &[
    0.0, 5.0, 8.0, 8.0, 10.0, 12.0, 10.0, 20.0, 15.0, 12.0, // 1995-2004
    5.0, 7.0, 8.0, -10.0, -5.0, 3.0, -1.0, 1.0, 3.0, 8.0, // 2005-2014
    6.0, 6.0, 4.0, 2.0, 1.0, 4.0, 9.0, 8.0, -2.0, 2.0, // 2015-2024
    3.0, 2.0, // 2025-2026
];

#[derive(Debug, Clone)]
pub struct TrueIndex {
    /// District codes ("XT1", ...), in plan order.
    pub districts: Vec<String>,
    /// Number of months from January 1995.
    pub months: usize,
    /// `levels[district][month]`, rounded to four decimals (as written to `truth/true_index.csv`).
    pub levels: Vec<Vec<f64>>,
}

impl TrueIndex {
    pub fn new(seed: u64, districts: &[String], end: NaiveDate) -> TrueIndex {
        let months = ((end.year() - FIRST_YEAR) * 12 + end.month() as i32) as usize;
        let reference = ((2015 - FIRST_YEAR) * 12) as usize;
        let mut levels = Vec::with_capacity(districts.len());
        for (d, _) in districts.iter().enumerate() {
            let mut rng = Rng::derive(seed, "index", d as u64);
            let beta = rng.range_f64(0.8, 1.2);
            let mut drift = 0.0;
            let mut trend = 0.0;
            let mut logs = Vec::with_capacity(months);
            for m in 0..months {
                let year = FIRST_YEAR as usize + m / 12;
                let g = NATIONAL_GROWTH
                    .get(year - FIRST_YEAR as usize)
                    .copied()
                    .unwrap_or(3.0);
                let monthly = det_ln(1.0 + g / 100.0) / 12.0;
                drift = 0.9 * drift + 0.0012 * rng.normal();
                if m > 0 {
                    trend += beta * monthly + drift;
                }
                logs.push(trend + 0.002 * rng.normal());
            }
            let base = logs.get(reference).copied().unwrap_or(0.0);
            levels.push(
                logs.iter()
                    .map(|l| (100.0 * det_exp(l - base) * 1e4).round() / 1e4)
                    .collect(),
            );
        }
        TrueIndex {
            districts: districts.to_vec(),
            months,
            levels,
        }
    }

    /// Month number (0 = January 1995) of a date, clamped to the index.
    pub fn month_of(&self, date: NaiveDate) -> usize {
        let m = (date.year() - FIRST_YEAR) * 12 + date.month0() as i32;
        (m.max(0) as usize).min(self.months.saturating_sub(1))
    }

    pub fn level(&self, district: usize, date: NaiveDate) -> f64 {
        self.levels[district][self.month_of(date)]
    }

    /// "YYYY-MM" for month number `m`.
    pub fn month_label(m: usize) -> String {
        format!("{}-{:02}", FIRST_YEAR + (m / 12) as i32, m % 12 + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn january_2015_is_100_and_prices_rise_over_the_period() {
        let end = NaiveDate::from_ymd_opt(2026, 6, 30).unwrap();
        let idx = TrueIndex::new(7, &["XT1".into(), "XT2".into()], end);
        assert_eq!(idx.months, 31 * 12 + 6);
        for d in 0..2 {
            assert_eq!(idx.levels[d][20 * 12], 100.0);
            assert!(idx.levels[d][0] < 50.0, "1995 level {}", idx.levels[d][0]);
            assert!(idx.levels[d][idx.months - 1] > 110.0);
        }
        assert_eq!(TrueIndex::month_label(0), "1995-01");
        assert_eq!(TrueIndex::month_label(13), "1996-02");
    }
}
