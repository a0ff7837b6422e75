//! Redisson's reentrant lock (`RLock`): what it sends (`lua/lock/`) and how it reads the replies.

use redis::{ScriptInvocation, Value};

use crate::error::Result;
use crate::kind::{decode_plain, layout, AcquireArgs, AcquireKind, Ctx, Kind, Reenterable, Reply};
use crate::layout::{KeySpec, Layout};
use crate::script::{self, lua};

use super::common;

/// Redisson's reentrant lock (`RLock`, `getLock(name)`): [`RLock`](crate::RLock) is
/// `Lock<Reentrant>`.
///
/// Redis state while held: a hash under the lock's key with one field
/// `<client id>:<owner id>` whose value is the hold count, with a PX TTL of the lease (or the
/// watchdog timeout, renewed every timeout/3 while held without a lease). The full release
/// deletes the key and publishes `0` on `redisson_lock__channel:{<key>}`, which wakes one waiter
/// per subscribed client. Java services using Redisson's `getLock(name)` on the same key contend
/// with us, re-enter only their own holds, and wake up when we release (and we when they do).
pub struct Reentrant {
    _sealed: (),
}

impl Kind for Reentrant {
    fn label(&self) -> &'static str {
        "lock"
    }

    super::rlock_release!();
}

impl AcquireKind for Reentrant {
    const INSTANCE: &'static Self = &Reentrant { _sealed: () };

    type Grant = ();

    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static> {
        layout::acquire(&LOCK_ACQUIRE, c, a)
    }

    fn decode(&self, v: &Value) -> Result<Reply<()>> {
        decode_plain(v)
    }
}

impl Reenterable for Reentrant {}

// the RLock's scripts; the fenced, non-reentrant and spin locks share some of them
lua!(LOCK_ACQUIRE, "lock/acquire", with "common/attempt");
lua!(LOCK_UNLOCK, "lock/unlock", with "common/notify");
lua!(LOCK_FORCE_UNLOCK, "lock/force_unlock", with "common/lock_shape", "common/notify");

/// The commands the RLock's scripts run on its hash.
pub(crate) const HASH_COMMANDS: &[&str] = &[
    "del", "exists", "hexists", "hget", "hgetall", "hincrby", "hlen", "hscan", "pexpire", "pttl", "type",
];

pub(crate) static LAYOUT: Layout = Layout::new(
    "lock",
    "getLock",
    &[
        KeySpec::new("lock", common::lock_key, Some("hash"), false, HASH_COMMANDS)
            .with_client_commands(common::LOCK_READS),
        common::LOCK_CHANNEL_KEY,
        common::LATCH,
    ],
    &[common::LOCK_CHANNEL],
    &[
        &LOCK_ACQUIRE,
        &LOCK_UNLOCK,
        &LOCK_FORCE_UNLOCK,
        &script::LOCK_RENEW_BATCH,
        &script::RESOLVE_ACQUIRE,
        &script::RESOLVE_BY_FIELD,
        &script::MISSING,
    ],
);

impl super::KindLayout for Reentrant {
    const LAYOUT: &'static Layout = &LAYOUT;
    const FAMILY: super::Family = super::Family::Lock;
}

#[cfg(test)]
mod tests {
    fn assert_send_sync_static<T: Send + Sync + 'static>() {}

    #[test]
    fn bounds() {
        assert_send_sync_static::<crate::LockGuard>();
        assert_send_sync_static::<crate::RLock>();
        assert_send_sync_static::<crate::Error>();
    }
}
