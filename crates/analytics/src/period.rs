//! Calendar months and the period grid (month or quarter) an index is estimated on.

use std::fmt;

pub use terrace_core::Month;

/// The time grid of an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Grain {
    Month,
    Quarter,
}

impl Grain {
    /// `month` or `quarter`.
    pub fn as_str(self) -> &'static str {
        match self {
            Grain::Month => "month",
            Grain::Quarter => "quarter",
        }
    }

    /// Months per period (1 or 3).
    pub fn months(self) -> i32 {
        match self {
            Grain::Month => 1,
            Grain::Quarter => 3,
        }
    }

    /// The period containing `m`.
    pub fn period_of(self, m: Month) -> Period {
        Period {
            grain: self,
            ordinal: m.ordinal().div_euclid(self.months()),
        }
    }

    /// Periods per year (12 or 4), for annualising.
    pub fn per_year(self) -> f64 {
        f64::from(12 / self.months())
    }
}

/// One period of a grid: a month or a quarter. Ordering is chronological within a grain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Period {
    grain: Grain,
    ordinal: i32,
}

impl Period {
    pub fn grain(self) -> Grain {
        self.grain
    }

    /// Periods since the first period of year 0.
    pub fn ordinal(self) -> i32 {
        self.ordinal
    }

    pub fn from_ordinal(grain: Grain, ordinal: i32) -> Period {
        Period { grain, ordinal }
    }

    /// The period `k` steps later (earlier if negative).
    pub fn offset(self, k: i32) -> Period {
        Period {
            grain: self.grain,
            ordinal: self.ordinal + k,
        }
    }

    /// Steps from `earlier` to `self`.
    pub fn since(self, earlier: Period) -> i32 {
        self.ordinal - earlier.ordinal
    }

    /// The first month of the period.
    pub fn start_month(self) -> Month {
        Month::from_ordinal(self.ordinal * self.grain.months())
    }

    /// The last month of the period.
    pub fn end_month(self) -> Month {
        self.start_month().add_months(self.grain.months() - 1)
    }

    /// `YYYY-MM` for a month, `YYYYQn` for a quarter.
    pub fn label(self) -> String {
        match self.grain {
            Grain::Month => self.start_month().to_string(),
            Grain::Quarter => format!(
                "{}Q{}",
                self.ordinal.div_euclid(4),
                self.ordinal.rem_euclid(4) + 1
            ),
        }
    }
}

impl fmt::Display for Period {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// The periods `first..=last` of one grain, in order; empty if `last < first`.
pub fn period_range(first: Period, last: Period) -> Vec<Period> {
    (first.ordinal..=last.ordinal)
        .map(|o| Period::from_ordinal(first.grain, o))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quarters_label_and_contain_their_months() {
        let q = Grain::Quarter.period_of(Month::new(2015, 5).unwrap());
        assert_eq!(q.label(), "2015Q2");
        assert_eq!(q.start_month().to_string(), "2015-04");
        assert_eq!(q.end_month().to_string(), "2015-06");
        assert_eq!(q.offset(3).label(), "2016Q1");
        let m = Grain::Month.period_of(Month::new(2015, 5).unwrap());
        assert_eq!(m.label(), "2015-05");
        assert_eq!(period_range(m, m.offset(2)).len(), 3);
    }
}
