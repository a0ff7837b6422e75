//! Redisson's fair lock (`RFairLock`) and its non-reentrant variant (4.4+): the RLock's hash plus
//! a FIFO queue of waiters with deadlines; only the head waiter is woken, on its own channel
//! (`lua/fair/`).

use std::sync::Arc;
use std::time::Duration;

use redis::{ScriptInvocation, Value};

use crate::core::{Held, LockCore};
use crate::error::{Error, Result};
use crate::inner::ClientInner;
use crate::kind::{decode_plain, AcquireArgs, AcquireKind, Ctx, Kind, Reentrant, ReleaseArgs, Reply};
use crate::{name, script, LeaseState, LostReason, OwnerId, Ttl, Unlocked};

/// The fair-lock kind: Redisson's `RedissonFairLock`, or `RedissonNonReentrantFairLock`.
pub(crate) struct FairKind {
    non_reentrant: bool,
}

impl Kind for FairKind {
    fn label(&self) -> &'static str {
        if self.non_reentrant {
            "non-reentrant fair"
        } else {
            "fair"
        }
    }

    /// Each waiter listens on `redisson_lock__channel:{N}:<its field>`; unlocks wake the head only.
    fn write_channel(&self, out: &mut String, key: &str, field: &str) {
        name::push_lock_channel(out, key);
        out.push(':');
        out.push_str(field);
    }

    fn channel_per_owner(&self) -> bool {
        true
    }

    fn release(&self, c: &Ctx<'_>, a: &ReleaseArgs<'_>) -> ScriptInvocation<'static> {
        let mut inv = script::FAIR_UNLOCK.prepare_invoke();
        inv.key(c.key)
            .key(name::fair_queue(c.key))
            .key(name::fair_deadlines(c.key))
            .key(name::lock_channel(c.key))
            .key(a.latch)
            .arg(0)
            .arg(a.ttl_ms)
            .arg(c.field)
            .arg(c.now_ms())
            .arg(c.publish)
            .arg(a.latch_ms)
            .arg(u8::from(a.all));
        inv
    }

    fn force_release(&self, c: &Ctx<'_>) -> ScriptInvocation<'static> {
        let mut inv = script::FAIR_FORCE_UNLOCK.prepare_invoke();
        inv.key(c.key)
            .key(name::fair_queue(c.key))
            .key(name::fair_deadlines(c.key))
            .key(name::lock_channel(c.key))
            .arg(0)
            .arg(c.now_ms())
            .arg(c.publish);
        inv
    }

    fn map_error(&self, key: &str, field: &str, e: Error) -> Error {
        match &e {
            Error::Redis(r) if r.code() == Some("NON_REENTRANT_REACQUIRE") => Error::AlreadyHeld {
                key: key.to_owned(),
                field: field.to_owned(),
            },
            _ => e,
        }
    }

    /// A waiter keeps its place (its field) in the queue through all its attempts.
    fn stable_owner(&self) -> bool {
        true
    }

    /// A waiter that stops waiting leaves the queue (Redisson's `acquireFailed`).
    fn give_up(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> Option<ScriptInvocation<'static>> {
        if !a.queued {
            return None; // a single attempt never queued
        }
        let mut inv = script::FAIR_GIVE_UP.prepare_invoke();
        inv.key(name::fair_queue(c.key))
            .key(name::fair_deadlines(c.key))
            .arg(c.field)
            .arg(a.wait_ms);
        Some(inv)
    }
}

impl AcquireKind for FairKind {
    type Grant = ();

    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static> {
        let mut inv = script::FAIR_ACQUIRE.prepare_invoke();
        inv.key(c.key)
            .key(name::fair_queue(c.key))
            .key(name::fair_deadlines(c.key))
            .key(a.latch)
            .arg(a.ttl_ms)
            .arg(c.field)
            .arg(a.wait_ms)
            .arg(c.now_ms())
            .arg(a.latch_ms)
            .arg(u8::from(a.queued))
            .arg(u8::from(self.non_reentrant));
        inv
    }

    fn decode(&self, v: &Value) -> Result<Reply<()>> {
        decode_plain(v)
    }
}

impl Reentrant for FairKind {}

static FAIR: FairKind = FairKind { non_reentrant: false };
static NON_REENTRANT_FAIR: FairKind = FairKind { non_reentrant: true };

/// A fair (first come, first served) reentrant lock, wire-compatible with Redisson's `RFairLock`
/// (`getFairLock(name)`).
///
/// Redis state: the [`RLock`](crate::RLock)'s hash, plus the list `redisson_lock_queue:{<key>}` of
/// waiting owner fields (head first) and the sorted set `redisson_lock_timeout:{<key>}` of their
/// deadlines (client wall-clock epoch ms). A waiter queues up behind the last one with the
/// deadline "predecessor's deadline + its wait"; the lock goes to the head; an unlock wakes only
/// the head, on its own channel `redisson_lock__channel:{<key>}:<field>`. A waiter that stops
/// waiting — its wait ran out, an error, **or its future was dropped** — leaves the queue at once,
/// so it never holds up those behind it; a crashed waiter is skipped once its deadline passes.
/// Java and Rust waiters share one queue, in arrival order.
///
/// **Clocks:** deadlines are compared with each client's own wall clock, as in Redisson, so the
/// clocks of every client (Java and Rust) must agree (NTP): a client whose clock runs ahead
/// purges waiters early, one behind keeps dead waiters longer. `redisson-lock inspect` shows each
/// waiter's deadline against Redis' `TIME`.
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// let lock = client.fair_lock("lock:queue")?;
/// let guard = lock.lock().await?;        // in arrival order
/// guard.unlock().await?;                 // wakes the next in line only
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RFairLock {
    pub(crate) core: LockCore<FairKind>,
}

impl RFairLock {
    pub(crate) fn new(client: Arc<ClientInner>, key: String) -> RFairLock {
        RFairLock {
            core: LockCore::new(client, key, &FAIR),
        }
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RFairLock) { println!("{}", lock.key()); }
    /// ```
    pub fn key(&self) -> &str {
        &self.core.key
    }

    /// The same lock acting for a fixed owner id (a Java thread, or one place in the queue shared
    /// on purpose; see [`RLock::with_owner`](crate::RLock::with_owner)).
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RFairLock) { let mine = lock.with_owner(7); }
    /// ```
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RFairLock {
        RFairLock {
            core: self.core.with_owner(owner.into()),
        }
    }

    /// The owner this handle acts for, if it has one (see [`RLock::owner`](crate::RLock::owner)).
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RFairLock) { assert!(lock.owner().is_none()); }
    /// ```
    pub fn owner(&self) -> Option<OwnerId> {
        self.core.owner.fixed()
    }

    /// The hash field (and queue entry) of this handle's owner, if it has one.
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RFairLock) { println!("{:?}", lock.with_owner(7).field()); }
    /// ```
    pub fn field(&self) -> Option<String> {
        self.core.handle_field()
    }

    /// Acquires the lock in FIFO order, waiting as long as it takes; watchdog mode. The first
    /// refused attempt queues the waiter (deadline: its predecessor's plus
    /// [`Config::fair_lock_wait_timeout`](crate::Config::fair_lock_wait_timeout)); it then waits
    /// for a message on its own channel (sent when it is at the head and the lock is released)
    /// and re-tries at least every poll interval.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future leaves the queue at once (in the background), so the waiters behind
    /// are not held up; a hold Redis granted meanwhile is released.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFairLock) -> redisson_lock::Result<()> {
    /// let guard = lock.lock().await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub async fn lock(&self) -> Result<FairGuard> {
        self.core.lock(None).await.map(FairGuard)
    }

    /// As [`lock`](Self::lock), holding for `lease` (no watchdog).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFairLock) -> redisson_lock::Result<()> {
    /// let guard = lock.lock_with_lease(std::time::Duration::from_secs(10)).await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub async fn lock_with_lease(&self, lease: Duration) -> Result<FairGuard> {
        self.core.lock(Some(lease)).await.map(FairGuard)
    }

    /// One attempt without queueing (Redisson `tryLock()`): it succeeds only when the lock is
    /// free and nobody waits ahead (or this owner is the head, or re-enters).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFairLock) -> redisson_lock::Result<()> {
    /// let maybe = lock.try_lock().await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock(&self) -> Result<Option<FairGuard>> {
        Ok(self.core.try_lock(Duration::ZERO, None).await?.map(FairGuard))
    }

    /// Queues and waits up to `wait` (watchdog mode); the waiter's deadline in the queue uses
    /// `wait`. When the wait runs out the waiter leaves the queue before this returns.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFairLock) -> redisson_lock::Result<()> {
    /// let maybe = lock.try_lock_for(std::time::Duration::from_secs(1)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_for(&self, wait: Duration) -> Result<Option<FairGuard>> {
        Ok(self.core.try_lock(wait, None).await?.map(FairGuard))
    }

    /// Queues and waits up to `wait` for a hold of `lease` (no watchdog).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFairLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let maybe = lock.try_lock_with_lease(Duration::from_secs(1), Duration::from_secs(10)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<FairGuard>> {
        Ok(self.core.try_lock(wait, Some(lease)).await?.map(FairGuard))
    }

    /// Runs `body` under the lock (watchdog mode); see [`RLock::run`](crate::RLock::run).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFairLock) -> redisson_lock::Result<()> {
    /// let n = lock.run(async { 1 }).await?;
    /// # let _ = n; Ok(()) }
    /// ```
    pub async fn run<F: std::future::Future>(&self, body: F) -> Result<F::Output> {
        self.core.run(body).await
    }

    /// Releases one hold of this handle's owner without a guard; the last hold deletes the key
    /// and wakes the head waiter. The handle needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFairLock) -> redisson_lock::Result<()> {
    /// let mine = lock.with_owner(7);
    /// mine.lock().await?.forget();
    /// mine.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(&self) -> Result<Unlocked> {
        self.core.unlock().await
    }

    /// Deletes the lock whoever holds it and wakes the head waiter (Redisson `forceUnlock()`); the
    /// queue stays. A key that is not a lock is refused with
    /// [`Error::WrongType`](crate::Error::WrongType).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFairLock) -> redisson_lock::Result<()> {
    /// let deleted = lock.force_unlock().await?;
    /// # let _ = deleted; Ok(()) }
    /// ```
    pub async fn force_unlock(&self) -> Result<bool> {
        self.core.force_unlock().await
    }

    /// Whether anyone holds the lock (`EXISTS`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFairLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.is_locked().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_locked(&self) -> Result<bool> {
        self.core.exists().await
    }

    /// Whether this handle's owner holds the lock; needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFairLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.with_owner(7).is_held().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held(&self) -> Result<bool> {
        self.core.is_held().await
    }

    /// Whether `owner` of this client holds the lock.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFairLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.is_held_by(7).await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.core.is_held_by(owner.into()).await
    }

    /// How many times this handle's owner holds the lock; needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFairLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.with_owner(7).hold_count().await?);
    /// # Ok(()) }
    /// ```
    pub async fn hold_count(&self) -> Result<u64> {
        self.core.hold_count().await
    }

    /// The lock's remaining time to live (`PTTL`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFairLock) -> redisson_lock::Result<()> {
    /// println!("{:?}", lock.remain_time_to_live().await?);
    /// # Ok(()) }
    /// ```
    pub async fn remain_time_to_live(&self) -> Result<Ttl> {
        self.core.remain_time_to_live().await
    }
}

impl std::fmt::Debug for RFairLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RFairLock")
            .field("key", &&*self.core.key)
            .field("owner", &self.core.owner)
            .finish()
    }
}

/// Proof of one hold of an [`RFairLock`]; dropping it queues its release (see
/// [`LockGuard`](crate::LockGuard) for what drop does).
///
/// ```no_run
/// # async fn demo(lock: redisson_lock::RFairLock) -> redisson_lock::Result<()> {
/// let guard = lock.lock().await?;
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[must_use = "if unused the lock is released at once (in the background)"]
pub struct FairGuard(Held<FairKind>);

impl FairGuard {
    /// Releases this hold; the owner's last hold deletes the key and publishes `0` to the head
    /// waiter's channel only (`redisson_lock__channel:{<key>}:<head field>`). A hold known to
    /// have ended sends nothing; a lock that vanished is [`Error::NotHeld`](crate::Error::NotHeld)
    /// (Redisson counts it as released) and the head waiter is woken all the same.
    ///
    /// # Cancel safety
    ///
    /// Dropping this future does not cancel the release: the client's background work finishes it.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::FairGuard) -> redisson_lock::Result<()> {
    /// g.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(self) -> Result<Unlocked> {
        self.0.unlock().await
    }

    /// Another hold for this guard's owner (a re-entry; it never queues).
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::FairGuard) -> redisson_lock::Result<()> {
    /// let again = g.reenter().await?;
    /// # drop(again); Ok(()) }
    /// ```
    pub async fn reenter(&self) -> Result<FairGuard> {
        self.0.reenter(None).await.map(FairGuard)
    }

    /// Another hold for this guard's owner, with a lease.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::FairGuard) -> redisson_lock::Result<()> {
    /// let again = g.reenter_with_lease(std::time::Duration::from_secs(5)).await?;
    /// # drop(again); Ok(()) }
    /// ```
    pub async fn reenter_with_lease(&self, lease: Duration) -> Result<FairGuard> {
        self.0.reenter(Some(lease)).await.map(FairGuard)
    }

    /// Resolves when this hold is lost (see [`LostReason`]). Cancel safe: it only observes.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::FairGuard) { let reason = g.lost().await; }
    /// ```
    pub fn lost(&self) -> impl std::future::Future<Output = LostReason> + Send + 'static {
        self.0.lost()
    }

    /// What this process knows about the hold, without asking Redis.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FairGuard) { println!("{:?}", g.state()); }
    /// ```
    pub fn state(&self) -> LeaseState {
        self.0.state()
    }

    /// `state() == LeaseState::Held`.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FairGuard) { assert!(g.is_held()); }
    /// ```
    pub fn is_held(&self) -> bool {
        self.0.is_held()
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FairGuard) { println!("{}", g.key()); }
    /// ```
    pub fn key(&self) -> &str {
        self.0.key()
    }

    /// The hash field of this hold.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FairGuard) { println!("{}", g.field()); }
    /// ```
    pub fn field(&self) -> &str {
        self.0.field()
    }

    /// The owner of this hold.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FairGuard) { println!("{}", g.owner()); }
    /// ```
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FairGuard) { println!("{:?}", g.lease()); }
    /// ```
    pub fn lease(&self) -> Option<Duration> {
        self.0.lease()
    }

    /// Keeps the hold without a guard (renewal goes on in watchdog mode).
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FairGuard) { g.forget(); }
    /// ```
    pub fn forget(self) {
        self.0.forget()
    }
}

impl std::fmt::Debug for FairGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("FairGuard").field(&self.0).finish()
    }
}

/// A fair lock its owner can hold only once, wire-compatible with Redisson's non-reentrant fair
/// lock (`getNonReentrantFairLock(name)`, Redisson 4.4+): the [`RFairLock`]'s queue and wake-up,
/// and an owner's second acquisition is [`Error::AlreadyHeld`](crate::Error::AlreadyHeld).
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// let guard = client.non_reentrant_fair_lock("lock:queue")?.lock().await?;
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RNonReentrantFairLock {
    pub(crate) core: LockCore<FairKind>,
}

impl RNonReentrantFairLock {
    pub(crate) fn new(client: Arc<ClientInner>, key: String) -> RNonReentrantFairLock {
        RNonReentrantFairLock {
            core: LockCore::new(client, key, &NON_REENTRANT_FAIR),
        }
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RNonReentrantFairLock) { println!("{}", lock.key()); }
    /// ```
    pub fn key(&self) -> &str {
        &self.core.key
    }

    /// The same lock acting for a fixed owner id (a Java thread, or one place in the queue shared
    /// on purpose; see [`RLock::with_owner`](crate::RLock::with_owner)).
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RNonReentrantFairLock) { let mine = lock.with_owner(7); }
    /// ```
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RNonReentrantFairLock {
        RNonReentrantFairLock {
            core: self.core.with_owner(owner.into()),
        }
    }

    /// The owner this handle acts for, if it has one (see [`RLock::owner`](crate::RLock::owner)).
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RNonReentrantFairLock) { assert!(lock.owner().is_none()); }
    /// ```
    pub fn owner(&self) -> Option<OwnerId> {
        self.core.owner.fixed()
    }

    /// The hash field (and queue entry) of this handle's owner, if it has one.
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RNonReentrantFairLock) { println!("{:?}", lock.with_owner(7).field()); }
    /// ```
    pub fn field(&self) -> Option<String> {
        self.core.handle_field()
    }

    /// Acquires the lock in FIFO order, waiting as long as it takes; watchdog mode. The first
    /// refused attempt queues the waiter (deadline: its predecessor's plus
    /// [`Config::fair_lock_wait_timeout`](crate::Config::fair_lock_wait_timeout)); it then waits
    /// for a message on its own channel (sent when it is at the head and the lock is released)
    /// and re-tries at least every poll interval.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future leaves the queue at once (in the background), so the waiters behind
    /// are not held up; a hold Redis granted meanwhile is released.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantFairLock) -> redisson_lock::Result<()> {
    /// let guard = lock.lock().await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub async fn lock(&self) -> Result<NonReentrantFairGuard> {
        self.core.lock(None).await.map(NonReentrantFairGuard)
    }

    /// As [`lock`](Self::lock), holding for `lease` (no watchdog).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantFairLock) -> redisson_lock::Result<()> {
    /// let guard = lock.lock_with_lease(std::time::Duration::from_secs(10)).await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub async fn lock_with_lease(&self, lease: Duration) -> Result<NonReentrantFairGuard> {
        self.core.lock(Some(lease)).await.map(NonReentrantFairGuard)
    }

    /// One attempt without queueing (Redisson `tryLock()`): it succeeds only when the lock is
    /// free and nobody waits ahead (or this owner is the head, or re-enters).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantFairLock) -> redisson_lock::Result<()> {
    /// let maybe = lock.try_lock().await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock(&self) -> Result<Option<NonReentrantFairGuard>> {
        Ok(self
            .core
            .try_lock(Duration::ZERO, None)
            .await?
            .map(NonReentrantFairGuard))
    }

    /// Queues and waits up to `wait` (watchdog mode); the waiter's deadline in the queue uses
    /// `wait`. When the wait runs out the waiter leaves the queue before this returns.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantFairLock) -> redisson_lock::Result<()> {
    /// let maybe = lock.try_lock_for(std::time::Duration::from_secs(1)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_for(&self, wait: Duration) -> Result<Option<NonReentrantFairGuard>> {
        Ok(self.core.try_lock(wait, None).await?.map(NonReentrantFairGuard))
    }

    /// Queues and waits up to `wait` for a hold of `lease` (no watchdog).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantFairLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let maybe = lock.try_lock_with_lease(Duration::from_secs(1), Duration::from_secs(10)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_with_lease(
        &self,
        wait: Duration,
        lease: Duration,
    ) -> Result<Option<NonReentrantFairGuard>> {
        Ok(self
            .core
            .try_lock(wait, Some(lease))
            .await?
            .map(NonReentrantFairGuard))
    }

    /// Runs `body` under the lock (watchdog mode); see [`RLock::run`](crate::RLock::run).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantFairLock) -> redisson_lock::Result<()> {
    /// let n = lock.run(async { 1 }).await?;
    /// # let _ = n; Ok(()) }
    /// ```
    pub async fn run<F: std::future::Future>(&self, body: F) -> Result<F::Output> {
        self.core.run(body).await
    }

    /// Releases one hold of this handle's owner without a guard; the last hold deletes the key
    /// and wakes the head waiter. The handle needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantFairLock) -> redisson_lock::Result<()> {
    /// let mine = lock.with_owner(7);
    /// mine.lock().await?.forget();
    /// mine.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(&self) -> Result<Unlocked> {
        self.core.unlock().await
    }

    /// Deletes the lock whoever holds it and wakes the head waiter (Redisson `forceUnlock()`); the
    /// queue stays. A key that is not a lock is refused with
    /// [`Error::WrongType`](crate::Error::WrongType).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantFairLock) -> redisson_lock::Result<()> {
    /// let deleted = lock.force_unlock().await?;
    /// # let _ = deleted; Ok(()) }
    /// ```
    pub async fn force_unlock(&self) -> Result<bool> {
        self.core.force_unlock().await
    }

    /// Whether anyone holds the lock (`EXISTS`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantFairLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.is_locked().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_locked(&self) -> Result<bool> {
        self.core.exists().await
    }

    /// Whether this handle's owner holds the lock; needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantFairLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.with_owner(7).is_held().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held(&self) -> Result<bool> {
        self.core.is_held().await
    }

    /// Whether `owner` of this client holds the lock.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantFairLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.is_held_by(7).await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.core.is_held_by(owner.into()).await
    }

    /// How many times this handle's owner holds the lock; needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantFairLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.with_owner(7).hold_count().await?);
    /// # Ok(()) }
    /// ```
    pub async fn hold_count(&self) -> Result<u64> {
        self.core.hold_count().await
    }

    /// The lock's remaining time to live (`PTTL`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RNonReentrantFairLock) -> redisson_lock::Result<()> {
    /// println!("{:?}", lock.remain_time_to_live().await?);
    /// # Ok(()) }
    /// ```
    pub async fn remain_time_to_live(&self) -> Result<Ttl> {
        self.core.remain_time_to_live().await
    }
}

impl std::fmt::Debug for RNonReentrantFairLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RNonReentrantFairLock")
            .field("key", &&*self.core.key)
            .field("owner", &self.core.owner)
            .finish()
    }
}

/// Proof of one hold of an [`RNonReentrantFairLock`]; dropping it queues its release (see
/// [`LockGuard`](crate::LockGuard) for what drop does).
///
/// ```no_run
/// # async fn demo(lock: redisson_lock::RNonReentrantFairLock) -> redisson_lock::Result<()> {
/// let guard = lock.lock().await?;
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[must_use = "if unused the lock is released at once (in the background)"]
pub struct NonReentrantFairGuard(Held<FairKind>);

impl NonReentrantFairGuard {
    /// Releases this hold; the owner's last hold deletes the key and publishes `0` to the head
    /// waiter's channel only (`redisson_lock__channel:{<key>}:<head field>`). A hold known to
    /// have ended sends nothing; a lock that vanished is [`Error::NotHeld`](crate::Error::NotHeld)
    /// (Redisson counts it as released) and the head waiter is woken all the same.
    ///
    /// # Cancel safety
    ///
    /// Dropping this future does not cancel the release: the client's background work finishes it.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::NonReentrantFairGuard) -> redisson_lock::Result<()> {
    /// g.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(self) -> Result<Unlocked> {
        self.0.unlock().await
    }

    /// Resolves when this hold is lost (see [`LostReason`]). Cancel safe: it only observes.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::NonReentrantFairGuard) { let reason = g.lost().await; }
    /// ```
    pub fn lost(&self) -> impl std::future::Future<Output = LostReason> + Send + 'static {
        self.0.lost()
    }

    /// What this process knows about the hold, without asking Redis.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::NonReentrantFairGuard) { println!("{:?}", g.state()); }
    /// ```
    pub fn state(&self) -> LeaseState {
        self.0.state()
    }

    /// `state() == LeaseState::Held`.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::NonReentrantFairGuard) { assert!(g.is_held()); }
    /// ```
    pub fn is_held(&self) -> bool {
        self.0.is_held()
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::NonReentrantFairGuard) { println!("{}", g.key()); }
    /// ```
    pub fn key(&self) -> &str {
        self.0.key()
    }

    /// The hash field of this hold.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::NonReentrantFairGuard) { println!("{}", g.field()); }
    /// ```
    pub fn field(&self) -> &str {
        self.0.field()
    }

    /// The owner of this hold.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::NonReentrantFairGuard) { println!("{}", g.owner()); }
    /// ```
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::NonReentrantFairGuard) { println!("{:?}", g.lease()); }
    /// ```
    pub fn lease(&self) -> Option<Duration> {
        self.0.lease()
    }

    /// Keeps the hold without a guard (renewal goes on in watchdog mode).
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::NonReentrantFairGuard) { g.forget(); }
    /// ```
    pub fn forget(self) {
        self.0.forget()
    }
}

impl std::fmt::Debug for NonReentrantFairGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("NonReentrantFairGuard").field(&self.0).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        fn assert_send_sync_static<T: Send + Sync + 'static>() {}
        assert_send_sync_static::<FairGuard>();
        assert_send_sync_static::<RFairLock>();
        assert_send_sync_static::<NonReentrantFairGuard>();
    }

    #[test]
    fn each_waiter_has_its_own_channel() {
        assert_eq!(FAIR.channel("q", "id:7"), "redisson_lock__channel:{q}:id:7");
        assert!(FAIR.stable_owner());
    }
}
