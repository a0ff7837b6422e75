//! Redisson's non-reentrant lock (4.4+): the RLock whose owner cannot take it twice
//! (`lua/non_reentrant/`; unlock, force unlock, channel and watchdog are the RLock's).

use redis::{ScriptInvocation, Value};

use crate::error::{Error, Result};
use crate::kind::{decode_plain, layout, AcquireArgs, AcquireKind, Ctx, Kind, Reply};
use crate::layout::{KeySpec, Layout};
use crate::script::{self, lua};

use super::common;
use super::reentrant::{LOCK_FORCE_UNLOCK, LOCK_UNLOCK};

/// Redisson's non-reentrant lock (`getNonReentrantLock(name)`, Redisson 4.4+): a lock its owner
/// can hold only once; [`RNonReentrantLock`](crate::RNonReentrantLock) is
/// `Lock<NonReentrant>`, and its guards have no `reenter`.
///
/// Redis state is the [`RLock`](crate::RLock)'s (a hash `<client id>:<owner id>` → `1`, a PX TTL,
/// unlock messages `0` on `redisson_lock__channel:{<key>}`), but an acquisition by an owner that
/// already holds the lock fails at once with [`Error::AlreadyHeld`](crate::Error::AlreadyHeld) — never a count of 2, never a
/// wait for itself (Java: `IllegalMonitorStateException`). With the default fresh owner per
/// acquisition that can only happen with a pinned owner ([`with_owner`](crate::Lock::with_owner),
/// [`OwnerId::scope`](crate::OwnerId::scope), or the blocking facade's thread owner); other owners wait as usual.
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// use redisson_lock::Error;
/// let lock = client.non_reentrant_lock("lock:job")?.with_owner(7);
/// let guard = lock.lock().await?;
/// assert!(matches!(lock.try_lock().await, Err(Error::AlreadyHeld { .. })));
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
pub struct NonReentrant {
    _sealed: (),
}

impl Kind for NonReentrant {
    fn label(&self) -> &'static str {
        "non-reentrant"
    }

    super::rlock_release!();

    /// `non_reentrant/acquire.lua` refuses a second hold of the owner with Redisson's code.
    fn map_error(&self, key: &str, field: &str, e: Error) -> Error {
        common::already_held(key, field, e)
    }
}

impl AcquireKind for NonReentrant {
    const INSTANCE: &'static Self = &NonReentrant { _sealed: () };

    type Grant = ();

    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static> {
        layout::acquire(&NON_REENTRANT_ACQUIRE, c, a)
    }

    fn decode(&self, v: &Value) -> Result<Reply<()>> {
        decode_plain(v)
    }
}

lua!(NON_REENTRANT_ACQUIRE, "non_reentrant/acquire", with "common/attempt");

pub(crate) static LAYOUT: Layout = Layout::new(
    "non-reentrant",
    "getNonReentrantLock",
    &[
        KeySpec::new(
            "lock",
            common::lock_key,
            Some("hash"),
            false,
            &[
                "del", "exists", "hexists", "hget", "hgetall", "hincrby", "hlen", "hscan", "hset", "pexpire",
                "pttl", "type",
            ],
        )
        .with_client_commands(common::LOCK_READS),
        common::LOCK_CHANNEL_KEY,
        common::LATCH,
    ],
    &[common::LOCK_CHANNEL],
    &[
        &NON_REENTRANT_ACQUIRE,
        &LOCK_UNLOCK,
        &LOCK_FORCE_UNLOCK,
        &script::LOCK_RENEW_BATCH,
        &script::RESOLVE_ACQUIRE,
        &script::RESOLVE_BY_FIELD,
        &script::MISSING,
    ],
);

impl super::KindLayout for NonReentrant {
    const LAYOUT: &'static Layout = &LAYOUT;
    const FAMILY: super::Family = super::Family::Lock;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_errors_pass_through() {
        let other = NonReentrant::INSTANCE.map_error("k", "c:1", Error::Shutdown);
        assert!(matches!(other, Error::Shutdown));
    }

    #[test]
    fn bounds() {
        fn assert_send_sync_static<T: Send + Sync + 'static>() {}
        assert_send_sync_static::<crate::NonReentrantGuard>();
        assert_send_sync_static::<crate::RNonReentrantLock>();
    }
}
