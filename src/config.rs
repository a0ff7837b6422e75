//! Client configuration, with Redisson's names and defaults.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::name::NameMapper;

/// Which pub/sub commands carry unlock notifications (`docs/protocol.md`, "Pub/sub").
///
/// Redisson uses classic `PUBLISH`/`SUBSCRIBE` everywhere except in Redis Cluster mode on servers
/// with sharded pub/sub (3.22+), where it uses `SPUBLISH`/`SSUBSCRIBE`. Both sides must agree, or
/// waiters fall back to polling. In a cluster shared with Redisson:
///
/// | Redisson in the fleet                          | pick                  |
/// |------------------------------------------------|-----------------------|
/// | only 3.22+ (`shardedSubscriptionMode` AUTO/ON) | `Auto` (or `Sharded`) |
/// | only < 3.22, or 3.29+ with `OFF`               | `Classic`             |
/// | both kinds (an upgrade in progress)            | `Both`                |
///
/// Outside a cluster every mode but `Sharded` means classic pub/sub, as in Redisson.
///
/// # Examples
///
/// ```
/// use redisson_lock::{Config, PublishMode};
/// // a cluster where Redisson 3.17 and 3.52 services share locks
/// let config = Config::default().with_publish_mode(PublishMode::Both);
/// # let _ = config;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PublishMode {
    /// Do what Redisson does for the deployment: sharded in a cluster that supports it, else classic.
    #[default]
    Auto,
    /// Always `PUBLISH` / `SUBSCRIBE`.
    Classic,
    /// Always `SPUBLISH` / `SSUBSCRIBE` (Redis 7+).
    Sharded,
    /// In a cluster with sharded pub/sub, both: every unlock publishes on the classic *and* the
    /// sharded channel (in one script call), and waiters listen on both (`SUBSCRIBE` +
    /// `SSUBSCRIBE`). For a fleet that runs Redisson < 3.22 (classic) and ≥ 3.22 (sharded) side
    /// by side, e.g. while upgrading service by service: waiters of either kind are woken by Rust
    /// unlocks, and unlocks of either kind wake Rust waiters. Costs one more message per unlock
    /// and one more subscription per waited-on lock. Outside a cluster (or on a cluster without
    /// sharded pub/sub) it is [`Classic`](Self::Classic).
    ///
    /// ```no_run
    /// # async fn demo() -> redisson_lock::Result<()> {
    /// use redisson_lock::{Client, Config, PublishMode};
    /// let client = Client::builder()
    ///     .cluster(["redis://10.0.0.1:7000/", "redis://10.0.0.2:7000/"])
    ///     .config(Config::default().with_publish_mode(PublishMode::Both))
    ///     .build()
    ///     .await?;
    /// # let _ = client; Ok(()) }
    /// ```
    Both,
}

/// Whether lock writes wait for replicas (`WAIT`), Redisson's `checkLockSyncedSlaves`.
///
/// Redis replicates asynchronously: a lock granted by a master that fails over before its
/// replicas have the write is gone on the new master, and a second holder gets in. Waiting for
/// a replica narrows that window (it does not close it: a replica that acknowledged can still lose
/// the race to be promoted). See the crate README, "Deployments".
///
/// ```
/// use redisson_lock::{Config, ReplicaSync};
/// let config = Config::default().with_replica_sync(ReplicaSync::Required);
/// # let _ = config;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ReplicaSync {
    /// What Redisson does by default: [`Required`](Self::Required) on a client built with
    /// [`ClientBuilder::sentinel`](crate::ClientBuilder::sentinel) or on a cluster connection
    /// (Redisson checks synced replicas in every mode but single-server), [`Off`](Self::Off) on
    /// a single server or a connection of your own. In a cluster the `WAIT` goes to the master of
    /// the lock's slot, with that master's replica count.
    #[default]
    Auto,
    /// Never send `WAIT`.
    Off,
    /// Send `WAIT <connected replicas> <replica_sync_timeout>` after every lock write and log a
    /// warning when no replica confirmed; the operation's result is kept.
    BestEffort,
    /// As `BestEffort`, but an acquisition no replica confirmed is undone at once (released,
    /// which also wakes waiters) and retried like a failed attempt (`retry_attempts`,
    /// `retry_interval`); when retries run out the caller gets
    /// [`Error::ReplicasNotSynced`](crate::Error::ReplicasNotSynced). Unlocks, renewals and force
    /// unlocks that no replica confirmed are kept and logged (they already took effect on the
    /// master; undoing them would be worse). A replica that left the master (a cut link, a
    /// restart) is still waited for during the next minute, so an acquisition while the master
    /// is cut off from its replicas fails instead of being granted unconfirmed; a new master (a
    /// failover) counts its own replicas at once. With no replica seen at all nothing is waited
    /// for.
    Required,
}

/// How soon a hold that disappears from Redis is reported through a guard's `lost()`.
///
/// The watchdog's renewal (every `lock_watchdog_timeout / 3`) and the hold's own deadline notice
/// a loss in any deployment, up to one renewal period after it. With
/// [`Tracking`](Self::Tracking) the client also asks Redis to tell it when a held key changes
/// (`CLIENT TRACKING` on its pub/sub connection): a `DEL`, `UNLINK`, `FLUSHALL`/`FLUSHDB`, an
/// expiry, a force-unlock (Redisson's or this crate's) or another type written under the lock's
/// name is reported about one round trip after Redis applied it, and a dropped connection (a
/// restart, a failover) makes the client re-read every hold once it is back. A change is never
/// reported on its own word: the client re-reads its holds on the key, and only a hold whose
/// field is gone is lost (a renewal, a re-entry or another reader joining is not). See the crate
/// README, "Knowing a lock is lost".
///
/// ```
/// use redisson_lock::{Config, LossDetection};
/// let config = Config::default().with_loss_detection(LossDetection::Renewal);
/// assert_eq!(config.loss_detection(), LossDetection::Renewal);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LossDetection {
    /// Redis tells the client when a held key changes, where it can: Redis 6 or later (a single
    /// server, a connection of your own, a Sentinel master, a cluster) whose ACL allows
    /// `CLIENT TRACKING` on the pub/sub connection. Elsewhere (older servers, a refused
    /// `CLIENT TRACKING`, no pub/sub connection) the client falls back to
    /// [`Renewal`](Self::Renewal) and logs why;
    /// `redisson-lock doctor` says which one a deployment gets.
    #[default]
    Tracking,
    /// Only the watchdog's renewal and the hold's deadline notice a loss (what Redisson does).
    Renewal,
}

/// Settings of a [`Client`](crate::Client). Every setting has Redisson's name and default.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use redisson_lock::{Config, NameMapper};
///
/// let config = Config::default()
///     .with_lock_watchdog_timeout(Duration::from_secs(10))
///     .with_name_mapper(NameMapper::prefix("billing:"));
/// assert_eq!(config.lock_watchdog_timeout(), Duration::from_secs(10));
/// ```
#[derive(Clone, Debug)]
pub struct Config {
    pub(crate) lock_watchdog_timeout: Duration,
    pub(crate) watchdog_batch_size: usize,
    pub(crate) subscription_timeout: Duration,
    pub(crate) name_mapper: NameMapper,
    pub(crate) publish_mode: PublishMode,
    pub(crate) command_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) subscribed_poll_interval: Duration,
    pub(crate) retry_attempts: u32,
    pub(crate) retry_interval: Duration,
    pub(crate) fair_lock_wait_timeout: Duration,
    pub(crate) sentinel_scan_interval: Duration,
    pub(crate) replica_sync: ReplicaSync,
    pub(crate) replica_sync_timeout: Duration,
    pub(crate) metrics_lock_names: bool,
    pub(crate) loss_detection: LossDetection,
}

/// The longest duration the crate sends to Redis or accepts in its configuration:
/// 10^12 ms (about 31.7 years).
///
/// Redis rejects a `PEXPIRE` that overflows its clock, and Lua prints numbers of 10^14 and more
/// in exponent form (which Redis then rejects), so leases and timeouts are capped well below
/// both, with room for the scripts' sums (a write re-entry adds its lease to the TTL).
pub const MAX_DURATION: Duration = Duration::from_millis(MAX_MS);
pub(crate) const MAX_MS: u64 = 1_000_000_000_000;
/// The most retries [`Config::with_retry_attempts`] accepts.
const MAX_RETRY_ATTEMPTS: u32 = 1_000;

impl Default for Config {
    fn default() -> Self {
        Config {
            lock_watchdog_timeout: Duration::from_millis(30_000),
            watchdog_batch_size: 100,
            subscription_timeout: Duration::from_millis(7_500),
            name_mapper: NameMapper::identity(),
            publish_mode: PublishMode::Auto,
            command_timeout: Duration::from_millis(3_000),
            connect_timeout: Duration::from_millis(10_000),
            poll_interval: Duration::from_millis(1_000),
            subscribed_poll_interval: Duration::from_millis(30_000),
            retry_attempts: 4,
            retry_interval: Duration::from_millis(1_500),
            fair_lock_wait_timeout: Duration::from_millis(300_000),
            sentinel_scan_interval: Duration::from_millis(1_000),
            replica_sync: ReplicaSync::Auto,
            replica_sync_timeout: Duration::from_millis(1_000),
            metrics_lock_names: false,
            loss_detection: LossDetection::Tracking,
        }
    }
}

impl Config {
    /// Redisson's `lockWatchdogTimeout` (default 30 s): the TTL of a lock taken without a lease.
    /// The watchdog renews such locks every `timeout / 3`.
    pub fn with_lock_watchdog_timeout(mut self, timeout: Duration) -> Self {
        self.lock_watchdog_timeout = timeout;
        self
    }

    /// The configured watchdog timeout.
    pub fn lock_watchdog_timeout(&self) -> Duration {
        self.lock_watchdog_timeout
    }

    /// Redisson's `lockWatchdogBatchSize` (default 100): at most this many locks per renewal call.
    pub fn with_watchdog_batch_size(mut self, size: usize) -> Self {
        self.watchdog_batch_size = size;
        self
    }

    /// Redisson's `subscriptionTimeout` (default 7.5 s): how long subscribing to an unlock
    /// channel may take before a waiter falls back to polling.
    pub fn with_subscription_timeout(mut self, timeout: Duration) -> Self {
        self.subscription_timeout = timeout;
        self
    }

    /// Redisson's `NameMapper` (default: identity).
    pub fn with_name_mapper(mut self, mapper: NameMapper) -> Self {
        self.name_mapper = mapper;
        self
    }

    /// Classic, sharded, both or automatic pub/sub (default [`PublishMode::Auto`]). The mode is
    /// resolved once, when the client is built, and used both to publish and to subscribe.
    pub fn with_publish_mode(mut self, mode: PublishMode) -> Self {
        self.publish_mode = mode;
        self
    }

    /// Redisson's `timeout` (default 3 s): the longest wait for one Redis reply.
    pub fn with_command_timeout(mut self, timeout: Duration) -> Self {
        self.command_timeout = timeout;
        self
    }

    /// Redisson's `connectTimeout` (default 10 s).
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How often a waiter re-tries when it cannot count on unlock messages (default 1 s): no
    /// pub/sub connection, a SUBSCRIBE that failed, pub/sub backing off after failures. Also
    /// how often the client checks, in one batched call, whether the keys its subscribed
    /// waiters wait on still exist, so a lock deleted without a message (a raw `DEL`, an
    /// operator's cleanup, a message lost on the way) is noticed within one interval.
    ///
    /// Not in Redisson (its waiters sleep the holder's TTL).
    ///
    /// ```
    /// use std::time::Duration;
    /// let config = redisson_lock::Config::default().with_poll_interval(Duration::from_millis(500));
    /// # let _ = config;
    /// ```
    pub fn with_poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// The longest a subscribed waiter sleeps between attempts (default 30 s).
    ///
    /// A waiter that listens on the lock's channel is woken by the unlock message; between
    /// messages it sleeps, like Redisson's, until the holder's TTL runs out, but at most this
    /// long. So thousands of waiters on held locks cost almost nothing (10,000 waiters on
    /// watchdog holds: about one attempt per waiter every 25 s). A lost message costs at most
    /// [`poll_interval`](Config::with_poll_interval) when the lock's key is gone (the batched
    /// existence check), or this long when the lock became free without its key going away
    /// (a read lock left behind by a writer that downgraded).
    ///
    /// ```
    /// use std::time::Duration;
    /// // re-try at least every 5 s even while subscribed
    /// let config = redisson_lock::Config::default().with_subscribed_poll_interval(Duration::from_secs(5));
    /// # let _ = config;
    /// ```
    pub fn with_subscribed_poll_interval(mut self, interval: Duration) -> Self {
        self.subscribed_poll_interval = interval;
        self
    }

    /// Redisson's `retryAttempts` (default 4, as in Redisson 3.48+): how many times a request
    /// that failed with a connection error or a timeout is tried again before the call gives up
    /// with that error.
    ///
    /// * `lock()` / `lock_with_lease()` against a Redis that stays unreachable fail after the
    ///   first attempt and this many retries, like Redisson's `lock()` (they do not wait forever).
    ///   Consecutive failures count; a reply from Redis (even "held by someone else") resets them.
    /// * `try_lock_for(wait)` stops at its wait or after this many consecutive failures,
    ///   whichever comes first.
    /// * An unlock, like every write the client sends again (a semaphore's release, a fair
    ///   waiter leaving the queue), is re-sent with the same request id after an error that
    ///   leaves its outcome unknown or says it did not run for a passing reason (no connection,
    ///   a failover, Redis out of memory), up to this many times in a row: it applies at most
    ///   once. An unlock or a release whose caller stopped waiting is finished in the background.
    ///
    /// An acquisition whose reply was lost is never simply re-sent (it may have been applied):
    /// the client asks Redis whether it was, and either keeps that hold or makes sure it can
    /// never take effect, before it tries again.
    pub fn with_retry_attempts(mut self, attempts: u32) -> Self {
        self.retry_attempts = attempts;
        self
    }

    /// Redisson's `fairLockWaitTimeout` (3.46+; default 5 min, as in Redisson since 3.13.3): how
    /// long a fair-lock waiter that asked without a wait of its own (`lock()`, `try_lock()`) keeps
    /// its place in the queue; a waiter with a wait (`try_lock_for(w)`) uses `w`. A waiter that
    /// crashes blocks the ones behind it for at most this long (ours leave the queue when they
    /// stop waiting, also when cancelled).
    pub fn with_fair_lock_wait_timeout(mut self, timeout: Duration) -> Self {
        self.fair_lock_wait_timeout = timeout;
        self
    }

    /// Redisson's `scanInterval` of the sentinel config (default 1 s): how often a client built
    /// with [`ClientBuilder::sentinel`](crate::ClientBuilder::sentinel) asks the sentinels which
    /// node is the master, so that an idle client, and its pub/sub connection, follow a failover.
    /// (Commands that meet `READONLY`, `MASTERDOWN`, `LOADING` or a broken connection ask at once.)
    ///
    /// ```
    /// use std::time::Duration;
    /// let config = redisson_lock::Config::default().with_sentinel_scan_interval(Duration::from_millis(500));
    /// # let _ = config;
    /// ```
    pub fn with_sentinel_scan_interval(mut self, interval: Duration) -> Self {
        self.sentinel_scan_interval = interval;
        self
    }

    /// Whether lock writes wait for replicas (Redisson's `checkLockSyncedSlaves`); default
    /// [`ReplicaSync::Auto`].
    ///
    /// ```
    /// let config = redisson_lock::Config::default().with_replica_sync(redisson_lock::ReplicaSync::BestEffort);
    /// # let _ = config;
    /// ```
    pub fn with_replica_sync(mut self, mode: ReplicaSync) -> Self {
        self.replica_sync = mode;
        self
    }

    /// Redisson's `slavesSyncTimeout` (default 1 s): how long a `WAIT` after a lock write waits
    /// for replicas.
    ///
    /// ```
    /// use std::time::Duration;
    /// let config = redisson_lock::Config::default().with_replica_sync_timeout(Duration::from_millis(200));
    /// # let _ = config;
    /// ```
    pub fn with_replica_sync_timeout(mut self, timeout: Duration) -> Self {
        self.replica_sync_timeout = timeout;
        self
    }

    /// How soon a hold that disappears from Redis is reported (default
    /// [`LossDetection::Tracking`], where the deployment allows it).
    ///
    /// ```
    /// let config = redisson_lock::Config::default().with_loss_detection(redisson_lock::LossDetection::Renewal);
    /// # let _ = config;
    /// ```
    pub fn with_loss_detection(mut self, mode: LossDetection) -> Self {
        self.loss_detection = mode;
        self
    }

    /// With the `metrics` feature: also label the per-lock metrics with the lock's name (default
    /// off: names are unbounded, and every distinct name is a new time series). See the crate
    /// README, "Metrics".
    ///
    /// ```
    /// let config = redisson_lock::Config::default().with_metrics_lock_names(true);
    /// # let _ = config;
    /// ```
    pub fn with_metrics_lock_names(mut self, on: bool) -> Self {
        self.metrics_lock_names = on;
        self
    }

    /// Redisson's `retryInterval` (default 1.5 s): the pause before a retry. Each pause is
    /// drawn between half and all of it (jitter), and never runs past a caller's wait.
    pub fn with_retry_interval(mut self, interval: Duration) -> Self {
        self.retry_interval = interval;
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
        let positive = |what: &str, d: Duration| millis(what, d).map(drop);
        positive("lock_watchdog_timeout", self.lock_watchdog_timeout)?;
        if self.lock_watchdog_timeout < Duration::from_millis(3) {
            return Err(Error::InvalidArgument(
                "lock_watchdog_timeout must be at least 3 ms (renewal runs every timeout/3)".into(),
            ));
        }
        positive("subscription_timeout", self.subscription_timeout)?;
        positive("command_timeout", self.command_timeout)?;
        positive("connect_timeout", self.connect_timeout)?;
        positive("poll_interval", self.poll_interval)?;
        positive("subscribed_poll_interval", self.subscribed_poll_interval)?;
        positive("retry_interval", self.retry_interval)?;
        positive("fair_lock_wait_timeout", self.fair_lock_wait_timeout)?;
        positive("sentinel_scan_interval", self.sentinel_scan_interval)?;
        positive("replica_sync_timeout", self.replica_sync_timeout)?;
        if self.retry_attempts > MAX_RETRY_ATTEMPTS {
            return Err(Error::InvalidArgument(format!(
                "retry_attempts must be at most {MAX_RETRY_ATTEMPTS}, got {}",
                self.retry_attempts
            )));
        }
        if self.watchdog_batch_size == 0 {
            return Err(Error::InvalidArgument(
                "watchdog_batch_size must be at least 1".into(),
            ));
        }
        Ok(())
    }

    /// The safety margin: a hold counts as lost once no grant or renewal succeeded within
    /// `lease - margin` of the request being sent, so the holder stops trusting it at least one
    /// command timeout (or a quarter of the lease, if shorter) before Redis may let it expire.
    pub(crate) fn lease_margin(&self, lease: Duration) -> Duration {
        self.command_timeout.min(lease / 4)
    }

    /// How often the watchdog renews a hold taken without a lease: a third of the watchdog
    /// timeout, as Redisson's.
    pub(crate) fn renewal_period(&self) -> Duration {
        self.lock_watchdog_timeout / 3
    }

    /// The TTL a hold taken without a lease gets and keeps, in ms (at least 1; the timeout is
    /// validated at connect: between 3 ms and [`MAX_DURATION`]).
    pub(crate) fn watchdog_ms(&self) -> u64 {
        (self
            .lock_watchdog_timeout
            .as_millis()
            .clamp(1, u128::from(MAX_MS))) as u64
    }

    /// How long `lease` can be trusted after the request that set it was sent.
    pub(crate) fn trusted_for(&self, lease: Duration) -> Duration {
        lease.saturating_sub(self.lease_margin(lease))
    }

    /// The window in which a request (and all its retries) can still reach Redis: the TTL of
    /// unlock and acquire latches. Saturating, at most [`MAX_DURATION`].
    pub(crate) fn retry_window_ms(&self) -> u64 {
        let per_try = self
            .command_timeout
            .saturating_add(self.retry_interval)
            .as_millis();
        let tries = u128::from(self.retry_attempts) + 1;
        per_try.saturating_mul(tries).clamp(1, u128::from(MAX_MS)) as u64
    }

    /// The settle window: how long the record an acquire attempt leaves in Redis lives
    /// (`redisson_unlock_latch:{name}:<attempt id>`, also the marker that cancels an attempt
    /// that never ran). It is the retry window (`(command_timeout + retry_interval) ×
    /// (retry_attempts + 1)`) plus one command timeout: 25.5 s with the defaults.
    ///
    /// An acquisition whose reply was lost (a timeout, a dropped connection, its future dropped)
    /// is settled by asking Redis whether the attempt took effect; the record must outlive that
    /// question. While Redis does not answer, the client asks again every command timeout plus
    /// retry interval, for at most the longer of this window and the watchdog timeout after the
    /// attempt was sent; the record only has to cover the time from when the attempt runs to
    /// the next question. An attempt still unsettled after that (Redis stalled longer) expires
    /// with its TTL if it ever runs. Records of attempts whose reply arrived are deleted at once
    /// (batched), and [`Client::shutdown`](crate::Client::shutdown) waits for that: a service
    /// that exits without `shutdown()` leaves its last records for at most this window.
    ///
    /// ```
    /// use std::time::Duration;
    /// let config = redisson_lock::Config::default();
    /// assert_eq!(config.settle_window(), Duration::from_millis(25_500));
    /// ```
    pub fn settle_window(&self) -> Duration {
        Duration::from_millis(self.settle_window_ms())
    }

    /// [`settle_window`](Self::settle_window) in ms, at most [`MAX_DURATION`].
    pub(crate) fn settle_window_ms(&self) -> u64 {
        let ct = self.command_timeout.as_millis().min(u128::from(MAX_MS)) as u64;
        self.retry_window_ms().saturating_add(ct).min(MAX_MS)
    }

    /// How long the client keeps asking whether an attempt whose reply was lost took effect:
    /// the longer of the settle window and the watchdog timeout (a Redis that stalls longer has
    /// already cost this client's holds their renewals). Also the bound of a shutdown.
    pub(crate) fn settling(&self) -> Duration {
        self.settle_window().max(self.lock_watchdog_timeout)
    }

    /// The settings of every connection manager the client opens (commands and pub/sub):
    /// command and connect timeouts, and reconnection backing off up to 2 s, or up to a sixth
    /// of the watchdog timeout when that is shorter: after a network outage the connection is
    /// tried at least twice per renewal period, so the holds' renewals resume before their
    /// trust runs out.
    pub(crate) fn manager_config(&self) -> redis::aio::ConnectionManagerConfig {
        let max_delay =
            (self.lock_watchdog_timeout / 6).clamp(Duration::from_millis(100), Duration::from_secs(2));
        redis::aio::ConnectionManagerConfig::new()
            .set_response_timeout(Some(self.command_timeout))
            .set_connection_timeout(Some(self.connect_timeout))
            .set_max_delay(max_delay)
    }

    /// A pause before retry number `n` (1-based): between half and all of `retry_interval`.
    pub(crate) fn retry_pause(&self) -> Duration {
        self.retry_interval.mul_f64(0.5 + 0.5 * fastrand::f64())
    }
}

/// Converts a lease or timeout to whole milliseconds, rejecting values below 1 ms and above
/// [`MAX_DURATION`] (before anything is sent, so a rejected call changes nothing).
pub(crate) fn millis(what: &str, d: Duration) -> Result<u64> {
    let ms = d.as_millis();
    if ms == 0 {
        return Err(Error::InvalidArgument(format!(
            "{what} must be at least 1 ms, got {d:?}"
        )));
    }
    if ms > u128::from(MAX_MS) {
        return Err(Error::InvalidArgument(format!(
            "{what} must be at most {MAX_MS} ms (about 31.7 years), got {d:?}"
        )));
    }
    Ok(ms as u64)
}

/// The getters: each is named after its value (`command_timeout()`), its setter after the same
/// value with `with_` in front (`with_command_timeout(d)`).
macro_rules! getters {
    ($($field:ident -> $ty:ty;)*) => {
        impl Config {
            $(
                #[doc = concat!("The value [`with_", stringify!($field), "`](Self::with_", stringify!($field), ") set (or its default).")]
                pub fn $field(&self) -> $ty {
                    self.$field.clone()
                }
            )*
        }
    };
}

getters! {
    watchdog_batch_size -> usize;
    subscription_timeout -> Duration;
    name_mapper -> NameMapper;
    publish_mode -> PublishMode;
    command_timeout -> Duration;
    connect_timeout -> Duration;
    poll_interval -> Duration;
    subscribed_poll_interval -> Duration;
    retry_attempts -> u32;
    retry_interval -> Duration;
    fair_lock_wait_timeout -> Duration;
    sentinel_scan_interval -> Duration;
    replica_sync -> ReplicaSync;
    replica_sync_timeout -> Duration;
    metrics_lock_names -> bool;
    loss_detection -> LossDetection;
}

#[cfg(test)]
mod tests {

    #[test]
    fn every_setter_has_a_getter_that_reads_it_back() {
        let d = Duration::from_millis(1234);
        let c = Config::default()
            .with_lock_watchdog_timeout(d)
            .with_watchdog_batch_size(7)
            .with_subscription_timeout(d)
            .with_publish_mode(PublishMode::Sharded)
            .with_command_timeout(d)
            .with_connect_timeout(d)
            .with_poll_interval(d)
            .with_subscribed_poll_interval(d)
            .with_retry_attempts(3)
            .with_retry_interval(d)
            .with_fair_lock_wait_timeout(d)
            .with_sentinel_scan_interval(d)
            .with_replica_sync(ReplicaSync::BestEffort)
            .with_replica_sync_timeout(d)
            .with_metrics_lock_names(true);
        assert_eq!(c.lock_watchdog_timeout(), d);
        assert_eq!(c.watchdog_batch_size(), 7);
        assert_eq!(c.subscription_timeout(), d);
        assert_eq!(c.publish_mode(), PublishMode::Sharded);
        assert_eq!(c.command_timeout(), d);
        assert_eq!(c.connect_timeout(), d);
        assert_eq!(c.poll_interval(), d);
        assert_eq!(c.subscribed_poll_interval(), d);
        assert_eq!(c.retry_attempts(), 3);
        assert_eq!(c.retry_interval(), d);
        assert_eq!(c.fair_lock_wait_timeout(), d);
        assert_eq!(c.sentinel_scan_interval(), d);
        assert_eq!(c.replica_sync(), ReplicaSync::BestEffort);
        assert_eq!(c.replica_sync_timeout(), d);
        assert!(c.metrics_lock_names());
        assert_eq!(c.name_mapper().map("a"), "a");
    }
    use super::*;

    #[test]
    fn defaults_are_redissons() {
        let c = Config::default();
        assert_eq!(c.lock_watchdog_timeout, Duration::from_secs(30));
        assert_eq!(c.watchdog_batch_size, 100);
        assert_eq!(c.subscription_timeout, Duration::from_millis(7500));
        assert_eq!(c.publish_mode, PublishMode::Auto);
        c.validate().unwrap();
    }

    #[test]
    fn zero_durations_are_rejected() {
        assert!(Config::default()
            .with_lock_watchdog_timeout(Duration::ZERO)
            .validate()
            .is_err());
        assert!(Config::default().with_watchdog_batch_size(0).validate().is_err());
        assert!(millis("lease", Duration::from_micros(999)).is_err());
        assert_eq!(millis("lease", Duration::from_secs(2)).unwrap(), 2000);
    }

    #[test]
    fn absurd_durations_are_rejected_not_panics() {
        for d in [
            Duration::MAX,
            Duration::from_millis(u64::MAX - 1),
            MAX_DURATION + Duration::from_millis(1),
        ] {
            assert!(millis("lease", d).is_err(), "{d:?}");
            for c in [
                Config::default().with_command_timeout(d),
                Config::default().with_connect_timeout(d),
                Config::default().with_lock_watchdog_timeout(d),
                Config::default().with_subscription_timeout(d),
                Config::default().with_poll_interval(d),
                Config::default().with_subscribed_poll_interval(d),
                Config::default().with_retry_interval(d),
                Config::default().with_fair_lock_wait_timeout(d),
            ] {
                assert!(matches!(c.validate(), Err(Error::InvalidArgument(_))), "{c:?}");
            }
        }
        assert_eq!(millis("lease", MAX_DURATION).unwrap(), MAX_MS);
        assert!(Config::default()
            .with_retry_attempts(u32::MAX)
            .validate()
            .is_err());
        // the largest accepted values never overflow the derived windows
        let big = Config::default()
            .with_command_timeout(MAX_DURATION)
            .with_retry_interval(MAX_DURATION)
            .with_retry_attempts(MAX_RETRY_ATTEMPTS);
        big.validate().unwrap();
        assert_eq!(big.retry_window_ms(), MAX_MS);
        assert!(big.trusted_for(MAX_DURATION) < MAX_DURATION);
    }
}
