//! Redisson's grouped multi-lock (`RedissonFasterMultiLock`, `getMultiLock(group, values)`,
//! 3.38+): what it sends (`lua/group/`) and how it reads the replies.
//!
//! One hash per group holds a sub-lock per value. A hold is of a whole value set, taken and
//! released in one script, so the kind needs the set in every request. Kinds are stateless, and
//! the machinery knows a hold by (key, field) only (the hold table, the watchdog, releases,
//! settling, shutdown); so a grouped lock's handle carries its set as the tail of its hold
//! identity ([`Lock::field_of`](crate::Lock)): `<client id>:<owner id>#<id>,<id>,...`, the value
//! ids sorted and without repeats. This module splits that identity again into the owner's
//! Redis field and the ids; everything else runs on the machinery every kind uses.

use redis::{ScriptInvocation, Value};

use crate::error::Result;
use crate::kind::{
    decode_plain, epoch_ms, AcquireArgs, AcquireKind, Ctx, Kind, Reenterable, ReleaseArgs, Renewal, Reply,
};
use crate::layout::{KeySpec, Layout};
use crate::script::{self, lua};

use super::common;

/// Redisson's grouped multi-lock (`getMultiLock(String group, Collection<Object> values)`,
/// Redisson 3.38+): [`RGroupLock`](crate::RGroupLock) wraps `Lock<Group>`.
///
/// Redis state while held: one hash under the group's key; for each value id `v` (the value as
/// the Java codec encodes it, hashed like a map key: [`EntryKey::hash`](crate::EntryKey::hash))
/// held by owner `o` (`<client id>:<owner id>`), three fields: `v` = `o`,
/// `v:o:expire_time` = the hold's deadline in epoch ms by the writer's clock, `v:o:lock_count`
/// = the owner's holds of `v`. The key's PX TTL is at least the longest lease in it. A value is
/// taken while its holder's deadline is ahead of the reader's clock (Redisson's rule: clocks of
/// Java and Rust hosts must agree to well under a lease). Releasing the last hold of a value
/// deletes its fields and publishes `0` on `redisson_lock__channel:{<group>}`, which wakes the
/// group's waiters, Java and Rust.
pub struct Group {
    _sealed: (),
}

/// Between the owner's field and the value ids in a grouped lock's hold identity; never in a
/// value id (base64) nor after the owner's field, so the last one splits.
pub(crate) const TAIL_START: char = '#';

/// The tail of the hold identity of a value set: `#id,id,...`, the ids sorted, repeats gone
/// (Redisson keeps a set of them too). `None` for an empty set.
pub(crate) fn tail_of<'a>(ids: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut ids: Vec<&str> = ids.into_iter().collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return None;
    }
    let mut tail = String::with_capacity(1 + ids.iter().map(|i| i.len() + 1).sum::<usize>());
    tail.push(TAIL_START);
    tail.push_str(&ids.join(","));
    Some(tail)
}

/// A hold identity split into the owner's Redis field and the value ids (none when it has no
/// tail: then no value is touched).
pub(crate) fn split(identity: &str) -> (&str, impl Iterator<Item = &str> + Clone) {
    let (owner, ids) = identity.rsplit_once(TAIL_START).unwrap_or((identity, ""));
    (owner, ids.split(',').filter(|s| !s.is_empty()))
}

impl Kind for Group {
    fn label(&self) -> &'static str {
        "group"
    }

    fn write_channel(&self, out: &mut String, key: &str, _field: &str) {
        crate::name::push_lock_channel(out, key)
    }

    fn release(&self, c: &Ctx<'_>, a: &ReleaseArgs<'_>) -> ScriptInvocation<'static> {
        let (owner, ids) = split(c.field);
        let mut inv = GROUP_UNLOCK.prepare_invoke();
        inv.key(c.key)
            .key(c.channel)
            .key(a.latch)
            .arg(0u8)
            .arg(a.ttl_ms)
            .arg(owner)
            .arg(c.publish)
            .arg(a.latch_ms)
            .arg(u8::from(a.all))
            .arg(c.now_ms());
        for id in ids {
            inv.arg(id);
        }
        inv
    }

    /// Frees the values of `c.field`'s tail, whoever holds them (the owner part is not read).
    fn force_release(&self, c: &Ctx<'_>) -> ScriptInvocation<'static> {
        let (_, ids) = split(c.field);
        let mut inv = GROUP_FORCE_UNLOCK.prepare_invoke();
        inv.key(c.key).key(c.channel).arg(0u8).arg(c.publish);
        for id in ids {
            inv.arg(id);
        }
        inv
    }

    fn renewal(&self) -> Option<&'static dyn Renewal> {
        Some(&GroupRenewal)
    }

    /// Every grant keeps the later deadline of each value and the longer TTL of the key.
    fn ttl_only_grows(&self) -> bool {
        true
    }
}

impl AcquireKind for Group {
    const INSTANCE: &'static Self = &Group { _sealed: () };

    type Grant = ();

    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static> {
        let (owner, ids) = split(c.field);
        let mut inv = GROUP_ACQUIRE.prepare_invoke();
        inv.key(c.key)
            .key(a.latch)
            .arg(a.ttl_ms)
            .arg(c.now_ms())
            .arg(owner)
            .arg(a.latch_ms);
        for id in ids {
            inv.arg(id);
        }
        inv
    }

    fn decode(&self, v: &Value) -> Result<Reply<()>> {
        decode_plain(v)
    }

    /// A grant changes several fields, none of which tells it apart from an earlier hold of
    /// the same owner: the attempt's latch records every grant.
    fn field_records_grant(&self) -> bool {
        false
    }
}

impl Reenterable for Group {}

/// The grouped lock's renewal: each hold's values get a later deadline, the key a longer TTL.
pub(crate) struct GroupRenewal;

impl Renewal for GroupRenewal {
    fn name(&self) -> &'static str {
        "group"
    }

    fn renew(&self, ttl_ms: u64, locks: &[(&str, Vec<&str>)], track: bool) -> ScriptInvocation<'static> {
        let mut inv = GROUP_RENEW_BATCH.prepare_invoke();
        inv.arg(ttl_ms).arg(epoch_ms());
        for (key, fields) in locks {
            for field in fields {
                let (owner, ids) = split(field);
                inv.key(*key).arg(owner).arg(ids.clone().count());
                for id in ids {
                    inv.arg(id);
                }
            }
        }
        inv.arg(u8::from(track));
        inv
    }

    /// `HMGET` of the owner's `<id>:<owner>:lock_count` fields: they exist while the owner
    /// holds the values (every release and every takeover of a lapsed hold deletes them; the
    /// renewal checks the holders and deadlines too).
    fn presence(&self, pipe: &mut redis::Pipeline, key: &str, field: &str) {
        let (owner, ids) = split(field);
        let cmd = pipe.cmd("HMGET").arg(key);
        for id in ids {
            cmd.arg(format!("{id}:{owner}:lock_count"));
        }
    }

    fn read_presence(&self, v: &Value) -> Option<bool> {
        match v {
            Value::Array(counts) => Some(counts.iter().all(|c| !matches!(c, Value::Nil))),
            _ => None,
        }
    }
}

// the grouped lock's scripts
lua!(GROUP_ACQUIRE, "group/acquire", with "common/attempt");
lua!(GROUP_UNLOCK, "group/unlock", with "common/notify");
lua!(GROUP_FORCE_UNLOCK, "group/force_unlock", with "common/notify");
lua!(GROUP_RENEW_BATCH, "group/renew_batch", with "common/extend_ttl");
lua!(GROUP_IS_LOCKED, "group/is_locked");
lua!(GROUP_HOLD_COUNT, "group/hold_count");

/// Whether anyone holds one of `ids` of the group `key` (Redisson's `isLocked()` of it).
pub(crate) fn is_locked<'a>(key: &str, ids: impl IntoIterator<Item = &'a str>) -> ScriptInvocation<'static> {
    let mut inv = GROUP_IS_LOCKED.prepare_invoke();
    inv.key(key).arg(epoch_ms());
    for id in ids {
        inv.arg(id);
    }
    inv
}

/// How many times the hold identity `identity` holds its whole value set on `key` (0: not).
pub(crate) fn hold_count(key: &str, identity: &str) -> ScriptInvocation<'static> {
    let (owner, ids) = split(identity);
    let mut inv = GROUP_HOLD_COUNT.prepare_invoke();
    inv.key(key).arg(epoch_ms()).arg(owner);
    for id in ids {
        inv.arg(id);
    }
    inv
}

/// The commands the grouped lock's scripts run on its hash.
const HASH_COMMANDS: &[&str] = &[
    "exists", "hdel", "hget", "hincrby", "hset", "pexpire", "pttl", "type",
];

/// What the grouped lock keeps in Redis and sends (`inspect::group_layout`). Not in the
/// registry of kinds (`lock_kinds!`): a grouped lock is opened by its values, not by a name
/// alone.
pub(crate) static LAYOUT: Layout = Layout::new(
    "group",
    "getMultiLock(group, values)",
    &[
        KeySpec::new("lock", common::lock_key, Some("hash"), false, HASH_COMMANDS)
            .with_client_commands(&["hmget"]),
        common::LOCK_CHANNEL_KEY,
        common::LATCH,
    ],
    &[common::LOCK_CHANNEL],
    &[
        &GROUP_ACQUIRE,
        &GROUP_UNLOCK,
        &GROUP_FORCE_UNLOCK,
        &GROUP_RENEW_BATCH,
        &GROUP_IS_LOCKED,
        &GROUP_HOLD_COUNT,
        &script::RESOLVE_ACQUIRE,
    ],
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_round_trip() {
        let tail = tail_of(["b", "a", "b"]).expect("a tail");
        assert_eq!(tail, "#a,b");
        let identity = format!("c1-d:7{tail}");
        let (owner, ids) = split(&identity);
        assert_eq!(owner, "c1-d:7");
        assert_eq!(ids.collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(tail_of([]), None);
        // a client id with the separator in it still splits at the tail
        let (owner, ids) = split("we#ird:7#x");
        assert_eq!((owner, ids.collect::<Vec<_>>()), ("we#ird:7", vec!["x"]));
        let (owner, ids) = split("c:7");
        assert_eq!((owner, ids.count()), ("c:7", 0));
    }

    #[test]
    fn layout_declares_what_the_scripts_send() {
        let mut declared: std::collections::BTreeSet<&str> = LAYOUT
            .keys()
            .iter()
            .flat_map(|k| k.commands().iter().copied())
            .collect();
        declared.extend(["publish", "spublish"]);
        assert_eq!(declared, LAYOUT.commands());
    }

    #[test]
    fn presence_reads_every_count() {
        let r = GroupRenewal;
        let bulk = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        assert_eq!(
            r.read_presence(&Value::Array(vec![bulk("1"), bulk("2")])),
            Some(true)
        );
        assert_eq!(
            r.read_presence(&Value::Array(vec![bulk("1"), Value::Nil])),
            Some(false)
        );
        assert_eq!(r.read_presence(&Value::Int(1)), None);
    }
}
