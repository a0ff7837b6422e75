//! RLock against real redis-server processes: wire shape, Redisson's RedissonLockTest cases
//! ported in spirit, a foreign Redisson-shaped holder, watchdog, restart and bad input.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{eventually, init_tracing, pttl, uuid_field_regex, RawSubscriber, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{Client, Config, Error, LeaseState, LostReason, Ttl, Unlocked};

async fn hgetall(c: &mut redis::aio::MultiplexedConnection, key: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = c.hgetall(key).await.unwrap();
    v.sort();
    v
}

#[tokio::test]
async fn wire_shape_of_watchdog_lock_reentry_and_release() {
    init_tracing();
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let mut sub = RawSubscriber::new(&s.url(), "redisson_lock__channel:{order:42}").await;
    let lock = client.lock("order:42").unwrap();

    let g1 = lock.lock().await.unwrap();
    let t: String = redis::cmd("TYPE")
        .arg("order:42")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(t, "hash");
    let fields = hgetall(&mut raw, "order:42").await;
    assert_eq!(fields.len(), 1, "exactly one owner field: {fields:?}");
    assert!(
        uuid_field_regex().is_match(&fields[0].0),
        "field {:?}",
        fields[0].0
    );
    assert_eq!(fields[0].0, format!("{}:{}", client.id(), g1.owner()));
    assert_eq!(fields[0].0, g1.field());
    assert_eq!(fields[0].1, "1");
    assert!(g1.owner().get() >= 1 << 48, "a fresh owner: {}", g1.owner());
    assert_eq!(lock.owner(), None, "the handle has no fixed owner");
    let ttl = pttl(&mut raw, "order:42").await;
    assert!((28_000..=30_000).contains(&ttl), "PTTL after lock() = {ttl}");

    let g2 = g1.reenter().await.unwrap(); // explicit re-entry: the same owner
    assert_eq!(g2.owner(), g1.owner());
    assert_eq!(
        hgetall(&mut raw, "order:42").await,
        vec![(g1.field().to_owned(), "2".to_owned())]
    );
    assert_eq!(lock.with_owner(g1.owner()).hold_count().await.unwrap(), 2);

    assert_eq!(g2.unlock().await.unwrap(), Unlocked::Partial);
    assert_eq!(
        hgetall(&mut raw, "order:42").await,
        vec![(g1.field().to_owned(), "1".to_owned())]
    );
    assert!(
        sub.drain(&s).await.is_empty(),
        "a partial release publishes nothing"
    );

    assert_eq!(g1.unlock().await.unwrap(), Unlocked::Released);
    let exists: i64 = raw.exists("order:42").await.unwrap();
    assert_eq!(exists, 0);
    assert_eq!(
        sub.drain(&s).await,
        vec!["0".to_owned()],
        "one `0` per full release"
    );
    // the latch of each unlock is deleted afterwards
    eventually(Duration::from_secs(2), "no latch keys are left", || {
        let mut raw = raw.clone();
        async move {
            let keys: Vec<String> = raw.keys("redisson_unlock_latch:*").await.unwrap();
            keys.is_empty()
        }
    })
    .await;
}

#[tokio::test]
async fn leased_reentries_never_cut_the_ttl_and_partial_unlock_reapplies_what_remains() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.lock("lease").unwrap().with_owner(1);

    let a = lock.lock_with_lease(Duration::from_secs(10)).await.unwrap();
    let ttl = pttl(&mut raw, "lease").await;
    assert!((9_000..=10_000).contains(&ttl), "PTTL {ttl}");
    assert_eq!(a.lease(), Some(Duration::from_secs(10)));
    assert_eq!(client.stats().renewing, 0, "a lease turns the watchdog off");

    let b = a.reenter_with_lease(Duration::from_secs(5)).await.unwrap();
    let ttl = pttl(&mut raw, "lease").await;
    assert!(
        (9_000..=10_000).contains(&ttl),
        "a shorter re-entry does not cut the TTL under the longer hold (Redisson would set 5 s): {ttl}"
    );
    let c = lock.lock_with_lease(Duration::from_secs(10)).await.unwrap(); // the pinned owner re-enters
    assert_eq!(lock.hold_count().await.unwrap(), 3);

    c.unlock().await.unwrap();
    a.unlock().await.unwrap();
    let ttl = pttl(&mut raw, "lease").await;
    assert!(
        (3_000..=5_000).contains(&ttl),
        "a partial unlock re-applies what the remaining hold (5 s lease) still needs: {ttl}"
    );
    assert_eq!(lock.hold_count().await.unwrap(), 1);
    b.unlock().await.unwrap();
    assert_eq!(lock.remain_time_to_live().await.unwrap(), Ttl::NotLocked);

    // Redisson testRemainTimeToLive2: lock(10s) x3, unlock x2 -> PTTL in [9000, 10000]
    let g: Vec<_> = futures::future::join_all((0..3).map(|_| lock.lock_with_lease(Duration::from_secs(10))))
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let mut g = g.into_iter();
    g.next().unwrap().unlock().await.unwrap();
    g.next().unwrap().unlock().await.unwrap();
    let ttl = pttl(&mut raw, "lease").await;
    assert!((9_000..=10_000).contains(&ttl), "PTTL {ttl}");
    assert_eq!(g.next().unwrap().unlock().await.unwrap(), Unlocked::Released);
}

#[tokio::test]
async fn remain_time_to_live_and_is_locked() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let lock = client.lock("ttl").unwrap();
    assert!(!lock.is_locked().await.unwrap());
    let g = lock.lock_with_lease(Duration::from_secs(3600)).await.unwrap();
    match lock.remain_time_to_live().await.unwrap() {
        Ttl::Expires(d) => assert!(d > Duration::from_secs(3590), "{d:?}"),
        other => panic!("{other:?}"),
    }
    assert!(lock.is_locked().await.unwrap());
    g.unlock().await.unwrap();
    assert_eq!(lock.remain_time_to_live().await.unwrap(), Ttl::NotLocked);
    let g = lock.lock().await.unwrap();
    match lock.remain_time_to_live().await.unwrap() {
        Ttl::Expires(d) => assert!(d > Duration::from_secs(29), "{d:?}"),
        other => panic!("{other:?}"),
    }
    g.unlock().await.unwrap();
    assert!(!lock.is_locked().await.unwrap());
}

#[tokio::test]
async fn hold_count_and_is_held_by_owner() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let lock = client.lock("holds").unwrap().with_owner(5);
    let other = lock.with_owner(424_242);
    assert_eq!(lock.hold_count().await.unwrap(), 0);
    assert!(!lock.is_held().await.unwrap());
    let a = lock.lock().await.unwrap();
    assert_eq!(lock.hold_count().await.unwrap(), 1);
    assert!(lock.is_held().await.unwrap());
    assert!(lock.is_held_by(lock.owner().unwrap()).await.unwrap());
    assert!(
        matches!(
            client.lock("holds").unwrap().is_held().await,
            Err(Error::InvalidArgument(_))
        ),
        "a handle without an owner cannot say whether \"it\" holds"
    );
    assert!(!other.is_held().await.unwrap(), "another owner sees false");
    assert_eq!(other.hold_count().await.unwrap(), 0);
    assert!(other.is_locked().await.unwrap(), "another owner sees it locked");
    assert!(
        other.try_lock().await.unwrap().is_none(),
        "another owner cannot get in"
    );
    let b = lock.lock().await.unwrap();
    assert_eq!(lock.hold_count().await.unwrap(), 2);
    b.unlock().await.unwrap();
    assert_eq!(lock.hold_count().await.unwrap(), 1);
    a.unlock().await.unwrap();
    assert_eq!(lock.hold_count().await.unwrap(), 0);
    assert!(!lock.is_held().await.unwrap());
    let g = other.try_lock().await.unwrap().expect("free now");
    assert_eq!(g.owner().get(), 424_242);
    g.unlock().await.unwrap();
}

#[tokio::test]
async fn tasks_are_distinct_owners_and_guards_unlock_from_any_task() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let lock = client.lock("tasks").unwrap();
    let g = lock.lock().await.unwrap();
    let l2 = lock.clone();
    let other_task = tokio::spawn(async move { l2.try_lock().await.unwrap().is_some() });
    assert!(!other_task.await.unwrap(), "another task is another owner");
    // the guard carries its owner: release it from a different task
    let released = tokio::spawn(async move { g.unlock().await })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(released, Unlocked::Released);
    assert!(!lock.is_locked().await.unwrap());
}

#[tokio::test]
async fn unlock_by_non_owner_is_not_held_and_changes_nothing() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.lock("nonowner").unwrap();
    let g = lock.lock_with_lease(Duration::from_secs(100)).await.unwrap();
    let before = hgetall(&mut raw, "nonowner").await;
    let mut sub = RawSubscriber::new(&s.url(), "redisson_lock__channel:{nonowner}").await;

    let err = lock.with_owner(7).unlock().await.unwrap_err();
    match &err {
        Error::NotHeld { key, field } => {
            assert_eq!(key, "nonowner");
            assert_eq!(field, &format!("{}:7", client.id()));
        }
        other => panic!("expected NotHeld, got {other:?}"),
    }
    // a second client with the same owner number is another owner too
    let client2 = Client::connect(&s.url()).await.unwrap();
    let err = client2
        .lock("nonowner")
        .unwrap()
        .with_owner(g.owner())
        .unlock()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotHeld { .. }), "{err:?}");

    assert_eq!(hgetall(&mut raw, "nonowner").await, before);
    assert!(pttl(&mut raw, "nonowner").await > 99_000);
    assert!(sub.drain(&s).await.is_empty(), "no publish on a refused unlock");
    g.unlock().await.unwrap();
}

#[tokio::test]
async fn try_lock_wait_timing_against_a_held_lock() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let lock = client.lock("wait").unwrap();
    let _g = lock.with_owner(1).lock().await.unwrap();
    let start = Instant::now();
    let got = lock
        .with_owner(2)
        .try_lock_for(Duration::from_millis(1500))
        .await
        .unwrap();
    let took = start.elapsed();
    assert!(got.is_none());
    assert!(took >= Duration::from_millis(1490), "returned early: {took:?}");
    assert!(took < Duration::from_millis(2500), "returned late: {took:?}");
}

#[tokio::test]
async fn leased_lock_expires_and_the_late_unlock_is_not_held() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let lock = client.lock("expire").unwrap();
    let g = lock
        .with_owner(1)
        .lock_with_lease(Duration::from_millis(600))
        .await
        .unwrap();
    let start = Instant::now();
    let g2 = lock.with_owner(2).lock().await.unwrap();
    let waited = start.elapsed();
    assert!(
        waited < Duration::from_millis(2000),
        "second owner waited {waited:?}"
    );
    assert_eq!(g.lost().await, LostReason::LeaseExpired);
    assert!(!g.is_held());
    let err = g.unlock().await.unwrap_err();
    assert!(matches!(err, Error::NotHeld { .. }), "{err:?}");
    assert!(
        lock.with_owner(2).is_held().await.unwrap(),
        "the late unlock left the new owner alone"
    );
    g2.unlock().await.unwrap();
}

#[tokio::test]
async fn force_unlock_wakes_waiters_and_marks_own_guards_lost() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let lock = client.lock("force").unwrap();
    assert!(!lock.force_unlock().await.unwrap(), "nothing to delete");
    let g = lock.with_owner(1).lock().await.unwrap();
    let waiter_lock = lock.with_owner(2);
    let waiter = tokio::spawn(async move {
        let g = waiter_lock.lock().await.unwrap();
        g.forget();
        Instant::now()
    });
    // make sure the waiter is subscribed before forcing
    eventually(Duration::from_secs(5), "the waiter subscribed", || {
        let c = client.clone();
        async move { c.stats().channels == 1 }
    })
    .await;
    let forced_at = Instant::now();
    assert!(client.lock("force").unwrap().force_unlock().await.unwrap());
    assert_eq!(g.lost().await, LostReason::ForceUnlocked);
    let acquired_at = waiter.await.unwrap();
    assert!(acquired_at.duration_since(forced_at) < Duration::from_millis(900));
    // a new instance sees the new holder, not the forced one
    let fresh = Client::connect(&s.url()).await.unwrap();
    assert!(fresh.lock("force").unwrap().is_locked().await.unwrap());
    assert!(fresh.lock("force").unwrap().force_unlock().await.unwrap());
    assert!(!fresh.lock("force").unwrap().is_locked().await.unwrap());
    drop(g);
}

#[tokio::test]
async fn foreign_redisson_shaped_holder_blocks_and_its_publish_wakes_us() {
    // A "Java" holder simulated with raw EVAL of Redisson-shaped scripts (our own scripts).
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let foreign = "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:57";
    let acquire = include_str!("../lua/lock/acquire.lua");
    let unlock = concat!(
        include_str!("../lua/common/notify.lua"),
        "\n",
        include_str!("../lua/lock/unlock.lua")
    );
    let r: Vec<i64> = redis::cmd("EVAL")
        .arg(acquire)
        .arg(2)
        .arg("foreign")
        .arg("redisson_unlock_latch:{foreign}:aa")
        .arg(30_000)
        .arg(foreign)
        .arg(1_000)
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(r, vec![1, 1], "the foreign holder got the lock");

    let lock = client.lock("foreign").unwrap();
    assert!(
        lock.try_lock().await.unwrap().is_none(),
        "the foreign hold blocks try_lock"
    );
    assert!(lock.is_locked().await.unwrap());
    assert_eq!(lock.with_owner(57).hold_count().await.unwrap(), 0);

    let l = lock.clone();
    let waiter = tokio::spawn(async move {
        let g = l.lock().await.unwrap();
        (Instant::now(), g)
    });
    eventually(Duration::from_secs(5), "our waiter subscribed", || {
        let c = client.clone();
        async move { c.stats().channels == 1 }
    })
    .await;
    let released_at = Instant::now();
    let r: Option<i64> = redis::cmd("EVAL")
        .arg(unlock)
        .arg(3)
        .arg("foreign")
        .arg("redisson_lock__channel:{foreign}")
        .arg("redisson_unlock_latch:{foreign}:0123456789abcdef0123456789abcdef")
        .arg(0)
        .arg(30_000)
        .arg(foreign)
        .arg("PUBLISH")
        .arg(10_000)
        .arg(0)
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(r, Some(1));
    let (acquired_at, g) = waiter.await.unwrap();
    let latency = acquired_at.duration_since(released_at);
    assert!(
        latency < Duration::from_millis(500),
        "woken by the publish, not the 30 s TTL: {latency:?}"
    );
    g.unlock().await.unwrap();
}

#[tokio::test]
async fn one_subscription_per_channel_and_none_left_afterwards() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.lock("shared-sub").unwrap();
    let holder = lock.with_owner(1).lock().await.unwrap();
    let mut waiters = Vec::new();
    for i in 0..20u64 {
        let l = lock.with_owner(100 + i);
        waiters.push(tokio::spawn(async move {
            let g = l.lock().await.unwrap();
            g.unlock().await.unwrap();
        }));
    }
    eventually(Duration::from_secs(5), "one shared subscription", || {
        let mut raw = raw.clone();
        async move {
            let (_, n): (String, i64) = redis::cmd("PUBSUB")
                .arg("NUMSUB")
                .arg("redisson_lock__channel:{shared-sub}")
                .query_async(&mut raw)
                .await
                .unwrap();
            n == 1
        }
    })
    .await;
    holder.unlock().await.unwrap();
    for w in waiters {
        tokio::time::timeout(Duration::from_secs(10), w)
            .await
            .expect("every waiter acquires in turn")
            .unwrap();
    }
    eventually(Duration::from_secs(5), "no channel left subscribed", || {
        let mut raw = raw.clone();
        async move {
            let chans: Vec<String> = redis::cmd("PUBSUB")
                .arg("CHANNELS")
                .query_async(&mut raw)
                .await
                .unwrap();
            chans.is_empty()
        }
    })
    .await;
    assert_eq!(client.stats().channels, 0);
    let keys: Vec<String> = raw.keys("shared-sub").await.unwrap();
    assert!(keys.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrency_no_lost_update_across_clients_and_tasks() {
    let s = RedisServer::start();
    let mut handles = Vec::new();
    for _ in 0..3 {
        let c = s.client(Config::default()).await;
        for _ in 0..8 {
            let lock = c.lock("counter-lock").unwrap();
            let mut raw = s.conn().await;
            handles.push(tokio::spawn(async move {
                for _ in 0..25 {
                    let g = lock.lock().await.unwrap();
                    let v: Option<i64> = raw.get("counter").await.unwrap();
                    tokio::task::yield_now().await;
                    let _: () = raw.set("counter", v.unwrap_or(0) + 1).await.unwrap();
                    g.unlock().await.unwrap();
                }
            }));
        }
    }
    for h in handles {
        h.await.unwrap();
    }
    let mut raw = s.conn().await;
    let v: i64 = raw.get("counter").await.unwrap();
    assert_eq!(v, 3 * 8 * 25, "no lost update");
    let exists: i64 = raw.exists("counter-lock").await.unwrap();
    assert_eq!(exists, 0);
}

#[tokio::test]
async fn watchdog_keeps_a_lock_alive_and_stops_after_unlock() {
    let s = RedisServer::start();
    let wd = Duration::from_millis(900);
    let client = s.client(Config::default().lock_watchdog_timeout(wd)).await;
    let mut raw = s.conn().await;
    let lock = client.lock("wd").unwrap();
    let g = lock.lock().await.unwrap();
    let field = g.field().to_owned();
    let start = Instant::now();
    while start.elapsed() < wd * 5 {
        let ttl = pttl(&mut raw, "wd").await;
        assert!(
            ttl > 0 && ttl <= 900,
            "held with a renewed TTL, got {ttl} after {:?}",
            start.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(g.is_held());
    assert_eq!(client.stats().renewing, 1);
    g.unlock().await.unwrap();
    assert_eq!(client.stats().renewing, 0);
    // If anything still renewed this (key, field), it would cut this TTL to 900 ms.
    let _: () = raw.hset("wd", &field, 1).await.unwrap();
    let _: () = raw.pexpire("wd", 100_000).await.unwrap();
    tokio::time::sleep(wd).await; // three renewal periods
    let ttl = pttl(&mut raw, "wd").await;
    assert!(ttl > 98_000, "no renewal after unlock, PTTL {ttl}");
}

#[tokio::test]
async fn force_unlock_by_another_client_reports_lost_and_stops_renewal() {
    let s = RedisServer::start();
    let client = s
        .client(Config::default().lock_watchdog_timeout(Duration::from_millis(900)))
        .await;
    let other = Client::connect(&s.url()).await.unwrap();
    let g = client.lock("lost").unwrap().lock().await.unwrap();
    assert!(other.lock("lost").unwrap().force_unlock().await.unwrap());
    let reason = tokio::time::timeout(Duration::from_secs(3), g.lost())
        .await
        .expect("lost within a few renewal periods");
    assert_eq!(reason, LostReason::OwnerGone);
    assert_eq!(g.state(), LeaseState::Lost(LostReason::OwnerGone));
    assert_eq!(client.stats().renewing, 0);
    // renewal never re-creates the lock
    let mut raw = s.conn().await;
    let exists: i64 = raw.exists("lost").await.unwrap();
    assert_eq!(exists, 0);
    assert!(matches!(g.unlock().await, Err(Error::NotHeld { .. })));
}

#[tokio::test]
async fn dead_clients_lock_expires_within_the_watchdog_timeout() {
    let s = RedisServer::start();
    let url = s.url();
    // The "dead" client lives on its own runtime (on its own thread), shut down without
    // releasing anything, like a killed process.
    let forgotten = std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let f = rt.block_on(async {
            let c = Client::builder()
                .url(url)
                .config(Config::default().lock_watchdog_timeout(Duration::from_millis(1500)))
                .build()
                .await
                .unwrap();
            let g = c.lock("dead").unwrap().lock().await.unwrap();
            let f = g.field().to_owned();
            g.forget();
            f
        });
        rt.shutdown_background();
        f
    })
    .join()
    .unwrap();
    let client = s.client(Config::default()).await;
    let start = Instant::now();
    let g = client
        .lock("dead")
        .unwrap()
        .try_lock_for(Duration::from_secs(5))
        .await
        .unwrap()
        .expect("acquired after the dead client's lock expired");
    assert!(
        start.elapsed() < Duration::from_millis(2500),
        "{:?}",
        start.elapsed()
    );
    assert_ne!(g.field(), forgotten);
    g.unlock().await.unwrap();
}

#[tokio::test]
async fn redis_restart_holder_learns_loss_waiters_acquire_scripts_reload() {
    init_tracing();
    let mut s = RedisServer::start();
    let config = Config::default()
        .lock_watchdog_timeout(Duration::from_millis(900))
        .command_timeout(Duration::from_millis(500))
        .poll_interval(Duration::from_millis(200));
    let holder = s.client(config.clone()).await;
    let waiter_client = s.client(config).await;
    let g = holder.lock("restart").unwrap().lock().await.unwrap();
    let wl = waiter_client.lock("restart").unwrap();
    let waiter = tokio::spawn(async move { wl.lock().await });
    eventually(Duration::from_secs(5), "the waiter is waiting", || {
        let c = waiter_client.clone();
        async move { c.stats().channels == 1 }
    })
    .await;

    s.restart(); // data and script cache gone
    let reason = tokio::time::timeout(Duration::from_secs(10), g.lost())
        .await
        .expect("the holder learns it lost the lock");
    assert!(
        matches!(reason, LostReason::OwnerGone | LostReason::RenewalFailed),
        "{reason:?}"
    );
    let wg = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the waiter acquires after the restart")
        .unwrap()
        .unwrap();
    assert!(wg.is_held());
    // the waiter's hold is renewed with reloaded scripts
    let mut raw = s.conn().await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let fields = hgetall(&mut raw, "restart").await;
    assert_eq!(fields, vec![(wg.field().to_owned(), "1".to_owned())]);
    assert!(matches!(g.unlock().await, Err(Error::NotHeld { .. })));
    wg.unlock().await.unwrap();
}

#[tokio::test]
async fn script_flush_is_invisible() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.lock("flush").unwrap();
    lock.lock().await.unwrap().unlock().await.unwrap();
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut raw)
        .await
        .unwrap();
    let g = lock.lock().await.unwrap();
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(g.unlock().await.unwrap(), Unlocked::Released);
}

#[tokio::test]
async fn bad_input_gets_typed_errors_and_changes_nothing() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    assert!(matches!(client.lock(""), Err(Error::InvalidArgument(_))));
    let lock = client.lock("typed").unwrap();
    assert!(matches!(
        lock.lock_with_lease(Duration::ZERO).await,
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        lock.lock_with_lease(Duration::from_micros(10)).await,
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        lock.try_lock_with_lease(Duration::from_secs(1), Duration::ZERO)
            .await,
        Err(Error::InvalidArgument(_))
    ));
    let exists: i64 = raw.exists("typed").await.unwrap();
    assert_eq!(exists, 0);

    let _: () = raw.set("string-key", "precious").await.unwrap();
    let lock = client.lock("string-key").unwrap();
    assert!(matches!(lock.lock().await, Err(Error::WrongType { key }) if key == "string-key"));
    assert!(matches!(lock.try_lock().await, Err(Error::WrongType { .. })));
    assert!(matches!(
        lock.try_lock_for(Duration::from_millis(200)).await,
        Err(Error::WrongType { .. })
    ));
    assert!(matches!(
        lock.with_owner(1).unlock().await,
        Err(Error::WrongType { .. })
    ));
    assert!(matches!(
        lock.with_owner(1).hold_count().await,
        Err(Error::WrongType { .. })
    ));
    let v: String = raw.get("string-key").await.unwrap();
    assert_eq!(v, "precious");
    assert_eq!(
        pttl(&mut raw, "string-key").await,
        -1,
        "no TTL was set on the foreign key"
    );

    assert!(matches!(
        Client::connect("http://nope").await,
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        Client::connect("not a url").await,
        Err(Error::InvalidArgument(_))
    ));
    let bad = Client::builder()
        .url(s.url())
        .config(Config::default().lock_watchdog_timeout(Duration::ZERO))
        .build()
        .await;
    assert!(matches!(bad, Err(Error::InvalidArgument(_))));
    // nothing listens on a port we just released
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let down = Client::connect(&format!("redis://127.0.0.1:{port}/")).await;
    match down {
        Err(Error::Connect { address, .. }) => {
            assert_eq!(
                address,
                format!("redis://127.0.0.1:{port}/"),
                "the error names the address"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn try_lock_returns_within_wait_while_redis_is_down() {
    let mut s = RedisServer::start();
    let client = s
        .client(Config::default().command_timeout(Duration::from_millis(500)))
        .await;
    let lock = client.lock("down").unwrap();
    s.kill();
    let start = Instant::now();
    let r = lock.try_lock_for(Duration::from_secs(1)).await;
    let took = start.elapsed();
    assert!(r.is_err(), "Redis is down: an error, not `None`: {r:?}");
    assert!(r.as_ref().unwrap_err().is_transient());
    assert!(
        took < Duration::from_millis(1000 + 500 + 300),
        "returned after {took:?}"
    );
    let r = lock.try_lock().await;
    assert!(matches!(r, Err(ref e) if e.is_transient()), "{r:?}");
}

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
        if let Ok(g) = tokio::time::timeout(Duration::from_micros(i * 4), l.lock()).await {
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
        .client(Config::default().lock_watchdog_timeout(Duration::from_millis(600)))
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

#[tokio::test]
async fn name_mapper_prefixes_keys_and_channels() {
    let s = RedisServer::start();
    let client = s
        .client(Config::default().name_mapper(redisson_lock::NameMapper::prefix("app:")))
        .await;
    let mut raw = s.conn().await;
    let lock = client.lock("x").unwrap();
    assert_eq!(lock.key(), "app:x");
    let mut sub = RawSubscriber::new(&s.url(), "redisson_lock__channel:{app:x}").await;
    let g = lock.lock().await.unwrap();
    assert_eq!(raw.exists::<_, i64>("app:x").await.unwrap(), 1);
    g.unlock().await.unwrap();
    assert_eq!(sub.drain(&s).await, vec!["0"]);
}

#[tokio::test]
async fn wrapped_connection_without_pubsub_polls() {
    let s = RedisServer::start();
    let redis_client = redis::Client::open(s.url()).unwrap();
    let conn = redis_client.get_multiplexed_async_connection().await.unwrap();
    let client = Client::builder()
        .connection(conn)
        .config(Config::default().poll_interval(Duration::from_millis(100)))
        .build()
        .await
        .unwrap();
    let lock = client.lock("wrapped").unwrap();
    let g = lock.with_owner(1).lock().await.unwrap();
    let l = lock.with_owner(2);
    let w = tokio::spawn(async move { l.lock().await.unwrap().unlock().await.unwrap() });
    tokio::time::sleep(Duration::from_millis(150)).await;
    g.unlock().await.unwrap();
    tokio::time::timeout(Duration::from_secs(2), w)
        .await
        .expect("polling waiter acquires")
        .unwrap();

    // and with a pub/sub client: waiters are woken by messages
    let conn = redis_client.get_connection_manager().await.unwrap();
    let client = Client::builder()
        .connection(conn)
        .pubsub_client(redis_client)
        .build()
        .await
        .unwrap();
    let lock = client.lock("wrapped2").unwrap();
    let g = lock.with_owner(1).lock().await.unwrap();
    let l = lock.with_owner(2);
    let w = tokio::spawn(async move { l.lock().await.unwrap().unlock().await.unwrap() });
    eventually(Duration::from_secs(5), "subscribed", || {
        let c = client.clone();
        async move { c.stats().channels == 1 }
    })
    .await;
    let t = Instant::now();
    g.unlock().await.unwrap();
    tokio::time::timeout(Duration::from_secs(2), w)
        .await
        .unwrap()
        .unwrap();
    assert!(t.elapsed() < Duration::from_millis(500));
}

#[tokio::test]
async fn many_clients_share_nothing_but_redis() {
    // Redisson testConcurrency_MultiInstance: many clients, each lock/unlock once.
    let s = RedisServer::start();
    let counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut hs = Vec::new();
    for _ in 0..20 {
        let c = s.client(Config::default()).await;
        let counter = counter.clone();
        hs.push(tokio::spawn(async move {
            let g = c.lock("multi").unwrap().lock().await.unwrap();
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            g.unlock().await.unwrap();
        }));
    }
    for h in hs {
        h.await.unwrap();
    }
    assert_eq!(counter.load(std::sync::atomic::Ordering::SeqCst), 20);
}

#[tokio::test]
async fn a_release_without_message_costs_one_poll_interval_not_the_ttl() {
    // L1: no lost wake-ups even when no unlock message arrives (a lost message, a raw DEL):
    // the batched check of waited-on keys notices the lock is gone within `poll_interval`,
    // although the subscribed waiter itself would sleep for an hour.
    let s = RedisServer::start();
    let client = s
        .client(
            Config::default()
                .poll_interval(Duration::from_millis(300))
                .subscribed_poll_interval(Duration::from_secs(3600)),
        )
        .await;
    let mut raw = s.conn().await;
    let _: () = raw
        .hset("silent", "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:1", 1)
        .await
        .unwrap();
    let _: () = raw.pexpire("silent", 30_000).await.unwrap();
    let lock = client.lock("silent").unwrap();
    let l = lock.clone();
    let waiter = tokio::spawn(async move {
        let g = l.lock().await.unwrap();
        (Instant::now(), g)
    });
    eventually(Duration::from_secs(5), "the waiter waits", || {
        let c = client.clone();
        async move { c.stats().waiters == 1 }
    })
    .await;
    let released = Instant::now();
    let _: () = raw.del("silent").await.unwrap(); // no publish
    let (at, g) = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("acquired")
        .unwrap();
    let waited = at.duration_since(released);
    assert!(
        waited < Duration::from_millis(800),
        "waited {waited:?} with a 300 ms poll interval (TTL was 30 s)"
    );
    g.unlock().await.unwrap();
    assert_eq!(
        client.stats().watched_keys,
        0,
        "the waiter left the batched check"
    );
}

async fn evalsha_calls(raw: &mut redis::aio::MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(raw)
        .await
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribed_waiters_cost_almost_nothing_while_they_wait() {
    // 50 waiters on 50 held locks: listening on their channels they sleep until the holders'
    // TTL (30 s, renewed) runs out; only the batched check of their keys runs, one call per
    // poll interval for all of them (it was one EVALSHA per waiter per poll interval).
    let s = RedisServer::start();
    let config = Config::default().poll_interval(Duration::from_millis(200));
    let holder = s.client(config.clone()).await;
    let waiter = s.client(config).await;
    let mut raw = s.conn().await;
    let mut held = Vec::new();
    let mut waits = Vec::new();
    for i in 0..50 {
        let name = format!("quiet:{i}");
        held.push(holder.lock(&name).unwrap().lock().await.unwrap());
        let l = waiter.lock(&name).unwrap();
        waits.push(tokio::spawn(async move {
            l.lock().await.unwrap().unlock().await.unwrap()
        }));
    }
    eventually(Duration::from_secs(10), "every waiter listens", || {
        let c = waiter.clone();
        async move { c.stats().waiters == 50 && c.stats().watched_keys == 50 }
    })
    .await;
    let before = evalsha_calls(&mut raw).await;
    let window = Instant::now();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let calls = evalsha_calls(&mut raw).await - before;
    let checks = (window.elapsed().as_millis() / 180 + 1) as u64; // poll 200 ms, jitter 90-100 %
    assert!(
        calls <= checks,
        "{calls} EVALSHA in 2 s while 50 subscribed waiters waited (at most {checks} batched checks expected)"
    );
    assert!(calls >= 1, "the batched check ran ({calls} calls)");
    for g in held {
        g.unlock().await.unwrap();
    }
    for w in waits {
        tokio::time::timeout(Duration::from_secs(10), w)
            .await
            .expect("every waiter got its lock after the unlocks")
            .unwrap();
    }
    eventually(Duration::from_secs(5), "nothing left watched", || {
        let c = waiter.clone();
        async move { c.stats().watched_keys == 0 && c.stats().waiters == 0 }
    })
    .await;
}

#[tokio::test]
async fn killed_pubsub_connection_does_not_strand_waiters() {
    // F17: the pub/sub connection dies mid-wait; the waiter is woken to re-try and the
    // connection re-subscribes by itself.
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.lock("killed-sub").unwrap();
    let g = lock.with_owner(1).lock().await.unwrap();
    let l = lock.with_owner(2);
    let waiter = tokio::spawn(async move { l.lock().await.unwrap().unlock().await.unwrap() });
    eventually(Duration::from_secs(5), "the waiter waits", || {
        let c = client.clone();
        async move { c.stats().waiters == 1 }
    })
    .await;
    let _: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("pubsub")
        .query_async(&mut raw)
        .await
        .unwrap();
    eventually(Duration::from_secs(5), "re-subscribed", || {
        let mut raw = raw.clone();
        async move {
            let (_, n): (String, i64) = redis::cmd("PUBSUB")
                .arg("NUMSUB")
                .arg("redisson_lock__channel:{killed-sub}")
                .query_async(&mut raw)
                .await
                .unwrap();
            n == 1
        }
    })
    .await;
    let released = Instant::now();
    g.unlock().await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("the waiter acquires")
        .unwrap();
    assert!(released.elapsed() < Duration::from_millis(1500));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_joining_a_subscribed_channel_attempts_once_before_it_sleeps() {
    // A second local waiter finds the channel subscribed: it listens before its first attempt,
    // so a refusal is not followed by a second attempt after subscribing (3 EVALSHA per
    // hand-over instead of 4).
    let s = RedisServer::start();
    let config = Config::default().poll_interval(Duration::from_secs(30)); // no batched check in the window
    let holder = s.client(config.clone()).await;
    let waiter = s.client(config).await;
    let mut raw = s.conn().await;
    let g = holder.lock("join").unwrap().lock().await.unwrap();
    let l = waiter.lock("join").unwrap();
    let first = tokio::spawn(async move { l.lock().await.unwrap().unlock().await.unwrap() });
    eventually(Duration::from_secs(5), "the first waiter listens", || {
        let c = waiter.clone();
        async move { c.stats().waiters == 1 && c.stats().channels == 1 }
    })
    .await;
    // the first waiter is subscribed: wait for its attempts to settle
    let mut last = evalsha_calls(&mut raw).await;
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = evalsha_calls(&mut raw).await;
        if now == last {
            break;
        }
        last = now;
    }
    let before = last;
    let l = waiter.lock("join").unwrap();
    let second = tokio::spawn(async move { l.lock().await.unwrap().unlock().await.unwrap() });
    eventually(
        Duration::from_secs(5),
        "the second waiter made its first attempt",
        || {
            let mut raw = raw.clone();
            async move { evalsha_calls(&mut raw).await > before }
        },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let calls = evalsha_calls(&mut raw).await - before;
    assert_eq!(
        calls, 1,
        "the second waiter attempted {calls} times before sleeping"
    );
    assert_eq!(waiter.stats().waiters, 2);
    g.unlock().await.unwrap();
    for t in [first, second] {
        tokio::time::timeout(Duration::from_secs(10), t)
            .await
            .expect("both waiters got the lock in turn")
            .unwrap();
    }
}

async fn cmd_calls(raw: &mut redis::aio::MultiplexedConnection, cmd: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(raw)
        .await
        .unwrap();
    let prefix = format!("cmdstat_{cmd}:calls=");
    info.lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_passed_back_and_forth_keeps_its_subscription() {
    // Two tasks of one client take turns: the one that re-queues right after the other took over
    // finds the channel still subscribed (the last user's leave lingers before UNSUBSCRIBE), so
    // the turns cost no SUBSCRIBE/UNSUBSCRIBE pair each.
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let before = cmd_calls(&mut raw, "subscribe").await;
    // the number of turns taken so far; a task that released waits for the other's turn before
    // it queues again (so the other, woken, has taken the lock and left the channel)
    let (turns, _) = tokio::sync::watch::channel(0usize);
    let turns = Arc::new(turns);
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let lock = client.lock("pingpong").unwrap();
        let turns = turns.clone();
        tasks.push(tokio::spawn(async move {
            let mut seen = turns.subscribe();
            for round in 0..50 {
                let g = lock.lock().await.unwrap();
                let mut mine = 0;
                turns.send_modify(|t| {
                    *t += 1;
                    mine = *t;
                });
                tokio::time::sleep(Duration::from_millis(1)).await;
                g.unlock().await.unwrap();
                if round < 49 && mine < 100 {
                    let _ = seen.wait_for(|t| *t > mine).await;
                }
            }
        }));
    }
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(60), t)
            .await
            .unwrap()
            .unwrap();
    }
    assert_eq!(*turns.borrow(), 100);
    let subscribes = cmd_calls(&mut raw, "subscribe").await - before;
    assert!(
        subscribes <= 10,
        "{subscribes} SUBSCRIBE calls for 100 turns of two tasks (one per hand-over without the linger)"
    );
    eventually(
        Duration::from_secs(5),
        "the channel is unsubscribed after the last turn",
        || {
            let c = client.clone();
            async move { c.stats().channels == 0 }
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unlock_published_while_pubsub_is_down_is_not_waited_out() {
    // F17 with waiters that would otherwise sleep for an hour: the pub/sub connection is killed
    // and the lock released (DEL + PUBLISH) in the same transaction, so the message is lost. The
    // disconnection makes the waiter re-try (and re-subscribe): it gets the lock at once.
    let s = RedisServer::start();
    let config = Config::default()
        .poll_interval(Duration::from_secs(3600))
        .subscribed_poll_interval(Duration::from_secs(3600));
    let client = s.client(config).await;
    let mut raw = s.conn().await;
    let _: () = raw
        .hset("lost-msg", "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:1", 1)
        .await
        .unwrap();
    let _: () = raw.pexpire("lost-msg", 3_600_000).await.unwrap();
    let l = client.lock("lost-msg").unwrap();
    let waiter = tokio::spawn(async move { l.lock().await.unwrap().unlock().await.unwrap() });
    eventually(Duration::from_secs(5), "the waiter listens", || {
        let c = client.clone();
        async move { c.stats().waiters == 1 && c.stats().watched_keys == 1 }
    })
    .await;
    let _: () = redis::pipe()
        .atomic()
        .cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("pubsub")
        .ignore()
        .cmd("DEL")
        .arg("lost-msg")
        .ignore()
        .cmd("PUBLISH")
        .arg("redisson_lock__channel:{lost-msg}")
        .arg(0)
        .ignore()
        .query_async(&mut raw)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the waiter got the lock although its unlock message was lost")
        .unwrap();
}
