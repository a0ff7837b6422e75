//! The give-up of a waiter that leaves a trace in Redis while it waits (the fair queue): what
//! it sends when its acquisition ends without the lock, when, and who finishes it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::Value;

use super::{Lock, Plan};
use crate::background::Ticket;
use crate::inner::ClientInner;
use crate::kind::{AcquireArgs, AcquireKind, Kind};
use crate::owner::OwnerId;
use crate::script;

/// The give-up step of a kind whose waiters leave traces (the fair queue), armed while an
/// acquisition waits: sent when it ends without the lock, under the field's turn (after the
/// settling of its last attempt, which may have queued it), within the caller's budget or else
/// as background work. Armed, it counts as open background work, so a shutdown waits for it.
pub(super) struct GiveUp {
    client: Arc<ClientInner>,
    key: Arc<str>,
    field: Arc<str>,
    kind: &'static dyn Kind,
    inv: Option<redis::ScriptInvocation<'static>>,
    /// Dropped after the give-up is sent or queued (fields drop after `Drop::drop`).
    _open: Ticket,
}

impl GiveUp {
    pub(super) fn arm<K: AcquireKind>(core: &Lock<K>, owner: OwnerId, plan: &Plan) -> Option<GiveUp> {
        let field = core.field_of(owner);
        let channel = core.kind.channel(&core.key, &field);
        let args = AcquireArgs {
            ttl_ms: plan.own_ms,
            latch: "",
            latch_ms: 0,
            wait_ms: plan.wait_ms,
            waits: plan.waits,
        };
        let inv = core.kind.queue()?.give_up(&core.ctx(&channel, &field), &args)?;
        Some(GiveUp {
            _open: core.client.background.ticket(&core.key),
            client: core.client.clone(),
            key: core.key.clone(),
            field,
            kind: core.kind,
            inv: Some(inv),
        })
    }

    pub(super) fn disarm(&mut self) {
        self.inv = None;
    }

    /// Sends the give-up, if it can be done before `limit`; otherwise it is left to the
    /// background (dropping `self` queues it: the same request, which is idempotent).
    pub(super) async fn now(&mut self, limit: Instant) {
        let Some(inv) = self.inv.take() else { return };
        let (client, key, field, kind) = (&self.client, &self.key, &self.field, self.kind);
        let send = async {
            let _turn = client.holds.turn(key, field, kind).await;
            script::run::<Value>(&client.conn, client.config.command_timeout, key, &inv).await
        };
        let outcome = tokio::time::timeout_at(limit.into(), send).await;
        match outcome {
            Ok(Ok(_)) => {
                tracing::debug!(key = %self.key, field = %self.field, "gave up waiting: left the queue")
            }
            Ok(Err(e)) => {
                tracing::debug!(key = %self.key, field = %self.field, error = %e, "could not leave the queue yet; retrying in the background");
                self.inv = Some(inv);
            }
            Err(_) => {
                tracing::debug!(key = %self.key, field = %self.field, "leaving the queue takes longer than the caller's wait; finishing in the background");
                self.inv = Some(inv);
            }
        }
    }
}

impl Drop for GiveUp {
    fn drop(&mut self) {
        let Some(inv) = self.inv.take() else { return };
        let (client, key, field, kind) = (
            self.client.clone(),
            self.key.clone(),
            std::mem::take(&mut self.field),
            self.kind,
        );
        let background = client.background.clone();
        let job: crate::background::Job = Box::new(move || {
            Box::pin(async move {
                let cfg = &client.config;
                let window = Duration::from_millis(cfg.retry_window_ms());
                let started = Instant::now();
                let _turn = client.holds.turn(&key, &field, kind).await;
                loop {
                    match script::run::<Value>(&client.conn, cfg.command_timeout, &key, &inv).await {
                        Ok(_) => {
                            tracing::debug!(key = %key, field = %field, "a waiter that gave up left the queue");
                            return Ok(());
                        }
                        Err(e) if started.elapsed() < window => {
                            tracing::debug!(key = %key, field = %field, error = %e, "leaving the queue failed; retrying");
                            tokio::time::sleep(cfg.retry_pause()).await;
                        }
                        Err(e) => {
                            tracing::warn!(key = %key, field = %field, error = %e, "could not leave the queue; the entry stays until its deadline");
                            return Err(e);
                        }
                    }
                }
            })
        });
        if !background.push(&self.key, job) {
            tracing::warn!(key = %self.key, "a waiter was dropped after its client stopped: its queue entry stays until its deadline");
        }
    }
}
