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

    /// A handle to the read-write lock `name`.
    ///
    /// ```no_run
    /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
    /// let rw = client.read_write_lock("lock:catalog")?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn read_write_lock(&self, name: &str) -> Result<RReadWriteLock> {
        Ok(RReadWriteLock {
            rt: self.rt.clone(),
            rw: self.client.read_write_lock(name)?,
        })
    }

    /// See [`crate::Client::stats`].
    pub fn stats(&self) -> crate::ClientStats {
        self.client.stats()
    }
}

macro_rules! blocking_handle {
    ($(#[$doc:meta])* $T:ident => $A:ident, $G:ident => $AG:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $T {
            rt: Arc<tokio::runtime::Runtime>,
            lock: crate::$A,
        }

        impl $T {
            fn guard(&self, g: crate::$AG) -> $G {
                $G {
                    rt: self.rt.clone(),
                    guard: Some(g),
                }
            }

            /// The lock's Redis key.
            pub fn key(&self) -> &str {
                self.lock.key()
            }

            /// The same lock acting for a fixed owner id.
            pub fn with_owner(&self, owner: impl Into<OwnerId>) -> $T {
                $T {
                    rt: self.rt.clone(),
                    lock: self.lock.with_owner(owner),
                }
            }

            /// The hash field this handle's owner writes.
            pub fn field(&self) -> String {
                self.lock.field()
            }

            /// Acquires, waiting as long as it takes (watchdog mode).
            pub fn lock(&self) -> Result<$G> {
                self.rt.block_on(self.lock.lock()).map(|g| self.guard(g))
            }

            /// Acquires for `lease` (no watchdog), waiting as long as it takes.
            pub fn lock_with_lease(&self, lease: Duration) -> Result<$G> {
                self.rt.block_on(self.lock.lock_with_lease(lease)).map(|g| self.guard(g))
            }

            /// One attempt, no waiting.
            pub fn try_lock(&self) -> Result<Option<$G>> {
                Ok(self.rt.block_on(self.lock.try_lock())?.map(|g| self.guard(g)))
            }

            /// Waits up to `wait` (watchdog mode).
            pub fn try_lock_for(&self, wait: Duration) -> Result<Option<$G>> {
                Ok(self.rt.block_on(self.lock.try_lock_for(wait))?.map(|g| self.guard(g)))
            }

            /// Waits up to `wait`, holds for `lease` (no watchdog).
            pub fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<$G>> {
                Ok(self
                    .rt
                    .block_on(self.lock.try_lock_with_lease(wait, lease))?
                    .map(|g| self.guard(g)))
            }

            /// Runs `body` while holding the lock and releases it afterwards (also on panic).
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

            /// Releases one hold of this handle's owner without a guard.
            pub fn unlock(&self) -> Result<Unlocked> {
                self.rt.block_on(self.lock.unlock())
            }

            /// Deletes the lock whoever holds it and wakes waiters.
            pub fn force_unlock(&self) -> Result<bool> {
                self.rt.block_on(self.lock.force_unlock())
            }

            /// Whether the lock is held (in this side's sense).
            pub fn is_locked(&self) -> Result<bool> {
                self.rt.block_on(self.lock.is_locked())
            }

            /// Whether this handle's owner holds the lock.
            pub fn is_held(&self) -> Result<bool> {
                self.rt.block_on(self.lock.is_held())
            }

            /// Whether `owner` of this client holds the lock.
            pub fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
                self.rt.block_on(self.lock.is_held_by(owner))
            }

            /// How many times this handle's owner holds the lock.
            pub fn hold_count(&self) -> Result<u64> {
                self.rt.block_on(self.lock.hold_count())
            }

            /// The lock's remaining time to live.
            pub fn remain_time_to_live(&self) -> Result<Ttl> {
                self.rt.block_on(self.lock.remain_time_to_live())
            }
        }

        /// A blocking guard. **On drop** (without `unlock`): outside an async runtime the
        /// release runs synchronously (bounded by the command timeout, errors logged); inside
        /// one it is queued as for the async guard.
        #[must_use = "if unused the lock is released at once"]
        pub struct $G {
            rt: Arc<tokio::runtime::Runtime>,
            guard: Option<crate::$AG>,
        }

        impl std::fmt::Debug for $G {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_tuple(stringify!($G)).field(&self.guard).finish()
            }
        }

        impl $G {
            fn g(&self) -> &crate::$AG {
                self.guard.as_ref().expect("present until consumed")
            }

            /// Releases this hold.
            pub fn unlock(mut self) -> Result<Unlocked> {
                let g = self.guard.take().expect("present until consumed");
                self.rt.block_on(g.unlock())
            }

            /// Blocks until the hold is lost, or `timeout` passes (`None`).
            pub fn wait_lost(&self, timeout: Duration) -> Option<crate::LostReason> {
                let lost = self.g().lost();
                self.rt.block_on(async move { tokio::time::timeout(timeout, lost).await.ok() })
            }

            /// What this process knows about the hold.
            pub fn state(&self) -> LeaseState {
                self.g().state()
            }

            /// Whether the hold is trusted as held.
            pub fn is_held(&self) -> bool {
                self.g().is_held()
            }

            /// The lock's Redis key.
            pub fn key(&self) -> &str {
                self.g().key()
            }

            /// The hash field of this hold.
            pub fn field(&self) -> &str {
                self.g().field()
            }

            /// The owner of this hold.
            pub fn owner(&self) -> OwnerId {
                self.g().owner()
            }

            /// The explicit lease, or `None` in watchdog mode.
            pub fn lease(&self) -> Option<Duration> {
                self.g().lease()
            }

            /// Keeps the hold without a guard.
            pub fn forget(mut self) {
                if let Some(g) = self.guard.take() {
                    g.forget();
                }
            }
        }

        impl Drop for $G {
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
    };
}

blocking_handle!(
    /// The blocking twin of [`crate::RLock`]; every method blocks the calling thread.
    ///
    /// ```no_run
    /// # let lock = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?.lock("a")?;
    /// let guard = lock.lock()?;
    /// guard.unlock()?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    RLock => RLock, LockGuard => LockGuard
);

blocking_handle!(
    /// The blocking twin of [`crate::RReadLock`].
    ///
    /// ```no_run
    /// # let rw = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?.read_write_lock("a")?;
    /// let guard = rw.read_lock().lock()?;
    /// guard.unlock()?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    RReadLock => RReadLock, ReadGuard => ReadGuard
);

blocking_handle!(
    /// The blocking twin of [`crate::RWriteLock`].
    ///
    /// ```no_run
    /// # let rw = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?.read_write_lock("a")?;
    /// let guard = rw.write_lock().lock()?;
    /// let read = guard.downgrade()?;
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    RWriteLock => RWriteLock, WriteGuard => WriteGuard
);

impl WriteGuard {
    /// See [`crate::WriteGuard::downgrade`].
    pub fn downgrade(mut self) -> Result<ReadGuard> {
        let g = self.guard.take().expect("present until consumed");
        let read = self.rt.block_on(g.downgrade())?;
        Ok(ReadGuard {
            rt: self.rt.clone(),
            guard: Some(read),
        })
    }
}

/// The blocking twin of [`crate::RReadWriteLock`].
#[derive(Clone, Debug)]
pub struct RReadWriteLock {
    rt: Arc<tokio::runtime::Runtime>,
    rw: crate::RReadWriteLock,
}

impl RReadWriteLock {
    /// The read side.
    pub fn read_lock(&self) -> RReadLock {
        RReadLock {
            rt: self.rt.clone(),
            lock: self.rw.read_lock(),
        }
    }

    /// The write side.
    pub fn write_lock(&self) -> RWriteLock {
        RWriteLock {
            rt: self.rt.clone(),
            lock: self.rw.write_lock(),
        }
    }

    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        self.rw.key()
    }
}
