//! The soak's memory watch: every few seconds of phase A, the worker processes' resident memory
//! (`VmRSS`), the JVM's, and the server's `used_memory`, key count, pub/sub channels and
//! connected clients; then a verdict per series (does it grow without bound?), a table and
//! sparklines for the report, and the samples as CSV.
//!
//! A series grows without bound when the median of the run's last third exceeds the median of
//! its middle third by more than both a floor (allocator and JIT noise, a few more channels at
//! one moment) and a tenth of the middle third's median. The first third is left out: caches,
//! connection pools and the JVM's heap fill up then. The JVM's memory is Redisson's and the
//! JVM's: reported, not judged.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::common::faults::{admin_conn, info_field};
use super::common::history::now_ns;

/// One reading.
#[derive(Clone, Debug, Default)]
pub(super) struct MemorySample {
    /// `CLOCK_MONOTONIC` ns.
    pub(super) t: u64,
    /// Sum of the worker processes' `VmRSS`, KiB.
    pub(super) workers_rss_kib: u64,
    /// The JVM's `VmRSS`, KiB (0: no JVM).
    pub(super) java_rss_kib: u64,
    /// `INFO memory` `used_memory`, bytes (`None`: the server did not answer then).
    pub(super) used_memory: Option<u64>,
    pub(super) keys: Option<u64>,
    /// Classic and sharded pub/sub channels with subscribers.
    pub(super) channels: Option<u64>,
    pub(super) clients: Option<u64>,
}

/// Samples in the background until stopped.
pub(super) struct MemoryWatch {
    task: tokio::task::JoinHandle<Vec<MemorySample>>,
    stop: Arc<AtomicBool>,
}

/// `VmRSS` of process `pid`, KiB (0 once it is gone).
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

impl MemoryWatch {
    /// Reads every `every`; `url` is the server itself (not a proxy).
    pub(super) fn spawn(url: String, workers: Vec<u32>, java: Option<u32>, every: Duration) -> MemoryWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let task = tokio::spawn(async move {
            let mut out = Vec::new();
            while !stop2.load(Ordering::Relaxed) {
                let mut s = MemorySample {
                    t: now_ns(),
                    workers_rss_kib: workers.iter().map(|&p| rss_kib(p)).sum(),
                    java_rss_kib: java.map_or(0, rss_kib),
                    ..MemorySample::default()
                };
                if let Ok(mut c) = admin_conn(&url, Some(Duration::from_secs(2))).await {
                    let mut p = redis::pipe();
                    p.cmd("INFO").arg("memory");
                    p.cmd("DBSIZE");
                    p.cmd("PUBSUB").arg("NUMSUB");
                    p.cmd("PUBSUB").arg("CHANNELS");
                    p.cmd("PUBSUB").arg("SHARDCHANNELS");
                    p.cmd("INFO").arg("clients");
                    if let Ok((mem, keys, _, ch, sch, clients)) = p
                        .query_async::<(String, u64, redis::Value, Vec<String>, Vec<String>, String)>(&mut c)
                        .await
                    {
                        s.used_memory = info_field(&mem, "used_memory").and_then(|v| v.parse().ok());
                        s.keys = Some(keys);
                        s.channels = Some((ch.len() + sch.len()) as u64);
                        // less this sampler's own connection
                        s.clients = info_field(&clients, "connected_clients")
                            .and_then(|v| v.parse::<u64>().ok())
                            .map(|n| n.saturating_sub(1));
                    }
                }
                out.push(s);
                let deadline = tokio::time::Instant::now() + every;
                while tokio::time::Instant::now() < deadline && !stop2.load(Ordering::Relaxed) {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
            out
        });
        MemoryWatch { task, stop }
    }

    pub(super) async fn stop(self) -> Vec<MemorySample> {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.expect("the memory watch panicked")
    }
}

/// One series' verdict.
#[derive(Clone, Debug)]
pub(super) struct Growth {
    pub(super) series: &'static str,
    pub(super) unit: &'static str,
    pub(super) judged: bool,
    pub(super) first: Option<u64>,
    pub(super) middle: Option<u64>,
    pub(super) last: Option<u64>,
    pub(super) max: Option<u64>,
    /// Grows without bound (only for judged series).
    pub(super) unbounded: bool,
}

/// The series: name, unit, judged, floor of a growth that counts, value of a sample.
type Series = (
    &'static str,
    &'static str,
    bool,
    u64,
    fn(&MemorySample) -> Option<u64>,
);

const SERIES: [Series; 6] = [
    ("Rust workers' RSS (sum)", "KiB", true, 16 * 1024, |s| {
        Some(s.workers_rss_kib).filter(|v| *v > 0)
    }),
    ("JVM RSS (Redisson)", "KiB", false, 0, |s| {
        Some(s.java_rss_kib).filter(|v| *v > 0)
    }),
    ("redis used_memory", "bytes", true, 4 * 1024 * 1024, |s| {
        s.used_memory
    }),
    ("redis keys", "", true, 100, |s| s.keys),
    ("pub/sub channels", "", true, 50, |s| s.channels),
    ("connected clients", "", true, 20, |s| s.clients),
];

fn median(mut v: Vec<u64>) -> Option<u64> {
    v.sort_unstable();
    v.get(v.len() / 2).copied()
}

/// The verdict of every series.
pub(super) fn growth(samples: &[MemorySample]) -> Vec<Growth> {
    let third = samples.len() / 3;
    SERIES
        .iter()
        .map(|&(series, unit, judged, floor, value)| {
            let part = |r: std::ops::Range<usize>| median(samples[r].iter().filter_map(value).collect());
            let (first, middle, last) = if third == 0 {
                (None, None, None)
            } else {
                (
                    part(0..third),
                    part(third..2 * third),
                    part(2 * third..samples.len()),
                )
            };
            let unbounded = judged
                && match (middle, last) {
                    (Some(m), Some(l)) => l > m && l - m > floor.max(m / 10),
                    _ => false,
                };
            Growth {
                series,
                unit,
                judged,
                first,
                middle,
                last,
                max: samples.iter().filter_map(value).max(),
                unbounded,
            }
        })
        .collect()
}

/// Eight-level sparkline of `values`, at most `width` characters (each the mean of its bucket).
fn sparkline(values: &[u64], width: usize) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    if values.is_empty() {
        return String::new();
    }
    let per = values.len().div_ceil(width);
    let buckets: Vec<u64> = values
        .chunks(per)
        .map(|c| c.iter().sum::<u64>() / c.len() as u64)
        .collect();
    let (lo, hi) = (*buckets.iter().min().unwrap(), *buckets.iter().max().unwrap());
    buckets
        .iter()
        .map(|&v| {
            if hi == lo {
                BARS[0]
            } else {
                BARS[((v - lo) * 7 / (hi - lo)) as usize]
            }
        })
        .collect()
}

fn show(v: Option<u64>, unit: &str) -> String {
    match (v, unit) {
        (None, _) => "–".into(),
        (Some(v), "KiB") => format!("{:.1} MiB", v as f64 / 1024.0),
        (Some(v), "bytes") => format!("{:.2} MiB", v as f64 / 1048576.0),
        (Some(v), _) => v.to_string(),
    }
}

/// The report's section: the verdicts, a sparkline per series, and a reading every minute.
pub(super) fn markdown(samples: &[MemorySample], t0: u64, csv_path: &std::path::Path) -> String {
    let mut o = String::new();
    let verdicts = growth(samples);
    let span = samples.last().map_or(0.0, |s| (s.t - samples[0].t) as f64 / 60e9);
    let _ = writeln!(
        o,
        "## Memory over the soak\n\n{} readings over {span:.1} min (phase A); the medians of each third of the run, \
         and a sparkline (low to high within the series). A judged series fails when its last third's median exceeds \
         its middle third's by more than its floor and a tenth. All readings: `{}`.\n",
        samples.len(),
        csv_path.display()
    );
    let _ = writeln!(
        o,
        "| series | first third | middle third | last third | max | over the run | verdict |"
    );
    let _ = writeln!(o, "|---|---:|---:|---:|---:|---|---|");
    for (g, (_, _, _, _, value)) in verdicts.iter().zip(SERIES.iter()) {
        let values: Vec<u64> = samples.iter().filter_map(value).collect();
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | `{}` | {} |",
            g.series,
            show(g.first, g.unit),
            show(g.middle, g.unit),
            show(g.last, g.unit),
            show(g.max, g.unit),
            sparkline(&values, 60),
            match (g.judged, g.unbounded) {
                (false, _) => "reported",
                (true, false) => "bounded",
                (true, true) => "**GROWS**",
            }
        );
    }
    let _ = writeln!(
        o,
        "\n| min | workers' RSS | JVM RSS | used_memory | keys | channels | clients |"
    );
    let _ = writeln!(o, "|---:|---:|---:|---:|---:|---:|---:|");
    let mut next_min = 0u64;
    for s in samples {
        let min = s.t.saturating_sub(t0) / 60_000_000_000;
        if min < next_min {
            continue;
        }
        next_min = min + 1;
        let _ = writeln!(
            o,
            "| {min} | {} | {} | {} | {} | {} | {} |",
            show(Some(s.workers_rss_kib), "KiB"),
            show(Some(s.java_rss_kib).filter(|v| *v > 0), "KiB"),
            show(s.used_memory, "bytes"),
            show(s.keys, ""),
            show(s.channels, ""),
            show(s.clients, "")
        );
    }
    o
}

/// The readings as CSV (seconds since `t0`).
pub(super) fn csv(samples: &[MemorySample], t0: u64) -> String {
    let mut o = String::from("seconds,workers_rss_kib,java_rss_kib,used_memory,keys,channels,clients\n");
    let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
    for s in samples {
        let _ = writeln!(
            o,
            "{:.1},{},{},{},{},{},{}",
            s.t.saturating_sub(t0) as f64 / 1e9,
            s.workers_rss_kib,
            s.java_rss_kib,
            opt(s.used_memory),
            opt(s.keys),
            opt(s.channels),
            opt(s.clients)
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(rss: impl Fn(usize) -> u64) -> Vec<MemorySample> {
        (0..90)
            .map(|i| MemorySample {
                t: i as u64 * 10_000_000_000,
                workers_rss_kib: rss(i),
                used_memory: Some(2_000_000),
                keys: Some(12),
                channels: Some(6),
                clients: Some(20),
                ..MemorySample::default()
            })
            .collect()
    }

    #[test]
    fn steady_or_noisy_memory_is_bounded_and_a_leak_is_not() {
        let flat = growth(&samples(|i| 60_000 + (i as u64 % 7) * 500));
        assert!(flat.iter().all(|g| !g.unbounded), "{flat:?}");
        // 1 MiB more every reading: a leak
        let leak = growth(&samples(|i| 60_000 + i as u64 * 1024));
        assert!(leak[0].unbounded, "{leak:?}");
        assert!(leak[1..].iter().all(|g| !g.unbounded));
        // a jump in the first third only (pools filling up) is not growth
        let warm = growth(&samples(|i| if i < 20 { 40_000 } else { 90_000 }));
        assert!(!warm[0].unbounded, "{warm:?}");
    }
}
