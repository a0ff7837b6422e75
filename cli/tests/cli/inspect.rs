//! `inspect` and `list`: what they report about the locks this crate, Redisson's fair and fenced
//! locks and a cluster hold, and how they treat hashes that are not locks.

use redis::AsyncCommands;
use redisson_lock::{Client, Config};
use serde_json::Value;

use super::{assert_one_line_error, json_lines, run, run_url};
use crate::common::{self, RedisServer};

#[tokio::test]
async fn inspect_and_list_report_locks_held_by_another_client() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let lock = c.lock("orders:7").unwrap().with_owner(42);
    let g1 = lock.lock().await.unwrap();
    let g2 = lock.lock().await.unwrap();
    let rw = c.read_write_lock("orders:rw").unwrap();
    let r1 = rw.with_owner(5).read_lock().lock().await.unwrap();
    let r2 = rw.with_owner(6).read_lock().lock().await.unwrap();
    let mut raw = s.conn().await;
    let _: () = raw.hset("orders:meta", "color", "blue").await.unwrap(); // a hash, not a lock
    let _: () = raw.set("orders:count", 3).await.unwrap();

    let r = run(&s, &["--json", "inspect", "orders:7"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v = &json_lines(&r.stdout)[0];
    assert_eq!(v["kind"], "lock");
    assert_eq!(v["locked"], true);
    let ttl = v["ttl_ms"].as_i64().unwrap();
    assert!((25_000..=30_000).contains(&ttl), "ttl_ms {ttl}");
    let holders = v["holders"].as_array().unwrap();
    assert_eq!(holders.len(), 1);
    assert_eq!(holders[0]["client_id"], c.id());
    assert_eq!(holders[0]["owner_id"], 42);
    assert_eq!(holders[0]["count"], 2);
    assert_eq!(holders[0]["role"], "exclusive");
    assert_eq!(holders[0]["field"], g1.field());

    let r = run(&s, &["inspect", "orders:7"]).await;
    assert_eq!(r.code, Some(0));
    assert!(r.stdout.contains("kind     lock"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains(&format!("client {}  owner 42  count 2  exclusive", c.id())),
        "{}",
        r.stdout
    );

    // the read-write lock: two readers, each with its timeout key
    let r = run(&s, &["--json", "inspect", "orders:rw"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v = &json_lines(&r.stdout)[0];
    assert_eq!(v["kind"], "read-write");
    assert_eq!(v["mode"], "read");
    let holders = v["holders"].as_array().unwrap();
    assert_eq!(holders.len(), 2, "{v}");
    for (h, owner) in holders.iter().zip([5, 6]) {
        assert_eq!(h["role"], "read");
        assert_eq!(h["owner_id"], owner);
        let timeouts = h["timeouts"].as_array().unwrap();
        assert_eq!(timeouts.len(), 1, "{h}");
        assert_eq!(
            timeouts[0]["key"],
            format!("{{orders:rw}}:{}:{owner}:rwlock_timeout:1", c.id())
        );
        let t = timeouts[0]["ttl_ms"].as_i64().unwrap();
        assert!((25_000..=30_000).contains(&t), "timeout key TTL {t}");
    }

    let r = run(&s, &["inspect", "orders:free"]).await;
    assert_eq!(r.code, Some(0));
    assert!(r.stdout.contains("not locked"), "{}", r.stdout);

    let r = run(&s, &["list", "orders:*"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "header + 2 locks: {}", r.stdout);
    assert!(lines[0].starts_with("NAME"), "{}", r.stdout);
    assert!(
        lines[1].starts_with("orders:7 ") && lines[1].contains(&format!("{} x2", g1.field())),
        "{}",
        r.stdout
    );
    assert!(
        lines[2].starts_with("orders:rw ") && lines[2].contains("read-write"),
        "{}",
        r.stdout
    );
    assert!(
        !r.stdout.contains("orders:meta") && !r.stdout.contains("orders:count"),
        "{}",
        r.stdout
    );

    let r = run(&s, &["--json", "list"]).await;
    let names: Vec<Value> = json_lines(&r.stdout)
        .into_iter()
        .map(|v| v["name"].clone())
        .collect();
    assert_eq!(names, vec![Value::from("orders:7"), Value::from("orders:rw")]);

    for g in [g2, g1] {
        g.unlock().await.unwrap();
    }
    r1.unlock().await.unwrap();
    r2.unlock().await.unwrap();
    let r = run(&s, &["list"]).await;
    assert_eq!(r.stdout.trim(), "no locks found");
}

#[tokio::test]
async fn inspect_reports_fair_queue_and_fencing_token() {
    // Write the state Redisson's RFairLock and RFencedLock leave (`docs/protocol.md`, "Fair
    // lock" and "Fenced lock") with plain commands, including a waiter whose deadline already
    // passed (a dead waiter, or a client whose clock is behind).
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    let holder = "0d7c6a53-8f43-4c5e-9a1c-2b8d1f0e4a11";
    let waiter = "7a9e0c21-4b3d-4f6a-8e2c-9d1b5f7a3c42";
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let _: () = raw.hset("fair", format!("{holder}:1"), 1).await.unwrap();
    let _: () = raw.pexpire("fair", 30_000).await.unwrap();
    let q = "redisson_lock_queue:{fair}";
    let z = "redisson_lock_timeout:{fair}";
    let _: () = raw
        .rpush(
            q,
            &[
                format!("{waiter}:7"),
                format!("{waiter}:8"),
                format!("{waiter}:9"),
            ],
        )
        .await
        .unwrap();
    let _: () = raw.zadd(z, format!("{waiter}:7"), now + 300_000).await.unwrap();
    let _: () = raw.zadd(z, format!("{waiter}:8"), now + 600_000).await.unwrap();
    let _: () = raw.zadd(z, format!("{waiter}:9"), now - 60_000).await.unwrap();
    let _: () = raw.hset("fenced", format!("{holder}:3"), 1).await.unwrap();
    let _: () = raw.pexpire("fenced", 30_000).await.unwrap();
    let _: () = raw.set("redisson_lock_token:{fenced}", 17).await.unwrap();

    let r = run(&s, &["--json", "inspect", "fair"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v = &json_lines(&r.stdout)[0];
    assert_eq!(v["kind"], "fair");
    assert_eq!(v["holders"][0]["owner_id"], 1);
    let queue = v["queue"].as_array().unwrap();
    assert_eq!(queue.len(), 3);
    assert_eq!(queue[0]["field"], format!("{waiter}:7"));
    assert_eq!(queue[0]["owner_id"], 7);
    assert_eq!(queue[0]["deadline_ms"], now + 300_000);
    assert_eq!(queue[1]["deadline_ms"], now + 600_000);
    // measured against Redis' TIME, not this machine's clock
    let ahead = queue[0]["deadline_from_redis_time_ms"].as_i64().unwrap();
    assert!((295_000..=300_500).contains(&ahead), "{ahead}");
    assert!(queue[2]["deadline_from_redis_time_ms"].as_i64().unwrap() < -55_000);

    let r = run(&s, &["inspect", "fair"]).await;
    assert!(r.stdout.contains("queue    3 waiting"), "{}", r.stdout);
    assert!(r.stdout.contains("by Redis' clock: stale"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains(&format!("1. client {waiter}  owner 7  deadline ")),
        "{}",
        r.stdout
    );

    let r = run(&s, &["--json", "inspect", "fenced"]).await;
    let v = &json_lines(&r.stdout)[0];
    assert_eq!(v["kind"], "fenced");
    assert_eq!(v["token"], 17);
    assert_eq!(v["holders"][0]["owner_id"], 3);

    let r = run(&s, &["--json", "list"]).await;
    let kinds: Vec<(Value, Value)> = json_lines(&r.stdout)
        .into_iter()
        .map(|v| (v["name"].clone(), v["kind"].clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (Value::from("fair"), Value::from("fair")),
            (Value::from("fenced"), Value::from("fenced"))
        ]
    );
}

#[tokio::test]
async fn inspect_names_what_makes_a_hash_not_a_lock() {
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    let field = "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:57";
    let _: () = raw.hset("half-lock", field, "abc").await.unwrap();
    let r = run(&s, &["inspect", "half-lock"]).await;
    for needle in ["half-lock", field, "`abc`", "not a lock"] {
        assert_one_line_error(&r, "inspect of a hash with a non-numeric count", needle);
    }
    let _: () = raw
        .hset_multiple("bad-mode", &[("mode", "sideways"), (field, "1")])
        .await
        .unwrap();
    let r = run(&s, &["inspect", "bad-mode"]).await;
    for needle in ["bad-mode", "`mode`", "sideways"] {
        assert_one_line_error(&r, "inspect of a hash with a bad mode", needle);
    }
    // `list` skips both, as it skips any hash that is not a lock
    let r = run(&s, &["--json", "list"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(json_lines(&r.stdout).is_empty(), "{}", r.stdout);
}

/// `list` against one node of a 3-master cluster finds the locks of every master (SCAN runs on
/// each master; one node's SCAN only sees the keys of its slots).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_walks_every_master_of_a_cluster() {
    let cluster = common::cluster::Cluster::start(3, 0).await;
    let c = Client::builder().cluster(cluster.urls()).build().await.unwrap();
    let mut want = Vec::new();
    let mut guards = Vec::new();
    for i in 0..12 {
        let name = format!("cl:lock:{i:02}");
        guards.push(c.lock(&name).unwrap().lock().await.unwrap());
        want.push(name);
    }
    // a fenced lock is recognised by its token counter, which lives on the lock's master too
    let (_, fenced) = c
        .fenced_lock("cl:fenced")
        .unwrap()
        .lock_and_get_token()
        .await
        .unwrap();
    let rw = c
        .read_write_lock("cl:rw")
        .unwrap()
        .write_lock()
        .lock()
        .await
        .unwrap();
    want.extend(["cl:fenced".to_owned(), "cl:rw".to_owned()]);
    want.sort();
    // the locks really are spread: every master holds some of them
    for n in &cluster.nodes[..cluster.masters] {
        let mut raw = n.conn().await;
        let size: i64 = redis::cmd("DBSIZE").query_async(&mut raw).await.unwrap();
        assert!(size > 0, "master {} holds none of the locks", n.port);
    }

    for node in &cluster.nodes {
        let r = run_url(&node.url(), &["--json", "list", "cl:*"]).await;
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let v = json_lines(&r.stdout);
        let names: Vec<String> = v
            .iter()
            .map(|l| l["name"].as_str().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(names, want, "list through node {}", node.port);
        let kinds: Vec<&str> = v.iter().filter_map(|l| l["kind"].as_str()).collect();
        assert!(
            kinds.contains(&"fenced") && kinds.contains(&"read-write"),
            "{kinds:?}"
        );
    }
    let r = run_url(&cluster.nodes[1].url(), &["list", "cl:lock:0*"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 11, "header + 10 locks: {}", r.stdout);

    for g in guards {
        g.unlock().await.unwrap();
    }
    fenced.unlock().await.unwrap();
    rw.unlock().await.unwrap();
    let r = run_url(&cluster.nodes[2].url(), &["list", "cl:*"]).await;
    assert_eq!(r.stdout.trim(), "no locks found");
}
