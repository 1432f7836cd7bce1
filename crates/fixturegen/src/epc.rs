//! EPC domestic certificates in the bulk `certificates.csv` layout: the 92 fields of the search
//! API with UPPER_SNAKE headers, quoted only where needed.

use crate::names::abbreviate_street;
use crate::rng::Rng;
use crate::world::{AddressRecord, BuiltForm, Dwelling, PropertyType};
use chrono::{Datelike, Days, NaiveDate};

/// The fields of the EPC domestic search API, in order; the bulk file has the same fields with
/// UPPER_SNAKE names (`lmk-key` -> `LMK_KEY`).
pub const API_COLUMNS: [&str; 92] = [
    "lmk-key",
    "address1",
    "address2",
    "address3",
    "postcode",
    "building-reference-number",
    "current-energy-rating",
    "potential-energy-rating",
    "current-energy-efficiency",
    "potential-energy-efficiency",
    "property-type",
    "built-form",
    "inspection-date",
    "local-authority",
    "constituency",
    "county",
    "lodgement-date",
    "transaction-type",
    "environment-impact-current",
    "environment-impact-potential",
    "energy-consumption-current",
    "energy-consumption-potential",
    "co2-emissions-current",
    "co2-emiss-curr-per-floor-area",
    "co2-emissions-potential",
    "lighting-cost-current",
    "lighting-cost-potential",
    "heating-cost-current",
    "heating-cost-potential",
    "hot-water-cost-current",
    "hot-water-cost-potential",
    "total-floor-area",
    "energy-tariff",
    "mains-gas-flag",
    "floor-level",
    "flat-top-storey",
    "flat-storey-count",
    "main-heating-controls",
    "multi-glaze-proportion",
    "glazed-type",
    "glazed-area",
    "extension-count",
    "number-habitable-rooms",
    "number-heated-rooms",
    "low-energy-lighting",
    "number-open-fireplaces",
    "hotwater-description",
    "hot-water-energy-eff",
    "hot-water-env-eff",
    "floor-description",
    "floor-energy-eff",
    "floor-env-eff",
    "windows-description",
    "windows-energy-eff",
    "windows-env-eff",
    "walls-description",
    "walls-energy-eff",
    "walls-env-eff",
    "secondheat-description",
    "sheating-energy-eff",
    "sheating-env-eff",
    "roof-description",
    "roof-energy-eff",
    "roof-env-eff",
    "mainheat-description",
    "mainheat-energy-eff",
    "mainheat-env-eff",
    "mainheatcont-description",
    "mainheatc-energy-eff",
    "mainheatc-env-eff",
    "lighting-description",
    "lighting-energy-eff",
    "lighting-env-eff",
    "main-fuel",
    "wind-turbine-count",
    "heat-loss-corridor",
    "unheated-corridor-length",
    "floor-height",
    "photo-supply",
    "solar-water-heating-flag",
    "mechanical-ventilation",
    "address",
    "local-authority-label",
    "constituency-label",
    "posttown",
    "construction-age-band",
    "lodgement-datetime",
    "tenure",
    "fixed-lighting-outlets-count",
    "low-energy-fixed-light-count",
    "uprn",
    "uprn-source",
];

/// `LMK_KEY,ADDRESS1,...`
pub fn bulk_header() -> String {
    API_COLUMNS
        .iter()
        .map(|c| c.replace('-', "_").to_ascii_uppercase())
        .collect::<Vec<_>>()
        .join(",")
}

/// Column positions used when corrupting rows.
pub const COL_INSPECTION_DATE: usize = 12;
pub const COL_LODGEMENT_DATE: usize = 16;
pub const COL_LODGEMENT_DATETIME: usize = 86;

/// Where the certificate's authority and constituency come from.
pub struct Area<'a> {
    pub lad_code: &'a str,
    pub lad_name: &'a str,
    pub constituency_code: &'a str,
    pub constituency_name: &'a str,
}

/// One certificate: its 92 fields.
pub struct Certificate {
    pub fields: Vec<String>,
}

/// SAP rating band of an efficiency score.
pub fn band(eff: i64) -> &'static str {
    match eff {
        92.. => "A",
        81..=91 => "B",
        69..=80 => "C",
        55..=68 => "D",
        39..=54 => "E",
        21..=38 => "F",
        _ => "G",
    }
}

fn quality_word(q: i64) -> &'static str {
    match q {
        ..=1 => "Very Poor",
        2 => "Poor",
        3 => "Average",
        4 => "Good",
        _ => "Very Good",
    }
}

fn age_band(year: i32, new_dwelling: bool, lodged: NaiveDate) -> String {
    if new_dwelling {
        return lodged.year().to_string();
    }
    let band = match year {
        ..=1899 => "before 1900",
        1900..=1929 => "1900-1929",
        1930..=1949 => "1930-1949",
        1950..=1966 => "1950-1966",
        1967..=1975 => "1967-1975",
        1976..=1982 => "1976-1982",
        1983..=1990 => "1983-1990",
        1991..=1995 => "1991-1995",
        1996..=2002 => "1996-2002",
        2003..=2006 => "2003-2006",
        2007..=2011 => "2007-2011",
        _ => "2012 onwards",
    };
    format!("England and Wales: {band}")
}

fn age_base(year: i32) -> f64 {
    match year {
        ..=1899 => 52.0,
        1900..=1929 => 55.0,
        1930..=1949 => 58.0,
        1950..=1966 => 60.0,
        1967..=1975 => 62.0,
        1976..=1982 => 64.0,
        1983..=1990 => 67.0,
        1991..=1995 => 69.0,
        1996..=2002 => 72.0,
        2003..=2006 => 75.0,
        2007..=2011 => 78.0,
        _ => 80.0,
    }
}

/// Title case for an upper-case register name: "ST DAVIDS HILL" -> "St Davids Hill".
pub fn title(s: &str) -> String {
    s.split(' ')
        .map(|w| {
            let mut out = String::with_capacity(w.len());
            let mut first = true;
            for c in w.chars() {
                if first {
                    out.extend(c.to_uppercase());
                } else {
                    out.extend(c.to_lowercase());
                }
                first = !c.is_alphanumeric() && c != '\'';
            }
            out
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// ADDRESS1-3 as an assessor types them: "Flat 2" / "24 Station Road", "10, High St", ...
pub fn assessor_address(rec: &AddressRecord, rng: &mut Rng) -> [String; 3] {
    let mut street = title(&rec.street);
    if rng.chance(0.12) {
        street = abbreviate_street(&street);
    }
    if street.starts_with("St ") && rng.chance(0.3) {
        street = street.replacen("St ", "St. ", 1);
    }
    let locality = rec.locality.as_deref().map(title);
    let number = rec.pao_start_number.map(|n| {
        crate::world::number_label(
            n,
            rec.pao_start_suffix,
            rec.pao_end_number,
            rec.pao_end_suffix,
        )
    });
    let name = rec.pao_text.as_deref().map(title);
    let sao = {
        let s = title(&rec.sao_label());
        if s.starts_with("Apartment ") && rng.chance(0.2) {
            s.replacen("Apartment", "Flat", 1)
        } else {
            s
        }
    };
    let comma = if rng.chance(0.3) { "," } else { "" };
    let mut lines: Vec<String> = Vec::new();
    match (sao.is_empty(), name, number) {
        (true, None, Some(num)) => lines.push(format!("{num}{comma} {street}")),
        (true, Some(name), None) => {
            lines.push(name);
            lines.push(street);
        }
        (true, Some(name), Some(num)) => {
            lines.push(name);
            lines.push(format!("{num} {street}"));
        }
        (false, None, Some(num)) => {
            if rng.chance(0.4) {
                lines.push(format!("{sao}, {num} {street}"));
            } else {
                lines.push(sao);
                lines.push(format!("{num}{comma} {street}"));
            }
        }
        (false, Some(name), _) => {
            if rng.chance(0.3) {
                lines.push(format!("{sao}, {name}"));
            } else {
                lines.push(sao);
                lines.push(name);
            }
            lines.push(street);
        }
        (_, None, None) => lines.push(street),
    }
    if let Some(l) = locality
        && lines.len() < 3
    {
        lines.push(l);
    }
    if rng.chance(0.04) {
        for l in &mut lines {
            *l = l.to_ascii_uppercase();
        }
    }
    let mut out = [String::new(), String::new(), String::new()];
    for (slot, l) in out.iter_mut().zip(lines) {
        *slot = l;
    }
    out
}

/// Fixed per-property choices, so repeat certificates describe the same building.
struct Fabric {
    gas: bool,
    /// No central heating: electric room heaters (the F and G ratings).
    room_heaters: bool,
    community: bool,
    walls: (&'static str, i64),
    base_eff: f64,
    floor_height: f64,
    building_ref: u64,
}

fn fabric(d: &Dwelling, uprn: u64, rng: &mut Rng) -> Fabric {
    let flat = d.property_type == PropertyType::Flat;
    let room_heaters = rng.chance(if d.built_year < 1930 { 0.09 } else { 0.03 });
    let gas = !room_heaters
        && if flat {
            rng.chance(0.5)
        } else {
            rng.chance(0.85)
        };
    let community = flat && !gas && rng.chance(0.25);
    let granite = d.built_year < 1920 && rng.chance(0.25);
    let walls = match d.built_year {
        ..=1929 if granite => ("Granite or whinstone, as built, no insulation (assumed)", 1),
        ..=1929 => ("Solid brick, as built, no insulation (assumed)", 1),
        1930..=1982 => {
            if rng.chance(0.6) {
                ("Cavity wall, filled cavity", 4)
            } else {
                ("Cavity wall, as built, no insulation (assumed)", 2)
            }
        }
        1983..=1995 => ("Cavity wall, as built, insulated (assumed)", 4),
        1996..=2011 => ("Cavity wall, as built, insulated (assumed)", 4),
        _ => ("Average thermal transmittance 0.24 W/m²K", 5),
    };
    let type_adj = match (d.property_type, d.built_form) {
        (PropertyType::Flat, _) => 3.0,
        (_, BuiltForm::MidTerrace) => 2.0,
        (_, BuiltForm::EndTerrace) => 0.5,
        (_, BuiltForm::SemiDetached) => 0.0,
        (_, BuiltForm::Detached) => -3.0,
    } - if d.bungalow { 2.0 } else { 0.0 }
        - if !gas && !community { 7.0 } else { 0.0 }
        - if room_heaters { 18.0 } else { 0.0 };
    Fabric {
        gas,
        room_heaters,
        community,
        walls,
        base_eff: age_base(d.built_year) + type_adj + 5.0 * rng.normal(),
        floor_height: (rng.range_f64(2.3, 2.8) * 100.0).round() / 100.0,
        building_ref: 10_000_000_000 + (uprn % 1_000_000_000) * 7 % 9_000_000_000,
    }
}

/// The certificates of one dwelling (none, one, or up to three over time).
pub fn certificates(
    seed: u64,
    rec: &AddressRecord,
    d: &Dwelling,
    area: &Area<'_>,
    share: f64,
    end: NaiveDate,
) -> Vec<Certificate> {
    let mut rng = Rng::derive(seed, "epc", rec.uprn);
    if !rng.chance(share) {
        return Vec::new();
    }
    let first_possible = NaiveDate::from_ymd_opt(2009, 1, 1).unwrap_or(end);
    let built = NaiveDate::from_ymd_opt(
        d.built_year,
        rng.range_i64(1, 12) as u32,
        rng.range_i64(1, 28) as u32,
    )
    .unwrap_or(first_possible);
    let new_dwelling_cert = d.built_year >= 2009 && built <= end;
    let start = if new_dwelling_cert {
        built
    } else {
        first_possible.max(built)
    };
    if start > end {
        return Vec::new();
    }
    let n = match rng.f64() {
        x if x < 0.72 => 1,
        x if x < 0.93 => 2,
        _ => 3,
    };
    let span = (end - start).num_days().max(1);
    let mut dates = Vec::new();
    let mut date = if new_dwelling_cert {
        start
    } else {
        start + Days::new(rng.below(span as u64 + 1))
    };
    for _ in 0..n {
        if date > end {
            break;
        }
        dates.push(date);
        date = date + Days::new(rng.range_i64(2 * 365, 8 * 365) as u64);
    }
    let fab = fabric(d, rec.uprn, &mut rng);
    let address = assessor_address(rec, &mut rng);
    let uprn_missing = rng.chance(0.05);
    let mut out = Vec::new();
    for (i, lodged) in dates.iter().enumerate() {
        let new_dwelling = new_dwelling_cert && i == 0;
        let years = f64::from(lodged.year() - 2009);
        let eff = (fab.base_eff + 0.3 * years + 2.0 * rng.normal())
            .round()
            .clamp(1.0, 99.0) as i64;
        let gain = if d.built_year >= 2012 {
            rng.range_i64(0, 3)
        } else {
            ((85 - eff).max(0) as f64 * rng.range_f64(0.3, 0.9)).round() as i64
        };
        let pot = (eff + gain).clamp(eff, 100);
        // Address text may be retyped on a later certificate.
        let addr = if i > 0 && rng.chance(0.3) {
            assessor_address(rec, &mut rng)
        } else {
            address.clone()
        };
        let fields = cert_fields(
            &mut rng,
            rec,
            d,
            &fab,
            area,
            *lodged,
            new_dwelling,
            eff,
            pot,
            &addr,
            uprn_missing,
        );
        out.push(Certificate { fields });
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn cert_fields(
    rng: &mut Rng,
    rec: &AddressRecord,
    d: &Dwelling,
    fab: &Fabric,
    area: &Area<'_>,
    lodged: NaiveDate,
    new_dwelling: bool,
    eff: i64,
    pot: i64,
    addr: &[String; 3],
    uprn_missing: bool,
) -> Vec<String> {
    let flat = d.property_type == PropertyType::Flat;
    let floor_area = d.floor_area_m2 * (1.0 + 0.02 * rng.normal());
    let floor_area_s = if rng.chance(0.3) {
        format!("{floor_area:.2}")
    } else {
        format!("{floor_area:.1}")
    };
    let consumption = |e: i64| (620 - 6 * e).max(20);
    let cons_c = consumption(eff) + rng.range_i64(-15, 15);
    let cons_p = consumption(pot).min(cons_c);
    let co2_per_m2 = (cons_c as f64 * 0.2).round() as i64;
    let co2_c = cons_c as f64 * floor_area * 0.0002;
    let co2_p = cons_p as f64 * floor_area * 0.0002;
    let heat_c = (floor_area * cons_c as f64 * 0.045).round() as i64;
    let heat_p = (floor_area * cons_p as f64 * 0.045).round() as i64;
    let light_c = (floor_area * 0.9).round() as i64 + rng.range_i64(10, 40);
    let light_p = (light_c as f64 * rng.range_f64(0.6, 1.0)).round() as i64;
    let hw_c = rng.range_i64(80, 300);
    let hw_p = (hw_c as f64 * rng.range_f64(0.5, 1.0)).round() as i64;
    let inspection = lodged - Days::new(rng.range_i64(0, 14) as u64);
    let transaction = if new_dwelling {
        "new dwelling"
    } else {
        *rng.pick(&[
            "marketed sale",
            "marketed sale",
            "rental",
            "rental (private)",
            "non marketed sale",
            "ECO assessment",
            "not sale or rental",
        ])
    };
    let tenure = if new_dwelling {
        "Not defined - use in the case of a new dwelling for which the intended tenure in not known. It is not to be used for an existing dwelling"
    } else if lodged.year() < 2016 {
        *rng.pick(&[
            "owner-occupied",
            "owner-occupied",
            "rental (private)",
            "rental (social)",
        ])
    } else {
        *rng.pick(&[
            "Owner-occupied",
            "Owner-occupied",
            "Rented (private)",
            "Rented (social)",
        ])
    };
    let q = |base: i64, rng: &mut Rng| (base + rng.range_i64(-1, 1)).clamp(1, 5);
    let eff_q = ((eff - 20) / 16).clamp(1, 5);
    let (mainheat, fuel, controls, hotwater) = if fab.room_heaters {
        (
            "Room heaters, electric",
            "electricity (not community)",
            "Appliance thermostats",
            "Electric immersion, standard tariff",
        )
    } else if fab.community {
        (
            "Community scheme",
            "mains gas (community)",
            "Flat rate charging, TRVs",
            "Community scheme",
        )
    } else if fab.gas {
        (
            "Boiler and radiators, mains gas",
            "mains gas (not community)",
            "Programmer, room thermostat and TRVs",
            "From main system",
        )
    } else if d.built_year >= 2015 {
        (
            "Air source heat pump, radiators, electric",
            "electricity (not community)",
            "Time and temperature zone control",
            "From main system",
        )
    } else {
        (
            "Electric storage heaters",
            "electricity (not community)",
            "Manual charge control",
            "Electric immersion, off-peak",
        )
    };
    let floor_level = d.floor_level.unwrap_or(0);
    let (floor_desc, floor_q) = if flat && floor_level > 0 {
        ("(another dwelling below)".to_string(), None)
    } else if d.built_year >= 2012 {
        (
            "Average thermal transmittance 0.18 W/m²K".to_string(),
            Some(4),
        )
    } else if d.built_year < 1930 {
        ("Suspended, no insulation (assumed)".to_string(), Some(2))
    } else {
        ("Solid, no insulation (assumed)".to_string(), Some(2))
    };
    let (roof_desc, roof_q) = if flat && !d.top_floor {
        ("(another dwelling above)".to_string(), None)
    } else if d.built_year >= 2012 {
        (
            "Average thermal transmittance 0.13 W/m²K".to_string(),
            Some(5),
        )
    } else {
        let mm = *rng.pick(&[50, 100, 150, 200, 250, 270, 300]);
        (
            format!("Pitched, {mm} mm loft insulation"),
            Some((mm / 70 + 1).clamp(1, 5)),
        )
    };
    let windows = if d.built_year >= 2012 {
        "High performance glazing"
    } else {
        *rng.pick(&[
            "Fully double glazed",
            "Fully double glazed",
            "Fully double glazed",
            "Partial double glazing",
            "Single glazed",
        ])
    };
    let window_q = match windows {
        "High performance glazing" => 5,
        "Fully double glazed" => 3,
        "Partial double glazing" => 2,
        _ => 1,
    };
    let low_energy = *rng.pick(&[100, 100, 100, 80, 67, 50, 0]);
    let lighting = if low_energy == 100 {
        "Low energy lighting in all fixed outlets".to_string()
    } else if low_energy == 0 {
        "No low energy lighting".to_string()
    } else {
        format!("Low energy lighting in {low_energy}% of fixed outlets")
    };
    let property_type = if flat {
        if rng.chance(0.05) {
            "Maisonette"
        } else {
            "Flat"
        }
    } else if d.bungalow {
        "Bungalow"
    } else {
        "House"
    };
    let corridor = if flat {
        *rng.pick(&["unheated corridor", "no corridor", "heated corridor"])
    } else {
        ""
    };
    let corridor_len = if corridor == "unheated corridor" {
        format!("{:.2}", rng.range_f64(2.0, 9.0))
    } else {
        String::new()
    };
    let address_joined = addr
        .iter()
        .filter(|s| !s.is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    let lmk = format!(
        "{:016x}{:016x}{:016x}{:016x}",
        rng.next_u64(),
        rng.next_u64(),
        rng.next_u64(),
        rng.next_u64()
    );
    let rooms = i64::from(d.habitable_rooms);
    let hh = rng.range_i64(8, 18);
    let (mm, ss) = (rng.range_i64(0, 59), rng.range_i64(0, 59));
    let eff_word = |base: i64, rng: &mut Rng| quality_word(q(base, rng)).to_string();
    let na = || "N/A".to_string();
    let (uprn, uprn_source) = if uprn_missing {
        (String::new(), String::new())
    } else {
        let src = if rng.chance(0.8) {
            "Energy Assessor"
        } else {
            "Address Matched"
        };
        (rec.uprn.to_string(), src.to_string())
    };
    let mut f: Vec<String> = Vec::with_capacity(92);
    f.push(lmk);
    f.extend(addr.iter().cloned());
    f.push(rec.postcode.clone());
    f.push(fab.building_ref.to_string());
    f.push(band(eff).into());
    f.push(band(pot).into());
    f.push(eff.to_string());
    f.push(pot.to_string());
    f.push(property_type.into());
    f.push(d.built_form.epc_label().into());
    f.push(inspection.format("%Y-%m-%d").to_string());
    f.push(area.lad_code.into());
    f.push(area.constituency_code.into());
    f.push(String::new()); // county: blank for a unitary authority
    f.push(lodged.format("%Y-%m-%d").to_string());
    f.push(transaction.into());
    f.push((eff - rng.range_i64(0, 8)).clamp(1, 100).to_string());
    f.push((pot - rng.range_i64(0, 6)).clamp(1, 100).to_string());
    f.push(cons_c.to_string());
    f.push(cons_p.to_string());
    f.push(format!("{co2_c:.1}"));
    f.push(co2_per_m2.to_string());
    f.push(format!("{co2_p:.1}"));
    f.push(light_c.to_string());
    f.push(light_p.to_string());
    f.push(heat_c.to_string());
    f.push(heat_p.to_string());
    f.push(hw_c.to_string());
    f.push(hw_p.to_string());
    f.push(floor_area_s);
    f.push(
        if fab.gas {
            "Single"
        } else {
            *rng.pick(&["dual", "off-peak 7 hour", "Unknown"])
        }
        .into(),
    );
    f.push(if fab.gas { "Y" } else { "N" }.into());
    f.push(if flat {
        format!("{floor_level:02}")
    } else {
        String::new()
    });
    f.push(
        if flat {
            if d.top_floor { "Y" } else { "N" }
        } else {
            ""
        }
        .into(),
    );
    f.push(String::new()); // flat-storey-count
    f.push(String::new()); // main-heating-controls
    f.push(
        if window_q == 1 {
            "0"
        } else if window_q == 2 {
            "50"
        } else {
            "100"
        }
        .into(),
    );
    f.push(
        match window_q {
            5 => "double glazing installed during or after 2002",
            1 => "not defined",
            _ => "double glazing, unknown install date",
        }
        .into(),
    );
    f.push("Normal".into());
    f.push(if flat {
        "0".to_string()
    } else {
        rng.range_i64(0, 2).to_string()
    });
    f.push(rooms.to_string());
    f.push(rooms.to_string());
    f.push(low_energy.to_string());
    f.push(
        if d.built_year < 1930 && !flat && rng.chance(0.3) {
            "1"
        } else {
            "0"
        }
        .into(),
    );
    f.push(hotwater.into());
    f.push(eff_word(eff_q, rng));
    f.push(eff_word(eff_q, rng));
    f.push(floor_desc);
    f.push(
        floor_q
            .map(|x| quality_word(x).to_string())
            .unwrap_or_else(na),
    );
    f.push(
        floor_q
            .map(|x| quality_word(x).to_string())
            .unwrap_or_else(na),
    );
    f.push(windows.into());
    f.push(quality_word(window_q).into());
    f.push(quality_word(window_q).into());
    f.push(fab.walls.0.into());
    f.push(quality_word(fab.walls.1).into());
    f.push(quality_word(fab.walls.1).into());
    f.push(
        if fab.gas {
            "None"
        } else {
            "Portable electric heaters (assumed)"
        }
        .into(),
    );
    f.push(na());
    f.push(na());
    f.push(roof_desc);
    f.push(
        roof_q
            .map(|x| quality_word(x).to_string())
            .unwrap_or_else(na),
    );
    f.push(
        roof_q
            .map(|x| quality_word(x).to_string())
            .unwrap_or_else(na),
    );
    f.push(mainheat.into());
    f.push(eff_word(eff_q, rng));
    f.push(eff_word(eff_q, rng));
    f.push(controls.into());
    f.push(eff_word(3, rng));
    f.push(eff_word(3, rng));
    f.push(lighting);
    f.push(quality_word((low_energy / 20).clamp(1, 5)).into());
    f.push(quality_word((low_energy / 20).clamp(1, 5)).into());
    f.push(fuel.into());
    f.push("0".into());
    f.push(corridor.into());
    f.push(corridor_len);
    f.push(format!("{:.2}", fab.floor_height));
    f.push("0.0".into());
    f.push("N".into());
    f.push("natural".into());
    f.push(address_joined);
    f.push(area.lad_name.into());
    f.push(area.constituency_name.into());
    f.push(rec.town.clone());
    f.push(age_band(d.built_year, new_dwelling, lodged));
    f.push(format!(
        "{} {hh:02}:{mm:02}:{ss:02}",
        lodged.format("%Y-%m-%d")
    ));
    f.push(tenure.into());
    f.push((rooms * 2 + rng.range_i64(0, 4)).to_string());
    f.push(String::new());
    f.push(uprn);
    f.push(uprn_source);
    debug_assert_eq!(f.len(), 92);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_upper_snake_of_the_api_names() {
        let h = bulk_header();
        assert!(
            h.starts_with("LMK_KEY,ADDRESS1,ADDRESS2,ADDRESS3,POSTCODE,BUILDING_REFERENCE_NUMBER,")
        );
        assert!(h.contains(",CO2_EMISS_CURR_PER_FLOOR_AREA,"));
        assert!(h.ends_with(",UPRN,UPRN_SOURCE"));
        assert_eq!(h.split(',').count(), 92);
        assert_eq!(API_COLUMNS[COL_LODGEMENT_DATE], "lodgement-date");
        assert_eq!(API_COLUMNS[COL_INSPECTION_DATE], "inspection-date");
        assert_eq!(API_COLUMNS[COL_LODGEMENT_DATETIME], "lodgement-datetime");
    }

    #[test]
    fn bands_and_title_case() {
        assert_eq!(band(92), "A");
        assert_eq!(band(69), "C");
        assert_eq!(band(68), "D");
        assert_eq!(band(20), "G");
        assert_eq!(title("ST DAVIDS HILL"), "St Davids Hill");
        assert_eq!(title("FLAT 2"), "Flat 2");
        assert_eq!(title("HARRIS & SON"), "Harris & Son");
    }
}
