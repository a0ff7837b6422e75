//! Redisson's spin lock (`RSpinLock`, 3.15+): the RLock's hash without pub/sub; waiters poll with
//! a back-off (`lua/spin/`; the acquire is the RLock's `lua/lock/acquire.lua`).

use std::sync::Arc;
use std::time::Duration;

use redis::{ScriptInvocation, Value};

use crate::core::{Held, LockCore};
use crate::error::Result;
use crate::inner::ClientInner;
use crate::kind::{
    decode_plain, layout, AcquireArgs, AcquireKind, Ctx, Kind, Reentrant, ReleaseArgs, Reply, Wake,
};
use crate::{name, script, BackOff, LeaseState, LostReason, OwnerId, Ttl, Unlocked};

/// The spin-lock kind: Redisson's `RedissonSpinLock`.
pub(crate) struct SpinKind;

impl Kind for SpinKind {
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
        let mut inv = script::SPIN_UNLOCK.prepare_invoke();
        inv.key(c.key)
            .key(a.latch)
            .arg(a.ttl_ms)
            .arg(c.field)
            .arg(a.latch_ms)
            .arg(u8::from(a.all));
        inv
    }

    fn force_release(&self, c: &Ctx<'_>) -> ScriptInvocation<'static> {
        let mut inv = script::SPIN_FORCE_UNLOCK.prepare_invoke();
        inv.key(c.key);
        inv
    }
}

impl AcquireKind for SpinKind {
    type Grant = ();

    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static> {
        layout::acquire(&script::LOCK_ACQUIRE, c, a)
    }

    fn decode(&self, v: &Value) -> Result<Reply<()>> {
        decode_plain(v)
    }
}

impl Reentrant for SpinKind {}

static SPIN: SpinKind = SpinKind;

/// A reentrant lock whose waiters poll instead of listening for unlock messages,
/// wire-compatible with Redisson's `RSpinLock` (`getSpinLock(name)`, Redisson 3.15+).
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
#[derive(Clone)]
pub struct RSpinLock {
    pub(crate) core: LockCore<SpinKind>,
}

impl RSpinLock {
    pub(crate) fn new(client: Arc<ClientInner>, key: String) -> RSpinLock {
        RSpinLock {
            core: LockCore::new(client, key, &SPIN),
        }
    }

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
    pub fn with_backoff(&self, backoff: BackOff) -> Result<RSpinLock> {
        backoff.validate()?;
        let mut core = self.core.clone();
        core.wake = Wake::Backoff(backoff);
        Ok(RSpinLock { core })
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RSpinLock) { println!("{}", lock.key()); }
    /// ```
    pub fn key(&self) -> &str {
        &self.core.key
    }

    /// The same lock acting for a fixed owner id (see [`RLock::with_owner`](crate::RLock::with_owner)).
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RSpinLock) { let mine = lock.with_owner(7); }
    /// ```
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RSpinLock {
        RSpinLock {
            core: self.core.with_owner(owner.into()),
        }
    }

    /// The owner this handle acts for, if it has one (see [`RLock::owner`](crate::RLock::owner)).
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RSpinLock) { assert!(lock.owner().is_none()); }
    /// ```
    pub fn owner(&self) -> Option<OwnerId> {
        self.core.owner.fixed()
    }

    /// The hash field of this handle's owner, if it has one.
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RSpinLock) { println!("{:?}", lock.with_owner(7).field()); }
    /// ```
    pub fn field(&self) -> Option<String> {
        self.core.handle_field()
    }

    /// Acquires the lock, polling with the back-off as long as it takes; watchdog mode (Redisson
    /// `lock()`). Cancel safety and errors as [`RLock::lock`](crate::RLock::lock).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RSpinLock) -> redisson_lock::Result<()> {
    /// let guard = lock.lock().await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub async fn lock(&self) -> Result<SpinGuard> {
        self.core.lock(None).await.map(SpinGuard)
    }

    /// Acquires the lock for `lease` (no watchdog), polling as long as it takes.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RSpinLock) -> redisson_lock::Result<()> {
    /// let guard = lock.lock_with_lease(std::time::Duration::from_secs(10)).await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub async fn lock_with_lease(&self, lease: Duration) -> Result<SpinGuard> {
        self.core.lock(Some(lease)).await.map(SpinGuard)
    }

    /// One attempt, no waiting (watchdog mode).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RSpinLock) -> redisson_lock::Result<()> {
    /// let maybe = lock.try_lock().await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock(&self) -> Result<Option<SpinGuard>> {
        Ok(self.core.try_lock(Duration::ZERO, None).await?.map(SpinGuard))
    }

    /// Polls for up to `wait` (watchdog mode); returns within `wait` plus one command timeout.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RSpinLock) -> redisson_lock::Result<()> {
    /// let maybe = lock.try_lock_for(std::time::Duration::from_secs(1)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_for(&self, wait: Duration) -> Result<Option<SpinGuard>> {
        Ok(self.core.try_lock(wait, None).await?.map(SpinGuard))
    }

    /// Polls for up to `wait` for a hold of `lease` (no watchdog).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RSpinLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let maybe = lock.try_lock_with_lease(Duration::from_secs(1), Duration::from_secs(10)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<SpinGuard>> {
        Ok(self.core.try_lock(wait, Some(lease)).await?.map(SpinGuard))
    }

    /// Runs `body` under the lock (watchdog mode); see [`RLock::run`](crate::RLock::run).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RSpinLock) -> redisson_lock::Result<()> {
    /// let n = lock.run(async { 1 }).await?;
    /// # let _ = n; Ok(()) }
    /// ```
    pub async fn run<F: std::future::Future>(&self, body: F) -> Result<F::Output> {
        self.core.run(body).await
    }

    /// Releases one hold of this handle's owner without a guard; the last hold deletes the key
    /// (nothing is published). The handle needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RSpinLock) -> redisson_lock::Result<()> {
    /// let mine = lock.with_owner(7);
    /// mine.lock().await?.forget();
    /// mine.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(&self) -> Result<Unlocked> {
        self.core.unlock().await
    }

    /// Deletes the lock whoever holds it; nothing is published (Redisson `forceUnlock()`). A key
    /// that is not a lock is refused with [`Error::WrongType`](crate::Error::WrongType) and kept.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RSpinLock) -> redisson_lock::Result<()> {
    /// let deleted = lock.force_unlock().await?;
    /// # let _ = deleted; Ok(()) }
    /// ```
    pub async fn force_unlock(&self) -> Result<bool> {
        self.core.force_unlock().await
    }

    /// Whether anyone holds the lock (`EXISTS`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RSpinLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.is_locked().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_locked(&self) -> Result<bool> {
        self.core.exists().await
    }

    /// Whether this handle's owner holds the lock; needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RSpinLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.with_owner(7).is_held().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held(&self) -> Result<bool> {
        self.core.is_held().await
    }

    /// Whether `owner` of this client holds the lock.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RSpinLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.is_held_by(7).await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.core.is_held_by(owner.into()).await
    }

    /// How many times this handle's owner holds the lock; needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RSpinLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.with_owner(7).hold_count().await?);
    /// # Ok(()) }
    /// ```
    pub async fn hold_count(&self) -> Result<u64> {
        self.core.hold_count().await
    }

    /// The lock's remaining time to live (`PTTL`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RSpinLock) -> redisson_lock::Result<()> {
    /// println!("{:?}", lock.remain_time_to_live().await?);
    /// # Ok(()) }
    /// ```
    pub async fn remain_time_to_live(&self) -> Result<Ttl> {
        self.core.remain_time_to_live().await
    }
}

impl std::fmt::Debug for RSpinLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RSpinLock")
            .field("key", &&*self.core.key)
            .field("owner", &self.core.owner)
            .field("wake", &self.core.wake)
            .finish()
    }
}

/// Proof of one hold of an [`RSpinLock`]; dropping it queues its release (see
/// [`LockGuard`](crate::LockGuard) for what drop does).
///
/// ```no_run
/// # async fn demo(lock: redisson_lock::RSpinLock) -> redisson_lock::Result<()> {
/// let guard = lock.lock().await?;
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[must_use = "if unused the lock is released at once (in the background)"]
pub struct SpinGuard(Held<SpinKind>);

impl SpinGuard {
    /// Releases this hold: the count goes down by one; the last hold deletes the key. Nothing is
    /// published: waiters find the lock free at their next poll. A hold known to have ended sends
    /// nothing.
    ///
    /// # Cancel safety
    ///
    /// Dropping this future does not cancel the release: the client's background work finishes it.
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`](crate::Error::NotHeld) when the hold had already ended (Redis unchanged).
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::SpinGuard) -> redisson_lock::Result<()> {
    /// g.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(self) -> Result<Unlocked> {
        self.0.unlock().await
    }

    /// Another hold for this guard's owner (a re-entry; see [`LockGuard::reenter`](crate::LockGuard::reenter)).
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::SpinGuard) -> redisson_lock::Result<()> {
    /// let again = g.reenter().await?;
    /// # drop(again); Ok(()) }
    /// ```
    pub async fn reenter(&self) -> Result<SpinGuard> {
        self.0.reenter(None).await.map(SpinGuard)
    }

    /// Another hold for this guard's owner, with a lease.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::SpinGuard) -> redisson_lock::Result<()> {
    /// let again = g.reenter_with_lease(std::time::Duration::from_secs(5)).await?;
    /// # drop(again); Ok(()) }
    /// ```
    pub async fn reenter_with_lease(&self, lease: Duration) -> Result<SpinGuard> {
        self.0.reenter(Some(lease)).await.map(SpinGuard)
    }

    /// Resolves when this hold is lost (see [`LostReason`]). Cancel safe: it only observes.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::SpinGuard) { let reason = g.lost().await; }
    /// ```
    pub fn lost(&self) -> impl std::future::Future<Output = LostReason> + Send + 'static {
        self.0.lost()
    }

    /// What this process knows about the hold, without asking Redis.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::SpinGuard) { println!("{:?}", g.state()); }
    /// ```
    pub fn state(&self) -> LeaseState {
        self.0.state()
    }

    /// `state() == LeaseState::Held`.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::SpinGuard) { assert!(g.is_held()); }
    /// ```
    pub fn is_held(&self) -> bool {
        self.0.is_held()
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::SpinGuard) { println!("{}", g.key()); }
    /// ```
    pub fn key(&self) -> &str {
        self.0.key()
    }

    /// The hash field of this hold.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::SpinGuard) { println!("{}", g.field()); }
    /// ```
    pub fn field(&self) -> &str {
        self.0.field()
    }

    /// The owner of this hold.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::SpinGuard) { println!("{}", g.owner()); }
    /// ```
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::SpinGuard) { println!("{:?}", g.lease()); }
    /// ```
    pub fn lease(&self) -> Option<Duration> {
        self.0.lease()
    }

    /// Keeps the hold without a guard (renewal goes on in watchdog mode).
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::SpinGuard) { g.forget(); }
    /// ```
    pub fn forget(self) {
        self.0.forget()
    }
}

impl std::fmt::Debug for SpinGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SpinGuard").field(&self.0).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        fn assert_send_sync_static<T: Send + Sync + 'static>() {}
        assert_send_sync_static::<SpinGuard>();
        assert_send_sync_static::<RSpinLock>();
    }
}
