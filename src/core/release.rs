//! The release path, written once for every kind: planned against the hold table under the
//! field's turn, one request id for every retry, never sent for a hold known to have ended.

use std::sync::Arc;
use std::time::Instant;

use crate::background::Job;
use crate::core::Lock;
use crate::error::{Error, Result};
use crate::hold_record::HoldRecord;
use crate::holds::{Expiry, LateGrant, ReleasePlan, Released, Turn};
use crate::inner::ClientInner;
use crate::kind::{with_channel, AcquireKind, Ctx, Kind, ReleaseArgs};
use crate::once::Once;
use crate::Unlocked;
use redis::{FromRedisValue, Value};

/// What a release needs: the client, the lock's key and its kind (no owner choice, no grant).
pub(crate) struct Releaser {
    pub client: Arc<ClientInner>,
    pub key: Arc<str>,
    pub kind: &'static dyn Kind,
}

impl Releaser {
    pub(crate) fn of<K: AcquireKind>(core: &Lock<K>) -> Releaser {
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
        }
    }

    /// Releases the hold of `field` observed through `lease` (a guard's), unless it is known to
    /// have ended. Cancel safe: see [`AwaitingTurn`] and [`ReleaseInFlight`].
    pub(crate) async fn release_hold(
        &self,
        field: &Arc<str>,
        record: &Arc<HoldRecord>,
        expiry: Expiry,
    ) -> Result<Unlocked> {
        let waiting = AwaitingTurn {
            releaser: self,
            field,
            what: What::Hold(record, expiry),
        };
        let turn = self.client.holds.turn(&self.key, field, self.kind).await;
        waiting.disarm();
        let plan = self.client.holds.begin_release(&turn, record, expiry);
        self.send(turn, Some(record), plan).await
    }

    /// A handle-level unlock (Redisson's `unlock()` without a guard) of `field`. Cancel safe as
    /// [`Releaser::release_hold`].
    pub(crate) async fn release_any(&self, field: &Arc<str>) -> Result<Unlocked> {
        let waiting = AwaitingTurn {
            releaser: self,
            field,
            what: What::Any,
        };
        let turn = self.client.holds.turn(&self.key, field, self.kind).await;
        waiting.disarm();
        let (plan, record) = self.client.holds.begin_release_any(&turn);
        self.send(turn, record.as_ref(), plan).await
    }

    /// Releases a grant nobody will use (see [`LateGrant`]), under the attempt's turn: the one
    /// hold it added when the field's live epoch keeps others, else everything the field has.
    pub(crate) async fn release_late(&self, late: LateGrant) -> Result<()> {
        let LateGrant {
            turn,
            record,
            plan,
            why,
        } = late;
        let field = turn.field().clone();
        tracing::info!(key = %self.key, field = %field, ?why, "a grant nobody will use: releasing it at once");
        match self.send(turn, record.as_ref(), plan).await {
            Ok(_) => Ok(()),
            Err(Error::NotHeld { .. }) => {
                tracing::debug!(key = %self.key, field = %field, "the late grant had already ended in Redis");
                Ok(())
            }
            Err(e) => {
                tracing::warn!(key = %self.key, field = %field, error = %e, "could not release a grant nobody will use; it expires with its TTL");
                Err(e)
            }
        }
    }

    /// Releases every hold of `field` (the client is shutting down).
    pub(crate) async fn release_all(&self, field: &Arc<str>) -> Result<Unlocked> {
        let turn = self.client.holds.turn(&self.key, field, self.kind).await;
        let watchdog_ms = self.client.config.watchdog_ms();
        let plan = ReleasePlan::Send {
            last: true,
            need_ms: watchdog_ms,
        };
        self.send(turn, None, plan).await
    }

    /// Sends the release `plan` asks for. One request id for every retry, so a retried request
    /// can never release twice; a caller that stops waiting hands the request, id and all, to
    /// the client's background work ([`ReleaseInFlight`]).
    async fn send(
        &self,
        turn: Turn,
        record: Option<&Arc<HoldRecord>>,
        plan: ReleasePlan,
    ) -> Result<Unlocked> {
        let cfg = &self.client.config;
        let (last, need_ms) = match plan {
            ReleasePlan::Stale => {
                tracing::debug!(key = %self.key, field = %turn.field(), "release of a hold known to have ended: nothing sent");
                return Err(self.not_held(turn.field()));
            }
            ReleasePlan::Send { last, need_ms } => (last, need_ms),
            ReleasePlan::Unknown => (false, cfg.watchdog_ms()),
        };
        let field = turn.field();
        let write = Once::new(&self.client, &self.key, "unlock", false, |latch, latch_ms| {
            let args = ReleaseArgs {
                ttl_ms: need_ms,
                latch,
                latch_ms,
                all: last,
            };
            with_channel(self.kind, &self.key, field, |channel| {
                self.kind.release(&self.ctx(channel, field), &args)
            })
        })
        .counting_retries(self.kind.label());
        let mut flight = ReleaseInFlight {
            releaser: self,
            state: Some(ReleaseRequest {
                turn,
                record: record.cloned(),
                plan,
                last,
                write,
                sent_at: Instant::now(),
            }),
        };
        let reply = match flight.state.as_mut() {
            Some(f) => f.write.attempt().await,
            None => return Err(Error::Shutdown), // just built
        };
        let f = flight.land();
        match reply {
            Ok(r) => self.conclude(f, r),
            Err(e) => Err(self.kind.map_error(&self.key, f.turn.field(), e)),
        }
    }

    /// Records a release's reply in the hold table.
    fn conclude(&self, f: ReleaseRequest, reply: Value) -> Result<Unlocked> {
        let field = f.turn.field();
        let reply = Option::<i64>::from_redis_value(reply)
            .map_err(|e| Error::Protocol(format!("unlock replied {e}")))?;
        let (outcome, result) = match reply {
            None => (Released::NotHeld, Err(self.not_held(field))),
            Some(0) if f.last => (Released::Gone, Ok(Unlocked::Released)),
            Some(0) => (Released::StillHeld, Ok(Unlocked::Partial)),
            Some(1) => (Released::Gone, Ok(Unlocked::Released)),
            Some(other) => return Err(Error::Protocol(format!("unlock replied {other}"))),
        };
        self.client
            .holds
            .released(&f.turn, f.record.as_ref(), &f.plan, f.sent_at, outcome);
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

    fn not_held(&self, field: &str) -> Error {
        Error::NotHeld {
            key: self.key.to_string(),
            field: field.to_string(),
        }
    }

    fn cloned(&self) -> Releaser {
        Releaser::new(self.client.clone(), self.key.clone(), self.kind)
    }

    /// Deletes the lock whoever holds it (the kind's force unlock).
    pub(crate) async fn force(&self) -> Result<bool> {
        let inv = with_channel(self.kind, &self.key, "", |channel| {
            self.kind.force_release(&self.ctx(channel, ""))
        });
        let timeout = self.client.config.command_timeout;
        let forcing = self.client.holds.forcing(&self.key);
        let (r, _): (i64, _) = self
            .client
            .replica_sync
            .run(&self.client.conn, timeout, &self.key, &inv)
            .await
            .map_err(|e| self.kind.map_error(&self.key, "", e))?;
        if r == 1 {
            // only a lock that was really deleted ends this client's holds (a read-side force on
            // a write-locked lock changes nothing)
            forcing.deleted(|_| true);
        }
        tracing::info!(key = %self.key, kind = self.kind.label(), deleted = r == 1, "force unlock");
        Ok(r == 1)
    }
}

/// What a release waiting for its field's turn would send.
enum What<'a> {
    /// A guard's hold (its lease and mode).
    Hold(&'a Arc<HoldRecord>, Expiry),
    /// A handle-level unlock.
    Any,
}

/// A release waiting for its field's turn (another request of the same owner is in flight).
/// Dropped while waiting (the caller's future was cancelled), it queues the same release on the
/// client's background work: nothing was sent, so nothing can be sent twice, and the hold is not
/// left to the watchdog, which would renew it forever.
struct AwaitingTurn<'a> {
    releaser: &'a Releaser,
    field: &'a Arc<str>,
    what: What<'a>,
}

impl AwaitingTurn<'_> {
    fn disarm(self) {
        std::mem::forget(self); // nothing owned: forgetting leaks nothing
    }
}

impl Drop for AwaitingTurn<'_> {
    fn drop(&mut self) {
        let releaser = self.releaser.cloned();
        let field = self.field.clone();
        let job: Job = match self.what {
            What::Hold(record, expiry) => {
                let record = record.clone();
                Box::new(move || {
                    Box::pin(async move {
                        let r = releaser.release_hold(&field, &record, expiry).await;
                        releaser.report_abandoned(&field, r)
                    })
                })
            }
            What::Any => Box::new(move || {
                Box::pin(async move {
                    let r = releaser.release_any(&field).await;
                    releaser.report_abandoned(&field, r)
                })
            }),
        };
        tracing::debug!(key = %self.releaser.key, field = %self.field, "unlock abandoned before it was sent: queued");
        if !self.releaser.client.background.push(&self.releaser.key, job) {
            tracing::warn!(key = %self.releaser.key, field = %self.field, "unlock abandoned after the client stopped: the lock expires with its lease");
        }
    }
}

/// A release request that may be in Redis, with everything needed to finish it.
pub(crate) struct ReleaseRequest {
    turn: Turn,
    record: Option<Arc<HoldRecord>>,
    plan: ReleasePlan,
    last: bool,
    /// The release script, sent again with the same request latch after a lost reply.
    write: Once,
    sent_at: Instant,
}

/// Dropped before [`ReleaseInFlight::land`] (the caller's future was cancelled while the release was in
/// Redis or between retries), it hands the rest of the release to the client's background work:
/// the same request, same id (a copy that already ran answers from its latch, so it never
/// releases twice), and the reply recorded in the hold table under the field's turn, which the
/// flight keeps until then. Nothing is boxed unless that happens.
struct ReleaseInFlight<'a> {
    releaser: &'a Releaser,
    state: Option<ReleaseRequest>,
}

impl ReleaseInFlight<'_> {
    fn land(mut self) -> ReleaseRequest {
        match self.state.take() {
            Some(f) => f,
            // `state` is only taken here (which consumes the flight) and in `drop`
            None => unreachable!("a release in flight without its request"),
        }
    }
}

impl Drop for ReleaseInFlight<'_> {
    fn drop(&mut self) {
        let Some(mut f) = self.state.take() else { return };
        let releaser = self.releaser.cloned();
        let field = f.turn.field().clone();
        tracing::debug!(key = %releaser.key, field = %field, "unlock abandoned while in flight: finishing it in the background");
        let background = releaser.client.background.clone();
        let key = releaser.key.clone();
        let job: Job = Box::new(move || {
            Box::pin(async move {
                let r = match f.write.finish().await {
                    Ok(reply) => releaser.conclude(f, reply),
                    Err(e) => Err(releaser.kind.map_error(&releaser.key, &field, e)),
                };
                releaser.report_abandoned(&field, r)
            })
        });
        if !background.push(&key, job) {
            tracing::warn!(key = %self.releaser.key, "unlock abandoned after the client stopped: the lock expires with its lease");
        }
    }
}

impl Releaser {
    fn report_abandoned(&self, field: &str, r: Result<Unlocked>) -> Result<()> {
        match r {
            Ok(_) => tracing::debug!(key = %self.key, field = %field, "abandoned unlock finished"),
            Err(Error::NotHeld { .. }) => {
                tracing::debug!(key = %self.key, field = %field, "abandoned unlock: the hold had already ended")
            }
            Err(e) => {
                tracing::warn!(key = %self.key, field = %field, error = %e, "release (its caller gave up waiting) failed; the lock expires with its lease");
                return Err(e);
            }
        }
        Ok(())
    }
}
