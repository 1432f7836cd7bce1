//! Parcels (specification parts 2.8 and 4.4): one parcel in full, the land assembly around it,
//! and the registered owners of a list of parcels.

use super::{TAG, sourcing_ctx, sourcing_error};
use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::registry::{Ctx, Json, NoBody, NoParams, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_sourcing::assembly::{self, Assembly, AssemblyQuery};
use terrace_sourcing::owners::{self, Asset, OwnersAnswer, OwnersQuery};
use terrace_sourcing::parcel::{self, ParcelRecord, ParcelRef};
use validator::Validate;

fn one_id(schema: &mut schemars::Schema) {
    terrace_core::patterns::exactly_one_of(
        schema,
        &[
            &["uprn"],
            &["parcel_id"],
            &["inspire_id"],
            &["title_number"],
        ],
    );
}

/// The pattern of a parcel id as the schema states it: the INSPIRE id's digits, no leading zero
/// (the server also reads leading zeros and spaces, but two spellings of one id in an owners
/// list would be a duplicate the schema could not see).
const PARCEL_ID: &str = "^[1-9][0-9]{0,17}$";

/// The query of `GET /v1/sourcing/parcel`: exactly one of the four ids.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = one_id)]
pub struct ParcelParams {
    /// A UPRN: the parcel its point lies in
    #[validate(range(min = 1, max = 999_999_999_999_i64))]
    pub uprn: Option<i64>,
    /// The parcel id search and plot utilisation return (`land_id`): the INSPIRE id as text
    #[validate(length(min = 1, max = 18))]
    #[schemars(regex(pattern = PARCEL_ID))]
    pub parcel_id: Option<String>,
    /// HM Land Registry's INSPIRE id: the same number as parcel_id
    #[validate(range(min = 1, max = 999_999_999_999_999_i64))]
    pub inspire_id: Option<i64>,
    /// A title number (`DN123456`): the parcel its linked company-owned title lies on
    #[validate(length(min = 1, max = 10))]
    #[schemars(regex(pattern = r"^[A-Za-z]{0,3}[0-9]{1,7}$"))]
    pub title_number: Option<String>,
}

fn parcel_ref(
    uprn: Option<i64>,
    parcel_id: Option<&str>,
    inspire_id: Option<i64>,
    title_number: Option<&str>,
) -> Result<ParcelRef, ApiError> {
    ParcelRef::from_ids(uprn, parcel_id, inspire_id, title_number)
        .map_err(|v| invalid(In::Query, v))
}

pub struct ParcelOp;

impl Operation for ParcelOp {
    type Params = ParcelParams;
    type Body = NoBody;
    type Input = ParcelRef;
    type Output = ParcelRecord;

    fn check(p: ParcelParams, _: NoBody) -> Result<ParcelRef, ApiError> {
        parcel_ref(
            p.uprn,
            p.parcel_id.as_deref(),
            p.inspire_id,
            p.title_number.as_deref(),
        )
    }

    async fn run(ctx: &Ctx, r: ParcelRef) -> Result<ParcelRecord, ApiError> {
        parcel::parcel(&sourcing_ctx(ctx), &r)
            .await
            .map_err(|e| sourcing_error(e, In::Query))
    }
}

pub(crate) static PARCEL: OpDecl = OpDecl {
    id: "sourcing_parcel",
    path: "/v1/sourcing/parcel",
    summary: "One land parcel in full",
    description: "One HM Land Registry INSPIRE index polygon in full, named by exactly one of `uprn` (the parcel its point lies in), `parcel_id` (the id search and plot utilisation return, `land_id`: the INSPIRE id as text), `inspire_id` (the same parcel, as HM Land Registry's integer) or `title_number` (the parcel its linked company-owned title lies on; a title on several parcels answers the first by id and lists the others in `resolved_from.other_parcels`). The answer: its ids (parcel id, INSPIRE id, linked title numbers, OS building ids), area in m2 and ha, land use (Terrace's tiers, with the method), the registered proprietor where a company-owned title (CCOD/OCOD) links through an address in it, with company number and Companies House status (else `not_available` with reason `no_open_title_link`: individually owned titles are not in the bulk registers), the units standing on it (UPRNs with class), plot utilisation (built coverage null where unmeasured, never 0), every constraint flag three-valued at its interior point (`in_zone`, `checked_false`, `not_checked` with the reason), restrictive covenants `not_available` (held per title), the boundary as GeoJSON in WGS84, and the link coverage of its local authority. No id or several is a 422 naming the four; an id naming no loaded parcel is a 404.",
    price: Price::PerCall(2),
    ..OpDecl::of::<ParcelOp>(TAG)
};

fn default_tolerance() -> f64 {
    assembly::TOLERANCE_DEFAULT
}

fn default_assembly_limit() -> usize {
    assembly::LIMIT_DEFAULT
}

/// The query of `GET /v1/sourcing/land-assembly`: the subject by exactly one of the four ids.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = one_id)]
pub struct AssemblyParams {
    /// The subject by a UPRN: the parcel its point lies in
    #[validate(range(min = 1, max = 999_999_999_999_i64))]
    pub uprn: Option<i64>,
    /// The subject by parcel id (the INSPIRE id as text)
    #[validate(length(min = 1, max = 18))]
    #[schemars(regex(pattern = PARCEL_ID))]
    pub parcel_id: Option<String>,
    /// The subject by INSPIRE id (the same number as parcel_id)
    #[validate(range(min = 1, max = 999_999_999_999_999_i64))]
    pub inspire_id: Option<i64>,
    /// The subject by a title number: the parcel its linked company-owned title lies on
    #[validate(length(min = 1, max = 10))]
    #[schemars(regex(pattern = r"^[A-Za-z]{0,3}[0-9]{1,7}$"))]
    pub title_number: Option<String>,
    /// Metres: a parcel whose boundary lies within this of the subject's is adjacent (default
    /// 0.5; registered boundaries rarely share an exact edge)
    #[serde(default = "default_tolerance")]
    #[validate(range(min = 0.0, max = 50.0))]
    pub tolerance_m: f64,
    /// Metres: also take parcels whose boundary lies within this of the subject's (default 0)
    #[serde(default)]
    #[validate(range(min = 0.0, max = 500.0))]
    pub ring_m: f64,
    /// Only neighbours sharing a linked proprietor with the subject (default false)
    #[serde(default)]
    pub same_owner_only: bool,
    /// Neighbours listed at most, nearest first (default 50)
    #[serde(default = "default_assembly_limit")]
    #[validate(range(min = 1, max = 500))]
    pub limit: usize,
}

pub struct AssemblyOp;

impl Operation for AssemblyOp {
    type Params = AssemblyParams;
    type Body = NoBody;
    type Input = AssemblyQuery;
    type Output = Assembly;

    fn check(p: AssemblyParams, _: NoBody) -> Result<AssemblyQuery, ApiError> {
        let subject = parcel_ref(
            p.uprn,
            p.parcel_id.as_deref(),
            p.inspire_id,
            p.title_number.as_deref(),
        )?;
        Ok(AssemblyQuery {
            subject,
            tolerance_m: p.tolerance_m,
            ring_m: p.ring_m,
            same_owner_only: p.same_owner_only,
            limit: p.limit,
        })
    }

    async fn run(ctx: &Ctx, q: AssemblyQuery) -> Result<Assembly, ApiError> {
        assembly::land_assembly(&sourcing_ctx(ctx), &q)
            .await
            .map_err(|e| sourcing_error(e, In::Query))
    }
}

pub(crate) static LAND_ASSEMBLY: OpDecl = OpDecl {
    id: "sourcing_land_assembly",
    path: "/v1/sourcing/land-assembly",
    summary: "The parcels that could be assembled with a subject parcel",
    description: "The INSPIRE parcels around a subject (named by exactly one of `uprn`, `parcel_id`, `inspire_id`, `title_number`, as for the parcel look-up): adjacent ones, whose boundary lies within `tolerance_m` of the subject's (default 0.5 m: registered boundaries rarely share an exact edge), and with `ring_m` also those within that distance (`relation: ring`). Each neighbour, nearest first (at most `limit`): parcel id, gap in metres, area, land use, the registered proprietor where a company-owned title links (else `not_available`, `no_open_title_link`), whether it shares a proprietor with the subject, and its constraint flags in brief. `same_owner_only` keeps the neighbours sharing the subject's proprietor. `combined`: total area in m2 and ha of the subject and the neighbours listed, distinct linked owners (listed), neighbours sharing the subject's proprietor, parcels with no linked owner (counted: no registered title linked, NOT ownerless; never named), and the union of constraints (`constraints_in_zone` anywhere, `constraints_not_checked` somewhere). No id or several is a 422; an id naming no loaded parcel is a 404.",
    price: Price::PerCall(4),
    ..OpDecl::of::<AssemblyOp>(TAG)
};

/// The body of `POST /v1/sourcing/owners`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OwnersBody {
    /// 1 to 100 distinct parcel ids as search and plot utilisation return them (INSPIRE ids as
    /// text). An id naming no loaded parcel is a `not_found` item, not charged.
    #[validate(length(min = 1, max = 100))]
    #[schemars(extend("items" = {"type": "string", "pattern": PARCEL_ID}))]
    #[schemars(extend("uniqueItems" = true))]
    pub parcel_ids: Vec<String>,
    /// What is owned: `land` (default), the proprietors of the company-owned titles linked to
    /// the parcel through the addresses on it
    #[serde(default)]
    pub asset: Asset,
}

pub struct OwnersOp;

impl Operation for OwnersOp {
    type Params = NoParams;
    type Body = Json<OwnersBody>;
    type Input = OwnersQuery;
    type Output = OwnersAnswer;

    fn check(_: NoParams, Json(b): Json<OwnersBody>) -> Result<OwnersQuery, ApiError> {
        let q = OwnersQuery {
            parcel_ids: b.parcel_ids,
            asset: b.asset,
        };
        let v = q.violations();
        if v.is_empty() {
            Ok(q)
        } else {
            Err(invalid(In::Body, v))
        }
    }

    async fn run(ctx: &Ctx, q: OwnersQuery) -> Result<OwnersAnswer, ApiError> {
        owners::owners(&sourcing_ctx(ctx), &q)
            .await
            .map_err(|e| sourcing_error(e, In::Body))
    }

    fn charged_items(out: &OwnersAnswer) -> Option<i64> {
        Some(out.charged())
    }
}

pub(crate) static OWNERS: OpDecl = OpDecl {
    id: "sourcing_owners",
    path: "/v1/sourcing/owners",
    summary: "Registered owners of parcels",
    description: "For each of 1 to 100 distinct parcel ids (as search and plot utilisation return them), the company, public body and overseas proprietors of the company-owned titles linked to it (HM Land Registry's CCOD and OCOD, linked through the addresses on the parcel): name, company number, registration category, country of incorporation, address, Companies House status where loaded, and the title numbers with their tenure. A parcel with no linked company title is `unresolved` with the reason: individually owned titles are not in the bulk registers, so they are counted, never named (naming one needs a paid per-title purchase, which this does not make). An id naming no loaded parcel is a `not_found` item. `summary`: parcels asked, resolved, unresolved, not found, distinct owners and the share resolved. Only `resolved` items are charged; unresolved and not_found items are free.",
    price: Price::PerItem(1),
    ..OpDecl::of::<OwnersOp>(TAG)
};
