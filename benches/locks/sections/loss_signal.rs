//! Section 7: how soon a lost lock is known (`guard.lost()`) with `LossDetection::Tracking` (the
//! default) and with `Renewal`, what tracking costs while 10k locks are held, and what it adds to
//! acquire + release.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures::StreamExt;
use redis::aio::ConnectionManager;
use redisson_lock::{Client, Config, LockGuard, LossDetection, LostReason};
use serde_json::{json, Value};

use super::Bench;
use crate::alloc::LIVE_BYTES;
use crate::stats::{fmt_ratio, fmt_s, p50, p99, ratio, us, verdict, Dist};
use crate::sysinfo::{cmdstats, flushall, info, proc_cpu, server_cpu, stats_delta, top_level_calls};
use crate::systems::{our_client, Sys};
use crate::RUN_START;

/// How old a hold is when its cause hits (Tracking): past the watch's 10 ms gathering window of new holds and
/// its read, so the key is tracked and the loss arrives as an invalidation push (the steady case
/// of a lock held for a while).
const HOLD_AGE: Duration = Duration::from_millis(20);
/// A Tracking sample slower than this counts as missed.
const TRACKING_BOUND: Duration = Duration::from_secs(5);
/// Unrecorded samples of every cause before the Tracking ones (scripts loaded, connections warm).
const WARM_UP: usize = 5;

/// What an operator or another service does to a held lock (tests/loss_signal.rs; a restart is
/// not possible against the bench's shared server).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cause {
    Del,
    Unlink,
    FlushAll,
    FlushDb,
    /// Another Redis type written under the lock's name.
    Overwrite,
    /// `PEXPIRE key 1`: the key expires 1 ms later.
    Expire,
    /// Another client's force-unlock (Redisson's `forceUnlock()` sends the same script).
    ForceUnlock,
}

const CAUSES: [Cause; 7] = [
    Cause::Del,
    Cause::Unlink,
    Cause::FlushAll,
    Cause::FlushDb,
    Cause::Overwrite,
    Cause::Expire,
    Cause::ForceUnlock,
];

impl Cause {
    /// Its key in the JSON.
    fn id(self) -> &'static str {
        match self {
            Cause::Del => "del",
            Cause::Unlink => "unlink",
            Cause::FlushAll => "flushall",
            Cause::FlushDb => "flushdb",
            Cause::Overwrite => "overwrite",
            Cause::Expire => "expire",
            Cause::ForceUnlock => "force_unlock",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Cause::Del => "`DEL`",
            Cause::Unlink => "`UNLINK`",
            Cause::FlushAll => "`FLUSHALL`",
            Cause::FlushDb => "`FLUSHDB`",
            Cause::Overwrite => "`SET` (another type under the name)",
            Cause::Expire => "`PEXPIRE` 1 ms (expiry)",
            Cause::ForceUnlock => "`force_unlock()` by another client",
        }
    }

    /// Whether it touches the lock's key only (not the whole keyspace).
    fn local(self) -> bool {
        !matches!(self, Cause::FlushAll | Cause::FlushDb)
    }
}

/// Applies `cause` to the lock `name` (key `key`); returns the moment its reply arrived.
async fn apply(
    cause: Cause,
    admin: &mut ConnectionManager,
    other: &Client,
    name: &str,
    key: &str,
) -> Instant {
    let cmd = match cause {
        Cause::Del => redis::cmd("DEL").arg(key).clone(),
        Cause::Unlink => redis::cmd("UNLINK").arg(key).clone(),
        Cause::FlushAll => redis::cmd("FLUSHALL").clone(),
        Cause::FlushDb => redis::cmd("FLUSHDB").clone(),
        Cause::Overwrite => redis::cmd("SET").arg(key).arg("not a lock").clone(),
        Cause::Expire => redis::cmd("PEXPIRE").arg(key).arg(1).clone(),
        Cause::ForceUnlock => {
            let forced = other
                .lock(name)
                .unwrap()
                .force_unlock()
                .await
                .expect("force unlock");
            let at = Instant::now();
            assert!(forced, "the force-unlock found no lock");
            return at;
        }
    };
    let _: redis::Value = cmd.query_async(admin).await.expect("the cause");
    Instant::now()
}

/// Holds `g` (lock `name`), applies `cause`, and waits at most `bound` for `lost()`: the
/// reason and the time from the cause's reply.
async fn one_loss(
    cause: Cause,
    g: LockGuard,
    name: &str,
    admin: &mut ConnectionManager,
    other: &Client,
    bound: Duration,
) -> Option<(LostReason, Duration)> {
    let key = g.key().to_owned();
    let lost = g.lost();
    let t0 = apply(cause, admin, other, name, &key).await;
    let r = tokio::time::timeout(bound, lost)
        .await
        .ok()
        .map(|why| (why, t0.elapsed()));
    drop(g); // a hold known lost sends nothing; a missed one is released
             // the key may hold another type now
    let _: () = redis::cmd("DEL").arg(&key).query_async(admin).await.unwrap();
    r
}

/// Loss-to-`lost()` samples of one cause in one mode.
#[derive(Default)]
struct Samples {
    us: Vec<f64>,
    missed: usize,
    reasons: BTreeMap<String, usize>,
}

impl Samples {
    fn record(&mut self, r: Option<(LostReason, Duration)>) {
        match r {
            Some((why, after)) => {
                self.us.push(after.as_secs_f64() * 1e6);
                *self.reasons.entry(format!("{why:?}")).or_default() += 1;
            }
            None => self.missed += 1,
        }
    }

    fn pooled<'a>(all: impl IntoIterator<Item = &'a Samples>) -> Samples {
        let mut out = Samples::default();
        for s in all {
            out.us.extend(&s.us);
            out.missed += s.missed;
            for (k, v) in &s.reasons {
                *out.reasons.entry(k.clone()).or_default() += v;
            }
        }
        out
    }

    fn json(&self, label: &str) -> Value {
        json!({
            "label": label,
            "n": self.us.len() + self.missed,
            "missed": self.missed,
            "p50_us": p50(&self.us),
            "p99_us": p99(&self.us),
            "max_us": self.us.iter().copied().fold(f64::NAN, f64::max),
            "reasons": self.reasons,
            "samples": self.us.iter().map(|x| x.round()).collect::<Vec<f64>>(),
        })
    }
}

/// Tracking (the default config, watchdog 30 s): `n` samples per cause, causes interleaved,
/// one at a time; each hold is [`HOLD_AGE`] old when its cause hits.
async fn tracking_samples(url: &str, admin: &mut ConnectionManager, n: usize) -> Vec<Samples> {
    let holder = our_client(url, Config::default()).await;
    let other = our_client(url, Config::default()).await;
    let mut out: Vec<Samples> = CAUSES.iter().map(|_| Samples::default()).collect();
    for i in 0..WARM_UP + n {
        for (c, cause) in CAUSES.into_iter().enumerate() {
            let name = format!("bench:loss:t:{}:{i}", cause.id());
            let g = holder.lock(&name).unwrap().lock().await.unwrap();
            tokio::time::sleep(HOLD_AGE).await;
            let r = one_loss(cause, g, &name, admin, &other, TRACKING_BOUND).await;
            if i >= WARM_UP {
                out[c].record(r);
            }
        }
    }
    holder.shutdown().await.unwrap();
    other.shutdown().await.unwrap();
    flushall(admin).await;
    out
}

/// Renewal (`LossDetection::Renewal`, watchdog `timeout`): `m` samples per cause. The loss waits
/// for the next renewal round (every `timeout / 3`), so the causes hit at evenly spread phases of
/// the period: the key-local ones all at once, spread over two periods; the flushes (each empties
/// the keyspace) one at a time, each after its own share of a period.
async fn renewal_samples(
    url: &str,
    admin: &mut ConnectionManager,
    m: usize,
    timeout: Duration,
) -> Vec<Samples> {
    let period = timeout / 3;
    let bound = period * 3;
    let cfg = Config::default()
        .with_lock_watchdog_timeout(timeout)
        .with_loss_detection(LossDetection::Renewal);
    let holder = our_client(url, cfg).await;
    let other = our_client(url, Config::default()).await;
    let mut out: Vec<Samples> = CAUSES.iter().map(|_| Samples::default()).collect();
    let idx = |cause: Cause| CAUSES.iter().position(|c| *c == cause).unwrap();

    let local: Vec<Cause> = CAUSES.into_iter().filter(|c| c.local()).collect();
    let total = local.len() * m;
    let mut held = Vec::with_capacity(total);
    for k in 0..total {
        let cause = local[k % local.len()];
        let name = format!("bench:loss:r:{}:{}", cause.id(), k / local.len());
        let g = holder.lock(&name).unwrap().lock().await.unwrap();
        held.push((cause, name, g));
    }
    let start = tokio::time::Instant::now();
    let span = period * 2;
    let tasks: Vec<_> = held
        .into_iter()
        .enumerate()
        .map(|(k, (cause, name, g))| {
            let at = start + span.mul_f64((k as f64 + 0.5) / total as f64);
            let mut a = admin.clone();
            let other = other.clone();
            tokio::spawn(async move {
                tokio::time::sleep_until(at).await;
                (cause, one_loss(cause, g, &name, &mut a, &other, bound).await)
            })
        })
        .collect();
    for t in tasks {
        let (cause, r) = t.await.unwrap();
        out[idx(cause)].record(r);
    }

    let flushes = [Cause::FlushAll, Cause::FlushDb];
    for i in 0..m {
        for (j, cause) in flushes.into_iter().enumerate() {
            let name = format!("bench:loss:r:{}:{i}", cause.id());
            let g = holder.lock(&name).unwrap().lock().await.unwrap();
            let k = i * flushes.len() + j;
            // the previous sample ended at a renewal round: this one hits its share later
            tokio::time::sleep(period.mul_f64((k as f64 + 0.5) / (m * flushes.len()) as f64)).await;
            let r = one_loss(cause, g, &name, admin, &other, bound).await;
            out[idx(cause)].record(r);
        }
    }
    holder.shutdown().await.unwrap();
    other.shutdown().await.unwrap();
    flushall(admin).await;
    out
}

fn info_f64(i: &BTreeMap<String, String>, k: &str) -> f64 {
    i.get(k).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)
}

/// One timed operation (µs) of the overhead comparison, then the untimed clean-up.
async fn timed(acq_only: bool, sys: &Sys) -> f64 {
    let t = Instant::now();
    let h = sys.try_once().await;
    let e = if acq_only {
        let e = t.elapsed();
        sys.cleanup(h).await;
        e
    } else {
        sys.release(h).await;
        t.elapsed()
    };
    sys.settle().await;
    e.as_secs_f64() * 1e6
}

impl Bench {
    pub(crate) async fn loss_signal(&mut self) {
        eprintln!(
            "bench: 7. loss signal (at {:.0} s)",
            RUN_START.get().map_or(0.0, |t| t.elapsed().as_secs_f64())
        );
        let s = self.scale.clone();
        let mut a = self.admin.clone();
        flushall(&mut a).await;
        let mut j = serde_json::Map::new();

        // --- the overhead on acquire + release (first: it gives the RTT when section 1 did not run)
        let lat = self.loss_overhead().await;
        let rtt = if self.rtt_us.is_finite() {
            self.rtt_us
        } else {
            lat.0["floor_acq"].p50()
        };
        let target_us = rtt + 5_000.0;

        // --- loss to lost()
        let tracking = tracking_samples(&self.url, &mut a, s.loss_samples).await;
        let renewal =
            renewal_samples(&self.url, &mut a, s.loss_renewal_samples, s.loss_renewal_timeout).await;

        // --- what holding costs
        let cost_t = self.hold_cost(LossDetection::Tracking).await;
        let cost_r = self.hold_cost(LossDetection::Renewal).await;

        // ------------------------------------------------------------------ JSON
        let side = |v: &[Samples]| {
            let mut m = serde_json::Map::new();
            for (c, x) in CAUSES.iter().zip(v) {
                m.insert(c.id().into(), x.json(c.label()));
            }
            m.insert("all".into(), Samples::pooled(v).json("all causes"));
            Value::Object(m)
        };
        j.insert("rtt_us".into(), json!(rtt));
        j.insert("target_p99_us".into(), json!(target_us));
        j.insert("hold_age_ms".into(), json!(HOLD_AGE.as_secs_f64() * 1e3));
        j.insert(
            "tracking_watchdog_s".into(),
            json!(Config::default().lock_watchdog_timeout().as_secs_f64()),
        );
        j.insert(
            "renewal_watchdog_s".into(),
            json!(s.loss_renewal_timeout.as_secs_f64()),
        );
        j.insert("tracking".into(), side(&tracking));
        j.insert("renewal".into(), side(&renewal));
        j.insert(
            "cost".into(),
            json!({
                "locks": s.loss_locks, "watchdog_s": s.wd_timeout.as_secs_f64(),
                "tracking": cost_t, "renewal": cost_r,
            }),
        );
        let (d, ratios) = lat;
        let mut lj = serde_json::Map::new();
        for (k, v) in &d {
            lj.insert((*k).into(), v.json());
        }
        for (k, r) in &ratios {
            lj.insert(k.clone(), json!(r.0));
        }
        j.insert("overhead".into(), Value::Object(lj));

        // ------------------------------------------------------------------ report
        let mut md = String::new();
        let _ = writeln!(md, "## 7. Loss signal\n");
        let _ = writeln!(
            md,
            "How soon `guard.lost()` resolves after something else ends a held reentrant lock (`RLock`, watchdog mode), \
             from the reply to the command that ended it (for the force-unlock: the return of the other client's \
             `force_unlock()`). **Tracking** = the default config (`LossDetection::Tracking`, watchdog 30 s): {} samples \
             per cause, causes interleaved, one at a time, each hold {} old when its cause hits (read and tracked by \
             then). **Renewal** = `LossDetection::Renewal` with the watchdog timeout cut to {} (renewal every {}; \
             with the default 30 s a sample would take up to 10 s): {} samples per cause, hitting evenly spread \
             phases of the renewal period (the key-local causes concurrently over two periods, the flushes one at \
             a time). A restart cannot be caused on the bench's shared server (tests/loss_signal.rs covers it). \
             Target (Tracking): p99 ≤ 1 RTT + 5 ms = {} (RTT = floor EVALSHA p50 = {}).\n",
            s.loss_samples,
            fmt_s(HOLD_AGE.as_secs_f64()),
            fmt_s(s.loss_renewal_timeout.as_secs_f64()),
            fmt_s((s.loss_renewal_timeout / 3).as_secs_f64()),
            s.loss_renewal_samples,
            us(target_us),
            us(rtt),
        );
        let _ = writeln!(
            md,
            "| cause | Tracking p50 | p99 | max | n (missed) | target p99 | Renewal p50 | p99 | max | n (missed) |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|");
        let row = |md: &mut String, label: &str, t: &Samples, r: &Samples| {
            let tmax = t.us.iter().copied().fold(f64::NAN, f64::max);
            let rmax = r.us.iter().copied().fold(f64::NAN, f64::max);
            let _ = writeln!(
                md,
                "| {label} | {} | {} | {} | {} ({}) | ≤ {} — {} | {} | {} | {} | {} ({}) |",
                us(p50(&t.us)),
                us(p99(&t.us)),
                us(tmax),
                t.us.len() + t.missed,
                t.missed,
                us(target_us),
                verdict(t.missed == 0 && p99(&t.us) <= target_us),
                us(p50(&r.us)),
                us(p99(&r.us)),
                us(rmax),
                r.us.len() + r.missed,
                r.missed,
            );
        };
        for (c, cause) in CAUSES.iter().enumerate() {
            row(&mut md, cause.label(), &tracking[c], &renewal[c]);
        }
        row(
            &mut md,
            "**all causes**",
            &Samples::pooled(&tracking),
            &Samples::pooled(&renewal),
        );
        let reasons = |v: &[Samples]| {
            Samples::pooled(v)
                .reasons
                .iter()
                .map(|(k, n)| format!("`{k}` × {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            md,
            "\nReasons reported: Tracking {}; Renewal {}.\n",
            reasons(&tracking),
            reasons(&renewal)
        );

        let _ = writeln!(
            md,
            "Cost of holding {} locks (one client, one owner, watchdog mode with `lock_watchdog_timeout` = {}: renewal \
             every {}), each mode on an empty server in turn. Commands/s = what the client sends (EVALSHA, EVAL, \
             (UN)SUBSCRIBE, CLIENT, PING, latch DEL, and the loss watch's pipelined `HEXISTS`, one per hold read, \
             and `PTTL`, one per key read after a reported change: `HEXISTS` − `PEXPIRE` and `PTTL` (− `PEXPIRE` where the server has no `PEXPIRE ... GT`), as \
             the renewal script runs one `HEXISTS` and one `PEXPIRE` per renewed key; INFO commandstats deltas, the \
             scripts' own commands excluded) over {} after one period; server output = INFO `total_net_output_bytes` over the same window (the \
             invalidation pushes are there); heap = live heap bytes after − before acquiring, per lock, its low and high over the window, as in section 4; \
             server memory = INFO `used_memory`, same; tracking table = INFO `tracking_total_keys` / `_items` / \
             `_prefixes`, the largest of samples every 50 ms over the period after the window (Redis drops a key \
             from it when it pushes the key's invalidation; a read adds it back); connections with \
             tracking on = INFO `tracking_clients` while holding − before the client started.\n",
            s.loss_locks,
            fmt_s(s.wd_timeout.as_secs_f64()),
            fmt_s((s.wd_timeout / 3).as_secs_f64()),
            fmt_s((s.wd_timeout / 3 * s.wd_periods).as_secs_f64()),
        );
        let _ = writeln!(
            md,
            "| mode | commands/s (EVALSHA/s, holds read/s) | client CPU / period | server CPU / period | server output | heap / lock: low – high | server memory / lock | tracking table keys / items / prefixes | connections with tracking on | still held at the end |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|");
        for (name, c) in [("Tracking", &cost_t), ("Renewal", &cost_r)] {
            let f = |k: &str| c[k].as_f64().unwrap_or(f64::NAN);
            let _ = writeln!(
                md,
                "| {name} | {:.0} ({:.0}, {:.0}) | {:.1} ms | {:.1} ms | {:.0} KB/s | {:.0} – {:.0} B | {:.0} B | {:.0} / {:.0} / {:.0} | {:.0} | {:.0} |",
                f("client_cmds_per_s"),
                f("evalsha_per_s"),
                f("holds_read_per_s"),
                f("client_cpu_s_per_period") * 1e3,
                f("server_cpu_s_per_period") * 1e3,
                f("server_output_bytes_per_s") / 1e3,
                f("heap_bytes_per_lock"),
                f("heap_bytes_per_lock_high"),
                f("server_memory_bytes_per_lock"),
                f("tracking_keys_max"),
                f("tracking_items_max"),
                f("tracking_prefixes"),
                f("tracking_connections"),
                f("held_after"),
            );
        }

        let _ = writeln!(
            md,
            "\nOverhead on the caller: the floor (`EVALSHA` of `acquire.lua` / `unlock.lua`, as in section 1), a \
             Tracking client and a Renewal client (both default watchdog), each on its own always-free key; {} \
             repeats × {} iterations, the three alternating per iteration (order rotating). Ours = `try_lock()` \
             (+ `unlock()`). Ratio = median over the repeats of p50 / p50 in the same repeat (min–max).\n",
            s.lat_rounds, s.lat_iters
        );
        let _ = writeln!(
            md,
            "| operation | floor p50 | Tracking p50 | Tracking / floor | target | Renewal p50 | Renewal / floor | Tracking / Renewal |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|---|---|");
        let rt = |k: &str| {
            ratios
                .iter()
                .find(|(n, _)| *n == k)
                .map_or((f64::NAN, f64::NAN, f64::NAN), |x| x.1)
        };
        for (op, label, target) in [("acq", "acquire", true), ("acq_rel", "acquire + release", false)] {
            let tf = rt(&format!("ratio_tracking_{op}_vs_floor"));
            let _ = writeln!(
                md,
                "| {label} | {} | {} | {} | {} | {} | {} | {} |",
                us(d[&*format!("floor_{op}")].p50()),
                us(d[&*format!("tracking_{op}")].p50()),
                fmt_ratio(tf),
                if target {
                    format!("≤ 1.05× — {}", verdict(tf.0 <= 1.05))
                } else {
                    String::new()
                },
                us(d[&*format!("renewal_{op}")].p50()),
                fmt_ratio(rt(&format!("ratio_renewal_{op}_vs_floor"))),
                fmt_ratio(rt(&format!("ratio_tracking_vs_renewal_{op}"))),
            );
        }
        let _ = writeln!(
            md,
            "\nMeanwhile the Tracking client's loss watch read {:.4} holds per Tracking operation (pipelined `HEXISTS` on \
             its tracking connection, from INFO commandstats: `HEXISTS` − the unlock script's (one per `PUBLISH`) − the \
             renewal script's (one per renewed key: `PEXPIRE` − `HINCRBY`, as every grant extends its key once); a hold still held when the 10 ms gathering window after its \
             acquisition ends is read, and its key is then tracked, so its release is pushed too).\n",
            rt("tracking_holds_read_per_op").0
        );
        self.json.insert("loss_signal".into(), Value::Object(j));
        self.md.push_str(&md);
    }

    /// The floor, a Tracking client and a Renewal client, acquire and acquire + release,
    /// interleaved per iteration. Returns the distributions and the ratios (median of per-repeat
    /// p50 ratios, min, max).
    async fn loss_overhead(&mut self) -> (BTreeMap<&'static str, Dist>, Vec<(String, (f64, f64, f64))>) {
        let s = self.scale.clone();
        let trk = our_client(&self.url, Config::default()).await;
        let ren = our_client(
            &self.url,
            Config::default().with_loss_detection(LossDetection::Renewal),
        )
        .await;
        let systems = [
            (
                "floor",
                Sys::Floor(self.raw.clone(), "bench:loss:lat:floor".into()),
            ),
            (
                "tracking",
                Sys::Ours(trk.lock("bench:loss:lat:tracking").unwrap()),
            ),
            ("renewal", Sys::Ours(ren.lock("bench:loss:lat:renewal").unwrap())),
        ];
        for _ in 0..300 {
            for (_, sys) in &systems {
                let h = sys.try_once().await;
                sys.release(h).await;
            }
        }
        let mut a = self.admin.clone();
        let c0 = cmdstats(&mut a).await;
        let ops: [(&str, bool, [&'static str; 3]); 2] = [
            ("acq", true, ["floor_acq", "tracking_acq", "renewal_acq"]),
            (
                "acq_rel",
                false,
                ["floor_acq_rel", "tracking_acq_rel", "renewal_acq_rel"],
            ),
        ];
        let mut d: BTreeMap<&'static str, Dist> = ops
            .iter()
            .flat_map(|(_, _, names)| names.iter().map(|n| (*n, Dist::default())))
            .collect();
        for round in 0..s.lat_rounds {
            for k in 0..ops.len() {
                let (_, acq_only, names) = ops[(k + round) % ops.len()];
                let mut v: Vec<Vec<f64>> = (0..3).map(|_| Vec::with_capacity(s.lat_iters)).collect();
                for i in 0..s.lat_iters {
                    for jj in 0..3 {
                        let at = (i + jj) % 3;
                        v[at].push(timed(acq_only, &systems[at].1).await);
                    }
                }
                for (n, v) in names.iter().zip(v) {
                    d.get_mut(n).unwrap().push_round(v);
                }
            }
        }
        let c1 = cmdstats(&mut a).await;
        trk.shutdown().await.unwrap();
        ren.shutdown().await.unwrap();
        // what the Tracking client's watch read meanwhile: its pipelined HEXISTS. The others
        // run in scripts: the unlock script's (one per full release, which publishes once) and
        // the renewal script's (one per renewed key, which gets a PEXPIRE, as every grant does
        // with its HINCRBY); acquire.lua finds the key free before HEXISTS.
        let cd = stats_delta(&c0, &c1);
        let g = |k: &str| cd.get(k).copied().unwrap_or(0);
        let tracking_ops = 2 * s.lat_rounds * s.lat_iters;
        let renewed = g("pexpire").saturating_sub(g("hincrby"));
        let reads = g("hexists").saturating_sub(renewed + g("publish"));
        let reads_per_op = reads as f64 / tracking_ops as f64;
        let mut ratios = Vec::new();
        for (op, _, _) in ops {
            let g = |sys: &str| &d[&*format!("{sys}_{op}")];
            let (t, r, f) = (g("tracking"), g("renewal"), g("floor"));
            ratios.push((format!("ratio_tracking_{op}_vs_floor"), ratio(t, f)));
            ratios.push((format!("ratio_renewal_{op}_vs_floor"), ratio(r, f)));
            ratios.push((format!("ratio_tracking_vs_renewal_{op}"), ratio(t, r)));
        }
        ratios.push((
            "tracking_holds_read_per_op".into(),
            (reads_per_op, f64::NAN, f64::NAN),
        ));
        flushall(&mut a).await;
        (d, ratios)
    }

    /// `loss_locks` locks held in watchdog mode by one client of `mode`: what the client sends,
    /// CPU, memory (client and server) and the server's tracking table.
    async fn hold_cost(&mut self, mode: LossDetection) -> Value {
        let s = self.scale.clone();
        let n = s.loss_locks;
        let period = s.wd_timeout / 3;
        let mut a = self.admin.clone();
        flushall(&mut a).await;
        let tracking_clients = |i: BTreeMap<String, String>| info_f64(&i, "tracking_clients");
        // the connections of clients shut down just before may still be closing
        let mut tc0 = tracking_clients(info(&mut a, "clients").await);
        for _ in 0..20 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let now = tracking_clients(info(&mut a, "clients").await);
            if now == tc0 {
                break;
            }
            tc0 = now;
        }
        let client = our_client(
            &self.url,
            Config::default()
                .with_lock_watchdog_timeout(s.wd_timeout)
                .with_loss_detection(mode),
        )
        .await;
        let mut guards: Vec<LockGuard> = Vec::with_capacity(n);
        // the clients shut down just before free their memory in the background, some of it
        // only after about a second (their tasks' 1 s idle checks): wait that long, then until
        // the heap stops moving, before taking the baseline
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        let mut heap0 = LIVE_BYTES.load(Ordering::Relaxed);
        for _ in 0..50 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let now = LIVE_BYTES.load(Ordering::Relaxed);
            let still = now.abs_diff(heap0) <= 16 * 1024;
            heap0 = now;
            if still {
                break;
            }
        }
        let mem0 = info_f64(&info(&mut a, "memory").await, "used_memory");
        let mut st = futures::stream::iter(0..n)
            .map(|i| {
                let lock = client
                    .lock(&format!("bench:loss:hold:{i}"))
                    .unwrap()
                    .with_owner(1);
                async move { lock.lock().await.unwrap() }
            })
            .buffer_unordered(256);
        while let Some(g) = st.next().await {
            guards.push(g);
        }
        drop(st);
        // as in section 4: wait until the heap stops moving (the janitor's latch queue drained,
        // the watch's first reads done)
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
        tokio::time::sleep(period).await;
        let mem1 = info_f64(&info(&mut a, "memory").await, "used_memory");
        let c0 = cmdstats(&mut a).await;
        let net0 = info(&mut a, "stats").await;
        let cpu0 = proc_cpu(self.tck);
        let scpu0 = server_cpu(&mut a).await;
        let w0 = Instant::now();
        let (low, high) = crate::alloc::heap_low_high(period * s.wd_periods).await;
        let c1 = cmdstats(&mut a).await;
        let net1 = info(&mut a, "stats").await;
        let cpu1 = proc_cpu(self.tck);
        let scpu1 = server_cpu(&mut a).await;
        let window_s = w0.elapsed().as_secs_f64();
        let periods = window_s / period.as_secs_f64();
        // the tracking table over one more period
        let (mut keys, mut items, mut prefixes) = (Vec::new(), Vec::new(), f64::NAN);
        let t = Instant::now();
        while t.elapsed() < period {
            let i = info(&mut a, "stats").await;
            keys.push(info_f64(&i, "tracking_total_keys"));
            items.push(info_f64(&i, "tracking_total_items"));
            prefixes = info_f64(&i, "tracking_total_prefixes");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let tc1 = tracking_clients(info(&mut a, "clients").await);
        let renewing = client.stats().renewing;
        let loss_signal = client.stats().loss_signal;
        let held = guards.iter().filter(|g| g.is_held()).count();
        let d = stats_delta(&c0, &c1);
        let g = |k: &str| d.get(k).copied().unwrap_or(0);
        // the watch reads holds with pipelined `HEXISTS` (one per hold) and, after a reported
        // change, `PTTL` (one per key); the renewal script runs one `HEXISTS` and one `PEXPIRE`
        // per renewed key (and nothing else here writes with PEXPIRE), and a `PTTL` before each
        // where the server has no `PEXPIRE ... GT`
        let reads = g("hexists").saturating_sub(g("pexpire"));
        let renewal_ttls = if pexpire_gt(&mut a).await { 0 } else { g("pexpire") };
        let ttl_reads = g("pttl").saturating_sub(renewal_ttls);
        let client_cmds = top_level_calls(&d, false)
            + reads
            + ttl_reads
            + g("ping")
            + d.iter()
                .filter(|(k, _)| k.starts_with("client"))
                .map(|(_, v)| *v)
                .sum::<u64>();
        let out_bytes = info_f64(&net1, "total_net_output_bytes") - info_f64(&net0, "total_net_output_bytes");
        let in_bytes = info_f64(&net1, "total_net_input_bytes") - info_f64(&net0, "total_net_input_bytes");
        let (kmin, kmax) = crate::stats::minmax(&keys);
        let (imin, imax) = crate::stats::minmax(&items);
        drop(guards); // released in the background; the shutdown waits for them
        client.shutdown().await.unwrap();

        flushall(&mut a).await;
        json!({
            "mode": format!("{mode:?}"), "loss_signal": format!("{loss_signal:?}"), "locks": n, "renewing": renewing, "held_after": held, "period_s": period.as_secs_f64(),
            "window_s": window_s, "commands": d,
            "client_cmds_per_s": client_cmds as f64 / window_s,
            "evalsha_per_s": g("evalsha") as f64 / window_s,
            "holds_read_per_s": reads as f64 / window_s,
            "client_cpu_s_per_period": (cpu1 - cpu0) / periods,
            "server_cpu_s_per_period": (scpu1 - scpu0) / periods,
            "server_output_bytes_per_s": out_bytes / window_s,
            "server_input_bytes_per_s": in_bytes / window_s,
            "heap_bytes_per_lock": (low - heap0) as f64 / n as f64,
            "heap_bytes_per_lock_high": (high - heap0) as f64 / n as f64,
            "heap_bytes_per_lock_settled": (heap1 - heap0) as f64 / n as f64,
            "server_memory_bytes_per_lock": (mem1 - mem0) / n as f64,
            "tracking_keys_max": kmax, "tracking_keys_min": kmin,
            "tracking_items_max": imax, "tracking_items_min": imin,
            "tracking_prefixes": prefixes, "tracking_connections": tc1 - tc0,
        })
    }
}

/// Whether the server takes `PEXPIRE key ms GT` (Redis 7.0+): the renewal script then needs no
/// `PTTL` before it.
async fn pexpire_gt(conn: &mut redis::aio::ConnectionManager) -> bool {
    redis::cmd("PEXPIRE")
        .arg("bench:pexpire-gt-probe")
        .arg(1)
        .arg("GT")
        .query_async::<i64>(conn)
        .await
        .is_ok()
}
