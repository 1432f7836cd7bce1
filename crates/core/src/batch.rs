//! Reading a batch item's UPRN, the same way for every batch operation.

use crate::Uprn;

/// A UPRN as a batch item gives it: an integer or a string of digits; anything else is `None`.
pub fn batch_uprn(given: &serde_json::Value) -> Option<Uprn> {
    match given {
        serde_json::Value::Number(n) => n.as_i64().and_then(|v| Uprn::new(v).ok()),
        serde_json::Value::String(s) => Uprn::parse(s).ok(),
        serde_json::Value::Null
        | serde_json::Value::Bool(_)
        | serde_json::Value::Array(_)
        | serde_json::Value::Object(_) => None,
    }
}
