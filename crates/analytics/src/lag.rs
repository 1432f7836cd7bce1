//! Registration lag and the first provisional month (`provisional_from`).

use crate::error::AnalyticsError;
use crate::period::Month;

/// A month is provisional while the share of its eventual sales already registered is below
/// this.
pub const PROVISIONAL_COMPLETENESS: f64 = 0.95;
/// Lags are measured up to this many months; later registrations count as beyond the horizon.
pub const MAX_LAG_MONTHS: usize = 24;
/// Completion months from `data_through - MAX_LAG_MONTHS - LAG_COHORT_MONTHS + 1` to
/// `data_through - MAX_LAG_MONTHS` (fully observed for MAX_LAG_MONTHS) estimate the lag
/// distribution.
pub const LAG_COHORT_MONTHS: i32 = 24;
/// The lag distribution needs at least this many sales in its cohort.
pub const MIN_LAG_SALES: usize = 100;
/// Fallback rule: a recent month whose count is below this share of the same month a year
/// earlier reads as incomplete.
pub const COUNT_RATIO_THRESHOLD: f64 = 0.85;
/// Fallback rule: at most this many trailing months can be provisional.
pub const COUNT_LOOKBACK_MONTHS: i32 = 12;
/// Fallback rule without a year-earlier month (a file shorter than 13 months): a month reads as
/// incomplete when its count is below this share of the median count of the
/// [`RECENT_COUNT_MONTHS`] months before it. Seasonal lows (December, January) run at about
/// 80% of the half-year before them, so they stay settled.
pub const RECENT_COUNT_SHARE: f64 = 0.75;
/// ... the months the median is taken over (those of the file: at least
/// [`RECENT_COUNT_MIN_MONTHS`] of them must precede the month).
pub const RECENT_COUNT_MONTHS: i32 = 6;
pub const RECENT_COUNT_MIN_MONTHS: usize = 3;

/// A sale's completion month and the month it first appeared in the published data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registration {
    pub completed: Month,
    pub registered: Month,
}

/// The empirical registration-lag distribution.
#[derive(Debug, Clone, PartialEq)]
pub struct LagProfile {
    /// `cdf[k]`: share of the cohort's sales registered within k months of their completion
    /// month, k = 0..=MAX_LAG_MONTHS.
    pub cdf: Vec<f64>,
    /// Sales in the cohort.
    pub n_sales: usize,
    /// The cohort's completion months.
    pub cohort_first: Month,
    pub cohort_last: Month,
    /// The smallest k with cdf[k] >= PROVISIONAL_COMPLETENESS, if any.
    pub months_to_complete: Option<usize>,
}

/// Measures the lag distribution on the settled cohort (see [`LAG_COHORT_MONTHS`]).
/// `data_through` is the latest month of registrations held (the month of the latest Price Paid
/// file loaded). Registrations before their completion month count as lag 0.
pub fn registration_lag_profile(
    sales: &[Registration],
    data_through: Month,
) -> Result<LagProfile, AnalyticsError> {
    let cohort_last = data_through.add_months(-(MAX_LAG_MONTHS as i32));
    let cohort_first = cohort_last.add_months(1 - LAG_COHORT_MONTHS);
    let mut hist = vec![0usize; MAX_LAG_MONTHS + 1];
    let mut n = 0;
    for s in sales {
        if s.completed < cohort_first || s.completed > cohort_last {
            continue;
        }
        n += 1;
        let lag = s.registered.months_since(s.completed).max(0) as usize;
        if lag <= MAX_LAG_MONTHS {
            hist[lag] += 1;
        }
    }
    if n < MIN_LAG_SALES {
        return Err(AnalyticsError::NotEnoughData {
            what: "registration-lag cohort",
            need: MIN_LAG_SALES,
            have: n,
        });
    }
    let mut cdf = Vec::with_capacity(hist.len());
    let mut acc = 0;
    for h in hist {
        acc += h;
        cdf.push(acc as f64 / n as f64);
    }
    let months_to_complete = cdf.iter().position(|c| *c >= PROVISIONAL_COMPLETENESS);
    Ok(LagProfile {
        cdf,
        n_sales: n,
        cohort_first,
        cohort_last,
        months_to_complete,
    })
}

impl LagProfile {
    /// Expected share of month `m`'s sales registered by `data_through`: cdf[data_through - m].
    pub fn completeness(&self, m: Month, data_through: Month) -> f64 {
        let k = data_through.months_since(m);
        if k < 0 {
            0.0
        } else {
            self.cdf.get(k as usize).copied().unwrap_or(1.0)
        }
    }

    /// The first month whose expected completeness is below PROVISIONAL_COMPLETENESS:
    /// `data_through - months_to_complete + 1`; `None` when even `data_through` itself is
    /// complete (lag 0 covers 95%). If the threshold is never reached within MAX_LAG_MONTHS,
    /// `data_through - MAX_LAG_MONTHS` (that month is still below 95% too).
    pub fn provisional_from(&self, data_through: Month) -> Option<Month> {
        let k = self.months_to_complete.unwrap_or(MAX_LAG_MONTHS + 1);
        (k > 0).then(|| data_through.add_months(1 - k as i32))
    }
}

/// Fallback when registration months are unknown. For the trailing months, newest first (at
/// most COUNT_LOOKBACK_MONTHS): when the same month a year earlier has sales, the month is
/// incomplete if `count(m) / count(m - 12) < COUNT_RATIO_THRESHOLD`; otherwise (the file does
/// not reach back a year) it is incomplete if `count(m)` is below RECENT_COUNT_SHARE of the
/// median count of the RECENT_COUNT_MONTHS months before it that lie in the file (at least
/// RECENT_COUNT_MIN_MONTHS of them). The provisional block is the run of incomplete months
/// ending at `data_through`, and `provisional_from` is its first month (`None` if
/// `data_through` itself passes, or neither comparison can be made). The file starts at the
/// first month of `counts` with a sale; months missing from `counts` count 0.
pub fn provisional_from_counts(counts: &[(Month, u64)], data_through: Month) -> Option<Month> {
    let count = |m: Month| -> u64 {
        counts
            .iter()
            .filter(|(cm, _)| *cm == m)
            .map(|(_, c)| *c)
            .sum()
    };
    let file_start = counts
        .iter()
        .filter(|(_, c)| *c > 0)
        .map(|(m, _)| *m)
        .min()?;
    let mut first = None;
    for back in 0..COUNT_LOOKBACK_MONTHS {
        let m = data_through.add_months(-back);
        let prior = count(m.add_months(-12));
        let thin = if prior > 0 && m.add_months(-12) >= file_start {
            (count(m) as f64 / prior as f64) < COUNT_RATIO_THRESHOLD
        } else {
            let mut recent: Vec<f64> = (1..=RECENT_COUNT_MONTHS)
                .map(|k| m.add_months(-k))
                .filter(|p| *p >= file_start)
                .map(|p| count(p) as f64)
                .collect();
            if recent.len() < RECENT_COUNT_MIN_MONTHS {
                break;
            }
            recent.sort_by(f64::total_cmp);
            let mid = recent.len() / 2;
            let median = if recent.len() % 2 == 1 {
                recent[mid]
            } else {
                (recent[mid - 1] + recent[mid]) / 2.0
            };
            (count(m) as f64) < RECENT_COUNT_SHARE * median
        };
        if thin {
            first = Some(m);
        } else {
            break;
        }
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(y: i32, mo: u32) -> Month {
        Month::new(y, mo).unwrap()
    }

    #[test]
    fn provisional_from_follows_the_lag_distribution() {
        // Every cohort month: 40% registered in the month, 30% a month later, 20% two later,
        // 10% four later. 95% is reached at lag 4, so the last 4 months are provisional.
        let through = m(2026, 6);
        let mut regs = Vec::new();
        for back in 0..80 {
            let c = through.add_months(-back);
            for (lag, k) in [(0, 4), (1, 3), (2, 2), (4, 1)] {
                for _ in 0..k {
                    let r = c.add_months(lag);
                    if r <= through {
                        regs.push(Registration {
                            completed: c,
                            registered: r,
                        });
                    }
                }
            }
        }
        let p = registration_lag_profile(&regs, through).unwrap();
        assert_eq!(p.n_sales, 240);
        assert!((p.cdf[0] - 0.4).abs() < 1e-12);
        assert!((p.cdf[3] - 0.9).abs() < 1e-12);
        assert_eq!(p.months_to_complete, Some(4));
        assert_eq!(p.provisional_from(through), Some(m(2026, 3)));
        assert!((p.completeness(m(2026, 5), through) - 0.7).abs() < 1e-12);
        assert!(registration_lag_profile(&regs[..50], through).is_err());
    }

    #[test]
    fn count_rule_marks_the_trailing_shortfall() {
        let through = m(2025, 12);
        let mut counts = Vec::new();
        for back in 0..36 {
            let mo = through.add_months(-back);
            let c = match back {
                0 => 30,
                1 => 60,
                2 => 80,
                3 => 90,
                _ => 100,
            };
            counts.push((mo, c));
        }
        assert_eq!(provisional_from_counts(&counts, through), Some(m(2025, 10)));
        let full: Vec<(Month, u64)> = counts.iter().map(|(mo, _)| (*mo, 100)).collect();
        assert_eq!(provisional_from_counts(&full, through), None);
    }

    #[test]
    fn a_short_file_compares_with_its_own_recent_months() {
        // Twelve months, no year-earlier month: the last is a quarter of the others.
        let through = m(2019, 12);
        let mut counts: Vec<(Month, u64)> = (0..12)
            .map(|back| (through.add_months(-back), 1_300))
            .collect();
        counts[0].1 = 301;
        assert_eq!(provisional_from_counts(&counts, through), Some(through));
        // A seasonal low at 80% of the half-year before stays settled.
        counts[0].1 = 1_040;
        assert_eq!(provisional_from_counts(&counts, through), None);
        // Two thin months at the end: both provisional.
        counts[0].1 = 200;
        counts[1].1 = 700;
        assert_eq!(provisional_from_counts(&counts, through), Some(m(2019, 11)));
        // Too short a file to say anything.
        assert_eq!(provisional_from_counts(&counts[..3], through), None);
    }
}
