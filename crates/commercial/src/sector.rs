//! Sectors of rated property, from the VOA primary description code, and the local authority an
//! `area` names (GSS code or name).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use terrace_store::catalogue;
use terrace_store::{Db, LookupError};

/// A sector of rated property. `ALL` is every entry; the others are read from the entry's VOA
/// primary description code (`CO` offices, `CS` shops, ...; the VOA's code table).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Sector {
    #[default]
    All,
    /// CO, CO1 (offices, computer centres), TD1.
    Office,
    /// CS* (shops, banks, showrooms, superstores, retail warehouses), CM* (markets).
    Retail,
    /// CR* (restaurants, cafes, food courts).
    RestaurantCafe,
    /// CL* (public houses, wine bars, clubs).
    PubBar,
    /// CH* (hotels, guest houses, self-catering units, motels).
    Hotel,
    /// CW* (warehouses, stores, storage land and depots).
    IndustrialWarehouse,
    /// IF* (factories, mills, works, workshops, business units).
    IndustrialFactory,
    /// L* (leisure: halls, sports, cinemas, theatres).
    Leisure,
    /// MH* (surgeries, health centres, hospitals).
    Healthcare,
    /// E* (schools, colleges, universities, nurseries, libraries, museums).
    Education,
    /// Every other code, and entries with none.
    Other,
}

impl Sector {
    /// Every sector, `All` first.
    pub const EVERY: [Sector; 12] = [
        Sector::All,
        Sector::Office,
        Sector::Retail,
        Sector::RestaurantCafe,
        Sector::PubBar,
        Sector::Hotel,
        Sector::IndustrialWarehouse,
        Sector::IndustrialFactory,
        Sector::Leisure,
        Sector::Healthcare,
        Sector::Education,
        Sector::Other,
    ];

    /// The sector's name as the API writes it (`ALL`, `OFFICE`, ...).
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "OTHER".into())
    }

    /// The sector of a description code (never `All`).
    pub fn of_code(code: Option<&str>) -> Sector {
        let Some(c) = code.map(|c| c.trim().to_ascii_uppercase()) else {
            return Sector::Other;
        };
        let starts = |p: &str| c.starts_with(p);
        if c == "CO" || c == "CO1" || c == "TD1" {
            Sector::Office
        } else if starts("CS") || starts("CM") {
            Sector::Retail
        } else if starts("CR") {
            Sector::RestaurantCafe
        } else if starts("CL") {
            Sector::PubBar
        } else if starts("CH") {
            Sector::Hotel
        } else if starts("CW") {
            Sector::IndustrialWarehouse
        } else if starts("IF") {
            Sector::IndustrialFactory
        } else if starts("L") {
            Sector::Leisure
        } else if starts("MH") {
            Sector::Healthcare
        } else if starts("E") {
            Sector::Education
        } else {
            Sector::Other
        }
    }

    /// Whether an entry with this description code is in the sector.
    pub fn contains(self, code: Option<&str>) -> bool {
        self == Sector::All || Sector::of_code(code) == self
    }
}

/// The geography of an answer: the nation (England and Wales, as the lists cover) or one local
/// authority.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AreaScope {
    /// `national` or `local_authority`.
    pub kind: &'static str,
    /// The local authority's GSS code (null for national).
    pub lad_code: Option<String>,
    /// The local authority's name, where the boundaries loaded name it.
    pub name: Option<String>,
}

impl AreaScope {
    pub fn national() -> AreaScope {
        AreaScope {
            kind: "national",
            lad_code: None,
            name: None,
        }
    }
}

fn is_gss(code: &str) -> bool {
    code.len() == 9
        && code.as_bytes()[0].is_ascii_uppercase()
        && code.as_bytes()[1..].iter().all(u8::is_ascii_digit)
}

/// The local authority `given` names: a GSS code (any loaded or well-formed one) or a loaded
/// authority's name (any case). Not found, naming the nearest names, otherwise. Entries are
/// placed in an authority by their postcode (the postcode directory's local authority).
pub async fn resolve_authority(db: &Db, given: &str) -> Result<AreaScope, LookupError> {
    let lads = catalogue::lad_boundaries(db).await?;
    let code = given.trim().to_ascii_uppercase();
    let scope = |code: String, name: Option<String>| AreaScope {
        kind: "local_authority",
        lad_code: Some(code),
        name,
    };
    if let Some(l) = lads.iter().find(|l| l.code == code) {
        return Ok(scope(l.code.clone(), l.name.clone()));
    }
    if is_gss(&code) {
        return Ok(scope(code, None));
    }
    let key = given.trim().to_lowercase();
    if let Some(l) = lads
        .iter()
        .find(|l| l.name.as_deref().is_some_and(|n| n.to_lowercase() == key))
    {
        return Ok(scope(l.code.clone(), l.name.clone()));
    }
    let mut scored: Vec<(usize, String)> = lads
        .iter()
        .filter_map(|l| {
            let n = l.name.as_deref()?;
            Some((
                strsim::levenshtein(&n.to_lowercase(), &key),
                format!("{n} ({})", l.code),
            ))
        })
        .collect();
    scored.sort();
    let near: Vec<String> = scored.into_iter().take(5).map(|(_, n)| n).collect();
    Err(LookupError::NotFound(if near.is_empty() {
        format!(
            "a local authority named {given:?} (no local authority names are loaded; give its GSS code)"
        )
    } else {
        format!(
            "a local authority named {given:?} (nearest: {})",
            near.join(", ")
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sectors_of_codes() {
        assert_eq!(Sector::of_code(Some("CO")), Sector::Office);
        assert_eq!(Sector::of_code(Some("CS10")), Sector::Retail);
        assert_eq!(Sector::of_code(Some("cs")), Sector::Retail);
        assert_eq!(Sector::of_code(Some("CL1")), Sector::PubBar);
        assert_eq!(Sector::of_code(Some("IF4")), Sector::IndustrialFactory);
        assert_eq!(Sector::of_code(Some("CW")), Sector::IndustrialWarehouse);
        assert_eq!(Sector::of_code(Some("MX")), Sector::Other);
        assert_eq!(Sector::of_code(None), Sector::Other);
        assert!(Sector::All.contains(None));
        assert!(!Sector::Office.contains(Some("CS")));
    }
}
