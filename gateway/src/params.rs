//! Declared parameters and their validation, shared by the routes, the OpenAPI document and
//! (later) the MCP tool schemas, so a limit is written once.

use crate::error::FieldError;
use serde_json::{Value, json};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum In {
    Path,
    Query,
}

impl In {
    pub fn as_str(self) -> &'static str {
        match self {
            In::Path => "path",
            In::Query => "query",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A string of `min..=max` characters.
    Str { min: usize, max: usize },
    /// An integer in `min..=max`, with an optional default.
    Int {
        min: i64,
        max: i64,
        default: Option<i64>,
    },
    /// An integer in `min..=max` that may also be given as `null` or empty (then absent).
    NullableInt { min: i64, max: i64 },
    /// One of a fixed set of strings, with an optional default.
    Enum {
        values: &'static [&'static str],
        default: Option<&'static str>,
    },
    /// A UPRN: a positive integer of at most 12 digits.
    Uprn,
    /// A UARN (VOA rating list reference): a positive integer of at most 12 digits.
    Uarn,
    /// A full UK postcode, with or without its space, any case.
    Postcode,
}

#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub name: &'static str,
    pub location: In,
    pub required: bool,
    pub kind: Kind,
    pub description: &'static str,
}

/// Validated parameter values by name.
#[derive(Debug, Clone, Default)]
pub struct Values(BTreeMap<&'static str, Value>);

impl Values {
    pub fn str(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }

    pub fn int(&self, name: &str) -> Option<i64> {
        self.0.get(name).and_then(Value::as_i64)
    }

    pub fn insert(&mut self, name: &'static str, v: Value) {
        self.0.insert(name, v);
    }
}

/// Where raw parameter values come from: path segments and the query string.
pub struct Raw<'a> {
    pub path: &'a dyn Fn(&str) -> Option<String>,
    pub query: &'a [(String, String)],
}

fn int_error(loc: &[&str], raw: &str) -> FieldError {
    FieldError::new(
        loc,
        "int_parsing",
        "Input should be a valid integer, unable to parse string as an integer",
    )
    .with_input(raw)
}

/// Validates every declared parameter; collects all failures.
pub fn validate(params: &[Param], raw: &Raw<'_>) -> Result<Values, Vec<FieldError>> {
    let mut out = Values::default();
    let mut errors = Vec::new();
    for p in params {
        let loc = [p.location.as_str(), p.name];
        let given = match p.location {
            In::Path => (raw.path)(p.name),
            In::Query => raw
                .query
                .iter()
                .rev()
                .find(|(k, _)| k == p.name)
                .map(|(_, v)| v.clone()),
        };
        let Some(s) = given else {
            match p.kind {
                Kind::Int {
                    default: Some(d), ..
                } => out.insert(p.name, json!(d)),
                Kind::Enum {
                    default: Some(d), ..
                } => out.insert(p.name, json!(d)),
                Kind::Int { .. }
                | Kind::NullableInt { .. }
                | Kind::Enum { .. }
                | Kind::Str { .. }
                | Kind::Uprn
                | Kind::Uarn
                | Kind::Postcode => {
                    if p.required {
                        errors.push(FieldError::new(&loc, "missing", "Field required"));
                    }
                }
            }
            continue;
        };
        match check(p.kind, &loc, &s) {
            Ok(v) => out.insert(p.name, v),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

fn check(kind: Kind, loc: &[&str], s: &str) -> Result<Value, FieldError> {
    match kind {
        Kind::Str { min, max } => {
            let n = s.chars().count();
            if n < min {
                Err(FieldError::new(
                    loc,
                    "string_too_short",
                    format!("String should have at least {min} character{}", plural(min)),
                )
                .with_input(s)
                .with_ctx(json!({"min_length": min})))
            } else if n > max {
                Err(FieldError::new(
                    loc,
                    "string_too_long",
                    format!("String should have at most {max} characters"),
                )
                .with_input(s)
                .with_ctx(json!({"max_length": max})))
            } else {
                Ok(json!(s))
            }
        }
        Kind::Int { min, max, .. } => {
            let v: i64 = s.trim().parse().map_err(|_| int_error(loc, s))?;
            range(loc, s, v, min, max)
        }
        Kind::NullableInt { min, max } => {
            if s.trim().is_empty() || s.trim() == "null" {
                return Ok(Value::Null);
            }
            let v: i64 = s.trim().parse().map_err(|_| int_error(loc, s))?;
            range(loc, s, v, min, max)
        }
        Kind::Enum { values, .. } => {
            if values.contains(&s) {
                Ok(json!(s))
            } else {
                let expected = values
                    .iter()
                    .map(|v| format!("'{v}'"))
                    .collect::<Vec<_>>()
                    .join(" or ");
                Err(
                    FieldError::new(loc, "literal_error", format!("Input should be {expected}"))
                        .with_input(s)
                        .with_ctx(json!({"expected": expected})),
                )
            }
        }
        Kind::Uprn => {
            let v: i64 = s.trim().parse().map_err(|_| int_error(loc, s))?;
            range(loc, s, v, 1, terrace_core::Uprn::MAX)
        }
        Kind::Uarn => {
            let v: i64 = s.trim().parse().map_err(|_| int_error(loc, s))?;
            range(loc, s, v, 1, terrace_core::Uarn::MAX)
        }
        Kind::Postcode => match terrace_core::Postcode::parse(s) {
            Ok(p) => Ok(json!(p.as_str())),
            Err(e) => {
                Err(FieldError::new(loc, "value_error", format!("Value error, {e}")).with_input(s))
            }
        },
    }
}

fn range(loc: &[&str], s: &str, v: i64, min: i64, max: i64) -> Result<Value, FieldError> {
    if v < min {
        Err(FieldError::new(
            loc,
            "greater_than_equal",
            format!("Input should be greater than or equal to {min}"),
        )
        .with_input(s)
        .with_ctx(json!({"ge": min})))
    } else if v > max {
        Err(FieldError::new(
            loc,
            "less_than_equal",
            format!("Input should be less than or equal to {max}"),
        )
        .with_input(s)
        .with_ctx(json!({"le": max})))
    } else {
        Ok(json!(v))
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The JSON Schema of a parameter (for OpenAPI and tool input schemas).
pub fn schema(p: &Param) -> Value {
    match p.kind {
        Kind::Str { min, max } => json!({"type": "string", "minLength": min, "maxLength": max}),
        Kind::Int { min, max, default } => {
            let mut s = json!({"type": "integer", "minimum": min, "maximum": max});
            if let Some(d) = default {
                s["default"] = json!(d);
            }
            s
        }
        Kind::NullableInt { min, max } => {
            json!({"type": ["integer", "null"], "minimum": min, "maximum": max})
        }
        Kind::Enum { values, default } => {
            let mut s = json!({"type": "string", "enum": values});
            if let Some(d) = default {
                s["default"] = json!(d);
            }
            s
        }
        Kind::Uprn => {
            json!({"type": "integer", "minimum": 1, "maximum": terrace_core::Uprn::MAX, "examples": [100040212345i64]})
        }
        Kind::Uarn => {
            json!({"type": "integer", "minimum": 1, "maximum": terrace_core::Uarn::MAX, "examples": [10011934000i64]})
        }
        Kind::Postcode => json!({
            "type": "string", "minLength": 5, "maxLength": 9,
            "description": "A full UK postcode, with or without the space, any case",
            "examples": ["EX1 1AA"]
        }),
    }
}
