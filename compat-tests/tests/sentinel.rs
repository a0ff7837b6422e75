//! Java Redisson (sentinel mode) and redisson-lock (`ClientBuilder::sentinel`) contend for the
//! same locks across a forced Sentinel failover (1 master, 2 replicas, 3 sentinels; real
//! processes). Both sides run with their default replica check (Redisson's
//! `checkLockSyncedSlaves`, ours `ReplicaSync::Auto` = `Required` on a sentinel client).
//!
//! Every critical section of both languages is recorded on one clock (Java's `System.nanoTime()`
//! is checked to be this machine's `CLOCK_MONOTONIC`) and checked for overlap. Replication is
//! asynchronous, so an overlap is possible around the switch; overlaps are counted and reported,
//! and any overlap outside the failover window fails the test, as does a side that cannot take
//! the locks after the failover.

// Shared with the crate's own tests; not ours to format (rustfmt would follow the path).
#[rustfmt::skip]
#[path = "../../tests/common/mod.rs"]
mod common;

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::topology::{Topology, MASTER};
use redisson_lock::Config;
use redisson_lock_compat_tests::{crate_dir, on_path, Harness};

const LOCKS: [&str; 2] = ["sentinel:hot:0", "sentinel:hot:1"];
/// How long both sides contend (the failover happens inside).
const RUN: Duration = Duration::from_secs(25);

fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[derive(Clone, Debug)]
struct Section {
    who: String,
    lock: String,
    start: u64,
    end: u64,
}

/// The jar for `version`, or `None` (with a loud message) when Java or Maven is missing outside CI.
fn jar(version: &str) -> Option<std::path::PathBuf> {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    if !(on_path("java") && on_path("mvn")) {
        assert!(!ci, "CI: java and mvn are required for the sentinel interop test");
        eprintln!("sentinel interop: SKIPPED (no java/mvn on PATH; set CI=true to make this a failure)");
        return None;
    }
    let out = Command::new(crate_dir().join("build-harness.sh"))
        .arg(version)
        .output()
        .expect("run build-harness.sh");
    assert!(
        out.status.success(),
        "build-harness.sh {version} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).trim().into())
}

/// Pairs of sections of the same lock, of different owners, that intersect.
fn overlaps(all: &[Section]) -> Vec<(Section, Section)> {
    let mut by_lock = all.to_vec();
    by_lock.sort_by(|a, b| (&a.lock, a.start).cmp(&(&b.lock, b.start)));
    let mut out = Vec::new();
    for (i, a) in by_lock.iter().enumerate() {
        for b in &by_lock[i + 1..] {
            if b.lock != a.lock || b.start >= a.end {
                break;
            }
            out.push((a.clone(), b.clone()));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_and_rust_contend_across_a_sentinel_failover() {
    common::init_tracing();
    let Some(jar) = jar("4.7.0") else { return };
    let t = Topology::start().await;
    let hosts: Vec<String> = t
        .sentinels
        .iter()
        .map(|s| format!("127.0.0.1:{}", s.port))
        .collect();
    let url = format!("redis-sentinel://{}/{MASTER}", hosts.join(","));
    let java = Harness::start(&jar, &url, 30_000, Duration::from_secs(60))
        .await
        .expect("Redisson in sentinel mode");
    // one clock: Java's nanoTime is CLOCK_MONOTONIC here
    let before = mono_ns();
    let clock = java
        .call("ctl", "clock", &[], Duration::from_secs(10))
        .await
        .unwrap();
    let after = mono_ns();
    let jn = clock.result["nanoTime"].as_u64().expect("nanoTime");
    assert!(
        before <= jn && jn <= after,
        "Java's System.nanoTime() is not CLOCK_MONOTONIC here ({before} <= {jn} <= {after})"
    );
    let rust = t
        .client(Config::default().with_sentinel_scan_interval(Duration::from_millis(200)))
        .await;

    let started = mono_ns();
    let names = LOCKS.join(",");
    let budget = RUN.as_millis().to_string();
    let mut pending = Vec::new();
    for w in ["j0", "j1"] {
        pending.push(
            java.send(w, "contend", &[&names, "0", "2", &budget])
                .await
                .unwrap(),
        );
    }
    let sections = Arc::new(Mutex::new(Vec::<Section>::new()));
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut tasks = Vec::new();
    for i in 0..2 {
        let (rust, sections, errors) = (rust.clone(), sections.clone(), errors.clone());
        tasks.push(tokio::spawn(async move {
            let until = Instant::now() + RUN;
            let mut n = 0u64;
            while Instant::now() < until {
                n += 1;
                let name = LOCKS[(n as usize + i) % LOCKS.len()];
                let lock = rust.lock(name).unwrap();
                match lock.try_lock_for(Duration::from_secs(5)).await {
                    Ok(Some(g)) => {
                        let start = mono_ns();
                        tokio::time::sleep(Duration::from_micros(n % 2000)).await;
                        let end = mono_ns();
                        sections.lock().unwrap().push(Section {
                            who: format!("rust:{i}"),
                            lock: name.into(),
                            start,
                            end,
                        });
                        if let Err(e) = g.unlock().await {
                            errors.lock().unwrap().push(format!("unlock: {e}"));
                        }
                        // leave Java's woken waiters a chance (they need a message round trip)
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                    Ok(None) => errors.lock().unwrap().push("try_lock_for(5 s) timed out".into()),
                    Err(e) => {
                        errors.lock().unwrap().push(format!("lock: {e}"));
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(4)).await;
    let old = t.master().await.expect("a master").port;
    let failover_at = mono_ns();
    let new_master = t.failover().await.0.port;
    let promoted_at = mono_ns();
    t.wait_demoted(old).await;
    let demoted_at = mono_ns();
    for task in tasks {
        task.await.unwrap();
    }
    let mut all = sections.lock().unwrap().clone();
    let mut java_outcomes = std::collections::BTreeMap::<String, usize>::new();
    for p in pending {
        let r = p.wait(RUN + Duration::from_secs(60)).await.unwrap();
        let r = r.into_ok().unwrap();
        let worker_names: Vec<String> = r["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_owned())
            .collect();
        for x in r["rounds"].as_array().unwrap() {
            *java_outcomes
                .entry(x["outcome"].as_str().unwrap_or("?").into())
                .or_default() += 1;
            if let (Some(s), Some(e)) = (x["start_ns"].as_u64(), x["end_ns"].as_u64()) {
                let k = x["lock"].as_u64().unwrap_or(0) as usize;
                all.push(Section {
                    who: format!("java:{}", r["threadId"]),
                    lock: worker_names[k].clone(),
                    start: s,
                    end: e,
                });
            }
        }
    }
    // two masters accept writes from the promotion until the old one is demoted
    let window_end = demoted_at + 3_000_000_000;
    let ov = overlaps(&all);
    let outside: Vec<_> = ov
        .iter()
        .filter(|(a, b)| {
            // the intersection [b.start, min(a.end, b.end)] lies wholly before or after the window
            let (from, to) = (b.start, a.end.min(b.end));
            to < failover_at || from > window_end
        })
        .collect();
    let rel = |ns: u64| (ns as f64 - promoted_at as f64) / 1e9;
    if let (Some(first), Some(last)) = (
        ov.iter().map(|(_, b)| b.start).min(),
        ov.iter().map(|(_, b)| b.start).max(),
    ) {
        eprintln!(
            "overlaps began {:+.2} s and ended {:+.2} s relative to the promotion (SENTINEL FAILOVER at {:+.2} s, old master demoted at {:+.2} s)",
            rel(first),
            rel(last),
            rel(failover_at),
            rel(demoted_at)
        );
    }
    let after = |who: &str| {
        all.iter()
            .filter(|s| s.who.starts_with(who) && s.start > window_end)
            .count()
    };
    let (java_after, rust_after) = (after("java:"), after("rust:"));
    let cross = ov.iter().filter(|(a, b)| a.who[..4] != b.who[..4]).count();
    let errors = errors.lock().unwrap().clone();
    eprintln!(
        "sentinel failover to port {new_master}: promoted {:.1} s after SENTINEL FAILOVER, old master demoted {:.1} s after; {} sections ({} Java, {} Rust), \
         after the failover window {java_after} Java + {rust_after} Rust; overlaps {} ({cross} Java/Rust), outside the window {}; \
         Java outcomes {java_outcomes:?}; Rust errors {} {:?}; run {:.1} s",
        (promoted_at - failover_at) as f64 / 1e9,
        (demoted_at - failover_at) as f64 / 1e9,
        all.len(),
        all.iter().filter(|s| s.who.starts_with("java:")).count(),
        all.iter().filter(|s| s.who.starts_with("rust:")).count(),
        ov.len(),
        outside.len(),
        errors.len(),
        errors.iter().take(5).collect::<Vec<_>>(),
        (mono_ns() - started) as f64 / 1e9,
    );
    if java_after == 0 || rust_after == 0 {
        let node = t.nodes.iter().find(|n| n.port == new_master).unwrap();
        let mut c = node.conn().await;
        for l in LOCKS {
            let h: Vec<String> = redis::cmd("HGETALL")
                .arg(l)
                .query_async(&mut c)
                .await
                .unwrap_or_default();
            let ttl: i64 = redis::cmd("PTTL").arg(l).query_async(&mut c).await.unwrap_or(-3);
            eprintln!("after the run on the new master: {l} = {h:?}, PTTL {ttl}");
        }
        eprintln!("rust client: {:?}", rust.stats());
    }
    assert!(
        outside.is_empty(),
        "overlaps outside the failover window: {outside:?}"
    );
    // Liveness: nothing is stuck after the failover. Right after it both sides may spend seconds
    // refusing acquisitions while the replicas resynchronise (both check synced replicas), so
    // this asks each side to take and release every lock within 30 s, not to have made progress
    // inside the run.
    for name in LOCKS {
        let t0 = Instant::now();
        let got = java
            .call("ctl", "tryLock", &[name, "30000"], Duration::from_secs(40))
            .await
            .unwrap()
            .bool()
            .unwrap();
        assert!(got, "Java could not take {name} within 30 s after the failover");
        java.call("ctl", "unlock", &[name], Duration::from_secs(10))
            .await
            .unwrap()
            .into_ok()
            .unwrap();
        let g = rust
            .lock(name)
            .unwrap()
            .try_lock_for(Duration::from_secs(30))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("Rust could not take {name} within 30 s after the failover"));
        g.unlock().await.unwrap();
        eprintln!(
            "after the run: Java and Rust each took and released {name} in {:?}",
            t0.elapsed()
        );
    }
    rust.shutdown().await.unwrap();
    java.exit(Duration::from_secs(10)).await.unwrap();
}
