//! The ledger on the backend the environment selects (SQLite by default; PostgreSQL with
//! TERRACE_TEST_DATABASE_URL).

use chrono::Utc;
use terrace_credits::{self as credits, CreditsError, Surface};
use terrace_store::accounts::ledger_sum;
use terrace_store::testing::TestDb;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn grant_charge_and_balance_agree_with_ledger() {
    let t = TestDb::new().await;
    let now = Utc::now();
    let (id, key) = credits::create_account(&t.db, "acme", None, None, 10, now)
        .await
        .unwrap();
    let caller = credits::authenticate(&t.db, &key.api_key).await.unwrap();
    assert_eq!((caller.account_id, caller.balance), (id, 10));
    assert_eq!(
        credits::charge(&t.db, &caller, "op", 3, "r1", Surface::Http, now)
            .await
            .unwrap(),
        7
    );
    assert_eq!(
        credits::charge(&t.db, &caller, "free", 0, "r2", Surface::Http, now)
            .await
            .unwrap(),
        7
    );
    match credits::charge(&t.db, &caller, "op", 8, "r3", Surface::Http, now).await {
        Err(CreditsError::InsufficientCredits {
            required: 8,
            remaining: 7,
        }) => {}
        other => panic!("expected insufficient credits, got {other:?}"),
    }
    assert_eq!(credits::grant(&t.db, id, 5, now).await.unwrap(), 12);
    assert_eq!(credits::balance(&t.db, id).await.unwrap().balance, 12);
    assert_eq!(ledger_sum(&t.db, id).await.unwrap(), 12);
    let (usage, next) = credits::usage(&t.db, id, 10, None).await.unwrap();
    assert_eq!(next, None);
    let ops: Vec<_> = usage
        .iter()
        .map(|u| (u.operation.as_deref(), u.credits))
        .collect();
    assert_eq!(
        ops,
        vec![(Some("free"), 0), (Some("op"), 3)],
        "newest first, failed call absent"
    );
    assert!(matches!(
        credits::grant(&t.db, id, 0, now).await,
        Err(CreditsError::Invalid(_))
    ));
    assert!(matches!(
        credits::grant(&t.db, 9999, 5, now).await,
        Err(CreditsError::NoAccount)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn keys_are_hashed_masked_and_revocable() {
    let t = TestDb::new().await;
    let now = Utc::now();
    let (id, first) = credits::create_account(&t.db, "acme", None, None, 1, now)
        .await
        .unwrap();
    let second = credits::create_key(&t.db, id, Some("ci"), now)
        .await
        .unwrap();
    assert!(first.api_key.starts_with("trc_") && first.api_key.len() == 44);
    let keys = credits::list_keys(&t.db, id).await.unwrap();
    assert_eq!(keys.len(), 2);
    for k in &keys {
        assert!(!k.masked.contains(&first.api_key) && !k.masked.contains(&second.api_key));
        assert!(k.masked.starts_with("trc_") && k.masked.contains('…'));
    }
    credits::revoke_key(&t.db, id, second.key_id, now)
        .await
        .unwrap();
    assert!(matches!(
        credits::authenticate(&t.db, &second.api_key).await,
        Err(CreditsError::Unauthenticated)
    ));
    assert!(credits::authenticate(&t.db, &first.api_key).await.is_ok());
    assert!(matches!(
        credits::revoke_key(&t.db, id, second.key_id, now).await,
        Err(CreditsError::NoKey)
    ));
    assert!(matches!(
        credits::authenticate(&t.db, "trc_0000").await,
        Err(CreditsError::Unauthenticated)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_debits_never_overdraw() {
    let t = TestDb::new().await;
    let now = Utc::now();
    let (id, key) = credits::create_account(&t.db, "race", None, None, 20, now)
        .await
        .unwrap();
    let caller = credits::authenticate(&t.db, &key.api_key).await.unwrap();
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let (db, caller) = (t.db.clone(), caller.clone());
            tokio::spawn(async move {
                credits::charge(&db, &caller, "op", 3, &format!("r{i}"), Surface::Http, now).await
            })
        })
        .collect();
    let mut ok = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(_) => ok += 1,
            Err(CreditsError::InsufficientCredits { .. }) => {}
            Err(e) => panic!("unexpected {e}"),
        }
    }
    assert_eq!(ok, 6, "20 credits afford exactly six calls at 3");
    assert_eq!(credits::balance(&t.db, id).await.unwrap().balance, 2);
    assert_eq!(ledger_sum(&t.db, id).await.unwrap(), 2);
}
