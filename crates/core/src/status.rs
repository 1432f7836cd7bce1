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
