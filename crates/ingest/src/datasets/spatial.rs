//! The spatial datasets (planning.data.gov.uk designations, the Environment Agency's flood layers,
//! the Coal Authority's high risk areas, substations with headroom, renewable projects): one
//! loader, [`SpatialFile`], whose variant picks the file's reader, and one merge, features by
//! `<dataset>:<reference>` with the coverage they imply.

use crate::formats::layers::Layer;
use crate::formats::spatial::SpatialRow;
use crate::formats::{Parsed, layers, planning_data, repd, substations};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use chrono::{NaiveDate, Utc};
use std::collections::BTreeMap;
use std::path::Path;
use terrace_geo::{PolygonIndex, Shape};
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;
use terrace_store::spatial::{self, CoverageRow, FeatureRow};
use terrace_store::{address, meta};

stored!(
    FeatureRow,
    String,
    |r| r.id.clone(),
    spatial::features_by_id,
    spatial::replace_features
);
stored!(
    CoverageRow,
    String,
    |r| r.id.clone(),
    spatial::coverage_by_id,
    spatial::replace_coverage
);

/// The local authority boundaries as an index (read once per load).
pub(super) async fn lad_index<'a>(
    ctx: &'a LoadCtx<'a>,
) -> Result<&'a PolygonIndex<String>, StoreError> {
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

/// A spatial dataset, by the reader its files need; every variant merges the same way.
pub enum SpatialFile {
    /// planning.data.gov.uk designations (CSV or GeoJSON; the dataset is named in the file).
    PlanningData,
    /// Electricity substations with headroom (CSV).
    Substations,
    /// The Renewable Energy Planning Database (CSV).
    Repd,
    /// An Environment Agency flood layer or the Coal Authority's high risk areas (GeoJSON).
    Layer(Layer),
}

type Rows = Box<dyn Iterator<Item = Parsed<SpatialRow>> + Send>;

impl Load for SpatialFile {
    type Row = SpatialRow;

    fn read(
        &self,
        path: &Path,
    ) -> std::io::Result<impl Iterator<Item = Parsed<SpatialRow>> + Send> {
        let rows: Rows = match *self {
            SpatialFile::PlanningData => planning_data::read(path)?,
            SpatialFile::Substations => Box::new(substations::read(path)?),
            SpatialFile::Repd => Box::new(repd::read(path)?),
            SpatialFile::Layer(layer) => Box::new(layers::read(path, layer)?),
        };
        Ok(rows)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<SpatialRow>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        apply(ctx, rows, counts).await
    }
}

fn feature_id(r: &SpatialRow) -> String {
    format!("{}:{}", r.dataset, r.reference)
}

/// Merges spatial features by `<dataset>:<reference>`, and records the coverage they imply: each
/// local authority that holds a feature's representative point (a point inside a polygon, or the
/// point itself) is covered by the feature's dataset, with the newest entry date as its vintage.
async fn apply(
    ctx: &LoadCtx<'_>,
    rows: Vec<SpatialRow>,
    counts: &mut RowCounts,
) -> Result<bool, StoreError> {
    use geo::InteriorPoint;
    let lads = lad_index(ctx).await?;
    if lads.is_empty() {
        ctx.note(
            "no local authority boundaries are loaded: coverage is not recorded, so the risk \
             report answers not_checked for these features everywhere; load boundaries first"
                .into(),
        );
    }
    let mut cover: BTreeMap<(String, String), Option<NaiveDate>> = Default::default();
    let features = merge(ctx.db, rows, counts, feature_id, |r, _| {
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
        Change::Put(FeatureRow {
            id: format!("{}:{}", r.dataset, r.reference),
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
        })
    })
    .await?;
    // Coverage: new authorities, or a newer vintage, are written; the rest stand (uncounted:
    // the file's rows are the features).
    let coverage = merge(
        ctx.db,
        cover.into_iter().collect(),
        &mut RowCounts::default(),
        |((dataset, lad), _)| CoverageRow::key(dataset, lad),
        |((dataset, lad), vintage), prev: Option<&CoverageRow>| {
            Change::Put(CoverageRow {
                id: CoverageRow::key(&dataset, &lad),
                vintage: prev.and_then(|p| p.vintage).max(vintage),
                dataset,
                lad_code: lad,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            })
        },
    )
    .await?;
    if features.changed() || coverage.changed() {
        let version = format!("{}", Utc::now().timestamp_nanos_opt().unwrap_or_default());
        meta::set(ctx.db, meta::Key::SpatialLayersVersion, &version).await?;
    }
    Ok(false)
}

/// What the land loaders store of a polygon: its WKB, bounding box, planar area, a point inside
/// it and the local authority holding that point.
pub(super) struct Placed {
    pub wkb: Vec<u8>,
    pub bbox: [f64; 4],
    pub area_m2: f64,
    pub inside: Option<(f64, f64)>,
    pub lad_code: Option<String>,
}

/// Places a polygon (BNG metres) against the local authority boundaries.
pub(super) fn place(mp: &geo::MultiPolygon<f64>, lads: &PolygonIndex<String>) -> Placed {
    use geo::{Area, InteriorPoint};
    let inside = mp.interior_point().map(|p| (p.x(), p.y()));
    let lad_code = inside.and_then(|p| lads.containing(p).into_iter().min().cloned());
    Placed {
        wkb: terrace_geo::multipolygon_to_wkb(mp),
        bbox: terrace_geo::bbox(mp).unwrap_or([f64::NAN; 4]),
        area_m2: mp.unsigned_area(),
        inside,
        lad_code,
    }
}

/// Says once per load that no boundaries are loaded, so the land rows carry no authority.
pub(super) fn note_no_lads(ctx: &LoadCtx<'_>, lads: &PolygonIndex<String>, what: &str) {
    if lads.is_empty() {
        ctx.note(format!(
            "no local authority boundaries are loaded: {what} carry no local authority, so the \
             land build groups them apart; load boundaries first"
        ));
    }
}
