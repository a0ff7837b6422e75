//! Redisson's reentrant lock (`RLock`): a lock kind plus thin public types.

use std::sync::Arc;
use std::time::Duration;

use redis::ScriptInvocation;

use crate::client::ClientInner;
use crate::core::{layout, Ctx, Held, LockCore, LockKind};
use crate::error::{Error, Result};
use crate::handle::{lock_guard_methods, lock_handle_methods};
use crate::{name, script};

/// The RLock kind: scripts and names of Redisson's `RedissonLock`.
struct Reentrant;

impl LockKind for Reentrant {
    fn label(&self) -> &'static str {
        "lock"
    }

    fn channel(&self, key: &str) -> String {
        name::lock_channel(key)
    }

    fn acquire(&self, c: &Ctx<'_>, lease_ms: u64, latch: &str, latch_ms: u64) -> ScriptInvocation<'static> {
        layout::acquire(&script::LOCK_ACQUIRE, c, lease_ms, latch, latch_ms)
    }

    fn release(
        &self,
        c: &Ctx<'_>,
        lease_ms: u64,
        latch: &str,
        latch_ms: u64,
        all: bool,
    ) -> ScriptInvocation<'static> {
        layout::release(&script::LOCK_UNLOCK, c, 0, lease_ms, latch, latch_ms, all)
    }

    fn force_release(&self, c: &Ctx<'_>) -> ScriptInvocation<'static> {
        layout::force(&script::LOCK_FORCE_UNLOCK, c, 0)
    }
}

static REENTRANT: Reentrant = Reentrant;

/// What a lock's remaining time to live is (Redisson's `remainTimeToLive`: -2 / -1 / ms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ttl {
    /// Nobody holds the lock (Redisson: `-2`).
    NotLocked,
    /// The key exists without a TTL (Redisson: `-1`); not written by any lock client.
    NoExpiry,
    /// The lock expires in this long unless renewed.
    Expires(Duration),
}

impl Ttl {
    pub(crate) fn from_pttl(ms: i64) -> Result<Ttl> {
        Ok(match ms {
            -2 => Ttl::NotLocked,
            -1 => Ttl::NoExpiry,
            ms if ms >= 0 => Ttl::Expires(Duration::from_millis(ms as u64)),
            other => return Err(Error::Protocol(format!("PTTL replied {other}"))),
        })
    }
}

/// A reentrant distributed lock, wire-compatible with Redisson's `RLock`.
///
/// Redis state while held: a hash under the lock's key with one field
/// `<client id>:<owner id>` whose value is the hold count, with a PX TTL of the lease (or the
/// watchdog timeout, renewed every timeout/3 while held without a lease). The full release
/// deletes the key and publishes `0` on `redisson_lock__channel:{<key>}`. Java services using
/// Redisson's `getLock(name)` on the same key contend with us, re-enter only their own holds, and
/// wake up when we release (and we when they do).
///
/// The handle is cheap to clone; it names a lock and an owner choice
/// ([`OwnerId`](crate::OwnerId)). Each successful acquisition returns a [`LockGuard`] that
/// remembers its owner.
///
/// Redis-based locks are a performance and coordination layer: an asynchronously replicated
/// Redis can lose a lock on failover, and a paused holder can outlive its lease. Protect the
/// resource itself (fencing tokens, conditional updates) where correctness matters.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// use std::time::Duration;
/// let lock = client.lock("lock:order:42")?;
/// if let Some(guard) = lock.try_lock_for(Duration::from_secs(2)).await? {
///     // held; the watchdog keeps it alive until unlock
///     guard.unlock().await?;
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RLock {
    core: LockCore,
}

impl RLock {
    pub(crate) fn new(client: Arc<ClientInner>, key: String) -> RLock {
        RLock {
            core: LockCore::new(client, key, &REENTRANT),
        }
    }

    /// Whether anyone holds the lock (Redisson `isLocked()`: `EXISTS`).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.is_locked().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_locked(&self) -> Result<bool> {
        let n: i64 = self.core.query(redis::cmd("EXISTS").arg(&*self.core.key)).await?;
        Ok(n == 1)
    }
}

lock_handle_methods!(RLock, LockGuard);

/// Proof of one hold of an [`RLock`]; release it with [`unlock`](Self::unlock).
///
/// The guard carries its owner, so it can be moved to and released from any task. It does not
/// borrow the lock (`'static`, `Send`).
///
/// **On drop** (without `unlock`): the release is queued to the client's background worker,
/// which stops renewal for this hold and runs the unlock script shortly after. Drop never blocks
/// and never panics, also outside a runtime. A guard whose hold is known to have ended
/// (`state()` is not `Held`) sends nothing. If the client's runtime is gone, nothing is sent and
/// the lock expires with its lease (the watchdog timeout, 30 s by default, or the explicit
/// lease); [`Client::shutdown`](crate::Client::shutdown) sends every queued release before a
/// service exits. Prefer `unlock().await` to see the release's result.
///
/// Each `lock()` gets a hold of its own (a fresh owner); [`reenter`](Self::reenter) takes a
/// second hold of the same owner (count 2, as a nested `lock()` in one Java thread). Holds of one
/// owner share one fate: the key lives as long as the longest of them needs, and when Redis
/// loses the owner's field all of them report the loss.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
/// use redisson_lock::Unlocked;
/// let outer = lock.lock().await?;
/// let inner = outer.reenter().await?; // a second hold of the same owner
/// assert_eq!(inner.unlock().await?, Unlocked::Partial);
/// tokio::select! {
///     reason = outer.lost() => eprintln!("lost the lock: {reason}"),
///     _ = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
/// }
/// assert_eq!(outer.unlock().await?, Unlocked::Released);
/// # Ok(()) }
/// ```
#[must_use = "if unused the lock is released at once (in the background)"]
pub struct LockGuard {
    held: Held,
}

lock_guard_methods!(LockGuard);

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync_static<T: Send + Sync + 'static>() {}

    #[test]
    fn bounds() {
        assert_send_sync_static::<LockGuard>();
        assert_send_sync_static::<RLock>();
        assert_send_sync_static::<Error>();
    }

    #[test]
    fn ttl_from_pttl() {
        assert_eq!(Ttl::from_pttl(-2).unwrap(), Ttl::NotLocked);
        assert_eq!(Ttl::from_pttl(-1).unwrap(), Ttl::NoExpiry);
        assert_eq!(
            Ttl::from_pttl(1500).unwrap(),
            Ttl::Expires(Duration::from_millis(1500))
        );
        assert!(Ttl::from_pttl(-7).is_err());
    }
}
