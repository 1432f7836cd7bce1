//! `GET /v1/market/area-report`: one document for an area. The authority-keyed half (sourcing
//! readiness per strategy, the commercial market with its capital and rent indices and rated
//! stock, the planning decision record) needs `lad_code`; the district-keyed half (the live
//! listing stock) needs `postcode_district`. The two scopes are different areas and are said to
//! be; a half whose key was not given, or whose data is not loaded, is `not_available` with the
//! reason and named in `sections_degraded`.

use crate::strategy::{self, DataReady};
use crate::{SourcingCtx, SourcingError};
use chrono::{Datelike, NaiveDate};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use terrace_commercial::market::CommercialMarket;
use terrace_commercial::{Block, Sector};
use terrace_core::Unavailable;
use terrace_listings::demand::LiveStock;
use terrace_listings::market::{Answer, Channel};
use terrace_store::LookupError;
use terrace_store::listings::ListingArea;

#[derive(Debug, Clone, PartialEq)]
pub struct ReportQuery {
    /// A local authority's GSS code.
    pub lad_code: Option<String>,
    /// A postcode district.
    pub postcode_district: Option<String>,
    pub sector: Sector,
    pub today: NaiveDate,
}

/// One strategy's readiness in the authority.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StrategyReadiness {
    pub strategy: &'static str,
    pub name: &'static str,
    pub data_ready: DataReady,
}

/// Decisions of one year.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DecisionYear {
    pub year: i32,
    pub decided: i64,
    pub approved: i64,
    pub refused: i64,
    /// Withdrawn, split, prior approval not required, and other outcomes.
    pub other: i64,
    /// Approved over approved plus refused; null when neither.
    pub approval_rate: Option<f64>,
}

/// The authority's planning decision record from the loaded applications.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DecisionRecord {
    /// Whether official planning data (planning.data.gov.uk) covers the authority:
    /// `covered`, `not_covered` or `not_loaded` (no coverage list).
    pub coverage: &'static str,
    pub applications: i64,
    /// Applications with no decision recorded yet.
    pub undecided: i64,
    /// The last five years with decisions, newest first.
    pub years: Vec<DecisionYear>,
    pub basis: &'static str,
}

/// The live listing stock of the district.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ListingStock {
    pub district: String,
    pub sale: Option<LiveStock>,
    pub rent: Option<LiveStock>,
    pub observed_since: Option<NaiveDate>,
    pub basis: &'static str,
}

/// The two scopes of the report.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Scopes {
    /// `lad:<GSS code>`: readiness, the commercial market and the planning record.
    pub authority: Option<String>,
    /// The postcode district: the live listing stock.
    pub district: Option<String>,
    pub note: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AreaReport {
    pub scopes: Scopes,
    pub sector: Sector,
    pub sourcing_readiness: Block<Vec<StrategyReadiness>>,
    pub commercial_market: Block<Box<CommercialMarket>>,
    pub planning_decisions: Block<DecisionRecord>,
    pub listing_stock: Block<ListingStock>,
    /// The sections that could not be filled, by name.
    pub sections_degraded: Vec<&'static str>,
    pub generated_on: NaiveDate,
}

const SCOPES_NOTE: &str = "THE TWO SCOPES ARE NOT INTERCHANGEABLE: sourcing readiness, the commercial market and the planning record are keyed on the local authority (lad_code); the live listing stock on the postcode district (postcode_district). A district may straddle authorities: never read one half as a figure of the other's area.";

fn na(reason: impl Into<String>) -> Unavailable {
    Unavailable::new(reason)
}

fn lookup(e: LookupError) -> SourcingError {
    match e {
        LookupError::NotFound(w) => SourcingError::NotFound(w),
        LookupError::Store(s) => SourcingError::Store(s),
    }
}

/// Builds the report.
pub async fn area_report(ctx: &SourcingCtx, q: &ReportQuery) -> Result<AreaReport, SourcingError> {
    let mut degraded = Vec::new();
    let mut authority = None;
    if let Some(l) = &q.lad_code {
        authority = Some(ctx.known_lad(l).await?.to_string());
    }
    if let Some(d) = &q.postcode_district
        && !terrace_store::listings::area_known(&ctx.db, &ListingArea::PostcodePrefix(d.clone()))
            .await?
    {
        return Err(SourcingError::NotFound(format!(
            "postcode district {d} (no postcode, address or listing lies in it)"
        )));
    }
    let no_lad = || na("lad_code was not given: this section is keyed on the local authority");
    let sourcing_readiness = match &q.lad_code {
        None => Block::NotAvailable(no_lad()),
        Some(l) => {
            let s = strategy::strategies(ctx, Some(l)).await?;
            let rows: Vec<StrategyReadiness> = s
                .strategies
                .into_iter()
                .filter_map(|x| {
                    Some(StrategyReadiness {
                        strategy: x.id,
                        name: x.name,
                        data_ready: x.data_ready?,
                    })
                })
                .collect();
            if rows
                .iter()
                .all(|r| r.data_ready.status == strategy::Readiness::Unknown)
            {
                Block::NotAvailable(na(
                    "the authority has no coverage register row (nothing of it was loaded when the register was last built)",
                ))
            } else {
                Block::Available(rows)
            }
        }
    };
    let commercial_market = match &q.lad_code {
        None => Block::NotAvailable(no_lad()),
        Some(l) => {
            let area = terrace_commercial::resolve_authority(&ctx.db, l)
                .await
                .map_err(lookup)?;
            let m = terrace_commercial::market::commercial_market(&ctx.db, area, q.sector)
                .await
                .map_err(lookup)?;
            Block::Available(Box::new(m))
        }
    };
    let planning_decisions = match &q.lad_code {
        None => Block::NotAvailable(no_lad()),
        Some(l) => decisions(ctx, l, q.today).await?,
    };
    let listing_stock = match &q.postcode_district {
        None => Block::NotAvailable(na(
            "postcode_district was not given: the live listing stock is keyed on the postcode district",
        )),
        Some(d) => stock(ctx, d).await?,
    };
    let commercial_degraded = match &commercial_market {
        Block::Available(m) => matches!(m.rated_stock, Block::NotAvailable(_)),
        Block::NotAvailable(_) => true,
    };
    for (name, bad) in [
        (
            "sourcing_readiness",
            matches!(sourcing_readiness, Block::NotAvailable(_)),
        ),
        ("commercial_market", commercial_degraded),
        (
            "planning_decisions",
            matches!(planning_decisions, Block::NotAvailable(_)),
        ),
        (
            "listing_stock",
            matches!(listing_stock, Block::NotAvailable(_)),
        ),
    ] {
        if bad {
            degraded.push(name);
        }
    }
    Ok(AreaReport {
        scopes: Scopes {
            authority,
            district: q.postcode_district.clone(),
            note: SCOPES_NOTE,
        },
        sector: q.sector,
        sourcing_readiness,
        commercial_market,
        planning_decisions,
        listing_stock,
        sections_degraded: degraded,
        generated_on: q.today,
    })
}

/// The decision record of an authority's loaded applications (by GSS code and, where the
/// coverage list names it, its planning.data organisation).
async fn decisions(
    ctx: &SourcingCtx,
    lad: &str,
    today: NaiveDate,
) -> Result<Block<DecisionRecord>, SourcingError> {
    use terrace_store::planning as pl;
    let cov = pl::coverage_by_code(&ctx.db, &[lad.to_string()]).await?;
    let listed = pl::coverage_count(&ctx.db).await? > 0;
    let mut authorities = vec![lad.to_string()];
    authorities.extend(cov.iter().filter_map(|c| c.organisation.clone()));
    let rows = terrace_store::features::decisions_of(&ctx.db, &authorities).await?;
    let coverage = match (cov.is_empty(), listed) {
        (false, _) => "covered",
        (true, true) => "not_covered",
        (true, false) => "not_loaded",
    };
    if rows.is_empty() {
        return Ok(Block::NotAvailable(na(format!(
            "no planning application naming the authority is loaded (official planning data coverage: {coverage})"
        ))));
    }
    let mut years: BTreeMap<i32, DecisionYear> = BTreeMap::new();
    let mut undecided = 0;
    for (date, decision) in &rows {
        let (Some(d), Some(dec)) = (date, decision.as_deref()) else {
            undecided += 1;
            continue;
        };
        let y = years.entry(d.year()).or_insert(DecisionYear {
            year: d.year(),
            decided: 0,
            approved: 0,
            refused: 0,
            other: 0,
            approval_rate: None,
        });
        y.decided += 1;
        let l = dec.to_ascii_lowercase();
        if l.contains("refus") {
            y.refused += 1;
        } else if l.contains("approv") || l.contains("grant") || l.contains("permit") {
            y.approved += 1;
        } else {
            y.other += 1;
        }
    }
    let mut out: Vec<DecisionYear> = years
        .into_values()
        .rev()
        .filter(|y| y.year <= today.year())
        .take(5)
        .collect();
    for y in &mut out {
        let n = y.approved + y.refused;
        y.approval_rate =
            (n > 0).then(|| ((y.approved as f64 / n as f64) * 1000.0).round() / 1000.0);
    }
    Ok(Block::Available(DecisionRecord {
        coverage,
        applications: rows.len() as i64,
        undecided,
        years: out,
        basis: "planning applications loaded from planning.data.gov.uk (and any operator file) naming the authority, counted by the year of their decision date; a decision reading 'refus...' is refused, 'approv...', 'grant...' or 'permit...' approved, the rest other; coverage of the published data varies by authority",
    }))
}

async fn stock(ctx: &SourcingCtx, district: &str) -> Result<Block<ListingStock>, SourcingError> {
    use terrace_listings::supply::SupplyRequest;
    let mut got = Vec::new();
    for channel in [Channel::Sale, Channel::Rent] {
        let req = SupplyRequest {
            area: ListingArea::PostcodePrefix(district.to_string()),
            area_label: district.to_string(),
            channel,
            bedroom_band: None,
            start: None,
            end: None,
        };
        let sd = terrace_listings::demand::supply_demand(&ctx.db, &req)
            .await
            .map_err(lookup)?;
        got.push(sd);
    }
    if got.iter().all(|s| s.status == Answer::NotAvailable) {
        let reason = got
            .first()
            .and_then(|s| s.reason.clone())
            .unwrap_or_else(|| "no listings feed is loaded".into());
        return Ok(Block::NotAvailable(na(reason)));
    }
    let observed_since = got.iter().filter_map(|s| s.observed_since).min();
    let mut it = got.into_iter();
    let sale = it.next().and_then(|s| s.stock);
    let rent = it.next().and_then(|s| s.stock);
    Ok(Block::Available(ListingStock {
        district: district.to_string(),
        sale,
        rent,
        observed_since,
        basis: "live listings of the listings feed on its latest sighting (GET /v1/market/supply-demand); asking prices, not achieved; observed forwards only from observed_since",
    }))
}
