//! The registered owner of a rated property: the company-owned titles (HM Land Registry's CCOD
//! and OCOD) linked to the UPRN its UARN links to, or why none is.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use terrace_ownership::titles::{self as ot, Register, TitleRecord};
use terrace_store::titles as st;
use terrace_store::{Db, LookupError};

/// One proprietor of a title.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OwnerProprietor {
    pub name: String,
    pub company_number: Option<String>,
    /// The Companies House status, where the company is in the loaded register.
    pub company_status: Option<String>,
}

/// A company-owned title linked to the property's UPRN.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OwnerTitle {
    pub title_number: String,
    pub register: Register,
    /// `Freehold` or `Leasehold`.
    pub tenure: Option<String>,
    pub proprietors: Vec<OwnerProprietor>,
    /// The price paid the register states, in pounds (a price, unlike a rateable value).
    pub price_paid: Option<i64>,
    pub date_proprietor_added: Option<NaiveDate>,
    /// How the title's address was linked to the UPRN (the address matcher).
    pub link_method: Option<String>,
    /// The register file month the title was read from.
    pub file_month: Option<String>,
}

impl From<TitleRecord> for OwnerTitle {
    fn from(t: TitleRecord) -> Self {
        OwnerTitle {
            title_number: t.title_number,
            register: t.register,
            tenure: t.tenure,
            proprietors: t
                .proprietors
                .into_iter()
                .map(|p| OwnerProprietor {
                    company_status: p.company.as_ref().and_then(|c| c.status.clone()),
                    name: p.proprietor.name,
                    company_number: p.proprietor.company_number,
                })
                .collect(),
            price_paid: t.price_paid,
            date_proprietor_added: t.date_proprietor_added,
            link_method: t.uprns.first().map(|u| u.method.clone()),
            file_month: t.file_month,
        }
    }
}

/// The company titles linked to each of these UPRNs, and whether any title is loaded at all.
pub async fn titles_by_uprn(
    db: &Db,
    uprns: &[i64],
) -> Result<(BTreeMap<i64, Vec<OwnerTitle>>, bool), LookupError> {
    let (loaded, _) = st::title_link_counts(db).await?;
    let mut out: BTreeMap<i64, Vec<OwnerTitle>> = BTreeMap::new();
    for t in ot::titles_for_uprns(db, uprns).await? {
        if let Some(u) = t.uprns.first().map(|l| l.uprn) {
            out.entry(u).or_default().push(t.into());
        }
    }
    Ok((out, loaded > 0))
}

pub const NOT_LOADED: &str =
    "HM Land Registry's company-owned titles (CCOD/OCOD) are not loaded, so no owner can be read";

/// Why no title links, for a property with UPRN `uprn` (None: the UARN links to no UPRN).
pub fn no_title_reason(uprn: Option<i64>, titles_loaded: bool) -> String {
    match (uprn, titles_loaded) {
        (_, false) => NOT_LOADED.into(),
        (None, true) => {
            "no UPRN is linked to this rated property, so no registered title can be linked to it"
                .into()
        }
        (Some(u), true) => format!(
            "no company-owned title (CCOD/OCOD) links to UPRN {u}: the owner may be a private individual or a charity (HM Land Registry does not publish those in bulk), or the title's address did not match"
        ),
    }
}
