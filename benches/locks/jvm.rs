//! The Redisson peer: the compat-tests harness jar run in a JVM, driven over stdin/stdout
//! (one JSON line per reply).

use std::io::{BufRead, BufReader, Write as _};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

pub(crate) struct Jvm {
    pub(crate) child: Child,
    pub(crate) stdin: std::process::ChildStdin,
    pub(crate) lines: std::sync::mpsc::Receiver<String>,
    pub(crate) seq: u64,
    pub(crate) version: String,
}

impl Drop for Jvm {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "{} b exit", self.seq + 1);
        let _ = self.stdin.flush();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Jvm {
    pub(crate) fn start(jar: &str, url: &str) -> Result<Jvm, String> {
        Jvm::start_with(jar, url, 30_000)
    }

    /// A harness whose Redisson has `lockWatchdogTimeout` = `watchdog_ms`.
    pub(crate) fn start_with(jar: &str, url: &str, watchdog_ms: u64) -> Result<Jvm, String> {
        let watchdog = watchdog_ms.to_string();
        let mut child = Command::new("java")
            .args([
                "-jar",
                jar,
                "--url",
                url.trim_end_matches('/'),
                "--watchdog-ms",
                &watchdog,
                "--bench",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot run java: {e}"))?;
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut jvm = Jvm {
            child,
            stdin,
            lines: rx,
            seq: 0,
            version: String::new(),
        };
        let ready = jvm
            .lines
            .recv_timeout(Duration::from_secs(60))
            .map_err(|_| "the harness did not start".to_string())?;
        let v: Value = serde_json::from_str(&ready).map_err(|e| format!("bad ready line {ready:?}: {e}"))?;
        if v["event"] != "ready" {
            return Err(format!("harness failed: {ready}"));
        }
        jvm.version = v["version"].as_str().unwrap_or("?").to_owned();
        Ok(jvm)
    }

    /// Runs one command on worker `b` and returns its result.
    pub(crate) fn call(&mut self, cmd: &str) -> Value {
        self.seq += 1;
        let seq = self.seq;
        writeln!(self.stdin, "{seq} b {cmd}").expect("write to the harness");
        self.stdin.flush().unwrap();
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(300))
                .expect("harness reply");
            let v: Value = serde_json::from_str(&line).expect("harness JSON");
            if v["seq"].as_u64() == Some(seq) {
                assert!(
                    v["ok"].as_bool() == Some(true),
                    "harness command {cmd:?} failed: {line}"
                );
                return v["result"].clone();
            }
        }
    }

    pub(crate) fn ns_list(v: &Value) -> Vec<f64> {
        v["ns"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_f64()).map(|x| x / 1000.0).collect())
            .unwrap_or_default()
    }
}

/// Runs a blocking harness call off the async workers.
pub(crate) async fn jcall(jvm: &Arc<std::sync::Mutex<Jvm>>, cmd: String) -> Value {
    let jvm = jvm.clone();
    tokio::task::spawn_blocking(move || jvm.lock().unwrap().call(&cmd))
        .await
        .unwrap()
}
