//! Forecasts: the fixed horizon, intervals, the provisional anchor and the backtest.

use terrace_analytics::*;

fn series_from_logs(first: Month, base: usize, logs: &[f64], grain: Grain) -> IndexSeries {
    let end = first.add_months((logs.len() as i32) * grain.months() - 1);
    let base = first.add_months(base as i32 * grain.months());
    let grid = IndexGrid::new(grain, first, end, base).unwrap();
    IndexSeries {
        grid,
        method: IndexMethod::RepeatSales,
        points: grid
            .periods()
            .into_iter()
            .zip(logs)
            .map(|(period, l)| IndexPoint {
                period,
                level: Some(100.0 * l.exp()),
                log_level: Some(*l),
                log_se: Some(0.0),
                raw_log_level: None,
                filled: false,
                n: 100,
            })
            .collect(),
        residual_variance: 0.02,
        n_obs: 1000,
    }
}

fn trending(seed: u64) -> Vec<f64> {
    let mut d = SplitMix64::new(seed);
    // Growth cycling around 0.4% a month (+-0.6%, eight-year cycle), small noise.
    cyclical_log_index(240, 0, 0.004, 0.006, 96.0, 0.002, &mut d)
}

fn random_walk(seed: u64) -> Vec<f64> {
    let mut d = SplitMix64::new(seed);
    // Constant drift 0.3% a month, 1% shocks: naive drift is the right model here.
    cyclical_log_index(240, 0, 0.003, 0.0, 96.0, 0.01, &mut d)
}

#[test]
fn the_horizon_is_seven_periods_and_intervals_widen() {
    let y = trending(1);
    let s = series_from_logs(Month::new(2005, 1).unwrap(), 120, &y, Grain::Month);
    for method in [ForecastMethod::DampedTrend, ForecastMethod::NaiveDrift] {
        let f = forecast_index(&s, None, method).unwrap();
        assert_eq!(HORIZON, 7);
        assert_eq!(f.points.len(), 7, "{}", method.as_str());
        assert_eq!(f.anchor, s.grid.last);
        for (i, (p, step)) in f.points.iter().enumerate() {
            assert_eq!(step.step, i + 1);
            assert_eq!(*p, f.anchor.offset(i as i32 + 1));
            assert!(
                step.lo95 < step.lo80
                    && step.lo80 < step.level
                    && step.level < step.hi80
                    && step.hi80 < step.hi95
            );
        }
        for w in f.points.windows(2) {
            let (a, b) = (&w[0].1, &w[1].1);
            assert!(b.hi80 - b.lo80 > a.hi80 - a.lo80, "80% interval must widen");
            assert!(b.log_se > a.log_se);
        }
        assert!((f.anchor_level - s.points.last().unwrap().level.unwrap()).abs() < 1e-9);
    }
    let f = forecast_index(&s, None, ForecastMethod::DampedTrend).unwrap();
    let p = f.model.params.unwrap();
    assert!((PHI_RANGE.0..=PHI_RANGE.1).contains(&p.phi));
    assert!((ALPHA_RANGE.0..=ALPHA_RANGE.1).contains(&p.alpha));
}

#[test]
fn a_forecast_never_anchors_on_a_provisional_period() {
    let y = trending(2);
    let first = Month::new(2005, 1).unwrap();
    let s = series_from_logs(first, 0, &y, Grain::Month);
    assert_eq!(s.grid.last.label(), "2024-12");
    let pf = Month::new(2024, 10).unwrap();
    let f = forecast_index(&s, Some(pf), ForecastMethod::DampedTrend).unwrap();
    assert_eq!(f.anchor.label(), "2024-09");
    assert_eq!(f.points[0].0.label(), "2024-10");
    assert_eq!(f.points[6].0.label(), "2025-04");
    assert_eq!(f.history_from.label(), "2005-01");
    // Quarterly: a quarter holding any provisional month is provisional.
    let q: Vec<f64> = y.chunks(3).map(|c| c[1]).collect();
    let s = series_from_logs(first, 0, &q, Grain::Quarter);
    let f = forecast_index(
        &s,
        Some(Month::new(2024, 11).unwrap()),
        ForecastMethod::DampedTrend,
    )
    .unwrap();
    assert_eq!(f.anchor.label(), "2024Q3");
    assert_eq!(
        last_settled(&s, Some(Month::new(2025, 1).unwrap()))
            .unwrap()
            .label(),
        "2024Q4"
    );
    assert_eq!(last_settled(&s, Some(first)), None);
}

#[test]
fn the_backtest_prefers_the_damped_trend_on_a_trending_series() {
    let bt = backtest(
        &trending(3),
        ForecastMethod::DampedTrend,
        &BacktestConfig::default(),
    )
    .unwrap();
    println!("{}", bt.table());
    assert_eq!(bt.horizons.len(), 7);
    assert_eq!(
        bt.horizons.iter().map(|h| h.horizon).collect::<Vec<_>>(),
        (1..=7).collect::<Vec<_>>()
    );
    assert!(bt.horizons.iter().all(|h| h.rmse_method < h.rmse_naive));
    assert!(bt.ships());
    assert!(bt.mean_rmse_method < 0.6 * bt.mean_rmse_naive);
    assert_eq!(bt.origins, 240 - 24);
}

#[test]
fn on_a_random_walk_with_drift_naive_drift_wins_and_the_damped_trend_does_not_ship() {
    // The honest outcome: with nothing to learn beyond the drift, the damped trend's extra
    // parameters cost a little accuracy (about 1-10% higher RMSE over seeds 1-5) and the gate
    // refuses it.
    for seed in 1..=3 {
        let bt = backtest(
            &random_walk(seed),
            ForecastMethod::DampedTrend,
            &BacktestConfig::default(),
        )
        .unwrap();
        println!("{}", bt.table());
        assert!(!bt.ships(), "seed {seed}");
        assert!(
            bt.mean_rmse_method < 1.2 * bt.mean_rmse_naive,
            "close, not a disaster"
        );
    }
}

#[test]
fn intervals_cover_about_what_they_say_on_a_random_walk() {
    let y = random_walk(7);
    let (mut inside80, mut inside95, mut n) = (0, 0, 0);
    for o in (40..y.len() - 7).step_by(3) {
        let m = fit_damped_trend(&y[..=o]).unwrap();
        for s in m.forecast(HORIZON) {
            let actual = 100.0 * y[o + s.step].exp();
            inside80 += usize::from(s.lo80 <= actual && actual <= s.hi80);
            inside95 += usize::from(s.lo95 <= actual && actual <= s.hi95);
            n += 1;
        }
    }
    let (c80, c95) = (inside80 as f64 / n as f64, inside95 as f64 / n as f64);
    println!("coverage 80%: {c80:.3}, 95%: {c95:.3} over {n}");
    assert!((0.65..=0.92).contains(&c80), "{c80}");
    assert!((0.85..=0.995).contains(&c95), "{c95}");
}

#[test]
fn naive_drift_follows_the_average_slope() {
    let y: Vec<f64> = (0..20).map(|t| 0.01 * t as f64).collect();
    let m = fit_naive_drift(&y).unwrap();
    assert!((m.point(7) - 0.26).abs() < 1e-12);
    assert!(m.sigma < 1e-12);
    assert!(fit_damped_trend(&y[..5]).is_err());
    assert!(
        backtest(
            &y,
            ForecastMethod::DampedTrend,
            &BacktestConfig {
                min_train: 4,
                step: 1,
                horizon: 7
            }
        )
        .is_err()
    );
}
