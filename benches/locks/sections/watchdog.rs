//! Section 4: the watchdog holding 10k-100k locks: renewal calls, CPU and memory per lock.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures::StreamExt;
use redisson_lock::{Config, LockGuard, RLock};
use serde_json::{json, Value};

use super::Bench;
use crate::alloc::LIVE_BYTES;
use crate::raw::raw_renew_round;
use crate::stats::verdict;
use crate::sysinfo::{cmdstats, flushall, proc_cpu, rss_bytes, server_cpu, stats_delta};
use crate::systems::our_client;
use crate::RUN_START;

impl Bench {
    pub(crate) async fn watchdog(&mut self) {
        eprintln!(
            "bench: 4. watchdog (at {:.0} s)",
            RUN_START.get().map_or(0.0, |t| t.elapsed().as_secs_f64())
        );
        let s = self.scale.clone();
        let mut md = String::new();
        let period = s.wd_timeout / 3;
        let _ = writeln!(md, "## 4. Watchdog at scale\n");
        let _ = writeln!(
            md,
            "N locks held in watchdog mode by one client with `lock_watchdog_timeout` = {:?} (renewal period {:?}), \
             measured over {} periods while nothing else runs. The client has the default config, \
             `LossDetection::Tracking`: its CPU and heap include the loss watch (the renewals go on its tracking \
             connection); section 7 sets it against `Renewal`. Baseline = one raw renewal round: the same \
             `renew_batch.lua` calls (100 keys each) for the same locks, sent concurrently on a raw connection. \
             Memory = live heap bytes (counting global allocator) and RSS, after − before acquiring, per lock: heap \
             sampled every 5 ms over the window, its low (what the held locks keep) – its high (plus what a renewal \
             round has in flight: its calls are sent together, so their arguments and replies are in memory at once; \
             with tracking also the loss watch's re-reads of the keys Redis pushes back as changed by the renewal); \
             RSS once the heap has settled after acquiring (the janitor's queue of latch keys to delete drained) \
             (the `Vec<LockGuard>` is allocated beforehand; a guard is {} bytes inline). The target is on the low.\n",
            s.wd_timeout,
            period,
            s.wd_periods,
            std::mem::size_of::<LockGuard>()
        );
        let _ = writeln!(md, "| locks | renewal calls / period (window) | locks per call | calls per renewal round | target | client CPU / period | raw round CPU | CPU ratio | server CPU / period | heap / lock: low – high | target | RSS / lock | still held after the window |");
        let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        let mut j = serde_json::Map::new();
        for &n in &s.wd_counts {
            let mut a = self.admin.clone();
            flushall(&mut a).await;
            let client = our_client(
                &self.url,
                Config::default().with_lock_watchdog_timeout(s.wd_timeout),
            )
            .await;
            let mut guards: Vec<LockGuard> = Vec::with_capacity(n);
            let locks: Vec<RLock> = Vec::with_capacity(0);
            drop(locks);
            tokio::time::sleep(Duration::from_millis(200)).await;
            let heap0 = LIVE_BYTES.load(Ordering::Relaxed);
            let rss0 = rss_bytes();
            let t = Instant::now();
            let mut st = futures::stream::iter(0..n)
                .map(|i| {
                    let client = client.clone();
                    async move {
                        client
                            .lock(&format!("bench:wd:{i}"))
                            .unwrap()
                            .with_owner(1)
                            .lock()
                            .await
                            .unwrap()
                    }
                })
                .buffer_unordered(256);
            while let Some(g) = st.next().await {
                guards.push(g);
            }
            drop(st);
            let acquire_s = t.elapsed().as_secs_f64();
            // steady state: the janitor still holds the acquisitions' latch keys for a while
            // (deleted in batches after they queued up); wait until the heap stops moving
            let mut heap1 = LIVE_BYTES.load(Ordering::Relaxed);
            for _ in 0..50 {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let now = LIVE_BYTES.load(Ordering::Relaxed);
                let settled = now.abs_diff(heap1) as f64 <= 0.002 * (heap1.saturating_sub(heap0) as f64);
                heap1 = now;
                if settled {
                    break;
                }
            }
            let rss1 = rss_bytes();
            // align to a period boundary: wait for one renewal round to pass
            tokio::time::sleep(period).await;
            let c0 = cmdstats(&mut a).await;
            let cpu0 = proc_cpu(self.tck);
            let scpu0 = server_cpu(&mut a).await;
            // the heap over the window: its low is what the holds keep, its high adds what a
            // renewal round has in flight at once
            let (low, high) = crate::alloc::heap_low_high(period * s.wd_periods).await;
            let c1 = cmdstats(&mut a).await;
            let cpu1 = proc_cpu(self.tck);
            let scpu1 = server_cpu(&mut a).await;
            let d = stats_delta(&c0, &c1);
            let calls = d.get("evalsha").copied().unwrap_or(0) as f64 / s.wd_periods as f64;
            let cpu = (cpu1 - cpu0) / s.wd_periods as f64;
            let scpu = (scpu1 - scpu0) / s.wd_periods as f64;
            let renewing = client.stats().renewing;
            // every hold must have survived the window (a renewal round that stalls past the
            // lease deadline ends them as RenewalFailed, and they then count as renewing no more)
            let held = guards.iter().filter(|g| g.is_held()).count();
            // the window's edges cut through renewal rounds; the keys per call (PEXPIRE run by the
            // script per renewed key, per EVALSHA) give the exact calls for one round over all
            // held locks (not HEXISTS or PTTL: the loss watch's reads after each round send those
            // too)
            let keys_per_call = d.get("pexpire").copied().unwrap_or(0) as f64
                / d.get("evalsha").copied().unwrap_or(0).max(1) as f64;
            let per_round = (n as f64 / keys_per_call).ceil();
            // baseline: one raw renewal round for the same locks
            let field = format!("{}:1", client.id());
            let raw_cpu = raw_renew_round(&self.raw, n, &field, 3, self.tck).await;
            let heap_per = (low - heap0) as f64 / n as f64;
            let heap_high = (high - heap0) as f64 / n as f64;
            let heap_settled = (heap1 - heap0) as f64 / n as f64;
            let rss_per = (rss1 - rss0) as f64 / n as f64;
            let _ = writeln!(
                md,
                "| {n} | {calls:.0} | {keys_per_call:.0} | {per_round:.0} | ≤ {} — {} | {:.1} ms | {:.1} ms | {:.2}× | {:.1} ms | {heap_per:.0} – {heap_high:.0} B | ≤ 256 B — {} | {rss_per:.0} B | {held} — {} |",
                n.div_ceil(100),
                verdict(per_round <= n.div_ceil(100) as f64),
                cpu * 1e3,
                raw_cpu * 1e3,
                cpu / raw_cpu,
                scpu * 1e3,
                verdict(heap_per <= 256.0),
                verdict(held == n),
            );
            j.insert(
                n.to_string(),
                json!({
                    "period_s": period.as_secs_f64(), "periods": s.wd_periods, "renewing": renewing, "held_after_window": held,
                    "acquire_all_s": acquire_s, "renewal_calls_per_period": calls, "commands": d,
                    "locks_per_call": keys_per_call, "calls_per_round": per_round,
                    "client_cpu_s_per_period": cpu, "raw_round_cpu_s": raw_cpu, "server_cpu_s_per_period": scpu,
                    "heap_bytes_per_lock": heap_per, "heap_bytes_per_lock_high": heap_high,
                    "heap_bytes_per_lock_settled": heap_settled, "rss_bytes_per_lock": rss_per,
                }),
            );
            for g in guards {
                g.forget();
            }
            drop(client);
            tokio::time::sleep(Duration::from_millis(100)).await;
            flushall(&mut a).await;
        }
        let _ = writeln!(md, "\nCPU = the bench process's CPU time (sum of its threads' `schedstat` run time), so it includes the runtime's idle wake-ups; server CPU from INFO.\n");
        self.json.insert("watchdog".into(), Value::Object(j));
        self.md.push_str(&md);
    }
}
