//! Synthetic UK property data in the real published file formats, for Terrace's tests and
//! benchmarks.
//!
//! [`generate`] writes a small synthetic area (two unitary authorities, a few towns and villages,
//! the `XT` postcode area) deterministically from a seed: an AddressBase Plus extract, OS Open
//! UPRN, Code-Point Open, ONSPD columns, LAD and LSOA boundaries, EPC certificates, Price Paid
//! (monthly/complete and report-builder formats) and the true price index the sales were drawn
//! from, plus `manifest.json`. [`register`] streams the addresses alone, for benchmarks.
//!
//! Nothing here is real: codes sit in unused ranges (authorities E06009901-2, LSOAs E01099xxx,
//! wards E05099xxx, UPRNs from 990000000001, postcode area XT).
//!
//! Architecture Invariant: output is a pure function of [`Config`]: the crate's own PRNG
//! (xoshiro256** seeded by SplitMix64), no hash-map iteration, no clock, and no platform `libm`
//! in anything that reaches a file. Lat/lon come from `terrace_geo`.

mod areas;
pub mod auctions;
pub mod costs;
mod energy;
mod epc;
mod gazetteer;
mod index;
pub mod land;
mod lha;
pub mod lidar;
mod listings;
mod names;
pub mod osm;
pub mod osm_pbf;
mod out;
mod ownership;
mod pipr;
mod planning;
mod ppd;
pub use ppd::commercial_level;
mod risk;
mod rng;
mod tenure;
mod world;

pub use index::TrueIndex;
pub use lha::{LOOKUP_FILE as BRMA_LOOKUP_FILE, LhaCases, RATES_FILE as LHA_RATES_FILE};
pub use listings::{LISTINGS_FILE, ListingCases};
pub use ownership::{CCOD_FILE, COMPANIES_FILE, OCOD_FILE, OwnershipCases};
pub use pipr::PIPR_FILE;
pub use risk::RiskCases;
pub use rng::Rng;
pub use tenure::{
    COUNCIL_TAX_FILE, COUNCIL_TAX_HEADER, CouncilTaxCases, LEASES_FILE, LEASES_HEADER, LeaseCases,
    LeaseEnd, UnlinkedEntry,
};
pub use world::{
    AddressRecord, BuiltForm, Dwelling, POSTCODE_AREA, PropertyType, UPRN_BASE, UprnPoint,
};

use chrono::NaiveDate;
use out::{Eol, FileStat, LineFile};
use serde::Serialize;
use std::io;
use std::path::{Path, PathBuf};
use world::{Generator, Item};

/// What to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub seed: u64,
    /// Rows of the address register (AddressBase rows: dwellings, parent shells, commercial).
    pub addresses: usize,
    /// Share of dwellings with at least one EPC.
    pub epc_share: f64,
    /// Roughly the share of dwellings sold at least once since 1995.
    pub sale_share: f64,
    /// "Today": no sale or certificate after this date (the injected clock).
    pub end_date: NaiveDate,
    /// Write the deliberately malformed Price Paid and EPC rows.
    pub malformed_rows: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 1,
            addresses: 6_000,
            epc_share: 0.6,
            sale_share: 0.5,
            end_date: NaiveDate::from_ymd_opt(2026, 6, 30).unwrap_or_default(),
            malformed_rows: true,
        }
    }
}

impl Config {
    /// A register of `n` addresses for benchmarks (up to 2,000,000).
    pub fn large(n: usize) -> Config {
        Config {
            addresses: n,
            ..Config::default()
        }
    }
}

/// Streams the address register without writing files.
pub struct Register {
    generator: Generator,
    next_district: usize,
    buf: std::vec::IntoIter<Item>,
}

impl Iterator for Register {
    type Item = AddressRecord;

    fn next(&mut self) -> Option<AddressRecord> {
        loop {
            match self.buf.next() {
                Some(Item::Address(r)) => return Some(r),
                Some(Item::Orphan(_)) => continue,
                None => {
                    if self.next_district >= self.generator.district_count() {
                        return None;
                    }
                    self.buf = self
                        .generator
                        .district(self.next_district)
                        .items
                        .into_iter();
                    self.next_district += 1;
                }
            }
        }
    }
}

/// The address register for `cfg`, exactly `cfg.addresses` records, in UPRN order; the same
/// records `generate` writes to AddressBase. Fails only if `terrace_geo` cannot convert the
/// synthetic area or `cfg.addresses` is too large.
pub fn register(cfg: &Config) -> io::Result<Register> {
    Ok(Register {
        generator: Generator::new(cfg)?,
        next_district: 0,
        buf: Vec::new().into_iter(),
    })
}

/// The true monthly index per postcode district that Price Paid prices were drawn from.
pub fn true_index(cfg: &Config) -> io::Result<TrueIndex> {
    let plan = world::Plan::new(cfg)?;
    let codes: Vec<String> = plan.districts.iter().map(|d| d.code.clone()).collect();
    Ok(TrueIndex::new(cfg.seed, &codes, cfg.end_date))
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileEntry {
    pub path: String,
    pub dataset: String,
    pub format: String,
    /// Data records (header excluded; malformed rows included).
    pub rows: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rejection {
    pub file: String,
    /// 1-based line number in the file (the header is line 1 where there is one).
    pub line: u64,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PpUpdate {
    pub file: String,
    pub line: u64,
    /// Transaction id as written, with braces.
    pub id: String,
    /// "C" (change) or "D" (delete) of an earlier "A" row with the same id.
    pub status: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Authority {
    pub code: String,
    pub name: String,
    pub constituency: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NamedCode {
    pub code: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct World {
    pub postcode_area: String,
    pub postcode_area_note: String,
    pub postcode_districts: Vec<String>,
    pub local_authorities: Vec<Authority>,
    pub lsoas: usize,
    pub wards: usize,
    /// One MSOA per ward, with the ward's rectangle.
    pub msoas: usize,
    pub region: NamedCode,
    pub uprn_first: u64,
    pub uprn_last: u64,
    pub uprn_note: String,
    pub country: String,
    /// British National Grid rectangle the area was laid out in: [x0, y0, x1, y1].
    pub bng_extent: [f64; 4],
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Truth {
    pub file: String,
    pub level_base: String,
    pub price_model: String,
    /// Price of a 90 m2 semi-detached house at level 100, per district.
    pub base_price: Vec<(String, f64)>,
}

/// `manifest.json`: what was written, from which seed, and what loaders should reject.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Manifest {
    pub generator: String,
    pub provenance: String,
    pub description: String,
    pub seed: u64,
    pub addresses: usize,
    pub end_date: String,
    pub world: World,
    pub files: Vec<FileEntry>,
    pub expected_rejections: Vec<Rejection>,
    pub price_paid_updates: Vec<PpUpdate>,
    pub truth: Truth,
    /// Registered leases by kind of term (`leases/leases_fixture.csv`).
    pub lease_cases: LeaseCases,
    /// Council tax entries and dwellings the list cannot link or does not list.
    pub council_tax_cases: CouncilTaxCases,
    /// Listings with price cuts, districts with enough two-bedroom lets, lets of F/G dwellings
    /// (`listings/listings_feed.jsonl`).
    pub listing_cases: ListingCases,
    /// The BRMA lookup's split district and sector-level entry (`lha/`).
    pub lha_cases: LhaCases,
    /// Planning applications by match level, the uncovered authority, and the rated commercial
    /// units with their UARN links.
    pub planning_cases: planning::PlanningCases,
    /// UPRNs whose risk answers the spatial layers pin (designations, flood, coal; layers
    /// loaded for one authority only).
    pub risk_cases: RiskCases,
    /// Place names the gazetteer pins (an ambiguous name, a name not found, a town).
    pub area_cases: AreaCases,
    /// Company-owned titles and companies the ownership tests pin (`ownership/`).
    pub ownership_cases: OwnershipCases,
    /// Land parcels and buildings the land tests pin (`land/`).
    pub land_cases: land::LandCases,
    /// Recommendations and non-domestic and display certificates the energy tests pin (`epc/`).
    pub energy_cases: EnergyCases,
    /// Auction lots the auctions tests pin (`auctions/auction_lots.csv`).
    pub auction_cases: auctions::AuctionCases,
    /// The construction cost workbook the site tests pin (`site/construction_price_indices.xlsx`).
    pub cost_cases: costs::CostCases,
}

pub const ABP_FILE: &str = "addressbase/addressbase_plus_fixture.csv";
pub const OPEN_UPRN_FILE: &str = "os_open_uprn/osopenuprn_fixture.csv";
pub const CODEPOINT_FILE: &str = "codepoint/xt.csv";
pub const ONSPD_FILE: &str = "onspd/onspd_fixture.csv";
pub const LAD_FILE: &str = "boundaries/lad_fixture.geojson";
pub const LSOA_FILE: &str = "boundaries/lsoa_fixture.geojson";
pub const WARD_FILE: &str = "boundaries/ward_fixture.geojson";
pub const MSOA_FILE: &str = "boundaries/msoa_fixture.geojson";
pub const REGION_FILE: &str = "boundaries/region_fixture.geojson";
pub const COUNTRY_FILE: &str = "boundaries/country_fixture.geojson";
pub use gazetteer::{AreaCases, OPEN_NAMES_FILE};
pub const EPC_FILE: &str = "epc/certificates.csv";
pub use energy::EnergyCases;
pub const PPD_FILE: &str = "price_paid/pp-fixture.csv";
pub const PPD_REPORT_FILE: &str = "price_paid/pp-report-builder-fixture.csv";
pub const TRUTH_FILE: &str = "truth/true_index.csv";
pub const MANIFEST_FILE: &str = "manifest.json";

/// AddressBase Plus column names (a subset, in this order), then `LA_ORGANISATION` for the
/// occupier of commercial units.
pub const ABP_HEADER: &str = "UPRN,PARENT_UPRN,CLASS,SAO_START_NUMBER,SAO_START_SUFFIX,SAO_END_NUMBER,SAO_END_SUFFIX,SAO_TEXT,PAO_START_NUMBER,PAO_START_SUFFIX,PAO_END_NUMBER,PAO_END_SUFFIX,PAO_TEXT,STREET_DESCRIPTION,LOCALITY,TOWN_NAME,POSTCODE_LOCATOR,X_COORDINATE,Y_COORDINATE,LATITUDE,LONGITUDE,LA_ORGANISATION";
pub const OPEN_UPRN_HEADER: &str = "UPRN,X_COORDINATE,Y_COORDINATE,LATITUDE,LONGITUDE";
pub const ONSPD_HEADER: &str =
    "pcd,pcds,dointr,doterm,oscty,laua,osward,ctry,rgn,lsoa21,msoa21,oseast1m,osnrth1m,lat,long";
pub const TRUTH_HEADER: &str = "district,month,level";

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(ToString::to_string).unwrap_or_default()
}

fn abp_fields(r: &AddressRecord) -> [String; 22] {
    [
        r.uprn.to_string(),
        opt(&r.parent_uprn),
        r.class.to_string(),
        opt(&r.sao_start_number),
        opt(&r.sao_start_suffix),
        opt(&r.sao_end_number),
        opt(&r.sao_end_suffix),
        opt(&r.sao_text),
        opt(&r.pao_start_number),
        opt(&r.pao_start_suffix),
        opt(&r.pao_end_number),
        opt(&r.pao_end_suffix),
        opt(&r.pao_text),
        r.street.clone(),
        opt(&r.locality),
        r.town.clone(),
        r.postcode.clone(),
        format!("{:.2}", r.x),
        format!("{:.2}", r.y),
        format!("{:.7}", r.lat),
        format!("{:.7}", r.lon),
        opt(&r.organisation),
    ]
}

fn uprn_fields(uprn: u64, x: f64, y: f64, lat: f64, lon: f64) -> [String; 5] {
    [
        uprn.to_string(),
        format!("{x:.2}"),
        format!("{y:.2}"),
        format!("{lat:.7}"),
        format!("{lon:.7}"),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bad {
    Price,
    Date,
    Short,
}

/// Makes a malformed row (and the reason) from a valid one.
type Corrupt = fn(Bad, &[String], &mut Rng) -> (Vec<String>, String);

/// Deliberately malformed rows, written just before the first row that would reach a target line.
struct Sabotage {
    file: &'static str,
    pending: Vec<(u64, Bad)>,
    corrupt: Corrupt,
    quoted: bool,
}

impl Sabotage {
    fn new(
        file: &'static str,
        enabled: bool,
        targets: &[(u64, Bad)],
        corrupt: Corrupt,
        quoted: bool,
    ) -> Sabotage {
        let pending = if enabled {
            targets.to_vec()
        } else {
            Vec::new()
        };
        Sabotage {
            file,
            pending,
            corrupt,
            quoted,
        }
    }

    /// Writes the bad rows due before the next row, modelled on `template` (that next row);
    /// `at_end` writes all that remain.
    fn before(
        &mut self,
        f: &mut LineFile,
        template: &[String],
        at_end: bool,
        rng: &mut Rng,
        out: &mut Vec<Rejection>,
    ) -> io::Result<()> {
        if template.is_empty() {
            // Nothing to model a bad row on (an empty file): write none.
            return Ok(());
        }
        while let Some(&(target, kind)) = self.pending.first() {
            if f.lines + 1 < target && !at_end {
                break;
            }
            let (row, reason) = (self.corrupt)(kind, template, rng);
            if self.quoted {
                f.row_quoted(&row)?
            } else {
                f.row_minimal(&row)?
            }
            out.push(Rejection {
                file: self.file.to_string(),
                line: f.lines,
                reason,
            });
            self.pending.remove(0);
        }
        Ok(())
    }
}

fn corrupt_ppd(kind: Bad, t: &[String], rng: &mut Rng) -> (Vec<String>, String) {
    let mut row = t.to_vec();
    row[0] = format!("{{{}}}", ppd::guid(rng));
    match kind {
        Bad::Price => {
            row[1] = row[1].replacen('0', "O", 1);
            if !row[1].contains('O') {
                row[1] = format!("{}O", row[1]);
            }
            (row, "price is not a number".into())
        }
        Bad::Date => {
            row[2] = "2019-02-30 00:00".into();
            (
                row,
                "date of transfer is not a calendar date (30 February)".into(),
            )
        }
        Bad::Short => {
            row.truncate(9);
            (row, "short row: 9 of 16 columns".into())
        }
    }
}

fn corrupt_epc(kind: Bad, t: &[String], rng: &mut Rng) -> (Vec<String>, String) {
    let mut row = t.to_vec();
    row[0] = format!(
        "{:016x}{:016x}{:016x}{:016x}",
        rng.next_u64(),
        rng.next_u64(),
        rng.next_u64(),
        rng.next_u64()
    );
    match kind {
        Bad::Date | Bad::Price => {
            row[epc::COL_INSPECTION_DATE] = "2016-13-01".into();
            row[epc::COL_LODGEMENT_DATE] = "2016-13-01".into();
            row[epc::COL_LODGEMENT_DATETIME] = "2016-13-01 10:12:00".into();
            (
                row,
                "lodgement and inspection dates are not calendar dates (month 13)".into(),
            )
        }
        Bad::Short => {
            row.truncate(40);
            (row, "short row: 40 of 92 columns".into())
        }
    }
}

/// What [`write_area_files`] wrote.
struct AreaFiles {
    tiling: areas::Tiling,
    cp_stat: FileStat,
    onspd_stat: FileStat,
    lad_bytes: u64,
    lsoa_bytes: u64,
    ward_bytes: u64,
    msoa_bytes: u64,
    region_bytes: u64,
    country_bytes: u64,
    gazetteer_files: Vec<gazetteer::Written>,
    area_cases: AreaCases,
}

/// The postcode products (Code-Point Open, ONSPD), the boundaries of every kind, the names and
/// codes and the Open Names tile, fitted to the postcodes.
fn write_area_files(
    out_dir: &Path,
    plan: &world::Plan,
    postcodes: &[world::PostcodeInfo],
) -> io::Result<AreaFiles> {
    let mut live = Vec::new();
    for p in postcodes.iter().filter(|p| p.doterm.is_none()) {
        let (lon, lat) =
            areas::centroid_lonlat(p).ok_or_else(|| io::Error::other("postcode centroid"))?;
        live.push((p.clone(), lon, lat));
    }
    let tiling = areas::Tiling::build(plan, &live);
    let mut sorted: Vec<&world::PostcodeInfo> = postcodes.iter().collect();
    sorted.sort_by(|a, b| a.postcode.cmp(&b.postcode));
    let mut cp = LineFile::create(out_dir, CODEPOINT_FILE, Eol::CrLf)?;
    let mut onspd = LineFile::create(out_dir, ONSPD_FILE, Eol::CrLf)?;
    onspd.header(ONSPD_HEADER)?;
    let mut onspd_rows: Vec<(String, String)> = Vec::new();
    for p in sorted {
        let (x, y) = p.centroid();
        let (x, y) = (x.round(), y.round());
        let (lon, lat) =
            world::lonlat(x, y).ok_or_else(|| io::Error::other("postcode centroid"))?;
        let lad = &tiling.lads[p.lad];
        let (col, cell) = match tiling.locate(lon, lat) {
            Some((li, ci, ri)) if li == p.lad => (ci, ri),
            _ => (0, 0),
        };
        let ward = &lad.columns[col].ward_code;
        let msoa = &lad.columns[col].msoa_code;
        let lsoa = &lad.columns[col].cells[cell].code;
        if p.doterm.is_none() {
            let mut line = String::new();
            out::push_quoted(&mut line, &p.postcode);
            line.push_str(&format!(",10,{x:.0},{y:.0}"));
            for v in ["E92000001", "E19000002", "E18000010", "", lad.code, ward] {
                line.push(',');
                out::push_quoted(&mut line, v);
            }
            cp.raw_row(&line)?;
        }
        let pcd = areas::pcd7(&p.postcode);
        let row = [
            pcd.clone(),
            p.postcode.clone(),
            p.dointr.clone(),
            p.doterm.clone().unwrap_or_default(),
            // ONSPD's pseudo-code for "no county" (the authorities are unitary)
            "E99999999".to_string(),
            lad.code.to_string(),
            ward.clone(),
            areas::COUNTRY_CODE.to_string(),
            areas::REGION_CODE.to_string(),
            lsoa.clone(),
            msoa.clone(),
            format!("{x:.0}"),
            format!("{y:.0}"),
            format!("{lat:.6}"),
            format!("{lon:.6}"),
        ]
        .join(",");
        onspd_rows.push((pcd, row));
    }
    onspd_rows.sort();
    for (_, row) in &onspd_rows {
        onspd.raw_row(row)?;
    }
    let cp_stat = cp.finish()?;
    let onspd_stat = onspd.finish()?;
    let lad_bytes = out::write_whole(out_dir, LAD_FILE, &tiling.lad_geojson())?;
    let lsoa_bytes = out::write_whole(out_dir, LSOA_FILE, &tiling.lsoa_geojson())?;
    let ward_bytes = out::write_whole(out_dir, WARD_FILE, &tiling.ward_geojson())?;
    let msoa_bytes = out::write_whole(out_dir, MSOA_FILE, &tiling.msoa_geojson())?;
    let region_bytes = out::write_whole(
        out_dir,
        REGION_FILE,
        &tiling.cover_geojson(&format!(
            r#""RGN23CD":"{}","RGN23NM":"{}""#,
            areas::REGION_CODE,
            areas::REGION_NAME
        )),
    )?;
    let country_bytes = out::write_whole(
        out_dir,
        COUNTRY_FILE,
        &tiling.cover_geojson(&format!(
            r#""CTRY23CD":"{}","CTRY23NM":"{}""#,
            areas::COUNTRY_CODE,
            areas::COUNTRY_NAME
        )),
    )?;
    let (gazetteer_files, area_cases) = gazetteer::write(out_dir, plan, &tiling)?;

    Ok(AreaFiles {
        tiling,
        cp_stat,
        onspd_stat,
        lad_bytes,
        lsoa_bytes,
        ward_bytes,
        msoa_bytes,
        region_bytes,
        country_bytes,
        gazetteer_files,
        area_cases,
    })
}

/// The area files of the world of `cfg` (its register is generated to find the postcodes, and
/// not written): Code-Point Open, the postcode directory, the boundaries of every kind, the
/// names and codes and the Open Names tile, as `(dataset, path)` in load order, for benchmarks
/// that load a large register through the AddressBase loader.
pub fn write_area_world(cfg: &Config, out_dir: &Path) -> io::Result<Vec<(String, PathBuf)>> {
    let mut generator = Generator::new(cfg)?;
    let plan = generator.plan.clone();
    let mut postcodes = Vec::new();
    for d in 0..generator.district_count() {
        postcodes.extend(generator.district(d).postcodes);
    }
    let files = write_area_files(out_dir, &plan, &postcodes)?;
    let mut out: Vec<(String, PathBuf)> = vec![
        ("codepoint".into(), out_dir.join(CODEPOINT_FILE)),
        ("onspd".into(), out_dir.join(ONSPD_FILE)),
    ];
    for rel in [
        LAD_FILE,
        LSOA_FILE,
        WARD_FILE,
        MSOA_FILE,
        REGION_FILE,
        COUNTRY_FILE,
    ] {
        out.push(("boundaries".into(), out_dir.join(rel)));
    }
    for (st, dataset, _) in &files.gazetteer_files {
        out.push((dataset.clone(), out_dir.join(&st.rel)));
    }
    Ok(out)
}

/// The local authorities' names in upper case, as Price Paid writes them, by plan order.
fn lad_names_upper(plan: &world::Plan) -> Vec<String> {
    plan.lads
        .iter()
        .map(|l| l.name.to_ascii_uppercase())
        .collect()
}

/// What the certificates and the sales of district `d` are drawn with: its authority and
/// constituency (EPC), its base price and authority name (Price Paid).
fn district_areas<'a>(
    plan: &'a world::Plan,
    d: usize,
    lad_upper: &'a [String],
) -> (epc::Area<'a>, ppd::SaleArea<'a>) {
    let dp = &plan.districts[d];
    let lad = &plan.lads[dp.lad];
    let (constituency_code, constituency_name) = names::CONSTITUENCIES[dp.lad];
    (
        epc::Area {
            lad_code: lad.code,
            lad_name: lad.name,
            constituency_code,
            constituency_name,
        },
        ppd::SaleArea {
            district: d,
            base_price: dp.base_price,
            la_name_upper: &lad_upper[dp.lad],
        },
    )
}

/// The files [`sales_world`] wrote, for a benchmark to load in this order.
#[derive(Debug, Clone)]
pub struct SalesWorld {
    pub register: FileStat,
    pub certificates: FileStat,
    pub sales: FileStat,
    /// Dwellings in the register.
    pub dwellings: u64,
    /// UPRNs of dwellings with a certificate or a sale, about one in 50 (at most 20,000), for
    /// requests.
    pub sample: Vec<u64>,
}

/// The register of `cfg` with the energy certificates and the Price Paid history of its
/// dwellings, drawn exactly as [`generate`] draws them (same streams, so the same values), and
/// nothing else: the inputs of a valuation vintage, for `cargo xtask bench valuation`. No row is
/// malformed.
pub fn sales_world(cfg: &Config, out_dir: &Path) -> io::Result<SalesWorld> {
    let mut generator = Generator::new(cfg)?;
    let plan = generator.plan.clone();
    let codes: Vec<String> = plan.districts.iter().map(|d| d.code.clone()).collect();
    let index = TrueIndex::new(cfg.seed, &codes, cfg.end_date);
    let mut abp = LineFile::create(out_dir, ABP_FILE, Eol::Lf)?;
    abp.header(ABP_HEADER)?;
    let mut epc = LineFile::create(out_dir, EPC_FILE, Eol::Lf)?;
    epc.header(&epc::bulk_header())?;
    let mut ppd = LineFile::create(out_dir, PPD_FILE, Eol::Lf)?;
    let lad_upper = lad_names_upper(&plan);
    let (mut dwellings, mut sample) = (0u64, Vec::new());
    for d in 0..generator.district_count() {
        let (area, sale_area) = district_areas(&plan, d, &lad_upper);
        let mut sales = Vec::new();
        for item in generator.district(d).items {
            let Item::Address(r) = item else { continue };
            abp.row_minimal(&abp_fields(&r))?;
            let Some(dw) = &r.dwelling else { continue };
            dwellings += 1;
            let certs = epc::certificates(cfg.seed, &r, dw, &area, cfg.epc_share, cfg.end_date);
            for c in &certs {
                epc.row_minimal(&c.fields)?;
            }
            let sold = ppd::dwelling_sales(
                cfg.seed,
                &r,
                dw,
                &sale_area,
                &index,
                cfg.sale_share,
                cfg.end_date,
            );
            // A dwelling with neither has nothing a valuation could stand on.
            let evidenced = !certs.is_empty() || !sold.is_empty();
            if evidenced && dwellings % 50 == 0 && sample.len() < 20_000 {
                sample.push(r.uprn);
            }
            sales.extend(sold);
        }
        sales.sort_by(|a, b| a.date.cmp(&b.date).then_with(|| a.guid.cmp(&b.guid)));
        for s in &sales {
            ppd.row_quoted(&s.fields("A"))?;
        }
    }
    Ok(SalesWorld {
        register: abp.finish()?,
        certificates: epc.finish()?,
        sales: ppd.finish()?,
        dwellings,
        sample,
    })
}

/// Writes the fixture files into `out_dir` and returns (and writes) the manifest.
pub fn generate(cfg: &Config, out_dir: &Path) -> io::Result<Manifest> {
    let mut generator = Generator::new(cfg)?;
    let plan = generator.plan.clone();
    let codes: Vec<String> = plan.districts.iter().map(|d| d.code.clone()).collect();
    let index = TrueIndex::new(cfg.seed, &codes, cfg.end_date);
    let end = cfg.end_date;
    let lad_upper = lad_names_upper(&plan);

    let mut abp = LineFile::create(out_dir, ABP_FILE, Eol::Lf)?;
    abp.header(ABP_HEADER)?;
    let mut uprns = LineFile::create(out_dir, OPEN_UPRN_FILE, Eol::Lf)?;
    uprns.header(OPEN_UPRN_HEADER)?;
    let mut epc = LineFile::create(out_dir, EPC_FILE, Eol::Lf)?;
    epc.header(&epc::bulk_header())?;
    let mut ppd = LineFile::create(out_dir, PPD_FILE, Eol::Lf)?;
    // Leases and council tax draw from their own streams: the files above do not change.
    let mut tenure = tenure::Tenure::create(out_dir, cfg.seed, end)?;
    // So do planning applications and the rating lists.
    let mut planning = planning::Planning::create(out_dir, cfg.seed, end, &names::LADS)?;
    // So do the listings, written after everything else.
    let mut listings = listings::Listings::default();
    // So do the company-owned titles (no PRNG at all).
    let mut ownership = ownership::Ownership::create(out_dir, areas::REGION_NAME)?;
    // And the land parcels and buildings (no PRNG either).
    let mut land = land::Land::default();
    // The energy registers beside the certificates, from their own streams.
    let mut energy = energy::Energy::create(out_dir, cfg.seed, end)?;

    let mut rejections = Vec::new();
    let mut epc_bad = Sabotage::new(
        EPC_FILE,
        cfg.malformed_rows,
        &[(37, Bad::Date), (1_204, Bad::Short)],
        corrupt_epc,
        false,
    );
    let mut ppd_bad = Sabotage::new(
        PPD_FILE,
        cfg.malformed_rows,
        &[(58, Bad::Price), (777, Bad::Date), (2_026, Bad::Short)],
        corrupt_ppd,
        true,
    );
    let mut mix = Rng::derive(cfg.seed, "mix", 0);
    let mut postcodes = Vec::new();
    let mut update_candidates: Vec<ppd::Sale> = Vec::new();
    let mut recent: Vec<ppd::Sale> = Vec::new();
    let mut last_epc: Vec<String> = Vec::new();
    let mut last_ppd: Vec<String> = Vec::new();
    let (mut uprn_first, mut uprn_last) = (u64::MAX, 0u64);
    let mut sites: Vec<risk::Site> = Vec::new();
    let mut resale: Option<auctions::CommercialResale> = None;

    for d in 0..generator.district_count() {
        let out = generator.district(d);
        let dp = &plan.districts[d];
        let lad = &plan.lads[dp.lad];
        let (area, sale_area) = district_areas(&plan, d, &lad_upper);
        let mut certs = Vec::new();
        let mut sales = Vec::new();
        for item in &out.items {
            match item {
                Item::Orphan(p) => {
                    uprns.row_minimal(&uprn_fields(p.uprn, p.x, p.y, p.lat, p.lon))?;
                    uprn_first = uprn_first.min(p.uprn);
                    uprn_last = uprn_last.max(p.uprn);
                }
                Item::Address(r) => {
                    abp.row_minimal(&abp_fields(r))?;
                    uprns.row_minimal(&uprn_fields(r.uprn, r.x, r.y, r.lat, r.lon))?;
                    uprn_first = uprn_first.min(r.uprn);
                    uprn_last = uprn_last.max(r.uprn);
                    tenure.address(r, &lad_upper[dp.lad])?;
                    ownership.address(r, &lad_upper[dp.lad])?;
                    land.address(r.uprn, r.parent_uprn, r.x, r.y, dp.lad, lad.code);
                    land.record(r, dp.lad, &lad_upper[dp.lad]);
                    planning.address(r)?;
                    if let Some(dw) = &r.dwelling {
                        sites.push(risk::Site {
                            uprn: r.uprn,
                            x: r.x,
                            y: r.y,
                            lad: dp.lad,
                        });
                        let these = epc::certificates(cfg.seed, r, dw, &area, cfg.epc_share, end);
                        listings.dwelling(r, dw, d, &these);
                        certs.extend(these);
                        sales.extend(ppd::dwelling_sales(
                            cfg.seed,
                            r,
                            dw,
                            &sale_area,
                            &index,
                            cfg.sale_share,
                            end,
                        ));
                    } else if r.class.starts_with('C') {
                        let these = ppd::commercial_sales(cfg.seed, r, &sale_area, end);
                        // The first unit whose title shows a sale in both CCOD snapshots, with
                        // no category B sale from a week before the later one to the auction,
                        // is resold at auction.
                        if resale.is_none()
                            && let Some((previous, previous_price)) =
                                ownership.snapshot_sale(r.uprn)
                            && auctions::resale_date(previous) <= end
                            && these.iter().all(|s| {
                                s.date < previous - chrono::Days::new(7)
                                    || s.date > auctions::resale_date(previous)
                            })
                        {
                            resale = Some(auctions::CommercialResale {
                                uprn: r.uprn,
                                address: crate::tenure::council_address(r),
                                postcode: r.postcode.clone(),
                                previous,
                                previous_price,
                            });
                        }
                        sales.extend(these);
                        energy.commercial(r, &area)?;
                    }
                }
            }
        }
        // Real bulk files are in no useful order: shuffle within the district.
        let mut drng = Rng::derive(cfg.seed, "order", d as u64);
        drng.shuffle(&mut certs);
        for c in &certs {
            epc_bad.before(&mut epc, &c.fields, false, &mut mix, &mut rejections)?;
            epc.row_minimal(&c.fields)?;
            last_epc.clone_from(&c.fields);
            energy.domestic(&c.fields)?;
        }
        sales.sort_by(|a, b| a.date.cmp(&b.date).then_with(|| a.guid.cmp(&b.guid)));
        for s in &sales {
            let fields = s.fields("A");
            ppd_bad.before(&mut ppd, &fields, false, &mut mix, &mut rejections)?;
            ppd.row_quoted(&fields)?;
            last_ppd = fields.to_vec();
            if update_candidates.len() < 40 && s.category == "A" {
                update_candidates.push(s.clone());
            }
            if recent.len() < 8 && ppd::recent(s.date, end) {
                recent.push(s.clone());
            }
        }
        postcodes.extend(out.postcodes);
    }
    epc_bad.before(&mut epc, &last_epc, true, &mut mix, &mut rejections)?;
    ppd_bad.before(&mut ppd, &last_ppd, true, &mut mix, &mut rejections)?;

    // Later monthly updates: a few changes and deletions of earlier transactions.
    let mut updates = Vec::new();
    let mut picks = update_candidates.clone();
    mix.shuffle(&mut picks);
    for (i, s) in picks.iter().take(5).enumerate() {
        let status = if i < 3 { "C" } else { "D" };
        let mut s = s.clone();
        if status == "C" {
            s.price = ((s.price as f64 * 1.1 / 250.0).round() * 250.0) as u64;
        }
        let fields = s.fields(status);
        ppd.row_quoted(&fields)?;
        updates.push(PpUpdate {
            file: PPD_FILE.into(),
            line: ppd.lines,
            id: fields[0].clone(),
            status: status.into(),
        });
    }

    let abp_stat = abp.finish()?;
    let uprn_stat = uprns.finish()?;
    let epc_stat = epc.finish()?;
    let ppd_stat = ppd.finish()?;
    let (lease_stat, ct_stat, lease_cases, council_tax_cases) = tenure.finish()?;
    let (apps_stat, cov_stat, list_stats, smv_stats, links_stat, planning_cases) =
        planning.finish()?;
    // The land cluster's houses get their company titles after the register's own.
    let titled: std::collections::BTreeSet<u64> = ownership
        .cases
        .addressed_titles
        .iter()
        .map(|(_, u)| *u)
        .collect();
    if let Some(houses) = land.plant_cluster(&titled) {
        let (owner, other, titles) = ownership.cluster_titles(&houses)?;
        land.cluster_titles(owner, other, titles);
    }
    let (ccod_stat, ccod_earlier_stat, ocod_stat, ch_stat, ownership_cases) =
        ownership.finish(out_dir)?;
    let land::LandFiles {
        gml: gml_stat,
        buildings: buildings_stat,
        gml_bad_line,
        attributes: attrs_stat,
        attributes_bad_line: attrs_bad_line,
        lidar: lidar_stat,
        osm: osm_stat,
        hmo: hmo_stat,
        cases: land_cases,
    } = land.finish(out_dir)?;
    let (energy_stats, energy_cases) = energy.finish()?;
    if let Some((file, line, reason)) = &energy_cases.rejected_recommendation {
        rejections.push(Rejection {
            file: file.clone(),
            line: *line,
            reason: reason.clone(),
        });
    }
    rejections.push(Rejection {
        file: land::INSPIRE_FILE.into(),
        line: gml_bad_line,
        reason: "unclosed ring".into(),
    });
    rejections.push(Rejection {
        file: land::ATTRIBUTES_FILE.into(),
        line: attrs_bad_line,
        reason: "floors \"many\" is not a whole number from 0 to 200".into(),
    });
    rejections.push(Rejection {
        file: osm::OSM_FILE.into(),
        line: land_cases.osm.bad_height_line,
        reason: format!(
            "{}: {}",
            land_cases.osm.bad_height_element, land_cases.osm.bad_height_reason
        ),
    });
    rejections.push(Rejection {
        file: osm::HMO_FILE.into(),
        line: land_cases.hmo.bad_line,
        reason: land_cases.hmo.bad_reason.clone(),
    });

    // The report-builder export of a few recent sales (same transactions, other layout).
    if recent.is_empty() {
        recent = update_candidates.iter().take(5).cloned().collect();
    }
    let mut rb = LineFile::create(out_dir, PPD_REPORT_FILE, Eol::Lf)?;
    rb.header_without_eol(ppd::REPORT_BUILDER_HEADER)?;
    for s in &recent {
        rb.row_quoted(&s.report_builder_fields())?;
    }
    let rb_stat = rb.finish()?;

    // Postcode products, boundaries and names fitted to the postcodes.
    let AreaFiles {
        tiling,
        cp_stat,
        onspd_stat,
        lad_bytes,
        lsoa_bytes,
        ward_bytes,
        msoa_bytes,
        region_bytes,
        country_bytes,
        gazetteer_files,
        area_cases,
    } = write_area_files(out_dir, &plan, &postcodes)?;

    let mut truth = LineFile::create(out_dir, TRUTH_FILE, Eol::Lf)?;
    truth.header(TRUTH_HEADER)?;
    for (d, code) in index.districts.iter().enumerate() {
        for m in 0..index.months {
            truth.raw_row(&format!(
                "{code},{},{:.4}",
                TrueIndex::month_label(m),
                index.levels[d][m]
            ))?;
        }
    }
    let truth_stat = truth.finish()?;

    let value_level: Vec<f64> = plan
        .districts
        .iter()
        .enumerate()
        .map(|(d, dp)| dp.base_price * index.level(d, end) / 100.0)
        .collect();
    let base_prices: Vec<f64> = plan.districts.iter().map(|dp| dp.base_price).collect();
    let history_stats = listings.write_history(out_dir, cfg.seed, &base_prices, &index)?;
    let pipr_lads: Vec<(&str, &str, Vec<usize>)> = plan
        .lads
        .iter()
        .enumerate()
        .map(|(l, lp)| {
            let ds = (0..plan.districts.len())
                .filter(|d| plan.districts[*d].lad == l)
                .collect();
            (lp.code, lp.name, ds)
        })
        .collect();
    let pipr_stat = pipr::write(out_dir, &pipr_lads, &base_prices, &index)?;
    let auction_pool = listings.auction_candidates();
    let (listings_stat, listing_cases) = listings.write(out_dir, cfg.seed, &codes, &value_level)?;
    // The auction lot feed, from its own stream, after the listings.
    let (auctions_stat, auction_cases) = auctions::write(
        out_dir,
        cfg.seed,
        auction_pool,
        end,
        &|d, date| base_prices[d] * index.level(d, date) / 100.0,
        resale,
    )?;
    let (lha_stat, brma_stat, lha_cases) = lha::write(out_dir, &codes)?;
    // The spatial layers, from their own stream, after everything else.
    let lad_codes: Vec<&str> = plan.lads.iter().map(|l| l.code).collect();
    let risk = risk::write(out_dir, cfg.seed, &sites, &lad_codes)?;
    rejections.extend(risk.rejections);
    let lpa_rects: Vec<(&str, &str, [f64; 4])> = tiling
        .lads
        .iter()
        .map(|l| {
            let d = |v: i64| v as f64 / 1e8;
            let r = &l.rect;
            (
                l.code,
                l.name,
                [d(r.lon_min), d(r.lon_max), d(r.lat_min), d(r.lat_max)],
            )
        })
        .collect();
    let (lpa_files, lpa_rejections) = risk::write_lpa(out_dir, &lpa_rects)?;
    rejections.extend(lpa_rejections);

    let entry = |s: &FileStat, dataset: &str, format: &str| FileEntry {
        path: s.rel.clone(),
        dataset: dataset.into(),
        format: format.into(),
        rows: s.rows,
        bytes: s.bytes,
    };
    let files = vec![
        entry(
            &abp_stat,
            "OS AddressBase Plus",
            "CSV with header row; AddressBase Plus column names (subset) plus LA_ORGANISATION; LF",
        ),
        entry(
            &uprn_stat,
            "OS Open UPRN",
            "CSV with header UPRN,X_COORDINATE,Y_COORDINATE,LATITUDE,LONGITUDE; LF",
        ),
        entry(
            &cp_stat,
            "OS Code-Point Open",
            "CSV, no header, 10 columns (PC,PQ,EA,NO,CY,RH,LH,CC,DC,WC), text quoted; CRLF",
        ),
        entry(
            &onspd_stat,
            "ONS Postcode Directory (ONSPD) columns",
            "CSV with header pcd,pcds,dointr,doterm,oscty,laua,osward,ctry,rgn,lsoa21,msoa21,oseast1m,osnrth1m,lat,long; oscty E99999999 (no county); CRLF",
        ),
        FileEntry {
            path: LAD_FILE.into(),
            dataset: "ONS Local Authority Districts boundaries".into(),
            format: "GeoJSON FeatureCollection, WGS84 lon/lat, properties LAD23CD, LAD23NM".into(),
            rows: tiling.lads.len() as u64,
            bytes: lad_bytes,
        },
        FileEntry {
            path: LSOA_FILE.into(),
            dataset: "ONS Lower layer Super Output Areas 2021 boundaries".into(),
            format: "GeoJSON FeatureCollection, WGS84 lon/lat, properties LSOA21CD, LSOA21NM"
                .into(),
            rows: tiling.lsoa_count() as u64,
            bytes: lsoa_bytes,
        },
        FileEntry {
            path: WARD_FILE.into(),
            dataset: "ONS Wards (December 2023) boundaries".into(),
            format: "GeoJSON FeatureCollection, WGS84 lon/lat, properties WD23CD, WD23NM".into(),
            rows: tiling.ward_count() as u64,
            bytes: ward_bytes,
        },
        FileEntry {
            path: MSOA_FILE.into(),
            dataset: "ONS Middle layer Super Output Areas 2021 boundaries".into(),
            format: "GeoJSON FeatureCollection, WGS84 lon/lat, properties MSOA21CD, MSOA21NM"
                .into(),
            rows: tiling.ward_count() as u64,
            bytes: msoa_bytes,
        },
        FileEntry {
            path: REGION_FILE.into(),
            dataset: "ONS Regions (December 2023) boundaries".into(),
            format: "GeoJSON FeatureCollection, WGS84 lon/lat, properties RGN23CD, RGN23NM".into(),
            rows: 1,
            bytes: region_bytes,
        },
        FileEntry {
            path: COUNTRY_FILE.into(),
            dataset: "ONS Countries (December 2023) boundaries".into(),
            format: "GeoJSON FeatureCollection, WGS84 lon/lat, properties CTRY23CD, CTRY23NM"
                .into(),
            rows: 1,
            bytes: country_bytes,
        },
        entry(
            &epc_stat,
            "EPC domestic certificates (bulk certificates.csv)",
            "CSV with UPPER_SNAKE header, 92 columns, quoted where needed; LF",
        ),
        entry(
            &ppd_stat,
            "HM Land Registry Price Paid Data",
            "CSV, no header, 16 quoted columns, {GUID} ids, YYYY-MM-DD 00:00 dates, record status A/C/D; LF",
        ),
        entry(
            &rb_stat,
            "HM Land Registry Price Paid Data (report builder export)",
            "CSV, header runs into the first record with no newline, 16 quoted columns, SAON before PAON; LF",
        ),
        entry(
            &truth_stat,
            "Fixture ground truth: house price index per postcode district",
            "CSV with header district,month,level; level 100 = January 2015; LF",
        ),
        entry(
            &lease_stat,
            "leases",
            "HM Land Registry Registered Leases CSV with header Unique Identifier,Tenure,Register Property Description,County,Region,Associated Property Description ID,Associated Property Description,OS UPRN,Price Paid,Reg Order,Date of Lease,Term,Alienation Clause Indicator; DD-MM-YYYY dates, terms as free text; quoted where needed; LF",
        ),
        entry(
            &ct_stat,
            "council_tax",
            "Council tax valuation list CSV with header billing_authority,reference,address,postcode,band; GSS billing authority codes, bands A-H; quoted where needed; LF",
        ),
        entry(
            &listings_stat,
            "listings",
            "JSON lines, one listing object per line: listing_id, channel (sale|rent), address, postcode, uprn (omitted when unknown), price (whole pounds; rent per calendar month), bedrooms, property_type, agent, first_seen (RFC 3339 UTC), snapshots [{time, price, status}]; in order of first_seen; LF",
        ),
        entry(
            &lha_stat,
            "lha_rates",
            "Local Housing Allowance rates CSV with header BRMA,BRMA Code,Category,Weekly Rate,Valid From; categories as the VOA writes them (Shared accommodation, 1 bedroom .. 4 bedrooms), weekly rates in pounds (£92.05), ISO dates; LF",
        ),
        entry(
            &brma_stat,
            "brma_lookup",
            "Broad rental market area lookup CSV with header Postcode,BRMA,BRMA Code; each row a postcode district, sector or unit; LF",
        ),
    ];
    let mut files = files;
    for h in &history_stats {
        files.push(if h.rel.ends_with(".blm") {
            entry(
                h,
                "listings_blm",
                "Rightmove BLM v3: #HEADER# (Version 3, EOF '^', EOR '~', Property Count, Generated Date dd-Mon-yyyy HH:MM), #DEFINITION# (column names, each followed by ^, the last by ~), #DATA# (one record a line, fields ^-separated, ending ^~), #END#; one branch's full feed at the generated date; LF",
            )
        } else {
            entry(
                h,
                "listings_rtdf",
                "Rightmove Real Time Data Feed requests as JSON lines: sendpropertydetails (network, branch with channel 1 sales / 2 lettings, property with agent_ref, status, property_type, new_home, update_date, address, price_information, details) and removeproperty (property.removal_reason), each stamped with the receiver's received_at (RFC 3339 UTC) and its method; in order of received_at; no UPRN; LF",
            )
        });
    }
    files.push(entry(
        &pipr_stat,
        "ons_pipr",
        "ONS Price Index of Private Rents, local-authority CSV: UTF-8 with a byte-order mark, the ONS header (Time period, Area code, Area name, Region or country name, Index, Monthly change, Annual change, Rental price, then the per-bedroom and per-type columns), Mon-YYYY periods, [x] where not published, index January 2023 = 100, rents in pounds per calendar month; CRLF",
    ));
    files.push(entry(
        &cov_stat,
        "planning_coverage",
        "planning.data.gov.uk organisation CSV with header entity,name,organisation,statistical-geography,start-date,end-date: the authorities official planning data covers; LF",
    ));
    files.push(entry(
        &apps_stat,
        "planning_applications",
        "planning.data.gov.uk planning-application flattened CSV (lower-kebab header, WKT POINT(lon lat) in WGS84, YYYY-MM-DD dates); LF",
    ));
    for (year, st) in &list_stats {
        files.push(FileEntry {
            dataset: "voa_rating_list".into(),
            format: format!(
                "VOA {year} non-domestic rating list entries: no header, 28 fields separated by *, DD-MON-YYYY dates; CRLF"
            ),
            ..entry(st, "", "")
        });
    }
    for (year, st, valuations) in &smv_stats {
        // One record per valuation: its 01 line with the 02-07 lines that follow it.
        files.push(FileEntry {
            rows: *valuations,
            dataset: "voa_summary_valuations".into(),
            format: format!(
                "VOA {year} summary valuations: no header, * separated, a 01 record per valuation (29 fields, Total Area, Adopted RV, List Year, Unit of Measurement, Unadjusted Price) followed by its 02 floor-area lines and a 07 totals record; OTH units are counts, not square metres; CRLF"
            ),
            ..entry(st, "", "")
        });
    }
    files.push(entry(
        &links_stat,
        "uarn_uprn",
        "CSV with header UARN,UPRN: the UARN to UPRN lookup (the other UARNs are left to the address matcher); LF",
    ));
    files.extend(risk.files.iter().map(|(s, ds, fmt)| entry(s, ds, fmt)));
    files.extend(gazetteer_files.iter().map(|(s, ds, fmt)| entry(s, ds, fmt)));
    files.extend(lpa_files.iter().map(|(s, ds, fmt)| entry(s, ds, fmt)));
    // The earlier snapshot first, as an operator loads monthly files: the later one then holds
    // the titles' current rows, and the price history keeps both.
    files.push(entry(
        &ccod_earlier_stat,
        "ccod",
        "HM Land Registry CCOD full file of an earlier month (2025-06), the same layout as CCOD_FULL_2026_06.csv: the commercial titles whose later snapshot shows a sale from 2018 on, with their previous Price Paid and Date Proprietor Added (four years before); trailer line \"Row Count: N\"; CRLF",
    ));
    files.push(entry(
        &ccod_stat,
        "ccod",
        "HM Land Registry UK companies that own property (CCOD) full file: 35 quoted columns with header Title Number,Tenure,...,Date Proprietor Added,Additional Proprietor Indicator; DD-MM-YYYY dates; up to four proprietors; trailer line \"Row Count: N\"; CRLF",
    ));
    files.push(entry(
        &ocod_stat,
        "ocod",
        "HM Land Registry overseas companies that own property (OCOD) full file: 39 quoted columns (CCOD's with Country Incorporated (n) after each Proprietorship Category (n)); DD/MM/YYYY dates; trailer line \"Row Count: N\"; CRLF",
    ));
    files.push(entry(
        &gml_stat,
        "inspire",
        "HM Land Registry INSPIRE Index Polygons GML: wfs:FeatureCollection of wfs:member / LR:PREDEFINED, gml:Polygon in EPSG:27700 with gml:posList; one member with an unclosed ring",
    ));
    files.push(entry(
        &buildings_stat,
        "os_buildings",
        "OS Open Map Local building layer as GeoJSON (EPSG:27700; id, feature_code)",
    ));
    files.push(entry(
        &lidar_stat,
        "lidar_composite",
        "Environment Agency LIDAR Composite DSM and DTM tiles (a directory): LIDAR-Composite_DSM_1m_2022_<grid ref>.tif and _DTM_ pairs, GeoTIFF float32, 1 m cells, EPSG:27700 (ModelPixelScale, ModelTiepoint, GeoKeyDirectory), GDAL_NODATA -9999, Deflate; two 200 m tiles side by side; rows are tile pairs, bytes the files' total",
    ));
    files.push(entry(
        &attrs_stat,
        "building_attributes",
        "Operator building-attributes feed (OF-L, docs/DATA.md) as CSV with header uprn,floors,basement,green_roof,construction_material,roof_shape,roof_material,solar_panels; Y/N flags, blank where not recorded; every other fixture building, then one row whose floors are not a number; LF",
    ));
    files.push(entry(
        &osm_stat,
        "osm_buildings",
        "OpenStreetMap extract (.osm.pbf, ODbL, \u{a9} OpenStreetMap contributors; SYNTHETIC): an OSMHeader blob, then OSMData blobs (zlib) of nodes (tagged as Node, untagged as DenseNodes), ways and one relation; buildings as closed ways 0.2 m inside their footprints with building:levels, roof:shape, roof:material and height on some (one in feet), one multipolygon relation, rooftop PV as a node and a way; rows are the building and PV elements",
    ));
    files.push(entry(
        &hmo_stat,
        "hmo_licences",
        "Operator HMO licence register feed (docs/DATA.md) as CSV with header licence_number,authority,address,postcode,uprn,storeys,max_occupants,households,licence_start,licence_end; GSS authority codes, ISO dates, uprn blank where left to the address matcher; one row with more households than occupants; LF",
    ));
    files.push(entry(
        &ch_stat,
        "companies_house",
        "Companies House BasicCompanyData CSV: 55 quoted columns, some header names with a leading space; DD/MM/YYYY dates; CRLF",
    ));
    for (stat, dataset, format) in energy_stats.iter().zip([
        ("epc_recommendations", "EPC domestic recommendations.csv: LMK_KEY,IMPROVEMENT_ITEM,IMPROVEMENT_SUMMARY_TEXT,IMPROVEMENT_DESCR_TEXT,IMPROVEMENT_ID,IMPROVEMENT_ID_TEXT,INDICATIVE_COST, quoted where needed; up to three measures a certificate; one row with a blank key; LF"),
        ("epc_non_domestic", "EPC non-domestic certificates.csv: the register's 40 columns (LMK_KEY ... UPRN,UPRN_SOURCE), quoted only where needed; LF"),
        ("epc_recommendations", "EPC non-domestic recommendations.csv: LMK_KEY,PAYBACK_TYPE,RECOMMENDATION_ITEM,RECOMMENDATION_CODE,RECOMMENDATION,CO2_IMPACT, quoted; LF"),
        ("epc_display", "Display energy certificates in the newer register's export: CERTIFICATE_NUMBER then the bulk columns (53), quoted only where needed; LF"),
        ("epc_recommendations", "Display certificate recommendations: CERTIFICATE_NUMBER,PAYBACK_TYPE,RECOMMENDATION_ITEM,RECOMMENDATION_CODE,RECOMMENDATION,CO2_IMPACT, quoted; LF"),
    ]).map(|(s, (d, f))| (s, d, f)) {
        files.push(entry(stat, dataset, format));
    }
    files.push(entry(
        &auctions_stat,
        "auction_lots",
        "Operator auction lot feed (OF-S, docs/DATA.md) as CSV with header auction_house,auction_date,lot_number,address,postcode,uprn,lot_type,tenure,lease_years_remaining,vacant,rent_passing_pa,guide_price_low,guide_price_high,outcome,hammer_price,net_initial_yield_pct,source_url,description; ISO dates, whole pounds, hammer_price blank where not disclosed, uprn left to the address matcher; LF",
    ));
    let (costs_stat, cost_cases) = costs::write(out_dir, cfg.seed, end)?;
    files.push(entry(
        &costs_stat,
        costs::DATASET,
        "ONS construction price spreadsheet layout (xlsx): Cover sheet, Notes, then Table_1 (output price indices by work type, monthly, 2015=100), Table_2 (implied deflator, quarterly), Table_3 (average weekly earnings in construction, monthly); title rows, a header row starting `Time period`, one row per period labelled `2015 Jan` or `2015 Q1`; SYNTHETIC values; rows counts value cells",
    ));
    let manifest = Manifest {
        generator: format!("terrace-fixturegen {}", env!("CARGO_PKG_VERSION")),
        provenance: "fixture".into(),
        description: "Synthetic data generated from a seed: no address, postcode, UPRN, area code, \
                      sale or certificate here describes a real place, property or person."
            .into(),
        seed: cfg.seed,
        addresses: cfg.addresses,
        end_date: end.format("%Y-%m-%d").to_string(),
        world: World {
            postcode_area: POSTCODE_AREA.into(),
            postcode_area_note: "XT is not a UK postcode area; districts XT1.. follow real postcode \
                                 shapes (A9/AA9/AA99 outward codes, 9AA inward codes without C I K M O V)."
                .into(),
            postcode_districts: codes.clone(),
            local_authorities: plan
                .lads
                .iter()
                .enumerate()
                .map(|(i, l)| Authority {
                    code: l.code.into(),
                    name: l.name.into(),
                    constituency: names::CONSTITUENCIES[i].0.into(),
                })
                .collect(),
            lsoas: tiling.lsoa_count(),
            wards: tiling.ward_count(),
            msoas: tiling.ward_count(),
            region: NamedCode {
                code: areas::REGION_CODE.into(),
                name: areas::REGION_NAME.into(),
            },
            uprn_first: if uprn_first == u64::MAX { 0 } else { uprn_first },
            uprn_last,
            uprn_note: "UPRNs from 990000000001 upwards, a range no custodian allocates; a few have \
                        coordinates in OS Open UPRN but no address."
                .into(),
            country: "E92000001".into(),
            bng_extent: [plan.bng.0, plan.bng.1, plan.bng.2, plan.bng.3],
        },
        files,
        expected_rejections: rejections,
        price_paid_updates: updates,
        truth: Truth {
            file: TRUTH_FILE.into(),
            level_base: "100 = January 2015 in every district".into(),
            price_model: ppd::PRICE_MODEL.into(),
            base_price: plan.districts.iter().map(|d| (d.code.clone(), d.base_price)).collect(),
        },
        lease_cases,
        council_tax_cases,
        listing_cases,
        lha_cases,
        planning_cases,
        risk_cases: risk.cases,
        area_cases,
        ownership_cases,
        land_cases,
        energy_cases,
        auction_cases,
        cost_cases,
    };
    let json = serde_json::to_string_pretty(&manifest).map_err(io::Error::other)? + "\n";
    out::write_whole(out_dir, MANIFEST_FILE, &json)?;
    Ok(manifest)
}
