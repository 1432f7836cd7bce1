//! `cargo xtask build` for valuations: fits a vintage at the latest month of loaded sales and
//! writes one row per UPRN with a sale or an energy certificate, valued or refused.

use chrono::NaiveDateTime;
use std::collections::{BTreeSet, HashMap};
use terrace_analytics as an;
use terrace_store::Db;
use terrace_store::valuation::{self as vs, ComparableRow, ValuationRow, VintageRow};

use crate::backtest::{self, Valued};
use crate::inputs::{self, Inputs, epc_type};
use crate::{MODEL_VERSION, SOURCE, ValuationError};

/// At most this many calibration sales per vintage (a deterministic spread).
pub const MAX_CALIBRATION: usize = 20_000;

/// What a build did, for the operator.
#[derive(Debug, Clone, Default)]
pub struct BuildReport {
    pub as_of: Option<String>,
    pub considered: usize,
    pub valued: usize,
    pub refused: usize,
    pub n_calibration: usize,
    pub calibration_coverage: Option<f64>,
}

/// The subject of a UPRN: its last sale's attributes, else its certificate's; `Err` with the
/// refusal when its type or district cannot be read.
fn subject_of(
    inp: &mut Inputs,
    uprn: i64,
    last: Option<&an::AvmSale>,
    on: Option<chrono::NaiveDate>,
) -> Result<an::Subject, String> {
    let epc = inp.epc.get(&uprn).cloned();
    let floor_area = epc.as_ref().and_then(|e| e.floor_area);
    if let Some(s) = last {
        let mut attrs = s.attrs;
        attrs.relisted = None;
        // The lease's unexpired term at the vintage, not at the last sale.
        if s.tenure == an::Tenure::Leasehold {
            attrs.lease_years = on.and_then(|d| inp.lease_years(uprn, d));
        }
        return Ok(an::Subject {
            floor_area_m2: floor_area,
            attrs,
            ..an::Subject::of_sale(s)
        });
    }
    let reg = inp.register.get(&uprn).cloned();
    let postcode = epc
        .as_ref()
        .and_then(|e| e.postcode.clone())
        .or_else(|| reg.as_ref().and_then(|r| r.1.clone()));
    let Some(area) = inp.district_of(postcode.as_deref()) else {
        return Err("no postcode on record to place the property in a district".into());
    };
    let Some(property_type) = epc
        .as_ref()
        .and_then(|e| epc_type(e.property_type.as_deref(), e.built_form.as_deref()))
    else {
        return Err(
            "property type unknown: no registered sale and no energy certificate type".into(),
        );
    };
    let district = inp.districts[area as usize].clone();
    let position = inp.position_of(uprn, postcode.as_deref());
    Ok(an::Subject {
        property: uprn as u64,
        area,
        building: reg.as_ref().and_then(|r| r.0).map(|p| p as u64),
        street: reg
            .as_ref()
            .and_then(|r| inputs::street_key(&district, r.2.as_deref())),
        property_type,
        tenure: an::Tenure::Unknown,
        floor_area_m2: floor_area,
        position,
        attrs: epc.as_ref().map(|e| e.attributes()).unwrap_or_default(),
    })
}

/// Builds the live vintage from what is loaded; `now` stamps the rows.
pub async fn build(
    db: &Db,
    now: NaiveDateTime,
    say: &mut dyn FnMut(&str),
) -> Result<BuildReport, ValuationError> {
    let started = std::time::Instant::now();
    let mut inp = inputs::gather(db).await?;
    let mut report = BuildReport::default();
    let Some(through) = inp.through else {
        vs::replace_vintage_rows(db, Vec::new()).await?;
        vs::replace_comparables(db, Vec::new()).await?;
        say("[valuation] no category A sales loaded: no vintage built");
        return Ok(report);
    };
    let mut phase = std::time::Instant::now();
    let mut lap = |what: &str, say: &mut dyn FnMut(&str)| {
        say(&format!(
            "[valuation] {what} in {:.1}s",
            phase.elapsed().as_secs_f64()
        ));
        phase = std::time::Instant::now();
    };
    lap(
        &format!(
            "inputs: {} sales ({} relisted, {} not, by their listings), {} certificates, {} UPRNs with leases",
            inp.sales.len(),
            inp.relist_counts.0,
            inp.relist_counts.1,
            inp.epc.len(),
            inp.leases.len()
        ),
        say,
    );
    let index = inputs::published_indices(db, &inp).await?;
    let live = live_vintage_scores(db, &inp.sales, through, now).await?;
    lap("indices and live-vintage scores", say);
    let vintage = an::fit_vintage(&inp.sales, &index, through, MAX_CALIBRATION);
    lap("hedonic fit and calibration", say);
    let on = chrono::NaiveDate::from_ymd_opt(through.year(), through.month(), 1);
    let sales = std::mem::take(&mut inp.sales);
    let hist = an::History::new(&sales);
    // The UPRNs to value: every one with a category A sale or a certificate.
    let mut uprns: BTreeSet<i64> = sales
        .iter()
        .filter_map(|s| Inputs::uprn_of(s.property))
        .collect();
    uprns.extend(inp.epc.keys().copied());
    let mut last_of: HashMap<i64, &an::AvmSale> = HashMap::new();
    for s in &sales {
        if let Some(u) = Inputs::uprn_of(s.property) {
            let e = last_of.entry(u).or_insert(s);
            if (s.month, s.price) > (e.month, e.price) {
                *e = s;
            }
        }
    }
    let as_of = through.to_string();
    let mut rows = Vec::with_capacity(uprns.len());
    let mut comparables = Vec::new();
    for u in uprns {
        let last = last_of.get(&u).copied();
        let mut row = ValuationRow {
            uprn: u,
            model_version: MODEL_VERSION.to_string(),
            as_of: as_of.clone(),
            district: None,
            property_type: None,
            tenure: None,
            floor_area: None,
            floor_area_source: None,
            value: None,
            lo: None,
            hi: None,
            coverage: None,
            evidence_class: None,
            weight_anchor: None,
            weight_comparables: None,
            weight_hedonic: None,
            estimate_anchor: None,
            estimate_comparables: None,
            estimate_hedonic: None,
            n_comparables: None,
            n_comparables_fenced: None,
            n_hedonic: None,
            hedonic_pooled: None,
            last_sale_price: inp.last_sale.get(&u).map(|s| s.1),
            last_sale_date: inp.last_sale.get(&u).map(|s| s.0),
            refusal: None,
            source: SOURCE.to_string(),
            updated_at: now,
        };
        let subject = match subject_of(&mut inp, u, last, on) {
            Ok(s) => s,
            Err(reason) => {
                row.refusal = Some(reason);
                report.refused += 1;
                rows.push(row);
                continue;
            }
        };
        row.district = Some(inp.districts[subject.area as usize].clone());
        row.property_type = Some(subject.property_type.code().to_string());
        row.tenure = Some(subject.tenure.code().to_string());
        row.floor_area = subject.floor_area_m2;
        row.floor_area_source = subject.floor_area_m2.map(|_| "epc_unit".to_string());
        match an::value(&vintage, &subject, &hist, &index) {
            Ok(v) => {
                report.valued += 1;
                row.value = Some(v.value);
                row.lo = v.lo;
                row.hi = v.hi;
                row.coverage = v.lo.map(|_| an::AVM_COVERAGE);
                row.evidence_class = Some(v.class.to_string());
                row.weight_anchor = Some(v.weights[0]);
                row.weight_comparables = Some(v.weights[1]);
                row.weight_hedonic = Some(v.weights[2]);
                row.estimate_anchor = v.estimates.logs[0].map(f64::exp);
                row.estimate_comparables = v.estimates.logs[1].map(f64::exp);
                row.estimate_hedonic = v.estimates.logs[2].map(f64::exp);
                row.n_comparables = Some(v.estimates.comps.n_before_fence as i64);
                row.n_comparables_fenced = Some(v.estimates.comps.n_after_fence as i64);
                row.n_hedonic = v.estimates.hedonic.map(|h| h.0 as i64);
                row.hedonic_pooled = v.estimates.hedonic.map(|h| h.1);
                comparables.extend(comparable_rows(u, &v.estimates.comps, &inp.districts, now));
            }
            Err(r) => {
                report.refused += 1;
                row.refusal = Some(r.reason());
            }
        }
        rows.push(row);
    }
    lap(
        &format!(
            "valued {} UPRNs ({} ledger lines)",
            rows.len(),
            comparables.len()
        ),
        say,
    );
    report.considered = rows.len();
    report.as_of = Some(as_of.clone());
    report.n_calibration = vintage.calibration.n_calibration;
    report.calibration_coverage = vintage.calibration.calibration_coverage;
    let vintage_row = VintageRow {
        vintage_key: format!("{MODEL_VERSION}|{as_of}"),
        model_version: MODEL_VERSION.to_string(),
        as_of: as_of.clone(),
        n_valued: report.valued as i64,
        n_refused: report.refused as i64,
        n_calibration: vintage.calibration.n_calibration as i64,
        calibration_coverage: vintage.calibration.calibration_coverage,
        calibration_json: vintage_json(&vintage).to_string(),
        built_at: now,
        source: SOURCE.to_string(),
        updated_at: now,
    };
    vs::replace_vintage(db, rows, comparables, vintage_row).await?;
    lap("rows and ledgers written", say);
    if let Some((prev, n_sales, rows)) = live {
        let n_rows = vs::upsert_accuracy(db, rows).await?;
        say(&format!(
            "[valuation] live vintage {prev} scored on {n_sales} later sales: {n_rows} accuracy rows"
        ));
    }
    say(&format!(
        "[valuation] vintage {as_of} ({MODEL_VERSION}): {} valued, {} refused of {} UPRNs; {} calibration sales, interval coverage {} in {:.1}s",
        report.valued,
        report.refused,
        report.considered,
        report.n_calibration,
        report
            .calibration_coverage
            .map_or("not measured".to_string(), |c| format!("{:.1}%", 100.0 * c)),
        started.elapsed().as_secs_f64()
    ));
    Ok(report)
}

/// When the vintage about to be replaced is older than `through`, scores it against the sales
/// of its valued UPRNs completed after its month (registered after it: Price Paid carries no
/// registration date) up to `through`: accuracy rows with basis `live_vintage`, keyed by the
/// scored vintage so that vintages accumulate. Returns the scored vintage, the sales compared
/// and the rows; `None` when there is no earlier vintage or nothing sold since.
async fn live_vintage_scores(
    db: &Db,
    sales: &[an::AvmSale],
    through: an::Month,
    now: NaiveDateTime,
) -> Result<Option<(String, usize, Vec<vs::AccuracyRow>)>, ValuationError> {
    let Some(prev) = vs::latest_vintage(db).await? else {
        return Ok(None);
    };
    let Ok(prev_month) = an::Month::parse(&prev.as_of) else {
        return Ok(None);
    };
    if prev_month >= through || prev.model_version != MODEL_VERSION {
        return Ok(None);
    }
    let later: Vec<(i64, &an::AvmSale)> = sales
        .iter()
        .filter(|s| s.month > prev_month && s.month <= through && s.price > 0)
        .filter_map(|s| Some((Inputs::uprn_of(s.property)?, s)))
        .collect();
    if later.is_empty() {
        return Ok(None);
    }
    let mut wanted: Vec<i64> = later.iter().map(|(u, _)| *u).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let held: HashMap<i64, ValuationRow> = vs::valuations_of(db, &wanted)
        .await?
        .into_iter()
        .filter(|r| r.as_of == prev.as_of)
        .map(|r| (r.uprn, r))
        .collect();
    let valued: Vec<Valued> = later
        .iter()
        .filter_map(|(u, s)| {
            let r = held.get(u)?;
            Some(Valued {
                month: s.month,
                property_type: s.property_type,
                resale: r.last_sale_date.is_some(),
                price: s.price as f64,
                model: Some(r.value?),
                interval: r.lo.zip(r.hi),
                anchor: r.estimate_anchor,
                median: None,
            })
        })
        .collect();
    if valued.is_empty() {
        return Ok(None);
    }
    let lines = backtest::table(&valued);
    let rows = backtest::accuracy_rows(
        &lines,
        "live_vintage",
        &format!("live_vintage|{}", prev.as_of),
        now,
    );
    Ok(Some((prev.as_of, valued.len(), rows)))
}

/// The ledger rows of one valued UPRN's comparable estimator.
fn comparable_rows(
    uprn: i64,
    comps: &an::CompsEvidence,
    districts: &[String],
    now: NaiveDateTime,
) -> Vec<ComparableRow> {
    comps
        .lines
        .iter()
        .enumerate()
        .map(|(i, l)| ComparableRow {
            uprn,
            line: i as i32,
            comp_uprn: Inputs::uprn_of(l.property),
            sale_month: l.month.to_string(),
            price: l.price,
            property_type: l.property_type.code().to_string(),
            floor_area: l.floor_area_m2,
            tier: l.tier.to_string(),
            distance_m: l.distance_m,
            index_geography: match districts.get(l.area as usize) {
                Some(d) if !l.fallback_index => format!("district:{d}"),
                _ => "national:UK".to_string(),
            },
            time_factor: l.time_factor,
            size_factor: l.size_factor,
            adjusted: l.adjusted,
            kept: l.kept,
            fence_lo: comps.fence.map(|f| f.0),
            fence_hi: comps.fence.map(|f| f.1),
            source: SOURCE.to_string(),
            updated_at: now,
        })
        .collect()
}

/// The calibration as stored with the vintage.
pub fn calibration_json(c: &an::Calibration) -> serde_json::Value {
    let mut stacked: Vec<_> = c.stacked.iter().collect();
    stacked.sort_by_key(|(k, _)| **k);
    let mut widths: Vec<_> = c.half_width.iter().collect();
    widths.sort_by_key(|(k, _)| **k);
    let mut by_type: Vec<_> = c.half_width_type.iter().collect();
    by_type.sort_by_key(|(k, _)| **k);
    serde_json::json!({
        "coverage": an::AVM_COVERAGE,
        "n_calibration": c.n_calibration,
        "calibration_coverage": c.calibration_coverage,
        "mse": {
            "transaction_anchor": c.mse[0],
            "comparables": c.mse[1],
            "hedonic": c.mse[2],
        },
        "n_errors": c.n_errors,
        "stacked_weights": stacked.iter().map(|(k, w)| serde_json::json!({
            "pattern": pattern_name(**k),
            "weights": w,
        })).collect::<Vec<_>>(),
        "log_half_width": widths.iter().map(|(k, w)| serde_json::json!({"class": k, "half_width": w})).collect::<Vec<_>>(),
        "log_half_width_all": c.half_width_all,
        "log_half_width_by_type": by_type.iter().map(|((k, t), w)| serde_json::json!({"class": k, "type": (["D", "S", "T", "F", "O"].get(*t)), "half_width": w})).collect::<Vec<_>>(),
    })
}

/// The calibration and the relisting penalty, as stored with the vintage.
pub fn vintage_json(v: &an::Vintage) -> serde_json::Value {
    let mut j = calibration_json(&v.calibration);
    let r = &v.hedonic.relisting;
    let reason = match r.log_factor {
        Some(_) => format!(
            "measured on this vintage's resales: the median log price over the index-anchored previous sale is {:.4} for {} relisted sales and {:.4} for {} not relisted; a relisted comparable is multiplied by exp of the difference",
            r.median_relisted.unwrap_or_default(),
            r.n_relisted,
            r.median_not_relisted.unwrap_or_default(),
            r.n_not_relisted
        ),
        None => format!(
            "no relisting penalty is applied: it needs {} relisted and {} not-relisted resales with listings linked, and this vintage has {} and {}",
            an::MIN_RELIST_EVIDENCE,
            an::MIN_RELIST_EVIDENCE,
            r.n_relisted,
            r.n_not_relisted
        ),
    };
    j["relisting"] = serde_json::json!({
        "applied": r.log_factor.is_some(),
        "factor": r.factor(),
        "n_relisted": r.n_relisted,
        "n_not_relisted": r.n_not_relisted,
        "median_log_residual_relisted": r.median_relisted,
        "median_log_residual_not_relisted": r.median_not_relisted,
        "min_evidence": an::MIN_RELIST_EVIDENCE,
        "reason": reason,
    });
    j["resale_correction"] = match &v.hedonic.correction {
        Some(c) => serde_json::json!({
            "applied": true,
            "n_pairs": c.n_pairs,
            "coefficients": an::CORRECTION_COLUMNS
                .iter()
                .zip(c.beta)
                .map(|(n, b)| (n.to_string(), serde_json::json!(b)))
                .collect::<serde_json::Map<_, _>>(),
            "type_steps": {
                "years": an::TYPE_STEP_YEARS,
                "ridge_pairs": an::TYPE_STEP_RIDGE_PAIRS,
                "pairs": c.type_steps.pairs,
                "steps_by_type": (["D", "S", "T", "F", "O"]
                    .iter()
                    .zip(&c.type_steps.steps)
                    .map(|(t, v)| (t.to_string(), serde_json::json!(v)))
                    .collect::<serde_json::Map<_, _>>()),
            },
            "local_trends": {
                "sectors": local_trends_json(&c.sectors),
                "streets": local_trends_json(&c.streets),
                "min_groups": an::MIN_TREND_GROUPS,
            },
        }),
        None => serde_json::json!({
            "applied": false,
            "reason": format!(
                "the resale correction needs {} repeat pairs in the hedonic window",
                an::MIN_CORRECTION_PAIRS
            ),
        }),
    };
    j
}

/// One level of the resale correction's local trends, as the vintage's JSON says it.
fn local_trends_json(t: &an::LocalTrends) -> serde_json::Value {
    serde_json::json!({
        "groups": t.groups,
        "with_own_trend": t.slopes.len(),
        "trend_sd_per_year": t.sd,
    })
}

fn pattern_name(p: u8) -> String {
    let names: Vec<&str> = an::Estimator::ALL
        .iter()
        .enumerate()
        .filter(|(i, _)| p & (1 << i) != 0)
        .map(|(_, e)| e.as_str())
        .collect();
    let mut name = names.join("+");
    if p & 8 != 0 {
        name.push_str(&format!(
            " (anchor sale older than {} months)",
            an::ANCHOR_OLD_MONTHS
        ));
    }
    if p & 16 != 0 {
        name.push_str(&format!(
            " (own-sales estimate of {} or more sales)",
            an::ANCHOR_MULTI_SALES
        ));
    }
    if p & 32 != 0 {
        name.push_str(" (hedonic estimate without a floor area)");
    }
    if p & 64 != 0 {
        name.push_str(&format!(
            " (anchor sale older than {} months)",
            an::ANCHOR_VERY_OLD_MONTHS
        ));
    }
    name
}
