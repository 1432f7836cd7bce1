//! `provisional_from` from a simulated registration lag.

use terrace_analytics::*;

#[test]
fn provisional_from_is_derived_from_the_simulated_lag() {
    let first = Month::new(2018, 1).unwrap();
    let through = Month::new(2025, 12).unwrap();
    let months = through.months_since(first) as usize + 1;
    let mut spec = SimSpec::typical(first, vec![0.0; months], 3000, 120.0);
    // Lags 0..=6 months: cumulative 10%, 40%, 65%, 80%, 90%, 96%, 100%.
    spec.data_through = Some(through);
    let mut d = SplitMix64::new(11);
    let sims = simulate_sales(&spec, &mut d);
    assert!(sims.iter().all(|s| s.registered <= through));
    let regs: Vec<Registration> = sims
        .iter()
        .map(|s| Registration {
            completed: s.sale.month,
            registered: s.registered,
        })
        .collect();
    let profile = registration_lag_profile(&regs, through).unwrap();
    assert_eq!(profile.cohort_last.to_string(), "2023-12");
    assert_eq!(profile.cohort_first.to_string(), "2022-01");
    assert!((profile.cdf[1] - 0.40).abs() < 0.03, "{:?}", profile.cdf);
    // 95% is first reached at a lag of 5 months, so the last five months are provisional.
    assert_eq!(profile.months_to_complete, Some(5));
    assert_eq!(
        profile.provisional_from(through),
        Some(Month::new(2025, 8).unwrap())
    );
    assert!(profile.completeness(Month::new(2025, 12).unwrap(), through) < 0.2);

    // The count-profile fallback, from monthly counts alone, flags the same tail (it misses the
    // months that are already more than 85% complete).
    let mut counts: Vec<(Month, u64)> = Vec::new();
    for s in &sims {
        match counts.iter_mut().find(|(m, _)| *m == s.sale.month) {
            Some((_, c)) => *c += 1,
            None => counts.push((s.sale.month, 1)),
        }
    }
    let pf = provisional_from_counts(&counts, through).unwrap();
    assert!(
        pf >= Month::new(2025, 8).unwrap() && pf <= Month::new(2025, 10).unwrap(),
        "{pf}"
    );
}
