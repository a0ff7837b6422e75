//! Pub/sub health: why a command failed, and the backoff that makes waiters poll instead of
//! spending their budget on SUBSCRIBEs while pub/sub is failing.

use std::time::{Duration, Instant};

use super::Hub;
use crate::error::{Error, Result};

/// First backoff after pub/sub failed; doubles with each further failure.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
/// Longest backoff.
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// Why a pub/sub command failed.
#[derive(Clone, Debug)]
pub(super) enum Failure {
    Redis(redis::RedisError),
    Timeout(Duration),
    /// In [`PubSubCommands::Both`](super::PubSubCommands::Both): the first command of the pair succeeded, the
    /// second failed (so the server's state did change).
    Partial(Box<Failure>),
}

impl Failure {
    pub(super) fn to_error(&self) -> Error {
        match self {
            Failure::Redis(e) => Error::Redis(e.clone()),
            Failure::Timeout(d) => Error::CommandTimeout(*d),
            Failure::Partial(f) => f.to_error(),
        }
    }

    /// The server answered with an error: the command ran and changed nothing.
    pub(super) fn refused(&self) -> bool {
        matches!(self, Failure::Redis(e) if e.code().is_some())
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Redis(e) => write!(f, "{e}"),
            Failure::Timeout(d) => write!(f, "no reply within {d:?}"),
            Failure::Partial(inner) => write!(f, "{inner} (after the classic command succeeded)"),
        }
    }
}

/// Pub/sub health: consecutive failures and when the next probe may go out.
#[derive(Default)]
pub(super) struct Health {
    failures: u32,
    retry_at: Option<Instant>,
    last: Option<Failure>,
}

impl Health {
    pub(super) fn backoff(failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(16);
        BACKOFF_MIN.saturating_mul(1 << doublings).min(BACKOFF_MAX)
    }

    pub(super) fn is_healthy(&self) -> bool {
        self.failures == 0
    }

    /// May a caller that needs a new SUBSCRIBE go ahead? While unhealthy, one caller per backoff
    /// period is let through (to probe); the others get the last failure at once.
    pub(super) fn admit(&mut self, now: Instant) -> Result<()> {
        if self.failures == 0 {
            return Ok(());
        }
        match self.retry_at {
            Some(at) if now < at => Err(self
                .last
                .as_ref()
                .map_or(Error::CommandTimeout(Duration::ZERO), Failure::to_error)),
            _ => {
                self.retry_at = Some(now + Self::backoff(self.failures));
                Ok(())
            }
        }
    }

    pub(super) fn succeeded(&mut self) {
        if self.failures > 0 {
            tracing::info!(failures = self.failures, "pub/sub healthy again");
        }
        *self = Health::default();
    }

    pub(super) fn failed(&mut self, now: Instant, failure: &Failure) {
        if self.failures == 0 {
            tracing::warn!(error = %failure, "pub/sub unhealthy: waiters poll until it recovers");
        }
        self.failures = self.failures.saturating_add(1);
        self.retry_at = Some(now + Self::backoff(self.failures));
        self.last = Some(failure.clone());
    }
}

impl Hub {
    pub(super) fn record(&self, res: &std::result::Result<(), Failure>) {
        let mut health = self.health.lock();
        match res {
            Ok(()) => health.succeeded(),
            Err(f) => health.failed(Instant::now(), f),
        }
    }
}
