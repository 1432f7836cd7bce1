//! The operator's HMO licence register feed into `hmo_licences`, keyed by authority and licence
//! number. A licence without a UPRN is matched to the register by the address matcher in the
//! derive step (score kept); a later load of the same licence keeps the matcher's UPRN while its
//! address is the same, so loading twice changes nothing.

use crate::formats::Parsed;
use crate::formats::hmo_licences::{self as format, HmoLicence};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;
use terrace_store::osm::{self, HmoLicenceRow};

stored!(
    HmoLicenceRow,
    String,
    |r| r.licence_key.clone(),
    osm::hmo_by_key,
    osm::replace_hmo
);

/// How a licence whose UPRN the feed gave is linked.
pub const FEED: &str = "feed";

pub struct HmoLicences;

impl Load for HmoLicences {
    type Row = HmoLicence;

    fn read(
        &self,
        path: &Path,
    ) -> std::io::Result<impl Iterator<Item = Parsed<HmoLicence>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<HmoLicence>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        merge(
            ctx.db,
            rows,
            counts,
            HmoLicence::key,
            |r, prev: Option<&HmoLicenceRow>| {
                let (uprn, match_method, match_score) = match (r.uprn, prev) {
                    (Some(u), _) => (Some(u), Some(FEED.to_string()), None),
                    (None, Some(p))
                        if p.address == r.address
                            && p.postcode == r.postcode
                            && p.match_method.as_deref() != Some(FEED) =>
                    {
                        (p.uprn, p.match_method.clone(), p.match_score)
                    }
                    (None, _) => (None, None, None),
                };
                Change::Put(HmoLicenceRow {
                    licence_key: r.key(),
                    licence_number: r.licence_number,
                    authority: r.authority,
                    address: r.address,
                    postcode: r.postcode,
                    storeys: r.storeys,
                    max_occupants: r.max_occupants,
                    households: r.households,
                    licence_start: r.licence_start,
                    licence_end: r.licence_end,
                    uprn,
                    match_method,
                    match_score,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
