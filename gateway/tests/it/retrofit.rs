//! Retrofit: newest certificate wins, points and bands available, fabric and heating as recorded,
//! MEES (F or G cannot lawfully be let without a registered exemption).

use crate::support::*;
use terrace_ingest::Dataset;

/// Synthetic certificates (search-API header style) for the small world.
const EPC: &str = "\
lmk-key,address1,postcode,uprn,current-energy-rating,potential-energy-rating,current-energy-efficiency,potential-energy-efficiency,lodgement-date,walls-description,roof-description,mainheat-description,main-fuel
K-OLD,2 High Street,XT1 1AA,990000000002,D,B,60,84,2012-05-01,Solid brick,Pitched 100 mm,Boiler and radiators,mains gas
K-NEW,2 High Street,XT1 1AA,990000000002,F,C,30,72,2024-03-09,\"Solid brick, as built, no insulation\",\"Pitched, no insulation\",\"Room heaters, electric\",electricity
K-E,1 High Street,XT1 1AA,990000000001,E,C,45,70,2021-01-01,Cavity wall,Pitched 200 mm,Boiler and radiators,mains gas
";

#[actix_web::test]
async fn retrofit_reads_the_newest_certificate_and_mees() {
    let w = world().await;
    let r = load_text(w.db(), Dataset::Epc, EPC).await;
    assert_eq!((r.counts.read, r.counts.loaded), (3, 3));
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/property/990000000002/retrofit", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["certificate"], "K-NEW");
    assert_eq!(r.json["certificates_held"], 2);
    assert_eq!(
        (
            r.json["current"]["band"].as_str(),
            r.json["potential"]["band"].as_str()
        ),
        (Some("F"), Some("C"))
    );
    assert_eq!(
        (
            r.json["points_available"].as_i64(),
            r.json["bands_available"].as_i64()
        ),
        (Some(42), Some(3))
    );
    assert_eq!(
        r.json["fabric"]["walls"],
        "Solid brick, as built, no insulation"
    );
    assert_eq!(r.json["heating"]["main_fuel"], "electricity");
    assert_eq!(r.json["mees"]["status"], "below_minimum");
    assert_eq!(r.json["mees"]["lawful_to_let_without_exemption"], false);
    assert_eq!(r.json["credits_charged"], 2);
    let r = send(&svc, get("/v1/property/990000000001/retrofit", &key)).await;
    assert_eq!(
        (
            r.json["mees"]["status"].as_str(),
            r.json["mees"]["lawful_to_let_without_exemption"].as_bool()
        ),
        (Some("meets_minimum"), Some(true))
    );
    let r = send(&svc, get("/v1/property/990000000003/retrofit", &key)).await;
    assert_eq!(
        (r.status, r.json["status"].as_str()),
        (200, Some("no_certificate")),
        "{}",
        r.json
    );
    assert!(
        r.json["current"].is_null() && r.json["mees"].is_null(),
        "nothing invented"
    );
    assert_eq!(
        send(&svc, get("/v1/property/990000009999/retrofit", &key))
            .await
            .status,
        404
    );
    assert_eq!(balance(w.db(), acct).await, 4);
}
