//! Calendar months and the period grid (month or quarter) an index is estimated on.

use crate::error::AnalyticsError;
use std::fmt;

/// A calendar month. Ordering is chronological.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Month {
    year: i32,
    month: u8,
}

impl Month {
    /// `month` is 1..=12; `None` otherwise.
    pub fn new(year: i32, month: u32) -> Option<Month> {
        if (1..=12).contains(&month) {
            Some(Month {
                year,
                month: month as u8,
            })
        } else {
            None
        }
    }

    pub fn year(self) -> i32 {
        self.year
    }

    /// 1..=12.
    pub fn month(self) -> u32 {
        u32::from(self.month)
    }

    /// Months since January of year 0 (a continuous count; differences are month gaps).
    pub fn ordinal(self) -> i32 {
        self.year * 12 + i32::from(self.month) - 1
    }

    pub fn from_ordinal(ordinal: i32) -> Month {
        Month {
            year: ordinal.div_euclid(12),
            month: (ordinal.rem_euclid(12) + 1) as u8,
        }
    }

    /// This month moved by `k` months (negative moves back).
    pub fn add_months(self, k: i32) -> Month {
        Month::from_ordinal(self.ordinal() + k)
    }

    /// Whole months from `earlier` to `self` (negative if `earlier` is later).
    pub fn months_since(self, earlier: Month) -> i32 {
        self.ordinal() - earlier.ordinal()
    }

    /// Parses `YYYY-MM` or `YYYY-MM-DD` (the day is checked against the month's length and then
    /// dropped).
    pub fn parse(s: &str) -> Result<Month, AnalyticsError> {
        let bad = || AnalyticsError::Invalid(format!("{s:?} is not YYYY-MM or YYYY-MM-DD"));
        let parts: Vec<&str> = s.split('-').collect();
        let (y, m, d) = match parts.as_slice() {
            [y, m] => (*y, *m, None),
            [y, m, d] => (*y, *m, Some(*d)),
            _ => return Err(bad()),
        };
        let digits = |t: &str, n: usize| t.len() == n && t.bytes().all(|b| b.is_ascii_digit());
        if !digits(y, 4) || !digits(m, 2) || d.is_some_and(|d| !digits(d, 2)) {
            return Err(bad());
        }
        let year: i32 = y.parse().map_err(|_| bad())?;
        let month: u32 = m.parse().map_err(|_| bad())?;
        let out = Month::new(year, month).ok_or_else(bad)?;
        if let Some(d) = d {
            let day: u32 = d.parse().map_err(|_| bad())?;
            if day == 0 || day > out.days() {
                return Err(bad());
            }
        }
        Ok(out)
    }

    /// Number of days in the month (Gregorian).
    pub fn days(self) -> u32 {
        match self.month {
            4 | 6 | 9 | 11 => 30,
            2 => {
                let leap = (self.year % 4 == 0 && self.year % 100 != 0) || self.year % 400 == 0;
                if leap { 29 } else { 28 }
            }
            _ => 31,
        }
    }

    /// `YYYY-MM-01`, the month-start date the API prints.
    pub fn first_day(self) -> String {
        format!("{self}-01")
    }
}

impl fmt::Display for Month {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}", self.year, self.month)
    }
}

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
    fn months_parse_and_count() {
        let m = Month::parse("2024-02").unwrap();
        assert_eq!(m, Month::new(2024, 2).unwrap());
        assert_eq!(Month::parse("2024-02-29").unwrap(), m);
        assert!(Month::parse("2023-02-29").is_err());
        assert!(Month::parse("2024-13").is_err());
        assert!(Month::parse("2024-2").is_err());
        assert!(Month::parse("2024/02").is_err());
        assert!(Month::parse("2024-02-01-01").is_err());
        assert_eq!(m.add_months(11).to_string(), "2025-01");
        assert_eq!(m.add_months(-2).to_string(), "2023-12");
        assert_eq!(Month::new(2025, 1).unwrap().months_since(m), 11);
        assert_eq!(m.first_day(), "2024-02-01");
    }

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
