//! The council tax result (specification part 2.4).

use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::{GssCode, Nation, Uprn};
use terrace_store::Db;
use terrace_store::memo::Memo;
use terrace_store::{address, council_tax, meta};

use crate::PropertyError;

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CouncilTaxMatch {
    /// `list_uprn` (the list carries the UPRN) or `address_matcher` (Terrace's matcher).
    pub method: Option<String>,
    pub score: Option<f64>,
}

/// What the council tax list says about the UPRN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CouncilTaxStatus {
    Ok,
    NotFound,
    NotListed,
    NotChecked,
    NotCovered,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CouncilTaxResult {
    pub uprn: i64,
    pub country: &'static str,
    /// `ok`: a band from the list is linked to the UPRN.
    /// `not_found`: the list holds band(s) at this postcode that address matching has not linked.
    /// `not_listed`: the loaded list has no entry for this address.
    /// `not_checked`: the council tax list is not loaded.
    /// `not_covered`: Scotland or Northern Ireland (bands here are England and Wales only).
    pub status: CouncilTaxStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A to H (England), A to I (Wales); null unless `status` is `ok`.
    pub band: Option<String>,
    /// `declared`: read from the valuation list. A predicted band would say `predicted`.
    pub band_source: Option<&'static str>,
    pub reference: Option<String>,
    pub billing_authority: Option<String>,
    /// The address as the list writes it.
    pub list_address: Option<String>,
    #[serde(rename = "match")]
    pub uprn_match: Option<CouncilTaxMatch>,
    /// Always null: the list gives no effective date here.
    pub effective_date: Option<String>,
    /// Always null: composite (mixed-use) status is not read.
    pub composite: Option<bool>,
    /// Always null: a band is not a bill.
    pub annual_cost_gbp: Option<f64>,
    /// Entries at the postcode that no UPRN is linked to (for `not_found`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unlinked_at_postcode: Option<usize>,
}

fn empty(uprn: Uprn, status: CouncilTaxStatus, reason: String) -> CouncilTaxResult {
    CouncilTaxResult {
        uprn: uprn.get(),
        country: "UK",
        status,
        reason: Some(reason),
        band: None,
        band_source: None,
        reference: None,
        billing_authority: None,
        list_address: None,
        uprn_match: None,
        effective_date: None,
        composite: None,
        annual_cost_gbp: None,
        unlinked_at_postcode: None,
    }
}

/// Council tax answers kept in memory by UPRN until a load or a link changes what they read (the
/// list and its links, the register, the postcode directory): see [`terrace_store::memo`]. The
/// list is reference data that changes only when an operator loads it, and this free call would
/// otherwise read the store four times (issue 20: free keyed calls at least as fast as charged).
pub struct CouncilTaxMemo(Memo<i64, CouncilTaxResult>);

impl CouncilTaxMemo {
    /// What the answers read: every load and link bumps the first, the register's steps the second.
    const WATCHED: &[meta::Key] = &[meta::Key::DataVersion, meta::Key::AddressRegisterVersion];
    /// How long a change may go unseen: the versions are read at most once a second.
    const RECHECK: std::time::Duration = std::time::Duration::from_secs(1);
    /// Answers kept at most (about 300 bytes each).
    const MAX_ANSWERS: usize = 100_000;
}

impl Default for CouncilTaxMemo {
    fn default() -> Self {
        CouncilTaxMemo(Memo::new(
            CouncilTaxMemo::WATCHED,
            CouncilTaxMemo::RECHECK,
            CouncilTaxMemo::MAX_ANSWERS,
        ))
    }
}

/// [`council_tax`], answered from `memo` when it holds the UPRN's answer. An unknown UPRN is not
/// kept (it is read again, so a load that adds it is seen at once).
pub async fn council_tax_held(
    db: &Db,
    memo: &CouncilTaxMemo,
    uprn: Uprn,
) -> Result<CouncilTaxResult, PropertyError> {
    memo.0
        .get_or_fill(db, uprn.get(), || council_tax(db, uprn))
        .await
}

/// The council tax band of a UPRN, as the valuation list says.
pub async fn council_tax(db: &Db, uprn: Uprn) -> Result<CouncilTaxResult, PropertyError> {
    let Some(address) = address::address(db, uprn.get()).await? else {
        return Err(PropertyError::NotFound(format!("UPRN {uprn}")));
    };
    let lad = match (&address.lad_code, &address.postcode) {
        (Some(l), _) => Some(l.clone()),
        (None, Some(pc)) => address::postcode(db, pc).await?.and_then(|p| p.lad_code),
        (None, None) => None,
    };
    let nation = lad
        .as_deref()
        .and_then(|l| GssCode::parse(l).ok())
        .map(|g| g.nation());
    if let Some(n @ (Nation::Scotland | Nation::NorthernIreland)) = nation {
        let place = if n == Nation::Scotland {
            "Scotland"
        } else {
            "Northern Ireland"
        };
        return Ok(empty(
            uprn,
            CouncilTaxStatus::NotCovered,
            format!(
                "council tax bands here cover England and Wales only; this property is in {place}"
            ),
        ));
    }
    let linked = council_tax::council_tax_for_uprn(db, uprn.get()).await?;
    if let Some(e) = linked.into_iter().next() {
        return Ok(CouncilTaxResult {
            uprn: uprn.get(),
            country: "UK",
            status: CouncilTaxStatus::Ok,
            reason: None,
            band: Some(e.band),
            band_source: Some("declared"),
            reference: Some(e.reference),
            billing_authority: e.billing_authority,
            list_address: Some(e.address),
            uprn_match: Some(CouncilTaxMatch {
                method: e.match_method,
                score: e.match_score,
            }),
            effective_date: None,
            composite: None,
            annual_cost_gbp: None,
            unlinked_at_postcode: None,
        });
    }
    if council_tax::council_tax_count(db).await? == 0 {
        return Ok(empty(
            uprn,
            CouncilTaxStatus::NotChecked,
            "the council tax list is not loaded".into(),
        ));
    }
    let unlinked = match &address.postcode {
        Some(pc) => council_tax::unlinked_council_tax_at(db, pc).await?.len(),
        None => 0,
    };
    if unlinked > 0 {
        let mut r = empty(
            uprn,
            CouncilTaxStatus::NotFound,
            "the list holds band(s) at this postcode that address matching has not linked to this UPRN".into(),
        );
        r.unlinked_at_postcode = Some(unlinked);
        Ok(r)
    } else {
        Ok(empty(
            uprn,
            CouncilTaxStatus::NotListed,
            "the loaded council tax list has no entry for this address".into(),
        ))
    }
}
