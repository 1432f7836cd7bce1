//! Shared test support: an in-process app on a fresh database of the selected backend, with a
//! small address world loaded through the real AddressBase loader.
#![allow(dead_code)]

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::{App, test};
use serde_json::{Value, json};
use std::sync::Arc;
use terrace_address::{AddressCtx, IndexHandle};
use terrace_core::SystemClock;
use terrace_gateway::startup::app_config;
use terrace_gateway::state::{AppState, RateLimit};
use terrace_ingest::{Dataset, Progress};
use terrace_store::Db;
use terrace_store::testing::TestDb;

/// A small synthetic register (AddressBase Plus column names; synthetic, not real addresses).
pub const SMALL_WORLD: &str = "\
UPRN,PARENT_UPRN,CLASS,SAO_START_NUMBER,SAO_START_SUFFIX,SAO_END_NUMBER,SAO_END_SUFFIX,SAO_TEXT,PAO_START_NUMBER,PAO_START_SUFFIX,PAO_END_NUMBER,PAO_END_SUFFIX,PAO_TEXT,STREET_DESCRIPTION,LOCALITY,TOWN_NAME,POSTCODE_LOCATOR,X_COORDINATE,Y_COORDINATE,LATITUDE,LONGITUDE
990000000001,,RD04,,,,,,1,,,,,HIGH STREET,,EXAMPLETON,XT1 1AA,260010,80010,,
990000000002,,RD04,,,,,,2,,,,,HIGH STREET,,EXAMPLETON,XT1 1AA,260020,80010,,
990000000003,,RD04,,,,,,3,,,,,HIGH STREET,,EXAMPLETON,XT1 1AA,260030,80010,,
990000000010,,PP,,,,,,10,,,,,HIGH STREET,,EXAMPLETON,XT1 1AB,260100,80010,,
990000000011,990000000010,RD06,1,,,,FLAT,10,,,,,HIGH STREET,,EXAMPLETON,XT1 1AB,260100,80010,,
990000000012,990000000010,RD06,2,,,,FLAT,10,,,,,HIGH STREET,,EXAMPLETON,XT1 1AB,260100,80010,,
990000000013,990000000010,RD06,3,,,,FLAT,10,,,,,HIGH STREET,,EXAMPLETON,XT1 1AB,260100,80010,,
990000000020,,CR01,,,,,,63,,65,,,FORE STREET,,EXAMPLETON,XT1 2AA,260200,80100,,
990000000021,,RD02,,,,,,,,,,ROSE COTTAGE,CHURCH LANE,LITTLE DEAN,EXAMPLETON,XT2 3BB,261000,81000,,
990000000022,,RD03,,,,,,21,,,,,STATION ROAD,,EXAMPLETON,XT2 3BC,261100,81000,,
990000000023,,RD03,,,,,,12,,,,,STATION ROAD,,EXAMPLETON,XT2 3BC,261120,81000,,
990000000024,,RD03,,,,,,12,,,,,STATION ROAD,,OTHERBURY,XT3 4CD,265000,85000,,
";

pub struct TestApp {
    pub t: TestDb,
    pub state: AppState,
}

impl TestApp {
    pub fn db(&self) -> &Db {
        &self.t.db
    }
}

/// A fresh store with the small world loaded and indexed.
pub async fn world() -> TestApp {
    world_with(RateLimit::default()).await
}

pub async fn world_with(rate: RateLimit) -> TestApp {
    let t = TestDb::new().await;
    load_small_world(&t.db).await;
    let state = state_for(&t.db, rate).await;
    TestApp { t, state }
}

/// Loads [`SMALL_WORLD`] through the AddressBase loader.
async fn load_small_world(db: &Db) {
    let dir = std::env::temp_dir().join(format!("terrace-world-{}", uuid_like()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("addressbase.csv");
    std::fs::write(&file, SMALL_WORLD).unwrap();
    terrace_ingest::load_file(
        db,
        Dataset::AddressBase,
        &file,
        Default::default(),
        &mut Progress::quiet(),
    )
    .await
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The fixture world's folder (`fixtures/`, with its `manifest.json`).
pub fn fixtures() -> std::path::PathBuf {
    std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures"))
}

/// The fixture world's `manifest.json`: its files and the cases its tests pin.
pub fn manifest() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join("manifest.json")).unwrap())
        .unwrap()
}

/// The fixture postcode directory's row of a postcode, by column name.
pub fn onspd(postcode: &str, column: &str) -> String {
    let text = std::fs::read_to_string(fixtures().join("onspd/onspd_fixture.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = header.iter().position(|c| *c == column).unwrap();
    let row = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|r| r[1] == postcode)
        .unwrap();
    row[i].to_string()
}

/// A store with the fixture world loaded through `load_manifest`, as `terrace serve` loads it:
/// loaded once per test process and copied for each test (`TestDb::prepared`). The tests of
/// loading itself load for themselves.
pub async fn fixture_db() -> TestDb {
    TestDb::prepared("fixtures", |db| async move {
        terrace_build::load_and_build(&db, &fixtures(), &mut Progress::quiet())
            .await
            .unwrap();
    })
    .await
}

/// [`world`]'s small register with the fixture world loaded over it (loaded once per test
/// process, like [`fixture_db`]), and its state.
pub async fn small_world_and_fixtures() -> TestApp {
    let t = TestDb::prepared("small_world_and_fixtures", |db| async move {
        load_small_world(&db).await;
        terrace_build::load_and_build(&db, &fixtures(), &mut Progress::quiet())
            .await
            .unwrap();
    })
    .await;
    let state = state_for(&t.db, RateLimit::default()).await;
    TestApp { t, state }
}

pub async fn state_for(db: &Db, rate: RateLimit) -> AppState {
    state_with_clock(db, rate, Arc::new(SystemClock)).await
}

pub async fn state_with_clock(
    db: &Db,
    rate: RateLimit,
    clock: Arc<dyn terrace_core::Clock>,
) -> AppState {
    let index = Arc::new(IndexHandle::default());
    index.refresh(db).await.unwrap();
    let address = AddressCtx {
        db: db.clone(),
        index,
    };
    AppState::new(db.clone(), clock, address, rate)
}

/// Writes `content` to a temporary file and loads it as `dataset` through the real loader.
pub async fn load_text(db: &Db, dataset: Dataset, content: &str) -> terrace_ingest::LoadReport {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.csv");
    std::fs::write(&path, content).unwrap();
    terrace_ingest::load_file(
        db,
        dataset,
        &path,
        Default::default(),
        &mut Progress::quiet(),
    )
    .await
    .unwrap()
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

pub async fn service(
    state: AppState,
) -> impl Service<
    actix_http::Request,
    Response = ServiceResponse<impl MessageBody>,
    Error = actix_web::Error,
> {
    test::init_service(App::new().configure(app_config(state))).await
}

/// An account with `credits` and its API key.
pub async fn account(db: &Db, credits: i64) -> (i64, String) {
    let (id, key) =
        terrace_credits::create_account(db, "test", None, None, credits, chrono::Utc::now())
            .await
            .unwrap();
    (id, key.api_key)
}

pub struct Reply {
    pub status: u16,
    pub headers: actix_web::http::header::HeaderMap,
    pub json: Value,
}

pub async fn send<S, B>(svc: &S, req: test::TestRequest) -> Reply
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let resp = test::call_service(svc, req.to_request()).await;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = test::read_body(resp).await;
    let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Reply {
        status,
        headers,
        json,
    }
}

pub fn get(path: &str, key: &str) -> test::TestRequest {
    test::TestRequest::get()
        .uri(path)
        .insert_header(("Authorization", format!("Bearer {key}")))
}

pub fn post_json(path: &str, key: &str, body: &Value) -> test::TestRequest {
    test::TestRequest::post()
        .uri(path)
        .insert_header(("Authorization", format!("Bearer {key}")))
        .set_json(body)
}

pub fn post_raw(path: &str, key: &str, body: &'static str) -> test::TestRequest {
    test::TestRequest::post()
        .uri(path)
        .insert_header(("Authorization", format!("Bearer {key}")))
        .insert_header(("Content-Type", "application/json"))
        .set_payload(body)
}

pub async fn balance(db: &Db, account: i64) -> i64 {
    terrace_credits::balance(db, account).await.unwrap().balance
}

/// A 422 with the validation body: some entry of `detail` whose `loc` starts with `loc` has the
/// `type` `kind`, and nothing was charged.
pub fn check_422(r: &Reply, loc: &[&str], kind: &str) {
    assert_eq!(r.status, 422, "{}", r.json);
    let detail = r.json["detail"].as_array().expect("detail is a list");
    let want: Vec<Value> = loc.iter().map(|s| json!(s)).collect();
    assert!(
        detail.iter().any(|d| {
            let l = d["loc"].as_array().unwrap();
            l[..want.len().min(l.len())] == want[..] && d["type"] == kind
        }),
        "expected loc {loc:?} type {kind}, got {}",
        r.json
    );
    assert_eq!(r.json["credits_charged"], 0);
}
