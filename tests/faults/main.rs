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

#[path = "../common/mod.rs"]
mod common;
mod java_party;
mod report;
mod worker;

use java_party::*;
use report::*;

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
const WORKER_TEST: &str = "worker::worker_process";
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
