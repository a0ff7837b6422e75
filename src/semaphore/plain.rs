//! Redisson's `RSemaphore`: a count of permits in Redis that services in Rust and Java take and
//! give back, and waiters woken when permits come back.

use std::time::{Duration, Instant};

use redis::{ScriptInvocation, Value};

use super::{SemaphoreGuard, Shared};
use crate::error::{Error, Result};
use crate::kinds::common;
use crate::layout::{ChannelSpec, KeySpec, Layout};
use crate::once::Once;
use crate::script::{self, lua};
use crate::synchronizer::pending::{GiveBack, Pending};
use crate::synchronizer::wait::WaitTarget;
use crate::waiting::Step;

lua!(SEM_TRY_ACQUIRE, "semaphore/try_acquire", with "common/counter");
lua!(SEM_RELEASE, "semaphore/release", with "common/notify", "common/counter", "common/once");
lua!(SEM_TRY_SET_PERMITS, "semaphore/try_set_permits", with "common/notify", "common/once");
lua!(SEM_ADD_PERMITS, "semaphore/add_permits", with "common/notify", "common/counter", "common/once");
lua!(SEM_DRAIN_PERMITS, "semaphore/drain_permits", with "common/counter", "common/once");

pub(super) fn channel_of(key: &str, _: &str) -> String {
    super::channel(key)
}

/// What an `RSemaphore` keeps in Redis and sends there (for inspection and ACL audits).
pub(crate) static LAYOUT: Layout = Layout::new(
    "semaphore",
    "getSemaphore",
    &[
        KeySpec::new(
            "permits",
            common::lock_key,
            Some("string"),
            false,
            &["decrby", "get", "incrby", "persist", "set"],
        )
        .with_client_commands(&["del", "get"]),
        KeySpec::new("permits channel", channel_of, None, false, &[]),
        common::LATCH,
    ],
    &[ChannelSpec::new("permits channel", channel_of, true)],
    &[
        &SEM_TRY_ACQUIRE,
        &SEM_RELEASE,
        &SEM_TRY_SET_PERMITS,
        &SEM_ADD_PERMITS,
        &SEM_DRAIN_PERMITS,
        &script::RESOLVE_ACQUIRE,
    ],
);

/// A handle to a semaphore (Redisson's `getSemaphore(name)`); cheap to clone.
///
/// [`acquire`](Self::acquire) returns a [`SemaphoreGuard`] that gives its permits back when
/// dropped. Redisson's permits are not owned: any task, process or Java service may give back
/// permits another took; [`SemaphoreGuard::forget`] keeps them taken for that.
///
/// A semaphore need not be set up: [`release`](Self::release) and
/// [`add_permits`](Self::add_permits) create it, and one that does not exist has no permits.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// let jobs = client.semaphore("sem:thumbnails")?;
/// jobs.try_set_permits(4).await?; // at most 4 at a time, across every service
/// let permit = jobs.acquire(1).await?;
/// // ... the work ...
/// permit.release().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Semaphore {
    pub(super) s: Shared,
}

impl std::fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Semaphore").field("key", &self.s.key).finish()
    }
}

/// Gives back permits an abandoned acquisition took.
pub(super) struct Release {
    s: Shared,
    permits: i64,
}

impl GiveBack for Release {
    const WHAT: &'static str = "semaphore: release";

    fn give_back(&self, latch: &str, keep_ms: u64) -> ScriptInvocation<'static> {
        release(&self.s, self.permits, false, latch, keep_ms)
    }
}

/// The release request of `permits` with request latch `latch`.
fn release(
    s: &Shared,
    permits: i64,
    if_exists: bool,
    latch: &str,
    keep_ms: u64,
) -> ScriptInvocation<'static> {
    let mut inv = SEM_RELEASE.prepare_invoke();
    inv.key(&*s.key)
        .key(&*s.channel)
        .key(latch)
        .arg(permits)
        .arg(s.client.publish_cmd)
        .arg(keep_ms)
        .arg(if if_exists { "1" } else { "0" });
    inv
}

impl Semaphore {
    /// `key`: the semaphore's name after the name mapper.
    pub(crate) fn new(client: std::sync::Arc<crate::inner::ClientInner>, key: String) -> Semaphore {
        Semaphore {
            s: Shared::new(client, key),
        }
    }

    /// The Redis key of the count.
    pub fn key(&self) -> &str {
        &self.s.key
    }

    /// Sets the number of permits to `permits` if the semaphore does not exist (Redisson's
    /// `trySetPermits`; a negative count is allowed, as there); waiters are told. Returns whether
    /// it was set.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] beyond ±[`MAX_PERMITS`](super::MAX_PERMITS) (nothing is
    /// sent); [`Error::WrongType`] when the name holds another type; a Redis error.
    ///
    /// # Cancel safety
    ///
    /// A lost reply is asked again (the request applies once); dropping the future after it
    /// was sent leaves it to Redis: the count may be set.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let sem = client.semaphore("sem:exports")?;
    /// if !sem.try_set_permits(3).await? {
    ///     println!("already set up: {} permits free", sem.available_permits().await?);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn try_set_permits(&self, permits: i64) -> Result<bool> {
        self.try_set(permits, 0).await
    }

    /// As [`try_set_permits`](Self::try_set_permits), and the semaphore expires after `ttl`
    /// (Redisson's `trySetPermits(permits, ttl)`, 3.29+).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a zero `ttl` or one beyond
    /// [`MAX_DURATION`](crate::MAX_DURATION); otherwise as `try_set_permits`.
    ///
    /// # Cancel safety
    ///
    /// As [`try_set_permits`](Self::try_set_permits).
    pub async fn try_set_permits_with_ttl(&self, permits: i64, ttl: Duration) -> Result<bool> {
        let ttl_ms = crate::config::millis("semaphore ttl", ttl)?;
        if ttl_ms == 0 {
            return Err(Error::InvalidArgument(
                "semaphore ttl must be at least 1 ms".into(),
            ));
        }
        self.try_set(permits, ttl_ms).await
    }

    async fn try_set(&self, permits: i64, ttl_ms: u64) -> Result<bool> {
        try_set_permits(&self.s, permits, ttl_ms).await
    }

    /// Takes `permits`, waiting as long as it takes (Redisson's `acquire(permits)`): woken by
    /// the semaphore's messages (from Rust or Java), with a poll as the fallback. The guard
    /// gives them back when dropped (in the background) or [`release`d](SemaphoreGuard::release);
    /// [`forget`](SemaphoreGuard::forget) keeps them taken, as Redisson's permits (which any
    /// party may give back with [`release`](Self::release)). `0` permits are a guard of none,
    /// without asking Redis.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] above [`MAX_PERMITS`](super::MAX_PERMITS);
    /// [`Error::WrongType`] when the name holds another type; [`Error::Shutdown`]; a Redis
    /// error after `retry_attempts` failed attempts in a row. A lost reply is never sent again:
    /// Redis is asked whether the attempt was granted (and it is made never to apply if not);
    /// the error is returned only when it was not.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: when the future is dropped while an attempt may be in Redis, it is settled
    /// in the background and permits it took are given back.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
    /// let sem = client.semaphore("sem:db-connections")?;
    /// {
    ///     let _permits = sem.acquire(2).await?;
    ///     // ... two connections' worth of work ...
    /// } // given back here, in the background
    /// // Redisson's way: taken here, given back by whoever calls release
    /// sem.acquire(1).await?.forget();
    /// sem.release(1).await?;
    /// # Ok(()) }
    /// ```
    pub async fn acquire(&self, permits: u64) -> Result<SemaphoreGuard> {
        let Some(n) = self.count_of(permits)? else {
            return Ok(SemaphoreGuard::none(self.clone()));
        };
        self.wait(n, None).await?;
        Ok(SemaphoreGuard::new(self.clone(), n))
    }

    /// One attempt to take `permits` (Redisson's `tryAcquire(permits)`): a guard of them, or
    /// `None` when there were not enough. `0` permits are a guard of none, without asking Redis.
    ///
    /// # Errors
    ///
    /// As [`acquire`](Self::acquire).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`acquire`](Self::acquire).
    pub async fn try_acquire(&self, permits: u64) -> Result<Option<SemaphoreGuard>> {
        let Some(n) = self.count_of(permits)? else {
            return Ok(Some(SemaphoreGuard::none(self.clone())));
        };
        Ok(self
            .attempt(n)
            .await?
            .then(|| SemaphoreGuard::new(self.clone(), n)))
    }

    /// Takes `permits`, waiting at most `wait` for them (Redisson's `tryAcquire(permits,
    /// wait)`): a guard of them, or `None` when `wait` ran out.
    ///
    /// # Errors
    ///
    /// As [`acquire`](Self::acquire); a transient error is tried again within the wait, up to
    /// `retry_attempts` times in a row.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`acquire`](Self::acquire).
    pub async fn try_acquire_for(&self, permits: u64, wait: Duration) -> Result<Option<SemaphoreGuard>> {
        let Some(n) = self.count_of(permits)? else {
            return Ok(Some(SemaphoreGuard::none(self.clone())));
        };
        let deadline = crate::deadline::after(Instant::now(), wait);
        Ok(self
            .wait(n, Some(deadline))
            .await?
            .map(|()| SemaphoreGuard::new(self.clone(), n)))
    }

    /// `permits` as a script argument, `None` for none.
    fn count_of(&self, permits: u64) -> Result<Option<i64>> {
        match permits {
            0 => Ok(None),
            p => super::permits(&self.s.key, p).map(Some),
        }
    }

    /// Gives `permits` back (Redisson's `release(permits)`; it creates the semaphore when there
    /// is none); waiters are told the new total. `0` changes nothing.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] above [`MAX_PERMITS`](super::MAX_PERMITS);
    /// [`Error::WrongType`]; a Redis error (also when the count would overflow: nothing is
    /// written).
    ///
    /// # Cancel safety
    ///
    /// A lost reply is sent again and never counts twice (the request's latch replays its
    /// first reply). Dropping the future, or an error that leaves the outcome unknown, hands
    /// the release to the background, which finishes it (once).
    pub async fn release(&self, permits: u64) -> Result<()> {
        if permits == 0 {
            return Ok(());
        }
        let n = super::permits(&self.s.key, permits)?;
        self.release_once(n, false).send::<i64>().await?;
        tracing::debug!(key = %self.s.key, permits = n, "semaphore: released");
        Ok(())
    }

    /// Gives `permits` back only if the semaphore exists (Redisson's `releaseIfExists`, 4.0+):
    /// whether it did. `0` returns `false` without asking Redis.
    ///
    /// # Errors
    ///
    /// As [`release`](Self::release).
    ///
    /// # Cancel safety
    ///
    /// As [`release`](Self::release).
    pub async fn release_if_exists(&self, permits: u64) -> Result<bool> {
        if permits == 0 {
            return Ok(false);
        }
        let n = super::permits(&self.s.key, permits)?;
        let done: i64 = self.release_once(n, true).send().await?;
        tracing::debug!(key = %self.s.key, permits = n, released = done == 1, "semaphore: release if exists");
        Ok(done == 1)
    }

    pub(super) fn release_once(&self, n: i64, if_exists: bool) -> Once {
        Once::new(
            &self.s.client,
            &self.s.key,
            "semaphore: release",
            true,
            |latch, ms| release(&self.s, n, if_exists, latch, ms),
        )
    }

    /// The permits available now (Redisson's `availablePermits`): 0 when there is no semaphore;
    /// negative after [`add_permits`](Self::add_permits) took more than there were.
    ///
    /// # Errors
    ///
    /// [`Error::WrongType`]; [`Error::Protocol`] when the name holds a string that is not a
    /// count; a Redis error.
    ///
    /// # Cancel safety
    ///
    /// A read: dropping the future changes nothing.
    pub async fn available_permits(&self) -> Result<i64> {
        self.s.get().await
    }

    /// Takes every available permit (Redisson's `drainPermits`): how many there were (0 when
    /// there is no semaphore). Like Redisson's, it leaves the count without a TTL.
    ///
    /// # Errors
    ///
    /// [`Error::WrongType`]; a Redis error when the name holds a string that is not a count.
    ///
    /// # Cancel safety
    ///
    /// A lost reply is asked again (it applies once); dropping the future after it was sent
    /// leaves it to Redis.
    pub async fn drain_permits(&self) -> Result<i64> {
        let s = &self.s;
        let once = Once::new(&s.client, &s.key, "semaphore: drain", false, |latch, ms| {
            let mut inv = SEM_DRAIN_PERMITS.prepare_invoke();
            inv.key(&*s.key).key(latch).arg(ms);
            inv
        });
        let drained: i64 = once.send().await?;
        tracing::debug!(key = %s.key, drained, "semaphore: drained");
        Ok(drained)
    }

    /// Adds `delta` permits (negative: removes them; the count may go below zero), as Redisson's
    /// `addPermits`; waiters are told the new total, which is returned. Like Redisson's, it
    /// leaves the count without a TTL.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] beyond ±[`MAX_PERMITS`](super::MAX_PERMITS);
    /// [`Error::WrongType`]; a Redis error.
    ///
    /// # Cancel safety
    ///
    /// As [`drain_permits`](Self::drain_permits).
    pub async fn add_permits(&self, delta: i64) -> Result<i64> {
        self.s
            .add_permits("semaphore: add permits", &SEM_ADD_PERMITS, delta)
            .await
    }

    /// Removes the semaphore (`DEL`): whether there was one. Waiters are not told (as in
    /// Redisson); they find no permits.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future after the request was sent leaves it to Redis.
    pub async fn delete(&self) -> Result<bool> {
        let mut del = redis::cmd("DEL");
        del.arg(&*self.s.key);
        let cfg = &self.s.client.config;
        let n: i64 = script::cmd(&self.s.client.conn, cfg.command_timeout, &self.s.key, &del).await?;
        Ok(n > 0)
    }

    /// Waits for `n` permits until `deadline`: `None` when it passed first.
    async fn wait(&self, n: i64, deadline: Option<Instant>) -> Result<Option<()>> {
        let target = WaitTarget {
            client: &self.s.client,
            key: &self.s.key,
            channel: &self.s.channel,
            kind: "semaphore",
            messages: crate::pubsub::Messages::Permits,
        };
        target
            .until(deadline, || async {
                Ok(match self.attempt(n).await? {
                    true => Step::Done(()),
                    false => Step::again(),
                })
            })
            .await
    }

    /// One attempt to take `n` permits, settled if its reply is lost.
    async fn attempt(&self, n: i64) -> Result<bool> {
        let s = &self.s;
        s.open()?;
        let cfg = &s.client.config;
        let latch = crate::name::fresh_latch(&s.key);
        let mut inv = SEM_TRY_ACQUIRE.prepare_invoke();
        inv.key(&*s.key).key(&latch).arg(n).arg(cfg.settle_window_ms());
        // replicas known to lag: a required acquisition fails before anything is sent
        s.client.replica_sync.refuse_now(&s.key)?;
        let give_back = Release {
            s: s.clone(),
            permits: n,
        };
        let pending = Pending::new(&s.client, &s.key, latch, give_back);
        let sent = s
            .client
            .replica_sync
            .run::<Value>(&s.client.conn, cfg.command_timeout, &s.key, &inv)
            .await;
        let granted = match sent {
            Ok((v, synced)) => {
                // a reply that cannot be read leaves the attempt armed: it is settled in the
                // background, and what it took (if anything) given back
                let granted = decode_grant(&s.key, &v)?;
                let give_back = pending.land(granted)?;
                if let (true, Some(g)) = (granted, give_back) {
                    if let Some(wanted) = s.client.replica_sync.unconfirmed(&synced) {
                        let undo = crate::synchronizer::pending::give_back(&s.client, &s.key, g);
                        return Err(s.client.replica_sync.undo_unconfirmed(&s.key, wanted, undo).await);
                    }
                }
                granted
            }
            Err(e) if e.is_ambiguous() => match pending.settle().await {
                Ok(true) => {
                    tracing::debug!(key = %s.key, error = %e, "semaphore: acquire reply was lost, but Redis had granted it");
                    true
                }
                Ok(false) => return Err(e),
                Err(Error::Shutdown) => return Err(Error::Shutdown), // granted: given back
                Err(_) => return Err(e),                             // settled in the background
            },
            Err(e) => {
                pending.land(false)?;
                return Err(e);
            }
        };
        if granted {
            tracing::debug!(key = %s.key, permits = n, "semaphore: acquired");
        }
        Ok(granted)
    }
}

/// Reads an acquisition reply `{1, n}` granted, `{0, _}` refused (`{2, 0}`, a cancelled
/// attempt, cannot answer a fresh one).
pub(super) fn decode_grant(key: &str, v: &Value) -> Result<bool> {
    match v {
        Value::Array(items) => match items.first() {
            Some(Value::Int(1)) => Ok(true),
            Some(Value::Int(0)) => Ok(false),
            _ => Err(Error::Protocol(format!(
                "semaphore `{key}`: unexpected acquire reply {items:?}"
            ))),
        },
        other => Err(Error::Protocol(format!(
            "semaphore `{key}`: unexpected acquire reply {other:?}"
        ))),
    }
}

/// `trySetPermits` of either semaphore kind (the same script: Redisson's are the same too).
pub(super) async fn try_set_permits(s: &Shared, permits: i64, ttl_ms: u64) -> Result<bool> {
    let permits = super::count(&s.key, permits)?;
    let once = Once::new(
        &s.client,
        &s.key,
        "semaphore: try set permits",
        false,
        |latch, ms| {
            let mut inv = SEM_TRY_SET_PERMITS.prepare_invoke();
            inv.key(&*s.key)
                .key(&*s.channel)
                .key(latch)
                .arg(permits)
                .arg(s.client.publish_cmd)
                .arg(ms)
                .arg(ttl_ms);
            inv
        },
    );
    let set: i64 = once.send().await?;
    tracing::debug!(key = %s.key, permits, set = set == 1, "semaphore: try set permits");
    Ok(set == 1)
}
