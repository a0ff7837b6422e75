//! Redisson's non-reentrant lock (4.4+): the RLock whose owner cannot take it twice
//! (`lua/non_reentrant/`; unlock, force unlock, channel and watchdog are the RLock's).

use std::sync::Arc;
use std::time::Duration;

use redis::{ScriptInvocation, Value};

use crate::core::{Held, LockCore};
use crate::error::{Error, Result};
use crate::inner::ClientInner;
use crate::kind::{decode_plain, layout, AcquireArgs, AcquireKind, Ctx, Kind, ReleaseArgs, Reply};
use crate::{name, script, LeaseState, LostReason, OwnerId, Ttl, Unlocked};

/// The non-reentrant kind: Redisson's `RedissonNonReentrantLock`.
pub(crate) struct NonReentrantKind;

impl Kind for NonReentrantKind {
    fn label(&self) -> &'static str {
        "non-reentrant"
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

    /// `non_reentrant/acquire.lua` refuses a second hold of the owner with Redisson's code.
    fn map_error(&self, key: &str, field: &str, e: Error) -> Error {
        match &e {
            Error::Redis(r) if r.code() == Some("NON_REENTRANT_REACQUIRE") => Error::AlreadyHeld {
                key: key.to_owned(),
                field: field.to_owned(),
            },
            _ => e,
        }
    }
}

impl AcquireKind for NonReentrantKind {
    type Grant = ();

    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static> {
        layout::acquire(&script::NON_REENTRANT_ACQUIRE, c, a)
    }

    fn decode(&self, v: &Value) -> Result<Reply<()>> {
        decode_plain(v)
    }
}

static NON_REENTRANT: NonReentrantKind = NonReentrantKind;

/// A lock its owner can hold only once, wire-compatible with Redisson's non-reentrant lock
/// (`getNonReentrantLock(name)`, Redisson 4.4+).
///
/// Redis state is the [`RLock`](crate::RLock)'s (a hash `<client id>:<owner id>` → `1`, a PX TTL,
/// unlock messages `0` on `redisson_lock__channel:{<key>}`), but an acquisition by an owner that
/// already holds the lock fails at once with [`Error::AlreadyHeld`] — never a count of 2, never a
/// wait for itself (Java: `IllegalMonitorStateException`). With the default fresh owner per
/// acquisition that can only happen with a pinned owner ([`with_owner`](Self::with_owner),
/// [`OwnerId::scope`], or the blocking facade's thread owner); other owners wait as usual.
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
#[derive(Clone)]
pub struct RNonReentrantLock {
    pub(crate) core: LockCore<NonReentrantKind>,
}

impl RNonReentrantLock {
    pub(crate) fn new(client: Arc<ClientInner>, key: String) -> RNonReentrantLock {
        RNonReentrantLock {
            core: LockCore::new(client, key, &NON_REENTRANT),
        }
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RNonReentrantLock) { println!("{}", lock.key()); }
    /// ```
    pub fn key(&self) -> &str {
        &self.core.key
    }

    /// The same lock acting for a fixed owner id: its second acquisition fails with
    /// [`Error::AlreadyHeld`] while the first is held.
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RNonReentrantLock) { let mine = lock.with_owner(7); }
    /// ```
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RNonReentrantLock {
        RNonReentrantLock {
            core: self.core.with_owner(owner.into()),
        }
    }

    /// The owner this handle acts for, if it has one (see [`RLock::owner`](crate::RLock::owner)).
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RNonReentrantLock) { assert!(lock.owner().is_none()); }
    /// ```
    pub fn owner(&self) -> Option<OwnerId> {
        self.core.owner.fixed()
    }

    /// The hash field of this handle's owner, if it has one.
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RNonReentrantLock) { println!("{:?}", lock.with_owner(7).field()); }
    /// ```
    pub fn field(&self) -> Option<String> {
        self.core.handle_field()
    }

    /// Acquires the lock, waiting as long as it takes, watchdog mode. Cancel safety as
    /// [`RLock::lock`](crate::RLock::lock).
    ///
    /// # Errors
    ///
    /// [`Error::AlreadyHeld`] when this handle's owner already holds it; otherwise as
    /// [`RLock::lock`](crate::RLock::lock).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantLock) -> redisson_lock::Result<()> {
    /// let guard = lock.lock().await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub async fn lock(&self) -> Result<NonReentrantGuard> {
        self.core.lock(None).await.map(NonReentrantGuard)
    }

    /// Acquires the lock for `lease` (no watchdog), waiting as long as it takes.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantLock) -> redisson_lock::Result<()> {
    /// let guard = lock.lock_with_lease(std::time::Duration::from_secs(10)).await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub async fn lock_with_lease(&self, lease: Duration) -> Result<NonReentrantGuard> {
        self.core.lock(Some(lease)).await.map(NonReentrantGuard)
    }

    /// One attempt, no waiting (watchdog mode); [`Error::AlreadyHeld`] for the owner's second hold.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantLock) -> redisson_lock::Result<()> {
    /// let maybe = lock.try_lock().await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock(&self) -> Result<Option<NonReentrantGuard>> {
        Ok(self
            .core
            .try_lock(Duration::ZERO, None)
            .await?
            .map(NonReentrantGuard))
    }

    /// Waits up to `wait` (watchdog mode); [`Error::AlreadyHeld`] at once for the owner's second
    /// hold.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantLock) -> redisson_lock::Result<()> {
    /// let maybe = lock.try_lock_for(std::time::Duration::from_secs(1)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_for(&self, wait: Duration) -> Result<Option<NonReentrantGuard>> {
        Ok(self.core.try_lock(wait, None).await?.map(NonReentrantGuard))
    }

    /// Waits up to `wait` for a hold of `lease` (no watchdog).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let maybe = lock.try_lock_with_lease(Duration::from_secs(1), Duration::from_secs(10)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_with_lease(
        &self,
        wait: Duration,
        lease: Duration,
    ) -> Result<Option<NonReentrantGuard>> {
        Ok(self
            .core
            .try_lock(wait, Some(lease))
            .await?
            .map(NonReentrantGuard))
    }

    /// Runs `body` under the lock (watchdog mode); see [`RLock::run`](crate::RLock::run).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantLock) -> redisson_lock::Result<()> {
    /// let n = lock.run(async { 1 }).await?;
    /// # let _ = n; Ok(()) }
    /// ```
    pub async fn run<F: std::future::Future>(&self, body: F) -> Result<F::Output> {
        self.core.run(body).await
    }

    /// Releases the hold of this handle's owner without a guard (deletes the key and publishes
    /// `0`); the handle needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantLock) -> redisson_lock::Result<()> {
    /// let mine = lock.with_owner(7);
    /// mine.lock().await?.forget();
    /// mine.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(&self) -> Result<Unlocked> {
        self.core.unlock().await
    }

    /// Deletes the lock whoever holds it and publishes `0`.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantLock) -> redisson_lock::Result<()> {
    /// let deleted = lock.force_unlock().await?;
    /// # let _ = deleted; Ok(()) }
    /// ```
    pub async fn force_unlock(&self) -> Result<bool> {
        self.core.force_unlock().await
    }

    /// Whether anyone holds the lock (`EXISTS`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.is_locked().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_locked(&self) -> Result<bool> {
        self.core.exists().await
    }

    /// Whether this handle's owner holds the lock; needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.with_owner(7).is_held().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held(&self) -> Result<bool> {
        self.core.is_held().await
    }

    /// Whether `owner` of this client holds the lock.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.is_held_by(7).await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.core.is_held_by(owner.into()).await
    }

    /// 1 when this handle's owner holds the lock, else 0; needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.with_owner(7).hold_count().await?);
    /// # Ok(()) }
    /// ```
    pub async fn hold_count(&self) -> Result<u64> {
        self.core.hold_count().await
    }

    /// The lock's remaining time to live (`PTTL`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantLock) -> redisson_lock::Result<()> {
    /// println!("{:?}", lock.remain_time_to_live().await?);
    /// # Ok(()) }
    /// ```
    pub async fn remain_time_to_live(&self) -> Result<Ttl> {
        self.core.remain_time_to_live().await
    }
}

impl std::fmt::Debug for RNonReentrantLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RNonReentrantLock")
            .field("key", &&*self.core.key)
            .field("owner", &self.core.owner)
            .finish()
    }
}

/// Proof of the hold of an [`RNonReentrantLock`]; dropping it queues its release (see
/// [`LockGuard`](crate::LockGuard) for what drop does). There is no `reenter`: the lock cannot be
/// held twice by one owner.
///
/// ```no_run
/// # async fn demo(lock: redisson_lock::RNonReentrantLock) -> redisson_lock::Result<()> {
/// let guard = lock.lock().await?;
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[must_use = "if unused the lock is released at once (in the background)"]
pub struct NonReentrantGuard(Held<NonReentrantKind>);

impl NonReentrantGuard {
    /// Releases the hold: the key is deleted and `0` is published. A hold known to have ended
    /// sends nothing.
    ///
    /// # Cancel safety
    ///
    /// Dropping this future does not cancel the release: the client's background work finishes it.
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`] when the hold had already ended (Redis unchanged).
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::NonReentrantGuard) -> redisson_lock::Result<()> {
    /// g.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(self) -> Result<Unlocked> {
        self.0.unlock().await
    }

    /// Resolves when this hold is lost (see [`LostReason`]). Cancel safe: it only observes.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::NonReentrantGuard) { let reason = g.lost().await; }
    /// ```
    pub fn lost(&self) -> impl std::future::Future<Output = LostReason> + Send + 'static {
        self.0.lost()
    }

    /// What this process knows about the hold, without asking Redis.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::NonReentrantGuard) { println!("{:?}", g.state()); }
    /// ```
    pub fn state(&self) -> LeaseState {
        self.0.state()
    }

    /// `state() == LeaseState::Held`.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::NonReentrantGuard) { assert!(g.is_held()); }
    /// ```
    pub fn is_held(&self) -> bool {
        self.0.is_held()
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::NonReentrantGuard) { println!("{}", g.key()); }
    /// ```
    pub fn key(&self) -> &str {
        self.0.key()
    }

    /// The hash field of this hold.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::NonReentrantGuard) { println!("{}", g.field()); }
    /// ```
    pub fn field(&self) -> &str {
        self.0.field()
    }

    /// The owner of this hold.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::NonReentrantGuard) { println!("{}", g.owner()); }
    /// ```
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::NonReentrantGuard) { println!("{:?}", g.lease()); }
    /// ```
    pub fn lease(&self) -> Option<Duration> {
        self.0.lease()
    }

    /// Keeps the hold without a guard (renewal goes on in watchdog mode).
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::NonReentrantGuard) { g.forget(); }
    /// ```
    pub fn forget(self) {
        self.0.forget()
    }
}

impl std::fmt::Debug for NonReentrantGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("NonReentrantGuard").field(&self.0).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_errors_pass_through() {
        let other = NON_REENTRANT.map_error("k", "c:1", Error::Shutdown);
        assert!(matches!(other, Error::Shutdown));
    }

    #[test]
    fn bounds() {
        fn assert_send_sync_static<T: Send + Sync + 'static>() {}
        assert_send_sync_static::<NonReentrantGuard>();
        assert_send_sync_static::<RNonReentrantLock>();
    }
}
