//! A blocking facade for code without an async runtime.
//!
//! [`Client`] owns a small tokio runtime (one worker thread) that runs the watchdog, pub/sub and
//! queued releases; every method is `block_on` of its async twin. The default owner in blocking
//! code is the calling OS thread, as in Java.
//!
//! Do not call these methods from inside an async runtime (they panic there, like
//! `tokio::runtime::Runtime::block_on`); use the async API instead.
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
use crate::{Config, LeaseState, OwnerId, Ttl, Unlocked};

/// A blocking lock client (see the [module docs](self)).
#[derive(Clone)]
pub struct Client {
    rt: Arc<tokio::runtime::Runtime>,
    client: crate::Client,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::Client")
            .field("client", &self.client)
            .finish()
    }
}

impl Client {
    /// Connects with the default configuration.
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
        let client = rt.block_on(crate::Client::builder().url(url).config(config).build())?;
        Ok(Client {
            rt: Arc::new(rt),
            client,
        })
    }

    /// The client id (a lowercase UUID v4).
    pub fn id(&self) -> &str {
        self.client.id()
    }

    /// The async client behind this one (sharing its id, watchdog and hub).
    pub fn as_async(&self) -> &crate::Client {
        &self.client
    }

    /// A handle to the reentrant lock `name`.
    ///
    /// ```no_run
    /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// let lock = client.lock("lock:order:42")?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn lock(&self, name: &str) -> Result<RLock> {
        Ok(RLock {
            rt: self.rt.clone(),
            lock: self.client.lock(name)?,
        })
    }

    /// See [`crate::Client::stats`].
    pub fn stats(&self) -> crate::ClientStats {
        self.client.stats()
    }
}

/// The blocking twin of [`crate::RLock`]; every method blocks the calling thread.
#[derive(Clone, Debug)]
pub struct RLock {
    rt: Arc<tokio::runtime::Runtime>,
    lock: crate::RLock,
}

impl RLock {
    fn guard(&self, g: crate::LockGuard) -> LockGuard {
        LockGuard {
            rt: self.rt.clone(),
            guard: Some(g),
        }
    }

    /// See [`crate::RLock::key`].
    pub fn key(&self) -> &str {
        self.lock.key()
    }

    /// See [`crate::RLock::with_owner`].
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RLock {
        RLock {
            rt: self.rt.clone(),
            lock: self.lock.with_owner(owner),
        }
    }

    /// See [`crate::RLock::field`].
    pub fn field(&self) -> String {
        self.lock.field()
    }

    /// See [`crate::RLock::lock`].
    ///
    /// ```no_run
    /// # let lock = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?.lock("a")?;
    /// let guard = lock.lock()?;
    /// guard.unlock()?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn lock(&self) -> Result<LockGuard> {
        self.rt.block_on(self.lock.lock()).map(|g| self.guard(g))
    }

    /// See [`crate::RLock::lock_with_lease`].
    pub fn lock_with_lease(&self, lease: Duration) -> Result<LockGuard> {
        self.rt
            .block_on(self.lock.lock_with_lease(lease))
            .map(|g| self.guard(g))
    }

    /// See [`crate::RLock::try_lock`].
    pub fn try_lock(&self) -> Result<Option<LockGuard>> {
        Ok(self.rt.block_on(self.lock.try_lock())?.map(|g| self.guard(g)))
    }

    /// See [`crate::RLock::try_lock_for`].
    pub fn try_lock_for(&self, wait: Duration) -> Result<Option<LockGuard>> {
        Ok(self
            .rt
            .block_on(self.lock.try_lock_for(wait))?
            .map(|g| self.guard(g)))
    }

    /// See [`crate::RLock::try_lock_with_lease`].
    pub fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<LockGuard>> {
        Ok(self
            .rt
            .block_on(self.lock.try_lock_with_lease(wait, lease))?
            .map(|g| self.guard(g)))
    }

    /// Runs `body` while holding the lock and releases it afterwards (also on panic).
    ///
    /// ```no_run
    /// # let lock = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?.lock("a")?;
    /// let n = lock.run(|| 6 * 7)?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn run<T>(&self, body: impl FnOnce() -> T) -> Result<T> {
        let guard = self.lock()?;
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
        match out {
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

    /// See [`crate::RLock::unlock`].
    pub fn unlock(&self) -> Result<Unlocked> {
        self.rt.block_on(self.lock.unlock())
    }

    /// See [`crate::RLock::force_unlock`].
    pub fn force_unlock(&self) -> Result<bool> {
        self.rt.block_on(self.lock.force_unlock())
    }

    /// See [`crate::RLock::is_locked`].
    pub fn is_locked(&self) -> Result<bool> {
        self.rt.block_on(self.lock.is_locked())
    }

    /// See [`crate::RLock::is_held`].
    pub fn is_held(&self) -> Result<bool> {
        self.rt.block_on(self.lock.is_held())
    }

    /// See [`crate::RLock::is_held_by`].
    pub fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        self.rt.block_on(self.lock.is_held_by(owner))
    }

    /// See [`crate::RLock::hold_count`].
    pub fn hold_count(&self) -> Result<u64> {
        self.rt.block_on(self.lock.hold_count())
    }

    /// See [`crate::RLock::remain_time_to_live`].
    pub fn remain_time_to_live(&self) -> Result<Ttl> {
        self.rt.block_on(self.lock.remain_time_to_live())
    }
}

/// The blocking twin of [`crate::LockGuard`].
///
/// **On drop** (without `unlock`): outside an async runtime the release runs synchronously
/// (bounded by the command timeout, errors logged); inside one it is queued as for the async
/// guard.
#[must_use = "if unused the lock is released at once"]
pub struct LockGuard {
    rt: Arc<tokio::runtime::Runtime>,
    guard: Option<crate::LockGuard>,
}

impl std::fmt::Debug for LockGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("blocking::LockGuard").field(&self.guard).finish()
    }
}

impl LockGuard {
    fn g(&self) -> &crate::LockGuard {
        self.guard.as_ref().expect("present until consumed")
    }

    /// See [`crate::LockGuard::unlock`].
    pub fn unlock(mut self) -> Result<Unlocked> {
        let g = self.guard.take().expect("present until consumed");
        self.rt.block_on(g.unlock())
    }

    /// Blocks until the hold is lost, or `timeout` passes (`None`).
    pub fn wait_lost(&self, timeout: Duration) -> Option<crate::LostReason> {
        let lost = self.g().lost();
        self.rt
            .block_on(async move { tokio::time::timeout(timeout, lost).await.ok() })
    }

    /// See [`crate::LockGuard::state`].
    pub fn state(&self) -> LeaseState {
        self.g().state()
    }

    /// See [`crate::LockGuard::is_held`].
    pub fn is_held(&self) -> bool {
        self.g().is_held()
    }

    /// See [`crate::LockGuard::key`].
    pub fn key(&self) -> &str {
        self.g().key()
    }

    /// See [`crate::LockGuard::field`].
    pub fn field(&self) -> &str {
        self.g().field()
    }

    /// See [`crate::LockGuard::owner`].
    pub fn owner(&self) -> OwnerId {
        self.g().owner()
    }

    /// See [`crate::LockGuard::lease`].
    pub fn lease(&self) -> Option<Duration> {
        self.g().lease()
    }

    /// See [`crate::LockGuard::forget`].
    pub fn forget(mut self) {
        if let Some(g) = self.guard.take() {
            g.forget();
        }
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        let Some(g) = self.guard.take() else { return };
        if tokio::runtime::Handle::try_current().is_ok() {
            drop(g); // inside a runtime: queue the release
            return;
        }
        let key = g.key().to_owned();
        if let Err(e) = self.rt.block_on(g.unlock()) {
            tracing::warn!(key = %key, error = %e, "release on drop failed");
        }
    }
}
