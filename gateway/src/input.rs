//! A call's input from its wire form to its typed parameters and body, with FastAPI-shaped
//! failures (`{"loc": ["query", "q"], "msg": ..., "type": ...}`), the same for HTTP and MCP.
//!
//! Parameters arrive as text (a query string, a path segment, or an MCP argument); each is read
//! against its field's JSON Schema (integer or string, the enum, and the limits schemars took from
//! the `#[validate(...)]` attributes), so every failing parameter is reported, not just the first.
//! The typed struct is then deserialised from the read values and validated with `validator`.
//! Bodies are deserialised with serde (its complaints located in the body) and validated with
//! `validator`. The gateway alone adds `body`, `query` or `path` to a location.

use crate::error::FieldError;
use crate::registry::SchemaFn;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use terrace_core::Violation;
use validator::{Validate, ValidationError, ValidationErrors};

/// Where a parameter is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum In {
    Path,
    Query,
    Body,
}

impl In {
    pub fn as_str(self) -> &'static str {
        match self {
            In::Path => "path",
            In::Query => "query",
            In::Body => "body",
        }
    }
}

/// One field of a parameter or body struct, from its JSON Schema.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: String,
    pub required: bool,
    /// The field's schema, subschemas inlined, without its description.
    pub schema: Map<String, Value>,
    pub description: Option<String>,
}

/// The fields of a struct's schema, in declaration order, subschemas inlined.
pub fn fields(f: SchemaFn) -> Vec<Field> {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
    });
    let mut g = settings.into_generator();
    let schema = f(&mut g).to_value();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, s)| {
            let mut schema = s.as_object().cloned().unwrap_or_default();
            // An optional parameter is absent, not null, unless it says `x-nullable`.
            let nullable = schema.remove("x-nullable") == Some(Value::Bool(true));
            if !nullable && let Some(Value::Array(types)) = schema.get_mut("type") {
                types.retain(|t| t != "null");
                if let [only] = types.as_slice() {
                    let only = only.clone();
                    schema.insert("type".into(), only);
                }
            }
            let description = schema
                .remove("description")
                .and_then(|d| d.as_str().map(str::to_string));
            Field {
                name: name.clone(),
                required: required.contains(&name.as_str()),
                schema,
                description,
            }
        })
        .collect()
}

/// The groups of fields of which exactly one must be given (the `required` lists of the
/// schema's top-level `oneOf`, written by `terrace_core::patterns::exactly_one_of`); empty when
/// the schema has no such rule.
pub fn exclusive_groups(f: SchemaFn) -> Vec<Vec<String>> {
    required_lists(f, "oneOf")
}

/// The groups of fields of which at least one must be given (the `required` lists of the
/// schema's top-level `anyOf`, written by `terrace_core::patterns::at_least_one_of`).
pub fn inclusive_groups(f: SchemaFn) -> Vec<Vec<String>> {
    required_lists(f, "anyOf")
}

/// The `required` lists of the branches of the schema's top-level `oneOf` or `anyOf`.
fn required_lists(f: SchemaFn, key: &str) -> Vec<Vec<String>> {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
    });
    let mut g = settings.into_generator();
    let schema = f(&mut g).to_value();
    schema[key]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["required"].as_array())
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .collect()
}

/// [`fields`] of `T`, computed once per type.
fn fields_of<T: JsonSchema + 'static>() -> Arc<Vec<Field>> {
    type Cache = HashMap<TypeId, Arc<Vec<Field>>, foldhash::fast::FixedState>;
    static CACHE: RwLock<Option<Cache>> = RwLock::new(None);
    let id = TypeId::of::<T>();
    if let Some(f) = CACHE
        .read()
        .ok()
        .and_then(|c| c.as_ref().and_then(|m| m.get(&id).cloned()))
    {
        return f;
    }
    let f = Arc::new(fields(crate::registry::schema_of::<T>));
    if let Ok(mut c) = CACHE.write() {
        c.get_or_insert_with(Cache::default).insert(id, f.clone());
    }
    f
}

/// The value given last for `name` (a repeated query parameter: the last one wins; a null
/// there reads as absent).
fn last_given<'a>(given: &'a [(String, Value)], name: &str) -> Option<&'a Value> {
    given.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
}

/// A scalar parameter's text (a number or boolean written as JSON writes it); none for null, an
/// array or an object.
fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// Reads the parameters of `P` from the values given by name; `locate` says whether a name is a
/// path or a query parameter. Every failure is reported.
pub fn params<P: DeserializeOwned + Validate + JsonSchema + 'static>(
    given: &[(String, Value)],
    locate: &dyn Fn(&str) -> In,
) -> Result<P, Vec<FieldError>> {
    let fields = fields_of::<P>();
    // The read values by field name, handed to `P`'s deserialiser as a map directly: built as a
    // `serde_json::Map` (an ordered map hashing every name) they were 4.8% of the workers' CPU in
    // a charged call (issue 20, session 17).
    let mut obj: Vec<(&str, Value)> = Vec::with_capacity(fields.len());
    let mut errors = Vec::new();
    for f in fields.iter() {
        let loc = [locate(&f.name).as_str(), f.name.as_str()];
        let Some(v) = last_given(given, &f.name).filter(|v| !v.is_null()) else {
            if f.required {
                errors.push(FieldError::new(&loc, "missing", "Field required"));
            }
            continue;
        };
        let Some(text) = scalar_text(v) else {
            errors.push(
                FieldError::new(&loc, "type_error", "Input should be a scalar value")
                    .with_input(v.clone()),
            );
            continue;
        };
        match read(&loc, &f.schema, &text) {
            Ok(v) => obj.push((f.name.as_str(), v)),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let read = serde::de::value::MapDeserializer::<_, serde_json::Error>::new(obj.into_iter());
    let p: P = serde_path_to_error::deserialize(read).map_err(|e| {
        let name = e
            .path()
            .iter()
            .next()
            .map(|s| s.to_string())
            .unwrap_or_default();
        let loc = [locate(&name).as_str(), name.as_str()];
        let mut fe = FieldError::new(&loc, "value_error", format!("Value error, {}", e.inner()));
        // The text as given (looked up again on this rare path rather than kept for every call).
        if let Some(t) = last_given(given, &name).and_then(scalar_text) {
            fe = fe.with_input(t);
        }
        vec![fe]
    })?;
    p.validate()
        .map_err(|e| validation_errors(&e, &fields, locate))?;
    Ok(p)
}

/// Reads one parameter's text as its schema says.
fn read(loc: &[&str], schema: &Map<String, Value>, s: &str) -> Result<Value, FieldError> {
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    // A nullable integer may be given as empty or `null` (then absent).
    if types.contains(&"null")
        && types.contains(&"integer")
        && (s.trim().is_empty() || s.trim() == "null")
    {
        return Ok(Value::Null);
    }
    if types.contains(&"integer") {
        let not_integer = || {
            FieldError::new(
                loc,
                "int_parsing",
                "Input should be a valid integer, unable to parse string as an integer",
            )
            .with_input(s)
        };
        // Strictly decimal: an optional minus sign and digits, no plus sign or spaces, and no
        // more digits than the largest value allowed has (so no run of leading zeros).
        let digits = s.strip_prefix('-').unwrap_or(s);
        let most = schema
            .get("maximum")
            .and_then(Value::as_i64)
            .map_or(19, |m| m.unsigned_abs().to_string().len().max(1));
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(not_integer());
        }
        if digits.len() > most {
            let max = schema
                .get("maximum")
                .and_then(Value::as_i64)
                .unwrap_or(i64::MAX);
            return Err(too_large(loc, max).with_input(s));
        }
        let v: i64 = s.parse().map_err(|_| not_integer())?;
        if let Some(min) = schema.get("minimum").and_then(Value::as_i64)
            && v < min
        {
            return Err(too_small(loc, min).with_input(s));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_i64)
            && v > max
        {
            return Err(too_large(loc, max).with_input(s));
        }
        return Ok(json!(v));
    }
    if types.contains(&"number") {
        let v: f64 = s
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| {
                FieldError::new(
                    loc,
                    "float_parsing",
                    "Input should be a valid number, unable to parse string as a number",
                )
                .with_input(s)
            })?;
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && v < min
        {
            return Err(too_small(loc, min).with_input(s));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && v > max
        {
            return Err(too_large(loc, max).with_input(s));
        }
        return Ok(json!(v));
    }
    if types.contains(&"boolean") {
        // As FastAPI reads a boolean query parameter.
        return match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Ok(json!(true)),
            "false" | "0" | "no" | "off" => Ok(json!(false)),
            _ => Err(FieldError::new(
                loc,
                "bool_parsing",
                "Input should be a valid boolean, unable to interpret input",
            )
            .with_input(s)),
        };
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        if values.iter().any(|v| v.as_str() == Some(s)) {
            return Ok(json!(s));
        }
        let expected = values
            .iter()
            .map(|v| format!("'{}'", v.as_str().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(" or ");
        return Err(
            FieldError::new(loc, "literal_error", format!("Input should be {expected}"))
                .with_input(s)
                .with_ctx(json!({"expected": expected})),
        );
    }
    let n = s.chars().count() as u64;
    if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
        && n < min
    {
        return Err(string_too_short(loc, min).with_input(s));
    }
    if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
        && n > max
    {
        return Err(string_too_long(loc, max).with_input(s));
    }
    Ok(json!(s))
}

fn too_small(loc: &[&str], min: impl Into<Value> + std::fmt::Display + Copy) -> FieldError {
    FieldError::new(
        loc,
        "greater_than_equal",
        format!("Input should be greater than or equal to {min}"),
    )
    .with_ctx(json!({"ge": min.into()}))
}

fn too_large(loc: &[&str], max: impl Into<Value> + std::fmt::Display + Copy) -> FieldError {
    FieldError::new(
        loc,
        "less_than_equal",
        format!("Input should be less than or equal to {max}"),
    )
    .with_ctx(json!({"le": max.into()}))
}

fn string_too_short(loc: &[&str], min: u64) -> FieldError {
    let s = if min == 1 { "" } else { "s" };
    FieldError::new(
        loc,
        "string_too_short",
        format!("String should have at least {min} character{s}"),
    )
    .with_ctx(json!({"min_length": min}))
}

fn string_too_long(loc: &[&str], max: u64) -> FieldError {
    FieldError::new(
        loc,
        "string_too_long",
        format!("String should have at most {max} characters"),
    )
    .with_ctx(json!({"max_length": max}))
}

/// `validator`'s failures in FastAPI's words, in the order the fields are declared.
fn validation_errors(
    errors: &ValidationErrors,
    fields: &[Field],
    locate: &dyn Fn(&str) -> In,
) -> Vec<FieldError> {
    let by_field = errors.field_errors();
    let mut names: Vec<&str> = by_field.keys().map(|k| k.as_ref()).collect();
    let rank = |n: &str| {
        fields
            .iter()
            .position(|f| f.name == n)
            .unwrap_or(usize::MAX)
    };
    names.sort_by_key(|n| (rank(n), *n));
    let mut out = Vec::new();
    for name in names {
        let loc = [locate(name).as_str(), name];
        for e in by_field.get(name).into_iter().flat_map(|v| v.iter()) {
            out.push(field_error(&loc, e));
        }
    }
    out
}

fn field_error(loc: &[&str], e: &ValidationError) -> FieldError {
    let param = |k: &str| e.params.get(k).cloned().unwrap_or(Value::Null);
    let value = param("value");
    match (e.code.as_ref(), &value) {
        ("length", Value::Array(items)) => {
            let n = items.len();
            let (min, max) = (param("min"), param("max"));
            let short = min.as_u64().is_some_and(|m| (n as u64) < m);
            FieldError::new(
                loc,
                if short { "too_short" } else { "too_long" },
                format!("List should have between {min} and {max} items, not {n}"),
            )
            .with_input(n as i64)
        }
        ("length", Value::String(s)) => {
            let n = s.chars().count() as u64;
            match (param("min").as_u64(), param("max").as_u64()) {
                (Some(min), _) if n < min => string_too_short(loc, min),
                (_, Some(max)) => string_too_long(loc, max),
                _ => FieldError::new(loc, "value_error", "String has the wrong length"),
            }
            .with_input(value.clone())
        }
        ("range", v) => {
            let x = v.as_f64().unwrap_or_default();
            match (param("min").as_i64(), param("max").as_i64()) {
                (Some(min), _) if x < min as f64 => too_small(loc, min),
                (_, Some(max)) => too_large(loc, max),
                _ => FieldError::new(loc, "value_error", "Input is out of range"),
            }
            .with_input(value.clone())
        }
        (code, _) => FieldError::new(
            loc,
            "value_error",
            e.message
                .as_ref()
                .map_or_else(|| format!("Value error, {code}"), |m| m.to_string()),
        ),
    }
}

/// A JSON body as `T`: an object, deserialised (serde's complaints located in the body), then
/// validated.
pub fn body<T: DeserializeOwned + Validate + JsonSchema + 'static>(
    mut v: Value,
) -> Result<T, Vec<FieldError>> {
    // serde would read a struct from an array positionally; a body must be an object.
    if !v.is_object() {
        return Err(vec![serde_error("", &v)]);
    }
    integral_numbers(&mut v);
    let t: T =
        serde_json::from_value(v.clone()).map_err(|e| vec![serde_error(&e.to_string(), &v)])?;
    t.validate()
        .map_err(|e| validation_errors(&e, &fields_of::<T>(), &|_| In::Body))?;
    Ok(t)
}

/// JSON Schema's `integer` is any number without a fractional part, `15.0` included, so a body's
/// integral numbers written with a decimal point are read as the integers they are (a number
/// field reads an integer as well as a float, so nothing else changes).
fn integral_numbers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f.abs() < 9.0e15
            {
                *v = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_numbers),
        Value::Object(fields) => fields.values_mut().for_each(integral_numbers),
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

fn serde_error(msg: &str, body: &Value) -> FieldError {
    let between = |s: &str| s.split('`').nth(1).map(str::to_string);
    if msg.starts_with("unknown field") {
        let f = between(msg).unwrap_or_default();
        FieldError::new(
            &["body", &f],
            "extra_forbidden",
            "Extra inputs are not permitted",
        )
    } else if msg.starts_with("missing field") {
        let f = between(msg).unwrap_or_default();
        FieldError::new(&["body", &f], "missing", "Field required")
    } else if !body.is_object() {
        FieldError::new(
            &["body"],
            "model_attributes_type",
            "Input should be a valid dictionary or object to extract fields from",
        )
        .with_input(body.clone())
    } else {
        FieldError::new(
            &["body"],
            "type_error",
            format!("Input has the wrong type: {msg}"),
        )
    }
}

/// A domain's violations of the input read from `at`, as a 422.
/// A `value_error` violation of one field, with FastAPI's `Value error, ` prefix and the value given.
pub fn value_error(field: &str, msg: &str, input: &str) -> Violation {
    Violation::new(&[field], "value_error", format!("Value error, {msg}")).with_input(input)
}

/// An optional month parameter (`YYYY-MM` or `YYYY-MM-DD`), its violation collected in `found`.
pub fn month_param(
    field: &str,
    given: Option<&str>,
    found: &mut Vec<Violation>,
) -> Option<terrace_analytics::Month> {
    given.and_then(|s| {
        terrace_market::series::parse_month(&[field], s)
            .map_err(|v| found.push(v))
            .ok()
    })
}

/// A refused cursor: a malformed token is a 422 at `cursor` in `at`; a well-formed one the query
/// did not write names no page, a 404 (`terrace_core::cursor`).
/// An area id of a family's operations. A blank one is a 422; any other that does not parse, or
/// that `accepts` refuses (a kind the family does not answer), is a 404 saying why (the schema
/// cannot state the kinds' forms; docs/API-DESIGN.md).
pub fn area_id_for<T>(
    raw: &str,
    at: In,
    figures: &str,
    accepts: impl Fn(&terrace_core::AreaId) -> Result<T, Violation>,
) -> Result<terrace_core::AreaId, crate::error::ApiError> {
    if terrace_core::patterns::is_blank(raw) {
        return Err(invalid(
            at,
            vec![
                Violation::new(&["area_id"], "value_error", "Value error, area_id is blank")
                    .with_input(raw.to_string()),
            ],
        ));
    }
    let not_found = |why: String| {
        crate::error::ApiError::NotFound(format!("{figures} for the area {raw:?} ({why})"))
    };
    let id = terrace_core::AreaId::parse(raw.trim()).map_err(|e| not_found(e.to_string()))?;
    accepts(&id).map_err(|v| not_found(v.message))?;
    Ok(id)
}

pub fn cursor_refused(at: In, e: terrace_core::CursorError) -> crate::error::ApiError {
    match e {
        terrace_core::CursorError::Malformed(v) => invalid(at, vec![v]),
        terrace_core::CursorError::NotThisQuery(what) => crate::error::ApiError::NotFound(what),
    }
}

pub fn invalid(at: In, violations: Vec<Violation>) -> crate::error::ApiError {
    crate::error::ApiError::Validation(violations.into_iter().map(|v| located(at, v)).collect())
}

/// A domain's violation, located: the gateway adds `body`, `query` or `path` in front.
pub fn located(at: In, v: Violation) -> FieldError {
    let mut loc = vec![at.as_str()];
    loc.extend(v.path.iter().map(String::as_str));
    let mut fe = FieldError::new(&loc, v.kind, v.message);
    if let Some(i) = v.input {
        fe = fe.with_input(*i);
    }
    if let Some(c) = v.ctx {
        fe = fe.with_ctx(*c);
    }
    fe
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parameter the schema reads as text but whose own deserialisation refuses `"bad"`.
    #[derive(Debug, JsonSchema)]
    #[schemars(transparent)]
    struct Picky(String);

    impl<'de> serde::Deserialize<'de> for Picky {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Picky, D::Error> {
            let s = String::deserialize(d)?;
            if s == "bad" {
                return Err(serde::de::Error::custom("not a picky value"));
            }
            Ok(Picky(s))
        }
    }

    #[derive(Debug, serde::Deserialize, Validate, JsonSchema)]
    struct Params {
        code: Picky,
        n: Option<i64>,
    }

    fn given(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn a_refused_parameter_echoes_the_text_given_and_the_last_value_wins() {
        let locate = |_: &str| In::Query;
        let ok: Params = params(
            &given(&[
                ("code", json!("bad")),
                ("code", json!("fine")),
                ("n", json!(7)),
            ]),
            &locate,
        )
        .unwrap();
        assert_eq!((ok.code.0.as_str(), ok.n), ("fine", Some(7)));

        let errors = params::<Params>(
            &given(&[("code", json!("fine")), ("code", json!("bad"))]),
            &locate,
        )
        .unwrap_err();
        assert_eq!(errors.len(), 1);
        let e = serde_json::to_value(&errors[0]).unwrap();
        assert_eq!(e["type"], "value_error", "{e}");
        assert_eq!(e["loc"], json!(["query", "code"]), "{e}");
        assert_eq!(e["input"], "bad", "{e}");

        let errors = params::<Params>(&given(&[("code", json!(["a"]))]), &locate).unwrap_err();
        let e = serde_json::to_value(&errors[0]).unwrap();
        assert_eq!(e["type"], "type_error", "{e}");
        assert_eq!(e["input"], json!(["a"]), "{e}");
    }
}
