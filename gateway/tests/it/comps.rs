//! Same-building comparables: siblings listed, missing attributes backfilled (naming the
//! sibling), `max_backfills` honoured and validated.

use crate::support::*;
use terrace_ingest::Dataset;

/// Flat 1 has a full certificate, flat 3 only a rating; flat 2 (the subject) has none.
const EPC: &str = "lmk-key,address1,postcode,uprn,current-energy-rating,property-type,total-floor-area,number-habitable-rooms,lodgement-date
K1,Flat 1 10 High Street,XT1 1AB,990000000011,C,Flat,51.0,2,2021-01-01
K3,Flat 3 10 High Street,XT1 1AB,990000000013,D,,,,2020-01-01
";

#[actix_web::test]
async fn siblings_and_backfills() {
    let w = world().await;
    load_text(w.db(), Dataset::Epc, EPC).await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/property/990000000012/comps", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["building_uprn"], 990000000010i64);
    let comps: Vec<i64> = r.json["comparables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["uprn"].as_i64().unwrap())
        .collect();
    assert_eq!(comps, vec![990000000011, 990000000013]);
    let s = &r.json["subject"];
    assert_eq!(s["floor_area_m2"]["value"], 51.0);
    assert_eq!(s["floor_area_m2"]["backfilled_from"], 990000000011i64);
    assert!(s["energy_rating"].is_null(), "ratings are never backfilled");
    // Flat 3 has its own rating, and its missing attributes are filled too.
    let f3 = &r.json["comparables"][1];
    assert_eq!(f3["energy_rating"]["value"], "D");
    assert!(f3["energy_rating"].get("backfilled_from").is_none());
    assert_eq!(f3["habitable_rooms"]["backfilled_from"], 990000000011i64);
    assert_eq!(r.json["backfills_used"], 6);
    let r = send(
        &svc,
        get("/v1/property/990000000012/comps?max_backfills=1", &key),
    )
    .await;
    assert_eq!(r.json["backfills_used"], 1);
    assert!(r.json["subject"]["habitable_rooms"].is_null());
    for bad in ["0", "26", "x"] {
        let r = send(
            &svc,
            get(
                &format!("/v1/property/990000000012/comps?max_backfills={bad}"),
                &key,
            ),
        )
        .await;
        assert_eq!(r.status, 422, "{bad}");
    }
    assert_eq!(balance(w.db(), acct).await, 6);
}
