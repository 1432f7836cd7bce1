//! Companies House basic company data, into `companies`.

use crate::formats::Parsed;
use crate::formats::companies_house::{self as format, CompanyLine};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::companies::{self, CompanyRow};
use terrace_store::loads::RowCounts;

stored!(
    CompanyRow,
    String,
    |r| r.company_number.clone(),
    companies::companies_by_number,
    companies::replace_companies
);

pub struct CompaniesHouse;

impl Load for CompaniesHouse {
    type Row = CompanyLine;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        merge(
            ctx.db,
            rows,
            counts,
            |r| r.company_number.clone(),
            |r, _| {
                let [sic_1, sic_2, sic_3, sic_4] = r.sic;
                let [total, outstanding, part, satisfied] = r.charges;
                Change::Put(CompanyRow {
                    company_number: r.company_number,
                    name: r.name,
                    category: r.category,
                    status: r.status,
                    country_of_origin: r.country_of_origin,
                    incorporation_date: r.incorporation_date,
                    dissolution_date: r.dissolution_date,
                    address_care_of: r.care_of,
                    address_po_box: r.po_box,
                    address_line_1: r.line_1,
                    address_line_2: r.line_2,
                    post_town: r.post_town,
                    address_county: r.county,
                    address_country: r.country,
                    postcode: r.postcode,
                    sic_1,
                    sic_2,
                    sic_3,
                    sic_4,
                    charges_total: total,
                    charges_outstanding: outstanding,
                    charges_part_satisfied: part,
                    charges_satisfied: satisfied,
                    uri: r.uri,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
