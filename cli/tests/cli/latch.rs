//! Counts (`RCountDownLatch`, and `RSemaphore`'s permits, which look the same in Redis): what
//! `inspect` and `watch` show of a name that holds an integer, set by this crate's own latch.

use std::time::Duration;

use redis::AsyncCommands;
use redisson_lock::Config;
use serde_json::Value;

use super::{assert_one_line_error, json_lines, run, Spawned};
use crate::common::{eventually, RedisServer};

const CHANNEL: &str = "redisson_countdownlatch__channel__{batch:7}";

async fn numsub(raw: &redis::aio::MultiplexedConnection, channel: &str) -> i64 {
    let (_, n): (String, i64) = redis::cmd("PUBSUB")
        .arg("NUMSUB")
        .arg(channel)
        .query_async(&mut raw.clone())
        .await
        .unwrap();
    n
}

async fn inspect_json(s: &RedisServer, args: &[&str]) -> Value {
    let r = run(s, args).await;
    assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
    let lines = json_lines(&r.stdout);
    assert_eq!(lines.len(), 1, "{args:?}: {}", r.stdout);
    lines[0].clone()
}

#[tokio::test]
async fn inspect_shows_a_latch_count_and_who_waits_on_it() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let raw = s.conn().await;
    let latch = c.count_down_latch("batch:7").unwrap();
    assert!(latch.try_set_count(3).await.unwrap());

    // a name that holds an integer is shown as a count, without asking for it
    let v = inspect_json(&s, &["--json", "inspect", "batch:7"]).await;
    assert_eq!(v["name"], "batch:7");
    assert_eq!(v["kind"], "count");
    assert_eq!(v["exists"], true);
    assert_eq!(v["count"], 3);
    assert_eq!(v["ttl_ms"], -1, "Redisson's latch has no TTL: {v}");
    assert_eq!(v["channels"]["latch"]["channel"], CHANNEL);
    assert_eq!(v["channels"]["latch"]["subscribers"], 0, "{v}");
    assert_eq!(v["channels"]["semaphore"]["channel"], "redisson_sc:{batch:7}");
    assert_eq!(v["channels"]["semaphore"]["subscribers"], 0, "{v}");
    assert_eq!(v["listeners"], "nobody", "{v}");

    let r = run(&s, &["inspect", "batch:7"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for needle in [
        "kind     count: a count-down latch or a semaphore",
        "count    3",
        "ttl      no expiry",
        &format!("channel  {CHANNEL}  latch      subscribers 0"),
        "likely   cannot tell",
    ] {
        assert!(r.stdout.contains(needle), "{needle:?} in:\n{}", r.stdout);
    }

    // a waiter subscribes to the latch channel while the count is above zero
    let waiter = {
        let latch = latch.clone();
        tokio::spawn(async move { latch.wait_for(Duration::from_secs(60)).await })
    };
    eventually(Duration::from_secs(10), "the waiter subscribes", || {
        let raw = raw.clone();
        async move { numsub(&raw, CHANNEL).await == 1 }
    })
    .await;
    let v = inspect_json(&s, &["--json", "inspect", "batch:7"]).await;
    assert_eq!(v["count"], 3);
    assert_eq!(v["channels"]["latch"]["subscribers"], 1, "{v}");
    assert_eq!(v["channels"]["semaphore"]["subscribers"], 0, "{v}");
    assert_eq!(v["listeners"], "latch", "{v}");
    let r = run(&s, &["inspect", "batch:7"]).await;
    assert!(
        r.stdout.contains("subscribers 1") && r.stdout.contains("likely   a count-down latch"),
        "{}",
        r.stdout
    );

    for left in [2, 1, 0] {
        assert_eq!(latch.count_down().await.unwrap(), left);
    }
    let woke = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the waiter wakes at zero")
        .unwrap()
        .unwrap();
    assert!(woke, "the waiter saw the count reach zero");
    eventually(Duration::from_secs(10), "the waiter unsubscribes", || {
        let raw = raw.clone();
        async move { numsub(&raw, CHANNEL).await == 0 }
    })
    .await;

    // at zero the latch is deleted: nothing is there, so by default nothing is locked either;
    // `--latch` shows the (absent) count
    let r = run(&s, &["inspect", "batch:7"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("not locked"), "{}", r.stdout);
    let v = inspect_json(&s, &["--json", "inspect", "--latch", "batch:7"]).await;
    assert_eq!(v["kind"], "count");
    assert_eq!(v["exists"], false, "{v}");
    assert_eq!(v["count"], 0, "{v}");
    assert_eq!(v["ttl_ms"], -2, "{v}");
    assert_eq!(v["channels"]["latch"]["subscribers"], 0, "{v}");
    let r = run(&s, &["inspect", "--latch", "batch:7"]).await;
    assert!(
        r.stdout.contains("state    absent") && r.stdout.contains("count    0"),
        "{}",
        r.stdout
    );
}

#[tokio::test]
async fn a_string_that_is_not_a_count_is_still_not_a_lock() {
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    let _: () = raw.set("greeting", "hello").await.unwrap();
    let _: () = raw.hset("meta", "color", "blue").await.unwrap();
    let _: () = raw.set("permits", "-2").await.unwrap();

    let r = run(&s, &["inspect", "greeting"]).await;
    assert_one_line_error(&r, "inspect of a text string", "key `greeting` is not a lock");
    let r = run(&s, &["inspect", "--latch", "greeting"]).await;
    assert_one_line_error(
        &r,
        "inspect --latch of a text string",
        "`greeting` holds `hello`, not a count",
    );
    let r = run(&s, &["inspect", "--latch", "meta"]).await;
    assert_one_line_error(&r, "inspect --latch of a hash", "key `meta` is not a count");
    let r = run(&s, &["inspect", "meta"]).await;
    assert_one_line_error(&r, "inspect of a hash that is not a lock", "not a lock");

    // a semaphore's permits may go below zero: still a count
    let v = inspect_json(&s, &["--json", "inspect", "permits"]).await;
    assert_eq!(
        (v["kind"].clone(), v["count"].clone()),
        ("count".into(), (-2).into())
    );
}

fn event(line: &str, event: &str) -> Option<Value> {
    serde_json::from_str::<Value>(line)
        .ok()
        .filter(|v| v["event"] == event)
}

#[tokio::test]
async fn watch_shows_latch_messages_and_count_changes() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let latch = c.count_down_latch("batch:7").unwrap();
    assert!(latch.try_set_count(2).await.unwrap());

    let mut w = Spawned::start(&s, &["--json", "watch", "batch:7", "--interval", "100ms"]);
    let watching = w.event(Duration::from_secs(20), "watching").await;
    assert_eq!(watching["kind"], "count", "{watching}");
    assert_eq!(watching["channels"][0], CHANNEL, "{watching}");
    let state = w.event(Duration::from_secs(20), "state").await;
    assert_eq!(
        (state["exists"].clone(), state["count"].clone()),
        (true.into(), 2.into())
    );

    // 2 -> 1 publishes nothing: the sample shows it
    latch.count_down().await.unwrap();
    let state = w.event(Duration::from_secs(20), "state").await;
    assert_eq!(state["count"], 1, "{state}");

    // 1 -> 0 publishes `0` and deletes the latch; the message and the sample that sees the
    // deletion may come in either order
    latch.count_down().await.unwrap();
    let is_msg = |l: &str, payload: &str| {
        event(l, "message").is_some_and(|m| m["channel"] == CHANNEL && m["message"] == payload)
    };
    w.line_where(Duration::from_secs(20), "the absent count", |l| {
        event(l, "state").is_some_and(|v| v["exists"] == false && v["count"] == 0)
    })
    .await;
    if !w.seen.iter().any(|l| is_msg(l, "0")) {
        w.line_where(Duration::from_secs(20), "message 0", |l| is_msg(l, "0"))
            .await;
    }

    // a new count publishes `1`
    assert!(latch.try_set_count(5).await.unwrap());
    w.line_where(Duration::from_secs(20), "the new count", |l| {
        event(l, "state").is_some_and(|v| v["count"] == 5)
    })
    .await;
    if !w.seen.iter().any(|l| is_msg(l, "1")) {
        w.line_where(Duration::from_secs(20), "message 1", |l| is_msg(l, "1"))
            .await;
    }
    let m = w
        .seen
        .iter()
        .find_map(|l| event(l, "message").filter(|m| m["message"] == "1"))
        .unwrap();
    assert_eq!(m["sharded"], false, "{m}");
    assert!(m["meaning"].as_str().unwrap().contains("count set"), "{m}");
    w.signal("-INT");
    assert_eq!(w.exit_code(Duration::from_secs(20)).await, Some(0));

    // human output
    let mut w = Spawned::start(&s, &["watch", "batch:7"]);
    w.line_where(Duration::from_secs(20), "the watching line", |l| {
        l.starts_with("watching batch:7 (count: a count-down latch or a semaphore) on ")
    })
    .await;
    w.line_where(Duration::from_secs(20), "the state line", |l| {
        l.contains("state   batch:7: count 5")
    })
    .await;
    latch.delete().await.unwrap();
    let line = w
        .line_where(Duration::from_secs(20), "the deletion message", |l| {
            l.contains("message 1")
        })
        .await;
    assert!(line.contains(CHANNEL), "{line}");
    w.signal("-INT");
    assert_eq!(w.exit_code(Duration::from_secs(20)).await, Some(0));
}
