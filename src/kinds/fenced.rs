//! Redisson's fenced lock (`RFencedLock`, 3.19+): the RLock plus a fencing token taken by every
//! acquisition (`lua/fenced/`; unlock, force unlock and channel are the RLock's `lua/lock/`).

use std::sync::Arc;
use std::time::Duration;

use redis::{ScriptInvocation, Value};

use crate::core::{Held, LockCore};
use crate::error::{Error, Result};
use crate::inner::ClientInner;
use crate::kind::{decode_reply, layout, AcquireArgs, AcquireKind, Ctx, Kind, Reentrant, ReleaseArgs, Reply};
use crate::{name, script, LeaseState, LostReason, OwnerId, Ttl, Unlocked};

/// The fenced-lock kind: Redisson's `RedissonFencedLock`.
pub(crate) struct FencedKind;

impl Kind for FencedKind {
    fn label(&self) -> &'static str {
        "fenced"
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

impl AcquireKind for FencedKind {
    /// The fencing token this grant took.
    type Grant = u64;

    fn acquire(&self, c: &Ctx<'_>, a: &AcquireArgs<'_>) -> ScriptInvocation<'static> {
        let mut inv = script::FENCED_ACQUIRE.prepare_invoke();
        inv.key(c.key)
            .key(name::token_key(c.key))
            .key(a.latch)
            .arg(a.ttl_ms)
            .arg(c.field)
            .arg(a.latch_ms);
        inv
    }

    fn decode(&self, v: &Value) -> Result<Reply<u64>> {
        Ok(match decode_reply(v)? {
            Reply::Granted {
                count,
                grant: Some(token),
            } if token >= 1 => Reply::Granted {
                count,
                grant: token as u64,
            },
            Reply::Granted { .. } => {
                return Err(Error::Protocol(format!("a fenced grant without a token: {v:?}")))
            }
            Reply::Refused { pttl } => Reply::Refused { pttl },
            Reply::Cancelled => Reply::Cancelled,
        })
    }
}

impl Reentrant for FencedKind {}

static FENCED: FencedKind = FencedKind;

/// A reentrant lock that hands out **fencing tokens**, wire-compatible with Redisson's
/// `RFencedLock` (`getFencedLock(name)`, Redisson 3.19+).
///
/// Redis state: the [`RLock`](crate::RLock)'s hash, TTL, channel and unlock, plus the counter
/// `redisson_lock_token:{<key>}` (a string integer, no TTL). Every acquisition — a re-entry too —
/// increments it and gets the new value as its token, so tokens strictly increase per lock name,
/// across Java and Rust holders, while Redis keeps its data.
///
/// # What a token is for
///
/// A lock can end without its holder noticing in time: a GC or VM pause longer than the lease, a
/// network partition, a Redis failover that lost the lock. The holder then writes to the protected
/// resource *after* someone else took the lock. Fencing stops that at the resource: pass the
/// token with every write, and have the resource reject a token lower than the highest it has
/// seen. With SQL:
///
/// ```sql
/// UPDATE orders SET state = $1, fence = $2 WHERE id = $3 AND fence < $2;
/// -- 0 rows updated: a newer holder already wrote; this holder's lock is stale
/// ```
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// let lock = client.fenced_lock("lock:order:42")?;
/// let (token, guard) = lock.lock_and_get_token().await?;
/// // UPDATE orders SET ..., fence = token WHERE id = 42 AND fence < token
/// # let _ = token;
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
///
/// Tokens only increase while Redis keeps its data: a failover to a replica that missed the last
/// `INCR`, or a restart without persistence, can hand out a token again (Redisson's too). Run
/// fenced locks on a Redis that persists (AOF) and replicates synchronously enough for your
/// needs, and keep the resource's check strict (`fence < token`), so that of two holders with an
/// equal token only the first write wins.
#[derive(Clone)]
pub struct RFencedLock {
    pub(crate) core: LockCore<FencedKind>,
}

impl RFencedLock {
    pub(crate) fn new(client: Arc<ClientInner>, key: String) -> RFencedLock {
        RFencedLock {
            core: LockCore::new(client, key, &FENCED),
        }
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RFencedLock) { println!("{}", lock.key()); }
    /// ```
    pub fn key(&self) -> &str {
        &self.core.key
    }

    /// The same lock acting for a fixed owner id (see [`RLock::with_owner`](crate::RLock::with_owner)).
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RFencedLock) { let mine = lock.with_owner(7); }
    /// ```
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RFencedLock {
        RFencedLock {
            core: self.core.with_owner(owner.into()),
        }
    }

    /// The owner this handle acts for, if it has one (see [`RLock::owner`](crate::RLock::owner)).
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RFencedLock) { assert!(lock.owner().is_none()); }
    /// ```
    pub fn owner(&self) -> Option<OwnerId> {
        self.core.owner.fixed()
    }

    /// The hash field of this handle's owner, if it has one.
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RFencedLock) { println!("{:?}", lock.with_owner(7).field()); }
    /// ```
    pub fn field(&self) -> Option<String> {
        self.core.handle_field()
    }

    /// Acquires the lock, waiting as long as it takes, watchdog mode; the guard carries the new
    /// token ([`FencedGuard::token`]). Cancel safety and errors as [`RLock::lock`](crate::RLock::lock).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// let guard = lock.lock().await?;
    /// println!("token {}", guard.token());
    /// # Ok(()) }
    /// ```
    pub async fn lock(&self) -> Result<FencedGuard> {
        self.core.lock(None).await.map(FencedGuard)
    }

    /// Acquires the lock for `lease` (no watchdog), waiting as long as it takes.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// let guard = lock.lock_with_lease(std::time::Duration::from_secs(10)).await?;
    /// # drop(guard); Ok(()) }
    /// ```
    pub async fn lock_with_lease(&self, lease: Duration) -> Result<FencedGuard> {
        self.core.lock(Some(lease)).await.map(FencedGuard)
    }

    /// Acquires the lock (waiting as long as it takes, watchdog mode) and returns its token with
    /// the guard (Redisson `lockAndGetToken()`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// let (token, guard) = lock.lock_and_get_token().await?;
    /// assert_eq!(token, guard.token());
    /// # Ok(()) }
    /// ```
    pub async fn lock_and_get_token(&self) -> Result<(u64, FencedGuard)> {
        let g = self.lock().await?;
        Ok((g.token(), g))
    }

    /// Waits up to `wait` (`Duration::ZERO`: one attempt) and, when acquired, returns the token
    /// with the guard (Redisson `tryLockAndGetToken(waitTime, leaseTime, unit)`); `lease: None`
    /// is watchdog mode. A refused attempt takes no token.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// if let Some((token, guard)) = lock.try_lock_and_get_token(Duration::from_secs(1), None).await? {
    ///     # let _ = token; guard.unlock().await?;
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn try_lock_and_get_token(
        &self,
        wait: Duration,
        lease: Option<Duration>,
    ) -> Result<Option<(u64, FencedGuard)>> {
        Ok(self
            .core
            .try_lock(wait, lease)
            .await?
            .map(|h| (h.grant(), FencedGuard(h))))
    }

    /// One attempt, no waiting (watchdog mode).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// let maybe = lock.try_lock().await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock(&self) -> Result<Option<FencedGuard>> {
        Ok(self.core.try_lock(Duration::ZERO, None).await?.map(FencedGuard))
    }

    /// Waits up to `wait` (watchdog mode).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// let maybe = lock.try_lock_for(std::time::Duration::from_secs(1)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_for(&self, wait: Duration) -> Result<Option<FencedGuard>> {
        Ok(self.core.try_lock(wait, None).await?.map(FencedGuard))
    }

    /// Waits up to `wait` for a hold of `lease` (no watchdog).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let maybe = lock.try_lock_with_lease(Duration::from_secs(1), Duration::from_secs(10)).await?;
    /// # drop(maybe); Ok(()) }
    /// ```
    pub async fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<FencedGuard>> {
        Ok(self.core.try_lock(wait, Some(lease)).await?.map(FencedGuard))
    }

    /// The last token handed out for this lock (Redisson `getToken()`: `GET
    /// redisson_lock_token:{<key>}`); `None` before the first acquisition.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// println!("{:?}", lock.get_token().await?);
    /// # Ok(()) }
    /// ```
    pub async fn get_token(&self) -> Result<Option<u64>> {
        self.core
            .query(redis::cmd("GET").arg(name::token_key(&self.core.key)))
            .await
    }

    /// Runs `body` under the lock (watchdog mode); see [`RLock::run`](crate::RLock::run).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// let n = lock.run(async { 1 }).await?;
    /// # let _ = n; Ok(()) }
    /// ```
    pub async fn run<F: std::future::Future>(&self, body: F) -> Result<F::Output> {
        self.core.run(body).await
    }

    /// Releases one hold of this handle's owner without a guard (as [`RLock::unlock`](crate::RLock::unlock)).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// let mine = lock.with_owner(7);
    /// mine.lock().await?.forget();
    /// mine.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(&self) -> Result<Unlocked> {
        self.core.unlock().await
    }

    /// Deletes the lock whoever holds it and publishes `0` (the token counter stays).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// let deleted = lock.force_unlock().await?;
    /// # let _ = deleted; Ok(()) }
    /// ```
    pub async fn force_unlock(&self) -> Result<bool> {
        self.core.force_unlock().await
    }

    /// Whether anyone holds the lock (`EXISTS`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.is_locked().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_locked(&self) -> Result<bool> {
        self.core.exists().await
    }

    /// Whether this handle's owner holds the lock; needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.with_owner(7).is_held().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held(&self) -> Result<bool> {
        self.core.is_held().await
    }

    /// Whether `owner` of this client holds the lock.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.is_held_by(7).await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.core.is_held_by(owner.into()).await
    }

    /// How many times this handle's owner holds the lock; needs an owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.with_owner(7).hold_count().await?);
    /// # Ok(()) }
    /// ```
    pub async fn hold_count(&self) -> Result<u64> {
        self.core.hold_count().await
    }

    /// The lock's remaining time to live (`PTTL`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
    /// println!("{:?}", lock.remain_time_to_live().await?);
    /// # Ok(()) }
    /// ```
    pub async fn remain_time_to_live(&self) -> Result<Ttl> {
        self.core.remain_time_to_live().await
    }
}

impl std::fmt::Debug for RFencedLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RFencedLock")
            .field("key", &&*self.core.key)
            .field("owner", &self.core.owner)
            .finish()
    }
}

/// Proof of one hold of an [`RFencedLock`], with the fencing token it took; dropping it queues
/// its release (see [`LockGuard`](crate::LockGuard) for what drop does).
///
/// ```no_run
/// # async fn demo(lock: redisson_lock::RFencedLock) -> redisson_lock::Result<()> {
/// let guard = lock.lock().await?;
/// let token = guard.token();
/// # let _ = token;
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[must_use = "if unused the lock is released at once (in the background)"]
pub struct FencedGuard(Held<FencedKind>);

impl FencedGuard {
    /// The fencing token of this hold: higher than every token handed out for this lock before
    /// it. Pass it to the protected resource with every write (see [`RFencedLock`]).
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FencedGuard) { println!("{}", g.token()); }
    /// ```
    pub fn token(&self) -> u64 {
        self.0.grant()
    }

    /// Releases this hold (as [`LockGuard::unlock`](crate::LockGuard::unlock): the last hold
    /// deletes the key and publishes `0`). A hold known to have ended sends nothing.
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
    /// # async fn demo(g: redisson_lock::FencedGuard) -> redisson_lock::Result<()> {
    /// g.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(self) -> Result<Unlocked> {
        self.0.unlock().await
    }

    /// Another hold for this guard's owner (a re-entry), which takes a new, higher token.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::FencedGuard) -> redisson_lock::Result<()> {
    /// let again = g.reenter().await?;
    /// assert!(again.token() > g.token());
    /// # Ok(()) }
    /// ```
    pub async fn reenter(&self) -> Result<FencedGuard> {
        self.0.reenter(None).await.map(FencedGuard)
    }

    /// Another hold for this guard's owner, with a lease (and a new token).
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::FencedGuard) -> redisson_lock::Result<()> {
    /// let again = g.reenter_with_lease(std::time::Duration::from_secs(5)).await?;
    /// # drop(again); Ok(()) }
    /// ```
    pub async fn reenter_with_lease(&self, lease: Duration) -> Result<FencedGuard> {
        self.0.reenter(Some(lease)).await.map(FencedGuard)
    }

    /// Resolves when this hold is lost (see [`LostReason`]). Cancel safe: it only observes.
    ///
    /// ```no_run
    /// # async fn demo(g: redisson_lock::FencedGuard) { let reason = g.lost().await; }
    /// ```
    pub fn lost(&self) -> impl std::future::Future<Output = LostReason> + Send + 'static {
        self.0.lost()
    }

    /// What this process knows about the hold, without asking Redis.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FencedGuard) { println!("{:?}", g.state()); }
    /// ```
    pub fn state(&self) -> LeaseState {
        self.0.state()
    }

    /// `state() == LeaseState::Held`.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FencedGuard) { assert!(g.is_held()); }
    /// ```
    pub fn is_held(&self) -> bool {
        self.0.is_held()
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FencedGuard) { println!("{}", g.key()); }
    /// ```
    pub fn key(&self) -> &str {
        self.0.key()
    }

    /// The hash field of this hold.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FencedGuard) { println!("{}", g.field()); }
    /// ```
    pub fn field(&self) -> &str {
        self.0.field()
    }

    /// The owner of this hold.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FencedGuard) { println!("{}", g.owner()); }
    /// ```
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FencedGuard) { println!("{:?}", g.lease()); }
    /// ```
    pub fn lease(&self) -> Option<Duration> {
        self.0.lease()
    }

    /// Keeps the hold without a guard (renewal goes on in watchdog mode).
    ///
    /// ```no_run
    /// # fn demo(g: redisson_lock::FencedGuard) { g.forget(); }
    /// ```
    pub fn forget(self) {
        self.0.forget()
    }
}

impl std::fmt::Debug for FencedGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("FencedGuard").field(&self.0).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_carry_a_token() {
        let arr = |v: &[i64]| Value::Array(v.iter().map(|n| Value::Int(*n)).collect());
        assert_eq!(
            FENCED.decode(&arr(&[1, 2, 9])).unwrap(),
            Reply::Granted { count: 2, grant: 9 }
        );
        assert!(
            FENCED.decode(&arr(&[1, 1])).is_err(),
            "a fenced grant has a token"
        );
        assert_eq!(
            FENCED.decode(&arr(&[0, 500])).unwrap(),
            Reply::Refused { pttl: 500 }
        );
    }

    #[test]
    fn bounds() {
        fn assert_send_sync_static<T: Send + Sync + 'static>() {}
        assert_send_sync_static::<FencedGuard>();
        assert_send_sync_static::<RFencedLock>();
    }
}
