//! Area ids: one geography of a known kind, written `kind:code` (`lad:E09000024`,
//! `district:SW19`, `h3:88195da49bfffff`), stable across loads, readable, and parseable without
//! the store. The grammar is documented in docs/API-DESIGN.md ("Area ids").

use crate::ids::GssCode;
use crate::postcode::Postcode;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The kinds of geography an area id can name.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum AreaKind {
    /// A full postcode (`unit:SW19 1AA`).
    Unit,
    /// A postcode sector (`sector:SW19 1`).
    Sector,
    /// A postcode district, the outward code (`district:SW19`).
    District,
    /// A postcode area, the letters of the outward code (`area:SW`).
    Area,
    /// A Lower layer Super Output Area (`lsoa:E01000001`).
    Lsoa,
    /// A Middle layer Super Output Area (`msoa:E02000001`).
    Msoa,
    /// An electoral ward (`ward:E05000001`).
    Ward,
    /// A local authority district (`lad:E09000024`).
    Lad,
    /// A county (`county:E10000008`).
    County,
    /// A region (`region:E12000007`).
    Region,
    /// A country of the United Kingdom (`country:E92000001`).
    Country,
    /// A built-up area (`bua:E63000001`).
    Bua,
    /// A local planning authority (`lpa:E60000001`).
    Lpa,
    /// An H3 cell at resolution 8 (`h3:88195da49bfffff`).
    H3,
    /// A populated place of OS Open Names (a city, town, village, hamlet or suburban area), by
    /// its OS id (`place:osgb4000000074559543`).
    Place,
}

impl AreaKind {
    pub const ALL: [AreaKind; 15] = [
        AreaKind::Unit,
        AreaKind::Sector,
        AreaKind::District,
        AreaKind::Area,
        AreaKind::Lsoa,
        AreaKind::Msoa,
        AreaKind::Ward,
        AreaKind::Lad,
        AreaKind::County,
        AreaKind::Region,
        AreaKind::Country,
        AreaKind::Bua,
        AreaKind::Lpa,
        AreaKind::H3,
        AreaKind::Place,
    ];

    /// The prefix of the area id (`lad`).
    pub fn as_str(self) -> &'static str {
        match self {
            AreaKind::Unit => "unit",
            AreaKind::Sector => "sector",
            AreaKind::District => "district",
            AreaKind::Area => "area",
            AreaKind::Lsoa => "lsoa",
            AreaKind::Msoa => "msoa",
            AreaKind::Ward => "ward",
            AreaKind::Lad => "lad",
            AreaKind::County => "county",
            AreaKind::Region => "region",
            AreaKind::Country => "country",
            AreaKind::Bua => "bua",
            AreaKind::Lpa => "lpa",
            AreaKind::H3 => "h3",
            AreaKind::Place => "place",
        }
    }

    pub fn from_prefix(s: &str) -> Option<AreaKind> {
        let s = s.trim().to_ascii_lowercase();
        AreaKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// True for the kinds named by an ONS GSS code.
    pub fn is_gss(self) -> bool {
        matches!(
            self,
            AreaKind::Lsoa
                | AreaKind::Msoa
                | AreaKind::Ward
                | AreaKind::Lad
                | AreaKind::County
                | AreaKind::Region
                | AreaKind::Country
                | AreaKind::Bua
                | AreaKind::Lpa
        )
    }

    /// True for the postcode kinds (unit, sector, district, area).
    pub fn is_postcode(self) -> bool {
        matches!(
            self,
            AreaKind::Unit | AreaKind::Sector | AreaKind::District | AreaKind::Area
        )
    }

    /// The GSS entity prefixes (letter and two digits) a code of this kind may start with;
    /// empty for the kinds whose codes are not checked by prefix.
    fn gss_prefixes(self) -> &'static [&'static str] {
        match self {
            AreaKind::Lsoa => &["E01", "W01"],
            AreaKind::Msoa => &["E02", "W02"],
            AreaKind::Ward => &["E05", "W05", "S13", "N08"],
            AreaKind::Lad => &["E06", "E07", "E08", "E09", "W06", "S12", "N09"],
            AreaKind::County => &["E10"],
            AreaKind::Region => &["E12"],
            AreaKind::Country => &["E92", "W92", "S92", "N92", "K02", "K03", "K04"],
            AreaKind::Bua => &["E63", "W45", "E34", "W37", "K05"],
            AreaKind::Lpa => &["E60", "W43"],
            AreaKind::Unit
            | AreaKind::Sector
            | AreaKind::District
            | AreaKind::Area
            | AreaKind::H3
            | AreaKind::Place => &[],
        }
    }

    /// The GSS kind a bare code names, from its entity prefix (`E09000024` is a `lad`).
    pub fn of_gss(code: &GssCode) -> Option<AreaKind> {
        let p = &code.as_str()[..3];
        AreaKind::ALL
            .into_iter()
            .find(|k| k.gss_prefixes().contains(&p))
    }
}

impl fmt::Display for AreaKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AreaIdError {
    #[error(
        "area id must be kind:code with kind one of unit, sector, district, area, lsoa, msoa, ward, lad, county, region, country, bua, lpa, h3, place"
    )]
    Kind,
    #[error("not a valid code for an area of kind {0}")]
    Code(AreaKind),
}

/// One geography: its kind and its canonical code.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct AreaId {
    kind: AreaKind,
    code: String,
}

impl schemars::JsonSchema for AreaId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AreaId".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "An area id, kind:code: unit:SW19 1AA, sector:SW19 1, district:SW19, area:SW, lsoa:, msoa:, ward:, lad:, county:, region:, country:, bua:, lpa: with an ONS GSS code, h3: with a resolution-8 H3 cell index, or place: with an OS Open Names id (place:osgb4000000074559543)",
            "examples": ["lad:E09000024", "district:SW19", "h3:88195da49bfffff"]
        })
    }
}

impl AreaId {
    /// Parses `kind:code`; the code is checked against the kind's shape and canonicalised.
    pub fn parse(s: &str) -> Result<AreaId, AreaIdError> {
        let (kind, code) = s.split_once(':').ok_or(AreaIdError::Kind)?;
        let kind = AreaKind::from_prefix(kind).ok_or(AreaIdError::Kind)?;
        AreaId::new(kind, code)
    }

    /// An area id of this kind from a code in any accepted form.
    pub fn new(kind: AreaKind, code: &str) -> Result<AreaId, AreaIdError> {
        let bad = || AreaIdError::Code(kind);
        let code = match kind {
            AreaKind::Unit => Postcode::parse(code).map_err(|_| bad())?.to_string(),
            AreaKind::Sector => parse_sector(code).ok_or_else(bad)?,
            AreaKind::District => {
                // parse_district also reads a full postcode as its district: not here.
                if Postcode::parse(code).is_ok() {
                    return Err(bad());
                }
                Postcode::parse_district(code).map_err(|_| bad())?
            }
            AreaKind::Area => {
                let c = code.trim().to_ascii_uppercase();
                let ok = (1..=2).contains(&c.len()) && c.bytes().all(|b| b.is_ascii_uppercase());
                if !ok {
                    return Err(bad());
                }
                c
            }
            AreaKind::H3 => format!("{:x}", parse_h3_res8(code).ok_or_else(bad)?),
            AreaKind::Place => parse_os_id(code).ok_or_else(bad)?,
            AreaKind::Lsoa
            | AreaKind::Msoa
            | AreaKind::Ward
            | AreaKind::Lad
            | AreaKind::County
            | AreaKind::Region
            | AreaKind::Country
            | AreaKind::Bua
            | AreaKind::Lpa => {
                let gss = GssCode::parse(code).map_err(|_| bad())?;
                if !kind.gss_prefixes().contains(&&gss.as_str()[..3]) {
                    return Err(bad());
                }
                gss.as_str().to_string()
            }
        };
        Ok(AreaId { kind, code })
    }

    pub fn kind(&self) -> AreaKind {
        self.kind
    }

    /// The canonical code: the postcode form, the GSS code, or the H3 index in lower-case hex.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The postcode parents of a postcode kind, finest first (a unit's sector, district and area);
    /// empty for other kinds. Parseable without the store.
    pub fn postcode_parents(&self) -> Vec<AreaId> {
        let mut out = Vec::new();
        let c = &self.code;
        let sector = match self.kind {
            AreaKind::Unit => Some(c[..c.len() - 2].to_string()),
            AreaKind::Sector
            | AreaKind::District
            | AreaKind::Area
            | AreaKind::Lsoa
            | AreaKind::Msoa
            | AreaKind::Ward
            | AreaKind::Lad
            | AreaKind::County
            | AreaKind::Region
            | AreaKind::Country
            | AreaKind::Bua
            | AreaKind::Lpa
            | AreaKind::H3
            | AreaKind::Place => None,
        };
        if let Some(s) = sector {
            out.push(AreaId {
                kind: AreaKind::Sector,
                code: s,
            });
        }
        if matches!(self.kind, AreaKind::Unit | AreaKind::Sector) {
            let district = c.split(' ').next().unwrap_or_default().to_string();
            out.push(AreaId {
                kind: AreaKind::District,
                code: district,
            });
        }
        if matches!(
            self.kind,
            AreaKind::Unit | AreaKind::Sector | AreaKind::District
        ) {
            let area: String = c.chars().take_while(char::is_ascii_alphabetic).collect();
            out.push(AreaId {
                kind: AreaKind::Area,
                code: area,
            });
        }
        out
    }
}

/// `SW19 1`: an outward code, a space and the inward code's digit (without the space, `SW191`
/// could be `SW1 9`, so the space is required).
fn parse_sector(s: &str) -> Option<String> {
    let (_, last) = s.trim().rsplit_once(' ')?;
    if last.len() != 1 {
        return None;
    }
    let compact: String = s
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_uppercase())
        .collect();
    let (out, digit) = compact.split_at(compact.len().checked_sub(1)?);
    if !digit.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let district = Postcode::parse_district(out).ok()?;
    Some(format!("{district} {digit}"))
}

/// An OS Open Names id: `osgb` and 1 to 16 digits, in lower case.
fn parse_os_id(s: &str) -> Option<String> {
    let s = s.trim().to_ascii_lowercase();
    let digits = s.strip_prefix("osgb")?;
    let ok = (1..=16).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit());
    ok.then_some(s)
}

/// The H3 index of a valid resolution-8 cell written as 15 hex digits (upper or lower case).
///
/// Checks the bit layout of the H3 index: reserved bit 0, mode 1 (cell), resolution 8, a base
/// cell below 122, digits 1 to 8 at most 6 and the unused digits 9 to 15 all 7.
pub fn parse_h3_res8(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.len() != 15 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let v = u64::from_str_radix(s, 16).ok()?;
    let reserved = v >> 63;
    let mode = (v >> 59) & 0xf;
    let res = (v >> 52) & 0xf;
    let base = (v >> 45) & 0x7f;
    if reserved != 0 || mode != 1 || res != 8 || base >= 122 {
        return None;
    }
    for r in 1..=15u64 {
        let digit = (v >> ((15 - r) * 3)) & 0x7;
        let ok = if r <= 8 { digit <= 6 } else { digit == 7 };
        if !ok {
            return None;
        }
    }
    Some(v)
}

impl fmt::Display for AreaId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind, self.code)
    }
}

impl TryFrom<String> for AreaId {
    type Error = AreaIdError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        AreaId::parse(&s)
    }
}

impl From<AreaId> for String {
    fn from(a: AreaId) -> String {
        a.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_parses_and_prints_canonically() {
        for (given, canonical) in [
            ("lad:E09000024", "lad:E09000024"),
            ("LAD:e09000024", "lad:E09000024"),
            ("district:sw19", "district:SW19"),
            ("sector:SW19 1", "sector:SW19 1"),
            ("unit:sw191aa", "unit:SW19 1AA"),
            ("area:SW", "area:SW"),
            ("lsoa:E01000001", "lsoa:E01000001"),
            ("msoa:E02000001", "msoa:E02000001"),
            ("ward:E05000001", "ward:E05000001"),
            ("county:E10000008", "county:E10000008"),
            ("region:E12000007", "region:E12000007"),
            ("country:E92000001", "country:E92000001"),
            ("bua:E63000001", "bua:E63000001"),
            ("lpa:E60000001", "lpa:E60000001"),
            ("h3:88195DA49BFFFFF", "h3:88195da49bfffff"),
            ("place:OSGB4000000074559543", "place:osgb4000000074559543"),
        ] {
            let id = AreaId::parse(given).unwrap_or_else(|e| panic!("{given}: {e}"));
            assert_eq!(id.to_string(), canonical);
            assert_eq!(AreaId::parse(canonical).unwrap(), id);
        }
    }

    #[test]
    fn bad_ids_are_refused_with_their_kind() {
        assert_eq!(AreaId::parse("E09000024"), Err(AreaIdError::Kind));
        assert_eq!(AreaId::parse("parish:E04000001"), Err(AreaIdError::Kind));
        for (given, kind) in [
            ("lad:E01000001", AreaKind::Lad),
            ("lad:E0900002", AreaKind::Lad),
            ("unit:SW19", AreaKind::Unit),
            ("district:SW19 1AA", AreaKind::District),
            ("area:S1", AreaKind::Area),
            ("sector:SW19", AreaKind::Sector),
            ("sector:SW191", AreaKind::Sector),
            // resolution 9, not 8
            ("h3:89195da49bfffff", AreaKind::H3),
            // mode 2 (an edge), not a cell
            ("h3:18195da49bfffff", AreaKind::H3),
            ("h3:88195da49bffff", AreaKind::H3),
            ("place:4000000074559543", AreaKind::Place),
            ("place:osgbx", AreaKind::Place),
        ] {
            assert_eq!(
                AreaId::parse(given),
                Err(AreaIdError::Code(kind)),
                "{given}"
            );
        }
    }

    #[test]
    fn h3_reference_vector_is_a_res8_cell() {
        // The H3 reference implementation's res-8 cell for (52.516262, 13.377704) (Brandenburg
        // Gate), 613036919424548863 = 0x881f1d4887fffff.
        let v = parse_h3_res8("881f1d4887fffff").unwrap();
        assert_eq!(v, 613036919424548863);
        assert_eq!(
            AreaId::new(AreaKind::H3, "881F1D4887FFFFF").unwrap().code(),
            "881f1d4887fffff"
        );
    }

    #[test]
    fn postcode_parents_come_from_the_code() {
        let unit = AreaId::parse("unit:SW19 1AA").unwrap();
        let parents: Vec<String> = unit
            .postcode_parents()
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert_eq!(parents, ["sector:SW19 1", "district:SW19", "area:SW"]);
        assert!(
            AreaId::parse("lad:E09000024")
                .unwrap()
                .postcode_parents()
                .is_empty()
        );
    }

    #[test]
    fn bare_gss_codes_name_their_kind() {
        let k = |s: &str| AreaKind::of_gss(&GssCode::parse(s).unwrap());
        assert_eq!(k("E09000024"), Some(AreaKind::Lad));
        assert_eq!(k("E05000001"), Some(AreaKind::Ward));
        assert_eq!(k("E01000001"), Some(AreaKind::Lsoa));
        assert_eq!(k("E04000001"), None);
    }
}
