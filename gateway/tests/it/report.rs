//! The property report: each section is what the single operation answers (the same domain
//! functions), at one price below their sum; an unknown UPRN is 404 and free.

use crate::support::*;
use serde_json::Value;
use terrace_ingest::Dataset;

const LEASES: &str = "Unique Identifier,Tenure,Register Property Description,County,Region,Associated Property Description ID,Associated Property Description,OS UPRN,Price Paid,Reg Order,Date of Lease,Term,Alienation Clause Indicator
L-R1,Leasehold,\"Flat 2, 10 High Street\",EXAMPLESHIRE,SOUTH WEST,,,990000000012,,1,01-01-1990,99 years from 1 January 1990,N
";
const EPC: &str = "lmk-key,address1,postcode,uprn,property-type,total-floor-area,number-habitable-rooms,lodgement-date,current-energy-rating,potential-energy-rating
K-R1,\"Flat 2, 10 High Street\",XT1 1AB,990000000012,Flat,52.5,2,2023-01-01,F,C
";

fn without_credits(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.remove("credits_charged");
        o.remove("credits_remaining");
    }
    v
}

#[actix_web::test]
async fn sections_are_the_single_answers() {
    let w = world().await;
    load_text(w.db(), Dataset::Leases, LEASES).await;
    load_text(w.db(), Dataset::Epc, EPC).await;
    let (acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/property/990000000012/report", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 8);
    for (section, path) in [
        ("registered_lease", "/v1/property/990000000012/lease"),
        ("risk", "/v1/property/990000000012/risk"),
        (
            "rental_estimate",
            "/v1/property/990000000012/rental-estimate",
        ),
        ("energy", "/v1/property/990000000012/retrofit"),
        (
            "nearby_planning",
            "/v1/property/990000000012/planning-history",
        ),
        ("summary", "/v1/property/990000000012/summary"),
    ] {
        let single = send(&svc, get(path, &key)).await;
        assert_eq!(single.status, 200, "{path}: {}", single.json);
        assert_eq!(r.json[section], without_credits(single.json), "{section}");
    }
    assert_eq!(r.json["registered_lease"]["status"], "ok");
    assert_eq!(r.json["energy"]["mees"]["status"], "below_minimum");
    let before = balance(w.db(), acct).await;
    let r = send(&svc, get("/v1/property/990000009999/report", &key)).await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (404, Some(0))
    );
    assert_eq!(balance(w.db(), acct).await, before);
}
