//! Reading an OGC GeoPackage: an SQLite file that is not the store (OS Open Map Local's
//! `opmplc_gb.gpkg`, say), opened read-only with the SQLite the store already links.
//!
//! [`GeoPackage::open`] checks the SQLite header, [`GeoPackage::layer`] finds a features layer in
//! `gpkg_contents` (case-insensitively: OS's older releases spell it `Building`), its geometry
//! column and spatial reference in `gpkg_geometry_columns` and `gpkg_spatial_ref_sys`, its
//! integer primary key and its columns; [`GeoPackage::features`] streams its rows in primary key
//! order, a page at a time, each with the geometry blob as stored (the GeoPackage binary header
//! and WKB, decoded by the caller) and the asked columns as text. Nothing is held whole.
//!
//! [`create_sqlite_file`] runs an SQL script against a new SQLite file: tests use it to write
//! small GeoPackages table by table, as the specification lays them out.
//!
//! Invariant: this module never writes to a file it reads; a path that does not exist is an
//! error, never an empty database created in its place.

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Binary, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use std::collections::VecDeque;
use std::io;
use std::path::Path;

/// Rows read per query.
const PAGE_ROWS: i64 = 5_000;

fn bad(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// `"name"`, with embedded quotes doubled.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// An open GeoPackage.
pub struct GeoPackage {
    conn: SqliteConnection,
    file: String,
}

/// A features layer: its table, geometry column, spatial reference and columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    pub table: String,
    pub geometry_column: String,
    /// `gpkg_geometry_columns.srs_id`: the id the geometries' headers carry.
    pub srs_id: i64,
    /// The defining organisation and its code (`EPSG`, 27700), from `gpkg_spatial_ref_sys`.
    pub srs_organization: String,
    pub srs_code: i64,
    /// The integer primary key (`fid` in OS's files), if the table declares one.
    pub primary_key: Option<String>,
    /// Every column of the table, in table order.
    pub columns: Vec<String>,
}

/// One row of a layer: its primary key, the geometry blob, the asked columns as text.
#[derive(Debug, Clone, PartialEq)]
pub struct Feature {
    pub fid: i64,
    pub geometry: Option<Vec<u8>>,
    pub values: Vec<Option<String>>,
}

#[derive(QueryableByName)]
struct ContentsRow {
    #[diesel(sql_type = Text)]
    table_name: String,
}

#[derive(QueryableByName)]
struct GeometryColumnRow {
    #[diesel(sql_type = Text)]
    column_name: String,
    #[diesel(sql_type = BigInt)]
    srs_id: i64,
}

#[derive(QueryableByName)]
struct SrsRow {
    #[diesel(sql_type = Text)]
    organization: String,
    #[diesel(sql_type = BigInt)]
    organization_coordsys_id: i64,
}

#[derive(QueryableByName)]
struct ColumnRow {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    type_name: String,
    #[diesel(sql_type = BigInt)]
    pk: i64,
}

impl GeoPackage {
    /// Opens `path` read-only; an absent file or one that is not SQLite is an error.
    pub fn open(path: &Path) -> io::Result<GeoPackage> {
        let file = path.display().to_string();
        let mut head = [0u8; 16];
        {
            use std::io::Read;
            let mut f = std::fs::File::open(path)?;
            f.read_exact(&mut head)
                .map_err(|_| bad(format!("{file} is not an SQLite file (too short)")))?;
        }
        if &head != b"SQLite format 3\0" {
            return Err(bad(format!(
                "{file} is not an SQLite file (a GeoPackage is one)"
            )));
        }
        let path_text = path
            .to_str()
            .ok_or_else(|| bad(format!("{file}: the path is not UTF-8")))?;
        let mut conn = SqliteConnection::establish(path_text)
            .map_err(|e| bad(format!("{file}: cannot open: {e}")))?;
        diesel::sql_query("PRAGMA query_only = ON")
            .execute(&mut conn)
            .map_err(|e| bad(format!("{file}: {e}")))?;
        Ok(GeoPackage { conn, file })
    }

    /// The features layer named `name` (case-insensitive), with its geometry column, spatial
    /// reference and columns.
    pub fn layer(&mut self, name: &str) -> io::Result<Layer> {
        let file = self.file.clone();
        let err = |e: diesel::result::Error| bad(format!("{file}: {e}"));
        let features: Vec<ContentsRow> = diesel::sql_query(
            "SELECT table_name FROM gpkg_contents WHERE data_type = 'features' ORDER BY table_name",
        )
        .load(&mut self.conn)
        .map_err(|e| bad(format!("{file}: no readable gpkg_contents table ({e})")))?;
        let table = features
            .iter()
            .find(|r| r.table_name.eq_ignore_ascii_case(name))
            .map(|r| r.table_name.clone())
            .ok_or_else(|| {
                let names: Vec<&str> = features.iter().map(|r| r.table_name.as_str()).collect();
                bad(format!(
                    "{file}: no features layer {name:?} in gpkg_contents (features layers: {names:?})"
                ))
            })?;
        let geom: Vec<GeometryColumnRow> = diesel::sql_query(
            "SELECT column_name, CAST(srs_id AS BIGINT) AS srs_id FROM gpkg_geometry_columns WHERE table_name = ?",
        )
        .bind::<Text, _>(&table)
        .load(&mut self.conn)
        .map_err(err)?;
        let geom = geom.into_iter().next().ok_or_else(|| {
            bad(format!(
                "{file}: layer {table:?} has no row in gpkg_geometry_columns"
            ))
        })?;
        let srs: Vec<SrsRow> = diesel::sql_query(
            "SELECT organization, CAST(organization_coordsys_id AS BIGINT) AS organization_coordsys_id FROM gpkg_spatial_ref_sys WHERE srs_id = ?",
        )
        .bind::<BigInt, _>(geom.srs_id)
        .load(&mut self.conn)
        .map_err(err)?;
        let srs = srs.into_iter().next().ok_or_else(|| {
            bad(format!(
                "{file}: srs_id {} of layer {table:?} is not in gpkg_spatial_ref_sys",
                geom.srs_id
            ))
        })?;
        let columns: Vec<ColumnRow> = diesel::sql_query(
            "SELECT name, COALESCE(type, '') AS type_name, CAST(pk AS BIGINT) AS pk FROM pragma_table_info(?) ORDER BY cid",
        )
        .bind::<Text, _>(&table)
        .load(&mut self.conn)
        .map_err(err)?;
        if !columns
            .iter()
            .any(|c| c.name.eq_ignore_ascii_case(&geom.column_name))
        {
            return Err(bad(format!(
                "{file}: layer {table:?} has no geometry column {:?}",
                geom.column_name
            )));
        }
        let primary_key = columns
            .iter()
            .find(|c| c.pk == 1 && c.type_name.eq_ignore_ascii_case("INTEGER"))
            .map(|c| c.name.clone());
        Ok(Layer {
            table,
            geometry_column: geom.column_name,
            srs_id: geom.srs_id,
            srs_organization: srs.organization,
            srs_code: srs.organization_coordsys_id,
            primary_key,
            columns: columns.into_iter().map(|c| c.name).collect(),
        })
    }

    /// The layer's rows in primary key order (rowid when it declares none), each with its
    /// geometry blob and the values of `columns` (names of the layer's columns) as text.
    pub fn features(self, layer: &Layer, columns: &[String]) -> FeatureRows {
        let key = layer
            .primary_key
            .as_deref()
            .map_or_else(|| "rowid".to_string(), quote);
        let mut select = format!(
            "SELECT CAST({key} AS BIGINT) AS fid, CAST({} AS BLOB) AS geom",
            quote(&layer.geometry_column)
        );
        for (i, c) in columns.iter().take(MAX_VALUES).enumerate() {
            select.push_str(&format!(", CAST({} AS TEXT) AS v{i}", quote(c)));
        }
        for i in columns.len().min(MAX_VALUES)..MAX_VALUES {
            select.push_str(&format!(", NULL AS v{i}"));
        }
        let sql = format!(
            "{select} FROM {} WHERE {key} > ? ORDER BY {key} LIMIT {PAGE_ROWS}",
            quote(&layer.table)
        );
        FeatureRows {
            conn: self.conn,
            file: self.file,
            sql,
            n_values: columns.len().min(MAX_VALUES),
            after: i64::MIN,
            page: VecDeque::new(),
            done: false,
        }
    }
}

/// At most this many attribute columns are read per row.
pub const MAX_VALUES: usize = 4;

#[derive(QueryableByName)]
struct PageRow {
    #[diesel(sql_type = BigInt)]
    fid: i64,
    #[diesel(sql_type = Nullable<Binary>)]
    geom: Option<Vec<u8>>,
    #[diesel(sql_type = Nullable<Text>)]
    v0: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    v1: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    v2: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    v3: Option<String>,
}

/// The rows of a layer, read a page at a time; a failed read ends the stream with one error.
pub struct FeatureRows {
    conn: SqliteConnection,
    file: String,
    sql: String,
    n_values: usize,
    after: i64,
    page: VecDeque<Feature>,
    done: bool,
}

impl Iterator for FeatureRows {
    type Item = Result<Feature, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(f) = self.page.pop_front() {
            return Some(Ok(f));
        }
        if self.done {
            return None;
        }
        let rows: Vec<PageRow> = match diesel::sql_query(&self.sql)
            .bind::<BigInt, _>(self.after)
            .load(&mut self.conn)
        {
            Ok(r) => r,
            Err(e) => {
                self.done = true;
                return Some(Err(format!(
                    "{}: reading rows after key {}: {e}",
                    self.file, self.after
                )));
            }
        };
        if (rows.len() as i64) < PAGE_ROWS {
            self.done = true;
        }
        for r in rows {
            self.after = r.fid;
            let mut values = vec![r.v0, r.v1, r.v2, r.v3];
            values.truncate(self.n_values);
            self.page.push_back(Feature {
                fid: r.fid,
                geometry: r.geom,
                values,
            });
        }
        self.page.pop_front().map(Ok)
    }
}

/// Creates the SQLite file `path` (which must not exist) and runs `script` in it.
pub fn create_sqlite_file(path: &Path, script: &str) -> io::Result<()> {
    if path.exists() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists", path.display()),
        ));
    }
    let text = path
        .to_str()
        .ok_or_else(|| bad(format!("{}: the path is not UTF-8", path.display())))?;
    let mut conn = SqliteConnection::establish(text).map_err(|e| bad(e.to_string()))?;
    conn.batch_execute(script)
        .map_err(|e| bad(format!("{}: {e}", path.display())))
}
