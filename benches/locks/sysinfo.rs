//! What the bench reads about the server and itself: redis-server INFO (CPU, commandstats,
//! PUBSUB), this process's CPU time and RSS from `/proc`, and the machine line of the report.

use std::collections::BTreeMap;
use std::process::Command;

use redis::aio::ConnectionManager;

use crate::common;

// ------------------------------------------------------------------------------ redis helpers

/// Starts a redis-server on a free loopback port (the test suite's harness: stopped on drop).
pub(crate) fn start_own_server() -> (String, common::RedisServer) {
    let server = common::RedisServer::start();
    (server.url(), server)
}

pub(crate) async fn info(con: &mut ConnectionManager, section: &str) -> BTreeMap<String, String> {
    let s: String = redis::cmd("INFO")
        .arg(section)
        .query_async(con)
        .await
        .expect("INFO");
    s.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// Calls per command (lower-case name) from INFO commandstats.
pub(crate) async fn cmdstats(con: &mut ConnectionManager) -> BTreeMap<String, u64> {
    info(con, "commandstats")
        .await
        .into_iter()
        .filter_map(|(k, v)| {
            let name = k.strip_prefix("cmdstat_")?.to_owned();
            let calls = v
                .split(',')
                .find_map(|kv| kv.strip_prefix("calls="))?
                .parse()
                .ok()?;
            Some((name, calls))
        })
        .collect()
}

pub(crate) fn stats_delta(a: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    b.iter()
        .filter(|(k, _)| k.as_str() != "info")
        .filter_map(|(k, v)| {
            let d = v.saturating_sub(*a.get(k).unwrap_or(&0));
            (d > 0).then(|| (k.clone(), d))
        })
        .collect()
}

pub(crate) async fn server_cpu(con: &mut ConnectionManager) -> f64 {
    let i = info(con, "cpu").await;
    let g = |k: &str| i.get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    g("used_cpu_user") + g("used_cpu_sys")
}

pub(crate) async fn flushall(con: &mut ConnectionManager) {
    let _: () = redis::cmd("FLUSHALL").query_async(con).await.expect("FLUSHALL");
}

/// Calls of commands the clients send themselves (not those scripts run), from a commandstats
/// delta. Ours and Redisson: EVALSHA/EVAL, (UN)SUBSCRIBE, and DEL minus the one DEL each full
/// release runs inside its script (counted by its PUBLISH). rslock: `SET NX PX` and EVAL(SHA).
pub(crate) fn top_level_calls(d: &BTreeMap<String, u64>, rslock: bool) -> u64 {
    let g = |k: &str| d.get(k).copied().unwrap_or(0);
    if rslock {
        return g("set") + g("evalsha") + g("eval");
    }
    g("evalsha")
        + g("eval")
        + g("subscribe")
        + g("unsubscribe")
        + g("ssubscribe")
        + g("sunsubscribe")
        + g("del").saturating_sub(g("publish") + g("spublish"))
}

pub(crate) async fn channel_count(a: &mut ConnectionManager) -> usize {
    let v: Vec<String> = redis::cmd("PUBSUB")
        .arg("CHANNELS")
        .arg("redisson_lock__channel:*")
        .query_async(a)
        .await
        .unwrap();
    v.len()
}

// -------------------------------------------------------------------------------- process cpu

pub(crate) fn clk_tck() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// CPU time of this process, seconds: the sum of every thread's run time from
/// `/proc/self/task/*/schedstat` (ns), falling back to utime + stime from `/proc/self/stat`.
/// Threads that already exited are not counted, so only deltas over live threads are meaningful.
pub(crate) fn proc_cpu(tck: f64) -> f64 {
    let mut ns: u64 = 0;
    let mut any = false;
    if let Ok(dir) = std::fs::read_dir("/proc/self/task") {
        for e in dir.flatten() {
            if let Ok(s) = std::fs::read_to_string(e.path().join("schedstat")) {
                if let Some(x) = s.split_whitespace().next().and_then(|x| x.parse::<u64>().ok()) {
                    ns += x;
                    any = true;
                }
            }
        }
    }
    if any {
        return ns as f64 / 1e9;
    }
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = s.rsplit_once(')').map(|x| x.1).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ut: f64 = f.get(11).and_then(|x| x.parse().ok()).unwrap_or(0.0);
    let st: f64 = f.get(12).and_then(|x| x.parse().ok()).unwrap_or(0.0);
    (ut + st) / tck
}

pub(crate) fn rss_bytes() -> i64 {
    let s = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: i64 = s
        .split_whitespace()
        .nth(1)
        .and_then(|x| x.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

pub(crate) fn machine() -> (String, usize) {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|x| x.1.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    (cpu, cores)
}
