//! The commercial report (specification part 2.8) by UPRN and by UARN: the 2026 hereditament,
//! the sector rent index across the four lists, the lease, and `not_available` blocks with
//! reasons (never an invented yield).

use crate::support::*;
use terrace_ingest::{Dataset, Progress};

/// One list entry in the published `*`-separated layout (28 fields).
fn entry(
    uarn: i64,
    code: &str,
    desc: &str,
    address: &str,
    postcode: &str,
    eff: &str,
    rv: i64,
) -> String {
    format!(
        "1*1105*0*BA{uarn}*{code}*{desc}*{uarn}*{address}*ACME LTD*63-65*FORE STREET*EXAMPLETON**EXAMPLESHIRE*{postcode}*{eff}**{rv}**A{uarn}*{eff}*249G*****{eff}*\n"
    )
}

fn lists() -> String {
    let mut s = String::new();
    let fore = "63-65, FORE STREET, EXAMPLETON";
    for (eff, rv) in [
        ("01-APR-2010", 9_000),
        ("01-APR-2017", 10_000),
        ("01-APR-2023", 12_000),
        ("01-APR-2026", 13_500),
    ] {
        s.push_str(&entry(
            50001,
            "CS",
            "SHOP AND PREMISES",
            fore,
            "XT1 2AA",
            eff,
            rv,
        ));
    }
    // Five more shops in the authority, in the 2017 and 2026 lists only.
    for (i, base) in [8_000i64, 9_000, 11_000, 12_000, 20_000].iter().enumerate() {
        let u = 50002 + i as i64;
        let addr = format!("UNIT {u}, TRADING ESTATE, EXAMPLETON");
        s.push_str(&entry(
            u,
            "CS",
            "SHOP AND PREMISES",
            &addr,
            "XT9 9ZZ",
            "01-APR-2017",
            *base,
        ));
        s.push_str(&entry(
            u,
            "CS",
            "SHOP AND PREMISES",
            &addr,
            "XT9 9ZZ",
            "01-APR-2026",
            base * 12 / 10,
        ));
    }
    // An office in the 2023 list only, with no lookup link: the address matcher links it.
    s.push_str(&entry(
        50010,
        "CO",
        "OFFICES AND PREMISES",
        "ROSE COTTAGE, CHURCH LANE, LITTLE DEAN, EXAMPLETON",
        "XT2 3BB",
        "01-JUL-2024",
        4_100,
    ));
    s.push_str("1*1105*0*BAD*CS*SHOP*notanumber*SOMEWHERE*X*1*S*T**C*XT1 2AA*01-APR-2017**1**A*01-APR-2017*249G*****01-APR-2017*\n");
    s
}

const LEASE: &str = "\
Unique Identifier,Tenure,Register Property Description,County,Region,Associated Property Description ID,Associated Property Description,OS UPRN,Price Paid,Reg Order,Date of Lease,Term,Alienation Clause Indicator
L-SHOP,Leasehold,\"63-65 Fore Street\",EXAMPLESHIRE,SOUTH WEST,A1,\"63-65 Fore Street\",990000000020,,1,25-03-2016,15 years from 25 March 2016,Y
";

async fn commercial_world() -> TestApp {
    let w = world().await;
    let r = load_text(w.db(), Dataset::VoaRatingList, &lists()).await;
    assert_eq!(
        (r.counts.read, r.counts.loaded, r.counts.rejected),
        (16, 15, 1),
        "{:?}",
        r.rejections
    );
    assert_eq!(r.rejections[0].line, 16);
    let r = load_text(w.db(), Dataset::UarnUprn, "uarn,uprn\n50001,990000000020\n").await;
    assert_eq!(r.counts.loaded, 1);
    load_text(w.db(), Dataset::Leases, LEASE).await;
    let mut q = Progress::quiet();
    terrace_build::derive::link_to_uprns(w.db(), &mut q)
        .await
        .unwrap();
    // The same list again: every row unchanged.
    let r = load_text(w.db(), Dataset::VoaRatingList, &lists()).await;
    assert_eq!((r.counts.unchanged, r.counts.rejected), (15, 1));
    w
}

#[actix_web::test]
async fn report_by_uprn_and_by_uarn() {
    let w = commercial_world().await;
    let (acct, key) = account(w.db(), 20).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/property/commercial/990000000020", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["uarn"], 50001);
    assert_eq!(r.json["uprn_link"]["method"], "uarn_uprn_lookup");
    let h = &r.json["hereditament"];
    assert_eq!(
        (h["list_year"].as_i64(), h["rateable_value"].as_i64()),
        (Some(2026), Some(13_500))
    );
    assert_eq!(h["description_code"], "CS");
    assert_eq!(h["effective_date"], "2026-04-01");
    assert_eq!(r.json["list_history"].as_array().unwrap().len(), 4);
    // Sector: 1 shop in 2010 (withheld), 6 in 2017 and 2026, 1 in 2023.
    let idx = &r.json["sector_rent_index"];
    assert_eq!(idx["base_list"], 2017, "{idx}");
    let pts = idx["points"].as_array().unwrap();
    let ns: Vec<i64> = pts.iter().map(|p| p["n"].as_i64().unwrap()).collect();
    assert_eq!(ns, vec![1, 6, 1, 6]);
    assert!(pts[0]["median_rateable_value"].is_null());
    assert_eq!(pts[0]["own_rateable_value"], 9_000);
    // 2017: 8000 9000 10000 11000 12000 20000 -> 10500; 2026: 9600 10800 13200 13500 14400 24000 -> 13350.
    assert_eq!(pts[1]["median_rateable_value"], 10_500);
    assert_eq!(pts[1]["index"], 100.0);
    assert_eq!(pts[3]["median_rateable_value"], 13_350);
    assert_eq!(pts[3]["index"], 127.1);
    // Never invented: no yield source, no income value.
    for block in [
        "income_value",
        "capital_index",
        "auction_history",
        "district_auction_market",
        "registered_owner",
    ] {
        assert_eq!(r.json[block]["status"], "not_available", "{block}");
        assert!(r.json[block]["reason"].is_string());
    }
    assert!(
        r.json["income_value"]["reason"]
            .as_str()
            .unwrap()
            .contains("yield")
    );
    assert_eq!(r.json["lease"]["lease"]["unique_id"], "L-SHOP");
    assert_eq!(r.json["credits_charged"], 3);

    // By UARN: the same report, with the UPRN the list links.
    let r2 = send(&svc, get("/v1/property/commercial/uarn/50001", &key)).await;
    assert_eq!(r2.status, 200);
    assert_eq!(r2.json["uprn"], 990000000020i64);
    assert_eq!(r2.json["hereditament"], r.json["hereditament"]);
    assert_eq!(r2.json["sector_rent_index"], r.json["sector_rent_index"]);

    // Linked by the address matcher; in the 2023 list only.
    let r = send(&svc, get("/v1/property/commercial/uarn/50010", &key)).await;
    assert_eq!(r.json["uprn"], 990000000021i64, "{}", r.json);
    assert_eq!(r.json["uprn_link"]["method"], "address_matcher");
    assert!(r.json["uprn_link"]["score"].as_f64().unwrap() >= 0.8);
    assert_eq!(r.json["hereditament"]["status"], "not_available");
    assert!(
        r.json["hereditament"]["reason"]
            .as_str()
            .unwrap()
            .contains("2026")
    );
    assert_eq!(r.json["sector_rent_index"]["status"], "not_available");
    assert_eq!(r.json["lease"]["status"], "not_available");
    assert_eq!(balance(w.db(), acct).await, 11);
}

#[actix_web::test]
async fn unrated_unknown_and_invalid() {
    let w = commercial_world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    // A known UPRN with no rated entry: an answer whose blocks say why.
    let r = send(&svc, get("/v1/property/commercial/990000000001", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(r.json["uarn"].is_null());
    assert_eq!(r.json["hereditament"]["status"], "not_available");
    assert_eq!(r.json["credits_charged"], 3);
    for (path, status) in [
        ("/v1/property/commercial/990000009999", 404),
        ("/v1/property/commercial/uarn/99999", 404),
        ("/v1/property/commercial/uarn/abc", 422),
        ("/v1/property/commercial/uarn/0", 422),
        ("/v1/property/commercial/uarn/1000000000000", 422),
    ] {
        let r = send(&svc, get(path, &key)).await;
        assert_eq!(
            (r.status, r.json["credits_charged"].as_i64()),
            (status, Some(0)),
            "{path}: {}",
            r.json
        );
    }
    assert_eq!(balance(w.db(), acct).await, 7);
}

#[actix_web::test]
async fn a_later_entry_in_the_same_list_stands() {
    let w = commercial_world().await;
    let (_, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let fore = "63-65, FORE STREET, EXAMPLETON";
    // An alteration to the 2023 list: a later effective date replaces the entry.
    let later = entry(
        50001,
        "CS",
        "SHOP AND PREMISES",
        fore,
        "XT1 2AA",
        "01-OCT-2024",
        12_500,
    );
    let r = load_text(w.db(), Dataset::VoaRatingList, &later).await;
    assert_eq!((r.counts.read, r.counts.updated), (1, 1));
    // The original list again: its older 2023 entry leaves the later one in place.
    let r = load_text(w.db(), Dataset::VoaRatingList, &lists()).await;
    assert_eq!((r.counts.updated, r.counts.unchanged), (0, 15));
    let r = send(&svc, get("/v1/property/commercial/uarn/50001", &key)).await;
    let h = r.json["list_history"].as_array().unwrap();
    assert_eq!(
        (h[2]["list_year"].as_i64(), h[2]["rateable_value"].as_i64()),
        (Some(2023), Some(12_500))
    );
    assert_eq!(h[2]["effective_date"], "2024-10-01");
}
