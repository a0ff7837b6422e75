//! `doctor`: checks a deployment for what makes locks unsafe, one line per check.
//!
//! Every check reads what it can and degrades to a warning naming what it could not read (an ACL
//! user is often denied `CONFIG GET` or `INFO`); only a failed connection is an error. The
//! thresholds are documented in the README ("Deployment checklist: `doctor`").

use std::collections::HashMap;
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use redis::{RedisError, Value};
use serde_json::json;

use crate::render::{fmt_ms, Out};
use crate::{check_scheme, now_ms, redact, Failure, Outcome};

/// Round trips above this are a warning: waits, renewals and releases all pay them.
const RTT_WARN: Duration = Duration::from_millis(50);
/// Round trips above this are a failure: a tenth of the default 30 s watchdog lease.
const RTT_FAIL: Duration = Duration::from_secs(3);
/// Clock offsets (this machine against Redis' `TIME`) above this are a warning.
const CLOCK_WARN_MS: i64 = 1_000;
/// Above this a failure: the default lease (30 s); fair-lock waiter deadlines written by this
/// machine are then off by more than a whole lease for every other client.
const CLOCK_FAIL_MS: i64 = 30_000;
/// PINGs whose median is the round trip.
const PINGS: usize = 10;
/// Connection and per-command timeout.
const TIMEOUT: Duration = Duration::from_secs(5);

/// A check's verdict.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok  ",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        }
    }
}

/// One check's line.
pub(crate) struct Check {
    name: &'static str,
    status: Status,
    message: String,
}

fn check(name: &'static str, status: Status, message: impl Into<String>) -> Check {
    Check {
        name,
        status,
        message: message.into(),
    }
}

/// What `doctor` is asked.
pub(crate) struct DoctorArgs {
    /// A lock name whose keys and channels the ACL check uses.
    pub(crate) name: String,
    /// Check this ACL user instead of the connected one (needs `ACL DRYRUN`).
    pub(crate) acl_user: Option<String>,
}

pub(crate) async fn doctor(url: &str, out: &Out, args: DoctorArgs) -> Result<Outcome, Failure> {
    check_scheme(url)?;
    let client =
        redis::Client::open(url).map_err(|e| Failure(format!("invalid redis URL {}: {e}", redact(url))))?;
    let url_user = client
        .get_connection_info()
        .redis_settings()
        .username()
        .map(str::to_owned);
    let config = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(TIMEOUT))
        .set_response_timeout(Some(TIMEOUT));
    let conn = client
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .map_err(|e| Failure(format!("cannot connect to {}: {e}", redact(url))))?;
    let mut d = Doctor::new(conn).await;

    let mut checks = Vec::new();
    checks.push(d.version());
    checks.push(d.eviction().await);
    checks.push(d.persistence().await);
    checks.push(d.replication().await);
    checks.push(d.cluster().await);
    checks.push(d.round_trip().await);
    checks.push(d.clock().await);
    checks.push(d.acl(&args, url_user.as_deref()).await);

    for c in &checks {
        out.emit(
            json!({"check": c.name, "status": c.status.as_str(), "message": c.message, "ts_ms": now_ms()}),
            || format!("{}  {}: {}", c.status.label(), c.name, c.message),
        );
    }
    let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
    let (fails, warns) = (count(Status::Fail), count(Status::Warn));
    out.emit(
        json!({"event": "summary", "fail": fails, "warn": warns, "ok": count(Status::Ok), "ts_ms": now_ms()}),
        || {
            format!(
                "{} check(s) failed, {} warning(s), {} ok",
                fails,
                warns,
                count(Status::Ok)
            )
        },
    );
    Ok(if fails > 0 { Outcome::Unsafe } else { Outcome::Done })
}

/// Whether a server error is an ACL denial.
fn is_noperm(e: &RedisError) -> bool {
    e.code() == Some("NOPERM")
}

/// A short reason for "could not read X".
fn reason(e: &RedisError) -> String {
    if is_noperm(e) {
        "denied to this user (NOPERM)".to_owned()
    } else {
        format!("failed: {}", crate::one_line(&e.to_string()))
    }
}

/// `INFO` lines as a map (`# Section` headers and blank lines dropped).
fn parse_info(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// `7.0.15` → (7, 0, 15); missing parts are 0.
fn parse_version(v: &str) -> Option<(u32, u32, u32)> {
    let mut parts = v.trim().split('.').map(|p| p.parse::<u32>());
    let major = parts.next()?.ok()?;
    let minor = parts.next().and_then(Result::ok).unwrap_or(0);
    let patch = parts.next().and_then(Result::ok).unwrap_or(0);
    Some((major, minor, patch))
}

/// `104857600` → `100mb` (as redis.conf would say it), else bytes.
fn fmt_bytes(n: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "gb"), (1 << 20, "mb"), (1 << 10, "kb")];
    for (size, unit) in UNITS {
        if n >= size && n % size == 0 {
            return format!("{}{unit}", n / size);
        }
    }
    format!("{n} bytes")
}

/// The eviction verdict for `policy` under `maxmemory` (bytes; None when unreadable).
fn judge_eviction(policy: &str, maxmemory: Option<u64>) -> (Status, String) {
    let fix = "set maxmemory-policy noeviction";
    if policy == "noeviction" {
        return (Status::Ok, "noeviction".to_owned());
    }
    let evicts = if policy.starts_with("allkeys-") {
        format!("{policy} evicts lock keys")
    } else if policy.starts_with("volatile-") {
        format!("{policy} evicts keys that have a TTL, and every lock key has one")
    } else {
        format!("{policy} is not noeviction and may evict lock keys")
    };
    match maxmemory {
        Some(0) => (
            Status::Warn,
            format!(
                "{evicts} once a memory limit is set (maxmemory is 0 now, so nothing is evicted yet) — {fix}"
            ),
        ),
        Some(n) => (
            Status::Fail,
            format!("{evicts} when memory reaches maxmemory {} — {fix}", fmt_bytes(n)),
        ),
        None => (
            Status::Fail,
            format!("{evicts} when memory is full (maxmemory unreadable) — {fix}"),
        ),
    }
}

/// The clock verdict for Redis' time minus ours (`offset_ms`), measured within ±`uncertainty_ms`.
fn judge_clock(offset_ms: i64, uncertainty_ms: i64) -> (Status, String) {
    let text = if offset_ms.abs() <= uncertainty_ms {
        format!("this machine's clock agrees with Redis' TIME (±{uncertainty_ms}ms)")
    } else {
        format!(
            "this machine's clock is {} {} Redis' TIME (±{uncertainty_ms}ms)",
            fmt_ms(offset_ms.unsigned_abs()),
            if offset_ms > 0 { "behind" } else { "ahead of" },
        )
    };
    let why = "fair-lock waiter deadlines are written in client epoch ms and read by every other client — sync clocks with NTP";
    if offset_ms.abs() > CLOCK_FAIL_MS {
        (
            Status::Fail,
            format!("{text}: more than {}s; {why}", CLOCK_FAIL_MS / 1000),
        )
    } else if offset_ms.abs() > CLOCK_WARN_MS {
        (
            Status::Warn,
            format!("{text}: more than {}s; {why}", CLOCK_WARN_MS / 1000),
        )
    } else {
        (Status::Ok, text)
    }
}

/// The round-trip verdict for the median and the slowest of the PINGs.
fn judge_round_trip(median: Duration, max: Duration) -> (Status, String) {
    let ms = |d: Duration| format!("{:.2}ms", d.as_secs_f64() * 1000.0);
    let text = format!("median {} over {PINGS} PINGs (max {})", ms(median), ms(max));
    if median > RTT_FAIL {
        (
            Status::Fail,
            format!("{text}: a large share of the 30 s watchdog lease goes to round trips — move the clients closer to Redis"),
        )
    } else if median > RTT_WARN {
        (
            Status::Warn,
            format!(
                "{text}: above {} — every acquire, renewal and release waits that long",
                fmt_ms(RTT_WARN.as_millis() as u64)
            ),
        )
    } else {
        (Status::Ok, text)
    }
}

/// What the server told us, read once.
struct Doctor {
    conn: MultiplexedConnection,
    /// `INFO`, or why it could not be read.
    info: Result<HashMap<String, String>, String>,
    /// The version from `INFO` or `HELLO` (HELLO needs no permission).
    version: Option<String>,
    /// Valkey reports itself in `server_name`.
    server_name: String,
}

impl Doctor {
    async fn new(mut conn: MultiplexedConnection) -> Doctor {
        let info = match redis::cmd("INFO").query_async::<String>(&mut conn).await {
            Ok(text) => Ok(parse_info(&text)),
            Err(e) => Err(format!("INFO {}", reason(&e))),
        };
        let mut version = info.as_ref().ok().and_then(|i| {
            i.get("valkey_version")
                .or_else(|| i.get("redis_version"))
                .cloned()
        });
        let mut server_name = info
            .as_ref()
            .ok()
            .and_then(|i| i.get("server_name").cloned())
            .unwrap_or_else(|| "redis".to_owned());
        if version.is_none() {
            // HELLO (no protocol argument: stays on RESP2) is allowed to every user
            if let Ok(Value::Array(items)) = redis::cmd("HELLO").query_async::<Value>(&mut conn).await {
                let mut it = items.iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    let (Ok(k), Ok(v)) = (
                        redis::from_redis_value_ref::<String>(k),
                        redis::from_redis_value_ref::<String>(v),
                    ) else {
                        continue;
                    };
                    match k.as_str() {
                        "version" => version = Some(v),
                        "server" => server_name = v,
                        _ => {}
                    }
                }
            }
        }
        Doctor {
            conn,
            info,
            version,
            server_name,
        }
    }

    fn info(&self, field: &str) -> Option<&str> {
        self.info.as_ref().ok()?.get(field).map(String::as_str)
    }

    fn info_reason(&self) -> &str {
        self.info
            .as_ref()
            .err()
            .map(String::as_str)
            .unwrap_or("INFO lacks it")
    }

    fn cluster_enabled(&self) -> Option<bool> {
        self.info("cluster_enabled").map(|v| v == "1")
    }

    /// `CONFIG GET param`: its value, or why it could not be read.
    async fn config(&mut self, param: &str) -> Result<String, String> {
        let r: redis::RedisResult<Vec<String>> = redis::cmd("CONFIG")
            .arg("GET")
            .arg(param)
            .query_async(&mut self.conn)
            .await;
        match r {
            Ok(kv) => kv
                .chunks(2)
                .find(|p| p.len() == 2 && p[0].eq_ignore_ascii_case(param))
                .map(|p| p[1].clone())
                .ok_or_else(|| format!("CONFIG GET {param} returned nothing")),
            Err(e) => Err(format!("CONFIG GET {param} {}", reason(&e))),
        }
    }

    fn version(&self) -> Check {
        const NAME: &str = "version";
        let Some(v) = self.version.clone() else {
            return check(
                NAME,
                Status::Warn,
                format!(
                    "cannot check the server version ({}; HELLO too)",
                    self.info_reason()
                ),
            );
        };
        let who = format!("{} {v}", self.server_name);
        let Some(parsed) = parse_version(&v) else {
            return check(NAME, Status::Warn, format!("{who}: cannot parse the version"));
        };
        let cluster = self.cluster_enabled() == Some(true);
        if parsed < (2, 6, 0) {
            check(
                NAME,
                Status::Fail,
                format!("{who} has no Lua scripting (EVAL needs 2.6): locks cannot work — upgrade to 7.0 or later"),
            )
        } else if parsed < (6, 2, 0) {
            check(
                NAME,
                Status::Warn,
                format!("{who} is older than 6.2 (no ACL DRYRUN, no sharded pub/sub, untested here) — upgrade to 7.0 or later"),
            )
        } else if parsed < (7, 0, 0) && cluster {
            check(
                NAME,
                Status::Warn,
                format!("{who} in a cluster has no sharded pub/sub: unlock messages go to every node — upgrade to 7.0 or later"),
            )
        } else if parsed < (7, 0, 0) {
            check(
                NAME,
                Status::Ok,
                format!("{who} (7.0+ adds sharded pub/sub and ACL DRYRUN)"),
            )
        } else if cluster {
            check(NAME, Status::Ok, format!("{who} (sharded pub/sub available)"))
        } else {
            check(NAME, Status::Ok, who)
        }
    }

    async fn eviction(&mut self) -> Check {
        const NAME: &str = "maxmemory-policy";
        let policy = match self.config("maxmemory-policy").await {
            Ok(p) => Ok(p),
            Err(why) => self
                .info("maxmemory_policy")
                .map(str::to_owned)
                .ok_or(format!("{why}; {}", self.info_reason())),
        };
        let policy = match policy {
            Ok(p) => p,
            Err(why) => {
                return check(
                    NAME,
                    Status::Warn,
                    format!("cannot check the eviction policy ({why})"),
                )
            }
        };
        let maxmemory = match self.config("maxmemory").await {
            Ok(m) => m.parse::<u64>().ok(),
            Err(_) => self.info("maxmemory").and_then(|m| m.parse::<u64>().ok()),
        };
        let (status, message) = judge_eviction(&policy, maxmemory);
        check(NAME, status, message)
    }

    fn replicas(&self) -> Option<u64> {
        self.info("connected_slaves").and_then(|n| n.parse().ok())
    }

    async fn persistence(&mut self) -> Check {
        const NAME: &str = "persistence";
        let aof = match self.config("appendonly").await {
            Ok(v) => Ok(v == "yes"),
            Err(why) => self
                .info("aof_enabled")
                .map(|v| v == "1")
                .ok_or(format!("{why}; {}", self.info_reason())),
        };
        let aof = match aof {
            Ok(a) => a,
            Err(why) => {
                return check(
                    NAME,
                    Status::Warn,
                    format!("cannot check whether AOF is on ({why})"),
                )
            }
        };
        if aof {
            return match self.config("appendfsync").await.as_deref() {
                Ok("no") => check(
                    NAME,
                    Status::Warn,
                    "appendonly yes but appendfsync no: the OS decides when to write, a crash can lose about 30 s of lock writes — set appendfsync everysec",
                ),
                Ok(fsync) => check(NAME, Status::Ok, format!("appendonly yes (appendfsync {fsync})")),
                Err(_) => check(NAME, Status::Ok, "appendonly yes"),
            };
        }
        let rdb = match self.config("save").await {
            Ok(s) if s.trim().is_empty() => "and no RDB snapshots".to_owned(),
            Ok(s) => format!("(RDB snapshots `save {s}` bring back a stale lock state at best)"),
            Err(_) => "(RDB settings unreadable)".to_owned(),
        };
        match self.replicas() {
            Some(n) if n > 0 => check(
                NAME,
                Status::Warn,
                format!("appendonly no {rdb}: a restart of this server forgets every lock; its {n} replica(s) keep them across a failover only — set appendonly yes"),
            ),
            _ => check(
                NAME,
                Status::Fail,
                format!("appendonly no {rdb} and no replica: a restart forgets every lock, and a second client takes a lock that is still held — set appendonly yes"),
            ),
        }
    }

    async fn replication(&mut self) -> Check {
        const NAME: &str = "replication";
        let Some(role) = self.info("role").map(str::to_owned) else {
            return check(
                NAME,
                Status::Warn,
                format!("cannot check replicas ({})", self.info_reason()),
            );
        };
        if role == "slave" {
            let master = format!(
                "{}:{}",
                self.info("master_host").unwrap_or("?"),
                self.info("master_port").unwrap_or("?")
            );
            return check(
                NAME,
                Status::Warn,
                format!("this server is a replica of {master}: locks are taken on the master — run doctor against it"),
            );
        }
        let n = self.replicas().unwrap_or(0);
        if n == 0 {
            return check(
                NAME,
                Status::Ok,
                "master without replicas (no failover can lose a lock)",
            );
        }
        match self.config("min-replicas-to-write").await {
            Ok(m) if m.trim() == "0" => check(
                NAME,
                Status::Warn,
                format!("{n} replica(s) and min-replicas-to-write 0: a failover to a replica that missed a lock write lets a second client take the lock — set min-replicas-to-write 1 (with min-replicas-max-lag), and have clients WAIT for a replica (Redisson does)"),
            ),
            Ok(m) => check(NAME, Status::Ok, format!("{n} replica(s), min-replicas-to-write {m}")),
            Err(why) => check(
                NAME,
                Status::Warn,
                format!("{n} replica(s); cannot check min-replicas-to-write ({why}): without it a failover can lose a lock (mind WAIT)"),
            ),
        }
    }

    async fn cluster(&mut self) -> Check {
        const NAME: &str = "cluster";
        match self.cluster_enabled() {
            None => {
                return check(
                    NAME,
                    Status::Warn,
                    format!("cannot check cluster mode ({})", self.info_reason()),
                )
            }
            Some(false) => return check(NAME, Status::Ok, "not a cluster (cluster_enabled 0)"),
            Some(true) => {}
        }
        let r: redis::RedisResult<String> = redis::cmd("CLUSTER")
            .arg("INFO")
            .query_async(&mut self.conn)
            .await;
        let info = match r {
            Ok(text) => parse_info(&text),
            Err(e) => {
                return check(
                    NAME,
                    Status::Warn,
                    format!("cluster mode, but CLUSTER INFO {}", reason(&e)),
                )
            }
        };
        let num = |k: &str| info.get(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        let state = info.get("cluster_state").map(String::as_str).unwrap_or("?");
        let (assigned, ok, pfail, fail) = (
            num("cluster_slots_assigned"),
            num("cluster_slots_ok"),
            num("cluster_slots_pfail"),
            num("cluster_slots_fail"),
        );
        let size = num("cluster_size");
        if state != "ok" {
            check(
                NAME,
                Status::Fail,
                format!("cluster_state {state} ({assigned} of 16384 slots assigned, {fail} failing): locks in uncovered slots cannot be taken — fix the cluster"),
            )
        } else if assigned < 16384 {
            check(
                NAME,
                Status::Fail,
                format!("only {assigned} of 16384 slots assigned: locks in the others cannot be taken — assign every slot"),
            )
        } else if ok < assigned || pfail > 0 || fail > 0 {
            check(
                NAME,
                Status::Warn,
                format!("cluster_state ok but {pfail} slot(s) possibly failing and {fail} failing"),
            )
        } else {
            check(
                NAME,
                Status::Ok,
                format!("cluster_state ok, all 16384 slots covered by {size} master(s)"),
            )
        }
    }

    async fn round_trip(&mut self) -> Check {
        const NAME: &str = "round-trip";
        let mut samples = Vec::with_capacity(PINGS);
        for _ in 0..PINGS {
            let start = Instant::now();
            let r: redis::RedisResult<String> = redis::cmd("PING").query_async(&mut self.conn).await;
            if let Err(e) = r {
                return check(NAME, Status::Warn, format!("cannot measure: PING {}", reason(&e)));
            }
            samples.push(start.elapsed());
        }
        samples.sort();
        let median = samples[samples.len() / 2];
        let max = samples[samples.len() - 1];
        let (status, message) = judge_round_trip(median, max);
        check(NAME, status, message)
    }

    async fn clock(&mut self) -> Check {
        const NAME: &str = "clock";
        let before = now_ms() as i64;
        let r: redis::RedisResult<(String, String)> = redis::cmd("TIME").query_async(&mut self.conn).await;
        let after = now_ms() as i64;
        let (secs, micros) = match r {
            Ok(t) => t,
            Err(e) => {
                return check(
                    NAME,
                    Status::Warn,
                    format!("cannot compare clocks: TIME {}", reason(&e)),
                )
            }
        };
        let (Ok(secs), Ok(micros)) = (secs.parse::<i64>(), micros.parse::<i64>()) else {
            return check(
                NAME,
                Status::Warn,
                format!("cannot compare clocks: TIME replied {secs:?} {micros:?}"),
            );
        };
        let redis_ms = secs * 1000 + micros / 1000;
        let offset = redis_ms - (before + after) / 2;
        let uncertainty = (after - before) / 2;
        let (status, message) = judge_clock(offset, uncertainty);
        check(NAME, status, message)
    }

    async fn acl(&mut self, args: &DoctorArgs, url_user: Option<&str>) -> Check {
        const NAME: &str = "acl";
        let cluster = self.cluster_enabled() == Some(true);
        let sharded = cluster
            && self
                .version
                .as_deref()
                .and_then(parse_version)
                .is_some_and(|v| v >= (7, 0, 0));
        let probes = probes(&args.name, sharded);
        // denied to most users; then the URL's user, else `default`
        let whoami = redis::cmd("ACL")
            .arg("WHOAMI")
            .query_async::<String>(&mut self.conn)
            .await
            .ok();
        let connected = whoami
            .or_else(|| url_user.map(str::to_owned))
            .unwrap_or_else(|| "default".to_owned());
        let user = args.acl_user.clone().unwrap_or_else(|| connected.clone());

        // 1. ACL DRYRUN (Redis 7.0+, needs the admin's +acl|dryrun): exact, with the reason.
        let mut verdicts = Vec::with_capacity(probes.len());
        let mut dryrun_error = None;
        for p in &probes {
            let mut cmd = redis::cmd("ACL");
            cmd.arg("DRYRUN").arg(&user);
            for a in &p.args {
                cmd.arg(a);
            }
            match cmd.query_async::<Value>(&mut self.conn).await {
                Ok(Value::Okay) => verdicts.push(Verdict::Allowed),
                Ok(Value::SimpleString(s)) if s == "OK" => verdicts.push(Verdict::Allowed),
                Ok(v) => {
                    let text = redis::from_redis_value_ref::<String>(&v).unwrap_or_else(|_| format!("{v:?}"));
                    if text.contains("to run the") {
                        verdicts.push(Verdict::DeniedCommand);
                    } else {
                        let target = denied_object(&text).unwrap_or_else(|| p.targets());
                        verdicts.push(Verdict::DeniedTarget(target));
                    }
                }
                Err(e) => {
                    dryrun_error = Some(e);
                    break;
                }
            }
        }
        let method;
        if let Some(e) = dryrun_error {
            if args.acl_user.as_ref().is_some_and(|u| *u != connected) {
                return check(
                    NAME,
                    Status::Warn,
                    format!("cannot check user `{user}`: ACL DRYRUN {} (run doctor as an admin, or as `{user}` without --acl-user)", reason(&e)),
                );
            }
            // 2. The user checks itself: a script asks redis.acl_check_cmd (Redis 7.0+) for
            //    every probe; the script runs through SCRIPT LOAD + EVALSHA like the locks'.
            match self.self_check(&probes).await {
                Ok(v) => {
                    verdicts = v;
                    method = "redis.acl_check_cmd in a script";
                }
                Err(SelfCheck::Denied(denied)) => {
                    return check(
                        NAME,
                        Status::Fail,
                        format!(
                            "user `{user}` may not run {} (the locks run their scripts with EVALSHA, loading them with SCRIPT LOAD) — add {}; the commands inside the scripts could not be checked",
                            denied.join(" or "),
                            denied.iter().map(|d| rule_for(d)).collect::<Vec<_>>().join(" ")
                        ),
                    )
                }
                Err(SelfCheck::Unsupported(why)) => {
                    return check(
                        NAME,
                        Status::Warn,
                        format!("cannot check user `{user}`'s permissions: ACL DRYRUN {} and {why}", reason(&e)),
                    )
                }
            }
        } else {
            method = "ACL DRYRUN";
        }

        let mut missing_cmds: Vec<String> = Vec::new();
        // (key or channel, the commands denied on it)
        let mut denied_targets: Vec<(String, Vec<String>)> = Vec::new();
        for (p, v) in probes.iter().zip(&verdicts) {
            let target = match v {
                Verdict::Allowed => continue,
                Verdict::DeniedCommand => {
                    if !missing_cmds.contains(&p.rule) {
                        missing_cmds.push(p.rule.clone());
                    }
                    continue;
                }
                Verdict::DeniedTarget(t) => t.clone(),
            };
            let cmd = p.args[0].to_uppercase();
            match denied_targets.iter_mut().find(|(t, _)| *t == target) {
                Some((_, cmds)) if !cmds.contains(&cmd) => cmds.push(cmd),
                Some(_) => {}
                None => denied_targets.push((target, vec![cmd])),
            }
        }
        let denied_targets: Vec<String> = denied_targets
            .into_iter()
            .map(|(t, cmds)| format!("{t} ({})", cmds.join(" ")))
            .collect();
        if missing_cmds.is_empty() && denied_targets.is_empty() {
            return check(
                NAME,
                Status::Ok,
                format!(
                    "user `{user}` may run every command the locks send, on the keys and channels of `{}` ({} checks with {method})",
                    args.name,
                    probes.len()
                ),
            );
        }
        let mut parts = Vec::new();
        if !missing_cmds.is_empty() {
            parts.push(format!("lacks {}", missing_cmds.join(" ")));
        }
        if !denied_targets.is_empty() {
            parts.push(format!("is denied {}", denied_targets.join(", ")));
        }
        check(
            NAME,
            Status::Fail,
            format!(
                "user `{user}` {} for lock `{}` — grant them (see the README's ACL rule set; checked with {method})",
                parts.join("; "),
                args.name
            ),
        )
    }

    /// Runs the checker script as the connected user.
    async fn self_check(&mut self, probes: &[Probe]) -> Result<Vec<Verdict>, SelfCheck> {
        // each probe, then each probe again on the lock's own key / unlock channel: denied
        // there too means the command is denied, else the key or channel is
        let mut argv: Vec<String> = Vec::new();
        for words in probes
            .iter()
            .map(|p| &p.args)
            .chain(probes.iter().map(|p| &p.alt))
        {
            argv.push(words.len().to_string());
            argv.extend(words.iter().cloned());
        }
        let mut denied = Vec::new();
        let load: redis::RedisResult<String> = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(CHECKER)
            .query_async(&mut self.conn)
            .await;
        let reply: Option<redis::RedisResult<Value>> = match load {
            Ok(sha) => {
                let r = redis::cmd("EVALSHA")
                    .arg(&sha)
                    .arg(0)
                    .arg(&argv)
                    .query_async::<Value>(&mut self.conn)
                    .await;
                match r {
                    Err(e) if is_noperm(&e) => {
                        denied.push("EVALSHA".to_owned());
                        None
                    }
                    other => Some(other),
                }
            }
            Err(e) if is_noperm(&e) => {
                denied.push("SCRIPT LOAD".to_owned());
                // is EVALSHA allowed? a script that cannot exist answers NOSCRIPT if so
                let r = redis::cmd("EVALSHA")
                    .arg("0000000000000000000000000000000000000000")
                    .arg(0)
                    .query_async::<Value>(&mut self.conn)
                    .await;
                if matches!(&r, Err(e) if is_noperm(e)) {
                    denied.push("EVALSHA".to_owned());
                }
                None
            }
            Err(e) => Some(Err(e)),
        };
        let reply = match reply {
            Some(r) => r,
            // EVAL is not what the locks use, but it can still run the checker
            None => {
                let r = redis::cmd("EVAL")
                    .arg(CHECKER)
                    .arg(0)
                    .arg(&argv)
                    .query_async::<Value>(&mut self.conn)
                    .await;
                match r {
                    Err(e) if is_noperm(&e) => return Err(SelfCheck::Denied(denied)),
                    other => other,
                }
            }
        };
        let reply =
            reply.map_err(|e| SelfCheck::Unsupported(format!("the checker script {}", reason(&e))))?;
        let items = match reply {
            Value::Array(items) => items,
            Value::BulkString(b) if b == b"unsupported" => {
                return Err(SelfCheck::Unsupported(
                    "redis.acl_check_cmd is missing in scripts (Redis < 7.0)".to_owned(),
                ))
            }
            other => {
                return Err(SelfCheck::Unsupported(format!(
                    "the checker script replied {other:?}"
                )))
            }
        };
        if items.len() != 2 * probes.len() {
            return Err(SelfCheck::Unsupported(format!(
                "the checker script answered {} of {} probes",
                items.len(),
                2 * probes.len()
            )));
        }
        let mut allowed = Vec::with_capacity(items.len());
        for (i, words) in items.into_iter().zip(
            probes
                .iter()
                .map(|p| &p.args)
                .chain(probes.iter().map(|p| &p.alt)),
        ) {
            match i {
                Value::Int(n) => allowed.push(n == 1),
                other => {
                    let text = redis::from_redis_value::<String>(other).unwrap_or_default();
                    return Err(SelfCheck::Unsupported(format!(
                        "redis.acl_check_cmd failed on {}: {text}",
                        words.join(" ")
                    )));
                }
            }
        }
        let (direct, on_lock) = allowed.split_at(probes.len());
        let mut verdicts: Vec<Verdict> = probes
            .iter()
            .zip(direct.iter().zip(on_lock))
            .map(|(p, (&direct, &on_lock))| match (direct, on_lock) {
                (true, _) => Verdict::Allowed,
                (false, true) => Verdict::DeniedTarget(p.targets()),
                (false, false) => Verdict::DeniedCommand,
            })
            .collect();
        // the checker ran through EVAL: the locks' EVALSHA / SCRIPT LOAD were denied
        if !denied.is_empty() {
            for (p, v) in probes.iter().zip(verdicts.iter_mut()) {
                if denied.iter().any(|d| rule_for(d) == p.rule) {
                    *v = Verdict::DeniedCommand;
                }
            }
        }
        Ok(verdicts)
    }
}

enum SelfCheck {
    /// These commands (of EVALSHA, SCRIPT LOAD) and EVAL are denied: no script can run.
    Denied(Vec<String>),
    /// The server cannot answer (Redis < 7.0, or the script failed).
    Unsupported(String),
}

#[derive(Debug)]
enum Verdict {
    Allowed,
    /// The command itself.
    DeniedCommand,
    /// `key X` / `channel X`.
    DeniedTarget(String),
}

/// `SCRIPT LOAD` → `+script|load`, `EVALSHA` → `+evalsha`.
fn rule_for(cmd: &str) -> String {
    format!("+{}", cmd.to_lowercase().replace(' ', "|"))
}

/// Asks `redis.acl_check_cmd` about each probe (ARGV: count, then that many words, repeated).
const CHECKER: &str = r#"
if not redis.acl_check_cmd then return 'unsupported' end
local out, i = {}, 1
while i <= #ARGV do
  local n = tonumber(ARGV[i])
  local args = {}
  for j = 1, n do args[j] = ARGV[i + j] end
  local ok, r = pcall(redis.acl_check_cmd, unpack(args))
  if not ok then
    out[#out + 1] = type(r) == 'table' and (r.err or 'error') or tostring(r)
  elseif r then
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
  i = i + n + 1
end
return out
"#;

/// One command the locks send, with realistic arguments.
struct Probe {
    /// The rule that grants the command (`+hset`, `+script|load`).
    rule: String,
    args: Vec<String>,
    /// The same command on the lock's own key (or its unlock channel, for pub/sub commands).
    alt: Vec<String>,
}

fn is_pubsub(cmd: &str) -> bool {
    matches!(
        cmd,
        "subscribe" | "unsubscribe" | "ssubscribe" | "sunsubscribe" | "publish" | "spublish"
    )
}

impl Probe {
    /// The key or channel it touches, when the server did not say which one it denied.
    fn targets(&self) -> String {
        match self.args.first().map(|c| c.to_lowercase()).as_deref() {
            Some("evalsha") => format!("key {}", self.args.get(3).map(String::as_str).unwrap_or_default()),
            Some(c) if is_pubsub(c) => {
                format!(
                    "channel {}",
                    self.args.get(1).map(String::as_str).unwrap_or_default()
                )
            }
            _ => format!("key {}", self.args.get(1).map(String::as_str).unwrap_or_default()),
        }
    }
}

/// `key X` / `channel X` from ACL DRYRUN's "... no permissions to access the 'X' key".
fn denied_object(msg: &str) -> Option<String> {
    let start = msg.find("access the '")? + "access the '".len();
    let end = msg.rfind('\'')?;
    let name = msg.get(start..end)?;
    let kind = msg.get(end + 1..)?.split_whitespace().next()?;
    Some(format!("{kind} {name}"))
}

/// Every command the client and its scripts send, on `name`'s keys and channels.
fn probes(name: &str, sharded: bool) -> Vec<Probe> {
    let field = "00000000-0000-4000-8000-000000000000:1";
    use redisson_lock::inspect;
    let lock_ch = inspect::lock_channel(name);
    let rw_ch = inspect::rwlock_channel(name);
    let fair_ch = inspect::fair_waiter_channel(name, field);
    let latch = inspect::latch_key(name, "doctor");
    let token = inspect::fence_token_key(name);
    let queue = inspect::fair_queue_key(name);
    let deadlines = inspect::fair_timeout_key(name);
    let rw_timeout = inspect::read_timeout_key(name, field, 1);
    let key_prefix = inspect::read_timeout_key_prefix(name);
    let rw_timeout_prefix = format!("{key_prefix}:{field}:rwlock_timeout");
    let derived = [
        &lock_ch,
        &rw_ch,
        &fair_ch,
        &latch,
        &token,
        &queue,
        &deadlines,
        &rw_timeout,
        &key_prefix,
        &rw_timeout_prefix,
    ];
    let mut out: Vec<Probe> = Vec::new();
    let mut add = |rule: &str, args: &[&str]| {
        let pubsub = is_pubsub(args[0]);
        let alt = args
            .iter()
            .map(|a| match derived.iter().any(|d| d.as_str() == *a) {
                true if pubsub => lock_ch.clone(),
                true => name.to_owned(),
                false => a.to_string(),
            })
            .collect();
        out.push(Probe {
            rule: rule.to_owned(),
            args: args.iter().map(|a| a.to_string()).collect(),
            alt,
        })
    };
    // sent by the client
    add("+script|load", &["script", "load", "return 1"]);
    // the keys the scripts declare (EVALSHA checks them before the script runs)
    for key in [
        name,
        &lock_ch,
        &rw_ch,
        &key_prefix,
        &rw_timeout_prefix,
        &latch,
        &queue,
        &deadlines,
        &token,
    ] {
        add(
            "+evalsha",
            &["evalsha", "0000000000000000000000000000000000000000", "1", key],
        );
    }
    for ch in [&lock_ch, &rw_ch, &fair_ch] {
        add("+subscribe", &["subscribe", ch]);
        add("+unsubscribe", &["unsubscribe", ch]);
    }
    if sharded {
        // the client's probe for sharded pub/sub (denied: it falls back to classic pub/sub,
        // which Redisson 3.22+ does not use in a cluster)
        add("+pubsub|shardnumsub", &["pubsub", "shardnumsub", "0"]);
        for ch in [&lock_ch, &rw_ch, &fair_ch] {
            add("+ssubscribe", &["ssubscribe", ch]);
            add("+sunsubscribe", &["sunsubscribe", ch]);
        }
    }
    add("+hexists", &["hexists", name, field]);
    add("+hget", &["hget", name, field]);
    add("+hget", &["hget", name, "mode"]);
    add("+pttl", &["pttl", name]);
    add("+exists", &["exists", name]);
    add("+get", &["get", &token]);
    add("+del", &["del", &latch]);
    // inside the scripts: the lock hash
    add("+hincrby", &["hincrby", name, field, "1"]);
    add("+hset", &["hset", name, "mode", "write"]);
    add("+hdel", &["hdel", name, field]);
    add("+hlen", &["hlen", name]);
    add("+hgetall", &["hgetall", name]);
    add("+hscan", &["hscan", name, "0"]);
    add("+type", &["type", name]);
    add("+pexpire", &["pexpire", name, "30000"]);
    add("+del", &["del", name]);
    // the attempt latch, the fencing token, a read hold's timeout key
    add("+set", &["set", &latch, "1", "px", "30000"]);
    add("+get", &["get", &latch]);
    add("+incr", &["incr", &token]);
    add("+set", &["set", &rw_timeout, "1", "px", "30000"]);
    add("+pttl", &["pttl", &rw_timeout]);
    add("+pexpire", &["pexpire", &rw_timeout, "30000"]);
    add("+del", &["del", &rw_timeout]);
    add("+exists", &["exists", &rw_timeout]);
    // the fair lock's queue (list) and deadlines (sorted set)
    add("+rpush", &["rpush", &queue, field]);
    add("+lindex", &["lindex", &queue, "0"]);
    add("+lpop", &["lpop", &queue]);
    add("+lrange", &["lrange", &queue, "0", "-1"]);
    add("+lrem", &["lrem", &queue, "0", field]);
    add("+zadd", &["zadd", &deadlines, "1", field]);
    add("+zincrby", &["zincrby", &deadlines, "1", field]);
    add("+zrange", &["zrange", &deadlines, "0", "-1"]);
    add("+zrem", &["zrem", &deadlines, field]);
    add("+zscore", &["zscore", &deadlines, field]);
    add("+pexpire", &["pexpire", &queue, "30000"]);
    add("+del", &["del", &queue]);
    add("+del", &["del", &deadlines]);
    // unlock messages
    for ch in [&lock_ch, &rw_ch, &fair_ch] {
        add("+publish", &["publish", ch, "0"]);
        if sharded {
            add("+spublish", &["spublish", ch, "0"]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_sizes() {
        assert_eq!(parse_version("7.0.15"), Some((7, 0, 15)));
        assert_eq!(parse_version("2.4"), Some((2, 4, 0)));
        assert_eq!(parse_version("x"), None);
        assert_eq!(fmt_bytes(100 << 20), "100mb");
        assert_eq!(fmt_bytes(1000), "1000 bytes");
    }

    #[test]
    fn eviction_verdicts() {
        assert_eq!(judge_eviction("noeviction", Some(1 << 20)).0, Status::Ok);
        let (status, text) = judge_eviction("allkeys-lru", Some(100 << 20));
        assert_eq!(status, Status::Fail);
        assert!(
            text.contains("evicts lock keys") && text.contains("100mb"),
            "{text}"
        );
        let (status, text) = judge_eviction("volatile-ttl", Some(1 << 30));
        assert_eq!(status, Status::Fail);
        assert!(text.contains("every lock key has one"), "{text}");
        assert_eq!(judge_eviction("volatile-lru", Some(0)).0, Status::Warn);
        assert_eq!(judge_eviction("allkeys-random", None).0, Status::Fail);
    }

    #[test]
    fn clock_and_round_trip_thresholds() {
        assert_eq!(judge_clock(0, 0).0, Status::Ok);
        assert!(judge_clock(3, 5).1.contains("agrees"));
        assert_eq!(judge_clock(1_000, 0).0, Status::Ok);
        let (status, text) = judge_clock(-1_500, 1);
        assert_eq!(status, Status::Warn);
        assert!(text.contains("1.500s ahead of"), "{text}");
        assert_eq!(judge_clock(30_001, 0).0, Status::Fail);
        assert!(judge_clock(45_000, 2).1.contains("behind"));
        let ms = Duration::from_millis;
        assert_eq!(judge_round_trip(ms(50), ms(80)).0, Status::Ok);
        assert_eq!(judge_round_trip(ms(51), ms(80)).0, Status::Warn);
        assert_eq!(judge_round_trip(ms(3_001), ms(4_000)).0, Status::Fail);
    }

    #[test]
    fn probe_names_follow_the_prefix_rule() {
        let p = probes("lock:doctor", false);
        assert!(p
            .iter()
            .any(|p| p.args == ["publish", "redisson_lock__channel:{lock:doctor}", "0"]));
        assert!(p
            .iter()
            .any(|p| p.args[0] == "rpush" && p.args[1] == "redisson_lock_queue:{lock:doctor}"));
        assert!(!p.iter().any(|p| p.args[0] == "spublish"));
        assert_eq!(
            denied_object("This user has no permissions to access the 'redisson_lock_queue:{a}' key")
                .as_deref(),
            Some("key redisson_lock_queue:{a}")
        );
        assert_eq!(
            denied_object("This user has no permissions to access the 'x' channel").as_deref(),
            Some("channel x")
        );
        assert_eq!(
            denied_object("This user has no permissions to run the 'get' command"),
            None
        );
        let p = probes("a{x}", true);
        assert!(p.iter().any(|p| p.args == ["pubsub", "shardnumsub", "0"]));
        assert!(p
            .iter()
            .any(|p| p.args == ["spublish", "redisson_lock__channel:a{x}", "0"]));
    }
}
