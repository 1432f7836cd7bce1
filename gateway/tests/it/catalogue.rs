//! The coverage register and the catalogue on the fixture world: real shares checked against the
//! store read another way, every known dataset listed (`not_loaded` where it is), the market
//! area directory and the district directories walked page by page (no duplicate, no omission),
//! record previews of each kind, the 404s, and each validation rule (one request each).

use crate::support::{Reply, account, get, send, service, state_for, world};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use terrace_gateway::state::RateLimit;
use terrace_ingest::Progress;
use terrace_store::testing::TestDb;
use terrace_store::{Db, address, epc};

async fn fixture_world() -> (TestDb, terrace_gateway::state::AppState) {
    let t = crate::support::fixture_db().await;
    let state = state_for(&t.db, RateLimit::default()).await;
    (t, state)
}

fn check_422(r: &Reply, loc: &[&str], kind: &str) {
    assert_eq!(r.status, 422, "{}", r.json);
    let want: Vec<Value> = loc.iter().map(|s| json!(s)).collect();
    let detail = r.json["detail"].as_array().expect("detail is a list");
    assert!(
        detail
            .iter()
            .any(|d| d["loc"].as_array().unwrap()[..] == want[..] && d["type"] == kind),
        "expected loc {loc:?} type {kind}, got {}",
        r.json
    );
    assert_eq!(r.json["credits_charged"], 0);
}

/// Every address of the store, read page by page (the independent reading the tests compare
/// against).
async fn all_addresses(db: &Db) -> Vec<address::AddressRow> {
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let page = address::addresses_page(db, after, 5_000).await.unwrap();
        let Some(last) = page.last() else { break };
        after = last.uprn;
        out.extend(page);
    }
    out
}

fn outward(pc: &str) -> &str {
    pc.split(' ').next().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coverage_gives_real_shares_and_lists_every_dataset_not_loaded() {
    let (t, state) = fixture_world().await;
    let (_, key) = account(&t.db, 10).await;
    let svc = service(state).await;

    // The same authority by name, by GSS code and by area id.
    let mut answers = Vec::new();
    for q in ["Tamberley", "E06009901", "lad:E06009901", "tamberley"] {
        let r = send(
            &svc,
            get(
                &format!("/v1/areas/coverage?area={}", q.replace(' ', "%20")),
                &key,
            ),
        )
        .await;
        assert_eq!(r.status, 200, "{q}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
        assert_eq!(r.json["lad_code"], "E06009901");
        assert_eq!(r.json["name"], "Tamberley");
        answers.push(r.json);
    }
    let c = &answers[0];

    // The shares, against the store read address by address.
    let addrs: Vec<_> = all_addresses(&t.db)
        .await
        .into_iter()
        .filter(|a| a.lad_code.as_deref() == Some("E06009901"))
        .collect();
    assert_eq!(c["addresses"], json!(addrs.len()));
    let (mut rated, mut with_epc) = (0, 0);
    for a in &addrs {
        let certs = epc::epc_for_uprn(&t.db, a.uprn).await.unwrap();
        with_epc += i64::from(!certs.is_empty());
        if certs.iter().any(|e| e.current_rating.is_some()) {
            rated += 1;
        }
    }
    assert!(rated > 0, "the fixture world has rated certificates");
    let field = |name: &str| -> Value {
        c["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["field"] == name)
            .unwrap_or_else(|| panic!("field {name} missing: {c}"))
            .clone()
    };
    let energy = field("energy_rating");
    assert_eq!(energy["status"], "loaded");
    assert_eq!(energy["addresses_with_value"], json!(rated));
    let share = energy["share"].as_f64().unwrap();
    assert!(
        (share - rated as f64 / addrs.len() as f64).abs() < 1e-4,
        "{energy}"
    );
    assert_eq!(energy["by_source"][0]["source"], "fixture:epc_domestic");
    let with_postcode = addrs.iter().filter(|a| a.postcode.is_some()).count();
    assert_eq!(
        field("postcode")["addresses_with_value"],
        json!(with_postcode)
    );
    // Positions come from two sources, and the shares by source add up to the field's.
    let pos = field("position");
    let by: i64 = pos["by_source"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["addresses"].as_i64().unwrap())
        .sum();
    assert_eq!(json!(by), pos["addresses_with_value"]);
    assert_eq!(
        pos["addresses_with_value"],
        json!(addrs.iter().filter(|a| a.x.is_some()).count())
    );

    // Link shares, planning coverage and the listing sweep are measured here.
    for block in ["lease_link", "hereditament_link", "listing_sweep"] {
        assert_eq!(c[block]["status"], "loaded", "{block}: {}", c[block]);
        assert!(c[block]["share"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(c["planning"]["status"], "covered");
    assert!(c["planning"]["applications"].as_i64().unwrap() > 0);

    // Every dataset of the ingest table is listed, loaded or not_loaded, never omitted; a
    // dataset not loaded has no rows (null, not 0) and is named in not_loaded.
    let datasets = c["datasets"].as_array().unwrap();
    let names: BTreeSet<&str> = datasets
        .iter()
        .map(|d| d["dataset"].as_str().unwrap())
        .collect();
    for d in terrace_ingest::DATASETS {
        assert!(names.contains(d.name), "{} is not listed", d.name);
    }
    let not_loaded: BTreeSet<&str> = c["not_loaded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for d in datasets {
        if d["status"] == "not_loaded" {
            assert_eq!(d["rows"], Value::Null, "{d}");
            assert!(not_loaded.contains(d["dataset"].as_str().unwrap()), "{d}");
        } else {
            assert_eq!(d["status"], "loaded");
        }
    }
    // The fixture world has no UK HPI file and no coal or surface-water layer.
    for n in ["uk_hpi", "coal_high_risk", "ea_rofsw"] {
        assert!(
            not_loaded.contains(n),
            "{n} should be not_loaded: {}",
            c["not_loaded"]
        );
    }
    let ds = |n: &str| datasets.iter().find(|d| d["dataset"] == n).unwrap().clone();
    assert_eq!(ds("epc")["rows"], json!(with_epc));
    assert!(ds("addressbase")["rows"].as_i64().unwrap() > 0);
    // Every spatial dataset is listed: checked with its source, or not_loaded.
    let designations = c["designations"].as_array().unwrap();
    for d in terrace_ingest::formats::planning_data::DATASETS {
        let x = designations
            .iter()
            .find(|x| x["dataset"] == *d)
            .unwrap_or_else(|| panic!("{d} not listed"));
        match x["status"].as_str().unwrap() {
            "checked" => assert!(x["source"].is_string()),
            "not_loaded" => {
                assert_eq!(x["vintage"], Value::Null);
                assert!(not_loaded.contains(d));
            }
            other => panic!("{other}"),
        }
    }
    let conservation = designations
        .iter()
        .find(|x| x["dataset"] == "conservation-area")
        .unwrap();
    assert_eq!(conservation["status"], "checked");
    assert!(conservation["vintage"].is_string(), "{conservation}");
    // Fields whose dataset is not loaded are null, never 0.
    for f in c["fields"].as_array().unwrap() {
        if f["status"] == "not_loaded" {
            assert_eq!(f["share"], Value::Null, "{f}");
        }
    }

    // The other authority is not on the official planning coverage list.
    let r = send(&svc, get("/v1/areas/coverage?area=Wyvern%20Vale", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["planning"]["status"], "not_covered");

    // Unknown names are 404 with the nearest names; an unknown code is 404.
    let r = send(&svc, get("/v1/areas/coverage?area=Tambrly%20Heath", &key)).await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert!(
        r.json["detail"]
            .as_str()
            .unwrap()
            .contains("nearest matches"),
        "{}",
        r.json
    );
    assert_eq!(r.json["credits_charged"], 0);
    let r = send(&svc, get("/v1/areas/coverage?area=E06000001", &key)).await;
    assert_eq!(r.status, 404, "{}", r.json);
    // A known area that is not a local authority is a 422.
    let r = send(&svc, get("/v1/areas/coverage?area=XT1", &key)).await;
    check_422(&r, &["query", "area"], "value_error");

    // Building again changes nothing but the build time.
    let before = terrace_store::catalogue::catalogue_areas_page(&t.db, None, "", 1_000)
        .await
        .unwrap();
    terrace_build::catalogue::derive_catalogue(&t.db, &mut Progress::quiet())
        .await
        .unwrap();
    let r = send(&svc, get("/v1/areas/coverage?area=Tamberley", &key)).await;
    let strip = |mut v: Value| {
        v["built_at"] = Value::Null;
        v["credits_remaining"] = Value::Null;
        v
    };
    assert_eq!(strip(r.json), strip(c.clone()));
    let after = terrace_store::catalogue::catalogue_areas_page(&t.db, None, "", 1_000)
        .await
        .unwrap();
    assert_eq!(before.len(), after.len());
    for (a, b) in before.iter().zip(&after) {
        assert_eq!(
            (&a.area_id, a.addresses, a.sales, a.index_periods),
            (&b.area_id, b.addresses, b.sales, b.index_periods)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coverage_validation_rules() {
    let app = world().await;
    let (_, key) = account(app.db(), 10).await;
    let svc = service(app.state.clone()).await;
    let r = send(&svc, get("/v1/areas/coverage", &key)).await;
    check_422(&r, &["query", "area"], "missing");
    let r = send(&svc, get("/v1/areas/coverage?area=", &key)).await;
    check_422(&r, &["query", "area"], "string_too_short");
    let r = send(&svc, get("/v1/areas/coverage?area=%20%20", &key)).await;
    check_422(&r, &["query", "area"], "string_too_short");
    let long = "a".repeat(201);
    let r = send(&svc, get(&format!("/v1/areas/coverage?area={long}"), &key)).await;
    check_422(&r, &["query", "area"], "string_too_long");
}

/// Walks a paginated GET to its end, returning every item and the number of pages.
async fn walk<S, B>(svc: &S, first: &str, key: &str) -> (Vec<Value>, usize)
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let mut items = Vec::new();
    let mut pages = 0;
    let mut url = first.to_string();
    loop {
        let r = send(svc, get(&url, key)).await;
        assert_eq!(r.status, 200, "{url}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
        pages += 1;
        items.extend(r.json["data"].as_array().unwrap().iter().cloned());
        match r.json["next_cursor"].as_str() {
            Some(c) => {
                let sep = if first.contains('?') { '&' } else { '?' };
                url = format!("{first}{sep}cursor={}", c.replace(' ', "%20"));
            }
            None => break,
        }
        assert!(pages < 1_000, "the walk does not end");
    }
    (items, pages)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalogue_areas_and_directories_walk_every_item_once() {
    let (t, state) = fixture_world().await;
    let (_, key) = account(&t.db, 10).await;
    let svc = service(state).await;
    let addrs = all_addresses(&t.db).await;

    // The market area directory, in pages of 4, equals the one-page list, in order, once each.
    let (paged, pages) = walk(&svc, "/v1/catalogue/areas?limit=4", &key).await;
    assert!(pages > 2);
    let r = send(&svc, get("/v1/catalogue/areas?limit=500", &key)).await;
    assert_eq!(r.json["next_cursor"], Value::Null);
    let whole = r.json["data"].as_array().unwrap().clone();
    assert_eq!(paged, whole);
    let ids: Vec<&str> = whole
        .iter()
        .map(|a| a["area_id"].as_str().unwrap())
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(ids, sorted, "in order, no duplicate");
    // Every district of the fixture world is there, with its addresses counted from the store.
    let mut per_district: BTreeMap<String, i64> = BTreeMap::new();
    for a in &addrs {
        if let Some(p) = &a.postcode {
            *per_district
                .entry(format!("district:{}", outward(p)))
                .or_default() += 1;
        }
    }
    for (d, n) in &per_district {
        let a = whole
            .iter()
            .find(|a| a["area_id"] == d.as_str())
            .unwrap_or_else(|| panic!("{d} missing"));
        assert_eq!(a["addresses"], json!(n), "{a}");
        assert_eq!(a["kind"], "district");
        assert_eq!(a["parent"], "area:XT");
        let volume = terrace_store::market::volume(&t.db, d).await.unwrap();
        let sales: i64 = volume.iter().map(|v| v.txn_count).sum();
        assert_eq!(a["sales"], json!(sales), "{a}");
    }
    // One kind only: the two local authorities, named.
    let r = send(&svc, get("/v1/catalogue/areas?kind=lad", &key)).await;
    let lads = r.json["data"].as_array().unwrap();
    assert_eq!(lads.len(), 2, "{}", r.json);
    assert_eq!(lads[0]["name"], "Tamberley");
    assert!(lads.iter().all(|a| a["kind"] == "lad"));

    // A district's postcodes, streets and properties, walked in pages of 7, against the store.
    let in_xt1: Vec<_> = addrs
        .iter()
        .filter(|a| a.postcode.as_deref().is_some_and(|p| outward(p) == "XT1"))
        .collect();
    let (props, _) = walk(&svc, "/v1/catalogue/directory/XT1/properties?limit=7", &key).await;
    let uprns: Vec<i64> = props.iter().map(|p| p["uprn"].as_i64().unwrap()).collect();
    let want: Vec<i64> = in_xt1.iter().map(|a| a.uprn).collect();
    assert_eq!(uprns, want);
    assert!(
        props
            .iter()
            .all(|p| p.get("price").is_none() && p.get("value").is_none())
    );
    let (pcs, _) = walk(&svc, "/v1/catalogue/directory/xt1/postcodes?limit=7", &key).await;
    let mut want_pcs: BTreeMap<String, i64> = BTreeMap::new();
    for a in &in_xt1 {
        *want_pcs.entry(a.postcode.clone().unwrap()).or_default() += 1;
    }
    let got_pcs: BTreeMap<String, i64> = pcs
        .iter()
        .map(|p| {
            (
                p["postcode"].as_str().unwrap().to_string(),
                p["addresses"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got_pcs, want_pcs);
    assert_eq!(pcs.len(), want_pcs.len(), "no postcode twice");
    let (streets, _) = walk(&svc, "/v1/catalogue/directory/XT1/streets?limit=2", &key).await;
    let want_streets: BTreeSet<String> = in_xt1.iter().filter_map(|a| a.street.clone()).collect();
    let got_streets: Vec<String> = streets
        .iter()
        .map(|s| s["street"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(got_streets, want_streets.into_iter().collect::<Vec<_>>());

    // An outward code with no address is 404, free.
    let r = send(&svc, get("/v1/catalogue/directory/XT99/streets", &key)).await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_previews_of_each_kind() {
    let (t, state) = fixture_world().await;
    let (_, key) = account(&t.db, 10).await;
    let svc = service(state).await;
    let addrs = all_addresses(&t.db).await;
    let a = addrs
        .iter()
        .find(|a| a.postcode.is_some() && a.street.is_some())
        .unwrap();
    let pc = a.postcode.clone().unwrap();

    let r = send(
        &svc,
        get(&format!("/v1/catalogue/records/property/{}", a.uprn), &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 0);
    let p = &r.json["property"];
    assert_eq!(p["uprn"], json!(a.uprn));
    assert_eq!(p["postcode"], json!(pc));
    assert_eq!(p["classification"], json!(a.class));
    assert_eq!(p["district"], json!(format!("district:{}", outward(&pc))));
    let line = p["address"].as_str().unwrap();
    assert!(
        line.contains(a.street.as_deref().unwrap()) && line.ends_with(&pc),
        "{line}"
    );
    assert!(
        r.json["more"]
            .as_array()
            .unwrap()
            .contains(&json!("property_record"))
    );
    for priced in ["sales", "valuation", "last_sale", "price"] {
        assert!(p.get(priced).is_none(), "{priced} in a preview");
    }

    let r = send(
        &svc,
        get(
            &format!(
                "/v1/catalogue/records/postcode/{}",
                pc.to_lowercase().replace(' ', "")
            ),
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["identifier"], json!(pc));
    let at = addrs
        .iter()
        .filter(|x| x.postcode.as_deref() == Some(&pc))
        .count();
    assert_eq!(r.json["postcode"]["addresses"], json!(at));
    assert_eq!(
        r.json["postcode"]["district"],
        json!(format!("district:{}", outward(&pc)))
    );

    let r = send(&svc, get("/v1/catalogue/records/area/district:XT1", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["area"]["area"]["area_id"], "district:XT1");
    assert_eq!(r.json["area"]["market"]["area_id"], "district:XT1");
    let r = send(&svc, get("/v1/catalogue/records/area/lad:E06009902", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["area"]["area"]["name"], "Wyvern Vale");

    // Not found: unknown records, and the kinds whose family has not landed.
    for path in [
        "/v1/catalogue/records/property/990000099999",
        "/v1/catalogue/records/postcode/XT9%209ZZ",
        "/v1/catalogue/records/area/district:XT99",
        "/v1/catalogue/records/title/DN100",
        "/v1/catalogue/records/company/01234567",
    ] {
        let r = send(&svc, get(path, &key)).await;
        assert_eq!(r.status, 404, "{path}: {}", r.json);
        assert_eq!(r.json["credits_charged"], 0);
    }
    let r = send(&svc, get("/v1/catalogue/records/title/DN100", &key)).await;
    assert!(
        r.json["detail"].as_str().unwrap().contains("not available"),
        "{}",
        r.json
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalogue_validation_rules() {
    let app = world().await;
    let (_, key) = account(app.db(), 10).await;
    let svc = service(app.state.clone()).await;
    let q = |p: &str| get(p, &key);
    // The market area directory.
    check_422(
        &send(&svc, q("/v1/catalogue/areas?cursor=nope")).await,
        &["query", "cursor"],
        "value_error",
    );
    check_422(
        &send(&svc, q("/v1/catalogue/areas?cursor=")).await,
        &["query", "cursor"],
        "string_too_short",
    );
    check_422(
        &send(&svc, q("/v1/catalogue/areas?limit=0")).await,
        &["query", "limit"],
        "greater_than_equal",
    );
    check_422(
        &send(&svc, q("/v1/catalogue/areas?limit=501")).await,
        &["query", "limit"],
        "less_than_equal",
    );
    let r = send(&svc, q("/v1/catalogue/areas?kind=county")).await;
    assert_eq!(r.status, 422, "{}", r.json);
    assert_eq!(r.json["detail"][0]["loc"], json!(["query", "kind"]));
    // The district directories.
    check_422(
        &send(&svc, q("/v1/catalogue/directory/1XT/streets")).await,
        &["path", "district"],
        "value_error",
    );
    check_422(
        &send(&svc, q("/v1/catalogue/directory/XT1AB/streets")).await,
        &["path", "district"],
        "string_too_long",
    );
    let r = send(&svc, q("/v1/catalogue/directory/XT1/houses")).await;
    assert_eq!(r.status, 422, "{}", r.json);
    assert_eq!(r.json["detail"][0]["loc"], json!(["path", "kind"]));
    // A cursor not of the service's form is a 422; a well-formed one written for another
    // listing (another kind or district) names no page of this one: 404.
    for url in [
        "/v1/catalogue/directory/XT1/properties?cursor=abc",
        "/v1/catalogue/directory/XT1/postcodes?cursor=nope",
        "/v1/catalogue/directory/XT1/streets?cursor=%20",
        "/v1/catalogue/directory/1XT/streets?cursor=nope",
    ] {
        let r = send(&svc, q(url)).await;
        assert_eq!(r.status, 422, "{url}: {}", r.json);
        assert!(
            r.json["detail"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["loc"] == json!(["query", "cursor"])),
            "{url}: {}",
            r.json
        );
    }
    let r = send(&svc, q("/v1/catalogue/directory/XT1/streets?limit=1")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    if let Some(c) = r.json["next_cursor"].as_str() {
        for url in [
            format!("/v1/catalogue/directory/XT1/postcodes?cursor={c}"),
            format!("/v1/catalogue/directory/XT2/streets?cursor={c}"),
            format!("/v1/catalogue/areas?cursor={c}"),
        ] {
            let r = send(&svc, q(&url)).await;
            assert_eq!(r.status, 404, "{url}: {}", r.json);
        }
    }
    check_422(
        &send(&svc, q("/v1/catalogue/directory/XT1/streets?limit=0")).await,
        &["query", "limit"],
        "greater_than_equal",
    );
    check_422(
        &send(&svc, q("/v1/catalogue/directory/XT1/streets?limit=501")).await,
        &["query", "limit"],
        "less_than_equal",
    );
    // The record previews.
    let r = send(&svc, q("/v1/catalogue/records/flat/1")).await;
    assert_eq!(r.status, 422, "{}", r.json);
    assert_eq!(r.json["detail"][0]["loc"], json!(["path", "kind"]));
    // An identifier not of its kind's form names no record of that kind: 404, with the form.
    for (url, form) in [
        ("/v1/catalogue/records/postcode/nope", "full postcode"),
        ("/v1/catalogue/records/property/abc", "UPRN"),
        ("/v1/catalogue/records/area/lad:E01000001", "area id"),
        ("/v1/catalogue/records/title/DN-1", "letters and digits"),
    ] {
        let r = send(&svc, q(url)).await;
        assert_eq!(r.status, 404, "{url}: {}", r.json);
        assert!(
            r.json["detail"].as_str().unwrap().contains(form),
            "{}",
            r.json
        );
    }
    check_422(
        &send(&svc, q("/v1/catalogue/records/postcode/%20")).await,
        &["path", "identifier"],
        "value_error",
    );
    let long = "1".repeat(101);
    check_422(
        &send(&svc, q(&format!("/v1/catalogue/records/company/{long}"))).await,
        &["path", "identifier"],
        "string_too_long",
    );
    // A key is needed, as for every free operation.
    let r = send(
        &svc,
        actix_web::test::TestRequest::get().uri("/v1/catalogue/areas"),
    )
    .await;
    assert_eq!(r.status, 401, "{}", r.json);
}
