//! Batch tools answer compactly over MCP: a model reads every character of a tool result, and a
//! 100-item risk batch in full is about 877,000 characters (some 219,000 tokens), more than an
//! agent's context. By default each item is its UPRN, its outcome (and error) and a `summary` of
//! the headline fields; `detail: true` gives the full bodies, as many as fit the per-result
//! budget ([`RESULT_BUDGET_CHARS`]), the rest compact. The HTTP answer is unchanged, and so is
//! the price: the items answered are charged whatever the form (see docs/API-DESIGN.md, "The MCP
//! surface").

use crate::error::{ApiError, FieldError};
use crate::registry::{OpDecl, Price};
use serde_json::{Map, Value, json};

/// The most characters one tool result's text should carry (about 15,000 to 20,000 tokens of
/// JSON, under the 25,000-token limit common hosts put on a tool result).
pub const RESULT_BUDGET_CHARS: usize = 60_000;

/// The argument that asks a batch tool for full bodies.
pub const DETAIL_ARG: &str = "detail";

/// The sentence added to a batch tool's description.
pub const DESCRIPTION: &str = "Over MCP the result is compact: each item carries its uprn, outcome and a summary of the headline fields; pass detail: true for the full bodies (as many as fit 60,000 characters, the rest compact). The price is the same either way, and calling again charges again, so ask for detail only for the items you need.";

/// Whether `op` is a batch (priced per item), answered compactly over MCP.
pub fn is_batch(op: &OpDecl) -> bool {
    matches!(op.price, Price::PerItem(_))
}

/// The `detail` argument's schema.
pub fn detail_schema() -> Value {
    json!({
        "type": "boolean",
        "default": false,
        "description": "false (default): per item the outcome and a summary of the headline fields; true: the full bodies, as many as fit the result budget (60,000 characters)."
    })
}

/// Takes the `detail` argument out of a batch tool's arguments (it is not the operation's): its
/// value, false when absent; a value that is not a boolean is a validation error.
pub fn take_detail(op: &OpDecl, args: &mut Map<String, Value>) -> Result<bool, ApiError> {
    if !is_batch(op) {
        return Ok(false);
    }
    match args.remove(DETAIL_ARG) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(b),
        Some(other) => Err(ApiError::Validation(vec![
            FieldError::new(
                &["arguments", DETAIL_ARG],
                "bool_type",
                "Input should be a valid boolean",
            )
            .with_input(other),
        ])),
    }
}

/// Adds the compact form to a batch's output schema: an item may carry `summary` instead of
/// `result`, and the answer says whether it is `detail`ed and why items are compact (`note`).
pub fn widen_output_schema(schema: &mut Map<String, Value>) {
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert(
            "detail".into(),
            json!({"type": "boolean", "description": "Whether full bodies were asked for (the `detail` argument)."}),
        );
        props.insert(
            "note".into(),
            json!({"type": "string", "description": "What the compact form leaves out and how to get it."}),
        );
        if let Some(item) = props
            .get_mut("items")
            .and_then(|i| i.get_mut("items"))
            .and_then(|i| i.get_mut("properties"))
            .and_then(Value::as_object_mut)
        {
            item.insert(
                "summary".into(),
                json!({"type": "object", "description": "The headline fields of the item's result (compact form; the full body is `result`, with detail: true)."}),
            );
        }
    }
}

/// One headline field: a JSON pointer into an item's result and the name it has in the summary;
/// or the length of an array there.
enum Pick {
    Field(&'static str, &'static str),
    Count(&'static str, &'static str),
}

/// The headline fields of each batch's items.
fn picks(op: &OpDecl) -> &'static [Pick] {
    match op.id {
        "property_lease_batch" => &[
            Pick::Field("/status", "status"),
            Pick::Field("/reason", "reason"),
            Pick::Field("/registered_leases", "registered_leases"),
            Pick::Field("/lease/unexpired_years", "unexpired_years"),
            Pick::Field("/lease/is_short_lease", "is_short_lease"),
            Pick::Field("/lease/is_under_60_years", "is_under_60_years"),
            Pick::Field("/lease/date_of_lease", "date_of_lease"),
            Pick::Field("/lease/tenure", "tenure"),
        ],
        "property_risk_batch" => &[
            Pick::Field("/local_authority", "local_authority"),
            Pick::Field("/flood/zone", "flood_zone"),
            Pick::Field("/flood/rivers_and_sea_band", "rivers_and_sea_band"),
            Pick::Field("/flood/surface_water_band", "surface_water_band"),
            Pick::Field("/summary/true_flags", "true_flags"),
            Pick::Count("/summary/false_flags", "false_flags"),
            Pick::Count("/summary/not_checked", "not_checked"),
            Pick::Count("/summary/datasets_not_loaded", "datasets_not_loaded"),
        ],
        "property_planning_history_batch" => &[
            Pick::Field("/status", "status"),
            Pick::Field("/reason", "reason"),
            Pick::Field("/local_planning_authority/name", "local_planning_authority"),
            Pick::Field("/match_level", "match_level"),
            Pick::Count("/applications", "applications"),
            Pick::Field("/applications/0/reference", "latest_reference"),
            Pick::Field("/applications/0/decision", "latest_decision"),
            Pick::Field("/applications/0/received_date", "latest_received_date"),
            Pick::Field("/what_needs_consent/required", "needs_consent"),
        ],
        _ => &[],
    }
}

/// The summary of one item's result.
fn summary(op: &OpDecl, result: &Value) -> Value {
    let mut out = Map::new();
    for p in picks(op) {
        match p {
            Pick::Field(ptr, name) => {
                if let Some(v) = result.pointer(ptr) {
                    out.insert((*name).into(), v.clone());
                }
            }
            Pick::Count(ptr, name) => {
                if let Some(a) = result.pointer(ptr).and_then(Value::as_array) {
                    out.insert((*name).into(), json!(a.len()));
                }
            }
        }
    }
    Value::Object(out)
}

/// The compact form of one item: `result` replaced by its summary.
fn compact_item(op: &OpDecl, item: &mut Value) {
    if let Some(m) = item.as_object_mut()
        && let Some(result) = m.remove("result")
        && !result.is_null()
    {
        m.insert("summary".into(), summary(op, &result));
    }
}

/// Shapes a batch answer for MCP: compact items; or, with `detail`, full items in order as long
/// as the whole stays within [`RESULT_BUDGET_CHARS`] (counting the others compact), and compact
/// ones after that.
pub fn shape(op: &OpDecl, body: &mut Map<String, Value>, detail: bool) {
    let size = |v: &Value| serde_json::to_string(v).map(|s| s.len()).unwrap_or(0);
    let Some(items) = body.get_mut("items").and_then(Value::as_array_mut) else {
        return;
    };
    let full: Vec<Value> = std::mem::take(items);
    let compact: Vec<Value> = full
        .iter()
        .map(|item| {
            let mut c = item.clone();
            compact_item(op, &mut c);
            c
        })
        .collect();
    // What the answer carries besides its items: its other fields, and the room the `detail`,
    // `note` and credit fields take once added.
    const FRAME_RESERVE: usize = 600;
    let frame = serde_json::to_string(&*body).map_or(0, |s| s.len()) + FRAME_RESERVE;
    let mut total: usize = frame + compact.iter().map(size).sum::<usize>();
    let mut compacted = 0usize;
    let mut items = Vec::with_capacity(full.len());
    for (f, c) in full.into_iter().zip(compact) {
        let has_result = f.get("result").is_some_and(|r| !r.is_null());
        let (fs, cs) = (size(&f), size(&c));
        let with_full = (total + fs).saturating_sub(cs);
        if detail && with_full <= RESULT_BUDGET_CHARS {
            total = with_full;
            items.push(f);
        } else {
            if has_result {
                compacted += 1;
            }
            items.push(c);
        }
    }
    body.insert("items".into(), Value::Array(items));
    body.insert("detail".into(), json!(detail));
    let note = match (detail, compacted) {
        (_, 0) => None,
        (false, n) => Some(format!(
            "Compact result: {n} item(s) carry a summary of their headline fields instead of the full result. Call again with detail: true and only the UPRNs you need for full bodies (charged again per answered item)."
        )),
        (true, n) => Some(format!(
            "The full bodies did not all fit the {RESULT_BUDGET_CHARS}-character result budget: {n} item(s) carry a summary. Call again with detail: true for those UPRNs (charged again per answered item)."
        )),
    };
    if let Some(n) = note {
        body.insert("note".into(), json!(n));
    }
}
