//! The service recovers by itself when the store comes back: on PostgreSQL, every connection of
//! the pool is killed server-side; calls answer 503 (never 500) until fresh connections work.

use crate::support::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};

#[actix_web::test]
async fn dropped_connections_recover_without_a_restart() {
    let Some(admin) = terrace_store::testing::test_pg_url() else {
        eprintln!("SQLite has no server to lose: this test runs on PostgreSQL only");
        return;
    };
    let w = world().await;
    let (acct, key) = account(w.db(), 100).await;
    let svc = service(w.state.clone()).await;
    for _ in 0..4 {
        assert_eq!(
            send(&svc, get("/v1/address/uprn/990000000001", &key))
                .await
                .status,
            200
        );
    }
    let mut c = AsyncPgConnection::establish(&admin).await.unwrap();
    c.batch_execute(&format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{}'",
        w.t.name
    ))
    .await
    .unwrap();
    let mut statuses = Vec::new();
    for _ in 0..40 {
        let r = send(&svc, get("/v1/address/uprn/990000000001", &key)).await;
        statuses.push(r.status);
        if r.status == 200 && statuses.iter().rev().take(3).all(|s| *s == 200) {
            break;
        }
    }
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 503),
        "only 200 or 503: {statuses:?}"
    );
    assert_eq!(statuses.last(), Some(&200), "recovered: {statuses:?}");
    let ok = statuses.iter().filter(|s| **s == 200).count() as i64;
    assert_eq!(
        balance(w.db(), acct).await,
        100 - 4 - ok,
        "503s were not charged"
    );
}
