//! A lock held by real Redisson (the compat-tests harness in a JVM): `inspect` and `list` report
//! it, and a `hold` waits for it and gets it once Java releases it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use redis::AsyncCommands;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::{json_lines, run, Spawned};
use crate::common::{eventually, java, RedisServer};

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
