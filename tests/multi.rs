//! RMultiLock (Redisson's MultiLock) and the RedLock against real redis-servers: the meaning of
//! Redisson's RedissonMultiLockTest and RedissonRedLockTest cases (case by case in
//! `tests/REDISSON-CHECKLIST.md`), mixed kinds, cancellation, and a RedLock over 5 independent
//! servers with some of them stopped or restarted.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::faults::{pid, Stopped};
use common::{eventually, key_exists, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{Client, Config, Member, RMultiLock, Unlocked};

fn fast() -> Config {
    Config::default()
        .command_timeout(Duration::from_millis(300))
        .retry_attempts(1)
        .retry_interval(Duration::from_millis(50))
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
