//! The datasets: one module each (its parser's use, its merge into the store), and one table,
//! [`DATASETS`], that names them once: name, aliases, provenance source, load order, confidence.
//! `cargo xtask load`, the manifest loader and the property record's provenance read the table.
//!
//! Adding a dataset: a module here implementing [`Load`](crate::load::Load), its variant of
//! [`Dataset`] and its row in [`DATASETS`]. A spatial dataset (features with a geometry, merged
//! by `<dataset>:<reference>`) needs only its reader in `formats` and a variant of
//! [`SpatialFile`].

use crate::formats::ccod_ocod::Register;
use crate::load::{IngestError, Loader};
use spatial::SpatialFile;
use terrace_core::sources;

mod addressbase;
mod auction_lots;
mod boundaries;
mod brma_lookup;
mod building_attributes;
mod codepoint;
mod companies_house;
mod cost_tables;
mod council_tax;
mod epc;
mod epc_recommendations;
mod hmo_licences;
mod inspire;
mod leases;
mod lha_rates;
mod lidar_composite;
mod listings;
mod lpa_boundaries;
mod names_codes;
mod ons_construction;
mod onspd;
mod open_names;
mod open_uprn;
mod os_buildings;
mod osm_buildings;
mod pipr;
mod planning_applications;
mod planning_coverage;
mod planning_portals;
mod ppd_uprn;
mod price_paid;
mod shared;
mod spatial;
mod titles;
mod uarn_uprn;
mod uk_hpi;
mod voa_rating_list;
mod voa_smv;

pub use crate::formats::layers::Layer;
pub use auction_lots::address_key as auction_address_key;
pub use council_tax::LIST_UPRN_METHOD;
pub use planning_applications::APPLICATION_UPRN_METHOD;
pub use ppd_uprn::LOOKUP_METHOD;
pub use uarn_uprn::UARN_LOOKUP_METHOD;

/// A dataset, as code names it (`cargo xtask load` names it by [`DatasetInfo::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dataset {
    AddressBase,
    OpenUprn,
    CodePoint,
    Onspd,
    Boundaries,
    /// ONS names and codes CSVs (a name for a GSS code of any kind).
    NamesCodes,
    /// OS Open Names tiles (populated places).
    OpenNames,
    Epc,
    /// Non-domestic energy performance certificates.
    EpcNonDomestic,
    /// Display energy certificates (public buildings).
    EpcDisplay,
    /// The recommendations of energy certificates (any register).
    EpcRecommendations,
    PricePaid,
    PpdUprn,
    Leases,
    CouncilTax,
    Listings,
    LhaRates,
    BrmaLookup,
    UkHpi,
    PlanningApplications,
    PlanningCoverage,
    VoaRatingList,
    UarnUprn,
    /// The VOA summary valuations (floor areas) of the rating lists.
    VoaSummaryValuations,
    /// planning.data.gov.uk designations (CSV or GeoJSON; the dataset is named in the file).
    PlanningData,
    /// An Environment Agency flood layer or the Coal Authority's high risk areas (GeoJSON).
    Layer(Layer),
    /// Electricity substations with headroom (CSV).
    Substations,
    /// The Renewable Energy Planning Database (CSV).
    Repd,
    /// planning.data.gov.uk local planning authority boundaries (flattened CSV).
    LpaBoundaries,
    /// The operator's planning-portal URL per local planning authority (CSV).
    PlanningPortals,
    /// The operator's building-attributes feed (CSV, OF-L).
    BuildingAttributes,
    /// HM Land Registry's UK companies that own property (CCOD).
    Ccod,
    /// HM Land Registry's overseas companies that own property (OCOD).
    Ocod,
    /// Companies House basic company data.
    CompaniesHouse,
    /// Rightmove BLM v3 listings files.
    ListingsBlm,
    /// Rightmove Real Time Data Feed requests (JSON lines).
    ListingsRtdf,
    /// The ONS Price Index of Private Rents by local authority (CSV).
    Pipr,
    /// HM Land Registry INSPIRE Index Polygons (GML).
    Inspire,
    /// OS Open Map Local building footprints (GeoJSON).
    OsBuildings,
    /// The Environment Agency LIDAR Composite DSM and DTM tiles (a directory of GeoTIFFs).
    LidarComposite,
    /// An OpenStreetMap extract's buildings and rooftop PV (`.osm.pbf`, ODbL).
    OsmBuildings,
    /// The operator's HMO licence register feed (CSV).
    HmoLicences,
    /// The operator's auction lot feed (CSV or JSON lines).
    AuctionLots,
    /// ONS construction price series (output price indices, implied deflator, construction
    /// earnings) from the published spreadsheet (xlsx or ods).
    OnsConstructionPrices,
    /// The operator's tender price index (CSV).
    TenderPrices,
    /// The operator's regional construction location factors (CSV).
    CostLocationFactors,
    /// The operator's tender benchmarks per square metre (CSV).
    TenderBenchmarks,
}

/// One row of the dataset table.
pub struct DatasetInfo {
    pub dataset: Dataset,
    /// The name `cargo xtask load` and the load runs use.
    pub name: &'static str,
    /// Other names accepted for it (lower case, `_` for `-`).
    pub aliases: &'static [&'static str],
    /// The provenance every row of the dataset carries in the store (`fixture:` prefixed for
    /// synthetic data).
    pub source: &'static str,
    /// Where the manifest loader loads it: lower first (a dataset reads what earlier ones stored).
    pub order: u8,
    /// How far a field from this source is trusted, before any match score (docs/DATA.md);
    /// from `terrace_core::sources`.
    pub confidence: f64,
    pub loader: &'static dyn Loader,
}

macro_rules! row {
    ($ds:expr, $name:literal, [$($alias:literal),*], $source:expr, $order:literal, $loader:expr) => {
        DatasetInfo {
            dataset: $ds,
            name: $name,
            aliases: &[$($alias),*],
            source: $source.id,
            order: $order,
            confidence: $source.confidence,
            loader: &$loader,
        }
    };
}

/// Every dataset: (variant, name, aliases, source, load order, loader).
#[rustfmt::skip]
pub static DATASETS: &[DatasetInfo] = &[
    row!(Dataset::AddressBase, "addressbase", ["addressbase_plus"], sources::OS_ADDRESSBASE_PLUS, 3, addressbase::AddressBase),
    row!(Dataset::OpenUprn, "open_uprn", ["os_open_uprn", "uprn"], sources::OS_OPEN_UPRN, 4, open_uprn::OpenUprn),
    row!(Dataset::CodePoint, "codepoint", ["codepoint_open", "code_point"], sources::OS_CODEPOINT_OPEN, 1, codepoint::CodePoint),
    row!(Dataset::Onspd, "onspd", ["nspd", "postcode_directory"], sources::ONS_POSTCODE_DIRECTORY, 2, onspd::Onspd),
    row!(Dataset::Boundaries, "boundaries", ["boundary"], sources::ONS_BOUNDARIES, 0, boundaries::Boundaries),
    row!(Dataset::NamesCodes, "ons_names_codes", ["names_codes", "ons_names_and_codes"], sources::ONS_NAMES_CODES, 0, names_codes::NamesCodes),
    row!(Dataset::OpenNames, "os_open_names", ["open_names", "opname"], sources::OS_OPEN_NAMES, 0, open_names::OpenNames),
    row!(Dataset::Epc, "epc", ["epc_domestic"], sources::EPC_DOMESTIC, 5, epc::Epc(crate::formats::epc::Kind::Domestic)),
    row!(Dataset::EpcNonDomestic, "epc_non_domestic", ["epc_nondomestic", "non_domestic_epc"], sources::EPC_NON_DOMESTIC, 5, epc::Epc(crate::formats::epc::Kind::NonDomestic)),
    row!(Dataset::EpcDisplay, "epc_display", ["display_energy_certificates", "dec"], sources::EPC_DISPLAY, 5, epc::Epc(crate::formats::epc::Kind::Display)),
    row!(Dataset::EpcRecommendations, "epc_recommendations", ["epc_recommendation", "recommendations"], sources::EPC_RECOMMENDATIONS, 6, epc_recommendations::EpcRecommendations),
    row!(Dataset::PricePaid, "price_paid", ["ppd", "pp"], sources::HMLR_PRICE_PAID, 6, price_paid::PricePaid),
    row!(Dataset::PpdUprn, "ppd_uprn", ["price_paid_uprn", "ppd_uprn_lookup"], sources::HMLR_PPD_UPRN_LOOKUP, 7, ppd_uprn::PpdUprn),
    row!(Dataset::Leases, "leases", ["registered_leases", "hmlr_leases"], sources::HMLR_REGISTERED_LEASES, 8, leases::Leases),
    row!(Dataset::CouncilTax, "council_tax", ["ctax", "council_tax_list"], sources::VOA_COUNCIL_TAX_LIST, 9, council_tax::CouncilTax),
    row!(Dataset::Listings, "listings", ["listings_feed"], sources::LISTINGS_FEED, 10, listings::Listings),
    row!(Dataset::LhaRates, "lha_rates", ["lha", "local_housing_allowance"], sources::VOA_LHA_RATES, 11, lha_rates::LhaRates),
    row!(Dataset::BrmaLookup, "brma_lookup", ["brma", "brma_areas"], sources::VOA_BRMA_LOOKUP, 12, brma_lookup::BrmaLookup),
    row!(Dataset::UkHpi, "uk_hpi", ["hpi", "uk_house_price_index"], sources::HMLR_UK_HPI, 13, uk_hpi::UkHpi),
    row!(Dataset::PlanningApplications, "planning_applications", ["planning_application"], sources::PLANNING_DATA_APPLICATIONS, 15, planning_applications::PlanningApplications),
    row!(Dataset::PlanningCoverage, "planning_coverage", ["planning_authorities", "planning_data_coverage"], sources::PLANNING_DATA_COVERAGE, 14, planning_coverage::PlanningCoverage),
    row!(Dataset::VoaRatingList, "voa_rating_list", ["rating_list", "voa_list_entries", "ndr_rating_list"], sources::VOA_RATING_LIST, 16, voa_rating_list::VoaRatingList),
    row!(Dataset::VoaSummaryValuations, "voa_summary_valuations", ["summary_valuations", "voa_smv", "smv"], sources::VOA_SUMMARY_VALUATIONS, 17, voa_smv::VoaSummaryValuations),
    row!(Dataset::UarnUprn, "uarn_uprn", ["uarn_uprn_lookup", "voa_uarn_uprn"], sources::VOA_UARN_UPRN_LOOKUP, 17, uarn_uprn::UarnUprn),
    row!(Dataset::PlanningData, "planning_data", ["planning", "planning_data_gov_uk"], sources::PLANNING_DATA_GOV_UK, 18, SpatialFile::PlanningData),
    row!(Dataset::Layer(Layer::FloodZones), "ea_flood_zones", ["flood_zones"], sources::EA_FLOOD_ZONES, 18, SpatialFile::Layer(Layer::FloodZones)),
    row!(Dataset::Layer(Layer::HistoricFlood), "ea_historic_flood", ["historic_flood_map", "ea_historic_flood_map"], sources::EA_HISTORIC_FLOOD_MAP, 18, SpatialFile::Layer(Layer::HistoricFlood)),
    row!(Dataset::Layer(Layer::FloodDefences), "ea_flood_defences", ["flood_defences", "ea_spatial_flood_defences"], sources::EA_SPATIAL_FLOOD_DEFENCES, 18, SpatialFile::Layer(Layer::FloodDefences)),
    row!(Dataset::Layer(Layer::RiversSeaRisk), "ea_rofrs", ["rofrs", "risk_of_flooding_rivers_sea"], sources::EA_RISK_OF_FLOODING_RIVERS_SEA, 18, SpatialFile::Layer(Layer::RiversSeaRisk)),
    row!(Dataset::Layer(Layer::SurfaceWaterRisk), "ea_rofsw", ["rofsw", "surface_water", "risk_of_flooding_surface_water"], sources::EA_RISK_OF_FLOODING_SURFACE_WATER, 18, SpatialFile::Layer(Layer::SurfaceWaterRisk)),
    row!(Dataset::Layer(Layer::CoalHighRisk), "coal_high_risk", ["coal", "coal_development_high_risk"], sources::COAL_AUTHORITY_DEVELOPMENT_HIGH_RISK_AREAS, 18, SpatialFile::Layer(Layer::CoalHighRisk)),
    row!(Dataset::Substations, "substations", ["substation_headroom"], sources::DNO_SUBSTATION_HEADROOM, 18, SpatialFile::Substations),
    row!(Dataset::Repd, "repd", ["renewables", "renewable_energy_planning_database"], sources::DESNZ_REPD, 18, SpatialFile::Repd),
    row!(Dataset::LpaBoundaries, "local_planning_authority", ["lpa_boundaries", "local_planning_authorities"], sources::PLANNING_DATA_LPA_BOUNDARIES, 0, lpa_boundaries::LpaBoundaries),
    row!(Dataset::PlanningPortals, "planning_portals", ["planning_portal_urls", "lpa_portals"], sources::OPERATOR_PLANNING_PORTALS, 14, planning_portals::PlanningPortals),
    row!(Dataset::Ccod, "ccod", ["hmlr_ccod", "uk_companies_that_own_property"], sources::HMLR_CCOD, 19, titles::Titles(Register::Ccod)),
    row!(Dataset::Ocod, "ocod", ["hmlr_ocod", "overseas_companies_that_own_property"], sources::HMLR_OCOD, 19, titles::Titles(Register::Ocod)),
    row!(Dataset::CompaniesHouse, "companies_house", ["basic_company_data", "companies_house_basic"], sources::COMPANIES_HOUSE_BASIC, 19, companies_house::CompaniesHouse),
    row!(Dataset::ListingsBlm, "listings_blm", ["blm", "rightmove_blm"], sources::RIGHTMOVE_BLM, 10, listings::ListingsBlm),
    row!(Dataset::ListingsRtdf, "listings_rtdf", ["rtdf", "rightmove_rtdf"], sources::RIGHTMOVE_RTDF, 10, listings::ListingsRtdf),
    row!(Dataset::Pipr, "ons_pipr", ["pipr", "private_rents", "price_index_of_private_rents"], sources::ONS_PIPR, 13, pipr::Pipr),
    row!(Dataset::Inspire, "inspire", ["inspire_index_polygons", "hmlr_inspire", "land_registry_cadastral_parcels"], sources::HMLR_INSPIRE, 1, inspire::Inspire),
    row!(Dataset::OsBuildings, "os_buildings", ["os_open_map_local", "open_map_local_buildings"], sources::OS_OPEN_MAP_LOCAL, 1, os_buildings::OsBuildings),
    row!(Dataset::LidarComposite, "lidar_composite", ["ea_lidar_composite", "lidar", "ea_lidar"], sources::EA_LIDAR_COMPOSITE, 2, lidar_composite::LidarComposite),
    row!(Dataset::BuildingAttributes, "building_attributes", ["building_attribute_feed", "buildings_attributes"], sources::OPERATOR_BUILDING_ATTRIBUTES, 10, building_attributes::BuildingAttributes),
    row!(Dataset::OsmBuildings, "osm_buildings", ["osm", "openstreetmap", "osm_pbf"], sources::OSM, 2, osm_buildings::OsmBuildings),
    row!(Dataset::HmoLicences, "hmo_licences", ["hmo", "hmo_register", "hmo_licence_register"], sources::OPERATOR_HMO_LICENCES, 10, hmo_licences::HmoLicences),
    row!(Dataset::AuctionLots, "auction_lots", ["auctions", "auction_lot_feed"], sources::OPERATOR_AUCTION_LOTS, 10, auction_lots::AuctionLots),
    row!(Dataset::OnsConstructionPrices, "ons_construction_prices", ["construction_output_price_indices", "ons_opi", "construction_prices"], sources::ONS_CONSTRUCTION_PRICES, 20, ons_construction::OnsConstructionPrices),
    row!(Dataset::TenderPrices, "tender_prices", ["tender_price_index", "tpi"], sources::OPERATOR_TENDER_PRICES, 20, ons_construction::TenderPrices),
    row!(Dataset::CostLocationFactors, "cost_location_factors", ["location_factors", "construction_location_factors"], sources::OPERATOR_COST_LOCATION_FACTORS, 20, cost_tables::LocationFactors),
    row!(Dataset::TenderBenchmarks, "tender_benchmarks", ["cost_benchmarks", "build_cost_benchmarks"], sources::OPERATOR_TENDER_BENCHMARKS, 20, cost_tables::TenderBenchmarks),
];

impl DatasetInfo {
    /// The row a name or alias names (any case, `-` or `_`).
    pub fn find(s: &str) -> Option<&'static DatasetInfo> {
        let s = s.trim().to_ascii_lowercase().replace('-', "_");
        DATASETS
            .iter()
            .find(|d| d.name == s || d.aliases.contains(&s.as_str()))
    }
}

/// The names `cargo xtask load` accepts, comma separated.
pub fn names() -> String {
    DATASETS
        .iter()
        .map(|d| d.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Dataset {
    pub fn parse(s: &str) -> Result<Dataset, IngestError> {
        DatasetInfo::find(s)
            .map(|d| d.dataset)
            .ok_or_else(|| IngestError::UnknownDataset(s.to_string(), names()))
    }

    /// This dataset's row of [`DATASETS`].
    pub fn info(self) -> Result<&'static DatasetInfo, IngestError> {
        DATASETS
            .iter()
            .find(|d| d.dataset == self)
            .ok_or_else(|| IngestError::UnknownDataset(format!("{self:?}"), names()))
    }

    pub fn name(self) -> &'static str {
        self.info().map_or("unknown", |d| d.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_and_alias_names_one_row() {
        let mut seen = std::collections::HashSet::new();
        for d in DATASETS {
            for n in std::iter::once(&d.name).chain(d.aliases) {
                assert!(seen.insert(*n), "{n} names two datasets");
                assert_eq!(Dataset::parse(n).unwrap(), d.dataset);
                assert_eq!(
                    Dataset::parse(&n.to_uppercase().replace('_', "-")).unwrap(),
                    d.dataset
                );
            }
            assert_eq!(
                d.dataset.info().unwrap().name,
                d.name,
                "one row per variant"
            );
            assert!((0.0..=1.0).contains(&d.confidence));
        }
        assert!(matches!(
            Dataset::parse("nope"),
            Err(IngestError::UnknownDataset(_, _))
        ));
    }

    #[test]
    fn the_sniffer_names_table_rows() {
        // formats::sniff answers with dataset names: each must be a row of the table.
        for name in [
            "price_paid",
            "epc",
            "epc_non_domestic",
            "epc_display",
            "epc_recommendations",
            "open_uprn",
            "codepoint",
            "onspd",
            "boundaries",
            "addressbase",
            "planning_data",
            "voa_rating_list",
            "voa_summary_valuations",
            "uarn_uprn",
            "planning_applications",
            "planning_coverage",
            "repd",
            "substations",
            "uk_hpi",
            "ons_pipr",
            "lha_rates",
            "brma_lookup",
            "ons_names_codes",
            "os_open_names",
            "planning_portals",
            "inspire",
            "lidar_composite",
        ] {
            assert!(DatasetInfo::find(name).is_some(), "{name}");
        }
    }

    #[test]
    fn every_dataset_source_is_a_core_source_with_its_confidence() {
        for d in DATASETS {
            assert_eq!(
                sources::confidence_of(d.source),
                Some(d.confidence),
                "{}",
                d.name
            );
        }
        assert_eq!(sources::confidence_of("terrace_address_matcher"), None);
    }
}
