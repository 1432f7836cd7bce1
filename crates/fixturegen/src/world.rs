//! The synthetic world: authorities, towns, villages, postcode districts, streets and properties,
//! generated district by district so a register of millions of addresses streams in bounded memory.

use crate::Config;
use crate::names::{self, upper};
use crate::rng::Rng;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io;

/// The first UPRN handed out. Real custodians allocate UPRNs below 2^40 within council and OS
/// ranges; 99xxxxxxxxxx (12 digits starting 99) is not used by any custodian.
pub const UPRN_BASE: u64 = 990_000_000_001;

/// The synthetic postcode area. "XT" is not a UK postcode area (no Royal Mail area starts with X
/// except the non-geographic XM and XX), so no fixture postcode can collide with a real one.
pub const POSTCODE_AREA: &str = "XT";

/// Where the synthetic area sits: inland British National Grid metres (west Dartmoor), chosen so
/// coordinates are plausible; the authorities themselves do not exist.
pub const CENTRE_E: f64 = 260_000.0;
pub const CENTRE_N: f64 = 80_000.0;

/// The largest register the postcode scheme can hold (99 districts x 9 sectors x ~380 units).
pub const MAX_ADDRESSES: usize = 2_000_000;

/// Postcode unit letters: Royal Mail never uses C, I, K, M, O or V in the inward code.
const UNIT_LETTERS: &[u8] = b"ABDEFGHJLNPQRSTUWXYZ";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PropertyType {
    Detached,
    SemiDetached,
    Terraced,
    Flat,
}

impl PropertyType {
    /// The Price Paid property type letter.
    pub fn ppd_code(self) -> &'static str {
        match self {
            PropertyType::Detached => "D",
            PropertyType::SemiDetached => "S",
            PropertyType::Terraced => "T",
            PropertyType::Flat => "F",
        }
    }

    /// The AddressBase classification code of a dwelling of this type.
    pub fn class(self) -> &'static str {
        match self {
            PropertyType::Detached => "RD02",
            PropertyType::SemiDetached => "RD03",
            PropertyType::Terraced => "RD04",
            PropertyType::Flat => "RD06",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum BuiltForm {
    Detached,
    SemiDetached,
    MidTerrace,
    EndTerrace,
}

impl BuiltForm {
    /// The EPC `BUILT_FORM` text.
    pub fn epc_label(self) -> &'static str {
        match self {
            BuiltForm::Detached => "Detached",
            BuiltForm::SemiDetached => "Semi-Detached",
            BuiltForm::MidTerrace => "Mid-Terrace",
            BuiltForm::EndTerrace => "End-Terrace",
        }
    }
}

/// The ground truth about a dwelling that no published register carries but the EPC and Price
/// Paid generators (and estimator tests) use.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dwelling {
    pub property_type: PropertyType,
    pub built_form: BuiltForm,
    /// Total floor area in square metres (one decimal).
    pub floor_area_m2: f64,
    pub habitable_rooms: u8,
    pub built_year: i32,
    /// Built as part of a new estate after 1995: its first sale is a new-build sale.
    pub new_estate: bool,
    /// Flats: the storey (0 = ground).
    pub floor_level: Option<i32>,
    /// Flats: on the top storey of the building.
    pub top_floor: bool,
    /// A single-storey detached house (EPC `PROPERTY_TYPE` "Bungalow").
    pub bungalow: bool,
}

/// One addressable object of the register: one row of the AddressBase Plus fixture.
/// Text fields are upper case, as AddressBase publishes them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AddressRecord {
    pub uprn: u64,
    pub parent_uprn: Option<u64>,
    /// AddressBase classification code: RD02, RD03, RD04, RD06, PP, CR01, CO01.
    pub class: &'static str,
    pub sao_start_number: Option<u32>,
    pub sao_start_suffix: Option<char>,
    pub sao_end_number: Option<u32>,
    pub sao_end_suffix: Option<char>,
    pub sao_text: Option<String>,
    pub pao_start_number: Option<u32>,
    pub pao_start_suffix: Option<char>,
    pub pao_end_number: Option<u32>,
    pub pao_end_suffix: Option<char>,
    pub pao_text: Option<String>,
    /// The occupier of a commercial unit (AddressBase `LA_ORGANISATION`).
    pub organisation: Option<String>,
    pub street: String,
    pub locality: Option<String>,
    pub town: String,
    pub postcode: String,
    /// British National Grid easting and northing, metres (two decimals).
    pub x: f64,
    pub y: f64,
    /// WGS84 from `terrace_geo::wgs84_from_bng`, rounded to seven decimals.
    pub lat: f64,
    pub lon: f64,
    /// GSS code of the local authority.
    pub lad_code: &'static str,
    /// `None` for parent shells (PP) and commercial units.
    pub dwelling: Option<Dwelling>,
}

impl AddressRecord {
    /// The PAO as Price Paid writes it: "10", "12A", "63-65", "ROSE COTTAGE".
    pub fn pao_label(&self) -> String {
        let mut s = String::new();
        if let Some(t) = &self.pao_text {
            s.push_str(t);
        }
        if let Some(n) = self.pao_start_number {
            if !s.is_empty() {
                s.push_str(", ");
            }
            s.push_str(&number_label(
                n,
                self.pao_start_suffix,
                self.pao_end_number,
                self.pao_end_suffix,
            ));
        }
        s
    }

    /// The SAO as Price Paid writes it: "FLAT 2", "APARTMENT 3", "GROUND FLOOR FLAT".
    pub fn sao_label(&self) -> String {
        let mut s = String::new();
        if let Some(t) = &self.sao_text {
            s.push_str(t);
        }
        if let Some(n) = self.sao_start_number {
            if !s.is_empty() {
                s.push(' ');
            }
            s.push_str(&number_label(
                n,
                self.sao_start_suffix,
                self.sao_end_number,
                self.sao_end_suffix,
            ));
        }
        s
    }

    /// One line, as a person would read it: "FLAT 2, 24 STATION ROAD, TAMBERLEY, XT1 1AA".
    pub fn single_line(&self) -> String {
        let mut parts = Vec::new();
        if let Some(o) = &self.organisation {
            parts.push(o.clone());
        }
        let sao = self.sao_label();
        if !sao.is_empty() {
            parts.push(sao);
        }
        let pao = self.pao_label();
        match (self.pao_text.is_some(), self.pao_start_number.is_some()) {
            (false, true) => parts.push(format!("{pao} {}", self.street)),
            _ => {
                if !pao.is_empty() {
                    parts.push(pao);
                }
                parts.push(self.street.clone());
            }
        }
        if let Some(l) = &self.locality {
            parts.push(l.clone());
        }
        parts.push(self.town.clone());
        parts.push(self.postcode.clone());
        parts.join(", ")
    }
}

pub fn number_label(
    n: u32,
    suffix: Option<char>,
    end: Option<u32>,
    end_suffix: Option<char>,
) -> String {
    let mut s = n.to_string();
    if let Some(c) = suffix {
        s.push(c);
    }
    if let Some(e) = end {
        s.push('-');
        s.push_str(&e.to_string());
        if let Some(c) = end_suffix {
            s.push(c);
        }
    }
    s
}

/// A UPRN with coordinates but no address (land, street furniture, demolished objects): OS Open
/// UPRN lists many of these.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UprnPoint {
    pub uprn: u64,
    pub x: f64,
    pub y: f64,
    pub lat: f64,
    pub lon: f64,
}

// Nearly every item is an address, so boxing it would only add an allocation per record.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Item {
    Address(AddressRecord),
    Orphan(UprnPoint),
}

/// A rectangle in WGS84 degrees stored as integers of 1e-8 degree. Edges always end in the digit 5
/// at the eighth decimal, so a coordinate published with seven decimals is never on an edge:
/// every published point falls in exactly one tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RectE8 {
    pub lon_min: i64,
    pub lon_max: i64,
    pub lat_min: i64,
    pub lat_max: i64,
}

impl RectE8 {
    pub fn contains(&self, lon: f64, lat: f64) -> bool {
        lon > e8(self.lon_min)
            && lon < e8(self.lon_max)
            && lat > e8(self.lat_min)
            && lat < e8(self.lat_max)
    }

    /// Inside with a margin in degrees.
    pub fn contains_inset(&self, lon: f64, lat: f64, mlon: f64, mlat: f64) -> bool {
        lon > e8(self.lon_min) + mlon
            && lon < e8(self.lon_max) - mlon
            && lat > e8(self.lat_min) + mlat
            && lat < e8(self.lat_max) - mlat
    }
}

pub fn e8(v: i64) -> f64 {
    v as f64 / 1e8
}

/// Snap a coordinate in degrees to the edge grid (…5 at the eighth decimal), within 1e-7.
pub fn snap_edge(v: f64) -> i64 {
    (v * 1e7).floor() as i64 * 10 + 5
}

/// Formats an edge value exactly ("-4.01234565").
pub fn fmt_e8(v: i64) -> String {
    let sign = if v < 0 { "-" } else { "" };
    let a = v.unsigned_abs();
    format!("{sign}{}.{:08}", a / 100_000_000, a % 100_000_000)
}

pub fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

pub fn round7(v: f64) -> f64 {
    (v * 1e7).round() / 1e7
}

/// WGS84 `(lon, lat)` rounded to seven decimals, via `terrace_geo`.
pub fn lonlat(x: f64, y: f64) -> Option<(f64, f64)> {
    terrace_geo::wgs84_from_bng(x, y).map(|(lon, lat)| (round7(lon), round7(lat)))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    Core,
    North,
    South,
}

#[derive(Debug, Clone)]
pub struct VillagePlan {
    pub name: String,
    pub x: f64,
    pub y: f64,
    pub radius: f64,
    pub target: usize,
}

#[derive(Debug, Clone)]
pub enum DistrictArea {
    Urban(Region),
    Rural(Vec<VillagePlan>),
}

#[derive(Debug, Clone)]
pub struct DistrictPlan {
    /// "XT1", "XT2", ...
    pub code: String,
    pub town: usize,
    pub lad: usize,
    pub target: usize,
    pub area: DistrictArea,
    /// Price in January 2015 (index level 100) of a 90 m2 semi-detached house.
    pub base_price: f64,
}

#[derive(Debug, Clone)]
pub struct TownPlan {
    pub name: String,
    pub x: f64,
    pub y: f64,
    pub radius: f64,
}

#[derive(Debug, Clone)]
pub struct LadPlan {
    pub code: &'static str,
    pub name: &'static str,
    pub rect: RectE8,
    /// The rectangle's centre in British National Grid metres.
    pub centre: (f64, f64),
}

/// Everything decided before the first address is generated.
#[derive(Debug, Clone)]
pub struct Plan {
    pub seed: u64,
    /// BNG rectangle the world was laid out in: (x0, y0, x1, y1).
    pub bng: (f64, f64, f64, f64),
    pub lads: Vec<LadPlan>,
    pub towns: Vec<TownPlan>,
    pub districts: Vec<DistrictPlan>,
}

fn geo_err(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("terrace_geo could not convert {what}"),
    )
}

/// Address margin inside an authority, in degrees (about 20 m).
const MARGIN_LON: f64 = 0.0003;
const MARGIN_LAT: f64 = 0.0002;

impl Plan {
    pub fn new(cfg: &Config) -> io::Result<Plan> {
        let n = cfg.addresses;
        if n > MAX_ADDRESSES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "at most {MAX_ADDRESSES} addresses fit the XT postcode scheme, asked for {n}"
                ),
            ));
        }
        let mut rng = Rng::derive(cfg.seed, "plan", 0);
        // The world grows slowly with the register, so a million addresses stay inland.
        let scale = (n as f64 / 6000.0).sqrt().sqrt().max(1.0);
        let (w, h) = (12_000.0 * scale, 8_000.0 * scale);
        let (x0, y0, x1, y1) = (
            CENTRE_E - w / 2.0,
            CENTRE_N - h / 2.0,
            CENTRE_E + w / 2.0,
            CENTRE_N + h / 2.0,
        );
        let sw = lonlat(x0, y0).ok_or_else(|| geo_err("the south-west corner"))?;
        let nw = lonlat(x0, y1).ok_or_else(|| geo_err("the north-west corner"))?;
        let se = lonlat(x1, y0).ok_or_else(|| geo_err("the south-east corner"))?;
        let ne = lonlat(x1, y1).ok_or_else(|| geo_err("the north-east corner"))?;
        // The largest lon/lat rectangle inside the BNG rectangle, snapped to the edge grid.
        let area = RectE8 {
            lon_min: snap_edge(sw.0.max(nw.0)) + 10,
            lon_max: snap_edge(se.0.min(ne.0)) - 10,
            lat_min: snap_edge(sw.1.max(se.1)) + 10,
            lat_max: snap_edge(nw.1.min(ne.1)) - 10,
        };
        let split = snap_edge((e8(area.lon_min) + e8(area.lon_max)) / 2.0);
        let mut lads = Vec::new();
        for (i, rect) in [
            RectE8 {
                lon_max: split,
                ..area
            },
            RectE8 {
                lon_min: split,
                ..area
            },
        ]
        .into_iter()
        .enumerate()
        {
            let (lon, lat) = (
                (e8(rect.lon_min) + e8(rect.lon_max)) / 2.0,
                (e8(rect.lat_min) + e8(rect.lat_max)) / 2.0,
            );
            let centre = terrace_geo::bng_from_wgs84(lon, lat)
                .ok_or_else(|| geo_err("an authority centre"))?;
            lads.push(LadPlan {
                code: names::LADS[i].0,
                name: names::LADS[i].1,
                rect,
                centre,
            });
        }

        // Districts of roughly `per_district` addresses; a town is 3 urban districts and 1 rural.
        let per_district = n.div_ceil(90).max(400);
        let n_towns = ((n as f64 / (4 * per_district) as f64).round() as usize).clamp(2, 24);
        let weights: Vec<f64> = (0..n_towns).map(|_| rng.range_f64(0.7, 1.3)).collect();
        let town_totals = split_total(n, &weights);

        // Towns on a jittered grid, west to east so the first town (Tamberley) is in the west.
        let cols = ((n_towns as f64 * 1.5).sqrt().ceil() as usize).max(2);
        let rows = n_towns.div_ceil(cols);
        let (cw, ch) = (w / cols as f64, h / rows as f64);
        let n_villages: Vec<usize> = town_totals
            .iter()
            .map(|t| ((t / 5) / 150).clamp(2, 6))
            .collect();
        let mut place_names =
            names::place_names(&mut rng, n_towns + n_villages.iter().sum::<usize>()).into_iter();
        let mut towns = Vec::new();
        let mut districts = Vec::new();
        for (t, &total) in town_totals.iter().enumerate() {
            let (col, row) = (t % cols, t / cols);
            let tx = x0 + cw * (col as f64 + 0.5) + rng.range_f64(-0.12, 0.12) * cw;
            let ty = y1 - ch * (row as f64 + 0.5) + rng.range_f64(-0.12, 0.12) * ch;
            let (tlon, _) = lonlat(tx, ty).ok_or_else(|| geo_err("a town centre"))?;
            let lad = usize::from(tlon >= e8(split));
            let rural = total / 5;
            let urban = total - rural;
            // About 3,000 addresses per square kilometre in town.
            let radius = (urban as f64 / 0.003 / std::f64::consts::PI)
                .sqrt()
                .max(150.0);
            let name = place_names.next().unwrap_or_else(|| format!("Town {t}"));
            towns.push(TownPlan {
                name,
                x: tx,
                y: ty,
                radius,
            });
            let town_factor = rng.range_f64(0.85, 1.2);
            let urban_split = split_total(urban, &[1.0, 1.0, 1.0]);
            for (region, target) in [Region::Core, Region::North, Region::South]
                .into_iter()
                .zip(urban_split)
            {
                let base = match region {
                    Region::Core => rng.range_f64(165_000.0, 215_000.0),
                    Region::North | Region::South => rng.range_f64(180_000.0, 260_000.0),
                } * town_factor;
                districts.push(DistrictPlan {
                    code: String::new(),
                    town: t,
                    lad,
                    target,
                    area: DistrictArea::Urban(region),
                    base_price: (base / 100.0).round() * 100.0,
                });
            }
            let vt = split_total(rural, &vec![1.0; n_villages[t]]);
            let mut villages = Vec::new();
            for target in vt {
                let vname = place_names
                    .next()
                    .unwrap_or_else(|| format!("Village {}", villages.len()));
                let vradius = (target as f64 / 0.0015 / std::f64::consts::PI)
                    .sqrt()
                    .max(80.0);
                let (vx, vy) = place_village(&mut rng, &towns[t], &lads[lad].rect, radius);
                villages.push(VillagePlan {
                    name: vname,
                    x: vx,
                    y: vy,
                    radius: vradius,
                    target,
                });
            }
            let base = rng.range_f64(200_000.0, 300_000.0) * town_factor;
            districts.push(DistrictPlan {
                code: String::new(),
                town: t,
                lad,
                target: rural,
                area: DistrictArea::Rural(villages),
                base_price: (base / 100.0).round() * 100.0,
            });
        }
        for (i, d) in districts.iter_mut().enumerate() {
            d.code = format!("{POSTCODE_AREA}{}", i + 1);
        }
        Ok(Plan {
            seed: cfg.seed,
            bng: (x0, y0, x1, y1),
            lads,
            towns,
            districts,
        })
    }
}

fn place_village(rng: &mut Rng, town: &TownPlan, lad: &RectE8, town_radius: f64) -> (f64, f64) {
    for attempt in 0..60 {
        let (ux, uy) = rng.unit_vector();
        let shrink = if attempt > 30 { 0.5 } else { 1.0 };
        let d = (town_radius * 1.6 + rng.range_f64(700.0, 1_900.0)) * shrink;
        let (x, y) = (town.x + ux * d, town.y + uy * d);
        if let Some((lon, lat)) = lonlat(x, y)
            && lad.contains_inset(lon, lat, 0.004, 0.003)
        {
            return (x, y);
        }
    }
    (town.x, town.y + town_radius * 1.2)
}

/// Splits `total` in proportion to `weights`, exactly (largest remainders go first).
pub fn split_total(total: usize, weights: &[f64]) -> Vec<usize> {
    let sum: f64 = weights.iter().sum();
    let raw: Vec<f64> = weights.iter().map(|w| total as f64 * w / sum).collect();
    let mut out: Vec<usize> = raw.iter().map(|r| r.floor() as usize).collect();
    let mut rest = total - out.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| {
        let (fa, fb) = (raw[a] - raw[a].floor(), raw[b] - raw[b].floor());
        fb.partial_cmp(&fa)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    for i in order {
        if rest == 0 {
            break;
        }
        out[i] += 1;
        rest -= 1;
    }
    out
}

/// A postcode as the register uses it, with what Code-Point and the ONSPD need.
#[derive(Debug, Clone)]
pub struct PostcodeInfo {
    pub postcode: String,
    pub lad: usize,
    pub sum_x: f64,
    pub sum_y: f64,
    pub count: usize,
    /// `YYYYMM`
    pub dointr: String,
    /// `YYYYMM` for a terminated postcode (no addresses, ONSPD only).
    pub doterm: Option<String>,
}

impl PostcodeInfo {
    pub fn centroid(&self) -> (f64, f64) {
        (
            self.sum_x / self.count.max(1) as f64,
            self.sum_y / self.count.max(1) as f64,
        )
    }
}

pub struct DistrictOut {
    pub items: Vec<Item>,
    pub postcodes: Vec<PostcodeInfo>,
}

/// Generates the world district by district, handing out UPRNs in order.
pub struct Generator {
    pub plan: Plan,
    next_uprn: u64,
    scopes: BTreeMap<String, BTreeSet<String>>,
    end_year: i32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StreetKind {
    HighStreet,
    Terrace,
    Semis,
    Detached,
    FlatsRoad,
    Estate,
    VillageLane,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Numbering {
    /// Odd numbers on one side, even on the other.
    OddEven,
    /// 1, 2, 3, ... alternating sides (closes and estates).
    Sequential,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NumberKind {
    One,
    /// Occupies two numbers: "63-65".
    Range,
    /// The previous number with suffix A: "12A".
    Infill,
    /// No number: the house or block name is the PAO.
    Named,
}

#[derive(Debug, Clone)]
enum Content {
    House {
        ptype: PropertyType,
        form: BuiltForm,
        year: i32,
        bungalow: bool,
    },
    /// A house split into flats: PP parent plus flats.
    Converted {
        flats: u32,
        year: i32,
        form: BuiltForm,
        by_floor: bool,
    },
    /// A purpose-built block: PP parent plus flats or apartments.
    Block {
        flats: u32,
        year: i32,
        apartment: bool,
        per_floor: u32,
    },
    /// A commercial unit; with flats above it becomes a PP parent with children.
    Commercial {
        class: &'static str,
        org: String,
        flats_above: u32,
        year: i32,
    },
}

#[derive(Debug, Clone)]
struct Plot {
    width: f64,
    number: NumberKind,
    name: Option<String>,
    content: Content,
    new_estate: bool,
    /// First plot of a pair or run: the layout may switch street side here, not within a group.
    group_start: bool,
}

/// Rows that must stay together in one postcode: a house, or a building with its flats.
struct Unit {
    rows: Vec<AddressRecord>,
    year: i32,
    street: usize,
}

struct Place {
    x: f64,
    y: f64,
    radius: f64,
    region: Option<Region>,
    locality: Option<String>,
    scope: String,
}

impl Generator {
    pub fn new(cfg: &Config) -> io::Result<Generator> {
        Ok(Generator {
            plan: Plan::new(cfg)?,
            next_uprn: UPRN_BASE,
            scopes: BTreeMap::new(),
            end_year: chrono::Datelike::year(&cfg.end_date),
        })
    }

    pub fn district_count(&self) -> usize {
        self.plan.districts.len()
    }

    /// Generates district `d`. Districts must be generated in order (UPRNs are sequential).
    pub fn district(&mut self, d: usize) -> DistrictOut {
        let plan = self.plan.districts[d].clone();
        let town = self.plan.towns[plan.town].clone();
        let lad_rect = self.plan.lads[plan.lad].rect;
        let lad_code = self.plan.lads[plan.lad].code;
        let mut rng = Rng::derive(self.plan.seed, "district", d as u64);
        let town_upper = upper(&town.name);

        // The places this district's streets go in, each with its share of the target.
        let places: Vec<(Place, usize)> = match &plan.area {
            DistrictArea::Urban(region) => vec![(
                Place {
                    x: town.x,
                    y: town.y,
                    radius: town.radius,
                    region: Some(*region),
                    locality: None,
                    scope: town.name.clone(),
                },
                plan.target,
            )],
            DistrictArea::Rural(villages) => villages
                .iter()
                .map(|v| {
                    (
                        Place {
                            x: v.x,
                            y: v.y,
                            radius: v.radius,
                            region: None,
                            locality: Some(upper(&v.name)),
                            scope: v.name.clone(),
                        },
                        v.target,
                    )
                })
                .collect(),
        };

        let mut units: Vec<Unit> = Vec::new();
        let mut street_count = 0usize;
        for (place, target) in &places {
            let mut made = 0usize;
            let mut first = true;
            let mut barren = 0usize;
            let mut radius = place.radius;
            let mut centre = (place.x, place.y);
            let lad_centre = self.plan.lads[plan.lad].centre;
            while made < *target {
                let kind = choose_kind(&mut rng, place.region, first);
                let used = self.scopes.entry(place.scope.clone()).or_default();
                let name = if first {
                    first_street_name(&mut rng, place.region, used)
                } else {
                    None
                };
                let name =
                    name.unwrap_or_else(|| names::street_name(&mut rng, suffixes(kind), used));
                first = false;
                let plots = plan_street(&mut rng, kind, self.end_year);
                let (sx, sy) = sample_point(&mut rng, centre.0, centre.1, radius, place.region);
                let dir = rng.unit_vector();
                let street = StreetCtx {
                    street: upper(&name),
                    locality: place.locality.clone(),
                    town: town_upper.clone(),
                    lad_code,
                    lad_rect,
                    start: (sx, sy),
                    dir,
                    numbering: numbering(kind),
                    index: street_count,
                };
                let new_units = layout_street(&mut rng, &street, plots);
                street_count += 1;
                if new_units.is_empty() {
                    barren += 1;
                    if barren > 20 {
                        // Mostly outside the authority: shrink the place, then move it inwards.
                        if radius > 100.0 {
                            radius *= 0.7;
                        } else {
                            centre = (
                                (centre.0 + lad_centre.0) / 2.0,
                                (centre.1 + lad_centre.1) / 2.0,
                            );
                            radius = place.radius.min(300.0);
                        }
                        barren = 0;
                    }
                    continue;
                }
                for u in new_units {
                    let take = (target - made).min(u.rows.len());
                    if take == 0 {
                        break;
                    }
                    made += take;
                    let mut u = u;
                    u.rows.truncate(take);
                    units.push(u);
                }
            }
        }
        self.finish_district(d, &plan, units, &mut rng)
    }

    /// Postcodes, UPRNs and orphan UPRNs for a district's units.
    fn finish_district(
        &mut self,
        d: usize,
        plan: &DistrictPlan,
        units: Vec<Unit>,
        rng: &mut Rng,
    ) -> DistrictOut {
        // Group units into postcodes of 10-30 addresses, preferring to start one per street.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut size = 0usize;
        let mut goal = rng.range_usize(12, 26);
        let mut last_street = usize::MAX;
        for (i, u) in units.iter().enumerate() {
            let n = u.rows.len();
            let new_street = u.street != last_street;
            last_street = u.street;
            let start_new = groups.is_empty()
                || (size >= 10
                    && (size + n > 30 || size >= goal || (new_street && rng.chance(0.6))));
            if start_new {
                groups.push(Vec::new());
                size = 0;
                goal = rng.range_usize(12, 26);
            }
            if let Some(g) = groups.last_mut() {
                g.push(i);
            }
            size += n;
        }
        // A short last postcode joins the one before when it fits.
        if groups.len() >= 2 {
            let count = |g: &Vec<usize>| g.iter().map(|&i| units[i].rows.len()).sum::<usize>();
            let last = groups.len() - 1;
            if count(&groups[last]) < 10 && count(&groups[last]) + count(&groups[last - 1]) <= 36 {
                let tail = groups.pop().unwrap_or_default();
                if let Some(g) = groups.last_mut() {
                    g.extend(tail);
                }
            }
        }

        // Unit codes: sector digit 1-9, then two letters, allocated in order with small gaps.
        // Every postcode but a district's last holds at least 10 addresses, so this bounds the count.
        let est = plan.target / 10 + 3;
        let cap = est.div_ceil(9).clamp(30, 380);
        let mut sector = 1u32;
        let mut index = rng.range_usize(0, 2);
        let mut in_sector = 0usize;
        let terminate_at = if d < 2 || rng.chance(0.15) {
            Some(groups.len() / 2)
        } else {
            None
        };
        let district_code = plan.code.clone();
        let mut postcodes: Vec<PostcodeInfo> = Vec::new();
        let mut codes: Vec<String> = Vec::with_capacity(groups.len());
        let mut next_code = |rng: &mut Rng| -> String {
            if in_sector >= cap || index >= 398 {
                sector = (sector + 1).min(9);
                index = rng.range_usize(0, 2);
                in_sector = 0;
            }
            let code = format!(
                "{district_code} {sector}{}{}",
                UNIT_LETTERS[index / 20] as char,
                UNIT_LETTERS[index % 20] as char
            );
            in_sector += 1;
            index += 1;
            if rng.chance(0.1) && index + (cap - in_sector.min(cap)) < 395 {
                index += 1;
            }
            code
        };
        let mut terminated: Option<(String, usize)> = None;
        for gi in 0..groups.len() {
            codes.push(next_code(rng));
            if Some(gi) == terminate_at {
                terminated = Some((next_code(rng), gi));
            }
        }

        let mut items = Vec::new();
        for (g, code) in groups.iter().zip(&codes) {
            let mut info = PostcodeInfo {
                postcode: code.clone(),
                lad: plan.lad,
                sum_x: 0.0,
                sum_y: 0.0,
                count: 0,
                dointr: String::new(),
                doterm: None,
            };
            let mut year = i32::MAX;
            for &ui in g {
                let unit = &units[ui];
                year = year.min(unit.year);
                if rng.chance(1.0 / 18.0) {
                    // A UPRN with coordinates and no address, near the unit.
                    let r0 = &unit.rows[0];
                    let (x, y) = (
                        round2(r0.x + rng.range_f64(-40.0, 40.0)),
                        round2(r0.y + rng.range_f64(-40.0, 40.0)),
                    );
                    if let Some((lon, lat)) = lonlat(x, y) {
                        items.push(Item::Orphan(UprnPoint {
                            uprn: self.take_uprn(),
                            x,
                            y,
                            lat,
                            lon,
                        }));
                    }
                }
                let mut parent = None;
                for (k, row) in unit.rows.iter().enumerate() {
                    let mut rec = row.clone();
                    rec.uprn = self.take_uprn();
                    rec.postcode = code.clone();
                    if k == 0 && rec.class == "PP" {
                        parent = Some(rec.uprn);
                    } else {
                        rec.parent_uprn = parent;
                    }
                    info.sum_x += rec.x;
                    info.sum_y += rec.y;
                    info.count += 1;
                    items.push(Item::Address(rec));
                }
            }
            info.dointr = if year <= 1980 {
                "198001".to_string()
            } else {
                format!("{year}{:02}", rng.range_i64(1, 12))
            };
            postcodes.push(info);
        }
        if let Some((code, gi)) = terminated
            && let Some(near) = postcodes.get(gi)
        {
            let (cx, cy) = near.centroid();
            let term_year = rng.range_i64(2001, 2020);
            postcodes.push(PostcodeInfo {
                postcode: code,
                lad: plan.lad,
                sum_x: cx + 30.0,
                sum_y: cy + 25.0,
                count: 1,
                dointr: "198001".to_string(),
                doterm: Some(format!("{term_year}{:02}", rng.range_i64(1, 12))),
            });
        }
        DistrictOut { items, postcodes }
    }

    fn take_uprn(&mut self) -> u64 {
        let u = self.next_uprn;
        self.next_uprn += 1;
        u
    }
}

fn choose_kind(rng: &mut Rng, region: Option<Region>, first: bool) -> StreetKind {
    use StreetKind::*;
    let table: &[(StreetKind, f64)] = match region {
        Some(Region::Core) if first => return HighStreet,
        Some(Region::Core) => &[
            (Terrace, 40.0),
            (FlatsRoad, 18.0),
            (Semis, 14.0),
            (HighStreet, 6.0),
            (Estate, 10.0),
            (Detached, 4.0),
        ],
        Some(Region::North | Region::South) => &[
            (Semis, 32.0),
            (Detached, 18.0),
            (Terrace, 16.0),
            (Estate, 22.0),
            (FlatsRoad, 10.0),
        ],
        None => &[
            (VillageLane, 58.0),
            (Terrace, 12.0),
            (Semis, 14.0),
            (Estate, 12.0),
            (Detached, 4.0),
        ],
    };
    let w: Vec<f64> = table.iter().map(|t| t.1).collect();
    table[rng.weighted(&w)].0
}

fn first_street_name(
    rng: &mut Rng,
    region: Option<Region>,
    used: &mut BTreeSet<String>,
) -> Option<String> {
    let candidates: &[&str] = match region {
        Some(Region::Core) => &["High Street", "Fore Street", "Market Street"],
        Some(_) => return None,
        None => &[
            "Fore Street",
            "Church Lane",
            "The Street",
            "Village Road",
            "High Street",
        ],
    };
    let name = rng.pick(candidates).to_string();
    used.insert(name.clone()).then_some(name)
}

fn suffixes(kind: StreetKind) -> &'static [&'static str] {
    match kind {
        StreetKind::HighStreet | StreetKind::Terrace => names::SUFFIX_TERRACE,
        StreetKind::Semis => names::SUFFIX_SEMI,
        StreetKind::Detached => names::SUFFIX_DETACHED,
        StreetKind::FlatsRoad => names::SUFFIX_FLATS,
        StreetKind::Estate => names::SUFFIX_ESTATE,
        StreetKind::VillageLane => names::SUFFIX_VILLAGE,
    }
}

fn numbering(kind: StreetKind) -> Numbering {
    match kind {
        StreetKind::Estate | StreetKind::VillageLane => Numbering::Sequential,
        StreetKind::HighStreet
        | StreetKind::Terrace
        | StreetKind::Semis
        | StreetKind::Detached
        | StreetKind::FlatsRoad => Numbering::OddEven,
    }
}

fn sample_point(rng: &mut Rng, cx: f64, cy: f64, r: f64, region: Option<Region>) -> (f64, f64) {
    for _ in 0..1000 {
        let (u, v) = rng.in_unit_disk();
        let r2 = u * u + v * v;
        let ok = match region {
            None => true,
            Some(Region::Core) => r2 < 0.25,
            Some(Region::North) => r2 >= 0.25 && v >= 0.0,
            Some(Region::South) => r2 >= 0.25 && v < 0.0,
        };
        if ok {
            return (cx + u * r, cy + v * r);
        }
    }
    (cx, cy)
}

fn floor_area(rng: &mut Rng, ptype: PropertyType, bungalow: bool, year: i32) -> f64 {
    let (mean, sd, lo, hi) = match ptype {
        PropertyType::Detached if bungalow => (95.0, 20.0, 55.0, 180.0),
        PropertyType::Detached => (140.0, 35.0, 75.0, 360.0),
        PropertyType::SemiDetached => (92.0, 18.0, 55.0, 190.0),
        PropertyType::Terraced if year >= 1990 => (76.0, 12.0, 45.0, 130.0),
        PropertyType::Terraced => (82.0, 18.0, 45.0, 170.0),
        PropertyType::Flat => (58.0, 15.0, 26.0, 140.0),
    };
    let a: f64 = mean + sd * rng.normal();
    (a.clamp(lo, hi) * 10.0).round() / 10.0
}

fn rooms_for(area: f64, rng: &mut Rng) -> u8 {
    ((area / 22.0).round() as i64 + rng.range_i64(-1, 1)).clamp(1, 10) as u8
}

/// The sequence of plots of one street, before numbering and positions.
fn plan_street(rng: &mut Rng, kind: StreetKind, end_year: i32) -> Vec<Plot> {
    let mut plots: Vec<Plot> = Vec::new();
    let house = |ptype, form, year, width, bungalow, group_start| Plot {
        width,
        number: NumberKind::One,
        name: None,
        content: Content::House {
            ptype,
            form,
            year,
            bungalow,
        },
        new_estate: false,
        group_start,
    };
    let single = |width, number, name, content| Plot {
        width,
        number,
        name,
        content,
        new_estate: false,
        group_start: true,
    };
    let mut block_names: BTreeSet<String> = BTreeSet::new();
    match kind {
        StreetKind::Terrace => {
            let year = rng.range_i64(1860, 1914) as i32;
            let total = rng.range_usize(16, 70);
            while plots.len() < total {
                let run = rng.range_usize(4, 10);
                for k in 0..run {
                    let form = if k == 0 || k + 1 == run {
                        BuiltForm::EndTerrace
                    } else {
                        BuiltForm::MidTerrace
                    };
                    let y = year + rng.range_i64(-2, 2) as i32;
                    if rng.chance(0.08) {
                        let flats = rng.range_usize(2, 3) as u32;
                        let by_floor = rng.chance(0.5);
                        let mut p = single(
                            5.5,
                            NumberKind::One,
                            None,
                            Content::Converted {
                                flats,
                                year: y,
                                form,
                                by_floor,
                            },
                        );
                        p.group_start = k == 0;
                        plots.push(p);
                    } else {
                        plots.push(house(PropertyType::Terraced, form, y, 5.5, false, k == 0));
                    }
                    if rng.chance(0.03) {
                        let mut p = house(
                            PropertyType::Terraced,
                            BuiltForm::MidTerrace,
                            y,
                            5.0,
                            false,
                            false,
                        );
                        p.number = NumberKind::Infill;
                        plots.push(p);
                    }
                }
            }
        }
        StreetKind::Semis => {
            let year = rng.range_i64(1925, 1975) as i32;
            let pairs = rng.range_usize(8, 26);
            for _ in 0..pairs {
                if rng.chance(0.06) {
                    let bungalow = rng.chance(0.3);
                    plots.push(house(
                        PropertyType::Detached,
                        BuiltForm::Detached,
                        year,
                        12.0,
                        bungalow,
                        true,
                    ));
                    continue;
                }
                for k in 0..2 {
                    plots.push(house(
                        PropertyType::SemiDetached,
                        BuiltForm::SemiDetached,
                        year,
                        8.0,
                        false,
                        k == 0,
                    ));
                }
            }
        }
        StreetKind::Detached => {
            let year = rng.range_i64(1930, 1998) as i32;
            let total = rng.range_usize(8, 30);
            for _ in 0..total {
                let y = year + rng.range_i64(-3, 3) as i32;
                let bungalow = rng.chance(0.15);
                let mut p = house(
                    PropertyType::Detached,
                    BuiltForm::Detached,
                    y,
                    16.0,
                    bungalow,
                    true,
                );
                if rng.chance(0.08)
                    && let Some(n) = pick_house_name(rng, &plots)
                {
                    p.number = NumberKind::Named;
                    p.name = Some(n);
                }
                plots.push(p);
            }
        }
        StreetKind::HighStreet => {
            let total = rng.range_usize(18, 48);
            for _ in 0..total {
                let year = rng.range_i64(1780, 1910) as i32;
                let roll = rng.f64();
                let p = if roll < 0.45 {
                    let org = names::shop_name(rng);
                    let content = Content::Commercial {
                        class: "CR01",
                        org,
                        flats_above: 0,
                        year,
                    };
                    if rng.chance(0.12) {
                        single(12.0, NumberKind::Range, None, content)
                    } else {
                        single(7.0, NumberKind::One, None, content)
                    }
                } else if roll < 0.6 {
                    let org = names::office_name(rng);
                    single(
                        7.0,
                        NumberKind::One,
                        None,
                        Content::Commercial {
                            class: "CO01",
                            org,
                            flats_above: 0,
                            year,
                        },
                    )
                } else if roll < 0.8 {
                    let org = names::shop_name(rng);
                    let flats_above = rng.range_usize(1, 3) as u32;
                    single(
                        7.0,
                        NumberKind::One,
                        None,
                        Content::Commercial {
                            class: "CR01",
                            org,
                            flats_above,
                            year,
                        },
                    )
                } else if roll < 0.92 {
                    house(
                        PropertyType::Terraced,
                        BuiltForm::MidTerrace,
                        year,
                        6.0,
                        false,
                        true,
                    )
                } else {
                    let flats = rng.range_usize(4, 12) as u32;
                    let year = rng.range_i64(1960, 2015) as i32;
                    single(
                        18.0,
                        NumberKind::One,
                        None,
                        Content::Block {
                            flats,
                            year,
                            apartment: false,
                            per_floor: 2,
                        },
                    )
                };
                plots.push(p);
            }
        }
        StreetKind::FlatsRoad => {
            let total = rng.range_usize(6, 18);
            for _ in 0..total {
                if rng.chance(0.45) {
                    let year = rng.range_i64(1955, i64::from(end_year.clamp(1956, 2024))) as i32;
                    let flats = rng.range_usize(6, 24) as u32;
                    let name = if rng.chance(0.55) {
                        names::block_name(rng, &mut block_names)
                    } else {
                        None
                    };
                    let apartment = name.is_some() && (year >= 1995 || rng.chance(0.3));
                    let per_floor = rng.range_usize(2, 6) as u32;
                    let number = if name.is_some() {
                        NumberKind::Named
                    } else {
                        NumberKind::One
                    };
                    plots.push(single(
                        30.0,
                        number,
                        name,
                        Content::Block {
                            flats,
                            year,
                            apartment,
                            per_floor,
                        },
                    ));
                } else {
                    let year = rng.range_i64(1900, 1970) as i32;
                    for k in 0..2 {
                        plots.push(house(
                            PropertyType::SemiDetached,
                            BuiltForm::SemiDetached,
                            year,
                            8.0,
                            false,
                            k == 0,
                        ));
                    }
                }
            }
        }
        StreetKind::Estate => {
            let year = rng.range_i64(1996, i64::from(end_year.max(1997))) as i32;
            let total = rng.range_usize(16, 70);
            while plots.len() < total {
                let roll = rng.f64();
                let mut group = Vec::new();
                if roll < 0.3 {
                    group.push(house(
                        PropertyType::Detached,
                        BuiltForm::Detached,
                        year,
                        14.0,
                        false,
                        true,
                    ));
                } else if roll < 0.65 {
                    for k in 0..2 {
                        group.push(house(
                            PropertyType::SemiDetached,
                            BuiltForm::SemiDetached,
                            year,
                            8.0,
                            false,
                            k == 0,
                        ));
                    }
                } else if roll < 0.93 {
                    let run = rng.range_usize(3, 5);
                    for k in 0..run {
                        let form = if k == 0 || k + 1 == run {
                            BuiltForm::EndTerrace
                        } else {
                            BuiltForm::MidTerrace
                        };
                        group.push(house(
                            PropertyType::Terraced,
                            form,
                            year,
                            5.5,
                            false,
                            k == 0,
                        ));
                    }
                } else {
                    let name = names::block_name(rng, &mut block_names);
                    let number = if name.is_some() {
                        NumberKind::Named
                    } else {
                        NumberKind::One
                    };
                    let flats = rng.range_usize(6, 18) as u32;
                    let apartment = name.is_some();
                    let per_floor = rng.range_usize(2, 4) as u32;
                    group.push(single(
                        28.0,
                        number,
                        name,
                        Content::Block {
                            flats,
                            year,
                            apartment,
                            per_floor,
                        },
                    ));
                }
                for mut p in group {
                    p.new_estate = true;
                    plots.push(p);
                }
            }
        }
        StreetKind::VillageLane => {
            let total = rng.range_usize(6, 24);
            while plots.len() < total {
                let year = if rng.chance(0.45) {
                    rng.range_i64(1650, 1899) as i32
                } else {
                    rng.range_i64(1900, 1995) as i32
                };
                let roll = rng.f64();
                if roll < 0.6 {
                    let bungalow = year >= 1950 && rng.chance(0.3);
                    let mut p = house(
                        PropertyType::Detached,
                        BuiltForm::Detached,
                        year,
                        18.0,
                        bungalow,
                        true,
                    );
                    if rng.chance(0.75)
                        && let Some(n) = pick_house_name(rng, &plots)
                    {
                        p.number = NumberKind::Named;
                        p.name = Some(n);
                    }
                    plots.push(p);
                } else if roll < 0.82 {
                    let run = rng.range_usize(3, 6);
                    for k in 0..run {
                        let form = if k == 0 || k + 1 == run {
                            BuiltForm::EndTerrace
                        } else {
                            BuiltForm::MidTerrace
                        };
                        plots.push(house(
                            PropertyType::Terraced,
                            form,
                            year,
                            5.5,
                            false,
                            k == 0,
                        ));
                    }
                } else {
                    for k in 0..2 {
                        plots.push(house(
                            PropertyType::SemiDetached,
                            BuiltForm::SemiDetached,
                            year,
                            9.0,
                            false,
                            k == 0,
                        ));
                    }
                }
            }
        }
    }
    plots
}

fn pick_house_name(rng: &mut Rng, plots: &[Plot]) -> Option<String> {
    for _ in 0..20 {
        let n = rng.pick(names::HOUSE_NAMES);
        if !plots.iter().any(|p| p.name.as_deref() == Some(*n)) {
            return Some(n.to_string());
        }
    }
    None
}

struct StreetCtx {
    street: String,
    locality: Option<String>,
    town: String,
    lad_code: &'static str,
    lad_rect: RectE8,
    start: (f64, f64),
    dir: (f64, f64),
    numbering: Numbering,
    index: usize,
}

/// Numbers, positions and rows for a street's plots; plots outside the authority are dropped.
fn layout_street(rng: &mut Rng, s: &StreetCtx, plots: Vec<Plot>) -> Vec<Unit> {
    let skip13 = rng.chance(0.2);
    let (dx, dy) = s.dir;
    let (nx, ny) = (-dy, dx);
    let mut cursor = [0.0f64; 2];
    let mut next_number = [1u32, 2u32];
    let mut last_number: [Option<u32>; 2] = [None, None];
    let mut seq_next = 1u32;
    let mut side = 0usize;
    let mut units = Vec::new();
    for plot in plots {
        // A pair or run stays on one side; a new group goes on the shorter side.
        if plot.group_start {
            side = usize::from(cursor[0] > cursor[1]);
        }
        let (mut start, mut end, mut suffix) = (None, None, None);
        let step = match s.numbering {
            Numbering::OddEven => 2,
            Numbering::Sequential => 1,
        };
        let take = |n: &mut u32| -> u32 {
            if skip13 && *n == 13 {
                *n += step;
            }
            let v = *n;
            *n += step;
            v
        };
        let counter = match s.numbering {
            Numbering::OddEven => &mut next_number[side],
            Numbering::Sequential => &mut seq_next,
        };
        match plot.number {
            NumberKind::One => start = Some(take(counter)),
            NumberKind::Range => {
                start = Some(take(counter));
                end = Some(take(counter));
            }
            NumberKind::Infill => match last_number[side] {
                Some(n) => {
                    start = Some(n);
                    suffix = Some('A');
                }
                None => start = Some(take(counter)),
            },
            NumberKind::Named => {}
        }
        if plot.number != NumberKind::Infill
            && let Some(n) = end.or(start)
        {
            last_number[side] = Some(n);
        }
        let along = cursor[side] + plot.width / 2.0;
        cursor[side] += plot.width;
        let sign = if side == 0 { 1.0 } else { -1.0 };
        let setback = 7.0 + plot.width * 0.3;
        let x = round2(s.start.0 + dx * along + nx * sign * setback + rng.range_f64(-0.8, 0.8));
        let y = round2(s.start.1 + dy * along + ny * sign * setback + rng.range_f64(-0.8, 0.8));
        let Some((lon, lat)) = lonlat(x, y) else {
            continue;
        };
        if !s.lad_rect.contains_inset(lon, lat, MARGIN_LON, MARGIN_LAT) {
            continue;
        }
        let base = AddressRecord {
            uprn: 0,
            parent_uprn: None,
            class: "PP",
            sao_start_number: None,
            sao_start_suffix: None,
            sao_end_number: None,
            sao_end_suffix: None,
            sao_text: None,
            pao_start_number: start,
            pao_start_suffix: suffix,
            pao_end_number: end,
            pao_end_suffix: None,
            pao_text: plot.name.as_deref().map(upper),
            organisation: None,
            street: s.street.clone(),
            locality: s.locality.clone(),
            town: s.town.clone(),
            postcode: String::new(),
            x,
            y,
            lat,
            lon,
            lad_code: s.lad_code,
            dwelling: None,
        };
        units.push(build_unit(rng, base, &plot, s.index));
    }
    units
}

fn build_unit(rng: &mut Rng, base: AddressRecord, plot: &Plot, street: usize) -> Unit {
    let flat =
        |rng: &mut Rng, year: i32, form: BuiltForm, level: i32, top: bool, new_estate: bool| {
            let area = floor_area(rng, PropertyType::Flat, false, year);
            Dwelling {
                property_type: PropertyType::Flat,
                built_form: form,
                floor_area_m2: area,
                habitable_rooms: rooms_for(area, rng),
                built_year: year,
                new_estate,
                floor_level: Some(level),
                top_floor: top,
                bungalow: false,
            }
        };
    match &plot.content {
        Content::House {
            ptype,
            form,
            year,
            bungalow,
        } => {
            let area = floor_area(rng, *ptype, *bungalow, *year);
            let mut rec = base;
            rec.class = ptype.class();
            rec.dwelling = Some(Dwelling {
                property_type: *ptype,
                built_form: *form,
                floor_area_m2: area,
                habitable_rooms: rooms_for(area, rng),
                built_year: *year,
                new_estate: plot.new_estate && *year >= 1995,
                floor_level: None,
                top_floor: false,
                bungalow: *bungalow,
            });
            Unit {
                rows: vec![rec],
                year: *year,
                street,
            }
        }
        Content::Converted {
            flats,
            year,
            form,
            by_floor,
        } => {
            let mut rows = vec![base.clone()];
            for i in 0..*flats {
                let mut rec = base.clone();
                rec.class = "RD06";
                if *by_floor {
                    rec.sao_text = Some(
                        ["GROUND FLOOR FLAT", "FIRST FLOOR FLAT", "SECOND FLOOR FLAT"][i as usize]
                            .into(),
                    );
                } else {
                    rec.sao_text = Some("FLAT".into());
                    rec.sao_start_number = Some(i + 1);
                }
                rec.dwelling = Some(flat(rng, *year, *form, i as i32, i + 1 == *flats, false));
                rows.push(rec);
            }
            Unit {
                rows,
                year: *year,
                street,
            }
        }
        Content::Block {
            flats,
            year,
            apartment,
            per_floor,
        } => {
            let mut rows = vec![base.clone()];
            let per_floor = (*per_floor).max(1);
            let top = (flats - 1) / per_floor;
            let form = if *flats > 8 {
                BuiltForm::Detached
            } else {
                BuiltForm::SemiDetached
            };
            for i in 0..*flats {
                let mut rec = base.clone();
                rec.class = "RD06";
                rec.sao_text = Some(if *apartment { "APARTMENT" } else { "FLAT" }.into());
                rec.sao_start_number = Some(i + 1);
                let level = i / per_floor;
                let form = if level == 0 || level == top {
                    form
                } else {
                    BuiltForm::MidTerrace
                };
                rec.dwelling = Some(flat(
                    rng,
                    *year,
                    form,
                    level as i32,
                    level == top,
                    plot.new_estate && *year >= 1995,
                ));
                rows.push(rec);
            }
            Unit {
                rows,
                year: *year,
                street,
            }
        }
        Content::Commercial {
            class,
            org,
            flats_above,
            year,
        } => {
            let mut shop = base.clone();
            shop.class = class;
            shop.organisation = Some(upper(org));
            if *flats_above == 0 {
                return Unit {
                    rows: vec![shop],
                    year: *year,
                    street,
                };
            }
            let mut rows = vec![base.clone()];
            shop.sao_text = Some("GROUND FLOOR".into());
            rows.push(shop);
            for i in 0..*flats_above {
                let mut rec = base.clone();
                rec.class = "RD06";
                rec.sao_text = Some("FLAT".into());
                rec.sao_start_number = Some(i + 1);
                let level = 1 + (i as i32) / 2;
                rec.dwelling = Some(flat(
                    rng,
                    *year,
                    BuiltForm::MidTerrace,
                    level,
                    i + 1 == *flats_above,
                    false,
                ));
                rows.push(rec);
            }
            Unit {
                rows,
                year: *year,
                street,
            }
        }
    }
}
