//! Rightmove's BLM v3 file: one branch's full feed at the moment it was generated.
//!
//! Sections `#HEADER#`, `#DEFINITION#`, `#DATA#` and `#END#`. The header's `Key : Value` lines
//! give `Version` (3), `EOF` (the field separator, `'^'`), `EOR` (the record separator, `'~'`),
//! `Property Count` and `Generated Date`. The definition is the column names in order, each
//! followed by the field separator, the last by the record separator. Every data record has one
//! field per column (and the same trailing separator) and ends with the record separator; a
//! record may run over several lines, and a rejection names the line it starts on.
//!
//! Columns are read by name: `AGENT_REF` (the listing id, required), `ADDRESS_1` to `ADDRESS_4`
//! and `TOWN` (else `DISPLAY_ADDRESS`), `POSTCODE1` and `POSTCODE2`, `BRANCH_ID`, `STATUS_ID`
//! (0 available, 1 sold STC, 2 sold STCM, 3 under offer, 4 reserved, 5 let agreed),
//! `BEDROOMS`, `PRICE`, `PROP_SUB_ID` (the Rightmove type code), `TRANS_TYPE_ID` (1 resale,
//! 2 lettings, required), `LET_RENT_FREQUENCY` (0 weekly, 1 monthly, 2 quarterly, 3 annual; 5,
//! per person per week, is not a rent for the whole property and leaves the price empty), and
//! the optional columns some agents add: `NEW_HOME_FLAG` (Y/N), `TENURE_TYPE_ID` (as the RTDF
//! tenure), `LATITUDE`, `LONGITUDE`.
//!
//! Every record is a sighting at the header's `Generated Date` (`dd-Mon-yyyy HH:MM`,
//! `yyyy-mm-dd HH:MM:SS` or `dd/mm/yyyy HH:MM`); without one, at the record's `UPDATE_DATE`.
//! A file whose header or definition cannot be read is an error; a record with the wrong number
//! of fields, no `AGENT_REF`, an unknown status, transaction type or rent frequency, a price or
//! bedrooms that is not a whole number of at least 0, or no time, is rejected.

use super::listings::{Details, ListingRow, Snapshot};
use super::rtdf::{monthly, property_type, tenure};
use super::value::{self, decode};
use super::{Parsed, Rejection};
use chrono::{DateTime, NaiveDateTime, Utc};
use std::collections::HashMap;
use std::io;
use std::path::Path;

/// Whether a file's first bytes look like a BLM file.
pub fn is_blm(head: &str) -> bool {
    head.trim_start().starts_with("#HEADER#")
}

fn bad(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// A header or record time.
pub fn blm_time(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    [
        "%d-%b-%Y %H:%M",
        "%d-%b-%Y %H:%M:%S",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%d/%m/%Y %H:%M",
        "%d/%m/%Y %H:%M:%S",
    ]
    .iter()
    .find_map(|f| NaiveDateTime::parse_from_str(s, f).ok())
    .map(|t| t.and_utc())
    .or_else(|| super::listings::parse_time(s))
}

/// Opens a BLM file (see the module documentation).
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<ListingRow>> + Send> {
    let bytes = std::fs::read(path)?;
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    let text = decode(bytes);
    let file = path.display().to_string();
    let find = |tag: &str| {
        text.find(tag)
            .ok_or_else(|| bad(format!("{file}: not a BLM file: no {tag} section")))
    };
    let (h, d, data) = (find("#HEADER#")?, find("#DEFINITION#")?, find("#DATA#")?);
    let end = text.find("#END#").unwrap_or(text.len());
    let mut header = HashMap::new();
    for l in text[h + 8..d].lines() {
        if let Some((k, v)) = l.split_once(':') {
            header.insert(
                k.trim().to_ascii_uppercase(),
                v.trim().trim_matches('\'').to_string(),
            );
        }
    }
    let sep = |key: &str| -> io::Result<char> {
        let v = header
            .get(key)
            .ok_or_else(|| bad(format!("{file}: the header has no {key}")))?;
        let mut cs = v.chars();
        match (cs.next(), cs.next()) {
            (Some(c), None) => Ok(c),
            _ => Err(bad(format!("{file}: {key} {v:?} is not one character"))),
        }
    };
    let (eof, eor) = (sep("EOF")?, sep("EOR")?);
    if let Some(v) = header.get("VERSION")
        && !v.starts_with('3')
    {
        return Err(bad(format!("{file}: BLM version {v}, expected 3")));
    }
    let generated = header.get("GENERATED DATE").and_then(|s| blm_time(s));
    let def = &text[d + 12..data];
    let def = def.split(eor).next().unwrap_or("");
    let mut columns: Vec<String> = def
        .split(eof)
        .map(|c| c.trim().to_ascii_uppercase())
        .collect();
    if columns.last().is_some_and(String::is_empty) {
        columns.pop();
    }
    for need in ["AGENT_REF", "TRANS_TYPE_ID"] {
        if !columns.iter().any(|c| c == need) {
            return Err(bad(format!("{file}: the definition has no {need} column")));
        }
    }
    // Records, each with the line it starts on.
    let body_start = data + 6;
    let mut line = 1 + text[..body_start].matches('\n').count() as u64;
    let mut records = Vec::new();
    for rec in text[body_start..end].split(eor) {
        let lead = rec.len() - rec.trim_start().len();
        let start = line + rec[..lead].matches('\n').count() as u64;
        line += rec.matches('\n').count() as u64;
        if rec.trim().is_empty() {
            continue;
        }
        records.push((start, rec.trim_start().to_string()));
    }
    Ok(records.into_iter().map(move |(line, rec)| {
        parse_record(&columns, eof, &rec, generated)
            .map(|r| (line, r))
            .map_err(|reason| Rejection {
                file: file.clone(),
                line,
                reason,
            })
    }))
}

fn parse_record(
    columns: &[String],
    eof: char,
    rec: &str,
    generated: Option<DateTime<Utc>>,
) -> Result<ListingRow, String> {
    let mut fields: Vec<&str> = rec.split(eof).collect();
    if fields.len() == columns.len() + 1 && fields.last().is_some_and(|f| f.trim().is_empty()) {
        fields.pop();
    }
    if fields.len() != columns.len() {
        return Err(format!(
            "{} fields, the definition has {} columns",
            fields.len(),
            columns.len()
        ));
    }
    let get = |name: &str| -> Option<&str> {
        columns
            .iter()
            .position(|c| c == name)
            .and_then(|i| value::present(Some(fields[i])))
    };
    let int = |name: &str| -> Result<Option<i64>, String> {
        match get(name) {
            None => Ok(None),
            Some(v) => match v.parse::<i64>() {
                Ok(n) if n >= 0 => Ok(Some(n)),
                _ => Err(format!("{name} {v:?} is not a whole number of at least 0")),
            },
        }
    };
    let agent_ref = get("AGENT_REF").ok_or("missing AGENT_REF")?.to_string();
    let channel = match int("TRANS_TYPE_ID")? {
        Some(1) => "sale",
        Some(2) => "rent",
        Some(t) => return Err(format!("unknown TRANS_TYPE_ID {t} (1 resale, 2 lettings)")),
        None => return Err("missing TRANS_TYPE_ID".into()),
    };
    let status = match int("STATUS_ID")? {
        None => None,
        Some(0) => Some("available"),
        Some(1 | 2) => Some("sold_stc"),
        Some(3) => Some("under_offer"),
        Some(4) => Some("reserved"),
        Some(5) => Some("let_agreed"),
        Some(s) => return Err(format!("unknown STATUS_ID {s}")),
    };
    let mut price = int("PRICE")?;
    if channel == "rent" {
        price = match int("LET_RENT_FREQUENCY")? {
            None | Some(1) => price,
            Some(0) => price.map(|p| monthly(p, 52)),
            Some(2) => price.map(|p| monthly(p, 4)),
            Some(3) => price.map(|p| monthly(p, 1)),
            Some(5) => None,
            Some(f) => return Err(format!("unknown LET_RENT_FREQUENCY {f}")),
        };
    }
    let time = generated
        .or_else(|| get("UPDATE_DATE").and_then(blm_time))
        .ok_or("no time: the header has no Generated Date and UPDATE_DATE is not a date")?;
    let parts: Vec<&str> = ["ADDRESS_1", "ADDRESS_2", "ADDRESS_3", "ADDRESS_4", "TOWN"]
        .iter()
        .filter_map(|c| get(c))
        .collect();
    let address = if parts.is_empty() {
        get("DISPLAY_ADDRESS").map(str::to_string)
    } else {
        Some(parts.join(", "))
    };
    let postcode = match (get("POSTCODE1"), get("POSTCODE2")) {
        (Some(a), Some(b)) => value::postcode(Some(&format!("{a} {b}"))),
        _ => None,
    };
    let bedrooms = int("BEDROOMS")?.and_then(|b| i32::try_from(b).ok());
    Ok(ListingRow {
        listing_id: agent_ref,
        channel: channel.into(),
        address,
        postcode,
        uprn: None,
        price,
        bedrooms,
        property_type: int("PROP_SUB_ID")?.map(property_type),
        agent: None,
        first_seen: time,
        snapshots: vec![Snapshot {
            time,
            price,
            status: status.map(str::to_string),
            removal_reason: None,
        }],
        details: Details {
            branch: get("BRANCH_ID").map(str::to_string),
            new_home: match get("NEW_HOME_FLAG") {
                Some("Y" | "y") => Some(true),
                Some("N" | "n") => Some(false),
                _ => None,
            },
            tenure: int("TENURE_TYPE_ID")?.and_then(tenure).map(str::to_string),
            latitude: get("LATITUDE").and_then(value::float),
            longitude: get("LONGITUDE").and_then(value::float),
            ..Details::default()
        },
        feed: "blm",
        removal_only: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    const HEAD: &str = "#HEADER#\nVersion : 3\nEOF : '^'\nEOR : '~'\nProperty Count : 4\nGenerated Date : 02-Mar-2025 09:30\n\n#DEFINITION#\nAGENT_REF^ADDRESS_1^ADDRESS_2^TOWN^POSTCODE1^POSTCODE2^BRANCH_ID^STATUS_ID^BEDROOMS^PRICE^PROP_SUB_ID^DISPLAY_ADDRESS^TRANS_TYPE_ID^LET_RENT_FREQUENCY^NEW_HOME_FLAG^~\n\n#DATA#\n";

    #[test]
    fn records_by_name_with_their_lines() {
        let body = concat!(
            "99_S1^12^High Street^Tamberley^XT1^2AB^99^0^3^250000^3^High Street, Tamberley^1^^N^~\n",
            "99_L1^Flat 2^Mill Lane^Tamberley^XT1^3CD^99^5^1^200^8^Mill Lane^2^0^^~\n",
            "99_L2^^^^XT1^3CD^99^9^1^200^8^Mill Lane^2^0^^~\n",
            "99_L3^Flat 4^Mill\nLane^Tamberley^XT1^3CD^99^0^1^900^8^Mill Lane^2^1^^~\n",
            "99_S2^1 Road^^Town^XT1^2AB^99^0^two^1^3^^1^^^~\n",
            "short^1^~\n",
            "#END#\n"
        );
        let f = temp_file(format!("{HEAD}{body}").as_bytes());
        let (ok, bad) = split(read(f.path()).expect("opens"));
        let lines: Vec<u64> = ok.iter().map(|r| r.0).collect();
        assert_eq!(lines, vec![12, 13, 15]);
        let s = &ok[0].1;
        assert_eq!(s.channel, "sale");
        assert_eq!(s.address.as_deref(), Some("12, High Street, Tamberley"));
        assert_eq!(s.postcode.as_deref(), Some("XT1 2AB"));
        assert_eq!(s.price, Some(250_000));
        assert_eq!(s.bedrooms, Some(3));
        assert_eq!(s.property_type.as_deref(), Some("Semi-detached house"));
        assert_eq!(s.details.branch.as_deref(), Some("99"));
        assert_eq!(s.details.new_home, Some(false));
        assert_eq!(s.first_seen.to_rfc3339(), "2025-03-02T09:30:00+00:00");
        let l = &ok[1].1;
        assert_eq!((l.channel.as_str(), l.price), ("rent", Some(867)));
        assert_eq!(l.snapshots[0].status.as_deref(), Some("let_agreed"));
        assert_eq!(
            ok[2].1.address.as_deref(),
            Some("Flat 4, Mill\nLane, Tamberley")
        );
        let reasons: Vec<(u64, &str)> = bad.iter().map(|b| (b.line, b.reason.as_str())).collect();
        assert_eq!(
            reasons,
            vec![
                (14, "unknown STATUS_ID 9"),
                (17, "BEDROOMS \"two\" is not a whole number of at least 0"),
                (18, "3 fields, the definition has 15 columns"),
            ]
        );
        assert!(bad.iter().all(|b| b.file == f.path().display().to_string()));
    }

    #[test]
    fn unreadable_headers_are_errors() {
        for (text, why) in [
            ("AGENT_REF^~", "no #HEADER#"),
            (
                "#HEADER#\nEOR : '~'\n#DEFINITION#\nAGENT_REF^TRANS_TYPE_ID^~\n#DATA#\n#END#\n",
                "no EOF",
            ),
            (
                "#HEADER#\nEOF : '^'\nEOR : '~'\n#DEFINITION#\nAGENT_REF^~\n#DATA#\n#END#\n",
                "no TRANS_TYPE_ID",
            ),
            (
                "#HEADER#\nVersion : 2\nEOF : '^'\nEOR : '~'\n#DEFINITION#\nAGENT_REF^TRANS_TYPE_ID^~\n#DATA#\n#END#\n",
                "version 2",
            ),
        ] {
            let f = temp_file(text.as_bytes());
            let e = read(f.path()).err().expect(why);
            assert!(e.to_string().contains(why), "{e}");
        }
    }
}
