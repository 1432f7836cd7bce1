//! Forecasts of an index on log levels: damped trend (additive damped Holt, ETS(A,Ad,N)) and
//! naive drift, with prediction intervals and a rolling-origin backtest.

use crate::error::AnalyticsError;
use crate::period::{Month, Period};
use crate::series::IndexSeries;

/// The published horizon, in periods.
pub const HORIZON: usize = 7;
/// The damped trend needs at least this many settled periods of history.
pub const MIN_FORECAST_HISTORY: usize = 8;
/// Standard normal quantiles for the two interval coverages reported.
pub const Z80: f64 = 1.281_551_565_544_600_4;
pub const Z95: f64 = 1.959_963_984_540_054;
/// Parameter bounds of the damped trend.
pub const ALPHA_RANGE: (f64, f64) = (0.01, 1.0);
pub const BETA_RANGE: (f64, f64) = (0.0, 1.0);
pub const PHI_RANGE: (f64, f64) = (0.80, 0.98);

/// Which forecast method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ForecastMethod {
    /// Additive damped trend on log levels, parameters by least one-step squared error.
    DampedTrend,
    /// Random walk with drift on log levels.
    NaiveDrift,
}

impl ForecastMethod {
    /// `damped_trend_log` or `naive_drift_log`.
    pub fn as_str(self) -> &'static str {
        match self {
            ForecastMethod::DampedTrend => "damped_trend_log",
            ForecastMethod::NaiveDrift => "naive_drift_log",
        }
    }
}

/// Damped-trend smoothing parameters: level `alpha`, trend `beta` (the trend moves by
/// alpha * beta of each one-step error) and damping `phi`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DampedTrendParams {
    pub alpha: f64,
    pub beta: f64,
    pub phi: f64,
}

impl DampedTrendParams {
    fn clamp(x: [f64; 3]) -> DampedTrendParams {
        DampedTrendParams {
            alpha: x[0].clamp(ALPHA_RANGE.0, ALPHA_RANGE.1),
            beta: x[1].clamp(BETA_RANGE.0, BETA_RANGE.1),
            phi: x[2].clamp(PHI_RANGE.0, PHI_RANGE.1),
        }
    }
}

/// A fitted model: enough to forecast any horizon from the end of its history.
#[derive(Debug, Clone, PartialEq)]
pub struct FittedModel {
    pub method: ForecastMethod,
    /// Damped-trend parameters (None for naive drift).
    pub params: Option<DampedTrendParams>,
    /// Final level and trend (naive drift: last value and drift).
    pub level: f64,
    pub trend: f64,
    /// Residual standard deviation of the in-sample one-step errors.
    pub sigma: f64,
    /// Periods of history fitted.
    pub n: usize,
}

/// One forecast step, on log levels (ln(level / 100)) and levels (base = 100).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepForecast {
    pub step: usize,
    pub log_level: f64,
    /// Standard deviation of the h-step error on the log scale.
    pub log_se: f64,
    pub level: f64,
    pub lo80: f64,
    pub hi80: f64,
    pub lo95: f64,
    pub hi95: f64,
}

/// Runs the damped trend through `y`, returning the one-step errors and the final state.
/// Initial state: level y0, trend (y[m] - y0) / m with m = min(4, n - 1).
fn damped_pass(y: &[f64], p: DampedTrendParams) -> (f64, f64, f64) {
    let m = 4.min(y.len() - 1);
    let mut l = y[0];
    let mut b = (y[m] - y[0]) / m as f64;
    let mut sse = 0.0;
    for &obs in &y[1..] {
        let e = obs - (l + p.phi * b);
        sse += e * e;
        l = l + p.phi * b + p.alpha * e;
        b = p.phi * b + p.alpha * p.beta * e;
    }
    (sse, l, b)
}

/// Minimises `f` over R^3 from `start` by Nelder-Mead (reflection 1, expansion 2, contraction
/// 0.5, shrink 0.5), at most `max_evals` evaluations.
fn nelder_mead(
    f: &dyn Fn([f64; 3]) -> f64,
    start: [f64; 3],
    step: [f64; 3],
    max_evals: usize,
) -> ([f64; 3], f64) {
    let mut simplex: Vec<([f64; 3], f64)> = Vec::with_capacity(4);
    simplex.push((start, f(start)));
    for i in 0..3 {
        let mut x = start;
        x[i] += step[i];
        simplex.push((x, f(x)));
    }
    let mut evals = 4;
    let lerp = |a: [f64; 3], b: [f64; 3], t: f64| -> [f64; 3] {
        [
            a[0] + t * (b[0] - a[0]),
            a[1] + t * (b[1] - a[1]),
            a[2] + t * (b[2] - a[2]),
        ]
    };
    while evals < max_evals {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        if (simplex[3].1 - simplex[0].1).abs() <= 1e-12 * (1.0 + simplex[0].1.abs()) {
            break;
        }
        let mut c = [0.0; 3];
        for (x, _) in &simplex[..3] {
            for k in 0..3 {
                c[k] += x[k] / 3.0;
            }
        }
        let worst = simplex[3];
        let xr = lerp(c, worst.0, -1.0);
        let fr = f(xr);
        evals += 1;
        if fr < simplex[0].1 {
            let xe = lerp(c, worst.0, -2.0);
            let fe = f(xe);
            evals += 1;
            simplex[3] = if fe < fr { (xe, fe) } else { (xr, fr) };
        } else if fr < simplex[2].1 {
            simplex[3] = (xr, fr);
        } else {
            let xc = if fr < worst.1 {
                lerp(c, xr, 0.5)
            } else {
                lerp(c, worst.0, 0.5)
            };
            let fc = f(xc);
            evals += 1;
            if fc < worst.1.min(fr) {
                simplex[3] = (xc, fc);
            } else {
                let best = simplex[0].0;
                for s in simplex.iter_mut().skip(1) {
                    s.0 = lerp(best, s.0, 0.5);
                    s.1 = f(s.0);
                    evals += 1;
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    simplex[0]
}

/// Fits the damped trend to log levels `y` (oldest first) by minimising the sum of squared
/// one-step errors: a grid over (alpha, beta, phi), then Nelder-Mead from the best grid point
/// within the bounds.
pub fn fit_damped_trend(y: &[f64]) -> Result<FittedModel, AnalyticsError> {
    fit_damped_trend_from(y, None)
}

/// As [`fit_damped_trend`], but with `start` given the grid is skipped and Nelder-Mead starts
/// there (the backtest warm-starts each origin from the previous origin's parameters).
pub fn fit_damped_trend_from(
    y: &[f64],
    start: Option<DampedTrendParams>,
) -> Result<FittedModel, AnalyticsError> {
    if y.len() < MIN_FORECAST_HISTORY {
        return Err(AnalyticsError::NotEnoughData {
            what: "damped-trend history (periods)",
            need: MIN_FORECAST_HISTORY,
            have: y.len(),
        });
    }
    let sse = |x: [f64; 3]| damped_pass(y, DampedTrendParams::clamp(x)).0;
    let start = match start {
        Some(p) => [p.alpha, p.beta, p.phi],
        None => {
            let mut best = ([0.5, 0.1, 0.9], f64::INFINITY);
            for a in [0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95, 1.0] {
                for b in [0.0, 0.02, 0.05, 0.1, 0.2, 0.4, 0.7, 1.0] {
                    for p in [0.8, 0.85, 0.9, 0.94, 0.97, 0.98] {
                        let v = sse([a, b, p]);
                        if v < best.1 {
                            best = ([a, b, p], v);
                        }
                    }
                }
            }
            best.0
        }
    };
    let (x, _) = nelder_mead(&sse, start, [0.05, 0.05, 0.02], 400);
    let params = DampedTrendParams::clamp(x);
    let (sse, level, trend) = damped_pass(y, params);
    let dof = (y.len() - 1).saturating_sub(3).max(1);
    Ok(FittedModel {
        method: ForecastMethod::DampedTrend,
        params: Some(params),
        level,
        trend,
        sigma: (sse / dof as f64).sqrt(),
        n: y.len(),
    })
}

/// Fits the naive drift: drift c = (y[n-1] - y[0]) / (n - 1), sigma from the one-step errors
/// y[t] - y[t-1] - c with n - 2 degrees of freedom.
pub fn fit_naive_drift(y: &[f64]) -> Result<FittedModel, AnalyticsError> {
    if y.len() < 3 {
        return Err(AnalyticsError::NotEnoughData {
            what: "naive-drift history (periods)",
            need: 3,
            have: y.len(),
        });
    }
    let n = y.len();
    let c = (y[n - 1] - y[0]) / (n - 1) as f64;
    let sse: f64 = y.windows(2).map(|w| (w[1] - w[0] - c).powi(2)).sum();
    Ok(FittedModel {
        method: ForecastMethod::NaiveDrift,
        params: None,
        level: y[n - 1],
        trend: c,
        sigma: (sse / (n - 2) as f64).sqrt(),
        n,
    })
}

impl FittedModel {
    /// Point forecast of the log level `h` steps ahead.
    pub fn point(&self, h: usize) -> f64 {
        match self.params {
            Some(p) => {
                let mut damp = 0.0;
                let mut pw = 1.0;
                for _ in 0..h {
                    pw *= p.phi;
                    damp += pw;
                }
                self.level + damp * self.trend
            }
            None => self.level + h as f64 * self.trend,
        }
    }

    /// Standard deviation of the h-step error.
    /// Damped trend: sigma * sqrt(1 + sum_{j=1}^{h-1} c_j^2), c_j = alpha + alpha beta phi
    /// (1 - phi^j) / (1 - phi). Naive drift: sigma * sqrt(h (1 + h / (n - 1))).
    pub fn se(&self, h: usize) -> f64 {
        match self.params {
            Some(p) => {
                let mut v = 1.0;
                for j in 1..h {
                    let cj = p.alpha
                        + p.alpha * p.beta * p.phi * (1.0 - p.phi.powi(j as i32)) / (1.0 - p.phi);
                    v += cj * cj;
                }
                self.sigma * v.sqrt()
            }
            None => {
                let h = h as f64;
                self.sigma * (h * (1.0 + h / (self.n - 1) as f64)).sqrt()
            }
        }
    }

    /// Steps 1..=horizon with their intervals (levels = 100 exp(log level)).
    pub fn forecast(&self, horizon: usize) -> Vec<StepForecast> {
        (1..=horizon)
            .map(|h| {
                let m = self.point(h);
                let s = self.se(h);
                let lv = |x: f64| 100.0 * x.exp();
                StepForecast {
                    step: h,
                    log_level: m,
                    log_se: s,
                    level: lv(m),
                    lo80: lv(m - Z80 * s),
                    hi80: lv(m + Z80 * s),
                    lo95: lv(m - Z95 * s),
                    hi95: lv(m + Z95 * s),
                }
            })
            .collect()
    }
}

/// Fits `method` to `y`.
pub fn fit(method: ForecastMethod, y: &[f64]) -> Result<FittedModel, AnalyticsError> {
    match method {
        ForecastMethod::DampedTrend => fit_damped_trend(y),
        ForecastMethod::NaiveDrift => fit_naive_drift(y),
    }
}

/// A published forecast: the anchor (last settled period) and HORIZON periods after it.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexForecast {
    pub method: ForecastMethod,
    pub anchor: Period,
    pub anchor_level: f64,
    /// (period, step) for steps 1..=HORIZON after the anchor.
    pub points: Vec<(Period, StepForecast)>,
    pub model: FittedModel,
    /// The first period of the history used (the longest gap-free run ending at the anchor).
    pub history_from: Period,
}

/// The last settled period: the latest period with a level that ends before `provisional_from`
/// (a period holding any provisional month is provisional); the latest with a level when
/// `provisional_from` is `None`.
pub fn last_settled(series: &IndexSeries, provisional_from: Option<Month>) -> Option<Period> {
    series
        .points
        .iter()
        .filter(|p| p.level.is_some())
        .filter(|p| provisional_from.is_none_or(|pf| p.period.end_month() < pf))
        .map(|p| p.period)
        .next_back()
}

/// Forecasts `series` HORIZON periods past its last settled period, never anchoring on a
/// provisional one, from the longest gap-free run of settled levels ending at the anchor.
pub fn forecast_index(
    series: &IndexSeries,
    provisional_from: Option<Month>,
    method: ForecastMethod,
) -> Result<IndexForecast, AnalyticsError> {
    let anchor = last_settled(series, provisional_from).ok_or(AnalyticsError::NotEnoughData {
        what: "settled periods",
        need: 1,
        have: 0,
    })?;
    let end = series.grid.position(anchor).unwrap_or(0);
    let mut start = end;
    while start > 0 && series.points[start - 1].log_level.is_some() {
        start -= 1;
    }
    let y: Vec<f64> = series.points[start..=end]
        .iter()
        .map(|p| p.log_level.unwrap_or(0.0))
        .collect();
    let model = fit(method, &y)?;
    let points = model
        .forecast(HORIZON)
        .into_iter()
        .map(|s| (anchor.offset(s.step as i32), s))
        .collect();
    Ok(IndexForecast {
        method,
        anchor,
        anchor_level: 100.0 * y[y.len() - 1].exp(),
        points,
        model,
        history_from: series.points[start].period,
    })
}

/// Rolling-origin backtest settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BacktestConfig {
    /// The first origin fits this many periods.
    pub min_train: usize,
    /// Origins advance by this many periods.
    pub step: usize,
    pub horizon: usize,
}

impl Default for BacktestConfig {
    fn default() -> Self {
        BacktestConfig {
            min_train: 24,
            step: 1,
            horizon: HORIZON,
        }
    }
}

/// Errors at one horizon.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HorizonError {
    pub horizon: usize,
    /// Forecasts scored at this horizon.
    pub n: usize,
    /// Root mean squared error of the log level (about the proportional error).
    pub rmse_method: f64,
    pub rmse_naive: f64,
    /// Mean absolute percentage error of the level: mean |1 - exp(forecast - actual)| * 100.
    pub mape_method: f64,
    pub mape_naive: f64,
}

/// The backtest table.
#[derive(Debug, Clone, PartialEq)]
pub struct Backtest {
    pub method: ForecastMethod,
    pub origins: usize,
    pub horizons: Vec<HorizonError>,
    /// Mean over horizons of the RMSE.
    pub mean_rmse_method: f64,
    pub mean_rmse_naive: f64,
}

impl Backtest {
    /// The method ships when its RMSE averaged over horizons 1..=7 is strictly below naive
    /// drift's.
    pub fn ships(&self) -> bool {
        self.mean_rmse_method < self.mean_rmse_naive
    }

    /// The backtest as a printable table, one line per horizon.
    pub fn table(&self) -> String {
        let mut s = format!(
            "h  n     rmse_{:<18} rmse_naive_drift  mape_{:<18} mape_naive_drift\n",
            self.method.as_str(),
            self.method.as_str()
        );
        for h in &self.horizons {
            s.push_str(&format!(
                "{:<2} {:<5} {:<23.5} {:<17.5} {:<23.3} {:.3}\n",
                h.horizon, h.n, h.rmse_method, h.rmse_naive, h.mape_method, h.mape_naive
            ));
        }
        s.push_str(&format!(
            "mean rmse {:.5} vs naive {:.5}: {}\n",
            self.mean_rmse_method,
            self.mean_rmse_naive,
            if self.ships() {
                "ships"
            } else {
                "does not ship"
            }
        ));
        s
    }
}

/// Rolling-origin backtest on settled log levels `y`: for each origin o = min_train - 1,
/// min_train - 1 + step, ... < n - 1, both models are refitted on y[0..=o] (the damped trend's
/// search starting from the previous origin's parameters after the first origin) and forecast
/// o + h for h = 1..=horizon where o + h < n; errors are forecast - actual.
pub fn backtest(
    y: &[f64],
    method: ForecastMethod,
    cfg: &BacktestConfig,
) -> Result<Backtest, AnalyticsError> {
    let n = y.len();
    if cfg.min_train < MIN_FORECAST_HISTORY || cfg.step == 0 || cfg.horizon == 0 {
        return Err(AnalyticsError::Invalid(format!(
            "backtest needs min_train >= {MIN_FORECAST_HISTORY}, step > 0, horizon > 0"
        )));
    }
    if n < cfg.min_train + 1 {
        return Err(AnalyticsError::NotEnoughData {
            what: "backtest history (periods)",
            need: cfg.min_train + 1,
            have: n,
        });
    }
    let hz = cfg.horizon;
    let mut acc = vec![[0.0f64; 4]; hz];
    let mut counts = vec![0usize; hz];
    let mut origins = 0;
    let mut o = cfg.min_train - 1;
    let mut warm: Option<DampedTrendParams> = None;
    while o < n - 1 {
        let train = &y[..=o];
        let m = match method {
            ForecastMethod::DampedTrend => fit_damped_trend_from(train, warm)?,
            ForecastMethod::NaiveDrift => fit_naive_drift(train)?,
        };
        warm = m.params;
        let nv = fit_naive_drift(train)?;
        origins += 1;
        for h in 1..=hz {
            if o + h >= n {
                break;
            }
            let actual = y[o + h];
            let (em, en) = (m.point(h) - actual, nv.point(h) - actual);
            let a = &mut acc[h - 1];
            a[0] += em * em;
            a[1] += en * en;
            a[2] += (1.0 - em.exp()).abs() * 100.0;
            a[3] += (1.0 - en.exp()).abs() * 100.0;
            counts[h - 1] += 1;
        }
        o += cfg.step;
    }
    let horizons: Vec<HorizonError> = (0..hz)
        .filter(|i| counts[*i] > 0)
        .map(|i| {
            let c = counts[i] as f64;
            HorizonError {
                horizon: i + 1,
                n: counts[i],
                rmse_method: (acc[i][0] / c).sqrt(),
                rmse_naive: (acc[i][1] / c).sqrt(),
                mape_method: acc[i][2] / c,
                mape_naive: acc[i][3] / c,
            }
        })
        .collect();
    let k = horizons.len().max(1) as f64;
    Ok(Backtest {
        method,
        origins,
        mean_rmse_method: horizons.iter().map(|h| h.rmse_method).sum::<f64>() / k,
        mean_rmse_naive: horizons.iter().map(|h| h.rmse_naive).sum::<f64>() / k,
        horizons,
    })
}
