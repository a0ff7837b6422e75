//! The guard core every guard type wraps: who holds what, how to let go, release on drop.

use std::sync::Arc;
use std::time::Duration;

use crate::background::Job;
use crate::core::release::Releaser;
use crate::core::LockCore;
use crate::error::{Error, Result};
use crate::holds::Mode;
use crate::kind::{AcquireKind, Reentrant};
use crate::lease::Lease;
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

/// One hold of a lock of kind `K`.
pub(crate) struct Held<K: AcquireKind> {
    inner: Option<HeldInner<K>>,
}

struct HeldInner<K: AcquireKind> {
    core: LockCore<K>,
    field: Arc<str>,
    owner: OwnerId,
    /// The hold's epoch (shared with the other live holds of the field).
    lease: Arc<Lease>,
    mode: Mode,
    grant: K::Grant,
    /// Counted in `redisson_lock_held` until this hold's state is dropped (metrics feature).
    _holding: crate::metrics::Holding,
}

impl<K: AcquireKind> Held<K> {
    pub(crate) fn new(
        core: LockCore<K>,
        field: Arc<str>,
        owner: OwnerId,
        lease: Arc<Lease>,
        mode: Mode,
        grant: K::Grant,
    ) -> Held<K> {
        let holding = crate::metrics::Holding::new(&core.labels());
        Held {
            inner: Some(HeldInner {
                core,
                field,
                owner,
                lease,
                mode,
                grant,
                _holding: holding,
            }),
        }
    }

    fn inner(&self) -> &HeldInner<K> {
        self.inner
            .as_ref()
            .expect("a guard's state is present until it is consumed")
    }

    pub(crate) fn key(&self) -> &str {
        &self.inner().core.key
    }

    pub(crate) fn core(&self) -> &LockCore<K> {
        &self.inner().core
    }

    pub(crate) fn field(&self) -> &str {
        &self.inner().field
    }

    pub(crate) fn owner(&self) -> OwnerId {
        self.inner().owner
    }

    pub(crate) fn grant(&self) -> K::Grant {
        self.inner().grant
    }

    pub(crate) fn lease(&self) -> Option<Duration> {
        match self.inner().mode {
            Mode::Watchdog => None,
            Mode::Leased { lease_ms, .. } => Some(Duration::from_millis(lease_ms)),
        }
    }

    pub(crate) fn state(&self) -> LeaseState {
        self.inner().lease.state()
    }

    pub(crate) fn is_held(&self) -> bool {
        self.state() == LeaseState::Held
    }

    pub(crate) fn lost(&self) -> impl std::future::Future<Output = LostReason> + Send + 'static {
        let lease = self.inner().lease.clone();
        async move { lease.lost().await }
    }

    /// Whether `other` belongs to the same epoch (it re-entered this hold).
    pub(crate) fn same_epoch<J: AcquireKind>(&self, other: &Held<J>) -> bool {
        Arc::ptr_eq(&self.inner().lease, &other.inner().lease)
    }

    pub(crate) fn not_held(&self) -> Error {
        Error::NotHeld {
            key: self.key().to_owned(),
            field: self.field().to_owned(),
        }
    }

    /// The same lock acting for this hold's owner.
    pub(crate) fn pinned_core(&self) -> LockCore<K> {
        let mut core = self.core().clone();
        core.owner = OwnerSel::Pinned(self.owner());
        core
    }

    /// Releases this hold. Cancelling the returned future does not cancel the release: it is
    /// finished by the client's background work. A hold known to have ended sends nothing
    /// (`NotHeld`).
    pub(crate) async fn unlock(mut self) -> Result<crate::Unlocked> {
        let Some(inner) = self.inner.take() else {
            return Err(Error::Shutdown);
        };
        let releaser = Releaser::of(&inner.core);
        let span = tracing::debug_span!("release", key = %inner.core.key, field = %inner.field);
        let request = async move {
            releaser
                .release_hold(&inner.field, &inner.lease, inner.mode)
                .await
        };
        tracing::Instrument::instrument(request, span).await
    }

    /// Gives up the guard without releasing (renewal goes on in watchdog mode).
    pub(crate) fn forget(mut self) {
        self.inner = None;
    }
}

impl<K: Reentrant> Held<K> {
    /// Another hold for this hold's owner, which must join this hold's epoch (a re-entry).
    pub(crate) async fn reenter(&self, lease: Option<Duration>) -> Result<Held<K>> {
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

impl<K: AcquireKind> Drop for Held<K> {
    fn drop(&mut self) {
        let Some(inner) = self.inner.take() else {
            return;
        };
        if inner.lease.state() != LeaseState::Held {
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
                        .release_hold(&inner.field, &inner.lease, inner.mode)
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

impl<K: AcquireKind> std::fmt::Debug for Held<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Some(i) => f
                .debug_struct("Held")
                .field("key", &&*i.core.key)
                .field("field", &&*i.field)
                .field("mode", &i.mode)
                .field("grant", &i.grant)
                .field("state", &i.lease.state())
                .finish(),
            None => f.write_str("Held(consumed)"),
        }
    }
}
