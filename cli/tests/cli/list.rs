//! `list --synchronizers`: counts (count-down latches, `RSemaphore`s, any integer) and
//! permit-expirable semaphores beside the locks, labelled no further than Redis shows; `list`
//! without the flag shows the locks only.

use std::time::Duration;

use redis::AsyncCommands;
use redisson_lock::{Client, Config};
use serde_json::Value;

use super::{json_lines, run, run_url, Run};
use crate::common::{self, eventually, RedisServer};

const NOBODY: &str = "count: latch or semaphore (nobody listening)";

async fn numsub(raw: &redis::aio::MultiplexedConnection, channel: &str) -> i64 {
    let (_, n): (String, i64) = redis::cmd("PUBSUB")
        .arg("NUMSUB")
        .arg(channel)
        .query_async(&mut raw.clone())
        .await
        .unwrap();
    n
}

/// Writes Redis has applied so far (every write counts, reads never do).
async fn writes(raw: &mut redis::aio::MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("persistence")
        .query_async(raw)
        .await
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("rdb_changes_since_last_save:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("rdb_changes_since_last_save in INFO persistence")
}

/// Scripts that ran so far (`EVAL` and `EVALSHA` calls that did not fail, from `INFO
/// commandstats`): the library's connect-time probe for a cluster behind one address is an
/// `EVALSHA` of a script that does not exist (answered `NOSCRIPT`: nothing runs), so failed calls
/// are not counted (servers before 7.0 do not count them apart: all calls then).
async fn lock_scripts(raw: &mut redis::aio::MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(raw)
        .await
        .expect("INFO commandstats");
    let field = |stats: &str, name: &str| {
        stats
            .split(',')
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0)
    };
    info.lines()
        .filter_map(|l| {
            l.strip_prefix("cmdstat_evalsha:")
                .or_else(|| l.strip_prefix("cmdstat_eval:"))
        })
        .map(|stats| field(stats, "calls") - field(stats, "failed_calls") - field(stats, "rejected_calls"))
        .sum()
}

fn ok(r: &Run, what: &str) {
    assert_eq!(r.code, Some(0), "{what}: {}", r.stderr);
    assert!(r.stderr.is_empty(), "{what}: {}", r.stderr);
}

/// The synchronizers' table of a `list --synchronizers` run (after the blank line), as
/// (name, kind, state, ttl, listeners) per row, with its header checked.
fn sync_rows(stdout: &str) -> Vec<[String; 5]> {
    let (_, second) = stdout
        .split_once("\n\n")
        .unwrap_or_else(|| panic!("two tables: {stdout}"));
    let lines: Vec<&str> = second.lines().collect();
    let header = lines[0];
    for h in ["NAME", "KIND", "STATE", "TTL", "LISTENERS"] {
        assert!(header.contains(h), "{header}");
    }
    // every column starts where its header does
    let starts: Vec<usize> = ["KIND", "STATE", "TTL", "LISTENERS"]
        .iter()
        .map(|h| header.find(h).unwrap())
        .collect();
    lines[1..]
        .iter()
        .map(|l| {
            let cut = |a: usize, b: Option<usize>| {
                match b {
                    Some(b) => &l[a..b],
                    None => &l[a..],
                }
                .trim()
                .to_owned()
            };
            [
                cut(0, Some(starts[0])),
                cut(starts[0], Some(starts[1])),
                cut(starts[1], Some(starts[2])),
                cut(starts[2], Some(starts[3])),
                cut(starts[3], None),
            ]
        })
        .collect()
}

#[tokio::test]
async fn list_shows_counts_and_semaphores_only_when_asked() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;

    let lock = c.lock("app:lock").unwrap().with_owner(3);
    let guard = lock.lock().await.unwrap();
    // a latch with a waiter
    let latch = c.count_down_latch("app:latch").unwrap();
    assert!(latch.try_set_count(2).await.unwrap());
    let latch_waiter = {
        let latch = latch.clone();
        tokio::spawn(async move { latch.wait_for(Duration::from_secs(60)).await })
    };
    // a semaphore with a waiter (for more permits than there are)
    let sem = c.semaphore("app:sem").unwrap();
    assert!(sem.try_set_permits(1).await.unwrap());
    let sem_waiter = {
        let sem = sem.clone();
        tokio::spawn(async move { sem.acquire(2).await.map(|g| g.forget()) })
    };
    // a permit-expirable semaphore with a leased permit
    let pes = c.permit_expirable_semaphore("app:pes").unwrap();
    assert!(pes.try_set_permits(3).await.unwrap());
    let leased = pes
        .acquire_with_lease(Duration::from_secs(600))
        .await
        .map(|g| g.forget()[0])
        .unwrap();
    // an application's counter, a string that is not an integer, and a count elsewhere
    let _: () = raw.set("app:counter", "7").await.unwrap();
    let _: () = raw.set("app:text", "hello").await.unwrap();
    let _: () = raw.set("other:count", "1").await.unwrap();
    for channel in [
        "redisson_countdownlatch__channel__{app:latch}",
        "redisson_sc:{app:sem}",
    ] {
        eventually(Duration::from_secs(10), "the waiter subscribes", || {
            let raw = raw.clone();
            async move { numsub(&raw, channel).await == 1 }
        })
        .await;
    }

    // without the flag: the lock only, as ever
    let plain = run(&s, &["list", "app:*"]).await;
    ok(&plain, "list");
    let lines: Vec<&str> = plain.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "header + the lock: {}", plain.stdout);
    assert!(
        lines[0].starts_with("NAME") && lines[1].starts_with("app:lock "),
        "{}",
        plain.stdout
    );
    let r = run(&s, &["--json", "list", "app:*"]).await;
    let names: Vec<Value> = json_lines(&r.stdout).iter().map(|v| v["name"].clone()).collect();
    assert_eq!(names, [Value::from("app:lock")]);

    // with it: the same lock table, then the counts and semaphores
    let r = run(&s, &["list", "app:*", "--synchronizers"]).await;
    ok(&r, "list --synchronizers");
    // (but for the TTL, which runs down)
    let without_ttl = |table: &str| -> Vec<String> {
        table
            .lines()
            .map(|l| l.rsplit_once("  ").map_or(l, |(rest, _)| rest).to_owned())
            .collect()
    };
    let (locks, _) = r.stdout.split_once("\n\n").expect("two tables");
    assert_eq!(
        without_ttl(locks),
        without_ttl(&plain.stdout),
        "the locks' table first, unchanged:\n{}",
        r.stdout
    );
    let rows = sync_rows(&r.stdout);
    let row = |name: &str| -> [String; 5] {
        rows.iter()
            .find(|r| r[0] == name)
            .unwrap_or_else(|| panic!("{name} listed: {rows:?}"))
            .clone()
    };
    let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        names,
        ["app:counter", "app:latch", "app:pes", "app:sem"],
        "{}",
        r.stdout
    );
    assert_eq!(
        row("app:counter"),
        [
            "app:counter",
            NOBODY,
            "count 7",
            "no expiry",
            "latch 0, semaphore 0"
        ]
        .map(String::from)
    );
    assert_eq!(
        row("app:latch"),
        [
            "app:latch",
            "count: latch",
            "count 2",
            "no expiry",
            "latch 1, semaphore 0"
        ]
        .map(String::from)
    );
    assert_eq!(
        row("app:sem"),
        [
            "app:sem",
            "count: semaphore",
            "count 1",
            "no expiry",
            "latch 0, semaphore 1"
        ]
        .map(String::from)
    );
    let [_, kind, state, ttl, listeners] = row("app:pes");
    assert_eq!(
        (kind.as_str(), ttl.as_str(), listeners.as_str()),
        ("expirable-semaphore", "no expiry", "semaphore 0")
    );
    assert!(
        state.starts_with("2 available, 1 held, earliest lease end in 59") && state.ends_with('s'),
        "{state}"
    );
    assert!(!r.stdout.contains("app:text"), "{}", r.stdout);

    // JSON: the lock, then one object per entry as `inspect --json` prints it
    let r = run(&s, &["--json", "list", "--synchronizers", "app:*"]).await;
    ok(&r, "--json list --synchronizers");
    let v = json_lines(&r.stdout);
    let got: Vec<(&str, &str)> = v
        .iter()
        .map(|o| (o["name"].as_str().unwrap(), o["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("app:lock", "lock"),
            ("app:counter", "count"),
            ("app:latch", "count"),
            ("app:pes", "expirable-semaphore"),
            ("app:sem", "count"),
        ]
    );
    let listeners: Vec<&Value> = v[1..].iter().map(|o| &o["listeners"]).collect();
    assert_eq!(
        listeners,
        [
            &Value::from("nobody"),
            &Value::from("latch"),
            &Value::Null,
            &Value::from("semaphore")
        ]
    );
    for o in &v {
        let name = o["name"].as_str().unwrap();
        let i = run(&s, &["--json", "inspect", name]).await;
        ok(&i, "inspect");
        let mut want = json_lines(&i.stdout).remove(0);
        let mut got = o.clone();
        // what changes between two reads: the clock and TTLs
        for x in [&mut want, &mut got] {
            for volatile in ["redis_time_ms", "ttl_ms", "permits"] {
                x.as_object_mut().unwrap().remove(volatile);
            }
        }
        assert_eq!(got, want, "{name}: list and inspect agree");
    }
    let pes_json = &v[3];
    assert_eq!(
        (&pes_json["available"], &pes_json["held"], &pes_json["capacity"]),
        (&Value::from(2), &Value::from(1), &Value::from(3))
    );
    assert_eq!(pes_json["permits"][0]["id"], leased.to_string());
    assert_eq!(pes_json["permits"][0]["ended"], false);

    // the pattern filters the counts too
    let r = run(&s, &["--json", "list", "--synchronizers"]).await;
    let names: Vec<String> = json_lines(&r.stdout)
        .iter()
        .map(|o| o["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.contains(&"other:count".to_owned()), "{names:?}");
    let r = run(&s, &["list", "--synchronizers", "app:?atch"]).await;
    ok(&r, "a pattern");
    assert_eq!(
        sync_rows(&r.stdout)
            .iter()
            .map(|r| r[0].clone())
            .collect::<Vec<_>>(),
        ["app:latch"]
    );
    assert!(r.stdout.starts_with("no locks found\n\n"), "{}", r.stdout);
    let r = run(&s, &["list", "--synchronizers", "nothing:*"]).await;
    assert_eq!(r.stdout, "no locks found\n\nno counts or semaphores found\n");

    for left in [1, 0] {
        assert_eq!(latch.count_down().await.unwrap(), left);
    }
    sem.release(1).await.unwrap();
    for w in [
        tokio::time::timeout(Duration::from_secs(10), latch_waiter)
            .await
            .map(|r| r.unwrap().map(|_| ())),
        tokio::time::timeout(Duration::from_secs(10), sem_waiter)
            .await
            .map(|r| r.unwrap()),
    ] {
        w.expect("the waiter is done in time").unwrap();
    }
    guard.unlock().await.unwrap();
}

/// Raw state only (no client that could write meanwhile): `list --synchronizers` writes
/// nothing and runs no script; subscribers alone decide the label, also when both channels
/// have some; the integers locks keep beside their hash are not counts.
#[tokio::test]
async fn list_synchronizers_only_reads() {
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    let holder = "0d7c6a53-8f43-4c5e-9a1c-2b8d1f0e4a11";
    let _: () = raw.hset("k:lock", format!("{holder}:1"), 1).await.unwrap();
    let _: () = raw.set("redisson_lock_token:{k:lock}", 4).await.unwrap();
    let _: () = raw
        .set(format!("{{k:rw}}:{holder}:2:rwlock_timeout:1"), 1)
        .await
        .unwrap();
    let _: () = raw.set("k:both", "-2").await.unwrap();
    let _: () = raw.set_ex("k:brief", "5", 100).await.unwrap();
    let _: () = raw.set("k:pi", "3.14").await.unwrap();
    let _: () = raw.set("k:pes", "0").await.unwrap();
    let _: () = raw
        .zadd("{k:pes}:timeout", vec![0xabu8; 16], 1_000)
        .await
        .unwrap();
    // an integer beside a set that does not hold permit ids is a count
    let _: () = raw.set("k:odd", "1").await.unwrap();
    let _: () = raw.zadd("{k:odd}:timeout", "member", 1).await.unwrap();
    let sub = redis::Client::open(s.url()).unwrap();
    let mut listener = sub.get_async_pubsub().await.unwrap();
    listener
        .subscribe("redisson_countdownlatch__channel__{k:both}")
        .await
        .unwrap();
    listener.subscribe("redisson_sc:{k:both}").await.unwrap();

    let before = (writes(&mut raw).await, lock_scripts(&mut raw).await);
    let r = run(&s, &["list", "--synchronizers", "*"]).await;
    ok(&r, "list --synchronizers");
    let rows = sync_rows(&r.stdout);
    let got: Vec<(&str, &str, &str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str(), r[2].as_str(), r[4].as_str()))
        .collect();
    assert_eq!(
        got[..3],
        [
            (
                "k:both",
                "count: latch or semaphore (both channels listened on)",
                "count -2",
                "latch 1, semaphore 1"
            ),
            ("k:brief", NOBODY, "count 5", "latch 0, semaphore 0"),
            ("k:odd", NOBODY, "count 1", "latch 0, semaphore 0"),
        ],
        "{}",
        r.stdout
    );
    assert_eq!(got.len(), 4, "{}", r.stdout);
    assert_eq!(
        (got[3].0, got[3].1, got[3].3),
        ("k:pes", "expirable-semaphore", "semaphore 0")
    );
    assert!(
        got[3]
            .2
            .starts_with("0 available, 1 held (1 lease(s) ended, not reclaimed yet), earliest lease end ")
            && got[3].2.ends_with("s ago"),
        "{}",
        got[3].2
    );
    let ttl = &rows[1][3];
    assert!(ttl.ends_with('s') && ttl.starts_with("9"), "{ttl}");
    let r = run(&s, &["--json", "list", "--synchronizers"]).await;
    ok(&r, "--json");
    let v = json_lines(&r.stdout);
    assert_eq!(v.len(), 5, "the lock and four entries: {}", r.stdout);
    assert_eq!(v[1]["listeners"], "both");
    assert_eq!(v[1]["channels"]["latch"]["subscribers"], 1);
    assert_eq!(v[4]["ended"], 1);
    assert_eq!(
        (writes(&mut raw).await, lock_scripts(&mut raw).await),
        before,
        "list wrote to Redis"
    );
    let held: u64 = raw.zcard("{k:pes}:timeout").await.unwrap();
    assert_eq!(held, 1, "the ended lease was not reclaimed");
}

/// In a cluster, every master is scanned and the subscribers of every master are counted: a
/// latch's waiter (sharded subscription, on the master of its slot) and a classic subscriber on
/// another master.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_synchronizers_walks_every_master_of_a_cluster() {
    let cluster = common::cluster::Cluster::start(3, 0).await;
    let c = Client::builder().cluster(cluster.urls()).build().await.unwrap();
    let mut want = Vec::new();
    for i in 0..9 {
        let latch = c.count_down_latch(&format!("cl:count:{i}")).unwrap();
        assert!(latch.try_set_count(i + 1).await.unwrap());
        want.push(format!("cl:count:{i}"));
    }
    let pes = c.permit_expirable_semaphore("cl:pes").unwrap();
    assert!(pes.try_set_permits(2).await.unwrap());
    pes.acquire_with_lease(Duration::from_secs(600))
        .await
        .map(|g| g.forget()[0])
        .unwrap();
    want.push("cl:pes".to_owned());
    want.sort();
    let latch = c.count_down_latch("cl:count:0").unwrap();
    let waiter = {
        let latch = latch.clone();
        tokio::spawn(async move { latch.wait_for(Duration::from_secs(60)).await })
    };
    // a classic subscriber of another count's semaphore channel, on every master
    let mut classic = Vec::new();
    for n in &cluster.nodes[..cluster.masters] {
        let mut p = redis::Client::open(n.url())
            .unwrap()
            .get_async_pubsub()
            .await
            .unwrap();
        p.subscribe("redisson_sc:{cl:count:1}").await.unwrap();
        classic.push(p);
    }
    let latch_channel = "redisson_countdownlatch__channel__{cl:count:0}";
    let nodes: Vec<String> = cluster.nodes.iter().map(|n| n.url()).collect();
    eventually(Duration::from_secs(10), "the latch waiter subscribes", || {
        let nodes = nodes.clone();
        async move {
            let mut n = 0;
            for url in nodes {
                let mut conn = redis::Client::open(url)
                    .unwrap()
                    .get_multiplexed_async_connection()
                    .await
                    .unwrap();
                for sub in ["NUMSUB", "SHARDNUMSUB"] {
                    // (SHARDNUMSUB is unknown before Redis 7.0: nobody is subscribed that way)
                    let r: redis::RedisResult<(String, i64)> = redis::cmd("PUBSUB")
                        .arg(sub)
                        .arg(latch_channel)
                        .query_async(&mut conn)
                        .await;
                    n += r.map_or(0, |(_, k)| k);
                }
            }
            n == 1
        }
    })
    .await;

    for node in [&cluster.nodes[0], &cluster.nodes[2]] {
        let r = run_url(&node.url(), &["--json", "list", "--synchronizers", "cl:*"]).await;
        ok(&r, "list --synchronizers in a cluster");
        let v = json_lines(&r.stdout);
        let names: Vec<&str> = v.iter().map(|o| o["name"].as_str().unwrap()).collect();
        assert_eq!(names, want, "through node {}", node.port);
        let by_name = |n: &str| v.iter().find(|o| o["name"] == n).unwrap().clone();
        assert_eq!(by_name("cl:count:0")["listeners"], "latch", "{}", r.stdout);
        assert_eq!(by_name("cl:count:0")["count"], 1);
        let one = by_name("cl:count:1");
        assert_eq!(one["listeners"], "semaphore", "{one}");
        assert_eq!(
            one["channels"]["semaphore"]["subscribers"], 3,
            "summed over the masters: {one}"
        );
        assert_eq!(by_name("cl:count:2")["listeners"], "nobody");
        let p = by_name("cl:pes");
        assert_eq!(
            (p["kind"].as_str(), p["held"].as_u64()),
            (Some("expirable-semaphore"), Some(1))
        );
    }
    assert_eq!(latch.count_down().await.unwrap(), 0);
    tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the waiter wakes")
        .unwrap()
        .unwrap();
}

/// The objects of a map entry (Redisson's `RMap.getLock(key)` & co, named
/// `{map}:<hash>:<suffix>`) say which map and getter they are, in `list` (both tables), in
/// `inspect` and in JSON; other names say nothing of the kind.
#[tokio::test]
async fn map_entry_objects_name_their_map() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    // the names `getMap("orders", StringCodec.INSTANCE)` gives the key "k"'s objects
    let entry = "{orders}:zGp2RnUc2cZchMHly8iqUA";
    let lock_name = format!("{entry}:lock");
    let sem_name = format!("{entry}:permitexpirablesemaphore");
    let guard = c.lock(&lock_name).unwrap().lock().await.unwrap();
    let plain = c.lock("{orders}:plain").unwrap().lock().await.unwrap();
    let pes = c.permit_expirable_semaphore(&sem_name).unwrap();
    assert!(pes.try_set_permits(1).await.unwrap());

    let r = run(&s, &["list", "{orders}:*", "--synchronizers"]).await;
    ok(&r, "list");
    let row = |name: &str| {
        r.stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row for {name}: {}", r.stdout))
            .to_owned()
    };
    assert!(
        row(&lock_name).contains("getLock(key) of map `orders`"),
        "{}",
        r.stdout
    );
    assert!(!row("{orders}:plain").contains("of map"), "{}", r.stdout);
    assert!(
        row(&sem_name).contains("getPermitExpirableSemaphore(key) of map `orders`"),
        "{}",
        r.stdout
    );

    let r = run(&s, &["inspect", &lock_name]).await;
    ok(&r, "inspect");
    assert!(
        r.stdout
            .lines()
            .any(|l| l == "entry    getLock(key) of map `orders`"),
        "{}",
        r.stdout
    );
    let r = run(&s, &["--json", "inspect", &lock_name]).await;
    let v = &json_lines(&r.stdout)[0];
    assert_eq!(v["map_entry"]["map"], "orders", "{v}");
    assert_eq!(v["map_entry"]["getter"], "getLock", "{v}");
    assert_eq!(v["map_entry"]["key_hash"], "zGp2RnUc2cZchMHly8iqUA", "{v}");
    let r = run(&s, &["--json", "inspect", "{orders}:plain"]).await;
    assert!(
        json_lines(&r.stdout)[0].get("map_entry").is_none(),
        "{}",
        r.stdout
    );
    let r = run(&s, &["inspect", &sem_name, "--semaphore"]).await;
    ok(&r, "inspect --semaphore");
    assert!(
        r.stdout
            .lines()
            .any(|l| l == "entry      getPermitExpirableSemaphore(key) of map `orders`"),
        "{}",
        r.stdout
    );

    guard.unlock().await.unwrap();
    plain.unlock().await.unwrap();
    c.shutdown().await.unwrap();
}
