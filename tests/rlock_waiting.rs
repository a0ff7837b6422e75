//! What waiting for an RLock costs and survives, against real redis-server processes: name
//! mapping of keys and channels, a connection without pub/sub that polls, many clients, a release
//! whose message was lost, the cost of subscribed waiters, a killed pub/sub connection.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{eventually, server_subscribers, RawSubscriber, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{Client, Config};

#[tokio::test]
async fn name_mapper_prefixes_keys_and_channels() {
    let s = RedisServer::start();
    let client = s
        .client(Config::default().with_name_mapper(redisson_lock::NameMapper::prefix("app:")))
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
        .config(Config::default().with_poll_interval(Duration::from_millis(100)))
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
                .with_poll_interval(Duration::from_millis(300))
                .with_subscribed_poll_interval(Duration::from_secs(3600)),
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribed_waiters_cost_almost_nothing_while_they_wait() {
    // 50 waiters on 50 held locks: listening on their channels they sleep until the holders'
    // TTL (30 s, renewed) runs out; only the batched check of their keys runs, one call per
    // poll interval for all of them (it was one EVALSHA per waiter per poll interval).
    let s = RedisServer::start();
    let config = Config::default().with_poll_interval(Duration::from_millis(200));
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
    let before = common::command_calls(&mut raw, "evalsha").await;
    let window = Instant::now();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let calls = common::command_calls(&mut raw, "evalsha").await - before;
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
    let channel = "redisson_lock__channel:{killed-sub}";
    server_subscribers(&raw, channel, 1, "the waiter subscribed on the server").await;
    let killed: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("pubsub")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(killed >= 1, "the waiter's pub/sub connection was killed");
    server_subscribers(&raw, channel, 1, "re-subscribed on a new connection").await;
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
    let config = Config::default().with_poll_interval(Duration::from_secs(30)); // no batched check in the window
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
    server_subscribers(
        &raw,
        "redisson_lock__channel:{join}",
        1,
        "the first waiter subscribed on the server",
    )
    .await;
    let before = common::settled_script_calls(&mut raw).await;
    let l = waiter.lock("join").unwrap();
    let second = tokio::spawn(async move { l.lock().await.unwrap().unlock().await.unwrap() });
    eventually(
        Duration::from_secs(5),
        "the second waiter made its first attempt",
        || {
            let mut raw = raw.clone();
            async move { common::script_calls(&mut raw).await > before }
        },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let calls = common::script_calls(&mut raw).await - before;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_passed_back_and_forth_keeps_its_subscription() {
    // Two tasks of one client take turns: the one that re-queues right after the other took over
    // finds the channel still subscribed (the last user's leave lingers before UNSUBSCRIBE), so
    // the turns cost no SUBSCRIBE/UNSUBSCRIBE pair each.
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let before = common::command_calls(&mut raw, "subscribe").await;
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
    let subscribes = common::command_calls(&mut raw, "subscribe").await - before;
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
        .with_poll_interval(Duration::from_secs(3600))
        .with_subscribed_poll_interval(Duration::from_secs(3600));
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
    server_subscribers(
        &raw,
        "redisson_lock__channel:{lost-msg}",
        1,
        "the waiter subscribed on the server",
    )
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
