//! Where the sources disagree about a property: floor area, rooms, property type and the form of
//! its address, each divergence with both values and their sources.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};
use terrace_core::Uprn;
use terrace_store::Db;
use terrace_store::{address, council_tax, epc, listings, sales};

use crate::PropertyError;

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SourcedValue {
    pub value: Value,
    pub source: String,
    /// Which record of the source (certificate key, transaction id, list reference).
    pub record: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Divergence {
    /// `floor_area_m2`, `habitable_rooms`, `bedrooms`, `property_type` or `address`.
    pub field: &'static str,
    /// Every distinct value the sources give, with the source of each.
    pub values: Vec<SourcedValue>,
    pub note: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Reconcile {
    pub uprn: i64,
    pub country: &'static str,
    pub divergences: Vec<Divergence>,
    /// The fields compared and the sources that had a value for each.
    pub compared: Vec<Compared>,
    /// Sources that could not be compared because they are not loaded yet (empty when every
    /// source the comparison uses is loaded).
    pub not_yet_compared: Vec<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Compared {
    pub field: &'static str,
    pub sources: usize,
}

/// Property type in common words, so "Flat" (EPC), "F" (Price Paid) and "RD06" (the register)
/// compare as the same thing.
fn type_word(source: &str, raw: &str) -> String {
    let r = raw.trim().to_ascii_uppercase();
    let w = match (source, r.as_str()) {
        ("price_paid", "F") | (_, "RD06") | ("epc", "FLAT") | ("epc", "MAISONETTE") => "flat",
        ("price_paid", "D") | (_, "RD02") => "detached house",
        ("price_paid", "S") | (_, "RD03") => "semi-detached house",
        ("price_paid", "T") | (_, "RD04") => "terraced house",
        ("epc", "HOUSE") | ("epc", "BUNGALOW") => "house",
        ("listing", r)
            if ["FLAT", "APARTMENT", "MAISONETTE", "STUDIO"]
                .iter()
                .any(|w| r.contains(w)) =>
        {
            "flat"
        }
        ("listing", r) if r.contains("SEMI") => "semi-detached house",
        ("listing", r) if r.contains("TERRACE") => "terraced house",
        ("listing", r) if r.contains("BUNGALOW") => "house",
        ("listing", r) if r.contains("DETACHED") => "detached house",
        _ => return r.to_lowercase(),
    };
    w.to_string()
}

/// Two type words agree when equal, or when one is the generic "house" and the other a house.
fn same_type(a: &str, b: &str) -> bool {
    a == b || (a == "house" && b.ends_with("house")) || (b == "house" && a.ends_with("house"))
}

/// Addresses compared on their letters and digits only, upper case.
fn address_key(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_uppercase()
}

fn distinct(
    values: Vec<SourcedValue>,
    same: impl Fn(&Value, &Value) -> bool,
) -> Option<Vec<SourcedValue>> {
    let first = values.first()?;
    values
        .iter()
        .any(|v| !same(&v.value, &first.value))
        .then_some(values)
}

/// Compares what each loaded source says about the UPRN.
pub async fn reconcile(db: &Db, uprn: Uprn) -> Result<Reconcile, PropertyError> {
    let a = address::address(db, uprn.get())
        .await?
        .ok_or_else(|| PropertyError::NotFound(format!("UPRN {uprn}")))?;
    let certs = epc::epc_for_uprn(db, uprn.get()).await?;
    let sales = sales::sales_for_uprn(db, uprn.get(), 500).await?;
    let taxes = council_tax::council_tax_for_uprn(db, uprn.get()).await?;
    let mut listings = listings::listings_for_uprn(db, uprn.get(), "sale").await?;
    listings.extend(listings::listings_for_uprn(db, uprn.get(), "rent").await?);
    let mut divergences = Vec::new();
    let mut compared = Vec::new();

    // Floor area and rooms: certificates against each other (listings give no floor area).
    for (field, pick) in [
        (
            "floor_area_m2",
            (|c: &epc::EpcRow| c.total_floor_area.map(|v| json!(v)))
                as fn(&epc::EpcRow) -> Option<Value>,
        ),
        ("habitable_rooms", |c: &epc::EpcRow| {
            c.habitable_rooms.map(|v| json!(v))
        }),
    ] {
        let values: Vec<SourcedValue> = certs
            .iter()
            .filter_map(|c| {
                pick(c).map(|value| SourcedValue {
                    value,
                    source: c.source.clone(),
                    record: Some(c.lmk_key.clone()),
                })
            })
            .collect();
        compared.push(Compared {
            field,
            sources: values.len(),
        });
        if let Some(values) = distinct(values, |x, y| x == y) {
            divergences.push(Divergence { field, values, note: "Energy certificates lodged at different times record different values; the newest is used in the record." });
        }
    }

    // Bedrooms: the listings against each other, and against the certificates' habitable rooms
    // (a home cannot have more bedrooms than habitable rooms).
    let beds: Vec<SourcedValue> = listings
        .iter()
        .filter_map(|l| {
            l.bedrooms.map(|b| SourcedValue {
                value: json!(b),
                source: l.source.clone(),
                record: Some(l.listing_id.clone()),
            })
        })
        .collect();
    compared.push(Compared {
        field: "bedrooms",
        sources: beds.len(),
    });
    let newest_rooms = certs.iter().find_map(|c| {
        c.habitable_rooms.map(|r| SourcedValue {
            value: json!(r),
            source: c.source.clone(),
            record: Some(c.lmk_key.clone()),
        })
    });
    if let Some(values) = distinct(beds.clone(), |x, y| x == y) {
        divergences.push(Divergence { field: "bedrooms", values, note: "Listings of the property give different numbers of bedrooms (a conversion, or an agent's error)." });
    }
    if let Some(rooms) = newest_rooms {
        let too_many: Vec<SourcedValue> = beds
            .into_iter()
            .filter(|b| b.value.as_i64() > rooms.value.as_i64())
            .collect();
        if !too_many.is_empty() {
            let mut values = vec![rooms];
            values.extend(too_many);
            divergences.push(Divergence { field: "habitable_rooms", values, note: "A listing gives more bedrooms than the newest energy certificate's habitable rooms; one of them is wrong or the property has changed." });
        }
    }

    // Property type: the register's class, the certificates, the registered sales, the listings.
    let mut types: Vec<SourcedValue> = Vec::new();
    if let Some(class) = &a.class {
        types.push(SourcedValue {
            value: json!(type_word("register", class)),
            source: a.address_source.clone().unwrap_or_default(),
            record: Some(class.clone()),
        });
    }
    for c in &certs {
        if let Some(t) = &c.property_type {
            let word = match c.built_form.as_deref() {
                Some(f)
                    if t.eq_ignore_ascii_case("house")
                        && f.to_ascii_lowercase().contains("semi") =>
                {
                    "semi-detached house".to_string()
                }
                Some(f)
                    if t.eq_ignore_ascii_case("house")
                        && f.to_ascii_lowercase().contains("terrace") =>
                {
                    "terraced house".to_string()
                }
                Some(f)
                    if t.eq_ignore_ascii_case("house") && f.eq_ignore_ascii_case("detached") =>
                {
                    "detached house".to_string()
                }
                _ => type_word("epc", t),
            };
            types.push(SourcedValue {
                value: json!(word),
                source: c.source.clone(),
                record: Some(c.lmk_key.clone()),
            });
        }
    }
    for s in &sales {
        types.push(SourcedValue {
            value: json!(type_word("price_paid", &s.property_type)),
            source: s.source.clone(),
            record: Some(s.transaction_id.clone()),
        });
    }
    for l in &listings {
        if let Some(t) = &l.property_type {
            types.push(SourcedValue {
                value: json!(type_word("listing", t)),
                source: l.source.clone(),
                record: Some(l.listing_id.clone()),
            });
        }
    }
    compared.push(Compared {
        field: "property_type",
        sources: types.len(),
    });
    if let Some(values) = distinct(types, |x, y| {
        same_type(
            x.as_str().unwrap_or_default(),
            y.as_str().unwrap_or_default(),
        )
    }) {
        divergences.push(Divergence { field: "property_type", values, note: "Sources classify the property differently; the register's classification is the mapping agency's." });
    }

    // Address form: the register against the certificates, the sales and the council tax list.
    let mut forms: Vec<SourcedValue> = Vec::new();
    if let Some(line) = crate::record::address_line(&a) {
        let without_pc = match &a.postcode {
            Some(pc) => line
                .trim_end_matches(pc.as_str())
                .trim_end_matches(", ")
                .to_string(),
            None => line,
        };
        forms.push(SourcedValue {
            value: json!(without_pc),
            source: a.address_source.clone().unwrap_or_default(),
            record: None,
        });
    }
    for c in &certs {
        if let Some(addr) = &c.address {
            forms.push(SourcedValue {
                value: json!(addr),
                source: c.source.clone(),
                record: Some(c.lmk_key.clone()),
            });
        }
    }
    for s in &sales {
        let parts: Vec<&str> = [&s.saon, &s.paon, &s.street, &s.locality, &s.town]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        forms.push(SourcedValue {
            value: json!(parts.join(", ")),
            source: s.source.clone(),
            record: Some(s.transaction_id.clone()),
        });
    }
    for t in &taxes {
        forms.push(SourcedValue {
            value: json!(t.address),
            source: t.source.clone(),
            record: Some(t.reference.clone()),
        });
    }
    for l in &listings {
        if let Some(addr) = &l.address {
            forms.push(SourcedValue {
                value: json!(addr),
                source: l.source.clone(),
                record: Some(l.listing_id.clone()),
            });
        }
    }
    compared.push(Compared {
        field: "address",
        sources: forms.len(),
    });
    // Written forms differ only when their letters and digits contradict: punctuation, case,
    // spacing and a trailing part left out (a town) are not divergences.
    let agree = |x: &Value, y: &Value| {
        let a = address_key(x.as_str().unwrap_or_default());
        let b = address_key(y.as_str().unwrap_or_default());
        a.starts_with(&b) || b.starts_with(&a)
    };
    if let Some(values) = distinct(forms, agree) {
        divergences.push(Divergence { field: "address", values, note: "The same property is written differently by different sources; the register's form is canonical." });
    }

    Ok(Reconcile {
        uprn: uprn.get(),
        country: "UK",
        divergences,
        compared,
        not_yet_compared: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_words_compare_across_sources() {
        assert!(same_type(
            &type_word("price_paid", "F"),
            &type_word("register", "RD06")
        ));
        assert!(same_type(
            &type_word("epc", "Flat"),
            &type_word("price_paid", "F")
        ));
        assert!(same_type(
            &type_word("epc", "House"),
            &type_word("price_paid", "T")
        ));
        for (listing, word) in [
            ("Flat", "flat"),
            ("Apartment", "flat"),
            ("Semi-detached house", "semi-detached house"),
            ("Terraced house", "terraced house"),
            ("End of terrace house", "terraced house"),
            ("Detached house", "detached house"),
            ("Detached bungalow", "house"),
        ] {
            assert_eq!(type_word("listing", listing), word, "{listing}");
        }
        assert!(!same_type(
            &type_word("price_paid", "D"),
            &type_word("register", "RD06")
        ));
        assert_eq!(
            address_key("Flat 2, 10 High St."),
            address_key("FLAT 2 10 HIGH ST")
        );
    }
}
