//! The OpenAPI 3.1 document, generated from the registry.

use crate::error::FieldError;
use crate::input::{In, exclusive_groups, fields, inclusive_groups};
use crate::registry::{OpDecl, operations};
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

fn error_response(g: &mut schemars::SchemaGenerator, description: &str) -> Value {
    let _ = g.subschema_for::<FieldError>();
    json!({"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

fn operation(op: &OpDecl, g: &mut schemars::SchemaGenerator) -> Value {
    let mut params: Vec<Value> = fields(op.contract.params)
        .into_iter()
        .map(|p| {
            let location = if op.in_path(&p.name) {
                In::Path
            } else {
                In::Query
            };
            json!({
                "name": p.name,
                "in": location.as_str(),
                "required": p.required,
                "description": p.description.unwrap_or_default(),
                "schema": p.schema,
            })
        })
        .collect();
    if op.takes_idempotency_key() {
        params.push(json!({
            "name": "Idempotency-Key",
            "in": "header",
            "required": false,
            "description": "A key of your choosing (a UUID): a repeat of the call with the same key within 24 hours returns the first answer (header `Idempotent-Replayed: true`) and charges nothing; the same key for a different request is 422.",
            "schema": {"type": "string", "minLength": 1, "maxLength": crate::pipeline::IDEMPOTENCY_KEY_MAX, "pattern": "^[!-~]+$"},
        }));
    }
    let credits = op.price.credits();
    let price_text = op.price.sentence();
    let response = (op.contract.response)(g);
    let mut o = json!({
        "operationId": op.id,
        "summary": op.summary,
        "description": format!("{} {price_text}", op.description),
        "tags": [op.tag],
        "parameters": params,
        "x-credits": credits,
        "x-price-rule": op.price.rule(),
        "x-mcp-tool": op.id,
        "responses": {
            "200": {"description": "Success; the body carries `credits_charged` and `credits_remaining`.",
                    "content": {"application/json": {"schema": {"allOf": [response, {"$ref": "#/components/schemas/Credits"}]}}}},
            "401": error_response(g, "Missing, unknown or revoked API key"),
            "402": error_response(g, "The balance cannot cover the call; nothing was charged"),
            "404": error_response(g, "Not found"),
            "405": error_response(g, "The path does not answer this method; see Allow"),
            "408": error_response(g, "The request body did not arrive within the body deadline"),
            "413": error_response(g, "The request body is larger than 1 MiB"),
            "415": error_response(g, "The body is not sent as `application/json`"),
            "422": {"description": "Validation error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ValidationError"}}}},
            "429": error_response(g, "Rate limited (the key's or the account's limit, named in `limit`); see Retry-After"),
            "500": error_response(g, "Internal error; nothing was charged"),
            "503": error_response(g, "The store is unavailable or the service is busy; see Retry-After"),
        },
    });
    if let Some(body) = op.contract.body {
        o["requestBody"] = json!({
            "required": op.contract.body_required,
            "content": {"application/json": {"schema": body(g)}},
        });
    }
    // OpenAPI cannot state a rule across parameters; `x-exactly-one-of` states it for machines
    // (the groups of query parameters of which exactly one is given; `.ci/schemathesis_hooks.py`
    // reads it) and the description for people.
    let groups = exclusive_groups(op.contract.params);
    if !groups.is_empty() {
        o["x-exactly-one-of"] = json!(groups);
    }
    let some = inclusive_groups(op.contract.params);
    if !some.is_empty() {
        o["x-at-least-one-of"] = json!(some);
    }
    if let Some(d) = op.deprecated {
        o["deprecated"] = json!(true);
        o["x-successor"] = json!(d.successor);
        o["x-sunset"] = json!(d.sunset);
    }
    o
}

/// The whole document. Deterministic: the same code always produces the same bytes.
pub fn document() -> Value {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.definitions_path = "/components/schemas".into();
    });
    let mut g = settings.into_generator();
    let mut paths: Map<String, Value> = Map::new();
    for op in operations() {
        let item = paths
            .entry(op.path.to_string())
            .or_insert_with(|| json!({}));
        item[op.method.as_str().to_lowercase()] = operation(op, &mut g);
    }
    let mut schemas: Map<String, Value> = g.take_definitions(true).into_iter().collect();
    schemas.insert(
        "Credits".into(),
        json!({"type": "object", "required": ["credits_charged", "credits_remaining"], "properties": {
            "credits_charged": {"type": "integer", "description": "Credits charged for this call; 0 for free calls and failures"},
            "credits_remaining": {"type": "integer", "description": "The balance after the call"}}}),
    );
    schemas.insert(
        "Error".into(),
        json!({"type": "object", "required": ["detail", "error", "credits_charged"], "properties": {
            "detail": {"type": "string"},
            "error": {"type": "object", "properties": {"code": {"type": "string"}, "message": {"type": "string"}}},
            "credits_charged": {"type": "integer", "const": 0},
            "credits_remaining": {"type": "integer", "description": "Present when the caller is known"},
            "credits_required": {"type": "integer", "description": "On 402: the price of the call"},
            "limit": {"type": "string", "enum": ["key", "account", "source", "sign_in"], "description": "On 429: which rate limit was reached"},
            "request_id": {"type": "string"}}}),
    );
    schemas.insert(
        "ValidationError".into(),
        json!({"type": "object", "required": ["detail", "credits_charged"], "properties": {
            "detail": {"type": "array", "items": {"$ref": "#/components/schemas/FieldError"}},
            "credits_charged": {"type": "integer", "const": 0},
            "credits_remaining": {"type": "integer"},
            "request_id": {"type": "string"}}}),
    );
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Terrace",
            "version": "0.1.0",
            "description": "UK property and market data by UPRN, paid per call in credits. Every response carries `credits_charged` and `credits_remaining`; a failed call costs nothing. Authenticate with `Authorization: Bearer <API key>`. Prices: `x-credits` on each operation and GET /v1/pricing.",
        },
        "servers": [{"url": "/"}],
        "security": [{"apiKey": []}],
        "tags": [
            {"name": "address", "description": "Addresses and UPRNs"},
            {"name": "property", "description": "One property by UPRN"},
            {"name": "market", "description": "House price indices, forecasts, volumes and rankings by area"},
            {"name": "commercial", "description": "Commercial property: the rent index of the rating lists, the commercial market of an authority, commercial sourcing"},
            {"name": "catalogue", "description": "The public directories: market areas, a district's postcodes, streets and properties, record previews (free)"},
            {"name": "planning", "description": "Planning checks at a location"},
            {"name": "site", "description": "Construction cost series and build-cost estimates"},
            {"name": "sourcing", "description": "Finding opportunities: strategies, search, parcels, land assembly, owners, live listings, the site appraisal and the area report"},
            {"name": "valuation", "description": "Valuations from the latest AVM vintage, the forward-measured accuracy table, and equity"},
            {"name": "land", "description": "Land parcels (INSPIRE index polygons) with the buildings and addresses on them"},
            {"name": "auctions", "description": "Auction lots, quarterly statistics, comparables and the discount to valuation, distressed properties: from the operator's auction lot feed (free)"},
            {"name": "areas", "description": "Area ids, resolving names and codes, reverse geocoding, the coverage register"},
            {"name": "ownership", "description": "Company-owned titles, their proprietors and the companies behind them"},
            {"name": "saved_searches", "description": "Saved searches: an account's named searches over the searchable operations, run at the stored operation's price"},
            {"name": "account", "description": "Balance, usage and API keys (free)"},
        ],
        "paths": paths,
        "components": {
            "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer", "description": "An API key: `Authorization: Bearer trc_...`"}},
            "schemas": schemas,
        },
    })
}

/// The document as committed to `docs/openapi.json` (pretty, trailing newline).
pub fn document_text() -> String {
    let mut s = serde_json::to_string_pretty(&document()).unwrap_or_default();
    s.push('\n');
    s
}
