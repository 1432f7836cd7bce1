//! Word lists for synthetic place, street, house, block and business names.
//!
//! Names are written here in title case; the register (AddressBase, Price Paid) upper-cases them,
//! the EPC assessor text keeps title case.

use crate::rng::Rng;
use std::collections::BTreeSet;

/// The two synthetic unitary authorities: GSS codes in an unused range.
pub const LADS: [(&str, &str); 2] = [("E06009901", "Tamberley"), ("E06009902", "Wyvern Vale")];

/// One synthetic Westminster constituency per authority (EPC `CONSTITUENCY`).
pub const CONSTITUENCIES: [(&str, &str); 2] = [
    ("E14099901", "Tamberley"),
    ("E14099902", "Wyvern Vale and Quenmoor"),
];

const PLACE_HEADS: &[&str] = &[
    "Tamber", "Quen", "Yarl", "Mordle", "Pellin", "Sarn", "Vell", "Ombers", "Carrow", "Dunsel",
    "Fenny", "Hask", "Lidden", "Brisk", "Cothel", "Wendle", "Garra", "Holl", "Ketter", "Maddox",
    "Norr", "Pask", "Rudd", "Stell", "Trenna", "Ullers", "Wark", "Yelver", "Ashen", "Blen",
];
const PLACE_TAILS: &[&str] = &[
    "ley", "combe", "bury", "stow", "worth", "field", "ford", "minster", "cott", "hampton", "wick",
    "bridge", "moor", "den", "thorpe",
];
const VILLAGE_PREFIX: &[&str] = &[
    "Little ", "Upper ", "Lower ", "Nether ", "Great ", "East ", "West ",
];

/// Distinct place names: the first is always "Tamberley" (the authority's main town).
pub fn place_names(rng: &mut Rng, n: usize) -> Vec<String> {
    let mut used = BTreeSet::new();
    let mut out = Vec::with_capacity(n);
    used.insert("Tamberley".to_string());
    out.push("Tamberley".to_string());
    let mut attempts = 0usize;
    while out.len() < n {
        attempts += 1;
        let mut name = format!("{}{}", rng.pick(PLACE_HEADS), rng.pick(PLACE_TAILS));
        if attempts > 200 || rng.chance(0.12) {
            name = format!("{}{}", rng.pick(VILLAGE_PREFIX), name);
        }
        if used.insert(name.clone()) {
            out.push(name);
        }
    }
    out
}

const STREET_HEADS: &[&str] = &[
    "Station",
    "Church",
    "Mill",
    "Kings",
    "Queens",
    "Victoria",
    "Albert",
    "Park",
    "Manor",
    "Orchard",
    "Meadow",
    "Chapel",
    "School",
    "Bridge",
    "Castle",
    "Market",
    "North",
    "South",
    "West",
    "East",
    "St Davids",
    "St Marys",
    "St Johns",
    "St Andrews",
    "St Peters",
    "Windsor",
    "York",
    "Grove",
    "Elm",
    "Oak",
    "Ash",
    "Beech",
    "Willow",
    "Cedar",
    "Holly",
    "Rowan",
    "Springfield",
    "Highfield",
    "Fairfield",
    "Brook",
    "River",
    "Spring",
    "Well",
    "Hill",
    "Priory",
    "Abbey",
    "Rectory",
    "Vicarage",
    "Farm",
    "Barton",
    "Coombe",
    "Combe",
    "Tor",
    "Moor",
    "Heath",
    "Greenway",
    "Longmead",
    "Broad",
    "New",
    "Old",
    "Wellington",
    "Nelson",
    "Trafalgar",
    "Alexandra",
    "Clarence",
    "Richmond",
    "Belmont",
    "Mount",
    "Pound",
    "Lime",
    "Chestnut",
    "Hawthorn",
    "Sycamore",
    "Laburnum",
    "Poplar",
    "Cherry",
    "Sunnyside",
    "Hillside",
];

/// Street kinds choose suffixes that fit their era.
pub const SUFFIX_TERRACE: &[&str] = &["Street", "Road", "Terrace", "Place", "Row"];
pub const SUFFIX_SEMI: &[&str] = &["Road", "Avenue", "Crescent", "Gardens", "Road"];
pub const SUFFIX_DETACHED: &[&str] = &["Avenue", "Drive", "Lane", "Close", "Way"];
pub const SUFFIX_ESTATE: &[&str] = &["Close", "Way", "Drive", "Rise", "Mews", "Grove", "Meadows"];
pub const SUFFIX_VILLAGE: &[&str] = &["Lane", "Road", "Hill", "Close", "Street", "Green"];
pub const SUFFIX_FLATS: &[&str] = &["Road", "Street", "Way", "Place", "Close"];

const STREET_QUALIFIERS: &[&str] = &[
    "Upper", "Lower", "North", "South", "East", "West", "Little", "New", "Old",
];

/// A street name not yet used in `used` (the namespace of one town or village).
pub fn street_name(rng: &mut Rng, suffixes: &[&str], used: &mut BTreeSet<String>) -> String {
    for attempt in 0..400 {
        let head = rng.pick(STREET_HEADS);
        let suffix = rng.pick(suffixes);
        if *head == "Hill" && *suffix == "Hill" {
            continue;
        }
        let mut name = format!("{head} {suffix}");
        if attempt >= 60 {
            name = format!("{} {name}", rng.pick(STREET_QUALIFIERS));
        }
        if used.insert(name.clone()) {
            return name;
        }
    }
    // The namespace is exhausted: number the street (real enough for "Industrial Estate Road 2").
    let mut i = used.len();
    loop {
        let name = format!("{} {} {i}", rng.pick(STREET_HEADS), rng.pick(suffixes));
        if used.insert(name.clone()) {
            return name;
        }
        i += 1;
    }
}

/// Common abbreviations an assessor or conveyancer might type.
pub fn abbreviate_street(name: &str) -> String {
    const ABBR: &[(&str, &str)] = &[
        (" Street", " St"),
        (" Road", " Rd"),
        (" Avenue", " Ave"),
        (" Close", " Cl"),
        (" Drive", " Dr"),
        (" Crescent", " Cres"),
        (" Gardens", " Gdns"),
        (" Place", " Pl"),
        (" Terrace", " Terr"),
        (" Lane", " Ln"),
    ];
    for (long, short) in ABBR {
        if let Some(stem) = name.strip_suffix(long) {
            return format!("{stem}{short}");
        }
    }
    name.to_string()
}

pub const HOUSE_NAMES: &[&str] = &[
    "Rose Cottage",
    "Ivy Cottage",
    "The Old Rectory",
    "The Old School House",
    "Hillside",
    "Woodlands",
    "The Barn",
    "Oak Lodge",
    "Meadow View",
    "Apple Tree Cottage",
    "The Limes",
    "The Laurels",
    "Brambles",
    "Willow Cottage",
    "The Grange",
    "Orchard House",
    "Sunnyside",
    "Fairview",
    "Holly Cottage",
    "Larkspur",
    "The Coach House",
    "Mill House",
    "The Stables",
    "Treetops",
    "Westward",
    "Greenacres",
    "Beech House",
    "Cherry Trees",
    "Fern Cottage",
    "The Poplars",
    "Springfield",
    "Hawthorn Cottage",
    "Little Orchard",
    "The Cedars",
    "Swallows",
    "Briar Cottage",
    "The Old Forge",
    "Church View",
    "The White House",
    "Kestrels",
    "Honeysuckle Cottage",
    "The Old Post Office",
    "Woodside",
    "Highfield",
    "Rosemary Cottage",
    "Foxgloves",
    "The Paddock",
    "Rosedene",
    "Stoneleigh",
    "Tor View",
    "Moorlands",
    "Brook House",
];

const BLOCK_HEADS: &[&str] = &[
    "Kings",
    "Queens",
    "Albion",
    "Victoria",
    "Millbrook",
    "St Marys",
    "Regent",
    "Castle",
    "Orchard",
    "Riverside",
    "Chapel",
    "Meridian",
    "Wessex",
    "Beaufort",
    "Granville",
    "College",
    "Priory",
    "Exmoor",
    "Clarence",
    "Brunel",
    "Tamar",
    "Heron",
    "Kingfisher",
    "Sovereign",
];
const BLOCK_TAILS: &[&str] = &["Court", "House", "Lodge", "Mansions", "Point", "Court"];

pub fn block_name(rng: &mut Rng, used: &mut BTreeSet<String>) -> Option<String> {
    for _ in 0..50 {
        let name = format!("{} {}", rng.pick(BLOCK_HEADS), rng.pick(BLOCK_TAILS));
        if used.insert(name.clone()) {
            return Some(name);
        }
    }
    None
}

const SURNAMES: &[&str] = &[
    "Harris",
    "Cooper",
    "Patel",
    "Brooks",
    "Whitfield",
    "Penrose",
    "Trewin",
    "Hocking",
    "Symons",
    "Lang",
    "Mortimer",
    "Ashby",
    "Dawe",
    "Kingdon",
    "Shapland",
    "Vosper",
    "Nankivell",
    "Chudleigh",
];
const SHOP_TRADES: &[&str] = &[
    "Bakers",
    "Butchers",
    "Newsagents",
    "Florist",
    "Hardware",
    "Pharmacy",
    "Hair Studio",
    "Cafe",
    "Fish Bar",
    "Opticians",
    "Bookshop",
    "Greengrocers",
    "Wine Merchants",
    "Convenience Store",
];
const OFFICE_TRADES: &[&str] = &[
    "Solicitors",
    "Accountants",
    "Estate Agents",
    "Insurance Services",
    "Architects",
    "Financial Planning",
    "Surveyors",
];

pub fn shop_name(rng: &mut Rng) -> String {
    if rng.chance(0.2) {
        format!(
            "The {} {}",
            rng.pick(&["Corner", "Village", "Market", "Old"]),
            rng.pick(SHOP_TRADES)
        )
    } else {
        format!("{} {}", rng.pick(SURNAMES), rng.pick(SHOP_TRADES))
    }
}

pub fn office_name(rng: &mut Rng) -> String {
    if rng.chance(0.5) {
        format!(
            "{} & {} {}",
            rng.pick(SURNAMES),
            rng.pick(SURNAMES),
            rng.pick(OFFICE_TRADES)
        )
    } else {
        format!("{} {}", rng.pick(SURNAMES), rng.pick(OFFICE_TRADES))
    }
}

/// Upper case for the register, Price Paid and Code-Point; `&` stays `&`.
pub fn upper(s: &str) -> String {
    s.to_ascii_uppercase()
}
