//! Section 3: handoff latency on one hot key as the waiters grow (and the plot's series).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::aio::ConnectionManager;
use redisson_lock::Config;
use serde_json::{json, Value};

use super::Bench;
use crate::jvm::{jcall, Jvm};
use crate::plot::PlotSeries;
use crate::stats::{fmt_ratio, ratio, ratio_pooled, us, verdict, Dist};
use crate::sysinfo::{cmdstats, flushall, stats_delta, top_level_calls};
use crate::systems::{our_client, rslock_manager, Sys};
use crate::RUN_START;

impl Bench {
    pub(crate) async fn handoff(&mut self) -> Vec<PlotSeries> {
        eprintln!(
            "bench: 3. handoff (at {:.0} s)",
            RUN_START.get().map_or(0.0, |t| t.elapsed().as_secs_f64())
        );
        let s = self.scale.clone();
        let mut series: Vec<PlotSeries> = Vec::new();
        let mut j = serde_json::Map::new();
        let mut md = String::new();
        let target_us = 2.0 * self.rtt_us + 100.0;
        let _ = writeln!(md, "## 3. Handoff latency on one hot key\n");
        let _ = writeln!(
            md,
            "W waiters + the holder loop on one key with the waiting acquire (ours: `lock()`; rslock: `acquire_no_guard`, \
             its retry loop with default delays; Redisson: `lock()` on W+1 JVM threads). A task that released waits for \
             the next grant before queueing again, so every grant is a handoff to a waiter. Latency = next holder's \
             acquire return − previous holder's unlock return. Commands per handoff are INFO commandstats deltas over \
             the middle of the run (Redisson: the difference between a short and a long run), all commands including the \
             ones scripts run; \"client cmds\" counts only what clients send (EVALSHA/EVAL/SET/DEL of the latch/SUBSCRIBE...). \
             Target: p50 ≤ 2 RTT + 0.1 ms = {} (RTT = floor EVALSHA p50 = {}).\n",
            us(target_us),
            us(self.rtt_us)
        );
        let _ = writeln!(md, "| waiters | system | handoffs | p50 | p99 | p50 / RTT | target | EVALSHA / handoff | client cmds / handoff | all cmds / handoff |");
        let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|");
        let mut ours_pts = Vec::new();
        let mut rs_pts = Vec::new();
        let mut java_pts = Vec::new();
        let mut cmp = String::new();
        let _ = writeln!(cmp, "\nOurs vs peers (p50 ratio, < 1 = we hand off faster):\n\n| waiters | ours / rslock | ours / Redisson |\n|---|---|---|");
        for &w in &s.waiters {
            // ours
            let client = our_client(&self.url, Config::default()).await;
            let lock = client.lock("bench:handoff:ours").unwrap();
            let mut ours_d = Dist::default();
            let mut ours_cmds = BTreeMap::new();
            let mut ours_n = 0;
            for r in 0..s.rounds.min(3) {
                let (v, cmds, n) =
                    run_handoff(Sys::Ours(lock.clone()), w, s.handoffs, self.admin.clone()).await;
                ours_d.push_round(v);
                if r == 0 {
                    ours_cmds = cmds;
                    ours_n = n;
                }
            }
            drop(lock);
            drop(client);
            // rslock
            let rs = rslock_manager(&self.url);
            let mut rs_d = Dist::default();
            let (v, rs_cmds, rs_n) = run_handoff(
                Sys::Rs(rs, "bench:handoff:rslock".into()),
                w,
                s.rs_handoffs,
                self.admin.clone(),
            )
            .await;
            rs_d.push_round(v);
            // Redisson
            let mut java_d = Dist::default();
            let mut java_cmds = BTreeMap::new();
            let mut java_n = 0;
            if let Some(jvm) = &self.jvm {
                let mut a = self.admin.clone();
                let short = (s.handoffs / 5).max(5);
                let c0 = cmdstats(&mut a).await;
                jcall(jvm, format!("benchHandoff bench:handoff:redisson {w} {short}")).await;
                let c1 = cmdstats(&mut a).await;
                for r in 0..s.rounds.min(3) {
                    let res = jcall(
                        jvm,
                        format!("benchHandoff bench:handoff:redisson {w} {}", s.handoffs),
                    )
                    .await;
                    if r == 0 {
                        let c2 = cmdstats(&mut a).await;
                        let d_short = stats_delta(&c0, &c1);
                        let d_long = stats_delta(&c1, &c2);
                        java_cmds = d_long
                            .iter()
                            .map(|(k, v)| (k.clone(), v.saturating_sub(*d_short.get(k).unwrap_or(&0))))
                            .filter(|(_, v)| *v > 0)
                            .collect();
                        java_n = (s.handoffs - short) as u64;
                    }
                    java_d.push_round(Jvm::ns_list(&res));
                }
            }
            let mut row = |sys: &str, d: &Dist, cmds: &BTreeMap<String, u64>, n: u64, target: bool| {
                if d.is_empty() {
                    return;
                }
                let per = |k: &str| cmds.get(k).copied().unwrap_or(0) as f64 / n.max(1) as f64;
                let all: u64 = cmds.values().sum();
                let _ = writeln!(
                    md,
                    "| {w} | {sys} | {} | {} | {} | {:.1} | {} | {:.2} | {:.2} | {:.2} |",
                    d.all().len(),
                    us(d.p50()),
                    us(d.p99()),
                    d.p50() / self.rtt_us,
                    if target {
                        format!("≤ {} — {}", us(target_us), verdict(d.p50() <= target_us))
                    } else {
                        String::new()
                    },
                    per("evalsha") + per("eval"),
                    top_level_calls(cmds, sys == "rslock") as f64 / n.max(1) as f64,
                    all as f64 / n.max(1) as f64,
                );
                j.insert(
                    format!("{sys}/{w}"),
                    json!({ "latency": d.json(), "commands": cmds, "handoffs_counted": n }),
                );
            };
            row("ours", &ours_d, &ours_cmds, ours_n, true);
            row("rslock", &rs_d, &rs_cmds, rs_n, false);
            row("Redisson", &java_d, &java_cmds, java_n, false);
            ours_pts.push((w, ours_d.p50(), ours_d.p99()));
            rs_pts.push((w, rs_d.p50(), rs_d.p99()));
            if !java_d.is_empty() {
                java_pts.push((w, java_d.p50(), java_d.p99()));
            }
            let _ = writeln!(
                cmp,
                "| {w} | {} | {} |",
                fmt_ratio(ratio_pooled(&ours_d, &rs_d)),
                if java_d.is_empty() {
                    "n/a".into()
                } else {
                    fmt_ratio(ratio(&ours_d, &java_d))
                }
            );
            let mut a = self.admin.clone();
            flushall(&mut a).await;
        }
        md.push_str(&cmp);
        let _ = writeln!(md, "\n![handoff latency vs waiters](handoff.svg)\n");
        series.push(("ours".into(), ours_pts));
        series.push(("rslock 0.10".into(), rs_pts));
        if !java_pts.is_empty() {
            series.push(("Redisson".into(), java_pts));
        }
        j.insert("target_p50_us".into(), json!(target_us));
        j.insert("rtt_us".into(), json!(self.rtt_us));
        self.json.insert("handoff".into(), Value::Object(j));
        self.md.push_str(&md);
        series
    }
}

/// How long each holder keeps the lock in the handoff measurement (the JVM side sleeps 2 ms too).
pub(crate) const HOLD: Duration = Duration::from_millis(2);

pub(crate) struct HandoffShared {
    epoch: Instant,
    gen: AtomicU64,
    acq: Vec<AtomicU64>,
    rel: Vec<AtomicU64>,
    started: AtomicUsize,
    tx: tokio::sync::watch::Sender<u64>,
}

/// W+1 tasks take turns on one key; returns the handoff latencies (µs), the command deltas
/// over the middle of the run and the number of handoffs they cover.
pub(crate) async fn run_handoff(
    sys: Sys,
    w: usize,
    h: usize,
    mut admin: ConnectionManager,
) -> (Vec<f64>, BTreeMap<String, u64>, u64) {
    let n = w + 1;
    let (tx, _) = tokio::sync::watch::channel(0u64);
    let sh = Arc::new(HandoffShared {
        epoch: Instant::now(),
        gen: AtomicU64::new(0),
        acq: (0..h + n + 2).map(|_| AtomicU64::new(0)).collect(),
        rel: (0..h + n + 2).map(|_| AtomicU64::new(0)).collect(),
        started: AtomicUsize::new(0),
        tx,
    });
    let h64 = h as u64;
    let mut tasks = Vec::with_capacity(n);
    for _ in 0..n {
        let sys = sys.clone();
        let sh = sh.clone();
        let mut rx = sh.tx.subscribe();
        tasks.push(tokio::spawn(async move {
            sh.started.fetch_add(1, Ordering::SeqCst);
            loop {
                let held = sys.wait_lock().await;
                let now = sh.epoch.elapsed().as_nanos() as u64;
                let g = sh.gen.fetch_add(1, Ordering::SeqCst) + 1;
                if let Some(x) = sh.acq.get(g as usize) {
                    x.store(now, Ordering::SeqCst);
                }
                sh.tx.send_replace(g);
                if g == 1 {
                    while sh.started.load(Ordering::SeqCst) < n {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    tokio::time::sleep(Duration::from_millis(200 + n as u64)).await;
                }
                // a short critical section, so the previous holder has re-queued (and sleeps on its
                // subscription) before the lock is handed on: every handoff is a real wake-up
                tokio::time::sleep(HOLD).await;
                let last = g > h64;
                sys.release(held).await;
                let now = sh.epoch.elapsed().as_nanos() as u64;
                if let Some(x) = sh.rel.get(g as usize) {
                    x.store(now, Ordering::SeqCst);
                }
                if last {
                    return;
                }
                let _ = rx.wait_for(|x| *x > g).await;
                if sh.gen.load(Ordering::SeqCst) > h64 {
                    return;
                }
            }
        }));
    }
    // commandstats over the middle of the run
    let (ga, gb) = ((h64 / 10).max(1) + 1, (h64 * 9 / 10).max(2));
    let mut rx = sh.tx.subscribe();
    let _ = rx.wait_for(|x| *x >= ga).await;
    let c0 = cmdstats(&mut admin).await;
    let g0 = sh.gen.load(Ordering::SeqCst);
    let _ = rx.wait_for(|x| *x >= gb).await;
    let c1 = cmdstats(&mut admin).await;
    let g1 = sh.gen.load(Ordering::SeqCst);
    for t in tasks {
        t.await.unwrap();
    }
    let lat: Vec<f64> = (1..=h)
        .map(|g| {
            (sh.acq[g + 1].load(Ordering::SeqCst) as f64 - sh.rel[g].load(Ordering::SeqCst) as f64) / 1e3
        })
        .collect();
    (lat, stats_delta(&c0, &c1), g1.saturating_sub(g0).max(1))
}
