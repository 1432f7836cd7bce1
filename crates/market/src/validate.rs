//! `cargo xtask validate index`: our local authority series against the official UK House Price
//! Index where both exist. For each authority: the months both cover, the correlation of their
//! monthly log changes, and the largest gap between their annual changes (percentage points).

use std::collections::HashMap;
use terrace_store::Db;
use terrace_store::market as mk;

use crate::MarketError;

#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub area_code: String,
    pub region_name: Option<String>,
    /// Months with a level in both series.
    pub months: usize,
    pub first: Option<String>,
    pub last: Option<String>,
    /// Pearson correlation of month-on-month log changes (months consecutive in both).
    pub corr_monthly_changes: Option<f64>,
    /// The largest |ours - UK HPI| of the 12-month change, in percentage points, and its month.
    pub max_annual_gap_pp: Option<(f64, String)>,
    pub index_method: Option<String>,
}

fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len();
    if n < 3 || n != y.len() {
        return None;
    }
    let mx = x.iter().sum::<f64>() / n as f64;
    let my = y.iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx).powi(2);
        syy += (b - my).powi(2);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// Previous month of `YYYY-MM`, and twelve months back.
fn back(ym: &str, months: i32) -> Option<String> {
    let m = terrace_analytics::Month::parse(ym).ok()?;
    Some(m.add_months(-months).to_string())
}

/// One comparison per local authority present in both the loaded UK HPI and the built indices.
pub async fn compare_with_hpi(db: &Db) -> Result<Vec<Comparison>, MarketError> {
    let mut hpi: HashMap<String, (Option<String>, HashMap<String, f64>)> = HashMap::new();
    for r in mk::hpi_all(db).await? {
        if let Some(i) = r.hpi_index {
            let e = hpi.entry(r.area_code.clone()).or_default();
            e.0 = e.0.take().or(r.region_name);
            e.1.insert(r.month, i);
        }
    }
    let mut out = Vec::new();
    let mut codes: Vec<&String> = hpi.keys().collect();
    codes.sort();
    for code in codes {
        let Some(geo) = mk::geography(db, &format!("la:{code}")).await? else {
            continue;
        };
        let ours: HashMap<String, f64> = mk::index_points(db, &geo.geography)
            .await?
            .into_iter()
            .filter(|p| !p.is_forecast)
            .filter_map(|p| Some((p.period, p.level?)))
            .collect();
        let (region, theirs) = &hpi[code];
        let mut both: Vec<&String> = ours.keys().filter(|m| theirs.contains_key(*m)).collect();
        both.sort();
        let (mut dx, mut dy) = (Vec::new(), Vec::new());
        let mut gap: Option<(f64, String)> = None;
        for m in &both {
            let pair = |k: i32| {
                let p = back(m, k)?;
                Some((ours.get(&p)?, theirs.get(&p)?))
            };
            if let Some((o, t)) = pair(1) {
                dx.push((ours[*m] / o).ln());
                dy.push((theirs[*m] / t).ln());
            }
            if let Some((o, t)) = pair(12) {
                let g = ((ours[*m] / o - 1.0) - (theirs[*m] / t - 1.0)).abs() * 100.0;
                if gap.as_ref().is_none_or(|(best, _)| g > *best) {
                    gap = Some((g, (*m).clone()));
                }
            }
        }
        out.push(Comparison {
            area_code: code.clone(),
            region_name: region.clone(),
            months: both.len(),
            first: both.first().map(|s| s.to_string()),
            last: both.last().map(|s| s.to_string()),
            corr_monthly_changes: pearson(&dx, &dy),
            max_annual_gap_pp: gap,
            index_method: geo.index_method.clone(),
        });
    }
    Ok(out)
}

/// The comparison as the operator's table.
pub fn table(rows: &[Comparison]) -> String {
    let mut s = String::from(
        "area_code  months  first    last     corr_monthly_changes  max_annual_gap_pp (month)  our_method\n",
    );
    for r in rows {
        s.push_str(&format!(
            "{:<10} {:<7} {:<8} {:<8} {:<21} {:<26} {}\n",
            r.area_code,
            r.months,
            r.first.as_deref().unwrap_or("-"),
            r.last.as_deref().unwrap_or("-"),
            r.corr_monthly_changes
                .map_or("-".into(), |c| format!("{c:.3}")),
            r.max_annual_gap_pp
                .as_ref()
                .map_or("-".into(), |(g, m)| format!("{g:.2} ({m})")),
            r.index_method.as_deref().unwrap_or("-"),
        ));
    }
    if rows.is_empty() {
        s.push_str("(no local authority is in both the loaded UK HPI and the built indices)\n");
    }
    s
}
