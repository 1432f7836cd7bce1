//! The housing-benefit cap: the Local Housing Allowance (LHA) of the broad rental market area
//! (BRMA) a property lies in. It caps housing benefit for private tenants; it is not a market rent.
//!
//! The BRMA comes from the loaded lookup at the most specific level it has for the property's
//! postcode (unit, then sector, then district); when that level names more than one BRMA the
//! block is `not_available` rather than a guess. Each category's rate is the newest one in force
//! on the day asked (`valid_from` on or before it; an undated rate counts only when no dated one
//! is in force).

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::{Postcode, Unavailable};
use terrace_store::Db;
use terrace_store::lha::{self, LhaRateRow};

use crate::PropertyError;

/// What a monthly equivalent of a weekly rate is: weekly × 52 / 12, as housing benefit converts.
const WEEKS_PER_YEAR: i64 = 52;

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LhaRate {
    /// `shared` (the shared accommodation rate) or `1` to `4` bedrooms.
    pub category: String,
    pub weekly_rate_gbp: f64,
    /// The weekly rate × 52 / 12, to the penny.
    pub monthly_equivalent_gbp: f64,
    pub valid_from: Option<NaiveDate>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HousingBenefitCap {
    /// Always `local_housing_allowance`: the cap on housing benefit, not a market rent.
    pub kind: &'static str,
    pub brma: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brma_code: Option<String>,
    /// The lookup level the BRMA was found at: `unit`, `sector` or `district`.
    pub matched_on: String,
    /// The postcode, sector or district that matched.
    pub matched_area: String,
    /// Every category in force, the shared accommodation rate first.
    pub rates: Vec<LhaRate>,
    /// The category for the property's bedrooms (4 for four or more), when they are known.
    pub applicable_category: Option<String>,
    pub source: String,
    pub note: &'static str,
}

const NOTE: &str = "Local Housing Allowance caps the housing benefit a private tenant can receive in this broad rental market area; it is not a market rent. The shared accommodation rate applies to most single claimants under 35.";

fn gbp(pence: i64) -> f64 {
    pence as f64 / 100.0
}

/// The newest rate in force on `today` per category, shared first then 1..4.
fn in_force(rates: Vec<LhaRateRow>, today: NaiveDate) -> Vec<LhaRateRow> {
    let mut out: Vec<LhaRateRow> = Vec::new();
    for cat in ["shared", "1", "2", "3", "4"] {
        let best = rates
            .iter()
            .filter(|r| r.category == cat && r.valid_from.is_none_or(|d| d <= today))
            .max_by_key(|r| r.valid_from);
        if let Some(r) = best {
            out.push(r.clone());
        }
    }
    out
}

/// The LHA block for a property at `postcode` with `bedrooms` (when known), on `today`.
pub async fn housing_benefit_cap(
    db: &Db,
    postcode: Option<&Postcode>,
    bedrooms: Option<i32>,
    today: NaiveDate,
) -> Result<Result<HousingBenefitCap, Unavailable>, PropertyError> {
    let Some(pc) = postcode else {
        return Ok(Err(Unavailable::new(
            "the property has no postcode, so its broad rental market area is unknown",
        )));
    };
    let levels = [
        ("unit", pc.as_str().to_string()),
        ("sector", pc.sector()),
        ("district", pc.outward().to_string()),
    ];
    let areas: Vec<String> = levels.iter().map(|(_, a)| a.clone()).collect();
    let found = lha::brmas_for_areas(db, &areas).await?;
    let Some((kind, area, entries)) = levels.iter().find_map(|(kind, area)| {
        let at: Vec<&lha::BrmaAreaRow> = found.iter().filter(|r| &r.area == area).collect();
        (!at.is_empty()).then_some((*kind, area, at))
    }) else {
        return Ok(Err(Unavailable::new(format!(
            "no broad rental market area is loaded for {pc}, its sector or its district"
        ))));
    };
    if entries.len() > 1 {
        let names: Vec<&str> = entries.iter().map(|e| e.brma.as_str()).collect();
        return Ok(Err(Unavailable::new(format!(
            "the {kind} {area} is split between broad rental market areas ({}) and the lookup has no finer entry for {pc}",
            names.join(", ")
        ))));
    }
    let brma = entries[0];
    let rates = in_force(lha::lha_rates_for(db, &brma.brma).await?, today);
    if rates.is_empty() {
        return Ok(Err(Unavailable::new(format!(
            "no Local Housing Allowance rate in force on {today} is loaded for the {} broad rental market area",
            brma.brma
        ))));
    }
    let source = rates[0].source.clone();
    let applicable_category = bedrooms
        .filter(|b| *b >= 1)
        .map(|b| b.min(4).to_string())
        .filter(|c| rates.iter().any(|r| &r.category == c));
    Ok(Ok(HousingBenefitCap {
        kind: "local_housing_allowance",
        brma: brma.brma.clone(),
        brma_code: brma
            .brma_code
            .clone()
            .or_else(|| rates.iter().find_map(|r| r.brma_code.clone())),
        matched_on: kind.to_string(),
        matched_area: area.clone(),
        rates: rates
            .into_iter()
            .map(|r| LhaRate {
                category: r.category,
                weekly_rate_gbp: gbp(r.weekly_rate_pence),
                // Rounded half up to the penny.
                monthly_equivalent_gbp: gbp((r.weekly_rate_pence * WEEKS_PER_YEAR + 6) / 12),
                valid_from: r.valid_from,
            })
            .collect(),
        applicable_category,
        source,
        note: NOTE,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(category: &str, pence: i64, from: Option<(i32, u32, u32)>) -> LhaRateRow {
        LhaRateRow {
            rate_key: String::new(),
            brma: "Exeter".into(),
            brma_code: None,
            category: category.into(),
            weekly_rate_pence: pence,
            valid_from: from.and_then(|(y, m, d)| NaiveDate::from_ymd_opt(y, m, d)),
            source: "test".into(),
            updated_at: chrono::NaiveDateTime::default(),
        }
    }

    #[test]
    fn newest_rate_in_force_wins_per_category() {
        let today = NaiveDate::from_ymd_opt(2025, 6, 1).expect("date");
        let got = in_force(
            vec![
                rate("2", 20_000, Some((2024, 4, 1))),
                rate("2", 21_000, Some((2025, 4, 1))),
                rate("2", 22_000, Some((2026, 4, 1))),
                rate("shared", 9_000, None),
                rate("1", 15_000, None),
                rate("1", 16_000, Some((2025, 4, 1))),
            ],
            today,
        );
        let got: Vec<(&str, i64)> = got
            .iter()
            .map(|r| (r.category.as_str(), r.weekly_rate_pence))
            .collect();
        assert_eq!(got, vec![("shared", 9_000), ("1", 16_000), ("2", 21_000)]);
    }
}
