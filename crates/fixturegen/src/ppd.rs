//! HM Land Registry Price Paid Data: the 16-column headerless monthly/complete format and the
//! report-builder export, with prices drawn from the true district index.

use crate::index::TrueIndex;
use crate::rng::{Rng, det_exp, det_pow};
use crate::world::{AddressRecord, Dwelling, PropertyType};
use chrono::{Datelike, Days, NaiveDate};

/// The price model, written into the manifest so estimator tests know what they are recovering.
pub const PRICE_MODEL: &str = "price = base_price(district) * level(district, month of sale) / 100 \
* type_factor (D 1.15, S 1.00, T 0.92, F 0.85) * (floor_area_m2 / 90)^0.75 * (1.05 if new build) \
* exp(0.15 * e), e ~ approximately N(0,1) (Irwin-Hall); rounded to the nearest 250. \
Category B sales of dwellings (repossessions, buy-to-let) are outside the model; category B, property type O sales of commercial units follow the commercial model: unit value (district base price x 0.6 to 2.5) * commercial_level(date) / 100 * exp(0.08 * e), the commercial level 100 on 2013-10-14, log growth 5 % a year to 2019-12-31, -12 % over 2020H1, then 3 % a year. \
Registration lags completion: a sale is in the file only if it completed at least its lag before \
the end date, the lag in whole months being 0 to 6 with cumulative shares 10, 40, 65, 80, 90, 96 \
and 100 %, plus 0 to 29 days.";

/// The cumulative share of sales registered within k whole months of completion (k = 0..=6),
/// the same profile as `terrace_analytics::SimSpec::typical`.
pub const REGISTRATION_LAG_CDF: [f64; 7] = [0.10, 0.40, 0.65, 0.80, 0.90, 0.96, 1.0];

/// Whether a sale completed on `date` is registered, and so published, by `end`. The lag is drawn
/// from `reg`, a stream of its own, so dropping the late registrations changes no other draw.
fn registered_by(date: NaiveDate, end: NaiveDate, reg: &mut Rng) -> bool {
    let u = reg.f64();
    let months = REGISTRATION_LAG_CDF
        .iter()
        .position(|c| u < *c)
        .unwrap_or(REGISTRATION_LAG_CDF.len() - 1) as u64;
    date + Days::new(months * 30 + reg.below(30)) <= end
}

/// Category B ("additional price paid") only exists from 14 October 2013.
fn category_b_start() -> NaiveDate {
    NaiveDate::from_ymd_opt(2013, 10, 14).unwrap_or_default()
}

#[derive(Debug, Clone)]
pub struct Sale {
    /// Upper-case GUID without braces.
    pub guid: String,
    pub price: u64,
    pub date: NaiveDate,
    pub postcode: String,
    pub property_type: &'static str,
    pub new_build: bool,
    pub tenure: &'static str,
    pub paon: String,
    pub saon: String,
    pub street: String,
    pub locality: String,
    pub town: String,
    pub district: String,
    pub county: String,
    pub category: &'static str,
}

impl Sale {
    /// The 16 fields of the monthly / complete files, with a record status.
    pub fn fields(&self, status: &str) -> [String; 16] {
        [
            format!("{{{}}}", self.guid),
            self.price.to_string(),
            format!("{} 00:00", self.date.format("%Y-%m-%d")),
            self.postcode.clone(),
            self.property_type.into(),
            if self.new_build { "Y" } else { "N" }.into(),
            self.tenure.into(),
            self.paon.clone(),
            self.saon.clone(),
            self.street.clone(),
            self.locality.clone(),
            self.town.clone(),
            self.district.clone(),
            self.county.clone(),
            self.category.into(),
            status.into(),
        ]
    }

    /// The report-builder export's fields (SAON before PAON, no record status).
    pub fn report_builder_fields(&self) -> [String; 16] {
        [
            self.guid.clone(),
            self.price.to_string(),
            self.date.format("%Y-%m-%d").to_string(),
            self.postcode.clone(),
            self.property_type.into(),
            if self.new_build { "Y" } else { "N" }.into(),
            self.tenure.into(),
            self.saon.clone(),
            self.paon.clone(),
            self.street.clone(),
            self.locality.clone(),
            self.town.clone(),
            self.district.clone(),
            self.county.clone(),
            self.category.into(),
            format!(
                "http://landregistry.data.gov.uk/data/ppi/transaction/{}/current",
                self.guid
            ),
        ]
    }
}

pub const REPORT_BUILDER_HEADER: &str = "unique_id,price_paid,deed_date,postcode,property_type,new_build,estate_type,saon,paon,street,locality,town,district,county,transaction_category,linked_data_uri";

pub fn guid(rng: &mut Rng) -> String {
    let a = rng.next_u64();
    let b = rng.next_u64();
    // Version-4 layout, like most Land Registry ids.
    format!(
        "{:08X}-{:04X}-4{:03X}-{:04X}-{:012X}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0x0fff,
        0x8000 | ((b >> 48) & 0x3fff),
        b & 0xffff_ffff_ffff
    )
}

/// What a sale needs to know about where the property is.
pub struct SaleArea<'a> {
    pub district: usize,
    pub base_price: f64,
    pub la_name_upper: &'a str,
}

fn round_price(p: f64) -> u64 {
    if p < 10_000.0 {
        ((p / 50.0).round() * 50.0) as u64
    } else {
        ((p / 250.0).round() * 250.0) as u64
    }
}

fn paon_saon(rec: &AddressRecord, rng: &mut Rng) -> (String, String) {
    let mut saon = rec.sao_label();
    if rec.sao_text.as_deref() == Some("FLAT") && rng.chance(0.08) {
        saon = rec.sao_start_number.map(|n| n.to_string()).unwrap_or(saon);
    } else if rec.sao_text.as_deref() == Some("APARTMENT") && rng.chance(0.15) {
        saon = saon.replacen("APARTMENT", "FLAT", 1);
    }
    (rec.pao_label(), saon)
}

fn base_sale(rec: &AddressRecord, area: &SaleArea<'_>, rng: &mut Rng) -> Sale {
    let (paon, saon) = paon_saon(rec, rng);
    Sale {
        guid: String::new(),
        price: 0,
        date: NaiveDate::default(),
        postcode: rec.postcode.clone(),
        property_type: "O",
        new_build: false,
        tenure: "F",
        paon,
        saon,
        street: rec.street.clone(),
        locality: rec.locality.clone().unwrap_or_default(),
        town: rec.town.clone(),
        district: area.la_name_upper.to_string(),
        county: area.la_name_upper.to_string(),
        category: "A",
    }
}

/// The sales of one dwelling from 1995 to `end` (often none).
pub fn dwelling_sales(
    seed: u64,
    rec: &AddressRecord,
    d: &Dwelling,
    area: &SaleArea<'_>,
    index: &TrueIndex,
    share: f64,
    end: NaiveDate,
) -> Vec<Sale> {
    let mut rng = Rng::derive(seed, "sales", rec.uprn);
    let first_ppd = NaiveDate::from_ymd_opt(1995, 1, 1).unwrap_or(end);
    let new_build_first = d.new_estate && d.built_year >= 1995;
    let p_sold = if new_build_first {
        (share * 1.7).min(0.95)
    } else {
        share * 0.8
    };
    if !rng.chance(p_sold) {
        return Vec::new();
    }
    let mut date = if new_build_first {
        let m = rng.range_i64(1, 12) as u32;
        NaiveDate::from_ymd_opt(d.built_year, m, rng.range_i64(1, 28) as u32).unwrap_or(end)
    } else {
        let from =
            first_ppd.max(NaiveDate::from_ymd_opt(d.built_year + 1, 1, 1).unwrap_or(first_ppd));
        if from >= end {
            return Vec::new();
        }
        let span = (end - from).num_days().max(1) as u64;
        from + Days::new(rng.below(span))
    };
    let type_factor = match d.property_type {
        PropertyType::Detached => 1.15,
        PropertyType::SemiDetached => 1.0,
        PropertyType::Terraced => 0.92,
        PropertyType::Flat => 0.85,
    };
    let hedonic = type_factor * det_pow(d.floor_area_m2 / 90.0, 0.75);
    let leasehold_house = d.new_estate && (2005..=2017).contains(&d.built_year) && rng.chance(0.15)
        || rng.chance(0.02);
    let tenure = if d.property_type == PropertyType::Flat || leasehold_house {
        "L"
    } else {
        "F"
    };
    let mut sales = Vec::new();
    let mut first = true;
    while date <= end {
        let new_build = first && new_build_first;
        let level = index.level(area.district, date);
        let noise = det_exp(0.15 * rng.normal());
        let premium = if new_build { 1.05 } else { 1.0 };
        let mut price = area.base_price * level / 100.0 * hedonic * premium * noise;
        let mut category = "A";
        if date >= category_b_start() && rng.chance(0.09) {
            category = "B";
            price *= rng.range_f64(0.7, 1.1);
        }
        let mut s = base_sale(rec, area, &mut rng);
        s.guid = guid(&mut rng);
        s.price = round_price(price);
        s.date = date;
        s.property_type = d.property_type.ppd_code();
        s.new_build = new_build;
        s.tenure = tenure;
        s.category = category;
        sales.push(s);
        first = false;
        // Most owners stay: about 2 sales per sold property, 2-14 years apart.
        if !rng.chance(0.55) {
            break;
        }
        let gap_days = (365.0 * (2.0 + 12.0 * rng.f64())) as u64;
        date = date + Days::new(gap_days);
    }
    let mut reg = Rng::derive(seed, "registration", rec.uprn);
    sales.retain(|s| registered_by(s.date, end, &mut reg));
    sales
}

/// The true commercial capital index the fixture's commercial sales are drawn from: national,
/// one level for every unit, 100 on 14 October 2013 (category B's first day). Its log level
/// rises 5 % a year to the end of 2019, falls 12 % over the first half of 2020, then rises 3 % a
/// year. Estimator tests compare the recovered commercial index with its ratios.
pub fn commercial_level(date: NaiveDate) -> f64 {
    let start = category_b_start();
    let years = |d: NaiveDate| (d - start).num_days() as f64 / 365.25;
    let peak = NaiveDate::from_ymd_opt(2020, 1, 1).unwrap_or(start);
    let trough = NaiveDate::from_ymd_opt(2020, 7, 1).unwrap_or(start);
    let t = years(date);
    let log = if date < peak {
        0.05 * t
    } else if date < trough {
        0.05 * years(peak)
            - 0.12 * (date - peak).num_days() as f64 / (trough - peak).num_days() as f64
    } else {
        0.05 * years(peak) - 0.12 + 0.03 * (date - trough).num_days() as f64 / 365.25
    };
    100.0 * det_exp(log)
}

/// A commercial unit changes hands repeatedly from October 2013 (category B, property type O):
/// about four in five are sold, first within four years, then every one to three and a half
/// years. Price = the unit's own value (the district's base price times 0.6 to 2.5, fixed per
/// unit) times [`commercial_level`] / 100 times exp(0.08 e), e ~ approximately N(0,1).
pub fn commercial_sales(
    seed: u64,
    rec: &AddressRecord,
    area: &SaleArea<'_>,
    end: NaiveDate,
) -> Vec<Sale> {
    let mut rng = Rng::derive(seed, "sales", rec.uprn);
    let from = category_b_start();
    if !rng.chance(0.8) || from >= end {
        return Vec::new();
    }
    let unit_value = area.base_price * rng.range_f64(0.6, 2.5);
    let mut date = from + Days::new(rng.below(4 * 365));
    let mut sales = Vec::new();
    while date <= end {
        let price = unit_value * commercial_level(date) / 100.0 * det_exp(0.08 * rng.normal());
        let mut s = base_sale(rec, area, &mut rng);
        s.guid = guid(&mut rng);
        s.price = round_price(price);
        s.date = date;
        s.property_type = "O";
        s.category = "B";
        s.tenure = "F";
        sales.push(s);
        date = date + Days::new(365 + rng.below(912));
    }
    let mut reg = Rng::derive(seed, "registration", rec.uprn);
    sales.retain(|s| registered_by(s.date, end, &mut reg));
    sales
}

/// Whether a date is in the last year before `end` (candidates for the report-builder sample).
pub fn recent(date: NaiveDate, end: NaiveDate) -> bool {
    date > end - Days::new(365) && date.year() >= 1995
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guid_shape() {
        let mut r = Rng::new(1);
        let g = guid(&mut r);
        assert_eq!(g.len(), 36);
        let parts: Vec<&str> = g.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            vec![8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'));
        assert!(
            g.chars()
                .all(|c| c == '-' || c.is_ascii_digit() || c.is_ascii_uppercase())
        );
    }

    #[test]
    fn prices_round() {
        assert_eq!(round_price(123_456.0), 123_500);
        assert_eq!(round_price(123_374.0), 123_250);
        assert_eq!(round_price(4_321.0), 4_300);
    }
}
