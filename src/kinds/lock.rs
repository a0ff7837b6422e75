//! Redisson's reentrant lock (`RLock`): the kind (`lua/lock/`) and its public types.

use std::sync::Arc;
use std::time::Duration;

use redis::{ScriptInvocation, Value};

use crate::core::{Held, LockCore};
use crate::error::Result;
use crate::inner::ClientInner;
use crate::kind::{decode_plain, layout, AcquireArgs, AcquireKind, Ctx, Kind, Reentrant, ReleaseArgs, Reply};
use crate::{name, script, LeaseState, LostReason, OwnerId, Ttl, Unlocked};

/// The RLock kind: Redisson's `RedissonLock`.
pub(crate) struct ReentrantKind;

impl Kind for ReentrantKind {
    fn label(&self) -> &'static str {
        "lock"
    }

    fn write_channel(&self, out: &mut String, key: &str, _field: &str) {
        name::push_lock_channel(out, key)
    }

    fn release(&self, c: &Ctx<'_>, a: &ReleaseArgs<'_>) -> ScriptInvocation<'static> {
        layout::release(&script::LOCK_UNLOCK, c, 0, a)
    }

    fn force_release(&self, c: &Ctx<'_>) -> ScriptInvocation<'static> {
        layout::force(&script::LOCK_FORCE_UNLOCK, c, 0)
    }
}

impl AcquireKind for ReentrantKind {
    type Grant = ();

    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static> {
        layout::acquire(&script::LOCK_ACQUIRE, c, a)
    }

    fn decode(&self, v: &Value) -> Result<Reply<()>> {
        decode_plain(v)
    }
}

impl Reentrant for ReentrantKind {}

pub(crate) static REENTRANT: ReentrantKind = ReentrantKind;

/// A reentrant distributed lock, wire-compatible with Redisson's `RLock`.
///
/// Redis state while held: a hash under the lock's key with one field
/// `<client id>:<owner id>` whose value is the hold count, with a PX TTL of the lease (or the
/// watchdog timeout, renewed every timeout/3 while held without a lease). The full release
/// deletes the key and publishes `0` on `redisson_lock__channel:{<key>}`. Java services using
/// Redisson's `getLock(name)` on the same key contend with us, re-enter only their own holds, and
/// wake up when we release (and we when they do).
///
/// The handle is cheap to clone; it names a lock and an owner choice ([`OwnerId`]): by default
/// every acquisition has a fresh owner, so two acquisitions exclude each other even in one task;
/// [`LockGuard::reenter`] takes another hold of the same owner.
///
/// Redis-based locks are a performance and coordination layer: an asynchronously replicated
/// Redis can lose a lock on failover, and a paused holder can outlive its lease. Protect the
/// resource itself ([`RFencedLock`](crate::RFencedLock) tokens, conditional updates) where
/// correctness matters.
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
    pub(crate) core: LockCore<ReentrantKind>,
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
    /// # fn demo(lock: redisson_lock::RLock) { println!("{}", lock.key()); }
    /// ```
    pub fn key(&self) -> &str {
        &self.core.key
    }

    /// The same lock acting for a fixed owner id, like Redisson's `lock(threadId)` overloads:
    /// its acquisitions re-enter each other, and the handle-level [`unlock`](Self::unlock),
    /// [`is_held`](Self::is_held) and [`hold_count`](Self::hold_count) act for it.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let as_worker_7 = lock.with_owner(7);
    /// let guard = as_worker_7.lock().await?;
    /// assert_eq!(guard.owner().get(), 7);
    /// # Ok(()) }
    /// ```
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RLock {
        RLock {
            core: self.core.with_owner(owner.into()),
        }
    }

    /// The owner this handle acts for: the pinned one, else the enclosing
    /// [`OwnerId::scope`]; `None` when each acquisition gets a fresh owner (the default).
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RLock) { assert_eq!(lock.with_owner(3).owner().map(|o| o.get()), Some(3)); }
    /// ```
    pub fn owner(&self) -> Option<OwnerId> {
        self.core.owner.fixed()
    }

    /// The hash field this handle's owner writes, when it has one (see [`owner`](Self::owner)).
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RLock) { println!("{:?}", lock.with_owner(3).field()); }
    /// ```
    pub fn field(&self) -> Option<String> {
        self.core.handle_field()
    }

    /// Acquires the lock, waiting as long as it takes, in watchdog mode (Redisson `lock()`): the
    /// key gets the watchdog timeout (30 s) as TTL and is renewed every timeout/3 while the
    /// guard lives.
    ///
    /// The hold belongs to a fresh owner (unless the handle has one: [`with_owner`](Self::with_owner),
    /// [`OwnerId::scope`]), so a second `lock()` waits for the first guard even in the same
    /// task, like `tokio::sync::Mutex`; take another hold of the same owner with
    /// [`LockGuard::reenter`].
    ///
    /// Waiting: after the first failed attempt the caller subscribes to the lock's channel (one
    /// subscription shared by all local waiters), then re-tries on every unlock message and after
    /// `min(holder's TTL, poll interval)`. A connection error or timeout is retried after
    /// [`Config::retry_interval`](crate::Config::retry_interval), at most
    /// [`Config::retry_attempts`](crate::Config::retry_attempts) times in a row; then the error
    /// is returned. An attempt whose reply was lost is settled with Redis, never re-sent.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future is safe at any point: a waiter just leaves; if Redis granted the lock
    /// in the attempt in flight, that hold is released in the background and never renewed.
    ///
    /// # Errors
    ///
    /// [`Error::WrongType`](crate::Error::WrongType) when the key holds another Redis type;
    /// [`Error::Shutdown`](crate::Error::Shutdown) after [`Client::shutdown`](crate::Client::shutdown);
    /// the last connection error after the retries.
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
        self.core.lock(None).await.map(LockGuard)
    }

    /// Acquires the lock for `lease`, without watchdog (Redisson `lock(leaseTime, unit)`): the
    /// key expires after `lease` unless released, even if the work is not done. Waits as long as
    /// it takes.
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a lease under 1 ms or over
    /// [`MAX_DURATION`](crate::MAX_DURATION) (nothing is sent); otherwise as [`lock`](Self::lock).
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
        self.core.lock(Some(lease)).await.map(LockGuard)
    }

    /// One attempt, no waiting, watchdog mode (Redisson `tryLock()`): `Ok(None)` when someone
    /// else holds the lock.
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
    ///     Some(guard) => drop(guard.unlock().await?),
    ///     None => println!("busy"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn try_lock(&self) -> Result<Option<LockGuard>> {
        Ok(self.core.try_lock(Duration::ZERO, None).await?.map(LockGuard))
    }

    /// Waits up to `wait`, watchdog mode (Redisson `tryLock(waitTime, unit)`).
    ///
    /// Returns within `wait` plus one command timeout, also while Redis is unreachable (then
    /// with the last connection error instead of `Ok(None)`, possibly earlier, once
    /// [`Config::retry_attempts`](crate::Config::retry_attempts) attempts in a row failed).
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
        Ok(self.core.try_lock(wait, None).await?.map(LockGuard))
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
    pub async fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<LockGuard>> {
        Ok(self.core.try_lock(wait, Some(lease)).await?.map(LockGuard))
    }

    /// Runs `body` while holding the lock (watchdog mode) and releases it afterwards, also when
    /// `body` panics (the panic resumes after the release). Two `run`s on one lock exclude each
    /// other, also when joined in one task.
    ///
    /// If the lock is lost while `body` runs (renewal finds it gone, or cannot renew before the
    /// lease deadline), `body` is dropped at its next await point and
    /// [`Error::Lost`](crate::Error::Lost) is returned: work does not go on unprotected.
    ///
    /// # Cancel safety
    ///
    /// Dropping the returned future drops `body` and releases the lock in the background.
    ///
    /// # Errors
    ///
    /// Acquisition errors; `Error::Lost`; the release's error (e.g. `Error::NotHeld` when the
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
    pub async fn run<F: std::future::Future>(&self, body: F) -> Result<F::Output> {
        self.core.run(body).await
    }

    /// Releases one hold of this handle's owner without a guard (Redisson `unlock()`), e.g. a
    /// hold whose guard was forgotten: the count goes down by one; the last hold deletes the key
    /// and publishes `0`. The handle needs an owner ([`with_owner`](Self::with_owner) or
    /// [`OwnerId::scope`]).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future does not cancel the release: the client's background work finishes it.
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`](crate::Error::NotHeld) when the owner holds nothing (Redis is then
    /// unchanged); [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the handle has
    /// no owner.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let mine = lock.with_owner(7);
    /// mine.lock().await?.forget(); // Java style: hold without a guard
    /// mine.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(&self) -> Result<Unlocked> {
        self.core.unlock().await
    }

    /// Deletes the lock whoever holds it and publishes `0` (Redisson `forceUnlock()`). Returns
    /// whether there was a lock to delete. Guards of this client on this lock report
    /// [`LostReason::ForceUnlocked`]; holders elsewhere learn at their next renewal. A key that is
    /// not a lock is refused with [`Error::WrongType`](crate::Error::WrongType) and kept.
    ///
    /// **Use with care:** the holder may still be working under the lock.
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
        self.core.exists().await
    }

    /// Whether this handle's owner holds the lock (Redisson `isHeldByCurrentThread()`: `HEXISTS`).
    /// The handle needs an owner; a guard knows without asking Redis: [`LockGuard::is_held`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the handle has no owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let mine = lock.with_owner(7);
    /// let guard = mine.lock().await?;
    /// assert!(mine.is_held().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held(&self) -> Result<bool> {
        self.core.is_held().await
    }

    /// Whether `owner` of this client holds the lock (Redisson `isHeldByThread(id)`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// assert!(!lock.is_held_by(12345).await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.core.is_held_by(owner.into()).await
    }

    /// How many times this handle's owner holds the lock (Redisson `getHoldCount()`: `HGET`); 0
    /// if not. The handle needs an owner, as for [`is_held`](Self::is_held).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let mine = lock.with_owner(7);
    /// let a = mine.lock().await?;
    /// let b = mine.lock().await?; // the same owner: re-entry
    /// assert_eq!(mine.hold_count().await?, 2);
    /// # Ok(()) }
    /// ```
    pub async fn hold_count(&self) -> Result<u64> {
        self.core.hold_count().await
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
        self.core.remain_time_to_live().await
    }
}

impl std::fmt::Debug for RLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RLock")
            .field("key", &&*self.core.key)
            .field("owner", &self.core.owner)
            .finish()
    }
}

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
pub struct LockGuard(Held<ReentrantKind>);

impl LockGuard {
    /// Releases this hold: the count goes down by one; when nothing is left the key is deleted
    /// and `0` is published (one waiter per subscribed client wakes). A partial release keeps the
    /// key alive as long as the owner's longest remaining hold needs.
    ///
    /// A hold this process knows has ended (`state()` is not `Held`) sends nothing: it can never
    /// take away a later hold of the same owner.
    ///
    /// # Cancel safety
    ///
    /// Renewal stops before anything is sent. Dropping this future does not cancel the release:
    /// the client's background work finishes it (same request id, so it never releases twice).
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`](crate::Error::NotHeld) when the hold had already ended (the lease ran
    /// out, a force unlock, Redis lost the data): Redis is not changed, and work done under the
    /// lock may have overlapped with another holder's.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// lock.lock().await?.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(self) -> Result<Unlocked> {
        self.0.unlock().await
    }

    /// Takes another hold for this guard's owner (a re-entry: the hold count goes up by one, as a
    /// nested `lock()` in one Java thread does), in watchdog mode. The new guard is released on
    /// its own; the lock stays held until every guard is released.
    ///
    /// # Cancel safety
    ///
    /// As for [`RLock::lock`]: a hold granted after the future was dropped is released.
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`](crate::Error::NotHeld) when this hold has ended (if Redis answers with
    /// a fresh grant instead of a re-entry, that hold is given back and this guard reports the
    /// loss).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let outer = lock.lock().await?;
    /// let inner = outer.reenter().await?;
    /// # Ok(()) }
    /// ```
    pub async fn reenter(&self) -> Result<LockGuard> {
        self.0.reenter(None).await.map(LockGuard)
    }

    /// As [`reenter`](Self::reenter), with a lease for the new hold. The key stays alive as long
    /// as the owner's longest live hold needs (a short re-entry never cuts the TTL of a longer
    /// hold, unlike Redisson's, which resets it to the latest lease).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let outer = lock.lock().await?;
    /// let inner = outer.reenter_with_lease(std::time::Duration::from_secs(5)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn reenter_with_lease(&self, lease: Duration) -> Result<LockGuard> {
        self.0.reenter(Some(lease)).await.map(LockGuard)
    }

    /// Resolves when this hold is lost (see [`LostReason`]); stays pending while it is held.
    /// Select on it to stop work that must not continue without the lock.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only observes.
    ///
    /// ```no_run
    /// # async fn demo(guard: redisson_lock::LockGuard) {
    /// let reason = guard.lost().await;
    /// # }
    /// ```
    pub fn lost(&self) -> impl std::future::Future<Output = LostReason> + Send + 'static {
        self.0.lost()
    }

    /// What this process knows about the hold, without asking Redis.
    ///
    /// ```no_run
    /// # fn demo(guard: redisson_lock::LockGuard) { println!("{:?}", guard.state()); }
    /// ```
    pub fn state(&self) -> LeaseState {
        self.0.state()
    }

    /// `state() == LeaseState::Held`: granted or renewed recently enough to trust.
    ///
    /// ```no_run
    /// # fn demo(guard: redisson_lock::LockGuard) { assert!(guard.is_held()); }
    /// ```
    pub fn is_held(&self) -> bool {
        self.0.is_held()
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(guard: redisson_lock::LockGuard) { println!("{}", guard.key()); }
    /// ```
    pub fn key(&self) -> &str {
        self.0.key()
    }

    /// The hash field of this hold (`<client id>:<owner id>`).
    ///
    /// ```no_run
    /// # fn demo(guard: redisson_lock::LockGuard) { println!("{}", guard.field()); }
    /// ```
    pub fn field(&self) -> &str {
        self.0.field()
    }

    /// The owner of this hold.
    ///
    /// ```no_run
    /// # fn demo(guard: redisson_lock::LockGuard) { println!("{}", guard.owner()); }
    /// ```
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    ///
    /// ```no_run
    /// # fn demo(guard: redisson_lock::LockGuard) { println!("{:?}", guard.lease()); }
    /// ```
    pub fn lease(&self) -> Option<Duration> {
        self.0.lease()
    }

    /// Keeps the hold without a guard (in watchdog mode renewal goes on). Release it later with
    /// `unlock()` on a handle with the same owner (`lock.with_owner(guard.owner())`), or let it
    /// expire.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let guard = lock.lock().await?;
    /// let owner = guard.owner();
    /// guard.forget();
    /// lock.with_owner(owner).unlock().await?;
    /// # Ok(()) }
    /// ```
    pub fn forget(self) {
        self.0.forget()
    }
}

impl std::fmt::Debug for LockGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LockGuard").field(&self.0).finish()
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
        assert_send_sync_static::<crate::Error>();
    }
}
