//! Section 8: the Redis side of a lock. Server CPU, commands and keyspace writes per lock +
//! unlock (RLock, read lock, fair lock at 1 / 16 / 256 tasks), per handoff and per renewal, and
//! Redis memory per held lock: ours, the floor, rslock and Redisson against one server, each run
//! on an otherwise idle, flushed server. The tables are rendered by `report_cost.rs`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use redis::aio::ConnectionManager;
use redisson_lock::{Client, Config, FairGuard, LossDetection, OwnerId, RFairLock, RReadLock, ReadGuard};
use serde_json::{json, Value};

use super::handoff::run_handoff;
use super::Bench;
use crate::jvm::{jcall, Jvm};
use crate::report_cost::{section_md, KINDS};
use crate::stats::{p50, paired};
use crate::sysinfo::{
    dbsize, flushall, key_memory, resetstat, server_snap, settle_keys, top_level_calls, used_memory,
    ServerSnap,
};
use crate::systems::{our_client, rslock_manager, Held, Sys};
use crate::RUN_START;

const CONCURRENCY: [usize; 3] = [1, 16, 256];
/// Waiters on the hot key of the handoff measurement.
const HANDOFF_WAITERS: usize = 10;
/// Locks held for the memory and renewal measurements, and their watchdog timeout.
const HELD: usize = 1000;
const WATCHDOG: Duration = Duration::from_secs(3);

/// The section's sizes: `full` or `quick` (and `BENCH_SC_MS`, `BENCH_SC_ROUNDS` while developing).
struct Sizes {
    rounds: usize,
    run: Duration,
    warm: Duration,
    handoff_short: usize,
    handoff_long: usize,
    renewal_periods: u32,
    /// Lock + unlock of each kind (16 threads) in the JVM before the runs (JIT warm-up).
    jit_warm: Duration,
}

impl Sizes {
    fn of(scale: &str) -> Sizes {
        let mut s = if scale == "quick" {
            Sizes {
                rounds: 1,
                run: Duration::from_millis(1000),
                warm: Duration::from_millis(200),
                handoff_short: 20,
                handoff_long: 120,
                renewal_periods: 2,
                jit_warm: Duration::from_millis(1500),
            }
        } else {
            Sizes {
                rounds: 2,
                run: Duration::from_millis(2000),
                warm: Duration::from_millis(300),
                handoff_short: 40,
                handoff_long: 300,
                renewal_periods: 4,
                jit_warm: Duration::from_millis(2500),
            }
        };
        let num = |k: &str| std::env::var(k).ok().and_then(|v| v.trim().parse::<u64>().ok());
        if let Some(ms) = num("BENCH_SC_MS") {
            s.run = Duration::from_millis(ms.max(100));
        }
        if let Some(r) = num("BENCH_SC_ROUNDS") {
            s.rounds = r.max(1) as usize;
        }
        s
    }
}

/// What the server did over one measured window.
#[derive(Clone, Default)]
struct Window {
    /// Operations in the window (lock + unlock pairs, handoffs, or renewals of one lock).
    ops: f64,
    secs: f64,
    cpu_s: f64,
    dirty: u64,
    cmds: BTreeMap<String, (u64, u64)>,
}

impl Window {
    fn between(a: &ServerSnap, b: &ServerSnap, ops: f64, secs: f64) -> Window {
        let (cpu_s, dirty, cmds) = a.delta(b);
        Window {
            ops,
            secs,
            cpu_s,
            dirty,
            cmds,
        }
    }

    /// `self` − `short`: a long run less a short one (the same start and end cost in both).
    fn minus(&self, short: &Window) -> Window {
        let cmds = self
            .cmds
            .iter()
            .filter_map(|(k, (c, u))| {
                let (c0, u0) = short.cmds.get(k).copied().unwrap_or((0, 0));
                let d = (c.saturating_sub(c0), u.saturating_sub(u0));
                (d.0 > 0).then(|| (k.clone(), d))
            })
            .collect();
        Window {
            ops: self.ops - short.ops,
            secs: self.secs - short.secs,
            cpu_s: self.cpu_s - short.cpu_s,
            dirty: self.dirty.saturating_sub(short.dirty),
            cmds,
        }
    }

    /// Per-op figures: server CPU µs, commands (scripts' included), commands the client sent,
    /// script time µs (EVAL/EVALSHA/FCALL, their inner commands included), all commands' time
    /// µs (inner commands counted in their script's time too), keyspace changes, ops/s.
    fn per_op(&self, rslock: bool) -> Value {
        let n = self.ops.max(1.0);
        let calls: BTreeMap<String, u64> = self.cmds.iter().map(|(k, v)| (k.clone(), v.0)).collect();
        let all: u64 = calls.values().sum();
        let usec_all: u64 = self.cmds.values().map(|v| v.1).sum();
        let script_usec: u64 = self
            .cmds
            .iter()
            .filter(|(k, _)| is_script(k))
            .map(|(_, v)| v.1)
            .sum();
        json!({
            "ops": self.ops,
            "ops_per_s": self.ops / self.secs,
            "server_us": self.cpu_s * 1e6 / n,
            "cmds": all as f64 / n,
            "client_cmds": top_level_calls(&calls, rslock) as f64 / n,
            "script_us": script_usec as f64 / n,
            "cmd_us_all": usec_all as f64 / n,
            "writes": self.dirty as f64 / n,
        })
    }
}

fn is_script(cmd: &str) -> bool {
    matches!(
        cmd,
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro"
    )
}

/// Per-round figures of one cell and system, pooled into medians and a "top commands" list.
#[derive(Default)]
struct Rounds {
    windows: Vec<Window>,
    rslock: bool,
}

impl Rounds {
    fn json(&self) -> Value {
        let per: Vec<Value> = self.windows.iter().map(|w| w.per_op(self.rslock)).collect();
        let col = |k: &str| -> Vec<f64> { per.iter().map(|v| v[k].as_f64().unwrap_or(f64::NAN)).collect() };
        let mut o = serde_json::Map::new();
        for k in [
            "ops_per_s",
            "server_us",
            "cmds",
            "client_cmds",
            "script_us",
            "cmd_us_all",
            "writes",
        ] {
            let v = col(k);
            o.insert(k.into(), json!(p50(&v)));
            o.insert(format!("{k}_per_round"), json!(v));
        }
        // every command over every round: [calls / op, µs / op]
        let n: f64 = self.windows.iter().map(|w| w.ops).sum::<f64>().max(1.0);
        let mut pooled: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
        for w in &self.windows {
            for (k, (c, u)) in &w.cmds {
                let e = pooled.entry(k).or_default();
                e.0 += c;
                e.1 += u;
            }
        }
        let cmds: serde_json::Map<String, Value> = pooled
            .into_iter()
            .map(|(k, (c, u))| (k.to_owned(), json!([c as f64 / n, u as f64 / n])))
            .collect();
        o.insert("commands".into(), Value::Object(cmds));
        Value::Object(o)
    }
}

/// A lock under test on one key: the floor, ours (RLock) and rslock, or our read / fair lock.
#[derive(Clone)]
enum Target {
    Sys(Sys),
    Read(RReadLock),
    Fair(RFairLock),
}

enum Hold {
    Sys(Held),
    Read(ReadGuard),
    Fair(FairGuard),
}

impl Target {
    fn ours(client: &Client, kind: &str, key: &str) -> Target {
        Target::ours_as(client, kind, key, None)
    }

    /// Ours, every acquisition by `owner` when given (else a fresh owner each).
    fn ours_as(client: &Client, kind: &str, key: &str, owner: Option<OwnerId>) -> Target {
        match (kind, owner) {
            ("lock", None) => Target::Sys(Sys::Ours(client.lock(key).unwrap())),
            ("lock", Some(o)) => Target::Sys(Sys::Ours(client.lock(key).unwrap().with_owner(o))),
            ("read", None) => Target::Read(client.read_write_lock(key).unwrap().read_lock()),
            ("read", Some(o)) => Target::Read(client.read_write_lock(key).unwrap().with_owner(o).read_lock()),
            (_, None) => Target::Fair(client.fair_lock(key).unwrap()),
            (_, Some(o)) => Target::Fair(client.fair_lock(key).unwrap().with_owner(o)),
        }
    }

    /// `lock()` in watchdog mode (the floor and rslock: one attempt, the key is free).
    async fn lock(&self) -> Hold {
        match self {
            Target::Sys(s @ Sys::Ours(_)) => Hold::Sys(s.wait_lock().await),
            Target::Sys(s) => Hold::Sys(s.try_once().await),
            Target::Read(l) => Hold::Read(l.lock().await.unwrap()),
            Target::Fair(l) => Hold::Fair(l.lock().await.unwrap()),
        }
    }

    async fn unlock(&self, h: Hold) {
        match (self, h) {
            (Target::Sys(s), Hold::Sys(h)) => s.release(h).await,
            (_, Hold::Read(g)) => {
                g.unlock().await.unwrap();
            }
            (_, Hold::Fair(g)) => {
                g.unlock().await.unwrap();
            }
            _ => unreachable!(),
        }
    }
}

/// Waits until work the clients left in flight (our janitor's batched latch `DEL`s, Redisson's
/// latch `DEL` after an unlock) has reached the server, before the closing counters are read.
const SETTLE_MS: u64 = 60;
const SETTLE: Duration = Duration::from_millis(SETTLE_MS);

/// C tasks, each lock + unlock on its own target for `warm`, then (counters read) for `dur`.
async fn run_cell(
    targets: Vec<Target>,
    warm: Duration,
    dur: Duration,
    admin: &mut ConnectionManager,
) -> Window {
    let c = targets.len();
    let stop = Arc::new(AtomicBool::new(false));
    let ops = Arc::new(AtomicU64::new(0));
    let ready = Arc::new(tokio::sync::Barrier::new(c + 1));
    let go = Arc::new(tokio::sync::Barrier::new(c + 1));
    let mut tasks = Vec::with_capacity(c);
    for t in targets {
        let (stop, ops, ready, go) = (stop.clone(), ops.clone(), ready.clone(), go.clone());
        tasks.push(tokio::spawn(async move {
            let until = Instant::now() + warm;
            loop {
                let h = t.lock().await;
                t.unlock(h).await;
                if Instant::now() >= until {
                    break;
                }
            }
            ready.wait().await;
            go.wait().await;
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let h = t.lock().await;
                t.unlock(h).await;
                n += 1;
            }
            ops.fetch_add(n, Ordering::Relaxed);
        }));
    }
    // a task that panicked (a script error) never arrives: fail instead of waiting forever
    if tokio::time::timeout(Duration::from_secs(120), ready.wait())
        .await
        .is_err()
    {
        panic!("server cost: a task did not finish its warm-up in 120 s");
    }
    tokio::time::sleep(SETTLE).await;
    let s0 = server_snap(admin).await;
    go.wait().await;
    let t = Instant::now();
    tokio::time::sleep(dur).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
    let secs = t.elapsed().as_secs_f64();
    tokio::time::sleep(SETTLE).await;
    let s1 = server_snap(admin).await;
    Window::between(&s0, &s1, ops.load(Ordering::Relaxed) as f64, secs)
}

/// An idle, empty server with fresh counters.
async fn clean(admin: &mut ConnectionManager) {
    flushall(admin).await;
    resetstat(admin).await;
}

/// A key's shape: the lock name → `NAME`, UUIDs → `UUID`, long hex runs → `HEX`, numbers → `N`.
fn key_pattern(key: &str) -> String {
    use std::sync::OnceLock;
    static RE: OnceLock<[(regex::Regex, &str); 4]> = OnceLock::new();
    let re = RE.get_or_init(|| {
        [
            (regex::Regex::new(r"bench:sc:mem:[a-z]+:\d+").unwrap(), "NAME"),
            (
                regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap(),
                "UUID",
            ),
            (regex::Regex::new(r"[0-9a-f]{16,}").unwrap(), "HEX"),
            (regex::Regex::new(r"\d+").unwrap(), "N"),
        ]
    });
    let mut s = key.to_owned();
    for (r, to) in re {
        s = r.replace_all(&s, *to).into_owned();
    }
    s
}

impl Bench {
    pub(crate) async fn server_cost(&mut self) {
        eprintln!(
            "bench: 8. server cost (at {:.0} s)",
            RUN_START.get().map_or(0.0, |t| t.elapsed().as_secs_f64())
        );
        let started = Instant::now();
        let sz = Sizes::of(self.scale.name);
        // Redisson for the lock + unlock and handoff runs: one JVM (see `fresh_jvm`), its JIT
        // warmed on every kind first
        // while developing: `BENCH_SC_PARTS` = some of `lock_unlock,handoff,held` (default all)
        let parts = std::env::var("BENCH_SC_PARTS").unwrap_or_default();
        let on = |p: &str| parts.is_empty() || parts.split(',').any(|x| x.trim() == p);
        let jvm = if self.jvm.is_some() && (on("lock_unlock") || on("handoff")) {
            fresh_jvm(&self.url, NO_RENEWAL_MS)
        } else {
            None
        };
        if let Some(jvm) = &jvm {
            for (kind, _) in KINDS {
                let warm = format!(
                    "benchThroughputKind {kind} bench:sc:jit:{kind} 16 {}",
                    sz.jit_warm.as_millis()
                );
                jcall(jvm, warm).await;
            }
            jcall(jvm, "benchHandoff bench:sc:jit:handoff 10 300".into()).await;
        }
        let mut j = serde_json::Map::new();
        if on("lock_unlock") {
            j.insert("lock_unlock".into(), self.cost_lock_unlock(&sz, &jvm).await);
        }
        if on("handoff") {
            j.insert("handoff".into(), self.cost_handoff(&sz, &jvm).await);
        }
        drop(jvm);
        if on("held") {
            j.insert("held".into(), self.cost_held(&sz).await);
        }
        j.insert(
            "settings".into(),
            json!({
                "rounds": sz.rounds, "settle_ms": SETTLE_MS, "run_ms": sz.run.as_millis() as u64, "warm_ms": sz.warm.as_millis() as u64, "jit_warm_ms": sz.jit_warm.as_millis() as u64,
                "concurrency": CONCURRENCY, "handoff_waiters": HANDOFF_WAITERS,
                "handoffs_short": sz.handoff_short, "handoffs_long": sz.handoff_long,
                "held_locks": HELD, "watchdog_s": WATCHDOG.as_secs_f64(), "renewal_periods": sz.renewal_periods,
                "redisson": self.jvm.is_some(), "section_s": started.elapsed().as_secs_f64(),
            }),
        );
        let v = Value::Object(j);
        self.md.push_str(&section_md(&v, &self.java_note));
        self.json.insert("server_cost".into(), v);
        eprintln!(
            "bench:   server cost took {:.0} s",
            started.elapsed().as_secs_f64()
        );
    }

    /// Lock + unlock on distinct keys: per kind × C × system, `rounds` windows.
    async fn cost_lock_unlock(&mut self, sz: &Sizes, jvm: &Option<SharedJvm>) -> Value {
        let mut admin = self.admin.clone();
        // (kind, C) -> system -> rounds
        let mut cells: BTreeMap<(usize, usize), BTreeMap<&'static str, Rounds>> = BTreeMap::new();
        for round in 0..sz.rounds {
            for (ki, (kind, _)) in KINDS.iter().enumerate() {
                for (ci, &c) in CONCURRENCY.iter().enumerate() {
                    let mut order: Vec<&'static str> = if *kind == "lock" {
                        vec!["floor", "ours", "rslock", "redisson"]
                    } else {
                        vec!["ours", "redisson"]
                    };
                    if jvm.is_none() {
                        order.retain(|s| *s != "redisson");
                    }
                    let len = order.len();
                    order.rotate_left((round + ki + ci) % len);
                    for sys in order {
                        // the same names for every system (each runs on a flushed server): a key's
                        // length is part of what it costs
                        let prefix = format!("bench:sc:{kind}:{c}");
                        clean(&mut admin).await;
                        let w = match sys {
                            "redisson" => {
                                let jvm = jvm.as_ref().unwrap();
                                let start =
                                    format!("benchLoopStart {kind} {prefix} {c} {}", sz.warm.as_millis());
                                jcall(jvm, start).await;
                                tokio::time::sleep(SETTLE).await;
                                let s0 = server_snap(&mut admin).await;
                                let r = jcall(jvm, format!("benchLoopRun {}", sz.run.as_millis())).await;
                                tokio::time::sleep(SETTLE).await;
                                let s1 = server_snap(&mut admin).await;
                                let ops = r["ops"].as_f64().unwrap_or(f64::NAN);
                                let secs = r["elapsed_ns"].as_f64().unwrap_or(f64::NAN) / 1e9;
                                Window::between(&s0, &s1, ops, secs)
                            }
                            "ours" => {
                                let client = our_client(&self.url, Config::default()).await;
                                let targets = (0..c)
                                    .map(|t| Target::ours(&client, kind, &format!("{prefix}:{t}")))
                                    .collect();
                                let w = run_cell(targets, sz.warm, sz.run, &mut admin).await;
                                let _ = client.shutdown().await;
                                w
                            }
                            "floor" => {
                                let targets = (0..c)
                                    .map(|t| {
                                        Target::Sys(Sys::Floor(
                                            self.raw.clone(),
                                            format!("{prefix}:{t}").into(),
                                        ))
                                    })
                                    .collect();
                                run_cell(targets, sz.warm, sz.run, &mut admin).await
                            }
                            _ => {
                                let rs = rslock_manager(&self.url);
                                let targets = (0..c)
                                    .map(|t| Target::Sys(Sys::Rs(rs.clone(), format!("{prefix}:{t}").into())))
                                    .collect();
                                run_cell(targets, sz.warm, sz.run, &mut admin).await
                            }
                        };
                        let pv = w.per_op(sys == "rslock");
                        eprintln!(
                            "bench:   {kind} C={c} round {round} {sys}: {:.0} ops/s, server {:.1} µs/op, {:.2} cmds/op ({:.2} sent), {:.2} writes/op",
                            pv["ops_per_s"].as_f64().unwrap_or(f64::NAN),
                            pv["server_us"].as_f64().unwrap_or(f64::NAN),
                            pv["cmds"].as_f64().unwrap_or(f64::NAN),
                            pv["client_cmds"].as_f64().unwrap_or(f64::NAN),
                            pv["writes"].as_f64().unwrap_or(f64::NAN),
                        );
                        let e = cells.entry((ki, c)).or_default().entry(sys).or_default();
                        e.rslock = sys == "rslock";
                        e.windows.push(w);
                    }
                }
            }
        }
        clean(&mut admin).await;
        let mut out = serde_json::Map::new();
        for ((ki, c), systems) in &cells {
            let mut o = serde_json::Map::new();
            for (sys, r) in systems {
                o.insert((*sys).into(), r.json());
            }
            ratios(&mut o, "server_us", "ratio_server_cpu_ours_vs_redisson");
            ratios(&mut o, "cmds", "ratio_cmds_ours_vs_redisson");
            out.insert(format!("{}/{c}", KINDS[*ki].0), Value::Object(o));
        }
        Value::Object(out)
    }

    /// One hot key, `HANDOFF_WAITERS` waiters: per handoff, a long run less a short one.
    async fn cost_handoff(&mut self, sz: &Sizes, jvm: &Option<SharedJvm>) -> Value {
        let mut admin = self.admin.clone();
        let (short, long) = (sz.handoff_short, sz.handoff_long);
        let mut systems: BTreeMap<&str, Rounds> = BTreeMap::new();
        for round in 0..sz.rounds {
            let mut order = vec!["ours", "redisson"];
            if jvm.is_none() {
                order.pop();
            }
            let len = order.len();
            order.rotate_left(round % len);
            for sys in order {
                clean(&mut admin).await;
                let key = "bench:sc:handoff".to_owned();
                let w =
                    if sys == "ours" {
                        let client = our_client(&self.url, Config::default()).await;
                        let target = Sys::Ours(client.lock(&key).unwrap());
                        let s0 = server_snap(&mut admin).await;
                        let t0 = Instant::now();
                        run_handoff(target.clone(), HANDOFF_WAITERS, short, admin.clone()).await;
                        let t1 = Instant::now();
                        tokio::time::sleep(SETTLE).await;
                        let s1 = server_snap(&mut admin).await;
                        let t2 = Instant::now();
                        run_handoff(target, HANDOFF_WAITERS, long, admin.clone()).await;
                        let t3 = Instant::now();
                        tokio::time::sleep(SETTLE).await;
                        let s2 = server_snap(&mut admin).await;
                        let _ = client.shutdown().await;
                        Window::between(&s1, &s2, long as f64, (t3 - t2).as_secs_f64())
                            .minus(&Window::between(&s0, &s1, short as f64, (t1 - t0).as_secs_f64()))
                    } else {
                        let jvm = jvm.as_ref().unwrap();
                        let s0 = server_snap(&mut admin).await;
                        let t0 = Instant::now();
                        jcall(jvm, format!("benchHandoff {key} {HANDOFF_WAITERS} {short}")).await;
                        let t1 = Instant::now();
                        tokio::time::sleep(SETTLE).await;
                        let s1 = server_snap(&mut admin).await;
                        let t2 = Instant::now();
                        jcall(jvm, format!("benchHandoff {key} {HANDOFF_WAITERS} {long}")).await;
                        let t3 = Instant::now();
                        tokio::time::sleep(SETTLE).await;
                        let s2 = server_snap(&mut admin).await;
                        Window::between(&s1, &s2, long as f64, (t3 - t2).as_secs_f64())
                            .minus(&Window::between(&s0, &s1, short as f64, (t1 - t0).as_secs_f64()))
                    };
                let pv = w.per_op(false);
                eprintln!(
                    "bench:   handoff, {HANDOFF_WAITERS} waiters, round {round} {sys}: server {:.1} µs/handoff, {:.2} cmds ({:.2} sent)",
                    pv["server_us"].as_f64().unwrap_or(f64::NAN),
                    pv["cmds"].as_f64().unwrap_or(f64::NAN),
                    pv["client_cmds"].as_f64().unwrap_or(f64::NAN),
                );
                systems.entry(sys).or_default().windows.push(w);
            }
        }
        clean(&mut admin).await;
        let mut o = serde_json::Map::new();
        for (sys, r) in &systems {
            o.insert((*sys).into(), r.json());
        }
        ratios(&mut o, "server_us", "ratio_server_cpu_ours_vs_redisson");
        ratios(&mut o, "cmds", "ratio_cmds_ours_vs_redisson");
        Value::Object(o)
    }

    /// `HELD` locks of each kind held in watchdog mode (timeout `WATCHDOG`), ours then Redisson
    /// (a second harness JVM with that watchdog), each on a flushed server: the keys and memory
    /// per held lock, then the server's cost per renewal over `renewal_periods` periods.
    async fn cost_held(&mut self, sz: &Sizes) -> Value {
        let mut admin = self.admin.clone();
        let jvm = if self.jvm.is_some() {
            fresh_jvm(&self.url, WATCHDOG.as_millis() as u64)
        } else {
            None
        };
        let period = WATCHDOG / 3;
        let mut out = serde_json::Map::new();
        for (ki, (kind, _)) in KINDS.iter().enumerate() {
            let mut o = serde_json::Map::new();
            let mut order = vec!["ours", "ours_renewal", "redisson"];
            if jvm.is_none() {
                order.pop();
            }
            let len = order.len();
            order.rotate_left(ki % len);
            let mut java_id_digits: Option<usize> = None;
            for sys in order {
                clean(&mut admin).await;
                let prefix = format!("bench:sc:mem:{kind}");
                let warm = format!("bench:sc:memwarm:{kind}");
                // the client (ours: a fresh one) first holds and releases a few locks, so that its
                // connections and scripts exist before memory is first read
                let client = if sys == "redisson" {
                    let jvm = jvm.as_ref().unwrap();
                    jcall(jvm, format!("benchHold {kind} {warm} 64")).await;
                    jcall(jvm, format!("benchRelease {warm}")).await;
                    None
                } else {
                    let mut config = Config::default().with_lock_watchdog_timeout(WATCHDOG);
                    if sys == "ours_renewal" {
                        config = config.with_loss_detection(LossDetection::Renewal);
                    }
                    let client = our_client(&self.url, config).await;
                    release_all(hold_all(&client, kind, &warm, 64).await).await;
                    Some(client)
                };
                // Redisson's renewal timer chain stops one period after its last lock is released;
                // a lock taken before then starts a second chain beside it (twice the renewals)
                tokio::time::sleep(period + Duration::from_millis(300)).await;
                settle_keys(&mut admin).await;
                let mem0 = used_memory(&mut admin).await;
                let t = Instant::now();
                // ours: the client and its holds, released at the end
                let mut ours: Option<(Client, Vec<(Target, Hold)>)> = None;
                if let Some(client) = client {
                    let holds = hold_all(&client, kind, &prefix, HELD).await;
                    ours = Some((client, holds));
                } else {
                    let jvm = jvm.as_ref().unwrap();
                    jcall(jvm, format!("benchHold {kind} {prefix} {HELD}")).await;
                    java_id_digits = java_thread_id_digits(&mut admin, &format!("{prefix}:0")).await;
                }
                let acquire_s = t.elapsed().as_secs_f64();
                settle_keys(&mut admin).await;
                let mem1 = used_memory(&mut admin).await;
                let keys = key_memory(&mut admin).await;
                // per pattern: (keys, bytes, an example)
                let mut patterns: BTreeMap<String, (u64, u64, &str)> = BTreeMap::new();
                for (k, b) in &keys {
                    let e = patterns.entry(key_pattern(k)).or_insert((0, 0, k));
                    e.0 += 1;
                    e.1 += b;
                }
                let bytes: u64 = keys.iter().map(|x| x.1).sum();
                // renewals: one period to pass the scan, then the window
                tokio::time::sleep(period).await;
                let s0 = server_snap(&mut admin).await;
                let t0 = Instant::now();
                tokio::time::sleep(period * sz.renewal_periods).await;
                let s1 = server_snap(&mut admin).await;
                let secs = t0.elapsed().as_secs_f64();
                // the renewals done, counted by their PEXPIREs: one per renewed lock (a read
                // hold's renewal also re-expires its timeout key: two), in both clients' scripts
                let mut w = Window::between(&s0, &s1, 0.0, secs);
                let pexpire = w.cmds.get("pexpire").map_or(0, |x| x.0) as f64;
                w.ops = pexpire / if *kind == "read" { 2.0 } else { 1.0 };
                let periods = secs / period.as_secs_f64();
                let t = Instant::now();
                if let Some((client, holds)) = ours.take() {
                    release_all(holds).await;
                    let _ = client.shutdown().await;
                } else {
                    jcall(jvm.as_ref().unwrap(), format!("benchRelease {prefix}")).await;
                }
                let release_s = t.elapsed().as_secs_f64();
                tokio::time::sleep(Duration::from_millis(500)).await;
                let left = dbsize(&mut admin).await;
                let n = HELD as f64;
                let pat: serde_json::Map<String, Value> = patterns
                    .iter()
                    .map(|(p, (c, b, e))| {
                        let v = json!({ "per_hold": *c as f64 / n, "bytes_each": *b as f64 / *c as f64, "example": e });
                        (p.clone(), v)
                    })
                    .collect();
                let mut renewal = Rounds::default();
                renewal.windows.push(w.clone());
                let v = json!({
                    "keys_per_hold": keys.len() as f64 / n,
                    "bytes_per_hold": bytes as f64 / n,
                    "used_memory_per_hold": (mem1.0 - mem0.0) / n,
                    "used_memory_with_client_buffers_per_hold": (mem1.1 - mem0.1) / n,
                    "memory_fields_per_hold": mem1.2.iter().map(|(k, v)| (k.clone(), json!((v - mem0.2[k]) / n))).collect::<serde_json::Map<_, _>>(),
                    "patterns": pat,
                    "keys_left_after_release": left,
                    "acquire_s": acquire_s,
                    "release_s": release_s,
                    "renewal": renewal.json(),
                    "renewals_per_lock_per_period": w.ops / (HELD as f64 * periods),
                });
                eprintln!(
                    "bench:   held {kind} {sys}: {:.2} keys / hold, {:.0} B / hold (used_memory {:.0} B), renewal {:.2} µs / lock ({:.3} cmds sent), {left} keys left",
                    v["keys_per_hold"].as_f64().unwrap_or(f64::NAN),
                    v["bytes_per_hold"].as_f64().unwrap_or(f64::NAN),
                    v["used_memory_per_hold"].as_f64().unwrap_or(f64::NAN),
                    v["renewal"]["server_us"].as_f64().unwrap_or(f64::NAN),
                    v["renewal"]["client_cmds"].as_f64().unwrap_or(f64::NAN),
                );
                o.insert(sys.into(), v);
            }
            // the same holds with an owner id as long as Redisson's thread id here (its
            // digits read from a Redisson hold's field; 2 without the JVM): how much of the keys'
            // bytes is the length of ours' fresh owner ids
            let java_digits = java_id_digits.take().unwrap_or(2);
            {
                clean(&mut admin).await;
                let client = our_client(
                    &self.url,
                    Config::default()
                        .with_lock_watchdog_timeout(WATCHDOG)
                        .with_loss_detection(LossDetection::Renewal),
                )
                .await;
                let owner = OwnerId::from(10u64.pow(java_digits as u32 - 1) + 7);
                let holds =
                    hold_all_as(&client, kind, &format!("bench:sc:mem:{kind}"), HELD, Some(owner)).await;
                settle_keys(&mut admin).await;
                let keys = key_memory(&mut admin).await;
                let bytes: u64 = keys.iter().map(|x| x.1).sum();
                release_all(holds).await;
                let _ = client.shutdown().await;
                o.insert(
                    "ours_java_length_id".into(),
                    json!({ "owner_id": owner.get(), "bytes_per_hold": bytes as f64 / HELD as f64 }),
                );
            }
            let ratio = |ours: &str, f: &dyn Fn(&Value) -> f64| -> Value {
                match (o.get(ours), o.get("redisson")) {
                    (Some(a), Some(b)) => json!(f(a) / f(b)),
                    _ => Value::Null,
                }
            };
            let bytes = |v: &Value| v["bytes_per_hold"].as_f64().unwrap_or(f64::NAN);
            let used = |v: &Value| v["used_memory_per_hold"].as_f64().unwrap_or(f64::NAN);
            let cpu = |v: &Value| v["renewal"]["server_us"].as_f64().unwrap_or(f64::NAN);
            let r = [
                ("ratio_bytes_ours_vs_redisson", ratio("ours", &bytes)),
                (
                    "ratio_bytes_ours_java_length_id_vs_redisson",
                    ratio("ours_java_length_id", &bytes),
                ),
                ("ratio_used_memory_ours_vs_redisson", ratio("ours", &used)),
                ("ratio_renewal_cpu_ours_vs_redisson", ratio("ours", &cpu)),
                (
                    "ratio_used_memory_ours_renewal_vs_redisson",
                    ratio("ours_renewal", &used),
                ),
                (
                    "ratio_renewal_cpu_ours_renewal_vs_redisson",
                    ratio("ours_renewal", &cpu),
                ),
            ];
            for (k, v) in r {
                o.insert(k.into(), v);
            }
            out.insert((*kind).into(), Value::Object(o));
        }
        drop(jvm);
        clean(&mut admin).await;
        Value::Object(out)
    }
}

type SharedJvm = Arc<std::sync::Mutex<Jvm>>;

/// The watchdog timeout of the JVM for the lock + unlock and handoff runs: 1 h, so that no
/// renewal timer fires during them (the locks are held for microseconds; the timeout is only
/// the TTL the scripts set). Redisson 4.x's renewal scheduler (`org.redisson.renewal.
/// RenewalTask`) starts another timer chain whenever its set of watched locks goes from empty
/// to non-empty while the last chain's timer is still pending, and every chain renews every
/// watched lock each watchdog/3 for as long as it finds one: with the default 30 s, a lock +
/// unlock loop at C = 1 leaves thousands of chains, which renewed the locks of later runs in the
/// same JVM (while developing: 690 commands per read lock + unlock instead of 19).
const NO_RENEWAL_MS: u64 = 3_600_000;

/// A harness JVM of its own: Redisson with `lockWatchdogTimeout` = `watchdog_ms`.
fn fresh_jvm(url: &str, watchdog_ms: u64) -> Option<SharedJvm> {
    let jar = std::env::var("BENCH_HARNESS_JAR").ok()?;
    match Jvm::start_with(&jar, url, watchdog_ms) {
        Ok(j) => Some(Arc::new(std::sync::Mutex::new(j))),
        Err(e) => {
            eprintln!("bench:   a harness JVM did not start: {e}");
            None
        }
    }
}

/// The digits of the thread id ending the first `<uuid>:<thread id>` field of the hash `key`
/// (a Redisson hold).
async fn java_thread_id_digits(admin: &mut ConnectionManager, key: &str) -> Option<usize> {
    let fields: Vec<String> = redis::cmd("HKEYS").arg(key).query_async(admin).await.ok()?;
    let id = fields
        .iter()
        .find_map(|f| f.rsplit(':').next().filter(|t| t.parse::<u64>().is_ok()))?;
    Some(id.len())
}

/// `n` locks `prefix:i` of `kind` taken with `lock()` (watchdog mode), 64 at a time.
async fn hold_all(client: &Client, kind: &str, prefix: &str, n: usize) -> Vec<(Target, Hold)> {
    hold_all_as(client, kind, prefix, n, None).await
}

/// [`hold_all`], every hold by `owner` when given.
async fn hold_all_as(
    client: &Client,
    kind: &str,
    prefix: &str,
    n: usize,
    owner: Option<OwnerId>,
) -> Vec<(Target, Hold)> {
    let targets: Vec<Target> = (0..n)
        .map(|i| Target::ours_as(client, kind, &format!("{prefix}:{i}"), owner))
        .collect();
    futures::stream::iter(targets)
        .map(|t| async move {
            let h = t.lock().await;
            (t, h)
        })
        .buffer_unordered(64)
        .collect()
        .await
}

async fn release_all(holds: Vec<(Target, Hold)>) {
    futures::stream::iter(holds)
        .for_each_concurrent(64, |(t, h)| async move { t.unlock(h).await })
        .await;
}

/// `o[key]`: ours over Redisson per round (paired by round: median, min, max).
fn ratios(o: &mut serde_json::Map<String, Value>, field: &str, key: &str) {
    let per = |s: &str| -> Vec<f64> {
        o.get(s)
            .and_then(|v| v[format!("{field}_per_round")].as_array())
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default()
    };
    let (a, b) = (per("ours"), per("redisson"));
    if !a.is_empty() && !b.is_empty() {
        let (m, lo, hi) = paired(&a, &b);
        o.insert(key.into(), json!([m, lo, hi]));
    }
}
