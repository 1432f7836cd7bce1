//! Small descriptive helpers for the market endpoints.

use crate::period::Month;

/// The p-quantile (0 <= p <= 1) by linear interpolation between order statistics (Hyndman and
/// Fan type 7, the default of R and NumPy): with the n values sorted x(0) <= ... <= x(n-1),
/// h = (n - 1) p, q = x(floor h) + (h - floor h) (x(floor h + 1) - x(floor h)).
/// `None` for no values or p outside [0, 1]. NaNs are ignored.
pub fn quantile(values: &[f64], p: f64) -> Option<f64> {
    if !(0.0..=1.0).contains(&p) {
        return None;
    }
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    Some(v[lo] + (h - lo as f64) * (v[hi] - v[lo]))
}

/// The median (the type-7 0.5 quantile: the middle value, or the mean of the two middle ones).
pub fn median(values: &[f64]) -> Option<f64> {
    quantile(values, 0.5)
}

/// Median, p25 and p75 of prices in pounds.
pub fn price_summary(prices: &[i64]) -> Option<PriceSummary> {
    let v: Vec<f64> = prices.iter().map(|p| *p as f64).collect();
    Some(PriceSummary {
        n: v.len(),
        p25: quantile(&v, 0.25)?,
        median: quantile(&v, 0.5)?,
        p75: quantile(&v, 0.75)?,
        mean: v.iter().sum::<f64>() / v.len() as f64,
    })
}

/// Distribution of a set of prices (type-7 quantiles).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriceSummary {
    pub n: usize,
    pub p25: f64,
    pub median: f64,
    pub p75: f64,
    pub mean: f64,
}

/// Turnover rate: sales / stock, the share of the dwellings that could have sold that did.
/// `None` when the stock is 0 (never 0 or infinity).
pub fn turnover_rate(sales: u64, stock: u64) -> Option<f64> {
    (stock > 0).then(|| sales as f64 / stock as f64)
}

/// The trailing window of `months` months ending with `end`: `(end - months + 1, end)`.
/// `None` for a zero-length window.
pub fn trailing_window(end: Month, months: u32) -> Option<(Month, Month)> {
    (months > 0).then(|| (end.add_months(1 - months as i32), end))
}

/// Sums of `values` (one per consecutive month) over trailing windows of `months`: element i is
/// the sum of values[i + 1 - months ..= i], `None` until a full window is available.
pub fn trailing_sums(values: &[f64], months: usize) -> Vec<Option<f64>> {
    let mut out = Vec::with_capacity(values.len());
    let mut acc = 0.0;
    for i in 0..values.len() {
        acc += values[i];
        if i >= months {
            acc -= values[i - months];
        }
        out.push((months > 0 && i + 1 >= months).then_some(acc));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_type_7() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(median(&v), Some(2.5));
        assert_eq!(quantile(&v, 0.25), Some(1.75));
        assert_eq!(quantile(&v, 0.75), Some(3.25));
        assert_eq!(quantile(&[5.0], 0.25), Some(5.0));
        assert_eq!(median(&[]), None);
        assert_eq!(quantile(&v, 1.5), None);
        let s = price_summary(&[100, 300, 200]).unwrap();
        assert_eq!(
            (s.p25, s.median, s.p75, s.mean),
            (150.0, 200.0, 250.0, 200.0)
        );
    }

    #[test]
    fn turnover_and_windows() {
        assert_eq!(turnover_rate(5, 100), Some(0.05));
        assert_eq!(turnover_rate(5, 0), None);
        let end = Month::new(2025, 3).unwrap();
        let (a, b) = trailing_window(end, 12).unwrap();
        assert_eq!(
            (a.to_string(), b.to_string()),
            ("2024-04".into(), "2025-03".into())
        );
        assert_eq!(
            trailing_sums(&[1.0, 2.0, 3.0, 4.0], 2),
            vec![None, Some(3.0), Some(5.0), Some(7.0)]
        );
    }
}
