//! The release path, written once for every kind: planned against the hold table under the
//! field's turn, one request id for every retry, never sent for a hold known to have ended.

use std::sync::Arc;
use std::time::Instant;

use crate::config::millis;
use crate::core::kind::{with_channel, AcquireKind, Ctx, Kind, ReleaseArgs};
use crate::core::LockCore;
use crate::error::{Error, Result};
use crate::finish::FinishOnDrop;
use crate::holds::{Mode, ReleasePlan, Released, Turn};
use crate::inner::ClientInner;
use crate::lease::{Lease, LostReason};
use crate::{name, Unlocked};

/// What a release needs: the client, the lock's key and its kind (no owner choice, no grant).
pub(crate) struct Releaser {
    pub client: Arc<ClientInner>,
    pub key: Arc<str>,
    pub kind: &'static dyn Kind,
}

impl Releaser {
    pub(crate) fn of<K: AcquireKind>(core: &LockCore<K>) -> Releaser {
        Releaser {
            client: core.client.clone(),
            key: core.key.clone(),
            kind: core.kind,
        }
    }

    pub(crate) fn new(client: Arc<ClientInner>, key: Arc<str>, kind: &'static dyn Kind) -> Releaser {
        Releaser { client, key, kind }
    }

    fn ctx<'a>(&'a self, channel: &'a str, field: &'a str) -> Ctx<'a> {
        Ctx {
            key: &self.key,
            channel,
            field,
            publish: self.client.publish_cmd,
            now_ms: crate::core::epoch_ms(),
        }
    }

    /// Releases the hold of `field` observed through `lease` (a guard's), unless it is known to
    /// have ended.
    pub(crate) async fn release_hold(
        &self,
        field: &Arc<str>,
        lease: &Arc<Lease>,
        mode: Mode,
    ) -> Result<Unlocked> {
        let turn = self.client.holds.turn(&self.key, field, self.kind).await;
        let plan = self.client.holds.begin_release(&turn, lease, mode);
        self.send(&turn, Some(lease), plan).await
    }

    /// A handle-level unlock (Redisson's `unlock()` without a guard) of `field`.
    pub(crate) async fn release_any(&self, field: &Arc<str>) -> Result<Unlocked> {
        let turn = self.client.holds.turn(&self.key, field, self.kind).await;
        let (plan, lease) = self.client.holds.begin_release_any(&turn);
        self.send(&turn, lease.as_ref(), plan).await
    }

    /// Releases every hold of `field` (the client is shutting down).
    pub(crate) async fn release_all(&self, field: &Arc<str>) -> Result<Unlocked> {
        let turn = self.client.holds.turn(&self.key, field, self.kind).await;
        let watchdog_ms = millis("lock_watchdog_timeout", self.client.config.lock_watchdog_timeout)?;
        let plan = ReleasePlan::Send {
            last: true,
            need_ms: watchdog_ms,
        };
        self.send(&turn, None, plan).await
    }

    /// Sends the release `plan` asks for. One request id for every retry, so a retried request
    /// can never release twice.
    async fn send(&self, turn: &Turn, lease: Option<&Arc<Lease>>, plan: ReleasePlan) -> Result<Unlocked> {
        let cfg = &self.client.config;
        let field = turn.field();
        let not_held = || Error::NotHeld {
            key: self.key.to_string(),
            field: field.to_string(),
        };
        let (last, need_ms) = match plan {
            ReleasePlan::Stale => {
                tracing::debug!(key = %self.key, field = %field, "release of a hold known to have ended: nothing sent");
                return Err(not_held());
            }
            ReleasePlan::Send { last, need_ms } => (last, need_ms),
            ReleasePlan::Unknown => (false, millis("lock_watchdog_timeout", cfg.lock_watchdog_timeout)?),
        };
        let latch = name::fresh_latch(&self.key);
        let args = ReleaseArgs {
            ttl_ms: need_ms,
            latch: &latch,
            latch_ms: cfg.retry_window_ms(),
            all: last,
        };
        let inv = with_channel(self.kind, &self.key, field, |channel| {
            self.kind.release(&self.ctx(channel, field), &args)
        });
        let sent_at = Instant::now();
        let mut tries = 0;
        let reply = loop {
            match self
                .client
                .sync
                .run::<Option<i64>>(&self.client.conn, cfg.command_timeout, &self.key, &inv)
                .await
            {
                Ok((r, _)) => break r,
                Err(e) if e.is_transient() && tries < cfg.retry_attempts => {
                    tries += 1;
                    crate::metrics::unlock_retry(&crate::metrics::Labels::new(
                        self.kind.label(),
                        &self.key,
                        cfg.metrics_lock_names,
                    ));
                    tracing::debug!(key = %self.key, field = %field, error = %e, tries, "unlock failed; retrying with the same request id");
                    tokio::time::sleep(cfg.retry_pause()).await;
                }
                Err(e) => return Err(self.kind.map_error(&self.key, field, e)),
            }
        };
        // The latch only matters for our own retries, which are over: the janitor deletes it
        // (batched with other requests' latches, off this call's path).
        self.client.latches.discard(latch);
        let (outcome, result) = match reply {
            None => (Released::NotHeld, Err(not_held())),
            Some(0) if last => (Released::Gone, Ok(Unlocked::Released)),
            Some(0) => (Released::StillHeld, Ok(Unlocked::Partial)),
            Some(1) => (Released::Gone, Ok(Unlocked::Released)),
            Some(other) => return Err(Error::Protocol(format!("unlock replied {other}"))),
        };
        self.client.holds.released(turn, lease, &plan, sent_at, outcome);
        match &result {
            Ok(u) => {
                tracing::debug!(key = %self.key, field = %field, kind = self.kind.label(), outcome = ?u, "released")
            }
            Err(_) => {
                tracing::debug!(key = %self.key, field = %field, kind = self.kind.label(), "unlock refused: not held")
            }
        }
        result
    }

    /// Deletes the lock whoever holds it (the kind's force unlock).
    pub(crate) async fn force(&self) -> Result<bool> {
        let inv = with_channel(self.kind, &self.key, "", |channel| {
            self.kind.force_release(&self.ctx(channel, ""))
        });
        let timeout = self.client.config.command_timeout;
        let (r, _): (i64, _) = self
            .client
            .sync
            .run(&self.client.conn, timeout, &self.key, &inv)
            .await
            .map_err(|e| self.kind.map_error(&self.key, "", e))?;
        if r == 1 {
            // only a lock that was really deleted ends this client's holds (a read-side force on
            // a write-locked lock changes nothing)
            self.client.holds.lose_key(&self.key, LostReason::ForceUnlocked);
        }
        tracing::info!(key = %self.key, kind = self.kind.label(), deleted = r == 1, "force unlock");
        Ok(r == 1)
    }
}

/// Runs a release so that dropping the returned future does not cancel it.
pub(crate) async fn detached(
    request: impl std::future::Future<Output = Result<Unlocked>> + Send + 'static,
    key: Arc<str>,
) -> Result<Unlocked> {
    FinishOnDrop::new(request, move |res: Result<Unlocked>| {
        Box::pin(async move {
            if let Err(e) = res {
                tracing::warn!(key = %key, error = %e, "release (its caller gave up waiting) failed");
            }
        })
    })
    .await
}
