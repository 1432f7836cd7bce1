//! The ledger on the backend the environment selects (SQLite by default; PostgreSQL with
//! TERRACE_TEST_DATABASE_URL).

use chrono::Utc;
use terrace_credits::{self as credits, CreditsError, Surface};
use terrace_store::accounts::{ledger_sum, ledger_unowned};
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
    assert_eq!(ledger_unowned(&t.db).await.unwrap(), 0);
}

/// Retention: per-call rows past the retention period become one row per account, day,
/// operation and surface; the balance still equals the ledger's sum, grants stay row by row,
/// recent calls stay listed in usage, and running it again changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn old_calls_roll_up_per_day_and_the_balance_still_equals_the_sum() {
    let t = TestDb::new().await;
    let now = Utc::now();
    let day = chrono::Duration::days(1);
    let (id, key) = credits::create_account(&t.db, "old", None, None, 1_000, now - day * 500)
        .await
        .unwrap();
    let (other, other_key) =
        credits::create_account(&t.db, "other", None, None, 50, now - day * 500)
            .await
            .unwrap();
    let caller = credits::authenticate(&t.db, &key.api_key).await.unwrap();
    let other_caller = credits::authenticate(&t.db, &other_key.api_key)
        .await
        .unwrap();
    // 450 and 420 days ago (past the 90-day retention), and yesterday (kept).
    let old_a = now - day * 450;
    let old_b = now - day * 420;
    let recent = now - day;
    let mut n = 0;
    let mut charge = async |c: &credits::Caller,
                            op: &str,
                            credits: i64,
                            s: Surface,
                            at: chrono::DateTime<Utc>| {
        n += 1;
        credits::charge(&t.db, c, op, credits, &format!("r{n}"), s, at)
            .await
            .unwrap()
    };
    for _ in 0..3 {
        charge(&caller, "address_by_uprn", 1, Surface::Http, old_a).await;
    }
    charge(&caller, "address_by_uprn", 1, Surface::Mcp, old_a).await;
    charge(&caller, "address_autocomplete", 0, Surface::Http, old_a).await;
    charge(&caller, "address_by_postcode", 2, Surface::Http, old_b).await;
    charge(&other_caller, "address_by_uprn", 1, Surface::Http, old_b).await;
    charge(&caller, "address_by_uprn", 1, Surface::Http, recent).await;
    credits::grant(&t.db, id, 10, old_b).await.unwrap();

    let balance = credits::balance(&t.db, id).await.unwrap().balance;
    assert_eq!(balance, 1_000 - 4 - 2 - 1 + 10);
    assert_eq!(ledger_sum(&t.db, id).await.unwrap(), balance);

    let rolled = credits::roll_up_ledger(&t.db, now, credits::DEFAULT_RETENTION_DAYS)
        .await
        .unwrap();
    assert_eq!(rolled, 7, "the seven calls past retention");
    assert_eq!(credits::balance(&t.db, id).await.unwrap().balance, balance);
    assert_eq!(ledger_sum(&t.db, id).await.unwrap(), balance);
    assert_eq!(ledger_sum(&t.db, other).await.unwrap(), 49);
    let days = terrace_store::accounts::ledger_daily(&t.db, id)
        .await
        .unwrap();
    let got: Vec<_> = days
        .iter()
        .map(|d| {
            (
                d.day,
                d.operation.as_str(),
                d.surface.as_str(),
                d.calls,
                d.credits,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (old_b.date_naive(), "address_by_postcode", "http", 1, -2),
            (old_a.date_naive(), "address_autocomplete", "http", 1, 0),
            (old_a.date_naive(), "address_by_uprn", "http", 3, -3),
            (old_a.date_naive(), "address_by_uprn", "mcp", 1, -1),
        ]
    );
    // Usage still lists the recent call, row by row; the old ones are in their days.
    let (usage, _) = credits::usage(&t.db, id, 50, None).await.unwrap();
    assert_eq!(usage.len(), 1);
    assert_eq!(usage[0].time.date_naive(), recent.date_naive());

    // Again: nothing left to roll, nothing changes.
    assert_eq!(
        credits::roll_up_ledger(&t.db, now, credits::DEFAULT_RETENTION_DAYS)
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        terrace_store::accounts::ledger_daily(&t.db, id)
            .await
            .unwrap(),
        days
    );
    assert!(matches!(
        credits::roll_up_ledger(&t.db, now, 0).await,
        Err(CreditsError::Invalid(_))
    ));
}

/// A day rolled in two passes (the cutoff fell inside it) has one row holding both passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_second_pass_adds_to_the_day_it_shares() {
    use chrono::TimeZone;
    let t = TestDb::new().await;
    let d0 = Utc.with_ymd_and_hms(2025, 3, 4, 8, 0, 0).unwrap();
    let (id, key) = credits::create_account(&t.db, "two", None, None, 100, d0)
        .await
        .unwrap();
    let caller = credits::authenticate(&t.db, &key.api_key).await.unwrap();
    for (i, at) in [d0, d0 + chrono::Duration::hours(4)]
        .into_iter()
        .enumerate()
    {
        credits::charge(&t.db, &caller, "op", 2, &format!("r{i}"), Surface::Http, at)
            .await
            .unwrap();
    }
    let retention = 30;
    let first = d0 + chrono::Duration::days(retention) + chrono::Duration::hours(2);
    assert_eq!(
        credits::roll_up_ledger(&t.db, first, retention)
            .await
            .unwrap(),
        1
    );
    let later = d0 + chrono::Duration::days(retention + 1);
    assert_eq!(
        credits::roll_up_ledger(&t.db, later, retention)
            .await
            .unwrap(),
        1
    );
    let days = terrace_store::accounts::ledger_daily(&t.db, id)
        .await
        .unwrap();
    assert_eq!(days.len(), 1);
    assert_eq!(
        (days[0].day, days[0].calls, days[0].credits),
        (d0.date_naive(), 2, -4)
    );
    assert_eq!(ledger_sum(&t.db, id).await.unwrap(), 96);
    assert_eq!(credits::balance(&t.db, id).await.unwrap().balance, 96);
}

/// The group-commit batch decides each debit in arrival order: two accounts, a revoked key and
/// an unknown account in one transaction, each with its own outcome, and no balance below zero.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_batch_decides_each_debit_in_order() {
    use terrace_store::accounts::{DebitOutcome, OwnedCharge, debit_batch};
    let t = TestDb::new().await;
    let now = Utc::now();
    let (a, _) = credits::create_account(&t.db, "a", None, None, 5, now)
        .await
        .unwrap();
    let (b, _) = credits::create_account(&t.db, "b", None, None, 3, now)
        .await
        .unwrap();
    let revoked = credits::create_key(&t.db, b, Some("old"), now)
        .await
        .unwrap();
    credits::revoke_key(&t.db, b, revoked.key_id, now)
        .await
        .unwrap();
    let ch = |account_id: i64, key_id: Option<i64>, credits: i64| OwnedCharge {
        account_id,
        key_id,
        operation: "op".into(),
        credits,
        request_id: "r".into(),
        surface: "http".into(),
    };
    let out = debit_batch(
        &t.db,
        vec![
            ch(a, None, 2),
            ch(b, None, 2),
            ch(a, None, 2),
            ch(a, None, 2),
            ch(b, Some(revoked.key_id), 1),
            ch(b, None, 0),
            ch(9999, None, 1),
            ch(b, None, 2),
        ],
        now.naive_utc(),
    )
    .await
    .unwrap();
    assert_eq!(
        out,
        vec![
            DebitOutcome::Charged { balance: 3 },
            DebitOutcome::Charged { balance: 1 },
            DebitOutcome::Charged { balance: 1 },
            DebitOutcome::Insufficient { balance: 1 },
            DebitOutcome::Revoked,
            DebitOutcome::Charged { balance: 1 },
            DebitOutcome::NoAccount,
            DebitOutcome::Insufficient { balance: 1 },
        ]
    );
    for (id, bal) in [(a, 1), (b, 1)] {
        assert_eq!(credits::balance(&t.db, id).await.unwrap().balance, bal);
        assert_eq!(ledger_sum(&t.db, id).await.unwrap(), bal);
    }
    let (usage_b, _) = credits::usage(&t.db, b, 10, None).await.unwrap();
    assert_eq!(
        usage_b.iter().map(|u| u.credits).collect::<Vec<_>>(),
        vec![0, 2],
        "b: the free call and the first debit, newest first"
    );
    assert_eq!(
        ledger_unowned(&t.db).await.unwrap(),
        0,
        "no row for the debit of an account that does not exist"
    );
}
