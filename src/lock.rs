//! Redisson's reentrant lock (`RLock`), as a thin layer over the shared machinery.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use redis::ScriptInvocation;

use crate::client::ClientInner;
use crate::core::{Ctx, Held, LockCore, LockKind, Unlocked};
use crate::error::{Error, Result};
use crate::lease::{LeaseState, LostReason};
use crate::owner::{OwnerId, OwnerSel};
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

    fn acquire(&self, c: &Ctx<'_>, lease_ms: u64) -> ScriptInvocation<'static> {
        let mut inv = script::LOCK_ACQUIRE.prepare_invoke();
        inv.key(c.key).arg(lease_ms).arg(c.field);
        inv
    }

    fn release(
        &self,
        c: &Ctx<'_>,
        lease_ms: u64,
        latch: &str,
        latch_ms: u64,
    ) -> ScriptInvocation<'static> {
        let mut inv = script::LOCK_UNLOCK.prepare_invoke();
        inv.key(c.key)
            .key(c.channel)
            .key(latch)
            .arg(0)
            .arg(lease_ms)
            .arg(c.field)
            .arg(c.publish)
            .arg(latch_ms);
        inv
    }

    fn force_release(&self, c: &Ctx<'_>) -> ScriptInvocation<'static> {
        let mut inv = script::LOCK_FORCE_UNLOCK.prepare_invoke();
        inv.key(c.key).key(c.channel).arg(0).arg(c.publish);
        inv
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

/// A reentrant distributed lock, wire-compatible with Redisson's `RLock`.
///
/// Redis state while held: a hash under the lock's key with one field
/// `<client id>:<owner id>` whose value is the hold count, with a PX TTL of the lease (or the
/// watchdog timeout, renewed every timeout/3 while held without a lease). The full release
/// deletes the key and publishes `0` on `redisson_lock__channel:{<key>}`. Java services using
/// Redisson's `getLock(name)` on the same key contend with us, re-enter only their own holds, and
/// wake up when we release (and we when they do).
///
/// The handle is cheap to clone; it names a lock and an owner choice ([`OwnerId`]). Each
/// successful acquisition returns a [`LockGuard`] that remembers its owner.
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

impl std::fmt::Debug for RLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RLock")
            .field("key", &&*self.core.key)
            .field("owner", &self.core.owner)
            .finish()
    }
}

impl RLock {
    pub(crate) fn new(client: Arc<ClientInner>, key: String) -> RLock {
        RLock {
            core: LockCore::new(client, key, &REENTRANT),
        }
    }

    /// The lock's Redis key (the name after the name mapper).
    ///
    /// ```no_run
    /// # fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// assert_eq!(client.lock("a")?.key(), "a");
    /// # Ok(()) }
    /// ```
    pub fn key(&self) -> &str {
        &self.core.key
    }

    /// The same lock acting for a fixed owner id, like Redisson's `lock(threadId)` overloads.
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let as_worker_7 = client.lock("jobs")?.with_owner(7);
    /// let g = as_worker_7.lock().await?;
    /// assert!(as_worker_7.is_held().await?);
    /// assert_eq!(g.owner().get(), 7);
    /// # Ok(()) }
    /// ```
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RLock {
        let mut core = self.core.clone();
        core.owner = OwnerSel::Pinned(owner.into());
        RLock { core }
    }

    /// The owner this handle acts for right now (see [`OwnerId::current`]).
    pub fn owner(&self) -> OwnerId {
        self.core.owner.resolve()
    }

    /// The hash field this handle's owner writes: `<client id>:<owner id>`.
    pub fn field(&self) -> String {
        self.core.field_of(self.owner())
    }

    /// Acquires the lock, waiting as long as it takes; the watchdog keeps it alive until
    /// released (Redisson `lock()`).
    ///
    /// Waiting: after the first failed attempt the caller subscribes to the lock's channel
    /// (shared with other local waiters), then re-tries on every unlock message and after
    /// `min(holder's TTL, poll interval)`. Connection errors while waiting are retried.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future is safe at any point: a waiter just leaves; if Redis granted the lock
    /// in the attempt that was in flight, that hold is released in the background (never renewed).
    ///
    /// # Errors
    ///
    /// [`Error::WrongType`] when the key holds another Redis type; other non-transient errors.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let guard = lock.lock().await?;
    /// guard.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn lock(&self) -> Result<LockGuard> {
        self.core
            .acquire(None, None)
            .await
            .map(|h| LockGuard::new(h.expect("an unbounded wait only ends when acquired")))
    }

    /// Acquires the lock for `lease` (no watchdog: the lock expires after `lease` unless
    /// released), waiting as long as it takes (Redisson `lock(leaseTime, unit)`).
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a lease under 1 ms; otherwise as [`lock`](Self::lock).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let guard = lock.lock_with_lease(Duration::from_secs(10)).await?;
    /// assert_eq!(guard.lease(), Some(Duration::from_secs(10)));
    /// # Ok(()) }
    /// ```
    pub async fn lock_with_lease(&self, lease: Duration) -> Result<LockGuard> {
        self.core
            .acquire(None, Some(lease))
            .await
            .map(|h| LockGuard::new(h.expect("an unbounded wait only ends when acquired")))
    }

    /// One attempt, no waiting (Redisson `tryLock()`): `Ok(None)` when someone else holds it.
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// match lock.try_lock().await? {
    ///     Some(guard) => guard.unlock().await.map(drop)?,
    ///     None => println!("busy"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn try_lock(&self) -> Result<Option<LockGuard>> {
        Ok(self
            .core
            .acquire(Some(Duration::ZERO), None)
            .await?
            .map(LockGuard::new))
    }

    /// Waits up to `wait` (Redisson `tryLock(waitTime, unit)`), watchdog mode.
    ///
    /// Returns within `wait` plus one command timeout, also while Redis is unreachable (then
    /// with the last connection error instead of `Ok(None)`).
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let guard = lock.try_lock_for(Duration::from_millis(500)).await?;
    /// println!("acquired: {}", guard.is_some());
    /// # Ok(()) }
    /// ```
    pub async fn try_lock_for(&self, wait: Duration) -> Result<Option<LockGuard>> {
        Ok(self
            .core
            .acquire(Some(wait), None)
            .await?
            .map(LockGuard::new))
    }

    /// Waits up to `wait` and holds for `lease` without watchdog
    /// (Redisson `tryLock(waitTime, leaseTime, unit)`).
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let guard = lock.try_lock_with_lease(Duration::from_secs(1), Duration::from_secs(30)).await?;
    /// # let _ = guard; Ok(()) }
    /// ```
    pub async fn try_lock_with_lease(
        &self,
        wait: Duration,
        lease: Duration,
    ) -> Result<Option<LockGuard>> {
        Ok(self
            .core
            .acquire(Some(wait), Some(lease))
            .await?
            .map(LockGuard::new))
    }

    /// Runs `body` while holding the lock (watchdog mode) and releases it afterwards, also when
    /// `body` panics (the panic then resumes after the release).
    ///
    /// If the lock is lost while `body` runs (renewal finds it gone, or cannot renew before the
    /// lease deadline), `body` is dropped at its next await point and [`Error::Lost`] is returned:
    /// work does not go on unprotected.
    ///
    /// # Cancel safety
    ///
    /// Dropping the returned future drops `body` and releases the lock in the background.
    ///
    /// # Errors
    ///
    /// Acquisition errors; [`Error::Lost`]; the release's error (e.g. [`Error::NotHeld`] when the
    /// lease ran out unnoticed), in which case `body`'s output is dropped.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let total = lock.run(async { 40 + 2 }).await?;
    /// assert_eq!(total, 42);
    /// # Ok(()) }
    /// ```
    pub async fn run<F: Future>(&self, body: F) -> Result<F::Output> {
        let guard = self.lock().await?;
        let lost = guard.lost();
        let outcome = tokio::select! {
            biased;
            out = AssertUnwindSafe(body).catch_unwind() => Ok(out),
            reason = lost => Err(reason),
        };
        match outcome {
            Ok(Ok(value)) => {
                guard.unlock().await?;
                Ok(value)
            }
            Ok(Err(panic)) => {
                if let Err(e) = guard.unlock().await {
                    tracing::warn!(key = %self.core.key, error = %e, "release after a panic failed");
                }
                std::panic::resume_unwind(panic)
            }
            Err(reason) => {
                let err = Error::Lost {
                    key: guard.key().to_owned(),
                    field: guard.field().to_owned(),
                    reason,
                };
                drop(guard);
                Err(err)
            }
        }
    }

    /// Releases one hold of this handle's owner, without a guard (Redisson `unlock()`), e.g. a
    /// hold whose guard was [`forget`](LockGuard::forget)-ed.
    ///
    /// # Cancel safety
    ///
    /// The release runs in its own task; dropping the future does not cancel it.
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`] when the owner holds nothing; Redis is then unchanged.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// lock.lock().await?.forget(); // Java style: hold without a guard
    /// lock.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(&self) -> Result<Unlocked> {
        self.core.unlock().await
    }

    /// Deletes the lock whoever holds it and wakes a waiter (Redisson `forceUnlock()`).
    /// Returns whether a lock was there. Guards of this client on this lock report
    /// [`LostReason::ForceUnlocked`]; holders elsewhere learn at their next renewal.
    ///
    /// **Use with care:** the holder may still be working under the lock.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let was_locked = lock.force_unlock().await?;
    /// # let _ = was_locked; Ok(()) }
    /// ```
    pub async fn force_unlock(&self) -> Result<bool> {
        self.core.force_unlock().await
    }

    /// Whether anyone holds the lock (Redisson `isLocked()`: `EXISTS`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.is_locked().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_locked(&self) -> Result<bool> {
        let n: i64 = script::cmd(
            &self.core.client.conn,
            self.core.client.config.command_timeout,
            &self.core.key,
            redis::cmd("EXISTS").arg(&*self.core.key),
        )
        .await?;
        Ok(n == 1)
    }

    /// Whether this handle's owner holds the lock (Redisson `isHeldByCurrentThread()`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let g = lock.lock().await?;
    /// assert!(lock.is_held().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held(&self) -> Result<bool> {
        self.is_held_by(self.owner()).await
    }

    /// Whether `owner` of this client holds the lock (Redisson `isHeldByThread(id)`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// assert!(!lock.is_held_by(12345).await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        let field = self.core.field_of(owner.into());
        let n: i64 = script::cmd(
            &self.core.client.conn,
            self.core.client.config.command_timeout,
            &self.core.key,
            redis::cmd("HEXISTS").arg(&*self.core.key).arg(&field),
        )
        .await?;
        Ok(n == 1)
    }

    /// How many times this handle's owner holds the lock (Redisson `getHoldCount()`); 0 if not.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let a = lock.lock().await?;
    /// let b = lock.lock().await?; // same task: re-entry
    /// assert_eq!(lock.hold_count().await?, 2);
    /// # Ok(()) }
    /// ```
    pub async fn hold_count(&self) -> Result<u64> {
        let field = self.field();
        let n: Option<u64> = script::cmd(
            &self.core.client.conn,
            self.core.client.config.command_timeout,
            &self.core.key,
            redis::cmd("HGET").arg(&*self.core.key).arg(&field),
        )
        .await?;
        Ok(n.unwrap_or(0))
    }

    /// The lock's remaining time to live (Redisson `remainTimeToLive()`: `PTTL`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// use redisson_lock::Ttl;
    /// assert_eq!(lock.remain_time_to_live().await?, Ttl::NotLocked);
    /// # Ok(()) }
    /// ```
    pub async fn remain_time_to_live(&self) -> Result<Ttl> {
        let ms: i64 = script::cmd(
            &self.core.client.conn,
            self.core.client.config.command_timeout,
            &self.core.key,
            redis::cmd("PTTL").arg(&*self.core.key),
        )
        .await?;
        Ok(match ms {
            -2 => Ttl::NotLocked,
            -1 => Ttl::NoExpiry,
            ms if ms >= 0 => Ttl::Expires(Duration::from_millis(ms as u64)),
            other => return Err(Error::Protocol(format!("PTTL replied {other}"))),
        })
    }
}

/// Proof of one hold of an [`RLock`]; release it with [`unlock`](Self::unlock).
///
/// The guard carries its owner, so it can be moved to and released from any task. It does not
/// borrow the lock (`'static`, `Send`).
///
/// **On drop** (without `unlock`): renewal for this hold stops at once, and the release is
/// queued to the client's background worker, which runs the unlock script shortly after. Drop
/// never blocks and never panics, also outside a runtime. If the client has shut down (its
/// runtime is gone), nothing is sent and the lock expires with its lease (the watchdog timeout,
/// 30 s by default, or the explicit lease). Prefer `unlock().await` to see the release's result.
#[must_use = "if unused the lock is released at once (in the background)"]
pub struct LockGuard {
    held: Held,
}

impl std::fmt::Debug for LockGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockGuard")
            .field("key", &self.held.key())
            .field("field", &self.held.field())
            .field("lease", &self.held.lease())
            .field("state", &self.held.state())
            .finish()
    }
}

impl LockGuard {
    fn new(held: Held) -> Self {
        LockGuard { held }
    }

    /// Releases this hold: the count goes down by one; at zero the key is deleted and `0` is
    /// published to wake a waiter. A partial release re-applies this hold's lease.
    ///
    /// # Cancel safety
    ///
    /// Renewal stops before anything is sent, and the release runs in its own task: dropping
    /// this future does not cancel it.
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`] when the hold had already ended (the lease ran out, a force unlock,
    /// Redis lost the data): Redis is not changed, and work done under the lock may have
    /// overlapped with another holder's.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// use redisson_lock::Unlocked;
    /// let outer = lock.lock().await?;
    /// let inner = lock.lock().await?;
    /// assert_eq!(inner.unlock().await?, Unlocked::Partial);
    /// assert_eq!(outer.unlock().await?, Unlocked::Released);
    /// # Ok(()) }
    /// ```
    pub async fn unlock(self) -> Result<Unlocked> {
        self.held.unlock().await
    }

    /// Resolves when this hold is lost (see [`LostReason`]); stays pending while it is held.
    /// Select on it to stop work that must not continue without the lock.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only observes.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let guard = lock.lock().await?;
    /// tokio::select! {
    ///     reason = guard.lost() => eprintln!("lost the lock: {reason}"),
    ///     _ = tokio::time::sleep(std::time::Duration::from_secs(5)) => {}
    /// }
    /// # Ok(()) }
    /// ```
    pub fn lost(&self) -> impl Future<Output = LostReason> + Send + 'static {
        self.held.lost()
    }

    /// What this process knows about the hold, without asking Redis.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// use redisson_lock::LeaseState;
    /// let guard = lock.lock().await?;
    /// assert_eq!(guard.state(), LeaseState::Held);
    /// # Ok(()) }
    /// ```
    pub fn state(&self) -> LeaseState {
        self.held.state()
    }

    /// `state() == LeaseState::Held`: granted or renewed recently enough to trust.
    pub fn is_held(&self) -> bool {
        self.state() == LeaseState::Held
    }

    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        self.held.key()
    }

    /// The hash field `<client id>:<owner id>` of this hold.
    pub fn field(&self) -> &str {
        self.held.field()
    }

    /// The owner of this hold.
    pub fn owner(&self) -> OwnerId {
        self.held.owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    pub fn lease(&self) -> Option<Duration> {
        self.held.lease()
    }

    /// Keeps the hold without a guard (watchdog mode: renewal goes on). Release it later with
    /// [`RLock::unlock`] from a handle with the same owner, or let it expire.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// lock.lock().await?.forget();
    /// lock.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub fn forget(self) {
        self.held.forget()
    }
}

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
}
