//! A calendar month (`YYYY-MM`), the period every monthly figure is kept by.

use std::fmt;

/// A text that is not `YYYY-MM` or `YYYY-MM-DD` (a real day of a real month).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not YYYY-MM or YYYY-MM-DD")]
pub struct MonthError(pub String);

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
    pub fn parse(s: &str) -> Result<Month, MonthError> {
        let bad = || MonthError(s.to_string());
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
}
