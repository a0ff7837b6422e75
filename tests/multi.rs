//! RMultiLock (Redisson's MultiLock) and the RedLock against real redis-servers: the meaning of
//! Redisson's RedissonMultiLockTest and RedissonRedLockTest cases (case by case in
//! `tests/REDISSON-CHECKLIST.md`), mixed kinds, cancellation, and a RedLock over 5 independent
//! servers with some of them stopped or restarted.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::faults::{pid, Stopped};
use common::{eventually, key_exists, pttl, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{Client, Config, Member, RMultiLock, Unlocked};

fn fast() -> Config {
    Config::default()
        .with_command_timeout(Duration::from_millis(300))
        .with_retry_attempts(1)
        .with_retry_interval(Duration::from_millis(50))
}

/// testLockUnlock: every member is held for one owner while the guard lives, none after.
#[tokio::test]
async fn all_members_are_held_for_one_owner() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let names = ["m:a", "m:b", "m:c"];
    let multi = RMultiLock::new(names.iter().map(|n| Member::from(&client.lock(n).unwrap()))).unwrap();
    assert_eq!(multi.quorum(), 3);
    let g = multi.lock().await.unwrap();
    assert_eq!(g.keys(), names.to_vec());
    let field = format!("{}:{}", client.id(), g.owner());
    for n in names {
        let count: Option<String> = raw.hget(n, &field).await.unwrap();
        assert_eq!(count.as_deref(), Some("1"), "{n} held by the multi-lock's owner");
        assert!(client.lock(n).unwrap().is_held_by(g.owner()).await.unwrap());
    }
    assert!(g.is_held());
    g.unlock().await.unwrap();
    for n in names {
        assert!(!key_exists(&mut raw, n).await, "{n} released");
    }
}

/// testWaitAndLeaseTimeouts: of 10 concurrent single passes with a lease, exactly one wins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_one_of_many_concurrent_attempts_wins() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let wins = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let multi = RMultiLock::new(
            ["w:a", "w:b", "w:c"]
                .iter()
                .map(|n| Member::from(&client.lock(n).unwrap())),
        )
        .unwrap();
        let wins = wins.clone();
        tasks.push(tokio::spawn(async move {
            if let Some(g) = multi
                .try_lock_with_lease(Duration::ZERO, Duration::from_secs(10))
                .await
                .unwrap()
            {
                wins.fetch_add(1, Ordering::SeqCst);
                g.forget_for_test();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(wins.load(Ordering::SeqCst), 1);
}

trait ForgetForTest {
    fn forget_for_test(self);
}
impl ForgetForTest for redisson_lock::MultiGuard {
    /// keep the members held (their 10 s lease) so that no other attempt can win later
    fn forget_for_test(self) {
        std::mem::forget(self)
    }
}

/// testMultiThreads: a second lock() waits, then gets it after the first unlock; a member held
/// elsewhere makes a single pass fail and leaves nothing held by us (test in RedissonMultiLockTest
/// with 3 servers).
#[tokio::test]
async fn a_held_member_blocks_and_nothing_is_left_half_taken() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let multi = RMultiLock::new(
        ["t:a", "t:b", "t:c"]
            .iter()
            .map(|n| Member::from(&client.lock(n).unwrap())),
    )
    .unwrap();
    let other = client.lock("t:c").unwrap().lock().await.unwrap();
    assert!(multi.try_lock().await.unwrap().is_none());
    assert!(
        !key_exists(&mut raw, "t:a").await,
        "a taken member was released again"
    );
    assert!(!key_exists(&mut raw, "t:b").await);
    let m = RMultiLock::new(
        ["t:a", "t:b", "t:c"]
            .iter()
            .map(|n| Member::from(&client.lock(n).unwrap())),
    )
    .unwrap();
    let waiter = tokio::spawn(async move { m.lock().await.unwrap() });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiter.is_finished());
    other.unlock().await.unwrap();
    let g = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap();
    g.unlock().await.unwrap();
}

/// Members of different kinds, taken for one owner; a dropped acquisition leaves nothing held.
#[tokio::test]
async fn members_of_any_kind_and_cancellation() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let members = || {
        [
            Member::from(&client.fair_lock("k:fair").unwrap()),
            Member::from(&client.read_write_lock("k:rw").unwrap().write_lock()),
            Member::from(&client.fenced_lock("k:fenced").unwrap()),
            Member::from(&client.spin_lock("k:spin").unwrap()),
        ]
    };
    let g = RMultiLock::new(members()).unwrap().lock().await.unwrap();
    let mode: String = raw.hget("k:rw", "mode").await.unwrap();
    assert_eq!(mode, "write");
    g.unlock().await.unwrap();
    for k in ["k:fair", "k:rw", "k:fenced", "k:spin"] {
        assert!(!key_exists(&mut raw, k).await, "{k}");
    }
    // a dropped acquisition (the last member is held elsewhere, so it waits there) releases the
    // members it had taken
    let blocker = client.spin_lock("k:spin").unwrap().lock().await.unwrap();
    let attempt = tokio::time::timeout(
        Duration::from_millis(300),
        RMultiLock::new(members()).unwrap().lock(),
    )
    .await;
    assert!(attempt.is_err(), "still waiting for the spin member");
    eventually(
        Duration::from_secs(5),
        "the members taken by the dropped attempt are released",
        || {
            let mut raw = raw.clone();
            async move {
                !key_exists(&mut raw, "k:fair").await
                    && !key_exists(&mut raw, "k:rw").await
                    && !key_exists(&mut raw, "k:fenced").await
            }
        },
    )
    .await;
    blocker.unlock().await.unwrap();
}

async fn red_lock(clients: &[Client], name: &str) -> RMultiLock {
    RMultiLock::red_lock(clients.iter().map(|c| Member::from(&c.lock(name).unwrap()))).unwrap()
}

/// A RedLock over 5 independent redis-servers: with 1 or 2 of them stopped (SIGSTOP) the quorum
/// (3) is reached; with 3 stopped it fails cleanly and leaves nothing held on the others; a
/// restarted server (empty) does not stop it (testConnectionFailed, testLockFailed,
/// testLockSuccess2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn red_lock_over_five_servers_survives_a_minority() {
    let mut servers: Vec<RedisServer> = (0..5).map(|_| RedisServer::start()).collect();
    let mut clients = Vec::new();
    for s in &servers {
        clients.push(s.client(fast()).await);
    }
    let red = red_lock(&clients, "red").await;
    assert_eq!(red.quorum(), 3);

    // all up
    let g = red.lock().await.unwrap();
    assert_eq!(g.keys().len(), 5);
    g.unlock().await.unwrap();

    // one member held elsewhere: still a majority
    let elsewhere = clients[0].lock("red").unwrap().lock().await.unwrap();
    let g = red
        .try_lock_for(Duration::from_secs(2))
        .await
        .unwrap()
        .expect("4 of 5");
    assert_eq!(g.keys().len(), 4);
    g.unlock().await.unwrap();
    elsewhere.unlock().await.unwrap();

    // two servers stopped: 3 of 5
    let stopped: Vec<Stopped> = {
        let mut v = Vec::new();
        for s in &servers[3..] {
            v.push(Stopped::new(pid(&s.url()).await.unwrap()).unwrap());
        }
        v
    };
    let g = red
        .try_lock_for(Duration::from_secs(5))
        .await
        .unwrap()
        .expect("a quorum of 3");
    assert!(g.keys().len() >= 3);
    assert!(g.is_held());
    g.unlock().await.unwrap();

    // three stopped: no quorum; nothing left held on the two that answer
    let third = Stopped::new(pid(&servers[2].url()).await.unwrap()).unwrap();
    let r = red.try_lock_for(Duration::from_secs(2)).await;
    assert!(!matches!(r, Ok(Some(_))), "{r:?}");
    for s in &servers[..2] {
        let mut raw = s.conn().await;
        assert!(
            !key_exists(&mut raw, "red").await,
            "a minority member was left held"
        );
    }
    drop(third);
    drop(stopped);

    // a server restarted without its data mid-run: the RedLock still works
    servers[1].restart();
    let g = red
        .try_lock_for(Duration::from_secs(5))
        .await
        .unwrap()
        .expect("after a restart");
    g.unlock().await.unwrap();
    for s in &servers {
        let mut raw = s.conn().await;
        // attempts that reached a stopped server ran when it resumed; each is settled with Redis
        // and released
        eventually(Duration::from_secs(15), "every member released", || {
            let mut raw = raw.clone();
            async move { !key_exists(&mut raw, "red").await }
        })
        .await;
        let _ = &mut raw;
    }
}

/// Two RedLocks on the same name never hold at once (a counter under contention).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn red_locks_exclude_each_other() {
    let servers: Vec<RedisServer> = (0..3).map(|_| RedisServer::start()).collect();
    let inside = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let mut clients = Vec::new();
        for s in &servers {
            clients.push(s.client(Config::default()).await);
        }
        let (inside, done) = (inside.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let red = red_lock(&clients, "excl").await;
            for _ in 0..10 {
                let g = red.lock().await.unwrap();
                assert_eq!(
                    inside.fetch_add(1, Ordering::SeqCst),
                    0,
                    "two RedLock holders at once"
                );
                tokio::time::sleep(Duration::from_millis(2)).await;
                inside.fetch_sub(1, Ordering::SeqCst);
                g.unlock().await.unwrap();
                done.fetch_add(1, Ordering::SeqCst);
            }
        }));
    }
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(60), t)
            .await
            .unwrap()
            .unwrap();
    }
    assert_eq!(done.load(Ordering::SeqCst), 40);
    let _ = Unlocked::Released;
}

/// RedissonRedLockTest's lease cases, the deterministic part: the multi-lock's first members are
/// taken at once, its last one only ~1.5 s later (held by another client until then). With a 2 s
/// lease, every member's TTL in Redis is close to the full lease right after the multi-lock is
/// acquired, and the guard stays held for the lease, counted from then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_counts_from_when_the_multi_lock_is_held() {
    let (s1, s2) = (RedisServer::start(), RedisServer::start());
    let (c1, c2) = (
        s1.client(Config::default()).await,
        s2.client(Config::default()).await,
    );
    let other = s2.client(Config::default()).await;
    let (mut raw1, mut raw2) = (s1.conn().await, s2.conn().await);
    let blocker = other.lock("lease:c").unwrap().lock().await.unwrap();
    let multi = RMultiLock::new([
        Member::from(&c1.lock("lease:a").unwrap()),
        Member::from(&c1.lock("lease:b").unwrap()),
        Member::from(&c2.lock("lease:c").unwrap()),
    ])
    .unwrap();
    let lease = Duration::from_secs(2);
    let attempt = tokio::spawn(async move {
        let g = multi
            .try_lock_with_lease(Duration::from_secs(10), lease)
            .await
            .unwrap()
            .expect("the multi-lock within its wait");
        (g, Instant::now())
    });
    eventually(Duration::from_secs(5), "the first two members are taken", || {
        let mut raw = raw1.clone();
        async move { key_exists(&mut raw, "lease:a").await && key_exists(&mut raw, "lease:b").await }
    })
    .await;
    // the other holder works for another 1.5 s
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    blocker.unlock().await.unwrap();
    let (guard, acquired) = tokio::time::timeout(Duration::from_secs(10), attempt)
        .await
        .unwrap()
        .unwrap();
    let ttls = [
        ("lease:a", pttl(&mut raw1, "lease:a").await),
        ("lease:b", pttl(&mut raw1, "lease:b").await),
        ("lease:c", pttl(&mut raw2, "lease:c").await),
    ];
    println!("PTTL right after the multi-lock was acquired: {ttls:?}");
    for (key, ttl) in ttls {
        assert!(
            ttl > 1_500 && ttl <= 2_000,
            "{key}: PTTL {ttl} ms, expected close to the full 2 s lease (all: {ttls:?})"
        );
    }
    assert!(guard.is_held(), "held right after the acquisition");
    // the lease counts from the acquisition: still held well past what the first members had left
    tokio::time::sleep_until((acquired + Duration::from_millis(1_200)).into()).await;
    assert!(
        guard.is_held(),
        "held 1.2 s after the acquisition, with a 2 s lease"
    );
    guard.unlock().await.unwrap();
    for (mut raw, key) in [(raw1.clone(), "lease:a"), (raw1, "lease:b"), (raw2, "lease:c")] {
        assert!(!key_exists(&mut raw, key).await, "{key} released");
    }
}

/// How a contention task takes the lock: half of them wait as long as it takes, half with a
/// bounded wait, retried until they get it.
async fn take_with_lease(multi: &RMultiLock, task: usize, lease: Duration) -> redisson_lock::MultiGuard {
    if task.is_multiple_of(2) {
        return multi.lock_with_lease(lease).await.unwrap();
    }
    loop {
        if let Some(g) = multi
            .try_lock_with_lease(Duration::from_secs(3), lease)
            .await
            .unwrap()
        {
            return g;
        }
    }
}

/// RedissonRedLockTest's lease cases under contention: `tasks` tasks take `multi()` `rounds`
/// times each with a 2 s lease, work ~1 s under it, and release: every unlock succeeds (every
/// member still held: the lease counts from when the multi-lock is held, not from when each
/// member was taken), nobody is ever inside together with another holder, and a counter
/// incremented by a read, the work, and a write ends at `tasks × rounds`.
async fn leased_sections_under_contention(multi: impl Fn(usize) -> RMultiLock, tasks: usize, rounds: usize) {
    let lease = Duration::from_secs(2);
    let inside = Arc::new(AtomicUsize::new(0));
    let counter = Arc::new(AtomicUsize::new(0));
    let mut running = Vec::new();
    for task in 0..tasks {
        let multi = multi(task);
        let (inside, counter) = (inside.clone(), counter.clone());
        running.push(tokio::spawn(async move {
            for round in 0..rounds {
                let g = take_with_lease(&multi, task, lease).await;
                assert!(g.is_held(), "task {task} round {round}: held when acquired");
                assert_eq!(
                    inside.fetch_add(1, Ordering::SeqCst),
                    0,
                    "two holders of the multi-lock at once"
                );
                let seen = counter.load(Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(1_000)).await; // the work
                counter.store(seen + 1, Ordering::SeqCst);
                inside.fetch_sub(1, Ordering::SeqCst);
                if let Err(e) = g.unlock().await {
                    panic!("task {task} round {round}: unlock after 1 s of a 2 s lease: {e}");
                }
            }
        }));
    }
    for t in running {
        tokio::time::timeout(Duration::from_secs(240), t)
            .await
            .expect("the contention run ends")
            .unwrap();
    }
    assert_eq!(counter.load(Ordering::SeqCst), tasks * rounds);
}

/// A RedLock of 3 members on 3 servers (each task with clients of its own), under contention.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn red_lock_leases_hold_for_the_work_under_contention() {
    let servers: Vec<RedisServer> = (0..3).map(|_| RedisServer::start()).collect();
    let tasks = 6;
    let mut clients = Vec::new();
    for _ in 0..tasks {
        let mut mine = Vec::new();
        for s in &servers {
            mine.push(s.client(Config::default()).await);
        }
        clients.push(mine);
    }
    let locks: Vec<RMultiLock> = {
        let mut v = Vec::new();
        for mine in &clients {
            v.push(red_lock(mine, "red:lease").await);
        }
        v
    };
    leased_sections_under_contention(|task| locks[task].clone(), tasks, 2).await;
}

/// A multi-lock of 4 members on 2 servers, under contention; its last member is also taken on
/// its own, now and then, by another client, so the multi-lock often holds its first members
/// while it waits for the last one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_lock_leases_hold_for_the_work_under_contention() {
    let (s1, s2) = (RedisServer::start(), RedisServer::start());
    let (c1, c2) = (
        s1.client(Config::default()).await,
        s2.client(Config::default()).await,
    );
    let solo = s2.client(Config::default()).await.lock("multi:lease:4").unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let contender = tokio::spawn({
        let stop = stop.clone();
        async move {
            while !stop.load(Ordering::SeqCst) {
                let g = solo.lock_with_lease(Duration::from_secs(2)).await.unwrap();
                tokio::time::sleep(Duration::from_millis(700)).await; // its own work
                g.unlock().await.unwrap();
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        }
    });
    let multi = |_task: usize| {
        RMultiLock::new([
            Member::from(&c1.lock("multi:lease:1").unwrap()),
            Member::from(&c2.lock("multi:lease:2").unwrap()),
            Member::from(&c1.lock("multi:lease:3").unwrap()),
            Member::from(&c2.lock("multi:lease:4").unwrap()),
        ])
        .unwrap()
    };
    leased_sections_under_contention(multi, 6, 2).await;
    stop.store(true, Ordering::SeqCst);
    contender.await.unwrap();
}

/// What the multi-lock's lease rests on, for every kind: `extend_lease` gives a leased hold a new
/// lease from now (the key's TTL and the guard's lease), never shortens the TTL another hold of
/// the owner needs (and gives a key made persistent a TTL again), is refused for a watchdog hold, and on a hold whose field is gone reports it
/// lost without re-creating the lock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extend_lease_gives_a_leased_hold_a_new_lease_of_every_kind() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    for kind in common::kinds::KINDS {
        let key = format!("extend:{kind}");
        let lock = common::kinds::open(kind, &c, &key);
        let mut g = lock.lock_with_lease(Duration::from_millis(800)).await.unwrap();
        g.extend_lease(Duration::from_secs(20)).await.unwrap();
        let ttl = pttl(&mut raw, &key).await;
        assert!(ttl > 19_000, "{kind}: PTTL {ttl} after extending to 20 s");
        assert_eq!(g.lease(), Some(Duration::from_secs(20)), "{kind}");
        if kind == "read" {
            // the hold's own timeout key too
            let timeouts: Vec<String> = raw.keys(format!("{{{key}}}:*:rwlock_timeout:*")).await.unwrap();
            assert_eq!(timeouts.len(), 1, "{timeouts:?}");
            let t = pttl(&mut raw, &timeouts[0]).await;
            assert!(t > 19_000, "read: its timeout key's PTTL {t}");
        }
        // a shorter lease than what is left never shortens the TTL
        g.extend_lease(Duration::from_secs(1)).await.unwrap();
        assert!(pttl(&mut raw, &key).await > 18_000, "{kind}: not shortened");
        // a key someone made persistent gets a TTL again (it must not outlive its holders)
        let _: bool = redis::cmd("PERSIST")
            .arg(&key)
            .query_async(&mut raw)
            .await
            .unwrap();
        g.extend_lease(Duration::from_secs(5)).await.unwrap();
        let ttl = pttl(&mut raw, &key).await;
        assert!(
            ttl > 0 && ttl <= 20_000,
            "{kind}: PTTL {ttl} after PERSIST and extending"
        );
        // a hold whose field is gone: lost, nothing re-created
        let _: () = raw.del(&key).await.unwrap();
        assert!(matches!(
            g.extend_lease(Duration::from_secs(5)).await,
            Err(redisson_lock::Error::NotHeld { .. })
        ));
        assert!(!g.is_held(), "{kind}: reported lost");
        assert!(!key_exists(&mut raw, &key).await, "{kind}: not re-created");
        drop(g);
        // watchdog holds are renewed by the watchdog
        let mut w = lock.lock().await.unwrap();
        assert!(matches!(
            w.extend_lease(Duration::from_secs(5)).await,
            Err(redisson_lock::Error::InvalidArgument(_))
        ));
        w.unlock().await.unwrap();
    }
    c.shutdown().await.unwrap();
}
