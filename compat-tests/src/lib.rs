//! Rust side of the Redisson interop tests: a driver for the JVM harness (`Harness.java`, see
//! `README.md` for its line protocol) and small helpers shared by the matrix test.
//!
//! The harness is started with `java -jar harness-VERSION.jar --url ... --watchdog-ms N`; its
//! first stdout line is `{"event":"ready",...}`, after which every `SEQ WORKER CMD ARGS` line
//! written to its stdin gets exactly one JSON response line, in completion order.
//!
//! [`kinds`] adds typed calls per lock kind ([`JavaLock`]: the plain, read, write, fair, spin,
//! fenced, non-reentrant and non-reentrant fair locks) and which Redisson version has which kind.

pub mod kinds;

pub use kinds::{
    expected_kinds, kind_table, version_at_least, Answer, Capabilities, JavaError, JavaKind, JavaLock,
    JavaUnlock, OptionalKind,
};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;

/// Errors of this crate are plain messages: they end up in the results table.
pub type Result<T, E = String> = std::result::Result<T, E>;

/// Wall-clock epoch milliseconds (fractional), comparable with the harness' `ts_ms`.
pub fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

/// Wall-clock epoch microseconds, comparable with the harness' interval records.
pub fn now_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// One response line of the harness.
#[derive(Clone, Debug)]
pub struct Response {
    /// The command's sequence number.
    pub seq: u64,
    /// The worker that ran it.
    pub worker: String,
    /// The command name.
    pub cmd: String,
    /// Whether the command returned normally.
    pub ok: bool,
    /// The command's result (`null` for void commands and errors).
    pub result: Value,
    /// The exception message when `ok` is false.
    pub error: Option<String>,
    /// The exception class when `ok` is false.
    pub error_class: Option<String>,
    /// The Java thread id of the worker.
    pub thread_id: Option<u64>,
    /// Epoch ms at completion (Java clock).
    pub ts_ms: f64,
    /// Epoch ms when the worker started the command.
    pub start_ms: f64,
    /// The raw line.
    pub raw: String,
}

impl Response {
    fn parse(line: &str) -> Result<Response> {
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("bad JSON from harness ({e}): {line}"))?;
        let seq = v["seq"]
            .as_u64()
            .ok_or_else(|| format!("response without a numeric seq: {line}"))?;
        let text = |k: &str| v[k].as_str().map(str::to_owned);
        Ok(Response {
            seq,
            worker: text("worker").unwrap_or_default(),
            cmd: text("cmd").unwrap_or_default(),
            ok: v["ok"].as_bool().unwrap_or(false),
            result: v["result"].clone(),
            error: text("error"),
            error_class: text("errorClass"),
            thread_id: v["threadId"].as_u64(),
            ts_ms: v["ts_ms"].as_f64().unwrap_or(0.0),
            start_ms: v["start_ms"].as_f64().unwrap_or(0.0),
            raw: line.to_owned(),
        })
    }

    /// The result when `ok`, else an error naming the Java exception.
    pub fn into_ok(self) -> Result<Value> {
        if self.ok {
            Ok(self.result)
        } else {
            Err(format!(
                "java {} (seq {} on {}) threw {}: {}",
                self.cmd,
                self.seq,
                self.worker,
                self.error_class.as_deref().unwrap_or("?"),
                self.error.as_deref().unwrap_or("")
            ))
        }
    }

    /// The boolean result of an `ok` response.
    pub fn bool(self) -> Result<bool> {
        let raw = self.raw.clone();
        self.into_ok()?
            .as_bool()
            .ok_or_else(|| format!("expected a boolean result: {raw}"))
    }

    /// The integer result of an `ok` response.
    pub fn int(self) -> Result<i64> {
        let raw = self.raw.clone();
        self.into_ok()?
            .as_i64()
            .ok_or_else(|| format!("expected an integer result: {raw}"))
    }

    /// Whether this is the failure Redisson gives for unlocking a lock not held.
    pub fn is_illegal_monitor_state(&self) -> bool {
        !self.ok && self.error_class.as_deref() == Some("java.lang.IllegalMonitorStateException")
    }
}

type Waiters = Arc<Mutex<HashMap<u64, oneshot::Sender<Response>>>>;

/// A command sent to the harness whose response has not been awaited yet.
#[derive(Debug)]
pub struct Pending {
    seq: u64,
    what: String,
    rx: oneshot::Receiver<Response>,
    done: Option<Response>,
}

impl Pending {
    /// The command's sequence number.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Whether the response has arrived (does not wait).
    pub fn is_done(&mut self) -> bool {
        if self.done.is_some() {
            return true;
        }
        match self.rx.try_recv() {
            Ok(r) => {
                self.done = Some(r);
                true
            }
            Err(_) => false,
        }
    }

    /// Waits up to `limit` for the response.
    pub async fn wait(mut self, limit: Duration) -> Result<Response> {
        if let Some(r) = self.done.take() {
            return Ok(r);
        }
        match tokio::time::timeout(limit, &mut self.rx).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(_)) => Err(format!("harness exited before answering `{}`", self.what)),
            Err(_) => Err(format!("no response to `{}` within {limit:?}", self.what)),
        }
    }
}

/// JVM flags for harness processes that prove behaviour (not speed): the client compiler only
/// and the serial collector. A harness JVM lives seconds to minutes and spends most of its CPU
/// compiling Redisson and Netty with C2 and running parallel GC threads; with these it needs
/// about half the CPU (the Redisson 4.7.0 matrix: 79 s instead of 152 s on 2 cores), which
/// the other processes of a test run get instead. The benchmarks start their own JVMs without
/// them, so Redisson is measured fully optimised.
pub const TEST_JVM_FLAGS: &[&str] = &["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"];

/// A running JVM harness process; SIGKILLed on drop if still running.
pub struct Harness {
    child: Child,
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    waiters: Waiters,
    next_seq: AtomicU64,
    client_id: String,
    version: String,
    kinds: Vec<String>,
    stderr_tail: Arc<Mutex<Stderr>>,
    label: String,
}

/// What a harness wrote to stderr: the last 40 lines, and the newest [`STDERR_LOG_LINES`] of
/// them that are not stack frames (see [`Harness::stderr_matching`]).
#[derive(Default)]
struct Stderr {
    tail: Vec<String>,
    log: Vec<String>,
}

/// How many log lines (stderr without stack frames) a [`Harness`] keeps.
const STDERR_LOG_LINES: usize = 2000;

impl std::fmt::Debug for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness")
            .field("label", &self.label)
            .field("client_id", &self.client_id)
            .finish()
    }
}

impl Harness {
    /// Starts `java -jar JAR --url URL --watchdog-ms WATCHDOG_MS` and waits up to `ready_timeout`
    /// for its `ready` line.
    pub async fn start(jar: &Path, url: &str, watchdog_ms: u64, ready_timeout: Duration) -> Result<Harness> {
        Self::start_from(jar, &["--url".as_ref(), url.as_ref()], watchdog_ms, ready_timeout).await
    }

    /// Starts the harness in Redisson cluster mode (`--cluster --url N1,N2,...`: seed nodes of a
    /// Redis Cluster) and waits up to `ready_timeout` for its `ready` line.
    pub async fn start_cluster(
        jar: &Path,
        nodes: &[String],
        watchdog_ms: u64,
        ready_timeout: Duration,
    ) -> Result<Harness> {
        let nodes = nodes.join(",");
        Self::start_from(
            jar,
            &["--cluster".as_ref(), "--url".as_ref(), nodes.as_ref()],
            watchdog_ms,
            ready_timeout,
        )
        .await
    }

    /// Starts `java -jar JAR --config FILE --watchdog-ms WATCHDOG_MS`: Redisson is configured by
    /// the Redisson YAML/JSON file `config` (`Config.fromYAML`), as a service would be;
    /// `watchdog_ms` applies only when the file sets no `lockWatchdogTimeout`.
    pub async fn start_with_config(
        jar: &Path,
        config: &Path,
        watchdog_ms: u64,
        ready_timeout: Duration,
    ) -> Result<Harness> {
        Self::start_from(
            jar,
            &["--config".as_ref(), config.as_os_str()],
            watchdog_ms,
            ready_timeout,
        )
        .await
    }

    async fn start_from(
        jar: &Path,
        source: &[&std::ffi::OsStr],
        watchdog_ms: u64,
        ready_timeout: Duration,
    ) -> Result<Harness> {
        let java = std::env::var("JAVA").unwrap_or_else(|_| "java".to_owned());
        let mut child = Command::new(&java)
            .args(TEST_JVM_FLAGS)
            .arg("-jar")
            .arg(jar)
            .args(source)
            .args([
                "--watchdog-ms",
                &watchdog_ms.to_string(),
                "--exit-grace-ms",
                "3000",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot run `{java} -jar {}`: {e}", jar.display()))?;
        let label = format!(
            "{} (watchdog {watchdog_ms} ms)",
            jar.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
        let stdout = child.stdout.take().ok_or("no stdout pipe")?;
        let stderr = child.stderr.take().ok_or("no stderr pipe")?;
        let stdin = child.stdin.take().ok_or("no stdin pipe")?;

        let stderr_tail = Arc::new(Mutex::new(Stderr::default()));
        let tail = stderr_tail.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(mut t) = tail.lock() {
                    if !(line.starts_with("\tat ") || line.starts_with("\t... ")) {
                        t.log.push(line.clone());
                        if t.log.len() > STDERR_LOG_LINES {
                            t.log.remove(0);
                        }
                    }
                    t.tail.push(line);
                    if t.tail.len() > 40 {
                        t.tail.remove(0);
                    }
                }
            }
        });

        let waiters: Waiters = Arc::new(Mutex::new(HashMap::new()));
        let (ready_tx, ready_rx) = oneshot::channel::<Result<Value>>();
        let w = waiters.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            let mut ready_tx = Some(ready_tx);
            loop {
                let line = match lines.next_line().await {
                    Ok(Some(l)) => l,
                    _ => break,
                };
                if let Some(tx) = ready_tx.take() {
                    let first = serde_json::from_str::<Value>(&line)
                        .map_err(|e| format!("first harness line is not JSON ({e}): {line}"));
                    let _ = tx.send(first);
                    continue;
                }
                match Response::parse(&line) {
                    Ok(r) => {
                        let tx = w.lock().ok().and_then(|mut m| m.remove(&r.seq));
                        match tx {
                            Some(tx) => {
                                let _ = tx.send(r);
                            }
                            None => {
                                eprintln!("compat: harness answered unknown seq {}: {line}", r.seq)
                            }
                        }
                    }
                    Err(e) => eprintln!("compat: {e}"),
                }
            }
            // EOF: drop every waiter so their waits fail at once.
            if let Ok(mut m) = w.lock() {
                m.clear();
            }
        });

        let first = match tokio::time::timeout(ready_timeout, ready_rx).await {
            Ok(Ok(Ok(v))) => v,
            Ok(Ok(Err(e))) => return Err(e),
            Ok(Err(_)) => {
                let _ = child.wait().await;
                return Err(format!(
                    "harness exited before its ready line; stderr: {}",
                    Self::tail_of(&stderr_tail)
                ));
            }
            Err(_) => {
                return Err(format!(
                    "no ready line within {ready_timeout:?}; stderr: {}",
                    Self::tail_of(&stderr_tail)
                ))
            }
        };
        if first["event"] != "ready" {
            return Err(format!("harness did not start: {first}"));
        }
        let client_id = first["clientId"]
            .as_str()
            .ok_or_else(|| format!("ready line without clientId: {first}"))?
            .to_owned();
        let version = first["version"].as_str().unwrap_or("?").to_owned();
        // A jar built before the ready line listed kinds has the core ones only.
        let kinds = kinds::parse_kinds(&first["kinds"])
            .unwrap_or_else(|| vec!["lock".to_owned(), "readWrite".to_owned()]);
        Ok(Harness {
            child,
            stdin: tokio::sync::Mutex::new(Some(stdin)),
            waiters,
            next_seq: AtomicU64::new(1),
            client_id,
            version,
            kinds,
            stderr_tail,
            label,
        })
    }

    fn tail_of(tail: &Arc<Mutex<Stderr>>) -> String {
        tail.lock().map(|t| t.tail.join(" | ")).unwrap_or_default()
    }

    /// The Redisson client id (`redisson.getId()`), the UUID part of every Java lock field.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// The Redisson version the harness reports.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The last lines the harness wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        Self::tail_of(&self.stderr_tail)
    }

    /// The lines written to stderr so far that contain `needle`, oldest first (stack frames
    /// are not kept; the newest 2000 other lines are): what Redisson logged, e.g. a refused
    /// renewal.
    pub fn stderr_matching(&self, needle: &str) -> Vec<String> {
        self.stderr_tail
            .lock()
            .map(|t| t.log.iter().filter(|l| l.contains(needle)).cloned().collect())
            .unwrap_or_default()
    }

    /// The OS process id, while running.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Sends `WORKER CMD ARGS` without waiting for the response.
    pub async fn send(&self, worker: &str, cmd: &str, args: &[&str]) -> Result<Pending> {
        let seq = self.next_seq.fetch_add(1, Ordering::SeqCst);
        let mut line = format!("{seq} {worker} {cmd}");
        for a in args {
            line.push(' ');
            line.push_str(a);
        }
        let what = line.clone();
        line.push('\n');
        let (tx, rx) = oneshot::channel();
        self.waiters
            .lock()
            .map_err(|_| "poisoned waiter map")?
            .insert(seq, tx);
        let mut stdin = self.stdin.lock().await;
        let pipe = stdin.as_mut().ok_or("harness stdin is closed")?;
        let written = async {
            pipe.write_all(line.as_bytes()).await?;
            pipe.flush().await
        }
        .await;
        if let Err(e) = written {
            if let Ok(mut m) = self.waiters.lock() {
                m.remove(&seq);
            }
            return Err(format!(
                "cannot write `{what}` to the harness: {e}; stderr: {}",
                self.stderr_tail()
            ));
        }
        Ok(Pending {
            seq,
            what,
            rx,
            done: None,
        })
    }

    /// Sends a command and waits up to `limit` for its response.
    pub async fn call(&self, worker: &str, cmd: &str, args: &[&str], limit: Duration) -> Result<Response> {
        self.send(worker, cmd, args).await?.wait(limit).await
    }

    /// The lock field `<clientId>:<threadId>` of a worker (the `hello` command).
    pub async fn field_of(&self, worker: &str) -> Result<String> {
        let v = self
            .call(worker, "hello", &[], Duration::from_secs(10))
            .await?
            .into_ok()?;
        v["field"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("hello without field: {v}"))
    }

    /// SIGKILLs the JVM (no shutdown hooks, no unlocks: a crashed client) and reaps it.
    pub async fn kill(&mut self) -> Result<()> {
        self.child
            .start_kill()
            .map_err(|e| format!("kill -9 harness: {e}"))?;
        self.child
            .wait()
            .await
            .map_err(|e| format!("wait for killed harness: {e}"))?;
        Ok(())
    }

    /// Sends `exit` and waits for the process to end (killing it after `limit`).
    pub async fn exit(mut self, limit: Duration) -> Result<()> {
        let outcome = match self.send("main", "exit", &[]).await {
            Ok(p) => p.wait(limit).await.map(drop),
            Err(e) => Err(e),
        };
        *self.stdin.lock().await = None;
        match tokio::time::timeout(limit, self.child.wait()).await {
            Ok(Ok(status)) if status.success() => outcome,
            Ok(Ok(status)) => Err(format!(
                "harness exited with {status}; stderr: {}",
                self.stderr_tail()
            )),
            Ok(Err(e)) => Err(format!("wait for harness: {e}")),
            Err(_) => {
                let _ = self.kill().await;
                Err(format!("harness did not exit within {limit:?}; killed"))
            }
        }
    }
}

/// A critical section recorded as `who:<...>:<startMicros>:<endMicros>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interval {
    /// Everything before the two timestamps, e.g. `java:w1` or `rust:3`.
    pub who: String,
    /// Epoch micros right after acquiring.
    pub start: u64,
    /// Epoch micros before releasing.
    pub end: u64,
}

impl Interval {
    /// Parses `who...:start:end`.
    pub fn parse(s: &str) -> Result<Interval> {
        let mut parts = s.rsplitn(3, ':');
        let end = parts.next().and_then(|p| p.parse().ok());
        let start = parts.next().and_then(|p| p.parse().ok());
        let who = parts.next();
        match (who, start, end) {
            (Some(who), Some(start), Some(end)) if start <= end => Ok(Interval {
                who: who.to_owned(),
                start,
                end,
            }),
            _ => Err(format!("malformed interval record `{s}`")),
        }
    }

    /// The fencing token of a `fencedCounter` record (`java:<worker>:t<token>:…`): the last
    /// `:`-separated part of `who` when it is `t` followed by digits.
    pub fn fence_token(&self) -> Option<u64> {
        let last = self.who.rsplit(':').next()?;
        let digits = last.strip_prefix('t')?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    }
}

/// Checks that no two intervals overlap (touching ends are allowed: the clocks tick in µs).
/// Returns the first overlapping pair found after sorting by start.
pub fn find_overlap(intervals: &[Interval]) -> Option<(Interval, Interval)> {
    let mut sorted: Vec<&Interval> = intervals.iter().collect();
    sorted.sort_by_key(|i| (i.start, i.end));
    let mut latest: Option<&Interval> = None; // the interval with the largest end so far
    for i in sorted {
        if let Some(prev) = latest {
            if i.start < prev.end {
                return Some((prev.clone(), i.clone()));
            }
        }
        if latest.is_none_or(|p| i.end > p.end) {
            latest = Some(i);
        }
    }
    None
}

/// Read-write check: an `exclusive` interval (a write) must not overlap any other interval, while
/// shared ones (reads) may overlap each other. Touching ends are allowed, as in [`find_overlap`].
/// Returns the first offending (exclusive, other) pair.
pub fn find_exclusive_overlap(
    intervals: &[Interval],
    exclusive: impl Fn(&Interval) -> bool,
) -> Option<(Interval, Interval)> {
    let mut sorted: Vec<&Interval> = intervals.iter().collect();
    sorted.sort_by_key(|i| (i.start, i.end));
    for (i, w) in sorted.iter().enumerate() {
        if !exclusive(w) {
            continue;
        }
        // Earlier starts: any of them may still run past w.start (reads can be long).
        let before = sorted[..i].iter().find(|o| o.end > w.start);
        // Later starts: sorted, so only the next one can be the first to begin before w.end.
        let after = sorted[i + 1..].iter().find(|o| o.start < w.end);
        if let Some(o) = before.or(after) {
            return Some(((*w).clone(), (*o).clone()));
        }
    }
    None
}

/// Path of `compat-tests/` (this crate's directory).
pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Whether an executable named `name` is on PATH.
pub fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| is_executable(&d.join(name))))
        .unwrap_or(false)
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(who: &str, start: u64, end: u64) -> Interval {
        Interval {
            who: who.into(),
            start,
            end,
        }
    }

    #[test]
    fn parses_java_and_rust_records() {
        assert_eq!(Interval::parse("java:w1:10:20").unwrap(), iv("java:w1", 10, 20));
        assert_eq!(Interval::parse("rust:3:5:5").unwrap(), iv("rust:3", 5, 5));
        assert!(Interval::parse("java:w1:20:10").is_err());
        assert!(Interval::parse("garbage").is_err());
    }

    #[test]
    fn fence_tokens_of_records() {
        let r = Interval::parse("java:w1:t17:100:200").unwrap();
        assert_eq!((r.who.as_str(), r.fence_token()), ("java:w1:t17", Some(17)));
        assert_eq!(Interval::parse("java:w1:100:200").unwrap().fence_token(), None);
        assert_eq!(Interval::parse("rust:3:100:200").unwrap().fence_token(), None);
        assert_eq!(Interval::parse("java:t:100:200").unwrap().fence_token(), None);
        assert_eq!(Interval::parse("java:w:t1x:100:200").unwrap().fence_token(), None);
    }

    #[test]
    fn overlap_detection() {
        assert_eq!(
            find_overlap(&[iv("a", 0, 10), iv("b", 10, 20), iv("c", 25, 30)]),
            None
        );
        assert!(find_overlap(&[iv("a", 0, 10), iv("b", 9, 20)]).is_some());
        // a long interval overlapping a later one that is not its direct successor
        assert!(find_overlap(&[iv("a", 0, 100), iv("b", 10, 20), iv("c", 50, 60)]).is_some());
        assert!(find_overlap(&[iv("c", 50, 60), iv("a", 0, 100)]).is_some());
    }

    #[test]
    fn exclusive_overlap_detection() {
        let w = |i: &Interval| i.who.ends_with(":w");
        // reads may overlap each other; writes touch their neighbours only
        let ok = [
            iv("java:a:r", 0, 10),
            iv("rust:1:r", 5, 12),
            iv("rust:2:w", 12, 20),
            iv("java:b:r", 20, 30),
        ];
        assert_eq!(find_exclusive_overlap(&ok, w), None);
        // a read running into a write
        assert!(find_exclusive_overlap(&[iv("java:a:r", 0, 15), iv("rust:2:w", 12, 20)], w).is_some());
        // a long read that started well before a write and ends inside it
        assert!(find_exclusive_overlap(
            &[
                iv("java:a:r", 0, 50),
                iv("rust:1:r", 1, 2),
                iv("rust:2:w", 40, 60)
            ],
            w
        )
        .is_some());
        // a zero-length write inside a read
        assert!(find_exclusive_overlap(&[iv("java:a:r", 0, 50), iv("rust:2:w", 30, 30)], w).is_some());
        // two writes
        assert!(find_exclusive_overlap(&[iv("java:a:w", 0, 10), iv("rust:2:w", 9, 20)], w).is_some());
    }

    #[test]
    fn response_parsing() {
        let r = Response::parse(r#"{"seq":7,"worker":"w1","cmd":"unlock","ok":false,"result":null,"error":"attempt to unlock lock, not locked by current thread","errorClass":"java.lang.IllegalMonitorStateException","threadId":33,"ts_ms":1700000000123,"start_ms":1700000000120}"#).unwrap();
        assert_eq!(r.seq, 7);
        assert!(r.is_illegal_monitor_state());
        assert!(r.clone().into_ok().is_err());
        let ok = Response::parse(r#"{"seq":8,"worker":"w1","cmd":"tryLock","ok":true,"result":true,"error":null,"errorClass":null,"threadId":33,"ts_ms":1,"start_ms":1}"#).unwrap();
        assert!(ok.bool().unwrap());
    }
}
