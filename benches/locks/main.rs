//! `cargo bench --bench locks`: our locks against the physical floor, a Rust peer (rslock) and
//! Redisson, in one run against one private redis-server. `scripts/bench` is the way to run it:
//! it starts redis-server, builds the Java harness and calls this program in release mode.
//!
//! Environment:
//! * `BENCH_REDIS_URL`: the Redis to use (it must be private to the run: INFO deltas are read).
//!   Without it this program starts its own redis-server on a free loopback port.
//! * `BENCH_HARNESS_JAR`: the compat-tests harness jar (Redisson); unset or missing = skipped,
//!   with `BENCH_JAVA_SKIP` as the reason printed in the report.
//! * `BENCH_SCALE`: `full` (default) or `quick` (small counts while developing).
//! * `BENCH_OUT`: output directory (default `benches/` for full runs, `benches/out/` for quick).
//! * `BENCH_COMMAND`: the command line shown in the report.
//! * While developing: `BENCH_SECTIONS` (e.g. `latency,throughput`; default all),
//!   `BENCH_TP_ROUNDS`, `BENCH_TP_MS`, `BENCH_TP_C` (e.g. `256`) override the throughput
//!   section's repeats, run time and concurrencies (`BENCH_TP_LOSS=renewal`: ours without the
//!   loss watch); `BENCH_SC_ROUNDS`, `BENCH_SC_MS`, `BENCH_SC_PARTS`
//!   (some of `lock_unlock,handoff,held`) the server cost section's rounds, run time per cell
//!   and parts. A report made with them is partial.
//!
//! Every figure is a ratio against a baseline measured in the same run, with p50/p99 and the
//! spread (min–max of per-repeat ratios) over repeats. Outputs: `REPORT.md`, `summary.json`
//! (every figure without the per-iteration samples: small, committed), `handoff.svg`, and
//! `raw/results.json` (everything, samples included; git-ignored).
//!
//! Layout (`benches/locks/`):
//! * `main.rs`: `main`, the run (order of the sections, outputs) and the report's header.
//! * `scale.rs`: the `full` and `quick` counts.
//! * `sections/`: the measurements, one `impl Bench` per report section: `latency.rs` (1),
//!   `throughput.rs` (2), `handoff.rs` (3), `watchdog.rs` (4), `many_waited.rs` (5),
//!   `replica_sync.rs` (6), `loss_signal.rs` (7), `server_cost.rs` (8); `mod.rs` holds `Bench`,
//!   the state they share.
//! * `systems.rs`: the systems under test behind one interface (`Sys`: floor, ours, rslock).
//! * `raw.rs`: the floor, our Lua scripts as raw EVALSHA (acquire/release, a renewal round).
//! * `jvm.rs`: the Redisson peer, the compat-tests harness jar driven over stdin/stdout.
//! * `sysinfo.rs`: redis-server INFO / commandstats / PUBSUB, process CPU and RSS from `/proc`.
//! * `alloc.rs`: the counting global allocator (live heap bytes).
//! * `stats.rs`: percentiles, per-repeat distributions, ratios, number formatting.
//! * `plot.rs`: `handoff.svg`.
//! * `report.rs`: the summary table and the "Reading" at the top of `REPORT.md`.
//! * `report_cost.rs`: section 8's tables, summary rows and reading.
//! * `summary.rs`: `summary.json`, the run's figures without the samples.
//! * `common` is the test suite's redis-server harness, `tests/common/mod.rs`.

// The test suite's redis-server harness (free loopback port, killed on drop).
#[rustfmt::skip]
#[path = "../../tests/common/mod.rs"]
mod common;

mod alloc;
mod jvm;
mod plot;
mod raw;
mod report;
mod report_cost;
mod scale;
mod sections;
mod stats;
mod summary;
mod sysinfo;
mod systems;

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};

use crate::jvm::Jvm;
use crate::plot::svg_plot;
use crate::raw::Raw;
use crate::report::summary;
use crate::scale::Scale;
use crate::sections::Bench;
use crate::summary::summary_json;
use crate::sysinfo::{clk_tck, flushall, info, machine, proc_cpu, start_own_server};

fn main() {
    let mut scale = match std::env::var("BENCH_SCALE").as_deref() {
        Ok("quick") => Scale::quick(),
        _ => Scale::full(),
    };
    scale.override_from_env();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run(scale));
}

static RUN_START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

async fn run(scale: Scale) {
    let started = Instant::now();
    let _ = RUN_START.set(started);
    let (url, _own) = match std::env::var("BENCH_REDIS_URL") {
        Ok(u) if !u.is_empty() => (u, None),
        _ => {
            let (u, s) = start_own_server();
            (u, Some(s))
        }
    };
    let out_dir = std::env::var("BENCH_OUT").unwrap_or_else(|_| {
        let base = concat!(env!("CARGO_MANIFEST_DIR"), "/benches");
        if scale.name == "quick" {
            format!("{base}/out")
        } else {
            base.to_owned()
        }
    });
    std::fs::create_dir_all(&out_dir).unwrap();
    eprintln!("bench: scale {} against {url}; writing {out_dir}", scale.name);

    let mut admin = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection_manager()
        .await
        .unwrap();
    flushall(&mut admin).await;
    let server = info(&mut admin, "server").await;
    // Valkey says its own version beside the Redis version it is compatible with
    let redis_version = match server.get("valkey_version") {
        Some(v) => format!("Valkey {v}"),
        None => format!(
            "Redis {}",
            server.get("redis_version").cloned().unwrap_or_default()
        ),
    };

    let (jvm, java_note) = match std::env::var("BENCH_HARNESS_JAR") {
        Ok(jar) if std::path::Path::new(&jar).is_file() => match Jvm::start(&jar, &url) {
            Ok(j) => {
                let note = format!(
                    "Redisson {} (compat-tests harness, OpenJDK in a separate JVM)",
                    j.version
                );
                (Some(Arc::new(std::sync::Mutex::new(j))), note)
            }
            Err(e) => (None, format!("Redisson skipped: {e}")),
        },
        _ => (
            None,
            format!(
                "Redisson skipped: {}",
                std::env::var("BENCH_JAVA_SKIP")
                    .unwrap_or_else(|_| "no harness jar (BENCH_HARNESS_JAR unset; run scripts/bench)".into())
            ),
        ),
    };
    eprintln!("bench: {java_note}");
    let raw = Raw::new(&url).await;
    let mut b = Bench {
        url: url.clone(),
        scale: scale.clone(),
        admin,
        raw,
        jvm,
        java_note: java_note.clone(),
        json: serde_json::Map::new(),
        md: String::new(),
        tck: clk_tck(),
        rtt_us: f64::NAN,
    };
    let cpu_start = proc_cpu(b.tck);
    let sections = std::env::var("BENCH_SECTIONS").unwrap_or_default();
    let on = |name: &str| sections.is_empty() || sections.split(',').any(|s| s.trim() == name);
    if on("latency") {
        b.latency().await;
    }
    if on("throughput") {
        b.throughput().await;
    }
    let series = if on("handoff") {
        b.handoff().await
    } else {
        Vec::new()
    };
    if on("watchdog") {
        b.watchdog().await;
    }
    if on("many_waited") {
        b.many_waited().await;
    }
    if on("replica_sync") {
        b.replica_sync().await;
    }
    if on("loss_signal") {
        b.loss_signal().await;
    }
    if on("server_cost") {
        b.server_cost().await;
    }
    let jvm_version = b.jvm.as_ref().map(|j| j.lock().unwrap().version.clone());
    b.jvm = None; // stops the JVM
    let elapsed = started.elapsed().as_secs_f64();

    let (cpu, cores) = machine();
    let command = std::env::var("BENCH_COMMAND").unwrap_or_else(|_| "cargo bench --bench locks".into());
    let target_us = 2.0 * b.rtt_us + 100.0;
    // a partial run (BENCH_SECTIONS) without the handoff or latency sections has nothing to
    // plot, and no axis range to plot it in
    if !series.is_empty() && target_us.is_finite() {
        let svg = svg_plot(&series, target_us);
        std::fs::write(format!("{out_dir}/handoff.svg"), svg).unwrap();
    }

    let mut report = String::new();
    let _ = writeln!(
        report,
        "# Benchmarks: redisson-lock against the floor, rslock and Redisson\n"
    );
    let _ = writeln!(
        report,
        "_Generated by `{command}`; do not edit by hand. Numbers: [summary.json](summary.json) \
         (the samples: `raw/results.json`, not committed)._\n"
    );
    let _ = writeln!(report, "* Machine: {cores} cores ({cpu}), shared with other work: every figure is a ratio against a baseline measured in the same run.");
    let _ = writeln!(report, "* {redis_version} (private redis-server on a loopback port, no persistence); every system runs against the same server in the same run.");
    let _ = writeln!(
        report,
        "* Peers: rslock 0.10 (redis-rs, `SET NX PX` + polling); {}.",
        b.java_note
    );
    let _ = writeln!(
        report,
        "* Scale: `{}`; run time {:.0} s; bench process CPU {:.0} s.",
        scale.name,
        elapsed,
        proc_cpu(b.tck) - cpu_start
    );
    let _ = writeln!(report, "* Ratios: pooled p50 over the baseline's pooled p50; in parentheses the min–max of the per-repeat ratios (the spread).\n");
    report.push_str("## Summary\n\nSEE_SUMMARY\n\n");
    report.push_str(&b.md);
    let summary = summary(&b.json, target_us);
    let report = report.replace("SEE_SUMMARY", &summary);
    std::fs::write(format!("{out_dir}/REPORT.md"), report).unwrap();

    let results = json!({
        "generated_by": command,
        "scale": scale.name,
        "machine": { "cores": cores, "cpu": cpu },
        "redis_version": redis_version,
        "redisson": jvm_version,
        "java_note": b.java_note,
        "run_time_s": elapsed,
        "results": Value::Object(b.json),
    });
    std::fs::write(format!("{out_dir}/summary.json"), summary_json(&results)).unwrap();
    let raw_dir = format!("{out_dir}/raw");
    std::fs::create_dir_all(&raw_dir).unwrap();
    std::fs::write(
        format!("{raw_dir}/results.json"),
        serde_json::to_string_pretty(&results).unwrap(),
    )
    .unwrap();
    eprintln!(
        "bench: done in {elapsed:.0} s; wrote {out_dir}/REPORT.md, summary.json, handoff.svg and raw/results.json"
    );
}
