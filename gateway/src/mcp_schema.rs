//! The tool schemas as strict JSON Schema 2020-12 validators read them (Ajv in strict mode, the
//! MCP Inspector's strict check): what schemars writes for the OpenAPI document, rewritten without
//! the constructs those tools refuse or warn about.
//!
//! - a non-standard `format` (`uint`, `uint32`, `int64`, `double`, `partial-date-time`, ...) is
//!   dropped; the bounds that mean the same (`minimum: 0` for an unsigned integer) stay;
//! - a type array (`"type": ["string", "null"]`) becomes `anyOf` with one branch per type, each
//!   branch keeping the keywords that apply to its type (limits, `enum` values of that type);
//! - a bare `true` sub-schema becomes `{}`, and `additionalProperties: true` / `items: true`
//!   (the defaults) are dropped.
//!
//! The rewrite changes no instance's validity: every value the schemars schema accepts, the
//! strict one accepts, and the other way round (the unknown formats were never asserted).

use serde_json::{Map, Value};

/// The formats of JSON Schema 2020-12 (section 7.3) that validators know.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keywords that describe rather than constrain; they stay on the outer schema when a type array
/// is split.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Keywords whose value is one sub-schema.
const ONE_SCHEMA: &[&str] = &[
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
];

/// Keywords whose value is a map of sub-schemas.
const SCHEMA_MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords whose value is a list of sub-schemas.
const SCHEMA_LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// The JSON types a type-specific keyword applies to.
fn applies_to(keyword: &str) -> Option<&'static [&'static str]> {
    const STRING: &[&str] = &["string"];
    const NUMBER: &[&str] = &["number", "integer"];
    const ARRAY: &[&str] = &["array"];
    const OBJECT: &[&str] = &["object"];
    Some(match keyword {
        "minLength" | "maxLength" | "pattern" | "format" | "contentEncoding"
        | "contentMediaType" => STRING,
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => NUMBER,
        "items" | "prefixItems" | "minItems" | "maxItems" | "uniqueItems" | "contains"
        | "minContains" | "maxContains" | "unevaluatedItems" => ARRAY,
        "properties"
        | "required"
        | "additionalProperties"
        | "patternProperties"
        | "propertyNames"
        | "minProperties"
        | "maxProperties"
        | "dependentRequired"
        | "dependentSchemas"
        | "unevaluatedProperties" => OBJECT,
        _ => return None,
    })
}

/// Whether `v` is an instance of the JSON type `t`.
fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.as_i64().is_some() || v.as_u64().is_some(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => false,
    }
}

/// Rewrites `schema` in place for strict validators (see the module documentation).
pub fn strict(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    for k in ONE_SCHEMA {
        if matches!(map.get(*k), Some(Value::Bool(true))) {
            map.remove(*k);
        } else if let Some(v) = map.get_mut(*k) {
            strict(v);
        }
    }
    for k in SCHEMA_MAP {
        if let Some(Value::Object(m)) = map.get_mut(*k) {
            for v in m.values_mut() {
                if *v == Value::Bool(true) {
                    *v = Value::Object(Map::new());
                }
                strict(v);
            }
        }
    }
    for k in SCHEMA_LIST {
        if let Some(Value::Array(list)) = map.get_mut(*k) {
            for v in list.iter_mut() {
                if *v == Value::Bool(true) {
                    *v = Value::Object(Map::new());
                }
                strict(v);
            }
        }
    }
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
    {
        map.remove("format");
    }
    match map.get("type") {
        Some(Value::Array(types)) if types.len() == 1 => {
            let t = types[0].clone();
            map.insert("type".into(), t);
        }
        Some(Value::Array(_)) => split_types(map),
        Some(_) | None => {}
    }
}

/// `{"type": [A, B], ...}` to `{annotations, "anyOf": [{"type": A, ...}, {"type": B, ...}]}`.
fn split_types(map: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = map.remove("type") else {
        return;
    };
    let mut outer = Map::new();
    let mut shared = Map::new();
    let mut specific = Map::new();
    for (k, v) in std::mem::take(map) {
        if ANNOTATIONS.contains(&k.as_str()) {
            outer.insert(k, v);
        } else if applies_to(&k).is_some() || k == "enum" || k == "const" {
            specific.insert(k, v);
        } else {
            shared.insert(k, v);
        }
    }
    let mut branches = Vec::new();
    for t in types.iter().filter_map(Value::as_str) {
        let mut b = Map::new();
        b.insert("type".into(), Value::String(t.to_string()));
        let mut empty_enum = false;
        for (k, v) in &specific {
            match k.as_str() {
                "enum" => {
                    let values: Vec<Value> = v
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|x| is_type(x, t))
                        .cloned()
                        .collect();
                    empty_enum = values.is_empty();
                    b.insert(k.clone(), Value::Array(values));
                }
                "const" => {
                    empty_enum = !is_type(v, t);
                    b.insert(k.clone(), v.clone());
                }
                _ => {
                    if applies_to(k).is_some_and(|ts| ts.contains(&t)) {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        if !empty_enum {
            branches.push(Value::Object(b));
        }
    }
    outer.insert("anyOf".into(), Value::Array(branches));
    if !shared.is_empty() {
        outer.insert("allOf".into(), Value::Array(vec![Value::Object(shared)]));
    }
    *map = outer;
}

/// What a strict validator would report about `schema`, by JSON pointer: type arrays, bare
/// `true` sub-schemas, non-standard formats, and (with `typed_properties`, for input schemas:
/// every argument must say what it takes) properties with no type at all. Empty for every tool
/// schema (a test checks it). An output property may be any value (a batch item echoes the UPRN
/// as given), so output schemas are linted without `typed_properties`.
pub fn lint(schema: &Value, typed_properties: bool) -> Vec<String> {
    let mut out = Vec::new();
    lint_at(schema, "#", typed_properties, &mut out);
    out
}

fn lint_at(schema: &Value, at: &str, typed_properties: bool, out: &mut Vec<String>) {
    let Value::Object(map) = schema else {
        if *schema == Value::Bool(true) {
            out.push(format!("{at}: bare `true` schema"));
        }
        return;
    };
    if map.get("type").is_some_and(Value::is_array) {
        out.push(format!("{at}: type array"));
    }
    if let Some(f) = map.get("format").and_then(Value::as_str)
        && !STANDARD_FORMATS.contains(&f)
    {
        out.push(format!("{at}: non-standard format {f}"));
    }
    for k in ONE_SCHEMA {
        if let Some(v) = map.get(*k) {
            lint_at(v, &format!("{at}/{k}"), typed_properties, out);
        }
    }
    for k in SCHEMA_MAP {
        if let Some(Value::Object(m)) = map.get(*k) {
            for (name, v) in m {
                if typed_properties
                    && *k == "properties"
                    && v.as_object().is_some_and(|s| !typed(s))
                {
                    out.push(format!("{at}/{k}/{name}: no type"));
                }
                lint_at(v, &format!("{at}/{k}/{name}"), typed_properties, out);
            }
        }
    }
    for k in SCHEMA_LIST {
        if let Some(Value::Array(list)) = map.get(*k) {
            for (i, v) in list.iter().enumerate() {
                lint_at(v, &format!("{at}/{k}/{i}"), typed_properties, out);
            }
        }
    }
}

/// Whether a property schema says what type its value has (directly, by reference, by an enum
/// or const, or through its branches).
fn typed(s: &Map<String, Value>) -> bool {
    ["type", "$ref", "enum", "const", "anyOf", "oneOf", "allOf"]
        .iter()
        .any(|k| s.contains_key(*k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_nullable_type_array_becomes_any_of_with_its_limits_on_the_branch() {
        let mut s = json!({
            "description": "d",
            "type": ["integer", "null"],
            "format": "uint32",
            "minimum": 0,
            "maximum": 25,
            "default": 5
        });
        strict(&mut s);
        assert_eq!(
            s,
            json!({
                "description": "d",
                "default": 5,
                "anyOf": [{"type": "integer", "minimum": 0, "maximum": 25}, {"type": "null"}]
            })
        );
        assert!(lint(&s, true).is_empty());
    }

    #[test]
    fn enums_split_by_type_and_true_sub_schemas_go() {
        let mut s = json!({
            "type": "object",
            "properties": {
                "x": true,
                "e": {"type": ["string", "null"], "enum": ["a", "b", null]},
                "t": {"type": "string", "format": "partial-date-time"}
            },
            "additionalProperties": true
        });
        assert_eq!(lint(&s, false).len(), 4, "{:?}", lint(&s, false));
        strict(&mut s);
        assert_eq!(
            s,
            json!({
                "type": "object",
                "properties": {
                    "x": {},
                    "e": {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null", "enum": [null]}]},
                    "t": {"type": "string"}
                }
            })
        );
        assert!(lint(&s, false).is_empty(), "{:?}", lint(&s, false));
    }
}
