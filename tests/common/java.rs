//! The Redisson JVM harness for the tests that put a Java party in the game: which `java` runs
//! and which harness jar, found the same way by every test ([`locate`]), and one driver of the
//! running harness ([`Jvm`]: `java -jar`, line protocol of compat-tests/README.md).
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The Redisson version of the harness the tests run.
pub const REDISSON: &str = "4.7.0";
/// The variable naming a prebuilt harness jar (`scripts/test` exports it).
pub const JAR_VAR: &str = "REDISSON_HARNESS_JAR";

/// A JDK and a harness jar to run.
pub struct Harness {
    /// The `java` command.
    pub java: String,
    /// The harness jar.
    pub jar: PathBuf,
    /// Where the jar came from, for reports.
    pub source: String,
}

/// Whether this is a CI run (`CI=true`), where missing Java tooling fails instead of skipping.
pub fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// `name` on `PATH` (or the path itself when it has a `/`), when it is an executable file.
pub fn find_command(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    };
    if name.contains('/') {
        let p = PathBuf::from(name);
        return executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| executable(p))
}

/// `$JAVA` (default `java`) must be found; the jar is `$REDISSON_HARNESS_JAR`, else
/// `compat-tests/build-harness.sh 4.7.0` builds it (a no-op when it is up to date; needs Maven
/// otherwise). `Err` says why not.
pub fn locate() -> Result<Harness, String> {
    let java = std::env::var("JAVA").unwrap_or_else(|_| "java".to_owned());
    if find_command(&java).is_none() {
        return Err(format!("no JDK: `{java}` not found on PATH"));
    }
    if let Some(jar) = std::env::var_os(JAR_VAR).filter(|v| !v.is_empty()) {
        let jar = PathBuf::from(jar);
        assert!(
            jar.is_file(),
            "{JAR_VAR}={} is not a file (unset it to build the harness jar on demand)",
            jar.display()
        );
        return Ok(Harness {
            java,
            jar,
            source: format!("`{JAR_VAR}`"),
        });
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("compat-tests/build-harness.sh");
    let built = Command::new("bash")
        .arg(&script)
        .arg(REDISSON)
        .stdin(Stdio::null())
        .output();
    match built {
        Ok(o) if o.status.success() => {
            let out = String::from_utf8_lossy(&o.stdout);
            let jar = PathBuf::from(out.lines().last().unwrap_or_default().trim());
            if jar.is_file() {
                Ok(Harness {
                    java,
                    jar,
                    source: format!("`compat-tests/build-harness.sh {REDISSON}`"),
                })
            } else {
                Err(format!(
                    "compat-tests/build-harness.sh printed no jar path: {out:?}"
                ))
            }
        }
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            let last = err
                .lines()
                .rev()
                .find(|l| l.contains("build-harness"))
                .unwrap_or_else(|| err.lines().last().unwrap_or_default())
                .trim()
                .to_owned();
            if find_command("mvn").is_none() {
                Err(format!("no Maven to build the harness jar ({last})"))
            } else {
                Err(format!("the harness jar did not build ({last})"))
            }
        }
        Err(e) => Err(format!("cannot run {}: {e}", script.display())),
    }
}

/// [`locate`], or `None` after a printed reason when Java tooling is missing outside CI; with
/// `CI=true` missing tooling fails `test`.
pub fn locate_or_skip(test: &str) -> Option<Harness> {
    match locate() {
        Ok(h) => Some(h),
        Err(why) if ci() => panic!("{test}: {why} (CI=true: failing instead of skipping)"),
        Err(why) => {
            eprintln!("SKIPPED {test}: {why}; install a JDK 17+ and Maven (CI=true fails instead)");
            None
        }
    }
}

/// From `java -jar` to the harness' `ready` line (about 1 s here).
pub const READY_LIMIT: Duration = Duration::from_secs(60);
/// How long one command may take to be answered by [`Jvm::expect_call`].
pub const CALL_LIMIT: Duration = Duration::from_secs(30);

impl Harness {
    /// `java -jar <jar> <args>` ([`Jvm::spawn`]).
    pub fn spawn(&self, args: &[&str], stderr: Stdio) -> Result<Jvm, String> {
        Jvm::spawn(&self.java, &self.jar, args, stderr)
    }

    /// Spawns the harness (stderr inherited) and waits up to [`READY_LIMIT`] for its `ready`
    /// line, which it returns; panics if either fails.
    pub async fn start(&self, args: &[&str]) -> (Jvm, Value) {
        let mut j = self
            .spawn(args, Stdio::inherit())
            .unwrap_or_else(|e| panic!("start the harness JVM: {e}"));
        let (_, ready) = j.ready(READY_LIMIT).await.unwrap_or_else(|e| panic!("{e}"));
        (j, ready)
    }
}

/// A running harness JVM. Commands go to its stdin as `SEQ WORKER CMD ARGS` lines, SEQ counting
/// from 1; a thread of its own reads its stdout as the lines come, stamping each with the time
/// it was read. Every response must answer a command sent and not yet answered. The process is
/// killed on drop if it is still running, also when the test fails or panics.
pub struct Jvm {
    child: Child,
    stdin: Option<ChildStdin>,
    /// stdout lines, with the time each was read
    lines: tokio::sync::mpsc::UnboundedReceiver<(Instant, String)>,
    /// Commands sent and not answered yet, by seq.
    pending: BTreeSet<u64>,
    /// Responses read while waiting for another one, by seq.
    early: BTreeMap<u64, Value>,
    next_seq: u64,
}

impl Drop for Jvm {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Jvm {
    /// The JVM's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Starts `java -jar <jar> <args>` with piped stdin and stdout.
    pub fn spawn(java: &str, jar: &Path, args: &[&str], stderr: Stdio) -> Result<Jvm, String> {
        let mut child = Command::new(java)
            // behaviour, not speed: the client compiler only and the serial collector (about
            // half the CPU of a default JVM for the same run; the benchmarks' JVMs keep C2)
            .args(["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"])
            .arg("-jar")
            .arg(jar)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot run `{java} -jar {}`: {e}", jar.display()))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let stdin = child.stdin.take();
        let (tx, lines) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            // a `contend` result is one long line (megabytes in the full fault run)
            for line in std::io::BufReader::with_capacity(1 << 20, stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        Ok(Jvm {
            child,
            stdin,
            lines,
            pending: BTreeSet::new(),
            early: BTreeMap::new(),
            next_seq: 1,
        })
    }

    /// The next stdout line, and when it was read.
    pub async fn next_line(&mut self, deadline: tokio::time::Instant) -> Result<(Instant, String), String> {
        match tokio::time::timeout_at(deadline, self.lines.recv()).await {
            Ok(Some(l)) => Ok(l),
            Ok(None) => Err(format!(
                "the harness closed its stdout (exit status {:?})",
                self.child.try_wait().ok().flatten()
            )),
            Err(_) => Err("timed out".into()),
        }
    }

    /// The `ready` line, and when it came.
    pub async fn ready(&mut self, limit: Duration) -> Result<(Instant, Value), String> {
        let (at, line) = self
            .next_line(tokio::time::Instant::now() + limit)
            .await
            .map_err(|e| format!("no ready line within {limit:?}: {e}"))?;
        let v: Value = serde_json::from_str(&line).map_err(|e| format!("bad first line ({e}): {line}"))?;
        if v["event"] != "ready" {
            return Err(format!("the harness did not start: {line}"));
        }
        Ok((at, v))
    }

    /// Sends `SEQ WORKER CMD` (`cmd` with its arguments); returns SEQ.
    pub fn send(&mut self, worker: &str, cmd: &str) -> Result<u64, String> {
        let seq = self.next_seq;
        let line = format!("{seq} {worker} {cmd}");
        let pipe = self.stdin.as_mut().ok_or("the harness' stdin is closed")?;
        writeln!(pipe, "{line}")
            .and_then(|()| pipe.flush())
            .map_err(|e| format!("cannot send `{line}`: {e}"))?;
        self.next_seq += 1;
        self.pending.insert(seq);
        Ok(seq)
    }

    /// The whole response line to `seq`, whether the command succeeded or threw.
    pub async fn reply(&mut self, seq: u64, limit: Duration) -> Result<Value, String> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(v) = self.early.remove(&seq) {
                return Ok(v);
            }
            let (_, line) = self
                .next_line(deadline)
                .await
                .map_err(|e| format!("no response to seq {seq} within {limit:?}: {e}"))?;
            let v: Value =
                serde_json::from_str(&line).map_err(|e| format!("bad response line ({e}): {line:.300}"))?;
            let Some(s) = v["seq"].as_u64() else {
                return Err(format!("response without seq: {line:.300}"));
            };
            if !self.pending.remove(&s) {
                return Err(format!(
                    "response to seq {s}, which is not a command waiting for its answer (waiting for seq {seq}): {line:.300}"
                ));
            }
            if s == seq {
                return Ok(v);
            }
            self.early.insert(s, v);
        }
    }

    /// The `result` of the response to `seq`, or the Java exception as an error.
    pub async fn response(&mut self, seq: u64, limit: Duration) -> Result<Value, String> {
        let v = self.reply(seq, limit).await?;
        if v["ok"] == true {
            Ok(v["result"].clone())
        } else {
            Err(format!(
                "java `{}` threw {}: {}",
                v["cmd"].as_str().unwrap_or("?"),
                v["errorClass"].as_str().unwrap_or("?"),
                v["error"].as_str().unwrap_or("")
            ))
        }
    }

    /// Runs `cmd` on Java thread `worker`: its `result`, or the Java exception as an error.
    pub async fn call(&mut self, worker: &str, cmd: &str, limit: Duration) -> Result<Value, String> {
        let seq = self.send(worker, cmd)?;
        self.response(seq, limit).await
    }

    /// [`call`](Self::call) within [`CALL_LIMIT`]; panics on any failure, a Java exception
    /// included.
    pub async fn expect_call(&mut self, worker: &str, cmd: &str) -> Value {
        self.call(worker, cmd, CALL_LIMIT)
            .await
            .unwrap_or_else(|e| panic!("java `{cmd}` on {worker}: {e}"))
    }

    /// Closes stdin and waits up to `limit` for the process to end.
    pub async fn wait(&mut self, limit: Duration) -> Result<ExitStatus, String> {
        self.stdin = None;
        let deadline = Instant::now() + limit;
        loop {
            match self.child.try_wait() {
                Ok(Some(st)) => return Ok(st),
                Ok(None) if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(20)).await,
                Ok(None) => return Err(format!("the harness did not exit within {limit:?}")),
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    /// `exit` (answered within `limit`), then waits up to `limit` for the process to end with
    /// status 0 (it is killed on drop if it does not end).
    pub async fn exit(&mut self, limit: Duration) -> Result<(), String> {
        let sent = self.call("ctl", "exit", limit).await.map(drop);
        match self.wait(limit).await? {
            st if st.success() => sent,
            st => Err(format!("the harness exited with {st}")),
        }
    }
}
