//! The `redisson-lock` binary against real redis-server processes (and a real Redisson in a JVM
//! for the Java-held lock test). This file holds what the modules share: running the binary to
//! completion or line by line, and the checks of its error output.

#[path = "../../../tests/common/mod.rs"]
mod common;
#[path = "../../../tests/common/tls.rs"]
mod pki;

mod args;
mod completions;
mod deployments;
mod force_unlock;
mod hold;
mod inspect;
mod java;
mod latch;
mod list;
mod semaphore;
mod token;
mod transcripts;
mod watch;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::RedisServer;
use redis::AsyncCommands;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

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
    let mut all = vec!["--url", url];
    all.extend_from_slice(args);
    run_env(&all, &[]).await
}

/// The variables a run must not inherit from the test's environment (it sets its own).
const CLEARED_ENV: [&str; 5] = [
    "RUST_LOG",
    "REDIS_URL",
    "REDIS_PASSWORD",
    "REDISSON_LOCK_PASSWORD",
    "REDISSON_LOCK_USER",
];

/// The binary (at most 60 s) with exactly `args` (no `--url` added) and these variables.
async fn run_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    for v in CLEARED_ENV {
        cmd.env_remove(v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd
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
        let url = s.url();
        let mut all = vec!["--url", url.as_str()];
        all.extend_from_slice(args);
        Spawned::start_env(&all, &[])
    }

    /// With exactly `args` (no `--url` added) and these variables.
    fn start_env(args: &[&str], env: &[(&str, &str)]) -> Spawned {
        let mut cmd = Command::new(BIN);
        cmd.args(args);
        for v in CLEARED_ENV {
            cmd.env_remove(v);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
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

/// Milliseconds since the Unix epoch (the harness stamps its replies so).
fn epoch_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
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

/// One line on stderr, nothing on stdout; exit code 2 for a rejected command line (its line ends
/// with "(see --help)"), else 1.
fn assert_one_line_error(r: &Run, what: &str, needle: &str) {
    let want = if r.stderr.trim_end().ends_with("(see --help)") {
        2
    } else {
        1
    };
    assert_eq!(r.code, Some(want), "{what}: exit code; stderr {:?}", r.stderr);
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
/// else, nothing on stdout; exit code 2 for `invalid_argument` (a rejected command line), 1 for
/// `failed`. Returns the `error` object.
fn assert_json_error(r: &Run, what: &str, kind: &str, needle: &str) -> Value {
    let want = if kind == "invalid_argument" { 2 } else { 1 };
    assert_eq!(r.code, Some(want), "{what}: exit code; stderr {:?}", r.stderr);
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
