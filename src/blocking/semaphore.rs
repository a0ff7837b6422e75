//! The blocking twins of [`crate::Semaphore`], [`crate::SemaphoreGuard`],
//! [`crate::PermitExpirableSemaphore`] and [`crate::PermitGuard`]: every method is `block_on` of its async twin.

use std::sync::Arc;
use std::time::Duration;

use super::{Client, Rt};
use crate::error::Result;
use crate::{PermitId, PermitLease};

/// A semaphore for code without an async runtime (Redisson's `getSemaphore(name)`): the
/// blocking twin of [`crate::Semaphore`], with the same semantics per method.
///
/// # Panics
///
/// Every method panics when called from async code (see the [module docs](super)).
///
/// ```no_run
/// let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// let sem = client.semaphore("sem:reports")?;
/// sem.try_set_permits(2)?;
/// let permit = sem.acquire(1)?;
/// // ... the work ...
/// permit.release()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone)]
pub struct Semaphore {
    rt: Arc<Rt>,
    sem: crate::Semaphore,
}

impl std::fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::Semaphore")
            .field("key", &self.sem.key())
            .finish()
    }
}

impl Semaphore {
    /// The Redis key of the count.
    pub fn key(&self) -> &str {
        self.sem.key()
    }

    super::twins! {"crate::Semaphore", sem;
        fn try_set_permits(permits: i64) -> bool;
        fn try_set_permits_with_ttl(permits: i64, ttl: Duration) -> bool;
        fn release(permits: u64) -> ();
        fn release_if_exists(permits: u64) -> bool;
        fn available_permits() -> i64;
        fn drain_permits() -> i64;
        fn add_permits(delta: i64) -> i64;
        fn delete() -> bool;
        guard fn acquire(permits: u64) -> SemaphoreGuard;
        maybe_guard fn try_acquire(permits: u64) -> SemaphoreGuard;
        maybe_guard fn try_acquire_for(permits: u64, wait: Duration) -> SemaphoreGuard;
    }

    fn guard(&self, guard: crate::SemaphoreGuard) -> SemaphoreGuard {
        SemaphoreGuard {
            sem: self.clone(),
            guard: Some(guard),
        }
    }

    /// The async semaphore behind this one.
    pub fn as_async(&self) -> &crate::Semaphore {
        &self.sem
    }
}

/// Permits that give themselves back: the blocking twin of [`crate::SemaphoreGuard`]. Dropped,
/// it gives them back in the background.
#[must_use = "dropping the guard gives the permits back at once"]
pub struct SemaphoreGuard {
    sem: Semaphore,
    guard: Option<crate::SemaphoreGuard>,
}

impl std::fmt::Debug for SemaphoreGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::SemaphoreGuard")
            .field("guard", &self.guard)
            .finish()
    }
}

impl SemaphoreGuard {
    /// How many permits the guard holds.
    pub fn permits(&self) -> u64 {
        self.guard.as_ref().map_or(0, |g| g.permits())
    }

    /// See [`crate::SemaphoreGuard::semaphore`].
    pub fn semaphore(&self) -> &Semaphore {
        &self.sem
    }

    /// See [`crate::SemaphoreGuard::release`].
    pub fn release(mut self) -> Result<()> {
        match self.guard.take() {
            Some(g) => self.sem.rt.block_on(g.release()),
            None => Ok(()),
        }
    }

    /// See [`crate::SemaphoreGuard::forget`].
    pub fn forget(mut self) {
        if let Some(g) = self.guard.take() {
            g.forget();
        }
    }
}

/// Expirable permits that give themselves back: the blocking twin of [`crate::PermitGuard`].
/// Dropped, it gives them back in the background.
#[must_use = "dropping the guard gives the permits back at once"]
pub struct PermitGuard {
    sem: PermitExpirableSemaphore,
    guard: Option<crate::PermitGuard>,
}

impl std::fmt::Debug for PermitGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::PermitGuard")
            .field("guard", &self.guard)
            .finish()
    }
}

impl PermitGuard {
    /// See [`crate::PermitGuard::id`].
    pub fn id(&self) -> PermitId {
        self.ids()[0]
    }

    /// See [`crate::PermitGuard::ids`].
    pub fn ids(&self) -> &[PermitId] {
        self.guard.as_ref().map_or(&[], |g| g.ids())
    }

    /// See [`crate::PermitGuard::semaphore`].
    pub fn semaphore(&self) -> &PermitExpirableSemaphore {
        &self.sem
    }

    /// See [`crate::PermitGuard::release`].
    pub fn release(mut self) -> Result<()> {
        match self.guard.take() {
            Some(g) => self.sem.rt.block_on(g.release()),
            None => Ok(()),
        }
    }

    /// See [`crate::PermitGuard::forget`].
    pub fn forget(mut self) -> Vec<PermitId> {
        self.guard
            .take()
            .map(crate::PermitGuard::forget)
            .unwrap_or_default()
    }
}

/// A permit-expirable semaphore for code without an async runtime (Redisson's
/// `getPermitExpirableSemaphore(name)`): the blocking twin of
/// [`crate::PermitExpirableSemaphore`], with the same semantics per method.
///
/// # Panics
///
/// Every method panics when called from async code (see the [module docs](super)).
///
/// ```no_run
/// let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// let sem = client.permit_expirable_semaphore("sem:render")?;
/// sem.try_set_permits(1)?;
/// let permit = sem.acquire_with_lease(std::time::Duration::from_secs(30))?;
/// // ... the work ...
/// permit.release()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone)]
pub struct PermitExpirableSemaphore {
    rt: Arc<Rt>,
    sem: crate::PermitExpirableSemaphore,
}

impl std::fmt::Debug for PermitExpirableSemaphore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::PermitExpirableSemaphore")
            .field("key", &self.sem.key())
            .finish()
    }
}

impl PermitExpirableSemaphore {
    /// The Redis key of the available permits.
    pub fn key(&self) -> &str {
        self.sem.key()
    }

    /// See [`crate::PermitExpirableSemaphore::leases_key`].
    pub fn leases_key(&self) -> &str {
        self.sem.leases_key()
    }

    super::twins! {"crate::PermitExpirableSemaphore", sem;
        fn try_set_permits(permits: i64) -> bool;
        fn set_permits(permits: i64) -> ();
        fn add_permits(delta: i64) -> i64;
        fn try_release(id: PermitId) -> bool;
        fn release(id: PermitId) -> ();
        fn try_release_many(ids: &[PermitId]) -> u64;
        fn release_many(ids: &[PermitId]) -> ();
        fn update_lease_time(id: PermitId, lease: Option<Duration>) -> bool;
        fn lease_time(id: PermitId) -> Option<PermitLease>;
        fn available_permits() -> i64;
        fn acquired_permits() -> u64;
        fn permits() -> i64;
        fn delete() -> bool;
        guard fn acquire() -> PermitGuard;
        guard fn acquire_with_lease(lease: Duration) -> PermitGuard;
        guard fn acquire_many(permits: u64, lease: Option<Duration>) -> PermitGuard;
        maybe_guard fn try_acquire() -> PermitGuard;
        maybe_guard fn try_acquire_for(wait: Duration, lease: Option<Duration>) -> PermitGuard;
        maybe_guard fn try_acquire_many(permits: u64, wait: Duration, lease: Option<Duration>) -> PermitGuard;
    }

    fn guard(&self, guard: crate::PermitGuard) -> PermitGuard {
        PermitGuard {
            sem: self.clone(),
            guard: Some(guard),
        }
    }

    /// The async semaphore behind this one.
    pub fn as_async(&self) -> &crate::PermitExpirableSemaphore {
        &self.sem
    }
}

impl Client {
    /// A handle to the semaphore `name`: the blocking twin of [`crate::Client::semaphore`].
    ///
    /// ```no_run
    /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// let sem = client.semaphore("sem:imports")?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn semaphore(&self, name: &str) -> Result<Semaphore> {
        Ok(Semaphore {
            rt: self.rt.clone(),
            sem: self.rt.client.semaphore(name)?,
        })
    }

    /// A handle to the permit-expirable semaphore `name`: the blocking twin of
    /// [`crate::Client::permit_expirable_semaphore`].
    ///
    /// ```no_run
    /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// let sem = client.permit_expirable_semaphore("sem:licenses")?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn permit_expirable_semaphore(&self, name: &str) -> Result<PermitExpirableSemaphore> {
        Ok(PermitExpirableSemaphore {
            rt: self.rt.clone(),
            sem: self.rt.client.permit_expirable_semaphore(name)?,
        })
    }
}
