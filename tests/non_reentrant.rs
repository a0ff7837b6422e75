//! The non-reentrant lock against a real redis-server: the meaning of Redisson's
//! RedissonNonReentrantLockTest (4.4+).

mod common;

use std::time::{Duration, Instant};

use common::RedisServer;
use redis::AsyncCommands;
use redisson_lock::{Config, Error, OwnerId, Unlocked};

/// testSameThreadReacquireThrows: lock / tryLock / tryLock(100ms) by the holding owner fail at
/// once; one unlock releases.
#[tokio::test]
async fn the_holder_cannot_take_it_again() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.non_reentrant_lock("nr").unwrap().with_owner(1);
    let g = lock.lock().await.unwrap();
    let count: String = raw.hget("nr", g.field()).await.unwrap();
    assert_eq!(count, "1");
    let start = Instant::now();
    for r in [
        lock.lock().await.map(drop),
        lock.try_lock().await.map(drop),
        lock.try_lock_for(Duration::from_millis(100)).await.map(drop),
    ] {
        assert!(
            matches!(r, Err(Error::AlreadyHeld { ref key, ref field }) if key == "nr" && field == g.field()),
            "{r:?}"
        );
    }
    assert!(
        start.elapsed() < Duration::from_millis(500),
        "no wait for itself: {:?}",
        start.elapsed()
    );
    let count: String = raw.hget("nr", g.field()).await.unwrap();
    assert_eq!(count, "1", "never a count of 2");
    assert_eq!(g.unlock().await.unwrap(), Unlocked::Released);
    assert_eq!(
        raw.exists::<_, i64>("nr").await.unwrap(),
        0,
        "a single unlock releases"
    );
    // inside an owner scope the same holds
    let scoped = OwnerId::fresh()
        .scope(async {
            let lock = client.non_reentrant_lock("nr").unwrap();
            let g = lock.lock().await.unwrap();
            let again = lock.try_lock().await;
            g.unlock().await.unwrap();
            again.map(drop)
        })
        .await;
    assert!(matches!(scoped, Err(Error::AlreadyHeld { .. })));
}

/// testContendingThreadBlocksAndAcquiresOnRelease: another owner waits and gets it on release.
#[tokio::test]
async fn another_owner_waits_and_gets_it_on_release() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let lock = client.non_reentrant_lock("wait").unwrap();
    let g = lock.lock().await.unwrap();
    let l = lock.clone();
    let waiter = tokio::spawn(async move {
        let g = l.lock().await.unwrap();
        (Instant::now(), g)
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiter.is_finished());
    let released = Instant::now();
    g.unlock().await.unwrap();
    let (got, g2) = waiter.await.unwrap();
    assert!(
        got.duration_since(released) < Duration::from_millis(500),
        "woken by the unlock message"
    );
    g2.unlock().await.unwrap();
}

/// testCrossInstanceSameThreadReentryThrows: two handles of the same owner on one client.
#[tokio::test]
async fn two_handles_of_one_owner_cannot_both_hold() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let a = client.non_reentrant_lock("cross").unwrap().with_owner(5);
    let b = client.non_reentrant_lock("cross").unwrap().with_owner(5);
    let g = a.lock().await.unwrap();
    assert!(matches!(b.try_lock().await, Err(Error::AlreadyHeld { .. })));
    // another client is another owner: it just waits
    let other = s.client(Config::default()).await;
    assert!(other
        .non_reentrant_lock("cross")
        .unwrap()
        .with_owner(5)
        .try_lock()
        .await
        .unwrap()
        .is_none());
    g.unlock().await.unwrap();
}

/// In blocking code the owner is the thread, as in Java.
#[test]
fn the_blocking_facade_refuses_a_second_lock_on_one_thread() {
    let s = RedisServer::start();
    let client = redisson_lock::blocking::Client::connect(&s.url()).unwrap();
    let lock = client.non_reentrant_lock("thread").unwrap();
    let g = lock.lock().unwrap();
    assert!(matches!(lock.try_lock(), Err(Error::AlreadyHeld { .. })));
    let other_thread = {
        let lock = lock.clone();
        std::thread::spawn(move || lock.try_lock().map(|g| g.is_some()))
            .join()
            .unwrap()
    };
    assert!(
        !other_thread.unwrap(),
        "another thread is another owner: held, not an error"
    );
    g.unlock().unwrap();
}
