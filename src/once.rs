//! A write that applies at most once although it may be sent several times, written once for
//! every request the client sends again: a lock's release, a synchronizer's write, a fair
//! waiter's leaving of the queue.
//!
//! A write either names a request latch (`redisson_unlock_latch:{key}:<request id>`), in which
//! its script keeps its first reply so that a copy gets that reply back and changes nothing, or
//! changes nothing the second time by itself (leaving a queue one has left). So a request whose
//! reply was lost (a timeout, a dropped connection) is simply sent again, under two rules:
//!
//! - **its caller's**: after an error that leaves its outcome unknown or says it did not run for a
//!   passing reason, up to [`Config::with_retry_attempts`](crate::Config::with_retry_attempts)
//!   times in a row, each after a retry pause (the rule of the client's wait loop too);
//! - **the background's**, once nobody waits for the reply: until it answers, while the latch is
//!   sure to replay a first application (the client's retry window from the first sending); a
//!   write known not to have run yet (Redis refusing it for lack of memory, say) goes on until
//!   the client shuts down.
//!
//! Every copy is sent within the retry window of the first, and the latch keeps the first reply
//! for the settle window (one command timeout longer), so that, like every record the client
//! leaves, it is gone within the settle window.

use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::{FromRedisValue, ScriptInvocation, Value};

use crate::error::{Error, Result};
use crate::inner::ClientInner;
use crate::metrics;

/// One write, armed until its outcome is known.
pub(crate) struct Once {
    client: Arc<ClientInner>,
    key: Arc<str>,
    /// Its request latch (empty: the write changes nothing when it runs again).
    latch: String,
    /// What the write is, for logs (`"semaphore: release"`).
    what: &'static str,
    inv: Option<ScriptInvocation<'static>>,
    /// When it was first sent.
    first_sent: Option<Instant>,
    /// A copy may have run (an error left its outcome unknown). Until then every copy is known
    /// not to have run.
    maybe_applied: bool,
    /// Whether a write whose outcome is still unknown when it is dropped (its caller gave up, or
    /// ran out of retries) is finished in the background: a semaphore's give-back is, so that a
    /// permit is never stuck; other writes are left to their caller, who was told, or to their
    /// owner, who finishes them with [`Once::finish`].
    finish_dropped: bool,
    /// Counted as unlock retries of a lock of this kind (a lock's release).
    retries: Option<&'static str>,
}

impl Once {
    /// A write of `key` built by `build` from a fresh request latch and how long the latch must
    /// keep the first reply, in ms (the script takes both where its header says).
    pub(crate) fn new(
        client: &Arc<ClientInner>,
        key: &Arc<str>,
        what: &'static str,
        finish_dropped: bool,
        build: impl FnOnce(&str, u64) -> ScriptInvocation<'static>,
    ) -> Once {
        let latch = crate::name::fresh_latch(key);
        let inv = build(&latch, Self::keep_ms(&client.config));
        Self::with_latch(client, key, what, finish_dropped, latch, inv)
    }

    /// A write that changes nothing when it runs again, so it needs no latch.
    pub(crate) fn idempotent(
        client: &Arc<ClientInner>,
        key: &Arc<str>,
        what: &'static str,
        inv: ScriptInvocation<'static>,
    ) -> Once {
        Self::with_latch(client, key, what, false, String::new(), inv)
    }

    fn with_latch(
        client: &Arc<ClientInner>,
        key: &Arc<str>,
        what: &'static str,
        finish_dropped: bool,
        latch: String,
        inv: ScriptInvocation<'static>,
    ) -> Once {
        Once {
            client: client.clone(),
            key: key.clone(),
            latch,
            what,
            inv: Some(inv),
            first_sent: None,
            maybe_applied: false,
            finish_dropped,
            retries: None,
        }
    }

    /// How long a request latch keeps the first reply, in ms: the settle window, the retry window
    /// (every copy is sent within it) plus one command timeout.
    fn keep_ms(cfg: &crate::Config) -> u64 {
        cfg.settle_window_ms()
    }

    /// Counts each copy sent again as an unlock retry of a lock of `kind` (its label).
    pub(crate) fn counting_retries(mut self, kind: &'static str) -> Once {
        self.retries = Some(kind);
        self
    }

    /// Whether the write may still have to be sent (its outcome is not known, and it was not
    /// refused for good).
    pub(crate) fn is_armed(&self) -> bool {
        self.inv.is_some()
    }

    /// Drops the write unsent.
    pub(crate) fn cancel(mut self) {
        self.inv = None;
    }

    /// Sends the write under its caller's rule (see the module): the reply of its one
    /// application.
    ///
    /// Cancel safety: dropping the future leaves a write that may have run; one that finishes
    /// when dropped (see [`Once::new`]) is sent until it answers, still at most once.
    pub(crate) async fn send<T: FromRedisValue>(mut self) -> Result<T> {
        let v = self.attempt().await?;
        T::from_redis_value(v).map_err(|e| Error::from_redis(&self.key, e.into()))
    }

    /// [`Once::send`] for a write its owner keeps (to finish it itself if the caller stops
    /// waiting): the raw reply.
    pub(crate) async fn attempt(&mut self) -> Result<Value> {
        let mut failures = 0;
        loop {
            match self.send_copy().await {
                Ok(v) => return Ok(v),
                Err(e)
                    if retryable(&e) && failures < self.client.config.retry_attempts && self.may_resend() =>
                {
                    failures += 1;
                    self.pause(&e).await;
                }
                Err(e) => {
                    if !retryable(&e) {
                        self.inv = None; // refused for good: sending it again cannot help
                    }
                    return Err(e);
                }
            }
        }
    }

    /// Sends the write under the background's rule (see the module): the reply of its one
    /// application, or the last error once it cannot be sent again.
    pub(crate) async fn finish(&mut self) -> Result<Value> {
        loop {
            match self.send_copy().await {
                Ok(v) => {
                    tracing::debug!(key = %self.key, what = self.what, "finished a write in the background");
                    return Ok(v);
                }
                Err(e)
                    if retryable(&e)
                        && (self.may_resend() || (!self.maybe_applied && !self.client.holds.is_closed())) =>
                {
                    self.pause(&e).await;
                }
                Err(e) => {
                    self.inv = None; // over: nobody sends it again
                    tracing::warn!(key = %self.key, what = self.what, error = %e, "could not finish a write in the background");
                    return Err(e);
                }
            }
        }
    }

    /// Sends one copy: on a reply, the write is done and its latch is garbage (the janitor
    /// deletes it).
    async fn send_copy(&mut self) -> Result<Value> {
        let Some(inv) = self.inv.as_ref() else {
            return Err(Error::Protocol("a write was sent after it was settled".into()));
        };
        self.first_sent.get_or_insert_with(Instant::now);
        let cfg = &self.client.config;
        let sync = &self.client.replica_sync;
        match sync
            .run::<Value>(&self.client.conn, cfg.command_timeout, &self.key, inv)
            .await
        {
            Ok((v, _)) => {
                self.inv = None;
                if self.maybe_applied {
                    tracing::debug!(key = %self.key, what = self.what, "a write answered after being sent again");
                }
                if !self.latch.is_empty() {
                    self.client.latches.discard(std::mem::take(&mut self.latch));
                }
                Ok(v)
            }
            Err(e) => {
                self.maybe_applied |= e.is_ambiguous();
                Err(e)
            }
        }
    }

    /// Whether a copy sent now is still within the retry window of the first (when a first
    /// application's latch is sure to replay it).
    fn may_resend(&self) -> bool {
        let window = Duration::from_millis(self.client.config.retry_window_ms());
        self.first_sent.is_none_or(|t| t.elapsed() < window)
    }

    async fn pause(&self, e: &Error) {
        if let Some(kind) = self.retries {
            let names = self.client.config.metrics_lock_names;
            metrics::unlock_retry(&metrics::Labels::new(kind, &self.key, names));
        }
        tracing::debug!(key = %self.key, what = self.what, error = %e, "a write failed; sending it again (it applies once)");
        tokio::time::sleep(self.client.config.retry_pause()).await;
    }
}

/// Whether sending the same write again may help (a repeat never applies twice): its outcome
/// is unknown, or it did not run for a passing reason (no connection, Redis loading, failing
/// over, out of memory).
fn retryable(e: &Error) -> bool {
    e.is_ambiguous() || e.is_transient() || e.is_oom()
}

impl Drop for Once {
    fn drop(&mut self) {
        if self.inv.is_none() {
            return;
        }
        if !self.finish_dropped {
            tracing::debug!(key = %self.key, what = self.what, "a write whose outcome is unknown was left to its caller");
            return;
        }
        let mut rest = Once {
            client: self.client.clone(),
            key: self.key.clone(),
            latch: std::mem::take(&mut self.latch),
            what: self.what,
            inv: self.inv.take(),
            first_sent: self.first_sent,
            maybe_applied: self.maybe_applied,
            // finished here: dropped again, it is over
            finish_dropped: false,
            retries: self.retries.take(),
        };
        let (background, key) = (self.client.background.clone(), self.key.clone());
        let job: crate::background::Job =
            Box::new(move || Box::pin(async move { rest.finish().await.map(drop) }));
        if !background.push(&key, job) {
            tracing::warn!(key = %self.key, what = self.what, "a write was abandoned after its client stopped");
        }
    }
}
