//! Catalogue operations (specification part 4.9: catalogue): the public directories. Free, with a
//! key like every other free operation (docs/API-DESIGN.md, "The catalogue: free, with a key").

use crate::error::ApiError;
use crate::input::{In, cursor_refused, invalid};
use crate::registry::{Ctx, NoBody, OpDecl, Operation};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_areas::catalogue::{
    self as catalogue, After, DirectoryKind, DirectoryPage, MarketAreaKind, MarketAreasPage,
    RecordId, RecordKind, RecordPreview,
};
use terrace_core::{AreaId, AreaKind, CursorError, Postcode, Uprn, patterns};
use validator::Validate;

const TAG: &str = "catalogue";

/// The catalogue family's operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[&AREAS, &DIRECTORY, &RECORDS];

fn default_limit() -> i64 {
    catalogue::PAGE_DEFAULT
}

use crate::input::value_error;

/// The query of `GET /v1/catalogue/areas`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AreasParams {
    /// Only market areas of this kind (all kinds when absent)
    #[serde(default)]
    pub kind: Option<MarketAreaKind>,
    /// The `next_cursor` of the previous page, unchanged; absent for the first page (one written
    /// for another `kind` names no page of this walk: 404)
    #[serde(default)]
    #[validate(length(min = 1, max = 504))]
    #[schemars(regex(pattern = terrace_core::cursor::PATTERN))]
    pub cursor: Option<String>,
    /// How many areas at most (1 to 500)
    #[serde(default = "default_limit")]
    #[validate(range(min = 1, max = 500))]
    pub limit: i64,
}

pub struct Areas;

impl Operation for Areas {
    type Params = AreasParams;
    type Body = NoBody;
    type Input = AreasParams;
    type Output = MarketAreasPage;

    fn check(mut p: AreasParams, _: NoBody) -> Result<AreasParams, ApiError> {
        // The input carries the area id the cursor names, decoded once here.
        p.cursor = catalogue::areas_cursor_scope(p.kind)
            .decode_opt(p.cursor.as_deref())
            .map_err(|e| cursor_refused(In::Query, e))?
            .map(|parts| parts.concat());
        Ok(p)
    }

    async fn run(ctx: &Ctx, p: AreasParams) -> Result<MarketAreasPage, ApiError> {
        Ok(catalogue::market_areas(&ctx.state.db, p.kind, p.cursor.as_deref(), p.limit).await?)
    }
}

pub(crate) static AREAS: OpDecl = OpDecl {
    id: "catalogue_areas",
    path: "/v1/catalogue/areas",
    summary: "The market area directory",
    description: "Lists the market areas the market build publishes (postcode areas, postcode districts and local authorities), in area id order, each with its counts: the register's addresses in it, the registered sales the market build counted, whether an index is published and how many index and forecast periods. `kind` keeps one kind; pages of `limit` areas follow `next_cursor` (null on the last page). The directory is computed by the build and says when (`built_at`).",
    ..OpDecl::of::<Areas>(TAG)
};

/// The path and query of `GET /v1/catalogue/directory/{district}/{kind}`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DirectoryParams {
    /// A postcode district: the outward code of a postcode (`SW19`, `EX1`)
    #[validate(length(min = 2, max = 4))]
    #[schemars(regex(pattern = r"^[A-Za-z]{1,2}[0-9][0-9A-Za-z]?$"))]
    pub district: String,
    /// What to list: the district's postcodes, streets or properties
    pub kind: DirectoryKind,
    /// The `next_cursor` of the previous page, unchanged; absent for the first page (one written
    /// for another district or kind names no page of this listing: 404)
    #[serde(default)]
    #[validate(length(min = 1, max = 504))]
    #[schemars(regex(pattern = terrace_core::cursor::PATTERN))]
    pub cursor: Option<String>,
    /// How many items at most (1 to 500)
    #[serde(default = "default_limit")]
    #[validate(range(min = 1, max = 500))]
    pub limit: i64,
}

/// A checked directory request.
pub struct DirectoryInput {
    district: AreaId,
    kind: DirectoryKind,
    after: After,
    limit: i64,
}

pub struct Directory;

impl Operation for Directory {
    type Params = DirectoryParams;
    type Body = NoBody;
    type Input = DirectoryInput;
    type Output = DirectoryPage;

    fn check(p: DirectoryParams, _: NoBody) -> Result<DirectoryInput, ApiError> {
        let mut path = Vec::new();
        let mut query = Vec::new();
        let district = AreaId::new(AreaKind::District, &p.district)
            .ok()
            .filter(|_| !p.district.contains(char::is_whitespace));
        if district.is_none() {
            path.push(value_error(
                "district",
                "a postcode district is an outward code such as SW19 or EX1",
                &p.district,
            ));
        }
        // The cursor is bound to the district and kind; it is read once the district is.
        let after = match &district {
            None => {
                if let Some(Err(v)) = p.cursor.as_deref().map(terrace_core::cursor::check_form) {
                    query.push(v);
                }
                None
            }
            Some(d) => {
                match catalogue::directory_cursor_scope(d, p.kind).decode_opt(p.cursor.as_deref()) {
                    Ok(None) => Some(After::Start),
                    Ok(Some(parts)) => {
                        let key = parts.concat();
                        match p.kind {
                            DirectoryKind::Properties => match key.parse::<i64>() {
                                Ok(u) => Some(After::Uprn(u)),
                                Err(_) => {
                                    return Err(cursor_refused(
                                        In::Query,
                                        CursorError::NotThisQuery(format!(
                                            "a page of properties at cursor {:?}",
                                            p.cursor.as_deref().unwrap_or_default()
                                        )),
                                    ));
                                }
                            },
                            DirectoryKind::Postcodes | DirectoryKind::Streets => {
                                Some(After::Key(key))
                            }
                        }
                    }
                    Err(CursorError::Malformed(v)) => {
                        query.push(v);
                        None
                    }
                    Err(e @ CursorError::NotThisQuery(_)) => {
                        return Err(cursor_refused(In::Query, e));
                    }
                }
            }
        };
        match (district, after) {
            (Some(district), Some(after)) if query.is_empty() => Ok(DirectoryInput {
                district,
                kind: p.kind,
                after,
                limit: p.limit,
            }),
            (_, _) => {
                let mut errors: Vec<crate::error::FieldError> = path
                    .into_iter()
                    .map(|v| crate::input::located(In::Path, v))
                    .collect();
                errors.extend(
                    query
                        .into_iter()
                        .map(|v| crate::input::located(In::Query, v)),
                );
                Err(ApiError::Validation(errors))
            }
        }
    }

    async fn run(ctx: &Ctx, i: DirectoryInput) -> Result<DirectoryPage, ApiError> {
        Ok(catalogue::directory(&ctx.state.db, &i.district, i.kind, &i.after, i.limit).await?)
    }
}

pub(crate) static DIRECTORY: OpDecl = OpDecl {
    id: "catalogue_directory",
    path: "/v1/catalogue/directory/{district}/{kind}",
    summary: "A postcode district's postcodes, streets or properties",
    description: "Lists a postcode district's postcodes (each with its number of addresses), streets (each with its number of addresses) or properties (UPRN, address line, postcode, classification) from the address register, in order, in pages of `limit` following `next_cursor` (null on the last page). No sale, valuation or index figure is shown. A district with no address in the register is a 404; a malformed district or cursor is a 422; a well-formed cursor written for another district or kind names no page of this listing: a 404.",
    ..OpDecl::of::<Directory>(TAG)
};

/// The path of `GET /v1/catalogue/records/{kind}/{identifier}`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordParams {
    /// The kind of record: `postcode`, `property` (a UPRN), `area` (an area id); `title` and
    /// `company` are answered 404 until the ownership family lands
    pub kind: RecordKind,
    /// The record's identifier: a postcode (`SW19 1AA`), a UPRN, an area id (`district:SW19`,
    /// `lad:E09000024`), a title number or a company number
    /// (an identifier not of its kind's form names no record: 404, with the form expected)
    #[validate(length(min = 1, max = 100))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub identifier: String,
}

pub struct Records;

fn reference(s: &str) -> Option<String> {
    let s = s.trim().to_ascii_uppercase();
    ((1..=20).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(s)
}

impl Operation for Records {
    type Params = RecordParams;
    type Body = NoBody;
    type Input = RecordId;
    type Output = RecordPreview;

    fn check(p: RecordParams, _: NoBody) -> Result<RecordId, ApiError> {
        let s = p.identifier.as_str();
        let (id, rule) = match p.kind {
            RecordKind::Postcode => (
                Postcode::parse(s).ok().map(RecordId::Postcode),
                "a postcode record's identifier is a full postcode such as SW19 1AA",
            ),
            RecordKind::Property => (
                Uprn::parse(s).ok().map(RecordId::Property),
                "a property record's identifier is a UPRN (1 to 12 digits)",
            ),
            RecordKind::Area => (
                AreaId::parse(s).ok().map(RecordId::Area),
                "an area record's identifier is an area id such as district:SW19 or lad:E09000024",
            ),
            RecordKind::Title => (
                reference(s).map(RecordId::Title),
                "a title number is 1 to 20 letters and digits",
            ),
            RecordKind::Company => (
                reference(s).map(RecordId::Company),
                "a company number is 1 to 20 letters and digits",
            ),
        };
        // The identifier's form depends on `kind`, which one parameter's schema cannot state:
        // a non-blank identifier of another form names no record of this kind (404, with the
        // form expected); a blank one is malformed (422).
        if patterns::is_blank(s) {
            return Err(invalid(
                In::Path,
                vec![value_error("identifier", "the identifier is not blank", s)],
            ));
        }
        id.ok_or_else(|| ApiError::NotFound(format!("a {} record {s:?} ({rule})", p.kind.as_str())))
    }

    async fn run(ctx: &Ctx, id: RecordId) -> Result<RecordPreview, ApiError> {
        Ok(catalogue::record(&ctx.state.areas, &id).await?)
    }
}

pub(crate) static RECORDS: OpDecl = OpDecl {
    id: "catalogue_record",
    path: "/v1/catalogue/records/{kind}/{identifier}",
    summary: "A record preview",
    description: "Previews one record without the priced analytics: a postcode (its district, sector, local authority, position, address count and streets), a property by UPRN (address line, postcode, classification, district and local authority) or an area by area id (the resolved area with its parents, and its market directory counts). Each preview names the operations that answer more. `title` and `company` records are not available until the ownership family lands: 404 with that reason. An unknown record is a 404, and so is an identifier not of its kind's form (the answer says the form expected, since it depends on `kind`); a blank identifier is a 422.",
    ..OpDecl::of::<Records>(TAG)
};
