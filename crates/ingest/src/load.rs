//! Loaders: parsed rows into the store, chunk by chunk, with row accounting and progress.

use crate::addresses::split_lines;
pub use crate::formats::layers::Layer;
use crate::formats::{self, Parsed, Rejection};
use chrono::{NaiveDateTime, Utc};
use serde::Deserialize;
use std::collections::HashMap;
use std::hash::Hash;
use std::path::{Path, PathBuf};
use std::time::Instant;
use terrace_geo::{PolygonIndex, Shape};
use terrace_store::loads::{self, RowCounts};
use terrace_store::spatial::{self, CoverageRow, FeatureRow};
use terrace_store::{Db, StoreError, planning, rating};
use terrace_store::{
    address::{self, AddressRow},
    council_tax, epc, leases, lha, listings, meta, sales,
};

/// Rows per chunk written in one transaction.
const CHUNK_ROWS: usize = 5_000;
/// Progress is reported every this many rows read.
const PROGRESS_EVERY: i64 = 100_000;

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("cannot read {file}: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    #[error("unknown dataset {0:?}; expected one of: {1}")]
    UnknownDataset(String, &'static str),
    #[error("bad manifest {file}: {message}")]
    Manifest { file: String, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The datasets `cargo xtask load` accepts.
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

impl Dataset {
    pub const NAMES: &'static str = "addressbase, open_uprn, codepoint, onspd, boundaries, epc, price_paid, ppd_uprn, leases, council_tax, listings, lha_rates, brma_lookup, uk_hpi, planning_applications, planning_coverage, voa_rating_list, uarn_uprn, planning_data, ea_flood_zones, ea_historic_flood, ea_flood_defences, ea_rofrs, ea_rofsw, coal_high_risk, substations, repd";

    pub fn parse(s: &str) -> Result<Dataset, IngestError> {
        Ok(
            match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
                "addressbase" | "addressbase_plus" => Dataset::AddressBase,
                "open_uprn" | "os_open_uprn" | "uprn" => Dataset::OpenUprn,
                "codepoint" | "codepoint_open" | "code_point" => Dataset::CodePoint,
                "onspd" | "nspd" | "postcode_directory" => Dataset::Onspd,
                "boundaries" | "boundary" => Dataset::Boundaries,
                "epc" | "epc_domestic" => Dataset::Epc,
                "price_paid" | "ppd" | "pp" => Dataset::PricePaid,
                "ppd_uprn" | "price_paid_uprn" | "ppd_uprn_lookup" => Dataset::PpdUprn,
                "leases" | "registered_leases" | "hmlr_leases" => Dataset::Leases,
                "council_tax" | "ctax" | "council_tax_list" => Dataset::CouncilTax,
                "listings" | "listings_feed" => Dataset::Listings,
                "lha_rates" | "lha" | "local_housing_allowance" => Dataset::LhaRates,
                "brma_lookup" | "brma" | "brma_areas" => Dataset::BrmaLookup,
                "uk_hpi" | "hpi" | "uk_house_price_index" => Dataset::UkHpi,
                "planning_applications" | "planning_application" => Dataset::PlanningApplications,
                "planning_coverage" | "planning_authorities" | "planning_data_coverage" => {
                    Dataset::PlanningCoverage
                }
                "voa_rating_list" | "rating_list" | "voa_list_entries" | "ndr_rating_list" => {
                    Dataset::VoaRatingList
                }
                "uarn_uprn" | "uarn_uprn_lookup" | "voa_uarn_uprn" => Dataset::UarnUprn,
                "planning_data" | "planning" | "planning_data_gov_uk" => Dataset::PlanningData,
                "ea_flood_zones" | "flood_zones" => Dataset::Layer(Layer::FloodZones),
                "ea_historic_flood" | "historic_flood_map" | "ea_historic_flood_map" => {
                    Dataset::Layer(Layer::HistoricFlood)
                }
                "ea_flood_defences" | "flood_defences" | "ea_spatial_flood_defences" => {
                    Dataset::Layer(Layer::FloodDefences)
                }
                "ea_rofrs" | "rofrs" | "risk_of_flooding_rivers_sea" => {
                    Dataset::Layer(Layer::RiversSeaRisk)
                }
                "ea_rofsw" | "rofsw" | "surface_water" | "risk_of_flooding_surface_water" => {
                    Dataset::Layer(Layer::SurfaceWaterRisk)
                }
                "coal_high_risk" | "coal" | "coal_development_high_risk" => {
                    Dataset::Layer(Layer::CoalHighRisk)
                }
                "substations" | "substation_headroom" => Dataset::Substations,
                "repd" | "renewables" | "renewable_energy_planning_database" => Dataset::Repd,
                _ => return Err(IngestError::UnknownDataset(s.to_string(), Self::NAMES)),
            },
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            Dataset::AddressBase => "addressbase",
            Dataset::OpenUprn => "open_uprn",
            Dataset::CodePoint => "codepoint",
            Dataset::Onspd => "onspd",
            Dataset::Boundaries => "boundaries",
            Dataset::Epc => "epc",
            Dataset::PricePaid => "price_paid",
            Dataset::PpdUprn => "ppd_uprn",
            Dataset::Leases => "leases",
            Dataset::CouncilTax => "council_tax",
            Dataset::Listings => "listings",
            Dataset::LhaRates => "lha_rates",
            Dataset::BrmaLookup => "brma_lookup",
            Dataset::UkHpi => "uk_hpi",
            Dataset::PlanningApplications => "planning_applications",
            Dataset::PlanningCoverage => "planning_coverage",
            Dataset::VoaRatingList => "voa_rating_list",
            Dataset::UarnUprn => "uarn_uprn",
            Dataset::PlanningData => "planning_data",
            Dataset::Layer(Layer::FloodZones) => "ea_flood_zones",
            Dataset::Layer(Layer::HistoricFlood) => "ea_historic_flood",
            Dataset::Layer(Layer::FloodDefences) => "ea_flood_defences",
            Dataset::Layer(Layer::RiversSeaRisk) => "ea_rofrs",
            Dataset::Layer(Layer::SurfaceWaterRisk) => "ea_rofsw",
            Dataset::Layer(Layer::CoalHighRisk) => "coal_high_risk",
            Dataset::Substations => "substations",
            Dataset::Repd => "repd",
        }
    }

    /// The provenance every row of this dataset carries in the store.
    fn source(self, fixture: bool) -> String {
        let base = match self {
            Dataset::AddressBase => "os_addressbase_plus",
            Dataset::OpenUprn => "os_open_uprn",
            Dataset::CodePoint => "os_codepoint_open",
            Dataset::Onspd => "ons_postcode_directory",
            Dataset::Boundaries => "ons_boundaries",
            Dataset::Epc => "epc_domestic",
            Dataset::PricePaid => "hmlr_price_paid",
            Dataset::PpdUprn => "hmlr_ppd_uprn_lookup",
            Dataset::Leases => "hmlr_registered_leases",
            Dataset::CouncilTax => "voa_council_tax_list",
            Dataset::Listings => "listings_feed",
            Dataset::LhaRates => "voa_lha_rates",
            Dataset::BrmaLookup => "voa_brma_lookup",
            Dataset::UkHpi => "hmlr_uk_hpi",
            Dataset::PlanningApplications => "planning_data_applications",
            Dataset::PlanningCoverage => "planning_data_coverage",
            Dataset::VoaRatingList => "voa_rating_list",
            Dataset::UarnUprn => "voa_uarn_uprn_lookup",
            Dataset::PlanningData => "planning_data_gov_uk",
            Dataset::Layer(Layer::FloodZones) => "ea_flood_zones",
            Dataset::Layer(Layer::HistoricFlood) => "ea_historic_flood_map",
            Dataset::Layer(Layer::FloodDefences) => "ea_spatial_flood_defences",
            Dataset::Layer(Layer::RiversSeaRisk) => "ea_risk_of_flooding_rivers_sea",
            Dataset::Layer(Layer::SurfaceWaterRisk) => "ea_risk_of_flooding_surface_water",
            Dataset::Layer(Layer::CoalHighRisk) => "coal_authority_development_high_risk_areas",
            Dataset::Substations => "dno_substation_headroom",
            Dataset::Repd => "desnz_repd",
        };
        if fixture {
            format!("fixture:{base}")
        } else {
            base.to_string()
        }
    }
}

/// What one file's load did.
#[derive(Debug, Clone)]
pub struct LoadReport {
    pub dataset: String,
    pub file: String,
    pub counts: RowCounts,
    pub rejections: Vec<Rejection>,
    pub seconds: f64,
}

/// Where progress lines go.
pub struct Progress {
    sink: Box<dyn FnMut(&str) + Send>,
}

impl Progress {
    /// To standard error (the operator's terminal).
    pub fn stderr() -> Progress {
        Progress {
            sink: Box::new(|s| eprintln!("{s}")),
        }
    }

    /// To the tracing log (the gateway's first start).
    pub fn log() -> Progress {
        Progress {
            sink: Box::new(|s| tracing::info!("{s}")),
        }
    }

    pub fn quiet() -> Progress {
        Progress {
            sink: Box::new(|_| {}),
        }
    }

    fn say(&mut self, s: &str) {
        (self.sink)(s)
    }

    pub fn say_line(&mut self, s: &str) {
        (self.sink)(s)
    }
}

fn counts_line(ds: &str, file: &str, c: &RowCounts, secs: f64) -> String {
    let rate = if secs > 0.0 {
        c.read as f64 / secs
    } else {
        0.0
    };
    format!(
        "[{ds}] {file}: read {}, loaded {}, updated {}, deleted {}, rejected {}, unchanged {} ({:.0} rows/s)",
        c.read, c.loaded, c.updated, c.deleted, c.rejected, c.unchanged, rate
    )
}

/// Options of one load.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// Rows carry `fixture:` provenance (synthetic data).
    pub fixture: bool,
}

/// Loads one file of `dataset` into the store.
pub async fn load_file(
    db: &Db,
    dataset: Dataset,
    path: &Path,
    opts: LoadOptions,
    progress: &mut Progress,
) -> Result<LoadReport, IngestError> {
    let io = |source| IngestError::Io {
        file: path.display().to_string(),
        source,
    };
    let src = dataset.source(opts.fixture);
    let ctx = LoadCtx {
        db,
        source: &src,
        now: Utc::now().naive_utc(),
        notes: Default::default(),
        lads: Default::default(),
    };
    match dataset {
        Dataset::AddressBase => {
            drive(
                &ctx,
                dataset,
                path,
                formats::addressbase::read(path).map_err(io)?,
                progress,
                apply_addressbase,
            )
            .await
        }
        Dataset::OpenUprn => {
            drive(
                &ctx,
                dataset,
                path,
                formats::open_uprn::read(path).map_err(io)?,
                progress,
                apply_open_uprn,
            )
            .await
        }
        Dataset::CodePoint => {
            drive(
                &ctx,
                dataset,
                path,
                formats::codepoint::read(path).map_err(io)?,
                progress,
                apply_codepoint,
            )
            .await
        }
        Dataset::Onspd => {
            drive(
                &ctx,
                dataset,
                path,
                formats::onspd::read(path).map_err(io)?,
                progress,
                apply_onspd,
            )
            .await
        }
        Dataset::Boundaries => {
            drive(
                &ctx,
                dataset,
                path,
                formats::boundaries::read(path).map_err(io)?,
                progress,
                apply_boundaries,
            )
            .await
        }
        Dataset::Epc => {
            drive(
                &ctx,
                dataset,
                path,
                formats::epc::read(path).map_err(io)?,
                progress,
                apply_epc,
            )
            .await
        }
        Dataset::PricePaid => {
            drive(
                &ctx,
                dataset,
                path,
                formats::price_paid::read(path).map_err(io)?,
                progress,
                apply_price_paid,
            )
            .await
        }
        Dataset::PpdUprn => {
            drive(
                &ctx,
                dataset,
                path,
                formats::ppd_uprn::read(path).map_err(io)?,
                progress,
                apply_ppd_uprn,
            )
            .await
        }
        Dataset::Leases => {
            drive(
                &ctx,
                dataset,
                path,
                formats::leases::read(path).map_err(io)?,
                progress,
                apply_leases,
            )
            .await
        }
        Dataset::CouncilTax => {
            drive(
                &ctx,
                dataset,
                path,
                formats::council_tax::read(path).map_err(io)?,
                progress,
                apply_council_tax,
            )
            .await
        }
        Dataset::Listings => {
            drive(
                &ctx,
                dataset,
                path,
                formats::listings::read(path).map_err(io)?,
                progress,
                apply_listings,
            )
            .await
        }
        Dataset::LhaRates => {
            drive(
                &ctx,
                dataset,
                path,
                formats::lha::read(path).map_err(io)?,
                progress,
                apply_lha_rates,
            )
            .await
        }
        Dataset::BrmaLookup => {
            drive(
                &ctx,
                dataset,
                path,
                formats::brma::read(path).map_err(io)?,
                progress,
                apply_brma_areas,
            )
            .await
        }
        Dataset::UkHpi => {
            drive(
                &ctx,
                dataset,
                path,
                formats::uk_hpi::read(path).map_err(io)?,
                progress,
                apply_uk_hpi,
            )
            .await
        }
        Dataset::PlanningApplications => {
            drive(
                &ctx,
                dataset,
                path,
                formats::planning_applications::read(path).map_err(io)?,
                progress,
                apply_planning_applications,
            )
            .await
        }
        Dataset::PlanningCoverage => {
            drive(
                &ctx,
                dataset,
                path,
                formats::planning_coverage::read(path).map_err(io)?,
                progress,
                apply_planning_coverage,
            )
            .await
        }
        Dataset::VoaRatingList => {
            drive(
                &ctx,
                dataset,
                path,
                formats::voa_list::read(path).map_err(io)?,
                progress,
                apply_voa_list,
            )
            .await
        }
        Dataset::UarnUprn => {
            drive(
                &ctx,
                dataset,
                path,
                formats::uarn_uprn::read(path).map_err(io)?,
                progress,
                apply_uarn_uprn,
            )
            .await
        }
        Dataset::PlanningData => {
            drive(
                &ctx,
                dataset,
                path,
                formats::planning_data::read(path).map_err(io)?,
                progress,
                apply_spatial,
            )
            .await
        }
        Dataset::Layer(layer) => {
            drive(
                &ctx,
                dataset,
                path,
                formats::layers::read(path, layer).map_err(io)?,
                progress,
                apply_spatial,
            )
            .await
        }
        Dataset::Substations => {
            drive(
                &ctx,
                dataset,
                path,
                formats::substations::read(path).map_err(io)?,
                progress,
                apply_spatial,
            )
            .await
        }
        Dataset::Repd => {
            drive(
                &ctx,
                dataset,
                path,
                formats::repd::read(path).map_err(io)?,
                progress,
                apply_spatial,
            )
            .await
        }
    }
}

struct LoadCtx<'a> {
    db: &'a Db,
    source: &'a str,
    now: NaiveDateTime,
    /// Things a loader reports about rows it loaded (an unreadable lease term, say); printed
    /// with the progress after each chunk.
    notes: std::sync::Mutex<Vec<String>>,
    /// The local authority boundaries, read once per load by the spatial loaders.
    lads: tokio::sync::OnceCell<PolygonIndex<String>>,
}

impl LoadCtx<'_> {
    fn note(&self, s: String) {
        if let Ok(mut n) = self.notes.lock() {
            n.push(s);
        }
    }

    fn take_notes(&self) -> Vec<String> {
        self.notes
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }
}

/// What applying one chunk returns: whether the address register changed.
type ApplyFut<'a> = std::pin::Pin<Box<dyn Future<Output = Result<bool, StoreError>> + Send + 'a>>;

type ApplyFn<T> = for<'a> fn(&'a LoadCtx<'a>, Vec<T>, &'a mut RowCounts) -> ApplyFut<'a>;

/// Reads the parser's rows in chunks, applies each chunk, reports progress and rejections, and
/// records the run. `apply` returns whether the chunk changed the address register.
async fn drive<T: Send + 'static>(
    ctx: &LoadCtx<'_>,
    dataset: Dataset,
    path: &Path,
    rows: impl Iterator<Item = Parsed<T>>,
    progress: &mut Progress,
    apply: ApplyFn<T>,
) -> Result<LoadReport, IngestError> {
    let started = Instant::now();
    let file = path.display().to_string();
    let run_id = loads::start_run(ctx.db, dataset.name(), &file, ctx.now).await?;
    let mut counts = RowCounts::default();
    let mut rejections = Vec::new();
    let mut chunk = Vec::with_capacity(CHUNK_ROWS);
    let mut register_changed = false;
    let mut next_report = PROGRESS_EVERY;
    progress.say(&format!("[{}] loading {file}", dataset.name()));
    for item in rows {
        counts.read += 1;
        match item {
            Ok((_line, row)) => chunk.push(row),
            Err(r) => {
                counts.rejected += 1;
                progress.say(&format!("[{}] rejected {r}", dataset.name()));
                rejections.push(r);
            }
        }
        if chunk.len() >= CHUNK_ROWS {
            register_changed |= apply(ctx, std::mem::take(&mut chunk), &mut counts).await?;
            for n in ctx.take_notes() {
                progress.say(&format!("[{}] {file}: {n}", dataset.name()));
            }
        }
        if counts.read >= next_report {
            next_report += PROGRESS_EVERY;
            progress.say(&counts_line(
                dataset.name(),
                &file,
                &counts,
                started.elapsed().as_secs_f64(),
            ));
        }
    }
    if !chunk.is_empty() {
        register_changed |= apply(ctx, chunk, &mut counts).await?;
        for n in ctx.take_notes() {
            progress.say(&format!("[{}] {file}: {n}", dataset.name()));
        }
    }
    let rej: Vec<(i64, String)> = rejections
        .iter()
        .map(|r| (r.line as i64, r.reason.clone()))
        .collect();
    loads::add_rejections(ctx.db, run_id, &rej).await?;
    loads::finish_run(ctx.db, run_id, &counts, Utc::now().naive_utc()).await?;
    if register_changed {
        meta::set(
            ctx.db,
            meta::Key::AddressRegisterVersion,
            &uuid_like(run_id),
        )
        .await?;
    }
    let seconds = started.elapsed().as_secs_f64();
    progress.say(&counts_line(dataset.name(), &file, &counts, seconds));
    Ok(LoadReport {
        dataset: dataset.name().into(),
        file,
        counts,
        rejections,
        seconds,
    })
}

fn uuid_like(run_id: i64) -> String {
    format!(
        "run-{run_id}-{}",
        Utc::now().timestamp_nanos_opt().unwrap_or_default()
    )
}

/// A stored row compared on its content: equal in every column but `updated_at`, so loading a
/// file again counts its rows as unchanged.
trait Content: Clone + PartialEq {
    fn same_content(&self, other: &Self) -> bool;
}

macro_rules! content_ignores_updated_at {
    ($($row:ty),* $(,)?) => {$(
        impl Content for $row {
            fn same_content(&self, other: &Self) -> bool {
                Self { updated_at: other.updated_at, ..self.clone() } == *other
            }
        }
    )*};
}

content_ignores_updated_at!(
    AddressRow,
    address::PostcodeRow,
    address::BoundaryRow,
    epc::EpcRow,
    sales::PricePaidRow,
    sales::PpdUprnLinkRow,
    leases::LeaseRow,
    council_tax::CouncilTaxRow,
    listings::ListingRow,
    lha::LhaRateRow,
    lha::BrmaAreaRow,
    terrace_store::market::HpiRow,
    planning::ApplicationRow,
    planning::CoverageRow,
    rating::RatingEntryRow,
    rating::UarnLinkRow,
    spatial::FeatureRow,
);

/// The in-memory state of one chunk: the stored row (or none) for every key the chunk touches,
/// updated row by row in file order, then written once.
struct Staged<K, R> {
    current: HashMap<K, Option<R>>,
    touched: Vec<K>,
    stored: HashMap<K, bool>,
}

impl<K: Hash + Eq + Clone, R: Content> Staged<K, R> {
    fn new(keys: &[K], existing: Vec<R>, key: impl Fn(&R) -> K) -> Self {
        let mut current: HashMap<K, Option<R>> = keys.iter().map(|k| (k.clone(), None)).collect();
        let mut stored = HashMap::new();
        for r in existing {
            stored.insert(key(&r), true);
            current.insert(key(&r), Some(r));
        }
        Staged {
            current,
            touched: Vec::new(),
            stored,
        }
    }

    fn prev(&self, k: &K) -> Option<&R> {
        self.current.get(k).and_then(Option::as_ref)
    }

    /// Sets the row of `k` (or deletes it with None), counting the input row's effect.
    fn set(&mut self, k: K, new: Option<R>, counts: &mut RowCounts) {
        let prev = self.current.get(&k).cloned().flatten();
        match (&prev, &new) {
            (None, Some(_)) => counts.loaded += 1,
            (Some(p), Some(n)) if p.same_content(n) => {
                counts.unchanged += 1;
                return;
            }
            (Some(_), Some(_)) => counts.updated += 1,
            (Some(_), None) => counts.deleted += 1,
            (None, None) => {
                counts.unchanged += 1;
                return;
            }
        }
        self.current.insert(k.clone(), new);
        self.touched.push(k);
    }

    /// (rows to write, keys to delete).
    fn into_writes(mut self) -> (Vec<R>, Vec<K>) {
        let mut seen = std::collections::HashSet::new();
        let (mut up, mut del) = (Vec::new(), Vec::new());
        for k in self.touched {
            if !seen.insert(k.clone()) {
                continue;
            }
            match self.current.remove(&k).flatten() {
                Some(r) => up.push(r),
                None if self.stored.contains_key(&k) => del.push(k),
                None => {}
            }
        }
        (up, del)
    }
}

fn boxed<'a, T: Send + 'a>(
    f: impl Future<Output = Result<T, StoreError>> + Send + 'a,
) -> std::pin::Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>> {
    Box::pin(f)
}

/// Merges rows into the stored addresses they name: `merge(row, stored)` gives the new address,
/// or None to leave it as it is (not counted); the chunk is written in one transaction.
/// Returns whether the register changed.
async fn merge_addresses<R>(
    ctx: &LoadCtx<'_>,
    rows: Vec<R>,
    counts: &mut RowCounts,
    uprn: impl Fn(&R) -> i64,
    merge: impl Fn(R, Option<AddressRow>) -> Option<AddressRow>,
) -> Result<bool, StoreError> {
    let keys: Vec<i64> = rows.iter().map(&uprn).collect();
    let existing = address::addresses_by_uprn(ctx.db, &keys).await?;
    let mut st = Staged::new(&keys, existing, |r: &AddressRow| r.uprn);
    for r in rows {
        let k = uprn(&r);
        let prev = st.prev(&k).cloned();
        if let Some(new) = merge(r, prev) {
            st.set(k, Some(new), counts);
        }
    }
    let (up, _) = st.into_writes();
    let changed = !up.is_empty();
    address::replace_addresses(ctx.db, up).await?;
    Ok(changed)
}

fn apply_addressbase<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::addressbase::AddressRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(merge_addresses(
        ctx,
        rows,
        counts,
        |r| r.uprn,
        |r, prev| {
            let prev = prev.unwrap_or_default();
            let has_pos = r.x.is_some() && r.y.is_some();
            Some(AddressRow {
                uprn: r.uprn,
                parent_uprn: r.parent_uprn,
                class: r.class,
                saon: r.saon,
                paon: r.paon,
                street: r.street,
                locality: r.locality,
                town: r.town,
                postcode: r.postcode,
                x: if has_pos { r.x } else { prev.x },
                y: if has_pos { r.y } else { prev.y },
                lat: if has_pos { r.lat } else { prev.lat },
                lon: if has_pos { r.lon } else { prev.lon },
                lad_code: prev.lad_code,
                lsoa_code: prev.lsoa_code,
                address_source: Some(ctx.source.to_string()),
                position_source: if has_pos {
                    Some(ctx.source.to_string())
                } else {
                    prev.position_source
                },
                updated_at: ctx.now,
            })
        },
    ))
}

fn apply_open_uprn<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::open_uprn::UprnRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(merge_addresses(
        ctx,
        rows,
        counts,
        |r| r.uprn,
        |r, prev| {
            // A better position source (the full register) is never overwritten by Open UPRN.
            let keep_pos = prev.as_ref().is_some_and(|p| {
                p.position_source
                    .as_deref()
                    .is_some_and(|s| s.contains("addressbase"))
            });
            let base = prev.unwrap_or(AddressRow {
                uprn: r.uprn,
                ..Default::default()
            });
            Some(if keep_pos {
                base
            } else {
                AddressRow {
                    x: Some(r.x),
                    y: Some(r.y),
                    lat: Some(r.lat),
                    lon: Some(r.lon),
                    position_source: Some(ctx.source.to_string()),
                    updated_at: ctx.now,
                    ..base
                }
            })
        },
    ))
}

fn empty_postcode(pc: &str, ctx: &LoadCtx<'_>) -> address::PostcodeRow {
    address::PostcodeRow {
        postcode: pc.to_string(),
        easting: None,
        northing: None,
        lat: None,
        lon: None,
        lad_code: None,
        lsoa_code: None,
        country_code: None,
        quality: None,
        terminated: false,
        source: ctx.source.to_string(),
        updated_at: ctx.now,
    }
}

/// The sources a merged row was built from: a sorted, `+`-joined set, so loading either file again
/// changes nothing.
fn merge_source(prev: &str, new: &str) -> String {
    let mut parts: Vec<&str> = prev
        .split('+')
        .chain([new])
        .filter(|s| !s.is_empty())
        .collect();
    parts.sort_unstable();
    parts.dedup();
    parts.join("+")
}

fn wgs84(e: Option<f64>, n: Option<f64>) -> (Option<f64>, Option<f64>) {
    match (e, n) {
        (Some(e), Some(n)) => match terrace_geo::wgs84_from_bng(e, n) {
            Some((lon, lat)) => (Some(lat), Some(lon)),
            None => (None, None),
        },
        _ => (None, None),
    }
}

/// Merges rows into the stored postcodes they name: `merge(row, stored or empty)` gives the new
/// postcode row; the chunk is written in one transaction.
async fn merge_postcodes<R>(
    ctx: &LoadCtx<'_>,
    rows: Vec<R>,
    counts: &mut RowCounts,
    postcode: impl Fn(&R) -> String,
    merge: impl Fn(R, address::PostcodeRow) -> address::PostcodeRow,
) -> Result<bool, StoreError> {
    let keys: Vec<String> = rows.iter().map(&postcode).collect();
    let existing = address::postcodes_by_key(ctx.db, &keys).await?;
    let mut st = Staged::new(&keys, existing, |r: &address::PostcodeRow| {
        r.postcode.clone()
    });
    for r in rows {
        let k = postcode(&r);
        let prev = st
            .prev(&k)
            .cloned()
            .unwrap_or_else(|| empty_postcode(&k, ctx));
        let new = address::PostcodeRow {
            source: merge_source(&prev.source, ctx.source),
            updated_at: ctx.now,
            ..merge(r, prev)
        };
        st.set(k, Some(new), counts);
    }
    let (up, _) = st.into_writes();
    address::replace_postcodes(ctx.db, up).await?;
    Ok(false)
}

fn apply_codepoint<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::codepoint::CodePointRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(merge_postcodes(
        ctx,
        rows,
        counts,
        |r| r.postcode.clone(),
        |r, prev| {
            let (lat, lon) = wgs84(r.easting, r.northing);
            // Code-Point Open is the positional product: its position wins; the postcode
            // directory's area codes win over its admin codes.
            address::PostcodeRow {
                easting: r.easting.or(prev.easting),
                northing: r.northing.or(prev.northing),
                lat: lat.or(prev.lat),
                lon: lon.or(prev.lon),
                lad_code: prev.lad_code.clone().or(r.admin_district_code),
                country_code: prev.country_code.clone().or(r.country_code),
                quality: Some(r.quality),
                ..prev
            }
        },
    ))
}

fn apply_onspd<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::onspd::OnspdRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(merge_postcodes(
        ctx,
        rows,
        counts,
        |r| r.postcode.clone(),
        |r, prev| {
            let (lat, lon) = match (r.lat, r.lon) {
                (Some(a), Some(o)) => (Some(a), Some(o)),
                _ => wgs84(r.easting, r.northing),
            };
            // A position from Code-Point Open is kept; the directory fills one that is missing.
            let has_pos = prev.easting.is_some() && prev.northing.is_some();
            address::PostcodeRow {
                easting: if has_pos { prev.easting } else { r.easting },
                northing: if has_pos { prev.northing } else { r.northing },
                lat: if has_pos { prev.lat } else { lat },
                lon: if has_pos { prev.lon } else { lon },
                lad_code: r.lad_code.or(prev.lad_code.clone()),
                lsoa_code: r.lsoa_code.or(prev.lsoa_code.clone()),
                country_code: r.country_code.or(prev.country_code.clone()),
                terminated: r.terminated,
                ..prev
            }
        },
    ))
}

fn apply_boundaries<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::boundaries::BoundaryRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(async move {
        let keys: Vec<String> = rows.iter().map(|r| r.code.clone()).collect();
        let existing = address::boundaries_by_code(ctx.db, &keys).await?;
        let mut st = Staged::new(&keys, existing, |r: &address::BoundaryRow| r.code.clone());
        for r in rows {
            // The parser rejects empty geometries, so every row here has a bounding box.
            let [min_x, min_y, max_x, max_y] =
                terrace_geo::bbox(&r.geometry).unwrap_or([f64::NAN; 4]);
            let new = address::BoundaryRow {
                code: r.code.clone(),
                kind: r.kind,
                name: r.name,
                wkb: terrace_geo::multipolygon_to_wkb(&r.geometry),
                min_x,
                min_y,
                max_x,
                max_y,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            };
            st.set(r.code, Some(new), counts);
        }
        let (up, _) = st.into_writes();
        address::replace_boundaries(ctx.db, up).await?;
        Ok(false)
    })
}

fn apply_epc<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::epc::EpcRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(async move {
        let keys: Vec<String> = rows.iter().map(|r| r.lmk_key.clone()).collect();
        let existing = epc::epc_by_key(ctx.db, &keys).await?;
        let mut st = Staged::new(&keys, existing, |r: &epc::EpcRow| r.lmk_key.clone());
        // The newest certificate per UPRN in this chunk gives the address text.
        let mut texts: HashMap<
            i64,
            (
                Option<chrono::NaiveDate>,
                crate::addresses::Parts,
                Option<String>,
            ),
        > = HashMap::new();
        for r in rows {
            if let Some(uprn) = r.uprn {
                let lines: Vec<&str> = [&r.address1, &r.address2, &r.address3]
                    .into_iter()
                    .filter_map(|l| l.as_deref())
                    .collect();
                let lines = if lines.is_empty() {
                    r.address.as_deref().into_iter().collect()
                } else {
                    lines
                };
                let mut parts = split_lines(&lines);
                let post_town = r
                    .fields
                    .iter()
                    .find(|(k, _)| k == "posttown")
                    .map(|(_, v)| v.to_uppercase());
                if let Some(town) = post_town
                    && parts.town.as_deref() != Some(town.as_str())
                {
                    // The post town is the town; the last address line becomes locality.
                    if let Some(t) = parts.town.take() {
                        parts.locality =
                            Some(parts.locality.map_or(t.clone(), |l| format!("{l}, {t}")));
                    }
                    parts.town = Some(town);
                }
                let newer = texts
                    .get(&uprn)
                    .is_none_or(|(d, _, _)| r.lodgement_date >= *d);
                if newer {
                    texts.insert(uprn, (r.lodgement_date, parts, r.postcode.clone()));
                }
            }
            let fields: serde_json::Map<String, serde_json::Value> = r
                .fields
                .into_iter()
                .map(|(k, v)| (k, serde_json::Value::String(v)))
                .collect();
            let new = epc::EpcRow {
                lmk_key: r.lmk_key.clone(),
                uprn: r.uprn,
                address: r.address,
                postcode: r.postcode,
                current_rating: r.current_energy_rating,
                potential_rating: r.potential_energy_rating,
                current_efficiency: r.current_energy_efficiency,
                potential_efficiency: r.potential_energy_efficiency,
                property_type: r.property_type,
                built_form: r.built_form,
                total_floor_area: r.total_floor_area,
                habitable_rooms: r.number_habitable_rooms,
                lodgement_date: r.lodgement_date,
                inspection_date: r.inspection_date,
                tenure: r.tenure,
                main_fuel: r.main_fuel,
                local_authority: r.local_authority,
                fields_json: serde_json::Value::Object(fields).to_string(),
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            };
            st.set(r.lmk_key, Some(new), counts);
        }
        let (up, _) = st.into_writes();
        epc::replace_epc(ctx.db, up).await?;
        // Address text from certificates, where the register has none or only EPC text.
        let mut scratch = RowCounts::default();
        merge_addresses(
            ctx,
            texts.into_iter().collect(),
            &mut scratch,
            |(uprn, _)| *uprn,
            |(uprn, (_, parts, postcode)), prev| {
                let owned_by_other = prev.as_ref().is_some_and(|p| {
                    p.address_source
                        .as_deref()
                        .is_some_and(|s| !s.contains("epc"))
                });
                if owned_by_other {
                    return None;
                }
                let base = prev.unwrap_or(AddressRow {
                    uprn,
                    ..Default::default()
                });
                Some(AddressRow {
                    saon: parts.saon,
                    paon: parts.paon,
                    street: parts.street,
                    locality: parts.locality,
                    town: parts.town,
                    postcode: postcode.or(base.postcode.clone()),
                    address_source: Some(ctx.source.to_string()),
                    updated_at: ctx.now,
                    ..base
                })
            },
        )
        .await
    })
}

/// How a sale linked by HM Land Registry's lookup says it was matched.
pub const LOOKUP_METHOD: &str = "hmlr_uprn_lookup";

fn apply_ppd_uprn<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::ppd_uprn::LinkRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(async move {
        let keys: Vec<String> = rows.iter().map(|r| r.transaction_id.clone()).collect();
        let existing = sales::ppd_links_by_id(ctx.db, &keys).await?;
        let mut st = Staged::new(&keys, existing, |r: &sales::PpdUprnLinkRow| {
            r.transaction_id.clone()
        });
        for r in rows {
            let new = sales::PpdUprnLinkRow {
                transaction_id: r.transaction_id.clone(),
                uprn: r.uprn,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            };
            st.set(r.transaction_id, Some(new), counts);
        }
        let (links, _) = st.into_writes();
        // Sales already loaded take the link now; sales loaded later take it on load.
        let ids: Vec<String> = links.iter().map(|l| l.transaction_id.clone()).collect();
        let by_id: HashMap<&str, i64> = links
            .iter()
            .map(|l| (l.transaction_id.as_str(), l.uprn))
            .collect();
        let sales: Vec<sales::PricePaidRow> = sales::price_paid_by_id(ctx.db, &ids)
            .await?
            .into_iter()
            .filter_map(|s| {
                let uprn = *by_id.get(s.transaction_id.as_str())?;
                Some(sales::PricePaidRow {
                    uprn: Some(uprn),
                    match_method: Some(LOOKUP_METHOD.to_string()),
                    match_score: Some(1.0),
                    updated_at: ctx.now,
                    ..s
                })
            })
            .collect();
        sales::replace_ppd_links(ctx.db, links).await?;
        sales::replace_price_paid(ctx.db, sales).await?;
        Ok(false)
    })
}

fn apply_leases<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::leases::LeaseRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(async move {
        let keys: Vec<String> = rows.iter().map(|r| r.unique_id.clone()).collect();
        let existing = leases::leases_by_id(ctx.db, &keys).await?;
        let mut st = Staged::new(&keys, existing, |r: &leases::LeaseRow| r.unique_id.clone());
        for r in rows {
            if let Some(problem) = &r.term_problem {
                ctx.note(format!(
                    "lease {}: term {:?} not read ({problem}); loaded without a term",
                    r.unique_id,
                    r.term_text.as_deref().unwrap_or_default()
                ));
            }
            let term = r.term.as_ref();
            let new = leases::LeaseRow {
                unique_id: r.unique_id.clone(),
                uprn: r.uprn,
                tenure: r.tenure,
                register_description: r.register_description,
                county: r.county,
                region: r.region,
                associated_description_id: r.associated_description_id,
                associated_description: r.associated_description,
                price_paid: r.price_paid,
                reg_order: r.reg_order,
                date_of_lease: r.date_of_lease,
                term_text: r.term_text,
                term_years: term.and_then(|t| i32::try_from(t.years).ok()),
                term_less_days: term.and_then(|t| i32::try_from(t.less_days).ok()),
                term_start: term.map(|t| t.start),
                term_end: term.map(|t| t.end()),
                term_problem: r.term_problem,
                alienation_clause: r.alienation_clause,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            };
            st.set(r.unique_id, Some(new), counts);
        }
        let (up, _) = st.into_writes();
        leases::replace_leases(ctx.db, up).await?;
        Ok(false)
    })
}

/// How a council tax entry that carries its own UPRN says it was matched.
pub const LIST_UPRN_METHOD: &str = "list_uprn";

fn apply_council_tax<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::council_tax::CouncilTaxRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(async move {
        let keys: Vec<String> = rows.iter().map(|r| r.reference.clone()).collect();
        let existing = council_tax::council_tax_by_ref(ctx.db, &keys).await?;
        let mut st = Staged::new(&keys, existing, |r: &council_tax::CouncilTaxRow| {
            r.reference.clone()
        });
        for r in rows {
            let prev = st.prev(&r.reference).cloned();
            // The list's own UPRN wins; else an earlier match stands while the address is unchanged.
            let same_addr = prev
                .as_ref()
                .is_some_and(|p| p.address == r.address && p.postcode == r.postcode);
            let (uprn, match_method, match_score) = match (r.uprn, prev.filter(|_| same_addr)) {
                (Some(u), _) => (Some(u), Some(LIST_UPRN_METHOD.to_string()), Some(1.0)),
                (None, Some(p)) => (p.uprn, p.match_method, p.match_score),
                (None, None) => (None, None, None),
            };
            let new = council_tax::CouncilTaxRow {
                reference: r.reference.clone(),
                billing_authority: r.billing_authority,
                address: r.address,
                postcode: r.postcode,
                band: r.band,
                uprn,
                match_method,
                match_score,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            };
            st.set(r.reference, Some(new), counts);
        }
        let (up, _) = st.into_writes();
        council_tax::replace_council_tax(ctx.db, up).await?;
        Ok(false)
    })
}

fn apply_lha_rates<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::lha::LhaRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(async move {
        let key = |r: &formats::lha::LhaRow| {
            let from = r.valid_from.map(|d| d.to_string()).unwrap_or_default();
            format!("{}|{}|{from}", r.brma, r.category)
        };
        let keys: Vec<String> = rows.iter().map(key).collect();
        let existing = lha::lha_rates_by_key(ctx.db, &keys).await?;
        let mut st = Staged::new(&keys, existing, |r: &lha::LhaRateRow| r.rate_key.clone());
        for r in rows {
            let k = key(&r);
            let new = lha::LhaRateRow {
                rate_key: k.clone(),
                brma: r.brma,
                brma_code: r.brma_code,
                category: r.category,
                weekly_rate_pence: r.weekly_rate_pence,
                valid_from: r.valid_from,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            };
            st.set(k, Some(new), counts);
        }
        let (up, _) = st.into_writes();
        lha::replace_lha_rates(ctx.db, up).await?;
        Ok(false)
    })
}

fn apply_brma_areas<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::brma::BrmaAreaRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(async move {
        let key = |r: &formats::brma::BrmaAreaRow| format!("{}|{}", r.area, r.brma);
        let keys: Vec<String> = rows.iter().map(key).collect();
        let existing = lha::brma_areas_by_key(ctx.db, &keys).await?;
        let mut st = Staged::new(&keys, existing, |r: &lha::BrmaAreaRow| r.area_key.clone());
        for r in rows {
            let k = key(&r);
            let new = lha::BrmaAreaRow {
                area_key: k.clone(),
                area: r.area,
                area_kind: r.kind.to_string(),
                brma: r.brma,
                brma_code: r.brma_code,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            };
            st.set(k, Some(new), counts);
        }
        let (up, _) = st.into_writes();
        lha::replace_brma_areas(ctx.db, up).await?;
        Ok(false)
    })
}

fn apply_uk_hpi<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::uk_hpi::HpiRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(async move {
        use terrace_store::market as mk;
        let key =
            |r: &formats::uk_hpi::HpiRow| format!("{}|{}", r.area_code, r.month.format("%Y-%m"));
        let keys: Vec<String> = rows.iter().map(key).collect();
        let existing = mk::hpi_by_key(ctx.db, &keys).await?;
        let mut st = Staged::new(&keys, existing, |r: &mk::HpiRow| r.hpi_key.clone());
        for r in rows {
            let k = key(&r);
            let new = mk::HpiRow {
                hpi_key: k.clone(),
                month: r.month.format("%Y-%m").to_string(),
                area_code: r.area_code,
                region_name: r.region_name,
                hpi_index: r.index,
                average_price: r.average_price,
                sales_volume: r.sales_volume,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            };
            st.set(k, Some(new), counts);
        }
        let (up, _) = st.into_writes();
        mk::replace_hpi(ctx.db, up).await?;
        Ok(false)
    })
}

/// How a planning application that carries its own UPRN says it was matched.
pub const APPLICATION_UPRN_METHOD: &str = "application_uprn";
/// How a UARN linked by a lookup file says it was matched.
pub const UARN_LOOKUP_METHOD: &str = "uarn_uprn_lookup";

fn apply_planning_applications<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::planning_applications::ApplicationRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(async move {
        let keys: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
        let existing = planning::applications_by_id(ctx.db, &keys).await?;
        let mut st = Staged::new(&keys, existing, |r: &planning::ApplicationRow| {
            r.application_id.clone()
        });
        for r in rows {
            let prev = st.prev(&r.id).cloned();
            // The application's own UPRN wins; else an earlier match stands while the address is
            // unchanged.
            let same_addr = prev
                .as_ref()
                .is_some_and(|p| p.address == r.address && p.postcode == r.postcode);
            let (uprn, match_method, match_score) = match (r.uprn, prev.filter(|_| same_addr)) {
                (Some(u), _) => (
                    Some(u),
                    Some(APPLICATION_UPRN_METHOD.to_string()),
                    Some(1.0),
                ),
                (None, Some(p)) => (p.uprn, p.match_method, p.match_score),
                (None, None) => (None, None, None),
            };
            let new = planning::ApplicationRow {
                application_id: r.id.clone(),
                reference: r.reference,
                authority: r.authority,
                address: r.address,
                postcode: r.postcode,
                uprn,
                match_method,
                match_score,
                x: r.point.map(|p| p.0),
                y: r.point.map(|p| p.1),
                received_date: r.received_date,
                validated_date: r.validated_date,
                decision_date: r.decision_date,
                decision: r.decision,
                appeal_decision: r.appeal_decision,
                appeal_date: r.appeal_date,
                cil_liable: r.cil_liable,
                cil_amount: r.cil_amount,
                development_type: r.development_type,
                description: r.description,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            };
            st.set(r.id, Some(new), counts);
        }
        let (up, _) = st.into_writes();
        planning::replace_applications(ctx.db, up).await?;
        Ok(false)
    })
}

fn apply_planning_coverage<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::planning_coverage::CoverageRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(async move {
        let keys: Vec<String> = rows.iter().map(|r| r.lad_code.clone()).collect();
        let existing = planning::coverage_by_code(ctx.db, &keys).await?;
        let mut st = Staged::new(&keys, existing, |r: &planning::CoverageRow| {
            r.lad_code.clone()
        });
        for r in rows {
            let new = planning::CoverageRow {
                lad_code: r.lad_code.clone(),
                name: r.name,
                organisation: r.organisation,
                organisation_entity: r.organisation_entity,
                start_date: r.start_date,
                end_date: r.end_date,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            };
            st.set(r.lad_code, Some(new), counts);
        }
        let (up, _) = st.into_writes();
        planning::replace_coverage(ctx.db, up).await?;
        Ok(false)
    })
}

fn apply_voa_list<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::voa_list::ListEntry>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(async move {
        let key = |year: i32, uarn: i64| format!("{year}:{uarn}");
        let keys: Vec<String> = rows.iter().map(|r| key(r.list_year, r.uarn)).collect();
        let existing = rating::entries_by_key(ctx.db, &keys).await?;
        let mut st = Staged::new(&keys, existing, |r: &rating::RatingEntryRow| {
            r.entry_key.clone()
        });
        for r in rows {
            let k = key(r.list_year, r.uarn);
            // One entry per list and UARN: the one with the latest effective date stands; an
            // older entry of the same UARN in the same list leaves it as it is.
            if st
                .prev(&k)
                .is_some_and(|p| p.effective_date > r.effective_date)
            {
                counts.unchanged += 1;
                continue;
            }
            let new = rating::RatingEntryRow {
                entry_key: k.clone(),
                list_year: r.list_year,
                uarn: r.uarn,
                billing_authority: r.billing_authority,
                ba_reference: r.ba_reference,
                description_code: r.description_code,
                description_text: r.description_text,
                scat_code: r.scat_code,
                firm_name: r.firm_name,
                address: r.address,
                postcode: r.postcode,
                rateable_value: r.rateable_value,
                effective_date: r.effective_date,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            };
            st.set(k, Some(new), counts);
        }
        let (up, _) = st.into_writes();
        rating::replace_entries(ctx.db, up).await?;
        Ok(false)
    })
}

fn apply_uarn_uprn<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::uarn_uprn::UarnLink>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(async move {
        let keys: Vec<i64> = rows.iter().map(|r| r.uarn).collect();
        let existing = rating::links_by_uarn(ctx.db, &keys).await?;
        let mut st = Staged::new(&keys, existing, |r: &rating::UarnLinkRow| r.uarn);
        for r in rows {
            let new = rating::UarnLinkRow {
                uarn: r.uarn,
                uprn: r.uprn,
                match_method: UARN_LOOKUP_METHOD.to_string(),
                match_score: Some(1.0),
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            };
            st.set(r.uarn, Some(new), counts);
        }
        let (up, _) = st.into_writes();
        rating::replace_links(ctx.db, up).await?;
        Ok(false)
    })
}

/// The change-log events a listing's snapshots imply: the new listing, then every price
/// reduction or increase and every status change between consecutive snapshots.
fn listing_events(
    id: &str,
    first_seen: NaiveDateTime,
    first_price: Option<i64>,
    snaps: &[listings::SnapshotRow],
) -> Vec<listings::NewEvent> {
    let event = |kind: &str,
                 time,
                 price,
                 previous_price,
                 status: Option<String>,
                 previous_status: Option<String>| listings::NewEvent {
        listing_id: id.to_string(),
        event_type: kind.to_string(),
        time,
        price,
        previous_price,
        status,
        previous_status,
    };
    let mut out = vec![event(
        "new_listing",
        first_seen,
        first_price,
        None,
        snaps.first().and_then(|s| s.status.clone()),
        None,
    )];
    for pair in snaps.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if let (Some(p0), Some(p1)) = (a.price, b.price)
            && p0 != p1
        {
            let kind = if p1 < p0 {
                "price_reduction"
            } else {
                "price_increase"
            };
            out.push(event(
                kind,
                b.time,
                Some(p1),
                Some(p0),
                b.status.clone(),
                None,
            ));
        }
        if let (Some(s0), Some(s1)) = (&a.status, &b.status)
            && s0 != s1
        {
            out.push(event(
                "status_change",
                b.time,
                b.price,
                None,
                Some(s1.clone()),
                Some(s0.clone()),
            ));
        }
    }
    out
}

fn apply_listings<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::listings::ListingRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(async move {
        let keys: Vec<String> = rows.iter().map(|r| r.listing_id.clone()).collect();
        let existing = listings::listings_by_id(ctx.db, &keys).await?;
        let mut st = Staged::new(&keys, existing, |r: &listings::ListingRow| {
            r.listing_id.clone()
        });
        // The feed is append-only: a listing's snapshots are the union of what is stored and
        // what this file says, by time (a later line for the same time wins).
        let mut snaps: std::collections::BTreeMap<(String, NaiveDateTime), listings::SnapshotRow> =
            listings::snapshots_of(ctx.db, &keys)
                .await?
                .into_iter()
                .map(|s| ((s.listing_id.clone(), s.time), s))
                .collect();
        for r in &rows {
            for s in &r.snapshots {
                let t = s.time.naive_utc();
                snaps.insert(
                    (r.listing_id.clone(), t),
                    listings::SnapshotRow {
                        listing_id: r.listing_id.clone(),
                        time: t,
                        price: s.price,
                        status: s.status.clone(),
                    },
                );
            }
        }
        let mut events = Vec::new();
        for r in rows {
            let own: Vec<listings::SnapshotRow> = snaps
                .range(
                    (r.listing_id.clone(), NaiveDateTime::MIN)
                        ..=(r.listing_id.clone(), NaiveDateTime::MAX),
                )
                .map(|(_, v)| v.clone())
                .collect();
            let first_seen = st
                .prev(&r.listing_id)
                .map_or(r.first_seen.naive_utc(), |p| {
                    p.first_seen.min(r.first_seen.naive_utc())
                });
            let first_price = own.iter().find_map(|s| s.price).or(r.price);
            events.extend(listing_events(&r.listing_id, first_seen, first_price, &own));
            let last = own.last();
            let new = listings::ListingRow {
                listing_id: r.listing_id.clone(),
                channel: r.channel,
                address: r.address,
                postcode: r.postcode,
                uprn: r.uprn,
                price: last.and_then(|s| s.price).or(r.price),
                bedrooms: r.bedrooms,
                property_type: r.property_type,
                agent: r.agent,
                first_seen,
                last_seen: last.map(|s| s.time),
                last_status: last.and_then(|s| s.status.clone()),
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            };
            st.set(r.listing_id, Some(new), counts);
        }
        let (up, _) = st.into_writes();
        listings::replace_listings(ctx.db, up).await?;
        listings::replace_snapshots(ctx.db, keys.clone(), snaps.into_values().collect()).await?;
        // Append only the events the log does not hold yet, in time order.
        let held: std::collections::HashSet<(String, String, NaiveDateTime)> =
            listings::events_of(ctx.db, &keys)
                .await?
                .into_iter()
                .map(|e| (e.listing_id, e.event_type, e.time))
                .collect();
        let mut fresh: Vec<listings::NewEvent> = events
            .into_iter()
            .filter(|e| !held.contains(&(e.listing_id.clone(), e.event_type.clone(), e.time)))
            .collect();
        fresh.sort_by(|a, b| (a.time, &a.listing_id).cmp(&(b.time, &b.listing_id)));
        if !fresh.is_empty() {
            ctx.note(format!("{} change-log events appended", fresh.len()));
        }
        listings::append_events(ctx.db, fresh).await?;
        Ok(false)
    })
}

fn apply_price_paid<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::price_paid::PricePaidRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(async move {
        let keys: Vec<String> = rows.iter().map(|r| r.transaction_id.clone()).collect();
        let existing = sales::price_paid_by_id(ctx.db, &keys).await?;
        let links: HashMap<String, i64> = sales::ppd_links_by_id(ctx.db, &keys)
            .await?
            .into_iter()
            .map(|l| (l.transaction_id, l.uprn))
            .collect();
        let mut st = Staged::new(&keys, existing, |r: &sales::PricePaidRow| {
            r.transaction_id.clone()
        });
        for r in rows {
            let id = r.transaction_id.clone();
            if r.record_status == "D" {
                st.set(id, None, counts);
                continue;
            }
            let prev = st.prev(&id).cloned();
            // Keep an earlier UPRN match while the address it was made on is unchanged.
            let same_addr = prev.as_ref().is_some_and(|p| {
                p.postcode == r.postcode
                    && p.paon == r.paon
                    && p.saon == r.saon
                    && p.street == r.street
            });
            // HM Land Registry's own link wins over the address matcher.
            let (uprn, match_method, match_score) =
                match (links.get(&id), prev.filter(|_| same_addr)) {
                    (Some(u), _) => (Some(*u), Some(LOOKUP_METHOD.to_string()), Some(1.0)),
                    (None, Some(p)) => (p.uprn, p.match_method, p.match_score),
                    (None, None) => (None, None, None),
                };
            let new = sales::PricePaidRow {
                transaction_id: id.clone(),
                price: r.price,
                date: r.date,
                postcode: r.postcode,
                property_type: r.property_type,
                new_build: r.new_build,
                tenure: r.tenure,
                paon: r.paon,
                saon: r.saon,
                street: r.street,
                locality: r.locality,
                town: r.town,
                district: r.district,
                county: r.county,
                ppd_category: r.ppd_category,
                uprn,
                match_method,
                match_score,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            };
            st.set(id, Some(new), counts);
        }
        let (up, del) = st.into_writes();
        sales::delete_price_paid(ctx.db, &del).await?;
        sales::replace_price_paid(ctx.db, up).await?;
        Ok(false)
    })
}

/// The local authority boundaries as an index (read once per load).
async fn lad_index<'a>(ctx: &'a LoadCtx<'a>) -> Result<&'a PolygonIndex<String>, StoreError> {
    ctx.lads
        .get_or_try_init(|| async {
            let rows = address::boundaries_of_kind(ctx.db, "lad").await?;
            let items = rows
                .into_iter()
                .filter_map(|b| {
                    terrace_geo::multipolygon_from_wkb(&b.wkb)
                        .ok()
                        .map(|mp| (mp, b.code))
                })
                .collect();
            Ok(PolygonIndex::build(items))
        })
        .await
}

/// Spatial features (designations, flood layers, coal areas, substations, renewable projects),
/// merged by `<dataset>:<reference>`, and the coverage they imply: each local authority that
/// holds a feature's representative point (a point inside a polygon, or the point itself) is
/// recorded as covered by the feature's dataset, with the newest entry date as its vintage.
fn apply_spatial<'a>(
    ctx: &'a LoadCtx<'a>,
    rows: Vec<formats::spatial::SpatialRow>,
    counts: &'a mut RowCounts,
) -> ApplyFut<'a> {
    boxed(async move {
        use geo::InteriorPoint;
        let lads = lad_index(ctx).await?;
        if lads.is_empty() {
            ctx.note(
                "no local authority boundaries are loaded: coverage is not recorded, so the risk \
                 report answers not_checked for these features everywhere; load boundaries first"
                    .into(),
            );
        }
        let keys: Vec<String> = rows
            .iter()
            .map(|r| format!("{}:{}", r.dataset, r.reference))
            .collect();
        let existing = spatial::features_by_id(ctx.db, &keys).await?;
        let mut st = Staged::new(&keys, existing, |r: &FeatureRow| r.id.clone());
        let mut cover: std::collections::BTreeMap<(String, String), Option<chrono::NaiveDate>> =
            Default::default();
        for (id, r) in keys.iter().cloned().zip(rows) {
            let (wkb, x, y, bbox, rep) = match &r.shape {
                Shape::Area(mp) => (
                    Some(terrace_geo::multipolygon_to_wkb(mp)),
                    None,
                    None,
                    terrace_geo::bbox(mp).unwrap_or([f64::NAN; 4]),
                    mp.interior_point(),
                ),
                Shape::Point(x, y) => (
                    None,
                    Some(*x),
                    Some(*y),
                    [*x, *y, *x, *y],
                    Some(geo::Point::new(*x, *y)),
                ),
            };
            if let Some(p) = rep {
                for lad in lads.containing(p) {
                    let v = cover.entry((r.dataset.clone(), lad.clone())).or_default();
                    *v = (*v).max(r.entry_date);
                }
            }
            let attributes: serde_json::Map<String, serde_json::Value> = r
                .attributes
                .into_iter()
                .map(|(k, v)| (k, serde_json::Value::String(v)))
                .collect();
            let [min_x, min_y, max_x, max_y] = bbox;
            let new = FeatureRow {
                id: id.clone(),
                dataset: r.dataset,
                reference: Some(r.reference),
                name: r.name,
                category: r.category,
                status: r.status,
                value: r.value,
                organisation: r.organisation,
                entry_date: r.entry_date,
                wkb,
                x,
                y,
                min_x,
                min_y,
                max_x,
                max_y,
                attributes_json: serde_json::Value::Object(attributes).to_string(),
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            };
            st.set(id, Some(new), counts);
        }
        let (up, _) = st.into_writes();
        let mut changed = !up.is_empty();
        spatial::replace_features(ctx.db, up).await?;
        // Coverage: new authorities, or a newer vintage, are written; the rest stand.
        let ids: Vec<String> = cover.keys().map(|(d, l)| CoverageRow::key(d, l)).collect();
        let held: HashMap<String, CoverageRow> = spatial::coverage_by_id(ctx.db, &ids)
            .await?
            .into_iter()
            .map(|c| (c.id.clone(), c))
            .collect();
        let mut writes = Vec::new();
        for ((dataset, lad), vintage) in cover {
            let id = CoverageRow::key(&dataset, &lad);
            let prev = held.get(&id);
            let vintage = prev.and_then(|p| p.vintage).max(vintage);
            if prev.is_some_and(|p| p.vintage == vintage && p.source == ctx.source) {
                continue;
            }
            writes.push(CoverageRow {
                id,
                dataset,
                lad_code: lad,
                vintage,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            });
        }
        changed |= !writes.is_empty();
        spatial::replace_coverage(ctx.db, writes).await?;
        if changed {
            let version = format!("{}", Utc::now().timestamp_nanos_opt().unwrap_or_default());
            meta::set(ctx.db, meta::Key::SpatialLayersVersion, &version).await?;
        }
        Ok(false)
    })
}

/// `fixtures/manifest.json`: which files to load, in order.
#[derive(Debug, Deserialize)]
struct Manifest {
    files: Vec<ManifestFile>,
}

#[derive(Debug, Deserialize)]
struct ManifestFile {
    path: String,
    dataset: String,
}

/// Loads every file a manifest lists (the fixture world), in dependency order, then derives
/// areas and links sales to UPRNs.
pub async fn load_manifest(
    db: &Db,
    dir: &Path,
    progress: &mut Progress,
) -> Result<Vec<LoadReport>, IngestError> {
    let mpath = dir.join("manifest.json");
    let text = std::fs::read_to_string(&mpath).map_err(|source| IngestError::Io {
        file: mpath.display().to_string(),
        source,
    })?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| IngestError::Manifest {
        file: mpath.display().to_string(),
        message: e.to_string(),
    })?;
    let mut files: Vec<(Dataset, PathBuf)> = Vec::new();
    for f in &manifest.files {
        let path = dir.join(&f.path);
        // The manifest names datasets for people; the loader is known by code or by the file.
        let ds = Dataset::parse(&f.dataset)
            .ok()
            .or_else(|| formats::sniff(&path).and_then(|name| Dataset::parse(name).ok()));
        match ds {
            Some(ds) => files.push((ds, path)),
            None => progress.say(&format!(
                "[manifest] {} ({}) is not a loadable dataset: skipped",
                f.path, f.dataset
            )),
        }
    }
    let order = |d: &Dataset| match d {
        Dataset::Boundaries => 0,
        Dataset::CodePoint => 1,
        Dataset::Onspd => 2,
        Dataset::AddressBase => 3,
        Dataset::OpenUprn => 4,
        Dataset::Epc => 5,
        Dataset::PricePaid => 6,
        Dataset::PpdUprn => 7,
        Dataset::Leases => 8,
        Dataset::CouncilTax => 9,
        Dataset::Listings => 10,
        Dataset::LhaRates => 11,
        Dataset::BrmaLookup => 12,
        Dataset::UkHpi => 13,
        Dataset::PlanningCoverage => 14,
        Dataset::PlanningApplications => 15,
        Dataset::VoaRatingList => 16,
        Dataset::UarnUprn => 17,
        Dataset::PlanningData | Dataset::Layer(_) | Dataset::Substations | Dataset::Repd => 18,
    };
    files.sort_by_key(|(d, _)| order(d));
    let mut reports = Vec::new();
    for (ds, path) in files {
        reports.push(load_file(db, ds, &path, LoadOptions { fixture: true }, progress).await?);
    }
    crate::derive::derive_areas(db, progress).await?;
    crate::derive::link_to_uprns(db, progress).await?;
    Ok(reports)
}
