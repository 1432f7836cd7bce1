//! The vocabulary every Terrace crate shares: identifiers, postcodes, flags, provenance and the clock.
//!
//! Architecture Invariant: this crate depends on no framework (no actix, no diesel); it is pure types.

mod clock;
mod cores;
mod ids;
mod postcode;
mod status;
mod status_text;
mod violation;

pub use clock::{Clock, FixedClock, SystemClock};
pub use cores::map_on_cores;
pub use ids::{GssCode, IdError, Nation, Uarn, Uprn, UprnEntry};
pub use postcode::{Postcode, PostcodeError};
pub use status::{Flag, Provenance, Unavailable};
pub use violation::Violation;
