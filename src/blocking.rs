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
use crate::{Config, LeaseState, OwnerId, Ttl, Unlocked};

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
        let bound = client.config().command_timeout.saturating_mul(2);
        let finish = move || {
            rt.block_on(async {
                match tokio::time::timeout(bound, client.shutdown()).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => tracing::warn!(error = %e, "blocking client shutdown: a release failed"),
                    Err(_) => tracing::warn!(
                        "blocking client shutdown timed out; unreleased locks expire with their TTL"
                    ),
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
        Ok(RLock {
            rt: self.rt.clone(),
            lock: self.rt.client.lock(name)?,
            pinned: false,
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
            rw: self.rt.client.read_write_lock(name)?,
            pinned: false,
        })
    }

    /// See [`crate::Client::stats`].
    pub fn stats(&self) -> crate::ClientStats {
        self.rt.client.stats()
    }

    /// See [`crate::Client::shutdown`]; also done when the last handle and guard are dropped.
    ///
    /// # Panics
    ///
    /// Inside an async runtime (see the [module docs](self)).
    pub fn shutdown(&self) -> Result<()> {
        self.rt.block_on(self.rt.client.shutdown())
    }
}

macro_rules! blocking_handle {
    ($(#[$doc:meta])* $T:ident => $A:ident, $G:ident => $AG:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $T {
            rt: Arc<Rt>,
            lock: crate::$A,
            pinned: bool,
        }

        impl $T {
            fn guard(&self, g: crate::$AG) -> $G {
                $G {
                    rt: self.rt.clone(),
                    guard: Some(g),
                }
            }

            /// The async handle acting for this handle's owner: the pinned one, else the
            /// calling thread.
            fn owned(&self) -> crate::$A {
                if self.pinned {
                    self.lock.clone()
                } else {
                    self.lock.with_owner(OwnerId::current_thread())
                }
            }

            /// The lock's Redis key.
            pub fn key(&self) -> &str {
                self.lock.key()
            }

            /// The same lock acting for a fixed owner id instead of the calling thread.
            pub fn with_owner(&self, owner: impl Into<OwnerId>) -> $T {
                $T {
                    rt: self.rt.clone(),
                    lock: self.lock.with_owner(owner),
                    pinned: true,
                }
            }

            /// The owner this handle acts for when called from this thread.
            pub fn owner(&self) -> OwnerId {
                self.owned().owner().unwrap_or_else(OwnerId::current_thread)
            }

            /// The hash field this handle's owner writes, when called from this thread.
            pub fn field(&self) -> String {
                let owned = self.owned();
                owned.field().unwrap_or_default()
            }

            /// Acquires, waiting as long as it takes (watchdog mode). The calling thread (or the
            /// pinned owner) holds it: a nested `lock()` on the same thread re-enters.
            pub fn lock(&self) -> Result<$G> {
                self.rt.block_on(self.owned().lock()).map(|g| self.guard(g))
            }

            /// Acquires for `lease` (no watchdog), waiting as long as it takes.
            pub fn lock_with_lease(&self, lease: Duration) -> Result<$G> {
                self.rt.block_on(self.owned().lock_with_lease(lease)).map(|g| self.guard(g))
            }

            /// One attempt, no waiting.
            pub fn try_lock(&self) -> Result<Option<$G>> {
                Ok(self.rt.block_on(self.owned().try_lock())?.map(|g| self.guard(g)))
            }

            /// Waits up to `wait` (watchdog mode).
            pub fn try_lock_for(&self, wait: Duration) -> Result<Option<$G>> {
                Ok(self.rt.block_on(self.owned().try_lock_for(wait))?.map(|g| self.guard(g)))
            }

            /// Waits up to `wait`, holds for `lease` (no watchdog).
            pub fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<$G>> {
                Ok(self
                    .rt
                    .block_on(self.owned().try_lock_with_lease(wait, lease))?
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
                self.rt.block_on(self.owned().unlock())
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
                self.rt.block_on(self.owned().is_held())
            }

            /// Whether `owner` of this client holds the lock.
            pub fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
                self.rt.block_on(self.lock.is_held_by(owner))
            }

            /// How many times this handle's owner holds the lock.
            pub fn hold_count(&self) -> Result<u64> {
                self.rt.block_on(self.owned().hold_count())
            }

            /// The lock's remaining time to live.
            pub fn remain_time_to_live(&self) -> Result<Ttl> {
                self.rt.block_on(self.lock.remain_time_to_live())
            }
        }

        /// A blocking guard. **On drop** (without `unlock`): outside an async runtime the
        /// release runs synchronously (bounded by the command timeout and retries, errors
        /// logged); inside one it is queued as for the async guard. Never panics.
        #[must_use = "if unused the lock is released at once"]
        pub struct $G {
            rt: Arc<Rt>,
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

            /// Releases this hold (see the async guard's `unlock`).
            pub fn unlock(mut self) -> Result<Unlocked> {
                let g = self.guard.take().expect("present until consumed");
                self.rt.block_on(g.unlock())
            }

            /// Another hold for this guard's owner (see the async guard's `reenter`).
            pub fn reenter(&self) -> Result<$G> {
                let g = self.rt.block_on(self.g().reenter())?;
                Ok($G {
                    rt: self.rt.clone(),
                    guard: Some(g),
                })
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
                match self.rt.block_on(g.unlock()) {
                    Ok(_) | Err(Error::NotHeld { .. }) => {}
                    Err(e) => tracing::warn!(key = %key, error = %e, "release on drop failed"),
                }
            }
        }
    };
}

blocking_handle!(
    /// The blocking twin of [`crate::RLock`]; every method blocks the calling thread (and
    /// panics inside an async runtime, see the [module docs](self)).
    ///
    /// ```no_run
    /// # let lock = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?.lock("a")?;
    /// let guard = lock.lock()?;
    /// let again = lock.lock()?; // the same thread re-enters
    /// again.unlock()?;
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
    rt: Arc<Rt>,
    rw: crate::RReadWriteLock,
    pinned: bool,
}

impl std::fmt::Debug for Rt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Runtime")
    }
}

impl RReadWriteLock {
    /// The read side.
    pub fn read_lock(&self) -> RReadLock {
        RReadLock {
            rt: self.rt.clone(),
            lock: self.rw.read_lock(),
            pinned: self.pinned,
        }
    }

    /// The write side.
    pub fn write_lock(&self) -> RWriteLock {
        RWriteLock {
            rt: self.rt.clone(),
            lock: self.rw.write_lock(),
            pinned: self.pinned,
        }
    }

    /// Both sides acting for a fixed owner id instead of the calling thread.
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> RReadWriteLock {
        RReadWriteLock {
            rt: self.rt.clone(),
            rw: self.rw.with_owner(owner),
            pinned: true,
        }
    }

    /// The lock's Redis key.
    pub fn key(&self) -> &str {
        self.rw.key()
    }
}
