//! The listings market (issue 17): the BLM and RTDF loaders on files written from their
//! published layouts (rejections by file and line, a second load changes nothing), the UPRN
//! match, a property's listing history (3 credits, uncharged without a feed), live stock by day
//! and the agents of an area (free), `not_available` without a feed, and every validation rule.

use crate::support::*;
use serde_json::{Value, json};
use terrace_ingest::{Dataset, Progress};

/// 2 High Street (XT1 1AA) for sale through branch 71/1101: listed at £300,000, cut to £290,000,
/// under offer, sold STC, removed as sold by us on 2026-04-06. Flat 1, 10 High Street (XT1 1AB)
/// to let through 72/2201 at £200 a week, let agreed. Line 4 is malformed (unknown status).
const RTDF: &str = r#"{"received_at": "2026-01-05T09:00:00Z", "method": "sendpropertydetails", "network": {"network_id": 71}, "branch": {"branch_id": 1101, "channel": 1}, "property": {"agent_ref": "1101_A", "property_type": 1, "status": 1, "new_home": false, "address": {"house_name_number": "2", "address_2": "High Street", "town": "Exampleton", "postcode_1": "XT1", "postcode_2": "1AA"}, "price_information": {"price": 300000, "tenure_type": 1}, "details": {"bedrooms": 3, "internal_area": 90, "internal_area_unit": 2}}}
{"received_at": "2026-01-12T09:00:00Z", "method": "sendpropertydetails", "network": {"network_id": 72}, "branch": {"branch_id": 2201, "channel": 2}, "property": {"agent_ref": "2201_B", "property_type": 8, "status": 1, "address": {"house_name_number": "Flat 1", "address_2": "10 High Street", "town": "Exampleton", "postcode_1": "XT1", "postcode_2": "1AB"}, "price_information": {"price": 200, "rent_frequency": 52}, "details": {"bedrooms": 1}}}
{"received_at": "2026-02-02T09:00:00Z", "method": "sendpropertydetails", "network": {"network_id": 71}, "branch": {"branch_id": 1101, "channel": 1}, "property": {"agent_ref": "1101_A", "property_type": 1, "status": 1, "new_home": false, "address": {"house_name_number": "2", "address_2": "High Street", "town": "Exampleton", "postcode_1": "XT1", "postcode_2": "1AA"}, "price_information": {"price": 290000, "tenure_type": 1}, "details": {"bedrooms": 3, "internal_area": 90, "internal_area_unit": 2}}}
{"received_at": "2026-02-09T09:00:00Z", "method": "sendpropertydetails", "network": {"network_id": 72}, "branch": {"branch_id": 2201, "channel": 2}, "property": {"agent_ref": "2201_B", "status": 8}}
{"received_at": "2026-03-02T09:00:00Z", "method": "sendpropertydetails", "network": {"network_id": 71}, "branch": {"branch_id": 1101, "channel": 1}, "property": {"agent_ref": "1101_A", "property_type": 1, "status": 4, "new_home": false, "address": {"house_name_number": "2", "address_2": "High Street", "town": "Exampleton", "postcode_1": "XT1", "postcode_2": "1AA"}, "price_information": {"price": 290000, "tenure_type": 1}, "details": {"bedrooms": 3, "internal_area": 90, "internal_area_unit": 2}}}
{"received_at": "2026-03-09T09:00:00Z", "method": "sendpropertydetails", "network": {"network_id": 72}, "branch": {"branch_id": 2201, "channel": 2}, "property": {"agent_ref": "2201_B", "property_type": 8, "status": 6, "address": {"house_name_number": "Flat 1", "address_2": "10 High Street", "town": "Exampleton", "postcode_1": "XT1", "postcode_2": "1AB"}, "price_information": {"price": 200, "rent_frequency": 52}, "details": {"bedrooms": 1}}}
{"received_at": "2026-03-16T09:00:00Z", "method": "sendpropertydetails", "network": {"network_id": 71}, "branch": {"branch_id": 1101, "channel": 1}, "property": {"agent_ref": "1101_A", "property_type": 1, "status": 2, "new_home": false, "address": {"house_name_number": "2", "address_2": "High Street", "town": "Exampleton", "postcode_1": "XT1", "postcode_2": "1AA"}, "price_information": {"price": 290000, "tenure_type": 1}, "details": {"bedrooms": 3, "internal_area": 90, "internal_area_unit": 2}}}
{"received_at": "2026-03-23T09:00:00Z", "method": "sendpropertydetails", "network": {"network_id": 71}, "branch": {"branch_id": 1101, "channel": 1}, "property": {"agent_ref": "1101_A", "property_type": 1, "status": 2, "new_home": false, "address": {"house_name_number": "2", "address_2": "High Street", "town": "Exampleton", "postcode_1": "XT1", "postcode_2": "1AA"}, "price_information": {"price": 290000, "tenure_type": 1}, "details": {"bedrooms": 3, "internal_area": 90, "internal_area_unit": 2}}}
{"received_at": "2026-04-06T09:00:00Z", "method": "removeproperty", "network": {"network_id": 71}, "branch": {"branch_id": 1101, "channel": 1}, "property": {"agent_ref": "1101_A", "removal_reason": 7}}
"#;

/// One branch's BLM file: 3 Station Road... two good records in XT2 and one with a bad status.
const BLM: &str = "#HEADER#\nVersion : 3\nEOF : '^'\nEOR : '~'\nProperty Count : 3\nGenerated Date : 06-Apr-2026 10:00\n\n#DEFINITION#\nAGENT_REF^ADDRESS_1^ADDRESS_2^TOWN^POSTCODE1^POSTCODE2^BRANCH_ID^STATUS_ID^BEDROOMS^PRICE^PROP_SUB_ID^TRANS_TYPE_ID^LET_RENT_FREQUENCY^~\n\n#DATA#\n3301_X1^21^Station Road^Exampleton^XT2^3BC^3301^0^3^250000^3^1^^~\n3301_X2^12^Station Road^Exampleton^XT2^3BC^3301^0^2^950^3^2^1^~\n3301_X3^Rose Cottage^Church Lane^Exampleton^XT2^3BB^3301^7^2^950^3^2^1^~\n#END#\n";

async fn link(db: &terrace_store::Db) {
    terrace_build::derive::link_listings(db, &mut Progress::quiet())
        .await
        .unwrap();
}

#[actix_web::test]
async fn without_a_feed_every_operation_is_not_available() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    for path in [
        "/v1/market/listing-stock?area_type=district&area_code=XT1",
        "/v1/market/listing-stock",
        "/v1/market/agents/district:XT1",
        "/v1/listings/history/990000000002",
    ] {
        let r = send(&svc, get(path, &key)).await;
        assert_eq!(r.status, 200, "{path}: {}", r.json);
        assert_eq!(r.json["status"], "not_available", "{path}");
        assert!(
            r.json["reason"]
                .as_str()
                .unwrap()
                .starts_with("no_listings_feed"),
            "{path}"
        );
        assert_eq!(r.json["credits_charged"], 0, "{path}");
    }
    let r = send(
        &svc,
        get(
            "/v1/market/listing-stock?area_type=district&area_code=XT1",
            &key,
        ),
    )
    .await;
    assert_eq!(r.json["points"], Value::Null, "no empty series");
    let r = send(&svc, get("/v1/market/agents/district:XT1", &key)).await;
    assert_eq!(r.json["agents"], Value::Null);
    assert_eq!(balance(w.db(), acct).await, 10);
}

#[actix_web::test]
async fn rtdf_and_blm_feeds_load_link_and_answer() {
    let w = world().await;
    let r = load_text(w.db(), Dataset::ListingsRtdf, RTDF).await;
    let c = &r.counts;
    assert_eq!(c.read, 9);
    assert_eq!(c.rejected, 1);
    assert_eq!(r.rejections[0].line, 4);
    assert!(r.rejections[0].reason.contains("unknown property.status 8"));
    assert!(r.rejections[0].file.ends_with("data.csv"));
    assert_eq!(
        c.read,
        c.loaded + c.updated + c.unchanged + c.rejected + c.deleted
    );
    assert_eq!(c.loaded, 2, "two listings");
    let again = load_text(w.db(), Dataset::ListingsRtdf, RTDF).await;
    assert_eq!(
        again.counts.unchanged, 8,
        "a second load changes nothing: {:?}",
        again.counts
    );
    link(w.db()).await;

    let b = load_text(w.db(), Dataset::ListingsBlm, BLM).await;
    assert_eq!(
        (b.counts.read, b.counts.loaded, b.counts.rejected),
        (3, 2, 1)
    );
    assert_eq!(b.rejections[0].line, 14);
    assert_eq!(b.rejections[0].reason, "unknown STATUS_ID 7");
    link(w.db()).await;

    let (acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;

    // The history: both listings matched, every snapshot newest first, the trajectory.
    let r = send(&svc, get("/v1/listings/history/990000000002", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 3);
    assert_eq!(balance(w.db(), acct).await, 97);
    assert_eq!(r.json["status"], "ok");
    assert_eq!(r.json["observed_since"], "2026-01-05T09:00:00");
    let l = &r.json["listings"][0];
    assert_eq!(l["listing_id"], "1101_A");
    assert_eq!(l["feed"], "rtdf");
    assert_eq!(l["uprn_match"]["method"], "address_matcher");
    assert!(l["uprn_match"]["score"].as_f64().unwrap() > 0.0);
    assert_eq!(l["branch"], "71/1101");
    assert_eq!(l["tenure"], "freehold");
    assert_eq!(l["floor_area_m2"], 90.0);
    assert_eq!(l["removal_reason"], "sold_by_us");
    assert_eq!(l["removed_at"], "2026-04-06T09:00:00");
    let t = &l["price_trajectory"];
    assert_eq!(
        (t["first_price"].as_i64(), t["latest_price"].as_i64()),
        (Some(300_000), Some(290_000))
    );
    assert_eq!(t["reductions"], 1);
    let snaps = r.json["snapshots"].as_array().unwrap();
    // the unchanged re-sighting of 2026-03-23 is not a snapshot
    let statuses: Vec<&str> = snaps
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        vec![
            "removed",
            "sold_stc",
            "under_offer",
            "available",
            "available"
        ]
    );
    assert_eq!(snaps[0]["removal_reason"], "sold_by_us");

    // The letting is £200 a week, £867 a month; the BLM sale matched 21 Station Road.
    let r = send(&svc, get("/v1/listings/history/990000000011", &key)).await;
    assert_eq!(r.json["listings"][0]["snapshots"], Value::Null);
    assert_eq!(r.json["snapshots"][0]["price"], 867);
    assert_eq!(r.json["snapshots"][0]["status"], "let_agreed");
    let r = send(&svc, get("/v1/listings/history/990000000022", &key)).await;
    assert_eq!(r.json["listings"][0]["feed"], "blm");
    assert_eq!(
        r.json["listings"][0]["price_trajectory"],
        Value::Null,
        "one priced snapshot"
    );
    // A registered property never listed: empty lists, charged.
    let r = send(&svc, get("/v1/listings/history/990000000003", &key)).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["listings"], json!([]));
    // Neither in the register nor listed: 404, free.
    let before = balance(w.db(), acct).await;
    let r = send(&svc, get("/v1/listings/history/990000009999", &key)).await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert_eq!(balance(w.db(), acct).await, before);

    // Stock by day in XT1: the sale is live until the day before its removal, under offer from
    // 2 March; the letting is live from 12 January to the end of observation.
    let r = send(
        &svc,
        get(
            "/v1/market/listing-stock?area_type=district&area_code=XT1&start=2026-01-01",
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 0);
    assert_eq!(r.json["observed_since"], "2026-01-05");
    assert_eq!(r.json["observed_until"], "2026-04-06");
    let points = r.json["points"].as_array().unwrap();
    let at = |d: &str| {
        let p = points.iter().find(|p| p["date"] == d).unwrap();
        (
            p["live"].as_i64().unwrap(),
            p["available"].as_i64().unwrap(),
        )
    };
    assert_eq!(
        points[0]["date"], "2026-01-05",
        "nothing before observation"
    );
    assert_eq!(at("2026-01-05"), (1, 1));
    assert_eq!(at("2026-01-12"), (2, 2));
    assert_eq!(at("2026-03-03"), (2, 1));
    assert_eq!(at("2026-03-10"), (2, 0));
    assert_eq!(at("2026-04-05"), (2, 0));
    assert_eq!(at("2026-04-06"), (1, 0));
    let r = send(
        &svc,
        get("/v1/market/listing-stock?area_type=district&area_code=XT1&channel=rent&bedroom_band=1&start=2026-01-12&end=2026-01-12", &key),
    )
    .await;
    assert_eq!(
        r.json["points"],
        json!([{"date": "2026-01-12", "live": 1, "available": 1}])
    );
    let r = send(
        &svc,
        get("/v1/market/listing-stock?channel=sale&end=2026-04-06", &key),
    )
    .await;
    assert_eq!(r.json["area"], "national");
    assert_eq!(
        r.json["points"].as_array().unwrap().last().unwrap()["live"],
        1,
        "the BLM sale"
    );

    // Agents: ranked by listings, branch-named, with medians.
    let r = send(&svc, get("/v1/market/agents/district:XT1", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["n"], 2);
    let agents = r.json["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2);
    assert_eq!(agents[0]["agent"], "branch 71/1101");
    assert_eq!(agents[0]["sale_median_asking_gbp"], 290_000);
    assert_eq!(agents[0]["let_median_asking_pcm_gbp"], Value::Null);
    assert_eq!(agents[1]["let_median_asking_pcm_gbp"], 867);
    let r = send(&svc, get("/v1/market/agents/district:XT2", &key)).await;
    let a = &r.json["agents"][0];
    assert_eq!(
        (
            a["agent"].as_str(),
            a["sale_listings"].as_i64(),
            a["let_listings"].as_i64()
        ),
        (Some("branch 3301"), Some(1), Some(1))
    );
    let r = send(&svc, get("/v1/market/agents/sector:XT1%201", &key)).await;
    assert_eq!(r.json["n"], 2);
    assert_eq!(
        balance(w.db(), acct).await,
        before,
        "the free operations cost nothing"
    );
    assert_eq!(
        terrace_store::accounts::ledger_sum(w.db(), acct)
            .await
            .unwrap(),
        before
    );
}

#[actix_web::test]
async fn validation_unknown_areas_and_402() {
    let w = world().await;
    load_text(w.db(), Dataset::ListingsRtdf, RTDF).await;
    let (acct, key) = account(w.db(), 2).await;
    let svc = service(w.state.clone()).await;
    let q = |s: &str| format!("/v1/market/listing-stock?{s}");
    for (path, loc, kind) in [
        (
            q("area_type=district"),
            vec!["query", "area_code"],
            "missing",
        ),
        (q("area_type=lad"), vec!["query", "area_code"], "missing"),
        (
            q("area_code=XT1"),
            vec!["query", "area_code"],
            "value_error",
        ),
        (
            q("area_type=district&area_code=XT1%201AA"),
            vec!["query", "area_code"],
            "value_error",
        ),
        (
            q("area_type=lad&area_code=XT1"),
            vec!["query", "area_code"],
            "value_error",
        ),
        (q("start=2026-13-01"), vec!["query", "start"], "value_error"),
        (q("end=01/02/2026"), vec!["query", "end"], "value_error"),
        (
            q("start=2026-03-01&end=2026-02-01"),
            vec!["query", "start"],
            "value_error",
        ),
        (
            q("channel=auction"),
            vec!["query", "channel"],
            "literal_error",
        ),
        (
            q("bedroom_band=5"),
            vec!["query", "bedroom_band"],
            "literal_error",
        ),
        (
            q("area_type=county"),
            vec!["query", "area_type"],
            "value_error",
        ),
        (
            "/v1/market/agents/h3:88195da49bfffff".to_string(),
            vec!["path", "area_id"],
            "value_error",
        ),
        (
            "/v1/market/agents/XT1".to_string(),
            vec!["path", "area_id"],
            "value_error",
        ),
        (
            "/v1/market/agents/lad:XT1".to_string(),
            vec!["path", "area_id"],
            "value_error",
        ),
    ] {
        let r = send(&svc, get(&path, &key)).await;
        assert_eq!(r.status, 422, "{path}: {}", r.json);
        check_422(&r, &loc, kind);
    }
    let r = send(&svc, get("/v1/listings/history/abc", &key)).await;
    assert_eq!(r.status, 422, "{}", r.json);
    for path in [
        "/v1/market/agents/district:XT9",
        "/v1/market/agents/lad:E06009999",
        "/v1/market/listing-stock?area_type=district&area_code=XT9",
    ] {
        let r = send(&svc, get(path, &key)).await;
        assert_eq!(r.status, 404, "{path}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
    }
    // 402: the history costs 3.
    let r = send(&svc, get("/v1/listings/history/990000000002", &key)).await;
    assert_eq!(r.status, 402, "{}", r.json);
    assert_eq!(balance(w.db(), acct).await, 2);
}
