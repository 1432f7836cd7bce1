//! The coverage register (`GET /v1/areas/coverage`, specification part 2.8): per local authority,
//! per field of the property record the share of addresses with a value and the share by
//! source; the designation datasets checked there, with their vintage; the lease and
//! hereditament link shares; official planning coverage; the listing sweep share; and every
//! dataset the service knows of, loaded there or `not_loaded` (never omitted, never a zero).
//!
//! The register is computed by the build ([`build`], a derived step of `cargo xtask build` and of
//! the manifest loader) into the `coverage_register` table, one row per authority, because the
//! shares need a pass over every address and its links: per call that is seconds for a large
//! authority on a national register, at build time it is a handful of grouped queries for the
//! whole country. An answer is therefore as of the last build, and says when (`built_at`).
//!
//! Architecture Invariant: a share is only ever computed where the dataset behind it has rows
//! attributable to the authority; otherwise the field is `not_loaded` with a null share and a
//! reason, never 0.

use crate::{AreaIndex, AreasCtx, AreasError, ResolveStatus};
use chrono::{NaiveDate, NaiveDateTime};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use terrace_core::{AreaId, AreaKind, GssCode, Violation};
use terrace_store::catalogue::{self as store, CoverageRegisterRow, KeyCount, Linked};
use terrace_store::{Db, StoreError, loads, spatial};

/// The provenance of the derived rows.
pub const BUILD_SOURCE: &str = "terrace_build";

/// Whether a dataset (or the field it supplies) has rows in the authority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoadStatus {
    Loaded,
    NotLoaded,
}

/// Whether a designation dataset was checked in the authority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// Loaded for the authority: its flags are answered `true` or `false` there.
    Checked,
    /// Not loaded for the authority: its flags are `not_checked` there.
    NotLoaded,
}

/// The land build's links in one authority: parcels with a measured built coverage, addresses
/// in a parcel, buildings on a parcel, company-owned titles on a parcel. Shares are null where
/// their denominator is 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LandCoverage {
    /// `loaded` when INSPIRE parcels are loaded in the authority.
    pub status: LoadStatus,
    pub parcels: i64,
    /// Parcels whose built coverage is measured (footprint data loaded in the authority).
    pub parcels_measured: i64,
    pub measured_share: Option<f64>,
    pub addresses_in_parcel: i64,
    /// `addresses_in_parcel` over the authority's addresses with a position.
    pub address_share: Option<f64>,
    pub buildings: i64,
    pub buildings_on_parcel: i64,
    /// Company-owned titles linked to an address of the authority.
    pub titles_linked: i64,
    /// Of those, titles whose address lies in a parcel (the title-to-parcel link).
    pub titles_on_parcel: i64,
    pub title_share: Option<f64>,
}

fn share_of(n: i64, d: i64) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

impl From<&terrace_store::land::LandCoverageRow> for LandCoverage {
    fn from(r: &terrace_store::land::LandCoverageRow) -> Self {
        LandCoverage {
            status: if r.parcels > 0 {
                LoadStatus::Loaded
            } else {
                LoadStatus::NotLoaded
            },
            parcels: r.parcels,
            parcels_measured: r.parcels_measured,
            measured_share: share_of(r.parcels_measured, r.parcels),
            addresses_in_parcel: r.addresses_in_parcel,
            address_share: share_of(r.addresses_in_parcel, r.addresses),
            buildings: r.buildings,
            buildings_on_parcel: r.buildings_on_parcel,
            titles_linked: r.titles_linked,
            titles_on_parcel: r.titles_on_parcel,
            title_share: share_of(r.titles_on_parcel, r.titles_linked),
        }
    }
}

/// Official planning data's coverage of the authority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanningStatus {
    /// The authority is on the official coverage list.
    Covered,
    /// The coverage list is loaded and does not name the authority.
    NotCovered,
    /// No coverage list is loaded, so coverage cannot be told.
    NotLoaded,
}

/// Whether a dataset is attributed to an authority or only to the country.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Rows are attributed to the authority (through the address, the postcode, the boundary).
    LocalAuthority,
    /// The dataset has no per-authority attribution the register can read (a rate table, the
    /// rating list's billing authorities): loaded or not, nationally.
    National,
}

/// Addresses whose value came from one source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SourceShare {
    /// The provenance as stored (`os_addressbase_plus`, `fixture:epc_domestic`, ...).
    pub source: String,
    pub addresses: i64,
    /// `addresses` over the authority's addresses.
    pub share: f64,
}

/// One field of the property record in the authority.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FieldCoverage {
    /// The record's field (`address`, `position`, `energy_rating`, `last_sale`, ...).
    pub field: String,
    /// The record's tier (`identity`, `property`, `energy`, `ownership`, ...).
    pub tier: String,
    /// The dataset that supplies it.
    pub dataset: String,
    pub status: LoadStatus,
    /// Addresses with a value; null when not loaded.
    pub addresses_with_value: Option<i64>,
    /// `addresses_with_value` over the authority's addresses; null when not loaded.
    pub share: Option<f64>,
    pub by_source: Vec<SourceShare>,
    /// Why the field is not loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One designation (spatial) dataset in the authority.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DesignationCoverage {
    /// The dataset (`conservation-area`, `ea-flood-zones`, ...).
    pub dataset: String,
    pub status: CheckStatus,
    pub source: Option<String>,
    /// The newest publisher's date among its features in the authority, when the data has one.
    pub vintage: Option<NaiveDate>,
    /// When it was last loaded for the authority.
    pub loaded_at: Option<NaiveDateTime>,
}

/// A share of addresses linked to a dataset's rows (leases, hereditaments, listings).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LinkShare {
    pub dataset: String,
    pub status: LoadStatus,
    /// Addresses with at least one linked row; null when not loaded.
    pub addresses_linked: Option<i64>,
    /// `addresses_linked` over the authority's addresses; null when not loaded.
    pub share: Option<f64>,
    pub by_source: Vec<SourceShare>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Official planning data's coverage of the authority.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanningCoverage {
    pub status: PlanningStatus,
    /// planning.data.gov.uk's organisation, where covered.
    pub organisation: Option<String>,
    pub start_date: Option<NaiveDate>,
    pub end_date: Option<NaiveDate>,
    /// Planning applications loaded that name the authority; null when none are loaded there.
    pub applications: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One dataset the service knows of, in the authority.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DatasetCoverage {
    /// The name `cargo xtask load` takes.
    pub dataset: String,
    /// The provenance its rows carry.
    pub source: String,
    pub scope: Scope,
    pub status: LoadStatus,
    /// Rows attributable to the authority (addresses, links, postcodes, layers); null when not
    /// loaded, and for national datasets.
    pub rows: Option<i64>,
}

/// The coverage register row of one local authority (specification part 2.8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CoverageRegister {
    /// `lad:<GSS code>`.
    pub area_id: String,
    pub lad_code: String,
    pub name: Option<String>,
    /// The register's addresses in the authority.
    pub addresses: i64,
    /// When the build computed this row: the answer is as of then.
    pub built_at: NaiveDateTime,
    /// Per field of the property record: the share of addresses with a value, by source.
    pub fields: Vec<FieldCoverage>,
    /// Which designation flags were checked: every spatial dataset, checked or not loaded.
    pub designations: Vec<DesignationCoverage>,
    /// Registered leases linked to the authority's addresses.
    pub lease_link: LinkShare,
    /// VOA hereditaments (UARN to UPRN links) linked to its addresses.
    pub hereditament_link: LinkShare,
    pub planning: PlanningCoverage,
    /// Addresses with a listing in the listings feed.
    pub listing_sweep: LinkShare,
    /// The land links (INSPIRE parcels, OS buildings, company-owned titles) in the authority.
    #[serde(default)]
    pub land: Option<LandCoverage>,
    /// Every dataset the service knows of, loaded here or not.
    pub datasets: Vec<DatasetCoverage>,
    /// The datasets (and designation datasets) not loaded here, by name.
    pub not_loaded: Vec<String>,
}

/// How the build attributes a dataset's rows to an authority.
#[derive(Debug, Clone, PartialEq)]
pub enum Attribution {
    /// The addresses whose text it gave (`address_source`).
    AddressText,
    /// The addresses whose position it gave (`position_source`).
    Position,
    /// Postcodes of the directory in the authority.
    Postcodes,
    /// The authority's own boundary.
    Boundaries,
    /// Rows linked to the authority's addresses by UPRN.
    Linked(Linked),
    /// Spatial datasets recorded as loaded for the authority (`layer_coverage`).
    Layers(Vec<String>),
    /// UK HPI rows with the authority's code.
    Hpi,
    /// Planning applications naming the authority.
    PlanningApplications,
    /// No attribution: loaded or not nationally (from the load runs).
    National,
}

/// A dataset the service knows of (the ingest table's row), for the build.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownDataset {
    pub name: String,
    pub source: String,
    pub attribution: Attribution,
}

fn same_source(stored: &str, source: &str) -> bool {
    stored.strip_prefix("fixture:").unwrap_or(stored) == source
}

fn ratio(n: i64, d: i64) -> f64 {
    if d <= 0 {
        return 0.0;
    }
    ((n as f64 / d as f64) * 10_000.0).round() / 10_000.0
}

/// Grouped counts by authority: lad -> source -> n.
type ByLad = BTreeMap<String, BTreeMap<String, i64>>;

fn by_lad(rows: Vec<KeyCount>) -> ByLad {
    let mut out: ByLad = BTreeMap::new();
    for r in rows {
        if let Some(k) = r.key {
            *out.entry(k).or_default().entry(r.source).or_default() += r.n;
        }
    }
    out
}

fn shares(m: Option<&BTreeMap<String, i64>>, total: i64) -> (i64, Vec<SourceShare>) {
    let mut sum = 0;
    let mut v = Vec::new();
    for (s, &n) in m.into_iter().flatten() {
        sum += n;
        v.push(SourceShare {
            source: s.clone(),
            addresses: n,
            share: ratio(n, total),
        });
    }
    (sum, v)
}

/// The record's fields the register measures: (field, tier, dataset, linked rows).
const LINKED_FIELDS: &[(&str, &str, &str, Linked)] = &[
    ("energy_rating", "energy", "epc", Linked::EpcRating),
    ("floor_area_m2", "energy", "epc", Linked::EpcFloorArea),
    ("property_type", "property", "epc", Linked::EpcPropertyType),
    ("built_form", "property", "epc", Linked::EpcBuiltForm),
    ("last_sale", "ownership", "price_paid", Linked::PricePaid),
    (
        "council_tax_band",
        "property",
        "council_tax",
        Linked::CouncilTax,
    ),
    ("lease", "ownership", "leases", Linked::Leases),
    (
        "hereditament",
        "property",
        "uarn_uprn",
        Linked::Hereditament,
    ),
    ("listing", "property", "listings", Linked::Listings),
    (
        "planning_history",
        "land",
        "planning_applications",
        Linked::PlanningApplications,
    ),
];

/// Everything the build reads, once.
struct Inputs {
    address: BTreeMap<String, Vec<terrace_store::catalogue::AddressFieldCount>>,
    linked: BTreeMap<&'static str, ByLad>,
    link_any: BTreeMap<String, ByLad>,
    postcodes: ByLad,
    applications: ByLad,
    hpi: ByLad,
    boundaries: BTreeMap<String, (Option<String>, String)>,
    layers: BTreeMap<String, Vec<spatial::CoverageRow>>,
    planning: BTreeMap<String, terrace_store::planning::CoverageRow>,
    planning_loaded: bool,
    runs: BTreeSet<String>,
    land: BTreeMap<String, terrace_store::land::LandCoverageRow>,
}

fn linked_key(l: Linked) -> String {
    format!("{l:?}")
}

async fn read_inputs(db: &Db, known: &[KnownDataset]) -> Result<Inputs, StoreError> {
    let mut address: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for r in store::address_field_counts(db).await? {
        address.entry(r.lad_code.clone()).or_default().push(r);
    }
    let mut linked = BTreeMap::new();
    for (field, _, _, l) in LINKED_FIELDS {
        linked.insert(*field, by_lad(store::linked_counts(db, *l).await?));
    }
    let mut link_any = BTreeMap::new();
    for k in known {
        if let Attribution::Linked(l) = &k.attribution
            && !link_any.contains_key(&linked_key(*l))
        {
            link_any.insert(linked_key(*l), by_lad(store::linked_counts(db, *l).await?));
        }
    }
    let boundaries = store::lad_boundaries(db)
        .await?
        .into_iter()
        .map(|b| (b.code, (b.name, b.source)))
        .collect();
    let mut layers: BTreeMap<String, Vec<spatial::CoverageRow>> = BTreeMap::new();
    for c in spatial::all_coverage(db).await? {
        layers.entry(c.lad_code.clone()).or_default().push(c);
    }
    let planning_rows = store::planning_coverage_rows(db).await?;
    let planning_loaded = !planning_rows.is_empty();
    let runs = loads::runs(db)
        .await?
        .into_iter()
        .filter(|r| r.loaded + r.updated + r.unchanged > 0)
        .map(|r| r.dataset)
        .collect();
    let land = terrace_store::land::all_land_coverage(db)
        .await?
        .into_iter()
        .map(|r| (r.lad_code.clone(), r))
        .collect();
    Ok(Inputs {
        land,
        address,
        linked,
        link_any,
        postcodes: by_lad(store::postcode_counts(db).await?),
        applications: by_lad(store::application_counts(db).await?),
        hpi: by_lad(store::hpi_counts(db).await?),
        boundaries,
        layers,
        planning: planning_rows
            .into_iter()
            .map(|r| (r.lad_code.clone(), r))
            .collect(),
        planning_loaded,
        runs,
    })
}

fn sum_matching(m: Option<&BTreeMap<String, i64>>, source: &str) -> i64 {
    m.into_iter()
        .flatten()
        .filter(|(s, _)| same_source(s, source))
        .map(|(_, n)| *n)
        .sum()
}

fn link_share(dataset: &str, m: Option<&BTreeMap<String, i64>>, total: i64) -> LinkShare {
    let (n, by_source) = shares(m, total);
    if n > 0 {
        LinkShare {
            dataset: dataset.into(),
            status: LoadStatus::Loaded,
            addresses_linked: Some(n),
            share: Some(ratio(n, total)),
            by_source,
            reason: None,
        }
    } else {
        LinkShare {
            dataset: dataset.into(),
            status: LoadStatus::NotLoaded,
            addresses_linked: None,
            share: None,
            by_source: Vec::new(),
            reason: Some(format!(
                "no {dataset} row is linked to an address of this authority"
            )),
        }
    }
}

fn register_for(
    lad: &str,
    name: Option<String>,
    inp: &Inputs,
    known: &[KnownDataset],
    designations: &[String],
    now: NaiveDateTime,
) -> CoverageRegister {
    let groups = inp.address.get(lad).map(Vec::as_slice).unwrap_or_default();
    let total: i64 = groups.iter().map(|g| g.n).sum();
    let mut fields = Vec::new();
    // The register's own fields, by the source of the address text or of the position.
    type Pick = fn(&terrace_store::catalogue::AddressFieldCount) -> i64;
    let own: [(&str, &str, &str, bool, Pick); 6] = [
        ("address", "identity", "addressbase", false, |g| {
            if g.address_source.is_some() { g.n } else { 0 }
        }),
        ("street", "identity", "addressbase", false, |g| {
            g.with_street
        }),
        ("postcode", "identity", "addressbase", false, |g| {
            g.with_postcode
        }),
        ("classification", "property", "addressbase", false, |g| {
            g.with_class
        }),
        ("parent_uprn", "identity", "addressbase", false, |g| {
            g.with_parent
        }),
        ("position", "identity", "open_uprn", true, |g| {
            g.with_position
        }),
    ];
    for (field, tier, dataset, by_position, pick) in own {
        let mut m: BTreeMap<String, i64> = BTreeMap::new();
        for g in groups {
            let s = if by_position {
                &g.position_source
            } else {
                &g.address_source
            };
            let n = pick(g);
            if n > 0 {
                *m.entry(s.clone().unwrap_or_else(|| "unknown".into()))
                    .or_default() += n;
            }
        }
        let (n, by_source) = shares(Some(&m), total);
        fields.push(FieldCoverage {
            field: field.into(),
            tier: tier.into(),
            dataset: dataset.into(),
            status: if total > 0 {
                LoadStatus::Loaded
            } else {
                LoadStatus::NotLoaded
            },
            addresses_with_value: (total > 0).then_some(n),
            share: (total > 0).then(|| ratio(n, total)),
            by_source,
            reason: (total == 0)
                .then(|| "no address of the register lies in this authority".into()),
        });
    }
    let lsoa: i64 = groups.iter().map(|g| g.with_lsoa).sum();
    fields.push(FieldCoverage {
        field: "lsoa".into(),
        tier: "identity".into(),
        dataset: "boundaries".into(),
        status: if total > 0 {
            LoadStatus::Loaded
        } else {
            LoadStatus::NotLoaded
        },
        addresses_with_value: (total > 0).then_some(lsoa),
        share: (total > 0).then(|| ratio(lsoa, total)),
        by_source: if lsoa > 0 {
            vec![SourceShare {
                source: "derived".into(),
                addresses: lsoa,
                share: ratio(lsoa, total),
            }]
        } else {
            Vec::new()
        },
        reason: (total == 0).then(|| "no address of the register lies in this authority".into()),
    });
    for (field, tier, dataset, l) in LINKED_FIELDS {
        let field_counts = inp.linked.get(field).and_then(|m| m.get(lad));
        // A field is measured where its dataset has any row linked in the authority.
        let any = inp
            .link_any
            .get(&linked_key(match l {
                Linked::EpcRating
                | Linked::EpcFloorArea
                | Linked::EpcPropertyType
                | Linked::EpcBuiltForm => Linked::Epc,
                Linked::Epc
                | Linked::PricePaid
                | Linked::PpdUprn
                | Linked::Leases
                | Linked::CouncilTax
                | Linked::Listings
                | Linked::Hereditament
                | Linked::PlanningApplications => *l,
            }))
            .and_then(|m| m.get(lad))
            .map(|m| m.values().sum::<i64>())
            .unwrap_or(0)
            + field_counts.map(|m| m.values().sum::<i64>()).unwrap_or(0);
        let (n, by_source) = shares(field_counts, total);
        fields.push(if any > 0 && total > 0 {
            FieldCoverage {
                field: (*field).into(),
                tier: (*tier).into(),
                dataset: (*dataset).into(),
                status: LoadStatus::Loaded,
                addresses_with_value: Some(n),
                share: Some(ratio(n, total)),
                by_source,
                reason: None,
            }
        } else {
            FieldCoverage {
                field: (*field).into(),
                tier: (*tier).into(),
                dataset: (*dataset).into(),
                status: LoadStatus::NotLoaded,
                addresses_with_value: None,
                share: None,
                by_source: Vec::new(),
                reason: Some(format!(
                    "no {dataset} row is linked to an address of this authority"
                )),
            }
        });
    }

    let layer_rows = inp.layers.get(lad).map(Vec::as_slice).unwrap_or_default();
    let designations: Vec<DesignationCoverage> = designations
        .iter()
        .map(|d| match layer_rows.iter().find(|c| &c.dataset == d) {
            Some(c) => DesignationCoverage {
                dataset: d.clone(),
                status: CheckStatus::Checked,
                source: Some(c.source.clone()),
                vintage: c.vintage,
                loaded_at: Some(c.updated_at),
            },
            None => DesignationCoverage {
                dataset: d.clone(),
                status: CheckStatus::NotLoaded,
                source: None,
                vintage: None,
                loaded_at: None,
            },
        })
        .collect();

    let any = |l: Linked| {
        inp.link_any
            .get(&linked_key(l))
            .and_then(|m| m.get(lad))
            .cloned()
    };
    let lease_link = link_share("leases", any(Linked::Leases).as_ref(), total);
    let hereditament_link = link_share("uarn_uprn", any(Linked::Hereditament).as_ref(), total);
    let listing_sweep = link_share("listings", any(Linked::Listings).as_ref(), total);

    let planning_row = inp.planning.get(lad);
    let mut authority_keys = vec![lad.to_string()];
    if let Some(p) = planning_row {
        authority_keys.extend(p.organisation.clone());
        authority_keys.extend(p.organisation_entity.clone());
    }
    let applications: i64 = authority_keys
        .iter()
        .filter_map(|k| inp.applications.get(k))
        .flat_map(|m| m.values())
        .sum();
    let planning = match planning_row {
        Some(p) => PlanningCoverage {
            status: PlanningStatus::Covered,
            organisation: p.organisation.clone(),
            start_date: p.start_date,
            end_date: p.end_date,
            applications: (applications > 0).then_some(applications),
            reason: None,
        },
        None if inp.planning_loaded => PlanningCoverage {
            status: PlanningStatus::NotCovered,
            organisation: None,
            start_date: None,
            end_date: None,
            applications: (applications > 0).then_some(applications),
            reason: Some("official planning data does not cover this authority".into()),
        },
        None => PlanningCoverage {
            status: PlanningStatus::NotLoaded,
            organisation: None,
            start_date: None,
            end_date: None,
            applications: (applications > 0).then_some(applications),
            reason: Some(
                "the official planning coverage list (planning_coverage) is not loaded".into(),
            ),
        },
    };

    let mut datasets = Vec::new();
    for k in known {
        let (scope, rows) = match &k.attribution {
            Attribution::AddressText => (
                Scope::LocalAuthority,
                groups
                    .iter()
                    .filter(|g| {
                        g.address_source
                            .as_deref()
                            .is_some_and(|s| same_source(s, &k.source))
                    })
                    .map(|g| g.n)
                    .sum(),
            ),
            Attribution::Position => (
                Scope::LocalAuthority,
                groups
                    .iter()
                    .filter(|g| {
                        g.position_source
                            .as_deref()
                            .is_some_and(|s| same_source(s, &k.source))
                    })
                    .map(|g| g.with_position)
                    .sum(),
            ),
            Attribution::Postcodes => (
                Scope::LocalAuthority,
                sum_matching(inp.postcodes.get(lad), &k.source),
            ),
            Attribution::Boundaries => (
                Scope::LocalAuthority,
                i64::from(
                    inp.boundaries
                        .get(lad)
                        .is_some_and(|(_, s)| same_source(s, &k.source)),
                ),
            ),
            Attribution::Linked(l) => (
                Scope::LocalAuthority,
                sum_matching(
                    inp.link_any.get(&linked_key(*l)).and_then(|m| m.get(lad)),
                    &k.source,
                ),
            ),
            Attribution::Layers(names) => (
                Scope::LocalAuthority,
                layer_rows
                    .iter()
                    .filter(|c| names.contains(&c.dataset))
                    .count() as i64,
            ),
            Attribution::Hpi => (
                Scope::LocalAuthority,
                sum_matching(inp.hpi.get(lad), &k.source),
            ),
            Attribution::PlanningApplications => (Scope::LocalAuthority, applications),
            Attribution::National => (Scope::National, i64::from(inp.runs.contains(&k.name))),
        };
        let loaded = rows > 0;
        datasets.push(DatasetCoverage {
            dataset: k.name.clone(),
            source: k.source.clone(),
            scope,
            status: if loaded {
                LoadStatus::Loaded
            } else {
                LoadStatus::NotLoaded
            },
            rows: (loaded && scope == Scope::LocalAuthority).then_some(rows),
        });
    }
    let mut not_loaded: Vec<String> = datasets
        .iter()
        .filter(|d| d.status == LoadStatus::NotLoaded)
        .map(|d| d.dataset.clone())
        .collect();
    not_loaded.extend(
        designations
            .iter()
            .filter(|d| d.status == CheckStatus::NotLoaded)
            .map(|d| d.dataset.clone()),
    );

    CoverageRegister {
        area_id: format!("lad:{lad}"),
        lad_code: lad.to_string(),
        name,
        addresses: total,
        built_at: now,
        fields,
        designations,
        lease_link,
        hereditament_link,
        planning,
        listing_sweep,
        land: inp.land.get(lad).map(LandCoverage::from),
        datasets,
        not_loaded,
    }
}

/// Computes the register of every local authority the store knows of (with addresses, a
/// boundary or a row on the planning coverage list) and replaces the `coverage_register` table.
/// `known` is every dataset the service loads; `designations` every spatial dataset name.
/// Returns the number of authorities written.
pub async fn build(
    db: &Db,
    known: &[KnownDataset],
    designations: &[String],
    now: NaiveDateTime,
) -> Result<usize, StoreError> {
    let inp = read_inputs(db, known).await?;
    let mut lads: BTreeSet<String> = inp.address.keys().cloned().collect();
    lads.extend(inp.boundaries.keys().cloned());
    lads.extend(inp.planning.keys().cloned());
    let mut rows = Vec::new();
    for lad in lads {
        let name = inp
            .boundaries
            .get(&lad)
            .and_then(|(n, _)| n.clone())
            .or_else(|| inp.planning.get(&lad).and_then(|p| p.name.clone()));
        let reg = register_for(&lad, name.clone(), &inp, known, designations, now);
        let json = serde_json::to_string(&reg)
            .map_err(|e| StoreError::Setup(format!("serialising a coverage row: {e}")))?;
        rows.push(CoverageRegisterRow {
            lad_code: lad,
            name,
            addresses: reg.addresses,
            register_json: json,
            source: BUILD_SOURCE.into(),
            updated_at: now,
        });
    }
    let n = rows.len();
    store::replace_coverage_register(db, rows).await?;
    Ok(n)
}

/// The local authority a coverage query names: a GSS code (bare or `lad:`) with a register row,
/// or whatever [`AreaIndex::resolve`] reads as one local authority.
fn authority_of(index: &AreaIndex, q: &str) -> Result<String, AreasError> {
    let q = q.trim();
    let bare = q
        .split_once(':')
        .filter(|(k, _)| k.eq_ignore_ascii_case("lad"))
        .map_or(q, |(_, c)| c);
    if let Ok(gss) = GssCode::parse(bare)
        && AreaKind::of_gss(&gss) == Some(AreaKind::Lad)
    {
        return Ok(gss.as_str().to_string());
    }
    let r = index.resolve(q)?;
    let lad = match r.status {
        ResolveStatus::Resolved => r.area.filter(|a| a.kind == AreaKind::Lad),
        // A name shared by an authority and, say, a ward: the authority.
        ResolveStatus::Ambiguous => {
            let mut lads: Vec<_> = r
                .candidates
                .into_iter()
                .filter(|a| a.kind == AreaKind::Lad)
                .collect();
            if lads.len() == 1 { lads.pop() } else { None }
        }
    };
    match lad {
        Some(a) => Ok(a.area_id.code().to_string()),
        None => Err(AreasError::Invalid(vec![
            Violation::new(
                &["area"],
                "value_error",
                format!("Value error, {q:?} does not name one local authority: give its GSS code (E06000001) or its name"),
            )
            .with_input(q.to_string()),
        ])),
    }
}

/// `GET /v1/areas/coverage`: the coverage register row of a local authority, as of the last
/// build.
pub async fn coverage(ctx: &AreasCtx, area: &str) -> Result<CoverageRegister, AreasError> {
    let index = ctx.cache.current(&ctx.db).await?;
    let lad = authority_of(&index, area)?;
    let row = store::coverage_row(&ctx.db, &lad).await?.ok_or_else(|| {
        let id = AreaId::new(AreaKind::Lad, &lad)
            .map(|a| a.to_string())
            .unwrap_or_else(|_| lad.clone());
        AreasError::NotFound(format!(
            "a coverage register row for {id} (no address, boundary or planning coverage of that authority was loaded when the register was last built)"
        ))
    })?;
    serde_json::from_str(&row.register_json)
        .map_err(|e| AreasError::Store(StoreError::Setup(format!("reading a coverage row: {e}"))))
}
