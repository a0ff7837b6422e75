//! The `redisson-lock` binary against real redis-server processes (and a real Redisson in a JVM
//! for the Java-held lock test).

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::java;
use common::{eventually, uuid_field_regex, RawSubscriber, RedisServer};
use redis::AsyncCommands;
use redisson_lock::{Client, Config};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const BIN: &str = env!("CARGO_BIN_EXE_redisson-lock");

/// A finished run of the binary.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the binary to completion (at most 60 s) with `--url` of `s`.
async fn run(s: &RedisServer, args: &[&str]) -> Run {
    run_url(&s.url(), args).await
}

async fn run_url(url: &str, args: &[&str]) -> Run {
    let child = Command::new(BIN)
        .arg("--url")
        .arg(url)
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run the redisson-lock binary");
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("redisson-lock {args:?} did not finish within 60 s"))
        .expect("wait for redisson-lock");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A long-running invocation (hold, watch) whose stdout is read line by line.
struct Spawned {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    seen: Vec<String>,
}

impl Spawned {
    fn start(s: &RedisServer, args: &[&str]) -> Spawned {
        let mut child = Command::new(BIN)
            .arg("--url")
            .arg(s.url())
            .args(args)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the redisson-lock binary");
        let stdout = child.stdout.take().expect("piped stdout");
        Spawned {
            child,
            lines: BufReader::new(stdout).lines(),
            seen: Vec::new(),
        }
    }

    /// The next stdout line that satisfies `pred` (earlier lines are kept in `seen`).
    async fn line_where(&mut self, limit: Duration, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let next = tokio::time::timeout_at(deadline.into(), self.lines.next_line()).await;
            match next {
                Ok(Ok(Some(line))) => {
                    self.seen.push(line.clone());
                    if pred(&line) {
                        return line;
                    }
                }
                Ok(Ok(None)) => panic!("stdout closed before {what}; lines so far: {:#?}", self.seen),
                Ok(Err(e)) => panic!("reading stdout failed before {what}: {e}"),
                Err(_) => panic!(
                    "timed out after {limit:?} waiting for {what}; lines so far: {:#?}",
                    self.seen
                ),
            }
        }
    }

    /// The next JSON line whose `event` is `event`.
    async fn event(&mut self, limit: Duration, event: &str) -> Value {
        let line = self
            .line_where(limit, &format!("a JSON line with event `{event}`"), |l| {
                serde_json::from_str::<Value>(l)
                    .map(|v| v["event"] == event)
                    .unwrap_or(false)
            })
            .await;
        serde_json::from_str(&line).expect("valid JSON")
    }

    fn signal(&self, sig: &str) {
        let pid = self.child.id().expect("still running");
        let ok = std::process::Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()
            .expect("run kill")
            .success();
        assert!(ok, "kill {sig} {pid} failed");
    }

    async fn exit_code(mut self, limit: Duration) -> Option<i32> {
        tokio::time::timeout(limit, self.child.wait())
            .await
            .expect("process exits in time")
            .expect("wait")
            .code()
    }
}

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}

async fn hgetall(c: &mut redis::aio::MultiplexedConnection, key: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = c.hgetall(key).await.unwrap();
    v.sort();
    v
}

#[tokio::test]
async fn hold_creates_the_redisson_hash_and_releases_on_ctrl_c() {
    let s = RedisServer::start();
    let mut raw = s.conn().await;

    let mut hold = Spawned::start(&s, &["--json", "hold", "order:42"]);
    let acquired = hold.event(Duration::from_secs(20), "acquired").await;
    assert_eq!(acquired["name"], "order:42");
    let field = acquired["field"].as_str().expect("field").to_owned();
    assert!(uuid_field_regex().is_match(&field), "field {field:?}");
    assert!(acquired["ts_ms"].as_u64().is_some(), "{acquired}");

    let t: String = redis::cmd("TYPE")
        .arg("order:42")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(t, "hash");
    assert_eq!(
        hgetall(&mut raw, "order:42").await,
        vec![(field.clone(), "1".to_owned())]
    );
    let pttl: i64 = raw.pttl("order:42").await.unwrap();
    assert!(
        (25_000..=30_000).contains(&pttl),
        "PTTL in watchdog mode = {pttl}"
    );

    hold.signal("-INT");
    let released = hold.event(Duration::from_secs(20), "released").await;
    assert_eq!(released["field"], field.as_str());
    assert_eq!(hold.exit_code(Duration::from_secs(20)).await, Some(0));
    let exists: i64 = raw.exists("order:42").await.unwrap();
    assert_eq!(exists, 0, "released on Ctrl-C");

    // --lease: no watchdog, the TTL is the lease; --for releases by itself.
    let r = run(&s, &["hold", "leased", "--lease", "5s", "--for", "300ms"]).await;
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("acquired leased"), "{}", r.stdout);
    assert!(r.stdout.contains("released leased"), "{}", r.stdout);

    let mut hold = Spawned::start(&s, &["hold", "leased2", "--lease", "5s", "--owner", "77"]);
    hold.line_where(Duration::from_secs(20), "acquired", |l| l.starts_with("acquired"))
        .await;
    let fields = hgetall(&mut raw, "leased2").await;
    assert_eq!(fields.len(), 1);
    assert!(
        fields[0].0.ends_with(":77"),
        "--owner 77 gives field {:?}",
        fields[0].0
    );
    let pttl: i64 = raw.pttl("leased2").await.unwrap();
    assert!((3_000..=5_000).contains(&pttl), "PTTL with --lease 5s = {pttl}");
    hold.signal("-TERM");
    assert_eq!(hold.exit_code(Duration::from_secs(20)).await, Some(0));

    // --write / --read: the read-write lock's hash shape
    let mut w = Spawned::start(&s, &["--json", "hold", "doc", "--write", "--owner", "3"]);
    let acquired = w.event(Duration::from_secs(20), "acquired").await;
    let wfield = acquired["field"].as_str().unwrap().to_owned();
    assert!(wfield.ends_with(":3:write"), "{wfield}");
    assert_eq!(
        hgetall(&mut raw, "doc").await,
        vec![(wfield, "1".to_owned()), ("mode".to_owned(), "write".to_owned())]
    );
    w.signal("-INT");
    assert_eq!(w.exit_code(Duration::from_secs(20)).await, Some(0));
    let mut r = Spawned::start(&s, &["--json", "hold", "doc", "--read", "--owner", "4"]);
    let acquired = r.event(Duration::from_secs(20), "acquired").await;
    let rfield = acquired["field"].as_str().unwrap().to_owned();
    assert!(rfield.ends_with(":4"), "{rfield}");
    assert_eq!(
        hgetall(&mut raw, "doc").await,
        vec![
            (rfield.clone(), "1".to_owned()),
            ("mode".to_owned(), "read".to_owned())
        ]
    );
    let t: i64 = raw
        .pttl(format!("{{doc}}:{rfield}:rwlock_timeout:1"))
        .await
        .unwrap();
    assert!((25_000..=30_000).contains(&t), "read timeout key PTTL {t}");
    r.signal("-INT");
    assert_eq!(r.exit_code(Duration::from_secs(20)).await, Some(0));
    let exists: i64 = raw.exists("doc").await.unwrap();
    assert_eq!(exists, 0);
}

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

/// A Redisson 4.7.0 harness JVM (compat-tests), driven over stdin/stdout.
struct Harness {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    client_id: String,
    seq: u64,
}

/// The harness jar ([`java::locate`]), or `None` (after a loud message) when Java tooling is
/// missing outside CI. In CI (`CI=true`) missing tooling fails the test.
fn harness_jar() -> Option<PathBuf> {
    match java::locate() {
        Ok(h) => Some(h.jar),
        Err(why) if java::ci() => panic!("{why} (CI=true: failing instead of skipping)"),
        Err(why) => {
            eprintln!(
                "\n!!!!!!!!!! SKIPPED: {why}; install a JDK 17+ and Maven to run this test !!!!!!!!!!\n"
            );
            None
        }
    }
}

impl Harness {
    async fn start(jar: &Path, url: &str) -> Harness {
        let mut child = Command::new("java")
            .arg("-jar")
            .arg(jar)
            .args(["--url", url, "--exit-grace-ms", "2000"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start java");
        let stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("harness ready within 60 s")
            .expect("read")
            .expect("a ready line");
        let v: Value = serde_json::from_str(&ready).expect("JSON ready line");
        assert_eq!(v["event"], "ready", "{ready}");
        Harness {
            child,
            stdin,
            lines,
            client_id: v["clientId"].as_str().unwrap().to_owned(),
            seq: 0,
        }
    }

    /// Sends one command and waits for its response.
    async fn call(&mut self, worker: &str, cmd: &str) -> Value {
        self.seq += 1;
        let seq = self.seq;
        self.stdin
            .write_all(format!("{seq} {worker} {cmd}\n").as_bytes())
            .await
            .unwrap();
        self.stdin.flush().await.unwrap();
        loop {
            let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("no response to `{cmd}` within 30 s"))
                .unwrap()
                .expect("harness stdout open");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["seq"] == seq {
                assert_eq!(v["ok"], true, "{cmd}: {line}");
                return v;
            }
        }
    }
}

#[tokio::test]
async fn inspect_and_list_report_a_lock_held_by_redisson_java() {
    let Some(jar) = harness_jar() else { return };
    let s = RedisServer::start();
    let mut h = Harness::start(&jar, &s.url()).await;
    let locked = h.call("w1", "lock java:order").await;
    let tid = locked["threadId"].as_u64().unwrap();
    h.call("w1", "lock java:order").await; // re-entry: count 2
    let read = h.call("w2", "readLock java:doc").await;
    let rtid = read["threadId"].as_u64().unwrap();

    let r = run(&s, &["--json", "inspect", "java:order"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v = &json_lines(&r.stdout)[0];
    assert_eq!(v["kind"], "lock");
    let holder = &v["holders"][0];
    assert_eq!(holder["client_id"], h.client_id.as_str());
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
        format!("{{java:doc}}:{}:{rtid}:rwlock_timeout:1", h.client_id)
    );

    let r = run(&s, &["list", "java:*"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains(&format!("{}:{tid} x2", h.client_id)),
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
    h.call("w1", "unlock java:order").await;
    h.call("w1", "unlock java:order").await;
    hold.event(Duration::from_secs(20), "acquired").await;
    hold.event(Duration::from_secs(20), "released").await;
    assert_eq!(hold.exit_code(Duration::from_secs(20)).await, Some(0));
    let exists: i64 = raw.exists("java:order").await.unwrap();
    assert_eq!(exists, 0);

    h.call("w2", "readUnlock java:doc").await;
    h.call("w1", "exit").await;
    let _ = tokio::time::timeout(Duration::from_secs(20), h.child.wait()).await;
}

#[tokio::test]
async fn hold_wait_exits_2_when_not_acquired_in_time() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let g = c.lock("busy").unwrap().lock().await.unwrap();

    let started = Instant::now();
    let r = run(&s, &["hold", "busy", "--wait", "400ms"]).await;
    let took = started.elapsed();
    assert_eq!(r.code, Some(2), "stdout {} stderr {}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("not acquired"), "{}", r.stdout);
    assert!(took >= Duration::from_millis(400), "gave up after {took:?}");

    let r = run(&s, &["--json", "hold", "busy", "--wait", "100ms"]).await;
    assert_eq!(r.code, Some(2));
    assert_eq!(json_lines(&r.stdout)[0]["event"], "not-acquired");

    // Ctrl-C while still waiting: exit 130, nothing acquired
    let mut waiting = Spawned::start(&s, &["--json", "hold", "busy"]);
    let mut raw = s.conn().await;
    eventually(Duration::from_secs(20), "the waiting hold subscribes", || {
        let mut raw = raw.clone();
        async move {
            let v: Vec<(String, i64)> = redis::cmd("PUBSUB")
                .arg("NUMSUB")
                .arg("redisson_lock__channel:{busy}")
                .query_async(&mut raw)
                .await
                .unwrap();
            v[0].1 >= 1
        }
    })
    .await;
    waiting.signal("-INT");
    waiting.event(Duration::from_secs(20), "interrupted").await;
    assert_eq!(waiting.exit_code(Duration::from_secs(20)).await, Some(130));

    // still held by us, untouched
    assert_eq!(
        hgetall(&mut raw, "busy").await,
        vec![(g.field().to_owned(), "1".to_owned())]
    );
    g.unlock().await.unwrap();
    let r = run(&s, &["hold", "busy", "--wait", "2s", "--for", "10ms"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

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
async fn watch_prints_unlock_events_live() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let lock = c.lock("watched").unwrap();
    let g = lock.lock().await.unwrap();

    let mut w = Spawned::start(&s, &["--json", "watch", "watched", "--interval", "200ms"]);
    w.event(Duration::from_secs(20), "watching").await;
    let state = w.event(Duration::from_secs(20), "state").await;
    assert_eq!(state["holders"][0]["field"], g.field());

    g.unlock().await.unwrap();
    let m = w.event(Duration::from_secs(20), "message").await;
    assert_eq!(m["channel"], "redisson_lock__channel:{watched}");
    assert_eq!(m["message"], "0");
    assert_eq!(m["sharded"], false);
    let state = w.event(Duration::from_secs(20), "state").await;
    assert_eq!(state["locked"], false);

    // the read-write channel (a write unlock publishes 1)
    let rw = c.read_write_lock("watched").unwrap();
    let wg = rw.write_lock().lock().await.unwrap();
    wg.unlock().await.unwrap();
    let m = w.event(Duration::from_secs(20), "message").await;
    assert_eq!(m["channel"], "redisson_rwlock:{watched}");
    assert_eq!(m["message"], "1");

    // sharded pub/sub (what Redisson uses in a cluster) works on a standalone Redis 7 too
    let mut raw = s.conn().await;
    let _: i64 = redis::cmd("SPUBLISH")
        .arg("redisson_lock__channel:{watched}")
        .arg("0")
        .query_async(&mut raw)
        .await
        .unwrap();
    let m = w.event(Duration::from_secs(20), "message").await;
    assert_eq!(m["sharded"], true);
    assert_eq!(m["message"], "0");

    // a fair lock's per-waiter channel (pattern subscription)
    let _: i64 = raw
        .publish("redisson_lock__channel:{watched}:abc:7", "0")
        .await
        .unwrap();
    let m = w.event(Duration::from_secs(20), "message").await;
    assert_eq!(m["channel"], "redisson_lock__channel:{watched}:abc:7");
    assert!(m["meaning"].as_str().unwrap().contains("abc:7"), "{m}");

    w.signal("-INT");
    assert_eq!(w.exit_code(Duration::from_secs(20)).await, Some(0));

    // human output
    let g = lock.lock().await.unwrap();
    let mut w = Spawned::start(&s, &["watch", "watched"]);
    w.line_where(Duration::from_secs(20), "the watching line", |l| {
        l.starts_with("watching watched")
    })
    .await;
    g.unlock().await.unwrap();
    let line = w
        .line_where(Duration::from_secs(20), "the unlock line", |l| {
            l.contains("message 0")
        })
        .await;
    assert!(
        line.contains("redisson_lock__channel:{watched}") && line.contains("unlock"),
        "{line}"
    );
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

/// One line on stderr, nothing on stdout, exit code 1.
fn assert_one_line_error(r: &Run, what: &str, needle: &str) {
    assert_eq!(r.code, Some(1), "{what}: exit code; stderr {:?}", r.stderr);
    assert!(r.stdout.is_empty(), "{what}: stdout {:?}", r.stdout);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: one line on stderr, got {:?}", r.stderr);
    assert!(
        lines[0].starts_with("redisson-lock: error: "),
        "{what}: {:?}",
        lines[0]
    );
    assert!(
        lines[0].contains(needle),
        "{what}: {:?} should mention {needle:?}",
        lines[0]
    );
}

/// With `--json`: one JSON object on stderr, `{"error":{"kind","message","argument"}}` and nothing
/// else, nothing on stdout, exit code 1. Returns the `error` object.
fn assert_json_error(r: &Run, what: &str, kind: &str, needle: &str) -> Value {
    assert_eq!(r.code, Some(1), "{what}: exit code; stderr {:?}", r.stderr);
    assert!(r.stdout.is_empty(), "{what}: stdout {:?}", r.stdout);
    assert!(!r.stderr.contains("panicked"), "{what}: {:?}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: one line on stderr, got {:?}", r.stderr);
    let v: Value = serde_json::from_str(lines[0])
        .unwrap_or_else(|e| panic!("{what}: stderr is not JSON ({e}): {:?}", lines[0]));
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("{what}: not an object: {v}"));
    assert_eq!(obj.keys().collect::<Vec<_>>(), ["error"], "{what}: {v}");
    let err = v["error"].as_object().unwrap_or_else(|| panic!("{what}: {v}"));
    let mut keys: Vec<&str> = err.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["argument", "kind", "message"], "{what}: {v}");
    assert_eq!(v["error"]["kind"], kind, "{what}: {v}");
    assert!(
        v["error"]["argument"].is_null() || v["error"]["argument"].is_string(),
        "{what}: {v}"
    );
    let message = v["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: {v}"));
    assert!(
        message.contains(needle),
        "{what}: {message:?} should mention {needle:?}"
    );
    v["error"].clone()
}

/// Every duration and number argument of every subcommand: zero where it means nothing, a
/// negative value, an absurd one and garbage are refused while the command line is parsed (before
/// anything touches Redis), with exit code 1, one line naming the argument and what to give
/// instead, or with `--json` one JSON error object; never a panic or clap's exit code 2.
#[tokio::test]
async fn bad_durations_and_numbers_are_refused_with_exit_1() {
    /// A command, one of its arguments, and bad values with what the message says about each.
    type Case<'a> = (&'a [&'a str], &'a str, &'a [(&'a str, &'a str)]);
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    let cases: &[Case] = &[
        (
            &["watch", "w"],
            "--interval",
            &[
                ("0s", "must not be zero"),
                ("1ms", "must be at least 10ms"),
                ("-1s", "must not be negative"),
                ("99999999999d", "must be at most"),
                ("abc", "not a duration"),
                ("5", "not a duration"),
            ],
        ),
        (
            &["hold", "h"],
            "--lease",
            &[
                ("0s", "must not be zero"),
                ("-1s", "must not be negative"),
                ("99999999999d", "must be at most"),
                ("99999999999999999999999s", "must be at most"),
                ("abc", "not a duration"),
            ],
        ),
        (
            &["hold", "h"],
            "--wait",
            &[
                ("-1s", "must not be negative"),
                ("99999999999d", "must be at most"),
                ("abc", "not a duration"),
            ],
        ),
        (
            &["hold", "h"],
            "--for",
            &[
                ("-1s", "must not be negative"),
                ("99999999999d", "must be at most"),
                ("1000000001s", "must be at most"),
                ("abc", "not a duration"),
            ],
        ),
        (
            &["hold", "h"],
            "--owner",
            &[
                ("-1", "must not be negative"),
                ("9223372036854775808", "must be at most 9223372036854775807"),
                ("99999999999999999999999", "must be at most"),
                ("abc", "not a whole number"),
                ("1.5", "not a whole number"),
            ],
        ),
    ];
    for (command, arg, bad) in cases {
        for (value, why) in *bad {
            let mut args: Vec<&str> = command.to_vec();
            args.extend([*arg, *value]);
            let what = format!("{args:?}");
            let r = run(&s, &args).await;
            assert!(!r.stderr.contains("panicked"), "{what}: {}", r.stderr);
            assert_one_line_error(&r, &what, &format!("'{arg} <"));
            assert!(
                r.stderr.contains(why),
                "{what}: {:?} should say {why:?}",
                r.stderr
            );
            assert!(
                r.stderr.contains(&format!("e.g. {arg} ")),
                "{what}: {:?} should give an example",
                r.stderr
            );

            // --json before or after the command
            let mut json_first = vec!["--json"];
            json_first.extend(&args);
            let mut json_last = args.clone();
            json_last.push("--json");
            for args in [json_first, json_last] {
                let what = format!("{args:?}");
                let r = run(&s, &args).await;
                let err = assert_json_error(&r, &what, "invalid_argument", why);
                assert_eq!(err["argument"], *arg, "{what}: {err}");
                assert!(err["message"].as_str().unwrap().contains(*arg), "{what}: {err}");
            }
        }
    }
    // nothing reached Redis
    let keys: Vec<String> = raw.keys("*").await.unwrap();
    assert!(keys.is_empty(), "{keys:?}");

    // other rejected command lines take the same shape
    let r = run(&s, &["--json", "hold", "x", "--spin", "--fenced"]).await;
    assert_json_error(&r, "conflicting flags", "invalid_argument", "cannot be used with");
    let r = run(&s, &["--json", "hold"]).await;
    assert_json_error(&r, "missing name", "invalid_argument", "required");
    let r = run(&s, &["--json", "frobnicate"]).await;
    assert_json_error(&r, "unknown command", "invalid_argument", "frobnicate");
    let r = run(&s, &["hold", "x", "--for"]).await;
    assert_one_line_error(&r, "missing value", "--for");
}

/// The limits themselves, zero where it means something, and `--owner 0` are accepted, and the
/// longest durations run without overflowing a timer.
#[tokio::test]
async fn durations_and_numbers_at_their_limits_work() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;

    // --for 0s releases at once; --wait 0s tries once
    let r = run(
        &s,
        &[
            "--json", "hold", "z", "--for", "0s", "--wait", "0s", "--owner", "0",
        ],
    )
    .await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let events = json_lines(&r.stdout);
    assert_eq!(events[0]["event"], "acquired", "{events:?}");
    assert!(events[0]["field"].as_str().unwrap().ends_with(":0"), "{events:?}");
    assert_eq!(events[1]["event"], "released", "{events:?}");
    let g = c.lock("z").unwrap().lock().await.unwrap();
    let r = run(&s, &["--json", "hold", "z", "--wait", "0s"]).await;
    assert_eq!(r.code, Some(2), "held elsewhere: tried once; {}", r.stderr);
    assert_eq!(json_lines(&r.stdout)[0]["event"], "not-acquired");
    g.unlock().await.unwrap();

    // the longest lease, and the largest owner id
    let max_owner = i64::MAX.to_string();
    let mut hold = Spawned::start(
        &s,
        &[
            "--json",
            "hold",
            "long",
            "--lease",
            "1000000000s",
            "--owner",
            &max_owner,
        ],
    );
    let acquired = hold.event(Duration::from_secs(20), "acquired").await;
    assert_eq!(acquired["lease_ms"], 1_000_000_000_000u64, "{acquired}");
    assert!(
        acquired["field"]
            .as_str()
            .unwrap()
            .ends_with(&format!(":{max_owner}")),
        "{acquired}"
    );
    let pttl: i64 = raw.pttl("long").await.unwrap();
    assert!(pttl > 999_000_000_000, "PTTL {pttl}");
    hold.signal("-INT");
    hold.event(Duration::from_secs(20), "released").await;
    assert_eq!(hold.exit_code(Duration::from_secs(20)).await, Some(0));

    // --for at its maximum: holds (no timer overflow) until Ctrl-C
    let mut hold = Spawned::start(&s, &["hold", "longer", "--for", "1000000000s"]);
    let line = hold
        .line_where(Duration::from_secs(20), "acquired", |l| l.starts_with("acquired"))
        .await;
    assert!(line.ends_with("holding for 1000000000.000s"), "{line}");
    hold.signal("-INT");
    hold.line_where(Duration::from_secs(20), "released", |l| l.starts_with("released"))
        .await;
    assert_eq!(hold.exit_code(Duration::from_secs(20)).await, Some(0));

    // watch at the shortest and the longest interval
    for interval in ["10ms", "1000000000s"] {
        let mut w = Spawned::start(&s, &["--json", "watch", "w", "--interval", interval]);
        w.event(Duration::from_secs(20), "watching").await;
        w.event(Duration::from_secs(20), "state").await;
        // a change is still seen right after an unlock message
        let g = c.lock("w").unwrap().lock().await.unwrap();
        g.unlock().await.unwrap();
        w.event(Duration::from_secs(20), "message").await;
        w.signal("-INT");
        assert_eq!(
            w.exit_code(Duration::from_secs(20)).await,
            Some(0),
            "--interval {interval}"
        );
    }
}

#[tokio::test]
async fn bad_input_gives_a_one_line_error_and_exit_1() {
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    let _: () = raw.set("plain-string", "x").await.unwrap();
    let _: () = raw.hset("not-a-lock", "color", "blue").await.unwrap();

    let r = run_url("http://127.0.0.1:1/", &["inspect", "x"]).await;
    assert_one_line_error(&r, "unknown URL scheme", "unknown URL scheme `http`");

    let r = run(&s, &["inspect", "plain-string"]).await;
    assert_one_line_error(&r, "a string key", "plain-string");
    let r = run(&s, &["hold", "plain-string", "--wait", "1s"]).await;
    assert_one_line_error(&r, "hold on a string key", "plain-string");
    let r = run(&s, &["inspect", "not-a-lock"]).await;
    assert_one_line_error(&r, "a hash that is not a lock", "not a lock");
    let r = run(&s, &["force-unlock", "plain-string", "--yes"]).await;
    assert_one_line_error(&r, "force-unlock on a string key", "plain-string");

    let r = run(&s, &["hold", "x", "--wait", "5x"]).await;
    assert_one_line_error(&r, "bad duration", "5x");
    let r = run(&s, &["hold", "x", "--lease", "soon"]).await;
    assert_one_line_error(&r, "bad lease", "soon");
    let r = run(&s, &["hold", "x", "--lease", "0s", "--wait", "1s"]).await;
    assert_one_line_error(&r, "zero lease", "lease");

    // the string and the hash are untouched
    let v: String = raw.get("plain-string").await.unwrap();
    assert_eq!(v, "x");
    let exists: i64 = raw.exists("x").await.unwrap();
    assert_eq!(exists, 0);
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
        ("session", vec!["session", "not a lock"]),
        ("user:1", vec!["user:1", "not a lock", "name"]),
        ("odd-count", vec!["odd-count", "not a lock", odd_field, "abc"]),
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

#[tokio::test]
async fn hold_takes_the_other_kinds() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;

    // --fenced prints the token, and tokens grow
    let r = run(&s, &["hold", "fenced", "--fenced", "--for", "10ms"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("fencing token 1"), "{}", r.stdout);
    let r = run(&s, &["--json", "hold", "fenced", "--fenced", "--for", "10ms"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let acquired = &json_lines(&r.stdout)[0];
    assert_eq!(
        (acquired["side"].as_str(), acquired["token"].as_u64()),
        (Some("fenced"), Some(2))
    );
    let token: String = raw.get("redisson_lock_token:{fenced}").await.unwrap();
    assert_eq!(token, "2");

    // --spin: a waiting spin hold gets in by polling (nothing is published)
    let g = c.spin_lock("spun").unwrap().lock().await.unwrap();
    let mut waiting = Spawned::start(&s, &["--json", "hold", "spun", "--spin", "--for", "10ms"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    g.unlock().await.unwrap();
    let acquired = waiting.event(Duration::from_secs(20), "acquired").await;
    assert_eq!(acquired["side"], "spin");
    waiting.event(Duration::from_secs(20), "released").await;
    assert_eq!(waiting.exit_code(Duration::from_secs(20)).await, Some(0));

    // --non-reentrant: the CLI is another client (another client id), so our owner 9 is not its
    // owner 9: it waits like any other owner, and takes the lock once it is free
    let held = c.non_reentrant_lock("nr").unwrap().with_owner(9);
    let g = held.lock().await.unwrap();
    let field = g.field().to_owned();
    let (client_id, owner) = field.rsplit_once(':').unwrap();
    assert_eq!(client_id, c.id());
    let r = run(&s, &["hold", "nr", "--non-reentrant", "--wait", "100ms"]).await;
    assert_eq!(r.code, Some(2), "another client's owner just waits: {}", r.stderr);
    g.unlock().await.unwrap();
    let r = run(
        &s,
        &["hold", "nr", "--non-reentrant", "--owner", owner, "--for", "10ms"],
    )
    .await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);

    // at most one kind flag
    let r = run(&s, &["hold", "x", "--spin", "--fenced"]).await;
    assert_ne!(r.code, Some(0));
    assert!(r.stderr.contains("cannot be used with"), "{}", r.stderr);
}

#[tokio::test]
async fn hold_fair_queues_and_leaves_the_queue_on_ctrl_c() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let raw = s.conn().await;
    let g = c.fair_lock("fq").unwrap().lock().await.unwrap();
    let mut waiting = Spawned::start(&s, &["--json", "hold", "fq", "--fair"]);
    eventually(Duration::from_secs(20), "the CLI waiter queued up", || {
        let mut raw = raw.clone();
        async move {
            let q: Vec<String> = raw.lrange("redisson_lock_queue:{fq}", 0, -1).await.unwrap();
            q.len() == 1
        }
    })
    .await;
    waiting.signal("-INT");
    waiting.event(Duration::from_secs(20), "interrupted").await;
    assert_eq!(waiting.exit_code(Duration::from_secs(20)).await, Some(130));
    let mut raw = raw;
    let q: Vec<String> = raw.lrange("redisson_lock_queue:{fq}", 0, -1).await.unwrap();
    assert!(
        q.is_empty(),
        "the interrupted waiter left the queue before exiting: {q:?}"
    );
    let z: Vec<String> = raw.zrange("redisson_lock_timeout:{fq}", 0, -1).await.unwrap();
    assert!(z.is_empty(), "{z:?}");
    g.unlock().await.unwrap();
    // served in order: a waiting CLI fair hold gets it when we release
    let g = c.fair_lock("fq").unwrap().lock().await.unwrap();
    let mut next = Spawned::start(&s, &["--json", "hold", "fq", "--fair", "--for", "10ms"]);
    eventually(Duration::from_secs(20), "queued", || {
        let mut raw = raw.clone();
        async move { raw.llen::<_, usize>("redisson_lock_queue:{fq}").await.unwrap() == 1 }
    })
    .await;
    g.unlock().await.unwrap();
    assert_eq!(
        next.event(Duration::from_secs(20), "acquired").await["side"],
        "fair"
    );
    assert_eq!(next.exit_code(Duration::from_secs(20)).await, Some(0));
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

/// `--config FILE` (a Redisson config) replaces `--url`: the file's login and database win.
#[tokio::test]
async fn config_file_replaces_the_url() {
    let s = RedisServer::start_with(&["--requirepass", "pw"]);
    let dir = std::env::temp_dir().join(format!("cli-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("redisson.yaml");
    std::fs::write(
        &file,
        format!(
            "lockWatchdogTimeout: 30000\nsingleServerConfig:\n  address: \"redis://127.0.0.1:{}\"\n  password: pw\n  database: 4\n",
            s.port
        ),
    )
    .unwrap();
    let mut c = redis::Client::open(format!("redis://:pw@127.0.0.1:{}/4", s.port))
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let _: () = redis::cmd("HSET")
        .arg("cfg:lock")
        .arg("11111111-2222-4333-8444-555555555555:1")
        .arg(1)
        .query_async(&mut c)
        .await
        .unwrap();
    // --url points nowhere: the file (login, database 4) is what is used
    let path = file.to_string_lossy().into_owned();
    let r = run_url(
        "redis://127.0.0.1:1/",
        &["--config", &path, "inspect", "cfg:lock"],
    )
    .await;
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert!(
        r.stdout.contains("11111111-2222-4333-8444-555555555555"),
        "{}",
        r.stdout
    );

    // a refused file is reported naming the key, nothing is connected
    std::fs::write(
        &file,
        "nameMapper: !<com.acme.Mapper> {}\nsingleServerConfig: {address: 'redis://127.0.0.1:1'}\n",
    )
    .unwrap();
    let r = run_url("redis://127.0.0.1:1/", &["--config", &path, "list"]).await;
    assert_eq!(r.code, Some(1), "stdout: {}", r.stdout);
    assert!(r.stderr.contains("nameMapper"), "{}", r.stderr);
    std::fs::remove_dir_all(&dir).ok();
}
