//! Redisson's `RPermitExpirableSemaphore`: permits taken under ids, each with an optional lease
//! after which it comes back by itself (a worker that dies does not keep it).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::{ScriptInvocation, Value};

use super::plain::{decode_grant, try_set_permits};
use super::{PermitGuard, PermitId, Shared};
use crate::error::{Error, Result};
use crate::kinds::common;
use crate::layout::{ChannelSpec, KeySpec, Layout};
use crate::once::Once;
use crate::script::{self, lua};
use crate::synchronizer::pending::{GiveBack, Pending};
use crate::synchronizer::wait::WaitTarget;
use crate::waiting::Step;

lua!(PES_ACQUIRE, "expirable/acquire", with "common/notify", "common/counter", "common/reclaim");
lua!(PES_RELEASE, "expirable/release", with "common/notify", "common/counter", "common/once");
lua!(PES_RELEASE_MANY, "expirable/release_many", with "common/notify", "common/counter", "common/reclaim", "common/once");
lua!(PES_UPDATE_LEASE, "expirable/update_lease", with "common/notify", "common/counter", "common/reclaim");
lua!(PES_LEASE_TIME, "expirable/lease_time", with "common/notify", "common/counter", "common/reclaim");
lua!(PES_COUNTS, "expirable/counts", with "common/notify", "common/counter", "common/reclaim");
lua!(PES_SET_PERMITS, "expirable/set_permits", with "common/notify", "common/counter", "common/once");
lua!(PES_ADD_PERMITS, "expirable/add_permits", with "common/notify", "common/counter", "common/once");

fn leases_of(key: &str, _: &str) -> String {
    leases(key)
}

/// What an `RPermitExpirableSemaphore` keeps in Redis and sends there (for inspection and ACL
/// audits).
pub(crate) static LAYOUT: Layout = Layout::new(
    "permit-expirable semaphore",
    "getPermitExpirableSemaphore",
    &[
        KeySpec::new(
            "permits",
            common::lock_key,
            Some("string"),
            false,
            &["decrby", "get", "incrby", "persist", "pttl", "set"],
        )
        .with_client_commands(&["del"]),
        KeySpec::new(
            "leases",
            leases_of,
            Some("zset"),
            false,
            &[
                "pexpire",
                "zadd",
                "zcard",
                "zcount",
                "zrange",
                "zrangebyscore",
                "zrem",
                "zscore",
            ],
        )
        .with_client_commands(&["del"]),
        KeySpec::new("permits channel", super::plain::channel_of, None, false, &[]),
        common::LATCH,
    ],
    &[ChannelSpec::new(
        "permits channel",
        super::plain::channel_of,
        true,
    )],
    &[
        &PES_ACQUIRE,
        &PES_RELEASE,
        &PES_RELEASE_MANY,
        &PES_UPDATE_LEASE,
        &PES_LEASE_TIME,
        &PES_COUNTS,
        &PES_SET_PERMITS,
        &PES_ADD_PERMITS,
        &super::plain::SEM_TRY_SET_PERMITS,
        &script::RESOLVE_ACQUIRE,
    ],
);

/// The lease-end score of a permit without a lease (Redisson's, about `i64::MAX / 10_000` ms).
pub(crate) const NO_LEASE: i64 = 922_337_203_685_477;

/// The leases' sorted set of semaphore `key`: `{<key>}:timeout`.
pub(crate) fn leases(key: &str) -> String {
    crate::name::suffix_name(key, "timeout")
}

/// Now, in epoch ms: the clock every client of the semaphore compares leases with (Redisson
/// uses its JVM's clock the same way, so the clients' clocks must agree).
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// How long a held permit's lease has left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PermitLease {
    /// Taken without a lease: held until released.
    Unlimited,
    /// Comes back by itself after this long, unless released or updated.
    Remaining(Duration),
}

/// A handle to a semaphore whose permits are taken under ids and may have leases (Redisson's
/// `getPermitExpirableSemaphore(name)`); cheap to clone.
///
/// A permit taken with a lease comes back by itself when the lease ends (at the next
/// acquisition or count by any client, Rust or Java: Redis has no timer for it). Lease ends are
/// compared with the clients' wall clocks, as in Redisson: keep them in sync (NTP).
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: redisson_lock::Client) -> redisson_lock::Result<()> {
/// use std::time::Duration;
///
/// let slots = client.permit_expirable_semaphore("sem:gpu")?;
/// slots.try_set_permits(2).await?;
/// // comes back after 10 minutes even if this process dies
/// let permit = slots.acquire_with_lease(Duration::from_secs(600)).await?;
/// // ... the work ...
/// permit.release().await?;
/// // Redisson's way: the id handed to another service (Java too), which releases it
/// let id = slots.acquire().await?.forget()[0];
/// slots.release(id).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct PermitExpirableSemaphore {
    s: Shared,
    leases: Arc<str>,
}

impl std::fmt::Debug for PermitExpirableSemaphore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermitExpirableSemaphore")
            .field("key", &self.s.key)
            .finish()
    }
}

/// Gives back the permits an abandoned acquisition took.
struct ReleaseIds {
    sem: PermitExpirableSemaphore,
    ids: Vec<PermitId>,
}

impl GiveBack for ReleaseIds {
    const WHAT: &'static str = "expirable semaphore: release";

    fn give_back(&self, latch: &str, keep_ms: u64) -> ScriptInvocation<'static> {
        self.sem.release_many_inv(&self.ids, latch, keep_ms)
    }
}

/// The lease-end score of a lease (`None`: no lease).
fn lease_end(key: &str, lease: Option<Duration>) -> Result<i64> {
    let Some(lease) = lease else { return Ok(NO_LEASE) };
    let ms = crate::config::millis("permit lease", lease)?;
    let end = i64::try_from(ms).ok().and_then(|ms| now_ms().checked_add(ms));
    match end {
        Some(end) if ms > 0 && end < NO_LEASE => Ok(end),
        _ => Err(Error::InvalidArgument(format!(
            "semaphore `{key}`: a permit lease of {lease:?} (at least 1 ms, ending before the no-lease mark)"
        ))),
    }
}

impl PermitExpirableSemaphore {
    /// `key`: the semaphore's name after the name mapper.
    pub(crate) fn new(client: Arc<crate::inner::ClientInner>, key: String) -> PermitExpirableSemaphore {
        let leases = leases(&key);
        PermitExpirableSemaphore {
            s: Shared::new(client, key),
            leases: leases.into(),
        }
    }

    /// The Redis key of the available permits.
    pub fn key(&self) -> &str {
        &self.s.key
    }

    /// The Redis key of the held permits' leases (`{<name>}:timeout`).
    pub fn leases_key(&self) -> &str {
        &self.leases
    }

    /// Sets the number of permits to `permits` if the semaphore does not exist (Redisson's
    /// `trySetPermits`); waiters are told. Returns whether it was set.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] beyond ±[`MAX_PERMITS`](super::MAX_PERMITS);
    /// [`Error::WrongType`]; a Redis error.
    ///
    /// # Cancel safety
    ///
    /// A lost reply is asked again (it applies once); dropping the future after it was sent
    /// leaves it to Redis.
    pub async fn try_set_permits(&self, permits: i64) -> Result<bool> {
        try_set_permits(&self.s, permits, 0).await
    }

    /// Makes the total number of permits (available + held) `permits`, keeping those held
    /// (Redisson's `setPermits`); waiters are told.
    ///
    /// # Errors
    ///
    /// As [`try_set_permits`](Self::try_set_permits).
    ///
    /// # Cancel safety
    ///
    /// As [`try_set_permits`](Self::try_set_permits).
    pub async fn set_permits(&self, permits: i64) -> Result<()> {
        let s = &self.s;
        let permits = super::count(&s.key, permits)?;
        let once = Once::new(
            &s.client,
            &s.key,
            "expirable semaphore: set permits",
            false,
            |latch, ms| {
                let mut inv = PES_SET_PERMITS.prepare_invoke();
                inv.key(&*s.key)
                    .key(&*s.channel)
                    .key(&*self.leases)
                    .key(latch)
                    .arg(permits)
                    .arg(s.client.publish_cmd)
                    .arg(ms);
                inv
            },
        );
        once.send::<i64>().await?;
        tracing::debug!(key = %s.key, permits, "expirable semaphore: set permits");
        Ok(())
    }

    /// Adds `delta` available permits (negative: removes them; the count may go below zero), as
    /// Redisson's `addPermits`; returns the new count of available permits.
    ///
    /// # Errors
    ///
    /// As [`try_set_permits`](Self::try_set_permits).
    ///
    /// # Cancel safety
    ///
    /// As [`try_set_permits`](Self::try_set_permits).
    pub async fn add_permits(&self, delta: i64) -> Result<i64> {
        self.s
            .add_permits("expirable semaphore: add permits", &PES_ADD_PERMITS, delta)
            .await
    }

    /// Takes one permit without a lease, waiting as long as it takes (Redisson's `acquire()`).
    /// The guard gives it back when dropped (in the background) or
    /// [`release`d](PermitGuard::release); [`forget`](PermitGuard::forget) keeps it taken and
    /// returns its id, for Redisson's way of releasing by id (from any process, Rust or Java).
    ///
    /// # Errors
    ///
    /// [`Error::WrongType`]; [`Error::Shutdown`]; a Redis error after `retry_attempts` failed
    /// attempts in a row. A lost reply is never sent again: Redis is asked whether the
    /// attempt was granted (and it is made never to apply if not).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: when the future is dropped while an attempt may be in Redis, it is settled
    /// in the background and a permit it took is given back.
    pub async fn acquire(&self) -> Result<PermitGuard> {
        self.acquire_many(1, None).await
    }

    /// Takes one permit with a lease of `lease`, waiting as long as it takes (Redisson's
    /// `acquire(lease)`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a zero lease or one beyond
    /// [`MAX_DURATION`](crate::MAX_DURATION); otherwise as [`acquire`](Self::acquire).
    ///
    /// # Cancel safety
    ///
    /// As [`acquire`](Self::acquire).
    pub async fn acquire_with_lease(&self, lease: Duration) -> Result<PermitGuard> {
        self.acquire_many(1, Some(lease)).await
    }

    /// Takes `permits` permits at once, each with the lease `lease` (`None`: none), waiting as
    /// long as it takes (Redisson's `acquire(permits, lease)`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for 0 permits or more than
    /// [`MAX_PERMITS`](super::MAX_PERMITS); otherwise as
    /// [`acquire_with_lease`](Self::acquire_with_lease).
    ///
    /// # Cancel safety
    ///
    /// As [`acquire`](Self::acquire).
    pub async fn acquire_many(&self, permits: u64, lease: Option<Duration>) -> Result<PermitGuard> {
        let n = super::permits(&self.s.key, permits)?;
        lease_end(&self.s.key, lease)?;
        match self.wait(n, lease, None).await? {
            Some(ids) => Ok(PermitGuard::new(self.clone(), ids)),
            None => Err(Error::Protocol(
                "an acquisition without a deadline timed out".into(),
            )),
        }
    }

    /// One attempt to take a permit without a lease (Redisson's `tryAcquire()`): `None` when
    /// there was none.
    ///
    /// # Errors
    ///
    /// As [`acquire`](Self::acquire).
    ///
    /// # Cancel safety
    ///
    /// As [`acquire`](Self::acquire).
    pub async fn try_acquire(&self) -> Result<Option<PermitGuard>> {
        self.try_acquire_many(1, Duration::ZERO, None).await
    }

    /// Takes one permit with the lease `lease` (`None`: none), waiting at most `wait`
    /// (Redisson's `tryAcquire(wait, lease)`); `None` when `wait` ran out.
    ///
    /// # Errors
    ///
    /// As [`acquire_with_lease`](Self::acquire_with_lease).
    ///
    /// # Cancel safety
    ///
    /// As [`acquire`](Self::acquire).
    pub async fn try_acquire_for(
        &self,
        wait: Duration,
        lease: Option<Duration>,
    ) -> Result<Option<PermitGuard>> {
        self.try_acquire_many(1, wait, lease).await
    }

    /// Takes `permits` permits at once, each with the lease `lease` (`None`: none), waiting at
    /// most `wait` (Redisson's `tryAcquire(permits, wait, lease)`); `None` when `wait` ran
    /// out. A zero `wait` makes one attempt.
    ///
    /// # Errors
    ///
    /// As [`acquire_many`](Self::acquire_many).
    ///
    /// # Cancel safety
    ///
    /// As [`acquire`](Self::acquire).
    pub async fn try_acquire_many(
        &self,
        permits: u64,
        wait: Duration,
        lease: Option<Duration>,
    ) -> Result<Option<PermitGuard>> {
        let n = super::permits(&self.s.key, permits)?;
        lease_end(&self.s.key, lease)?;
        let deadline = crate::deadline::after(Instant::now(), wait);
        Ok(self
            .wait(n, lease, Some(deadline))
            .await?
            .map(|ids| PermitGuard::new(self.clone(), ids)))
    }

    /// Gives the permit `id` back (Redisson's `tryRelease(id)`): `true` when it was held and its
    /// lease had not ended. A permit whose lease ended but that nobody reclaimed yet comes back
    /// too, and that returns `false`, as in Redisson.
    ///
    /// # Errors
    ///
    /// [`Error::WrongType`]; a Redis error.
    ///
    /// # Cancel safety
    ///
    /// A lost reply is sent again and never counts twice (the request's latch replays its
    /// first reply); dropping the future, or an error that leaves the outcome unknown, hands
    /// the release to the background, which finishes it (once).
    pub async fn try_release(&self, id: PermitId) -> Result<bool> {
        Ok(self.release_one(id).await? == 2)
    }

    /// Gives the permit `id` back (Redisson's `release(id)`).
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`] (with the id as `field`) when it was not held or its lease had ended
    /// (Redisson throws `IllegalArgumentException`); otherwise as
    /// [`try_release`](Self::try_release).
    ///
    /// # Cancel safety
    ///
    /// As [`try_release`](Self::try_release).
    pub async fn release(&self, id: PermitId) -> Result<()> {
        match self.release_one(id).await? {
            2 => Ok(()),
            _ => Err(self.not_held(&id.to_string())),
        }
    }

    async fn release_one(&self, id: PermitId) -> Result<i64> {
        let s = &self.s;
        let once = Once::new(
            &s.client,
            &s.key,
            "expirable semaphore: release",
            true,
            |latch, ms| {
                let mut inv = PES_RELEASE.prepare_invoke();
                inv.key(&*s.key)
                    .key(&*s.channel)
                    .key(&*self.leases)
                    .key(latch)
                    .arg(&id.as_bytes()[..])
                    .arg(now_ms())
                    .arg(s.client.publish_cmd)
                    .arg(ms);
                inv
            },
        );
        let r: i64 = once.send().await?;
        tracing::debug!(key = %s.key, permit = %id, outcome = r, "expirable semaphore: release");
        Ok(r)
    }

    /// Gives several permits back, all or none (Redisson's `tryRelease(ids)`, 3.41+): how many
    /// came back — none when any of them was not held or its lease had ended.
    ///
    /// # Errors
    ///
    /// As [`try_release`](Self::try_release).
    ///
    /// # Cancel safety
    ///
    /// As [`try_release`](Self::try_release).
    pub async fn try_release_many(&self, ids: &[PermitId]) -> Result<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        let s = &self.s;
        let n: i64 = self.release_once(ids).send().await?;
        tracing::debug!(key = %s.key, permits = ids.len(), released = n, "expirable semaphore: release many");
        Ok(n.unsigned_abs())
    }

    /// Gives several permits back, all or none (Redisson's `release(ids)`).
    ///
    /// # Errors
    ///
    /// [`Error::NotHeld`] when any of them was not held or its lease had ended (nothing is
    /// given back then); otherwise as [`try_release`](Self::try_release).
    ///
    /// # Cancel safety
    ///
    /// As [`try_release`](Self::try_release).
    pub async fn release_many(&self, ids: &[PermitId]) -> Result<()> {
        let n = self.try_release_many(ids).await?;
        if n as usize != ids.len() {
            let list: Vec<String> = ids.iter().map(PermitId::to_string).collect();
            return Err(self.not_held(&list.join(",")));
        }
        Ok(())
    }

    fn release_many_inv(&self, ids: &[PermitId], latch: &str, keep_ms: u64) -> ScriptInvocation<'static> {
        let s = &self.s;
        let mut inv = PES_RELEASE_MANY.prepare_invoke();
        inv.key(&*s.key)
            .key(&*s.channel)
            .key(&*self.leases)
            .key(latch)
            .arg(now_ms())
            .arg(s.client.publish_cmd)
            .arg(keep_ms);
        for id in ids {
            inv.arg(&id.as_bytes()[..]);
        }
        inv
    }

    /// The all-or-none give-back of `ids`, built now and sent later (or queued when dropped).
    pub(super) fn release_once(&self, ids: &[PermitId]) -> Once {
        Once::new(
            &self.s.client,
            &self.s.key,
            "expirable semaphore: release",
            true,
            |latch, ms| self.release_many_inv(ids, latch, ms),
        )
    }

    pub(super) fn not_held(&self, ids: &str) -> Error {
        Error::NotHeld {
            key: self.s.key.to_string(),
            field: ids.to_owned(),
        }
    }

    /// Gives the held permit `id` a new lease of `lease` from now (`None`: no lease), as
    /// Redisson's `updateLeaseTime`: whether it was held (a permit whose lease already ended is
    /// given back first, and cannot be extended).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a zero lease or one beyond
    /// [`MAX_DURATION`](crate::MAX_DURATION); [`Error::WrongType`]; a Redis error.
    ///
    /// # Cancel safety
    ///
    /// Sending it twice sets the same end twice: dropping the future changes at most that.
    pub async fn update_lease_time(&self, id: PermitId, lease: Option<Duration>) -> Result<bool> {
        let s = &self.s;
        let end = lease_end(&s.key, lease)?;
        let mut inv = PES_UPDATE_LEASE.prepare_invoke();
        inv.key(&*s.key)
            .key(&*self.leases)
            .key(&*s.channel)
            .arg(&id.as_bytes()[..])
            .arg(end)
            .arg(now_ms())
            .arg(s.client.publish_cmd);
        let r: i64 = self.run(&inv).await?;
        tracing::debug!(key = %s.key, permit = %id, updated = r == 1, "expirable semaphore: update lease");
        Ok(r == 1)
    }

    /// How long the held permit `id` has left (Redisson's `getLeaseTime`, 3.41+); `None` when
    /// it is not held (Redisson throws).
    ///
    /// # Errors
    ///
    /// [`Error::WrongType`]; a Redis error.
    ///
    /// # Cancel safety
    ///
    /// Gives ended leases back first (as every query does); dropping the future changes at most
    /// that.
    pub async fn lease_time(&self, id: PermitId) -> Result<Option<PermitLease>> {
        let s = &self.s;
        let mut inv = PES_LEASE_TIME.prepare_invoke();
        inv.key(&*s.key)
            .key(&*self.leases)
            .key(&*s.channel)
            .arg(&id.as_bytes()[..])
            .arg(NO_LEASE)
            .arg(now_ms())
            .arg(s.client.publish_cmd);
        let (found, ms): (i64, i64) = self.run(&inv).await?;
        Ok(match (found, ms) {
            (0, _) => None,
            (_, -1) => Some(PermitLease::Unlimited),
            (_, ms) => Some(PermitLease::Remaining(Duration::from_millis(
                ms.max(0).unsigned_abs(),
            ))),
        })
    }

    /// The permits available now (Redisson's `availablePermits`), after ended leases came back;
    /// 0 when there is no semaphore.
    ///
    /// # Errors
    ///
    /// [`Error::WrongType`]; a Redis error.
    ///
    /// # Cancel safety
    ///
    /// Gives ended leases back first; dropping the future changes at most that.
    pub async fn available_permits(&self) -> Result<i64> {
        Ok(self.counts().await?.0)
    }

    /// The permits held under an id now (Redisson's `acquiredPermits`, 3.19.1+).
    ///
    /// # Errors
    ///
    /// As [`available_permits`](Self::available_permits).
    ///
    /// # Cancel safety
    ///
    /// As [`available_permits`](Self::available_permits).
    pub async fn acquired_permits(&self) -> Result<u64> {
        Ok(self.counts().await?.1)
    }

    /// All permits, available and held (Redisson's `getPermits`, 3.19.1+).
    ///
    /// # Errors
    ///
    /// As [`available_permits`](Self::available_permits).
    ///
    /// # Cancel safety
    ///
    /// As [`available_permits`](Self::available_permits).
    pub async fn permits(&self) -> Result<i64> {
        let (available, held) = self.counts().await?;
        Ok(available.saturating_add_unsigned(held))
    }

    async fn counts(&self) -> Result<(i64, u64)> {
        let s = &self.s;
        let mut inv = PES_COUNTS.prepare_invoke();
        inv.key(&*s.key)
            .key(&*self.leases)
            .key(&*s.channel)
            .arg(now_ms())
            .arg(s.client.publish_cmd);
        let (available, held): (i64, i64) = self.run(&inv).await?;
        Ok((available, held.unsigned_abs()))
    }

    /// Removes the semaphore and its leases (`DEL`): whether there was anything.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future after the request was sent leaves it to Redis.
    pub async fn delete(&self) -> Result<bool> {
        let mut del = redis::cmd("DEL");
        del.arg(&*self.s.key).arg(&*self.leases);
        let cfg = &self.s.client.config;
        let n: i64 = script::cmd(&self.s.client.conn, cfg.command_timeout, &self.s.key, &del).await?;
        Ok(n > 0)
    }

    async fn run<T: redis::FromRedisValue>(&self, inv: &ScriptInvocation<'_>) -> Result<T> {
        let c = &self.s.client;
        script::run(&c.conn, c.config.command_timeout, &self.s.key, inv).await
    }

    /// Waits for `n` permits until `deadline`: their ids, `None` when it passed first.
    async fn wait(
        &self,
        n: i64,
        lease: Option<Duration>,
        deadline: Option<Instant>,
    ) -> Result<Option<Vec<PermitId>>> {
        let target = WaitTarget {
            client: &self.s.client,
            key: &self.s.key,
            channel: &self.s.channel,
            kind: "expirable semaphore",
            messages: crate::pubsub::Messages::Permits,
        };
        target
            .until(deadline, || async {
                Ok(match self.attempt(n, lease).await? {
                    Ok(ids) => Step::Done(ids),
                    Err(retry_at) => Step::Again {
                        at: retry_at,
                        idle: false,
                    },
                })
            })
            .await
    }

    /// One attempt to take `n` permits under fresh ids, settled if its reply is lost: the ids,
    /// or when to try again at the latest (a lease ends then).
    async fn attempt(
        &self,
        n: i64,
        lease: Option<Duration>,
    ) -> Result<std::result::Result<Vec<PermitId>, Option<Instant>>> {
        let s = &self.s;
        s.open()?;
        let cfg = &s.client.config;
        let ids: Vec<PermitId> = (0..n).map(|_| PermitId::random()).collect();
        let latch = crate::name::fresh_latch(&s.key);
        let now = now_ms();
        let mut inv = PES_ACQUIRE.prepare_invoke();
        inv.key(&*s.key)
            .key(&*self.leases)
            .key(&*s.channel)
            .key(&latch)
            .arg(n)
            .arg(lease_end(&s.key, lease)?)
            .arg(now)
            .arg(NO_LEASE)
            .arg(s.client.publish_cmd)
            .arg(cfg.settle_window_ms());
        for id in &ids {
            inv.arg(&id.as_bytes()[..]);
        }
        let give_back = ReleaseIds {
            sem: self.clone(),
            ids: ids.clone(),
        };
        // replicas known to lag: a required acquisition fails before anything is sent
        s.client.replica_sync.refuse_now(&s.key)?;
        let pending = Pending::new(&s.client, &s.key, latch, give_back);
        let sent = s
            .client
            .replica_sync
            .run::<Value>(&s.client.conn, cfg.command_timeout, &s.key, &inv)
            .await;
        match sent {
            Ok((v, synced)) => {
                // a reply that cannot be read leaves the attempt armed: it is settled in the
                // background, and what it took (if anything) given back
                let granted = decode_grant(&s.key, &v)?;
                let give_back = pending.land(granted)?;
                if granted {
                    if let Some(g) = give_back {
                        if let Some(wanted) = s.client.replica_sync.unconfirmed(&synced) {
                            let undo = crate::synchronizer::pending::give_back(&s.client, &s.key, g);
                            return Err(s.client.replica_sync.undo_unconfirmed(&s.key, wanted, undo).await);
                        }
                    }
                    tracing::debug!(key = %s.key, permits = n, first = %ids[0], "expirable semaphore: acquired");
                    return Ok(Ok(ids));
                }
                Ok(Err(retry_at(&v, now)))
            }
            Err(e) if e.is_ambiguous() => match pending.settle().await {
                Ok(true) => {
                    tracing::debug!(key = %s.key, error = %e, "expirable semaphore: acquire reply was lost, but Redis had granted it");
                    Ok(Ok(ids))
                }
                Err(Error::Shutdown) => Err(Error::Shutdown), // granted: given back
                Ok(false) | Err(_) => Err(e),
            },
            Err(e) => {
                pending.land(false)?;
                Err(e)
            }
        }
    }
}

/// When the earliest lease of a refusal `{0, end}` ends, as an instant (`end` was read against
/// `now`, in epoch ms); `None` when no lease will end.
fn retry_at(v: &Value, now: i64) -> Option<Instant> {
    let Value::Array(items) = v else { return None };
    let end = match items.get(1)? {
        Value::Int(-1) => return None,
        Value::Int(ms) => *ms,
        Value::BulkString(text) => std::str::from_utf8(text).ok()?.parse::<f64>().ok()? as i64,
        _ => return None,
    };
    // one ms past the end: the reclaim takes leases that ended at or before its `now`
    let wait = end.saturating_sub(now).saturating_add(1).max(0);
    Some(crate::deadline::after(
        Instant::now(),
        Duration::from_millis(wait.unsigned_abs()),
    ))
}
