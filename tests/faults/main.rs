//! The contention run under faults: promises S1, S3, S4, L2 and L4 checked under the faults F2,
//! F3, F6, F7, F14, F17, F22, F23, F27 and F30 (the ids of `docs/guarantees.md`, "Scenario ids in
//! the tests"; its report also shows how far L3's bound held).
//!
//! `contention_under_faults` starts a redis-server, then several worker processes (this test
//! binary re-executed on the `#[ignore]`d test `worker_process`), each running many tasks that
//! take a few contended locks (`lock()`, `try_lock_for`, `lock_with_lease`), hold them briefly
//! while watching `guard.lost()`, and unlock, recording every critical section in a JSON-lines
//! history on the shared `CLOCK_MONOTONIC`. A few tasks per worker take permits of two
//! semaphores instead (`SEM`, a `Semaphore` of `SEM_PERMITS` permits: `acquire` /
//! `try_acquire_for`, the guard released or dropped; `XSEM`, a `PermitExpirableSemaphore` of
//! `XSEM_PERMITS`: `acquire_with_lease` / `try_acquire_for`, `release` / `try_release` of the
//! id), recording each permit holding as a section, and set a semaphore up again
//! (`try_set_permits(N)`) when data loss erased it. Meanwhile a nemesis injects faults: first only
//! faults that lose no data (SIGSTOP of redis, CLIENT KILL normal/pubsub, CLIENT PAUSE WRITE/ALL,
//! a busy script, SCRIPT FLUSH, OOM, a key of another type written over a held lock), then
//! data-loss faults (kill -9 + restart without persistence, FLUSHALL). A step of the machine's
//! wall clock, which nobody injects but by which Redis expires keys, is watched for and recorded
//! among the faults (`clock-step`; one forward by more than the command timeout erases every
//! lock, as a restart does). Afterwards the checkers
//! of `common::history` judge the histories (locks: no overlap; semaphores: never more than N
//! permits held at once, `check_capacity`), and resource leaks are checked in Redis and in
//! every worker's `client.stats()`.
//!
//! The semaphores' counts: at the end of phase A, and again after the last data-loss fault, the
//! parent pauses the semaphore tasks (`SEMPAUSE`: each worker parks them and waits until its
//! client's background work has drained, so every permit a dropped guard or an abandoned
//! acquisition owes is back) and reads the counts, which must then be exactly N (see
//! `semaphore_quiesce` for which count data loss makes undecidable); it leaves each at exactly
//! N and resumes them (`SEMRESUME`). After the workers' `client.shutdown()` the counts must be N
//! again.
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
//! (full). `FAULTS_SEED=n` repeats a schedule; `FAULTS_EXPECT_LOSS_SIGNAL=<path>` (a
//! `LossSignal` variant, e.g. `TrackingWithoutEcho`) fails the run when a worker's client took
//! another loss-signal path.

#[path = "../common/mod.rs"]
mod common;
mod java_party;
mod params;
mod processes;
mod report;
mod resources;
mod soak;
mod worker;

use java_party::*;
use params::*;
use processes::*;
use report::*;
use resources::*;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::faults::{spaced, ClockWatch, Fault, Nemesis, NetFault, Sampler, SamplerReport, Step, Target};
use common::history::{
    check_capacity, check_losses, check_overlaps, check_reinits, check_unlocks, handoffs, instant_at, now_ns,
    semaphore_figures, semaphore_markdown, summarize, summary_markdown, Attempt, AttemptResult, Excess,
    Handoffs, History, HistoryWriter, Loss, Party, Phase, Quiesce, Record, ReinitProblem, Rules, Section,
    Sem, SemFigures, SemKind, UnlockResult,
};
use common::java::{self, ci, Jvm};
use common::proxy::Toxiproxy;
use common::{init_tracing, RedisServer};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use redisson_lock::{Client, Config, Error, LeaseState, Unlocked};

/// What the phases of one run share.
struct Run {
    /// When the run began, for its wall time.
    wall: Instant,
    /// The network run's toxiproxy (the target's proxy lives in it).
    toxiproxy: Option<Toxiproxy>,
    /// The soak's memory watch during phase A, and what it read.
    memory: Option<soak::MemoryWatch>,
    memory_samples: Vec<soak::MemorySample>,
    mode: Mode,
    /// Every lock name any worker takes.
    names: Vec<String>,
    /// The histories and the logs of the workers and of the Java party.
    run_dir: PathBuf,
    target: Target,
    redis_version: String,
    workers: Workers,
    /// The workers' stdout lines and ends.
    worker_events: tokio::sync::mpsc::UnboundedReceiver<WorkerEvent>,
    /// The Java party from its spawn until it leaves at the end of phase A; `None` without one.
    java: Option<Jvm>,
    /// When the JVM was spawned, for its start-up time.
    java_spawned: Instant,
    /// Thread name and command sequence number of each Java `contend` loop.
    java_seqs: Vec<(String, u64)>,
    /// The Java party's sections as a history file, once it has left.
    java_file: Option<PathBuf>,
    java_figures: JavaFigures,
    /// The parent's own history: the phases and the faults injected.
    parent_log: History,
    /// Draws the fault schedule from the run's seed.
    rng: StdRng,
    /// Watches every lock key from the warm-up until the workers stop.
    sampler: Option<Sampler>,
    /// Steps of the wall clock (by which Redis expires keys), recorded as observed faults.
    clock: Option<ClockWatch>,
    sampler_report: SamplerReport,
    /// `CLOCK_MONOTONIC` ns: the `GO` to the workers (the warm-up's start), the start and planned
    /// end of phase A, and the start of phase B.
    t0: u64,
    a_start: u64,
    a_end: u64,
    b_start: u64,
    res: Resources,
    /// The semaphores' counts at the quiescent checks and at the end.
    sem_checks: Vec<SemCheck>,
    failures: Vec<String>,
}

/// What the checkers of `common::history` made of the histories.
struct Verdicts {
    h: History,
    summary: common::history::Summary,
    /// Overlaps outside explained data loss: failures.
    bad_overlaps: Vec<common::history::Overlap>,
    /// Overlaps explained by data loss in phase B.
    ok_overlaps: Vec<common::history::Overlap>,
    unlocks: Vec<common::history::UnlockProblem>,
    losses: Vec<common::history::LossProblem>,
    handoffs: Handoffs,
    /// More permits of a semaphore held at once than it has, outside explained data loss:
    /// failures.
    excess_bad: Vec<Excess>,
    /// Excesses explained by data loss in phase B.
    excess_ok: Vec<Excess>,
    reinits: Vec<ReinitProblem>,
    sem_figures: BTreeMap<String, SemFigures>,
}

/// The run of the module doc, phase by phase; each phase adds its problems to `Run::failures`,
/// which must be empty at the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contention_under_faults() {
    contention(false).await;
}

/// The same run with every client, Rust and Java, behind a toxiproxy, and network faults in
/// phase A: replies delayed 20 ± 20 ms, a stall longer than the command timeout then a close,
/// resets mid-pipeline, replies cut after a few bytes, requests and replies sliced into pieces, a
/// bandwidth limit, the proxy down and up again (`NetFault::round`). Phase B's data loss happens
/// behind the proxy. The same checkers judge it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contention_under_network_faults() {
    contention(true).await;
}

/// One run at a time: both runs load the two cores with worker processes and a JVM.
static ONE_RUN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn contention(net: bool) {
    if std::env::var_os(ROLE_VAR).is_some() {
        return;
    }
    init_tracing();
    let _one = ONE_RUN.lock().await;
    let Some(mut run) = start_run(net).await else {
        return;
    };
    warm_up(&mut run).await;
    faults_without_data_loss(&mut run).await;
    data_loss_faults(&mut run).await;
    let stats = stop_workers(&mut run).await;
    worker_stats_checks(&mut run, stats);
    let mut admin = idle_resource_checks(&mut run).await;
    semaphore_end_checks(&mut run, &mut admin).await;
    let_workers_exit(&mut run).await;
    after_exit_checks(&mut run, &mut admin).await;
    run.workers.kill_remaining();
    let verdicts = judge_histories(&mut run);
    let report_path = write_report(&run, &verdicts);
    conclude(run, &report_path);
}

/// Settles the Java party first (it may build the harness jar; with `CI=true` a missing one
/// panics), starts redis-server, the worker processes and the JVM, and waits up to 60 s for every
/// worker's `FAULTS-READY` (panics if one is missing). A JVM that fails to spawn is a failure.
/// The network run also starts a toxiproxy in front of the server, through which the workers and
/// the JVM connect; without a toxiproxy server it is skipped loudly (`None`), and with `CI=true`
/// that is a failure.
async fn start_run(net: bool) -> Option<Run> {
    let wall = Instant::now();
    let mode = Mode::from_env(net);
    let toxiproxy = if net {
        match Toxiproxy::start().await {
            Ok(t) => Some(t),
            Err(e) if ci() => panic!("CI=true: the network fault run needs toxiproxy: {e}"),
            Err(e) => {
                eprintln!("SKIPPED: the network fault run needs toxiproxy: {e}");
                return None;
            }
        }
    } else {
        None
    };
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
    let mut target = Target::new(RedisServer::start());
    if let Some(t) = &toxiproxy {
        target.proxy = Some(
            t.proxy("redis", target.port)
                .await
                .expect("a proxy in front of redis-server"),
        );
    }
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

    let (tx, mut worker_events) = tokio::sync::mpsc::unbounded_channel();
    let workers = spawn_workers(&mode, &target.client_url(), &run_dir, tx);
    // the JVM starts meanwhile
    let mut jf = JavaFigures::default();
    let java_spawned = Instant::now();
    let java: Option<Jvm> = match &java_plan {
        JavaPlan::Run(h) => {
            jf.jar = repo_path(&h.jar);
            jf.source = h.source.clone();
            match spawn_java(h, target.client_port(), &run_dir) {
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
        &mut worker_events,
        mode.processes,
        "FAULTS-READY",
        Duration::from_secs(60),
        &run_dir,
    )
    .await
    {
        panic!("worker start-up: {e}");
    }
    Some(Run {
        wall,
        toxiproxy,
        memory: None,
        memory_samples: Vec::new(),
        rng: StdRng::seed_from_u64(mode.seed),
        mode,
        names,
        run_dir,
        target,
        redis_version,
        workers,
        worker_events,
        java,
        java_spawned,
        java_seqs: Vec::new(),
        java_file: None,
        java_figures: jf,
        parent_log: History::default(),
        sampler: None,
        clock: None,
        sampler_report: SamplerReport::default(),
        t0: 0,
        a_start: 0,
        a_end: 0,
        b_start: 0,
        res: Resources::default(),
        sem_checks: Vec::new(),
        failures,
    })
}

/// Fixes the phase boundaries, sends the workers `GO`, lets the Java party join
/// (`java_joins`), starts the sampler on every lock key, and waits out the warm-up without
/// faults, which it records as the first phase.
async fn warm_up(run: &mut Run) {
    // a step forward by more than the trust margin (the command timeout) can end a hold's TTL
    // while its holder still trusts it
    run.clock = Some(ClockWatch::spawn(COMMAND_TIMEOUT));
    run.t0 = now_ns();
    run.a_start = run.t0 + ns(run.mode.warmup);
    run.a_end = run.a_start + ns(run.mode.phase_a);
    set_up_semaphores(run).await;
    run.workers.tell("GO");
    java_joins(run).await;
    if run.mode.soak.is_some() {
        run.memory = Some(soak::MemoryWatch::spawn(
            run.target.url.clone(),
            run.workers.children.iter().map(Child::id).collect(),
            run.java.as_ref().map(Jvm::pid),
            Duration::from_secs(10),
        ));
    }
    run.sampler = Some(Sampler::spawn(
        run.target.url.clone(),
        run.names.clone(),
        Duration::from_millis(50),
    ));
    tokio::time::sleep_until(instant_at(run.a_start)).await;
    run.parent_log.phases.push(Phase {
        name: "warm-up".into(),
        data_loss: false,
        start: run.t0,
        end: run.a_start,
    });
}

/// Phase A: rounds of faults that lose no data (`Fault::non_data_loss_round`: SIGSTOP, CLIENT
/// KILL, CLIENT PAUSE, a busy script, SCRIPT FLUSH, OOM, a key of another type over the victim
/// lock) until 3 s before the planned end, those that stall Redis or cut connections spaced by
/// `DISRUPTION_SPACING`; the last one may end after the planned end (a poison waits for a fresh
/// hold, then lasts `POISON_TTL`). Then the Java party leaves (`java_leaves`), and the phase is
/// recorded up to the start of phase B.
async fn faults_without_data_loss(run: &mut Run) {
    let mut round = Vec::new();
    for _ in 0..(run.mode.phase_a.as_secs() / 3 + 2) {
        if run.mode.soak.is_some() {
            // the server's faults and the network's, mixed
            let mut both = NetFault::round(&mut run.rng);
            both.extend(Fault::non_data_loss_round(&mut run.rng, VICTIM, POISON_TTL));
            both.shuffle(&mut run.rng);
            round.extend(both);
        } else if run.mode.net {
            round.extend(NetFault::round(&mut run.rng));
        } else {
            round.extend(Fault::non_data_loss_round(&mut run.rng, VICTIM, POISON_TTL));
        }
    }
    let steps = spaced(&mut run.rng, round, 200..=700, DISRUPTION_SPACING);
    let nemesis = Nemesis::spawn(
        run.target.clone(),
        steps,
        instant_at(run.a_end - ns(Duration::from_secs(3))),
    );
    run.parent_log.faults = nemesis.join().await;
    for f in &mut run.parent_log.faults {
        let stall = ["busy-script", "sigstop", "client-pause"]
            .iter()
            .any(|k| f.kind.starts_with(k));
        if stall && f.error.is_none() && f.end.saturating_sub(f.start) > ns(COVERED_STALL) {
            f.severs = true;
        }
    }
    if let Some(m) = run.memory.take() {
        run.memory_samples = m.stop().await;
        for g in soak::growth(&run.memory_samples).iter().filter(|g| g.unbounded) {
            run.failures.push(format!(
                "soak: {} grows without bound (median of the middle third {:?}, of the last third {:?} {})",
                g.series, g.middle, g.last, g.unit
            ));
        }
    }
    java_leaves(run).await;
    semaphore_quiesce(run, "end of phase A", false).await;
    run.b_start = now_ns().max(run.a_end);
    run.parent_log.phases.push(Phase {
        name: if run.mode.net {
            "A: network faults (no data loss)".into()
        } else {
            "A: faults without data loss".into()
        },
        data_loss: false,
        start: run.a_start,
        end: run.b_start,
    });
}

/// Phase B: data-loss faults, a `kill -9` and restart of redis-server without persistence or a
/// FLUSHALL every 1.5–3 s, then a quiescent check of the semaphores (which leaves them at exactly
/// N) and the rest of the phase's last second without faults; then tells the workers to stop
/// 1 s later.
async fn data_loss_faults(run: &mut Run) {
    tokio::time::sleep_until(instant_at(run.b_start)).await;
    let b_end = run.b_start + ns(run.mode.phase_b);
    let mut steps = Vec::new();
    for i in 0..(run.mode.phase_b.as_secs() + 2) {
        let fault = if (i + run.rng.random_range(0..2)) % 2 == 0 {
            Fault::Restart
        } else {
            Fault::FlushAll
        };
        steps.push(Step {
            after: Duration::from_millis(run.rng.random_range(1_500..=3_000)),
            fault,
        });
    }
    let nemesis = Nemesis::spawn(
        run.target.clone(),
        steps,
        instant_at(b_end - ns(Duration::from_secs(1))),
    );
    run.parent_log.faults.extend(nemesis.join().await);
    semaphore_quiesce(run, "after the data-loss faults", true).await;
    tokio::time::sleep_until(instant_at(b_end)).await;
    let stop_at = now_ns() + ns(Duration::from_secs(1));
    run.workers.tell(&format!("STOP {stop_at}"));
}

/// Waits up to 120 s for the workers to stop, settle and print their `FAULTS-STATS` (returned
/// for `worker_stats_checks`), records phase B as ending then, and stops the sampler.
async fn stop_workers(run: &mut Run) -> Result<Vec<String>, String> {
    let stats_lines = await_lines(
        &mut run.worker_events,
        run.mode.processes,
        "FAULTS-STATS",
        Duration::from_secs(120),
        &run.run_dir,
    )
    .await;
    let workers_done = now_ns();
    run.parent_log.phases.push(Phase {
        name: "B: data-loss faults".into(),
        data_loss: true,
        start: run.b_start,
        end: workers_done,
    });
    if let Some(sampler) = run.sampler.take() {
        run.sampler_report = sampler.stop().await;
    }
    if let Some(clock) = run.clock.take() {
        run.parent_log.faults.extend(clock.stop());
        run.parent_log.faults.sort_by_key(|f| f.start);
    }
    stats_lines
}

/// Closes the workers' stdin, which lets them exit, and checks that each exits successfully
/// within 30 s (else a failure, with the tail of its stderr).
async fn let_workers_exit(run: &mut Run) {
    for s in run.workers.stdins.iter_mut() {
        s.take();
    }
    for (i, ch) in run.workers.children.iter_mut().enumerate() {
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
            Some(st) => run.failures.push(format!(
                "worker {i} exited with {st}; stderr tail:\n{}",
                tail(&run.run_dir.join(format!("worker-{i}.stderr")), 30)
            )),
            None => run.failures.push(format!(
                "worker {i} did not exit within 30 s after its stdin closed"
            )),
        }
    }
}

/// Writes the parent's history (phases, faults, the sampler's findings) beside the workers' and
/// Java's, loads them all, and runs the checkers: every overlap outside explained data loss is a
/// failure (S1; Java/Rust and Java/Java overlaps named as such), as are unexplained unlock results
/// (S4/F27), unexplained losses (S3/F30), the sampler's findings (a lock key without TTL, a lock
/// hash with two owners), too few Java sections or Java/Rust hand-overs when Java ran, and a run
/// with fewer sections than `Mode::min_sections`. Injector errors go to the resources section.
fn judge_histories(run: &mut Run) -> Verdicts {
    let rules = Rules {
        aftermath_ns: 1_000_000_000,
        lookback_ns: WATCHDOG.as_nanos() as u64,
    };
    run.parent_log.samples = run.sampler_report.violations.clone();
    let parent_file = run.run_dir.join("parent.jsonl");
    {
        let w = HistoryWriter::create(&parent_file);
        for p in &run.parent_log.phases {
            w.record(&Record::Phase(p.clone()));
        }
        for f in &run.parent_log.faults {
            w.record(&Record::Fault(f.clone()));
        }
        for s in &run.parent_log.samples {
            w.record(&Record::Sample(s.clone()));
        }
        for r in &run.parent_log.reinits {
            w.record(&Record::Reinit(r.clone()));
        }
        for q in &run.parent_log.quiesces {
            w.record(&Record::Quiesce(q.clone()));
        }
        w.flush();
    }
    let mut files: Vec<PathBuf> = (0..run.mode.processes)
        .map(|i| run.run_dir.join(format!("worker-{i}.jsonl")))
        .filter(|p| p.exists())
        .collect();
    files.extend(run.java_file.clone());
    files.push(parent_file);
    let h = History::load(&files);
    let summary = summarize(&h);
    let overlaps = check_overlaps(&h);
    let unlocks = check_unlocks(&h, &rules);
    let losses = check_losses(&h, &rules);
    let excesses = check_capacity(&h);
    let reinits = check_reinits(&h);
    let sem_figures = semaphore_figures(&h, &excesses);
    let (excess_bad, excess_ok): (Vec<_>, Vec<_>) = excesses
        .into_iter()
        .partition(|e| !e.data_loss_phase || e.explained_by.is_none());

    let (bad_overlaps, ok_overlaps): (Vec<_>, Vec<_>) = overlaps
        .into_iter()
        .partition(|o| !o.data_loss_phase || o.explained_by.is_none());
    diagnose_sem_checks(run, &h);
    let failures = &mut run.failures;
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
    // (a NotHeld or a loss after a network outage, or a stall longer than `COVERED_STALL`, in the trust window is the promised outcome)
    for u in unlocks.iter().filter(|u| u.severed.is_none()) {
        failures.push(format!("S4/F27: {}", u.describe(&h)));
    }
    for l in losses.iter().filter(|l| l.severed.is_none()) {
        failures.push(format!("S3/F30: {}", l.describe(&h)));
    }
    // the first 50 (each description is long), then how many more
    for e in excess_bad.iter().take(50) {
        failures.push(format!(
            "semaphore capacity: {}: {}",
            if e.data_loss_phase {
                "more permits held than the semaphore has, unexplained in the data-loss phase"
            } else {
                "more permits held than the semaphore has, in a phase without data loss"
            },
            e.describe(&h)
        ));
    }
    if excess_bad.len() > 50 {
        failures.push(format!(
            "semaphore capacity: ... and {} more excesses (see the report)",
            excess_bad.len() - 50
        ));
    }
    for r in &reinits {
        failures.push(format!("semaphore set-up: {}", r.describe(&h)));
    }
    for (name, _, cap) in semaphores() {
        let f = sem_figures.get(name).cloned().unwrap_or_default();
        if f.sections < run.mode.min_sem_sections {
            failures.push(format!(
                "semaphore `{name}`: only {} permit holdings (expected at least {}): its capacity was hardly exercised",
                f.sections, run.mode.min_sem_sections
            ));
        }
        if f.max_held < cap {
            failures.push(format!(
                "semaphore `{name}`: at most {} of its {cap} permits were ever held at once: its capacity was never reached",
                f.max_held
            ));
        }
    }
    for s in &run.sampler_report.violations {
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
    if run.java_figures.ran {
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
    if summary.sections < run.mode.min_sections {
        failures.push(format!(
            "the run is too small to mean much: {} sections, expected at least {}",
            summary.sections, run.mode.min_sections
        ));
    }
    for f in h.faults.iter().filter(|f| f.error.is_some()) {
        run.res.lines.push(format!(
            "injector error: {} {}: {}",
            f.kind,
            f.detail,
            f.error.as_deref().unwrap_or_default()
        ));
    }
    Verdicts {
        h,
        summary,
        bad_overlaps,
        ok_overlaps,
        unlocks,
        losses,
        handoffs: hand,
        excess_bad,
        excess_ok,
        reinits,
        sem_figures,
    }
}

/// Renders the markdown report (`render_report`) to `tests/FAULT-REPORT.md` in full mode, else
/// to `<target dir>/fault-report.md`, prints a one-line summary of the run, and returns the
/// report's path.
fn write_report(run: &Run, v: &Verdicts) -> PathBuf {
    let bad_overlaps: Vec<_> = v.bad_overlaps.iter().collect();
    let ok_overlaps: Vec<_> = v.ok_overlaps.iter().collect();
    let report = render_report(&ReportInput {
        mode: &run.mode,
        redis_version: &run.redis_version,
        toxiproxy: run.toxiproxy.as_ref().map(|t| t.version.as_str()),
        h: &v.h,
        summary: &v.summary,
        overlaps_bad: &bad_overlaps,
        overlaps_ok: &ok_overlaps,
        unlocks: &v.unlocks,
        losses: &v.losses,
        sampler: &run.sampler_report,
        resources: &run.res,
        failures: &run.failures,
        run_dir: &run.run_dir,
        wall: run.wall.elapsed(),
        java: &run.java_figures,
        handoffs: &v.handoffs,
        excess_bad: &v.excess_bad,
        excess_ok: &v.excess_ok,
        reinits: &v.reinits,
        sem_figures: &v.sem_figures,
        sem_checks: &run.sem_checks,
    });
    let report_path = match (run.mode.full, run.mode.net) {
        _ if run.mode.soak.is_some() => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/SOAK-REPORT.md"),
        (true, false) => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/FAULT-REPORT.md"),
        (true, true) => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/NETWORK-REPORT.md"),
        (false, net) => Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .unwrap()
            .join(if net {
                "network-report.md"
            } else {
                "fault-report.md"
            }),
    };
    let mut report = report;
    if run.mode.soak.is_some() {
        let csv_path = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .unwrap()
            .join("soak-memory.csv");
        std::fs::write(&csv_path, soak::csv(&run.memory_samples, run.t0)).unwrap();
        report.push('\n');
        report.push_str(&soak::markdown(&run.memory_samples, run.t0, &csv_path));
    }
    std::fs::write(&report_path, &report).unwrap();
    println!(
        "fault run: {} sections, {} faults, {} failures in {:.1} s; Java party: {}; report {}, histories in {}",
        v.summary.sections,
        v.h.faults.len(),
        run.failures.len(),
        run.wall.elapsed().as_secs_f64(),
        java_line(&run.java_figures, &v.summary),
        report_path.display(),
        run.run_dir.display()
    );
    report_path
}

/// Asserts that the run had no failures, listing the first 15 with the seed and the paths of
/// the report and the histories; the histories are removed only when it passed.
fn conclude(run: Run, report_path: &Path) {
    let failures = &run.failures;
    if failures.is_empty() {
        let _ = std::fs::remove_dir_all(&run.run_dir);
    }
    assert!(
        failures.is_empty(),
        "{} problems in the fault run (seed {}; report {}; histories {}):\n{}{}",
        failures.len(),
        run.mode.seed,
        report_path.display(),
        run.run_dir.display(),
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
