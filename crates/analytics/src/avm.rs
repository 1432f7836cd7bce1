//! The automated valuation model: three estimators of a dwelling's log value at a vintage month,
//! blended with weights learned from their measured errors on held-out sales, with an interval
//! whose half-width is the measured quantile of held-out log errors (split conformal).
//!
//! 1. Anchor: the dwelling's own last sale carried to the vintage by its area's index, with its
//!    earlier sales filtered in (a random walk seen through noise, variances measured on the
//!    vintage's repeat sales).
//! 2. Comparables: same-building sales first, then same-street sales of the same type, then
//!    (when those give fewer than [`NEAREST_FILL`]) the nearest sales of the same type within
//!    [`NEAREST_RADIUS_M`], each carried by the index and adjusted for floor area and type by the
//!    hedonic coefficients, fenced by the interquartile range; the median of what is left.
//! 3. Hedonic: log price (carried to the vintage) on type, tenure, new build and log floor area
//!    (with an indicator for sales without one), per area (pooled when the area is thin), plus a
//!    shrunk street effect; a subject is predicted only with its floor area.
//!
//! Everything an estimator reads was registered by the vintage month: the caller passes the
//! history it may use, and [`fit_vintage`] calibrates on sales completed in the year before the
//! vintage with evidence registered before that year began. Every constant is in
//! `docs/METHODS.md` ("Valuation").

use std::collections::HashMap;

use crate::linalg::NormalEquations;
use crate::period::Month;
use crate::sales::{PropertyType, Tenure};
use crate::stats::{median, quantile};

#[path = "avm_resale.rs"]
mod resale;
use resale::fit_resale_correction;
pub use resale::{
    CORRECTION_COLUMNS, LocalTrends, MIN_CORRECTION_PAIRS, MIN_TREND_GROUPS, ResaleCorrection,
    TYPE_STEP_RIDGE_PAIRS, TYPE_STEP_YEARS, TypeSteps,
};

/// The nominal coverage of the published interval.
pub const AVM_COVERAGE: f64 = 0.80;
/// Calibration window: sales completed in the this many months before the vintage are valued
/// with evidence registered before the window began.
pub const CALIBRATION_MONTHS: i32 = 12;
/// Comparables older than this many months at the vintage are not used.
pub const COMPS_MAX_AGE_MONTHS: i32 = 36;
/// At most this many comparables (most recent first) enter the fence.
pub const MAX_COMPS: usize = 12;
/// The nearest-same-type tier fills the ledger up to this many comparables when the
/// same-building and same-street tiers give fewer.
pub const NEAREST_FILL: usize = 6;
/// The nearest-same-type tier reads sales within this distance (metres, British National Grid)
/// of the subject ...
pub const NEAREST_RADIUS_M: f64 = 1_000.0;
/// ... completed in this many months to the vintage.
pub const NEAREST_MAX_AGE_MONTHS: i32 = 24;
/// Side of the square cells (metres) the nearest-same-type lookup buckets sales into.
pub const NEAREST_CELL_M: f64 = 250.0;
/// The comparable estimator needs this many comparables left after the fence.
pub const MIN_COMPS: usize = 2;
/// The fence applies from this many comparables (Tukey's 1.5 IQR).
pub const FENCE_MIN_COMPS: usize = 4;
pub const FENCE_IQR: f64 = 1.5;
/// An area gets its own hedonic fit from this many sales in the window; below, the pooled fit.
pub const MIN_AREA_SALES: usize = 60;
/// Hedonic training window: sales completed in the this many months before the vintage.
pub const HEDONIC_WINDOW_MONTHS: i32 = 120;
/// Shrinkage of location effects: effect = sum of residuals / (n + k).
pub const STREET_SHRINK: f64 = 5.0;
pub const AREA_SHRINK: f64 = 20.0;
/// Errors beyond this (log) are clipped before the mean squares that set the weights.
pub const WEIGHT_ERROR_CLIP: f64 = 1.0;
/// An evidence class gets its own interval quantile from this many calibration errors.
pub const MIN_CLASS_ERRORS: usize = 30;
/// A measured weight needs this many calibration errors per estimator; below, equal weights.
pub const MIN_WEIGHT_ERRORS: usize = 20;
/// The stacked weights' Huber reweighting (session 20): residuals beyond `HUBER_K` robust
/// standard deviations (the median absolute residual / 0.6745) weigh `c / |e|`, for
/// `HUBER_ROUNDS` rounds after the least-squares start.
pub const HUBER_K: f64 = 1.345;
pub const HUBER_ROUNDS: usize = 5;
/// Repeat-sale variances need this many pairs, and are clamped to these ranges (log squared;
/// per year for the drift).
pub const MIN_REPEAT_PAIRS: usize = 50;
pub const REPEAT_NOISE_RANGE: (f64, f64) = (0.0025, 0.09);
pub const REPEAT_DRIFT_RANGE: (f64, f64) = (0.0, 0.05);
/// Ridge penalty on the hedonic columns of built form, age band and lease term (not on the
/// intercept, type, tenure, new build or floor area): `lambda` added to each of their diagonal
/// entries of X'X, so a level seen on n sales is shrunk by about n / (n + lambda) toward its
/// reference, and a column that is constant (every certificate unknown) gets 0.
pub const HEDONIC_RIDGE: f64 = 5.0;
/// The lease column: decades of unexpired term below this many years (0 at or above).
pub const LEASE_SHORT_YEARS: f64 = 80.0;
/// The relisting penalty is measured when at least this many relisted and this many
/// not-relisted sales have an index-anchored previous sale; else no penalty (factor 1).
pub const MIN_RELIST_EVIDENCE: usize = 30;
/// An anchor sale older than this many months at the valuation month makes its own evidence
/// configuration, with its own blend weights (an old sale has drifted further from today).
pub const ANCHOR_OLD_MONTHS: i32 = 60;
/// ... and one older than this many months its own again (session 20): real dwellings are
/// resold after about nine years in the median, and a sale of twenty years ago says less than
/// one of six.
pub const ANCHOR_VERY_OLD_MONTHS: i32 = 120;
/// An own-sales estimate that filtered in this many of the dwelling's sales or more makes its
/// own evidence configuration too (it has averaged out more sale noise than a single sale).
pub const ANCHOR_MULTI_SALES: usize = 2;
/// ... when that configuration has at least this many calibration sales; with fewer, its sales
/// join (and take the weights of) the same estimators' configuration without it.
pub const MIN_SEVERAL_SALES_ERRORS: usize = 100;

/// A complete monthly log index (ln(level / 100)) from `first`. Months before `first` take the
/// first level and months after the last take the last level (held flat: no forecast).
#[derive(Debug, Clone, PartialEq)]
pub struct LogIndex {
    pub first: Month,
    pub logs: Vec<f64>,
}

impl LogIndex {
    /// The log level in month `m` (clamped to the series).
    pub fn at(&self, m: Month) -> f64 {
        if self.logs.is_empty() {
            return 0.0;
        }
        let i = m
            .months_since(self.first)
            .clamp(0, self.logs.len() as i32 - 1);
        self.logs[i as usize]
    }

    pub fn last(&self) -> Month {
        self.first
            .add_months(self.logs.len().saturating_sub(1) as i32)
    }

    /// From monthly `(month, log level)` points; gaps carry the previous level. `None` if empty.
    pub fn from_points(points: &[(Month, f64)]) -> Option<LogIndex> {
        let first = points.iter().map(|p| p.0).min()?;
        let last = points.iter().map(|p| p.0).max()?;
        let mut logs: Vec<Option<f64>> = vec![None; (last.months_since(first) + 1) as usize];
        for (m, l) in points {
            logs[m.months_since(first) as usize] = Some(*l);
        }
        let mut prev = logs.iter().flatten().next().copied().unwrap_or(0.0);
        let logs = logs
            .into_iter()
            .map(|l| {
                prev = l.unwrap_or(prev);
                prev
            })
            .collect();
        Some(LogIndex { first, logs })
    }
}

/// The indices of the areas, with a fallback (the nation) for an area without its own.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndexSet {
    pub areas: HashMap<u32, LogIndex>,
    pub fallback: Option<LogIndex>,
}

impl IndexSet {
    /// The index of `area` and whether it is the fallback.
    pub fn of(&self, area: u32) -> Option<(&LogIndex, bool)> {
        match self.areas.get(&area) {
            Some(i) => Some((i, false)),
            None => self.fallback.as_ref().map(|f| (f, true)),
        }
    }

    /// ln(index(to) / index(from)) in `area`; 0 when no index is held.
    pub fn log_factor(&self, area: u32, from: Month, to: Month) -> f64 {
        self.of(area).map_or(0.0, |(i, _)| i.at(to) - i.at(from))
    }
}

/// The built form of a dwelling, from its energy certificate's `BUILT_FORM`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BuiltForm {
    Detached,
    SemiDetached,
    EndTerrace,
    MidTerrace,
    EnclosedEndTerrace,
    EnclosedMidTerrace,
}

impl BuiltForm {
    /// The certificate's wording (`Detached`, `Semi-Detached`, `End-Terrace`, `Mid-Terrace`,
    /// `Enclosed End-Terrace`, `Enclosed Mid-Terrace`); `None` for anything else (`NO DATA!`).
    pub fn parse(s: &str) -> Option<BuiltForm> {
        match s.trim().to_ascii_lowercase().as_str() {
            "detached" => Some(BuiltForm::Detached),
            "semi-detached" => Some(BuiltForm::SemiDetached),
            "end-terrace" => Some(BuiltForm::EndTerrace),
            "mid-terrace" => Some(BuiltForm::MidTerrace),
            "enclosed end-terrace" => Some(BuiltForm::EnclosedEndTerrace),
            "enclosed mid-terrace" => Some(BuiltForm::EnclosedMidTerrace),
            _ => None,
        }
    }
}

/// The construction age bands the hedonic model distinguishes (a grouping of the energy
/// certificate's `CONSTRUCTION_AGE_BAND`); the band at [`AGE_BAND_REFERENCE`] has no column.
pub const AGE_BANDS: [&str; 8] = [
    "before_1900",
    "1900_1929",
    "1930_1949",
    "1950_1966",
    "1967_1982",
    "1983_1995",
    "1996_2006",
    "2007_onwards",
];
pub const AGE_BAND_REFERENCE: u8 = 4;

/// The band (index into [`AGE_BANDS`]) of a certificate's `CONSTRUCTION_AGE_BAND`
/// (`England and Wales: 1930-1949`, `England and Wales: before 1900`, `2012 onwards`, or a
/// year for a new dwelling); `None` when it states no year (`NO DATA!`, `INVALID!`).
pub fn age_band_of(s: &str) -> Option<u8> {
    let t = s.to_ascii_lowercase();
    if t.contains("before 1900") {
        return Some(0);
    }
    let bytes = t.as_bytes();
    let year = (0..bytes.len().saturating_sub(3)).find_map(|i| {
        let w = &t[i..i + 4];
        (w.bytes().all(|b| b.is_ascii_digit())
            && (i == 0 || !bytes[i - 1].is_ascii_digit())
            && bytes.get(i + 4).is_none_or(|b| !b.is_ascii_digit()))
        .then(|| w.parse::<i32>().ok())
        .flatten()
    })?;
    Some(match year {
        ..=1899 => 0,
        1900..=1929 => 1,
        1930..=1949 => 2,
        1950..=1966 => 3,
        1967..=1982 => 4,
        1983..=1995 => 5,
        1996..=2006 => 6,
        _ => 7,
    })
}

/// What the register, certificates, leases and listings add to a sale or a subject; `None` is
/// unknown (never a guessed value).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Attributes {
    pub built_form: Option<BuiltForm>,
    /// Index into [`AGE_BANDS`].
    pub age_band: Option<u8>,
    /// Years of the registered lease unexpired at the sale (or, for a subject, the vintage).
    pub lease_years: Option<f64>,
    /// Whether the sale's own listings show a relist in the 12 months before it (a sale only).
    pub relisted: Option<bool>,
}

/// One category A sale the model may read.
#[derive(Debug, Clone, PartialEq)]
pub struct AvmSale {
    /// The dwelling (UPRN or normalised-address key).
    pub property: u64,
    /// The index geography (postcode district) the sale lies in.
    pub area: u32,
    /// The parent building, when the register knows it.
    pub building: Option<u64>,
    /// The street (postcode district and street name), when written.
    pub street: Option<u64>,
    /// The postcode sector (the district's neighbourhood, as `PO30 2`), when the postcode
    /// parses.
    pub sector: Option<u64>,
    pub month: Month,
    /// The month the sale became public (completion plus registration lag).
    pub registered: Month,
    pub price: i64,
    pub property_type: PropertyType,
    pub tenure: Tenure,
    pub new_build: bool,
    pub floor_area_m2: Option<f64>,
    /// Easting and northing in metres (British National Grid): the register's coordinates of
    /// the UPRN, else its postcode's centroid; `None` when neither is loaded.
    pub position: Option<(f64, f64)>,
    pub attrs: Attributes,
}

/// The dwelling to value.
#[derive(Debug, Clone, PartialEq)]
pub struct Subject {
    pub property: u64,
    pub area: u32,
    pub building: Option<u64>,
    pub street: Option<u64>,
    pub property_type: PropertyType,
    pub tenure: Tenure,
    pub floor_area_m2: Option<f64>,
    /// As [`AvmSale::position`].
    pub position: Option<(f64, f64)>,
    /// As [`AvmSale::attrs`] (`relisted` is not read).
    pub attrs: Attributes,
}

impl Subject {
    /// The subject a sale describes (its own attributes as sold).
    pub fn of_sale(s: &AvmSale) -> Subject {
        Subject {
            property: s.property,
            area: s.area,
            building: s.building,
            street: s.street,
            property_type: s.property_type,
            tenure: s.tenure,
            floor_area_m2: s.floor_area_m2,
            position: s.position,
            attrs: s.attrs,
        }
    }
}

/// The three estimators, in the order of every `[_; 3]` array here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Estimator {
    Anchor,
    Comparables,
    Hedonic,
}

impl Estimator {
    pub const ALL: [Estimator; 3] = [
        Estimator::Anchor,
        Estimator::Comparables,
        Estimator::Hedonic,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Estimator::Anchor => "transaction_anchor",
            Estimator::Comparables => "comparables",
            Estimator::Hedonic => "hedonic",
        }
    }
}

/// The columns before the ridge-penalised ones (built form, age band, lease).
const BASE_COEF: usize = 10;
const N_COEF: usize = 23;
const COEF_NAMES: [&str; N_COEF] = [
    "intercept",
    "semi_detached",
    "terraced",
    "flat",
    "other",
    "leasehold",
    "tenure_unknown",
    "new_build",
    "log_floor_area",
    "floor_area_missing",
    "end_terrace",
    "enclosed_terrace",
    "built_form_unknown",
    "age_before_1900",
    "age_1900_1929",
    "age_1930_1949",
    "age_1950_1966",
    "age_1983_1995",
    "age_1996_2006",
    "age_2007_onwards",
    "age_band_unknown",
    "lease_short_decades",
    "lease_term_unknown",
];

/// The column of an age band (`None` for the reference band).
fn age_col(b: u8) -> Option<usize> {
    match b {
        0..=3 => Some(13 + b as usize),
        AGE_BAND_REFERENCE => None,
        5..=7 => Some(12 + b as usize),
        _ => None,
    }
}

/// Built-form columns: what Price Paid's type does not already say (detached and
/// semi-detached are its types D and S): an end of terrace, an enclosed terrace.
fn built_form_cols(f: Option<BuiltForm>, r: &mut [f64; N_COEF]) {
    match f {
        None => r[12] = 1.0,
        Some(BuiltForm::EndTerrace) => r[10] = 1.0,
        Some(BuiltForm::EnclosedEndTerrace) => {
            r[10] = 1.0;
            r[11] = 1.0;
        }
        Some(BuiltForm::EnclosedMidTerrace) => r[11] = 1.0,
        Some(BuiltForm::Detached | BuiltForm::SemiDetached | BuiltForm::MidTerrace) => {}
    }
}

fn lease_short(years: f64) -> f64 {
    (LEASE_SHORT_YEARS - years.max(0.0)).max(0.0) / 10.0
}

fn type_col(t: PropertyType) -> Option<usize> {
    match t {
        PropertyType::Detached => None,
        PropertyType::SemiDetached => Some(1),
        PropertyType::Terraced => Some(2),
        PropertyType::Flat => Some(3),
        PropertyType::Other => Some(4),
    }
}

/// One hedonic fit (an area's, or the pooled one).
#[derive(Debug, Clone, PartialEq)]
pub struct HedonicModel {
    /// Coefficients in the order of `COEF_NAMES` (0 where aliased).
    pub beta: Vec<f64>,
    /// Mean ln(floor area) subtracted before fitting.
    pub mean_log_area: f64,
    /// Mean ln(floor area) of the fitted sales with a known area, per property type (detached,
    /// semi, terraced, flat, other): a sale or subject without a floor area takes its type's.
    pub type_log_area: [Option<f64>; 5],
    /// Sales fitted per property type (detached, semi, terraced, flat, other).
    pub type_counts: [usize; 5],
    pub n: usize,
    /// Street effects (shrunk mean residuals).
    pub streets: HashMap<u64, f64>,
    /// Area effects (pooled fit only).
    pub areas: HashMap<u32, f64>,
}

impl HedonicModel {
    pub fn coefficient(&self, name: &str) -> Option<f64> {
        named(&COEF_NAMES, &self.beta, name)
    }

    /// The design row of a sale as it was sold.
    fn sale_row(&self, s: &AvmSale) -> [f64; N_COEF] {
        self.row(
            s.property_type,
            s.tenure,
            s.new_build,
            s.floor_area_m2,
            &s.attrs,
        )
    }

    fn row(
        &self,
        t: PropertyType,
        tenure: Tenure,
        new_build: bool,
        area_m2: Option<f64>,
        attrs: &Attributes,
    ) -> [f64; N_COEF] {
        let mut r = [0.0; N_COEF];
        r[0] = 1.0;
        if let Some(c) = type_col(t) {
            r[c] = 1.0;
        }
        match tenure {
            Tenure::Freehold => {}
            Tenure::Leasehold => r[5] = 1.0,
            Tenure::Unknown => r[6] = 1.0,
        }
        if new_build {
            r[7] = 1.0;
        }
        match area_m2.filter(|a| *a > 0.0) {
            Some(a) => r[8] = a.ln() - self.mean_log_area,
            None => {
                r[8] = self.type_log_area[type_slot(t)].unwrap_or(self.mean_log_area)
                    - self.mean_log_area;
                r[9] = 1.0;
            }
        }
        built_form_cols(attrs.built_form, &mut r);
        match attrs.age_band {
            Some(b) => {
                if let Some(c) = age_col(b) {
                    r[c] = 1.0;
                }
            }
            None => r[20] = 1.0,
        }
        match (attrs.lease_years, tenure) {
            (Some(y), _) => r[21] = lease_short(y),
            (None, Tenure::Leasehold) => r[22] = 1.0,
            (None, Tenure::Freehold | Tenure::Unknown) => {}
        }
        r
    }

    /// The log adjustment that moves a comparable's price to the subject for the attributes
    /// known on both: built form, age band and lease term (the columns' coefficients times the
    /// differences); an attribute unknown on either side is not adjusted.
    fn attribute_adjustment(&self, subject: &Attributes, comp: &Attributes) -> f64 {
        let b = &self.beta;
        let mut adj = 0.0;
        if let (Some(x), Some(y)) = (subject.built_form, comp.built_form) {
            let (mut rx, mut ry) = ([0.0; N_COEF], [0.0; N_COEF]);
            built_form_cols(Some(x), &mut rx);
            built_form_cols(Some(y), &mut ry);
            adj += (10..12).map(|c| b[c] * (rx[c] - ry[c])).sum::<f64>();
        }
        if let (Some(x), Some(y)) = (subject.age_band, comp.age_band) {
            let at = |band: u8| age_col(band).map_or(0.0, |c| b[c]);
            adj += at(x) - at(y);
        }
        if let (Some(x), Some(y)) = (subject.lease_years, comp.lease_years) {
            adj += b[21] * (lease_short(x) - lease_short(y));
        }
        adj
    }

    /// The log value (at the fit's vintage) of a dwelling; `None` when its type was not fitted.
    fn predict(&self, s: &Subject, area_m2: Option<f64>) -> Option<f64> {
        if self.type_counts[type_slot(s.property_type)] == 0 {
            return None;
        }
        let r = self.row(s.property_type, s.tenure, false, area_m2, &s.attrs);
        Some(self.level(&r, s.street, s.area))
    }

    /// The fitted log value of a design row in `street` and `area`: the row's coefficients plus
    /// the street and area effects (0 where none was fitted).
    fn level(&self, r: &[f64; N_COEF], street: Option<u64>, area: u32) -> f64 {
        r.iter().zip(&self.beta).map(|(x, b)| x * b).sum::<f64>()
            + street
                .and_then(|k| self.streets.get(&k))
                .copied()
                .unwrap_or(0.0)
            + self.areas.get(&area).copied().unwrap_or(0.0)
    }
}

/// The coefficient called `name` among `names` (the order of `beta`).
fn named(names: &[&str], beta: &[f64], name: &str) -> Option<f64> {
    names.iter().position(|n| *n == name).map(|i| beta[i])
}

fn type_slot(t: PropertyType) -> usize {
    match t {
        PropertyType::Detached => 0,
        PropertyType::SemiDetached => 1,
        PropertyType::Terraced => 2,
        PropertyType::Flat => 3,
        PropertyType::Other => 4,
    }
}

/// Fits one hedonic model on `(sale, log price carried to the vintage)`; a sale without a floor
/// area takes its type's mean log area and the `floor_area_missing` indicator.
fn fit_hedonic(rows: &[(&AvmSale, f64)], pooled: bool) -> Option<HedonicModel> {
    if rows.len() <= BASE_COEF {
        return None;
    }
    let mut by_type = [(0.0, 0usize); 5];
    for (s, _) in rows {
        if let Some(a) = s.floor_area_m2.filter(|a| *a > 0.0) {
            let e = &mut by_type[type_slot(s.property_type)];
            e.0 += a.ln();
            e.1 += 1;
        }
    }
    let (sum, n_known) = by_type
        .iter()
        .fold((0.0, 0), |acc, e| (acc.0 + e.0, acc.1 + e.1));
    let mean_log_area = if n_known > 0 {
        sum / n_known as f64
    } else {
        0.0
    };
    let mut m = HedonicModel {
        beta: vec![0.0; N_COEF],
        mean_log_area,
        type_log_area: by_type.map(|(sum, n)| (n > 0).then(|| sum / n as f64)),
        type_counts: [0; 5],
        n: rows.len(),
        streets: HashMap::new(),
        areas: HashMap::new(),
    };
    let mut ne = NormalEquations::new(N_COEF);
    for (s, y) in rows {
        ne.add_dense(&m.sale_row(s), *y, 1.0);
        m.type_counts[type_slot(s.property_type)] += 1;
    }
    // Ridge on the attribute columns: a pseudo-observation sqrt(lambda) x_c = 0 per column.
    for c in BASE_COEF..N_COEF {
        ne.add(&[(c, HEDONIC_RIDGE.sqrt())], 0.0, 1.0);
    }
    let sol = ne.solve(false);
    m.beta = sol.beta;
    let resid = |m: &HedonicModel, s: &AvmSale, y: f64| {
        let r = m.sale_row(s);
        y - r.iter().zip(&m.beta).map(|(x, b)| x * b).sum::<f64>()
    };
    if pooled {
        let mut acc: HashMap<u32, (f64, f64)> = HashMap::new();
        for (s, y) in rows {
            let e = acc.entry(s.area).or_default();
            e.0 += resid(&m, s, *y);
            e.1 += 1.0;
        }
        m.areas = acc
            .into_iter()
            .map(|(k, (sum, n))| (k, sum / (n + AREA_SHRINK)))
            .collect();
    }
    let mut acc: HashMap<u64, (f64, f64)> = HashMap::new();
    for (s, y) in rows {
        if let Some(k) = s.street {
            let area = m.areas.get(&s.area).copied().unwrap_or(0.0);
            let e = acc.entry(k).or_default();
            e.0 += resid(&m, s, *y) - area;
            e.1 += 1.0;
        }
    }
    m.streets = acc
        .into_iter()
        .map(|(k, (sum, n))| (k, sum / (n + STREET_SHRINK)))
        .collect();
    Some(m)
}

/// The sales of a history, indexed for the estimators.
pub struct History<'a> {
    sales: &'a [AvmSale],
    by_property: HashMap<u64, Vec<usize>>,
    by_building: HashMap<u64, Vec<usize>>,
    by_street_type: HashMap<(u64, PropertyType), Vec<usize>>,
    /// Sales with a position by ([`NEAREST_CELL_M`] cell, type slot).
    /// Each entry: the sale's index, month and position, so that a search reads the cell's
    /// vector without visiting the sales it rejects.
    by_cell: HashMap<(i64, i64, usize), Vec<CellSale>>,
}

/// A sale in a [`NEAREST_CELL_M`] cell.
#[derive(Debug, Clone, Copy)]
struct CellSale {
    i: usize,
    month: Month,
    price: i64,
    at: (f64, f64),
}

/// The [`NEAREST_CELL_M`] cell of a position.
fn cell_of(p: (f64, f64)) -> (i64, i64) {
    (
        (p.0 / NEAREST_CELL_M).floor() as i64,
        (p.1 / NEAREST_CELL_M).floor() as i64,
    )
}

fn distance(a: (f64, f64), b: (f64, f64)) -> f64 {
    (a.0 - b.0).hypot(a.1 - b.1)
}

impl<'a> History<'a> {
    /// Indexes `sales` (each list newest first).
    pub fn new(sales: &'a [AvmSale]) -> History<'a> {
        let mut h = History {
            sales,
            by_property: HashMap::new(),
            by_building: HashMap::new(),
            by_street_type: HashMap::new(),
            by_cell: HashMap::new(),
        };
        for (i, s) in sales.iter().enumerate() {
            h.by_property.entry(s.property).or_default().push(i);
            if let Some(b) = s.building {
                h.by_building.entry(b).or_default().push(i);
            }
            if let Some(k) = s.street {
                h.by_street_type
                    .entry((k, s.property_type))
                    .or_default()
                    .push(i);
            }
            if let Some(p) = s.position.filter(|p| p.0.is_finite() && p.1.is_finite()) {
                let (cx, cy) = cell_of(p);
                h.by_cell
                    .entry((cx, cy, type_slot(s.property_type)))
                    .or_default()
                    .push(CellSale {
                        i,
                        month: s.month,
                        price: s.price,
                        at: p,
                    });
            }
        }
        let order = |v: &mut Vec<usize>| {
            v.sort_by(|a, b| {
                (sales[*b].month, sales[*b].price).cmp(&(sales[*a].month, sales[*a].price))
            })
        };
        h.by_property.values_mut().for_each(order);
        h.by_building.values_mut().for_each(order);
        h.by_street_type.values_mut().for_each(order);
        h.by_cell
            .values_mut()
            .for_each(|v| v.sort_by_key(|c| std::cmp::Reverse((c.month, c.price))));
        h
    }

    /// The sales of type `t` completed in or after `oldest` within [`NEAREST_RADIUS_M`] of `at`
    /// that pass `usable`, nearest first (newest first at equal distance), at most `want`, with
    /// their distances: the [`NEAREST_CELL_M`] cells are searched ring by ring outward, stopping
    /// once `want` sales are known to be nearer than any cell not yet searched; a cell's sales
    /// are read newest first up to the first older than `oldest`.
    pub fn nearest_of_type(
        &self,
        at: (f64, f64),
        t: PropertyType,
        oldest: Month,
        want: usize,
        usable: &dyn Fn(&AvmSale) -> bool,
    ) -> Vec<(usize, f64)> {
        // The `want` nearest so far, in answer order: distance, then newest (month, price),
        // then the order found (as a stable sort of everything found would give).
        let mut best: Vec<(CellSale, f64)> = Vec::with_capacity(want + 1);
        if want == 0 || !(at.0.is_finite() && at.1.is_finite()) {
            return Vec::new();
        }
        let before = |a: &(CellSale, f64), b: &(CellSale, f64)| {
            a.1.total_cmp(&b.1)
                .then_with(|| (b.0.month, b.0.price).cmp(&(a.0.month, a.0.price)))
                .is_lt()
        };
        let (cx, cy) = cell_of(at);
        let slot = type_slot(t);
        let rings = (NEAREST_RADIUS_M / NEAREST_CELL_M).ceil() as i64 + 1;
        for r in 0..=rings {
            for dx in -r..=r {
                for dy in -r..=r {
                    if dx.abs() != r && dy.abs() != r {
                        continue;
                    }
                    let Some(v) = self.by_cell.get(&(cx + dx, cy + dy, slot)) else {
                        continue;
                    };
                    // The cell's nearest point: skip it when farther than the radius, or than
                    // the worst of a full list.
                    let (x0, y0) = (
                        (cx + dx) as f64 * NEAREST_CELL_M,
                        (cy + dy) as f64 * NEAREST_CELL_M,
                    );
                    let gap = |p: f64, lo: f64| (lo - p).max(p - lo - NEAREST_CELL_M).max(0.0);
                    let near = gap(at.0, x0).hypot(gap(at.1, y0));
                    let worst = if best.len() == want {
                        best[want - 1].1
                    } else {
                        NEAREST_RADIUS_M
                    };
                    if near > worst {
                        continue;
                    }
                    for c in v {
                        if c.month < oldest {
                            break;
                        }
                        let d = distance(at, c.at);
                        if d > NEAREST_RADIUS_M {
                            continue;
                        }
                        let cand = (*c, d);
                        let pos = best.partition_point(|b| !before(&cand, b));
                        if pos >= want || !usable(&self.sales[c.i]) {
                            continue;
                        }
                        best.insert(pos, cand);
                        best.truncate(want);
                    }
                }
            }
            // Every sale not yet searched lies farther than r cells from the subject's cell.
            let safe = r as f64 * NEAREST_CELL_M;
            if best.len() == want && best[want - 1].1 <= safe {
                break;
            }
        }
        best.into_iter().map(|(c, d)| (c.i, d)).collect()
    }

    pub fn sale(&self, i: usize) -> &AvmSale {
        &self.sales[i]
    }

    /// The dwelling's sales, newest first, registered by `by` and completed before `before`.
    pub fn sales_of(&self, property: u64, by: Month, before: Month) -> Vec<&AvmSale> {
        self.by_property
            .get(&property)
            .map(|v| {
                v.iter()
                    .map(|i| &self.sales[*i])
                    .filter(|s| s.registered <= by && s.month < before)
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The fitted hedonic models of a vintage.
#[derive(Debug, Clone, PartialEq)]
pub struct HedonicSet {
    pub areas: HashMap<u32, HedonicModel>,
    pub pooled: Option<HedonicModel>,
    /// The repeat-sale variances measured on the same sales ([`repeat_variances`]).
    pub repeat: Option<RepeatVariances>,
    /// The relisting penalty measured on the same sales ([`measure_relisting`]).
    pub relisting: RelistPenalty,
    /// The resale correction measured on the same sales' repeat pairs (`avm_resale`).
    pub correction: Option<ResaleCorrection>,
}

/// The relisting penalty of a vintage: how far below their index-anchored previous sale
/// relisted sales sold, against sales whose listings show no relist.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RelistPenalty {
    /// Sales with listing evidence and an index-anchored previous sale: relisted, not.
    pub n_relisted: usize,
    pub n_not_relisted: usize,
    /// Median of `ln price - ln(previous price x index factor)` of each group.
    pub median_relisted: Option<f64>,
    pub median_not_relisted: Option<f64>,
    /// `median_not_relisted - median_relisted`, added to a relisted comparable's log price;
    /// `None` (factor 1) while either group has fewer than [`MIN_RELIST_EVIDENCE`] sales.
    pub log_factor: Option<f64>,
}

impl RelistPenalty {
    /// The factor applied to a relisted comparable (1 when not measured).
    pub fn factor(&self) -> f64 {
        self.log_factor.map_or(1.0, f64::exp)
    }
}

/// Measures the [`RelistPenalty`] on `rows` (the hedonic window's sales, registered by the
/// fit): each sale whose listings were read (`attrs.relisted` known) and whose dwelling has an
/// earlier sale in `hist` (registered by `by`, not a new build), priced against that sale
/// carried by the index to its month.
pub fn measure_relisting(
    rows: &[(&AvmSale, f64)],
    hist: &History,
    index: &IndexSet,
    by: Month,
) -> RelistPenalty {
    let (mut yes, mut no) = (Vec::new(), Vec::new());
    for (s, _) in rows {
        let Some(relisted) = s.attrs.relisted else {
            continue;
        };
        let Some(prev) = hist
            .sales_of(s.property, by, s.month)
            .into_iter()
            .find(|p| p.price > 0 && !p.new_build)
        else {
            continue;
        };
        let r = (s.price as f64).ln()
            - (prev.price as f64).ln()
            - index.log_factor(s.area, prev.month, s.month);
        if relisted { yes.push(r) } else { no.push(r) }
    }
    let (my, mn) = (median(&yes), median(&no));
    RelistPenalty {
        n_relisted: yes.len(),
        n_not_relisted: no.len(),
        median_relisted: my,
        median_not_relisted: mn,
        log_factor: (yes.len() >= MIN_RELIST_EVIDENCE && no.len() >= MIN_RELIST_EVIDENCE)
            .then(|| Some(mn? - my?))
            .flatten(),
    }
}

/// The variances of a dwelling's deflated log sale prices as a random walk seen through noise:
/// `var(z2 - z1) = 2 noise + drift_per_year x years between the sales` (Case and Shiller's
/// second stage).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepeatVariances {
    pub noise: f64,
    pub drift_per_year: f64,
    /// Repeat pairs measured.
    pub n_pairs: usize,
}

/// Measures [`RepeatVariances`] on consecutive sales of the same dwelling among `rows`
/// (sale, log price carried to the vintage), the first not a new build: OLS of the squared
/// difference (clipped at [`WEIGHT_ERROR_CLIP`]) on the years between; the noise is clamped to
/// [`REPEAT_NOISE_RANGE`] and the drift to [`REPEAT_DRIFT_RANGE`]; `None` with fewer than
/// [`MIN_REPEAT_PAIRS`] pairs.
fn repeat_variances(rows: &[(&AvmSale, f64)]) -> Option<RepeatVariances> {
    // Ordered by dwelling, so the sums (and the fit) are the same on every run.
    let mut by: std::collections::BTreeMap<u64, Vec<(Month, f64, bool)>> = Default::default();
    for (s, y) in rows {
        by.entry(s.property)
            .or_default()
            .push((s.month, *y, s.new_build));
    }
    let mut ne = NormalEquations::new(2);
    let mut n = 0;
    for v in by.values_mut() {
        if v.len() < 2 {
            continue;
        }
        v.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        for w in v.windows(2) {
            if w[0].2 {
                continue;
            }
            let d = (w[1].1 - w[0].1).clamp(-WEIGHT_ERROR_CLIP, WEIGHT_ERROR_CLIP);
            let years = w[1].0.months_since(w[0].0) as f64 / 12.0;
            ne.add(&[(0, 1.0), (1, years)], d * d, 1.0);
            n += 1;
        }
    }
    if n < MIN_REPEAT_PAIRS {
        return None;
    }
    let b = ne.solve(false).beta;
    Some(RepeatVariances {
        noise: (b[0] / 2.0).clamp(REPEAT_NOISE_RANGE.0, REPEAT_NOISE_RANGE.1),
        drift_per_year: b[1].clamp(REPEAT_DRIFT_RANGE.0, REPEAT_DRIFT_RANGE.1),
        n_pairs: n,
    })
}

/// The own-sales estimate (log, at the vintage's index level) of a dwelling's sales `own`
/// (newest first, each `(month, log price carried to the vintage)`): a Kalman filter of a
/// random walk seen through noise, oldest first, so the last sale counts most and earlier ones
/// by how little the dwelling can have drifted since.
fn own_sales_estimate(own: &[(Month, f64)], rv: &RepeatVariances) -> Option<f64> {
    let mut it = own.iter().rev();
    let (mut m0, mut x) = *it.next()?;
    let mut p = rv.noise;
    for (m, z) in it {
        p += rv.drift_per_year * m.months_since(m0) as f64 / 12.0;
        let k = p / (p + rv.noise);
        x += k * (z - x);
        p *= 1.0 - k;
        m0 = *m;
    }
    Some(x)
}

impl HedonicSet {
    /// The model for `area`: its own, else the pooled one (and whether it is pooled).
    pub fn of(&self, area: u32) -> Option<(&HedonicModel, bool)> {
        match self.areas.get(&area) {
            Some(m) => Some((m, false)),
            None => self.pooled.as_ref().map(|m| (m, true)),
        }
    }

    /// How far a sale's log price `z` (carried to the fit's vintage) lies above what the model
    /// of its area predicts for it as sold (its type, tenure, new build, floor area or the
    /// missing indicator, attributes, street and area effects); `None` without a model.
    pub fn above_model(&self, s: &AvmSale, z: f64) -> Option<f64> {
        let (m, _) = self.of(s.area)?;
        Some(z - m.level(&m.sale_row(s), s.street, s.area))
    }
}

/// Fits the hedonic models at `vintage` on sales registered by `by` (completed in the window).
pub fn fit_hedonic_set(
    sales: &[AvmSale],
    index: &IndexSet,
    vintage: Month,
    by: Month,
) -> HedonicSet {
    let from = vintage.add_months(-HEDONIC_WINDOW_MONTHS);
    let rows: Vec<(&AvmSale, f64)> = sales
        .iter()
        .filter(|s| s.registered <= by && s.month >= from && s.month <= vintage && s.price > 0)
        .map(|s| {
            (
                s,
                (s.price as f64).ln() + index.log_factor(s.area, s.month, vintage),
            )
        })
        .collect();
    let mut per_area: HashMap<u32, Vec<(&AvmSale, f64)>> = HashMap::new();
    for r in &rows {
        per_area.entry(r.0.area).or_default().push(*r);
    }
    let mut areas = HashMap::new();
    for (a, rs) in per_area {
        if rs.len() >= MIN_AREA_SALES
            && let Some(m) = fit_hedonic(&rs, false)
        {
            areas.insert(a, m);
        }
    }
    let relisting = if rows.iter().any(|(s, _)| s.attrs.relisted.is_some()) {
        measure_relisting(&rows, &History::new(sales), index, by)
    } else {
        RelistPenalty::default()
    };
    let mut set = HedonicSet {
        areas,
        pooled: fit_hedonic(&rows, true),
        repeat: repeat_variances(&rows),
        relisting,
        correction: None,
    };
    set.correction = fit_resale_correction(&rows, &set, vintage);
    set
}

/// One line of a comparable's adjustment ledger.
#[derive(Debug, Clone, PartialEq)]
pub struct CompLine {
    pub property: u64,
    pub month: Month,
    pub price: i64,
    pub property_type: PropertyType,
    /// The comparable's floor area, when its certificate gives one.
    pub floor_area_m2: Option<f64>,
    /// The index geography (area id) that carried it in time.
    pub area: u32,
    /// True when `area` had no index and the fallback's carried it.
    pub fallback_index: bool,
    /// `same_building`, `same_street` or `nearest_same_type`.
    pub tier: &'static str,
    /// Metres from the subject, when both positions are known.
    pub distance_m: Option<f64>,
    /// index(vintage) / index(sale month).
    pub time_factor: f64,
    /// exp(floor-area, type, built-form, age-band, lease-term and new-build adjustment); 1 when
    /// none could be made.
    pub size_factor: f64,
    /// The vintage's relisting factor when the comparable's sale was relisted, else 1.
    pub relist_factor: f64,
    pub adjusted: f64,
    /// False when the interquartile-range fence dropped it.
    pub kept: bool,
}

/// The comparable estimator's working.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CompsEvidence {
    pub lines: Vec<CompLine>,
    pub n_before_fence: usize,
    pub n_after_fence: usize,
    /// The fence (adjusted prices), when applied.
    pub fence: Option<(f64, f64)>,
}

/// The anchor estimator's working.
#[derive(Debug, Clone, PartialEq)]
pub struct AnchorEvidence {
    pub month: Month,
    pub price: i64,
    pub factor: f64,
    pub value: f64,
    /// True when the area had no index and the fallback's was used.
    pub fallback_index: bool,
    /// The dwelling's sales the own-sales estimate filtered in (1: the last sale alone).
    pub n_sales: usize,
}

/// Why no value is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No floor area on record and no comparable basis (no earlier sale, no comparables).
    NoFloorAreaNoComparables,
    /// No earlier sale or comparables, and the hedonic model was not fitted on the type.
    TypeNotFitted(PropertyType),
}

impl Refusal {
    pub fn reason(self) -> String {
        match self {
            Refusal::NoFloorAreaNoComparables => "no floor area on record and no comparable basis (no earlier sale of the property, no same-building, same-street or nearby same-type sales)".to_string(),
            Refusal::TypeNotFitted(t) => format!(
                "the model was not fitted on this property type ({t:?}) and there is no comparable basis"
            ),
        }
    }
}

/// The three estimates of one dwelling (log values) and their evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimates {
    pub logs: [Option<f64>; 3],
    pub anchor: Option<AnchorEvidence>,
    pub comps: CompsEvidence,
    /// Sales behind the hedonic model used, and whether it was the pooled fit.
    pub hedonic: Option<(usize, bool)>,
}

/// The three estimates of `subject` at `vintage` from sales registered by `by` (and completed
/// before `vintage`), with `hed` fitted at `vintage`.
pub fn estimates(
    subject: &Subject,
    hist: &History,
    hed: &HedonicSet,
    index: &IndexSet,
    vintage: Month,
    by: Month,
) -> Estimates {
    let fallback = index.of(subject.area).is_some_and(|(_, f)| f);
    // 1. Anchor.
    let own = hist.sales_of(subject.property, by, vintage.add_months(1));
    let mut anchor = own.first().map(|s| {
        let lf = index.log_factor(subject.area, s.month, vintage);
        AnchorEvidence {
            month: s.month,
            price: s.price,
            factor: lf.exp(),
            value: s.price as f64 * lf.exp(),
            fallback_index: fallback,
            n_sales: 1,
        }
    });
    // The own-sales estimate: the last sale, with earlier sales of the dwelling filtered in.
    let anchor_log = match (&anchor, &hed.repeat) {
        (Some(_), Some(rv)) if own.len() > 1 => {
            // A new build's premium is not the dwelling's: only the last sale may be one.
            let zs: Vec<(Month, f64)> = own
                .iter()
                .enumerate()
                .filter(|(i, s)| s.price > 0 && (*i == 0 || !s.new_build))
                .map(|(_, s)| {
                    (
                        s.month,
                        (s.price as f64).ln() + index.log_factor(subject.area, s.month, vintage),
                    )
                })
                .collect();
            if let Some(a) = anchor.as_mut() {
                a.n_sales = zs.len().max(1);
            }
            own_sales_estimate(&zs, rv)
        }
        (Some(a), _) => Some(a.value.ln()),
        (None, _) => None,
    };
    // What the last sale carried by the index is known to miss (measured on repeat pairs).
    let anchor_log = match (anchor_log, &anchor, own.first(), &hed.correction) {
        (Some(x), Some(a), Some(last), Some(c)) => {
            Some(x + c.of(hed, last, a.value.ln(), vintage, a.n_sales > 1))
        }
        (x, ..) => x,
    };
    // 2. Comparables.
    let model = hed.of(subject.area).map(|m| m.0);
    let oldest = vintage.add_months(-COMPS_MAX_AGE_MONTHS);
    let usable = |s: &&AvmSale| {
        s.property != subject.property
            && s.registered <= by
            && s.month <= vintage
            && s.month >= oldest
            && s.price > 0
    };
    let mut picked: Vec<(&AvmSale, &'static str)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    if let Some(b) = subject.building
        && let Some(v) = hist.by_building.get(&b)
    {
        // Newest first: stop once the list is full or the sales are too old.
        for s in v.iter().map(|i| &hist.sales[*i]) {
            if picked.len() >= MAX_COMPS || s.month < oldest {
                break;
            }
            if usable(&s) && seen.insert(s as *const AvmSale) {
                picked.push((s, "same_building"));
            }
        }
    }
    if let Some(k) = subject.street
        && let Some(v) = hist.by_street_type.get(&(k, subject.property_type))
    {
        for s in v.iter().map(|i| &hist.sales[*i]) {
            if picked.len() >= MAX_COMPS || s.month < oldest {
                break;
            }
            if usable(&s) && seen.insert(s as *const AvmSale) {
                picked.push((s, "same_street"));
            }
        }
    }
    // The nearest sales of the same type, when the first two tiers give too few.
    if picked.len() < NEAREST_FILL
        && let Some(at) = subject.position
    {
        let nearest_oldest = vintage.add_months(-NEAREST_MAX_AGE_MONTHS);
        let near = hist.nearest_of_type(
            at,
            subject.property_type,
            nearest_oldest,
            NEAREST_FILL - picked.len(),
            &|s: &AvmSale| usable(&s) && !seen.contains(&(s as *const AvmSale)),
        );
        for (i, _) in near {
            let s = &hist.sales[i];
            seen.insert(s as *const AvmSale);
            picked.push((s, "nearest_same_type"));
        }
    }
    let mut lines: Vec<CompLine> = picked
        .iter()
        .map(|(s, tier)| {
            let lf = index.log_factor(s.area, s.month, vintage);
            let mut adj = 0.0;
            if let Some(m) = model {
                if let (Some(a), Some(b)) = (subject.floor_area_m2, s.floor_area_m2)
                    && a > 0.0
                    && b > 0.0
                {
                    adj += m.beta[8] * (a.ln() - b.ln());
                }
                let t = |p: PropertyType| type_col(p).map_or(0.0, |c| m.beta[c]);
                adj += t(subject.property_type) - t(s.property_type);
                if s.new_build {
                    adj -= m.beta[7];
                }
                adj += m.attribute_adjustment(&subject.attrs, &s.attrs);
            }
            let relist_factor = if s.attrs.relisted == Some(true) {
                hed.relisting.factor()
            } else {
                1.0
            };
            CompLine {
                property: s.property,
                month: s.month,
                price: s.price,
                property_type: s.property_type,
                floor_area_m2: s.floor_area_m2,
                area: s.area,
                fallback_index: index.of(s.area).is_none_or(|(_, f)| f),
                tier,
                distance_m: subject
                    .position
                    .zip(s.position)
                    .map(|(a, b)| distance(a, b)),
                time_factor: lf.exp(),
                size_factor: adj.exp(),
                relist_factor,
                adjusted: s.price as f64 * (lf + adj).exp() * relist_factor,
                kept: true,
            }
        })
        .collect();
    let n_before = lines.len();
    let mut fence = None;
    if n_before >= FENCE_MIN_COMPS {
        let logs: Vec<f64> = lines.iter().map(|l| l.adjusted.ln()).collect();
        if let (Some(q1), Some(q3)) = (quantile(&logs, 0.25), quantile(&logs, 0.75)) {
            let (lo, hi) = (q1 - FENCE_IQR * (q3 - q1), q3 + FENCE_IQR * (q3 - q1));
            for l in &mut lines {
                l.kept = (lo..=hi).contains(&l.adjusted.ln());
            }
            fence = Some((lo.exp(), hi.exp()));
        }
    }
    let kept: Vec<f64> = lines
        .iter()
        .filter(|l| l.kept)
        .map(|l| l.adjusted.ln())
        .collect();
    let comps = CompsEvidence {
        n_before_fence: n_before,
        n_after_fence: kept.len(),
        lines,
        fence,
    };
    // 3. Hedonic, for a subject with a floor area only: the model is fitted on sales without one
    // too (the `floor_area_missing` indicator), but predicting a subject without a floor area
    // beside the other estimators was measured worse on real Price Paid (METHODS, "Measured").
    let comps_log = (kept.len() >= MIN_COMPS).then(|| median(&kept)).flatten();
    let area = subject.floor_area_m2.filter(|a| *a > 0.0);
    let hedonic_fit = hed.of(subject.area);
    let hedonic_log = hedonic_fit
        .filter(|_| area.is_some() || anchor_log.is_some() || comps_log.is_some())
        .and_then(|(m, _)| m.predict(subject, area));
    Estimates {
        logs: [anchor_log, comps_log, hedonic_log],
        anchor,
        comps,
        hedonic: hedonic_log
            .is_some()
            .then(|| hedonic_fit.map(|(m, p)| (m.n, p)))
            .flatten(),
    }
}

/// The evidence class of a set of available estimators (the interval is measured per class).
pub fn evidence_class(avail: [bool; 3]) -> &'static str {
    if avail[0] {
        "with_previous_sale"
    } else if avail[1] {
        "comparables"
    } else {
        "hedonic_only"
    }
}

/// A calibration sale: the three estimates (log), the log price, and the anchor's bits of its
/// evidence configuration ([`anchor_bits`]).
pub type CalRow = ([Option<f64>; 3], f64, u8);

/// The blend and interval learned on the calibration sales.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// Mean squared log error (clipped) of each estimator where it was available.
    pub mse: [Option<f64>; 3],
    pub n_errors: [usize; 3],
    /// Stacked weights per availability pattern (`pattern_key`), learned by least squares.
    pub stacked: HashMap<u8, [f64; 3]>,
    /// Interval half-widths (log) per evidence class, and the all-class one.
    pub half_width: HashMap<&'static str, f64>,
    pub half_width_all: Option<f64>,
    /// Interval half-widths (log) per evidence class and property type (slot of `type_slot`),
    /// where the pair had [`MIN_CLASS_ERRORS`] calibration sales.
    pub half_width_type: HashMap<(&'static str, usize), f64>,
    /// Share of calibration sales inside their interval (per construction about the nominal).
    pub calibration_coverage: Option<f64>,
    pub n_calibration: usize,
}

/// The evidence configuration as five bits: anchor 1, comparables 2, hedonic 4, and the
/// anchor's bits ([`anchor_bits`]: [`OLD_ANCHOR_BIT`], [`SEVERAL_SALES_BIT`]) when the anchor is
/// available.
pub fn pattern_key(avail: [bool; 3], anchor_bits: u8) -> u8 {
    u8::from(avail[0])
        | (u8::from(avail[1]) << 1)
        | (u8::from(avail[2]) << 2)
        | if avail[0] {
            anchor_bits & (OLD_ANCHOR_BIT | SEVERAL_SALES_BIT | VERY_OLD_ANCHOR_BIT)
        } else {
            0
        }
        | if avail[2] {
            anchor_bits & HEDONIC_NO_AREA_BIT
        } else {
            0
        }
}

/// The anchor's bit of an evidence configuration when its sale is older than
/// [`ANCHOR_OLD_MONTHS`].
pub const OLD_ANCHOR_BIT: u8 = 8;
/// The anchor's bit when its own-sales estimate filtered in [`ANCHOR_MULTI_SALES`] or more sales.
pub const SEVERAL_SALES_BIT: u8 = 16;
/// The hedonic estimate's bit when the subject has no floor area (its type's mean area and the
/// `floor_area_missing` indicator): a much weaker estimate than one from the dwelling's own
/// floor area, so its weights are learned apart and it never takes the other's.
pub const HEDONIC_NO_AREA_BIT: u8 = 32;
/// The anchor's bit when its sale is older than [`ANCHOR_VERY_OLD_MONTHS`] (with
/// [`OLD_ANCHOR_BIT`]).
pub const VERY_OLD_ANCHOR_BIT: u8 = 64;

/// The bits of an evidence configuration beside the available estimators: the anchor's
/// ([`anchor_bits`]) and [`HEDONIC_NO_AREA_BIT`].
pub fn evidence_bits(e: &Estimates, subject: &Subject, at: Month) -> u8 {
    anchor_bits(e.anchor.as_ref(), at)
        | if e.logs[2].is_some() && !subject.floor_area_m2.is_some_and(|a| a > 0.0) {
            HEDONIC_NO_AREA_BIT
        } else {
            0
        }
}

/// Whether an anchor sale of `sold` is old at `at`.
pub fn is_old_anchor(sold: Month, at: Month) -> bool {
    at.months_since(sold) > ANCHOR_OLD_MONTHS
}

/// The anchor's bits of an evidence configuration valued at `at` ([`OLD_ANCHOR_BIT`],
/// [`SEVERAL_SALES_BIT`]); 0 without an anchor.
pub fn anchor_bits(a: Option<&AnchorEvidence>, at: Month) -> u8 {
    a.map_or(0, |a| {
        (if is_old_anchor(a.month, at) {
            OLD_ANCHOR_BIT
        } else {
            0
        }) | (if at.months_since(a.month) > ANCHOR_VERY_OLD_MONTHS {
            VERY_OLD_ANCHOR_BIT
        } else {
            0
        }) | (if a.n_sales >= ANCHOR_MULTI_SALES {
            SEVERAL_SALES_BIT
        } else {
            0
        })
    })
}

impl Calibration {
    /// Weights of the available estimators: the stacked weights of the configuration when it
    /// had enough calibration sales (falling back to the same estimators' configuration without
    /// the several-sales bit, then without the old-anchor bit, then without either); else
    /// proportional to 1 / mse, normalised; else equal.
    pub fn weights(&self, avail: [bool; 3], anchor_bits: u8) -> [f64; 3] {
        for bits in [
            anchor_bits,
            anchor_bits & !VERY_OLD_ANCHOR_BIT,
            anchor_bits & !SEVERAL_SALES_BIT,
            anchor_bits & !(SEVERAL_SALES_BIT | VERY_OLD_ANCHOR_BIT),
            anchor_bits & !(OLD_ANCHOR_BIT | VERY_OLD_ANCHOR_BIT),
            anchor_bits & HEDONIC_NO_AREA_BIT,
        ] {
            if let Some(w) = self.stacked.get(&pattern_key(avail, bits)) {
                return *w;
            }
        }
        // A hedonic estimate without a floor area counts only where weights were learned for it.
        if avail[2] && anchor_bits & HEDONIC_NO_AREA_BIT != 0 && (avail[0] || avail[1]) {
            let mut w = self.weights(
                [avail[0], avail[1], false],
                anchor_bits & !HEDONIC_NO_AREA_BIT,
            );
            w[2] = 0.0;
            return w;
        }
        self.inverse_mse_weights(avail)
    }

    fn inverse_mse_weights(&self, avail: [bool; 3]) -> [f64; 3] {
        let measured = (0..3)
            .filter(|k| avail[*k])
            .all(|k| self.n_errors[k] >= MIN_WEIGHT_ERRORS && self.mse[k].is_some());
        let mut w = [0.0; 3];
        for k in 0..3 {
            if avail[k] {
                w[k] = if measured {
                    1.0 / self.mse[k].unwrap_or(1.0).max(1e-6)
                } else {
                    1.0
                };
            }
        }
        normalise(w)
    }

    pub fn half_width_for(&self, class: &str) -> Option<f64> {
        self.half_width.get(class).copied().or(self.half_width_all)
    }

    /// The half-width of `class` for a dwelling of type `t`: the class and type's own when
    /// measured, else the class's.
    pub fn half_width_of(&self, class: &'static str, t: PropertyType) -> Option<f64> {
        self.half_width_type
            .get(&(class, type_slot(t)))
            .copied()
            .or_else(|| self.half_width_for(class))
    }
}

fn normalise(mut w: [f64; 3]) -> [f64; 3] {
    let total: f64 = w.iter().sum();
    if total > 0.0 {
        for x in &mut w {
            *x /= total;
        }
    }
    w
}

/// Least-squares weights summing to one for the estimators available in `pattern`, from the
/// calibration rows with exactly that pattern: with r the first available estimator,
/// `y - l_r = sum over the others of w_k (l_k - l_r)` (errors clipped at
/// [`WEIGHT_ERROR_CLIP`]); negative weights are set to 0 and the rest renormalised. `None`
/// with fewer than [`MIN_WEIGHT_ERRORS`] rows.
fn stacked_weights(rows: &[&CalRow], avail: [bool; 3]) -> Option<[f64; 3]> {
    let ks: Vec<usize> = (0..3).filter(|k| avail[*k]).collect();
    let (&r, others) = ks.split_first()?;
    if rows.len() < MIN_WEIGHT_ERRORS {
        return None;
    }
    let mut w = [0.0; 3];
    if others.is_empty() {
        w[r] = 1.0;
        return Some(w);
    }
    let data: Vec<(Vec<(usize, f64)>, f64)> = rows
        .iter()
        .filter_map(|(logs, y, _)| {
            let lr = logs[r]?;
            let x: Vec<(usize, f64)> = others
                .iter()
                .enumerate()
                .map(|(j, k)| {
                    (
                        j,
                        (logs[*k].unwrap_or(lr) - lr).clamp(-WEIGHT_ERROR_CLIP, WEIGHT_ERROR_CLIP),
                    )
                })
                .collect();
            Some((x, (y - lr).clamp(-WEIGHT_ERROR_CLIP, WEIGHT_ERROR_CLIP)))
        })
        .collect();
    // Least squares, then Huber's reweighting: a sale far off every estimate (a price no
    // record explains) counts by its distance rather than its square.
    let mut beta = vec![0.0; others.len()];
    let mut hw = vec![1.0; data.len()];
    for round in 0..=HUBER_ROUNDS {
        let mut ne = NormalEquations::new(others.len());
        for ((x, y), w) in data.iter().zip(&hw) {
            ne.add(x, *y, *w);
        }
        beta = ne.solve(false).beta;
        if round == HUBER_ROUNDS {
            break;
        }
        let res: Vec<f64> = data
            .iter()
            .map(|(x, y)| y - x.iter().map(|(j, v)| v * beta[*j]).sum::<f64>())
            .collect();
        let abs: Vec<f64> = res.iter().map(|e| e.abs()).collect();
        let Some(mad) = median(&abs) else { break };
        let c = (HUBER_K * mad / 0.6745).max(1e-6);
        hw = res
            .iter()
            .map(|e| (c / e.abs().max(1e-12)).min(1.0))
            .collect();
    }
    let mut rest = 1.0;
    for (j, k) in others.iter().enumerate() {
        w[*k] = beta[j].clamp(0.0, 1.0);
        rest -= w[*k];
    }
    w[r] = rest.max(0.0);
    Some(normalise(w))
}

fn blend(logs: &[Option<f64>; 3], w: &[f64; 3]) -> Option<f64> {
    let mut v = 0.0;
    let mut any = false;
    for k in 0..3 {
        if let Some(l) = logs[k] {
            v += w[k] * l;
            any = true;
        }
    }
    any.then_some(v)
}

/// A valuation.
#[derive(Debug, Clone, PartialEq)]
pub struct AvmValue {
    pub value: f64,
    /// The interval at [`AVM_COVERAGE`]; `None` when no calibration errors were measured.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    pub weights: [f64; 3],
    pub class: &'static str,
    pub estimates: Estimates,
}

/// A fitted vintage: the models and the calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct Vintage {
    pub month: Month,
    pub hedonic: HedonicSet,
    pub calibration: Calibration,
}

/// Values `subject` with a fitted vintage; `history` holds what was registered by the vintage.
pub fn value(
    v: &Vintage,
    subject: &Subject,
    hist: &History,
    index: &IndexSet,
) -> Result<AvmValue, Refusal> {
    let est = estimates(subject, hist, &v.hedonic, index, v.month, v.month);
    combine(&v.calibration, est, subject, v.month)
}

fn combine(
    cal: &Calibration,
    est: Estimates,
    subject: &Subject,
    at: Month,
) -> Result<AvmValue, Refusal> {
    let avail = [
        est.logs[0].is_some(),
        est.logs[1].is_some(),
        est.logs[2].is_some(),
    ];
    if !avail.iter().any(|a| *a) {
        return Err(if subject.floor_area_m2.is_some_and(|a| a > 0.0) {
            Refusal::TypeNotFitted(subject.property_type)
        } else {
            Refusal::NoFloorAreaNoComparables
        });
    }
    let w = cal.weights(avail, evidence_bits(&est, subject, at));
    let log_v = blend(&est.logs, &w).unwrap_or_default();
    let class = evidence_class(avail);
    let hw = cal.half_width_of(class, subject.property_type);
    Ok(AvmValue {
        value: log_v.exp(),
        lo: hw.map(|h| (log_v - h).exp()),
        hi: hw.map(|h| (log_v + h).exp()),
        weights: w,
        class,
        estimates: est,
    })
}

/// Fits a vintage at `vintage` from `sales` (any registered later are ignored): calibration on
/// the sales completed in the [`CALIBRATION_MONTHS`] before it, valued with what was registered
/// before that window (hedonic refitted at each calibration sale's month is approximated by one
/// fit at the window's start carried by the index), then the hedonic refit on everything
/// registered by the vintage. At most `max_calibration` calibration sales are used (a
/// deterministic spread).
pub fn fit_vintage(
    sales: &[AvmSale],
    index: &IndexSet,
    vintage: Month,
    max_calibration: usize,
) -> Vintage {
    let origin = vintage.add_months(-CALIBRATION_MONTHS);
    let known: Vec<AvmSale> = sales
        .iter()
        .filter(|s| s.registered <= vintage)
        .cloned()
        .collect();
    let hist = History::new(&known);
    let hed_origin = fit_hedonic_set(&known, index, origin, origin);
    let targets: Vec<&AvmSale> = known
        .iter()
        .filter(|s| s.month > origin && s.month <= vintage && s.price > 0)
        .collect();
    let step = (targets.len() / max_calibration.max(1)).max(1);
    let mut errs: Vec<CalRow> = Vec::new();
    let mut types: Vec<PropertyType> = Vec::new();
    for t in targets.iter().step_by(step) {
        let subject = Subject::of_sale(t);
        let mut e = estimates(&subject, &hist, &hed_origin, index, origin, origin);
        // Carry the origin estimates to the sale month.
        let lf = index.log_factor(t.area, origin, t.month);
        for l in e.logs.iter_mut().flatten() {
            *l += lf;
        }
        let bits = evidence_bits(&e, &subject, t.month);
        errs.push((e.logs, (t.price as f64).ln(), bits));
        types.push(t.property_type);
    }
    let mut calibration = calibrate(&errs);
    calibration.half_width_type = type_half_widths(&calibration, &errs, &types);
    Vintage {
        month: vintage,
        hedonic: fit_hedonic_set(&known, index, vintage, vintage),
        calibration,
    }
}

/// Learns the weights and interval widths from `(estimates, actual log price)` pairs.
pub fn calibrate(errs: &[CalRow]) -> Calibration {
    let mut sums = [0.0; 3];
    let mut n = [0usize; 3];
    for (logs, y, _) in errs {
        for k in 0..3 {
            if let Some(l) = logs[k] {
                sums[k] += (l - y).clamp(-WEIGHT_ERROR_CLIP, WEIGHT_ERROR_CLIP).powi(2);
                n[k] += 1;
            }
        }
    }
    // A several-sales configuration with too few rows is fitted with (and valued by) the same
    // configuration without the bit: its rows join that one's.
    let key = |e: &CalRow| pattern_key([e.0[0].is_some(), e.0[1].is_some(), e.0[2].is_some()], e.2);
    let mut counts: HashMap<u8, usize> = HashMap::new();
    for e in errs {
        *counts.entry(key(e)).or_default() += 1;
    }
    let mut by_pattern: HashMap<u8, Vec<&CalRow>> = HashMap::new();
    for e in errs {
        let mut k = key(e);
        for bit in [VERY_OLD_ANCHOR_BIT, SEVERAL_SALES_BIT] {
            if k & bit != 0 && counts.get(&k).copied().unwrap_or(0) < MIN_SEVERAL_SALES_ERRORS {
                k &= !bit;
            }
        }
        by_pattern.entry(k).or_default().push(e);
    }
    let stacked = by_pattern
        .iter()
        .filter_map(|(p, rows)| {
            let avail = [p & 1 != 0, p & 2 != 0, p & 4 != 0];
            Some((*p, stacked_weights(rows, avail)?))
        })
        .collect();
    let mut cal = Calibration {
        mse: [0, 1, 2].map(|k| (n[k] > 0).then(|| sums[k] / n[k] as f64)),
        n_errors: n,
        stacked,
        half_width: HashMap::new(),
        half_width_all: None,
        half_width_type: HashMap::new(),
        calibration_coverage: None,
        n_calibration: 0,
    };
    let mut by_class: HashMap<&'static str, Vec<f64>> = HashMap::new();
    let mut all = Vec::new();
    for (logs, y, bits) in errs {
        let avail = [logs[0].is_some(), logs[1].is_some(), logs[2].is_some()];
        let w = cal.weights(avail, *bits);
        if let Some(b) = blend(logs, &w) {
            let e = (b - y).abs();
            by_class.entry(evidence_class(avail)).or_default().push(e);
            all.push(e);
        }
    }
    cal.n_calibration = all.len();
    cal.half_width_all = quantile(&all, AVM_COVERAGE);
    for (c, v) in &by_class {
        if v.len() >= MIN_CLASS_ERRORS
            && let Some(q) = quantile(v, AVM_COVERAGE)
        {
            cal.half_width.insert(c, q);
        }
    }
    let inside = by_class
        .iter()
        .map(|(c, v)| {
            let h = cal.half_width_for(c).unwrap_or(0.0);
            v.iter().filter(|e| **e <= h).count()
        })
        .sum::<usize>();
    cal.calibration_coverage = (!all.is_empty()).then(|| inside as f64 / all.len() as f64);
    cal
}

/// The interval half-widths per evidence class and property type of `errs` (with `types`, the
/// type of each calibration sale), blended with the calibration's own weights: the
/// [`AVM_COVERAGE`] quantile of the absolute log errors of each pair with at least
/// [`MIN_CLASS_ERRORS`] sales.
fn type_half_widths(
    cal: &Calibration,
    errs: &[CalRow],
    types: &[PropertyType],
) -> HashMap<(&'static str, usize), f64> {
    let mut by: HashMap<(&'static str, usize), Vec<f64>> = HashMap::new();
    for ((logs, y, bits), t) in errs.iter().zip(types) {
        let avail = [logs[0].is_some(), logs[1].is_some(), logs[2].is_some()];
        let w = cal.weights(avail, *bits);
        if let Some(b) = blend(logs, &w) {
            by.entry((evidence_class(avail), type_slot(*t)))
                .or_default()
                .push((b - y).abs());
        }
    }
    by.into_iter()
        .filter(|(_, v)| v.len() >= MIN_CLASS_ERRORS)
        .filter_map(|(k, v)| Some((k, quantile(&v, AVM_COVERAGE)?)))
        .collect()
}

/// Accuracy of a set of valuations against the prices later paid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accuracy {
    pub n: usize,
    /// Median absolute percentage error, in per cent.
    pub mdape: f64,
    /// Share (per cent) of valuations within 10% and 20% of the price.
    pub ppe10: f64,
    pub ppe20: f64,
}

/// MdAPE, PPE10 and PPE20 of `(value, price)` pairs; `None` when empty.
pub fn accuracy(pairs: &[(f64, f64)]) -> Option<Accuracy> {
    let ape: Vec<f64> = pairs
        .iter()
        .filter(|(_, p)| *p > 0.0)
        .map(|(v, p)| (v - p).abs() / p)
        .collect();
    let n = ape.len();
    let within = |t: f64| 100.0 * ape.iter().filter(|a| **a <= t).count() as f64 / n as f64;
    Some(Accuracy {
        n,
        mdape: 100.0 * median(&ape)?,
        ppe10: within(0.10),
        ppe20: within(0.20),
    })
}

#[cfg(test)]
#[path = "avm_tests.rs"]
mod tests;
