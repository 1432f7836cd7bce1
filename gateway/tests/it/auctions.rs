//! Auctions (issue 42): the lot feed loader (CSV and JSON lines: rejections by file and line,
//! every row accounted for, a second load changes nothing), the UPRN match and the re-offer links
//! of the derive step, the five free operations (lots with coverage and the shared cursor, stats
//! with separate populations, comps and discount against the carried-back valuation, distressed),
//! `not_available` without a feed, and every validation rule.

use crate::support::*;
use serde_json::{Value, json};
use terrace_ingest::{Dataset, Progress};

/// Lines 6 (unknown lot type), 8 (a hammer price on an unsold lot) and 12 (short) are malformed.
/// 1 High Street is offered three times (twice here) and never sold; 2 High Street is offered
/// unsold here and sold in the JSON feed; Fore Street sold without a published price.
const CSV: &str = "auction_house,auction_date,lot_number,address,postcode,lot_type,tenure,vacant,rent_passing_pa,guide_price,outcome,hammer_price,net_initial_yield_pct,source_url,description
Allsop,2024-02-14,1,\"2 High Street, Exampleton\",XT1 1AA,residential,freehold,true,,\"£200,000 - £220,000\",unsold,,,,
allsop,2024-02-14,2,\"Rose Cottage, Church Lane, Little Dean, Exampleton\",XT2 3BB,residential,freehold,true,,£150000,sold,160000,,https://example.org/a/2,
allsop,2024-02-14,3,\"63-65 Fore Street, Exampleton\",XT1 2AA,commercial,leasehold,let,24000,£300000+,sold,,7.5,,
allsop,2024-02-14,4,Land at Kestrel Fields,XT2 3BC,land,freehold,true,,£25000,withdrawn,,,,
allsop,2024-02-14,5,9 Nowhere Road,XT1 1AA,castle,,,,,sold,,,,
savills,2024-05-20,1,\"21 Station Road, Exampleton\",XT2 3BC,residential,freehold,true,,£180000,sold prior,190000,,,
savills,2024-05-20,2,\"12 Station Road, Otherbury\",XT3 4CD,residential,,,,£100000,unsold,120000,,,
savills,2024-05-20,3,\"1 High Street, Exampleton\",XT1 1AA,residential,freehold,true,,£190000,unsold,,,,By order of LPA Receivers
savills,2024-08-20,1,\"1 High Street, Exampleton\",XT1 1AA,residential,freehold,true,,£170000,unsold,,,,By order of LPA Receivers
savills,2024-08-20,2,\"12 Station Road, Exampleton\",XT2 3BC,residential,freehold,false,9000,£140000,sold,150000,6.0,,
short,row
";

/// Line 3 lacks an address. 2 High Street is written without its town (another address key: the
/// UPRN links it); Kestrel Fields is unmatched and linked by its address key.
const JSONL: &str = r#"{"auction_house":"Barnett Ross","auction_date":"2024-05-15","lot_number":"7","address":"2 HIGH STREET","postcode":"XT1 1AA","lot_type":"residential","guide_price_low":190000,"guide_price_high":190000,"outcome":"sold","hammer_price":205000}
{"auction_house":"barnett ross","auction_date":"2024-11-15","lot_number":"2","address":"1 High Street, Exampleton","postcode":"XT1 1AA","lot_type":"residential","guide_price":"£150,000+","outcome":"withdrawn","description":"LPA receivers sale"}
{"auction_house":"barnett_ross","auction_date":"2024-11-15","lot_number":"3","lot_type":"residential","outcome":"sold"}
{"auction_house":"barnett_ross","auction_date":"2024-11-15","lot_number":"4","address":"Land at Kestrel Fields","postcode":"XT2 3BC","lot_type":"land","guide_price_low":20000,"outcome":"unsold"}
"#;

async fn link(db: &terrace_store::Db) -> terrace_build::derive::AuctionLinks {
    terrace_build::derive::link_auction_lots(db, &mut Progress::quiet())
        .await
        .unwrap()
}

/// The small world with both feeds loaded and linked.
async fn auction_world() -> TestApp {
    let w = world().await;
    load_text(w.db(), Dataset::AuctionLots, CSV).await;
    load_text(w.db(), Dataset::AuctionLots, JSONL).await;
    link(w.db()).await;
    w
}

fn lot<'a>(lots: &'a [Value], id: &str) -> &'a Value {
    lots.iter()
        .find(|l| l["lot_id"] == id)
        .unwrap_or_else(|| panic!("no lot {id}"))
}

/// Every lot of a lots walk, following `next_cursor`.
async fn walk<S, B>(svc: &S, key: &str, query: &str, limit: usize) -> Vec<Value>
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let sep = if query.is_empty() { "" } else { "&" };
        let path = match &cursor {
            Some(c) => format!("/v1/auctions/lots?{query}{sep}limit={limit}&cursor={c}"),
            None => format!("/v1/auctions/lots?{query}{sep}limit={limit}"),
        };
        let r = send(svc, get(&path, key)).await;
        assert_eq!(r.status, 200, "{path}: {}", r.json);
        let page = r.json["data"].as_array().unwrap();
        assert!(page.len() <= limit);
        out.extend(page.iter().cloned());
        match r.json["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    out
}

#[actix_web::test]
async fn without_a_feed_every_operation_is_not_available() {
    let w = world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    for path in [
        "/v1/auctions/lots",
        "/v1/auctions/stats",
        "/v1/auctions/comps?uprn=990000000001",
        "/v1/auctions/comps?postcode_district=XT1",
        "/v1/auctions/discount",
        "/v1/auctions/distressed?postcode_district=XT1",
    ] {
        let r = send(&svc, get(path, &key)).await;
        assert_eq!(r.status, 200, "{path}: {}", r.json);
        assert_eq!(r.json["status"], "not_available", "{path}");
        assert!(
            r.json["reason"]
                .as_str()
                .unwrap()
                .starts_with("no_auction_feed"),
            "{path}"
        );
        assert_eq!(r.json["credits_charged"], 0, "{path}");
        for absent in ["data", "comparables", "coverage", "meta"] {
            assert_eq!(r.json[absent], Value::Null, "{path}: no empty {absent}");
        }
    }
    let r = send(&svc, get("/v1/auctions/discount", &key)).await;
    assert_eq!(
        (
            r.json["n"].clone(),
            r.json["median_achieved_over_valuation"].clone()
        ),
        (json!(0), Value::Null)
    );
    assert_eq!(balance(w.db(), acct).await, 10);
}

#[actix_web::test]
async fn the_feed_loads_with_accounting_and_links_uprns_and_reoffers_idempotently() {
    let w = world().await;
    let r = load_text(w.db(), Dataset::AuctionLots, CSV).await;
    let c = &r.counts;
    assert_eq!((c.read, c.loaded, c.rejected), (11, 8, 3), "{c:?}");
    assert_eq!(
        c.read,
        c.loaded + c.updated + c.unchanged + c.rejected + c.deleted
    );
    let lines: Vec<u64> = r.rejections.iter().map(|x| x.line).collect();
    assert_eq!(lines, vec![6, 8, 12], "{:?}", r.rejections);
    assert!(r.rejections[0].file.ends_with("data.csv"));
    assert!(r.rejections[0].reason.contains("lot_type"));
    assert!(r.rejections[1].reason.contains("hammer_price given"));
    let j = load_text(w.db(), Dataset::AuctionLots, JSONL).await;
    assert_eq!(
        (j.counts.read, j.counts.loaded, j.counts.rejected),
        (4, 3, 1),
        "{:?}",
        j.rejections
    );
    assert_eq!(j.rejections[0].line, 3);
    assert!(j.rejections[0].reason.contains("missing address"));

    let first = link(w.db()).await;
    assert_eq!(first.lots, 11);
    assert!(first.matched >= 6, "{first:?}");
    assert!(
        first.unmatched >= 2,
        "Kestrel Fields stays unmatched: {first:?}"
    );

    let (_, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let lots = walk(&svc, &key, "", 100).await;
    assert_eq!(lots.len(), 11);
    // The matcher's UPRN, its score, and the unmatched lot kept and said so.
    let a = lot(&lots, "allsop|2024-02-14|1");
    assert_eq!(a["uprn"], 990000000002_i64, "{a}");
    assert_eq!(a["uprn_match"]["status"], "address_matcher");
    assert!(a["uprn_match"]["score"].as_f64().unwrap() > 0.0);
    let k = lot(&lots, "allsop|2024-02-14|4");
    assert_eq!(
        (k["uprn"].clone(), k["uprn_match"]["status"].clone()),
        (Value::Null, json!("unmatched"))
    );
    // Re-offers: by UPRN (another address text) and by address key (no UPRN).
    let b = lot(&lots, "barnett_ross|2024-05-15|7");
    assert_eq!(b["uprn"], 990000000002_i64, "{b}");
    assert_eq!(a["property_id"], b["property_id"]);
    assert_eq!(
        a["property_id"], "allsop|2024-02-14|1",
        "the group's first lot names it"
    );
    let k2 = lot(&lots, "barnett_ross|2024-11-15|4");
    assert_eq!(k["property_id"], k2["property_id"]);
    let h: Vec<&Value> = lots
        .iter()
        .filter(|l| l["address"].as_str().unwrap().starts_with("1 High Street"))
        .collect();
    assert_eq!(h.len(), 3);
    assert!(h.iter().all(|l| l["property_id"] == h[0]["property_id"]));
    assert_ne!(h[0]["property_id"], a["property_id"]);

    // Loading both files again and linking again changes nothing.
    let again = load_text(w.db(), Dataset::AuctionLots, CSV).await;
    assert_eq!(
        (again.counts.unchanged, again.counts.rejected),
        (8, 3),
        "{:?}",
        again.counts
    );
    let again = load_text(w.db(), Dataset::AuctionLots, JSONL).await;
    assert_eq!(again.counts.unchanged, 3, "{:?}", again.counts);
    let second = link(w.db()).await;
    assert_eq!((second.matched, second.relinked), (0, 0), "{second:?}");
    assert_eq!(walk(&svc, &key, "", 100).await, lots);
}

#[actix_web::test]
async fn lots_filter_page_and_never_read_an_undisclosed_price_as_unsold() {
    let w = auction_world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/auctions/lots?limit=3", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["status"], "ok");
    assert_eq!(r.json["credits_charged"], 0);
    let houses: Vec<(&str, &str, &str, i64)> = r.json["meta"]["coverage"]["houses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["auction_house"].as_str().unwrap(),
                h["first_auction"].as_str().unwrap(),
                h["last_auction"].as_str().unwrap(),
                h["lots"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        houses,
        vec![
            ("allsop", "2024-02-14", "2024-02-14", 4),
            ("barnett_ross", "2024-05-15", "2024-11-15", 3),
            ("savills", "2024-05-20", "2024-08-20", 4),
        ]
    );
    // Newest first, and a walk in pages of 3 gives every lot once, in order.
    let all = walk(&svc, &key, "", 3).await;
    let one = walk(&svc, &key, "", 100).await;
    assert_eq!(all, one);
    let dates: Vec<&str> = all
        .iter()
        .map(|l| l["auction_date"].as_str().unwrap())
        .collect();
    assert!(dates.windows(2).all(|d| d[0] >= d[1]), "{dates:?}");
    // The undisclosed sale is sold with no price, never unsold; a guide is never a price.
    let f = lot(&all, "allsop|2024-02-14|3");
    assert_eq!(f["outcome"], "sold");
    assert_eq!(f["achieved_price_gbp"], Value::Null);
    assert_eq!(f["achieved_price_status"], "not_disclosed");
    assert_eq!(
        f["guide"],
        json!({"kind": "at_least", "low_gbp": 300000, "high_gbp": null})
    );
    assert_eq!(f["net_initial_yield_pct"], 7.5);
    assert_eq!(
        (f["vacant"].clone(), f["rent_passing_pa_gbp"].clone()),
        (json!(false), json!(24000))
    );
    let u = lot(&all, "allsop|2024-02-14|1");
    assert_eq!(u["achieved_price_status"], "no_sale");
    assert_eq!(u["guide"]["kind"], "range");
    let s = lot(&all, "savills|2024-05-20|1");
    assert_eq!(
        (s["outcome"].clone(), s["achieved_price_gbp"].clone()),
        (json!("sold_prior"), json!(190000))
    );

    let ids = |v: &[Value]| -> Vec<String> {
        let mut x: Vec<String> = v
            .iter()
            .map(|l| l["lot_id"].as_str().unwrap().to_string())
            .collect();
        x.sort();
        x
    };
    let sold = walk(&svc, &key, "sold_only=true", 2).await;
    assert_eq!(
        ids(&sold),
        vec![
            "allsop|2024-02-14|2",
            "allsop|2024-02-14|3",
            "barnett_ross|2024-05-15|7",
            "savills|2024-05-20|1",
            "savills|2024-08-20|2"
        ]
    );
    let priced = walk(&svc, &key, "with_achieved_price=true", 2).await;
    assert_eq!(priced.len(), 4, "the undisclosed sale is left out");
    let yielded = walk(&svc, &key, "with_yield=1", 2).await;
    assert_eq!(
        ids(&yielded),
        vec!["allsop|2024-02-14|3", "savills|2024-08-20|2"]
    );
    let house = walk(&svc, &key, "auctioneer=Barnett%20Ross", 2).await;
    assert_eq!(house.len(), 3);
    let xt1 = walk(
        &svc,
        &key,
        "postcode_district=xt1&date_from=2024-05-01&date_to=2024-08-31",
        2,
    )
    .await;
    assert_eq!(
        ids(&xt1),
        vec![
            "barnett_ross|2024-05-15|7",
            "savills|2024-05-20|3",
            "savills|2024-08-20|1"
        ]
    );
    // A cursor is bound to its filters: another query's cursor names no page (404).
    let r = send(&svc, get("/v1/auctions/lots?limit=1", &key)).await;
    let c = r.json["next_cursor"].as_str().unwrap().to_string();
    let r = send(
        &svc,
        get(
            &format!("/v1/auctions/lots?limit=1&sold_only=true&cursor={c}"),
            &key,
        ),
    )
    .await;
    assert_eq!(
        (r.status, r.json["credits_charged"].clone()),
        (404, json!(0)),
        "{}",
        r.json
    );
    assert_eq!(balance(w.db(), acct).await, 10);
}

#[actix_web::test]
async fn stats_keep_guide_and_achieved_as_separate_populations() {
    let w = auction_world().await;
    // Three sold lots with guides and prices in one quarter of XT3: comparable.
    let extra = r#"{"auction_house":"allsop","auction_date":"2025-01-20","lot_number":"1","address":"12 Station Road, Otherbury","postcode":"XT3 4CD","lot_type":"residential","guide_price_low":100000,"outcome":"sold","hammer_price":110000}
{"auction_house":"allsop","auction_date":"2025-02-20","lot_number":"1","address":"14 Station Road, Otherbury","postcode":"XT3 4CD","lot_type":"residential","guide_price_low":100000,"guide_price_high":120000,"outcome":"sold","hammer_price":121000}
{"auction_house":"allsop","auction_date":"2025-03-20","lot_number":"1","address":"16 Station Road, Otherbury","postcode":"XT3 4CD","lot_type":"residential","guide_price_low":200000,"guide_price_high":200000,"outcome":"sold","hammer_price":260000}
"#;
    load_text(w.db(), Dataset::AuctionLots, extra).await;
    let (_, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/auctions/stats?postcode_district=XT1&quarter_from=2024-01-01&quarter_to=2024-01-01", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(
        r.json["populations_note"]
            .as_str()
            .unwrap()
            .contains("DIFFERENT POPULATIONS")
    );
    let rows = r.json["data"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{}", r.json);
    let q1 = &rows[0];
    assert_eq!(q1["quarter"], "2024-Q1");
    assert_eq!(q1["quarter_start"], "2024-01-01");
    // 2 High Street (unsold, guide 200-220k: midpoint 210k) and Fore Street (sold, price not
    // published, guide 300k+): two guides, no achieved price, one yield.
    assert_eq!(
        (
            q1["lots"].clone(),
            q1["offered"].clone(),
            q1["sold"].clone()
        ),
        (json!(2), json!(2), json!(1))
    );
    assert_eq!(q1["sale_rate"], 0.5);
    assert_eq!(
        q1["guide_gbp"],
        json!({"n": 2, "mean": 255000.0, "median": 255000.0})
    );
    assert_eq!(
        q1["achieved_gbp"],
        json!({"n": 0, "mean": null, "median": null})
    );
    assert_eq!(q1["net_initial_yield_pct"]["n"], 1);
    assert_eq!(
        (
            q1["comparable"].clone(),
            q1["median_achieved_over_guide"].clone()
        ),
        (json!(false), Value::Null)
    );
    // is_commercial keeps only Fore Street.
    let r = send(&svc, get("/v1/auctions/stats?postcode_district=XT1&quarter_from=2024-01-01&quarter_to=2024-01-01&is_commercial=true", &key)).await;
    let c = &r.json["data"][0];
    assert_eq!(
        (
            c["lots"].clone(),
            c["guide_gbp"]["n"].clone(),
            c["achieved_gbp"]["n"].clone()
        ),
        (json!(1), json!(1), json!(0))
    );
    // XT2 in 2024-Q1: a sale and a withdrawal: withdrawn lots are not offered.
    let r = send(
        &svc,
        get(
            "/v1/auctions/stats?postcode_district=XT2&quarter_to=2024-01-01",
            &key,
        ),
    )
    .await;
    let x = &r.json["data"][0];
    assert_eq!(
        (
            x["lots"].clone(),
            x["offered"].clone(),
            x["withdrawn"].clone(),
            x["sale_rate"].clone()
        ),
        (json!(2), json!(1), json!(1), json!(1.0))
    );
    assert_eq!(
        (x["guide_gbp"]["n"].clone(), x["achieved_gbp"]["n"].clone()),
        (json!(2), json!(1))
    );
    assert_eq!(x["comparable"], false, "one lot with both is too few");
    // XT3 2025-Q1: three lots with both: comparable, with the median of achieved / guide point
    // (110/100, 121/110, 260/200).
    let r = send(
        &svc,
        get(
            "/v1/auctions/stats?postcode_district=XT3&quarter_from=2025-01-01",
            &key,
        ),
    )
    .await;
    let x = &r.json["data"][0];
    assert_eq!(x["quarter"], "2025-Q1");
    assert_eq!(
        (x["n_guide_and_achieved"].clone(), x["comparable"].clone()),
        (json!(3), json!(true))
    );
    assert_eq!(x["median_achieved_over_guide"], 1.1);
    assert_eq!(x["achieved_gbp"]["median"], 121000.0);
    // Every district, newest quarter first, with a limit and what was left off.
    let r = send(&svc, get("/v1/auctions/stats?limit=2", &key)).await;
    let rows = r.json["data"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["quarter"], "2025-Q1");
    assert!(r.json["left_off"].as_u64().unwrap() >= 5, "{}", r.json);
}

#[actix_web::test]
async fn comps_discount_and_distressed_on_the_small_world() {
    let w = auction_world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/auctions/comps?uprn=990000000001", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["subject"]["postcode_district"], "XT1");
    let comps = r.json["comparables"].as_array().unwrap();
    let ids: Vec<&str> = comps
        .iter()
        .map(|c| c["lot"]["lot_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec!["barnett_ross|2024-05-15|7"],
        "sold residential lots with a price"
    );
    // No vintage in the small world: the valuation is not available, with the reason.
    assert_eq!(comps[0]["valuation_at_auction"]["status"], "not_available");
    assert_eq!(comps[0]["achieved_over_valuation"], Value::Null);
    assert!(
        r.json["valuation_basis"]
            .as_str()
            .unwrap()
            .contains("carried back")
    );
    let r = send(
        &svc,
        get(
            "/v1/auctions/comps?postcode_district=XT1&lot_type=commercial",
            &key,
        ),
    )
    .await;
    assert_eq!(
        r.json["comparables"],
        json!([]),
        "Fore Street sold without a published price"
    );
    let r = send(&svc, get("/v1/auctions/comps?uprn=990000009999", &key)).await;
    assert_eq!(
        (r.status, r.json["credits_charged"].clone()),
        (404, json!(0))
    );

    let r = send(&svc, get("/v1/auctions/discount", &key)).await;
    assert_eq!(r.json["n"], 0);
    assert_eq!(
        r.json["median_achieved_over_valuation"],
        Value::Null,
        "never 0"
    );
    let ex = &r.json["excluded"];
    assert_eq!(ex["price_not_disclosed"], 1);
    assert_eq!(
        ex["unmatched"].as_i64().unwrap() + ex["no_valuation"].as_i64().unwrap(),
        4,
        "{ex}"
    );

    let r = send(&svc, get("/v1/auctions/distressed", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let d = r.json["data"].as_array().unwrap();
    assert_eq!(d.len(), 2, "{}", r.json);
    assert_eq!(d[0]["offers_n"], 3);
    assert_eq!(d[0]["uprn"], 990000000001_i64);
    assert_eq!(d[0]["receivership_text"], true);
    let outcomes: Vec<&str> = d[0]["offers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, vec!["unsold", "unsold", "withdrawn"]);
    assert_eq!(d[0]["guide_change_pct"], -21.1);
    assert_eq!(
        (d[1]["offers_n"].clone(), d[1]["uprn"].clone()),
        (json!(2), Value::Null),
        "Kestrel Fields, linked by address"
    );
    assert!(r.json["rule"].as_str().unwrap().contains("text heuristic"));
    let r = send(
        &svc,
        get(
            "/v1/auctions/distressed?postcode_district=XT1&min_offers=3",
            &key,
        ),
    )
    .await;
    assert_eq!(r.json["data"].as_array().unwrap().len(), 1);
    assert_eq!(balance(w.db(), acct).await, 10);
}

#[actix_web::test]
async fn every_validation_rule_is_a_422() {
    let w = auction_world().await;
    let (acct, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    for (path, loc, kind) in [
        (
            "/v1/auctions/lots?date_from=2024-13-01",
            &["query", "date_from"][..],
            "value_error",
        ),
        (
            "/v1/auctions/lots?date_from=2024-06-01&date_to=2024-01-01",
            &["query", "date_to"],
            "value_error",
        ),
        (
            "/v1/auctions/lots?postcode_district=12AB",
            &["query", "postcode_district"],
            "value_error",
        ),
        (
            "/v1/auctions/lots?sold_only=perhaps",
            &["query", "sold_only"],
            "bool_parsing",
        ),
        (
            "/v1/auctions/lots?limit=0",
            &["query", "limit"],
            "greater_than_equal",
        ),
        (
            "/v1/auctions/lots?limit=501",
            &["query", "limit"],
            "less_than_equal",
        ),
        (
            "/v1/auctions/lots?cursor=nonsense",
            &["query", "cursor"],
            "value_error",
        ),
        (
            "/v1/auctions/lots?auctioneer=%20",
            &["query", "auctioneer"],
            "value_error",
        ),
        (
            "/v1/auctions/stats?quarter_from=2024-02-01",
            &["query", "quarter_from"],
            "value_error",
        ),
        (
            "/v1/auctions/stats?quarter_from=2024-04-01&quarter_to=2024-01-01",
            &["query", "quarter_to"],
            "value_error",
        ),
        (
            "/v1/auctions/stats?is_commercial=maybe",
            &["query", "is_commercial"],
            "bool_parsing",
        ),
        (
            "/v1/auctions/stats?limit=1001",
            &["query", "limit"],
            "less_than_equal",
        ),
        ("/v1/auctions/comps", &["query", "uprn"], "missing"),
        (
            "/v1/auctions/comps?uprn=990000000001&postcode_district=XT1",
            &["query"],
            "value_error",
        ),
        (
            "/v1/auctions/comps?uprn=abc",
            &["query", "uprn"],
            "int_parsing",
        ),
        (
            "/v1/auctions/comps?postcode_district=XT1&lot_type=castle",
            &["query", "lot_type"],
            "literal_error",
        ),
        (
            "/v1/auctions/comps?postcode_district=XT1&limit=101",
            &["query", "limit"],
            "less_than_equal",
        ),
        (
            "/v1/auctions/discount?date_to=14/02/2024",
            &["query", "date_to"],
            "value_error",
        ),
        (
            "/v1/auctions/discount?postcode_district=nope!",
            &["query", "postcode_district"],
            "value_error",
        ),
        (
            "/v1/auctions/distressed?min_offers=1",
            &["query", "min_offers"],
            "greater_than_equal",
        ),
        (
            "/v1/auctions/distressed?limit=0",
            &["query", "limit"],
            "greater_than_equal",
        ),
    ] {
        let r = send(&svc, get(path, &key)).await;
        assert_eq!(r.status, 422, "{path}: {}", r.json);
        check_422(&r, loc, kind);
    }
    assert_eq!(balance(w.db(), acct).await, 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fixture_world_answers_with_valuations_carried_back() {
    let t = fixture_db().await;
    let state = state_for(&t.db, Default::default()).await;
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("manifest.json")).unwrap())
            .unwrap();
    let cases = &m["auction_cases"];
    let (acct, key) = account(&t.db, 100).await;
    let svc = service(state).await;
    let r = send(&svc, get("/v1/auctions/lots?limit=5", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let houses: Vec<&str> = r.json["meta"]["coverage"]["houses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["auction_house"].as_str().unwrap())
        .collect();
    let mut want: Vec<&str> = cases["houses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    want.sort_unstable();
    assert_eq!(houses, want);
    // Undisclosed sales are sold with no price.
    let all = walk(&svc, &key, "sold_only=true", 500).await;
    for id in cases["undisclosed_sold_lots"].as_array().unwrap() {
        let l = lot(&all, id.as_str().unwrap());
        assert_eq!(
            (
                l["achieved_price_gbp"].clone(),
                l["achieved_price_status"].clone()
            ),
            (Value::Null, json!("not_disclosed"))
        );
    }
    // The re-offered properties: every offer shares one property id; the last sold.
    let every = walk(&svc, &key, "", 500).await;
    for u in cases["reoffered_uprns"].as_array().unwrap() {
        let offers: Vec<&Value> = every.iter().filter(|l| l["uprn"] == *u).collect();
        assert!(offers.len() >= 2, "{u}: {offers:?}");
        assert!(
            offers
                .iter()
                .all(|l| l["property_id"] == offers[0]["property_id"])
        );
    }
    for id in cases["unmatched_lots"].as_array().unwrap() {
        assert_eq!(
            lot(&every, id.as_str().unwrap())["uprn_match"]["status"],
            "unmatched"
        );
    }
    // Distressed: the guaranteed properties are listed.
    let r = send(&svc, get("/v1/auctions/distressed?limit=500", &key)).await;
    let listed: Vec<&Value> = r.json["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["uprn"])
        .collect();
    for u in cases["distressed_uprns"].as_array().unwrap() {
        assert!(listed.contains(&u), "{u} not distressed: {}", r.json);
    }
    // Comps of a re-offered property: the valuation carried back to the auction month equals
    // the full valuation's back-series at that month.
    let u = cases["reoffered_uprns"][0].as_i64().unwrap();
    let r = send(
        &svc,
        get(&format!("/v1/auctions/comps?uprn={u}&limit=100"), &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let comps = r.json["comparables"].as_array().unwrap();
    assert!(!comps.is_empty());
    assert!(
        r.json["n_with_valuation"].as_u64().unwrap() > 0,
        "{}",
        r.json
    );
    let mut checked = 0;
    for c in comps {
        let v = &c["valuation_at_auction"];
        if v["status"] == "not_available" {
            assert!(v["reason"].as_str().is_some());
            continue;
        }
        let price = c["lot"]["achieved_price_gbp"].as_f64().unwrap();
        let value = v["value"].as_f64().unwrap();
        assert_eq!(v["label"], "constructed");
        let ratio = c["achieved_over_valuation"].as_f64().unwrap();
        assert!((ratio - price / value).abs() < 1e-4, "{c}");
        if checked < 2 {
            let full = send(
                &svc,
                post_json(
                    "/v1/valuation/full",
                    &key,
                    &json!({"uprn": c["lot"]["uprn"]}),
                ),
            )
            .await;
            assert_eq!(full.status, 200, "{}", full.json);
            let point = full.json["back_series"]["points"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["month"] == v["month"]);
            if let Some(p) = point {
                assert_eq!(p["value"].as_f64().unwrap(), value, "{c} vs {p}");
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no comparable inside the back-series window");
    // Discount: the median of achieved over valuation, inside its quartiles.
    let r = send(&svc, get("/v1/auctions/discount", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let n = r.json["n"].as_u64().unwrap();
    assert!(n > 0, "{}", r.json);
    let (p25, med, p75) = (
        r.json["p25"].as_f64().unwrap(),
        r.json["median_achieved_over_valuation"].as_f64().unwrap(),
        r.json["p75"].as_f64().unwrap(),
    );
    assert!(p25 <= med && med <= p75);
    assert!((r.json["median_discount_pct"].as_f64().unwrap() - (med - 1.0) * 100.0).abs() < 0.06);
    let ex = &r.json["excluded"];
    let sold = all.len() as u64;
    assert_eq!(
        n + ex["price_not_disclosed"].as_u64().unwrap()
            + ex["unmatched"].as_u64().unwrap()
            + ex["no_valuation"].as_u64().unwrap(),
        sold,
        "every sold lot is counted or excluded with its reason"
    );
    let r = send(&svc, get("/v1/auctions/stats?limit=5", &key)).await;
    assert_eq!(
        (r.status, r.json["data"].as_array().unwrap().len()),
        (200, 5)
    );
    // Free, except the two full valuations.
    assert!(balance(&t.db, acct).await >= 100 - 16);
}
