//! The vocabulary every Terrace crate shares: identifiers, postcodes, flags, provenance and the clock.
//!
//! Architecture Invariant: this crate depends on no framework (no actix, no diesel); it is pure types.
//!
//! The types: `Uprn` (a positive integer of at most 12 digits) and `Uarn` (the VOA's rated-property
//! number, the same range), both range-checked when deserialised; `GssCode` and its `Nation`;
//! `Postcode` (canonical `EX1 1AA` form, with outward code, inward code, sector, area and a
//! district parser); the three-valued `Flag` (`true`, `false`, `"not_checked"`); `Provenance {
//! source, confidence }` and `sources` (every provenance source a loader stamps, with its
//! confidence); `Unavailable` (`{"status": "not_available", "reason": ...}`); `Violation` (a broken
//! input rule, in no transport's words); the status enums with their wire text (`status_text!`);
//! and the `Clock` trait with `SystemClock` and `FixedClock`. `map_on_cores` spreads CPU-bound work
//! over every core with scoped threads, keeping the input order.
//! `cursor` is the one keyset cursor of every paged operation (`CursorScope`: opaque, versioned,
//! tamper-evident, bound to its query) and `Page<T>` the one page shape.
//! `Month` is the calendar month every monthly figure is kept by, and `SplitMix64` the one small
//! deterministic generator.
//! `memo` holds answers kept in memory: `Shards` (a sharded map) and `AsJson` (an answer as its
//! JSON text).
//!
//! Parsing is done here once: `Uprn::parse`, `GssCode::parse` and `Postcode::parse` return typed
//! errors whose messages the gateway shows.
//!
//! Architecture Invariant: time is a parameter: code that computes with "now" takes it from a
//! `Clock` or as an argument, so tests can pin it. The loaders are the exception: they stamp
//! `updated_at` and the `load_runs` times from the wall clock.

mod area;
mod clock;
mod cores;
pub mod costs;
pub mod cursor;
mod ids;
pub mod memo;
mod month;
pub mod patterns;
mod postcode;
pub mod registers;
mod rng;
pub mod sources;
mod status;
mod status_text;
mod violation;

pub use area::{AreaId, AreaIdError, AreaKind, parse_h3_res8};
pub use clock::{Clock, FixedClock, SystemClock};
pub use cores::map_on_cores;
pub use cursor::{CursorError, CursorScope, Page};
pub use ids::{GssCode, IdError, Nation, Uarn, Uprn, UprnEntry};
pub use month::{Month, MonthError};
pub use postcode::{Postcode, PostcodeError};
pub use rng::SplitMix64;
pub use status::{Fact, FigureStatus, Flag, Provenance, Unavailable};
pub use violation::Violation;
