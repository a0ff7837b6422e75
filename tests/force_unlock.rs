//! `force_unlock` (RLock, read lock, write lock) on keys that are not locks: refused with
//! `Error::WrongType`, nothing deleted, nothing published. Real locks, whatever field shape
//! Redisson wrote, are still deleted; a missing key is still "nothing to delete".

mod common;

use std::time::Duration;

use common::{RawSubscriber, RedisServer};
use redis::AsyncCommands;
use redisson_lock::inspect::{self, lock_channel, rwlock_channel, Role};
use redisson_lock::{Client, Config, Error, LostReason};

type Raw = redis::aio::MultiplexedConnection;

/// A Redisson client id (a version-4 UUID), for hand-written lock hashes.
const JAVA_CLIENT: &str = "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10";

#[derive(Clone, Copy, Debug)]
enum Side {
    /// `RLock::force_unlock`
    Lock,
    /// `RReadLock::force_unlock`
    Read,
    /// `RWriteLock::force_unlock`
    Write,
}

async fn force(client: &Client, side: Side, key: &str) -> redisson_lock::Result<bool> {
    match side {
        Side::Lock => client.lock(key)?.force_unlock().await,
        Side::Read => client.read_write_lock(key)?.read_lock().force_unlock().await,
        Side::Write => client.read_write_lock(key)?.write_lock().force_unlock().await,
    }
}

/// The key's type and serialized content (`DUMP`), to prove it was not touched.
async fn snapshot(raw: &mut Raw, key: &str) -> (String, Option<Vec<u8>>) {
    let t: String = redis::cmd("TYPE").arg(key).query_async(raw).await.unwrap();
    let d: Option<Vec<u8>> = redis::cmd("DUMP").arg(key).query_async(raw).await.unwrap();
    (t, d)
}

async fn hset_all(raw: &mut Raw, key: &str, pairs: &[(&str, &str)]) {
    let _: () = raw.hset_multiple(key, pairs).await.unwrap();
}

/// Writes keys that must not be taken for locks; returns their names.
async fn seed_non_locks(raw: &mut Raw) -> Vec<String> {
    let owner = format!("{JAVA_CLIENT}:1");
    let _: () = raw.set("a-string", "hello").await.unwrap();
    let _: () = raw.rpush("a-list", &["a", "b"]).await.unwrap();
    let _: () = raw.sadd("a-set", &["x", "y"]).await.unwrap();
    let _: () = raw.zadd("a-zset", "m", 1).await.unwrap();
    hset_all(raw, "app-hash", &[("name", "bob"), ("age", "x")]).await;
    // owner-looking fields whose values are not hold counts
    hset_all(raw, "count-abc", &[(owner.as_str(), "abc")]).await;
    hset_all(raw, "count-zero", &[(owner.as_str(), "0")]).await;
    hset_all(raw, "count-negative", &[(owner.as_str(), "-1")]).await;
    hset_all(raw, "count-fraction", &[(owner.as_str(), "1.5")]).await;
    hset_all(raw, "count-plus", &[(owner.as_str(), "+1")]).await;
    // read-write lock shapes with something foreign in them
    hset_all(raw, "mode-banana", &[("mode", "banana"), (owner.as_str(), "1")]).await;
    hset_all(
        raw,
        "mode-read-plus-app-field",
        &[("mode", "read"), (owner.as_str(), "1"), ("color", "blue")],
    )
    .await;
    hset_all(
        raw,
        "mode-write-plus-app-field",
        &[("mode", "write"), ("color", "blue")],
    )
    .await;
    [
        "a-string",
        "a-list",
        "a-set",
        "a-zset",
        "app-hash",
        "count-abc",
        "count-zero",
        "count-negative",
        "count-fraction",
        "count-plus",
        "mode-banana",
        "mode-read-plus-app-field",
        "mode-write-plus-app-field",
    ]
    .map(String::from)
    .to_vec()
}

/// `force_unlock` of `side` on every non-lock key: `WrongType` naming the key, the key intact,
/// nothing published on either lock channel.
async fn assert_refuses_non_locks(s: &RedisServer, client: &Client, side: Side) {
    let mut raw = s.conn().await;
    for key in seed_non_locks(&mut raw).await {
        let before = snapshot(&mut raw, &key).await;
        let mut lock_sub = RawSubscriber::new(&s.url(), &lock_channel(&key)).await;
        let mut rw_sub = RawSubscriber::new(&s.url(), &rwlock_channel(&key)).await;
        let r = force(client, side, &key).await;
        assert!(
            matches!(&r, Err(Error::WrongType { key: k }) if *k == key),
            "{side:?} force_unlock of `{key}` ({}) must be refused with WrongType, got {r:?}",
            before.0
        );
        assert_eq!(
            snapshot(&mut raw, &key).await,
            before,
            "`{key}` must be left as it was"
        );
        assert_eq!(
            lock_sub.drain(s).await,
            Vec::<String>::new(),
            "nothing published for `{key}`"
        );
        assert_eq!(
            rw_sub.drain(s).await,
            Vec::<String>::new(),
            "nothing published for `{key}`"
        );
    }
}

#[tokio::test]
async fn rlock_force_unlock_refuses_keys_that_are_not_locks() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    assert_refuses_non_locks(&s, &c, Side::Lock).await;

    // still: a real lock is deleted (and its guard learns it), a missing key is nothing to delete
    let mut raw = s.conn().await;
    let mut sub = RawSubscriber::new(&s.url(), &lock_channel("real")).await;
    let g = c.lock("real").unwrap().lock().await.unwrap();
    assert!(force(&c, Side::Lock, "real").await.unwrap());
    let exists: i64 = raw.exists("real").await.unwrap();
    assert_eq!(exists, 0);
    assert_eq!(sub.drain(&s).await, vec!["0".to_owned()]);
    let reason = tokio::time::timeout(Duration::from_secs(5), g.lost())
        .await
        .expect("guard told");
    assert_eq!(reason, LostReason::ForceUnlocked);
    assert!(
        !force(&c, Side::Lock, "real").await.unwrap(),
        "missing key: nothing to delete"
    );
    assert!(!force(&c, Side::Lock, "never-existed").await.unwrap());

    // an RLock force on a read-write lock deletes it, as Redisson's does
    let rw = c.read_write_lock("rw-by-rlock").unwrap();
    let r = rw.read_lock().lock().await.unwrap();
    assert!(force(&c, Side::Lock, "rw-by-rlock").await.unwrap());
    let exists: i64 = raw.exists("rw-by-rlock").await.unwrap();
    assert_eq!(exists, 0);
    drop(r);
}

#[tokio::test]
async fn read_force_unlock_refuses_keys_that_are_not_locks() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    assert_refuses_non_locks(&s, &c, Side::Read).await;

    let mut raw = s.conn().await;
    let rw = c.read_write_lock("doc").unwrap();
    let mut sub = RawSubscriber::new(&s.url(), &rwlock_channel("doc")).await;

    // not this side's mode: 0, nothing changed
    let w = rw.write_lock().lock().await.unwrap();
    let before = snapshot(&mut raw, "doc").await;
    assert!(!force(&c, Side::Read, "doc").await.unwrap());
    assert_eq!(snapshot(&mut raw, "doc").await, before);
    w.unlock().await.unwrap();
    let _ = sub.drain(&s).await;
    let plain = c.lock("plain").unwrap().lock().await.unwrap();
    let before = snapshot(&mut raw, "plain").await;
    assert!(
        !force(&c, Side::Read, "plain").await.unwrap(),
        "an RLock hash has no read mode"
    );
    assert_eq!(snapshot(&mut raw, "plain").await, before);
    plain.unlock().await.unwrap();

    // a read lock is deleted and `0` published
    let r = rw.read_lock().lock().await.unwrap();
    assert!(force(&c, Side::Read, "doc").await.unwrap());
    let exists: i64 = raw.exists("doc").await.unwrap();
    assert_eq!(exists, 0);
    assert_eq!(sub.drain(&s).await, vec!["0".to_owned()]);
    assert!(
        !force(&c, Side::Read, "doc").await.unwrap(),
        "missing key: nothing to delete"
    );
    drop(r);
}

#[tokio::test]
async fn write_force_unlock_refuses_keys_that_are_not_locks() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    assert_refuses_non_locks(&s, &c, Side::Write).await;

    let mut raw = s.conn().await;
    let rw = c.read_write_lock("doc").unwrap();
    let mut sub = RawSubscriber::new(&s.url(), &rwlock_channel("doc")).await;

    // not this side's mode: 0, nothing changed
    let r = rw.read_lock().lock().await.unwrap();
    let before = snapshot(&mut raw, "doc").await;
    assert!(!force(&c, Side::Write, "doc").await.unwrap());
    assert_eq!(snapshot(&mut raw, "doc").await, before);
    r.unlock().await.unwrap();
    let _ = sub.drain(&s).await;

    // a write lock is deleted and `1` published
    let w = rw.write_lock().lock().await.unwrap();
    assert!(force(&c, Side::Write, "doc").await.unwrap());
    let exists: i64 = raw.exists("doc").await.unwrap();
    assert_eq!(exists, 0);
    assert_eq!(sub.drain(&s).await, vec!["1".to_owned()]);
    assert!(
        !force(&c, Side::Write, "doc").await.unwrap(),
        "missing key: nothing to delete"
    );
    drop(w);
}

#[tokio::test]
async fn redisson_transactional_fields_are_locks_and_lookalike_hashes_are_not() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;

    // RTransaction's lock field `<client id>:<thread id>:<transaction id>`
    let tx_field = format!("{JAVA_CLIENT}:7:tx1");
    hset_all(&mut raw, "tx", &[(tx_field.as_str(), "1")]).await;
    let _: () = raw.pexpire("tx", 30_000).await.unwrap();
    let info = inspect::inspect(&mut c.connection(), "tx").await.expect("a lock");
    assert!(info.is_locked());
    assert_eq!(info.holders.len(), 1);
    assert_eq!(info.holders[0].field, tx_field);
    assert_eq!(info.holders[0].client_id, JAVA_CLIENT);
    assert_eq!(info.holders[0].owner_id, 7);
    assert_eq!(info.holders[0].hold_count, 1);
    assert_eq!(info.holders[0].role, Role::Exclusive);
    let mut sub = RawSubscriber::new(&s.url(), &lock_channel("tx")).await;
    assert!(force(&c, Side::Lock, "tx").await.unwrap());
    let exists: i64 = raw.exists("tx").await.unwrap();
    assert_eq!(exists, 0);
    assert_eq!(sub.drain(&s).await, vec!["0".to_owned()]);

    // the same in a read-write lock, plus a writer field (re-entered 3 times)
    let writer = format!("{JAVA_CLIENT}:9:write");
    hset_all(
        &mut raw,
        "txrw",
        &[
            ("mode", "write"),
            (writer.as_str(), "3"),
            (tx_field.as_str(), "2"),
        ],
    )
    .await;
    let info = inspect::inspect(&mut c.connection(), "txrw")
        .await
        .expect("a lock");
    assert_eq!(info.holders.len(), 2);
    assert_eq!(
        (info.holders[0].role, info.holders[0].hold_count),
        (Role::Write, 3)
    );
    assert_eq!((info.holders[1].role, info.holders[1].owner_id), (Role::Read, 7));
    assert!(
        !force(&c, Side::Read, "txrw").await.unwrap(),
        "write mode: not the read side's"
    );
    assert!(force(&c, Side::Write, "txrw").await.unwrap());

    // an application hash whose fields merely look like `name:number` is not a lock: owner
    // fields start with a client UUID, as Redisson and this crate write them
    hset_all(&mut raw, "inventory", &[("sku:1001", "2")]).await;
    assert!(matches!(
        force(&c, Side::Lock, "inventory").await,
        Err(Error::WrongType { .. })
    ));
    let left: i64 = raw.hlen("inventory").await.unwrap();
    assert_eq!(left, 1, "the application hash is intact");
}

#[tokio::test]
async fn large_hashes_are_judged_without_reading_them_whole() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;

    // an application hash far bigger than any lock
    let mut pipe = redis::pipe();
    for chunk in 0..20 {
        let pairs: Vec<(String, String)> = (0..1_000)
            .map(|i| (format!("user{}", chunk * 1_000 + i), "x".to_owned()))
            .collect();
        pipe.hset_multiple("big-app", &pairs).ignore();
    }
    let _: () = pipe.query_async(&mut raw).await.unwrap();
    let before = snapshot(&mut raw, "big-app").await;
    for side in [Side::Lock, Side::Read, Side::Write] {
        let r = force(&c, side, "big-app").await;
        assert!(matches!(r, Err(Error::WrongType { .. })), "{side:?}: {r:?}");
    }
    assert_eq!(snapshot(&mut raw, "big-app").await, before);
    let r = inspect::inspect(&mut c.connection(), "big-app").await;
    assert!(
        matches!(&r, Err(Error::NotALock { key, why }) if key == "big-app" && why.contains("user")),
        "inspect names the key and a field: {r:?}"
    );

    // a read lock with many readers (more than the scripts check one by one) is still a lock
    let mut pairs: Vec<(String, String)> = vec![("mode".into(), "read".into())];
    pairs.extend((1..=600).map(|t| (format!("{JAVA_CLIENT}:{t}"), "1".to_owned())));
    let _: () = raw.hset_multiple("busy-doc", &pairs).await.unwrap();
    let info = inspect::inspect(&mut c.connection(), "busy-doc")
        .await
        .expect("a lock");
    assert_eq!(info.holders.len(), 600);
    assert!(!force(&c, Side::Write, "busy-doc").await.unwrap());
    assert!(force(&c, Side::Read, "busy-doc").await.unwrap());
    let exists: i64 = raw.exists("busy-doc").await.unwrap();
    assert_eq!(exists, 0);
}
