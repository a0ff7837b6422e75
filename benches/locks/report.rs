//! The generated top of `REPORT.md`: the summary table and the "Reading" under it.

use std::fmt::Write as _;

use serde_json::Value;

use crate::stats::{fmt_s, minmax, us, verdict};

/// The headline table: each measurement's ratio against its target.
pub(crate) fn summary(j: &serde_json::Map<String, Value>, target_us: f64) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "| measurement | result | target | verdict |");
    let _ = writeln!(s, "|---|---|---|---|");
    let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    if let Some(u) = j.get("uncontended") {
        let r = f(&u["ratio_acquire_vs_floor"]);
        let _ = writeln!(
            s,
            "| 1. acquire latency vs 1 × EVALSHA | {r:.2}× | ≤ 1.05× | {} |",
            verdict(r <= 1.05)
        );
        let r2 = f(&u["ratio_acq_rel_vs_floor"]);
        let _ = writeln!(
            s,
            "| 1. acquire + release vs 2 × EVALSHA | {r2:.2}× | ≤ 1.05× | {} |",
            verdict(r2 <= 1.05)
        );
    }
    if let Some(Value::Object(t)) = j.get("throughput") {
        for (c, v) in t {
            let r = f(&v["ratio_ours_vs_floor"]);
            let _ = writeln!(
                s,
                "| 2. throughput, {c} tasks, vs raw EVALSHA pairs | {r:.2}× | ≥ 0.9× | {} |",
                verdict(r >= 0.9)
            );
            let cpu = f(&v["ratio_client_cpu_ours_vs_floor"]);
            let _ = writeln!(
                s,
                "| 2. client CPU per lock + unlock, {c} tasks, vs raw EVALSHA pairs | {cpu:.2}× | ≤ 1.2× | {} |",
                verdict(cpu <= 1.2)
            );
            let rj = f(&v["ratio_ours_vs_redisson"]);
            if rj.is_finite() {
                let _ = writeln!(
                    s,
                    "| 2. throughput, {c} tasks, ours vs Redisson | {rj:.2}× | ≥ 2.5× | {} |",
                    verdict(rj >= 2.5)
                );
            }
        }
    }
    if let Some(Value::Object(h)) = j.get("handoff") {
        for (k, v) in h {
            if let Some(w) = k.strip_prefix("ours/") {
                let p = f(&v["latency"]["p50"]);
                let _ = writeln!(
                    s,
                    "| 3. handoff p50, {w} waiters | {} ({:.2}× the target) | ≤ {} | {} |",
                    us(p),
                    p / target_us,
                    us(target_us),
                    verdict(p <= target_us)
                );
                let n = v["handoffs_counted"].as_f64().unwrap_or(f64::NAN);
                let e = v["commands"]["evalsha"].as_f64().unwrap_or(0.0) / n;
                let _ = writeln!(
                    s,
                    "| 3. EVALSHA per handoff, {w} waiters | {e:.2} | ≤ 3 | {} |",
                    verdict(e <= 3.05)
                );
            }
        }
    }
    if let Some(Value::Object(w)) = j.get("watchdog") {
        for (n, v) in w {
            let calls = f(&v["calls_per_round"]);
            let n: f64 = n.parse().unwrap_or(f64::NAN);
            let bytes = f(&v["heap_bytes_per_lock"]);
            let _ = writeln!(
                s,
                "| 4. watchdog, {n} locks: renewal calls per round | {calls:.0} | ≤ {:.0} | {} |",
                (n / 100.0).ceil(),
                verdict(calls <= (n / 100.0).ceil())
            );
            let _ = writeln!(
                s,
                "| 4. watchdog, {n} locks: client heap / lock | {bytes:.0} B | ≤ 256 B | {} |",
                verdict(bytes <= 256.0)
            );
        }
    }
    if let Some(m) = j.get("many_waited") {
        let left = m["subscriptions_left_server"].as_u64().unwrap_or(u64::MAX)
            + m["subscriptions_left_client"].as_u64().unwrap_or(u64::MAX);
        let _ = writeln!(
            s,
            "| 5. {} waited locks: subscriptions held / left | {} / {left} | {} / 0 | {} |",
            m["locks"],
            m["subscriptions_server"],
            m["locks"],
            verdict(left == 0)
        );
        let cmds = f(&m["waiting_cmds_per_s"]);
        let _ = writeln!(
            s,
            "| 5. {} waiters on held locks: commands/s while they wait | {cmds:.0} | ≤ 500 | {} |",
            m["locks"],
            verdict(cmds <= 500.0)
        );
        let _ = writeln!(
            s,
            "| 5. wake all after release (vs the release pass alone) | {} ({:.2}×) | – | – |",
            fmt_s(f(&m["wake_all_s"])),
            f(&m["wake_all_s"]) / f(&m["release_only_s"])
        );
    }
    s.push_str(&reading(j, target_us));
    s
}

/// "What limits us": a short reading generated from this run's numbers (the causes named are
/// from reading the crate's code; the split between them is what this run measured).
pub(crate) fn reading(j: &serde_json::Map<String, Value>, target_us: f64) -> String {
    let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let mut s = String::from("\n### Reading\n\n");
    if let Some(u) = j.get("uncontended") {
        let floor = f(&u["floor_acq"]["p50"]);
        let spawn = f(&u["floor_spawn_acq"]["p50"]);
        let ours = f(&u["ours_acq"]["p50"]);
        let rs = f(&u["rslock_acq"]["p50"]);
        // the summary's ratio: the median of per-repeat ratios
        let r = f(&u["ratio_acquire_vs_floor"]);
        let _ = write!(
            s,
            "* **Acquire** costs {r:.2}× one raw EVALSHA (pooled p50s {} apart). ",
            us((ours - floor).abs())
        );
        if r > 1.05 {
            let _ = writeln!(
                s,
                "For scale, the floor plus one spawned task + oneshot hand-over measures {:.2}× here (`LockCore::attempt` \
                 neither spawns nor boxes: a request dropped in flight is settled in the background only on cancel). The client's own \
                 work per acquire is a few µs: the wait-loop entry, the owner field and the field's turn in the \
                 hold table, the TTL, latch and request before the send, recording the grant after it \
                 (benches/PROFILE.md has the CPU by function); the per-repeat spread shows how much of the rest is \
                 the noise of a shared 2-core machine. rslock's `SET NX PX` ({}) is below the floor because a \
                 plain SET is cheaper for Redis than a script.",
                spawn / floor,
                us(rs)
            );
        } else {
            s.push_str("Within the target.\n");
        }
        let ar = f(&u["ratio_acq_rel_vs_floor"]);
        let _ = writeln!(
            s,
            "* **Acquire + release** costs {ar:.2}× two raw EVALSHAs: besides the acquire overhead, each unlock hands \
             its latch key to the client's janitor (src/latch_janitor.rs), which deletes what queued up in 5 ms with one \
             `DEL`."
        );
    }
    if let Some(Value::Object(t)) = j.get("throughput") {
        let mut misses = Vec::new();
        for (c, v) in t {
            let r = f(&v["ratio_ours_vs_floor"]);
            if r >= 0.9 {
                continue;
            }
            let dels = f(&v["cpu"]["ours"]["client_del_per_op"]);
            let fc = f(&v["cpu"]["floor"]["client_us_per_op"]);
            let oc = f(&v["cpu"]["ours"]["client_us_per_op"]);
            let fs = f(&v["cpu"]["floor"]["server_us_per_op"]);
            let os = f(&v["cpu"]["ours"]["server_us_per_op"]);
            let why = if dels >= 0.5 {
                format!(
                    "our janitor still sends {dels:.2} latch `DEL`s per op here (unlocks too sparse to batch); the \
                     diagnostic floor with one background `DEL` per op reaches {:.2}× of the floor, so that extra \
                     command is most of the gap",
                    f(&v["ratio_floor_del_vs_floor"])
                )
            } else {
                format!(
                    "not extra commands (only {dels:.2} latch `DEL`s per op, the janitor batches them) but CPU: \
                     client {fc:.0} → {oc:.0} µs and server {fs:.0} → {os:.0} µs per op, on 2 cores that client, \
                     server and other work share, so the spread over repeats is wide ({})",
                    {
                        let arr = |k: &str| -> Vec<f64> {
                            v["ops_per_s"][k].as_array().map(|a| a.iter().filter_map(|x| x.as_f64()).collect()).unwrap_or_default()
                        };
                        let per: Vec<f64> = arr("ours").iter().zip(arr("floor")).map(|(x, y)| x / y).collect();
                        let (lo, hi) = minmax(&per);
                        format!("{lo:.2}–{hi:.2}")
                    }
                )
            };
            misses.push(format!("{r:.2}× at C = {c}: {why}"));
        }
        let cpu_ratios: Vec<String> = t
            .iter()
            .map(|(c, v)| format!("{:.2}× at C = {c}", f(&v["ratio_client_cpu_ours_vs_floor"])))
            .collect();
        // per concurrency: (C, floor / Redisson, ours / Redisson)
        let vs_redisson: Vec<(String, f64, f64)> = t
            .iter()
            .filter(|(_, v)| f(&v["ratio_ours_vs_redisson"]).is_finite())
            .map(|(c, v)| {
                (
                    c.clone(),
                    1.0 / f(&v["ratio_redisson_vs_floor"]),
                    f(&v["ratio_ours_vs_redisson"]),
                )
            })
            .collect();
        let _ = writeln!(
            s,
            "* **Client CPU** per lock + unlock against the raw pairs': {}. Where it goes (perf, frame pointers, \
             ours and the floor side by side): [PROFILE.md](PROFILE.md), from `scripts/profile`.",
            cpu_ratios.join(", ")
        );
        if !vs_redisson.is_empty() {
            let bounded: Vec<String> = vs_redisson
                .iter()
                .filter(|(_, fr, _)| *fr < 2.5)
                .map(|(c, fr, _)| format!("{fr:.2}× at C = {c}"))
                .collect();
            let ours_short: Vec<String> = vs_redisson
                .iter()
                .filter(|(_, fr, or)| *fr >= 2.5 && *or < 2.5)
                .map(|(c, fr, or)| format!("at C = {c} the floor does {fr:.2}× Redisson and we do {or:.2}×"))
                .collect();
            if !bounded.is_empty() {
                let _ = writeln!(
                    s,
                    "* **Against Redisson** the ceiling is the floor itself where the raw EVALSHA pairs of our \
                     scripts do less than 2.5× Redisson's throughput on this machine ({}): a client cannot go faster \
                     than the raw calls it makes. On 2 cores shared by redis-server, the JVM and this process, both \
                     the server's CPU per op (the scripts, including the latch each acquire and unlock writes so \
                     that a lost reply can be settled and a retried unlock is never applied twice) and the client's \
                     count.",
                    bounded.join(", ")
                );
            }
            // at one task both clients make two sequential round trips: what 2.5x Redisson
            // would take, against this machine's plain PING round trip
            let ping = j.get("uncontended").map_or(f64::NAN, |u| f(&u["ping"]["p50"]));
            let redisson_1 = t
                .get("1")
                .and_then(|v| v["ops_per_s"]["redisson"].as_array())
                .map(|a| {
                    let v: Vec<f64> = a.iter().filter_map(Value::as_f64).collect();
                    crate::stats::p50(&v)
                })
                .unwrap_or(f64::NAN);
            if ping.is_finite() && redisson_1.is_finite() && redisson_1 > 0.0 {
                let need_us = 1e6 / (2.5 * redisson_1);
                let _ = writeln!(
                    s,
                    "  At C = 1, 2.5× Redisson's {redisson_1:.0} lock + unlock/s is {:.0}/s: {need_us:.0} µs per lock + \
                     unlock, i.e. two requests in sequence of {:.0} µs each, {} the {ping:.0} µs of a plain `PING` \
                     round trip through redis-rs here ({:.2}× of it).",
                    2.5 * redisson_1,
                    need_us / 2.0,
                    if need_us / 2.0 < ping { "below" } else { "against" },
                    need_us / 2.0 / ping
                );
            }
            if !ours_short.is_empty() {
                let _ = writeln!(
                    s,
                    "* **Against Redisson**, {}: there the gap is ours, the client CPU per op above.",
                    ours_short.join("; ")
                );
            }
        }
        if misses.is_empty() {
            let _ = writeln!(
                s,
                "* **Throughput** meets ≥ 0.9× of the raw EVALSHA pairs at every concurrency."
            );
        } else {
            let _ = writeln!(
                s,
                "* **Throughput** misses the 0.9× target at {}. Every µs of client CPU per op (see PROFILE.md) is \
                 also taken from Redis on this machine.",
                misses.join("; ")
            );
        }
    }
    if let Some(Value::Object(h)) = j.get("handoff") {
        let mut worst: f64 = 0.0;
        let mut evals = Vec::new();
        for (k, v) in h {
            if let Some(w) = k.strip_prefix("ours/") {
                let p = f(&v["latency"]["p50"]);
                worst = worst.max(p);
                let n = v["handoffs_counted"].as_f64().unwrap_or(f64::NAN);
                let e = v["commands"]["evalsha"].as_f64().unwrap_or(0.0) / n;
                evals.push(format!("{e:.1} at {w}"));
            }
        }
        let wmax = h
            .keys()
            .filter_map(|k| k.strip_prefix("ours/"))
            .filter_map(|w| w.parse::<f64>().ok())
            .fold(0.0, f64::max);
        let pmax = h
            .get(&format!("ours/{wmax}"))
            .map(|v| f(&v["latency"]["p50"]))
            .unwrap_or(f64::NAN);
        let _ = write!(
            s,
            "* **Handoff**: the worst p50 is {} against a target of {} ({}). EVALSHA per handoff: {} waiters. \
             One handoff is the unlock, one wake-up (message `0` → `notify_one`: one local waiter, no herd) and the \
             winner's acquire; the previous holder re-queueing adds one attempt: it finds the channel subscribed by \
             the other local waiters and listens before that attempt, so it needs no second one after subscribing \
             (Redisson: 4). With one waiter the channel is sometimes already unsubscribed when the holder re-queues \
             (it then subscribes and re-tries once). Waiters do not poll while subscribed (they sleep the holder's \
             TTL), so nothing grows with the number of waiters ({wmax:.0} here, p50 {}). ",
            us(worst),
            us(target_us),
            verdict(worst <= target_us),
            evals.join(", "),
            us(pmax),
        );
        if let Some(rs1) = h.get("rslock/1") {
            let _ = write!(
                s,
                "rslock's p50 with 1 waiter is {}: it only polls (a random 0–200 ms delay between tries); with many \
                 waiters the lock is found free sooner, paid for in commands (see the table).",
                us(f(&rs1["latency"]["p50"]))
            );
        }
        s.push('\n');
    }
    if let Some(Value::Object(w)) = j.get("watchdog") {
        for (n, v) in w {
            let _ = writeln!(
                s,
                "* **Watchdog, {n} locks**: {:.0} renewal calls per period (batches of {:.0}), {:.1} ms client CPU per \
                 period ({:.2}× a raw renewal round of the same calls), {:.0} B of heap per held lock.",
                f(&v["calls_per_round"]),
                f(&v["locks_per_call"]),
                f(&v["client_cpu_s_per_period"]) * 1e3,
                f(&v["client_cpu_s_per_period"]) / f(&v["raw_round_cpu_s"]),
                f(&v["heap_bytes_per_lock"])
            );
            if f(&v["heap_bytes_per_lock"]) > 256.0 {
                let _ = writeln!(
                    s,
                    "  Over the 256 B target: per held lock the client keeps one hold record (src/lease.rs \
                     `Lease`: field, epoch state, deadline, hold counts, turn), the key and field strings and a slot \
                     of the hold table's map, which doubles as N grows."
                );
            } else {
                let _ = writeln!(
                    s,
                    "  Per held lock the client keeps one hold record (src/lease.rs `Lease`, 96 B: field, epoch \
                     state, deadline, hold counts, turn, shared by the guard, the table and the watchdog), the key \
                     and owner-field strings (shared, 32 + 56 B here) and a 32 B slot of the hold table's map \
                     (more per lock right after the map doubles)."
                );
            }
        }
    }
    if let Some(m) = j.get("many_waited") {
        let _ = writeln!(
            s,
            "* **{} waited locks**: one subscription per lock while waiting, {} left afterwards. While they wait, \
             the clients send {:.0} commands/s ({:.0} EVALSHA/s): each subscribed waiter sleeps until the holder's TTL \
             runs out (at most `subscribed_poll_interval`, 30 s), as Redisson's do, and one batched call per 1,000 \
             waited-on keys per `poll_interval` looks for locks deleted without a message. Waking all of them takes \
             {:.2}× the release pass alone: every wake-up is one more EVALSHA on the same connection.",
            m["locks"],
            m["subscriptions_left_server"],
            f(&m["waiting_cmds_per_s"]),
            f(&m["waiting_evalsha_per_s"]),
            f(&m["wake_all_s"]) / f(&m["release_only_s"])
        );
        if let Some(rows) = m["recoveries"].as_array() {
            for r in rows {
                let _ = writeln!(
                    s,
                    "  * Recovery, {}: p50 {}, max {}.",
                    r["scenario"].as_str().unwrap_or("?"),
                    us(f(&r["p50_us"])),
                    us(f(&r["max_us"]))
                );
            }
        }
    }
    s
}
