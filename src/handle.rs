//! The public surface shared by every lock handle and guard type, written once.
//!
//! Each lock type is a concrete, separately documented struct (`RLock`, `RReadLock`,
//! `RWriteLock`, ...) holding a `LockCore`; its guard holds a `Held`. These macros give them the
//! same methods, with the same semantics and cancel-safety notes.

/// Methods of a lock handle type `$T` (a struct with a `core: LockCore` field) whose guards are `$G`.
macro_rules! lock_handle_methods {
    ($T:ident, $G:ident) => {
        impl $T {
            /// The lock's Redis key (the name after the name mapper).
            ///
            /// # Examples
            ///
            /// ```no_run
            #[doc = concat!("# fn demo(lock: redisson_lock::", stringify!($T), ") {")]
            /// println!("{}", lock.key());
            /// # }
            /// ```
            pub fn key(&self) -> &str {
                &self.core.key
            }

            /// The same lock acting for a fixed owner id, like Redisson's `lock(threadId)`
            /// overloads (see [`OwnerId`](crate::OwnerId) for how to choose).
            ///
            /// # Examples
            ///
            /// ```no_run
            #[doc = concat!("# async fn demo(lock: redisson_lock::", stringify!($T), ") -> redisson_lock::Result<()> {")]
            /// let as_worker_7 = lock.with_owner(7);
            /// let guard = as_worker_7.lock().await?;
            /// assert_eq!(guard.owner().get(), 7);
            /// # Ok(()) }
            /// ```
            pub fn with_owner(&self, owner: impl Into<$crate::OwnerId>) -> $T {
                let mut core = self.core.clone();
                core.owner = $crate::owner::OwnerSel::Pinned(owner.into());
                $T { core }
            }

            /// The owner this handle acts for: its pinned owner ([`with_owner`](Self::with_owner)),
            /// else the enclosing [`OwnerId::scope`](crate::OwnerId::scope); `None` when each
            /// acquisition gets a fresh owner (the default).
            pub fn owner(&self) -> Option<$crate::OwnerId> {
                self.core.owner.fixed()
            }

            /// The hash field this handle's owner writes, when it has one (see [`owner`](Self::owner)).
            pub fn field(&self) -> Option<String> {
                self.owner().map(|o| self.core.field_of(o))
            }

            /// Acquires the lock, waiting as long as it takes; the watchdog keeps it alive until
            /// released (Redisson `lock()`).
            ///
            /// The hold belongs to a fresh owner (unless the handle has one: [`with_owner`](Self::with_owner),
            /// [`OwnerId::scope`](crate::OwnerId::scope)), so a second `lock()` on the same lock
            /// waits for the first guard even in the same task, like `tokio::sync::Mutex`; take
            /// another hold of the same owner with the guard's `reenter()`.
            ///
            /// Waiting: after the first failed attempt the caller subscribes to the lock's
            /// channel (one subscription shared by all local waiters), then re-tries on every
            /// unlock message and after `min(holder's TTL, poll interval)`. A connection error or
            /// timeout is retried after [`Config::retry_interval`](crate::Config::retry_interval),
            /// at most [`Config::retry_attempts`](crate::Config::retry_attempts) times in a row;
            /// then the error is returned (so `lock()` does not wait forever for a Redis that is
            /// down). An attempt whose reply was lost is settled with Redis, never re-sent.
            ///
            /// # Cancel safety
            ///
            /// Dropping the future is safe at any point: a waiter just leaves; if Redis granted
            /// the lock in the attempt in flight, that hold is released in the background and
            /// never renewed.
            ///
            /// # Errors
            ///
            /// [`Error::WrongType`](crate::Error::WrongType) when the key holds another Redis
            /// type; [`Error::Shutdown`](crate::Error::Shutdown) after
            /// [`Client::shutdown`](crate::Client::shutdown); the last connection error after
            /// the retries; other non-transient errors.
            ///
            /// # Examples
            ///
            /// ```no_run
            #[doc = concat!("# async fn demo(lock: redisson_lock::", stringify!($T), ") -> redisson_lock::Result<()> {")]
            /// let guard = lock.lock().await?;
            /// guard.unlock().await?;
            /// # Ok(()) }
            /// ```
            pub async fn lock(&self) -> $crate::Result<$G> {
                let held = self.core.acquire(None, None).await?;
                held.map($G::new).ok_or($crate::Error::Protocol("an unbounded wait ended without the lock".into()))
            }

            /// Acquires the lock for `lease` without watchdog (it expires after `lease` unless
            /// released), waiting as long as it takes (Redisson `lock(leaseTime, unit)`).
            ///
            /// # Cancel safety
            ///
            /// As for `lock`.
            ///
            /// # Errors
            ///
            /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a lease under 1 ms
            /// or over [`MAX_DURATION`](crate::MAX_DURATION) (nothing is sent); otherwise as `lock`.
            ///
            /// # Examples
            ///
            /// ```no_run
            #[doc = concat!("# async fn demo(lock: redisson_lock::", stringify!($T), ") -> redisson_lock::Result<()> {")]
            /// use std::time::Duration;
            /// let guard = lock.lock_with_lease(Duration::from_secs(10)).await?;
            /// assert_eq!(guard.lease(), Some(Duration::from_secs(10)));
            /// # Ok(()) }
            /// ```
            pub async fn lock_with_lease(&self, lease: std::time::Duration) -> $crate::Result<$G> {
                let held = self.core.acquire(None, Some(lease)).await?;
                held.map($G::new).ok_or($crate::Error::Protocol("an unbounded wait ended without the lock".into()))
            }

            /// One attempt, no waiting (Redisson `tryLock()`): `Ok(None)` when someone else holds it.
            ///
            /// # Cancel safety
            ///
            /// As for `lock`.
            ///
            /// # Examples
            ///
            /// ```no_run
            #[doc = concat!("# async fn demo(lock: redisson_lock::", stringify!($T), ") -> redisson_lock::Result<()> {")]
            /// match lock.try_lock().await? {
            ///     Some(guard) => drop(guard.unlock().await?),
            ///     None => println!("busy"),
            /// }
            /// # Ok(()) }
            /// ```
            pub async fn try_lock(&self) -> $crate::Result<Option<$G>> {
                Ok(self.core.acquire(Some(std::time::Duration::ZERO), None).await?.map($G::new))
            }

            /// Waits up to `wait` (Redisson `tryLock(waitTime, unit)`), watchdog mode.
            ///
            /// Returns within `wait` plus one command timeout, also while Redis is unreachable
            /// (then with the last connection error instead of `Ok(None)`, possibly earlier, once
            /// [`Config::retry_attempts`](crate::Config::retry_attempts) attempts in a row failed).
            /// A `wait` too long to represent waits as long as it takes.
            ///
            /// # Cancel safety
            ///
            /// As for `lock`.
            ///
            /// # Examples
            ///
            /// ```no_run
            #[doc = concat!("# async fn demo(lock: redisson_lock::", stringify!($T), ") -> redisson_lock::Result<()> {")]
            /// use std::time::Duration;
            /// let guard = lock.try_lock_for(Duration::from_millis(500)).await?;
            /// println!("acquired: {}", guard.is_some());
            /// # Ok(()) }
            /// ```
            pub async fn try_lock_for(&self, wait: std::time::Duration) -> $crate::Result<Option<$G>> {
                Ok(self.core.acquire(Some(wait), None).await?.map($G::new))
            }

            /// Waits up to `wait` and holds for `lease` without watchdog
            /// (Redisson `tryLock(waitTime, leaseTime, unit)`).
            ///
            /// # Cancel safety
            ///
            /// As for `lock`.
            ///
            /// # Examples
            ///
            /// ```no_run
            #[doc = concat!("# async fn demo(lock: redisson_lock::", stringify!($T), ") -> redisson_lock::Result<()> {")]
            /// use std::time::Duration;
            /// let guard = lock.try_lock_with_lease(Duration::from_secs(1), Duration::from_secs(30)).await?;
            /// # let _ = guard; Ok(()) }
            /// ```
            pub async fn try_lock_with_lease(
                &self,
                wait: std::time::Duration,
                lease: std::time::Duration,
            ) -> $crate::Result<Option<$G>> {
                Ok(self.core.acquire(Some(wait), Some(lease)).await?.map($G::new))
            }

            /// Runs `body` while holding the lock (watchdog mode) and releases it afterwards, also
            /// when `body` panics (the panic resumes after the release). Two `run`s on one lock
            /// exclude each other, also when joined in one task.
            ///
            /// If the lock is lost while `body` runs (renewal finds it gone, or cannot renew
            /// before the lease deadline), `body` is dropped at its next await point and
            /// [`Error::Lost`](crate::Error::Lost) is returned: work does not go on unprotected.
            ///
            /// # Cancel safety
            ///
            /// Dropping the returned future drops `body` and releases the lock in the background.
            ///
            /// # Errors
            ///
            /// Acquisition errors; `Error::Lost`; the release's error (e.g. `Error::NotHeld` when
            /// the lease ran out unnoticed), in which case `body`'s output is dropped.
            ///
            /// # Examples
            ///
            /// ```no_run
            #[doc = concat!("# async fn demo(lock: redisson_lock::", stringify!($T), ") -> redisson_lock::Result<()> {")]
            /// let total = lock.run(async { 40 + 2 }).await?;
            /// assert_eq!(total, 42);
            /// # Ok(()) }
            /// ```
            pub async fn run<F: std::future::Future>(&self, body: F) -> $crate::Result<F::Output> {
                use futures::FutureExt;
                let guard = self.lock().await?;
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
                            tracing::warn!(key = %self.core.key, error = %e, "release after a panic failed");
                        }
                        std::panic::resume_unwind(panic)
                    }
                    Err(reason) => {
                        let err = $crate::Error::Lost {
                            key: guard.key().to_owned(),
                            field: guard.field().to_owned(),
                            reason,
                        };
                        drop(guard);
                        Err(err)
                    }
                }
            }

            /// Releases one hold of this handle's owner without a guard (Redisson `unlock()`),
            /// e.g. a hold whose guard was forgotten. The handle needs an owner
            /// ([`with_owner`](Self::with_owner) or [`OwnerId::scope`](crate::OwnerId::scope)).
            ///
            /// # Cancel safety
            ///
            /// The release runs in its own task; dropping the future does not cancel it.
            ///
            /// # Errors
            ///
            /// [`Error::NotHeld`](crate::Error::NotHeld) when the owner holds nothing; Redis is
            /// then unchanged. [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the
            /// handle has no owner.
            ///
            /// # Examples
            ///
            /// ```no_run
            #[doc = concat!("# async fn demo(lock: redisson_lock::", stringify!($T), ") -> redisson_lock::Result<()> {")]
            /// let mine = lock.with_owner(7);
            /// mine.lock().await?.forget(); // Java style: hold without a guard
            /// mine.unlock().await?;
            /// # Ok(()) }
            /// ```
            pub async fn unlock(&self) -> $crate::Result<$crate::Unlocked> {
                self.core.unlock().await
            }

            /// Deletes the lock whoever holds it and wakes waiters (Redisson `forceUnlock()`).
            /// Returns whether there was something to delete. Guards of this client on this lock
            /// report [`LostReason::ForceUnlocked`](crate::LostReason::ForceUnlocked); holders
            /// elsewhere learn at their next renewal.
            ///
            /// **Use with care:** the holder may still be working under the lock.
            ///
            /// # Examples
            ///
            /// ```no_run
            #[doc = concat!("# async fn demo(lock: redisson_lock::", stringify!($T), ") -> redisson_lock::Result<()> {")]
            /// let was_locked = lock.force_unlock().await?;
            /// # let _ = was_locked; Ok(()) }
            /// ```
            pub async fn force_unlock(&self) -> $crate::Result<bool> {
                self.core.force_unlock().await
            }

            /// Whether this handle's owner holds the lock (Redisson `isHeldByCurrentThread()`).
            /// The handle needs an owner ([`with_owner`](Self::with_owner) or
            /// [`OwnerId::scope`](crate::OwnerId::scope)); a guard knows without asking
            /// Redis: `guard.is_held()`.
            ///
            /// # Errors
            ///
            /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the handle has no owner.
            ///
            /// # Examples
            ///
            /// ```no_run
            #[doc = concat!("# async fn demo(lock: redisson_lock::", stringify!($T), ") -> redisson_lock::Result<()> {")]
            /// let mine = lock.with_owner(7);
            /// let guard = mine.lock().await?;
            /// assert!(mine.is_held().await?);
            /// # Ok(()) }
            /// ```
            pub async fn is_held(&self) -> $crate::Result<bool> {
                self.is_held_by(self.core.fixed_owner()?).await
            }

            /// Whether `owner` of this client holds the lock (Redisson `isHeldByThread(id)`).
            ///
            /// # Examples
            ///
            /// ```no_run
            #[doc = concat!("# async fn demo(lock: redisson_lock::", stringify!($T), ") -> redisson_lock::Result<()> {")]
            /// assert!(!lock.is_held_by(12345).await?);
            /// # Ok(()) }
            /// ```
            pub async fn is_held_by(&self, owner: impl Into<$crate::OwnerId>) -> $crate::Result<bool> {
                let field = self.core.field_of(owner.into());
                let n: i64 = self.core.query(redis::cmd("HEXISTS").arg(&*self.core.key).arg(&field)).await?;
                Ok(n == 1)
            }

            /// How many times this handle's owner holds the lock (Redisson `getHoldCount()`); 0 if
            /// not. The handle needs an owner, as for [`is_held`](Self::is_held).
            ///
            /// # Examples
            ///
            /// ```no_run
            #[doc = concat!("# async fn demo(lock: redisson_lock::", stringify!($T), ") -> redisson_lock::Result<()> {")]
            /// let mine = lock.with_owner(7);
            /// let a = mine.lock().await?;
            /// let b = mine.lock().await?; // the same owner: re-entry
            /// assert_eq!(mine.hold_count().await?, 2);
            /// # Ok(()) }
            /// ```
            pub async fn hold_count(&self) -> $crate::Result<u64> {
                let field = self.core.field_of(self.core.fixed_owner()?);
                let n: Option<u64> = self.core.query(redis::cmd("HGET").arg(&*self.core.key).arg(&field)).await?;
                Ok(n.unwrap_or(0))
            }

            /// The lock's remaining time to live (Redisson `remainTimeToLive()`: `PTTL`).
            ///
            /// # Examples
            ///
            /// ```no_run
            #[doc = concat!("# async fn demo(lock: redisson_lock::", stringify!($T), ") -> redisson_lock::Result<()> {")]
            /// use redisson_lock::Ttl;
            /// assert_eq!(lock.remain_time_to_live().await?, Ttl::NotLocked);
            /// # Ok(()) }
            /// ```
            pub async fn remain_time_to_live(&self) -> $crate::Result<$crate::Ttl> {
                let ms: i64 = self.core.query(redis::cmd("PTTL").arg(&*self.core.key)).await?;
                $crate::Ttl::from_pttl(ms)
            }
        }

        impl std::fmt::Debug for $T {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($T))
                    .field("key", &&*self.core.key)
                    .field("owner", &self.core.owner)
                    .finish()
            }
        }
    };
}

/// Methods of a guard type `$G` (a struct with a `held: Held` field).
macro_rules! lock_guard_methods {
    ($G:ident) => {
        impl $G {
            fn new(held: $crate::core::Held) -> Self {
                $G { held }
            }

            /// Releases this hold: the count goes down by one; when nothing is left the key is
            /// deleted and waiters are notified. A partial release (other holds of the same owner
            /// remain, see [`reenter`](Self::reenter)) keeps the key alive as long as the
            /// longest of them needs.
            ///
            /// A hold this process knows has ended (`state()` is not `Held`: the lease ran out,
            /// renewal found it gone, a force unlock) sends nothing: it can never take away a
            /// later hold of the same owner.
            ///
            /// # Cancel safety
            ///
            /// Renewal stops before anything is sent, and the release runs in its own task:
            /// dropping this future does not cancel it.
            ///
            /// # Errors
            ///
            /// [`Error::NotHeld`](crate::Error::NotHeld) when the hold had already ended (the
            /// lease ran out, a force unlock, Redis lost the data): Redis is not changed, and work
            /// done under the lock may have overlapped with another holder's.
            pub async fn unlock(self) -> $crate::Result<$crate::Unlocked> {
                self.held.unlock().await
            }

            /// Takes another hold for this guard's owner (a re-entry: the hold count goes up by
            /// one, as a nested `lock()` in one Java thread does), in watchdog mode. The new guard
            /// is released on its own; the lock stays held until every guard is released.
            ///
            /// # Cancel safety
            ///
            /// As for `lock`: a hold granted after the future was dropped is released.
            ///
            /// # Errors
            ///
            /// [`Error::NotHeld`](crate::Error::NotHeld) when this hold has ended (the re-entry
            /// would be a new, unrelated hold: if Redis answers that way, the new hold is given
            /// back and this guard reports the loss).
            pub async fn reenter(&self) -> $crate::Result<Self> {
                self.reenter_inner(None).await
            }

            /// As [`reenter`](Self::reenter), with a lease for the new hold. The lock stays alive
            /// as long as the longest live hold of the owner needs (a short re-entry never cuts
            /// the TTL of a longer hold).
            pub async fn reenter_with_lease(&self, lease: std::time::Duration) -> $crate::Result<Self> {
                self.reenter_inner(Some(lease)).await
            }

            async fn reenter_inner(&self, lease: Option<std::time::Duration>) -> $crate::Result<Self> {
                let not_held = || $crate::Error::NotHeld {
                    key: self.key().to_owned(),
                    field: self.field().to_owned(),
                };
                if !self.is_held() {
                    return Err(not_held());
                }
                let core = self.held.pinned_core();
                let held = core
                    .acquire(Some(std::time::Duration::ZERO), lease)
                    .await?
                    .ok_or_else(not_held)?;
                if !self.held.same_epoch(&held) {
                    // Redis granted a new hold, not a re-entry: this hold was gone (it is now
                    // reported lost). Give the new one back.
                    drop(held);
                    return Err(not_held());
                }
                Ok(Self::new(held))
            }

            /// Resolves when this hold is lost (see [`LostReason`](crate::LostReason)); stays
            /// pending while it is held. Select on it to stop work that must not continue
            /// without the lock.
            ///
            /// # Cancel safety
            ///
            /// Cancel safe: it only observes.
            pub fn lost(&self) -> impl std::future::Future<Output = $crate::LostReason> + Send + 'static {
                self.held.lost()
            }

            /// What this process knows about the hold, without asking Redis.
            pub fn state(&self) -> $crate::LeaseState {
                self.held.state()
            }

            /// `state() == LeaseState::Held`: granted or renewed recently enough to trust.
            pub fn is_held(&self) -> bool {
                self.state() == $crate::LeaseState::Held
            }

            /// The lock's Redis key.
            pub fn key(&self) -> &str {
                self.held.key()
            }

            /// The hash field of this hold.
            pub fn field(&self) -> &str {
                self.held.field()
            }

            /// The owner of this hold.
            pub fn owner(&self) -> $crate::OwnerId {
                self.held.owner()
            }

            /// The explicit lease, or `None` in watchdog mode.
            pub fn lease(&self) -> Option<std::time::Duration> {
                self.held.lease()
            }

            /// Keeps the hold without a guard (in watchdog mode renewal goes on). Release it
            /// later with `unlock()` on a handle with the same owner
            /// (`lock.with_owner(guard.owner())`), or let it expire.
            pub fn forget(self) {
                self.held.forget()
            }
        }

        impl std::fmt::Debug for $G {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($G))
                    .field("key", &self.held.key())
                    .field("field", &self.held.field())
                    .field("lease", &self.held.lease())
                    .field("state", &self.held.state())
                    .finish()
            }
        }
    };
}

pub(crate) use {lock_guard_methods, lock_handle_methods};
