//! The client: what a service holds on to — its id, configuration, lock handles, statistics
//! and shutdown. How one is built for each topology is in [`crate::connect`].

use std::sync::Arc;

use crate::config::Config;
use crate::conn::Connection;
use crate::core::release::Releaser;
use crate::core::Lock;
use crate::error::{Error, Result};
use crate::inner::ClientInner;

/// A connection to Redis for locks: one id, one pub/sub hub, one watchdog.
///
/// Equivalent to a `RedissonClient` for locking purposes: it gets a random UUID v4 id at
/// creation, which forms the first half of every hash field it writes
/// (`<client id>:<owner id>`). Cloning is cheap and shares everything. Background work (the
/// watchdog, pub/sub, releases queued by dropped guards) runs on the tokio runtime the client was
/// created in and stops when the last clone and the last guard are gone.
///
/// # Examples
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), redisson_lock::Error> {
/// let client = redisson_lock::Client::connect("redis://127.0.0.1:6379/").await?;
/// let lock = client.lock("lock:order:42")?;
/// let guard = lock.lock().await?;
/// // ... work on order 42 ...
/// guard.unlock().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<ClientInner>,
}

/// Counters that show what a client is doing (for diagnostics and tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientStats {
    /// (lock, owner) pairs the watchdog is renewing.
    pub renewing: usize,
    /// Unlock channels with at least one local waiter (or still being unsubscribed).
    pub channels: usize,
    /// Local waiters (tasks or threads blocked in an acquisition that has subscribed).
    pub waiters: usize,
    /// (lock, owner) entries in the hold table: live holds and operations in flight.
    pub holds: usize,
    /// Background work not finished yet: releases queued by dropped guards and cancelled
    /// unlocks, acquisitions being settled after their caller gave up, fair waiters leaving
    /// their queue.
    pub queued_releases: usize,
    /// Lock keys that subscribed waiters wait on, in the batched check for locks deleted
    /// without an unlock message (one call per 1,000 keys per
    /// [`poll_interval`](crate::Config::with_poll_interval)).
    pub watched_keys: usize,
    /// How a lost hold is learnt right now (tracking may start or stop with the connection).
    pub loss_signal: crate::LossSignal,
}

/// The constructor of every lock kind with one (`=> ctor` in
/// [`kinds::lock_kinds`](crate::kinds::lock_kinds)), and [`Client::any_lock`]: written once
/// here, as the blocking client's are.
macro_rules! constructors {
    ($($(#[$ld:meta])* $lock:ident, $(#[$gd:meta])* $guard:ident = $kind:ident $(=> $ctor:ident)?;)*) => {
        impl Client {
            $($(
                #[doc = concat!(
                    "A handle to the [`", stringify!($lock), "`](crate::", stringify!($lock),
                    ") `name` (its docs name Redisson's lock of that kind). Nothing is sent yet."
                )]
                ///
                /// # Errors
                ///
                /// [`Error::InvalidArgument`] when `name` (after the name mapper) is empty.
                ///
                /// # Examples
                ///
                /// ```no_run
                /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
                #[doc = concat!("let guard = client.", stringify!($ctor), "(\"lock:order:42\")?.lock().await?;")]
                #[doc = concat!("assert!(client.", stringify!($ctor), "(\"\").is_err());")]
                /// # drop(guard); Ok(()) }
                /// ```
                pub fn $ctor(&self, name: &str) -> Result<crate::$lock> {
                    self.lock_of(name)
                }
            )?)*

            /// A handle to the lock `name` of the kind `kind`, picked at run time (a
            /// configuration, a command-line flag): the constructor of that kind, boxed. A read
            /// or write lock is that side of [`read_write_lock`](Self::read_write_lock).
            ///
            /// # Errors
            ///
            /// [`Error::InvalidArgument`] when `name` (after the name mapper) is empty.
            ///
            /// # Examples
            ///
            /// ```no_run
            /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
            /// use redisson_lock::AnyKind;
            ///
            /// let kind: AnyKind = std::env::var("LOCK_KIND").as_deref().unwrap_or("fair").parse()?;
            /// let guard = client.any_lock(kind, "lock:job")?.lock().await?;
            /// # drop(guard); Ok(()) }
            /// ```
            pub fn any_lock(&self, kind: crate::AnyKind, name: &str) -> Result<Box<dyn crate::AnyLock>> {
                Ok(match kind {
                    $(crate::AnyKind::$kind => Box::new(self.lock_of::<crate::kinds::$kind>(name)?),)*
                })
            }
        }
    };
}

crate::kinds::lock_kinds!(constructors);

impl Client {
    /// The lock `name` of the kind `K`.
    pub(crate) fn lock_of<K: crate::kind::AcquireKind>(&self, name: &str) -> Result<Lock<K>> {
        Ok(Lock::new(self.inner.clone(), self.key(name)?, K::INSTANCE))
    }
}

impl Client {
    /// This client's id: a lowercase UUID v4, like Java's `UUID.toString()`.
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) {
    /// assert_eq!(client.id().len(), 36);
    /// # }
    /// ```
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// The configuration in use.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// A handle to the read-write lock `name` (Redisson's `getReadWriteLock(name)`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `name` (after the name mapper) is empty.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let rw = client.read_write_lock("lock:catalog")?;
    /// let reading = rw.read_lock().lock().await?;
    /// # drop(reading); Ok(()) }
    /// ```
    pub fn read_write_lock(&self, name: &str) -> Result<crate::RReadWriteLock> {
        Ok(crate::RReadWriteLock::new(self.inner.clone(), self.key(name)?))
    }

    /// A multi-lock over the reentrant locks `names` of this client, taken together (Redisson's
    /// `getMultiLock(getLock(a), getLock(b), ...)`). Members of other kinds or other clients (a
    /// RedLock over several Redis servers): [`RMultiLock::new`](crate::RMultiLock::new),
    /// [`RMultiLock::red_lock`](crate::RMultiLock::red_lock).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty list or an empty name.
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let both = client.multi_lock(&["account:1", "account:2"])?;
    /// let guard = both.lock().await?;
    /// guard.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub fn multi_lock(&self, names: &[&str]) -> Result<crate::RMultiLock> {
        let members = names
            .iter()
            .map(|n| self.lock(n).map(|l| crate::Member::from(&l)))
            .collect::<Result<Vec<_>>>()?;
        crate::RMultiLock::new(members)
    }

    /// A handle to the count-down latch `name` (Redisson's `getCountDownLatch(name)`). Nothing
    /// is sent yet.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `name` (after the name mapper) is empty, or, in a
    /// cluster (or behind an endpoint that enforces hash slots), when its channel would hash to
    /// another slot (a name with braces).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let latch = client.count_down_latch("latch:warmup")?;
    /// latch.try_set_count(1).await?;
    /// latch.count_down().await?;
    /// latch.wait().await?; // at zero: returns at once
    /// # Ok(()) }
    /// ```
    pub fn count_down_latch(&self, name: &str) -> Result<crate::CountDownLatch> {
        crate::CountDownLatch::new(self.inner.clone(), self.key(name)?)
    }

    /// A handle to the semaphore `name` (Redisson's `getSemaphore(name)`): permits counted in
    /// Redis, shared with Java services using Redisson's `RSemaphore` on the same name.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `name` (after the name
    /// mapper) is empty.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let sem = client.semaphore("sem:uploads")?;
    /// sem.try_set_permits(8).await?;
    /// let permit = sem.acquire(1).await?;
    /// // ...
    /// permit.release().await?;
    /// # Ok(()) }
    /// ```
    pub fn semaphore(&self, name: &str) -> Result<crate::Semaphore> {
        Ok(crate::Semaphore::new(self.inner.clone(), self.key(name)?))
    }

    /// A handle to the permit-expirable semaphore `name` (Redisson's
    /// `getPermitExpirableSemaphore(name)`): permits taken under ids, with leases, shared with
    /// Java services using Redisson's `RPermitExpirableSemaphore` on the same name.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `name` (after the name
    /// mapper) is empty.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let sem = client.permit_expirable_semaphore("sem:licenses")?;
    /// sem.try_set_permits(5).await?;
    /// let license = sem.acquire().await?;
    /// // ... the work ...
    /// license.release().await?;
    /// # Ok(()) }
    /// ```
    pub fn permit_expirable_semaphore(&self, name: &str) -> Result<crate::PermitExpirableSemaphore> {
        Ok(crate::PermitExpirableSemaphore::new(
            self.inner.clone(),
            self.key(name)?,
        ))
    }

    fn key(&self, name: &str) -> Result<String> {
        crate::name::lock_key(&self.inner.config.name_mapper, name)
    }

    /// What the client is doing right now.
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) {
    /// println!("renewing {} locks", client.stats().renewing);
    /// # }
    /// ```
    pub fn stats(&self) -> ClientStats {
        ClientStats {
            renewing: self.inner.holds.renewing(),
            channels: self.inner.hub.channel_count(),
            waiters: self.inner.hub.waiter_count(),
            holds: self.inner.holds.entries(),
            queued_releases: self.inner.background.pending(),
            watched_keys: self.inner.gone_keys.len(),
            loss_signal: self.inner.invalidated.signal(),
        }
    }

    /// Shuts the client down gracefully, so that a service that exits leaves nothing behind in
    /// Redis: no lock to expire by its TTL, no fair-queue entry, no acquire record.
    ///
    /// 1. Acquisitions stop: new ones (also on clones of this client) fail with
    ///    [`Error::Shutdown`] without sending anything; waiting ones end with `Error::Shutdown`
    ///    at once, and those with a request in Redis within one command timeout, never with the
    ///    lock.
    /// 2. Every hold still live ends: its guards report
    ///    [`LostReason::Shutdown`](crate::LostReason::Shutdown) through `lost()` (so `run` bodies
    ///    stop) and their `unlock` returns [`Error::NotHeld`] without a round trip.
    /// 3. It waits until nothing of the client is in flight and its background work is done:
    ///    those holds are released (waiters, Java or Rust, are woken); so are the releases queued
    ///    by dropped guards and cancelled unlocks; every acquisition that was in Redis is settled,
    ///    and whatever Redis granted it released; fair waiters have left their queues; unlock
    ///    latches and acquire records are deleted.
    ///
    /// Call it after the work under the locks has stopped (or accept that it stops here). It
    /// returns as soon as all that is done (a round trip or two when Redis answers), within the
    /// longer of the [settle window](crate::Config::settle_window) and the watchdog timeout
    /// (30 s with the defaults) when it does not; calling it again does nothing more.
    ///
    /// # Errors
    ///
    /// [`Error::Unreleased`] with the keys of the locks it could not release (Redis unreachable
    /// or too slow until the bound): whatever Redis holds of them for this client expires with
    /// its TTL.
    ///
    /// # Cancel safety
    ///
    /// The work runs in the client's background tasks; dropping the future does not stop it,
    /// but no longer waits for it.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let guard = client.lock("lock:job")?.lock().await?;
    /// drop(guard); // queued release
    /// client.shutdown().await?; // sent before we exit
    /// # Ok(()) }
    /// ```
    pub async fn shutdown(&self) -> Result<()> {
        let inner = &self.inner;
        inner.background.close();
        let remaining = inner.holds.close();
        inner.invalidated.stop(); // the loss watch only reads: nothing of it to wait for
        tracing::info!(client_id = %inner.id, holds = remaining.len(), background = inner.background.pending(), "shutting down: releasing every hold");
        for r in remaining {
            let key = r.key.clone();
            let releaser = Releaser::new(inner.clone(), r.key.clone(), r.kind);
            let job: crate::background::Job = Box::new(move || {
                Box::pin(async move {
                    match releaser.release_all(&r.field).await {
                        Ok(_) | Err(Error::NotHeld { .. }) => Ok(()),
                        Err(e) => {
                            tracing::warn!(key = %r.key, field = %r.field, error = %e, "shutdown could not release a hold; it expires with its TTL");
                            Err(e)
                        }
                    }
                })
            });
            if !inner.background.push(&key, job) {
                return Err(Error::Shutdown); // the client's runtime has stopped
            }
        }
        let work = async {
            // turns: requests in flight or being settled; background: their follow-ups (each
            // queued before the turn it holds is given back), releases, give-ups
            loop {
                inner.holds.wait_idle().await;
                inner.background.flush().await;
                if inner.holds.is_idle() && inner.background.is_idle() {
                    break;
                }
            }
            inner.latches.flush().await;
        };
        let bound = inner.config.settling();
        let finished = tokio::time::timeout(bound, work).await.is_ok();
        let failures = inner.background.take_failures();
        let mut cause = failures.first().map(|(_, e)| e.clone());
        let mut keys: Vec<String> = failures.iter().map(|(k, _)| k.to_string()).collect();
        if !finished {
            cause = Some(format!("not done within {bound:?}"));
            keys.extend(inner.background.open_keys().iter().map(|k| k.to_string()));
            keys.extend(inner.holds.busy_keys().iter().map(|k| k.to_string()));
        }
        keys.sort();
        keys.dedup();
        match cause {
            Some(cause) if !keys.is_empty() => {
                tracing::warn!(client_id = %inner.id, ?keys, %cause, "shutdown left locks unreleased");
                Err(Error::Unreleased { keys, cause })
            }
            _ => {
                tracing::info!(client_id = %inner.id, "shut down: nothing left in Redis");
                Ok(())
            }
        }
    }

    /// The command connection (for application commands next to the locks).
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redis::RedisResult<()> {
    /// let mut conn = client.connection();
    /// let _: () = redis::cmd("PING").query_async(&mut conn).await?;
    /// # Ok(()) }
    /// ```
    pub fn connection(&self) -> Connection {
        self.inner.conn.clone()
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("id", &self.inner.id)
            .field("conn", &self.inner.conn)
            .field("publish", &self.inner.publish_cmd)
            .finish()
    }
}
