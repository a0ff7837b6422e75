//! The one wait loop of everything that waits for Redis: every lock kind's acquisition and the
//! synchronizers' (a count-down latch reaching zero, a semaphore's permits). A caller supplies
//! one attempt (a script, or a read) and what its replies mean ([`Step`]); the loop does the
//! rest, the same way for all of them:
//!
//! - it listens before it attempts: the channel's wake-up is armed before each attempt, so a
//!   message sent after the attempt's reply wakes the sleep that follows;
//! - after the first attempt that is not done it subscribes (or joins a subscription other local
//!   waiters keep, before the first attempt), and attempts again once subscribed;
//! - it sleeps until a message, the fallback poll (`subscribed_poll_interval` while listening,
//!   `poll_interval` otherwise, with 0–20 % less at random so waiters do not poll in step), a
//!   time the attempt named (a holder's TTL ending, a lease ending), a growing pause when it was
//!   refused with nothing to wait for, or the caller's back-off (no pub/sub at all);
//! - a failed attempt (a transient error, or one the caller says is worth another try) is tried
//!   again after `retry_pause`, up to `retry_attempts` times in a row; a caller that tries once
//!   gets its error at once;
//! - the deadline is one instant computed with [`crate::deadline::after`] (saturating); when it
//!   passes, the wait ends with `Ok(None)`, or with the last failure when the last attempt
//!   failed;
//! - a client shutting down ends it with [`Error::Shutdown`], also in the middle of a sleep or a
//!   subscription.
//!
//! Cancel safety: dropping the wait drops its subscription (unsubscribed once no local waiter
//! uses the channel) and its registration in the gone-key check; an attempt in flight is the
//! caller's to settle (each supervises its own request).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::backoff::BackOffPolicy;
use crate::error::{Error, Result};
use crate::inner::ClientInner;
use crate::pubsub::{Messages, Subscription};

/// What one attempt found.
pub(crate) enum Step<T> {
    /// Done: the wait ends with this value.
    Done(T),
    /// Not yet. `at`: something is known to change then (a holder's TTL ends, a lease ends): try
    /// again by then at the latest. `idle`: refused with nothing to wait for (someone ahead in a
    /// queue while the lock is free): try again after a pause that grows, up to `poll_interval`.
    Again { at: Option<Instant>, idle: bool },
    /// Failed in a way worth another attempt (counted as a failure, as a transient error is).
    Failed(Error),
}

impl<T> Step<T> {
    /// Not yet, nothing known.
    pub(crate) fn again() -> Step<T> {
        Step::Again {
            at: None,
            idle: false,
        }
    }
}

/// How a waiter waits between attempts.
pub(crate) enum Between {
    /// Listen on `channel` (its messages mean `messages`), and poll as the fallback.
    Channel {
        channel: String,
        messages: Messages,
        /// Join the channel before the first attempt when other local waiters keep it
        /// subscribed (no command sent): a refusal then needs no second attempt.
        join_first: bool,
        /// While listening, register the key in the batched check for keys gone without a
        /// message (a lock deleted by hand wakes its waiters within a poll interval).
        watch_gone: bool,
    },
    /// No pub/sub: sleep with this back-off (Redisson's spin lock).
    Backoff(BackOffPolicy),
}

/// What the loop saw, for the callers' metrics.
#[derive(Default)]
pub(crate) struct Seen {
    /// Attempts made.
    pub attempts: u32,
    /// The last attempt came right after a message woke the waiter.
    pub after_message: bool,
}

/// One wait: for `key`, with `between`, until `deadline` (`None`: as long as it takes), or one
/// attempt only (`once`: errors are not retried either).
pub(crate) struct Wait<'a> {
    pub client: &'a Arc<ClientInner>,
    pub key: &'a Arc<str>,
    pub between: Between,
    pub deadline: Option<Instant>,
    pub once: bool,
}

impl Wait<'_> {
    /// Runs `attempt` (given whether a message woke the waiter just before) until it is done:
    /// `Ok(Some(v))`, `Ok(None)` when the deadline passed first, or the error that ended it.
    pub(crate) async fn run<T, F, Fut>(mut self, seen: &mut Seen, mut attempt: F) -> Result<Option<T>>
    where
        F: FnMut(bool) -> Fut,
        Fut: Future<Output = Result<Step<T>>>,
    {
        let client = self.client;
        let cfg = &client.config;
        let mut sub: Option<Subscription> = None;
        // while listening: this key in the batched check for keys gone without a message
        let mut watch: Option<crate::gone_keys::GoneKeyWatch> = None;
        let mut woken = false;
        let mut failures: u32 = 0;
        let mut first = true;
        // the growing pause of refusals with nothing to wait for
        let mut idle_pause: Option<BackOffPolicy> = None;
        loop {
            if client.holds.is_closed() {
                return Err(Error::Shutdown);
            }
            if let Between::Channel {
                channel, join_first, ..
            } = &self.between
            {
                if std::mem::take(&mut first) && *join_first && !self.once {
                    sub = client.hub.join_subscribed(channel);
                }
            }
            // listen before the attempt: a message sent after it wakes the sleep below
            let chan = sub.as_ref().map(|s| s.channel());
            let notified = chan.as_ref().map(|c| c.notify.notified());
            let mut notified = std::pin::pin!(notified);
            if let Some(n) = notified.as_mut().as_pin_mut() {
                n.enable();
            }
            seen.attempts = seen.attempts.saturating_add(1);
            let after_message = std::mem::take(&mut woken);
            seen.after_message = after_message;
            let mut retry_at = None;
            let mut idle = false;
            let mut last_error = None;
            match attempt(after_message).await {
                Ok(Step::Done(v)) => return Ok(Some(v)),
                Ok(Step::Again { at, idle: i }) => {
                    failures = 0;
                    retry_at = at;
                    idle = i;
                }
                Ok(Step::Failed(e)) if self.once => return Err(e),
                Err(e) if !e.is_transient() || self.once => return Err(e),
                Ok(Step::Failed(e)) | Err(e) => {
                    failures = failures.saturating_add(1);
                    if failures > cfg.retry_attempts {
                        tracing::warn!(key = %self.key, error = %e, attempts = failures, "attempt failed; no retries left");
                        return Err(e);
                    }
                    tracing::debug!(key = %self.key, error = %e, attempt = failures, "attempt failed; retrying");
                    last_error = Some(e);
                }
            }
            let remaining = self.deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if remaining == Some(Duration::ZERO) {
                return match last_error {
                    Some(e) => Err(e),
                    None => Ok(None),
                };
            }
            // from here the loop waits (a pause, a subscription, a sleep): a shutdown ends it;
            // armed before the check, so a close in between still wakes it
            let closing = client.holds.closing();
            let mut closing = std::pin::pin!(closing);
            if client.holds.is_closed() {
                return Err(Error::Shutdown);
            }
            if last_error.is_some() {
                let pause = remaining.map_or(cfg.retry_pause(), |r| cfg.retry_pause().min(r));
                tokio::select! {
                    _ = closing.as_mut() => return Err(Error::Shutdown),
                    _ = tokio::time::sleep(pause) => {}
                }
                continue;
            }
            let mut nap = match &mut self.between {
                Between::Backoff(policy) => policy.next_sleep(),
                Between::Channel {
                    channel,
                    messages,
                    watch_gone,
                    ..
                } => {
                    let stale = sub.as_ref().is_some_and(|s| s.is_stale());
                    if (sub.is_none() && client.hub.has_connection()) || stale {
                        // (a stale one, which the server dropped, is joined again before it is
                        // left, so the channel is re-subscribed, not unsubscribed)
                        let budget =
                            remaining.map_or(cfg.subscription_timeout, |r| r.min(cfg.subscription_timeout));
                        let fresh = tokio::select! {
                            _ = closing.as_mut() => return Err(Error::Shutdown),
                            s = client.hub.subscribe(channel, *messages, budget) => s,
                        };
                        match fresh {
                            Ok(s) => {
                                sub = Some(s);
                                continue; // subscribed: attempt again before sleeping
                            }
                            Err(e) => {
                                tracing::debug!(key = %self.key, channel = %channel, error = %e, "could not subscribe; polling instead");
                                sub = None;
                            }
                        }
                    }
                    // listening: a message wakes us, so sleep until the known change, at most
                    // `subscribed_poll_interval`; not listening: poll every `poll_interval`
                    let listening =
                        client.hub.has_connection() && sub.as_ref().is_some_and(|s| !s.is_stale());
                    match (&sub, listening && *watch_gone) {
                        (Some(s), true) => {
                            let ch = s.channel();
                            if !watch.as_ref().is_some_and(|w| w.wakes(&ch)) {
                                watch = Some(client.gone_keys.watch(self.key, ch));
                            }
                        }
                        _ => watch = None,
                    }
                    let base = if listening {
                        cfg.subscribed_poll_interval
                    } else {
                        cfg.poll_interval
                    };
                    // 80-100 % of the interval: thousands of waiters do not re-poll in lockstep
                    base.mul_f64(0.8 + 0.2 * fastrand::f64())
                }
            };
            if let Some(at) = retry_at {
                nap = nap.min(at.saturating_duration_since(Instant::now()));
                idle_pause = None;
            }
            if idle {
                let p = idle_pause.get_or_insert_with(|| {
                    crate::BackOff::exponential().with_max(cfg.poll_interval).policy()
                });
                nap = nap.min(p.next_sleep());
            }
            if let Some(d) = self.deadline {
                nap = nap.min(d.saturating_duration_since(Instant::now()));
            }
            match notified.as_mut().as_pin_mut() {
                Some(n) => tokio::select! {
                    _ = closing.as_mut() => return Err(Error::Shutdown),
                    _ = n => woken = true,
                    _ = tokio::time::sleep(nap) => {}
                },
                None => tokio::select! {
                    _ = closing.as_mut() => return Err(Error::Shutdown),
                    _ = tokio::time::sleep(nap) => {}
                },
            }
        }
    }
}
