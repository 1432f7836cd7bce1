//! Synthetic registers for tests: a small hand-built one and a generated one of any size.

use crate::AddressEntry;
use crate::noise::SplitMix64;

fn s(v: &str) -> Option<String> {
    (!v.is_empty()).then(|| v.to_string())
}

/// Builds entries row by row.
#[derive(Default)]
pub(crate) struct Register {
    pub entries: Vec<AddressEntry>,
}

impl Register {
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        uprn: i64,
        parent: Option<i64>,
        saon: &str,
        paon: &str,
        street: &str,
        locality: &str,
        town: &str,
        postcode: &str,
    ) {
        self.entries.push(AddressEntry {
            uprn,
            parent_uprn: parent,
            saon: s(saon),
            paon: s(paon),
            street: s(street),
            locality: s(locality),
            town: s(town),
            postcode: s(postcode),
        });
    }
}

/// UPRNs of the small register, for readable expectations.
pub(crate) mod uprn {
    pub const HIGH_EX: i64 = 1000; // + house number, Exeter High Street
    pub const BUILDING_10: i64 = 1010;
    pub const FLAT_10: i64 = 1100; // + flat number
    pub const RANGE_63_65: i64 = 1063;
    pub const HIGH_CRED: i64 = 2000; // + house number, Crediton High Street
    pub const MILL: i64 = 3000; // + house number, Mill Lane Exeter
    pub const MILL_7_9: i64 = 3079;
    pub const ROSE_COTTAGE: i64 = 3100;
    pub const IVY_HOUSE: i64 = 3101;
    pub const KINGS_COURT: i64 = 4000;
    pub const KINGS_APT: i64 = 4000; // + apartment number
    pub const ST_DAVIDS: i64 = 5000; // + house number
    pub const CHURCH_RD: i64 = 6000; // + house number
    pub const STATION_RD_CRED: i64 = 7000; // + house number
    pub const NO_TEXT: i64 = 9999;
    pub const TWIN_A: i64 = 8001;
    pub const TWIN_B: i64 = 8002;
}

/// A few streets in two towns: Exeter and Crediton both have a High Street; a building with six
/// flats; a numbered range; named houses; a block of apartments; shared postcodes.
pub(crate) fn small_register() -> Vec<AddressEntry> {
    use uprn::*;
    let mut r = Register::default();
    for n in [1, 2, 3, 4, 5] {
        r.add(
            HIGH_EX + n,
            None,
            "",
            &n.to_string(),
            "HIGH STREET",
            "",
            "EXETER",
            "EX1 1AA",
        );
    }
    for n in [6, 7, 8, 9, 12, 21] {
        r.add(
            HIGH_EX + n,
            None,
            "",
            &n.to_string(),
            "HIGH STREET",
            "",
            "EXETER",
            "EX1 1AB",
        );
    }
    r.add(
        BUILDING_10,
        None,
        "",
        "10",
        "HIGH STREET",
        "",
        "EXETER",
        "EX1 1AB",
    );
    for f in 1..=6 {
        let saon = format!("FLAT {f}");
        r.add(
            FLAT_10 + f,
            Some(BUILDING_10),
            &saon,
            "10",
            "HIGH STREET",
            "",
            "EXETER",
            "EX1 1AB",
        );
    }
    r.add(
        RANGE_63_65,
        None,
        "",
        "63-65",
        "HIGH STREET",
        "",
        "EXETER",
        "EX1 1AD",
    );
    for n in 1..=12 {
        r.add(
            HIGH_CRED + n,
            None,
            "",
            &n.to_string(),
            "HIGH STREET",
            "",
            "CREDITON",
            "EX17 2AA",
        );
    }
    for n in [1, 3, 5, 7] {
        r.add(
            MILL + n,
            None,
            "",
            &n.to_string(),
            "MILL LANE",
            "HEAVITREE",
            "EXETER",
            "EX2 4AA",
        );
    }
    r.add(
        MILL_7_9,
        None,
        "",
        "7-9",
        "MILL LANE",
        "HEAVITREE",
        "EXETER",
        "EX2 4AA",
    );
    r.add(
        ROSE_COTTAGE,
        None,
        "",
        "ROSE COTTAGE",
        "MILL LANE",
        "HEAVITREE",
        "EXETER",
        "EX2 4AB",
    );
    r.add(
        IVY_HOUSE,
        None,
        "",
        "IVY HOUSE",
        "MILL LANE",
        "HEAVITREE",
        "EXETER",
        "EX2 4AB",
    );
    r.add(
        KINGS_COURT,
        None,
        "",
        "KINGS COURT",
        "QUEEN STREET",
        "",
        "EXETER",
        "EX4 3AA",
    );
    for a in 1..=4 {
        let saon = format!("APARTMENT {a}");
        r.add(
            KINGS_APT + a,
            Some(KINGS_COURT),
            &saon,
            "KINGS COURT",
            "QUEEN STREET",
            "",
            "EXETER",
            "EX4 3AA",
        );
    }
    for n in 1..=5 {
        r.add(
            ST_DAVIDS + n,
            None,
            "",
            &n.to_string(),
            "ST DAVIDS HILL",
            "",
            "EXETER",
            "EX4 4AA",
        );
    }
    for n in [2, 4, 6] {
        r.add(
            CHURCH_RD + n,
            None,
            "",
            &n.to_string(),
            "CHURCH ROAD",
            "",
            "EXETER",
            "EX2 5AA",
        );
    }
    for n in [1, 2, 3] {
        r.add(
            STATION_RD_CRED + n,
            None,
            "",
            &n.to_string(),
            "STATION ROAD",
            "",
            "CREDITON",
            "EX17 3AA",
        );
    }
    // Two records with the same text (a duplicate in the register) and one with no text at all.
    r.add(
        TWIN_A,
        None,
        "",
        "1",
        "ORCHARD CLOSE",
        "",
        "CREDITON",
        "EX17 4AA",
    );
    r.add(
        TWIN_B,
        None,
        "",
        "1",
        "ORCHARD CLOSE",
        "",
        "CREDITON",
        "EX17 4AA",
    );
    r.add(NO_TEXT, None, "", "", "", "", "", "EX17 4AA");
    r.entries
}

const TOWNS: &[&str] = &[
    "EXETER",
    "CREDITON",
    "TIVERTON",
    "HONITON",
    "EXMOUTH",
    "TORQUAY",
    "PAIGNTON",
    "NEWTON ABBOT",
    "TOTNES",
    "DAWLISH",
    "TEIGNMOUTH",
    "BIDEFORD",
    "BARNSTAPLE",
    "OKEHAMPTON",
    "TAVISTOCK",
    "PLYMOUTH",
    "SIDMOUTH",
    "SEATON",
    "AXMINSTER",
    "CULLOMPTON",
    "ASHBURTON",
    "BUCKFASTLEIGH",
    "KINGSBRIDGE",
    "SALCOMBE",
    "DARTMOUTH",
    "BRIXHAM",
    "ILFRACOMBE",
    "LYNTON",
    "HOLSWORTHY",
    "TORRINGTON",
    "CHUDLEIGH",
    "TOPSHAM",
    "BUDLEIGH SALTERTON",
    "OTTERY SAINT MARY",
    "WELLINGTON",
    "TAUNTON",
    "BRIDGWATER",
    "MINEHEAD",
    "YEOVIL",
    "CHARD",
];
const TOWN_QUALIFIERS: &[&str] = &[
    "", "UPPER", "LOWER", "NORTH", "SOUTH", "EAST", "WEST", "GREAT", "LITTLE", "OLD", "NEW",
];
const STREET_NAMES: &[&str] = &[
    "HIGH",
    "CHURCH",
    "MILL",
    "STATION",
    "VICTORIA",
    "ALBERT",
    "QUEEN",
    "KING",
    "PARK",
    "MANOR",
    "SCHOOL",
    "BRIDGE",
    "NEW",
    "GREEN",
    "ORCHARD",
    "MEADOW",
    "WESTERN",
    "EASTERN",
    "NORTH",
    "SOUTH",
    "OAK",
    "ASH",
    "BEECH",
    "ELM",
    "WILLOW",
    "HAWTHORN",
    "CHESTNUT",
    "HOLLY",
    "ROWAN",
    "BIRCH",
    "CEDAR",
    "MAPLE",
    "LIME",
    "POPLAR",
    "SYCAMORE",
    "LAUREL",
    "LAVENDER",
    "PRIMROSE",
    "BLUEBELL",
    "DAISY",
    "FERN",
    "HEATHER",
    "IVY",
    "JASMINE",
    "ROSE",
    "VIOLET",
    "YEW",
    "HAZEL",
    "ALDER",
    "ACORN",
    "BARTON",
    "BELMONT",
    "BRUNSWICK",
    "CAVENDISH",
    "CLARENCE",
    "COBURG",
    "DEVONSHIRE",
    "DORSET",
    "EXE",
    "FORE",
    "GEORGE",
    "GLOUCESTER",
    "GROSVENOR",
    "HAMILTON",
    "HANOVER",
    "HOWELL",
    "KENSINGTON",
    "LANSDOWNE",
    "LONSDALE",
    "MARLBOROUGH",
    "MELBOURNE",
    "MONKS",
    "MOUNT",
    "NELSON",
    "NORFOLK",
    "OXFORD",
    "PALACE",
    "PENNSYLVANIA",
    "PRINCE",
    "REGENT",
    "RICHMOND",
    "ROYAL",
    "RUSSELL",
    "SALISBURY",
    "SANDFORD",
    "SHERWOOD",
    "SIDWELL",
    "SOUTHERNHAY",
    "SPRING",
    "STANLEY",
    "STRAND",
    "SUMMER",
    "SUSSEX",
    "TEMPLE",
    "TOWER",
    "TRINITY",
    "UNION",
    "VALLEY",
    "VICARAGE",
    "WATER",
    "WELLINGTON",
    "WEST",
    "WINDSOR",
    "YORK",
    "ABBEY",
    "BARRACK",
    "BLACKBOY",
    "BONHAY",
    "BURNTHOUSE",
    "COWICK",
    "DENMARK",
    "DRAKE",
    "EAGLE",
    "FAIRFIELD",
    "GANDY",
    "HOOPERN",
    "LARKBEARE",
    "MAGDALEN",
    "OKEFORD",
    "POLSLOE",
    "QUARRY",
    "RACKCLOSE",
    "STEPCOTE",
    "TOPSHAM",
    "WONFORD",
];
const SAINTS: &[&str] = &[
    "DAVIDS", "JAMES", "LEONARDS", "THOMAS", "MARYS", "ANNES", "GEORGES", "LUKES",
];
const STREET_TYPES: &[&str] = &[
    "STREET", "ROAD", "LANE", "AVENUE", "CLOSE", "DRIVE", "CRESCENT", "GARDENS", "PLACE", "SQUARE",
    "TERRACE", "WAY", "HILL", "GREEN", "PARK", "GROVE",
];
const LOCALITIES: &[&str] = &[
    "HEAVITREE",
    "PINHOE",
    "ALPHINGTON",
    "WHIPTON",
    "COUNTESS WEAR",
    "SAINT THOMAS",
    "NEWTOWN",
    "PENNSYLVANIA",
    "BEACON HEATH",
    "POLSLOE",
    "MOUNT RADFORD",
    "EXWICK",
];
const HOUSE_NAMES: &[&str] = &[
    "ROSE COTTAGE",
    "IVY HOUSE",
    "THE OLD RECTORY",
    "OAK LODGE",
    "MEADOW VIEW",
    "THE BARN",
    "WILLOW COTTAGE",
    "THE STABLES",
    "ORCHARD HOUSE",
    "HILLSIDE",
    "THE COACH HOUSE",
    "FERN BANK",
    "HOLLY COTTAGE",
    "THE OLD SCHOOL",
    "MILL HOUSE",
    "SUNNYSIDE",
    "WOODLANDS",
    "THE LODGE",
    "APPLE TREE COTTAGE",
    "THE GRANARY",
    "SPRINGFIELD",
    "BRAMBLE COTTAGE",
    "GREENACRES",
];
const BLOCK_NAMES: &[&str] = &[
    "KINGS COURT",
    "QUEENS HOUSE",
    "VICTORIA MANSIONS",
    "ALBERT COURT",
    "CATHEDRAL VIEW",
    "RIVERSIDE HOUSE",
    "PARK HOUSE",
    "REGENCY COURT",
    "WESSEX HOUSE",
    "DEVON HOUSE",
];
const LETTERS: &[u8] = b"ABDEFGHJLNPQRSTUWXYZ";
const AREAS: &[&str] = &[
    "EX", "TQ", "PL", "TA", "BS", "BA", "DT", "SP", "SN", "GL", "BH", "SO",
];

/// A register of about `target` addresses in towns of about 3,000 addresses, each street with
/// numbered houses, some suffixes and ranges, named houses, buildings with flats and named blocks
/// of apartments. Deterministic for a seed; every address has unique text.
pub(crate) fn generated_register(target: usize, seed: u64) -> Vec<AddressEntry> {
    let mut rng = SplitMix64::new(seed);
    let mut out: Vec<AddressEntry> = Vec::with_capacity(target + 100);
    let n_towns = target.div_ceil(3000).max(6);
    let mut uprn: i64 = 100_000_000;
    let mut next_uprn = || {
        uprn += 1;
        uprn
    };
    let mut town_i = 0;
    while out.len() < target {
        let t = town_i % (TOWNS.len() * TOWN_QUALIFIERS.len());
        let base = TOWNS[t % TOWNS.len()];
        let qual = TOWN_QUALIFIERS[(t / TOWNS.len()) % TOWN_QUALIFIERS.len()];
        let town = if qual.is_empty() {
            base.to_string()
        } else {
            format!("{qual} {base}")
        };
        let outward = format!(
            "{}{}",
            AREAS[town_i % AREAS.len()],
            1 + town_i / AREAS.len()
        );
        town_i += 1;
        let town_size = (target / n_towns).clamp(200, 3000);
        let mut pc_counter = 0usize;
        let mut used_streets: Vec<String> = Vec::new();
        let mut town_count = 0;
        while town_count < town_size && out.len() < target {
            let street = loop {
                let s = if rng.chance(4) {
                    format!(
                        "ST {} {}",
                        SAINTS[rng.below(SAINTS.len())],
                        STREET_TYPES[rng.below(STREET_TYPES.len())]
                    )
                } else {
                    format!(
                        "{} {}",
                        STREET_NAMES[rng.below(STREET_NAMES.len())],
                        STREET_TYPES[rng.below(STREET_TYPES.len())]
                    )
                };
                if !used_streets.contains(&s) {
                    used_streets.push(s.clone());
                    break s;
                }
            };
            let locality = if rng.chance(20) {
                LOCALITIES[rng.below(LOCALITIES.len())].to_string()
            } else {
                String::new()
            };
            let houses = 4 + rng.below(50);
            let mut pc = String::new();
            let mut pc_left = 0;
            let mut used_names: Vec<&str> = Vec::new();
            let mut n = 1u32;
            let mut emit = |out: &mut Vec<AddressEntry>,
                            e: AddressEntry,
                            pc_left: &mut usize,
                            pc: &mut String,
                            rng: &mut SplitMix64| {
                if *pc_left == 0 {
                    let sector = (pc_counter / 400) % 10;
                    let unit = pc_counter % 400;
                    *pc = format!(
                        "{} {}{}{}",
                        outward,
                        sector,
                        LETTERS[unit / 20] as char,
                        LETTERS[unit % 20] as char
                    );
                    pc_counter += 1;
                    *pc_left = 6 + rng.below(12);
                }
                *pc_left -= 1;
                out.push(AddressEntry {
                    postcode: Some(pc.clone()),
                    ..e
                });
            };
            let base_entry = AddressEntry {
                street: Some(street.clone()),
                locality: s(&locality),
                town: Some(town.clone()),
                ..Default::default()
            };
            for _ in 0..houses {
                let roll = rng.below(100);
                if roll < 5 {
                    let name = HOUSE_NAMES[rng.below(HOUSE_NAMES.len())];
                    if used_names.contains(&name) {
                        continue;
                    }
                    used_names.push(name);
                    let e = AddressEntry {
                        uprn: next_uprn(),
                        paon: s(name),
                        ..base_entry.clone()
                    };
                    emit(&mut out, e, &mut pc_left, &mut pc, &mut rng);
                    town_count += 1;
                    continue;
                }
                if roll < 7 {
                    let name = BLOCK_NAMES[rng.below(BLOCK_NAMES.len())];
                    if used_names.contains(&name) {
                        continue;
                    }
                    used_names.push(name);
                    let block = next_uprn();
                    emit(
                        &mut out,
                        AddressEntry {
                            uprn: block,
                            paon: s(name),
                            ..base_entry.clone()
                        },
                        &mut pc_left,
                        &mut pc,
                        &mut rng,
                    );
                    for a in 1..=(3 + rng.below(10)) {
                        let saon = if rng.chance(50) {
                            format!("APARTMENT {a}")
                        } else {
                            format!("FLAT {a}")
                        };
                        let e = AddressEntry {
                            uprn: next_uprn(),
                            parent_uprn: Some(block),
                            saon: Some(saon),
                            paon: s(name),
                            ..base_entry.clone()
                        };
                        emit(&mut out, e, &mut pc_left, &mut pc, &mut rng);
                        town_count += 1;
                    }
                    continue;
                }
                let paon = if roll < 10 {
                    let p = format!("{}-{}", n, n + 2);
                    n += 3;
                    p
                } else if roll < 13 {
                    let p = format!("{}A", n - 1);
                    if n == 1 {
                        continue;
                    }
                    p
                } else {
                    n += 1;
                    (n - 1).to_string()
                };
                let building = next_uprn();
                emit(
                    &mut out,
                    AddressEntry {
                        uprn: building,
                        paon: Some(paon.clone()),
                        ..base_entry.clone()
                    },
                    &mut pc_left,
                    &mut pc,
                    &mut rng,
                );
                town_count += 1;
                if roll >= 90 {
                    let style = rng.below(3);
                    for f in 1..=(2 + rng.below(6)) {
                        let saon = match style {
                            0 => format!("FLAT {f}"),
                            1 => f.to_string(),
                            _ => format!("FLAT {}", (b'A' + f as u8 - 1) as char),
                        };
                        let e = AddressEntry {
                            uprn: next_uprn(),
                            parent_uprn: Some(building),
                            saon: Some(saon),
                            paon: Some(paon.clone()),
                            ..base_entry.clone()
                        };
                        emit(&mut out, e, &mut pc_left, &mut pc, &mut rng);
                        town_count += 1;
                    }
                }
            }
        }
    }
    out
}
