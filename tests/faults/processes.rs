//! The worker processes seen from the parent: spawning them (this test binary re-executed),
//! telling them what to do on stdin, and reading their stdout lines.

use super::*;

/// Worker processes, killed (by pid) if the test ends before they exit.
pub(super) struct Workers {
    pub(super) children: Vec<Child>,
    pub(super) stdins: Vec<Option<ChildStdin>>,
}

impl Workers {
    /// A line to every worker's stdin.
    pub(super) fn tell(&mut self, line: &str) {
        for s in self.stdins.iter_mut().flatten() {
            let _ = writeln!(s, "{line}");
            let _ = s.flush();
        }
    }
}

impl Workers {
    /// Kills (by pid) every worker still running.
    pub(super) fn kill_remaining(&mut self) {
        for c in &mut self.children {
            if let Ok(None) = c.try_wait() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.kill_remaining();
    }
}

#[derive(Debug)]
pub(super) enum WorkerEvent {
    Line(usize, String),
    Eof(usize),
}

pub(super) fn spawn_workers(
    mode: &Mode,
    url: &str,
    run_dir: &Path,
    tx: tokio::sync::mpsc::UnboundedSender<WorkerEvent>,
) -> Workers {
    let exe = std::env::current_exe().expect("current_exe");
    let mut w = Workers {
        children: Vec::new(),
        stdins: Vec::new(),
    };
    for i in 0..mode.processes {
        let stderr = std::fs::File::create(run_dir.join(format!("worker-{i}.stderr"))).unwrap();
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                WORKER_TEST,
                "--nocapture",
                "--ignored",
                "--test-threads",
                "1",
            ])
            .env(ROLE_VAR, "worker")
            .env("FAULTS_URL", url)
            .env("FAULTS_HISTORY", run_dir.join(format!("worker-{i}.jsonl")))
            .env("FAULTS_SEED", mode.seed.to_string())
            .env("FAULTS_PROCESS", i.to_string())
            .env("FAULTS_HOT_TASKS", mode.hot_tasks.to_string())
            .env("FAULTS_LONG_TASKS", mode.long_tasks.to_string())
            .env("FAULTS_SEM_TASKS", mode.sem_tasks.to_string())
            .env("FAULTS_XSEM_TASKS", mode.xsem_tasks.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .expect("spawn a worker process");
        let stdout = child.stdout.take().unwrap();
        w.stdins.push(child.stdin.take());
        w.children.push(child);
        let tx = tx.clone();
        let log = run_dir.join(format!("worker-{i}.stdout"));
        std::thread::spawn(move || {
            let mut log = std::fs::File::create(log).unwrap();
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = writeln!(log, "{line}");
                let _ = tx.send(WorkerEvent::Line(i, line));
            }
            let _ = tx.send(WorkerEvent::Eof(i));
        });
    }
    w
}

/// Waits for a line starting with `prefix` from every worker; returns the rest of each line.
pub(super) async fn await_lines(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<WorkerEvent>,
    n: usize,
    prefix: &str,
    limit: Duration,
    run_dir: &Path,
) -> Result<Vec<String>, String> {
    let mut got: Vec<Option<String>> = vec![None; n];
    let deadline = tokio::time::Instant::now() + limit;
    while got.iter().any(Option::is_none) {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(WorkerEvent::Line(i, l))) => {
                // libtest may have printed `test worker_process ... ` on the same line
                if let Some(at) = l.find(prefix) {
                    got[i] = Some(l[at + prefix.len()..].trim().to_owned());
                }
            }
            Ok(Some(WorkerEvent::Eof(i))) if got[i].is_none() => {
                return Err(format!(
                    "worker {i} exited before printing `{prefix}`; its stderr ({}):\n{}",
                    run_dir.join(format!("worker-{i}.stderr")).display(),
                    tail(&run_dir.join(format!("worker-{i}.stderr")), 30)
                ));
            }
            Ok(Some(WorkerEvent::Eof(_))) => {}
            Ok(None) | Err(_) => {
                let missing: Vec<usize> = (0..n).filter(|&i| got[i].is_none()).collect();
                return Err(format!(
                    "workers {missing:?} did not print `{prefix}` within {limit:?}"
                ));
            }
        }
    }
    Ok(got.into_iter().map(Option::unwrap).collect())
}

pub(super) fn tail(p: &Path, lines: usize) -> String {
    let s = std::fs::read_to_string(p).unwrap_or_default();
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

/// `d` in nanoseconds, for arithmetic on `CLOCK_MONOTONIC` readings.
pub(super) fn ns(d: Duration) -> u64 {
    d.as_nanos() as u64
}
