//! The public directories (specification part 4.9, catalogue): the market area directory
//! (`GET /v1/catalogue/areas`), a postcode district's postcodes, streets or properties
//! (`GET /v1/catalogue/directory/{district}/{kind}`) and a record preview
//! (`GET /v1/catalogue/records/{kind}/{identifier}`), without the priced analytics.
//!
//! The market area directory is derived by the build ([`build_areas`]) from the market tables
//! (the areas, districts and local authorities the market build publishes, with their sales and
//! published index periods) and the register (addresses per area). The district directories and
//! the previews read the register directly, page by page after a key (keyset cursors: the last
//! area id, postcode, street or UPRN of the previous page).
//!
//! Architecture Invariant: a preview shows what the directories show (an address line, a
//! postcode, a classification, counts, the area's place in the hierarchy) and names the
//! operations that answer more; it never carries a sale, a valuation or an index level.

use crate::{Area, AreasCtx, AreasError, LatLon};
use chrono::NaiveDateTime;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use terrace_core::{AreaId, AreaKind, CursorScope, Postcode, Uprn};
use terrace_store::address::AddressRow;
use terrace_store::catalogue::{self as store, CatalogueAreaRow};
use terrace_store::{Db, StoreError, address, market};

/// The most items one page may carry.
pub const PAGE_MAX: i64 = 500;
/// The page size when none is asked for.
pub const PAGE_DEFAULT: i64 = 50;

/// The kinds of market area the directory lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MarketAreaKind {
    /// A postcode area (`area:EX`).
    Area,
    /// A postcode district (`district:EX1`).
    District,
    /// A local authority district (`lad:E07000041`).
    Lad,
}

impl MarketAreaKind {
    fn as_str(self) -> &'static str {
        match self {
            MarketAreaKind::Area => "area",
            MarketAreaKind::District => "district",
            MarketAreaKind::Lad => "lad",
        }
    }
}

/// One market area with its counts.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MarketArea {
    pub area_id: String,
    pub kind: MarketAreaKind,
    /// The publisher's name (local authorities), null for postcode areas and districts.
    pub name: Option<String>,
    /// The area id of the parent the market build names (a district's postcode area).
    pub parent: Option<String>,
    /// Addresses of the register in the area.
    pub addresses: i64,
    /// Registered sales counted by the market build in the area.
    pub sales: i64,
    /// Index series published for the area (0 or 1: one house price index per area).
    pub indices_published: i64,
    /// Monthly index periods published (estimated, not forecast).
    pub index_periods: i64,
    /// Forecast periods published.
    pub forecast_periods: i64,
    /// The published index's last settled month (`YYYY-MM`).
    pub last_settled: Option<String>,
}

fn market_area(r: CatalogueAreaRow) -> Option<MarketArea> {
    let kind = match r.kind.as_str() {
        "area" => MarketAreaKind::Area,
        "district" => MarketAreaKind::District,
        "lad" => MarketAreaKind::Lad,
        _ => return None,
    };
    Some(MarketArea {
        area_id: r.area_id,
        kind,
        name: r.name,
        parent: r.parent,
        addresses: r.addresses,
        sales: r.sales,
        indices_published: i64::from(r.index_periods > 0),
        index_periods: r.index_periods,
        forecast_periods: r.forecast_periods,
        last_settled: r.last_settled,
    })
}

/// A page of the market area directory.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MarketAreasPage {
    pub data: Vec<MarketArea>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    /// When the build computed the directory (null when nothing is built yet).
    pub built_at: Option<NaiveDateTime>,
}

/// The cursor scope of a walk through the market area directory: its kind filter
/// (`terrace_core::cursor`); the key is the last area id listed.
pub fn areas_cursor_scope(kind: Option<MarketAreaKind>) -> CursorScope {
    CursorScope::new("catalogue_areas", &kind.map(MarketAreaKind::as_str))
}

/// `GET /v1/catalogue/areas`: market areas after `after` (the area id a decoded cursor names), of
/// one kind or all.
pub async fn market_areas(
    db: &Db,
    kind: Option<MarketAreaKind>,
    after: Option<&str>,
    limit: i64,
) -> Result<MarketAreasPage, AreasError> {
    let rows = store::catalogue_areas_page(
        db,
        kind.map(MarketAreaKind::as_str),
        after.unwrap_or(""),
        limit + 1,
    )
    .await?;
    let built_at = rows.iter().map(|r| r.updated_at).max();
    let more = rows.len() as i64 > limit;
    let data: Vec<MarketArea> = rows
        .into_iter()
        .take(limit as usize)
        .filter_map(market_area)
        .collect();
    let scope = areas_cursor_scope(kind);
    Ok(MarketAreasPage {
        next_cursor: if more {
            data.last().map(|a| scope.encode(&[a.area_id.as_str()]))
        } else {
            None
        },
        data,
        built_at,
    })
}

/// The area id of a market key, for the kinds the directory lists.
fn area_id_of(key: &str) -> Option<(MarketAreaKind, String)> {
    let (kind, code) = key.split_once(':')?;
    match kind {
        "area" => Some((MarketAreaKind::Area, key.to_string())),
        "district" => Some((MarketAreaKind::District, key.to_string())),
        "la" => Some((MarketAreaKind::Lad, format!("lad:{code}"))),
        _ => None,
    }
}

/// Computes the market area directory from the market tables and the register, and replaces the
/// `catalogue_areas` table. Returns the number of areas written.
pub async fn build_areas(db: &Db, now: NaiveDateTime) -> Result<usize, StoreError> {
    let mut addresses: BTreeMap<String, i64> = BTreeMap::new();
    for r in store::addresses_per_postcode(db).await? {
        if let Ok(pc) = Postcode::parse(&r.postcode) {
            *addresses
                .entry(format!("district:{}", pc.outward()))
                .or_default() += r.n;
            *addresses.entry(format!("area:{}", pc.area())).or_default() += r.n;
        }
    }
    // A local authority counts all its addresses, with a postcode or not.
    for g in store::address_field_counts(db).await? {
        *addresses.entry(format!("lad:{}", g.lad_code)).or_default() += g.n;
    }
    let sales: BTreeMap<String, i64> = store::market_sales(db)
        .await?
        .into_iter()
        .map(|s| (s.geography, s.n))
        .collect();
    let mut periods: BTreeMap<(String, bool), i64> = BTreeMap::new();
    for p in store::market_periods(db).await? {
        periods.insert((p.geography, p.is_forecast), p.n);
    }
    let names: BTreeMap<String, Option<String>> = store::lad_boundaries(db)
        .await?
        .into_iter()
        .map(|b| (b.code, b.name))
        .collect();
    let mut rows = Vec::new();
    for kind in ["area", "district", "la"] {
        for g in market::geographies_of_kind(db, kind).await? {
            let Some((k, id)) = area_id_of(&g.geography) else {
                continue;
            };
            let name = match k {
                MarketAreaKind::Lad => names.get(id.trim_start_matches("lad:")).cloned().flatten(),
                MarketAreaKind::Area | MarketAreaKind::District => None,
            };
            rows.push(CatalogueAreaRow {
                kind: k.as_str().to_string(),
                name,
                parent: g.parent.as_deref().and_then(area_id_of).map(|(_, p)| p),
                addresses: addresses.get(&id).copied().unwrap_or(0),
                sales: sales.get(&g.geography).copied().unwrap_or(0),
                index_periods: periods
                    .get(&(g.geography.clone(), false))
                    .copied()
                    .unwrap_or(0),
                forecast_periods: periods
                    .get(&(g.geography.clone(), true))
                    .copied()
                    .unwrap_or(0),
                last_settled: g.last_settled.clone(),
                area_id: id,
                source: crate::coverage::BUILD_SOURCE.into(),
                updated_at: now,
            });
        }
    }
    let n = rows.len();
    store::replace_catalogue_areas(db, rows).await?;
    Ok(n)
}

/// What a district directory lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DirectoryKind {
    /// The district's postcodes that hold an address, each with its number of addresses.
    Postcodes,
    /// The district's streets, each with its number of addresses.
    Streets,
    /// The district's addresses (UPRN, address line, postcode, classification).
    Properties,
}

impl DirectoryKind {
    /// The kind's name in the path.
    pub fn as_str(self) -> &'static str {
        match self {
            DirectoryKind::Postcodes => "postcodes",
            DirectoryKind::Streets => "streets",
            DirectoryKind::Properties => "properties",
        }
    }
}

/// The cursor scope of a walk through a district directory: its district and kind
/// (`terrace_core::cursor`); the key is the last postcode, street name or UPRN listed.
pub fn directory_cursor_scope(district: &AreaId, kind: DirectoryKind) -> CursorScope {
    CursorScope::new(
        "catalogue_directory",
        &(district.to_string(), kind.as_str()),
    )
}

/// One item of a district directory: a postcode, a street or a property.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DirectoryItem {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uprn: Option<i64>,
    /// The address on one line (properties).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub street: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postcode: Option<String>,
    /// AddressBase classification code (properties), when loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classification: Option<String>,
    /// Addresses at the postcode or on the street.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addresses: Option<i64>,
}

/// A page of a district directory.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DirectoryPage {
    /// `district:<outward code>`.
    pub district: String,
    pub kind: DirectoryKind,
    pub data: Vec<DirectoryItem>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

/// Where a district directory page starts: after a postcode, a street name or a UPRN.
#[derive(Debug, Clone, PartialEq)]
pub enum After {
    Start,
    Key(String),
    Uprn(i64),
}

/// The address on one line, as the register holds it.
pub fn address_line(a: &AddressRow) -> Option<String> {
    let first = [a.saon.as_deref(), a.paon.as_deref()]
        .into_iter()
        .flatten()
        .filter(|s| !s.trim().is_empty())
        .collect::<Vec<_>>()
        .join(", ");
    let parts: Vec<String> = [
        Some(match (&first, a.street.as_deref()) {
            (f, Some(s)) if !f.is_empty() => format!("{f} {s}"),
            (_, Some(s)) => s.to_string(),
            (f, None) => f.clone(),
        }),
        a.locality.clone(),
        a.town.clone(),
        a.postcode.clone(),
    ]
    .into_iter()
    .flatten()
    .filter(|s| !s.trim().is_empty())
    .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// `GET /v1/catalogue/directory/{district}/{kind}`: a page of the district's postcodes, streets
/// or properties after `after`. An outward code with no address in the register is not found.
pub async fn directory(
    db: &Db,
    district: &AreaId,
    kind: DirectoryKind,
    after: &After,
    limit: i64,
) -> Result<DirectoryPage, AreasError> {
    let d = district.code();
    if !store::district_has_addresses(db, d).await? {
        return Err(AreasError::NotFound(format!(
            "postcode district {d} (no address of the register has a postcode in it)"
        )));
    }
    let key = match after {
        After::Start => String::new(),
        After::Key(k) => k.clone(),
        After::Uprn(_) => String::new(),
    };
    let mut data: Vec<(String, DirectoryItem)> = match kind {
        DirectoryKind::Postcodes => store::district_postcodes(db, d, &key, limit + 1)
            .await?
            .into_iter()
            .map(|(p, n)| {
                (
                    p.clone(),
                    DirectoryItem {
                        uprn: None,
                        address: None,
                        street: None,
                        postcode: Some(p),
                        classification: None,
                        addresses: Some(n),
                    },
                )
            })
            .collect(),
        DirectoryKind::Streets => store::district_streets(db, d, &key, limit + 1)
            .await?
            .into_iter()
            .map(|(s, n)| {
                (
                    s.clone(),
                    DirectoryItem {
                        uprn: None,
                        address: None,
                        street: Some(s),
                        postcode: None,
                        classification: None,
                        addresses: Some(n),
                    },
                )
            })
            .collect(),
        DirectoryKind::Properties => {
            let from = match after {
                After::Uprn(u) => *u,
                After::Start | After::Key(_) => 0,
            };
            store::district_properties(db, d, from, limit + 1)
                .await?
                .into_iter()
                .map(|a| {
                    (
                        a.uprn.to_string(),
                        DirectoryItem {
                            uprn: Some(a.uprn),
                            address: address_line(&a),
                            street: a.street.clone(),
                            postcode: a.postcode.clone(),
                            classification: a.class.clone(),
                            addresses: None,
                        },
                    )
                })
                .collect()
        }
    };
    let more = data.len() as i64 > limit;
    data.truncate(limit as usize);
    let scope = directory_cursor_scope(district, kind);
    Ok(DirectoryPage {
        district: district.to_string(),
        kind,
        next_cursor: if more {
            data.last().map(|(k, _)| scope.encode(&[k.as_str()]))
        } else {
            None
        },
        data: data.into_iter().map(|(_, i)| i).collect(),
    })
}

/// The kinds of record a preview can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    Postcode,
    Property,
    Area,
    /// A registered title: not available until the ownership family lands (404).
    Title,
    /// A company's titles: not available until the ownership family lands (404).
    Company,
}

impl RecordKind {
    /// The kind's name in the path.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Postcode => "postcode",
            RecordKind::Property => "property",
            RecordKind::Area => "area",
            RecordKind::Title => "title",
            RecordKind::Company => "company",
        }
    }
}

/// A record's identifier, read for its kind.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordId {
    Postcode(Postcode),
    Property(Uprn),
    Area(AreaId),
    Title(String),
    Company(String),
}

/// A postcode's preview.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PostcodePreview {
    pub postcode: String,
    /// `district:<outward code>`.
    pub district: String,
    /// `sector:<sector>`.
    pub sector: String,
    /// `lad:<GSS code>`, from the postcode directory, when loaded.
    pub local_authority: Option<String>,
    /// The postcode directory's position, when loaded.
    pub centroid: Option<LatLon>,
    /// Whether the postcode directory marks it terminated (null: not in the directory).
    pub terminated: Option<bool>,
    /// Addresses of the register at the postcode.
    pub addresses: i64,
    /// Its streets, in order.
    pub streets: Vec<String>,
}

/// A property's preview: what the district directory shows of it, and where it sits.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PropertyPreview {
    pub uprn: i64,
    /// The address on one line.
    pub address: Option<String>,
    pub postcode: Option<String>,
    /// AddressBase classification code, when loaded.
    pub classification: Option<String>,
    /// `district:<outward code>`, when the address has a postcode.
    pub district: Option<String>,
    /// `lad:<GSS code>`, when known.
    pub local_authority: Option<String>,
}

/// An area's preview: the resolved area, and its market directory entry when it has one.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AreaPreview {
    pub area: Area,
    /// The market area directory's entry (counts), when the market build publishes the area.
    pub market: Option<MarketArea>,
}

/// `GET /v1/catalogue/records/{kind}/{identifier}`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RecordPreview {
    pub kind: RecordKind,
    /// The identifier in its canonical form.
    pub identifier: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postcode: Option<PostcodePreview>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property: Option<PropertyPreview>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub area: Option<AreaPreview>,
    /// The operations (tool names) that answer more about the record, priced.
    pub more: Vec<String>,
}

fn lad_id(code: Option<&str>) -> Option<String> {
    code.and_then(|c| AreaId::new(AreaKind::Lad, c).ok())
        .map(|a| a.to_string())
}

/// The preview of one record.
pub async fn record(ctx: &AreasCtx, id: &RecordId) -> Result<RecordPreview, AreasError> {
    let db = &ctx.db;
    match id {
        RecordId::Postcode(pc) => {
            let dir = address::postcode(db, pc.as_str()).await?;
            let (n, streets) = store::postcode_counts_of(db, pc.as_str()).await?;
            if dir.is_none() && n == 0 {
                return Err(AreasError::NotFound(format!(
                    "postcode {pc} (not in the postcode directory and no address of the register has it)"
                )));
            }
            Ok(RecordPreview {
                kind: RecordKind::Postcode,
                identifier: pc.to_string(),
                postcode: Some(PostcodePreview {
                    postcode: pc.to_string(),
                    district: format!("district:{}", pc.outward()),
                    sector: format!("sector:{}", pc.sector()),
                    local_authority: lad_id(dir.as_ref().and_then(|d| d.lad_code.as_deref())),
                    centroid: dir
                        .as_ref()
                        .and_then(|d| d.lat.zip(d.lon).map(|(lat, lon)| LatLon { lat, lon })),
                    terminated: dir.as_ref().map(|d| d.terminated),
                    addresses: n,
                    streets,
                }),
                property: None,
                area: None,
                more: vec!["address_by_postcode".into(), "area_resolve".into()],
            })
        }
        RecordId::Property(uprn) => {
            let a = address::address(db, uprn.get())
                .await?
                .ok_or_else(|| AreasError::NotFound(format!("UPRN {uprn}")))?;
            let district = a
                .postcode
                .as_deref()
                .and_then(|p| Postcode::parse(p).ok())
                .map(|p| format!("district:{}", p.outward()));
            Ok(RecordPreview {
                kind: RecordKind::Property,
                identifier: uprn.to_string(),
                postcode: None,
                property: Some(PropertyPreview {
                    uprn: a.uprn,
                    address: address_line(&a),
                    postcode: a.postcode.clone(),
                    classification: a.class.clone(),
                    district,
                    local_authority: lad_id(a.lad_code.as_deref()),
                }),
                area: None,
                more: vec![
                    "address_by_uprn".into(),
                    "property_summary".into(),
                    "property_record".into(),
                    "property_report".into(),
                ],
            })
        }
        RecordId::Area(aid) => {
            let index = ctx.cache.current(db).await?;
            let area = index
                .area(aid)
                .ok_or_else(|| AreasError::NotFound(format!("area {aid}")))?;
            let market = store::catalogue_area(db, &aid.to_string())
                .await?
                .and_then(market_area);
            let mut more = vec!["area_coverage".to_string()];
            if market.is_some() {
                more.push("market_index_series".into());
            }
            Ok(RecordPreview {
                kind: RecordKind::Area,
                identifier: aid.to_string(),
                postcode: None,
                property: None,
                area: Some(AreaPreview { area, market }),
                more,
            })
        }
        RecordId::Title(t) => Err(AreasError::NotFound(format!(
            "title record {t} (title records are not available yet: the ownership family, HM Land Registry's title data, is not built)"
        ))),
        RecordId::Company(c) => Err(AreasError::NotFound(format!(
            "company record {c} (company records are not available yet: the ownership family, HM Land Registry's title data, is not built)"
        ))),
    }
}
