//! OAuth storage: a code and a refresh token are each used at most once, even when presented
//! concurrently, and a reused refresh token revokes its grant (on SQLite and PostgreSQL).

use chrono::{Duration, NaiveDateTime, Utc};
use terrace_store::meta;
use terrace_store::oauth::{
    self as q, ClientRow, CodeRow, NewRefresh, RefreshPresented, Rotated, TakenCode,
};

const CLIENT: &str = "tc_1";
use terrace_store::testing::TestDb;

fn now() -> NaiveDateTime {
    Utc::now().naive_utc()
}

async fn setup(t: &TestDb) -> CodeRow {
    let account =
        terrace_store::accounts::create_account(&t.db, "a", Some("a@example.test"), None, 5, now())
            .await
            .unwrap();
    q::upsert_client(
        &t.db,
        &ClientRow {
            client_id: "tc_1".into(),
            client_name: Some("Agent".into()),
            redirect_uris: "[\"https://app.example/cb\"]".into(),
            metadata_document: false,
            created_at: now(),
            updated_at: now(),
        },
    )
    .await
    .unwrap();
    let code = CodeRow {
        code_hash: "code-hash".into(),
        client_id: "tc_1".into(),
        account_id: account,
        redirect_uri: "https://app.example/cb".into(),
        code_challenge: "c".repeat(43),
        resource: "https://api.example/mcp".into(),
        scope: "terrace".into(),
        expires_at: now() + Duration::seconds(60),
        used_at: None,
        grant_id: None,
        created_at: now(),
    };
    q::insert_code(&t.db, &code).await.unwrap();
    code
}

#[tokio::test]
async fn a_code_is_taken_once_even_concurrently() {
    let t = TestDb::new().await;
    setup(&t).await;
    let takes =
        futures_util::future::join_all((0..8).map(|_| q::take_code(&t.db, "code-hash", now())))
            .await;
    let fresh = takes
        .iter()
        .filter(|r| matches!(r, Ok(TakenCode::Fresh(_))))
        .count();
    let reused = takes
        .iter()
        .filter(|r| matches!(r, Ok(TakenCode::Reused(_))))
        .count();
    assert_eq!((fresh, reused), (1, 7));
    assert_eq!(
        q::take_code(&t.db, "unknown", now()).await.unwrap(),
        TakenCode::Unknown
    );
}

#[tokio::test]
async fn refresh_tokens_rotate_and_a_reuse_revokes_the_grant() {
    let t = TestDb::new().await;
    let code = setup(&t).await;
    let first = NewRefresh {
        token_hash: "r1",
        expires_at: now() + Duration::days(30),
    };
    let grant = q::create_grant(&t.db, &code, &first, now()).await.unwrap();
    assert!(q::live_grant(&t.db, grant).await.unwrap().is_some());

    // Whole seconds, so the time read back equals it on both backends.
    let t0 = chrono::DateTime::from_timestamp(Utc::now().timestamp(), 0)
        .unwrap()
        .naive_utc();
    let second = NewRefresh {
        token_hash: "r2",
        expires_at: t0 + Duration::days(30),
    };
    let present =
        |old: &'static str, new: &NewRefresh<'static>, client: &'static str| RefreshPresented {
            client_id: client,
            old_hash: old,
            new: new.clone(),
            grace_since: t0 - Duration::seconds(30),
        };
    // Another client's presentation changes nothing.
    assert_eq!(
        q::rotate_refresh(&t.db, &present("r1", &second, "someone-else"), t0)
            .await
            .unwrap(),
        Rotated::WrongClient
    );
    match q::rotate_refresh(&t.db, &present("r1", &second, CLIENT), t0)
        .await
        .unwrap()
    {
        Rotated::Rotated(g) => assert_eq!(g.id, grant),
        other @ (Rotated::Replayed(..)
        | Rotated::Reused
        | Rotated::WrongClient
        | Rotated::Dead
        | Rotated::Unknown) => panic!("{other:?}"),
    }
    // Presented again within the grace window, with its (unused) successor: a replay.
    match q::rotate_refresh(&t.db, &present("r1", &second, CLIENT), t0)
        .await
        .unwrap()
    {
        Rotated::Replayed(g, at) => assert_eq!((g.id, at), (grant, t0)),
        other @ (Rotated::Rotated(_)
        | Rotated::Reused
        | Rotated::WrongClient
        | Rotated::Dead
        | Rotated::Unknown) => panic!("{other:?}"),
    }
    assert!(q::live_grant(&t.db, grant).await.unwrap().is_some());
    // After the window, the same presentation is reuse and revokes the grant.
    let late = RefreshPresented {
        grace_since: t0 + Duration::seconds(1),
        ..present("r1", &second, CLIENT)
    };
    assert_eq!(
        q::rotate_refresh(&t.db, &late, t0).await.unwrap(),
        Rotated::Reused
    );
    assert!(q::live_grant(&t.db, grant).await.unwrap().is_none());
    let third = NewRefresh {
        token_hash: "r3",
        expires_at: t0 + Duration::days(30),
    };
    assert_eq!(
        q::rotate_refresh(&t.db, &present("r2", &third, CLIENT), t0)
            .await
            .unwrap(),
        Rotated::Dead
    );
    assert_eq!(
        q::rotate_refresh(&t.db, &present("nope", &third, CLIENT), t0)
            .await
            .unwrap(),
        Rotated::Unknown
    );
    assert_eq!(q::grant_of_refresh(&t.db, "r2").await.unwrap(), Some(grant));
}

#[tokio::test]
async fn the_generated_secret_is_kept_once() {
    let t = TestDb::new().await;
    let key = meta::Key::OauthSigningKey;
    let a = meta::get_or_insert(&t.db, key, "first").await.unwrap();
    let b = meta::get_or_insert(&t.db, key, "second").await.unwrap();
    assert_eq!((a.as_str(), b.as_str()), ("first", "first"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_refreshes_of_one_token_are_one_rotation_and_replays_never_an_error() {
    // Two windows of one host refresh at once. On SQLite a transaction that read before it
    // wrote failed at once with SQLITE_BUSY (a 503 to the client) when the other held the lock.
    let t = TestDb::new().await;
    let code = setup(&t).await;
    let t0 = chrono::DateTime::from_timestamp(Utc::now().timestamp(), 0)
        .unwrap()
        .naive_utc();
    let first = NewRefresh {
        token_hash: "p0",
        expires_at: t0 + Duration::days(30),
    };
    let grant = q::create_grant(&t.db, &code, &first, t0).await.unwrap();
    let hash = |i: usize| -> &'static str { Box::leak(format!("p{i}").into_boxed_str()) };
    for round in 0..100 {
        let presented = RefreshPresented {
            client_id: CLIENT,
            old_hash: hash(round),
            new: NewRefresh {
                token_hash: hash(round + 1),
                expires_at: t0 + Duration::days(30),
            },
            grace_since: t0 - Duration::seconds(30),
        };
        // Each on its own task, so they run on different threads and connections.
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let (db, presented) = (t.db.clone(), presented.clone());
                tokio::spawn(async move { q::rotate_refresh(&db, &presented, t0).await })
            })
            .collect();
        let mut rotated = 0;
        for task in tasks {
            match task.await.unwrap() {
                Ok(Rotated::Rotated(g)) => {
                    assert_eq!(g.id, grant);
                    rotated += 1;
                }
                Ok(Rotated::Replayed(g, _)) => assert_eq!(g.id, grant),
                other => panic!("round {round}: {other:?}"),
            }
        }
        assert_eq!(rotated, 1, "round {round}");
    }
    assert!(q::live_grant(&t.db, grant).await.unwrap().is_some());
}
