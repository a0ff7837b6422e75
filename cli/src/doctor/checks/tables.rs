//! What the server does with keys beyond one slot and beyond its tracking table: whether one
//! address hides a cluster (calls carrying keys of several slots are refused with `CROSSSLOT`),
//! and whether the client-tracking table is large enough for the lock keys (Redis drops tracked
//! keys when it is full).

use redis::Value;

use super::{is_noperm, Doctor, Refused};
use crate::doctor::{check, skipped, Check, Status};
use crate::target::Topology;

/// The script of the one-address probe: touches nothing, only declares its keys.
const PROBE: &str = "return 0";
/// Hashes examined at most by the tracking check's lock count (SCAN pages of [`SCAN_COUNT`]).
const SCAN_LIMIT: usize = 100_000;
const SCAN_COUNT: usize = 1_000;

/// The hash slot of a key (CRC16/XMODEM of its hash tag or of the whole key, mod 16384).
fn slot(key: &str) -> u16 {
    let b = key.as_bytes();
    let tagged = b.iter().position(|&c| c == b'{').and_then(|open| {
        let close = b[open + 1..].iter().position(|&c| c == b'}')?;
        (close > 0).then(|| &b[open + 1..open + 1 + close])
    });
    let mut crc: u16 = 0;
    for &byte in tagged.unwrap_or(b) {
        crc ^= (byte as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc % 16384
}

/// The probe's two keys, in different slots: the keys the library's connect-time probe and
/// Redisson's start-up probe declare, so an ACL narrowed for them (`~test1 ~test2`) lets this
/// probe through too. Nothing reads or writes them.
const PROBE_KEYS: [&str; 2] = ["test1", "test2"];

/// The fields of a hash that say it is a lock: an owner field `<client id>:<owner id>...` or
/// a read-write lock's `mode`.
fn looks_like_lock(fields: &[String]) -> bool {
    fields
        .iter()
        .any(|f| f == "mode" || redisson_lock::inspect::parse_field(f).is_some())
}

impl Doctor {
    /// Whether the address is a cluster behind one address (a proxy, a serverless endpoint):
    /// a script over two keys of different slots, which such endpoints refuse with CROSSSLOT
    /// (nothing is written: the script only returns 0).
    pub(in crate::doctor) async fn one_address(&mut self, topology: &Topology) -> Check {
        const NAME: &str = "one-address";
        // one master owning every slot: a plain URL reaches every key there, and is a cluster
        // behind one address for the clients that use one (the probe says so)
        if let Some(Topology::Cluster { masters, .. }) = topology.clone().filter_multi() {
            return check(
                NAME,
                Status::Ok,
                format!(
                    "a Redis Cluster of {} master(s): the lock client is a cluster client (each call goes to its slot's master)",
                    masters.len()
                ),
            );
        }
        let [a, b] = PROBE_KEYS;
        let eval: redis::RedisResult<Value> = redis::cmd("EVAL")
            .arg(PROBE)
            .arg(2)
            .arg(a)
            .arg(b)
            .query_async(&mut self.conn)
            .await;
        // `None`: no way to run the probe
        let (reply, mut refused) = match eval {
            Err(e) if is_noperm(&e) || super::is_unknown(&e) => {
                // the locks' way to run scripts: SCRIPT LOAD + EVALSHA (the crate's ACL rules)
                let eval_refused = Refused::new("EVAL", &e);
                let load: redis::RedisResult<String> = redis::cmd("SCRIPT")
                    .arg("LOAD")
                    .arg(PROBE)
                    .query_async(&mut self.conn)
                    .await;
                match load {
                    Ok(sha) => (
                        Some(
                            redis::cmd("EVALSHA")
                                .arg(&sha)
                                .arg(2)
                                .arg(a)
                                .arg(b)
                                .query_async::<Value>(&mut self.conn)
                                .await,
                        ),
                        vec![eval_refused],
                    ),
                    Err(e) => (None, vec![eval_refused, Refused::new("SCRIPT LOAD", &e)]),
                }
            }
            other => (Some(other), Vec::new()),
        };
        let probe = format!(
            "a script over `{a}` and `{b}` (slots {} and {})",
            slot(a),
            slot(b)
        );
        match reply {
            Some(Ok(_)) => check(
                NAME,
                Status::Ok,
                format!("not a cluster behind one address ({probe} runs)"),
            )
            .refusing(&refused.iter().map(|r| r.command).collect::<Vec<_>>()),
            Some(Err(e)) if e.code() == Some("CROSSSLOT") || e.to_string().contains("CROSSSLOT") => check(
                NAME,
                Status::Ok,
                format!(
                    "cluster behind one address: calls grouped by slot ({probe} answered CROSSSLOT; the client sends each slot's keys apart, e.g. the watchdog's renewals; Redisson's lock scripts each touch one slot)"
                ),
            )
            .refusing(&refused.iter().map(|r| r.command).collect::<Vec<_>>()),
            other => {
                if let Some(Err(e)) = other {
                    let command = if refused.is_empty() { "EVAL" } else { "EVALSHA" };
                    refused.push(Refused::new(command, &e));
                }
                let names: Vec<&str> = refused.iter().map(|r| r.command).collect();
                let why: Vec<String> = refused.iter().map(ToString::to_string).collect();
                skipped(
                    NAME,
                    &names,
                    format!(
                        "could not probe for a cluster behind one address ({}); the client learns it from the first CROSSSLOT",
                        why.join("; ")
                    ),
                )
            }
        }
    }

    /// The client-tracking table (Redis 6+): `tracking-table-max-keys` (0: no limit) against the
    /// keys tracked now (`INFO`'s `tracking_total_keys`) and the lock hashes found by a bounded
    /// `SCAN`. A full table makes Redis drop tracked keys (pushing an invalidation for each, as
    /// if it had changed): the loss signal of those holds degrades to the next renewal.
    pub(in crate::doctor) async fn tracking_table(&mut self) -> Check {
        const NAME: &str = "tracking-table";
        let max = match self.config("tracking-table-max-keys").await {
            Ok(m) => m.parse::<u64>().ok(),
            // an older server knows no such parameter
            Err(why) if why.why.contains("returned nothing") => None,
            Err(why) => {
                return skipped(
                    NAME,
                    &[why.command],
                    format!("could not check the client-tracking table's size ({why})"),
                )
            }
        };
        let Some(max) = max else {
            return check(NAME, Status::Ok, "no client-tracking table (Redis < 6)");
        };
        let tracked = self
            .info("tracking_total_keys")
            .and_then(|n| n.parse::<u64>().ok());
        let (locks, complete, scan_refused) = self.count_locks().await;
        let locks_text = match (&scan_refused, complete) {
            (Some(r), _) => format!("lock hashes not counted ({r})"),
            (None, true) => format!("{locks} lock hash(es) here"),
            (None, false) => {
                format!("at least {locks} lock hash(es) here (the first {SCAN_LIMIT} hashes counted)")
            }
        };
        let tracked_text = match (tracked, self.info_refused()) {
            (Some(t), _) => format!("{t} key(s) tracked now"),
            (None, Some(r)) => format!("keys tracked now unknown ({r})"),
            (None, None) => "keys tracked now unknown".to_owned(),
        };
        let mut refused: Vec<&str> = Vec::new();
        if let Some(r) = &scan_refused {
            refused.push(r.command);
        }
        if tracked.is_none() {
            if let Some(r) = self.info_refused() {
                refused.push(r.command);
            }
        }
        const DEGRADES: &str = "Redis drops tracked keys to make room (pushing an invalidation for each), so for those holds the loss signal degrades to the next renewal";
        if max == 0 {
            return check(
                NAME,
                Status::Ok,
                format!("tracking-table-max-keys 0 (no limit): {tracked_text}, {locks_text}"),
            )
            .refusing(&refused);
        }
        if tracked.is_some_and(|t| t >= max) {
            return check(
                NAME,
                Status::Warn,
                format!("the client-tracking table is full ({tracked_text}, tracking-table-max-keys {max}; {locks_text}): {DEGRADES} — raise tracking-table-max-keys (0: no limit)"),
            )
            .refusing(&refused);
        }
        if scan_refused.is_none() && locks > max {
            return check(
                NAME,
                Status::Warn,
                format!("tracking-table-max-keys {max} is smaller than the lock keys ({locks_text}; {tracked_text}): {DEGRADES} — raise tracking-table-max-keys (0: no limit)"),
            )
            .refusing(&refused);
        }
        if tracked.is_none() || scan_refused.is_some() {
            return skipped(
                NAME,
                &refused,
                format!("tracking-table-max-keys {max}, but could not compare it with the keys ({tracked_text}; {locks_text})"),
            );
        }
        check(
            NAME,
            Status::Ok,
            format!("tracking-table-max-keys {max}: {tracked_text}, {locks_text}"),
        )
    }

    /// Lock hashes on this node, by a SCAN of hashes (at most [`SCAN_LIMIT`] of them) whose first
    /// fields look like a lock's; whether the count is complete; why SCAN could not run.
    async fn count_locks(&mut self) -> (u64, bool, Option<Refused>) {
        let mut cursor: u64 = 0;
        let mut seen = 0usize;
        let mut locks = 0u64;
        loop {
            let page: redis::RedisResult<(u64, Vec<String>)> = redis::cmd("SCAN")
                .arg(cursor)
                .arg("COUNT")
                .arg(SCAN_COUNT)
                .arg("TYPE")
                .arg("hash")
                .query_async(&mut self.conn)
                .await;
            let (next, keys) = match page {
                Ok(p) => p,
                Err(e) => return (locks, false, Some(Refused::new("SCAN", &e))),
            };
            if !keys.is_empty() {
                let mut pipe = redis::pipe();
                for k in &keys {
                    pipe.cmd("HSCAN").arg(k).arg(0).arg("COUNT").arg(4);
                }
                let pages: redis::RedisResult<Vec<(u64, Vec<String>)>> =
                    pipe.query_async(&mut self.conn).await;
                match pages {
                    Ok(pages) => {
                        for (_, flat) in pages {
                            let fields: Vec<String> = flat.into_iter().step_by(2).collect();
                            if looks_like_lock(&fields) {
                                locks += 1;
                            }
                        }
                    }
                    Err(e) => return (locks, false, Some(Refused::new("HSCAN", &e))),
                }
            }
            seen += keys.len();
            cursor = next;
            if cursor == 0 {
                return (locks, true, None);
            }
            if seen >= SCAN_LIMIT {
                return (locks, false, None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_as_redis_computes_them() {
        // CLUSTER KEYSLOT answers
        assert_eq!(slot("foo"), 12182);
        assert_eq!(slot("bar"), 5061);
        assert_eq!(slot("{user1000}.following"), slot("{user1000}.followers"));
        assert_eq!(slot("{}x"), slot("{}x"));
        assert_eq!(slot("123456789"), 0x31C3);
        assert_ne!(slot(PROBE_KEYS[0]), slot(PROBE_KEYS[1]));
    }

    #[test]
    fn lock_fields() {
        assert!(looks_like_lock(&[
            "6f1c2a9e-3b7d-4c11-9a0e-5d2f8b7c4e10:7".to_owned()
        ]));
        assert!(looks_like_lock(&["mode".to_owned()]));
        assert!(!looks_like_lock(&["name".to_owned(), "age".to_owned()]));
    }
}
