//! Client configuration, with Redisson's names and defaults.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::name::NameMapper;

/// Which pub/sub commands carry unlock notifications (protocol §8.1).
///
/// Redisson uses classic `PUBLISH`/`SUBSCRIBE` everywhere except in Redis Cluster mode on servers
/// with sharded pub/sub (3.22+), where it uses `SPUBLISH`/`SSUBSCRIBE`. Both sides must agree, or
/// waiters fall back to polling.
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
///     .lock_watchdog_timeout(Duration::from_secs(10))
///     .name_mapper(NameMapper::prefix("billing:"));
/// assert_eq!(config.get_lock_watchdog_timeout(), Duration::from_secs(10));
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
    pub(crate) unlock_retries: usize,
}

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
            unlock_retries: 3,
        }
    }
}

impl Config {
    /// Redisson's `lockWatchdogTimeout` (default 30 s): the TTL of a lock taken without a lease.
    /// The watchdog renews such locks every `timeout / 3`.
    pub fn lock_watchdog_timeout(mut self, timeout: Duration) -> Self {
        self.lock_watchdog_timeout = timeout;
        self
    }

    /// The configured watchdog timeout.
    pub fn get_lock_watchdog_timeout(&self) -> Duration {
        self.lock_watchdog_timeout
    }

    /// Redisson's `lockWatchdogBatchSize` (default 100): at most this many locks per renewal call.
    pub fn watchdog_batch_size(mut self, size: usize) -> Self {
        self.watchdog_batch_size = size;
        self
    }

    /// Redisson's `subscriptionTimeout` (default 7.5 s): how long subscribing to an unlock
    /// channel may take before a waiter falls back to polling.
    pub fn subscription_timeout(mut self, timeout: Duration) -> Self {
        self.subscription_timeout = timeout;
        self
    }

    /// Redisson's `NameMapper` (default: identity).
    pub fn name_mapper(mut self, mapper: NameMapper) -> Self {
        self.name_mapper = mapper;
        self
    }

    /// Classic, sharded or automatic pub/sub (default [`PublishMode::Auto`]).
    pub fn publish_mode(mut self, mode: PublishMode) -> Self {
        self.publish_mode = mode;
        self
    }

    /// Redisson's `timeout` (default 3 s): the longest wait for one Redis reply.
    pub fn command_timeout(mut self, timeout: Duration) -> Self {
        self.command_timeout = timeout;
        self
    }

    /// Redisson's `connectTimeout` (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The longest a waiter sleeps between attempts (default 1 s), whatever the holder's TTL.
    ///
    /// Waiters are woken by unlock messages; this bound only matters when a message is lost
    /// (or a holder releases without publishing, like Redisson's spin lock): then a waiter
    /// notices within one poll interval instead of the holder's whole TTL. Not in Redisson.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// How often an unlock is retried (with the same request id, so at most one release
    /// happens) after a connection error (default 3).
    pub fn unlock_retries(mut self, retries: usize) -> Self {
        self.unlock_retries = retries;
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
        let positive = |what: &str, d: Duration| {
            if d.as_millis() == 0 {
                Err(Error::InvalidArgument(format!(
                    "{what} must be at least 1 ms, got {d:?}"
                )))
            } else {
                Ok(())
            }
        };
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
        if self.watchdog_batch_size == 0 {
            return Err(Error::InvalidArgument(
                "watchdog_batch_size must be at least 1".into(),
            ));
        }
        Ok(())
    }

    /// The safety margin S3 of the fault spec: a hold counts as lost once no grant or renewal
    /// succeeded within `lease - margin`.
    pub(crate) fn lease_margin(&self, lease: Duration) -> Duration {
        self.command_timeout.min(lease / 4)
    }
}

/// Converts a lease or wait to whole milliseconds, rejecting values below 1 ms.
pub(crate) fn millis(what: &str, d: Duration) -> Result<u64> {
    let ms = d.as_millis();
    if ms == 0 {
        return Err(Error::InvalidArgument(format!(
            "{what} must be at least 1 ms, got {d:?}"
        )));
    }
    u64::try_from(ms).map_err(|_| Error::InvalidArgument(format!("{what} is too large: {d:?}")))
}

#[cfg(test)]
mod tests {
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
            .lock_watchdog_timeout(Duration::ZERO)
            .validate()
            .is_err());
        assert!(Config::default().watchdog_batch_size(0).validate().is_err());
        assert!(millis("lease", Duration::from_micros(999)).is_err());
        assert_eq!(millis("lease", Duration::from_secs(2)).unwrap(), 2000);
    }
}
