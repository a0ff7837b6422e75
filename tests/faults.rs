//! The contention run under faults: promises S1, S3, S4, L2 and L4 checked under the faults F2,
//! F3, F6, F7, F14, F17, F22, F23, F27 and F30 (the ids of `docs/guarantees.md`, "Scenario ids in
//! the tests"; its report also shows how far L3's bound held).
//!
//! `contention_under_faults` starts a redis-server, then several worker processes (this test
//! binary re-executed on the `#[ignore]`d test `worker_process`), each running many tasks that
//! take a few contended locks (`lock()`, `try_lock_for`, `lock_with_lease`), hold them briefly
//! while watching `guard.lost()`, and unlock, recording every critical section in a JSON-lines
//! history on the shared `CLOCK_MONOTONIC`. Meanwhile a nemesis injects faults: first only
//! faults that lose no data (SIGSTOP of redis, CLIENT KILL normal/pubsub, CLIENT PAUSE WRITE/ALL,
//! a busy script, SCRIPT FLUSH, OOM, a key of another type written over a held lock), then
//! data-loss faults (kill -9 + restart without persistence, FLUSHALL). Afterwards the checkers
//! of `common::history` judge the histories, and resource leaks are checked in Redis and in
//! every worker's `client.stats()`.
//!
//! The Java party: when a JDK is present, real Redisson takes part too. The parent starts the JVM
//! harness of `compat-tests/` (jar from `$REDISSON_HARNESS_JAR`, else built on demand with
//! `compat-tests/build-harness.sh 4.7.0`), checks that Java's `System.nanoTime()` is this
//! machine's `CLOCK_MONOTONIC`, and runs its `contend` command on two Java threads over the hot
//! locks from the warm-up to the end of phase A (faults without data loss; Java leaves before the
//! data-loss phase). Their sections enter the history as party `java` and are checked for overlap
//! with every Rust section; Redisson's exceptions and unlock results are reported, not judged.
//! Without a JDK the run goes on without Java and the report says `Java party: skipped (no
//! JDK ...)`; with `CI=true` that is a failure.
//!
//! Quick mode by default (about a minute); `FAULTS_FULL=1` for the full run (`scripts/faults`).
//! A markdown report goes to `<target dir>/fault-report.md` (quick) or `tests/FAULT-REPORT.md`
//! (full). `FAULTS_SEED=n` repeats a schedule.

mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::faults::{spaced, Fault, Nemesis, Sampler, SamplerReport, Step, Target};
use common::history::{
    check_losses, check_overlaps, check_unlocks, handoffs, instant_at, now_ns, summarize, summary_markdown,
    Attempt, AttemptResult, Handoffs, History, HistoryWriter, Loss, Party, Phase, Record, Rules, Section,
    UnlockResult,
};
use common::java::{self, ci};
use common::{init_tracing, RedisServer};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use redisson_lock::{Client, Config, Error, LeaseState, Unlocked};

// ---------------------------------------------------------------------------------------------
// Run parameters

/// Watchdog timeout of the workers: short, so stalls of a second matter (renewal every 1 s,
/// trusted for 3 s minus one command timeout).
const WATCHDOG: Duration = Duration::from_secs(3);
const COMMAND_TIMEOUT: Duration = Duration::from_millis(500);
const POLL_INTERVAL: Duration = Duration::from_millis(500);
/// Lease of `lock_with_lease`: generous next to a 0–3 ms hold.
const LEASE: Duration = Duration::from_secs(5);
/// How long a key of another type stays over the victim lock: longer than the watchdog's trust
/// window, so a correct holder has learned of its loss before anyone else can take the lock.
const POISON_TTL: Duration = Duration::from_millis(3_500);
const VICTIM: &str = "fault:victim";
/// Faults that stall Redis or cut connections (SIGSTOP, CLIENT PAUSE, busy script, CLIENT KILL
/// normal) are at least this far apart: more than the watchdog timeout, so one trust window
/// (timeout minus a command timeout) sees at most one of them, and a correct watchdog that
/// retries every timeout/3 loses no hold to them.
const DISRUPTION_SPACING: Duration = Duration::from_millis(3_200);
const HOT_LOCKS: usize = 4;
const LONG_LOCKS: usize = 2;
/// An acquisition that takes longer is recorded as `hung` and dropped (reported, not a failure:
/// nothing promises fairness, and the victim lock is held 4–6 s by each of several processes).
const ACQUIRE_LIMIT: Duration = Duration::from_secs(90);
const UNLOCK_LIMIT: Duration = Duration::from_secs(15);

/// Latches with a longer TTL than this are acquire-cancellation markers, not unlock latches
/// (whose TTL is the retry window: a few command timeouts).
const LATCH_SHORT_MS: i64 = 30_000;
/// No latch or marker may live longer.
const LATCH_LONG_MAX_MS: i64 = 15 * 60_000;
const WORKER_TEST: &str = "worker_process";
const ROLE_VAR: &str = "FAULTS_ROLE";

fn hot_names() -> Vec<String> {
    (0..HOT_LOCKS).map(|i| format!("fault:hot:{i}")).collect()
}

fn long_names() -> Vec<String> {
    (0..LONG_LOCKS).map(|i| format!("fault:long:{i}")).collect()
}

fn renew_name(process: u32) -> String {
    format!("fault:renew:{process}")
}

/// Every lock name any worker takes.
fn all_names(processes: usize) -> Vec<String> {
    let mut v = hot_names();
    v.extend(long_names());
    v.extend((0..processes as u32).map(renew_name));
    v.push(VICTIM.to_owned());
    v
}

fn channel(name: &str) -> String {
    format!("redisson_lock__channel:{{{name}}}")
}

#[derive(Clone, Debug)]
struct Mode {
    full: bool,
    processes: usize,
    hot_tasks: usize,
    long_tasks: usize,
    warmup: Duration,
    phase_a: Duration,
    phase_b: Duration,
    min_sections: usize,
    seed: u64,
}

impl Mode {
    fn from_env() -> Mode {
        let full = std::env::var("FAULTS_FULL").is_ok_and(|v| v == "1");
        let seed = std::env::var("FAULTS_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| now_ns() % 1_000_000);
        if full {
            Mode {
                full,
                processes: 4,
                hot_tasks: 8,
                long_tasks: 2,
                warmup: Duration::from_secs(2),
                phase_a: Duration::from_secs(150),
                phase_b: Duration::from_secs(60),
                min_sections: 10_000,
                seed,
            }
        } else {
            Mode {
                full,
                processes: 3,
                hot_tasks: 6,
                long_tasks: 1,
                warmup: Duration::from_millis(1_500),
                phase_a: Duration::from_secs(30),
                phase_b: Duration::from_secs(12),
                min_sections: 1_500,
                seed,
            }
        }
    }
}

fn config() -> Config {
    Config::default()
        .lock_watchdog_timeout(WATCHDOG)
        .command_timeout(COMMAND_TIMEOUT)
        .poll_interval(POLL_INTERVAL)
}

// ---------------------------------------------------------------------------------------------
// Worker process

/// A worker process's part of the run. Ignored (and a no-op without `FAULTS_ROLE=worker`): the
/// parent test runs it with `--exact worker_process --ignored`.
#[test]
#[ignore = "a worker process of contention_under_faults, started by it"]
fn worker_process() {
    if std::env::var(ROLE_VAR).as_deref() != Ok("worker") {
        return;
    }
    let env = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("worker: {k} not set"));
    let w = WorkerEnv {
        url: env("FAULTS_URL"),
        history: PathBuf::from(env("FAULTS_HISTORY")),
        seed: env("FAULTS_SEED").parse().unwrap(),
        process: env("FAULTS_PROCESS").parse().unwrap(),
        hot_tasks: env("FAULTS_HOT_TASKS").parse().unwrap(),
        long_tasks: env("FAULTS_LONG_TASKS").parse().unwrap(),
    };
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(worker_main(w));
}

struct WorkerEnv {
    url: String,
    history: PathBuf,
    seed: u64,
    process: u32,
    hot_tasks: usize,
    long_tasks: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Contended hot locks, 0–3 ms holds, every acquire method.
    Hot,
    /// Contended watchdog holds of 1.2–3.5 s: renewals under faults.
    Long,
    /// This process's own lock, held for the whole run (taken again after a loss): it is in
    /// every renewal batch (F30), and must survive every fault that loses no data (S3, F2).
    Renew,
    /// The lock the nemesis writes a key of another type over, held 4–6 s at a time (longer
    /// than the watchdog's trust window, so a renewal batch meets the foreign key for longer).
    Victim,
}

impl Role {
    fn label(self) -> &'static str {
        match self {
            Role::Hot => "hot",
            Role::Long => "long",
            Role::Renew => "renew",
            Role::Victim => "victim",
        }
    }
}

fn read_stdin_line() -> Option<String> {
    let mut s = String::new();
    match std::io::stdin().lock().read_line(&mut s) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(s.trim().to_owned()),
    }
}

/// Orders from the parent on the worker's stdin: `GO`, `STOP <CLOCK_MONOTONIC ns>`, then EOF
/// (exit). EOF before `STOP` (the parent died) stops at once.
struct Control {
    go: tokio::sync::watch::Receiver<bool>,
    stop: tokio::sync::watch::Receiver<Option<u64>>,
    eof: tokio::sync::watch::Receiver<bool>,
}

fn read_control() -> Control {
    let (go_tx, go) = tokio::sync::watch::channel(false);
    let (stop_tx, stop) = tokio::sync::watch::channel(None);
    let (eof_tx, eof) = tokio::sync::watch::channel(false);
    std::thread::spawn(move || {
        while let Some(line) = read_stdin_line() {
            if line == "GO" {
                go_tx.send_replace(true);
            } else if let Some(t) = line.strip_prefix("STOP ").and_then(|t| t.parse().ok()) {
                stop_tx.send_replace(Some(t));
            }
        }
        go_tx.send_replace(true);
        stop_tx.send_if_modified(|s| {
            let unset = s.is_none();
            if unset {
                *s = Some(0);
            }
            unset
        });
        eof_tx.send_replace(true);
    });
    Control { go, stop, eof }
}

/// The stop time has come.
fn stop_due(stop: &tokio::sync::watch::Receiver<Option<u64>>) -> bool {
    matches!(*stop.borrow(), Some(t) if now_ns() >= t)
}

/// Resolves at the stop time (once the parent has set one).
async fn stop_signal(mut stop: tokio::sync::watch::Receiver<Option<u64>>) {
    let t = stop
        .wait_for(Option::is_some)
        .await
        .map(|v| v.unwrap_or(0))
        .unwrap_or(0);
    tokio::time::sleep_until(instant_at(t)).await;
}

async fn worker_main(w: WorkerEnv) {
    let client = Client::builder()
        .url(w.url.clone())
        .config(config())
        .build()
        .await
        .unwrap_or_else(|e| panic!("worker {}: connect to {}: {e}", w.process, w.url));
    let mut control = read_control();
    println!("FAULTS-READY {}", w.process);
    std::io::stdout().flush().unwrap();
    let _ = control.go.wait_for(|g| *g).await;
    let writer = Arc::new(HistoryWriter::create(&w.history));

    let mut roles = Vec::new();
    roles.extend(std::iter::repeat_n(Role::Hot, w.hot_tasks));
    roles.extend(std::iter::repeat_n(Role::Long, w.long_tasks));
    roles.push(Role::Renew);
    roles.push(Role::Victim);
    let mut tasks = Vec::new();
    for (i, role) in roles.into_iter().enumerate() {
        let ctx = TaskCtx {
            client: client.clone(),
            writer: writer.clone(),
            process: w.process,
            worker: i as u32,
            role,
            stop: control.stop.clone(),
            seed: w.seed ^ (u64::from(w.process) << 20) ^ ((i as u64) << 8),
        };
        tasks.push(tokio::spawn(task_loop(ctx)));
    }
    let mut counts = (0usize, 0usize);
    let mut panics = Vec::new();
    for t in tasks {
        match t.await {
            Ok((s, a)) => {
                counts.0 += s;
                counts.1 += a;
            }
            Err(e) => panics.push(e.to_string()),
        }
    }
    writer.flush();
    assert!(
        panics.is_empty(),
        "worker {}: tasks panicked: {panics:?}",
        w.process
    );

    // Leaks (L4): renewal entries, channels and waiters go back to 0 once every task is done
    // (cancelled acquisitions clean up in the background, so give that a moment).
    let at_end = client.stats();
    let settle = Instant::now();
    while busy(&client) && settle.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let st = client.stats();
    let line = serde_json::json!({
        "process": w.process,
        "renewing": st.renewing,
        "channels": st.channels,
        "waiters": st.waiters,
        "at_tasks_end": {"renewing": at_end.renewing, "channels": at_end.channels, "waiters": at_end.waiters},
        "settle_ms": settle.elapsed().as_millis() as u64,
        "sections": counts.0,
        "attempts": counts.1,
    });
    println!("FAULTS-STATS {line}");
    std::io::stdout().flush().unwrap();
    // Stay connected (and idle) while the parent checks Redis, until it closes our stdin.
    let _ = control.eof.wait_for(|e| *e).await;
    drop(client);
}

/// Whether the client still renews, subscribes or waits for anything.
fn busy(client: &Client) -> bool {
    let s = client.stats();
    s.renewing + s.channels + s.waiters > 0
}

struct TaskCtx {
    client: Client,
    writer: Arc<HistoryWriter>,
    process: u32,
    worker: u32,
    role: Role,
    stop: tokio::sync::watch::Receiver<Option<u64>>,
    seed: u64,
}

#[derive(Clone, Copy, Debug)]
enum Method {
    Lock,
    TryFor(Duration),
    Lease(Duration),
}

impl Method {
    fn label(self) -> &'static str {
        match self {
            Method::Lock => "lock",
            Method::TryFor(_) => "try_lock_for",
            Method::Lease(_) => "lock_with_lease",
        }
    }
}

/// One task: acquire, hold while watching for a loss, unlock, record; until told to stop.
/// Returns (sections, attempts without a section).
async fn task_loop(ctx: TaskCtx) -> (usize, usize) {
    let mut rng = StdRng::seed_from_u64(ctx.seed);
    let names: Vec<String> = match ctx.role {
        Role::Hot => hot_names(),
        Role::Long => long_names(),
        Role::Renew => vec![renew_name(ctx.process)],
        Role::Victim => vec![VICTIM.to_owned()],
    };
    let (mut sections, mut attempts) = (0usize, 0usize);
    let mut seq: u64 = 0;
    while !stop_due(&ctx.stop) {
        seq += 1;
        // A fresh owner per acquisition (unique in this process; the client id makes it unique
        // across processes): a stale hold of an earlier iteration can never be re-entered, so
        // `Partial` can only come from one acquisition counted twice.
        let owner = ((u64::from(ctx.worker) + 1) << 32) | seq;
        let name = &names[rng.random_range(0..names.len())];
        let lock = ctx
            .client
            .lock(name)
            .expect("a valid lock name")
            .with_owner(owner);
        let method = match ctx.role {
            Role::Hot => match rng.random_range(0..100) {
                0..40 => Method::Lock,
                40..75 => Method::TryFor(Duration::from_millis(rng.random_range(20..=200))),
                _ => Method::Lease(LEASE),
            },
            _ => Method::Lock,
        };
        let acquire_start = now_ns();
        let acquire = async {
            match method {
                Method::Lock => lock.lock().await.map(Some),
                Method::TryFor(w) => lock.try_lock_for(w).await,
                Method::Lease(l) => lock.lock_with_lease(l).await.map(Some),
            }
        };
        let res = tokio::select! {
            r = acquire => Ok(r),
            _ = stop_signal(ctx.stop.clone()) => Err(AttemptResult::Cancelled),
            _ = tokio::time::sleep(ACQUIRE_LIMIT) => Err(AttemptResult::Hung),
        };
        let attempt = |outcome: AttemptResult| {
            Record::Attempt(Attempt {
                lock: name.clone(),
                process: ctx.process,
                worker: ctx.worker,
                role: ctx.role.label().into(),
                method: method.label().into(),
                start: acquire_start,
                end: now_ns(),
                wait_ms: match method {
                    Method::TryFor(w) => Some(w.as_millis() as u64),
                    _ => None,
                },
                outcome,
            })
        };
        let guard = match res {
            Err(outcome) => {
                ctx.writer.record(&attempt(outcome));
                attempts += 1;
                continue;
            }
            Ok(Ok(None)) => {
                ctx.writer.record(&attempt(AttemptResult::NotAcquired));
                attempts += 1;
                continue;
            }
            Ok(Err(e)) => {
                ctx.writer.record(&attempt(AttemptResult::Error {
                    message: e.to_string(),
                }));
                attempts += 1;
                // Redis may be down: do not spin
                tokio::time::sleep(Duration::from_millis(rng.random_range(10..=50))).await;
                continue;
            }
            Ok(Ok(Some(g))) => g,
        };
        let start = now_ns();
        let hold = match ctx.role {
            Role::Hot => Duration::from_micros(rng.random_range(0..=3_000)),
            Role::Long => Duration::from_millis(rng.random_range(1_200..=3_500)),
            Role::Renew => Duration::from_secs(3_600), // until the stop (or a loss)
            Role::Victim => Duration::from_millis(rng.random_range(4_000..=6_000)),
        };
        let lost_signal = guard.lost();
        let mut lost = tokio::select! {
            reason = lost_signal => Some(Loss { reason: format!("{reason:?}"), learned: now_ns() }),
            _ = tokio::time::sleep(hold) => None,
            _ = stop_signal(ctx.stop.clone()) => None,
        };
        if lost.is_none() {
            if let LeaseState::Lost(reason) = guard.state() {
                lost = Some(Loss {
                    reason: format!("{reason:?}"),
                    learned: now_ns(),
                });
            }
        }
        let end = now_ns();
        let unlock = match tokio::time::timeout(UNLOCK_LIMIT, guard.unlock()).await {
            Ok(Ok(Unlocked::Released)) => UnlockResult::Released,
            Ok(Ok(Unlocked::Partial)) => UnlockResult::Partial,
            Ok(Ok(other)) => UnlockResult::Error {
                message: format!("unexpected unlock result {other:?}"),
            },
            Ok(Err(Error::NotHeld { .. })) => UnlockResult::NotHeld,
            Ok(Err(e)) => UnlockResult::Error {
                message: e.to_string(),
            },
            Err(_) => UnlockResult::Hung,
        };
        let unlock_done = now_ns();
        ctx.writer.record(&Record::Section(Section {
            party: Party::Rust,
            lock: name.clone(),
            process: ctx.process,
            worker: ctx.worker,
            role: ctx.role.label().into(),
            method: method.label().into(),
            owner: format!("p{}:{owner}", ctx.process),
            acquire_start,
            start,
            end,
            unlock_done,
            unlock,
            lost,
        }));
        sections += 1;
        if ctx.role != Role::Hot {
            tokio::time::sleep(Duration::from_millis(rng.random_range(0..=50))).await;
        }
    }
    (sections, attempts)
}

// ---------------------------------------------------------------------------------------------
// The Java party: real Redisson (the JVM harness of compat-tests/) contending for the hot locks

/// Java worker threads, i.e. Redisson owners `<client id>:<thread id>`, each taking the hot locks
/// in turn with `lock()` (watchdog mode).
const JAVA_WORKERS: usize = 2;
/// Java holds last 0..=3 ms, as the Rust hot tasks' do.
const JAVA_MAX_HOLD_MS: u64 = 3;
/// From `java -jar` to the harness' ready line (0.5–1.3 s here).
const JAVA_READY_LIMIT: Duration = Duration::from_secs(60);
/// How long the parent waits for the `contend` results after `stopContend` (a round waiting in
/// `lock()` finishes first).
const JAVA_STOP_LIMIT: Duration = Duration::from_secs(30);
/// A run with Java must give it at least this many sections, and at least this many hand-overs
/// of a lock from Java to Rust and from Rust to Java, or the Java/Rust check covered nothing.
const JAVA_MIN_SECTIONS: usize = 100;
const JAVA_MIN_HANDOFFS: usize = 10;

/// Whether the Java party takes part, and with which jar.
enum JavaPlan {
    Run {
        java: String,
        jar: PathBuf,
        /// Where the jar came from, for the report.
        source: String,
    },
    /// Why not (`no JDK ...` first).
    Skip(String),
}

/// A JDK and the harness jar ([`java::locate`]), or why the Java party cannot play.
fn plan_java() -> JavaPlan {
    match java::locate() {
        Ok(java::Harness { java, jar, source }) => JavaPlan::Run { java, jar, source },
        Err(why) => JavaPlan::Skip(why),
    }
}

/// The JVM harness (`java -jar harness.jar`, line protocol of `compat-tests/README.md`), killed
/// on drop if it is still running: also when the test fails or panics.
struct JavaHarness {
    child: Child,
    stdin: Option<ChildStdin>,
    /// stdout lines, with the time each was read
    lines: tokio::sync::mpsc::UnboundedReceiver<(Instant, String)>,
    /// Responses read while waiting for another one, by seq.
    early: BTreeMap<u64, serde_json::Value>,
    next_seq: u64,
}

impl Drop for JavaHarness {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl JavaHarness {
    /// Starts the JVM with the workers' watchdog timeout; its stderr goes to `java.stderr`.
    fn spawn(java: &str, jar: &Path, port: u16, run_dir: &Path) -> Result<JavaHarness, String> {
        let stderr = std::fs::File::create(run_dir.join("java.stderr")).map_err(|e| e.to_string())?;
        let mut child = Command::new(java)
            .arg("-jar")
            .arg(jar)
            .args([
                "--url",
                &format!("redis://127.0.0.1:{port}"),
                "--watchdog-ms",
                &WATCHDOG.as_millis().to_string(),
                "--exit-grace-ms",
                "3000",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .map_err(|e| format!("cannot run `{java} -jar {}`: {e}", jar.display()))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let stdin = child.stdin.take();
        let (tx, lines) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            // a `contend` result is one long line (megabytes in the full run)
            for line in std::io::BufReader::with_capacity(1 << 20, stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        Ok(JavaHarness {
            child,
            stdin,
            lines,
            early: BTreeMap::new(),
            next_seq: 1,
        })
    }

    async fn next_line(&mut self, deadline: tokio::time::Instant) -> Result<(Instant, String), String> {
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
    async fn ready(&mut self, limit: Duration) -> Result<(Instant, serde_json::Value), String> {
        let (at, line) = self
            .next_line(tokio::time::Instant::now() + limit)
            .await
            .map_err(|e| format!("no ready line within {limit:?}: {e}"))?;
        let v: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| format!("bad first line ({e}): {line}"))?;
        if v["event"] != "ready" {
            return Err(format!("the harness did not start: {line}"));
        }
        Ok((at, v))
    }

    /// Sends `SEQ WORKER CMD ARGS`; returns SEQ.
    fn send(&mut self, worker: &str, cmd: &str, args: &[String]) -> Result<u64, String> {
        let seq = self.next_seq;
        self.next_seq += 1;
        let mut line = format!("{seq} {worker} {cmd}");
        for a in args {
            line.push(' ');
            line.push_str(a);
        }
        let pipe = self.stdin.as_mut().ok_or("the harness' stdin is closed")?;
        writeln!(pipe, "{line}")
            .and_then(|()| pipe.flush())
            .map_err(|e| format!("cannot send `{line}`: {e}"))?;
        Ok(seq)
    }

    /// The `result` of the response to `seq`, or the Java exception as an error.
    async fn response(&mut self, seq: u64, limit: Duration) -> Result<serde_json::Value, String> {
        let deadline = tokio::time::Instant::now() + limit;
        let v = loop {
            if let Some(v) = self.early.remove(&seq) {
                break v;
            }
            let (_, line) = self
                .next_line(deadline)
                .await
                .map_err(|e| format!("no response to seq {seq} within {limit:?}: {e}"))?;
            let v: serde_json::Value =
                serde_json::from_str(&line).map_err(|e| format!("bad response line ({e}): {line:.300}"))?;
            match v["seq"].as_u64() {
                Some(s) if s == seq => break v,
                Some(s) => {
                    self.early.insert(s, v);
                }
                None => return Err(format!("response without seq: {line:.300}")),
            }
        };
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

    async fn call(
        &mut self,
        worker: &str,
        cmd: &str,
        args: &[String],
        limit: Duration,
    ) -> Result<serde_json::Value, String> {
        let seq = self.send(worker, cmd, args)?;
        self.response(seq, limit).await
    }

    /// `exit`, then waits for the process (it is killed on drop if it does not end).
    async fn exit(&mut self, limit: Duration) -> Result<(), String> {
        let sent = self.call("ctl", "exit", &[], limit).await.map(drop);
        self.stdin = None;
        let deadline = Instant::now() + limit;
        loop {
            match self.child.try_wait() {
                Ok(Some(st)) if st.success() => return sent,
                Ok(Some(st)) => return Err(format!("the harness exited with {st}")),
                Ok(None) if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(20)).await,
                Ok(None) => return Err(format!("the harness did not exit within {limit:?}")),
                Err(e) => return Err(e.to_string()),
            }
        }
    }
}

/// One Java worker's `contend` summary.
#[derive(Clone, Debug, Default)]
struct JavaWorker {
    name: String,
    thread_id: u64,
    stopped: String,
    elapsed_s: f64,
    rounds: usize,
    sections: usize,
}

/// What the Java party did, for the report (its anomalies are reported, not failed on).
#[derive(Clone, Debug, Default)]
struct JavaFigures {
    /// `ran` or `skipped (...)` / `failed (...)`.
    status: String,
    ran: bool,
    jar: String,
    source: String,
    version: String,
    client_id: String,
    /// Clock samples: (CLOCK_MONOTONIC before the call, Java's `System.nanoTime()`, after).
    clock: Vec<(u64, u64, u64)>,
    /// From `java -jar` to the ready line.
    ready: Duration,
    /// How long after the warm-up began Java began contending (ns).
    joined: u64,
    /// From `stopContend` to the last `contend` result.
    stop: Duration,
    /// `exit` until the JVM was gone.
    exit: Duration,
    workers: Vec<JavaWorker>,
    /// Round outcome -> count (`released`, `partial`, `not-held`, `unlock-error`, `lock-error`).
    outcomes: BTreeMap<String, usize>,
    /// `lock()` / `unlock()` / `getHoldCount()` + exception class -> count.
    exceptions: BTreeMap<String, usize>,
    /// The first message of each of them.
    exception_examples: BTreeMap<String, String>,
    /// Holds a `partial` round found left over and released (Redis counted an acquisition twice).
    extra_holds: u64,
    /// The JVM's stderr: lines per log level, and a few distinct examples.
    stderr_levels: BTreeMap<String, usize>,
    stderr_examples: Vec<String>,
}

impl JavaFigures {
    fn skipped(&self) -> bool {
        !self.ran
    }

    /// `System.nanoTime()` fell inside `[before, after]` of `CLOCK_MONOTONIC` in every sample.
    fn clock_ok(&self) -> bool {
        !self.clock.is_empty() && self.clock.iter().all(|&(b, j, a)| b <= j && j <= a)
    }

    fn clock_line(&self) -> String {
        if self.clock.is_empty() {
            return "not checked".into();
        }
        let inside = self.clock.iter().filter(|&&(b, j, a)| b <= j && j <= a).count();
        let (b, j, a) = *self
            .clock
            .iter()
            .min_by_key(|&&(b, _, a)| a.saturating_sub(b))
            .unwrap();
        format!(
            "Java's `System.nanoTime()` fell inside [before, after] of this process' `CLOCK_MONOTONIC` in {inside}/{} samples \
             (tightest bracket {:.0} µs, Java's reading {:.0} µs after `before`): one clock",
            self.clock.len(),
            a.saturating_sub(b) as f64 / 1e3,
            j as f64 / 1e3 - b as f64 / 1e3
        )
    }
}

/// Waits for the harness' ready line and checks that Java's `System.nanoTime()` is this
/// process' `CLOCK_MONOTONIC` (five calls of `clock`, each bracketed by two readings).
async fn java_start(j: &mut JavaHarness, jf: &mut JavaFigures, spawned: Instant) -> Result<(), String> {
    let (at, ready) = j.ready(JAVA_READY_LIMIT).await?;
    jf.ready = at - spawned;
    jf.version = ready["version"].as_str().unwrap_or("?").to_owned();
    jf.client_id = ready["clientId"].as_str().unwrap_or("?").to_owned();
    for _ in 0..5 {
        let before = now_ns();
        let r = j.call("ctl", "clock", &[], Duration::from_secs(10)).await?;
        let after = now_ns();
        let java = r["nanoTime"]
            .as_u64()
            .ok_or_else(|| format!("`clock` without nanoTime: {r}"))?;
        jf.clock.push((before, java, after));
    }
    if !jf.clock_ok() {
        return Err(format!(
            "Java's System.nanoTime() is not CLOCK_MONOTONIC here, so Java and Rust sections cannot be compared: samples (before, java, after) {:?}",
            jf.clock
        ));
    }
    Ok(())
}

/// Ends the `contend` loops (`stopContend`), collects their rounds as sections of the history
/// (party `java`, process `process`), and exits the JVM.
async fn java_finish(
    j: &mut JavaHarness,
    seqs: &[(String, u64)],
    jf: &mut JavaFigures,
    process: u32,
) -> Result<Vec<Section>, String> {
    let asked = Instant::now();
    let stop = j.send("ctl", "stopContend", &[])?;
    let mut sections = Vec::new();
    let deadline = asked + JAVA_STOP_LIMIT;
    let mut first_err = None;
    for (worker, (name, seq)) in seqs.iter().enumerate() {
        let left = deadline.saturating_duration_since(Instant::now());
        let r = match j.response(*seq, left).await {
            Ok(r) => r,
            Err(e) => {
                first_err.get_or_insert(format!("{name}: {e}"));
                continue;
            }
        };
        let names: Vec<String> = r["names"]
            .as_array()
            .map(|a| a.iter().filter_map(|n| n.as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        let field = r["field"].as_str().unwrap_or("?").to_owned();
        let rounds = r["rounds"].as_array().cloned().unwrap_or_default();
        let mut w = JavaWorker {
            name: name.clone(),
            thread_id: r["threadId"].as_u64().unwrap_or(0),
            stopped: r["stopped"].as_str().unwrap_or("?").to_owned(),
            elapsed_s: r["elapsed_ns"].as_u64().unwrap_or(0) as f64 / 1e9,
            rounds: rounds.len(),
            sections: 0,
        };
        for x in &rounds {
            let outcome = x["outcome"].as_str().unwrap_or("?").to_owned();
            *jf.outcomes.entry(outcome.clone()).or_default() += 1;
            if let Some(class) = x["errorClass"].as_str() {
                let call = if outcome == "lock-error" {
                    "lock()"
                } else {
                    "unlock()"
                };
                let key = format!("{call}: {class}");
                *jf.exceptions.entry(key.clone()).or_default() += 1;
                jf.exception_examples.entry(key).or_insert_with(|| {
                    x["error"]
                        .as_str()
                        .unwrap_or_default()
                        .chars()
                        .take(200)
                        .collect()
                });
            }
            if let Some(class) = x["checkErrorClass"].as_str() {
                let key = format!("getHoldCount(): {class}");
                *jf.exceptions.entry(key.clone()).or_default() += 1;
                jf.exception_examples.entry(key).or_insert_with(|| {
                    x["checkError"]
                        .as_str()
                        .unwrap_or_default()
                        .chars()
                        .take(200)
                        .collect()
                });
            }
            jf.extra_holds += x["extra"].as_u64().unwrap_or(0);
            let (Some(start), Some(end)) = (x["start_ns"].as_u64(), x["end_ns"].as_u64()) else {
                continue; // lock() threw: no section
            };
            let unlock = match outcome.as_str() {
                "released" => UnlockResult::Released,
                "partial" => UnlockResult::Partial,
                "not-held" => UnlockResult::NotHeld,
                _ => UnlockResult::Error {
                    message: format!(
                        "{}: {}",
                        x["errorClass"].as_str().unwrap_or("?"),
                        x["error"].as_str().unwrap_or("")
                    ),
                },
            };
            let k = x["lock"].as_u64().unwrap_or(u64::MAX) as usize;
            sections.push(Section {
                party: Party::Java,
                lock: names.get(k).cloned().unwrap_or_else(|| format!("?{k}")),
                process,
                worker: worker as u32,
                role: "java".into(),
                method: "lock".into(),
                owner: field.clone(),
                acquire_start: x["acquire_ns"].as_u64().unwrap_or(start),
                start,
                end,
                unlock_done: x["unlock_ns"].as_u64().unwrap_or(end),
                unlock,
                lost: None,
            });
            w.sections += 1;
        }
        jf.workers.push(w);
    }
    jf.stop = asked.elapsed();
    let _ = j.response(stop, Duration::from_secs(5)).await;
    let exiting = Instant::now();
    let exited = j.exit(Duration::from_secs(10)).await;
    jf.exit = exiting.elapsed();
    if let Some(e) = first_err {
        return Err(e);
    }
    exited.map_err(|e| format!("exit: {e}"))?;
    Ok(sections)
}

/// Lines per log level of the JVM's stderr (slf4j-simple: `[thread] LEVEL logger - message`),
/// and up to five distinct WARN/ERROR lines.
fn java_stderr(path: &Path, jf: &mut JavaFigures) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    for line in text.lines() {
        let level = ["ERROR", "WARN", "INFO", "DEBUG"]
            .into_iter()
            .find(|l| line.contains(&format!("] {l} ")))
            .unwrap_or("other (stack traces, ...)");
        *jf.stderr_levels.entry(level.to_owned()).or_default() += 1;
        if matches!(level, "ERROR" | "WARN") && jf.stderr_examples.len() < 5 {
            let gist: String = line
                .split_once("] ")
                .map_or(line, |(_, r)| r)
                .chars()
                .take(160)
                .collect();
            if !jf
                .stderr_examples
                .iter()
                .any(|e| e.chars().take(60).eq(gist.chars().take(60)))
            {
                jf.stderr_examples.push(gist);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parent

/// Worker processes, killed (by pid) if the test ends before they exit.
struct Workers {
    children: Vec<Child>,
    stdins: Vec<Option<ChildStdin>>,
}

impl Workers {
    /// A line to every worker's stdin.
    fn tell(&mut self, line: &str) {
        for s in self.stdins.iter_mut().flatten() {
            let _ = writeln!(s, "{line}");
            let _ = s.flush();
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        for c in &mut self.children {
            if let Ok(None) = c.try_wait() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

#[derive(Debug)]
enum WorkerEvent {
    Line(usize, String),
    Eof(usize),
}

fn spawn_workers(
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
async fn await_lines(
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

fn tail(p: &Path, lines: usize) -> String {
    let s = std::fs::read_to_string(p).unwrap_or_default();
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

async fn numsub(
    c: &mut redis::aio::MultiplexedConnection,
    cmd: &str,
    names: &[String],
) -> Vec<(String, i64)> {
    let mut q = redis::cmd("PUBSUB");
    q.arg(cmd);
    for n in names {
        q.arg(channel(n));
    }
    let v: Vec<redis::Value> = q.query_async(c).await.unwrap_or_default();
    let mut out = Vec::new();
    for pair in v.chunks(2) {
        if let [k, n] = pair {
            let k: String = redis::from_redis_value(k.clone()).unwrap_or_default();
            let n: i64 = redis::from_redis_value(n.clone()).unwrap_or_default();
            out.push((k, n));
        }
    }
    out
}

async fn scan(c: &mut redis::aio::MultiplexedConnection, pattern: &str) -> Vec<String> {
    let mut cursor = 0u64;
    let mut out = Vec::new();
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(c)
            .await
            .unwrap_or((0, Vec::new()));
        out.extend(keys);
        if next == 0 {
            return out;
        }
        cursor = next;
    }
}

/// Describes a key for a failure message: type, TTL, content.
async fn describe_key(c: &mut redis::aio::MultiplexedConnection, key: &str) -> String {
    let t: String = redis::cmd("TYPE")
        .arg(key)
        .query_async(c)
        .await
        .unwrap_or_default();
    let pttl: i64 = redis::cmd("PTTL").arg(key).query_async(c).await.unwrap_or(-3);
    let content = if t == "hash" {
        let v: Vec<(String, String)> = redis::cmd("HGETALL")
            .arg(key)
            .query_async(c)
            .await
            .unwrap_or_default();
        format!("{v:?}")
    } else {
        String::new()
    };
    format!("`{key}` ({t}, PTTL {pttl} ms) {content}")
}

/// Resource checks while the workers are idle but connected, and after they exited.
#[derive(Default)]
struct Resources {
    lines: Vec<String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contention_under_faults() {
    if std::env::var_os(ROLE_VAR).is_some() {
        return;
    }
    init_tracing();
    let wall = Instant::now();
    let mode = Mode::from_env();
    // The Java party (real Redisson) is settled first: it may build the harness jar.
    let java_plan = plan_java();
    if let (JavaPlan::Skip(reason), true) = (&java_plan, ci()) {
        panic!(
            "CI=true: the fault run's Java party (real Redisson) is required, but it is unavailable: {reason}. \
             Install a JDK 17+ and Maven (scripts/test does), or point {} at a harness jar.",
            java::JAR_VAR
        );
    }
    let names = all_names(mode.processes);
    let run_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("faults-{}", std::process::id()));
    std::fs::create_dir_all(&run_dir).unwrap();
    let target = Target::new(RedisServer::start());
    let redis_version = {
        let mut c = target.conn().await.unwrap();
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query_async(&mut c)
            .await
            .unwrap();
        common::faults::info_field(&info, "redis_version")
            .unwrap_or("?")
            .to_owned()
    };
    let mut failures: Vec<String> = Vec::new();
    let mut parent_log = History::default();
    let rules = Rules {
        aftermath_ns: 1_000_000_000,
        lookback_ns: WATCHDOG.as_nanos() as u64,
    };

    // workers
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut workers = spawn_workers(&mode, &target.url, &run_dir, tx);
    // the JVM starts meanwhile
    let mut jf = JavaFigures::default();
    let java_spawned = Instant::now();
    let mut java: Option<JavaHarness> = match &java_plan {
        JavaPlan::Run { java, jar, source } => {
            jf.jar = repo_path(jar);
            jf.source = source.clone();
            match JavaHarness::spawn(java, jar, target.port, &run_dir) {
                Ok(j) => Some(j),
                Err(e) => {
                    jf.status = format!("failed ({e})");
                    failures.push(format!("Java party: {e}"));
                    None
                }
            }
        }
        JavaPlan::Skip(reason) => {
            jf.status = format!("skipped ({reason})");
            None
        }
    };
    if let Err(e) = await_lines(
        &mut rx,
        mode.processes,
        "FAULTS-READY",
        Duration::from_secs(60),
        &run_dir,
    )
    .await
    {
        panic!("worker start-up: {e}");
    }
    let t0 = now_ns();
    let ns = |d: Duration| d.as_nanos() as u64;
    let a_start = t0 + ns(mode.warmup);
    let a_end = a_start + ns(mode.phase_a);
    workers.tell("GO");
    // Java joins during the warm-up, as soon as the JVM is ready (its start costs the run nothing
    // unless it outlasts the warm-up), and contends for the hot locks until `stopContend` at the
    // end of phase A (the budget only bounds a run whose parent went away without closing stdin).
    if let Some(j) = java.as_mut() {
        if let Err(e) = java_start(j, &mut jf, java_spawned).await {
            jf.status = format!("failed ({e})");
            failures.push(format!(
                "Java party: {e}; its stderr:\n{}",
                tail(&run_dir.join("java.stderr"), 15)
            ));
            java = None; // killed
        }
    }
    let mut java_seqs = Vec::new();
    if let Some(j) = java.as_mut() {
        jf.joined = now_ns().saturating_sub(t0);
        let budget_ms = a_end.saturating_sub(now_ns()) / 1_000_000 + JAVA_STOP_LIMIT.as_millis() as u64;
        let args = [
            hot_names().join(","),
            "0".to_owned(),
            JAVA_MAX_HOLD_MS.to_string(),
            budget_ms.to_string(),
        ];
        for i in 0..JAVA_WORKERS {
            let name = format!("j{i}");
            match j.send(&name, "contend", &args) {
                Ok(seq) => java_seqs.push((name, seq)),
                Err(e) => failures.push(format!("Java party: {e}")),
            }
        }
    }
    let sampler = Sampler::spawn(target.url.clone(), names.clone(), Duration::from_millis(50));
    let mut rng = StdRng::seed_from_u64(mode.seed);

    // warm-up: no faults
    tokio::time::sleep_until(instant_at(a_start)).await;
    parent_log.phases.push(Phase {
        name: "warm-up".into(),
        data_loss: false,
        start: t0,
        end: a_start,
    });

    // phase A: faults that lose no data; the last one may end after the planned end (a poison
    // waits for a fresh hold, then lasts 3.5 s). Faults that stall Redis or cut connections are
    // spaced by more than the watchdog timeout.
    let mut round = Vec::new();
    for _ in 0..(mode.phase_a.as_secs() / 3 + 2) {
        round.extend(Fault::non_data_loss_round(&mut rng, VICTIM, POISON_TTL));
    }
    let steps = spaced(&mut rng, round, 200..=700, DISRUPTION_SPACING);
    let nemesis = Nemesis::spawn(
        target.clone(),
        steps,
        instant_at(a_end - ns(Duration::from_secs(3))),
    );
    let mut faults = nemesis.join().await;
    // the Java party leaves before the data-loss faults
    let mut java_file = None;
    if let Some(mut j) = java.take() {
        match java_finish(&mut j, &java_seqs, &mut jf, mode.processes as u32).await {
            Ok(sections) => {
                let p = run_dir.join("java.jsonl");
                let w = HistoryWriter::create(&p);
                for s in sections {
                    w.record(&Record::Section(s));
                }
                w.flush();
                java_file = Some(p);
                jf.ran = true;
                jf.status = "ran".into();
            }
            Err(e) => {
                jf.status = format!("failed ({e})");
                failures.push(format!("Java party: {e}"));
            }
        }
        drop(j); // killed if still running
        java_stderr(&run_dir.join("java.stderr"), &mut jf);
    }
    let b_start = now_ns().max(a_end);
    parent_log.phases.push(Phase {
        name: "A: faults without data loss".into(),
        data_loss: false,
        start: a_start,
        end: b_start,
    });

    // phase B: data-loss faults (kill -9 + restart, FLUSHALL), then 1 s without faults
    tokio::time::sleep_until(instant_at(b_start)).await;
    let b_end = b_start + ns(mode.phase_b);
    let mut steps = Vec::new();
    for i in 0..(mode.phase_b.as_secs() + 2) {
        let fault = if (i + rng.random_range(0..2)) % 2 == 0 {
            Fault::Restart
        } else {
            Fault::FlushAll
        };
        steps.push(Step {
            after: Duration::from_millis(rng.random_range(1_500..=3_000)),
            fault,
        });
    }
    let nemesis = Nemesis::spawn(
        target.clone(),
        steps,
        instant_at(b_end - ns(Duration::from_secs(1))),
    );
    faults.extend(nemesis.join().await);
    tokio::time::sleep_until(instant_at(b_end)).await;
    let stop_at = now_ns() + ns(Duration::from_secs(1));
    workers.tell(&format!("STOP {stop_at}"));

    // the workers stop, settle, and report their stats
    let stats_lines = await_lines(
        &mut rx,
        mode.processes,
        "FAULTS-STATS",
        Duration::from_secs(120),
        &run_dir,
    )
    .await;
    let workers_done = now_ns();
    parent_log.phases.push(Phase {
        name: "B: data-loss faults".into(),
        data_loss: true,
        start: b_start,
        end: workers_done,
    });
    let sampler_report: SamplerReport = sampler.stop().await;
    let mut res = Resources::default();
    let stats: Vec<serde_json::Value> = match stats_lines {
        Ok(lines) => lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad stats line {l:?}: {e}")))
            .collect(),
        Err(e) => {
            failures.push(format!("worker stats: {e}"));
            Vec::new()
        }
    };
    for s in &stats {
        res.lines.push(format!("worker {}: stats {s}", s["process"]));
        for k in ["renewing", "channels", "waiters"] {
            if s[k].as_u64() != Some(0) {
                failures.push(format!(
                    "L4: worker {} still has {k} = {} after all its tasks finished and {} ms to settle (stats when the tasks finished: {})",
                    s["process"], s[k], s["settle_ms"], s["at_tasks_end"]
                ));
            }
        }
    }

    // While the workers are idle but still connected: no subscriptions left, and every lock
    // key disappears within its lease (nobody renews an orphan hold).
    let mut c = target.conn().await.expect("connect after the run");
    let idle_since = Instant::now();
    let mut subs = Vec::new();
    while idle_since.elapsed() < Duration::from_secs(5) {
        subs = numsub(&mut c, "NUMSUB", &names).await;
        subs.extend(numsub(&mut c, "SHARDNUMSUB", &names).await);
        if subs.iter().all(|(_, n)| *n == 0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let left: Vec<_> = subs.iter().filter(|(_, n)| *n > 0).collect();
    if left.is_empty() {
        res.lines
            .push("PUBSUB NUMSUB / SHARDNUMSUB of every lock channel: 0 while the workers were idle".into());
    } else {
        failures.push(format!(
            "L4: subscriptions left on lock channels 5 s after the workers went idle (still connected): {left:?}"
        ));
    }
    let mut ttl_at_idle = BTreeMap::new();
    for n in &names {
        let pttl: i64 = redis::cmd("PTTL").arg(n).query_async(&mut c).await.unwrap_or(-3);
        if pttl != -2 {
            ttl_at_idle.insert(n.clone(), pttl);
        }
        if pttl == -1 {
            failures.push(format!(
                "lock key without TTL after the run: {}",
                describe_key(&mut c, n).await
            ));
        } else if pttl > LEASE.as_millis() as i64 {
            failures.push(format!(
                "lock key with a TTL longer than any lease after the run: {}",
                describe_key(&mut c, n).await
            ));
        }
    }
    res.lines.push(format!(
        "lock keys left when the workers went idle (PTTL ms): {ttl_at_idle:?}"
    ));
    let key_deadline = idle_since + LEASE + Duration::from_secs(2);
    loop {
        let mut present = Vec::new();
        for n in &names {
            let e: i64 = redis::cmd("EXISTS").arg(n).query_async(&mut c).await.unwrap_or(0);
            if e == 1 {
                present.push(n.clone());
            }
        }
        if present.is_empty() {
            res.lines.push(format!(
                "every lock key gone {:.1} s after the workers went idle",
                idle_since.elapsed().as_secs_f64()
            ));
            break;
        }
        if Instant::now() >= key_deadline {
            let mut d = Vec::new();
            for k in &present {
                d.push(describe_key(&mut c, k).await);
            }
            failures.push(format!(
                "L2/F27: lock keys still present {:.1} s after the workers went idle (longer than any lease: an orphan hold is being renewed): {}",
                idle_since.elapsed().as_secs_f64(),
                d.join("; ")
            ));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // let the workers exit
    for s in workers.stdins.iter_mut() {
        s.take();
    }
    for (i, ch) in workers.children.iter_mut().enumerate() {
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            match ch.try_wait() {
                Ok(Some(st)) => break Some(st),
                Ok(None) if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(50)).await,
                _ => break None,
            }
        };
        match status {
            Some(st) if st.success() => {}
            Some(st) => failures.push(format!(
                "worker {i} exited with {st}; stderr tail:\n{}",
                tail(&run_dir.join(format!("worker-{i}.stderr")), 30)
            )),
            None => failures.push(format!(
                "worker {i} did not exit within 30 s after its stdin closed"
            )),
        }
    }

    // after the exit: no subscriptions, no lock keys, no latch keys beyond their TTL
    let subs: Vec<_> = numsub(&mut c, "NUMSUB", &names)
        .await
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect();
    if !subs.is_empty() {
        failures.push(format!(
            "L4: subscriptions on lock channels after the workers exited: {subs:?}"
        ));
    }
    // Latches: an unlock latch lives for the retry window (seconds) and is deleted after use;
    // a marker that cancels an ambiguous acquire (same key prefix) may live for minutes by
    // design. None may lack a TTL; the short-lived ones must be gone once their TTL ran out.
    let latch_since = Instant::now();
    let mut short: Vec<(String, i64)> = Vec::new();
    let mut long: Vec<(String, i64)> = Vec::new();
    let mut no_ttl = Vec::new();
    for l in scan(&mut c, "redisson_unlock_latch:*").await {
        let p: i64 = redis::cmd("PTTL").arg(&l).query_async(&mut c).await.unwrap_or(-2);
        match p {
            -2 => {}
            -1 => no_ttl.push(l),
            p if p > LATCH_SHORT_MS => long.push((l, p)),
            p => short.push((l, p)),
        }
    }
    if !no_ttl.is_empty() {
        failures.push(format!(
            "L4/F6: {} unlock latch keys without TTL after the workers exited, e.g. {:?}",
            no_ttl.len(),
            &no_ttl[..no_ttl.len().min(5)]
        ));
    }
    if let Some((l, p)) = long.iter().find(|(_, p)| *p > LATCH_LONG_MAX_MS) {
        failures.push(format!(
            "L4: latch `{l}` has a TTL of {p} ms after the workers exited (more than {LATCH_LONG_MAX_MS} ms)"
        ));
    }
    let max_short = short.iter().map(|(_, p)| *p).max().unwrap_or(0);
    let short_deadline = latch_since + Duration::from_millis(max_short as u64) + Duration::from_secs(2);
    loop {
        let mut left = Vec::new();
        for (l, _) in &short {
            let e: i64 = redis::cmd("EXISTS").arg(l).query_async(&mut c).await.unwrap_or(0);
            if e == 1 {
                left.push(l.clone());
            }
        }
        if left.is_empty() {
            res.lines.push(format!(
                "latch keys after the workers exited: {} short-lived (longest PTTL {max_short} ms), all gone after {:.1} s; {} long-lived acquire-cancellation markers (PTTL up to {} ms){}",
                short.len(),
                latch_since.elapsed().as_secs_f64(),
                long.len(),
                long.iter().map(|(_, p)| *p).max().unwrap_or(0),
                if long.is_empty() { String::new() } else { format!(", e.g. `{}`", long[0].0) }
            ));
            break;
        }
        if Instant::now() >= short_deadline {
            failures.push(format!(
                "L4: {} unlock latch keys still present {:.1} s after the workers exited, past their TTL (longest PTTL seen {max_short} ms), e.g. {:?}",
                left.len(),
                latch_since.elapsed().as_secs_f64(),
                &left[..left.len().min(5)]
            ));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // and no lock key came back
    for n in &names {
        let e: i64 = redis::cmd("EXISTS").arg(n).query_async(&mut c).await.unwrap_or(0);
        if e == 1 {
            failures.push(format!(
                "a lock key exists after the workers exited: {}",
                describe_key(&mut c, n).await
            ));
        }
    }
    drop(workers);

    // the histories
    parent_log.faults = faults;
    parent_log.samples = sampler_report.violations.clone();
    let parent_file = run_dir.join("parent.jsonl");
    {
        let w = HistoryWriter::create(&parent_file);
        for p in &parent_log.phases {
            w.record(&Record::Phase(p.clone()));
        }
        for f in &parent_log.faults {
            w.record(&Record::Fault(f.clone()));
        }
        for s in &parent_log.samples {
            w.record(&Record::Sample(s.clone()));
        }
        w.flush();
    }
    let mut files: Vec<PathBuf> = (0..mode.processes)
        .map(|i| run_dir.join(format!("worker-{i}.jsonl")))
        .filter(|p| p.exists())
        .collect();
    files.extend(java_file);
    files.push(parent_file);
    let h = History::load(&files);
    let summary = summarize(&h);
    let overlaps = check_overlaps(&h);
    let unlocks = check_unlocks(&h, &rules);
    let losses = check_losses(&h, &rules);

    let (bad_overlaps, ok_overlaps): (Vec<_>, Vec<_>) = overlaps
        .iter()
        .partition(|o| !o.data_loss_phase || o.explained_by.is_none());
    for o in &bad_overlaps {
        failures.push(format!(
            "{}: {}",
            if o.java_vs_rust(&h) {
                "S1: overlap of a Java (Redisson) section and a Rust section"
            } else if o.parties(&h) == (Party::Java, Party::Java) {
                "S1: overlap of two Java (Redisson) sections"
            } else if o.data_loss_phase {
                "S1: unexplained overlap in the data-loss phase"
            } else {
                "S1: overlap in a phase without data loss"
            },
            o.describe(&h)
        ));
    }
    for u in &unlocks {
        failures.push(format!("S4/F27: {}", u.describe(&h)));
    }
    for l in &losses {
        failures.push(format!("S3/F30: {}", l.describe(&h)));
    }
    for s in &sampler_report.violations {
        failures.push(format!(
            "sampler: `{}` {} at {} (PTTL {}, {} fields); faults then: {}",
            s.lock,
            s.problem,
            h.at(s.time),
            s.pttl,
            s.hlen,
            h.describe_faults(&h.faults_in(s.time, s.time, 0))
        ));
    }
    let hand = handoffs(&h);
    if jf.ran {
        let n = summary.by_party.get(Party::Java.label()).copied().unwrap_or(0);
        if n < JAVA_MIN_SECTIONS {
            failures.push(format!(
                "Java party: only {n} Java sections (expected at least {JAVA_MIN_SECTIONS}): Java/Rust exclusion was hardly exercised"
            ));
        }
        let (jr, rj) = (
            hand.between(Party::Java, Party::Rust),
            hand.between(Party::Rust, Party::Java),
        );
        if jr < JAVA_MIN_HANDOFFS || rj < JAVA_MIN_HANDOFFS {
            failures.push(format!(
                "Java party: a lock passed from Java to Rust {jr} times and from Rust to Java {rj} times (expected at least {JAVA_MIN_HANDOFFS} each)"
            ));
        }
    }
    if summary.sections < mode.min_sections {
        failures.push(format!(
            "the run is too small to mean much: {} sections, expected at least {}",
            summary.sections, mode.min_sections
        ));
    }
    for f in h.faults.iter().filter(|f| f.error.is_some()) {
        res.lines.push(format!(
            "injector error: {} {}: {}",
            f.kind,
            f.detail,
            f.error.as_deref().unwrap_or_default()
        ));
    }

    // the report
    let report = render_report(&ReportInput {
        mode: &mode,
        redis_version: &redis_version,
        h: &h,
        summary: &summary,
        overlaps_bad: &bad_overlaps,
        overlaps_ok: &ok_overlaps,
        unlocks: &unlocks,
        losses: &losses,
        sampler: &sampler_report,
        resources: &res,
        failures: &failures,
        run_dir: &run_dir,
        wall: wall.elapsed(),
        java: &jf,
        handoffs: &hand,
    });
    let report_path = if mode.full {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/FAULT-REPORT.md")
    } else {
        Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .unwrap()
            .join("fault-report.md")
    };
    std::fs::write(&report_path, &report).unwrap();
    println!(
        "fault run: {} sections, {} faults, {} failures in {:.1} s; Java party: {}; report {}, histories in {}",
        summary.sections,
        h.faults.len(),
        failures.len(),
        wall.elapsed().as_secs_f64(),
        java_line(&jf, &summary),
        report_path.display(),
        run_dir.display()
    );
    if failures.is_empty() {
        let _ = std::fs::remove_dir_all(&run_dir);
    }
    assert!(
        failures.is_empty(),
        "{} problems in the fault run (seed {}; report {}; histories {}):\n{}{}",
        failures.len(),
        mode.seed,
        report_path.display(),
        run_dir.display(),
        failures
            .iter()
            .take(15)
            .map(|f| format!("  - {f}\n"))
            .collect::<String>(),
        if failures.len() > 15 {
            format!("  ... and {} more (see the report)\n", failures.len() - 15)
        } else {
            String::new()
        }
    );
}

struct ReportInput<'a> {
    mode: &'a Mode,
    redis_version: &'a str,
    h: &'a History,
    summary: &'a common::history::Summary,
    overlaps_bad: &'a [&'a common::history::Overlap],
    overlaps_ok: &'a [&'a common::history::Overlap],
    unlocks: &'a [common::history::UnlockProblem],
    losses: &'a [common::history::LossProblem],
    sampler: &'a SamplerReport,
    resources: &'a Resources,
    failures: &'a [String],
    run_dir: &'a Path,
    wall: Duration,
    java: &'a JavaFigures,
    handoffs: &'a Handoffs,
}

/// `YYYY-MM-DD HH:MM UTC` from the system clock (civil-from-days, no date crate).
fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// One line on the Java party: `skipped (no JDK ...)`, or its figures.
fn java_line(j: &JavaFigures, s: &common::history::Summary) -> String {
    if j.skipped() {
        return j.status.clone();
    }
    let rounds: usize = j.workers.iter().map(|w| w.rounds).sum();
    format!(
        "Redisson {} ({} threads), {rounds} rounds, {} sections checked against {} Rust sections",
        j.version,
        j.workers.len(),
        s.by_party.get(Party::Java.label()).copied().unwrap_or(0),
        s.sections
    )
}

/// The report's section on the Java party.
fn java_report(o: &mut String, r: &ReportInput<'_>) {
    let j = r.java;
    let _ = writeln!(o, "## Java party (real Redisson)\n");
    if j.skipped() {
        let _ = writeln!(
            o,
            "Java party: {}. Java/Rust mutual exclusion was not checked in this run{}.\n",
            j.status,
            if j.status.starts_with("skipped") {
                " (`CI=true` makes a missing JDK a failure)"
            } else {
                "; this fails the run"
            }
        );
        return;
    }
    let _ = writeln!(
        o,
        "Redisson {} (harness jar `{}`, from {}), client id `{}`; {} worker threads loop `getLock(NAME).lock()` (watchdog {:?}, \
         the Rust workers' `--watchdog-ms`) on a random `fault:hot:*` lock, hold it 0–{JAVA_MAX_HOLD_MS} ms, `unlock()`, then \
         `getHoldCount()` (a count left over is a `partial` round: the thread held the lock more than once, because Redisson \
         re-sent an acquire whose reply was lost, or because this `lock()` re-entered a hold left by an earlier round whose \
         `lock()` threw after it had run or whose `unlock()` failed; the extra holds are unlocked). They run through the warm-up and phase A (faults without data loss) and stop before phase B. \
         Their sections (from `lock()` returning to the `unlock()` call, `System.nanoTime()`) are checked for overlap with every \
         other section; their exceptions and unlock results are listed here, not judged.\n",
        j.version,
        j.jar,
        j.source,
        j.client_id,
        j.workers.len(),
        WATCHDOG,
    );
    let _ = writeln!(o, "* Clock: {}.", j.clock_line());
    let _ = writeln!(
        o,
        "* Timing: JVM start to ready {:.2} s (started with the Rust workers); Java began contending {:.2} s into the \
         {:?} warm-up; `stopContend` to the last result {:.2} s; `exit` {:.2} s.",
        j.ready.as_secs_f64(),
        j.joined as f64 / 1e9,
        r.mode.warmup,
        j.stop.as_secs_f64(),
        j.exit.as_secs_f64()
    );
    let (jr, rj) = (
        r.handoffs.between(Party::Java, Party::Rust),
        r.handoffs.between(Party::Rust, Party::Java),
    );
    let gap = |from, to| {
        r.handoffs
            .min_gap_ns
            .get(&(from, to))
            .map(|g| format!("{:.3} ms", *g as f64 / 1e6))
            .unwrap_or_else(|| "-".into())
    };
    let _ = writeln!(
        o,
        "* Hand-overs of a lock: Java → Rust {jr} (shortest gap {}), Rust → Java {rj} (shortest gap {}).",
        gap(Party::Java, Party::Rust),
        gap(Party::Rust, Party::Java)
    );
    let java_bad = r.overlaps_bad.iter().filter(|x| x.java_vs_rust(r.h)).count();
    let _ = writeln!(
        o,
        "* Overlaps of a Java section with a Rust section: {java_bad}; with another Java section: {}.\n",
        r.overlaps_bad
            .iter()
            .filter(|x| x.parties(r.h) == (Party::Java, Party::Java))
            .count()
    );
    let _ = writeln!(
        o,
        "| worker | thread | rounds | sections | stopped by | ran for |\n|---|---:|---:|---:|---|---:|"
    );
    for w in &j.workers {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {:.1} s |",
            w.name, w.thread_id, w.rounds, w.sections, w.stopped, w.elapsed_s
        );
    }
    let _ = writeln!(o);
    let mut outcomes = String::new();
    let _ = writeln!(outcomes, "| round outcome | count |\n|---|---:|");
    for (k, v) in &j.outcomes {
        let _ = writeln!(outcomes, "| {k} | {v} |");
    }
    o.push_str(&outcomes);
    let _ = writeln!(o);
    if j.extra_holds > 0 {
        let _ = writeln!(
            o,
            "`partial` rounds found {} extra holds in Redis (released by the harness).\n",
            j.extra_holds
        );
    }
    if j.exceptions.is_empty() {
        let _ = writeln!(o, "Java exceptions: none.\n");
    } else {
        let _ = writeln!(
            o,
            "| Java exception (call: class) | count | first message |\n|---|---:|---|"
        );
        for (k, v) in &j.exceptions {
            let m = j.exception_examples.get(k).map(String::as_str).unwrap_or("");
            let _ = writeln!(o, "| {k} | {v} | {} |", m.replace('|', "\\|").replace('\n', " "));
        }
        let _ = writeln!(o);
    }
    let levels: Vec<String> = j.stderr_levels.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(
        o,
        "JVM stderr (Redisson's log at WARN and above): {}{}\n",
        if levels.is_empty() {
            "empty".to_owned()
        } else {
            format!("{} lines", levels.join(", "))
        },
        if j.stderr_examples.is_empty() {
            String::new()
        } else {
            format!(
                "; e.g. {}",
                j.stderr_examples
                    .iter()
                    .map(|e| format!("`{}`", e.replace('`', "'")))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
    );
}

fn render_report(r: &ReportInput<'_>) -> String {
    const LIST: usize = 25;
    let mut o = String::new();
    let m = r.mode;
    let _ = writeln!(
        o,
        "# Fault-injection run ({})\n\nGenerated by `tests/faults.rs` ({}) on {}; do not edit by hand. {}\n",
        if m.full { "full" } else { "quick" },
        if m.full {
            "`scripts/faults`, i.e. `FAULTS_FULL=1 cargo test --release --test faults -- --nocapture`"
        } else {
            "`cargo test --test faults`"
        },
        utc_now(),
        format_args!("Repeat the schedule with `FAULTS_SEED={}`.", m.seed)
    );
    let _ = writeln!(
        o,
        "redis-server {} on loopback, {} CPUs; {} worker processes × ({} hot + {} long + 1 renew + 1 victim) tasks; \
         watchdog {:?}, command timeout {:?}, poll interval {:?}, `lock_with_lease({:?})`; phases: warm-up {:?}, \
         A (no data loss) {:?}, B (data loss) {:?}; wall time {:.1} s.\n",
        r.redis_version,
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        m.processes,
        m.hot_tasks,
        m.long_tasks,
        WATCHDOG,
        COMMAND_TIMEOUT,
        POLL_INTERVAL,
        LEASE,
        m.warmup,
        m.phase_a,
        m.phase_b,
        r.wall.as_secs_f64()
    );
    let _ = writeln!(
        o,
        "Locks: `fault:hot:0..{}` (0–3 ms holds; `lock()` 40 %, `try_lock_for(20–200 ms)` 35 %, `lock_with_lease` 25 %), \
         `fault:long:0..{}` (watchdog holds 1.2–3.5 s), `fault:renew:<process>` (one per process, held for the whole run and \
         taken again after a loss: in every renewal batch), `{VICTIM}` (held 4–6 s; the nemesis waits for a fresh hold and writes a string or list over it for {:?}).\n",
        HOT_LOCKS - 1,
        LONG_LOCKS - 1,
        POISON_TTL
    );
    let _ = writeln!(o, "**Java party: {}.**\n", java_line(r.java, r.summary));
    let _ = writeln!(o, "## Verdict\n");
    if r.failures.is_empty() {
        let _ = writeln!(o, "**PASS**: no overlaps outside explained data loss, every unlock after one acquire `Released` (or explained), no unexplained losses, no leaks.\n");
    } else {
        let _ = writeln!(o, "**FAIL**: {} problems.\n", r.failures.len());
        for f in r.failures.iter().take(60) {
            let _ = writeln!(o, "* {}", f.replace('\n', "\n  "));
        }
        if r.failures.len() > 60 {
            let _ = writeln!(o, "* ... and {} more", r.failures.len() - 60);
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(o, "## Checks\n");
    let _ = writeln!(o, "| check | result |\n|---|---|");
    let _ = writeln!(
        o,
        "| (a) overlapping sections outside explained data loss | {} |",
        r.overlaps_bad.len()
    );
    let _ = writeln!(
        o,
        "| (a) of which a Java (Redisson) section and a Rust section{} | {} |",
        if r.java.ran {
            ""
        } else {
            " (no Java party in this run)"
        },
        r.overlaps_bad.iter().filter(|x| x.java_vs_rust(r.h)).count()
    );
    let _ = writeln!(
        o,
        "| (c) overlaps explained by data loss (phase B, a hold lost) | {} |",
        r.overlaps_ok.len()
    );
    let partial = r
        .unlocks
        .iter()
        .filter(|u| r.h.sections[u.section].unlock == UnlockResult::Partial)
        .count();
    let _ = writeln!(o, "| (b) unlock `Partial` after one acquire | {partial} |");
    let _ = writeln!(
        o,
        "| (b) other unexplained unlock results | {} |",
        r.unlocks.len() - partial
    );
    let _ = writeln!(
        o,
        "| (e) losses without a fault that erased the lock | {} |",
        r.losses.len()
    );
    let no_ttl = r.sampler.violations.iter().filter(|s| s.pttl == -1).count();
    let _ = writeln!(
        o,
        "| sampler: lock key without TTL / hash with 2+ owners ({} rounds, {} failed during faults) | {} / {} |",
        r.sampler.rounds,
        r.sampler.failed_rounds,
        no_ttl,
        r.sampler.violations.len() - no_ttl
    );
    let _ = writeln!(o);
    java_report(&mut o, r);
    let _ = writeln!(o, "## Counts\n");
    o.push_str(&summary_markdown(r.h, r.summary));
    let _ = writeln!(o, "### Faults, in order\n");
    let _ = writeln!(o, "| # | phase | fault |\n|---:|---|---|");
    for (i, f) in r.h.faults.iter().enumerate() {
        let phase = r.h.phase_at(f.start).map(|p| p.name.as_str()).unwrap_or("-");
        let _ = writeln!(
            o,
            "| {} | {phase} | {} |",
            i + 1,
            r.h.describe_fault(i).replace('|', "\\|")
        );
    }
    let _ = writeln!(o);
    let section = |o: &mut String, title: &str, items: Vec<String>| {
        let _ = writeln!(o, "## {title} ({})\n", items.len());
        if items.is_empty() {
            let _ = writeln!(o, "none\n");
            return;
        }
        for it in items.iter().take(LIST) {
            let _ = writeln!(o, "* {}", it.replace('\n', "\n  "));
        }
        if items.len() > LIST {
            let _ = writeln!(o, "* ... and {} more", items.len() - LIST);
        }
        let _ = writeln!(o);
    };
    section(
        &mut o,
        "Overlaps that fail the run",
        r.overlaps_bad.iter().map(|x| x.describe(r.h)).collect(),
    );
    section(
        &mut o,
        "Overlaps explained by data loss",
        r.overlaps_ok.iter().map(|x| x.describe(r.h)).collect(),
    );
    section(
        &mut o,
        "Unlock problems",
        r.unlocks.iter().map(|x| x.describe(r.h)).collect(),
    );
    section(
        &mut o,
        "Unexplained losses",
        r.losses.iter().map(|x| x.describe(r.h)).collect(),
    );
    let _ = writeln!(o, "## Resources (L4)\n");
    for l in &r.resources.lines {
        let _ = writeln!(o, "* {l}");
    }
    let _ = writeln!(
        o,
        "\nHistories: `{}` (kept when the run fails).",
        repo_path(r.run_dir)
    );
    // the report is committed: no absolute path of this checkout, also not in the failures'
    // messages (worker stderr files, the harness build script)
    o.replace(concat!(env!("CARGO_MANIFEST_DIR"), "/"), "")
}

/// `p` as the report shows it: relative to the repository root, or `…/<file name>` when it is
/// outside the repository (a jar from `$REDISSON_HARNESS_JAR`, a `CARGO_TARGET_DIR` elsewhere).
fn repo_path(p: &Path) -> String {
    match p.strip_prefix(env!("CARGO_MANIFEST_DIR")) {
        Ok(rel) => rel.display().to_string(),
        Err(_) => format!(
            "…/{}",
            p.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
        ),
    }
}
