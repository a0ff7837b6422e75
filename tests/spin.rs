//! RSpinLock against a real redis-server: the meaning of Redisson's RedissonSpinLockTest cases
//! that apply (case by case in `tests/REDISSON-CHECKLIST.md`), plus the wire shape (the RLock's
//! hash, no publish, no subscription).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{eventually, key_exists, RawSubscriber, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{BackOff, Config, Error, LostReason, Unlocked};

#[tokio::test]
async fn wire_shape_is_the_rlock_hash_and_nothing_is_published() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let mut sub = RawSubscriber::new(&s.url(), "redisson_lock__channel:{spin}").await;
    let lock = client.spin_lock("spin").unwrap();
    let g = lock.lock().await.unwrap();
    let fields: Vec<(String, String)> = raw.hgetall("spin").await.unwrap();
    assert_eq!(fields, vec![(g.field().to_owned(), "1".to_owned())]);
    assert!(common::uuid_field_regex().is_match(g.field()));
    let ttl: i64 = raw.pttl("spin").await.unwrap();
    assert!((28_000..=30_000).contains(&ttl), "watchdog TTL {ttl}");
    let again = g.reenter().await.unwrap();
    let count: String = raw.hget("spin", g.field()).await.unwrap();
    assert_eq!(count, "2");
    assert_eq!(again.unlock().await.unwrap(), Unlocked::Partial);
    assert_eq!(g.unlock().await.unwrap(), Unlocked::Released);
    assert!(!key_exists(&mut raw, "spin").await);
    assert!(sub.drain(&s).await.is_empty(), "a spin unlock publishes nothing");
    // a waiter never subscribes
    let holder = lock.lock().await.unwrap();
    let l = lock.clone();
    let waiter = tokio::spawn(async move { l.try_lock_for(Duration::from_millis(300)).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(client.stats().channels, 0, "spin waiters do not subscribe");
    assert!(waiter.await.unwrap().unwrap().is_none());
    assert!(lock.force_unlock().await.unwrap());
    assert!(
        sub.drain(&s).await.is_empty(),
        "a spin force unlock publishes nothing"
    );
    assert!(matches!(holder.unlock().await, Err(Error::NotHeld { .. })));
}

/// testTryLockAsync: a waiter gets the lock within a couple of back-off sleeps after the unlock
/// (by polling; no message exists).
#[tokio::test]
async fn a_waiter_gets_the_lock_by_polling_soon_after_the_unlock() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let lock = client.spin_lock("poll").unwrap();
    let g = lock.lock().await.unwrap();
    let l = lock.clone();
    let waiter = tokio::spawn(async move {
        let g = l.lock().await.unwrap();
        (Instant::now(), g)
    });
    // let the back-off reach its cap (128 ms)
    tokio::time::sleep(Duration::from_millis(600)).await;
    let released = Instant::now();
    g.unlock().await.unwrap();
    let (got, g2) = waiter.await.unwrap();
    let waited = got.duration_since(released);
    assert!(
        waited < Duration::from_millis(400),
        "{waited:?} after the unlock (cap 128 ms)"
    );
    g2.unlock().await.unwrap();
}

/// testTryLockWait / testTryLockAsyncWaitTime / testTryLockAsyncFailed: a held lock.
#[tokio::test]
async fn timed_waits_honour_their_budget() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let lock = client.spin_lock("budget").unwrap();
    let _g = lock.lock().await.unwrap();
    assert!(lock.try_lock().await.unwrap().is_none(), "testTryLockAsyncFailed");
    let start = Instant::now();
    assert!(lock
        .try_lock_for(Duration::from_millis(1_000))
        .await
        .unwrap()
        .is_none());
    let took = start.elapsed();
    assert!(
        (Duration::from_millis(950)..Duration::from_millis(1_600)).contains(&took),
        "try_lock_for(1s) took {took:?}"
    );
}

/// testExpire / testAutoExpire / testUnlockFail: a lease runs out; the stale unlock is NotHeld.
#[tokio::test]
async fn a_lease_expires_and_the_late_unlock_is_not_held() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.spin_lock("expire").unwrap();
    let g = lock.lock_with_lease(Duration::from_millis(400)).await.unwrap();
    let start = Instant::now();
    let g2 = lock.lock().await.unwrap();
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
    assert_eq!(g.lost().await, LostReason::LeaseExpired);
    assert!(matches!(g.unlock().await, Err(Error::NotHeld { .. })));
    let count: String = raw.hget("expire", g2.field()).await.unwrap();
    assert_eq!(count, "1", "the stale unlock left the new hold alone");
    g2.unlock().await.unwrap();
}

/// testGetHoldCount / testIsHeldByCurrentThread / testIsLocked(OtherThread) / testReentrancy.
#[tokio::test]
async fn queries_and_reentrancy() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let lock = client.spin_lock("q").unwrap().with_owner(1);
    let other = lock.with_owner(2);
    assert_eq!(lock.hold_count().await.unwrap(), 0);
    assert!(!lock.is_locked().await.unwrap());
    let a = lock.lock().await.unwrap();
    let b = lock.try_lock().await.unwrap().expect("the owner re-enters");
    assert_eq!(lock.hold_count().await.unwrap(), 2);
    assert!(lock.is_held().await.unwrap());
    assert!(!other.is_held().await.unwrap(), "another owner sees false");
    assert!(other.is_locked().await.unwrap(), "another owner sees it locked");
    assert!(other.try_lock().await.unwrap().is_none());
    b.unlock().await.unwrap();
    assert!(other.try_lock().await.unwrap().is_none(), "still held once");
    a.unlock().await.unwrap();
    assert!(!lock.is_locked().await.unwrap());
    assert!(
        matches!(other.unlock().await, Err(Error::NotHeld { .. })),
        "testUnlockFail"
    );
}

/// testConcurrency_SingleInstance / _MultiInstance: no lost update under contention.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_no_lost_update() {
    let s = RedisServer::start();
    let clients = [
        s.client(Config::default()).await,
        s.client(Config::default()).await,
    ];
    let counter = Arc::new(AtomicUsize::new(0));
    let inside = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for i in 0..16 {
        let lock = clients[i % 2].spin_lock("count").unwrap();
        let (counter, inside) = (counter.clone(), inside.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..10 {
                lock.run(async {
                    assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders at once");
                    let v = counter.load(Ordering::SeqCst);
                    tokio::task::yield_now().await;
                    counter.store(v + 1, Ordering::SeqCst);
                    inside.fetch_sub(1, Ordering::SeqCst);
                })
                .await
                .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(counter.load(Ordering::SeqCst), 160);
}

/// testRedisFailed: a dead Redis is an error, not a hang.
#[tokio::test]
async fn a_dead_redis_is_an_error() {
    let mut s = RedisServer::start();
    let config = Config::default()
        .with_command_timeout(Duration::from_millis(200))
        .with_retry_attempts(1)
        .with_retry_interval(Duration::from_millis(50));
    let client = s.client(config).await;
    let lock = client.spin_lock("dead").unwrap();
    s.kill();
    let r = tokio::time::timeout(Duration::from_secs(10), lock.lock())
        .await
        .expect("no hang");
    assert!(r.unwrap_err().is_transient());
}

#[tokio::test]
async fn a_constant_backoff_polls_at_its_pace() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.spin_lock("pace").unwrap();
    let g = lock.lock().await.unwrap();
    let slow = lock
        .with_backoff(BackOff::constant(Duration::from_millis(200)))
        .unwrap();
    assert!(matches!(
        lock.with_backoff(BackOff::constant(Duration::ZERO)),
        Err(Error::InvalidArgument(_))
    ));
    let before: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut raw)
        .await
        .unwrap();
    let calls = |info: &str| -> u64 {
        info.lines()
            .find(|l| l.starts_with("cmdstat_evalsha:"))
            .and_then(|l| l.split("calls=").nth(1))
            .and_then(|v| v.split(',').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    assert!(slow
        .try_lock_for(Duration::from_millis(1_000))
        .await
        .unwrap()
        .is_none());
    let after: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut raw)
        .await
        .unwrap();
    let polls = calls(&after) - calls(&before);
    assert!(
        (4..=8).contains(&polls),
        "{polls} attempts in 1 s with a 200 ms back-off"
    );
    g.unlock().await.unwrap();
    eventually(Duration::from_secs(2), "the key is gone", || {
        let mut raw = raw.clone();
        async move { !key_exists(&mut raw, "pace").await }
    })
    .await;
}

/// testAutoExpire: a spin lock left behind by a client that went away (no release) expires
/// within the watchdog timeout once nothing renews it.
#[tokio::test]
async fn a_gone_clients_lock_expires_within_the_watchdog_timeout() {
    let s = RedisServer::start();
    let wd = Duration::from_millis(900);
    let mut raw = s.conn().await;
    {
        let client = s.client(Config::default().with_lock_watchdog_timeout(wd)).await;
        client.spin_lock("gone").unwrap().lock().await.unwrap().forget();
        // the client (and its watchdog) goes away without releasing
    }
    assert!(key_exists(&mut raw, "gone").await);
    let start = Instant::now();
    eventually(wd * 3, "the abandoned lock expires", || {
        let mut raw = raw.clone();
        async move { !key_exists(&mut raw, "gone").await }
    })
    .await;
    assert!(
        start.elapsed() <= wd + Duration::from_millis(500),
        "{:?}",
        start.elapsed()
    );
}
