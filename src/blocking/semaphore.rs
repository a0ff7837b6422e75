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

    /// See [`crate::Semaphore::try_set_permits`].
    pub fn try_set_permits(&self, permits: i64) -> Result<bool> {
        self.rt.block_on(self.sem.try_set_permits(permits))
    }

    /// See [`crate::Semaphore::try_set_permits_with_ttl`].
    pub fn try_set_permits_with_ttl(&self, permits: i64, ttl: Duration) -> Result<bool> {
        self.rt.block_on(self.sem.try_set_permits_with_ttl(permits, ttl))
    }

    /// See [`crate::Semaphore::acquire`]: blocks the calling thread until the permits are taken.
    pub fn acquire(&self, permits: u64) -> Result<SemaphoreGuard> {
        let guard = self.rt.block_on(self.sem.acquire(permits))?;
        Ok(self.guard(guard))
    }

    /// See [`crate::Semaphore::try_acquire`].
    pub fn try_acquire(&self, permits: u64) -> Result<Option<SemaphoreGuard>> {
        let guard = self.rt.block_on(self.sem.try_acquire(permits))?;
        Ok(guard.map(|g| self.guard(g)))
    }

    /// See [`crate::Semaphore::try_acquire_for`].
    pub fn try_acquire_for(&self, permits: u64, wait: Duration) -> Result<Option<SemaphoreGuard>> {
        let guard = self.rt.block_on(self.sem.try_acquire_for(permits, wait))?;
        Ok(guard.map(|g| self.guard(g)))
    }

    fn guard(&self, guard: crate::SemaphoreGuard) -> SemaphoreGuard {
        SemaphoreGuard {
            sem: self.clone(),
            guard: Some(guard),
        }
    }

    /// See [`crate::Semaphore::release`].
    pub fn release(&self, permits: u64) -> Result<()> {
        self.rt.block_on(self.sem.release(permits))
    }

    /// See [`crate::Semaphore::release_if_exists`].
    pub fn release_if_exists(&self, permits: u64) -> Result<bool> {
        self.rt.block_on(self.sem.release_if_exists(permits))
    }

    /// See [`crate::Semaphore::available_permits`].
    pub fn available_permits(&self) -> Result<i64> {
        self.rt.block_on(self.sem.available_permits())
    }

    /// See [`crate::Semaphore::drain_permits`].
    pub fn drain_permits(&self) -> Result<i64> {
        self.rt.block_on(self.sem.drain_permits())
    }

    /// See [`crate::Semaphore::add_permits`].
    pub fn add_permits(&self, delta: i64) -> Result<i64> {
        self.rt.block_on(self.sem.add_permits(delta))
    }

    /// See [`crate::Semaphore::delete`].
    pub fn delete(&self) -> Result<bool> {
        self.rt.block_on(self.sem.delete())
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

    /// See [`crate::PermitExpirableSemaphore::try_set_permits`].
    pub fn try_set_permits(&self, permits: i64) -> Result<bool> {
        self.rt.block_on(self.sem.try_set_permits(permits))
    }

    /// See [`crate::PermitExpirableSemaphore::set_permits`].
    pub fn set_permits(&self, permits: i64) -> Result<()> {
        self.rt.block_on(self.sem.set_permits(permits))
    }

    /// See [`crate::PermitExpirableSemaphore::add_permits`].
    pub fn add_permits(&self, delta: i64) -> Result<i64> {
        self.rt.block_on(self.sem.add_permits(delta))
    }

    /// See [`crate::PermitExpirableSemaphore::acquire`].
    pub fn acquire(&self) -> Result<PermitGuard> {
        let guard = self.rt.block_on(self.sem.acquire())?;
        Ok(self.guard(guard))
    }

    /// See [`crate::PermitExpirableSemaphore::acquire_with_lease`].
    pub fn acquire_with_lease(&self, lease: Duration) -> Result<PermitGuard> {
        let guard = self.rt.block_on(self.sem.acquire_with_lease(lease))?;
        Ok(self.guard(guard))
    }

    /// See [`crate::PermitExpirableSemaphore::acquire_many`].
    pub fn acquire_many(&self, permits: u64, lease: Option<Duration>) -> Result<PermitGuard> {
        let guard = self.rt.block_on(self.sem.acquire_many(permits, lease))?;
        Ok(self.guard(guard))
    }

    /// See [`crate::PermitExpirableSemaphore::try_acquire`].
    pub fn try_acquire(&self) -> Result<Option<PermitGuard>> {
        let guard = self.rt.block_on(self.sem.try_acquire())?;
        Ok(guard.map(|g| self.guard(g)))
    }

    /// See [`crate::PermitExpirableSemaphore::try_acquire_for`].
    pub fn try_acquire_for(&self, wait: Duration, lease: Option<Duration>) -> Result<Option<PermitGuard>> {
        let guard = self.rt.block_on(self.sem.try_acquire_for(wait, lease))?;
        Ok(guard.map(|g| self.guard(g)))
    }

    /// See [`crate::PermitExpirableSemaphore::try_acquire_many`].
    pub fn try_acquire_many(
        &self,
        permits: u64,
        wait: Duration,
        lease: Option<Duration>,
    ) -> Result<Option<PermitGuard>> {
        let guard = self
            .rt
            .block_on(self.sem.try_acquire_many(permits, wait, lease))?;
        Ok(guard.map(|g| self.guard(g)))
    }

    fn guard(&self, guard: crate::PermitGuard) -> PermitGuard {
        PermitGuard {
            sem: self.clone(),
            guard: Some(guard),
        }
    }

    /// See [`crate::PermitExpirableSemaphore::try_release`].
    pub fn try_release(&self, id: PermitId) -> Result<bool> {
        self.rt.block_on(self.sem.try_release(id))
    }

    /// See [`crate::PermitExpirableSemaphore::release`].
    pub fn release(&self, id: PermitId) -> Result<()> {
        self.rt.block_on(self.sem.release(id))
    }

    /// See [`crate::PermitExpirableSemaphore::try_release_many`].
    pub fn try_release_many(&self, ids: &[PermitId]) -> Result<u64> {
        self.rt.block_on(self.sem.try_release_many(ids))
    }

    /// See [`crate::PermitExpirableSemaphore::release_many`].
    pub fn release_many(&self, ids: &[PermitId]) -> Result<()> {
        self.rt.block_on(self.sem.release_many(ids))
    }

    /// See [`crate::PermitExpirableSemaphore::update_lease_time`].
    pub fn update_lease_time(&self, id: PermitId, lease: Option<Duration>) -> Result<bool> {
        self.rt.block_on(self.sem.update_lease_time(id, lease))
    }

    /// See [`crate::PermitExpirableSemaphore::lease_time`].
    pub fn lease_time(&self, id: PermitId) -> Result<Option<PermitLease>> {
        self.rt.block_on(self.sem.lease_time(id))
    }

    /// See [`crate::PermitExpirableSemaphore::available_permits`].
    pub fn available_permits(&self) -> Result<i64> {
        self.rt.block_on(self.sem.available_permits())
    }

    /// See [`crate::PermitExpirableSemaphore::acquired_permits`].
    pub fn acquired_permits(&self) -> Result<u64> {
        self.rt.block_on(self.sem.acquired_permits())
    }

    /// See [`crate::PermitExpirableSemaphore::permits`].
    pub fn permits(&self) -> Result<i64> {
        self.rt.block_on(self.sem.permits())
    }

    /// See [`crate::PermitExpirableSemaphore::delete`].
    pub fn delete(&self) -> Result<bool> {
        self.rt.block_on(self.sem.delete())
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
