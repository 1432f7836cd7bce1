//! The strategies, the search and the off-market owners.

use super::{TAG, sourcing_ctx, sourcing_error};
use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::registry::{Ctx, Json, NoBody, NoParams, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use terrace_core::Violation;
use terrace_sourcing::offmarket::{self, OffmarketAnswer, OffmarketQuery, OwnersArea};
use terrace_sourcing::search::{self, Place, SearchAnswer, SearchQuery};
use terrace_sourcing::strategy::{self, Asset, FilterKind, StrategiesAnswer};
use validator::Validate;

/// A GSS code, upper case.
pub(crate) fn gss(field: &str, v: &str) -> Result<String, Violation> {
    terrace_core::GssCode::parse(v)
        .map(|c| c.to_string())
        .map_err(|_| {
            Violation::new(
                &[field],
                "value_error",
                format!("Value error, {field} is a local authority GSS code such as E07000041"),
            )
            .with_input(v.to_string())
        })
}

/// A postcode district (outward code), upper case; a full postcode is truncated to it.
pub(crate) fn district(field: &str, v: &str) -> Result<String, Violation> {
    let t = v.trim().to_ascii_uppercase();
    let outward = match terrace_core::Postcode::parse(&t) {
        Ok(p) => Some(p.outward().to_string()),
        Err(_) => terrace_core::Postcode::parse(&format!("{t} 1AA"))
            .ok()
            .map(|p| p.outward().to_string()),
    };
    outward.ok_or_else(|| {
        Violation::new(
            &[field],
            "value_error",
            format!("Value error, {field} is a postcode district (outward code) such as EX1"),
        )
        .with_input(v.to_string())
    })
}

/// The checked input, or every violation found: the strategy rules are read only once the
/// fields themselves are valid.
fn finish<Q>(
    q: Q,
    mut found: Vec<Violation>,
    rules: fn(&Q) -> Result<(), Vec<Violation>>,
) -> Result<Q, ApiError> {
    if found.is_empty()
        && let Err(v) = rules(&q)
    {
        found.extend(v);
    }
    if found.is_empty() {
        Ok(q)
    } else {
        Err(invalid(In::Body, found))
    }
}

fn cursor_form(c: &Option<String>, found: &mut Vec<Violation>) {
    if let Some(t) = c
        && let Err(v) = terrace_core::cursor::check_form(t)
    {
        found.push(v);
    }
}

// ---------------------------------------------------------------------------------------------
// GET /v1/sourcing/strategies

/// The query of `GET /v1/sourcing/strategies`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StrategiesParams {
    /// A local authority's GSS code (E07000041): each strategy then says whether the
    /// authority's data is ready for it (`data_ready`)
    #[schemars(regex(pattern = terrace_core::patterns::GSS_CODE))]
    pub area: Option<String>,
}

pub struct StrategiesOp;

impl Operation for StrategiesOp {
    type Params = StrategiesParams;
    type Body = NoBody;
    type Input = Option<String>;
    type Output = StrategiesAnswer;

    fn check(p: StrategiesParams, _: NoBody) -> Result<Option<String>, ApiError> {
        p.area
            .map(|a| gss("area", &a))
            .transpose()
            .map_err(|v| invalid(In::Query, vec![v]))
    }

    async fn run(ctx: &Ctx, area: Option<String>) -> Result<StrategiesAnswer, ApiError> {
        strategy::strategies(&sourcing_ctx(ctx), area.as_deref())
            .await
            .map_err(|e| sourcing_error(e, In::Query))
    }
}

pub(crate) static STRATEGIES: OpDecl = OpDecl {
    id: "sourcing_strategies",
    path: "/v1/sourcing/strategies",
    summary: "The sourcing strategies as data",
    description: "The sourcing strategy presets as data: each with its thesis, the asset it finds (`parcel` or `unit`), its filters (every key overridable in `POST /v1/sourcing/search`, with its default, kind and unit), its ranking components with weights and scales (a score is the sum of each feature scaled linearly onto 0..1 between the component's `lo` and `hi`, times its weight), the feature columns it reads, the data gaps that limit it, and its version. With `area` (a local authority GSS code), each strategy also says whether that authority's data is ready for it (`data_ready`: `ready`, `partial`, `not_ready` or `unknown`, with the coverage share behind the verdict and each need's share), read from the coverage register (`GET /v1/areas/coverage`). An authority not loaded is a 404. Free.",
    price: Price::Free,
    ..OpDecl::of::<StrategiesOp>(TAG)
};

// ---------------------------------------------------------------------------------------------
// POST /v1/sourcing/search

fn default_limit() -> i64 {
    50
}

/// The asset explicit filters search.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum AssetParam {
    Parcel,
    #[default]
    Unit,
}

/// A WGS84 point and a radius.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LocationBody {
    /// Latitude, WGS84
    #[validate(range(min = 49.0, max = 61.0))]
    pub lat: f64,
    /// Longitude, WGS84
    #[validate(range(min = -9.0, max = 2.5))]
    pub lon: f64,
    /// Radius in metres (default 500, at most 5,000)
    #[serde(default = "default_radius")]
    #[validate(range(min = 1.0, max = 5000.0))]
    pub radius_m: f64,
}

fn default_radius() -> f64 {
    500.0
}

/// The body of `POST /v1/sourcing/search`: exactly one of `lad_code`, `postcode_district`,
/// `bbox` and `location`; a `strategy` (with `strategy_overrides`) or explicit `filters`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = search_rules)]
pub struct SearchBody {
    /// A local authority's GSS code (E07000041)
    #[schemars(regex(pattern = terrace_core::patterns::GSS_CODE))]
    pub lad_code: Option<String>,
    /// A postcode district (EX1); a full postcode is truncated to its district
    #[schemars(regex(pattern = terrace_core::patterns::DISTRICT))]
    pub postcode_district: Option<String>,
    /// A WGS84 box: [west, south, east, north], at most 0.1 degree on a side
    #[validate(length(min = 4, max = 4))]
    pub bbox: Option<Vec<f64>>,
    /// A WGS84 point and a radius
    #[validate(nested)]
    pub location: Option<LocationBody>,
    /// A strategy id from `GET /v1/sourcing/strategies`
    #[validate(length(min = 1, max = 60))]
    pub strategy: Option<String>,
    /// With a strategy: filter values replacing its defaults (`{"min_yield_pct": 8}`); `null`
    /// switches a filter off; an unknown key is refused
    pub strategy_overrides: Option<Map<String, Value>>,
    /// Without a strategy: the asset to find (default unit)
    #[serde(default)]
    pub asset: AssetParam,
    /// Without a strategy: filters by key, from the strategies of the asset (at least one)
    pub filters: Option<Map<String, Value>>,
    /// Parcels: keep open land (parks, sports grounds, railways, farmland, utilities), which is
    /// left out by default
    #[serde(default)]
    pub include_open_land: bool,
    /// Rows per page (default 50)
    #[serde(default = "default_limit")]
    #[validate(range(min = 1, max = 500))]
    pub limit: i64,
    /// The `next_cursor` of the previous page of the same search
    #[validate(length(min = 1, max = 504))]
    #[schemars(regex(pattern = terrace_core::cursor::PATTERN))]
    pub cursor: Option<String>,
}

/// The JSON Schema of one filter's value, by kind (`null` switches it off).
fn filter_schema(kind: FilterKind) -> Value {
    match kind {
        FilterKind::Min | FilterKind::Max => {
            json!({"type": ["number", "null"], "minimum": 0, "maximum": 1.0e9})
        }
        FilterKind::Switch => json!({"type": ["boolean", "null"]}),
        FilterKind::Bands => json!({"type": ["array", "null"], "minItems": 1, "maxItems": 7,
            "items": {"type": "string", "enum": ["A", "B", "C", "D", "E", "F", "G", "a", "b", "c", "d", "e", "f", "g"]}}),
    }
}

/// An object of a strategy's (or an asset's) filters: each key optional, no other key.
fn filters_object(filters: &[&strategy::FilterSpec], min_properties: usize) -> Value {
    let props: Map<String, Value> = filters
        .iter()
        .map(|f| (f.key.to_string(), filter_schema(f.kind)))
        .collect();
    json!({"type": "object", "properties": props, "additionalProperties": false,
        "minProperties": min_properties})
}

/// The search body's rules across fields, for the document and MCP: exactly one place, and
/// either a strategy (its overrides keyed by its own filters) or explicit filters of an asset.
fn search_rules(schema: &mut schemars::Schema) {
    let mut place = schemars::Schema::default();
    terrace_core::patterns::exactly_one_of(
        &mut place,
        &[
            &["lad_code"],
            &["postcode_district"],
            &["bbox"],
            &["location"],
        ],
    );
    let all = strategy::all();
    let mut modes: Vec<Value> = all
        .iter()
        .map(|s| {
            let filters: Vec<&strategy::FilterSpec> = s.filters.iter().collect();
            let mut overrides = filters_object(&filters, 0);
            overrides["type"] = json!(["object", "null"]);
            json!({"required": ["strategy"], "properties": {
                "strategy": {"const": s.id},
                "strategy_overrides": overrides,
                "filters": {"type": "null"}}})
        })
        .collect();
    for (asset, name) in [(Asset::Parcel, "parcel"), (Asset::Unit, "unit")] {
        let filters: Vec<&strategy::FilterSpec> = all
            .iter()
            .filter(|s| s.asset == asset)
            .flat_map(|s| s.filters.iter())
            .collect();
        let mut branch = json!({"required": ["filters"], "properties": {
            "strategy": {"type": "null"},
            "strategy_overrides": {"type": "null"},
            "asset": {"const": name},
            "filters": filters_object(&filters, 1)}});
        if asset == Asset::Parcel {
            branch["required"] = json!(["filters", "asset"]);
        }
        modes.push(branch);
    }
    // Explicit unit filters may leave `asset` out (its default).
    if let Some(last) = modes.last_mut()
        && let Some(p) = last["properties"].as_object_mut()
    {
        p.remove("asset");
        p.insert("asset".into(), json!({"enum": ["unit", null]}));
    }
    let place = place.as_value()["oneOf"].clone();
    schema.insert("allOf".into(), json!([{"oneOf": place}, {"oneOf": modes}]));
}

/// Exactly one place, read; violations collected.
fn place_of(
    lad: Option<&str>,
    district_code: Option<&str>,
    bbox: Option<&[f64]>,
    location: Option<&LocationBody>,
    found: &mut Vec<Violation>,
) -> Option<Place> {
    let given = [
        lad.is_some(),
        district_code.is_some(),
        bbox.is_some(),
        location.is_some(),
    ]
    .iter()
    .filter(|b| **b)
    .count();
    if given != 1 {
        found.push(Violation::new(
            &[],
            "value_error",
            "Value error, give exactly one of lad_code, postcode_district, bbox and location",
        ));
        return None;
    }
    if let Some(l) = lad {
        return gss("lad_code", l)
            .map(Place::Lad)
            .map_err(|v| found.push(v))
            .ok();
    }
    if let Some(d) = district_code {
        return district("postcode_district", d)
            .map(Place::District)
            .map_err(|v| found.push(v))
            .ok();
    }
    if let Some(b) = bbox {
        let (ok, [w, s, e, n]) = match *b {
            [w, s, e, n] => (true, [w, s, e, n]),
            _ => (false, [0.0; 4]),
        };
        let ok = ok
            && (-9.0..=2.5).contains(&w)
            && (-9.0..=2.5).contains(&e)
            && (49.0..=61.0).contains(&s)
            && (49.0..=61.0).contains(&n)
            && w < e
            && s < n
            && e - w <= 0.1
            && n - s <= 0.1;
        if !ok {
            found.push(
                Violation::new(
                    &["bbox"],
                    "value_error",
                    "Value error, bbox is [west, south, east, north] in WGS84 degrees over Great Britain, west below east, south below north, at most 0.1 degree on a side",
                )
                .with_input(serde_json::json!(b)),
            );
            return None;
        }
        return Some(Place::Bbox([w, s, e, n]));
    }
    location.map(|l| Place::Radius {
        lat: l.lat,
        lon: l.lon,
        radius_m: l.radius_m,
    })
}

pub struct SearchOp;

impl Operation for SearchOp {
    type Params = NoParams;
    type Body = Json<SearchBody>;
    type Input = SearchQuery;
    type Output = SearchAnswer;

    fn check(_: NoParams, Json(b): Json<SearchBody>) -> Result<SearchQuery, ApiError> {
        let mut found = Vec::new();
        let place = place_of(
            b.lad_code.as_deref(),
            b.postcode_district.as_deref(),
            b.bbox.as_deref(),
            b.location.as_ref(),
            &mut found,
        );
        cursor_form(&b.cursor, &mut found);
        match (&b.strategy, &b.filters, &b.strategy_overrides) {
            (Some(_), Some(_), _) => found.push(Violation::new(
                &["filters"],
                "value_error",
                "Value error, give a strategy (with strategy_overrides) or explicit filters, not both",
            )),
            (None, _, Some(_)) => found.push(Violation::new(
                &["strategy_overrides"],
                "value_error",
                "Value error, strategy_overrides needs a strategy",
            )),
            (None, None, None) => found.push(Violation::new(
                &["strategy"],
                "value_error",
                "Value error, give a strategy or explicit filters",
            )),
            _ => {}
        }
        let Some(place) = place else {
            return Err(invalid(In::Body, found));
        };
        let q = SearchQuery {
            place,
            strategy: b.strategy,
            overrides: b.strategy_overrides.unwrap_or_default(),
            asset: match b.asset {
                AssetParam::Parcel => Asset::Parcel,
                AssetParam::Unit => Asset::Unit,
            },
            filters: b.filters.unwrap_or_default(),
            include_open_land: b.include_open_land,
            limit: usize::try_from(b.limit).unwrap_or(1),
            cursor: b.cursor,
            today: chrono::Utc::now().date_naive(),
        };
        finish(q, found, search::validate)
    }

    async fn run(ctx: &Ctx, mut q: SearchQuery) -> Result<SearchAnswer, ApiError> {
        q.today = ctx.now.date_naive();
        search::search(&sourcing_ctx(ctx), &q)
            .await
            .map_err(|e| sourcing_error(e, In::Body))
    }
}

pub(crate) static SEARCH: OpDecl = OpDecl {
    id: "sourcing_search",
    path: "/v1/sourcing/search",
    summary: "Parcels or units matching a strategy in an area, ranked and explained",
    description: "The land parcels or residential units of an area matching a sourcing strategy (`strategy`, with `strategy_overrides`: a value replaces a filter's default, `null` switches it off, an unknown key is a 422) or explicit `filters` for an `asset` (the filters of the asset's strategies by key; the ranking is then their strategies' components, reweighted). The area is exactly one of `lad_code` (a GSS code), `postcode_district`, `bbox` ([west, south, east, north], WGS84, at most 0.1 degree a side) or `location` (lat, lon, radius_m). Each row has its score (0 to 1) and `score_components` (each feature's value, its scaled value, weight and contribution: the contributions sum to the score), the unit's facts or the parcel's plot, and the parcel id `GET /v1/sourcing/parcel` and `POST /v1/sourcing/owners` take. A unit passes a filter only where the feature is known: `funnel` counts those left out for an unknown feature apart from those that failed. Parks, sports grounds, railways, farmland and utility land are excluded from parcel searches by default (`open_land` says so; `include_open_land` keeps them). Rows are ranked by score, then id, `limit` a page; pass `next_cursor` as `cursor` with the same body for the next. An unknown authority is a 404.",
    price: Price::PerCall(5),
    ..OpDecl::of::<SearchOp>(TAG)
};

// ---------------------------------------------------------------------------------------------
// POST /v1/sourcing/offmarket-owners

fn default_min_units() -> i64 {
    1
}

/// The body of `POST /v1/sourcing/offmarket-owners`: exactly one of `lad_code` and
/// `postcode_district`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = offmarket_rules)]
pub struct OffmarketBody {
    /// A local authority's GSS code (E07000041)
    #[schemars(regex(pattern = terrace_core::patterns::GSS_CODE))]
    pub lad_code: Option<String>,
    /// A postcode district (EX1); a full postcode is truncated to its district
    #[schemars(regex(pattern = terrace_core::patterns::DISTRICT))]
    pub postcode_district: Option<String>,
    /// A unit strategy: only the units matching it count towards the holdings
    #[validate(length(min = 1, max = 60))]
    pub strategy: Option<String>,
    /// With a strategy: filter values replacing its defaults; `null` switches a filter off
    pub strategy_overrides: Option<Map<String, Value>>,
    /// The fewest units an owner must hold in the area (default 1)
    #[serde(default = "default_min_units")]
    #[validate(range(min = 1, max = 10_000))]
    pub min_units: i64,
    /// Owners per page (default 50)
    #[serde(default = "default_limit")]
    #[validate(range(min = 1, max = 500))]
    pub limit: i64,
    /// The `next_cursor` of the previous page of the same request
    #[validate(length(min = 1, max = 504))]
    #[schemars(regex(pattern = terrace_core::cursor::PATTERN))]
    pub cursor: Option<String>,
}

/// Exactly one area, and the overrides of the unit strategy given (none without one).
fn offmarket_rules(schema: &mut schemars::Schema) {
    let mut area = schemars::Schema::default();
    terrace_core::patterns::exactly_one_of(&mut area, &[&["lad_code"], &["postcode_district"]]);
    let mut modes: Vec<Value> = strategy::all()
        .iter()
        .filter(|s| s.asset == Asset::Unit)
        .map(|s| {
            let filters: Vec<&strategy::FilterSpec> = s.filters.iter().collect();
            let mut overrides = filters_object(&filters, 0);
            overrides["type"] = json!(["object", "null"]);
            json!({"required": ["strategy"], "properties": {
                "strategy": {"const": s.id}, "strategy_overrides": overrides}})
        })
        .collect();
    modes.push(json!({"properties": {
        "strategy": {"type": "null"}, "strategy_overrides": {"type": "null"}}}));
    let area = area.as_value()["oneOf"].clone();
    schema.insert("allOf".into(), json!([{"oneOf": area}, {"oneOf": modes}]));
}

pub struct OffmarketOp;

impl Operation for OffmarketOp {
    type Params = NoParams;
    type Body = Json<OffmarketBody>;
    type Input = OffmarketQuery;
    type Output = OffmarketAnswer;

    fn check(_: NoParams, Json(b): Json<OffmarketBody>) -> Result<OffmarketQuery, ApiError> {
        let mut found = Vec::new();
        let area = match (b.lad_code.as_deref(), b.postcode_district.as_deref()) {
            (Some(l), None) => gss("lad_code", l)
                .map(OwnersArea::Lad)
                .map_err(|v| found.push(v))
                .ok(),
            (None, Some(d)) => district("postcode_district", d)
                .map(OwnersArea::District)
                .map_err(|v| found.push(v))
                .ok(),
            (Some(_), Some(_)) | (None, None) => {
                found.push(Violation::new(
                    &[],
                    "value_error",
                    "Value error, give exactly one of lad_code and postcode_district",
                ));
                None
            }
        };
        cursor_form(&b.cursor, &mut found);
        let Some(area) = area else {
            return Err(invalid(In::Body, found));
        };
        let q = OffmarketQuery {
            area,
            strategy: b.strategy,
            overrides: b.strategy_overrides.unwrap_or_default(),
            min_units: usize::try_from(b.min_units).unwrap_or(1),
            limit: usize::try_from(b.limit).unwrap_or(1),
            cursor: b.cursor,
            today: chrono::Utc::now().date_naive(),
        };
        finish(q, found, offmarket::validate)
    }

    async fn run(ctx: &Ctx, mut q: OffmarketQuery) -> Result<OffmarketAnswer, ApiError> {
        q.today = ctx.now.date_naive();
        offmarket::offmarket_owners(&sourcing_ctx(ctx), &q)
            .await
            .map_err(|e| sourcing_error(e, In::Body))
    }
}

pub(crate) static OFFMARKET_OWNERS: OpDecl = OpDecl {
    id: "sourcing_offmarket_owners",
    path: "/v1/sourcing/offmarket-owners",
    summary: "Company owners of stock in an area, ranked, with the signals behind the rank",
    description: "The company owners of stock in a local authority (`lad_code`) or postcode district (`postcode_district`), optionally only of the units matching a unit strategy (`strategy`, `strategy_overrides`), with at least `min_units` units there, ranked by a score of holding size, average years held and equity (`score_components` explain it). Each owner has its company number, register (`ccod` UK, `ocod` overseas), Companies House status, units held, total value and equity over the prices paid (nominal, not net of debt, with how many units each sum covers), average and longest years held, units on a lease under 80 years and units already on the market, signals in words (`none` when nothing stands out) and up to five units. COMPANIES ONLY, by construction: owners are the proprietors of company and overseas company freehold titles linked to the area's units; units owned by individuals are not in those registers and are counted under `scope.not_itemised`, never listed: report `scope.share_itemised` with any figure. `national_portfolio` is `not_available`. An unknown authority, or a district with no unit, is a 404.",
    price: Price::PerCall(6),
    ..OpDecl::of::<OffmarketOp>(TAG)
};
