//! Safety under ambiguity, against a real redis-server: never two holders and never a stuck
//! lock, also when a reply is lost, a request arrives twice, a future is dropped, a duration is
//! absurd or Redis is gone. One test per situation, each checking its invariant: a stale guard
//! never releases a later hold; two futures of one task never hold one lock at once; a re-entry
//! never cuts the TTL a longer hold needs; one guard is one hold in Redis; a rejected call
//! changes nothing; one bad key does not stop the renewal of the others; `lock()` against a dead
//! Redis gives up; an ended hold leaves no record behind.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{eventually, init_tracing, key_exists, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{Client, Config, Error, LeaseState, LostReason, OwnerId, Unlocked};

async fn hget(raw: &mut redis::aio::MultiplexedConnection, key: &str, field: &str) -> Option<String> {
    raw.hget(key, field).await.unwrap()
}

/// Keeps Redis busy for `ms` with a script on a connection of its own (other clients' commands
/// queue behind it; below `busy-reply-threshold` they get no BUSY error).
async fn busy(s: &RedisServer, ms: u64) -> tokio::task::JoinHandle<()> {
    let client = redis::Client::open(s.url()).unwrap();
    let cfg = redis::AsyncConnectionConfig::new().set_response_timeout(Some(Duration::from_secs(30)));
    let mut c = client
        .get_multiplexed_async_connection_with_config(&cfg)
        .await
        .unwrap();
    // (a loop over TIME, which Redis 7.2+ freezes during a script: see `busy_cmd`)
    let spin = common::busy_cmd(&s.url(), Duration::from_millis(ms)).await;
    let task = tokio::spawn(async move {
        let _: redis::RedisResult<i64> = spin.query_async(&mut c).await;
    });
    // The script must be running before the caller's commands are sent; it cannot be observed
    // from outside (Redis answers nobody while it runs), so give it a moment to start.
    tokio::time::sleep(Duration::from_millis(100)).await;
    task
}

/// Item 1: a guard known to be lost never sends a release, so it cannot take away the hold its
/// owner took after it.
#[tokio::test]
async fn a_stale_guard_never_releases_its_successors_hold() {
    init_tracing();
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.lock("stale").unwrap().with_owner(1);

    // dropped
    let g1 = lock.lock_with_lease(Duration::from_millis(200)).await.unwrap();
    eventually(Duration::from_secs(2), "the lease expired in Redis", || {
        let mut raw = raw.clone();
        async move { !key_exists(&mut raw, "stale").await }
    })
    .await;
    assert_eq!(g1.state(), LeaseState::Lost(LostReason::LeaseExpired));
    let field = g1.field().to_owned();
    drop(g1);
    let g2 = lock.lock().await.unwrap();
    eventually(Duration::from_secs(2), "no release is queued", || {
        let c = client.clone();
        async move { c.stats().queued_releases == 0 }
    })
    .await;
    assert_eq!(g2.state(), LeaseState::Held);
    assert_eq!(
        hget(&mut raw, "stale", &field).await.as_deref(),
        Some("1"),
        "the successor's hold is intact"
    );
    let other = client.lock("stale").unwrap().with_owner(2);
    assert!(
        other.try_lock().await.unwrap().is_none(),
        "another owner cannot get in"
    );

    // unlocked
    let g3 = client
        .lock("stale2")
        .unwrap()
        .with_owner(1)
        .lock_with_lease(Duration::from_millis(200))
        .await
        .unwrap();
    eventually(Duration::from_secs(2), "the lease expired in Redis", || {
        let mut raw = raw.clone();
        async move { !key_exists(&mut raw, "stale2").await }
    })
    .await;
    let g4 = client.lock("stale2").unwrap().with_owner(1).lock().await.unwrap();
    assert!(
        matches!(g3.unlock().await, Err(Error::NotHeld { .. })),
        "a lost guard's unlock is NotHeld"
    );
    assert_eq!(hget(&mut raw, "stale2", g4.field()).await.as_deref(), Some("1"));

    // `loop { lock.run(..) }` after Error::Lost: the next round's hold is not taken away
    let rounds = client.lock("stale3").unwrap().with_owner(3);
    let forcer = client.lock("stale3").unwrap();
    let first = rounds
        .run(async {
            forcer.force_unlock().await.unwrap();
            std::future::pending::<()>().await
        })
        .await;
    assert!(
        matches!(
            first,
            Err(Error::Lost {
                reason: LostReason::ForceUnlocked,
                ..
            })
        ),
        "{first:?}"
    );
    let g5 = rounds.lock().await.unwrap();
    eventually(Duration::from_secs(2), "no release is queued", || {
        let c = client.clone();
        async move { c.stats().queued_releases == 0 }
    })
    .await;
    assert_eq!(hget(&mut raw, "stale3", g5.field()).await.as_deref(), Some("1"));
    assert_eq!(g5.unlock().await.unwrap(), Unlocked::Released);
    drop(g2);
}

/// Item 2: two futures of one task exclude each other (tokio::sync::Mutex semantics).
#[tokio::test]
async fn two_futures_of_one_task_never_hold_at_once() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let lock = client.lock("joined").unwrap();
    let inside = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let body = || {
        let (inside, most) = (inside.clone(), most.clone());
        async move {
            let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(n, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(50)).await;
            inside.fetch_sub(1, Ordering::SeqCst);
        }
    };
    let (a, b) = tokio::join!(lock.run(body()), lock.run(body()));
    a.unwrap();
    b.unwrap();
    assert_eq!(most.load(Ordering::SeqCst), 1, "join!: the two bodies overlapped");

    // FuturesUnordered of plain lock()/unlock()
    use futures::stream::{FuturesUnordered, StreamExt};
    let mut all: FuturesUnordered<_> = (0..4)
        .map(|_| {
            let (lock, body) = (lock.clone(), body());
            async move {
                let g = lock.lock().await.unwrap();
                body.await;
                g.unlock().await.unwrap()
            }
        })
        .collect();
    while let Some(u) = all.next().await {
        assert_eq!(u, Unlocked::Released, "each acquisition is its own hold");
    }
    assert_eq!(
        most.load(Ordering::SeqCst),
        1,
        "FuturesUnordered: bodies overlapped"
    );

    // select!: the loser is cancelled; the winner holds alone
    let g = lock.lock().await.unwrap();
    tokio::select! {
        _ = lock.lock() => panic!("a second lock() in the same task got in while the first guard lives"),
        _ = tokio::time::sleep(Duration::from_millis(300)) => {}
    }
    // a nested lock() in one task waits for the first guard (it does not re-enter)...
    let nested = tokio::time::timeout(Duration::from_millis(300), lock.lock()).await;
    assert!(nested.is_err(), "a nested lock() waits like tokio::sync::Mutex");
    // ...re-entry is explicit
    let again = g.reenter().await.unwrap();
    assert_eq!(again.unlock().await.unwrap(), Unlocked::Partial);
    assert_eq!(g.unlock().await.unwrap(), Unlocked::Released);

    // an owner scope makes nested acquisitions re-enter, as in one Java thread
    let scoped = OwnerId::fresh()
        .scope(async {
            let a = lock.lock().await.unwrap();
            let b = lock.lock().await.unwrap();
            let n = lock.hold_count().await.unwrap();
            (b.unlock().await.unwrap(), a.unlock().await.unwrap(), n)
        })
        .await;
    assert_eq!(scoped, (Unlocked::Partial, Unlocked::Released, 2));
}

/// Item 2, the body of a runtime's `block_on` (what `#[tokio::main]` runs) is not a task.
#[test]
fn two_futures_in_block_on_never_hold_at_once() {
    let s = RedisServer::start();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = s.client(Config::default()).await;
        let lock = client.lock("main").unwrap();
        let first = lock.lock().await.unwrap();
        let second = tokio::time::timeout(Duration::from_millis(300), lock.lock()).await;
        assert!(second.is_err(), "the main future's second lock() must wait");
        first.unlock().await.unwrap();
    });
}

/// Item 3: a short leased re-entry released at once does not let the key expire under the
/// owner's watchdog hold.
#[tokio::test]
async fn a_mixed_reentry_keeps_the_key_alive_for_the_longest_hold() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.lock("mixed").unwrap().with_owner(1);
    let a = lock.lock().await.unwrap();
    let b = lock.lock_with_lease(Duration::from_millis(300)).await.unwrap();
    assert_eq!(b.unlock().await.unwrap(), Unlocked::Partial);
    // the 300 ms lease must not have become the key's TTL: let it pass
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(
        key_exists(&mut raw, "mixed").await,
        "the key expired under a live watchdog hold"
    );
    let ttl: i64 = raw.pttl("mixed").await.unwrap();
    assert!(ttl > 25_000, "TTL {ttl}: the watchdog hold needs 30 s");
    assert!(a.is_held());
    let other = client.lock("mixed").unwrap().with_owner(2);
    assert!(other.try_lock().await.unwrap().is_none());
    assert_eq!(a.unlock().await.unwrap(), Unlocked::Released);
}

/// Item 4: an acquire whose reply times out (Redis busy) is settled, not re-sent: one guard is
/// one hold, and its unlock releases the lock. Settled through the owner's field (a fresh
/// owner, the default) ...
#[tokio::test]
async fn an_ambiguous_acquire_counts_once() {
    ambiguous_acquire_counts_once(None).await;
}

/// ... and through the attempt's latch (a pinned owner, which may hold the lock already).
#[tokio::test]
async fn an_ambiguous_acquire_of_a_pinned_owner_counts_once() {
    ambiguous_acquire_counts_once(Some(OwnerId::from(7))).await;
}

async fn ambiguous_acquire_counts_once(owner: Option<OwnerId>) {
    init_tracing();
    let s = RedisServer::start();
    let config = Config::default()
        .with_command_timeout(Duration::from_millis(300))
        .with_retry_interval(Duration::from_millis(100));
    let client = s.client(config).await;
    let mut raw = s.conn().await;
    let lock = client.lock("ambiguous").unwrap();
    let lock = match owner {
        Some(o) => lock.with_owner(o),
        None => lock,
    };
    // load the scripts first (a NOSCRIPT reply is not ambiguous: nothing ran)
    lock.lock().await.unwrap().unlock().await.unwrap();
    let busy = busy(&s, 1_500).await;
    let g = lock.lock().await.unwrap();
    busy.await.unwrap();
    let count = hget(&mut raw, "ambiguous", g.field()).await;
    assert_eq!(count.as_deref(), Some("1"), "one guard = one hold");
    let fields: Vec<String> = raw.hkeys("ambiguous").await.unwrap();
    assert_eq!(
        fields,
        vec![g.field().to_owned()],
        "no hold of a gave-up attempt is left"
    );
    assert_eq!(g.unlock().await.unwrap(), Unlocked::Released);
    eventually(Duration::from_secs(5), "nothing is left in Redis", || {
        let mut raw = raw.clone();
        async move { !key_exists(&mut raw, "ambiguous").await }
    })
    .await;
    eventually(Duration::from_secs(5), "every attempt was settled", || {
        let c = client.clone();
        async move { c.stats().holds == 0 && c.stats().queued_releases == 0 }
    })
    .await;
}

/// Item 5: absurd durations are rejected before anything is sent; none panics.
#[tokio::test]
async fn absurd_durations_are_rejected_and_change_nothing() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.lock("huge").unwrap();
    for lease in [
        Duration::from_millis(u64::MAX - 1),
        Duration::from_millis(i64::MAX as u64),
        Duration::MAX,
        redisson_lock::MAX_DURATION + Duration::from_millis(1),
    ] {
        assert!(
            matches!(lock.lock_with_lease(lease).await, Err(Error::InvalidArgument(_))),
            "{lease:?}"
        );
        assert!(matches!(
            lock.try_lock_with_lease(Duration::from_secs(1), lease).await,
            Err(Error::InvalidArgument(_))
        ));
        assert!(
            !key_exists(&mut raw, "huge").await,
            "a rejected call changed Redis ({lease:?})"
        );
    }
    // the largest accepted lease works and has a TTL
    let g = lock.lock_with_lease(redisson_lock::MAX_DURATION).await.unwrap();
    let ttl: i64 = raw.pttl("huge").await.unwrap();
    assert!(ttl > 0, "PTTL {ttl}");
    assert_eq!(g.unlock().await.unwrap(), Unlocked::Released);
    // an endless wait is fine
    let g = lock.try_lock_for(Duration::MAX).await.unwrap().unwrap();
    g.unlock().await.unwrap();

    for bad in [
        Config::default().with_command_timeout(Duration::MAX),
        Config::default().with_connect_timeout(Duration::MAX),
        Config::default().with_lock_watchdog_timeout(Duration::from_millis(u64::MAX)),
        Config::default().with_poll_interval(Duration::MAX),
        Config::default().with_subscription_timeout(Duration::MAX),
        Config::default().with_retry_interval(Duration::MAX),
        Config::default().with_command_timeout(Duration::ZERO),
    ] {
        let built = Client::builder().url(s.url()).config(bad.clone()).build().await;
        assert!(matches!(built, Err(Error::InvalidArgument(_))), "{bad:?}");
    }
}

/// Item 6: one key of another type in a renewal batch costs only its own hold.
#[tokio::test]
async fn one_bad_key_does_not_stop_renewal_of_the_others() {
    let s = RedisServer::start();
    let client = s
        .client(Config::default().with_lock_watchdog_timeout(Duration::from_millis(600)))
        .await;
    let mut raw = s.conn().await;
    let mut guards = Vec::new();
    for i in 0..5 {
        guards.push(client.lock(&format!("batch:{i}")).unwrap().lock().await.unwrap());
    }
    let _: () = redis::pipe()
        .del("batch:2")
        .set("batch:2", "not a lock")
        .query_async(&mut raw)
        .await
        .unwrap();
    let reason = tokio::time::timeout(Duration::from_secs(5), guards[2].lost())
        .await
        .expect("the poisoned hold is reported lost");
    assert_eq!(reason, LostReason::OwnerGone);
    // several TTLs (600 ms) go by: the healthy locks must have been renewed meanwhile
    tokio::time::sleep(Duration::from_millis(1_800)).await;
    for i in [0, 1, 3, 4] {
        assert!(
            key_exists(&mut raw, &format!("batch:{i}")).await,
            "batch:{i} expired"
        );
        assert!(guards[i].is_held(), "batch:{i} guard");
    }
    let v: String = raw.get("batch:2").await.unwrap();
    assert_eq!(v, "not a lock", "the foreign key is untouched");
    for (i, g) in guards.into_iter().enumerate() {
        let r = g.unlock().await;
        if i == 2 {
            assert!(matches!(r, Err(Error::NotHeld { .. })));
        } else {
            assert_eq!(r.unwrap(), Unlocked::Released);
        }
    }
}

/// Item 8: `lock()` against a Redis that stays down gives up after the configured retries.
#[tokio::test]
async fn lock_against_a_dead_redis_gives_up() {
    let mut s = RedisServer::start();
    let config = Config::default()
        .with_command_timeout(Duration::from_millis(200))
        .with_retry_attempts(2)
        .with_retry_interval(Duration::from_millis(100));
    let client = s.client(config).await;
    let lock = client.lock("down").unwrap();
    s.kill();
    let started = Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(20), lock.lock())
        .await
        .expect("lock() against a dead Redis must not wait forever");
    assert!(r.is_err(), "{r:?}");
    assert!(r.unwrap_err().is_transient());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

/// Item 9: dropping the blocking client (and its guards) inside async code never panics, and
/// the queued release still happens.
#[test]
fn blocking_client_and_guards_drop_inside_a_runtime() {
    let s = RedisServer::start();
    let client = redisson_lock::blocking::Client::connect(&s.url()).unwrap();
    let guard = client.lock("blocking-drop").unwrap().lock().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        drop(guard);
        drop(client); // the last handle: its runtime shuts down on a thread of its own
        let mut raw = s.conn().await;
        eventually(
            Duration::from_secs(5),
            "the dropped guard's lock is released",
            || {
                let mut raw = raw.clone();
                async move { !key_exists(&mut raw, "blocking-drop").await }
            },
        )
        .await;
        let _ = &mut raw;
    });
}

/// Item 10: the first read after a Redis restart does not fail with "broken pipe".
#[tokio::test]
async fn reads_survive_a_redis_restart() {
    let mut s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let lock = client.lock("restart").unwrap();
    assert!(!lock.is_locked().await.unwrap());
    s.restart();
    assert!(
        !lock.is_locked().await.unwrap(),
        "the first read after the restart"
    );
    assert_eq!(
        lock.remain_time_to_live().await.unwrap(),
        redisson_lock::Ttl::NotLocked
    );
}

/// Item 12: a graceful shutdown releases what dropped guards queued and what is still held.
#[tokio::test]
async fn shutdown_releases_everything_and_stops() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let dropped = client.lock("sd:dropped").unwrap().lock().await.unwrap();
    let live = client.lock("sd:live").unwrap().lock().await.unwrap();
    let leased = client
        .lock("sd:leased")
        .unwrap()
        .lock_with_lease(Duration::from_secs(60))
        .await
        .unwrap();
    drop(dropped);
    client.shutdown().await.unwrap();
    for k in ["sd:dropped", "sd:live", "sd:leased"] {
        assert!(
            !key_exists(&mut raw, k).await,
            "{k} is still locked after shutdown"
        );
    }
    assert_eq!(live.lost().await, LostReason::Shutdown);
    assert!(matches!(live.unlock().await, Err(Error::NotHeld { .. })));
    assert!(matches!(leased.unlock().await, Err(Error::NotHeld { .. })));
    assert_eq!(client.stats().renewing, 0);
    assert!(matches!(
        client.lock("sd:after").unwrap().lock().await,
        Err(Error::Shutdown)
    ));
    let latches: Vec<String> = raw.keys("redisson_unlock_latch:*").await.unwrap();
    assert!(latches.is_empty(), "latches left: {latches:?}");
    client.shutdown().await.unwrap(); // twice is fine
}

/// Item 4, at the script level: a connection layer that re-sends an acquire (redis-rs' cluster
/// client retries after a dropped connection) replays the first grant instead of counting it
/// twice, and an attempt settled as "never" stays cancelled; with the grant recorded in the
/// attempt's latch (a pinned owner: latch TTL > 0) and in the owner's field (an owner new to
/// the attempt: latch TTL 0, no latch written).
#[tokio::test]
async fn an_acquire_sent_twice_counts_once() {
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    let field = "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:1";
    let prelude = include_str!("../lua/common/attempt.lua");
    for (name, script) in [
        ("lock", include_str!("../lua/lock/acquire.lua")),
        ("write", include_str!("../lua/rw/write_acquire.lua")),
    ] {
        let script = format!("{prelude}\n{script}");
        for latch_ms in [10_000u64, 0] {
            let what = format!("{name}, latch TTL {latch_ms}");
            let _: () = redis::cmd("FLUSHALL").query_async(&mut raw).await.unwrap();
            let send = |latch: &'static str| {
                let mut c = redis::cmd("EVAL");
                c.arg(&script)
                    .arg(2)
                    .arg("twice")
                    .arg(latch)
                    .arg(30_000)
                    .arg(field)
                    .arg(latch_ms);
                c
            };
            let first: Vec<i64> = send("redisson_unlock_latch:{twice}:a")
                .query_async(&mut raw)
                .await
                .unwrap();
            let latch_written = key_exists(&mut raw, "redisson_unlock_latch:{twice}:a").await;
            assert_eq!(
                latch_written,
                latch_ms > 0,
                "{what}: the latch is the record only when asked"
            );
            let again: Vec<i64> = send("redisson_unlock_latch:{twice}:a")
                .query_async(&mut raw)
                .await
                .unwrap();
            assert_eq!((first, again), (vec![1, 1], vec![1, 1]), "{what}");
            let count: String = raw.hget("twice", field).await.unwrap();
            assert_eq!(count, "1", "{what}: the copy did not count");
            // settling asks the record where it is; a granted attempt reads as granted, twice
            let settle = |latch: &'static str| {
                let mut c = redis::cmd("EVAL");
                if latch_ms > 0 {
                    c.arg(include_str!("../lua/common/resolve_acquire.lua"))
                        .arg(1)
                        .arg(latch)
                        .arg(60_000);
                } else {
                    c.arg(include_str!("../lua/common/resolve_by_field.lua"))
                        .arg(2)
                        .arg(latch)
                        .arg("twice")
                        .arg(60_000)
                        .arg(field);
                }
                c
            };
            for _ in 0..2 {
                let granted: Vec<i64> = settle("redisson_unlock_latch:{twice}:a")
                    .query_async(&mut raw)
                    .await
                    .unwrap();
                assert_eq!(
                    granted,
                    vec![1, 1],
                    "{what}: the granted attempt settles as granted"
                );
            }
            // the granted hold released (its field, the record, gone with it), a copy of the
            // attempt still on its way changes nothing: settling marked the latch
            let _: () = raw.del("twice").await.unwrap();
            let late: Vec<i64> = send("redisson_unlock_latch:{twice}:a")
                .query_async(&mut raw)
                .await
                .unwrap();
            assert!(
                !key_exists(&mut raw, "twice").await,
                "{what}: a copy after the release took the lock again ({late:?})"
            );
            // an attempt settled as never-granted stays cancelled when its copy arrives later
            // (with the owner's field already there from the first attempt: a new attempt's
            // owner would be new, so this is the strictest case for the field record)
            let _: () = raw.del("twice").await.unwrap();
            let settled: Vec<i64> = settle("redisson_unlock_latch:{twice}:b")
                .query_async(&mut raw)
                .await
                .unwrap();
            assert_eq!(settled, vec![0, 0], "{what}");
            let late: Vec<i64> = send("redisson_unlock_latch:{twice}:b")
                .query_async(&mut raw)
                .await
                .unwrap();
            assert_eq!(late, vec![2, 0], "{what}");
            assert!(
                !key_exists(&mut raw, "twice").await,
                "{what}: the cancelled attempt changed nothing"
            );
            let again: Vec<i64> = settle("redisson_unlock_latch:{twice}:b")
                .query_async(&mut raw)
                .await
                .unwrap();
            assert_eq!(again, vec![0, 0], "{what}: asked again, the same answer");
        }
    }
}

/// An acquisition whose owner is new to it (the default) writes what Redisson's writes and no
/// more: the hash, no latch; a pinned owner's attempt records its grant in a latch, which the
/// client deletes after the reply.
#[tokio::test]
async fn a_fresh_owners_grant_writes_no_latch() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.lock("fresh").unwrap();
    lock.lock().await.unwrap().unlock().await.unwrap(); // scripts loaded
    let sets = common::command_calls(&mut raw, "set").await;
    let g = lock.lock().await.unwrap();
    assert_eq!(
        common::command_calls(&mut raw, "set").await,
        sets,
        "a fresh owner's acquire wrote a key besides the hash"
    );
    g.unlock().await.unwrap();
    let after_unlock = common::command_calls(&mut raw, "set").await;
    assert_eq!(
        after_unlock,
        sets + 1,
        "the unlock records its reply (Redisson's latch)"
    );
    let pinned = lock.with_owner(7);
    let g = pinned.lock().await.unwrap();
    assert_eq!(
        common::command_calls(&mut raw, "set").await,
        after_unlock + 1,
        "a pinned owner's acquire records its grant in a latch"
    );
    g.unlock().await.unwrap();
    // the client deletes the pinned attempt's latch and both unlocks' latches after the replies
    common::latches_deleted(&s).await;
}

/// A hold that ended on its own (its lease ran out; nobody unlocked it) leaves nothing in the
/// client once its guard is dropped: neither when the guard noticed the loss first nor when the
/// drop is the first to look. (A record of an epoch ended this way must not stay in the hold
/// table: that would leak one record per expired lease.)
#[tokio::test]
async fn an_expired_lease_leaves_no_record_behind() {
    let s = RedisServer::start();
    // a long watchdog period: its sweep must not be what cleans up here
    let client = s
        .client(Config::default().with_lock_watchdog_timeout(Duration::from_secs(60)))
        .await;
    for noticed_first in [true, false] {
        let name = format!("expiring-{noticed_first}");
        let g = client
            .lock(&name)
            .unwrap()
            .lock_with_lease(Duration::from_millis(200))
            .await
            .unwrap();
        assert_eq!(client.stats().holds, 1);
        if noticed_first {
            assert_eq!(g.lost().await, LostReason::LeaseExpired);
        } else {
            let raw = s.conn().await;
            eventually(Duration::from_secs(5), "the lease expired in Redis", || {
                let mut raw = raw.clone();
                let name = name.clone();
                async move { !key_exists(&mut raw, &name).await }
            })
            .await;
        }
        drop(g);
        assert_eq!(
            client.stats().holds,
            0,
            "the ended hold's record is gone as soon as its guard is (noticed first: {noticed_first})"
        );
    }
}

/// A guard of an expired lease that is never dropped (forgotten, or parked in a long-lived
/// struct) does not pin its record either: the watchdog's round sweeps ended records.
#[tokio::test]
async fn the_watchdog_sweeps_records_of_ended_holds() {
    let s = RedisServer::start();
    let client = s
        .client(Config::default().with_lock_watchdog_timeout(Duration::from_millis(900)))
        .await;
    let g = client
        .lock("swept")
        .unwrap()
        .lock_with_lease(Duration::from_millis(100))
        .await
        .unwrap();
    assert_eq!(g.lost().await, LostReason::LeaseExpired);
    eventually(Duration::from_secs(5), "the ended record was swept", || {
        let c = client.clone();
        async move { c.stats().holds == 0 }
    })
    .await;
    assert_eq!(g.state(), LeaseState::Lost(LostReason::LeaseExpired));
    assert!(matches!(g.unlock().await, Err(Error::NotHeld { .. })));
}

/// Two acquisitions of one owner while Redis is paused: the second waits for the owner's turn
/// (the first's request is in flight, then being settled) only as long as its wait plus one
/// command timeout, adds no hold, and the first ends with exactly one hold in Redis.
#[tokio::test]
async fn a_second_acquire_of_one_owner_waits_for_the_turn_only_within_its_budget() {
    init_tracing();
    let s = RedisServer::start();
    let config = Config::default()
        .with_command_timeout(Duration::from_millis(300))
        .with_retry_interval(Duration::from_millis(100));
    let client = s.client(config).await;
    let mut raw = s.conn().await;
    let lock = client.lock("one-owner-turn").unwrap().with_owner(7);
    // load the scripts first (a NOSCRIPT reply is not ambiguous: nothing ran)
    lock.lock().await.unwrap().unlock().await.unwrap();
    let busy = busy(&s, 3_000).await;
    let first = {
        let lock = lock.clone();
        tokio::spawn(async move { lock.lock().await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await; // the first one's request is sent
    let started = Instant::now();
    let second = lock.try_lock_for(Duration::from_millis(200)).await;
    let took = started.elapsed();
    assert!(
        matches!(second, Err(Error::CommandTimeout(_))),
        "the owner's turn stayed taken: a timeout, not a grant or a refusal ({second:?})"
    );
    assert!(
        took < Duration::from_millis(2_500),
        "bounded by the wait + one command timeout, not by the pause ({took:?})"
    );
    busy.await.unwrap();
    let g = tokio::time::timeout(Duration::from_secs(10), first)
        .await
        .expect("the first acquisition ends once Redis answers")
        .unwrap()
        .expect("granted");
    let count = hget(&mut raw, "one-owner-turn", g.field()).await;
    assert_eq!(count.as_deref(), Some("1"), "only the first acquisition holds");
    assert_eq!(g.unlock().await.unwrap(), Unlocked::Released);
    eventually(Duration::from_secs(5), "nothing is left in Redis", || {
        let mut raw = raw.clone();
        async move { !key_exists(&mut raw, "one-owner-turn").await }
    })
    .await;
    eventually(Duration::from_secs(5), "every attempt was settled", || {
        let c = client.clone();
        async move { c.stats().holds == 0 && c.stats().queued_releases == 0 }
    })
    .await;
}
