//! Energy performance certificates (domestic, non-domestic and display: one loader per register,
//! each refusing another register's file); a domestic certificate's building elements go to
//! `epc_elements` beside it, and its address text fills the register where it has none of its
//! own. Recommendations load separately (`epc_recommendations`).

use super::shared::merge_addresses;
use crate::addresses::{Parts, split_lines};
use crate::formats::{Parsed, epc as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::collections::HashMap;
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::address::AddressRow;
use terrace_store::epc;
use terrace_store::epc::{EpcElementsRow, EpcRow};
use terrace_store::loads::RowCounts;

stored!(
    EpcRow,
    String,
    |r| r.lmk_key.clone(),
    epc::epc_by_key,
    epc::replace_epc
);

stored!(
    EpcElementsRow,
    String,
    |r| r.lmk_key.clone(),
    epc::epc_elements_by_key,
    epc::replace_epc_elements
);

/// The certificates loader of one register.
pub struct Epc(pub format::Kind);

fn elements_row(r: &format::EpcRow, ctx: &LoadCtx<'_>) -> EpcElementsRow {
    let e = r.elements.clone();
    EpcElementsRow {
        lmk_key: r.lmk_key.clone(),
        walls_description: e.walls_description,
        walls_energy_eff: e.walls_energy_eff,
        roof_description: e.roof_description,
        roof_energy_eff: e.roof_energy_eff,
        windows_description: e.windows_description,
        windows_energy_eff: e.windows_energy_eff,
        floor_description: e.floor_description,
        floor_energy_eff: e.floor_energy_eff,
        mainheat_description: e.mainheat_description,
        mainheat_energy_eff: e.mainheat_energy_eff,
        mainheatcont_description: e.mainheatcont_description,
        mainheatc_energy_eff: e.mainheatc_energy_eff,
        hotwater_description: e.hotwater_description,
        hot_water_energy_eff: e.hot_water_energy_eff,
        lighting_description: e.lighting_description,
        lighting_energy_eff: e.lighting_energy_eff,
        secondheat_description: e.secondheat_description,
        mechanical_ventilation: e.mechanical_ventilation,
        flat_top_storey: e.flat_top_storey,
        low_energy_lighting: e.low_energy_lighting,
        flat_storey_count: e.flat_storey_count,
        source: ctx.source.to_string(),
        updated_at: ctx.now,
    }
}

/// A certificate's address as register parts, its post town taking the town.
fn address_parts(r: &format::EpcRow) -> Parts {
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
            parts.locality = Some(parts.locality.map_or(t.clone(), |l| format!("{l}, {t}")));
        }
        parts.town = Some(town);
    }
    parts
}

type Text = (Option<chrono::NaiveDate>, Parts, Option<String>);

impl Load for Epc {
    type Row = format::EpcRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path, self.0)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        // A domestic certificate's elements, beside it (counted with the certificate).
        let elements: Vec<EpcElementsRow> = rows
            .iter()
            .filter(|r| r.kind == format::Kind::Domestic)
            .map(|r| elements_row(r, ctx))
            .collect();
        let mut scratch = RowCounts::default();
        merge(
            ctx.db,
            elements,
            &mut scratch,
            |e: &EpcElementsRow| e.lmk_key.clone(),
            |e, _| Change::Put(e),
        )
        .await?;
        // The newest domestic certificate per UPRN in this chunk gives the address text (a
        // non-domestic or display certificate's address names a building, not a dwelling).
        let mut texts: HashMap<i64, Text> = HashMap::new();
        merge(
            ctx.db,
            rows,
            counts,
            |r| r.lmk_key.clone(),
            |r, _| {
                if let Some(uprn) = r.uprn.filter(|_| r.kind == format::Kind::Domestic) {
                    let parts = address_parts(&r);
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
                Change::Put(EpcRow {
                    lmk_key: r.lmk_key,
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
                    kind: r.kind.as_str().to_string(),
                    uprn_source: r.uprn_source,
                    solar_water_heating: r.solar_water_heating,
                    construction_age_band: r.construction_age_band,
                    floor_level: r.floor_level,
                    photo_supply: r.photo_supply,
                    asset_rating: r.asset_rating,
                })
            },
        )
        .await?;
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
    }
}
