//! What the bench reads about the server and itself: redis-server INFO (CPU, commandstats,
//! PUBSUB), this process's CPU time and RSS from `/proc`, and the machine line of the report.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

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

/// What one `INFO cpu persistence commandstats` read says about the server's work so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct ServerSnap {
    /// `used_cpu_user` + `used_cpu_sys`, seconds (the whole process: getrusage).
    pub(crate) cpu_s: f64,
    /// `rdb_changes_since_last_save`: Redis's own count of keyspace changes (`server.dirty`:
    /// one per key a command sets, expires or deletes, one per hash field it writes).
    pub(crate) dirty: u64,
    /// Per command (lower-case name): (calls, usec), commands run by scripts included.
    pub(crate) cmds: BTreeMap<String, (u64, u64)>,
}

impl ServerSnap {
    /// `later` − `self`: CPU seconds, keyspace changes and, per command, (calls, usec); the
    /// bench's own reads (`info`, `config|resetstat`, `flushall`) are left out.
    pub(crate) fn delta(&self, later: &ServerSnap) -> (f64, u64, BTreeMap<String, (u64, u64)>) {
        let cmds = later
            .cmds
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "info" | "config|resetstat" | "flushall"))
            .filter_map(|(k, (c, u))| {
                let (c0, u0) = self.cmds.get(k).copied().unwrap_or((0, 0));
                let d = (c.saturating_sub(c0), u.saturating_sub(u0));
                (d.0 > 0).then(|| (k.clone(), d))
            })
            .collect();
        (
            later.cpu_s - self.cpu_s,
            later.dirty.saturating_sub(self.dirty),
            cmds,
        )
    }
}

/// One `INFO cpu persistence commandstats` (one command, so the three are read at one instant).
pub(crate) async fn server_snap(con: &mut ConnectionManager) -> ServerSnap {
    let s: String = redis::cmd("INFO")
        .arg("cpu")
        .arg("persistence")
        .arg("commandstats")
        .query_async(con)
        .await
        .expect("INFO");
    let mut snap = ServerSnap::default();
    for (k, v) in s.lines().filter_map(|l| l.split_once(':')) {
        let num = |f: &str| {
            v.split(',')
                .find_map(|kv| kv.strip_prefix(f))?
                .parse::<u64>()
                .ok()
        };
        match k {
            "used_cpu_user" | "used_cpu_sys" => snap.cpu_s += v.trim().parse::<f64>().unwrap_or(0.0),
            "rdb_changes_since_last_save" => snap.dirty = v.trim().parse().unwrap_or(0),
            _ => {
                if let (Some(name), Some(calls), Some(usec)) =
                    (k.strip_prefix("cmdstat_"), num("calls="), num("usec="))
                {
                    snap.cmds.insert(name.to_owned(), (calls, usec));
                }
            }
        }
    }
    snap
}

/// `CONFIG RESETSTAT`: commandstats and INFO stats from zero (not the CPU times).
pub(crate) async fn resetstat(con: &mut ConnectionManager) {
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(con)
        .await
        .expect("CONFIG RESETSTAT");
}

/// Every key (SCAN) with its `MEMORY USAGE key SAMPLES 0` (bytes; 0 for a key gone meanwhile).
pub(crate) async fn key_memory(con: &mut ConnectionManager) -> Vec<(String, u64)> {
    let mut keys: Vec<String> = Vec::new();
    let mut cursor: u64 = 0;
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("COUNT")
            .arg(1000)
            .query_async(con)
            .await
            .expect("SCAN");
        keys.extend(batch);
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    keys.sort();
    keys.dedup();
    let mut out = Vec::with_capacity(keys.len());
    for chunk in keys.chunks(500) {
        let mut p = redis::pipe();
        for k in chunk {
            p.cmd("MEMORY").arg("USAGE").arg(k).arg("SAMPLES").arg(0);
        }
        let sizes: Vec<Option<u64>> = p.query_async(con).await.expect("MEMORY USAGE");
        out.extend(
            chunk
                .iter()
                .cloned()
                .zip(sizes.into_iter().map(|x| x.unwrap_or(0))),
        );
    }
    out
}

/// INFO memory: (`used_memory` less the clients' buffers, `used_memory`). The clients' query
/// and reply buffers grow and shrink with the traffic of the moment, not with the locks held.
pub(crate) async fn used_memory(admin: &mut ConnectionManager) -> (f64, f64, BTreeMap<String, f64>) {
    let i = info(admin, "memory").await;
    let g = |k: &str| i.get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(f64::NAN);
    let used = g("used_memory");
    let parts = [
        "used_memory_dataset",
        "used_memory_overhead",
        "mem_clients_normal",
        "used_memory_scripts_eval",
    ]
    .iter()
    .map(|k| (k.to_string(), g(k)))
    .collect();
    (
        used - g("mem_clients_normal") - g("mem_clients_slaves"),
        used,
        parts,
    )
}

pub(crate) async fn dbsize(admin: &mut ConnectionManager) -> u64 {
    redis::cmd("DBSIZE").query_async(admin).await.unwrap()
}

/// Waits until the number of keys stops moving (latches deleted or expired), at most 15 s.
pub(crate) async fn settle_keys(admin: &mut ConnectionManager) {
    let mut last = u64::MAX;
    let mut same = 0;
    for _ in 0..60 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let n = dbsize(admin).await;
        same = if n == last { same + 1 } else { 0 };
        last = n;
        if same >= 2 {
            break;
        }
    }
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
