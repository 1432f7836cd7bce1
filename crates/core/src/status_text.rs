//! `status_text!`: a status enum's wire name, for display and for comparing with text.

/// Gives each listed status enum (a `snake_case` serde enum) `as_str`, `Display` and
/// `PartialEq<&str>`, all reading its serde name, so the name is written once (in the serde
/// attribute) and tests and logs can compare with the text the answer carries.
#[macro_export]
macro_rules! status_text {
    ($($t:ty),* $(,)?) => {$(
        impl $t {
            /// The value as the answer writes it.
            pub fn as_str(self) -> String {
                match serde_json::to_value(self) {
                    Ok(serde_json::Value::String(s)) => s,
                    Ok(other) => other.to_string(),
                    Err(_) => String::new(),
                }
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.as_str())
            }
        }

        impl PartialEq<&str> for $t {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
    )*};
}
