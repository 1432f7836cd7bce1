//! The commercial rent index, commercial market and commercial sourcing: the constant-sample
//! chain on a planted four-list history, the fixture world's authorities, paging, the owner
//! block, every `not_available` path and every validation rule.

use crate::support::*;
use serde_json::json;
use terrace_ingest::Dataset;

/// One list entry in the published `*`-separated layout (28 fields).
fn entry(list: u8, uarn: i64, code: &str, postcode: &str, eff: &str, rv: i64) -> String {
    format!(
        "{list}*1105*0*BA{uarn}*{code}*DESCRIPTION*{uarn}*UNIT {uarn}, TRADE PARK, EXAMPLETON*ACME LTD*{uarn}*TRADE PARK*EXAMPLETON**EXAMPLESHIRE*{postcode}*{eff}**{rv}**A{uarn}*{eff}*249G*****{eff}*\n"
    )
}

/// Six shops moving by exactly +10%, +20% and -5% between the lists; a shop only in 2017; a
/// split (value x10, left out of the link); offices in 2010 and 2017 only.
fn planted() -> String {
    let lists = [
        (1u8, "01-APR-2010", 1000i64),
        (2, "01-APR-2017", 1100),
        (3, "01-APR-2023", 1320),
        (4, "01-APR-2026", 1254),
    ];
    let mut s = String::new();
    for u in 1..=6i64 {
        for (l, eff, per_mille) in lists {
            s.push_str(&entry(
                l,
                60_000 + u,
                "CS",
                "XT9 9ZZ",
                eff,
                10 * u * per_mille,
            ));
        }
    }
    s.push_str(&entry(2, 60_050, "CS", "XT9 9ZZ", "01-APR-2017", 7_000));
    s.push_str(&entry(1, 60_060, "CS", "XT9 9ZZ", "01-APR-2010", 5_000));
    s.push_str(&entry(2, 60_060, "CS", "XT9 9ZZ", "01-APR-2017", 50_000));
    for u in 100..105 {
        s.push_str(&entry(
            1,
            60_000 + u,
            "CO",
            "XT9 9ZZ",
            "01-APR-2010",
            20_000,
        ));
        s.push_str(&entry(
            2,
            60_000 + u,
            "CO",
            "XT9 9ZZ",
            "01-APR-2017",
            30_000,
        ));
    }
    s
}

#[actix_web::test]
async fn rent_index_chains_a_constant_sample() {
    let w = world().await;
    let (acct, key) = account(w.db(), 20).await;
    let svc = service(w.state.clone()).await;
    // Nothing loaded: every point null with the reason, still an answer.
    let r = send(&svc, get("/v1/market/commercial-rent-index", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let pts = r.json["points"].as_array().unwrap();
    assert!(pts.iter().all(|p| p["index"].is_null()));
    assert!(pts[0]["reason"].as_str().unwrap().contains("not loaded"));

    let rep = load_text(w.db(), Dataset::VoaRatingList, &planted()).await;
    assert_eq!(rep.counts.rejected, 0, "{:?}", rep.rejections);
    // Loaded but not built: the index is the derived build's (as after `xtask load` alone).
    let r = send(
        &svc,
        get("/v1/market/commercial-rent-index?sector=RETAIL", &key),
    )
    .await;
    assert!(r.json["points"][0]["index"].is_null(), "{}", r.json);
    rent_build(w.db()).await;
    let r = send(
        &svc,
        get("/v1/market/commercial-rent-index?sector=RETAIL", &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 2);
    assert!(
        r.json["basis"]
            .as_str()
            .unwrap()
            .contains("open-market rent assessments")
    );
    assert_eq!(r.json["base"], "2010 list = 100");
    assert_eq!(r.json["area"]["kind"], "national");
    assert_eq!(r.json["rent_per_m2"]["status"], "not_available");
    let pts = r.json["points"].as_array().unwrap();
    let idx: Vec<f64> = pts.iter().map(|p| p["index"].as_f64().unwrap()).collect();
    assert_eq!(idx, vec![100.0, 110.0, 132.0, 125.4]);
    let links: Vec<Option<f64>> = pts.iter().map(|p| p["link_ratio"].as_f64()).collect();
    assert_eq!(links, vec![None, Some(1.1), Some(1.2), Some(0.95)]);
    let ns: Vec<Option<i64>> = pts.iter().map(|p| p["n_constant"].as_i64()).collect();
    assert_eq!(ns, vec![None, Some(6), Some(6), Some(6)]);
    assert_eq!(pts[1]["n_entries"], 8);
    assert_eq!(pts[3]["valuation_date"], "2024-04-01");
    // Offices: one link, then the chain stops with the reason.
    let r = send(
        &svc,
        get(
            "/v1/market/commercial-rent-index?sector=OFFICE&start=2017&end=2023",
            &key,
        ),
    )
    .await;
    let pts = r.json["points"].as_array().unwrap();
    assert_eq!(pts.len(), 2);
    assert_eq!(pts[0]["index"], 150.0);
    assert!(pts[1]["index"].is_null());
    assert!(pts[1]["reason"].as_str().unwrap().contains("at least 5"));

    // Summary valuations of the 2023 list: floor areas of 100 m2 per 10,000 of 2010 value, so
    // every shop is 132 per m2; one shop valued per unit (OTH) is never read as square metres.
    let rep = load_text(w.db(), Dataset::VoaSummaryValuations, &smv()).await;
    assert_eq!(
        (rep.counts.read, rep.counts.loaded, rep.counts.rejected),
        (8, 7, 1),
        "{:?}",
        rep.rejections
    );
    assert_eq!(rep.rejections[0].line, 1);
    let again = load_text(w.db(), Dataset::VoaSummaryValuations, &smv()).await;
    assert_eq!((again.counts.unchanged, again.counts.rejected), (7, 1));
    rent_build(w.db()).await;
    let r = send(
        &svc,
        get("/v1/market/commercial-rent-index?sector=RETAIL", &key),
    )
    .await;
    let m2 = &r.json["rent_per_m2"];
    assert_eq!(m2["points"].as_array().unwrap().len(), 1, "{m2}");
    assert_eq!(m2["points"][0]["list_year"], 2023);
    assert_eq!(m2["points"][0]["n_measured"], 6);
    assert_eq!(m2["points"][0]["median_rv_per_m2"], 132.0);
    assert_eq!(balance(w.db(), acct).await, 10);
}

/// The derived build's rent index step (`xtask build` runs it after the loads).
async fn rent_build(db: &terrace_store::Db) {
    let r = terrace_commercial::rent_index::build(db, chrono::Utc::now().naive_utc())
        .await
        .unwrap();
    assert!(r.rows > 0, "{}", r.summary());
}

/// Summary valuations in the published layout for the planted shops' 2023 entries: an orphan
/// floor line first (rejected), then a `01` with two `02` lines and a `07` per shop, and an
/// office valued per unit.
fn smv() -> String {
    let mut s = String::from("02*1*Ground*Orphan*10*1*10\r\n");
    for u in 1..=6i64 {
        let area = 100 * u;
        let rv = 13_200 * u;
        s.push_str(&format!(
            "01*A{u}*{}*1105*ACME LTD*{u}**GROUND FLOOR**TRADE PARK**EXAMPLETON*EXAMPLESHIRE*XT9 9ZZ*249*SHOP AND PREMISES*{area}*{rv}*{rv}*{rv}*2023*EXAMPLETON*BA{u}*V{u}*01-APR-2023**249*NIA*132\r\n",
            60_000 + u
        ));
        s.push_str(&format!(
            "02*1*Ground*Retail*{}*132*1\r\n02*2*First*Retail*{}*132*1\r\n07*{rv}*0\r\n",
            area / 2,
            area / 2
        ));
    }
    s.push_str("01*A9*60100*1105*X*1**G**TRADE PARK**EXAMPLETON*EXAMPLESHIRE*XT9 9ZZ*203*OFFICES*12*24000*24000*24000*2023*EXAMPLETON*BA9*V9*01-APR-2023**203*OTH*2000\r\n");
    s
}

#[actix_web::test]
async fn rent_index_and_market_validation() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    for (path, loc) in [
        (
            "/v1/market/commercial-rent-index?start=2011",
            vec!["query", "start"],
        ),
        (
            "/v1/market/commercial-rent-index?end=1999",
            vec!["query", "end"],
        ),
        (
            "/v1/market/commercial-rent-index?start=2023&end=2017",
            vec!["query", "end"],
        ),
        (
            "/v1/market/commercial-rent-index?area=%20",
            vec!["query", "area"],
        ),
        (
            "/v1/market/commercial-market?lad_code=E0600990",
            vec!["query", "lad_code"],
        ),
        ("/v1/market/commercial-market", vec!["query"]),
        (
            "/v1/market/commercial-market?lad_code=E06009901&area=Tamberley",
            vec!["query"],
        ),
    ] {
        let r = send(&svc, get(path, &key)).await;
        check_422(&r, &loc, "value_error");
    }
    let r = send(
        &svc,
        get("/v1/market/commercial-rent-index?sector=SHOPS", &key),
    )
    .await;
    assert_eq!(r.status, 422, "{}", r.json);
    // An unknown authority name is a 404 (nothing loaded names any).
    let r = send(
        &svc,
        get("/v1/market/commercial-market?area=Nowhereshire", &key),
    )
    .await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (404, Some(0))
    );
    assert_eq!(balance(w.db(), acct).await, 10);
}

#[actix_web::test]
async fn market_and_sourcing_on_the_fixture_world() {
    let w = small_world_and_fixtures().await;
    let (acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;

    let r = send(
        &svc,
        get(
            "/v1/market/commercial-market?area=tamberley&sector=RETAIL",
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 3);
    assert_eq!(r.json["area"]["lad_code"], "E06009901");
    assert_eq!(r.json["area"]["name"], "Tamberley");
    // A sector's capital index is the national series of the sector (no local-by-sector series).
    let ci = &r.json["capital_index"];
    if ci["status"] != "not_available" {
        assert_eq!(ci["area"]["kind"], "national");
        assert_eq!(ci["sector"], "RETAIL");
    }
    assert!(
        r.json["comparability"]
            .as_str()
            .unwrap()
            .contains("NOT COMPARABLE")
    );
    let stock = &r.json["rated_stock"];
    assert_eq!(stock["list_year"], 2026);
    let count = stock["count"].as_i64().unwrap();
    assert!(count > 0, "{stock}");
    assert!(stock["median_rateable_value"].as_i64().unwrap() > 0);
    assert!(
        stock["total_rateable_value"].as_i64().unwrap()
            >= stock["median_rateable_value"].as_i64().unwrap()
    );
    // The fixture's summary valuations measure most units (never the per-unit OTH ones).
    let m2 = &stock["median_rateable_value_per_m2"];
    assert!(m2["value"].as_f64().unwrap() > 0.0, "{m2}");
    assert!(m2["n_measured"].as_i64().unwrap() < count);
    let per_m2 = &r.json["rent_index"]["rent_per_m2"]["points"];
    assert_eq!(per_m2.as_array().unwrap().len(), 2, "{per_m2}");
    assert_eq!(r.json["rent_index"]["points"][0]["index"], 100.0);
    // The same by lad_code.
    let r2 = send(
        &svc,
        get(
            "/v1/market/commercial-market?lad_code=e06009901&sector=RETAIL",
            &key,
        ),
    )
    .await;
    assert_eq!(r2.json["rated_stock"], r.json["rated_stock"]);

    // Sourcing: every retail row of the authority, walked two at a time, equals one page.
    let body = json!({"lad_code": "E06009901", "sector": "RETAIL", "limit": 200});
    let all = send(&svc, post_json("/v1/sourcing/commercial", &key, &body)).await;
    assert_eq!(all.status, 200, "{}", all.json);
    assert_eq!(all.json["credits_charged"], 5);
    let rows = all.json["data"].as_array().unwrap().clone();
    assert_eq!(rows.len() as i64, count);
    assert!(all.json["next_cursor"].is_null());
    let uarns: Vec<i64> = rows.iter().map(|r| r["uarn"].as_i64().unwrap()).collect();
    let mut sorted = uarns.clone();
    sorted.sort_unstable();
    assert_eq!(uarns, sorted);
    let mut walked = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut b = json!({"lad_code": "E06009901", "sector": "RETAIL", "limit": 2});
        if let Some(c) = &cursor {
            b["cursor"] = json!(c);
        }
        let r = send(&svc, post_json("/v1/sourcing/commercial", &key, &b)).await;
        assert_eq!(r.status, 200, "{}", r.json);
        pages += 1;
        walked.extend(
            r.json["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["uarn"].as_i64().unwrap()),
        );
        match r.json["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(walked, uarns);
    let first = &rows[0];
    assert_eq!(first["uarn"], 30000000);
    assert_eq!(first["sector"], "RETAIL");
    assert_eq!(first["history"].as_array().unwrap().len(), 4);
    assert_eq!(first["history"][0]["valuation_date"], "2008-04-01");
    // Its 2026 summary valuation: 66.10 m2 GIA at a rateable value of 57,300.
    assert_eq!(
        first["floor_area"]["list_year"], 2026,
        "{}",
        first["floor_area"]
    );
    assert_eq!(first["floor_area"]["floor_area_m2"], 66.1);
    assert_eq!(first["floor_area"]["rateable_value_per_m2"], 866.87);
    // The fixture feed has no lot at its UPRN, and four sold commercial lots with a yield in
    // XT1: too few for an income-basis value.
    assert_eq!(first["auction_history"]["offers"], json!([]), "{first}");
    assert_eq!(first["income_value"]["status"], "not_available");
    let why = first["income_value"]["reason"].as_str().unwrap();
    assert!(why.contains("fewer than the 5"), "{why}");
    // The freeholder: a company title linked to the UPRN, or the reason it is not.
    let fh = &first["freeholder"];
    if fh["status"] == "not_available" {
        assert!(fh["reason"].as_str().unwrap().contains("UPRN"), "{fh}");
    } else {
        assert_eq!(fh["titles"][0]["tenure"], "Freehold", "{fh}");
    }
    // Value bounds.
    let b =
        json!({"lad_code": "E06009901", "min_rateable_value": 40000, "max_rateable_value": 60000});
    let r = send(&svc, post_json("/v1/sourcing/commercial", &key, &b)).await;
    for row in r.json["data"].as_array().unwrap() {
        let v = row["hereditament"]["rateable_value"].as_i64().unwrap();
        assert!((40_000..=60_000).contains(&v), "{v}");
    }
    // The report's owner block reads the titles now.
    let rep = send(&svc, get("/v1/property/commercial/uarn/30000000", &key)).await;
    assert_eq!(rep.status, 200);
    let owner = &rep.json["registered_owner"];
    assert!(
        owner["titles"].is_array() || !owner["reason"].as_str().unwrap().contains("not loaded"),
        "{owner}"
    );
    let spent = 3 + 3 + 5 + 5 * pages + 5 + 3;
    assert_eq!(balance(w.db(), acct).await, 100 - spent);
}

/// Three more sold commercial lots in XT1, one of them the fixture's 1-3 Market Street (UARN
/// 30000000, UPRN 990000000001, rateable value 57,300 in the 2026 list).
const XT1_LOTS: &str = "auction_house,auction_date,lot_number,address,postcode,uprn,lot_type,tenure,lease_years_remaining,vacant,rent_passing_pa,guide_price_low,guide_price_high,outcome,hammer_price,net_initial_yield_pct,source_url,description
allsop,2026-02-14,9,\"1-3 Market Street, Tamberley\",XT1 1AB,990000000001,commercial,freehold,,false,52000,800000,850000,sold,860000,6.0,https://auctions.example.org/allsop/2026-02-14/lot-9,Let shop
allsop,2026-03-14,9,\"9 Market Street, Tamberley\",XT1 1AB,,commercial,freehold,,false,30000,400000,,sold,430000,7.0,https://auctions.example.org/allsop/2026-03-14/lot-9,Let shop
allsop,2026-04-14,9,\"11 Market Street, Tamberley\",XT1 1AB,,mixed,freehold,,false,20000,250000,,sold_prior,250000,8.0,https://auctions.example.org/allsop/2026-04-14/lot-9,Shop with flat over
";

#[actix_web::test]
async fn sourcing_reads_auction_offers_and_district_yields() {
    let w = small_world_and_fixtures().await;
    let (_acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;
    let rep = load_text(w.db(), Dataset::AuctionLots, XT1_LOTS).await;
    assert_eq!(rep.counts.rejected, 0, "{:?}", rep.rejections);
    let b = json!({"lad_code": "E06009901", "sector": "RETAIL", "limit": 1});
    let r = send(&svc, post_json("/v1/sourcing/commercial", &key, &b)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let first = &r.json["data"][0];
    assert_eq!(first["uarn"], 30000000);
    let offers = first["auction_history"]["offers"].as_array().unwrap();
    assert_eq!(offers.len(), 1, "{first}");
    assert_eq!(offers[0]["auction_date"], "2026-02-14");
    assert_eq!(offers[0]["hammer_price"], 860000);
    // XT1's sold commercial and mixed lots with a yield in the 36 months to 2026-04-14: the
    // fixture's 9.6 (2023-05-14) and 5.4, and 6.0, 7.0, 8.0 (the 2022 lots are older): median 7.0.
    let v = &first["income_value"];
    assert_eq!(v["yield_pct"], 7.0, "{v}");
    assert_eq!(v["n_lots"], 5);
    assert_eq!(v["from"], "2023-05-14");
    assert_eq!(v["to"], "2026-04-14");
    assert_eq!(v["district"], "XT1");
    assert_eq!(v["rateable_value"], 57300);
    assert_eq!(v["value"], 818_571);
}

#[actix_web::test]
async fn sourcing_validation_and_cursors() {
    let w = small_world_and_fixtures().await;
    let (acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;
    let go = |b: serde_json::Value| post_json("/v1/sourcing/commercial", &key, &b);
    for (b, loc, kind) in [
        (json!({}), vec!["body", "lad_code"], "missing"),
        (
            json!({"lad_code": "Tamberley"}),
            vec!["body", "lad_code"],
            "value_error",
        ),
        (
            json!({"lad_code": "E06009901", "min_rateable_value": 10, "max_rateable_value": 5}),
            vec!["body", "max_rateable_value"],
            "value_error",
        ),
        (
            json!({"lad_code": "E06009901", "limit": 0}),
            vec!["body", "limit"],
            "greater_than_equal",
        ),
        (
            json!({"lad_code": "E06009901", "cursor": "nope"}),
            vec!["body", "cursor"],
            "value_error",
        ),
    ] {
        let r = send(&svc, go(b)).await;
        check_422(&r, &loc, kind);
    }
    // A cursor written for other filters names no page of this query: 404, free.
    let r = send(&svc, go(json!({"lad_code": "E06009901", "limit": 1}))).await;
    let c = r.json["next_cursor"].as_str().unwrap().to_string();
    let r = send(
        &svc,
        go(json!({"lad_code": "E06009901", "sector": "OFFICE", "cursor": c})),
    )
    .await;
    assert_eq!(
        (r.status, r.json["credits_charged"].as_i64()),
        (404, Some(0)),
        "{}",
        r.json
    );
    // An authority with no rated entry: an empty page, not an error.
    let r = send(&svc, go(json!({"lad_code": "E06000001"}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["data"].as_array().unwrap().len(), 0);
    assert_eq!(balance(w.db(), acct).await, 90);
}
