//! RReadWriteLock against real redis-server processes: exact Redis state after each step, and
//! Redisson's RedissonReadWriteLockTest cases ported in spirit.

mod common;

use std::time::{Duration, Instant};

use common::{eventually, RawSubscriber, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{Client, Config, Error, LostReason, Unlocked};

type Raw = redis::aio::MultiplexedConnection;

async fn client(s: &RedisServer) -> Client {
    Client::connect(&s.url()).await.expect("connect")
}

async fn hash(c: &mut Raw, key: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = c.hgetall(key).await.unwrap();
    v.sort();
    v
}

async fn pttl(c: &mut Raw, key: &str) -> i64 {
    c.pttl(key).await.unwrap()
}

fn tkey(lock: &str, field: &str, k: u32) -> String {
    format!("{{{lock}}}:{field}:rwlock_timeout:{k}")
}

#[tokio::test]
async fn read_lock_state_timeout_keys_and_release_message() {
    let s = RedisServer::start();
    let client = client(&s).await;
    let mut raw = s.conn().await;
    let mut sub = RawSubscriber::new(&s.url(), "redisson_rwlock:{rw}").await;
    let rw = client.read_write_lock("rw").unwrap();
    let read = rw.read_lock().with_owner(11);

    let g1 = read.lock().await.unwrap();
    let f = g1.field().to_owned();
    assert_eq!(f, format!("{}:{}", client.id(), read.owner().unwrap()));
    assert_eq!(
        hash(&mut raw, "rw").await,
        vec![(f.clone(), "1".into()), ("mode".into(), "read".into())]
    );
    let v: String = raw.get(tkey("rw", &f, 1)).await.unwrap();
    assert_eq!(v, "1");
    let t = pttl(&mut raw, &tkey("rw", &f, 1)).await;
    assert!((28_000..=30_000).contains(&t), "timeout key PTTL {t}");
    assert!((28_000..=30_000).contains(&pttl(&mut raw, "rw").await));

    let g2 = read.lock_with_lease(Duration::from_secs(10)).await.unwrap(); // re-entry, leased
    assert_eq!(
        hash(&mut raw, "rw").await,
        vec![(f.clone(), "2".into()), ("mode".into(), "read".into())]
    );
    let t2 = pttl(&mut raw, &tkey("rw", &f, 2)).await;
    assert!(
        (9_000..=10_000).contains(&t2),
        "the second hold's key has its own lease: {t2}"
    );
    assert!(
        pttl(&mut raw, "rw").await > 28_000,
        "read re-entry keeps the longest TTL"
    );

    assert_eq!(g2.unlock().await.unwrap(), Unlocked::Partial);
    assert_eq!(
        raw.exists::<_, i64>(tkey("rw", &f, 2)).await.unwrap(),
        0,
        "the newest hold's key goes"
    );
    assert_eq!(raw.exists::<_, i64>(tkey("rw", &f, 1)).await.unwrap(), 1);
    assert!(sub.drain(&s).await.is_empty());

    assert_eq!(g1.unlock().await.unwrap(), Unlocked::Released);
    assert_eq!(raw.exists::<_, i64>("rw").await.unwrap(), 0);
    assert_eq!(raw.exists::<_, i64>(tkey("rw", &f, 1)).await.unwrap(), 0);
    assert_eq!(sub.drain(&s).await, vec!["0"], "read unlock publishes 0");
}

#[tokio::test]
async fn write_lock_state_reentry_adds_ttl_and_release_publishes_one() {
    let s = RedisServer::start();
    let client = client(&s).await;
    let mut raw = s.conn().await;
    let mut sub = RawSubscriber::new(&s.url(), "redisson_rwlock:{w}").await;
    let write = client.read_write_lock("w").unwrap().write_lock().with_owner(12);
    let g1 = write.lock_with_lease(Duration::from_secs(10)).await.unwrap();
    let wf = format!("{}:{}:write", client.id(), write.owner().unwrap());
    assert_eq!(g1.field(), wf);
    assert_eq!(
        hash(&mut raw, "w").await,
        vec![(wf.clone(), "1".into()), ("mode".into(), "write".into())]
    );
    let g2 = write.lock_with_lease(Duration::from_secs(5)).await.unwrap();
    let t = pttl(&mut raw, "w").await;
    assert!(
        (14_000..=15_000).contains(&t),
        "write re-entry adds the lease to the TTL: {t}"
    );
    // Redisson testWriteLockExpiration: another owner still cannot get in
    assert!(write
        .with_owner(99)
        .try_lock_for(Duration::from_millis(300))
        .await
        .unwrap()
        .is_none());
    assert_eq!(write.hold_count().await.unwrap(), 2);
    g2.unlock().await.unwrap();
    assert!(sub.drain(&s).await.is_empty());
    g1.unlock().await.unwrap();
    assert_eq!(sub.drain(&s).await, vec!["1"], "write unlock publishes 1");
    assert_eq!(raw.exists::<_, i64>("w").await.unwrap(), 0);
}

#[tokio::test]
async fn many_readers_share_and_block_the_writer() {
    let s = RedisServer::start();
    let client = client(&s).await;
    let rw = client.read_write_lock("multi-read").unwrap();
    let mut guards = Vec::new();
    for i in 0..10u64 {
        guards.push(
            rw.read_lock()
                .with_owner(i)
                .try_lock()
                .await
                .unwrap()
                .expect("readers share"),
        );
    }
    let writer = rw.write_lock().with_owner(100);
    assert!(writer.try_lock().await.unwrap().is_none());
    assert!(rw.read_lock().is_locked().await.unwrap());
    assert!(!rw.write_lock().is_locked().await.unwrap());
    let last = guards.pop().unwrap();
    for g in guards {
        assert_eq!(
            g.unlock().await.unwrap(),
            Unlocked::Released,
            "each owner's only hold is released (the others still read)"
        );
    }
    assert!(writer.try_lock().await.unwrap().is_none(), "one reader left");
    assert_eq!(last.unlock().await.unwrap(), Unlocked::Released);
    let w = writer.try_lock().await.unwrap().expect("free now");
    assert!(
        rw.read_lock().with_owner(5).try_lock().await.unwrap().is_none(),
        "the writer excludes readers"
    );
    w.unlock().await.unwrap();
}

#[tokio::test]
async fn writer_may_read_then_release_write_leaving_read_mode() {
    // Redisson testWR / testWriteReadReentrancy / testReadLockIsLocked
    let s = RedisServer::start();
    let client = client(&s).await;
    let mut raw = s.conn().await;
    let rw = client.read_write_lock("wr").unwrap();
    let w = rw.write_lock().lock().await.unwrap();
    assert!(
        !rw.read_lock().is_locked().await.unwrap(),
        "write mode without readers"
    );
    assert!(
        rw.read_lock().with_owner(77).try_lock().await.unwrap().is_none(),
        "others may not read"
    );
    let r = rw
        .read_lock()
        .with_owner(w.owner())
        .try_lock()
        .await
        .unwrap()
        .expect("the writer may read");
    assert!(
        rw.read_lock().is_locked().await.unwrap(),
        "write mode with a reader counts as read-locked"
    );
    assert_eq!(w.unlock().await.unwrap(), Unlocked::Released);
    let mode: String = raw.hget("wr", "mode").await.unwrap();
    assert_eq!(mode, "read", "releasing the write leaves read mode");
    assert!(rw.write_lock().with_owner(77).try_lock().await.unwrap().is_none());
    let other = rw
        .read_lock()
        .with_owner(77)
        .try_lock()
        .await
        .unwrap()
        .expect("other readers get in now");
    other.unlock().await.unwrap();
    r.unlock().await.unwrap();
    assert_eq!(raw.exists::<_, i64>("wr").await.unwrap(), 0);
}

#[tokio::test]
async fn downgrade_keeps_others_out_in_between() {
    let s = RedisServer::start();
    let client = client(&s).await;
    let mut raw = s.conn().await;
    let rw = client.read_write_lock("down").unwrap();
    let w = rw
        .write_lock()
        .lock_with_lease(Duration::from_secs(20))
        .await
        .unwrap();
    let field = w.field().trim_end_matches(":write").to_owned();
    let r = w.downgrade().await.unwrap();
    assert_eq!(r.field(), field);
    assert_eq!(r.lease(), Some(Duration::from_secs(20)));
    assert_eq!(
        hash(&mut raw, "down").await,
        vec![(field.clone(), "1".into()), ("mode".into(), "read".into())]
    );
    assert!(!rw.write_lock().is_locked().await.unwrap());
    assert!(rw.write_lock().with_owner(5).try_lock().await.unwrap().is_none());
    let r2 = rw
        .read_lock()
        .with_owner(5)
        .try_lock()
        .await
        .unwrap()
        .expect("readers share after the downgrade");
    r2.unlock().await.unwrap();
    r.unlock().await.unwrap();
    assert_eq!(raw.exists::<_, i64>("down").await.unwrap(), 0);
}

#[tokio::test]
async fn upgrade_is_refused_instead_of_hanging() {
    let s = RedisServer::start();
    let client = client(&s).await;
    let mut raw = s.conn().await;
    let rw = client.read_write_lock("up").unwrap().with_owner(4);
    let r = rw.read_lock().lock().await.unwrap();
    let before = hash(&mut raw, "up").await;
    let start = Instant::now();
    let err = rw.write_lock().lock().await.unwrap_err();
    assert!(matches!(err, Error::WouldDeadlock { .. }), "{err:?}");
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(matches!(
        rw.write_lock().try_lock().await,
        Err(Error::WouldDeadlock { .. })
    ));
    assert_eq!(hash(&mut raw, "up").await, before, "nothing changed");
    r.unlock().await.unwrap();
    rw.write_lock()
        .try_lock()
        .await
        .unwrap()
        .expect("free after the read unlock")
        .unlock()
        .await
        .unwrap();
}

#[tokio::test]
async fn hold_counts_of_both_kinds() {
    let s = RedisServer::start();
    let client = client(&s).await;
    let rw = client.read_write_lock("holds").unwrap().with_owner(4);
    let (read, write) = (rw.read_lock(), rw.write_lock());
    assert_eq!(read.hold_count().await.unwrap(), 0);
    let r1 = read.lock().await.unwrap();
    assert_eq!(read.hold_count().await.unwrap(), 1);
    assert!(read.is_held().await.unwrap());
    assert!(!read.with_owner(3).is_held().await.unwrap());
    let r2 = read.lock().await.unwrap();
    assert_eq!(read.hold_count().await.unwrap(), 2);
    assert_eq!(write.hold_count().await.unwrap(), 0);
    r2.unlock().await.unwrap();
    r1.unlock().await.unwrap();
    assert_eq!(read.hold_count().await.unwrap(), 0);
    let w1 = write.lock().await.unwrap();
    let w2 = write.lock().await.unwrap();
    assert_eq!(write.hold_count().await.unwrap(), 2);
    assert_eq!(read.hold_count().await.unwrap(), 0);
    assert!(write.is_held().await.unwrap());
    w2.unlock().await.unwrap();
    assert_eq!(write.hold_count().await.unwrap(), 1);
    w1.unlock().await.unwrap();
    assert_eq!(write.hold_count().await.unwrap(), 0);
    assert!(matches!(read.unlock().await, Err(Error::NotHeld { .. })));
    assert!(matches!(write.unlock().await, Err(Error::NotHeld { .. })));
}

#[tokio::test]
async fn read_unlock_shrinks_the_ttl_to_the_longest_remaining_hold() {
    // Redisson testReadLockLeaseTimeout, scaled down
    let s = RedisServer::start();
    let client = client(&s).await;
    let mut raw = s.conn().await;
    let rw = client.read_write_lock("shrink").unwrap();
    let a = rw
        .read_lock()
        .with_owner(1)
        .lock_with_lease(Duration::from_millis(1500))
        .await
        .unwrap();
    let b = rw
        .read_lock()
        .with_owner(2)
        .lock_with_lease(Duration::from_secs(20))
        .await
        .unwrap();
    assert!(
        pttl(&mut raw, "shrink").await > 19_000,
        "the hash lives as long as its longest hold"
    );
    b.unlock().await.unwrap();
    let t = pttl(&mut raw, "shrink").await;
    assert!(
        t > 0 && t <= 1_500,
        "after b's unlock only a's hold (1.5 s) counts: {t}"
    );
    let start = Instant::now();
    let w = rw
        .write_lock()
        .with_owner(3)
        .try_lock_for(Duration::from_secs(5))
        .await
        .unwrap()
        .expect("writer gets in");
    let waited = start.elapsed();
    assert!(waited < Duration::from_millis(2500), "{waited:?}");
    assert!(matches!(a.unlock().await, Err(Error::NotHeld { .. })));
    w.unlock().await.unwrap();
}

#[tokio::test]
async fn expired_write_lets_another_writer_in_and_the_late_unlock_fails() {
    let s = RedisServer::start();
    let client = client(&s).await;
    let rw = client.read_write_lock("wexp").unwrap();
    let w = rw
        .write_lock()
        .with_owner(1)
        .lock_with_lease(Duration::from_millis(600))
        .await
        .unwrap();
    let start = Instant::now();
    let w2 = rw.write_lock().with_owner(2).lock().await.unwrap();
    assert!(start.elapsed() < Duration::from_millis(2000));
    assert_eq!(w.lost().await, LostReason::LeaseExpired);
    assert!(matches!(w.unlock().await, Err(Error::NotHeld { .. })));
    assert!(rw.write_lock().with_owner(2).is_held().await.unwrap());
    w2.unlock().await.unwrap();
    // Redisson testExpireRead: another reader does not even wait for a leased reader
    let r = rw
        .read_lock()
        .with_owner(1)
        .lock_with_lease(Duration::from_millis(600))
        .await
        .unwrap();
    let r2 = rw
        .read_lock()
        .with_owner(2)
        .try_lock()
        .await
        .unwrap()
        .expect("readers share");
    r2.unlock().await.unwrap();
    drop(r);
}

#[tokio::test]
async fn force_unlock_of_one_mode_leaves_the_other() {
    let s = RedisServer::start();
    let client = client(&s).await;
    let rw = client.read_write_lock("force").unwrap();
    assert!(!rw.read_lock().force_unlock().await.unwrap(), "nothing to force");
    let r = rw.read_lock().lock().await.unwrap();
    assert!(
        !rw.write_lock().force_unlock().await.unwrap(),
        "write force does not touch read mode"
    );
    assert!(rw.read_lock().is_locked().await.unwrap());
    assert!(rw.read_lock().force_unlock().await.unwrap());
    assert!(!rw.read_lock().is_locked().await.unwrap());
    assert_eq!(r.lost().await, LostReason::ForceUnlocked);
    let w = rw.write_lock().lock().await.unwrap();
    assert!(
        !rw.read_lock().force_unlock().await.unwrap(),
        "read force does not touch write mode"
    );
    assert!(rw.write_lock().is_locked().await.unwrap());
    assert!(w.is_held(), "a force that deleted nothing does not end our hold");
    assert_eq!(client.stats().renewing, 1, "and renewal goes on");
    assert!(rw.write_lock().force_unlock().await.unwrap());
    assert!(!rw.write_lock().is_locked().await.unwrap());
    drop(w);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_blocked_readers_all_get_in_within_a_second_of_the_write_unlock() {
    // Redisson testWriteRead: message `1` wakes every waiter, across clients
    let s = RedisServer::start();
    let writer_client = client(&s).await;
    let c1 = client(&s).await;
    let c2 = client(&s).await;
    let w = writer_client
        .read_write_lock("herd")
        .unwrap()
        .write_lock()
        .lock()
        .await
        .unwrap();
    let mut readers = Vec::new();
    for i in 0..20u64 {
        let c = if i % 2 == 0 { c1.clone() } else { c2.clone() };
        let read = c.read_write_lock("herd").unwrap().read_lock().with_owner(i);
        readers.push(tokio::spawn(async move {
            let g = read.lock().await.unwrap();
            (Instant::now(), g)
        }));
    }
    eventually(Duration::from_secs(5), "all 20 readers wait, subscribed", || {
        let (a, b) = (c1.clone(), c2.clone());
        async move {
            a.stats().channels == 1 && b.stats().channels == 1 && a.stats().waiters + b.stats().waiters == 20
        }
    })
    .await;
    let released = Instant::now();
    w.unlock().await.unwrap();
    let mut guards = Vec::new();
    for r in readers {
        let (at, g) = r.await.unwrap();
        assert!(
            at.duration_since(released) < Duration::from_secs(1),
            "a reader waited {:?}",
            at.duration_since(released)
        );
        guards.push(g);
    }
    for g in guards {
        g.unlock().await.unwrap();
    }
}

#[tokio::test]
async fn zombie_reader_of_a_dead_client_is_cleaned_up_so_a_writer_gets_in() {
    // Redisson testMultiInstanceReadLockZombieCleanup (needs 4.4+ renewal: own keys only)
    let s = RedisServer::start();
    let url = s.url();
    let wd = Duration::from_millis(1000);
    let zombie_field = std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let f = rt.block_on(async {
            let c = Client::builder()
                .url(url)
                .config(Config::default().with_lock_watchdog_timeout(wd))
                .build()
                .await
                .unwrap();
            let g = c
                .read_write_lock("zombie")
                .unwrap()
                .read_lock()
                .lock()
                .await
                .unwrap();
            let f = g.field().to_owned();
            g.forget();
            f
        });
        rt.shutdown_background(); // the client dies holding a read lock
        f
    })
    .join()
    .unwrap();
    let client = Client::builder()
        .url(s.url())
        .config(Config::default().with_lock_watchdog_timeout(wd))
        .build()
        .await
        .unwrap();
    let mut raw = s.conn().await;
    let rw = client.read_write_lock("zombie").unwrap();
    let r = rw.read_lock().lock().await.unwrap();
    tokio::time::sleep(wd * 3).await; // our renewals keep our hold (and the hash) alive meanwhile
    assert!(r.is_held());
    let fields = hash(&mut raw, "zombie").await;
    assert!(
        fields.iter().any(|(f, _)| f == &zombie_field),
        "the zombie's field is still in the hash"
    );
    assert_eq!(
        raw.exists::<_, i64>(tkey("zombie", &zombie_field, 1))
            .await
            .unwrap(),
        0,
        "its timeout key expired (we never renewed it)"
    );
    r.unlock().await.unwrap();
    let w = rw
        .write_lock()
        .try_lock_for(Duration::from_secs(5))
        .await
        .unwrap()
        .expect("the zombie no longer blocks writers");
    w.unlock().await.unwrap();
}

#[tokio::test]
async fn read_watchdog_renews_own_timeout_keys_and_the_hash() {
    let s = RedisServer::start();
    let wd = Duration::from_millis(900);
    let client = Client::builder()
        .url(s.url())
        .config(Config::default().with_lock_watchdog_timeout(wd))
        .build()
        .await
        .unwrap();
    let mut raw = s.conn().await;
    let rw = client.read_write_lock("rwd").unwrap();
    let r1 = rw.read_lock().lock().await.unwrap();
    let r2 = r1.reenter().await.unwrap();
    let w_other = rw.write_lock().with_owner(999);
    let start = Instant::now();
    while start.elapsed() < wd * 5 {
        assert!(pttl(&mut raw, &tkey("rwd", r1.field(), 1)).await > 0);
        assert!(pttl(&mut raw, &tkey("rwd", r1.field(), 2)).await > 0);
        assert!(pttl(&mut raw, "rwd").await > 0);
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    assert!(w_other.try_lock().await.unwrap().is_none());
    assert_eq!(client.stats().renewing, 1);
    r2.unlock().await.unwrap();
    r1.unlock().await.unwrap();
    assert_eq!(client.stats().renewing, 0);
    assert_eq!(raw.exists::<_, i64>("rwd").await.unwrap(), 0);
}

#[tokio::test]
async fn write_watchdog_and_lost_signal() {
    let s = RedisServer::start();
    let client = Client::builder()
        .url(s.url())
        .config(Config::default().with_lock_watchdog_timeout(Duration::from_millis(900)))
        .build()
        .await
        .unwrap();
    let other = Client::connect(&s.url()).await.unwrap();
    let mut raw = s.conn().await;
    let w = client
        .read_write_lock("wwd")
        .unwrap()
        .write_lock()
        .lock()
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(2700)).await;
    assert!(pttl(&mut raw, "wwd").await > 0, "renewed");
    assert!(other
        .read_write_lock("wwd")
        .unwrap()
        .write_lock()
        .force_unlock()
        .await
        .unwrap());
    let reason = tokio::time::timeout(Duration::from_secs(3), w.lost())
        .await
        .unwrap();
    assert_eq!(reason, LostReason::OwnerGone);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn mixed_readers_and_writers_never_overlap_a_writer() {
    let s = RedisServer::start();
    let mut tasks = Vec::new();
    for c in 0..2 {
        let client = client(&s).await;
        for t in 0..6u64 {
            let rw = client.read_write_lock("mixed").unwrap();
            let mut raw = s.conn().await;
            tasks.push(tokio::spawn(async move {
                let mut writes = 0;
                for round in 0..20u64 {
                    if (round + t + c) % 3 == 0 {
                        let g = rw.write_lock().lock().await.unwrap();
                        let v: Option<i64> = raw.get("mixed:value").await.unwrap();
                        let _: () = raw.set("mixed:writing", 1).await.unwrap();
                        tokio::task::yield_now().await;
                        let _: () = raw.set("mixed:value", v.unwrap_or(0) + 1).await.unwrap();
                        let _: () = raw.del("mixed:writing").await.unwrap();
                        g.unlock().await.unwrap();
                        writes += 1;
                    } else {
                        let g = rw.read_lock().lock().await.unwrap();
                        let writing: i64 = raw.exists("mixed:writing").await.unwrap();
                        assert_eq!(writing, 0, "a reader saw a writer inside");
                        g.unlock().await.unwrap();
                    }
                }
                writes
            }));
        }
    }
    let mut writes = 0;
    for t in tasks {
        writes += t.await.unwrap();
    }
    let mut raw = s.conn().await;
    let v: i64 = raw.get("mixed:value").await.unwrap();
    assert_eq!(v, writes, "no lost update among writers");
    assert_eq!(raw.exists::<_, i64>("mixed").await.unwrap(), 0);
}

#[tokio::test]
async fn names_with_hash_tags_use_the_suffix_rule() {
    let s = RedisServer::start();
    let client = client(&s).await;
    let mut raw = s.conn().await;
    let rw = client.read_write_lock("{test}:abc:key").unwrap();
    let r = rw.read_lock().lock().await.unwrap();
    let k = format!("{{test}}:abc:key:{}:rwlock_timeout:1", r.field());
    assert_eq!(raw.exists::<_, i64>(&k).await.unwrap(), 1, "{k}");
    r.unlock().await.unwrap();
    assert_eq!(raw.exists::<_, i64>(&k).await.unwrap(), 0);
}

#[test]
fn blocking_read_write_lock() {
    let s = RedisServer::start();
    let client = redisson_lock::blocking::Client::connect(&s.url()).unwrap();
    let rw = client.read_write_lock("blocking-rw").unwrap();
    let w = rw.write_lock().lock().unwrap();
    let r = w.downgrade().unwrap();
    assert!(rw.read_lock().is_locked().unwrap());
    assert!(!rw.write_lock().is_locked().unwrap());
    let rw2 = rw.clone();
    let other = std::thread::spawn(move || rw2.read_lock().try_lock().unwrap().is_some());
    assert!(other.join().unwrap(), "another thread reads alongside");
    r.unlock().unwrap();
    assert!(!rw.read_lock().is_locked().unwrap());
}
