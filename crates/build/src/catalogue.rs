//! The catalogue's derived step: the coverage register of every local authority and the market
//! area directory (`terrace_areas::coverage::build`, `terrace_areas::catalogue::build_areas`),
//! run by [`crate::derive::derive_all`] after the market build, whose tables the directory reads.
//!
//! The register lists every dataset of [`DATASETS`] and every spatial dataset the loaders know
//! (planning.data.gov.uk's designations, the flood and coal layers, substations, renewables);
//! this module says how each dataset's rows are attributed to an authority. A dataset it does not
//! name (a new row of the table) is attributed nationally, from the load runs, until it is named.

use crate::BuildError;
use terrace_areas::coverage::{Attribution, KnownDataset};
use terrace_ingest::formats::{layers::Layer, planning_data, repd, substations};
use terrace_ingest::{DATASETS, Dataset, Progress};
use terrace_store::Db;
use terrace_store::catalogue::Linked;

const LAYERS: [Layer; 6] = [
    Layer::FloodZones,
    Layer::HistoricFlood,
    Layer::FloodDefences,
    Layer::RiversSeaRisk,
    Layer::SurfaceWaterRisk,
    Layer::CoalHighRisk,
];

/// Every spatial dataset the loaders store, by the name its features carry.
pub fn spatial_datasets() -> Vec<String> {
    let mut v: Vec<String> = planning_data::DATASETS
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.extend(LAYERS.iter().map(|l| l.dataset().to_string()));
    v.push(substations::DATASET.to_string());
    v.push(repd::DATASET.to_string());
    v
}

/// How a dataset of the table is attributed to a local authority.
fn attribution(name: &str, dataset: Dataset) -> Attribution {
    if let Dataset::Layer(l) = dataset {
        return Attribution::Layers(vec![l.dataset().to_string()]);
    }
    match name {
        "addressbase" => Attribution::AddressText,
        "open_uprn" => Attribution::Position,
        "codepoint" | "onspd" => Attribution::Postcodes,
        "boundaries" => Attribution::Boundaries,
        "epc" => Attribution::Linked(Linked::Epc),
        "price_paid" => Attribution::Linked(Linked::PricePaid),
        "ppd_uprn" => Attribution::Linked(Linked::PpdUprn),
        "leases" => Attribution::Linked(Linked::Leases),
        "council_tax" => Attribution::Linked(Linked::CouncilTax),
        "listings" => Attribution::Linked(Linked::Listings),
        "uarn_uprn" => Attribution::Linked(Linked::Hereditament),
        "uk_hpi" => Attribution::Hpi,
        "planning_applications" => Attribution::PlanningApplications,
        "planning_data" => Attribution::Layers(
            planning_data::DATASETS
                .iter()
                .map(|s| s.to_string())
                .collect(),
        ),
        "substations" => Attribution::Layers(vec![substations::DATASET.to_string()]),
        "repd" => Attribution::Layers(vec![repd::DATASET.to_string()]),
        _ => Attribution::National,
    }
}

/// Every dataset of [`DATASETS`], with its attribution.
pub fn known_datasets() -> Vec<KnownDataset> {
    DATASETS
        .iter()
        .map(|d| KnownDataset {
            name: d.name.to_string(),
            source: d.source.to_string(),
            attribution: attribution(d.name, d.dataset),
        })
        .collect()
}

/// Builds the coverage register and the market area directory.
pub async fn derive_catalogue(db: &Db, progress: &mut Progress) -> Result<(), BuildError> {
    let now = chrono::Utc::now().naive_utc();
    let lads =
        terrace_areas::coverage::build(db, &known_datasets(), &spatial_datasets(), now).await?;
    let areas = terrace_areas::catalogue::build_areas(db, now).await?;
    progress.say_line(&format!(
        "[derive] coverage register: {lads} local authorities; market area directory: {areas} areas"
    ));
    Ok(())
}
