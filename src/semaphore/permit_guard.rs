//! Expirable permits that give themselves back: a Rust extra over Redisson's permit ids.

use super::{PermitExpirableSemaphore, PermitId};
use crate::error::Result;
use crate::once::Once;

/// Permits of a [`PermitExpirableSemaphore`] taken by one acquisition, with their ids: given
/// back by [`release`](Self::release), or when dropped (in the background; the client's
/// [`shutdown`](crate::Client::shutdown) waits for it).
///
/// The give-back is one request for all of them (Redisson's `tryRelease(ids)`), all or none,
/// and applies once however often it is sent. The permits of one acquisition share one lease
/// end, so they come back together; when their lease has ended they are already the
/// semaphore's again and nothing is given back. [`forget`](Self::forget) keeps them taken and
/// returns their ids, to be released later by any party, Rust or Java
/// ([`PermitExpirableSemaphore::release`]).
#[must_use = "dropping the guard gives the permits back at once"]
pub struct PermitGuard {
    sem: PermitExpirableSemaphore,
    ids: Vec<PermitId>,
    /// The give-back, built when the permits were taken; dropping it unsent queues it.
    release: Option<Once>,
}

impl std::fmt::Debug for PermitGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermitGuard")
            .field("key", &self.sem.key())
            .field("ids", &self.ids)
            .finish()
    }
}

impl PermitGuard {
    /// `ids` is never empty: acquisitions take at least one permit.
    pub(super) fn new(sem: PermitExpirableSemaphore, ids: Vec<PermitId>) -> PermitGuard {
        let release = sem.release_once(&ids);
        PermitGuard {
            sem,
            ids,
            release: Some(release),
        }
    }

    /// The id of the guard's first permit: its only one when it came from
    /// [`acquire`](PermitExpirableSemaphore::acquire),
    /// [`acquire_with_lease`](PermitExpirableSemaphore::acquire_with_lease),
    /// [`try_acquire`](PermitExpirableSemaphore::try_acquire) or
    /// [`try_acquire_for`](PermitExpirableSemaphore::try_acquire_for).
    pub fn id(&self) -> PermitId {
        self.ids[0]
    }

    /// The ids of every permit the guard holds.
    pub fn ids(&self) -> &[PermitId] {
        &self.ids
    }

    /// The semaphore they came from.
    pub fn semaphore(&self) -> &PermitExpirableSemaphore {
        &self.sem
    }

    /// Gives the permits back now and waits for Redis to confirm; waiters are told.
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`](crate::Error::NotHeld) when their lease had ended (they were already
    /// the semaphore's again, or another party released one of them: nothing is given back);
    /// a Redis error after the client's retries, the release then finished in the background
    /// (it applies once).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future hands the release to the background, which finishes it.
    pub async fn release(mut self) -> Result<()> {
        let Some(once) = self.release.take() else {
            return Ok(());
        };
        let n: i64 = once.send().await?;
        if n.unsigned_abs() as usize == self.ids.len() {
            return Ok(());
        }
        let list: Vec<String> = self.ids.iter().map(PermitId::to_string).collect();
        Err(self.sem.not_held(&list.join(",")))
    }

    /// Keeps the permits taken (until released by id, or until their lease ends) and returns
    /// their ids.
    pub fn forget(mut self) -> Vec<PermitId> {
        if let Some(once) = self.release.take() {
            once.cancel();
        }
        std::mem::take(&mut self.ids)
    }
}
