//! The rental estimate: own live listing first, else the district median for the bedroom band
//! with p25-p75 and n, not_available when thin; gross yield with its basis; `beds` validated.

use crate::support::*;
use chrono::TimeZone;
use std::sync::Arc;
use terrace_core::FixedClock;
use terrace_gateway::state::RateLimit;
use terrace_ingest::Dataset;

fn rent(id: &str, pc: &str, uprn: Option<i64>, beds: i32, pcm: i64) -> String {
    let u = uprn.map(|u| format!(",\"uprn\":{u}")).unwrap_or_default();
    format!(
        "{{\"listing_id\":\"{id}\",\"channel\":\"rent\",\"postcode\":\"{pc}\"{u},\"price\":{pcm},\"bedrooms\":{beds},\"first_seen\":\"2026-09-10\",\"snapshots\":[{{\"time\":\"2026-10-01T00:00:00Z\",\"price\":{pcm},\"status\":\"available\"}}]}}\n"
    )
}

async fn rental_world() -> TestApp {
    let w = world().await;
    let mut feed = String::new();
    // Six 2-bedroom lets in XT1 and one 3-bedroom; 3 High Street is itself to let.
    for (i, pcm) in [800, 850, 900, 950, 1000, 1100].iter().enumerate() {
        feed.push_str(&rent(&format!("R{i}"), "XT1 9ZZ", None, 2, *pcm));
    }
    feed.push_str(&rent("R3B", "XT1 9ZZ", None, 3, 1400));
    feed.push_str(&rent("OWN", "XT1 1AA", Some(990000000003), 3, 1250));
    feed.push_str("{\"listing_id\":\"S2\",\"channel\":\"sale\",\"postcode\":\"XT1 1AA\",\"uprn\":990000000002,\"price\":240000,\"bedrooms\":2,\"first_seen\":\"2026-09-10\",\"snapshots\":[{\"time\":\"2026-10-01T00:00:00Z\",\"price\":240000,\"status\":\"available\"}]}\n");
    let r = load_text(w.db(), Dataset::Listings, &feed).await;
    assert_eq!(r.counts.loaded, 9, "{:?}", r.rejections);
    let clock = Arc::new(FixedClock(
        chrono::Utc
            .with_ymd_and_hms(2026, 11, 21, 12, 0, 0)
            .unwrap(),
    ));
    let state = state_with_clock(w.db(), RateLimit::default(), clock).await;
    TestApp { t: w.t, state }
}

#[actix_web::test]
async fn own_listing_then_district_median_then_not_available() {
    let w = rental_world().await;
    let (acct, key) = account(w.db(), 20).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/property/990000000003/rental-estimate", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        (
            r.json["estimate"]["basis"].as_str(),
            r.json["estimate"]["monthly_rent_gbp"].as_i64()
        ),
        (Some("own_listing"), Some(1250))
    );
    // 2 High Street: a 2-bedroom sale listing, so the district's 2-bedroom median.
    let r = send(&svc, get("/v1/property/990000000002/rental-estimate", &key)).await;
    let e = &r.json["estimate"];
    assert_eq!(e["basis"], "district_median", "{}", r.json);
    assert_eq!(
        (
            e["monthly_rent_gbp"].as_i64(),
            e["p25_gbp"].as_i64(),
            e["p75_gbp"].as_i64(),
            e["n"].as_i64()
        ),
        (Some(900), Some(850), Some(1000), Some(6))
    );
    assert_eq!(
        r.json["gross_yield"]["value_basis"],
        "live_sale_listing_asking_price"
    );
    assert_eq!(r.json["gross_yield"]["gross_yield"], 0.045);
    assert_eq!(r.json["housing_benefit_cap"]["status"], "not_available");
    // Three bedrooms: one listing only, so no figure, with the reason.
    let r = send(
        &svc,
        get("/v1/property/990000000002/rental-estimate?beds=3", &key),
    )
    .await;
    assert_eq!(r.json["estimate"]["status"], "not_available", "{}", r.json);
    assert!(
        r.json["estimate"]["reason"]
            .as_str()
            .unwrap()
            .contains("only 2")
    );
    assert_eq!(r.json["gross_yield"]["status"], "not_available");
    // beds: integer or null.
    assert_eq!(
        send(
            &svc,
            get("/v1/property/990000000002/rental-estimate?beds=null", &key)
        )
        .await
        .status,
        200
    );
    for bad in ["two", "-1", "21"] {
        assert_eq!(
            send(
                &svc,
                get(
                    &format!("/v1/property/990000000002/rental-estimate?beds={bad}"),
                    &key
                )
            )
            .await
            .status,
            422,
            "{bad}"
        );
    }
    // Bedrooms unknown and not given.
    let r = send(&svc, get("/v1/property/990000000021/rental-estimate", &key)).await;
    assert!(
        r.json["estimate"]["reason"]
            .as_str()
            .unwrap()
            .contains("beds"),
        "{}",
        r.json
    );
    assert_eq!(balance(w.db(), acct).await, 20 - 2 * 5);
}

/// Two BRMAs: XT1 1AA by its unit in North, the rest of XT1 by district in both (split), and XT2
/// by sector in South; South's 2-bedroom rate rises in April 2026, North has no 4-bedroom rate.
const LHA: &str = "BRMA,BRMA Code,Category,Weekly Rate,Valid From
North,N-1,Shared accommodation,£90.00,2025-04-01
North,N-1,2 bedrooms,£150.00,2025-04-01
South,S-1,Shared accommodation,£80.00,2025-04-01
South,S-1,1 bedroom,£120.00,2025-04-01
South,S-1,2 bedrooms,£140.00,2025-04-01
South,S-1,2 bedrooms,£145.50,2026-04-01
South,S-1,3 bedrooms,£170.00,2027-04-01
";
const BRMA: &str = "Postcode,BRMA
XT1 1AA,North
XT1,North
XT1,South
XT2 3,South
";

#[actix_web::test]
async fn housing_benefit_cap_from_the_brma_of_the_postcode() {
    let w = rental_world().await;
    let r = load_text(w.db(), Dataset::LhaRates, LHA).await;
    assert_eq!(r.counts.loaded, 7, "{:?}", r.rejections);
    let r = load_text(w.db(), Dataset::BrmaLookup, BRMA).await;
    assert_eq!(r.counts.loaded, 4, "{:?}", r.rejections);
    let (_, key) = account(w.db(), 20).await;
    let svc = service(w.state.clone()).await;
    // 2 High Street, XT1 1AA: the unit entry places it in North despite the split district.
    let r = send(&svc, get("/v1/property/990000000002/rental-estimate", &key)).await;
    let cap = &r.json["housing_benefit_cap"];
    assert_eq!(
        (
            cap["kind"].as_str(),
            cap["brma"].as_str(),
            cap["matched_on"].as_str(),
            cap["matched_area"].as_str(),
            cap["applicable_category"].as_str()
        ),
        (
            Some("local_housing_allowance"),
            Some("North"),
            Some("unit"),
            Some("XT1 1AA"),
            Some("2")
        ),
        "{}",
        r.json
    );
    let rates: Vec<(&str, f64, f64)> = cap["rates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["category"].as_str().unwrap(),
                r["weekly_rate_gbp"].as_f64().unwrap(),
                r["monthly_equivalent_gbp"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(rates, vec![("shared", 90.0, 390.0), ("2", 150.0, 650.0)]);
    assert!(cap["note"].as_str().unwrap().contains("not a market rent"));
    // Flat 2, XT1 1AB: the district is split and the lookup has no finer entry: not a guess.
    let r = send(&svc, get("/v1/property/990000000012/rental-estimate", &key)).await;
    let cap = &r.json["housing_benefit_cap"];
    assert_eq!(cap["status"], "not_available", "{}", r.json);
    assert!(cap["reason"].as_str().unwrap().contains("North, South"));
    // 21 Station Road, XT2 3BC: by sector; the 2026 rate is in force on 2026-11-21, the 2027
    // one is not; four bedrooms fall in the 4-bedroom category, which South lacks.
    let r = send(
        &svc,
        get("/v1/property/990000000022/rental-estimate?beds=5", &key),
    )
    .await;
    let cap = &r.json["housing_benefit_cap"];
    assert_eq!(
        (cap["brma"].as_str(), cap["matched_on"].as_str()),
        (Some("South"), Some("sector")),
        "{}",
        r.json
    );
    let two = cap["rates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["category"] == "2")
        .cloned()
        .unwrap();
    assert_eq!(
        (two["weekly_rate_gbp"].as_f64(), two["valid_from"].as_str()),
        (Some(145.5), Some("2026-04-01"))
    );
    assert!(
        cap["rates"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["category"] != "3")
    );
    assert!(cap["applicable_category"].is_null());
    // 24 Otherbury: no BRMA entry at any level.
    let r = send(&svc, get("/v1/property/990000000024/rental-estimate", &key)).await;
    assert_eq!(r.json["housing_benefit_cap"]["status"], "not_available");
}
