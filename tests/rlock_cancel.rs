//! RLock under cancellation, against a real redis-server: a dropped guard releases in the
//! background (also off the runtime), cancelled acquisitions never leave a renewed lock,
//! cancelled unlocks release exactly once, and `run` releases after Ok, Err and panic and is
//! stopped with `Error::Lost` when the lock goes away.

mod common;

use std::time::Duration;

use common::{eventually, init_tracing, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{Client, Config, Error, LeaseState, LostReason, Unlocked};

#[tokio::test]
async fn dropped_guard_releases_in_background_even_off_runtime() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.lock("drop").unwrap();
    {
        let _g = lock.lock().await.unwrap();
    }
    eventually(Duration::from_secs(3), "the dropped guard was released", || {
        let mut raw = raw.clone();
        async move { raw.exists::<_, i64>("drop").await.unwrap() == 0 }
    })
    .await;
    assert_eq!(client.stats().renewing, 0, "renewal stopped at drop");

    let g = lock.lock().await.unwrap();
    std::thread::spawn(move || drop(g))
        .join()
        .expect("dropping outside a runtime does not panic");
    eventually(
        Duration::from_secs(3),
        "the guard dropped on a plain thread was released",
        || {
            let mut raw = raw.clone();
            async move { raw.exists::<_, i64>("drop").await.unwrap() == 0 }
        },
    )
    .await;
    let _ = &mut raw;
}

#[tokio::test]
async fn cancelled_acquisitions_never_leave_a_renewed_lock() {
    init_tracing();
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    // Cancel acquisitions of free locks at many points of their flight: before sending, while
    // Redis runs the script, and after it granted the lock but before the caller saw the reply.
    let mut completed = Vec::new();
    for i in 0..300u64 {
        let l = client.lock(&format!("cancel:{i}")).unwrap().with_owner(i + 1);
        // every third one is dropped right after its first poll (its request written, or its
        // turn not yet taken); the others after a growing timeout (on a loaded machine the
        // timer may fire only after the reply: those complete)
        let outcome = if i % 3 == 0 {
            futures::FutureExt::now_or_never(l.lock())
        } else {
            tokio::time::timeout(Duration::from_micros(i * 4), l.lock())
                .await
                .ok()
        };
        if let Some(g) = outcome {
            g.unwrap().forget(); // completed: keep the hold, released explicitly below
            completed.push(l);
        }
    }
    assert!(completed.len() < 300, "some acquisitions must be cancelled");
    for l in &completed {
        assert_eq!(l.unlock().await.unwrap(), Unlocked::Released);
    }
    // A cancelled attempt that Redis granted is released in the background; without that, its
    // key would stay for the whole 30 s watchdog timeout (nobody renews it, nobody unlocks it).
    eventually(Duration::from_secs(5), "no lock is left", || {
        let mut raw = raw.clone();
        async move {
            let keys: Vec<String> = raw.keys("cancel:*").await.unwrap();
            keys.is_empty()
        }
    })
    .await;
    assert_eq!(client.stats().renewing, 0);
    let _ = &mut raw;
}

#[tokio::test]
async fn cancelled_unlocks_release_exactly_once() {
    init_tracing();
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    // Each lock is held twice (count 2); the inner hold's unlock is cancelled at many points of
    // its flight: before sending, while Redis runs the script, after Redis applied it but before
    // the caller saw the reply. Finished in the background, it must count exactly once (a
    // second release would free a lock the outer guard still holds; none would leave it forever).
    let mut outers = Vec::new();
    for i in 0..300u64 {
        let l = client
            .lock(&format!("cancel-unlock:{i}"))
            .unwrap()
            .with_owner(i + 1);
        let outer = l.lock().await.unwrap();
        let inner = outer.reenter().await.unwrap();
        let _ = tokio::time::timeout(Duration::from_micros(i * 4), inner.unlock()).await;
        outers.push(outer);
    }
    eventually(Duration::from_secs(10), "every cancelled unlock finished", || {
        let n = client.stats().queued_releases;
        async move { n == 0 }
    })
    .await;
    for (i, outer) in outers.into_iter().enumerate() {
        let key = format!("cancel-unlock:{i}");
        let count: Option<i64> = raw.hget(&key, outer.field()).await.unwrap();
        assert_eq!(count, Some(1), "{key}: one release of the two holds");
        assert_eq!(outer.state(), LeaseState::Held, "{key}");
        assert_eq!(outer.unlock().await.unwrap(), Unlocked::Released, "{key}");
    }
    let keys: Vec<String> = raw.keys("cancel-unlock:*").await.unwrap();
    assert!(keys.is_empty(), "left: {keys:?}");
    assert_eq!(client.stats().renewing, 0);
}

#[tokio::test]
async fn an_unlock_cancelled_while_waiting_for_its_turn_is_still_sent() {
    init_tracing();
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.lock("turn-cancel").unwrap().with_owner(7);
    let outer = lock.lock().await.unwrap();
    let inner = outer.reenter().await.unwrap();
    // The outer unlock takes the owner's turn and is in flight; the inner one waits for the turn
    // and is dropped there, before anything was sent for it.
    let mut first = Box::pin(outer.unlock());
    assert!(
        futures::poll!(first.as_mut()).is_pending(),
        "one round trip at least"
    );
    let mut second = Box::pin(inner.unlock());
    assert!(futures::poll!(second.as_mut()).is_pending(), "waits for the turn");
    drop(second);
    assert_eq!(first.await.unwrap(), Unlocked::Partial);
    // the dropped unlock is queued and sent: the lock is free, not renewed forever
    eventually(
        Duration::from_secs(10),
        "the dropped unlock released the lock",
        || {
            let mut raw = raw.clone();
            async move { raw.exists::<_, i64>("turn-cancel").await.unwrap() == 0 }
        },
    )
    .await;
    eventually(Duration::from_secs(5), "nothing renewed, nothing queued", || {
        let st = client.stats();
        async move { st.renewing == 0 && st.queued_releases == 0 }
    })
    .await;
    let _ = &mut raw;
}

#[tokio::test]
async fn run_releases_after_ok_error_and_panic() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let lock = client.lock("scoped").unwrap();
    let l = lock.clone();
    let v = lock
        .run(async move { l.is_locked().await.unwrap() })
        .await
        .unwrap();
    assert!(v, "held while the body runs");
    assert!(!lock.is_locked().await.unwrap());
    let r: Result<Result<(), &str>, Error> = lock.run(async { Err("business error") }).await;
    assert_eq!(r.unwrap(), Err("business error"));
    assert!(!lock.is_locked().await.unwrap());
    let l = lock.clone();
    let panicked = tokio::spawn(async move { l.run(async { panic!("boom") }).await }).await;
    assert!(panicked.unwrap_err().is_panic());
    assert!(
        !lock.is_locked().await.unwrap(),
        "released before the panic resumed"
    );
}

#[tokio::test]
async fn run_is_cancelled_with_lost_when_the_lock_goes_away() {
    let s = RedisServer::start();
    let client = s
        .client(Config::default().with_lock_watchdog_timeout(Duration::from_millis(600)))
        .await;
    let lock = client.lock("scoped-lost").unwrap();
    let other = Client::connect(&s.url()).await.unwrap();
    let forcer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        other.lock("scoped-lost").unwrap().force_unlock().await.unwrap()
    });
    let r = lock.run(std::future::pending::<()>()).await;
    assert!(
        matches!(
            r,
            Err(Error::Lost {
                reason: LostReason::OwnerGone,
                ..
            })
        ),
        "{r:?}"
    );
    assert!(forcer.await.unwrap());
}
