use serde::{Deserialize, Serialize};

/// A three-valued flag: a designation or hazard is present, absent, or was never checked.
///
/// "Not in a flood zone" (`False`) and "never checked" (`NotChecked`) are different answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Flag {
    Known(bool),
    NotChecked(NotChecked),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NotChecked {
    NotChecked,
}

impl Flag {
    pub const TRUE: Flag = Flag::Known(true);
    pub const FALSE: Flag = Flag::Known(false);
    pub const NOT_CHECKED: Flag = Flag::NotChecked(NotChecked::NotChecked);
}

/// Where a value came from and how far to trust it (0 to 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Provenance {
    pub source: String,
    pub confidence: f64,
}

/// A value the service cannot derive: `{"status": "not_available", "reason": ...}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Unavailable {
    pub status: UnavailableStatus,
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnavailableStatus {
    NotAvailable,
}

impl Unavailable {
    pub fn new(reason: impl Into<String>) -> Self {
        Unavailable {
            status: UnavailableStatus::NotAvailable,
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_json() {
        assert_eq!(serde_json::to_string(&Flag::TRUE).unwrap(), "true");
        assert_eq!(
            serde_json::to_string(&Flag::NOT_CHECKED).unwrap(),
            "\"not_checked\""
        );
        assert_eq!(
            serde_json::to_value(Unavailable::new("no rating list loaded")).unwrap(),
            serde_json::json!({"status": "not_available", "reason": "no rating list loaded"})
        );
    }
}

/// Whether a figure could be read or computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FigureStatus {
    Ok,
    NotAvailable,
}

/// One fact with its source and confidence, or `not_available` with the reason.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Fact<T> {
    pub status: FigureStatus,
    pub value: Option<T>,
    pub source: Option<String>,
    pub confidence: Option<f64>,
    /// What the value is read from, or why there is none.
    pub note: String,
}

impl<T> Fact<T> {
    /// A value read from a stored row of `source`, at that source's confidence.
    pub fn ok(value: T, source: &str, note: String) -> Fact<T> {
        Fact {
            status: FigureStatus::Ok,
            value: Some(value),
            confidence: Some(
                crate::sources::confidence_of(source).unwrap_or(crate::sources::DEFAULT_CONFIDENCE),
            ),
            source: Some(source.to_string()),
            note,
        }
    }

    /// No value, with the reason.
    pub fn not_available(reason: impl Into<String>) -> Fact<T> {
        Fact {
            status: FigureStatus::NotAvailable,
            value: None,
            source: None,
            confidence: None,
            note: reason.into(),
        }
    }
}
