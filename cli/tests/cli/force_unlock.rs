//! `force-unlock`: it asks for `--yes`, removes the lock whatever its holder, publishes the
//! unlock message of the lock's kind so that waiters wake, and leaves keys that are not locks
//! untouched.

use std::time::Duration;

use redis::AsyncCommands;
use redisson_lock::Config;

use super::{assert_json_error, assert_one_line_error, hgetall, json_lines, run, Spawned};
use crate::common::{eventually, RawSubscriber, RedisServer};

#[tokio::test]
async fn force_unlock_yes_wakes_a_waiting_hold() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let g = c.lock("stuck").unwrap().lock().await.unwrap();
    let mut raw = s.conn().await;
    let mut sub = RawSubscriber::new(&s.url(), "redisson_lock__channel:{stuck}").await;

    // without --yes and without a terminal: refuse, change nothing
    let r = run(&s, &["force-unlock", "stuck"]).await;
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("--yes"), "{}", r.stderr);
    assert_eq!(hgetall(&mut raw, "stuck").await.len(), 1, "still locked");

    let mut waiter = Spawned::start(&s, &["--json", "hold", "stuck", "--for", "100ms"]);
    eventually(Duration::from_secs(20), "the waiting hold subscribes", || {
        let mut raw = raw.clone();
        async move {
            let v: Vec<(String, i64)> = redis::cmd("PUBSUB")
                .arg("NUMSUB")
                .arg("redisson_lock__channel:{stuck}")
                .query_async(&mut raw)
                .await
                .unwrap();
            v[0].1 >= 2 // the raw subscriber and the waiting hold
        }
    })
    .await;

    let r = run(&s, &["force-unlock", "stuck", "--yes"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.starts_with("removed stuck"), "{}", r.stdout);
    assert!(
        r.stdout.contains(g.field()),
        "reports the holder it removed: {}",
        r.stdout
    );

    let acquired = waiter.event(Duration::from_secs(20), "acquired").await;
    assert_eq!(acquired["name"], "stuck");
    waiter.event(Duration::from_secs(20), "released").await;
    assert_eq!(waiter.exit_code(Duration::from_secs(20)).await, Some(0));
    let msgs = sub.drain(&s).await;
    assert!(
        msgs.first().map(String::as_str) == Some("0"),
        "force-unlock published 0 first: {msgs:?}"
    );

    let r = run(&s, &["--json", "force-unlock", "stuck", "--yes"]).await;
    assert_eq!(r.code, Some(0));
    assert_eq!(json_lines(&r.stdout)[0]["removed"], false);
    drop(g);
}

#[tokio::test]
async fn force_unlock_of_a_read_write_lock_uses_its_channel() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let rw = c.read_write_lock("rwstuck").unwrap();
    let w = rw.write_lock().lock().await.unwrap();
    let mut sub = RawSubscriber::new(&s.url(), "redisson_rwlock:{rwstuck}").await;
    let r = run(&s, &["--json", "force-unlock", "rwstuck", "--yes"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v = &json_lines(&r.stdout)[0];
    assert_eq!(v["removed"], true);
    assert_eq!(v["kind"], "read-write");
    assert_eq!(v["holders"][0]["role"], "write");
    assert_eq!(
        sub.drain(&s).await,
        vec!["1".to_owned()],
        "a write force-unlock publishes 1"
    );
    let mut raw = s.conn().await;
    let exists: i64 = raw.exists("rwstuck").await.unwrap();
    assert_eq!(exists, 0);
    drop(w);
}

/// `DUMP` of a key (its type and content), to prove it was not touched.
async fn dump(raw: &mut redis::aio::MultiplexedConnection, key: &str) -> Option<Vec<u8>> {
    redis::cmd("DUMP").arg(key).query_async(raw).await.unwrap()
}

#[tokio::test]
async fn force_unlock_refuses_keys_that_are_not_locks() {
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    let _: () = raw.set("session", "data").await.unwrap();
    let _: () = raw
        .hset_multiple("user:1", &[("name", "bob"), ("age", "x")])
        .await
        .unwrap();
    let odd_field = "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:1";
    let _: () = raw.hset("odd-count", odd_field, "abc").await.unwrap();

    for (key, needles) in [
        ("session", vec!["session", "not a lock", "nothing was deleted"]),
        (
            "user:1",
            vec!["user:1", "not a lock", "name", "nothing was deleted"],
        ),
        (
            "odd-count",
            vec!["odd-count", "not a lock", odd_field, "abc", "nothing was deleted"],
        ),
    ] {
        let before = dump(&mut raw, key).await;
        assert!(before.is_some());
        let mut lock_sub = RawSubscriber::new(&s.url(), &format!("redisson_lock__channel:{{{key}}}")).await;
        let mut rw_sub = RawSubscriber::new(&s.url(), &format!("redisson_rwlock:{{{key}}}")).await;
        let r = run(&s, &["force-unlock", key, "--yes"]).await;
        for needle in &needles {
            assert_one_line_error(&r, &format!("force-unlock {key}"), needle);
        }
        let r = run(&s, &["--json", "force-unlock", key, "--yes"]).await;
        for needle in &needles {
            assert_json_error(&r, &format!("--json force-unlock {key}"), "failed", needle);
        }
        assert_eq!(dump(&mut raw, key).await, before, "`{key}` untouched");
        assert!(
            lock_sub.drain(&s).await.is_empty(),
            "nothing published for `{key}`"
        );
        assert!(rw_sub.drain(&s).await.is_empty(), "nothing published for `{key}`");
    }
}

#[tokio::test]
async fn inspect_and_force_unlock_accept_a_redisson_transactional_holder() {
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    // RTransaction locks with field `<client id>:<thread id>:<transaction id>`
    let field = "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:7:5e2d0c3b9a8f47e1b6c4d2a0f9e8b7c6";
    let _: () = raw.hset("txlock", field, 1).await.unwrap();
    let _: () = raw.pexpire("txlock", 30_000).await.unwrap();

    let r = run(&s, &["--json", "inspect", "txlock"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v = &json_lines(&r.stdout)[0];
    assert_eq!(v["kind"], "lock");
    assert_eq!(v["holders"][0]["field"], field);
    assert_eq!(v["holders"][0]["owner_id"], 7);
    assert_eq!(
        v["holders"][0]["transaction_id"],
        "5e2d0c3b9a8f47e1b6c4d2a0f9e8b7c6"
    );

    let mut sub = RawSubscriber::new(&s.url(), "redisson_lock__channel:{txlock}").await;
    let r = run(&s, &["force-unlock", "txlock", "--yes"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.starts_with("removed txlock"), "{}", r.stdout);
    assert!(r.stdout.contains(field), "{}", r.stdout);
    let exists: i64 = raw.exists("txlock").await.unwrap();
    assert_eq!(exists, 0);
    assert_eq!(sub.drain(&s).await, vec!["0".to_owned()]);
}

/// A fair lock (its queue beside the hash): `force-unlock` runs the fair lock's script, which
/// wakes the head of the queue on its own channel `redisson_lock__channel:{N}:<field>` (where
/// Redisson's fair waiters listen), not on the plain lock channel; the Rust waiter gets the lock
/// at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_unlock_of_a_fair_lock_wakes_the_head_of_its_queue() {
    let s = RedisServer::start();
    let holder_client = s.client(Config::default()).await;
    let waiter_client = s.client(Config::default()).await;
    let holder = holder_client.fair_lock("fq").unwrap().lock().await.unwrap();
    let lock = waiter_client.fair_lock("fq").unwrap();
    let waiter = tokio::spawn(async move {
        let g = lock.lock().await.unwrap();
        let at = super::epoch_ms();
        g.unlock().await.unwrap();
        at
    });
    let mut raw = s.conn().await;
    eventually(Duration::from_secs(20), "the waiter queues", || {
        let mut raw = raw.clone();
        async move {
            let q: Vec<String> = raw.lrange("redisson_lock_queue:{fq}", 0, -1).await.unwrap();
            q.len() == 1
        }
    })
    .await;
    let q: Vec<String> = raw.lrange("redisson_lock_queue:{fq}", 0, -1).await.unwrap();
    let head = &q[0];
    let head_channel = format!("redisson_lock__channel:{{fq}}:{head}");
    let mut own = RawSubscriber::new(&s.url(), &head_channel).await;
    let mut plain = RawSubscriber::new(&s.url(), "redisson_lock__channel:{fq}").await;

    let r = run(&s, &["force-unlock", "fq", "--yes"]).await;
    let exited = super::epoch_ms();
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains("(fair") && r.stdout.contains(&format!("published unlock on {head_channel}")),
        "{}",
        r.stdout
    );
    let acquired = tokio::time::timeout(Duration::from_secs(20), waiter)
        .await
        .expect("the waiter gets the lock")
        .unwrap();
    assert!(
        acquired <= exited + 1_000,
        "acquired {} ms after force-unlock exited",
        acquired as i64 - exited as i64
    );
    assert_eq!(
        own.drain(&s).await,
        vec!["0".to_owned()],
        "woken on its own channel"
    );
    assert!(
        plain.drain(&s).await.is_empty(),
        "nothing on the plain lock channel"
    );
    drop(holder);
}

/// A grouped multi-lock's hash (Redisson's `getMultiLock(group, values)`): inspect and list show
/// it as a `group` with its values and holders; force-unlock frees every value whoever holds it
/// and wakes the group's waiters on its channel.
#[tokio::test]
async fn a_grouped_lock_is_shown_and_force_unlocked_value_by_value() {
    use redisson_lock::{Codec, EntryKey, LostReason};
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let key = |v: &str| EntryKey::string(Codec::Kryo5, v).unwrap();
    let a = c.group_lock("seats", &[key("12A"), key("12B")]).unwrap();
    let b = c.group_lock("seats", &[key("14C")]).unwrap();
    let ga = a.lock().await.unwrap();
    let gb = b.lock().await.unwrap();
    let mut raw = s.conn().await;

    let r = run(&s, &["--json", "inspect", "seats"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v = &json_lines(&r.stdout)[0];
    assert_eq!(v["kind"], "group");
    assert_eq!(v["locked"], true);
    assert_eq!(v["holders"].as_array().map(Vec::len), Some(2), "{v}");
    let mut ids: Vec<String> = a.value_ids().iter().chain(b.value_ids()).cloned().collect();
    ids.sort();
    let shown: Vec<&str> = v["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["value_id"].as_str().unwrap())
        .collect();
    assert_eq!(shown, ids);
    assert!(v["values"]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["held"] == true && x["count"] == 1));
    let r = run(&s, &["inspect", "seats"]).await;
    assert!(r.stdout.contains("kind     group"), "{}", r.stdout);
    assert!(r.stdout.contains("values   3"), "{}", r.stdout);
    let r = run(&s, &["list", "sea*"]).await;
    assert!(
        r.stdout.contains("seats") && r.stdout.contains("group"),
        "{}",
        r.stdout
    );

    let mut sub = RawSubscriber::new(&s.url(), "redisson_lock__channel:{seats}").await;
    let r = run(&s, &["--json", "force-unlock", "seats", "--yes"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(json_lines(&r.stdout)[0]["removed"], true);
    assert!(hgetall(&mut raw, "seats").await.is_empty(), "every value freed");
    assert_eq!(sub.drain(&s).await, ["0"]);
    // another process freed them: this client learns it from the loss watch
    for g in [&ga, &gb] {
        let lost = tokio::time::timeout(Duration::from_secs(10), g.lost()).await;
        assert_eq!(lost, Ok(LostReason::OwnerGone));
    }
    c.shutdown().await.unwrap();
}
