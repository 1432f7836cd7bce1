//! The row every spatial-layer parser yields (planning.data.gov.uk, Environment Agency and Coal
//! Authority layers, substations, the Renewable Energy Planning Database), and helpers they share.

use chrono::NaiveDate;
use serde_json::{Map, Value};
use terrace_geo::Shape;

/// One feature of a spatial dataset, in BNG metres.
#[derive(Debug, Clone, PartialEq)]
pub struct SpatialRow {
    /// The dataset's name as stored (`conservation-area`, `ea-flood-zones`, `substations`, ...).
    pub dataset: String,
    /// The publisher's identifier of the feature (entity, reference, object id), or a stable hash
    /// of its content when it has none.
    pub reference: String,
    pub name: Option<String>,
    /// Flood zone (`FZ2`, `FZ3`), risk band (`high`, `medium`, `low`, `very_low`), grade,
    /// technology, voltage: whatever kind the dataset distinguishes.
    pub category: Option<String>,
    pub status: Option<String>,
    /// Headroom (MVA) of a substation, capacity (MW) of a renewable project.
    pub value: Option<f64>,
    pub organisation: Option<String>,
    pub entry_date: Option<NaiveDate>,
    pub shape: Shape,
    /// Every other non-empty attribute, by its normalised name.
    pub attributes: Vec<(String, String)>,
}

/// The property of `props` under the first of `names` (compared after normalising case and
/// `_`/`-`/space), as trimmed non-empty text.
pub(crate) fn prop(props: &Map<String, Value>, names: &[&str]) -> Option<String> {
    names.iter().find_map(|want| {
        props.iter().find_map(|(k, v)| {
            if super::csvio::normalise_name(k) != *want {
                return None;
            }
            let s = match v {
                Value::String(s) => s.trim().to_string(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Null | Value::Array(_) | Value::Object(_) => return None,
            };
            super::value::text(Some(&s))
        })
    })
}

/// Every scalar property but those named in `skip`, as (normalised name, text), in key order.
pub(crate) fn other_props(props: &Map<String, Value>, skip: &[&str]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = props
        .iter()
        .filter_map(|(k, v)| {
            let name = super::csvio::normalise_name(k);
            if skip.contains(&name.as_str()) {
                return None;
            }
            let s = match v {
                Value::String(s) => s.trim().to_string(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Null | Value::Array(_) | Value::Object(_) => return None,
            };
            super::value::text(Some(&s)).map(|s| (name, s))
        })
        .collect();
    out.sort();
    out
}

/// A flood zone from text such as `FZ3`, `Flood Zone 3`, `Zone 2`, `3`: `FZ2` or `FZ3`.
pub(crate) fn flood_zone(v: &str) -> Option<&'static str> {
    let t = v.trim().to_ascii_lowercase().replace([' ', '_', '-'], "");
    let digit = t
        .strip_prefix("floodzone")
        .or_else(|| t.strip_prefix("zone"))
        .or_else(|| t.strip_prefix("fz"))
        .unwrap_or(&t);
    let digit = digit.strip_suffix(".0").unwrap_or(digit);
    match digit {
        "3" | "3a" | "3b" => Some("FZ3"),
        "2" => Some("FZ2"),
        _ => None,
    }
}

/// A risk band from `High`, `Medium`, `Low`, `Very Low` (any case and spacing).
pub(crate) fn risk_band(v: &str) -> Option<&'static str> {
    match v
        .trim()
        .to_ascii_lowercase()
        .replace(['_', '-'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .as_str()
    {
        "high" => Some("high"),
        "medium" => Some("medium"),
        "low" => Some("low"),
        "very low" => Some("very_low"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_and_bands() {
        for (v, z) in [
            ("FZ3", Some("FZ3")),
            ("Flood Zone 2", Some("FZ2")),
            ("Zone 3", Some("FZ3")),
            ("3", Some("FZ3")),
            ("2.0", Some("FZ2")),
            ("FZ1", None),
            ("", None),
        ] {
            assert_eq!(flood_zone(v), z, "{v}");
        }
        for (v, b) in [
            ("High", Some("high")),
            ("very low", Some("very_low")),
            ("Very_Low", Some("very_low")),
            ("MEDIUM", Some("medium")),
            ("none", None),
        ] {
            assert_eq!(risk_band(v), b, "{v}");
        }
    }
}
