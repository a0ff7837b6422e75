//! RFairLock against a real redis-server: FIFO order, cancelled and timed-out waiters leaving the
//! queue, the wire shape (queue, deadlines, per-waiter channel), and the meaning of Redisson's
//! RedissonFairLockTest cases that apply (case by case in `tests/REDISSON-CHECKLIST.md`).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{eventually, key_exists, RawSubscriber, RedisServer};
use parking_lot::Mutex;
use redis::AsyncCommands;
use redisson_lock::{Config, Error, Unlocked};

async fn queue(raw: &mut redis::aio::MultiplexedConnection, name: &str) -> Vec<String> {
    raw.lrange(format!("redisson_lock_queue:{{{name}}}"), 0, -1)
        .await
        .unwrap()
}

async fn deadlines(raw: &mut redis::aio::MultiplexedConnection, name: &str) -> Vec<(String, f64)> {
    raw.zrange_withscores(format!("redisson_lock_timeout:{{{name}}}"), 0, -1)
        .await
        .unwrap()
}

fn epoch_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as f64
}

async fn wait_queue_len(raw: &redis::aio::MultiplexedConnection, name: &str, n: usize) {
    eventually(
        Duration::from_secs(10),
        &format!("{n} waiters queued on {name}"),
        || {
            let mut raw = raw.clone();
            let name = name.to_owned();
            async move { queue(&mut raw, &name).await.len() == n }
        },
    )
    .await;
}

/// testConcurrency_MultiInstance_Ordering / testLeaseTimeout: waiters get the lock in the order
/// they queued up, across clients.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiters_are_served_in_arrival_order() {
    let s = RedisServer::start();
    let clients = [
        s.client(Config::default()).await,
        s.client(Config::default()).await,
    ];
    let raw = s.conn().await;
    let holder = clients[0].fair_lock("fifo").unwrap().lock().await.unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for i in 0..8 {
        let lock = clients[i % 2].fair_lock("fifo").unwrap();
        let order = order.clone();
        tasks.push(tokio::spawn(async move {
            let g = lock.lock().await.unwrap();
            order.lock().push(i);
            tokio::time::sleep(Duration::from_millis(10)).await;
            g.unlock().await.unwrap();
        }));
        wait_queue_len(&raw, "fifo", i + 1).await;
    }
    holder.unlock().await.unwrap();
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(20), t)
            .await
            .unwrap()
            .unwrap();
    }
    assert_eq!(*order.lock(), (0..8).collect::<Vec<_>>(), "FIFO");
    let mut raw = raw;
    assert!(queue(&mut raw, "fifo").await.is_empty());
    assert!(deadlines(&mut raw, "fifo").await.is_empty());
}

/// The wire shape: queue entries are owner fields, deadlines are epoch ms (predecessor's deadline
/// + wait), the unlock wakes only the head on its own channel.
#[tokio::test]
async fn queue_deadlines_and_the_head_waiters_channel() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.fair_lock("shape").unwrap();
    let holder = lock.lock_with_lease(Duration::from_secs(20)).await.unwrap();
    let a = lock.with_owner(1);
    let b = lock.with_owner(2);
    let fa = a.field().unwrap();
    let fb = b.field().unwrap();
    let mut sub_a = RawSubscriber::new(&s.url(), &format!("redisson_lock__channel:{{shape}}:{fa}")).await;
    let mut sub_b = RawSubscriber::new(&s.url(), &format!("redisson_lock__channel:{{shape}}:{fb}")).await;
    let wait = Duration::from_secs(10);
    let ta = tokio::spawn(async move { a.try_lock_for(wait).await });
    wait_queue_len(&raw, "shape", 1).await;
    let tb = tokio::spawn(async move { b.try_lock_for(wait).await });
    wait_queue_len(&raw, "shape", 2).await;
    assert_eq!(queue(&mut raw, "shape").await, vec![fa.clone(), fb.clone()]);
    let d = deadlines(&mut raw, "shape").await;
    let now = epoch_ms();
    // A: the lock's TTL (~20 s) + its wait (10 s); B: A's deadline + 10 s
    assert_eq!(d[0].0, fa);
    assert!(
        (now + 28_000.0..now + 30_500.0).contains(&d[0].1),
        "{d:?} now {now}"
    );
    assert!((d[1].1 - d[0].1 - 10_000.0).abs() < 50.0, "{d:?}");
    holder.unlock().await.unwrap();
    assert_eq!(
        sub_a.drain(&s).await,
        vec!["0"],
        "the head is woken on its own channel"
    );
    let ga = ta.await.unwrap().unwrap().expect("A is next");
    assert!(sub_b.drain(&s).await.is_empty(), "the others are not");
    // the head took it: it left the queue, and B got A's wait back
    assert_eq!(queue(&mut raw, "shape").await, vec![fb.clone()]);
    let d2 = deadlines(&mut raw, "shape").await;
    assert!((d2[0].1 - (d[1].1 - 10_000.0)).abs() < 1.0, "{d2:?} vs {d:?}");
    ga.unlock().await.unwrap();
    let gb = tb.await.unwrap().unwrap().expect("B is next");
    gb.unlock().await.unwrap();
    assert!(!key_exists(&mut raw, "shape").await);
}

/// A timed-out waiter leaves the queue before its call returns (Redisson's acquireFailed), and a
/// waiter behind it moves up.
#[tokio::test]
async fn a_timed_out_waiter_leaves_the_queue() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.fair_lock("timeout").unwrap();
    let holder = lock.lock().await.unwrap();
    let start = Instant::now();
    assert!(lock
        .try_lock_for(Duration::from_millis(300))
        .await
        .unwrap()
        .is_none());
    let took = start.elapsed();
    assert!(
        (Duration::from_millis(290)..Duration::from_millis(1_500)).contains(&took),
        "{took:?}"
    );
    assert!(queue(&mut raw, "timeout").await.is_empty(), "left the queue");
    assert!(deadlines(&mut raw, "timeout").await.is_empty());
    holder.unlock().await.unwrap();
}

/// 200 waiters, half of them cancelled (their futures dropped) at random: the cancelled ones
/// leave the queue at once, the others are served in order, nothing is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_waiters_leave_the_queue_at_once() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let raw = s.conn().await;
    let holder = client.fair_lock("cancel").unwrap().lock().await.unwrap();
    let served = Arc::new(Mutex::new(Vec::new()));
    let mut keep = Vec::new();
    let mut cancel = Vec::new();
    for i in 0..200usize {
        let lock = client.fair_lock("cancel").unwrap();
        let served = served.clone();
        let task = tokio::spawn(async move {
            let g = lock.lock().await.unwrap();
            served.lock().push(i);
            g.unlock().await.unwrap();
        });
        if rand_bit(i) {
            cancel.push(task);
        } else {
            keep.push((i, task));
        }
    }
    wait_queue_len(&raw, "cancel", 200).await;
    let started = Instant::now();
    for t in cancel {
        t.abort();
    }
    wait_queue_len(&raw, "cancel", keep.len()).await;
    let left_after = started.elapsed();
    holder.unlock().await.unwrap();
    let served_at = Instant::now();
    let kept: Vec<usize> = keep.iter().map(|(i, _)| *i).collect();
    for (_, t) in keep {
        tokio::time::timeout(Duration::from_secs(60), t)
            .await
            .unwrap()
            .unwrap();
    }
    let took = served_at.elapsed();
    // the tasks raced to queue up, so the order is theirs; what matters: exactly the waiters that
    // were not cancelled were served, each once
    let mut got = served.lock().clone();
    got.sort();
    assert_eq!(got, kept, "served exactly the waiters that were not cancelled");
    let mut raw = raw;
    assert!(queue(&mut raw, "cancel").await.is_empty());
    assert!(deadlines(&mut raw, "cancel").await.is_empty());
    eprintln!(
        "200 waiters, {} cancelled: the queue shrank in {left_after:?}; the {} others were served in {took:?}",
        200 - kept.len(),
        kept.len()
    );
    assert!(
        took < Duration::from_secs(30),
        "cancelled waiters held up the queue: {took:?}"
    );
}

fn rand_bit(i: usize) -> bool {
    // a fixed pseudo-random half (reproducible)
    (i.wrapping_mul(2_654_435_761) >> 7).is_multiple_of(2)
}

/// testTryLockNonDelayed: try_lock() works on a free lock; a contender's try_lock_for(200ms)
/// fails; then try_lock() succeeds again.
#[tokio::test]
async fn try_lock_without_queueing() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.fair_lock("nodelay").unwrap();
    let g = lock.try_lock().await.unwrap().expect("free");
    assert!(lock.try_lock().await.unwrap().is_none());
    assert!(
        queue(&mut raw, "nodelay").await.is_empty(),
        "a single attempt never queues"
    );
    assert!(lock
        .try_lock_for(Duration::from_millis(200))
        .await
        .unwrap()
        .is_none());
    g.unlock().await.unwrap();
    lock.try_lock()
        .await
        .unwrap()
        .expect("free again")
        .unlock()
        .await
        .unwrap();
}

/// testAbandonedTimeoutDrift: a waiter that died in the queue (its deadline passed) is skipped.
#[tokio::test]
async fn a_dead_waiter_is_purged_after_its_deadline() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let ghost = "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:99";
    let _: () = redis::pipe()
        .rpush("redisson_lock_queue:{ghost}", ghost)
        .zadd("redisson_lock_timeout:{ghost}", ghost, epoch_ms() + 300.0)
        .query_async(&mut raw)
        .await
        .unwrap();
    let lock = client.fair_lock("ghost").unwrap();
    assert!(
        lock.try_lock().await.unwrap().is_none(),
        "the ghost is ahead until its deadline"
    );
    let start = Instant::now();
    let g = lock.lock().await.unwrap();
    assert!(start.elapsed() < Duration::from_secs(3), "{:?}", start.elapsed());
    assert!(queue(&mut raw, "ghost").await.is_empty());
    g.unlock().await.unwrap();
}

/// A waiter queued behind a dead head while the lock is free does not spin: it backs off
/// (Redisson re-polls at once, hundreds of scripts a second, until the head's deadline), and
/// still gets the lock once the head's deadline has passed. Both fair kinds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_behind_a_dead_head_backs_off_instead_of_spinning() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    for (i, non_reentrant) in [false, true].into_iter().enumerate() {
        let name = format!("dead-head-{i}");
        let ghost = "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:99";
        let dead_for = 3_000.0;
        let placed = Instant::now();
        let _: () = redis::pipe()
            .rpush(format!("redisson_lock_queue:{{{name}}}"), ghost)
            .zadd(
                format!("redisson_lock_timeout:{{{name}}}"),
                ghost,
                epoch_ms() + dead_for,
            )
            .query_async(&mut raw)
            .await
            .unwrap();
        let before = common::script_calls(&mut raw).await;
        let waiter = {
            let client = client.clone();
            let name = name.clone();
            tokio::spawn(async move {
                let granted = if non_reentrant {
                    let g = client
                        .non_reentrant_fair_lock(&name)
                        .unwrap()
                        .lock()
                        .await
                        .unwrap();
                    let at = Instant::now();
                    g.unlock().await.unwrap();
                    at
                } else {
                    let g = client.fair_lock(&name).unwrap().lock().await.unwrap();
                    let at = Instant::now();
                    g.unlock().await.unwrap();
                    at
                };
                granted
            })
        };
        // a measurement window, not a wait for a condition: how often the waiter polls
        tokio::time::sleep(Duration::from_secs(2)).await;
        let calls = common::script_calls(&mut raw).await - before;
        assert!(
            calls <= 30,
            "{name}: {calls} scripts in 2 s behind a dead head (spinning)"
        );
        let granted = tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .expect("granted once the dead head's deadline passed")
            .unwrap();
        let after = granted.duration_since(placed);
        assert!(
            after >= Duration::from_millis(2_900),
            "{name}: granted {after:?} after the dead head was queued, before its 3 s deadline"
        );
        assert!(queue(&mut raw, &name).await.is_empty());
    }
}

/// A head waiter that leaves the queue while the lock is free (a Java `tryLock` whose wait ran
/// out: its give-up publishes nothing) does not leave the next waiter asleep until the head's
/// deadline: it gets the lock within about one poll interval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_behind_a_head_that_leaves_gets_the_lock_within_a_poll_interval() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let ghost = "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:98";
    let _: () = redis::pipe()
        .rpush("redisson_lock_queue:{leaving-head}", ghost)
        .zadd(
            "redisson_lock_timeout:{leaving-head}",
            ghost,
            epoch_ms() + 60_000.0,
        )
        .query_async(&mut raw)
        .await
        .unwrap();
    let waiter = {
        let client = client.clone();
        tokio::spawn(async move {
            let g = client.fair_lock("leaving-head").unwrap().lock().await.unwrap();
            g.unlock().await.unwrap();
        })
    };
    wait_queue_len(&raw, "leaving-head", 2).await;
    // let the waiter's back-off grow before the head leaves
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let _: () = redis::pipe()
        .lrem("redisson_lock_queue:{leaving-head}", 0, ghost)
        .zrem("redisson_lock_timeout:{leaving-head}", ghost)
        .query_async(&mut raw)
        .await
        .unwrap();
    let left = Instant::now();
    tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("the next waiter got the lock")
        .unwrap();
    assert!(
        left.elapsed() < Duration::from_millis(1_500),
        "the next waiter took {:?} (poll interval 1 s)",
        left.elapsed()
    );
}

/// An unlock of a fair lock whose key vanished: NotHeld (Redisson calls it a success), and the
/// head waiter is woken all the same.
#[tokio::test]
async fn an_unlock_after_the_lock_vanished_is_not_held_and_wakes_the_head() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.fair_lock("gone").unwrap();
    let g = lock.lock().await.unwrap();
    let w = lock.with_owner(5);
    let fw = w.field().unwrap();
    let waiter = tokio::spawn(async move { w.lock().await });
    wait_queue_len(&raw, "gone", 1).await;
    let mut sub = RawSubscriber::new(&s.url(), &format!("redisson_lock__channel:{{gone}}:{fw}")).await;
    let _: i64 = raw.del("gone").await.unwrap();
    assert!(matches!(g.unlock().await, Err(Error::NotHeld { .. })));
    assert_eq!(sub.drain(&s).await, vec!["0"]);
    let g2 = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(g2.unlock().await.unwrap(), Unlocked::Released);
}

/// The non-reentrant fair lock: the owner's second acquisition is AlreadyHeld, never queued.
#[tokio::test]
async fn the_non_reentrant_fair_lock_refuses_its_holder() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.non_reentrant_fair_lock("nrf").unwrap().with_owner(3);
    let g = lock.lock().await.unwrap();
    assert!(matches!(
        lock.try_lock_for(Duration::from_millis(200)).await,
        Err(Error::AlreadyHeld { .. })
    ));
    assert!(matches!(lock.lock().await, Err(Error::AlreadyHeld { .. })));
    assert!(
        queue(&mut raw, "nrf").await.is_empty(),
        "nothing queued, nothing left behind"
    );
    let count: String = raw.hget("nrf", g.field()).await.unwrap();
    assert_eq!(count, "1");
    g.unlock().await.unwrap();
}

/// The blocking facade: the owner is the thread, so one thread's nested lock() re-enters and
/// another thread queues behind it.
#[test]
fn the_blocking_fair_lock_queues_threads() {
    let s = RedisServer::start();
    let client = redisson_lock::blocking::Client::connect(&s.url()).unwrap();
    let lock = client.fair_lock("bfair").unwrap();
    let g = lock.lock().unwrap();
    let again = lock.lock().unwrap(); // the same thread re-enters
    assert_eq!(lock.hold_count().unwrap(), 2);
    let other = {
        let lock = lock.clone();
        std::thread::spawn(move || lock.try_lock_for(Duration::from_millis(300)).map(|g| g.is_some()))
    };
    assert!(
        !other.join().unwrap().unwrap(),
        "another thread waits in the queue, then gives up"
    );
    again.unlock().unwrap();
    g.unlock().unwrap();
    let nr = client.non_reentrant_fair_lock("bnrf").unwrap();
    let g = nr.lock().unwrap();
    assert!(matches!(nr.try_lock(), Err(Error::AlreadyHeld { .. })));
    g.unlock().unwrap();
}
