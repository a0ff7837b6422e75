//! RLock against real redis-server processes: its wire shape, Redisson's RedissonLockTest cases
//! ported in spirit, a foreign Redisson-shaped holder, subscriptions and concurrency. Watchdog
//! and loss: `rlock_loss.rs`; cancellation and `run`: `rlock_cancel.rs`; the cost of waiting and
//! pub/sub trouble: `rlock_waiting.rs`.

mod common;

use std::time::{Duration, Instant};

use common::{eventually, init_tracing, pttl, uuid_field_regex, RawSubscriber, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{Client, Config, Error, LostReason, Ttl, Unlocked};

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
            Err(Error::NoOwner { key }) if key == "holds"
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
    let acquire = concat!(
        include_str!("../lua/common/attempt.lua"),
        "\n",
        include_str!("../lua/lock/acquire.lua")
    );
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
