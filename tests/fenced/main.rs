//! RFencedLock against a real redis-server: Redisson's RedissonFencedLockTest (see
//! `tests/REDISSON-CHECKLIST.md`), the token's wire shape, and that every acquisition (re-entries
//! too) takes a new token (this file); what the tokens are for, against a real database —
//! `examples/fenced_write/orders.rs` on SQLite: a holder paused past its lease and the database
//! refusing its stale write, in every interleaving (`writes.rs`); and tokens across Redis restarts,
//! with and without persistence, and the recovery with `raise_token_to` (`restart.rs`); tokens
//! exact over the counter's whole range, and counters without a next token (`tokens.rs`).

#[path = "../common/mod.rs"]
mod common;
// the example's order database, as the example uses it (the tests use parts the example does
// not, and the other way round)
#[allow(dead_code)]
#[path = "../../examples/fenced_write/orders.rs"]
mod orders;
mod restart;
mod tokens;
mod writes;

use std::time::Duration;

use common::RedisServer;
use redis::AsyncCommands;
use redisson_lock::{Config, Unlocked};

/// testTokenIncrease: lockAndGetToken = 1, then 2; lock() -> 3; lock(10s) -> 4;
/// tryLockAndGetToken -> 5.
#[tokio::test]
async fn tokens_increase_with_every_acquisition() {
    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let lock = client.fenced_lock("fenced").unwrap();
    assert_eq!(
        lock.get_token().await.unwrap(),
        None,
        "no token before the first lock"
    );
    let (t1, g1) = lock.lock_and_get_token().await.unwrap();
    assert_eq!(t1, 1);
    g1.unlock().await.unwrap();
    let (t2, g2) = lock.lock_and_get_token().await.unwrap();
    assert_eq!(t2, 2);
    g2.unlock().await.unwrap();
    let g3 = lock.lock().await.unwrap();
    assert_eq!((g3.token(), lock.get_token().await.unwrap()), (3, Some(3)));
    g3.unlock().await.unwrap();
    let g4 = lock.lock_with_lease(Duration::from_secs(10)).await.unwrap();
    assert_eq!(g4.token(), 4);
    g4.unlock().await.unwrap();
    let (t5, g5) = lock.try_lock_and_get_token().await.unwrap().expect("free");
    assert_eq!(t5, 5);
    // wire shape: the RLock hash plus the counter, which has no TTL
    let fields: Vec<(String, String)> = raw.hgetall("fenced").await.unwrap();
    assert_eq!(fields, vec![(g5.field().to_owned(), "1".to_owned())]);
    let counter: String = raw.get("redisson_lock_token:{fenced}").await.unwrap();
    assert_eq!(counter, "5");
    let ttl: i64 = raw.pttl("redisson_lock_token:{fenced}").await.unwrap();
    assert_eq!(ttl, -1);
    // a re-entry takes a new token too
    let g6 = g5.reenter().await.unwrap();
    assert_eq!(g6.token(), 6);
    // a refused attempt takes none
    let other = client.fenced_lock("fenced").unwrap();
    assert!(other.try_lock_and_get_token().await.unwrap().is_none());
    assert!(other
        .try_lock_for_and_get_token(Duration::from_millis(50))
        .await
        .unwrap()
        .is_none());
    assert!(other
        .try_lock_with_lease_and_get_token(Duration::from_millis(50), Duration::from_secs(5))
        .await
        .unwrap()
        .is_none());
    assert_eq!(lock.get_token().await.unwrap(), Some(6));
    assert_eq!(g6.unlock().await.unwrap(), Unlocked::Partial);
    assert_eq!(g5.unlock().await.unwrap(), Unlocked::Released);
    assert_eq!(raw.exists::<_, i64>("fenced").await.unwrap(), 0);
    assert_eq!(
        lock.get_token().await.unwrap(),
        Some(6),
        "the counter outlives the lock"
    );
}

/// Tokens strictly increase across clients and tasks under contention: each holder's token is
/// higher than every token of a hold that ended before it began.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_strictly_increase_across_holders() {
    let s = RedisServer::start();
    let clients = [
        s.client(Config::default()).await,
        s.client(Config::default()).await,
    ];
    let seen = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for i in 0..8 {
        let lock = clients[i % 2].fenced_lock("order").unwrap();
        let seen = seen.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..10 {
                let g = lock.lock().await.unwrap();
                seen.lock().push(g.token());
                g.unlock().await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let seen = seen.lock().clone();
    assert_eq!(seen.len(), 80);
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "tokens in the order the holds were taken must increase: {seen:?}"
    );
}

/// A fresh order database (a SQLite file in a directory of its own), removed on drop.
struct TempDb {
    dir: std::path::PathBuf,
}

impl TempDb {
    fn new() -> TempDb {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("redisson-lock-fenced-db-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the database's directory");
        TempDb { dir }
    }

    fn path(&self) -> std::path::PathBuf {
        self.dir.join("orders.sqlite")
    }

    /// A connection of its own (one per worker, as two services would have).
    fn open(&self) -> orders::Orders {
        orders::Orders::open(&self.path()).expect("open the order database")
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
