//! Gathers the model's inputs from the store: category A sales as [`an::AvmSale`]s (keyed by
//! UPRN, else by normalised address, as the market build keys them), floor areas and types from
//! the units' own energy certificates, parent buildings from the register, and the published
//! district indices.

use chrono::Datelike;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use terrace_analytics as an;
use terrace_core::Postcode;
use terrace_store::Db;
use terrace_store::market::{self as mk, MarketSaleRow};
use terrace_store::{address, listings, valuation as vs};

use crate::ValuationError;
use crate::relist::{ListingHistory, classify};

/// Dwellings without a UPRN are keyed by a hash with this bit set (UPRNs are below 2^40).
const ADDRESS_KEY_BIT: u64 = 1 << 63;

/// A register row's facts: (parent UPRN, postcode, street).
pub type RegisterFacts = (Option<i64>, Option<String>, Option<String>);

/// What the build and the backtest read.
#[derive(Debug, Default)]
pub struct Inputs {
    /// Category A sales with a known type and tenure, `registered` = completion month (the
    /// caller applies a registration lag where it replays history).
    pub sales: Vec<an::AvmSale>,
    /// Postcode districts by id (`area` of a sale).
    pub districts: Vec<String>,
    pub district_ids: HashMap<String, u32>,
    /// Category B sales per UPRN.
    pub category_b: HashMap<i64, usize>,
    /// The latest category A sale per UPRN: (completion date, price).
    pub last_sale: HashMap<i64, (chrono::NaiveDate, i64)>,
    /// Newest certificate with a floor area per UPRN: (floor area, EPC type, built form,
    /// postcode).
    pub epc: HashMap<i64, EpcAttrs>,
    /// Register facts per UPRN.
    pub register: HashMap<i64, RegisterFacts>,
    /// The register's coordinates per UPRN (easting, northing in metres).
    pub positions: HashMap<i64, (f64, f64)>,
    /// Postcode centroids (easting, northing) from the postcode directory, for the postcodes of
    /// sales and certificates whose UPRN has no register coordinates.
    pub postcode_positions: HashMap<String, (f64, f64)>,
    /// The latest completion month of the sales.
    pub through: Option<an::Month>,
    /// Registered leases with a parsed term per UPRN: (date of lease, term end).
    pub leases: HashMap<i64, Vec<(Option<chrono::NaiveDate>, chrono::NaiveDate)>>,
    /// Sales whose own listings were read for a relist (`attrs.relisted` known): relisted, not.
    pub relist_counts: (usize, usize),
}

#[derive(Debug, Clone, PartialEq)]
pub struct EpcAttrs {
    pub floor_area: Option<f64>,
    pub property_type: Option<String>,
    pub built_form: Option<String>,
    pub postcode: Option<String>,
    pub lodged: Option<chrono::NaiveDate>,
    /// Index into `an::AGE_BANDS` of `CONSTRUCTION_AGE_BAND`; `None` when it states no year.
    pub age_band: Option<u8>,
}

impl EpcAttrs {
    /// The attributes a certificate gives (built form and age band).
    pub fn attributes(&self) -> an::Attributes {
        an::Attributes {
            built_form: self.built_form.as_deref().and_then(an::BuiltForm::parse),
            age_band: self.age_band,
            ..an::Attributes::default()
        }
    }
}

fn hash_parts(tag: &str, parts: &[Option<&str>]) -> u64 {
    let mut h = DefaultHasher::new();
    tag.hash(&mut h);
    for v in parts {
        for b in v.unwrap_or("").trim().bytes() {
            h.write_u8(b.to_ascii_uppercase());
        }
        h.write_u8(0xff);
    }
    h.finish()
}

/// The key of a dwelling: its UPRN, else its normalised address.
pub fn dwelling_key(uprn: Option<i64>, s: &MarketSaleRow) -> u64 {
    match uprn {
        Some(u) => u as u64,
        None => {
            hash_parts(
                "addr",
                &[
                    s.postcode.as_deref(),
                    s.saon.as_deref(),
                    s.paon.as_deref(),
                    s.street.as_deref(),
                ],
            ) | ADDRESS_KEY_BIT
        }
    }
}

/// The street key: postcode district and street name.
pub fn street_key(district: &str, street: Option<&str>) -> Option<u64> {
    let s = street.map(str::trim).filter(|s| !s.is_empty())?;
    Some(hash_parts("street", &[Some(district), Some(s)]))
}

/// The postcode sector key (`PO30 2` of `PO30 2EL`).
pub fn sector_key(pc: &Postcode) -> u64 {
    hash_parts("sector", &[Some(pc.sector().as_str())])
}

/// The building of a unit written with a SAON: postcode, PAON and street (flats in one block).
pub fn building_key(postcode: Option<&str>, paon: Option<&str>, street: Option<&str>) -> u64 {
    hash_parts("bldg", &[postcode, paon, street]) | ADDRESS_KEY_BIT
}

/// The Price Paid type of an energy certificate's `PROPERTY_TYPE` and `BUILT_FORM`.
pub fn epc_type(property_type: Option<&str>, built_form: Option<&str>) -> Option<an::PropertyType> {
    let t = property_type?.trim().to_ascii_lowercase();
    let f = built_form.unwrap_or("").trim().to_ascii_lowercase();
    if t == "flat" || t == "maisonette" {
        return Some(an::PropertyType::Flat);
    }
    if t == "house" || t == "bungalow" {
        return match f.as_str() {
            "detached" => Some(an::PropertyType::Detached),
            "semi-detached" => Some(an::PropertyType::SemiDetached),
            "mid-terrace" | "end-terrace" | "enclosed mid-terrace" | "enclosed end-terrace" => {
                Some(an::PropertyType::Terraced)
            }
            _ => None,
        };
    }
    None
}

impl Inputs {
    pub fn district_id(&mut self, outward: &str) -> u32 {
        if let Some(i) = self.district_ids.get(outward) {
            return *i;
        }
        let i = self.districts.len() as u32;
        self.districts.push(outward.to_string());
        self.district_ids.insert(outward.to_string(), i);
        i
    }

    /// The district id of a postcode as written.
    pub fn district_of(&mut self, postcode: Option<&str>) -> Option<u32> {
        let pc = Postcode::parse(postcode?).ok()?;
        Some(self.district_id(pc.outward()))
    }

    /// The UPRN behind a dwelling key, if it is one.
    pub fn uprn_of(key: u64) -> Option<i64> {
        (key & ADDRESS_KEY_BIT == 0).then_some(key as i64)
    }
}

/// Reads every input from the store.
pub async fn gather(db: &Db) -> Result<Inputs, ValuationError> {
    let mut inp = Inputs::default();
    // Energy certificates: the newest lodgement with a floor area per UPRN.
    let mut after = String::new();
    loop {
        let page = vs::epc_page(db, &after, 50_000).await?;
        let Some(last) = page.last() else { break };
        after = last.lmk_key.clone();
        for e in page {
            let Some(u) = e.uprn else { continue };
            let attrs = EpcAttrs {
                floor_area: e.total_floor_area.filter(|a| *a > 0.0),
                property_type: e.property_type,
                built_form: e.built_form,
                postcode: e.postcode,
                lodged: e.lodgement_date,
                age_band: e.construction_age_band.as_deref().and_then(an::age_band_of),
            };
            match inp.epc.get(&u) {
                Some(prev)
                    if (prev.floor_area.is_some(), prev.lodged)
                        >= (attrs.floor_area.is_some(), attrs.lodged) => {}
                _ => {
                    inp.epc.insert(u, attrs);
                }
            }
        }
    }
    // The register: parents, postcodes and streets.
    let mut after = 0i64;
    loop {
        let page = address::addresses_page(db, after, 50_000).await?;
        let Some(last) = page.last() else { break };
        after = last.uprn;
        for a in page {
            if let (Some(x), Some(y)) = (a.x, a.y)
                && x.is_finite()
                && y.is_finite()
            {
                inp.positions.insert(a.uprn, (x, y));
            }
            inp.register
                .insert(a.uprn, (a.parent_uprn, a.postcode, a.street));
        }
    }
    // Registered leases with a parsed term.
    let mut after = String::new();
    loop {
        let page = vs::lease_terms_page(db, &after, 50_000).await?;
        let Some(last) = page.last() else { break };
        after = last.0.clone();
        for (_, u, start, end) in page {
            inp.leases.entry(u).or_default().push((start, end));
        }
    }
    // Sale listings matched to UPRNs, with their snapshots, for the relists.
    let mut histories: HashMap<i64, Vec<ListingHistory>> = HashMap::new();
    let mut after = String::new();
    loop {
        let page = listings::sale_listings_with_uprn_page(db, &after, 5_000).await?;
        let Some(last) = page.last() else { break };
        after = last.listing_id.clone();
        let ids: Vec<String> = page.iter().map(|l| l.listing_id.clone()).collect();
        let mut snaps: HashMap<String, Vec<(chrono::NaiveDateTime, Option<String>)>> =
            HashMap::new();
        for sn in listings::snapshots_of(db, &ids).await? {
            snaps
                .entry(sn.listing_id)
                .or_default()
                .push((sn.time, sn.status));
        }
        for l in page {
            let Some(u) = l.uprn else { continue };
            histories.entry(u).or_default().push(ListingHistory {
                first_seen: Some(l.first_seen),
                snapshots: snaps.remove(&l.listing_id).unwrap_or_default(),
            });
        }
    }
    // Sales without register coordinates take their postcode's centroid (read below).
    let mut by_postcode: Vec<(usize, String)> = Vec::new();
    // Sales.
    let mut after = String::new();
    loop {
        let page = mk::sales_page(db, &after, 50_000).await?;
        let Some(last) = page.last() else { break };
        after = last.transaction_id.clone();
        for s in page {
            if s.ppd_category != "A" {
                if let Some(u) = s.uprn {
                    *inp.category_b.entry(u).or_default() += 1;
                }
                continue;
            }
            let (Some(month), Some(property_type), Some(tenure)) = (
                an::Month::new(s.date.year(), s.date.month()),
                an::PropertyType::from_code(&s.property_type),
                an::Tenure::from_code(&s.tenure),
            ) else {
                continue;
            };
            // The postcode, parsed once: the district, the sector and the centroid's key.
            let Some(pc) = s.postcode.as_deref().and_then(|p| Postcode::parse(p).ok()) else {
                continue;
            };
            let area = inp.district_id(pc.outward());
            let reg = s.uprn.and_then(|u| inp.register.get(&u));
            let building = reg.and_then(|r| r.0).map(|p| p as u64).or_else(|| {
                s.saon
                    .as_deref()
                    .is_some_and(|x| !x.trim().is_empty())
                    .then(|| {
                        building_key(
                            s.postcode.as_deref(),
                            s.paon.as_deref(),
                            s.street.as_deref(),
                        )
                    })
            });
            let epc = s.uprn.and_then(|u| inp.epc.get(&u));
            let floor_area = epc.and_then(|e| e.floor_area);
            let mut attrs = epc.map(EpcAttrs::attributes).unwrap_or_default();
            if tenure == an::Tenure::Leasehold {
                attrs.lease_years = s.uprn.and_then(|u| inp.lease_years(u, s.date));
            }
            attrs.relisted = s
                .uprn
                .and_then(|u| histories.get(&u))
                .and_then(|h| classify(h, month).relisted());
            match attrs.relisted {
                Some(true) => inp.relist_counts.0 += 1,
                Some(false) => inp.relist_counts.1 += 1,
                None => {}
            }
            inp.through = inp.through.max(Some(month));
            if let Some(u) = s.uprn {
                let e = inp.last_sale.entry(u).or_insert((s.date, s.price));
                if (s.date, s.price) > *e {
                    *e = (s.date, s.price);
                }
            }
            let position = s.uprn.and_then(|u| inp.positions.get(&u)).copied();
            if position.is_none() {
                by_postcode.push((inp.sales.len(), pc.as_str().to_string()));
            }
            inp.sales.push(an::AvmSale {
                property: dwelling_key(s.uprn, &s),
                area,
                building,
                street: street_key(pc.outward(), s.street.as_deref()),
                sector: Some(sector_key(&pc)),
                month,
                registered: month,
                price: s.price,
                property_type,
                tenure,
                new_build: s.new_build,
                floor_area_m2: floor_area,
                position,
                attrs,
            });
        }
    }
    // Postcode centroids for those sales and for certificates of UPRNs the register does not
    // place (the build values them too).
    let mut wanted: std::collections::HashSet<String> =
        by_postcode.iter().map(|(_, p)| p.clone()).collect();
    for (u, e) in &inp.epc {
        if !inp.positions.contains_key(u)
            && let Some(pc) = e.postcode.as_deref().and_then(|p| Postcode::parse(p).ok())
        {
            wanted.insert(pc.as_str().to_string());
        }
    }
    if !wanted.is_empty() {
        let mut after = String::new();
        loop {
            let page = mk::postcodes_page(db, &after, 50_000).await?;
            let Some(last) = page.last() else { break };
            after = last.postcode.clone();
            for p in page {
                if let (Some(x), Some(y)) = (p.easting, p.northing)
                    && x.is_finite()
                    && y.is_finite()
                    && wanted.contains(&p.postcode)
                {
                    inp.postcode_positions.insert(p.postcode, (x, y));
                }
            }
        }
    }
    for (i, pc) in by_postcode {
        inp.sales[i].position = inp.postcode_positions.get(&pc).copied();
    }
    Ok(inp)
}

impl Inputs {
    /// Years unexpired at `on` of the UPRN's lease in force then: the registered lease of the
    /// latest date at or before `on` (an undated lease counts as in force); `None` without one.
    pub fn lease_years(&self, uprn: i64, on: chrono::NaiveDate) -> Option<f64> {
        let (_, end) = self
            .leases
            .get(&uprn)?
            .iter()
            .filter(|(start, _)| start.is_none_or(|d| d <= on))
            .max_by_key(|(start, end)| (*start, *end))?;
        Some(((*end - on).num_days() as f64 / 365.25).max(0.0))
    }

    /// The position of a UPRN: the register's coordinates, else the centroid of `postcode`.
    pub fn position_of(&self, uprn: i64, postcode: Option<&str>) -> Option<(f64, f64)> {
        self.positions.get(&uprn).copied().or_else(|| {
            let pc = Postcode::parse(postcode?).ok()?;
            self.postcode_positions.get(pc.as_str()).copied()
        })
    }
}

/// The published indices of the districts (falling back to the nation), from the market build.
pub async fn published_indices(db: &Db, inp: &Inputs) -> Result<an::IndexSet, ValuationError> {
    let mut set = an::IndexSet {
        fallback: load_index(db, "national:UK").await?,
        ..Default::default()
    };
    for (i, d) in inp.districts.iter().enumerate() {
        if let Some(ix) = load_index(db, &format!("district:{d}")).await? {
            set.areas.insert(i as u32, ix);
        }
    }
    Ok(set)
}

async fn load_index(db: &Db, key: &str) -> Result<Option<an::LogIndex>, ValuationError> {
    let points: Vec<(an::Month, f64)> = mk::index_points(db, key)
        .await?
        .into_iter()
        .filter(|p| !p.is_forecast)
        .filter_map(|p| {
            let m = an::Month::parse(&p.period).ok()?;
            let l = p.level.filter(|l| *l > 0.0)?;
            Some((m, (l / 100.0).ln()))
        })
        .collect();
    Ok(an::LogIndex::from_points(&points))
}

/// Indices built from `sales` alone (what a replayed vintage could have published): the nation,
/// then each district (by the decision rule), on a monthly grid from the first sale to the last
/// month with a sale at or before `through`.
pub fn indices_from_sales(sales: &[an::AvmSale], through: an::Month) -> an::IndexSet {
    let mut set = an::IndexSet::default();
    // The series stop at the last month with a sale, as the market build's stop at the last
    // settled month: the months after it (sales not yet registered) are not estimated.
    let through = sales
        .iter()
        .map(|s| s.month)
        .filter(|m| *m <= through)
        .max()
        .unwrap_or(through);
    let Some(first) = sales.iter().map(|s| s.month).min() else {
        return set;
    };
    let as_sale = |s: &an::AvmSale| an::Sale {
        property: Some(s.property),
        month: s.month,
        day: 1,
        price: s.price,
        property_type: s.property_type,
        tenure: s.tenure,
        new_build: s.new_build,
        floor_area_m2: s.floor_area_m2,
    };
    let all: Vec<an::Sale> = sales
        .iter()
        .filter(|s| s.month <= through)
        .map(as_sale)
        .collect();
    // The base: the busiest month, so it is observed.
    let mut counts: HashMap<an::Month, usize> = HashMap::new();
    for s in &all {
        *counts.entry(s.month).or_default() += 1;
    }
    let Some(base) = counts
        .iter()
        .max_by_key(|(m, n)| (**n, std::cmp::Reverse(**m)))
        .map(|(m, _)| *m)
    else {
        return set;
    };
    let Ok(grid) = an::IndexGrid::new(an::Grain::Month, first, through, base) else {
        return set;
    };
    let cfg = an::IndexConfig::default();
    let to_log = |pi: &an::PublishedIndex| {
        let pts: Vec<(an::Month, f64)> = pi
            .series
            .points
            .iter()
            .filter_map(|p| Some((p.period.start_month(), p.log_level?)))
            .collect();
        an::LogIndex::from_points(&pts)
    };
    let Ok(nation) = an::build_index("national:UK", &all, &grid, None, &cfg) else {
        return set;
    };
    set.fallback = to_log(&nation);
    let mut by_area: HashMap<u32, Vec<an::Sale>> = HashMap::new();
    for s in sales.iter().filter(|s| s.month <= through) {
        by_area.entry(s.area).or_default().push(as_sale(s));
    }
    let mut areas: Vec<_> = by_area.into_iter().collect();
    areas.sort_by_key(|(a, _)| *a);
    let built = terrace_core::map_on_cores(&areas, |(a, ss)| {
        (
            *a,
            an::build_index(
                "district",
                ss,
                &grid,
                Some(("national:UK", &nation.series)),
                &cfg,
            )
            .ok()
            .and_then(|pi| to_log(&pi)),
        )
    });
    for (a, ix) in built {
        if let Some(ix) = ix {
            set.areas.insert(a, ix);
        }
    }
    set
}
