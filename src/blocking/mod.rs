//! A blocking facade for code without an async runtime.
//!
//! [`Client`] owns a small tokio runtime (one worker thread) that runs the watchdog, pub/sub and
//! queued releases; every method is `block_on` of its async twin.
//!
//! **Owners**: the default owner in blocking code is the calling OS thread
//! ([`OwnerId::current_thread`](crate::OwnerId::current_thread)), as in Java: a nested `lock()`
//! on one thread re-enters. That is safe here because a thread makes one call at a time (unlike
//! futures of one async task, which is why the async API gives every acquisition a fresh owner
//! instead).
//!
//! # Panics
//!
//! Every method that talks to Redis (`connect`, `lock`, `try_lock*`, `unlock`, `run`,
//! `force_unlock`, `is_locked`, `is_held*`, `hold_count`, `remain_time_to_live`, `downgrade`,
//! `reenter`, `wait_lost`) blocks the calling thread and **panics when called from async code**
//! (a thread that drives a tokio runtime's tasks, where `Runtime::block_on` refuses too), with a
//! message naming the fix: use the async API there, or `tokio::task::spawn_blocking`, where the
//! blocking API works.
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

mod any;
mod count_down_latch;
#[cfg(feature = "group-lock")]
mod group_lock;
mod lock;
#[cfg(feature = "map-entry")]
mod map_entry;
mod multi;
mod semaphore;

use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::Config;

/// The five acquisitions of a blocking handle (`lock`, `lock_with_lease`, `try_lock`,
/// `try_lock_for`, `try_lock_with_lease`), written once for locks and multi-locks: each is its
/// async twin run on the handle's runtime (`self.rt`) for the handle's owner (`self.owned()`),
/// the hold wrapped in the blocking guard (`self.guard(..)`).
macro_rules! acquisitions {
    ($twin:literal, $guard:ty) => {
        #[doc = concat!("Blocking [`", $twin, "::lock`]: blocks the calling thread until the lock is held.")]
        pub fn lock(&self) -> Result<$guard> {
            let held = self.rt.block_on(self.owned().lock())?;
            Ok(self.guard(held))
        }

        #[doc = concat!("Blocking [`", $twin, "::lock_with_lease`].")]
        pub fn lock_with_lease(&self, lease: Duration) -> Result<$guard> {
            let held = self.rt.block_on(self.owned().lock_with_lease(lease))?;
            Ok(self.guard(held))
        }

        #[doc = concat!("Blocking [`", $twin, "::try_lock`]: one attempt.")]
        pub fn try_lock(&self) -> Result<Option<$guard>> {
            let held = self.rt.block_on(self.owned().try_lock())?;
            Ok(held.map(|h| self.guard(h)))
        }

        #[doc = concat!("Blocking [`", $twin, "::try_lock_for`]: returns within `wait` plus one command timeout.")]
        pub fn try_lock_for(&self, wait: Duration) -> Result<Option<$guard>> {
            let held = self.rt.block_on(self.owned().try_lock_for(wait))?;
            Ok(held.map(|h| self.guard(h)))
        }

        #[doc = concat!("Blocking [`", $twin, "::try_lock_with_lease`].")]
        pub fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<$guard>> {
            let held = self.rt.block_on(self.owned().try_lock_with_lease(wait, lease))?;
            Ok(held.map(|h| self.guard(h)))
        }
    };
}
pub(crate) use acquisitions;

/// The calls of a thread-owned handle that act for its owner (the pinned one, else the calling
/// thread: `self.owned()`): who that is, its field, `run`, and the blocking `unlock`,
/// `is_held` and `hold_count` of that owner. `$twin` names the async handle's type, for the
/// docs.
macro_rules! owner_calls {
    ($twin:literal) => {
        #[doc = concat!("The owner this handle acts for: the pinned one, else the calling thread (so never `None` here; the type is [`", $twin, "::owner`]'s).")]
        pub fn owner(&self) -> Option<OwnerId> {
            self.owned().owner()
        }

        #[doc = concat!("The hash field this handle's owner writes ([`", $twin, "::field`]; never `None` here).")]
        pub fn field(&self) -> Option<String> {
            self.owned().field()
        }

        #[doc = concat!("Runs `body` while holding the lock (watchdog mode) and releases it afterwards, also when `body` panics (the panic resumes after the release). Unlike [`", $twin, "::run`], a blocking `body` cannot be stopped from outside when the lock is lost: check [`Guard::is_held`](super::Guard::is_held) in long work, or take the guard yourself.")]
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

        #[doc = concat!("Blocking [`", $twin, "::unlock`] for this handle's owner.")]
        pub fn unlock(&self) -> Result<Unlocked> {
            self.rt.block_on(self.owned().unlock())
        }

        #[doc = concat!("Blocking [`", $twin, "::is_held`] for this handle's owner.")]
        pub fn is_held(&self) -> Result<bool> {
            self.rt.block_on(self.owned().is_held())
        }

        #[doc = concat!("Blocking [`", $twin, "::hold_count`] for this handle's owner.")]
        pub fn hold_count(&self) -> Result<u64> {
            self.rt.block_on(self.owned().hold_count())
        }
    };
}
pub(crate) use owner_calls;

/// Blocking twins of a handle's async methods: each listed method is `block_on` of its async
/// twin on the handle's runtime (`self.rt`), called on the async handle in the field `$inner`
/// (`$twin` names its type, for the docs). A `fn` returns what its twin returns; a
/// `guard fn` wraps the twin's guard in the blocking one (`self.guard(..)`), and a
/// `maybe_guard fn` the guard it may return.
macro_rules! twins {
    ($twin:literal, $inner:ident;
     $(fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*
     $(guard fn $gname:ident($($garg:ident: $gty:ty),*) -> $guard:ty;)*
     $(maybe_guard fn $mname:ident($($marg:ident: $mty:ty),*) -> $mguard:ty;)*
    ) => {
        $(
            #[doc = concat!("Blocking [`", $twin, "::", stringify!($name), "`].")]
            pub fn $name(&self, $($arg: $ty),*) -> Result<$ret> {
                self.rt.block_on(self.$inner.$name($($arg),*))
            }
        )*
        $(
            #[doc = concat!("Blocking [`", $twin, "::", stringify!($gname), "`]: blocks the calling thread until it is granted.")]
            pub fn $gname(&self, $($garg: $gty),*) -> Result<$guard> {
                let held = self.rt.block_on(self.$inner.$gname($($garg),*))?;
                Ok(self.guard(held))
            }
        )*
        $(
            #[doc = concat!("Blocking [`", $twin, "::", stringify!($mname), "`].")]
            pub fn $mname(&self, $($marg: $mty),*) -> Result<Option<$mguard>> {
                let held = self.rt.block_on(self.$inner.$mname($($marg),*))?;
                Ok(held.map(|h| self.guard(h)))
            }
        )*
    };
}
pub(crate) use twins;

pub use any::{AnyGuard, AnyLock};
pub use count_down_latch::CountDownLatch;
#[cfg(feature = "group-lock")]
pub use group_lock::{GroupGuard, RGroupLock};
pub use lock::{
    FairGuard, FencedGuard, Guard, Lock, LockGuard, NonReentrantFairGuard, NonReentrantGuard, RFairLock,
    RFencedLock, RLock, RNonReentrantFairLock, RNonReentrantLock, RReadLock, RReadWriteLock, RSpinLock,
    RWriteLock, ReadGuard, SpinGuard, WriteGuard,
};
#[cfg(feature = "map-entry")]
pub use map_entry::MapEntry;
pub use multi::{Member, MultiGuard, RMultiLock};
pub use semaphore::{PermitExpirableSemaphore, PermitGuard, Semaphore, SemaphoreGuard};

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
        let rt = self
            .rt
            .as_ref()
            .expect("the runtime is present until the last handle is dropped");
        block_on(rt, f).unwrap_or_else(|p| rethrow(p))
    }
}

/// Panics again with `p`: with [`INSIDE_RUNTIME`] as the message when that is what it carries
/// (so the panic hook prints it), else as it was.
fn rethrow(p: Box<dyn std::any::Any + Send>) -> ! {
    if p.downcast_ref::<&str>() == Some(&INSIDE_RUNTIME) {
        panic!("{INSIDE_RUNTIME}");
    }
    std::panic::resume_unwind(p)
}

/// What a blocking call made on a thread that drives async tasks panics with.
const INSIDE_RUNTIME: &str = "redisson_lock::blocking was called from async code (a thread that \
     drives a tokio runtime's tasks), where blocking would stall every task of that thread: use the \
     async API there (redisson_lock::Client), or run the blocking call in \
     tokio::task::spawn_blocking";

/// `rt.block_on(f)`; a refusal to block because the calling thread drives a runtime's tasks comes
/// back as a panic payload naming the fix (the caller panics with it once it has put away what
/// must not be dropped on that thread), any other panic as it was.
fn block_on<F: std::future::Future>(
    rt: &tokio::runtime::Runtime,
    f: F,
) -> std::result::Result<F::Output, Box<dyn std::any::Any + Send>> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt.block_on(f))).map_err(|p| {
        let text = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        if text.contains("from within a runtime") {
            Box::new(INSIDE_RUNTIME) as Box<dyn std::any::Any + Send>
        } else {
            p
        }
    })
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

impl std::fmt::Debug for Rt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Runtime")
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
    /// let config = redisson_lock::Config::default().with_lock_watchdog_timeout(Duration::from_secs(10));
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
        let client = match block_on(&rt, crate::Client::builder().url(url).config(config).build()) {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                rt.shutdown_background();
                return Err(e);
            }
            Err(p) => {
                // a runtime may not be dropped on a thread that drives one either
                rt.shutdown_background();
                rethrow(p)
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

    /// [`crate::Client::config`].
    pub fn config(&self) -> &crate::Config {
        self.rt.client.config()
    }

    /// The async client behind this one (sharing its id, watchdog and hub). It stops working when
    /// the last blocking handle is dropped (its runtime is gone).
    pub fn as_async(&self) -> &crate::Client {
        &self.rt.client
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

/// The blocking client's constructor of each kind that has one, generated from the crate's one
/// list of kinds: the blocking twin of the async client's, the owner being the calling thread.
macro_rules! constructors {
    ($($(#[$ld:meta])* $lock:ident, $(#[$gd:meta])* $guard:ident = $kind:ident $(=> $ctor:ident)?;)*) => {
        impl Client {
            $($(
                #[doc = concat!(
                    "A handle to the [`", stringify!($lock), "`] `name`: the blocking twin of [`crate::Client::",
                    stringify!($ctor), "`], owned by the calling thread."
                )]
                ///
                /// ```no_run
                /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
                #[doc = concat!("let guard = client.", stringify!($ctor), "(\"lock:order:42\")?.lock()?;")]
                /// # Ok::<_, redisson_lock::Error>(())
                /// ```
                pub fn $ctor(&self, name: &str) -> Result<$lock> {
                    Ok(Lock::new(self.rt.clone(), self.rt.client.$ctor(name)?))
                }
            )?)*

            /// A handle to the lock `name` of the kind `kind`, picked at run time: the blocking
            /// twin of [`crate::Client::any_lock`], owned by the calling thread.
            ///
            /// ```no_run
            /// # let client = redisson_lock::blocking::Client::connect("redis://127.0.0.1/")?;
            /// let guard = client.any_lock(redisson_lock::AnyKind::Spin, "lock:job")?.lock()?;
            /// # Ok::<_, redisson_lock::Error>(())
            /// ```
            pub fn any_lock(&self, kind: crate::AnyKind, name: &str) -> Result<Box<dyn AnyLock>> {
                Ok(match kind {
                    $(crate::AnyKind::$kind => Box::new(Lock::new(
                        self.rt.clone(),
                        self.rt.client.lock_of::<crate::kinds::$kind>(name)?,
                    )),)*
                })
            }
        }
    };
}

crate::kinds::lock_kinds!(constructors);
