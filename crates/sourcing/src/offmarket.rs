//! `POST /v1/sourcing/offmarket-owners`: the company owners of stock in an area, optionally
//! restricted to a strategy's stock, ranked by holding size, years held and equity, with company
//! status and the signals behind the rank.
//!
//! Companies only, by construction: the owners are the proprietors of company and overseas
//! company freehold titles (CCOD, OCOD) linked to the area's units. Units held by individuals, or
//! whose title did not link, are counted under `not_itemised` and never listed.

use crate::build::{Detail, years_since};
use crate::search::{ScoreComponent, UnitFacts, unit_facts};
use crate::strategy::{self, Asset, Component};
use crate::{SourcingCtx, SourcingError};
use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use terrace_core::Violation;
use terrace_core::cursor::CursorScope;
use terrace_core::registers::name_key;
use terrace_store::companies::companies_by_number;
use terrace_store::features::{self as ss, FeatureRow, FeatureScope};

/// Where the owners' stock is counted.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OwnersArea {
    Lad(String),
    District(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct OffmarketQuery {
    pub area: OwnersArea,
    pub strategy: Option<String>,
    pub overrides: Map<String, Value>,
    pub min_units: usize,
    pub limit: usize,
    pub cursor: Option<String>,
    pub today: NaiveDate,
}

/// One company owner of stock in the area.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OwnerRow {
    pub name: String,
    pub company_number: Option<String>,
    /// `ccod` (UK company) or `ocod` (overseas company).
    pub register: String,
    /// Companies House status (`Active`, `Liquidation`, ...); null when the company is not in
    /// the loaded Companies House file (or an overseas company without a UK number).
    pub company_status: Option<String>,
    /// Units held in the area (of the strategy's stock when one is given).
    pub units: usize,
    /// Sum of the valuations of the units with one, pounds; and how many had one.
    pub total_value: Option<f64>,
    pub units_valued: usize,
    /// Valuation minus the price the title records (else the last registered sale), nominal
    /// pounds, over the units with both; not net of any debt.
    pub total_equity: Option<f64>,
    pub units_with_equity: usize,
    pub average_years_held: Option<f64>,
    pub longest_years_held: Option<f64>,
    /// Units on a registered lease with under 80 years left.
    pub short_lease_units: usize,
    /// Units with a live sale listing.
    pub on_market_units: usize,
    pub score: f64,
    pub score_components: Vec<ScoreComponent>,
    /// Why the owner ranks where it does, in words; `none` when nothing stands out.
    pub signals: Vec<String>,
    /// Up to five of the units held, the most valuable first.
    pub sample_units: Vec<OwnerUnit>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OwnerUnit {
    pub uprn: i64,
    pub address: Option<String>,
    pub title_number: Option<String>,
    pub facts: UnitFacts,
}

/// What the ranking covers.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OwnersScope {
    /// Units in the area with features.
    pub units_in_area: i64,
    /// Units linked to a company or overseas company freehold title.
    pub units_itemised: i64,
    /// Units not linked to a company title: individually owned, or the title did not link.
    /// Counted, never listed.
    pub not_itemised: i64,
    /// `units_itemised` over `units_in_area`; null for an area with no units.
    pub share_itemised: Option<f64>,
    /// Owners before the `min_units` floor and paging.
    pub owners_found: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OffmarketAnswer {
    pub area: OwnersArea,
    pub strategy: Option<String>,
    pub filters: Option<Map<String, Value>>,
    pub min_units: usize,
    pub ranking: Vec<Component>,
    pub scope: OwnersScope,
    /// An owner's holdings outside the area are not summed here.
    pub national_portfolio: terrace_core::Unavailable,
    pub data: Vec<OwnerRow>,
    pub next_cursor: Option<String>,
    pub note: &'static str,
}

/// The components of an owner's score (weights sum to 1).
pub fn ranking() -> Vec<Component> {
    let c = |name, weight, column, (lo, hi): (f64, f64), unit, description| Component {
        name,
        weight,
        column,
        lo,
        hi,
        unit,
        description,
    };
    vec![
        c(
            "holding_size",
            0.4,
            "owner.units",
            (1.0, 20.0),
            "count",
            "More units held in the area rank higher, up to 20",
        ),
        c(
            "years_held",
            0.3,
            "owner.average_years_held",
            (5.0, 30.0),
            "years",
            "Longer average holding ranks higher, up to 30 years",
        ),
        c(
            "equity",
            0.3,
            "owner.equity_pct",
            (0.0, 200.0),
            "pct",
            "A larger equity over the prices paid ranks higher, up to 200%",
        ),
    ]
}

fn bad(path: &[&str], msg: String, input: Option<String>) -> SourcingError {
    let mut v = Violation::new(path, "value_error", format!("Value error, {msg}"));
    if let Some(i) = input {
        v = v.with_input(i);
    }
    SourcingError::Invalid(vec![v])
}

#[derive(Default)]
struct Acc<'a> {
    name: String,
    number: Option<String>,
    register: String,
    units: Vec<&'a FeatureRow>,
}

/// The strategy and its settings, when one is given.
fn resolve(
    q: &OffmarketQuery,
) -> Result<Option<(strategy::Strategy, strategy::Settings)>, SourcingError> {
    Ok(match &q.strategy {
        Some(id) => {
            let s = strategy::by_id(id).ok_or_else(|| {
                bad(
                    &["strategy"],
                    format!("strategy is one of {}", strategy::ids().join(", ")),
                    Some(id.clone()),
                )
            })?;
            if s.asset != Asset::Unit {
                return Err(bad(
                    &["strategy"],
                    format!("{id} finds parcels, not units: owners are ranked over units"),
                    Some(id.clone()),
                ));
            }
            let set = strategy::settings(&s, &q.overrides).map_err(SourcingError::Invalid)?;
            Some((s, set))
        }
        None => {
            if !q.overrides.is_empty() {
                return Err(bad(
                    &["strategy_overrides"],
                    "strategy_overrides needs a strategy".into(),
                    None,
                ));
            }
            None
        }
    })
}

/// The rules of a query that need the strategies.
pub fn validate(q: &OffmarketQuery) -> Result<(), Vec<Violation>> {
    match resolve(q) {
        Ok(_) => Ok(()),
        Err(SourcingError::Invalid(v)) => Err(v),
        Err(SourcingError::NotFound(_) | SourcingError::Store(_)) => Ok(()),
    }
}

/// Runs the ranking.
pub async fn offmarket_owners(
    ctx: &SourcingCtx,
    q: &OffmarketQuery,
) -> Result<OffmarketAnswer, SourcingError> {
    let strat = resolve(q)?;
    let fingerprint = (
        &q.area,
        strat.as_ref().map(|(s, set)| (s.id, set.to_json())),
        q.min_units,
    );
    let cursor = CursorScope::new("sourcing_offmarket_owners", &fingerprint);
    let after: Option<(i64, String)> = match cursor.decode_opt(q.cursor.as_deref()) {
        Ok(Some(p)) => match p.as_slice() {
            [a, b] => Some((a.parse().map_err(|_| cursor_malformed())?, b.clone())),
            _ => return Err(cursor_malformed()),
        },
        Ok(None) => None,
        Err(e) => return Err(e.into()),
    };
    let scope = match &q.area {
        OwnersArea::Lad(l) => {
            ctx.known_lad(l).await?;
            FeatureScope::Lad(l.clone())
        }
        OwnersArea::District(d) => FeatureScope::District(d.clone()),
    };
    let (units_in_area, units_itemised) = ss::scope_counts(&ctx.db, &scope).await?;
    if let OwnersArea::District(d) = &q.area
        && units_in_area == 0
    {
        return Err(SourcingError::NotFound(format!(
            "postcode district {d} (no unit of the register lies in it)"
        )));
    }
    let rows = ss::company_held_in(&ctx.db, &scope).await?;
    let kept: Vec<&FeatureRow> = rows
        .iter()
        .filter(|r| match &strat {
            None => true,
            Some((s, set)) => matches!(
                crate::search::unit_verdict(s, set, r, q.today),
                crate::search::Verdict::Pass
            ),
        })
        .collect();
    let mut groups: BTreeMap<String, Acc> = BTreeMap::new();
    for r in kept {
        let d = Detail::of(r);
        let name = d.owner_name.clone().unwrap_or_default();
        let key = match &r.owner_company_number {
            Some(n) => format!("n:{n}"),
            None => format!("k:{}", name_key(&name)),
        };
        let g = groups.entry(key).or_insert_with(|| Acc {
            name,
            number: r.owner_company_number.clone(),
            register: r.owner_register.clone().unwrap_or_default(),
            units: Vec::new(),
        });
        g.units.push(r);
    }
    let owners_found = groups.len();
    let numbers: Vec<String> = groups.values().filter_map(|g| g.number.clone()).collect();
    let statuses: BTreeMap<String, Option<String>> = companies_by_number(&ctx.db, &numbers)
        .await?
        .into_iter()
        .map(|c| (c.company_number, c.status))
        .collect();
    let comps = ranking();
    let mut out: Vec<OwnerRow> = groups
        .into_iter()
        .filter(|(_, g)| g.units.len() >= q.min_units)
        .map(|(_, g)| owner_row(g, &statuses, &comps))
        .collect();
    let key = |o: &OwnerRow| {
        (
            -((o.score * 10_000.0).round() as i64),
            format!("{}|{}", o.company_number.as_deref().unwrap_or(""), o.name),
        )
    };
    out.sort_by_key(key);
    if let Some(a) = &after {
        out.retain(|o| key(o) > *a);
    }
    let mut next_cursor = None;
    if out.len() > q.limit {
        out.truncate(q.limit);
        next_cursor = out.last().map(|o| {
            let (s, k) = key(o);
            cursor.encode(&[s.to_string(), k])
        });
    }
    Ok(OffmarketAnswer {
        area: q.area.clone(),
        strategy: strat.as_ref().map(|(s, _)| s.id.to_string()),
        filters: strat.as_ref().map(|(_, set)| set.to_json()),
        min_units: q.min_units,
        ranking: comps,
        scope: OwnersScope {
            units_in_area,
            units_itemised,
            not_itemised: units_in_area - units_itemised,
            share_itemised: (units_in_area > 0).then(|| {
                ((units_itemised as f64 / units_in_area as f64) * 10_000.0).round() / 10_000.0
            }),
            owners_found,
        },
        national_portfolio: terrace_core::Unavailable::new(
            "an owner's holdings outside the area are not summed here: read them with GET /v1/ownership/company/{company_number}",
        ),
        data: out,
        next_cursor,
        note: "Companies only, by construction: owners are the proprietors of company and overseas company freehold titles (HM Land Registry CCOD and OCOD) linked to the area's units, grouped by company number. Units owned by individuals are not in those registers: they are counted under scope.not_itemised and never listed. Report scope.share_itemised with any figure. Equity is the valuation over the price paid, nominal and not net of any debt.",
    })
}

fn cursor_malformed() -> SourcingError {
    bad(
        &["cursor"],
        "cursor must be the next_cursor of a previous answer, unchanged".into(),
        None,
    )
}

fn owner_row(
    g: Acc<'_>,
    statuses: &BTreeMap<String, Option<String>>,
    comps: &[Component],
) -> OwnerRow {
    let n = g.units.len();
    let values: Vec<f64> = g.units.iter().filter_map(|r| r.value).collect();
    let equity: Vec<(f64, f64)> = g
        .units
        .iter()
        .filter_map(|r| {
            let paid = r
                .owner_price_paid
                .or(r.last_sale_price)
                .filter(|p| *p > 0)? as f64;
            Some((r.value? - paid, paid))
        })
        .collect();
    let years: Vec<f64> = g
        .units
        .iter()
        .filter_map(|r| r.owner_since.map(|d| years_since(d, r.as_of)))
        .collect();
    let avg_years =
        (!years.is_empty()).then(|| round1(years.iter().sum::<f64>() / years.len() as f64));
    let longest = years
        .iter()
        .copied()
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    let equity_pct = (!equity.is_empty()).then(|| {
        let gain: f64 = equity.iter().map(|e| e.0).sum();
        let paid: f64 = equity.iter().map(|e| e.1).sum();
        round1(gain / paid * 100.0)
    });
    let short = g
        .units
        .iter()
        .filter(|r| r.lease_years.is_some_and(|y| y < 80.0))
        .count();
    let on_market = g.units.iter().filter(|r| r.asking_price.is_some()).count();
    let measure = |col: &str| match col {
        "owner.units" => Some(n as f64),
        "owner.average_years_held" => avg_years,
        "owner.equity_pct" => equity_pct,
        _ => None,
    };
    let (score, score_components) = crate::search::score(comps, &measure);
    let status = g
        .number
        .as_ref()
        .and_then(|num| statuses.get(num).cloned().flatten());
    let mut signals = Vec::new();
    if n >= 5 {
        signals.push(format!("holds {n} units in the area"));
    }
    if let Some(y) = longest.filter(|y| *y >= 15.0) {
        signals.push(format!("held one unit for {y:.1} years"));
    }
    if let Some(p) = equity_pct.filter(|p| *p >= 50.0) {
        signals.push(format!("paper equity {p:.0}% over the prices paid"));
    }
    if short > 0 {
        signals.push(format!("{short} unit(s) on a lease under 80 years"));
    }
    if on_market > 0 {
        signals.push(format!("{on_market} unit(s) already on the market"));
    }
    if let Some(s) = status
        .as_deref()
        .filter(|s| !s.eq_ignore_ascii_case("active"))
    {
        signals.push(format!("company status: {s}"));
    }
    if signals.is_empty() {
        signals.push("none".into());
    }
    let mut sample: Vec<&FeatureRow> = g.units.clone();
    sample.sort_by(|a, b| {
        b.value
            .unwrap_or(-1.0)
            .total_cmp(&a.value.unwrap_or(-1.0))
            .then(a.uprn.cmp(&b.uprn))
    });
    let sample_units = sample
        .into_iter()
        .take(5)
        .map(|r| {
            let d = Detail::of(r);
            OwnerUnit {
                uprn: r.uprn,
                address: d.address.clone(),
                title_number: d.owner_title.clone(),
                facts: unit_facts(r, &d),
            }
        })
        .collect();
    OwnerRow {
        name: g.name,
        company_number: g.number,
        register: g.register,
        company_status: status,
        units: n,
        total_value: (!values.is_empty()).then(|| values.iter().sum::<f64>().round()),
        units_valued: values.len(),
        total_equity: (!equity.is_empty()).then(|| equity.iter().map(|e| e.0).sum::<f64>().round()),
        units_with_equity: equity.len(),
        average_years_held: avg_years,
        longest_years_held: longest.map(round1),
        short_lease_units: short,
        on_market_units: on_market,
        score,
        score_components,
        signals,
        sample_units,
    }
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}
