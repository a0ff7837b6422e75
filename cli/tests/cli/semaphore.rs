//! Semaphores (`RSemaphore`, `RPermitExpirableSemaphore`): what `inspect` and `watch` show of
//! them, set up with this crate's semaphores or raw commands; and what they refuse.

use std::time::Duration;

use redis::AsyncCommands;
use redisson_lock::{Config, PermitId};
use serde_json::Value;

use super::{assert_json_error, assert_one_line_error, json_lines, run, Spawned};
use crate::common::{eventually, RedisServer};

async fn inspect_json(s: &RedisServer, args: &[&str]) -> Value {
    let r = run(s, args).await;
    assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
    let lines = json_lines(&r.stdout);
    assert_eq!(lines.len(), 1, "{args:?}: {}", r.stdout);
    lines[0].clone()
}

async fn inspect_text(s: &RedisServer, args: &[&str], needles: &[&str]) -> String {
    let r = run(s, args).await;
    assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
    for needle in needles {
        assert!(
            r.stdout.contains(needle),
            "{args:?}: {needle:?} in:\n{}",
            r.stdout
        );
    }
    r.stdout
}

/// Writes Redis has applied so far (`rdb_changes_since_last_save`: every write counts, reads
/// never do).
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

async fn numsub(raw: &redis::aio::MultiplexedConnection, channel: &str) -> i64 {
    let (_, n): (String, i64) = redis::cmd("PUBSUB")
        .arg("NUMSUB")
        .arg(channel)
        .query_async(&mut raw.clone())
        .await
        .unwrap();
    n
}

#[tokio::test]
async fn inspect_shows_held_permits_and_their_leases_without_reclaiming() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;
    let sem = c.permit_expirable_semaphore("sem:gpu").unwrap();
    assert!(sem.try_set_permits(4).await.unwrap());
    let short = sem
        .acquire_with_lease(Duration::from_millis(200))
        .await
        .map(|g| g.forget()[0])
        .unwrap();
    let long = sem
        .acquire_with_lease(Duration::from_secs(600))
        .await
        .map(|g| g.forget()[0])
        .unwrap();
    let unleased = sem.acquire().await.map(|g| g.forget()[0]).unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await; // `short`'s lease ends; nobody reclaims it

    let before = (writes(&mut raw).await, lock_scripts(&mut raw).await);
    // an integer beside a `{NAME}:timeout` set is taken for a permit-expirable semaphore
    let v = inspect_json(&s, &["--json", "inspect", "sem:gpu"]).await;
    assert_eq!(v["name"], "sem:gpu");
    assert_eq!(v["kind"], "expirable-semaphore", "{v}");
    assert_eq!(v["exists"], true);
    assert_eq!(v["available"], 1, "{v}");
    assert_eq!(v["held"], 3, "{v}");
    assert_eq!(v["ended"], 1, "{v}");
    assert_eq!(v["capacity"], 4, "{v}");
    assert_eq!(v["ttl_ms"], -1, "{v}");
    assert_eq!(v["leases_key"], "{sem:gpu}:timeout");
    assert_eq!(v["leases_ttl_ms"], -1);
    assert_eq!(v["permits_truncated"], false);
    assert_eq!(v["channel"]["channel"], "redisson_sc:{sem:gpu}");
    assert_eq!(v["channel"]["subscribers"], 0);
    // earliest lease end first, no lease last
    let permits = v["permits"].as_array().unwrap();
    let ids: Vec<&str> = permits.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [short.to_string(), long.to_string(), unleased.to_string()]);
    assert_eq!(permits[0]["ended"], true, "{v}");
    assert!(permits[0]["lease_remaining_ms"].as_i64().unwrap() < 0, "{v}");
    assert_eq!(permits[1]["ended"], false);
    let left = permits[1]["lease_remaining_ms"].as_i64().unwrap();
    assert!((590_000..=600_000).contains(&left), "{v}");
    assert_eq!(
        permits[1]["lease_end_ms"].as_i64().unwrap() - v["redis_time_ms"].as_i64().unwrap(),
        left
    );
    assert_eq!(permits[2]["lease_end_ms"], Value::Null);
    assert_eq!(permits[2]["lease_remaining_ms"], Value::Null);
    assert_eq!(permits[2]["ended"], false);

    let text = inspect_text(
        &s,
        &["inspect", "sem:gpu"],
        &[
            "kind       permit-expirable semaphore (RPermitExpirableSemaphore)",
            "available  1",
            "held       3 under ids, 1 of them with an ended lease (not reclaimed yet",
            "capacity   4 (available + held)",
            "permits    {sem:gpu}:timeout  ttl no expiry",
            "channel    redisson_sc:{sem:gpu}  subscribers 0",
        ],
    )
    .await;
    assert!(text.contains(&format!("  1. {short}  lease ended ")), "{text}");
    assert!(text.contains(&format!("  2. {long}  lease ends in ")), "{text}");
    assert!(
        text.contains(&format!("  3. {unleased}  no lease: held until released")),
        "{text}"
    );
    // --semaphore and --expirable-semaphore show the same
    for flag in ["--semaphore", "--expirable-semaphore"] {
        let w = inspect_json(&s, &["--json", "inspect", flag, "sem:gpu"]).await;
        assert_eq!(
            (w["kind"].clone(), w["held"].clone()),
            (v["kind"].clone(), 3.into())
        );
    }

    // only read: the ended lease is still held, nothing was written, no script ran
    assert_eq!(
        (writes(&mut raw).await, lock_scripts(&mut raw).await),
        before,
        "inspect wrote to Redis"
    );
    let held: u64 = raw.zcard("{sem:gpu}:timeout").await.unwrap();
    assert_eq!(held, 3);

    // a client's count gives the ended lease back; inspect then shows it available
    assert_eq!(sem.available_permits().await.unwrap(), 2);
    let v = inspect_json(&s, &["--json", "inspect", "sem:gpu"]).await;
    assert_eq!(
        (
            v["available"].clone(),
            v["held"].clone(),
            v["ended"].clone(),
            v["capacity"].clone()
        ),
        (2.into(), 2.into(), 0.into(), 4.into())
    );

    // a hash tag in the name: `N:timeout` and `redisson_sc:N`
    let tagged = c.permit_expirable_semaphore("{tenant}pool").unwrap();
    tagged.try_set_permits(1).await.unwrap();
    let id = tagged.acquire().await.map(|g| g.forget()[0]).unwrap();
    let v = inspect_json(&s, &["--json", "inspect", "{tenant}pool"]).await;
    assert_eq!(v["leases_key"], "{tenant}pool:timeout", "{v}");
    assert_eq!(v["channel"]["channel"], "redisson_sc:{tenant}pool", "{v}");
    assert_eq!(v["permits"][0]["id"], id.to_string());
}

#[tokio::test]
async fn inspect_shows_a_plain_semaphore_when_asked_and_its_waiters() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let raw = s.conn().await;
    let jobs = c.semaphore("sem:jobs").unwrap();
    assert!(jobs.try_set_permits(5).await.unwrap());
    assert!(jobs
        .try_acquire(2)
        .await
        .map(|g| g.map(|g| g.forget()).is_some())
        .unwrap());

    // an integer alone could be a latch: the count view says so and names the flags
    inspect_text(
        &s,
        &["inspect", "sem:jobs"],
        &["kind     count", "count    3", "--latch or --semaphore say which"],
    )
    .await;

    let v = inspect_json(&s, &["--json", "inspect", "--semaphore", "sem:jobs"]).await;
    assert_eq!(v["kind"], "semaphore", "{v}");
    assert_eq!(
        (v["exists"].clone(), v["available"].clone()),
        (true.into(), 3.into())
    );
    // an RSemaphore records no holders
    for field in ["held", "ended", "capacity", "leases_key", "leases_ttl_ms"] {
        assert_eq!(v[field], Value::Null, "{field}: {v}");
    }
    assert_eq!(v["permits"], serde_json::json!([]));
    assert_eq!(v["channel"]["channel"], "redisson_sc:{sem:jobs}");
    assert_eq!(v["channel"]["subscribers"], 0);
    inspect_text(
        &s,
        &["inspect", "--semaphore", "sem:jobs"],
        &[
            "kind       semaphore (RSemaphore)",
            "state      set",
            "available  3",
            "ttl        no expiry",
            "held       not recorded",
        ],
    )
    .await;

    // a waiter for more permits than there are listens on the semaphore channel
    let waiter = {
        let jobs = jobs.clone();
        tokio::spawn(async move { jobs.acquire(4).await.map(|g| g.forget()) })
    };
    eventually(Duration::from_secs(10), "the waiter subscribes", || {
        let raw = raw.clone();
        async move { numsub(&raw, "redisson_sc:{sem:jobs}").await == 1 }
    })
    .await;
    let v = inspect_json(&s, &["--json", "inspect", "--semaphore", "sem:jobs"]).await;
    assert_eq!(v["channel"]["subscribers"], 1, "{v}");
    inspect_text(
        &s,
        &["inspect", "sem:jobs"],
        &["likely   a semaphore: its channel has subscribers (waiters); --semaphore"],
    )
    .await;
    jobs.release(1).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the waiter gets 4 permits")
        .unwrap()
        .unwrap();

    // --expirable-semaphore: nothing held under ids, so the capacity is what is available
    let v = inspect_json(&s, &["--json", "inspect", "--expirable-semaphore", "sem:jobs"]).await;
    assert_eq!(v["kind"], "expirable-semaphore");
    assert_eq!(
        (v["available"].clone(), v["held"].clone(), v["capacity"].clone()),
        (0.into(), 0.into(), 0.into())
    );

    // a TTL set with the permits
    let brief = c.semaphore("sem:brief").unwrap();
    assert!(brief
        .try_set_permits_with_ttl(2, Duration::from_secs(60))
        .await
        .unwrap());
    let v = inspect_json(&s, &["--json", "inspect", "--semaphore", "sem:brief"]).await;
    let ttl = v["ttl_ms"].as_i64().unwrap();
    assert!((50_000..=60_000).contains(&ttl), "{v}");

    // a missing semaphore: 0 permits, absent; without a flag: nothing is locked
    let v = inspect_json(&s, &["--json", "inspect", "--semaphore", "sem:none"]).await;
    assert_eq!(
        (v["exists"].clone(), v["available"].clone(), v["ttl_ms"].clone()),
        (false.into(), 0.into(), (-2).into())
    );
    let v = inspect_json(&s, &["--json", "inspect", "--expirable-semaphore", "sem:none"]).await;
    assert_eq!((v["held"].clone(), v["capacity"].clone()), (0.into(), 0.into()));
    inspect_text(
        &s,
        &["inspect", "--semaphore", "sem:none"],
        &["state      absent: no semaphore under this name (0 permits available)"],
    )
    .await;
    inspect_text(&s, &["inspect", "sem:none"], &["state    not locked"]).await;

    // one kind at a time
    let r = run(&s, &["--json", "inspect", "--latch", "--semaphore", "sem:jobs"]).await;
    assert_json_error(&r, "two kinds", "invalid_argument", "cannot be used with");
    let r = run(&s, &["watch", "--semaphore", "--expirable-semaphore", "sem:jobs"]).await;
    assert_one_line_error(&r, "two kinds", "cannot be used with");
}

#[tokio::test]
async fn what_is_not_a_semaphore_is_refused() {
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    let _: () = raw.hset("meta", "color", "blue").await.unwrap();
    let _: () = raw.set("greeting", "hello").await.unwrap();
    let _: () = raw.set("half", "1.5").await.unwrap();

    for flag in ["--semaphore", "--expirable-semaphore"] {
        let r = run(&s, &["inspect", flag, "meta"]).await;
        assert_one_line_error(&r, "a hash", "key `meta` is not a semaphore");
        let r = run(&s, &["inspect", flag, "greeting"]).await;
        assert_one_line_error(&r, "a text", "`greeting` holds `hello`, not a count");
        let r = run(&s, &["inspect", flag, "half"]).await;
        assert_one_line_error(&r, "a fraction", "`half` holds `1.5`, not a count");
        let r = run(&s, &["watch", flag, "meta"]).await;
        assert_one_line_error(&r, "watch of a hash", "key `meta` is not a semaphore");
    }

    // a member of the held permits that is not a 16-byte id
    let _: () = raw.set("sem:bad", "2").await.unwrap();
    let _: () = raw.zadd("{sem:bad}:timeout", "abc", 5).await.unwrap();
    let why = "`{sem:bad}:timeout` (the held permits of semaphore `sem:bad`) has the member `abc` \
               (3 bytes), not a permit id (16 bytes)";
    for args in [
        &["inspect", "sem:bad"][..],
        &["inspect", "--semaphore", "sem:bad"],
        &["inspect", "--expirable-semaphore", "sem:bad"],
        &["watch", "sem:bad"],
    ] {
        let r = run(&s, args).await;
        assert_one_line_error(&r, &format!("{args:?}"), why);
    }
    let r = run(&s, &["--json", "inspect", "sem:bad"]).await;
    assert_json_error(&r, "json", "failed", why);
    // binary bytes are shown in hex
    let _: () = raw.set("sem:bin", "2").await.unwrap();
    let _: () = raw.zadd("{sem:bin}:timeout", vec![0u8; 17], 5).await.unwrap();
    let r = run(&s, &["inspect", "--semaphore", "sem:bin"]).await;
    assert_one_line_error(
        &r,
        "17 bytes",
        "has the member 0x0000000000000000000000000000000000 (17 bytes)",
    );
    // `--latch` still shows the count alone
    let v = inspect_json(&s, &["--json", "inspect", "--latch", "sem:bad"]).await;
    assert_eq!(
        (v["kind"].clone(), v["count"].clone()),
        ("count".into(), 2.into())
    );

    // the held permits' key of another type
    let _: () = raw.set("sem:odd", "2").await.unwrap();
    let _: () = raw.hset("{sem:odd}:timeout", "a", "b").await.unwrap();
    let r = run(&s, &["inspect", "--semaphore", "sem:odd"]).await;
    assert_one_line_error(
        &r,
        "leases of another type",
        "key `{sem:odd}:timeout` (where semaphore `sem:odd` keeps its held permits) is not a sorted set",
    );
    // ... is no sign of a semaphore: without a flag, a count
    let v = inspect_json(&s, &["--json", "inspect", "sem:odd"]).await;
    assert_eq!(v["kind"], "count");

    // held permits whose count is gone: still a permit-expirable semaphore
    let id: PermitId = "00112233445566778899aabbccddeeff".parse().unwrap();
    let _: () = raw
        .zadd(
            "{sem:orphan}:timeout",
            id.as_bytes().to_vec(),
            922_337_203_685_477_i64,
        )
        .await
        .unwrap();
    let v = inspect_json(&s, &["--json", "inspect", "sem:orphan"]).await;
    assert_eq!(v["kind"], "expirable-semaphore", "{v}");
    assert_eq!(
        (v["exists"].clone(), v["available"].clone(), v["held"].clone()),
        (false.into(), 0.into(), 1.into())
    );
    assert_eq!(v["permits"][0]["id"], "00112233445566778899aabbccddeeff");
    inspect_text(
        &s,
        &["inspect", "sem:orphan"],
        &["state      absent, but permits are held under ids"],
    )
    .await;
    // ... but a set of something else under such a name is not
    let _: () = raw.zadd("{plain}:timeout", "job-1", 5).await.unwrap();
    inspect_text(&s, &["inspect", "plain"], &["state    not locked"]).await;
}

fn event(line: &str, event: &str) -> Option<Value> {
    serde_json::from_str::<Value>(line)
        .ok()
        .filter(|v| v["event"] == event)
}

#[tokio::test]
async fn watch_shows_permit_changes_and_semaphore_messages() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let sem = c.permit_expirable_semaphore("sem:w").unwrap();
    assert!(sem.try_set_permits(2).await.unwrap());
    const CHANNEL: &str = "redisson_sc:{sem:w}";

    let mut w = Spawned::start(
        &s,
        &[
            "--json",
            "watch",
            "--expirable-semaphore",
            "sem:w",
            "--interval",
            "100ms",
        ],
    );
    let watching = w.event(Duration::from_secs(20), "watching").await;
    assert_eq!(watching["kind"], "expirable-semaphore", "{watching}");
    assert_eq!(watching["channels"][0], CHANNEL, "{watching}");
    let state = w.event(Duration::from_secs(20), "state").await;
    assert_eq!(
        (
            state["available"].clone(),
            state["held"].clone(),
            state["capacity"].clone()
        ),
        (2.into(), 0.into(), 2.into())
    );
    assert!(state.get("channel").is_none(), "no subscriber counts: {state}");

    let is_permit = |l: &str, change: &str, id: &PermitId| {
        event(l, "permit").is_some_and(|p| p["change"] == change && p["id"] == id.to_string())
    };
    // acquired (no message: nobody needs waking)
    let first = sem
        .acquire_with_lease(Duration::from_millis(300))
        .await
        .map(|g| g.forget()[0])
        .unwrap();
    let line = w
        .line_where(Duration::from_secs(20), "first acquired", |l| {
            is_permit(l, "acquired", &first)
        })
        .await;
    let p = event(&line, "permit").unwrap();
    assert!(p["lease_end_ms"].is_i64(), "{p}");
    let state = w.event(Duration::from_secs(20), "state").await;
    assert_eq!(
        (state["available"].clone(), state["held"].clone()),
        (1.into(), 1.into())
    );

    // the lease ends: the sample sees it (Redis does not change)
    w.line_where(Duration::from_secs(20), "first's lease ended", |l| {
        is_permit(l, "lease_ended", &first)
    })
    .await;

    // the next acquisition reclaims it first (publishing the total) and takes a permit
    let second = sem
        .try_acquire()
        .await
        .map(|g| g.map(|g| g.forget()[0]))
        .unwrap()
        .expect("a permit");
    w.line_where(Duration::from_secs(20), "first reclaimed", |l| {
        is_permit(l, "reclaimed", &first)
    })
    .await;
    if !w.seen.iter().any(|l| is_permit(l, "acquired", &second)) {
        w.line_where(Duration::from_secs(20), "second acquired", |l| {
            is_permit(l, "acquired", &second)
        })
        .await;
    }
    let is_msg = |l: &str, payload: &str| {
        event(l, "message").is_some_and(|m| m["channel"] == CHANNEL && m["message"] == payload)
    };
    if !w.seen.iter().any(|l| is_msg(l, "2")) {
        w.line_where(Duration::from_secs(20), "message 2", |l| is_msg(l, "2"))
            .await;
    }

    // released: the message carries the new total
    sem.release(second).await.unwrap();
    w.line_where(Duration::from_secs(20), "second released", |l| {
        is_permit(l, "released", &second)
    })
    .await;
    if !w.seen.iter().any(|l| is_msg(l, "2")) {
        w.line_where(Duration::from_secs(20), "message 2", |l| is_msg(l, "2"))
            .await;
    }
    let m = w
        .seen
        .iter()
        .find_map(|l| event(l, "message").filter(|m| m["channel"] == CHANNEL))
        .unwrap();
    assert!(
        m["meaning"]
            .as_str()
            .unwrap()
            .contains("2 permit(s) available or given back"),
        "{m}"
    );
    w.signal("-INT");
    assert_eq!(w.exit_code(Duration::from_secs(20)).await, Some(0));

    // human output, a plain semaphore
    let jobs = c.semaphore("sem:jobs").unwrap();
    assert!(jobs.try_set_permits(3).await.unwrap());
    let mut w = Spawned::start(&s, &["watch", "--semaphore", "sem:jobs"]);
    w.line_where(Duration::from_secs(20), "the watching line", |l| {
        l.starts_with("watching sem:jobs (semaphore) on redisson_sc:{sem:jobs}")
    })
    .await;
    w.line_where(Duration::from_secs(20), "the state line", |l| {
        l.contains("state   sem:jobs: 3 available (semaphore)")
    })
    .await;
    jobs.release(1).await.unwrap();
    let line = w
        .line_where(Duration::from_secs(20), "the release message", |l| {
            l.contains("message 4 on redisson_sc:{sem:jobs}")
        })
        .await;
    assert!(line.contains("waiters try to acquire"), "{line}");
    w.line_where(Duration::from_secs(20), "the new count", |l| {
        l.contains("state   sem:jobs: 4 available")
    })
    .await;
    w.signal("-INT");
    assert_eq!(w.exit_code(Duration::from_secs(20)).await, Some(0));

    // a count (the kind unknown) is watched on both channels
    let mut w = Spawned::start(&s, &["--json", "watch", "sem:jobs"]);
    let watching = w.event(Duration::from_secs(20), "watching").await;
    assert_eq!(watching["kind"], "count", "{watching}");
    assert!(
        watching["channels"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "redisson_sc:{sem:jobs}"),
        "{watching}"
    );
    w.event(Duration::from_secs(20), "state").await;
    jobs.release(1).await.unwrap();
    let m = w.event(Duration::from_secs(20), "message").await;
    assert_eq!(m["channel"], "redisson_sc:{sem:jobs}");
    assert_eq!(m["message"], "5");
    w.signal("-INT");
    assert_eq!(w.exit_code(Duration::from_secs(20)).await, Some(0));
}
