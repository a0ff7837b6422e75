//! Waiting for a synchronizer's state in Redis: one step (a read or an acquisition attempt) and,
//! until it succeeds, a sleep woken by a message on the synchronizer's channel, by a retry time
//! the step names (a permit's lease ending), or by the fallback poll.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::inner::ClientInner;
use crate::metrics;
use crate::pubsub::{Messages, Subscription};

/// What one step found.
pub(crate) enum Step<T> {
    /// Done: the wait ends with this value.
    Done(T),
    /// Not yet; try again after a message, the poll interval, or at the latest at this instant
    /// (when something is known to change then).
    Again(Option<Instant>),
}

/// The synchronizer being waited on.
pub(crate) struct Waiter<'a> {
    pub client: &'a Arc<ClientInner>,
    /// Its key (named in logs and errors).
    pub key: &'a Arc<str>,
    /// The channel whose messages say that the state may have changed.
    pub channel: &'a str,
    /// The metrics' `kind` label (`latch`, `semaphore`, ...).
    pub kind: &'static str,
    /// What the channel's messages mean for its local waiters.
    pub messages: Messages,
}

impl Waiter<'_> {
    /// Runs `step` until it is done or `deadline` passes (`None`: no deadline): `Ok(None)` when
    /// the deadline passed first (the error of the last step when that one failed). The channel is subscribed after the first step that is not
    /// done, and read again (`step` again) once subscribed, so no message is missed; a transient
    /// error of a step is tried again after the retry interval, up to `retry_attempts` times in
    /// a row.
    ///
    /// Cancel safe when `step` is: dropping the wait leaves the channel (unsubscribed once no
    /// local waiter uses it).
    pub(crate) async fn until<T, F, Fut>(&self, deadline: Option<Instant>, mut step: F) -> Result<Option<T>>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<Step<T>>>,
    {
        let client = self.client;
        let cfg = &client.config;
        let labels = metrics::Labels::new(self.kind, self.key, cfg.metrics_lock_names);
        let start = Instant::now();
        let mut waiting: Option<metrics::Waiting> = None;
        let mut sub: Option<Subscription> = None;
        let mut failures: u32 = 0;
        let mut steps: u32 = 0;
        let ended = |outcome| metrics::acquisition(&labels, start, outcome);
        loop {
            if client.holds.is_closed() {
                ended(metrics::Outcome::Error);
                return Err(Error::Shutdown);
            }
            // listen before the step: a message sent after it wakes the sleep below
            let chan = sub.as_ref().map(|s| s.channel());
            let notified = chan.as_ref().map(|c| c.notify.notified());
            let mut notified = std::pin::pin!(notified);
            if let Some(n) = notified.as_mut().as_pin_mut() {
                n.enable();
            }
            steps += 1;
            let mut retry_at = None;
            match step().await {
                Ok(Step::Done(v)) => {
                    ended(metrics::Outcome::Acquired {
                        attempts: steps,
                        handoff: false,
                    });
                    return Ok(Some(v));
                }
                Ok(Step::Again(at)) => {
                    failures = 0;
                    retry_at = at;
                }
                Err(e) if e.is_transient() && failures < cfg.retry_attempts => {
                    failures += 1;
                    tracing::debug!(key = %self.key, kind = self.kind, error = %e, "waiting: a step failed; retrying");
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        // no time left to retry: the failure is the answer, not a timeout
                        ended(metrics::Outcome::Error);
                        return Err(e);
                    }
                }
                Err(e) => {
                    ended(metrics::Outcome::Error);
                    return Err(e);
                }
            }
            let remaining = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if remaining == Some(Duration::ZERO) {
                ended(metrics::Outcome::Timeout);
                return Ok(None);
            }
            waiting.get_or_insert_with(|| metrics::Waiting::new(&labels));
            let closing = client.holds.closing();
            let mut closing = std::pin::pin!(closing);
            if client.holds.is_closed() {
                ended(metrics::Outcome::Error);
                return Err(Error::Shutdown);
            }
            if (sub.is_none() || sub.as_ref().is_some_and(|s| s.is_stale())) && client.hub.has_connection() {
                let budget = remaining.map_or(cfg.subscription_timeout, |r| r.min(cfg.subscription_timeout));
                let subscribed = tokio::select! {
                    _ = closing.as_mut() => {
                        ended(metrics::Outcome::Error);
                        return Err(Error::Shutdown);
                    }
                    s = client.hub.subscribe(self.channel, self.messages, budget) => s,
                };
                match subscribed {
                    Ok(s) => {
                        sub = Some(s);
                        continue; // subscribed: step again before sleeping
                    }
                    Err(e) => {
                        tracing::debug!(key = %self.key, kind = self.kind, error = %e, "waiting: could not subscribe; polling instead");
                        sub = None;
                    }
                }
            }
            let listening = sub.as_ref().is_some_and(|s| !s.is_stale());
            let mut nap = if failures > 0 {
                cfg.retry_pause()
            } else if listening {
                cfg.subscribed_poll_interval
            } else {
                cfg.poll_interval
            };
            if let Some(r) = remaining {
                nap = nap.min(r);
            }
            if let Some(at) = retry_at {
                nap = nap.min(at.saturating_duration_since(Instant::now()));
            }
            match notified.as_mut().as_pin_mut() {
                Some(n) => tokio::select! {
                    _ = closing.as_mut() => {
                        ended(metrics::Outcome::Error);
                        return Err(Error::Shutdown);
                    }
                    _ = n => {}
                    _ = tokio::time::sleep(nap) => {}
                },
                None => tokio::select! {
                    _ = closing.as_mut() => {
                        ended(metrics::Outcome::Error);
                        return Err(Error::Shutdown);
                    }
                    _ = tokio::time::sleep(nap) => {}
                },
            }
        }
    }
}
