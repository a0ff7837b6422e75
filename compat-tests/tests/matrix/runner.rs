//! The version matrix: build each version's harness jar, start a redis-server and the
//! [`Env`], run every selected scenario in both directions (n/a for a kind the version lacks),
//! then the cluster scenarios ([`run_cluster`]: one 3-master + 3-replica Redis Cluster, the
//! versions of [`CLUSTER_VERSIONS`]) and the one-address scenarios ([`run_one_address`]: one
//! cluster-enabled redis-server owning every slot, every version of the run at once), then write
//! `RESULTS.md` and the summary.

use std::collections::BTreeMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::RedisServer;
use futures::FutureExt;
use redisson_lock_compat_tests::{crate_dir, expected_kinds, on_path, Result};

use crate::cluster::{mode_for, CLUSTER_VERSIONS};
use crate::common;
use crate::common::cluster::Cluster;
use crate::env::Env;
use crate::kinds::{run_order, scenario, Dir, Kind, Scenario, Verdict};
use crate::report::{render, Counts, Row, RunInfo, Status};

const DEFAULT_VERSIONS: &str = "4.7.0 3.52.0 3.24.3 3.17.7";

/// How many versions (the cluster counts as one) run at the same time by default. Most of a
/// scenario's time is waiting (TTLs, wake-ups, holds), so two lanes on 2 cores halve the
/// matrix's time; every lane has its own redis-server and JVMs, and lock names carry the
/// version, so lanes share nothing but the machine.
const DEFAULT_LANES: usize = 2;

/// `COMPAT_LANES` (1 = one version after another), else [`DEFAULT_LANES`].
fn lanes() -> usize {
    std::env::var("COMPAT_LANES")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n >= 1)
        .unwrap_or(DEFAULT_LANES)
}

/// One unit of work for a lane.
#[derive(Clone)]
enum Job {
    Version(String),
    Cluster,
    OneAddress,
}

/// Runs every version's scenarios, the cluster scenarios and the one-address scenarios on
/// `lanes` lanes, each taking the next job when it is done with one (the cluster and the one
/// address last: their scenarios take the least time). Harness jars are built one at a time
/// (Maven's local repository is not safe for two builds downloading into it at once). Rows come
/// back in version order, then the cluster's, then the one address'.
async fn run_jobs(
    versions: &[String],
    only: &[usize],
    lanes: usize,
) -> (Vec<Row>, BTreeMap<String, Option<Vec<String>>>) {
    let mut jobs: Vec<Job> = versions.iter().cloned().map(Job::Version).collect();
    jobs.push(Job::Cluster);
    jobs.push(Job::OneAddress);
    let queue = std::sync::Mutex::new(jobs.into_iter().enumerate());
    let maven = tokio::sync::Mutex::new(());
    let lane = |_: usize| async {
        let mut done = Vec::new();
        loop {
            let Some((at, job)) = queue.lock().unwrap_or_else(|p| p.into_inner()).next() else {
                return done;
            };
            match job {
                Job::Version(v) => {
                    let jar = {
                        let _one_build = maven.lock().await;
                        let version = v.clone();
                        tokio::task::spawn_blocking(move || build_jar(&version))
                            .await
                            .unwrap_or_else(|e| Err(format!("harness build panicked: {e}")))
                    };
                    let (rows, kinds) = run_version(&v, jar, only).await;
                    done.push((at, rows, Some((v, kinds))));
                }
                Job::Cluster => {
                    {
                        // run_cluster finds these jars built (a quick up-to-date check)
                        let _one_build = maven.lock().await;
                        for v in versions.iter().filter(|v| CLUSTER_VERSIONS.contains(&v.as_str())) {
                            let version = v.clone();
                            let _ = tokio::task::spawn_blocking(move || build_jar(&version)).await;
                        }
                    }
                    done.push((at, run_cluster(versions, only).await, None));
                }
                Job::OneAddress => {
                    {
                        // run_one_address finds these jars built (a quick up-to-date check)
                        let _one_build = maven.lock().await;
                        for v in versions {
                            let version = v.clone();
                            let _ = tokio::task::spawn_blocking(move || build_jar(&version)).await;
                        }
                    }
                    done.push((at, run_one_address(versions, only).await, None));
                }
            }
        }
    };
    let mut done: Vec<_> = futures::future::join_all((0..lanes.max(1)).map(lane))
        .await
        .into_iter()
        .flatten()
        .collect();
    done.sort_by_key(|(at, _, _)| *at);
    let mut rows = Vec::new();
    let mut kinds = BTreeMap::new();
    for (_, r, k) in done {
        rows.extend(r);
        if let Some((v, k)) = k {
            kinds.insert(v, k);
        }
    }
    (rows, kinds)
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

async fn guarded<T, F: Future<Output = Result<T>>>(limit: Duration, f: F) -> Result<T> {
    match tokio::time::timeout(limit, AssertUnwindSafe(f).catch_unwind()).await {
        Err(_) => Err(format!("scenario did not finish within {limit:?}")),
        Ok(Err(panic)) => Err(format!("panicked: {}", panic_message(&*panic))),
        Ok(Ok(r)) => r,
    }
}

/// Runs scenario `s` of `kind` in direction `dir` on `env` and logs its row.
async fn run_one(env: &Env, kind: Kind, spec: &'static Scenario, s: usize, dir: Dir) -> Row {
    let version = env.version.as_str();
    let t0 = Instant::now();
    let r = guarded(spec.limit(), kind.run(env, s, dir)).await;
    let secs = t0.elapsed().as_secs_f64();
    let (status, latency_ms, note) = match r {
        Ok(Verdict::Pass(o)) => (Status::Pass, o.latency_ms, o.note),
        Ok(Verdict::NotAvailable(why)) => (Status::NotAvailable, None, why),
        Err(e) => (Status::Fail, None, e),
    };
    let row = Row {
        kind,
        scenario: s,
        title: spec.title,
        version: version.to_owned(),
        dir,
        status,
        latency_ms,
        note,
        secs,
    };
    eprintln!(
        "compat: [{version}{}] s{s} {}: {}{} ({:.1} s) {}",
        env.label,
        dir.long(),
        match row.status {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::NotAvailable => "n/a",
        },
        row.latency_ms
            .map(|l| format!(", wake-up {l:.1} ms"))
            .unwrap_or_default(),
        secs,
        row.note
    );
    row
}

/// A failed row for every direction of every scenario in `only` (`version` did not set up).
fn failed_rows(only: &[usize], version: &str, why: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    for &s in only {
        let Some((kind, spec)) = scenario(s) else { continue };
        for &dir in spec.dirs {
            rows.push(Row {
                kind,
                scenario: s,
                title: spec.title,
                version: version.to_owned(),
                dir,
                status: Status::Fail,
                latency_ms: None,
                note: why.to_owned(),
                secs: 0.0,
            });
        }
    }
    rows
}

/// The cluster scenarios of `only` (kind [`Kind::Cluster`]) for every version of `versions` that
/// is in [`CLUSTER_VERSIONS`], on one Redis Cluster of 3 masters + 3 replicas started here
/// (loopback, `redis-cli --cluster create --cluster-replicas 1`), the crate in [`mode_for`] the
/// version. Versions share the cluster; their lock names differ.
async fn run_cluster(versions: &[String], only: &[usize]) -> Vec<Row> {
    let wanted: Vec<usize> = only
        .iter()
        .copied()
        .filter(|&s| scenario(s).is_some_and(|(k, _)| k.topology_cluster()))
        .collect();
    let targets: Vec<&String> = versions
        .iter()
        .filter(|v| CLUSTER_VERSIONS.contains(&v.as_str()))
        .collect();
    if wanted.is_empty() || targets.is_empty() {
        return Vec::new();
    }
    let t0 = Instant::now();
    let cluster = match AssertUnwindSafe(Cluster::start(3, 1)).catch_unwind().await {
        Ok(c) => c,
        Err(panic) => {
            let why = format!("cluster setup failed: {}", panic_message(&*panic));
            return targets
                .iter()
                .flat_map(|v| failed_rows(&wanted, v, &why))
                .collect();
        }
    };
    eprintln!(
        "compat: Redis Cluster (3 masters + 3 replicas: {}) up in {:.1} s",
        cluster.addrs().join(" "),
        t0.elapsed().as_secs_f64()
    );
    let nodes = cluster.urls();
    let mut rows = Vec::new();
    for v in targets {
        let jar = match build_jar(v) {
            Ok(j) => j,
            Err(e) => {
                rows.extend(failed_rows(&wanted, v, &format!("harness build failed: {e}")));
                continue;
            }
        };
        let env = match Env::setup_cluster(v, &jar, &nodes, mode_for(v)).await {
            Ok(env) => env,
            Err(e) => {
                rows.extend(failed_rows(&wanted, v, &format!("cluster setup failed: {e}")));
                continue;
            }
        };
        let kinds = env.java.kinds().to_vec();
        for &s in &wanted {
            let Some((kind, spec)) = scenario(s) else { continue };
            for &dir in spec.dirs {
                if spec.unavailable(v).is_some() {
                    let row = not_run(s, v, dir, &kinds, "");
                    if let Some(r) = &row {
                        eprintln!("compat: [{v} cluster] s{s} {}: n/a ({})", dir.long(), r.note);
                    }
                    rows.extend(row);
                    continue;
                }
                rows.push(run_one(&env, kind, spec, s, dir).await);
            }
        }
        env.close().await;
    }
    rows
}

/// The one-address scenarios of `only` (kind [`Kind::OneAddress`]) for every version of
/// `versions`, on one endpoint started here: a cluster-enabled redis-server that owns every slot,
/// reached by its plain URL (what a cluster proxy or a serverless endpoint looks like: one
/// server that refuses a script over keys of several slots). The versions run at the same time,
/// each with its own harness (single-server mode) and Rust client (the scenarios wait on
/// watchdog rounds, not on the CPU); a scenario's two directions run at the same time too
/// (their names, workers and owners differ), its scenarios one after another.
async fn run_one_address(versions: &[String], only: &[usize]) -> Vec<Row> {
    let wanted: Vec<usize> = only
        .iter()
        .copied()
        .filter(|&s| scenario(s).is_some_and(|(k, _)| k.topology_one_address()))
        .collect();
    if wanted.is_empty() || versions.is_empty() {
        return Vec::new();
    }
    let t0 = Instant::now();
    let server = match AssertUnwindSafe(common::cluster::one_address(&[]))
        .catch_unwind()
        .await
    {
        Ok(s) => s,
        Err(panic) => {
            let why = format!("one-address endpoint setup failed: {}", panic_message(&*panic));
            return versions
                .iter()
                .flat_map(|v| failed_rows(&wanted, v, &why))
                .collect();
        }
    };
    let url = server.url();
    eprintln!(
        "compat: one address ({url}: a cluster-enabled redis-server owning all 16384 slots) up in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    // built already by the job (an up-to-date check each)
    let jars: Vec<(&String, std::result::Result<PathBuf, String>)> =
        versions.iter().map(|v| (v, build_jar(v))).collect();
    let rows = futures::future::join_all(
        jars.into_iter()
            .map(|(v, jar)| one_address_version(v, jar, &url, &wanted)),
    )
    .await;
    drop(server);
    rows.into_iter().flatten().collect()
}

/// One version's one-address scenarios (`wanted`) on the endpoint `url`.
async fn one_address_version(
    v: &str,
    jar: std::result::Result<PathBuf, String>,
    url: &str,
    wanted: &[usize],
) -> Vec<Row> {
    let jar = match jar {
        Ok(j) => j,
        Err(e) => return failed_rows(wanted, v, &format!("harness build failed: {e}")),
    };
    let env = match Env::setup_one_address(v, &jar, url).await {
        Ok(env) => env,
        Err(e) => return failed_rows(wanted, v, &format!("one-address setup failed: {e}")),
    };
    let mut rows = Vec::new();
    for &s in wanted {
        let Some((kind, spec)) = scenario(s) else { continue };
        let both = spec.dirs.iter().map(|&dir| run_one(&env, kind, spec, s, dir));
        rows.extend(futures::future::join_all(both).await);
    }
    env.close().await;
    rows
}

/// A row for scenario `no` that did not run: n/a when `version` has no such kind (by
/// `kinds.properties` or, when known, by the jar's own list) or lacks the Redisson call the
/// scenario needs ([`Scenario::unavailable`]), else a failure with `why`.
fn not_run(no: usize, version: &str, dir: Dir, kinds: &[String], why: &str) -> Option<Row> {
    let (kind, spec) = scenario(no)?;
    let has = kinds.iter().any(|k| k == kind.java().capability());
    let (status, note) = if let Some(missing) = spec.unavailable(version) {
        (Status::NotAvailable, missing)
    } else if has {
        (Status::Fail, why.to_owned())
    } else {
        (
            Status::NotAvailable,
            format!(
                "Redisson {version} has no {} (needs {}+)",
                kind.title(),
                kind.java().since().unwrap_or_default()
            ),
        )
    };
    Some(Row {
        kind,
        scenario: no,
        title: spec.title,
        version: version.to_owned(),
        dir,
        status,
        latency_ms: None,
        note,
        secs: 0.0,
    })
}

/// Runs `only` (scenario numbers in run order) on `version`; also returns the kinds its jar
/// listed (`None` when it did not start).
async fn run_version(
    version: &str,
    jar: std::result::Result<PathBuf, String>,
    only: &[usize],
) -> (Vec<Row>, Option<Vec<String>>) {
    let mut rows = Vec::new();
    // the cluster and one-address scenarios run apart (run_cluster, run_one_address)
    let only: Vec<usize> = only
        .iter()
        .copied()
        .filter(|&s| scenario(s).is_some_and(|(k, _)| !k.own_topology()))
        .collect();
    let only = only.as_slice();
    if only.is_empty() {
        return (rows, None); // a filtered run of cluster or one-address scenarios only
    }
    let fail_all = |rows: &mut Vec<Row>, why: &str| {
        let kinds = expected_kinds(version);
        for &s in only {
            let Some((_, spec)) = scenario(s) else { continue };
            for &dir in spec.dirs {
                rows.extend(not_run(s, version, dir, &kinds, why));
            }
        }
    };
    let jar = match jar {
        Ok(j) => j,
        Err(e) => {
            fail_all(&mut rows, &format!("harness build failed: {e}"));
            return (rows, None);
        }
    };
    let server = RedisServer::start();
    let env = match Env::setup(version, &jar, &server).await {
        Ok(env) => env,
        Err(e) => {
            fail_all(&mut rows, &format!("setup failed: {e}"));
            return (rows, None);
        }
    };
    let kinds = env.java.kinds().to_vec();
    for &s in only {
        let Some((kind, spec)) = scenario(s) else { continue };
        for &dir in spec.dirs {
            if !env.java.supports(kind.java()) || spec.unavailable(version).is_some() {
                let row = not_run(s, version, dir, &kinds, "");
                if let Some(r) = &row {
                    eprintln!("compat: [{version}] s{s} {}: n/a ({})", dir.long(), r.note);
                }
                rows.extend(row);
                continue;
            }
            rows.push(run_one(&env, kind, spec, s, dir).await);
        }
    }
    env.close().await;
    (rows, Some(kinds))
}

fn build_jar(version: &str) -> std::result::Result<PathBuf, String> {
    let script = crate_dir().join("build-harness.sh");
    let out = std::process::Command::new("bash")
        .arg(&script)
        .arg(version)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("run {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} {version} exited with {}",
            script.display(),
            out.status
        ));
    }
    let path = String::from_utf8_lossy(&out.stdout)
        .trim()
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned();
    let p = PathBuf::from(&path);
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!("build-harness.sh printed `{path}`, not a jar"))
    }
}

fn command_line(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .map(|o| {
            let text = if o.stdout.is_empty() { o.stderr } else { o.stdout };
            String::from_utf8_lossy(&text)
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned()
        })
        .unwrap_or_else(|e| format!("unknown ({e})"))
}

/// The whole matrix; returns the process exit code.
pub async fn run() -> i32 {
    let t0 = Instant::now();
    let ci = std::env::var("CI")
        .map(|v| v == "true" || v == "1")
        .unwrap_or(false);
    let versions: Vec<String> = std::env::var("COMPAT_VERSIONS")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_VERSIONS.to_owned())
        .split([' ', ','])
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let order = run_order();
    let only: Vec<usize> = match std::env::var("COMPAT_SCENARIOS") {
        Ok(s) if !s.trim().is_empty() => {
            let wanted: Vec<usize> = s.split([' ', ',']).filter_map(|x| x.parse().ok()).collect();
            order.iter().copied().filter(|n| wanted.contains(n)).collect()
        }
        _ => order.clone(),
    };
    // RESULTS.md is the committed record of the whole matrix: every scenario, every default
    // version, on the machine's redis-server; a narrower run only prints its summary
    let default_versions: Vec<&str> = DEFAULT_VERSIONS.split(' ').collect();
    let full = only.len() == order.len()
        && versions
            .iter()
            .map(String::as_str)
            .eq(default_versions.iter().copied())
        && std::env::var_os("REDIS_SERVER").is_none();

    let redis_bin = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
    let missing: Vec<&str> = [
        ("java", on_path("java")),
        ("mvn", on_path("mvn")),
        (
            "redis-server",
            on_path(&redis_bin) || Path::new(&redis_bin).is_file(),
        ),
        ("redis-cli", on_path("redis-cli")),
    ]
    .into_iter()
    .filter(|(_, ok)| !ok)
    .map(|(n, _)| n)
    .collect();
    if !missing.is_empty() {
        let msg = format!(
            "missing on PATH: {} (the interop matrix needs a JDK 17+, Maven and redis-server)",
            missing.join(", ")
        );
        if ci {
            eprintln!("compat: FAILURE in CI: {msg}");
            println!("compat: 0 passed, 1 failed");
            println!("0 passed, 1 failed");
            return 1;
        }
        eprintln!("\n################################################################");
        eprintln!("compat: SKIPPED (not in CI): {msg}");
        eprintln!("################################################################\n");
        println!("compat: skipped ({msg})");
        return 0;
    }

    let lanes = lanes();
    let (rows, kinds) = run_jobs(&versions, &only, lanes).await;
    let info = RunInfo {
        date: command_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        redis: command_line(&redis_bin, &["--version"]),
        java: command_line("java", &["-version"]),
        mvn: command_line("mvn", &["-B", "-v"])
            .replace("\u{1b}[1m", "")
            .replace("\u{1b}[m", "")
            .replace("\u{1b}[0m", ""),
        versions: versions.clone(),
        kinds,
        lanes,
        secs: t0.elapsed().as_secs_f64(),
    };
    let md = render(&rows, &info);
    let counts = Counts::of(&rows);
    if full {
        let path = crate_dir().join("RESULTS.md");
        match std::fs::write(&path, &md) {
            Ok(()) => eprintln!("compat: wrote {}", path.display()),
            Err(e) => eprintln!("compat: cannot write {}: {e}", path.display()),
        }
    } else {
        eprintln!(
            "compat: a partial run (scenarios {only:?}, versions {versions:?}, or another \
             redis-server): RESULTS.md not rewritten"
        );
    }
    for r in rows.iter().filter(|r| r.status == Status::Fail) {
        eprintln!(
            "compat: FAILED s{} [{}] {}: {}",
            r.scenario,
            r.version,
            r.dir.long(),
            r.note
        );
    }
    for kind in Kind::ALL {
        let na: Vec<&str> = versions
            .iter()
            .filter(|v| !expected_kinds(v).iter().any(|k| k == kind.java().capability()))
            .map(String::as_str)
            .collect();
        if !na.is_empty() {
            eprintln!("compat: {} is n/a on Redisson {}", kind.title(), na.join(", "));
        }
    }
    eprintln!("compat: total {:.1} s", t0.elapsed().as_secs_f64());
    println!("compat: {counts}");
    println!("{counts}");
    i32::from(counts.failed > 0 || counts.passed == 0)
}
