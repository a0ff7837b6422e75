//! The checks on the server's own settings: its version, its eviction policy, its persistence.

use super::{parse_version, Doctor, Refused};
use crate::doctor::{check, skipped, Check, Status};

impl Doctor {
    pub(in crate::doctor) fn version(&self) -> Check {
        const NAME: &str = "version";
        let Some(v) = self.version.clone() else {
            return skipped(
                NAME,
                &["INFO", "HELLO"],
                format!(
                    "could not check the server version ({}; HELLO refused too)",
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
        } else if parsed < (6, 0, 0) {
            check(
                NAME,
                Status::Warn,
                format!("{who} is older than 6.0 (no RESP3, no client tracking, untested here): waiters poll and a lost lock is noticed at the next renewal — upgrade to 6.0 or later"),
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
                format!("{who} (supported; 7.0+ adds sharded pub/sub and ACL DRYRUN)"),
            )
        } else if cluster {
            check(NAME, Status::Ok, format!("{who} (sharded pub/sub available)"))
        } else {
            check(NAME, Status::Ok, who)
        }
    }

    pub(in crate::doctor) async fn eviction(&mut self) -> Check {
        const NAME: &str = "maxmemory-policy";
        let mut refused: Vec<&'static str> = Vec::new();
        let policy = match self.config("maxmemory-policy").await {
            Ok(p) => Ok(p),
            Err(why) => {
                refused.push(why.command);
                self.info("maxmemory_policy")
                    .map(str::to_owned)
                    .ok_or_else(|| self.unread(why))
            }
        };
        let policy = match policy {
            Ok(p) => p,
            Err((commands, why)) => {
                return skipped(
                    NAME,
                    &commands,
                    format!("could not check the eviction policy ({why})"),
                )
            }
        };
        let maxmemory = match self.config("maxmemory").await {
            Ok(m) => m.parse::<u64>().ok(),
            Err(_) => self.info("maxmemory").and_then(|m| m.parse::<u64>().ok()),
        };
        let (status, message) = judge_eviction(&policy, maxmemory);
        let c = check(NAME, status, message);
        // read from INFO instead: the check was made, CONFIG GET was still refused
        c.refusing(&refused)
    }

    /// The commands refused and why, when `CONFIG GET` was refused (`why`) and `INFO` lacks the
    /// field or was refused too.
    fn unread(&self, why: Refused) -> (Vec<&'static str>, String) {
        match self.info_refused() {
            Some(info) => (vec![why.command, info.command], format!("{why}; {info}")),
            None => (vec![why.command], format!("{why}; INFO lacks it")),
        }
    }

    pub(in crate::doctor) async fn persistence(&mut self) -> Check {
        const NAME: &str = "persistence";
        let mut refused: Vec<&'static str> = Vec::new();
        let aof = match self.config("appendonly").await {
            Ok(v) => Ok(v == "yes"),
            Err(why) => {
                refused.push(why.command);
                self.info("aof_enabled")
                    .map(|v| v == "1")
                    .ok_or_else(|| self.unread(why))
            }
        };
        let aof = match aof {
            Ok(a) => a,
            Err((commands, why)) => {
                return skipped(
                    NAME,
                    &commands,
                    format!("could not check whether AOF is on ({why})"),
                )
            }
        };
        if aof {
            let c = match self.config("appendfsync").await.as_deref() {
                Ok("no") => check(
                    NAME,
                    Status::Warn,
                    "appendonly yes but appendfsync no: the OS decides when to write, a crash can lose about 30 s of lock writes — set appendfsync everysec",
                ),
                Ok(fsync) => check(NAME, Status::Ok, format!("appendonly yes (appendfsync {fsync})")),
                Err(_) => check(NAME, Status::Ok, "appendonly yes (appendfsync unreadable)"),
            };
            return c.refusing(&refused);
        }
        let rdb = match self.config("save").await {
            Ok(s) if s.trim().is_empty() => "and no RDB snapshots".to_owned(),
            Ok(s) => format!("(RDB snapshots `save {s}` bring back a stale lock state at best)"),
            Err(_) => "(RDB settings unreadable)".to_owned(),
        };
        let c = match self.replicas() {
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
        };
        c.refusing(&refused)
    }
}

/// `104857600` → `100mb` (as redis.conf would say it), else bytes.
fn fmt_bytes(n: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "gb"), (1 << 20, "mb"), (1 << 10, "kb")];
    for (size, unit) in UNITS {
        if n >= size && n.is_multiple_of(size) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
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
}
