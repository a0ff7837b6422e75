//! Permits that give themselves back: a Rust extra over Redisson's unowned permits.

use super::Semaphore;
use crate::error::Result;
use crate::once::Once;

/// Permits taken with [`Semaphore::acquire`], [`try_acquire`](Semaphore::try_acquire) or
/// [`try_acquire_for`](Semaphore::try_acquire_for): given back by [`release`](Self::release),
/// or when dropped (in the background; the client's
/// [`shutdown`](crate::Client::shutdown) waits for it). The give-back is one request that
/// applies once, however often it is sent, so a permit is never given back twice.
///
/// Semaphore permits have no lease: permits of a process that dies without giving them back
/// stay taken (use a [`PermitExpirableSemaphore`](super::PermitExpirableSemaphore) when that
/// matters).
#[must_use = "dropping the guard gives the permits back at once"]
pub struct SemaphoreGuard {
    sem: Semaphore,
    permits: i64,
    /// The give-back, built when the permits were taken; dropping it unsent queues it.
    release: Option<Once>,
}

impl std::fmt::Debug for SemaphoreGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SemaphoreGuard")
            .field("key", &self.sem.key())
            .field("permits", &self.permits)
            .finish()
    }
}

impl SemaphoreGuard {
    pub(super) fn new(sem: Semaphore, permits: i64) -> SemaphoreGuard {
        let release = sem.release_once(permits, false);
        SemaphoreGuard {
            sem,
            permits,
            release: Some(release),
        }
    }

    /// A guard of no permits: gives nothing back.
    pub(super) fn none(sem: Semaphore) -> SemaphoreGuard {
        SemaphoreGuard {
            sem,
            permits: 0,
            release: None,
        }
    }

    /// How many permits the guard holds.
    pub fn permits(&self) -> u64 {
        self.permits.unsigned_abs()
    }

    /// The semaphore they came from.
    pub fn semaphore(&self) -> &Semaphore {
        &self.sem
    }

    /// Gives the permits back now and waits for Redis to confirm; waiters are told.
    ///
    /// # Errors
    ///
    /// A Redis error after the client's retries; the release is then finished in the
    /// background (it applies once).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future hands the release to the background, which finishes it.
    pub async fn release(mut self) -> Result<()> {
        match self.release.take() {
            Some(once) => once.send::<i64>().await.map(|_| ()),
            None => Ok(()),
        }
    }

    /// Keeps the permits taken: nothing is given back (as Redisson's permits, which are not
    /// owned; any party, Rust or Java, may [`release`](Semaphore::release) them).
    pub fn forget(mut self) {
        if let Some(once) = self.release.take() {
            once.cancel();
        }
    }
}
