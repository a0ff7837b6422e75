//! Section 1: uncontended latency of one acquire and of acquire + release against the floor.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

use redisson_lock::Config;
use serde_json::{json, Value};

use super::Bench;
use crate::jvm::{jcall, Jvm};
use crate::stats::{fmt_ratio, ratio, us, verdict, Dist};
use crate::sysinfo::flushall;
use crate::systems::{our_client, rslock_manager, Sys};
use crate::RUN_START;

impl Bench {
    pub(crate) async fn latency(&mut self) {
        eprintln!(
            "bench: 1. uncontended latency (at {:.0} s)",
            RUN_START.get().map_or(0.0, |t| t.elapsed().as_secs_f64())
        );
        let s = self.scale.clone();
        let ours = our_client(&self.url, Config::default()).await;
        let rs = rslock_manager(&self.url);
        let floor = Sys::Floor(self.raw.clone(), "bench:lat:floor".into());
        let mine = Sys::Ours(ours.lock("bench:lat:ours").unwrap());
        let theirs = Sys::Rs(rs.clone(), "bench:lat:rslock".into());
        // warm-up: connections, script cache, allocator
        for _ in 0..300 {
            for sys in [&floor, &mine, &theirs] {
                let h = sys.try_once().await;
                sys.release(h).await;
            }
        }
        // Each target comparison runs as a pair, ours and the floor alternating per iteration
        // (their order alternating too): both see the same moments of a shared machine, so the
        // per-repeat ratio is not the drift between two blocks of 1200 iterations.
        let names = [
            "ping",
            "pair_acq",
            "floor_spawn_acq",
            "pair_acq_rel",
            "ours_lock_rel",
            "rslock_acq",
            "rslock_acq_rel",
        ];
        let pairs = [
            ("pair_acq", ["floor_acq", "ours_acq"]),
            ("pair_acq_rel", ["floor_acq_rel", "ours_acq_rel"]),
        ];
        let mut d: BTreeMap<&str, Dist> = names
            .iter()
            .filter(|n| !n.starts_with("pair_"))
            .chain(pairs.iter().flat_map(|(_, ops)| ops.iter()))
            .map(|n| (*n, Dist::default()))
            .collect();
        let mut java: BTreeMap<&str, Dist> = BTreeMap::new();
        for round in 0..s.lat_rounds {
            for k in 0..names.len() {
                let name = names[(k + round) % names.len()];
                let ops: Vec<&str> = match pairs.iter().find(|(p, _)| *p == name) {
                    Some((_, ops)) => ops.to_vec(),
                    None => vec![name],
                };
                let mut v: Vec<Vec<f64>> = ops.iter().map(|_| Vec::with_capacity(s.lat_iters)).collect();
                for i in 0..s.lat_iters {
                    for j in 0..ops.len() {
                        let at = (i + j) % ops.len();
                        let x = self.one_op(ops[at], &floor, &mine, &theirs).await;
                        v[at].push(x);
                    }
                }
                for (op, v) in ops.iter().zip(v) {
                    d.get_mut(op).unwrap().push_round(v);
                }
            }
            if let Some(jvm) = &self.jvm {
                for (name, cmd) in [
                    ("redisson_acq", "benchAcquire"),
                    ("redisson_acq_rel", "benchTryLock"),
                    ("redisson_lock_rel", "benchLockUnlock"),
                ] {
                    let r = jcall(jvm, format!("{cmd} bench:lat:redisson {}", s.lat_iters)).await;
                    java.entry(name).or_default().push_round(Jvm::ns_list(&r));
                }
            }
        }
        drop(ours);
        self.rtt_us = d["floor_acq"].p50();

        let mut j = serde_json::Map::new();
        for (k, v) in d.iter().chain(java.iter()) {
            j.insert(k.to_string(), v.json());
        }
        let acq = ratio(&d["ours_acq"], &d["floor_acq"]);
        let acq_rel = ratio(&d["ours_acq_rel"], &d["floor_acq_rel"]);
        j.insert("ratio_acquire_vs_floor".into(), json!(acq.0));
        j.insert("ratio_acq_rel_vs_floor".into(), json!(acq_rel.0));
        self.json.insert("uncontended".into(), Value::Object(j));

        let mut md = String::new();
        let _ = writeln!(md, "## 1. Uncontended latency\n");
        let _ = writeln!(
            md,
            "{} repeats × {} iterations per variant, variants interleaved; one key per system, always free. \
             Floor = `EVALSHA` of our own `acquire.lua` (and `unlock.lua`, fresh latch) through redis-rs on a `ConnectionManager`, \
             like the client's. The two targets run as pairs: ours and the floor alternate per iteration (order alternating too), \
             so both see the same moments of the machine. Ratio = median over the repeats of p50 / floor p50 in the same repeat \
             (min–max of the per-repeat ratios); p50 and p99 pooled. \
             Ours = `try_lock()` (and `unlock()`), default config (`LossDetection::Tracking`; section 7 compares it with `Renewal`); rslock = `lock()` (`SET NX PX`) / `unlock()` (`EVAL`); \
             Redisson = `tryLock()` / `unlock()` / `lock()` in the JVM after 2000 warm-up iterations.\n",
            s.lat_rounds, s.lat_iters
        );
        let _ = writeln!(md, "| operation | system | p50 | p99 | ratio vs floor | target |");
        let _ = writeln!(md, "|---|---|---|---|---|---|");
        let row = |md: &mut String, op: &str, sys: &str, x: &Dist, base: &Dist, target: &str| {
            if x.is_empty() {
                return;
            }
            let _ = writeln!(
                md,
                "| {op} | {sys} | {} | {} | {} | {target} |",
                us(x.p50()),
                us(x.p99()),
                fmt_ratio(ratio(x, base))
            );
        };
        row(&mut md, "PING", "raw redis-rs", &d["ping"], &d["floor_acq"], "");
        row(
            &mut md,
            "acquire",
            "floor: 1 × EVALSHA",
            &d["floor_acq"],
            &d["floor_acq"],
            "",
        );
        row(
            &mut md,
            "acquire",
            "floor + one spawned task/oneshot hand-over (for scale)",
            &d["floor_spawn_acq"],
            &d["floor_acq"],
            "",
        );
        row(
            &mut md,
            "acquire",
            "**ours** `try_lock`",
            &d["ours_acq"],
            &d["floor_acq"],
            &format!("≤ 1.05× — {}", verdict(acq.0 <= 1.05)),
        );
        row(
            &mut md,
            "acquire",
            "rslock 0.10",
            &d["rslock_acq"],
            &d["floor_acq"],
            "",
        );
        if let Some(x) = java.get("redisson_acq") {
            row(&mut md, "acquire", "Redisson", x, &d["floor_acq"], "");
        }
        row(
            &mut md,
            "acquire + release",
            "floor: 2 × EVALSHA",
            &d["floor_acq_rel"],
            &d["floor_acq_rel"],
            "",
        );
        row(
            &mut md,
            "acquire + release",
            "**ours** `try_lock`+`unlock`",
            &d["ours_acq_rel"],
            &d["floor_acq_rel"],
            "",
        );
        row(
            &mut md,
            "acquire + release",
            "**ours** `lock`+`unlock`",
            &d["ours_lock_rel"],
            &d["floor_acq_rel"],
            "",
        );
        row(
            &mut md,
            "acquire + release",
            "rslock 0.10",
            &d["rslock_acq_rel"],
            &d["floor_acq_rel"],
            "",
        );
        if let Some(x) = java.get("redisson_acq_rel") {
            row(
                &mut md,
                "acquire + release",
                "Redisson `tryLock`+`unlock`",
                x,
                &d["floor_acq_rel"],
                "",
            );
        }
        if let Some(x) = java.get("redisson_lock_rel") {
            row(
                &mut md,
                "acquire + release",
                "Redisson `lock`+`unlock`",
                x,
                &d["floor_acq_rel"],
                "",
            );
        }
        let _ = writeln!(md, "\nOurs vs peers (p50 ratio, < 1 = we are faster):\n");
        let _ = writeln!(md, "| operation | ours / rslock | ours / Redisson |");
        let _ = writeln!(md, "|---|---|---|");
        let jr = |k: &str, x: &Dist| {
            java.get(k)
                .map(|b| fmt_ratio(ratio(x, b)))
                .unwrap_or_else(|| "n/a".into())
        };
        let _ = writeln!(
            md,
            "| acquire | {} | {} |",
            fmt_ratio(ratio(&d["ours_acq"], &d["rslock_acq"])),
            jr("redisson_acq", &d["ours_acq"])
        );
        let _ = writeln!(
            md,
            "| acquire + release | {} | {} |",
            fmt_ratio(ratio(&d["ours_acq_rel"], &d["rslock_acq_rel"])),
            jr("redisson_acq_rel", &d["ours_acq_rel"])
        );
        let _ = writeln!(
            md,
            "| lock + unlock | – | {} |\n",
            jr("redisson_lock_rel", &d["ours_lock_rel"])
        );
        self.md.push_str(&md);
        let mut a = self.admin.clone();
        flushall(&mut a).await;
    }
}

impl Bench {
    /// One timed operation of the latency section (µs), then the untimed clean-up.
    async fn one_op(&self, name: &str, floor: &Sys, mine: &Sys, theirs: &Sys) -> f64 {
        let x = match name {
            "ping" => {
                let t = Instant::now();
                self.raw.ping().await;
                t.elapsed()
            }
            "floor_acq" | "ours_acq" | "rslock_acq" => {
                let sys = match name {
                    "floor_acq" => floor,
                    "ours_acq" => mine,
                    _ => theirs,
                };
                let t = Instant::now();
                let h = sys.try_once().await;
                let e = t.elapsed();
                sys.cleanup(h).await;
                e
            }
            "floor_spawn_acq" => {
                // the floor plus one task hand-over (spawned task + oneshot), for scale
                let t = Instant::now();
                let (tx, rx) = tokio::sync::oneshot::channel();
                let raw = self.raw.clone();
                tokio::spawn(async move {
                    let _ = tx.send(raw.acquire("bench:lat:floor").await);
                });
                assert_eq!(rx.await.unwrap(), None);
                let e = t.elapsed();
                self.raw.del("bench:lat:floor").await;
                e
            }
            "ours_lock_rel" => {
                let Sys::Ours(l) = mine else { unreachable!() };
                let t = Instant::now();
                let g = l.lock().await.unwrap();
                g.unlock().await.unwrap();
                t.elapsed()
            }
            _ => {
                let sys = match name {
                    "floor_acq_rel" => floor,
                    "ours_acq_rel" => mine,
                    _ => theirs,
                };
                let t = Instant::now();
                let h = sys.try_once().await;
                sys.release(h).await;
                t.elapsed()
            }
        };
        match name {
            n if n.starts_with("floor") => floor.settle().await,
            n if n.starts_with("ours") => mine.settle().await,
            _ => {}
        }
        x.as_secs_f64() * 1e6
    }
}
