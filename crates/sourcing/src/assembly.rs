//! Land assembly (`GET /v1/sourcing/land-assembly`): the parcels around a subject parcel that
//! could be assembled with it, each with its area, land use, gap, linked owner and constraints,
//! and the combined figures of the assembly.
//!
//! Adjacency is a boundary meeting the subject's buffered by `tolerance_m` (registered
//! boundaries rarely share an exact edge): the candidates come from a box query on the store,
//! then an R-tree ([`terrace_geo::PolygonIndex`]) over their polygons and the exact distance. A
//! neighbour with no linked owner is one no company-owned title has been linked to, not one
//! nobody owns: it is counted, never called ownerless and never named.

use crate::parcel::{
    self, Constraints, LandUse, LinkedTitle, ParcelProprietor, ParcelRef, decimal, owner_keys,
};
use crate::{SourcingCtx, SourcingError};
use geo::MultiPolygon;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use terrace_geo::PolygonIndex;
use terrace_store::sourcing;

/// The tolerance's default, and the limits of the tolerance and the ring (metres).
pub const TOLERANCE_DEFAULT: f64 = 0.5;
pub const TOLERANCE_MAX: f64 = 50.0;
pub const RING_MAX: f64 = 500.0;
/// Neighbours listed by default and at most.
pub const LIMIT_DEFAULT: usize = 50;
pub const LIMIT_MAX: usize = 500;
/// Candidate parcels read from the store at most (a ring of 500 m in a dense town holds a few
/// thousand).
const CANDIDATES_MAX: i64 = 20_000;

/// What a land assembly is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct AssemblyQuery {
    pub subject: ParcelRef,
    pub tolerance_m: f64,
    pub ring_m: f64,
    pub same_owner_only: bool,
    pub limit: usize,
}

/// How a neighbour relates to the subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    /// Its boundary meets the subject's buffered by the tolerance.
    Adjacent,
    /// Farther than the tolerance, within `ring_m`.
    Ring,
}

/// The owners a parcel's linked titles name (companies, public bodies, overseas entities).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OwnerRef {
    pub name: String,
    pub company_number: Option<String>,
}

/// The constraints of a parcel in brief.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ConstraintBrief {
    pub in_zone: Vec<String>,
    pub checked_false: Vec<String>,
    pub not_checked: Vec<String>,
}

fn brief(c: &Constraints) -> ConstraintBrief {
    ConstraintBrief {
        in_zone: c.in_zone.clone(),
        checked_false: c.checked_false.clone(),
        not_checked: c.not_checked.clone(),
    }
}

/// One parcel of the assembly.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AssemblyParcel {
    pub parcel_id: String,
    /// Null for the subject.
    pub relation: Option<Relation>,
    /// Metres between its boundary and the subject's, 2 places as text (`0.00` where they meet).
    pub gap_m: String,
    /// m², 2 places as text.
    pub area_m2: String,
    pub land_use: LandUse,
    /// The proprietors of its linked company-owned titles, or `not_available` with the reason
    /// `no_open_title_link`.
    pub registered_proprietor: ParcelProprietor,
    /// True when a proprietor of its linked titles is one of the subject's (null for the
    /// subject).
    pub shares_subject_proprietor: Option<bool>,
    pub constraints: ConstraintBrief,
}

/// The figures of the subject and the neighbours listed, together.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Combined {
    /// The subject and the neighbours listed.
    pub parcels: usize,
    pub total_area_m2: String,
    pub total_area_ha: String,
    /// Distinct owners named by the linked titles (by company number, else normalised name).
    pub distinct_owners: usize,
    pub owners: Vec<OwnerRef>,
    pub neighbours_sharing_subject_proprietor: usize,
    /// Parcels (the subject included) no company-owned title is linked to.
    pub parcels_with_no_linked_owner: usize,
    /// Of those, neighbours.
    pub neighbours_with_no_linked_owner: usize,
    pub no_linked_owner_note: &'static str,
    /// Flags in zone on any parcel listed.
    pub constraints_in_zone: Vec<String>,
    /// Flags not checked on some parcel listed (so the union cannot say false for them).
    pub constraints_not_checked: Vec<String>,
}

/// The answer of a land assembly.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Assembly {
    pub subject: AssemblyParcel,
    pub resolved_from: parcel::Resolution,
    pub tolerance_m: f64,
    pub ring_m: f64,
    pub same_owner_only: bool,
    /// Nearest first (parcel id breaks ties), at most `limit`.
    pub neighbours: Vec<AssemblyParcel>,
    /// Neighbours found (after `same_owner_only`), before `limit`.
    pub neighbours_found: usize,
    pub truncated: bool,
    pub combined: Combined,
    /// True when the area around the subject held more parcels than are read at once (20,000):
    /// some neighbours may be missing.
    pub candidates_capped: bool,
    pub method: &'static str,
}

const NO_OWNER_NOTE: &str = "no registered title linked, NOT ownerless: the open registers name only company-owned titles, and the title-to-parcel link runs through matched addresses, so these parcels are counted and never named";
const METHOD: &str = "Neighbours are INSPIRE index polygons whose boundary lies within tolerance_m of the subject's (adjacent) or within ring_m (ring), measured as the planar distance between the boundaries in BNG metres; owners are the proprietors of company-owned titles (CCOD/OCOD) linked to each parcel through an address in it; constraints are each parcel's flags at its interior point.";

fn owner_refs(titles: &[LinkedTitle]) -> Vec<(String, OwnerRef)> {
    titles
        .iter()
        .flat_map(|t| {
            t.proprietors.iter().map(|p| {
                (
                    parcel::owner_key(&p.proprietor),
                    OwnerRef {
                        name: p.proprietor.name.clone(),
                        company_number: p.proprietor.company_number.clone(),
                    },
                )
            })
        })
        .collect()
}

/// `GET /v1/sourcing/land-assembly`.
pub async fn land_assembly(
    ctx: &SourcingCtx,
    q: &AssemblyQuery,
) -> Result<Assembly, SourcingError> {
    let db = &ctx.db;
    let resolved = parcel::resolve(db, &q.subject).await?;
    let subject = resolved.row;
    let subject_mp = parcel::geometry(&subject).unwrap_or_else(|| MultiPolygon::new(Vec::new()));
    let reach = q.tolerance_m.max(q.ring_m);
    let bbox = [
        subject.min_x - reach,
        subject.min_y - reach,
        subject.max_x + reach,
        subject.max_y + reach,
    ];
    let widest = sourcing::widest_parcel(db).await?;
    let mut rows = sourcing::parcels_in_box(db, bbox, widest, CANDIDATES_MAX + 1).await?;
    let candidates_capped = rows.len() as i64 > CANDIDATES_MAX;
    rows.truncate(usize::try_from(CANDIDATES_MAX).unwrap_or(usize::MAX));
    let index = PolygonIndex::build(
        rows.into_iter()
            .filter(|r| r.inspire_id != subject.inspire_id)
            .filter_map(|r| parcel::geometry(&r).map(|mp| (mp, r)))
            .collect(),
    );
    let near: BTreeSet<i64> = index
        .near_area(&subject_mp, reach)
        .into_iter()
        .map(|r| r.inspire_id)
        .collect();
    let mut found: Vec<(
        f64,
        Relation,
        &terrace_store::land::ParcelRow,
        MultiPolygon<f64>,
    )> = Vec::new();
    for (mp, row) in index.iter() {
        if !near.contains(&row.inspire_id) {
            continue;
        }
        let gap = parcel::gap_m(mp, &subject_mp);
        let relation = if gap <= q.tolerance_m {
            Relation::Adjacent
        } else if gap <= q.ring_m {
            Relation::Ring
        } else {
            continue;
        };
        found.push((gap, relation, row, mp.clone()));
    }
    let mut ids: Vec<i64> = found.iter().map(|f| f.2.inspire_id).collect();
    ids.push(subject.inspire_id);
    let mut titles = parcel::linked_titles(db, &ids).await?;
    let subject_titles = titles.remove(&subject.inspire_id).unwrap_or_default();
    let subject_keys = owner_keys(&subject_titles);
    let shares = |t: &[LinkedTitle]| !owner_keys(t).is_disjoint(&subject_keys);
    if q.same_owner_only {
        found.retain(|f| {
            titles
                .get(&f.2.inspire_id)
                .is_some_and(|t| shares(t.as_slice()))
        });
    }
    found.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then_with(|| a.2.inspire_id.cmp(&b.2.inspire_id))
    });
    let neighbours_found = found.len();
    found.truncate(q.limit);
    let listed: Vec<i64> = found
        .iter()
        .map(|f| f.2.inspire_id)
        .chain([subject.inspire_id])
        .collect();
    let stats: BTreeMap<i64, _> = sourcing::stats_of(db, &listed)
        .await?
        .into_iter()
        .map(|s| (s.inspire_id, s))
        .collect();
    let layers = ctx.layers.current(db).await?;

    let subject_constraints = parcel::constraints_from(&layers, &subject, Some(&subject_mp));
    let mut owners: BTreeMap<String, OwnerRef> = owner_refs(&subject_titles).into_iter().collect();
    let mut in_zone: BTreeSet<String> = subject_constraints.in_zone.iter().cloned().collect();
    let mut not_checked: BTreeSet<String> =
        subject_constraints.not_checked.iter().cloned().collect();
    let mut total_area = subject.area_m2;
    let mut sharing = 0usize;
    let mut no_owner_neighbours = 0usize;
    let subject_no_owner = subject_titles.is_empty();
    let subject_out = AssemblyParcel {
        parcel_id: subject.inspire_id.to_string(),
        relation: None,
        gap_m: decimal(0.0, 2),
        area_m2: decimal(subject.area_m2, 2),
        land_use: parcel::land_use(stats.get(&subject.inspire_id)),
        registered_proprietor: parcel::proprietor_of(subject_titles),
        shares_subject_proprietor: None,
        constraints: brief(&subject_constraints),
    };
    let mut neighbours = Vec::with_capacity(found.len());
    for (gap, relation, row, mp) in &found {
        let t = titles.remove(&row.inspire_id).unwrap_or_default();
        let share = shares(&t);
        sharing += usize::from(share);
        no_owner_neighbours += usize::from(t.is_empty());
        owners.extend(owner_refs(&t));
        total_area += row.area_m2;
        let c = parcel::constraints_from(&layers, row, Some(mp));
        in_zone.extend(c.in_zone.iter().cloned());
        not_checked.extend(c.not_checked.iter().cloned());
        neighbours.push(AssemblyParcel {
            parcel_id: row.inspire_id.to_string(),
            relation: Some(*relation),
            gap_m: decimal(*gap, 2),
            area_m2: decimal(row.area_m2, 2),
            land_use: parcel::land_use(stats.get(&row.inspire_id)),
            registered_proprietor: parcel::proprietor_of(t),
            shares_subject_proprietor: Some(share),
            constraints: brief(&c),
        });
    }
    let combined = Combined {
        parcels: neighbours.len() + 1,
        total_area_m2: decimal(total_area, 2),
        total_area_ha: decimal(total_area / 10_000.0, 4),
        distinct_owners: owners.len(),
        owners: owners.into_values().collect(),
        neighbours_sharing_subject_proprietor: sharing,
        parcels_with_no_linked_owner: no_owner_neighbours + usize::from(subject_no_owner),
        neighbours_with_no_linked_owner: no_owner_neighbours,
        no_linked_owner_note: NO_OWNER_NOTE,
        constraints_in_zone: in_zone.into_iter().collect(),
        constraints_not_checked: not_checked.into_iter().collect(),
    };
    Ok(Assembly {
        subject: subject_out,
        resolved_from: resolved.resolution,
        tolerance_m: q.tolerance_m,
        ring_m: q.ring_m,
        same_owner_only: q.same_owner_only,
        truncated: neighbours_found > neighbours.len(),
        neighbours_found,
        neighbours,
        combined,
        candidates_capped,
        method: METHOD,
    })
}
