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

use crate::error::{Error, Result};
use crate::kind::{AcquireKind, Reenterable};
use crate::kinds;
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
        Ok(Lock::new(self.rt.clone(), self.rt.client.lock(name)?))
    }

    /// A handle to the fenced lock `name` (see [`crate::Client::fenced_lock`]).
    ///
    /// ```no_run
    /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// let (token, guard) = client.fenced_lock("lock:order:42")?.lock_and_get_token()?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn fenced_lock(&self, name: &str) -> Result<RFencedLock> {
        Ok(Lock::new(self.rt.clone(), self.rt.client.fenced_lock(name)?))
    }

    /// A handle to the spin lock `name` (see [`crate::Client::spin_lock`]).
    ///
    /// ```no_run
    /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// let guard = client.spin_lock("lock:report")?.lock()?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn spin_lock(&self, name: &str) -> Result<RSpinLock> {
        Ok(Lock::new(self.rt.clone(), self.rt.client.spin_lock(name)?))
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
        Ok(Lock::new(
            self.rt.clone(),
            self.rt.client.non_reentrant_lock(name)?,
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
        Ok(Lock::new(self.rt.clone(), self.rt.client.fair_lock(name)?))
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
        Ok(Lock::new(
            self.rt.clone(),
            self.rt.client.non_reentrant_fair_lock(name)?,
        ))
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
            read: Lock::new(self.rt.clone(), rw.read_lock()),
            write: Lock::new(self.rt.clone(), rw.write_lock()),
        })
    }

    /// A multi-lock over the reentrant locks `names` of this client (see
    /// [`crate::Client::multi_lock`]); other kinds and other clients: [`RMultiLock::new`].
    ///
    /// ```no_run
    /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// let guard = client.multi_lock(&["account:1", "account:2"])?.lock()?;
    /// guard.unlock()?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn multi_lock(&self, names: &[&str]) -> Result<RMultiLock> {
        let members = names
            .iter()
            .map(|n| self.lock(n).map(|l| Member::from(&l)))
            .collect::<Result<Vec<_>>>()?;
        RMultiLock::new(members)
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

// ---- the generic layer: one handle and one guard type for every kind ----

/// The blocking twin of [`crate::Lock<K>`]: the same lock handle, every method of which blocks
/// the calling thread (and panics inside an async runtime, see the [module docs](self)). The
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
    rt: Arc<Rt>,
    core: crate::Lock<K>,
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
    fn new(rt: Arc<Rt>, core: crate::Lock<K>) -> Lock<K> {
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

    /// The owner this handle acts for: the pinned one, else the calling thread (so never `None`
    /// here; the type is [`crate::Lock::owner`]'s).
    pub fn owner(&self) -> Option<OwnerId> {
        self.owned().owner()
    }

    /// The hash field this handle's owner writes ([`crate::Lock::field`]; never `None` here).
    pub fn field(&self) -> Option<String> {
        self.owned().field()
    }

    /// Blocking [`crate::Lock::lock`].
    pub fn lock(&self) -> Result<Guard<K>> {
        let held = self.rt.block_on(self.owned().lock())?;
        Ok(self.guard(held))
    }

    /// Blocking [`crate::Lock::lock_with_lease`].
    pub fn lock_with_lease(&self, lease: Duration) -> Result<Guard<K>> {
        let held = self.rt.block_on(self.owned().lock_with_lease(lease))?;
        Ok(self.guard(held))
    }

    /// Blocking [`crate::Lock::try_lock`].
    pub fn try_lock(&self) -> Result<Option<Guard<K>>> {
        self.try_lock_opt(Duration::ZERO, None)
    }

    /// Blocking [`crate::Lock::try_lock_for`]: returns within `wait` plus one command timeout.
    pub fn try_lock_for(&self, wait: Duration) -> Result<Option<Guard<K>>> {
        self.try_lock_opt(wait, None)
    }

    /// Blocking [`crate::Lock::try_lock_with_lease`].
    pub fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<Guard<K>>> {
        self.try_lock_opt(wait, Some(lease))
    }

    fn try_lock_opt(&self, wait: Duration, lease: Option<Duration>) -> Result<Option<Guard<K>>> {
        let held = self.rt.block_on(self.owned().try_lock_opt(wait, lease))?;
        Ok(held.map(|h| self.guard(h)))
    }

    /// Runs `body` while holding the lock (watchdog mode) and releases it afterwards, also when
    /// `body` panics (the panic resumes after the release). Unlike [`crate::Lock::run`], a
    /// blocking `body` cannot be stopped from outside when the lock is lost: check
    /// [`Guard::is_held`] in long work, or take the guard yourself.
    pub fn run<T>(&self, body: impl FnOnce() -> T) -> Result<T> {
        let guard = self.lock()?;
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

    /// Blocking [`crate::Lock::unlock`] for this handle's owner.
    pub fn unlock(&self) -> Result<Unlocked> {
        self.rt.block_on(self.owned().unlock())
    }

    /// Blocking [`crate::Lock::force_unlock`].
    pub fn force_unlock(&self) -> Result<bool> {
        self.rt.block_on(self.core.force_unlock())
    }

    /// Blocking [`crate::Lock::is_locked`].
    pub fn is_locked(&self) -> Result<bool> {
        self.rt.block_on(self.core.is_locked())
    }

    /// Blocking [`crate::Lock::is_held`] for this handle's owner.
    pub fn is_held(&self) -> Result<bool> {
        self.rt.block_on(self.owned().is_held())
    }

    /// Blocking [`crate::Lock::is_held_by`].
    pub fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.rt.block_on(self.core.is_held_by(owner))
    }

    /// Blocking [`crate::Lock::hold_count`] for this handle's owner.
    pub fn hold_count(&self) -> Result<u64> {
        self.rt.block_on(self.owned().hold_count())
    }

    /// Blocking [`crate::Lock::remain_time_to_live`].
    pub fn remain_time_to_live(&self) -> Result<Ttl> {
        self.rt.block_on(self.core.remain_time_to_live())
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

    /// Blocking [`crate::Lock::try_lock_and_get_token`].
    pub fn try_lock_and_get_token(
        &self,
        wait: Duration,
        lease: Option<Duration>,
    ) -> Result<Option<(u64, Guard<kinds::Fenced>)>> {
        Ok(self.try_lock_opt(wait, lease)?.map(|g| (g.token(), g)))
    }

    /// Blocking [`crate::Lock::get_token`].
    pub fn get_token(&self) -> Result<Option<u64>> {
        self.rt.block_on(self.core.get_token())
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

/// Blocking [`crate::RLock`].
pub type RLock = Lock<kinds::Reentrant>;
/// Blocking [`crate::LockGuard`].
pub type LockGuard = Guard<kinds::Reentrant>;
/// Blocking [`crate::RFairLock`].
pub type RFairLock = Lock<kinds::Fair>;
/// Blocking [`crate::FairGuard`].
pub type FairGuard = Guard<kinds::Fair>;
/// Blocking [`crate::RNonReentrantFairLock`].
pub type RNonReentrantFairLock = Lock<kinds::NonReentrantFair>;
/// Blocking [`crate::NonReentrantFairGuard`].
pub type NonReentrantFairGuard = Guard<kinds::NonReentrantFair>;
/// Blocking [`crate::RFencedLock`].
pub type RFencedLock = Lock<kinds::Fenced>;
/// Blocking [`crate::FencedGuard`].
pub type FencedGuard = Guard<kinds::Fenced>;
/// Blocking [`crate::RSpinLock`].
pub type RSpinLock = Lock<kinds::Spin>;
/// Blocking [`crate::SpinGuard`].
pub type SpinGuard = Guard<kinds::Spin>;
/// Blocking [`crate::RNonReentrantLock`].
pub type RNonReentrantLock = Lock<kinds::NonReentrant>;
/// Blocking [`crate::NonReentrantGuard`].
pub type NonReentrantGuard = Guard<kinds::NonReentrant>;
/// Blocking [`crate::RReadLock`].
pub type RReadLock = Lock<kinds::Read>;
/// Blocking [`crate::ReadGuard`].
pub type ReadGuard = Guard<kinds::Read>;
/// Blocking [`crate::RWriteLock`].
pub type RWriteLock = Lock<kinds::Write>;
/// Blocking [`crate::WriteGuard`].
pub type WriteGuard = Guard<kinds::Write>;

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
    rt: Arc<Rt>,
    inner: crate::RMultiLock,
    pinned: bool,
}

impl RMultiLock {
    fn of(members: impl IntoIterator<Item = Member>, red: bool) -> Result<RMultiLock> {
        let mut rt = None;
        let members: Vec<crate::Member> = members
            .into_iter()
            .map(|m| {
                rt.get_or_insert(m.rt);
                m.inner
            })
            .collect();
        let inner = if red {
            crate::RMultiLock::red_lock(members)?
        } else {
            crate::RMultiLock::new(members)?
        };
        let rt = rt.ok_or_else(|| Error::InvalidArgument("a multi-lock needs at least one member".into()))?;
        Ok(RMultiLock {
            rt,
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

    /// Blocking [`crate::RMultiLock::lock`].
    pub fn lock(&self) -> Result<MultiGuard> {
        let g = self.rt.block_on(self.owned().lock())?;
        Ok(self.guard(g))
    }

    /// Blocking [`crate::RMultiLock::lock_with_lease`].
    pub fn lock_with_lease(&self, lease: Duration) -> Result<MultiGuard> {
        let g = self.rt.block_on(self.owned().lock_with_lease(lease))?;
        Ok(self.guard(g))
    }

    /// Blocking [`crate::RMultiLock::try_lock`].
    pub fn try_lock(&self) -> Result<Option<MultiGuard>> {
        let g = self.rt.block_on(self.owned().try_lock())?;
        Ok(g.map(|g| self.guard(g)))
    }

    /// Blocking [`crate::RMultiLock::try_lock_for`].
    pub fn try_lock_for(&self, wait: Duration) -> Result<Option<MultiGuard>> {
        let g = self.rt.block_on(self.owned().try_lock_for(wait))?;
        Ok(g.map(|g| self.guard(g)))
    }

    /// Blocking [`crate::RMultiLock::try_lock_with_lease`].
    pub fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<MultiGuard>> {
        let g = self.rt.block_on(self.owned().try_lock_with_lease(wait, lease))?;
        Ok(g.map(|g| self.guard(g)))
    }
}

/// The blocking twin of [`crate::MultiGuard`]. On drop (without `unlock`): released
/// synchronously outside an async runtime, in the background inside one.
#[must_use = "if unused the lock is released at once"]
pub struct MultiGuard {
    rt: Arc<Rt>,
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

    /// Blocks until the lock's promise breaks or `timeout` passes (see [`Guard::wait_lost`]).
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

impl std::fmt::Debug for Rt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Runtime")
    }
}
