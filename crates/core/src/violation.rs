//! A rule an input broke, in no transport's words.
//!
//! Architecture Invariant: domain crates report invalid input as [`Violation`]s whose `path` is
//! relative to the input they were given (`["district"]`, `["metrics", "1"]`, `[]` for the whole
//! input); only the gateway knows whether that input was a body, a query or a path, and adds it.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// Where, inside the input: field names and list indices; empty for the input as a whole.
    pub path: Vec<String>,
    /// The kind, in FastAPI's vocabulary (`missing`, `value_error`, `literal_error`, ...).
    pub kind: &'static str,
    pub message: String,
    /// The offending value, when there was one.
    pub input: Option<Box<Value>>,
    /// The rule's parameters (`{"ge": 1}`), when it has any.
    pub ctx: Option<Box<Value>>,
}

impl Violation {
    pub fn new(path: &[&str], kind: &'static str, message: impl Into<String>) -> Violation {
        Violation {
            path: path.iter().map(|s| s.to_string()).collect(),
            kind,
            message: message.into(),
            input: None,
            ctx: None,
        }
    }

    pub fn with_input(mut self, input: impl Into<Value>) -> Violation {
        self.input = Some(Box::new(input.into()));
        self
    }

    pub fn with_ctx(mut self, ctx: Value) -> Violation {
        self.ctx = Some(Box::new(ctx));
        self
    }
}
