//! Section 5: many distinct locks, each with a waiter: subscriptions, wake-up, drain.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use redisson_lock::{Client, Config, LockGuard};
use serde_json::json;

use super::Bench;
use crate::stats::{fmt_s, p50, p99, us, verdict};
use crate::sysinfo::{channel_count, cmdstats, flushall, stats_delta};
use crate::systems::our_client;
use crate::RUN_START;

impl Bench {
    pub(crate) async fn many_waited(&mut self) {
        eprintln!(
            "bench: 5. many waited locks (at {:.0} s)",
            RUN_START.get().map_or(0.0, |t| t.elapsed().as_secs_f64())
        );
        let n = self.scale.many;
        let mut a = self.admin.clone();
        flushall(&mut a).await;
        let holder = our_client(&self.url, Config::default()).await;
        let waiter = our_client(&self.url, Config::default()).await;
        let key = |i: usize| format!("bench:many:{i}");

        // baseline: the holder's release pass with nobody waiting
        let guards = acquire_all(&holder, n, key).await;
        let t = Instant::now();
        let _ = release_all(guards, Instant::now()).await;
        let release_only_s = t.elapsed().as_secs_f64();

        // the real thing
        let guards = acquire_all(&holder, n, key).await;
        let c0 = cmdstats(&mut a).await;
        let epoch = Instant::now();
        let acq_at: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
        let done = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::with_capacity(n);
        for i in 0..n {
            let lock = waiter.lock(&key(i)).unwrap();
            let acq_at = acq_at.clone();
            let done = done.clone();
            tasks.push(tokio::spawn(async move {
                let g = lock.lock().await.unwrap();
                acq_at[i].store(epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
                done.fetch_add(1, Ordering::Relaxed);
                g
            }));
        }
        // wait until every waiter is subscribed
        let t = Instant::now();
        let mut numsub = 0;
        while t.elapsed() < Duration::from_secs(60) {
            numsub = channel_count(&mut a).await;
            if numsub >= n && waiter.stats().channels >= n {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let subscribe_s = t.elapsed().as_secs_f64();
        let stats_channels = waiter.stats().channels;
        // the steady cost of waiting: after the waiters' first naps (up to the holders' TTL),
        // every command the clients send over a window
        tokio::time::sleep(self.scale.wait_warm).await;
        let c_wait0 = cmdstats(&mut a).await;
        let w0 = Instant::now();
        tokio::time::sleep(self.scale.wait_window).await;
        let c_wait1 = cmdstats(&mut a).await;
        let window_s = w0.elapsed().as_secs_f64();
        let wd = stats_delta(&c_wait0, &c_wait1);
        let waiting_evalsha_per_s = wd.get("evalsha").copied().unwrap_or(0) as f64 / window_s;
        // what the clients sent (scripts' own commands and the INFO reads excluded)
        let waiting_cmds_per_s = ["evalsha", "eval", "subscribe", "unsubscribe", "ping"]
            .iter()
            .map(|k| wd.get(*k).copied().unwrap_or(0))
            .sum::<u64>() as f64
            / window_s;
        // release everything
        let release_start = epoch.elapsed().as_nanos() as u64;
        let rel_at = release_all(guards, epoch).await;
        let release_end = epoch.elapsed().as_nanos() as u64;
        let mut wguards = Vec::with_capacity(n);
        for t in tasks {
            wguards.push(t.await.unwrap());
        }
        let last = acq_at
            .iter()
            .map(|x| x.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0);
        let wake_all_s = (last - release_start) as f64 / 1e9;
        let per_lock: Vec<f64> = (0..n)
            .map(|i| (acq_at[i].load(Ordering::Relaxed) as f64 - rel_at[i] as f64) / 1e3)
            .collect();
        // waiters release, then subscriptions must drain to 0
        let _ = release_all(wguards, epoch).await;
        let t = Instant::now();
        let mut left = usize::MAX;
        while t.elapsed() < Duration::from_secs(20) {
            left = channel_count(&mut a).await;
            if left == 0 && waiter.stats().channels == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let drain_s = t.elapsed().as_secs_f64();
        let left_stats = waiter.stats().channels;
        let c1 = cmdstats(&mut a).await;
        let d = stats_delta(&c0, &c1);
        drop(holder);
        drop(waiter);
        flushall(&mut a).await;

        let p50v = p50(&per_lock);
        let p99v = p99(&per_lock);
        let mut md = String::new();
        let _ = writeln!(md, "## 5. Many waited locks\n");
        let _ = writeln!(
            md,
            "{n} distinct locks held by one client; one waiter task per lock (`lock()`) on a second client. Then the \
             holder releases all of them (256 concurrent unlocks). Baseline for the wake-up time = the same release pass \
             with nobody waiting ({}). Per-lock wake latency = waiter's acquire return − that lock's unlock return.\n",
            fmt_s(release_only_s)
        );
        let _ = writeln!(md, "| metric | value | baseline / target |");
        let _ = writeln!(md, "|---|---|---|");
        let _ = writeln!(
            md,
            "| subscriptions held (server: `PUBSUB CHANNELS`) | {numsub} | one per lock: {n} |"
        );
        let _ = writeln!(
            md,
            "| subscriptions held (client stats) | {stats_channels} | {n} |"
        );
        let _ = writeln!(
            md,
            "| time until all {n} waiters were subscribed | {} | |",
            fmt_s(subscribe_s)
        );
        let _ = writeln!(
            md,
            "| commands/s while {n} waiters wait (steady: after {}, over {}; holders in watchdog mode, TTL 30 s) | {waiting_cmds_per_s:.0} ({waiting_evalsha_per_s:.0} EVALSHA/s) | ≤ 500 — {} |",
            fmt_s(self.scale.wait_warm.as_secs_f64()),
            fmt_s(window_s),
            verdict(waiting_cmds_per_s <= 500.0)
        );
        let _ = writeln!(
            md,
            "| release pass with waiters | {} | {} |",
            fmt_s((release_end - release_start) as f64 / 1e9),
            fmt_s(release_only_s)
        );
        let _ = writeln!(
            md,
            "| time to wake them all (release start → last acquire) | {} | {:.2}× the release pass alone |",
            fmt_s(wake_all_s),
            wake_all_s / release_only_s
        );
        let _ = writeln!(
            md,
            "| per-lock wake latency p50 / p99 | {} / {} | p50 = {:.1} RTT |",
            us(p50v),
            us(p99v),
            p50v / self.rtt_us
        );
        let _ = writeln!(
            md,
            "| subscriptions left afterwards (server / client) | {} / {left_stats} | must be 0 — {} |",
            left,
            verdict(left == 0 && left_stats == 0)
        );
        let _ = writeln!(
            md,
            "| time for subscriptions to drain after the waiters' unlocks | {} | |",
            fmt_s(drain_s)
        );
        let _ = writeln!(
            md,
            "| SUBSCRIBE / UNSUBSCRIBE calls | {} / {} | {n} / {n} |\n",
            d.get("subscribe").copied().unwrap_or(0),
            d.get("unsubscribe").copied().unwrap_or(0)
        );
        let rec = recoveries(&self.url, &mut a, self.scale.recovery_locks).await;
        let _ = writeln!(
            md,
            "Recovery when no unlock message arrives ({} locks each, one waiter per lock, default config: \
             `poll_interval` 1 s, `subscribed_poll_interval` 30 s). Latency = waiter's acquire return − the moment the \
             lock became free.\n",
            rec.locks
        );
        let _ = writeln!(
            md,
            "| scenario | p50 | p99 | max | what wakes the waiter | Redisson |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|");
        for r in &rec.rows {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} |",
                r.name,
                us(p50(&r.latencies_us)),
                us(p99(&r.latencies_us)),
                us(r.latencies_us.iter().copied().fold(0.0, f64::max)),
                r.how,
                r.redisson
            );
        }
        md.push('\n');
        let rec_json: Vec<serde_json::Value> = rec
            .rows
            .iter()
            .map(|r| {
                json!({
                    "scenario": r.name, "p50_us": p50(&r.latencies_us), "p99_us": p99(&r.latencies_us),
                    "max_us": r.latencies_us.iter().copied().fold(0.0, f64::max), "locks": rec.locks,
                })
            })
            .collect();
        self.json.insert(
            "many_waited".into(),
            json!({
                "locks": n, "subscriptions_server": numsub, "subscriptions_client": stats_channels,
                "subscribe_all_s": subscribe_s, "waiting_evalsha_per_s": waiting_evalsha_per_s,
                "waiting_cmds_per_s": waiting_cmds_per_s, "waiting_window_s": window_s,
                "recoveries": rec_json,
                "release_only_s": release_only_s, "release_with_waiters_s": (release_end - release_start) as f64 / 1e9,
                "wake_all_s": wake_all_s, "per_lock_wake_us": { "p50": p50v, "p99": p99v },
                "subscriptions_left_server": left, "subscriptions_left_client": left_stats, "drain_s": drain_s,
                "commands": d,
            }),
        );
        self.md.push_str(&md);
    }
}

pub(crate) async fn acquire_all(client: &Client, n: usize, key: impl Fn(usize) -> String) -> Vec<LockGuard> {
    let mut out = Vec::with_capacity(n);
    let mut st = futures::stream::iter(0..n)
        .map(|i| {
            let lock = client.lock(&key(i)).unwrap().with_owner(7);
            async move { lock.lock().await.unwrap() }
        })
        .buffer_unordered(256);
    while let Some(g) = st.next().await {
        out.push(g);
    }
    out
}

/// Unlocks every guard (256 at a time); returns each key index's unlock-return time (ns since
/// `epoch`), indexed by the number at the end of the key.
pub(crate) async fn release_all(guards: Vec<LockGuard>, epoch: Instant) -> Vec<u64> {
    let n = guards.len();
    let times: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
    let t2 = times.clone();
    futures::stream::iter(guards)
        .map(|g| {
            let idx: usize = g
                .key()
                .rsplit(':')
                .next()
                .and_then(|x| x.parse().ok())
                .unwrap_or(0);
            let times = t2.clone();
            async move {
                g.unlock().await.unwrap();
                if idx < times.len() {
                    times[idx].store(epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
                }
            }
        })
        .buffer_unordered(256)
        .collect::<Vec<()>>()
        .await;
    times.iter().map(|x| x.load(Ordering::Relaxed)).collect()
}

struct Recovery {
    name: &'static str,
    how: &'static str,
    redisson: &'static str,
    latencies_us: Vec<f64>,
}

struct Recoveries {
    locks: usize,
    rows: Vec<Recovery>,
}

/// Writes `m` lock hashes as a holder that never releases would leave them (PTTL `ttl_ms`).
async fn raw_holds(a: &mut redis::aio::ConnectionManager, m: usize, prefix: &str, ttl_ms: u64) {
    let mut p = redis::pipe();
    for i in 0..m {
        let key = format!("{prefix}:{i}");
        p.cmd("HSET")
            .arg(&key)
            .arg("00000000-0000-4000-8000-00000000beef:1")
            .arg(1)
            .ignore();
        p.cmd("PEXPIRE").arg(&key).arg(ttl_ms).ignore();
    }
    let _: () = p.query_async(a).await.expect("raw holds");
}

/// `m` waiters (one per lock) on `waiter`; each records its acquire time (ns since `epoch`).
fn spawn_waiters(
    waiter: &Client,
    m: usize,
    prefix: &str,
    epoch: Instant,
) -> (Arc<Vec<AtomicU64>>, Vec<tokio::task::JoinHandle<LockGuard>>) {
    let at: Arc<Vec<AtomicU64>> = Arc::new((0..m).map(|_| AtomicU64::new(0)).collect());
    let tasks = (0..m)
        .map(|i| {
            let lock = waiter.lock(&format!("{prefix}:{i}")).unwrap();
            let at = at.clone();
            tokio::spawn(async move {
                let g = lock.lock().await.unwrap();
                at[i].store(epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
                g
            })
        })
        .collect();
    (at, tasks)
}

async fn all_listening(waiter: &Client, m: usize) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(60) {
        let st = waiter.stats();
        if st.waiters >= m && st.channels >= m {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // their first attempts are over and they sleep
    tokio::time::sleep(Duration::from_millis(300)).await;
}

async fn finish(tasks: Vec<tokio::task::JoinHandle<LockGuard>>) {
    for t in tasks {
        let g = tokio::time::timeout(Duration::from_secs(60), t)
            .await
            .expect("a waiter never got its lock")
            .unwrap();
        g.unlock().await.unwrap();
    }
}

/// The three ways a waiter misses its wake-up, each measured on `m` locks: a lock deleted
/// without a message; unlocks published while the waiters' pub/sub connection is down; a
/// holder that never releases (the key expires).
async fn recoveries(url: &str, a: &mut redis::aio::ConnectionManager, m: usize) -> Recoveries {
    let mut rows = Vec::new();

    // 1. deleted without a message
    {
        let waiter = our_client(url, Config::default()).await;
        raw_holds(a, m, "bench:rec:del", 3_600_000).await;
        let epoch = Instant::now();
        let (at, tasks) = spawn_waiters(&waiter, m, "bench:rec:del", epoch);
        all_listening(&waiter, m).await;
        let mut p = redis::pipe();
        for i in 0..m {
            p.cmd("DEL").arg(format!("bench:rec:del:{i}")).ignore();
        }
        let freed = epoch.elapsed().as_nanos() as f64;
        let _: () = p.query_async(a).await.unwrap();
        finish(tasks).await;
        rows.push(Recovery {
            name: "lock deleted without a message (raw `DEL`; TTL was 1 h)",
            how: "the batched check of waited-on keys (one call per 1,000 keys per `poll_interval`)",
            redisson: "waits the TTL (here 1 h)",
            latencies_us: at
                .iter()
                .map(|x| (x.load(Ordering::Relaxed) as f64 - freed) / 1e3)
                .collect(),
        });
        waiter.shutdown().await.unwrap();
    }

    // 2. unlocks published while the waiters' pub/sub connection is down
    {
        let holder = our_client(url, Config::default()).await;
        let waiter = our_client(url, Config::default()).await;
        let guards = acquire_all(&holder, m, |i| format!("bench:rec:kill:{i}")).await;
        let epoch = Instant::now();
        let (at, tasks) = spawn_waiters(&waiter, m, "bench:rec:kill", epoch);
        all_listening(&waiter, m).await;
        // the kill and the releases in one transaction: every unlock message is published
        // after the connection is gone
        let mut p = redis::pipe();
        p.atomic();
        p.cmd("CLIENT").arg("KILL").arg("TYPE").arg("pubsub").ignore();
        for i in 0..m {
            p.cmd("DEL").arg(format!("bench:rec:kill:{i}")).ignore();
            p.cmd("PUBLISH")
                .arg(format!("redisson_lock__channel:{{bench:rec:kill:{i}}}"))
                .arg(0)
                .ignore();
        }
        for g in guards {
            std::mem::forget(g); // their holds are gone with the DELs
        }
        let freed = epoch.elapsed().as_nanos() as f64;
        let _: () = p.query_async(a).await.unwrap();
        finish(tasks).await;
        rows.push(Recovery {
            name: "unlocked while the waiters' pub/sub connection was down (`CLIENT KILL TYPE pubsub` + DEL + PUBLISH in one `MULTI`)",
            how: "the disconnection: every waiter re-tries, re-subscribes, re-tries",
            redisson: "re-subscribes; waiters wait the TTL",
            latencies_us: at.iter().map(|x| (x.load(Ordering::Relaxed) as f64 - freed) / 1e3).collect(),
        });
        holder.shutdown().await.unwrap();
        waiter.shutdown().await.unwrap();
    }

    // 3. a holder that never releases: the key expires
    {
        let waiter = our_client(url, Config::default()).await;
        let ttl_ms = 5_000;
        raw_holds(a, m, "bench:rec:exp", ttl_ms).await;
        let written = Instant::now();
        let epoch = written;
        let (at, tasks) = spawn_waiters(&waiter, m, "bench:rec:exp", epoch);
        all_listening(&waiter, m).await;
        let freed = Duration::from_millis(ttl_ms).as_nanos() as f64;
        finish(tasks).await;
        rows.push(Recovery {
            name: "holder never releases (lease 5 s; latency after the expiry)",
            how: "the waiter's own nap (the holder's TTL), or the batched check",
            redisson: "waits the TTL too",
            latencies_us: at
                .iter()
                .map(|x| (x.load(Ordering::Relaxed) as f64 - freed) / 1e3)
                .collect(),
        });
        waiter.shutdown().await.unwrap();
    }
    flushall(a).await;
    Recoveries { locks: m, rows }
}
