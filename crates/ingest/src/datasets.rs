//! The datasets: one module each (its parser's use, its merge into the store), and one table,
//! [`DATASETS`], that names them once: name, aliases, provenance source, load order, confidence.
//! `cargo xtask load`, the manifest loader and the property record's provenance read the table.
//!
//! Adding a dataset: a module here implementing [`Load`](crate::load::Load), its variant of
//! [`Dataset`] and its row in [`DATASETS`].

use crate::load::{IngestError, Loader};

mod addressbase;
mod boundaries;
mod brma_lookup;
mod codepoint;
mod council_tax;
mod epc;
mod layers;
mod leases;
mod lha_rates;
mod listings;
mod onspd;
mod open_uprn;
mod planning_applications;
mod planning_coverage;
mod planning_data;
mod ppd_uprn;
mod price_paid;
mod repd;
mod shared;
mod spatial;
mod substations;
mod uarn_uprn;
mod uk_hpi;
mod voa_rating_list;

pub use crate::formats::layers::Layer;
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
    Epc,
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
    /// planning.data.gov.uk designations (CSV or GeoJSON; the dataset is named in the file).
    PlanningData,
    /// An Environment Agency flood layer or the Coal Authority's high risk areas (GeoJSON).
    Layer(Layer),
    /// Electricity substations with headroom (CSV).
    Substations,
    /// The Renewable Energy Planning Database (CSV).
    Repd,
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
    /// How far a field from this source is trusted, before any match score (docs/DATA.md).
    pub confidence: f64,
    pub loader: &'static dyn Loader,
}

/// The confidence of a source no row names.
pub const DEFAULT_CONFIDENCE: f64 = 0.5;

macro_rules! row {
    ($ds:expr, $name:literal, [$($alias:literal),*], $source:literal, $order:literal, $conf:literal, $loader:expr) => {
        DatasetInfo {
            dataset: $ds,
            name: $name,
            aliases: &[$($alias),*],
            source: $source,
            order: $order,
            confidence: $conf,
            loader: &$loader,
        }
    };
}

/// Every dataset: (variant, name, aliases, source, load order, confidence, loader).
#[rustfmt::skip]
pub static DATASETS: &[DatasetInfo] = &[
    row!(Dataset::AddressBase, "addressbase", ["addressbase_plus"], "os_addressbase_plus", 3, 0.99, addressbase::AddressBase),
    row!(Dataset::OpenUprn, "open_uprn", ["os_open_uprn", "uprn"], "os_open_uprn", 4, 0.99, open_uprn::OpenUprn),
    row!(Dataset::CodePoint, "codepoint", ["codepoint_open", "code_point"], "os_codepoint_open", 1, 0.95, codepoint::CodePoint),
    row!(Dataset::Onspd, "onspd", ["nspd", "postcode_directory"], "ons_postcode_directory", 2, 0.95, onspd::Onspd),
    row!(Dataset::Boundaries, "boundaries", ["boundary"], "ons_boundaries", 0, 0.95, boundaries::Boundaries),
    row!(Dataset::Epc, "epc", ["epc_domestic"], "epc_domestic", 5, 0.8, epc::Epc),
    row!(Dataset::PricePaid, "price_paid", ["ppd", "pp"], "hmlr_price_paid", 6, 0.95, price_paid::PricePaid),
    row!(Dataset::PpdUprn, "ppd_uprn", ["price_paid_uprn", "ppd_uprn_lookup"], "hmlr_ppd_uprn_lookup", 7, 0.5, ppd_uprn::PpdUprn),
    row!(Dataset::Leases, "leases", ["registered_leases", "hmlr_leases"], "hmlr_registered_leases", 8, 0.95, leases::Leases),
    row!(Dataset::CouncilTax, "council_tax", ["ctax", "council_tax_list"], "voa_council_tax_list", 9, 0.95, council_tax::CouncilTax),
    row!(Dataset::Listings, "listings", ["listings_feed"], "listings_feed", 10, 0.5, listings::Listings),
    row!(Dataset::LhaRates, "lha_rates", ["lha", "local_housing_allowance"], "voa_lha_rates", 11, 0.5, lha_rates::LhaRates),
    row!(Dataset::BrmaLookup, "brma_lookup", ["brma", "brma_areas"], "voa_brma_lookup", 12, 0.5, brma_lookup::BrmaLookup),
    row!(Dataset::UkHpi, "uk_hpi", ["hpi", "uk_house_price_index"], "hmlr_uk_hpi", 13, 0.5, uk_hpi::UkHpi),
    row!(Dataset::PlanningApplications, "planning_applications", ["planning_application"], "planning_data_applications", 15, 0.5, planning_applications::PlanningApplications),
    row!(Dataset::PlanningCoverage, "planning_coverage", ["planning_authorities", "planning_data_coverage"], "planning_data_coverage", 14, 0.5, planning_coverage::PlanningCoverage),
    row!(Dataset::VoaRatingList, "voa_rating_list", ["rating_list", "voa_list_entries", "ndr_rating_list"], "voa_rating_list", 16, 0.5, voa_rating_list::VoaRatingList),
    row!(Dataset::UarnUprn, "uarn_uprn", ["uarn_uprn_lookup", "voa_uarn_uprn"], "voa_uarn_uprn_lookup", 17, 0.5, uarn_uprn::UarnUprn),
    row!(Dataset::PlanningData, "planning_data", ["planning", "planning_data_gov_uk"], "planning_data_gov_uk", 18, 0.9, planning_data::PlanningData),
    row!(Dataset::Layer(Layer::FloodZones), "ea_flood_zones", ["flood_zones"], "ea_flood_zones", 18, 0.9, layers::LayerFile(Layer::FloodZones)),
    row!(Dataset::Layer(Layer::HistoricFlood), "ea_historic_flood", ["historic_flood_map", "ea_historic_flood_map"], "ea_historic_flood_map", 18, 0.9, layers::LayerFile(Layer::HistoricFlood)),
    row!(Dataset::Layer(Layer::FloodDefences), "ea_flood_defences", ["flood_defences", "ea_spatial_flood_defences"], "ea_spatial_flood_defences", 18, 0.9, layers::LayerFile(Layer::FloodDefences)),
    row!(Dataset::Layer(Layer::RiversSeaRisk), "ea_rofrs", ["rofrs", "risk_of_flooding_rivers_sea"], "ea_risk_of_flooding_rivers_sea", 18, 0.9, layers::LayerFile(Layer::RiversSeaRisk)),
    row!(Dataset::Layer(Layer::SurfaceWaterRisk), "ea_rofsw", ["rofsw", "surface_water", "risk_of_flooding_surface_water"], "ea_risk_of_flooding_surface_water", 18, 0.9, layers::LayerFile(Layer::SurfaceWaterRisk)),
    row!(Dataset::Layer(Layer::CoalHighRisk), "coal_high_risk", ["coal", "coal_development_high_risk"], "coal_authority_development_high_risk_areas", 18, 0.9, layers::LayerFile(Layer::CoalHighRisk)),
    row!(Dataset::Substations, "substations", ["substation_headroom"], "dno_substation_headroom", 18, 0.8, substations::Substations),
    row!(Dataset::Repd, "repd", ["renewables", "renewable_energy_planning_database"], "desnz_repd", 18, 0.9, repd::Repd),
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

/// The confidence of a stored row's source (`fixture:` or not), before any match score; None
/// for a source no dataset names.
pub fn confidence_of(source: &str) -> Option<f64> {
    let s = source.trim_start_matches("fixture:");
    DATASETS
        .iter()
        .find(|d| d.source == s)
        .map(|d| d.confidence)
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
            "open_uprn",
            "codepoint",
            "onspd",
            "boundaries",
            "addressbase",
            "planning_data",
            "voa_rating_list",
            "uarn_uprn",
            "planning_applications",
            "planning_coverage",
            "repd",
            "substations",
            "uk_hpi",
            "lha_rates",
            "brma_lookup",
        ] {
            assert!(DatasetInfo::find(name).is_some(), "{name}");
        }
    }

    #[test]
    fn confidence_reads_the_table() {
        assert_eq!(confidence_of("fixture:os_addressbase_plus"), Some(0.99));
        assert_eq!(confidence_of("dno_substation_headroom"), Some(0.8));
        assert_eq!(confidence_of("terrace_address_matcher"), None);
    }
}
