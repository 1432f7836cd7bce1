//! EPC recommendations: the `recommendations.csv` beside each register's `certificates.csv`.
//!
//! Domestic: `LMK_KEY, IMPROVEMENT_ITEM, IMPROVEMENT_SUMMARY_TEXT, IMPROVEMENT_DESCR_TEXT,
//! IMPROVEMENT_ID, IMPROVEMENT_ID_TEXT, INDICATIVE_COST`. Non-domestic and display:
//! `LMK_KEY, PAYBACK_TYPE, RECOMMENDATION_ITEM, RECOMMENDATION_CODE, RECOMMENDATION,
//! CO2_IMPACT` (no cost). The newer register's `CERTIFICATE_NUMBER` is accepted for `LMK_KEY`.
//! Columns are found by name, in any order. A row without a certificate key, or without an item
//! number that is a whole number from 0 up, is rejected; text is kept as written (the indicative
//! cost is the assessor's band, such as "£4,000 - £6,000", never parsed into a number).

use super::csvio::{Header, Opened, field};
use super::{Parsed, value};
use std::io;
use std::path::Path;

/// One recommendation.
#[derive(Debug, Clone, PartialEq)]
pub struct RecommendationRow {
    pub lmk_key: String,
    pub item: i32,
    pub summary: Option<String>,
    pub description: Option<String>,
    pub improvement_id: Option<String>,
    pub improvement_id_text: Option<String>,
    pub indicative_cost: Option<String>,
    pub payback_type: Option<String>,
    pub co2_impact: Option<String>,
}

/// Whether a header (lower-kebab names) is a recommendations file's.
pub fn is_header(names: &[String]) -> bool {
    let has = |n: &str| names.iter().any(|x| x == n);
    (has("lmk-key") || has("certificate-number"))
        && (has("improvement-item") || has("recommendation-item"))
}

#[derive(Debug, Clone)]
struct Columns {
    key: Option<usize>,
    item: Option<usize>,
    summary: Option<usize>,
    description: Option<usize>,
    improvement_id: Option<usize>,
    improvement_id_text: Option<usize>,
    cost: Option<usize>,
    payback: Option<usize>,
    co2: Option<usize>,
}

/// Opens a recommendations CSV; the header must name the certificate key and the item.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<RecommendationRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let names = source.header()?.unwrap_or_default();
    let header = Header::new(names);
    let width = header.len();
    let cols = if header.names.is_empty() {
        None
    } else {
        let key = header.require(&source.file, &["lmk-key", "certificate-number"])?;
        let item = header.require(&source.file, &["improvement-item", "recommendation-item"])?;
        let f = |n: &[&str]| header.find(n);
        Some(Columns {
            key: Some(key),
            item: Some(item),
            summary: f(&["improvement-summary-text", "recommendation"]),
            description: f(&["improvement-descr-text"]),
            improvement_id: f(&["improvement-id", "recommendation-code"]),
            improvement_id_text: f(&["improvement-id-text"]),
            cost: f(&["indicative-cost"]),
            payback: f(&["payback-type"]),
            co2: f(&["co2-impact"]),
        })
    };
    Ok(source.rows(width, move |fields| match &cols {
        Some(c) => parse_row(fields, c),
        None => Err("no header".to_string()),
    }))
}

fn parse_row(fields: &[String], c: &Columns) -> Result<RecommendationRow, String> {
    let text = |i: Option<usize>| value::text(field(fields, i));
    let lmk_key = field(fields, c.key)
        .ok_or("missing certificate key (LMK_KEY or CERTIFICATE_NUMBER)")?
        .to_string();
    let raw_item = field(fields, c.item).ok_or("missing item number")?;
    let item = value::int(raw_item)
        .and_then(|v| i32::try_from(v).ok())
        .filter(|v| *v >= 0)
        .ok_or_else(|| format!("item {raw_item:?} is not a whole number"))?;
    Ok(RecommendationRow {
        lmk_key,
        item,
        summary: text(c.summary),
        description: text(c.description),
        improvement_id: text(c.improvement_id),
        improvement_id_text: text(c.improvement_id_text),
        indicative_cost: text(c.cost),
        payback_type: text(c.payback),
        co2_impact: text(c.co2),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    #[test]
    fn domestic_rows_and_rejections() {
        let f = temp_file(
            "LMK_KEY,IMPROVEMENT_ITEM,IMPROVEMENT_SUMMARY_TEXT,IMPROVEMENT_DESCR_TEXT,IMPROVEMENT_ID,IMPROVEMENT_ID_TEXT,INDICATIVE_COST\n\
             abc,1,Increase loft insulation to 270 mm,,5,Increase loft insulation to 270 mm,\"£100 - £350\"\n\
             abc,2,,Solar water heating,19,,\"£4,000 - £6,000\"\n\
             ,3,x,,,,\n\
             abd,two,x,,,,\n\
             abd,1\n"
                .as_bytes(),
        );
        let (ok, bad) = split(read(f.path()).expect("opens"));
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[0].1.lmk_key, "abc");
        assert_eq!(ok[0].1.item, 1);
        assert_eq!(ok[1].1.indicative_cost.as_deref(), Some("£4,000 - £6,000"));
        assert_eq!(ok[1].1.summary, None);
        assert_eq!(ok[1].1.improvement_id.as_deref(), Some("19"));
        assert_eq!(
            bad.iter()
                .map(|b| (b.line, b.reason.as_str()))
                .collect::<Vec<_>>(),
            vec![
                (4, "missing certificate key (LMK_KEY or CERTIFICATE_NUMBER)"),
                (5, "item \"two\" is not a whole number"),
                (6, "expected 7 columns, found 2"),
            ]
        );
    }

    #[test]
    fn non_domestic_and_certificate_number() {
        let f = temp_file(
            b"CERTIFICATE_NUMBER,PAYBACK_TYPE,RECOMMENDATION_ITEM,RECOMMENDATION_CODE,RECOMMENDATION,CO2_IMPACT\n\
              0001-2222,SHORT,1,ECP-L5,Add time control to heating system.,HIGH\n",
        );
        let (ok, bad) = split(read(f.path()).expect("opens"));
        assert!(bad.is_empty());
        let r = &ok[0].1;
        assert_eq!(r.lmk_key, "0001-2222");
        assert_eq!(
            (r.payback_type.as_deref(), r.co2_impact.as_deref()),
            (Some("SHORT"), Some("HIGH"))
        );
        assert_eq!(r.improvement_id.as_deref(), Some("ECP-L5"));
        assert_eq!(
            r.summary.as_deref(),
            Some("Add time control to heating system.")
        );
        assert!(is_header(&[
            "certificate-number".to_string(),
            "recommendation-item".to_string()
        ]));
    }

    #[test]
    fn header_without_item_is_an_io_error() {
        let f = temp_file(b"LMK_KEY,IMPROVEMENT_SUMMARY_TEXT\nabc,x\n");
        assert_eq!(
            read(f.path()).err().map(|e| e.kind()),
            Some(io::ErrorKind::InvalidData)
        );
    }
}
