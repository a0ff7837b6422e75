//! A lock held by real Redisson (the compat-tests harness in a JVM): `inspect` and `list` report
//! it, and a `hold` waits for it and gets it once Java releases it.

use std::time::Duration;

use redis::AsyncCommands;
use serde_json::Value;

use super::{epoch_ms, json_lines, run, Spawned};
use crate::common::java::{self, Jvm, CALL_LIMIT};
use crate::common::{eventually, RedisServer};

/// Runs `cmd` on Java thread `worker` and returns its whole response line (`threadId` with the
/// `result`); panics unless the command succeeded within [`CALL_LIMIT`].
async fn call(j: &mut Jvm, worker: &str, cmd: &str) -> Value {
    let seq = j.send(worker, cmd).unwrap_or_else(|e| panic!("{e}"));
    let v = j
        .reply(seq, CALL_LIMIT)
        .await
        .unwrap_or_else(|e| panic!("`{cmd}`: {e}"));
    assert_eq!(v["ok"], true, "{cmd}: {v}");
    v
}

#[tokio::test]
async fn inspect_and_list_report_a_lock_held_by_redisson_java() {
    let Some(harness) = java::locate_or_skip("inspect_and_list_report_a_lock_held_by_redisson_java") else {
        return;
    };
    let s = RedisServer::start();
    let (mut h, ready) = harness
        .start(&["--url", &s.url(), "--exit-grace-ms", "2000"])
        .await;
    let client_id = ready["clientId"].as_str().unwrap().to_owned();
    let locked = call(&mut h, "w1", "lock java:order").await;
    let tid = locked["threadId"].as_u64().unwrap();
    call(&mut h, "w1", "lock java:order").await; // re-entry: count 2
    let read = call(&mut h, "w2", "readLock java:doc").await;
    let rtid = read["threadId"].as_u64().unwrap();

    let r = run(&s, &["--json", "inspect", "java:order"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v = &json_lines(&r.stdout)[0];
    assert_eq!(v["kind"], "lock");
    let holder = &v["holders"][0];
    assert_eq!(holder["client_id"], client_id.as_str());
    assert_eq!(holder["owner_id"], tid);
    assert_eq!(holder["count"], 2);
    let ttl = v["ttl_ms"].as_i64().unwrap();
    assert!((20_000..=30_000).contains(&ttl), "ttl {ttl}");

    let r = run(&s, &["--json", "inspect", "java:doc"]).await;
    let v = &json_lines(&r.stdout)[0];
    assert_eq!(v["kind"], "read-write");
    assert_eq!(v["holders"][0]["owner_id"], rtid);
    assert_eq!(v["holders"][0]["role"], "read");
    assert_eq!(
        v["holders"][0]["timeouts"][0]["key"],
        format!("{{java:doc}}:{client_id}:{rtid}:rwlock_timeout:1")
    );

    let r = run(&s, &["list", "java:*"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains(&format!("{client_id}:{tid} x2")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("java:doc") && r.stdout.contains("(read)"),
        "{}",
        r.stdout
    );

    // A Rust `hold` waits for the Java holder and gets the lock once Java releases it.
    let mut hold = Spawned::start(&s, &["--json", "hold", "java:order", "--for", "50ms"]);
    let mut raw = s.conn().await;
    eventually(
        Duration::from_secs(20),
        "the hold subscribes to the unlock channel",
        || {
            let mut raw = raw.clone();
            async move {
                let v: Vec<(String, i64)> = redis::cmd("PUBSUB")
                    .arg("NUMSUB")
                    .arg("redisson_lock__channel:{java:order}")
                    .query_async(&mut raw)
                    .await
                    .unwrap();
                v[0].1 >= 1
            }
        },
    )
    .await;
    call(&mut h, "w1", "unlock java:order").await;
    call(&mut h, "w1", "unlock java:order").await;
    hold.event(Duration::from_secs(20), "acquired").await;
    hold.event(Duration::from_secs(20), "released").await;
    assert_eq!(hold.exit_code(Duration::from_secs(20)).await, Some(0));
    let exists: i64 = raw.exists("java:order").await.unwrap();
    assert_eq!(exists, 0);

    call(&mut h, "w2", "readUnlock java:doc").await;
    call(&mut h, "w1", "exit").await;
    let _ = h.wait(Duration::from_secs(20)).await;
}

/// A Redisson fair waiter queued behind a Rust holder: `force-unlock --yes` runs the fair lock's
/// own script, which wakes the head of the queue on its own channel, so the Java waiter gets the
/// lock at once (not when the holder's 30 s lease would have run out).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_unlock_of_a_fair_lock_wakes_a_redisson_fair_waiter() {
    let Some(harness) = java::locate_or_skip("force_unlock_of_a_fair_lock_wakes_a_redisson_fair_waiter")
    else {
        return;
    };
    let s = RedisServer::start();
    let (mut h, _) = harness
        .start(&["--url", &s.url(), "--exit-grace-ms", "2000"])
        .await;
    let c = s.client(redisson_lock::Config::default()).await;
    let holder = c.fair_lock("java:fair").unwrap().lock().await.unwrap();
    let seq = h.send("w1", "fairLock java:fair").unwrap();
    let raw = s.conn().await;
    eventually(Duration::from_secs(20), "the Java waiter queues", || {
        let mut raw = raw.clone();
        async move {
            let q: Vec<String> = raw
                .lrange("redisson_lock_queue:{java:fair}", 0, -1)
                .await
                .unwrap();
            q.len() == 1
        }
    })
    .await;
    let r = run(&s, &["--json", "force-unlock", "java:fair", "--yes"]).await;
    let exited_ms = epoch_ms();
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v = &json_lines(&r.stdout)[0];
    assert_eq!(v["kind"], "fair", "{v}");
    assert_eq!(v["removed"], true, "{v}");
    let published = v["published"].as_str().unwrap();
    assert!(
        published.starts_with("redisson_lock__channel:{java:fair}:"),
        "the head's own channel: {published}"
    );
    let reply = h.reply(seq, CALL_LIMIT).await.unwrap();
    assert_eq!(reply["ok"], true, "{reply}");
    let acquired_ms = reply["ts_ms"].as_u64().unwrap();
    assert!(
        acquired_ms <= exited_ms + 1_000,
        "the Java waiter got the lock {} ms after force-unlock exited",
        acquired_ms as i64 - exited_ms as i64
    );
    call(&mut h, "w1", "fairUnlock java:fair").await;
    drop(holder);
    call(&mut h, "w1", "exit").await;
    let _ = h.wait(Duration::from_secs(20)).await;
}
