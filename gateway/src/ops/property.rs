//! Property operations (specification part 4.2), as they arrive.

use crate::error::{ApiError, FieldError};
use crate::ops::address::uprn_param;
use crate::params::{In, Kind, Param};
use crate::registry::{
    Answer, Ctx, Deprecation, Input, Method, OpDecl, OpFuture, Price, schema_of,
};
use terrace_commercial as commercial;
use terrace_layers as layers;
use terrace_listings as listings;
use terrace_ownership as ownership;
use terrace_planning as planning;
use terrace_property as property;

const UPRN: Param = Param {
    name: "uprn",
    location: In::Path,
    required: true,
    kind: Kind::Uprn,
    description: "Unique Property Reference Number",
};

const LIMIT: Param = Param {
    name: "limit",
    location: In::Query,
    required: false,
    kind: Kind::Int {
        min: 1,
        max: 500,
        default: Some(200),
    },
    description: "How many sales at most, newest first",
};

/// The price of a property's sales history, on either route (the same data from the same source).
const SALES_PRICE: Price = Price::PerCall(2);

pub static TRANSACTIONS: OpDecl = OpDecl {
    id: "transactions_by_uprn",
    method: Method::Get,
    path: "/v1/transactions/uprn/{uprn}",
    tag: "property",
    summary: "Registered sales of a property",
    description: "Every registered sale (HM Land Registry Price Paid) matched to the UPRN, newest first: price, date, property type, new build, tenure, PPD category, the address as registered, and how the sale was matched to the UPRN (HM Land Registry's lookup, or the address matcher with its score). UK only.",
    price: SALES_PRICE,
    params: &[UPRN, LIMIT],
    body: None,
    body_required: false,
    response: schema_of::<property::Transactions>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_transactions,
};

pub static HISTORY: OpDecl = OpDecl {
    id: "property_history",
    method: Method::Get,
    path: "/v1/property/{uprn}/history",
    tag: "property",
    summary: "Sold-price history (deprecated: use /v1/transactions/uprn/{uprn})",
    description: "Deprecated: the same data from the same source as GET /v1/transactions/uprn/{uprn}, which supersedes it; answers with Deprecation, Sunset and Link headers. Stored registered sale records since the source change, so prices, dates and tenure are unchanged while listing windows, photos and floor plans are gone. `max_drilldowns` is accepted and ignored. UK only.",
    price: SALES_PRICE,
    params: &[UPRN, LIMIT],
    body: None,
    body_required: false,
    response: schema_of::<property::Transactions>,
    deprecated: Some(Deprecation {
        successor: "/v1/transactions/uprn/{uprn}",
        sunset: "Thu, 01 Jul 2027 00:00:00 GMT",
    }),
    read_only: true,
    check: None,
    run: run_transactions,
};

fn run_transactions<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        let limit = input.params.int("limit").unwrap_or(200);
        Answer::of(&property::transactions(&ctx.state.db, uprn, limit).await?)
    })
}

pub static FLOOD_RISK: OpDecl = OpDecl {
    id: "property_flood_risk",
    method: Method::Get,
    path: "/v1/property/{uprn}/flood-risk",
    tag: "property",
    summary: "Flood risk placeholder (deprecated: always UNKNOWN)",
    description: "Deprecated placeholder kept free so existing callers keep their 200: `risk_level` is always `UNKNOWN`. Flood risk is in the property risk report, whose flags are true, false or not_checked. UK only.",
    price: Price::Free,
    params: &[UPRN],
    body: None,
    body_required: false,
    response: schema_of::<property::FloodRiskPlaceholder>,
    deprecated: Some(Deprecation {
        successor: "/v1/property/{uprn}/risk",
        sunset: "Thu, 01 Jul 2027 00:00:00 GMT",
    }),
    read_only: true,
    check: None,
    run: run_flood_risk,
};

fn run_flood_risk<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        Answer::of(&property::flood_risk_placeholder(&ctx.state.db, uprn).await?)
    })
}

/// The price of one property's lease, alone or as one answered item of a batch.
const LEASE_PRICE: i64 = 2;

pub static LEASE: OpDecl = OpDecl {
    id: "property_lease",
    method: Method::Get,
    path: "/v1/property/{uprn}/lease",
    tag: "property",
    summary: "The registered lease of a property",
    description: "The most recent registered lease linked to the UPRN (HM Land Registry registered leases): the term as registered and as read (years, start, end), unexpired years computed at call time, `is_short_lease` (under 80 years), `is_under_60_years`, alienation clause, the lease price paid, and enfranchisement and valuation notes. `status` is `no_lease` with a reason when no registered lease is linked. A term that cannot be read is reported, never guessed. UK only.",
    price: Price::PerCall(LEASE_PRICE),
    params: &[UPRN],
    body: None,
    body_required: false,
    response: schema_of::<ownership::LeaseResult>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_lease,
};

fn run_lease<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        Answer::of(&ownership::lease(&ctx.state.db, uprn, ctx.now.date_naive()).await?)
    })
}

/// The body of the UPRN batches: 1 to 100 UPRNs, answered in input order.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UprnBatch {
    /// 1 to 100 UPRNs (integers; strings of digits are accepted). An entry that is not a UPRN
    /// is answered as an `error` item and not charged.
    #[schemars(with = "Vec<i64>", length(min = 1, max = 100))]
    pub uprns: Vec<serde_json::Value>,
}

/// The most UPRNs one batch may carry.
pub const BATCH_MAX: usize = 100;

fn check_uprn_batch(input: &Input) -> Result<(), ApiError> {
    let body: UprnBatch = input.body_as(true)?.ok_or_else(|| {
        ApiError::Validation(vec![FieldError::new(
            &["body"],
            "missing",
            "Field required",
        )])
    })?;
    let n = body.uprns.len();
    if n == 0 || n > BATCH_MAX {
        return Err(ApiError::Validation(vec![
            FieldError::new(
                &["body", "uprns"],
                if n == 0 { "too_short" } else { "too_long" },
                format!("List should have between 1 and {BATCH_MAX} items, not {n}"),
            )
            .with_input(n as i64),
        ]));
    }
    Ok(())
}

/// A batch body the check step has already validated.
fn uprn_batch(input: &Input) -> Result<UprnBatch, ApiError> {
    input
        .body_as(true)?
        .ok_or_else(|| ApiError::Internal("the batch body was not checked".into()))
}

/// A batch answer charged for its answered items only.
fn batch_answer<T: serde::Serialize>(batch: &T, answered: usize) -> Result<Answer, ApiError> {
    let mut answer = Answer::of(batch)?;
    answer.charged_items = Some(answered as i64);
    Ok(answer)
}

pub static LEASE_BATCH: OpDecl = OpDecl {
    id: "property_lease_batch",
    method: Method::Post,
    path: "/v1/property/lease/batch",
    tag: "property",
    summary: "Registered leases of up to 100 properties",
    description: "The lease result of each UPRN, in input order, with an outcome per item: `ok`, `no_lease`, `not_found` or `error`. One item's failure never fails the call. Charged per item with a result (`ok` or `no_lease`) at the single call's price, so never more than the single calls; `not_found` and `error` items are free. UK only.",
    price: Price::PerItem(LEASE_PRICE),
    params: &[],
    body: Some(schema_of::<UprnBatch>),
    body_required: true,
    response: schema_of::<ownership::LeaseBatch>,
    deprecated: None,
    read_only: true,
    check: Some(check_uprn_batch),
    run: run_lease_batch,
};

fn run_lease_batch<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let body = uprn_batch(&input)?;
        let batch =
            ownership::lease_batch(&ctx.state.db, &body.uprns, ctx.now.date_naive()).await?;
        batch_answer(&batch, batch.answered)
    })
}

/// The price of one property's risk report, alone or as one answered item of a batch.
const RISK_PRICE: i64 = 3;

pub static RISK: OpDecl = OpDecl {
    id: "property_risk",
    method: Method::Get,
    path: "/v1/property/{uprn}/risk",
    tag: "property",
    summary: "The risk report of a property",
    description: "Flood (planning flood zone, historic flooding, defences within 250 m, rivers-and-sea and surface-water risk areas with their bands), coal (development high risk area), heritage (listed building, conservation area, scheduled monument, heritage at risk), environmental designations (green belt, SSSI, AONB, national park, ancient woodland, air quality management area), planning (Article 4 direction, tree preservation, brownfield land) and infrastructure (nearest substation with its headroom, nearest renewable project), plus a summary of what is true and what was never checked. Every flag is true, false or `not_checked`: false only where one of its datasets is loaded for the property's local authority and nothing matches; not_checked where none is. Each flag names the datasets it consulted with source and vintage. UK only.",
    price: Price::PerCall(RISK_PRICE),
    params: &[UPRN],
    body: None,
    body_required: false,
    response: schema_of::<layers::RiskReport>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_risk,
};

fn run_risk<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        Answer::of(&layers::risk(&ctx.state.db, &ctx.state.layers, uprn).await?)
    })
}

pub static RISK_BATCH: OpDecl = OpDecl {
    id: "property_risk_batch",
    method: Method::Post,
    path: "/v1/property/risk/batch",
    tag: "property",
    summary: "Risk reports of up to 100 properties",
    description: "The risk report of each UPRN, in input order, with an outcome per item: `ok`, `not_found` or `error`. One item's failure never fails the call. Charged per item with a result (`ok`) at the single call's price, so never more than the single calls; `not_found` and `error` items are free. UK only.",
    price: Price::PerItem(RISK_PRICE),
    params: &[],
    body: Some(schema_of::<UprnBatch>),
    body_required: true,
    response: schema_of::<layers::RiskBatch>,
    deprecated: None,
    read_only: true,
    check: Some(check_uprn_batch),
    run: run_risk_batch,
};

fn run_risk_batch<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let body = uprn_batch(&input)?;
        let batch = layers::risk_batch(&ctx.state.db, &ctx.state.layers, &body.uprns).await?;
        batch_answer(&batch, batch.answered)
    })
}

pub static COUNCIL_TAX: OpDecl = OpDecl {
    id: "property_council_tax",
    method: Method::Get,
    path: "/v1/property/council-tax/{uprn}",
    tag: "property",
    summary: "The council tax band of a property (free)",
    description: "The band the council tax valuation list declares for the UPRN (`band_source` `declared`), with the list's reference and how the entry was linked to the UPRN. `status` is `not_found` when the list holds a band at the property's postcode that address matching has not linked, `not_listed` when the loaded list has no entry, `not_checked` when the list is not loaded, and `not_covered` in Scotland and Northern Ireland (England and Wales only). `effective_date`, `composite` and `annual_cost_gbp` are always null: a band is not a bill.",
    price: Price::Free,
    params: &[UPRN],
    body: None,
    body_required: false,
    response: schema_of::<property::CouncilTaxResult>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_council_tax,
};

fn run_council_tax<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        Answer::of(&property::council_tax(&ctx.state.db, uprn).await?)
    })
}

pub static RETROFIT: OpDecl = OpDecl {
    id: "property_retrofit",
    method: Method::Get,
    path: "/v1/property/{uprn}/retrofit",
    tag: "property",
    summary: "Energy rating now against the certificate's potential, and MEES status",
    description: "From the newest energy performance certificate linked to the UPRN: current rating and efficiency against the certificate's potential, the points and bands available, fabric (walls, roof, floor, windows) and heating as recorded, and the minimum energy efficiency standard for letting (an F or G cannot lawfully be let without a registered exemption: a legal bar, not a valuation adjustment). `status` is `no_certificate` when none is linked. UK only; MEES applies in England and Wales.",
    price: Price::PerCall(2),
    params: &[UPRN],
    body: None,
    body_required: false,
    response: schema_of::<property::RetrofitResult>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_retrofit,
};

fn run_retrofit<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        Answer::of(&property::retrofit(&ctx.state.db, uprn).await?)
    })
}

pub static RECORD: OpDecl = OpDecl {
    id: "property_record",
    method: Method::Get,
    path: "/v1/property/{uprn}",
    tag: "property",
    summary: "The full property record",
    description: "Everything loaded about the UPRN, in tiers (identity, property, energy, building, land, risk, designations, infrastructure, ownership) with a provenance tier giving `<field>_source` and `<field>_confidence` for every field present. Null fields are omitted, as are tiers with no loaded data (listed in `tiers_without_data`); the record grows as datasets are loaded. UK only.",
    price: Price::PerCall(3),
    params: &[UPRN],
    body: None,
    body_required: false,
    response: schema_of::<property::PropertyRecord>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_record,
};

fn run_record<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        Answer::of(
            &property::record(&ctx.state.db, &ctx.state.layers, uprn, ctx.now.date_naive()).await?,
        )
    })
}

pub static SUMMARY: OpDecl = OpDecl {
    id: "property_summary",
    method: Method::Get,
    path: "/v1/property/{uprn}/summary",
    tag: "property",
    summary: "What the property is, its building, and headline attributes",
    description: "What the property is (from its classification), the building it belongs to (parent UPRN and the building's units), and headline attributes (type, floor area, rooms, tenure, last sale, council tax band, energy rating) with their provenance. UK only.",
    price: Price::PerCall(1),
    params: &[UPRN],
    body: None,
    body_required: false,
    response: schema_of::<property::Summary>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_summary,
};

fn run_summary<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        Answer::of(
            &property::summary(&ctx.state.db, &ctx.state.layers, uprn, ctx.now.date_naive())
                .await?,
        )
    })
}

pub static COMPS: OpDecl = OpDecl {
    id: "property_comps",
    method: Method::Get,
    path: "/v1/property/{uprn}/comps",
    tag: "property",
    summary: "Same-building comparables, with missing attributes backfilled from siblings",
    description: "The other units of the property's building with their floor area, rooms, type, energy rating and last registered sale. Missing floor area, rooms and type are filled from the nearest sibling that has them, at most `max_backfills` values in all (1-25, default 12), and each filled value names the sibling it came from. Energy ratings are never backfilled. UK only.",
    price: Price::PerCall(2),
    params: &[
        UPRN,
        Param {
            name: "max_backfills",
            location: In::Query,
            required: false,
            kind: Kind::Int {
                min: 1,
                max: 25,
                default: Some(12),
            },
            description: "How many missing attributes may be filled from siblings, in all",
        },
    ],
    body: None,
    body_required: false,
    response: schema_of::<property::Comps>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_comps,
};

fn run_comps<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        let max = input.params.int("max_backfills").unwrap_or(12) as u32;
        Answer::of(&property::comps(&ctx.state.db, uprn, max).await?)
    })
}

pub static RECONCILE: OpDecl = OpDecl {
    id: "property_reconcile",
    method: Method::Get,
    path: "/v1/property/{uprn}/reconcile",
    tag: "property",
    summary: "Where the sources disagree about a property",
    description: "Divergences between the loaded sources (energy certificates, registered sales, the council tax list, the address register): floor area, rooms, property type and the form of the address, each with every distinct value and its source and record. Punctuation, case and spacing are not divergences. `not_yet_compared` names sources not loaded yet (listings). UK only.",
    price: Price::PerCall(2),
    params: &[UPRN],
    body: None,
    body_required: false,
    response: schema_of::<property::Reconcile>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_reconcile,
};

fn run_reconcile<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        Answer::of(&property::reconcile(&ctx.state.db, uprn).await?)
    })
}

pub static RENTAL_ESTIMATE: OpDecl = OpDecl {
    id: "property_rental_estimate",
    method: Method::Get,
    path: "/v1/property/{uprn}/rental-estimate",
    tag: "property",
    summary: "Rental estimate, gross yield and the housing-benefit cap",
    description: "The property's own live rental listing if any, else the district's median asking rent for its bedroom band (`beds`, or the bedrooms its listings record) with the p25-p75 band and n over the last 12 months; `not_available` with a reason when fewer than 5 listings. Gross yield (before voids, management, maintenance, ground rent and service charge) with its value basis. The housing-benefit cap block (Local Housing Allowance by broad rental market area, including the shared-room rate) is not a market rent. UK only.",
    price: Price::PerCall(2),
    params: &[
        UPRN,
        Param {
            name: "beds",
            location: In::Query,
            required: false,
            kind: Kind::NullableInt { min: 0, max: 20 },
            description: "Bedrooms to estimate for (integer or null)",
        },
    ],
    body: None,
    body_required: false,
    response: schema_of::<listings::RentalEstimate>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_rental_estimate,
};

fn run_rental_estimate<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        let beds = input.params.int("beds").and_then(|b| i32::try_from(b).ok());
        Answer::of(&listings::rental_estimate(&ctx.state.db, uprn, beds, ctx.now).await?)
    })
}

/// The price of one property's planning history, alone or as one answered item of a batch.
const PLANNING_PRICE: i64 = 2;

pub static PLANNING_HISTORY: OpDecl = OpDecl {
    id: "property_planning_history",
    method: Method::Get,
    path: "/v1/property/{uprn}/planning-history",
    tag: "property",
    summary: "Planning applications of a property, and what needs consent",
    description: "The planning applications linked to the unit (`match_level` `unit`), else to its building (`building`), else lying within 25 m of its point (`radius_25m`, with the distance), newest first, each with decision, dates (received, validated, decided), appeal, CIL liability and development type; the local planning authority; whether official planning data covers it; and what needs consent, from the three-valued designation flags (a consent whose designation was never checked is `not_checked`, never false). `status` is `ok`, `no_applications`, or `not_covered` (official planning data does not cover the authority, or none of its applications is loaded; not charged). UK only.",
    price: Price::PerCall(PLANNING_PRICE),
    params: &[UPRN],
    body: None,
    body_required: false,
    response: schema_of::<planning::PlanningHistory>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_planning_history,
};

fn run_planning_history<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        let r = planning::planning_history(
            &ctx.state.db,
            &ctx.state.layers,
            uprn,
            ctx.now.date_naive(),
        )
        .await?;
        let mut answer = Answer::of(&r)?;
        if r.status == "not_covered" {
            answer.charged_items = Some(0);
        }
        Ok(answer)
    })
}

pub static PLANNING_HISTORY_BATCH: OpDecl = OpDecl {
    id: "property_planning_history_batch",
    method: Method::Post,
    path: "/v1/property/planning-history/batch",
    tag: "property",
    summary: "Planning histories of up to 100 properties",
    description: "The planning history of each UPRN, in input order, with an outcome per item: `ok`, `no_applications`, `not_covered`, `not_found` or `error`. One item's failure never fails the call. Charged per `ok` or `no_applications` item at the single call's price, so never more than the single calls; `not_covered`, `not_found` and `error` items are free. UK only.",
    price: Price::PerItem(PLANNING_PRICE),
    params: &[],
    body: Some(schema_of::<UprnBatch>),
    body_required: true,
    response: schema_of::<planning::PlanningBatch>,
    deprecated: None,
    read_only: true,
    check: Some(check_uprn_batch),
    run: run_planning_history_batch,
};

fn run_planning_history_batch<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let body = uprn_batch(&input)?;
        let batch = planning::planning_history_batch(
            &ctx.state.db,
            &ctx.state.layers,
            &body.uprns,
            ctx.now.date_naive(),
        )
        .await?;
        batch_answer(&batch, batch.answered)
    })
}

/// The price of a commercial report, by UPRN or by UARN.
const COMMERCIAL_PRICE: Price = Price::PerCall(3);

const COMMERCIAL_DESCRIPTION: &str = "The commercial report: the hereditament as the 2026 rating list describes it (description, rateable value, effective date), its entries in every loaded list, the sector rent index across the four lists (2010, 2017, 2023, 2026: median rateable value of the same description code in the billing authority, with n, indexed to the earliest list), capital index, income-basis value with the yield's receipt, auction history at the address and the district's commercial auction market, registered owner, and the registered lease. Each block is `{\"status\": \"not_available\", \"reason\": ...}` when its data is missing; no yield is ever assumed. UK only.";

pub static COMMERCIAL: OpDecl = OpDecl {
    id: "property_commercial",
    method: Method::Get,
    path: "/v1/property/commercial/{uprn}",
    tag: "property",
    summary: "Commercial report of a property (by UPRN)",
    description: COMMERCIAL_DESCRIPTION,
    price: COMMERCIAL_PRICE,
    params: &[UPRN],
    body: None,
    body_required: false,
    response: schema_of::<commercial::CommercialReport>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_commercial,
};

fn run_commercial<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        Answer::of(
            &commercial::commercial_by_uprn(&ctx.state.db, uprn, ctx.now.date_naive()).await?,
        )
    })
}

pub static COMMERCIAL_BY_UARN: OpDecl = OpDecl {
    id: "property_commercial_by_uarn",
    method: Method::Get,
    path: "/v1/property/commercial/uarn/{uarn}",
    tag: "property",
    summary: "Commercial report of a rated property (by UARN), with the UPRN it links",
    description: COMMERCIAL_DESCRIPTION,
    price: COMMERCIAL_PRICE,
    params: &[Param {
        name: "uarn",
        location: In::Path,
        required: true,
        kind: Kind::Uarn,
        description: "Unique Address Reference Number (the VOA rating list reference)",
    }],
    body: None,
    body_required: false,
    response: schema_of::<commercial::CommercialReport>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_commercial_by_uarn,
};

fn run_commercial_by_uarn<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uarn = input
            .params
            .int("uarn")
            .and_then(|v| terrace_core::Uarn::new(v).ok())
            .ok_or_else(|| ApiError::Internal("uarn parameter was not validated".into()))?;
        Answer::of(
            &commercial::commercial_by_uarn(&ctx.state.db, uarn, ctx.now.date_naive()).await?,
        )
    })
}

pub static REPORT: OpDecl = OpDecl {
    id: "property_report",
    method: Method::Get,
    path: "/v1/property/{uprn}/report",
    tag: "property",
    summary: "One document about a property: summary, lease, risk, rental estimate, energy, planning",
    description: "The summary, the registered lease, the risk report, the rental estimate (with its basis, gross yield and housing-benefit cap), the energy picture (rating against potential, fabric, heating, MEES) and nearby planning decisions (unit, building or within 25 m), each exactly as its own operation answers, built by the same domain functions. Priced below the sum of those calls. UK only.",
    price: Price::PerCall(8),
    params: &[UPRN],
    body: None,
    body_required: false,
    response: schema_of::<property::PropertyReport>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_report,
};

fn run_report<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        Answer::of(&property::report(&ctx.state.db, &ctx.state.layers, uprn, ctx.now).await?)
    })
}
