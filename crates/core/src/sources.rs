//! Where a stored value came from, and how far it is trusted before any match score: one row per
//! source a loader stamps on its rows (`fixture:`-prefixed for synthetic data). The ingest
//! dataset table names its source by these constants, and the property record reads the
//! confidence here, so neither the table nor the record repeats a number (docs/DATA.md explains
//! each confidence).

/// A provenance source: its name as stored, and the confidence of a field it supplies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Source {
    pub id: &'static str,
    pub confidence: f64,
}

macro_rules! sources {
    ($($name:ident = $id:literal, $conf:literal;)*) => {
        $(pub const $name: Source = Source { id: $id, confidence: $conf };)*
        /// Every source, once.
        pub static SOURCES: &[Source] = &[$($name),*];
    };
}

sources! {
    OS_ADDRESSBASE_PLUS = "os_addressbase_plus", 0.99;
    OS_OPEN_UPRN = "os_open_uprn", 0.99;
    OS_CODEPOINT_OPEN = "os_codepoint_open", 0.95;
    ONS_POSTCODE_DIRECTORY = "ons_postcode_directory", 0.95;
    ONS_BOUNDARIES = "ons_boundaries", 0.95;
    ONS_NAMES_CODES = "ons_names_codes", 0.95;
    OS_OPEN_NAMES = "os_open_names", 0.95;
    EPC_DOMESTIC = "epc_domestic", 0.8;
    EPC_NON_DOMESTIC = "epc_non_domestic", 0.8;
    EPC_DISPLAY = "epc_display", 0.8;
    EPC_RECOMMENDATIONS = "epc_recommendations", 0.8;
    HMLR_PRICE_PAID = "hmlr_price_paid", 0.95;
    HMLR_PPD_UPRN_LOOKUP = "hmlr_ppd_uprn_lookup", 0.5;
    HMLR_REGISTERED_LEASES = "hmlr_registered_leases", 0.95;
    VOA_COUNCIL_TAX_LIST = "voa_council_tax_list", 0.95;
    LISTINGS_FEED = "listings_feed", 0.5;
    VOA_LHA_RATES = "voa_lha_rates", 0.5;
    VOA_BRMA_LOOKUP = "voa_brma_lookup", 0.5;
    HMLR_UK_HPI = "hmlr_uk_hpi", 0.5;
    PLANNING_DATA_APPLICATIONS = "planning_data_applications", 0.5;
    PLANNING_DATA_COVERAGE = "planning_data_coverage", 0.5;
    PLANNING_DATA_LPA_BOUNDARIES = "planning_data_lpa_boundaries", 0.95;
    OPERATOR_PLANNING_PORTALS = "operator_planning_portals", 0.5;
    OPERATOR_AUCTION_LOTS = "operator_auction_lots", 0.5;
    OPERATOR_BUILDING_ATTRIBUTES = "operator_building_attributes", 0.8;
    ONS_CONSTRUCTION_PRICES = "ons_construction_prices", 0.9;
    OPERATOR_COST_LOCATION_FACTORS = "operator_cost_location_factors", 0.5;
    OPERATOR_TENDER_PRICES = "operator_tender_prices", 0.5;
    OPERATOR_TENDER_BENCHMARKS = "operator_tender_benchmarks", 0.5;
    VOA_RATING_LIST = "voa_rating_list", 0.5;
    VOA_UARN_UPRN_LOOKUP = "voa_uarn_uprn_lookup", 0.5;
    VOA_SUMMARY_VALUATIONS = "voa_summary_valuations", 0.5;
    PLANNING_DATA_GOV_UK = "planning_data_gov_uk", 0.9;
    EA_FLOOD_ZONES = "ea_flood_zones", 0.9;
    EA_HISTORIC_FLOOD_MAP = "ea_historic_flood_map", 0.9;
    EA_SPATIAL_FLOOD_DEFENCES = "ea_spatial_flood_defences", 0.9;
    EA_RISK_OF_FLOODING_RIVERS_SEA = "ea_risk_of_flooding_rivers_sea", 0.9;
    EA_RISK_OF_FLOODING_SURFACE_WATER = "ea_risk_of_flooding_surface_water", 0.9;
    COAL_AUTHORITY_DEVELOPMENT_HIGH_RISK_AREAS = "coal_authority_development_high_risk_areas", 0.9;
    DNO_SUBSTATION_HEADROOM = "dno_substation_headroom", 0.8;
    DESNZ_REPD = "desnz_repd", 0.9;
    HMLR_CCOD = "hmlr_ccod", 0.95;
    HMLR_OCOD = "hmlr_ocod", 0.95;
    COMPANIES_HOUSE_BASIC = "companies_house_basic_company_data", 0.95;
    RIGHTMOVE_BLM = "rightmove_blm_v3", 0.5;
    RIGHTMOVE_RTDF = "rightmove_rtdf", 0.5;
    ONS_PIPR = "ons_pipr", 0.5;
    HMLR_INSPIRE = "hmlr_inspire_index_polygons", 0.9;
    OS_OPEN_MAP_LOCAL = "os_open_map_local_buildings", 0.9;
    EA_LIDAR_COMPOSITE = "ea_lidar_composite_2022", 0.85;
    OSM = "osm", 0.6;
    OPERATOR_HMO_LICENCES = "operator_hmo_licences", 0.8;
}

/// The confidence of a source no row names.
pub const DEFAULT_CONFIDENCE: f64 = 0.5;

/// The confidence of a stored row's source (`fixture:` or not), before any match score; None for
/// a source no loader names.
pub fn confidence_of(source: &str) -> Option<f64> {
    let s = source.trim_start_matches("fixture:");
    SOURCES.iter().find(|d| d.id == s).map(|d| d.confidence)
}

/// The planning.data.gov.uk datasets Terrace reads (the loader's list and the designation types
/// of the planning lookups), in the order answers list them.
pub const PLANNING_DATA_DATASETS: [&str; 17] = [
    "conservation-area",
    "article-4-direction-area",
    "listed-building",
    "listed-building-outline",
    "tree-preservation-zone",
    "tree",
    "brownfield-land",
    "green-belt",
    "scheduled-monument",
    "ancient-woodland",
    "site-of-special-scientific-interest",
    "area-of-outstanding-natural-beauty",
    "national-park",
    "air-quality-management-area",
    "flood-risk-zone",
    "heritage-at-risk",
    "agricultural-land-classification",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_named_once_and_fixtures_share_their_confidence() {
        let mut ids: Vec<_> = SOURCES.iter().map(|s| s.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), SOURCES.len());
        assert_eq!(confidence_of("fixture:hmlr_price_paid"), Some(0.95));
        assert_eq!(confidence_of("hmlr_ppd_uprn_lookup"), Some(0.5));
        assert_eq!(confidence_of("somebody_else"), None);
    }
}
