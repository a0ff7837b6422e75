//! The generic layer: one blocking handle type ([`Lock<K>`]) and one guard type ([`Guard<K>`])
//! for every kind, their aliases per kind, and the read-write pair [`RReadWriteLock`].

use std::sync::Arc;
use std::time::Duration;

use super::Rt;
use crate::error::{Error, Result};
use crate::kind::{AcquireKind, Reenterable};
use crate::kind_aliases;
use crate::kinds;
use crate::{BackOff, LeaseState, LostReason, OwnerId, Ttl, Unlocked};

/// The blocking twin of [`crate::Lock<K>`]: the same lock handle, every method of which blocks
/// the calling thread (and panics inside an async runtime, see the [module docs](super)). The
/// default owner is the calling thread ([`OwnerId::current_thread`]), as in Java, unless pinned
/// with [`with_owner`](Self::with_owner). The aliases [`RLock`], [`RFairLock`], ... name it for
/// each kind; what a kind keeps in Redis is on its type in [`crate::kinds`].
///
/// ```no_run
/// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// let lock = client.lock("lock:order:42")?; // a blocking::RLock = blocking::Lock<kinds::Reentrant>
/// let guard = lock.lock()?;
/// guard.unlock()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
pub struct Lock<K: AcquireKind> {
    pub(super) rt: Arc<Rt>,
    pub(super) core: crate::Lock<K>,
    pinned: bool,
}

impl<K: AcquireKind> Clone for Lock<K> {
    fn clone(&self) -> Self {
        Lock {
            rt: self.rt.clone(),
            core: self.core.clone(),
            pinned: self.pinned,
        }
    }
}

impl<K: AcquireKind> Lock<K> {
    pub(super) fn new(rt: Arc<Rt>, core: crate::Lock<K>) -> Lock<K> {
        Lock {
            rt,
            core,
            pinned: false,
        }
    }

    /// The async handle acting for this handle's owner: the pinned one, else the calling thread.
    fn owned(&self) -> crate::Lock<K> {
        if self.pinned {
            self.core.clone()
        } else {
            self.core.with_owner(OwnerId::current_thread())
        }
    }

    fn guard(&self, held: crate::Guard<K>) -> Guard<K> {
        Guard {
            rt: self.rt.clone(),
            held: Some(held),
        }
    }

    /// Blocking [`crate::Lock::key`].
    pub fn key(&self) -> &str {
        self.core.key()
    }

    /// The same lock acting for a fixed owner id instead of the calling thread
    /// ([`crate::Lock::with_owner`]).
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> Lock<K> {
        Lock {
            rt: self.rt.clone(),
            core: self.core.with_owner(owner),
            pinned: true,
        }
    }

    super::acquisitions!("crate::Lock", Guard<K>);
    super::owner_calls!("crate::Lock");

    super::twins! {"crate::Lock", core;
        fn force_unlock() -> bool;
        fn is_locked() -> bool;
        fn is_held_by(owner: impl Into<OwnerId>) -> bool;
        fn remain_time_to_live() -> Ttl;
    }

    /// Blocking [`crate::Lock::ttl`].
    pub fn ttl(&self) -> Result<Ttl> {
        self.remain_time_to_live()
    }
}

impl Lock<kinds::Fenced> {
    /// Blocking [`crate::Lock::lock_and_get_token`].
    pub fn lock_and_get_token(&self) -> Result<(u64, Guard<kinds::Fenced>)> {
        let g = self.lock()?;
        Ok((g.token(), g))
    }

    /// Blocking [`crate::Lock::lock_with_lease_and_get_token`].
    pub fn lock_with_lease_and_get_token(&self, lease: Duration) -> Result<(u64, Guard<kinds::Fenced>)> {
        let g = self.lock_with_lease(lease)?;
        Ok((g.token(), g))
    }

    /// Blocking [`crate::Lock::try_lock_and_get_token`].
    pub fn try_lock_and_get_token(&self) -> Result<Option<(u64, Guard<kinds::Fenced>)>> {
        Ok(self.try_lock()?.map(|g| (g.token(), g)))
    }

    /// Blocking [`crate::Lock::try_lock_for_and_get_token`].
    pub fn try_lock_for_and_get_token(&self, wait: Duration) -> Result<Option<(u64, Guard<kinds::Fenced>)>> {
        Ok(self.try_lock_for(wait)?.map(|g| (g.token(), g)))
    }

    /// Blocking [`crate::Lock::try_lock_with_lease_and_get_token`].
    pub fn try_lock_with_lease_and_get_token(
        &self,
        wait: Duration,
        lease: Duration,
    ) -> Result<Option<(u64, Guard<kinds::Fenced>)>> {
        Ok(self.try_lock_with_lease(wait, lease)?.map(|g| (g.token(), g)))
    }

    super::twins! {"crate::Lock", core;
        fn get_token() -> Option<u64>;
        fn raise_token_to(floor: u64) -> u64;
    }
}

impl Lock<kinds::Spin> {
    /// [`crate::Lock::with_backoff`].
    pub fn with_backoff(&self, backoff: BackOff) -> Result<Lock<kinds::Spin>> {
        Ok(Lock {
            rt: self.rt.clone(),
            core: self.core.with_backoff(backoff)?,
            pinned: self.pinned,
        })
    }
}

/// The blocking twin of [`crate::Guard<K>`]. On drop (without `unlock`): outside an async
/// runtime the release runs synchronously (bounded by the command timeout and retries, errors
/// logged); inside one it is handed to the client's background work, as for the async guard.
/// Never panics.
#[must_use = "if unused the lock is released at once"]
pub struct Guard<K: AcquireKind> {
    rt: Arc<Rt>,
    held: Option<crate::Guard<K>>,
}

impl<K: AcquireKind> Guard<K> {
    /// The blocking guard of an async hold, on `rt` (the other blocking handles' guards).
    #[cfg_attr(
        not(feature = "group-lock"),
        allow(dead_code, reason = "only the grouped lock's handle")
    )]
    pub(super) fn of(rt: Arc<Rt>, held: crate::Guard<K>) -> Guard<K> {
        Guard { rt, held: Some(held) }
    }

    fn h(&self) -> &crate::Guard<K> {
        self.held.as_ref().expect("present until consumed")
    }

    fn wrap(&self, held: crate::Guard<K>) -> Guard<K> {
        Guard {
            rt: self.rt.clone(),
            held: Some(held),
        }
    }

    /// Blocking [`crate::Guard::unlock`].
    pub fn unlock(mut self) -> Result<Unlocked> {
        let held = self.held.take().expect("present until consumed");
        self.rt.block_on(held.unlock())
    }

    /// [`crate::Guard::lost`]: a future that resolves when the hold is lost (await it from
    /// async code, or see [`wait_lost`](Self::wait_lost)).
    pub fn lost(&self) -> impl std::future::Future<Output = LostReason> + Send + 'static {
        self.h().lost()
    }

    /// Blocks until the hold is lost or `timeout` passes: the reason, or `None` while held.
    /// `Duration::ZERO` checks without waiting.
    pub fn wait_lost(&self, timeout: Duration) -> Option<LostReason> {
        if let LeaseState::Lost(reason) = self.state() {
            return Some(reason);
        }
        if timeout.is_zero() {
            return None;
        }
        let lost = self.h().lost();
        self.rt
            .block_on(async move { tokio::time::timeout(timeout, lost).await.ok() })
    }

    /// [`crate::Guard::state`].
    pub fn state(&self) -> LeaseState {
        self.h().state()
    }

    /// [`crate::Guard::is_held`].
    pub fn is_held(&self) -> bool {
        self.h().is_held()
    }

    /// [`crate::Guard::key`].
    pub fn key(&self) -> &str {
        self.h().key()
    }

    /// [`crate::Guard::field`].
    pub fn field(&self) -> &str {
        self.h().field()
    }

    /// [`crate::Guard::owner`].
    pub fn owner(&self) -> OwnerId {
        self.h().owner()
    }

    /// [`crate::Guard::lease`].
    pub fn lease(&self) -> Option<Duration> {
        self.h().lease()
    }

    /// Blocking [`crate::Guard::extend_lease`].
    pub fn extend_lease(&mut self, lease: Duration) -> Result<()> {
        let held = self.held.as_mut().expect("present until consumed");
        self.rt.block_on(held.extend_lease(lease))
    }

    /// The fencing token of a fenced lock's hold (the kind's own guard has `token()`).
    pub(super) fn fencing_token(&self) -> Option<u64> {
        K::fencing_token(&self.h().grant())
    }

    /// [`crate::Guard::forget`].
    pub fn forget(mut self) {
        if let Some(h) = self.held.take() {
            h.forget();
        }
    }
}

impl<K: Reenterable> Guard<K> {
    /// Blocking [`crate::Guard::reenter`].
    pub fn reenter(&self) -> Result<Guard<K>> {
        let held = self.rt.block_on(self.h().reenter())?;
        Ok(self.wrap(held))
    }

    /// Blocking [`crate::Guard::reenter_with_lease`].
    pub fn reenter_with_lease(&self, lease: Duration) -> Result<Guard<K>> {
        let held = self.rt.block_on(self.h().reenter_with_lease(lease))?;
        Ok(self.wrap(held))
    }
}

impl Guard<kinds::Fenced> {
    /// [`crate::Guard::token`].
    pub fn token(&self) -> u64 {
        self.h().token()
    }
}

impl Guard<kinds::Write> {
    /// Blocking [`crate::Guard::downgrade`].
    pub fn downgrade(mut self) -> Result<Guard<kinds::Read>> {
        let held = self.held.take().expect("present until consumed");
        let read = self.rt.block_on(held.downgrade())?;
        Ok(Guard {
            rt: self.rt.clone(),
            held: Some(read),
        })
    }
}

impl<K: AcquireKind> Drop for Guard<K> {
    fn drop(&mut self) {
        let Some(held) = self.held.take() else { return };
        if tokio::runtime::Handle::try_current().is_ok() {
            drop(held); // inside a runtime: queue the release
            return;
        }
        let key = held.key().to_owned();
        match self.rt.block_on(held.unlock()) {
            Ok(_) | Err(Error::NotHeld { .. }) => {}
            Err(e) => tracing::warn!(key = %key, error = %e, "release on drop failed"),
        }
    }
}

impl<K: AcquireKind> std::fmt::Debug for Lock<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::Lock")
            .field("lock", &self.core)
            .field("pinned", &self.pinned)
            .finish()
    }
}

impl<K: AcquireKind> std::fmt::Debug for Guard<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("blocking::Guard").field(&self.held).finish()
    }
}

crate::kinds::lock_kinds!(kind_aliases);

/// The blocking twin of [`crate::RReadWriteLock`].
///
/// ```no_run
/// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// let rw = client.read_write_lock("lock:catalog")?;
/// let w = rw.write_lock().lock()?;
/// let r = w.downgrade()?;
/// r.unlock()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RReadWriteLock {
    pub(super) read: RReadLock,
    pub(super) write: RWriteLock,
}

impl RReadWriteLock {
    /// The read side.
    pub fn read_lock(&self) -> RReadLock {
        self.read.clone()
    }

    /// The write side.
    pub fn write_lock(&self) -> RWriteLock {
        self.write.clone()
    }

    /// Both sides acting for a fixed owner id instead of the calling thread.
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RReadWriteLock {
        let owner = owner.into();
        RReadWriteLock {
            read: self.read.with_owner(owner),
            write: self.write.with_owner(owner),
        }
    }

    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        self.read.key()
    }
}
