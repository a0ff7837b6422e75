//! The operations every lock handle offers, written once over the seam for every kind: the
//! public API of [`Lock<K>`](crate::Lock) (`RLock`, `RFairLock`, ... are its aliases).

use std::future::Future;
use std::time::Duration;

use futures::FutureExt;

use crate::core::release::Releaser;
use crate::core::{Guard, Lock};
use crate::error::{Error, Result};
use crate::kind::{AcquireKind, Query};
use crate::owner::{OwnerId, OwnerSel};
use crate::Unlocked;

/// What a lock's remaining time to live is (Redisson's `remainTimeToLive`: -2 / -1 / ms).
///
/// ```no_run
/// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
/// use redisson_lock::Ttl;
/// match lock.remain_time_to_live().await? {
///     Ttl::NotLocked => println!("free"),
///     Ttl::NoExpiry => println!("a key without TTL (not written by a lock client)"),
///     Ttl::Expires(d) => println!("expires in {d:?} unless renewed"),
///     _ => {}
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ttl {
    /// Nobody holds the lock (Redisson: `-2`).
    NotLocked,
    /// The key exists without a TTL (Redisson: `-1`); not written by any lock client.
    NoExpiry,
    /// The lock expires in this long unless renewed.
    Expires(Duration),
}

impl Ttl {
    pub(crate) fn from_pttl(ms: i64) -> Result<Ttl> {
        Ok(match ms {
            -2 => Ttl::NotLocked,
            -1 => Ttl::NoExpiry,
            ms if ms >= 0 => Ttl::Expires(Duration::from_millis(ms as u64)),
            other => return Err(Error::Protocol(format!("PTTL replied {other}"))),
        })
    }
}

impl<K: AcquireKind> Lock<K> {
    /// The lock's Redis key (the name after the name mapper).
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RLock) { println!("{}", lock.key()); }
    /// ```
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The same lock acting for a fixed owner id, like Redisson's `lock(threadId)` overloads:
    /// its acquisitions re-enter each other (for the kinds that allow it), and the handle-level
    /// [`unlock`](Self::unlock), [`is_held`](Self::is_held) and [`hold_count`](Self::hold_count)
    /// act for it.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let as_worker_7 = lock.with_owner(7);
    /// let guard = as_worker_7.lock().await?;
    /// assert_eq!(guard.owner().get(), 7);
    /// # Ok(()) }
    /// ```
    pub fn with_owner(&self, owner: impl Into<OwnerId>) -> Self {
        let mut core = self.clone();
        core.owner = OwnerSel::Pinned(owner.into());
        core
    }

    /// The owner this handle acts for: the pinned one, else the enclosing
    /// [`OwnerId::scope`]; `None` when each acquisition gets a fresh owner (the default).
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RLock) { assert_eq!(lock.with_owner(3).owner().map(|o| o.get()), Some(3)); }
    /// ```
    pub fn owner(&self) -> Option<OwnerId> {
        self.owner.fixed()
    }

    /// The hash field this handle's owner writes (`<client id>:<owner id>`, plus `:write` for
    /// the write lock), when it has one (see [`owner`](Self::owner)).
    ///
    /// ```no_run
    /// # fn demo(lock: redisson_lock::RLock) { println!("{:?}", lock.with_owner(3).field()); }
    /// ```
    pub fn field(&self) -> Option<String> {
        self.owner.fixed().map(|o| self.field_of(o).to_string())
    }

    /// Acquires the lock, waiting as long as it takes, in watchdog mode (Redisson `lock()`): the
    /// key gets the watchdog timeout (30 s) as TTL and is renewed every timeout/3 while the
    /// guard lives.
    ///
    /// The hold belongs to a fresh owner (unless the handle has one: [`with_owner`](Self::with_owner),
    /// [`OwnerId::scope`]), so a second `lock()` waits for the first guard even in the same
    /// task, like `tokio::sync::Mutex`; take another hold of the same owner with
    /// [`Guard::reenter`].
    ///
    /// Waiting: the waiter listens on the lock's channel (one subscription shared by all local
    /// waiters) and re-tries on every unlock message and when the holder's TTL runs out (a spin
    /// lock polls with its back-off instead; a fair lock queues the waiter). A connection error
    /// or timeout is retried after [`Config::with_retry_interval`](crate::Config::with_retry_interval), at
    /// most [`Config::with_retry_attempts`](crate::Config::with_retry_attempts) times in a row; then the
    /// error is returned. An attempt whose reply was lost is settled with Redis, never re-sent.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future is safe at any point: a waiter just leaves (a fair waiter leaves the
    /// queue); if Redis granted the lock in the attempt in flight — also long after, once Redis
    /// answers — that hold is released in the background and never renewed.
    ///
    /// # Errors
    ///
    /// [`Error::WrongType`](crate::Error::WrongType) when the key holds another Redis type;
    /// [`Error::AlreadyHeld`](crate::Error::AlreadyHeld) from a non-reentrant kind whose owner
    /// already holds it; [`Error::WouldDeadlock`](crate::Error::WouldDeadlock) from a write lock
    /// asked for by an owner that reads; [`Error::Shutdown`](crate::Error::Shutdown) after (or
    /// during) [`Client::shutdown`](crate::Client::shutdown); the last connection error after the
    /// retries.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let guard = lock.lock().await?;
    /// guard.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn lock(&self) -> Result<Guard<K>> {
        self.lock_opt(None).await
    }

    /// Acquires the lock for `lease`, without watchdog (Redisson `lock(leaseTime, unit)`): the
    /// key expires after `lease` unless released, even if the work is not done. Waits as long as
    /// it takes.
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a lease under 1 ms or over
    /// [`MAX_DURATION`](crate::MAX_DURATION) (nothing is sent); otherwise as [`lock`](Self::lock).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let guard = lock.lock_with_lease(Duration::from_secs(10)).await?;
    /// assert_eq!(guard.lease(), Some(Duration::from_secs(10)));
    /// # Ok(()) }
    /// ```
    pub async fn lock_with_lease(&self, lease: Duration) -> Result<Guard<K>> {
        self.lock_opt(Some(lease)).await
    }

    /// One attempt, no waiting, watchdog mode (Redisson `tryLock()`): `Ok(None)` when someone
    /// else holds the lock (a fair lock's attempt does not queue).
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// match lock.try_lock().await? {
    ///     Some(guard) => drop(guard.unlock().await?),
    ///     None => println!("busy"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn try_lock(&self) -> Result<Option<Guard<K>>> {
        self.try_lock_opt(Duration::ZERO, None).await
    }

    /// Waits up to `wait`, watchdog mode (Redisson `tryLock(waitTime, unit)`).
    ///
    /// Returns within `wait` plus one command timeout, also while Redis is slow or unreachable
    /// (then with the last connection error instead of `Ok(None)`, possibly earlier, once
    /// [`Config::with_retry_attempts`](crate::Config::with_retry_attempts) attempts in a row failed). A
    /// fair waiter that gives up leaves the queue within that bound, or in the background when
    /// Redis is too slow for it.
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let guard = lock.try_lock_for(Duration::from_millis(500)).await?;
    /// println!("acquired: {}", guard.is_some());
    /// # Ok(()) }
    /// ```
    pub async fn try_lock_for(&self, wait: Duration) -> Result<Option<Guard<K>>> {
        self.try_lock_opt(wait, None).await
    }

    /// Waits up to `wait` and holds for `lease` without watchdog
    /// (Redisson `tryLock(waitTime, leaseTime, unit)`).
    ///
    /// # Cancel safety
    ///
    /// As for [`lock`](Self::lock).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// use std::time::Duration;
    /// let guard = lock.try_lock_with_lease(Duration::from_secs(1), Duration::from_secs(30)).await?;
    /// # let _ = guard; Ok(()) }
    /// ```
    pub async fn try_lock_with_lease(&self, wait: Duration, lease: Duration) -> Result<Option<Guard<K>>> {
        self.try_lock_opt(wait, Some(lease)).await
    }

    /// Waits as long as it takes; `lease`: `None` = watchdog mode.
    pub(crate) async fn lock_opt(&self, lease: Option<Duration>) -> Result<Guard<K>> {
        self.acquire(None, lease)
            .await?
            .ok_or_else(|| Error::Protocol("an unbounded wait ended without the lock".into()))
    }

    /// Waits up to `wait` (`ZERO`: one attempt); `lease`: `None` = watchdog mode.
    pub(crate) async fn try_lock_opt(
        &self,
        wait: Duration,
        lease: Option<Duration>,
    ) -> Result<Option<Guard<K>>> {
        self.acquire(Some(wait), lease).await
    }

    /// Runs `body` while holding the lock (watchdog mode) and releases it afterwards, also when
    /// `body` panics (the panic resumes after the release). Two `run`s on one lock exclude each
    /// other, also when joined in one task.
    ///
    /// If the lock is lost while `body` runs (renewal finds it gone, or cannot renew before the
    /// lease deadline), `body` is dropped at its next await point and
    /// [`Error::Lost`](crate::Error::Lost) is returned: work does not go on unprotected.
    ///
    /// # Cancel safety
    ///
    /// Dropping the returned future drops `body` and releases the lock in the background.
    ///
    /// # Errors
    ///
    /// Acquisition errors; `Error::Lost`; the release's error (e.g. `Error::NotHeld` when the
    /// lease ran out unnoticed), in which case `body`'s output is dropped.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let total = lock.run(async { 40 + 2 }).await?;
    /// assert_eq!(total, 42);
    /// # Ok(()) }
    /// ```
    pub async fn run<F: Future>(&self, body: F) -> Result<F::Output> {
        let guard = self.lock_opt(None).await?;
        let lost = guard.lost();
        let outcome = tokio::select! {
            biased;
            out = std::panic::AssertUnwindSafe(body).catch_unwind() => Ok(out),
            reason = lost => Err(reason),
        };
        match outcome {
            Ok(Ok(value)) => {
                guard.unlock().await?;
                Ok(value)
            }
            Ok(Err(panic)) => {
                if let Err(e) = guard.unlock().await {
                    tracing::warn!(key = %self.key, error = %e, "release after a panic failed");
                }
                std::panic::resume_unwind(panic)
            }
            Err(reason) => {
                let err = Error::Lost {
                    key: guard.key().to_owned(),
                    field: guard.field().to_owned(),
                    reason,
                };
                drop(guard);
                Err(err)
            }
        }
    }

    /// Releases one hold of this handle's owner without a guard (Redisson `unlock()`), e.g. a
    /// hold whose guard was forgotten: the count goes down by one; the last hold deletes the
    /// owner's field (the key when nothing is left) and wakes waiters. The handle needs an owner
    /// ([`with_owner`](Self::with_owner) or [`OwnerId::scope`]).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future does not cancel the release: the client's background work finishes it.
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`](crate::Error::NotHeld) when the owner holds nothing (Redis is then
    /// unchanged); [`Error::NoOwner`](crate::Error::NoOwner) when the handle has no owner.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let mine = lock.with_owner(7);
    /// mine.lock().await?.forget(); // Java style: hold without a guard
    /// mine.unlock().await?;
    /// # Ok(()) }
    /// ```
    pub async fn unlock(&self) -> Result<Unlocked> {
        let field = self.field_of(self.fixed_owner()?);
        Releaser::of(self).release_any(&field).await
    }

    /// Deletes the lock whoever holds it (Redisson `forceUnlock()`; for a read or write lock,
    /// that side only) and publishes the unlock message of its kind: waiters on the lock's
    /// channel are woken; a fair lock wakes only the head of its queue (on that waiter's own
    /// channel; the others keep their turn); a spin lock publishes nothing, its waiters find it
    /// free at their next poll. Returns whether there was a lock to delete. Guards of this
    /// client on this lock report [`LostReason::ForceUnlocked`](crate::LostReason::ForceUnlocked);
    /// other clients learn it like any other loss: with client tracking about one round trip
    /// later, otherwise at their next renewal (a Redisson watchdog then stops renewing). A key
    /// that is not a lock is refused with [`Error::WrongType`](crate::Error::WrongType) and kept.
    ///
    /// **Use with care:** the holder may still be working under the lock.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let was_locked = lock.force_unlock().await?;
    /// # let _ = was_locked; Ok(()) }
    /// ```
    pub async fn force_unlock(&self) -> Result<bool> {
        Releaser::of(self).force().await
    }

    /// Whether anyone holds the lock (Redisson `isLocked()`: `EXISTS` of the key; for a read
    /// lock, whether anyone reads; for a write lock, whether anyone writes).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// println!("{}", lock.is_locked().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_locked(&self) -> Result<bool> {
        let v: redis::Value = match self.kind.is_locked(&self.key) {
            Query::Cmd(cmd) => self.query(&cmd).await?,
            Query::Script(inv) => {
                let cfg = &self.client.config;
                crate::script::run_read(&self.client.conn, cfg.command_timeout, &self.key, &inv).await?
            }
        };
        self.kind.read_is_locked(&v)
    }

    /// Whether this handle's owner holds the lock (Redisson `isHeldByCurrentThread()`:
    /// `HEXISTS`). The handle needs an owner; a guard knows without asking Redis:
    /// [`Guard::is_held`].
    ///
    /// # Errors
    ///
    /// [`Error::NoOwner`](crate::Error::NoOwner) when the handle has no owner.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let mine = lock.with_owner(7);
    /// let guard = mine.lock().await?;
    /// assert!(mine.is_held().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held(&self) -> Result<bool> {
        self.is_held_by(self.fixed_owner()?).await
    }

    /// Whether `owner` of this client holds the lock (Redisson `isHeldByThread(id)`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// assert!(!lock.is_held_by(12345).await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_held_by(&self, owner: impl Into<OwnerId>) -> Result<bool> {
        let field = self.field_of(owner.into());
        let n: i64 = self
            .query(redis::cmd("HEXISTS").arg(&*self.key).arg(&*field))
            .await?;
        Ok(n == 1)
    }

    /// How many times this handle's owner holds the lock (Redisson `getHoldCount()`: `HGET`); 0
    /// if not. The handle needs an owner, as for [`is_held`](Self::is_held).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// let mine = lock.with_owner(7);
    /// let a = mine.lock().await?;
    /// let b = mine.lock().await?; // the same owner: re-entry
    /// assert_eq!(mine.hold_count().await?, 2);
    /// # Ok(()) }
    /// ```
    pub async fn hold_count(&self) -> Result<u64> {
        let field = self.field_of(self.fixed_owner()?);
        let n: Option<u64> = self
            .query(redis::cmd("HGET").arg(&*self.key).arg(&*field))
            .await?;
        Ok(n.unwrap_or(0))
    }

    /// The lock's remaining time to live (Redisson `remainTimeToLive()`: `PTTL`).
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// use redisson_lock::Ttl;
    /// assert_eq!(lock.remain_time_to_live().await?, Ttl::NotLocked);
    /// # Ok(()) }
    /// ```
    pub async fn remain_time_to_live(&self) -> Result<Ttl> {
        let ms: i64 = self.query(redis::cmd("PTTL").arg(&*self.key)).await?;
        Ttl::from_pttl(ms)
    }

    /// The same as [`remain_time_to_live`](Self::remain_time_to_live), under its Rust name.
    ///
    /// ```no_run
    /// # async fn demo(lock: redisson_lock::RLock) -> redisson_lock::Result<()> {
    /// println!("{:?}", lock.ttl().await?);
    /// # Ok(()) }
    /// ```
    pub async fn ttl(&self) -> Result<Ttl> {
        self.remain_time_to_live().await
    }
}

impl<K: AcquireKind> std::fmt::Debug for Lock<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lock")
            .field("kind", &self.kind.label())
            .field("key", &&*self.key)
            .field("owner", &self.owner)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_from_pttl() {
        assert_eq!(Ttl::from_pttl(-2).unwrap(), Ttl::NotLocked);
        assert_eq!(Ttl::from_pttl(-1).unwrap(), Ttl::NoExpiry);
        assert_eq!(
            Ttl::from_pttl(1500).unwrap(),
            Ttl::Expires(Duration::from_millis(1500))
        );
        assert!(Ttl::from_pttl(-7).is_err());
    }
}
