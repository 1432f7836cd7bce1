//! Names for the fixture's places and areas, in the publishers' formats: the ONS names-and-codes
//! CSVs of each geography (`LAD23CD,LAD23NM,LAD23NMW,ObjectId`, ...) and one OS Open Names tile
//! (headerless, 34 columns) with a populated place for every town (a `Town`) and village (a
//! `Village`), one `Hamlet` that shares its name with a village of another town (the ambiguous
//! name), and, as the real tiles have, entries that are not populated places (each postcode
//! district as a `Postcode`, and a named road) which the loader reads and does not keep.

use crate::areas::{COUNTRY_CODE, COUNTRY_NAME, REGION_CODE, REGION_NAME, Tiling};
use crate::out::{Eol, FileStat, LineFile};
use crate::world::{DistrictArea, Plan};
use serde::Serialize;
use std::io;
use std::path::Path;

pub const OPEN_NAMES_FILE: &str = "open_names/SX57.csv";

/// Resolve cases the gazetteer pins.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AreaCases {
    /// A place name two populated places share (a village and a hamlet).
    pub ambiguous_place: String,
    /// Their area ids.
    pub ambiguous_place_ids: Vec<String>,
    /// A name no area or place has (resolve answers 404 with the nearest names).
    pub not_found: String,
    /// A town: (area id, name, its local authority's area id).
    pub town: (String, String, String),
}

/// A written file: its stat, the dataset it is and its format sentence for the manifest.
pub type Written = (FileStat, String, String);

/// One populated place to write.
struct Entry {
    id: String,
    name: String,
    kind: &'static str,
    local_type: &'static str,
    x: f64,
    y: f64,
    district: String,
    lad: usize,
}

fn place_id(n: usize) -> String {
    format!("osgb4000000099{n:06}")
}

/// Writes the names-and-codes files and the Open Names tile.
pub fn write(
    out_dir: &Path,
    plan: &Plan,
    tiling: &Tiling,
) -> io::Result<(Vec<Written>, AreaCases)> {
    let mut files = Vec::new();
    let names_codes = |rel: &str, header: &str, rows: Vec<[String; 2]>, welsh: bool| {
        let mut f = LineFile::create(out_dir, rel, Eol::CrLf)?;
        f.header(header)?;
        for (i, [code, name]) in rows.iter().enumerate() {
            let mut fields = vec![code.clone(), name.clone()];
            if welsh {
                fields.push(String::new());
            }
            fields.push((i + 1).to_string());
            f.row_minimal(&fields)?;
        }
        f.finish()
    };
    let lads: Vec<[String; 2]> = tiling
        .lads
        .iter()
        .map(|l| [l.code.to_string(), l.name.to_string()])
        .collect();
    let columns = || tiling.lads.iter().flat_map(|l| &l.columns);
    let wards: Vec<[String; 2]> = columns()
        .map(|c| [c.ward_code.clone(), c.ward_name.clone()])
        .collect();
    let msoas: Vec<[String; 2]> = columns()
        .map(|c| [c.msoa_code.clone(), c.msoa_name.clone()])
        .collect();
    let lsoas: Vec<[String; 2]> = columns()
        .flat_map(|c| &c.cells)
        .map(|c| [c.code.clone(), c.name.clone()])
        .collect();
    let nc_format =
        |h: &str| format!("ONS names and codes CSV with header {h}; Welsh name blank; CRLF");
    for (rel, header, rows, welsh) in [
        (
            "names_codes/LAD23_names_and_codes.csv",
            "LAD23CD,LAD23NM,LAD23NMW,ObjectId",
            lads,
            true,
        ),
        (
            "names_codes/WD23_names_and_codes.csv",
            "WD23CD,WD23NM,WD23NMW,ObjectId",
            wards,
            true,
        ),
        (
            "names_codes/MSOA21_names_and_codes.csv",
            "MSOA21CD,MSOA21NM,MSOA21NMW,ObjectId",
            msoas,
            true,
        ),
        (
            "names_codes/LSOA21_names_and_codes.csv",
            "LSOA21CD,LSOA21NM,LSOA21NMW,ObjectId",
            lsoas,
            true,
        ),
        (
            "names_codes/RGN23_names_and_codes.csv",
            "RGN23CD,RGN23NM,ObjectId",
            vec![[REGION_CODE.to_string(), REGION_NAME.to_string()]],
            false,
        ),
        (
            "names_codes/CTRY23_names_and_codes.csv",
            "CTRY23CD,CTRY23NM,CTRY23NMW,ObjectId",
            vec![[COUNTRY_CODE.to_string(), COUNTRY_NAME.to_string()]],
            true,
        ),
    ] {
        let st = names_codes(rel, header, rows, welsh)?;
        files.push((st, "ons_names_codes".to_string(), nc_format(header)));
    }

    // The populated places: towns, then each town's villages.
    let mut entries: Vec<Entry> = Vec::new();
    for (t, town) in plan.towns.iter().enumerate() {
        let Some(first) = plan.districts.iter().find(|d| d.town == t) else {
            continue;
        };
        entries.push(Entry {
            id: place_id(entries.len() + 1),
            name: town.name.clone(),
            kind: "populatedPlace",
            local_type: "Town",
            x: town.x.round(),
            y: town.y.round(),
            district: first.code.clone(),
            lad: first.lad,
        });
        for d in plan.districts.iter().filter(|d| d.town == t) {
            if let DistrictArea::Rural(villages) = &d.area {
                for v in villages {
                    entries.push(Entry {
                        id: place_id(entries.len() + 1),
                        name: v.name.clone(),
                        kind: "populatedPlace",
                        local_type: "Village",
                        x: v.x.round(),
                        y: v.y.round(),
                        district: d.code.clone(),
                        lad: d.lad,
                    });
                }
            }
        }
    }
    // A hamlet near the first town named like the last town's first village.
    let village = entries
        .iter()
        .rev()
        .find(|e| e.local_type == "Village")
        .map(|e| (e.name.clone(), e.id.clone()));
    let (town_id, town_name, town_lad, tx, ty, td) = match entries.first() {
        Some(e) => (
            e.id.clone(),
            e.name.clone(),
            e.lad,
            e.x,
            e.y,
            e.district.clone(),
        ),
        None => return Err(io::Error::other("the fixture has no town")),
    };
    let Some((shared, village_id)) = village else {
        return Err(io::Error::other("the fixture has no village"));
    };
    let hamlet_id = place_id(entries.len() + 1);
    entries.push(Entry {
        id: hamlet_id.clone(),
        name: shared.clone(),
        kind: "populatedPlace",
        local_type: "Hamlet",
        x: tx + 450.0,
        y: ty - 650.0,
        district: td,
        lad: town_lad,
    });
    let mut rows: Vec<String> = entries
        .iter()
        .map(|e| {
            let lad = &tiling.lads[e.lad];
            line(
                &e.id,
                &e.name,
                e.kind,
                e.local_type,
                e.x,
                e.y,
                &e.district,
                lad.name,
            )
        })
        .collect();
    // Entries that are not populated places: each postcode district, and a road.
    let mut n = entries.len();
    for d in &plan.districts {
        n += 1;
        let town = &plan.towns[d.town];
        rows.push(line(
            &place_id(n),
            &d.code,
            "other",
            "Postcode",
            town.x.round(),
            town.y.round(),
            &d.code,
            tiling.lads[d.lad].name,
        ));
    }
    n += 1;
    rows.push(line(
        &place_id(n),
        "High Street",
        "transportNetwork",
        "Named Road",
        tx,
        ty,
        &plan.districts[0].code,
        tiling.lads[town_lad].name,
    ));
    let mut f = LineFile::create(out_dir, OPEN_NAMES_FILE, Eol::CrLf)?;
    for r in &rows {
        f.raw_row(r)?;
    }
    files.push((
        f.finish()?,
        "os_open_names".to_string(),
        "OS Open Names CSV tile: no header, the 34 columns of OS's documentation (ID, NAMES_URI, NAME1, ..., SAME_AS_GEONAMES), BNG GEOMETRY_X/Y; populated places (Town, Village, Hamlet) and other entries (Postcode, Named Road); CRLF".to_string(),
    ));
    let mut ids = vec![format!("place:{village_id}"), format!("place:{hamlet_id}")];
    ids.sort();
    let cases = AreaCases {
        ambiguous_place: shared.clone(),
        ambiguous_place_ids: ids,
        not_found: format!("{shared} Magna"),
        town: (
            format!("place:{town_id}"),
            town_name,
            format!("lad:{}", tiling.lads[town_lad].code),
        ),
    };
    Ok((files, cases))
}

/// One Open Names entry in OS's 34-column layout (admin columns as OS fills them for a unitary
/// authority: `COUNTY_UNITARY` named, `DISTRICT_BOROUGH` blank).
#[allow(clippy::too_many_arguments)]
fn line(
    id: &str,
    name: &str,
    kind: &str,
    local_type: &str,
    x: f64,
    y: f64,
    district: &str,
    county_unitary: &str,
) -> String {
    let os = "http://data.ordnancesurvey.co.uk";
    let mut f: Vec<String> = vec![String::new(); 34];
    f[0] = id.into();
    f[1] = format!("{os}/id/{id}");
    f[2] = name.into();
    f[6] = kind.into();
    f[7] = local_type.into();
    f[8] = format!("{x:.0}");
    f[9] = format!("{y:.0}");
    f[10] = "1000".into();
    f[11] = "25000".into();
    f[12] = format!("{:.0}", x - 400.0);
    f[13] = format!("{:.0}", y - 400.0);
    f[14] = format!("{:.0}", x + 400.0);
    f[15] = format!("{:.0}", y + 400.0);
    f[16] = district.into();
    f[17] = format!("{os}/id/postcodedistrict/{district}");
    f[24] = county_unitary.into();
    f[26] = format!("{os}/ontology/admingeo/UnitaryAuthority");
    f[27] = REGION_NAME.into();
    f[29] = COUNTRY_NAME.into();
    f[30] = format!("{os}/id/country/england");
    let mut out = String::new();
    for (i, v) in f.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        crate::out::push_minimal(&mut out, v);
    }
    out
}
