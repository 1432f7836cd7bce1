//! Council tax (specification part 2.4): declared bands linked by the matcher, `not_found` for a
//! band in the list that matching has not linked, England and Wales only, the always-null fields.

use crate::support::*;
use terrace_ingest::{Dataset, Progress};

/// A synthetic valuation list extract: two entries the matcher links, one it cannot.
const LIST: &str = "\
billing_authority,reference,address,postcode,band
E06009999,CT-0001,\"2, High Street, Exampleton\",XT1 1AA,C
E06009999,CT-0002,\"Flat 1, 10 High Street, Exampleton\",XT1 1AB,A
E06009999,CT-0003,\"Store Rear Of The Parade, High Street\",XT1 1AA,A
E06009999,CT-0004,\"1 Somewhere Else\",XT1 1AA,Z
";

async fn tax_world() -> TestApp {
    let w = world().await;
    // A Scottish address, placed by the postcode directory.
    let scot = "UPRN,PARENT_UPRN,CLASS,SAO_TEXT,PAO_START_NUMBER,PAO_TEXT,STREET_DESCRIPTION,LOCALITY,TOWN_NAME,POSTCODE_LOCATOR,X_COORDINATE,Y_COORDINATE\n\
                990000000030,,RD04,,5,,CASTLE WYND,,EDINBURGH,EH1 1AA,325000,673000\n";
    load_text(w.db(), Dataset::AddressBase, scot).await;
    load_text(
        w.db(),
        Dataset::Onspd,
        "pcd,laua,oseast1m,osnrth1m\nEH1 1AA,S12000036,325000,673000\n",
    )
    .await;
    let r = load_text(w.db(), Dataset::CouncilTax, LIST).await;
    assert_eq!(
        (r.counts.read, r.counts.loaded, r.counts.rejected),
        (4, 3, 1),
        "band Z is rejected"
    );
    let mut q = Progress::quiet();
    terrace_build::derive::derive_areas(w.db(), &mut q)
        .await
        .unwrap();
    terrace_build::derive::link_to_uprns(w.db(), &mut q)
        .await
        .unwrap();
    let state = state_for(w.db(), Default::default()).await;
    TestApp { t: w.t, state }
}

#[actix_web::test]
async fn statuses_and_the_always_null_fields() {
    let w = tax_world().await;
    let (acct, key) = account(w.db(), 3).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/property/council-tax/990000000002", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        (
            r.json["status"].as_str(),
            r.json["band"].as_str(),
            r.json["band_source"].as_str()
        ),
        (Some("ok"), Some("C"), Some("declared"))
    );
    assert_eq!(r.json["reference"], "CT-0001");
    assert_eq!(r.json["match"]["method"], "address_matcher");
    for always_null in ["effective_date", "composite", "annual_cost_gbp"] {
        assert!(r.json[always_null].is_null(), "{always_null}");
        assert!(
            r.json.as_object().unwrap().contains_key(always_null),
            "{always_null} is present as null"
        );
    }
    assert_eq!(r.json["credits_charged"], 0, "free");
    let r = send(&svc, get("/v1/property/council-tax/990000000011", &key)).await;
    assert_eq!(
        (r.json["status"].as_str(), r.json["band"].as_str()),
        (Some("ok"), Some("A")),
        "{}",
        r.json
    );
    // 3 High Street shares a postcode with an entry the matcher could not link.
    let r = send(&svc, get("/v1/property/council-tax/990000000003", &key)).await;
    assert_eq!(r.json["status"], "not_found", "{}", r.json);
    assert!(r.json["band"].is_null());
    assert_eq!(r.json["unlinked_at_postcode"], 1);
    // No entry at all for this address.
    let r = send(&svc, get("/v1/property/council-tax/990000000021", &key)).await;
    assert_eq!(r.json["status"], "not_listed", "{}", r.json);
    // Scotland says so.
    let r = send(&svc, get("/v1/property/council-tax/990000000030", &key)).await;
    assert_eq!(r.json["status"], "not_covered", "{}", r.json);
    assert!(r.json["reason"].as_str().unwrap().contains("Scotland"));
    assert_eq!(
        send(&svc, get("/v1/property/council-tax/990000009999", &key))
            .await
            .status,
        404
    );
    assert_eq!(
        send(&svc, get("/v1/property/council-tax/abc", &key))
            .await
            .status,
        422
    );
    assert_eq!(balance(w.db(), acct).await, 3);
}

#[actix_web::test]
async fn an_unloaded_list_is_not_checked_never_a_band() {
    let w = world().await;
    let (_, key) = account(w.db(), 1).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/property/council-tax/990000000002", &key)).await;
    assert_eq!(
        (r.json["status"].as_str(), r.json["band"].is_null()),
        (Some("not_checked"), true),
        "{}",
        r.json
    );
}

/// The lookup answers from memory (`CouncilTaxMemo`), but a list loaded and linked while the
/// service runs is seen once the memo has read the versions again (at most a second later), and
/// the answer from memory is the store's answer before it.
#[actix_web::test]
async fn a_list_loaded_while_serving_is_seen_within_a_second() {
    let w = world().await;
    let (_, key) = account(w.db(), 1).await;
    let svc = service(w.state.clone()).await;
    let path = "/v1/property/council-tax/990000000002";
    let before = send(&svc, get(path, &key)).await;
    assert_eq!(before.json["status"], "not_checked", "{}", before.json);
    let again = send(&svc, get(path, &key)).await;
    assert_eq!(
        (&again.json["status"], &again.json["reason"]),
        (&before.json["status"], &before.json["reason"]),
        "the same answer, from memory"
    );

    let r = load_text(w.db(), Dataset::CouncilTax, LIST).await;
    assert_eq!(r.counts.loaded, 3);
    terrace_build::derive::link_to_uprns(w.db(), &mut Progress::quiet())
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let after = send(&svc, get(path, &key)).await;
    assert_eq!(
        (after.json["status"].as_str(), after.json["band"].as_str()),
        (Some("ok"), Some("C")),
        "{}",
        after.json
    );
}
