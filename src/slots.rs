//! Whether one call may carry keys of several hash slots.
//!
//! A Redis Cluster refuses a script or a multi-key command whose keys hash to different slots
//! (`CROSSSLOT`). So does everything that looks like one server but is a cluster behind it: a
//! cluster proxy, a serverless endpoint, a cluster-enabled server that owns every slot. The
//! client's batched calls (renewal rounds, the latch janitor's `DEL`, the check for locks gone
//! without a message) are then split into one call per slot. What decides it is what the server
//! says, never a version or a product name:
//!
//! - a cluster connection groups by slot from the start;
//! - any other connection is asked once at connect: a script call over two keys of different
//!   slots (`EVALSHA` of a script that does not exist) is answered `CROSSSLOT` by such an
//!   endpoint, before the script is looked up, and `NOSCRIPT` by any other; nothing runs;
//! - a `CROSSSLOT` answer met later (an endpoint that changed, or a probe that could not be
//!   asked) switches to per-slot grouping at once, and the batch is sent again grouped: it never
//!   ends a hold.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use redis::cluster_routing::Slot;

use crate::conn::Connection;
use crate::error::Error;

/// Two keys of different hash slots (checked by a test), for the probe: the keys Redisson's own
/// probe at start-up declares, so that an ACL narrowed to the lock names needs one pair of
/// extra key rules (`~test1 ~test2`) for both libraries. Nothing reads or writes them.
const PROBE_KEYS: [&str; 2] = ["test1", "test2"];
/// The SHA1 of no script the client loads (nor anyone: it is not the digest of any text found).
const NO_SCRIPT: &str = "0000000000000000000000000000000000000000";

/// Why calls are grouped by slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Grouping {
    /// One call may carry any keys: a plain server.
    Together = 0,
    /// A cluster connection.
    Cluster = 1,
    /// A server reached by one address answered the probe at connect with `CROSSSLOT`.
    Probed = 2,
    /// A call was answered `CROSSSLOT` after connect.
    Learned = 3,
}

impl Grouping {
    fn from_u8(v: u8) -> Grouping {
        match v {
            1 => Grouping::Cluster,
            2 => Grouping::Probed,
            3 => Grouping::Learned,
            _ => Grouping::Together,
        }
    }
}

/// The client's rule for calls that carry several keys.
#[derive(Debug)]
pub(crate) struct Slots {
    grouping: AtomicU8,
}

impl Slots {
    /// The rule for `conn`: a cluster connection groups by slot; any other is probed once (one
    /// round trip at connect, bounded by `timeout`). A probe that cannot be answered leaves
    /// calls together until a `CROSSSLOT` answer says otherwise.
    pub(crate) async fn detect(conn: &Connection, timeout: Duration) -> Slots {
        let grouping = if conn.is_cluster() {
            Grouping::Cluster
        } else {
            // the slot rule is checked before the script is looked up: a cluster-like endpoint
            // answers CROSSSLOT, any other NOSCRIPT (nothing runs; EVALSHA is a command the
            // client needs anyway, where EVAL may be denied to it)
            let mut probe = redis::cmd("EVALSHA");
            probe.arg(NO_SCRIPT).arg(2).arg(PROBE_KEYS[0]).arg(PROBE_KEYS[1]);
            match crate::script::cmd::<redis::Value>(conn, timeout, PROBE_KEYS[0], &probe).await {
                Ok(_) => Grouping::Together,
                Err(Error::Redis(e)) if e.code() == Some("NOSCRIPT") => Grouping::Together,
                Err(e) if is_cross_slot(&e) => {
                    tracing::info!("a cluster behind one address (a script over two slots was refused): calls carrying several keys are grouped by slot");
                    Grouping::Probed
                }
                Err(e) => {
                    tracing::debug!(error = %e, "could not ask whether the server takes keys of several slots in one call; a CROSSSLOT answer will tell");
                    Grouping::Together
                }
            }
        };
        Slots {
            grouping: AtomicU8::new(grouping as u8),
        }
    }

    /// A rule fixed from the start (tests).
    #[cfg(test)]
    pub(crate) fn fixed(grouping: Grouping) -> Slots {
        Slots {
            grouping: AtomicU8::new(grouping as u8),
        }
    }

    /// Why calls are grouped as they are.
    pub(crate) fn grouping(&self) -> Grouping {
        Grouping::from_u8(self.grouping.load(Ordering::Relaxed))
    }

    /// Whether a call must keep its keys in one slot.
    pub(crate) fn per_slot(&self) -> bool {
        self.grouping() != Grouping::Together
    }

    /// Splits `items` into groups that may share one call: one per hash slot when the rule
    /// says so, else a single group.
    pub(crate) fn groups<T>(&self, items: Vec<T>, key: impl Fn(&T) -> &str) -> Vec<Vec<T>> {
        if items.is_empty() {
            return Vec::new();
        }
        if !self.per_slot() {
            return vec![items];
        }
        let mut groups: HashMap<Slot, Vec<T>> = HashMap::new();
        for it in items {
            groups
                .entry(Slot::for_key(key(&it).as_bytes()))
                .or_default()
                .push(it);
        }
        groups.into_values().collect()
    }

    /// Reads a call's error: true when it refused keys of several slots while the rule kept
    /// them together (the rule now groups by slot: send the call again, grouped). Said once.
    pub(crate) fn refused_together(&self, e: &Error) -> bool {
        if !is_cross_slot(e) {
            return false;
        }
        let was = self.grouping.compare_exchange(
            Grouping::Together as u8,
            Grouping::Learned as u8,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        match was {
            Ok(_) => {
                tracing::warn!(error = %e, "the server refused keys of several slots in one call (a cluster behind one address): from now on such calls are grouped by slot");
                true
            }
            // grouped already: a call of one slot cannot be refused so; another caller may have
            // switched the rule after this call was split (it is sent again)
            Err(_) => true,
        }
    }
}

/// Whether `e` is a refusal of keys that hash to different slots (Redis: `CROSSSLOT Keys in
/// request don't hash to the same slot`; proxies word it their own way but keep the code or
/// the phrase).
pub(crate) fn is_cross_slot(e: &Error) -> bool {
    match e {
        Error::Redis(r) => {
            r.code() == Some("CROSSSLOT") || {
                let text = r.to_string();
                text.contains("CROSSSLOT") || text.contains("hash to the same slot")
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_keys_hash_to_different_slots() {
        assert_ne!(
            Slot::for_key(PROBE_KEYS[0].as_bytes()),
            Slot::for_key(PROBE_KEYS[1].as_bytes())
        );
    }

    #[test]
    fn groups_split_only_when_the_rule_says_so() {
        let keys = vec!["a", "b", "{a}:x", "c"];
        let together = Slots::fixed(Grouping::Together);
        assert_eq!(together.groups(keys.clone(), |k| k), vec![keys.clone()]);
        let per_slot = Slots::fixed(Grouping::Probed);
        let groups = per_slot.groups(keys, |k| k);
        let with_a = groups.iter().find(|g| g.contains(&"a")).unwrap();
        assert!(
            with_a.contains(&"{a}:x"),
            "a hash tag keeps keys together: {groups:?}"
        );
        for g in &groups {
            let slot = Slot::for_key(g[0].as_bytes());
            assert!(g.iter().all(|k| Slot::for_key(k.as_bytes()) == slot));
        }
        assert!(per_slot.groups(Vec::<&str>::new(), |k| k).is_empty());
    }

    #[test]
    fn a_cross_slot_refusal_switches_the_rule_once() {
        let reply =
            redis::parse_redis_value(b"-CROSSSLOT Keys in request don't hash to the same slot\r\n").unwrap();
        let e = Error::Redis(reply.extract_error().unwrap_err());
        let slots = Slots::fixed(Grouping::Together);
        assert!(slots.refused_together(&e));
        assert_eq!(slots.grouping(), Grouping::Learned);
        assert!(slots.per_slot());
        let other = Error::Redis(redis::RedisError::from((redis::ErrorKind::Io, "broken pipe")));
        assert!(!slots.refused_together(&other));
        let fixed = Slots::fixed(Grouping::Cluster);
        assert!(fixed.refused_together(&e));
        assert_eq!(fixed.grouping(), Grouping::Cluster, "a cluster stays a cluster");
    }
}
