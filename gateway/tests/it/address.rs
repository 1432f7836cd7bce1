//! The address endpoints answer from the loaded register.

use crate::support::*;
use serde_json::json;

#[actix_web::test]
async fn uprn_lookup_returns_the_canonical_record() {
    let w = world().await;
    let (_, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let r = send(&svc, get("/v1/address/uprn/990000000012", &key)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["uprn"], 990000000012i64);
    assert_eq!(r.json["parent_uprn"], 990000000010i64);
    assert_eq!(r.json["saon"], "FLAT 2");
    assert_eq!(r.json["paon"], "10");
    assert_eq!(r.json["street"], "HIGH STREET");
    assert_eq!(r.json["postcode"], "XT1 1AB");
    assert_eq!(r.json["classification"], "RD06");
    assert_eq!(r.json["easting"], 260100.0);
    assert!(
        r.json["latitude"].as_f64().is_some(),
        "lat/lon derived from BNG on load"
    );
    assert!(
        r.json["address_source"]
            .as_str()
            .unwrap()
            .contains("addressbase")
    );
    assert_eq!(
        send(&svc, get("/v1/address/uprn/990000009999", &key))
            .await
            .status,
        404
    );
}

#[actix_web::test]
async fn postcode_lookup_lists_every_address_in_order() {
    let w = world().await;
    let (_, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    for form in ["XT1%201AB", "xt11ab", "Xt1%201aB"] {
        let r = send(&svc, get(&format!("/v1/address/postcode/{form}"), &key)).await;
        assert_eq!(r.status, 200, "{form}: {}", r.json);
        assert_eq!(r.json["postcode"], "XT1 1AB");
        let m = r.json["data"]["matches"].as_array().unwrap();
        let saons: Vec<_> = m.iter().map(|a| a["saon"].clone()).collect();
        assert_eq!(
            saons,
            vec![
                json!(null),
                json!("FLAT 1"),
                json!("FLAT 2"),
                json!("FLAT 3")
            ]
        );
    }
}

#[actix_web::test]
async fn autocomplete_is_prefix_aware_typo_tolerant_and_uprn_free() {
    let w = world().await;
    let (_, key) = account(w.db(), 10).await;
    let svc = service(w.state.clone()).await;
    let texts = |r: &Reply| -> Vec<String> {
        r.json["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["text"].as_str().unwrap().to_string())
            .collect()
    };
    let r = send(&svc, get("/v1/address/autocomplete?q=rose%20cott", &key)).await;
    assert!(
        texts(&r)[0].to_uppercase().contains("ROSE COTTAGE"),
        "{}",
        r.json
    );
    let r = send(
        &svc,
        get("/v1/address/autocomplete?q=12%20staton%20road", &key),
    )
    .await;
    assert!(
        texts(&r)[0].to_uppercase().contains("12 STATION ROAD"),
        "typo: {}",
        r.json
    );
    for q in ["xt11ab", "XT1%201AB", "xt1%201ab"] {
        let r = send(&svc, get(&format!("/v1/address/autocomplete?q={q}"), &key)).await;
        let t = texts(&r);
        assert!(
            !t.is_empty() && t.iter().all(|s| s.contains("XT1 1AB")),
            "{q}: {t:?}"
        );
    }
    let r = send(
        &svc,
        get(
            "/v1/address/autocomplete?q=high%20street&max_results=2",
            &key,
        ),
    )
    .await;
    assert_eq!(texts(&r).len(), 2);
    assert!(
        !r.json.to_string().contains("uprn"),
        "autocomplete carries no UPRNs"
    );
}

#[actix_web::test]
async fn resolve_handles_flats_ranges_names_and_bad_postcodes() {
    let w = world().await;
    let (_, key) = account(w.db(), 50).await;
    let svc = service(w.state.clone()).await;
    let cases = [
        (
            json!({"address": "Flat 2, 10 High Street, Exampleton XT1 1AB"}),
            990000000012i64,
        ),
        (json!({"address": "2/10 High St Exampleton"}), 990000000012),
        (
            json!({"saon": "flat 3", "paon": "10", "street": "high st", "postcode": "xt11ab"}),
            990000000013,
        ),
        (
            json!({"address": "10 High Street, Exampleton, XT1 1AB"}),
            990000000010,
        ),
        (
            json!({"address": "63-65 Fore Street, Exampleton"}),
            990000000020,
        ),
        (
            json!({"address": "Rose Cottage, Church Lane, Little Dean"}),
            990000000021,
        ),
        (
            json!({"address": "2 High Street, Exampleton"}),
            990000000002,
        ),
        (
            json!({"address": "2 High Street, Exampleton, XT9 9ZZ"}),
            990000000002,
        ),
        (
            json!({"address": "12 Station Road, Otherbury"}),
            990000000024,
        ),
        (
            json!({"address": "12 Station Rd, Exampleton"}),
            990000000023,
        ),
    ];
    for (body, want) in cases {
        let r = send(&svc, post_json("/v1/address/resolve", &key, &body)).await;
        assert_eq!(r.status, 200, "{body}: {}", r.json);
        let c = r.json["candidates"].as_array().unwrap();
        assert_eq!(c[0]["uprn"], want, "{body}: {}", r.json);
        let s = c[0]["score"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&s));
        for pair in c.windows(2) {
            assert!(
                pair[0]["score"].as_f64() >= pair[1]["score"].as_f64(),
                "best first"
            );
        }
        assert!(
            c[0]["postcode"].is_string(),
            "a candidate has the record's shape"
        );
    }
    let r = send(
        &svc,
        post_json(
            "/v1/address/resolve",
            &key,
            &json!({"address": "99 Nowhere Lane, Faraway"}),
        ),
    )
    .await;
    assert_eq!(r.json["confident"], false, "{}", r.json);
    let r = send(
        &svc,
        post_json(
            "/v1/address/resolve",
            &key,
            &json!({"address": "3 High Street, Exampleton, XT1 1AA"}),
        ),
    )
    .await;
    assert_eq!(r.json["confident"], true, "{}", r.json);
}
