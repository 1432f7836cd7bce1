//! Energy Performance Certificates: domestic, non-domestic and display.
//!
//! Reads the bulk `certificates.csv` (UPPER_SNAKE headers: `LMK_KEY, ADDRESS1, ..., UPRN`) and the
//! search API's CSV (lower-kebab headers: `lmk-key, address1, ...`), and any subset of their columns.
//! The newer register keys a certificate by `CERTIFICATE_NUMBER`, accepted as the key as well.
//! The kind of certificate is told by the header: `ASSET_RATING` makes a non-domestic file,
//! `CURRENT_OPERATIONAL_RATING` (or `OPERATIONAL_RATING_BAND`) a display file, anything else a
//! domestic one. Columns are found by name; the typed fields are read from the columns that are
//! present and every non-empty column is kept in [`EpcRow::fields`].
//!
//! Placeholders (`""`, `NO DATA!`, `INVALID!`, `N/A`, ...) become `None`, and so does a value that
//! does not parse (a number, a UPRN that is not a positive integer). A wrong column count, a blank
//! LMK key in a file that has the column, or a lodgement or inspection date that is not a date
//! rejects a row.

use super::csvio::{Header, Opened, field};
use super::{Parsed, value};
use chrono::NaiveDate;
use std::io;
use std::path::Path;

/// Which register a certificates file is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Domestic,
    NonDomestic,
    Display,
}

impl Kind {
    /// As stored (`epc_certificates.kind`).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Domestic => "domestic",
            Kind::NonDomestic => "non_domestic",
            Kind::Display => "display",
        }
    }

    /// The dataset that loads this kind's files.
    pub fn dataset(self) -> &'static str {
        match self {
            Kind::Domestic => "epc",
            Kind::NonDomestic => "epc_non_domestic",
            Kind::Display => "epc_display",
        }
    }

    /// The kind a header (lower-kebab names) describes.
    pub fn of_header(names: &[String]) -> Kind {
        let has = |n: &str| names.iter().any(|x| x == n);
        if has("asset-rating") || has("asset-rating-band") {
            Kind::NonDomestic
        } else if has("current-operational-rating") || has("operational-rating-band") {
            Kind::Display
        } else {
            Kind::Domestic
        }
    }
}

/// A domestic certificate's building elements, each as described and its efficiency word.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Elements {
    pub walls_description: Option<String>,
    pub walls_energy_eff: Option<String>,
    pub roof_description: Option<String>,
    pub roof_energy_eff: Option<String>,
    pub windows_description: Option<String>,
    pub windows_energy_eff: Option<String>,
    pub floor_description: Option<String>,
    pub floor_energy_eff: Option<String>,
    pub mainheat_description: Option<String>,
    pub mainheat_energy_eff: Option<String>,
    pub mainheatcont_description: Option<String>,
    pub mainheatc_energy_eff: Option<String>,
    pub hotwater_description: Option<String>,
    pub hot_water_energy_eff: Option<String>,
    pub lighting_description: Option<String>,
    pub lighting_energy_eff: Option<String>,
    pub secondheat_description: Option<String>,
    pub mechanical_ventilation: Option<String>,
    pub flat_top_storey: Option<String>,
    pub low_energy_lighting: Option<i32>,
    pub flat_storey_count: Option<i32>,
}

/// The element columns, in the order of [`Elements`]' text fields.
const ELEMENT_TEXT: [&str; 19] = [
    "walls-description",
    "walls-energy-eff",
    "roof-description",
    "roof-energy-eff",
    "windows-description",
    "windows-energy-eff",
    "floor-description",
    "floor-energy-eff",
    "mainheat-description",
    "mainheat-energy-eff",
    "mainheatcont-description",
    "mainheatc-energy-eff",
    "hotwater-description",
    "hot-water-energy-eff",
    "lighting-description",
    "lighting-energy-eff",
    "secondheat-description",
    "mechanical-ventilation",
    "flat-top-storey",
];

/// One EPC certificate (domestic, non-domestic or display).
#[derive(Debug, Clone, PartialEq)]
pub struct EpcRow {
    pub kind: Kind,
    /// The certificate's key: `LMK_KEY`, else `CERTIFICATE_NUMBER`. In a file with neither column
    /// (such as a cut-down extract) it is derived from the row content: `derived-` followed by a 128-bit FNV-1a hash (hex) of
    /// the non-empty columns' names and values. The key is stable across loads and file orderings;
    /// rows with identical content get the same key.
    pub lmk_key: String,
    pub uprn: Option<i64>,
    pub address1: Option<String>,
    pub address2: Option<String>,
    pub address3: Option<String>,
    /// The `ADDRESS` column when present and non-blank, else `address1..3` joined by ", ".
    pub address: Option<String>,
    /// Canonical postcode; `None` when blank or malformed.
    pub postcode: Option<String>,
    pub current_energy_rating: Option<String>,
    pub potential_energy_rating: Option<String>,
    pub current_energy_efficiency: Option<i32>,
    pub potential_energy_efficiency: Option<i32>,
    pub property_type: Option<String>,
    pub built_form: Option<String>,
    pub total_floor_area: Option<f64>,
    pub number_habitable_rooms: Option<i32>,
    pub lodgement_date: Option<NaiveDate>,
    pub inspection_date: Option<NaiveDate>,
    pub tenure: Option<String>,
    pub main_fuel: Option<String>,
    pub local_authority: Option<String>,
    /// `UPRN_SOURCE`: how the publisher matched the UPRN.
    pub uprn_source: Option<String>,
    pub solar_water_heating: Option<String>,
    pub construction_age_band: Option<String>,
    pub floor_level: Option<String>,
    /// `PHOTO_SUPPLY`, per cent of roof area.
    pub photo_supply: Option<f64>,
    /// Non-domestic `ASSET_RATING` or display `CURRENT_OPERATIONAL_RATING`.
    pub asset_rating: Option<i32>,
    /// The building elements (domestic certificates; empty otherwise).
    pub elements: Elements,
    /// Every non-empty column, names in lower-kebab case, values as given.
    pub fields: Vec<(String, String)>,
}

/// Columns that only EPC files have (used by `sniff`), in lower-kebab case.
pub(crate) const MARKER_COLUMNS: &[&str] = &[
    "current-energy-rating",
    "potential-energy-rating",
    "lodgement-date",
    "address1",
    "building-reference-number",
    "lighting-cost-current",
    "heating-cost-current",
    "hot-water-cost-current",
    "total-floor-area",
];

/// Column positions, looked up once per file.
#[derive(Debug, Clone)]
struct Columns {
    header: Header,
    lmk_key: Option<usize>,
    uprn: Option<usize>,
    address1: Option<usize>,
    address2: Option<usize>,
    address3: Option<usize>,
    address: Option<usize>,
    postcode: Option<usize>,
    current_rating: Option<usize>,
    potential_rating: Option<usize>,
    current_efficiency: Option<usize>,
    potential_efficiency: Option<usize>,
    property_type: Option<usize>,
    built_form: Option<usize>,
    floor_area: Option<usize>,
    habitable_rooms: Option<usize>,
    lodgement_date: Option<usize>,
    inspection_date: Option<usize>,
    tenure: Option<usize>,
    main_fuel: Option<usize>,
    local_authority: Option<usize>,
    uprn_source: Option<usize>,
    solar_water_heating: Option<usize>,
    construction_age_band: Option<usize>,
    floor_level: Option<usize>,
    photo_supply: Option<usize>,
    asset_rating: Option<usize>,
    elements: [Option<usize>; 19],
    low_energy_lighting: Option<usize>,
    flat_storey_count: Option<usize>,
    kind: Kind,
}

impl Columns {
    fn new(header: Header) -> Self {
        let f = |n: &str| header.find(&[n]);
        let kind = Kind::of_header(&header.names);
        // The registers name a few shared facts differently.
        let (rating, floor_area, fuel) = match kind {
            Kind::Domestic => (
                "current-energy-rating",
                header.find(&["total-floor-area"]),
                "main-fuel",
            ),
            Kind::NonDomestic => (
                "asset-rating-band",
                header.find(&["floor-area", "total-floor-area"]),
                "main-heating-fuel",
            ),
            Kind::Display => (
                "operational-rating-band",
                header.find(&["total-floor-area", "floor-area"]),
                "main-heating-fuel",
            ),
        };
        Self {
            lmk_key: header.find(&["lmk-key", "certificate-number", "certificatenumber"]),
            uprn: f("uprn"),
            address1: f("address1"),
            address2: f("address2"),
            address3: f("address3"),
            address: f("address"),
            postcode: f("postcode"),
            current_rating: f(rating),
            potential_rating: f("potential-energy-rating"),
            current_efficiency: f("current-energy-efficiency"),
            potential_efficiency: f("potential-energy-efficiency"),
            property_type: f("property-type"),
            built_form: f("built-form"),
            floor_area,
            habitable_rooms: f("number-habitable-rooms"),
            lodgement_date: f("lodgement-date"),
            inspection_date: f("inspection-date"),
            tenure: f("tenure"),
            main_fuel: f(fuel),
            local_authority: f("local-authority"),
            uprn_source: f("uprn-source"),
            solar_water_heating: f("solar-water-heating-flag"),
            construction_age_band: f("construction-age-band"),
            floor_level: f("floor-level"),
            photo_supply: f("photo-supply"),
            asset_rating: header.find(&["asset-rating", "current-operational-rating"]),
            elements: ELEMENT_TEXT.map(|n| header.find(&[n])),
            low_energy_lighting: f("low-energy-lighting"),
            flat_storey_count: f("flat-storey-count"),
            kind,
            header,
        }
    }
}

/// Opens an EPC CSV; the header must name at least one of LMK_KEY, CERTIFICATE_NUMBER, UPRN,
/// ADDRESS, ADDRESS1. A file of another kind than `expected` is an `InvalidData` error naming
/// the dataset that loads it.
pub fn read(
    path: &Path,
    expected: Kind,
) -> io::Result<impl Iterator<Item = Parsed<EpcRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let names = source.header()?.unwrap_or_default();
    let header = Header::new(names);
    if !header.names.is_empty() {
        header.require(
            &source.file,
            &[
                "lmk-key",
                "certificate-number",
                "uprn",
                "address",
                "address1",
            ],
        )?;
        let kind = Kind::of_header(&header.names);
        if kind != expected {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: the header is of {} certificates, not {}: load it as {}",
                    source.file,
                    kind.as_str(),
                    expected.as_str(),
                    kind.dataset()
                ),
            ));
        }
    }
    let cols = Columns::new(header);
    let width = cols.header.len();
    Ok(source.rows(width, move |fields| parse_row(fields, &cols)))
}

fn parse_row(fields: &[String], c: &Columns) -> Result<EpcRow, String> {
    let get = |i: Option<usize>| value::present(field(fields, i));
    let text = |i: Option<usize>| get(i).map(str::to_string);
    let small_int = |i: Option<usize>| {
        get(i)
            .and_then(value::int)
            .and_then(|v| i32::try_from(v).ok())
    };
    let non_empty: Vec<(String, String)> = c
        .header
        .names
        .iter()
        .zip(fields)
        .filter(|(_, v)| !v.trim().is_empty())
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect();
    let lmk_key = match c.lmk_key {
        Some(i) => field(fields, Some(i))
            .ok_or("missing certificate key (LMK_KEY or CERTIFICATE_NUMBER)")?
            .to_string(),
        None => {
            let parts: Vec<&str> = non_empty
                .iter()
                .flat_map(|(n, v)| [n.as_str(), v.as_str()])
                .collect();
            format!("derived-{}", value::stable_hash(&parts))
        }
    };
    // A date that is given but is not a calendar date rejects the row: the lodgement date decides
    // which certificate is current, so it is never guessed.
    let date = |i: Option<usize>, name: &str| match get(i) {
        None => Ok(None),
        Some(v) => value::date(v)
            .map(Some)
            .ok_or_else(|| format!("{name} {v:?} is not a date")),
    };
    let lodgement_date = date(c.lodgement_date, "lodgement date")?;
    let inspection_date = date(c.inspection_date, "inspection date")?;
    let (address1, address2, address3) = (text(c.address1), text(c.address2), text(c.address3));
    let address = text(c.address).or_else(|| {
        let parts: Vec<&str> = [&address1, &address2, &address3]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    });
    Ok(EpcRow {
        lmk_key,
        uprn: get(c.uprn).and_then(value::uprn),
        address1,
        address2,
        address3,
        address,
        postcode: value::postcode(get(c.postcode)),
        current_energy_rating: text(c.current_rating),
        potential_energy_rating: text(c.potential_rating),
        current_energy_efficiency: small_int(c.current_efficiency),
        potential_energy_efficiency: small_int(c.potential_efficiency),
        property_type: text(c.property_type),
        built_form: text(c.built_form),
        total_floor_area: get(c.floor_area).and_then(value::float),
        number_habitable_rooms: small_int(c.habitable_rooms),
        lodgement_date,
        inspection_date,
        tenure: text(c.tenure),
        main_fuel: text(c.main_fuel),
        local_authority: text(c.local_authority),
        uprn_source: text(c.uprn_source),
        solar_water_heating: text(c.solar_water_heating),
        construction_age_band: text(c.construction_age_band),
        floor_level: text(c.floor_level),
        photo_supply: get(c.photo_supply).and_then(value::float),
        asset_rating: small_int(c.asset_rating),
        elements: if c.kind == Kind::Domestic {
            let [
                walls_description,
                walls_energy_eff,
                roof_description,
                roof_energy_eff,
                windows_description,
                windows_energy_eff,
                floor_description,
                floor_energy_eff,
                mainheat_description,
                mainheat_energy_eff,
                mainheatcont_description,
                mainheatc_energy_eff,
                hotwater_description,
                hot_water_energy_eff,
                lighting_description,
                lighting_energy_eff,
                secondheat_description,
                mechanical_ventilation,
                flat_top_storey,
            ] = c.elements.map(text);
            Elements {
                walls_description,
                walls_energy_eff,
                roof_description,
                roof_energy_eff,
                windows_description,
                windows_energy_eff,
                floor_description,
                floor_energy_eff,
                mainheat_description,
                mainheat_energy_eff,
                mainheatcont_description,
                mainheatc_energy_eff,
                hotwater_description,
                hot_water_energy_eff,
                lighting_description,
                lighting_energy_eff,
                secondheat_description,
                mechanical_ventilation,
                flat_top_storey,
                low_energy_lighting: small_int(c.low_energy_lighting),
                flat_storey_count: small_int(c.flat_storey_count),
            }
        } else {
            Elements::default()
        },
        kind: c.kind,
        fields: non_empty,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{sample, split, temp_file};

    fn parse(content: &str) -> (Vec<(u64, EpcRow)>, Vec<super::super::Rejection>) {
        let f = temp_file(content.as_bytes());
        split(read(f.path(), Kind::Domestic).expect("opens"))
    }

    #[test]
    fn bulk_upper_snake() {
        let (ok, bad) = parse(
            "LMK_KEY,ADDRESS1,ADDRESS2,ADDRESS3,POSTCODE,CURRENT_ENERGY_RATING,POTENTIAL_ENERGY_RATING,CURRENT_ENERGY_EFFICIENCY,POTENTIAL_ENERGY_EFFICIENCY,PROPERTY_TYPE,BUILT_FORM,TOTAL_FLOOR_AREA,NUMBER_HABITABLE_ROOMS,LODGEMENT_DATE,INSPECTION_DATE,TENURE,MAIN_FUEL,LOCAL_AUTHORITY,UPRN\n\
             123456789012345678901234567890,Flat 2,10 High Street,,ex11aa,D,B,60,85,Flat,NO DATA!,55.5,3,2020-01-02,2019-12-30,rental (private),mains gas (not community),E07000041,100040215031\n\
             223456789012345678901234567890,1 Low Road,,,EX1 1AB,INVALID!,,x,70.0,House,Detached,,,,,,,E07000041,-3\n\
             323456789012345678901234567890,2 Low Road,,,EX1 1AB,C,,,,,,,,2020-13-45,,,,E07000041,\n\
             ,1 Low Road,,,EX1 1AB,C,,,,,,,,,,,,,\n\
             too,short\n",
        );
        assert_eq!(ok.len(), 2);
        let r = &ok[0].1;
        assert_eq!(ok[0].0, 2);
        assert_eq!(r.lmk_key, "123456789012345678901234567890");
        assert_eq!(r.address.as_deref(), Some("Flat 2, 10 High Street"));
        assert_eq!(r.address3, None);
        assert_eq!(r.postcode.as_deref(), Some("EX1 1AA"));
        assert_eq!(
            (
                r.current_energy_rating.as_deref(),
                r.potential_energy_rating.as_deref()
            ),
            (Some("D"), Some("B"))
        );
        assert_eq!(
            (r.current_energy_efficiency, r.potential_energy_efficiency),
            (Some(60), Some(85))
        );
        assert_eq!(
            (r.property_type.as_deref(), r.built_form.as_deref()),
            (Some("Flat"), None)
        );
        assert_eq!(
            (r.total_floor_area, r.number_habitable_rooms),
            (Some(55.5), Some(3))
        );
        assert_eq!(r.lodgement_date, NaiveDate::from_ymd_opt(2020, 1, 2));
        assert_eq!(r.inspection_date, NaiveDate::from_ymd_opt(2019, 12, 30));
        assert_eq!(r.tenure.as_deref(), Some("rental (private)"));
        assert_eq!(r.local_authority.as_deref(), Some("E07000041"));
        assert_eq!(r.uprn, Some(100_040_215_031));
        // placeholders stay in `fields`, as given; blanks do not
        assert!(
            r.fields
                .contains(&("built-form".to_string(), "NO DATA!".to_string()))
        );
        assert!(
            r.fields
                .contains(&("postcode".to_string(), "ex11aa".to_string()))
        );
        assert!(!r.fields.iter().any(|(n, _)| n == "address3"));

        let r = &ok[1].1;
        assert_eq!(r.current_energy_rating, None);
        assert_eq!(
            (r.current_energy_efficiency, r.potential_energy_efficiency),
            (None, Some(70))
        );
        assert_eq!(r.lodgement_date, None);
        assert_eq!(r.uprn, None); // not a positive integer: None, not a rejection
        assert_eq!(r.address.as_deref(), Some("1 Low Road"));

        assert_eq!(
            bad.iter()
                .map(|b| (b.line, b.reason.as_str()))
                .collect::<Vec<_>>(),
            vec![
                (4, "lodgement date \"2020-13-45\" is not a date"),
                (5, "missing certificate key (LMK_KEY or CERTIFICATE_NUMBER)"),
                (6, "expected 19 columns, found 2"),
            ]
        );
    }

    #[test]
    fn api_lower_kebab_with_address_column() {
        let (ok, bad) = parse(
            "lmk-key,address1,address2,postcode,address,uprn,lodgement-datetime\n\
             abc,Flat 29,Iveagh Court,EX4 2LR,\"Flat 29, Iveagh Court, Farm Hill\",100041141774,2024-08-31 11:24:09\n\
             abd,Flat 30,Iveagh Court,EX4 2LR,,100041141775.0,\n",
        );
        assert!(bad.is_empty());
        assert_eq!(
            ok[0].1.address.as_deref(),
            Some("Flat 29, Iveagh Court, Farm Hill")
        );
        assert_eq!(ok[1].1.address.as_deref(), Some("Flat 30, Iveagh Court"));
        assert_eq!(ok[1].1.uprn, Some(100_041_141_775));
        assert!(ok[0].1.fields.contains(&(
            "lodgement-datetime".to_string(),
            "2024-08-31 11:24:09".to_string()
        )));
    }

    #[test]
    fn derived_keys_without_lmk_column() {
        let content = "LIGHTING_COST_CURRENT,ADDRESS,UPRN\n55,5 Hayward Avenue,10094732430\n55,5 Hayward Avenue,10094732430\n56,5 Hayward Avenue,10094732430\n";
        let (ok, bad) = parse(content);
        assert!(bad.is_empty());
        assert!(ok[0].1.lmk_key.starts_with("derived-") && ok[0].1.lmk_key.len() == 40);
        assert_eq!(ok[0].1.lmk_key, ok[1].1.lmk_key);
        assert_ne!(ok[0].1.lmk_key, ok[2].1.lmk_key);
        // stable: the same content in another file gives the same key
        let (again, _) =
            parse("LIGHTING_COST_CURRENT,ADDRESS,UPRN\n56,5 Hayward Avenue,10094732430\n");
        assert_eq!(again[0].1.lmk_key, ok[2].1.lmk_key);
    }

    #[test]
    fn header_without_epc_columns_is_an_io_error() {
        let f = temp_file(b"a,b,c\n1,2,3\n");
        assert_eq!(
            read(f.path(), Kind::Domestic).err().map(|e| e.kind()),
            Some(io::ErrorKind::InvalidData)
        );
        let f = temp_file(b"");
        assert_eq!(
            read(f.path(), Kind::Domestic).map(Iterator::count).ok(),
            Some(0)
        );
    }

    #[test]
    fn real_exeter_samples() {
        if let Some(p) = sample("exeter/epc_domestic_exeter_E07000041_api_format_4092rows.csv") {
            let (ok, bad) = split(read(&p, Kind::Domestic).expect("opens"));
            println!(
                "epc {}: read {} ok {} rejected {}",
                p.display(),
                ok.len() + bad.len(),
                ok.len(),
                bad.len()
            );
            assert_eq!((ok.len(), bad.len()), (4_092, 0));
            let (line, r) = &ok[0];
            assert_eq!(*line, 2);
            assert_eq!(
                r.lmk_key,
                "f37f4e6d7ebd8faee1d8c4f695fcb3c029f06c8a2e988a28fa48440711707fa5"
            );
            assert_eq!(
                r.address.as_deref(),
                Some("Flat 29, Iveagh Court, Farm Hill")
            );
            assert_eq!(r.postcode.as_deref(), Some("EX4 2LR"));
            assert_eq!(
                (r.current_energy_efficiency, r.potential_energy_efficiency),
                (Some(71), Some(77))
            );
            assert_eq!(
                (r.total_floor_area, r.number_habitable_rooms),
                (Some(33.0), Some(2))
            );
            assert_eq!(r.lodgement_date, NaiveDate::from_ymd_opt(2024, 8, 31));
            assert_eq!(r.tenure.as_deref(), Some("Rented (social)"));
            assert_eq!(r.main_fuel.as_deref(), Some("electricity (not community)"));
            assert_eq!(r.uprn, Some(100_041_141_774));
            assert!(
                r.fields
                    .contains(&("uprn-source".to_string(), "Energy Assessor".to_string()))
            );
            let with_uprn: std::collections::HashSet<i64> =
                ok.iter().filter_map(|(_, r)| r.uprn).collect();
            assert_eq!(ok.iter().filter(|(_, r)| r.uprn.is_none()).count(), 232);
            assert_eq!(with_uprn.len(), 3_693);
            assert!(
                ok.iter()
                    .all(|(_, r)| r.property_type.as_deref() == Some("Flat"))
            );
            assert!(ok.iter().all(|(_, r)| r.postcode.is_some()));
        }
        if let Some(p) =
            sample("exeter/epc_domestic_exeter_E07000041_bulk_header_subset_60396rows.csv")
        {
            let (ok, bad) = split(read(&p, Kind::Domestic).expect("opens"));
            println!(
                "epc {}: read {} ok {} rejected {}",
                p.display(),
                ok.len() + bad.len(),
                ok.len(),
                bad.len()
            );
            assert_eq!((ok.len(), bad.len()), (60_396, 0));
            let (line, r) = &ok[0];
            assert_eq!(*line, 2);
            assert_eq!(
                (r.address.as_deref(), r.uprn),
                (Some("5 Hayward Avenue"), Some(10_094_732_430))
            );
            assert!(
                r.fields
                    .contains(&("lighting-cost-current".to_string(), "55".to_string()))
            );
            assert_eq!(ok[1].1.address.as_deref(), Some("41, Grecian Way"));
            assert_eq!(ok.iter().filter(|(_, r)| r.uprn.is_none()).count(), 1_178);
            let keys: std::collections::HashSet<&str> =
                ok.iter().map(|(_, r)| r.lmk_key.as_str()).collect();
            // 121 rows repeat another row exactly, so share its derived key
            assert_eq!(keys.len(), 60_396 - 121);
        }
    }
}
