//! Property operations (specification part 4.2).

use crate::error::ApiError;
use crate::ops::address::UprnPath;
use crate::registry::{Ctx, Deprecation, Json, NoBody, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_commercial as commercial;
use terrace_core::{Uarn, Uprn, UprnEntry};
use terrace_layers as layers;
use terrace_listings as listings;
use terrace_ownership as ownership;
use terrace_planning as planning;
use terrace_property as property;
use validator::Validate;

const TAG: &str = "property";

/// The property family's operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[
    &RECORD,
    &RECONCILE,
    &SUMMARY,
    &HISTORY,
    &COMPS,
    &FLOOD_RISK,
    &COUNCIL_TAX,
    &LEASE,
    &LEASE_BATCH,
    &crate::ops::changes::CHANGES_SINCE,
    &PLANNING_HISTORY,
    &PLANNING_HISTORY_BATCH,
    &COMMERCIAL,
    &COMMERCIAL_BY_UARN,
    &RISK,
    &RISK_BATCH,
    &RENTAL_ESTIMATE,
    &REPORT,
    &RETROFIT,
    &TRANSACTIONS,
];

/// An operation about one property by the UPRN in its path: `$name` answers `$out` with `$run`.
macro_rules! by_uprn {
    ($name:ident -> $out:ty, |$ctx:ident, $uprn:ident| $run:expr) => {
        pub struct $name;

        impl Operation for $name {
            type Params = UprnPath;
            type Body = NoBody;
            type Input = Uprn;
            type Output = $out;

            fn check(p: UprnPath, _: NoBody) -> Result<Uprn, ApiError> {
                Ok(p.uprn)
            }

            async fn run($ctx: &Ctx, $uprn: Uprn) -> Result<$out, ApiError> {
                Ok($run)
            }
        }
    };
}

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SalesParams {
    /// Unique Property Reference Number
    pub uprn: Uprn,
    /// How many sales at most, newest first
    #[serde(default = "default_sales")]
    #[validate(range(min = 1, max = 500))]
    pub limit: i64,
}

fn default_sales() -> i64 {
    200
}

pub struct Sales;

impl Operation for Sales {
    type Params = SalesParams;
    type Body = NoBody;
    type Input = SalesParams;
    type Output = property::Transactions;

    fn check(p: SalesParams, _: NoBody) -> Result<SalesParams, ApiError> {
        Ok(p)
    }

    async fn run(ctx: &Ctx, p: SalesParams) -> Result<property::Transactions, ApiError> {
        Ok(property::transactions(&ctx.state.db, p.uprn, p.limit).await?)
    }
}

/// The price of a property's sales history, on either route (the same data from the same source).
const SALES_PRICE: Price = Price::PerCall(2);

pub(crate) static TRANSACTIONS: OpDecl = OpDecl {
    id: "transactions_by_uprn",
    path: "/v1/transactions/uprn/{uprn}",
    summary: "Registered sales of a property",
    description: "Every registered sale (HM Land Registry Price Paid) matched to the UPRN, newest first: price, date, property type, new build, tenure, PPD category, the address as registered, and how the sale was matched to the UPRN (HM Land Registry's lookup, or the address matcher with its score). UK only.",
    price: SALES_PRICE,
    ..OpDecl::of::<Sales>(TAG)
};

pub(crate) static HISTORY: OpDecl = OpDecl {
    id: "property_history",
    path: "/v1/property/{uprn}/history",
    summary: "Sold-price history (deprecated: use /v1/transactions/uprn/{uprn})",
    description: "Deprecated: the same data from the same source as GET /v1/transactions/uprn/{uprn}, which supersedes it; answers with Deprecation, Sunset and Link headers. Stored registered sale records since the source change, so prices, dates and tenure are unchanged while listing windows, photos and floor plans are gone. `max_drilldowns` is accepted and ignored. UK only.",
    price: SALES_PRICE,
    deprecated: Some(Deprecation {
        successor: "/v1/transactions/uprn/{uprn}",
        sunset: "Thu, 01 Jul 2027 00:00:00 GMT",
    }),
    ..OpDecl::of::<Sales>(TAG)
};

by_uprn!(FloodRisk -> property::FloodRiskPlaceholder, |ctx, uprn| {
    property::flood_risk_placeholder(&ctx.state.db, uprn).await?
});

pub(crate) static FLOOD_RISK: OpDecl = OpDecl {
    id: "property_flood_risk",
    path: "/v1/property/{uprn}/flood-risk",
    summary: "Flood risk placeholder (deprecated: always UNKNOWN)",
    description: "Deprecated placeholder kept free so existing callers keep their 200: `risk_level` is always `UNKNOWN`. Flood risk is in the property risk report, whose flags are true, false or not_checked. UK only.",
    deprecated: Some(Deprecation {
        successor: "/v1/property/{uprn}/risk",
        sunset: "Thu, 01 Jul 2027 00:00:00 GMT",
    }),
    ..OpDecl::of::<FloodRisk>(TAG)
};

/// The price of one property's lease, alone or as one answered item of a batch.
const LEASE_PRICE: i64 = 2;

by_uprn!(Lease -> ownership::LeaseResult, |ctx, uprn| {
    ownership::lease(&ctx.state.db, uprn, ctx.now.date_naive()).await?
});

pub(crate) static LEASE: OpDecl = OpDecl {
    id: "property_lease",
    path: "/v1/property/{uprn}/lease",
    summary: "The registered lease of a property",
    description: "The most recent registered lease linked to the UPRN (HM Land Registry registered leases): the term as registered and as read (years, start, end), unexpired years computed at call time, `is_short_lease` (under 80 years), `is_under_60_years`, alienation clause, the lease price paid, and enfranchisement and valuation notes. `status` is `no_lease` with a reason when no registered lease is linked. A term that cannot be read is reported, never guessed. UK only.",
    price: Price::PerCall(LEASE_PRICE),
    ..OpDecl::of::<Lease>(TAG)
};

/// The body of the UPRN batches: 1 to 100 UPRNs, answered in input order.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UprnBatch {
    /// 1 to 100 UPRNs (integers; strings of digits are accepted). An entry that is not a UPRN
    /// is answered as an `error` item and not charged.
    #[validate(length(min = 1, max = 100))]
    pub uprns: Vec<UprnEntry>,
}

/// A batch of UPRNs answered by `$run`, charged per answered item (the domain's `answered`).
macro_rules! uprn_batch {
    ($name:ident -> $out:ty, |$ctx:ident, $uprns:ident| $run:expr) => {
        pub struct $name;

        impl Operation for $name {
            type Params = crate::registry::NoParams;
            type Body = Json<UprnBatch>;
            type Input = Vec<UprnEntry>;
            type Output = $out;

            fn check(
                _: Self::Params,
                Json(b): Json<UprnBatch>,
            ) -> Result<Vec<UprnEntry>, ApiError> {
                Ok(b.uprns)
            }

            async fn run($ctx: &Ctx, $uprns: Vec<UprnEntry>) -> Result<$out, ApiError> {
                Ok($run)
            }

            fn charged_items(out: &$out) -> Option<i64> {
                Some(out.answered as i64)
            }
        }
    };
}

uprn_batch!(LeaseBatch -> ownership::LeaseBatch, |ctx, uprns| {
    ownership::lease_batch(&ctx.state.db, &uprns, ctx.now.date_naive()).await?
});

pub(crate) static LEASE_BATCH: OpDecl = OpDecl {
    id: "property_lease_batch",
    path: "/v1/property/lease/batch",
    summary: "Registered leases of up to 100 properties",
    description: "The lease result of each UPRN, in input order, with an outcome per item: `ok`, `no_lease`, `not_found` or `error`. One item's failure never fails the call. Charged per item with a result (`ok` or `no_lease`) at the single call's price, so never more than the single calls; `not_found` and `error` items are free. UK only.",
    price: Price::PerItem(LEASE_PRICE),
    ..OpDecl::of::<LeaseBatch>(TAG)
};

/// The price of one property's risk report, alone or as one answered item of a batch.
const RISK_PRICE: i64 = 3;

by_uprn!(Risk -> layers::RiskReport, |ctx, uprn| {
    layers::risk(&ctx.state.db, &ctx.state.layers, uprn).await?
});

pub(crate) static RISK: OpDecl = OpDecl {
    id: "property_risk",
    path: "/v1/property/{uprn}/risk",
    summary: "The risk report of a property",
    description: "Flood (planning flood zone, historic flooding, defences within 250 m, rivers-and-sea and surface-water risk areas with their bands), coal (development high risk area), heritage (listed building, conservation area, scheduled monument, heritage at risk), environmental designations (green belt, SSSI, AONB, national park, ancient woodland, air quality management area), planning (Article 4 direction, tree preservation, brownfield land) and infrastructure (nearest substation with its headroom, nearest renewable project), plus a summary of what is true and what was never checked. Every flag is true, false or `not_checked`: false only where one of its datasets is loaded for the property's local authority and nothing matches; not_checked where none is. Each flag names the datasets it consulted with source and vintage. UK only.",
    price: Price::PerCall(RISK_PRICE),
    ..OpDecl::of::<Risk>(TAG)
};

uprn_batch!(RiskBatch -> layers::RiskBatch, |ctx, uprns| {
    layers::risk_batch(&ctx.state.db, &ctx.state.layers, &uprns).await?
});

pub(crate) static RISK_BATCH: OpDecl = OpDecl {
    id: "property_risk_batch",
    path: "/v1/property/risk/batch",
    summary: "Risk reports of up to 100 properties",
    description: "The risk report of each UPRN, in input order, with an outcome per item: `ok`, `not_found` or `error`. One item's failure never fails the call. Charged per item with a result (`ok`) at the single call's price, so never more than the single calls; `not_found` and `error` items are free. UK only.",
    price: Price::PerItem(RISK_PRICE),
    ..OpDecl::of::<RiskBatch>(TAG)
};

by_uprn!(CouncilTax -> property::CouncilTaxResult, |ctx, uprn| {
    property::council_tax_held(&ctx.state.db, &ctx.state.council_tax, uprn).await?
});

pub(crate) static COUNCIL_TAX: OpDecl = OpDecl {
    id: "property_council_tax",
    path: "/v1/property/council-tax/{uprn}",
    summary: "The council tax band of a property (free)",
    description: "The band the council tax valuation list declares for the UPRN (`band_source` `declared`), with the list's reference and how the entry was linked to the UPRN. `status` is `not_found` when the list holds a band at the property's postcode that address matching has not linked, `not_listed` when the loaded list has no entry, `not_checked` when the list is not loaded, and `not_covered` in Scotland and Northern Ireland (England and Wales only). `effective_date`, `composite` and `annual_cost_gbp` are always null: a band is not a bill.",
    ..OpDecl::of::<CouncilTax>(TAG)
};

by_uprn!(Retrofit -> property::RetrofitResult, |ctx, uprn| {
    property::retrofit(&ctx.state.db, uprn).await?
});

pub(crate) static RETROFIT: OpDecl = OpDecl {
    id: "property_retrofit",
    path: "/v1/property/{uprn}/retrofit",
    summary: "Energy rating now against the certificate's potential, and MEES status",
    description: "From the newest energy performance certificate linked to the UPRN: current rating and efficiency against the certificate's potential, the points and bands available, fabric (walls, roof, floor, windows) and heating as recorded, and the minimum energy efficiency standard for letting (an F or G cannot lawfully be let without a registered exemption: a legal bar, not a valuation adjustment). `status` is `no_certificate` when none is linked. UK only; MEES applies in England and Wales.",
    price: Price::PerCall(2),
    ..OpDecl::of::<Retrofit>(TAG)
};

by_uprn!(Record -> property::PropertyRecord, |ctx, uprn| {
    property::record(&ctx.state.db, &ctx.state.layers, uprn, ctx.now.date_naive()).await?
});

pub(crate) static RECORD: OpDecl = OpDecl {
    id: "property_record",
    path: "/v1/property/{uprn}",
    summary: "The full property record",
    description: "Everything loaded about the UPRN, in tiers (identity, property, energy, building, land, risk, designations, infrastructure, ownership) with a provenance tier giving `<field>_source` and `<field>_confidence` for every field present. Null fields are omitted, as are tiers with no loaded data (listed in `tiers_without_data`); the record grows as datasets are loaded. UK only.",
    price: Price::PerCall(3),
    ..OpDecl::of::<Record>(TAG)
};

by_uprn!(Summary -> property::Summary, |ctx, uprn| {
    property::summary(&ctx.state.db, &ctx.state.layers, uprn, ctx.now.date_naive()).await?
});

pub(crate) static SUMMARY: OpDecl = OpDecl {
    id: "property_summary",
    path: "/v1/property/{uprn}/summary",
    summary: "What the property is, its building, and headline attributes",
    description: "What the property is (from its classification), the building it belongs to (parent UPRN and the building's units), and headline attributes (type, floor area, rooms, tenure, last sale, council tax band, energy rating) with their provenance. UK only.",
    price: Price::PerCall(1),
    ..OpDecl::of::<Summary>(TAG)
};

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompsParams {
    /// Unique Property Reference Number
    pub uprn: Uprn,
    /// How many missing attributes may be filled from siblings, in all
    #[serde(default = "default_backfills")]
    #[validate(range(min = 1, max = 25))]
    pub max_backfills: i64,
}

fn default_backfills() -> i64 {
    12
}

pub struct Comps;

impl Operation for Comps {
    type Params = CompsParams;
    type Body = NoBody;
    type Input = CompsParams;
    type Output = property::Comps;

    fn check(p: CompsParams, _: NoBody) -> Result<CompsParams, ApiError> {
        Ok(p)
    }

    async fn run(ctx: &Ctx, p: CompsParams) -> Result<property::Comps, ApiError> {
        Ok(property::comps(&ctx.state.db, p.uprn, p.max_backfills as u32).await?)
    }
}

pub(crate) static COMPS: OpDecl = OpDecl {
    id: "property_comps",
    path: "/v1/property/{uprn}/comps",
    summary: "Same-building comparables, with missing attributes backfilled from siblings",
    description: "The other units of the property's building with their floor area, rooms, type, energy rating and last registered sale. Missing floor area, rooms and type are filled from the nearest sibling that has them, at most `max_backfills` values in all (1-25, default 12), and each filled value names the sibling it came from. Energy ratings are never backfilled. UK only.",
    price: Price::PerCall(2),
    ..OpDecl::of::<Comps>(TAG)
};

by_uprn!(Reconcile -> property::Reconcile, |ctx, uprn| {
    property::reconcile(&ctx.state.db, uprn).await?
});

pub(crate) static RECONCILE: OpDecl = OpDecl {
    id: "property_reconcile",
    path: "/v1/property/{uprn}/reconcile",
    summary: "Where the sources disagree about a property",
    description: "Divergences between the loaded sources (energy certificates, registered sales, the council tax list, the address register): floor area, rooms, property type and the form of the address, each with every distinct value and its source and record. Punctuation, case and spacing are not divergences. `not_yet_compared` names sources not loaded yet (listings). UK only.",
    price: Price::PerCall(2),
    ..OpDecl::of::<Reconcile>(TAG)
};

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RentalParams {
    /// Unique Property Reference Number
    pub uprn: Uprn,
    /// Bedrooms to estimate for (integer or null)
    #[serde(default)]
    #[validate(range(min = 0, max = 20))]
    #[schemars(extend("x-nullable" = true))]
    pub beds: Option<i32>,
}

pub struct RentalEstimate;

impl Operation for RentalEstimate {
    type Params = RentalParams;
    type Body = NoBody;
    type Input = RentalParams;
    type Output = listings::RentalEstimate;

    fn check(p: RentalParams, _: NoBody) -> Result<RentalParams, ApiError> {
        Ok(p)
    }

    async fn run(ctx: &Ctx, p: RentalParams) -> Result<listings::RentalEstimate, ApiError> {
        Ok(listings::rental_estimate(&ctx.state.db, p.uprn, p.beds, ctx.now).await?)
    }
}

pub(crate) static RENTAL_ESTIMATE: OpDecl = OpDecl {
    id: "property_rental_estimate",
    path: "/v1/property/{uprn}/rental-estimate",
    summary: "Rental estimate, gross yield and the housing-benefit cap",
    description: "The property's own live rental listing if any, else the district's median asking rent for its bedroom band (`beds`, or the bedrooms its listings record) with the p25-p75 band and n over the last 12 months; `not_available` with a reason when fewer than 5 listings. Gross yield (before voids, management, maintenance, ground rent and service charge) with its value basis. The housing-benefit cap block (Local Housing Allowance by broad rental market area, including the shared-room rate) is not a market rent. UK only.",
    price: Price::PerCall(2),
    ..OpDecl::of::<RentalEstimate>(TAG)
};

/// The price of one property's planning history, alone or as one answered item of a batch.
const PLANNING_PRICE: i64 = 2;

pub struct PlanningHistory;

impl Operation for PlanningHistory {
    type Params = UprnPath;
    type Body = NoBody;
    type Input = Uprn;
    type Output = planning::PlanningHistory;

    fn check(p: UprnPath, _: NoBody) -> Result<Uprn, ApiError> {
        Ok(p.uprn)
    }

    async fn run(ctx: &Ctx, uprn: Uprn) -> Result<planning::PlanningHistory, ApiError> {
        let today = ctx.now.date_naive();
        Ok(planning::planning_history(&ctx.state.db, &ctx.state.layers, uprn, today).await?)
    }

    /// `not_covered` is not charged.
    fn charged_items(out: &planning::PlanningHistory) -> Option<i64> {
        match out.status {
            planning::PlanningStatus::NotCovered => Some(0),
            planning::PlanningStatus::Ok | planning::PlanningStatus::NoApplications => None,
        }
    }
}

pub(crate) static PLANNING_HISTORY: OpDecl = OpDecl {
    id: "property_planning_history",
    path: "/v1/property/{uprn}/planning-history",
    summary: "Planning applications of a property, and what needs consent",
    description: "The planning applications linked to the unit (`match_level` `unit`), else to its building (`building`), else lying within 25 m of its point (`radius_25m`, with the distance), newest first, each with decision, dates (received, validated, decided), appeal, CIL liability and development type; the local planning authority; whether official planning data covers it; and what needs consent, from the three-valued designation flags (a consent whose designation was never checked is `not_checked`, never false). `status` is `ok`, `no_applications`, or `not_covered` (official planning data does not cover the authority, or none of its applications is loaded; not charged). UK only.",
    price: Price::PerCall(PLANNING_PRICE),
    ..OpDecl::of::<PlanningHistory>(TAG)
};

uprn_batch!(PlanningHistoryBatch -> planning::PlanningBatch, |ctx, uprns| {
    let today = ctx.now.date_naive();
    planning::planning_history_batch(&ctx.state.db, &ctx.state.layers, &uprns, today).await?
});

pub(crate) static PLANNING_HISTORY_BATCH: OpDecl = OpDecl {
    id: "property_planning_history_batch",
    path: "/v1/property/planning-history/batch",
    summary: "Planning histories of up to 100 properties",
    description: "The planning history of each UPRN, in input order, with an outcome per item: `ok`, `no_applications`, `not_covered`, `not_found` or `error`. One item's failure never fails the call. Charged per `ok` or `no_applications` item at the single call's price, so never more than the single calls; `not_covered`, `not_found` and `error` items are free. UK only.",
    price: Price::PerItem(PLANNING_PRICE),
    ..OpDecl::of::<PlanningHistoryBatch>(TAG)
};

/// The price of a commercial report, by UPRN or by UARN.
const COMMERCIAL_PRICE: Price = Price::PerCall(3);
const COMMERCIAL_DESCRIPTION: &str = "The commercial report: the hereditament as the 2026 rating list describes it (description, rateable value, effective date), its entries in every loaded list, the sector rent index across the four lists (2010, 2017, 2023, 2026: median rateable value of the same description code in the billing authority, with n, indexed to the earliest list), capital index, income-basis value with the yield's receipt, auction history at the address and the district's commercial auction market, registered owner, and the registered lease. Each block is `{\"status\": \"not_available\", \"reason\": ...}` when its data is missing; no yield is ever assumed. UK only.";

by_uprn!(Commercial -> commercial::CommercialReport, |ctx, uprn| {
    commercial::commercial_by_uprn(&ctx.state.db, uprn, ctx.now.date_naive()).await?
});

pub(crate) static COMMERCIAL: OpDecl = OpDecl {
    id: "property_commercial",
    path: "/v1/property/commercial/{uprn}",
    summary: "Commercial report of a property (by UPRN)",
    description: COMMERCIAL_DESCRIPTION,
    price: COMMERCIAL_PRICE,
    ..OpDecl::of::<Commercial>(TAG)
};

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UarnPath {
    /// Unique Address Reference Number (the VOA rating list reference)
    pub uarn: Uarn,
}

pub struct CommercialByUarn;

impl Operation for CommercialByUarn {
    type Params = UarnPath;
    type Body = NoBody;
    type Input = Uarn;
    type Output = commercial::CommercialReport;

    fn check(p: UarnPath, _: NoBody) -> Result<Uarn, ApiError> {
        Ok(p.uarn)
    }

    async fn run(ctx: &Ctx, uarn: Uarn) -> Result<commercial::CommercialReport, ApiError> {
        Ok(commercial::commercial_by_uarn(&ctx.state.db, uarn, ctx.now.date_naive()).await?)
    }
}

pub(crate) static COMMERCIAL_BY_UARN: OpDecl = OpDecl {
    id: "property_commercial_by_uarn",
    path: "/v1/property/commercial/uarn/{uarn}",
    summary: "Commercial report of a rated property (by UARN), with the UPRN it links",
    description: COMMERCIAL_DESCRIPTION,
    price: COMMERCIAL_PRICE,
    ..OpDecl::of::<CommercialByUarn>(TAG)
};

by_uprn!(Report -> property::PropertyReport, |ctx, uprn| {
    property::report(&ctx.state.db, &ctx.state.layers, uprn, ctx.now).await?
});

pub(crate) static REPORT: OpDecl = OpDecl {
    id: "property_report",
    path: "/v1/property/{uprn}/report",
    summary: "One document about a property: summary, lease, risk, rental estimate, energy, planning",
    description: "The summary, the registered lease, the risk report, the rental estimate (with its basis, gross yield and housing-benefit cap), the energy picture (rating against potential, fabric, heating, MEES) and nearby planning decisions (unit, building or within 25 m), each exactly as its own operation answers, built by the same domain functions. Priced below the sum of those calls. UK only.",
    price: Price::PerCall(8),
    ..OpDecl::of::<Report>(TAG)
};
