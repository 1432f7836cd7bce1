//! Spatial layers: the features of the risk datasets (designations, flood layers, coal areas,
//! substations, renewable projects) and which dataset is loaded for which local authority.
//!
//! Invariants: a feature's id is `<dataset>:<reference>` and a coverage row's id is
//! `<dataset>|<lad_code>`; a load that changes a layer bumps `meta::Key::SpatialLayersVersion`.

use crate::db::{Db, StoreResult};
use crate::schema::{layer_coverage, spatial_features};
use crate::{keyed_ops, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// One feature of a spatial dataset. A polygon feature has `wkb` (a multipolygon in BNG metres);
/// a point feature has `x` and `y` (BNG metres) and no `wkb`.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = spatial_features)]
pub struct FeatureRow {
    /// `<dataset>:<reference>`, unique across datasets.
    pub id: String,
    /// The dataset's name (`conservation-area`, `ea-flood-zones`, `substations`, ...).
    pub dataset: String,
    pub reference: Option<String>,
    pub name: Option<String>,
    /// What kind of feature within the dataset: a flood zone (`FZ2`, `FZ3`), a risk band
    /// (`high`, `medium`, `low`, `very_low`), a listed building grade, a technology.
    pub category: Option<String>,
    /// A status (a renewable project's development status, a heritage-at-risk condition).
    pub status: Option<String>,
    /// The dataset's one number: a substation's headroom in MVA, a project's capacity in MW.
    pub value: Option<f64>,
    pub organisation: Option<String>,
    /// The publisher's date for the entry (planning.data.gov.uk `entry-date`, ...).
    pub entry_date: Option<NaiveDate>,
    pub wkb: Option<Vec<u8>>,
    pub x: Option<f64>,
    pub y: Option<f64>,
    pub min_x: f64,
    pub min_y: f64,
    pub max_x: f64,
    pub max_y: f64,
    /// The other non-empty attributes of the feature, as a JSON object of strings.
    pub attributes_json: String,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// One dataset loaded for one local authority.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = layer_coverage)]
pub struct CoverageRow {
    /// `<dataset>|<lad_code>`.
    pub id: String,
    pub dataset: String,
    pub lad_code: String,
    /// The newest publisher's date among those features, when the data carries one.
    pub vintage: Option<NaiveDate>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

impl CoverageRow {
    pub fn key(dataset: &str, lad_code: &str) -> String {
        format!("{dataset}|{lad_code}")
    }
}

keyed_ops!(
    FeatureRow,
    spatial_features,
    id,
    String,
    features_by_id,
    replace_features
);

/// A page of features in id order, after `after` (for building the in-memory indices).
pub async fn features_page(db: &Db, after: &str, limit: i64) -> StoreResult<Vec<FeatureRow>> {
    Ok(with_conn!(db, |c| {
        spatial_features::table
            .filter(spatial_features::id.gt(after))
            .order(spatial_features::id)
            .limit(limit)
            .select(FeatureRow::as_select())
            .load(c)
            .await?
    }))
}

pub async fn feature_count(db: &Db) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| {
        spatial_features::table.count().get_result(c).await?
    }))
}

keyed_ops!(
    CoverageRow,
    layer_coverage,
    id,
    String,
    coverage_by_id,
    replace_coverage
);

/// Every coverage row, by dataset then authority.
pub async fn all_coverage(db: &Db) -> StoreResult<Vec<CoverageRow>> {
    Ok(with_conn!(db, |c| {
        layer_coverage::table
            .order((layer_coverage::dataset, layer_coverage::lad_code))
            .select(CoverageRow::as_select())
            .load(c)
            .await?
    }))
}
