//! The give-up of a waiter that leaves a trace in Redis while it waits (the fair queue): what
//! it sends when its acquisition ends without the lock, when, and who finishes it.

use std::sync::Arc;
use std::time::Instant;

use super::{Lock, Plan};
use crate::background::Ticket;
use crate::inner::ClientInner;
use crate::kind::{AcquireArgs, AcquireKind, Kind};
use crate::once::Once;
use crate::owner::OwnerId;

/// The give-up step of a kind whose waiters leave traces (the fair queue), armed while an
/// acquisition waits: sent when it ends without the lock, under the field's turn (after the
/// settling of its last attempt, which may have queued it), within the caller's budget or else
/// as background work. Armed, it counts as open background work, so a shutdown waits for it.
pub(super) struct GiveUp {
    client: Arc<ClientInner>,
    key: Arc<str>,
    field: Arc<str>,
    kind: &'static dyn Kind,
    /// The give-up request (leaving a queue one has left changes nothing): `None` once sent,
    /// or disarmed.
    write: Option<Once>,
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
            write: Some(Once::idempotent(&core.client, &core.key, "leave the queue", inv)),
            client: core.client.clone(),
            key: core.key.clone(),
            field,
            kind: core.kind,
        })
    }

    pub(super) fn disarm(&mut self) {
        if let Some(w) = self.write.take() {
            w.cancel();
        }
    }

    /// Sends the give-up, if it can be done before `limit`; otherwise it is left to the
    /// background (dropping `self` queues it).
    pub(super) async fn now(&mut self, limit: Instant) {
        let Some(write) = self.write.as_mut() else { return };
        let (client, key, field, kind) = (&self.client, &self.key, &self.field, self.kind);
        let send = async {
            let _turn = client.holds.turn(key, field, kind).await;
            write.attempt().await
        };
        match tokio::time::timeout_at(limit.into(), send).await {
            Ok(Ok(_)) => {
                self.write = None;
                tracing::debug!(key = %self.key, field = %self.field, "gave up waiting: left the queue")
            }
            Ok(Err(e)) => {
                tracing::debug!(key = %self.key, field = %self.field, error = %e, "could not leave the queue yet; retrying in the background")
            }
            Err(_) => {
                tracing::debug!(key = %self.key, field = %self.field, "leaving the queue takes longer than the caller's wait; finishing in the background")
            }
        }
    }
}

impl Drop for GiveUp {
    fn drop(&mut self) {
        let Some(mut write) = self.write.take().filter(Once::is_armed) else {
            return;
        };
        let (client, key, field, kind) = (
            self.client.clone(),
            self.key.clone(),
            std::mem::take(&mut self.field),
            self.kind,
        );
        let job: crate::background::Job = Box::new(move || {
            Box::pin(async move {
                let _turn = client.holds.turn(&key, &field, kind).await;
                write.finish().await.map(drop)
            })
        });
        if !self.client.background.push(&self.key, job) {
            tracing::warn!(key = %self.key, "a waiter was dropped after its client stopped: its queue entry stays until its deadline");
        }
    }
}
