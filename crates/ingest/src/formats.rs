//! Streaming parsers for the real open-data file formats Terrace loads.
//!
//! Every dataset module has `read(path)`, which opens the file (an open error or a file whose
//! header lacks the columns the dataset needs is an `io::Error`) and returns an iterator that
//! yields exactly one item per data row: `Ok((line, row))` or `Err(Rejection)`.
//! A bad row never stops the parse, so a loader can account for every input row.
//! Header columns are found by name (case-insensitive; `UPPER_SNAKE`, `lower_snake`,
//! `lower-kebab` and `Title Case` spellings are all the same name), never by position.
//!
//! Text that is not valid UTF-8 is read as Latin-1 field by field rather than rejected.
//!
//! Architecture Invariant: this module only parses; it never touches the store. (The buildings
//! GeoPackage is an SQLite file: it is opened through `terrace_store::gpkg`, since only the store
//! crate links SQLite, but it is never the store's database.)

pub mod addressbase;
pub mod auction_lots;
pub mod blm;
pub mod boundaries;
pub mod brma;
pub mod building_attributes;
pub mod ccod_ocod;
pub mod codepoint;
pub mod companies_house;
pub mod cost_feeds;
pub mod council_tax;
pub mod epc;
pub mod epc_recommendations;
pub mod hmo_licences;
pub mod inspire;
pub mod layers;
pub mod leases;
pub mod lha;
pub mod lidar;
pub mod listings;
pub mod lpa_boundaries;
pub mod names_codes;
pub mod ons_construction;
pub mod onspd;
pub mod open_names;
pub mod open_uprn;
pub mod os_buildings;
pub mod osm_buildings;
pub mod pipr;
pub mod planning_applications;
pub mod planning_coverage;
pub mod planning_data;
pub mod planning_portals;
pub mod ppd_uprn;
pub mod price_paid;
pub mod repd;
pub mod rtdf;
pub mod spatial;
pub mod substations;
pub mod uarn_uprn;
pub mod uk_hpi;
pub mod voa_list;
pub mod voa_smv;

mod csvio;
mod jsonl;
mod value;

use std::fmt;
use std::io::{BufReader, Read};
use std::path::Path;

/// A data row that could not be turned into a typed row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The file as given to `read`.
    pub file: String,
    /// The 1-based physical line where the record starts
    /// (for GeoJSON boundaries: the 1-based feature index).
    pub line: u64,
    pub reason: String,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.reason)
    }
}

impl std::error::Error for Rejection {}

/// One data row: its 1-based line (see [`Rejection::line`]) and the typed row, or a rejection.
pub type Parsed<T> = Result<(u64, T), Rejection>;

/// Names the dataset a file holds from its first line (for GeoJSON, its first few kilobytes):
/// one of `price_paid`, `epc`, `open_uprn`, `codepoint`, `onspd`, `boundaries`, `addressbase`,
/// `os_buildings` for a GeoPackage, or `None` when the file is unreadable or none of these.
pub fn sniff(path: &Path) -> Option<&'static str> {
    // A directory of GeoTIFF tiles: the LIDAR composite's DSM/DTM pairs.
    if path.is_dir() {
        let tiles = std::fs::read_dir(path)
            .ok()?
            .filter_map(Result::ok)
            .any(|e| {
                let n = e.file_name().to_string_lossy().to_ascii_lowercase();
                n.ends_with(".tif") || n.ends_with(".tiff") || e.path().is_dir()
            });
        return tiles.then_some("lidar_composite");
    }
    let file = std::fs::File::open(path).ok()?;
    let mut head = Vec::new();
    BufReader::new(file)
        .take(64 * 1024)
        .read_to_end(&mut head)
        .ok()?;
    // A GeoPackage: the SQLite header with the application id `GPKG` at byte 68. The only
    // GeoPackage loaded is OS Open Map Local's (its `building` layer).
    if head.starts_with(b"SQLite format 3\0") && head.get(68..72) == Some(b"GPKG".as_slice()) {
        return Some("os_buildings");
    }
    // An OpenStreetMap extract: a PBF whose first blob is an `OSMHeader`.
    if osm_buildings::is_pbf(&head) {
        return Some("osm_buildings");
    }
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head);
    let text = value::decode(head);
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        let looks_geojson = trimmed.contains("\"FeatureCollection\"")
            || trimmed.contains("\"features\"")
            || trimmed.contains("\"Feature\"");
        if looks_geojson && trimmed.contains("\"entity\"") && trimmed.contains("\"dataset\"") {
            return Some("planning_data");
        }
        return looks_geojson.then_some("boundaries");
    }
    if inspire::is_inspire(trimmed) {
        return Some("inspire");
    }
    if blm::is_blm(trimmed) {
        return Some("listings_blm");
    }
    let first_line = trimmed.lines().next()?;
    if voa_smv::is_smv_line(first_line) {
        return Some("voa_summary_valuations");
    }
    if voa_list::is_entry_line(first_line) {
        return Some("voa_rating_list");
    }
    let fields = csvio::parse_line(first_line.as_bytes());
    let names: Vec<String> = fields.iter().map(|f| csvio::normalise_name(f)).collect();
    let has = |n: &str| names.iter().any(|x| x == n);
    let has_any = |ns: &[&str]| ns.iter().any(|n| has(n));

    if let Some(register) = ccod_ocod::register_of(&names) {
        return Some(register.as_str());
    }
    if companies_house::is_header(&names) {
        return Some("companies_house");
    }
    if hmo_licences::is_header(&names) {
        return Some("hmo_licences");
    }
    if uarn_uprn::is_header(&names) && names.len() <= 4 {
        return Some("uarn_uprn");
    }
    if planning_applications::is_header(&names) {
        return Some("planning_applications");
    }
    if planning_portals::URL.iter().any(|c| has(c)) && planning_portals::CODE.iter().any(|c| has(c))
    {
        return Some("planning_portals");
    }
    if planning_coverage::CODE.iter().any(|c| has(c)) && has_any(&["organisation", "name"]) {
        return Some("planning_coverage");
    }
    if has("entity") && has("dataset") && has_any(&["geometry", "point"]) {
        return Some("planning_data");
    }
    if has("ref-id") && has("x-coordinate") && has("y-coordinate") {
        return Some("repd");
    }
    if has_any(&["substation-name", "substation"]) && has_any(&["easting", "latitude"]) {
        return Some("substations");
    }
    if price_paid::is_header(&names) || price_paid::is_headerless_record(&fields) {
        return Some("price_paid");
    }
    if epc_recommendations::is_header(&names) {
        return Some("epc_recommendations");
    }
    if has_any(&["lmk-key", "certificate-number"]) || (has("uprn") && has_any(epc::MARKER_COLUMNS))
    {
        return Some(epc::Kind::of_header(&names).dataset());
    }
    if has("uprn") && has_any(addressbase::MARKER_COLUMNS) {
        return Some("addressbase");
    }
    if has("uprn") && has_any(&["x-coordinate", "latitude", "lat"]) {
        return Some("open_uprn");
    }
    if uk_hpi::is_header(&names) {
        return Some("uk_hpi");
    }
    if pipr::is_header(&names) {
        return Some("ons_pipr");
    }
    if has_any(&["brma", "brma-name"]) {
        return if has_any(&["weekly-rate", "rate"]) {
            Some("lha_rates")
        } else {
            Some("brma_lookup")
        };
    }
    if names_codes::is_header(&names) {
        return Some("ons_names_codes");
    }
    if open_names::is_headerless_record(&fields) || first_line.starts_with("ID,NAMES_URI,NAME1") {
        return Some("os_open_names");
    }
    if onspd::postcode_column(&names).is_some() {
        return Some("onspd");
    }
    if codepoint::is_header(&names) || codepoint::is_headerless_record(&fields) {
        return Some("codepoint");
    }
    None
}

#[cfg(test)]
pub(crate) mod testutil {
    use std::io::Write;
    use std::path::PathBuf;

    /// The shared real-data samples (`../shared/data` from the workspace root), if present.
    pub fn sample(rel: &str) -> Option<PathBuf> {
        // `TERRACE_SAMPLE_DIR` points at the samples from a checkout that is not beside them.
        let dir = std::env::var_os("TERRACE_SAMPLE_DIR").map_or_else(
            || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data")),
            PathBuf::from,
        );
        let p = dir.join(rel);
        if p.exists() {
            Some(p)
        } else {
            println!("note: real sample {} is absent; skipping", p.display());
            None
        }
    }

    /// Writes `content` to a fresh temporary file that lives as long as the handle.
    pub fn temp_file(content: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().expect("temp file");
        f.write_all(content).expect("write temp file");
        f.flush().expect("flush temp file");
        f
    }

    /// Collects a parse into (ok rows, rejections).
    pub fn split<T>(
        it: impl Iterator<Item = super::Parsed<T>>,
    ) -> (Vec<(u64, T)>, Vec<super::Rejection>) {
        let mut ok = Vec::new();
        let mut bad = Vec::new();
        for item in it {
            match item {
                Ok(r) => ok.push(r),
                Err(e) => bad.push(e),
            }
        }
        (ok, bad)
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::{sample, temp_file};
    use super::*;

    #[track_caller]
    fn check(content: &str, expect: Option<&str>) {
        let f = temp_file(content.as_bytes());
        assert_eq!(sniff(f.path()), expect, "{content}");
    }

    #[test]
    fn sniff_inline() {
        check(
            "\"{55B1A16F-1F36-4084-A16A-AE1F4CDCA77F}\",\"105000\",\"2002-11-19 00:00\",\"PO37 6BU\",\"F\",\"N\",\"L\",\"CORINTHIAN COURT\",\"FLAT 11\",\"CROSS STREET\",\"\",\"SHANKLIN\",\"ISLE OF WIGHT\",\"ISLE OF WIGHT\",\"A\",\"C\"\n",
            Some("price_paid"),
        );
        check(
            "unique_id,price_paid,deed_date,postcode,property_type,new_build,estate_type,saon,paon,street,locality,town,district,county,transaction_category,linked_data_uri\n",
            Some("price_paid"),
        );
        check(
            "unique_id,price_paid,deed_date,postcode,property_type,new_build,estate_type,saon,paon,street,locality,town,district,county,transaction_category,linked_data_uriABC,1,2020-01-01\n",
            Some("price_paid"),
        );
        check("LMK_KEY,ADDRESS1,POSTCODE,UPRN\n", Some("epc"));
        check("lmk-key,address1,postcode\n", Some("epc"));
        check(
            "LIGHTING_COST_CURRENT,HEATING_COST_CURRENT,ADDRESS,UPRN\n",
            Some("epc"),
        );
        check(
            "UPRN,X_COORDINATE,Y_COORDINATE,LATITUDE,LONGITUDE\n1,2,3,4,5\n",
            Some("open_uprn"),
        );
        check("UPRN,latitude,longitude\n", Some("open_uprn"));
        check(
            "UPRN,PARENT_UPRN,CLASS,PAO_START_NUMBER,STREET_DESCRIPTION,POSTCODE_LOCATOR,X_COORDINATE,LATITUDE\n",
            Some("addressbase"),
        );
        check(
            "\"EX1 1AE\",10,291966,92583,\"E92000001\",\"E19000002\",\"E18000010\",\"E10000008\",\"E07000041\",\"E05011020\"\n",
            Some("codepoint"),
        );
        check("pcd,laua,oseast1m,osnrth1m\n", Some("onspd"));
        check("pcds,lad25cd,lat,long\n", Some("onspd"));
        check(
            "{\n\"type\": \"FeatureCollection\",\n\"features\": []}\n",
            Some("boundaries"),
        );
        check("\u{feff}UPRN,latitude,longitude\n", Some("open_uprn"));
        check(
            "id,ukprn,latitude,longitude,address,current_energy_rating\n",
            None,
        );
        check("{\"results\": []}", None);
        let gpkg = format!(
            "SQLite format 3\0{}GPKG{}",
            "\0".repeat(52),
            "\0".repeat(28)
        );
        check(&gpkg, Some("os_buildings"));
        check(&gpkg.replace("GPKG", "ABCD"), None);
        check("", None);
        check("hello world\n", None);
        check(
            "dataset,entity,name,geometry,point\n",
            Some("planning_data"),
        );
        check(
            "{\"type\":\"FeatureCollection\",\"features\":[{\"type\":\"Feature\",\"properties\":{\"dataset\":\"tree\",\"entity\":\"1\"}}]}",
            Some("planning_data"),
        );
        check("Ref ID,Site Name,X-coordinate,Y-coordinate\n", Some("repd"));
        check(
            "Substation Name,Easting,Northing,Headroom MVA\n",
            Some("substations"),
        );
    }

    #[test]
    fn sniff_real_samples() {
        for (rel, expect) in [
            (
                "isle_of_wight/ppd_monthly/April_2025.csv",
                Some("price_paid"),
            ),
            (
                "format_refs/pp-complete_first_10297_rows_1995.csv",
                Some("price_paid"),
            ),
            (
                "exeter/epc_domestic_exeter_E07000041_api_format_4092rows.csv",
                Some("epc"),
            ),
            (
                "exeter/epc_domestic_exeter_E07000041_bulk_header_subset_60396rows.csv",
                Some("epc"),
            ),
            ("exeter/uprn_latlon_exeter_42861rows.csv", Some("open_uprn")),
            ("exeter/joined_uprn_epc_rating_exeter_451rows.csv", None),
            (
                "postcodes/codepoint_open_2024.1.0_ex.csv",
                Some("codepoint"),
            ),
            (
                "postcodes/nspd_nov2025_via_qlacref_E07000041_E06000046_SW19.csv",
                Some("onspd"),
            ),
            (
                "boundaries/lad19_exeter_E07000041.geojson",
                Some("boundaries"),
            ),
            (
                "boundaries/martinjc_statistical_eng_lsoa_by_lad_E07000041.geojson",
                Some("boundaries"),
            ),
            (
                "isle_of_wight/uk_hpi_isle_of_wight_E06000046.csv",
                Some("uk_hpi"),
            ),
            (
                "isle_of_wight/ons_pipr_private_rents_isle_of_wight_E06000046.csv",
                Some("ons_pipr"),
            ),
            (
                "planning/planning_data_listed-building-outline_flattened_southwark_952rows.csv",
                Some("planning_data"),
            ),
            ("business_rates/council_nndr_bradford_first200.csv", None),
        ] {
            let Some(p) = sample(rel) else { continue };
            assert_eq!(sniff(&p), expect, "{rel}");
        }
    }
}
