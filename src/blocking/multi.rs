//! The blocking multi-lock: [`RMultiLock`] (also RedLock), its members and its guard.

use std::sync::Arc;
use std::time::Duration;

use super::{Lock, Rt};
use crate::error::{Error, Result};
use crate::kind::AcquireKind;
use crate::{LeaseState, LostReason, OwnerId};

/// One member of a blocking [`RMultiLock`]: a blocking lock handle of any kind (from any blocking
/// client), taken with [`From`]: `Member::from(&lock)`.
pub struct Member {
    rt: Arc<Rt>,
    inner: crate::Member,
}

impl<K: AcquireKind> From<&Lock<K>> for Member {
    fn from(lock: &Lock<K>) -> Member {
        Member {
            rt: lock.rt.clone(),
            inner: crate::Member::from(&lock.core),
        }
    }
}

impl std::fmt::Debug for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

/// The runtimes of every client a multi-lock's members come from: each keeps its client (its
/// watchdog, its background work) alive for as long as the multi-lock or a guard of it lives,
/// though the caller dropped its own handles; calls block on the first.
#[derive(Clone, Debug)]
struct Runtimes(Arc<[Arc<Rt>]>);

impl Runtimes {
    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.0[0].block_on(f)
    }
}

/// The blocking twin of [`crate::RMultiLock`] (Redisson's `RedissonMultiLock` and
/// `RedissonRedLock`): several locks of any kinds, from one or several blocking clients, taken
/// together for one owner — the calling thread unless pinned with
/// [`with_owner`](Self::with_owner).
///
/// ```no_run
/// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// use redisson_lock::blocking::{Member, RMultiLock};
/// let both = RMultiLock::new([Member::from(&client.lock("a")?), Member::from(&client.fair_lock("b")?)])?;
/// let guard = both.lock()?;
/// guard.unlock()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RMultiLock {
    rt: Runtimes,
    inner: crate::RMultiLock,
    pinned: bool,
}

impl RMultiLock {
    fn of(members: impl IntoIterator<Item = Member>, red: bool) -> Result<RMultiLock> {
        let mut all: Vec<Arc<Rt>> = Vec::new();
        let members: Vec<crate::Member> = members
            .into_iter()
            .map(|m| {
                if !all.iter().any(|r| Arc::ptr_eq(r, &m.rt)) {
                    all.push(m.rt);
                }
                m.inner
            })
            .collect();
        let inner = if red {
            crate::RMultiLock::red_lock(members)?
        } else {
            crate::RMultiLock::new(members)?
        };
        if all.is_empty() {
            return Err(Error::InvalidArgument(
                "a multi-lock needs at least one member".into(),
            ));
        }
        Ok(RMultiLock {
            rt: Runtimes(all.into()),
            inner,
            pinned: false,
        })
    }

    /// Blocking [`crate::RMultiLock::new`].
    pub fn new(members: impl IntoIterator<Item = Member>) -> Result<RMultiLock> {
        RMultiLock::of(members, false)
    }

    /// Blocking [`crate::RMultiLock::red_lock`].
    pub fn red_lock(members: impl IntoIterator<Item = Member>) -> Result<RMultiLock> {
        RMultiLock::of(members, true)
    }

    /// [`crate::RMultiLock::quorum`].
    pub fn quorum(&self) -> usize {
        self.inner.quorum()
    }

    /// The same lock acting for a fixed owner id on every member instead of the calling thread.
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RMultiLock {
        RMultiLock {
            rt: self.rt.clone(),
            inner: self.inner.with_owner(owner),
            pinned: true,
        }
    }

    fn owned(&self) -> crate::RMultiLock {
        if self.pinned {
            self.inner.clone()
        } else {
            self.inner.with_owner(OwnerId::current_thread())
        }
    }

    fn guard(&self, g: crate::MultiGuard) -> MultiGuard {
        MultiGuard {
            rt: self.rt.clone(),
            inner: Some(g),
        }
    }

    super::acquisitions!("crate::RMultiLock", MultiGuard);
}

/// The blocking twin of [`crate::MultiGuard`]. On drop (without `unlock`): released
/// synchronously outside an async runtime, in the background inside one.
#[must_use = "if unused the lock is released at once"]
pub struct MultiGuard {
    rt: Runtimes,
    inner: Option<crate::MultiGuard>,
}

impl MultiGuard {
    fn g(&self) -> &crate::MultiGuard {
        self.inner.as_ref().expect("present until consumed")
    }

    /// Blocking [`crate::MultiGuard::unlock`].
    pub fn unlock(mut self) -> Result<()> {
        let g = self.inner.take().expect("present until consumed");
        self.rt.block_on(g.unlock())
    }

    /// [`crate::MultiGuard::lost`].
    pub fn lost(&self) -> impl std::future::Future<Output = LostReason> + Send + 'static {
        self.g().lost()
    }

    /// Blocks until the lock's promise breaks or `timeout` passes (see
    /// [`Guard::wait_lost`](super::Guard::wait_lost)).
    pub fn wait_lost(&self, timeout: Duration) -> Option<LostReason> {
        if let LeaseState::Lost(reason) = self.state() {
            return Some(reason);
        }
        if timeout.is_zero() {
            return None;
        }
        let lost = self.g().lost();
        self.rt
            .block_on(async move { tokio::time::timeout(timeout, lost).await.ok() })
    }

    /// [`crate::MultiGuard::state`].
    pub fn state(&self) -> LeaseState {
        self.g().state()
    }

    /// [`crate::MultiGuard::is_held`].
    pub fn is_held(&self) -> bool {
        self.g().is_held()
    }

    /// [`crate::MultiGuard::keys`].
    pub fn keys(&self) -> Vec<&str> {
        self.g().keys()
    }

    /// [`crate::MultiGuard::owner`].
    pub fn owner(&self) -> OwnerId {
        self.g().owner()
    }
}

impl Drop for MultiGuard {
    fn drop(&mut self) {
        let Some(g) = self.inner.take() else { return };
        if tokio::runtime::Handle::try_current().is_ok() {
            drop(g); // inside a runtime: released in the background
            return;
        }
        if let Err(e) = self.rt.block_on(g.unlock()) {
            tracing::warn!(error = %e, "multi-lock release on drop failed");
        }
    }
}

impl std::fmt::Debug for MultiGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("blocking::MultiGuard").field(&self.inner).finish()
    }
}
