//! Redisson's spin lock (`RSpinLock`, 3.15+): the RLock's hash without pub/sub; waiters poll with
//! a back-off (`lua/spin/`; the acquire is the RLock's `lua/lock/acquire.lua`).

use redis::{ScriptInvocation, Value};

use crate::core::Lock;
use crate::error::Result;
use crate::kind::{
    decode_plain, layout, AcquireArgs, AcquireKind, Ctx, Kind, Reenterable, ReleaseArgs, Reply, Wake,
};
use crate::layout::{KeySpec, Layout};
use crate::script::{self, lua};
use crate::{name, BackOff};

use super::common;
use super::reentrant::{HASH_COMMANDS, LOCK_ACQUIRE};

/// Redisson's spin lock (`RSpinLock`, `getSpinLock(name)`, Redisson 3.15+): a reentrant lock
/// whose waiters poll instead of listening for unlock messages; [`RSpinLock`](crate::RSpinLock)
/// is `Lock<Spin>`.
///
/// Redis state is the [`RLock`](crate::RLock)'s: a hash `<client id>:<owner id>` → count with a
/// PX TTL (the lease, or the watchdog timeout renewed every timeout/3). Nobody subscribes and
/// an unlock publishes nothing: waiters sleep with a [`BackOff`] (exponential 1 ms ×2 + jitter,
/// capped at 128 ms, by default) between attempts. Use it where pub/sub is unavailable or too
/// costly (a managed Redis without pub/sub, very many short waits on many locks); a waiter learns
/// of a release only at its next poll.
///
/// Interop: Java's spin locks on the same name contend with ours; RLock waiters on the same name
/// are not woken by a spin unlock (they poll after their poll interval).
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// use std::time::Duration;
/// use redisson_lock::BackOff;
/// let lock = client.spin_lock("lock:report")?;
/// let guard = lock.lock().await?;
/// guard.unlock().await?;
/// let gentle = lock.with_backoff(BackOff::constant(Duration::from_millis(64)))?;
/// let maybe = gentle.try_lock_for(Duration::from_secs(1)).await?;
/// # drop(maybe); Ok(()) }
/// ```
pub struct Spin {
    _sealed: (),
}

impl Kind for Spin {
    fn label(&self) -> &'static str {
        "spin"
    }

    fn write_channel(&self, out: &mut String, key: &str, _field: &str) {
        name::push_lock_channel(out, key) // never published or subscribed to; named for inspection
    }

    fn wake(&self) -> Wake {
        Wake::Backoff(BackOff::exponential())
    }

    fn release(&self, c: &Ctx<'_>, a: &ReleaseArgs<'_>) -> ScriptInvocation<'static> {
        let mut inv = SPIN_UNLOCK.prepare_invoke();
        inv.key(c.key)
            .key(a.latch)
            .arg(a.ttl_ms)
            .arg(c.field)
            .arg(a.latch_ms)
            .arg(u8::from(a.all));
        inv
    }

    fn force_release(&self, c: &Ctx<'_>) -> ScriptInvocation<'static> {
        let mut inv = SPIN_FORCE_UNLOCK.prepare_invoke();
        inv.key(c.key);
        inv
    }
}

impl AcquireKind for Spin {
    const INSTANCE: &'static Self = &Spin { _sealed: () };

    type Grant = ();

    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static> {
        layout::acquire(&LOCK_ACQUIRE, c, a)
    }

    fn decode(&self, v: &Value) -> Result<Reply<()>> {
        decode_plain(v)
    }
}

impl Reenterable for Spin {}

lua!(SPIN_UNLOCK, "spin/unlock");
lua!(SPIN_FORCE_UNLOCK, "spin/force_unlock", with "common/lock_shape");

/// No channel: waiters poll, and unlocks publish nothing.
pub(crate) static LAYOUT: Layout = Layout::new(
    "spin",
    "getSpinLock",
    &[
        KeySpec::new("lock", common::lock_key, Some("hash"), false, HASH_COMMANDS)
            .with_client_commands(common::LOCK_READS),
        common::LATCH,
    ],
    &[],
    &[
        &LOCK_ACQUIRE,
        &SPIN_UNLOCK,
        &SPIN_FORCE_UNLOCK,
        &script::LOCK_RENEW_BATCH,
        &script::RESOLVE_ACQUIRE,
        &script::RESOLVE_BY_FIELD,
        &script::MISSING,
    ],
);

impl Lock<Spin> {
    /// The same lock waiting with `backoff` (Redisson's `getSpinLock(name, backOff)`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a delay under 1 ms or over
    /// [`MAX_DURATION`](crate::MAX_DURATION), a multiplier of 0, or `initial > max`.
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RSpinLock) -> redisson_lock::Result<()> {
    /// let lock = lock.with_backoff(redisson_lock::BackOff::constant(std::time::Duration::from_millis(64)))?;
    /// # Ok(()) }
    /// ```
    pub fn with_backoff(&self, backoff: BackOff) -> Result<Lock<Spin>> {
        backoff.validate()?;
        let mut lock = self.clone();
        lock.wake = Wake::Backoff(backoff);
        Ok(lock)
    }
}

impl super::KindLayout for Spin {
    const LAYOUT: &'static Layout = &LAYOUT;
    const FAMILY: super::Family = super::Family::Lock;
}

#[cfg(test)]
mod tests {
    #[test]
    fn bounds() {
        fn assert_send_sync_static<T: Send + Sync + 'static>() {}
        assert_send_sync_static::<crate::SpinGuard>();
        assert_send_sync_static::<crate::RSpinLock>();
    }
}
