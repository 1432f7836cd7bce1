//! The energy registers beside the domestic certificates: the domestic `recommendations.csv`
//! (measures read from each certificate's own elements, with the assessor's indicative cost
//! band), and the non-domestic and display certificate files with their recommendations, for
//! the commercial units. Every draw is from this module's own streams (`epc_recommendations`,
//! `epc_non_domestic`), so no other fixture file changes.
//!
//! The display register's files use the newer register's key, `CERTIFICATE_NUMBER`; the others
//! the bulk files' `LMK_KEY`.

use crate::epc::{API_COLUMNS, Area};
use crate::out::{Eol, FileStat, LineFile};
use crate::rng::Rng;
use crate::world::AddressRecord;
use chrono::{Datelike, Days, NaiveDate};
use serde::Serialize;
use std::io;
use std::path::Path;

pub const RECOMMENDATIONS_FILE: &str = "epc/recommendations.csv";
pub const NON_DOMESTIC_FILE: &str = "epc/non-domestic/certificates.csv";
pub const NON_DOMESTIC_RECOMMENDATIONS_FILE: &str = "epc/non-domestic/recommendations.csv";
pub const DISPLAY_FILE: &str = "epc/display/certificates.csv";
pub const DISPLAY_RECOMMENDATIONS_FILE: &str = "epc/display/recommendations.csv";

const DOMESTIC_RECOMMENDATIONS_HEADER: &str = "LMK_KEY,IMPROVEMENT_ITEM,IMPROVEMENT_SUMMARY_TEXT,IMPROVEMENT_DESCR_TEXT,IMPROVEMENT_ID,IMPROVEMENT_ID_TEXT,INDICATIVE_COST";
const NON_DOMESTIC_RECOMMENDATIONS_HEADER: &str =
    "LMK_KEY,PAYBACK_TYPE,RECOMMENDATION_ITEM,RECOMMENDATION_CODE,RECOMMENDATION,CO2_IMPACT";
const DISPLAY_RECOMMENDATIONS_HEADER: &str = "CERTIFICATE_NUMBER,PAYBACK_TYPE,RECOMMENDATION_ITEM,RECOMMENDATION_CODE,RECOMMENDATION,CO2_IMPACT";

/// The non-domestic register's certificate columns, in the published order.
pub const NON_DOMESTIC_COLUMNS: [&str; 40] = [
    "LMK_KEY",
    "ADDRESS1",
    "ADDRESS2",
    "ADDRESS3",
    "POSTCODE",
    "BUILDING_REFERENCE_NUMBER",
    "ASSET_RATING",
    "ASSET_RATING_BAND",
    "PROPERTY_TYPE",
    "INSPECTION_DATE",
    "LOCAL_AUTHORITY",
    "CONSTITUENCY",
    "COUNTY",
    "LODGEMENT_DATE",
    "TRANSACTION_TYPE",
    "NEW_BUILD_BENCHMARK",
    "EXISTING_STOCK_BENCHMARK",
    "BUILDING_LEVEL",
    "MAIN_HEATING_FUEL",
    "OTHER_FUEL_DESC",
    "SPECIAL_ENERGY_USES",
    "RENEWABLE_SOURCES",
    "FLOOR_AREA",
    "STANDARD_EMISSIONS",
    "TARGET_EMISSIONS",
    "TYPICAL_EMISSIONS",
    "BUILDING_EMISSIONS",
    "AIRCON_PRESENT",
    "AIRCON_KW_RATING",
    "ESTIMATED_AIRCON_KW_RATING",
    "AC_INSPECTION_COMMISSIONED",
    "BUILDING_ENVIRONMENT",
    "ADDRESS",
    "LOCAL_AUTHORITY_LABEL",
    "CONSTITUENCY_LABEL",
    "POSTTOWN",
    "LODGEMENT_DATETIME",
    "PRIMARY_ENERGY_VALUE",
    "UPRN",
    "UPRN_SOURCE",
];

/// The display register's certificate columns (the newer register's key first).
pub const DISPLAY_COLUMNS: [&str; 53] = [
    "CERTIFICATE_NUMBER",
    "ADDRESS1",
    "ADDRESS2",
    "ADDRESS3",
    "POSTCODE",
    "BUILDING_REFERENCE_NUMBER",
    "CURRENT_OPERATIONAL_RATING",
    "YR1_OPERATIONAL_RATING",
    "YR2_OPERATIONAL_RATING",
    "OPERATIONAL_RATING_BAND",
    "ELECTRIC_CO2",
    "HEATING_CO2",
    "RENEWABLES_CO2",
    "PROPERTY_TYPE",
    "INSPECTION_DATE",
    "LOCAL_AUTHORITY",
    "CONSTITUENCY",
    "COUNTY",
    "LODGEMENT_DATE",
    "MAIN_BENCHMARK",
    "MAIN_HEATING_FUEL",
    "OTHER_FUEL",
    "SPECIAL_ENERGY_USES",
    "RENEWABLE_SOURCES",
    "TOTAL_FLOOR_AREA",
    "OCCUPANCY_LEVEL",
    "TYPICAL_THERMAL_USE",
    "ANNUAL_THERMAL_FUEL_USAGE",
    "TYPICAL_ELECTRICAL_FUEL_USAGE",
    "ANNUAL_ELECTRICAL_FUEL_USAGE",
    "RENEWABLES_FUEL_THERMAL",
    "RENEWABLES_ELECTRICAL",
    "YR1_ELECTRICITY_CO2",
    "YR2_ELECTRICITY_CO2",
    "YR1_HEATING_CO2",
    "YR2_HEATING_CO2",
    "YR1_RENEWABLES_CO2",
    "YR2_RENEWABLES_CO2",
    "AIRCON_PRESENT",
    "AIRCON_KW_RATING",
    "ESTIMATED_AIRCON_KW_RATING",
    "AC_INSPECTION_COMMISSIONED",
    "BUILDING_ENVIRONMENT",
    "BUILDING_CATEGORY",
    "ADDRESS",
    "LOCAL_AUTHORITY_LABEL",
    "CONSTITUENCY_LABEL",
    "POSTTOWN",
    "NOMINATED_DATE",
    "OR_ASSESSMENT_END_DATE",
    "LODGEMENT_DATETIME",
    "UPRN",
    "UPRN_SOURCE",
];

/// What the energy tests pin.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EnergyCases {
    /// Domestic recommendations written (the malformed row excluded).
    pub domestic_recommendations: u64,
    /// A certificate with at least two recommendations: (LMK key, UPRN, how many).
    pub certificate_with_recommendations: Option<(String, u64, u64)>,
    /// A commercial unit with a non-domestic certificate: (UPRN, LMK key, asset rating band).
    pub non_domestic: Option<(u64, String, String)>,
    /// A unit with a display certificate: (UPRN, certificate number, operational rating band).
    pub display: Option<(u64, String, String)>,
    pub non_domestic_certificates: u64,
    pub display_certificates: u64,
    /// The malformed recommendation row: (file, line, reason).
    pub rejected_recommendation: Option<(String, u64, String)>,
}

pub struct Energy {
    seed: u64,
    end: NaiveDate,
    recs: LineFile,
    nd: LineFile,
    nd_recs: LineFile,
    dec: LineFile,
    dec_recs: LineFile,
    pub cases: EnergyCases,
}

fn col(name: &str) -> usize {
    API_COLUMNS.iter().position(|c| *c == name).unwrap_or(0)
}

/// A band of an asset or operational rating (lower is better; A+ below 0).
fn rating_band(r: i64) -> &'static str {
    match r {
        ..=0 => "A+",
        1..=25 => "A",
        26..=50 => "B",
        51..=75 => "C",
        76..=100 => "D",
        101..=125 => "E",
        126..=150 => "F",
        _ => "G",
    }
}

fn key_of(lmk: &str) -> u64 {
    u64::from_str_radix(lmk.get(..16).unwrap_or("0"), 16).unwrap_or(0)
}

impl Energy {
    pub fn create(out_dir: &Path, seed: u64, end: NaiveDate) -> io::Result<Energy> {
        let mut recs = LineFile::create(out_dir, RECOMMENDATIONS_FILE, Eol::Lf)?;
        recs.header(DOMESTIC_RECOMMENDATIONS_HEADER)?;
        let mut nd = LineFile::create(out_dir, NON_DOMESTIC_FILE, Eol::Lf)?;
        nd.header(&NON_DOMESTIC_COLUMNS.join(","))?;
        let mut nd_recs = LineFile::create(out_dir, NON_DOMESTIC_RECOMMENDATIONS_FILE, Eol::Lf)?;
        nd_recs.header(NON_DOMESTIC_RECOMMENDATIONS_HEADER)?;
        let mut dec = LineFile::create(out_dir, DISPLAY_FILE, Eol::Lf)?;
        dec.header(&DISPLAY_COLUMNS.join(","))?;
        let mut dec_recs = LineFile::create(out_dir, DISPLAY_RECOMMENDATIONS_FILE, Eol::Lf)?;
        dec_recs.header(DISPLAY_RECOMMENDATIONS_HEADER)?;
        Ok(Energy {
            seed,
            end,
            recs,
            nd,
            nd_recs,
            dec,
            dec_recs,
            cases: EnergyCases::default(),
        })
    }

    /// The recommendations of one domestic certificate (its 92 fields), read from its elements:
    /// none when the certificate's potential is its current rating.
    pub fn domestic(&mut self, cert: &[String]) -> io::Result<()> {
        let get = |n: &str| cert.get(col(n)).map(String::as_str).unwrap_or("");
        let lmk = get("lmk-key").to_string();
        let (cur, pot) = (
            get("current-energy-efficiency").parse::<i64>().unwrap_or(0),
            get("potential-energy-efficiency")
                .parse::<i64>()
                .unwrap_or(0),
        );
        if pot <= cur {
            return Ok(());
        }
        let mut rng = Rng::derive(self.seed, "epc_recommendations", key_of(&lmk));
        // (summary, description, improvement id, cost band)
        let mut measures: Vec<(&str, &str, &str, &str)> = Vec::new();
        let roof = get("roof-description");
        if let Some(mm) = roof
            .strip_prefix("Pitched, ")
            .and_then(|r| r.split(' ').next())
            .and_then(|v| v.parse::<i64>().ok())
            && mm < 270
        {
            measures.push((
                "Increase loft insulation to 270 mm",
                "Loft insulation laid between and over the joists to a depth of 270 mm.",
                "5",
                "£100 - £350",
            ));
        }
        let walls = get("walls-description");
        if walls.starts_with("Cavity wall, as built, no insulation") {
            measures.push((
                "Cavity wall insulation",
                "Cavity wall insulation, to fill the gap between the inner and outer walls.",
                "6",
                "£500 - £1,500",
            ));
        } else if walls.contains("no insulation") {
            measures.push((
                "Internal or external wall insulation",
                "Solid wall insulation, internal or external.",
                "7",
                "£4,000 - £14,000",
            ));
        }
        if get("floor-description").contains("no insulation") {
            measures.push((
                "Floor insulation",
                "Insulation of the ground floor.",
                "W1",
                "£800 - £1,200",
            ));
        }
        if get("low-energy-lighting") != "100" {
            measures.push((
                "Low energy lighting for all fixed outlets",
                "Replacement of traditional light bulbs with energy saving bulbs.",
                "35",
                "£15 - £40",
            ));
        }
        let heat = get("mainheat-description");
        if heat.contains("Electric storage heaters") || heat.contains("Room heaters") {
            measures.push((
                "High heat retention storage heaters",
                "Replacement of the storage heaters with high heat retention storage heaters.",
                "Z3",
                "£1,200 - £1,800",
            ));
        } else if heat.contains("mains gas") && rng.chance(0.4) {
            measures.push((
                "Replace boiler with new condensing boiler",
                "A condensing boiler in place of the old one.",
                "20",
                "£2,200 - £3,000",
            ));
        }
        if matches!(
            get("windows-description"),
            "Single glazed" | "Partial double glazing"
        ) {
            measures.push((
                "Double glazed windows",
                "Replacement of the single-glazed windows with double glazing.",
                "13",
                "£3,300 - £6,500",
            ));
        }
        let flat = get("property-type") == "Flat" || get("property-type") == "Maisonette";
        if !flat && rng.chance(0.5) {
            measures.push((
                "Solar water heating",
                "A solar water heating panel on the roof.",
                "19",
                "£4,000 - £6,000",
            ));
        }
        if !flat && rng.chance(0.6) {
            measures.push((
                "Solar photovoltaic panels, 2.5 kWp",
                "Photovoltaic panels on the roof, 2.5 kWp.",
                "34",
                "£3,500 - £5,500",
            ));
        }
        let uprn: u64 = get("uprn").parse().unwrap_or(0);
        // The register lists the measures in order of benefit; the fixture keeps the first
        // three, and writes them as recent bulk files mostly do: the summary and description
        // blank, the measure's code and its text (`IMPROVEMENT_ID_TEXT`) given. One row in ten
        // carries the summary and description too.
        measures.truncate(3);
        let n = measures.len() as u64;
        for (i, (summary, descr, id, cost)) in measures.into_iter().enumerate() {
            let (summary_text, descr_text) = if rng.chance(0.1) {
                (summary, descr)
            } else {
                ("", "")
            };
            self.recs.row_minimal(&[
                lmk.as_str(),
                &(i + 1).to_string(),
                summary_text,
                descr_text,
                id,
                summary,
                cost,
            ])?;
            self.cases.domestic_recommendations += 1;
        }
        if n >= 2 && uprn > 0 && self.cases.certificate_with_recommendations.is_none() {
            self.cases.certificate_with_recommendations = Some((lmk, uprn, n));
        }
        Ok(())
    }

    /// A commercial unit's non-domestic certificate (about two in three) and, for an office
    /// unit, a display certificate (about one in three), with their recommendations.
    pub fn commercial(&mut self, r: &AddressRecord, area: &Area<'_>) -> io::Result<()> {
        let mut rng = Rng::derive(self.seed, "epc_non_domestic", r.uprn);
        let first = NaiveDate::from_ymd_opt(2012, 1, 1).unwrap_or(self.end);
        let span = (self.end - first).num_days().max(1) as u64;
        let town = r.town.clone();
        let line1 = match (&r.organisation, r.pao_start_number) {
            (Some(o), _) => o.clone(),
            (None, Some(n)) => format!("{n} {}", r.street),
            (None, None) => r.street.clone(),
        };
        let line2 = if r.organisation.is_some() {
            r.pao_start_number
                .map_or_else(|| r.street.clone(), |n| format!("{n} {}", r.street))
        } else {
            String::new()
        };
        let address = [line1.as_str(), line2.as_str(), town.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(", ");
        let office = r.class.starts_with("CO");
        if rng.chance(0.66) {
            let lodged = first + Days::new(rng.below(span));
            let rating = rng.range_i64(20, 160);
            let band = rating_band(rating);
            let floor = rng.range_f64(40.0, 900.0).round();
            let lmk = format!("{:016x}{:016x}", rng.next_u64(), rng.next_u64());
            let gas = rng.chance(0.6);
            let fuel = if gas {
                "Natural Gas"
            } else {
                "Grid Supplied Electricity"
            };
            let pv = rng.chance(0.15);
            let property_type = if office {
                "B1 Offices and Workshop businesses"
            } else {
                "A1/A2 Retail and Financial/Professional services"
            };
            let fields: Vec<String> = vec![
                lmk.clone(),
                line1.clone(),
                line2.clone(),
                String::new(),
                r.postcode.clone(),
                format!("{}", 20_000_000 + r.uprn % 10_000_000),
                rating.to_string(),
                band.into(),
                property_type.into(),
                (lodged - Days::new(rng.range_i64(1, 20) as u64))
                    .format("%Y-%m-%d")
                    .to_string(),
                area.lad_code.into(),
                area.constituency_code.into(),
                String::new(),
                lodged.format("%Y-%m-%d").to_string(),
                (*rng.pick(&[
                    "Mandatory issue (Marketed sale)",
                    "Mandatory issue (Property to let)",
                    "Voluntary re-issue (A valid EPC is already lodged).",
                ]))
                .into(),
                rng.range_i64(15, 40).to_string(),
                rng.range_i64(60, 130).to_string(),
                rng.range_i64(3, 4).to_string(),
                fuel.into(),
                String::new(),
                String::new(),
                if pv { "Photovoltaic panels" } else { "" }.into(),
                format!("{floor}"),
                format!("{:.2}", rng.range_f64(20.0, 80.0)),
                format!("{:.2}", rng.range_f64(20.0, 60.0)),
                format!("{:.2}", rng.range_f64(40.0, 120.0)),
                format!("{:.2}", rng.range_f64(20.0, 120.0)),
                if rng.chance(0.3) { "Yes" } else { "No" }.into(),
                String::new(),
                String::new(),
                String::new(),
                (*rng.pick(&[
                    "Heating and Natural Ventilation",
                    "Air Conditioning",
                    "Heating and Mechanical Ventilation",
                ]))
                .into(),
                address.clone(),
                area.lad_name.into(),
                area.constituency_name.into(),
                town.to_uppercase(),
                format!(
                    "{} 10:{:02}:00",
                    lodged.format("%Y-%m-%d"),
                    rng.range_i64(0, 59)
                ),
                format!("{:.2}", rng.range_f64(100.0, 400.0)),
                r.uprn.to_string(),
                "Address Matched".into(),
            ];
            self.nd.row_minimal(&fields)?;
            self.cases.non_domestic_certificates += 1;
            if self.cases.non_domestic.is_none() {
                self.cases.non_domestic = Some((r.uprn, lmk.clone(), band.into()));
            }
            let recs: [(&str, &str, &str, &str); 3] = [
                (
                    "SHORT",
                    "EPC-L5",
                    "Consider replacing T8 lamps with retrofit T5 conversion kit.",
                    "HIGH",
                ),
                (
                    "MEDIUM",
                    "EPC-H7",
                    "Add optimum start/stop to the heating system.",
                    "MEDIUM",
                ),
                (
                    "LONG",
                    "EPC-R1",
                    "Consider installing solar photovoltaic panels.",
                    "LOW",
                ),
            ];
            let n = rng.range_usize(1, 3);
            for (i, (pay, code, text, co2)) in recs.iter().take(n).enumerate() {
                self.nd_recs.row_quoted(&[
                    lmk.as_str(),
                    pay,
                    &(i + 1).to_string(),
                    code,
                    text,
                    co2,
                ])?;
            }
        }
        if office && rng.chance(0.4) {
            let lodged = self.end - Days::new(rng.below(700));
            let rating = rng.range_i64(40, 180);
            let band = rating_band(rating);
            let number = format!(
                "{:04}-{:04}-{:04}-{:04}-{:04}",
                rng.below(10_000),
                rng.below(10_000),
                rng.below(10_000),
                rng.below(10_000),
                rng.below(10_000)
            );
            let floor = rng.range_f64(200.0, 2_000.0).round();
            let mut fields: Vec<String> = vec![
                number.clone(),
                line1.clone(),
                line2.clone(),
                String::new(),
                r.postcode.clone(),
                format!("{}", 30_000_000 + r.uprn % 10_000_000),
                rating.to_string(),
                (rating + rng.range_i64(-10, 10)).to_string(),
                (rating + rng.range_i64(-15, 15)).to_string(),
                band.into(),
                format!("{:.2}", rng.range_f64(5.0, 60.0)),
                format!("{:.2}", rng.range_f64(5.0, 60.0)),
                "0".into(),
                "Offices".into(),
                (lodged - Days::new(30)).format("%Y-%m-%d").to_string(),
                area.lad_code.into(),
                area.constituency_code.into(),
                String::new(),
                lodged.format("%Y-%m-%d").to_string(),
                "General office".into(),
                "Natural Gas".into(),
                String::new(),
                String::new(),
                String::new(),
                format!("{floor}"),
                "Standard occupancy".into(),
            ];
            for _ in 0..12 {
                fields.push(format!("{:.1}", rng.range_f64(10.0, 200.0)));
            }
            fields.extend([
                "No".to_string(),
                String::new(),
                String::new(),
                String::new(),
                "Heating and Natural Ventilation".into(),
                "C1: Offices".into(),
                address.clone(),
                area.lad_name.into(),
                area.constituency_name.into(),
                town.to_uppercase(),
                (lodged - Days::new(10)).format("%Y-%m-%d").to_string(),
                lodged
                    .with_year(lodged.year() + 1)
                    .unwrap_or(lodged)
                    .format("%Y-%m-%d")
                    .to_string(),
                format!(
                    "{} 09:{:02}:00",
                    lodged.format("%Y-%m-%d"),
                    rng.range_i64(0, 59)
                ),
                r.uprn.to_string(),
                "Energy Assessor".into(),
            ]);
            debug_assert_eq!(fields.len(), DISPLAY_COLUMNS.len());
            self.dec.row_minimal(&fields)?;
            self.cases.display_certificates += 1;
            if self.cases.display.is_none() {
                self.cases.display = Some((r.uprn, number.clone(), band.into()));
            }
            self.dec_recs.row_quoted(&[
                number.as_str(),
                "SHORT",
                "1",
                "EPC-C3",
                "Consider fitting thermostatic radiator valves.",
                "MEDIUM",
            ])?;
        }
        Ok(())
    }

    /// Closes the files (the domestic recommendations with one malformed row, a blank key,
    /// at the end) and returns their numbers and the cases.
    pub fn finish(mut self) -> io::Result<(Vec<FileStat>, EnergyCases)> {
        self.recs.row_minimal(&[
            "",
            "1",
            "Increase loft insulation to 270 mm",
            "",
            "5",
            "",
            "£100 - £350",
        ])?;
        self.cases.rejected_recommendation = Some((
            RECOMMENDATIONS_FILE.to_string(),
            self.recs.lines,
            "missing certificate key (LMK_KEY or CERTIFICATE_NUMBER)".to_string(),
        ));
        let stats = vec![
            self.recs.finish()?,
            self.nd.finish()?,
            self.nd_recs.finish()?,
            self.dec.finish()?,
            self.dec_recs.finish()?,
        ];
        Ok((stats, self.cases))
    }
}
