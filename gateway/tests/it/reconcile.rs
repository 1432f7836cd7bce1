//! Reconcile: divergences between the certificates, the sales, the council tax list and the
//! register, with both values and their sources; agreement is not a divergence.

use crate::support::*;
use terrace_ingest::{Dataset, Progress};

const EPC: &str = "lmk-key,address1,postcode,uprn,property-type,total-floor-area,number-habitable-rooms,lodgement-date
K-A,\"Flat 2, 10 High Street\",XT1 1AB,990000000012,Flat,48.0,2,2015-01-01
K-B,\"Flat 2, 10 High Street\",XT1 1AB,990000000012,Flat,52.5,2,2023-01-01
K-H,1 High Street,XT1 1AA,990000000001,House,90.0,4,2020-01-01
";
/// Flat 2 registered as a flat; 1 High Street (a terraced house in the register) sold as detached.
const SALES: &str = "\
\"{00000000-0000-0000-0000-0000000000B1}\",\"125000\",\"2018-04-30 00:00\",\"XT1 1AB\",\"F\",\"N\",\"L\",\"10\",\"FLAT 2\",\"HIGH STREET\",\"\",\"EXAMPLETON\",\"EXAMPLETON\",\"EXAMPLESHIRE\",\"A\",\"A\"
\"{00000000-0000-0000-0000-0000000000B2}\",\"300000\",\"2019-04-30 00:00\",\"XT1 1AA\",\"D\",\"N\",\"F\",\"1\",\"\",\"HIGH STREET\",\"\",\"EXAMPLETON\",\"EXAMPLETON\",\"EXAMPLESHIRE\",\"A\",\"A\"
";

#[actix_web::test]
async fn divergences_name_every_value_and_source() {
    let w = world().await;
    load_text(w.db(), Dataset::Epc, EPC).await;
    load_text(w.db(), Dataset::PricePaid, SALES).await;
    terrace_build::derive::link_to_uprns(w.db(), &mut Progress::quiet())
        .await
        .unwrap();
    let (_, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/property/990000000012/reconcile", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let fields: Vec<&str> = r.json["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, vec!["floor_area_m2"], "{}", r.json);
    let values = &r.json["divergences"][0]["values"];
    assert_eq!(values.as_array().unwrap().len(), 2);
    assert_eq!(
        (values[0]["value"].as_f64(), values[0]["record"].as_str()),
        (Some(52.5), Some("K-B"))
    );
    assert!(values[1]["source"].as_str().unwrap().contains("epc"));
    // Flat, F and RD06 agree; the addresses differ only in punctuation and case.
    let r = send(&svc, get("/v1/property/990000000001/reconcile", &key)).await;
    let d = r.json["divergences"].as_array().unwrap();
    let t = d
        .iter()
        .find(|d| d["field"] == "property_type")
        .expect("terraced vs detached");
    let words: Vec<&str> = t["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["value"].as_str().unwrap())
        .collect();
    assert!(
        words.contains(&"terraced house") && words.contains(&"detached house"),
        "{words:?}"
    );
    assert_eq!(r.json["credits_charged"], 2);
    assert_eq!(
        send(&svc, get("/v1/property/990000009999/reconcile", &key))
            .await
            .status,
        404
    );
}

/// Two listings of Flat 2: one says 2 bedrooms, the other 3 (more than the certificate's 2
/// habitable rooms) and calls it a maisonette-free "Apartment" (agreeing with the flat).
const LISTINGS: &str = r#"{"listing_id":"R-1","channel":"sale","address":"Flat 2, 10 High Street","postcode":"XT1 1AB","uprn":990000000012,"price":150000,"bedrooms":2,"property_type":"Apartment","agent":"A","first_seen":"2026-01-05T10:00:00Z","snapshots":[{"time":"2026-01-05T10:00:00Z","price":150000,"status":"available"}]}
{"listing_id":"R-2","channel":"rent","address":"Flat 2, 10 High St","postcode":"XT1 1AB","uprn":990000000012,"price":900,"bedrooms":3,"property_type":"Flat","agent":"B","first_seen":"2026-02-05T10:00:00Z","snapshots":[{"time":"2026-02-05T10:00:00Z","price":900,"status":"available"}]}
{"listing_id":"R-3","channel":"sale","address":"2 High Street","postcode":"XT1 1AA","uprn":990000000002,"price":250000,"bedrooms":3,"property_type":"Terraced house","agent":"A","first_seen":"2026-01-05T10:00:00Z","snapshots":[{"time":"2026-01-05T10:00:00Z","price":250000,"status":"available"}]}
"#;

#[actix_web::test]
async fn listings_are_compared_with_the_other_sources() {
    let w = world().await;
    load_text(w.db(), Dataset::Epc, EPC).await;
    load_text(w.db(), Dataset::Listings, LISTINGS).await;
    let (_, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/property/990000000012/reconcile", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["not_yet_compared"], serde_json::json!([]));
    let d = r.json["divergences"].as_array().unwrap();
    let by = |f: &str| d.iter().find(|x| x["field"] == f).cloned();
    let beds = by("bedrooms").expect("2 vs 3 bedrooms");
    let records: Vec<&str> = beds["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["record"].as_str().unwrap())
        .collect();
    assert_eq!(records, vec!["R-1", "R-2"]);
    assert!(
        beds["values"][0]["source"]
            .as_str()
            .unwrap()
            .contains("listings")
    );
    // 3 bedrooms but 2 habitable rooms on the newest certificate.
    let rooms = by("habitable_rooms").expect("bedrooms above habitable rooms");
    let pairs: Vec<(i64, &str)> = rooms["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["value"].as_i64().unwrap(), v["record"].as_str().unwrap()))
        .collect();
    assert_eq!(pairs, vec![(2, "K-B"), (3, "R-2")]);
    // "Apartment" and "Flat" agree with the certificates' "Flat"; the address forms agree.
    assert!(by("property_type").is_none(), "{}", r.json);
    assert!(by("address").is_none(), "{}", r.json);
    let compared = r.json["compared"].as_array().unwrap();
    let n = |f: &str| {
        compared
            .iter()
            .find(|c| c["field"] == f)
            .map(|c| c["sources"].as_i64().unwrap())
    };
    assert_eq!((n("bedrooms"), n("property_type")), (Some(2), Some(5)));
    // 2 High Street: one listing, no certificate; a terraced house like the register says.
    let r = send(&svc, get("/v1/property/990000000002/reconcile", &key)).await;
    assert_eq!(r.json["divergences"], serde_json::json!([]), "{}", r.json);
}
