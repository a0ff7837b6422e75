//! Section 2: lock + unlock throughput on distinct keys, C tasks on one client.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::aio::ConnectionManager;
use redisson_lock::Config;
use serde_json::{json, Value};

use super::Bench;
use crate::jvm::jcall;
use crate::stats::{fmt_ratio, p50, paired, verdict, THROUGHPUT_TARGET};
use crate::sysinfo::{cmdstats, flushall, proc_cpu, server_cpu, stats_delta};
use crate::systems::{our_client, rslock_manager, Sys};
use crate::RUN_START;

impl Bench {
    pub(crate) async fn throughput(&mut self) {
        eprintln!(
            "bench: 2. throughput (at {:.0} s)",
            RUN_START.get().map_or(0.0, |t| t.elapsed().as_secs_f64())
        );
        let s = self.scale.clone();
        // BENCH_TP_LOSS=renewal: ours without the loss watch (an experiment, not the report's setup)
        let config = match std::env::var("BENCH_TP_LOSS").as_deref() {
            Ok("renewal") => Config::default().with_loss_detection(redisson_lock::LossDetection::Renewal),
            _ => Config::default(),
        };
        let ours = our_client(&self.url, config).await;
        let rs = rslock_manager(&self.url);
        let dur = Duration::from_millis(s.tp_ms);
        let rounds = s.tp_rounds;
        // per concurrency: system -> per-round ops/s
        let mut res: BTreeMap<usize, BTreeMap<&str, Vec<f64>>> = BTreeMap::new();
        // per concurrency: system -> per-round (client CPU µs / op, server CPU µs / op)
        let mut cpu: BTreeMap<usize, CpuBySystem> = BTreeMap::new();
        for &c in &s.tp_concurrency {
            for round in 0..rounds {
                let order = ["floor", "ours", "rslock", "floor_del"];
                for k in 0..order.len() {
                    let name = order[(k + round) % order.len()];
                    let systems: Vec<Sys> = (0..c)
                        .map(|t| {
                            let key = format!("bench:tp:{name}:{c}:{t}");
                            match name {
                                "floor" => Sys::Floor(self.raw.clone(), key.into()),
                                "floor_del" => Sys::FloorDel(self.raw.clone(), key.into()),
                                "ours" => Sys::Ours(ours.lock(&key).unwrap()),
                                _ => Sys::Rs(rs.clone(), key.into()),
                            }
                        })
                        .collect();
                    // every run starts on an empty server: the latches a run leaves to expire
                    // (the floor's) must not be expired during the next system's run
                    flushall(&mut self.admin.clone()).await;
                    let (ops, ccpu, scpu, dels) =
                        run_throughput(systems, dur, self.admin.clone(), self.tck).await;
                    eprintln!("bench:   C={c} repeat {round} {name}: {ops:.0} ops/s, client {ccpu:.1} µs/op, server {scpu:.1} µs/op");
                    res.entry(c).or_default().entry(name).or_default().push(ops);
                    cpu.entry(c)
                        .or_default()
                        .entry(name)
                        .or_default()
                        .push((ccpu, scpu, dels));
                }
                if let Some(jvm) = &self.jvm {
                    let r = jcall(
                        jvm,
                        format!("benchThroughput bench:tp:redisson:{c} {c} {}", s.tp_ms),
                    )
                    .await;
                    let ops = r["ops"].as_f64().unwrap_or(f64::NAN)
                        / (r["elapsed_ns"].as_f64().unwrap_or(f64::NAN) / 1e9);
                    res.entry(c).or_default().entry("redisson").or_default().push(ops);
                }
            }
            let mut a = self.admin.clone();
            flushall(&mut a).await;
        }
        drop(ours);

        let mut md = String::new();
        let _ = writeln!(md, "## 2. Throughput, lock + unlock on distinct keys\n");
        let _ = writeln!(
            md,
            "C tasks share one client (one multiplexed connection, so concurrent requests are pipelined); each task loops \
             acquire + release on its own key for {} ms; {rounds} repeats, interleaved. Floor = the same C tasks sending \
             `EVALSHA acquire.lua` then `EVALSHA unlock.lua` on a raw `ConnectionManager`; it leaves its latches to expire \
             (12.4 s), while ours deletes them in batches, so the floor's keyspace grows during its run (its server CPU per op \
             includes that). Every run starts on an empty server (`FLUSHALL`, untimed), so no run pays for the keys an earlier \
             one left. Ours = `lock()` + `unlock()`. \
             Redisson = C JVM threads doing `lock()` + `unlock()`. Ratio = median over the repeats of ops/s over the floor's ops/s in the same repeat (min–max of the per-repeat ratios); CPU ratios likewise. \
             \"floor + bg DEL\" is a diagnostic: the floor plus one background `DEL` of the unlock latch per op (what our unlock cost before latches were batched; the last column shows what it sends now).\n",
            s.tp_ms
        );
        let _ = writeln!(
            md,
            "| C | floor ops/s | ours ops/s | ours / floor | target | floor + bg DEL / floor | rslock ops/s | rslock / floor | Redisson ops/s | Redisson / floor | ours / Redisson |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|---|");
        let mut j = serde_json::Map::new();
        for (c, m) in &res {
            let med = |k: &str| m.get(k).map(|v| p50(v)).unwrap_or(f64::NAN);
            let rr = |k: &str, base: &str| -> (f64, f64, f64) {
                let (Some(a), Some(b)) = (m.get(k), m.get(base)) else {
                    return (f64::NAN, f64::NAN, f64::NAN);
                };
                paired(a, b)
            };
            let ours_r = rr("ours", "floor");
            // client CPU per op, ours over the floor's, paired per repeat
            // (median, min, max, repeats)
            let cpu_ratio = |k: &str, base: &str| -> (f64, f64, f64, usize) {
                let per = |name: &str| -> Vec<f64> {
                    cpu.get(c)
                        .and_then(|m| m.get(name))
                        .map(|v| v.iter().map(|x| x.0).collect())
                        .unwrap_or_default()
                };
                let (a, b) = (per(k), per(base));
                let (med, lo, hi) = paired(&a, &b);
                (med, lo, hi, a.len().min(b.len()))
            };
            let cpu_r = cpu_ratio("ours", "floor");
            let _ = writeln!(
                md,
                "| {c} | {:.0} | {:.0} | {} | ≥ {THROUGHPUT_TARGET}× — {} | {} | {:.0} | {} | {} | {} | {} |",
                med("floor"),
                med("ours"),
                fmt_ratio(ours_r),
                verdict(ours_r.0 >= THROUGHPUT_TARGET),
                fmt_ratio(rr("floor_del", "floor")),
                med("rslock"),
                fmt_ratio(rr("rslock", "floor")),
                if m.contains_key("redisson") {
                    format!("{:.0}", med("redisson"))
                } else {
                    "n/a".into()
                },
                fmt_ratio(rr("redisson", "floor")),
                fmt_ratio(rr("ours", "redisson")),
            );
            let cpu_c: BTreeMap<&str, Value> = cpu
                .get(c)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| {
                            let cl: Vec<f64> = v.iter().map(|x| x.0).collect();
                            let sv: Vec<f64> = v.iter().map(|x| x.1).collect();
                            let dl: Vec<f64> = v.iter().map(|x| x.2).collect();
                            (
                                *k,
                                json!({ "client_us_per_op": p50(&cl), "server_us_per_op": p50(&sv) , "client_del_per_op": p50(&dl), "client_us_per_op_per_repeat": cl }),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            j.insert(
                c.to_string(),
                json!({
                    "ops_per_s": m, "ratio_ours_vs_floor": ours_r.0,
                    "ratio_ours_vs_redisson": if m.contains_key("redisson") { rr("ours", "redisson").0 } else { f64::NAN },
                    "ratio_redisson_vs_floor": if m.contains_key("redisson") { rr("redisson", "floor").0 } else { f64::NAN },
                    "ratio_floor_del_vs_floor": rr("floor_del", "floor").0,
                    "ratio_client_cpu_ours_vs_floor": cpu_r.0,
                    "ratio_client_cpu_ours_vs_floor_min": cpu_r.1,
                    "ratio_client_cpu_ours_vs_floor_max": cpu_r.2,
                    "ratio_client_cpu_repeats": cpu_r.3,
                    "cpu": cpu_c,
                }),
            );
        }
        let _ = writeln!(
            md,
            "\nCPU per lock + unlock (median over repeats; client = this whole bench process, server = redis-server from INFO), µs:\n"
        );
        let _ = writeln!(md, "| C | floor client / server | floor + bg DEL client / server | ours client / server | rslock client / server | latch DEL commands per op, ours |");
        let _ = writeln!(md, "|---|---|---|---|---|---|");
        for (c, v) in &j {
            let cell = |k: &str| {
                let x = &v["cpu"][k];
                format!(
                    "{:.1} / {:.1}",
                    x["client_us_per_op"].as_f64().unwrap_or(f64::NAN),
                    x["server_us_per_op"].as_f64().unwrap_or(f64::NAN)
                )
            };
            let _ = writeln!(
                md,
                "| {c} | {} | {} | {} | {} | {:.2} |",
                cell("floor"),
                cell("floor_del"),
                cell("ours"),
                cell("rslock"),
                v["cpu"]["ours"]["client_del_per_op"].as_f64().unwrap_or(f64::NAN)
            );
        }
        md.push('\n');
        self.json.insert("throughput".into(), Value::Object(j));
        self.md.push_str(&md);
    }
}

/// Per system: (client, server, wall) CPU samples.
pub(crate) type CpuBySystem = BTreeMap<&'static str, Vec<(f64, f64, f64)>>;

/// C tasks, each looping acquire + release on its own system for `dur`; returns ops/s and the
/// client's and the server's CPU µs per op, and the DEL commands the client sent per op.
pub(crate) async fn run_throughput(
    systems: Vec<Sys>,
    dur: Duration,
    mut admin: ConnectionManager,
    tck: f64,
) -> (f64, f64, f64, f64) {
    let c = systems.len();
    let stop = Arc::new(AtomicBool::new(false));
    let ops = Arc::new(AtomicU64::new(0));
    // `ready`: every task finished its warm-up; `go`: the counters are read, time starts. The
    // warm-up (first use of each key and handle) is thus in neither the ops nor the CPU.
    let ready = Arc::new(tokio::sync::Barrier::new(c + 1));
    let go = Arc::new(tokio::sync::Barrier::new(c + 1));
    let mut tasks = Vec::with_capacity(c);
    for sys in systems {
        let (stop, ops, ready, go) = (stop.clone(), ops.clone(), ready.clone(), go.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..10 {
                let h = sys.try_once().await;
                sys.release(h).await;
            }
            ready.wait().await;
            go.wait().await;
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let h = sys.try_once().await;
                sys.release(h).await;
                n += 1;
            }
            ops.fetch_add(n, Ordering::Relaxed);
        }));
    }
    ready.wait().await;
    let k0 = cmdstats(&mut admin).await;
    let s0 = server_cpu(&mut admin).await;
    let c0 = proc_cpu(tck);
    go.wait().await;
    let t = Instant::now();
    tokio::time::sleep(dur).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
    let secs = t.elapsed().as_secs_f64();
    let c1 = proc_cpu(tck);
    let s1 = server_cpu(&mut admin).await;
    let k1 = cmdstats(&mut admin).await;
    let n = ops.load(Ordering::Relaxed) as f64;
    // DEL calls the client sent itself: every full release also runs one DEL (and one PUBLISH) in
    // its script; counted over the timed run, per op
    let d = stats_delta(&k0, &k1);
    let g = |k: &str| d.get(k).copied().unwrap_or(0) as f64;
    let client_dels = (g("del") - g("publish")).max(0.0) / n;
    (n / secs, (c1 - c0) / n * 1e6, (s1 - s0) / n * 1e6, client_dels)
}
