//! The ownership operations (`/v1/ownership/title/{title_number}`, `/company/{company_number}`,
//! `/proprietor`) on the fixture world's CCOD, OCOD and Companies House files (a company with
//! several titles, an overseas owner, a dissolved company, titles that do not link, an unknown
//! title), every validation rule, and the three loaders on files written from the published
//! layouts (malformed rows, the `Row Count:` trailer, change-only deletes, idempotence).

use crate::support::{
    Reply, account, balance, fixtures, get, load_text, manifest, send, service, state_for,
};
use serde_json::{Value, json};
use terrace_gateway::state::RateLimit;
use terrace_ingest::{Dataset, Progress};
use terrace_store::testing::TestDb;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ownership_on_the_fixture_world() {
    let t = crate::support::fixture_db().await;
    let m = manifest();
    let cases = &m["ownership_cases"];
    let (acct, key) = account(&t.db, 100).await;
    let svc = service(state_for(&t.db, RateLimit::default()).await).await;

    // A company with several titles: by title, each proprietor with its company record.
    let landlord = cases["landlord_company"].as_str().unwrap();
    let landlord_titles: Vec<&str> = cases["landlord_titles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(landlord_titles.len() >= 5, "{landlord_titles:?}");
    let addressed: Vec<(String, i64)> = cases["addressed_titles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_str().unwrap().into(), p[1].as_i64().unwrap()))
        .collect();
    let (title, uprn) = addressed
        .iter()
        .find(|(t, _)| landlord_titles.contains(&t.as_str()))
        .unwrap();
    let r = send(
        &svc,
        get(
            &format!("/v1/ownership/title/{}", title.to_lowercase()),
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 3);
    assert_eq!(r.json["title_number"], title.as_str());
    assert_eq!(r.json["register"], "ccod");
    let p = &r.json["proprietors"][0];
    assert_eq!(p["company_number"], landlord, "normalised to eight digits");
    assert_eq!(p["company"]["name"], "WESSEX HOLDINGS LIMITED");
    assert_eq!(p["company"]["status"], "Active");
    assert_eq!(p["company"]["charges"]["outstanding"], 2);
    assert!(
        r.json["source"]
            .as_str()
            .unwrap()
            .starts_with("fixture:hmlr_ccod")
    );
    // the property address links to its UPRN through the matcher, with method and score
    assert_eq!(r.json["uprns"][0]["uprn"], *uprn, "{}", r.json);
    assert_eq!(r.json["uprns"][0]["method"], "address_matcher");
    assert!(r.json["uprns"][0]["score"].as_f64().unwrap() > 0.0);
    assert_eq!(r.json["parcel"]["status"], "not_available");
    let cov = &r.json["uprn_link_coverage"];
    let loaded = cov["titles_loaded"].as_i64().unwrap();
    let linked = cov["titles_linked_to_uprn"].as_i64().unwrap();
    assert!(linked > 0 && linked < loaded, "{cov}");
    assert_eq!(
        cov["linked_share"],
        format!("{:.3}", linked as f64 / loaded as f64)
    );
    assert_eq!(balance(&t.db, acct).await, 97);

    // Titles that do not link: no UPRN, never a guess; the multiple-address title likewise.
    let unlinked = cases["unlinked_titles"].as_array().unwrap();
    assert!(!unlinked.is_empty());
    for tn in unlinked
        .iter()
        .chain(std::iter::once(&cases["multiple_address_title"]))
    {
        let r = send(
            &svc,
            get(
                &format!("/v1/ownership/title/{}", tn.as_str().unwrap()),
                &key,
            ),
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.json);
        assert_eq!(r.json["uprns"], json!([]), "{tn}");
    }
    // Titles written from one register address link to that address (none to another).
    let numbers: Vec<String> = addressed.iter().map(|(t, _)| t.clone()).collect();
    let stored = terrace_store::titles::titles_by_number(&t.db, &numbers)
        .await
        .unwrap();
    let mut right = 0;
    for row in &stored {
        let want = addressed
            .iter()
            .find(|(t, _)| *t == row.title_number)
            .unwrap()
            .1;
        if let Some(u) = row.uprn {
            assert_eq!(u, want, "{} linked to another address", row.title_number);
            right += 1;
        }
    }
    assert!(
        right * 10 >= stored.len() * 9,
        "{right} of {} linked",
        stored.len()
    );

    // The company: all its titles, paged with a cursor, and its record.
    let before = balance(&t.db, acct).await;
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut first_cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/ownership/company/9900001?limit=50&cursor={c}"),
            None => "/v1/ownership/company/9900001?limit=50".to_string(),
        };
        let r = send(&svc, get(&path, &key)).await;
        assert_eq!(r.status, 200, "{}", r.json);
        assert_eq!(r.json["credits_charged"], 3);
        assert_eq!(r.json["company_number"], landlord);
        assert_eq!(r.json["company"]["status"], "Active");
        assert_eq!(r.json["total_titles"], landlord_titles.len());
        for t in r.json["titles"].as_array().unwrap() {
            seen.push(t["title_number"].as_str().unwrap().to_string());
        }
        match r.json["next_cursor"].as_str() {
            Some(c) => {
                first_cursor.get_or_insert_with(|| c.to_string());
                cursor = Some(c.to_string());
            }
            None => break,
        }
    }
    let mut want: Vec<String> = landlord_titles.iter().map(|s| s.to_string()).collect();
    want.sort();
    want.dedup();
    assert_eq!(seen, want);
    let pages = want.len().div_ceil(50) as i64;
    assert_eq!(balance(&t.db, acct).await, before - 3 * pages);
    // A cursor is bound to the number as written: given with another form of it (or another
    // company), it names no page (404, free).
    if let Some(c) = first_cursor {
        assert_ne!(landlord, "9900001");
        let r = send(
            &svc,
            get(
                &format!("/v1/ownership/company/{landlord}?cursor={c}"),
                &key,
            ),
        )
        .await;
        assert_eq!(r.status, 404, "{}", r.json);
        assert_eq!(balance(&t.db, acct).await, before - 3 * pages);
    }

    // A dissolved company's titles say so.
    let dissolved = cases["dissolved_company"].as_str().unwrap();
    let r = send(
        &svc,
        get(&format!("/v1/ownership/company/{dissolved}"), &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["company"]["status"], "Dissolved");
    assert!(r.json["company"]["dissolution_date"].is_string());
    assert_eq!(
        r.json["total_titles"],
        cases["dissolved_titles"].as_array().unwrap().len()
    );

    // A company in CCOD but not in the Companies House file: titles, company null.
    let unfiled = cases["unfiled_company"].as_str().unwrap();
    let r = send(&svc, get(&format!("/v1/ownership/company/{unfiled}"), &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["company"], Value::Null);
    assert!(r.json["total_titles"].as_i64().unwrap() > 0);

    // Overseas owners (OCOD): a registered overseas entity joins Companies House; a foreign
    // registry number is kept as given and joins nothing.
    let r = send(
        &svc,
        get(
            &format!(
                "/v1/ownership/title/{}",
                cases["overseas_entity_title"].as_str().unwrap()
            ),
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["register"], "ocod");
    assert_eq!(r.json["proprietors"][0]["company_number"], "OE000101");
    assert_eq!(r.json["proprietors"][0]["country_incorporated"], "Jersey");
    assert_eq!(
        r.json["proprietors"][0]["company"]["country_of_origin"],
        "Jersey"
    );
    assert!(r.json["source"].as_str().unwrap().contains("hmlr_ocod"));
    let r = send(
        &svc,
        get(
            &format!(
                "/v1/ownership/title/{}",
                cases["overseas_foreign_title"].as_str().unwrap()
            ),
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["proprietors"][0]["company_number"], "5512345");
    assert_eq!(r.json["proprietors"][0]["company"], Value::Null);
    let r = send(&svc, get("/v1/ownership/company/5512345", &key)).await;
    assert_eq!(r.status, 200, "the foreign number as given: {}", r.json);
    assert_eq!(r.json["company_number"], "5512345");

    // An unknown title: 404 saying why, free.
    let before = balance(&t.db, acct).await;
    let r = send(
        &svc,
        get(
            &format!(
                "/v1/ownership/title/{}",
                cases["unknown_title"].as_str().unwrap()
            ),
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 0);
    assert!(
        r.json["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not published in bulk")
            || r.json.to_string().contains("not published in bulk"),
        "{}",
        r.json
    );
    let r = send(&svc, get("/v1/ownership/company/09999999", &key)).await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert_eq!(balance(&t.db, acct).await, before);

    // The proprietor by company number: exact, with areas held and the total price paid.
    let r = send(
        &svc,
        get("/v1/ownership/proprietor?company_number=09900001", &key),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["credits_charged"], 5);
    assert_eq!(r.json["match"], "company_number");
    let h = &r.json["proprietor"];
    assert_eq!(h["n_distinct_titles"], want.len());
    assert_eq!(h["companies"][0]["status"], "Active");
    let priced: Vec<i64> = h["titles"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["price_paid"].as_i64())
        .collect();
    assert_eq!(h["titles_with_price_paid"], priced.len());
    if priced.is_empty() {
        assert_eq!(h["total_price_paid"], Value::Null);
    } else {
        assert_eq!(h["total_price_paid"], priced.iter().sum::<i64>());
    }
    let held: i64 = h["areas_held"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["titles"].as_i64().unwrap())
        .sum();
    assert_eq!(held, want.len() as i64);
    assert_eq!(h["directors_and_pscs"]["status"], "not_available");

    // By name: exact after normalisation, a near name with one candidate, several candidates.
    let r = send(
        &svc,
        get(
            "/v1/ownership/proprietor?name=the%20wessex%20holdings%20ltd.",
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["match"], "exact_name");
    assert_eq!(r.json["proprietor"]["n_distinct_titles"], want.len());
    assert_eq!(r.json["proprietor"]["company_numbers"], json!([landlord]));
    let r = send(
        &svc,
        get(
            "/v1/ownership/proprietor?name=Wesex%20Holdings%20Limited",
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["match"], "near_name");
    assert_eq!(r.json["candidates"][0]["name_key"], "WESSEX HOLDINGS LTD");
    let r = send(
        &svc,
        get(
            "/v1/ownership/proprietor?name=Tamber%20Propertie%20Ltd",
            &key,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["match"], "candidates", "{}", r.json);
    assert_eq!(r.json["proprietor"], Value::Null);
    assert!(r.json["candidates"].as_array().unwrap().len() >= 2);
    let before = balance(&t.db, acct).await;
    let r = send(
        &svc,
        get("/v1/ownership/proprietor?name=Zanzibar%20Quays%20Ltd", &key),
    )
    .await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert_eq!(balance(&t.db, acct).await, before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_validation_rule_is_a_free_422() {
    let t = TestDb::new().await;
    let (acct, key) = account(&t.db, 100).await;
    let svc = service(state_for(&t.db, RateLimit::default()).await).await;
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "/v1/ownership/title/DN-123",
            &["path", "title_number"],
            "value_error",
        ),
        (
            "/v1/ownership/title/ABCD123",
            &["path", "title_number"],
            "value_error",
        ),
        (
            "/v1/ownership/title/DN12345678901",
            &["path", "title_number"],
            "string_too_long",
        ),
        (
            "/v1/ownership/company/ABC123",
            &["path", "company_number"],
            "value_error",
        ),
        (
            "/v1/ownership/company/0123456789012",
            &["path", "company_number"],
            "string_too_long",
        ),
        (
            "/v1/ownership/company/01234567?cursor=x-1",
            &["query", "cursor"],
            "value_error",
        ),
        (
            "/v1/ownership/company/01234567?limit=0",
            &["query", "limit"],
            "greater_than_equal",
        ),
        (
            "/v1/ownership/company/01234567?limit=501",
            &["query", "limit"],
            "less_than_equal",
        ),
        ("/v1/ownership/proprietor", &["query"], "value_error"),
        (
            "/v1/ownership/proprietor?name=Acme&company_number=1",
            &["query"],
            "value_error",
        ),
        (
            "/v1/ownership/proprietor?name=A",
            &["query", "name"],
            "string_too_short",
        ),
        (
            "/v1/ownership/proprietor?company_number=XYZ1",
            &["query", "company_number"],
            "value_error",
        ),
    ];
    for (path, loc, kind) in cases {
        let r = send(&svc, get(path, &key)).await;
        check_422(&r, loc, kind);
    }
    // A name with no letter or digit names no proprietor: 404, free.
    let r = send(&svc, get("/v1/ownership/proprietor?name=%21%21%21", &key)).await;
    assert_eq!(r.status, 404, "{}", r.json);
    assert!(
        r.json["detail"]
            .as_str()
            .unwrap()
            .contains("no letters or digits")
    );
    assert_eq!(balance(&t.db, acct).await, 100);
}

const CCOD_HEADER: &str = "\"Title Number\",\"Tenure\",\"Property Address\",\"District\",\"County\",\"Region\",\"Postcode\",\"Multiple Address Indicator\",\"Price Paid\",\"Proprietor Name (1)\",\"Company Registration No. (1)\",\"Proprietorship Category (1)\",\"Proprietor (1) Address (1)\",\"Proprietor (1) Address (2)\",\"Proprietor (1) Address (3)\",\"Proprietor Name (2)\",\"Company Registration No. (2)\",\"Proprietorship Category (2)\",\"Proprietor (2) Address (1)\",\"Proprietor (2) Address (2)\",\"Proprietor (2) Address (3)\",\"Proprietor Name (3)\",\"Company Registration No. (3)\",\"Proprietorship Category (3)\",\"Proprietor (3) Address (1)\",\"Proprietor (3) Address (2)\",\"Proprietor (3) Address (3)\",\"Proprietor Name (4)\",\"Company Registration No. (4)\",\"Proprietorship Category (4)\",\"Proprietor (4) Address (1)\",\"Proprietor (4) Address (2)\",\"Proprietor (4) Address (3)\",\"Date Proprietor Added\",\"Additional Proprietor Indicator\"";

fn ccod_row(title: &str, names: &[(&str, &str)], added: &str, extra: &[&str]) -> String {
    let mut f = vec![String::new(); 35];
    f[0] = title.into();
    f[1] = "Freehold".into();
    f[2] = "1 HIGH STREET, TOWN (XT1 1AA)".into();
    f[3] = "TOWN".into();
    f[6] = "XT1 1AA".into();
    f[7] = "N".into();
    for (i, (name, number)) in names.iter().enumerate() {
        f[9 + 6 * i] = name.to_string();
        f[10 + 6 * i] = number.to_string();
    }
    f[33] = added.into();
    f[34] = "N".into();
    f.extend(extra.iter().map(|s| s.to_string()));
    f.iter()
        .map(|v| format!("\"{v}\""))
        .collect::<Vec<_>>()
        .join(",")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn title_loader_accounts_for_every_row_and_is_idempotent() {
    let t = TestDb::new().await;
    let content = format!(
        "{CCOD_HEADER}\r\n{}\r\n{}\r\n{}\r\n{}\r\n\"Row Count: 4\"\r\n",
        ccod_row(
            "XT1",
            &[("ACME LIMITED", "123"), ("BETA LTD", "SC5")],
            "01-02-2020",
            &[]
        ),
        ccod_row("XT2", &[("ACME LIMITED", "00000123")], "01/02/2021", &[]),
        ccod_row("XT3", &[("ACME LIMITED", "123")], "2021-02-01", &[]),
        ccod_row("", &[("ACME LIMITED", "123")], "", &[]),
    );
    let r = load_text(&t.db, Dataset::Ccod, &content).await;
    let c = &r.counts;
    assert_eq!((c.read, c.loaded, c.rejected), (4, 2, 2), "{c:?}");
    let lines: Vec<u64> = r.rejections.iter().map(|j| j.line).collect();
    assert_eq!(lines, vec![4, 5]);
    assert!(r.rejections[0].reason.contains("Date Proprietor Added"));
    assert!(r.rejections[1].reason.contains("blank title number"));
    // twice: nothing changes
    let r = load_text(&t.db, Dataset::Ccod, &content).await;
    assert_eq!(
        (r.counts.loaded, r.counts.updated, r.counts.unchanged),
        (0, 0, 2)
    );
    assert_eq!(
        terrace_store::titles::titles_of(
            &t.db,
            terrace_store::titles::Holder::Company("00000123"),
            "",
            10
        )
        .await
        .unwrap(),
        vec!["XT1".to_string(), "XT2".into()]
    );
    assert_eq!(
        terrace_store::titles::titles_of(
            &t.db,
            terrace_store::titles::Holder::Company("SC000005"),
            "",
            10
        )
        .await
        .unwrap(),
        vec!["XT1".to_string()]
    );
    // a change-only file: XT1 deleted, XT2 changes owner
    let cou_header = format!("{CCOD_HEADER},\"Change Indicator\",\"Change Date\"");
    let cou = format!(
        "{cou_header}\n{}\n{}\nRow Count: 2\n",
        ccod_row("XT1", &[("ACME LIMITED", "123")], "", &["D", "01-07-2026"]),
        ccod_row(
            "XT2",
            &[("GAMMA LTD", "777")],
            "01-07-2026",
            &["A", "01-07-2026"]
        ),
    );
    let r = load_text(&t.db, Dataset::Ccod, &cou).await;
    assert_eq!(
        (r.counts.read, r.counts.deleted, r.counts.updated),
        (2, 1, 1),
        "{:?}",
        r.counts
    );
    assert!(
        terrace_store::titles::titles_of(
            &t.db,
            terrace_store::titles::Holder::Company("00000123"),
            "",
            10
        )
        .await
        .unwrap()
        .is_empty()
    );
    assert!(
        terrace_store::titles::titles_of(
            &t.db,
            terrace_store::titles::Holder::Company("SC000005"),
            "",
            10
        )
        .await
        .unwrap()
        .is_empty(),
        "the deleted title's slots go with it"
    );
    assert_eq!(
        terrace_store::titles::titles_of(
            &t.db,
            terrace_store::titles::Holder::Company("00000777"),
            "",
            10
        )
        .await
        .unwrap(),
        vec!["XT2".to_string()]
    );
    // an OCOD file is refused as CCOD (its header says which register it is)
    let ocod = std::fs::read_to_string(fixtures().join("ownership/OCOD_FULL_2026_06.csv")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("OCOD_FULL_2026_06.csv");
    std::fs::write(&path, ocod).unwrap();
    let refused = terrace_ingest::load_file(
        &t.db,
        Dataset::Ccod,
        &path,
        Default::default(),
        &mut Progress::quiet(),
    )
    .await;
    assert!(refused.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn companies_house_loader_accounts_for_every_row_and_is_idempotent() {
    let t = TestDb::new().await;
    let path = fixtures().join("ownership/BasicCompanyData-2026-06-01-part1_1.csv");
    let mut content = std::fs::read_to_string(&path).unwrap();
    content.push_str("\"BROKEN LTD\",\"\"\r\n");
    let good = content.lines().nth(1).unwrap().to_string();
    content.push_str(&good.replacen("\"14/03/2009\"", "\"2009-03-14\"", 1));
    content.push_str("\r\n");
    let r = load_text(&t.db, Dataset::CompaniesHouse, &content).await;
    let rows = content.lines().count() as i64 - 1;
    assert_eq!(r.counts.read, rows);
    assert_eq!(r.counts.rejected, 2, "{:?}", r.rejections);
    assert_eq!(r.counts.loaded, rows - 2);
    let r = load_text(&t.db, Dataset::CompaniesHouse, &content).await;
    assert_eq!(
        (r.counts.loaded, r.counts.updated, r.counts.unchanged),
        (0, 0, rows - 2)
    );
    assert_eq!(
        terrace_store::companies::company_count(&t.db)
            .await
            .unwrap(),
        rows - 2
    );
}
