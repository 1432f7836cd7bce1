//! `cargo xtask build` for valuations: fits a vintage at the latest month of loaded sales and
//! writes one row per UPRN with a sale or an energy certificate, valued or refused.

use chrono::NaiveDateTime;
use std::collections::{BTreeSet, HashMap};
use terrace_analytics as an;
use terrace_store::Db;
use terrace_store::valuation::{self as vs, ValuationRow, VintageRow};

use crate::inputs::{self, Inputs, epc_type, tenure_code, type_code};
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
) -> Result<an::Subject, String> {
    let epc = inp.epc.get(&uprn).cloned();
    let floor_area = epc.as_ref().and_then(|e| e.floor_area);
    if let Some(s) = last {
        return Ok(an::Subject {
            floor_area_m2: floor_area,
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
        say("[valuation] no category A sales loaded: no vintage built");
        return Ok(report);
    };
    let index = inputs::published_indices(db, &inp).await?;
    let vintage = an::fit_vintage(&inp.sales, &index, through, MAX_CALIBRATION);
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
        let subject = match subject_of(&mut inp, u, last) {
            Ok(s) => s,
            Err(reason) => {
                row.refusal = Some(reason);
                report.refused += 1;
                rows.push(row);
                continue;
            }
        };
        row.district = Some(inp.districts[subject.area as usize].clone());
        row.property_type = Some(type_code(subject.property_type).to_string());
        row.tenure = Some(tenure_code(subject.tenure).to_string());
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
            }
            Err(r) => {
                report.refused += 1;
                row.refusal = Some(r.reason());
            }
        }
        rows.push(row);
    }
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
        calibration_json: calibration_json(&vintage.calibration).to_string(),
        built_at: now,
        source: SOURCE.to_string(),
        updated_at: now,
    };
    vs::replace_vintage(db, rows, vintage_row).await?;
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

/// The calibration as stored with the vintage.
pub fn calibration_json(c: &an::Calibration) -> serde_json::Value {
    let mut stacked: Vec<_> = c.stacked.iter().collect();
    stacked.sort_by_key(|(k, _)| **k);
    let mut widths: Vec<_> = c.half_width.iter().collect();
    widths.sort_by_key(|(k, _)| **k);
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
    })
}

fn pattern_name(p: u8) -> String {
    let names: Vec<&str> = an::Estimator::ALL
        .iter()
        .enumerate()
        .filter(|(i, _)| p & (1 << i) != 0)
        .map(|(_, e)| e.as_str())
        .collect();
    names.join("+")
}
