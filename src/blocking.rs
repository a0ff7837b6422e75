//! A blocking facade for code without an async runtime.
//!
//! [`Client`] owns a small tokio runtime (one worker thread) that runs the watchdog, pub/sub and
//! queued releases; every method is `block_on` of its async twin.
//!
//! **Owners**: the default owner in blocking code is the calling OS thread
//! ([`OwnerId::current_thread`]), as in Java: a nested `lock()` on one thread re-enters. That is
//! safe here because a thread makes one call at a time (unlike futures of one async task, which
//! is why the async API gives every acquisition a fresh owner instead).
//!
//! # Panics
//!
//! Every method that talks to Redis (`connect`, `lock`, `try_lock*`, `unlock`, `run`,
//! `force_unlock`, `is_locked`, `is_held*`, `hold_count`, `remain_time_to_live`, `downgrade`,
//! `reenter`, `wait_lost`) blocks the calling thread and **panics when called from inside an
//! async runtime** (like `tokio::runtime::Runtime::block_on`); use the async API there.
//! Dropping a blocking client or guard never panics, inside a runtime or not.
//!
//! ```no_run
//! use redisson_lock::blocking::Client;
//!
//! let client = Client::connect("redis://127.0.0.1/")?;
//! let lock = client.lock("lock:report")?;
//! let guard = lock.lock()?;
//! // ... work ...
//! guard.unlock()?;
//! # Ok::<_, redisson_lock::Error>(())
//! ```

use std::sync::Arc;
use std::time::Duration;

use crate::core::{Held, LockCore};
use crate::error::{Error, Result};
use crate::kind::{AcquireKind, Reentrant};
use crate::kinds::fair::FairKind;
use crate::kinds::fenced::FencedKind;
use crate::kinds::lock::ReentrantKind;
use crate::kinds::non_reentrant::NonReentrantKind;
use crate::kinds::rw::{ReadKind, WriteKind};
use crate::kinds::spin::SpinKind;
use crate::{BackOff, Config, LeaseState, LostReason, OwnerId, Ttl, Unlocked};

/// The runtime behind a blocking client, shared by its handles and guards. When the last of them
/// goes, the client shuts down ([`crate::Client::shutdown`]: queued releases are sent, live holds
/// released) and the runtime stops — on a thread of its own when that happens inside async code,
/// where blocking (or dropping a runtime) would panic.
struct Rt {
    rt: Option<tokio::runtime::Runtime>,
    client: crate::Client,
}

impl Rt {
    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt
            .as_ref()
            .expect("the runtime is present until the last handle is dropped")
            .block_on(f)
    }
}

impl Drop for Rt {
    fn drop(&mut self) {
        let Some(rt) = self.rt.take() else { return };
        let client = self.client.clone();
        let finish = move || {
            // bounded by the settle window (see `Client::shutdown`)
            rt.block_on(async {
                if let Err(e) = client.shutdown().await {
                    tracing::warn!(error = %e, "blocking client shutdown: locks left to their TTL");
                }
            });
            drop(client);
            rt.shutdown_timeout(Duration::from_secs(1));
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            let spawned = std::thread::Builder::new()
                .name("redisson-lock-shutdown".into())
                .spawn(finish);
            if let Err(e) = spawned {
                tracing::warn!(error = %e, "cannot start the shutdown thread; locks expire with their TTL");
            }
        } else {
            finish();
        }
    }
}

/// A blocking lock client (see the [module docs](self)).
#[derive(Clone)]
pub struct Client {
    rt: Arc<Rt>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::Client")
            .field("client", &self.rt.client)
            .finish()
    }
}

impl Client {
    /// Connects with the default configuration.
    ///
    /// # Panics
    ///
    /// Inside an async runtime (see the [module docs](self)).
    ///
    /// ```no_run
    /// let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn connect(url: &str) -> Result<Client> {
        Client::connect_with(url, Config::default())
    }

    /// Connects with `config`.
    ///
    /// # Panics
    ///
    /// Inside an async runtime (see the [module docs](self)).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// let config = redisson_lock::Config::default().lock_watchdog_timeout(Duration::from_secs(10));
    /// let client = redisson_lock::blocking::Client::connect_with("redis://127.0.0.1/", config)?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn connect_with(url: &str, config: Config) -> Result<Client> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("redisson-lock")
            .enable_all()
            .build()
            .map_err(|e| Error::InvalidArgument(format!("cannot start the background runtime: {e}")))?;
        let client = match rt.block_on(crate::Client::builder().url(url).config(config).build()) {
            Ok(c) => c,
            Err(e) => {
                rt.shutdown_background();
                return Err(e);
            }
        };
        Ok(Client {
            rt: Arc::new(Rt { rt: Some(rt), client }),
        })
    }

    /// The client id (a lowercase UUID v4).
    pub fn id(&self) -> &str {
        self.rt.client.id()
    }

    /// The async client behind this one (sharing its id, watchdog and hub). It stops working when
    /// the last blocking handle is dropped (its runtime is gone).
    pub fn as_async(&self) -> &crate::Client {
        &self.rt.client
    }

    /// A handle to the reentrant lock `name`.
    ///
    /// ```no_run
    /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// let lock = client.lock("lock:order:42")?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn lock(&self, name: &str) -> Result<RLock> {
        Ok(RLock(self.handle(self.rt.client.lock(name)?.core)))
    }

    /// A handle to the fenced lock `name` (see [`crate::Client::fenced_lock`]).
    ///
    /// ```no_run
    /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// let (token, guard) = client.fenced_lock("lock:order:42")?.lock_and_get_token()?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn fenced_lock(&self, name: &str) -> Result<RFencedLock> {
        Ok(RFencedLock(self.handle(self.rt.client.fenced_lock(name)?.core)))
    }

    /// A handle to the spin lock `name` (see [`crate::Client::spin_lock`]).
    ///
    /// ```no_run
    /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// let guard = client.spin_lock("lock:report")?.lock()?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn spin_lock(&self, name: &str) -> Result<RSpinLock> {
        Ok(RSpinLock(self.handle(self.rt.client.spin_lock(name)?.core)))
    }

    /// A handle to the non-reentrant lock `name` (see [`crate::Client::non_reentrant_lock`]).
    /// Here the owner is the calling thread, so a second `lock()` on the same thread fails with
    /// [`Error::AlreadyHeld`].
    ///
    /// ```no_run
    /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// let guard = client.non_reentrant_lock("lock:job")?.lock()?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn non_reentrant_lock(&self, name: &str) -> Result<RNonReentrantLock> {
        Ok(RNonReentrantLock(
            self.handle(self.rt.client.non_reentrant_lock(name)?.core),
        ))
    }

    /// A handle to the fair lock `name` (see [`crate::Client::fair_lock`]).
    ///
    /// ```no_run
    /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// let guard = client.fair_lock("lock:queue")?.lock()?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn fair_lock(&self, name: &str) -> Result<RFairLock> {
        Ok(RFairLock(self.handle(self.rt.client.fair_lock(name)?.core)))
    }

    /// A handle to the non-reentrant fair lock `name` (see
    /// [`crate::Client::non_reentrant_fair_lock`]); a second `lock()` on one thread fails with
    /// [`Error::AlreadyHeld`].
    ///
    /// ```no_run
    /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// let guard = client.non_reentrant_fair_lock("lock:queue")?.lock()?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn non_reentrant_fair_lock(&self, name: &str) -> Result<RNonReentrantFairLock> {
        Ok(RNonReentrantFairLock(
            self.handle(self.rt.client.non_reentrant_fair_lock(name)?.core),
        ))
    }

    fn handle<K: AcquireKind>(&self, core: LockCore<K>) -> Handle<K> {
        Handle {
            rt: self.rt.clone(),
            core,
            pinned: false,
        }
    }

    /// A handle to the read-write lock `name`.
    ///
    /// ```no_run
    /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// let rw = client.read_write_lock("lock:catalog")?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn read_write_lock(&self, name: &str) -> Result<RReadWriteLock> {
        let rw = self.rt.client.read_write_lock(name)?;
        Ok(RReadWriteLock {
            read: RReadLock(self.handle(rw.read_lock().core)),
            write: RWriteLock(self.handle(rw.write_lock().core)),
        })
    }

    /// See [`crate::Client::stats`].
    pub fn stats(&self) -> crate::ClientStats {
        self.rt.client.stats()
    }

    /// See [`crate::Client::shutdown`]: threads waiting in `lock()` return [`Error::Shutdown`],
    /// and it blocks until every hold, queued release and acquisition in flight is settled and
    /// released (within the longer of the settle window and the watchdog timeout, 30 s by
    /// default, when Redis does not answer). Also done when the last handle and guard are
    /// dropped: that drop blocks as long (or runs on a thread of its own inside async code).
    ///
    /// # Panics
    ///
    /// Inside an async runtime (see the [module docs](self)).
    pub fn shutdown(&self) -> Result<()> {
        self.rt.block_on(self.rt.client.shutdown())
    }
}

// ---- the generic layer: one handle and one guard type over every kind ----

/// A blocking handle of kind `K`: the async core plus the runtime; the owner is the calling
/// thread unless pinned.
struct Handle<K: AcquireKind> {
    rt: Arc<Rt>,
    core: LockCore<K>,
    pinned: bool,
}

impl<K: AcquireKind> Clone for Handle<K> {
    fn clone(&self) -> Self {
        Handle {
            rt: self.rt.clone(),
            core: self.core.clone(),
            pinned: self.pinned,
        }
    }
}

impl<K: AcquireKind> Handle<K> {
    /// The core acting for this handle's owner: the pinned one, else the calling thread.
    fn owned(&self) -> LockCore<K> {
        if self.pinned {
            self.core.clone()
        } else {
            self.core.with_owner(OwnerId::current_thread())
        }
    }

    fn with_owner(&self, owner: OwnerId) -> Handle<K> {
        Handle {
            rt: self.rt.clone(),
            core: self.core.with_owner(owner),
            pinned: true,
        }
    }

    fn guard(&self, held: Held<K>) -> Guard<K> {
        Guard {
            rt: self.rt.clone(),
            held: Some(held),
        }
    }

    fn owner(&self) -> OwnerId {
        self.owned().owner.fixed().unwrap_or_else(OwnerId::current_thread)
    }

    fn field(&self) -> String {
        self.owned().handle_field().unwrap_or_default()
    }

    fn lock(&self, lease: Option<Duration>) -> Result<Guard<K>> {
        let held = self.rt.block_on(self.owned().lock(lease))?;
        Ok(self.guard(held))
    }

    fn try_lock(&self, wait: Duration, lease: Option<Duration>) -> Result<Option<Guard<K>>> {
        let held = self.rt.block_on(self.owned().try_lock(wait, lease))?;
        Ok(held.map(|h| self.guard(h)))
    }

    fn run<T>(&self, body: impl FnOnce() -> T) -> Result<T> {
        let guard = self.lock(None)?;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
            Ok(v) => {
                guard.unlock()?;
                Ok(v)
            }
            Err(p) => {
                let _ = guard.unlock();
                std::panic::resume_unwind(p)
            }
        }
    }

    fn unlock(&self) -> Result<Unlocked> {
        self.rt.block_on(self.owned().unlock())
    }

    fn force_unlock(&self) -> Result<bool> {
        self.rt.block_on(self.core.force_unlock())
    }

    fn exists(&self) -> Result<bool> {
        self.rt.block_on(self.core.exists())
    }

    fn is_held(&self) -> Result<bool> {
        self.rt.block_on(self.owned().is_held())
    }

    fn is_held_by(&self, owner: OwnerId) -> Result<bool> {
        self.rt.block_on(self.core.is_held_by(owner))
    }

    fn hold_count(&self) -> Result<u64> {
        self.rt.block_on(self.owned().hold_count())
    }

    fn remain_time_to_live(&self) -> Result<Ttl> {
        self.rt.block_on(self.core.remain_time_to_live())
    }
}

/// A blocking guard of kind `K`. On drop (without `unlock`): outside an async runtime the release
/// runs synchronously (bounded by the command timeout and retries, errors logged); inside one it
/// is queued as for the async guard. Never panics.
struct Guard<K: AcquireKind> {
    rt: Arc<Rt>,
    held: Option<Held<K>>,
}

impl<K: AcquireKind> Guard<K> {
    fn h(&self) -> &Held<K> {
        self.held.as_ref().expect("present until consumed")
    }

    fn unlock(mut self) -> Result<Unlocked> {
        let held = self.held.take().expect("present until consumed");
        self.rt.block_on(held.unlock())
    }

    fn wait_lost(&self, timeout: Duration) -> Option<LostReason> {
        let lost = self.h().lost();
        self.rt
            .block_on(async move { tokio::time::timeout(timeout, lost).await.ok() })
    }

    fn forget(mut self) {
        if let Some(h) = self.held.take() {
            h.forget();
        }
    }
}

impl<K: Reentrant> Guard<K> {
    fn reenter(&self) -> Result<Guard<K>> {
        let held = self.rt.block_on(self.h().reenter(None))?;
        Ok(Guard {
            rt: self.rt.clone(),
            held: Some(held),
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

impl<K: AcquireKind> std::fmt::Debug for Handle<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("key", &&*self.core.key)
            .field("kind", &self.core.kind.label())
            .field("pinned", &self.pinned.then_some(self.core.owner))
            .finish()
    }
}

impl<K: AcquireKind> std::fmt::Debug for Guard<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Guard").field(&self.held).finish()
    }
}

// ---- the public types, one per kind ----

/// The blocking twin of [`crate::RLock`]: every method blocks the calling thread (and panics
/// inside an async runtime, see the [module docs](self)); the default owner is the calling thread.
///
/// ```no_run
/// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// let lock = client.lock("lock:order:42")?;
/// let guard = lock.lock()?;
/// guard.unlock()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RLock(Handle<ReentrantKind>);

impl RLock {
    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        &self.0.core.key
    }

    /// The same lock acting for a fixed owner id instead of the calling thread.
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RLock {
        RLock(self.0.with_owner(owner.into()))
    }

    /// The owner this handle acts for when called from this thread.
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The hash field this handle's owner writes, when called from this thread.
    pub fn field(&self) -> String {
        self.0.field()
    }

    /// Blocking [`crate::RLock::lock`].
    pub fn lock(&self) -> Result<LockGuard> {
        self.0.lock(None).map(LockGuard)
    }

    /// Blocking [`crate::RLock::lock_with_lease`].
    pub fn lock_with_lease(&self, lease: Duration) -> Result<LockGuard> {
        self.0.lock(Some(lease)).map(LockGuard)
    }

    /// Blocking [`crate::RLock::try_lock`].
    pub fn try_lock(&self) -> Result<Option<LockGuard>> {
        Ok(self.0.try_lock(Duration::ZERO, None)?.map(LockGuard))
    }

    /// Blocking [`crate::RLock::try_lock_for`].
    pub fn try_lock_for(&self, wait: Duration) -> Result<Option<LockGuard>> {
        Ok(self.0.try_lock(wait, None)?.map(LockGuard))
    }

    /// Blocking [`crate::RLock::try_lock_with_lease`].
    pub fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<LockGuard>> {
        Ok(self.0.try_lock(wait, Some(lease))?.map(LockGuard))
    }

    /// Runs `body` while holding the lock and releases it afterwards (also on panic).
    pub fn run<T>(&self, body: impl FnOnce() -> T) -> Result<T> {
        self.0.run(body)
    }

    /// Blocking [`crate::RLock::unlock`] (the calling thread's or the pinned owner's hold).
    pub fn unlock(&self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocking [`crate::RLock::force_unlock`].
    pub fn force_unlock(&self) -> Result<bool> {
        self.0.force_unlock()
    }

    /// Blocking [`crate::RLock::is_locked`].
    pub fn is_locked(&self) -> Result<bool> {
        self.0.exists()
    }

    /// Whether this handle's owner (the calling thread, or the pinned owner) holds the lock.
    pub fn is_held(&self) -> Result<bool> {
        self.0.is_held()
    }

    /// Whether `owner` of this client holds the lock.
    pub fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.0.is_held_by(owner.into())
    }

    /// How many times this handle's owner holds the lock.
    pub fn hold_count(&self) -> Result<u64> {
        self.0.hold_count()
    }

    /// Blocking [`crate::RLock::remain_time_to_live`].
    pub fn remain_time_to_live(&self) -> Result<Ttl> {
        self.0.remain_time_to_live()
    }
}

/// A blocking hold (see [`crate::LockGuard`]). **On drop** (without `unlock`): outside an async
/// runtime the release runs synchronously (bounded by the command timeout and retries, errors
/// logged); inside one it is queued as for the async guard. Never panics.
#[must_use = "if unused the lock is released at once"]
#[derive(Debug)]
pub struct LockGuard(Guard<ReentrantKind>);

impl LockGuard {
    /// Blocking [`crate::LockGuard::unlock`].
    pub fn unlock(self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocking [`crate::LockGuard::reenter`]: another hold for this guard's owner.
    pub fn reenter(&self) -> Result<LockGuard> {
        self.0.reenter().map(LockGuard)
    }

    /// Blocks until the hold is lost, or `timeout` passes (`None`).
    pub fn wait_lost(&self, timeout: Duration) -> Option<LostReason> {
        self.0.wait_lost(timeout)
    }

    /// What this process knows about the hold.
    pub fn state(&self) -> LeaseState {
        self.0.h().state()
    }

    /// Whether the hold is trusted as held.
    pub fn is_held(&self) -> bool {
        self.0.h().is_held()
    }

    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        self.0.h().key()
    }

    /// The hash field of this hold.
    pub fn field(&self) -> &str {
        self.0.h().field()
    }

    /// The owner of this hold.
    pub fn owner(&self) -> OwnerId {
        self.0.h().owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    pub fn lease(&self) -> Option<Duration> {
        self.0.h().lease()
    }

    /// Keeps the hold without a guard.
    pub fn forget(self) {
        self.0.forget()
    }
}

/// The blocking twin of [`crate::RFencedLock`]: every method blocks the calling thread (and panics
/// inside an async runtime, see the [module docs](self)); the default owner is the calling thread.
///
/// ```no_run
/// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// let lock = client.fenced_lock("lock:order:42")?;
/// let guard = lock.lock()?;
/// guard.unlock()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RFencedLock(Handle<FencedKind>);

impl RFencedLock {
    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        &self.0.core.key
    }

    /// The same lock acting for a fixed owner id instead of the calling thread.
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RFencedLock {
        RFencedLock(self.0.with_owner(owner.into()))
    }

    /// The owner this handle acts for when called from this thread.
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The hash field this handle's owner writes, when called from this thread.
    pub fn field(&self) -> String {
        self.0.field()
    }

    /// Blocking [`crate::RFencedLock::lock`].
    pub fn lock(&self) -> Result<FencedGuard> {
        self.0.lock(None).map(FencedGuard)
    }

    /// Blocking [`crate::RFencedLock::lock_with_lease`].
    pub fn lock_with_lease(&self, lease: Duration) -> Result<FencedGuard> {
        self.0.lock(Some(lease)).map(FencedGuard)
    }

    /// Blocking [`crate::RFencedLock::try_lock`].
    pub fn try_lock(&self) -> Result<Option<FencedGuard>> {
        Ok(self.0.try_lock(Duration::ZERO, None)?.map(FencedGuard))
    }

    /// Blocking [`crate::RFencedLock::try_lock_for`].
    pub fn try_lock_for(&self, wait: Duration) -> Result<Option<FencedGuard>> {
        Ok(self.0.try_lock(wait, None)?.map(FencedGuard))
    }

    /// Blocking [`crate::RFencedLock::try_lock_with_lease`].
    pub fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<FencedGuard>> {
        Ok(self.0.try_lock(wait, Some(lease))?.map(FencedGuard))
    }

    /// Runs `body` while holding the lock and releases it afterwards (also on panic).
    pub fn run<T>(&self, body: impl FnOnce() -> T) -> Result<T> {
        self.0.run(body)
    }

    /// Blocking [`crate::RFencedLock::unlock`] (the calling thread's or the pinned owner's hold).
    pub fn unlock(&self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocking [`crate::RFencedLock::force_unlock`].
    pub fn force_unlock(&self) -> Result<bool> {
        self.0.force_unlock()
    }

    /// Blocking [`crate::RFencedLock::is_locked`].
    pub fn is_locked(&self) -> Result<bool> {
        self.0.exists()
    }

    /// Whether this handle's owner (the calling thread, or the pinned owner) holds the lock.
    pub fn is_held(&self) -> Result<bool> {
        self.0.is_held()
    }

    /// Whether `owner` of this client holds the lock.
    pub fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.0.is_held_by(owner.into())
    }

    /// How many times this handle's owner holds the lock.
    pub fn hold_count(&self) -> Result<u64> {
        self.0.hold_count()
    }

    /// Blocking [`crate::RFencedLock::remain_time_to_live`].
    pub fn remain_time_to_live(&self) -> Result<Ttl> {
        self.0.remain_time_to_live()
    }

    /// Blocking [`crate::RFencedLock::lock_and_get_token`].
    pub fn lock_and_get_token(&self) -> Result<(u64, FencedGuard)> {
        let g = self.lock()?;
        Ok((g.token(), g))
    }

    /// Blocking [`crate::RFencedLock::try_lock_and_get_token`].
    pub fn try_lock_and_get_token(
        &self,
        wait: Duration,
        lease: Option<Duration>,
    ) -> Result<Option<(u64, FencedGuard)>> {
        Ok(self.0.try_lock(wait, lease)?.map(|g| {
            let g = FencedGuard(g);
            (g.token(), g)
        }))
    }

    /// Blocking [`crate::RFencedLock::get_token`].
    pub fn get_token(&self) -> Result<Option<u64>> {
        self.0.rt.block_on(
            crate::RFencedLock {
                core: self.0.core.clone(),
            }
            .get_token(),
        )
    }
}

/// A blocking hold (see [`crate::FencedGuard`]). **On drop** (without `unlock`): outside an async
/// runtime the release runs synchronously (bounded by the command timeout and retries, errors
/// logged); inside one it is queued as for the async guard. Never panics.
#[must_use = "if unused the lock is released at once"]
#[derive(Debug)]
pub struct FencedGuard(Guard<FencedKind>);

impl FencedGuard {
    /// Blocking [`crate::FencedGuard::unlock`].
    pub fn unlock(self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocking [`crate::FencedGuard::reenter`]: another hold for this guard's owner.
    pub fn reenter(&self) -> Result<FencedGuard> {
        self.0.reenter().map(FencedGuard)
    }

    /// Blocks until the hold is lost, or `timeout` passes (`None`).
    pub fn wait_lost(&self, timeout: Duration) -> Option<LostReason> {
        self.0.wait_lost(timeout)
    }

    /// What this process knows about the hold.
    pub fn state(&self) -> LeaseState {
        self.0.h().state()
    }

    /// Whether the hold is trusted as held.
    pub fn is_held(&self) -> bool {
        self.0.h().is_held()
    }

    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        self.0.h().key()
    }

    /// The hash field of this hold.
    pub fn field(&self) -> &str {
        self.0.h().field()
    }

    /// The owner of this hold.
    pub fn owner(&self) -> OwnerId {
        self.0.h().owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    pub fn lease(&self) -> Option<Duration> {
        self.0.h().lease()
    }

    /// Keeps the hold without a guard.
    pub fn forget(self) {
        self.0.forget()
    }

    /// The fencing token of this hold (see [`crate::FencedGuard::token`]).
    pub fn token(&self) -> u64 {
        self.0.h().grant()
    }
}

/// The blocking twin of [`crate::RSpinLock`]: every method blocks the calling thread (and panics
/// inside an async runtime, see the [module docs](self)); the default owner is the calling thread.
///
/// ```no_run
/// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// let lock = client.spin_lock("lock:report")?;
/// let guard = lock.lock()?;
/// guard.unlock()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RSpinLock(Handle<SpinKind>);

impl RSpinLock {
    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        &self.0.core.key
    }

    /// The same lock acting for a fixed owner id instead of the calling thread.
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RSpinLock {
        RSpinLock(self.0.with_owner(owner.into()))
    }

    /// The owner this handle acts for when called from this thread.
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The hash field this handle's owner writes, when called from this thread.
    pub fn field(&self) -> String {
        self.0.field()
    }

    /// Blocking [`crate::RSpinLock::lock`].
    pub fn lock(&self) -> Result<SpinGuard> {
        self.0.lock(None).map(SpinGuard)
    }

    /// Blocking [`crate::RSpinLock::lock_with_lease`].
    pub fn lock_with_lease(&self, lease: Duration) -> Result<SpinGuard> {
        self.0.lock(Some(lease)).map(SpinGuard)
    }

    /// Blocking [`crate::RSpinLock::try_lock`].
    pub fn try_lock(&self) -> Result<Option<SpinGuard>> {
        Ok(self.0.try_lock(Duration::ZERO, None)?.map(SpinGuard))
    }

    /// Blocking [`crate::RSpinLock::try_lock_for`].
    pub fn try_lock_for(&self, wait: Duration) -> Result<Option<SpinGuard>> {
        Ok(self.0.try_lock(wait, None)?.map(SpinGuard))
    }

    /// Blocking [`crate::RSpinLock::try_lock_with_lease`].
    pub fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<SpinGuard>> {
        Ok(self.0.try_lock(wait, Some(lease))?.map(SpinGuard))
    }

    /// Runs `body` while holding the lock and releases it afterwards (also on panic).
    pub fn run<T>(&self, body: impl FnOnce() -> T) -> Result<T> {
        self.0.run(body)
    }

    /// Blocking [`crate::RSpinLock::unlock`] (the calling thread's or the pinned owner's hold).
    pub fn unlock(&self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocking [`crate::RSpinLock::force_unlock`].
    pub fn force_unlock(&self) -> Result<bool> {
        self.0.force_unlock()
    }

    /// Blocking [`crate::RSpinLock::is_locked`].
    pub fn is_locked(&self) -> Result<bool> {
        self.0.exists()
    }

    /// Whether this handle's owner (the calling thread, or the pinned owner) holds the lock.
    pub fn is_held(&self) -> Result<bool> {
        self.0.is_held()
    }

    /// Whether `owner` of this client holds the lock.
    pub fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.0.is_held_by(owner.into())
    }

    /// How many times this handle's owner holds the lock.
    pub fn hold_count(&self) -> Result<u64> {
        self.0.hold_count()
    }

    /// Blocking [`crate::RSpinLock::remain_time_to_live`].
    pub fn remain_time_to_live(&self) -> Result<Ttl> {
        self.0.remain_time_to_live()
    }

    /// The same lock waiting with `backoff` (see [`crate::RSpinLock::with_backoff`]).
    pub fn with_backoff(&self, backoff: BackOff) -> Result<RSpinLock> {
        let core = crate::RSpinLock {
            core: self.0.core.clone(),
        }
        .with_backoff(backoff)?
        .core;
        Ok(RSpinLock(Handle {
            rt: self.0.rt.clone(),
            core,
            pinned: self.0.pinned,
        }))
    }
}

/// A blocking hold (see [`crate::SpinGuard`]). **On drop** (without `unlock`): outside an async
/// runtime the release runs synchronously (bounded by the command timeout and retries, errors
/// logged); inside one it is queued as for the async guard. Never panics.
#[must_use = "if unused the lock is released at once"]
#[derive(Debug)]
pub struct SpinGuard(Guard<SpinKind>);

impl SpinGuard {
    /// Blocking [`crate::SpinGuard::unlock`].
    pub fn unlock(self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocking [`crate::SpinGuard::reenter`]: another hold for this guard's owner.
    pub fn reenter(&self) -> Result<SpinGuard> {
        self.0.reenter().map(SpinGuard)
    }

    /// Blocks until the hold is lost, or `timeout` passes (`None`).
    pub fn wait_lost(&self, timeout: Duration) -> Option<LostReason> {
        self.0.wait_lost(timeout)
    }

    /// What this process knows about the hold.
    pub fn state(&self) -> LeaseState {
        self.0.h().state()
    }

    /// Whether the hold is trusted as held.
    pub fn is_held(&self) -> bool {
        self.0.h().is_held()
    }

    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        self.0.h().key()
    }

    /// The hash field of this hold.
    pub fn field(&self) -> &str {
        self.0.h().field()
    }

    /// The owner of this hold.
    pub fn owner(&self) -> OwnerId {
        self.0.h().owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    pub fn lease(&self) -> Option<Duration> {
        self.0.h().lease()
    }

    /// Keeps the hold without a guard.
    pub fn forget(self) {
        self.0.forget()
    }
}

/// The blocking twin of [`crate::RNonReentrantLock`]: every method blocks the calling thread (and panics
/// inside an async runtime, see the [module docs](self)); the default owner is the calling thread.
/// A second `lock()` by the same thread fails with [`Error::AlreadyHeld`].
///
/// ```no_run
/// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// let lock = client.non_reentrant_lock("lock:job")?;
/// let guard = lock.lock()?;
/// guard.unlock()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RNonReentrantLock(Handle<NonReentrantKind>);

impl RNonReentrantLock {
    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        &self.0.core.key
    }

    /// The same lock acting for a fixed owner id instead of the calling thread.
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RNonReentrantLock {
        RNonReentrantLock(self.0.with_owner(owner.into()))
    }

    /// The owner this handle acts for when called from this thread.
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The hash field this handle's owner writes, when called from this thread.
    pub fn field(&self) -> String {
        self.0.field()
    }

    /// Blocking [`crate::RNonReentrantLock::lock`].
    pub fn lock(&self) -> Result<NonReentrantGuard> {
        self.0.lock(None).map(NonReentrantGuard)
    }

    /// Blocking [`crate::RNonReentrantLock::lock_with_lease`].
    pub fn lock_with_lease(&self, lease: Duration) -> Result<NonReentrantGuard> {
        self.0.lock(Some(lease)).map(NonReentrantGuard)
    }

    /// Blocking [`crate::RNonReentrantLock::try_lock`].
    pub fn try_lock(&self) -> Result<Option<NonReentrantGuard>> {
        Ok(self.0.try_lock(Duration::ZERO, None)?.map(NonReentrantGuard))
    }

    /// Blocking [`crate::RNonReentrantLock::try_lock_for`].
    pub fn try_lock_for(&self, wait: Duration) -> Result<Option<NonReentrantGuard>> {
        Ok(self.0.try_lock(wait, None)?.map(NonReentrantGuard))
    }

    /// Blocking [`crate::RNonReentrantLock::try_lock_with_lease`].
    pub fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<NonReentrantGuard>> {
        Ok(self.0.try_lock(wait, Some(lease))?.map(NonReentrantGuard))
    }

    /// Runs `body` while holding the lock and releases it afterwards (also on panic).
    pub fn run<T>(&self, body: impl FnOnce() -> T) -> Result<T> {
        self.0.run(body)
    }

    /// Blocking [`crate::RNonReentrantLock::unlock`] (the calling thread's or the pinned owner's hold).
    pub fn unlock(&self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocking [`crate::RNonReentrantLock::force_unlock`].
    pub fn force_unlock(&self) -> Result<bool> {
        self.0.force_unlock()
    }

    /// Blocking [`crate::RNonReentrantLock::is_locked`].
    pub fn is_locked(&self) -> Result<bool> {
        self.0.exists()
    }

    /// Whether this handle's owner (the calling thread, or the pinned owner) holds the lock.
    pub fn is_held(&self) -> Result<bool> {
        self.0.is_held()
    }

    /// Whether `owner` of this client holds the lock.
    pub fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.0.is_held_by(owner.into())
    }

    /// How many times this handle's owner holds the lock.
    pub fn hold_count(&self) -> Result<u64> {
        self.0.hold_count()
    }

    /// Blocking [`crate::RNonReentrantLock::remain_time_to_live`].
    pub fn remain_time_to_live(&self) -> Result<Ttl> {
        self.0.remain_time_to_live()
    }
}

/// A blocking hold (see [`crate::NonReentrantGuard`]). **On drop** (without `unlock`): outside an async
/// runtime the release runs synchronously (bounded by the command timeout and retries, errors
/// logged); inside one it is queued as for the async guard. Never panics.
#[must_use = "if unused the lock is released at once"]
#[derive(Debug)]
pub struct NonReentrantGuard(Guard<NonReentrantKind>);

impl NonReentrantGuard {
    /// Blocking [`crate::NonReentrantGuard::unlock`].
    pub fn unlock(self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocks until the hold is lost, or `timeout` passes (`None`).
    pub fn wait_lost(&self, timeout: Duration) -> Option<LostReason> {
        self.0.wait_lost(timeout)
    }

    /// What this process knows about the hold.
    pub fn state(&self) -> LeaseState {
        self.0.h().state()
    }

    /// Whether the hold is trusted as held.
    pub fn is_held(&self) -> bool {
        self.0.h().is_held()
    }

    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        self.0.h().key()
    }

    /// The hash field of this hold.
    pub fn field(&self) -> &str {
        self.0.h().field()
    }

    /// The owner of this hold.
    pub fn owner(&self) -> OwnerId {
        self.0.h().owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    pub fn lease(&self) -> Option<Duration> {
        self.0.h().lease()
    }

    /// Keeps the hold without a guard.
    pub fn forget(self) {
        self.0.forget()
    }
}

/// The blocking twin of [`crate::RReadLock`]: every method blocks the calling thread (and panics
/// inside an async runtime, see the [module docs](self)); the default owner is the calling thread.
///
/// ```no_run
/// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// let lock = client.read_write_lock("lock:catalog")?.read_lock();
/// let guard = lock.lock()?;
/// guard.unlock()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RReadLock(Handle<ReadKind>);

impl RReadLock {
    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        &self.0.core.key
    }

    /// The same lock acting for a fixed owner id instead of the calling thread.
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RReadLock {
        RReadLock(self.0.with_owner(owner.into()))
    }

    /// The owner this handle acts for when called from this thread.
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The hash field this handle's owner writes, when called from this thread.
    pub fn field(&self) -> String {
        self.0.field()
    }

    /// Blocking [`crate::RReadLock::lock`].
    pub fn lock(&self) -> Result<ReadGuard> {
        self.0.lock(None).map(ReadGuard)
    }

    /// Blocking [`crate::RReadLock::lock_with_lease`].
    pub fn lock_with_lease(&self, lease: Duration) -> Result<ReadGuard> {
        self.0.lock(Some(lease)).map(ReadGuard)
    }

    /// Blocking [`crate::RReadLock::try_lock`].
    pub fn try_lock(&self) -> Result<Option<ReadGuard>> {
        Ok(self.0.try_lock(Duration::ZERO, None)?.map(ReadGuard))
    }

    /// Blocking [`crate::RReadLock::try_lock_for`].
    pub fn try_lock_for(&self, wait: Duration) -> Result<Option<ReadGuard>> {
        Ok(self.0.try_lock(wait, None)?.map(ReadGuard))
    }

    /// Blocking [`crate::RReadLock::try_lock_with_lease`].
    pub fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<ReadGuard>> {
        Ok(self.0.try_lock(wait, Some(lease))?.map(ReadGuard))
    }

    /// Runs `body` while holding the lock and releases it afterwards (also on panic).
    pub fn run<T>(&self, body: impl FnOnce() -> T) -> Result<T> {
        self.0.run(body)
    }

    /// Blocking [`crate::RReadLock::unlock`] (the calling thread's or the pinned owner's hold).
    pub fn unlock(&self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocking [`crate::RReadLock::force_unlock`].
    pub fn force_unlock(&self) -> Result<bool> {
        self.0.force_unlock()
    }

    /// Blocking [`crate::RReadLock::is_locked`].
    pub fn is_locked(&self) -> Result<bool> {
        self.0.rt.block_on(
            crate::RReadLock {
                core: self.0.core.clone(),
            }
            .is_locked(),
        )
    }

    /// Whether this handle's owner (the calling thread, or the pinned owner) holds the lock.
    pub fn is_held(&self) -> Result<bool> {
        self.0.is_held()
    }

    /// Whether `owner` of this client holds the lock.
    pub fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.0.is_held_by(owner.into())
    }

    /// How many times this handle's owner holds the lock.
    pub fn hold_count(&self) -> Result<u64> {
        self.0.hold_count()
    }

    /// Blocking [`crate::RReadLock::remain_time_to_live`].
    pub fn remain_time_to_live(&self) -> Result<Ttl> {
        self.0.remain_time_to_live()
    }
}

/// A blocking hold (see [`crate::ReadGuard`]). **On drop** (without `unlock`): outside an async
/// runtime the release runs synchronously (bounded by the command timeout and retries, errors
/// logged); inside one it is queued as for the async guard. Never panics.
#[must_use = "if unused the lock is released at once"]
#[derive(Debug)]
pub struct ReadGuard(Guard<ReadKind>);

impl ReadGuard {
    /// Blocking [`crate::ReadGuard::unlock`].
    pub fn unlock(self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocking [`crate::ReadGuard::reenter`]: another hold for this guard's owner.
    pub fn reenter(&self) -> Result<ReadGuard> {
        self.0.reenter().map(ReadGuard)
    }

    /// Blocks until the hold is lost, or `timeout` passes (`None`).
    pub fn wait_lost(&self, timeout: Duration) -> Option<LostReason> {
        self.0.wait_lost(timeout)
    }

    /// What this process knows about the hold.
    pub fn state(&self) -> LeaseState {
        self.0.h().state()
    }

    /// Whether the hold is trusted as held.
    pub fn is_held(&self) -> bool {
        self.0.h().is_held()
    }

    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        self.0.h().key()
    }

    /// The hash field of this hold.
    pub fn field(&self) -> &str {
        self.0.h().field()
    }

    /// The owner of this hold.
    pub fn owner(&self) -> OwnerId {
        self.0.h().owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    pub fn lease(&self) -> Option<Duration> {
        self.0.h().lease()
    }

    /// Keeps the hold without a guard.
    pub fn forget(self) {
        self.0.forget()
    }
}

/// The blocking twin of [`crate::RWriteLock`]: every method blocks the calling thread (and panics
/// inside an async runtime, see the [module docs](self)); the default owner is the calling thread.
///
/// ```no_run
/// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// let lock = client.read_write_lock("lock:catalog")?.write_lock();
/// let guard = lock.lock()?;
/// guard.unlock()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RWriteLock(Handle<WriteKind>);

impl RWriteLock {
    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        &self.0.core.key
    }

    /// The same lock acting for a fixed owner id instead of the calling thread.
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RWriteLock {
        RWriteLock(self.0.with_owner(owner.into()))
    }

    /// The owner this handle acts for when called from this thread.
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The hash field this handle's owner writes, when called from this thread.
    pub fn field(&self) -> String {
        self.0.field()
    }

    /// Blocking [`crate::RWriteLock::lock`].
    pub fn lock(&self) -> Result<WriteGuard> {
        self.0.lock(None).map(WriteGuard)
    }

    /// Blocking [`crate::RWriteLock::lock_with_lease`].
    pub fn lock_with_lease(&self, lease: Duration) -> Result<WriteGuard> {
        self.0.lock(Some(lease)).map(WriteGuard)
    }

    /// Blocking [`crate::RWriteLock::try_lock`].
    pub fn try_lock(&self) -> Result<Option<WriteGuard>> {
        Ok(self.0.try_lock(Duration::ZERO, None)?.map(WriteGuard))
    }

    /// Blocking [`crate::RWriteLock::try_lock_for`].
    pub fn try_lock_for(&self, wait: Duration) -> Result<Option<WriteGuard>> {
        Ok(self.0.try_lock(wait, None)?.map(WriteGuard))
    }

    /// Blocking [`crate::RWriteLock::try_lock_with_lease`].
    pub fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<WriteGuard>> {
        Ok(self.0.try_lock(wait, Some(lease))?.map(WriteGuard))
    }

    /// Runs `body` while holding the lock and releases it afterwards (also on panic).
    pub fn run<T>(&self, body: impl FnOnce() -> T) -> Result<T> {
        self.0.run(body)
    }

    /// Blocking [`crate::RWriteLock::unlock`] (the calling thread's or the pinned owner's hold).
    pub fn unlock(&self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocking [`crate::RWriteLock::force_unlock`].
    pub fn force_unlock(&self) -> Result<bool> {
        self.0.force_unlock()
    }

    /// Blocking [`crate::RWriteLock::is_locked`].
    pub fn is_locked(&self) -> Result<bool> {
        self.0.rt.block_on(
            crate::RWriteLock {
                core: self.0.core.clone(),
            }
            .is_locked(),
        )
    }

    /// Whether this handle's owner (the calling thread, or the pinned owner) holds the lock.
    pub fn is_held(&self) -> Result<bool> {
        self.0.is_held()
    }

    /// Whether `owner` of this client holds the lock.
    pub fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.0.is_held_by(owner.into())
    }

    /// How many times this handle's owner holds the lock.
    pub fn hold_count(&self) -> Result<u64> {
        self.0.hold_count()
    }

    /// Blocking [`crate::RWriteLock::remain_time_to_live`].
    pub fn remain_time_to_live(&self) -> Result<Ttl> {
        self.0.remain_time_to_live()
    }
}

/// A blocking hold (see [`crate::WriteGuard`]). **On drop** (without `unlock`): outside an async
/// runtime the release runs synchronously (bounded by the command timeout and retries, errors
/// logged); inside one it is queued as for the async guard. Never panics.
#[must_use = "if unused the lock is released at once"]
#[derive(Debug)]
pub struct WriteGuard(Guard<WriteKind>);

impl WriteGuard {
    /// Blocking [`crate::WriteGuard::unlock`].
    pub fn unlock(self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocking [`crate::WriteGuard::reenter`]: another hold for this guard's owner.
    pub fn reenter(&self) -> Result<WriteGuard> {
        self.0.reenter().map(WriteGuard)
    }

    /// Blocks until the hold is lost, or `timeout` passes (`None`).
    pub fn wait_lost(&self, timeout: Duration) -> Option<LostReason> {
        self.0.wait_lost(timeout)
    }

    /// What this process knows about the hold.
    pub fn state(&self) -> LeaseState {
        self.0.h().state()
    }

    /// Whether the hold is trusted as held.
    pub fn is_held(&self) -> bool {
        self.0.h().is_held()
    }

    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        self.0.h().key()
    }

    /// The hash field of this hold.
    pub fn field(&self) -> &str {
        self.0.h().field()
    }

    /// The owner of this hold.
    pub fn owner(&self) -> OwnerId {
        self.0.h().owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    pub fn lease(&self) -> Option<Duration> {
        self.0.h().lease()
    }

    /// Keeps the hold without a guard.
    pub fn forget(self) {
        self.0.forget()
    }

    /// Blocking [`crate::WriteGuard::downgrade`].
    pub fn downgrade(mut self) -> Result<ReadGuard> {
        let held = self.0.held.take().expect("present until consumed");
        let read = self
            .0
            .rt
            .block_on(crate::WriteGuard::from_held(held).downgrade())?;
        Ok(ReadGuard(Guard {
            rt: self.0.rt.clone(),
            held: Some(read.into_held()),
        }))
    }
}

/// The blocking twin of [`crate::RFairLock`]: every method blocks the calling thread (and panics
/// inside an async runtime, see the [module docs](self)); the default owner is the calling thread.
///
/// ```no_run
/// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// let lock = client.fair_lock("lock:queue")?;
/// let guard = lock.lock()?;
/// guard.unlock()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RFairLock(Handle<FairKind>);

impl RFairLock {
    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        &self.0.core.key
    }

    /// The same lock acting for a fixed owner id instead of the calling thread.
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RFairLock {
        RFairLock(self.0.with_owner(owner.into()))
    }

    /// The owner this handle acts for when called from this thread.
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The hash field this handle's owner writes, when called from this thread.
    pub fn field(&self) -> String {
        self.0.field()
    }

    /// Blocking [`crate::RFairLock::lock`].
    pub fn lock(&self) -> Result<FairGuard> {
        self.0.lock(None).map(FairGuard)
    }

    /// Blocking [`crate::RFairLock::lock_with_lease`].
    pub fn lock_with_lease(&self, lease: Duration) -> Result<FairGuard> {
        self.0.lock(Some(lease)).map(FairGuard)
    }

    /// Blocking [`crate::RFairLock::try_lock`].
    pub fn try_lock(&self) -> Result<Option<FairGuard>> {
        Ok(self.0.try_lock(Duration::ZERO, None)?.map(FairGuard))
    }

    /// Blocking [`crate::RFairLock::try_lock_for`].
    pub fn try_lock_for(&self, wait: Duration) -> Result<Option<FairGuard>> {
        Ok(self.0.try_lock(wait, None)?.map(FairGuard))
    }

    /// Blocking [`crate::RFairLock::try_lock_with_lease`].
    pub fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<FairGuard>> {
        Ok(self.0.try_lock(wait, Some(lease))?.map(FairGuard))
    }

    /// Runs `body` while holding the lock and releases it afterwards (also on panic).
    pub fn run<T>(&self, body: impl FnOnce() -> T) -> Result<T> {
        self.0.run(body)
    }

    /// Blocking [`crate::RFairLock::unlock`] (the calling thread's or the pinned owner's hold).
    pub fn unlock(&self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocking [`crate::RFairLock::force_unlock`].
    pub fn force_unlock(&self) -> Result<bool> {
        self.0.force_unlock()
    }

    /// Blocking [`crate::RFairLock::is_locked`].
    pub fn is_locked(&self) -> Result<bool> {
        self.0.exists()
    }

    /// Whether this handle's owner (the calling thread, or the pinned owner) holds the lock.
    pub fn is_held(&self) -> Result<bool> {
        self.0.is_held()
    }

    /// Whether `owner` of this client holds the lock.
    pub fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.0.is_held_by(owner.into())
    }

    /// How many times this handle's owner holds the lock.
    pub fn hold_count(&self) -> Result<u64> {
        self.0.hold_count()
    }

    /// Blocking [`crate::RFairLock::remain_time_to_live`].
    pub fn remain_time_to_live(&self) -> Result<Ttl> {
        self.0.remain_time_to_live()
    }
}

/// A blocking hold (see [`crate::FairGuard`]). **On drop** (without `unlock`): outside an async
/// runtime the release runs synchronously (bounded by the command timeout and retries, errors
/// logged); inside one it is queued as for the async guard. Never panics.
#[must_use = "if unused the lock is released at once"]
#[derive(Debug)]
pub struct FairGuard(Guard<FairKind>);

impl FairGuard {
    /// Blocking [`crate::FairGuard::unlock`].
    pub fn unlock(self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocking [`crate::FairGuard::reenter`]: another hold for this guard's owner.
    pub fn reenter(&self) -> Result<FairGuard> {
        self.0.reenter().map(FairGuard)
    }

    /// Blocks until the hold is lost, or `timeout` passes (`None`).
    pub fn wait_lost(&self, timeout: Duration) -> Option<LostReason> {
        self.0.wait_lost(timeout)
    }

    /// What this process knows about the hold.
    pub fn state(&self) -> LeaseState {
        self.0.h().state()
    }

    /// Whether the hold is trusted as held.
    pub fn is_held(&self) -> bool {
        self.0.h().is_held()
    }

    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        self.0.h().key()
    }

    /// The hash field of this hold.
    pub fn field(&self) -> &str {
        self.0.h().field()
    }

    /// The owner of this hold.
    pub fn owner(&self) -> OwnerId {
        self.0.h().owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    pub fn lease(&self) -> Option<Duration> {
        self.0.h().lease()
    }

    /// Keeps the hold without a guard.
    pub fn forget(self) {
        self.0.forget()
    }
}

/// The blocking twin of [`crate::RNonReentrantFairLock`]: every method blocks the calling thread (and panics
/// inside an async runtime, see the [module docs](self)); the default owner is the calling thread.
/// A second `lock()` by the same thread fails with [`Error::AlreadyHeld`].
///
/// ```no_run
/// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
/// let lock = client.non_reentrant_fair_lock("lock:queue")?;
/// let guard = lock.lock()?;
/// guard.unlock()?;
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RNonReentrantFairLock(Handle<FairKind>);

impl RNonReentrantFairLock {
    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        &self.0.core.key
    }

    /// The same lock acting for a fixed owner id instead of the calling thread.
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RNonReentrantFairLock {
        RNonReentrantFairLock(self.0.with_owner(owner.into()))
    }

    /// The owner this handle acts for when called from this thread.
    pub fn owner(&self) -> OwnerId {
        self.0.owner()
    }

    /// The hash field this handle's owner writes, when called from this thread.
    pub fn field(&self) -> String {
        self.0.field()
    }

    /// Blocking [`crate::RNonReentrantFairLock::lock`].
    pub fn lock(&self) -> Result<NonReentrantFairGuard> {
        self.0.lock(None).map(NonReentrantFairGuard)
    }

    /// Blocking [`crate::RNonReentrantFairLock::lock_with_lease`].
    pub fn lock_with_lease(&self, lease: Duration) -> Result<NonReentrantFairGuard> {
        self.0.lock(Some(lease)).map(NonReentrantFairGuard)
    }

    /// Blocking [`crate::RNonReentrantFairLock::try_lock`].
    pub fn try_lock(&self) -> Result<Option<NonReentrantFairGuard>> {
        Ok(self.0.try_lock(Duration::ZERO, None)?.map(NonReentrantFairGuard))
    }

    /// Blocking [`crate::RNonReentrantFairLock::try_lock_for`].
    pub fn try_lock_for(&self, wait: Duration) -> Result<Option<NonReentrantFairGuard>> {
        Ok(self.0.try_lock(wait, None)?.map(NonReentrantFairGuard))
    }

    /// Blocking [`crate::RNonReentrantFairLock::try_lock_with_lease`].
    pub fn try_lock_with_lease(
        &self,
        wait: Duration,
        lease: Duration,
    ) -> Result<Option<NonReentrantFairGuard>> {
        Ok(self.0.try_lock(wait, Some(lease))?.map(NonReentrantFairGuard))
    }

    /// Runs `body` while holding the lock and releases it afterwards (also on panic).
    pub fn run<T>(&self, body: impl FnOnce() -> T) -> Result<T> {
        self.0.run(body)
    }

    /// Blocking [`crate::RNonReentrantFairLock::unlock`] (the calling thread's or the pinned owner's hold).
    pub fn unlock(&self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocking [`crate::RNonReentrantFairLock::force_unlock`].
    pub fn force_unlock(&self) -> Result<bool> {
        self.0.force_unlock()
    }

    /// Blocking [`crate::RNonReentrantFairLock::is_locked`].
    pub fn is_locked(&self) -> Result<bool> {
        self.0.exists()
    }

    /// Whether this handle's owner (the calling thread, or the pinned owner) holds the lock.
    pub fn is_held(&self) -> Result<bool> {
        self.0.is_held()
    }

    /// Whether `owner` of this client holds the lock.
    pub fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.0.is_held_by(owner.into())
    }

    /// How many times this handle's owner holds the lock.
    pub fn hold_count(&self) -> Result<u64> {
        self.0.hold_count()
    }

    /// Blocking [`crate::RNonReentrantFairLock::remain_time_to_live`].
    pub fn remain_time_to_live(&self) -> Result<Ttl> {
        self.0.remain_time_to_live()
    }
}

/// A blocking hold (see [`crate::NonReentrantFairGuard`]). **On drop** (without `unlock`): outside an async
/// runtime the release runs synchronously (bounded by the command timeout and retries, errors
/// logged); inside one it is queued as for the async guard. Never panics.
#[must_use = "if unused the lock is released at once"]
#[derive(Debug)]
pub struct NonReentrantFairGuard(Guard<FairKind>);

impl NonReentrantFairGuard {
    /// Blocking [`crate::NonReentrantFairGuard::unlock`].
    pub fn unlock(self) -> Result<Unlocked> {
        self.0.unlock()
    }

    /// Blocks until the hold is lost, or `timeout` passes (`None`).
    pub fn wait_lost(&self, timeout: Duration) -> Option<LostReason> {
        self.0.wait_lost(timeout)
    }

    /// What this process knows about the hold.
    pub fn state(&self) -> LeaseState {
        self.0.h().state()
    }

    /// Whether the hold is trusted as held.
    pub fn is_held(&self) -> bool {
        self.0.h().is_held()
    }

    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        self.0.h().key()
    }

    /// The hash field of this hold.
    pub fn field(&self) -> &str {
        self.0.h().field()
    }

    /// The owner of this hold.
    pub fn owner(&self) -> OwnerId {
        self.0.h().owner()
    }

    /// The explicit lease, or `None` in watchdog mode.
    pub fn lease(&self) -> Option<Duration> {
        self.0.h().lease()
    }

    /// Keeps the hold without a guard.
    pub fn forget(self) {
        self.0.forget()
    }
}

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
    read: RReadLock,
    write: RWriteLock,
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

impl std::fmt::Debug for Rt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Runtime")
    }
}
