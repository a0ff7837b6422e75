//! The guard core every guard type wraps: who holds what, how to let go, release on drop.

use std::sync::Arc;
use std::time::Duration;

use crate::background::Job;
use crate::core::release::Releaser;
use crate::core::Lock;
use crate::error::{Error, Result};
use crate::hold_record::HoldRecord;
use crate::holds::Expiry;
use crate::kind::{AcquireKind, Reenterable};
use crate::lost::{LeaseState, LostReason};
use crate::owner::{OwnerId, OwnerSel};

/// The outcome of a successful unlock.
///
/// ```no_run
/// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
/// use redisson_lock::Unlocked;
/// let outer = lock.lock().await?;
/// let inner = outer.reenter().await?;
/// assert_eq!(inner.unlock().await?, Unlocked::Partial);
/// assert_eq!(outer.unlock().await?, Unlocked::Released);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unlocked {
    /// One hold was released; the owner still holds the lock (nothing was published).
    Partial,
    /// The owner's last hold was released (for a read lock, other readers may still hold it).
    Released,
}

/// Proof of one hold of a [`Lock<K>`](crate::Lock) (of any kind: [`LockGuard`](crate::LockGuard)
/// is `Guard<kinds::Reentrant>`, and so on); release it with [`unlock`](Self::unlock).
///
/// The guard carries its owner, so it can be moved to and released from any task. It does not
/// borrow the lock (`'static`, `Send`).
///
/// **On drop** (without `unlock`): the release is handed to the client's background work, which
/// stops renewal for this hold and runs the unlock script shortly after. Drop never blocks and
/// never panics, also outside a runtime. A guard whose hold is known to have ended (`state()` is
/// not `Held`) sends nothing. If the client's runtime is gone, nothing is sent and the lock
/// expires with its lease (the watchdog timeout, 30 s by default, or the explicit lease);
/// [`Client::shutdown`](crate::Client::shutdown) sends every queued release before a service
/// exits. Prefer `unlock().await` to see the release's result.
///
/// Each `lock()` gets a hold of its own (a fresh owner); [`reenter`](Self::reenter) takes a
/// second hold of the same owner (count 2, as a nested `lock()` in one Java thread) for the kinds
/// that allow it. Holds of one owner share one fate: the key lives as long as the longest of them
/// needs, and when Redis loses the owner's field all of them report the loss.
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
pub struct Guard<K: AcquireKind> {
    inner: Option<GuardInner<K>>,
}

struct GuardInner<K: AcquireKind> {
    core: Lock<K>,
    field: Arc<str>,
    owner: OwnerId,
    /// The hold's epoch (shared with the other live holds of the field).
    record: Arc<HoldRecord>,
    expiry: Expiry,
    grant: K::Grant,
    /// Counted in `redisson_lock_held` until this hold's state is dropped (metrics feature).
    _holding: crate::metrics::Holding,
}

impl<K: AcquireKind> Guard<K> {
    pub(crate) fn new(
        core: Lock<K>,
        field: Arc<str>,
        owner: OwnerId,
        record: Arc<HoldRecord>,
        expiry: Expiry,
        grant: K::Grant,
    ) -> Guard<K> {
        let holding = crate::metrics::Holding::new(&core.labels());
        Guard {
            inner: Some(GuardInner {
                core,
                field,
                owner,
                record,
                expiry,
                grant,
                _holding: holding,
            }),
        }
    }

    fn inner(&self) -> &GuardInner<K> {
        self.inner
            .as_ref()
            .expect("a guard's state is present until it is consumed")
    }

    /// The lock's Redis key.
    ///
    /// ```no_run
    /// # fn demo(guard: redisson_lock::LockGuard) { println!("{}", guard.key()); }
    /// ```
    pub fn key(&self) -> &str {
        &self.inner().core.key
    }

    pub(crate) fn core(&self) -> &Lock<K> {
        &self.inner().core
    }

    /// The hash field of this hold (`<client id>:<owner id>`, plus `:write` for the write lock).
    ///
    /// ```no_run
    /// # fn demo(guard: redisson_lock::LockGuard) { println!("{}", guard.field()); }
    /// ```
    pub fn field(&self) -> &str {
        &self.inner().field
    }

    /// The owner of this hold.
    ///
    /// ```no_run
    /// # fn demo(guard: redisson_lock::LockGuard) { println!("{}", guard.owner()); }
    /// ```
    pub fn owner(&self) -> OwnerId {
        self.inner().owner
    }

    pub(crate) fn grant(&self) -> K::Grant {
        self.inner().grant
    }

    /// The explicit lease, or `None` in watchdog mode.
    ///
    /// ```no_run
    /// # fn demo(guard: redisson_lock::LockGuard) { println!("{:?}", guard.lease()); }
    /// ```
    pub fn lease(&self) -> Option<Duration> {
        match self.inner().expiry {
            Expiry::Watchdog => None,
            Expiry::Leased { lease_ms, .. } => Some(Duration::from_millis(lease_ms)),
        }
    }

    /// What this process knows about the hold, without asking Redis.
    ///
    /// ```no_run
    /// # fn demo(guard: redisson_lock::LockGuard) { println!("{:?}", guard.state()); }
    /// ```
    pub fn state(&self) -> LeaseState {
        self.inner().record.state()
    }

    /// `state() == LeaseState::Held`: granted or renewed recently enough to trust.
    ///
    /// ```no_run
    /// # fn demo(guard: redisson_lock::LockGuard) { assert!(guard.is_held()); }
    /// ```
    pub fn is_held(&self) -> bool {
        self.state() == LeaseState::Held
    }

    /// Resolves when this hold is lost (see [`LostReason`]); stays pending while it is held, and
    /// for ever once it was released. Select on it to stop work that must not continue without
    /// the lock.
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
        let record = self.inner().record.clone();
        async move { record.lost().await }
    }

    /// Whether `other` belongs to the same epoch (it re-entered this hold).
    pub(crate) fn same_epoch<J: AcquireKind>(&self, other: &Guard<J>) -> bool {
        Arc::ptr_eq(&self.inner().record, &other.inner().record)
    }

    pub(crate) fn not_held(&self) -> Error {
        Error::NotHeld {
            key: self.key().to_owned(),
            field: self.field().to_owned(),
        }
    }

    /// The same lock acting for this hold's owner.
    pub(crate) fn pinned_core(&self) -> Lock<K> {
        let mut core = self.core().clone();
        core.owner = OwnerSel::Pinned(self.owner());
        core
    }

    /// Releases this hold: the count goes down by one; when nothing of the owner is left its
    /// field goes, the key too when nobody else holds it, and waiters are woken (one per
    /// subscribed client; every reader after a write unlock; the head of a fair queue). A
    /// partial release keeps the key alive as long as the owner's longest remaining hold needs.
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
    /// [`Error::NotHeld`] when the hold had already ended (the lease ran out, a force unlock,
    /// Redis lost the data): Redis is not changed, and work done under the lock may have
    /// overlapped with another holder's.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// lock.lock().await?.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(mut self) -> Result<crate::Unlocked> {
        let Some(inner) = self.inner.take() else {
            return Err(Error::Shutdown);
        };
        let releaser = Releaser::of(&inner.core);
        let span = tracing::debug_span!("release", key = %inner.core.key, field = %inner.field);
        let request = async move {
            releaser
                .release_hold(&inner.field, &inner.record, inner.expiry)
                .await
        };
        tracing::Instrument::instrument(request, span).await
    }

    /// Extends a leased hold: its lease now ends `lease` after this request is sent (never
    /// earlier than it did). The key's TTL is set to what the owner's longest live hold needs,
    /// and never shortened; a lock whose owner field is gone is not re-created. What
    /// [`RMultiLock`](crate::RMultiLock) does once it holds its members, so that the lease
    /// counts from when the whole lock is held.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a hold in watchdog mode (the watchdog renews it) or a
    /// zero lease; [`Error::NotHeld`] when the hold has ended (it is reported lost if the
    /// extension found it gone); [`Error::Shutdown`] once the client shuts down; a Redis error
    /// (the hold then keeps its lease: it ends no later than before).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the guard's lease changes only once Redis has answered, so a dropped
    /// extension leaves the hold trusted for no longer than before (Redis may have extended
    /// the key's TTL meanwhile, which only keeps the lock longer).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let mut guard = lock.lock_with_lease(Duration::from_secs(10)).await?;
    /// // the work takes longer than planned: 10 s more, from now
    /// guard.extend_lease(Duration::from_secs(10)).await?;
    /// guard.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn extend_lease(&mut self, lease: Duration) -> Result<()> {
        let Some(inner) = self.inner.as_mut() else {
            return Err(Error::Shutdown);
        };
        inner.expiry =
            super::extend::extend(&inner.core, &inner.field, &inner.record, inner.expiry, lease).await?;
        Ok(())
    }

    /// Keeps the hold without a guard (in watchdog mode renewal goes on). Release it later with
    /// [`unlock`](crate::Lock::unlock) on a handle with the same owner
    /// (`lock.with_owner(guard.owner())`), or let it expire.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let guard = lock.lock().await?;
    /// let owner = guard.owner();
    /// guard.forget();
    /// lock.with_owner(owner).unlock().await?;
    /// # Ok(()) }
    /// ```
    pub fn forget(mut self) {
        self.inner = None;
    }
}

impl<K: Reenterable> Guard<K> {
    /// Takes another hold for this guard's owner (a re-entry: the hold count goes up by one, as a
    /// nested `lock()` in one Java thread does), in watchdog mode. The new guard is released on
    /// its own; the lock stays held until every guard is released. Not offered by the
    /// non-reentrant kinds.
    ///
    /// # Cancel safety
    ///
    /// As for [`Lock::lock`]: a hold granted after the future was dropped is released.
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`] when this hold has ended (if Redis answers with a fresh grant instead
    /// of a re-entry, that hold is given back and this guard reports the loss).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let outer = lock.lock().await?;
    /// let inner = outer.reenter().await?;
    /// # Ok(()) }
    /// ```
    pub async fn reenter(&self) -> Result<Guard<K>> {
        self.reenter_opt(None).await
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
    pub async fn reenter_with_lease(&self, lease: Duration) -> Result<Guard<K>> {
        self.reenter_opt(Some(lease)).await
    }

    /// Another hold for this hold's owner, which must join this hold's epoch (a re-entry).
    pub(crate) async fn reenter_opt(&self, lease: Option<Duration>) -> Result<Guard<K>> {
        if !self.is_held() {
            return Err(self.not_held());
        }
        let held = self
            .pinned_core()
            .acquire(Some(Duration::ZERO), lease)
            .await?
            .ok_or_else(|| self.not_held())?;
        if !self.same_epoch(&held) {
            // Redis granted a new hold, not a re-entry: this hold was gone (it is now reported
            // lost). Give the new one back.
            drop(held);
            return Err(self.not_held());
        }
        Ok(held)
    }
}

impl<K: AcquireKind> Drop for Guard<K> {
    fn drop(&mut self) {
        let Some(inner) = self.inner.take() else {
            return;
        };
        if inner.record.state() != LeaseState::Held {
            tracing::debug!(key = %inner.core.key, field = %inner.field, "guard of an ended hold dropped: nothing to release");
            inner
                .core
                .client
                .holds
                .forget_ended(&inner.core.key, &inner.field);
            return;
        }
        let key = inner.core.key.clone();
        let field = inner.field.clone();
        let background = inner.core.client.background.clone();
        let releaser = Releaser::of(&inner.core);
        let span = tracing::debug_span!("release", key = %key, field = %field, on_drop = true);
        let job: Job = Box::new(move || {
            Box::pin(tracing::Instrument::instrument(
                async move {
                    match releaser
                        .release_hold(&inner.field, &inner.record, inner.expiry)
                        .await
                    {
                        Ok(_) => Ok(()),
                        Err(Error::NotHeld { .. }) => {
                            tracing::debug!(key = %releaser.key, field = %inner.field, "dropped guard's hold had already ended");
                            Ok(())
                        }
                        Err(e) => {
                            tracing::warn!(key = %releaser.key, field = %inner.field, error = %e, "release on drop failed; the lock expires with its lease");
                            Err(e)
                        }
                    }
                },
                span,
            ))
        });
        if background.push(&key, job) {
            tracing::debug!(key = %key, field = %field, "guard dropped: release queued");
        } else {
            tracing::warn!(key = %key, field = %field, "guard dropped after the client stopped: the lock expires with its lease");
        }
    }
}

impl<K: AcquireKind> std::fmt::Debug for Guard<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Some(i) => f
                .debug_struct("Guard")
                .field("kind", &i.core.kind.label())
                .field("key", &&*i.core.key)
                .field("field", &&*i.field)
                .field("expiry", &i.expiry)
                .field("grant", &i.grant)
                .field("state", &i.record.state())
                .finish(),
            None => f.write_str("Guard(consumed)"),
        }
    }
}
