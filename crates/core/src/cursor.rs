//! The one keyset cursor of every paged operation, and the one page shape.
//!
//! A cursor is the sort key of the last item of a page, written as an opaque token:
//! `c1.<hex payload>.<hex check>`. The payload is the key's parts; the check is the first 8 bytes
//! of a SHA-256 over the version, the operation's scope, the query's fingerprint and the payload.
//! So a token is:
//! - **versioned** (`c1`: a later layout gets `c2`, and a token not of the form [`PATTERN`] is a
//!   422 at `["cursor"]`);
//! - **tamper-evident** (an edited payload no longer matches its check);
//! - **bound to the query that made it** (the same token given to another operation, or to the
//!   same operation with other filters, is refused, since its position means nothing there).
//!   A well-formed token that fails its check names no page of this query: a 404 saying so, as
//!   every cursor that names no page is (docs/API-DESIGN.md), never a page from the wrong place;
//! - **stable under inserts** (it names a key, not an offset: a row added or removed between
//!   pages never makes a walk repeat or skip another row).
//!
//! A family fetches `limit + 1` rows after the decoded key in key order and hands them to
//! [`Page::from_overfetch`], which keeps `limit` and writes the next cursor from the last kept one.

use schemars::JsonSchema;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::Violation;

/// The layout version written at the front of every token.
const VERSION: &str = "c1";
/// Separates a key's parts inside the payload (a control character no key contains).
const SEP: char = '\u{1f}';
/// The bytes of the check.
const CHECK_BYTES: usize = 8;
/// The form of every token, for the schemas of `cursor` parameters.
pub const PATTERN: &str = r"^c1\.([0-9a-f]{2})*\.[0-9a-f]{16}$";
/// The longest token a schema should accept (a key of up to 240 bytes).
pub const MAX_LEN: u64 = 504;

/// Why a cursor is refused.
#[derive(Debug, Clone, PartialEq)]
pub enum CursorError {
    /// Not a token of this service's form: a 422 at `["cursor"]`.
    Malformed(Violation),
    /// A well-formed token this query could not have written: no page starts there (a 404); the
    /// text says what was asked.
    NotThisQuery(String),
}

/// What binds a cursor to the query that made it: the operation's scope (its id) and a
/// fingerprint of every filter except `cursor` and `limit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CursorScope {
    scope: &'static str,
    fingerprint: String,
}

impl CursorScope {
    /// A scope with the filters given as a serialisable value (leave `cursor` and `limit` out,
    /// so that a walk may change its page size).
    pub fn new<Q: Serialize + ?Sized>(scope: &'static str, filters: &Q) -> CursorScope {
        let fingerprint = serde_json::to_string(filters).unwrap_or_default();
        CursorScope { scope, fingerprint }
    }

    /// Writes the token of a key (the sort key of the last item of a page).
    pub fn encode<S: AsRef<str>>(&self, key: &[S]) -> String {
        let payload = key
            .iter()
            .map(|s| s.as_ref())
            .collect::<Vec<_>>()
            .join(&SEP.to_string());
        format!(
            "{VERSION}.{}.{}",
            to_hex(payload.as_bytes()),
            to_hex(&self.check(&payload))
        )
    }

    /// Reads a token written by [`CursorScope::encode`] for this same scope and filters: the key's
    /// parts. A token that is not of the form [`PATTERN`] is [`CursorError::Malformed`] (a 422 at
    /// `["cursor"]`); a well-formed one this query could not have written (altered, or written for
    /// another operation or other filters) is [`CursorError::NotThisQuery`]: no page of this
    /// query starts there (a 404, as for every cursor that names no page; docs/API-DESIGN.md).
    pub fn decode(&self, token: &str) -> Result<Vec<String>, CursorError> {
        let malformed = || {
            CursorError::Malformed(
                Violation::new(
                    &["cursor"],
                    "value_error",
                    "Value error, cursor must be the next_cursor of a previous answer, unchanged",
                )
                .with_input(token),
            )
        };
        let mut parts = token.split('.');
        let (Some(VERSION), Some(payload), Some(check), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(malformed());
        };
        let (Some(payload), Some(check)) = (from_hex(payload), from_hex(check)) else {
            return Err(malformed());
        };
        if check.len() != CHECK_BYTES {
            return Err(malformed());
        }
        let payload = String::from_utf8(payload).ok();
        match payload {
            Some(p) if check == self.check(&p) => Ok(p.split(SEP).map(str::to_string).collect()),
            Some(_) | None => Err(CursorError::NotThisQuery(format!(
                "a page of {} at cursor {token:?}: this cursor was not written for this query \
                 (it was altered, or written for another operation or other filters); start \
                 the walk again without a cursor",
                self.scope
            ))),
        }
    }

    /// Reads an optional token: `None` when there is none (the first page).
    pub fn decode_opt(&self, token: Option<&str>) -> Result<Option<Vec<String>>, CursorError> {
        token.map(|t| self.decode(t)).transpose()
    }

    fn check(&self, payload: &str) -> Vec<u8> {
        let mut h = Sha256::new();
        for part in [VERSION, self.scope, &self.fingerprint, payload] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.finalize()[..CHECK_BYTES].to_vec()
    }
}

/// One page of a paged answer: the items in key order and the cursor of the next page.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Page<T> {
    pub data: Vec<T>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

impl<T> Page<T> {
    /// A page from `limit + 1` rows fetched in key order after the cursor's key: keeps `limit`,
    /// and writes the next cursor from the last kept row's key when there were more.
    pub fn from_overfetch<K, S>(
        mut rows: Vec<T>,
        limit: usize,
        scope: &CursorScope,
        key_of: K,
    ) -> Page<T>
    where
        K: Fn(&T) -> Vec<S>,
        S: AsRef<str>,
    {
        let more = rows.len() > limit;
        rows.truncate(limit);
        let next_cursor = if more {
            rows.last().map(|last| scope.encode(&key_of(last)))
        } else {
            None
        };
        Page {
            data: rows,
            next_cursor,
        }
    }
}

fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 0xf) as usize] as char);
    }
    s
}

fn from_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(district: &str) -> CursorScope {
        CursorScope::new("auction_lots", &serde_json::json!({ "district": district }))
    }

    #[test]
    fn a_cursor_reads_back_its_key() {
        let s = scope("RG30");
        let t = s.encode(&["2024-01-02", "lot 7", ""]);
        assert!(t.starts_with("c1."));
        assert_eq!(s.decode(&t).unwrap(), vec!["2024-01-02", "lot 7", ""]);
        assert_eq!(s.decode_opt(None).unwrap(), None);
    }

    #[test]
    fn a_cursor_is_bound_to_its_query_and_scope() {
        let t = scope("RG30").encode(&["k"]);
        let foreign = |r| matches!(r, Err(CursorError::NotThisQuery(_)));
        assert!(foreign(scope("RG31").decode(&t)));
        let other = CursorScope::new("other_op", &serde_json::json!({ "district": "RG30" }));
        assert!(foreign(other.decode(&t)));
        let re = regex::Regex::new(PATTERN).unwrap();
        assert!(re.is_match(&t));
    }

    #[test]
    fn an_altered_or_malformed_cursor_is_a_violation_at_cursor() {
        let s = scope("RG30");
        let t = s.encode(&["abc"]);
        let mut parts: Vec<String> = t.split('.').map(str::to_string).collect();
        parts[1] = to_hex(b"abd");
        let forged = parts.join(".");
        assert!(matches!(
            s.decode(&forged),
            Err(CursorError::NotThisQuery(_))
        ));
        let re = regex::Regex::new(PATTERN).unwrap();
        for bad in [
            "",
            "c1",
            "c1.zz.00",
            "c2.00.0000000000000000",
            "c1.6162.0",
            "c1.616.00",
        ] {
            assert!(!re.is_match(bad), "{bad}");
            let Err(CursorError::Malformed(v)) = s.decode(bad) else {
                panic!("{bad} is malformed")
            };
            assert_eq!(v.path, vec!["cursor"]);
            assert_eq!(v.kind, "value_error");
        }
    }

    #[test]
    fn overfetch_keeps_limit_and_points_past_the_last_kept_row() {
        let s = scope("RG30");
        let page = Page::from_overfetch(vec![1, 2, 3], 2, &s, |n| vec![n.to_string()]);
        assert_eq!(page.data, vec![1, 2]);
        assert_eq!(
            s.decode(page.next_cursor.as_deref().unwrap()).unwrap(),
            vec!["2"]
        );
        let last = Page::from_overfetch(vec![1, 2], 2, &s, |n| vec![n.to_string()]);
        assert_eq!(last.next_cursor, None);
    }
}
