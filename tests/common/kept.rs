//! Permits taken the Redisson way in tests: kept (the guard forgotten), given back by whoever
//! releases them. `sem.try_acquire(1).await.kept()` is the `Result<bool>` of Redisson's
//! `tryAcquire(1)`.

use redisson_lock::{blocking, PermitGuard, PermitId, Result, SemaphoreGuard};

/// What an acquisition returns, with its guard forgotten.
pub trait Kept {
    /// `()` / `bool` for a semaphore's permits, the id / `Option` of it for an expirable one.
    type Out;
    /// Forgets the guard: the permits stay taken.
    fn kept(self) -> Result<Self::Out>;
}

impl Kept for Result<SemaphoreGuard> {
    type Out = ();
    fn kept(self) -> Result<()> {
        self.map(SemaphoreGuard::forget)
    }
}

impl Kept for Result<Option<SemaphoreGuard>> {
    type Out = bool;
    fn kept(self) -> Result<bool> {
        self.map(|g| g.map(SemaphoreGuard::forget).is_some())
    }
}

impl Kept for Result<blocking::SemaphoreGuard> {
    type Out = ();
    fn kept(self) -> Result<()> {
        self.map(blocking::SemaphoreGuard::forget)
    }
}

impl Kept for Result<Option<blocking::SemaphoreGuard>> {
    type Out = bool;
    fn kept(self) -> Result<bool> {
        self.map(|g| g.map(blocking::SemaphoreGuard::forget).is_some())
    }
}

/// One permit's id (the guards of `acquire`, `acquire_with_lease`, `try_acquire`,
/// `try_acquire_for` hold one).
impl Kept for Result<PermitGuard> {
    type Out = PermitId;
    fn kept(self) -> Result<PermitId> {
        self.map(|g| g.forget()[0])
    }
}

impl Kept for Result<Option<PermitGuard>> {
    type Out = Option<PermitId>;
    fn kept(self) -> Result<Option<PermitId>> {
        self.map(|g| g.map(|g| g.forget()[0]))
    }
}
