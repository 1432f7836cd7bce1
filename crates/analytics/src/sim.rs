//! A synthetic market drawn from a known true index, for recovery tests and fixture worlds.
//!
//! Deterministic: every random number comes from the caller's [`Draws`] (a [`SplitMix64`] is
//! included), so the same seed gives the same sales.

use crate::period::Month;
use crate::sales::{PropertyType, Sale, Tenure};

/// A source of uniform draws in [0, 1).
pub trait Draws {
    fn uniform(&mut self) -> f64;

    /// Approximately standard normal: the sum of 12 uniforms minus 6 (Irwin-Hall, bounded to
    /// +-6; no transcendental functions, so identical on every platform).
    fn normal(&mut self) -> f64 {
        let mut s = 0.0;
        for _ in 0..12 {
            s += self.uniform();
        }
        s - 6.0
    }

    /// Uniform integer in 0..n (n > 0).
    fn below(&mut self, n: usize) -> usize {
        ((self.uniform() * n as f64) as usize).min(n.saturating_sub(1))
    }
}

pub use terrace_core::SplitMix64;

impl Draws for SplitMix64 {
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// What to simulate for one geography.
#[derive(Debug, Clone, PartialEq)]
pub struct SimSpec {
    /// The month of `true_log_index[0]`.
    pub first: Month,
    /// The true index per month as ln(level / 100).
    pub true_log_index: Vec<f64>,
    /// Dwellings in the stock (the first `n_dwellings` keys from `key_offset`).
    pub n_dwellings: usize,
    pub key_offset: u64,
    /// Expected sales per month (the count is floor(rate + u), u uniform).
    pub sales_per_month: f64,
    /// Standard deviation of the sale-level log price noise.
    pub noise_sd: f64,
    /// Share of sales that are flats in the first and the last month (linear in between): a mix
    /// shift that biases a median-price index but not a constant-quality one.
    pub flat_share_start: f64,
    pub flat_share_end: f64,
    /// Registration lag distribution: `lag_pmf[k]` = probability that a sale is registered k
    /// months after its completion month (normalised by its sum).
    pub lag_pmf: Vec<f64>,
    /// Sales registered after this month are not returned (not yet published), if given.
    pub data_through: Option<Month>,
    /// Share of sales whose EPC floor area is known.
    pub floor_area_known_share: f64,
    /// Each dwelling's own value wanders as a random walk with this standard deviation per
    /// year (so the repeat-sale error variance grows with the interval, as Case and Shiller
    /// found).
    pub dwelling_drift_sd_per_year: f64,
    /// When given, each dwelling gets a construction age band (0..8, the valuation model's
    /// grouping of the energy certificate's bands), uniform, and its value the band's log
    /// premium `age_band_premium[band]`; the band is known on the sales whose floor area is.
    /// `None` (the default) draws nothing, so a spec without it gives the same sales as before.
    pub age_band_premium: Option<[f64; 8]>,
    /// Each type's own trend beside the true index, log per year from the first month
    /// (detached, semi-detached, terraced, flat; `Other` has none): real districts' flats and
    /// houses part ways (the UK HPI of the Isle of Wight: flats about 1% a year under the
    /// all-dwellings index in 2005-2025, houses 0.2-0.3% over it). Zero in [`SimSpec::typical`].
    pub type_trend_per_year: [f64; 4],
    /// A new build's premium on its first sale (log): [`SIM_NEW_BUILD_PREMIUM`] in
    /// [`SimSpec::typical`].
    pub new_build_premium: f64,
    /// Share of sales whose noise is `tail_scale` times `noise_sd` (a heavier tail than the
    /// normal's, as real prices have: a sale below or above the market for reasons no record
    /// shows). 0 in [`SimSpec::typical`], which then draws nothing for it.
    pub tail_share: f64,
    pub tail_scale: f64,
    /// Standard deviation of a location effect shared by each run of `location_size`
    /// consecutive dwellings (a street: real prices have places, and the simulated streets of
    /// the backtest are runs of 30). 0 in [`SimSpec::typical`], which then draws nothing for it.
    pub location_sd: f64,
    pub location_size: usize,
    /// Standard deviation of each location's own trend beside the index, log per year (places
    /// rise and fall against their district). 0 in [`SimSpec::typical`].
    pub location_trend_sd: f64,
    /// Standard deviation of the own trend beside the index, log per year, of each run of
    /// `sector_size` consecutive dwellings (a postcode sector: a neighbourhood of streets that
    /// rises or falls against its district). 0 in [`SimSpec::typical`], which then draws
    /// nothing for it.
    pub sector_trend_sd: f64,
    pub sector_size: usize,
    /// Share of resales (a dwelling's second or later sale) sold unmodernised: at
    /// `refurbish_discount` (log) below the dwelling's value, which its buyer then restores
    /// (the next sale is at the full value, so the discounted sale is an anchor too low by the
    /// discount). 0 in [`SimSpec::typical`], which then draws nothing for it.
    pub refurbish_share: f64,
    pub refurbish_discount: f64,
}

impl SimSpec {
    /// A spec with typical values: 10% noise, flats 20% -> 35% of sales, lags 0..=6 months
    /// (mostly 1-3), 60% floor areas known, dwelling drift 3% a year, everything registered.
    pub fn typical(
        first: Month,
        true_log_index: Vec<f64>,
        n_dwellings: usize,
        sales_per_month: f64,
    ) -> SimSpec {
        SimSpec {
            first,
            true_log_index,
            n_dwellings,
            key_offset: 0,
            sales_per_month,
            noise_sd: 0.10,
            flat_share_start: 0.20,
            flat_share_end: 0.35,
            lag_pmf: vec![0.10, 0.30, 0.25, 0.15, 0.10, 0.06, 0.04],
            data_through: None,
            floor_area_known_share: 0.6,
            dwelling_drift_sd_per_year: 0.03,
            age_band_premium: None,
            type_trend_per_year: [0.0; 4],
            new_build_premium: SIM_NEW_BUILD_PREMIUM,
            tail_share: 0.0,
            tail_scale: 1.0,
            location_sd: 0.0,
            location_size: 30,
            location_trend_sd: 0.0,
            sector_trend_sd: 0.0,
            sector_size: 300,
            refurbish_share: 0.0,
            refurbish_discount: 0.0,
        }
    }

    /// [`SimSpec::typical`] with what real districts add and the typical market leaves out:
    /// type trends (detached +0.3%, semi-detached +0.3%, terraced +0.2%, flats -1.0% a year
    /// beside the index), a new-build premium of 12%, one sale in ten with three times the
    /// noise, and streets of 30 dwellings whose location effects have a standard deviation of
    /// 0.10 and whose own trends beside the index one of 0.5% a year.
    pub fn realistic(
        first: Month,
        true_log_index: Vec<f64>,
        n_dwellings: usize,
        sales_per_month: f64,
    ) -> SimSpec {
        SimSpec {
            type_trend_per_year: [0.003, 0.003, 0.002, -0.010],
            new_build_premium: 0.12,
            tail_share: 0.10,
            tail_scale: 3.0,
            location_sd: 0.10,
            location_trend_sd: 0.005,
            ..SimSpec::typical(first, true_log_index, n_dwellings, sales_per_month)
        }
    }

    /// The type's trend beside the index at month offset `t` from the first month (log).
    pub fn type_trend(&self, kind: PropertyType, t: usize) -> f64 {
        let k = match kind {
            PropertyType::Detached => 0,
            PropertyType::SemiDetached => 1,
            PropertyType::Terraced => 2,
            PropertyType::Flat => 3,
            PropertyType::Other => return 0.0,
        };
        self.type_trend_per_year[k] * t as f64 / 12.0
    }
}

/// Standard deviation of a dwelling's log quality (what neither type nor floor area explains).
pub const SIM_QUALITY_SD: f64 = 0.15;
/// Elasticity of value to floor area, and the standard deviation of ln(floor area) about its
/// type's typical area.
pub const SIM_AREA_ELASTICITY: f64 = 0.8;
pub const SIM_AREA_SD: f64 = 0.2;
/// A new build's premium on its first sale (log).
pub const SIM_NEW_BUILD_PREMIUM: f64 = 0.05;

/// One simulated sale and the month it was registered.
#[derive(Debug, Clone, PartialEq)]
pub struct SimSale {
    pub sale: Sale,
    pub registered: Month,
    /// What the simulation knows and no model can see.
    pub truth: SimTruth,
    /// The dwelling's construction age band (0..8) when the spec simulates one and the sale's
    /// certificate is known (as its floor area is).
    pub age_band: Option<u8>,
}

/// The truth behind a simulated sale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimTruth {
    /// The dwelling's log value at the sale: its own value (after its drift) plus the true index,
    /// its type's trend and the new-build premium; the price is this plus the sale noise.
    pub log_value: f64,
    /// The mean own log value of dwellings of its type and floor area (12 + type premium +
    /// elasticity x ln(area / 90)), before quality and drift.
    pub prior_mean: f64,
    /// The same knowing only the type (its typical floor area).
    pub prior_mean_no_area: f64,
}

struct Dwelling {
    kind: PropertyType,
    prior_mean: f64,
    prior_mean_no_area: f64,
    tenure: Tenure,
    area: f64,
    log_value: f64,
    is_new: bool,
    sold: bool,
    /// Month index (into the true index) the dwelling's value was last drawn at.
    last: usize,
    age_band: Option<u8>,
}

/// Simulates sales: a fixed stock (type mix D 25%, S 30%, T 25%, F 20%; type premium, floor
/// area elasticity 0.8, dwelling quality sd 0.15, a random-walk drift of each dwelling's value;
/// 8% sell first as new build at the spec's premium; each type's trend beside the index), each
/// month's sellers drawn with the flat share of `spec`, price = exp(dwelling value + true index
/// + noise), and a registration lag from `lag_pmf`.
pub fn simulate_sales(spec: &SimSpec, draws: &mut dyn Draws) -> Vec<SimSale> {
    // Drawn only when asked for, so that a typical spec's draws are unchanged.
    let size = spec.location_size.max(1);
    let locations: Vec<(f64, f64)> = if spec.location_sd > 0.0 || spec.location_trend_sd > 0.0 {
        (0..spec.n_dwellings.div_ceil(size))
            .map(|_| {
                (
                    spec.location_sd * draws.normal(),
                    spec.location_trend_sd * draws.normal(),
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    let sector_size = spec.sector_size.max(1);
    let sectors: Vec<f64> = if spec.sector_trend_sd > 0.0 {
        (0..spec.n_dwellings.div_ceil(sector_size))
            .map(|_| spec.sector_trend_sd * draws.normal())
            .collect()
    } else {
        Vec::new()
    };
    let mut stock: Vec<Dwelling> = (0..spec.n_dwellings)
        .map(|i| {
            let place = locations.get(i / size).map_or(0.0, |l| l.0);
            let u = draws.uniform();
            let (kind, premium, area0) = if u < 0.25 {
                (PropertyType::Detached, 0.35, 130.0)
            } else if u < 0.55 {
                (PropertyType::SemiDetached, 0.10, 95.0)
            } else if u < 0.80 {
                (PropertyType::Terraced, 0.0, 85.0)
            } else {
                (PropertyType::Flat, -0.25, 60.0)
            };
            let tenure = match kind {
                PropertyType::Flat => Tenure::Leasehold,
                PropertyType::Terraced if draws.uniform() < 0.05 => Tenure::Leasehold,
                PropertyType::Detached
                | PropertyType::SemiDetached
                | PropertyType::Terraced
                | PropertyType::Other => Tenure::Freehold,
            };
            let area: f64 = area0 * (SIM_AREA_SD * draws.normal()).exp();
            // Drawn only when asked for, so that the other draws (and sales) are unchanged.
            let age_band = spec
                .age_band_premium
                .map(|p| (draws.below(p.len()) as u8, p));
            let age = age_band.map_or(0.0, |(b, p)| p[b as usize]);
            let prior_mean = 12.0 + premium + age + SIM_AREA_ELASTICITY * (area / 90.0).ln();
            Dwelling {
                kind,
                prior_mean,
                prior_mean_no_area: 12.0
                    + premium
                    + age
                    + SIM_AREA_ELASTICITY * (area0 / 90.0).ln(),
                tenure,
                area,
                log_value: prior_mean + place + SIM_QUALITY_SD * draws.normal(),
                is_new: draws.uniform() < 0.08,
                sold: false,
                last: 0,
                age_band: age_band.map(|(b, _)| b),
            }
        })
        .collect();
    let flats: Vec<usize> = (0..stock.len())
        .filter(|&i| stock[i].kind == PropertyType::Flat)
        .collect();
    let houses: Vec<usize> = (0..stock.len())
        .filter(|&i| stock[i].kind != PropertyType::Flat)
        .collect();
    let pmf_total: f64 = spec.lag_pmf.iter().sum();
    let months = spec.true_log_index.len();
    let mut out = Vec::new();
    for (t, idx) in spec.true_log_index.iter().enumerate() {
        let month = spec.first.add_months(t as i32);
        let frac = if months > 1 {
            t as f64 / (months - 1) as f64
        } else {
            0.0
        };
        let flat_share =
            spec.flat_share_start + frac * (spec.flat_share_end - spec.flat_share_start);
        let n = (spec.sales_per_month + draws.uniform()).floor() as usize;
        for _ in 0..n {
            let pool = if draws.uniform() < flat_share && !flats.is_empty() {
                &flats
            } else {
                &houses
            };
            if pool.is_empty() {
                continue;
            }
            let i = pool[draws.below(pool.len())];
            let d = &mut stock[i];
            let new_build = d.is_new && !d.sold;
            // Drawn only when asked for, so that a spec without it gives the same sales.
            let unmodernised =
                spec.refurbish_share > 0.0 && d.sold && draws.uniform() < spec.refurbish_share;
            d.sold = true;
            let years = (t - d.last) as f64 / 12.0;
            d.log_value += spec.dwelling_drift_sd_per_year * years.sqrt() * draws.normal();
            d.last = t;
            let true_log = d.log_value
                + idx
                + spec.type_trend(d.kind, t)
                + locations
                    .get(i / size)
                    .map_or(0.0, |l| l.1 * t as f64 / 12.0)
                + sectors
                    .get(i / sector_size)
                    .map_or(0.0, |slope| slope * t as f64 / 12.0)
                + if new_build {
                    spec.new_build_premium
                } else {
                    0.0
                }
                - if unmodernised {
                    spec.refurbish_discount
                } else {
                    0.0
                };
            // The tail's draw only when asked for, so a typical spec's draws are unchanged.
            let scale = if spec.tail_share > 0.0 && draws.uniform() < spec.tail_share {
                spec.tail_scale
            } else {
                1.0
            };
            let log_price = true_log + scale * spec.noise_sd * draws.normal();
            let mut x = draws.uniform() * pmf_total;
            let mut lag = spec.lag_pmf.len().saturating_sub(1);
            for (k, p) in spec.lag_pmf.iter().enumerate() {
                if x < *p {
                    lag = k;
                    break;
                }
                x -= p;
            }
            let registered = month.add_months(lag as i32);
            let known = draws.uniform() < spec.floor_area_known_share;
            let day = 1 + draws.below(28) as u8;
            if spec.data_through.is_some_and(|dt| registered > dt) {
                continue;
            }
            out.push(SimSale {
                sale: Sale {
                    property: Some(spec.key_offset + i as u64),
                    month,
                    day,
                    price: log_price.exp().round() as i64,
                    property_type: d.kind,
                    tenure: d.tenure,
                    new_build,
                    floor_area_m2: known.then_some((d.area * 10.0).round() / 10.0),
                },
                registered,
                truth: SimTruth {
                    log_value: true_log,
                    prior_mean: d.prior_mean,
                    prior_mean_no_area: d.prior_mean_no_area,
                },
                age_band: d.age_band.filter(|_| known),
            });
        }
    }
    out
}

/// A smooth true index for tests: ln level follows growth g(t) = mean + amplitude *
/// sin(2 pi t / cycle) per month plus `noise_sd` draws, rebased so month `base` is 0.
pub fn cyclical_log_index(
    months: usize,
    base: usize,
    mean: f64,
    amplitude: f64,
    cycle: f64,
    noise_sd: f64,
    draws: &mut dyn Draws,
) -> Vec<f64> {
    let mut y = Vec::with_capacity(months);
    let mut acc = 0.0;
    for t in 0..months {
        if t > 0 {
            let g = mean + amplitude * (2.0 * std::f64::consts::PI * t as f64 / cycle).sin();
            acc += g + noise_sd * draws.normal();
        }
        y.push(acc);
    }
    let b = y.get(base).copied().unwrap_or(0.0);
    y.iter().map(|v| v - b).collect()
}
