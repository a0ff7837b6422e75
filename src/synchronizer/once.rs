//! A synchronizer's write that applies at most once although it may be sent several times: its
//! script keeps its first reply in the request's latch (`redisson_unlock_latch:{N}:<request id>`,
//! `lua/common/once.lua`) and a repeat gets that reply back without changing anything. So a
//! request whose reply was lost (a timeout, a dropped connection) is simply sent again.

use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::{FromRedisValue, ScriptInvocation, Value};

use crate::error::{Error, Result};
use crate::inner::ClientInner;
use crate::script;

/// One write, armed until its outcome is known.
pub(crate) struct Once {
    client: Arc<ClientInner>,
    key: Arc<str>,
    latch: String,
    /// What the write is, for logs (`"semaphore: release"`).
    what: &'static str,
    inv: Option<ScriptInvocation<'static>>,
    /// When it was first sent: every copy is sent within [`Once::window`] of it, while the
    /// latch of a first application is sure to exist.
    first_sent: Option<Instant>,
    /// A copy may have run (an error left its outcome unknown): copies are then sent only
    /// within [`Once::window`] of the first, while its latch is sure to replay it. Until then
    /// every copy is known not to have run, and a write that finishes keeps trying (e.g. while
    /// Redis refuses writes for lack of memory) until the client shuts down.
    maybe_applied: bool,
    /// Whether a write whose outcome is still unknown when its caller stops waiting (dropped, or
    /// out of retries) is finished in the background: releases are, so a permit given back by a
    /// caller is never stuck; other writes are left to their caller, who was told.
    finish: bool,
}

impl Once {
    /// A write of `key` built by `build` from its request latch and how long the latch must
    /// keep the first reply, in ms (the script takes both where its header says).
    pub(crate) fn new(
        client: &Arc<ClientInner>,
        key: &Arc<str>,
        what: &'static str,
        finish: bool,
        build: impl FnOnce(&str, u64) -> ScriptInvocation<'static>,
    ) -> Once {
        let cfg = &client.config;
        let latch = crate::name::fresh_latch(key);
        let keep = Self::window(cfg).saturating_add(cfg.command_timeout);
        let inv = build(&latch, u64::try_from(keep.as_millis()).unwrap_or(u64::MAX));
        Once {
            client: client.clone(),
            key: key.clone(),
            latch,
            what,
            inv: Some(inv),
            first_sent: None,
            maybe_applied: false,
            finish,
        }
    }

    /// How long after its first sending a write may be sent again: the client's settling time
    /// (the caller waits for the shorter retry window; the background for the rest).
    fn window(cfg: &crate::Config) -> Duration {
        cfg.settling()
    }

    /// Drops the write unsent.
    pub(crate) fn cancel(mut self) {
        self.inv = None;
    }

    /// Sends the write until it answers, again after an error that leaves its outcome unknown or
    /// that says it did not run (for up to the client's retry window): the reply of its one
    /// application.
    ///
    /// Cancel safety: dropping the future leaves a write that may have run; one that finishes
    /// in the background (see [`Once::new`]) is sent until it answers, still at most once.
    pub(crate) async fn send<T: FromRedisValue>(mut self) -> Result<T> {
        let cfg = &self.client.config;
        let window = Duration::from_millis(cfg.retry_window_ms());
        let started = *self.first_sent.get_or_insert_with(Instant::now);
        loop {
            let Some(inv) = self.inv.as_ref() else {
                return Err(Error::Protocol("a write was sent after it was settled".into()));
            };
            let outcome = script::run::<Value>(&self.client.conn, cfg.command_timeout, &self.key, inv).await;
            match outcome {
                Ok(v) => {
                    self.inv = None;
                    if self.maybe_applied {
                        tracing::debug!(key = %self.key, what = self.what, "a write answered after being sent again");
                    }
                    self.client.latches.discard(std::mem::take(&mut self.latch));
                    return T::from_redis_value(v).map_err(|e| Error::from_redis(&self.key, e.into()));
                }
                Err(e) if retryable(&e) && started.elapsed() < window => {
                    self.maybe_applied |= e.is_ambiguous();
                    tracing::debug!(key = %self.key, what = self.what, error = %e, "a write failed; sending it again (it applies once)");
                    tokio::time::sleep(cfg.retry_pause()).await;
                }
                Err(e) => {
                    self.maybe_applied |= e.is_ambiguous();
                    if !retryable(&e) {
                        self.inv = None; // refused for good: sending it again cannot help
                    }
                    return Err(e);
                }
            }
        }
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
        let Some(inv) = self.inv.take() else { return };
        if !self.finish {
            tracing::debug!(key = %self.key, what = self.what, "a write whose outcome is unknown was left to its caller");
            return;
        }
        let (client, key, what, latch) = (
            self.client.clone(),
            self.key.clone(),
            self.what,
            std::mem::take(&mut self.latch),
        );
        let started = self.first_sent.unwrap_or_else(Instant::now);
        let mut maybe_applied = self.maybe_applied;
        let background = client.background.clone();
        let job: crate::background::Job = Box::new(move || {
            Box::pin(async move {
                let cfg = &client.config;
                let window = Once::window(cfg);
                loop {
                    match script::run::<Value>(&client.conn, cfg.command_timeout, &key, &inv).await {
                        Ok(_) => {
                            tracing::debug!(key = %key, what, "finished a write in the background");
                            client.latches.discard(latch);
                            return Ok(());
                        }
                        Err(e) if retryable(&e) => {
                            maybe_applied |= e.is_ambiguous();
                            let late = started.elapsed() >= window;
                            if late && (maybe_applied || client.holds.is_closed()) {
                                tracing::warn!(key = %key, what, error = %e, "could not finish a write in the background");
                                return Err(e);
                            }
                            tracing::debug!(key = %key, what, error = %e, "a write in the background failed; sending it again");
                            tokio::time::sleep(cfg.retry_pause()).await;
                        }
                        Err(e) => {
                            tracing::warn!(key = %key, what, error = %e, "could not finish a write in the background");
                            return Err(e);
                        }
                    }
                }
            })
        });
        if !background.push(&self.key, job) {
            tracing::warn!(key = %self.key, what = self.what, "a write was abandoned after its client stopped");
        }
    }
}
