//! The operator's planning-portal URLs: one row per local planning authority, a CSV with the
//! header `organisation,lpa_code,name,portal_url` (columns found by name, any spelling; extra
//! columns ignored). No publisher issues this list (planning.data.gov.uk has each council's
//! website, not its application search), so the operator keeps it.
//!
//! - `lpa_code` (required): the authority's GSS code, `E60` (England) or `W43` (Wales);
//! - `portal_url` (required): an `https://` or `http://` URL without spaces;
//! - `organisation` (`local-authority:SWK`) and `name`: kept as given.
//!
//! A header without `lpa_code` or `portal_url` is an `InvalidData` error.
//! Rejections: a wrong column count, a blank or malformed code, a blank or malformed URL.

use super::csvio::{Header, Opened, field};
use super::{Parsed, value};
use std::io;
use std::path::Path;
use terrace_core::{AreaId, AreaKind};

#[derive(Debug, Clone, PartialEq)]
pub struct PortalRow {
    pub lpa_code: String,
    pub organisation: Option<String>,
    pub name: Option<String>,
    pub portal_url: String,
}

pub(crate) const CODE: &[&str] = &["lpa-code", "local-planning-authority"];
pub(crate) const URL: &[&str] = &["portal-url", "planning-portal-url"];

/// Whether a URL is one the service will hand out: http(s), a host, no whitespace.
fn url_ok(u: &str) -> bool {
    let rest = u
        .strip_prefix("https://")
        .or_else(|| u.strip_prefix("http://"));
    rest.is_some_and(|r| {
        let host = r.split(['/', '?', '#']).next().unwrap_or_default();
        !host.is_empty() && host.contains('.') && !u.chars().any(char::is_whitespace)
    })
}

pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<PortalRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names);
    let code = h.require(&source.file, CODE)?;
    let url = h.require(&source.file, URL)?;
    let org = h.find(&["organisation"]);
    let name = h.find(&["name"]);
    let rows = source.rows(h.len(), move |f| {
        let raw = field(f, Some(code)).ok_or("blank lpa_code")?;
        let id = AreaId::new(AreaKind::Lpa, raw)
            .map_err(|e| format!("lpa_code {raw:?} is not a local planning authority code: {e}"))?;
        let u = value::text(field(f, Some(url))).ok_or("blank portal_url")?;
        if !url_ok(&u) {
            return Err(format!("portal_url {u:?} is not an http(s) URL"));
        }
        Ok(PortalRow {
            lpa_code: id.code().to_string(),
            organisation: value::text(field(f, org)),
            name: value::text(field(f, name)),
            portal_url: u,
        })
    });
    Ok(Some(rows).into_iter().flatten())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    #[test]
    fn rows_and_rejections() {
        let f = temp_file(
            b"organisation,lpa_code,name,portal_url\n\
local-authority:SWK,E60000028,Southwark,https://planning.southwark.gov.uk/online-applications/\n\
local-authority:XXX,E07000001,Not an LPA code,https://example.org/\n\
local-authority:YYY,E60000029,No URL,\n\
local-authority:ZZZ,e60000030,Bad URL,ftp://example.org/\n\
local-authority:CDF,w43000001,Wales,http://planning.example.gov.uk/search?q=1\n\
short,row\n",
        );
        let (ok, bad) = split(read(f.path()).unwrap());
        let got: Vec<(&str, &str)> = ok
            .iter()
            .map(|(_, r)| (r.lpa_code.as_str(), r.portal_url.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "E60000028",
                    "https://planning.southwark.gov.uk/online-applications/"
                ),
                ("W43000001", "http://planning.example.gov.uk/search?q=1"),
            ]
        );
        assert_eq!(ok[0].1.organisation.as_deref(), Some("local-authority:SWK"));
        let lines: Vec<u64> = bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![3, 4, 5, 7], "{bad:?}");
        assert!(bad[0].reason.contains("lpa_code"));
        assert!(bad[1].reason.contains("blank portal_url"));
        assert!(bad[2].reason.contains("not an http(s) URL"));
        let f = temp_file(b"organisation,name\nx,y\n");
        assert!(read(f.path()).is_err(), "no lpa_code column");
    }
}
